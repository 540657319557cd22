"""Instructions tokviz spends on one-``encode()``-per-line passes, counted by valgrind:
deterministic figures for comparing two versions of the code on a machine whose speed drifts
(this one's moves by up to 1.6x within minutes, more than most changes gain or lose).

For each kind, the tokenizer in ``--from-dir`` (``KIND.json``, as ``bench_pipelines.py
--save-dir`` writes them) is loaded and the test lines of ``bench_pipelines.py`` are encoded
under ``valgrind --tool=cachegrind`` with ``PYTHONHASHSEED=0``, in three runs of this script:
setup only, setup + cold pass, then the cold pass followed by a collection with and without
a warm pass after it; each run ends with
``os._exit`` (interpreter shutdown not counted). The differences are the passes'
instructions, cycle collection included; the same pass also runs once with the collector
off. Figures are millions of instructions, not time (a cache miss costs more than an
add); they move with code changes only.

    apt-get install -y valgrind
    python3 bench/bench_instructions.py --from-dir /tmp/saved --kinds openllama,bart

Needs valgrind; prints why when it is missing.
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def child(kind_file: str, mode: str, every: int) -> None:
    """One run under valgrind: load, then the passes ``mode`` names, then exit at once."""
    import gc

    sys.path.insert(0, str(ROOT))
    sys.path.insert(0, str(ROOT / "bench"))
    from bench_pipelines import test_lines

    from tokviz import Tokenizer

    lines = test_lines(every)
    tokenizer = Tokenizer.from_str(Path(kind_file).read_text(encoding="utf-8"))
    gc.collect()
    if mode != "setup":
        if mode == "cold-nogc":
            gc.disable()
        kept = [tokenizer.encode(line) for line in lines]
        if mode in ("cold-collected", "warm"):
            del kept
            gc.collect()
        if mode == "warm":
            kept = [tokenizer.encode(line) for line in lines]  # noqa: F841
    os._exit(0)


def instructions(kind_file: str, mode: str, every: int) -> int:
    command = [
        "valgrind", "--tool=cachegrind", "--cache-sim=no", "--cachegrind-out-file=/dev/null",
        sys.executable, __file__, "--child", mode, "--kind-file", kind_file, "--every", str(every),
    ]
    result = subprocess.run(command, capture_output=True, text=True, env={**os.environ, "PYTHONHASHSEED": "0"})
    match = re.search(r"I\s+refs:\s+([\d,]+)", result.stderr)
    if result.returncode or match is None:
        raise SystemExit(f"valgrind failed for {kind_file} ({mode}):\n{result.stderr[-2000:]}")
    return int(match.group(1).replace(",", ""))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--from-dir", help="a directory of KIND.json files (bench_pipelines.py --save-dir)")
    parser.add_argument("--kinds", default="openllama")
    parser.add_argument("--every", type=int, default=53, help="test on every N-th corpus line (as bench_pipelines.py)")
    parser.add_argument("--child", help=argparse.SUPPRESS)
    parser.add_argument("--kind-file", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        child(args.kind_file, args.child, args.every)
        return
    if shutil.which("valgrind") is None:
        raise SystemExit("valgrind is not installed (apt-get install -y valgrind); this script counts instructions with it.")
    if not args.from_dir:
        raise SystemExit("--from-dir is needed: a directory of KIND.json files (bench_pipelines.py --save-dir DIR writes them).")
    print("| kind | cold pass | of it, cycle collection | warm pass |")
    print("|---|---|---|---|")
    for kind in args.kinds.split(","):
        kind_file = str(Path(args.from_dir) / f"{kind}.json")
        setup = instructions(kind_file, "setup", args.every)
        cold = instructions(kind_file, "cold", args.every) - setup
        cold_nogc = instructions(kind_file, "cold-nogc", args.every) - setup
        warm = instructions(kind_file, "warm", args.every) - instructions(kind_file, "cold-collected", args.every)
        print(f"| {kind} | {cold / 1e6:.0f}M | {(cold - cold_nogc) / 1e6:.0f}M | {warm / 1e6:.0f}M |", flush=True)


if __name__ == "__main__":
    main()
