"""BPE encoding: split a word into characters, then apply the learned merges by rank.

Byte-Pair Encoding (Sennrich et al., 2016) learns an ordered list of merges. To encode
a word, start from its characters and repeatedly merge the adjacent pair whose merge
was learned earliest (lowest rank), the leftmost one on ties, until no adjacent pair
has a merge. With the HF course's "hug" corpus:

>>> vocab = {"b": 0, "g": 1, "h": 2, "n": 3, "p": 4, "s": 5, "u": 6,
...          "ug": 7, "un": 8, "hug": 9}
>>> model = BPE(vocab, [("u", "g"), ("u", "n"), ("h", "ug")])
>>> [t.value for t in model.tokenize("hugs")]  # h u g s -> h ug s -> hug s
['hug', 's']
>>> model.tokenize("bug")
[Token(id=0, value='b', offsets=(0, 1)), Token(id=7, value='ug', offsets=(1, 3))]

It follows Hugging Face ``tokenizers.models.BPE`` exactly, quirks included:

- ``continuing_subword_prefix`` ("##") is put on every character but the first and
  ``end_of_word_suffix`` ("</w>") on the last before the vocab lookup; merging
  ``("a", "##b")`` gives ``"ab"`` (the prefix of the right part is dropped).
- A character that is not in the vocab becomes ``unk_token`` (consecutive ones fuse
  into one with ``fuse_unk``), or, with ``byte_fallback``, the ``<0xNN>`` tokens of its
  UTF-8 bytes when all of them are in the vocab. Without ``unk_token`` it is dropped.
- ``ignore_merges`` returns a word that is itself in the vocab as one token.
- ``dropout`` skips each candidate merge with probability p (BPE-dropout, Provilkov
  et al., 2020); a seeded ``rng`` makes it reproducible.

Offsets are character offsets into the word. HF computes them by adding up the byte
lengths of the pieces it keeps, and its Tokenizer then maps bytes to characters; we
do the same, so a dropped unknown character shifts later offsets exactly as in HF.
One deviation: with ``byte_fallback`` and a ``continuing_subword_prefix``, HF also
emits the prefix's bytes and counts them as part of the word, which pushes offsets
past its end; we clamp such offsets to the word's length (ids and values still match).

Merging is HF's ``Word::merge_all``: the symbols in a linked list, the candidate pairs in a
heap of ranks, O(n log n) for a word of n symbols (:func:`merge_all`). Words of at most
:data:`LIST_MERGE_MAX_SYMBOLS` symbols rescan a short list of pair ranks instead (same order
of merges; in CPython, C's ``min`` over a few ints beats heap operations up to about that size).

Left out: HF's exact random stream in dropout (we replay its queue, so the distribution is
the same).
"""

from __future__ import annotations

import heapq
import json
import os
import random
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from operator import add
from typing import Any, ClassVar

from tokviz.errors import SerializationError, SpecialTokenError, VocabularyError
from tokviz.models.base import ProvenPairs, Token
from tokviz.models.wordlevel.model import (
    FrozenModel,
    check_option,
    check_vocab,
    optional_str,
    ordered_vocab,
    read_vocab_json,
    reverse_vocab,
    section_type,
)

#: HF's default number of words kept in the word cache.
DEFAULT_CACHE_CAPACITY = 10_000
#: HF does not cache words this long or longer (in bytes; we count characters).
CACHE_MAX_WORD_LENGTH = 256

# The merge map gives a pair its rank, and the merges' new ids are a tuple by rank: a small int
# per pair (59k merges: 3 ms less of a load than packing each rank with its new id in one int).
NO_MERGE = 1 << 62  # larger than any rank
#: The options of the "model" section of tokenizer.json, in HF's order (between "type" and "vocab").
_JSON_OPTIONS = ("dropout", "unk_token", "continuing_subword_prefix", "end_of_word_suffix", "fuse_unk", "byte_fallback",
                 "ignore_merges")
#: Words with more symbols than this merge through the heap (:func:`merge_all`, O(n log n))
#: instead of the rescanning list (O(n) per merge: C's ``min`` and ``index`` over a few ints cost
#: less than the heap's pushes, pops and linked-list upkeep in Python). Measured in CPython 3.11
#: on slices of the bench's lines in OpenLLaMA's vocabulary, heap time / list time: 1.92 at 2-4
#: symbols, 1.54 at 5-8, 1.34 at 9-16, 1.12 at 17-32, 0.90 at 33-64, 0.62 at 65-128, 0.27 at
#: 129-512 (a 100-char Chinese line without a pre-tokenizer is one word of ~100 symbols).
LIST_MERGE_MAX_SYMBOLS = 32
# A heap entry is one int, ``rank << 32 | position``: ordered by rank, then position
# (leftmost first), with no tuple per candidate.
_POSITION_BITS = 32
_POSITION_MASK = (1 << _POSITION_BITS) - 1


def byte_fallback_token(byte: int) -> str:
    """The vocab entry of one byte, SentencePiece style: ``0x0A -> '<0x0A>'``."""
    return f"<0x{byte:02X}>"


#: The 256 byte-fallback pieces, by byte value.
BYTE_FALLBACK_TOKENS = tuple(map(byte_fallback_token, range(256)))


def parse_merge(merge: Any, index: int) -> tuple[str, str]:
    """One merge as a pair: ``["a", "b"]``, ``("a", "b")`` or the legacy string ``"a b"``.

    >>> parse_merge("h ug", 0)
    ('h', 'ug')
    """
    if isinstance(merge, str):
        parts = merge.split(" ")
        if len(parts) != 2:
            raise VocabularyError(
                f"Merge number {index + 1} ({merge!r}) is not two tokens separated by one space."
            )
        return parts[0], parts[1]
    if isinstance(merge, (list, tuple)) and len(merge) == 2 and all(isinstance(part, str) for part in merge):
        return merge[0], merge[1]
    raise VocabularyError(f"Merge number {index + 1} ({merge!r}) is not a pair of strings.")


def parse_merges(merges: Sequence[Any]) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """All merges as two columns, ``(lefts, rights)``; the common case (every merge a list or
    tuple of two strings) in C, with no pair object per merge (a model keeps the columns: two
    tuples of strings, which the cycle collector drops after one look, where 25,000 pairs
    would each be counted and walked).

    >>> parse_merges([["h", "ug"], "u g"])
    (('h', 'u'), ('ug', 'g'))
    """
    if not merges:
        return (), ()
    if type(merges) is ProvenPairs and merges.columns is not None:
        return merges.columns
    if set(map(type, merges)) <= {list, tuple}:  # (legacy "a b" strings are parsed one by one)
        columns = tuple(zip(*merges))
        # Two columns: every merge has two parts or more; as many parts as twice the merges: exactly two.
        if len(columns) == 2 and sum(map(len, merges)) == 2 * len(merges):
            lefts, rights = columns
            if set(map(type, lefts)) == {str} == set(map(type, rights)):
                return lefts, rights
    # (Legacy merges.txt lines may start with a "#version" header, which HF skips.)
    merges = [merge for merge in merges if not (isinstance(merge, str) and merge.startswith("#version"))]
    pairs = [parse_merge(merge, index) for index, merge in enumerate(merges)]  # (says which is malformed)
    if not pairs:
        return (), ()
    lefts, rights = zip(*pairs)
    return lefts, rights


def build_merge_map(
    vocab: Mapping[str, int], merges: tuple[Sequence[str], Sequence[str]], continuing_subword_prefix: str | None
) -> tuple[dict[tuple[int, int], int], tuple[int, ...]]:
    """``{(left_id, right_id): rank}`` of the merges' columns (as :func:`parse_merges` gives
    them), checking every token is in the vocab; and the new id of each rank. The map's order is
    the ranks' when each pair is listed once (as many pairs as ranks).

    The merged token is ``left + right`` without the right part's continuing prefix.
    A pair listed twice keeps its last rank (as HF's map does).

    >>> build_merge_map({"a": 0, "b": 1, "ab": 2, "c": 3, "abc": 4}, (("a", "ab"), ("b", "c")), None)
    ({(0, 1): 0, (2, 3): 1}, (2, 4))
    """
    lefts, rights = merges
    prefix_bytes = len(continuing_subword_prefix.encode("utf-8")) if continuing_subword_prefix else 0
    if not prefix_bytes and lefts:
        # The common case in C; any unknown token falls through to the loop, which explains it.
        get = vocab.__getitem__
        try:
            left_ids = list(map(get, lefts))
            right_ids = list(map(get, rights))
            new_ids = tuple(map(get, map(add, lefts, rights)))  # (a tuple: the collector untracks it)
        except KeyError:
            pass
        else:
            # (Lists first: a dict filled from a chain of lazy maps is built 3-4x slower.)
            return dict(zip(zip(left_ids, right_ids), range(len(new_ids)))), new_ids
    merge_map: dict[tuple[int, int], int] = {}
    made: list[int] = []
    for rank, (left, right) in enumerate(zip(lefts, rights)):
        left_id = vocab.get(left)
        right_id = vocab.get(right)
        if left_id is None or right_id is None:
            missing = left if left_id is None else right
            raise VocabularyError(
                f"Merge number {rank + 1} ({left!r}, {right!r}) uses {missing!r}, which is not in the vocabulary."
            )
        if prefix_bytes:
            # HF drops as many leading bytes of the right part as the prefix has,
            # whether or not the right part starts with the prefix.
            # (HF panics when that cuts a character or runs past the end; we explain.)
            right_bytes = right.encode("utf-8")
            try:
                if len(right_bytes) < prefix_bytes:
                    raise ValueError("shorter than the prefix")
                merged = left + right_bytes[prefix_bytes:].decode("utf-8")
            except ValueError:  # also UnicodeDecodeError
                raise VocabularyError(
                    f"Merge number {rank + 1} ({left!r}, {right!r}): the right part does not start with the "
                    f"continuing_subword_prefix {continuing_subword_prefix!r}."
                ) from None
        else:
            merged = left + right
        new_id = vocab.get(merged)
        if new_id is None:
            raise VocabularyError(
                f"Merge number {rank + 1} ({left!r}, {right!r}) makes {merged!r}, which is not in the vocabulary."
            )
        merge_map[(left_id, right_id)] = rank
        made.append(new_id)
    return merge_map, tuple(made)


def apply_merges(
    ids: list[int], lengths: list[int] | None, merge_map: Mapping[tuple[int, int], int], new_ids: Sequence[int]
) -> None:
    """Merge ``ids`` in place, lowest rank first, leftmost on ties; ``lengths`` (when given) follow
    along (``merge_map`` and ``new_ids`` as :func:`build_merge_map` gives them).

    >>> ids, lengths = [2, 6, 1, 5], [1, 1, 1, 1]   # h u g s
    >>> merge_map, new_ids = {(6, 1): 0, (2, 7): 1}, (7, 9)  # u+g -> ug (7), h+ug -> hug (9)
    >>> apply_merges(ids, lengths, merge_map, new_ids); ids, lengths
    ([9, 5], [3, 1])
    """
    if len(ids) > LIST_MERGE_MAX_SYMBOLS:
        merge_all(ids, lengths, merge_map, new_ids)
        return
    get = merge_map.get
    # pair_merges[i] is the rank of (ids[i], ids[i + 1]); after a merge only the
    # two pairs touching the new token change, so we patch them instead of rescanning.
    pair_merges = [get(pair, NO_MERGE) for pair in zip(ids, ids[1:])]
    while pair_merges:
        best = min(pair_merges)
        if best == NO_MERGE:
            return
        i = pair_merges.index(best)  # leftmost occurrence of the best pair
        new_id = new_ids[best]
        ids[i] = new_id
        del ids[i + 1]
        if lengths is not None:
            lengths[i] += lengths[i + 1]
            del lengths[i + 1]
        del pair_merges[i]
        if i:
            pair_merges[i - 1] = get((ids[i - 1], new_id), NO_MERGE)
        if i < len(pair_merges):
            pair_merges[i] = get((new_id, ids[i + 1]), NO_MERGE)


def merge_all(
    ids: list[int],
    lengths: list[int] | None,
    merge_map: Mapping[tuple[int, int], int],
    new_ids: Sequence[int],
    dropout: float | None = None,
    rng: random.Random | Any = None,
) -> None:
    """HF's ``Word::merge_all``: merge ``ids`` in place, lowest rank first, leftmost on ties,
    over a linked list of symbols with a heap of candidate pairs (``lengths``, when given,
    follow along). A popped candidate whose pair has changed since it was pushed is skipped.

    With ``dropout`` (BPE-dropout), HF's queue is replayed exactly, because the distribution
    depends on it: a popped candidate is set aside with probability ``dropout``; any candidate
    that is not (even a stale one) puts the set-aside ones back; when the heap runs dry, the
    word is final.

    >>> ids, lengths = [2, 6, 1, 5], [1, 1, 1, 1]          # h u g s
    >>> merge_all(ids, lengths, {(6, 1): 0, (2, 7): 1}, (7, 9)); ids, lengths
    ([9, 5], [3, 1])
    >>> merge_all(ids := [0, 0], [1, 1], {(0, 0): 0}, (1,), 1.0, random); ids
    [0, 0]
    """
    count = len(ids)
    if count < 2:
        return
    get = merge_map.get
    heap = [rank << _POSITION_BITS | i for i, pair in enumerate(zip(ids, ids[1:])) if (rank := get(pair)) is not None]
    if not heap:
        return
    heapq.heapify(heap)
    pop, push = heapq.heappop, heapq.heappush
    following = list(range(1, count + 1))  # next live symbol (count: none)
    preceding = list(range(-1, count - 1))  # previous live symbol (-1: none)
    set_aside: list[int] = []
    while heap:
        key = pop(heap)
        if dropout:
            if rng.random() < dropout:
                set_aside.append(key)
                continue
            for waiting in set_aside:
                push(heap, waiting)
            set_aside.clear()
        i = key & _POSITION_MASK
        left = ids[i]
        if left < 0:
            continue  # merged away
        j = following[i]
        if j == count:
            continue
        rank = key >> _POSITION_BITS
        current = get((left, ids[j]))
        # Stale: this pair changed since the candidate was pushed (with dropout, as HF tests it:
        # unless the pair now there makes the same token).
        new_id = new_ids[rank]
        if current != rank and (not dropout or current is None or new_ids[current] != new_id):
            continue
        ids[i] = new_id
        ids[j] = -1
        if lengths is not None:
            lengths[i] += lengths[j]
        after = following[j]
        following[i] = after
        if after != count:
            preceding[after] = i
            rank = get((new_id, ids[after]))
            if rank is not None:
                push(heap, rank << _POSITION_BITS | i)
        before = preceding[i]
        if before >= 0:
            rank = get((ids[before], new_id))
            if rank is not None:
                push(heap, rank << _POSITION_BITS | before)
    if lengths is not None:
        lengths[:] = [length for length, token_id in zip(lengths, ids) if token_id >= 0]
    ids[:] = [token_id for token_id in ids if token_id >= 0]


@dataclass(frozen=True, slots=True, eq=False)
class BpeTables:
    """A BPE model's tables for the engine (the model's own, shared, read only): token -> id,
    id -> token, the merge map and the new id of each rank (see :func:`build_merge_map`), whether no two
    tokens share an id, and the model's merging of one word into Tokens."""

    vocab: dict[str, int]
    vocab_r: dict[int, str]
    merge_map: dict[tuple[int, int], int]
    merge_new_ids: tuple[int, ...]
    plain: bool
    merge_word: Callable[[str], Any]


class BPE(FrozenModel):
    """A BPE model: ``BPE(vocab, merges, unk_token="<unk>", ...)`` as in ``tokenizers.models.BPE``.

    >>> model = BPE({"a": 0, "##b": 1, "ab": 2}, [("a", "##b")], continuing_subword_prefix="##")
    >>> model.tokenize("ab")
    [Token(id=2, value='ab', offsets=(0, 2))]
    >>> model.to_dict()["merges"]
    [['a', '##b']]

    Words are cached (``cache_capacity`` words per generation, two generations; 0
    turns the cache off). The cache never changes a result, only its speed.
    """

    __slots__ = (
        "_vocab",
        "_vocab_r",
        "_merges",
        "_merge_map",
        "_merge_new_ids",
        "_cache",
        "_cache_epoch",
        "_plain",
        "_rng",
        "cache_capacity",
        "dropout",
        "unk_token",
        "continuing_subword_prefix",
        "end_of_word_suffix",
        "fuse_unk",
        "byte_fallback",
        "ignore_merges",
    )
    _SETTABLE: ClassVar[dict[str, str]] = {
        "dropout": "float?", "unk_token": "str?", "continuing_subword_prefix": "str?", "end_of_word_suffix": "str?",
        "fuse_unk": "bool", "byte_fallback": "bool", "ignore_merges": "bool",
    }

    _vocab: dict[str, int]
    _vocab_r: dict[int, str]
    _merges: tuple[tuple[str, ...], tuple[str, ...]]  # (lefts, rights), see parse_merges
    _merge_map: dict[tuple[int, int], int]
    _merge_new_ids: tuple[int, ...]  # the new id of each rank (see build_merge_map)
    _cache: list[dict[str, tuple[Token, ...]]] | None  # [recent, old] generations
    _cache_epoch: int  # how many times the caches were cleared (tokenizers' plans follow it)
    _plain: bool  # no two tokens share an id
    _rng: random.Random | Any
    cache_capacity: int
    dropout: float | None
    unk_token: str | None
    continuing_subword_prefix: str | None
    end_of_word_suffix: str | None
    fuse_unk: bool
    byte_fallback: bool
    ignore_merges: bool

    def __init__(
        self,
        vocab: Mapping[str, int] | None = None,
        merges: Iterable[tuple[str, str] | list[str] | str] | None = None,
        cache_capacity: int | None = DEFAULT_CACHE_CAPACITY,
        dropout: float | None = None,
        unk_token: str | None = None,
        continuing_subword_prefix: str | None = None,
        end_of_word_suffix: str | None = None,
        fuse_unk: bool | None = False,
        byte_fallback: bool | None = False,
        ignore_merges: bool | None = False,
        *,
        rng: random.Random | None = None,
    ) -> None:
        if isinstance(vocab, str) or isinstance(merges, str):  # HF's older form: BPE("vocab.json", "merges.txt")
            if vocab is None or merges is None:
                raise VocabularyError("`vocab` and `merges` must be both specified")
            if not (isinstance(vocab, str) and isinstance(merges, str)):
                raise VocabularyError("`vocab` and `merges` must be both be from memory or both filenames")
            vocab, merges = BPE.read_file(vocab, merges)
        checked_vocab = check_vocab(vocab, "BPE")
        parsed_merges = parse_merges(merges or ())
        merge_map, merge_new_ids = build_merge_map(checked_vocab, parsed_merges, continuing_subword_prefix)
        if cache_capacity is None:
            cache_capacity = DEFAULT_CACHE_CAPACITY
        if not isinstance(cache_capacity, int) or isinstance(cache_capacity, bool) or cache_capacity < 0:
            raise VocabularyError(f"cache_capacity must be a non-negative whole number, not {cache_capacity!r}.")
        if dropout is not None:
            if isinstance(dropout, bool) or not isinstance(dropout, (int, float)) or not 0.0 <= dropout <= 1.0:
                raise VocabularyError(f"BPE dropout must be a probability between 0 and 1, not {dropout!r}.")
            dropout = float(dropout)
        for name, value in (
            ("unk_token", unk_token),
            ("continuing_subword_prefix", continuing_subword_prefix),
            ("end_of_word_suffix", end_of_word_suffix),
        ):
            if value is not None and not isinstance(value, str):
                raise SpecialTokenError(f"BPE's {name} must be a string or None, not {value!r}.")
        vocab_r = reverse_vocab(checked_vocab)
        self._init(
            _vocab=checked_vocab,
            _vocab_r=vocab_r,
            _merges=parsed_merges,
            _merge_map=merge_map,
            _merge_new_ids=merge_new_ids,
            _cache=[{}, {}] if cache_capacity else None,
            _cache_epoch=0,
            _plain=len(checked_vocab) == len(vocab_r),  # (one entry per distinct id)
            _rng=rng if rng is not None else random,
            cache_capacity=cache_capacity,
            dropout=dropout,
            unk_token=unk_token,
            continuing_subword_prefix=continuing_subword_prefix,
            end_of_word_suffix=end_of_word_suffix,
            fuse_unk=bool(fuse_unk),
            byte_fallback=bool(byte_fallback),
            ignore_merges=bool(ignore_merges),
        )

    def word_tables(self) -> BpeTables | None:
        """What the engine's word encoder reads (see :meth:`FrozenModel.word_tables`); None
        while dropout is on (each call draws anew)."""
        if self.dropout:
            return None
        return BpeTables(self._vocab, self._vocab_r, self._merge_map, self._merge_new_ids, self._plain, self._merge_word)

    # -- encoding ---------------------------------------------------------------------

    def tokenize(self, sequence: str) -> list[Token]:
        """Tokens of one pre-token, with character offsets into it."""
        cache = self._cache
        if cache is not None:
            # Checked first because it is the common case. Only the plain merge path
            # below fills the cache, so a hit is right whatever the options.
            # Cached tokens are shared: Token is frozen and offsets are relative to the word.
            tokens = cache[0].get(sequence)
            if tokens is not None:
                return list(tokens)
        if not sequence:
            return []
        if self.dropout:  # None and 0.0 both mean "no dropout"
            # As in HF, dropout bypasses both the cache and ignore_merges.
            return list(self._merge_word(sequence))
        if self.ignore_merges:
            token_id = self._vocab.get(sequence)
            if token_id is not None:
                return [Token(token_id, sequence, (0, len(sequence)))]
        if cache is None:
            return list(self._merge_word(sequence))
        recent = cache[0]
        tokens = cache[1].get(sequence)
        if tokens is None:
            tokens = self._merge_word(sequence)
            if len(sequence) >= CACHE_MAX_WORD_LENGTH:
                return list(tokens)
        # Two generations approximate "least recently used" at the price of one dict:
        # when the recent one holds cache_capacity words it becomes the old one, and
        # words found in the old one move back; so at most 2 * cache_capacity words are
        # kept. (HF keeps the first cache_capacity words and stops: on the benchmark
        # corpus that misses 33% of the words, this 5%.)
        if len(recent) >= self.cache_capacity:
            cache[1] = recent
            recent = cache[0] = {}
        recent[sequence] = tokens
        return list(tokens)

    def _symbols(self, word: str) -> tuple[list[int], list[int]]:
        """The word's initial symbols: ids and byte lengths, with HF's unk / byte-fallback rules."""
        vocab = self._vocab
        prefix = self.continuing_subword_prefix
        suffix = self.end_of_word_suffix
        ids: list[int] = []
        lengths: list[int] = []
        pending_unk: list[int] | None = None  # [unk_id, byte_length], not yet emitted
        last = len(word) - 1
        for index, char in enumerate(word):
            symbol = char
            if prefix and index:
                symbol = prefix + symbol
            if suffix and index == last:
                symbol = symbol + suffix
            byte_length = len(char.encode("utf-8")) if char >= "\x80" else 1
            token_id = vocab.get(symbol)
            if token_id is not None:
                if pending_unk is not None:
                    ids.append(pending_unk[0])
                    lengths.append(pending_unk[1])
                    pending_unk = None
                ids.append(token_id)
                lengths.append(byte_length)
                continue
            if self.byte_fallback:
                # HF looks up the bytes of the decorated symbol (prefix and suffix
                # included) and does not emit a pending unk first; we follow it.
                byte_ids = list(map(vocab.get, map(BYTE_FALLBACK_TOKENS.__getitem__, symbol.encode("utf-8"))))
                if None not in byte_ids:
                    ids.extend(byte_ids)  # type: ignore[arg-type]
                    lengths.extend([1] * len(byte_ids))
                    continue
            if self.unk_token is None:
                continue  # HF drops the character
            if pending_unk is not None and self.fuse_unk:
                pending_unk[1] += byte_length
                continue
            if pending_unk is not None:
                ids.append(pending_unk[0])
                lengths.append(pending_unk[1])
            pending_unk = [self._unk_id(word), byte_length]
        if pending_unk is not None:
            ids.append(pending_unk[0])
            lengths.append(pending_unk[1])
        return ids, lengths

    def _unk_id(self, word: str) -> int:
        unk_id = self._vocab.get(self.unk_token)  # type: ignore[arg-type]
        if unk_id is None:
            raise VocabularyError(
                f"The word {word!r} has a character that is not in the BPE vocabulary, and the unk_token "
                f"{self.unk_token!r} is not in the vocabulary either; add it to the vocabulary."
            )
        return unk_id

    def _merge_word(self, word: str) -> tuple[Token, ...]:
        """Tokenize one word without the cache."""
        get = self._vocab.get
        prefix = self.continuing_subword_prefix
        suffix = self.end_of_word_suffix
        if prefix or suffix:
            symbols = [word[0], *[prefix + char for char in word[1:]]] if prefix else list(word)
            if suffix:
                symbols[-1] += suffix
            ids = list(map(get, symbols))
        else:
            ids = list(map(get, word))
            if self._plain and not self.dropout and None not in ids:
                # Fastest path: no decoration and one id per token string, so a token's
                # text is exactly the characters it covers and gives its length.
                apply_merges(ids, None, self._merge_map, self._merge_new_ids)
                vocab_r = self._vocab_r
                tokens = []
                position = 0
                for token_id in ids:
                    value = vocab_r[token_id]
                    end = position + len(value)
                    tokens.append(Token(token_id, value, (position, end)))
                    position = end
                return tuple(tokens)
        if None not in ids:
            # Fast path: every character is one known symbol, so offsets count characters.
            lengths = [1] * len(ids)
            byte_offsets = False
        else:
            ids, lengths = self._symbols(word)
            byte_offsets = not word.isascii() or sum(lengths) > len(word)
        if self.dropout:
            merge_all(ids, lengths, self._merge_map, self._merge_new_ids, self.dropout, self._rng)
        else:
            apply_merges(ids, lengths, self._merge_map, self._merge_new_ids)
        vocab_r = self._vocab_r
        tokens: list[Token] = []
        position = 0
        if not byte_offsets:
            for token_id, length in zip(ids, lengths):
                end = position + length
                tokens.append(Token(token_id, vocab_r[token_id], (position, end)))
                position = end
            return tuple(tokens)
        # Byte offsets (as HF computes them) -> character offsets of the word; offsets
        # past the end (byte fallback of a prefixed symbol) are clamped to it.
        char_of_byte = [index for index, char in enumerate(word) for _ in range(len(char.encode("utf-8")))]
        n_bytes = len(char_of_byte)
        n_chars = len(word)
        for token_id, length in zip(ids, lengths):
            end = position + length
            start_char = char_of_byte[position] if position < n_bytes else n_chars
            end_char = char_of_byte[end - 1] + 1 if end <= n_bytes else n_chars
            tokens.append(Token(token_id, vocab_r[token_id], (start_char, end_char)))
            position = end
        return tuple(tokens)

    # -- vocabulary (token_to_id, id_to_token, get_vocab... come from FrozenModel) -------

    @property
    def merges(self) -> tuple[tuple[str, str], ...]:
        """The merges as given, in rank order: ``(("u", "g"), ("u", "n"), ...)``."""
        return tuple(zip(*self._merges))

    def clear_cache(self) -> None:
        """Empty the word caches: this model's and those a tokenizer's fast paths keep for it
        (they never change results, only speed). Tables derived from the vocabulary stay, as
        HF's merge map does: the next encode is as cold as a first one, less that setup."""
        if self._cache is not None:
            self._cache[:] = [{}, {}]
        object.__setattr__(self, "_cache_epoch", self._cache_epoch + 1)  # seen by the tokenizer's plans

    def _clear_cache(self) -> None:
        """HF's name: :meth:`clear_cache`."""
        self.clear_cache()

    def _resize_cache(self, capacity: int) -> None:
        """HF's ``_resize_cache``: a new, empty word cache for ``capacity`` words per generation
        (0 turns this model's own cache off; a tokenizer's chunk caches keep their own bound).

        >>> model = BPE({"a": 0}, [])
        >>> model._resize_cache(5); model.cache_capacity
        5
        """
        capacity = check_option("BPE", "capacity", "uint", capacity)
        object.__setattr__(self, "cache_capacity", capacity)
        # A new list, not the old one emptied: a copy of this model keeps its own cache.
        object.__setattr__(self, "_cache", [{}, {}] if capacity else None)
        object.__setattr__(self, "_cache_epoch", self._cache_epoch + 1)

    # -- construction and serialization ---------------------------------------------

    def _options(self) -> dict[str, Any]:
        return {
            "vocab": self._vocab,
            "merges": self.merges,
            "cache_capacity": self.cache_capacity,
            **{name: getattr(self, name) for name in _JSON_OPTIONS},
            **({} if self._rng is random else {"rng": self._rng}),  # (the module itself cannot be pickled)
        }

    def to_dict(self) -> dict[str, Any]:
        """The "model" section HF writes in tokenizer.json (merges as ``[left, right]`` pairs)."""
        vocab_r = self._vocab_r
        by_rank = sorted(
            (rank, left_id, right_id) for (left_id, right_id), rank in self._merge_map.items()
        )
        return {
            "type": "BPE",
            **{name: getattr(self, name) for name in _JSON_OPTIONS},
            "vocab": ordered_vocab(vocab_r),
            "merges": [[vocab_r[left_id], vocab_r[right_id]] for _, left_id, right_id in by_rank],
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> BPE:
        """Read a tokenizer.json "model" section; merges may be pairs or legacy ``"a b"`` strings."""
        data = section_type(data, "BPE")
        if "merges" not in data:
            raise SerializationError("The BPE model section has no 'merges'.")
        merges = data["merges"]
        if not isinstance(merges, list):
            raise SerializationError("The BPE model's 'merges' must be a list.")
        flags = {}
        for key in ("fuse_unk", "byte_fallback", "ignore_merges"):
            value = data.get(key, False)
            if value is None:
                value = False
            if not isinstance(value, bool):
                raise SerializationError(f"The BPE field {key!r} must be true or false, not {value!r}.")
            flags[key] = value
        try:
            return cls(
                data["vocab"],
                merges,
                dropout=data.get("dropout"),  # (the constructor refuses what is not a probability)
                unk_token=optional_str(data, "unk_token", None, "BPE"),
                continuing_subword_prefix=optional_str(data, "continuing_subword_prefix", None, "BPE"),
                end_of_word_suffix=optional_str(data, "end_of_word_suffix", None, "BPE"),
                **flags,
            )
        except (VocabularyError, SpecialTokenError) as error:
            raise SerializationError(f"This BPE model section cannot be loaded: {error}") from error

    @staticmethod
    def read_file(vocab: str, merges: str) -> tuple[dict[str, int], list[tuple[str, str]]]:
        """Read ``vocab.json`` and ``merges.txt`` (one ``"left right"`` per line, ``#version`` skipped)."""
        vocab_map = read_vocab_json(vocab, "BPE")
        try:
            with open(merges, encoding="utf-8") as handle:
                lines = handle.read().splitlines()
        except (OSError, UnicodeDecodeError) as error:
            raise SerializationError(f"Cannot read the merges file {merges!r}: {error}") from error
        lines = [line for line in lines if not line.startswith("#version")]
        return vocab_map, [parse_merge(line, index) for index, line in enumerate(lines)]

    @classmethod
    def from_file(cls, vocab: str, merges: str, **kwargs: Any) -> BPE:
        """``BPE.from_file("vocab.json", "merges.txt", unk_token=...)``, as in HF."""
        vocab_map, merge_pairs = cls.read_file(vocab, merges)
        return cls(vocab_map, merge_pairs, **kwargs)

    def save(self, folder: str, prefix: str | None = None) -> list[str]:
        """Write ``vocab.json`` and ``merges.txt`` (``{prefix}-vocab.json`` ...) as HF's ``save``."""
        section = self.to_dict()
        stem = f"{prefix}-" if prefix else ""
        vocab_path = os.path.join(folder, f"{stem}vocab.json")
        merges_path = os.path.join(folder, f"{stem}merges.txt")
        with open(vocab_path, "w", encoding="utf-8") as handle:
            json.dump(section["vocab"], handle, ensure_ascii=False, separators=(",", ":"))
        with open(merges_path, "w", encoding="utf-8") as handle:
            handle.write("#version: 0.2\n")
            handle.writelines(f"{left} {right}\n" for left, right in section["merges"])
        return [vocab_path, merges_path]
