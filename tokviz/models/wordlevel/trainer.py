"""WordLevel training: keep the most frequent words, one id per word.

The simplest tokenizer: no subwords at all. Training sorts the words by count (highest
first, ties by the word itself, in code-point order, as HF does), puts the special tokens
first, and keeps words with at least ``min_frequency`` occurrences until ``vocab_size``:

>>> history = WordLevelTrainer(vocab_size=4, special_tokens=["[UNK]"], show_progress=False).train_from_word_counts(
...     {"the": 25, "roses": 22, "are": 24, "red": 12})
>>> history.vocab
('[UNK]', 'the', 'are', 'roses')
>>> history.kept[0]
('the', 25)

Every other word becomes the unknown token at encoding time. What this version leaves
out: nothing of HF's; it also skips a corpus word equal to a special token (HF would give
that string two ids and keep the last).
"""

from __future__ import annotations

import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, ClassVar

from tokviz.history import ProgressCallback, TrainingHistory
from tokviz.models.trainer import Trainer, check_bool, check_count, check_word_counts, finish_history, with_model_options_of
from tokviz.word_counts import summarize_word_counts

if TYPE_CHECKING:  # pragma: no cover
    import pandas as pd

    from tokviz.models.base import Model

__all__ = ["WordLevelTrainer", "WordLevelTrainingHistory"]


@dataclass(frozen=True)
class WordLevelTrainingHistory(TrainingHistory):
    """The words kept, by frequency: ``kept = (('the', 25), ('are', 24), ...)``.

    ``vocab`` is the special tokens then the kept words; ``model_at(k)`` keeps its first k.
    ``dropped`` counts the words left out (below ``min_frequency`` or past the target).
    """

    vocab: tuple[str, ...] = ()
    kept: tuple[tuple[str, int], ...] = ()
    dropped: int = 0
    unk_token: str | None = None
    model_options: tuple[tuple[str, Any], ...] = ()

    #: What a trained WordLevel keeps from the user's model (HF transfers only the vocab).
    KEPT_MODEL_OPTIONS: ClassVar[tuple[str, ...]] = ("unk_token",)

    def for_model(self, model: Any) -> "WordLevelTrainingHistory":
        """This history with the user's ``model``'s ``unk_token`` kept in ``model`` and every
        ``model_at(k)``, as HF's ``Tokenizer.train`` keeps it."""
        return with_model_options_of(self, model, "WordLevel", "WordLevelTrainer")

    def vocab_at(self, vocab_size: int | None = None) -> dict[str, int]:
        size = len(self.vocab) if vocab_size is None else max(self.min_vocab_size, min(vocab_size, len(self.vocab)))
        return {token: index for index, token in enumerate(self.vocab[:size])}

    def model_at(self, vocab_size: int) -> "Model":
        """The WordLevel model with the first ``vocab_size`` tokens (no retraining)."""
        from tokviz.models.wordlevel.model import WordLevel

        options: dict[str, Any] = {"unk_token": self.unk_token}
        options.update(self.model_options)
        return WordLevel(self.vocab_at(vocab_size), **options)

    def to_frame(self) -> "pd.DataFrame":
        """One row per kept word: rank, token, count, vocab_size (after adding it)."""
        import pandas as pd

        specials = len(self.special_tokens)
        return pd.DataFrame(
            {
                "rank": list(range(len(self.kept))),
                "token": [word for word, _count in self.kept],
                "count": [count for _word, count in self.kept],
                "vocab_size": [specials + index + 1 for index in range(len(self.kept))],
            },
            columns=["rank", "token", "count", "vocab_size"],
        )


class WordLevelTrainer(Trainer):
    """HF's ``trainers.WordLevelTrainer(vocab_size, min_frequency, show_progress, special_tokens)``."""

    MODEL_TYPE = "WordLevel"

    _HF_FIELDS = ("min_frequency", "vocab_size", "show_progress", "special_tokens", "words")
    _HF_CONSTANTS = {"words": {}}
    _VALIDATORS = {
        "vocab_size": lambda name, value: check_count(name, value, 1),
        "min_frequency": check_count,
        "show_progress": check_bool,
    }

    def __init__(
        self,
        vocab_size: int = 30000,
        min_frequency: int = 0,
        show_progress: bool = True,
        special_tokens: Sequence[Any] = (),
    ) -> None:
        self._set_options(locals())

    def train_from_word_counts(
        self, word_counts: Mapping[str, int], progress: ProgressCallback | None = None
    ) -> WordLevelTrainingHistory:
        """Keep the most frequent words (ties: code-point order of the word)."""
        started = time.perf_counter()
        word_counts = check_word_counts(word_counts)
        if progress is not None:
            progress("sort words", 0, 1)
        specials = set(self.special_token_contents)
        ordered = sorted(word_counts.items(), key=lambda item: (-item[1], item[0]))
        room = max(0, self.vocab_size - len(self.special_token_contents))
        eligible = [(word, count) for word, count in ordered if count >= self.min_frequency and word not in specials]
        kept = tuple(eligible[:room])
        if progress is not None:
            progress("sort words", 1, 1)
        if len(self.special_token_contents) >= self.vocab_size:
            stop_reason = (
                f"the target vocab size of {self.vocab_size} leaves no room after the "
                f"{len(self.special_token_contents)} special tokens: no word was kept"
            )
        elif len(eligible) <= room:
            below = len(ordered) - len(eligible)
            stop_reason = f"kept every word ({len(eligible)}): the corpus has no more" + (
                f" with at least min_frequency={self.min_frequency} occurrences ({below} below)" if below else ""
            ) + f"; vocab size {len(self.special_token_contents) + len(kept)}, below the target of {self.vocab_size}"
        else:
            stop_reason = f"reached the target vocab size of {self.vocab_size}"
        vocab = tuple(self.special_token_contents) + tuple(word for word, _count in kept)
        history = WordLevelTrainingHistory(
            algorithm="WordLevel",
            model=None,  # type: ignore[arg-type]  # set by finish_history
            special_tokens=tuple(self.special_token_contents),
            alphabet=(),
            word_counts=summarize_word_counts(word_counts),
            stop_reason=stop_reason,
            min_vocab_size=len(self.special_token_contents),
            max_vocab_size=len(vocab),
            trainer_config=self.config(),
            vocab=vocab,
            kept=kept,
            dropped=len(ordered) - len(kept),
        )
        return finish_history(history, started)
