"""tokviz.models.base and tokviz.models.models: Token, the model protocol, HF's submodule name."""

from __future__ import annotations

import dataclasses

import pytest

from tokviz import models
from tokviz.models.base import Model, Token


def test_tokens_are_frozen_records() -> None:
    token = Token(7, "ug", (1, 3))
    assert (token.id, token.value, token.offsets) == (7, "ug", (1, 3))
    with pytest.raises(dataclasses.FrozenInstanceError):
        token.id = 8  # type: ignore[misc]


def test_every_model_follows_the_protocol_and_hfs_submodule_names_them() -> None:
    for model in (models.BPE(), models.WordPiece(), models.WordLevel(), models.Unigram()):
        assert isinstance(model, Model)
    assert models.models.BPE is models.BPE and models.models.Unigram is models.Unigram
