"""tokviz.training: one training from a config, start to end (the app's cache, a job and the CLI all
train through it) -- worked examples, HF parity, the server's limits, and SentencePiece's char and
word models as tokviz models."""

from __future__ import annotations

import pytest

from tokviz.errors import LimitExceededError
from tokviz.pipeline_config import PipelineConfig, sentencepiece_config
from tokviz.training import WholePieceHistory, count_config_words, run_training

LINES = ("low lower lowest", "new newer")


def test_worked_example() -> None:
    history = run_training(PipelineConfig(model="BPE"), 40, LINES)
    assert [(step.left, step.right) for step in history.merges][:5] == [("l", "o"), ("w", "e"), ("n", "e"), ("lo", "we"), ("s", "t")]
    assert history.max_vocab_size == 19
    assert history.stop_reason == "no pair left to merge (every word is a single token) at vocab size 19, below the target of 40"
    assert count_config_words(PipelineConfig(model="BPE"), ["Low low, lower"]) == {"Low": 1, "low": 1, ",": 1, "lower": 1}


def test_counts_given_are_used_as_they_are() -> None:
    history = run_training(PipelineConfig(model="BPE"), 12, ("x",), words={"aaab": 3})
    # "a a a b" x3: (a, a) twice per word; then (a, b) on the rest; then the two halves
    assert [(step.left, step.right, step.count) for step in history.merges] == [("a", "a", 6), ("a", "b", 3), ("aa", "ab", 3)]
    assert history.max_vocab_size == 5


def test_trains_as_hf_on_the_same_pipeline() -> None:
    hf = pytest.importorskip("tokenizers")
    lines = ["the quick brown fox", "the lazy dog, the fox!", "quick quicker quickest"] * 4
    ours = run_training(PipelineConfig(model="BPE"), 60, lines)
    tokenizer = hf.Tokenizer(hf.models.BPE())
    tokenizer.pre_tokenizer = hf.pre_tokenizers.Whitespace()
    tokenizer.train_from_iterator(lines, hf.trainers.BpeTrainer(vocab_size=60, show_progress=False))
    theirs = tokenizer.to_str()
    import json

    assert [f"{step.left} {step.right}" for step in ours.merges] == [" ".join(pair) if isinstance(pair, list) else pair
                                                                       for pair in json.loads(theirs)["model"]["merges"]]


def test_the_servers_limits_come_before_any_training(monkeypatch) -> None:
    import tokviz.limits

    monkeypatch.setattr(tokviz.limits, "MAX_TRAINING_CHARS", 20)
    with pytest.raises(LimitExceededError, match="This corpus has 25 characters, above this server's training limit of 20"):
        run_training(PipelineConfig(model="BPE"), 40, ("x" * 25,))
    monkeypatch.setattr(tokviz.limits, "MAX_TRAINING_WORD_CHARS", 4)
    with pytest.raises(LimitExceededError, match="a word .* of 5 characters"):
        run_training(PipelineConfig(model="BPE"), 40, ("aaaaa b",))


@pytest.mark.parametrize("model_type", ["char", "word"])
def test_sentencepiece_char_and_word_models_encode_as_sentencepiece(model_type: str) -> None:
    spm = pytest.importorskip("sentencepiece")
    from tokviz.pipeline_config import sentencepiece_tokenizer

    lines = ("low lower lowest", "new newer newest", "a wider world") * 4
    config = sentencepiece_config(sp_model_type=model_type)
    history = run_training(config, 24, lines)
    assert isinstance(history, WholePieceHistory)
    assert type(history.model).__name__ == ("Unigram" if model_type == "char" else "WordLevel")
    processor = spm.SentencePieceProcessor(model_proto=history.proto_at(history.max_vocab_size).to_bytes())
    tokenizer = sentencepiece_tokenizer(config, history.model)
    # (one word unknown at a time: sentencepiece fuses a run of unknown words into one <unk>)
    for text in ("lower newest", "world wide", "low", "zq"):
        assert tokenizer.encode(text).ids == processor.encode(text)
