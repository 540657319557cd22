"""The merge engine's trainers against HF ``tokenizers``, in one process: BPE, WordPiece and
parity-aware BPE (``models/merges.py`` serves all three).

Run from the project root:  ``python bench/bench_merges.py [--mb 1.0] [--vocab 8000] [--repeat 3]``

Each row trains tokviz and HF on the same text with a Whitespace pre-tokenizer, alternating,
best of ``--repeat`` (which tames a loaded machine), and prints both times and the ratio
tokviz / HF. tokviz is timed from the texts, counting included, as HF's ``train_from_iterator``
is. The parity rows take the five shared corpora as five "languages".
"""

from __future__ import annotations

import argparse
import gc
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
CORPORA = ROOT.parent / "shared" / "corpora"
NAMES = ("tinyshakespeare.txt", "grimm_tales.txt", "wikitext2_valid.txt", "wikitext2_test.txt", "big.txt")


def languages(megabytes: float) -> list[list[str]]:
    """Each corpus's first ``megabytes / 5`` MB, as lines."""
    share = int(megabytes * 1_000_000 / len(NAMES))
    return [(CORPORA / name).read_text(encoding="utf-8-sig")[:share].splitlines() for name in NAMES]


def train(library: str, kind: str, texts: list[list[str]], vocab: int) -> None:
    """One training with ``library`` ("tokviz" or "tokenizers": the same names, as tokviz mirrors HF)."""
    import importlib

    lib = importlib.import_module(library)
    models, pre_tokenizers, trainers = lib.models, lib.pre_tokenizers, lib.trainers
    tokenizer = lib.Tokenizer(models.WordPiece() if kind.startswith("wordpiece") else models.BPE())
    tokenizer.pre_tokenizer = pre_tokenizers.Whitespace()
    if kind == "parity":
        trainers.ParityBpeTrainer(num_merges=vocab, show_progress=False).train_from_iterator(tokenizer, texts)
        return
    options = {"scoring": "likelihood"} if kind == "wordpiece likelihood" and library == "tokviz" else {}
    trainer_class = trainers.WordPieceTrainer if kind.startswith("wordpiece") else trainers.BpeTrainer
    tokenizer.train_from_iterator([line for lines in texts for line in lines], trainer_class(vocab_size=vocab, show_progress=False, **options))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--mb", type=float, default=1.0, help="megabytes of text, shared by the five corpora")
    parser.add_argument("--vocab", type=int, default=8000, help="vocab size (parity: number of merges)")
    parser.add_argument("--repeat", type=int, default=3, help="runs per library and row; the fastest is kept")
    parser.add_argument("--kinds", default="bpe,wordpiece,wordpiece likelihood,parity")
    args = parser.parse_args()
    texts = languages(args.mb)
    print(f"{args.mb} MB, vocab {args.vocab}, best of {args.repeat} (CPU time of this process; HF on 1 thread)\n")
    print("| trainer | tokviz s | HF s | tokviz / HF |\n|---|---|---|---|")
    for kind in args.kinds.split(","):
        ours, theirs = [], []
        for library in ("tokviz", "tokenizers"):  # imports and first-call set-up, untimed
            train(library, kind, [["warm up"], ["up warm"]], 10)
        for _ in range(args.repeat):
            gc.collect()
            ours.append(timed("tokviz", kind, texts, args.vocab))
            gc.collect()
            theirs.append(timed("tokenizers", kind, texts, args.vocab))
        note = " (HF: frequency; no likelihood scoring in HF)" if kind == "wordpiece likelihood" else ""
        print(f"| {kind}{note} | {min(ours):.2f} | {min(theirs):.2f} | {min(ours) / min(theirs):.2f}x |", flush=True)


def timed(library: str, kind: str, texts: list[list[str]], vocab: int) -> float:
    """CPU seconds of one training (a loaded machine stretches wall time, not CPU time)."""
    started = time.process_time()
    train(library, kind, texts, vocab)
    return time.process_time() - started


if __name__ == "__main__":
    import os

    os.environ.setdefault("RAYON_NUM_THREADS", "1")  # HF on one core, as tokviz
    main()
