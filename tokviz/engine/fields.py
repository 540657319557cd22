"""Assembling a piece's fields (ids, tokens, offsets, word ids) from its words' entries, in C
(map/chain/accumulate) where the words tile the text: :func:`_normalized_fields` (and
:func:`_byte_level_fields`) on a normalized piece, :func:`_line_fields` normalizing it on plain
strings first, :func:`_aligned_fields` segment by segment where a stage changes lengths.
"""

from __future__ import annotations

from itertools import accumulate, chain, compress, count, islice, repeat
from operator import add, eq, itemgetter, lt, not_, sub
from typing import Any

from tokviz.encoding import FlatOffsets
from tokviz.engine.entries import (
    _ENDS, _IDS, _LENGTHS, _STARTS, _TILES, _TOKENS, _TRIMMED_ENDS, _TRIMMED_STARTS, _TRIM_END, _TRIM_START, _byte_entry, _model_word_entry,
    _word_entry,
)
from tokviz.engine.plan import CutPlan, build_plan  # (build_plan: the doctests')
from tokviz.engine.stages import _loses_a_removal, _segments, _staged, _through_origin
from tokviz.engine.words import PIECES_FROM, _MAX_CACHED_WORDS, _long_words_cut, _metaspace_words, _missing
from tokviz.normalized import NormalizedString
from tokviz.processors import TRIM_CHARS, trim_token_offsets


_NO_FIELDS = ((), (), (), (), 0)


def _byte_level_fields(plan: CutPlan, text: str, at_start: bool, flat: bool, trim: tuple[bool] | tuple[()]) -> tuple[Any, ...] | None:
    """:func:`_normalized_fields` of a byte-level pipeline (``plan.byte_words``), its offsets
    trimmed as the post-processor declares (``trim=(add_prefix_space,)``; ``()``: untrimmed).
    Assembled from the words' entries in C (map/chain/accumulate), no Python loop per token.

    >>> from tokviz import models, pre_tokenizers

    >>> plan = build_plan(None, pre_tokenizers.ByteLevel(False), models.BPE({"a": 0, "Ġ": 1, "Ġa": 2}, [("Ġ", "a")]))
    >>> _byte_level_fields(plan, "a a", True, False, ()), _byte_level_fields(plan, "a a", True, False, (False,))[2]
    (((0, 2), ('a', 'Ġa'), ((0, 1), (1, 3)), (0, 1), 2), ((0, 1), (2, 3)))
    """
    prefixed = plan.prefix_space and not text.startswith(" ")
    if prefixed:
        text = " " + text
    words = plan.byte_words(text)
    word_starts = None  # (given when the words do not tile the text, see _byte_level_split)
    if type(words) is tuple:
        words, word_starts = words
    if not words:
        return None if words is None else _NO_FIELDS
    cache = plan.words
    cache_get = cache.get
    entries = list(map(cache_get, words))
    if None in entries:
        for position in _missing(entries):
            # Looked up again: a word repeated in this text is tokenized once.
            word = words[position]
            entry = entries[position] = cache_get(word) or _byte_entry(plan, word)
            if len(cache) < _MAX_CACHED_WORDS:
                cache[word] = entry
    # Char j of ``text`` is char j of the piece, or j - 1 after the prefix space (which shares
    # the first char's alignment, as HF's prepend does).
    origin = -1 if prefixed else 0
    ids = tuple(chain.from_iterable(map(_IDS, entries)))
    tokens = tuple(chain.from_iterable(map(_TOKENS, entries)))
    n_words = len(entries)
    counts = None if len(ids) == n_words else list(map(len, map(_IDS, entries)))
    ends: list[int] | None
    if word_starts is None and all(map(_TILES, entries)):
        # The tokens tile the text, each starting where the one before ended.
        bounds = list(accumulate(chain.from_iterable(map(_LENGTHS, entries)), initial=origin))
        if trim:
            starts = list(map(add, bounds, chain.from_iterable(map(_TRIM_START, entries))))
            ends = list(map(add, bounds, chain.from_iterable(map(_TRIM_END, entries))))
        elif not prefixed and flat:
            starts, ends = bounds, None
        else:
            starts, ends = bounds[:-1], bounds[1:]
    else:
        # A char split across tokens (its tokens overlap) or text between words: shift each
        # word's offsets by where it starts.
        bases = list(accumulate(map(len, words), initial=origin)) if word_starts is None else word_starts
        if counts is not None:
            bases = list(chain.from_iterable(map(repeat, bases, counts)))
        starts = list(map(add, chain.from_iterable(map(_TRIMMED_STARTS if trim else _STARTS, entries)), bases))
        ends = list(map(add, chain.from_iterable(map(_TRIMMED_ENDS if trim else _ENDS, entries)), bases))
    word_ids = tuple(range(n_words)) if counts is None else tuple(chain.from_iterable(map(repeat, count(), counts)))
    if plan.sub_words and max(map(len, entries)) > 10:
        # A word cut inside a char is several words (see _sub_words_entry).
        ids_of_words: list[int] = []
        n_words = 0
        for entry in entries:
            if len(entry) > 10:
                ids_of_words += map(add, entry[10], repeat(n_words))
                n_words += entry[10][-1] + 1 if entry[10] else 1
            else:
                ids_of_words += repeat(n_words, len(entry[0]))
                n_words += 1
        word_ids = tuple(ids_of_words)
    if prefixed or (trim and at_start and trim[0]):
        # The first word: its offsets by the general rules (the prefix space; a token at the
        # text's start keeps one leading space when the processor adds one, trim[0]).
        if ends is None:
            starts, ends = starts[:-1], starts[1:]
        head = entries[0]
        shift = word_starts[0] if word_starts else 0
        for index, (start, end, value) in enumerate(zip(head[2], head[3], head[1])):
            start, end = start + shift, end + shift
            if prefixed:
                start, end = max(start - 1, 0), max(end - 1, 1)
            elif index and start:
                break  # (past the text's start: the entry's trimmed offsets are the rule's)
            if trim and (value[:1] in TRIM_CHARS or value[-1:] in TRIM_CHARS):  # (others keep theirs)
                start, end = trim_token_offsets(value, start, end, at_start and (index == 0 or start == 0), trim[0])
            starts[index] = start
            ends[index] = end
    if flat:
        return ids, tokens, FlatOffsets((starts, ends, 0, 0)), word_ids, n_words
    if ends is None:
        return ids, tokens, tuple(zip(starts, islice(starts, 1, None))), word_ids, n_words
    return ids, tokens, tuple(zip(starts, ends)), word_ids, n_words


def _line_fields(
    plan: CutPlan, text: str, at_start: bool, normalized_search: Any = None, head: bool = True, flat: bool = False,
    trim: tuple[bool] | tuple[()] = (),
) -> tuple[Any, ...] | None:
    """One whole piece (a line, or the text between added tokens) on plain strings: ``(ids,
    tokens, offsets, word_ids, n_words)``, offsets relative to the piece; None when a stage
    does not keep the piece aligned (see :func:`_staged`; then :func:`_aligned_fields`), or
    when ``normalized_search`` finds a normalized-matched added token after the stages.

    >>> from tokviz import models, normalizers, pre_tokenizers

    >>> plan = build_plan(normalizers.Lowercase(), pre_tokenizers.Whitespace(),
    ...                   models.WordLevel({"hi": 0, "!": 1, "[UNK]": 2}, unk_token="[UNK]"))
    >>> _line_fields(plan, "Hi! you", True)
    ((0, 1, 2), ('hi', '!', '[UNK]'), ((0, 2), (2, 3), (4, 7)), (0, 1, 2), 3)
    """
    shifts = plan.shifts
    if shifts is not None:
        # Prepends and one-char Replaces (Llama's): they keep the piece aligned, in one step.
        if not text:
            return None
        prepended, replaces = shifts
        for char, replacement in replaces:
            text = text.replace(char, replacement)
        prefix = 0
        if head:
            prefix = len(prepended)
            text = prepended + text
    origin = None
    if shifts is None:
        text, prefix, origin = _staged(plan, text, head)
        if text is None:
            return None
    if normalized_search is not None and normalized_search(text) is not None:
        return None
    if origin is not None and ((at_start and plan.splitter == "ws_metaspace" and plan.steps[1].prepend_scheme == "first") or trim):
        return None  # (whether the first word starts the original text, offsets trimmed in it: the general path)
    fields = _normalized_fields(plan, text, prefix, at_start, flat and origin is None, trim)
    if origin is None or fields is None:
        return fields
    offsets = _through_origin(fields[2], origin)
    if offsets is None:
        return None
    return fields[0], fields[1], offsets, fields[3], fields[4]


#: Segments normalized with their alignments kept per plan, up to this many chars in all.
_MAX_ALIGNED_CHARS = 500_000


def _aligned_fields(plan: CutPlan, text: str, at_start: bool, added: Any = None) -> tuple[Any, ...] | None:
    """:func:`_line_fields` of a piece its stages do not keep aligned as a whole: each segment
    (:func:`_segments`; the whole piece when a stage is not local to them) is staged on plain
    strings where :func:`_staged` can, else by a NormalizedString of it alone (cached); token
    spans come from the alignments of their first and last chars, as HF's. None for what only
    the general path does (a removal at a segment's start, a token of no char).

    >>> from tokviz import models, normalizers, pre_tokenizers

    >>> plan = build_plan(normalizers.NFC(), pre_tokenizers.Whitespace(), models.WordLevel({"[UNK]": 0, "é": 1}, unk_token="[UNK]"))
    >>> fields = _aligned_fields(plan, "e\\u0301 b\\né", True)
    >>> fields[1], fields[2].pairs()
    (('é', '[UNK]', 'é'), ((0, 1), (3, 4), (5, 6)))
    """
    if at_start and plan.splitter == "ws_metaspace" and plan.steps[1].prepend_scheme == "first":
        return None
    parts: list[str] = []
    starts: list[int] = []  # per normalized char, the original span it stands for
    ends: list[int] = []
    identity = True  # (so far each normalized char stands for the char at its place: no spans kept)
    position = 0
    aligned = plan.aligned
    segments = _segments(plan, text) if plan.by_segments else (text,)
    for segment in segments:
        end = position + len(segment)
        staged, prefix, origin = _staged(plan, segment, not position)
        if staged is not None and not prefix and origin is None and identity:
            parts.append(staged)
            position = end
            continue
        if identity:
            identity = False
            starts.extend(range(position))
            ends.extend(range(1, position + 1))
        if staged is not None and prefix and origin is None:
            # (prepended chars take the first char's alignment)
            parts.append(staged)
            starts.extend(chain(repeat(position, prefix), range(position, end)))
            ends.extend(chain(repeat(position + 1, prefix), range(position + 1, end + 1)))
        elif staged is not None and not prefix:
            parts.append(staged)
            if origin is None:
                starts.extend(range(position, end))
                ends.extend(range(position + 1, end + 1))
            else:
                starts.extend(map(add, origin, repeat(position)))
                ends.extend(map(add, origin, repeat(position + 1)))
        else:
            if plan.graphemes and len(segments) > 1 and any(_loses_a_removal(stage, segment) for stage in plan.stages if stage.on_graphemes):
                # HF's Precompiled loses a removal at the text's start and shifts every later
                # alignment; one at a later segment's start, it counts.
                return None
            known = aligned.get(segment)
            if known is None:
                normalized = NormalizedString(segment)
                for stage in plan.stages:
                    if not normalized.normalized:
                        break  # (as a Sequence: a stage on an emptied text would find no char to align to)
                    stage.normalize(normalized)
                pairs = normalized.alignments
                known = (normalized.normalized, list(map(itemgetter(0), pairs)), list(map(itemgetter(1), pairs)))
                if plan.aligned_chars < _MAX_ALIGNED_CHARS:
                    aligned[segment] = known
                    plan.aligned_chars += len(segment)
            parts.append(known[0])
            starts.extend(map(add, known[1], repeat(position)))
            ends.extend(map(add, known[2], repeat(position)))
        position = end
    normalized_text = "".join(parts)
    if not normalized_text:
        return (), (), (), (), 0  # (an emptied piece has no word, whatever the pre-tokenizer)
    if added is not None and added.searches()[1](normalized_text) is not None:
        matches = added.find_matches(normalized_text, True)  # (normalized-matched added tokens cut out)
    else:
        matches = ((None, (0, len(normalized_text))),)
    ids: list[int] = []
    tokens: list[str] = []
    offset_starts: list[int] = []
    offset_ends: list[int] = []
    words: list[int] = []
    n_words = 0
    for token_id, (start, end) in matches:
        if start == end:
            continue
        if token_id is not None:
            ids.append(token_id)
            tokens.append(normalized_text[start:end])
            offset_starts.append(start if identity else starts[start])
            offset_ends.append(end if identity else ends[end - 1])
            words.append(n_words)
            n_words += 1
            continue
        fields = _normalized_fields(plan, normalized_text[start:end], 0, at_start and not start, True)
        if fields is None:
            return None
        token_starts, token_ends = _flat_lists(fields[2], start)
        if any(map(eq, token_starts, token_ends)):
            return None
        ids += fields[0]
        tokens += fields[1]
        if identity:
            offset_starts += token_starts
            offset_ends += token_ends
        else:
            offset_starts += map(starts.__getitem__, token_starts)
            offset_ends += map(ends.__getitem__, map(sub, token_ends, repeat(1)))
        words.extend(map(add, fields[3], repeat(n_words)))
        n_words += min(fields[4], 1) if plan.one_word else fields[4]
    return tuple(ids), tuple(tokens), FlatOffsets((offset_starts, offset_ends, 0, 0)), tuple(words), n_words


def _slice_lengths(entries: list[Any], tokens: tuple[str, ...], odd_values: frozenset[str], words: list[str]) -> list[int] | None:
    """The lengths of the text the tokens cover, as :func:`_normalized_fields`' running sums
    need them, when some tokens are not slices of it (unk: a newline no training text had): the
    spans of the tokens of such words from their entries, which must tile their words; None
    otherwise (a byte-fallback char's tokens overlap).

    >>> _slice_lengths([((1,), ("ab",), (0,), (2,)), ((0, 2), ("<unk>", "c"), (0, 1), (1, 2))], ("ab", "<unk>", "c"), frozenset({"<unk>"}), ["ab", "éc"])
    [2, 1, 1]
    """
    odd = list(compress(count(), map(not_, map(odd_values.isdisjoint, map(_TOKENS, entries)))))
    if len(odd) > max(len(entries) // 8, 8):
        return None  # (a loop per odd word: the general offsets are then as fast)
    lengths = list(map(len, tokens))
    firsts = list(accumulate(map(len, map(_IDS, entries)), initial=0))
    tiling: dict[int, bool] = {}  # id(entry) -> whether its tokens tile its word
    for position in odd:
        entry = entries[position]
        tiles = tiling.get(id(entry))
        if tiles is None:
            _, _, starts, ends = entry[:4]
            tiles = tiling[id(entry)] = (
                starts[0] == 0 and ends[-1] == len(words[position]) and starts[1:] == ends[:-1] and all(map(lt, starts, ends))
            )
        if not tiles:
            return None
        lengths[firsts[position] : firsts[position + 1]] = map(sub, entry[3], entry[2])
    return lengths


def _flat_lists(offsets: Any, shift: int) -> tuple[list[int], list[int]]:
    """Offsets (pairs, or :class:`FlatOffsets` without special tokens) as lists of starts and
    ends, each moved by ``shift``: ``(FlatOffsets(([0, 2, 3], None, 0, 0)), 5) -> ([5, 7], [7, 8])``."""
    if type(offsets) is FlatOffsets:
        starts, ends = offsets[0], offsets[1]
        if ends is None:
            starts, ends = starts[:-1], starts[1:]
        if not shift:
            return list(starts), list(ends)
    else:
        starts, ends = map(itemgetter(0), offsets), map(itemgetter(1), offsets)
    return list(map(add, starts, repeat(shift))), list(map(add, ends, repeat(shift)))


def _piece_fields(
    plan: CutPlan, text: str, at_start: bool, added: Any = None, flat: bool = False, trim: tuple[bool] | tuple[()] = ()
) -> tuple[Any, ...] | None:
    """A piece's fields: whole on plain strings (:func:`_line_fields`), else by segments
    (``added``: the added vocabulary whose normalized-matched tokens are looked for; offsets
    are trimmed, ``trim``, only in the first way)."""
    if not plan.stages and added is None:
        fields = _normalized_fields(plan, text, 0, at_start, flat, trim)  # (no normalizer: the piece as it is)
    else:
        fields = _line_fields(plan, text, at_start, None if added is None else added.searches()[1], flat=flat, trim=trim)
    return fields if fields is not None or trim else _aligned_fields(plan, text, at_start, added)


def _whole_entry(pieces: list[str], entries: list[Any]) -> tuple[tuple[Any, ...], ...]:
    """A word's entry from its pieces' entries (each piece's offsets moved by where it starts)."""
    bases = list(chain.from_iterable(map(repeat, accumulate(map(len, pieces), initial=0), map(len, map(_IDS, entries)))))
    return (
        tuple(chain.from_iterable(map(_IDS, entries))), tuple(chain.from_iterable(map(_TOKENS, entries))),
        tuple(map(add, chain.from_iterable(map(_STARTS, entries)), bases)), tuple(map(add, chain.from_iterable(map(_ENDS, entries)), bases)),
    )


def _normalized_fields(
    plan: CutPlan, text: str, prefix: int, at_start: bool, flat: bool = False, trim: tuple[bool] | tuple[()] = ()
) -> tuple[Any, ...] | None:
    """:func:`_line_fields` on the normalized piece (``prefix``: how many chars the stages
    prepended), offsets in it less the prepended chars (``flat``: as :class:`FlatOffsets`
    where they come out as runs of ints, else always pairs; ``trim``: see _byte_level_fields)."""
    if plan.byte_words is not None:
        return None if prefix else _byte_level_fields(plan, text, at_start, flat, trim)
    splitter = plan.splitter
    floors = None  # (see _metaspace_words)
    if plan.words_of is not None:
        found = plan.words_of(text)
        if found is None:
            return None
        matches = list(found)
        n_words = len(matches)
        if not n_words:
            return (), (), (), (), 0
        match_type = type(matches[0])
        words = list(map(match_type.group, matches))
        word_starts = list(map(match_type.start, matches))
        if prefix:
            word_starts = list(map(sub, word_starts, repeat(prefix)))
            if n_words > 1 and word_starts[1] < 0:
                return None
    else:
        if splitter == "metaspace":
            pre_tokenizer = plan.pre_tokenizer
            replacement = pre_tokenizer.replacement
            text = text.replace(" ", replacement)
            scheme = pre_tokenizer.prepend_scheme
            if scheme != "never" and not text.startswith(replacement) and (scheme == "always" or at_start):
                text = replacement + text
                prefix += 1
        elif splitter == "ws_metaspace":
            if prefix:
                return None
            words, word_starts, floors = _metaspace_words(plan, text, at_start)
            if not words:
                return (), (), (), (), 0
        elif splitter == "cut":
            found = plan.cut(text)
            if found is None:
                return None
            words, word_starts = found
            if not words:
                return _NO_FIELDS
            if sum(map(len, words)) == len(text):
                word_starts = None  # (they tile the text: see below)
            elif prefix:
                word_starts = list(map(sub, word_starts, repeat(prefix)))
                if len(words) > 1 and word_starts[1] < 0:
                    return None
        elif splitter not in ("none", "tiles") or plan.run_findall is None:
            return None
        if splitter not in ("ws_metaspace", "cut"):
            # These words tile the text: their starts are the running sum of their lengths
            # (less the prepended chars, which are mapped below).
            words = plan.run_findall(text)
            if not words:
                return None if words is None else _NO_FIELDS
            word_starts = None  # the words tile the text: see below
        n_words = len(words)
    word_of = None  # per word from here, the pre-tokenizer's word it is a piece of (None: itself)
    again: list[int] = []  # (long words met before: their whole entries cached below)
    if plan.bpe is not None and plan.pieces is not False and floors is None and max(map(len, words)) > PIECES_FROM:
        cut = _long_words_cut(plan, words, word_starts)
        if cut is not None:
            long_words = words
            words, word_starts, word_of, again = cut
            if prefix and word_starts is not None and word_starts[1] < 0:
                return None
    wordlevel = plan.wordlevel
    if wordlevel is not None and not prefix and plan.words_of is not None:
        # One token per word: the word itself, or the unk token.
        vocab, unk_id, unk_token = wordlevel
        ids = list(map(vocab.get, words))
        if None in ids:
            if unk_id is None:
                return None  # the model raises: the general path says why
            tokens = tuple([unk_token if token_id is None else word for token_id, word in zip(ids, words)])
            ids = [unk_id if token_id is None else token_id for token_id in ids]
        else:
            tokens = tuple(words)
        word_ids = tuple(range(n_words)) if not plan.one_word else (0,) * n_words
        if flat:
            offsets = FlatOffsets((list(map(match_type.start, matches)), list(map(match_type.end, matches)), 0, 0))
            return tuple(ids), tokens, offsets, word_ids, n_words
        return tuple(ids), tokens, tuple(map(match_type.span, matches)), word_ids, n_words
    cache_get = plan.words.get
    entries = list(map(cache_get, words))
    if None in entries:
        encoder = plan.bpe or plan.wordpiece
        if encoder is None:
            for position in _missing(entries):
                word = words[position]
                # Looked up again: a word repeated in this piece is encoded once.
                entries[position] = cache_get(word) or _word_entry(plan, word)
        else:
            # _word_entry's BPE and WordPiece cases inline (a cold line has several new words).
            words_cache = plan.words
            for position in _missing(entries):
                word = words[position]
                entry = cache_get(word)
                if entry is None:
                    entry = encoder(word) or _model_word_entry(plan.model, word)
                    if len(words_cache) < _MAX_CACHED_WORDS:
                        words_cache[word] = entry
                entries[position] = entry
    for index in again:
        first = word_of.index(index)
        plan.words[long_words[index]] = _whole_entry(words[first : first + word_of.count(index)], entries[first : first + word_of.count(index)])
    ids = tuple(chain.from_iterable(map(_IDS, entries)))
    n = len(ids)
    tokens = tuple(chain.from_iterable(map(_TOKENS, entries)))
    odd_values = plan.odd_values
    lengths = None
    if word_starts is None and odd_values is not None:
        lengths = map(len, tokens) if odd_values.isdisjoint(tokens) else _slice_lengths(entries, tokens, odd_values, words)
    n_entries = len(entries)
    if lengths is not None:
        # The words tile the text and, but for a few unk tokens, each token is the slice of the
        # text it covers: offsets are running sums of the tokens' lengths.
        if plan.one_word:
            word_ids = (0,) * n
        elif n == n_entries:
            word_ids = tuple(range(n_words) if word_of is None else word_of)
        else:
            word_ids = tuple(chain.from_iterable(map(repeat, range(n_words) if word_of is None else word_of, map(len, map(_IDS, entries)))))
        bounds = list(accumulate(lengths, initial=-prefix))
        if prefix and n and bounds[1] > 0:
            # Only the first token reaches into the prepended chars: it starts at the first char.
            bounds[0] = 0
            prefix = 0
        if not prefix:
            if flat:
                return ids, tokens, FlatOffsets((bounds, None, 0, 0)), word_ids, n_words
            return ids, tokens, tuple(zip(bounds, islice(bounds, 1, None))), word_ids, n_words
        starts = bounds[:-1]
        ends = bounds[1:]
        index = 0
        while index < n and starts[index] < 0:
            # Inside the prepended chars: from the first char (tokens are never empty here).
            starts[index] = 0
            if ends[index] <= 0:
                ends[index] = 1
            index += 1
        if flat:
            return ids, tokens, FlatOffsets((starts, ends, 0, 0)), word_ids, n_words
        return ids, tokens, tuple(zip(starts, ends)), word_ids, n_words
    if word_starts is None:
        word_starts = list(accumulate(map(len, words), initial=-prefix))
        if prefix and n_entries > 1 and word_starts[1] < 0:
            return None
    if n == n_entries:
        bases = word_starts
        word_ids = (0,) * n if plan.one_word else tuple(range(n_words) if word_of is None else word_of)
    else:
        counts = list(map(len, map(_IDS, entries)))
        bases = list(chain.from_iterable(map(repeat, word_starts, counts)))
        word_ids = (0,) * n if plan.one_word else tuple(chain.from_iterable(map(repeat, range(n_words) if word_of is None else word_of, counts)))
    starts = list(map(add, chain.from_iterable(map(_STARTS, entries)), bases))
    ends = list(map(add, chain.from_iterable(map(_ENDS, entries)), bases))
    if floors is not None:
        # A token on a word's prepended char maps to the run's first char (see _metaspace_words).
        if any(map(eq, starts, ends)):
            return None  # (HF maps an empty range to itself: the general machinery)
        if n != n_entries:
            floors = list(chain.from_iterable(map(repeat, floors, counts)))
        starts = list(map(max, starts, floors))
        ends = list(map(max, ends, map(add, floors, repeat(1))))
    if prefix:
        # Offsets of the normalized piece less the prepended chars (taken off the bases); a
        # token inside them maps to the first char, and HF maps an empty range to itself.
        # Only the first word's tokens can reach into the prepended chars.
        fix = range(n) if any(map(eq, starts, ends)) else range(len(entries[0][0]))
        for index in fix:
            start = starts[index]
            end = ends[index]
            if start == end:
                starts[index] = ends[index] = start + prefix
            elif start < 0:
                starts[index] = 0
                ends[index] = end if end > 0 else 1
    if flat:
        return ids, tokens, FlatOffsets((starts, ends, 0, 0)), word_ids, n_words
    return ids, tokens, tuple(zip(starts, ends)), word_ids, n_words
