"""The engine's normalizer stages on plain strings, and the alignment they keep.

A piece is normalized with plain ``str`` operations while every stage keeps it aligned char for
char (:func:`_staged`; per char through ``str.translate`` on non-ASCII text, :func:`_staged_chars`)
or collapses whitespace runs (:func:`_collapsed_runs`); a text is cut into segments after line ends
where no stage reaches over the cut (:func:`_segments`), so that only the segments a stage does not
keep aligned are aligned by a NormalizedString (``engine.fields``). Read first: it depends on no
other engine module.
"""

from __future__ import annotations

import re
import unicodedata
from itertools import chain, compress, repeat
from operator import add, eq, is_, itemgetter, sub
from typing import Any, TYPE_CHECKING

import regex

from tokviz.normalizers import ASCII_SPACES, SPACE_ONLY_PATTERNS, WHITESPACE_PATTERNS
from tokviz.patterns import Regex

if TYPE_CHECKING:  # (the plan, a layer up, in annotations only)
    from tokviz.engine.plan import CutPlan


def _segment_local(stage: Any) -> bool:
    """Whether a stage gives a text cut by :func:`_segments` the same output and alignments piece
    by piece as whole (local to lines, or a Replace whose matches never reach over a cut)."""
    if stage.prepends:
        return False
    if stage.local_to_lines:
        return True
    if not stage.replaces:
        return False
    pattern = stage.pattern
    if isinstance(pattern, str):
        return not any(map(str.isspace, pattern))
    return pattern.pattern in SPACE_ONLY_PATTERNS or pattern.pattern in WHITESPACE_PATTERNS


def _shifts(stages: tuple[Any, ...]) -> tuple[str, tuple[tuple[str, str], ...]] | None:
    """Stages that only prepend and replace one char by one, as ``(prepended, ((a, b), ...))``
    (each Replace also acts on what was prepended before it), or None.

    >>> from tokviz import normalizers
    >>> stages = [normalizers.Replace(" ", "_"), normalizers.Prepend(" "), normalizers.Replace(" ", "▁")]
    >>> _shifts(stages)
    ('▁', ((' ', '_'), (' ', '▁')))
    """
    if not stages:
        return None
    prepended = ""
    replaces = []
    for stage in stages:
        if stage.prepends and isinstance(stage.prepend, str):
            prepended = stage.prepend + prepended
        elif stage.replaces and type(stage.pattern) is str and len(stage.pattern) == 1 and len(stage.content) == 1:
            prepended = prepended.replace(stage.pattern, stage.content)
            replaces.append((stage.pattern, stage.content))
        else:
            return None
    return prepended, tuple(replaces)


def _loses_a_removal(stage: Any, text: str) -> bool:
    """Whether HF's Precompiled loses a removal on ``text``: its first grapheme cluster goes.

    >>> from tokviz.normalizers import Precompiled
    >>> from tokviz.sentencepiece.normalizer import charsmap_for_rule
    >>> nmt_nfkc = Precompiled(charsmap_for_rule("nmt_nfkc"))
    >>> _loses_a_removal(nmt_nfkc, "\\x1cﬁ"), _loses_a_removal(nmt_nfkc, " \\x1cﬁ")
    (True, False)
    """
    from tokviz.normalizers import GRAPHEME

    first = GRAPHEME.match(text)
    return first is not None and stage.normalize_str(first.group()) == ""


def _aligned_stage(stage: Any, text: str) -> str | None:
    """A stage (not Prepend) on ``text`` when the result is aligned char for char with it,
    else None (also for an empty result).

    >>> from tokviz.normalizers import NFKC, Lowercase
    >>> _aligned_stage(Lowercase(), "ÉtÉ"), _aligned_stage(NFKC(), "ﬁne")
    (None, None)
    """
    is_ascii = text.isascii()
    new = stage.ascii_one_for_one(text) if is_ascii else None  # (False: surely not one for one)
    if new is not None:
        return new or None
    new = stage.normalize_str(text)
    if new == text:
        return new or None
    if len(new) != len(text):
        return None
    if stage.replaces:
        # A one-char pattern replaced by one char (the lengths are equal).
        return new if isinstance(stage.pattern, str) and len(stage.pattern) == 1 else None
    return new if stage.aligned_if_same_length_on_ascii and is_ascii else None


_SPACE_RUN_FINDITER = re.compile(" {2,}").finditer


_ASCII_SPACE_RUN_FINDITER = re.compile("[\t\n\x0b\x0c\r ]{2,}").finditer


def _collapsed_runs(stage: Any, text: str, origin: list[int] | None, spaces_ascii: bool = False) -> tuple[str, list[int] | None] | None:
    """A Replace of runs of spaces (or ASCII whitespace) by one char: the new text and, per
    char, the position in the piece of the char it stands for (a run's last, as HF's;
    ``origin``: that of ``text``'s chars, None for themselves); None for other stages.
    ``spaces_ascii``: ``text``'s whitespace is known to be ASCII.

    >>> from tokviz.normalizers import Replace
    >>> from tokviz.patterns import Regex
    >>> _collapsed_runs(Replace(Regex(r"\\s+"), " "), "a\\n\\nb c", None)
    ('a b c', [0, 2, 3, 4, 5])
    >>> _collapsed_runs(Replace(Regex(r"\\s+"), " "), "a\\tb", None)
    ('a b', None)
    """
    pattern = stage.pattern
    content = stage.content
    if not isinstance(pattern, Regex) or len(content) != 1:
        return None
    source = pattern.pattern
    if source in SPACE_ONLY_PATTERNS:
        finditer = _SPACE_RUN_FINDITER
        singles = " " if source == " +" else ""
    elif source in WHITESPACE_PATTERNS and (spaces_ascii or text.isascii()):
        finditer = _ASCII_SPACE_RUN_FINDITER
        singles = ASCII_SPACES if source == r"\s+" else ""
    else:
        return None
    for single in singles:  # (str.replace per char: str.translate with a dict is slow on non-ASCII text)
        if single != content and single in text:
            text = text.replace(single, content)
    parts: list[str] = []
    positions: list[int] = []
    kept_from = 0
    for match in finditer(text):
        start, end = match.span()
        parts.append(text[kept_from:start])
        parts.append(content)
        if origin is None:
            positions.extend(range(kept_from, start))
            positions.append(end - 1)
        else:
            positions.extend(origin[kept_from:start])
            positions.append(origin[end - 1])
        kept_from = end
    if not parts:
        return text, origin  # no run: each char stands where it stood
    parts.append(text[kept_from:])
    if origin is None:
        positions.extend(range(kept_from, len(text)))
    else:
        positions.extend(origin[kept_from:])
    return "".join(parts), positions


def _staged(plan: CutPlan, text: str, head: bool = True) -> tuple[str | None, int, list[int] | None]:
    """The stages on a whole piece: ``(text, chars prepended, origin)`` (``origin``: see
    :func:`_collapsed_runs`); text None where a stage does not keep the piece aligned (or
    empties it). ``head``: the text opens a piece (Prepend stages act)."""
    if not text.isascii():
        return _staged_chars(plan, text, head)
    prefix = 0  # chars inserted before the piece's first char
    origin = None
    for stage in plan.stages:
        if stage.prepends:
            if not head:
                continue
            text = stage.prepend + text
            prefix += len(stage.prepend)
            continue
        new = _aligned_stage(stage, text)
        if new is None:
            collapsed = _collapsed_runs(stage, text, origin) if stage.replaces and not prefix else None
            if collapsed is None:
                return None, prefix, None
            new, origin = collapsed
        text = new
    return text, prefix, origin


#: A char that joins the one before it in a grapheme cluster, or may compose with it (a
#: non-starter, or Hangul V/T), and one that joins the char after it in a cluster (also an
#: Extend: a virama links Indic consonants; and CR before LF).
_JOINS_PREVIOUS = regex.compile(r"[\p{Grapheme_Cluster_Break=Extend}\p{Grapheme_Cluster_Break=ZWJ}\p{Grapheme_Cluster_Break=SpacingMark}"
                                r"\p{Grapheme_Cluster_Break=V}\p{Grapheme_Cluster_Break=T}\p{Grapheme_Cluster_Break=Regional_Indicator}]")


_JOINS_NEXT = regex.compile(r"[\p{Grapheme_Cluster_Break=Prepend}\p{Grapheme_Cluster_Break=L}\p{Grapheme_Cluster_Break=Regional_Indicator}"
                            r"\p{Grapheme_Cluster_Break=ZWJ}\p{Grapheme_Cluster_Break=Extend}\r]")


#: White_Space outside ASCII (what ``\s`` also matches there).
_NON_ASCII_SPACE = regex.compile(r"(?![\x00-\x7f])\s")


class _CharTables:
    """What a run of per-char stages makes of each char met so far (see :func:`_staged_chars`):
    ``known`` chars, the ``translation`` (for ``str.translate``) of those it changes, the
    ``changed`` ones, the ``longer`` ones it makes several chars of (char -> them), and the
    ``refused`` chars (whose pieces are aligned segment by segment).

    >>> tables = _CharTables()
    >>> tables.learn("a", "a"); tables.learn("ﬁ", "fi"); tables.known == {"a", "ﬁ"}, tables.translation, tables.longer
    (True, {64257: 'fi'}, {'ﬁ': 'fi'})
    """

    __slots__ = ("known", "translation", "changed", "longer", "refused")

    def __init__(self) -> None:
        self.known: set[str] = set()
        self.translation: dict[int, str] = {}
        self.changed: set[str] = set()
        self.longer: dict[str, str] = {}
        self.refused: set[str] = set()

    def learn(self, char: str, new: str) -> None:
        # (known last: another thread that sees a char known sees what it becomes)
        if new != char:
            self.translation[ord(char)] = new
            if len(new) > 1:
                self.longer[char] = new
            self.changed.add(char)
        self.known.add(char)


def _char_groups(plan: CutPlan) -> list[tuple[str, Any, Any]]:
    """The stages as :func:`_staged_chars` runs them: ``("prepend"|"replace", stage, None)``
    or ``("chars", stages, tables)`` per run of per-char stages (printable ASCII learnt at once)."""
    groups: list[tuple[str, Any, Any]] = []
    for stage in plan.stages:
        if stage.prepends:
            groups.append(("prepend", stage, None))
        elif stage.per_char or (stage.replaces and isinstance(stage.pattern, str) and len(stage.pattern) == 1):
            if groups and groups[-1][0] == "chars":
                groups[-1][1].append(stage)
            else:
                groups.append(("chars", [stage], _CharTables()))
        else:
            groups.append(("replace", stage, None))
    for kind, stages, tables in groups:
        through = _printable_ascii_through(stages) if kind == "chars" else None
        if through is not None:
            for char, new in zip(_PRINTABLE_ASCII, through):
                tables.learn(char, new)
    return groups


def _chars_output(stages: list[Any], chars: list[str]) -> list[str | None]:
    """What a run of per-char stages makes of each of ``chars`` alone, or None where that may
    differ in context: a stage's input that joins or composes with what comes before, one a
    Precompiled stage would join to what comes after, or an emptied char. Checked stage by
    stage in one regex pass over the inputs that changed.

    >>> from tokviz.normalizers import NFKD, StripAccents, Lowercase
    >>> _chars_output([NFKD(), StripAccents(), Lowercase()], ["É", "\u0301", "ﬁ", "a"])
    ['e', None, 'fi', 'a']
    """
    texts: list[str | None] = list(chars)
    checked = [""] * len(texts)
    live = list(range(len(texts)))
    for stage in stages:
        fresh = [index for index in live if texts[index] != checked[index]]
        if fresh:
            firsts = "".join([texts[index][0] for index in fresh])  # type: ignore[index]
            joining = {match.start() for match in _JOINS_PREVIOUS.finditer(firsts)}
            joining.update(compress(range(len(firsts)), map(unicodedata.combining, firsts)))
            for position in joining:
                texts[fresh[position]] = None
            for index in fresh:
                checked[index] = texts[index]  # type: ignore[assignment]
        if stage.on_graphemes:
            lasts = "".join([texts[index][-1] for index in live if texts[index] is not None])  # type: ignore[index]
            if _JOINS_NEXT.search(lasts) is not None:
                kept = [index for index in live if texts[index] is not None]
                for match in _JOINS_NEXT.finditer(lasts):
                    texts[kept[match.start()]] = None
        live = [index for index in live if texts[index] is not None]
        for index, new in zip(live, map(stage.normalize_str, [texts[index] for index in live])):
            texts[index] = new or None
        live = [index for index in live if texts[index] is not None]
    return texts


def _aligned_to_their_chars(stages: list[Any], chars: str, outputs: list[str]) -> bool:
    """Whether the stages make ``outputs`` of ``chars`` (passed by :func:`_chars_output`) with
    each output char aligned to the char it is made of, by the general machinery, in one run.

    >>> from tokviz.normalizers import BertNormalizer, NFKD
    >>> _aligned_to_their_chars([BertNormalizer()], "我们", [" 我 ", " 们 "]), _aligned_to_their_chars([NFKD()], "ﬁ", ["fi"])
    (True, True)
    """
    from tokviz.normalized import NormalizedString

    normalized = NormalizedString(chars)
    try:
        for stage in stages:
            stage.normalize(normalized)
    except Exception:  # (the aligned path meets it, and says what is wrong)
        return False
    expected = list(chain.from_iterable(repeat((index, index + 1), len(output)) for index, output in enumerate(outputs)))
    return normalized.normalized == "".join(outputs) and normalized.alignments == expected


#: The printable ASCII chars, whose tables :func:`_char_groups` fills at once.
_PRINTABLE_ASCII = "".join(map(chr, range(0x20, 0x7F)))


def _printable_ascii_through(stages: list[Any]) -> str | None:
    """:func:`_chars_output` of the 95 printable ASCII chars in one run, valid while no stage's
    input may join or compose and every stage keeps the length; None otherwise.

    >>> from tokviz.normalizers import NFKD, StripAccents, Lowercase
    >>> _printable_ascii_through([NFKD(), StripAccents(), Lowercase()])[33:40]
    'abcdefg'
    """
    text = _PRINTABLE_ASCII
    for stage in stages:
        if _JOINS_PREVIOUS.search(text) is not None or _JOINS_NEXT.search(text) is not None or any(map(unicodedata.combining, text)):
            return None
        try:
            text = stage.normalize_str(text)
        except Exception:  # (a stage that cannot run says so where the chars meet it, as before)
            return None
        if len(text) != len(_PRINTABLE_ASCII):
            return None
    return text


def _staged_chars(plan: CutPlan, text: str, head: bool = True) -> tuple[str | None, int, list[int] | None]:
    """:func:`_staged` on a non-ASCII piece: each run of per-char stages is one ``str.translate``
    of each char to what it makes of it alone (several chars each aligned to it: then ``origin``
    is kept); a char for which that does not hold (see :func:`_chars_output`) leaves the piece
    to :func:`_aligned_fields`. Other Replaces must find nothing or collapse whitespace runs.

    >>> from tokviz import models, normalizers, pre_tokenizers
    >>> from tokviz.engine.plan import build_plan
    >>> plan = build_plan(normalizers.Sequence([normalizers.NFKD(), normalizers.StripAccents(), normalizers.Lowercase()]),
    ...                   pre_tokenizers.Whitespace(), models.WordLevel({"[UNK]": 0}, unk_token="[UNK]"))
    >>> _staged_chars(plan, "Été à Ｐaris"), _staged_chars(plan, "ﬁné")
    (('ete a paris', 0, None), ('fine', 0, [0, 0, 1, 2]))
    """
    groups = plan.char_groups
    if groups is None:
        groups = plan.char_groups = _char_groups(plan)
    prefix = 0
    origin = None
    for kind, stage, tables in groups:
        if kind == "prepend":
            if not head:
                continue
            text = stage.prepend + text
            prefix += len(stage.prepend)
            continue
        if kind == "replace":
            if not stage.replaces:  # (another stage: only where it changes nothing)
                if stage.normalize_str(text) != text:
                    return None, prefix, None
                continue
            pattern = stage.pattern
            if isinstance(pattern, str):
                if pattern in text:
                    return None, prefix, None
                continue
            if pattern.pattern in WHITESPACE_PATTERNS and _NON_ASCII_SPACE.search(text) is not None:
                return None, prefix, None
            collapsed = None if prefix else _collapsed_runs(stage, text, origin, True)
            if collapsed is None:
                return None, prefix, None
            text, origin = collapsed
            continue
        chars = set(text)
        fresh = chars.difference(tables.known)
        if fresh:
            if not tables.refused.isdisjoint(fresh):
                return None, prefix, None
            longer_fresh = []
            fresh_chars = list(fresh)
            outputs = _chars_output(stage, fresh_chars)
            if None in outputs:
                tables.refused.update(compress(fresh_chars, map(is_, outputs, repeat(None))))
                return None, prefix, None
            for char, new in zip(fresh_chars, outputs):
                if len(new) > 1:
                    longer_fresh.append((char, new))
                else:
                    tables.learn(char, new)
            if longer_fresh:
                # Their alignments, by the general machinery, in one run for all of them.
                if not _aligned_to_their_chars(stage, "".join([char for char, _ in longer_fresh]), [new for _, new in longer_fresh]):
                    # Those that fail alone are refused (all of them, if each passes alone).
                    failed = [char for char, new in longer_fresh if not _aligned_to_their_chars(stage, char, [new])]
                    tables.refused.update(failed or [char for char, _ in longer_fresh])
                    return None, prefix, None
                for char, new in longer_fresh:
                    tables.learn(char, new)
        if tables.changed.isdisjoint(chars):
            continue
        longer = tables.longer
        if longer and not longer.keys().isdisjoint(chars):
            if prefix:
                return None, prefix, None  # (prepended chars and an origin: see _aligned_fields)
            # Each char of the result comes from the char it was made of (or, after collapsed
            # runs, from where that char came from).
            sizes = map(len, map(longer.get, text, text))
            origin = list(chain.from_iterable(map(repeat, range(len(text)) if origin is None else origin, sizes)))
        text = text.translate(tables.translation)
    return (text or None), prefix, origin


def _through_origin(offsets: tuple[tuple[int, int], ...], origin: list[int]) -> tuple[tuple[int, int], ...] | None:
    """Offsets in a normalized piece as offsets in the piece (see :func:`_staged`): from the
    first char's origin to one past the last char's; None when a token is empty.

    >>> _through_origin(((0, 1), (1, 3)), [0, 2, 3])
    ((0, 1), (2, 4))
    """
    starts = list(map(itemgetter(0), offsets))
    ends = list(map(itemgetter(1), offsets))
    if any(map(eq, starts, ends)):
        return None
    at = origin.__getitem__
    return tuple(zip(map(at, starts), map(add, map(at, map(sub, ends, repeat(1))), repeat(1))))


#: Lines, each with the whitespace after its line end (so a run of whitespace is never cut).
_LINES = regex.compile(r"[^\n]*\n\s*|[^\n]+").findall


_WHITESPACE_CHAR = regex.compile(r"\s")


def _opens_segment(plan: CutPlan, char: str) -> bool:
    """Whether a text may be cut between a line end and ``char`` (see :func:`_segments`): no
    cluster, whitespace run or literal can reach over the cut. Asked once per char."""
    opens = plan.openers.get(char)
    if opens is None:
        opens = _JOINS_PREVIOUS.match(char) is None and (not plan.runs or _stays(plan.stages, char, False))
        if len(plan.openers) < 100_000:
            plan.openers[char] = opens
    return opens


def _stays(stages: tuple[Any, ...], text: str, whitespace: bool) -> bool:
    """Whether each stage in turn leaves ``text`` non-empty and all whitespace (or none)."""
    try:
        for stage in stages:
            text = stage.normalize_str(text)
            if not text or (whitespace and not text.isspace()) or (not whitespace and _WHITESPACE_CHAR.search(text) is not None):
                return False
    except Exception:  # (a stage that cannot run on it: no cut there)
        return False
    return True


def _segments(plan: CutPlan, text: str) -> list[str]:
    """``text`` cut after each line end (and the whitespace after it) where
    :func:`_opens_segment` allows it.

    >>> from tokviz import models, normalizers, pre_tokenizers
    >>> from tokviz.engine.plan import build_plan
    >>> plan = build_plan(normalizers.NFC(), pre_tokenizers.Whitespace(), models.WordLevel({"[UNK]": 0}, unk_token="[UNK]"))
    >>> _segments(plan, "a\\n\\u0301b\\nc \\n\\nd")
    ['a\\n\\u0301b\\n', 'c \\n\\n', 'd']
    """
    segments: list[str] = []
    for line in _LINES(text):
        if segments and not _opens_segment(plan, line[0]):
            segments[-1] += line
        else:
            segments.append(line)
    return segments
