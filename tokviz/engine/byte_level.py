"""The byte-level lane: GPT-2-style pipelines (ByteLevel, alone or after a Split or Digits; no
normalizer, or a normal form that leaves the text as it is; a deterministic model). Each distinct
word's tokens, offsets and trimmed offsets are made once (:func:`_tokenize_byte_word`), the
sequence's fields assembled from them in C. Plan and word cache: :class:`ByteLevelLane`.
"""

from __future__ import annotations

import re
import unicodedata
from functools import partial
from itertools import accumulate, chain, count, islice, repeat
from operator import add, itemgetter, lt, sub
from typing import Any

from tokviz.encoding import Encoding, flat_offsets_encoding
from tokviz.engine.bpe import ONE_TUPLE_LIMIT, ONE_TUPLES, bpe_word_encoder, byte_symbol_tokens, symbol_offsets_to_chars
from tokviz.engine.cut import added_pieces
from tokviz.models.bpe.model import BpeTables
from tokviz.models.unigram.model import UnigramTables
from tokviz.patterns import Regex
from tokviz.processors import TRIM_CHARS, trim_token_offsets


class ByteLevelLane:
    """The lane's plan (``add_prefix_space``, the pre-tokenizer's ``findall`` or None, the model's
    ``word_entry``) and its word cache (word -> entry), one of :class:`~tokviz.engine.plans.EnginePlans`."""

    __slots__ = ("add_prefix_space", "findall", "word_entry", "words")

    def __init__(self, add_prefix_space: bool, findall: Any, word_entry: Any) -> None:
        self.add_prefix_space = add_prefix_space
        self.findall = findall
        self.word_entry = word_entry
        self.words: dict[str, tuple[Any, ...]] = {}


def lane_plan(pre_tokenizer: Any, model: Any, encoder: Any = None) -> ByteLevelLane | None:
    """The byte-level lane for these components, or None when it does not apply. ``encoder``:
    the model's word encoder, made once for all the tokenizer's plans (used for a BPE model)."""
    if pre_tokenizer is None:
        return None
    plan = _byte_level_plan(pre_tokenizer)
    tables = model.word_tables() if hasattr(model, "word_tables") else None
    # (a Unigram's entries come from the whole-piece plan)
    if plan is None or not getattr(model, "deterministic", False) or isinstance(tables, UnigramTables):
        return None
    encoder = encoder if isinstance(tables, BpeTables) else None
    return ByteLevelLane(*plan, partial(_tokenize_byte_word, model.tokenize, encoder or bpe_word_encoder(model)))


def encode_byte_level(
    lane: ByteLevelLane, normalizer: Any, added: Any, sequence: str, type_id: int, word_index: int | None,
    trim: tuple[bool] | tuple[()] = (),
) -> Encoding | None:
    """The sequence's Encoding by the lane, or None when it does not apply.
    ``trim=(add_prefix_space,)``: also the ByteLevel post-processor's offset trimming."""
    if normalizer is not None:
        # A Unicode normal form (Qwen2's NFC) that leaves this text as it is: nothing to align.
        form = getattr(normalizer, "unicode_form", None)
        if form is None:
            return None
        if not sequence.isascii() and not unicodedata.is_normalized(form, sequence):
            return None
    add_prefix_space, findall, word_entry = lane.add_prefix_space, lane.findall, lane.word_entry
    cache = lane.words
    cache_get = cache.get
    starts_field = _FIELD_TRIMMED_STARTS if trim else _FIELD_STARTS
    ends_field = _FIELD_TRIMMED_ENDS if trim else _FIELD_ENDS

    ids: list[int] = []
    tokens: list[str] = []
    starts: list[int] = []  # (the offsets as two runs of ints: see flat_offsets_encoding)
    ends: list[int] = []
    words: list[int | None] = []
    split_index = 0

    if not sequence:
        pieces: list[tuple[int | None, int, int]] = []
    elif added.is_empty or not added.may_occur_in(sequence):
        pieces = [(None, 0, len(sequence))]
    else:
        pieces = added_pieces(added, sequence)

    for token_id, start, end in pieces:
        if token_id is not None:
            value = sequence[start:end]
            ids.append(token_id)
            tokens.append(value)
            if trim:
                start, end = trim_token_offsets(value, start, end, not starts or start == 0, trim[0])
            starts.append(start)
            ends.append(end)
            words.append(split_index if word_index is None else word_index)
            split_index += 1
            continue
        text = sequence[start:end] if (start or end != len(sequence)) else sequence
        prefixed = add_prefix_space and not text.startswith(" ")
        if prefixed:
            text = " " + text
        word_list = findall(text) if findall is not None else [text]
        if word_list is None:
            return None  # a Split whose matches leave gaps in this text: the general path
        entries = list(map(cache_get, word_list))
        if None in entries:
            for position, entry in enumerate(entries):
                if entry is None:
                    # Looked up again: a word repeated in this text is tokenized once.
                    entry = cache_get(word_list[position]) or word_entry(word_list[position])
                    if len(cache) < 200_000:
                        cache[word_list[position]] = entry
                    entries[position] = entry
        # Char j of ``text`` is original char start + j, or start + j - 1 after the
        # prefix space (which shares the first char's alignment, as HF's prepend does).
        # Everything below runs in C (map/chain/zip/accumulate), no Python loop per token.
        origin = start - 1 if prefixed else start
        first = len(ids)
        ids.extend(chain.from_iterable(map(_FIELD_IDS, entries)))
        added_count = len(ids) - first
        tokens.extend(chain.from_iterable(map(_FIELD_VALUES, entries)))
        if all(map(_FIELD_CONTIGUOUS, entries)):
            # The tokens tile the text, each starting where the previous one ended.
            token_starts = list(accumulate(chain.from_iterable(map(_FIELD_LENGTHS, entries)), initial=origin))
            if trim:
                starts.extend(map(add, token_starts, chain.from_iterable(map(_FIELD_TRIM_START, entries))))
                ends.extend(map(add, token_starts, chain.from_iterable(map(_FIELD_TRIM_END, entries))))
            else:
                starts.extend(islice(token_starts, len(token_starts) - 1))
                ends.extend(islice(token_starts, 1, None))
        else:
            # A char split across tokens: its tokens overlap, so shift each word's offsets.
            counts = list(map(len, map(_FIELD_IDS, entries)))
            bases = list(chain.from_iterable(map(repeat, accumulate(map(len, word_list), initial=origin), counts)))
            starts.extend(map(add, chain.from_iterable(map(starts_field, entries)), bases))
            ends.extend(map(add, chain.from_iterable(map(ends_field, entries)), bases))
        if word_index is not None:
            words.extend(repeat(word_index, added_count))
        elif added_count == len(entries):
            words.extend(range(split_index, split_index + added_count))
        else:
            counts = list(map(len, map(_FIELD_IDS, entries)))
            words.extend(chain.from_iterable(map(repeat, count(split_index), counts)))
        split_index += len(entries)
        if prefixed or (trim and (first == 0 or start == 0)):
            # The first word: redo its offsets by the general rules (prefix space, is_first).
            head = entries[0]
            for k, (s, e, value) in enumerate(zip(head[2], head[3], head[1])):
                if prefixed:
                    s, e = start + max(s - 1, 0), start + max(e - 1, 1)
                else:
                    s, e = s + start, e + start
                if trim and (value[:1] in TRIM_CHARS or value[-1:] in TRIM_CHARS):  # (others keep theirs)
                    s, e = trim_token_offsets(value, s, e, first + k == 0 or s == 0, trim[0])
                starts[first + k] = s
                ends[first + k] = e
    n = len(ids)
    return flat_offsets_encoding(
        tuple(ids), (type_id,) * n, tuple(tokens), tuple(words), (tuple(starts), tuple(ends), 0, 0), (0,) * n, (1,) * n, {}
    )


def _byte_level_plan(pre_tokenizer: Any) -> tuple[bool, Any] | None:
    """``(add_prefix_space, findall or None)`` when the pre-tokenizer is tokviz's ByteLevel, or
    a Split by a regex (behavior "isolated") before a ByteLevel without its own regex: Llama 3's
    and tiktoken-style tokenizers (see :func:`_isolated_findall`)."""
    from tokviz.engine.cut import pre_tokenizer_steps, split_kind
    from tokviz.pre_tokenizers import gpt2_findall

    steps = pre_tokenizer_steps(pre_tokenizer)
    rules = tuple(map(split_kind, steps))
    if len(steps) == 2:
        split, byte_level = steps
        if (
            rules == ("regex", "byte_level")
            and not byte_level.use_regex
            and split.behavior == "isolated"
            and not split.invert
            and isinstance(split.pattern, Regex)
            and split.pattern.compiled.groups == 0
        ):
            return bool(byte_level.add_prefix_space), _isolated_findall(split.pattern)
        if (
            rules == ("digits", "byte_level")
            and byte_level.use_regex
            and not byte_level.add_prefix_space  # (it would prefix every piece: the general path)
        ):
            return False, _digits_findall(split.individual_digits)
        return None
    if rules != ("byte_level",):
        return None
    byte_level = steps[0]
    return bool(byte_level.add_prefix_space), gpt2_findall if byte_level.use_regex else None


#: Split patterns of well-known tokenizers, searched without a time limit (each alternative is
#: a run of one class: linear time): Llama 3's / tiktoken's cl100k_base, Qwen2's, o200k_base.
_TRUSTED_SPLIT_PATTERNS = frozenset({
    r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+",
    r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+",
    r"[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]*[\p{Ll}\p{Lm}\p{Lo}\p{M}]+(?i:'s|'t|'re|'ve|'m|'ll|'d)?|"
    r"[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]+[\p{Ll}\p{Lm}\p{Lo}\p{M}]*(?i:'s|'t|'re|'ve|'m|'ll|'d)?|"
    r"\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n/]*|\s*[\r\n]+|\s+(?!\S)|\s+",
    " ?[^(\\s|[.,!?…。，、।۔،])]+",  # BLOOM's (a class nested in a class: see patterns.has_nested_class)
})


def _isolated_findall(pattern: Any) -> Any:
    """The words a Split(pattern, "isolated") makes of a text: the matches (in C when they tile
    it, as Llama 3's do), else the matches and the gaps between them (BLOOM's); None if a match
    is empty (the general path then splits it).

    >>> from tokviz import Regex
    >>> findall = _isolated_findall(Regex(r"\\p{L}+|\\s+|\\p{N}{1,3}"))
    >>> findall("ab 12345"), findall("ab!? c"), _isolated_findall(Regex(r"\\p{L}*"))("ab!")
    (['ab', ' ', '123', '45'], ['ab', '!?', ' ', 'c'], None)
    """
    from tokviz.patterns import find_all, match_spans
    from tokviz.pre_tokenizers import GPT2_PATTERN, gpt2_findall

    compiled = pattern.compiled
    trusted = pattern.pattern in _TRUSTED_SPLIT_PATTERNS
    untimed = compiled.findall if trusted else None
    if pattern.pattern == GPT2_PATTERN:
        # GPT-2's own pattern in a Split (tiktoken files converted by transformers: GPT-2's,
        # Whisper's): its pre-tokenizer's split, in re for ASCII text.
        trusted = True
        untimed = gpt2_findall

    def findall(text: str) -> list[str] | None:
        words = untimed(text) if untimed is not None else find_all(compiled, text)
        if "" in words:
            return None
        if sum(map(len, words)) == len(text):
            return words
        words = []
        end = 0
        spans = [match.span() for match in compiled.finditer(text)] if trusted else match_spans(compiled, text)
        for start, match_end in spans:
            if start != end:
                words.append(text[end:start])
            words.append(text[start:match_end])
            end = match_end
        if end != len(text):
            words.append(text[end:])
        return words

    return findall


def _digits_findall(individual: bool) -> Any:
    """The words of Digits then ByteLevel's own regex (StarCoder's): the numbers, and GPT-2's
    pre-tokens between them; None where the regex and :func:`~tokviz.pre_tokenizers.is_numeric`
    disagree on a number (the general path then splits it).

    >>> findall = _digits_findall(True)
    >>> findall("Call 123, x2"), _digits_findall(False)("Call 123, x2 ½")
    (['Call', ' ', '1', '2', '3', ',', ' x', '2'], ['Call', ' ', '123', ',', ' x', '2', ' ', '½'])
    """
    import regex

    from tokviz.pre_tokenizers import gpt2_findall, is_numeric

    ascii_split = re.compile("([0-9])" if individual else "([0-9]+)").split
    number = regex.compile(r"(\p{N})" if individual else r"(\p{N}+)")

    def findall(text: str) -> list[str] | None:
        if text.isascii():
            pieces = ascii_split(text)
        else:
            pieces = number.split(text)
            if not all(map(is_numeric, "".join(pieces[1::2]))):
                return None
        words: list[str] = []
        for index, piece in enumerate(pieces):
            if index % 2:
                words.append(piece)
            elif piece:
                words += gpt2_findall(piece)
        return words

    return findall


# The last six fields of a word's entry when it is one ASCII token covering it (size < 256):
# with one leading 'Ġ' trimmed (a word after a space), or with nothing to trim.
_SPACE_TAILS = tuple(
    (ONE_TUPLES[1], ONE_TUPLES[size], ONE_TUPLES[size], ONE_TUPLES[1], ONE_TUPLES[size], True) for size in range(ONE_TUPLE_LIMIT)
)
_PLAIN_TAILS = tuple(
    (ONE_TUPLES[0], ONE_TUPLES[size], ONE_TUPLES[size], ONE_TUPLES[0], ONE_TUPLES[size], True) for size in range(ONE_TUPLE_LIMIT)
)


def _tokenize_byte_word(model_tokenize: Any, encode: Any, word: str) -> tuple[Any, ...]:
    """A pre-token's word-cache entry (fields below): ids, tokens, char offsets in ``word``, the
    same trimmed (the ByteLevel post-processor's rule, not the text's first token), token lengths,
    trimmed offsets relative to each token's start, and whether the tokens tile the word.
    ``encode``: the model's :func:`~tokviz.engine.bpe.bpe_word_encoder`, if it has one."""
    symbols, entry = byte_symbol_tokens(word, model_tokenize, encode)
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
    if len(ids) == 1 and same_length:
        # The common case (a known word of ASCII text), built without intermediate lists.
        value = values[0]
        start = starts[0]
        end = ends[0]
        if not value:
            trimmed_start, trimmed_end = start, end
        elif value[0] == "Ġ" and len(value) > 1 and value[1] not in TRIM_CHARS and value[-1] not in TRIM_CHARS:
            trimmed_start, trimmed_end = min(start + 1, end), end  # one leading space (trim_token_offsets)
        elif value[0] in TRIM_CHARS or value[-1] in TRIM_CHARS:
            trimmed_start, trimmed_end = trim_token_offsets(value, start, end, False, False)
        else:
            trimmed_start, trimmed_end = start, end
        if end < ONE_TUPLE_LIMIT:  # 0 <= start <= trimmed start <= trimmed end <= end: shared (n,) tuples
            return (
                ids, values, starts, ends, ONE_TUPLES[trimmed_start], ONE_TUPLES[trimmed_end], ONE_TUPLES[end - start],
                ONE_TUPLES[trimmed_start - start], ONE_TUPLES[trimmed_end - start], start == 0 and start < end == size,
            )
        return (
            ids, values, starts, ends, (trimmed_start,), (trimmed_end,), (end - start,),
            (trimmed_start - start,), (trimmed_end - start,), start == 0 and start < end == size,
        )
    trim_chars = TRIM_CHARS
    if same_length and ids and all(values) and starts[0] == 0 and ends[-1] == size and starts[1:] == ends[:-1]:
        # Several tokens tiling a word of one-byte chars (BPE's tokens tile it): when no token
        # but the first starts with a space symbol and none ends with one, the trimmed offsets
        # are the offsets, the first start moved past its leading 'Ġ' (as below, in C).
        first = values[0]
        if (
            trim_chars.isdisjoint(map(_LAST_CHAR, values))
            and trim_chars.isdisjoint(map(_FIRST_CHAR, islice(values, 1, None)))
            and (first[0] not in trim_chars or (first[0] == "Ġ" and len(first) > 1 and first[1] not in trim_chars))
        ):
            lengths = tuple(map(sub, ends, starts))
            if first[0] == "Ġ":
                return (
                    ids, values, starts, ends, (1, *starts[1:]), ends, lengths,
                    (1, *repeat(0, len(ids) - 1)), lengths, True,
                )
            return ids, values, starts, ends, starts, ends, lengths, (0,) * len(ids), lengths, True
    if not same_length:
        starts, ends = symbol_offsets_to_chars(word, starts, ends)  # a char's bytes align to the char
        if ids and all(values) and trim_chars.isdisjoint(map(_FIRST_CHAR, values)) and trim_chars.isdisjoint(map(_LAST_CHAR, values)):
            # No token to trim (a run of Chinese: tokens of its UTF-8 bytes, offsets of its chars).
            lengths = tuple(map(sub, ends, starts))
            contiguous = starts[0] == 0 and starts[1:] == ends[:-1] and ends[-1] == size and all(map(lt, starts, ends))
            return ids, values, starts, ends, starts, ends, lengths, (0,) * len(ids), lengths, contiguous
    trimmed_starts_list = list(starts)
    trimmed_ends_list = list(ends)
    for index, value in enumerate(values):
        if value and (value[0] in trim_chars or value[-1] in trim_chars):
            s = starts[index]
            e = ends[index]
            if value[0] == "Ġ" and len(value) > 1 and value[1] not in trim_chars and value[-1] not in trim_chars:
                trimmed_starts_list[index] = min(s + 1, e)  # one leading space (trim_token_offsets)
            else:
                trimmed_starts_list[index], trimmed_ends_list[index] = trim_token_offsets(value, s, e, False, False)
    contiguous = bool(ids) and starts[0] == 0 and starts[1:] == ends[:-1] and ends[-1] == size and all(map(lt, starts, ends))
    trimmed_starts = tuple(trimmed_starts_list)
    trimmed_ends = tuple(trimmed_ends_list)
    return (  # (the trimmed offsets also relative to each token's own start)
        ids, values, starts, ends, trimmed_starts, trimmed_ends, tuple(map(sub, ends, starts)),
        tuple(map(sub, trimmed_starts, starts)), tuple(map(sub, trimmed_ends, starts)), contiguous,
    )


_FIRST_CHAR = itemgetter(0)
_LAST_CHAR = itemgetter(-1)

# Fields of a word-cache entry (see _tokenize_byte_word).
_FIELD_IDS = itemgetter(0)
_FIELD_VALUES = itemgetter(1)
_FIELD_STARTS = itemgetter(2)
_FIELD_ENDS = itemgetter(3)
_FIELD_TRIMMED_STARTS = itemgetter(4)
_FIELD_TRIMMED_ENDS = itemgetter(5)
_FIELD_LENGTHS = itemgetter(6)
_FIELD_TRIM_START = itemgetter(7)
_FIELD_TRIM_END = itemgetter(8)
_FIELD_CONTIGUOUS = itemgetter(9)
