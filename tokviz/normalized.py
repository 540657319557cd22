"""A string that remembers, for every character, which original characters it came from.

Normalizers rewrite text (``'Héllo' -> 'hello'``) and pre-tokenizers cut it into words;
the app must still color the user's ORIGINAL characters. ``NormalizedString`` keeps the
original text, the normalized text and one alignment per normalized character: the
``(start, end)`` character span of the original it stands for (absolute offsets into the
full original text, even for a slice).

Every edit goes through one primitive, :meth:`NormalizedString.transform`, with Hugging
Face's semantics: the new text is given as ``(char, change)`` pairs read left to right
against the current text, where ``change`` is

- ``0``  the char replaces the current char (and takes its alignment),
- ``1``  the char is inserted (it takes the alignment of the char before it),
- ``-n`` the char replaces the current char and the ``n`` chars after it are removed.

``initial_offset`` chars are removed before the first pair. For example, lowercasing
``'İ'`` gives two chars, ``[('i', 0), ('\\u0307', 1)]``, both aligned to ``(0, 1)``.

>>> ns = NormalizedString("Héllo")
>>> ns.nfd().lowercase().filter(lambda c: c != "\\u0301")
NormalizedString(original="Héllo", normalized="hello")
>>> ns.alignments
[(0, 1), (1, 2), (2, 3), (3, 4), (4, 5)]
>>> [piece.normalized for piece in ns.split(" ", "removed")]
['hello']

``PreTokenizedString`` holds the pieces a pre-tokenizer cuts (:class:`Split`), each a
``NormalizedString`` that still points into the original.

Left out (HF has them): byte offsets (tokviz offsets are character offsets, as HF's Python
API reports them), ``Range::Original`` edits, and ``uppercase`` corner cases aside from
what ``str.upper`` does per character.
"""

from __future__ import annotations

import unicodedata
from dataclasses import dataclass
from functools import lru_cache
from typing import Callable, Iterable, Literal, Union

import regex

from tokviz.errors import TokvizError
from tokviz.models.base import Token
from tokviz.patterns import Matches, Regex, spans_to_matches

Alignment = tuple[int, int]
SplitDelimiterBehavior = Literal["removed", "isolated", "merged_with_previous", "merged_with_next", "contiguous"]
SPLIT_BEHAVIORS: tuple[str, ...] = ("removed", "isolated", "merged_with_previous", "merged_with_next", "contiguous")
#: What ``split`` and ``replace`` accept: a literal, a :class:`Regex`, or a char predicate.
Pattern = Union[str, Regex, Callable[[str], bool], "regex.Pattern"]

#: Unicode White_Space, what Rust's ``char::is_whitespace`` tests. Python's ``str.isspace``
#: also counts U+001C..U+001F, which HF does not treat as whitespace.
WHITESPACE = "\t\n\x0b\x0c\r \x85\xa0\u1680" + "".join(map(chr, range(0x2000, 0x200B))) + "\u2028\u2029\u202f\u205f\u3000"
_WHITESPACE_SET = frozenset(WHITESPACE)


def is_whitespace(char: str) -> bool:
    """Unicode White_Space: ``'\u3000' -> True``, ``'\x1f' -> False``."""
    return char in _WHITESPACE_SET


class SplitBehaviorError(TokvizError):
    """An unknown split behavior name."""


def normalize_behavior(behavior: str) -> str:
    """Accept HF's spellings: ``'merged_with_next'``, ``'MergedWithNext'`` -> ``'merged_with_next'``."""
    key = str(behavior).replace("_", "").replace("-", "").lower()
    for name in SPLIT_BEHAVIORS:
        if name.replace("_", "") == key:
            return name
    raise SplitBehaviorError(f"Unknown split behavior {behavior!r}; use one of {', '.join(SPLIT_BEHAVIORS)}.")


def find_matches(pattern: Pattern, text: str) -> Matches:
    """Cover ``text`` with ``((start, end), is_match)`` pieces, like HF's ``Pattern::find_matches``.

    A literal matches non-overlapping occurrences left to right (an empty literal matches
    nothing); a callable matches single characters.

    >>> find_matches("ab", "xabab")
    [((0, 1), False), ((1, 3), True), ((3, 5), True)]
    >>> find_matches(str.isdigit, "a12")
    [((0, 1), False), ((1, 2), True), ((2, 3), True)]
    """
    if isinstance(pattern, Regex):
        return pattern.find_matches(text)
    if isinstance(pattern, regex.Pattern):
        # A built-in pattern (GPT-2's, ``\\w+|[^\\w\\s]+``): trusted, so no time limit.
        return spans_to_matches([match.span() for match in pattern.finditer(text)], len(text))
    if isinstance(pattern, str):
        if not pattern:
            return [((0, len(text)), False)]
        spans = []
        start = text.find(pattern)
        while start != -1:
            spans.append((start, start + len(pattern)))
            start = text.find(pattern, start + len(pattern))
        return spans_to_matches(spans, len(text))
    if callable(pattern):
        return spans_to_matches(_predicate_spans(pattern, text), len(text))
    raise TypeError(f"A pattern must be a str, a Regex or a function of one character, not {type(pattern).__name__}")


def _predicate_spans(predicate: Callable[[str], bool], text: str) -> list[tuple[int, int]]:
    """One ``(i, i + 1)`` per char where ``predicate`` holds. On long texts the predicate
    runs once per distinct char and a C-level character class finds the positions."""
    if len(text) < 256:
        return [(i, i + 1) for i, char in enumerate(text) if predicate(char)]
    hits = [char for char in set(text) if predicate(char)]
    if not hits:
        return []
    char_class = regex.compile("[" + "".join(regex.escape(char, special_only=False) for char in hits) + "]")
    return [match.span() for match in char_class.finditer(text)]


def invert_matches(matches: Matches) -> Matches:
    """Swap matches and gaps (HF's ``Invert(pattern)``), used by ``Split(invert=True)``."""
    return [(offsets, not is_match) for offsets, is_match in matches]


def apply_behavior(matches: Matches, behavior: str) -> list[tuple[int, int]]:
    """The ranges to keep after splitting on ``matches`` with ``behavior``.

    >>> m = [((0, 1), False), ((1, 2), True), ((2, 3), False)]   # "a-b" split on "-"
    >>> [apply_behavior(m, b) for b in ("removed", "isolated", "merged_with_previous")]
    [[(0, 1), (2, 3)], [(0, 1), (1, 2), (2, 3)], [(0, 2), (2, 3)]]
    >>> [apply_behavior(m, b) for b in ("merged_with_next", "contiguous")]
    [[(0, 1), (1, 3)], [(0, 1), (1, 2), (2, 3)]]
    """
    behavior = normalize_behavior(behavior)
    if behavior == "removed":
        return [offsets for offsets, is_match in matches if not is_match]
    if behavior == "isolated":
        return [offsets for offsets, _ in matches]
    ranges: list[list[int]] = []
    previous_match = False
    if behavior == "merged_with_previous":
        # A match glues onto the piece before it (unless that piece was a match too).
        for (start, end), is_match in matches:
            if is_match and not previous_match and ranges:
                ranges[-1][1] = end
            else:
                ranges.append([start, end])
            previous_match = is_match
    elif behavior == "merged_with_next":
        # Same walk from the right: a match glues onto the piece after it.
        for (start, end), is_match in reversed(matches):
            if is_match and not previous_match and ranges:
                ranges[-1][0] = start
            else:
                ranges.append([start, end])
            previous_match = is_match
        ranges.reverse()
    else:  # contiguous: runs of matches become one piece; HF starts with previous_match=False
        for (start, end), is_match in matches:
            if is_match == previous_match and ranges:
                ranges[-1][1] = end
            else:
                ranges.append([start, end])
            previous_match = is_match
    return [(start, end) for start, end in ranges]


def _canonical_decomposition_changes(text: str, form: str) -> list[tuple[str, int]]:
    """``(char, change)`` pairs of the NFD/NFKD of ``text`` as HF's: each char's first decomposed
    char replaces it, the rest are inserted; reordering moves a mark with its change.

    >>> _canonical_decomposition_changes("Å", "NFD")
    [('A', 0), ('̊', 1)]
    """
    pairs: list[tuple[str, int]] = []
    for char in text:
        decomposed = _decompose_char(char, form)
        pairs.append((decomposed[0], 0))
        pairs.extend((mark, 1) for mark in decomposed[1:])
    # Canonical ordering: stable sort of every run of non-starters by combining class.
    index = 0
    while index < len(pairs):
        if unicodedata.combining(pairs[index][0]) == 0:
            index += 1
            continue
        run_end = index
        while run_end < len(pairs) and unicodedata.combining(pairs[run_end][0]) != 0:
            run_end += 1
        pairs[index:run_end] = sorted(pairs[index:run_end], key=lambda pair: unicodedata.combining(pair[0]))
        index = run_end
    return pairs


@lru_cache(maxsize=65536)
def _decompose_char(char: str, form: str) -> str:
    return unicodedata.normalize(form, char)


@lru_cache(maxsize=65536)
def _compose_pair(starter: str, mark: str) -> str | None:
    """The primary composite of two chars, or None: ``('e', '\\u0301') -> 'é'``."""
    composed = unicodedata.normalize("NFC", starter + mark)
    return composed if len(composed) == 1 else None


def _composition_changes(pairs: list[tuple[str, int]]) -> list[tuple[str, int]]:
    """Canonically compose decomposed ``(char, change)`` pairs, keeping the changes exact.

    A composite replaces its starter; each mark it absorbs adds ``change - 1`` to the
    starter's change (an original mark counts as removed, an inserted one cancels out), as HF's.

    >>> _composition_changes([("e", 0), ("\u0301", 0), ("a", 0)])
    [('é', -1), ('a', 0)]
    >>> _composition_changes([("A", 0), ("\u030a", 1)])   # 'Å' decomposed and recomposed
    [('Å', 0)]
    """
    output: list[list] = []  # [char, change]
    starter_index: int | None = None
    last_class: int | None = None  # class of the last uncomposed char after the starter
    for char, change in pairs:
        char_class = unicodedata.combining(char)
        if starter_index is not None and (last_class is None or last_class < char_class):
            composite = _compose_pair(output[starter_index][0], char)
            if composite is not None:
                output[starter_index][0] = composite
                output[starter_index][1] += change - 1
                continue
        if char_class == 0:
            starter_index = len(output)
            last_class = None
        else:
            last_class = char_class
        output.append([char, change])
    return [(char, change) for char, change in output]


class NormalizedString:
    """Original text, normalized text, and one original span per normalized char.

    ``alignments[i]`` is the ``(start, end)`` of the original text (absolute character
    offsets, even in a slice) that normalized char ``i`` stands for. A slice keeps
    ``original`` as just its own part of the text and ``original_shift`` as where that part
    starts, like HF.

    >>> ns = NormalizedString("ﬁne")
    >>> ns.nfkc().normalized, ns.alignments
    ('fine', [(0, 1), (0, 1), (1, 2), (2, 3)])
    """

    __slots__ = ("original", "normalized", "alignments", "original_shift")

    def __init__(self, text: str = "", *, original_shift: int = 0) -> None:
        if not isinstance(text, str):
            raise TypeError(f"NormalizedString takes a str, not {type(text).__name__}")
        self.original: str = text
        self.normalized: str = text
        self.alignments: list[Alignment] = [(original_shift + i, original_shift + i + 1) for i in range(len(text))]
        self.original_shift: int = original_shift

    @classmethod
    def _from_parts(cls, original: str, normalized: str, alignments: list[Alignment], original_shift: int) -> NormalizedString:
        ns = cls.__new__(cls)
        ns.original = original
        ns.normalized = normalized
        ns.alignments = alignments
        ns.original_shift = original_shift
        return ns

    # ----------------------------------------------------------------- reading
    def __len__(self) -> int:
        return len(self.normalized)

    def __repr__(self) -> str:  # HF's: strings between double quotes
        return f'NormalizedString(original="{self.original}", normalized="{self.normalized}")'

    def __str__(self) -> str:
        return self.normalized

    def __getitem__(self, key: slice) -> NormalizedString | None:
        """HF's ``normalized[i:j]``: :meth:`slice` with Python's slice bounds (step 1 only)."""
        start, stop, _ = key.indices(len(self.normalized))
        return self.slice(start, stop)

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, NormalizedString):
            return NotImplemented
        return (self.original, self.normalized, self.alignments, self.original_shift) == (
            other.original,
            other.normalized,
            other.alignments,
            other.original_shift,
        )

    __hash__ = None  # mutable

    def get(self) -> str:
        return self.normalized

    def is_empty(self) -> bool:
        return not self.normalized

    def offsets_original(self) -> tuple[int, int]:
        """Where this piece sits in the full original text: ``(shift, shift + len(original))``."""
        return (self.original_shift, self.original_shift + len(self.original))

    def copy(self) -> NormalizedString:
        return NormalizedString._from_parts(self.original, self.normalized, list(self.alignments), self.original_shift)

    def convert_offsets_to_original(self, start: int, end: int) -> tuple[int, int] | None:
        """The original span (absolute) of normalized chars ``start..end``, HF's rules:

        an empty range maps to itself (shifted to absolute), a reversed or out-of-range one
        to ``None``, otherwise from the first char's start to the last char's end.

        >>> ns = NormalizedString("a b"); _ = ns.replace(" ", "__")
        >>> ns.normalized, ns.convert_offsets_to_original(1, 3), ns.convert_offsets_to_original(2, 2)
        ('a__b', (1, 2), (2, 2))
        """
        if start == end:
            return (self.original_shift + start, self.original_shift + end)
        if start > end or start < 0 or end > len(self.normalized):
            return None
        return (self.alignments[start][0], self.alignments[end - 1][1])

    def slice(self, start: int, end: int) -> NormalizedString | None:
        """The normalized chars ``start..end`` as their own NormalizedString, still aligned.

        >>> NormalizedString("Hello world").slice(6, 11).offsets_original()
        (6, 11)
        """
        original_range = self.convert_offsets_to_original(start, end)
        if original_range is None:
            return None
        original_start, original_end = original_range
        local_start = original_start - self.original_shift
        local_end = original_end - self.original_shift
        return NormalizedString._from_parts(
            self.original[local_start:local_end],
            self.normalized[start:end],
            self.alignments[start:end],
            original_start,
        )

    # ----------------------------------------------------------------- the primitive
    def transform_range(self, start: int, end: int, changes: Iterable[tuple[str, int]], initial_offset: int = 0) -> NormalizedString:
        """Replace normalized chars ``start..end`` by ``changes`` (see the module docstring)."""
        old_alignments = self.alignments
        position = start + initial_offset
        new_chars: list[str] = []
        new_alignments: list[Alignment] = []
        empty_alignment = (self.original_shift, self.original_shift)
        for char, change in changes:
            if change > 0:
                # Inserted: shares the alignment of the char before it.
                alignment = old_alignments[position - 1] if position >= 1 else empty_alignment
            else:
                alignment = old_alignments[position]
                position += 1 - change  # this char, plus the -change removed after it
            new_chars.append(char)
            new_alignments.append(alignment)
        self.alignments = old_alignments[:start] + new_alignments + old_alignments[end:]
        self.normalized = self.normalized[:start] + "".join(new_chars) + self.normalized[end:]
        return self

    def transform(self, changes: Iterable[tuple[str, int]], initial_offset: int = 0) -> NormalizedString:
        """Rewrite the whole normalized text, HF's ``transform``.

        >>> ns = NormalizedString("abc")
        >>> ns.transform([("x", 0), ("y", 1), ("c", -0)], initial_offset=1).alignments
        [(1, 2), (1, 2), (2, 3)]
        """
        return self.transform_range(0, len(self.normalized), changes, initial_offset)

    def transform_same_length(self, text: str) -> NormalizedString:
        """``transform`` with every change 0: char ``i`` becomes ``text[i]``, alignments
        unchanged. A shortcut for the common case (byte-level on ASCII words).

        >>> NormalizedString(" ab").transform_same_length("Ġab").alignments
        [(0, 1), (1, 2), (2, 3)]
        """
        if len(text) != len(self.normalized):
            raise ValueError("transform_same_length needs exactly one new char per char")
        self.normalized = text
        return self

    # ----------------------------------------------------------------- operations
    def _unicode_normalize(self, form: str) -> NormalizedString:
        if unicodedata.is_normalized(form, self.normalized):
            return self
        decomposition = "NFKD" if form in ("NFKD", "NFKC") else "NFD"
        changes = _canonical_decomposition_changes(self.normalized, decomposition)
        if form in ("NFC", "NFKC"):
            changes = _composition_changes(changes)
        return self.transform(changes)

    def nfd(self) -> NormalizedString:
        return self._unicode_normalize("NFD")

    def nfkd(self) -> NormalizedString:
        return self._unicode_normalize("NFKD")

    def nfc(self) -> NormalizedString:
        return self._unicode_normalize("NFC")

    def nfkc(self) -> NormalizedString:
        return self._unicode_normalize("NFKC")

    def map(self, fn: Callable[[str], str]) -> NormalizedString:
        """Replace each char by ``fn(char)`` (one char in, one char out)."""
        return self.transform((fn(char), 0) for char in self.normalized)

    def for_each(self, fn: Callable[[str], None]) -> NormalizedString:
        for char in self.normalized:
            fn(char)
        return self

    def expand_chars(self, fn: Callable[[str], str]) -> NormalizedString:
        """Replace each char by the chars of ``fn(char)``: the first replaces it, the others are
        inserted after it (all aligned to it).

        >>> NormalizedString("İa").expand_chars(str.lower).alignments
        [(0, 1), (0, 1), (1, 2)]
        """
        changes: list[tuple[str, int]] = []
        for char in self.normalized:
            expanded = fn(char)
            changes.extend((new_char, 1 if i else 0) for i, new_char in enumerate(expanded))
        return self.transform(changes)

    def lowercase(self) -> NormalizedString:
        """Lowercase char by char ('İ' gives two chars; 'Σ' is always 'σ', like Rust)."""
        return self.expand_chars(str.lower)

    def uppercase(self) -> NormalizedString:
        return self.expand_chars(str.upper)

    def filter(self, keep: Callable[[str], bool]) -> NormalizedString:
        """Keep the chars for which ``keep`` is true; a removed char counts as removed
        after the kept char before it (or before the first kept char).

        >>> ns = NormalizedString("a--b"); ns.filter(lambda c: c != "-").alignments
        [(0, 1), (3, 4)]
        """
        changes: list[tuple[str, int]] = []
        removed = 0
        leading_removed = 0
        last_kept: str | None = None
        for char in self.normalized:
            if keep(char):
                if last_kept is None:
                    leading_removed = removed
                else:
                    changes.append((last_kept, -removed))
                last_kept = char
                removed = 0
            else:
                removed += 1
        if last_kept is not None:
            changes.append((last_kept, -removed))
        else:
            leading_removed = removed
        return self.transform(changes, leading_removed)

    def prepend(self, text: str) -> NormalizedString:
        """Insert ``text`` before the first char; it takes that char's alignment. No-op when empty."""
        if self.normalized and text:
            first = self.normalized[0]
            changes = [(char, 1 if i else 0) for i, char in enumerate(text)] + [(first, 1)]
            self.transform_range(0, 1, changes)
        return self

    def append(self, text: str) -> NormalizedString:
        """Insert ``text`` after the last char; it takes that char's alignment. Unlike
        ``prepend``, HF also appends to an empty text (aligned to the empty span at its start)."""
        if not text:
            return self
        if self.normalized:
            last_index = len(self.normalized) - 1
            changes = [(self.normalized[last_index], 0)] + [(char, 1) for char in text]
            self.transform_range(last_index, len(self.normalized), changes)
        else:
            self.transform([(char, 1) for char in text])
        return self

    def replace(self, pattern: Pattern, content: str) -> NormalizedString:
        """Replace every match of ``pattern`` by ``content``; the new chars take the
        alignment of the last matched char (HF inserts them after removing the match).

        The result is exactly that of one ``transform_range(start, end, ((c, 1) for c in
        content), end - start)`` per match, as HF does it, but built in one pass: a text
        with thousands of matches (every space, for Metaspace-like Replace) stays linear.

        >>> ns = NormalizedString("a b"); ns.replace(" ", "▁").alignments
        [(0, 1), (1, 2), (2, 3)]
        """
        text, old_alignments = self.normalized, self.alignments
        empty_alignment = (self.original_shift, self.original_shift)
        new_text: list[str] = []
        new_alignments: list[Alignment] = []
        for (start, end), is_match in find_matches(pattern, text):
            if not is_match:
                new_text.append(text[start:end])
                new_alignments.extend(old_alignments[start:end])
            elif content:
                # Inserted after the removed match: aligned like the char before the insertion point.
                anchor = old_alignments[end - 1] if end >= 1 else empty_alignment
                new_text.append(content)
                new_alignments.extend([anchor] * len(content))
        self.normalized = "".join(new_text)
        self.alignments = new_alignments
        return self

    def _strip(self, left: bool, right: bool) -> NormalizedString:
        text = self.normalized
        leading = len(text) - len(text.lstrip(WHITESPACE)) if left else 0
        trailing = len(text) - len(text.rstrip(WHITESPACE)) if right else 0
        if leading == len(text):
            trailing = 0
        if leading or trailing:
            kept = text[leading : len(text) - trailing]
            changes = [(char, 0) for char in kept]
            if changes and trailing:
                changes[-1] = (changes[-1][0], -trailing)
            self.transform(changes, leading)
        return self

    def strip(self) -> NormalizedString:
        return self._strip(True, True)

    def lstrip(self) -> NormalizedString:
        return self._strip(True, False)

    def rstrip(self) -> NormalizedString:
        return self._strip(False, True)

    def clear(self) -> int:
        """Remove every char; returns how many were removed."""
        length = len(self.normalized)
        self.transform([], length)
        return length

    def split(self, pattern: Pattern, behavior: str, *, invert: bool = False) -> list[NormalizedString]:
        """Cut on ``pattern`` with one of the five behaviors; each piece keeps its alignment.
        ``invert=True`` cuts on what does NOT match (HF's ``Invert(pattern)``).

        >>> [p.normalized for p in NormalizedString("the-final--countdown").split("-", "merged_with_next")]
        ['the', '-final', '-', '-countdown']
        """
        matches = find_matches(pattern, self.normalized)
        if invert:
            matches = invert_matches(matches)
        ranges = apply_behavior(matches, behavior)
        return [self.slice(start, end) for start, end in ranges]


@dataclass(frozen=True, slots=True)
class Split:
    """One piece of a pre-tokenized string, and its tokens once a model has run."""

    normalized: NormalizedString
    tokens: list[Token] | None = None


OffsetReferential = Literal["original", "normalized"]


class PreTokenizedString:
    """A text cut into pieces by pre-tokenizers, each piece aligned to the original.

    >>> pts = PreTokenizedString("Hello world")
    >>> pts.split(lambda i, ns: ns.split(" ", "removed"))
    >>> pts.get_splits()
    [('Hello', (0, 5), None), ('world', (6, 11), None)]
    """

    __slots__ = ("original", "splits")

    def __init__(self, text_or_normalized: str | NormalizedString) -> None:
        if isinstance(text_or_normalized, NormalizedString):
            normalized = text_or_normalized
        elif isinstance(text_or_normalized, str):
            normalized = NormalizedString(text_or_normalized)
        else:
            raise TypeError(f"PreTokenizedString takes a str or a NormalizedString, not {type(text_or_normalized).__name__}")
        self.original: str = normalized.original
        self.splits: list[Split] = [Split(normalized)]

    def __repr__(self) -> str:
        return f"PreTokenizedString(original={self.original!r}, splits={[s.normalized.normalized for s in self.splits]!r})"

    def split(self, split_fn: Callable[[int, NormalizedString], Iterable[NormalizedString]]) -> None:
        """Replace every untokenized piece by the pieces ``split_fn`` returns; empty ones are dropped."""
        new_splits: list[Split] = []
        for index, piece in enumerate(self.splits):
            if piece.tokens is not None:
                new_splits.append(piece)
                continue
            for sub_piece in split_fn(index, piece.normalized):
                if sub_piece is not None and not sub_piece.is_empty():
                    new_splits.append(Split(sub_piece))
        self.splits = new_splits

    def normalize(self, normalize_fn: Callable[[NormalizedString], object]) -> None:
        """Run ``normalize_fn`` in place on every untokenized piece."""
        for piece in self.splits:
            if piece.tokens is None:
                normalize_fn(piece.normalized)

    def tokenize(self, tokenize_fn: Callable[[NormalizedString], list[Token]]) -> None:
        """Attach ``tokenize_fn(piece)`` to every untokenized piece."""
        self.splits = [
            Split(piece.normalized, list(tokenize_fn(piece.normalized))) if piece.tokens is None else piece
            for piece in self.splits
        ]

    def get_splits(
        self, offset_referential: OffsetReferential = "original", offset_type: str = "char"
    ) -> list[tuple[str, tuple[int, int], list[Token] | None]]:
        """``(text, (start, end), tokens)`` per piece, in character (default) or UTF-8 byte
        (``offset_type="byte"``) offsets of the original text (default) or of the concatenated
        normalized pieces.

        >>> from tokviz.pre_tokenizers import Whitespace
        >>> pretok = PreTokenizedString("café au lait")
        >>> Whitespace().pre_tokenize(pretok)
        >>> [offsets for _, offsets, _ in pretok.get_splits(offset_type="byte")]
        [(0, 5), (6, 8), (9, 13)]
        >>> [offsets for _, offsets, _ in pretok.get_splits()]
        [(0, 4), (5, 7), (8, 12)]

        The "normalized" offsets differ from HF's Python API on purpose: HF converts normalized
        byte offsets through the original's char map (ByteLevel on 'Hello world': (0, 7), (7, 9)
        for 'ĠHello', 'Ġworld'); tokviz reports (0, 6), (6, 12).
        """
        if offset_type not in ("char", "byte"):
            raise TokvizError(f"Unknown offset type {offset_type!r}; use 'char' or 'byte'.")
        in_bytes = offset_type == "byte"
        result: list[tuple[str, tuple[int, int], list[Token] | None]] = []
        if offset_referential == "original":
            original = self.original
            for piece in self.splits:
                start, end = piece.normalized.offsets_original()
                if in_bytes:  # UTF-8 byte positions in the original text
                    start = len(original[:start].encode("utf-8"))
                    end = start + len(original[piece.normalized.offsets_original()[0]:end].encode("utf-8"))
                result.append((piece.normalized.normalized, (start, end), piece.tokens))
        elif offset_referential == "normalized":
            position = 0
            for piece in self.splits:
                text = piece.normalized.normalized
                length = len(text.encode("utf-8")) if in_bytes else len(text)
                result.append((text, (position, position + length), piece.tokens))
                position += length
        else:
            raise TokvizError(f"Unknown offset referential {offset_referential!r}; use 'original' or 'normalized'.")
        return result
