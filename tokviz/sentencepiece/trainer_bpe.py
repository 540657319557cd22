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
from collections import Counter, defaultdict
from dataclasses import dataclass
from itertools import chain, filterfalse, islice
from typing import TYPE_CHECKING, Callable, Mapping

from tokviz.sentencepiece.pieces import BOUNDARY, PieceRules

if TYPE_CHECKING:
    from tokviz.history import MergeStep

__all__ = ["BpeResult", "train_bpe", "sorted_chars"]


@dataclass(frozen=True, slots=True)
class BpeResult:
    """The merges made (as :class:`MergeStep` records) and the final ``(piece, score)`` list (merges then alphabet)."""

    merge_steps: tuple[MergeStep, ...]
    pieces: tuple[tuple[str, float], ...]
    stop_reason: str


def sorted_chars(char_counts: Mapping[str, int]) -> list[tuple[str, int]]:
    """sentencepiece's ``Sorted``: count descending, then character ascending."""
    return sorted(char_counts.items(), key=lambda item: (-item[1], item[0]))


#: below this many symbols (characters of the distinct words) a training runs without numpy unless it
#: is loaded already: importing it (~0.065 s CPU) costs more than its big merges save. Measured at 4,000
#: pieces, CPU, numpy's loop without its import against the word strings: 76k symbols (botchan-sized)
#: 0.106 / 0.104 s, 134k 0.143 / 0.160 s, 192k 0.173 / 0.207 s (numpy wins only once imported)
NUMPY_MIN_SYMBOLS = 200_000


def use_numpy(symbols: int) -> bool:
    """Whether a training on ``symbols`` characters (of the distinct words) uses numpy: a big one, or numpy is loaded."""
    return symbols >= NUMPY_MIN_SYMBOLS or "numpy" in sys.modules


def train_bpe(word_counts: Mapping[str, int], required_chars: Mapping[str, int], num_merges: int,
              rules: PieceRules | None = None, meta_size: int = 0,
              progress: Callable[[str, int, int], None] | None = None, numpy: bool | None = None,
              history: bool = True) -> BpeResult:
    """Learn up to ``num_merges`` merges from ``{word: count}``; ``required_chars`` is the alphabet with counts.

    The incremental scheme of tokviz's BPE trainer (and HF's): pair counts change only around the
    merged occurrences, and a heap entry whose count went stale is pushed back with its current
    count when it surfaces (counts of old pairs only fall); pairs counted below the merge being
    made wait in buckets by count. Two ways to hold the words: with numpy (``numpy=True``; ``None``:
    :func:`use_numpy` by size), one row of int symbols linked to their neighbours, a merge with many
    positions done in numpy, a small one position by position; without, each word a string of one
    character per symbol (:func:`_train_on_words`). The same result either way (the tests check both
    against a plain oracle). ``history=False``: no ``merge_steps`` (only the pieces).
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
    if "" in word_counts or min(word_counts.values(), default=1) <= 0:
        word_counts = {word: count for word, count in word_counts.items() if count > 0 and word}
    word_counts = _parts_apart(word_counts, rules)
    if numpy is None:
        numpy = use_numpy(sum(map(len, word_counts)))
    if not numpy:
        return _finish(*_train_on_words(word_counts, num_merges, rules, progress, history), required_chars, meta_size)
    from tokviz.sentencepiece.trainer_bpe_numpy import train_on_rows

    kept = [(word, int(count)) for word, count in word_counts.items()]
    return _finish(*train_on_rows(kept, num_merges, rules, progress, history), required_chars, meta_size)


def _parts_apart(word_counts: Mapping[str, int], rules: PieceRules) -> Mapping[str, int]:
    """The words cut into the parts no piece crosses (:meth:`PieceRules.ascii_parts`, ASCII words only; the
    others stay whole), each part counted as often as its words: ``{"▁hug,": 2, "▁hug": 1}`` -> ``{"▁hug": 3}``
    (a part of one character holds no pair: left out). The merges are the same: a pair across two parts
    is never a valid piece, so it is never merged, and every other pair keeps its count; there are fewer
    symbols to merge (botchan-sized: 76k -> 48k, in 6.5k distinct parts instead of 9.5k words).

        >>> _parts_apart({"▁hug,": 2, "▁hug": 1, "▁ça": 1}, PieceRules())
        {'▁ça': 1, '▁hug': 3}
    """
    parts = rules.ascii_parts()
    if parts is None or not word_counts:
        return word_counts
    cut: dict[str, int] = {}
    by_count: dict[int, list[str]] = {}  # (the words of one count cut at once: one regex pass over them joined)
    everything_ascii = "".join(word_counts).replace("\u2581", "").isascii()
    for word, count in word_counts.items():
        if not everything_ascii and not word.replace("\u2581", "").isascii():
            cut[word] = cut.get(word, 0) + count
            continue
        group = by_count.get(count)
        if group is None:
            by_count[count] = [word]
        else:
            group.append(word)
    get = cut.get
    for count, group in by_count.items():
        # (joined at boundaries: no part holds one)
        for part, times in Counter(parts.findall(BOUNDARY.join(group))).items():
            if len(part) > 1:
                cut[part] = get(part, 0) + times * count
    return cut


def _finish(steps: list[tuple[str, str, int]], pieces: list[tuple[str, float]], stop_reason: str,
            required_chars: Mapping[str, int], meta_size: int) -> BpeResult:
    """The :class:`BpeResult` of the merges made (``(left, right, count)`` each, and their pieces): the alphabet follows."""
    for char, _ in sorted_chars(required_chars):
        pieces.append((char, -float(len(pieces))))
    if not steps:
        return BpeResult((), tuple(pieces), stop_reason)
    from tokviz.history import MergeStep  # (only for a history: SentencePieceTrainer.train records no steps)

    size = meta_size + len(required_chars) + 1
    merge_steps = tuple(MergeStep(rank=rank, left=left, right=right, token=pieces[rank][0], count=count,
                                  score=float(count), vocab_size=size + rank) for rank, (left, right, count) in enumerate(steps))
    return BpeResult(merge_steps, tuple(pieces), stop_reason)


def _fresh_chars(used: set[str], count: int) -> list[str]:
    """``count`` characters for new symbols, none of ``used`` (the private-use area first: strings stay two bytes a character)."""
    codes = chain(range(0xE000, 0x10000), range(0x100, 0xD800), range(0x10000, 0x110000))
    return list(islice(filterfalse(used.__contains__, map(chr, codes)), count))


def _train_on_words(word_counts: Mapping[str, int], num_merges: int, rules: PieceRules,
                    progress: Callable[[str, int, int], None] | None,
                    history: bool) -> tuple[list[tuple[str, str, int]], list[tuple[str, float]], str]:
    """:func:`_train_bpe` without numpy: ``(merges made as (left, right, count), their pieces, stop reason)``.

    Each distinct word is a string of one character per symbol (its own characters at first, a fresh
    character for each merged piece), so a merge in a word is ``str.split`` on the pair and a join
    with the new character, in C; the neighbours of each occurrence are the ends of the parts. A pair
    is a tuple of two characters (cheaper to make and hash than a string of them). ``where`` lists for each pair the words holding it (once per occurrence; a word
    that lost it since is skipped). (Merging a big pair's words all at once, joined, split on the pair
    and split back, took more instructions than word by word: 1k 559M against 478M.)
    """
    words = list(word_counts)
    weights = list(map(int, word_counts.values()))
    weight_of = weights.__getitem__
    alphabet = set("".join(words))
    fresh = iter(_fresh_chars(alphabet, num_merges))
    text_of = {char: char for char in alphabet}  # symbol -> its piece
    where: defaultdict[tuple[str, str], list[int]] = defaultdict(list)
    for index, word in enumerate(words):
        for pair in zip(word, islice(word, 1, None)):
            where[pair].append(index)
    # every adjacent pair is counted (a merge counts its neighbours down without asking); one is checked
    # for validity when it first comes out on top of the queue (most never do)
    counts = {pair: weights[at[0]] if len(at) == 1 else sum(map(weight_of, at)) for pair, at in where.items()}
    get_count, is_valid = counts.get, rules.is_valid
    dead: set[tuple[str, str]] = set()  # pairs merged, dropped or invalid
    # the queue: pairs in buckets by count (the count when put there: it may have fallen since, counts of old
    # pairs only fall); the best count's pairs in a heap of (merged length, merged, left part, pair), which is
    # sentencepiece's order among equal counts. A bucket becomes the heap when the heap runs out (its pairs
    # checked then: most of the lowest bucket's never are); a pair made at the best count joins the heap.
    heappush, heappop = heapq.heappush, heapq.heappop
    buckets: dict[int, list[tuple[str, str]]] = {}
    bucket_counts: list[int] = []  # the buckets' counts, negated (a max-heap)

    def put(pair: tuple[str, str], count: int) -> None:
        bucket = buckets.get(count)
        if bucket is None:
            buckets[count] = [pair]
            heappush(bucket_counts, -count)
        else:
            bucket.append(pair)

    for pair, count in counts.items():
        put(pair, count)
    top: list[tuple[int, str, str, tuple[str, str]]] = []
    level = 0  # the count of the pairs in ``top``
    made: set[str] = set()
    steps: list[tuple[str, str, int]] = []
    pieces: list[tuple[str, float]] = []
    # the words of each occurrence of a merge by its left neighbour, and by its right one ("": the next occurrence)
    lefts: defaultdict[str, list[int]] = defaultdict(list)
    rights: defaultdict[str, list[int]] = defaultdict(list)
    stop_reason = f"reached the target of {num_merges} merges"
    while len(pieces) < num_merges:
        best = None
        while True:
            if not top:
                if not bucket_counts:
                    break
                level = -heappop(bucket_counts)
                for pair in buckets.pop(level):
                    current = get_count(pair, 0)
                    if pair in dead or current <= 0:
                        continue
                    if current == level:
                        first_part = text_of[pair[0]]
                        merged = first_part + text_of[pair[1]]
                        top.append((len(merged), merged, first_part, pair))
                    else:  # counted down meanwhile: a lower bucket
                        put(pair, current)
                heapq.heapify(top)
                continue
            entry = heappop(top)
            pair = entry[3]
            current = get_count(pair, 0)
            if current != level or pair in dead:
                if current > 0 and pair not in dead:
                    put(pair, current)
                continue
            if not is_valid(entry[1]):
                dead.add(pair)
                del where[pair]
                continue
            best = entry
            break
        if best is None:
            stop_reason = "no valid pair left to merge"
            break
        merged, pair = best[1], best[3]
        count = level
        dead.add(pair)
        holders = where.pop(pair)
        if merged in made:  # the same string reached by another pair: drop it, merge nothing
            continue
        made.add(merged)
        rank = len(pieces)
        pieces.append((merged, -float(rank)))
        left, right = pair
        joined = left + right
        if history:
            steps.append((text_of[left], text_of[right], count))
        if progress is not None and rank % 50 == 0:
            progress("merges", rank, num_merges)
        new = next(fresh)
        text_of[new] = merged
        lefts.clear()
        rights.clear()
        for index in holders:
            word = words[index]
            if joined not in word:
                continue
            parts = word.split(joined)  # (left to right, never overlapping: "aaa" merges its first two)
            words[index] = new.join(parts)
            last = len(parts) - 1
            if last == 1:  # (most often: one occurrence)
                before, after = parts
                if before:
                    lefts[before[-1]].append(index)
                if after:
                    rights[after[0]].append(index)
                continue
            for at in range(last):
                before, after = parts[at], parts[at + 1]
                if before:  # ("" at the word's start, or after the occurrence before: noted there)
                    lefts[before[-1]].append(index)
                if after:
                    rights[after[0]].append(index)
                elif at + 1 < last:
                    rights[""].append(index)
        for side, neighbours in enumerate((lefts, rights)):
            for neighbour, at in neighbours.items():
                total = weights[at[0]] if len(at) == 1 else sum(map(weight_of, at))
                if side == 0:
                    counts[neighbour, left] -= total
                    changed = (neighbour, new)
                elif neighbour:
                    counts[right, neighbour] -= total
                    changed = (new, neighbour)
                else:  # two occurrences in a row: their (right, left) is gone, (new, new) made
                    counts[right, left] -= total
                    changed = (new, new)
                counts[changed] = total
                where[changed] = at
                if total == level:  # (never more than the merge made)
                    first_part = text_of[changed[0]]
                    merged = first_part + text_of[changed[1]]
                    heappush(top, (len(merged), merged, first_part, changed))
                else:  # (put, inlined: most pairs made go here)
                    bucket = buckets.get(total)
                    if bucket is None:
                        buckets[total] = [changed]
                        heappush(bucket_counts, -total)
                    else:
                        bucket.append(changed)
        counts[pair] = 0
    return steps, pieces, stop_reason
