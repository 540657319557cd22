"""tokviz.pre_tokenizers: same words, same offsets, same tokenizer.json as HF ``tokenizers``."""

from __future__ import annotations

import json
import unicodedata

import pytest
import tokenizers
from hypothesis import given, settings
from hypothesis import strategies as st
from tokenizers import normalizers as hf_normalizers
from tokenizers import pre_tokenizers as hf

from tokviz import PreTokenizedString, Regex, normalizers, pre_tokenizers
from tokviz.byte_level import BYTES_TO_UNICODE
from tokviz.errors import SerializationError, TokvizError

# Characters assigned since Unicode 3.2: HF's Rust tables and Python's agree on them.
# U+166D changed category (Po -> So) in Unicode 12; HF still calls it punctuation.
STABLE_CHARS = [
    chr(code)
    for code in range(0x30000)
    if not 0xD800 <= code < 0xE000 and unicodedata.ucd_3_2_0.category(chr(code)) != "Cn" and code != 0x166D
]
TRICKY_CHARS = list("  \t\n\r\x00\x0b\x1c\x85\ue000\u3000\u00a0\u2581'-.,!?$_aAzé1½①ﬁ가ΣどこでYes。ー中\u0301") + ["'s", "'ll", "▁▁"]
unicode_text = st.lists(st.one_of(st.sampled_from(TRICKY_CHARS), st.sampled_from(STABLE_CHARS)), max_size=24).map("".join)
SETTINGS = settings(max_examples=60, deadline=None, derandomize=True)

BEHAVIORS = ("removed", "isolated", "merged_with_previous", "merged_with_next", "contiguous")

#: (tokviz pre-tokenizer, the same HF pre-tokenizer): every pre-tokenizer with its main options.
PAIRS = {
    "Whitespace": (pre_tokenizers.Whitespace(), hf.Whitespace()),
    "WhitespaceSplit": (pre_tokenizers.WhitespaceSplit(), hf.WhitespaceSplit()),
    "BertPreTokenizer": (pre_tokenizers.BertPreTokenizer(), hf.BertPreTokenizer()),
    "ByteLevel": (pre_tokenizers.ByteLevel(), hf.ByteLevel()),
    "ByteLevel(no prefix)": (pre_tokenizers.ByteLevel(add_prefix_space=False), hf.ByteLevel(add_prefix_space=False)),
    "ByteLevel(no regex)": (
        pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=False),
        hf.ByteLevel(add_prefix_space=False, use_regex=False),
    ),
    "Metaspace": (pre_tokenizers.Metaspace(), hf.Metaspace()),
    "Metaspace(first)": (pre_tokenizers.Metaspace(prepend_scheme="first"), hf.Metaspace(prepend_scheme="first")),
    "Metaspace(never, no split)": (
        pre_tokenizers.Metaspace(prepend_scheme="never", split=False),
        hf.Metaspace(prepend_scheme="never", split=False),
    ),
    "Metaspace(_)": (pre_tokenizers.Metaspace(replacement="_"), hf.Metaspace(replacement="_")),
    "Digits": (pre_tokenizers.Digits(), hf.Digits()),
    "Digits(individual)": (pre_tokenizers.Digits(individual_digits=True), hf.Digits(individual_digits=True)),
    "CharDelimiterSplit": (pre_tokenizers.CharDelimiterSplit("e"), hf.CharDelimiterSplit("e")),
    "FixedLength": (pre_tokenizers.FixedLength(), hf.FixedLength()),
    "Sequence(WhitespaceSplit, FixedLength(2))": (
        pre_tokenizers.Sequence([pre_tokenizers.WhitespaceSplit(), pre_tokenizers.FixedLength(2)]),
        hf.Sequence([hf.WhitespaceSplit(), hf.FixedLength(2)]),
    ),
    "UnicodeScripts": (pre_tokenizers.UnicodeScripts(), hf.UnicodeScripts()),
    "Sequence(WhitespaceSplit, Metaspace first)": (
        pre_tokenizers.Sequence([pre_tokenizers.WhitespaceSplit(), pre_tokenizers.Metaspace(prepend_scheme="first")]),
        hf.Sequence([hf.WhitespaceSplit(), hf.Metaspace(prepend_scheme="first")]),
    ),
    "Sequence(Punctuation, Digits, ByteLevel)": (
        pre_tokenizers.Sequence([pre_tokenizers.Punctuation(), pre_tokenizers.Digits(True), pre_tokenizers.ByteLevel()]),
        hf.Sequence([hf.Punctuation(), hf.Digits(True), hf.ByteLevel()]),
    ),
    "Sequence(UnicodeScripts, Whitespace)": (
        pre_tokenizers.Sequence([pre_tokenizers.UnicodeScripts(), pre_tokenizers.Whitespace()]),
        hf.Sequence([hf.UnicodeScripts(), hf.Whitespace()]),
    ),
}
for _behavior in BEHAVIORS:
    PAIRS[f"Punctuation({_behavior})"] = (pre_tokenizers.Punctuation(_behavior), hf.Punctuation(_behavior))
    PAIRS[f"Split(' ', {_behavior})"] = (pre_tokenizers.Split(" ", _behavior), hf.Split(" ", _behavior))
    PAIRS[f"Split(regex, {_behavior})"] = (
        pre_tokenizers.Split(Regex(r"[aeiou]+|\d|\p{P}"), _behavior),
        hf.Split(tokenizers.Regex(r"[aeiou]+|\d|\p{P}"), _behavior),
    )
    PAIRS[f"Split(regex, {_behavior}, invert)"] = (
        pre_tokenizers.Split(Regex(r"\s+"), _behavior, invert=True),
        hf.Split(tokenizers.Regex(r"\s+"), _behavior, invert=True),
    )

#: A normalizer in front changes offsets: the pre-tokens must still point at the original.
NORMALIZER_PAIRS = {
    "Bert": (normalizers.BertNormalizer(), hf_normalizers.BertNormalizer()),
    "NFKD+StripAccents": (
        normalizers.Sequence([normalizers.NFKD(), normalizers.StripAccents()]),
        hf_normalizers.Sequence([hf_normalizers.NFKD(), hf_normalizers.StripAccents()]),
    ),
    "Nmt+NFKC+Replace": (
        normalizers.Sequence([normalizers.Nmt(), normalizers.NFKC(), normalizers.Replace(Regex(" {2,}"), " ")]),
        hf_normalizers.Sequence([hf_normalizers.Nmt(), hf_normalizers.NFKC(), hf_normalizers.Replace(tokenizers.Regex(" {2,}"), " ")]),
    ),
}


def hf_pre_tokenize(pre_tokenizer, text: str, normalizer=None):
    pretokenized = tokenizers.PreTokenizedString(text)
    if normalizer is not None:
        pretokenized.normalize(normalizer.normalize)
    pre_tokenizer.pre_tokenize(pretokenized)
    return [(word, offsets) for word, offsets, _ in pretokenized.get_splits()]


def our_pre_tokenize(pre_tokenizer, text: str, normalizer=None):
    pretokenized = PreTokenizedString(text)
    if normalizer is not None:
        pretokenized.normalize(normalizer.normalize)
    pre_tokenizer.pre_tokenize(pretokenized)
    return [(word, offsets) for word, offsets, _ in pretokenized.get_splits()]


def assert_parity(name: str, text: str) -> None:
    ours, theirs = PAIRS[name]
    expected = theirs.pre_tokenize_str(text)
    assert ours.pre_tokenize_str(text) == expected, (name, text)
    assert ours.pre_tokenize_words(text) == [word for word, _ in expected], (name, text)


# ---------------------------------------------------------------- worked examples from the seeds


def test_byte_level_seed_example():
    assert pre_tokenizers.ByteLevel(add_prefix_space=False).pre_tokenize_str("Hello, how are  you?") == [
        ("Hello", (0, 5)),
        (",", (5, 6)),
        ("Ġhow", (6, 10)),
        ("Ġare", (10, 14)),
        ("Ġ", (14, 15)),
        ("Ġyou", (15, 19)),
        ("?", (19, 20)),
    ]


def test_metaspace_seed_example():
    assert pre_tokenizers.Metaspace().pre_tokenize_str("Hello, how are  you?") == [
        ("▁Hello,", (0, 6)),
        ("▁how", (6, 10)),
        ("▁are", (10, 14)),
        ("▁", (14, 15)),
        ("▁you?", (15, 20)),
    ]


def test_bert_pre_tokenizer_seed_example():
    assert pre_tokenizers.BertPreTokenizer().pre_tokenize_str("Hello, how are  you?") == [
        ("Hello", (0, 5)),
        (",", (5, 6)),
        ("how", (7, 10)),
        ("are", (11, 14)),
        ("you", (16, 19)),
        ("?", (19, 20)),
    ]


def test_whitespace_seed_example():
    assert pre_tokenizers.Whitespace().pre_tokenize_str("Let's test my pre-tokenizer.") == [
        ("Let", (0, 3)),
        ("'", (3, 4)),
        ("s", (4, 5)),
        ("test", (6, 10)),
        ("my", (11, 13)),
        ("pre", (14, 17)),
        ("-", (17, 18)),
        ("tokenizer", (18, 27)),
        (".", (27, 28)),
    ]


def test_offsets_are_characters_korean():
    # 'a가 짧' is 4 characters and 8 UTF-8 bytes: offsets count characters.
    assert pre_tokenizers.WhitespaceSplit().pre_tokenize_str("a가 짧") == [("a가", (0, 2)), ("짧", (3, 4))]
    assert pre_tokenizers.ByteLevel().pre_tokenize_str("a가 짧") == [("Ġaê°Ģ", (0, 2)), ("Ġì§§", (2, 4))]


def test_unicode_scripts_and_split_behaviors_literal():
    assert pre_tokenizers.UnicodeScripts().pre_tokenize_words("どこで生れ。Yes") == ["どこで生れ", "。", "Yes"]
    assert pre_tokenizers.UnicodeScripts().pre_tokenize_words("Apples are りんご 林檎") == ["Apples are ", "りんご 林檎"]
    # Leading spaces, private-use and unassigned chars start no piece: HF drops them.
    for text in [" a", "  ", "\ue000", "\ue000a", "a\ue000b", "\u0378", "a\u0300"]:
        assert pre_tokenizers.UnicodeScripts().pre_tokenize_str(text) == hf.UnicodeScripts().pre_tokenize_str(text)
    text = "the-final--countdown"
    expected = {
        "removed": ["the", "final", "countdown"],
        "isolated": ["the", "-", "final", "-", "-", "countdown"],
        "merged_with_previous": ["the-", "final-", "-", "countdown"],
        "merged_with_next": ["the", "-final", "-", "-countdown"],
        "contiguous": ["the", "-", "final", "--", "countdown"],
    }
    for behavior, words in expected.items():
        assert pre_tokenizers.Split("-", behavior).pre_tokenize_words(text) == words
        assert [w for w, _ in hf.Split("-", behavior).pre_tokenize_str(text)] == words


def test_byte_level_alphabet():
    alphabet = pre_tokenizers.ByteLevel.alphabet()
    assert len(alphabet) == len(set(alphabet)) == 256
    assert set(alphabet) == set(hf.ByteLevel.alphabet())
    assert alphabet[ord(" ")] == "Ġ" == BYTES_TO_UNICODE[32]


# ---------------------------------------------------------------- parity on >= 300 strings


@pytest.mark.parametrize("name", sorted(PAIRS))
def test_parity_on_hard_strings_and_shared_corpus_lines(name, hard_strings, shared_corpus_lines):
    texts = [*hard_strings, *shared_corpus_lines]
    assert len(texts) >= 300
    for text in texts:
        assert_parity(name, text)


@pytest.mark.parametrize("name", sorted(PAIRS))
@SETTINGS
@given(text=unicode_text)
def test_parity_on_generated_unicode_strings(name, text):
    assert_parity(name, text)


@pytest.mark.parametrize("normalizer_name", sorted(NORMALIZER_PAIRS))
@pytest.mark.parametrize("name", ["Whitespace", "BertPreTokenizer", "ByteLevel", "Metaspace", "UnicodeScripts", "Split(regex, isolated)"])
def test_offsets_through_a_normalizer_match_hf(name, normalizer_name, hard_strings, shared_corpus_lines):
    ours, theirs = PAIRS[name]
    our_normalizer, hf_normalizer = NORMALIZER_PAIRS[normalizer_name]
    for text in [*hard_strings, *shared_corpus_lines[::5]]:
        assert our_pre_tokenize(ours, text, our_normalizer) == hf_pre_tokenize(theirs, text, hf_normalizer), text


@pytest.mark.parametrize("normalizer_name", sorted(NORMALIZER_PAIRS))
@SETTINGS
@given(text=unicode_text)
def test_offsets_through_a_normalizer_match_hf_on_generated_strings(normalizer_name, text):
    ours, theirs = PAIRS["Split(regex, merged_with_previous)"]
    our_normalizer, hf_normalizer = NORMALIZER_PAIRS[normalizer_name]
    assert our_pre_tokenize(ours, text, our_normalizer) == hf_pre_tokenize(theirs, text, hf_normalizer)


# ---------------------------------------------------------------- properties


@pytest.mark.parametrize("name", sorted(PAIRS))
@SETTINGS
@given(text=unicode_text)
def test_fast_words_equal_the_aligned_path(name, text):
    ours, _ = PAIRS[name]
    assert ours.pre_tokenize_words(text) == [word for word, _ in ours.pre_tokenize_str(text)]


def _declared_word_list(pre_tokenizer):
    declare = getattr(pre_tokenizer, "plain_split", None)
    plain = declare() if declare is not None else None
    return None if plain is None or plain.to_bytes else plain.word_list  # (ByteLevel's: words before bytes)


WORD_LISTS = sorted(name for name, (ours, _) in PAIRS.items() if _declared_word_list(ours) is not None)


def test_digits_and_isolating_splits_declare_word_lists():
    assert {"Digits", "Digits(individual)", "Split(regex, isolated)"} <= set(WORD_LISTS)


@pytest.mark.parametrize("name", WORD_LISTS)
@SETTINGS
@given(text=unicode_text)
def test_declared_word_lists_are_hfs_words(name, text):
    # (what the engine splits plain strings by: None leaves the text to the general path)
    ours, theirs = PAIRS[name]
    found = _declared_word_list(ours)(text)
    if found is not None:
        assert found == [word for word, _ in theirs.pre_tokenize_str(text)]


@SETTINGS
@given(texts=st.lists(unicode_text, min_size=1, max_size=4))
def test_isolated_words_of_any_pattern_by_what_it_matches(texts):
    # GPT-2's pattern in a Split (tiktoken files converted by transformers) gives ByteLevel's own
    # words, with no knowledge of its text; a pattern leaving gaps gives matches and gaps, also
    # after texts its matches tiled (the words function keeps no stale shortcut).
    gpt2 = pre_tokenizers.isolated_words(Regex(pre_tokenizers.GPT2_PATTERN))
    gaps = pre_tokenizers.isolated_words(Regex(r"\p{L}+|\s+"))
    reference = hf.Split(tokenizers.Regex(r"\p{L}+|\s+"), "isolated")
    for text in [*texts, "ab cd", *texts]:
        assert gpt2(text) == pre_tokenizers.gpt2_findall(text)
        assert gaps(text) == [word for word, _ in reference.pre_tokenize_str(text)]


SPLITTING_ONLY = ["Whitespace", "WhitespaceSplit", "BertPreTokenizer", "Digits", "CharDelimiterSplit", "UnicodeScripts", "FixedLength"] + [
    f"Split(regex, {behavior})" for behavior in BEHAVIORS
]


@pytest.mark.parametrize("name", SPLITTING_ONLY)
@SETTINGS
@given(text=unicode_text)
def test_offsets_slice_out_exactly_the_words_when_nothing_was_normalized(name, text):
    ours, _ = PAIRS[name]
    for word, (start, end) in ours.pre_tokenize_str(text):
        assert 0 <= start < end <= len(text)
        assert text[start:end] == word


@pytest.mark.parametrize("name", ["ByteLevel", "Metaspace", "Sequence(Punctuation, Digits, ByteLevel)"])
@SETTINGS
@given(text=unicode_text)
def test_offsets_stay_inside_the_text_and_in_order(name, text):
    # Not disjoint: a prepended space shares the first char's span ("\t\x00" -> ' ', '\t' both (0, 1)).
    ours, _ = PAIRS[name]
    previous_start = 0
    for _, (start, end) in ours.pre_tokenize_str(text):
        assert previous_start <= start <= end <= len(text)
        previous_start = start


def test_sequence_fast_path_falls_back_for_position_dependent_members():
    sequence = pre_tokenizers.Sequence([pre_tokenizers.Split("x", "removed"), pre_tokenizers.Metaspace(prepend_scheme="first")])
    assert sequence.pre_tokenize_words("xa b") == ["a", "▁b"] == [w for w, _ in hf.Sequence(
        [hf.Split("x", "removed"), hf.Metaspace(prepend_scheme="first")]
    ).pre_tokenize_str("xa b")]


# ---------------------------------------------------------------- tokenizer.json


def hf_fragment(hf_pre_tokenizer) -> dict:
    tokenizer = tokenizers.Tokenizer(tokenizers.models.WordLevel({"[UNK]": 0}, unk_token="[UNK]"))
    tokenizer.pre_tokenizer = hf_pre_tokenizer
    return json.loads(tokenizer.to_str())["pre_tokenizer"]


@pytest.mark.parametrize("name", sorted(PAIRS))
def test_to_dict_is_hfs_tokenizer_json_fragment_and_reads_back(name):
    ours, theirs = PAIRS[name]
    fragment = hf_fragment(theirs)
    assert ours.to_dict() == fragment
    assert pre_tokenizers.from_dict(fragment) == ours
    assert pre_tokenizers.from_dict(json.loads(json.dumps(ours.to_dict()))) == ours


def test_from_dict_reads_old_metaspace_and_rejects_unknown_types():
    old = {"type": "Metaspace", "replacement": "▁", "add_prefix_space": False}
    assert pre_tokenizers.from_dict(old) == pre_tokenizers.Metaspace(prepend_scheme="never")
    assert pre_tokenizers.from_dict(None) is None
    with pytest.raises(SerializationError, match="FancySplit"):
        pre_tokenizers.from_dict({"type": "FancySplit"})
    with pytest.raises(SerializationError, match="behavior"):
        pre_tokenizers.from_dict({"type": "Split", "pattern": {"String": " "}, "behavior": "Sideways", "invert": False})


def test_bad_options_are_user_errors():
    with pytest.raises(TokvizError, match="one character"):
        pre_tokenizers.Metaspace(replacement="__")
    with pytest.raises(TokvizError, match="prepend_scheme"):
        pre_tokenizers.Metaspace(prepend_scheme="sometimes")
    with pytest.raises(TokvizError, match="behavior"):
        pre_tokenizers.Punctuation("sideways")
    with pytest.raises(TokvizError):
        pre_tokenizers.CharDelimiterSplit("ab")
    with pytest.raises(TokvizError, match="at least 1"):
        pre_tokenizers.FixedLength(0)  # HF panics here
    with pytest.raises(TokvizError, match="invalid"):
        pre_tokenizers.Split(Regex("(oops"), "removed")


def test_components_are_mutable_values_so_not_hashable():
    a = pre_tokenizers.Sequence([pre_tokenizers.Whitespace(), pre_tokenizers.Split(Regex(r"\d"), "isolated")])
    b = pre_tokenizers.Sequence([pre_tokenizers.Whitespace(), pre_tokenizers.Split(Regex(r"\d"), "Isolated")])
    assert a == b
    with pytest.raises(TypeError, match="unhashable"):
        hash(a)  # mutable as HF's: caches key on PipelineConfig, never on components


ASCII_PIECES = [chr(code) for code in range(128)] + ["'s", "'ll", "  ", "\r\n"]


@settings(max_examples=600, deadline=None, derandomize=True)
@given(st.lists(st.sampled_from(ASCII_PIECES), max_size=30).map("".join))
def test_gpt2_ascii_twin_splits_ascii_text_as_the_unicode_pattern(text) -> None:
    # pre_tokenizers.gpt2_findall takes GPT2_ASCII_PATTERN (in re) for ASCII text: it must find
    # exactly GPT2_PATTERN's matches (in regex), control chars \x1c-\x1f (not White_Space)
    # included, and split as HF's ByteLevel does.
    import regex

    from tokviz.byte_level import text_to_symbols

    expected = regex.compile(pre_tokenizers.GPT2_PATTERN).findall(text)
    assert pre_tokenizers.gpt2_findall(text) == expected
    hf_pieces = [piece for piece, _ in hf.ByteLevel(add_prefix_space=False, use_regex=True).pre_tokenize_str(text)]
    assert list(map(text_to_symbols, expected)) == hf_pieces


def test_gpt2_ascii_twin_worked_examples() -> None:
    assert pre_tokenizers.gpt2_findall("I've 2 cats\x1c  ok\t\n") == ["I", "'ve", " 2", " cats", "\x1c", " ", " ok", "\t\n"]
    assert pre_tokenizers.gpt2_findall("café  x") == ["café", " ", " x"]  # not ASCII: the Unicode pattern


def test_a_subclass_with_its_own_pre_tokenize_is_not_served_by_its_base_declarations():
    """The engine splits plain strings by what a pre-tokenizer declares (``plain_split``,
    ``cut_spans``): a subclass that pre-tokenizes its own way loses those of its base, so every
    lane runs its pre_tokenize."""
    from tokviz import Tokenizer, models

    class DashWhitespace(pre_tokenizers.WhitespaceSplit):
        def pre_tokenize(self, pretokenized):
            pretokenized.split(lambda _, piece: piece.split("-", "removed"))

    splitter = DashWhitespace()
    assert splitter.plain_split() is None and splitter.cut_spans("a-b") is None
    assert splitter.pre_tokenize_words("a b-c") == ["a b", "c"]
    assert pre_tokenizers.WhitespaceSplit().plain_split().runs  # (the base keeps its own)
    tokenizer = Tokenizer(models.WordLevel({"a b": 0, "c": 1, "[UNK]": 2}, unk_token="[UNK]"))
    tokenizer.pre_tokenizer = splitter
    encoding = tokenizer.encode("a b-c")
    assert (encoding.ids, encoding.offsets) == ([0, 1], [(0, 3), (4, 5)])


def test_plain_split_words_are_the_pre_tokenizers_words():
    text = "Hi, l’été — you?\tok"
    for splitter in (pre_tokenizers.Whitespace(), pre_tokenizers.WhitespaceSplit(), pre_tokenizers.BertPreTokenizer()):
        words = [match.group() for match in splitter.plain_split().words(text)]
        assert words == splitter.pre_tokenize_words(text)
    assert pre_tokenizers.Metaspace(replacement="_").plain_split().space_mark == "_"
    assert pre_tokenizers.BertPreTokenizer().plain_split().words("a\x07b") is None  # (ASCII controls: the general path)
