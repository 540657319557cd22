"""SentencePiece BPE loading in two processes (the second half of the lines normalized and
counted in a forked child): the same words, counts, model and history as in one process."""

from __future__ import annotations

import os
import subprocess
import sys
import threading
from collections import Counter
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import tokviz.sentencepiece.parallel as parallel
import tokviz.sentencepiece.trainer as trainer
import tokviz.sentencepiece.trainer_sentences as trainer_sentences
from tokviz.sentencepiece.normalizer import SentencePieceNormalizer
from tokviz.sentencepiece.parallel import can_fork, in_two_processes
from tokviz.sentencepiece.pieces import count_words, split_into_words
from tokviz.sentencepiece.processor import SentencePieceError
from tokviz.sentencepiece.trainer import build_specs, load_sentences, train_sentencepiece

needs_fork = pytest.mark.skipif(not (sys.platform.startswith("linux") and hasattr(os, "fork")), reason="no os.fork here")

_LINES = ["Ｈｅｌｌｏ  wörld, hello again", "", "   ", "naïve café ｃａｆé <unk> and <s> tags", "tab\there", "x" * 40,
          "数字 123 ４５６ mixed ＡＢＣ", "the cat sat on the mat", "ﬁne ﬂow ǆ", "\u3000full\u3000width spaces"] * 30


def _train(num_threads: int, **options):
    return train_sentencepiece(sentence_iterator=iter(_LINES), vocab_size=120, model_type="bpe",
                               num_threads=num_threads, **options)


OPTIONS = [{}, {"character_coverage": 0.98}, {"user_defined_symbols": "cat,ＡＢＣ"},
           {"normalization_rule_name": "identity"}, {"add_dummy_prefix": False}]
ROOT = Path(__file__).resolve().parents[2]


def _in_a_fresh_interpreter(call: str) -> None:
    """Run ``call`` (code using this module as ``t``) in a new Python: the trainer never forks a
    process that runs other threads, and the suite's earlier tests leave some behind here."""
    code = f"import tests.sentencepiece.test_parallel as t\n{call}\nprint('done')"
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    result = subprocess.run([sys.executable, "-c", code], cwd=ROOT, env=env, capture_output=True, text=True, timeout=600)
    assert result.returncode == 0, result.stderr[-3000:]
    assert result.stdout.strip().endswith("done"), result.stdout[-3000:]


def _check_two_processes_train_what_one_does(options: dict) -> None:
    assert can_fork()
    forked = []
    real, minimum = parallel.in_two_processes, trainer._TWO_PROCESS_MIN_CHARS
    parallel.in_two_processes = lambda *a: forked.append(1) or real(*a)  # (the trainer imports it when it forks)
    try:
        one = _train(16, **options)
        assert not forked  # (a small corpus: one process)
        trainer._TWO_PROCESS_MIN_CHARS = 0
        assert _train(1, **options).merge_steps == one.merge_steps and not forked  # (num_threads=1: never)
        two = _train(16, **options)
    finally:
        parallel.in_two_processes, trainer._TWO_PROCESS_MIN_CHARS = real, minimum
    assert forked == [1]
    assert one.to_model_bytes() == two.to_model_bytes()
    assert one.merge_steps == two.merge_steps
    assert (one.sentences, one.word_counts, one.alphabet) == (two.sentences, two.word_counts, two.alphabet)
    assert one.sentences == 240  # the 30 empty and 30 blank lines are not sentences


def _check_in_two_processes() -> None:
    assert can_fork()
    assert in_two_processes(sorted, [3, 1], [2, 0, 5]) == ([1, 3], [0, 2, 5])
    assert in_two_processes(dict, {"▁a": 1, "\ud800": 2}, {"▁b": 3}) == ({"▁a": 1, "\ud800": 2}, {"▁b": 3})
    parent = os.getpid()

    def fails_in_the_child(values: list[int]) -> int:
        if os.getpid() != parent:
            raise RuntimeError("child")
        return sum(values)

    assert in_two_processes(fails_in_the_child, [1, 2], [3, 4]) == (3, 7)  # the parent did both halves
    try:
        in_two_processes(lambda values: 1 // values[0], [0], [1])
    except ZeroDivisionError:
        pass
    else:
        raise AssertionError("the parent's error was swallowed")


@needs_fork
def test_two_processes_train_what_one_does() -> None:
    _in_a_fresh_interpreter("for options in t.OPTIONS:\n    t._check_two_processes_train_what_one_does(options)")


@needs_fork
def test_in_two_processes() -> None:
    _in_a_fresh_interpreter("t._check_in_two_processes()")


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


@settings(max_examples=100, deadline=None)
@given(lines=st.lists(st.text(alphabet=st.sampled_from(list("ab é▅日\t")), max_size=30), max_size=30),
       max_length=st.integers(min_value=10, max_value=40))
def test_reading_every_line_equals_the_sampling_loop(lines: list[str], max_length: int) -> None:
    """The comprehensions that keep every line (no input_sentence_size) against sentencepiece's loop."""
    spec, nspec = build_specs({"max_sentence_length": max_length, "vocab_size": 50})
    kept, freqs, too_long = trainer_sentences._sample_lines(spec, lines)
    assert freqs == [1] * len(kept)
    normalize = SentencePieceNormalizer(nspec.precompiled_charsmap).normalize
    expected = sum(1 for line in kept if normalize(line))
    given_lines = [line.encode() if i % 3 else line for i, line in enumerate(lines)]
    if not expected:
        with pytest.raises(SentencePieceError, match="no sentences"):
            load_sentences(spec, nspec, given_lines, {})
        return
    fast = load_sentences(spec, nspec, given_lines, {})
    assert (fast.too_long, fast.sentence_count) == (too_long, expected)


@settings(max_examples=100, deadline=None)
@given(words=st.dictionaries(st.text(alphabet=st.sampled_from(list("abé日▁\U0001f600")), min_size=1, max_size=6),
                             st.integers(min_value=1, max_value=5), max_size=20),
       rare=st.text(alphabet=st.sampled_from(list("bé日\U0001f600z\U0010ffff")), max_size=4))
def test_rare_characters_in_words(words: dict[str, int], rare: str) -> None:
    expected: dict[str, int] = {}
    for word, count in words.items():
        replaced = "".join("▅" if char in rare else char for char in word)
        expected[replaced] = expected.get(replaced, 0) + count
    assert trainer._replace_rare_in_words(words, rare) == expected


@settings(max_examples=200, deadline=None)
@given(texts=st.lists(st.text(alphabet=st.sampled_from(list("ab▁\n")), max_size=8), max_size=12),
       prefix=st.booleans())
def test_counting_words_of_texts_that_start_words(texts: list[str], prefix: bool) -> None:
    """``count_words``'s split at every "▁" when each text starts with one (and the general cut otherwise)."""
    if prefix:
        texts = ["▁" + text for text in texts]
    expected: Counter[str] = Counter()
    for text in texts:
        expected.update(split_into_words(text))
    assert count_words(texts) == expected
    assert count_words(["▁a▁▁b▁", "", "▁"]) == Counter({"▁a": 1, "▁": 3, "▁b": 1})


def test_characters_of_a_long_text() -> None:
    from tokviz.sentencepiece.normalizer import _chars_of

    text = "abc " * 100_000 + "é\U0001f600" + "xyz" * 100_000 + "\ud800"  # (over two 256k slices; a lone surrogate)
    assert _chars_of(text) == set(text)
