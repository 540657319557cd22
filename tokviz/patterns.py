"""User-supplied regular expressions, compiled once and always run with a time limit.

``Regex`` mirrors ``tokenizers.Regex``: a wrapper that says "this string is a regular
expression, not a literal". HF compiles it with Oniguruma; tokviz uses the third-party
``regex`` module, whose syntax is a close superset of the common Oniguruma subset
(``\\p{L}``, ``\\s``, lookarounds, possessive quantifiers, atomic groups).

A user can type a pattern that backtracks catastrophically. The ``regex`` module already
defuses the textbook ``(a+)+$``, but not every such pattern (``(a|aa)+$`` on
``'a' * 40 + 'b'`` still explodes), so every search of a user pattern runs with
``timeout=PATTERN_TIMEOUT_SECONDS`` and a timeout becomes :class:`PatternTimeoutError`.

>>> Regex(r"\\d+").find_matches("ab12c")
[((0, 2), False), ((2, 4), True), ((4, 5), False)]
>>> Regex("(unclosed")
Traceback (most recent call last):
...
tokviz.errors.PatternError: The regular expression '(unclosed' is invalid: missing ) at position 9

Oniguruma semantics kept: ``^`` and ``$`` are line anchors (Ruby syntax, so patterns
compile with ``MULTILINE``), and empty matches are iterated like Oniguruma's iterator
(see :func:`match_spans`), so ``Split``/``Replace`` with patterns such as ``a*`` or
``\\b`` give HF's pieces.

Left out: Oniguruma-only syntax (``\\h``, ``(?~...)`` absence operators) and Ruby's
meaning of inline flags (``(?m)`` is "dot matches newline" in Ruby, multiline in Python)
are not translated; Ruby's ``\\Z`` (end, or before a final newline) is Python's ``\\Z``
(absolute end) here, and ``^`` also matches after a text's final newline.
"""

from __future__ import annotations

import re
import time
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass, field
from functools import lru_cache
from itertools import starmap
from operator import eq
from typing import Any

import regex

from tokviz import limits
from tokviz.errors import PatternError, PatternTimeoutError

#: Wall-clock limit for one search of a user pattern over one string, in seconds.
PATTERN_TIMEOUT_SECONDS: float = limits.PATTERN_TIMEOUT_SECONDS  # set in tokviz.limits with the other limits

#: The deadline (``time.monotonic()``) shared by every search inside :func:`time_budget`, if any.
_shared_deadline: ContextVar[tuple[float, float] | None] = ContextVar("tokviz_pattern_deadline", default=None)


@contextmanager
def time_budget(seconds: float | None = None) -> Iterator[None]:
    """All user-pattern searches inside the block share ``seconds`` in total (one request's budget).

    The per-search limit stops one catastrophic search; this stops a pattern that is merely
    slow (0.5 s a line) from running line after line for hours. Context variables are per
    thread, so each Streamlit session has its own budget.

    >>> with time_budget(0.0):
    ...     match_spans(compile_pattern("a+"), "aaa")
    Traceback (most recent call last):
    ...
    tokviz.errors.PatternTimeoutError: The regular expression 'a+' used up this request's time budget of 0 s for regular expressions (catastrophic backtracking?); simplify the pattern.
    """
    budget = limits.PATTERN_REQUEST_BUDGET_SECONDS if seconds is None else seconds
    token = _shared_deadline.set((time.monotonic() + budget, budget))
    try:
        yield
    finally:
        _shared_deadline.reset(token)


def _search_limit(timeout: float | None) -> tuple[float, float | None]:
    """``(seconds this search may take, the shared budget if that is what limits it)``."""
    limit = PATTERN_TIMEOUT_SECONDS if timeout is None else timeout
    shared = _shared_deadline.get()
    if shared is not None:
        remaining = shared[0] - time.monotonic()
        if remaining < limit:
            return max(remaining, 0.0), shared[1]
    return limit, None


def _timeout_error(compiled: regex.Pattern, text: str, limit: float, budget: float | None) -> PatternTimeoutError:
    if budget is not None:
        return PatternTimeoutError(
            f"The regular expression {compiled.pattern!r} used up this request's time budget of {budget:g} s "
            "for regular expressions (catastrophic backtracking?); simplify the pattern."
        )
    return PatternTimeoutError(
        f"The regular expression {compiled.pattern!r} took longer than {limit:g} s on a "
        f"{len(text)}-character text (catastrophic backtracking?); simplify the pattern."
    )


#: ``((start, end), is_match)`` pieces that cover a string, in character offsets.
Matches = list[tuple[tuple[int, int], bool]]


def has_nested_class(pattern: str) -> bool:
    """Whether a bracket class of ``pattern`` holds another one (``[^(\\s|[.,!?])]``, BLOOM's
    Split): Oniguruma reads it as the union of the two; :mod:`regex` does too, but only in its
    VERSION1 mode (in the default one the first ``]`` ends the class). POSIX classes
    (``[[:alpha:]]``) are not nested classes.

    >>> has_nested_class(r" ?[^(\\s|[.,!?…])]+"), has_nested_class(r"[\\[a]+[[:alpha:]]"), has_nested_class(r"\\[[a]")
    (True, False, False)
    """
    depth = 0
    index = 0
    size = len(pattern)
    while index < size:
        char = pattern[index]
        if char == "\\":
            index += 2
            continue
        if char == "[":
            if depth and pattern.startswith("[:", index):
                end = pattern.find(":]", index + 2)
                if end != -1:
                    index = end + 2
                    continue
            if depth:
                return True
            depth = 1
            index += 1
            # A "]" first in a class (or after "^") is a literal.
            if index < size and pattern[index] == "^":
                index += 1
            if index < size and pattern[index] == "]":
                index += 1
            continue
        if char == "]" and depth:
            depth = 0
        index += 1
    return False


#: Split patterns of well-known tokenizers, searched without a time limit (each alternative is
#: a run of one class: linear time): Llama 3's / tiktoken's cl100k_base, Qwen2's, o200k_base, BLOOM's.
LINEAR_PATTERNS = frozenset({
    r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+",
    r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+",
    r"[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]*[\p{Ll}\p{Lm}\p{Lo}\p{M}]+(?i:'s|'t|'re|'ve|'m|'ll|'d)?|"
    r"[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]+[\p{Ll}\p{Lm}\p{Lo}\p{M}]*(?i:'s|'t|'re|'ve|'m|'ll|'d)?|"
    r"\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n/]*|\s*[\r\n]+|\s+(?!\S)|\s+",
    " ?[^(\\s|[.,!?…。，、।۔،])]+",  # BLOOM's (a class nested in a class: see has_nested_class)
})


@lru_cache(maxsize=512)
def compile_pattern(pattern: str) -> regex.Pattern:
    """Compile ``pattern`` once (cached); an invalid pattern raises :class:`PatternError` naming it."""
    if not isinstance(pattern, str):
        raise PatternError(f"A regular expression must be text, not {type(pattern).__name__}.")
    try:
        # Oniguruma's default (Ruby) syntax makes ^ and $ line anchors: MULTILINE here; a class
        # nested in a class is a union there, which regex reads only in its VERSION1 mode.
        flags = regex.MULTILINE | (regex.VERSION1 if has_nested_class(pattern) else 0)
        return regex.compile(pattern, flags)
    except regex.error as error:
        raise PatternError(f"The regular expression {pattern!r} is invalid: {error}") from error


#: One atom: an escaped char or class (not a backreference), a property (``\\p{L}``), a bracket
#: class (properties inside included), or a literal.
_ATOM = (
    r"(?:\\[^pPxuUNgk0-9]|\\[pP]\{\^?[\w=&. -]+\}|\\[pP][A-Za-z]"
    r"|\[\^?\]?(?:[^\]\\\[]|\\[^pP]|\\[pP]\{\^?[\w=&. -]+\})*\]|[^\\\[\](){}|*+?.^$])"
)
#: Literals around at most one quantified atom: at most quadratic backtracking, so a search of a
#: short text needs no time limit (regex's ``timeout=`` costs ~17 us a call, more than the search).
_BOUNDED_BRANCH = rf"{_ATOM}*(?:{_ATOM}(?:[*+?]|\{{\d+(?:,\d*)?\}})?)?{_ATOM}*"
#: ... or an alternation of such branches (tried one after the other at each position: the sum of
#: their costs), as Split patterns like ``\p{L}+|\p{N}|[^\s\p{L}\p{N}]+`` are.
_BOUNDED_PATTERN = regex.compile(rf"{_BOUNDED_BRANCH}(?:\|{_BOUNDED_BRANCH})*")
#: Texts up to this length are searched without a time limit by a bounded pattern (<= 10^6 steps).
_UNTIMED_LENGTH = 1_000
#: Atoms (a few optional) then at most one repeated atom, last: a search at each position
#: backtracks a bounded number of steps, and a match is never given back, so a whole scan is
#: linear in the text: no time limit at any length (regex's ``timeout=`` triples a long scan).
_LINEAR_BRANCH = rf"(?:{_ATOM}\??)*(?:{_ATOM}(?:[*+]|\{{\d{{1,2}}(?:,\d{{0,2}})?\}}))?"
_LINEAR_PATTERN = regex.compile(rf"{_LINEAR_BRANCH}(?:\|{_LINEAR_BRANCH})*")


@lru_cache(maxsize=512)
def _is_bounded(pattern: str) -> bool:
    """True when ``pattern`` is literals around at most one quantified atom (see _BOUNDED_PATTERN).

    >>> _is_bounded(" {2,}"), _is_bounded(r"\\s+"), _is_bounded("[ \\t]+x"), _is_bounded("(a+)+b"), _is_bounded("a+b+")
    (True, True, True, False, False)
    >>> _is_bounded(r"\\p{L}+|\\p{N}|[^\\s\\p{L}\\p{N}]+"), _is_bounded("a+|b+c+")
    (True, False)
    """
    return _BOUNDED_PATTERN.fullmatch(pattern) is not None


#: A class or property repeated, then a lookahead that it is not followed by its complement
#: (GPT-2's ``\\s+(?!\\S)``): the run gives back at most one char, so the lookahead costs a
#: linear scan nothing more (see :func:`_complement_lookaheads_dropped`).
_REPEAT_THEN_NOT = regex.compile(r"(\\[sSwWdD]|\\[pP]\{\^?[\w=&. -]+\}|\[\^?[^\]\\]*\])([*+])\(\?!(\\[sSwWdD]|\\[pP]\{\^?[\w=&. -]+\}|\[\^?[^\]\\]*\])\)")


def _complements(first: str, second: str) -> bool:
    """Whether two classes are each other's complement as written: ``\\s`` and ``\\S``,
    ``\\p{L}`` and ``\\P{L}``, ``[ab]`` and ``[^ab]``."""
    if first[0] == "[":
        return second == "[^" + first[1:] or first == "[^" + second[1:]
    return first[1] != second[1] and first[1].lower() == second[1].lower() and first[2:] == second[2:]


def _complement_lookaheads_dropped(pattern: str) -> str:
    """``pattern`` without each lookahead ``(?!Y)`` that follows a repeated ``X`` whose
    complement ``Y`` is: ``X+`` then stops at the first char not in ``X``, and a char in ``X``
    follows any shorter run, so the match is found giving back at most one char.

    >>> _complement_lookaheads_dropped(r"\\s+(?!\\S)|\\s+"), _complement_lookaheads_dropped(r"a+(?!b)")
    ('\\\\s+|\\\\s+', 'a+(?!b)')
    """
    return _REPEAT_THEN_NOT.sub(lambda m: m[1] + m[2] if _complements(m[1], m[3]) else m[0], pattern)


@lru_cache(maxsize=512)
def is_linear(pattern: str) -> bool:
    """True when ``pattern`` is searched in linear time (see _LINEAR_BRANCH and
    :func:`_complement_lookaheads_dropped`), or is one of the well-known :data:`LINEAR_PATTERNS`.

    >>> is_linear(r"\\p{L}+|\\p{N}|[^\\s\\p{L}\\p{N}]+"), is_linear(" ?[a-z]+|x{1,3}"), is_linear("a+b"), is_linear("(a|aa)+$")
    (True, True, False, False)
    >>> is_linear(r"'s|'t|'re|'ve|'m|'ll|'d| ?\\p{L}+| ?\\p{N}+| ?[^\\s\\p{L}\\p{N}]+|\\s+(?!\\S)|\\s+")  # GPT-2's
    True
    """
    if pattern in LINEAR_PATTERNS:
        return True
    pattern = _complement_lookaheads_dropped(pattern)
    # (each optional atom doubles the ways a failing position can be tried: a few at most)
    return pattern.count("?") <= 4 and _LINEAR_PATTERN.fullmatch(pattern) is not None


def match_spans(compiled: regex.Pattern, text: str, timeout: float | None = None) -> list[tuple[int, int]]:
    """``(start, end)`` of every non-overlapping match, under the time limit.

    Empty matches follow HF (Oniguruma's iterator), not Python: an empty text has no
    matches, an empty match right where the previous match ended is skipped, and after
    an empty match at ``p`` the search resumes at ``p + 1`` (Python would first try a
    non-empty match at ``p``). Python would also report ``(2, 2)`` below.

    >>> match_spans(compile_pattern("a+"), "caaba")
    [(1, 3), (4, 5)]
    >>> match_spans(compile_pattern("a*"), "aab")
    [(0, 2), (3, 3)]
    """
    if not text:
        return []
    limit, budget = _search_limit(timeout)
    if limit <= 0:
        raise _timeout_error(compiled, text, limit, budget)
    if is_linear(compiled.pattern) or (len(text) <= _UNTIMED_LENGTH and _is_bounded(compiled.pattern)):
        return _spans(compiled, text, None)
    try:
        return _spans(compiled, text, time.monotonic() + limit)
    except TimeoutError as error:
        raise _timeout_error(compiled, text, limit, budget) from error


def _spans(compiled: regex.Pattern, text: str, deadline: float | None) -> list[tuple[int, int]]:
    """:func:`match_spans`' loop; no time limit when ``deadline`` is None (TimeoutError past it)."""
    matches = compiled.finditer(text) if deadline is None else compiled.finditer(text, timeout=max(deadline - time.monotonic(), 1e-3))
    spans = [match.span() for match in matches]
    if not any(starmap(eq, spans)):
        return spans  # no empty match: Python's matches are Oniguruma's
    spans = []
    previous_end = -1
    position = 0
    while position <= len(text):
        empty_at = -1  # position of the last empty match seen in this pass
        restart_at = None
        matches = (
            compiled.finditer(text, position)
            if deadline is None
            else compiled.finditer(text, position, timeout=max(deadline - time.monotonic(), 1e-3))
        )
        for match in matches:
            start, end = match.span()
            if start == empty_at:
                # Python tries a non-empty match where the empty one was; Oniguruma
                # has already moved on by one char.
                restart_at = start + 1
                break
            if start == end:
                empty_at = start
                if start == previous_end:
                    continue
            spans.append((start, end))
            previous_end = end
        if restart_at is None:
            break
        position = restart_at
    return spans


def find_all(compiled: regex.Pattern, text: str, timeout: float | None = None, split: bool = False) -> list[Any]:
    """``compiled.findall(text)`` under the time limit (the C-level fast path for training);
    ``split``: ``compiled.split(text)`` instead. A linear pattern needs no limit (:func:`is_linear`)."""
    search = compiled.split if split else compiled.findall
    if is_linear(compiled.pattern):
        return search(text)
    limit, budget = _search_limit(timeout)
    try:
        if limit <= 0:
            raise TimeoutError
        return search(text, timeout=limit)
    except TimeoutError as error:
        raise _timeout_error(compiled, text, limit, budget) from error


def replace_spans(text: str, spans: list[tuple[int, int]], content: str) -> str:
    """``text`` with each span replaced by ``content``, spliced by hand so that backslashes in
    ``content`` stay literal, as in HF: ``replace_spans("a-b", [(1, 2)], "\\1") -> 'a\\1b'``."""
    pieces = []
    previous = 0
    for start, end in spans:
        pieces.append(text[previous:start])
        pieces.append(content)
        previous = end
    pieces.append(text[previous:])
    return "".join(pieces)


def spans_to_matches(spans: list[tuple[int, int]], length: int) -> Matches:
    """Cover ``0..length`` with the match spans and the gaps between them, HF's ``find_matches``.

    An empty text is one non-matching piece, like HF: ``([], 0) -> [((0, 0), False)]``.

    >>> spans_to_matches([(1, 2)], 4)
    [((0, 1), False), ((1, 2), True), ((2, 4), False)]
    """
    if length == 0:
        return [((0, 0), False)]
    pieces: Matches = []
    previous_end = 0
    for start, end in spans:
        if start != previous_end:
            pieces.append(((previous_end, start), False))
        pieces.append(((start, end), True))
        previous_end = end
    if previous_end != length:
        pieces.append(((previous_end, length), False))
    return pieces


#: ``regex``'s sets on ASCII text as :mod:`re` class items (its ``\s``, White_Space, lacks \x1c-\x1f).
#: regex's ``\s`` on ASCII text (its ``\s``, White_Space, lacks \x1c-\x1f), and in any text.
_ASCII_SPACES, _WHITE_SPACE = r"\t\n\x0b\x0c\r ", r"\t\n\x0b\x0c\r \x85\xa0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000"
#: regex's sets as :mod:`re` class items: on ASCII text, and in any text.
_ASCII_SETS = {r"\p{L}": "A-Za-z", r"\p{N}": "0-9", r"\s": _ASCII_SPACES, r"\S": "^" + _ASCII_SPACES}
_TEXT_SETS = {r"\s": _WHITE_SPACE, r"\S": "^" + _WHITE_SPACE}
#: Escapes whose sets come from Unicode tables (which :mod:`re` and regex may hold in other versions).
_TABLE_ESCAPES = frozenset([r"\p", r"\P", r"\X", r"\d", r"\D", r"\w", r"\W", r"\b", r"\B", r"\N", r"\h", r"\H", r"\R", r"\m", r"\M"])
_TWIN_TOKEN = regex.compile(r"\\[pP]\{[^}]*\}|\\.|\[\^?\]?|.", regex.S)
_INLINE_FLAGS = regex.compile(r"\(\?[\^a-zA-Z-]")


@lru_cache(maxsize=512)
def ascii_twin(compiled: regex.Pattern) -> Any:
    """A :mod:`re` pattern (faster) finding in ASCII texts what ``compiled`` finds, its sets
    spelled out; None for other properties, nested classes, flags or syntax :mod:`re` lacks.

    >>> ascii_twin(compile_pattern(r"[^\\s\\p{L}]+|\\S")).pattern
    '[^\\\\t\\\\n\\\\x0b\\\\x0c\\\\r A-Za-z]+|[^\\\\t\\\\n\\\\x0b\\\\x0c\\\\r ]'
    """
    if compiled.flags & ~(regex.MULTILINE | regex.VERSION0 | regex.UNICODE) or not compiled.pattern.isascii():
        return None
    return _twin(compiled, _ASCII_SETS, (r"\p", r"\P", r"\X"))


@lru_cache(maxsize=512)
def text_twin(compiled: regex.Pattern) -> Any:
    """A :mod:`re` pattern (faster) finding in any text what ``compiled`` finds, for a pattern
    whose sets are all spelled out (chars, ranges, ``\\s``, a VERSION1 class nested in a class as
    their union, BLOOM's); None when one comes from a Unicode table (``\\p{L}``, ``\\w``), or for
    flags, set operations or syntax :mod:`re` lacks.

    >>> text_twin(compile_pattern(" ?[^(\\\\s|[.,!?])]+")).findall("Hi, you\\u3000x!")
    ['Hi', ' you', 'x']
    >>> text_twin(compile_pattern(r"\\p{L}+")) is None
    True
    """
    flags = compiled.flags
    if flags & ~(regex.MULTILINE | regex.VERSION0 | regex.VERSION1 | regex.UNICODE | regex.FULLCASE) or _INLINE_FLAGS.search(compiled.pattern):
        return None  # (FULLCASE, set by VERSION1, acts only with IGNORECASE, which is refused)
    if flags & regex.VERSION1 and any(operator in compiled.pattern for operator in ("&&", "--", "||", "~~")):
        return None  # (VERSION1's set operations)
    return _twin(compiled, _TEXT_SETS, _TABLE_ESCAPES, nested=bool(flags & regex.VERSION1))


def _twin(compiled: regex.Pattern, sets: dict[str, str], refused: Any, nested: bool = False) -> Any:
    """``compiled`` in :mod:`re` with ``sets`` spelled out as class items, or None for an escape
    in ``refused`` (but those of ``sets``), ``\\S`` in a class, a class in a class (but a plain one
    in a ``nested`` pattern: its items join the outer class's), or what :mod:`re` cannot compile."""
    out, depth = [], 0
    for token in _TWIN_TOKEN.findall(compiled.pattern):
        if token[:2] in refused and token not in sets:
            return None
        if depth:
            if token[0] == "[":
                if not nested or token != "[":
                    return None
                depth += 1
                continue
            if token == "]":
                depth -= 1
                if depth:
                    continue
            elif token == r"\S":
                return None
        elif token[0] == "[":
            if token[-1] == "]" and not nested:
                return None  # (a "]" first in a class)
            depth = 1
        out.append(f"[{sets[token]}]" if token in sets and not depth else sets.get(token, token))
    try:
        return re.compile("".join(out), compiled.flags & regex.MULTILINE and re.MULTILINE)
    except re.error:
        return None


@dataclass(frozen=True, slots=True)
class Regex:
    """A regular expression (as opposed to a literal string), like ``tokenizers.Regex``.

    Compiles on construction, so a bad pattern fails where the user typed it.

    >>> Regex(r"\\s+").find_matches("a  b")
    [((0, 1), False), ((1, 3), True), ((3, 4), False)]
    """

    pattern: str
    _compiled: regex.Pattern = field(init=False, repr=False, compare=False, hash=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "_compiled", compile_pattern(self.pattern))

    @property
    def compiled(self) -> regex.Pattern:
        return self._compiled

    def find_spans(self, text: str) -> list[tuple[int, int]]:
        """Every match as ``(start, end)`` character offsets, under the time limit."""
        return match_spans(self._compiled, text)

    def find_matches(self, text: str) -> Matches:
        """Matches and the gaps between them, covering ``text``: HF's ``Pattern::find_matches``."""
        if not text:
            return [((0, 0), False)]
        return spans_to_matches(self.find_spans(text), len(text))

    def findall(self, text: str) -> list[Any]:
        return find_all(self._compiled, text)

    def __reduce__(self):  # the compiled pattern is rebuilt, never pickled
        return (Regex, (self.pattern,))
