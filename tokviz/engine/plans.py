"""One tokenizer's engine plans, in one cache invalidated in one place.

A plan is what the engine asked the components once and the word cache built on it
(:mod:`tokviz.engine.cut`), made lazily with the model's one word encoder. :meth:`EnginePlans.current` drops them
when a component is edited (``_mutation.generation()``), their word caches when the model's
are emptied (``model.cache_epoch``).

>>> from tokviz.models import WordLevel
>>> from tokviz.pre_tokenizers import Whitespace
>>> plans = EnginePlans()
>>> model = WordLevel({"hi": 0, "[UNK]": 1}, unk_token="[UNK]")
>>> plans.current(None, Whitespace(), model).cut() is plans.current(None, Whitespace(), model).cut()
False
>>> splitter = Whitespace()
>>> plans.current(None, splitter, model).cut() is plans.current(None, splitter, model).cut()
True
"""

from __future__ import annotations

from typing import Any

from tokviz import _mutation
from tokviz.engine.plan import build_plan, word_encoder

_UNMADE = object()


class EnginePlans:
    """The plans made for ``(normalizer, pre_tokenizer, model)`` at one edit generation, each
    made on first use. A copy of a tokenizer takes a copy of this: both share what was made
    until either one's components change (then that one makes a new set)."""

    __slots__ = ("normalizer", "pre_tokenizer", "model", "generation", "epoch", "made")

    def __init__(self) -> None:
        self.normalizer: Any = None
        self.pre_tokenizer: Any = None
        self.model: Any = None
        self.generation = -1
        self.epoch: int | None = None
        #: kind ("encoder", "cut") -> its plan (None: does not apply)
        self.made: dict[str, Any] = {}

    def __copy__(self) -> "EnginePlans":
        twin = EnginePlans()
        for name in self.__slots__:
            setattr(twin, name, getattr(self, name))
        return twin

    def current(self, normalizer: Any, pre_tokenizer: Any, model: Any) -> "EnginePlans":
        """These plans, made anew when a component was replaced or edited since they were made,
        with their word caches emptied when the model's were (the one place plans are dropped)."""
        generation = _mutation.generation()
        if (
            self.model is not model or self.pre_tokenizer is not pre_tokenizer or self.normalizer is not normalizer
            or self.generation != generation
        ):
            self.normalizer, self.pre_tokenizer, self.model, self.generation = normalizer, pre_tokenizer, model, generation
            self.epoch = getattr(model, "cache_epoch", None)
            self.made = {}  # (a new dict: a copy still holding the old one keeps its plans)
        elif self.epoch is not None and self.epoch != model.cache_epoch:
            self.epoch = model.cache_epoch
            self._empty_word_caches()
        return self

    def rekey(self, shared: Any, private: Any) -> None:
        """A tokenizer took a private copy of a component it shared: what was made from the
        shared one stays valid for the equal copy."""
        for name in ("normalizer", "pre_tokenizer", "model"):
            if getattr(self, name) is shared:
                setattr(self, name, private)

    def _empty_word_caches(self) -> None:
        # model._clear_cache(): every lane is cold again, its tables kept.
        made = self.made
        cut = made.get("cut")
        if cut is not None:
            cut.clear_caches()
        encoder = made.get("encoder")
        use_proofs = getattr(encoder, "use_proofs", None)
        if use_proofs is not None:
            use_proofs()  # (the same words again: see bpe_word_encoder)

    def _get(self, kind: str, make: Any) -> Any:
        plan = self.made.get(kind, _UNMADE)
        if plan is _UNMADE:
            plan = self.made[kind] = make()
        return plan

    def encoder(self) -> Any:
        """The model's word encoder (one set of tables and proofs for every lane), or None."""
        model = self.model
        return self._get("encoder", lambda: word_encoder(model) if getattr(model, "deterministic", False) else None)

    def cut(self) -> Any:
        """The whole-piece plan (:func:`tokviz.engine.plan.build_plan`), or None."""
        return self._get("cut", lambda: build_plan(self.normalizer, self.pre_tokenizer, self.model, self.encoder()))
