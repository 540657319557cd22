"""tokviz.trainers: HF's names, each the trainer beside its model."""

from __future__ import annotations

from tokviz import trainers
from tokviz.models.bpe.trainer import BpeTrainer
from tokviz.models.trainer import Trainer
from tokviz.models.unigram.trainer import UnigramTrainer


def test_hf_names_point_at_the_trainers() -> None:
    assert trainers.BpeTrainer is BpeTrainer and trainers.UnigramTrainer is UnigramTrainer and trainers.Trainer is Trainer
    assert {"BpeTrainer", "WordPieceTrainer", "UnigramTrainer", "WordLevelTrainer"} <= set(dir(trainers))
