"""Encoding throughput: tokviz vs HF ``tokenizers``, GPT-2-style byte-level BPE, same run.

HF trains a 25k byte-level BPE on the benchmark corpus (the five shared corpora
concatenated, 6.8 MB); tokviz loads HF's tokenizer.json; then both encode the corpus line
by line with ``Tokenizer.encode`` (one call per line, as a user's loop would). The script
checks that both produced the same ids, then prints MB/s for each and the ratio.

The two libraries take turns for ``--rounds`` rounds (HF, tokviz, HF, tokviz, ...) so a
busy machine slows both alike; the first round includes filling both word caches (cold),
and the best round of each is reported too. ``--clock cpu`` times with
``time.process_time`` (CPU seconds of this process; both encoders are single-threaded
here), which is much steadier than wall time when other jobs share the cores.

    python bench/bench_encode.py              # full corpus, 25k vocab
    python bench/bench_encode.py --limit 1e6  # first 1 MB only (quick look)

Target (issue 3): tokviz at least 0.5x HF's throughput.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

CORPORA = ROOT.parent / "shared" / "corpora"
FILES = ("tinyshakespeare.txt", "grimm_tales.txt", "wikitext2_valid.txt", "wikitext2_test.txt", "big.txt")


def read_corpus(limit: int | None) -> str:
    text = "".join((CORPORA / name).read_text(encoding="utf-8-sig") for name in FILES)
    return text[:limit] if limit else text


def hf_tokenizer(lines: list[str], vocab_size: int):
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, processors, trainers

    tok = Tokenizer(models.BPE())
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tok.post_processor = processors.ByteLevel(trim_offsets=True)
    tok.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(
        vocab_size=vocab_size,
        special_tokens=["<|endoftext|>"],
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
        show_progress=False,
    )
    tok.train_from_iterator(lines, trainer)
    return tok


def time_encode(encode, lines: list[str], clock=time.perf_counter) -> tuple[float, list[list[int]]]:
    start = clock()
    encodings = [encode(line) for line in lines]
    seconds = clock() - start
    return seconds, [e.ids for e in encodings]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--limit", type=float, default=None, help="only the first N characters of the corpus")
    parser.add_argument("--vocab-size", type=int, default=25_000)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--clock", choices=("wall", "cpu"), default="wall")
    args = parser.parse_args()

    from tokviz import Tokenizer

    text = read_corpus(int(args.limit) if args.limit else None)
    lines = text.splitlines()
    megabytes = len(text.encode("utf-8")) / 1e6
    print(f"corpus: {megabytes:.2f} MB, {len(lines)} lines; training HF BPE, vocab {args.vocab_size} ...", flush=True)
    hf = hf_tokenizer(lines, args.vocab_size)
    ours = Tokenizer.from_str(hf.to_str())

    clock = time.perf_counter if args.clock == "wall" else time.process_time
    print(f"clock: {args.clock}")
    hf_times, ours_times = [], []
    for round_number in range(args.rounds):
        hf_seconds, hf_ids = time_encode(hf.encode, lines, clock)
        ours_seconds, ours_ids = time_encode(ours.encode, lines, clock)
        hf_times.append(hf_seconds)
        ours_times.append(ours_seconds)
        if round_number == 0:
            same = sum(a == b for a, b in zip(hf_ids, ours_ids))
            print(f"identical ids on {same}/{len(lines)} lines")
        print(
            f"round {round_number + 1}: HF {megabytes / hf_seconds:5.2f} MB/s, tokviz {megabytes / ours_seconds:5.2f} MB/s, "
            f"ratio {hf_seconds / ours_seconds:.2f}x",
            flush=True,
        )
    for label, hf_seconds, ours_seconds in (
        ("first round (cold caches)", hf_times[0], ours_times[0]),
        ("best round", min(hf_times), min(ours_times)),
    ):
        print(f"{label}:")
        print(f"  HF tokenizers: {hf_seconds:6.2f} s  {megabytes / hf_seconds:5.2f} MB/s")
        print(f"  tokviz       : {ours_seconds:6.2f} s  {megabytes / ours_seconds:5.2f} MB/s")
        print(f"  ratio tokviz/HF: {hf_seconds / ours_seconds:.2f}x (target >= 0.5x)")


if __name__ == "__main__":
    main()
