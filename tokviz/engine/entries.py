"""A word's entry in the plan's word cache: its tokens as ``(ids, values, starts, ends)``
(char offsets in the word), from the model's word encoder (:func:`_word_entry`); a byte-level
word's entry also holds its offsets trimmed as the ByteLevel post-processor trims them
(:func:`_byte_entry`).
"""

from __future__ import annotations

from itertools import islice, repeat
from operator import itemgetter, lt, sub
from typing import Any

from tokviz.engine.bpe import ONE_TUPLES, ONE_TUPLE_LIMIT, byte_symbol_tokens, symbol_offsets_to_chars
from tokviz.engine.plan import CutPlan, build_plan  # (build_plan: the doctests')
from tokviz.engine.unigram import _UNIGRAM_MAX_WORD
from tokviz.engine.words import _MAX_CACHED_WORDS, _SymbolPieces
from tokviz.processors import TRIM_CHARS, trim_token_offsets


# Fields of a word entry (see _word_entry).
_IDS, _TOKENS, _STARTS, _ENDS = map(itemgetter, range(4))


def _word_entry(plan: CutPlan, word: str) -> tuple[tuple[Any, ...], ...]:
    """One word's tokens as ``(ids, values, starts, ends)`` (char offsets in the word), cached in the plan.

    >>> from tokviz import models, pre_tokenizers

    >>> plan = build_plan(None, pre_tokenizers.Whitespace(), models.WordPiece({"[UNK]": 0, "hug": 1, "##s": 2}))
    >>> _word_entry(plan, "hugs"), plan.words["hugs"]
    (((1, 2), ('hug', '##s'), (0, 3), (3, 4)), ((1, 2), ('hug', '##s'), (0, 3), (3, 4)))
    """
    if plan.bpe is not None:
        entry = plan.bpe(word) or _model_word_entry(plan.model, word)
    elif plan.wordpiece is not None:
        entry = plan.wordpiece(word) or _model_word_entry(plan.model, word)
    elif plan.unigram is not None and len(word) <= _UNIGRAM_MAX_WORD:
        entry = plan.unigram(word) or _model_word_entry(plan.model, word)
    else:
        entry = _model_word_entry(plan.model, word)
    if len(plan.words) < _MAX_CACHED_WORDS:
        plan.words[word] = entry
    return entry


def _model_word_entry(model: Any, word: str) -> tuple[tuple[Any, ...], ...]:
    """``model.tokenize(word)`` as ``(ids, values, starts, ends)``."""
    tokens = model.tokenize(word)
    if len(tokens) == 1:
        token = tokens[0]
        return (token.id,), (token.value,), (token.offsets[0],), (token.offsets[1],)
    return (
        tuple([token.id for token in tokens]),
        tuple([token.value for token in tokens]),
        tuple([token.offsets[0] for token in tokens]),
        tuple([token.offsets[1] for token in tokens]),
    )


# The last six fields of a byte-level word's entry when it is one ASCII token covering it
# (size < 256): with one leading 'Ġ' trimmed (a word after a space), or with nothing to trim.
_SPACE_TAILS = tuple(
    (ONE_TUPLES[1], ONE_TUPLES[size], ONE_TUPLES[size], ONE_TUPLES[1], ONE_TUPLES[size], True) for size in range(ONE_TUPLE_LIMIT)
)


_PLAIN_TAILS = tuple(
    (ONE_TUPLES[0], ONE_TUPLES[size], ONE_TUPLES[size], ONE_TUPLES[0], ONE_TUPLES[size], True) for size in range(ONE_TUPLE_LIMIT)
)


_FIRST_CHAR = itemgetter(0)


_LAST_CHAR = itemgetter(-1)


def _byte_entry(plan: CutPlan, word: str) -> tuple[Any, ...]:
    """A byte-level word's entry: ids, tokens, char offsets in ``word`` (:data:`_IDS` ...
    :data:`_ENDS`, as every word's), then the offsets trimmed (the ByteLevel post-processor's
    rule, not the text's first token), token lengths, trimmed offsets relative to each token's
    start, and whether the tokens tile the word (:data:`_TRIMMED_STARTS` ... :data:`_TILES`).

    >>> from tokviz import models, pre_tokenizers

    >>> plan = build_plan(None, pre_tokenizers.ByteLevel(False), models.BPE({"a": 0, "Ġ": 1, "Ġa": 2}, [("Ġ", "a")]))
    >>> _byte_entry(plan, " a")
    ((2,), ('Ġa',), (0,), (2,), (1,), (2,), (2,), (1,), (2,), True)
    """
    if type(word) is _SymbolPieces:
        return _sub_words_entry(plan, word)
    symbols, entry = byte_symbol_tokens(word, plan.model.tokenize, plan.bpe)
    ids, values, starts, ends = entry
    size = len(word)
    same_length = len(symbols) == size
    if len(ids) == 1 and same_length and ends[0] == size < ONE_TUPLE_LIMIT and not starts[0]:
        # The usual word: one token covering it, trimmed by one leading space or not at all.
        value = values[0]
        if value[0] == "Ġ":
            if size > 1 and value[1] not in TRIM_CHARS and value[-1] not in TRIM_CHARS:
                return entry + _SPACE_TAILS[size]
        elif value[0] not in TRIM_CHARS and value[-1] not in TRIM_CHARS:
            return entry + _PLAIN_TAILS[size]
    trim_chars = TRIM_CHARS
    if same_length and ids and all(values) and starts[0] == 0 and ends[-1] == size and starts[1:] == ends[:-1]:
        # Tokens tiling a word of one-byte chars: when no token but the first starts with a
        # space symbol and none ends with one, the trimmed offsets are the offsets, the first
        # start moved past its leading 'Ġ' (in C).
        first = values[0]
        if (
            trim_chars.isdisjoint(map(_LAST_CHAR, values))
            and trim_chars.isdisjoint(map(_FIRST_CHAR, islice(values, 1, None)))
            and (first[0] not in trim_chars or (first[0] == "Ġ" and len(first) > 1 and first[1] not in trim_chars))
        ):
            lengths = tuple(map(sub, ends, starts))
            if first[0] == "Ġ":
                return ids, values, starts, ends, (1, *starts[1:]), ends, lengths, (1, *repeat(0, len(ids) - 1)), lengths, True
            return ids, values, starts, ends, starts, ends, lengths, (0,) * len(ids), lengths, True
    if not same_length:
        starts, ends = symbol_offsets_to_chars(word, starts, ends)  # a char's bytes align to the char
    return _trimmed_entry(ids, values, starts, ends, size)


def _sub_words_entry(plan: CutPlan, word: _SymbolPieces) -> tuple[Any, ...]:
    """:func:`_byte_entry` of a word cut inside a char: each symbol piece's tokens, offsets of
    the chars their symbols belong to (both pieces of a cut char align to it, as HF's), and an
    eleventh field: per token, which piece (word) of the word it is in."""
    char_of_symbol = [index for index, char in enumerate(word) for _ in range(len(char.encode()))]
    ids: list[int] = []
    values: list[str] = []
    starts: list[int] = []
    ends: list[int] = []
    pieces: list[int] = []
    position = 0
    for index, symbols in enumerate(word.pieces):
        entry = plan.bpe(symbols) if plan.bpe is not None else None
        entry = entry or _model_word_entry(plan.model, symbols)
        ids += entry[0]
        values += entry[1]
        starts += [char_of_symbol[position + start] for start in entry[2]]
        ends += [char_of_symbol[position + max(end - 1, start)] + (end > start) for start, end in zip(entry[2], entry[3])]
        pieces += repeat(index, len(entry[0]))
        position += len(symbols)
    plan.sub_words = True
    return (*_trimmed_entry(tuple(ids), tuple(values), tuple(starts), tuple(ends), len(word)), tuple(pieces))


def _trimmed_entry(ids: tuple[int, ...], values: tuple[str, ...], starts: Any, ends: Any, size: int) -> tuple[Any, ...]:
    """A byte-level entry's fields from its tokens' char offsets (see :func:`_byte_entry`)."""
    trim_chars = TRIM_CHARS
    trimmed_starts = list(starts)
    trimmed_ends = list(ends)
    for index, value in enumerate(values):
        if value and (value[0] in trim_chars or value[-1] in trim_chars):
            start, end = starts[index], ends[index]
            if value[0] == "Ġ" and len(value) > 1 and value[1] not in trim_chars and value[-1] not in trim_chars:
                trimmed_starts[index] = min(start + 1, end)  # one leading space (trim_token_offsets)
            else:
                trimmed_starts[index], trimmed_ends[index] = trim_token_offsets(value, start, end, False, False)
    tiles = bool(ids) and starts[0] == 0 and starts[1:] == ends[:-1] and ends[-1] == size and all(map(lt, starts, ends))
    return (
        ids, values, starts, ends, tuple(trimmed_starts), tuple(trimmed_ends), tuple(map(sub, ends, starts)),
        tuple(map(sub, trimmed_starts, starts)), tuple(map(sub, trimmed_ends, starts)), tiles,
    )


# The byte-level fields of a word's entry after the four every entry has (see _byte_entry).
_TRIMMED_STARTS, _TRIMMED_ENDS, _LENGTHS, _TRIM_START, _TRIM_END, _TILES = map(itemgetter, range(4, 10))
