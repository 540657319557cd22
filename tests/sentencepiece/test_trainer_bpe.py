"""The SentencePiece BPE trainer's ways to merge (numpy for a big merge, one position at a time for a
small one; without numpy, on word strings) against the plain reference, in any mix."""

from __future__ import annotations

import random

import pytest

from hypothesis import given, settings
from hypothesis import strategies as st

import tokviz.sentencepiece.trainer_bpe as trainer_bpe
import tokviz.sentencepiece.trainer_bpe_numpy as trainer_bpe_numpy
from tokviz.sentencepiece.pieces import WS, PieceRules
from tokviz.sentencepiece.trainer_bpe import train_bpe

from tests.sentencepiece.test_trainer import _alphabet, train_bpe_reference  # (the words' chars and counts, as the trainer sees them; the oracle)

# few letters, long runs ("aaaa": left == right merges take the 1st and 3rd), repeated pairs
_WORDS = st.dictionaries(st.text(alphabet=st.sampled_from(list("aab1,é▁▅\ue000")), min_size=1, max_size=12).map(lambda w: WS + w),
                         st.integers(min_value=1, max_value=6), min_size=1, max_size=30)
_RULES = st.sampled_from([PieceRules(), PieceRules(max_sentencepiece_length=3), PieceRules(split_by_number=False),
                          PieceRules(split_by_whitespace=False)])


def _train(words: dict[str, int], merges: int, rules: PieceRules, smallest: int | None) -> trainer_bpe.BpeResult:
    if smallest is None:  # (no numpy at all: word strings)
        return train_bpe(words, _alphabet(words), merges, rules, numpy=False)
    saved = trainer_bpe_numpy._VECTOR_MIN
    trainer_bpe_numpy._VECTOR_MIN = smallest  # (0: every merge in numpy; huge: none)
    try:
        return train_bpe(words, _alphabet(words), merges, rules, numpy=True)
    finally:
        trainer_bpe_numpy._VECTOR_MIN = saved


@settings(max_examples=150, deadline=None)
@given(words=_WORDS, merges=st.integers(min_value=1, max_value=40), rules=_RULES,
       smallest=st.sampled_from([0, 1, 2, 3, 4, 6, 10**9, None, None]))
def test_every_loop_in_any_mix_equals_the_reference(words: dict[str, int], merges: int, rules: PieceRules,
                                                  smallest: int | None) -> None:
    plain = train_bpe_reference(words, _alphabet(words), merges, rules)
    assert _train(words, merges, rules, smallest) == plain


def test_big_merges_go_to_numpy() -> None:
    """A merge with ``_VECTOR_MIN`` candidate positions or more is done in numpy, a smaller one not."""
    rng = random.Random(7)
    words = {WS + "".join(rng.choice("abcdefgh") for _ in range(rng.randint(2, 9))): rng.randint(1, 3) for _ in range(600)}
    calls = []
    real = trainer_bpe_numpy._merge_vectorized
    trainer_bpe_numpy._merge_vectorized = lambda holders, *rest: calls.append(len(holders)) or real(holders, *rest)
    try:
        result = train_bpe(words, _alphabet(words), 300, PieceRules(), numpy=True)
    finally:
        trainer_bpe_numpy._merge_vectorized = real
    assert result == train_bpe_reference(words, _alphabet(words), 300, PieceRules())
    assert len(result.merge_steps) == 300 and 10 < len(calls) < 300
    assert min(calls) >= trainer_bpe_numpy._VECTOR_MIN


def test_word_strings_on_many_words() -> None:
    """Without numpy, on 600 words (pairs in hundreds of words, runs like "aaaa"): the same merges as the reference."""
    rng = random.Random(11)
    words = {WS + "".join(rng.choice("aabcdefg") for _ in range(rng.randint(2, 9))): rng.randint(1, 3) for _ in range(600)}
    result = train_bpe(words, _alphabet(words), 300, PieceRules(), numpy=False)
    assert result == train_bpe_reference(words, _alphabet(words), 300, PieceRules())
    assert len(result.merge_steps) == 300


def test_runs_of_one_letter() -> None:
    words = {WS + "a" * n: n for n in range(1, 12)} | {WS + "ab" * 5: 3, WS + "aab" * 3: 2}
    rules = PieceRules(max_sentencepiece_length=16)
    plain = train_bpe_reference(words, _alphabet(words), 30, rules)
    assert [s.token for s in plain.merge_steps[:3]] == ["aa", "aaaa", WS + "aaaa"]
    for smallest in (0, 1, 2, 5, 10**9, None):
        assert _train(words, 30, rules, smallest) == plain


def test_numpy_is_used_for_big_trainings_or_when_loaded(monkeypatch) -> None:
    """``use_numpy``: a training of fewer symbols than ``NUMPY_MIN_SYMBOLS`` runs on word strings unless numpy is loaded."""
    import sys

    monkeypatch.delitem(sys.modules, "numpy", raising=False)
    assert not trainer_bpe.use_numpy(trainer_bpe.NUMPY_MIN_SYMBOLS - 1)
    assert trainer_bpe.use_numpy(trainer_bpe.NUMPY_MIN_SYMBOLS)
    monkeypatch.setitem(sys.modules, "numpy", object())
    assert trainer_bpe.use_numpy(10)


def test_a_small_training_runs_without_numpy() -> None:
    """A small BPE training never imports numpy (importing it takes longer than the training), checked in a fresh
    interpreter, and writes the ``.model`` bytes the numpy loop writes (this process has numpy loaded)."""
    import io
    import subprocess
    import sys
    from pathlib import Path

    import tokviz.sentencepiece as spm

    code = ("import io, sys\nimport tokviz.sentencepiece as spm\nout = io.BytesIO()\n"
            "lines = ['the cat sat on the mat', 'a hat, a mat and a cät'] * 2000\n"
            "spm.SentencePieceTrainer.train(sentence_iterator=iter(lines), model_writer=out, vocab_size=30, model_type='bpe')\n"
            "print('numpy' in sys.modules, out.getvalue().hex())")
    root = Path(__file__).resolve().parents[2]
    done = subprocess.run([sys.executable, "-c", code], cwd=root, capture_output=True, text=True, check=True)
    loaded, blob = done.stdout.split()
    assert loaded == "False" and "numpy" in sys.modules
    out = io.BytesIO()
    spm.SentencePieceTrainer.train(sentence_iterator=iter(['the cat sat on the mat', 'a hat, a mat and a cät'] * 2000),
                                   model_writer=out, vocab_size=30, model_type="bpe")
    assert out.getvalue().hex() == blob


@pytest.mark.parametrize("numpy", [True, False])
def test_empty_words_and_zero_counts_are_left_out(numpy: bool) -> None:
    words = {WS + "ab": 2, WS + "abc": 1}
    result = train_bpe({**words, "": 5, WS + "zz": 0}, _alphabet(words), 3, PieceRules(), numpy=numpy)
    assert result == train_bpe_reference(words, _alphabet(words), 3, PieceRules())
    assert [step.token for step in result.merge_steps] == ["ab", WS + "ab", WS + "abc"]  # (a tie: "ab" < "▁a")


def test_ascii_words_are_cut_into_the_parts_no_piece_crosses() -> None:
    """Trained on the parts of its ASCII words (counted as often as their words, parts of one character left
    out): the merges of the whole words, with fewer symbols."""
    assert trainer_bpe._parts_apart({WS + "hug,": 2, WS + "hug": 1, WS + "ça,": 1, WS + "1x": 4}, PieceRules()) == {
        WS + "hug": 3, WS + "ça,": 1, WS + "1": 4}
    words = {WS + "don't": 3, WS + "don": 2, "t,": 1, WS + "12,5": 2, WS + "a-b": 1}
    assert trainer_bpe._parts_apart(words, PieceRules(split_digits=True)) is words
    for rules in (PieceRules(), PieceRules(split_digits=True)):
        plain = train_bpe_reference(words, _alphabet(words), 8, rules)
        assert plain.merge_steps and _train(words, 8, rules, None) == plain == _train(words, 8, rules, 0)
