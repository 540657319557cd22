"""tokviz.normalized: alignments through every edit, slices and splits, at parity with HF.

HF's Python ``NormalizedString`` does not expose its alignments, so the parity helper
reads them the way a user would: run the edit inside an HF ``PreTokenizedString``, split
the result into single characters, and ask ``get_splits()`` for each char's original span.
"""

from __future__ import annotations

import unicodedata

import pytest
import tokenizers
from hypothesis import given, settings
from hypothesis import strategies as st

from tokviz import NormalizedString, PreTokenizedString, Regex
from tokviz.models.base import Token
from tokviz.normalized import SPLIT_BEHAVIORS, Split, apply_behavior, find_matches, is_whitespace, normalize_behavior
from tokviz.errors import TokvizError

# ---------------------------------------------------------------- helpers

# Characters assigned since Unicode 3.2: HF's Rust tables and Python's agree on them
# (newer characters may be classified differently by different Unicode versions).
# U+166D changed category (Po -> So) in Unicode 12; HF still calls it punctuation.
STABLE_CHARS = [
    chr(code)
    for code in range(0x30000)
    if not 0xD800 <= code < 0xE000 and unicodedata.ucd_3_2_0.category(chr(code)) != "Cn" and code != 0x166D
]
TRICKY_CHARS = list(" \t\n\r\x00\x0b\u3000\u00a0'-.,!?_aAzé1½①ﬁİΣσ가각\u1100\u1161\u11a8\u0301\u0316\u0328中文ー") + ["e\u0301"]
unicode_text = st.lists(st.one_of(st.sampled_from(TRICKY_CHARS), st.sampled_from(STABLE_CHARS)), max_size=24).map("".join)
SETTINGS = settings(max_examples=100, deadline=None, derandomize=True)


def hf_alignments(text: str, edit) -> list[tuple[str, tuple[int, int]]]:
    """Each normalized char of HF's ``edit(NormalizedString(text))`` with its original span."""
    pretokenized = tokenizers.PreTokenizedString(text)
    pretokenized.normalize(edit)
    pretokenized.split(lambda _, piece: piece.split(tokenizers.Regex(r"[\s\S]"), "isolated"))
    return [(char, offsets) for char, offsets, _ in pretokenized.get_splits()]


def our_alignments(text: str, edit) -> list[tuple[str, tuple[int, int]]]:
    normalized = NormalizedString(text)
    edit(normalized)
    assert len(normalized.alignments) == len(normalized.normalized)
    return list(zip(normalized.normalized, normalized.alignments))


# ---------------------------------------------------------------- the transform primitive


def test_transform_replace_insert_remove():
    ns = NormalizedString("abc")
    # 'a' removed up front, 'b' -> 'x', 'y' inserted after it, 'c' kept.
    ns.transform([("x", 0), ("y", 1), ("c", 0)], initial_offset=1)
    assert ns.normalized == "xyc"
    assert ns.alignments == [(1, 2), (1, 2), (2, 3)]
    assert ns.original == "abc"


def test_transform_negative_change_removes_following_chars():
    ns = NormalizedString("abcd")
    ns.transform([("a", -2), ("d", 0)])
    assert (ns.normalized, ns.alignments) == ("ad", [(0, 1), (3, 4)])


def test_transform_insert_at_start_is_aligned_to_the_empty_start():
    ns = NormalizedString("ab")
    ns.transform([("^", 1), ("a", 0), ("b", 0)])
    assert ns.alignments == [(0, 0), (0, 1), (1, 2)]


def test_worked_example_lowercase_dotted_i_gives_two_chars_aligned_to_one():
    ns = NormalizedString("İx").lowercase()
    assert ns.normalized == "i\u0307x"
    assert ns.alignments == [(0, 1), (0, 1), (1, 2)]


def test_worked_example_nfkc_ligature():
    ns = NormalizedString("ﬁne").nfkc()
    assert (ns.normalized, ns.alignments) == ("fine", [(0, 1), (0, 1), (1, 2), (2, 3)])


def test_worked_example_nfc_absorbs_marks():
    ns = NormalizedString("e\u0301a").nfc()
    assert (ns.normalized, ns.alignments) == ("éa", [(0, 1), (2, 3)])


def test_filter_map_prepend_append_clear():
    ns = NormalizedString("a--b")
    ns.filter(lambda c: c != "-").map(str.upper).prepend("<").append(">")
    assert ns.normalized == "<AB>"
    assert ns.alignments == [(0, 1), (0, 1), (3, 4), (3, 4)]
    assert ns.clear() == 4
    assert (ns.normalized, ns.alignments, ns.is_empty(), len(ns)) == ("", [], True, 0)


def test_prepend_does_nothing_on_empty_text_but_append_does_like_hf():
    ns = NormalizedString("").prepend("x")
    assert ns.normalized == ""
    ns.append("y")
    assert (ns.normalized, ns.alignments) == ("y", [(0, 0)])


def test_strip_keeps_alignment_of_the_middle():
    ns = NormalizedString("  hi \u3000").strip()
    assert (ns.normalized, ns.alignments) == ("hi", [(2, 3), (3, 4)])
    assert NormalizedString("   ").strip().normalized == ""
    assert NormalizedString(" a ").lstrip().normalized == "a "
    assert NormalizedString(" a ").rstrip().normalized == " a"


def test_strip_does_not_treat_information_separators_as_whitespace():
    # Python's str.isspace() says yes to U+001F; Unicode White_Space (and HF) say no.
    assert NormalizedString("\x1fa\x1f").strip().normalized == "\x1fa\x1f"


def test_replace_new_chars_take_the_last_matched_chars_alignment():
    ns = NormalizedString("a  b").replace("  ", "_")
    assert (ns.normalized, ns.alignments) == ("a_b", [(0, 1), (2, 3), (3, 4)])
    ns = NormalizedString("aXbXc").replace(Regex("X"), "YY")
    assert ns.normalized == "aYYbYYc"
    assert ns.alignments == [(0, 1), (1, 2), (1, 2), (2, 3), (3, 4), (3, 4), (4, 5)]


# ---------------------------------------------------------------- parity of every edit

EDITS = {
    "nfd": lambda ns: ns.nfd(),
    "nfc": lambda ns: ns.nfc(),
    "nfkd": lambda ns: ns.nfkd(),
    "nfkc": lambda ns: ns.nfkc(),
    "lowercase": lambda ns: ns.lowercase(),
    "filter": lambda ns: ns.filter(lambda c: c not in "aeiou \u0301"),
    "map": lambda ns: ns.map(lambda c: "_" if c == " " else c),
    "prepend": lambda ns: ns.prepend("▁▁"),
    "append": lambda ns: ns.append("</w>"),
    "replace_literal": lambda ns: ns.replace(" ", "▁"),
    "replace_removing": lambda ns: ns.replace("a", ""),
    "strip": lambda ns: ns.strip(),
    "lstrip": lambda ns: ns.lstrip(),
    "rstrip": lambda ns: ns.rstrip(),
    "clear": lambda ns: ns.clear(),
}


def _hf_edit(name):
    regexless = {
        "replace_literal": lambda ns: ns.replace(" ", "▁"),
        "replace_removing": lambda ns: ns.replace("a", ""),
    }
    return regexless.get(name, EDITS[name])


PARITY_STRINGS = [
    "",
    "Héllò hôw are ü?",
    "e\u0301le\u0300ve",
    "a\u0316\u0301\u0300 \u00e1\u0328 e\u0301\u0301",
    "가각 \u1100\u1161\u11a8 ﬁ ① ㎞ Ａｂｃ",
    "  leading and trailing \u3000",
    "ΟΔΟΣ İstanbul ß",
    "👩‍👩‍👧‍👦 👍🏽",
    "banana",
]


@pytest.mark.parametrize("name", sorted(EDITS))
def test_every_edit_has_hf_alignments_on_hard_strings(name, hard_strings):
    for text in [*hard_strings, *PARITY_STRINGS]:
        assert our_alignments(text, EDITS[name]) == hf_alignments(text, _hf_edit(name)), (name, text)


@pytest.mark.parametrize("name", sorted(EDITS))
@SETTINGS
@given(text=unicode_text)
def test_every_edit_has_hf_alignments_on_generated_strings(name, text):
    assert our_alignments(text, EDITS[name]) == hf_alignments(text, _hf_edit(name))


@SETTINGS
@given(text=unicode_text, form=st.sampled_from(["NFC", "NFD", "NFKC", "NFKD"]))
def test_unicode_forms_give_python_unicodedata_text(text, form):
    ns = NormalizedString(text)
    getattr(ns, form.lower())()
    assert ns.normalized == unicodedata.normalize(form, text)


def test_replace_with_regex_matches_hf():
    for text in ["a  b\t\tc", "  x", "y  "]:
        ours = our_alignments(text, lambda ns: ns.replace(Regex(r"\s+"), "_"))
        theirs = hf_alignments(text, lambda ns: ns.replace(tokenizers.Regex(r"\s+"), "_"))
        assert ours == theirs


# ---------------------------------------------------------------- offsets, slices


def test_convert_offsets_hf_rules():
    ns = NormalizedString("a b").replace(" ", "__")
    assert ns.normalized == "a__b"
    assert ns.convert_offsets_to_original(1, 3) == (1, 2)  # inserted chars map to the space
    assert ns.convert_offsets_to_original(0, 4) == (0, 3)
    assert ns.convert_offsets_to_original(2, 2) == (2, 2)  # empty range maps to itself
    assert ns.convert_offsets_to_original(3, 1) is None
    assert ns.convert_offsets_to_original(0, 9) is None


def test_slice_keeps_alignment_and_original_part():
    ns = NormalizedString("Héllo wörld").nfd()
    piece = ns.slice(7, 13)
    assert piece.normalized == "wo\u0308rld"
    assert piece.original == "wörld"
    assert piece.offsets_original() == (6, 11)
    assert piece.alignments[:3] == [(6, 7), (7, 8), (7, 8)]
    # Slicing a slice stays absolute.
    assert piece.slice(1, 3).offsets_original() == (7, 8)
    assert ns.slice(5, 99) is None


# ---------------------------------------------------------------- split behaviors

COUNTDOWN = {
    "removed": ["the", "final", "countdown"],
    "isolated": ["the", "-", "final", "-", "-", "countdown"],
    "merged_with_previous": ["the-", "final-", "-", "countdown"],
    "merged_with_next": ["the", "-final", "-", "-countdown"],
    "contiguous": ["the", "-", "final", "--", "countdown"],
}


@pytest.mark.parametrize("behavior", SPLIT_BEHAVIORS)
def test_split_behaviors_on_the_hf_docs_example(behavior):
    ours = [piece.normalized for piece in NormalizedString("the-final--countdown").split("-", behavior)]
    theirs = [piece.normalized for piece in tokenizers.NormalizedString("the-final--countdown").split("-", behavior)]
    assert ours == COUNTDOWN[behavior] == theirs


def test_behavior_names_accept_hf_spellings_and_reject_others():
    assert normalize_behavior("MergedWithNext") == "merged_with_next"
    assert normalize_behavior("contiguous") == "contiguous"
    with pytest.raises(TokvizError):
        normalize_behavior("merge")
    with pytest.raises(TokvizError):
        apply_behavior([], "nope")


def test_find_matches_literal_callable_regex():
    assert find_matches("ab", "xabab") == [((0, 1), False), ((1, 3), True), ((3, 5), True)]
    assert find_matches("", "xy") == [((0, 2), False)]
    assert find_matches(str.isdigit, "a12") == [((0, 1), False), ((1, 2), True), ((2, 3), True)]
    assert find_matches(Regex("b+"), "abbc") == [((0, 1), False), ((1, 3), True), ((3, 4), False)]
    # Long texts take the C-level path for predicates: same answer.
    long_text = "ab1 " * 100
    expected = [((0, 2), False), ((2, 3), True)]
    for i in range(1, 100):
        expected += [((4 * i - 1, 4 * i + 2), False), ((4 * i + 2, 4 * i + 3), True)]
    assert find_matches(str.isdigit, long_text) == expected + [((399, 400), False)]


def _hf_split(text, pattern, behavior, normalize=None):
    pretokenized = tokenizers.PreTokenizedString(text)
    if normalize:
        pretokenized.normalize(normalize)
    pretokenized.split(lambda _, piece: piece.split(pattern, behavior))
    return [(word, offsets) for word, offsets, _ in pretokenized.get_splits()]


def _our_split(text, pattern, behavior, normalize=None):
    pretokenized = PreTokenizedString(text)
    if normalize:
        pretokenized.normalize(normalize)
    pretokenized.split(lambda _, piece: piece.split(pattern, behavior))
    return [(word, offsets) for word, offsets, _ in pretokenized.get_splits()]


@pytest.mark.parametrize("behavior", SPLIT_BEHAVIORS)
def test_split_parity_with_hf_after_a_normalization(behavior, hard_strings):
    for text in [*hard_strings, *PARITY_STRINGS]:
        assert _our_split(text, " ", behavior, lambda ns: ns.nfkd()) == _hf_split(text, " ", behavior, lambda ns: ns.nfkd())
        assert _our_split(text, Regex(r"\p{P}+|\d"), behavior) == _hf_split(text, tokenizers.Regex(r"\p{P}+|\d"), behavior)
        # HF's Python API takes no callables: a char predicate must split like the class it tests.
        assert _our_split(text, is_whitespace, behavior) == _hf_split(text, tokenizers.Regex(r"\s"), behavior)


@SETTINGS
@given(text=unicode_text, behavior=st.sampled_from(SPLIT_BEHAVIORS))
def test_split_parity_with_hf_on_generated_strings(text, behavior):
    assert _our_split(text, Regex(r"\s+|[aeé]"), behavior, lambda ns: ns.nfd()) == _hf_split(
        text, tokenizers.Regex(r"\s+|[aeé]"), behavior, lambda ns: ns.nfd()
    )


# ---------------------------------------------------------------- PreTokenizedString


def test_pre_tokenized_string_split_normalize_tokenize_get_splits():
    pretokenized = PreTokenizedString("Hello wörld")
    pretokenized.split(lambda _, piece: piece.split(" ", "removed"))
    pretokenized.normalize(lambda piece: piece.nfd().prepend("▁"))
    assert pretokenized.get_splits() == [("▁Hello", (0, 5), None), ("▁wo\u0308rld", (6, 11), None)]
    assert pretokenized.get_splits("normalized") == [("▁Hello", (0, 6), None), ("▁wo\u0308rld", (6, 13), None)]
    pretokenized.tokenize(lambda piece: [Token(0, piece.normalized, (0, len(piece)))])
    assert pretokenized.splits[0] == Split(pretokenized.splits[0].normalized, [Token(0, "▁Hello", (0, 6))])
    # Tokenized pieces are never split or normalized again.
    pretokenized.split(lambda _, piece: [])
    assert len(pretokenized.splits) == 2


def test_pre_tokenized_string_drops_empty_pieces_and_matches_hf():
    ours = PreTokenizedString("a  b ")
    ours.split(lambda _, piece: piece.split(" ", "isolated"))
    theirs = tokenizers.PreTokenizedString("a  b ")
    theirs.split(lambda _, piece: piece.split(" ", "isolated"))
    assert [(w, o) for w, o, _ in ours.get_splits()] == [(w, o) for w, o, _ in theirs.get_splits()]


def test_pre_tokenized_string_from_a_normalized_string():
    normalized = NormalizedString("ABC").lowercase()
    assert PreTokenizedString(normalized).get_splits() == [("abc", (0, 3), None)]
    with pytest.raises(TypeError):
        PreTokenizedString(3)


@SETTINGS
@given(text=unicode_text)
def test_offsets_slice_out_the_exact_original_chars(text):
    # With no normalization, every piece is exactly the original text at its offsets.
    pretokenized = PreTokenizedString(text)
    pretokenized.split(lambda _, piece: piece.split(Regex(r"\w+|\s+"), "isolated"))
    pieces = pretokenized.get_splits()
    for word, (start, end), _ in pieces:
        assert 0 <= start <= end <= len(text)
        assert text[start:end] == word
    assert "".join(word for word, _, _ in pieces) == text


def _replace_per_match(normalized: NormalizedString, pattern, content: str) -> NormalizedString:
    """HF's literal algorithm, one ``transform_range`` per match (quadratic): the oracle for
    :meth:`NormalizedString.replace`."""
    shift = 0
    for (start, end), is_match in find_matches(pattern, normalized.normalized):
        if is_match:
            start, end = start + shift, end + shift
            normalized.transform_range(start, end, ((char, 1) for char in content), end - start)
            shift += len(content) - (end - start)
    return normalized


@settings(max_examples=300, deadline=None, derandomize=True)
@given(
    text=st.text(alphabet="ab \t\u00e9x", max_size=30),
    pattern=st.sampled_from([" ", "a", "ab", "x*", r"\s+", "^", "$", r"\b"]),
    content=st.sampled_from(["", "_", "▁▁", "Z"]),
    use_regex=st.booleans(),
)
def test_one_pass_replace_equals_hf_per_match_transform(text, pattern, content, use_regex):
    compiled = Regex(pattern) if use_regex or len(pattern) != 1 else pattern
    fast = NormalizedString(text).replace(compiled, content)
    oracle = _replace_per_match(NormalizedString(text), compiled, content)
    assert (fast.normalized, fast.alignments) == (oracle.normalized, oracle.alignments)
