"""Unigram words straight to ``(ids, values, starts, ends)`` tuples for the word cache of
:mod:`tokviz.engine.cut`: :func:`unigram_word_encoder`."""

from __future__ import annotations

import math
import operator
from itertools import accumulate, compress, count, islice, repeat
from operator import is_not, itemgetter
from typing import Any

from tokviz.errors import VocabularyError
from tokviz.models.unigram.model import ALWAYS_DIRECT, UNK_PENALTY, UnigramTables

#: Scores this large or beyond (NaN too) take the general walk (see ``plain`` below).
_SCORE_BOUND = 1e250

#: Longer words go to the model (its prefix walk). So do words longer than the model's
#: ``ALWAYS_DIRECT`` once its budget of direct look-ups is spent (see ``Unigram._direct``).
_UNIGRAM_MAX_WORD = 1000


#: ``{longest piece: {word length: rows}}`` (see :func:`_rows`), shared by the encoders;
#: under the key -1, the whole rows by start (see below).
_ROWS: dict[int, dict[int, list[list[tuple[int, slice]]]]] = {}
#: Rows are kept for words up to this long; a longer word's are cut from whole rows kept by
#: start, while they hold at most this many pairs (~2 MB: 1,024 chars for a longest piece of 16).
_ROWS_KEPT = 32
_WHOLE_ROWS_LIMIT = 1 << 14


def _rows(rows: dict[int, list[list[tuple[int, slice]]]], size: int, longest: int) -> list[list[tuple[int, slice]]]:
    """Per start of a word of ``size`` chars, the ``(end, slice(start, end))`` of every longer
    piece that may start there (2 chars up to ``longest``), made once per length. A long
    word's rows are cut from whole rows kept per start (a list slice each, not new pairs).

    >>> _rows({}, 3, 2)
    [[(2, slice(0, 2, None))], [(3, slice(1, 3, None))], []]
    >>> rows = {}
    >>> _rows(rows, 40, 3)[38:], len(rows[-1])
    ([[(40, slice(38, 40, None))], []], 40)
    """
    if size <= _ROWS_KEPT:
        made = [[(end, slice(start, end)) for end in range(start + 2, min(size, start + longest) + 1)] for start in range(size)]
        rows[size] = made
        return made
    whole = rows.get(-1, [])
    if len(whole) < size:
        if size * longest > _WHOLE_ROWS_LIMIT:
            return [[(end, slice(start, end)) for end in range(start + 2, min(size, start + longest) + 1)] for start in range(size)]
        # (a new list, then one store: encoders in other threads see the old one or this one)
        whole = whole + [[(end, slice(start, end)) for end in range(start + 2, start + longest + 1)] for start in range(len(whole), size)]
        rows[-1] = whole
    cut = max(size - longest + 1, 0)
    return whole[:cut] + [whole[start][: size - start - 1] for start in range(cut, size)]


#: A vocabulary whose scores rise at fewer places than this is taken as runs in score order.
_MAX_RUNS = 64


def _score_runs(scores: list[float]) -> list[int] | None:
    """Where the runs of ``scores`` that never rise start (the first at 0), when there are
    fewer than ``_MAX_RUNS`` and no NaN; else None. A vocabulary in score order but for a few
    special pieces (XLM-R's ``<mask>`` at the end) is a few such runs.

    >>> _score_runs([0.0, -1.0, -2.0, 0.0, -0.5]), _score_runs([-1.0, float("nan"), -2.0])
    ([0, 3], None)
    """
    breaks = list(islice(compress(count(1), map(operator.not_, map(operator.ge, scores, islice(scores, 1, None)))), _MAX_RUNS))
    if len(breaks) == _MAX_RUNS:
        return None
    starts = [0, *breaks]
    # (a NaN fails both comparisons around it: it starts a run of its own)
    return None if any(scores[start] != scores[start] for start in starts) else starts


#: A run of more pieces than this (in score order) gets exact bounds for its first pieces only;
#: a char first met past them gets the highest score left in the run, an upper bound (see
#: :func:`_char_table`): the first chars of XLM-R's 250k pieces, one by one, took 36 ms.
_EXACT_PIECES = 1 << 15


def _char_table(
    tables: UnigramTables, prune: bool, ordered: bool, runs: list[int] | None = None
) -> tuple[dict[str, tuple[float | None, float]], str | None, float | None]:
    """``char -> (score of the one-char piece or None, highest score of a piece starting with
    it)`` for every char some piece starts with (the bound is +inf unless ``prune``); the
    first chars of the pieces in id order, or None; and the bound of the chars not in the table,
    or None when no piece starts with them. ``ordered``: scores never rise with the id;
    ``runs``: else where the runs that never rise start (see :func:`_score_runs`), if known.

    The bound lets the Viterbi skip a start: when ``best[start] + bound`` is below the score
    of a path to the end already found, no path through there can win, provided every score
    is <= 0 (a path's running sum never rises; float addition is monotone, so this holds for
    the rounded sums too). A position on the winning path has a running sum >= the final
    score, so it is never skipped and every candidate that decides it is computed exactly.
    Any larger bound is as safe (it skips less).

    A vocabulary in score order without duplicated pieces, of up to ``_EXACT_PIECES``, gets an
    empty table and the first chars (entries made on first use, see ``entry_of`` in
    :func:`unigram_word_encoder`). Runs in score order get exact bounds from their first
    ``_EXACT_PIECES`` pieces and the highest score past those for the rest.

    >>> from tokviz.models import Unigram
    >>> model = Unigram([("<unk>", 0.0), ("a", -1.0), ("ab", -0.5), ("b", -2.0)], unk_id=0)
    >>> table, firsts, tail = _char_table(model.word_tables(), True, False)
    >>> sorted(table.items()), firsts, tail
    ([('<', (None, 0.0)), ('a', (-1.0, -0.5)), ('b', (-2.0, -2.0))], None, None)
    >>> _char_table(Unigram([("<unk>", 0.0), ("ab", -0.5), ("a", -1.0)], unk_id=0).word_tables(), True, True)
    ({}, '<aa', None)
    >>> runs = Unigram([("<unk>", 0.0), ("b", -3.0), ("ab", -4.0), ("a", -0.5), ("bb", -1.0)], unk_id=0)
    >>> sorted(_char_table(runs.word_tables(), True, False, [0, 3])[0].items())
    [('<', (None, 0.0)), ('a', (-0.5, -0.5)), ('b', (-3.0, -1.0))]
    """
    scores = tables.scores
    first = itemgetter(0)
    tail = None
    if ordered and len(tables.token_to_id) == len(scores) and len(scores) <= _EXACT_PIECES:
        return {}, "".join(map(first, tables.token_to_id)), None
    if not prune:
        bounds = dict.fromkeys(map(first, tables.token_to_id), math.inf)
    elif ordered or runs is not None:
        # The highest score per first char: in a dict built from the lowest score up, the last
        # write wins. Trained vocabularies come sorted by score (highest first): no sort then.
        # Runs in score order the same, the longest in C and the others' chars merged into it.
        tokens = tables.tokens
        starts = [0] if ordered else runs
        spans = sorted(zip(starts, [*starts[1:], len(scores)]), key=lambda span: span[0] - span[1])
        bounds = {}
        for start, end in spans:
            if end - start > _EXACT_PIECES:
                end = start + _EXACT_PIECES
                tail = scores[end] if tail is None else max(tail, scores[end])
            run = dict(zip(map(first, reversed(tokens[start:end])), reversed(scores[start:end])))
            if not bounds:
                bounds = run
                continue
            for char, bound in run.items():
                if bound > bounds.get(char, -math.inf):
                    bounds[char] = bound
        if tail is not None:
            bounds = {char: bound if bound > tail else tail for char, bound in bounds.items()}
    else:
        order = sorted(range(len(scores)), key=scores.__getitem__)
        bounds = dict(zip(map(first, map(tables.tokens.__getitem__, order)), map(scores.__getitem__, order)))
    get = tables.token_to_id.get
    table = {char: (None if (one := get(char)) is None else scores[one], bound) for char, bound in bounds.items()}
    return table, None, tail


def unigram_word_encoder(model: Any) -> Any:
    """A function ``word -> (ids, values, starts, ends)`` equal to ``model.tokenize`` for a
    Unigram model, or None for anything else (the function returns None for a word it leaves
    to the model: an unknown char without an unk token, a word over 32 chars once the model's
    budget of direct look-ups is spent, see ``Unigram._direct``).

    The walk looks substrings up in the piece dict directly (see ``Unigram._lookup``; no
    prefix dict to build, ~25 ms on 25k pieces), with the model's candidates in the model's
    order, so the same ties: at each start the one-char piece (or unknown node), then the
    longer ones (:func:`_rows`), each end keeping the first best. Scores start at -inf, exact
    while every sum is finite (else the general walk below, the model's line for line). A
    start that cannot beat a path found so far is skipped (:func:`_char_table`). The path is
    read back from the starts alone, runs of unknown chars fused.

    >>> from tokviz.models import Unigram
    >>> encode = unigram_word_encoder(Unigram([("<unk>", 0.0), ("▁hu", -1.0), ("g", -2.0), ("▁hug", -2.5)], unk_id=0))
    >>> encode("▁hug"), encode("▁hugxy")
    (((3,), ('▁hug',), (0,), (4,)), ((3, 0), ('▁hug', 'xy'), (0, 4), (4, 6)))
    """
    tables = model.word_tables() if hasattr(model, "word_tables") else None
    if not isinstance(tables, UnigramTables):
        return None
    get = tables.token_to_id.get
    scores = tables.scores
    unk_id = tables.unk_id
    unk_score = tables.min_score - UNK_PENALTY
    byte_fallback = tables.byte_fallback
    tokens = tables.tokens
    # byte -> the id of its <0xNN> piece (or None), for byte fallback
    byte_piece_ids = [get(f"<0x{byte:02X}>") for byte in range(256)] if byte_fallback else []
    longest = tables.longest
    direct = tables.direct
    spend_direct = tables.spend_direct
    # Trained vocabularies come in score order (highest first; never with a NaN): their
    # highest and lowest scores are the ends, no pass over the scores for them.
    if len(scores) <= _EXACT_PIECES:
        ordered = all(map(operator.ge, scores, islice(scores, 1, None)))
        runs = None if ordered else _score_runs(scores)
    else:  # (one pass: [0] when the scores never rise; a second over XLM-R's 250k took 5 ms)
        runs = _score_runs(scores)
        ordered = runs == [0]
    # With finite scores no sum of a word's scores overflows: a start at -inf replaces the
    # "first candidate always wins" test. Other vocabularies take the general walk.
    if ordered and scores:
        plain = len(scores) * max(-scores[-1], scores[0]) < _SCORE_BOUND  # >= the sum of their abs
        top_score = scores[0]
    elif runs is not None:  # (each run's first score is its highest, its last its lowest)
        top_score = max([scores[start] for start in runs])
        lowest = min([scores[end - 1] for end in [*runs[1:], len(scores)]])
        plain = len(scores) * max(-lowest, top_score) < _SCORE_BOUND
    else:
        plain = sum(map(abs, scores)) < _SCORE_BOUND  # False for NaN
        top_score = max(scores, default=0.0)
    # A piece that is the unk token is fused like unknown chars: such words take the general walk.
    unk_piece = tokens[unk_id] if unk_id is not None else None
    minus_inf = -math.inf
    # Skipping starts (see _char_table) leaves some values off the final path below their
    # exact ones: not with unk_id None, where an unknown node's use is an error wherever it is.
    prune = plain and top_score <= 0.0 and unk_score <= 0.0 and unk_id is not None
    table, firsts, tail = _char_table(tables, prune, ordered, runs)
    chars = table.get
    unknown_entry = (None, unk_score if prune else math.inf)  # a char no piece starts with: the unknown node only
    inf = math.inf

    def entry_of(char: str) -> tuple[float | None, float]:
        # A char missing from the table: made now if some piece starts with it (see _char_table),
        # or with the bound of the pieces past those the table was made of.
        if tail is not None:
            one = get(char)
            entry = None if one is None else scores[one], tail
        else:
            index = -1 if firsts is None else firsts.find(char)
            if index < 0:
                entry = unknown_entry
            else:
                one = get(char)
                entry = None if one is None else scores[one], scores[index] if prune else inf
        table[char] = entry
        return entry

    rows = _ROWS.get(longest)
    if rows is None:
        rows = {}
        if len(_ROWS) < 64:
            _ROWS[longest] = rows

    def pieces(word: str, cuts: list[Any]) -> tuple[tuple[Any, ...], ...] | None:
        # The pieces of ``word`` at ``cuts`` (last first): unknown ones as bytes or unk.
        ids: list[int] = []
        values: list[str] = []
        starts: list[int] = []
        ends: list[int] = []
        for start, end in reversed(cuts):
            piece = word[start:end]
            piece_id = get(piece)
            if piece_id is None:
                if byte_fallback:
                    byte_ids = list(map(byte_piece_ids.__getitem__, piece.encode("utf-8")))
                    if None not in byte_ids:
                        for byte_id in byte_ids:
                            ids.append(byte_id)
                            values.append(tokens[byte_id])
                            starts.append(start)
                            ends.append(end)
                        continue
                if unk_id is None:
                    return None
                piece_id = unk_id
            ids.append(piece_id)
            values.append(piece)
            starts.append(start)
            ends.append(end)
        return tuple(ids), tuple(values), tuple(starts), tuple(ends)

    def encode(word: str) -> tuple[tuple[Any, ...], ...] | None:
        size = len(word)
        if size > ALWAYS_DIRECT and not direct(size, 0):
            return None  # the model's prefix walk
        if not plain or (unk_piece is not None and unk_piece in word):
            return general(word)
        best = [minus_inf] * (size + 1)
        best[0] = 0.0
        back = [0] * (size + 1)  # start of the best piece ending here; ~start for an unknown char
        unknown = False
        # A score some path to the end reaches (<= the best path's; -inf unless prune): starts
        # that cannot reach it are skipped (see _char_table). best[size] as the walk goes, or
        # sooner a two-piece path (see below); kept apart from best[size], whose ties it must
        # not decide.
        floor = minus_inf
        start = -1
        for row in rows.get(size) or _rows(rows, size, longest):
            start += 1
            here = best[start]
            entry = chars(word[start])
            if entry is None:
                entry = entry_of(word[start])
            one, bound = entry
            if here + bound < floor:
                # No piece from here scores more than `bound`, and later pieces only lower a
                # path: nothing through here beats (or ties) a path to the end already found,
                # so not the best one either. Positions on the final path keep their exact
                # values and back-pointers (see _char_table).
                continue
            end = start + 1
            if one is None:
                candidate = unk_score + here
                if candidate > best[end]:
                    if unk_id is None:
                        return None  # the model explains the error
                    best[end] = candidate
                    back[end] = ~start
                    unknown = True
                if entry is unknown_entry:  # no piece starts here (nor ends at size but at the last start)
                    continue
            else:
                candidate = one + here
                if candidate > best[end]:
                    best[end] = candidate
                    back[end] = start
            for end, span in row:
                piece_id = get(word[span])
                if piece_id is not None:
                    candidate = scores[piece_id] + here
                    if candidate > best[end]:
                        best[end] = candidate
                        back[end] = start
            top = best[size]
            if top > floor:
                if prune:
                    floor = top
            elif not start and prune:
                # No piece is the whole word: a floor from the start with one more look-up,
                # the longest piece the word starts with followed by the rest of the word.
                cut = min(size - 1, longest)
                while best[cut] == minus_inf:
                    cut -= 1
                if size - cut <= longest:
                    piece_id = get(word[cut:])
                    if piece_id is not None:
                        floor = best[cut] + scores[piece_id]
        if size > ALWAYS_DIRECT:
            # The budget pays for the look-ups of the starts some piece begins with (the
            # walk skips the others: a run of unknown chars costs next to nothing).
            spend_direct(longest * sum(map(is_not, map(chars, word), repeat(unknown_entry))))
        start = back[size]
        if not unknown:
            if not start:
                if not size:
                    return (), (), (), ()
                return (get(word),), (word,), (0,), (size,)
            middle = back[start]
            if not middle:  # two pieces (a third of the words of an English text, most of the rest one)
                head, tail = word[:start], word[start:]
                return (get(head), get(tail)), (head, tail), (0, start), (start, size)
            ends = [size, start]
            while middle:
                ends.append(middle)
                middle = back[middle]
            ends.reverse()
            starts = [0, *ends]
            starts.pop()
            values = tuple(map(word.__getitem__, map(slice, starts, ends)))
            return tuple(map(get, values)), values, tuple(starts), tuple(ends)
        # Back from the end; a run of unknown chars is one piece, as the model fuses them.
        cuts: list[tuple[int, int]] = []
        end = size
        while end:
            start = back[end]
            if start < 0:
                start = ~start
                while start and back[start] < 0:
                    start = ~back[start]
            cuts.append((start, end))
            end = start
        return pieces(word, cuts)

    def general(word: str) -> tuple[tuple[Any, ...], ...] | None:
        # Any scores (NaN, infinite) and a word holding the unk piece: the model's own Viterbi
        # (``Unigram.encode``, unknown runs fused), cut back into pieces here.
        try:
            segmented = model.encode(word)
        except VocabularyError:
            return None  # an unknown char and no unk token: the model explains the error
        bounds = list(accumulate(map(len, segmented), initial=0))
        return pieces(word, list(zip(bounds, bounds[1:]))[::-1])

    return encode
