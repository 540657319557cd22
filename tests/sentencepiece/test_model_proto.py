"""tokviz.sentencepiece.model_proto: the ``.model`` codec -- read and written again byte for byte, set
fields remembered as proto2 does, and what it writes read by sentencepiece."""

from __future__ import annotations

import io

import pytest

from tokviz.errors import SerializationError
from tokviz.sentencepiece.model_proto import (ModelProto, ModelType, NormalizerSpec, PieceType, SentencePiece, TrainerSpec,
                                              normal_pieces)

spm = pytest.importorskip("sentencepiece")


def _trained(**options) -> bytes:
    model = io.BytesIO()
    spm.SentencePieceTrainer.train(sentence_iterator=iter(["hello world", "hello there", "a world of words"] * 20),
                                   model_writer=model, minloglevel=2, **{"vocab_size": 18, **options})
    return model.getvalue()


@pytest.mark.parametrize("options", [{"model_type": "unigram"}, {"model_type": "bpe", "byte_fallback": True, "vocab_size": 290}, {"model_type": "char"}])
def test_a_trained_model_reads_and_writes_back_unchanged(options) -> None:
    data = _trained(**options)
    proto = ModelProto.from_bytes(data)
    assert proto.to_bytes() == data
    processor = spm.SentencePieceProcessor(model_proto=data)
    assert [piece.piece for piece in proto.pieces] == [processor.id_to_piece(i) for i in range(processor.get_piece_size())]
    assert proto.pieces[0] == SentencePiece("<unk>", 0.0, PieceType.UNKNOWN)
    assert proto.trainer_spec.model_type == ModelType[options["model_type"].upper()]
    assert proto.normalizer_spec.name == "nmt_nfkc" and proto.normalizer_spec.precompiled_charsmap


def test_set_fields_are_remembered_as_proto2_does() -> None:
    spec = TrainerSpec(vocab_size=100)
    assert (spec.vocab_size, spec.unk_id, spec.is_set("unk_id"), spec.is_set("vocab_size")) == (100, 0, False, True)
    assert spec.to_bytes() == b"\x20\x64"  # field 4 (vocab_size), varint 100; nothing else written
    assert TrainerSpec.from_bytes(spec.to_bytes()) == spec
    changed = spec.replace(unk_id=3)
    assert (changed.unk_id, spec.unk_id) == (3, 0)
    with pytest.raises(AttributeError, match="immutable"):
        spec.vocab_size = 5


def test_what_we_write_sentencepiece_loads() -> None:
    proto = ModelProto.from_bytes(_trained(model_type="unigram"))
    extra = SentencePiece("▁tokviz", -1.0, PieceType.USER_DEFINED)
    edited = proto.replace(pieces=proto.pieces + (extra,), normalizer_spec=proto.normalizer_spec.replace(add_dummy_prefix=False))
    processor = spm.SentencePieceProcessor(model_proto=edited.to_bytes())
    assert processor.piece_to_id("▁tokviz") == len(proto.pieces)
    assert processor.encode("hello", out_type=str)[0] != "▁hello"  # no dummy prefix now


def test_unknown_fields_survive_a_round_trip() -> None:
    data = ModelProto(pieces=(SentencePiece("<unk>", 0.0, PieceType.UNKNOWN),), normalizer_spec=NormalizerSpec(name="identity")).to_bytes()
    with_unknown = data + b"\xa8\x06\x01"  # field 101, varint 1: not in our schema
    assert ModelProto.from_bytes(with_unknown).to_bytes() == with_unknown


def _field(number: int, wire: int, payload: bytes) -> bytes:
    """One protobuf field: a one-byte key, then (length-prefixed) bytes; lengths up to 16,383."""
    if wire != 2:
        return bytes([number << 3 | wire]) + payload
    size = len(payload)
    length = bytes([size]) if size < 0x80 else bytes([size & 0x7F | 0x80, size >> 7])
    return bytes([number << 3 | 2]) + length + payload


def test_pieces_in_every_layout_read_alike() -> None:
    # sentencepiece writes text, score, type; older files leave out a zero score, a normal type may be
    # written or not, texts may pass 127 bytes, and another writer may order the fields otherwise
    long_text = "▁" + "x" * 200
    score = bytes.fromhex("0000c0bf")  # -1.5 as float32
    pieces = [
        _field(1, 2, b"<unk>") + _field(3, 0, b"\x02"),                  # no score
        _field(1, 2, "▁a".encode()) + _field(2, 5, score),               # no type
        _field(1, 2, b"b") + _field(2, 5, score) + _field(3, 0, b"\x01"),  # normal type written
        _field(1, 2, b"<x>") + _field(2, 5, score) + _field(3, 0, b"\x04"),
        _field(1, 2, long_text.encode()) + _field(2, 5, score),          # two-byte lengths
        _field(2, 5, score) + _field(1, 2, b"c"),                        # score first
        _field(1, 2, b"d") + _field(2, 5, score),
    ]
    data = b"".join(_field(1, 2, piece) for piece in pieces) + _field(2, 2, TrainerSpec(vocab_size=7).to_bytes())
    proto = ModelProto.from_bytes(data)
    assert proto.pieces == (SentencePiece("<unk>", 0.0, PieceType.UNKNOWN), SentencePiece("▁a", -1.5),
                            SentencePiece("b", -1.5), SentencePiece("<x>", -1.5, PieceType.USER_DEFINED),
                            SentencePiece(long_text, -1.5), SentencePiece("c", -1.5), SentencePiece("d", -1.5))
    assert proto.trainer_spec.vocab_size == 7
    assert all(type(piece.type) is PieceType for piece in proto.pieces)


@pytest.mark.parametrize("data, message", [
    (_field(1, 2, _field(1, 2, b"a") + _field(2, 5, b"\0\0\0\0"))[:-2], "truncated"),  # a piece cut short
    (_field(1, 2, _field(1, 2, b"\xff") + _field(2, 5, b"\0\0\0\0")), "not UTF-8"),
    (_field(1, 2, _field(1, 2, b"a") + _field(3, 0, b"\x09")), "unknown type 9"),
])
def test_a_bad_piece_says_what_is_wrong(data: bytes, message: str) -> None:
    with pytest.raises(SerializationError, match=message):
        ModelProto.from_bytes(data)


def test_pieces_written_in_bulk_are_each_piece_written_alone() -> None:
    pieces = [SentencePiece("<unk>", 0.0, PieceType.UNKNOWN), SentencePiece("▁a", -1.0), SentencePiece("x" * 120, -2.5),
              SentencePiece("y" * 121, -3.0), SentencePiece("é" * 200, 0.1), SentencePiece("<0x41>", 0.0, PieceType.BYTE),
              SentencePiece("", 0.0)]
    proto = ModelProto(pieces=pieces)
    expected = bytearray()
    for piece in pieces:
        blob = piece.to_bytes()
        size = len(blob)
        expected += b"\x0a" + (bytes([size]) if size < 0x80 else bytes([size & 0x7F | 0x80, size >> 7])) + blob
    assert proto.to_bytes().startswith(bytes(expected))
    assert ModelProto.from_bytes(proto.to_bytes()).pieces == tuple(pieces)
    # the one-byte layout, literally: 0a <size> 0a <length> <text> 15 <float32>
    assert ModelProto(pieces=[SentencePiece("▁a", -1.0)]).to_bytes().startswith(bytes.fromhex("0a0b0a04e2968161150000 80bf".replace(" ", "")))


def test_normal_pieces_are_sentencepieces_with_float32_scores() -> None:
    made = normal_pieces([("▁a", 0.1), ("b", -3.0)])
    assert made == [SentencePiece("▁a", 0.1), SentencePiece("b", -3.0)]
    assert made[0].score == 0.10000000149011612 and made[0].type is PieceType.NORMAL
    assert normal_pieces([]) == []
