"""RSS and time of every hostile file (tests/hostile_files.py), each in a fresh process.

For each case (made once, here) a child process imports tokviz, reads the case, notes its RSS
(``idle``) and resets its peak (``/proc/self/clear_refs``), then does what the app
does with an upload -- ``tokviz.loaders.load_bytes`` (Inspect's and Compare's uploaders) or
``tokviz.inspect.open_training`` for a history.json -- and, when that loads, encodes the case's
text (or a sentence); then it reports the outcome (the sentence, or "loaded"), the wall time and
its peak RSS since the reset (``VmHWM``). The child runs under an address-space cap (``--cap-gb``, default 4) and a time
limit (``--timeout``, default 120 s), so a case that would still blow up ends as ``MemoryError``
or ``timeout`` here instead of taking the machine down.

    python3 bench/bench_hostile.py                # the whole corpus, a Markdown table
    python3 bench/bench_hostile.py prepend padding  # the cases whose name holds a word
    python3 bench/bench_hostile.py --bounded        # read as the pages read: tokviz.bounded's child process
    python3 bench/bench_hostile.py --guards DIR     # load time vs HF and the guards' share, per KIND.json in DIR

With ``--bounded`` the reading happens in the child process the pages use (``tokviz.bounded.call``, time bound
``TOKVIZ_MAX_LOAD_SECONDS``, memory bound ``TOKVIZ_MAX_LOAD_MEMORY_MB``): the RSS figures are then the app
process's own (what it holds of the result), the time includes the fork and the result's way back.

The machine may be loaded (other work on its 2 cores): times are wall times of that run.
"""

from __future__ import annotations

import json
import pickle
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT), str(ROOT / "tests")]

CHILD = r"""
import json, resource, sys, time
cap = int(sys.argv[2]) * 1024 ** 3
resource.setrlimit(resource.RLIMIT_AS, (cap, cap))
sys.path[:0] = [sys.argv[1], sys.argv[1] + "/tests"]
import tokviz, tokviz.loaders, tokviz.inspect, hostile_files
from tokviz.errors import TokvizError

def rss_mb(field="VmRSS:"):
    with open("/proc/self/status") as status:
        for line in status:
            if line.startswith(field):
                return int(line.split()[1]) / 1024

import pickle
with open(sys.argv[3], "rb") as stored:  # the case, made once by the parent: its making is not the upload's cost
    case = pickle.load(stored)
bounded = sys.argv[4] == "bounded"
if bounded:  # as the pages read it: in a child process with the time and memory bounds (tokviz.bounded)
    from tokviz import bounded as worker
    worker.call(len, b"", name="warm-up")  # (the fork server starts once per app process, not per upload)
idle = rss_mb()
with open("/proc/self/clear_refs", "w") as refs:  # the peak (VmHWM) counts from here: the upload's own
    refs.write("5")
start = time.perf_counter()
try:
    if case.kind == "training":
        if bounded:
            opened = worker.call(tokviz.inspect.open_training, case.files[0][1], case.name, name=case.name)
        else:
            opened = tokviz.inspect.open_training(case.files[0][1], case.name)
        tokenizer = opened.tokenizer_at(None)
    else:
        companion = case.files[1] if len(case.files) > 1 else None
        if bounded:
            tokenizer = worker.call(tokviz.loaders.load_bytes, case.name, case.files[0][1], name=case.name, companion=companion)
        else:
            tokenizer = tokviz.loaders.load_bytes(case.name, case.files[0][1], companion=companion)
    tokenizer.encode(case.text or "Hello world, a sentence of plain text to encode.")
    outcome = "loaded and encoded"
except TokvizError as error:
    outcome = f"{type(error).__name__}: {error}"
except BaseException as error:  # what must not happen: shown as such in the table
    outcome = f"UNCAUGHT {type(error).__name__}: {str(error)[:200]}"
seconds = time.perf_counter() - start
print(json.dumps({"idle": idle, "after": rss_mb(), "peak": rss_mb("VmHWM:"), "seconds": seconds, "outcome": outcome}))
"""


def largest_accepted() -> list:
    """Files at the limits, which must load: the worst an upload can cost (bench only: they are big)."""
    import json

    from hostile_files import HostileCase, added, word_level

    chars = [chr(0x4E00 + i) for i in range(550)]
    vocab = {char: i for i, char in enumerate(chars)}
    merges = []
    for left in chars:
        for right in chars:
            if len(vocab) < 300_000:
                vocab[left + right] = len(vocab)
                merges.append([left, right])
    bpe = word_level()
    bpe["model"] = {"type": "BPE", "vocab": vocab, "merges": merges, "unk_token": None, "fuse_unk": False, "byte_fallback": False}
    text = "".join(chars[(i * 7) % 550] for i in range(20_000))
    nested: dict = {"type": "Lowercase"}
    for _ in range(18):
        nested = {"type": "Sequence", "normalizers": [nested, {"type": "Replace", "pattern": {"String": "a"}, "content": "b" * 7}]}
    return [
        HostileCase("largest-bpe-300k-vocab-299k-merges", (("largest-bpe.json", json.dumps(bpe).encode()),), None, text=text),
        HostileCase("added-5000-tokens", (("added-5000.json", json.dumps(word_level(
            added_tokens=[added(f"<tok{i}>" * 3, 4 + i, special=i % 2 == 0) for i in range(5_000)])).encode()),), None,
            text=" ".join(f"<tok{i}>" * 3 for i in range(0, 5_000, 7))),
        HostileCase("replace-7x-18-deep-100k-text", (("deep-replace.json", json.dumps(word_level(normalizer=nested)).encode()),), None,
                    text="a" * 100_000),
    ]


def run(case, cap_gb: int, timeout: float, mode: str = "inline") -> dict:
    with tempfile.NamedTemporaryFile(suffix=".pickle") as stored:
        pickle.dump(case, stored)
        stored.flush()
        return _run(stored.name, cap_gb, timeout, mode)


def _run(case_file: str, cap_gb: int, timeout: float, mode: str) -> dict:
    try:
        done = subprocess.run([sys.executable, "-c", CHILD, str(ROOT), str(cap_gb), case_file, mode],
                              capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        return {"idle": None, "after": None, "peak": None, "seconds": timeout, "outcome": f"TIMEOUT after {timeout:.0f} s"}
    lines = [line for line in done.stdout.splitlines() if line.startswith("{")]
    if not lines:
        return {"idle": None, "after": None, "peak": None, "seconds": None,
                "outcome": f"CHILD DIED (exit {done.returncode}): {done.stderr.strip().splitlines()[-1:] }"}
    return json.loads(lines[-1])


def guards(folder: str) -> None:
    """Load time of each ``KIND.json`` in ``folder`` (``bench/bench_pipelines.py --save-dir`` writes them): HF's
    ``Tokenizer.from_str`` and tokviz's in one process (best of 5 each, ratio printed), and the guards' share:
    the value count, the text scan, the sections' check and the growth sample (each best of 5). CPU time of this
    process (``time.process_time``): on a shared, loaded machine wall time mostly measured the other processes."""
    import gc
    import time

    import tokenizers

    from tokviz import Tokenizer, limits
    from tokviz.json_floats import loads_tokenizer_json
    from tokviz.normalizers import check_growth_on_sample
    from tokviz.tokenizer_json import check_tokenizer_json_sections

    def best(function) -> float:
        times = []
        for _ in range(5):
            gc.collect()
            start = time.process_time()
            function()
            times.append(time.process_time() - start)
        return min(times) * 1e3

    print("| kind | load HF CPU ms | load tokviz CPU ms | ratio | values ms | text scan ms | sections ms | growth sample ms | guards ms |")
    print("| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |")
    for path in sorted(Path(folder).glob("*.json")):
        text = path.read_text(encoding="utf-8")
        hf, ours = best(lambda: tokenizers.Tokenizer.from_str(text)), best(lambda: Tokenizer.from_str(text))
        data, tokenizer = loads_tokenizer_json(text), Tokenizer.from_str(text)
        parts = [best(lambda: limits.check_json_values(text)), best(lambda: limits.check_json_text(text)),
                 best(lambda: check_tokenizer_json_sections(data)), best(lambda: check_growth_on_sample(tokenizer.normalizer))]
        print(f"| {path.stem} | {hf:.1f} | {ours:.1f} | {ours / hf:.2f}x | " + " | ".join(f"{part:.1f}" for part in parts)
              + f" | {sum(parts):.1f} |", flush=True)


def main(argv: list[str]) -> None:
    if argv[:1] == ["--guards"]:
        guards(argv[1])
        return
    cap_gb, timeout, mode = 4, 120.0, "inline"
    words = []
    for arg in argv:
        if arg == "--bounded":
            mode = "bounded"
        elif arg.startswith("--cap-gb="):
            cap_gb = int(arg.split("=", 1)[1])
        elif arg.startswith("--timeout="):
            timeout = float(arg.split("=", 1)[1])
        else:
            words.append(arg)
    import hostile_files

    print("| case | idle RSS MB | peak RSS MB | after RSS MB | seconds | outcome |")
    print("| --- | ---: | ---: | ---: | ---: | --- |")
    for case in (*hostile_files.cases(), *largest_accepted()):
        if words and not any(word in case.case for word in words):
            continue
        result = run(case, cap_gb, timeout, mode)
        number = lambda value, digits=0: "–" if value is None else f"{value:,.{digits}f}"  # noqa: E731
        outcome = result["outcome"].replace("|", "\\|").replace("\n", " ")
        if len(outcome) > 160:
            outcome = outcome[:157] + "…"
        print(f"| {case.case} | {number(result['idle'])} | {number(result['peak'])} | {number(result['after'])} | "
              f"{number(result['seconds'], 2)} | {outcome} |", flush=True)


if __name__ == "__main__":
    main(sys.argv[1:])
