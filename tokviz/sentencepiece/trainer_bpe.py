"""SentencePiece's BPE trainer: merge the most frequent valid adjacent pair, on words with ``▁``.

The corpus is words (``▁`` starts each) with counts; each word starts as its characters
(characters outside the alphabet are the unknown marker ``▅``, which never merges). Each step
merges the pair with the highest count; ties go to the SHORTER merged piece, then the
smaller string (sentencepiece's rule, not HF's). A pair whose merged string is not a valid
piece (two scripts, ``▁`` inside, too long) is never counted. A merged string already made
from another pair is dropped without merging. Piece ``k`` (0-based) scores ``-k``; the
alphabet follows the merges, most frequent first, and continues the scores.

    >>> result = train_bpe({"▁hug": 10, "▁pug": 5, "▁hugs": 5}, {"▁": 20, "u": 20, "g": 20, "h": 15, "p": 5, "s": 5}, 3)
    >>> [(s.left, s.right, s.count) for s in result.merge_steps]
    [('u', 'g', 20), ('▁', 'h', 15), ('▁h', 'ug', 15)]
    >>> result.pieces[:4]
    (('ug', -0.0), ('▁h', -1.0), ('▁hug', -2.0), ('g', -3.0))

Counts are exact at every step (sentencepiece reaches the same counts lazily).
"""

from __future__ import annotations

import gc
import heapq
from dataclasses import dataclass
from itertools import chain
from typing import Callable, Mapping

import numpy as np

from tokviz.history import MergeStep
from tokviz.sentencepiece.pieces import UNK_CHAR, PieceRules

__all__ = ["BpeResult", "train_bpe", "train_bpe_reference", "sorted_chars"]


@dataclass(frozen=True, slots=True)
class BpeResult:
    """The merges made (as :class:`MergeStep` records) and the final ``(piece, score)`` list (merges then alphabet)."""

    merge_steps: tuple[MergeStep, ...]
    pieces: tuple[tuple[str, float], ...]
    stop_reason: str


def sorted_chars(char_counts: Mapping[str, int]) -> list[tuple[str, int]]:
    """sentencepiece's ``Sorted``: count descending, then character ascending."""
    return sorted(char_counts.items(), key=lambda item: (-item[1], item[0]))


def train_bpe_reference(word_counts: Mapping[str, int], required_chars: Mapping[str, int], num_merges: int,
                        rules: PieceRules | None = None, meta_size: int = 0,
                        progress: Callable[[str, int, int], None] | None = None) -> BpeResult:
    """The same result as :func:`train_bpe`, written plainly (string symbols, tuple heap, each
    touched word rebuilt): the tests' oracle for the fast loop."""
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


# A symbol is an int id; a pair is one int ``left << _BITS | right``; a heap entry is
# ``(-count * _COUNT_UNIT + merged_length, merged, left string, pair)``, so the smallest entry is
# the most frequent pair, then the shortest merged piece, then the smaller merged string and left
# part (sentencepiece's order): ties are settled by the tuple, never by popping a whole tied
# group (thousands of pairs tie at small counts late in training).
_BITS = 24
_MASK = (1 << _BITS) - 1
_LENGTH_BITS = 10  # max_sentencepiece_length is at most 512
_COUNT_UNIT = 1 << _LENGTH_BITS


def train_bpe(word_counts: Mapping[str, int], required_chars: Mapping[str, int], num_merges: int,
              rules: PieceRules | None = None, meta_size: int = 0,
              progress: Callable[[str, int, int], None] | None = None) -> BpeResult:
    """Learn up to ``num_merges`` merges from ``{word: count}``; ``required_chars`` is the alphabet with counts.

    The incremental scheme of tokviz's BPE trainer (and HF's): symbols are ints, each word a
    list of ids, pair counts change only around the merged occurrences of the words that hold
    the pair (an index pair -> words), and a heap entry whose count went stale is pushed back
    with its current count when it surfaces (counts of old pairs only fall). Same result as
    :func:`train_bpe_reference`.
    """
    rules = rules or PieceRules()
    was_enabled = gc.isenabled()
    gc.disable()  # millions of small, long-lived objects: the collector would only rescan them
    try:
        return _train_bpe(word_counts, required_chars, num_merges, rules, meta_size, progress)
    finally:
        if was_enabled:
            gc.enable()


def _train_bpe(word_counts: Mapping[str, int], required_chars: Mapping[str, int], num_merges: int, rules: PieceRules,
               meta_size: int, progress: Callable[[str, int, int], None] | None) -> BpeResult:
    kept = [(word, int(count)) for word, count in word_counts.items() if count > 0 and word]
    strings, words, flat_ids = _word_ids([word for word, _ in kept])
    counts = [count for _, count in kept]
    is_valid = rules.is_valid
    valid: dict[int, bool] = {}  # pair code -> may it be counted (False once merged or dropped)

    def check(code: int) -> bool:
        ok = valid[code] = is_valid(strings[code >> _BITS] + strings[code & _MASK])
        return ok

    pair_counts, where = _initial_pairs(words, counts, check, flat_ids)
    get_count, get_valid = pair_counts.get, valid.get
    heap = [(len(strings[code >> _BITS]) + len(strings[code & _MASK]) - count * _COUNT_UNIT,
             strings[code >> _BITS] + strings[code & _MASK], strings[code >> _BITS], code)
            for code, count in pair_counts.items() if valid[code]]
    heapq.heapify(heap)
    heappush, heappop = heapq.heappush, heapq.heappop
    made: set[str] = set()
    steps: list[MergeStep] = []
    pieces: list[tuple[str, float]] = []
    stop_reason = f"reached the target of {num_merges} merges"
    while len(pieces) < num_merges:
        best = None
        while heap:
            entry = heappop(heap)
            key, _, _, code = entry
            count = -(key >> _LENGTH_BITS)
            current = get_count(code, 0)
            if current != count:
                if current > 0 and get_valid(code) is not False:  # stale (counts of old pairs only fall): back with the current count
                    heappush(heap, (key + (count - current) * _COUNT_UNIT, entry[1], entry[2], code))
                continue
            ok = get_valid(code)
            if ok is None:
                ok = check(code)
            if not ok:  # a new pair is checked only when it comes out on top (most never do)
                where.pop(code, None)
                continue
            best = entry
            break
        if best is None:
            stop_reason = "no valid pair left to merge"
            break
        _, merged, _, code = best
        left, right = code >> _BITS, code & _MASK
        pair_counts[code] = 0  # (kept: a dropped pair stays in words, and its neighbours' merges count it down)
        valid[code] = False
        holders = where.pop(code, ())
        if merged in made:  # the same string reached by another pair: drop it, merge nothing
            continue
        made.add(merged)
        rank = len(pieces)
        pieces.append((merged, -float(rank)))
        steps.append(MergeStep(rank=rank, left=strings[left], right=strings[right], token=merged, count=count,
                               score=float(count), vocab_size=meta_size + len(required_chars) + rank + 1))
        if progress is not None and rank % 50 == 0:
            progress("merges", rank, num_merges)
        new_id = len(strings)
        strings.append(merged)
        new_left, new_right = new_id << _BITS, new_id
        # every pair made here holds the new id, so none is known yet: each occurrence only notes
        # its word under the pair (once per occurrence); the counts are summed per pair at the end
        new_where: dict[int, list[int]] = {}
        taken: dict[int, int] = {}  # (new, left) pairs a later occurrence in the same word took apart
        for index in holders:
            word = words[index]
            remaining = word.count(left)  # (counted, not searched until ValueError: raising costs more)
            if not remaining:
                continue
            weight = counts[index]
            position = -1
            while remaining:
                position = word.index(left, position + 1)
                remaining -= 1
                if position + 1 < len(word) and word[position + 1] == right:
                    if right == left:
                        remaining -= 1
                    if position:
                        before = word[position - 1]
                        if before == new_id:
                            taken[before << _BITS | left] = taken.get(before << _BITS | left, 0) + weight
                        else:
                            pair_counts[before << _BITS | left] -= weight
                        changed = before << _BITS | new_right
                        bucket = new_where.get(changed)
                        if bucket is None:
                            new_where[changed] = [index]
                        else:
                            bucket.append(index)
                    word[position:position + 2] = (new_id,)
                    if position + 1 < len(word):
                        after = word[position + 1]
                        pair_counts[right << _BITS | after] -= weight
                        changed = new_left | after
                        bucket = new_where.get(changed)
                        if bucket is None:
                            new_where[changed] = [index]
                        else:
                            bucket.append(index)
        count_of = counts.__getitem__
        for changed, bucket in new_where.items():
            count = sum(map(count_of, bucket)) - taken.get(changed, 0)
            pair_counts[changed] = count
            if count > 0:
                first_part = strings[changed >> _BITS]
                second = strings[changed & _MASK]
                heappush(heap, (len(first_part) + len(second) - count * _COUNT_UNIT, first_part + second, first_part, changed))
            where[changed] = bucket
    for char, _ in sorted_chars(required_chars):
        pieces.append((char, -float(len(pieces))))
    return BpeResult(tuple(steps), tuple(pieces), stop_reason)


def _word_ids(words: list[str]) -> tuple[list[str], list[list[int]], "np.ndarray"]:
    """``(characters sorted, each word as a list of their ids, all the ids in a row)`` by one numpy
    pass over the words' code points: ``_word_ids(["ba", "a"])[:2] == (["a", "b"], [[1, 0], [0]])``."""
    codes = np.frombuffer("".join(words).encode("utf-32-le", errors="surrogatepass"), dtype="<u4")
    present = np.flatnonzero(np.bincount(codes)) if len(codes) else np.zeros(0, dtype=np.int64)
    table = np.zeros(int(present[-1]) + 1 if len(present) else 1, dtype=np.int64)
    table[present] = np.arange(len(present))
    flat = table[codes]  # (a lookup table over the code points: no sort)
    ids = flat.tolist()
    ends = np.cumsum(np.fromiter(map(len, words), dtype=np.int64, count=len(words))).tolist()
    starts = [0, *ends[:-1]]
    return [chr(code) for code in present.tolist()], [ids[a:b] for a, b in zip(starts, ends)], flat


def _initial_pairs(words: list[list[int]], counts: list[int], check: Callable[[int], bool],
                   flat_ids: "np.ndarray | None" = None) -> tuple[dict[int, int], dict[int, list[int]]]:
    """``({pair code: weighted count}, {pair code: indices of the words holding it})``: counts of
    all adjacent pairs, holders of the valid ones, in a few numpy passes over all the words' ids
    (``check(code)`` once per distinct pair). A word index may repeat in a holders list (the
    merge loop appends); the loop only finds nothing to merge there the second time."""
    sizes = np.fromiter(map(len, words), dtype=np.int64, count=len(words))
    if sizes.sum() - len(words) <= 0:
        return {}, {}
    ids = flat_ids if flat_ids is not None else np.fromiter(chain.from_iterable(words), dtype=np.int64, count=int(sizes.sum()))
    owner = np.repeat(np.arange(len(words), dtype=np.int64), sizes)
    inside = owner[:-1] == owner[1:]
    codes = ((ids[:-1] << _BITS) | ids[1:])[inside]
    owner = owner[:-1][inside]
    distinct, inverse = _unique_inverse(codes)
    keep = np.fromiter((check(code) for code in distinct.tolist()), dtype=bool, count=len(distinct))
    weights = np.bincount(inverse, weights=np.asarray(counts, dtype=np.float64)[owner], minlength=len(distinct))
    # every adjacent pair is counted (a merge counts its neighbours down without asking), only valid ones go on the heap
    pair_counts = dict(zip(distinct.tolist(), np.rint(weights).astype(np.int64).tolist()))
    # (pair, word) once each, grouped by pair
    chosen = keep[inverse]
    key = np.sort(inverse[chosen] * len(words) + owner[chosen])
    if len(key):
        key = key[np.concatenate(([True], key[1:] != key[:-1]))]
    pair_index, word_index = np.divmod(key, len(words))
    bounds = np.flatnonzero(np.diff(pair_index)) + 1
    starts = np.concatenate(([0], bounds)).tolist()
    ends = np.concatenate((bounds, [len(key)])).tolist()
    holders = word_index.tolist()
    pair_codes = distinct[pair_index[starts]].tolist() if len(key) else []
    where = {code: holders[a:b] for code, a, b in zip(pair_codes, starts, ends)}
    return pair_counts, where


def _unique_inverse(values: "np.ndarray") -> tuple["np.ndarray", "np.ndarray"]:
    """``np.unique(values, return_inverse=True)`` by one sort (numpy 2's hashing unique is slower here)."""
    order = np.argsort(values, kind="stable")
    ordered = values[order]
    first = np.empty(len(values), dtype=bool)
    first[:1] = True
    first[1:] = ordered[1:] != ordered[:-1]
    inverse = np.empty(len(values), dtype=np.int64)
    inverse[order] = np.cumsum(first) - 1
    return ordered[first], inverse
