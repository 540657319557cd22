"""SentencePiece BPE loading in two processes (the second half of the lines normalized and
counted in a forked child): the same words, counts, model and history as in one process."""

from __future__ import annotations

import os
import threading

import pytest

import tokviz.sentencepiece.trainer as trainer
from tokviz.sentencepiece.parallel import can_fork, in_two_processes
from tokviz.sentencepiece.trainer import train_sentencepiece

needs_fork = pytest.mark.skipif(not can_fork(), reason="no os.fork here (or other threads run)")

_LINES = ["Ｈｅｌｌｏ  wörld, hello again", "", "   ", "naïve café ｃａｆé <unk> and <s> tags", "tab\there", "x" * 40,
          "数字 123 ４５６ mixed ＡＢＣ", "the cat sat on the mat", "ﬁne ﬂow ǆ", "\u3000full\u3000width spaces"] * 30


def _train(num_threads: int, **options):
    return train_sentencepiece(sentence_iterator=iter(_LINES), vocab_size=120, model_type="bpe",
                               num_threads=num_threads, **options)


@needs_fork
@pytest.mark.parametrize("options", [{}, {"character_coverage": 0.98}, {"user_defined_symbols": "cat,ＡＢＣ"},
                                     {"normalization_rule_name": "identity"}, {"add_dummy_prefix": False}])
def test_two_processes_train_what_one_does(monkeypatch: pytest.MonkeyPatch, options: dict) -> None:
    forked = []
    real = trainer.in_two_processes
    monkeypatch.setattr(trainer, "in_two_processes", lambda *a: forked.append(1) or real(*a))
    one = _train(16, **options)
    monkeypatch.setattr(trainer, "_TWO_PROCESS_MIN_CHARS", 0)
    assert _train(1, **options).merge_steps == one.merge_steps and not forked  # (num_threads=1: never)
    two = _train(16, **options)
    assert forked == [1]
    assert one.to_model_bytes() == two.to_model_bytes()
    assert one.merge_steps == two.merge_steps
    assert (one.sentences, one.word_counts, one.alphabet) == (two.sentences, two.word_counts, two.alphabet)
    assert one.sentences == 240  # the 30 empty and 30 blank lines are not sentences


def test_small_corpora_stay_in_one_process(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(trainer, "in_two_processes", lambda *a: pytest.fail("forked"))
    assert _train(16).merge_steps


@needs_fork
def test_in_two_processes() -> None:
    assert in_two_processes(sorted, [3, 1], [2, 0, 5]) == ([1, 3], [0, 2, 5])
    parent = os.getpid()

    def fails_in_the_child(values: list[int]) -> int:
        if os.getpid() != parent:
            raise RuntimeError("child")
        return sum(values)

    assert in_two_processes(fails_in_the_child, [1, 2], [3, 4]) == (3, 7)  # the parent did both halves
    with pytest.raises(ZeroDivisionError):
        in_two_processes(lambda values: 1 // values[0], [0], [1])


def test_no_fork_with_other_threads() -> None:
    stop = threading.Event()
    thread = threading.Thread(target=stop.wait)
    thread.start()
    try:
        assert not can_fork()
        assert in_two_processes(len, "ab", "cde") == (2, 3)
    finally:
        stop.set()
        thread.join()
