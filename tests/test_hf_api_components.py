"""HF's Python API on the text side, decoders and processors: mutable components, Sequence
indexing, custom Python components, CTC, Strip(content, left, right), DecodeStream, and repr /
pickling / copies as HF's — each checked against the installed ``tokenizers``.
"""

from __future__ import annotations

import copy
import json
import pickle

import pytest
import tokenizers as hf

import tokviz
from tokviz import _mutation
from tokviz import decoders, normalizers, pre_tokenizers, processors


def components(lib):
    """One of each component, built with the same call on both libraries."""
    N, P, D, R = lib.normalizers, lib.pre_tokenizers, lib.decoders, lib.processors
    return [
        N.NFC(), N.Strip(left=False), N.Sequence([N.NFD(), N.Lowercase(), N.StripAccents()]),
        N.BertNormalizer(strip_accents=False), N.Replace(lib.Regex(r"\s+"), " "), N.Prepend("▁"), N.Nmt(), N.ByteLevel(),
        P.Whitespace(), P.WhitespaceSplit(), P.BertPreTokenizer(), P.ByteLevel(add_prefix_space=False),
        P.Metaspace(prepend_scheme="first"), P.Punctuation(), P.Digits(individual_digits=True), P.CharDelimiterSplit("-"),
        P.Split(lib.Regex(r"\d+"), "isolated", invert=True), P.UnicodeScripts(), P.FixedLength(5),
        P.Sequence([P.Whitespace(), P.Digits()]),
        D.ByteLevel(), D.WordPiece(prefix="__", cleanup=False), D.Metaspace(), D.BPEDecoder(), D.Replace("▁", " "),
        D.Strip(content="_", left=1, right=2), D.Fuse(), D.ByteFallback(), D.CTC(pad_token="[PAD]"),
        D.Sequence([D.CTC(), D.Fuse()]),
        R.BertProcessing(("[SEP]", 1), ("[CLS]", 0)), R.RobertaProcessing(("</s>", 2), ("<s>", 0)), R.ByteLevel(trim_offsets=False),
        R.TemplateProcessing(single="[CLS] $A [SEP]", pair="[CLS] $A [SEP] $B:1 [SEP]:1", special_tokens=[("[CLS]", 1), ("[SEP]", 2)]),
        R.Sequence([R.ByteLevel(), R.BertProcessing(("[SEP]", 1), ("[CLS]", 0))]),
    ]


PAIRS = list(zip(components(tokviz), components(hf)))


@pytest.mark.parametrize(("ours", "theirs"), PAIRS, ids=[f"{type(o).__module__.split('.')[-1]}.{type(o).__name__}" for o, _ in PAIRS])
def test_repr_state_and_pickling_are_hfs(ours, theirs):
    assert repr(ours) == repr(theirs)
    assert json.loads(ours.__getstate__()) == json.loads(theirs.__getstate__())
    reloaded = pickle.loads(pickle.dumps(ours))
    assert type(reloaded) is type(ours) and reloaded == ours
    assert copy.deepcopy(ours) == ours and copy.copy(ours) == ours


def test_literal_reprs():
    assert repr(pre_tokenizers.Split("-", "merged_with_next")) == 'Split(pattern=String("-"), behavior=MergedWithNext, invert=False)'
    assert repr(decoders.Strip(content="_", left=1, right=0)) == 'Strip(content="_", start=1, stop=0)'
    assert normalizers.Sequence([normalizers.NFC()]).__getstate__() == b'{"type":"Sequence","normalizers":[{"type":"NFC"}]}'


def test_copies_never_share_state_with_the_original():
    original = normalizers.Sequence([normalizers.NFC(), normalizers.Strip()])
    for duplicate in (copy.copy(original), copy.deepcopy(original), pickle.loads(pickle.dumps(original))):
        duplicate[1].left = False
        duplicate[0] = normalizers.Lowercase()
    assert original == normalizers.Sequence([normalizers.NFC(), normalizers.Strip()])


def test_setstate_turns_a_component_into_the_stated_one():
    decoder = decoders.WordPiece()
    decoder.__setstate__(decoders.WordPiece(prefix="__", cleanup=False).__getstate__())
    assert (decoder.prefix, decoder.cleanup) == ("__", False)
    with pytest.raises(TypeError, match="describes a Metaspace, not a WordPiece"):
        decoder.__setstate__(b'{"type":"Metaspace","replacement":"_","prepend_scheme":"always","split":true}')


@pytest.mark.parametrize("module", [pre_tokenizers, decoders, processors])
def test_a_manual_reload_from_the_state_as_hf_tests_it(module):
    original = module.ByteLevel(add_prefix_space=False)
    state = json.loads(original.__getstate__())  # holds "type": HF's ByteLevel ignores unknown keywords
    assert module.ByteLevel(**state) == original


# --------------------------------------------------------------------------- mutability


def test_edits_change_the_output_and_bump_the_mutation_counter():
    sequence = pre_tokenizers.Sequence([pre_tokenizers.Whitespace(), pre_tokenizers.Digits()])
    before = _mutation.generation()
    sequence[1].individual_digits = True  # the element itself, as in HF: the Sequence sees the edit
    assert _mutation.generation() > before
    assert sequence.pre_tokenize_str("ab 12") == [("ab", (0, 2)), ("1", (3, 4)), ("2", (4, 5))]
    bert = normalizers.BertNormalizer()
    bert.lowercase = False
    assert bert.normalize_str("Héllo") == "Héllo"
    decoder = decoders.WordPiece(prefix="$$", cleanup=False)
    decoder.prefix = "__"
    assert decoder.decode(["My", "na", "__me"]) == "My name"
    processor = processors.ByteLevel()
    generation = _mutation.generation()
    processor.trim_offsets = False
    assert _mutation.generation() > generation


def test_construction_does_not_count_as_an_edit():
    before = _mutation.generation()
    normalizers.Sequence([normalizers.NFC(), normalizers.Strip()])
    pre_tokenizers.Metaspace()
    decoders.CTC()
    assert _mutation.generation() == before


@pytest.mark.parametrize(
    ("make", "name", "value", "error", "message"),
    [
        (lambda lib: lib.normalizers.BertNormalizer(), "lowercase", "x", TypeError, "BertNormalizer.lowercase must be True or False, got str 'x'"),
        (lambda lib: lib.normalizers.Strip(), "left", 1, TypeError, "Strip.left must be True or False, got int 1"),
        (lambda lib: lib.pre_tokenizers.Metaspace(), "replacement", "ab", ValueError, "expected a string of length 1 \\(exactly one character\\), got 'ab'"),
        (lambda lib: lib.pre_tokenizers.Metaspace(), "prepend_scheme", "sometimes", ValueError, "one of always, first, never, got 'sometimes'"),
        (lambda lib: lib.pre_tokenizers.Split("-", "removed"), "behavior", "bad", ValueError, "Unknown split behavior 'bad'"),
        (lambda lib: lib.decoders.WordPiece(), "cleanup", "yes", TypeError, "WordPiece cleanup must be True or False, got str 'yes'"),
        (lambda lib: lib.decoders.Metaspace(), "replacement", "", ValueError, "expected a string of length 1, got ''"),
        (lambda lib: lib.decoders.CTC(), "pad_token", 3, TypeError, "CTC pad_token must be a string, got int 3"),
        (lambda lib: lib.processors.ByteLevel(), "trim_offsets", "x", TypeError, "ByteLevel trim_offsets must be True or False"),
        (lambda lib: lib.processors.BertProcessing(("[SEP]", 1), ("[CLS]", 0)), "sep", "x", TypeError, r"\(token, id\) pair"),
    ],
)
def test_refused_edits_raise_hfs_type_and_change_nothing(make, name, value, error, message):
    ours = make(tokviz)
    before = repr(ours)
    with pytest.raises(error, match=message):
        setattr(ours, name, value)
    assert repr(ours) == before
    with pytest.raises(error):
        setattr(make(hf), name, value)


# --------------------------------------------------------------------------- Sequence indexing


@pytest.mark.parametrize(
    ("sequence", "replacement"),
    [
        (lambda lib: lib.normalizers.Sequence([lib.normalizers.NFC(), lib.normalizers.Lowercase()]), lambda lib: lib.normalizers.Strip()),
        (lambda lib: lib.pre_tokenizers.Sequence([lib.pre_tokenizers.Whitespace(), lib.pre_tokenizers.Digits()]), lambda lib: lib.pre_tokenizers.Punctuation()),
        (lambda lib: lib.processors.Sequence([lib.processors.ByteLevel(), lib.processors.ByteLevel()]), lambda lib: lib.processors.ByteLevel(trim_offsets=False)),
    ],
)
def test_sequences_index_and_assign_as_hf(sequence, replacement):
    results = []
    for lib in (tokviz, hf):
        seq = sequence(lib)
        seq[1] = replacement(lib)
        with pytest.raises(IndexError):
            seq[5]
        results.append((repr(seq), repr(seq[0]), repr(seq[1])))
    assert results[0] == results[1]
    ours = sequence(tokviz)
    assert ours[-1] == ours[1]
    with pytest.raises(IndexError, match="Index not found: 2 is outside this Sequence of 2"):
        ours[2] = replacement(tokviz)
    with pytest.raises(TypeError, match="not int"):
        ours[0] = 3
    assert len(ours) == 2


# --------------------------------------------------------------------------- custom components


class Upper:
    def normalize(self, normalized):
        normalized.uppercase()


class Dashes:
    def pre_tokenize(self, pretokenized):
        pretokenized.split(lambda index, piece: piece.split("-", "removed"))


class Reverse:
    def decode_chain(self, tokens):
        return [token[::-1] for token in tokens]


def test_custom_components_run_in_a_tokenizer_as_in_hf():
    results = []
    for lib in (tokviz, hf):
        tokenizer = lib.Tokenizer(lib.models.WordLevel({"AB": 0, "CD": 1, "[UNK]": 2}, unk_token="[UNK]"))
        tokenizer.normalizer = lib.normalizers.Normalizer.custom(Upper())
        tokenizer.pre_tokenizer = lib.pre_tokenizers.PreTokenizer.custom(Dashes())
        tokenizer.decoder = lib.decoders.Decoder.custom(Reverse())
        encoding = tokenizer.encode("ab-cd")
        results.append((encoding.tokens, encoding.offsets, tokenizer.decode(encoding.ids)))
        with pytest.raises(Exception, match="Custom Normalizer cannot be serialized"):
            tokenizer.to_str()
        tokenizer.normalizer = None
        with pytest.raises(Exception, match="Custom PreTokenizer cannot be serialized"):
            tokenizer.to_str()
        tokenizer.pre_tokenizer = None
        with pytest.raises(Exception, match="Custom PyDecoder cannot be serialized"):
            tokenizer.to_str()
    assert results[0] == results[1] == (["AB", "CD"], [(0, 2), (3, 5)], "BADC")


def test_custom_components_need_their_method():
    with pytest.raises(TypeError, match="needs a normalize"):
        normalizers.Normalizer.custom(object())
    with pytest.raises(TypeError, match="needs a pre_tokenize"):
        pre_tokenizers.PreTokenizer.custom(Upper())
    with pytest.raises(TypeError, match="needs a decode_chain"):
        decoders.Decoder.custom(Upper())


def test_a_custom_pre_tokenizer_trains(tmp_path):
    tokenizer = tokviz.Tokenizer(tokviz.models.WordLevel(unk_token="[UNK]"))
    tokenizer.pre_tokenizer = pre_tokenizers.PreTokenizer.custom(Dashes())
    tokenizer.train_from_iterator(["a-b-a", "c"], tokviz.trainers.WordLevelTrainer(special_tokens=["[UNK]"], show_progress=False))
    assert tokenizer.get_vocab() == {"[UNK]": 0, "a": 1, "b": 2, "c": 3}


# --------------------------------------------------------------------------- CTC, Strip, DecodeStream


@pytest.mark.parametrize(
    ("options", "tokens"),
    [
        ({}, ["<pad>", "<pad>", "h", "e", "e", "l", "l", "<pad>", "l", "o", "o", "o", "<pad>"]),
        ({"pad_token": "[PAD]"}, ["[PAD]", "h", "i", "|", "|", "y", "o", "u", "[PAD]", " ", "'", "s", "|", "."]),
        ({"cleanup": False}, ["h", "i", "|", "y", "o", "u", "<pad>", "<pad>"]),
        ({"word_delimiter_token": "_"}, ["a", "_", "b", "b", "<pad>", "b"]),
    ],
)
def test_ctc_decodes_as_hf(options, tokens):
    assert decoders.CTC(**options).decode(tokens) == hf.decoders.CTC(**options).decode(tokens)
    assert decoders.Sequence([decoders.CTC(**options), decoders.Metaspace()]).decode(tokens) == hf.decoders.Sequence(
        [hf.decoders.CTC(**options), hf.decoders.Metaspace()]
    ).decode(tokens)


def test_ctc_literal_and_tokenizer_json_round_trip():
    assert decoders.CTC().decode(["<pad>", "h", "h", "i", "|", "<pad>", "y", "o", "u"]) == "hi you"
    tokenizer = tokviz.Tokenizer(tokviz.models.WordLevel({"a": 0}, unk_token="a"))
    tokenizer.decoder = decoders.CTC(pad_token="[PAD]", cleanup=False)
    assert tokviz.Tokenizer.from_str(tokenizer.to_str()).decoder == decoders.CTC(pad_token="[PAD]", cleanup=False)
    assert hf.Tokenizer.from_str(tokenizer.to_str()).decoder.pad_token == "[PAD]"


def test_strip_takes_content_left_right_as_hf():
    tokens = ["_My", " na", "me", " _-", "__-"]
    assert decoders.Strip(content="_", left=1, right=0).decode(tokens) == "My name _-_-"
    assert decoders.Strip("_", 1, 0).decode(tokens) == hf.decoders.Strip("_", 1, 0).decode(tokens)
    strip = decoders.Strip(left=2, right=1)
    assert (strip.content, strip.start, strip.stop) == (" ", 2, 1)
    with pytest.raises(OverflowError):
        decoders.Strip(left=-1)


def trained_byte_level(lib, lines):
    tokenizer = lib.Tokenizer(lib.models.BPE())
    tokenizer.pre_tokenizer = lib.pre_tokenizers.ByteLevel(add_prefix_space=False)
    tokenizer.decoder = lib.decoders.ByteLevel()
    tokenizer.train_from_iterator(lines, lib.trainers.BpeTrainer(vocab_size=300, special_tokens=["<s>"], show_progress=False))
    return tokenizer


def test_decode_stream_yields_what_hfs_yields(shared_corpus_lines):
    lines = shared_corpus_lines[:60] + ["naïve café 叫 — ok"]
    text = "<s>The naïve café says 叫 — done."
    chunks = []
    for lib in (tokviz, hf):
        tokenizer = trained_byte_level(lib, lines)
        ids = tokenizer.encode(text).ids
        for skip in (False, True):
            stream = lib.decoders.DecodeStream(skip_special_tokens=skip)
            chunks.append([stream.step(tokenizer, id) for id in ids])
        stream = lib.decoders.DecodeStream(ids=ids[:3])
        chunks.append([stream.step(tokenizer, id) for id in ids[3:]])
    ours, theirs = chunks[:3], chunks[3:]
    assert ours == theirs
    assert "".join(chunk for chunk in ours[0] if chunk) == text
    assert None in ours[0]  # a multi-byte character waits for its last byte


def test_decode_stream_with_byte_fallback_pieces():
    for lib in (tokviz, hf):
        tokenizer = lib.Tokenizer(lib.models.BPE(vocab={"<0xE5>": 0, "<0x8F>": 1, "<0xAB>": 2, "▁a": 3, "b": 4}, merges=[], byte_fallback=True))
        tokenizer.decoder = lib.decoders.Sequence([lib.decoders.ByteFallback(), lib.decoders.Metaspace()])
        stream = lib.decoders.DecodeStream()
        assert [stream.step(tokenizer, id) for id in [3, 0, 1, 2, 4, 3]] == ["a", None, None, "叫", "b", " a"]


def test_split_pattern_cannot_be_set_as_in_hf():
    for lib in (tokviz, hf):
        split = lib.pre_tokenizers.Split("a", "removed")
        with pytest.raises(Exception, match="Cannot set pattern, please instantiate a new split pattern instead"):
            split.pattern = "b"
        split.invert = True
        assert split.pre_tokenize_str("xay") == [("a", (1, 2))]


def test_top_level_names_hf_scripts_import():
    expected = {name for name in dir(hf) if not name.startswith("_") and name[0].isupper()}
    missing = expected - set(dir(tokviz))
    # Only the typing names HF's __init__ happens to import are not mirrored.
    assert missing == {"Enum", "List", "Tuple", "Union"}
    assert tokviz.SplitDelimiterBehavior("merged_with_next") is tokviz.SplitDelimiterBehavior.MERGED_WITH_NEXT


def test_normalized_string_prints_and_slices_as_hf():
    import tokenizers as hf_lib

    for lib in (tokviz, hf_lib):
        normalized = lib.NormalizedString("Hey there!")
        normalized.replace("there", "you")
        assert repr(normalized) == 'NormalizedString(original="Hey there!", normalized="Hey you!")'
        assert str(normalized) == "Hey you!"
        piece = normalized[4:]
        assert (piece.normalized, piece.original) == ("you!", "e!")  # HF aligns a replacement char by char
        assert normalized[:3].normalized == "Hey"


def test_a_custom_component_s_error_is_reported_as_hf_does():
    import tokenizers as hf_lib

    class BadNormalizer:
        def normalize(self, normalized, wrong):
            pass

    class BadPreTokenizer:
        def pre_tokenize(self, pretokenized, wrong):
            pass

    for lib in (tokviz, hf_lib):
        with pytest.raises(Exception, match=r"^TypeError: .*normalize\(\) missing 1 required positional argument: 'wrong'"):
            lib.normalizers.Normalizer.custom(BadNormalizer()).normalize_str("Hey")
        with pytest.raises(Exception, match=r"^TypeError: .*pre_tokenize\(\) missing 1 required positional argument: 'wrong'"):
            lib.pre_tokenizers.PreTokenizer.custom(BadPreTokenizer()).pre_tokenize_str("Hey")
