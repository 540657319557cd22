"""The :class:`Encoding`: what ``Tokenizer.encode`` returns, field for field as in HF.

An encoding is a set of parallel lists, one entry per token::

    ids                  [101, 7592, 1010, 102]
    tokens               ['[CLS]', 'hello', ',', '[SEP]']
    offsets              [(0, 0), (0, 5), (5, 6), (0, 0)]   char offsets into the ORIGINAL text
    type_ids             [0, 0, 0, 0]                       which segment (0 = first, 1 = pair)
    word_ids             [None, 0, 1, None]                 which pre-token the token came from
    special_tokens_mask  [1, 0, 0, 1]                       added by the post-processor
    attention_mask       [1, 1, 1, 1]                       0 on padding

plus ``overflowing`` (the pieces cut off by truncation, each an Encoding) and the
token range of each sequence (``sequence_ids``: ``[None, 0, 0, None]``).

Like HF's, an Encoding is a mutable value: ``pad`` and ``truncate`` edit it in place,
and ``Encoding.merge`` builds a new one. It is not shared between callers.

What this version leaves out: byte offsets (tokviz speaks characters only).
"""

from __future__ import annotations

from array import array
from itertools import accumulate, chain, compress, count, islice, repeat
from operator import attrgetter
from dataclasses import dataclass
from typing import Any, Iterable

from tokviz._component import ArgumentTypeError, check_whole
from tokviz.errors import TokvizError

Offsets = tuple[int, int]


_FIELDS = (
    "_ids", "_type_ids", "_tokens", "_words", "_offsets", "_special_tokens_mask", "_attention_mask", "_overflowing",
    "_sequence_ranges",
)


class Encoding:
    """The output of a tokenizer for one input (one sequence, or a pair).

    >>> enc = Encoding.from_tokens([(5, "he", (0, 2)), (6, "llo", (2, 5))], type_id=0)
    >>> enc.ids, enc.tokens, enc.offsets
    ([5, 6], ['he', 'llo'], [(0, 2), (2, 5)])
    >>> enc.pad(4, pad_id=0, pad_token="[PAD]"); enc.attention_mask
    [1, 1, 0, 0]
    """

    # The fields, plus where an encoding sent back by a worker still is (see _PackedEncoding).
    __slots__ = (*_FIELDS, "_batch", "_index")

    def __init__(
        self,
        ids: list[int] | None = None,
        type_ids: list[int] | None = None,
        tokens: list[str] | None = None,
        words: list[int | None] | None = None,
        offsets: list[Offsets] | None = None,
        special_tokens_mask: list[int] | None = None,
        attention_mask: list[int] | None = None,
        overflowing: list["Encoding"] | None = None,
        sequence_ranges: dict[int, tuple[int, int]] | None = None,
    ) -> None:
        # Fields are stored as tuples: immutable (edits build new ones) and, holding only
        # ints/strs, untracked by Python's cyclic GC, which otherwise re-scans every live
        # encoding again and again when a program keeps many of them.
        # (``tuple`` gives a tuple back as it is.)
        self._ids = () if ids is None else tuple(ids)
        n = len(self._ids)
        self._type_ids = (0,) * n if type_ids is None else tuple(type_ids)
        self._tokens = () if tokens is None else tuple(tokens)
        self._words = (None,) * n if words is None else tuple(words)
        self._offsets = ((0, 0),) * n if offsets is None else tuple(offsets)
        self._special_tokens_mask = (0,) * n if special_tokens_mask is None else tuple(special_tokens_mask)
        self._attention_mask = (1,) * n if attention_mask is None else tuple(attention_mask)
        # A shared empty tuple until truncation fills it (every edit assigns a new list).
        self._overflowing: list[Encoding] = overflowing if overflowing is not None else _NO_PIECES  # type: ignore[assignment]
        self._sequence_ranges: dict[int, tuple[int, int]] = sequence_ranges if sequence_ranges is not None else {}

    # ------------------------------------------------------------------ building
    @classmethod
    def from_tokens(
        cls,
        tokens: Iterable[tuple[int, str, Offsets]],
        type_id: int = 0,
        word_ids: list[int | None] | None = None,
    ) -> "Encoding":
        """Build an encoding from ``(id, token, offsets)`` triples (no special tokens)."""
        triples = list(tokens)
        n = len(triples)
        return cls(
            ids=[t[0] for t in triples],
            type_ids=[type_id] * n,
            tokens=[t[1] for t in triples],
            words=list(word_ids) if word_ids is not None else [None] * n,
            offsets=[tuple(t[2]) for t in triples],  # type: ignore[misc]
            special_tokens_mask=[0] * n,
            attention_mask=[1] * n,
        )

    def copy(self) -> "Encoding":
        """A deep copy (overflowing pieces included); the tuples are shared, being immutable."""
        twin = self._shallow()
        twin._overflowing = [o.copy() for o in self._overflowing]
        return twin

    # ------------------------------------------------------------------ fields
    @property
    def ids(self) -> list[int]:
        return list(self._ids)

    @property
    def type_ids(self) -> list[int]:
        return list(self._type_ids)

    @property
    def tokens(self) -> list[str]:
        return list(self._tokens)

    @property
    def word_ids(self) -> list[int | None]:
        return list(self._words)

    @property
    def words(self) -> list[int | None]:
        """Same as :attr:`word_ids`; deprecated, with HF's DeprecationWarning (HF keeps both names)."""
        import warnings

        warnings.warn(
            "Deprecated in 0.9.4: Encoding.words is deprecated, please use Encoding.word_ids instead.",
            DeprecationWarning,
            stacklevel=2,
        )
        return list(self._words)

    @property
    def offsets(self) -> list[Offsets]:
        return list(self._offsets)

    @property
    def special_tokens_mask(self) -> list[int]:
        return list(self._special_tokens_mask)

    @property
    def attention_mask(self) -> list[int]:
        return list(self._attention_mask)

    @property
    def overflowing(self) -> list["Encoding"]:
        return list(self._overflowing)

    @property
    def n_sequences(self) -> int:
        return len(self._sequence_ranges) or 1

    @property
    def sequence_ids(self) -> list[int | None]:
        """Which input sequence each token belongs to; None for special tokens and padding.

        >>> Encoding([1, 2, 3], sequence_ranges={0: (1, 2)}).sequence_ids
        [None, 0, None]
        """
        sequences: list[int | None] = [None] * len(self._ids)
        for sequence_id in range(self.n_sequences):
            start, end = self._sequence_range(sequence_id)
            sequences[start:end] = [sequence_id] * (end - start)
        return sequences

    def __len__(self) -> int:
        return len(self._ids)

    def __repr__(self) -> str:
        return (
            f"Encoding(num_tokens={len(self._ids)}, attributes=[ids, type_ids, tokens, offsets, "
            f"attention_mask, special_tokens_mask, overflowing])"
        )

    def _repr_html_(self) -> str | None:
        """Jupyter's view: the app's escaped token spans and the table of fields (registered by :mod:`tokviz.viz.notebook`)."""
        from tokviz._views import html_view

        return html_view(self)

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Encoding):
            return NotImplemented
        # (overflowing compared as lists: no pieces is an empty tuple or an empty list)
        return all(getattr(self, name) == getattr(other, name) for name in _FIELDS if name != "_overflowing") and list(
            self._overflowing
        ) == list(other._overflowing)

    __hash__ = None  # type: ignore[assignment]  # mutable, like a list

    # ------------------------------------------------------------------ lookups
    def _sequence_range(self, sequence_id: int) -> tuple[int, int]:
        return self._sequence_ranges.get(sequence_id, (0, len(self._ids)))

    def set_sequence_id(self, sequence_id: int) -> None:
        """Declare that the whole encoding is sequence ``sequence_id`` (0 or 1)."""
        # (a new dict: the fast lanes share one between encodings of the same shape)
        self._sequence_ranges = {**self._sequence_ranges, sequence_id: (0, len(self._ids))}

    def token_to_sequence(self, token_index: int) -> int | None:
        if token_index > len(self._ids):
            return None
        if not self._sequence_ranges:
            return 0
        for sequence_id, (start, end) in self._sequence_ranges.items():
            if start <= token_index < end:
                return sequence_id
        return None

    def token_to_chars(self, token_index: int) -> Offsets | None:
        """The ``(start, end)`` char offsets of a token: ``token_to_chars(1) -> (0, 5)``."""
        if self.token_to_sequence(token_index) is None or not 0 <= token_index < len(self._offsets):
            return None
        return self._offsets[token_index]

    def token_to_word(self, token_index: int) -> int | None:
        if self.token_to_sequence(token_index) is None or not 0 <= token_index < len(self._words):
            return None
        return self._words[token_index]

    def word_to_tokens(self, word_index: int, sequence_index: int = 0) -> tuple[int, int] | None:
        """The token span ``(first, last + 1)`` of a word, like HF (scans up to the word)."""
        start = end = None
        range_start, range_end = self._sequence_range(sequence_index)
        if range_start > len(self._words):
            return None
        for i, word in enumerate(self._words[range_start:range_end]):
            # HF compares Option<u32>: None sorts before any word, so None never stops the scan.
            if word is not None and word > word_index:
                break
            if word == word_index:
                if start is None or i < start:
                    start = i
                if end is None or i >= end:
                    end = i + 1
        if start is None or end is None:
            return None
        return (range_start + start, range_start + end)

    def word_to_chars(self, word_index: int, sequence_index: int = 0) -> Offsets | None:
        span = self.word_to_tokens(word_index, sequence_index)
        if span is None or span[1] == 0:
            return None
        return (self._offsets[span[0]][0], self._offsets[span[1] - 1][1])

    def char_to_token(self, char_pos: int, sequence_index: int = 0) -> int | None:
        """The first token whose offsets contain ``char_pos``, or None."""
        range_start, range_end = self._sequence_range(sequence_index)
        if range_start > len(self._offsets):
            return None
        for i, (start, end) in enumerate(self._offsets[range_start:range_end]):
            if start <= char_pos < end:
                return range_start + i
        return None

    def char_to_word(self, char_pos: int, sequence_index: int = 0) -> int | None:
        token = self.char_to_token(char_pos, sequence_index)
        return None if token is None else self.token_to_word(token)

    # ------------------------------------------------------------------ editing
    def truncate(self, max_length: int, stride: int = 0, direction: str = "right") -> None:
        """Keep ``max_length`` tokens; the rest becomes ``overflowing`` windows.

        Each window overlaps the previous one by ``stride`` tokens, as in HF:
        10 tokens, max_length=4, stride=1 -> kept [0:4], overflowing [3:7], [6:10].
        Existing overflowing pieces and the sequence ranges are dropped (HF does the same).
        """
        max_length = check_whole("Encoding.truncate", "max_length", max_length)
        stride = check_whole("Encoding.truncate", "stride", stride)
        direction = check_direction(direction, "truncation")
        length = len(self._ids)
        if max_length >= length:
            return
        if max_length == 0:
            moved = self._shallow()
            self.__init__()  # type: ignore[misc]
            self._overflowing = [moved]
            return
        if stride >= max_length:
            raise TokvizError(
                f"The truncation stride ({stride}) must be smaller than the maximum length ({max_length})."
            )
        step = max_length - stride
        ranges: list[tuple[int, int]] = []
        if direction == "right":
            for start in range(0, length, step):
                stop = min(start + max_length, length)
                ranges.append((start, stop))
                if stop == length:
                    break
        else:
            for last in range(length - 1, -1, -step):
                stop = last + 1
                start = max(0, stop - max_length)
                ranges.append((start, stop))
                if start == 0:
                    break
        pieces = [self._slice(start, stop) for start, stop in ranges]
        first = pieces[0]
        first._overflowing = pieces[1:]
        self._take(first)

    def _shallow(self) -> "Encoding":
        """Same (immutable) fields and overflowing list, its own sequence ranges."""
        return Encoding(
            self._ids, self._type_ids, self._tokens, self._words, self._offsets,
            self._special_tokens_mask, self._attention_mask, self._overflowing, dict(self._sequence_ranges),
        )

    def _slice(self, start: int, stop: int) -> "Encoding":
        return Encoding(
            self._ids[start:stop],
            self._type_ids[start:stop],
            self._tokens[start:stop],
            self._words[start:stop],
            self._offsets[start:stop],
            self._special_tokens_mask[start:stop],
            self._attention_mask[start:stop],
            [],
            {},
        )

    def _take(self, other: "Encoding") -> None:
        for name in _FIELDS:
            setattr(self, name, getattr(other, name))

    def pad(
        self,
        length: int,
        direction: str = "right",
        pad_id: int = 0,
        pad_type_id: int = 0,
        pad_token: str = "[PAD]",
    ) -> None:
        """Pad up to ``length`` tokens (overflowing pieces too); never shortens."""
        direction = check_direction(direction, "padding")
        for piece in self._overflowing:
            piece.pad(length, direction, pad_id, pad_type_id, pad_token)
        missing = length - len(self._ids)
        if missing <= 0:
            return
        flat = flat_offsets_of(self)
        if flat is not None:
            # Offsets still flat (a fast lane's encoding): the pads' (0, 0) pairs are counted
            # in ``before`` or ``after`` instead of making every pair now.
            starts, ends, before, after = flat
            if direction == "left":
                _OFFSETS_SLOT.__set__(self, (starts, ends, before + missing, after))
            else:
                _OFFSETS_SLOT.__set__(self, (starts, ends, before, after + missing))
        left = direction == "left"

        def padded(values: tuple[Any, ...], pad: Any) -> tuple[Any, ...]:
            return (pad,) * missing + values if left else values + (pad,) * missing

        self._ids = padded(self._ids, pad_id)
        self._type_ids = padded(self._type_ids, pad_type_id)
        self._tokens = padded(self._tokens, pad_token)
        self._words = padded(self._words, None)
        self._attention_mask = padded(self._attention_mask, 0)
        self._special_tokens_mask = padded(self._special_tokens_mask, 1)
        if flat is None:
            self._offsets = padded(self._offsets, (0, 0))
        if left:
            self._sequence_ranges = {
                sequence_id: (start + missing, end + missing)
                for sequence_id, (start, end) in self._sequence_ranges.items()
            }

    def merge_with(self, pair: "Encoding", growing_offsets: bool = False) -> None:
        """Append ``pair`` to this encoding, in place, combining overflowing pieces as HF does.

        Every overflowing piece of ``self`` is merged with ``pair`` and with each of
        ``pair``'s overflowing pieces; ``self`` is merged with each of ``pair``'s pieces.
        """
        # merge_with never edits a field in place (it concatenates) and never edits ``pair``,
        # so the combinations can start from shallow copies: this keeps the (quadratic, as
        # in HF) pairing of overflowing pieces affordable in Python.
        overflowings: list[Encoding] = []
        for own_piece in self._overflowing:
            combined = own_piece._shallow()
            combined.merge_with(pair, growing_offsets)
            overflowings.append(combined)
            for other_piece in pair._overflowing:
                combined = own_piece._shallow()
                combined.merge_with(other_piece, growing_offsets)
                overflowings.append(combined)
        for other_piece in pair._overflowing:
            combined = self._shallow()
            combined.merge_with(other_piece, growing_offsets)
            overflowings.append(combined)

        shift = len(self._ids)
        ranges = dict(self._sequence_ranges)  # (a new dict: see set_sequence_id)
        for sequence_id, (start, end) in pair._sequence_ranges.items():
            ranges[sequence_id] = (start + shift, end + shift)
        self._sequence_ranges = ranges
        self._ids = self._ids + pair._ids
        self._type_ids = self._type_ids + pair._type_ids
        self._tokens = self._tokens + pair._tokens
        self._words = self._words + pair._words
        offset_shift = self._offsets[-1][1] if growing_offsets and self._offsets else 0
        if offset_shift:
            self._offsets = self._offsets + tuple((s + offset_shift, e + offset_shift) for s, e in pair._offsets)
        else:
            self._offsets = self._offsets + pair._offsets
        self._special_tokens_mask = self._special_tokens_mask + pair._special_tokens_mask
        self._attention_mask = self._attention_mask + pair._attention_mask
        self._overflowing = overflowings

    @staticmethod
    def merge(encodings: Iterable["Encoding"], growing_offsets: bool = True) -> "Encoding":
        """Concatenate encodings into a new one (HF's ``Encoding.merge``)."""
        merged = Encoding()
        for encoding in encodings:
            if not isinstance(encoding, Encoding):
                raise ArgumentTypeError(f"Encoding.merge takes a list of Encodings, got {type(encoding).__name__} {encoding!r:.60}.")
            merged.merge_with(encoding.copy(), growing_offsets)
        return merged


_NO_PIECES: tuple = ()


def new_encoding(
    ids: tuple[int, ...],
    type_ids: tuple[int, ...],
    tokens: tuple[str, ...],
    words: tuple[int | None, ...],
    offsets: tuple[Offsets, ...],
    special_tokens_mask: tuple[int, ...],
    attention_mask: tuple[int, ...],
    sequence_ranges: dict[int, tuple[int, int]],
) -> Encoding:
    """An :class:`Encoding` of fields that are already tuples of one length, no overflow
    (the fast paths' constructor: no conversions or checks).

    >>> new_encoding((5,), (0,), ("hi",), (0,), ((0, 2),), (0,), (1,), {}).tokens
    ['hi']
    """
    encoding = _new(Encoding)
    encoding._ids = ids
    encoding._type_ids = type_ids
    encoding._tokens = tokens
    encoding._words = words
    encoding._offsets = offsets
    encoding._special_tokens_mask = special_tokens_mask
    encoding._attention_mask = attention_mask
    encoding._overflowing = _NO_PIECES  # type: ignore[assignment]
    encoding._sequence_ranges = sequence_ranges
    return encoding


_new = object.__new__


class FlatOffsets(tuple):
    """Offsets as the fast paths compute them, two flat sequences of ints instead of a pair
    per token: ``FlatOffsets((starts, ends, before, after))`` stands for ``before`` special
    tokens at ``(0, 0)``, then ``zip(starts, ends)``, then ``after`` more at ``(0, 0)``;
    ``ends`` None means the tokens tile a range: ``zip(starts, starts[1:])``.

    >>> FlatOffsets(([0, 2, 5], None, 1, 0)).pairs()
    ((0, 0), (0, 2), (2, 5))
    """

    __slots__ = ()

    def pairs(self) -> tuple[Offsets, ...]:
        return flat_pairs(self)


def flat_pairs(flat: tuple[Any, ...]) -> tuple[Offsets, ...]:
    """The pairs of ``(starts, ends, before, after)`` (see :class:`FlatOffsets`)."""
    starts, ends, before, after = flat
    middle = zip(starts, islice(starts, 1, None)) if ends is None else zip(starts, ends)
    if not before and not after:
        return tuple(middle)
    return (*repeat((0, 0), before), *middle, *repeat((0, 0), after))


class _FlatOffsetsEncoding(Encoding):
    """An :class:`Encoding` whose offsets are still flat (as in :class:`FlatOffsets`, a plain
    tuple: no pair per token for the cycle collector to walk), what the engine returns; the
    pairs are made when the offsets are first read, and the encoding becomes a plain one."""

    __slots__ = ()

    def __reduce_ex__(self, protocol: Any) -> Any:  # (copy, deepcopy and pickle see a plain Encoding)
        self._offsets  # noqa: B018 - builds the pairs
        return self.__reduce_ex__(protocol)


_OFFSETS_SLOT = Encoding.__dict__["_offsets"]


def _flat_offsets_get(encoding: Encoding) -> tuple[Offsets, ...]:
    value = flat_pairs(_OFFSETS_SLOT.__get__(encoding, Encoding))
    _OFFSETS_SLOT.__set__(encoding, value)
    encoding.__class__ = Encoding
    return value


def _flat_offsets_set(encoding: Encoding, value: tuple[Offsets, ...]) -> None:
    _OFFSETS_SLOT.__set__(encoding, value)
    encoding.__class__ = Encoding


_FlatOffsetsEncoding._offsets = property(_flat_offsets_get, _flat_offsets_set)  # type: ignore[assignment]


_WHOLE_SEQUENCE_RANGES: dict[int, dict[int, tuple[int, int]]] = {}


def whole_sequence_ranges(n: int) -> dict[int, tuple[int, int]]:
    """``{0: (0, n)}``, one dict per length shared by the encodings that have it (an Encoding
    replaces its ranges rather than change them: see :meth:`Encoding.set_sequence_id`).

    >>> whole_sequence_ranges(3), whole_sequence_ranges(3) is whole_sequence_ranges(3)
    ({0: (0, 3)}, True)
    """
    ranges = _WHOLE_SEQUENCE_RANGES.get(n)
    if ranges is None:
        ranges = {0: (0, n)}
        if len(_WHOLE_SEQUENCE_RANGES) < 4096:
            _WHOLE_SEQUENCE_RANGES[n] = ranges
    return ranges


def flat_offsets_of(encoding: Encoding) -> tuple[Any, ...] | None:
    """The flat offsets ``(starts, ends, before, after)`` an encoding still holds, or None
    when its offsets are pairs (read without making them).

    >>> flat_offsets_of(flat_offsets_encoding((5,), (0,), ("hi",), (0,), ((0,), (2,), 0, 0), (0,), (1,), {}))
    ((0,), (2,), 0, 0)
    """
    return _OFFSETS_SLOT.__get__(encoding, Encoding) if type(encoding) is _FlatOffsetsEncoding else None


def flat_offsets_encoding(
    ids: tuple[int, ...],
    type_ids: tuple[int, ...],
    tokens: tuple[str, ...],
    words: tuple[int | None, ...],
    offsets: tuple[Any, ...],
    special_tokens_mask: tuple[int, ...],
    attention_mask: tuple[int, ...],
    sequence_ranges: dict[int, tuple[int, int]],
) -> Encoding:
    """:func:`new_encoding` with flat offsets ``(starts, ends, before, after)`` as in
    :class:`FlatOffsets` (the pairs are made on first read).

    >>> encoding = flat_offsets_encoding((5, 6), (0, 0), ("he", "llo"), (0, 0), ((0, 2, 5), None, 0, 0), (0, 0), (1, 1), {})
    >>> type(encoding).__name__, encoding.offsets, type(encoding).__name__
    ('_FlatOffsetsEncoding', [(0, 2), (2, 5)], 'Encoding')
    """
    encoding = new_encoding(ids, type_ids, tokens, words, offsets, special_tokens_mask, attention_mask, sequence_ranges)
    encoding.__class__ = _FlatOffsetsEncoding  # (same slots; its offsets slot now holds the flat form)
    return encoding


def pack_encodings(encodings: list[Encoding]) -> bytes:
    """Many encodings as bytes (flat arrays of ints and the tokens' text), what
    ``encode_batch(..., processes=N)`` sends back from a worker: several times cheaper than
    pickling. Each distinct type ids, masks and sequence ranges tuple is sent once, shared.

    >>> packed = pack_encodings([new_encoding((5, 6), (0, 0), ("he", "llo"), (0, 0), ((0, 2), (2, 5)), (0, 0), (1, 1), {0: (0, 2)})])
    >>> [encoding.offsets for encoding in unpack_encodings(packed)]
    [[(0, 2), (2, 5)]]
    """
    # (Field by field over all encodings at once, in C: map, chain and array do the loops.)
    def flat(name: str) -> chain[Any]:
        return chain.from_iterable(map(attrgetter(name), encodings))

    # The tokens with a NUL between them, which splitting finds fast; when a token holds a
    # NUL itself, their lengths say where each ends.
    token_count = sum(map(len, map(attrgetter("_ids"), encodings)))
    tokens = "\0".join(flat("_tokens"))
    lengths = [] if tokens.count("\0") == max(token_count - 1, 0) else list(map(len, flat("_tokens")))
    if lengths:
        tokens = "".join(flat("_tokens"))
    overflowing = list(compress(count(), map(attrgetter("_overflowing"), encodings)))  # (those that have pieces)
    nested = [pack_encodings(list(encodings[index]._overflowing)) for index in overflowing]
    numbers: list[Any] = [
        map(len, map(attrgetter("_ids"), encodings)), flat("_ids"), lengths, chain.from_iterable(flat("_offsets")), overflowing,
    ]
    for name in _SHARED_FIELDS:
        # Each distinct value gets a number (where it first appears; setdefault in C, no loop
        # here), each encoding the number of its own; then the table: numbers, lengths, values.
        table: dict[tuple[Any, ...], int] = {}
        values: Any = map(attrgetter(name), encodings)
        if name == "_sequence_ranges":  # ({0: (1, 5)} -> ((0, (1, 5)),): hashable)
            values = map(tuple, map(dict.items, values))
        numbers.append(list(map(table.setdefault, values, count())))
        numbers.append(table.values())
        if name == "_sequence_ranges":
            numbers.append([3 * len(ranges) for ranges in table])
            numbers.append([number for ranges in table for sequence_id, (start, stop) in ranges for number in (sequence_id, start, stop)])
        else:
            numbers.append(map(len, table))
            flat_values = list(chain.from_iterable(table))
            numbers.append(map(_NONE_AS_MINUS_ONE.get, flat_values, flat_values) if name == "_words" else flat_values)
    sections = [_int_bytes(list(values)) for values in numbers]  # (an array from a list: several times faster)
    sections += [tokens.encode("utf-8", "surrogatepass"), *nested]
    return array("q", [len(sections), *map(len, sections)]).tobytes() + b"".join(sections)


#: The fields sent as a table of their distinct values and one reference per encoding.
_SHARED_FIELDS = ("_type_ids", "_special_tokens_mask", "_attention_mask", "_words", "_sequence_ranges")
_NONE_AS_MINUS_ONE = {None: -1}


def _int_bytes(values: list[int]) -> bytes:
    """Ints as bytes: 4 per value when they all fit (a leading 4), else 8 (a leading 8)."""
    try:
        return b"4" + array("i", values).tobytes()
    except OverflowError:
        return b"8" + array("q", values).tobytes()


def _ints(data: bytes) -> list[int]:
    values = array("i" if data[:1] == b"4" else "q")
    values.frombytes(data[1:])
    return values.tolist()


def unpack_encodings(packed: bytes) -> list[Encoding]:
    """The encodings :func:`pack_encodings` made bytes, equal field for field. Each field is
    built on first use: until then an encoding is an object of two ints' size, so a batch
    whose offsets (say) are never read never builds them."""
    batch = _PackedBatch(packed)
    count = len(batch.starts) - 1
    encodings = list(map(_new, repeat(_PackedEncoding, count)))
    for _ in map(setattr, encodings, repeat("_batch"), repeat(batch, count)):
        pass
    for _ in map(setattr, encodings, repeat("_index"), range(count)):
        pass
    return encodings


class _PackedBatch:
    """The flat lists :func:`pack_encodings` made bytes, and how to build an encoding's fields from them."""

    __slots__ = ("starts", "ids", "tokens", "offsets", "overflowing", "shared", "built")

    def __init__(self, packed: bytes) -> None:
        header = array("q")
        header.frombytes(packed[:8])
        header.frombytes(packed[8 : 8 * (header[0] + 1)])
        ends = list(accumulate(header[1:], initial=8 * len(header)))
        sections = [packed[start:stop] for start, stop in zip(ends, ends[1:])]
        shared_sections = 4 * len(_SHARED_FIELDS)
        numbers = [_ints(section) for section in sections[: 5 + shared_sections]]
        counts, self.ids, lengths, self.offsets, overflowing = numbers[:5]
        text = sections[5 + shared_sections].decode("utf-8", "surrogatepass")
        if lengths:
            bounds = list(accumulate(lengths, initial=0))
            self.tokens = [text[start:stop] for start, stop in zip(bounds, bounds[1:])]
        else:
            self.tokens = text.split("\0") if self.ids else []
        self.starts = list(accumulate(counts, initial=0))
        self.built = [0] * len(counts)  # per encoding, a bit per field built (in _FIELDS order)
        self.overflowing = {index: unpack_encodings(nested) for index, nested in zip(overflowing, sections[6 + shared_sections :])}
        # Each shared field: (the number of each encoding's value, number -> value).
        self.shared: dict[str, tuple[list[int], dict[int, Any]]] = {}
        for position, name in enumerate(_SHARED_FIELDS):
            references, table_numbers, table_lengths, values = numbers[5 + 4 * position : 9 + 4 * position]
            if name == "_words" and -1 in values:
                values = [None if value < 0 else value for value in values]
            bounds = list(accumulate(table_lengths, initial=0))
            table = [values[start:stop] for start, stop in zip(bounds, bounds[1:])]
            if name == "_sequence_ranges":  # (sequence id, start, stop) triples -> ((id, (start, stop)), ...)
                table = [tuple((entry[i], (entry[i + 1], entry[i + 2])) for i in range(0, len(entry), 3)) for entry in table]
            self.shared[name] = (references, dict(zip(table_numbers, map(tuple, table))))

    def field(self, name: str, index: int) -> Any:
        shared = self.shared.get(name)
        if shared is not None:
            value = shared[1][shared[0][index]]
            # (a tuple is a value, which encodings may share; the ranges, a dict, are each one's own)
            return dict(value) if name == "_sequence_ranges" else value
        start, stop = self.starts[index], self.starts[index + 1]
        if name == "_ids":
            return tuple(self.ids[start:stop])
        if name == "_tokens":
            return tuple(self.tokens[start:stop])
        if name == "_offsets":
            numbers = iter(self.offsets[2 * start : 2 * stop])
            return tuple(zip(numbers, numbers))
        return self.overflowing.get(index, _NO_PIECES)  # (_overflowing)


class _PackedEncoding(Encoding):
    """An :class:`Encoding` still in its batch's flat lists (what :func:`unpack_encodings`
    gives). Reading a field builds that field; once all are built, or when one is set, it
    becomes a plain Encoding for good."""

    __slots__ = ()

    def _unpack(self) -> None:
        for name in _FIELDS:
            getattr(self, name)

    def __reduce_ex__(self, protocol: Any) -> Any:  # (copy, deepcopy and pickle see a plain Encoding)
        self._unpack()
        return self.__reduce_ex__(protocol)


def _packed_field(name: str) -> property:
    slot = Encoding.__dict__[name]
    bit = 1 << _FIELDS.index(name)
    every_field = (1 << len(_FIELDS)) - 1

    def get(self: _PackedEncoding) -> Any:
        batch, index = self._batch, self._index
        built = batch.built[index]
        if built & bit:
            return slot.__get__(self, Encoding)
        value = batch.field(name, index)
        slot.__set__(self, value)
        built |= bit
        batch.built[index] = built
        if built == every_field:
            del self._batch, self._index
            self.__class__ = Encoding
        return value

    def set(self: _PackedEncoding, value: Any) -> None:
        self._unpack()
        slot.__set__(self, value)

    return property(get, set)


for _name in _FIELDS:
    setattr(_PackedEncoding, _name, _packed_field(_name))


def check_direction(direction: str, what: str) -> str:
    value = str(direction).lower()
    if value not in ("left", "right"):
        raise TokvizError(f"The {what} direction must be 'left' or 'right', not {direction!r}.")
    return value


# ---------------------------------------------------------------------- truncation and padding of sequences and batches
@dataclass(frozen=True, slots=True)
class TruncationParams:
    max_length: int
    stride: int = 0
    strategy: str = "longest_first"
    direction: str = "right"

    def as_dict(self) -> dict[str, Any]:
        return {"max_length": self.max_length, "stride": self.stride, "strategy": self.strategy, "direction": self.direction}


@dataclass(frozen=True, slots=True)
class PaddingParams:
    length: int | None = None  # None: pad to the longest of the batch
    pad_to_multiple_of: int | None = None
    pad_id: int = 0
    pad_type_id: int = 0
    pad_token: str = "[PAD]"
    direction: str = "right"

    def as_dict(self) -> dict[str, Any]:
        return {
            "length": self.length,
            "pad_to_multiple_of": self.pad_to_multiple_of,
            "pad_id": self.pad_id,
            "pad_token": self.pad_token,
            "pad_type_id": self.pad_type_id,
            "direction": self.direction,
        }


def truncate_encodings(
    encoding: Encoding, pair: Encoding | None, params: TruncationParams
) -> tuple[Encoding, Encoding | None]:
    """Cut one sequence or a pair down to ``params.max_length`` tokens in all, as HF does.

    ``longest_first`` shares the budget: with max_length 6 and lengths (5, 3), the pair
    keeps (3, 3); with (2, 9) it keeps (2, 4).
    """
    max_length, stride, direction = params.max_length, params.stride, params.direction
    if max_length == 0:
        encoding.truncate(0, stride, direction)
        if pair is not None:
            pair.truncate(0, stride, direction)
        return encoding, pair
    total = len(encoding) + (len(pair) if pair is not None else 0)
    if total <= max_length:
        return encoding, pair
    to_remove = total - max_length
    if params.strategy == "longest_first":
        if pair is None:
            encoding.truncate(total - to_remove, stride, direction)
            return encoding, pair
        n1, n2 = len(encoding), len(pair)
        swap = n1 > n2
        if swap:
            n1, n2 = n2, n1
        n2 = n1 if n1 > max_length else max(n1, max_length - n1)
        if n1 + n2 > max_length:
            n1 = max_length // 2
            n2 = n1 + max_length % 2
        if swap:
            n1, n2 = n2, n1
        encoding.truncate(n1, stride, direction)
        pair.truncate(n2, stride, direction)
        return encoding, pair
    if params.strategy == "only_first":
        target = encoding
    else:
        if pair is None:
            raise TokvizError("Truncation strategy 'only_second' needs a pair of sequences, but only one was given.")
        target = pair
    if len(target) <= to_remove:
        raise TokvizError(
            f"Cannot truncate to {max_length} tokens with strategy {params.strategy!r}: the sequence it may "
            f"cut has only {len(target)} tokens but {to_remove} must go. Use 'longest_first' or a larger max_length."
        )
    target.truncate(len(target) - to_remove, stride, direction)
    return encoding, pair


def pad_encodings(encodings: list[Encoding], params: PaddingParams) -> None:
    """Pad every encoding to the batch's longest (or the fixed length), rounded up to the multiple."""
    if not encodings:
        return
    length = params.length if params.length is not None else max(len(e) for e in encodings)
    multiple = params.pad_to_multiple_of
    if multiple and length % multiple:
        length += multiple - length % multiple
    for encoding in encodings:
        encoding.pad(length, params.direction, params.pad_id, params.pad_type_id, params.pad_token)
