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
import sys
from collections import defaultdict
from dataclasses import dataclass
from itertools import chain, compress, islice, repeat
from operator import add, contains, itemgetter
from typing import Callable, Iterator, Mapping

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


#: below this many symbols (characters of the distinct words) a training runs without numpy unless it
#: is loaded already: importing it (~0.08 s CPU) costs more than its big merges save. Measured at 4,000
#: pieces, CPU with the import: 76k symbols (botchan-sized) 0.18 s on lists, 0.23 s in numpy; 121k 0.33 / 0.28
NUMPY_MIN_SYMBOLS = 100_000


def use_numpy(symbols: int) -> bool:
    """Whether a training on ``symbols`` characters (of the distinct words) uses numpy: a big one, or numpy is loaded."""
    return symbols >= NUMPY_MIN_SYMBOLS or "numpy" in sys.modules


def train_bpe(word_counts: Mapping[str, int], required_chars: Mapping[str, int], num_merges: int,
              rules: PieceRules | None = None, meta_size: int = 0,
              progress: Callable[[str, int, int], None] | None = None, numpy: bool | None = None,
              history: bool = True) -> BpeResult:
    """Learn up to ``num_merges`` merges from ``{word: count}``; ``required_chars`` is the alphabet with counts.

    The incremental scheme of tokviz's BPE trainer (and HF's): symbols are ints, all the words
    one row of ids linked to their neighbours, pair counts change only around the merged
    occurrences (an index pair -> positions of its left symbol), and a heap entry whose count
    went stale is pushed back with its current count when it surfaces (counts of old pairs only
    fall); pairs counted below the merge being made wait in buckets by count. A merge with many
    positions is done in numpy, a small one position by position; without numpy (``numpy=False``;
    ``None``: :func:`use_numpy` by size) every merge is, on lists. Same result as
    :func:`train_bpe_reference` either way. ``history=False``: no ``merge_steps`` (only the pieces).
    """
    rules = rules or PieceRules()
    was_enabled = gc.isenabled()
    gc.disable()  # millions of small, long-lived objects: the collector would only rescan them
    try:
        return _train_bpe(word_counts, required_chars, num_merges, rules, meta_size, progress, numpy, history)
    finally:
        if was_enabled:
            gc.enable()


def _train_bpe(word_counts: Mapping[str, int], required_chars: Mapping[str, int], num_merges: int, rules: PieceRules,
               meta_size: int, progress: Callable[[str, int, int], None] | None, numpy: bool | None,
               history: bool) -> BpeResult:
    kept = [(word, int(count)) for word, count in word_counts.items() if count > 0 and word]
    if numpy is None:
        numpy = use_numpy(sum(len(word) for word, _ in kept))
    if not numpy:
        return _finish(*_train_on_words(kept, num_merges, rules, progress, history), required_chars, meta_size)
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
    return _finish([(strings[left], strings[right], count) for left, right, count in steps], pieces, stop_reason,
                   required_chars, meta_size)


def _finish(steps: list[tuple[str, str, int]], pieces: list[tuple[str, float]], stop_reason: str,
            required_chars: Mapping[str, int], meta_size: int) -> BpeResult:
    """The :class:`BpeResult` of the merges made (``(left, right, count)`` each, and their pieces): the alphabet follows."""
    for char, _ in sorted_chars(required_chars):
        pieces.append((char, -float(len(pieces))))
    size = meta_size + len(required_chars) + 1
    merge_steps = tuple(MergeStep(rank=rank, left=left, right=right, token=pieces[rank][0], count=count,
                                  score=float(count), vocab_size=size + rank) for rank, (left, right, count) in enumerate(steps))
    return BpeResult(merge_steps, tuple(pieces), stop_reason)


#: a merge whose pair is listed in at least this many words is done on them all at once, by C-level string
#: operations on the words joined (below, word by word in Python)
_BULK_MIN = 12
_LAST, _FIRST = itemgetter(slice(-1, None)), itemgetter(slice(0, 1))


def _fresh_chars(used: set[str]) -> Iterator[str]:
    """Characters for new symbols, none of ``used`` (the private-use area first: strings stay two bytes a character)."""
    for code in chain(range(0xE000, 0x10000), range(0x100, 0xD800), range(0x10000, 0x110000)):
        if chr(code) not in used:
            yield chr(code)


def _train_on_words(kept: list[tuple[str, int]], num_merges: int, rules: PieceRules,
                    progress: Callable[[str, int, int], None] | None,
                    history: bool) -> tuple[list[tuple[str, str, int]], list[tuple[str, float]], str]:
    """:func:`_train_bpe` without numpy: ``(merges made as (left, right, count), their pieces, stop reason)``.

    Each distinct word is a string of one character per symbol (its own characters at first, a fresh
    character for each merged piece), so a merge in a word is ``str.split`` on the pair and a join
    with the new character; the neighbours of each occurrence are the ends of the parts. ``where``
    lists for each pair the words holding it (once per occurrence; a word that lost it since is
    skipped). A pair listed in many words is merged in all of them at once: the words joined by a
    separator, split on the pair, joined again with the new character and split back, in C; Python
    then only notes each occurrence's neighbours. A pair is two characters; counts are per pair.
    """
    words = [word for word, _ in kept]
    weights = [count for _, count in kept]
    weight_of = weights.__getitem__
    alphabet = set("".join(words))
    fresh = _fresh_chars(alphabet)
    separator = next(fresh)
    text_of = {char: char for char in alphabet}  # symbol -> its piece
    where: defaultdict[str, list[int]] = defaultdict(list)
    for index, word in enumerate(words):
        for pair in map(add, word, islice(word, 1, None)):
            where[pair].append(index)
    # every adjacent pair is counted (a merge counts its neighbours down without asking); one is checked
    # for validity when it first comes out on top of the queue (most never do)
    counts = {pair: weights[at[0]] if len(at) == 1 else sum(map(weight_of, at)) for pair, at in where.items()}
    get_count, is_valid = counts.get, rules.is_valid
    dead: set[str] = set()  # pairs merged, dropped or invalid
    heap = [(2 - count * _COUNT_UNIT, pair, pair[0], pair) for pair, count in counts.items()]
    heapq.heapify(heap)
    heappush, heappop = heapq.heappush, heapq.heappop
    pending: dict[int, list[str]] = {}  # as in _train_bpe: pairs counted below the merge being made, by count
    pending_counts: list[int] = []
    made: set[str] = set()
    steps: list[tuple[str, str, int]] = []
    pieces: list[tuple[str, float]] = []
    stop_reason = f"reached the target of {num_merges} merges"
    while len(pieces) < num_merges:
        best = None
        while True:
            if pending_counts and (not heap or -pending_counts[0] >= -(heap[0][0] >> _LENGTH_BITS)):
                top = -heappop(pending_counts)
                for pair in pending.pop(top):
                    current = get_count(pair, 0)
                    if current == top:
                        first_part = text_of[pair[0]]
                        merged = first_part + text_of[pair[1]]
                        heappush(heap, (len(merged) - top * _COUNT_UNIT, merged, first_part, pair))
                    elif current > 0 and pair not in dead:  # counted down meanwhile: a lower bucket
                        bucket = pending.get(current)
                        if bucket is None:
                            pending[current] = [pair]
                            heappush(pending_counts, -current)
                        else:
                            bucket.append(pair)
                continue
            if not heap:
                break
            entry = heappop(heap)
            key, merged, _, pair = entry
            count = -(key >> _LENGTH_BITS)
            current = get_count(pair, 0)
            if current != count or pair in dead:
                if current > 0 and pair not in dead:  # stale (counts of old pairs only fall): back with the current count
                    heappush(heap, (key + (count - current) * _COUNT_UNIT, merged, entry[2], pair))
                continue
            if not is_valid(merged):
                dead.add(pair)
                del where[pair]
                continue
            best = entry
            break
        if best is None:
            stop_reason = "no valid pair left to merge"
            break
        merged, pair = best[1], best[3]
        floor = count
        dead.add(pair)
        holders = where.pop(pair)
        if merged in made:  # the same string reached by another pair: drop it, merge nothing
            continue
        made.add(merged)
        rank = len(pieces)
        pieces.append((merged, -float(rank)))
        left, right = pair
        if history:
            steps.append((text_of[left], text_of[right], count))
        if progress is not None and rank % 50 == 0:
            progress("merges", rank, num_merges)
        new = next(fresh)
        text_of[new] = merged
        # the words of each occurrence by its left neighbour, and by its right one ("": the next occurrence)
        lefts: defaultdict[str, list[int]] = defaultdict(list)
        rights: defaultdict[str, list[int]] = defaultdict(list)
        if len(holders) < _BULK_MIN:
            for index in holders:
                word = words[index]
                if pair not in word:
                    continue
                parts = word.split(pair)  # (left to right, never overlapping: "aaa" merges its first two)
                words[index] = new.join(parts)
                last = len(parts) - 1
                for at in range(last):
                    before, after = parts[at], parts[at + 1]
                    if before:  # ("" at the word's start, or after the occurrence before: noted there)
                        lefts[before[-1]].append(index)
                    if after:
                        rights[after[0]].append(index)
                    elif at + 1 < last:
                        rights[""].append(index)
        else:
            ids = list(dict.fromkeys(holders))
            olds = list(map(words.__getitem__, ids))
            present = list(map(contains, olds, repeat(pair)))
            if not all(present):
                ids, olds = list(compress(ids, present)), list(compress(olds, present))
            parts = f"{separator}{separator.join(olds)}{separator}".split(pair)
            for index, word in zip(ids, islice(new.join(parts).split(separator), 1, None)):
                words[index] = word
            occurrences = chain.from_iterable(map(repeat, ids, map(str.count, olds, repeat(pair))))
            for before, after, index in zip(map(_LAST, parts), map(_FIRST, islice(parts, 1, None)), occurrences):
                lefts[before].append(index)
                rights[after].append(index)
            # (the separator: a word's end; "" before an occurrence: the one before it, noted on its right)
            lefts.pop(separator, None), lefts.pop("", None), rights.pop(separator, None)
        made_pairs = []
        for neighbour, at in lefts.items():
            total = weights[at[0]] if len(at) == 1 else sum(map(weight_of, at))
            counts[neighbour + left] -= total
            made_pairs.append((neighbour + new, total, at))
        for neighbour, at in rights.items():
            total = weights[at[0]] if len(at) == 1 else sum(map(weight_of, at))
            if neighbour:
                counts[right + neighbour] -= total
                made_pairs.append((new + neighbour, total, at))
            else:  # two occurrences in a row: their (right, left) is gone, (new, new) made
                counts[right + left] -= total
                made_pairs.append((new + new, total, at))
        counts[pair] = 0
        for changed, total, at in made_pairs:
            counts[changed] = total
            where[changed] = at
            if total >= floor:
                first_part = text_of[changed[0]]
                merged = first_part + text_of[changed[1]]
                heappush(heap, (len(merged) - total * _COUNT_UNIT, merged, first_part, changed))
            else:
                bucket = pending.get(total)
                if bucket is None:
                    pending[total] = [changed]
                    heappush(pending_counts, -total)
                else:
                    bucket.append(changed)
    return steps, pieces, stop_reason


#: a merge with at least this many candidate positions is done in numpy (below, its fixed cost
#: per merge, ~90 calls, is more than going one position at a time; measured: 20-60 are alike)
_VECTOR_MIN = 40


def _merge_vectorized(holders: "np.ndarray", left: int, right: int, new_id: int, sym: "np.ndarray", nxt: "np.ndarray",
                      prv: "np.ndarray", weight: "np.ndarray", mark: "np.ndarray",
                      pair_counts: dict[int, int]) -> dict[int, tuple[int, "np.ndarray"]]:
    """The per-position loop of :func:`_train_bpe` for one merge, in numpy: merges every
    occurrence of ``left right`` among the candidate positions (left to right), counts the
    neighbouring pairs down in ``pair_counts`` and returns ``{new pair: (count, positions)}``.
    ``mark``: all False, one per position (scratch, left all False)."""
    import numpy as np

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
    made: dict[int, tuple[int, "np.ndarray"]] = {}
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


def _tally(symbols: "np.ndarray", weights: "np.ndarray") -> tuple[list[int], list[int]]:
    """``(distinct symbols, summed weight of each)``: ``_tally([3, 1, 3], [1, 2, 5]) == ([1, 3], [2, 6])`` (arrays in)."""
    import numpy as np

    if not len(symbols):
        return [], []
    sums = np.bincount(symbols, weights=weights)
    present = np.flatnonzero(sums)
    return present.tolist(), np.rint(sums[present]).astype(np.int64).tolist()


def _numpy_rows(kept: list[tuple[str, int]]) -> tuple[list[str], tuple["np.ndarray", ...], "np.ndarray"]:
    """``(characters sorted, (sym, nxt, prv, weight), mark)``: :func:`_train_bpe`'s rows of ``[(word, count)]`` in numpy
    (``mark``: its scratch row for :func:`_merge_vectorized`)."""
    import numpy as np

    strings, sizes, sym = _word_ids([word for word, _ in kept])
    total = len(sym)
    ends = np.cumsum(sizes)
    nxt = np.arange(1, total + 1, dtype=np.int64)
    nxt[ends - 1] = -1
    prv = np.arange(-1, total - 1, dtype=np.int64)
    prv[ends - sizes] = -1
    weight = np.repeat(np.fromiter((count for _, count in kept), dtype=np.int64, count=len(kept)), sizes)
    return strings, (sym, nxt, prv, weight), np.zeros(total, dtype=bool)


def _word_ids(words: list[str]) -> tuple[list[str], "np.ndarray", "np.ndarray"]:
    """``(characters sorted, each word's length, all the words' ids in a row)`` by one numpy pass
    over the words' code points: ``_word_ids(["ba", "a"])`` is ``(["a", "b"], [2, 1], [1, 0, 0])`` (as arrays)."""
    import numpy as np

    codes = np.frombuffer("".join(words).encode("utf-32-le", errors="surrogatepass"), dtype="<u4")
    present = np.flatnonzero(np.bincount(codes)) if len(codes) else np.zeros(0, dtype=np.int64)
    table = np.zeros(int(present[-1]) + 1 if len(present) else 1, dtype=np.int64)
    table[present] = np.arange(len(present))
    flat = table[codes]  # (a lookup table over the code points: no sort)
    sizes = np.fromiter(map(len, words), dtype=np.int64, count=len(words))
    return [chr(code) for code in present.tolist()], sizes, flat


def _initial_pairs(sym: "np.ndarray", nxt: "np.ndarray", weight: "np.ndarray",
                   check: Callable[[int], bool]) -> tuple[dict[int, int], dict[int, "np.ndarray"]]:
    """``({pair code: weighted count}, {pair code: positions of its left symbol, ascending})``:
    counts of all adjacent pairs, positions of the valid ones, in a few numpy passes
    (``check(code)`` once per distinct pair)."""
    import numpy as np

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
