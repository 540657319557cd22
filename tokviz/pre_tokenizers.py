"""Pre-tokenizers: cut normalized text into words, the units a model tokenizes separately.

Each pre-tokenizer mirrors ``tokenizers.pre_tokenizers``: same name, same options, same
words, same offsets (characters of the ORIGINAL text), same tokenizer.json fragment.

>>> Whitespace().pre_tokenize_str("Let's test my pre-tokenizer.")
[('Let', (0, 3)), ("'", (3, 4)), ('s', (4, 5)), ('test', (6, 10)), ('my', (11, 13)), ('pre', (14, 17)), ('-', (17, 18)), ('tokenizer', (18, 27)), ('.', (27, 28))]
>>> ByteLevel(add_prefix_space=False).pre_tokenize_str("Hello, how are  you?")
[('Hello', (0, 5)), (',', (5, 6)), ('Ġhow', (6, 10)), ('Ġare', (10, 14)), ('Ġ', (14, 15)), ('Ġyou', (15, 19)), ('?', (19, 20))]

Every pre-tokenizer has three entry points:

- ``pre_tokenize(pts)`` splits a :class:`~tokviz.normalized.PreTokenizedString` in place,
  every piece keeping its alignment to the original text;
- ``pre_tokenize_str(s)`` returns ``[(word, (start, end)), ...]`` like HF;
- ``pre_tokenize_words(s)`` returns just the words, through a fast path that builds no
  alignments (one C-level ``regex.findall`` where possible). Training counts words in
  megabytes of text with it; it always equals ``[w for w, _ in pre_tokenize_str(s)]``.

Left out: a ``Sequence`` fast path for position-dependent members
(``Metaspace(prepend_scheme="first")`` after another pre-tokenizer falls back to the
slow path). Script and category tables come from the ``regex`` module / ``unicodedata``,
so characters added to Unicode recently can be classified differently than in HF.
"""

from __future__ import annotations

import re
import sys
import unicodedata
from dataclasses import dataclass

from tokviz._component import CustomComponent, DataclassComponent, SequenceItems, fragment_field, from_fields
from functools import lru_cache, partial
from itertools import chain
from typing import Any, Callable, ClassVar, Union

import regex

from tokviz import byte_level
from tokviz.errors import SerializationError, TokvizError
from tokviz.normalized import (
    SPLIT_BEHAVIORS,
    WHITESPACE,
    NormalizedString,
    PreTokenizedString,
    apply_behavior,
    find_matches,
    invert_matches,
    is_whitespace,
    normalize_behavior,
)
from tokviz.normalizers import pattern_from_dict, pattern_to_dict
from tokviz.patterns import Regex, ascii_twin, find_all, is_linear, match_spans, spans_to_matches, text_twin

__all__ = [
    "PreTokenizer",
    "Whitespace",
    "WhitespaceSplit",
    "BertPreTokenizer",
    "ByteLevel",
    "Metaspace",
    "Punctuation",
    "Digits",
    "Split",
    "CharDelimiterSplit",
    "UnicodeScripts",
    "FixedLength",
    "Sequence",
    "from_dict",
    "SPLIT_BEHAVIORS",
]


class PreTokenizerOptionError(TokvizError):
    """A pre-tokenizer option that cannot work (e.g. a two-character Metaspace replacement)."""


class PreTokenizer(DataclassComponent):
    """Base of every pre-tokenizer; mutable as HF's (``seq[1].individual_digits = True``), with
    HF's repr, JSON state and pickling (see :mod:`tokviz._component`)."""

    __slots__ = ()

    @classmethod
    def _from_state_dict(cls, data: dict[str, Any]) -> "PreTokenizer | None":
        return from_dict(data)

    @staticmethod
    def custom(pre_tokenizer: Any) -> "CustomPreTokenizer":
        """HF's ``PreTokenizer.custom``: wrap a Python object with ``pre_tokenize(pretokenized)``
        (for example one calling ``pretokenized.split(...)``). A library feature: a tokenizer
        holding one cannot be saved.

        >>> class Dashes:
        ...     def pre_tokenize(self, pretokenized):
        ...         pretokenized.split(lambda i, ns: ns.split("-", "removed"))
        >>> PreTokenizer.custom(Dashes()).pre_tokenize_str("ab-cd")
        [('ab', (0, 2)), ('cd', (3, 5))]
        """
        return CustomPreTokenizer(pre_tokenizer)
    #: False when a piece's words depend on where the piece sits in the text.
    position_independent: ClassVar[bool] = True
    def __init_subclass__(cls, **kwargs: Any) -> None:
        # A class that pre-tokenizes its own way does not inherit the plain-string shortcuts
        # its base declares (the engine's ``plain_split``/``cut_spans``, ``pre_tokenize_words``):
        # they describe the base's pre_tokenize, not this one. It gets the general ones back.
        super().__init_subclass__(**kwargs)
        if any(name in cls.__dict__ for name in ("pre_tokenize", "_split_piece")):
            for name in ("plain_split", "cut_spans", "pre_tokenize_words"):
                if name not in cls.__dict__:
                    setattr(cls, name, getattr(PreTokenizer, name))

    def plain_split(self) -> "PlainSplit | None":
        """What the encoding engine asks to pre-tokenize plain strings as this pre-tokenizer
        does (:class:`PlainSplit`), or None: it cannot say (the engine asks :meth:`cut_spans`)."""
        return None

    def steps(self) -> tuple["PreTokenizer", ...]:
        """The pre-tokenizers this one runs, in order (a :class:`Sequence` flattened):
        ``Sequence([Sequence([Whitespace()])]).steps() -> (Whitespace(),)``."""
        return (self,)

    def pre_tokenize(self, pretokenized: PreTokenizedString) -> None:
        """Split every piece as :meth:`_split_piece` does (a subclass defines one or the other)."""
        pretokenized.split(lambda _, piece: self._split_piece(piece))

    def _split_piece(self, piece: NormalizedString) -> list[NormalizedString]:
        raise NotImplementedError

    def pre_tokenize_str(self, sequence: str) -> list[tuple[str, tuple[int, int]]]:
        pretokenized = PreTokenizedString(sequence)
        self.pre_tokenize(pretokenized)
        return [(word, offsets) for word, offsets, _ in pretokenized.get_splits("original")]

    def pre_tokenize_words(self, sequence: str) -> list[str]:
        """The words of ``sequence``, without offsets: cut where :meth:`cut_spans` says, else
        through :meth:`pre_tokenize_str` (subclasses override with a fast path)."""
        spans = self.cut_spans(sequence)
        if spans is not None:
            return [sequence[start:end] for start, end in spans]
        return [word for word, _ in self.pre_tokenize_str(sequence)]

    def _is_position_independent(self) -> bool:
        return self.position_independent

    def cut_spans(self, text: str) -> list[tuple[int, int]] | None:
        """What the encoding engine asks: the ``(start, end)`` of this pre-tokenizer's non-empty
        words of ``text`` when it only cuts (wherever the piece sits); None when it changes the
        text (ByteLevel, Metaspace) or cannot say. Answering gets a pre-tokenizer the fast path.

        >>> Split(" ", "removed").cut_spans("a  bc")
        [(0, 1), (3, 5)]
        """
        return None

    def to_dict(self) -> dict[str, Any]:
        return {"type": type(self).__name__}


def _cut(text: str, pattern, behavior: str, invert: bool = False) -> list[tuple[int, int]]:
    """Where ``NormalizedString.split`` cuts: ``('a-b', '-', 'removed') -> [(0, 1), (2, 3)]``."""
    matches = find_matches(pattern, text)
    if invert:
        matches = invert_matches(matches)
    return [(start, end) for start, end in apply_behavior(matches, behavior) if end > start]


def behavior_to_json(behavior: str) -> str:
    """``'merged_with_next' -> 'MergedWithNext'`` (HF's tokenizer.json spelling)."""
    return "".join(part.capitalize() for part in normalize_behavior(behavior).split("_"))


@dataclass(frozen=True, slots=True)
class PlainSplit:
    """What a pre-tokenizer hands the encoding engine (:mod:`tokviz.engine`) so that it splits
    plain strings as its ``pre_tokenize`` would: ``words`` (``text -> matches``, or None for a
    text it cannot answer), ``space_mark`` (Metaspace's), ``to_bytes`` (ByteLevel), ``pattern``
    (Split's), ``digits`` (Digits); ``runs``: its words are the runs of non-whitespace;
    ``within_runs``: each such run splits alone as in its text (word counting uses it);
    ``word_list``: ``text -> its words as strings that tile it`` (None for a text it cannot
    answer), which the engine composes around a ByteLevel step (see ``engine.words``), or
    ``kept_words``: ``text -> (its words, their starts)`` where it drops the text between them.

    >>> [match.group() for match in Whitespace().plain_split().words("Hi, you")]
    ['Hi', ',', 'you']
    """

    words: Callable[[str], Any] | None = None
    space_mark: str | None = None
    to_bytes: bool = False
    pattern: Any = None
    digits: bool = False
    runs: bool = False
    within_runs: bool = False
    word_list: Callable[[str], list[str] | None] | None = None
    kept_words: Callable[[str], tuple[list[str], list[int]] | None] | None = None


# --------------------------------------------------------------------------- whitespace


WORD_OR_SYMBOLS = regex.compile(r"\w+|[^\w\s]+")
NON_SPACE_RUN = regex.compile(r"[^\t\n\x0b\x0c\r \x85\xa0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000]+")
_WORD_OR_SYMBOLS_ASCII = ascii_twin(WORD_OR_SYMBOLS)


def _whitespace_words(text: str) -> Any:
    """Whitespace's words of a plain text, as matches (:mod:`re` on ASCII text, faster)."""
    return (_WORD_OR_SYMBOLS_ASCII if text.isascii() else WORD_OR_SYMBOLS).finditer(text)


_WHITESPACE_SPLIT = PlainSplit(_whitespace_words)
#: (a class of listed chars: the same in :mod:`re`, which is faster)
_WHITESPACE_SPLIT_SPLIT = PlainSplit(re.compile(NON_SPACE_RUN.pattern).finditer, runs=True)
_BYTE_LEVEL_SPLIT = PlainSplit(to_bytes=True)


class _RegexWords(PreTokenizer):
    """A pre-tokenizer whose words are the matches of its ``_WORDS`` (a built-in pattern)."""

    __slots__ = ()
    _WORDS: ClassVar[Any]

    def pre_tokenize(self, pretokenized: PreTokenizedString) -> None:
        pretokenized.split(lambda _, piece: piece.split(self._WORDS, "removed", invert=True))

    def pre_tokenize_words(self, sequence: str) -> list[str]:
        return self._WORDS.findall(sequence)

    def cut_spans(self, text: str) -> list[tuple[int, int]]:
        return [match.span() for match in self._WORDS.finditer(text)]


@dataclass(slots=True, repr=False)
class Whitespace(_RegexWords):
    """Words are runs of word chars or runs of other non-space chars: ``\\w+|[^\\w\\s]+``."""

    _WORDS = WORD_OR_SYMBOLS

    def plain_split(self) -> "PlainSplit":
        return _WHITESPACE_SPLIT


@dataclass(slots=True, repr=False)
class WhitespaceSplit(_RegexWords):
    """Split on Unicode whitespace only: ``"Let's go!" -> ["Let's", 'go!']``."""

    _WORDS = NON_SPACE_RUN

    def plain_split(self) -> "PlainSplit":
        return _WHITESPACE_SPLIT_SPLIT


_ASCII_PUNCTUATION = frozenset("!\"#$%&'()*+,-./:;<=>?@[\\]^_`{|}~")


def is_bert_punctuation(char: str) -> bool:
    """ASCII punctuation (including ``$+<=>^`|~``) or any Unicode P* char, as BERT defines it."""
    return char in _ASCII_PUNCTUATION or unicodedata.category(char)[0] == "P"


@lru_cache(maxsize=1 << 16)
def _isolate_punctuation(word: str) -> tuple[str, ...]:
    """``'you?' -> ('you', '?')``; cached across calls, since training asks per line."""
    return tuple(word[start:end] for start, end in _cut(word, is_bert_punctuation, "isolated"))


_ASCII_CONTROL = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]")
_BERT_ASCII_WORDS = re.compile(r"[!-/:-@\[-`{-~]|[^ \t\n\r!-/:-@\[-`{-~]+")
#: BertPreTokenizer on any text: a punctuation char (ASCII's, or Unicode P*), or a run of chars
#: that are neither that nor whitespace (Unicode White_Space, as ``normalized.WHITESPACE``).
_BERT_PUNCTUATION_CLASS = r"\p{P}!-/:-@\[-`{-~"
_BERT_WORDS = regex.compile(f"[{_BERT_PUNCTUATION_CLASS}]|[^{''.join(map(regex.escape, WHITESPACE))}{_BERT_PUNCTUATION_CLASS}]+")
_BERT_PUNCTUATION = regex.compile(f"[{_BERT_PUNCTUATION_CLASS}]")
_ASCII_CHARS = frozenset(map(chr, range(128)))
#: Non-ASCII char -> whether the regex's \p{P} and Python's unicodedata (BertPreTokenizer's
#: test) agree on it being punctuation (their Unicode versions may differ).
_BERT_AGREES: dict[str, bool] = {}


def bert_words(text: str) -> Any:
    """BertPreTokenizer's words of a plain text as matches (a word or one punctuation char
    each), or None: ASCII controls, or a char on which the regex's Unicode tables and
    :func:`is_bert_punctuation` disagree.

    >>> [m.group() for m in bert_words("l’été, “déjà”")]
    ['l', '’', 'été', ',', '“', 'déjà', '”']
    """
    if _ASCII_CONTROL.search(text) is not None:
        return None
    if text.isascii():
        return _BERT_ASCII_WORDS.finditer(text)
    for char in set(text).difference(_ASCII_CHARS):
        agrees = _BERT_AGREES.get(char)
        if agrees is None:
            agrees = (_BERT_PUNCTUATION.match(char) is not None) == is_bert_punctuation(char)
            if len(_BERT_AGREES) < 100_000:
                _BERT_AGREES[char] = agrees
        if not agrees:
            return None
    return _BERT_WORDS.finditer(text)


_BERT_SPLIT = PlainSplit(bert_words, within_runs=True)


@dataclass(slots=True, repr=False)
class BertPreTokenizer(PreTokenizer):
    """Split on whitespace, then isolate every punctuation char.

    >>> BertPreTokenizer().pre_tokenize_str("Hello, how are  you?")
    [('Hello', (0, 5)), (',', (5, 6)), ('how', (7, 10)), ('are', (11, 14)), ('you', (16, 19)), ('?', (19, 20))]
    """

    def plain_split(self) -> "PlainSplit":
        return _BERT_SPLIT

    def pre_tokenize(self, pretokenized: PreTokenizedString) -> None:
        pretokenized.split(lambda _, piece: piece.split(is_whitespace, "removed"))
        pretokenized.split(lambda _, piece: piece.split(is_bert_punctuation, "isolated"))

    def pre_tokenize_words(self, sequence: str) -> list[str]:
        return list(chain.from_iterable(map(_isolate_punctuation, NON_SPACE_RUN.findall(sequence))))

    def cut_spans(self, text: str) -> list[tuple[int, int]]:
        spans = []
        for match in NON_SPACE_RUN.finditer(text):
            position = match.start()
            for piece in _isolate_punctuation(match.group()):  # (the pieces cover the word)
                spans.append((position, position + len(piece)))
                position += len(piece)
        return spans


# --------------------------------------------------------------------------- byte level

#: GPT-2's pre-tokenization pattern: contractions, letters, digits, other symbols, spaces.
GPT2_PATTERN = r"""'s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+"""
GPT2_REGEX = regex.compile(GPT2_PATTERN)
GPT2_ASCII_REGEX = ascii_twin(GPT2_REGEX)


def gpt2_findall(text: str) -> list[str]:
    """GPT-2's pre-tokens of ``text``: the matches of :data:`GPT2_PATTERN` (of its ASCII
    twin on ASCII text).

    >>> gpt2_findall("I've 2 cats  ok"), gpt2_findall("naïve  x")
    (['I', "'ve", ' 2', ' cats', ' ', ' ok'], ['na\u00efve', ' ', ' x'])
    """
    return (GPT2_ASCII_REGEX if text.isascii() else GPT2_REGEX).findall(text)


_BYTE_LEVEL_REGEX_SPLIT = PlainSplit(to_bytes=True, word_list=gpt2_findall)


def _byte_level_normalize(piece: NormalizedString) -> None:
    symbols = _word_symbols(piece.normalized)
    if len(symbols) == len(piece.normalized):  # one byte per char: every change is 0
        piece.transform_same_length(symbols)
    else:
        piece.expand_chars(_char_symbols)  # (one symbol per UTF-8 byte: a char's extra bytes are inserted after its first)


@lru_cache(maxsize=65536)
def _char_symbols(char: str) -> str:
    return byte_level.text_to_symbols(char)


@lru_cache(maxsize=1 << 17)
def _word_symbols(word: str) -> str:
    """``' café' -> 'ĠcafÃ©'``: one byte-level symbol per UTF-8 byte."""
    return byte_level.text_to_symbols(word)


@dataclass(slots=True, repr=False, init=False)
class ByteLevel(PreTokenizer):
    """GPT-2's pre-tokenizer: optional leading space, the GPT-2 regex, then every UTF-8
    byte mapped to a printable symbol (space -> 'Ġ'), so no text is ever unknown.

    ``trim_offsets`` only matters to the post-processor; it is kept for tokenizer.json.
    """

    def plain_split(self) -> "PlainSplit":
        return _BYTE_LEVEL_REGEX_SPLIT if self.use_regex else _BYTE_LEVEL_SPLIT

    add_prefix_space: bool = True
    trim_offsets: bool = True
    use_regex: bool = True

    def __init__(self, add_prefix_space: bool = True, trim_offsets: bool = True, use_regex: bool = True, **kwargs: Any) -> None:
        # HF ignores other keywords, so ByteLevel(**json.loads(pre_tokenizer.__getstate__())) works.
        self.add_prefix_space = add_prefix_space
        self.trim_offsets = trim_offsets
        self.use_regex = use_regex

    @staticmethod
    def alphabet() -> list[str]:
        """The 256 byte-level symbols (HF returns them in no particular order; we use byte order)."""
        return byte_level.alphabet()

    def _split_piece(self, piece: NormalizedString) -> list[NormalizedString]:
        if self.add_prefix_space and not piece.normalized.startswith(" "):
            piece.prepend(" ")
        if self.use_regex:
            return piece.split(GPT2_REGEX, "isolated")
        return [piece]

    def pre_tokenize(self, pretokenized: PreTokenizedString) -> None:
        PreTokenizer.pre_tokenize(self, pretokenized)
        pretokenized.normalize(_byte_level_normalize)

    def pre_tokenize_words(self, sequence: str) -> list[str]:
        if not sequence:
            return []
        if self.add_prefix_space and not sequence.startswith(" "):
            sequence = " " + sequence
        words = gpt2_findall(sequence) if self.use_regex else [sequence]
        # Words repeat (Zipf), so each distinct word goes through the byte table once.
        return list(map(_word_symbols, words))

    def to_dict(self) -> dict[str, Any]:
        return {
            "type": "ByteLevel",
            "add_prefix_space": self.add_prefix_space,
            "trim_offsets": self.trim_offsets,
            "use_regex": self.use_regex,
        }


# --------------------------------------------------------------------------- metaspace

PREPEND_SCHEMES = ("always", "first", "never")


@dataclass(slots=True, repr=False)
class Metaspace(PreTokenizer):
    """SentencePiece style: spaces become ``replacement`` ('▁'), a '▁' is prepended
    (``prepend_scheme``: "always", "first" -- only at the very start of the text -- or
    "never"), and with ``split`` each '▁' starts a new word.

    >>> Metaspace().pre_tokenize_str("Hello, how are  you?")
    [('▁Hello,', (0, 6)), ('▁how', (6, 10)), ('▁are', (10, 14)), ('▁', (14, 15)), ('▁you?', (15, 20))]
    """

    def plain_split(self) -> "PlainSplit":
        return PlainSplit(space_mark=self.replacement)

    replacement: str = "▁"
    prepend_scheme: str = "always"
    split: bool = True

    def __post_init__(self) -> None:
        if not isinstance(self.replacement, str) or len(self.replacement) != 1:
            raise PreTokenizerOptionError(f"Metaspace replacement: expected a string of length 1 (exactly one character), got {self.replacement!r}.")
        if self.prepend_scheme not in PREPEND_SCHEMES:
            raise PreTokenizerOptionError(
                f"Metaspace prepend_scheme must be one of {', '.join(PREPEND_SCHEMES)}, got {self.prepend_scheme!r}."
            )

    def _is_position_independent(self) -> bool:
        return self.prepend_scheme != "first"

    def _split_piece(self, piece: NormalizedString) -> list[NormalizedString]:
        piece.replace(" ", self.replacement)
        if self.prepend_scheme != "never" and not piece.normalized.startswith(self.replacement):
            if self.prepend_scheme == "always" or piece.offsets_original()[0] == 0:
                piece.prepend(self.replacement)
        if self.split:
            return piece.split(self.replacement, "merged_with_next")
        return [piece]


    def pre_tokenize_words(self, sequence: str) -> list[str]:
        if not sequence:
            return []
        text = sequence.replace(" ", self.replacement)
        if self.prepend_scheme != "never" and not text.startswith(self.replacement):
            text = self.replacement + text
        if not self.split:
            return [text]
        return _metaspace_word_regex(self.replacement).findall(text)

    def to_dict(self) -> dict[str, Any]:
        return {"type": "Metaspace", "replacement": self.replacement, "prepend_scheme": self.prepend_scheme, "split": self.split}


@lru_cache(maxsize=16)
def _metaspace_word_regex(replacement: str) -> regex.Pattern:
    # merged_with_next on one char: each replacement starts a word; a run of text
    # before the first replacement is a word of its own.
    escaped = regex.escape(replacement)
    return regex.compile(f"[^{escaped}]+|{escaped}[^{escaped}]*")


# --------------------------------------------------------------------------- character classes


@dataclass(slots=True, repr=False)
class Punctuation(PreTokenizer):
    """Split on punctuation chars with ``behavior`` (default "isolated"): ``'hi!' -> ['hi', '!']``."""

    behavior: str = "isolated"

    def __post_init__(self) -> None:
        object.__setattr__(self, "behavior", normalize_behavior(self.behavior))

    def pre_tokenize(self, pretokenized: PreTokenizedString) -> None:
        pretokenized.split(lambda _, piece: piece.split(is_bert_punctuation, self.behavior))

    def plain_split(self) -> "PlainSplit":
        return _PUNCTUATION_SPLITS[self.behavior]

    def cut_spans(self, text: str) -> list[tuple[int, int]]:
        if text.isalnum():  # (letters and digits are never punctuation: one C call for most words)
            return [(0, len(text))]
        return _char_cuts(text, _PUNCTUATION_CANDIDATE, is_bert_punctuation, self.behavior)

    def to_dict(self) -> dict[str, Any]:
        return {"type": "Punctuation", "behavior": behavior_to_json(self.behavior)}


def is_numeric(char: str) -> bool:
    """Rust's ``char::is_numeric``: categories Nd, Nl, No (so '½' and '②' count)."""
    return unicodedata.category(char) in ("Nd", "Nl", "No")


#: Candidates for :func:`is_numeric`, found in C: the regex module's Unicode is at least as new
#: as :mod:`unicodedata`'s, so its \p{N} holds every char that is numeric there.
_NUMERIC_CANDIDATE = regex.compile(r"\p{N}")


#: Candidates for :func:`is_bert_punctuation` (P*, and ASCII symbols), found in C as for numbers.
_PUNCTUATION_CANDIDATE = regex.compile(r"[\p{P}$+<=>^`|~]")


def _char_cuts(text: str, candidates: Any, is_match: Callable[[str], bool], behavior: str) -> list[tuple[int, int]]:
    """``_cut(text, is_match, behavior)`` where ``candidates`` finds (in C) a superset of the
    chars ``is_match`` accepts, each checked by it.

    >>> _char_cuts("a, b!!", _PUNCTUATION_CANDIDATE, is_bert_punctuation, "contiguous")
    [(0, 1), (1, 2), (2, 4), (4, 6)]
    """
    spans = [match.span() for match in candidates.finditer(text) if is_match(match.group())]
    if not spans:  # (no match: the text is one piece, whatever the behavior)
        return [(0, len(text))] if text else []
    return [(start, end) for start, end in apply_behavior(spans_to_matches(spans, len(text)), behavior) if end > start]


#: Words of a char class by split behavior (but "removed", whose words do not tile the text),
#: ``{c}``: the class's items, as regex alternatives: each word is a match of the first.
_CLASS_WORDS = {
    "isolated": "[{c}]|[^{c}]+", "contiguous": "[{c}]+|[^{c}]+",
    "merged_with_previous": "[^{c}]*+[{c}]|[^{c}]+", "merged_with_next": "[{c}][^{c}]*+|[^{c}]+",
}


def _class_words(candidates: str, ascii_chars: str, is_match: Callable[[str], bool], behavior: str) -> Callable[[str], list[str]] | None:
    """The words ``_char_cuts(text, regex.compile(f"[{candidates}]"), is_match, behavior)`` makes,
    as strings that tile the text, found in C: in :mod:`re` by the class of the ASCII chars that
    match (``ascii_chars``) where the text holds no other candidate (the usual), else by the
    candidates' class when ``is_match`` holds for each one found (regex's Unicode may be newer);
    None for "removed".

    >>> words = _class_words(r"\\p{N}", "0-9", is_numeric, "merged_with_next")
    >>> words("a12 ½b"), _class_words(r"\\p{N}", "0-9", is_numeric, "contiguous")("a12 ½b")
    (['a', '1', '2 ', '½b'], ['a', '12', ' ', '½', 'b'])
    """
    shape = _CLASS_WORDS.get(behavior)
    if shape is None:
        return None
    findall = regex.compile(shape.format(c=candidates)).findall
    ascii_findall = re.compile(shape.format(c=ascii_chars)).findall
    candidate = regex.compile(f"[{candidates}]")
    other_candidate = regex.compile(f"(?![\x00-\x7f])[{candidates}]")

    def words(text: str) -> list[str]:
        if text.isascii() or other_candidate.search(text) is None:
            return ascii_findall(text)
        if all(map(is_match, candidate.findall(text))):
            return findall(text)
        return [text[start:end] for start, end in _char_cuts(text, candidate, is_match, behavior)]  # (a char newer than unicodedata)

    return words


_DIGITS_SPLITS = {behavior: PlainSplit(digits=True, word_list=_class_words(r"\p{N}", "0-9", is_numeric, behavior)) for behavior in ("isolated", "contiguous")}
_PUNCTUATION_SPLITS = {
    behavior: PlainSplit(word_list=_class_words(_PUNCTUATION_CANDIDATE.pattern[1:-1], re.escape("".join(sorted(_ASCII_PUNCTUATION))), is_bert_punctuation, behavior))
    for behavior in SPLIT_BEHAVIORS
}


@dataclass(slots=True, repr=False)
class Digits(PreTokenizer):
    """Isolate numbers: runs of digits, or each digit alone with ``individual_digits``.

    >>> Digits(individual_digits=True).pre_tokenize_words("Call 123")
    ['Call ', '1', '2', '3']
    """

    def plain_split(self) -> "PlainSplit":
        return _DIGITS_SPLITS[self._behavior()]

    individual_digits: bool = False

    def _behavior(self) -> str:
        return "isolated" if self.individual_digits else "contiguous"

    def pre_tokenize(self, pretokenized: PreTokenizedString) -> None:
        pretokenized.split(lambda _, piece: piece.split(is_numeric, self._behavior()))

    def cut_spans(self, text: str) -> list[tuple[int, int]]:
        """Where Digits cuts ``text`` (as ``_cut(text, is_numeric, behavior)``).

        >>> Digits(individual_digits=True).cut_spans("a½ ②3")
        [(0, 1), (1, 2), (2, 3), (3, 4), (4, 5)]
        """
        # (letters are never numeric, and most words are letters only: one C call for them)
        return [(0, len(text))] if text.isalpha() else _char_cuts(text, _NUMERIC_CANDIDATE, is_numeric, self._behavior())

    def to_dict(self) -> dict[str, Any]:
        return {"type": "Digits", "individual_digits": self.individual_digits}


@dataclass(slots=True, repr=False)
class CharDelimiterSplit(PreTokenizer):
    """Split on one delimiter char, which is removed: ``('a_b', '_') -> ['a', 'b']``."""

    delimiter: str

    def __post_init__(self) -> None:
        if not isinstance(self.delimiter, str) or len(self.delimiter) != 1:
            raise PreTokenizerOptionError(f"CharDelimiterSplit delimiter: expected a string of length 1 (exactly one character), got {self.delimiter!r}.")

    def pre_tokenize(self, pretokenized: PreTokenizedString) -> None:
        pretokenized.split(lambda _, piece: piece.split(self.delimiter, "removed"))

    def pre_tokenize_words(self, sequence: str) -> list[str]:
        return [word for word in sequence.split(self.delimiter) if word]

    def plain_split(self) -> "PlainSplit":
        return PlainSplit(re.compile(f"[^{re.escape(self.delimiter)}]+").finditer)  # (the runs between delimiters)

    def cut_spans(self, text: str) -> list[tuple[int, int]]:
        return _cut(text, self.delimiter, "removed")

    def to_dict(self) -> dict[str, Any]:
        return {"type": "CharDelimiterSplit", "delimiter": self.delimiter}


@dataclass(slots=True, repr=False)
class Split(PreTokenizer):
    """Split on a literal or a :class:`Regex` with any of the five behaviors.

    >>> Split(Regex(r"\\d+"), "isolated").pre_tokenize_words("ab12c")
    ['ab', '12', 'c']
    >>> Split(Regex(r"[a-z]+"), "removed", invert=True).pre_tokenize_words("ab12c")
    ['ab', 'c']
    """

    def plain_split(self) -> "PlainSplit":
        pattern = self.pattern
        plain = isinstance(pattern, Regex) and not pattern.compiled.groups and (self.behavior, self.invert)
        kept = matched_words(pattern) if plain == ("removed", True) else None
        return PlainSplit(pattern=pattern, word_list=isolated_words(pattern) if plain == ("isolated", False) else None, kept_words=kept)

    _READ_ONLY: ClassVar[dict[str, str]] = {"pattern": "Cannot set pattern, please instantiate a new split pattern instead"}

    pattern: Union[str, Regex]
    behavior: str
    invert: bool = False

    def __post_init__(self) -> None:
        if not isinstance(self.pattern, (str, Regex)):
            raise TypeError(f"Split pattern must be a str or a Regex, not {type(self.pattern).__name__}")
        object.__setattr__(self, "behavior", normalize_behavior(self.behavior))

    def pre_tokenize(self, pretokenized: PreTokenizedString) -> None:
        pretokenized.split(lambda _, piece: piece.split(self.pattern, self.behavior, invert=self.invert))

    def cut_spans(self, text: str) -> list[tuple[int, int]]:
        return _cut(text, self.pattern, self.behavior, self.invert)

    def to_dict(self) -> dict[str, Any]:
        return {
            "type": "Split",
            "pattern": pattern_to_dict(self.pattern),
            "behavior": behavior_to_json(self.behavior),
            "invert": self.invert,
        }


def isolated_words(pattern: Regex) -> Callable[[str], list[str] | None]:
    """The words Split(pattern, "isolated") makes of a text, as strings: the matches and the
    gaps between them, in C; None when a match is empty (the general path then splits it, as
    Oniguruma iterates). While the matches tile every text (GPT-2's and Llama 3's patterns
    match every char), they are the words, found without a group; once a text shows gaps,
    texts are split by the pattern in a group. A pattern that needs no time limit runs in
    :mod:`re` where a twin finds the same (:func:`~tokviz.patterns.text_twin`, ``ascii_twin``).

    >>> words = isolated_words(Regex(r"\\p{L}+|\\s+|\\p{N}{1,3}"))
    >>> words("ab 12345"), words("ab!? c"), isolated_words(Regex(r"\\p{L}*"))("ab!")
    (['ab', ' ', '123', '45'], ['ab', '!?', ' ', 'c'], None)
    """
    compiled = pattern.compiled
    grouped = regex.compile(f"({compiled.pattern})", compiled.flags)
    linear = is_linear(compiled.pattern)
    # In re where it finds the same (a twin for any text, else for ASCII text), which takes no
    # time limit: only for a pattern that needs none.
    twin, grouped_twin = text_twin(compiled) or compiled, text_twin(grouped) or grouped
    ascii, grouped_ascii = ascii_twin(compiled) or twin, ascii_twin(grouped) or grouped_twin
    tiling = [linear]  # (so far every text's matches tiled it)

    def words(text: str) -> list[str] | None:
        if tiling[0]:
            found = (ascii if text.isascii() else twin).findall(text)
            if all(found) and "".join(found) == text:
                return found  # (no gap, no empty match: the matches are the words)
            tiling[0] = False
        if linear:
            pieces = (grouped_ascii if text.isascii() else grouped_twin).split(text)
        else:
            pieces = find_all(grouped, text, split=True)
        if "" in pieces[1::2]:
            return None
        return list(filter(None, pieces))

    return words


def matched_words(pattern: Regex) -> Callable[[str], tuple[list[str], list[int]] | None]:
    """The words Split(pattern, "removed", invert=True) keeps, its matches, and their starts
    (in :mod:`re` on ASCII text where it can); None for an empty one (the general path's).

    >>> matched_words(Regex(r"\\p{L}+|\\p{N}"))("ab 12 é")
    (['ab', '1', '2', 'é'], [0, 3, 4, 6])
    """
    compiled = pattern.compiled
    twin, linear = ascii_twin(compiled) or compiled, is_linear(compiled.pattern)

    def words(text: str) -> tuple[list[str], list[int]] | None:
        if not linear:  # (under the time limit)
            spans = match_spans(compiled, text)
            found = [text[start:end] for start, end in spans], [start for start, _ in spans]
        elif matches := list((twin if text.isascii() else compiled).finditer(text)):
            match_type = type(matches[0])
            found = list(map(match_type.group, matches)), list(map(match_type.start, matches))
        else:
            return [], []
        return None if "" in found[0] else found

    return words


@dataclass(slots=True, repr=False)
class FixedLength(PreTokenizer):
    """Cut every piece into chunks of ``length`` characters (the last may be shorter).

    >>> FixedLength(3).pre_tokenize_str("abcdefgh")
    [('abc', (0, 3)), ('def', (3, 6)), ('gh', (6, 8))]
    """

    length: int = 5

    def __post_init__(self) -> None:
        # HF panics on 0; a user typing it deserves a sentence instead.
        if isinstance(self.length, bool) or not isinstance(self.length, int) or self.length < 1:
            raise PreTokenizerOptionError(f"FixedLength needs a length of at least 1 character, got {self.length!r}.")

    def _split_piece(self, piece: NormalizedString) -> list[NormalizedString]:
        size = len(piece.normalized)
        return [piece.slice(start, min(start + self.length, size)) for start in range(0, size, self.length)]


    def cut_spans(self, text: str) -> list[tuple[int, int]]:
        size = len(text)
        return [(start, min(start + self.length, size)) for start in range(0, size, self.length)]

    def to_dict(self) -> dict[str, Any]:
        return {"type": "FixedLength", "length": self.length}


# --------------------------------------------------------------------------- scripts


@lru_cache(maxsize=1)
def _script_regex() -> tuple[regex.Pattern, list[str]]:
    # The ``regex`` module knows every Script value; we ask it for their names once.
    from regex import _regex  # private, but the only place Python lists script names

    by_value: dict[int, str] = {}
    for name, value in _regex.get_properties()["SCRIPT"][1].items():
        by_value.setdefault(value, name)  # the long name comes first: 'LATIN', not 'LATN'
    names = [by_value[value] for value in sorted(by_value)]
    alternatives = "|".join(f"(\\p{{Script={name}}})" for name in names)
    return regex.compile(alternatives), names


@lru_cache(maxsize=65536)
def script_of(char: str) -> str:
    """The Unicode script of ``char``: ``'a' -> 'LATIN'``, ``'1' -> 'COMMON'``."""
    pattern, names = _script_regex()
    match = pattern.match(char)
    return names[match.lastindex - 1] if match else "UNKNOWN"


def fixed_script(char: str) -> str:
    """The script SentencePiece groups by: kana and 'ー' count as Han; a space, a private-use
    or an unassigned char is 'ANY' (it joins whatever script surrounds it).

    >>> [fixed_script(c) for c in "aい京ー 1\ue000"]
    ['LATIN', 'HAN', 'HAN', 'HAN', 'ANY', 'COMMON', 'ANY']
    """
    if char == "\u30fc":
        return "HAN"
    if char == " ":
        return "ANY"
    script = script_of(char)
    if script in ("HIRAGANA", "KATAKANA"):
        return "HAN"
    return "ANY" if script == "UNKNOWN" else script


def script_boundaries(text: str) -> list[int]:
    """Where a new script starts (an 'ANY' char belongs to the script before it), plus
    ``len(text)``. Like HF, 'ANY' chars before the first real script start no piece, so
    they are dropped: ``' a'`` gives only ``'a'``.

    >>> script_boundaries("Apples are りんご 林檎"), script_boundaries(" a")
    ([0, 11, 17], [1, 2])
    """
    boundaries: list[int] = []
    last_script: str | None = None
    for index, char in enumerate(text):
        script = fixed_script(char)
        if script != "ANY" and last_script != "ANY" and script != last_script:
            boundaries.append(index)
        if script != "ANY":
            last_script = script
    boundaries.append(len(text))
    return boundaries


@dataclass(slots=True, repr=False)
class UnicodeScripts(PreTokenizer):
    """Split where the Unicode script changes, like SentencePiece: ``'どこで生れ。Yes' ->
    ['どこで生れ', '。', 'Yes']``."""

    def _split_piece(self, piece: NormalizedString) -> list[NormalizedString]:
        boundaries = script_boundaries(piece.normalized)
        return [piece.slice(start, end) for start, end in zip(boundaries, boundaries[1:])]


    def cut_spans(self, text: str) -> list[tuple[int, int]]:
        boundaries = script_boundaries(text)
        return [(start, end) for start, end in zip(boundaries, boundaries[1:]) if end > start]


# --------------------------------------------------------------------------- composition


@dataclass(slots=True, repr=False)
class Sequence(SequenceItems, PreTokenizer):
    """Run pre-tokenizers in order, each on the pieces of the one before; ``seq[0] = Whitespace()``
    as HF.

    >>> Sequence([WhitespaceSplit(), Digits(individual_digits=True)]).pre_tokenize_words("ab 12")
    ['ab', '1', '2']
    """

    _ITEMS = "pretokenizers"
    pretokenizers: tuple[PreTokenizer, ...] = ()

    def steps(self) -> tuple[PreTokenizer, ...]:
        return tuple(step for pretokenizer in self.pretokenizers for step in pretokenizer.steps())

    def __post_init__(self) -> None:
        object.__setattr__(self, "pretokenizers", tuple(self.pretokenizers))
        for pretokenizer in self.pretokenizers:
            if not isinstance(pretokenizer, PreTokenizer):
                raise TypeError(f"Sequence takes pre-tokenizers, not {type(pretokenizer).__name__}")

    def _is_position_independent(self) -> bool:
        return all(p._is_position_independent() for p in self.pretokenizers)

    def pre_tokenize(self, pretokenized: PreTokenizedString) -> None:
        for pretokenizer in self.pretokenizers:
            pretokenizer.pre_tokenize(pretokenized)

    def pre_tokenize_words(self, sequence: str) -> list[str]:
        if not self.pretokenizers:
            return [sequence] if sequence else []
        if not all(p._is_position_independent() for p in self.pretokenizers[1:]):
            return PreTokenizer.pre_tokenize_words(self, sequence)
        # Pieces are pre-tokenized independently, so each distinct word is re-split once.
        words = self.pretokenizers[0].pre_tokenize_words(sequence)
        for pretokenizer in self.pretokenizers[1:]:
            cache: dict[str, list[str]] = {}
            finer: list[str] = []
            for word in words:
                pieces = cache.get(word)
                if pieces is None:
                    pieces = cache[word] = pretokenizer.pre_tokenize_words(word)
                finer.extend(pieces)
            words = finer
        return words

    def cut_spans(self, text: str) -> list[tuple[int, int]] | None:
        """Each member's cuts inside the pieces of the one before (None when one does not cut)."""
        spans = [(0, len(text))] if text else []
        for pretokenizer in self.pretokenizers:
            cut = pretokenizer.cut_spans
            finer: list[tuple[int, int]] = []
            for start, end in spans:
                pieces = cut(text[start:end])
                if pieces is None:
                    return None
                finer.extend([(start + piece_start, start + piece_end) for piece_start, piece_end in pieces])
            spans = finer
        return spans

    def to_dict(self) -> dict[str, Any]:
        return {"type": "Sequence", "pretokenizers": [p.to_dict() for p in self.pretokenizers]}


class CustomPreTokenizer(CustomComponent, PreTokenizer):
    """A Python object with ``pre_tokenize(pretokenized)`` used as a pre-tokenizer (HF's
    ``custom``); it cannot be saved to tokenizer.json or pickled, as in HF."""

    __slots__ = ("inner",)
    position_independent: ClassVar[bool] = False
    _WHAT = "pre-tokenizer"
    _NEEDS = "pre_tokenize(pretokenized)"
    _UNSERIALIZABLE = "Custom PreTokenizer cannot be serialized"

    def pre_tokenize(self, pretokenized: PreTokenizedString) -> None:
        try:
            self.inner.pre_tokenize(pretokenized)
        except Exception as error:  # HF reports the Python error inside its own: "TypeError: ..."
            raise Exception(f"{type(error).__name__}: {error}") from error


# --------------------------------------------------------------------------- tokenizer.json


_field = partial(fragment_field, what="pre-tokenizer")


def _behavior_from_json(value: Any) -> str:
    try:
        return normalize_behavior(value)
    except TokvizError as error:
        raise SerializationError(f"Unknown split behavior {value!r} in tokenizer.json.") from error


#: The pre-tokenizers whose fragment names their fields as their dataclass does.
_BY_FIELDS = {
    kind.__name__: kind
    for kind in (Whitespace, WhitespaceSplit, BertPreTokenizer, UnicodeScripts, ByteLevel, Digits, FixedLength, CharDelimiterSplit)
}


def from_dict(data: dict[str, Any] | None) -> PreTokenizer | None:
    """Build a pre-tokenizer from its tokenizer.json fragment (``None`` stays ``None``).

    >>> from_dict({"type": "Digits", "individual_digits": True})
    Digits(individual_digits=True)
    """
    if data is None:
        return None
    if not isinstance(data, dict) or "type" not in data:
        raise SerializationError(f"A pre-tokenizer must be an object with a 'type', got {data!r}.")
    kind = data["type"]
    if kind in _BY_FIELDS:
        return from_fields(_BY_FIELDS[kind], data, "pre-tokenizer")
    if kind == "Metaspace":
        scheme = _field(data, "prepend_scheme", None)
        if scheme is None:  # tokenizer.json files from before prepend_scheme existed
            scheme = "always" if _field(data, "add_prefix_space", True) else "never"
        return Metaspace(replacement=_field(data, "replacement", "▁"), prepend_scheme=scheme, split=_field(data, "split", True))
    if kind == "Punctuation":
        return Punctuation(_behavior_from_json(_field(data, "behavior", "Isolated")))
    if kind == "Split":
        return Split(
            pattern_from_dict(_field(data, "pattern")),
            _behavior_from_json(_field(data, "behavior")),
            invert=_field(data, "invert", False),
        )
    if kind == "Sequence":
        return Sequence([from_dict(item) for item in _field(data, "pretokenizers")])
    raise SerializationError(f"tokviz cannot build a pre-tokenizer of type {kind!r}.")



# HF's compiled submodule is reachable as ``tokenizers.pre_tokenizers.pre_tokenizers``; here it is this module.
pre_tokenizers = sys.modules[__name__]
