"""The SentencePiece BPE trainer's two merge loops (numpy for the first merges, then one
position at a time) against the plain reference, with the switch at every point."""

from __future__ import annotations

import random
from collections import Counter

from hypothesis import given, settings
from hypothesis import strategies as st

import tokviz.sentencepiece.trainer_bpe as trainer_bpe
from tokviz.sentencepiece.pieces import WS, PieceRules
from tokviz.sentencepiece.trainer_bpe import train_bpe, train_bpe_reference

# few letters, long runs ("aaaa": left == right merges take the 1st and 3rd), repeated pairs
_WORDS = st.dictionaries(st.text(alphabet=st.sampled_from(list("aab1é▁▅")), min_size=1, max_size=12).map(lambda w: WS + w),
                         st.integers(min_value=1, max_value=6), min_size=1, max_size=30)
_RULES = st.sampled_from([PieceRules(), PieceRules(max_sentencepiece_length=3), PieceRules(split_by_number=False),
                          PieceRules(split_by_whitespace=False)])


def _alphabet(words: dict[str, int]) -> dict[str, int]:
    chars: Counter[str] = Counter()
    for word, count in words.items():
        for char in word:
            chars[char] += count
    chars.pop("▅", None)
    return dict(chars)


def _train(words: dict[str, int], merges: int, rules: PieceRules, switch: int) -> trainer_bpe.BpeResult:
    saved = trainer_bpe._VECTOR_RANKS, trainer_bpe._VECTOR_TYPICAL
    trainer_bpe._VECTOR_RANKS, trainer_bpe._VECTOR_TYPICAL = switch, 0  # (small merges: numpy all the same)
    try:
        return train_bpe(words, _alphabet(words), merges, rules)
    finally:
        trainer_bpe._VECTOR_RANKS, trainer_bpe._VECTOR_TYPICAL = saved


@settings(max_examples=150, deadline=None)
@given(words=_WORDS, merges=st.integers(min_value=1, max_value=40), rules=_RULES, switch=st.integers(min_value=0, max_value=41))
def test_both_loops_and_any_switch_equal_the_reference(words: dict[str, int], merges: int, rules: PieceRules, switch: int) -> None:
    plain = train_bpe_reference(words, _alphabet(words), merges, rules)
    assert _train(words, merges, rules, switch) == plain


def test_the_switch_follows_the_merges_size() -> None:
    """Numpy while the merges are big (an average of their candidate positions), not after."""
    rng = random.Random(7)
    words = {WS + "".join(rng.choice("abcdefgh") for _ in range(rng.randint(2, 9))): rng.randint(1, 3) for _ in range(600)}
    calls = []
    real = trainer_bpe._merge_vectorized
    trainer_bpe._merge_vectorized = lambda holders, *rest: calls.append(len(holders)) or real(holders, *rest)
    try:
        result = train_bpe(words, _alphabet(words), 300, PieceRules())
    finally:
        trainer_bpe._merge_vectorized = real
    assert result == train_bpe_reference(words, _alphabet(words), 300, PieceRules())
    assert len(result.merge_steps) == 300 and calls[0] > 50 and 10 < len(calls) < 300


def test_runs_of_one_letter() -> None:
    words = {WS + "a" * n: n for n in range(1, 12)} | {WS + "ab" * 5: 3, WS + "aab" * 3: 2}
    rules = PieceRules(max_sentencepiece_length=16)
    plain = train_bpe_reference(words, _alphabet(words), 30, rules)
    assert [s.token for s in plain.merge_steps[:3]] == ["aa", "aaaa", WS + "aaaa"]
    for switch in (0, 1, 2, 5, 100):
        assert _train(words, 30, rules, switch) == plain
