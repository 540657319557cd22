"""tokviz.ui.train_views: the Train page's result tabs -- which tabs a training gets, what they read
from BPE, WordPiece, Unigram and SentencePiece histories, the files they offer."""

from __future__ import annotations

import pytest
from streamlit.testing.v1 import AppTest

from tokviz import history_io
from tokviz.pipeline_config import PipelineConfig, build_tokenizer, sentencepiece_config
from tokviz.presets import PRESETS
from tokviz.training import run_training
from tokviz.ui.train_views import (
    TrainedView, as_pre_token, history_json, is_byte_level, merges_of, result_views, sentencepiece_model_bytes, unigram_record,
)
from tokviz.workspace import TrainingRequest

LINES = ("low lower lowest", "new newer newest", "wide wider widest") * 5


def _view(config: PipelineConfig, size: int = 40) -> TrainedView:
    history = run_training(config, size, LINES)
    tokenizer = build_tokenizer(config)
    tokenizer.model = history.model
    return TrainedView(TrainingRequest("corpus", config, size), history, LINES, history.max_vocab_size, tokenizer)


def test_tabs_follow_the_algorithm() -> None:
    assert list(result_views(_view(PRESETS["gpt2"].build(), 300), "")) == ["Merge history", "Vocabulary", "Charts", "Export"]
    assert list(result_views(_view(PRESETS["bert"].build()), "")) == ["Merge history", "WordPiece trace", "Vocabulary", "Charts", "Export"]
    assert list(result_views(_view(PRESETS["t5"].build(), 30), "")) == ["EM and pruning", "Lattice and sampling", "Vocabulary", "Charts", "Export"]


def test_what_the_tabs_read() -> None:
    assert is_byte_level(PRESETS["gpt2"].build()) and not is_byte_level(PRESETS["bert"].build())
    bpe = _view(PipelineConfig(model="BPE")).history
    assert [(step.left, step.right) for step in merges_of(bpe)][:3] == [("w", "e"), ("d", "e"), ("i", "de")]
    unigram = run_training(PRESETS["t5"].build(), 30, LINES)
    record = unigram_record(unigram)
    assert record.em_steps and record.model is unigram.model and record.stop_reason == unigram.stop_reason
    assert merges_of(unigram) == ()
    tokenizer = build_tokenizer(PRESETS["bert"].build())
    assert as_pre_token(tokenizer, "Héllo, world") == "hello"  # lowercased, accents stripped, cut at the comma


def test_files_the_export_tab_offers() -> None:
    config = PipelineConfig(model="BPE")
    history = run_training(config, 40, LINES)
    opened = history_io.loads_training(history_json(history, config))
    assert opened.history.merges == history.merges and opened.config == config
    spm = pytest.importorskip("sentencepiece")
    sp_config = sentencepiece_config(sp_model_type="bpe")
    sp_history = run_training(sp_config, 30, LINES)
    processor = spm.SentencePieceProcessor(model_proto=sentencepiece_model_bytes(sp_history, sp_history.max_vocab_size))
    assert processor.get_piece_size() == sp_history.max_vocab_size
    smaller = spm.SentencePieceProcessor(model_proto=sentencepiece_model_bytes(sp_history, sp_history.max_vocab_size - 3))
    assert smaller.get_piece_size() == sp_history.max_vocab_size - 3


def _tabs() -> None:
    from tokviz.pipeline_config import build_tokenizer
    from tokviz.presets import PRESETS
    from tokviz.training import run_training
    from tokviz.ui.train_views import TrainedView, result_views
    from tokviz.workspace import TrainingRequest

    config = PRESETS["bert"].build()
    lines = ("low lower lowest", "new newer newest", "wide wider widest") * 5
    history = run_training(config, 40, lines)
    tokenizer = build_tokenizer(config)
    tokenizer.model = history.model
    view = TrainedView(TrainingRequest("corpus", config, 40), history, lines, history.max_vocab_size, tokenizer)
    for draw in result_views(view, "newest wide").values():
        draw()


def test_every_tab_draws_without_an_error() -> None:
    app = AppTest.from_function(_tabs, default_timeout=120).run()
    assert not app.exception, [str(error.value) for error in app.exception]
    assert not app.error
