"""Taking in a history the training worker returned (issue 39 item 7): its time in the app process and the
longest pause it causes to the app's other threads (every session's script runs in a thread of that process).

A BERT-like training at vocab 50,000 on ``--chars`` characters of the shared corpora (repeated, as
``bench_load.py`` builds them) is written with ``history_io.dumps`` (what the worker sends back). Then, in a
fresh process per tree (``--app-dir``, several allowed: "before" and "after" in one run), with three other
decoded copies alive (other sessions' trainings, which every full garbage collection walks), the text is read
the way that tree's ``jobs`` reads it while a ticker thread sleeps 1 ms in a loop: printed are the read's wall
time and the ticker's longest gap (the longest time no other thread could run), and ``json.loads`` alone in
the same process for reference. A few thousand allocations follow the read inside the measured window, so a
collection the read left pending is counted too.

    python3 bench/bench_takein.py --app-dir /work/main --app-dir . --chars 5000000
"""

from __future__ import annotations

import argparse
import inspect
import json
import sys
import tempfile
import threading
import time
from pathlib import Path

from bench_memory import in_fresh_process  # (this folder is the script's first import path)

ROOT = Path(__file__).resolve().parent.parent


def _longest_pause(action) -> tuple[float, float]:
    """``(seconds the action took, longest gap of a 1 ms ticker thread meanwhile)``."""
    gaps = [0.0]
    stop = threading.Event()

    def ticker() -> None:
        last = time.perf_counter()
        while not stop.is_set():
            time.sleep(0.001)
            now = time.perf_counter()
            gaps.append(now - last)
            last = now

    thread = threading.Thread(target=ticker)
    thread.start()
    time.sleep(0.05)
    started = time.perf_counter()
    kept = action()
    litter = [[index] for index in range(5000)]  # allocations after the read: a pending collection runs here
    took = time.perf_counter() - started
    stop.set()
    thread.join()
    del kept, litter
    return took, max(gaps)


def _write_history(chars: int, path: str, queue) -> None:
    sys.path.insert(0, str(ROOT))
    sys.path.insert(0, str(ROOT / "bench"))
    from bench_load import training_corpus

    from tokviz import history_io, presets
    from tokviz.training import run_training

    history = run_training(presets.bert_like(), 50_000, training_corpus(chars).splitlines())
    Path(path).write_text(history_io.dumps(history), encoding="utf-8")
    queue.put(len(history.merges))


def _read_child(app_dir: str, path: str, queue) -> None:
    sys.path.insert(0, app_dir)
    from tokviz import history_io

    text = Path(path).read_text(encoding="utf-8")
    worker_path = "from_worker" in inspect.signature(history_io.loads).parameters
    read = (lambda: history_io.loads(text, from_worker=True)) if worker_path else (lambda: history_io.loads(text))
    others = [read() for _ in range(3)]  # other sessions' histories, alive in the app process
    reference = _longest_pause(lambda: json.loads(text))
    measured = [_longest_pause(read) for _ in range(3)]
    del others
    queue.put(dict(worker_path=worker_path, reference=reference, measured=measured))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--app-dir", action="append", default=None, help="a tokviz tree to measure (repeatable)")
    parser.add_argument("--chars", type=int, default=5_000_000)
    args = parser.parse_args()
    import os

    print(f"load before: {os.getloadavg()[0]:.2f} (1 min)\n")
    with tempfile.TemporaryDirectory() as folder:
        path = str(Path(folder) / "history.json")
        merges = in_fresh_process(_write_history, args.chars, path)
        size = Path(path).stat().st_size
        print(f"### Taking in a returned history: BERT-like, vocab 50,000, {args.chars:,} characters "
              f"({merges:,} merges, {size / 1e6:.1f} MB of JSON); 3 reads each: the fastest read, the longest pause of all three; three other histories alive\n")
        print("| tree | how it reads | read | longest pause of another thread | `json.loads` alone: time, pause |")
        print("|---|---|---:|---:|---:|")
        for app_dir in args.app_dir or [str(ROOT)]:
            result = in_fresh_process(_read_child, str(Path(app_dir).resolve()), path)
            took = min(t for t, _ in result["measured"])
            pause = max(p for _, p in result["measured"])
            how = "`loads(text, from_worker=True)`: in steps, collector paused" if result["worker_path"] else "`loads(text)`: guarded `json.loads`"
            ref_took, ref_pause = result["reference"]
            print(f"| {app_dir} | {how} | {took:.2f} s | {pause * 1000:.0f} ms | {ref_took:.2f} s, {ref_pause * 1000:.0f} ms |")
    print(f"\nload after: {os.getloadavg()[0]:.2f} (1 min)")


if __name__ == "__main__":
    main()
