"""Issue 13: short texts are searched without regex's ``timeout=`` (it costs more than the search)
when the pattern cannot backtrack badly: literals around at most one quantified atom. The spans
must be the same as the timed search's (HF's empty-match rules included), and every other pattern
keeps its time limit."""

from __future__ import annotations

import time

from hypothesis import given, settings
from hypothesis import strategies as st

from tokviz.patterns import _is_bounded, _spans, compile_pattern, match_spans

BOUNDED = [
    " {2,}", r"\s+", "  +", "a*", "x?", "[ab]+c", r"\.", "[^a ]+", r"[\]]+",
    # properties and alternations of bounded branches (a Split regex's usual form)
    r"\p{L}+", "a|b", r"\p{L}+|\p{N}|[^\s\p{L}\p{N}]+", r"[\p{Han}]+|x*",
]


def test_which_patterns_are_searched_without_a_time_limit() -> None:
    assert all(map(_is_bounded, BOUNDED))
    for pattern in ["(a+)+b", "a+b+", r"(\w)\1", "a|b+c+", "[a-z]+x*", "(?:ab)*", r"\s+$", r"\p{L}+\p{N}+"]:
        assert not _is_bounded(pattern), pattern


@settings(max_examples=150, deadline=None, derandomize=True)
@given(st.sampled_from(BOUNDED), st.text(alphabet="ab c.x]\n\t1é中", min_size=1, max_size=30))
def test_untimed_spans_equal_the_timed_ones(pattern, text) -> None:
    compiled = compile_pattern(pattern)
    assert match_spans(compiled, text) == _spans(compiled, text, time.monotonic() + 10.0)


def test_worked_examples() -> None:
    assert match_spans(compile_pattern(" {2,}"), "a  b   c d") == [(1, 3), (4, 7)]
    assert match_spans(compile_pattern("a*"), "aab") == [(0, 2), (3, 3)]


def test_a_run_then_a_lookahead_against_its_complement_is_linear() -> None:
    """GPT-2's ``\\s+(?!\\S)``: the run gives back at most one char, so no time limit is needed;
    a lookahead against anything else keeps the pattern timed."""
    from tokviz.patterns import is_linear
    from tokviz.pre_tokenizers import GPT2_PATTERN

    assert is_linear(GPT2_PATTERN)
    assert is_linear(r"[ab]+(?![^ab])|\p{L}*(?!\P{L})")
    for pattern in [r"a+(?!b)", r"\s+(?!\s)", r"\s+(?!\S)x", r"\w+(?!\S)", r"[ab]+(?![^abc])"]:
        assert not is_linear(pattern), pattern
