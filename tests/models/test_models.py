"""tokviz.models.models: HF's compiled submodule name (``tokenizers.models.models``) holds the same classes."""

from __future__ import annotations

import pytest

from tokviz import models
from tokviz.models import models as models_models


def test_the_same_classes_under_hfs_submodule_name() -> None:
    for name in ("BPE", "Unigram", "WordLevel", "WordPiece"):
        assert getattr(models_models, name) is getattr(models, name)
    assert sorted(models_models.__all__) == ["BPE", "Model", "Token", "Unigram", "WordLevel", "WordPiece"]


def test_tutorial_code_written_for_hf_runs() -> None:
    hf = pytest.importorskip("tokenizers")
    vocab = [("<unk>", 0.0), ("a", -1.0), ("ab", -1.5), ("b", -2.0)]
    unigram = models_models.Unigram(vocab, unk_id=0)
    assert [token.value for token in unigram.tokenize("abab")] == ["ab", "ab"]
    assert [token.value for token in hf.models.Unigram(vocab, unk_id=0).tokenize("abab")] == ["ab", "ab"]
