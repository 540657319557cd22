"""BPE training (Sennrich et al. 2016, as Hugging Face ``tokenizers`` implements it).

Start from single characters, then repeatedly merge the most frequent adjacent pair of
symbols into a new symbol, until the vocabulary reaches the target size:

    words {"hug": 10, "pug": 5, "hugs": 5}, alphabet g h p s u
    pair counts: ('u','g') 20, ('h','u') 15, ('p','u') 5, ('g','s') 5
    merge 0: ('u','g') -> 'ug'    words: h ug (10), p ug (5), h ug s (5)
    merge 1: ('h','ug') -> 'hug'  ...

>>> history = BpeTrainer(vocab_size=7, show_progress=False).train_from_word_counts({"hug": 10, "pug": 5, "hugs": 5})
>>> [(step.left, step.right, step.count) for step in history.merges]
[('u', 'g', 20), ('h', 'ug', 15)]
>>> history.vocab
('g', 'h', 'p', 's', 'u', 'ug', 'hug')

Tie-breaking (two pairs with the same count) is part of the algorithm's definition:

- ``tie_break="hf"`` (default): the highest count, then the smallest ``(left id, right id)``,
  ids being the special tokens (in the order given), then the alphabet by code point, then
  the ``continuing_subword_prefix`` / ``end_of_word_suffix`` forms of characters in
  first-seen order, then merged tokens in creation order. This is HF's rule; the merges are
  identical to HF's ``BpeTrainer`` (ids of prefixed forms aside: HF numbers them in hash order).
- ``tie_break="first_seen"``: the pair met first when scanning the words in first-seen order,
  left to right: the HF course notebook's rule (``max`` over a dict built in that order).

How it is fast in pure Python: symbols are integer ids, each unique word is a list of ids
with a count, pair counts are updated incrementally from the words a merge touches (an
index pair -> words holding it), and a heap of single integers (``-count`` then the pair
code, so Python compares ints, not tuples) with lazy deletion finds the best pair; a stale
entry is pushed back with its current count when it surfaces, exactly as HF does.

Two HF quirks are kept on purpose, for identical merges: ``max_token_length=L`` stops
counting a pair once its token would have L characters or more (HF's strict ``<``: tokens
stay below L characters), and the winning pair's own count is never decremented.

What this version leaves out: HF's parallel pair counting and word merging (two threads on
the benchmark machine), and its progress bar (``show_progress`` is accepted and ignored;
we call ``progress(phase, done, total)`` instead).
"""

from __future__ import annotations

import dataclasses
import functools
import gc
import heapq
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, ClassVar

from tokviz.errors import EmptyCorpusError, SpecialTokenError, TokvizError, VocabSizeError
from tokviz.history import MergeStep, ProgressCallback, TrainingHistory
from tokviz.models.trainer import (
    OptionTypeError, Trainer, TrainerModelMismatchError, check_bool, check_count, check_optional_count, check_optional_str, check_trains,
)
from tokviz.word_counts import summarize_word_counts

if TYPE_CHECKING:  # pragma: no cover
    import pandas as pd

    from tokviz.models.base import Model

__all__ = ["BpeTrainer", "BpeTrainingHistory"]

TIE_BREAKS = ("hf", "first_seen")
N_CANDIDATES = 10

# A pair (left id, right id) is coded as one int, left * _SHIFT + right; a heap key is
# pair_code - count * _SPAN, so the smallest key is the highest count, then the smallest
# (left, right): HF's order, compared as plain ints.
_BITS = 24
_SHIFT = 1 << _BITS
_MASK = _SHIFT - 1
_SPAN = _SHIFT * _SHIFT


# --------------------------------------------------------------------------- history


@dataclass(frozen=True)
class BpeTrainingHistory(TrainingHistory):
    """Every BPE merge, in order, with the pairs it beat; ``model_at(k)`` replays a prefix.

    ``vocab`` is the final vocabulary in id order: special tokens, alphabet (and its
    prefixed / suffixed forms), then one token per merge that created a new string.
    """

    merges: tuple[MergeStep, ...] = ()
    vocab: tuple[str, ...] = ()
    initial_vocab_size: int = 0
    continuing_subword_prefix: str | None = None
    end_of_word_suffix: str | None = None
    unk_token: str | None = None
    model_options: tuple[tuple[str, Any], ...] = ()

    #: What a trained BPE keeps from the user's model (HF transfers only the vocab, the
    #: merges and the prefix / suffix into the model given to ``Tokenizer.train``).
    KEPT_MODEL_OPTIONS: ClassVar[tuple[str, ...]] = (
        "unk_token", "dropout", "fuse_unk", "byte_fallback", "ignore_merges", "cache_capacity"
    )

    def for_model(self, model: Any) -> "BpeTrainingHistory":
        """This history with the options of the user's ``model`` (``unk_token``, ``dropout``, ...)
        kept in ``model`` and every ``model_at(k)``, as HF's ``Tokenizer.train`` keeps them."""
        return with_model_options_of(self, model, "BPE", "BpeTrainer")

    def merge_pairs(self, vocab_size: int | None = None) -> list[tuple[str, str]]:
        """The merges a fresh training to ``vocab_size`` would learn (all when None)."""
        return [(step.left, step.right) for step in self.merges[: self._merge_count_at(vocab_size)]]

    def vocab_at(self, vocab_size: int | None = None) -> dict[str, int]:
        """Token -> id of the model at ``vocab_size`` (clamped to the recorded range)."""
        if vocab_size is None:
            size = len(self.vocab)
        else:
            size = max(self.initial_vocab_size, min(vocab_size, len(self.vocab)))
        return {token: index for index, token in enumerate(self.vocab[:size])}

    def _merge_count_at(self, vocab_size: int | None) -> int:
        # A fresh training stops as soon as the vocab reaches the target, so it keeps the
        # merges up to the FIRST one whose vocab size after is >= the target. (A merge that
        # re-creates an existing token leaves the size unchanged and is then excluded.)
        if vocab_size is None:
            return len(self.merges)
        if vocab_size <= self.initial_vocab_size:
            return 0
        low, high = 0, len(self.merges)
        while low < high:  # merges' vocab sizes never decrease: binary search
            middle = (low + high) // 2
            if self.merges[middle].vocab_size >= vocab_size:
                high = middle
            else:
                low = middle + 1
        return min(low + 1, len(self.merges))

    def model_at(self, vocab_size: int) -> "Model":
        """The BPE model with the first merges up to ``vocab_size`` (no retraining)."""
        from tokviz.models.bpe.model import BPE

        options: dict[str, Any] = {"unk_token": self.unk_token}
        options.update(self.model_options)
        return BPE(
            self.vocab_at(vocab_size),
            self.merge_pairs(vocab_size),
            continuing_subword_prefix=self.continuing_subword_prefix,
            end_of_word_suffix=self.end_of_word_suffix,
            **options,
        )

    def to_frame(self) -> "pd.DataFrame":
        """One row per merge: rank, left, right, token, count, score, vocab_size, candidates."""
        return _merges_frame(self.merges)


def _merges_frame(merges: Sequence[MergeStep]) -> "pd.DataFrame":
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


# --------------------------------------------------------------------------- shared helpers


def special_token_strings(special_tokens: Iterable[Any]) -> tuple[str, ...]:
    """Special tokens as strings (``AddedToken`` -> its content); rejects empty ones.

    >>> special_token_strings(["<s>", "</s>", "<s>"])
    ('<s>', '</s>')
    """
    strings: list[str] = []
    for token in special_tokens:
        content = token if isinstance(token, str) else getattr(token, "content", None)
        if not isinstance(content, str):
            raise SpecialTokenError(f"A special token must be a string, got {token!r}.")
        if not content:
            raise SpecialTokenError("A special token cannot be the empty string.")
        if content not in strings:  # HF keeps the first occurrence and skips repeats
            strings.append(content)
    return tuple(strings)


def check_vocab_size(vocab_size: Any, name: str = "vocab_size") -> int:
    if isinstance(vocab_size, bool) or not isinstance(vocab_size, int):
        raise VocabSizeError(f"{name} must be a whole number, got {vocab_size!r}.")
    if vocab_size <= 0:
        raise VocabSizeError(f"{name} must be positive, got {vocab_size}.")
    return vocab_size


def check_word_counts(word_counts: Mapping[str, int]) -> dict[str, int]:
    """Drop empty words and non-positive counts; raise EmptyCorpusError when nothing is left."""
    cleaned = {word: count for word, count in word_counts.items() if word and count > 0}
    if not cleaned:
        raise EmptyCorpusError("The corpus is empty: there is no word to train on.")
    return cleaned


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


def _check_initial_alphabet(initial_alphabet: Iterable[str]) -> tuple[str, ...]:
    chars: list[str] = []
    for item in initial_alphabet:
        if not isinstance(item, str) or not item:
            raise TokvizError(f"initial_alphabet entries must be characters, got {item!r}.")
        chars.append(item[0])  # HF keeps the first character of each entry
    return tuple(dict.fromkeys(chars))


def paused_gc(train: Callable[..., Any]) -> Callable[..., Any]:
    """Run ``train`` with the cyclic garbage collector paused.

    Training allocates millions of small objects (heap entries, word lists, sets) that never
    form cycles; the collector would rescan them again and again for ~15% of the time.
    """

    @functools.wraps(train)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        enabled = gc.isenabled()
        gc.disable()
        try:
            return train(*args, **kwargs)
        finally:
            if enabled:
                gc.enable()

    return wrapper


def _progress_every(total: int) -> int:
    return max(1, total // 100)


# --------------------------------------------------------------------------- the merge engine


@dataclass(slots=True)
class _Symbols:
    """The growing vocabulary during training: id <-> string and each id's length in
    initial symbols (what ``max_token_length`` measures, as in HF)."""

    id_to_token: list[str]
    token_to_id: dict[str, int]
    token_len: list[int]

    @classmethod
    def start(cls, tokens: Iterable[str]) -> "_Symbols":
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


def tokenize_words(
    word_counts: Mapping[str, int],
    symbols: _Symbols,
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
        first, rest = _AutoIds(lambda char: symbols.add(char, 1)), _AutoIds(lambda char: symbols.add(prefix + char, 1))
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


class _AutoIds(dict):
    """A dict that fills a missing key with ``make(key)``: ``ids['a']`` numbers 'a' on first use."""

    def __init__(self, make: Callable[[str], int]) -> None:
        super().__init__()
        self.make = make

    def __missing__(self, key: str) -> int:
        value = self[key] = self.make(key)
        return value


@dataclass(slots=True)
class _MergeRecord:
    pair_code: int
    count: int
    new_id: int
    vocab_size: int
    candidates: list[tuple[int, int]]  # (pair_code, count)


def count_pairs(words: list[list[int]], counts: list[int]) -> tuple[dict[int, int], dict[int, set[int]]]:
    """Weighted adjacent-pair counts and the words holding each pair, pairs coded as ints.

    >>> pair_counts, where = count_pairs([[1, 2, 3, 1, 2]], [1])
    >>> {divmod(code, _SHIFT): count for code, count in pair_counts.items()}
    {(1, 2): 2, (2, 3): 1, (3, 1): 1}
    """
    pair_counts: dict[int, int] = {}
    where: dict[int, set[int]] = {}
    get = pair_counts.get
    for word_index, word in enumerate(words):
        count = counts[word_index]
        for left, right in zip(word, word[1:]):
            code = left * _SHIFT + right
            pair_counts[code] = get(code, 0) + count
            holders = where.get(code)
            if holders is None:
                where[code] = {word_index}
            else:
                holders.add(word_index)
    return pair_counts, where


def merge_loop_hf(
    words: list[list[int]],
    counts: list[int],
    symbols: _Symbols,
    vocab_size: int,
    min_frequency: int,
    max_token_length: int | None,
    prefix: str | None,
    progress: ProgressCallback | None,
) -> tuple[list[_MergeRecord], str]:
    """HF's BPE merge loop (``BpeTrainer::do_train`` step 5), merge for merge.

    Mirrors HF's bookkeeping exactly: the winning pair's own count is left alone, a pair
    whose merged length would reach ``max_token_length`` is not counted when it forms
    (HF's ``Word::merge``), and a stale heap entry is pushed back with its current count.
    """
    max_len = max_token_length if max_token_length is not None else 1 << 62
    if progress is not None:
        progress("count pairs", 0, 1)
    pair_counts, where = count_pairs(words, counts)
    if progress is not None:
        progress("count pairs", 1, 1)
    heap = [code - count * _SPAN for code, count in pair_counts.items() if count > 0]
    heapq.heapify(heap)
    heappush, heappop = heapq.heappush, heapq.heappop
    token_to_id = symbols.token_to_id
    id_to_token = symbols.id_to_token
    token_len = symbols.token_len
    get_count = pair_counts.get

    records: list[_MergeRecord] = []
    start_size = len(token_to_id)
    total = max(1, vocab_size - start_size)
    every = _progress_every(total)
    stop_reason = ""
    while True:
        if len(token_to_id) >= vocab_size:
            stop_reason = f"reached the target vocab size of {vocab_size}"
            break
        if not heap:
            stop_reason = (
                f"no pair left to merge (every word is a single token) at vocab size {len(token_to_id)}, "
                f"below the target of {vocab_size}"
            )
            break
        key = heappop(heap)
        code = key % _SPAN
        count = -(key // _SPAN)
        current = pair_counts[code]
        if count != current:
            if current > 0:  # HF re-pushes zeros too; they can only surface when nothing else is left
                heappush(heap, code - current * _SPAN)
            continue
        if count < min_frequency:
            stop_reason = (
                f"the most frequent pair left occurs {count} times, below min_frequency={min_frequency} "
                f"(vocab size {len(token_to_id)}, target {vocab_size})"
            )
            break

        # The competitors at this moment: the next valid heap entries (pushed back after).
        candidates: list[tuple[int, int]] = []
        taken: list[int] = []
        while len(candidates) < N_CANDIDATES and heap:
            other = heappop(heap)
            other_code = other % _SPAN
            other_count = -(other // _SPAN)
            other_current = pair_counts[other_code]
            if other_count != other_current:
                if other_current > 0:
                    heappush(heap, other_code - other_current * _SPAN)
                continue
            candidates.append((other_code, other_count))
            taken.append(other)
        for other in taken:
            heappush(heap, other)

        left = code >> _BITS
        right = code & _MASK
        part_b = id_to_token[right]
        if prefix and part_b.startswith(prefix):
            part_b = part_b[len(prefix) :]
        new_id = symbols.add(id_to_token[left] + part_b, token_len[left] + token_len[right])
        new_len = token_len[new_id]
        records.append(_MergeRecord(code, count, new_id, len(token_to_id), candidates))

        # Merge the pair in every word that held it, collecting HF's pair-count changes.
        new_where: dict[int, set[int]] = {}
        holders = where.pop(code, ())
        new_base = new_id * _SHIFT
        for word_index in holders:
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
                    if position > 0:
                        before = word[position - 1]
                        changed = before * _SHIFT + left
                        # A pair too long to count was never counted: HF lets it go negative.
                        pair_counts[changed] = get_count(changed, 0) - weight
                        if token_len[before] + new_len < max_len:
                            changed = before * _SHIFT + new_id
                            pair_counts[changed] = get_count(changed, 0) + weight
                            bucket = new_where.get(changed)
                            if bucket is None:
                                new_where[changed] = {word_index}
                            else:
                                bucket.add(word_index)
                    word[position : position + 2] = (new_id,)
                    if position + 1 < len(word):
                        after = word[position + 1]
                        changed = right * _SHIFT + after
                        pair_counts[changed] = get_count(changed, 0) - weight
                        if new_len + token_len[after] < max_len:
                            changed = new_base + after
                            pair_counts[changed] = get_count(changed, 0) + weight
                            bucket = new_where.get(changed)
                            if bucket is None:
                                new_where[changed] = {word_index}
                            else:
                                bucket.add(word_index)
                position += 1

        for changed, bucket in new_where.items():
            changed_count = pair_counts[changed]
            if changed_count > 0:
                heappush(heap, changed - changed_count * _SPAN)
            known = where.get(changed)
            if known is None:
                where[changed] = bucket
            else:
                known |= bucket
        if progress is not None and len(records) % every == 0:
            progress("merges", min(len(token_to_id) - start_size, total), total)
    if progress is not None:
        progress("merges", total, total)
    return records, stop_reason


def first_occurrence(
    code: int, where: dict[int, set[int]], words: list[list[int]], token_len: list[int]
) -> tuple[int, int] | None:
    """Where the course's scan meets pair ``code`` first: ``(word index, character offset)``.

    ``where`` maps a pair to the words holding it; a word that lost the pair for good is
    dropped from it on the way (adjacent tokens never come apart, and a merge registers the
    pairs it creates). None when no word holds the pair any more.
    """
    left, right = code >> _BITS, code & _MASK
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


def merge_loop_first_seen(
    words: list[list[int]],
    counts: list[int],
    symbols: _Symbols,
    vocab_size: int,
    min_frequency: int,
    max_token_length: int | None,
    prefix: str | None,
    progress: ProgressCallback | None,
) -> tuple[list[_MergeRecord], str]:
    """The HF course's loop: highest count, ties to the pair met first scanning the words
    in first-seen order, left to right. Incremental like :func:`merge_loop_hf`, with exact
    counts (the course recounts every pair each step); the heap key is
    ``(-count, first word index, position in it in initial symbols, pair)``.
    """
    max_len = max_token_length if max_token_length is not None else 1 << 62
    pair_counts, where = count_pairs(words, counts)
    token_to_id = symbols.token_to_id
    id_to_token = symbols.id_to_token
    token_len = symbols.token_len

    def entry(code: int) -> tuple[int, int, int, int] | None:
        count = pair_counts.get(code, 0)
        if count <= 0:
            return None
        first = first_occurrence(code, where, words, token_len)
        if first is None:
            return None
        return (-count, first[0], first[1], code)

    heap = [item for item in (entry(code) for code in pair_counts) if item is not None]
    heapq.heapify(heap)

    def pop_valid() -> tuple[int, int, int, int] | None:
        while heap:
            item = heapq.heappop(heap)
            fresh = entry(item[3])
            if fresh == item:
                return item
            if fresh is not None:
                heapq.heappush(heap, fresh)
        return None

    records: list[_MergeRecord] = []
    start_size = len(token_to_id)
    total = max(1, vocab_size - start_size)
    every = _progress_every(total)
    while True:
        if len(token_to_id) >= vocab_size:
            stop_reason = f"reached the target vocab size of {vocab_size}"
            break
        best = pop_valid()
        if best is None:
            stop_reason = (
                f"no pair left to merge (every word is a single token) at vocab size {len(token_to_id)}, "
                f"below the target of {vocab_size}"
            )
            break
        count, code = -best[0], best[3]
        if count < min_frequency:
            stop_reason = (
                f"the most frequent pair left occurs {count} times, below min_frequency={min_frequency} "
                f"(vocab size {len(token_to_id)}, target {vocab_size})"
            )
            break
        taken = []
        while len(taken) < N_CANDIDATES:
            other = pop_valid()
            if other is None:
                break
            taken.append(other)
        for other in taken:
            heapq.heappush(heap, other)
        candidates = [(other[3], -other[0]) for other in taken]

        left, right = code >> _BITS, code & _MASK
        part_b = id_to_token[right]
        if prefix and part_b.startswith(prefix):
            part_b = part_b[len(prefix) :]
        new_id = symbols.add(id_to_token[left] + part_b, token_len[left] + token_len[right])
        records.append(_MergeRecord(code, count, new_id, len(token_to_id), candidates))

        # Net count change per pair over the merged words: a pair whose count did not move
        # kept all its occurrences, so its heap entry (and first occurrence) still holds.
        delta: dict[int, int] = {}
        for word_index in where.pop(code, ()):
            word = words[word_index]
            weight = counts[word_index]
            merged = _merge_word(word, left, right, new_id)
            if merged is None:
                continue
            for a, b in zip(word, word[1:]):
                changed = a * _SHIFT + b
                delta[changed] = delta.get(changed, 0) - weight
            words[word_index] = merged
            for a, b in zip(merged, merged[1:]):
                if a != new_id and b != new_id:
                    changed = a * _SHIFT + b
                    delta[changed] = delta.get(changed, 0) + weight
                    continue
                if token_len[a] + token_len[b] >= max_len:
                    continue  # as HF: a pair too long to become a token is never counted
                changed = a * _SHIFT + b
                delta[changed] = delta.get(changed, 0) + weight
                where.setdefault(changed, set()).add(word_index)
        touched = [changed for changed, change in delta.items() if change]
        for changed in touched:
            pair_counts[changed] = pair_counts.get(changed, 0) + delta[changed]
        pair_counts.pop(code, None)
        for changed in touched:
            fresh = entry(changed)
            if fresh is not None:
                heapq.heappush(heap, fresh)
        if progress is not None and len(records) % every == 0:
            progress("merges", min(len(token_to_id) - start_size, total), total)
    if progress is not None:
        progress("merges", total, total)
    return records, stop_reason


def _merge_word(word: list[int], left: int, right: int, new_id: int) -> list[int] | None:
    """``[1, 2, 3, 1, 2]`` merging (1, 2) -> 9 gives ``[9, 3, 9]``; None when absent.

    >>> _merge_word([1, 2, 3, 1, 2], 1, 2, 9)
    [9, 3, 9]
    """
    merged: list[int] = []
    position = 0
    length = len(word)
    found = False
    while position < length:
        if position + 1 < length and word[position] == left and word[position + 1] == right:
            merged.append(new_id)
            position += 2
            found = True
        else:
            merged.append(word[position])
            position += 1
    return merged if found else None


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
            pair = pairs[code] = (id_to_token[code >> _BITS], id_to_token[code & _MASK])
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
        score = getattr(record, "score", None)
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


def _check_tie_break(name: str, value: Any) -> str:
    if value not in TIE_BREAKS:
        raise TokvizError(f"{name} must be one of {', '.join(TIE_BREAKS)}; got {value!r}.")
    return value


def _check_alphabet_option(name: str, value: Any) -> list[str]:
    if isinstance(value, str) or not isinstance(value, Iterable):
        raise OptionTypeError(f"{name} must be a list of characters, got {type(value).__name__} {value!r:.60}.")
    return list(_check_initial_alphabet(value))


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
        "initial_alphabet": _check_alphabet_option,
        "continuing_subword_prefix": check_optional_str,
        "end_of_word_suffix": lambda name, value: check_optional_str(name, value) or None,
        "max_token_length": lambda name, value: check_optional_count(name, value, 1),
        "tie_break": _check_tie_break,
    }

    def __init__(
        self,
        vocab_size: int,
        min_frequency: int,
        show_progress: bool,
        special_tokens: Sequence[Any],
        limit_alphabet: int | None,
        initial_alphabet: Iterable[str],
        continuing_subword_prefix: str | None,
        end_of_word_suffix: str | None,
        max_token_length: int | None,
        tie_break: str,
    ) -> None:
        self.vocab_size = vocab_size
        self.min_frequency = min_frequency
        self.show_progress = show_progress
        self.special_tokens = special_tokens
        self.limit_alphabet = limit_alphabet
        self.initial_alphabet = initial_alphabet
        self.continuing_subword_prefix = continuing_subword_prefix
        self.end_of_word_suffix = end_of_word_suffix
        self.max_token_length = max_token_length
        self.tie_break = tie_break

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


class BpeTrainer(MergeTrainerOptions):
    """HF's ``trainers.BpeTrainer`` with a recorded history (see the module docstring).

    >>> trainer = BpeTrainer(vocab_size=300, special_tokens=["<|endoftext|>"], show_progress=False)
    >>> trainer.vocab_size, trainer.special_token_contents, trainer.tie_break
    (300, ('<|endoftext|>',), 'hf')
    """

    MODEL_TYPE = "BPE"

    def __init__(
        self,
        vocab_size: int = 30000,
        min_frequency: int = 0,
        show_progress: bool = True,
        special_tokens: Sequence[Any] = (),
        limit_alphabet: int | None = None,
        initial_alphabet: Iterable[str] = (),
        continuing_subword_prefix: str | None = None,
        end_of_word_suffix: str | None = None,
        max_token_length: int | None = None,
        tie_break: str = "hf",
    ) -> None:
        super().__init__(
            vocab_size, min_frequency, show_progress, special_tokens, limit_alphabet, initial_alphabet,
            continuing_subword_prefix or None, end_of_word_suffix, max_token_length, tie_break,
        )

    @paused_gc
    def train_from_word_counts(
        self,
        word_counts: Mapping[str, int],
        progress: ProgressCallback | None = None,
        *,
        prefixed_order: Sequence[str] = (),
    ) -> BpeTrainingHistory:
        """Train on ``{word: count}`` (first-seen order matters for ``tie_break="first_seen"``).

        ``prefixed_order`` numbers those prefixed / suffixed character forms first, in that
        order, instead of in first-seen order. HF numbers them in its hash map's order, which
        changes from run to run; replaying one HF run exactly needs its order (parity tests).
        """
        started = time.perf_counter()
        word_counts = check_word_counts(word_counts)
        symbols = _Symbols.start(self.special_token_contents)
        alphabet = compute_alphabet(word_counts, self.initial_alphabet, self.limit_alphabet)
        for char in alphabet:
            symbols.add(char, 1)
        for token in prefixed_order:
            symbols.add(token, 1)
        words, counts = tokenize_words(word_counts, symbols, self.continuing_subword_prefix, self.end_of_word_suffix)
        initial_size = len(symbols.id_to_token)
        loop = merge_loop_hf if self.tie_break == "hf" else merge_loop_first_seen
        if initial_size >= self.vocab_size:
            records, stop_reason = [], (
                f"the target vocab size of {self.vocab_size} is at or below the {initial_size} special tokens "
                "and alphabet symbols: no merge was trained"
            )
        else:
            records, stop_reason = loop(
                words,
                counts,
                symbols,
                self.vocab_size,
                self.min_frequency,
                self.max_token_length,
                self.continuing_subword_prefix,
                progress,
            )
        steps = records_to_steps(records, symbols.id_to_token)
        vocab = tuple(symbols.id_to_token)
        history = BpeTrainingHistory(
            algorithm="BPE",
            model=None,  # type: ignore[arg-type]  # set just below, from the history itself
            special_tokens=self.special_token_contents,
            alphabet=tuple(alphabet),
            word_counts=summarize_word_counts(word_counts),
            stop_reason=stop_reason,
            min_vocab_size=initial_size,
            max_vocab_size=len(vocab),
            trainer_config=self.config(),
            seconds=0.0,
            merges=steps,
            vocab=vocab,
            initial_vocab_size=initial_size,
            continuing_subword_prefix=self.continuing_subword_prefix,
            end_of_word_suffix=self.end_of_word_suffix,
        )
        return finish_history(history, started)


def with_model_options_of(history: Any, model: Any, model_type: str, trainer_name: str | None = None) -> Any:
    """A copy of ``history`` whose models keep ``model``'s ``KEPT_MODEL_OPTIONS``.

    ``model`` must be a ``model_type``: HF's trainers train only their own model, and
    ``Tokenizer.train`` raises (``"BpeTrainer can only train a BPE"``) rather than swap it.
    """
    check_trains(model, model_type, trainer_name or f"{model_type}Trainer")
    options = tuple(
        (name, getattr(model, name)) for name in history.KEPT_MODEL_OPTIONS if hasattr(model, name)
    )
    changed = dataclasses.replace(history, model_options=options)
    object.__setattr__(changed, "model", changed.model_at(changed.max_vocab_size))
    return changed


def finish_history(history: TrainingHistory, started: float) -> Any:
    """Attach the final model and the training time (the history is frozen: set once, here)."""
    try:
        model = history.model_at(history.max_vocab_size)
    except ImportError:  # the encoding model module is not there yet; the record stands alone
        model = None
    object.__setattr__(history, "model", model)
    object.__setattr__(history, "seconds", time.perf_counter() - started)
    return history


def course_reference_merges(
    word_counts: Mapping[str, int], vocab_size: int, special_tokens: Sequence[str] = ()
) -> list[tuple[str, str]]:
    """The HF course's BPE loop, verbatim in spirit: recount every pair of every word at
    every merge. Quadratic; kept as the oracle of the tests and the floor of the benchmark.

    >>> course_reference_merges({"hug": 10, "pug": 5, "pun": 12, "bun": 4, "hugs": 5}, 10)
    [('u', 'g'), ('u', 'n'), ('h', 'ug')]
    """
    vocab = list(special_tokens) + sorted({char for word in word_counts for char in word})
    splits = {word: list(word) for word in word_counts}
    merges: list[tuple[str, str]] = []
    while len(vocab) < vocab_size:
        pair_freqs: dict[tuple[str, str], int] = {}
        for word, freq in word_counts.items():
            split = splits[word]
            for index in range(len(split) - 1):
                pair = (split[index], split[index + 1])
                pair_freqs[pair] = pair_freqs.get(pair, 0) + freq
        best_pair, max_freq = None, 0
        for pair, freq in pair_freqs.items():  # strict '>': the first pair met wins ties
            if freq > max_freq:
                best_pair, max_freq = pair, freq
        if best_pair is None:
            break
        left, right = best_pair
        for word in word_counts:
            split = splits[word]
            index = 0
            while index < len(split) - 1:
                if split[index] == left and split[index + 1] == right:
                    split = split[:index] + [left + right] + split[index + 2 :]
                else:
                    index += 1
            splits[word] = split
        merges.append(best_pair)
        vocab.append(left + right)
    return merges
