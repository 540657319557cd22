"""Speed of the encoding models alone: tokviz vs HF ``tokenizers`` on the same words, one run.

Trains a 25k byte-level BPE with HF on the shared benchmark corpus, cuts the corpus
into pre-tokens with HF's ByteLevel pre-tokenizer, then times ``model.tokenize(word)``
over every pre-token for both libraries (a fresh model each, so both caches start
empty), best of 3 alternating runs, and prints tokens/s and the ratio. WordPiece and WordLevel get the same
treatment with a BERT-style vocab on Whitespace pre-tokens.

    python bench/bench_models.py            # whole 6.8 MB corpus
    python bench/bench_models.py --mb 1     # first 1 MB only (quicker)
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

from tokenizers import Tokenizer as HfTokenizer
from tokenizers import models as hf_models
from tokenizers import pre_tokenizers as hf_pre_tokenizers
from tokenizers import trainers as hf_trainers

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))  # run as a script from anywhere

from tokviz.models import BPE, WordLevel, WordPiece  # noqa: E402

CORPORA = ROOT.parent / "shared" / "corpora"
FILES = ("tinyshakespeare.txt", "grimm_tales.txt", "wikitext2_valid.txt", "wikitext2_test.txt", "big.txt")


def read_corpus(megabytes: float | None) -> list[str]:
    text = "".join((CORPORA / name).read_text(encoding="utf-8-sig") for name in FILES)
    if megabytes:
        text = text[: int(megabytes * 1_000_000)]
    return text.splitlines()


def pre_tokens(lines: list[str], splitter) -> list[str]:
    return [word for line in lines for word, _ in splitter.pre_tokenize_str(line)]


def time_model(tokenize, words: list[str]) -> tuple[float, int]:
    start = time.perf_counter()
    count = 0
    for word in words:
        count += len(tokenize(word))
    return time.perf_counter() - start, count


def compare(name: str, make_ours, make_theirs, words: list[str], repeats: int) -> None:
    """Best of ``repeats`` alternating runs, each on a fresh model (empty caches): the
    machine is shared, so alternating and keeping the best is fairer than one run each."""
    our_seconds = hf_seconds = float("inf")
    for _ in range(repeats):
        seconds, our_tokens = time_model(make_ours().tokenize, words)
        our_seconds = min(our_seconds, seconds)
        seconds, hf_tokens = time_model(make_theirs().tokenize, words)
        hf_seconds = min(hf_seconds, seconds)
        assert our_tokens == hf_tokens, (our_tokens, hf_tokens)
    print(
        f"{name:<28} {len(words):>9} words {our_tokens:>9} tokens | "
        f"tokviz {our_tokens / our_seconds:>11,.0f} tok/s | HF {hf_tokens / hf_seconds:>11,.0f} tok/s | "
        f"tokviz/HF = {hf_seconds / our_seconds:.2f}"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--mb", type=float, default=None, help="use only the first MB of the corpus")
    parser.add_argument("--repeats", type=int, default=3, help="alternating runs per library; the best counts")
    args = parser.parse_args()
    lines = read_corpus(args.mb)

    tokenizer = HfTokenizer(hf_models.BPE())
    tokenizer.pre_tokenizer = hf_pre_tokenizers.ByteLevel(add_prefix_space=False)
    trainer = hf_trainers.BpeTrainer(
        vocab_size=25_000, initial_alphabet=hf_pre_tokenizers.ByteLevel.alphabet(), show_progress=False
    )
    tokenizer.train_from_iterator(lines, trainer)
    section = json.loads(tokenizer.to_str())["model"]
    merges = [tuple(merge) for merge in section["merges"]]
    words = pre_tokens(lines, hf_pre_tokenizers.ByteLevel(add_prefix_space=False))
    print(f"corpus: {sum(map(len, lines)) / 1e6:.1f} M chars, {len(words)} byte-level pre-tokens, "
          f"{len(set(words))} distinct; BPE vocab {len(section['vocab'])}")
    vocab = section["vocab"]
    compare("BPE byte-level 25k", lambda: BPE.from_dict(section), lambda: hf_models.BPE(vocab, merges), words, args.repeats)
    compare(
        "BPE byte-level 25k, no cache",
        lambda: BPE.from_dict(section).with_options(cache_capacity=0),
        lambda: hf_models.BPE(vocab, merges, cache_capacity=0),
        words,
        args.repeats,
    )

    bert = HfTokenizer(hf_models.WordPiece(unk_token="[UNK]"))
    bert.pre_tokenizer = hf_pre_tokenizers.BertPreTokenizer()
    bert.train_from_iterator(
        lines, hf_trainers.WordPieceTrainer(vocab_size=25_000, special_tokens=["[UNK]"], show_progress=False)
    )
    wordpiece_vocab = bert.get_vocab()
    words = pre_tokens(lines, hf_pre_tokenizers.BertPreTokenizer())
    compare(
        "WordPiece 25k",
        lambda: WordPiece(wordpiece_vocab),
        lambda: hf_models.WordPiece(wordpiece_vocab, unk_token="[UNK]"),
        words,
        args.repeats,
    )
    compare(
        "WordLevel 25k",
        lambda: WordLevel(wordpiece_vocab, "[UNK]"),
        lambda: hf_models.WordLevel(wordpiece_vocab, unk_token="[UNK]"),
        words,
        args.repeats,
    )


if __name__ == "__main__":
    main()
