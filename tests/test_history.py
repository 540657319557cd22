"""What a training's history holds in memory: ``tokviz.history.retained_bytes`` and the shared
candidate entries of BPE / WordPiece merge steps (issue 18 item 4)."""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest

from tokviz.history import MergeStep, retained_bytes
from tokviz.presets import bert_like
from tokviz.training import run_training



def test_an_object_two_containers_share_counts_once():
    word = "tokenizer" * 3
    assert retained_bytes((word, word)) == sys.getsizeof((word, word)) + sys.getsizeof(word)
    assert retained_bytes([word, word[::-1]]) == sys.getsizeof([word, word[::-1]]) + 2 * sys.getsizeof(word)


def test_dicts_count_keys_and_values():
    table = {"hug": 10.5, "pug": 5.5}
    assert retained_bytes(table) == (sys.getsizeof(table) + sys.getsizeof("hug") + sys.getsizeof("pug")
                                     + sys.getsizeof(10.5) + sys.getsizeof(5.5))


def test_slotted_records_count_their_fields():
    step = MergeStep(rank=0, left="h", right="ug", token="hug", count=15, score=15.0, vocab_size=5, candidates=())
    fields = {id(value): value for value in (step.rank, step.left, step.right, step.token, step.count, step.score,
                                              step.vocab_size, step.candidates)}
    assert retained_bytes(step) == sys.getsizeof(step) + sum(map(sys.getsizeof, fields.values()))


def test_numpy_arrays_count_their_data_and_views_their_base():
    array = np.zeros(100_000)  # 800,000 bytes of data
    assert 800_000 <= retained_bytes(array) < 800_200
    assert 800_000 <= retained_bytes(array[:10]) < 800_400  # a view keeps the whole base alive


def test_classes_functions_and_modules_are_not_the_historys():
    assert retained_bytes(MergeStep) == 0
    assert retained_bytes(len) == 0
    assert retained_bytes(np) == 0
    assert retained_bytes([MergeStep, len]) == sys.getsizeof([MergeStep, len])


def test_a_trained_history_counts_its_merges_vocab_and_model(read_shared_corpus):
    lines = read_shared_corpus("tinyshakespeare.txt").splitlines()[:3000]
    small, large = run_training(bert_like(), 600, lines), run_training(bert_like(), 1200, lines)
    for history in (small, large):
        whole = retained_bytes(history)
        assert whole >= retained_bytes(history.merges) + retained_bytes(history.vocab) // 2
        assert whole >= retained_bytes(history.model)
    assert retained_bytes(large) > retained_bytes(small) + 100 * (len(large.merges) - len(small.merges))


@pytest.mark.parametrize("preset_model", ["WordPiece", "BPE"])
def test_merge_steps_share_their_candidate_entries(preset_model, read_shared_corpus):
    """A pair with the same score listed by many steps is one tuple (about 500 bytes a merge, not 1.7 kB)."""
    lines = read_shared_corpus("tinyshakespeare.txt").splitlines()
    config = bert_like() if preset_model == "WordPiece" else bert_like().with_model("BPE")
    history = run_training(config, 3000, lines)
    steps = history.merges
    listed = [entry for step in steps for entry in step.candidates]
    assert len(listed) == 10 * len(steps)
    distinct = {id(entry) for entry in listed}
    assert len(distinct) < len(listed) / 4
    # the same (pair, score) in two steps is the same object, and equal to a fresh one
    for before, after in zip(steps, steps[1:]):
        for entry in after.candidates:
            for other in before.candidates:
                if other == entry:
                    assert other is entry
    assert retained_bytes(steps) / len(steps) < 800
