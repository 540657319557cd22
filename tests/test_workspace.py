"""tokviz.workspace: the session workspace as plain data -- its defaults, what keys the training
cache, and that no two sessions share a mutable default."""

from __future__ import annotations

import dataclasses

import pytest

from tokviz.pipeline_config import PipelineConfig
from tokviz.presets import PRESETS
from tokviz.workspace import (
    AUDIT_TEXTS, DEFAULT_VOCAB, SESSION_TOKENIZER, CompareEntry, CorpusState, TrainingRequest, UploadedFile, Workspace,
)


def test_a_new_workspace_starts_where_the_app_does() -> None:
    workspace = Workspace()
    assert (workspace.corpus.source, workspace.corpus.pasted, workspace.corpus.upload_text) == ("sample", None, None)
    assert (workspace.train.preset, workspace.train.target_vocab, workspace.train.slider, workspace.train.trained) == ("gpt2", DEFAULT_VOCAB, None, None)
    assert workspace.train.config == PRESETS["gpt2"].build()
    assert [(entry.choice, entry.vocab) for entry in workspace.compare.entries] == [("gpt2", 1000), ("bert", 1000), ("t5", 500)]
    assert (workspace.pipeline.tokenizer, workspace.inspect.tokenizer, workspace.audit.tokenizer) == (SESSION_TOKENIZER,) * 3
    assert workspace.audit.texts in AUDIT_TEXTS and workspace.audit.threshold == 0.05
    assert (workspace.learn.lesson, workspace.learn.step, workspace.learn.merges) == ("bpe", 1, {"bpe": 3, "wordpiece": 5})


def test_sessions_share_no_mutable_state() -> None:
    first, second = Workspace(), Workspace()
    first.compare.entries.append(CompareEntry("custom"))
    first.learn.merges["bpe"] = 9
    first.compare.files.append(UploadedFile("tokenizer.json", b"{}"))
    assert len(second.compare.entries) == 3 and second.learn.merges["bpe"] == 3 and second.compare.files == []


def test_a_training_request_keys_a_cache_by_value() -> None:
    config = PipelineConfig(model="BPE")
    request = TrainingRequest("corpus-1", config, 500)
    assert {request: "history"}[TrainingRequest("corpus-1", PipelineConfig(model="BPE"), 500)] == "history"
    assert request != TrainingRequest("corpus-1", config, 501)
    with pytest.raises(dataclasses.FrozenInstanceError):
        request.vocab_size = 1  # type: ignore[misc]


def test_the_corpus_says_where_it_came_from() -> None:
    assert CorpusState().describe() == "the built-in sample"
    assert CorpusState("pasted", pasted="hi").describe() == "your pasted text"
    assert CorpusState("upload", upload_name="reviews.csv, column 'review'").describe() == "upload reviews.csv, column 'review'"
