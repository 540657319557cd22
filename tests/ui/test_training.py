"""The token cards' origins at a slider size (tokviz.ui.training.origins_at) answer exactly as
tokviz.viz.spans.token_origins at that size, for every token of that size's vocabulary, while a
BPE / WordPiece slider move reads them from the whole training's origins (no replay per size)."""

from __future__ import annotations

import pytest

from tokviz.presets import PRESETS
from tokviz.samples import load_sample
from tokviz.training import run_training
from tokviz.ui import training
from tokviz.viz.spans import TokenOrigin, token_origins
from tokviz.workspace import TrainingRequest

LINES = tuple(line for line in load_sample().splitlines() if line.strip())


@pytest.mark.parametrize("preset", ["gpt2", "bert", "t5"])
def test_origins_at_every_size_equal_the_origins_of_the_model_at_that_size(preset) -> None:
    config = PRESETS[preset].build()
    history = run_training(config, 600, LINES)
    request = TrainingRequest(f"origins-{preset}", config, 600)
    sizes = sorted({history.min_vocab_size, history.min_vocab_size + 1, (history.min_vocab_size + history.max_vocab_size) // 2,
                    history.max_vocab_size - 1, history.max_vocab_size})
    for size in sizes:
        expected = token_origins(history, size)
        got = training.origins_at(request, size, history)
        vocab = training.tokenizer_at(request, size, history).get_vocab()
        assert {token: got.get(token) for token in vocab} == {token: expected.get(token) for token in vocab}, size
    if history.algorithm.lower() != "unigram":
        # A worked case: the first merge's token is a merge at every size that keeps it, and absent below.
        first = history.merges[0]
        assert training.origins_at(request, history.max_vocab_size, history).get(first.token) == TokenOrigin(
            "merge", first.rank, first.left, first.right, first.count, float(first.score))
        assert first.token not in training.tokenizer_at(request, first.vocab_size - 1, history).get_vocab() or \
            training.origins_at(request, first.vocab_size - 1, history).get(first.token) == TokenOrigin("alphabet")
