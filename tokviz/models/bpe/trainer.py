"""BPE training (Sennrich et al. 2016, as Hugging Face ``tokenizers`` implements it).

Start from single characters, then repeatedly merge the most frequent adjacent pair of
symbols into a new symbol, until the vocabulary reaches the target size:

    words {"hug": 10, "pug": 5, "hugs": 5}, alphabet g h p s u
    pair counts: ('u','g') 20, ('h','u') 15, ('p','u') 5, ('g','s') 5
    merge 0: ('u','g') -> 'ug'    words: h ug (10), p ug (5), h ug s (5)
    merge 1: ('h','ug') -> 'hug'  ...

>>> history = BpeTrainer(vocab_size=7, show_progress=False).train_from_word_counts({"hug": 10, "pug": 5, "hugs": 5})
>>> [(step.left, step.right, step.count) for step in history.merges]
[('u', 'g', 20), ('h', 'ug', 15)]
>>> history.vocab
('g', 'h', 'p', 's', 'u', 'ug', 'hug')

Tie-breaking (two pairs with the same count) is part of the algorithm's definition:

- ``tie_break="hf"`` (default): the highest count, then the smallest ``(left id, right id)``,
  ids being the special tokens (in the order given), then the alphabet by code point, then
  the ``continuing_subword_prefix`` / ``end_of_word_suffix`` forms of characters in
  first-seen order, then merged tokens in creation order. This is HF's rule; the merges are
  identical to HF's ``BpeTrainer`` (ids of prefixed forms aside: HF numbers them in hash order).
- ``tie_break="first_seen"``: the pair met first when scanning the words in first-seen order,
  left to right: the HF course notebook's rule (``max`` over a dict built in that order).

How it is fast in pure Python: symbols are integer ids, each unique word is a list of ids
with a count, pair counts are updated incrementally from the words a merge touches (an
index pair -> words holding it), and a heap of single integers (``-count`` then the pair
code, so Python compares ints, not tuples) with lazy deletion finds the best pair; a stale
entry is pushed back with its current count when it surfaces, exactly as HF does.

Two HF quirks are kept on purpose, for identical merges: ``max_token_length=L`` stops
counting a pair once its token would have L characters or more (HF's strict ``<``: tokens
stay below L characters), and the winning pair's own count is never decremented.

What this version leaves out: HF's parallel pair counting and word merging (two threads on
the benchmark machine), and its progress bar (``show_progress`` is accepted and ignored;
we call ``progress(phase, done, total)`` instead).
"""

from __future__ import annotations

import time
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, ClassVar

from tokviz.history import MergeStep, ProgressCallback, TrainingHistory
from tokviz.models.merges import (
    MergeHistoryViews, MergeTrainerOptions, Symbols, compute_alphabet, count_queue, merge_loop, records_to_steps,
    tokenize_words,
)
from tokviz.models.trainer import check_word_counts, finish_history, paused_gc, with_model_options_of
from tokviz.word_counts import summarize_word_counts

if TYPE_CHECKING:  # pragma: no cover
    from tokviz.models.base import Model

__all__ = ["BpeTrainer", "BpeTrainingHistory"]

# --------------------------------------------------------------------------- history


@dataclass(frozen=True)
class BpeTrainingHistory(MergeHistoryViews, TrainingHistory):
    """Every BPE merge, in order, with the pairs it beat; ``model_at(k)`` replays a prefix.

    ``vocab`` is the final vocabulary in id order: special tokens, alphabet (and its
    prefixed / suffixed forms), then one token per merge that created a new string.
    """

    merges: tuple[MergeStep, ...] = ()
    vocab: tuple[str, ...] = ()
    initial_vocab_size: int = 0
    continuing_subword_prefix: str | None = None
    end_of_word_suffix: str | None = None
    unk_token: str | None = None
    model_options: tuple[tuple[str, Any], ...] = ()

    #: What a trained BPE keeps from the user's model (HF transfers only the vocab, the
    #: merges and the prefix / suffix into the model given to ``Tokenizer.train``).
    KEPT_MODEL_OPTIONS: ClassVar[tuple[str, ...]] = (
        "unk_token", "dropout", "fuse_unk", "byte_fallback", "ignore_merges", "cache_capacity"
    )

    def for_model(self, model: Any) -> "BpeTrainingHistory":
        """This history with the options of the user's ``model`` (``unk_token``, ``dropout``, ...)
        kept in ``model`` and every ``model_at(k)``, as HF's ``Tokenizer.train`` keeps them."""
        return with_model_options_of(self, model, "BPE", "BpeTrainer")

    def merge_pairs(self, vocab_size: int | None = None) -> list[tuple[str, str]]:
        """The merges a fresh training to ``vocab_size`` would learn (all when None)."""
        return [(step.left, step.right) for step in self.merges[: self._merge_count_at(vocab_size)]]

    def _merge_count_at(self, vocab_size: int | None) -> int:
        # A fresh training stops as soon as the vocab reaches the target, so it keeps the
        # merges up to the FIRST one whose vocab size after is >= the target. (A merge that
        # re-creates an existing token leaves the size unchanged and is then excluded.)
        if vocab_size is None:
            return len(self.merges)
        if vocab_size <= self.initial_vocab_size:
            return 0
        low, high = 0, len(self.merges)
        while low < high:  # merges' vocab sizes never decrease: binary search
            middle = (low + high) // 2
            if self.merges[middle].vocab_size >= vocab_size:
                high = middle
            else:
                low = middle + 1
        return min(low + 1, len(self.merges))

    def model_at(self, vocab_size: int) -> "Model":
        """The BPE model with the first merges up to ``vocab_size`` (no retraining)."""
        from tokviz.models.bpe.model import BPE

        options: dict[str, Any] = {"unk_token": self.unk_token}
        options.update(self.model_options)
        return BPE(
            self.vocab_at(vocab_size),
            self.merge_pairs(vocab_size),
            continuing_subword_prefix=self.continuing_subword_prefix,
            end_of_word_suffix=self.end_of_word_suffix,
            **options,
        )


class BpeTrainer(MergeTrainerOptions):
    """HF's ``trainers.BpeTrainer`` with a recorded history (see the module docstring).

    >>> trainer = BpeTrainer(vocab_size=300, special_tokens=["<|endoftext|>"], show_progress=False)
    >>> trainer.vocab_size, trainer.special_token_contents, trainer.tie_break
    (300, ('<|endoftext|>',), 'hf')
    """

    MODEL_TYPE = "BPE"
    PROGRESS_STAGES = 3

    def __init__(
        self,
        vocab_size: int = 30000,
        min_frequency: int = 0,
        show_progress: bool = True,
        special_tokens: Sequence[Any] = (),
        limit_alphabet: int | None = None,
        initial_alphabet: Iterable[str] = (),
        continuing_subword_prefix: str | None = None,
        end_of_word_suffix: str | None = None,
        max_token_length: int | None = None,
        tie_break: str = "hf",
    ) -> None:
        continuing_subword_prefix = continuing_subword_prefix or None
        self._set_options(locals())

    @paused_gc
    def train_from_word_counts(
        self,
        word_counts: Mapping[str, int],
        progress: ProgressCallback | None = None,
        *,
        prefixed_order: Sequence[str] = (),
    ) -> BpeTrainingHistory:
        """Train on ``{word: count}`` (first-seen order matters for ``tie_break="first_seen"``).

        ``prefixed_order`` numbers those prefixed / suffixed character forms first, in that
        order, instead of in first-seen order. HF numbers them in its hash map's order, which
        changes from run to run; replaying one HF run exactly needs its order (parity tests).
        """
        started = time.perf_counter()
        word_counts = check_word_counts(word_counts)
        symbols = Symbols.start(self.special_token_contents)
        alphabet = compute_alphabet(word_counts, self.initial_alphabet, self.limit_alphabet)
        for char in alphabet:
            symbols.add(char, 1)
        for token in prefixed_order:
            symbols.add(token, 1)
        words, counts = tokenize_words(word_counts, symbols, self.continuing_subword_prefix, self.end_of_word_suffix)
        initial_size = len(symbols.id_to_token)
        records, stop_reason = merge_loop(
            words, counts, symbols, self.vocab_size, self.min_frequency, self.max_token_length,
            self.continuing_subword_prefix, progress, count_queue(self.tie_break),
        )
        steps = records_to_steps(records, symbols.id_to_token)
        vocab = tuple(symbols.id_to_token)
        history = BpeTrainingHistory(
            algorithm="BPE",
            model=None,  # type: ignore[arg-type]  # set just below, from the history itself
            special_tokens=self.special_token_contents,
            alphabet=tuple(alphabet),
            word_counts=summarize_word_counts(word_counts),
            stop_reason=stop_reason,
            min_vocab_size=initial_size,
            max_vocab_size=len(vocab),
            trainer_config=self.config(),
            seconds=0.0,
            merges=steps,
            vocab=vocab,
            initial_vocab_size=initial_size,
            continuing_subword_prefix=self.continuing_subword_prefix,
            end_of_word_suffix=self.end_of_word_suffix,
        )
        return finish_history(history, started)
