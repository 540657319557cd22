"""A loaded SentencePiece model: normalize, then segment, exactly as sentencepiece encodes.

The four model types segment the normalized string (``▁`` for spaces) differently:

- **unigram** — Viterbi over every piece found in the string, scores added in float32 along the
  whole line (sentencepiece's ``EncodeOptimized``); a character no piece covers is an unknown node
  scored ``min(normal scores) - 10``; a user-defined piece of ``n`` bytes scores ``0.1 * (n - 1)``
  (in n-best and sampling lattices ``n`` counts characters); ties keep the earlier-found node;
- **bpe** — start from characters (user-defined symbols frozen whole), repeatedly merge the
  adjacent pair whose concatenation is a piece with the highest score, leftmost on ties;
- **char** — one piece per character; **word** — one piece per ``▁``-started word.

Then, as ``SentencePieceProcessor`` does: unknown pieces become ``<0xNN>`` byte pieces when the
model has byte fallback, otherwise runs of unknowns are merged into one ``<unk>``.

How it goes fast (a first pass over a held-out text costs 1.6-1.75x sentencepiece's C++ in
instructions for unigram, 1.85-1.9x for BPE, a little more in time; a text seen before ~0.4x): the unigram
Viterbi reads the text once through an Aho-Corasick automaton of the pieces built at load
(:class:`_PieceAutomaton`); BPE keeps the adjacent pairs' scores in a list
(:meth:`SentencePieceModel._bpe_symbols`); when no piece crosses a ``▁`` each distinct word is
segmented once and kept as a tuple of pieces or ids (:class:`_WordTable`), so a text is its
normalization, a split and one look-up per word (:meth:`SentencePieceModel.encode_as`). A line
holding a word float32 may decide otherwise is checked along its float32 score, its words added up a
binade of float32 at a time (:meth:`SentencePieceModel._checked_line`).

    >>> from tokviz.sentencepiece.model_proto import ModelProto, SentencePiece, PieceType, TrainerSpec, NormalizerSpec
    >>> proto = ModelProto(pieces=[SentencePiece("<unk>", 0, PieceType.UNKNOWN), SentencePiece("▁h", -1),
    ...     SentencePiece("ug", -2), SentencePiece("▁", -3), SentencePiece("h", -4), SentencePiece("u", -5), SentencePiece("g", -6)],
    ...     trainer_spec=TrainerSpec(model_type=2), normalizer_spec=NormalizerSpec(name="identity"))
    >>> SentencePieceModel(proto).encode("hug x")
    [('▁h', 1), ('ug', 2), ('▁', 3), ('x', 0)]
"""

from __future__ import annotations

import heapq
import math
import random
import re
import struct
import time
from array import array
from bisect import bisect_left
from itertools import accumulate, chain, compress, islice, repeat
from operator import add, attrgetter, contains, eq, is_, itemgetter
from typing import Any, Sequence

from tokviz.errors import SerializationError
from tokviz.models.unigram.lattice import Lattice
from tokviz.sentencepiece.model_proto import ModelProto, ModelType, PieceType
from tokviz.sentencepiece.normalizer import SentencePieceNormalizer

__all__ = ["SentencePieceModel", "byte_piece", "sentencepiece_nbest", "UNK_PENALTY"]

UNK_PENALTY = 10.0
_F32 = struct.Struct("<f")
#: sentencepiece's ``kScoreResetThreshold``: a line's running score past it in size is taken off the scores ahead
_RESET = 100_000.0
#: Scores below this in size have a float32 ulp of at most _CLOSE: a word whose decisions are all won by
#: more than _CLOSE per character (float64) is decided the same from any float32 start that keeps its
#: scores below _TOP, as sentencepiece's reset keeps them (see :meth:`_PieceAutomaton.split`)
_TOP = 2.0 ** 17
_CLOSE = 2.0 ** -7
_INF = math.inf
#: Leads under this are noted by :meth:`_PieceAutomaton.split` (enough for words up to 32 characters: 32 * _CLOSE)
_LEAD = 0.25


def _f32(value: float) -> float:
    """Round to float32, as sentencepiece's ``float`` arithmetic does: ``_f32(0.1) == 0.10000000149011612``."""
    return _F32.unpack(_F32.pack(value))[0]


def _ulp(size: float) -> float:
    """A float32 ulp of numbers below ``size`` in size (at most; ``_ulp(1500.0) == 2.0 ** -13``)."""
    return 2.0 ** (math.frexp(size)[1] - 24)


def user_defined_score(length: int) -> float:
    """sentencepiece 0.2.3's score of a user-defined piece ``length`` long (bytes when encoding, characters
    in a lattice): longer ones win whatever the normal pieces' scores. ``user_defined_score(3) == _f32(0.2)``."""
    return _f32(0.1 * (length - 1))


class _Heap:
    """libstdc++'s ``std::priority_queue`` (a max-heap by ``fx``): same sift order, so the same ties."""

    __slots__ = ("items",)

    def __init__(self) -> None:
        self.items: list[tuple[float, Any]] = []

    def __len__(self) -> int:
        return len(self.items)

    def _sift_up(self, hole: int, top: int, value: tuple[float, Any]) -> None:
        items = self.items
        parent = (hole - 1) // 2
        while hole > top and items[parent][0] < value[0]:
            items[hole] = items[parent]
            hole = parent
            parent = (hole - 1) // 2
        items[hole] = value

    def push(self, value: tuple[float, Any]) -> None:
        self.items.append(value)
        self._sift_up(len(self.items) - 1, 0, value)

    def top(self) -> tuple[float, Any]:
        return self.items[0]

    def pop(self) -> None:
        items = self.items
        length = len(items) - 1
        value = items[length]
        items[length] = items[0]
        hole, child = 0, 0
        while child < (length - 1) // 2:
            child = 2 * (child + 1)
            if items[child][0] < items[child - 1][0]:
                child -= 1
            items[hole] = items[child]
            hole = child
        if length % 2 == 0 and child == (length - 2) // 2:
            child = 2 * (child + 1)
            items[hole] = items[child - 1]
            hole = child - 1
        if length:
            self._sift_up(hole, 0, value)
        items.pop()


def sentencepiece_nbest(size: int, nodes: Sequence[tuple[int, int, int, float]], n: int, deadline: float | None = None
                        ) -> list[tuple[list[tuple[int, int, int]], float]]:
    """sentencepiece's ``Lattice::NBest`` (A* from the end, float32 scores) over ``(start, end, id, score)`` nodes.

    With a ``deadline`` (``time.monotonic()`` seconds) passed, the search stops and returns ``[]``
    (sentencepiece's n-best timeout; the caller then gives the best segmentation alone).

    >>> sentencepiece_nbest(2, [(0, 1, 1, -1.0), (0, 2, 3, -1.5), (1, 2, 2, -1.0)], 3)
    [([(0, 2, 3)], -1.5), ([(0, 1, 1), (1, 2, 2)], -2.0)]
    """
    end_nodes: list[list[int]] = [[] for _ in range(size + 1)]
    begin_nodes: list[list[int]] = [[] for _ in range(size + 1)]
    bos, eos = len(nodes), len(nodes) + 1
    starts = [s for s, _, _, _ in nodes] + [0, size]
    scores = [sc for _, _, _, sc in nodes] + [0.0, 0.0]
    end_nodes[0].append(bos)
    for index, (start, end, _, _) in enumerate(nodes):
        begin_nodes[start].append(index)
        end_nodes[end].append(index)
    begin_nodes[size].append(eos)
    backtrace = [0.0] * (len(nodes) + 2)
    for pos in range(size + 1):
        # (the time limit counts from the call: a long text may spend it before the search starts)
        if deadline is not None and not pos & 1023 and time.monotonic() > deadline:
            return []
        for right in begin_nodes[pos]:
            best, found = 0.0, False
            for left in end_nodes[pos]:
                score = _f32(backtrace[left] + scores[right])
                if not found or score > best:
                    best, found = score, True
            if not found:
                return []
            backtrace[right] = best
    results: list[tuple[list[tuple[int, int, int]], float]] = []
    agenda = _Heap()
    agenda.push((backtrace[eos], (eos, 0.0, None)))
    steps = 0
    while len(agenda):
        if deadline is not None and not steps & 1023 and time.monotonic() > deadline:
            return []
        steps += 1
        fx, (node, gx, nxt) = agenda.top()
        agenda.pop()
        if node == bos:
            path: list[tuple[int, int, int]] = []
            link = nxt
            while link is not None and link[0] != eos:
                start, end, piece_id, _ = nodes[link[0]]
                path.append((start, end, piece_id))
                link = link[2]
            results.append((path, fx))
            if len(results) == n:
                break
            continue
        current = (node, gx, nxt)
        for left in end_nodes[starts[node]]:
            agenda.push((_f32(backtrace[left] + gx), (left, _f32(scores[left] + gx), current)))
        if len(agenda) >= 10_000:  # sentencepiece keeps the best min(512, 10 n) when the agenda grows
            kept = _Heap()
            for _ in range(min(512, n * 10)):
                kept.push(agenda.top())
                agenda.pop()
            agenda = kept
    return results


def byte_piece(byte: int) -> str:
    """``byte_piece(0x41) == '<0x41>'``."""
    return f"<0x{byte:02X}>"



#: The kinds of piece segmentation can pick.
_MATCHABLE = frozenset((PieceType.NORMAL, PieceType.USER_DEFINED, PieceType.UNUSED))

#: Before each "▁" that follows another character (a zero-width cut), and a piece holding one.
_RUN_CUT = re.compile("(?<=[^\u2581])(?=\u2581)")
_AFTER_OTHER = re.compile("[^\u2581]\u2581")

#: BPE on a list of pair scores costs a pass over the list per merge: texts longer than this
#: (a line of code with no spaces, a model whose pieces hold "▁" so lines are not cut into
#: words) take the queue of :meth:`SentencePieceModel._bpe` instead.
_PAIR_LIST_LONGEST = 48

#: The score of a pair that is no piece, and an endless supply of it (``map`` stops at the pairs' end).
_NO_MERGE = -math.inf
_NEVER = repeat(_NO_MERGE)

#: Vocabularies with more prefixes than this get their automaton's states as texts need them.
_EAGER_STATES = 40_000

#: Failure transitions an automaton keeps as shortcuts (~100 bytes each), then it follows the links.
_MEMO_ROOM = 1 << 20


def _prefix_levels(pieces: Any) -> list[set[str]]:
    """The prefixes of ``pieces`` by length, each level cut in C from the pieces that long or longer.

    >>> [sorted(level) for level in _prefix_levels(["ab", "b", "abc"])]
    [['a', 'b'], ['ab'], ['abc']]
    """
    ordered = sorted(pieces, key=len)
    lengths = list(map(len, ordered))
    return [set(map(itemgetter(slice(0, cut)), islice(ordered, bisect_left(lengths, cut), None)))
            for cut in range(1, (lengths[-1] if lengths else 0) + 1)]


class _State(dict):
    """One state of :class:`_PieceAutomaton`: this dict is its transitions (character -> the next
    state's ``entry``; a missing one is found by ``__missing__`` and kept), ``entry`` is ``(state,
    -length, score, first candidate, the other candidates)``, candidates ``(-length, score + _LEAD, id,
    piece, score)`` longest first (``best[-length]`` is where one starts; the raised score finds a
    better candidate or one within ``_LEAD`` in one comparison), ``found`` them without the unknown
    node, ``text`` what it has read, ``fail`` its failure state.

    Reading a character is then one C-level subscript and one unpacking (``state, pick, rest =
    state[char]``), and the first candidate needs no comparison: a fifth less time in the Viterbi
    loop than a list state and its ``dict.get``.
    """

    __slots__ = ("entry", "found", "text", "fail", "automaton")

    def __missing__(self, char: str) -> tuple[Any, ...]:
        """The entry after ``char`` where no edge is kept: the trie's (made now, when lazy), else the
        first failure state's that has one; kept as a shortcut (a first pass over a text meets
        thousands of these: walked here with ``dict.get``, not one ``__missing__`` call a state)."""
        automaton = self.automaton
        state, following = self, None
        if automaton.lazy:
            while following is None:
                if state.text + char in automaton.prefixes:
                    following = automaton._state(state.text + char).entry
                elif not state.text:  # root (or the unknown state): no piece starts with char
                    following = automaton.root.get(char, automaton.unknown_state.entry)
                else:
                    state = state.fail
                    following = state.get(char)
        else:  # (every state made: the first failure state with an edge, else root's)
            while state.text:
                state = state.fail
                following = state.get(char)
                if following is not None:
                    break
            else:
                following = automaton.root.get(char, automaton.unknown_state.entry)
        if automaton.memo_room > 0:  # (bounded: texts of many distinct characters add no end of shortcuts)
            automaton.memo_room -= 1
            self[char] = following
        return following


class _Close(tuple):
    """A close word's pieces or ids (see :meth:`_PieceAutomaton.split`) and its ``margin``: reading it
    (a line's words are added to it by reading them) counts one more in its model's ``closes``, so
    the line is checked (:meth:`SentencePieceModel._checked_line`); the other words, plain tuples,
    cost nothing more. (A count, never reset: threads sharing a model see their own lines' reads.)

        >>> class Model: closes = 0
        >>> line = []
        >>> line += _Close(("▁b", "a", "se"), 0.0001, Model)
        >>> line, Model.closes
        (['▁b', 'a', 'se'], 1)
    """

    margin: float
    watch: Any

    def __new__(cls, items: Any, margin: float, watch: Any) -> "_Close":
        close = super().__new__(cls, items)
        close.margin, close.watch = margin, watch
        return close

    def __iter__(self) -> Any:
        self.watch.closes += 1
        return tuple.__iter__(self)

    def __reduce__(self) -> Any:
        return _Close, (tuple(tuple.__iter__(self)), self.margin, self.watch)


#: A word whose scores can move a line's by more than this (its length times the automaton's ``size``)
#: is added up piece by piece; so is every word once the line's score is past _ROOM_TOP in size
_ROOM = 2048.0
_ROOM_TOP = _RESET - _ROOM
#: words kept per binade (:meth:`SentencePieceModel._checked_line`; a text of 20,000 lines meets ~40k)
_MOVED_ROOM = 50_000
#: Below this in size, most pieces' scores are a tie of float32's spacing (its last bit): a line's first
#: words are added up piece by piece
_BULK_FROM = 512.0


class _Rounded(dict):
    """``piece or id -> how far it moves a line's score`` (in size) within float32's binade
    ``[2**(exponent - 1), 2**exponent]``: there sentencepiece's running score is a multiple of the spacing
    ``u = 2**(exponent - 24)``, so each float32 sum is that score plus the piece's score rounded to a
    multiple of ``u``. ``inf`` where that does not hold: a tie (the score's parity would decide), a
    positive score (the sums need not stay in the binade). A float key is a score itself (a word holding
    unknowns: its path's, :class:`_ScoreKeys`); with ``unknown`` (pieces, no byte fallback) a text that
    is no piece is a merged run of unknown characters. Sums of such moves are exact in float64:
    :meth:`SentencePieceModel._checked_line` adds a run of words in C.

        >>> _Rounded({"▁a": -1.25, "b": -0.5, 7: -0.5}, -21)["▁a"]  # (u = 2**-45: a multiple)
        1.25
        >>> moves = _Rounded({"▁a": -1.2, "b": -0.5, "c": 0.5}, 24)  # (u = 1)
        >>> moves["▁a"], moves["b"], moves["c"], moves[-2.25]  # (-1.2 to -1; -0.5 a tie)
        (1.0, inf, inf, 2.0)
        >>> _Rounded({}, 24, -2.25)["xyz"]  # (three unknown nodes)
        6.0
    """

    __slots__ = ("scores", "unit", "unknown")

    def __init__(self, scores: dict[Any, float], exponent: int, unknown: float | None = None) -> None:
        super().__init__()
        self.scores, self.unit, self.unknown = scores, 2.0 ** (exponent - 24), unknown

    def __missing__(self, key: Any) -> float:
        value, count = key if type(key) is float else self.scores.get(key), 1
        if value is None and self.unknown is not None and type(key) is str:
            value, count = self.unknown, len(key)  # (a merged run of unknowns: a node a character)
        moved = _INF
        if value is not None and value <= 0.0:
            steps = value / self.unit
            if abs(steps - round(steps)) != 0.5:
                moved = -round(steps) * self.unit * count
        self[key] = moved
        return moved


class _ScoreKeys(dict):
    """``part -> what its scores are read by`` for :class:`_Rounded`: the word's pieces or ids (the table's
    tuple), or, for a word holding unknowns (merged, or in bytes), its float64 path's scores."""

    __slots__ = ("table",)

    def __init__(self, table: "_WordTable") -> None:
        super().__init__()
        self.table = table

    def __missing__(self, part: str) -> tuple[Any, ...]:
        table = self.table
        model, words = table.model, table[part]
        keys = tuple(tuple.__iter__(words))
        if not all(map(model._score_of.__contains__, keys)):
            word = table.prefix + part
            keys = tuple(model._unknown_paths.get(word) or model._unknown_paths.setdefault(word, model._automaton.path_scores(word)))
        self[part] = keys
        return keys


class _PieceAutomaton:
    """sentencepiece's unigram Viterbi, read end by end over an Aho-Corasick automaton of the pieces.

    sentencepiece walks its trie from every start and keeps, per end, the first best candidate
    (starts in increasing order, ``>`` to replace). The same candidates for an end ``e`` are the
    pieces that are suffixes of the text read so far, and the automaton's state (the longest such
    suffix that some piece starts with) lists them once, longest first (earliest start first); the
    unknown node (one character, ``min score - 10``) comes last, where the character is no
    one-character piece, as sentencepiece adds it after the pieces of its start. Per character:
    one dict look-up for the next state and a short loop over its candidates, no substring made.
    States and their transitions are made on first use and kept (:class:`_State`).

        >>> from tokviz.sentencepiece.model_proto import ModelProto, SentencePiece, PieceType, TrainerSpec
        >>> proto = ModelProto(pieces=[SentencePiece("<unk>", 0, PieceType.UNKNOWN), SentencePiece("ab", -1),
        ...     SentencePiece("a", -2), SentencePiece("b", -2), SentencePiece("bc", -1.5)], trainer_spec=TrainerSpec(model_type=1))
        >>> _PieceAutomaton(SentencePieceModel(proto)).viterbi("abcx")
        [('a', 2), ('bc', 4), ('x', 0)]
    """

    __slots__ = ("pieces", "prefixes", "states", "root", "unknown", "unknown_state", "memo_room", "lazy", "after_space",
                 "model", "size", "cap", "space")

    def __init__(self, model: "SentencePieceModel") -> None:
        self.model = model
        pieces = self.pieces = {piece: (-len(piece), score + _LEAD, piece_id, piece, score)
                                for piece, (piece_id, score) in model.scored.items()}
        levels = _prefix_levels(pieces)
        self.unknown = (-1, model.unk_score + _LEAD, model.unk_id, None, model.unk_score)
        #: the most a character can move a score: no best score ``n`` characters on is further away
        self.size = max(map(abs, (model.unk_score, *map(itemgetter(1), model.scored.values()))))
        #: no score of a line is bigger in size: sentencepiece's reset, then a piece or an unknown node after it
        self.cap = _RESET + self.size * model.max_piece_length + 1
        self.root = root = self._new_state("", None, ())
        self.states: dict[str, _State] = {"": root}
        # a character no piece starts with: the unknown node alone, then root's transitions
        self.unknown_state = self._new_state("", root, (), (self.unknown,))
        self.memo_room = _MEMO_ROOM
        # A small vocabulary's states are all made at load (4,000 pieces: ~10k states, ~10 ms);
        # a large one's (XLM-R's 250k pieces: over a million) only as texts reach them.
        self.lazy = sum(map(len, levels)) > _EAGER_STATES
        self.prefixes: set[str] = set().union(*levels) if self.lazy else set()
        if not self.lazy:
            self._build(levels)
        self.after_space: _State = self.root["\u2581"][0]
        #: where a word's walk starts after its "▁": (state, "▁"'s candidate, its score)
        self.space = (self.after_space, self.after_space.entry[3], self.after_space.entry[3][4])

    def _new_state(self, text: str, fail: _State | None, found: tuple[Any, ...] | None = None,
                   candidates: tuple[Any, ...] | None = None) -> _State:
        """A state (kept in ``states`` when it is a piece prefix: ``found`` not given); no ``__init__``
        call, as a 4k model makes ten thousand at load."""
        if found is None:
            own = self.pieces.get(text)
            found = fail.found if own is None else (own, *fail.found)  # type: ignore[union-attr]
            candidates = found if found and found[-1][0] == -1 else (*found, self.unknown)
            state = self.states[text] = _State()
        else:
            state = _State()
        state.automaton, state.text, state.fail, state.found = self, text, state if fail is None else fail, found
        state.entry = (state, candidates[0][0], candidates[0][4], candidates[0], candidates[1] if len(candidates) > 1 else None,
                       candidates[2:] or None) if candidates else (state, 0, 0.0, None, None, None)
        return state

    def _state(self, text: str) -> _State:
        """The state of ``text`` (a prefix of some piece), made on first use (a large vocabulary)."""
        state = self.states.get(text)
        if state is not None:
            return state
        fail = self.root
        for cut in range(1, len(text)):  # the longest proper suffix some piece starts with
            if text[cut:] in self.prefixes:
                fail = self._state(text[cut:])
                break
        return self._new_state(text, fail)

    def _build(self, levels: list[set[str]]) -> None:
        """Every state of the pieces' trie, shortest first: a state fails over to where its
        parent's failure goes on its last character (the textbook construction)."""
        root, states = self.root, self.states
        for text in chain.from_iterable(levels):
            parent, char = states[text[:-1]], text[-1]
            fail = root
            if parent is not root:
                back = parent.fail
                while True:
                    found = back.get(char)
                    if found is not None or back is root:
                        fail = root if found is None else found[0]
                        break
                    back = back.fail
            parent[char] = self._new_state(text, fail).entry

    def split(self, text: str, tail: str | None = None, kind: int = 0, lead: float = _LEAD) -> Any:
        """``(pieces, ids)`` of the best segmentation of ``text`` (unknown characters one by one), scores
        added in float64 from 0; ``tail``: ``text`` without its first character, a "▁" read in advance
        (a word's: ``"▁" + tail``). ``kind`` 3 (pieces) or 2 (ids): that tuple alone, unknowns finished
        (a word table's miss: a third of the backtracking).

        sentencepiece adds in float32 from the line's running score. A float32 sum of ``k`` additions
        is within ``k`` half-ulps of the exact one, so a word whose every decision on its path is won
        by more than ``len(text)`` ulps of the scores met is decided the same from any float32 start.
        Leads under ``_LEAD`` are noted as met (seldom: a candidate's raised score finds them with the
        comparison that finds a better one); where the least on the path per character is at most
        ``_CLOSE`` (a lead noted against a best later beaten is less than the true one), the word is
        close: both tuples are :class:`_Close`.
        """
        leads: Any = None
        if tail is None:
            state, best, back = self.root, [0.0], [None]
        else:
            state, pick, top = self.space
            best, back = [0.0, top], [None, pick]
            text, tail = tail, text
        for char in text:
            state, length, top, pick, second, rest = state[char]  # (the first candidate taken on sight: ``>`` replaces, the first of equals stays)
            top += best[length]
            if second is not None:  # (a third of the characters have one candidate, half two: no loop set up)
                if best[second[0]] + second[1] > top:  # (seldom: a better candidate, or one within _LEAD)
                    score = best[second[0]] + second[4]
                    if score > top:
                        if score - top < lead:
                            leads = self._lead(leads, len(best), score - top)
                        top = score
                        pick = second
                    else:
                        leads = self._lead(leads, len(best), top - score)
                if rest is not None:
                    for candidate in rest:  # (the same for the others)
                        if best[candidate[0]] + candidate[1] > top:
                            score = best[candidate[0]] + candidate[4]
                            if score > top:
                                if score - top < lead:
                                    leads = self._lead(leads, len(best), score - top)
                                top = score
                                pick = candidate
                            else:
                                leads = self._lead(leads, len(best), top - score)
            best.append(top)
            back.append(pick)
        end = size = len(back) - 1
        if kind:
            found = []
            while end:
                pick = back[end]
                if pick[3] is None:  # (an unknown character: both kinds, below)
                    break
                found.append(pick[kind])
                end += pick[0]
            else:
                found.reverse()
                if leads is not None or size > 31:  # (32 * _CLOSE == _LEAD)
                    margin = _LEAD * 0.999_999 / size if leads is None else self._margin(back, size, leads)
                    if margin <= _CLOSE:
                        return _Close(found, margin, self.model)
                return tuple(found)
            end = size
        if tail is not None:
            text = tail
        pieces: list[str] = []
        ids: list[int] = []
        while end:  # (a candidate holds its piece: no substring made, none kept twice; an unknown one holds None)
            length, _, piece_id, piece, _ = back[end]
            pieces.append(piece or text[end + length:end])
            ids.append(piece_id)
            end += length
        pieces.reverse()
        ids.reverse()
        both: Any = (tuple(pieces), tuple(ids))
        if leads is not None or size > 31:  # (32 * _CLOSE == _LEAD)
            margin = _LEAD * 0.999_999 / size if leads is None else self._margin(back, size, leads)
            if margin <= _CLOSE:
                both = _Close(pieces, margin, self.model), _Close(ids, margin, self.model)
        return self.model._finish_word(*both)[kind == 2] if kind else both

    @staticmethod
    def _margin(back: list[Any], size: int, leads: dict[int, float]) -> float:
        """The least lead on the path (``back``) per character."""
        end, least = size, _LEAD * 0.999_999  # (unnoted: at least _LEAD, but for the rounding of the raised sum)
        while end:
            least = min(least, leads.get(end, _LEAD))
            end += back[end][0]
        return least / size

    @staticmethod
    def _lead(leads: dict[int, float] | None, end: int, lead: float) -> dict[int, float]:
        if leads is None:
            return {end: lead}
        leads[end] = min(leads.get(end, lead), lead)
        return leads

    def viterbi(self, text: str) -> list[tuple[str, int]]:
        """sentencepiece's segmentation of a whole normalized line: the float64 walk where no decision
        on its path is close enough for float32 to turn it, else :meth:`SentencePieceModel.encode_optimized`."""
        pieces, ids = self.split(text)
        if type(ids) is not _Close or ids.margin > _ulp(min(len(text) * self.size + 1, self.cap)):
            return list(zip(tuple.__iter__(pieces), tuple.__iter__(ids)))
        return self.model.encode_optimized(text)[0]

    def path_scores(self, word: str) -> list[float]:
        """The scores along ``word``'s float64 path, unknown nodes one a character (for a word holding
        unknowns, whose finished pieces are merged or in bytes)."""
        unknown = self.model.unk_id
        return [self.model.unk_score if piece_id == unknown else self.pieces[piece][4] for piece, piece_id in zip(*self.split(word))]


#: Characters a word often ends with that pieces seldom join to the letter before ("end." where no piece
#: holds "d."): :class:`_WordTable` cuts a new word there.
_CUT_CHARS = "!\"#$%&'()*+,-./:;<=>?@[\\]^_`{|}~0123456789"
_CUT_CHAR = re.compile(f"[{re.escape(_CUT_CHARS)}]")
_CUT_SET = frozenset(_CUT_CHARS)


class _WordTable(dict):
    """``part -> pieces`` (or ids) of the word ``prefix + part``; a word missing is segmented once
    (the model's ``_segment_word``, unknowns finished) and put in this table and its ``twin`` (ids
    for pieces, pieces for ids). The miss path is kept short: it runs once per new word of a text.

    Unigram words after a "▁" are kept in the table asked alone: the twin's kind is read from it
    when asked (:meth:`_from_twin`, one map in C, no Viterbi). A first pass then makes half the
    tuples, and the collector walks half as many (4% of a first pass's instructions).

    Where no piece crosses a place in a word, its segmentation falls apart there (unigram: the best
    score at that place is one both sides share, the rest decided from it as a word from its start; a
    close part makes the word close, :class:`_Close`; BPE: no merge meets the other side, and each
    side's merges keep their order). So a new word ending in punctuation or digits no piece joins to
    its last letter ("end." where no piece holds "d.", both one-character pieces, so no unknown run
    meets across) is its stem's word (found in this table, or made and kept: "end" is often met
    alone) and the rest's pieces: on a held-out text, a sixth less of the new words' characters are
    segmented (BPE 4k's first pass: 8% fewer instructions). (Cutting before punctuation inside a word
    too, "world's", segments no fewer characters: its rests are seldom met again.)
    """

    __slots__ = ("model", "ids", "prefix", "twin", "segment", "unk", "id_of", "word", "derive", "piece_ids",
                 "rests", "joins", "singles", "kind")

    def __init__(self, model: "SentencePieceModel", ids: bool, prefix: str) -> None:
        super().__init__()
        self.model, self.ids, self.prefix = model, ids, prefix
        self.kind = 2 if ids else 3  # (where a candidate holds its id or piece)
        self.unk = model.unk_id
        #: BPE's merges give the pieces alone; their ids are looked up here (one call less a word)
        self.id_of = model.piece_to_id.get if model._merge_scores is not None else None
        self.segment = model._segment_word if self.id_of is None else model._bpe_symbols
        #: ``(pieces, ids)`` of ``(prefix + part, part)``: unigram words after a "▁" straight from the
        #: automaton, which reads on from its state after the "▁"
        self.derive = model._automaton is not None and bool(prefix)
        self.word = model._automaton.split if self.derive else self._word  # type: ignore[union-attr]
        self.twin: _WordTable = self
        self.piece_ids: dict[str, int] | None = None
        #: the pieces of cut-off rests; the pairs "character, cut character" some piece holds (made on the first cut)
        self.rests: dict[str, tuple[Any, ...]] = {}
        self.joins: set[str] | None = None
        #: the pieces segmentation picks (a word is cut between two of one character: never an unknown
        #: there); None where words are not cut (a plain walk: scores not all finite, or BPE with unused
        #: or user-defined pieces)
        self.singles: Any = model._automaton.pieces if self.derive else model.matchable if self.id_of is not None else None  # type: ignore[union-attr]

    def _word(self, word: str, part: str) -> tuple[Any, Any]:
        if self.id_of is None:
            return self.segment(word)  # type: ignore[no-any-return]
        pieces = self.segment(word)
        return pieces, list(map(self.id_of, pieces, repeat(self.unk)))

    def _from_twin(self, other: tuple[Any, ...]) -> tuple[Any, ...] | None:
        """This table's kind of a word from the twin's, or None (the word is segmented again): the
        pieces of ids none unknown are the vocabulary's; the ids of pieces the Viterbi picks (or byte
        fallback makes) are theirs, and a run of unknowns merged is none of them (a piece covering
        it would beat the unknown nodes)."""
        if type(other) is _Close:  # (kept close)
            found = self._from_twin(tuple(tuple.__iter__(other)))
            return None if found is None else _Close(found, other.margin, other.watch)
        if not self.ids:
            return None if self.unk in other else tuple(map(self.model.pieces.__getitem__, other))
        ids = tuple(map(self.id_of_piece().get, other))
        return None if None in ids else ids

    def id_of_piece(self) -> dict[str, int]:
        """The id of each piece a unigram segmentation gives but unknowns (made on first use)."""
        if self.piece_ids is None:
            model, automaton = self.model, self.model._automaton
            self.piece_ids = {piece: candidate[2] for piece, candidate in automaton.pieces.items()}  # type: ignore[union-attr]
            if model.byte_fallback:
                self.piece_ids.update((byte_piece(b), i) for b, i in enumerate(model.byte_ids) if i is not None)
        return self.piece_ids

    def _cut(self, part: str, stem: str) -> tuple[Any, ...] | None:
        """This table's kind of the word ``prefix + part`` cut after ``stem`` (see the class; the twin's
        as well where it is kept, BPE), or None."""
        singles = self.singles
        if self.joins is None:
            # (the character before each cut character in a piece: found by a plain search, not a
            # look-ahead at every place of every piece, 30x slower: a first pass's first cut paid ~3 ms)
            joined = "\n".join(singles)
            self.joins = {joined[at.start() - 1:at.end()] for at in _CUT_CHAR.finditer(joined, 1)}
        cut = len(stem)
        if stem[-1] + part[cut] in self.joins or stem[-1] not in singles or part[cut] not in singles:
            return None
        rest = part[cut:]
        found = self.rests.get(rest)
        if found is None:
            pieces, ids = self.word(rest, None)
            if self.unk in ids:
                pieces, ids = self.model._finish_word(pieces, ids)
            found = (ids, pieces) if self.ids else (pieces, ids)
            if len(self.rests) < 200_000:
                self.rests[rest] = found
        if not self.derive and len(self) < 200_000:  # (BPE keeps both kinds)
            self.twin[part] = (*self.twin[stem], *found[1])
        stem = self[stem]
        if type(stem) is _Close or type(found[0]) is _Close:  # (one part close: the word is)
            return _Close((*stem, *found[0]), min(getattr(stem, "margin", _INF), getattr(found[0], "margin", _INF)), self.model)
        return (*stem, *found[0])

    def __missing__(self, part: str) -> tuple[Any, ...]:
        if self.derive and self.twin:  # (the twin empty: one kind asked so far)
            other = self.twin.get(part)
            found = None if other is None else self._from_twin(other)
            if found is not None:
                if len(self) < 200_000:
                    self[part] = found
                return found
        if self.singles is not None and part and part[-1] in _CUT_SET:  # (seldom: rstrip's set made at every call costs more)
            stem = part.rstrip(_CUT_CHARS)
            if stem:
                found = self._cut(part, stem)
                if found is not None:
                    if len(self) < 200_000:
                        self[part] = found
                    return found
        if self.derive:  # (this table's kind alone, unknowns finished)
            found = self.word(self.prefix + part, part, self.kind)
            if len(self) < 200_000:
                self[part] = found
            return found
        pieces, ids = self.word(self.prefix + part, part)
        if self.unk in ids:
            pieces, ids = self.model._finish_word(pieces, ids)
        if self.ids:  # (this table's kind first)
            pieces, ids = ids, pieces
        if len(self) < 200_000:  # (bounded: a long run of new words is segmented, not kept)
            self[part] = pieces
            if not self.derive:
                self.twin[part] = ids
        return pieces


class SentencePieceModel:
    """The segmentation side of a ``ModelProto`` (see the module docstring)."""

    def __init__(self, proto: ModelProto) -> None:
        self.proto = proto
        spec, nspec = proto.trainer_spec, proto.normalizer_spec
        self.model_type = ModelType(spec.model_type)
        # (per-piece work in C: a 4k model's tables in ~1 ms rather than a loop of ~4 ms)
        self.pieces = pieces = tuple(map(attrgetter("piece"), proto.pieces))
        self.scores = scores = tuple(map(attrgetter("score"), proto.pieces))
        self.types = types = tuple(map(attrgetter("type"), proto.pieces))
        last = len(pieces) - 1
        # the first id of a piece wins, as sentencepiece's look-up does: filled from the end
        self.piece_to_id: dict[str, int] = dict(zip(reversed(pieces), range(last, -1, -1)))
        if PieceType.UNKNOWN not in types:
            raise SerializationError("This .model has no unknown piece (<unk>); sentencepiece cannot load it either.")
        self.unk_id: int | None = types.index(PieceType.UNKNOWN)
        # NORMAL, USER_DEFINED, UNUSED: what segmentation can pick
        can_pick = list(map(_MATCHABLE.__contains__, types))
        matchable = dict(zip(reversed(list(compress(pieces, can_pick))), reversed(list(compress(range(len(pieces)), can_pick)))))
        user_defined = list(compress(pieces, map(eq, types, repeat(PieceType.USER_DEFINED))))
        self.matchable = matchable
        self.max_piece_length = max(map(len, matchable), default=1)
        normal = list(compress(scores, map(eq, types, repeat(PieceType.NORMAL))))
        self.min_score = min(normal) if normal else 0.0
        self.unk_score = _f32(self.min_score - UNK_PENALTY)
        #: unigram: what the Viterbi picks, at the score it adds (piece -> (id, score))
        self.scored = {piece: (piece_id, user_defined_score(len(piece.encode("utf-8"))) if types[piece_id] == PieceType.USER_DEFINED
                               else scores[piece_id]) for piece, piece_id in matchable.items()
                       if types[piece_id] != PieceType.UNUSED} if self.model_type == ModelType.UNIGRAM else {}
        finite = all(map(math.isfinite, scores))
        #: unigram: the piece automaton of :class:`_PieceAutomaton`; else (scores not all finite, or so big a
        #: line's may pass _TOP: none trained) sentencepiece's walk of each whole line, :meth:`encode_optimized`
        self._automaton = _PieceAutomaton(self) if self.model_type == ModelType.UNIGRAM and finite else None
        if self._automaton is not None and self._automaton.cap >= _TOP:
            self._automaton = None
        #: how many close words were read (:class:`_Close`)
        self.closes = 0
        self._score_of: dict[Any, float] | None = None
        self._unknown_paths: dict[str, list[float]] = {}
        #: exponent -> :class:`_Rounded` scores of a checked line's pieces in that binade
        self._rounded: dict[int, _Rounded] = {}
        self._score_keys: dict[bool, _ScoreKeys] = {}
        #: exponent -> (part -> how far the word moves a line's score in that binade; see :class:`_Rounded`)
        self._words_moved: dict[int, dict[str, float]] = {}
        #: BPE: merged piece -> score, when no piece is UNUSED or user-defined (see :meth:`_bpe_word`)
        self._merge_scores: dict[str, float] | None = None
        if self.model_type == ModelType.BPE and finite and PieceType.UNUSED not in types and not user_defined:
            self._merge_scores = {piece: scores[i] for piece, i in matchable.items() if len(piece) > 1}
        self.byte_fallback = bool(spec.byte_fallback) or PieceType.BYTE in types
        self.byte_ids = [self.piece_to_id.get(byte_piece(b)) for b in range(256)]
        charsmap = nspec.precompiled_charsmap
        if not charsmap and nspec.name not in ("", "identity") and not nspec.normalization_rule_tsv:
            from tokviz.sentencepiece.normalizer import RULE_NAMES, charsmap_for_rule

            if nspec.name in RULE_NAMES:
                charsmap = charsmap_for_rule(nspec.name)
        self.normalizer = SentencePieceNormalizer(
            charsmap,
            add_dummy_prefix=nspec.add_dummy_prefix,
            remove_extra_whitespaces=nspec.remove_extra_whitespaces,
            escape_whitespaces=nspec.escape_whitespaces,
            treat_whitespace_as_suffix=spec.treat_whitespace_as_suffix,
            user_defined_symbols=user_defined,
        )
        self._user_first: dict[str, list[str]] = {}
        for sym in sorted(set(user_defined), key=len, reverse=True):
            self._user_first.setdefault(sym[0], []).append(sym)
        self._cache: dict[str, list[tuple[str, int]]] = {}
        # Every piece segmentation can pick starts a word or holds no "▁": then no piece crosses the
        # place before a "▁", the lattice (and BPE's merges) fall apart into words, and a long text
        # is segmented word by word, each distinct word once (sentencepiece's result, found faster).
        self._by_words = not spec.treat_whitespace_as_suffix and not any(
            map(contains, map(itemgetter(slice(1, None)), matchable), repeat("\u2581"))) and (
            self._automaton is not None or self.model_type != ModelType.UNIGRAM)  # (unigram words: checked along the line)
        self._word_segments: dict[str, list[tuple[str, int]]] = {}
        # ... and when "▁" is a piece, no word starts with an unknown piece, so no run of unknowns
        # crosses a word either: each word is finished on its own and kept as (pieces, ids).
        space_id = matchable.get("\u2581")
        space_piece = space_id is not None and self.types[space_id] != PieceType.UNUSED
        self._word_by_word = self._by_words and space_piece
        # Llama 2's pieces hold runs of "▁" ("▁▁", "▁▁▁▁"), so a piece may cross the place before a
        # "▁" that follows another: when no piece holds a "▁" right after some other character,
        # the text still falls apart before every "▁" that follows another character
        # (``_RUN_CUT``): words of the form "▁▁word", each segmented once as well.
        self._by_runs = not self._by_words and space_piece and not spec.treat_whitespace_as_suffix and not any(
            _AFTER_OTHER.search(piece) for piece in matchable) and (self._automaton is not None or self.model_type != ModelType.UNIGRAM)
        prefix = "\u2581" if self._word_by_word else ""
        self._segment_word: Any = self._automaton.split if self._automaton is not None else self._word_parts
        self._pieces_of = _WordTable(self, False, prefix)
        self._ids_of = _WordTable(self, True, prefix)
        self._pieces_of.twin, self._ids_of.twin = self._ids_of, self._pieces_of

    # -- helpers ----------------------------------------------------------------------

    def _user_match(self, text: str, pos: int) -> int:
        for sym in self._user_first.get(text[pos], ()):
            if text.startswith(sym, pos):
                return len(sym)
        return 0

    # -- segmentation -----------------------------------------------------------------

    def segment(self, normalized: str) -> list[tuple[str, int]]:
        """The model's pieces of an already-normalized string, before unk / byte handling."""
        if self.model_type == ModelType.UNIGRAM:
            if self._automaton is not None:
                return self._automaton.viterbi(normalized)
            return self.encode_optimized(normalized)[0]
        if self.model_type == ModelType.BPE:
            if self._merge_scores is not None:
                return self._bpe_word(normalized)
            return self._bpe(normalized)
        if self.model_type == ModelType.CHAR:
            return self._chars(normalized)
        return self._words(normalized)

    def encode_optimized(self, text: str, score: float = 0.0) -> tuple[list[tuple[str, int]], float]:
        """sentencepiece's unigram ``EncodeOptimized`` step by step: ``(pairs, score at the end)`` of
        ``text`` read from the running ``score``, candidates by start then length, sums in float32,
        the scores ahead moved back by the running one once it passes ``_RESET`` in size. The exact
        walk, for the few lines (or words) the float64 one may decide otherwise, and for a model whose
        scores are not all finite (no automaton; sentencepiece refuses to load those).

        >>> from tokviz.sentencepiece.model_proto import ModelProto, SentencePiece, PieceType, TrainerSpec
        >>> proto = ModelProto(pieces=[SentencePiece("<unk>", 0, PieceType.UNKNOWN), SentencePiece("ab", -1),
        ...     SentencePiece("a", -2), SentencePiece("b", -2), SentencePiece("bc", -1.5)], trainer_spec=TrainerSpec(model_type=1))
        >>> SentencePieceModel(proto).encode_optimized("abcx", 0.5)
        ([('a', 2), ('bc', 4), ('x', 0)], -15.0)
        """
        size = len(text)
        best = [score] + [0.0] * size
        starts = [-1] * (size + 1)
        ids = [0] * (size + 1)
        scored, unknown, longest, frontier = self.scored, (self.unk_id, self.unk_score), self.max_piece_length, 0
        automaton = self._automaton
        # (a prefix no piece has ends the look-ups from a start, as sentencepiece's trie does)
        prefixes: Any = () if automaton is None else automaton.prefixes if automaton.lazy else automaton.states
        rounded = array("f", (0.0,))
        for start in range(size):
            here = best[start]
            if not -_RESET <= here <= _RESET:
                for at in range(start, frontier + 1):
                    if at == start or starts[at] != -1:
                        rounded[0] = best[at] - here
                        best[at] = rounded[0]
                here = 0.0
            single = False
            for end in range(start + 1, min(size, start + longest) + 1):
                found = scored.get(text[start:end])
                if found is None:
                    if prefixes and text[start:end] not in prefixes:
                        break
                    continue
                single = single or end == start + 1
                frontier = max(frontier, end)
                rounded[0] = found[1] + here
                if starts[end] == -1 or rounded[0] > best[end]:
                    best[end], starts[end], ids[end] = rounded[0], start, found[0]
            if not single:
                frontier = max(frontier, start + 1)
                rounded[0] = unknown[1] + here
                if starts[start + 1] == -1 or rounded[0] > best[start + 1]:
                    best[start + 1], starts[start + 1], ids[start + 1] = rounded[0], start, unknown[0]  # type: ignore[assignment]
        out: list[tuple[str, int]] = []
        end = size
        while end > 0:
            out.append((text[starts[end]:end], ids[end]))
            end = starts[end]
        out.reverse()
        return out, best[size]

    def _symbols(self, text: str) -> tuple[list[str], list[bool]]:
        symbols: list[str] = []
        frozen: list[bool] = []
        pos = 0
        while pos < len(text):
            length = self._user_match(text, pos) if self._user_first else 0
            symbols.append(text[pos:pos + (length or 1)])
            frozen.append(bool(length))
            pos += length or 1
        return symbols, frozen

    def _bpe(self, text: str, dropout: float = 0.0, rng: random.Random | None = None) -> list[tuple[str, int]]:
        symbols, frozen = self._symbols(text)
        size = len(symbols)
        prev = list(range(-1, size - 1))
        nxt = list(range(1, size + 1))
        nxt[-1:] = [-1] if size else []
        matchable, scores, types = self.matchable, self.scores, self.types
        agenda: list[tuple[float, int, int, int]] = []  # (-score, left, right, merged length)
        rev_merge: dict[str, tuple[str, str]] = {}

        def add_pair(left: int, right: int) -> None:
            if left == -1 or right == -1 or frozen[left] or frozen[right]:
                return
            merged = symbols[left] + symbols[right]
            piece_id = matchable.get(merged)
            if piece_id is None:
                return
            heapq.heappush(agenda, (-scores[piece_id], left, right, len(merged)))
            if types[piece_id] == PieceType.UNUSED:
                rev_merge[merged] = (symbols[left], symbols[right])

        for i in range(1, size):
            add_pair(i - 1, i)
        while agenda:
            _, left, right, length = heapq.heappop(agenda)
            if not symbols[left] or not symbols[right] or len(symbols[left]) + len(symbols[right]) != length:
                continue
            if dropout and rng is not None and rng.random() < dropout:
                continue  # BPE-dropout: skip this merge (sentencepiece does the same)
            symbols[left] += symbols[right]
            nxt[left] = nxt[right]
            if nxt[right] >= 0:
                prev[nxt[right]] = left
            symbols[right] = ""
            add_pair(prev[left], left)
            add_pair(left, nxt[left])
        out: list[tuple[str, int]] = []

        def resegment(piece: str) -> None:
            # sentencepiece's PieceToId: any piece of the vocabulary, else unk.
            piece_id = self.piece_to_id.get(piece, self.unk_id)
            if types[piece_id] == PieceType.UNUSED and piece in rev_merge:  # type: ignore[index]
                left, right = rev_merge[piece]
                resegment(left)
                resegment(right)
            else:
                out.append((piece, piece_id))  # type: ignore[arg-type]

        for piece in symbols:
            if piece:
                resegment(piece)
        return out

    def _bpe_word(self, text: str) -> list[tuple[str, int]]:
        piece_to_id, unk = self.piece_to_id.get, self.unk_id
        return [(piece, piece_to_id(piece, unk)) for piece in self._bpe_symbols(text)]  # type: ignore[misc]

    def _bpe_symbols(self, text: str) -> list[str]:
        """:meth:`_bpe` for a model with no UNUSED or user-defined piece (no dropout): the score of
        every adjacent pair in a list, the highest merged first, leftmost on ties (``max`` then
        ``index``, as sentencepiece's queue orders them), only the merged symbol's two pairs
        looked up again. A text longer than ``_PAIR_LIST_LONGEST`` takes :meth:`_bpe`'s queue."""
        if len(text) > _PAIR_LIST_LONGEST:
            return [piece for piece, _ in self._bpe(text)]
        symbols = list(text)
        get = self._merge_scores.get  # type: ignore[union-attr]
        pairs = list(map(get, map(add, text, text[1:]), _NEVER))  # (made in C: no loop per pair)
        while pairs:
            top = max(pairs)
            if top == _NO_MERGE:
                break
            at = pairs.index(top)
            merged = symbols[at] + symbols[at + 1]
            symbols[at] = merged
            del symbols[at + 1]
            del pairs[at]
            if at:
                pairs[at - 1] = get(symbols[at - 1] + merged, _NO_MERGE)
            if at < len(pairs):
                pairs[at] = get(merged + symbols[at + 1], _NO_MERGE)
        return symbols

    def _chars(self, text: str) -> list[tuple[str, int]]:
        symbols, _ = self._symbols(text)
        return [(s, self._id_or_unk(s)) for s in symbols]

    def _words(self, text: str) -> list[tuple[str, int]]:
        words: list[str] = []
        suffix = self.normalizer.treat_whitespace_as_suffix
        for char in text:
            if not words or (not suffix and char == "\u2581") or (suffix and words[-1].endswith("\u2581")):
                words.append(char)
            else:
                words[-1] += char
        return [(w, self._id_or_unk(w)) for w in words]

    def _id_or_unk(self, piece: str) -> int:
        piece_id = self.matchable.get(piece)
        return self.unk_id if piece_id is None or self.types[piece_id] == PieceType.UNUSED else piece_id  # type: ignore[return-value]

    # -- the processor's view ----------------------------------------------------------

    def finish(self, segments: Sequence[tuple[str, int]], has_unknown: bool = False) -> list[tuple[str, int]]:
        """Byte fallback for unknown pieces, else merge runs of unknowns (sentencepiece's rule)."""
        unk = self.unk_id
        if not has_unknown and not any(piece_id == unk for _, piece_id in segments):
            # (the usual case: nothing to change, and no new pair per piece for the collector to walk)
            return segments if isinstance(segments, list) else list(segments)
        out: list[tuple[str, int]] = []
        prev_unk = False
        for piece, piece_id in segments:
            is_unk = piece_id == unk
            if is_unk and self.byte_fallback:
                for byte in piece.encode("utf-8"):
                    byte_id = self.byte_ids[byte]
                    out.append((byte_piece(byte), unk if byte_id is None else byte_id))  # type: ignore[arg-type]
            elif is_unk and prev_unk:
                out[-1] = (out[-1][0] + piece, piece_id)
            else:
                out.append((piece, piece_id))
            prev_unk = is_unk
        return out

    def segment_text(self, normalized: str) -> list[tuple[str, int]]:
        """:meth:`segment` of a whole normalized text, word by word when that is the same (see ``__init__``;
        not unigram's: its words are decided along the line, :meth:`encode_as`)."""
        if not self._by_words or self._automaton is not None:
            return self.segment(normalized)
        words = normalized.split("\u2581")
        cache, segment = self._word_segments, self.segment
        out: list[tuple[str, int]] = segment(words[0]) if words[0] else []
        for word in words[1:]:
            word = "\u2581" + word
            found = cache.get(word)
            if found is None:
                found = segment(word)
                if len(cache) < 200_000:
                    cache[word] = found
            out += found
        return out

    def _word_parts(self, word: str) -> tuple[Any, Any]:
        """``(pieces, ids)`` of one word before unknowns are finished (BPE and the plain walks)."""
        if self._merge_scores is not None:
            pieces = self._bpe_symbols(word)
            return pieces, list(map(self.piece_to_id.get, pieces, repeat(self.unk_id)))
        pairs = self.segment(word)
        return [p for p, _ in pairs], [i for _, i in pairs]

    def _finish_word(self, pieces: Sequence[str], ids: Sequence[int]) -> tuple[tuple[str, ...], tuple[int, ...]]:
        """:meth:`finish` of one word's pieces holding an unknown one."""
        pairs = self.finish(list(zip(pieces, ids)), True)
        if type(ids) is _Close:  # (kept close)
            return _Close((p for p, _ in pairs), ids.margin, ids.watch), _Close((i for _, i in pairs), ids.margin, ids.watch)
        return tuple(p for p, _ in pairs), tuple(i for _, i in pairs)

    def _finished_word(self, word: str) -> tuple[tuple[str, ...], tuple[int, ...]]:
        """``(pieces, ids)`` of one word, :meth:`finish` applied."""
        pieces, ids = self._segment_word(word)
        if self.unk_id in ids:
            return self._finish_word(pieces, ids)
        return tuple(pieces), tuple(ids)

    def encode_as(self, text: str, ids: bool) -> list[Any]:
        """The ids (``ids=True``) or pieces of :meth:`encode`, each word's found once and kept
        as a tuple of pieces or ids (see ``__init__``). (No line is kept whole: on a first pass the
        tuple a line cost 3% of the instructions; a text seen again is its words' look-ups, ~0.4x
        sentencepiece's time.)"""
        table, closes = self._ids_of if ids else self._pieces_of, self.closes
        if self._word_by_word and (parts := self.normalizer.ascii_words(text)) is not None:
            out = []  # (most lines: normalized and cut in one split)
            for word in parts:  # (a line's ~10 words: a plain loop beats list(chain(map(...))) by ~0.4 us)
                out += table[word]
            if self.closes != closes:
                out = self._checked_line(table, "", parts, len(text) + 1, out)
        elif self._word_by_word or self._by_runs:  # (runs: each word whole in the tables, its leading "▁"s included)
            normalized = self.normalizer.normalize(text)
            first, *parts = ("", *_RUN_CUT.split(normalized)) if self._by_runs else normalized.split("\u2581")
            # (every word after the first "▁" looked up in C; a missing one made by the table)
            out = list(chain.from_iterable(map(table.__getitem__, parts)))
            if first:  # (before the first "▁": no dummy prefix; never kept)
                out[:0] = self._finished_word(first)[ids]
            if self.closes != closes:
                out = self._checked_line(table, first, parts, len(normalized), out)
        else:
            out = [pair[ids] for pair in self.encode(text)]
        return out

    def _checked_line(self, table: _WordTable, first: str, parts: list[str], size: int, out: list[Any]) -> list[Any]:
        """``out``, or where a line holds a word float32 can decide otherwise from the line's running score,
        the line again up to the last such word: each by sentencepiece's walk from that score (in the word
        alone: no piece crosses the "▁" before it), the words before as segmented, their scores added up
        in float32. The words after it are decided the same from any score."""
        automaton: _PieceAutomaton = self._automaton  # type: ignore[assignment]
        ulp = _ulp(min(size * automaton.size + 1, automaton.cap))  # (below _TOP: no ulp above _CLOSE)
        found = list(map(table.__getitem__, parts))
        # (the close words, in C: a long line holds one in a few hundred)
        stops = [at for at in compress(range(len(found)), map(is_, map(type, found), repeat(_Close))) if found[at].margin <= ulp]
        if not (stops or first):  # (no word close enough for this line; one before the first "▁" is walked)
            return out
        last = stops[-1] + 1 if stops else 0
        stops.append(last)
        # float32 sums in two float additions, (x + c) - c with c = 1.5 * 2**52 * u rounding x to a multiple
        # of u (ties to even), u the float32 spacing of the binade [low, high] (an array's store and load cost
        # five times as much)
        score, low, high, magic, rounded = 0.0, 0.0, 0.0, 0.0, array("f", (0.0,))
        if self._score_of is None:  # (the score of a piece by its text and by its id)
            self._score_of = {key: value for piece, (piece_id, value) in self.scored.items() for key in (piece, piece_id)}
        score_of, size, prefix, rounded = self._score_of.__getitem__, automaton.size, table.prefix, self._rounded
        unknown = None if self.byte_fallback else self.unk_score
        changed: list[tuple[int, list[Any]]] = []  # (a word sentencepiece's walk segments otherwise)
        longest = int((_ROOM - 1.0 - len(prefix)) / size)
        keys_of = (self._score_keys.get(table.ids) or self._score_keys.setdefault(table.ids, _ScoreKeys(table))).__getitem__
        if first:
            pairs, score = self.encode_optimized(first, score)
            line = [pair[table.ids] for pair in self.finish(pairs)]
        at = stop_at = 0
        while at < last:
            stop = stops[stop_at]
            if at < stop and -_ROOM_TOP < score <= -_BULK_FROM:
                # Words between close ones in bulk: within a binade of float32 (the running score in
                # [2**(e-1), 2**e] in size, a multiple of its spacing u) each sum is the score plus the
                # piece's score rounded to a multiple of u (_Rounded), so the scores are added up
                # exactly in C up to the word that leaves the binade (or holds a piece not taken so).
                exponent = math.frexp(score)[1]
                top = min(2.0 ** exponent, _ROOM_TOP)
                end = min(stop, at + 400, at + 16 + int((top + score) * 0.125))  # (a word moves a score by ~10: a run reaches past the binade)
                if max(map(len, parts[at:end])) > longest:  # (a word too long to be sure of the reset: up to it)
                    end = at + next(i for i, part in enumerate(parts[at:end]) if len(part) > longest)
                moves = rounded.get(exponent) or rounded.setdefault(exponent, _Rounded(self._score_of, exponent, unknown))
                # (the usual: the run's pieces' moves in one sum, C doubles; else word by word, below)
                reached = sum(map(moves.__getitem__, chain.from_iterable(found[at:end])), -score)
                if reached >= top:  # (a piece not taken so -- a tie, unknowns by id or in bytes -- or the binade's end)
                    moved = self._words_moved.get(exponent)
                    if moved is None or len(moved) > _MOVED_ROOM:
                        moved = self._words_moved[exponent] = {}
                    run = parts[at:end]
                    try:
                        reached = sum(map(moved.__getitem__, run), -score)
                    except KeyError:  # (words new to this binade: each one's pieces' moves summed, in C)
                        new = list(set(run).difference(moved))
                        found_moves = list(map(sum, map(map, repeat(moves.__getitem__), map(table.__getitem__, new))))
                        moved.update(zip(new, found_moves))
                        for part in compress(new, map(eq, found_moves, repeat(_INF))):  # (unknowns: their path's scores)
                            moved[part] = sum(map(moves.__getitem__, keys_of(part)))
                        reached = sum(map(moved.__getitem__, run), -score)
                if reached < top:  # (every word taken)
                    taken = end - at
                else:  # (the words up to the first that meets the binade's end)
                    reached = list(accumulate(map(moved.__getitem__, run), initial=-score))
                    taken = bisect_left(reached, top) - 1
                    if taken:
                        score = -reached[taken]
                        at += taken
                        taken = 0
                if taken:
                    score = -reached
                    at += taken
                    if at == last:
                        break
                    if at < stop and at == end:
                        continue
            word, words = prefix + parts[at], found[at]
            bound = abs(score) + len(word) * size + 1
            if bound < _RESET and (type(words) is not _Close or words.margin > _ulp(bound)):
                try:  # (decided the same in float32: its scores added up as sentencepiece adds them)
                    values = list(map(score_of, tuple.__iter__(words)))
                except KeyError:  # (unknowns merged or in bytes)
                    values = self._unknown_paths.get(word) or self._unknown_paths.setdefault(word, automaton.path_scores(word))
                for value in values:
                    total = score + value
                    if low <= total <= high:
                        score = (total + magic) - magic
                    elif -1e-30 < total < 1e-30:  # (zero, or float32's subnormals: stored and read)
                        rounded[0] = total
                        score = rounded[0]
                    else:  # (|total| in [2**(exponent - 1), 2**exponent])
                        exponent = math.frexp(total)[1]
                        low, high = (2.0 ** (exponent - 1), 2.0 ** exponent) if total > 0 else (-(2.0 ** exponent), -(2.0 ** (exponent - 1)))
                        magic = 1.5 * 2.0 ** (exponent + 28)
                        score = (total + magic) - magic
            else:
                pairs, score = self.encode_optimized(word, score)
                walked = [pair[table.ids] for pair in self.finish(pairs)]
                if walked != list(tuple.__iter__(words)):
                    changed.append((at, walked))
            if at == stop:
                stop_at += 1
            at += 1
        if changed:  # (each word put in its place in ``out``, from the end)
            ends = list(accumulate(map(len, found), initial=len(out) - sum(map(len, found))))
            for at, walked in reversed(changed):
                out[ends[at]:ends[at + 1]] = walked
        if first:
            out[:len(out) - sum(map(len, found))] = line
        return out

    def encode(self, text: str) -> list[tuple[str, int]]:
        """``[(piece, id), ...]`` for raw text (normalization included), as sentencepiece encodes it."""
        cached = self._cache.get(text)
        if cached is not None:
            return list(cached)
        if self._word_by_word or self._by_runs:  # (the tables' words: one segmentation each, checked along the line)
            pieces = self.encode_as(text, False)
            ids = self.encode_as(text, True) if self._automaton is None else map(  # (unigram: the ids of its pieces)
                self._ids_of.id_of_piece().get, pieces, repeat(self.unk_id))
            result = list(zip(pieces, ids))
        else:
            result = self.finish(self.segment_text(self.normalizer.normalize(text)))
        if len(self._cache) < 20_000 and len(text) < 10_000:  # (lines, not whole books)
            self._cache[text] = result
        return list(result)

    # -- lattices (unigram) -----------------------------------------------------------

    def lattice(self, normalized: str) -> Lattice:
        """The unigram lattice of a normalized string (user-defined pieces scored by characters, as sentencepiece's lattice does)."""
        return Lattice(normalized, self._lattice_spec(normalized))

    def nbest(self, text: str, n: int, deadline: float | None = None) -> list[tuple[list[tuple[str, int]], float]]:
        """The ``n`` best unigram segmentations with their scores, best first, in sentencepiece's order.

        sentencepiece runs A* from the end with a ``std::priority_queue`` on float32 scores; equal
        scores come out in the order that heap gives them, so :func:`sentencepiece_nbest` replays it.
        """
        if self.model_type != ModelType.UNIGRAM:
            raise ValueError("n-best segmentation needs a unigram model.")
        normalized = self.normalizer.normalize(text)
        n = max(1, min(int(n), 1024))
        if not normalized:
            return [([], 0.0)]
        if n == 1:
            return [(self.finish(self.segment(normalized)), 0.0)]
        spec = self._lattice_spec(normalized)
        paths = sentencepiece_nbest(len(normalized), spec, n, deadline)
        if not paths:  # (out of time: the best one, as sentencepiece's n-best timeout gives)
            return [(self.finish(self.segment(normalized)), 0.0)]
        return [(self.finish([(normalized[start:end], piece_id) for start, end, piece_id in path]), score)
                for path, score in paths]

    def _lattice_spec(self, normalized: str) -> list[tuple[int, int, int, float]]:
        """``(start, end, id, score)`` in sentencepiece's insertion order (by start, then length); user-defined
        pieces scored by their length in characters, as its lattice does (its Viterbi counts bytes)."""
        nodes: list[tuple[int, int, int, float]] = []
        n = len(normalized)
        unk_score = self.unk_score
        for start in range(n):
            has_single = False
            for end in range(start + 1, min(n, start + self.max_piece_length) + 1):
                piece_id = self.matchable.get(normalized[start:end])
                if piece_id is None or self.types[piece_id] == PieceType.UNUSED:
                    continue
                if self.types[piece_id] == PieceType.USER_DEFINED:
                    score = user_defined_score(end - start)
                else:
                    score = self.scores[piece_id]
                nodes.append((start, end, piece_id, score))
                has_single = has_single or end == start + 1
            if not has_single:
                nodes.append((start, start + 1, self.unk_id, unk_score))  # type: ignore[arg-type]
        return nodes

    def sample(self, text: str, nbest_size: int, alpha: float, rng: random.Random) -> list[tuple[str, int]]:
        """One sampled segmentation: unigram (``nbest_size`` 0/1 = Viterbi, -1 = all paths) or BPE-dropout (``alpha`` = drop rate)."""
        normalized = self.normalizer.normalize(text)
        if self.model_type == ModelType.BPE:
            return self.finish(self._bpe(normalized, dropout=alpha, rng=rng))
        if self.model_type != ModelType.UNIGRAM or nbest_size in (0, 1) or not normalized:
            return self.finish(self.segment(normalized))
        lattice = self.lattice(normalized)
        if nbest_size < 0:
            path = lattice.sample(alpha, rng)
            return self.finish([(node.text, node.piece_id) for node in path])
        paths = lattice.nbest(nbest_size)
        top = max(score for _, score in paths)
        weights = [math.exp(alpha * (score - top)) for _, score in paths]
        path = rng.choices([p for p, _ in paths], weights=weights)[0]
        return self.finish([(node.text, node.piece_id) for node in path])
