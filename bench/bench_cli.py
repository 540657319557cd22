"""Time ``python -m tokviz train`` on large corpora against HF ``tokenizers``' ``train`` on the same file.

The corpora are built from the shared corpora (``../shared/corpora`` beside the project, or
``TOKVIZ_CORPORA``) by repeating their files into a temporary folder (never committed):
100 MB and 1 GB by default. For each size it runs, in fresh processes:

- the CLI with ``--workers 1`` and ``--workers 2`` (a Dask LocalCluster), reading its
  ``--report``: wall time, counting and training time, the client's peak RSS and each
  worker's peak RSS;
- HF ``tokenizers``' ``Tokenizer.train([file], BpeTrainer)`` with the same pipeline (GPT-2
  byte-level BPE, same vocab size), wall time and peak RSS.

    python3 bench/bench_cli.py                      # 100 MB and 1 GB, bpe, vocab 8000
    python3 bench/bench_cli.py --sizes 20 --workers 2 --vocab-size 2000   # a quick look

The goal it checks: the client's memory does not grow with the corpus (the same unique
words, so the same counts, at 100 MB and 1 GB). Load average is printed before and after.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
CORPORA = Path(os.environ.get("TOKVIZ_CORPORA", ROOT.parent / "shared" / "corpora"))


def build_corpus(megabytes: int, folder: Path) -> Path:
    """``corpus_<N>mb.txt``: the shared corpora's .txt files, concatenated and repeated to ~N MB."""
    path = folder / f"corpus_{megabytes}mb.txt"
    target = megabytes * 1_000_000
    if path.exists() and path.stat().st_size >= target:
        return path
    sources = sorted(CORPORA.glob("*.txt"))
    if not sources:
        sys.exit(f"No corpora in {CORPORA}; set TOKVIZ_CORPORA.")
    block = b"".join(source.read_bytes().rstrip(b"\n") + b"\n" for source in sources)
    with open(path, "wb") as out:
        written = 0
        while written < target:
            out.write(block)
            written += len(block)
    return path


def load() -> str:
    return " ".join(f"{value:.2f}" for value in os.getloadavg())


def run_cli(corpus: Path, workers: int, model: str, vocab_size: int, scratch: Path) -> dict:
    out = scratch / f"out_{corpus.stem}_{workers}w"
    report = scratch / f"report_{corpus.stem}_{workers}w.json"
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    started = time.perf_counter()
    subprocess.run([sys.executable, "-m", "tokviz", "train", str(corpus), "--model", model, "--vocab-size", str(vocab_size),
                    "--out", str(out), "--workers", str(workers), "--no-progress", "--report", str(report)],
                   check=True, env=env, cwd=ROOT)
    figures = json.loads(report.read_text())
    figures["wall_seconds"] = round(time.perf_counter() - started, 1)
    return figures


_HF_SCRIPT = """
import json, resource, sys, time
from tokenizers import Tokenizer, models, pre_tokenizers, trainers, decoders
path, vocab_size = sys.argv[1], int(sys.argv[2])
tokenizer = Tokenizer(models.BPE())
tokenizer.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
tokenizer.decoder = decoders.ByteLevel()
trainer = trainers.BpeTrainer(vocab_size=vocab_size, special_tokens=["<|endoftext|>"], show_progress=False,
                              initial_alphabet=pre_tokenizers.ByteLevel.alphabet())
started = time.perf_counter()
tokenizer.train([path], trainer)
seconds = time.perf_counter() - started
usage = resource.getrusage(resource.RUSAGE_SELF)
print(json.dumps({"seconds": round(seconds, 1), "peak_rss_mb": round(usage.ru_maxrss / 1024, 1),
                  "cpu_seconds": round(usage.ru_utime + usage.ru_stime, 1),
                  "vocab": tokenizer.get_vocab_size()}))
"""


def run_hf(corpus: Path, vocab_size: int) -> dict:
    started = time.perf_counter()
    result = subprocess.run([sys.executable, "-c", _HF_SCRIPT, str(corpus), str(vocab_size)], check=True, capture_output=True, text=True)
    figures = json.loads(result.stdout.strip().splitlines()[-1])
    figures["wall_seconds"] = round(time.perf_counter() - started, 1)
    return figures


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="100,1000", help="corpus sizes in MB, comma-separated (default 100,1000)")
    parser.add_argument("--workers", default="1,2", help="worker counts, comma-separated (default 1,2)")
    parser.add_argument("--model", default="bpe")
    parser.add_argument("--vocab-size", type=int, default=8000)
    parser.add_argument("--folder", default=os.environ.get("TOKVIZ_BENCH_DIR", "/tmp/tokviz_bench_cli"),
                        help="where the corpora are built (default /tmp/tokviz_bench_cli)")
    parser.add_argument("--no-hf", action="store_true", help="skip HF tokenizers")
    parser.add_argument("--json", help="also write all figures here")
    args = parser.parse_args()
    folder = Path(args.folder)
    folder.mkdir(parents=True, exist_ok=True)
    print(f"load before: {load()}  (cores: {os.cpu_count()})", flush=True)
    rows = []
    with tempfile.TemporaryDirectory(prefix="bench_cli_") as scratch:
        for size in [int(s) for s in args.sizes.split(",")]:
            corpus = build_corpus(size, folder)
            megabytes = corpus.stat().st_size / 1e6
            for workers in [int(w) for w in args.workers.split(",")]:
                figures = run_cli(corpus, workers, args.model, args.vocab_size, Path(scratch))
                row = {"corpus_mb": round(megabytes), "runner": f"tokviz CLI, {workers} worker{'s' if workers != 1 else ''}",
                       "wall_s": figures["wall_seconds"], "count_s": figures["count_seconds"], "train_s": figures["train_seconds"],
                       "client_peak_mb": figures["client_peak_rss_mb"], "client_cpu_s": figures.get("client_cpu_seconds"),
                       "worker_cpu_s": round(sum(figures.get("worker_cpu_seconds", {}).values()), 1),
                       "worker_peak_mb": sorted(figures.get("worker_peak_rss_mb", {}).values()),
                       "unique_words": figures.get("unique_words"), "load": load()}
                rows.append(row)
                print(json.dumps(row), flush=True)
            if not args.no_hf and args.model == "bpe":
                figures = run_hf(corpus, args.vocab_size)
                row = {"corpus_mb": round(megabytes), "runner": "HF tokenizers train (Rust, all cores)",
                       "wall_s": figures["wall_seconds"], "train_s": figures["seconds"], "client_peak_mb": figures["peak_rss_mb"],
                       "client_cpu_s": figures["cpu_seconds"],
                       "load": load()}
                rows.append(row)
                print(json.dumps(row), flush=True)
    print(f"load after: {load()}")
    print()
    print("| corpus | runner | wall s | count s | train s | CPU s client + workers | client peak MB | worker peak MB | load |")
    print("| --- | --- | --- | --- | --- | --- | --- | --- | --- |")
    for row in rows:
        workers = ", ".join(f"{value:.0f}" for value in row.get("worker_peak_mb", [])) or "–"
        cpu = row.get("client_cpu_s")
        cpu = "–" if cpu is None else f"{cpu} + {row['worker_cpu_s']}" if "worker_cpu_s" in row else f"{cpu}"
        print(f"| {row['corpus_mb']} MB | {row['runner']} | {row['wall_s']} | {row.get('count_s', '–')} | {row['train_s']} | "
              f"{cpu} | {row['client_peak_mb']:.0f} | {workers} | {row['load']} |")
    by_size: dict[int, dict[str, float]] = {}
    for row in rows:
        by_size.setdefault(row["corpus_mb"], {})[row["runner"]] = row["wall_s"]
    for size, runners in by_size.items():
        hf = next((v for k, v in runners.items() if k.startswith("HF")), None)
        for runner, wall in runners.items():
            if hf and not runner.startswith("HF"):
                print(f"{size} MB: {runner} / HF = {wall / hf:.1f}x wall time")
    if args.json:
        Path(args.json).write_text(json.dumps(rows, indent=2))


if __name__ == "__main__":
    main()
