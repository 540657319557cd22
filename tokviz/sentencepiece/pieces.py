"""What every SentencePiece trainer shares: which strings may become pieces, and words from sentences.

``is_valid_piece`` is sentencepiece's ``IsValidSentencePiece``: at most
``max_sentencepiece_length`` characters, no unknown marker ``▅``, no boundary (U+001F), ``▁`` only as a
prefix (a suffix with ``treat_whitespace_as_suffix``), one Unicode script per piece (Hiragana
and Katakana count as Han, combining marks take the script before them), digits alone when
``split_digits``, and digits free to join anything when ``split_by_number`` is off.

    >>> rules = PieceRules()
    >>> [rules.is_valid(p) for p in ("▁the", "the▁", "n't", "12.", "a1")]
    [True, False, False, True, False]
    >>> split_into_words("▁hello▁world")
    ['▁hello', '▁world']

Script: Python has no Unicode ``Script`` property, so :func:`script_of` derives it from the
character's name (``LATIN SMALL LETTER A`` -> ``LATIN``); punctuation, symbols, spaces and
ASCII digits are ``COMMON``, combining marks ``INHERITED``. This matches sentencepiece's table
for letters of every named script; it can differ for a few modifier letters and symbols.
"""

from __future__ import annotations

import re
import unicodedata
from collections import Counter
from dataclasses import dataclass
from functools import lru_cache

__all__ = ["WS", "UNK_CHAR", "BOUNDARY", "script_of", "PieceRules", "split_into_words", "count_words"]

WS = "\u2581"
#: a word is a leading run without "▁", or "▁" and what follows up to the next "▁"
_PREFIX_WORDS = re.compile("[^\u2581]+|\u2581[^\u2581]*")
UNK_CHAR = "\u2585"
#: sentencepiece 0.2.3's ``kPretokenizationBoundaryChar``: where a meta piece or a pretokenizer cut a text
#: (no piece holds it; a tab is an ordinary character, as it is there; before 0.2 the boundary was a tab)
BOUNDARY = "\x1f"

#: :meth:`PieceRules.ascii_parts`: a run of letters, or of other characters but "\0", " " and the boundary,
#: each after an optional "▁"; "\0", " " or a "▁" alone
_LETTERS, _OTHERS = "[A-Za-z]+", "[\x01-\x1e!-@\\[-`{-\x7f]+"
_ASCII_PARTS = re.compile(f"\u2581?{_LETTERS}|\u2581?{_OTHERS}|[\x00 ]|\u2581")
#: the valid pieces among them (whole): one part but "\0" and " "
_ASCII_PIECE = re.compile(f"\u2581?(?:{_LETTERS}|{_OTHERS})?")
_SCRIPT_ALIASES = {"CJK": "HAN", "HIRAGANA": "HAN", "KATAKANA": "HAN", "KANGXI": "HAN", "IDEOGRAPHIC": "HAN"}
_SKIP_WORDS = {"FULLWIDTH", "HALFWIDTH", "MATHEMATICAL", "CIRCLED", "PARENTHESIZED", "SMALL", "CAPITAL", "MODIFIER",
               "SUPERSCRIPT", "SUBSCRIPT", "OLD", "NEGATIVE", "SQUARED"}


@lru_cache(maxsize=65536)
def script_of(char: str) -> str:
    """The Unicode script of a character, by name: ``script_of('é') == 'LATIN'``, ``script_of(',') == 'COMMON'``."""
    code = ord(char)
    if code == 0x30FC:
        return "HAN"
    category = unicodedata.category(char)
    if category in ("Mn", "Me"):
        name = unicodedata.name(char, "")
        if name.startswith("COMBINING") or not name:
            return "INHERITED"
    elif category[0] not in ("L", "M") and not (category == "Nd" and code > 0x7F) and category != "Nl":
        return "COMMON"
    name = unicodedata.name(char, "")
    if not name:
        return "HAN" if category == "Lo" else "COMMON"
    words = name.split()
    for word in words:
        if word in _SKIP_WORDS:
            continue
        if word in ("DIGIT", "LETTER", "SIGN"):
            return "COMMON"
        return _SCRIPT_ALIASES.get(word, word.split("-")[0])
    return "COMMON"


@dataclass(frozen=True, slots=True)
class PieceRules:
    """The options of ``IsValidSentencePiece`` (sentencepiece's defaults)."""

    max_sentencepiece_length: int = 16
    split_by_unicode_script: bool = True
    split_by_number: bool = True
    split_digits: bool = False
    split_by_whitespace: bool = True
    treat_whitespace_as_suffix: bool = False
    allow_whitespace_only_pieces: bool = False

    def is_valid(self, piece: str) -> bool:
        size = len(piece)
        if size == 0 or size > self.max_sentencepiece_length:
            return False
        # the common case first: ASCII letters (all Latin), with "▁" at the allowed end
        if self.treat_whitespace_as_suffix:
            body = piece[:-1] if piece[-1] == WS else piece
        else:
            body = piece[1:] if piece[0] == WS else piece
        if body.isascii():
            if body.isalpha():
                return True
            if self.ascii_parts() is not None:  # (sentencepiece's default rules: one part of :meth:`ascii_parts`)
                return _ASCII_PIECE.fullmatch(piece) is not None
        return self.check_each_char(piece)

    def ascii_parts(self) -> re.Pattern[str] | None:
        """Under sentencepiece's default script, number, digit and whitespace rules, a regex whose matches
        are the parts of an ASCII word (a leading ``"▁"`` aside) that no piece crosses; None under others.

        A piece of ASCII characters is one script: letters (Latin) or the rest (Common: digits,
        punctuation, controls); a leading ``"▁"`` joins the run after it; ``"\\0"`` and ``" "`` are parts
        of their own (no piece holds them) and a boundary (U+001F) is in no part. Every pair of
        characters across two parts is in no valid piece, so trainers may treat each part apart.

            >>> [m.group() for m in PieceRules().ascii_parts().finditer("▁don't,12")]
            ['▁don', "'", 't', ',12']
        """
        if (self.split_by_unicode_script and self.split_by_number and not self.split_digits and self.split_by_whitespace
                and not self.treat_whitespace_as_suffix and not self.allow_whitespace_only_pieces):
            return _ASCII_PARTS
        return None

    def check_each_char(self, piece: str) -> bool:
        """``IsValidSentencePiece``'s loop over the characters (``is_valid`` without its ASCII shortcut)."""
        size = len(piece)
        if size == 0 or size > self.max_sentencepiece_length:
            return False
        all_ws = all(c == WS for c in piece)
        prev_script: str | None = None
        for pos, char in enumerate(piece):
            if char in (UNK_CHAR, "\0", BOUNDARY, " "):
                return False
            if char == WS:
                if not self.allow_whitespace_only_pieces or not all_ws:
                    if self.treat_whitespace_as_suffix:
                        if (self.split_by_whitespace and pos < size - 1) or (
                                not self.split_by_whitespace and pos < size - 1 and pos == 0):
                            return False
                    elif (self.split_by_whitespace and pos > 0) or (
                            not self.split_by_whitespace and pos > 0 and pos == size - 1):
                        return False
                continue
            script: str | None = script_of(char)
            if script == "INHERITED":
                script = prev_script
            is_digit = "0" <= char <= "9" or "\uff10" <= char <= "\uff19"
            if not self.split_by_number and is_digit:
                script = None
            if self.split_digits and is_digit and size > 1:
                return False
            if self.split_by_unicode_script and script is not None and prev_script is not None and prev_script != script:
                return False
            prev_script = script
        return True


def split_into_words(text: str, treat_whitespace_as_suffix: bool = False, allow_whitespace_only_pieces: bool = False) -> list[str]:
    """sentencepiece's ``SplitIntoWords``: a new word at every ``▁`` (after it, as suffix).

    >>> split_into_words("▁a▁▁b")
    ['▁a', '▁', '▁b']
    >>> split_into_words("a▁b▁", treat_whitespace_as_suffix=True)
    ['a▁', 'b▁']
    """
    words: list[str] = []
    if treat_whitespace_as_suffix:
        in_ws = False
        for index, char in enumerate(text):
            is_ws = char == WS
            if index == 0 or (not is_ws and in_ws and allow_whitespace_only_pieces) or (
                    not allow_whitespace_only_pieces and words[-1].endswith(WS)):
                words.append("")
            words[-1] += char
            in_ws = is_ws
        return words
    if not allow_whitespace_only_pieces:
        return _PREFIX_WORDS.findall(text)
    in_ws = False
    for index, char in enumerate(text):
        is_ws = char == WS
        if index == 0 or (is_ws and (not in_ws or not allow_whitespace_only_pieces)):
            words.append("")
            in_ws = True
        if in_ws and not is_ws:
            in_ws = False
        words[-1] += char
    return words


def count_words(texts: list[str], treat_whitespace_as_suffix: bool = False,
                allow_whitespace_only_pieces: bool = False) -> Counter[str]:
    """``split_into_words`` of every text, counted (each text once).

    >>> count_words(["▁a▁b", "▁a"])
    Counter({'▁a': 2, '▁b': 1})
    """
    if not treat_whitespace_as_suffix and not allow_whitespace_only_pieces:
        kept = [text for text in texts if text]
        if not any(text[0] != WS for text in kept):
            # every text starts a word: joined, they split at every "▁" (a "▁" put back on each
            # distinct word; an empty part after the first is a word "▁" alone, of "▁▁"); joined 2,000
            # at a time, so that a big corpus's words are never all in one list
            parts: Counter[str] = Counter()
            for at in range(0, len(kept), 2_000):
                parts.update(WS.join(kept[at:at + 2_000]).split(WS))
            alone = parts.pop("", 0) - len(kept)
            counts = Counter({WS + part: count for part, count in parts.items()})
            if alone > 0:
                counts[WS] = alone
            return counts
        # the texts joined by a character none of them holds, cut before every "▁" and at the joins
        blob = "".join(texts)
        for sep in ("\n", "\0", "\uffff"):
            if sep not in blob:
                counts = Counter(sep.join(texts).replace(WS, sep + WS).split(sep))
                counts.pop("", None)
                return counts
    words: Counter[str] = Counter()
    for text in texts:
        words.update(split_into_words(text, treat_whitespace_as_suffix, allow_whitespace_only_pieces))
    return words
