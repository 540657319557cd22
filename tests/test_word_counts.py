"""count_words: normalize, pre-tokenize, count; the trainers' only view of the corpus."""

from __future__ import annotations

from collections import Counter

import pytest
from tokenizers import normalizers as hf_normalizers
from tokenizers import pre_tokenizers as hf_pre_tokenizers

from tokviz import normalizers, pre_tokenizers
from tokviz.errors import EmptyCorpusError
from tokviz.history import WordCountSummary
from tokviz.word_counts import count_words, summarize_word_counts


def test_without_pre_tokenizer_each_text_is_one_word():
    assert count_words(["a b", "a b", "c"]) == Counter({"a b": 2, "c": 1})


def test_whitespace_words_and_first_seen_order():
    counts = count_words(["the cat sat", "the hat"], pre_tokenizer=pre_tokenizers.Whitespace())
    assert counts == {"the": 2, "cat": 1, "sat": 1, "hat": 1}
    assert list(counts) == ["the", "cat", "sat", "hat"]  # the first_seen tie-break relies on it


def test_byte_level_words_are_mapped_symbols(course_corpus):
    counts = count_words(course_corpus, pre_tokenizer=pre_tokenizers.ByteLevel(add_prefix_space=False))
    assert counts["This"] == 3
    assert counts["Ġis"] == 2
    assert counts["Ġtokenization"] == 1
    assert sum(counts.values()) == 36


def test_normalizer_runs_before_pre_tokenizer():
    counts = count_words(["Hello HELLO hello"], normalizer=normalizers.Lowercase(), pre_tokenizer=pre_tokenizers.Whitespace())
    assert counts == {"hello": 3}


def test_hf_components_work_through_the_slow_path():
    counts = count_words(["Héllo, world"], normalizer=hf_normalizers.NFD(), pre_tokenizer=hf_pre_tokenizers.Whitespace())
    assert counts == {"He\u0301llo": 1, ",": 1, "world": 1}


@pytest.mark.parametrize("texts", [[], [""], ["", "  \n"]])
def test_empty_corpus_raises_a_clear_error(texts):
    with pytest.raises(EmptyCorpusError, match="empty"):
        count_words(texts, pre_tokenizer=pre_tokenizers.Whitespace())


def test_corpus_empty_after_normalization_says_so():
    with pytest.raises(EmptyCorpusError, match="after normalization"):
        count_words(["???"], normalizer=normalizers.Replace("?", ""), pre_tokenizer=pre_tokenizers.Whitespace())


def test_progress_reaches_the_total():
    calls = []
    count_words(["a b"] * 250, pre_tokenizer=pre_tokenizers.Whitespace(), progress=lambda *call: calls.append(call))
    assert calls[0] == ("count words", 2, 250)
    assert calls[-1] == ("count words", 250, 250)
    assert len(calls) >= 100


def test_progress_without_length_reports_total_zero_then_done():
    calls = []
    count_words((text for text in ["a"] * 1500), progress=lambda *call: calls.append(call))
    assert calls == [("count words", 1000, 0), ("count words", 1500, 1500)]


def test_same_words_as_hf_on_shared_lines(shared_corpus_lines):
    hf = hf_pre_tokenizers.ByteLevel(add_prefix_space=False)
    expected = Counter(word for line in shared_corpus_lines for word, _ in hf.pre_tokenize_str(line))
    assert count_words(shared_corpus_lines, pre_tokenizer=pre_tokenizers.ByteLevel(add_prefix_space=False)) == expected


def test_summary():
    assert summarize_word_counts({"ab": 2, "b": 1, "c": 5}, top=2) == WordCountSummary(
        total_words=8, unique_words=3, total_characters=10, distinct_characters=3, top_words=(("c", 5), ("ab", 2))
    )


@pytest.mark.parametrize(
    "pre_tokenizer",
    [
        pre_tokenizers.ByteLevel(add_prefix_space=False),
        pre_tokenizers.ByteLevel(add_prefix_space=True),
        pre_tokenizers.BertPreTokenizer(),
    ],
    ids=["byte_level", "byte_level_prefix", "bert"],
)
def test_two_level_counting_gives_the_same_words_in_the_same_order(pre_tokenizer, shared_corpus_lines, hard_strings):
    texts = list(hard_strings) + shared_corpus_lines
    direct: Counter[str] = Counter()
    for text in texts:
        direct.update(pre_tokenizer.pre_tokenize_words(text))
    direct.pop("", None)
    counted = count_words(texts, pre_tokenizer=pre_tokenizer)
    assert list(counted.items()) == list(direct.items())


def test_two_level_counting_follows_the_pre_tokenizers_declaration():
    from tokviz.word_counts import _two_level_counter

    class Bert(pre_tokenizers.BertPreTokenizer):  # declares what its base does
        pass

    class Dashes(pre_tokenizers.BertPreTokenizer):  # pre-tokenizes its own way: no declaration
        def pre_tokenize(self, pretokenized):
            pretokenized.split(lambda _, piece: piece.split("-", "removed"))

    assert _two_level_counter(Bert()) is not None and _two_level_counter(pre_tokenizers.ByteLevel()) is not None
    assert [_two_level_counter(p) for p in (Dashes(), pre_tokenizers.Whitespace(), pre_tokenizers.ByteLevel(use_regex=False))] == [None] * 3
    assert count_words(["a-b c-a"], pre_tokenizer=Dashes()) == {"a": 2, "b c": 1}


def test_batches_of_strings_count_like_the_flat_texts():
    flat = ["the cat sat", "the hat", "a cat"]
    mixed = [flat[:2], iter(flat[2:])]  # the HF course's get_training_corpus() yields lists
    assert count_words(mixed, pre_tokenizer=pre_tokenizers.Whitespace()) == {"the": 2, "cat": 2, "sat": 1, "hat": 1, "a": 1}
    assert count_words((t for t in ["x y"]), pre_tokenizer=pre_tokenizers.Whitespace()) == {"x": 1, "y": 1}
    assert list(count_words([("b a",), "a", ["c"]], pre_tokenizer=pre_tokenizers.Whitespace())) == ["b", "a", "c"]


@pytest.mark.parametrize(("texts", "message"), [([3], "int 3, which is not iterable"), ([["a", 3]], "must hold strings; got int 3"), ([[["a"]]], "got list")])
def test_items_that_are_not_text_raise_type_error_as_hf(texts, message):
    with pytest.raises(TypeError, match=message):
        count_words(texts)
