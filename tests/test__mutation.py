"""tokviz._mutation: one edit counter; every component setter moves it, so plans rebuild."""

from __future__ import annotations

from tokviz import _mutation, models


def test_bump_moves_the_generation() -> None:
    before = _mutation.generation()
    _mutation.bump()
    assert _mutation.generation() > before


def test_a_model_edit_moves_it() -> None:
    model = models.BPE({"a": 0, "b": 1, "ab": 2}, [("a", "b")])
    before = _mutation.generation()
    model.dropout = 0.5
    assert _mutation.generation() > before
