"""The trainers' fast paths against their plain versions (the oracles): same results, exactly."""

from __future__ import annotations

import heapq
from collections import Counter
from typing import Callable, Mapping

import pytest

from hypothesis import given, settings
from hypothesis import strategies as st

from tokviz.sentencepiece.normalizer import SentencePieceNormalizer
from tokviz.history import MergeStep
from tokviz.sentencepiece.pieces import UNK_CHAR, WS, PieceRules, count_words, split_into_words
from tokviz.sentencepiece.trainer_sentences import _char_counts, _replace_rare, _without_empty
from tokviz.sentencepiece.trainer_bpe import BpeResult, sorted_chars, train_bpe

# few letters so that pairs repeat, tie and reach one string by two pairs ("ab"+"c", "a"+"bc")
_WORDS = st.dictionaries(st.text(alphabet=st.sampled_from(list("abc1é▁▅-")), min_size=1, max_size=9).map(lambda w: WS + w),
                         st.integers(min_value=1, max_value=6), min_size=1, max_size=25)


def train_bpe_reference(word_counts: Mapping[str, int], required_chars: Mapping[str, int], num_merges: int,
                        rules: PieceRules | None = None, meta_size: int = 0,
                        progress: Callable[[str, int, int], None] | None = None) -> BpeResult:
    """The same result as :func:`~tokviz.sentencepiece.trainer_bpe.train_bpe`, written plainly (string symbols,
    tuple heap, each touched word rebuilt): the tests' oracle for the fast loops."""
    rules = rules or PieceRules()
    words: list[list[str]] = []
    counts: list[int] = []
    for word, count in word_counts.items():
        if count > 0 and word:
            words.append(list(word))
            counts.append(int(count))
    valid_cache: dict[str, bool] = {}

    def valid(merged: str) -> bool:
        ok = valid_cache.get(merged)
        if ok is None:
            ok = valid_cache[merged] = rules.is_valid(merged)
        return ok

    pair_counts: dict[tuple[str, str], int] = {}
    where: dict[tuple[str, str], set[int]] = {}
    for index, symbols in enumerate(words):
        count = counts[index]
        for pair in zip(symbols, symbols[1:]):
            joined = pair[0] + pair[1]
            ok = valid_cache.get(joined)
            if ok is None:
                ok = valid(joined) and UNK_CHAR not in joined
                valid_cache[joined] = ok
            if not ok:
                continue
            pair_counts[pair] = pair_counts.get(pair, 0) + count
            holders = where.get(pair)
            if holders is None:
                where[pair] = {index}
            else:
                holders.add(index)
    heap = [(-c, len(a) + len(b), a + b, a, b) for (a, b), c in pair_counts.items()]
    heapq.heapify(heap)
    made: set[str] = set()
    dead: set[tuple[str, str]] = set()
    steps: list[MergeStep] = []
    pieces: list[tuple[str, float]] = []
    stop_reason = f"reached the target of {num_merges} merges"
    while len(pieces) < num_merges:
        best = None
        while heap:
            neg, _, merged, left, right = heapq.heappop(heap)
            pair = (left, right)
            if pair in dead or pair_counts.get(pair, 0) != -neg or neg == 0:
                continue
            best = (pair, merged, -neg)
            break
        if best is None:
            stop_reason = "no valid pair left to merge"
            break
        pair, merged, count = best
        dead.add(pair)
        if merged in made:  # the same string reached by another pair: drop it, merge nothing
            continue
        made.add(merged)
        rank = len(pieces)
        pieces.append((merged, -float(rank)))
        steps.append(MergeStep(rank=rank, left=pair[0], right=pair[1], token=merged, count=count,
                               score=float(count), vocab_size=meta_size + len(required_chars) + rank + 1))
        if progress is not None and rank % 50 == 0:
            progress("merges", rank, num_merges)
        # only the pairs around each merged occurrence change: count their deltas, then apply them
        delta: dict[tuple[str, str], int] = {}
        left, right = pair
        for index in where.pop(pair, ()):
            symbols = words[index]
            n = len(symbols)
            i = 0
            new_symbols: list[str] = []
            changed = False
            while i < n:
                if i + 1 < n and symbols[i] == left and symbols[i + 1] == right:
                    new_symbols.append(merged)
                    i += 2
                    changed = True
                else:
                    new_symbols.append(symbols[i])
                    i += 1
            if not changed:
                continue
            count_w = counts[index]
            for p in zip(symbols, symbols[1:]):
                if p in pair_counts:
                    delta[p] = delta.get(p, 0) - count_w
            for a, b in zip(new_symbols, new_symbols[1:]):
                if a == UNK_CHAR or b == UNK_CHAR:
                    continue
                joined = a + b
                ok = valid_cache.get(joined)
                if ok is None:
                    ok = valid(joined)
                if not ok:
                    continue
                p = (a, b)
                delta[p] = delta.get(p, 0) + count_w
                holders = where.get(p)
                if holders is None:
                    where[p] = {index}
                else:
                    holders.add(index)
            words[index] = new_symbols
        pair_counts.pop(pair, None)
        for p, change in delta.items():
            if change == 0 or p == pair or p in dead:
                continue
            c = pair_counts.get(p, 0) + change
            if c <= 0:
                pair_counts.pop(p, None)
                where.pop(p, None)
                continue
            pair_counts[p] = c
            heapq.heappush(heap, (-c, len(p[0]) + len(p[1]), p[0] + p[1], p[0], p[1]))
    for char, _ in sorted_chars(required_chars):
        pieces.append((char, -float(len(pieces))))
    return BpeResult(tuple(steps), tuple(pieces), stop_reason)


def _alphabet(words: dict[str, int]) -> dict[str, int]:
    chars: Counter[str] = Counter()
    for word, count in words.items():
        for char in word:
            chars[char] += count
    chars.pop("▅", None)
    return dict(chars)


def test_bpe_worked_example() -> None:
    words = {"▁hug": 10, "▁pug": 5, "▁hugs": 5}
    result = train_bpe(words, _alphabet(words), 5)
    assert [(s.left, s.right, s.count) for s in result.merge_steps] == [
        ("u", "g", 20), ("▁", "h", 15), ("▁h", "ug", 15), ("▁", "p", 5), ("▁p", "ug", 5)]  # shorter first
    # a tie (count 4, length 2): the smaller string wins, "ab" before "bc"
    tie = {"▁ab": 4, "▁bc": 4}
    assert [s.token for s in train_bpe(tie, _alphabet(tie), 2).merge_steps] == ["ab", "bc"]


@settings(max_examples=200, deadline=None)
@given(words=_WORDS, merges=st.integers(min_value=1, max_value=30),
       rules=st.sampled_from([PieceRules(), PieceRules(max_sentencepiece_length=3), PieceRules(split_digits=True),
                              PieceRules(split_by_number=False)]))
def test_fast_bpe_equals_the_reference(words: dict[str, int], merges: int, rules: PieceRules) -> None:
    alphabet = _alphabet(words)
    fast = train_bpe(words, alphabet, merges, rules)
    plain = train_bpe_reference(words, alphabet, merges, rules)
    assert fast == plain


def test_fast_bpe_on_whole_lines_equals_the_reference() -> None:
    """``split_by_whitespace=false``: a word is a whole sentence, "▁" inside."""
    rules = PieceRules(split_by_whitespace=False)
    lines = {"▁the▁cat▁sat▁on▁the▁mat": 3, "▁the▁hat▁is▁on▁the▁cat": 2, "▁a▁cat": 1}
    fast = train_bpe(lines, _alphabet(lines), 20, rules)
    assert fast == train_bpe_reference(lines, _alphabet(lines), 20, rules)
    assert [s.token for s in fast.merge_steps[:4]] == ["at", "he", "▁t", "▁the"]


@settings(max_examples=300, deadline=None)
@given(piece=st.text(alphabet=st.sampled_from(list("aZ▁é1 \u0301ж-")), min_size=1, max_size=6),
       rules=st.sampled_from([PieceRules(), PieceRules(treat_whitespace_as_suffix=True), PieceRules(split_by_whitespace=False),
                              PieceRules(max_sentencepiece_length=2),
                              PieceRules(split_by_whitespace=False, treat_whitespace_as_suffix=True)]))
def test_ascii_shortcut_of_is_valid_changes_nothing(piece: str, rules: PieceRules) -> None:
    assert rules.is_valid(piece) == rules.check_each_char(piece)


_LINES = st.lists(st.text(alphabet=st.sampled_from(list(" \u3000\t\n\0▁aAé\u0301\u00a0ﬁ①１\u200b\x01<x>Ω")), max_size=10), max_size=6)


@settings(max_examples=200, deadline=None)
@given(texts=_LINES, rule=st.sampled_from(["nmt_nfkc", "nfkc_cf", "identity"]),
       options=st.sampled_from([{}, {"remove_extra_whitespaces": False}, {"add_dummy_prefix": False},
                                {"treat_whitespace_as_suffix": True}, {"escape_whitespaces": False},
                                {"user_defined_symbols": ["<x>", "a"]}]))
def test_normalizing_all_lines_at_once_equals_one_by_one(texts: list[str], rule: str, options: dict) -> None:
    normalizer = SentencePieceNormalizer.from_rule(rule, **options)
    assert normalizer.normalize_all(texts) == [normalizer.normalize(text) for text in texts]


@settings(max_examples=100, deadline=None)
@given(texts=st.lists(st.text(alphabet=st.sampled_from(list("ab▁\n\0é")), max_size=8), max_size=5))
def test_bulk_counts_equal_counting_each_text(texts: list[str]) -> None:
    expected: Counter[str] = Counter()
    for text in texts:
        expected.update(split_into_words(text))
    assert count_words(texts) == expected
    assert _char_counts("".join(texts)) == dict(Counter("".join(texts)))
    sentences = [(text, 1) for text in texts]
    assert _replace_rare(sentences, "é\n") == [(text.replace("é", "▅").replace("\n", "▅"), 1) for text in texts]


def test_sorted_chars_order() -> None:
    assert sorted_chars({"b": 2, "a": 2, "c": 5}) == [("c", 5), ("a", 2), ("b", 2)]


def test_pretokenizer_cuts_where_no_piece_may_cross() -> None:
    """sentencepiece 0.2.3's ``pretokenizer=``: a function of the normalized sentence whose pieces no vocabulary piece crosses."""
    import io
    import re

    import tokviz.sentencepiece as tsp

    lines = ["CamelCaseWord and XMLHttpRequest 12345", "Don't split HelloWorld", "more CamelCase words 678"] * 40
    pattern = re.compile(r"'[a-zA-Z]+|[A-Z]?[a-z]+|[A-Z]+(?![a-z])|\d{1,3}|[^\w\s]|▁+|\s+")
    out = io.BytesIO()
    assert tsp.SentencePieceTrainer.train(sentence_iterator=iter(lines), model_writer=out, vocab_size=60, model_type="unigram",
                                          hard_vocab_limit=False, pretokenizer=pattern.findall) is True
    sp = tsp.SentencePieceProcessor(model_proto=out.getvalue())
    normal = [sp.id_to_piece(i) for i in range(len(sp)) if not (sp.is_control(i) or sp.is_unknown(i))]
    assert "▁Camel" not in normal and all(len(pattern.findall(piece)) == 1 for piece in normal)
    with pytest.raises(ValueError):  # pieces that do not spell the sentence
        tsp.SentencePieceTrainer.train(sentence_iterator=iter(lines), model_writer=io.BytesIO(), vocab_size=60,
                                       hard_vocab_limit=False, pretokenizer=lambda text: ["hello"])
    tsp.SentencePieceTrainer.train(sentence_iterator=iter(lines), model_writer=io.BytesIO(), vocab_size=60, hard_vocab_limit=False,
                                   pretokenizer=lambda text: ["hello"], allow_inconsistent_pretokenization=True)
    with pytest.raises(ValueError):
        tsp.SentencePieceTrainer.train(sentence_iterator=iter(lines), model_writer=io.BytesIO(), vocab_size=60,
                                       pretokenizer=str.split, pretokenization_delimiter="|")


def test_empty_sentences_are_replaced_by_the_last_as_sentencepiece_does() -> None:
    # (the order sentencepiece's unigram seeds see: what follows each sentence's end)
    sentences = [("", 1), ("▁a", 1), ("", 1), ("▁b", 1), ("▁c", 1)]
    assert _without_empty(sentences) == [("▁c", 1), ("▁a", 1), ("▁b", 1)]
