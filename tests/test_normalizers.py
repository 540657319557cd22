"""tokviz.normalizers: same text, same alignments, same tokenizer.json as HF ``tokenizers``."""

from __future__ import annotations

import json
import unicodedata

import pytest
import tokenizers
from hypothesis import given, settings
from hypothesis import strategies as st
from tokenizers import normalizers as hf

from tokviz import NormalizedString, Regex, normalizers
from tokviz.errors import SerializationError

# Characters assigned since Unicode 3.2: HF's Rust tables and Python's agree on them.
STABLE_CHARS = [
    chr(code)
    for code in range(0x30000)
    if not 0xD800 <= code < 0xE000 and unicodedata.ucd_3_2_0.category(chr(code)) != "Cn"
]
TRICKY_CHARS = list(" \t\n\r\x00\x01\x0b\x1f\x7f\x85\u200b\ufeff\ufffd\u2581\u3000\u00a0'-.aAé1½①ﬁİΣ가각\u1100\u1161\u0301\u0316\u0328中文ー")
unicode_text = st.lists(st.one_of(st.sampled_from(TRICKY_CHARS), st.sampled_from(STABLE_CHARS)), max_size=24).map("".join)
SETTINGS = settings(max_examples=60, deadline=None, derandomize=True)

#: (tokviz normalizer, the same HF normalizer): every normalizer with its main options.
PAIRS = {
    "NFD": (normalizers.NFD(), hf.NFD()),
    "NFC": (normalizers.NFC(), hf.NFC()),
    "NFKD": (normalizers.NFKD(), hf.NFKD()),
    "NFKC": (normalizers.NFKC(), hf.NFKC()),
    "Lowercase": (normalizers.Lowercase(), hf.Lowercase()),
    "StripAccents": (normalizers.StripAccents(), hf.StripAccents()),
    "Strip": (normalizers.Strip(), hf.Strip()),
    "Strip(left only)": (normalizers.Strip(left=True, right=False), hf.Strip(left=True, right=False)),
    "Strip(right only)": (normalizers.Strip(left=False, right=True), hf.Strip(left=False, right=True)),
    "Replace(literal)": (normalizers.Replace(" ", "▁"), hf.Replace(" ", "▁")),
    "Replace(literal, delete)": (normalizers.Replace("e", ""), hf.Replace("e", "")),
    "Replace(regex)": (normalizers.Replace(Regex(r"\s+"), " "), hf.Replace(tokenizers.Regex(r"\s+"), " ")),
    "Replace(regex, longer)": (normalizers.Replace(Regex(r"[aeiou]"), "<v>"), hf.Replace(tokenizers.Regex(r"[aeiou]"), "<v>")),
    "Prepend": (normalizers.Prepend("▁"), hf.Prepend("▁")),
    "BertNormalizer": (normalizers.BertNormalizer(), hf.BertNormalizer()),
    "BertNormalizer(cased)": (normalizers.BertNormalizer(lowercase=False), hf.BertNormalizer(lowercase=False)),
    "BertNormalizer(cased, strip)": (
        normalizers.BertNormalizer(lowercase=False, strip_accents=True),
        hf.BertNormalizer(lowercase=False, strip_accents=True),
    ),
    "BertNormalizer(raw)": (
        normalizers.BertNormalizer(clean_text=False, handle_chinese_chars=False, strip_accents=False),
        hf.BertNormalizer(clean_text=False, handle_chinese_chars=False, strip_accents=False),
    ),
    "Nmt": (normalizers.Nmt(), hf.Nmt()),
    "ByteLevel": (normalizers.ByteLevel(), hf.ByteLevel()),
    "Sequence(NFD, Lowercase, StripAccents)": (
        normalizers.Sequence([normalizers.NFD(), normalizers.Lowercase(), normalizers.StripAccents()]),
        hf.Sequence([hf.NFD(), hf.Lowercase(), hf.StripAccents()]),
    ),
    "Sequence(Nmt, NFKC, Replace)": (
        normalizers.Sequence([normalizers.Nmt(), normalizers.NFKC(), normalizers.Replace(Regex(" {2,}"), " ")]),
        hf.Sequence([hf.Nmt(), hf.NFKC(), hf.Replace(tokenizers.Regex(" {2,}"), " ")]),
    ),
}


def hf_alignments(normalizer, text: str) -> list[tuple[str, tuple[int, int]]]:
    """Each char HF's normalizer produces, with its original span (read through get_splits)."""
    pretokenized = tokenizers.PreTokenizedString(text)
    pretokenized.normalize(normalizer.normalize)
    pretokenized.split(lambda _, piece: piece.split(tokenizers.Regex(r"[\s\S]"), "isolated"))
    return [(char, offsets) for char, offsets, _ in pretokenized.get_splits()]


def our_alignments(normalizer, text: str) -> list[tuple[str, tuple[int, int]]]:
    normalized = NormalizedString(text)
    normalizer.normalize(normalized)
    return list(zip(normalized.normalized, normalized.alignments))


def assert_parity(name: str, text: str) -> None:
    ours, theirs = PAIRS[name]
    expected = theirs.normalize_str(text)
    assert ours.normalize_str(text) == expected, (name, text)
    assert our_alignments(ours, text) == hf_alignments(theirs, text), (name, text)


# ---------------------------------------------------------------- worked examples from the seeds


def test_bert_normalizer_seed_example():
    assert normalizers.BertNormalizer(lowercase=True).normalize_str("Héllò hôw are ü?") == "hello how are u?"


def test_sequence_seed_example():
    sequence = normalizers.Sequence([normalizers.NFD(), normalizers.Lowercase(), normalizers.StripAccents()])
    assert sequence.normalize_str("Héllò hôw are ü?") == "hello how are u?"
    assert len(sequence) == 3 and sequence[0] == normalizers.NFD()


def test_literal_outputs():
    assert normalizers.NFKC().normalize_str("ﬁ ① ㎞ Ａｂｃ") == "fi 1 km Abc"
    assert normalizers.Lowercase().normalize_str("ΟΔΟΣ İ") == "οδοσ i\u0307"  # no final sigma, like Rust
    assert normalizers.BertNormalizer().normalize_str("a\tb\x00c中d") == "a bc 中 d"
    assert normalizers.Nmt().normalize_str("a\x01b\u200bc\ufeff") == "ab c "
    assert normalizers.Strip().normalize_str("\u3000 hi \n") == "hi"
    assert normalizers.Prepend("▁").normalize_str("") == ""
    assert normalizers.Replace("", "x").normalize_str("ab") == "ab"  # an empty literal matches nothing
    assert normalizers.ByteLevel().normalize_str("a b가") == "aĠbê°Ģ"


def test_alignment_example_bert_handles_chinese_chars():
    normalized = NormalizedString("a中")
    normalizers.BertNormalizer().normalize(normalized)
    assert normalized.normalized == "a 中 "
    assert normalized.alignments == [(0, 1), (1, 2), (1, 2), (1, 2)]


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


@pytest.mark.parametrize("name", sorted(PAIRS))
@SETTINGS
@given(text=unicode_text)
def test_fast_normalize_str_equals_the_aligned_path(name, text):
    ours, _ = PAIRS[name]
    normalized = NormalizedString(text)
    ours.normalize(normalized)
    assert ours.normalize_str(text) == normalized.normalized
    assert all(0 <= start <= end <= len(text) for start, end in normalized.alignments)


# ---------------------------------------------------------------- tokenizer.json


def hf_fragment(hf_normalizer) -> dict:
    tokenizer = tokenizers.Tokenizer(tokenizers.models.WordLevel({"[UNK]": 0}, unk_token="[UNK]"))
    tokenizer.normalizer = hf_normalizer
    return json.loads(tokenizer.to_str())["normalizer"]


@pytest.mark.parametrize("name", sorted(PAIRS))
def test_to_dict_is_hfs_tokenizer_json_fragment_and_reads_back(name):
    ours, theirs = PAIRS[name]
    fragment = hf_fragment(theirs)
    assert ours.to_dict() == fragment
    assert normalizers.from_dict(fragment) == ours
    assert normalizers.from_dict(json.loads(json.dumps(ours.to_dict()))) == ours


def test_components_are_mutable_values_so_not_hashable():
    assert normalizers.Sequence([normalizers.NFC(), normalizers.Replace(Regex("a"), "b")]) == normalizers.Sequence(
        [normalizers.NFC(), normalizers.Replace(Regex("a"), "b")]
    )
    assert normalizers.Strip(left=False) != normalizers.Strip()
    with pytest.raises(TypeError, match="unhashable"):
        hash(normalizers.NFC())  # mutable as HF's: caches key on PipelineConfig, never on components


def test_from_dict_errors_name_the_problem():
    assert normalizers.from_dict(None) is None
    with pytest.raises(SerializationError, match="Unicode"):
        normalizers.from_dict({"type": "Unicode"})
    with pytest.raises(SerializationError, match="type"):
        normalizers.from_dict({"lowercase": True})
    with pytest.raises(SerializationError, match="pattern"):
        normalizers.from_dict({"type": "Replace", "pattern": {"Glob": "*"}, "content": ""})
    with pytest.raises(SerializationError, match="content"):
        normalizers.from_dict({"type": "Replace", "pattern": {"String": "a"}})


# ---------------------------------------------------------------- Precompiled (SentencePiece charsmaps)


@pytest.fixture(scope="module", params=["nmt_nfkc", "nmt_nfkc_cf", "nfkc"])
def charsmap(request) -> bytes:
    """A real ``precompiled_charsmap``: train a tiny SentencePiece model with that rule."""
    import io

    sentencepiece = pytest.importorskip("sentencepiece")
    from sentencepiece import sentencepiece_model_pb2

    model = io.BytesIO()
    sentencepiece.SentencePieceTrainer.train(
        sentence_iterator=iter(["Hello world this is a test of the system."] * 50),
        model_writer=model,
        vocab_size=30,
        hard_vocab_limit=False,
        normalization_rule_name=request.param,
        minloglevel=2,
    )
    proto = sentencepiece_model_pb2.ModelProto()
    proto.ParseFromString(model.getvalue())
    return proto.normalizer_spec.precompiled_charsmap


PRECOMPILED_EXAMPLES = ["ﬁ ① Ａｂｃ HeLLo \t x  y\u200b\x00z", "ｶﾞ", "e\u0301\u0301\u0301", "\u1100\u1161\u11a8", "👩‍👩‍👧‍👦"]


def test_precompiled_parity_on_hard_strings_and_corpus_lines(charsmap, hard_strings, shared_corpus_lines):
    ours, theirs = normalizers.Precompiled(charsmap), hf.Precompiled(charsmap)
    for text in [*hard_strings, *PRECOMPILED_EXAMPLES, *shared_corpus_lines]:
        assert ours.normalize_str(text) == theirs.normalize_str(text), text
        assert our_alignments(ours, text) == hf_alignments(theirs, text), text


def test_precompiled_worked_example(charsmap):
    # Every rule maps compatibility characters; only the *_cf rule also case-folds.
    text = normalizers.Precompiled(charsmap).normalize_str("ﬁ① Ａ")
    assert text in ("fi1 A", "fi1 a")


@settings(max_examples=60, deadline=None, derandomize=True)
@given(text=unicode_text)
def test_precompiled_parity_on_generated_strings(text):
    # Hypothesis and module fixtures don't mix; reuse one charsmap through the cache.
    charsmap = _nmt_nfkc_charsmap()
    ours, theirs = normalizers.Precompiled(charsmap), hf.Precompiled(charsmap)
    assert ours.normalize_str(text) == theirs.normalize_str(text)
    assert our_alignments(ours, text) == hf_alignments(theirs, text)


_CHARSMAP_CACHE: dict[str, bytes] = {}


def _nmt_nfkc_charsmap() -> bytes:
    if "nmt_nfkc" not in _CHARSMAP_CACHE:
        import io

        import sentencepiece
        from sentencepiece import sentencepiece_model_pb2

        model = io.BytesIO()
        sentencepiece.SentencePieceTrainer.train(
            sentence_iterator=iter(["Hello world this is a test of the system."] * 50),
            model_writer=model,
            vocab_size=30,
            hard_vocab_limit=False,
            normalization_rule_name="nmt_nfkc",
            minloglevel=2,
        )
        proto = sentencepiece_model_pb2.ModelProto()
        proto.ParseFromString(model.getvalue())
        _CHARSMAP_CACHE["nmt_nfkc"] = proto.normalizer_spec.precompiled_charsmap
    return _CHARSMAP_CACHE["nmt_nfkc"]


def test_precompiled_tokenizer_json_both_ways(charsmap):
    fragment = hf_fragment(hf.Precompiled(charsmap))
    ours = normalizers.Precompiled(charsmap)
    assert ours.to_dict() == fragment
    assert normalizers.from_dict(fragment) == ours


def test_precompiled_bad_charsmaps_are_serialization_errors():
    with pytest.raises(SerializationError, match="base64"):
        normalizers.from_dict({"type": "Precompiled", "precompiled_charsmap": "***"})
    with pytest.raises(SerializationError, match="charsmap"):
        normalizers.from_dict({"type": "Precompiled", "precompiled_charsmap": ""})
    with pytest.raises(SerializationError, match="charsmap"):
        normalizers.from_dict({"type": "Precompiled", "precompiled_charsmap": "AAAAAQ=="})


def test_unicode_normalizer_from_str_like_hf():
    for name in ("nfc", "nfd", "nfkc", "nfkd"):
        ours = normalizers.unicode_normalizer_from_str(name)
        assert ours.normalize_str("ﬁé") == hf.unicode_normalizer_from_str(name).normalize_str("ﬁé")
    with pytest.raises(ValueError, match="NFKD"):
        normalizers.unicode_normalizer_from_str("NFKD")


# ---------------------------------------------------------------------- output bounds (issue 38)
def test_replace_and_prepend_cannot_make_a_text_more_than_8_times_longer():
    from tokviz.errors import LimitExceededError

    bomb = normalizers.Sequence([normalizers.Replace("a", "a" * 1000)] * 3)
    with pytest.raises(LimitExceededError, match=r"^The normalizer Replace would make this text of 100 characters 1,000 times longer "
                                                 r"\(100,000 characters\); this server lets a Replace or Prepend make a text at most 8 times longer, "
                                                 r"plus 1,024 characters"):
        bomb.normalize_str("a" * 100)
    with pytest.raises(LimitExceededError, match="1,000 times longer"):  # the same bound on the aligned path, before the text is made
        bomb.normalize(NormalizedString("a" * 100))
    with pytest.raises(LimitExceededError, match="times longer"):  # an empty regex matches between every two characters
        normalizers.Replace(Regex(""), "z" * 10).normalize_str("b" * 2000)
    with pytest.raises(LimitExceededError, match="Prepend would make this text of 3 characters"):
        normalizers.Prepend("x" * 2_000).normalize(NormalizedString("abc"))
    # At the bound, and real markers: unchanged.
    assert normalizers.Replace("a", "b" * 8).normalize_str("a" * 1000) == "b" * 8000
    assert normalizers.Replace("\n", "<n>").normalize_str("\n" * 10_000) == "<n>" * 10_000
    assert normalizers.Prepend("x" * 1024).normalize_str("abc") == "x" * 1024 + "abc"
    # Growth that is not a Replace's (NFKD of a ligature is 18 characters) is not counted against it.
    assert normalizers.Sequence([normalizers.NFKD(), normalizers.Replace(" ", "▁")]).normalize_str("\ufdfa") == unicodedata.normalize("NFKD", "\ufdfa").replace(" ", "▁")


def test_a_loaded_file_whose_normalizer_blows_up_is_refused_with_its_name():
    from tokviz import Tokenizer
    from tokviz.errors import LimitExceededError
    from tokviz.models import WordLevel

    tokenizer = Tokenizer(WordLevel({"a": 0}, unk_token="a"))
    tokenizer.normalizer = normalizers.Sequence([normalizers.Replace("e", "e" * 100)] * 2)
    with pytest.raises(LimitExceededError, match=r"^This tokenizer.json: The normalizer Replace would make this text of 792 characters"):
        Tokenizer.from_str(tokenizer.to_str())
