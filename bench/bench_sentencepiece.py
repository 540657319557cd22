"""tokviz.sentencepiece against the sentencepiece package: training time, peak memory, parity.

Run from the project root::

    python3 bench/bench_sentencepiece.py            # 6.8 MB corpus, bpe + unigram at 8000; BPE order on every file at 2000 and 8000
    python3 bench/bench_sentencepiece.py --quick    # first 20,000 lines only
    python3 bench/bench_sentencepiece.py --skip-files --bpe-only --repeat 3   # BPE on the 6.8 MB corpus, 3 times
    python3 bench/bench_sentencepiece.py --skip-files --bpe-only --one-process  # tokviz without its forked worker
    python3 bench/bench_sentencepiece.py --encode    # the first encode pass alone (load timed apart)
    python3 bench/bench_sentencepiece.py --users     # what issue 35 asks: import, first encode pass, botchan-sized and
                                                     # 6.8 MB trainings (bpe and unigram at 1,000 and 4,000 pieces)
    python3 bench/bench_sentencepiece.py --fixed     # a botchan-sized training's fixed costs: importing the trainer,
                                                     # then a first and a second training in one process
    python3 bench/bench_sentencepiece.py --fixed --cached-bytecode   # the same with compiled files kept
    python3 bench/bench_sentencepiece.py --long-texts  # whole documents in one encode call (unigram 1k / 4k)

Each training runs in its own child process so that its peak resident memory (``ru_maxrss``)
is its own. Printed: wall seconds, CPU seconds (all threads; sentencepiece trains with 16 threads
by default; tokviz's forked worker included, also given apart) and peak MB for both (tokviz's
worker apart: its peak counts the pages it shares with the parent), their ratios, piece-set Jaccard, whether
BPE pieces come in the same order, and held-out pieces per word (last 2,000 lines of big.txt).
"""

from __future__ import annotations

import argparse
import io
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
CORPORA = ROOT.parent / "shared" / "corpora"
FILES = ["tinyshakespeare.txt", "grimm_tales.txt", "wikitext2_valid.txt", "wikitext2_test.txt", "big.txt"]

CHILD = r"""
import io, json, resource, sys, time
sys.path.insert(0, {root!r})
which, corpus, out, options = sys.argv[1], sys.argv[2], sys.argv[3], json.loads(sys.argv[4])
if which == "sentencepiece":
    import sentencepiece as spm
    options["minloglevel"] = 2
else:
    import tokviz.sentencepiece as spm
def cpu():
    me, kids = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return me.ru_utime + me.ru_stime, kids.ru_utime + kids.ru_stime
cpu0, kids0 = cpu()
started = time.perf_counter()
spm.SentencePieceTrainer.train(input=corpus, model_prefix=out, **options)
seconds = time.perf_counter() - started
cpu1, kids1 = cpu()
# (tokviz may fork a worker for half the loading: its CPU counts, its peak is reported apart)
print(json.dumps({{"seconds": seconds, "cpu": cpu1 - cpu0 + kids1 - kids0, "worker_cpu": kids1 - kids0,
                  "peak_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
                  "worker_mb": resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024 if kids1 > kids0 else 0}}))
"""


def run(which: str, corpus: Path, prefix: Path, options: dict) -> dict:
    code = CHILD.format(root=str(ROOT))
    done = subprocess.run([sys.executable, "-c", code, which, str(corpus), str(prefix), json.dumps(options)],
                          capture_output=True, text=True)
    if done.returncode:
        raise SystemExit(f"{which} failed: {done.stderr.strip().splitlines()[-1]}")
    return json.loads(done.stdout.strip().splitlines()[-1])


def pieces(prefix: Path) -> list[str]:
    sys.path.insert(0, str(ROOT))
    from tokviz.sentencepiece.model_proto import ModelProto

    return [p.piece for p in ModelProto.from_bytes(Path(f"{prefix}.model").read_bytes()).pieces]


def per_word(prefix: Path, lines: list[str]) -> tuple[float, float]:
    import sentencepiece as spm

    import tokviz.sentencepiece as tsp

    words = sum(len(line.split()) for line in lines)
    theirs = spm.SentencePieceProcessor(model_file=f"{prefix}.model")
    ours = tsp.SentencePieceProcessor(model_file=f"{prefix}.model")
    return (sum(len(theirs.encode(line)) for line in lines) / words, sum(len(ours.encode(line)) for line in lines) / words)


def compare(corpus: Path, options: dict, workdir: Path, held_out: list[str] | None, tokviz_extra: dict | None = None) -> dict:
    tag = "_".join(f"{k}{v}" for k, v in options.items())
    sp_prefix, tv_prefix = workdir / f"sp_{corpus.stem}_{tag}", workdir / f"tv_{corpus.stem}_{tag}"
    sp = run("sentencepiece", corpus, sp_prefix, options)
    tv = run("tokviz", corpus, tv_prefix, {**options, **(tokviz_extra or {})})
    a, b = pieces(sp_prefix), pieces(tv_prefix)
    result = {
        "corpus": corpus.name, **options,
        "sp_s": round(sp["seconds"], 2), "tokviz_s": round(tv["seconds"], 2), "time_ratio": round(tv["seconds"] / sp["seconds"], 1),
        "sp_cpu": round(sp["cpu"], 2), "tokviz_cpu": round(tv["cpu"], 2), "cpu_ratio": round(tv["cpu"] / max(sp["cpu"], 1e-9), 1),
        "sp_mb": round(sp["peak_mb"]), "tokviz_mb": round(tv["peak_mb"]), "mem_ratio": round(tv["peak_mb"] / sp["peak_mb"], 1),
        "tokviz_worker_cpu": round(tv["worker_cpu"], 2), "tokviz_worker_mb": round(tv["worker_mb"]),
        "jaccard": round(len(set(a) & set(b)) / len(set(a) | set(b)), 4), "same_order": a == b,
    }
    if held_out:
        theirs, _ = per_word(sp_prefix, held_out)
        ours_model, _ = per_word(tv_prefix, held_out)
        result["pieces_per_word_sp"] = round(theirs, 4)
        result["pieces_per_word_tokviz"] = round(ours_model, 4)
        result["per_word_diff_pct"] = round(100 * (ours_model - theirs) / theirs, 2)
    return result


IMPORT = r"""
import sys, time
sys.path.insert(0, {root!r})
started = time.perf_counter()
import {module}
print(time.perf_counter() - started)
"""

FIRST_PASS = r"""
import sys, time, json
sys.path.insert(0, {root!r})
which, model, corpus = sys.argv[1], sys.argv[2], sys.argv[3]
import sentencepiece as spm
if which == "tokviz":
    import tokviz.sentencepiece as spm
lines = open(corpus, encoding="utf-8").read().split("\n")
started = time.perf_counter()
sp = spm.SentencePieceProcessor(model_file=model)
load = time.perf_counter() - started
started, cpu = time.perf_counter(), time.process_time()
pieces = [sp.encode_as_pieces(line) for line in lines]
first, first_cpu = time.perf_counter() - started, time.process_time() - cpu
started = time.perf_counter()
again = [sp.encode_as_pieces(line) for line in lines]
print(json.dumps({{"first": first, "first_cpu": first_cpu, "again": time.perf_counter() - started, "load": load,
                  "pieces": sum(map(len, pieces))}}))
"""


FIXED = r"""
import io, json, sys, time
sys.path.insert(0, {root!r})
which, corpus, options = sys.argv[1], sys.argv[2], json.loads(sys.argv[3])
lines = open(corpus, encoding="utf-8").read().split("\n")
cpu = time.process_time
start = cpu()
if which == "sentencepiece":
    import sentencepiece as spm
    options["minloglevel"] = 2
    imported = trainer = cpu()
else:
    import tokviz.sentencepiece as spm
    imported = cpu()
    import tokviz.sentencepiece.trainer  # (the trainer's modules load on first use)
    trainer = cpu()
runs = []
for _ in range(2):
    started = cpu()
    spm.SentencePieceTrainer.train(sentence_iterator=iter(lines), model_writer=io.BytesIO(), **options)
    runs.append(cpu() - started)
print(json.dumps({{"import": imported - start, "trainer_import": trainer - imported,
                  "first": runs[0], "second": runs[1], "numpy": "numpy" in sys.modules}}))
"""


def fixed_costs(workdir: Path, repeat: int = 3, cached_bytecode: bool = False) -> None:
    """Where a botchan-sized training's CPU goes, tokviz against sentencepiece (fresh processes,
    fastest of ``repeat``): importing the package and the trainer (tokviz loads it on the first
    training), then a first and a second training in the same process (the first loads numpy if its
    path needs it: ``numpy`` says whether it was loaded).

    The children inherit the environment: where ``PYTHONDONTWRITEBYTECODE`` is set (this machine sets
    it), every run compiles tokviz's modules from source while the installed sentencepiece and numpy
    come precompiled. ``cached_bytecode``: the children keep compiled files (in a folder of their own,
    made by an untimed first run of each side), as a user's installed or once-imported tokviz has them."""
    big = (CORPORA / "big.txt").read_text(encoding="utf-8")
    botchan = workdir / "botchan_sized.txt"
    botchan.write_text(big[:278_000], encoding="utf-8")
    code = FIXED.format(root=str(ROOT))
    env = dict(os.environ)
    if cached_bytecode:
        env.pop("PYTHONDONTWRITEBYTECODE", None)
        env["PYTHONPYCACHEPREFIX"] = str(workdir / "pycache")
        for which in ("tokviz", "sentencepiece"):
            for model_type in ("bpe", "unigram"):
                subprocess.run([sys.executable, "-c", code, which, str(botchan), json.dumps({"vocab_size": 1000, "model_type": model_type})],
                               capture_output=True, text=True, check=True, env=env)
    print(json.dumps({"bytecode": "cached" if cached_bytecode else
                      "compiled every run" if os.environ.get("PYTHONDONTWRITEBYTECODE") else "as Python keeps it"}), flush=True)
    for model_type in ("bpe", "unigram"):
        for size in (1000, 4000):
            options = json.dumps({"vocab_size": size, "model_type": model_type})
            best: dict[str, dict[str, float]] = {}
            for _ in range(repeat):
                for which in ("tokviz", "sentencepiece"):
                    done = subprocess.run([sys.executable, "-c", code, which, str(botchan), options],
                                          capture_output=True, text=True, check=True, env=env)
                    run = json.loads(done.stdout.strip().splitlines()[-1])
                    best[which] = {k: min(v, best.get(which, run)[k]) for k, v in run.items()}
            mine, peer = best["tokviz"], best["sentencepiece"]
            whole = mine["trainer_import"] + mine["first"]
            print(json.dumps({"fixed": f"{model_type} {size}", **{f"tokviz_{k}_s": round(v, 3) for k, v in mine.items() if k != "numpy"},
                              "tokviz_loaded_numpy": bool(mine["numpy"]),
                              "sentencepiece_first_s": round(peer["first"], 3), "sentencepiece_second_s": round(peer["second"], 3),
                              "first_with_imports_ratio": round(whole / peer["first"], 2),
                              "first_ratio": round(mine["first"] / peer["first"], 2),
                              "second_ratio": round(mine["second"] / peer["second"], 2)}), flush=True)


def median(values: list[float]) -> float:
    ordered = sorted(values)
    return ordered[len(ordered) // 2]


def import_seconds(module: str, runs: int = 5) -> float:
    """Median wall time of ``import module`` in fresh processes (each run a new interpreter)."""
    code = IMPORT.format(root=str(ROOT), module=module)
    return median([float(subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout)
                   for _ in range(runs)])


def first_pass(which: str, model: Path, corpus: Path) -> dict:
    code = FIRST_PASS.format(root=str(ROOT))
    done = subprocess.run([sys.executable, "-c", code, which, str(model), str(corpus)], capture_output=True, text=True, check=True)
    return json.loads(done.stdout.strip().splitlines()[-1])


def encode_passes(workdir: Path, repeat: int = 5) -> None:
    """The first (and second) encode pass alone, on models sentencepiece trains on a botchan-sized slice;
    tokviz and sentencepiece alternate ``repeat`` times in fresh processes and the fastest of each counts."""
    import sentencepiece as spm

    big = (CORPORA / "big.txt").read_text(encoding="utf-8")
    botchan = workdir / "botchan_sized.txt"
    botchan.write_text(big[:278_000], encoding="utf-8")
    test_text = workdir / "held_out.txt"
    test_text.write_text("\n".join(big.split("\n")[-2000:]), encoding="utf-8")
    for model_type in ("bpe", "unigram"):
        for size in (1000, 4000):
            prefix = workdir / f"sp_{model_type}{size}"
            spm.SentencePieceTrainer.train(input=str(botchan), model_prefix=str(prefix), vocab_size=size,
                                           model_type=model_type, minloglevel=2)
            runs: dict[str, list[dict]] = {"tokviz": [], "sentencepiece": []}
            for _ in range(repeat):  # (fresh processes, alternating: the fastest of each is the least disturbed)
                for which in runs:
                    runs[which].append(first_pass(which, Path(f"{prefix}.model"), test_text))
            mine = min(r["first"] for r in runs["tokviz"])
            peer = min(r["first"] for r in runs["sentencepiece"])
            again, peer_again = min(r["again"] for r in runs["tokviz"]), min(r["again"] for r in runs["sentencepiece"])
            cpu, peer_cpu = min(r["first_cpu"] for r in runs["tokviz"]), min(r["first_cpu"] for r in runs["sentencepiece"])
            print(json.dumps({"first_pass": f"{model_type} {size}", "lines": 2000, "tokviz_s": round(mine, 4),
                              "sentencepiece_s": round(peer, 4), "ratio": round(mine / peer, 2),
                              "cpu_ratio": round(cpu / peer_cpu, 2),
                              "again_ratio": round(again / peer_again, 2),
                              "tokviz_load_s": round(min(r["load"] for r in runs["tokviz"]), 4),
                              "sentencepiece_load_s": round(min(r["load"] for r in runs["sentencepiece"]), 4),
                              "same_piece_count": runs["tokviz"][0]["pieces"] == runs["sentencepiece"][0]["pieces"]}),
                  flush=True)


def long_texts(workdir: Path) -> None:
    """Whole documents in one call: 209 texts of 50-20,000 corpus lines joined by spaces (big.txt,
    wikitext2_test.txt, grimm_tales.txt), ``encode`` (ids) then ``encode_as_pieces``, on unigram models
    sentencepiece trains on the botchan-sized slice; tokviz and sentencepiece in this one process, CPU clock,
    and how many texts they encode differently."""
    import time

    import sentencepiece as spm

    sys.path.insert(0, str(ROOT))
    from tokviz import sentencepiece as tsp

    big = (CORPORA / "big.txt").read_text(encoding="utf-8")
    lines = [line for name in ("big.txt", "wikitext2_test.txt", "grimm_tales.txt")
             for line in (CORPORA / name).read_text(encoding="utf-8").splitlines()[:20000]]
    texts = [" ".join(lines[i:i + k]) for k in (50, 400, 3000, 20000) for i in range(0, len(lines), k * 4)]
    for size in (1000, 4000):
        out = io.BytesIO()
        spm.SentencePieceTrainer.train(sentence_iterator=iter(big[:278_000].split("\n")), model_writer=out, vocab_size=size,
                                       model_type="unigram", minloglevel=2)
        for call in ("encode", "encode_as_pieces"):
            theirs = getattr(spm.SentencePieceProcessor(model_proto=out.getvalue()), call)
            ours = getattr(tsp.SentencePieceProcessor(model_proto=out.getvalue()), call)
            seconds, differ = {"tokviz": 0.0, "sentencepiece": 0.0}, 0
            for text in texts:
                start = time.process_time()
                expected = theirs(text)
                middle = time.process_time()
                found = ours(text)
                seconds["sentencepiece"] += middle - start
                seconds["tokviz"] += time.process_time() - middle
                differ += found != expected
            print(json.dumps({"long_texts": f"unigram {size} {call}", "texts": len(texts), "chars": sum(map(len, texts)),
                              "tokviz_cpu_s": round(seconds["tokviz"], 3), "sentencepiece_cpu_s": round(seconds["sentencepiece"], 3),
                              "cpu_ratio": round(seconds["tokviz"] / seconds["sentencepiece"], 2), "differ": differ}), flush=True)


def users(workdir: Path) -> None:
    """Issue 35's figures: import time, a first encode pass, trainings at 1,000 and 4,000 pieces."""
    ours, theirs = import_seconds("tokviz.sentencepiece"), import_seconds("sentencepiece")
    print(json.dumps({"import_tokviz_s": round(ours, 3), "import_sentencepiece_s": round(theirs, 3),
                      "ratio": round(ours / theirs, 2)}), flush=True)
    big = (CORPORA / "big.txt").read_text(encoding="utf-8")
    botchan = workdir / "botchan_sized.txt"  # (botchan.txt, sentencepiece's test corpus, is 278 KB of short lines)
    botchan.write_text(big[:278_000], encoding="utf-8")
    full = workdir / "all.txt"
    full.write_text("".join((CORPORA / name).read_text(encoding="utf-8") for name in FILES), encoding="utf-8")
    held_out = big.split("\n")[-2000:]
    test_text = workdir / "held_out.txt"
    test_text.write_text("\n".join(held_out), encoding="utf-8")
    for corpus in (botchan, full):
        for model_type in ("bpe", "unigram"):
            for size in (1000, 4000):
                result = compare(corpus, {"vocab_size": size, "model_type": model_type}, workdir, held_out)
                print(json.dumps(result), flush=True)
                if corpus is botchan:
                    tag = f"vocab_size{size}_model_type{model_type}"
                    model = workdir / f"sp_{corpus.stem}_{tag}.model"
                    mine, peer = first_pass("tokviz", model, test_text), first_pass("sentencepiece", model, test_text)
                    print(json.dumps({"first_pass": f"{model_type} {size}", "lines": len(held_out),
                                      "tokviz_s": round(mine["first"], 3), "sentencepiece_s": round(peer["first"], 3),
                                      "ratio": round(mine["first"] / peer["first"], 2),
                                      "tokviz_again_s": round(mine["again"], 3), "same_piece_count": mine["pieces"] == peer["pieces"]}),
                          flush=True)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--skip-files", action="store_true", help="skip the per-file BPE order runs")
    parser.add_argument("--bpe-only", action="store_true", help="leave out the unigram run on the benchmark corpus")
    parser.add_argument("--repeat", type=int, default=1, help="run the benchmark corpus trainings this many times")
    parser.add_argument("--one-process", action="store_true", help="tokviz with num_threads=1 (no forked worker)")
    parser.add_argument("--users", action="store_true", help="import, first encode pass, trainings at 1,000 / 4,000 (issue 35)")
    parser.add_argument("--encode", action="store_true", help="the first encode pass alone (fastest of 5 alternating runs)")
    parser.add_argument("--fixed", action="store_true", help="a botchan-sized training's imports, first and second run")
    parser.add_argument("--long-texts", action="store_true", help="209 joined texts of 50-20,000 lines, unigram 1k / 4k, one process")
    parser.add_argument("--cached-bytecode", action="store_true",
                        help="with --fixed: the children keep compiled files (unset PYTHONDONTWRITEBYTECODE, as after pip install)")
    args = parser.parse_args()
    print(f"load average: {os.getloadavg()}")
    with tempfile.TemporaryDirectory() as tmp:
        workdir = Path(tmp)
        if args.encode:
            encode_passes(workdir)
            print(f"load average: {os.getloadavg()}")
            return
        if args.long_texts:
            long_texts(workdir)
            print(f"load average: {os.getloadavg()}")
            return
        if args.fixed:
            fixed_costs(workdir, cached_bytecode=args.cached_bytecode)
            print(f"load average: {os.getloadavg()}")
            return
        if args.users:
            users(workdir)
            print(f"load average: {os.getloadavg()}")
            return
        text = "".join((CORPORA / name).read_text(encoding="utf-8") for name in FILES)
        if args.quick:
            text = "\n".join(text.split("\n")[:20000])
        corpus = workdir / "all.txt"
        corpus.write_text(text, encoding="utf-8")
        held_out = (CORPORA / "big.txt").read_text(encoding="utf-8").split("\n")[-2000:]
        size = 2000 if args.quick else 8000
        for _ in range(args.repeat):
            for model_type in ("bpe",) if args.bpe_only else ("bpe", "unigram"):
                extra = {"num_threads": 1} if args.one_process else None
                print(json.dumps(compare(corpus, {"vocab_size": size, "model_type": model_type}, workdir, held_out, extra)), flush=True)
        if not args.skip_files and not args.quick:
            for name in FILES:
                for size in (2000, 8000):
                    print(json.dumps(compare(CORPORA / name, {"vocab_size": size, "model_type": "bpe"}, workdir, None)), flush=True)
    print(f"load average: {os.getloadavg()}")


if __name__ == "__main__":
    main()
