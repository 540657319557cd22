"""BPE model: worked examples, every option against HF ``tokenizers.models.BPE``, dropout, tokenizer.json."""

from __future__ import annotations

import json
import pickle
import random
from collections import Counter

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from tokenizers import Tokenizer as HfTokenizer
from tokenizers import models as hf_models
from tokenizers import pre_tokenizers as hf_pre_tokenizers
from tokenizers import trainers as hf_trainers

from tokviz.errors import SerializationError, TokvizError, VocabularyError
from tokviz.models import BPE, Model, Token

# The HF course (chapter 6, section 5): corpus "hug pug pun bun hugs", base vocab
# b g h n p s u, merges ("u","g"), ("u","n"), ("h","ug").
HUG_VOCAB = {"b": 0, "g": 1, "h": 2, "n": 3, "p": 4, "s": 5, "u": 6, "ug": 7, "un": 8, "hug": 9}
HUG_MERGES = [("u", "g"), ("u", "n"), ("h", "ug")]


def values(tokens: list[Token]) -> list[str]:
    return [token.value for token in tokens]


def as_triples(tokens) -> list[tuple[int, str, tuple[int, int]]]:
    return [(token.id, token.value, tuple(token.offsets)) for token in tokens]


def hf_char_tokens(hf_model, word: str) -> list[tuple[int, str, tuple[int, int]]]:
    """HF's model.tokenize, with its byte offsets mapped to characters as HF's Tokenizer does."""
    char_of_byte = [index for index, char in enumerate(word) for _ in char.encode("utf-8")]
    n_bytes, n_chars = len(char_of_byte), len(word)
    result = []
    for token in hf_model.tokenize(word):
        start, end = token.offsets
        start_char = char_of_byte[start] if start < n_bytes else n_chars
        end_char = char_of_byte[end - 1] + 1 if end <= n_bytes else n_chars
        result.append((token.id, token.value, (start_char, end_char)))
    return result


# -- worked examples -------------------------------------------------------------------


def test_hug_corpus_worked_example():
    model = BPE(HUG_VOCAB, HUG_MERGES)
    assert as_triples(model.tokenize("hugs")) == [(9, "hug", (0, 3)), (5, "s", (3, 4))]
    assert values(model.tokenize("bun")) == ["b", "un"]
    assert values(model.tokenize("pug")) == ["p", "ug"]
    # "m" is not in the vocab and there is no unk_token: HF drops it.
    assert values(model.tokenize("mug")) == ["ug"]
    assert model.tokenize("") == []
    assert isinstance(model, Model)


def test_merges_apply_by_rank_not_left_to_right():
    # "abc": (b, c) has rank 0, so it wins over (a, b) although (a, b) is further left.
    model = BPE({"a": 0, "b": 1, "c": 2, "ab": 3, "bc": 4}, [("b", "c"), ("a", "b")])
    assert values(model.tokenize("abc")) == ["a", "bc"]
    # Equal ranks (the same pair twice): the leftmost is merged first.
    model = BPE({"a": 0, "aa": 1}, [("a", "a")])
    assert as_triples(model.tokenize("aaa")) == [(1, "aa", (0, 2)), (0, "a", (2, 3))]


def test_unrelated_with_and_without_dropout():
    # HF's own test word.
    vocab = {
        "u": 0, "n": 1, "r": 2, "e": 3, "l": 4, "a": 5, "t": 6, "d": 7, "re": 8, "at": 9, "ed": 10,
        "un": 11, "ated": 12, "rel": 13, "related": 14, "unrelated": 15,
    }  # fmt: skip
    merges = [("r", "e"), ("a", "t"), ("e", "d"), ("u", "n"), ("at", "ed"), ("re", "l"), ("rel", "ated"), ("un", "related")]
    assert as_triples(BPE(vocab, merges).tokenize("unrelated")) == [(15, "unrelated", (0, 9))]
    assert values(BPE(vocab, merges, dropout=0.0).tokenize("unrelated")) == ["unrelated"]
    assert values(BPE(vocab, merges, dropout=1.0).tokenize("unrelated")) == list("unrelated")


def test_unk_fused_and_not_fused():
    vocab = {"<unk>": 0, "a": 1, "b": 2}
    plain = BPE(vocab, [], unk_token="<unk>")
    assert as_triples(plain.tokenize("accb")) == [(1, "a", (0, 1)), (0, "<unk>", (1, 2)), (0, "<unk>", (2, 3)), (2, "b", (3, 4))]
    fused = BPE(vocab, [], unk_token="<unk>", fuse_unk=True)
    assert as_triples(fused.tokenize("accb")) == [(1, "a", (0, 1)), (0, "<unk>", (1, 3)), (2, "b", (3, 4))]
    assert as_triples(fused.tokenize("cc")) == [(0, "<unk>", (0, 2))]


def test_unk_token_missing_from_vocab_is_a_clear_error():
    model = BPE({"a": 0}, [], unk_token="<unk>")
    assert values(model.tokenize("a")) == ["a"]  # fine until an unknown character shows up
    with pytest.raises(VocabularyError, match="unk_token '<unk>' is not in the vocabulary"):
        model.tokenize("b")


def test_byte_fallback():
    vocab = {"<unk>": 0, "<0x61>": 1, "<0xC3>": 2, "<0xA9>": 3, "<0x0A>": 4}
    model = BPE(vocab, [], unk_token="<unk>", byte_fallback=True)
    assert as_triples(model.tokenize("c")) == [(0, "<unk>", (0, 1))]
    assert as_triples(model.tokenize("a")) == [(1, "<0x61>", (0, 1))]
    assert as_triples(model.tokenize("\n")) == [(4, "<0x0A>", (0, 1))]
    # Both bytes of "é" point at the one character they come from.
    assert as_triples(model.tokenize("éa")) == [(2, "<0xC3>", (0, 1)), (3, "<0xA9>", (0, 1)), (1, "<0x61>", (1, 2))]


def test_continuing_subword_prefix_and_end_of_word_suffix():
    vocab = {"a": 0, "##b": 1, "##c": 2, "ab": 3, "abc": 4}
    model = BPE(vocab, [("a", "##b"), ("ab", "##c")], unk_token="[UNK]", continuing_subword_prefix="##")
    assert as_triples(model.tokenize("ab")) == [(3, "ab", (0, 2))]
    assert as_triples(model.tokenize("abc")) == [(4, "abc", (0, 3))]
    vocab = {"a": 0, "b": 1, "ab": 2, "c</w>": 3, "ac</w>": 4}
    model = BPE(vocab, [("a", "b"), ("a", "c</w>")], end_of_word_suffix="</w>")
    assert as_triples(model.tokenize("ac")) == [(4, "ac</w>", (0, 2))]
    assert as_triples(model.tokenize("abc")) == [(2, "ab", (0, 2)), (3, "c</w>", (2, 3))]


def test_ignore_merges():
    # HF's test: "Ġbelirtilen" is in the vocab but the merges would never build it.
    vocab = {
        ".:.:": 0, "Ġbelirtilen": 1, ".": 2, ":": 3, "bel": 4, "irtilen": 5, "Ġ": 6, ".:": 7, "belirtilen": 8,
        ".:.": 9, "be": 10, "l": 11, "ir": 12, "ti": 13, "en": 14, "irtil": 15, "irti": 16, "i": 17, "r": 18,
        "t": 19, "b": 20, "e": 21, "n": 22,
    }  # fmt: skip
    merges = [(".", ":"), ("b", "e"), ("be", "l"), ("i", "r"), ("t", "i"), ("ir", "ti"), ("e", "n"), ("irti", "l")]
    ignoring = BPE(vocab, merges, ignore_merges=True)
    assert as_triples(ignoring.tokenize(".:.:")) == [(0, ".:.:", (0, 4))]
    assert as_triples(ignoring.tokenize("Ġbelirtilen")) == [(1, "Ġbelirtilen", (0, 11))]
    merging = BPE(vocab, merges)
    assert values(merging.tokenize(".:.:")) == [".:", ".:"]
    assert values(merging.tokenize("Ġbelirtilen")) == ["Ġ", "bel", "irtil", "en"]
    for word in (".:.:", "Ġbelirtilen", "belirtilenx"):
        for model, hf in ((ignoring, hf_models.BPE(vocab, merges, ignore_merges=True)), (merging, hf_models.BPE(vocab, merges))):
            assert as_triples(model.tokenize(word)) == hf_char_tokens(hf, word)


def test_cache_returns_the_same_tokens_and_is_bounded():
    model = BPE(HUG_VOCAB, HUG_MERGES, cache_capacity=2)
    first = model.tokenize("hugs")
    first.append(Token(0, "b", (0, 1)))  # the caller's list is its own
    assert values(model.tokenize("hugs")) == ["hug", "s"]
    for word in ("bug", "pun", "hug", "bun"):
        model.tokenize(word)
    assert sum(map(len, model._cache)) <= 4  # two generations of cache_capacity words
    assert values(model.tokenize("hugs")) == ["hug", "s"]
    uncached = BPE(HUG_VOCAB, HUG_MERGES, cache_capacity=0)
    assert values(uncached.tokenize("hugs")) == ["hug", "s"] and uncached._cache is None


# -- errors, immutability -------------------------------------------------------------


def test_merges_whose_tokens_are_missing_raise_clear_errors():
    with pytest.raises(VocabularyError, match="uses 'b', which is not in the vocabulary"):
        BPE({"a": 0}, [("a", "b")])
    with pytest.raises(VocabularyError, match="makes 'ab', which is not in the vocabulary"):
        BPE({"a": 0, "b": 1}, [("a", "b")])
    with pytest.raises(VocabularyError, match="does not start with the continuing_subword_prefix '##'"):
        BPE({"a": 0, "b": 1, "ab": 2}, [("a", "b")], continuing_subword_prefix="##")
    with pytest.raises(VocabularyError, match="not two tokens"):
        BPE({"a": 0, "b": 1, "ab": 2}, ["a b c"])
    with pytest.raises(VocabularyError, match="probability between 0 and 1"):
        BPE(dropout=1.5)
    with pytest.raises(VocabularyError, match="ids must be non-negative integers"):
        BPE({"a": "0"}, [])
    with pytest.raises(TokvizError):
        BPE({"a": 0}, [], cache_capacity=-1)


def test_models_options_are_settable_checked_and_pickle():
    model = BPE(HUG_VOCAB, HUG_MERGES, unk_token="u")
    with pytest.raises(AttributeError, match="'merges' of 'BPE' objects is not writable"):
        model.merges = ()  # type: ignore[misc]
    with pytest.raises(TypeError, match="BPE.unk_token must be a string or None, got int 3"):
        model.unk_token = 3  # type: ignore[assignment]
    model.ignore_merges = True  # HF's setter; the merge table is rebuilt with the option
    assert model.ignore_merges is True and values(model.tokenize("hugs")) == ["hug", "s"]
    model.ignore_merges = False
    changed = model.with_options(dropout=1.0)
    assert changed.dropout == 1.0 and model.dropout is None
    copy = pickle.loads(pickle.dumps(model))
    assert copy.to_dict() == model.to_dict() and values(copy.tokenize("hugs")) == ["hug", "s"]
    vocab = model.get_vocab()
    vocab["zzz"] = 99
    assert model.token_to_id("zzz") is None and model.get_vocab_size() == 10
    assert model.id_to_token(9) == "hug" and model.id_to_token(99) is None
    assert model.merges == tuple(HUG_MERGES)


# -- serialization ---------------------------------------------------------------------


def test_to_dict_and_legacy_merges():
    model = BPE(HUG_VOCAB, HUG_MERGES)
    section = model.to_dict()
    assert section["merges"] == [["u", "g"], ["u", "n"], ["h", "ug"]]
    assert list(section)[:1] == ["type"] and section["type"] == "BPE"
    legacy = dict(section, merges=["#version: 0.2", "u g", "u n", "h ug"])
    assert BPE.from_dict(legacy).to_dict() == section
    assert BPE.from_dict(json.loads(json.dumps(section))).to_dict() == section
    with pytest.raises(SerializationError, match="no 'merges'"):
        BPE.from_dict({"type": "BPE", "vocab": {}})
    with pytest.raises(SerializationError, match="not 'BPE'"):
        BPE.from_dict({"type": "WordPiece", "vocab": {}})
    with pytest.raises(SerializationError, match="not in the vocabulary"):
        BPE.from_dict({"type": "BPE", "vocab": {"a": 0}, "merges": [["a", "b"]]})
    with pytest.raises(SerializationError):
        BPE.from_dict(["not", "a", "dict"])  # type: ignore[arg-type]


def test_from_file_reads_vocab_json_and_merges_txt(tmp_path):
    vocab_path, merges_path = tmp_path / "vocab.json", tmp_path / "merges.txt"
    vocab_path.write_text('{"a": 0, "b": 1, "c": 2, "ab": 3}', encoding="utf-8")
    merges_path.write_text("#version: 0.2\na b", encoding="utf-8")
    model = BPE.from_file(str(vocab_path), str(merges_path), unk_token="c")
    assert model.merges == (("a", "b"),) and model.unk_token == "c"
    assert values(model.tokenize("abx")) == ["ab", "c"]
    saved = BPE(HUG_VOCAB, HUG_MERGES).save(str(tmp_path), "hug")
    assert saved == [str(tmp_path / "hug-vocab.json"), str(tmp_path / "hug-merges.txt")]
    hf = hf_models.BPE.from_file(*saved)
    assert [(t.value, t.offsets) for t in hf.tokenize("hugs")] == [("hug", (0, 3)), ("s", (3, 4))]
    assert BPE.from_file(*saved).to_dict() == BPE(HUG_VOCAB, HUG_MERGES).to_dict()
    merges_path.write_text("#version: 0.2\na b\nc", encoding="utf-8")
    with pytest.raises(VocabularyError, match="Merge number 2"):
        BPE.from_file(str(vocab_path), str(merges_path))


# -- parity with HF on models HF trained on real text ---------------------------------

TRAINED_OPTIONS = {
    "plain": dict(),
    "unk": dict(unk_token="[UNK]"),
    "prefix_suffix": dict(unk_token="[UNK]", continuing_subword_prefix="##", end_of_word_suffix="</w>"),
}


@pytest.fixture(scope="module")
def training_lines(read_shared_corpus) -> list[str]:
    return read_shared_corpus("grimm_tales.txt")[:300_000].splitlines()


@pytest.fixture(scope="module")
def test_words(read_shared_corpus, shared_corpus_lines, hard_strings) -> list[str]:
    """Distinct Whitespace pre-tokens: a held-out part of grimm, the 300 shared lines, the hard strings."""
    splitter = hf_pre_tokenizers.Whitespace()
    held_out = read_shared_corpus("grimm_tales.txt")[300_000:420_000].splitlines()
    words: dict[str, None] = {}
    for line in [*held_out, *shared_corpus_lines, *hard_strings]:
        for word, _ in splitter.pre_tokenize_str(line):
            words[word] = None
    return list(words)


def train_hf(lines: list[str], **options) -> dict:
    """Train HF BPE (Whitespace pre-tokenizer) and return its tokenizer.json model section."""
    model_options = {key: value for key, value in options.items() if key == "unk_token"}
    trainer_options = {key: value for key, value in options.items() if key != "unk_token"}
    tokenizer = HfTokenizer(hf_models.BPE(**model_options))
    tokenizer.pre_tokenizer = hf_pre_tokenizers.Whitespace()
    special = [options["unk_token"]] if "unk_token" in options else []
    tokenizer.train_from_iterator(lines, hf_trainers.BpeTrainer(vocab_size=1500, special_tokens=special, show_progress=False, **trainer_options))
    return json.loads(tokenizer.to_str())["model"]


@pytest.fixture(scope="module")
def trained_sections(training_lines) -> dict[str, dict]:
    return {name: train_hf(training_lines, **options) for name, options in TRAINED_OPTIONS.items()}


def hf_from_section(section: dict, **overrides) -> hf_models.BPE:
    options = {key: section[key] for key in ("unk_token", "continuing_subword_prefix", "end_of_word_suffix", "fuse_unk", "byte_fallback", "ignore_merges")}
    options.update(overrides)
    options = {key: value for key, value in options.items() if value is not None}  # HF rejects None
    return hf_models.BPE(section["vocab"], [tuple(merge) for merge in section["merges"]], **options)


def assert_same_tokens(model: BPE, hf_model, words: list[str], check_offsets: bool = True) -> None:
    mismatches = []
    for word in words:
        ours = as_triples(model.tokenize(word))
        theirs = hf_char_tokens(hf_model, word)
        if not check_offsets:
            ours = [triple[:2] for triple in ours]
            theirs = [triple[:2] for triple in theirs]
        if ours != theirs:
            mismatches.append((word, ours, theirs))
    assert not mismatches, f"{len(mismatches)} of {len(words)} words differ, first: {mismatches[:3]}"


@pytest.mark.parametrize("name", list(TRAINED_OPTIONS))
@pytest.mark.parametrize("fuse_unk", [False, True])
def test_parity_with_hf_on_trained_models(name, fuse_unk, trained_sections, test_words):
    section = trained_sections[name]
    assert len(test_words) > 3000
    model = BPE.from_dict(dict(section, fuse_unk=fuse_unk))
    if section["unk_token"]:  # the unknown-character path is exercised
        assert sum(token.value == "[UNK]" for word in test_words for token in model.tokenize(word)) > 20
    # Twice: the second pass reads the word cache.
    for _ in range(2):
        assert_same_tokens(model, hf_from_section(section, fuse_unk=fuse_unk), test_words)
    # The tokenizer.json section we write is the one HF writes.
    assert model.with_options(fuse_unk=section["fuse_unk"]).to_dict() == section


def test_parity_with_hf_byte_fallback(trained_sections, test_words):
    section = trained_sections["unk"]
    vocab = dict(section["vocab"])
    # Half of the byte tokens, so that some characters still fall back to [UNK].
    for byte in range(0, 256, 2):
        vocab.setdefault(f"<0x{byte:02X}>", len(vocab))
    section = dict(section, vocab=vocab, byte_fallback=True)
    for fuse_unk in (False, True):
        model = BPE.from_dict(dict(section, fuse_unk=fuse_unk))
        assert_same_tokens(model, hf_from_section(section, fuse_unk=fuse_unk), test_words)
    assert values(model.tokenize("Ā")) == ["<0xC4>", "<0x80>"]  # both bytes even: in the vocab
    assert values(model.tokenize("é")) == ["[UNK]"]  # 0xA9 is odd: not in the vocab
    assert BPE.from_dict(section).to_dict() == json.loads(HfTokenizer(hf_from_section(section)).to_str())["model"]


def test_parity_with_hf_byte_fallback_and_prefix_quirk(trained_sections, test_words):
    # HF looks up the bytes of "##é" (prefix included): same ids and values; offsets
    # that HF pushes past the end of the word are clamped by us, so compare ids only here.
    section = dict(trained_sections["prefix_suffix"])
    vocab = dict(section["vocab"])
    for byte in range(256):
        vocab.setdefault(f"<0x{byte:02X}>", len(vocab))
    section = dict(section, vocab=vocab, byte_fallback=True)
    model = BPE.from_dict(section)
    assert_same_tokens(model, hf_from_section(section), test_words, check_offsets=False)
    tokens = model.tokenize("aé")
    assert all(0 <= start <= end <= 2 for _, _, (start, end) in as_triples(tokens))


@pytest.mark.parametrize("ignore_merges", [False, True])
def test_parity_with_hf_byte_level(ignore_merges, training_lines, read_shared_corpus, shared_corpus_lines, hard_strings):
    tokenizer = HfTokenizer(hf_models.BPE())
    tokenizer.pre_tokenizer = hf_pre_tokenizers.ByteLevel(add_prefix_space=False)
    tokenizer.train_from_iterator(
        training_lines,
        hf_trainers.BpeTrainer(vocab_size=2000, initial_alphabet=hf_pre_tokenizers.ByteLevel.alphabet(), show_progress=False),
    )
    section = json.loads(tokenizer.to_str())["model"]
    section = dict(section, ignore_merges=ignore_merges)
    splitter = hf_pre_tokenizers.ByteLevel(add_prefix_space=False)
    held_out = read_shared_corpus("grimm_tales.txt")[300_000:400_000].splitlines()
    words = list(dict.fromkeys(word for line in [*held_out, *shared_corpus_lines, *hard_strings] for word, _ in splitter.pre_tokenize_str(line)))
    assert len(words) > 3000
    model = BPE.from_dict(section)
    assert_same_tokens(model, hf_from_section(section), words)
    assert model.to_dict() == json.loads(HfTokenizer(hf_from_section(section)).to_str())["model"]


@settings(max_examples=200, deadline=None, derandomize=True)
@given(st.text(alphabet="abcdé#<>xy", max_size=12))
def test_parity_with_hf_on_arbitrary_words_with_every_option(word):
    vocab = {"<unk>": 0, "a": 1, "b": 2, "c": 3, "##a": 4, "##b": 5, "##c": 6, "ab": 7, "##ab": 8, "abc": 9,
             "<0xC3>": 10, "<0xA9>": 11, "<0x78>": 12, "a</w>": 13, "##b</w>": 14, "ab</w>": 15, "bc": 16}  # fmt: skip
    merges = [("a", "##b"), ("##a", "##b"), ("ab", "##c"), ("a", "##b</w>")]
    for options in (
        dict(unk_token="<unk>", continuing_subword_prefix="##"),
        dict(unk_token="<unk>", continuing_subword_prefix="##", end_of_word_suffix="</w>", fuse_unk=True),
        dict(unk_token="<unk>", byte_fallback=True),
        dict(unk_token="<unk>", byte_fallback=True, fuse_unk=True),
        dict(continuing_subword_prefix="##", ignore_merges=True),
    ):
        plain_merges = [("b", "c")] if "continuing_subword_prefix" not in options else merges
        model = BPE(vocab, plain_merges, **options)
        hf = hf_models.BPE(vocab, plain_merges, **options)
        ours = as_triples(model.tokenize(word))
        theirs = hf_char_tokens(hf, word)
        if options.get("byte_fallback") and options.get("continuing_subword_prefix"):
            ours, theirs = [t[:2] for t in ours], [t[:2] for t in theirs]
        assert ours == theirs, options


# -- dropout ---------------------------------------------------------------------------


def test_dropout_one_gives_characters_and_partial_dropout_varies(trained_sections):
    section = trained_sections["plain"]
    word = "shoemaker"
    full = BPE.from_dict(section)
    assert values(full.tokenize(word)) == ["shoemaker"]
    assert values(full.with_options(dropout=1.0).tokenize(word)) == list(word)
    model = full.with_options(dropout=0.3, rng=random.Random(7))
    segmentations = Counter(tuple(values(model.tokenize(word))) for _ in range(400))
    assert len(segmentations) >= 5  # varied
    for pieces in segmentations:
        assert "".join(pieces) == word  # always a valid split of the word
        assert all(full.token_to_id(piece) is not None for piece in pieces)
    # The unsplit word stays the most likely single outcome, and characters are rare.
    assert segmentations.most_common(1)[0][0] == ("shoemaker",)
    assert segmentations[tuple(word)] < 20
    # Reproducible with a seeded generator.
    first = [values(full.with_options(dropout=0.3, rng=random.Random(3)).tokenize(word)) for _ in range(1)]
    again = [values(full.with_options(dropout=0.3, rng=random.Random(3)).tokenize(word)) for _ in range(1)]
    assert first == again


def total_variation(first: Counter, second: Counter, samples: int) -> float:
    return sum(abs(first[key] - second[key]) for key in first | second) / (2 * samples)


def test_dropout_distribution_matches_hf(trained_sections):
    # Sampled from both, the empirical distributions differ by sampling noise only:
    # for "shoemaker" at p=0.2 (about 30 segmentations) a total variation distance of
    # 0.03-0.07; for the number of pieces of "everything" at p=0.5, 0.02-0.05. Dropping
    # candidates without HF's queue discipline gives 0.2 or more.
    section = trained_sections["plain"]
    samples = 1500
    ours = BPE.from_dict(dict(section, dropout=0.2)).with_options(rng=random.Random(11))
    theirs = hf_from_section(section, dropout=0.2)
    our_counts = Counter(tuple(values(ours.tokenize("shoemaker"))) for _ in range(samples))
    hf_counts = Counter(tuple(token.value for token in theirs.tokenize("shoemaker")) for _ in range(samples))
    assert total_variation(our_counts, hf_counts, samples) < 0.12, (our_counts.most_common(3), hf_counts.most_common(3))
    ours = ours.with_options(dropout=0.5)
    theirs = hf_from_section(section, dropout=0.5)
    our_lengths = Counter(len(ours.tokenize("everything")) for _ in range(samples))
    hf_lengths = Counter(len(theirs.tokenize("everything")) for _ in range(samples))
    assert total_variation(our_lengths, hf_lengths, samples) < 0.08, (our_lengths, hf_lengths)


@settings(max_examples=100, deadline=None, derandomize=True)
@given(st.text(alphabet="hugspnb", min_size=1, max_size=10), st.floats(0.0, 1.0))
def test_dropout_always_concatenates_back(word, p):
    model = BPE(HUG_VOCAB, HUG_MERGES, dropout=p, rng=random.Random(0))
    tokens = model.tokenize(word)
    assert "".join(values(tokens)) == word
    position = 0
    for token in tokens:
        assert token.offsets == (position, position + len(token.value))
        position += len(token.value)


_ANY_VOCAB = dict(HUG_VOCAB, **{"<unk>": 10, "##u": 11, "<0xC3>": 12, "<0xA9>": 13, "<0x20>": 14})
_ANY_MODELS = [
    BPE(_ANY_VOCAB, HUG_MERGES),
    BPE(_ANY_VOCAB, HUG_MERGES, unk_token="<unk>"),
    BPE(_ANY_VOCAB, HUG_MERGES, unk_token="<unk>", fuse_unk=True, byte_fallback=True),
    BPE(_ANY_VOCAB, [], unk_token="<unk>", byte_fallback=True, continuing_subword_prefix="##", end_of_word_suffix="</w>"),
]


@settings(max_examples=300, deadline=None, derandomize=True)
@given(st.text(max_size=16))
def test_offsets_stay_inside_the_word_on_any_unicode(word):
    for model in _ANY_MODELS:
        previous = (0, 0)
        for token in model.tokenize(word):
            start, end = token.offsets
            assert 0 <= start <= end <= len(word)
            assert start >= previous[0] and end >= previous[1]  # never go back
            previous = (start, end)
