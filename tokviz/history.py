"""Training histories: the record of WHY each token exists.

Every trainer returns an immutable :class:`TrainingHistory` (frozen dataclasses, tuples):

- BPE / WordPiece: one :class:`MergeStep` per merge, with the pair, the new token, its
  count and score, the vocab size after the merge and the pairs it beat at that moment.
- Unigram: one :class:`EmStep` per EM sub-iteration and one :class:`PruneRound` per
  pruning round (every removed piece with the loss increase that condemned it), plus the
  final pieces with their log-probabilities.
- WordLevel: the words kept, by frequency.

Each algorithm subclasses :class:`TrainingHistory` in its own trainer module and
implements :meth:`TrainingHistory.model_at`, which derives "the model at vocab size k"
from the record without retraining (this is what the vocab slider calls).
"""

from __future__ import annotations

import sys
import types
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Callable

if TYPE_CHECKING:  # pragma: no cover
    import pandas as pd

    from tokviz.models.base import Model

#: Progress callback given to trainers: ``progress(phase, done, total)``, e.g.
#: ``progress("count pairs", 0, 1)``, ``progress("merges", 120, 4744)``. Called often enough
#: for a smooth progress bar (at least every 1% of a phase), cheap enough not to matter.
ProgressCallback = Callable[[str, int, int], None]


def merge_number(rank: int) -> int:
    """The number every page shows for the merge of rank ``rank``: 1-based, "merge #1" is learned (and applied) first.

    The one numbering of merges: the token card, the merge tables and charts, the merge picker and
    Inspect all read it here (``rank`` stays 0-based, as HF's merges list is indexed).

    >>> merge_number(0), merge_number(41)
    (1, 42)
    """
    return rank + 1


@dataclass(frozen=True, slots=True)
class MergeStep:
    """One BPE / WordPiece merge.

    ``candidates`` are the best competing pairs at the moment of the merge, winner
    excluded, best first: ``((('i', 's'), 5.0), (('e', 'r'), 5.0), ...)`` (at most 10).
    ``count`` is the pair's frequency in the corpus; ``score`` is what chose it (the
    count for BPE, ``count / (freq(a) * freq(b))`` for WordPiece likelihood).
    """

    rank: int
    left: str
    right: str
    token: str
    count: int
    score: float
    vocab_size: int
    candidates: tuple[tuple[tuple[str, str], float], ...] = ()


@dataclass(frozen=True, slots=True)
class EmStep:
    """One Unigram EM sub-iteration, as SentencePiece logs it.

    ``round`` is the pruning round it ran in (0 before the first pruning),
    ``objective`` the negative log-likelihood per word-occurrence after the step.
    """

    round: int
    sub_iteration: int
    vocab_size: int
    objective: float
    num_tokens: int


@dataclass(frozen=True, slots=True)
class PruneRound:
    """One Unigram pruning round: ``removed`` lists ``(piece, loss_increase)``."""

    round: int
    size_before: int
    size_after: int
    removed: tuple[tuple[str, float], ...]


@dataclass(frozen=True, slots=True)
class WordCountSummary:
    """What the trainer was fed: word occurrences after pre-tokenization."""

    total_words: int
    unique_words: int
    total_characters: int
    distinct_characters: int
    top_words: tuple[tuple[str, int], ...] = ()


@dataclass(frozen=True)
class TrainingHistory:
    """Base of every history. Subclasses add their records and implement ``model_at``.

    ``min_vocab_size`` / ``max_vocab_size`` bound the vocab slider: ``model_at(k)`` is
    defined for every k in that range. ``stop_reason`` says in a sentence why training
    stopped ("reached the target vocab size of 5000", "no pair left to merge", ...).
    """

    algorithm: str
    model: "Model"
    special_tokens: tuple[str, ...]
    alphabet: tuple[str, ...]
    word_counts: WordCountSummary
    stop_reason: str
    min_vocab_size: int
    max_vocab_size: int
    trainer_config: tuple[tuple[str, Any], ...] = ()
    seconds: float = 0.0
    extra: tuple[tuple[str, Any], ...] = field(default=())

    def model_at(self, vocab_size: int) -> "Model":
        raise NotImplementedError

    def to_frame(self) -> "pd.DataFrame":
        raise NotImplementedError

    def _repr_html_(self) -> str | None:
        """Jupyter's view: what was trained, why it stopped, and its table (registered by :mod:`tokviz.viz.notebook`)."""
        from tokviz._views import html_view

        return html_view(self)


# Objects a history may point to that are not its own: classes, functions, modules (shared by all).
_SHARED_TYPES = (type, types.ModuleType, types.FunctionType, types.BuiltinFunctionType, types.MethodType)
_LEAF_TYPES = (str, bytes, int, float, bool, complex, type(None))


def retained_bytes(history: Any) -> int:
    """An honest estimate of the memory a training's history holds, in bytes.

    Every object reachable from ``history`` — its records, the model and whatever the model
    caches, numpy arrays with their data — is counted once (``sys.getsizeof``; an object two
    records share counts once), classes, functions and modules not at all. What the estimate
    leaves out: the allocator's own overhead and free lists (a process's RSS is larger), and
    small objects Python shares between everyone (small ints, interned strings), which are
    counted as if the history owned them. Made for the app's training cache, which is bounded
    by bytes with it.

    >>> retained_bytes(("ab", "ab")) == sys.getsizeof(("ab", "ab")) + sys.getsizeof("ab")
    True
    """
    seen: set[int] = set()
    stack = [history]
    total = 0
    getsizeof = sys.getsizeof
    leaf, shared = _LEAF_TYPES, _SHARED_TYPES
    while stack:
        obj = stack.pop()
        key = id(obj)
        if key in seen:
            continue
        seen.add(key)
        if isinstance(obj, shared):
            continue
        total += getsizeof(obj)
        if isinstance(obj, leaf):
            continue
        # (Containers are copied in one C-level step: a model's caches may grow in another thread.)
        if isinstance(obj, (tuple, list, set, frozenset)):
            stack.extend(obj)
            continue
        if isinstance(obj, dict):
            for key_value in list(obj.items()):  # (the pairs are temporary: their items are pushed, not them)
                stack.extend(key_value)
            continue
        base = getattr(obj, "base", None)  # a numpy view: its data lives in the base array
        if base is not None and hasattr(obj, "nbytes"):
            stack.append(base)
        instance_dict = getattr(obj, "__dict__", None)
        if isinstance(instance_dict, dict):
            stack.append(instance_dict)
        for cls in type(obj).__mro__:
            for slot in cls.__dict__.get("__slots__", ()):
                if slot not in ("__dict__", "__weakref__") and hasattr(obj, slot):
                    stack.append(getattr(obj, slot))
    return total
