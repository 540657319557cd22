"""WordLevel: the simplest model, one pre-token -> one id.

A WordLevel model is a dictionary. Each pre-token (a whole word, as the pre-tokenizer
cut it) is looked up; if it is missing, the ``unk_token`` stands in for it:

>>> model = WordLevel({"hello": 0, "world": 1, "<unk>": 2}, unk_token="<unk>")
>>> model.tokenize("hello")
[Token(id=0, value='hello', offsets=(0, 5))]
>>> model.tokenize("hi")  # unknown: the unk token, covering the whole word
[Token(id=2, value='<unk>', offsets=(0, 2))]

This module also holds the vocabulary helpers every model shares (checking a
``{token: id}`` dict, the reverse map, HF's id-ordered vocab for tokenizer.json) and
the small base class that makes models immutable.

Left out: nothing of HF's WordLevel; training lives in ``trainer.py``.
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, ClassVar, NoReturn

from tokviz import _mutation
from tokviz._component import hf_debug
from tokviz.errors import SerializationError, SpecialTokenError, VocabularyError
from tokviz.models.base import ProvenVocab, Token


class FrozenModel:
    """Base of the models: HF's settable options, copy-on-write friendly.

    A model is built once in ``__init__``; the options HF lets you set afterwards
    (``model.dropout = 0.1``, ``model.unk_token = "<unk>"``, listed in ``_SETTABLE`` with
    the kind of value each takes) are checked as HF's setters check them (``TypeError``
    for a value of the wrong kind), then the model is rebuilt with the new option
    (``with_options``, which validates as the constructor does) and takes the rebuilt
    model's state, so derived tables (merge maps, caches) always match the options. Every
    edit bumps :mod:`tokviz._mutation`, so tokenizers rebuild what they derived from it.

    ``copy.copy(model)`` is cheap (the new model shares the old one's tables until one of
    them is edited, and an edit replaces the tables instead of changing them): that is what
    lets a :class:`~tokviz.tokenizer.Tokenizer` hand out a private model on first access.

    >>> model = WordLevel({"a": 0, "<unk>": 1})
    >>> model.unk_token = "a"; model.tokenize("b")
    [Token(id=0, value='a', offsets=(0, 1))]
    >>> model.unk_token = 3
    Traceback (most recent call last):
    ...
    TypeError: WordLevel.unk_token must be a string, got int 3.
    """

    __slots__ = ()
    #: option -> the kind of value HF's setter takes: "str", "str?" (or None), "bool", "bool?",
    #: "float?", "uint", "uint?".
    _SETTABLE: ClassVar[dict[str, str]] = {}

    def __setattr__(self, name: str, value: Any) -> None:
        kind = type(self)._SETTABLE.get(name)
        if kind is None:
            if hasattr(self, name):
                raise AttributeError(f"attribute '{name}' of '{type(self).__name__}' objects is not writable")
            raise AttributeError(f"'{type(self).__name__}' object has no attribute '{name}'")
        rebuilt = self.with_options(**{name: check_option(type(self).__name__, name, kind, value)})
        self._take_state(rebuilt)
        _mutation.bump()

    def __delattr__(self, name: str) -> NoReturn:
        raise AttributeError(f"can't delete attribute '{name}' of '{type(self).__name__}' objects")

    def _init(self, **values: Any) -> None:
        """Set the slots once, from ``__init__``."""
        for name, value in values.items():
            object.__setattr__(self, name, value)

    def _take_state(self, other: Any) -> None:
        for name in _slot_names(type(self)):
            if hasattr(other, name):
                object.__setattr__(self, name, getattr(other, name))

    def __copy__(self) -> Any:
        twin = object.__new__(type(self))
        twin._take_state(self)  # shared tables: an edit of either replaces them, never changes them
        return twin

    def _options(self) -> dict[str, Any]:
        """The constructor's arguments that rebuild this model (``with_options``, pickling)."""
        raise NotImplementedError

    def with_options(self, **changes: Any) -> Any:
        """A new model with some constructor arguments changed: ``model.with_options(unk_token="[UNK]")``."""
        return type(self)(**{**self._options(), **changes})

    def __reduce__(self) -> tuple[Any, ...]:
        return (_rebuild_model, (type(self), self._options()))

    def to_dict(self) -> dict[str, Any]:
        raise NotImplementedError

    def __repr__(self) -> str:  # HF's: BPE(dropout=None, ..., vocab={"a":0}, merges=[("a", "b")])
        return hf_debug(self.to_dict())

    def __str__(self) -> str:  # HF's: vocab and merges past 5 items end in "..."
        return hf_debug(self.to_dict(), 5)

    # What the encoding engine asks of a model (besides ``tokenize``, how to encode one word).

    @property
    def deterministic(self) -> bool:
        """Whether ``tokenize`` always gives the same tokens for the same word, so the engine
        may keep them: False while BPE's dropout is on."""
        return not getattr(self, "dropout", None)

    @property
    def cache_epoch(self) -> int:
        """How many times this model's word caches were emptied (``clear_cache``); the
        engine's caches of its words follow it, so the next encode is cold again."""
        return getattr(self, "_cache_epoch", 0)

    def word_tables(self) -> Any:
        """The tables the engine's word encoder for this kind of model reads (a frozen record,
        sharing the model's dicts, never copied), or None: the engine then calls ``tokenize``."""
        return None

    # The vocabulary, for models that keep it as ``_vocab`` (token -> id) and ``_vocab_r``
    # (id -> token): BPE, WordPiece and WordLevel.

    def token_to_id(self, token: str) -> int | None:
        return self._vocab.get(token)

    def id_to_token(self, id: int) -> str | None:
        return self._vocab_r.get(id)

    def get_vocab(self) -> dict[str, int]:
        return dict(self._vocab)

    def get_vocab_size(self) -> int:
        return len(self._vocab)


def _rebuild_model(cls: type, options: dict[str, Any]) -> Any:
    return cls(**options)


def _slot_names(cls: type) -> list[str]:
    names: list[str] = []
    for klass in cls.__mro__:
        names.extend(name for name in getattr(klass, "__slots__", ()) if name not in names)
    return names


_KIND_WORDS = {
    "str": "a string", "str?": "a string or None", "bool": "True or False", "bool?": "True, False or None",
    "float?": "a number or None", "float": "a number", "uint": "a whole number >= 0", "uint?": "a whole number >= 0 or None",
}


_KIND_TYPES = {"str": (str,), "bool": (bool,), "float": (int, float), "uint": (int,)}


def check_option(owner: str, name: str, kind: str, value: Any) -> Any:
    """A value for a model option, checked as HF's setter checks it (``TypeError`` for the
    wrong kind, ``OverflowError`` for a negative count), converted (``1 -> 1.0`` for floats).

    >>> check_option("BPE", "dropout", "float?", 1)
    1.0
    >>> check_option("BPE", "fuse_unk", "bool", "yes")
    Traceback (most recent call last):
    ...
    TypeError: BPE.fuse_unk must be True or False, got str 'yes'.
    """
    base = kind.rstrip("?")
    if value is None and kind.endswith("?"):
        return None
    if not isinstance(value, _KIND_TYPES[base]) or (base in ("float", "uint") and isinstance(value, bool)):
        raise TypeError(f"{owner}.{name} must be {_KIND_WORDS[kind]}, got {type(value).__name__} {value!r:.60}.")
    if base == "uint" and value < 0:
        raise OverflowError(f"{owner}.{name} must be a whole number >= 0, got {value}.")
    return float(value) if base == "float" else value


@dataclass(frozen=True, slots=True, eq=False)
class WordLevelTables:
    """A WordLevel model's tables for the engine (its own dict, shared, read only)."""

    vocab: dict[str, int]


class VocabularyTypeError(VocabularyError, TypeError):
    """A vocabulary of the wrong type (HF raises ``TypeError``)."""


def check_vocab(vocab: Mapping[str, int] | None, model_name: str) -> dict[str, int]:
    """A private copy of ``vocab`` after checking it is ``{str: non-negative int}`` (a
    :class:`~tokviz.models.base.ProvenVocab`, the guarded reader's copy, is kept as it is).

    >>> check_vocab({"a": 0, "b": 1}, "BPE")
    {'a': 0, 'b': 1}
    """
    if vocab is None:
        return {}
    if type(vocab) is ProvenVocab:
        return vocab  # (the reader's own copy, proven)
    if not isinstance(vocab, Mapping):
        raise VocabularyTypeError(
            f"The {model_name} vocabulary must be a dict of token -> id, not {type(vocab).__name__}."
        )
    # The common case checked in C: every key a str, every id a non-negative int (not bool).
    checked = dict(vocab)
    ids = checked.values()
    if not checked or (set(map(type, checked)) == {str} and set(map(type, ids)) == {int} and min(ids) >= 0):
        return checked  # (type() is int: a bool id is not one)
    checked = {}
    for token, token_id in vocab.items():
        if not isinstance(token, str):
            raise VocabularyError(f"The {model_name} vocabulary has a key that is not a string: {token!r}.")
        # bool is an int subclass; True as an id is a mistake, not an id.
        if not isinstance(token_id, int) or isinstance(token_id, bool) or token_id < 0:
            raise VocabularyError(
                f"The {model_name} vocabulary maps {token!r} to {token_id!r}; ids must be non-negative integers."
            )
        checked[token] = token_id
    return checked


def reverse_vocab(vocab: Mapping[str, int]) -> dict[int, str]:
    """``{id: token}``; when two tokens share an id the later one wins: ``{'a': 0} -> {0: 'a'}``."""
    return {token_id: token for token, token_id in vocab.items()}


def ordered_vocab(vocab_r: Mapping[int, str]) -> dict[str, int]:
    """The vocab in id order, as HF writes it in tokenizer.json (ids without a token are skipped).

    >>> ordered_vocab({2: "c", 0: "a"})
    {'a': 0, 'c': 2}
    """
    return {vocab_r[token_id]: token_id for token_id in sorted(vocab_r)}


def read_vocab_json(path: str, model_name: str) -> dict[str, int]:
    """Read a ``vocab.json`` file (``{"token": id, ...}``) as HF's ``read_file`` does."""
    try:
        with open(path, encoding="utf-8") as handle:
            data = json.load(handle)
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as error:
        raise SerializationError(f"Cannot read the {model_name} vocabulary file {path!r}: {error}") from error
    if not isinstance(data, dict):
        raise SerializationError(f"The {model_name} vocabulary file {path!r} must hold a JSON object of token -> id.")
    # HF skips entries whose value is not a number.
    return check_vocab({token: token_id for token, token_id in data.items() if isinstance(token_id, int)}, model_name)


def section_type(data: Any, expected: str) -> Mapping[str, Any]:
    """Check that ``data`` is a tokenizer.json "model" section of type ``expected``."""
    if not isinstance(data, Mapping):
        raise SerializationError(f"A {expected} model section must be a JSON object, not {type(data).__name__}.")
    found = data.get("type", expected)
    if found != expected:
        raise SerializationError(f"This model section is of type {found!r}, not {expected!r}.")
    if "vocab" not in data:
        raise SerializationError(f"The {expected} model section has no 'vocab'.")
    return data


def optional_str(data: Mapping[str, Any], key: str, default: str | None, model_name: str) -> str | None:
    """``data[key]`` when it is a string or null, else a clear error; ``default`` if absent."""
    value = data.get(key, default)
    if value is not None and not isinstance(value, str):
        raise SerializationError(f"The {model_name} field {key!r} must be a string or null, not {value!r}.")
    return value


class WordLevel(FrozenModel):
    """``WordLevel(vocab, unk_token="<unk>")``: each pre-token maps to one id.

    >>> WordLevel({"a": 0, "<unk>": 1}).tokenize("b")
    [Token(id=1, value='<unk>', offsets=(0, 1))]
    """

    __slots__ = ("_vocab", "_vocab_r", "_known", "unk_token")
    _SETTABLE: ClassVar[dict[str, str]] = {"unk_token": "str"}

    _vocab: dict[str, int]
    _vocab_r: dict[int, str]
    _known: dict[str, Token]
    unk_token: str

    def __init__(self, vocab: Mapping[str, int] | None = None, unk_token: str | None = None) -> None:
        if isinstance(vocab, str):  # HF's older form: WordLevel("vocab.json", unk_token)
            vocab = WordLevel.read_file(vocab)
        checked = check_vocab(vocab, "WordLevel")
        if unk_token is None:
            unk_token = "<unk>"  # HF's default
        if not isinstance(unk_token, str):
            raise SpecialTokenError(f"WordLevel's unk_token must be a string, not {unk_token!r}.")
        self._init(_vocab=checked, _vocab_r=reverse_vocab(checked), _known={}, unk_token=unk_token)

    def tokenize(self, sequence: str) -> list[Token]:
        """One token for the whole pre-token: the word, or the unk token when it is unknown."""
        known = self._known.get(sequence)
        if known is not None:
            return [known]
        token_id = self._vocab.get(sequence)
        if token_id is not None:
            # At most one Token per vocab entry, made on first use and shared after.
            known = self._known[sequence] = Token(token_id, sequence, (0, len(sequence)))
            return [known]
        unk_id = self._vocab.get(self.unk_token)
        if unk_id is None:
            raise VocabularyError(
                f"The word {sequence!r} is not in the WordLevel vocabulary and the unk_token "
                f"{self.unk_token!r} is not in it either; add the unk token to the vocabulary."
            )
        return [Token(unk_id, self.unk_token, (0, len(sequence)))]

    def word_tables(self) -> WordLevelTables:
        """What the engine's word encoder reads: the vocabulary (see :meth:`FrozenModel.word_tables`)."""
        return WordLevelTables(self._vocab)

    def _options(self) -> dict[str, Any]:
        return {"vocab": self._vocab, "unk_token": self.unk_token}

    def to_dict(self) -> dict[str, Any]:
        """The "model" section HF writes in tokenizer.json."""
        return {"type": "WordLevel", "vocab": ordered_vocab(self._vocab_r), "unk_token": self.unk_token}

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> WordLevel:
        """Read a tokenizer.json "model" section (``{"type": "WordLevel", "vocab": ..., "unk_token": ...}``)."""
        data = section_type(data, "WordLevel")
        try:
            return cls(data["vocab"], optional_str(data, "unk_token", "<unk>", "WordLevel"))
        except VocabularyError as error:
            raise SerializationError(str(error)) from error

    @staticmethod
    def read_file(vocab: str) -> dict[str, int]:
        """Read a ``vocab.json`` file into ``{token: id}``."""
        return read_vocab_json(vocab, "WordLevel")

    @classmethod
    def from_file(cls, vocab: str, unk_token: str | None = None) -> WordLevel:
        """``WordLevel.from_file("vocab.json", unk_token="<unk>")``, as in HF."""
        return cls(cls.read_file(vocab), unk_token)

    def save(self, folder: str, prefix: str | None = None) -> list[str]:
        """Write ``vocab.json`` (``{prefix}-vocab.json``) in id order, as HF's ``save``."""
        path = os.path.join(folder, f"{prefix}-vocab.json" if prefix else "vocab.json")
        with open(path, "w", encoding="utf-8") as handle:
            json.dump(ordered_vocab(self._vocab_r), handle, ensure_ascii=False, separators=(",", ":"))
        return [path]

