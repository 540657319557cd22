"""tokviz.patterns: Regex compiles once, names a bad pattern, and never hangs the app."""

from __future__ import annotations

import pickle

import pytest
import tokenizers
from tokenizers import pre_tokenizers as hf_pre_tokenizers

from tokviz import Regex, normalizers, patterns, pre_tokenizers
from tokviz.errors import PatternError, PatternTimeoutError, TokvizError


def test_find_matches_covers_the_text_with_matches_and_gaps():
    assert Regex(r"\d+").find_matches("ab12c") == [((0, 2), False), ((2, 4), True), ((4, 5), False)]
    assert Regex(r"\d+").find_matches("12") == [((0, 2), True)]
    assert Regex(r"\d+").find_matches("") == [((0, 0), False)]
    assert Regex("x").find_spans("axbx") == [(1, 2), (3, 4)]


def test_offsets_are_characters_not_bytes():
    # 'a가 짧' is 4 characters and 8 UTF-8 bytes.
    assert Regex(r"\S+").find_spans("a가 짧") == [(0, 2), (3, 4)]


def test_regex_is_a_hashable_value_that_pickles():
    assert Regex("a+") == Regex("a+")
    assert hash(Regex("a+")) == hash(Regex("a+"))
    assert pickle.loads(pickle.dumps(Regex("a+"))).find_spans("caa") == [(1, 3)]


@pytest.mark.parametrize("bad", ["(unclosed", "[a-", "a{2,1}", "*oops"])
def test_invalid_pattern_is_a_user_error_naming_the_pattern(bad):
    with pytest.raises(PatternError) as caught:
        Regex(bad)
    assert repr(bad) in str(caught.value)
    assert isinstance(caught.value, TokvizError) and isinstance(caught.value, ValueError)


def test_hf_rejects_the_same_invalid_pattern():
    with pytest.raises(Exception):
        tokenizers.Regex("(unclosed")


def test_non_text_pattern_is_a_user_error():
    with pytest.raises(PatternError):
        Regex(42)


def test_textbook_catastrophic_pattern_finishes():
    # The regex module defuses (a+)+$ itself: it answers (no match) instead of hanging.
    assert Regex(r"(a+)+$").find_spans("a" * 40 + "b") == []


def test_catastrophic_pattern_raises_a_timeout_error_at_the_default_limit():
    # (a|aa)+$ on 'a' * 40 + 'b' explores ~fib(40) paths: only the time limit stops it.
    assert patterns.PATTERN_TIMEOUT_SECONDS == 1.0
    with pytest.raises(PatternTimeoutError) as caught:
        Regex(r"(a|aa)+$").find_spans("a" * 40 + "b")
    assert "(a|aa)+$" in str(caught.value)
    assert isinstance(caught.value, PatternError)


@pytest.fixture
def short_timeout(monkeypatch):
    monkeypatch.setattr(patterns, "PATTERN_TIMEOUT_SECONDS", 0.05)


def test_timeout_applies_to_split_pre_tokenizer(short_timeout):
    splitter = pre_tokenizers.Split(Regex(r"(a|aa)+$"), "isolated")
    with pytest.raises(PatternTimeoutError):
        splitter.pre_tokenize_str("a" * 40 + "b")
    with pytest.raises(PatternTimeoutError):
        splitter.pre_tokenize_words("a" * 40 + "b")


def test_timeout_applies_to_replace_normalizer(short_timeout):
    replace = normalizers.Replace(Regex(r"(a|a)+$"), "x")
    with pytest.raises(PatternTimeoutError):
        replace.normalize_str("a" * 40 + "b")


def test_regex_gives_the_same_pieces_as_hf_split():
    text = "The year 2024, then 1999!"
    hf = hf_pre_tokenizers.Split(tokenizers.Regex(r"\d+|\p{P}"), "isolated").pre_tokenize_str(text)
    ours = pre_tokenizers.Split(Regex(r"\d+|\p{P}"), "isolated").pre_tokenize_str(text)
    assert ours == hf


def test_empty_matches_iterate_like_oniguruma():
    # Python's finditer would also report the empty match at 2 right after 'aa'.
    assert Regex("a*").find_spans("aab") == [(0, 2), (3, 3)]
    # After an empty match Oniguruma moves on one char; Python would first try 'a' there.
    assert Regex("a*?").find_spans("ab") == [(0, 0), (1, 1), (2, 2)]
    assert Regex("a*").find_spans("") == []


def test_caret_and_dollar_are_line_anchors_like_oniguruma():
    assert Regex("^").find_spans("a\nb") == [(0, 0), (2, 2)]
    assert Regex("$").find_spans("a\nb") == [(1, 1), (3, 3)]


EMPTY_MATCHING_PATTERNS = [r"a*", r"\b", r"(?=b)", r"x?", r"\s*", r"a|", r"|a", r"a*?", r"\B", r"^", r"$", r"^a", r"b$", r".+"]
TEXTS = ["aab", "ab ab", "", "bbb", " a  b ", "baaab a", "éa b", "a\nb"]


@pytest.mark.parametrize("pattern", EMPTY_MATCHING_PATTERNS)
def test_split_and_replace_with_empty_matching_patterns_match_hf(pattern):
    for text in TEXTS:
        for behavior in ("removed", "isolated", "merged_with_previous", "merged_with_next", "contiguous"):
            ours = pre_tokenizers.Split(Regex(pattern), behavior).pre_tokenize_str(text)
            theirs = hf_pre_tokenizers.Split(tokenizers.Regex(pattern), behavior).pre_tokenize_str(text)
            assert ours == theirs, (pattern, text, behavior)
        ours_text = normalizers.Replace(Regex(pattern), "-").normalize_str(text)
        theirs_text = tokenizers.normalizers.Replace(tokenizers.Regex(pattern), "-").normalize_str(text)
        assert ours_text == theirs_text, (pattern, text)


# ---------------------------------------------------------------------- re twins for any text
from hypothesis import given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

TWINNED = [" ?[^(\\s|[.,!?…。，、।۔،])]+", r"\s+(?!\S)|\s+|[^\s]+", r"[a-c]+|[^a-c\s]|x{1,3}", r"\S+"]
TWIN_ALPHABET = list("abcx .,!?…。，、\t\n\r\x0b\x0c\x1c\x1f\x85\xa0\u1680\u2000\u200a\u200b\u2028\u202f\u3000é中()|[]")


def test_the_white_space_items_are_regexs_whitespace():
    every_char = "".join(chr(code) for code in range(0x110000) if not 0xD800 <= code < 0xE000)
    assert patterns.re.findall(f"[{patterns._WHITE_SPACE}]", every_char) == patterns.regex.findall(r"\s", every_char)


def test_patterns_whose_sets_come_from_unicode_tables_have_no_twin():
    for pattern in [r"\p{L}+", r"\w+", r"\d", r"(?i)ab", r"[a[^b]]", r"\bx", "[\\s--[ ]]"]:
        assert patterns.text_twin(patterns.compile_pattern(pattern)) is None, pattern
    assert patterns.text_twin(patterns.compile_pattern(TWINNED[0])).pattern.startswith(" ?[^(\\t")  # (the nested class joined)


@settings(max_examples=200, deadline=None, derandomize=True)
@given(st.sampled_from(TWINNED), st.lists(st.sampled_from(TWIN_ALPHABET), max_size=30).map("".join))
def test_text_twins_find_what_their_patterns_find(pattern, text):
    compiled = patterns.compile_pattern(pattern)
    twin = patterns.text_twin(compiled)
    assert twin.findall(text) == compiled.findall(text)
    grouped = patterns.compile_pattern(f"({pattern})")
    assert patterns.text_twin(grouped).split(text) == grouped.split(text)
