"""The BPE merge loop of :func:`~tokviz.sentencepiece.trainer_bpe.train_bpe` in numpy, for a big corpus.

All the words are one row of int symbols linked to their neighbours; a pair is one int
``left << _BITS | right``; ``where`` maps it to the positions of its left symbol. A merge with many
positions is done in numpy, all its occurrences at once; a small one position by position through
memoryviews of the same rows. (Apart from :mod:`~tokviz.sentencepiece.trainer_bpe` so that a small
training, which runs on word strings, neither loads numpy nor compiles this.)
"""

from __future__ import annotations

import heapq
from collections import defaultdict
from typing import Callable

import numpy as np

from tokviz.sentencepiece.pieces import PieceRules

__all__ = ["train_on_rows"]

_BITS = 24
_MASK = (1 << _BITS) - 1

# A heap entry is ``(-count * _COUNT_UNIT + merged_length, merged, left string, pair)``, so the
# smallest entry is the most frequent pair, then the shortest merged piece, then the smaller merged
# string and left part (sentencepiece's order): ties are settled by the tuple, never by popping a
# whole tied group (thousands of pairs tie at small counts late in training).
_LENGTH_BITS = 10  # max_sentencepiece_length is at most 512
_COUNT_UNIT = 1 << _LENGTH_BITS


def train_on_rows(kept: list[tuple[str, int]], num_merges: int, rules: PieceRules,
                  progress: Callable[[str, int, int], None] | None,
                  history: bool) -> tuple[list[tuple[str, str, int]], list[tuple[str, float]], str]:
    """``(merges made as (left, right, count), their pieces, stop reason)`` of ``[(word, count)]``."""
    is_valid = rules.is_valid
    valid: dict[int, bool] = {}  # pair code -> may it be counted (False once merged or dropped)

    def check(code: int) -> bool:
        ok = valid[code] = is_valid(strings[code >> _BITS] + strings[code & _MASK])
        return ok

    # all the words in a row, one position per symbol: ``sym`` (-1 once merged into its left
    # neighbour), the next and previous live positions of the same word (-1 at its ends), the
    # word's count; ``where`` maps a pair code to the positions of its left symbol, ascending
    strings, rows, mark = _numpy_rows(kept)
    pair_counts, where = _initial_pairs(rows[0], rows[1], rows[3], check)
    # a big merge is done in numpy on the rows, a small one position by position through
    # memoryviews of the same rows (each is ~50 ns a step for Python, no copy to keep in step)
    sym, nxt, prv, weight = (memoryview(values) for values in rows)
    get_count, get_valid = pair_counts.get, valid.get
    heap = [(len(strings[code >> _BITS]) + len(strings[code & _MASK]) - count * _COUNT_UNIT,
             strings[code >> _BITS] + strings[code & _MASK], strings[code >> _BITS], code)
            for code, count in pair_counts.items() if valid.get(code) is not False]
    heapq.heapify(heap)
    heappush, heappop = heapq.heappush, heapq.heappop
    # pairs counted below the merge being made wait in buckets by count (most never come up:
    # 83% of the pairs made on the 6.8 MB corpus); a bucket goes onto the heap once its count
    # reaches the heap's best (an upper bound), before anything is taken from the heap
    pending: dict[int, list[int]] = {}
    pending_counts: list[int] = []  # the buckets' counts, negated (a max-heap)
    floor = 0  # the count of the merge being made: a pair counted at least that goes onto the heap at once
    made: set[str] = set()
    steps: list[tuple[int, int, int]] = []  # (left id, right id, count) of each merge made
    pieces: list[tuple[str, float]] = []
    stop_reason = f"reached the target of {num_merges} merges"
    while len(pieces) < num_merges:
        best = None
        while True:
            if pending_counts and (not heap or -pending_counts[0] >= -(heap[0][0] >> _LENGTH_BITS)):
                top = -heappop(pending_counts)
                for code in pending.pop(top):
                    current = get_count(code, 0)
                    if current == top:
                        first_part = strings[code >> _BITS]
                        second_part = strings[code & _MASK]
                        heappush(heap, (len(first_part) + len(second_part) - top * _COUNT_UNIT, first_part + second_part,
                                        first_part, code))
                    elif current > 0 and get_valid(code) is not False:  # counted down meanwhile: a lower bucket
                        bucket = pending.get(current)
                        if bucket is None:
                            pending[current] = [code]
                            heappush(pending_counts, -current)
                        else:
                            bucket.append(code)
                continue
            if not heap:
                break
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
        floor = count
        left, right = code >> _BITS, code & _MASK
        pair_counts[code] = 0  # (kept: a dropped pair stays in words, and its neighbours' merges count it down)
        valid[code] = False
        holders = where.pop(code, ())
        if merged in made:  # the same string reached by another pair: drop it, merge nothing
            continue
        made.add(merged)
        rank = len(pieces)
        pieces.append((merged, -float(rank)))
        if history:
            steps.append((left, right, count))
        if progress is not None and rank % 50 == 0:
            progress("merges", rank, num_merges)
        new_id = len(strings)
        strings.append(merged)
        if len(holders) >= _VECTOR_MIN:
            made_pairs = _merge_vectorized(holders, left, right, new_id, *rows, mark, pair_counts)
            for changed, (count, positions) in made_pairs.items():
                pair_counts[changed] = count
                if count >= floor:
                    first_part = strings[changed >> _BITS]
                    second_part = strings[changed & _MASK]
                    heappush(heap, (len(first_part) + len(second_part) - count * _COUNT_UNIT, first_part + second_part,
                                    first_part, changed))
                elif count > 0:
                    bucket = pending.get(count)
                    if bucket is None:
                        pending[count] = [changed]
                        heappush(pending_counts, -count)
                    else:
                        bucket.append(changed)
                where[changed] = positions
            continue
        if not isinstance(holders, list):
            holders = holders.tolist() if len(holders) else []
        new_left, right_left = new_id << _BITS, right << _BITS
        # every pair made here holds the new id, so none is known yet: each occurrence only notes
        # its position under the pair; the counts are summed per pair at the end
        new_where: defaultdict[int, list[int]] = defaultdict(list)
        taken: dict[int, int] = {}  # (new, left) pairs a later occurrence took apart into (new, new)
        for position in holders:  # ascending: with left == right, "aaa" merges its first two
            if sym[position] != left:
                continue
            second = nxt[position]
            if second < 0 or sym[second] != right:
                continue
            w = weight[position]
            before = prv[position]
            if before >= 0:
                symbol = sym[before]
                if symbol == new_id:  # merged just before: (new, left) there is (new, new) now
                    changed = new_left | left
                    taken[changed] = taken.get(changed, 0) + w
                    changed = new_left | new_id
                else:
                    symbol <<= _BITS
                    pair_counts[symbol | left] -= w
                    changed = symbol | new_id
                new_where[changed].append(before)
            sym[position] = new_id
            sym[second] = -1
            after = nxt[second]
            nxt[position] = after
            if after >= 0:
                prv[after] = position
                symbol = sym[after]
                pair_counts[right_left | symbol] -= w
                new_where[new_left | symbol].append(position)
        weight_of = weight.__getitem__
        for changed, bucket in new_where.items():
            count = weight_of(bucket[0]) if len(bucket) == 1 else sum(map(weight_of, bucket))
            if taken:
                count -= taken.get(changed, 0)
            pair_counts[changed] = count
            if count >= floor:
                first_part = strings[changed >> _BITS]
                second_part = strings[changed & _MASK]
                heappush(heap, (len(first_part) + len(second_part) - count * _COUNT_UNIT, first_part + second_part, first_part, changed))
            elif count > 0:
                waiting = pending.get(count)
                if waiting is None:
                    pending[count] = [changed]
                    heappush(pending_counts, -count)
                else:
                    waiting.append(changed)
            where[changed] = bucket
    return [(strings[left], strings[right], count) for left, right, count in steps], pieces, stop_reason


#: a merge with at least this many candidate positions is done in numpy (below, its fixed cost
#: per merge, ~90 calls, is more than going one position at a time; measured: 20-60 are alike)
_VECTOR_MIN = 40


def _merge_vectorized(holders: np.ndarray, left: int, right: int, new_id: int, sym: np.ndarray, nxt: np.ndarray,
                      prv: np.ndarray, weight: np.ndarray, mark: np.ndarray,
                      pair_counts: dict[int, int]) -> dict[int, tuple[int, np.ndarray]]:
    """The per-position loop of :func:`_train_bpe` for one merge, in numpy: merges every
    occurrence of ``left right`` among the candidate positions (left to right), counts the
    neighbouring pairs down in ``pair_counts`` and returns ``{new pair: (count, positions)}``.
    ``mark``: all False, one per position (scratch, left all False)."""
    if not len(holders):
        return {}
    holders = np.asarray(holders, dtype=np.int64)
    starts = holders[sym[holders] == left]
    seconds = nxt[starts]
    found = seconds >= 0
    starts, seconds = starts[found], seconds[found]
    found = sym[seconds] == right
    starts, seconds = starts[found], seconds[found]
    if not len(starts):
        return {}
    if left == right and len(starts) > 1:
        # runs like "aaaa": an occurrence whose first symbol is another's second waits; merge
        # the run heads, drop what they took, and repeat on the rest (1st, 3rd, ... of a run)
        chosen = []
        while len(starts):
            mark[seconds] = True
            head = ~mark[starts]
            mark[seconds] = False
            taken = seconds[head]
            chosen.append(starts[head])
            mark[taken] = True
            rest = ~head & ~mark[starts]
            mark[taken] = False
            starts, seconds = starts[rest], seconds[rest]
        starts = np.sort(np.concatenate(chosen))
        seconds = nxt[starts]
    w = weight[starts]
    before = prv[starts]
    after = nxt[seconds]
    # old pairs around each occurrence, once each: (before, left) unless "before" is another
    # occurrence's second symbol, whose (right, after) pair is the same one
    has_before = before >= 0
    mark[seconds] = True
    has_before[has_before] = ~mark[before[has_before]]
    mark[seconds] = False
    has_after = after >= 0
    lefts, afters = before[has_before], after[has_after]
    for symbol, total in zip(*_tally(sym[lefts], w[has_before])):
        pair_counts[symbol << _BITS | left] -= total
    for symbol, total in zip(*_tally(sym[afters], w[has_after])):
        pair_counts[right << _BITS | symbol] -= total
    # merge
    sym[starts] = new_id
    sym[seconds] = -1
    nxt[starts] = after
    prv[afters] = starts[has_after]
    # new pairs: (new, after) at each occurrence, (before, new) unless "before" is merged too
    # (then it is that occurrence's (new, new)); grouped by the other symbol, positions ascending
    before = prv[starts]
    has_before = before >= 0
    has_before[has_before] = sym[before[has_before]] != new_id
    lefts = before[has_before]
    made: dict[int, tuple[int, np.ndarray]] = {}
    for symbols, positions, weights, shift in ((sym[lefts], lefts, w[has_before], _BITS), (sym[afters], starts[has_after], w[has_after], 0)):
        if not len(symbols):
            continue
        # (a stable sort keeps each group's positions ascending; on 16-bit keys it is a radix sort)
        order = np.argsort(symbols.astype(np.uint16) if new_id < 1 << 16 else symbols, kind="stable")
        symbols = symbols[order]
        first = np.flatnonzero(np.concatenate(([True], symbols[1:] != symbols[:-1])))
        totals = np.add.reduceat(weights[order], first).tolist()
        positions = positions[order]
        bounds = first.tolist() + [len(symbols)]
        fixed = new_id << (_BITS - shift)
        for symbol, total, a, b in zip(symbols[first].tolist(), totals, bounds, bounds[1:]):
            made[symbol << shift | fixed] = (total, positions[a:b])
    return made


def _tally(symbols: np.ndarray, weights: np.ndarray) -> tuple[list[int], list[int]]:
    """``(distinct symbols, summed weight of each)``: ``_tally([3, 1, 3], [1, 2, 5]) == ([1, 3], [2, 6])`` (arrays in)."""
    if not len(symbols):
        return [], []
    sums = np.bincount(symbols, weights=weights)
    present = np.flatnonzero(sums)
    return present.tolist(), np.rint(sums[present]).astype(np.int64).tolist()


def _numpy_rows(kept: list[tuple[str, int]]) -> tuple[list[str], tuple[np.ndarray, ...], np.ndarray]:
    """``(characters sorted, (sym, nxt, prv, weight), mark)``: :func:`_train_bpe`'s rows of ``[(word, count)]`` in numpy
    (``mark``: its scratch row for :func:`_merge_vectorized`)."""
    strings, sizes, sym = _word_ids([word for word, _ in kept])
    total = len(sym)
    ends = np.cumsum(sizes)
    nxt = np.arange(1, total + 1, dtype=np.int64)
    nxt[ends - 1] = -1
    prv = np.arange(-1, total - 1, dtype=np.int64)
    prv[ends - sizes] = -1
    weight = np.repeat(np.fromiter((count for _, count in kept), dtype=np.int64, count=len(kept)), sizes)
    return strings, (sym, nxt, prv, weight), np.zeros(total, dtype=bool)


def _word_ids(words: list[str]) -> tuple[list[str], np.ndarray, np.ndarray]:
    """``(characters sorted, each word's length, all the words' ids in a row)`` by one numpy pass
    over the words' code points: ``_word_ids(["ba", "a"])`` is ``(["a", "b"], [2, 1], [1, 0, 0])`` (as arrays)."""
    codes = np.frombuffer("".join(words).encode("utf-32-le", errors="surrogatepass"), dtype="<u4")
    present = np.flatnonzero(np.bincount(codes)) if len(codes) else np.zeros(0, dtype=np.int64)
    table = np.zeros(int(present[-1]) + 1 if len(present) else 1, dtype=np.int64)
    table[present] = np.arange(len(present))
    flat = table[codes]  # (a lookup table over the code points: no sort)
    sizes = np.fromiter(map(len, words), dtype=np.int64, count=len(words))
    return [chr(code) for code in present.tolist()], sizes, flat


def _initial_pairs(sym: np.ndarray, nxt: np.ndarray, weight: np.ndarray,
                   check: Callable[[int], bool]) -> tuple[dict[int, int], dict[int, np.ndarray]]:
    """``({pair code: weighted count}, {pair code: positions of its left symbol, ascending})``:
    counts of all adjacent pairs, positions of the valid ones, in a few numpy passes
    (``check(code)`` once per distinct pair)."""
    positions = np.flatnonzero(nxt >= 0)
    if not len(positions):
        return {}, {}
    lefts, rights = sym[positions], sym[positions + 1]
    base = int(sym.max()) + 1
    if base * base <= 1 << 16:  # (pairs of 256 characters or fewer: a radix sort of 16-bit keys)
        order = np.argsort((lefts * base + rights).astype(np.uint16), kind="stable")
    else:
        order = np.argsort((lefts << _BITS) | rights, kind="stable")
    codes, positions = (lefts[order] << _BITS) | rights[order], positions[order]
    first = np.flatnonzero(np.concatenate(([True], codes[1:] != codes[:-1])))
    distinct = codes[first].tolist()
    totals = np.add.reduceat(weight[positions], first).tolist()
    # every adjacent pair is counted (a merge counts its neighbours down without asking), only valid ones are placed
    pair_counts = dict(zip(distinct, totals))
    bounds = first.tolist() + [len(codes)]
    where = {code: positions[a:b] for code, a, b in zip(distinct, bounds, bounds[1:]) if check(code)}
    return pair_counts, where
