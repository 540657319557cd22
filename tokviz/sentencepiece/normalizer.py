"""SentencePiece's normalizer: the precompiled charsmap of a rule, then its whitespace handling.

A charsmap is ``uint32 trie_size`` + a Darts-clone double-array trie over UTF-8 keys + a blob
of NUL-terminated replacements. At each position the LONGEST key that matches (over bytes)
is replaced; text no key matches is copied. On top of that, as in sentencepiece's
``Normalizer::Normalize``:

- ``remove_extra_whitespaces``: leading, trailing and repeated spaces go;
- ``add_dummy_prefix``: a space is put in front (behind, with ``treat_whitespace_as_suffix``);
- ``escape_whitespaces``: every space becomes ``▁`` (U+2581);
- user-defined symbols are matched first and never normalized.

    >>> n = SentencePieceNormalizer.from_rule("nmt_nfkc")
    >>> n.normalize("  Ｈｅｌｌｏ   world ")
    '▁Hello▁world'
    >>> SentencePieceNormalizer.from_rule("identity", add_dummy_prefix=False).normalize("a  b")
    'a▁b'

Charsmap data: ``data/<rule>.charsmap.zlib`` are the precompiled charsmaps that sentencepiece
0.2.3 embeds for each named rule (see ``data/README.md``). This version does not compile a
charsmap from a rule TSV; it reads any charsmap found in a ``.model``.
"""

from __future__ import annotations

import re
import sys
import zlib
from collections import Counter
from functools import lru_cache
from pathlib import Path
from typing import Any, Iterable

from tokviz.precompiled_charsmap import PrecompiledCharsmap

__all__ = ["RULE_NAMES", "charsmap_for_rule", "parse_charsmap", "SentencePieceNormalizer"]

#: The rule names sentencepiece accepts for ``normalization_rule_name``.
RULE_NAMES = ("nmt_nfkc", "nfkc", "nmt_nfkc_cf", "nfkc_cf", "identity")

SPACE_SYMBOL = "\u2581"
#: The characters besides the space that ``str.split()`` cuts an ASCII text at.
_OTHER_SPACES = "\t\n\x0b\x0c\r\x1c\x1d\x1e\x1f"
# runs of 2+ spaces; written so, the regex engine looks for the literal "  " first (4x faster than " {2,}")
_SPACES = re.compile("  [ ]*")


@lru_cache(maxsize=None)
def charsmap_for_rule(name: str) -> bytes:
    """The precompiled charsmap sentencepiece uses for a named rule (``b""`` for identity)."""
    if name not in RULE_NAMES:
        raise ValueError(f"Unknown normalization rule {name!r}; choose one of {', '.join(RULE_NAMES)}.")
    if name == "identity":
        return b""
    # (zlib, not xz: 1.2 ms to decompress against LZMA's 5.5-6, which every training paid; 140 KB against 82 KB on disk)
    return zlib.decompress((Path(__file__).parent / "data" / f"{name}.charsmap.zlib").read_bytes())


#: ``_XOR[b]`` XORs every byte with ``b`` (``bytes.translate``); ``_IDENTITY`` is the bytes 0..255 as one integer.
_XOR = tuple(bytes(x ^ b for x in range(256)) for b in range(256))
_IDENTITY = int.from_bytes(bytes(range(256)), "little")
_ZERO = re.compile(b"\\x00")


def _offset(unit: int) -> int:
    return (unit >> 10) << ((unit & (1 << 9)) >> 6)


class _Trie:
    """A charsmap's double-array trie, read on demand.

    The children of the node whose base is ``b`` are the units ``b ^ c`` whose label is ``c``:
    they all sit in the 256 units of ``b``'s aligned block, which are read as bytes (labels and
    flags, one C-level comparison) when the node is first visited. The rules (hundreds of
    thousands of keys for the NFKC rules, mostly 3-character halfwidth sequences) are only spelled
    out under the first characters asked for, and loading a model reads none of them.
    """

    __slots__ = ("units", "raw", "normalized", "children", "root")

    def __init__(self, charsmap: bytes) -> None:
        read = PrecompiledCharsmap(charsmap)  # (the one reader: header checked there)
        self.raw, self.units, self.normalized = read.raw, read.units, read.replacements
        self.children: dict[int, list[tuple[int, int]]] = {}
        self.root = _offset(self.units[0])

    def _children(self, base: int) -> list[tuple[int, int]]:
        """``[(label, unit position), ...]`` of the node at ``base``.

        Unit ``p`` of the block is a child when its low byte equals ``p ^ base``'s and its leaf
        flag (bit 31) is clear: the block's low bytes XOR-ed with ``base``'s low byte are compared
        with ``0, 1, ..., 255`` in one integer XOR, whose zero bytes are the children.
        """
        found = self.children.get(base)
        if found is not None:
            return found
        block = base & ~0xFF
        size = len(self.units)
        raw = self.raw
        low = raw[4 * block:4 * min(block + 256, size):4].translate(_XOR[base & 0xFF])
        same = (int.from_bytes(low, "little") ^ _IDENTITY).to_bytes(256, "little")[:len(low)]
        units = self.units
        found = []
        for match in _ZERO.finditer(same):
            pos = block + match.start()
            label = pos ^ base
            if 0 < label < 256 and not units[pos] & (1 << 31):
                found.append((label, pos))
        self.children[base] = found
        return found

    def _value(self, base: int) -> bytes:
        value = self.units[base] & 0x7FFFFFFF
        end = self.normalized.find(b"\0", value)
        return self.normalized[value:end if end >= 0 else len(self.normalized)]

    def _collect(self, base: int, key: bytes, rules: dict[str, str]) -> None:
        """Every rule whose key continues ``key`` (the node at ``base``) into ``rules``."""
        units, children = self.units, self._children
        stack: list[tuple[int, bytes]] = [(base, key)]
        while stack:
            base, key = stack.pop()
            for label, pos in children(base):
                unit = units[pos]
                child_base = pos ^ _offset(unit)
                child_key = key + bytes((label,))
                if unit & (1 << 8):  # has a leaf: the value sits at the child base
                    try:
                        rules[child_key.decode("utf-8")] = self._value(child_base).decode("utf-8")
                    except UnicodeDecodeError:
                        pass  # keys that are not whole characters never match a str
                stack.append((child_base, child_key))

    def ascii_rules(self) -> dict[str, str]:
        """The rules whose key is all ASCII (the only ones an ASCII text can meet), found without
        spelling out the rest: ``{"\\x00": "", ...}`` walks only the ASCII labels."""
        units, children = self.units, self._children
        rules: dict[str, str] = {}
        stack: list[tuple[int, bytes]] = [(self.root, b"")]
        while stack:
            base, key = stack.pop()
            for label, pos in children(base):
                if label < 0x80:
                    unit = units[pos]
                    child_base = pos ^ _offset(unit)
                    child_key = key + bytes((label,))
                    if unit & (1 << 8):
                        try:
                            rules[child_key.decode("ascii")] = self._value(child_base).decode("utf-8")
                        except UnicodeDecodeError:
                            pass  # (as rules_from: a replacement that is not text never applies)
                    stack.append((child_base, child_key))
        return rules

    def all_rules(self) -> dict[str, str]:
        rules: dict[str, str] = {}
        self._collect(self.root, b"", rules)
        return rules

    def rules_from(self, char: str) -> dict[str, str]:
        """The rules whose key starts with ``char`` (``{}`` if none)."""
        units, base = self.units, self.root
        data = char.encode("utf-8", errors="surrogatepass")
        unit = 0
        for byte in data:
            pos = base ^ byte
            if pos >= len(units) or units[pos] & ((1 << 31) | 0xFF) != byte:
                return {}
            unit = units[pos]
            base = pos ^ _offset(unit)
        rules: dict[str, str] = {}
        if unit & (1 << 8):
            try:
                rules[char] = self._value(base).decode("utf-8")
            except UnicodeDecodeError:
                pass
        self._collect(base, data, rules)
        return rules


@lru_cache(maxsize=16)
def parse_charsmap(charsmap: bytes) -> dict[str, str]:
    """Every rule of a precompiled charsmap as ``{source: replacement}`` (walks the whole trie).

    >>> parse_charsmap(charsmap_for_rule("nmt_nfkc"))["Ａ"]
    'A'
    """
    if not charsmap:
        return {}
    return _Trie(charsmap).all_rules()


class _RuleIndex:
    """The rules of one charsmap by first character, filled in for the characters a text holds.

    ``rules`` / ``first`` (key lengths, longest first) / ``used`` (characters of keys and
    replacements) cover the characters ``load`` was given; ``hot(chars)`` are the characters
    of ``chars`` where a rule may start (a one-character key) or that continue a longer key
    of a character in ``chars`` (a "tail": a rule there starts one character before). A rule
    starts only at such a character or just before a tail, so text before the first hot
    character (but the one before it, when that is a tail) is copied unchanged.
    """

    __slots__ = ("trie", "rules", "first", "used", "singles", "single_table", "tails", "loaded", "_ascii")

    def __init__(self, charsmap: bytes) -> None:
        self.trie = _Trie(charsmap) if charsmap else None
        self.rules: dict[str, str] = {}
        self.first: dict[str, tuple[int, ...]] = {}
        self.used: set[str] = set()
        self.singles: set[str] = set()
        #: ``ord(char) -> replacement`` of every one-character key loaded (``str.translate``'s table)
        self.single_table: dict[int, str] = {}
        self.tails: dict[str, frozenset[str]] = {}
        self.loaded: set[str] = set()
        self._ascii: tuple[Any, dict[int, str]] | None | bool = False  # (not made yet)

    def ascii(self) -> tuple[Any, dict[int, str]] | None:
        """For an all-ASCII text: ``(pattern of the ASCII characters a rule maps, translate table)``
        when every rule an ASCII text can meet is one character long (the shipped rules: control
        characters, and upper case for the ``_cf`` ones), else None. ``pattern`` is None when no
        ASCII character has a rule."""
        if self._ascii is False:
            rules = self.trie.ascii_rules() if self.trie is not None else {}
            if any(len(key) > 1 for key in rules):
                self._ascii = None
            else:
                self._ascii = (_hot_pattern(frozenset(rules)) if rules else None, {ord(key): value for key, value in rules.items()})
        return self._ascii  # type: ignore[return-value]

    def load(self, chars: Iterable[str]) -> None:
        missing = set(chars) - self.loaded
        if not missing or self.trie is None:
            return
        for char in missing:
            found = self.trie.rules_from(char)
            if not found:
                continue
            self.rules.update(found)
            self.first[char] = tuple(sorted({len(key) for key in found}, reverse=True))
            if char in found:
                self.singles.add(char)
                self.single_table[ord(char)] = found[char]
            tails = frozenset(key[1] for key in found if len(key) > 1)
            if tails:
                self.tails[char] = tails
            self.used.update("".join(found), "".join(found.values()))
        self.loaded |= missing

    def hot(self, chars: set[str] | frozenset[str]) -> tuple[frozenset[str], frozenset[str]]:
        """``(hot characters, tails)`` among ``chars`` (see the class docstring)."""
        self.load(chars)
        tails: set[str] = set()
        for char in chars & self.tails.keys():
            tails |= self.tails[char] & chars
        return frozenset(tails | (chars & self.singles)), frozenset(tails)


@lru_cache(maxsize=16)
def _rule_index(charsmap: bytes) -> _RuleIndex:
    return _RuleIndex(charsmap)


def _char_class(chars: Iterable[str]) -> str:
    """A regex character class of ``chars`` written as ranges: ``_char_class("abcx") == '[a-cx]'``."""
    codes = sorted({ord(c) for c in chars})
    parts: list[str] = []
    i = 0
    while i < len(codes):
        j = i
        while j + 1 < len(codes) and codes[j + 1] == codes[j] + 1:
            j += 1
        lo, hi = re.escape(chr(codes[i])), re.escape(chr(codes[j]))
        parts.append(lo if i == j else f"{lo}-{hi}")
        i = j + 1
    return "[" + "".join(parts) + "]"


@lru_cache(maxsize=1024)
def _hot_pattern(chars: frozenset[str]) -> "re.Pattern[str]":
    """A character class of the few hot characters a text holds (a class of thousands scans slowly)."""
    return re.compile(_char_class(chars))


def _replace_singles(text: str, present: frozenset[str], table: dict[int, str]) -> str:
    """``text.translate(table)`` where ``present`` are the characters of ``text`` that ``table`` maps.

    ``str.translate`` looks every character up in the table when the text is not ASCII (~50 ns a
    character); a long text (a trainer's corpus) whose mapped characters are sparse is faster by one
    regex pass over them: 6.8 MB of the shared corpora under nmt_nfkc 0.36 -> 0.07 s CPU.

    >>> _replace_singles("a½b" * 30_000, frozenset("½"), {ord("½"): "1⁄2"}) == "a1⁄2b" * 30_000
    True
    """
    if len(text) >= 1 << 16:
        hot = _hot_pattern(present)
        sample = text[:1 << 16]
        if len(hot.findall(sample)) * 20 < len(sample):  # (fewer than 1 in 20: a call per match costs less)
            replacements = {char: table[ord(char)] for char in present}
            return hot.sub(lambda match: replacements[match.group()], text)
    return text.translate(table)


class SentencePieceNormalizer:
    """Normalize text the way a SentencePiece model does (see the module docstring)."""

    __slots__ = ("rules", "add_dummy_prefix", "remove_extra_whitespaces", "escape_whitespaces",
                 "treat_whitespace_as_suffix", "user_defined_symbols", "_first", "_index", "_user_first", "_user_split",
                 "_split_ascii")

    def __init__(self, charsmap: bytes = b"", *, add_dummy_prefix: bool = True, remove_extra_whitespaces: bool = True,
                 escape_whitespaces: bool = True, treat_whitespace_as_suffix: bool = False,
                 user_defined_symbols: Iterable[str] = ()) -> None:
        # shared by the normalizers of one charsmap, filled in as texts bring new characters
        self._index = _rule_index(bytes(charsmap))
        self.rules, self._first = self._index.rules, self._index.first
        self.add_dummy_prefix = add_dummy_prefix
        self.remove_extra_whitespaces = remove_extra_whitespaces
        self.escape_whitespaces = escape_whitespaces
        self.treat_whitespace_as_suffix = treat_whitespace_as_suffix
        self.user_defined_symbols = tuple(s for s in user_defined_symbols if s)
        self._user_first: dict[str, list[str]] = {}
        ordered = sorted(set(self.user_defined_symbols), key=len, reverse=True)
        for sym in ordered:
            self._user_first.setdefault(sym[0], []).append(sym)
        # longest symbol first among those starting at the same place, as sentencepiece's prefix matcher
        self._user_split = re.compile("(" + "|".join(map(re.escape, ordered)) + ")") if ordered else None
        #: whether an ASCII text's words may come from one ``str.split()`` (see :meth:`ascii_words`): False, or
        #: ``(pattern, table, the rules map control characters only)`` of ``_map``'s ASCII case when they may;
        #: None: not known yet
        self._split_ascii: Any = (None if add_dummy_prefix and remove_extra_whitespaces and escape_whitespaces
                                          and not treat_whitespace_as_suffix and self._user_split is None else False)

    @classmethod
    def from_rule(cls, name: str, **options: object) -> "SentencePieceNormalizer":
        return cls(charsmap_for_rule(name), **options)  # type: ignore[arg-type]

    def _prefix(self, text: str, pos: int) -> tuple[str, int]:
        """``(replacement, consumed length)`` of the longest rule or user symbol at ``pos``."""
        char = text[pos]
        if char not in self._index.loaded:
            self._index.load(char)
        for sym in self._user_first.get(char, ()):
            if text.startswith(sym, pos):
                return sym, len(sym)
        rules = self.rules
        for length in self._first.get(char, ()):
            replacement = rules.get(text[pos:pos + length])
            if replacement is not None:
                return replacement, length
        return char, 1

    def _map(self, text: str, chars: set[str] | None = None) -> str:
        """The charsmap's longest-match replacements over ``text`` (no whitespace handling);
        ``chars``: the characters of ``text`` when the caller has them already."""
        if self._index.trie is None or not text:
            return text
        if text.isascii():  # (most lines: one C scan for a control character, usually none)
            fast = self._index.ascii()
            if fast is not None:
                pattern, table = fast
                return text if pattern is None or pattern.search(text) is None else text.translate(table)
        present, tails = self._index.hot(set(text) if chars is None else chars)
        if not present:
            return text
        if not tails:  # (no longer key can match: every rule met is one character, replaced in C)
            return _replace_singles(text, present, self._index.single_table)
        hot = _hot_pattern(present)
        rules, first = self.rules, self._first
        out: list[str] = []
        pos, n = 0, len(text)
        search = hot.search
        while pos < n:
            match = search(text, pos)
            if match is None:
                out.append(text[pos:])
                break
            start = match.start()
            if start > pos and text[start] in tails:
                start -= 1
            if start > pos:
                out.append(text[pos:start])
            piece, length = text[start], 1
            for size in first.get(piece, ()):
                replacement = rules.get(text[start:start + size])
                if replacement is not None:
                    piece, length = replacement, size
                    break
            out.append(piece)
            pos = start + length
        return "".join(out)

    def normalize(self, text: str) -> str:
        """The normalized string sentencepiece encodes (``▁`` for spaces when escaping).

        Equal to :meth:`normalize_reference` (sentencepiece's loop, one piece at a time): runs of
        spaces in the mapped text collapse because every rule's replacement is free of double
        spaces, which ``parse_charsmap`` of each shipped rule confirms (see the tests).
        """
        if not text:
            return ""
        if self._user_split is None:
            mapped = self._map(text)
        else:
            parts = self._user_split.split(text)
            mapped = "".join(part if index % 2 else self._map(part) for index, part in enumerate(parts))
        if self.remove_extra_whitespaces:
            if "  " in mapped:
                mapped = _SPACES.sub(" ", mapped)
            mapped = mapped.strip(" ")
            if not mapped:
                # only a suffix "▁" can survive, when some character mapped to nothing
                return self.normalize_reference(text) if self.treat_whitespace_as_suffix and self.add_dummy_prefix else ""
        space = SPACE_SYMBOL if self.escape_whitespaces else " "
        body = mapped.replace(" ", SPACE_SYMBOL) if self.escape_whitespaces else mapped
        if self.add_dummy_prefix and not self.treat_whitespace_as_suffix:
            body = space + body
        if self.remove_extra_whitespaces:
            body = body.rstrip(space)
        if self.add_dummy_prefix and self.treat_whitespace_as_suffix:
            body += space
        return body

    def ascii_words(self, text: str) -> list[str] | None:
        """``normalize(text).split("▁")[1:]`` of an ASCII text in one ``str.split()`` of the mapped
        text, or None where that is not the same: spaces collapse and are stripped, then each run
        between them follows a "▁" -- when the rule leaves no whitespace character but the space
        (the nmt rules map tabs and line ends to spaces and drop the other controls).

        >>> SentencePieceNormalizer.from_rule("nmt_nfkc").ascii_words("  Hello\tworld ")
        ['Hello', 'world']
        """
        fast = self._split_ascii
        if fast is None:
            found = self._index.ascii() if self._index.trie is not None else (None, {})
            table = found[1] if found is not None else {}
            mapped = "".join(map(table.get, map(ord, _OTHER_SPACES), _OTHER_SPACES)) + "".join(table.values())
            # (the nmt rules map control characters alone: a printable line needs no look at all)
            fast = self._split_ascii = False if found is None or any(map(mapped.__contains__, _OTHER_SPACES)) else \
                (*found, not any(map(str.isprintable, map(chr, table))))
        if fast is False or not text.isascii():
            return None
        pattern, table, controls_only = fast  # (_map's ASCII case, inlined: once a line)
        if controls_only:
            if not text.isprintable():
                text = text.translate(table)
        elif pattern is not None and pattern.search(text) is not None:
            text = text.translate(table)
        return text.split()

    def ascii_word_counts(self, texts: list[str]) -> tuple[Counter[str], int] | None:
        """``(words of the normalized texts cut before each "▁", counted; how many texts normalize to
        something)`` of ASCII texts in one :meth:`ascii_words` of them joined by a space (a trainer's
        corpus: no normalized text made, no "▁" put in and cut at), or None where :meth:`ascii_words`
        is None (a text not ASCII, user symbols, whitespace kept...). No rule crosses a join: every rule
        an ASCII text can meet is one character long, or :meth:`ascii_words` is None.

        >>> SentencePieceNormalizer.from_rule("nmt_nfkc").ascii_word_counts([" a b", "\t", "b"])
        (Counter({'▁b': 2, '▁a': 1}), 2)
        """
        words = self.ascii_words(" ".join(texts))
        if words is None:
            return None
        table = self._split_ascii[1]  # (known once ascii_words said yes)
        # a text normalizes to nothing when every character of it maps to whitespace or nothing
        blank = "".join(char for char in map(chr, range(128)) if not table.get(ord(char), char).split())
        empty = sum(1 for text in texts if not text.strip(blank))
        return Counter({SPACE_SYMBOL + word: count for word, count in Counter(words).items()}), len(texts) - empty

    def normalize_all(self, texts: list[str]) -> list[str]:
        """``[self.normalize(t) for t in texts]``, done on all texts joined at once (a trainer's corpus).

        The texts are joined by a separator character that no rule, user symbol or text holds,
        so no replacement crosses it; whitespace is then handled around every separator with a
        few whole-text passes instead of a Python loop per line. (Whitespace as a suffix keeps
        the per-text loop.)

        >>> SentencePieceNormalizer.from_rule("nmt_nfkc").normalize_all(["  Ｈｉ  there ", "", "ok"])
        ['▁Hi▁there', '', '▁ok']
        """
        if not texts:
            return []
        chars: set[str] = set()
        sep = self._separator(texts, chars)
        if sep is None or self.treat_whitespace_as_suffix:
            return [self.normalize(text) for text in texts]
        joined = sep.join(texts)
        if self._user_split is None:
            mapped = self._map(joined, chars | {sep})
        else:
            parts = self._user_split.split(joined)
            mapped = "".join(part if index % 2 else self._map(part) for index, part in enumerate(parts))
        space = SPACE_SYMBOL if self.escape_whitespaces else " "
        if self.remove_extra_whitespaces:
            if "  " in mapped:
                mapped = _SPACES.sub(" ", mapped)
            mapped = mapped.replace(" " + sep, sep).replace(sep + " ", sep).strip(" ")
        if self.escape_whitespaces:
            mapped = mapped.replace(" ", SPACE_SYMBOL)
        if self.add_dummy_prefix:
            mapped = space + mapped.replace(sep, sep + space)
        out = mapped.split(sep)
        if self.remove_extra_whitespaces:  # (a regex with a lookahead for the separator scans 4x slower)
            out = [text.rstrip(space) for text in out]
        if len(out) != len(texts):  # cannot happen when the separator is free; the plain loop is the answer
            return [self.normalize(text) for text in texts]
        for index, text in enumerate(texts):
            if not text:
                out[index] = ""
        return out

    def _separator(self, texts: list[str], chars: set[str]) -> str | None:
        """A character found in no rule, no user symbol and no text (``None`` if the few tried all
        are); the texts' characters are added to ``chars``."""
        blob = "".join(texts)
        chars |= _chars_of(blob)
        # only rules starting with a character of the texts (or the separator) can apply
        self._index.load(chars | {"\n", "\0", "\uffff", "\U0010fffd"})
        used = self._index.used | set("".join(self.user_defined_symbols)) | {" ", SPACE_SYMBOL}
        for candidate in ("\n", "\0", "\uffff", "\U0010fffd"):
            if candidate not in used and candidate not in blob:
                return candidate
        return None

    def normalize_with_offsets(self, text: str) -> tuple[str, list[int]]:
        """``(normalized, norm_to_orig)``: for every UTF-8 byte of the normalized string, the byte
        offset in ``text`` of the input it came from, then one more entry (where the input ends,
        or where the trailing spaces that were removed begin), as sentencepiece's ``Normalize``.

        >>> SentencePieceNormalizer(b"").normalize_with_offsets(" ab")
        ('▁ab', [1, 1, 1, 1, 2, 3])
        """
        self._index.load(set(text))
        space = SPACE_SYMBOL if self.escape_whitespaces else " "
        space_len = len(space.encode("utf-8"))
        out: list[str] = []
        align: list[int] = []
        pos, n, consumed = 0, len(text), 0
        if self.remove_extra_whitespaces:
            while pos < n:
                piece, length = self._prefix(text, pos)
                if piece != " ":
                    break
                consumed += len(text[pos:pos + length].encode("utf-8"))
                pos += length
        if pos >= n:  # (sentencepiece gives no offsets at all for an empty or all-space text)
            return "", []

        def add_space() -> None:
            out.append(space)
            align.extend([consumed] * space_len)

        if not self.treat_whitespace_as_suffix and self.add_dummy_prefix:
            add_space()
        is_prev_space = self.remove_extra_whitespaces
        while pos < n:
            piece, length = self._prefix(text, pos)
            if is_prev_space:
                piece = piece.lstrip(" ")
            if piece:
                for char in piece:
                    if char == " " and self.escape_whitespaces:
                        out.append(SPACE_SYMBOL)
                        align.extend([consumed] * 3)
                    else:
                        out.append(char)
                        align.extend([consumed] * len(char.encode("utf-8")))
                is_prev_space = piece.endswith(" ")
            consumed += len(text[pos:pos + length].encode("utf-8"))
            pos += length
            if not self.remove_extra_whitespaces:
                is_prev_space = False
        if self.remove_extra_whitespaces:
            while out and out[-1] == space:
                out.pop()
                length = len(align) - space_len
                consumed = align[length]  # (sentencepiece: the end is where the removed spaces came from)
                del align[length:]
        if self.treat_whitespace_as_suffix and self.add_dummy_prefix:
            add_space()
        align.append(consumed)
        return "".join(out), align

    def normalize_reference(self, text: str) -> str:
        """sentencepiece's ``Normalizer::Normalize`` loop written out piece by piece (the test oracle)."""
        self._index.load(set(text))
        pos, n = 0, len(text)
        if self.remove_extra_whitespaces:
            while pos < n:
                piece, length = self._prefix(text, pos)
                if piece != " ":
                    break
                pos += length
        if pos >= n:
            return ""
        out: list[str] = []
        space = SPACE_SYMBOL if self.escape_whitespaces else " "
        if not self.treat_whitespace_as_suffix and self.add_dummy_prefix:
            out.append(space)
        is_prev_space = self.remove_extra_whitespaces
        first, user_first, rules = self._first, self._user_first, self.rules
        while pos < n:
            char = text[pos]
            if char in user_first:
                piece, length = self._prefix(text, pos)
            else:
                lengths = first.get(char)
                piece, length = char, 1
                if lengths is not None:
                    for size in lengths:
                        replacement = rules.get(text[pos:pos + size])
                        if replacement is not None:
                            piece, length = replacement, size
                            break
            if is_prev_space:
                piece = piece.lstrip(" ")
            if piece:
                out.append(piece.replace(" ", space) if self.escape_whitespaces else piece)
                is_prev_space = piece.endswith(" ")
            pos += length
            if not self.remove_extra_whitespaces:
                is_prev_space = False
        result = "".join(out)
        if self.remove_extra_whitespaces:
            while result.endswith(space):
                result = result[: -len(space)]
        if self.treat_whitespace_as_suffix and self.add_dummy_prefix:
            result += space
        return result


def _chars_of(text: str) -> set[str]:
    """``set(text)``; a long text by one numpy pass over its code points (3x faster on megabytes; below 2M
    characters only when numpy is loaded already: importing it costs more)."""
    if len(text) < 1 << 16 or (len(text) < 1 << 21 and "numpy" not in sys.modules):
        return set(text)
    import numpy as np

    # (in slices of 256k characters: one 1 MB buffer the allocator reuses, instead of one the size
    # of the text, its pages faulted in fresh: half the time on a 3 MB text)
    chars: set[str] = set()
    for start in range(0, len(text), 1 << 18):
        codes = np.frombuffer(text[start:start + (1 << 18)].encode("utf-32-le", errors="surrogatepass"), dtype="<u4")
        chars.update(map(chr, np.flatnonzero(np.bincount(codes)).tolist()))
    return chars
