"""tokviz.models.trainer: what every trainer shares -- option checks (HF's initial_alphabet rule),
the model-kind check, progress lines, finishing a history -- against HF ``tokenizers``."""

from __future__ import annotations

import pytest

from tokviz import models
from tokviz.models.trainer import TrainerModelMismatchError, check_initial_alphabet, check_trains
from tokviz.trainers import BpeTrainer, UnigramTrainer, WordLevelTrainer, WordPieceTrainer

tokenizers = pytest.importorskip("tokenizers")


@pytest.mark.parametrize("name", ["BpeTrainer", "WordPieceTrainer", "UnigramTrainer"])
@pytest.mark.parametrize("alphabet", [["", "ab", "a", "b"], ["ab", "ac"], ["é", "e\\u0301", "中文"]])
def test_initial_alphabet_follows_hf(name: str, alphabet: list[str]) -> None:
    ours = {"BpeTrainer": BpeTrainer, "WordPieceTrainer": WordPieceTrainer, "UnigramTrainer": UnigramTrainer}[name]
    theirs = getattr(tokenizers.trainers, name)
    assert sorted(ours(initial_alphabet=alphabet).initial_alphabet) == sorted(theirs(initial_alphabet=alphabet).initial_alphabet)


def test_initial_alphabet_worked_example_and_errors() -> None:
    assert check_initial_alphabet("initial_alphabet", ["", "ab", "a", "b", "ac"]) == ["a", "b"]
    with pytest.raises(TypeError, match="entries must be strings"):
        BpeTrainer(initial_alphabet=[1])
    with pytest.raises(TypeError, match="a list of characters"):
        UnigramTrainer(initial_alphabet="abc")


def test_a_trainer_trains_only_its_own_model() -> None:
    with pytest.raises(TrainerModelMismatchError, match="UnigramTrainer can only train a Unigram; this tokenizer's model is a BPE"):
        check_trains(models.BPE(), "Unigram", "UnigramTrainer")
    check_trains(models.WordLevel(), "WordLevel", "WordLevelTrainer")


def test_progress_stages_are_declared_as_hf_prints_them() -> None:
    from tokviz.models.bpe.parity_trainer import ParityBpeTrainer

    assert (BpeTrainer.PROGRESS_STAGES, WordPieceTrainer.PROGRESS_STAGES, UnigramTrainer.PROGRESS_STAGES) == (3, 3, 2)
    assert (ParityBpeTrainer.PROGRESS_STAGES, WordLevelTrainer.PROGRESS_STAGES) == (1, 0)


def test_a_training_builds_its_model_once(monkeypatch) -> None:
    from tokviz import Tokenizer, pre_tokenizers

    built = []
    real = models.BPE.__init__

    def counting(self, *args, **kwargs):
        built.append(1)
        real(self, *args, **kwargs)

    tok = Tokenizer(models.BPE(unk_token="[UNK]"))
    tok.pre_tokenizer = pre_tokenizers.Whitespace()
    monkeypatch.setattr(models.BPE, "__init__", counting)
    tok.train_from_iterator(["hug hug pug pun bun hugs"] * 3, BpeTrainer(vocab_size=12, special_tokens=["[UNK]"], show_progress=False))
    assert len(built) == 1
    assert tok.model.unk_token == "[UNK]"


@pytest.mark.parametrize("model", ["BPE", "WordPiece", "WordLevel"])
def test_the_app_and_cli_path_builds_the_trained_model_once(monkeypatch, model: str) -> None:
    """run_training (the app, a job) and the CLI train through train_for_model: a config whose
    model options differ from the trainer's defaults still builds its trained model once."""
    from tokviz.pipeline_config import PipelineConfig, build_model
    from tokviz.training import run_training

    config = PipelineConfig(model=model, unk_token="<unk>", special_tokens=("<unk>",))
    cls = type(build_model(config))
    built = []
    real = cls.__init__

    def counting(self, *args, **kwargs):
        built.append(kwargs.get("unk_token"))
        real(self, *args, **kwargs)

    monkeypatch.setattr(cls, "__init__", counting)
    history = run_training(config, 30, ["hug hug pug pun bun hugs"] * 3)
    # one construction for the untrained model the options come from, one for the trained model
    assert built == ["<unk>", "<unk>"]
    assert history.model.unk_token == "<unk>"
    assert history.model_at(history.max_vocab_size).unk_token == "<unk>"
