"""Trainers, named as in ``tokenizers.trainers``. Each lives beside its model; ``Trainer`` is their base."""

from __future__ import annotations

from tokviz._lazy import lazy_exports

_EXPORTS = {
    "Trainer": "tokviz.models.trainer",
    "BpeTrainer": "tokviz.models.bpe.trainer",
    "WordPieceTrainer": "tokviz.models.wordpiece.trainer",
    "UnigramTrainer": "tokviz.models.unigram.trainer",
    "WordLevelTrainer": "tokviz.models.wordlevel.trainer",
    "ParityBpeTrainer": "tokviz.models.bpe.parity_trainer",
}
__all__ = sorted(_EXPORTS)
__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS)
