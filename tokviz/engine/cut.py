"""The engine's general lane: cut the text where the pre-tokenizer says, encode each word with
the model, and assemble the fields -- for any pipeline whose components answer the engine's
questions, whatever their class.

The questions (each component answers for itself):

- normalizer: ``steps()`` and ``aligned_if_unchanged`` -- a text that every step returns
  unchanged keeps the identity alignment, so no :class:`~tokviz.normalized.NormalizedString`
  is built for it (alignments are computed only where a normalizer changes the text);
- pre-tokenizer: ``cut_spans(text)`` -- where it cuts, when it only cuts;
- model: ``tokenize(word)`` -- how to encode one piece (each model keeps its own word cache).

With added tokens cut out first (raw ones before normalizing, normalized ones after), this
gives HF's ids, offsets and word ids. Where a normalizer does change a segment of text (between
added tokens), that segment alone is normalized with its alignments (a NormalizedString) and
each token's original span is read from them.

>>> from tokviz.models import WordLevel
>>> from tokviz.pre_tokenizers import Whitespace
>>> from tokviz.added_vocabulary import AddedVocabulary
>>> plan = cut_plan(None, Whitespace(), WordLevel({"hi": 0, "you": 1, "[UNK]": 2}, unk_token="[UNK]"))
>>> encoding = encode_cut(plan, AddedVocabulary(), "hi  you!", 0, None)
>>> encoding.ids, encoding.offsets, encoding.word_ids
([0, 1, 2], [(0, 2), (4, 7), (7, 8)], [0, 1, 2])

Left out: pre-tokenizers that change the text (ByteLevel and Metaspace have the chunk lanes of
:mod:`tokviz.engine.chunks` and :mod:`tokviz.engine.byte_level`), and a token covering no char
in a segment the normalizer changed (the general path does that sequence).
"""

from __future__ import annotations

from itertools import chain, repeat
from operator import add, itemgetter
from typing import Any, Callable

from tokviz.encoding import Encoding
from tokviz.normalized import NormalizedString
from tokviz.engine.bpe import bpe_word_encoder, word_pieces
from tokviz.engine.unigram import unigram_word_encoder
from tokviz.engine.wordpiece import wordlevel_word_encoder, wordpiece_word_encoder

Spans = list[tuple[int, int]]


#: Words kept per plan before its cache starts again (a bound on memory for endless new text).
MAX_CACHED_WORDS = 200_000


class CutPlan:
    """What :func:`encode_cut` needs of the components, asked once, and its word cache:
    ``word -> (ids, values, offsets in the word)`` while the model is deterministic; emptied
    when the model's own caches are (by :class:`tokviz.engine.plans.EnginePlans`)."""

    __slots__ = ("steps", "normalize_steps", "normalize", "by_lines", "cut", "model", "encoder", "words", "pieces")

    def __init__(
        self, normalize_steps: tuple[Callable[[str], str], ...], cut: Callable[[str], Spans] | None, model: Any, encoder: Any = None
    ) -> None:
        self.normalize_steps = normalize_steps  # each step's normalize_str
        self.steps: tuple[Any, ...] = ()  # the normalizer's steps themselves
        #: The normalizer's in-place normalize (with alignments), for a text it changes.
        self.normalize: Callable[[Any], None] | None = None
        #: Every step is local to lines (normalizers' ``local_to_lines``): align changed lines only.
        self.by_lines = False
        self.cut = cut  # None: no pre-tokenizer, a piece is one word
        self.model = model
        #: The model's word encoder (``word -> (ids, values, starts, ends)`` or None for a word it
        #: leaves to ``model.tokenize``): BPE's, WordPiece's or Unigram's, no Token objects.
        self.encoder = encoder
        self.words: dict[str, tuple[Any, ...]] | None = {} if model.deterministic else None
        #: ``word -> pieces`` where the model never merges across (:func:`~tokviz.engine.bpe.word_pieces`),
        #: made at the first long word; False when the model offers none.
        self.pieces: Any = None


def word_encoder(model: Any) -> Any:
    """The engine's word encoder for the kind of tables the model declares (``word_tables()``:
    BPE, WordPiece, WordLevel or Unigram), or None (the engine then calls ``model.tokenize``)."""
    return bpe_word_encoder(model) or wordpiece_word_encoder(model) or unigram_word_encoder(model) or wordlevel_word_encoder(model)


def cut_plan(normalizer: Any, pre_tokenizer: Any, model: Any, encoder: Any = None) -> CutPlan | None:
    """The plan for these components, or None when one of them does not answer. ``encoder``:
    the model's word encoder when the tokenizer has one made already (its chunk plan's: one
    set of tables and proofs), else the engine makes it for a deterministic model."""
    steps = () if normalizer is None else normalizer.steps()
    if not all(getattr(step, "aligned_if_unchanged", False) for step in steps):
        return None
    cut = None
    if pre_tokenizer is not None:
        if getattr(pre_tokenizer, "cut_spans", None) is None or pre_tokenizer.cut_spans("a b") is None:
            return None
        cut = pre_tokenizer.cut_spans
    if not hasattr(model, "deterministic"):
        return None
    if encoder is None and model.deterministic:
        encoder = word_encoder(model)
    plan = CutPlan(tuple(step.normalize_str for step in steps), cut, model, encoder if model.deterministic else None)
    plan.normalize = normalizer.normalize if normalizer is not None else None
    plan.steps = tuple(steps)
    plan.by_lines = all(getattr(step, "local_to_lines", False) for step in steps)
    return plan


#: Words longer than this are merged piece by piece where the model allows it (a whole Llama line
#: is one word: its pieces recur across lines, the line does not).
PIECES_FROM = 32


def _pieces_fields(plan: CutPlan, word: str) -> tuple[Any, ...] | None:
    """A long word's fields as its pieces' fields side by side (each piece from the cache or
    merged once), or None when the model offers no pieces or the word is one."""
    if plan.pieces is None:
        plan.pieces = (word_pieces(plan.model) if plan.words is not None else None) or False
    pieces = plan.pieces(word) if plan.pieces else ()
    if len(pieces) < 2:
        return None
    ids: list[int] = []
    values: list[str] = []
    starts: list[int] = []
    ends: list[int] = []
    position = 0
    for piece in pieces:
        piece_ids, piece_values, piece_starts, piece_ends, _ = _word_fields(plan, piece)
        ids.extend(piece_ids)
        values.extend(piece_values)
        starts.extend([start + position for start in piece_starts])
        ends.extend([end + position for end in piece_ends])
        position += len(piece)
    if position != len(word):
        return None  # (the pieces must tile the word)
    return tuple(ids), tuple(values), tuple(starts), tuple(ends), False


def _word_fields(plan: CutPlan, word: str) -> tuple[Any, ...]:
    """``(ids, values, starts, ends, whole)`` of one word (offsets in the word; ``whole``: one
    token covering it), from the plan's cache or the model's word encoder (or ``tokenize``);
    a long word piece by piece (:func:`_pieces_fields`), only its pieces cached."""
    words = plan.words
    if words is not None:
        fields = words.get(word)
        if fields is not None:
            return fields
    if len(word) > PIECES_FROM and plan.pieces is not False:
        fields = _pieces_fields(plan, word)
        if fields is not None:
            if words is not None:
                words[word] = fields  # (a text encoded again finds it whole)
            return fields
    encoded = plan.encoder(word) if plan.encoder is not None else None
    if encoded is not None:
        ids, values, starts, ends = encoded
    else:
        tokens = plan.model.tokenize(word)
        ids = tuple([token.id for token in tokens])
        values = tuple([token.value for token in tokens])
        starts = tuple([token.offsets[0] for token in tokens])
        ends = tuple([token.offsets[1] for token in tokens])
    fields = (ids, values, starts, ends, len(ids) == 1 and starts[0] == 0 and ends[0] == len(word))
    if words is not None:
        if len(words) >= MAX_CACHED_WORDS:
            words.clear()
        words[word] = fields
    return fields


_IDS, _VALUES, _STARTS, _ENDS, _WHOLE = (itemgetter(index) for index in range(5))
_FIRST = itemgetter(0)
_SECOND = itemgetter(1)


def added_pieces(added: Any, sequence: str) -> list[tuple[int | None, int, int]]:
    """Raw then normalized added-token matching on a text no normalizer changes: ``(token id or
    None, start, end)`` per non-empty piece."""
    pieces: list[tuple[int | None, int, int]] = []
    raw, normalized = added.has_matchers()
    first_pass = added.find_matches(sequence, False) if raw else [(None, (0, len(sequence)))]
    for token_id, (start, end) in first_pass:
        if start == end:
            continue
        if token_id is not None or not normalized:
            pieces.append((token_id, start, end))
            continue
        for inner_id, (inner_start, inner_end) in added.find_matches(sequence[start:end], True):
            if inner_start != inner_end:
                pieces.append((inner_id, start + inner_start, start + inner_end))
    return pieces


def _one_for_one(steps: tuple[Any, ...], text: str) -> tuple[str, list[tuple[int, int]]] | None:
    """The segment normalized and its alignments without a NormalizedString, when every step
    declares what it does here (Llama's Prepend then Replace(" ", "▁"), or a step's
    ``ascii_one_for_one`` answer): each char stays one char, and prepended chars take the first
    char's span. None when a step does not say.

    >>> from tokviz.normalizers import Prepend, Replace
    >>> _one_for_one((Prepend("▁"), Replace(" ", "▁")), "a b")
    ('▁a▁b', [(0, 1), (0, 1), (1, 2), (2, 3)])
    """
    prefix = 0
    for step in steps:
        if step.prepends:
            if text:
                text = step.prepend + text
                prefix += len(step.prepend)
        elif step.replaces and type(step.pattern) is str and len(step.pattern) == 1 and len(step.content) == 1:
            text = text.replace(step.pattern, step.content)
        else:
            new = step.ascii_one_for_one(text) if text.isascii() else None
            if type(new) is not str:
                return None
            text = new
    size = len(text) - prefix
    return text, [(0, 1)] * prefix + list(zip(range(size), range(1, size + 1)))


def _normalized_with_alignments(plan: CutPlan, text: str) -> tuple[str, list[tuple[int, int]]]:
    """The segment normalized, and each normalized char's original span in it: in one step
    when every step answers :func:`_one_for_one`; when every step is local to lines, only the
    lines it changes are normalized with alignments (the others keep theirs, built in C); else
    the whole segment."""
    cheap = _one_for_one(plan.steps, text)
    if cheap is not None:
        return cheap
    if not plan.by_lines:
        normalized = NormalizedString(text)
        plan.normalize(normalized)
        return normalized.normalized, normalized.alignments
    steps = plan.normalize_steps
    parts: list[str] = []
    alignments: list[tuple[int, int]] = []
    position = 0
    for line in text.splitlines(keepends=True):
        end = position + len(line)
        if all(step(line) == line for step in steps):
            parts.append(line)
            alignments.extend(zip(range(position, end), range(position + 1, end + 1)))
        else:
            normalized = NormalizedString(line, original_shift=position)
            plan.normalize(normalized)
            parts.append(normalized.normalized)
            alignments.extend(normalized.alignments)
        position = end
    return "".join(parts), alignments


def _aligned_segment(
    plan: CutPlan, added: Any, has_normalized: bool, text: str, start: int, word: int,
    ids: list[int], tokens: list[str], offsets: list[tuple[int, int]], words: list[int | None],
) -> int | None:
    """A segment the normalizer changes, normalized with its alignments (a NormalizedString of
    this segment only), cut and encoded like the others; each token's original span comes from
    the alignments of its first and last chars, as HF converts offsets. Returns the last word
    index used, or None for what only the general path does (a token of no char)."""
    norm_text, alignments = _normalized_with_alignments(plan, text)
    cut = plan.cut
    pieces = added.find_matches(norm_text, True) if has_normalized else ((None, (0, len(norm_text))),)
    for piece_id, (piece_start, piece_end) in pieces:
        if piece_start == piece_end:
            continue
        piece = norm_text[piece_start:piece_end]
        if piece_id is not None:
            word += 1
            ids.append(piece_id)
            tokens.append(piece)
            offsets.append((start + alignments[piece_start][0], start + alignments[piece_end - 1][1]))
            words.append(word)
            continue
        for word_start, word_end in cut(piece) if cut is not None else ((0, len(piece)),):
            word += 1
            text_of_word = piece[word_start:word_end]
            word_ids, values, starts, ends, _ = _word_fields(plan, text_of_word)
            shift = piece_start + word_start
            for token_id, value, token_start, token_end in zip(word_ids, values, starts, ends):
                if token_start >= token_end:
                    return None
                ids.append(token_id)
                tokens.append(value)
                offsets.append((start + alignments[shift + token_start][0], start + alignments[shift + token_end - 1][1]))
                words.append(word)
    return word


def encode_cut(plan: CutPlan, added: Any, sequence: str, type_id: int, word_index: int | None) -> Encoding | None:
    """The sequence's Encoding before post-processing, or None when only the general path can
    make it (see :func:`_aligned_segment`)."""
    has_raw, has_normalized = added.has_matchers()
    segments = added.find_matches(sequence, False) if has_raw else ((None, (0, len(sequence))),)
    steps = plan.normalize_steps
    cut = plan.cut
    cached = plan.words.get if plan.words is not None else {}.get
    ids: list[int] = []
    tokens: list[str] = []
    offsets: list[tuple[int, int]] = []
    words: list[int | None] = []
    word = -1
    for token_id, (start, end) in segments:
        if start == end:
            continue
        text = sequence[start:end]
        if token_id is not None:
            word += 1
            ids.append(token_id)
            tokens.append(text)
            offsets.append((start, end))
            words.append(word)
            continue
        if any(step(text) != text for step in steps):
            # The normalizer changes this segment: its alignments, for it alone.
            word = _aligned_segment(plan, added, has_normalized, text, start, word, ids, tokens, offsets, words)
            if word is None:
                return None
            continue
        pieces = added.find_matches(text, True) if has_normalized else ((None, (0, end - start)),)
        for piece_id, (piece_start, piece_end) in pieces:
            if piece_start == piece_end:
                continue
            base = start + piece_start
            piece = text[piece_start:piece_end]
            if piece_id is not None:
                word += 1
                ids.append(piece_id)
                tokens.append(piece)
                offsets.append((base, base + len(piece)))
                words.append(word)
                continue
            spans = cut(piece) if cut is not None else ((0, len(piece)),)
            if not spans:
                continue
            texts = [piece[word_start:word_end] for word_start, word_end in spans]
            entries = list(map(cached, texts))
            if None in entries:
                for position, entry in enumerate(entries):
                    if entry is None:
                        entries[position] = cached(texts[position]) or _word_fields(plan, texts[position])
            # The fields of every word at once, in C (map / chain), no Python loop per token.
            ids.extend(chain.from_iterable(map(_IDS, entries)))
            tokens.extend(chain.from_iterable(map(_VALUES, entries)))
            first_word = word + 1
            word += len(entries)
            if all(map(_WHOLE, entries)):  # one token a word (most words): the word's span
                offsets.extend(zip(map(add, map(_FIRST, spans), repeat(base)), map(add, map(_SECOND, spans), repeat(base))))
                words.extend(range(first_word, word + 1))
            else:
                counts = list(map(len, map(_IDS, entries)))
                shifts = list(chain.from_iterable(map(repeat, map(add, map(_FIRST, spans), repeat(base)), counts)))
                offsets.extend(zip(map(add, chain.from_iterable(map(_STARTS, entries)), shifts),
                                   map(add, chain.from_iterable(map(_ENDS, entries)), shifts)))
                words.extend(chain.from_iterable(map(repeat, range(first_word, word + 1), counts)))
    n = len(ids)
    if word_index is not None:
        words = [word_index] * n
    return Encoding(ids, (type_id,) * n, tokens, words, offsets, (0,) * n, (1,) * n, None, {})
