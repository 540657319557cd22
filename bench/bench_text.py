"""Throughput of the text side on the 6.8 MB benchmark corpus, tokviz next to HF ``tokenizers``.

Times, in one run: ``pre_tokenize_words`` (tokviz's fast path used to count words when
training) and ``pre_tokenize_str`` (with offsets) for ByteLevel and Whitespace, and
``normalize_str`` for a few normalizers. HF has no words-only path, so its
``pre_tokenize_str`` is the peer for both. The corpus is processed line by line, the way
a trainer feeds it, and also as one string.

Run: ``python bench/bench_text.py`` (from the project root; needs ../shared/corpora).
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

import tokenizers  # noqa: E402
from tokenizers import normalizers as hf_normalizers  # noqa: E402
from tokenizers import pre_tokenizers as hf_pre_tokenizers  # noqa: E402

from tokviz import normalizers, pre_tokenizers  # noqa: E402

CORPUS_FILES = ("tinyshakespeare.txt", "grimm_tales.txt", "wikitext2_valid.txt", "wikitext2_test.txt", "big.txt")


def load_corpus() -> str:
    folder = ROOT.parent / "shared" / "corpora"
    return "".join((folder / name).read_text(encoding="utf-8-sig") for name in CORPUS_FILES)


def best_of(runs: int, fn) -> tuple[float, object]:
    best, result = float("inf"), None
    for _ in range(runs):
        start = time.perf_counter()
        result = fn()
        best = min(best, time.perf_counter() - start)
    return best, result


def row(label: str, seconds: float, megabytes: float, peer: float | None = None) -> None:
    ratio = f"  ({seconds / peer:5.2f}x HF time)" if peer else ""
    print(f"{label:58s} {seconds:7.3f} s  {megabytes / seconds:7.1f} MB/s{ratio}")


def main() -> None:
    text = load_corpus()
    lines = text.splitlines()
    megabytes = len(text.encode("utf-8")) / 1e6
    print(f"corpus: {megabytes:.2f} MB, {len(text):,} chars, {len(lines):,} lines\n")

    cases = [
        ("ByteLevel", pre_tokenizers.ByteLevel(), hf_pre_tokenizers.ByteLevel()),
        ("Whitespace", pre_tokenizers.Whitespace(), hf_pre_tokenizers.Whitespace()),
        ("BertPreTokenizer", pre_tokenizers.BertPreTokenizer(), hf_pre_tokenizers.BertPreTokenizer()),
        ("Metaspace", pre_tokenizers.Metaspace(), hf_pre_tokenizers.Metaspace()),
    ]
    for name, ours, theirs in cases:
        hf_time, hf_words = best_of(2, lambda: [w for line in lines for w, _ in theirs.pre_tokenize_str(line)])
        fast_time, fast_words = best_of(2, lambda: [w for line in lines for w in ours.pre_tokenize_words(line)])
        whole_time, whole_words = best_of(2, lambda: ours.pre_tokenize_words(text))
        assert fast_words == hf_words, f"{name}: words differ from HF"
        row(f"HF {name}.pre_tokenize_str, per line", hf_time, megabytes)
        row(f"tokviz {name}.pre_tokenize_words, per line", fast_time, megabytes, hf_time)
        row(f"tokviz {name}.pre_tokenize_words, whole text ({len(whole_words):,} words)", whole_time, megabytes, hf_time)
        if name in ("ByteLevel", "Whitespace"):
            sample = lines[: len(lines) // 10]
            sample_mb = len("\n".join(sample).encode("utf-8")) / 1e6
            slow_time, _ = best_of(1, lambda: [ours.pre_tokenize_str(line) for line in sample])
            hf_sample_time, _ = best_of(1, lambda: [theirs.pre_tokenize_str(line) for line in sample])
            row(f"tokviz {name}.pre_tokenize_str (offsets), 10% of lines", slow_time, sample_mb, hf_sample_time)
        print()

    normalizer_cases = [
        ("NFKC", normalizers.NFKC(), hf_normalizers.NFKC()),
        ("BertNormalizer", normalizers.BertNormalizer(), hf_normalizers.BertNormalizer()),
        ("Sequence(NFD, Lowercase, StripAccents)",
         normalizers.Sequence([normalizers.NFD(), normalizers.Lowercase(), normalizers.StripAccents()]),
         hf_normalizers.Sequence([hf_normalizers.NFD(), hf_normalizers.Lowercase(), hf_normalizers.StripAccents()])),
    ]
    for name, ours, theirs in normalizer_cases:
        hf_time, hf_text = best_of(2, lambda: theirs.normalize_str(text))
        our_time, our_text = best_of(2, lambda: ours.normalize_str(text))
        assert our_text == hf_text, f"{name}: text differs from HF"
        row(f"HF {name}.normalize_str, whole text", hf_time, megabytes)
        row(f"tokviz {name}.normalize_str, whole text", our_time, megabytes, hf_time)
    print(f"\ntokenizers {tokenizers.__version__}")


if __name__ == "__main__":
    main()
