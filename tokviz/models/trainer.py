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

import dataclasses
import functools
import gc
import json
import os
import sys
import time
from collections.abc import Callable, Iterable, Iterator, Mapping
from contextlib import contextmanager
from contextvars import ContextVar
from typing import Any, ClassVar

from tokviz import _mutation
from tokviz.errors import EmptyCorpusError, SpecialTokenError, TokvizError, VocabSizeError

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
    #: How many progress stages HF's trainer of this kind finishes (each prints an empty line
    #: when shown; see finish_progress_lines).
    PROGRESS_STAGES: ClassVar[int] = 0

    #: The options a training history records (``trainer_config``), in order.
    _CONFIG: ClassVar[tuple[str, ...]] = ("vocab_size", "min_frequency", "special_tokens")

    def config(self) -> tuple[tuple[str, Any], ...]:
        """``((option, value), ...)`` of :attr:`_CONFIG`: the special tokens' strings, lists as tuples."""
        values = ((name, self.special_token_contents if name == "special_tokens" else getattr(self, name)) for name in self._CONFIG)
        return tuple((name, tuple(value) if isinstance(value, list) else value) for name, value in values)

    def _set_options(self, options: dict[str, Any]) -> None:
        """Set a constructor's arguments (its ``locals()``), each checked as an assignment is."""
        for name, value in options.items():
            if name not in ("self", "__class__"):
                setattr(self, name, value)

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


def finish_progress_lines(trainer: Any) -> None:
    """HF's trainers with ``show_progress=True`` end every progress stage with an empty line
    on the process's standard output (file descriptor 1, as Rust's ``println!``; the bars
    themselves go to a terminal only). tokviz writes the same lines the same way, so a
    script or notebook prints the same on both libraries."""
    stages = getattr(trainer, "PROGRESS_STAGES", 0)
    if not stages or getattr(trainer, "show_progress", False) is not True:
        return
    try:
        sys.stdout.flush()
        os.write(1, b"\n" * stages)
    except (OSError, ValueError, AttributeError):  # no standard output (a service, a closed stream)
        pass


def check_word_counts(word_counts: Mapping[str, int]) -> dict[str, int]:
    """Drop empty words and non-positive counts; raise EmptyCorpusError when nothing is left."""
    cleaned = {word: count for word, count in word_counts.items() if word and count > 0}
    if not cleaned:
        raise EmptyCorpusError("The corpus is empty: there is no word to train on.")
    return cleaned


def paused_gc(train: Callable[..., Any]) -> Callable[..., Any]:
    """Run ``train`` with the cyclic garbage collector paused.

    Training allocates millions of small objects (heap entries, word lists, sets) that never
    form cycles; the collector would rescan them again and again for ~15% of the time.
    """

    @functools.wraps(train)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        enabled = gc.isenabled()
        gc.disable()
        try:
            return train(*args, **kwargs)
        finally:
            if enabled:
                gc.enable()

    return wrapper


#: The model a Tokenizer is training (its options are kept in the trained one): set by
#: :func:`training_for` around a training, read by :func:`finish_history`, so the trained
#: model is built once, with those options, instead of once plain and once more for them.
_TRAINING_FOR: ContextVar[Any] = ContextVar("tokviz_training_for", default=None)


@contextmanager
def training_for(model: Any) -> Iterator[None]:
    """Within it, trainings finish with ``model``'s kept options (``KEPT_MODEL_OPTIONS``)."""
    token = _TRAINING_FOR.set(model)
    try:
        yield
    finally:
        _TRAINING_FOR.reset(token)


def _kept_options(history: Any, model: Any) -> tuple[tuple[str, Any], ...]:
    return tuple((name, getattr(model, name)) for name in history.KEPT_MODEL_OPTIONS if hasattr(model, name))


def with_model_options_of(history: Any, model: Any, model_type: str, trainer_name: str | None = None) -> Any:
    """``history`` whose models keep ``model``'s ``KEPT_MODEL_OPTIONS`` (itself when they are
    kept already: its model is not built again).

    ``model`` must be a ``model_type``: HF's trainers train only their own model, and
    ``Tokenizer.train`` raises (``"BpeTrainer can only train a BPE"``) rather than swap it.
    """
    check_trains(model, model_type, trainer_name or f"{model_type}Trainer")
    options = _kept_options(history, model)
    if options == history.model_options and history.model is not None:
        return history
    changed = dataclasses.replace(history, model_options=options)
    object.__setattr__(changed, "model", changed.model_at(changed.max_vocab_size))
    return changed


def train_for_model(trainer: Any, word_counts: Mapping[str, int], model: Any, progress: Any = None) -> Any:
    """Train ``trainer`` on ``word_counts`` for ``model`` and return the history, whose models keep
    ``model``'s options as HF's trainers do (unk_token, dropout, ...). The trained model is built
    once, with those options (the app, a job and the command line train through here).
    """
    with training_for(model):
        history = trainer.train_from_word_counts(word_counts, progress)
    return history.for_model(model) if hasattr(history, "for_model") else history


def finish_history(history: Any, started: float) -> Any:
    """Attach the final model (with the kept options of the model being trained, see
    :func:`training_for`) and the training time (the history is frozen: set once, here)."""
    trained = _TRAINING_FOR.get()
    if trained is not None and hasattr(history, "KEPT_MODEL_OPTIONS") and hasattr(history, "model_options"):
        history = dataclasses.replace(history, model_options=_kept_options(history, trained))
    object.__setattr__(history, "model", history.model_at(history.max_vocab_size))
    object.__setattr__(history, "seconds", time.perf_counter() - started)
    return history


def check_initial_alphabet(name: str, value: Any) -> list[str]:
    """HF's rule for ``initial_alphabet`` (BPE, WordPiece and Unigram trainers alike): a list of
    strings, each giving its first character (empty ones give none), each character once.

    >>> check_initial_alphabet("initial_alphabet", ["", "ab", "a", "b", "ac"])
    ['a', 'b']
    """
    if isinstance(value, str) or not isinstance(value, Iterable):
        raise OptionTypeError(f"{name} must be a list of characters, got {type(value).__name__} {value!r:.60}.")
    alphabet: list[str] = []
    for entry in value:
        if not isinstance(entry, str):
            raise OptionTypeError(f"{name} entries must be strings, got {type(entry).__name__} {entry!r}.")
        if entry and entry[0] not in alphabet:  # HF keeps the first character of each entry
            alphabet.append(entry[0])
    return alphabet
