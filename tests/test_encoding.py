"""Encoding: lookups, truncation windows, padding, merging — literal values checked against HF."""

from __future__ import annotations

import pytest

from tokviz import Encoding
from tokviz.errors import TokvizError

tokenizers = pytest.importorskip("tokenizers")


def _hf_encoding(words: list[str], pair: list[str] | None = None):
    """An HF Encoding of whitespace words, built by a WordLevel tokenizer."""
    from tokenizers import Tokenizer, models, pre_tokenizers

    vocab = {word: index for index, word in enumerate(sorted(set(words + (pair or []))))}
    tok = Tokenizer(models.WordLevel(vocab, unk_token=words[0]))
    tok.pre_tokenizer = pre_tokenizers.WhitespaceSplit()
    return tok.encode(" ".join(words), " ".join(pair) if pair else None), vocab


def _ours(words: list[str], vocab: dict[str, int], type_id: int = 0) -> Encoding:
    triples, position = [], 0
    for word in words:
        triples.append((vocab[word], word, (position, position + len(word))))
        position += len(word) + 1
    return Encoding.from_tokens(triples, type_id=type_id, word_ids=list(range(len(words))))


def _fields(encoding) -> dict:
    return {
        name: getattr(encoding, name)
        for name in ("ids", "tokens", "offsets", "type_ids", "word_ids", "attention_mask", "special_tokens_mask", "sequence_ids")
    }


WORDS = ["the", "quick", "brown", "fox", "jumps", "over", "the", "lazy", "dog"]


def test_from_tokens_fields():
    enc = Encoding.from_tokens([(5, "he", (0, 2)), (6, "llo", (2, 5))], type_id=1)
    assert enc.ids == [5, 6]
    assert enc.tokens == ["he", "llo"]
    assert enc.offsets == [(0, 2), (2, 5)]
    assert enc.type_ids == [1, 1]
    assert enc.attention_mask == [1, 1]
    assert enc.special_tokens_mask == [0, 0]
    assert enc.word_ids == [None, None]
    assert enc.n_sequences == 1
    assert len(enc) == 2


def test_lookups_match_hf():
    theirs, vocab = _hf_encoding(WORDS)
    ours = _ours(WORDS, vocab)
    assert _fields(ours) == _fields(theirs) | {"sequence_ids": [0] * 9}
    for char in (0, 3, 4, 5, 10, 43, 44, 100):
        assert ours.char_to_token(char) == theirs.char_to_token(char), char
        assert ours.char_to_word(char) == theirs.char_to_word(char), char
    for token in (0, 4, 8):
        assert ours.token_to_chars(token) == theirs.token_to_chars(token)
        assert ours.token_to_word(token) == theirs.token_to_word(token)
    for word in (0, 3, 8, 9):
        assert ours.word_to_tokens(word) == theirs.word_to_tokens(word)
        assert ours.word_to_chars(word) == theirs.word_to_chars(word)
    assert ours.char_to_token(4) == 1 and ours.word_to_chars(2) == (10, 15)


@pytest.mark.parametrize("direction", ["right", "left"])
@pytest.mark.parametrize("max_length,stride", [(4, 1), (3, 0), (5, 2), (9, 0), (1, 0)])
def test_truncate_windows_match_hf(direction, max_length, stride):
    theirs, vocab = _hf_encoding(WORDS)
    ours = _ours(WORDS, vocab)
    theirs.truncate(max_length, stride=stride, direction=direction)
    ours.truncate(max_length, stride=stride, direction=direction)
    assert _fields(ours)["ids"] == theirs.ids
    assert ours.offsets == theirs.offsets
    assert [o.ids for o in ours.overflowing] == [o.ids for o in theirs.overflowing]


def test_truncate_worked_example():
    enc = Encoding.from_tokens([(i, str(i), (i, i + 1)) for i in range(10)])
    enc.truncate(4, stride=1)
    assert enc.ids == [0, 1, 2, 3]
    assert [o.ids for o in enc.overflowing] == [[3, 4, 5, 6], [6, 7, 8, 9]]


def test_truncate_to_zero_moves_everything_to_overflowing():
    enc = Encoding.from_tokens([(1, "a", (0, 1))])
    enc.truncate(0)
    assert enc.ids == [] and enc.overflowing[0].ids == [1]


def test_truncate_rejects_a_stride_as_long_as_the_window():
    enc = Encoding.from_tokens([(i, "x", (0, 1)) for i in range(5)])
    with pytest.raises(TokvizError, match="stride"):
        enc.truncate(2, stride=2)


@pytest.mark.parametrize("direction", ["right", "left"])
def test_pad_matches_hf(direction):
    theirs, vocab = _hf_encoding(WORDS[:3], WORDS[3:5])
    ours_a, ours_b = _ours(WORDS[:3], vocab), _ours(WORDS[3:5], vocab, type_id=1)
    ours_a.set_sequence_id(0)
    ours_b.set_sequence_id(1)
    ours = Encoding()
    ours.merge_with(ours_a)
    ours.merge_with(ours_b)
    ours._offsets = tuple(theirs.offsets)  # the pair's offsets restart at 0 in both; same by construction
    theirs.pad(8, direction=direction, pad_id=9, pad_type_id=2, pad_token="[PAD]")
    ours.pad(8, direction=direction, pad_id=9, pad_type_id=2, pad_token="[PAD]")
    assert _fields(ours) == _fields(theirs)


def test_pad_never_shortens_and_pads_overflowing():
    enc = Encoding.from_tokens([(i, "x", (i, i + 1)) for i in range(5)])
    enc.truncate(3)
    enc.pad(4)
    assert enc.ids == [0, 1, 2, 0]
    assert enc.overflowing[0].ids == [3, 4, 0, 0]
    assert enc.overflowing[0].attention_mask == [1, 1, 0, 0]
    enc.pad(2)
    assert len(enc) == 4


def test_merge_matches_hf_with_growing_offsets():
    from tokenizers import Encoding as HFEncoding

    theirs_a, vocab = _hf_encoding(WORDS[:2])
    theirs_b, _ = _hf_encoding(WORDS[:2])
    merged_theirs = HFEncoding.merge([theirs_a, theirs_b], growing_offsets=True)
    ours = Encoding.merge([_ours(WORDS[:2], vocab), _ours(WORDS[:2], vocab)], growing_offsets=True)
    assert ours.offsets == merged_theirs.offsets == [(0, 3), (4, 9), (9, 12), (13, 18)]
    assert ours.ids == merged_theirs.ids


def test_merge_combines_overflowing_pieces():
    first = Encoding.from_tokens([(i, "a", (0, 1)) for i in range(4)])
    first.truncate(2)
    second = Encoding.from_tokens([(9, "b", (0, 1))])
    first.merge_with(second)
    assert first.ids == [0, 1, 9]
    assert [o.ids for o in first.overflowing] == [[2, 3, 9]]


def test_bad_direction_is_a_user_error():
    with pytest.raises(TokvizError, match="direction"):
        Encoding.from_tokens([(1, "a", (0, 1))]).pad(3, direction="up")


def test_flat_offsets_encoding_acts_as_the_plain_one() -> None:
    # The fast lanes return offsets as two runs of ints (FlatOffsets); the pairs are made on
    # first use. Every way of using the encoding must see the same one as with pairs.
    import copy
    import pickle

    from tokviz.encoding import FlatOffsets, flat_offsets_encoding, new_encoding, pack_encodings, unpack_encodings

    def both():
        fields = ((1, 5, 6, 2), (0, 0, 0, 0), ("<s>", "he", "llo", "</s>"), (None, 0, 0, None))
        masks = ((1, 0, 0, 1), (1, 1, 1, 1), {0: (1, 3)})
        flat = flat_offsets_encoding(*fields, FlatOffsets(([0, 2, 5], None, 1, 1)), *masks[:2], dict(masks[2]))
        plain = new_encoding(*fields, ((0, 0), (0, 2), (2, 5), (0, 0)), *masks[:2], dict(masks[2]))
        return flat, plain

    flat, plain = both()
    assert flat.offsets == [(0, 0), (0, 2), (2, 5), (0, 0)] == plain.offsets and flat == plain
    assert type(flat) is Encoding  # (a plain one once its pairs are made)
    for use in (copy.copy, copy.deepcopy, lambda e: pickle.loads(pickle.dumps(e)), lambda e: e.copy(),
                lambda e: unpack_encodings(pack_encodings([e]))[0], lambda e: Encoding.merge([e, e])):
        flat, plain = both()
        assert use(flat) == use(plain) and use(flat).offsets == use(plain).offsets
    flat, plain = both()
    flat.truncate(2)
    plain.truncate(2)
    assert flat.offsets == plain.offsets == [(0, 0), (0, 2)] and flat.overflowing[0].offsets == plain.overflowing[0].offsets
    flat, plain = both()
    flat.pad(6, pad_id=0, pad_token="<pad>", direction="left")
    plain.pad(6, pad_id=0, pad_token="<pad>", direction="left")
    assert flat.offsets == plain.offsets and flat.char_to_token(3) == plain.char_to_token(3) == 4
    flat, plain = both()
    assert flat.word_to_chars(0) == (0, 5) and flat.token_to_chars(2) == (2, 5)
    assert FlatOffsets(([0, 1], [1, 3], 0, 0)).pairs() == ((0, 1), (1, 3))


def test_fast_lane_encodings_share_their_sequence_ranges_but_each_edit_is_its_own() -> None:
    # Encodings of the same length from one template share their {0: range} dict (one object
    # less per line for the cycle collector to walk while they live); every edit of the
    # ranges -- set_sequence_id, merge_with, post-processing again -- must give that encoding
    # a dict of its own and leave the others as they were.
    from tokviz import Tokenizer, models, pre_tokenizers, processors

    tok = Tokenizer(models.WordLevel({"<unk>": 0, "<s>": 1, "hi": 2, "yo": 3}, unk_token="<unk>"))
    tok.pre_tokenizer = pre_tokenizers.WhitespaceSplit()
    tok.post_processor = processors.TemplateProcessing(single="<s> $A", special_tokens=[("<s>", 1)])
    first, second, third = tok.encode("hi yo"), tok.encode("yo hi"), tok.encode("yo yo")
    assert first._sequence_ranges is second._sequence_ranges  # (shared: the point of this)
    first.set_sequence_id(1)
    assert first._sequence_ranges == {0: (1, 3), 1: (0, 3)}
    assert second._sequence_ranges == third._sequence_ranges == {0: (1, 3)}
    assert second.sequence_ids == [None, 0, 0]
    second.merge_with(tok.encode("hi", add_special_tokens=False))
    assert second._sequence_ranges == {0: (3, 4)} and third._sequence_ranges == {0: (1, 3)}
    assert third.sequence_ids == [None, 0, 0]


def test_a_line_with_an_added_token_keeps_its_offsets_flat_through_the_template() -> None:
    # A line with an added token goes by the chunk lane, then the template: its offsets stay
    # two runs of ints (no pair per token) until read, and read as the general path gives them.
    from tokviz import Tokenizer, models, pre_tokenizers, processors
    from tokviz.encoding import flat_offsets_of

    tok = Tokenizer(models.WordLevel({"<unk>": 0, "<s>": 1, "hi": 2, "yo": 3, "[X]": 4}, unk_token="<unk>"))
    tok.pre_tokenizer = pre_tokenizers.WhitespaceSplit()
    tok.add_special_tokens(["[X]"])
    tok.post_processor = processors.TemplateProcessing(single="<s> $A", special_tokens=[("<s>", 1)])
    encoding = tok.encode("hi [X] yo zz")
    assert flat_offsets_of(encoding) == ((0, 3, 7, 10), (2, 6, 9, 12), 1, 0)
    assert encoding.ids == [1, 2, 4, 3, 0]
    assert encoding.offsets == [(0, 0), (0, 2), (3, 6), (7, 9), (10, 12)]
    assert flat_offsets_of(encoding) is None  # (read: pairs now)
