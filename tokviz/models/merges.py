"""The merge engine BPE and WordPiece training share, and the parity trainer's building blocks.

Training by merges (Sennrich et al., 2016): words become lists of symbol ids; every adjacent
pair is counted (weighted by the word's count); the best pair is merged into a new symbol
everywhere, the counts of the pairs around each merge are patched, and so on until the
vocabulary is full. With the HF course's corpus:

>>> words, counts = [[0, 1, 2], [3, 1, 2]], [10, 5]   # "hug" x10, "pug" x5 (ids: h u g p)
>>> pair_counts, where = count_pairs(words, counts)
>>> sorted((divmod(code, PAIR_SHIFT), n) for code, n in pair_counts.items())
[((0, 1), 10), ((1, 2), 15), ((3, 1), 5)]

What lives here: pairs coded as one int (``left * PAIR_SHIFT + right``); the words and their
pair counts (:class:`PairCounts`, whose ``merge`` is HF's ``Word::merge`` bookkeeping); the
queues that say which pair is next -- the score is the queue's: :class:`CountQueue` (HF's
order: best count, ties by the smallest pair), :class:`FirstSeenQueue` (the course's), and the
WordPiece likelihood and parity trainers' own scores on :class:`MergeQueue`; the one loop
(:func:`merge_loop`); the growing vocabulary (:class:`Symbols`); the options both trainers take
and check alike (:class:`MergeTrainerOptions`: ``limit_alphabet`` and ``initial_alphabet`` by HF's
rules, prefixes and suffixes, ``max_token_length``); and the steps' table (:func:`merges_frame`).
:mod:`tokviz.models.bpe.trainer`, :mod:`tokviz.models.wordpiece.trainer` and
:mod:`tokviz.models.bpe.parity_trainer` are built on it.
"""

from __future__ import annotations

import heapq
from collections.abc import Callable, Iterable, KeysView, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from tokviz.errors import TokvizError
from tokviz.history import MergeStep, ProgressCallback
from tokviz.models.trainer import (
    Trainer, check_bool, check_count, check_initial_alphabet, check_optional_count, check_optional_str,
)

if TYPE_CHECKING:  # pragma: no cover
    import pandas as pd

TIE_BREAKS = ("hf", "first_seen")
N_CANDIDATES = 10

# A pair (left id, right id) is coded as one int, left * PAIR_SHIFT + right; a heap key is
# pair_code - count * PAIR_SPAN, so the smallest key is the highest count, then the smallest
# (left, right): HF's order, compared as plain ints.
PAIR_BITS = 24
PAIR_SHIFT = 1 << PAIR_BITS
PAIR_MASK = PAIR_SHIFT - 1
PAIR_SPAN = PAIR_SHIFT * PAIR_SHIFT


def merges_frame(merges: Sequence[MergeStep]) -> "pd.DataFrame":
    import pandas as pd

    return pd.DataFrame(
        {
            "rank": [step.rank for step in merges],
            "left": [step.left for step in merges],
            "right": [step.right for step in merges],
            "token": [step.token for step in merges],
            "count": [step.count for step in merges],
            "score": [step.score for step in merges],
            "vocab_size": [step.vocab_size for step in merges],
            "candidates": [
                ", ".join(f"{left}+{right} ({score:g})" for (left, right), score in step.candidates)
                for step in merges
            ],
        },
        columns=["rank", "left", "right", "token", "count", "score", "vocab_size", "candidates"],
    )


class MergeHistoryViews:
    """What the BPE and WordPiece training histories read alike from their ``vocab`` (in id
    order), ``initial_vocab_size`` and ``merges``."""

    def vocab_at(self, vocab_size: int | None = None) -> dict[str, int]:
        """Token -> id of the first ``vocab_size`` tokens (clamped to the recorded range)."""
        vocab = self.vocab  # type: ignore[attr-defined]
        size = len(vocab) if vocab_size is None else max(self.initial_vocab_size, min(vocab_size, len(vocab)))  # type: ignore[attr-defined]
        return {token: index for index, token in enumerate(vocab[:size])}

    def to_frame(self) -> "pd.DataFrame":
        """One row per merge: rank, left, right, token, count, score, vocab_size, candidates."""
        return merges_frame(self.merges)  # type: ignore[attr-defined]


# --------------------------------------------------------------------------- shared helpers


def compute_alphabet(
    word_counts: Mapping[str, int], initial_alphabet: Iterable[str], limit_alphabet: int | None
) -> list[str]:
    """The characters kept as the initial symbols, sorted by code point (HF's ``compute_alphabet``).

    With ``limit_alphabet`` the rarest characters go first (ties: the larger code point
    goes first; HF's order among ties is unspecified); ``initial_alphabet`` characters
    count as infinitely frequent.

    >>> compute_alphabet({"aab": 1, "c": 1}, [], limit_alphabet=2)
    ['a', 'b']
    """
    char_counts: dict[str, int] = {}
    for word, count in word_counts.items():
        for char in word:
            char_counts[char] = char_counts.get(char, 0) + count
    infinite = float("inf")
    for char in initial_alphabet:
        char_counts[char] = infinite  # type: ignore[assignment]
    kept = list(char_counts)
    if limit_alphabet is not None and len(kept) > limit_alphabet:
        kept.sort(key=lambda char: (char_counts[char], -ord(char)))
        kept = kept[len(kept) - limit_alphabet :]
    kept.sort()
    return kept


def progress_every(total: int) -> int:
    return max(1, total // 100)


# --------------------------------------------------------------------------- the merge engine


@dataclass(slots=True)
class Symbols:
    """The growing vocabulary during training: id <-> string and each id's length in
    initial symbols (what ``max_token_length`` measures, as in HF)."""

    id_to_token: list[str]
    token_to_id: dict[str, int]
    token_len: list[int]

    @classmethod
    def start(cls, tokens: Iterable[str]) -> "Symbols":
        symbols = cls([], {}, [])
        for token in tokens:
            symbols.add(token, 1)
        return symbols

    def add(self, token: str, length: int) -> int:
        index = self.token_to_id.get(token)
        if index is None:
            index = len(self.id_to_token)
            self.id_to_token.append(token)
            self.token_to_id[token] = index
            self.token_len.append(length)
        return index

    def add_merged(self, code: int, prefix: str | None) -> int:
        """The id of the token pair ``code`` makes: its parts' text, the right part without
        the continuing-subword ``prefix`` (``h`` + ``##u`` -> ``hu``), its length theirs added."""
        left, right = code >> PAIR_BITS, code & PAIR_MASK
        part_b = self.id_to_token[right]
        if prefix and part_b.startswith(prefix):
            part_b = part_b[len(prefix) :]
        return self.add(self.id_to_token[left] + part_b, self.token_len[left] + self.token_len[right])


def tokenize_words(
    word_counts: Mapping[str, int],
    symbols: Symbols,
    prefix: str | None,
    suffix: str | None,
    allowed: set[str] | None = None,
) -> tuple[list[list[int]], list[int]]:
    """Words as lists of symbol ids (characters outside the alphabet are dropped, as HF does);
    prefixed / suffixed forms are added to the vocabulary in first-seen order. ``allowed``
    is the alphabet when it is not simply the one-character tokens of the vocabulary."""
    char_ids = {token: index for token, index in symbols.token_to_id.items() if len(token) == 1}
    if allowed is not None:
        char_ids = {char: char_ids.get(char, -1) for char in allowed}
    words: list[list[int]] = []
    counts: list[int] = []
    if prefix is None and suffix is None and allowed is None:
        get = char_ids.get
        for word, count in word_counts.items():
            ids = [get(char) for char in word]
            if None in ids:
                ids = [index for index in ids if index is not None]
            words.append(ids)  # type: ignore[arg-type]
            counts.append(count)
        return words, counts
    if suffix is None and prefix is not None:
        # The hot case (WordPiece): two auto-numbering maps, so a list comprehension does
        # the work and new ##-forms still get their ids in first-seen order.
        first, rest = AutoIds(lambda char: symbols.add(char, 1)), AutoIds(lambda char: symbols.add(prefix + char, 1))
        outside = {char for word in word_counts for char in word} - char_ids.keys()
        for word, count in word_counts.items():
            if outside and not outside.isdisjoint(word):
                word = "".join(char for char in word if char in char_ids)
            if word:
                ids = [first[word[0]]]
                ids += [rest[char] for char in word[1:]]
            else:
                ids = []
            words.append(ids)
            counts.append(count)
        return words, counts
    for word, count in word_counts.items():
        kept = [char for char in word if char in char_ids]
        ids = []
        last = len(kept) - 1
        for position, char in enumerate(kept):
            token = char
            if position > 0 and prefix is not None:
                token = prefix + token
            if position == last and suffix is not None:
                token = token + suffix
            ids.append(symbols.add(token, 1))
        words.append(ids)
        counts.append(count)
    return words, counts


class AutoIds(dict):
    """A dict that fills a missing key with ``make(key)``: ``ids['a']`` numbers 'a' on first use."""

    def __init__(self, make: Callable[[str], int]) -> None:
        super().__init__()
        self.make = make

    def __missing__(self, key: str) -> int:
        value = self[key] = self.make(key)
        return value


@dataclass(slots=True)
class MergeRecord:
    """One merge as the loop made it, in ids: the pair, its count, the new token, the vocab size
    after it, the runners-up ``(pair_code, score)``, and the score when it is not the count."""

    pair_code: int
    count: int
    new_id: int
    vocab_size: int
    candidates: list[tuple[int, float]]
    score: float | None = None


def count_pairs(words: list[list[int]], counts: list[int]) -> tuple[dict[int, int], dict[int, set[int]]]:
    """Weighted adjacent-pair counts and the words holding each pair, pairs coded as ints.

    >>> pair_counts, where = count_pairs([[1, 2, 3, 1, 2]], [1])
    >>> {divmod(code, PAIR_SHIFT): count for code, count in pair_counts.items()}
    {(1, 2): 2, (2, 3): 1, (3, 1): 1}
    """
    pair_counts: dict[int, int] = {}
    where: dict[int, set[int]] = {}
    get = pair_counts.get
    for word_index, word in enumerate(words):
        count = counts[word_index]
        for left, right in zip(word, word[1:]):
            code = left * PAIR_SHIFT + right
            pair_counts[code] = get(code, 0) + count
            holders = where.get(code)
            if holders is None:
                where[code] = {word_index}
            else:
                holders.add(word_index)
    return pair_counts, where


class PairCounts:
    """The words being trained (lists of symbol ids, with their counts), every adjacent pair's
    weighted count and the words holding it; :meth:`merge` merges one pair everywhere.

    >>> corpus = PairCounts([[0, 1, 2], [3, 1, 2]], [10, 5], token_len=[1, 1, 1, 1, 2], max_token_length=None)
    >>> merged, made = corpus.merge(1 * PAIR_SHIFT + 2, 4)   # "u" + "g" -> 4
    >>> merged, sorted(divmod(code, PAIR_SHIFT) for code in made)   # merged 15 times, (h, ug) and (p, ug) made
    (15, [(0, 4), (3, 4)])
    >>> corpus.words, {divmod(code, PAIR_SHIFT): n for code, n in corpus.pair_counts.items() if n > 0}
    ([[0, 4], [3, 4]], {(1, 2): 15, (0, 4): 10, (3, 4): 5})
    """

    __slots__ = ("words", "counts", "pair_counts", "where", "token_len", "max_len")

    def __init__(self, words: list[list[int]], counts: list[int], token_len: list[int], max_token_length: int | None) -> None:
        self.words, self.counts, self.token_len = words, counts, token_len
        self.max_len = max_token_length if max_token_length is not None else 1 << 62
        self.pair_counts, self.where = count_pairs(words, counts)

    def merge(self, code: int, new_id: int, lowered: set[int] | None = None) -> tuple[int, KeysView[int]]:
        """Merge pair ``code`` into ``new_id`` in every word holding it, left to right, and patch
        the counts as HF's ``Word::merge`` does: the pairs around each merge lose the word's
        count, the pairs the merge makes gain it -- unless the two pieces together would reach
        ``max_token_length`` (such a pair is never counted; a pair never counted may go below
        zero when it is lowered, as in HF). The merged pair's own count is left alone.

        Returns how many times the pair was merged (weighted by the word counts: by how many
        tokens the corpus got shorter) and the pairs the merge made; ``lowered`` collects the
        pairs that lost occurrences.
        """
        words, counts, pair_counts, where, token_len = self.words, self.counts, self.pair_counts, self.where, self.token_len
        max_len = self.max_len
        get_count = pair_counts.get
        left, right = code >> PAIR_BITS, code & PAIR_MASK
        new_len = token_len[new_id]
        new_base = new_id * PAIR_SHIFT
        made: dict[int, set[int]] = {}  # the pairs made -> the words holding them (a small dict: cheaper than `where`)
        # (The pair before and the pair after a merge are patched by two inlined copies of the same steps:
        # this is the training's hot loop, and a helper would add a Python call to every occurrence.)
        merged = 0
        for word_index in where.pop(code, ()):
            word = words[word_index]
            if left not in word:
                continue
            weight = counts[word_index]
            position = 0
            while True:
                try:
                    position = word.index(left, position)
                except ValueError:
                    break
                if position + 1 < len(word) and word[position + 1] == right:
                    merged += weight
                    if position > 0:
                        before = word[position - 1]
                        changed = before * PAIR_SHIFT + left
                        pair_counts[changed] = get_count(changed, 0) - weight
                        if lowered is not None:
                            lowered.add(changed)
                        if token_len[before] + new_len < max_len:
                            changed = before * PAIR_SHIFT + new_id
                            pair_counts[changed] = get_count(changed, 0) + weight
                            holders = made.get(changed)
                            if holders is None:
                                made[changed] = {word_index}
                            else:
                                holders.add(word_index)
                    word[position : position + 2] = (new_id,)
                    if position + 1 < len(word):
                        after = word[position + 1]
                        changed = right * PAIR_SHIFT + after
                        pair_counts[changed] = get_count(changed, 0) - weight
                        if lowered is not None:
                            lowered.add(changed)
                        if new_len + token_len[after] < max_len:
                            changed = new_base + after
                            pair_counts[changed] = get_count(changed, 0) + weight
                            holders = made.get(changed)
                            if holders is None:
                                made[changed] = {word_index}
                            else:
                                holders.add(word_index)
                position += 1
        for changed, holders in made.items():
            known = where.get(changed)
            if known is None:
                where[changed] = holders
            else:
                known |= holders
        return merged, made.keys()


class MergeQueue:
    """Which pair the engine merges next: the score is the queue's. A queue keeps heap entries
    that may go stale as counts move; :meth:`_pop_valid` re-scores a popped entry and pushes it
    back when it changed, so the first entry still true is the best pair (every live pair has an
    entry at least as good as its true one: a merge only lowers the pairs it does not make, and
    the ones it makes are pushed by :meth:`merged`).

    Subclasses give ``_pop_valid``, ``_describe`` (an entry -> ``(pair, count, score)``) and
    ``merged``; :class:`CountQueue` (HF's order), :class:`FirstSeenQueue` (the course's),
    WordPiece's likelihood queue and the parity trainer's use this one loop and this one merge.
    """

    #: Why the loop stopped when no entry is left.
    EMPTY = "no pair left to merge (every word is a single token)"
    #: The queue wants the pairs a merge lowered (see :meth:`PairCounts.merge`).
    wants_lowered = False

    heap: list[Any]

    def _pop_valid(self) -> Any:
        raise NotImplementedError

    def _describe(self, entry: Any) -> tuple[int, int, float]:
        raise NotImplementedError

    def merged(self, code: int, new_id: int, created: Iterable[int], lowered: set[int] | None, merged: int) -> None:
        raise NotImplementedError

    def pop(self) -> tuple[int, int, float] | None:
        """The best pair now, as ``(pair code, count, score)``; None when no pair is left."""
        entry = self._pop_valid()
        return None if entry is None else self._describe(entry)

    def runners_up(self, code: int, how_many: int) -> list[tuple[int, float]]:
        """The next ``how_many`` best pairs after ``code``, as ``(pair code, score)`` (left in the queue)."""
        taken: list[Any] = []
        found: list[tuple[int, float]] = []
        seen = {code}
        while len(found) < how_many:
            entry = self._pop_valid()
            if entry is None:
                break
            other, _, score = self._describe(entry)
            if other not in seen:  # a pair may have two entries (pushed again while one was left)
                seen.add(other)
                taken.append(entry)
                found.append((other, score))
        for entry in taken:
            heapq.heappush(self.heap, entry)
        return found


class CountQueue(MergeQueue):
    """HF's ``BpeTrainer`` order: the highest count, ties to the smallest ``(left id, right id)``.

    Entries are plain ints (``pair_code - count * PAIR_SPAN``: the smallest is the best), the
    fastest a heap compares; a popped entry whose count moved is pushed back with its count now.
    """

    __slots__ = ("pair_counts", "heap")

    def __init__(self, pair_counts: dict[int, int]) -> None:
        self.pair_counts = pair_counts
        self.heap = [code - count * PAIR_SPAN for code, count in pair_counts.items() if count > 0]
        heapq.heapify(self.heap)

    def _pop_valid(self) -> int | None:
        heap, pair_counts = self.heap, self.pair_counts
        heappush, heappop = heapq.heappush, heapq.heappop
        while heap:
            key = heappop(heap)
            code = key % PAIR_SPAN
            current = pair_counts[code]
            if current == -(key // PAIR_SPAN):
                return key
            if current > 0:  # HF re-pushes zeros too; they can only surface when nothing else is left
                heappush(heap, code - current * PAIR_SPAN)
        return None

    def _describe(self, entry: int) -> tuple[int, int, float]:
        count = -(entry // PAIR_SPAN)
        return entry % PAIR_SPAN, count, count

    def runners_up(self, code: int, how_many: int) -> list[tuple[int, float]]:
        """As :meth:`MergeQueue.runners_up`, inlined on int entries (it runs at every merge)."""
        heap, pair_counts = self.heap, self.pair_counts
        heappush, heappop = heapq.heappush, heapq.heappop
        taken: list[int] = []
        found: list[tuple[int, float]] = []
        while len(taken) < how_many and heap:
            key = heappop(heap)
            other = key % PAIR_SPAN
            current = pair_counts[other]
            if current == -(key // PAIR_SPAN):
                taken.append(key)
                found.append((other, current))
            elif current > 0:
                heappush(heap, other - current * PAIR_SPAN)
        for key in taken:
            heappush(heap, key)
        return found

    def push(self, codes: Iterable[int]) -> None:
        heap, pair_counts = self.heap, self.pair_counts
        for changed in codes:
            count = pair_counts.get(changed, 0)
            if count > 0:
                heapq.heappush(heap, changed - count * PAIR_SPAN)

    def merged(self, code: int, new_id: int, created: Iterable[int], lowered: set[int] | None, merged: int) -> None:
        self.push(created)


def first_occurrence(
    code: int, where: dict[int, set[int]], words: list[list[int]], token_len: list[int]
) -> tuple[int, int] | None:
    """Where the course's scan meets pair ``code`` first: ``(word index, character offset)``.

    ``where`` maps a pair to the words holding it; a word that lost the pair for good is
    dropped from it on the way (adjacent tokens never come apart, and a merge registers the
    pairs it creates). None when no word holds the pair any more.
    """
    left, right = code >> PAIR_BITS, code & PAIR_MASK
    holders = where.get(code)
    while holders:
        word_index = min(holders)
        word = words[word_index]
        offset = 0
        for position in range(len(word) - 1):
            if word[position] == left and word[position + 1] == right:
                return word_index, offset
            offset += token_len[word[position]]
        holders.discard(word_index)
    return None


class FirstSeenQueue(MergeQueue):
    """The HF course's order: the highest count, ties to the pair met first scanning the words
    in first-seen order, left to right (the course recounts every pair each step; here the
    counts are patched). Entries: ``(-count, first word index, offset in it, pair code)``."""

    __slots__ = ("corpus", "heap")

    def __init__(self, corpus: PairCounts) -> None:
        self.corpus = corpus
        self.heap = [item for item in map(self._entry, corpus.pair_counts) if item is not None]
        heapq.heapify(self.heap)

    def _entry(self, code: int) -> tuple[int, int, int, int] | None:
        corpus = self.corpus
        count = corpus.pair_counts.get(code, 0)
        if count <= 0:
            return None
        first = first_occurrence(code, corpus.where, corpus.words, corpus.token_len)
        return None if first is None else (-count, first[0], first[1], code)

    def _pop_valid(self) -> tuple[int, int, int, int] | None:
        heap = self.heap
        while heap:
            item = heapq.heappop(heap)
            fresh = self._entry(item[3])
            if fresh == item:
                return item
            if fresh is not None:
                heapq.heappush(heap, fresh)
        return None

    def _describe(self, entry: tuple[int, int, int, int]) -> tuple[int, int, float]:
        return entry[3], -entry[0], -entry[0]

    def merged(self, code: int, new_id: int, created: Iterable[int], lowered: set[int] | None, merged: int) -> None:
        self.corpus.pair_counts.pop(code, None)
        for changed in created:
            fresh = self._entry(changed)
            if fresh is not None:
                heapq.heappush(self.heap, fresh)


def count_queue(tie_break: str) -> Callable[[PairCounts], MergeQueue]:
    """The queue of merges scored by count (BPE, HF's WordPiece), ties broken by ``tie_break``."""
    if tie_break == "first_seen":
        return FirstSeenQueue
    return lambda corpus: CountQueue(corpus.pair_counts)


def merge_loop(
    words: list[list[int]],
    counts: list[int],
    symbols: Symbols,
    vocab_size: int,
    min_frequency: int,
    max_token_length: int | None,
    prefix: str | None,
    progress: ProgressCallback | None,
    queue: Callable[[PairCounts], MergeQueue],
) -> tuple[list[MergeRecord], str]:
    """The merge engine: merge the queue's best pair until ``vocab_size`` (HF's
    ``BpeTrainer::do_train`` step 5, merge for merge, with ``CountQueue``).

    ``queue`` makes the queue from the counted words: it holds the score (the count for BPE
    and HF's WordPiece, the likelihood for the course's WordPiece) and the tie-break. A merged
    pair's token is its parts' text, without ``prefix`` on the right part.
    """
    if len(symbols.token_to_id) >= vocab_size:
        return [], (
            f"the target vocab size of {vocab_size} is at or below the {len(symbols.token_to_id)} special tokens "
            "and alphabet symbols: no merge was trained"
        )
    if progress is not None:
        progress("count pairs", 0, 1)
    corpus = PairCounts(words, counts, symbols.token_len, max_token_length)
    if progress is not None:
        progress("count pairs", 1, 1)
    pairs = queue(corpus)
    lowered: set[int] | None = set() if pairs.wants_lowered else None
    token_to_id = symbols.token_to_id
    records: list[MergeRecord] = []
    start_size = len(token_to_id)
    total = max(1, vocab_size - start_size)
    every = progress_every(total)
    while True:
        if len(token_to_id) >= vocab_size:
            stop_reason = f"reached the target vocab size of {vocab_size}"
            break
        best = pairs.pop()
        if best is None:
            stop_reason = f"{pairs.EMPTY} at vocab size {len(token_to_id)}, below the target of {vocab_size}"
            break
        code, count, score = best
        if count < min_frequency:
            stop_reason = (
                f"the most frequent pair left occurs {count} times, below min_frequency={min_frequency} "
                f"(vocab size {len(token_to_id)}, target {vocab_size})"
            )
            break
        candidates = pairs.runners_up(code, N_CANDIDATES)
        new_id = symbols.add_merged(code, prefix)
        records.append(MergeRecord(code, count, new_id, len(token_to_id), candidates, None if score == count else score))
        if lowered is not None:
            lowered.clear()
        merged, created = corpus.merge(code, new_id, lowered)
        pairs.merged(code, new_id, created, lowered, merged)
        if progress is not None and len(records) % every == 0:
            progress("merges", min(len(token_to_id) - start_size, total), total)
    if progress is not None:
        progress("merges", total, total)
    return records, stop_reason


def records_to_steps(records: Sequence[Any], id_to_token: list[str]) -> tuple[MergeStep, ...]:
    """Turn a merge loop's integer records into :class:`MergeStep` rows (strings, candidates).

    BPE records carry counts, which are their scores; WordPiece likelihood records carry a
    ``score`` of their own and score their candidates the same way.
    """

    # A pair stays among the best candidates for many merges in a row, with the same score:
    # its (pair, score) entry is built once and shared by every step that lists it (a 50k
    # training's steps hold 70 MB of candidate tuples otherwise; shared, about a quarter).
    pairs: dict[int, tuple[str, str]] = {}
    entries: dict[tuple[int, Any], tuple[tuple[str, str], float]] = {}

    def pair_strings(code: int) -> tuple[str, str]:
        pair = pairs.get(code)
        if pair is None:
            pair = pairs[code] = (id_to_token[code >> PAIR_BITS], id_to_token[code & PAIR_MASK])
        return pair

    def entry(code: int, value: Any) -> tuple[tuple[str, str], float]:
        key = (code, value)
        found = entries.get(key)
        if found is None:
            found = entries[key] = (pair_strings(code), float(value))
        return found

    steps = []
    for rank, record in enumerate(records):
        left, right = pair_strings(record.pair_code)
        score = record.score
        steps.append(
            MergeStep(
                rank=rank,
                left=left,
                right=right,
                token=id_to_token[record.new_id],
                count=record.count,
                score=float(record.count) if score is None else score,
                vocab_size=record.vocab_size,
                candidates=tuple([entry(other, value) for other, value in record.candidates]),
            )
        )
    return tuple(steps)


# --------------------------------------------------------------------------- the trainer


def check_tie_break(name: str, value: Any) -> str:
    if value not in TIE_BREAKS:
        raise TokvizError(f"{name} must be one of {', '.join(TIE_BREAKS)}; got {value!r}.")
    return value


class MergeTrainerOptions(Trainer):
    """The options BpeTrainer and WordPieceTrainer share, checked once, in HF's order.

    Subclasses pass their own prefix / suffix defaults and add what is theirs (``scoring``).
    Every option can be set afterwards (``trainer.vocab_size = 500``), checked the same way.
    """

    _HF_FIELDS = (
        "min_frequency", "vocab_size", "show_progress", "progress_format", "special_tokens", "limit_alphabet",
        "initial_alphabet", "continuing_subword_prefix", "end_of_word_suffix", "max_token_length", "words",
    )
    _HF_CONSTANTS = {"progress_format": "Indicatif", "words": {}}
    _TOKVIZ_FIELDS = {"tie_break": "hf"}
    _VALIDATORS = {
        "vocab_size": lambda name, value: check_count(name, value, 1),
        "min_frequency": check_count,
        "show_progress": check_bool,
        "limit_alphabet": lambda name, value: check_optional_count(name, value, 1),
        "initial_alphabet": check_initial_alphabet,
        "continuing_subword_prefix": check_optional_str,
        "end_of_word_suffix": lambda name, value: check_optional_str(name, value) or None,
        "max_token_length": lambda name, value: check_optional_count(name, value, 1),
        "tie_break": check_tie_break,
    }

    def config(self) -> tuple[tuple[str, Any], ...]:
        return (
            ("vocab_size", self.vocab_size),
            ("min_frequency", self.min_frequency),
            ("special_tokens", self.special_token_contents),
            ("limit_alphabet", self.limit_alphabet),
            ("initial_alphabet", tuple(self.initial_alphabet)),
            ("continuing_subword_prefix", self.continuing_subword_prefix),
            ("end_of_word_suffix", self.end_of_word_suffix),
            ("max_token_length", self.max_token_length),
            ("tie_break", self.tie_break),
        )
