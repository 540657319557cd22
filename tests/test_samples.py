from __future__ import annotations

import pytest

from tokviz.corpus import corpus_stats
from tokviz.samples import DEFAULT_SAMPLE, SAMPLES, load_sample


def test_default_sample_is_a_few_kilobytes_of_many_scripts() -> None:
    text = load_sample()
    assert text.startswith("The tokenizer is the first and last thing a language model sees.")
    stats = corpus_stats(text)
    assert 2_000 < stats.utf8_bytes < 20_000
    # English, Korean, Chinese, Japanese kana, Cyrillic, Arabic, Devanagari, code, digits, emoji.
    for sample_piece in ("토크나이저", "分词器", "ひらがな", "Привет", "مرحبا", "नमस्ते", "def count_pairs", "1,284", "👍🏽"):
        assert sample_piece in text
    # The same word precomposed and decomposed, for the normalizer demos.
    assert "café" in text and "cafe\u0301" in text


def test_unknown_sample_name_is_a_clear_error() -> None:
    with pytest.raises(KeyError, match="no built-in sample named"):
        load_sample("nope")
    assert DEFAULT_SAMPLE in SAMPLES
