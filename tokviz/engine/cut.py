"""The engine's one lane, the tokenizer's side: a text's pieces (between added tokens) encoded
into an Encoding, post-processed by a single template in the same step. Read bottom-up:
:mod:`~tokviz.engine.stages` (the normalizer on plain strings), ``words`` (the pre-tokenizer's
words), ``plan`` (:func:`build_plan`, the word cache), ``entries`` (a word's tokens), ``fields``
(a piece's fields), then this module. What a plan cannot take (Strip, truncation, dropout)
takes the general path (:meth:`Tokenizer._pipeline`), which the tests compare it with, and HF.

>>> from tokviz import Tokenizer, models, normalizers, pre_tokenizers
>>> tok = Tokenizer(models.WordLevel({"[UNK]": 0, "hello": 1, "world": 2}, unk_token="[UNK]"))
>>> tok.normalizer = normalizers.Lowercase()
>>> tok.pre_tokenizer = pre_tokenizers.Whitespace()
>>> tok.encode("Hello  World!").ids
[1, 2, 0]
"""

from __future__ import annotations

import gc
from itertools import repeat
from operator import add
from typing import Any

import regex

from tokviz.encoding import FlatOffsets, flat_offsets_encoding, new_encoding
from tokviz.engine.fields import _flat_lists, _piece_fields
from tokviz.engine.plan import CutPlan, build_plan  # (build_plan: the doctests')
from tokviz.processors import template_masks, trim_token_offsets


_PREPEND_CLASS = regex.compile(r"\p{Grapheme_Cluster_Break=Prepend}")


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


def encode_cut(
    added: Any, plan: CutPlan, sequence: str, type_id: int, word_index: int | None, trim: tuple[bool] | tuple[()] = ()
) -> Any:
    """The sequence's Encoding (before post-processing), or None for the general path. ``trim``:
    what the post-processor declares (``trims_offsets()``): a byte-level plan trims the offsets
    in the same pass (other plans give None for a non-empty one)."""
    fields = _sequence_fields(added, plan, sequence, word_index, trim)
    if fields is None:
        return None
    ids, tokens, offsets, words = fields
    n = len(ids)
    if type(offsets) is FlatOffsets:
        return flat_offsets_encoding(ids, (type_id,) * n, tokens, words, offsets, (0,) * n, (1,) * n, {})
    return new_encoding(ids, (type_id,) * n, tokens, words, offsets, (0,) * n, (1,) * n, {})


#: Texts from this many chars encode with the cycle collector paused: a cold text's cache tuples
#: would make it walk the tokenizer's tables (5-15% of a cold 20 KB encode). A shorter one does
#: not: the collection the pause defers runs at the next allocation once it is over, one per
#: call (8% of BART's warm per-line encode), where the collector would run once in hundreds of lines.
PAUSE_COLLECTOR_FROM = 2_000


def encode_processed(added: Any, plan: CutPlan, sequence: str, split: Any, trim: tuple[bool] | tuple[()] = ()) -> Any:
    """``encode(sequence)`` post-processed by a single template ``split`` (see
    :meth:`TemplateProcessing.single_parts`), built in one go: the sequence's fields between the
    template's special tokens, no Encoding in between (``trim``: as :func:`encode_cut`). None
    when the engine cannot take it (then the general path does it).

    >>> from tokviz import models, pre_tokenizers, processors

    >>> from tokviz.added_vocabulary import AddedVocabulary
    >>> plan = build_plan(None, pre_tokenizers.Whitespace(), models.WordLevel({"[UNK]": 0, "hi": 1}, unk_token="[UNK]"))
    >>> template = processors.TemplateProcessing(single="<s> $A", special_tokens=[("<s>", 2)])
    >>> encoding = encode_processed(AddedVocabulary(), plan, "hi yo", template.single_parts())
    >>> encoding.ids, encoding.tokens, encoding.offsets, encoding.word_ids
    ([2, 1, 0], ['<s>', 'hi', '[UNK]'], [(0, 0), (0, 2), (3, 5)], [None, 0, 1])
    """
    fields = _sequence_fields(added, plan, sequence, None, trim)
    if fields is None:
        return None
    ids, tokens, offsets, words = fields
    n = len(ids)
    _, before, after, _ = split
    masks = template_masks(split, n)
    if type(offsets) is FlatOffsets and not any(map(any, before[3])) and not any(map(any, after[3])):
        # (the template's special tokens all at (0, 0))
        return flat_offsets_encoding(
            before[0] + ids + after[0], masks[0], before[1] + tokens + after[1], before[2] + words + after[2],
            (offsets[0], offsets[1], len(before[0]), len(after[0])), masks[2], masks[3], masks[4],
        )
    if type(offsets) is FlatOffsets:
        offsets = offsets.pairs()
    return new_encoding(
        before[0] + ids + after[0], masks[0], before[1] + tokens + after[1], before[2] + words + after[2],
        before[3] + offsets + after[3], masks[2], masks[3], masks[4],
    )


def _sequence_fields(added: Any, plan: CutPlan, sequence: str, word_index: int | None, trim: tuple[bool] | tuple[()]) -> Any:
    """``(ids, tokens, offsets, word ids)`` of a sequence as tuples (offsets as
    :class:`FlatOffsets` or pairs), or None for the general path; long texts with the cycle
    collector paused (see :data:`PAUSE_COLLECTOR_FROM`)."""
    if trim and plan.byte_words is None:
        return None
    if len(sequence) < PAUSE_COLLECTOR_FROM or not gc.isenabled():
        return _fields_of(added, plan, sequence, word_index, trim)
    gc.disable()
    try:
        return _fields_of(added, plan, sequence, word_index, trim)
    finally:
        gc.enable()


def _fields_of(added: Any, plan: CutPlan, sequence: str, word_index: int | None, trim: tuple[bool] | tuple[()]) -> Any:
    raw_search, normalized_search = added.searches()
    # Added tokens matched after the normalizer are looked for in each piece's normalized text.
    after = normalized_search is not None and bool(plan.stages)
    if not sequence:
        pieces: list[tuple[int | None, int, int]] = []
    elif (raw_search is None or raw_search(sequence) is None) and (
        after or normalized_search is None or normalized_search(sequence) is None
    ):
        pieces = [(None, 0, len(sequence))]
    elif after:
        pieces = [(token_id, start, end) for token_id, (start, end) in added.find_matches(sequence, False) if start != end]
    else:
        pieces = added_pieces(added, sequence)
    if not after:
        added = None
    if plan.graphemes and _PREPEND_CLASS.search(sequence) is not None:
        return None  # a Prepend-class char joins the next char (maybe a space) in one grapheme
    if len(pieces) == 1 and pieces[0][0] is None and word_index is None:
        fields = _piece_fields(plan, sequence, True, added, True, trim)
        if fields is None:
            return None
        ids, tokens, offsets, words, _ = fields
        if type(offsets) is FlatOffsets:
            # (tuples: an encoding that lives on keeps no list for the collector to walk)
            starts, ends, _, _ = offsets
            offsets = FlatOffsets((tuple(starts), ends if ends is None else tuple(ends), 0, 0))
        return ids, tokens, offsets, words
    ids: list[int] = []
    tokens: list[str] = []
    starts: list[int] = []
    ends: list[int] = []
    words: list[int] = []
    split_index = 0
    for token_id, start, end in pieces:
        if token_id is not None:
            value = sequence[start:end]
            ids.append(token_id)
            tokens.append(value)
            if trim:
                start, end = trim_token_offsets(value, start, end, start == 0, trim[0])
            starts.append(start)
            ends.append(end)
            words.append(split_index)
            split_index += 1
            continue
        text = sequence[start:end] if (start or end != len(sequence)) else sequence
        fields = _piece_fields(plan, text, start == 0, added, True, trim)
        if fields is None:
            return None
        piece_ids, piece_tokens, piece_offsets, piece_words, n_words = fields
        if not piece_ids:
            split_index += min(n_words, 1) if plan.one_word else n_words
            continue
        ids += piece_ids
        tokens += piece_tokens
        piece_starts, piece_ends = _flat_lists(piece_offsets, start)
        starts += piece_starts
        ends += piece_ends
        words.extend(map(add, piece_words, repeat(split_index)))
        # (one-word pipelines: a piece is one word, but where added tokens were cut out of it)
        split_index += piece_words[-1] + 1 if plan.one_word else n_words
    words_field = (word_index,) * len(ids) if word_index is not None else tuple(words)
    return tuple(ids), tuple(tokens), FlatOffsets((tuple(starts), tuple(ends), 0, 0)), words_field


__all__ = ["encode_cut", "encode_processed"]
