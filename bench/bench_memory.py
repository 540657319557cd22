"""Memory bounds (issue 18 item 4): hostile uploads, the Unigram trainer's peak vs HF, what a training retains.

Run from the project root:  ``python bench/bench_memory.py [--quick] [hostile] [unigram] [retained] [unigram_distinct]``
(no section named: the first three; ``unigram_distinct`` -- the Unigram trainer's peak on 20 M characters of
distinct text, issue 39's case, vs HF -- runs only when named). Every measurement runs in its own fresh process (``spawn``), so a
peak RSS is that process's high-water mark and nothing one measurement leaves behind reaches another.

1. **Hostile uploads.** Tokenizer files generated to hold far more than a real one: a tokenizer.json
   with a 1,000,000-entry WordLevel vocabulary, one with 1,000,000 Unigram pieces, a vocab.txt of
   1,000,000 lines, and a "JSON bomb" (a 48 MB tokenizer.json whose extra key holds ``[[],[],...]``,
   22 bytes of parse per byte of file). Each is loaded with ``tokviz.loaders.load_bytes`` twice:
   *before* (the memory limits of ``tokviz.limits`` lifted through their environment variables, as
   the server was before them) and *after* (the default limits). Printed: the memory the load added
   above the process's RSS once the file's bytes were read (peak and kept), its time, and the outcome.
2. **Unigram trainer peak vs HF**, in the same run: the benchmark corpus (the five shared corpora,
   6.8 MB), vocab 8,000, Metaspace words, ``bench_unigram``'s two runners (tokviz counts words and
   trains; HF ``train_from_iterator``), each in a fresh process. Goal: tokviz's peak ≤ 2× HF's.
3. **What a training retains**: the BERT-like preset at vocab 50,000 on 20,000,000 characters of the
   shared corpora (repeated in turn, as ``bench_load.py`` builds it), and the T5-like (Unigram) preset
   the same way. Printed: training time, RSS before / after (``gc`` run) / peak,
   ``tokviz.history.retained_bytes(history)`` against the goal (300 MB), the same history with its merge
   steps' candidate entries unshared (what it held before they were shared), and what one tokenizer at a
   slider size holds after encoding a 100,000-character text (the app caches up to 64 of those). Without
   ``--quick`` a second process repeats the BERT-like training under ``tracemalloc`` and prints the
   bytes alive after it minus those alive once the history is dropped: what the history really held,
   to check ``retained_bytes`` against.

Prints markdown tables; paste the latest into bench/README.md ("Memory (scalemem)").
"""

from __future__ import annotations

import gc
import json
import multiprocessing as mp
import os
import resource
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))
CORPORA = ROOT.parent / "shared" / "corpora"
MB = 1024 * 1024

#: The environment variables of every memory limit of tokviz.limits, lifted for the "before" runs.
LIFTED = {
    "TOKVIZ_MAX_TOKENIZER_VOCAB": "1000000000",
    "TOKVIZ_MAX_TOKENIZER_MERGES": "1000000000",
    "TOKVIZ_MAX_ADDED_TOKENS": "1000000000",
    "TOKVIZ_MAX_TOKEN_CHARS": "1000000000",
    "TOKVIZ_MAX_UNIGRAM_PREFIX_CHARS": "1000000000",
    "TOKVIZ_MAX_JSON_VALUES": "1000000000",
}


def rss_mb() -> float:
    with open("/proc/self/statm") as statm:
        return int(statm.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") / MB


def peak_mb() -> float:
    """This process's peak RSS since :func:`reset_peak` (``VmHWM``; ``ru_maxrss`` where it is not readable).

    Linux carries a process's ``ru_maxrss`` over ``fork`` and ``exec``, so a spawned child starts with
    its parent's high-water mark: the peak is reset before every measurement instead.
    """
    try:
        with open("/proc/self/status") as status:
            for line in status:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1]) / 1024
    except OSError:
        pass
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def reset_peak() -> None:
    """Start this process's high-water mark again from its current RSS (Linux: ``clear_refs`` 5)."""
    try:
        with open("/proc/self/clear_refs", "w") as clear_refs:
            clear_refs.write("5")
    except OSError:
        pass


def in_fresh_process(target, *args) -> dict:
    context = mp.get_context("spawn")
    queue = context.Queue()
    process = context.Process(target=target, args=(*args, queue))
    process.start()
    result = queue.get()
    process.join()
    return result


# --------------------------------------------------------------------------- 1. hostile uploads


def _tokenizer_json(model: dict) -> str:
    return json.dumps({"version": "1.0", "truncation": None, "padding": None, "added_tokens": [], "normalizer": None,
                       "pre_tokenizer": {"type": "Whitespace"}, "post_processor": None, "decoder": None,
                       "model": model}, separators=(",", ":"))


def _generate_child(folder: str, queue) -> None:
    queue.put([(label, str(path)) for label, path in hostile_files(Path(folder))])


def hostile_files(folder: Path) -> list[tuple[str, Path]]:
    """Generate the hostile files once (the children read them, so generating costs them nothing)."""
    n = 1_000_000
    files = {
        "tokenizer.json, WordLevel, 1,000,000 entries": (
            "tokenizer.json", _tokenizer_json({"type": "WordLevel", "vocab": {f"w{i}": i for i in range(n)}, "unk_token": "w0"})),
        "tokenizer.json, Unigram, 1,000,000 pieces": (
            "tokenizer.json", _tokenizer_json({"type": "Unigram", "unk_id": 0,
                                               "vocab": [["<unk>", 0.0]] + [[f"p{i}", -1.0 - i / n] for i in range(n)]})),
        "vocab.txt (WordPiece), 1,000,000 lines": ("vocab.txt", "[UNK]\n" + "".join(f"w{i}\n" for i in range(n))),
        "tokenizer.json, JSON bomb (48 MB of [[],[],...])": (
            "tokenizer.json", _tokenizer_json({"type": "WordLevel", "vocab": {"a": 0}, "unk_token": "a"})[:-1]
            + ',"x":[' + "[]," * (16 * MB - 1) + "[]]}"),
    }
    out = []
    for index, (label, (name, text)) in enumerate(files.items()):
        path = folder / str(index) / name
        path.parent.mkdir()
        path.write_text(text, encoding="utf-8")
        out.append((label, path))
    return out


def _load_child(path: str, lifted: bool, queue) -> None:
    if lifted:
        os.environ.update(LIFTED)
    from tokviz.loaders import load_bytes

    data = Path(path).read_bytes()
    gc.collect()
    reset_peak()
    before, started = rss_mb(), time.perf_counter()
    try:
        tokenizer = load_bytes(Path(path).name, data)
        outcome = f"loaded, {tokenizer.get_vocab_size():,} entries"
    except Exception as error:  # noqa: BLE001 - the refusal is the measurement
        tokenizer, outcome = None, f"refused: {error}"
    seconds = time.perf_counter() - started
    gc.collect()
    queue.put(dict(seconds=seconds, peak=peak_mb() - before, kept=rss_mb() - before, outcome=outcome, size=len(data)))


def hostile() -> None:
    print("### Hostile uploads: memory a load adds above the file's bytes (peak RSS above the RSS before, kept RSS)\n")
    print("| file | size | before (limits lifted) | after (default limits) |")
    print("|---|---:|---|---|")
    with tempfile.TemporaryDirectory() as folder:
        for label, path in in_fresh_process(_generate_child, folder):
            cells = []
            for lifted in (True, False):
                result = in_fresh_process(_load_child, str(path), lifted)
                outcome = result["outcome"]
                if len(outcome) > 150:
                    outcome = outcome[:150] + "…"
                cells.append(f"{result['peak']:.0f} MB peak, {result['kept']:.0f} MB kept, {result['seconds']:.1f} s — {outcome}")
            print(f"| {label} | {result['size'] / MB:.1f} MB | {cells[0]} | {cells[1]} |")
    print()


# --------------------------------------------------------------------------- 2. Unigram peak vs HF


def unigram(vocab_size: int = 8000) -> None:
    from bench_unigram import _run_hf, _run_tokviz

    ours = in_fresh_process(_run_tokviz, vocab_size)
    theirs = in_fresh_process(_run_hf, vocab_size)
    ratio = ours["peak"] / theirs["peak"]
    print(f"### Unigram trainer peak memory vs HF: benchmark corpus (6.8 MB), vocab {vocab_size}, Metaspace words\n")
    print("| trainer | peak RSS | wall seconds | vocab |")
    print("|---|---:|---:|---:|")
    print(f"| HF `UnigramTrainer` (count + train) | {theirs['peak']:.0f} MB | {theirs['total']:.2f} | {theirs['size']:,} |")
    print(f"| tokviz `UnigramTrainer` (count + train) | {ours['peak']:.0f} MB | {ours['total']:.2f} | {ours['size']:,} |")
    print(f"\ntokviz / HF peak: **{ratio:.2f}x** (goal ≤ 2x: {'met' if ratio <= 2 else 'NOT met'})\n")


def distinct_corpus(chars: int = 20_000_000) -> list[str]:
    """``chars`` characters of text whose words are mostly distinct (the shape of issue 39's report: 20 M
    characters, ~830k distinct words): the shared corpora's lines, every third word given a base-36 serial
    number, so the text reads like prose but its vocabulary does not repeat."""
    from bench_load import training_corpus as load_corpus

    lines, serial = [], 0
    for line in load_corpus(chars).splitlines():
        words = line.split(" ")
        for index in range(0, len(words), 3):
            serial += 1
            words[index] = f"{words[index]}{serial:x}"
        lines.append(" ".join(words))
    return lines


def _distinct_child(who: str, vocab_size: int, chars: int, queue) -> None:
    lines = distinct_corpus(chars)
    reset_peak()
    base = rss_mb()
    started = time.perf_counter()
    if who == "hf":
        from tokenizers import Tokenizer, models, pre_tokenizers, trainers

        tokenizer = Tokenizer(models.Unigram())
        tokenizer.pre_tokenizer = pre_tokenizers.Metaspace()
        trainer = trainers.UnigramTrainer(vocab_size=vocab_size, special_tokens=["<unk>"], unk_token="<unk>", show_progress=False)
        tokenizer.train_from_iterator(lines, trainer=trainer)
        size, words = tokenizer.get_vocab_size(), None
    else:
        from tokviz import pre_tokenizers
        from tokviz.models.unigram.trainer import UnigramTrainer
        from tokviz.word_counts import count_words

        counted = count_words(lines, pre_tokenizer=pre_tokenizers.Metaspace())
        words = len(counted)
        history = UnigramTrainer(vocab_size=vocab_size, special_tokens=["<unk>"], unk_token="<unk>").train_from_word_counts(counted)
        size = history.model.get_vocab_size()
    queue.put(dict(peak=peak_mb(), base=base, seconds=time.perf_counter() - started, size=size, words=words))


def unigram_distinct(vocab_size: int = 50_000, chars: int = 20_000_000) -> None:
    """The Unigram trainer's peak on 20 M characters of distinct text vs HF's, each in a fresh process."""
    ours = in_fresh_process(_distinct_child, "tokviz", vocab_size, chars)
    theirs = in_fresh_process(_distinct_child, "hf", vocab_size, chars)
    print(f"### Unigram peak on {chars:,} characters of distinct text ({ours['words']:,} distinct words), vocab {vocab_size:,}\n")
    print("| trainer | peak RSS | above the corpus in memory | wall seconds | vocab |")
    print("|---|---:|---:|---:|---:|")
    for label, r in (("HF `UnigramTrainer`", theirs), ("tokviz `UnigramTrainer`", ours)):
        print(f"| {label} | {r['peak']:.0f} MB | {r['peak'] - r['base']:.0f} MB | {r['seconds']:.1f} | {r['size']:,} |")
    print(f"\ntokviz / HF peak: **{ours['peak'] / theirs['peak']:.2f}x**\n")


# --------------------------------------------------------------------------- 3. what a training retains


def training_corpus(chars: int) -> list[str]:
    """``chars`` characters of the shared corpora, repeated in turn, as lines: the corpus bench/bench_load.py trains."""
    from bench_load import training_corpus as load_corpus  # bench/ is on sys.path when a bench script runs

    return load_corpus(chars).splitlines()


def _unshared(steps):
    """The merge steps with a fresh (pair, score) tuple per candidate, as they were built before sharing."""
    import dataclasses

    return tuple(dataclasses.replace(step, candidates=tuple(((left, right), float(score)) for (left, right), score in step.candidates))
                 for step in steps)


def _retained_child(preset: str, vocab_size: int, chars: int, queue) -> None:
    from tokviz import presets
    from tokviz.history import retained_bytes
    from tokviz.pipeline_config import tokenizer_with_model
    from tokviz.training import run_training

    config = getattr(presets, preset)()
    lines = training_corpus(chars)
    gc.collect()
    reset_peak()
    before, started = rss_mb(), time.perf_counter()
    history = run_training(config, vocab_size, lines)
    seconds = time.perf_counter() - started
    gc.collect()
    after, peak = rss_mb(), peak_mb()
    retained = retained_bytes(history)
    merges = getattr(history, "merges", ())
    unshared = retained - retained_bytes(merges) + retained_bytes(_unshared(merges)) if merges else retained
    size = history.model.get_vocab_size()
    tokenizer = tokenizer_with_model(config, history.model_at(size // 2))
    tokenizer.encode("\n".join(lines[:20_000])[:100_000])
    queue.put(dict(seconds=seconds, before=before, after=after, peak=peak, retained=retained / MB, unshared=unshared / MB,
                   size=size, merges=len(merges), tokenizer=retained_bytes(tokenizer) / MB, slider=size // 2,
                   words=history.word_counts.unique_words))


def _traced_child(preset: str, vocab_size: int, chars: int, queue) -> None:
    import tracemalloc

    from tokviz import presets
    from tokviz.history import retained_bytes
    from tokviz.training import run_training

    config = getattr(presets, preset)()
    lines = training_corpus(chars)
    run_training(config, 200, lines[:2000])  # imports and process-wide caches, outside the measurement
    gc.collect()
    tracemalloc.start()
    history = run_training(config, vocab_size, lines)
    gc.collect()
    alive = tracemalloc.get_traced_memory()[0]
    estimate = retained_bytes(history)
    del history
    gc.collect()
    held = alive - tracemalloc.get_traced_memory()[0]
    tracemalloc.stop()
    queue.put(dict(held=held / MB, estimate=estimate / MB))


def retained(quick: bool, chars: int = 20_000_000, vocab_size: int = 50_000, goal_mb: int = 300) -> None:
    print(f"### What a training retains: vocab {vocab_size:,} on {chars:,} characters of the shared corpora\n")
    print("| preset | train | words | vocab | RSS before → after (peak) | `retained_bytes` | goal | candidates unshared | a tokenizer at the slider |")
    print("|---|---:|---:|---:|---|---:|---:|---:|---:|")
    for preset in ("bert_like", "t5_like"):
        r = in_fresh_process(_retained_child, preset, vocab_size, chars)
        verdict = "met" if r["retained"] < goal_mb else "NOT met"
        unshared = f"{r['unshared']:.1f} MB" if r["merges"] else "(no merges)"
        print(f"| {preset} | {r['seconds']:.1f} s | {r['words']:,} | {r['size']:,} | {r['before']:.0f} → {r['after']:.0f} MB "
              f"({r['peak']:.0f} MB) | {r['retained']:.1f} MB | < {goal_mb} MB: {verdict} | {unshared} | "
              f"{r['tokenizer']:.1f} MB at {r['slider']:,} |")
    print()
    if not quick:
        r = in_fresh_process(_traced_child, "bert_like", vocab_size, chars)
        print(f"tracemalloc, bert_like: the history held {r['held']:.1f} MB (alive after training minus alive once it is "
              f"dropped); `retained_bytes` said {r['estimate']:.1f} MB.\n")


if __name__ == "__main__":
    chosen = [name for name in sys.argv[1:] if not name.startswith("-")] or ["hostile", "unigram", "retained"]
    started = time.perf_counter()
    print(f"load before: {os.getloadavg()[0]:.2f} (1 min)\n")
    for name in chosen:
        if name == "retained":
            retained("--quick" in sys.argv)
        else:
            globals()[name]()
    print(f"load after: {os.getloadavg()[0]:.2f} (1 min); {time.perf_counter() - started:.0f} s in all")
