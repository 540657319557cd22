"""What tokviz's one-``encode()``-per-line passes leave for Python's cycle collector, and the
collections they set off, next to HF ``tokenizers`` in the same process.

Every object that holds references (a tuple, a list, a dict, an Encoding) is tracked by the
cycle collector from its birth; a collection of the youngest generation comes every 700 of
them, an older one every 10 of those, and a full one (which walks every tracked object of the
process) every 10 of those. HF's encodings are Rust objects the collector never sees, so a pass
of HF's sets off almost none; a pass of tokviz's pays for all it allocates, and one that keeps
many objects alive (the list of a corpus's encodings) can set off the full collection a
process owes, which then lands in that pass's time. This script shows, per kind and pass:

- ``kept``: the tracked objects the pass leaves alive (its encodings and what they hold, the
  word caches' new entries), counted with the collector off;
- ``collections``: how many of each generation the pass set off with the collector on, and the
  milliseconds they took (wall clock, from ``gc.callbacks``).

Each kind runs in a fresh process (the first pass of a process sees the collector as a harness
loading one file would). The tokenizers come from ``--from-dir`` (``KIND.json``, as
``bench_pipelines.py --save-dir`` writes them).

    python3 bench/bench_collector.py --from-dir /tmp/saved --kinds llama2_spm,bart
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def child(kind_file: str, every: int) -> dict:
    import gc
    import time

    sys.path.insert(0, str(ROOT))
    sys.path.insert(0, str(ROOT / "bench"))
    import tokenizers
    from bench_pipelines import test_lines

    from tokviz import Tokenizer

    lines = test_lines(every)
    text = Path(kind_file).read_text(encoding="utf-8")
    result: dict = {"lines": len(lines)}

    def kept_by(encode, passes: int) -> int:
        # Tracked objects born in the last pass and still alive after it (collector off).
        for _ in range(passes - 1):
            encode(lines)
        gc.collect()
        gc.disable()
        try:
            before = {id(o) for o in gc.get_objects()}
            kept = encode(lines)
            count = sum(1 for o in gc.get_objects() if id(o) not in before) - 1  # (less the list)
        finally:
            gc.enable()
        del kept
        return count

    def collections(encode, passes: int) -> dict:
        for _ in range(passes - 1):
            encode(lines)
        stats: dict[int, list[float]] = {}
        started = [0.0]

        def callback(phase: str, info: dict) -> None:
            if phase == "start":
                started[0] = time.perf_counter()
            else:
                stats.setdefault(info["generation"], []).append(time.perf_counter() - started[0])

        gc.callbacks.append(callback)
        try:
            kept = encode(lines)  # noqa: F841
        finally:
            gc.callbacks.remove(callback)
        return {str(g): [len(v), round(sum(v) * 1e3, 1)] for g, v in sorted(stats.items())}

    # The collections first, in the order of a timing: both loaded, then cold HF, cold
    # tokviz, warm HF, warm tokviz (each pass's encodings kept until the next pass of its own).
    loaded = {"hf": tokenizers.Tokenizer.from_str(text), "tokviz": Tokenizer.from_str(text)}
    for temperature in ("cold", "warm"):
        for name, tokenizer in loaded.items():
            encode = lambda batch, tokenizer=tokenizer: [tokenizer.encode(line) for line in batch]  # noqa: E731
            result[f"{name} {temperature} collections"] = collections(encode, 1)
    for name, make in (("hf", tokenizers.Tokenizer.from_str), ("tokviz", Tokenizer.from_str)):
        fresh = make(text)
        encode = lambda batch, tokenizer=fresh: [tokenizer.encode(line) for line in batch]  # noqa: E731
        result[f"{name} cold kept"] = kept_by(encode, 1)
        result[f"{name} warm kept"] = kept_by(encode, 1)
    return result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--from-dir", required=True, help="KIND.json files, as bench_pipelines.py --save-dir writes them")
    parser.add_argument("--kinds", default=None, help="comma-separated (default: every KIND.json there)")
    parser.add_argument("--every", type=int, default=50, help="test on every N-th corpus line")
    parser.add_argument("--child", default=None, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        print(json.dumps(child(args.child, args.every)))
        return
    folder = Path(args.from_dir)
    kinds = args.kinds.split(",") if args.kinds else sorted(path.stem for path in folder.glob("*.json"))
    print("| kind | lines | kept cold HF | tokviz | kept warm HF | tokviz | collections cold HF | tokviz | collections warm HF | tokviz |")
    print("|---|---|---|---|---|---|---|---|---|---|")

    def shown(collections: dict) -> str:
        # generation: count (ms)
        return ", ".join(f"g{g}: {n} ({ms} ms)" for g, (n, ms) in collections.items()) or "none"

    for kind in kinds:
        path = folder / f"{kind}.json"
        if not path.exists():
            print(f"| {kind} | no {path} |")
            continue
        output = subprocess.run(
            [sys.executable, __file__, "--from-dir", str(folder), "--every", str(args.every), "--child", str(path)],
            capture_output=True, text=True, check=True,
        ).stdout
        r = json.loads(output.strip().splitlines()[-1])
        print(
            f"| {kind} | {r['lines']:,} | {r['hf cold kept']:,} | {r['tokviz cold kept']:,} | {r['hf warm kept']:,} | "
            f"{r['tokviz warm kept']:,} | {shown(r['hf cold collections'])} | {shown(r['tokviz cold collections'])} | "
            f"{shown(r['hf warm collections'])} | {shown(r['tokviz warm collections'])} |"
        )


if __name__ == "__main__":
    main()
