"""Editable protobuf messages with the ``google.protobuf`` Python API, on :mod:`model_proto`'s codec.

User code and ``transformers``' converters edit a ``.model`` like this::

    m = sentencepiece_model_pb2.ModelProto()
    m.ParseFromString(open("m.model", "rb").read())
    m.normalizer_spec.add_dummy_prefix = False
    p = m.pieces.add(); p.piece = "<new>"; p.score = 0.0; p.type = m.SentencePiece.USER_DEFINED
    open("m2.model", "wb").write(m.SerializeToString())

:class:`Message` gives those names (``ParseFromString``, ``SerializeToString``, ``HasField``,
``ClearField``, ``CopyFrom``, ``MergeFrom``, ``ListFields``, ``pieces.add()``, nested enums as class
attributes) over the one wire codec of :mod:`tokviz.sentencepiece.model_proto`. Like proto2, a field
remembers whether it was set; only set fields are written, in field-number order, and fields this
schema does not know are kept and written back, so a file read and written again keeps its bytes.

Why not depend on ``protobuf``: the ``sentencepiece`` wheel itself does not (its ``*_pb2`` modules
need it only when imported), tokviz's runtime requirements do not list it, and the messages here are
five small schemas on a codec tokviz already has for reading ``.model`` files.

    >>> class Point(Message):
    ...     FIELDS = {"x": (1, "int32", False, 0), "name": (2, "string", False, "")}
    >>> p = Point(x=3)
    >>> p.SerializeToString()
    b'\\x08\\x03'
    >>> q = Point(); _ = q.ParseFromString(b'\\x08\\x03\\x12\\x01a'); (q.x, q.name, q.HasField("name"))
    (3, 'a', True)

This version leaves out extensions, ``oneof`` and the text format parser (``str()`` prints a text
form, but nothing reads it back).
"""

from __future__ import annotations

from typing import Any, ClassVar, Iterator

from tokviz.errors import SerializationError
from tokviz.sentencepiece.model_proto import _coerce, _decode, _encode_field, _iter_fields, _write_varint

__all__ = ["Message", "RepeatedScalar", "RepeatedMessages", "DecodeError", "EnumType"]


class DecodeError(SerializationError):
    """``google.protobuf.message.DecodeError``: bytes that are not this message."""


class EnumType:
    """A protobuf enum's descriptor-like helper: ``Type.Name(1) == 'NORMAL'``, ``Type.Value('BPE') == 2``."""

    def __init__(self, values: dict[str, int]) -> None:
        self._values = dict(values)
        for name, number in values.items():
            setattr(self, name, number)

    def Name(self, number: int) -> str:
        for name, value in self._values.items():
            if value == number:
                return name
        raise ValueError(f"Enum has no name defined for value {number!r}")

    def Value(self, name: str) -> int:
        try:
            return self._values[name]
        except KeyError:
            raise ValueError(f"Enum has no value defined for name {name!r}") from None

    def keys(self) -> list[str]:
        return list(self._values)

    def values(self) -> list[int]:
        return list(self._values.values())

    def items(self) -> list[tuple[str, int]]:
        return list(self._values.items())


def _check_scalar(kind: str, value: Any, name: str) -> Any:
    if kind == "string":
        if isinstance(value, bytes):
            try:
                value = value.decode("utf-8")
            except UnicodeDecodeError:
                raise ValueError(f"{name}: {value!r} is not valid UTF-8") from None
        if not isinstance(value, str):
            raise TypeError(f"{value!r} has type {type(value).__name__}, but expected one of: bytes, str")
        return value
    if kind == "bytes":
        if not isinstance(value, (bytes, bytearray)):
            raise TypeError(f"{value!r} has type {type(value).__name__}, but expected one of: bytes")
        return bytes(value)
    if kind == "float":
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            raise TypeError(f"{value!r} has type {type(value).__name__}, but expected one of: int, float")
        return _coerce("float", value)
    if kind == "bool":
        if not isinstance(value, (bool, int)):
            raise TypeError(f"{value!r} has type {type(value).__name__}, but expected one of: bool, int")
        return bool(value)
    if isinstance(value, bool) or not hasattr(value, "__index__"):
        raise TypeError(f"{value!r} has type {type(value).__name__}, but expected one of: int")
    value = int(value)
    if kind in ("uint32", "uint64") and value < 0:
        raise ValueError(f"Value out of range: {value}")
    return value


class RepeatedScalar(list):
    """A repeated scalar field: a list whose items are checked like the field's kind."""

    def __init__(self, kind: str, name: str, items: Any = ()) -> None:
        self._kind, self._name = kind, name
        super().__init__(_check_scalar(kind, v, name) for v in items)

    def append(self, value: Any) -> None:
        super().append(_check_scalar(self._kind, value, self._name))

    def extend(self, values: Any) -> None:
        super().extend(_check_scalar(self._kind, v, self._name) for v in values)

    def __setitem__(self, index: Any, value: Any) -> None:
        if isinstance(index, slice):
            super().__setitem__(index, [_check_scalar(self._kind, v, self._name) for v in value])
        else:
            super().__setitem__(index, _check_scalar(self._kind, value, self._name))

    def __eq__(self, other: object) -> bool:
        return list(self) == list(other) if isinstance(other, (list, tuple)) else NotImplemented

    __hash__ = None  # type: ignore[assignment]


class RepeatedMessages(list):
    """A repeated message field: ``add(**fields)`` makes and appends a new message, as protobuf's."""

    def __init__(self, cls: type["Message"]) -> None:
        super().__init__()
        self._cls = cls

    def add(self, **fields: Any) -> "Message":
        item = self._cls(**fields)
        super().append(item)
        return item

    def append(self, item: "Message") -> None:
        if not isinstance(item, self._cls):
            raise TypeError(f"expected {self._cls.__name__}, got {type(item).__name__}")
        copy = self._cls()
        copy.CopyFrom(item)
        super().append(copy)

    def extend(self, items: Any) -> None:
        for item in items:
            self.append(item)

    def __eq__(self, other: object) -> bool:
        return list(self) == list(other) if isinstance(other, (list, tuple)) else NotImplemented

    __hash__ = None  # type: ignore[assignment]


class Message:
    """A proto2 message: ``FIELDS = {name: (number, kind, repeated, default)}``; ``kind`` is a scalar
    kind of :mod:`model_proto` (``"string"``, ``"float"``, ``"int32"``, ``"enum"``...) or a Message class."""

    FIELDS: ClassVar[dict[str, tuple[int, Any, bool, Any]]] = {}

    def __init__(self, **fields: Any) -> None:
        object.__setattr__(self, "_values", {})
        object.__setattr__(self, "_unknown", [])
        for name, value in fields.items():
            if name not in self.FIELDS:
                raise ValueError(f'Protocol message {type(self).__name__} has no "{name}" field.')
            _, kind, repeated, _ = self.FIELDS[name]
            if repeated:
                getattr(self, name).extend(value)
            elif isinstance(kind, type):
                getattr(self, name).CopyFrom(value)
            else:
                setattr(self, name, value)

    # -- fields -----------------------------------------------------------------------

    def __getattr__(self, name: str) -> Any:
        fields = type(self).FIELDS
        if name not in fields:
            raise AttributeError(f"{type(self).__name__} has no attribute {name!r}")
        values = object.__getattribute__(self, "_values")
        if name in values:
            return values[name]
        _, kind, repeated, default = fields[name]
        if repeated:
            values[name] = RepeatedMessages(kind) if isinstance(kind, type) else RepeatedScalar(kind, name)
            return values[name]
        if isinstance(kind, type):
            values[name] = kind()  # (present once one of its fields is set: see _present)
            return values[name]
        return default

    def __setattr__(self, name: str, value: Any) -> None:
        fields = type(self).FIELDS
        if name not in fields:
            raise AttributeError(f'Assignment not allowed (no field "{name}" in protocol message object).')
        _, kind, repeated, _ = fields[name]
        if repeated:
            raise AttributeError(f'Assignment not allowed to repeated field "{name}" in protocol message object.')
        if isinstance(kind, type):
            raise AttributeError(f'Assignment not allowed to composite field "{name}" in protocol message object.')
        self._values[name] = _check_scalar(kind, value, name)

    def _present(self, name: str) -> bool:
        if name not in self._values:
            return False
        _, kind, repeated, _ = self.FIELDS[name]
        value = self._values[name]
        if repeated:
            return len(value) > 0
        if isinstance(kind, type):
            return value._nonempty()
        return True

    def _nonempty(self) -> bool:
        return bool(self._unknown) or any(self._present(name) for name in self._values) or getattr(self, "_touched", False)

    def HasField(self, name: str) -> bool:
        if name not in self.FIELDS:
            raise ValueError(f'Protocol message {type(self).__name__} has no field {name}.')
        if self.FIELDS[name][2]:
            raise ValueError(f'Protocol message has no singular "{name}" field.')
        return self._present(name)

    def ClearField(self, name: str) -> None:
        if name not in self.FIELDS:
            raise ValueError(f'Protocol message {type(self).__name__} has no "{name}" field.')
        self._values.pop(name, None)

    def Clear(self) -> None:
        self._values.clear()
        self._unknown.clear()

    def ListFields(self) -> list[tuple[Any, Any]]:
        """``[(name, value), ...]`` of the set fields in field-number order (protobuf gives descriptors; here names)."""
        return [(name, getattr(self, name)) for name in self._ordered() if self._present(name)]

    def _ordered(self) -> list[str]:
        return sorted(self.FIELDS, key=lambda name: self.FIELDS[name][0])

    # -- copies -----------------------------------------------------------------------

    def CopyFrom(self, other: "Message") -> None:
        if not isinstance(other, type(self)):
            raise TypeError(f"Parameter to CopyFrom() must be instance of same class: expected {type(self).__name__} got {type(other).__name__}.")
        if other is self:
            return
        self.Clear()
        self.MergeFrom(other)

    def MergeFrom(self, other: "Message") -> None:
        if not isinstance(other, type(self)):
            raise TypeError(f"Parameter to MergeFrom() must be instance of same class: expected {type(self).__name__} got {type(other).__name__}.")
        for name in other._ordered():
            if not other._present(name):
                continue
            _, kind, repeated, _ = self.FIELDS[name]
            value = getattr(other, name)
            if repeated:
                getattr(self, name).extend(value)
            elif isinstance(kind, type):
                getattr(self, name).MergeFrom(value)
                object.__setattr__(getattr(self, name), "_touched", True)
            else:
                self._values[name] = value
        self._unknown.extend(other._unknown)

    def __deepcopy__(self, memo: Any) -> "Message":
        copy = type(self)()
        copy.CopyFrom(self)
        return copy

    def __reduce__(self) -> tuple[Any, ...]:
        return (_from_bytes, (type(self), self.SerializeToString()))

    # -- bytes ------------------------------------------------------------------------

    def SerializeToString(self, deterministic: bool | None = None) -> bytes:
        out = bytearray()
        for name in self._ordered():
            if not self._present(name):
                continue
            number, kind, repeated, _ = self.FIELDS[name]
            value = self._values[name]
            for item in (value if repeated else (value,)):
                if isinstance(kind, type):
                    blob = item.SerializeToString()
                    _write_varint((number << 3) | 2, out)
                    _write_varint(len(blob), out)
                    out += blob
                else:
                    _encode_field(number, "int32" if kind == "uint32" else kind, item, out)
        for raw in self._unknown:
            out += raw
        return bytes(out)

    SerializePartialToString = SerializeToString

    def ByteSize(self) -> int:
        return len(self.SerializeToString())

    def MergeFromString(self, data: bytes) -> int:
        data = bytes(data)
        by_number = {spec[0]: name for name, spec in self.FIELDS.items()}
        try:
            for number, wire, value, raw in _iter_fields(data):
                name = by_number.get(number)
                if name is None:
                    self._unknown.append(raw)
                    continue
                _, kind, repeated, _ = self.FIELDS[name]
                if isinstance(kind, type):
                    if wire != 2:
                        raise SerializationError(f"field {name} has wire type {wire}")
                    if repeated:
                        item = kind()
                        item.MergeFromString(value)
                        list.append(getattr(self, name), item)
                    else:
                        sub = getattr(self, name)
                        sub.MergeFromString(value)
                        object.__setattr__(sub, "_touched", True)
                    continue
                decoded = _decode("int32" if kind == "uint32" else kind, wire, value)
                if kind in ("uint32", "uint64") and decoded < 0:
                    decoded &= (1 << 32) - 1 if kind == "uint32" else (1 << 64) - 1
                if repeated:
                    list.append(getattr(self, name), decoded)
                else:
                    self._values[name] = decoded
        except SerializationError as exc:
            raise DecodeError(f"Error parsing message with type '{type(self).__name__}': {exc}") from None
        return len(data)

    def ParseFromString(self, data: bytes) -> int:
        self.Clear()
        return self.MergeFromString(data)

    @classmethod
    def FromString(cls, data: bytes) -> "Message":
        message = cls()
        message.MergeFromString(data)
        return message

    # -- comparison and printing ------------------------------------------------------

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Message) or type(other).FIELDS is not type(self).FIELDS:
            return NotImplemented
        return self.SerializeToString() == other.SerializeToString()

    __hash__ = None  # type: ignore[assignment]

    def _text(self, indent: str) -> Iterator[str]:
        for name in self._ordered():
            if not self._present(name):
                continue
            _, kind, repeated, _ = self.FIELDS[name]
            for item in (getattr(self, name) if repeated else (getattr(self, name),)):
                if isinstance(kind, type):
                    yield f"{indent}{name} {{"
                    yield from item._text(indent + "  ")
                    yield f"{indent}}}"
                elif kind in ("string", "bytes"):
                    shown = item if isinstance(item, str) else item.decode("latin-1")
                    escaped = shown.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n")
                    yield f'{indent}{name}: "{escaped}"'
                elif kind == "bool":
                    yield f"{indent}{name}: {'true' if item else 'false'}"
                elif kind == "enum":
                    enum = getattr(type(self), "_ENUMS", {}).get(name)
                    yield f"{indent}{name}: {enum.Name(item) if enum is not None else item}"
                else:
                    yield f"{indent}{name}: {item:g}" if kind == "float" else f"{indent}{name}: {item}"

    def __str__(self) -> str:
        lines = list(self._text(""))
        return "\n".join(lines) + ("\n" if lines else "")

    def __repr__(self) -> str:
        return str(self)


def _from_bytes(cls: type[Message], data: bytes) -> Message:
    return cls.FromString(data)
