"""tokviz.engine.words: a piece split into words as the pre-tokenizer's steps declare them
(worked examples; tests/engine/test_cut.py compares whole pipelines with HF)."""

from __future__ import annotations

from tokviz import Regex, models, pre_tokenizers
from tokviz.engine.plan import build_plan
from tokviz.engine.words import _byte_level_split, _cut_by_words, _long_words_cut, split_kind


def test_each_step_says_how_it_splits_plain_strings() -> None:
    steps = {
        "Whitespace": pre_tokenizers.Whitespace(), "WhitespaceSplit": pre_tokenizers.WhitespaceSplit(),
        "BertPreTokenizer": pre_tokenizers.BertPreTokenizer(), "Metaspace": pre_tokenizers.Metaspace(),
        "ByteLevel": pre_tokenizers.ByteLevel(), "Digits": pre_tokenizers.Digits(), "Split": pre_tokenizers.Split(Regex("a"), "isolated"),
        "Punctuation": pre_tokenizers.Punctuation(),  # (no kind: its declared word list or its cut_spans serve)
    }
    assert {name: split_kind(step) for name, step in steps.items()} == {
        "Whitespace": "words", "WhitespaceSplit": "words", "BertPreTokenizer": "words", "Metaspace": "metaspace",
        "ByteLevel": "byte_level", "Digits": "digits", "Split": "regex", "Punctuation": None,
    }


def test_later_steps_cut_each_word_of_the_first_and_keep_its_starts() -> None:
    steps = pre_tokenizers.Sequence(
        [pre_tokenizers.WhitespaceSplit(), pre_tokenizers.Punctuation("merged_with_next"), pre_tokenizers.Digits(True)]
    ).steps()
    cut = _cut_by_words(steps)
    assert cut("it's 42,x  ok!") == (["it", "'s", "4", "2", ",x", "ok", "!"], [0, 2, 5, 6, 7, 11, 13])
    assert cut("it's") == (["it", "'s"], [0, 2])  # (the word's pieces from its cache)


def test_a_step_after_byte_level_cuts_byte_symbols_and_a_cut_inside_a_char_is_kept_whole() -> None:
    falcon = (pre_tokenizers.Punctuation("contiguous"), pre_tokenizers.ByteLevel(False), pre_tokenizers.Digits())
    words = _byte_level_split(falcon)[1]
    found = words("ü½ a1")
    # ü's bytes are the symbols 'Ã¼', whose '¼' Digits cuts off as HF does: the word holds its pieces.
    assert found == ["ü", "½", " a", "1"]
    assert [getattr(word, "pieces", None) for word in found] == [("Ã", "¼"), ("Â", "½"), None, None]


def test_long_bpe_words_are_cut_where_the_model_never_merges() -> None:
    model = models.BPE({"a": 0, "b": 1, "▁": 2, "▁a": 3, "1": 4}, [("▁", "a")])
    plan = build_plan(None, pre_tokenizers.Digits(True), model)
    pieces, starts, word_of, again = _long_words_cut(plan, ["▁ab" * 12, "1"], None)
    assert (pieces, starts, word_of, again) == (["▁ab"] * 12 + ["1"], None, [0] * 12 + [1], [])
    assert _long_words_cut(plan, ["▁ab", "1"], [0, 3]) is None  # (no word cut)
    assert _long_words_cut(plan, ["▁ab" * 12, "1"], None)[3] == [0]  # (met again: its entry gets cached)
    plan.words["▁ab" * 12] = ((3,) * 12, ("▁a",) * 12, (), ())  # (cached whole: it stays whole)
    assert _long_words_cut(plan, ["▁ab" * 12, "1"], None) is None
