"""SentencePiece's ``.model`` file: a protobuf ``ModelProto``, read and written by our own small codec.

A ``.model`` holds the pieces (text, score, type), the options the model was trained with
(``TrainerSpec``), and how text is normalized (``NormalizerSpec``, with the precompiled
charsmap of the normalization rule). The wire format is protobuf's: each field is a key
``(field_number << 3) | wire_type`` followed by a varint, a 4-byte float or a length-prefixed
blob. The schema below is the part of sentencepiece's ``sentencepiece_model.proto`` we need;
fields we do not know (``self_test_data``, newer options) are kept as raw bytes and written
back unchanged, so a model read and written again loses nothing.

Like protobuf's proto2 messages, a spec remembers which fields were *set*: only those are
written, and an unset field reads as its default::

    >>> spec = TrainerSpec(vocab_size=100)
    >>> spec.vocab_size, spec.unk_id, spec.is_set("unk_id")
    (100, 0, False)
    >>> proto = ModelProto(pieces=(SentencePiece("<unk>", 0.0, PieceType.UNKNOWN), SentencePiece("▁a", -1.0)),
    ...                    trainer_spec=spec)
    >>> ModelProto.from_bytes(proto.to_bytes()) == proto
    True

This version leaves out ``SelfTestData`` as a typed message (it round-trips as raw bytes).
"""

from __future__ import annotations

import enum
import struct
from dataclasses import dataclass, field
from typing import Any, ClassVar, Iterable, Iterator

from tokviz.errors import SerializationError

__all__ = ["PieceType", "ModelType", "SentencePiece", "TrainerSpec", "NormalizerSpec", "ModelProto"]


class PieceType(enum.IntEnum):
    """``ModelProto.SentencePiece.Type``."""

    NORMAL = 1
    UNKNOWN = 2
    CONTROL = 3
    USER_DEFINED = 4
    UNUSED = 5
    BYTE = 6


class ModelType(enum.IntEnum):
    """``TrainerSpec.ModelType``."""

    UNIGRAM = 1
    BPE = 2
    WORD = 3
    CHAR = 4


# --------------------------------------------------------------------------- wire format

_VARINT, _FIXED64, _BYTES, _FIXED32 = 0, 1, 2, 5


def _read_varint(data: bytes, pos: int) -> tuple[int, int]:
    """``(value, next_pos)``: ``_read_varint(b"\\xac\\x02", 0) == (300, 2)``."""
    result = shift = 0
    while True:
        if pos >= len(data):
            raise SerializationError("The .model file is truncated (a number runs past its end).")
        byte = data[pos]
        pos += 1
        result |= (byte & 0x7F) << shift
        if not byte & 0x80:
            return result, pos
        shift += 7
        if shift > 70:
            raise SerializationError("The .model file is malformed (a number is longer than 10 bytes).")


def _write_varint(value: int, out: bytearray) -> None:
    if value < 0:  # int32 / int64 negatives are 10-byte two's complement
        value += 1 << 64
    while value > 0x7F:
        out.append((value & 0x7F) | 0x80)
        value >>= 7
    out.append(value)


def _iter_fields(data: bytes, pos: int = 0) -> Iterator[tuple[int, int, Any, bytes]]:
    """Yield ``(field_number, wire_type, value, raw_bytes_of_the_whole_field)`` from ``pos`` on."""
    n = len(data)
    while pos < n:
        start = pos
        key, pos = _read_varint(data, pos)
        number, wire = key >> 3, key & 7
        if number == 0:
            raise SerializationError("The .model file is malformed (field number 0).")
        if wire == _VARINT:
            value, pos = _read_varint(data, pos)
        elif wire == _FIXED32:
            if pos + 4 > n:
                raise SerializationError("The .model file is truncated (a 4-byte field runs past its end).")
            value, pos = data[pos:pos + 4], pos + 4
        elif wire == _FIXED64:
            if pos + 8 > n:
                raise SerializationError("The .model file is truncated (an 8-byte field runs past its end).")
            value, pos = data[pos:pos + 8], pos + 8
        elif wire == _BYTES:
            length, pos = _read_varint(data, pos)
            if pos + length > n:
                raise SerializationError("The .model file is truncated (a field runs past its end).")
            value, pos = data[pos:pos + length], pos + length
        else:
            raise SerializationError(f"The .model file is malformed (wire type {wire} is not supported).")
        yield number, wire, value, data[start:pos]


# kind -> (wire type, decode(raw value), encode(value) -> bytes-or-int)
def _signed(value: int) -> int:
    return value - (1 << 64) if value >= 1 << 63 else value


_KINDS: dict[str, int] = {
    "string": _BYTES, "bytes": _BYTES, "float": _FIXED32, "int32": _VARINT, "uint64": _VARINT, "bool": _VARINT, "enum": _VARINT,
}


def _decode(kind: str, wire: int, value: Any) -> Any:
    if wire != _KINDS[kind]:
        raise SerializationError(f"The .model file is malformed (a {kind} field has wire type {wire}).")
    if kind == "string":
        try:
            return bytes(value).decode("utf-8")
        except UnicodeDecodeError as exc:
            raise SerializationError("The .model file is malformed (a text field is not UTF-8).") from exc
    if kind == "bytes":
        return bytes(value)
    if kind == "float":
        return struct.unpack("<f", value)[0]
    if kind == "int32":
        signed = _signed(value)
        return signed - (1 << 32) if signed >= 1 << 31 else signed
    if kind == "bool":
        return bool(value)
    return int(value)


def _encode_field(number: int, kind: str, value: Any, out: bytearray) -> None:
    wire = _KINDS[kind]
    _write_varint((number << 3) | wire, out)
    if kind == "string":
        blob = value.encode("utf-8")
        _write_varint(len(blob), out)
        out += blob
    elif kind == "bytes":
        _write_varint(len(value), out)
        out += value
    elif kind == "float":
        out += struct.pack("<f", value)
    else:
        _write_varint(int(value), out)


# --------------------------------------------------------------------------- specs


def _rebuild_spec(cls: type, unknown: tuple[bytes, ...], values: dict[str, Any]) -> Any:
    return cls(_unknown=unknown, **values)


class _Spec:
    """A proto2 message with scalar fields: set fields in a dict, unset ones read as defaults."""

    #: name -> (field number, kind, repeated, default)
    SCHEMA: ClassVar[dict[str, tuple[int, str, bool, Any]]] = {}
    __slots__ = ("_values", "_unknown")

    def __init__(self, _unknown: tuple[bytes, ...] = (), **values: Any) -> None:
        clean: dict[str, Any] = {}
        for name, value in values.items():
            if name not in self.SCHEMA:
                raise TypeError(f"{type(self).__name__} has no field {name!r}")
            _, kind, repeated, _ = self.SCHEMA[name]
            clean[name] = tuple(_coerce(kind, v) for v in value) if repeated else _coerce(kind, value)
        object.__setattr__(self, "_values", clean)
        object.__setattr__(self, "_unknown", tuple(_unknown))

    def __getattr__(self, name: str) -> Any:
        schema = type(self).SCHEMA
        if name in schema:
            values = object.__getattribute__(self, "_values")
            if name in values:
                return values[name]
            return () if schema[name][2] else schema[name][3]
        raise AttributeError(name)

    def __setattr__(self, name: str, value: Any) -> None:
        raise AttributeError(f"{type(self).__name__} is immutable; use .replace({name}=...)")

    def __reduce__(self) -> tuple[Any, ...]:  # pickle (histories go to worker processes) through __init__
        return (_rebuild_spec, (type(self), self._unknown, self._values))

    def is_set(self, name: str) -> bool:
        return name in self._values

    def set_fields(self) -> dict[str, Any]:
        """The fields that were set, by name: ``TrainerSpec(vocab_size=5).set_fields() == {"vocab_size": 5}``."""
        return dict(self._values)

    def replace(self, **values: Any) -> "_Spec":
        merged = dict(self._values)
        merged.update(values)
        return type(self)(_unknown=self._unknown, **merged)

    def __eq__(self, other: object) -> bool:
        return type(other) is type(self) and self._values == other._values and self._unknown == other._unknown  # type: ignore[attr-defined]

    def __hash__(self) -> int:
        return hash((type(self).__name__, tuple(sorted(self._values.items())), self._unknown))

    def __repr__(self) -> str:
        body = ", ".join(f"{k}={v!r}" for k, v in self._values.items() if k != "precompiled_charsmap")
        if "precompiled_charsmap" in self._values:
            body += f", precompiled_charsmap=<{len(self._values['precompiled_charsmap'])} bytes>"
        return f"{type(self).__name__}({body})"

    def to_bytes(self) -> bytes:
        out = bytearray()
        for name, (number, kind, repeated, _) in sorted(self.SCHEMA.items(), key=lambda item: item[1][0]):
            if name not in self._values:
                continue
            value = self._values[name]
            for item in (value if repeated else (value,)):
                _encode_field(number, kind, item, out)
        for raw in self._unknown:
            out += raw
        return bytes(out)

    @classmethod
    def from_bytes(cls, data: bytes) -> "_Spec":
        by_number = {number: (name, kind, repeated) for name, (number, kind, repeated, _) in cls.SCHEMA.items()}
        values: dict[str, Any] = {}
        unknown: list[bytes] = []
        for number, wire, value, raw in _iter_fields(data):
            if number not in by_number:
                unknown.append(raw)
                continue
            name, kind, repeated = by_number[number]
            decoded = _decode(kind, wire, value)
            if repeated:
                values[name] = values.get(name, ()) + (decoded,)
            else:
                values[name] = decoded
        return cls(_unknown=tuple(unknown), **values)


def _coerce(kind: str, value: Any) -> Any:
    if kind == "string":
        if not isinstance(value, str):
            raise TypeError(f"expected text, got {value!r}")
        return value
    if kind == "bytes":
        return bytes(value)
    if kind == "float":
        return struct.unpack("<f", struct.pack("<f", float(value)))[0]  # stored as float32
    if kind == "bool":
        return bool(value)
    return int(value)


class TrainerSpec(_Spec):
    """``sentencepiece.TrainerSpec``: the options a model was trained with (defaults as in sentencepiece)."""

    SCHEMA = {
        "input": (1, "string", True, ()),
        "model_prefix": (2, "string", False, ""),
        "model_type": (3, "enum", False, int(ModelType.UNIGRAM)),
        "vocab_size": (4, "int32", False, 8000),
        "accept_language": (5, "string", True, ()),
        "self_test_sample_size": (6, "int32", False, 0),
        "input_format": (7, "string", False, ""),
        "character_coverage": (10, "float", False, _coerce("float", 0.9995)),
        "input_sentence_size": (11, "uint64", False, 0),
        "mining_sentence_size": (12, "int32", False, 0),
        "training_sentence_size": (13, "int32", False, 0),
        "seed_sentencepiece_size": (14, "int32", False, 1_000_000),
        "shrinking_factor": (15, "float", False, 0.75),
        "num_threads": (16, "int32", False, 16),
        "num_sub_iterations": (17, "int32", False, 2),
        "max_sentence_length": (18, "int32", False, 4192),
        "shuffle_input_sentence": (19, "bool", False, True),
        "max_sentencepiece_length": (20, "int32", False, 16),
        "split_by_unicode_script": (21, "bool", False, True),
        "split_by_whitespace": (22, "bool", False, True),
        "split_by_number": (23, "bool", False, True),
        "treat_whitespace_as_suffix": (24, "bool", False, False),
        "split_digits": (25, "bool", False, False),
        "allow_whitespace_only_pieces": (26, "bool", False, False),
        "control_symbols": (30, "string", True, ()),
        "user_defined_symbols": (31, "string", True, ()),
        "vocabulary_output_piece_score": (32, "bool", False, True),
        "hard_vocab_limit": (33, "bool", False, True),
        "use_all_vocab": (34, "bool", False, False),
        "byte_fallback": (35, "bool", False, False),
        "required_chars": (36, "string", False, ""),
        "unk_id": (40, "int32", False, 0),
        "bos_id": (41, "int32", False, 1),
        "eos_id": (42, "int32", False, 2),
        "pad_id": (43, "int32", False, -1),
        "unk_surface": (44, "string", False, " \u2047 "),
        "unk_piece": (45, "string", False, "<unk>"),
        "bos_piece": (46, "string", False, "<s>"),
        "eos_piece": (47, "string", False, "</s>"),
        "pad_piece": (48, "string", False, "<pad>"),
        "train_extremely_large_corpus": (49, "bool", False, False),
        "enable_differential_privacy": (50, "bool", False, False),
        "differential_privacy_noise_level": (51, "float", False, 0.0),
        "differential_privacy_clipping_threshold": (52, "uint64", False, 0),
        "pretokenization_delimiter": (53, "string", False, ""),
        "seed_sentencepieces_file": (54, "string", False, ""),
        "auto_character_coverage": (55, "bool", False, False),
    }


class NormalizerSpec(_Spec):
    """``sentencepiece.NormalizerSpec``: the rule name, its precompiled charsmap and the whitespace switches."""

    SCHEMA = {
        "name": (1, "string", False, ""),
        "precompiled_charsmap": (2, "bytes", False, b""),
        "add_dummy_prefix": (3, "bool", False, True),
        "remove_extra_whitespaces": (4, "bool", False, True),
        "escape_whitespaces": (5, "bool", False, True),
        "normalization_rule_tsv": (6, "string", False, ""),
    }


# --------------------------------------------------------------------------- ModelProto


@dataclass(frozen=True, slots=True)
class SentencePiece:
    """One piece of the vocabulary: ``SentencePiece("▁the", -3.2)``; its id is its position."""

    piece: str
    score: float = 0.0
    type: PieceType = PieceType.NORMAL

    def __post_init__(self) -> None:
        object.__setattr__(self, "score", _coerce("float", self.score))
        object.__setattr__(self, "type", PieceType(self.type))

    def to_bytes(self) -> bytes:
        out = bytearray()
        _encode_field(1, "string", self.piece, out)
        _encode_field(2, "float", self.score, out)
        if self.type != PieceType.NORMAL:
            _encode_field(3, "enum", int(self.type), out)
        return bytes(out)

    @classmethod
    def from_bytes(cls, data: bytes) -> "SentencePiece":
        piece, score, kind = "", 0.0, 1
        for number, wire, value, _ in _iter_fields(data):
            if number == 1:
                piece = _decode("string", wire, value)
            elif number == 2:
                score = _decode("float", wire, value)
            elif number == 3:
                kind = _decode("enum", wire, value)
        try:
            return cls(piece, score, PieceType(kind))
        except ValueError as exc:
            raise SerializationError(f"The .model file has a piece {piece!r} of unknown type {kind}.") from exc


_FLOAT = struct.Struct("<f")
_TYPES = {int(kind): kind for kind in PieceType}
_new_piece = object.__new__
_set = object.__setattr__


def _read_pieces(data: bytes) -> tuple[list[SentencePiece], int]:
    """The pieces at the start of a ``.model`` (field 1, as sentencepiece writes them first), read
    without the general field loop: ``(pieces, where the first other field starts)``.

    A piece is usually ``0a <size> 0a <length> <text> [15 <float32>] [18 <type>]`` with one-byte
    sizes: read in place, the object made without re-checking what was just read. Any other
    layout of a piece goes through :meth:`SentencePiece.from_bytes`.

        >>> piece = SentencePiece("▁a", -1.0, PieceType.USER_DEFINED).to_bytes()
        >>> _read_pieces(bytes([0x0A, len(piece)]) + piece + bytes([0x12, 0]))
        ([SentencePiece(piece='▁a', score=-1.0, type=<PieceType.USER_DEFINED: 4>)], 15)
    """
    pieces: list[SentencePiece] = []
    pos, end = 0, len(data)
    unpack, types, new, put = _FLOAT.unpack_from, _TYPES, _new_piece, _set
    normal = PieceType.NORMAL
    while pos < end and data[pos] == 0x0A:
        after = pos + 2 + data[pos + 1] if pos + 1 < end else end + 1
        if after <= end and data[pos + 1] < 0x80 and pos + 4 <= after and data[pos + 2] == 0x0A and data[pos + 3] < 0x80:
            at = pos + 4 + data[pos + 3]  # (the text's end)
            score, kind = 0.0, normal
            if at + 5 <= after and data[at] == 0x15:
                score = unpack(data, at + 1)[0]
                at += 5
            if at + 2 == after and data[at] == 0x18 and data[at + 1] in types:
                kind = types[data[at + 1]]
                at += 2
            if at == after:
                try:
                    text = data[pos + 4:pos + 4 + data[pos + 3]].decode("utf-8")
                except UnicodeDecodeError:
                    text = None  # (the general reader says what is wrong)
                if text is not None:
                    piece = new(SentencePiece)
                    put(piece, "piece", text)
                    put(piece, "score", score)
                    put(piece, "type", kind)
                    pieces.append(piece)
                    pos = after
                    continue
        size, start = _read_varint(data, pos + 1)
        if start + size > end:
            raise SerializationError("The .model file is truncated (a field runs past its end).")
        pieces.append(SentencePiece.from_bytes(data[start:start + size]))
        pos = start + size
    return pieces, pos


def _write_pieces(pieces: Iterable[SentencePiece]) -> bytes:
    """The pieces as field 1 of a ``.model``, the inverse of :func:`_read_pieces`: a normal piece of up to
    120 UTF-8 bytes is ``0a <size> 0a <length> <text> 15 <float32>``, joined in one pass (4,000 pieces:
    ~1 ms against ~4 through :meth:`SentencePiece.to_bytes`); any other piece goes through that method.

        >>> _write_pieces([SentencePiece("▁a", -1.0)]).hex(" ")
        '0a 0b 0a 04 e2 96 81 61 15 00 00 80 bf'
    """
    pack, normal = _FLOAT.pack, PieceType.NORMAL
    parts: list[bytes] = []
    add = parts.append
    for piece in pieces:
        text = piece.piece.encode("utf-8")
        size = len(text)
        if size <= 120 and piece.type is normal:
            add(bytes((0x0A, size + 7, 0x0A, size)) + text + b"\x15" + pack(piece.score))
        else:
            blob = piece.to_bytes()
            out = bytearray()
            _write_varint((1 << 3) | _BYTES, out)
            _write_varint(len(blob), out)
            add(bytes(out) + blob)
    return b"".join(parts)


def normal_pieces(items: Iterable[tuple[str, float]]) -> list[SentencePiece]:
    """``[SentencePiece(piece, score) for piece, score in items]`` made in bulk (a trainer's thousands of
    pieces): the scores rounded to float32 in one struct pass, the records made without re-checking them.

        >>> normal_pieces([("▁a", 0.1)])
        [SentencePiece(piece='▁a', score=0.10000000149011612, type=<PieceType.NORMAL: 1>)]
    """
    items = list(items)
    if not all(type(piece) is str for piece, _ in items):
        return [SentencePiece(piece, score) for piece, score in items]
    scores = struct.unpack(f"<{len(items)}f", struct.pack(f"<{len(items)}f", *(score for _, score in items)))
    new, put, normal = _new_piece, _set, PieceType.NORMAL
    made: list[SentencePiece] = []
    add = made.append
    for (text, _), score in zip(items, scores):
        piece = new(SentencePiece)
        put(piece, "piece", text)
        put(piece, "score", score)
        put(piece, "type", normal)
        add(piece)
    return made


@dataclass(frozen=True, slots=True)
class ModelProto:
    """A whole ``.model``: pieces, trainer spec, normalizer spec (and the optional denormalizer spec)."""

    pieces: tuple[SentencePiece, ...] = ()
    trainer_spec: TrainerSpec = field(default_factory=TrainerSpec)
    normalizer_spec: NormalizerSpec = field(default_factory=NormalizerSpec)
    denormalizer_spec: NormalizerSpec | None = None
    unknown_fields: tuple[bytes, ...] = ()

    def __post_init__(self) -> None:
        object.__setattr__(self, "pieces", tuple(self.pieces))

    def to_bytes(self) -> bytes:
        """Serialize as protobuf wire format (what ``.model`` files hold)."""
        out = bytearray(_write_pieces(self.pieces))
        for number, spec in ((2, self.trainer_spec), (3, self.normalizer_spec), (5, self.denormalizer_spec)):
            if spec is None:
                continue
            blob = spec.to_bytes()
            _write_varint((number << 3) | _BYTES, out)
            _write_varint(len(blob), out)
            out += blob
        for raw in self.unknown_fields:
            out += raw
        return bytes(out)

    @classmethod
    def from_bytes(cls, data: bytes | bytearray | memoryview) -> "ModelProto":
        """Parse a ``.model``; a file that is not one raises :class:`SerializationError`."""
        data = bytes(data)
        if not data:
            raise SerializationError("The .model file is empty.")
        pieces, start = _read_pieces(data)  # (the usual layout, fast; the rest field by field)
        specs: dict[int, Any] = {}
        unknown: list[bytes] = []
        for number, wire, value, raw in _iter_fields(data, start):
            if number in (1, 2, 3, 5) and wire != _BYTES:
                raise SerializationError("This file is not a SentencePiece .model (unexpected field layout).")
            if number == 1:
                pieces.append(SentencePiece.from_bytes(value))
            elif number == 2:
                specs[2] = TrainerSpec.from_bytes(value)
            elif number == 3:
                specs[3] = NormalizerSpec.from_bytes(value)
            elif number == 5:
                specs[5] = NormalizerSpec.from_bytes(value)
            else:
                unknown.append(raw)
        if not pieces:
            raise SerializationError("This file is not a SentencePiece .model (it has no pieces).")
        return cls(
            pieces=tuple(pieces),
            trainer_spec=specs.get(2, TrainerSpec()),
            normalizer_spec=specs.get(3, NormalizerSpec()),
            denormalizer_spec=specs.get(5),
            unknown_fields=tuple(unknown),
        )

    def replace(self, **changes: Any) -> "ModelProto":
        values = {name: getattr(self, name) for name in ("pieces", "trainer_spec", "normalizer_spec", "denormalizer_spec", "unknown_fields")}
        values.update(changes)
        return ModelProto(**values)

