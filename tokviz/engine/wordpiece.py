"""WordPiece and WordLevel words straight to ``(ids, values, starts, ends)`` tuples for the
engine's word caches (no ``Token`` objects): :func:`wordpiece_word_encoder`,
:func:`wordlevel_word_encoder`."""

from __future__ import annotations

from typing import Any

from tokviz.models.wordlevel.model import WordLevelTables
from tokviz.models.wordpiece.model import WordPieceTables, longest_matches


def wordpiece_word_encoder(model: Any) -> Any:
    """A function ``word -> (ids, values, starts, ends)`` equal to ``model.tokenize`` for a
    WordPiece model (greedy longest match first, ``##`` pieces after the first), or None for
    anything else; the function returns None for a word it leaves to the model (an unk without
    an unk token in the vocabulary: the model raises). No ``Token`` per token.

    >>> from tokviz.models import WordPiece
    >>> encode = wordpiece_word_encoder(WordPiece({"[UNK]": 0, "hu": 1, "##g": 2, "##s": 3, "hug": 4}))
    >>> encode("hugs"), encode("hum")
    (((4, 3), ('hug', '##s'), (0, 3), (3, 4)), ((0,), ('[UNK]',), (0,), (3,)))
    """
    tables = model.word_tables() if hasattr(model, "word_tables") else None
    if not isinstance(tables, WordPieceTables):
        return None
    get = tables.vocab.get
    prefix = model.continuing_subword_prefix
    longest = tables.longest
    max_chars = model.max_input_chars_per_word
    unk_token = model.unk_token
    unk_id = get(unk_token)

    def encode(word: str) -> tuple[tuple[Any, ...], ...] | None:
        length = len(word)
        if length > max_chars:
            return None if unk_id is None else ((unk_id,), (unk_token,), (0,), (length,))
        if 0 < length <= longest:
            token_id = get(word)
            if token_id is not None:  # the first candidate: the whole word
                return (token_id,), (word,), (0,), (length,)
        found = longest_matches(word, get, prefix, longest)
        if found is None:
            return None if unk_id is None else ((unk_id,), (unk_token,), (0,), (length,))
        ids, values, starts, ends = found
        return tuple(ids), tuple(values), tuple(starts), tuple(ends)

    return encode


def wordlevel_word_encoder(model: Any) -> Any:
    """A function ``word -> (ids, values, starts, ends)`` equal to ``model.tokenize`` for a
    WordLevel model (the word, or the unk token over it), or None for anything else; the
    function returns None where the model raises (no unk token in the vocabulary).

    >>> from tokviz.models import WordLevel
    >>> encode = wordlevel_word_encoder(WordLevel({"hi": 0, "<unk>": 1}))
    >>> encode("hi"), encode("you")
    (((0,), ('hi',), (0,), (2,)), ((1,), ('<unk>',), (0,), (3,)))
    """
    tables = model.word_tables() if hasattr(model, "word_tables") else None
    if not isinstance(tables, WordLevelTables):
        return None
    get = tables.vocab.get
    unk_token = model.unk_token
    zero = (0,)

    def encode(word: str) -> tuple[tuple[Any, ...], ...] | None:
        token_id = get(word)
        if token_id is not None:
            return (token_id,), (word,), zero, (len(word),)
        unk_id = get(unk_token)
        return None if unk_id is None else ((unk_id,), (unk_token,), zero, (len(word),))

    return encode
