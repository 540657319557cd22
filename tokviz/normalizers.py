"""Normalizers: the first stage of a tokenizer, cleaning text before it is cut into words.

Each normalizer mirrors ``tokenizers.normalizers``: same class name, same options, same
output, and the same tokenizer.json fragment (``to_dict`` / :func:`from_dict`). Each has

- ``normalize(ns)``: edits a :class:`~tokviz.normalized.NormalizedString` in place,
  keeping every char aligned to the original text (a few lines on ``ns.transform``);
- ``normalize_str(s)``: the same result as plain text, through a fast string-only path
  (``str.translate``, ``unicodedata.normalize``...), which training uses on megabytes.

>>> BertNormalizer(lowercase=True).normalize_str("Héllò hôw are ü?")
'hello how are u?'
>>> Sequence([NFD(), Lowercase(), StripAccents()]).normalize_str("Héllò hôw are ü?")
'hello how are u?'

Components are dataclasses whose fields are HF's options, mutable as HF's are
(``seq[1] = Strip()``, ``bert.lowercase = False``): an edit is checked as the constructor
checks it and bumps :mod:`tokviz._mutation`'s counter. They are equal by value and so not
hashable; caches key on :class:`~tokviz.pipeline_config.PipelineConfig`, never on them.
``repr``, ``__getstate__`` and pickling are HF's (``NFC()``, ``b'{"type":"NFC"}'``).

A Python object with a ``normalize(normalized_string)`` method becomes a normalizer with
:meth:`Normalizer.custom` (a library feature: it cannot be saved to tokenizer.json).

``Precompiled`` reads SentencePiece's compiled charsmap (the double-array trie inside a
``.model`` file) and applies it per grapheme cluster exactly as HF does.

Character properties come from Python's ``unicodedata``; for characters added to Unicode
after the tables HF was built with, the two libraries can disagree.
"""

from __future__ import annotations

import re
import sys
import base64
import binascii
import unicodedata
from dataclasses import dataclass

from tokviz._component import CustomComponent, DataclassComponent, SequenceItems, fragment_field, from_fields
from functools import lru_cache, partial
from typing import Any, ClassVar, Union

import regex

from tokviz.byte_level import text_to_symbols
from tokviz import limits
from tokviz.errors import LimitExceededError, SerializationError, TokvizError
from tokviz.normalized import WHITESPACE, NormalizedString, is_whitespace
from tokviz.patterns import Regex, replace_spans
from tokviz.precompiled_charsmap import PrecompiledCharsmap

__all__ = [
    "Normalizer",
    "NFD",
    "NFKD",
    "NFC",
    "NFKC",
    "Lowercase",
    "StripAccents",
    "Strip",
    "Replace",
    "Prepend",
    "BertNormalizer",
    "Nmt",
    "ByteLevel",
    "Precompiled",
    "Sequence",
    "from_dict",
    "unicode_normalizer_from_str",
]


class Normalizer(DataclassComponent):
    """Base of every normalizer: ``normalize`` in place, ``normalize_str`` on plain text."""

    __slots__ = ()
    #: What the encoding engine asks: when ``normalize_str`` returns its input unchanged, is
    #: every char aligned to itself? True for every built-in normalizer (each edits chars in
    #: place, so an unchanged text was not edited), so the engine builds no alignments for
    #: such a text; False for one that could give the same text other alignments (a custom one).
    aligned_if_unchanged: ClassVar[bool] = True
    #: What the encoding engine asks: does normalizing a text line by line (cut after each
    #: line end) give the same text and alignments as normalizing it whole? True for the
    #: normalizers that work char by char or per grapheme (a line end closes a grapheme and
    #: composes with nothing), so the engine aligns only the lines they change.
    local_to_lines: ClassVar[bool] = False
    #: What the engine asks (:mod:`tokviz.engine.cut`): does it act on each char (or
    #: grapheme cluster) alone, whatever is around it?
    per_char: ClassVar[bool] = False
    #: ... on grapheme clusters (a char's output may depend on the marks after it)?
    on_graphemes: ClassVar[bool] = False
    #: ... does it only add text before the text's first char (so it acts once, at the start)?
    prepends: ClassVar[bool] = False
    #: ... does it replace the matches of its ``pattern`` by its ``content`` (the engine reads
    #: the pattern to know whether a match may reach over a cut)?
    replaces: ClassVar[bool] = False
    #: ... on ASCII text, is an output as long as the input aligned char for char?
    aligned_if_same_length_on_ascii: ClassVar[bool] = False
    #: What the byte-level engine asks: the Unicode normal form this normalizer applies, if
    #: that is all it does ("NFC", "NFD", "NFKC", "NFKD"; a text already in it is left as is).
    unicode_form: ClassVar[str | None] = None
    #: Whether a :class:`Sequence` counts this step's output against the growth bound
    #: (:data:`tokviz.limits.MAX_NORMALIZER_GROWTH`): the steps that may lengthen a text beyond
    #: what Unicode's own normalizations do (``Replace``, ``Prepend``, ``Precompiled``, a ``Sequence``).
    may_grow: ClassVar[bool] = False

    def ascii_one_for_one(self, text: str) -> str | bool | None:
        """What the engine asks of an ASCII ``text``: this normalizer's output when each char
        stays one char (computed in one C call where that is easy), False when the chars surely
        do not stay one for one (dropped, expanded or joined), None when not known here (the
        engine then asks ``normalize_str``). Options are read now, since components may be edited.

        >>> Lowercase().ascii_one_for_one("Hi"), BertNormalizer().ascii_one_for_one("Hi\\tYou")
        ('hi', 'hi you')
        >>> spaces = Replace(Regex(r"\\s+"), " ")
        >>> spaces.ascii_one_for_one("a\\nb c"), spaces.ascii_one_for_one("a\\n b")
        ('a b c', False)
        """
        return None

    @classmethod
    def _from_state_dict(cls, data: dict[str, Any]) -> "Normalizer | None":
        return from_dict(data)

    @staticmethod
    def custom(normalizer: Any) -> "CustomNormalizer":
        """HF's ``Normalizer.custom``: wrap a Python object with ``normalize(normalized)``.

        >>> class Upper:
        ...     def normalize(self, normalized):
        ...         normalized.uppercase()
        >>> Normalizer.custom(Upper()).normalize_str("hi")
        'HI'
        """
        return CustomNormalizer(normalizer)

    def normalize(self, normalized: NormalizedString) -> None:
        raise NotImplementedError

    def normalize_str(self, sequence: str) -> str:
        ns = NormalizedString(sequence)
        self.normalize(ns)
        return ns.normalized

    def steps(self) -> tuple["Normalizer", ...]:
        """The normalizers this one runs, in order (a :class:`Sequence` flattened), for the
        engine to test each on its own: ``Sequence([NFC(), Sequence([Lowercase()])]).steps()
        -> (NFC(), Lowercase())``."""
        return (self,)

    def growth(self) -> tuple[int, int]:
        """``(factor, extra)``: a text of n characters comes out of this step at most ``factor * n + extra``
        long, as far as the server's growth bound is concerned (:data:`tokviz.limits.MAX_NORMALIZER_GROWTH`
        holds ``Replace``, ``Prepend`` and hand-made ``Precompiled`` maps to it; Unicode's own normalizations,
        NFKC's at most 18 characters for U+FDFA, are what HF does and are not counted)."""
        return 1, 0

    def to_dict(self) -> dict[str, Any]:
        return {"type": type(self).__name__}


#: Regex patterns of Replace that match only spaces, or only whitespace (seen in converted files).
SPACE_ONLY_PATTERNS = frozenset({" {2,}", " +", "  +"})
WHITESPACE_PATTERNS = frozenset({r"\s+", r"\s{2,}"})
#: ASCII whitespace as the patterns' ``\s`` sees it (Unicode White_Space: not \x1c-\x1f).
ASCII_SPACES = "\t\n\x0b\x0c\r "
_ASCII_SPACE_PAIR = re.compile("[\t\n\x0b\x0c\r ]{2}")
_ASCII_CONTROL = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]")
_TAB_NEWLINE_TO_SPACE = str.maketrans("\t\n\r", "   ")


# --------------------------------------------------------------------------- Unicode forms


class UnicodeForm(Normalizer):
    """Base of the four Unicode normal forms; a subclass names its form (``unicode_form``), which a
    text already in it leaves unchanged."""

    __slots__ = ()
    local_to_lines: ClassVar[bool] = True
    per_char: ClassVar[bool] = True
    aligned_if_same_length_on_ascii: ClassVar[bool] = True
    unicode_form: ClassVar[str]

    def ascii_one_for_one(self, text: str) -> str:
        return text  # no ASCII char decomposes, composes or is a combining mark

    def normalize(self, normalized: NormalizedString) -> None:
        getattr(normalized, self.unicode_form.lower())()  # NormalizedString.nfd(), .nfkc(), ...

    def normalize_str(self, sequence: str) -> str:
        return unicodedata.normalize(self.unicode_form, sequence)


@dataclass(slots=True, repr=False)
class NFD(UnicodeForm):
    """Canonical decomposition: ``'é' -> 'e' + U+0301``."""

    unicode_form: ClassVar[str] = "NFD"


@dataclass(slots=True, repr=False)
class NFKD(UnicodeForm):
    """Compatibility decomposition: ``'ﬁ' -> 'fi'``, ``'é' -> 'e' + U+0301``."""

    unicode_form: ClassVar[str] = "NFKD"


@dataclass(slots=True, repr=False)
class NFC(UnicodeForm):
    """Canonical composition: ``'e' + U+0301 -> 'é'``."""

    unicode_form: ClassVar[str] = "NFC"


@dataclass(slots=True, repr=False)
class NFKC(UnicodeForm):
    """Compatibility composition: ``'ﬁ①Ａ' -> 'fi1A'``."""

    unicode_form: ClassVar[str] = "NFKC"


# --------------------------------------------------------------------------- simple edits


def lowercase_str(text: str) -> str:
    """Lowercase char by char, like Rust's ``char::to_lowercase``.

    ``str.lower`` differs only on capital sigma at the end of a word ('ΟΔΟΣ' -> 'οδος' with
    a final 'ς'); HF always gives 'σ', so only then do we go char by char.

    >>> lowercase_str("ΟΔΟΣ İ")
    'οδοσ i̇'
    """
    if "Σ" not in text:
        return text.lower()
    return "".join(char.lower() for char in text)


@dataclass(slots=True, repr=False)
class Lowercase(Normalizer):
    """``'HeLLo İ' -> 'hello i̇'`` ('İ' becomes two chars, both aligned to it)."""

    local_to_lines: ClassVar[bool] = True
    per_char: ClassVar[bool] = True
    aligned_if_same_length_on_ascii: ClassVar[bool] = True

    def ascii_one_for_one(self, text: str) -> str:
        return text.lower()

    def normalize(self, normalized: NormalizedString) -> None:
        normalized.lowercase()

    def normalize_str(self, sequence: str) -> str:
        return lowercase_str(sequence)


def is_combining_mark(char: str) -> bool:
    """Any Unicode mark (Mn, Mc, Me): what HF's ``StripAccents`` removes."""
    return unicodedata.category(char)[0] == "M"


def _drop_chars(text: str, drop) -> str:
    # Only the distinct chars are tested, then str.translate deletes them in C.
    doomed = {ord(char): None for char in set(text) if drop(char)}
    return text.translate(doomed) if doomed else text


@dataclass(slots=True, repr=False)
class StripAccents(Normalizer):
    """Remove combining marks; use after NFD: ``NFD('é') = 'e' + U+0301 -> 'e'``."""

    local_to_lines: ClassVar[bool] = True
    per_char: ClassVar[bool] = True
    aligned_if_same_length_on_ascii: ClassVar[bool] = True

    def ascii_one_for_one(self, text: str) -> str:
        return text  # no ASCII char decomposes, composes or is a combining mark

    def normalize(self, normalized: NormalizedString) -> None:
        normalized.filter(lambda char: not is_combining_mark(char))

    def normalize_str(self, sequence: str) -> str:
        return _drop_chars(sequence, is_combining_mark)


@dataclass(slots=True, repr=False)
class Strip(Normalizer):
    """Remove whitespace on the left and/or right: ``'  hi  ' -> 'hi'``."""

    left: bool = True
    right: bool = True

    def normalize(self, normalized: NormalizedString) -> None:
        normalized._strip(self.left, self.right)

    def normalize_str(self, sequence: str) -> str:
        if self.left:
            sequence = sequence.lstrip(WHITESPACE)
        if self.right:
            sequence = sequence.rstrip(WHITESPACE)
        return sequence

    def to_dict(self) -> dict[str, Any]:
        return {"type": "Strip", "strip_left": self.left, "strip_right": self.right}


#: A ``Replace`` or ``Prepend`` may leave a text at most this many times as long as the text the
#: pipeline was given, plus :data:`tokviz.limits.MAX_TOKEN_CHARS` characters (the factor, and why 8,
#: are in :data:`tokviz.limits.MAX_NORMALIZER_GROWTH`). A step's output is counted before it is made only
#: when its :meth:`Normalizer.growth` could take the text past the bound (a ``' ' -> '▁'`` never is).
_GROWTH = limits.MAX_NORMALIZER_GROWTH


def _check_growth(normalizer: Normalizer, before: int, after: int, given: int) -> None:
    """Refuse a step that would make a text longer than the bound, before the text is made.

    >>> _check_growth(Replace("a", "b" * 2000), 100, 200_000, 100)
    Traceback (most recent call last):
        ...
    tokviz.errors.LimitExceededError: The normalizer Replace would make this text of 100 characters 2,000 times longer (200,000 characters); this server lets a Replace or Prepend make a text at most 8 times longer, plus 1,024 characters (TOKVIZ_MAX_NORMALIZER_GROWTH).
    """
    if after > before and after > _GROWTH * given + limits.MAX_TOKEN_CHARS:
        raise LimitExceededError(
            f"The normalizer {type(normalizer).__name__} would make this text of {given:,} characters "
            f"{after / max(given, 1):,.0f} times longer ({after:,} characters); this server lets a Replace or Prepend make "
            f"a text at most {_GROWTH} times longer, plus {limits.MAX_TOKEN_CHARS:,} characters (TOKVIZ_MAX_NORMALIZER_GROWTH)."
        )


#: The text a loaded tokenizer's normalizer is tried on, so a file whose Replace or Prepend blows a text
#: up is refused when it is read, with its name, rather than at its first encode: letters of several
#: scripts, digits, spaces, newlines, punctuation and markup (a bomb keyed to a rarer character is
#: still stopped by the bound, at the encode that meets it).
GROWTH_SAMPLE = (
    "The quick brown fox jumps over the lazy dog. THE QUICK BROWN FOX! 0123456789 +-*/=%$#@&|~^_\\`'\"\n"
    "\t  naïve café Straße Ελληνικά кириллица עברית العربية हिन्दी 中文 日本語 한국어 ﬁ ① 👍🏽 <b>x</b> [CLS] </s> ▁Ġ\n"
) * 4


def _may_pass(step: Normalizer, length: int, given: int) -> bool:
    """Whether ``step`` could take a text of ``length`` characters (from ``given`` at the start) past the bound."""
    factor, extra = step.growth()
    return factor * length + extra > _GROWTH * given + limits.MAX_TOKEN_CHARS


def growth_bound(normalizer: Normalizer) -> tuple[int, int]:
    """``(factor, extra)`` for a whole pipeline: its steps' :meth:`Normalizer.growth` composed in order.

    >>> growth_bound(Sequence([Prepend("▁"), Replace(" ", "▁")])), growth_bound(Sequence([Replace("a", "aaaaaaa")] * 3))
    ((1, 1), (343, 0))
    """
    factor, extra = 1, 0
    for step in normalizer.steps():
        step_factor, step_extra = step.growth()
        factor, extra = step_factor * factor, step_factor * extra + step_extra
    return factor, extra


def check_growth_on_sample(normalizer: Normalizer | None, name: str = "This tokenizer") -> None:
    """Refuse a normalizer that makes :data:`GROWTH_SAMPLE` grow past the bound, naming the file. A pipeline
    whose :func:`growth_bound` is inside the bound for every text (every real one: ALBERT's is ``(2, 1)``)
    needs no try."""
    if normalizer is None:
        return
    factor, extra = growth_bound(normalizer)
    if factor <= _GROWTH and extra <= limits.MAX_TOKEN_CHARS:
        return
    try:
        normalizer.normalize(NormalizedString(GROWTH_SAMPLE))
    except LimitExceededError as error:
        raise LimitExceededError(f"{name}: {error}") from None


@dataclass(slots=True, repr=False)
class Replace(Normalizer):
    """Replace every match of ``pattern`` (a literal, or a :class:`Regex`) by ``content``.

    >>> Replace("``", '"').normalize_str("``hi''")
    '"hi\\'\\''
    >>> Replace(Regex(r"\\s+"), " ").normalize_str("a \\t\\n b")
    'a b'
    """

    replaces: ClassVar[bool] = True
    may_grow: ClassVar[bool] = True

    pattern: Union[str, Regex]
    content: str

    def ascii_one_for_one(self, text: str) -> str | bool | None:
        # Patterns that match one or more chars, replaced by one char: the text stays aligned
        # exactly when every match is a single char.
        if not isinstance(self.pattern, Regex) or len(self.content) != 1:
            return None
        source = self.pattern.pattern
        if source in SPACE_ONLY_PATTERNS:
            if "  " in text:
                return False
            return text.replace(" ", self.content) if source == " +" else text
        if source in WHITESPACE_PATTERNS:
            if _ASCII_SPACE_PAIR.search(text) is not None:
                return False
            return text if source == r"\s{2,}" else text.translate(dict.fromkeys(map(ord, ASCII_SPACES), self.content))
        return None

    def __post_init__(self) -> None:
        if not isinstance(self.pattern, (str, Regex)):
            raise TypeError(f"Replace pattern must be a str or a Regex, not {type(self.pattern).__name__}")

    def normalize(self, normalized: NormalizedString) -> None:
        text, given = normalized.normalized, len(normalized.original)
        if _may_pass(self, len(text), given):  # (else this step provably stays inside the bound: nothing counted)
            _check_growth(self, len(text), self._grown_length(text), given)
        normalized.replace(self.pattern, self.content)

    def growth(self) -> tuple[int, int]:
        """A literal of p characters replaced by c: at most ``ceil(c / p)`` times (an empty literal matches
        nothing, as in HF); a regex match, even an empty one (at most n + 1 of them), by c: ``max(1, c) + c``."""
        content = len(self.content)
        if isinstance(self.pattern, Regex):
            return max(1, content) + content, content
        return (max(1, -(-content // len(self.pattern))) if self.pattern else 1), 0

    def _grown_length(self, text: str) -> int:
        """The text's length after this replace, counted before it is made."""
        if isinstance(self.pattern, Regex):
            return len(text) + sum(len(self.content) - (end - start) for start, end in self.pattern.find_spans(text))
        if not self.pattern:
            return len(text)
        return len(text) + text.count(self.pattern) * (len(self.content) - len(self.pattern))

    def normalize_str(self, sequence: str) -> str:
        if _may_pass(self, len(sequence), len(sequence)):
            _check_growth(self, len(sequence), self._grown_length(sequence), len(sequence))
        if isinstance(self.pattern, Regex):
            return replace_spans(sequence, self.pattern.find_spans(sequence), self.content)
        if not self.pattern:  # HF: an empty literal matches nothing
            return sequence
        return sequence.replace(self.pattern, self.content)

    def to_dict(self) -> dict[str, Any]:
        return {"type": "Replace", "pattern": pattern_to_dict(self.pattern), "content": self.content}


@dataclass(slots=True, repr=False)
class Prepend(Normalizer):
    """Put ``prepend`` before any non-empty text: ``Prepend('▁')('hi') -> '▁hi'``."""

    prepends: ClassVar[bool] = True
    may_grow: ClassVar[bool] = True

    prepend: str

    def normalize(self, normalized: NormalizedString) -> None:
        if normalized.normalized:
            _check_growth(self, len(normalized.normalized), len(normalized.normalized) + len(self.prepend), len(normalized.original))
        normalized.prepend(self.prepend)

    def normalize_str(self, sequence: str) -> str:
        if sequence:
            _check_growth(self, len(sequence), len(sequence) + len(self.prepend), len(sequence))
        return self.prepend + sequence if sequence else sequence

    def growth(self) -> tuple[int, int]:
        return 1, len(self.prepend)

    def to_dict(self) -> dict[str, Any]:
        return {"type": "Prepend", "prepend": self.prepend}


# --------------------------------------------------------------------------- BERT and NMT


def is_chinese_char(char: str) -> bool:
    """In a CJK ideograph block (not Hangul, Hiragana or Katakana), as in the BERT code."""
    code = ord(char)
    return (
        0x4E00 <= code <= 0x9FFF
        or 0x3400 <= code <= 0x4DBF
        or 0x20000 <= code <= 0x2A6DF
        or 0x2A700 <= code <= 0x2B73F
        or 0x2B740 <= code <= 0x2B81F
        or 0x2B920 <= code <= 0x2CEAF
        or 0xF900 <= code <= 0xFAFF
        or 0x2F800 <= code <= 0x2FA1F
    )


def _bert_removes(char: str) -> bool:
    # NUL, U+FFFD and "other" chars (Cc, Cf, Cn, Co, Cs) except tab, newline, carriage return.
    if char in "\t\n\r":
        return False
    return char == "\x00" or char == "\ufffd" or unicodedata.category(char)[0] == "C"


def _bert_space(char: str) -> str:
    return " " if is_whitespace(char) else char


@dataclass(slots=True, repr=False)
class BertNormalizer(Normalizer):
    """BERT's cleanup: drop control chars, whitespace -> ' ', spaces around CJK ideographs,
    strip accents (defaults to ``lowercase``), lowercase.

    >>> BertNormalizer().normalize_str("Héllo\\t中文\\x00!")
    'hello  中  文 !'
    """

    local_to_lines: ClassVar[bool] = True
    per_char: ClassVar[bool] = True
    aligned_if_same_length_on_ascii: ClassVar[bool] = True

    clean_text: bool = True
    handle_chinese_chars: bool = True
    strip_accents: bool | None = None
    lowercase: bool = True

    def ascii_one_for_one(self, text: str) -> str | None:
        if self.clean_text:
            if _ASCII_CONTROL.search(text) is not None:
                return None
            text = text.translate(_TAB_NEWLINE_TO_SPACE)
        return text.lower() if self.lowercase else text

    def _strips_accents(self) -> bool:
        return self.lowercase if self.strip_accents is None else self.strip_accents

    def normalize(self, normalized: NormalizedString) -> None:
        if self.clean_text:
            normalized.filter(lambda char: not _bert_removes(char)).map(_bert_space)
        if self.handle_chinese_chars:
            changes: list[tuple[str, int]] = []
            for char in normalized.normalized:
                if is_chinese_char(char):
                    changes.extend(((" ", 0), (char, 1), (" ", 1)))
                else:
                    changes.append((char, 0))
            normalized.transform(changes)
        if self._strips_accents():
            normalized.nfd().filter(lambda char: unicodedata.category(char) != "Mn")
        if self.lowercase:
            normalized.lowercase()

    def normalize_str(self, sequence: str) -> str:
        distinct = set(sequence)
        if self.clean_text:
            table: dict[int, str | None] = {}
            for char in distinct:
                if _bert_removes(char):
                    table[ord(char)] = None
                elif is_whitespace(char) and char != " ":
                    table[ord(char)] = " "
            if table:
                sequence = sequence.translate(table)
                distinct = set(sequence)
        if self.handle_chinese_chars:
            table = {ord(char): f" {char} " for char in distinct if is_chinese_char(char)}
            if table:
                sequence = sequence.translate(table)
        if self._strips_accents():
            sequence = unicodedata.normalize("NFD", sequence)
            sequence = _drop_chars(sequence, lambda char: unicodedata.category(char) == "Mn")
        if self.lowercase:
            sequence = lowercase_str(sequence)
        return sequence

    def to_dict(self) -> dict[str, Any]:
        return {
            "type": "BertNormalizer",
            "clean_text": self.clean_text,
            "handle_chinese_chars": self.handle_chinese_chars,
            "strip_accents": self.strip_accents,
            "lowercase": self.lowercase,
        }


_NMT_REMOVED = frozenset(chr(code) for code in [*range(0x01, 0x09), 0x0B, *range(0x0E, 0x20), 0x7F, 0x8F, 0x9F])
_NMT_SPACES = frozenset(
    chr(code) for code in [0x09, 0x0A, 0x0C, 0x0D, 0x1680, *range(0x200B, 0x2010), 0x2028, 0x2029, 0x2581, 0xFEFF, 0xFFFD]
)
_NMT_TABLE = {**{ord(char): None for char in _NMT_REMOVED}, **{ord(char): " " for char in _NMT_SPACES}}


@dataclass(slots=True, repr=False)
class Nmt(Normalizer):
    """SentencePiece's NMT cleanup: drop ASCII controls, map odd spaces (tab, ZWSP, BOM, '▁') to ' '."""

    local_to_lines: ClassVar[bool] = True
    per_char: ClassVar[bool] = True

    def normalize(self, normalized: NormalizedString) -> None:
        normalized.filter(lambda char: char not in _NMT_REMOVED).map(lambda char: " " if char in _NMT_SPACES else char)

    def normalize_str(self, sequence: str) -> str:
        return sequence.translate(_NMT_TABLE)


@dataclass(slots=True, repr=False)
class ByteLevel(Normalizer):
    """Every UTF-8 byte becomes its GPT-2 symbol: ``'a b' -> 'aĠb'``, ``'é' -> 'Ã©'``."""

    local_to_lines: ClassVar[bool] = True

    def normalize(self, normalized: NormalizedString) -> None:
        normalized.expand_chars(text_to_symbols)  # (a char's extra bytes are inserted after its first)

    def normalize_str(self, sequence: str) -> str:
        return text_to_symbols(sequence)


# --------------------------------------------------------------------------- SentencePiece


class _CharsMap(PrecompiledCharsmap):
    """HF's reading of a charsmap: the first (shortest) matching prefix, per grapheme cluster."""

    __slots__ = ("outputs", "longest", "ascii")

    def __init__(self, data: bytes) -> None:
        super().__init__(data, "The Precompiled normalizer's charsmap")
        #: The longest replacement, in UTF-8 bytes (SentencePiece's NFKC maps: 33, 18 characters).
        self.longest = max(map(len, self.replacements.split(b"\0")), default=0)
        #: Grapheme cluster -> what it becomes (see :func:`_precompiled_str`).
        self.outputs: dict[str, str] = {}
        self.ascii: tuple[frozenset[str], dict[int, str]] | None = None

    def ascii_one_for_one(self, stage: "Precompiled") -> tuple[frozenset[str], dict[int, str]]:
        """The ASCII chars the map makes one char, and a ``str.translate`` table of those it changes (made once)."""
        if self.ascii is None:
            mapped = {chr(code): stage.normalize_str(chr(code)) for code in range(128)}
            self.ascii = (
                frozenset(char for char, new in mapped.items() if len(new) == 1),
                str.maketrans({char: new for char, new in mapped.items() if len(new) == 1 and new != char}),
            )
        return self.ascii

    def first_prefix_value(self, key: bytes) -> int | None:
        """The value of the SHORTEST key in the trie that prefixes ``key`` (what HF uses)."""
        units = self.units
        try:
            unit = units[0]
            node = (unit >> 10) << ((unit & (1 << 9)) >> 6)
            for byte in key:
                if byte == 0:
                    return None
                node ^= byte
                unit = units[node]
                if unit & ((1 << 31) | 0xFF) != byte:
                    return None
                node ^= (unit >> 10) << ((unit & (1 << 9)) >> 6)
                if (unit >> 8) & 1:
                    return units[node] & ((1 << 31) - 1)
        except IndexError:
            return None
        return None

    def transform(self, chunk: str) -> str | None:
        """The replacement SentencePiece stores for ``chunk``, or None.

        Like HF, the first (shortest) matching prefix replaces the WHOLE chunk.
        """
        value = self.first_prefix_value(chunk.encode("utf-8"))
        return None if value is None else self.replacement(value).decode("utf-8", errors="replace")


@lru_cache(maxsize=8)
def _charsmap(data: bytes) -> _CharsMap:
    return _CharsMap(data)


GRAPHEME = regex.compile(r"\X")


def _replace_changes(changes: list[tuple[str, int]], old: str, new: str) -> None:
    """Append ``new`` (replacing ``old``) to ``changes`` the way HF's Precompiled does.

    Every new char replaces (0); if ``new`` is longer, its last extra chars are inserted
    (1); if shorter, the difference is removed after the LAST pair so far -- which is a
    previous char when ``new`` is empty, and nothing at all at the very start.

    >>> changes = []; _replace_changes(changes, "ﬁ", "fi"); _replace_changes(changes, "\\x01", ""); changes
    [('f', 0), ('i', 0)]
    """
    difference = len(new) - len(old)
    changes.extend((char, 0) for char in new)
    if difference > 0:
        for index in range(len(changes) - difference, len(changes)):
            changes[index] = (changes[index][0], 1)
    elif difference < 0 and changes:
        char, change = changes[-1]
        changes[-1] = (char, change + difference)


def _precompiled_changes(charsmap: _CharsMap, text: str) -> list[tuple[str, int]] | None:
    """``(char, change)`` pairs for HF's Precompiled normalizer, or None if nothing changes.

    Per grapheme cluster: a cluster under 6 UTF-8 bytes is looked up whole; otherwise (or
    when it has no entry) char by char, as SentencePiece and HF do.
    """
    changes: list[tuple[str, int]] = []
    modified = False
    for grapheme in GRAPHEME.findall(text):
        whole = charsmap.transform(grapheme) if len(grapheme.encode("utf-8")) < 6 else None
        for old, new in [(grapheme, whole)] if whole is not None else [(char, charsmap.transform(char)) for char in grapheme]:
            if new is None:
                changes.append((old, 0))
            else:
                modified = True
                _replace_changes(changes, old, new)
    return changes if modified else None


def _grapheme_output(charsmap: _CharsMap, grapheme: str) -> str:
    """What one grapheme cluster becomes: the chars :func:`_precompiled_changes` gives for it."""
    if len(grapheme.encode("utf-8")) < 6:
        replacement = charsmap.transform(grapheme)
        if replacement is not None:
            return replacement
    pieces = [charsmap.transform(char) for char in grapheme]
    return "".join([char if piece is None else piece for char, piece in zip(grapheme, pieces)])


def _precompiled_str(charsmap: _CharsMap, text: str) -> str:
    """``Precompiled.normalize_str``: each grapheme cluster's output, cached per cluster.

    >>> _precompiled_str(_CharsMap((4).to_bytes(4, "little") + bytes(4)), "a\\r\\nb")
    'a\\r\\nb'
    """
    outputs = charsmap.outputs
    graphemes = GRAPHEME.findall(text)
    try:
        return "".join(map(outputs.__getitem__, graphemes))
    except KeyError:
        pass
    for grapheme in graphemes:
        if grapheme not in outputs:
            output = _grapheme_output(charsmap, grapheme)
            if len(outputs) >= 100_000:
                return "".join([outputs.get(g) or _grapheme_output(charsmap, g) for g in graphemes])
            outputs[grapheme] = output
    return "".join(map(outputs.__getitem__, graphemes))


@dataclass(slots=True, repr=False)
class Precompiled(Normalizer):
    """SentencePiece's compiled normalization rules (e.g. ``nmt_nfkc``), as stored in a
    ``.model`` file or a T5 / ALBERT / XLM-R tokenizer.json (base64 there).

    >>> Precompiled(b"").normalize_str("x")
    Traceback (most recent call last):
    ...
    tokviz.errors.SerializationError: The Precompiled normalizer's charsmap is empty or truncated.
    """

    local_to_lines: ClassVar[bool] = True
    per_char: ClassVar[bool] = True
    on_graphemes: ClassVar[bool] = True
    may_grow: ClassVar[bool] = True

    precompiled_charsmap: bytes

    def ascii_one_for_one(self, text: str) -> str | bool | None:
        # Graphemes of ASCII text are single chars except "\r\n"; each is mapped on its own.
        if "\r\n" in text:
            return None
        kept, table = _charsmap(self.precompiled_charsmap).ascii_one_for_one(self)
        if not kept.issuperset(text):
            return False  # a char dropped or expanded
        return text.translate(table) if table else text

    def __post_init__(self) -> None:
        if not isinstance(self.precompiled_charsmap, (bytes, bytearray)):
            raise TypeError("Precompiled takes the charsmap as bytes")
        object.__setattr__(self, "precompiled_charsmap", bytes(self.precompiled_charsmap))

    def normalize(self, normalized: NormalizedString) -> None:
        charsmap = _charsmap(self.precompiled_charsmap)
        if charsmap.longest > _PRECOMPILED_REAL_LONGEST:
            text = normalized.normalized
            _check_growth(self, len(text), _precompiled_length(charsmap, text), len(normalized.original))
        changes = _precompiled_changes(charsmap, normalized.normalized)
        if changes is not None:
            normalized.transform(changes)

    def normalize_str(self, sequence: str) -> str:
        charsmap = _charsmap(self.precompiled_charsmap)
        if charsmap.longest > _PRECOMPILED_REAL_LONGEST:
            _check_growth(self, len(sequence), _precompiled_length(charsmap, sequence), len(sequence))
        return _precompiled_str(charsmap, sequence)

    def growth(self) -> tuple[int, int]:
        """SentencePiece's own maps are not counted (as Unicode's normalizations); a hand-made map's longest
        replacement is its factor."""
        longest = _charsmap(self.precompiled_charsmap).longest
        return (1, 0) if longest <= _PRECOMPILED_REAL_LONGEST else (longest, 0)

    def to_dict(self) -> dict[str, Any]:
        return {"type": "Precompiled", "precompiled_charsmap": base64.b64encode(self.precompiled_charsmap).decode("ascii")}


#: SentencePiece's own maps replace a character by at most 33 bytes (18 characters: NFKC of U+FDFA);
#: a map with longer replacements (a hand-made one) has its output counted against the growth bound
#: before it is made, as a Replace's is.
_PRECOMPILED_REAL_LONGEST = 64


def _precompiled_length(charsmap: _CharsMap, text: str) -> int:
    """The length of ``Precompiled`` output for ``text``, counted grapheme by grapheme (nothing joined)."""
    outputs = charsmap.outputs
    return sum(len(outputs.get(grapheme) or _grapheme_output(charsmap, grapheme)) for grapheme in GRAPHEME.findall(text))


# --------------------------------------------------------------------------- composition


@dataclass(slots=True, repr=False)
class Sequence(SequenceItems, Normalizer):
    """Run normalizers in order: ``Sequence([NFD(), StripAccents()])``; ``seq[1] = Strip()`` as HF."""

    _ITEMS = "normalizers"
    may_grow: ClassVar[bool] = True

    normalizers: tuple[Normalizer, ...] = ()

    def __post_init__(self) -> None:
        object.__setattr__(self, "normalizers", tuple(self.normalizers))
        for normalizer in self.normalizers:
            if not isinstance(normalizer, Normalizer):
                raise TypeError(f"Sequence takes normalizers, not {type(normalizer).__name__}")

    def normalize(self, normalized: NormalizedString) -> None:
        for normalizer in self.normalizers:
            normalizer.normalize(normalized)

    def normalize_str(self, sequence: str) -> str:
        given = len(sequence)  # (a NormalizedString keeps its original; a plain string is bounded here)
        for normalizer in self.normalizers:
            before = len(sequence)
            sequence = normalizer.normalize_str(sequence)
            if normalizer.may_grow:
                _check_growth(normalizer, before, len(sequence), given)
        return sequence

    def steps(self) -> tuple[Normalizer, ...]:
        return tuple(step for normalizer in self.normalizers for step in normalizer.steps())

    def to_dict(self) -> dict[str, Any]:
        return {"type": "Sequence", "normalizers": [normalizer.to_dict() for normalizer in self.normalizers]}


class CustomNormalizer(CustomComponent, Normalizer):
    """A Python object with ``normalize(normalized)`` used as a normalizer (HF's ``custom``)."""

    __slots__ = ("inner",)
    aligned_if_unchanged: ClassVar[bool] = False
    _WHAT = "normalizer"
    _NEEDS = "normalize(normalized)"
    _UNSERIALIZABLE = "Custom Normalizer cannot be serialized"

    def normalize(self, normalized: NormalizedString) -> None:
        try:
            self.inner.normalize(normalized)
        except Exception as error:  # HF reports the Python error inside its own: "TypeError: ..."
            raise Exception(f"{type(error).__name__}: {error}") from error

    def normalize_str(self, sequence: str) -> str:
        return Normalizer.normalize_str(self, sequence)


class UnknownNormalizerError(TokvizError):
    """A Unicode normalization form name that does not exist."""


def unicode_normalizer_from_str(normalizer: str) -> Normalizer:
    """``'nfkc' -> NFKC()``, like HF's helper of the same name (lowercase names only).

    >>> unicode_normalizer_from_str("nfd")
    NFD()
    """
    forms = {"nfc": NFC, "nfd": NFD, "nfkc": NFKC, "nfkd": NFKD}
    if normalizer not in forms:
        raise UnknownNormalizerError(f"{normalizer!r} is not a Unicode normalization form; use one of {', '.join(forms)}.")
    return forms[normalizer]()


# --------------------------------------------------------------------------- tokenizer.json


def pattern_to_dict(pattern: Union[str, Regex]) -> dict[str, str]:
    """HF's serialized pattern: ``' ' -> {'String': ' '}``, ``Regex('\\\\s') -> {'Regex': '\\\\s'}``."""
    if isinstance(pattern, Regex):
        return {"Regex": pattern.pattern}
    return {"String": pattern}


def pattern_from_dict(data: Any) -> Union[str, Regex]:
    """Inverse of :func:`pattern_to_dict`."""
    if isinstance(data, dict) and len(data) == 1:
        (kind, value), = data.items()
        if kind == "String" and isinstance(value, str):
            return value
        if kind == "Regex" and isinstance(value, str):
            return Regex(value)
    raise SerializationError(f"A pattern must look like {{'String': ...}} or {{'Regex': ...}}, got {data!r}.")


_field = partial(fragment_field, what="normalizer")


#: The normalizers whose fragment names their fields as their dataclass does.
_BY_FIELDS = {kind.__name__: kind for kind in (NFD, NFKD, NFC, NFKC, Lowercase, StripAccents, Nmt, ByteLevel, Prepend, BertNormalizer)}


def from_dict(data: dict[str, Any] | None) -> Normalizer | None:
    """Build a normalizer from its tokenizer.json fragment (``None`` stays ``None``).

    >>> from_dict({"type": "Sequence", "normalizers": [{"type": "NFD"}, {"type": "Lowercase"}]})
    Sequence(normalizers=[NFD(), Lowercase()])
    """
    if data is None:
        return None
    if not isinstance(data, dict) or "type" not in data:
        raise SerializationError(f"A normalizer must be an object with a 'type', got {data!r}.")
    kind = data["type"]
    if kind in _BY_FIELDS:
        return from_fields(_BY_FIELDS[kind], data, "normalizer")
    if kind == "Strip":
        return Strip(left=bool(_field(data, "strip_left", True)), right=bool(_field(data, "strip_right", True)))
    if kind == "Replace":
        return Replace(pattern_from_dict(_field(data, "pattern")), _field(data, "content"))
    if kind == "Sequence":
        return Sequence([from_dict(item) for item in _field(data, "normalizers")])
    if kind == "Precompiled":
        encoded = _field(data, "precompiled_charsmap")
        try:
            charsmap = base64.b64decode(encoded or "", validate=True)
        except (binascii.Error, TypeError, ValueError) as error:
            raise SerializationError("The Precompiled normalizer's charsmap is not valid base64.") from error
        _charsmap(charsmap)  # fail here, on load, if it is not a charsmap
        return Precompiled(charsmap)
    raise SerializationError(f"tokviz cannot build a normalizer of type {kind!r}.")


# HF's compiled submodule is reachable as ``tokenizers.normalizers.normalizers``; here it is this module.
normalizers = sys.modules[__name__]
