"""What pipeline components share: HF's repr, HF's pickled state, and checked, mutable options.

A component is described by its tokenizer.json fragment (``to_dict()``). From it come

- ``repr`` as HF prints it (Rust's ``Debug``): ``Strip(content=" ", start=1, stop=0)``,
  ``Split(pattern=String("-"), behavior=Removed, invert=False)``;
- ``__getstate__``: HF's JSON bytes (``b'{"type":"NFC"}'``), which pickling and
  ``copy`` / ``deepcopy`` go through, so a copy never shares state with its original.

>>> class Strip(JsonComponent):
...     def to_dict(self):
...         return {"type": "Strip", "content": " ", "start": 1}
>>> Strip(), Strip() == Strip()
(Strip(content=" ", start=1), True)
>>> Strip().__getstate__()
b'{"type":"Strip","content":" ","start":1}'

Components are mutable as HF's are (``decoder.prefix = "__"``); every edit calls
:func:`tokviz._mutation.bump`. Equal by value, so not hashable.
"""

from __future__ import annotations

import dataclasses
import functools
import json
from typing import Any, Callable, ClassVar

from tokviz import _mutation
from tokviz.errors import SerializationError, TokvizError

#: Fields HF prints bare (Rust enums), not as quoted strings.
_ENUM_KEYS = frozenset({"behavior", "prepend_scheme"})
#: Fields HF prints as Rust tuples: ``sep=("[SEP]", 102)``.
_TUPLE_KEYS = frozenset({"sep", "cls"})


def _debug_value(key: str | None, value: Any) -> str:
    if isinstance(value, dict):
        if "type" in value:
            return hf_repr(value)
        if key == "special_tokens":  # TemplateProcessing's map: {"[CLS]":SpecialToken(id=..., ids=[1], ...)}
            return "{" + ", ".join(
                f"{_quoted(k)}:" + (f"SpecialToken({', '.join(f'{n}={_debug_value(n, x)}' for n, x in v.items())})" if isinstance(v, dict) else _debug_value(None, v))
                for k, v in value.items()
            ) + "}"
        if len(value) == 1:
            (variant, inner), = value.items()
            if isinstance(inner, dict):  # {"SpecialToken": {"id": "[CLS]", "type_id": 0}}
                fields = ", ".join(
                    f"{name}={item if (variant, name) == ('Sequence', 'id') else _debug_value(name, item)}"
                    for name, item in inner.items()
                )
                return f"{variant}({fields})"
            if variant in ("String", "Regex") and isinstance(inner, str):
                return f'{variant}("{inner}")'  # HF prints the pattern as written
        return "{" + ", ".join(f"{_quoted(k)}: {_debug_value(k, v)}" for k, v in value.items()) + "}"
    if isinstance(value, str):
        return value if key in _ENUM_KEYS else _quoted(value)
    if isinstance(value, (list, tuple)):
        items = ", ".join(_debug_value(None, item) for item in value)
        return f"({items})" if key in _TUPLE_KEYS else f"[{items}]"
    return repr(value)


def _quoted(text: str) -> str:
    '''A string as HF's reprs print it: between double quotes, nothing escaped, so a quote
    prints as three (``content="""``).'''
    return f'"{text}"'


def hf_repr(data: dict[str, Any]) -> str:
    """A tokenizer.json fragment as HF's ``repr`` prints the component.

    >>> hf_repr({"type": "Metaspace", "replacement": "▁", "prepend_scheme": "always", "split": True})
    'Metaspace(replacement="▁", prepend_scheme=always, split=True)'
    >>> hf_repr({"type": "Sequence", "normalizers": [{"type": "NFC"}, {"type": "Lowercase"}]})
    'Sequence(normalizers=[NFC(), Lowercase()])'
    """
    fields = ", ".join(f"{key}={_debug_value(key, value)}" for key, value in data.items() if key != "type")
    return f"{data['type']}({fields})"


def state_bytes(data: dict[str, Any]) -> bytes:
    """HF's ``__getstate__`` of a component: its fragment as compact JSON bytes."""
    return json.dumps(data, ensure_ascii=False, separators=(",", ":")).encode("utf-8")


def rebuild(cls: type, state: bytes | str) -> Any:
    """Build a component of ``cls`` from HF's JSON state (what pickling calls)."""
    component = cls._from_state_dict(json.loads(state))
    if not isinstance(component, cls):
        raise TypeError(f"This state describes a {type(component).__name__}, not a {cls.__name__}: {str(state)[:80]!r}.")
    return component


class StatefulComponent:
    """HF's state, pickling, copies and repr for a component with ``to_dict``; subclasses
    say how to build one from a fragment (``_from_state_dict``)."""

    __slots__ = ()

    def to_dict(self) -> dict[str, Any]:
        raise NotImplementedError

    @classmethod
    def _from_state_dict(cls, data: dict[str, Any]) -> Any:
        raise NotImplementedError

    def __getstate__(self) -> bytes:
        return state_bytes(self.to_dict())

    def __setstate__(self, state: bytes | str) -> None:
        other = rebuild(type(self), state)
        for name in _attribute_names(other):
            object.__setattr__(self, name, getattr(other, name))

    def __reduce__(self) -> tuple[Callable[..., Any], tuple[Any, ...]]:
        return rebuild, (type(self), self.__getstate__())

    def __copy__(self) -> Any:
        return rebuild(type(self), self.__getstate__())

    def __deepcopy__(self, memo: dict[int, Any]) -> Any:
        return rebuild(type(self), self.__getstate__())

    def __repr__(self) -> str:
        return hf_repr(self.to_dict())


def _attribute_names(component: Any) -> list[str]:
    names = list(getattr(component, "__dict__", {}))
    for klass in type(component).__mro__:
        for name in getattr(klass, "__slots__", ()):
            if name not in names and hasattr(component, name):
                names.append(name)
    return names


_SIMPLE_TYPES: dict[str, tuple[type, ...]] = {"bool": (bool,), "str": (str,), "int": (int,)}


def check_field_type(component: Any, name: str, annotation: str, value: Any) -> None:
    """Refuse a value of the wrong simple type (HF's ``TypeError``), e.g. ``lowercase='x'``."""
    optional = False
    if annotation.endswith(" | None"):
        annotation, optional = annotation[: -len(" | None")], True
    if annotation.startswith("Optional[") and annotation.endswith("]"):
        annotation, optional = annotation[9:-1], True
    expected = _SIMPLE_TYPES.get(annotation)
    if expected is None or (optional and value is None):
        return
    wrong = not isinstance(value, expected) or (annotation == "int" and isinstance(value, bool))
    if wrong:
        what = {"bool": "True or False", "str": "a string", "int": "a whole number"}[annotation]
        raise TypeError(
            f"{type(component).__name__}.{name} must be {what}{' or None' if optional else ''}, "
            f"got {type(value).__name__} {value!r:.60}."
        )


class DataclassComponent(StatefulComponent):
    """A component written as a (slotted, non-frozen) dataclass whose fields are HF's options.

    Setting a field after construction checks its type, re-runs ``__post_init__`` (which
    checks and derives what the constructor does; a refused value is rolled back) and bumps
    the mutation counter. ``_READ_ONLY`` names the fields HF refuses to set, with its message.
    """

    __slots__ = ()
    _READ_ONLY: ClassVar[dict[str, str]] = {}

    def __setattr__(self, name: str, value: Any) -> None:
        if name.startswith("_") or not _is_set(self, name):
            object.__setattr__(self, name, value)
            return
        refusal = type(self)._READ_ONLY.get(name)
        if refusal is not None:
            raise Exception(refusal)  # HF's type for this refusal
        field = next((f for f in dataclasses.fields(self) if f.name == name), None)  # type: ignore[arg-type]
        if field is None:
            object.__setattr__(self, name, value)
            return
        if isinstance(field.type, str):
            check_field_type(self, name, field.type, value)
        previous = getattr(self, name)
        object.__setattr__(self, name, value)
        post_init = getattr(self, "__post_init__", None)
        if post_init is not None:
            try:
                post_init()
            except BaseException:
                object.__setattr__(self, name, previous)
                post_init()
                raise
        _mutation.bump()


def _is_set(component: Any, name: str) -> bool:
    try:
        object.__getattribute__(component, name)
    except AttributeError:
        return False
    return True


class JsonComponent(StatefulComponent):
    """A plain-class component (decoders, post-processors): equal when it would serialize the
    same. A public attribute set after construction goes through the class's check for it
    (``_CHECKS[name](value) -> value``, raising HF's exception type) and bumps the counter.

    >>> class Suffix(JsonComponent):
    ...     _CHECKS = {"suffix": lambda value: check_str("Suffix", "suffix", value)}
    ...     def __init__(self):
    ...         self.suffix = "</w>"
    >>> component = Suffix()
    >>> component.suffix = 3
    Traceback (most recent call last):
    ...
    TypeError: Suffix suffix must be a string, got int 3.
    """

    _CHECKS: dict[str, Callable[[Any], Any]] = {}
    #: Its tokenizer.json fragment's fields, in HF's order, as attributes of the same names:
    #: ``to_dict`` writes them (tuples as lists) after the type (the class that declares them
    #: names it), and ``from_fields`` passes the ones a fragment has to the constructor.
    _FIELDS: ClassVar[tuple[str, ...]] = ()

    def to_dict(self) -> dict[str, Any]:
        kind = next(klass.__name__ for klass in type(self).__mro__ if "_FIELDS" in vars(klass))
        values = {name: getattr(self, name) for name in self._FIELDS}
        return {"type": kind, **{name: list(value) if isinstance(value, tuple) else value for name, value in values.items()}}

    @classmethod
    def from_fields(cls, data: dict[str, Any]) -> Any:
        return cls(**{name: data[name] for name in cls._FIELDS if name in data})

    def __eq__(self, other: object) -> bool:
        return type(self) is type(other) and self.to_dict() == other.to_dict()  # type: ignore[attr-defined]

    __hash__ = None  # type: ignore[assignment]  # equal by value and mutable: not hashable

    def __setattr__(self, name: str, value: Any) -> None:
        if not name.startswith("_"):
            check = type(self)._CHECKS.get(name)
            if check is not None:  # in the constructor too, so a wrong type is HF's TypeError there as well
                value = check(value)
            if name in self.__dict__:
                _mutation.bump()
        object.__setattr__(self, name, value)


class CustomComponent:
    """A Python object used as a component (HF's ``custom``): it runs in this process only, and
    tokenizer.json cannot name it, so saving or pickling a tokenizer holding one raises, as HF does.
    A subclass names what it is (``_WHAT``), the method the object needs (``_NEEDS``, as a message
    shows it) and HF's refusal to serialize (``_UNSERIALIZABLE``)."""

    __slots__ = ()
    _WHAT: ClassVar[str]
    _NEEDS: ClassVar[str]
    _UNSERIALIZABLE: ClassVar[str]

    def __init__(self, inner: Any) -> None:
        if not callable(getattr(inner, self._NEEDS.split("(")[0], None)):
            raise TypeError(f"A custom {self._WHAT} needs a {self._NEEDS} method; {type(inner).__name__} has none.")
        object.__setattr__(self, "inner", inner)

    def __eq__(self, other: object) -> bool:
        return type(other) is type(self) and other.inner is self.inner  # type: ignore[attr-defined]

    __hash__ = None  # type: ignore[assignment]

    def to_dict(self) -> dict[str, Any]:
        raise Exception(self._UNSERIALIZABLE)

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.inner!r})"  # type: ignore[attr-defined]

    def __copy__(self) -> Any:
        return type(self)(self.inner)  # type: ignore[attr-defined]

    def __deepcopy__(self, memo: dict[int, Any]) -> Any:
        import copy

        return type(self)(copy.deepcopy(self.inner, memo))  # type: ignore[attr-defined]


class SequenceItems:
    """HF's ``Sequence`` indexing for a component holding its members in the field ``_ITEMS``:
    ``seq[i]`` is the member itself (editing it edits the Sequence), negative from the end,
    ``seq[i] = x`` replaces it (checked and counted as an edit, as setting the field is)."""

    __slots__ = ()
    _ITEMS: ClassVar[str]

    def __len__(self) -> int:
        return len(getattr(self, self._ITEMS))

    def __getitem__(self, index: int) -> Any:
        items = getattr(self, self._ITEMS)
        return items[sequence_index(items, index)]

    def __setitem__(self, index: int, item: Any) -> None:
        items = list(getattr(self, self._ITEMS))
        items[sequence_index(items, index)] = item
        setattr(self, self._ITEMS, items)


def sequence_index(items: Any, index: Any) -> int:
    """``index`` into a Sequence, negative from the end; HF's ``IndexError`` past either end."""
    if isinstance(index, bool) or not isinstance(index, int):
        raise TypeError(f"Sequence indices must be integers, not {type(index).__name__}.")
    position = index + len(items) if index < 0 else index
    if not 0 <= position < len(items):
        raise IndexError(f"Index not found: {index} is outside this Sequence of {len(items)}.")
    return position


def fragment_field(data: dict[str, Any], name: str, default: Any = ..., what: str = "component") -> Any:
    """``data[name]``, or ``default`` when the fragment has no such field; without a default, a
    missing field is a :class:`SerializationError` naming the component (``what``)."""
    if name in data:
        return data[name]
    if default is ...:
        raise SerializationError(f"The {data.get('type')} {what} is missing its {name!r} field.")
    return default


def from_fields(cls: type, data: dict[str, Any], what: str) -> Any:
    """A dataclass component from a fragment whose fields are named as the dataclass's: each
    field the fragment has, the dataclass's default for the others (a field without one must be
    there, see :func:`fragment_field`)."""
    return cls(**{
        field.name: fragment_field(data, field.name, ... if field.default is dataclasses.MISSING else field.default, what)
        for field in dataclasses.fields(cls)
    })


class ArgumentTypeError(TokvizError, TypeError):
    """An argument of the wrong type (HF raises ``TypeError``; still a :class:`TokvizError`)."""


class NegativeArgumentError(TokvizError, OverflowError):
    """A count or an id below zero (HF raises ``OverflowError``; still a :class:`TokvizError`)."""


def check_whole(owner: str, name: str, value: Any) -> int:
    """A whole number >= 0, as HF's unsigned arguments: ``ArgumentTypeError`` for another type,
    ``NegativeArgumentError`` below zero.

    >>> check_whole("enable_truncation", "max_length", -1)
    Traceback (most recent call last):
    ...
    tokviz._component.NegativeArgumentError: enable_truncation max_length must be a whole number >= 0, got -1.
    """
    if isinstance(value, bool) or not hasattr(value, "__index__"):
        raise ArgumentTypeError(f"{owner} {name} must be a whole number, got {type(value).__name__} {value!r:.60}.")
    value = value.__index__()
    if value < 0:
        raise NegativeArgumentError(f"{owner} {name} must be a whole number >= 0, got {value}.")
    return value


def field_checks(owner: str, **checks: Callable[[str, str, Any], Any]) -> dict[str, Callable[[Any], Any]]:
    """A :class:`JsonComponent`'s ``_CHECKS``: ``field=check`` checks a value as ``check(owner, field, value)``."""
    return {name: functools.partial(check, owner, name) for name, check in checks.items()}


def check_str(owner: str, name: str, value: Any) -> str:
    if not isinstance(value, str):
        raise TypeError(f"{owner} {name} must be a string, got {type(value).__name__} {value!r:.60}.")
    return value


def check_bool(owner: str, name: str, value: Any) -> bool:
    if not isinstance(value, bool):
        raise TypeError(f"{owner} {name} must be True or False, got {type(value).__name__} {value!r:.60}.")
    return value


def check_token_id_pair(owner: str, name: str, value: Any) -> tuple[str, int]:
    """``("[SEP]", 102)``: a token and its id (HF's ``TypeError`` otherwise)."""
    if (
        not isinstance(value, (tuple, list)) or len(value) != 2 or not isinstance(value[0], str)
        or isinstance(value[1], bool) or not isinstance(value[1], int)
    ):
        raise TypeError(f"{owner} {name} must be a (token, id) pair such as ('[SEP]', 102), got {value!r:.60}.")
    return (value[0], value[1])


def hf_debug(value: Any, limit: int | None = None, key: str | None = None) -> str:
    """A tokenizer.json value as HF's ``repr`` (``limit=None``) or ``str`` (``limit=5``: lists and
    maps longer than that end in ``...``) prints models and tokenizers.

    >>> hf_debug({"type": "Unigram", "unk_id": 0, "vocab": [["A", 0.0], ["B", -0.01]]})
    'Unigram(unk_id=0, vocab=[("A", 0), ("B", -0.01)])'
    >>> hf_debug({"a": 0, "b": 1, "c": 2}, limit=2)
    '{"a":0, "b":1, ...}'
    """
    if isinstance(value, dict):
        if "type" in value and key != "vocab":
            fields = ", ".join(f"{name}={hf_debug(item, limit, name)}" for name, item in value.items() if name != "type")
            return f"{value['type']}({fields})"
        items = [f"{_quoted(name)}:{hf_debug(item, limit)}" for name, item in value.items()]
        return "{" + ", ".join(_elide(items, limit)) + "}"
    if isinstance(value, (list, tuple)):
        if key in ("vocab", "merges"):  # Rust tuples: ("a", "b"), ("A", -0.01)
            items = ["(" + ", ".join(hf_debug(part, limit) for part in item) + ")" if isinstance(item, (list, tuple)) else hf_debug(item, limit) for item in value]
        else:
            items = [hf_debug(item, limit) for item in value]
        return "[" + ", ".join(_elide(items, limit)) + "]"
    if isinstance(value, bool) or value is None:
        return repr(value)
    if isinstance(value, float):
        return str(int(value)) if value.is_integer() else repr(value)
    if isinstance(value, str):
        return _quoted(value)
    return repr(value)


def _elide(items: list[str], limit: int | None) -> list[str]:
    return items if limit is None or len(items) <= limit else [*items[:limit], "..."]
