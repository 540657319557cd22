"""What every trainer shares: HF's ``trainers.Trainer`` surface over tokviz's options.

HF's trainers are mutable: ``trainer.vocab_size = 500`` and ``trainer.special_tokens =
["<s>"]`` work, are checked as the constructor checks them, and ``special_tokens`` reads
back as :class:`~tokviz.AddedToken` s (``special=True``, ``normalized=False`` unless the
token given says otherwise). A trainer holds options only: training returns an immutable
history, so editing a trainer never changes a history or a model already trained.

>>> from tokviz.trainers import WordLevelTrainer
>>> trainer = WordLevelTrainer(vocab_size=10, special_tokens=["[UNK]"])
>>> trainer.special_tokens
[AddedToken("[UNK]", rstrip=False, lstrip=False, single_word=False, normalized=False, special=True)]
>>> trainer.vocab_size = -1
Traceback (most recent call last):
...
tokviz.models.trainer.NegativeOptionError: vocab_size must be a whole number >= 0, got -1 (HF: can't convert negative int to unsigned).

Each option is checked by a small validator (:data:`Trainer._VALIDATORS`), on construction
and on every assignment, with HF's exception types (a ``TypeError`` for a wrong type, an
``OverflowError`` for a negative count) that are also tokviz errors, so the app's
``except TokvizError`` still catches them. Every assignment bumps
:func:`tokviz._mutation.bump`.

Pickling and ``__getstate__`` use HF's JSON form (``{"BpeTrainer": {...}}``); tokviz's own
options (``tie_break``, ``scoring``, ``method``) are added only when they differ from
their defaults, so a trainer built as in HF serializes exactly as HF's.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable
from typing import Any, ClassVar

from tokviz import _mutation
from tokviz.errors import SpecialTokenError, TokvizError, VocabSizeError

__all__ = [
    "Trainer",
    "NegativeOptionError",
    "OptionTypeError",
    "SpecialTokenTypeError",
    "check_count",
    "check_optional_count",
    "check_bool",
    "check_optional_str",
    "special_added_tokens",
]


class NegativeOptionError(VocabSizeError, OverflowError):
    """A count option below zero (HF raises ``OverflowError``)."""


class OptionTypeError(VocabSizeError, TypeError):
    """An option of the wrong type (HF raises ``TypeError``)."""


class SpecialTokenTypeError(SpecialTokenError, TypeError):
    """A special token that is neither a string nor an AddedToken (HF raises ``TypeError``)."""


def check_count(name: str, value: Any, minimum: int = 0) -> int:
    """A whole number ``>= minimum`` (``0`` as HF; tokviz asks ``vocab_size >= 1``).

    >>> check_count("min_frequency", 2)
    2
    """
    if isinstance(value, bool) or not isinstance(value, int):
        raise OptionTypeError(
            f"{name} must be a whole number, got {type(value).__name__} {value!r} "
            f"(HF: '{type(value).__name__}' object cannot be interpreted as an integer)."
        )
    if value < 0:
        raise NegativeOptionError(
            f"{name} must be a whole number >= 0, got {value} (HF: can't convert negative int to unsigned)."
        )
    if value < minimum:
        raise VocabSizeError(f"{name} must be at least {minimum}, got {value}.")
    return value


def check_optional_count(name: str, value: Any, minimum: int = 0) -> int | None:
    return None if value is None else check_count(name, value, minimum)


def check_bool(name: str, value: Any) -> bool:
    if not isinstance(value, bool):
        raise OptionTypeError(f"{name} must be True or False, got {type(value).__name__} {value!r}.")
    return value


def check_optional_str(name: str, value: Any) -> str | None:
    if value is not None and not isinstance(value, str):
        raise OptionTypeError(f"{name} must be a string or None, got {type(value).__name__} {value!r}.")
    return value


def check_float(name: str, value: Any) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise OptionTypeError(f"{name} must be a number, got {type(value).__name__} {value!r}.")
    return float(value)


def special_added_tokens(tokens: Any) -> tuple[Any, ...]:
    """Strings and AddedTokens as HF's trainers keep them: AddedTokens with ``special=True``
    (a string becomes ``AddedToken(s, special=True)``, so ``normalized=False``); repeats of
    the same content keep the first.

    >>> [token.content for token in special_added_tokens(["<s>", "</s>", "<s>"])]
    ['<s>', '</s>']
    """
    from tokviz.added_vocabulary import AddedToken

    if isinstance(tokens, (str, bytes)) or not isinstance(tokens, Iterable):
        raise SpecialTokenTypeError(
            f"Special tokens must be a List[Union[str, AddedToken]]; got {type(tokens).__name__} {tokens!r:.60}."
        )
    kept: dict[str, AddedToken] = {}
    for token in tokens:
        if isinstance(token, str):
            added = AddedToken(token, special=True)
        elif isinstance(token, AddedToken):
            # HF resolves an unset ``normalized`` as ``not special`` once the trainer marks the
            # token special. tokviz's AddedToken resolves it at construction, so a non-special
            # token with normalized=True is read as "unset" (an explicit True is then lost).
            normalized = token.normalized if token.special else False
            added = AddedToken(
                token.content, single_word=token.single_word, lstrip=token.lstrip, rstrip=token.rstrip,
                normalized=normalized, special=True,
            )
        else:
            raise SpecialTokenTypeError(
                f"Special tokens must be a List[Union[str, AddedToken]]; got {type(token).__name__} {token!r:.60}."
            )
        if not added.content:
            raise SpecialTokenError("A special token cannot be the empty string.")
        kept.setdefault(added.content, added)
    return tuple(kept.values())


def _rust_debug(value: Any) -> str:
    """A value as HF's (Rust) ``Debug`` output prints it: ``"a"``, ``True``, ``None``, ``[1, 2]``."""
    if isinstance(value, str):
        return f'"{value}"'  # HF prints strings unescaped
    if isinstance(value, (list, tuple)):
        return "[" + ", ".join(_rust_debug(item) for item in value) + "]"
    if isinstance(value, dict):
        return "{" + ", ".join(f"{_rust_debug(k)}: {_rust_debug(v)}" for k, v in value.items()) + "}"
    if hasattr(value, "content") and hasattr(value, "special"):  # an AddedToken, as HF's trainers print it
        fields = ("content", "single_word", "lstrip", "rstrip", "normalized", "special")
        return "AddedToken(" + ", ".join(f"{name}={_rust_debug(getattr(value, name))}" for name in fields) + ")"
    return repr(value)


class Trainer:
    """Base of the four trainers: validated, mutable options; HF's repr, state and pickling.

    Subclasses list their options in HF's serialization order in ``_HF_FIELDS`` (with the
    validators in ``_VALIDATORS``), tokviz's own options with their defaults in
    ``_TOKVIZ_FIELDS``, and write ``train_from_word_counts``.
    """

    _HF_FIELDS: ClassVar[tuple[str, ...]] = ()
    _TOKVIZ_FIELDS: ClassVar[dict[str, Any]] = {}
    _VALIDATORS: ClassVar[dict[str, Callable[[str, Any], Any]]] = {}
    #: Fields HF writes with a fixed value (a tokviz trainer has no progress bar style, no words).
    _HF_CONSTANTS: ClassVar[dict[str, Any]] = {}
    #: The model class this trainer trains (its name, as HF's message names it).
    MODEL_TYPE: ClassVar[str] = ""

    def check_model(self, model: Any) -> None:
        """Raise as HF does when asked to train another algorithm's model, e.g.
        ``"UnigramTrainer can only train a Unigram"``. ``Tokenizer.train`` should call it
        before counting words, so the mistake is named even for an empty corpus."""
        check_trains(model, self.MODEL_TYPE, type(self).__name__)

    def __setattr__(self, name: str, value: Any) -> None:
        if not name.startswith("_"):
            cls = type(self)
            if name != "special_tokens" and name not in cls._VALIDATORS and name not in cls._TOKVIZ_FIELDS:
                raise AttributeError(f"{cls.__name__!r} object has no attribute {name!r} (its options: {', '.join(self._option_names())}).")
            validate = cls._VALIDATORS.get(name)
            if validate is not None:
                value = validate(name, value)
            _mutation.bump()
        object.__setattr__(self, name, value)

    @classmethod
    def _option_names(cls) -> list[str]:
        return [name for name in cls._HF_FIELDS if name not in cls._HF_CONSTANTS] + list(cls._TOKVIZ_FIELDS)

    # ------------------------------------------------------------------ special tokens
    @property
    def special_tokens(self) -> list[Any]:
        """The special tokens as HF returns them: a fresh list of AddedTokens (``special=True``)."""
        return list(self._special_tokens)

    @special_tokens.setter
    def special_tokens(self, tokens: Iterable[Any]) -> None:
        object.__setattr__(self, "_special_tokens", special_added_tokens(tokens))
        _mutation.bump()

    @property
    def special_token_contents(self) -> tuple[str, ...]:
        """The special tokens' strings, in order: what training puts first in the vocab."""
        return tuple(token.content for token in self._special_tokens)

    # ------------------------------------------------------------------ HF's state
    def _state_value(self, name: str) -> Any:
        if name in self._HF_CONSTANTS:
            return self._HF_CONSTANTS[name]
        if name == "special_tokens":
            return [token.to_dict() for token in self._special_tokens]
        value = getattr(self, name)
        return list(value) if isinstance(value, tuple) else value

    def _hf_state(self) -> dict[str, Any]:
        return {name: self._state_value(name) for name in self._HF_FIELDS}

    def _tokviz_state(self) -> dict[str, Any]:
        return {name: getattr(self, name) for name, default in self._TOKVIZ_FIELDS.items() if getattr(self, name) != default}

    def __getstate__(self) -> bytes:
        """HF's JSON form: ``b'{"BpeTrainer":{"min_frequency":0,...}}'``."""
        body = self._hf_state()
        body.update(self._tokviz_state())
        return json.dumps({type(self).__name__: body}, ensure_ascii=False, separators=(",", ":")).encode("utf-8")

    def __setstate__(self, state: bytes | str) -> None:
        data = json.loads(state)
        body = data.get(type(self).__name__) if isinstance(data, dict) else None
        if not isinstance(body, dict):
            raise TokvizError(f"This state is not a {type(self).__name__}: {str(state)[:80]!r}.")
        fresh = type(self)(**self._options_from_state(body))
        for name, value in vars(fresh).items():
            object.__setattr__(self, name, value)

    @classmethod
    def _options_from_state(cls, body: dict[str, Any]) -> dict[str, Any]:
        from tokviz.added_vocabulary import AddedToken

        options = {name: body[name] for name in cls._option_names() if name in body}
        if "special_tokens" in options:
            options["special_tokens"] = [AddedToken.from_dict(token) if isinstance(token, dict) else token for token in options["special_tokens"]]
        return options

    def __reduce__(self) -> tuple[Any, ...]:
        return (_rebuild_trainer, (type(self), self.__getstate__()))

    def __copy__(self) -> "Trainer":
        return _rebuild_trainer(type(self), self.__getstate__())

    def __deepcopy__(self, memo: dict[int, Any]) -> "Trainer":
        return _rebuild_trainer(type(self), self.__getstate__())

    def __repr__(self) -> str:
        """HF's: ``BpeTrainer(BpeTrainer(min_frequency=0, vocab_size=30000, ...))``."""
        name = type(self).__name__
        return f"{name}({name}({self._debug_fields()}))"

    def _debug_fields(self) -> str:
        state = self._hf_state()
        if "special_tokens" in state:
            state["special_tokens"] = list(self._special_tokens)
        state.update(self._tokviz_state())
        return ", ".join(f"{key}={value if key == 'progress_format' else _rust_debug(value)}" for key, value in state.items())


def _rebuild_trainer(cls: type, state: bytes) -> Trainer:
    trainer = cls.__new__(cls)
    trainer.__setstate__(state)
    return trainer


class TrainerModelMismatchError(TokvizError):
    """A trainer given a model of another kind (HF raises a plain ``Exception`` with this text)."""


def check_trains(model: Any, model_type: str, trainer_name: str) -> None:
    """Raise as HF does when ``trainer_name`` is asked to train a model that is not a ``model_type``.

    >>> check_trains(object(), "Unigram", "UnigramTrainer")
    Traceback (most recent call last):
    ...
    tokviz.models.trainer.TrainerModelMismatchError: UnigramTrainer can only train a Unigram; this tokenizer's model is a object. Build the tokenizer with models.Unigram() to train it with a UnigramTrainer.
    """
    kind = type(model).__name__
    if kind != model_type:
        raise TrainerModelMismatchError(
            f"{trainer_name} can only train a {model_type}; this tokenizer's model is a {kind}. "
            f"Build the tokenizer with models.{model_type}() to train it with a {trainer_name}."
        )
