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

Charsmap data: ``data/<rule>.charsmap.xz`` are the precompiled charsmaps that sentencepiece
0.2.3 embeds for each named rule (see ``data/README.md``). This version does not compile a
charsmap from a rule TSV; it reads any charsmap found in a ``.model``.
"""

from __future__ import annotations

import lzma
import struct
from functools import lru_cache
from pathlib import Path
from typing import Iterable

from tokviz.errors import SerializationError

__all__ = ["RULE_NAMES", "charsmap_for_rule", "parse_charsmap", "SentencePieceNormalizer"]

#: The rule names sentencepiece accepts for ``normalization_rule_name``.
RULE_NAMES = ("nmt_nfkc", "nfkc", "nmt_nfkc_cf", "nfkc_cf", "identity")

SPACE_SYMBOL = "\u2581"


@lru_cache(maxsize=None)
def charsmap_for_rule(name: str) -> bytes:
    """The precompiled charsmap sentencepiece uses for a named rule (``b""`` for identity)."""
    if name not in RULE_NAMES:
        raise ValueError(f"Unknown normalization rule {name!r}; choose one of {', '.join(RULE_NAMES)}.")
    if name == "identity":
        return b""
    blob = (Path(__file__).parent / "data" / f"{name}.charsmap.xz").read_bytes()
    return lzma.decompress(blob)


def _units(trie: bytes) -> list[int]:
    return list(struct.unpack(f"<{len(trie) // 4}I", trie))


def _offset(unit: int) -> int:
    return (unit >> 10) << ((unit & (1 << 9)) >> 6)


@lru_cache(maxsize=16)
def parse_charsmap(charsmap: bytes) -> dict[str, str]:
    """Every rule of a precompiled charsmap as ``{source: replacement}`` (walks the whole trie).

    >>> parse_charsmap(charsmap_for_rule("nmt_nfkc"))["Ａ"]
    'A'
    """
    if not charsmap:
        return {}
    if len(charsmap) < 4:
        raise SerializationError("The precompiled charsmap is truncated.")
    (trie_size,) = struct.unpack("<I", charsmap[:4])
    if trie_size % 4 or 4 + trie_size > len(charsmap):
        raise SerializationError("The precompiled charsmap is truncated.")
    units = _units(charsmap[4:4 + trie_size])
    normalized = charsmap[4 + trie_size:]
    rules: dict[str, str] = {}
    # Every non-leaf unit at ``pos`` with label ``c`` is the child ``c`` of the node whose base
    # is ``pos ^ c``: group them by base once instead of probing 255 labels per node.
    children: dict[int, list[tuple[int, int]]] = {}
    for pos, unit in enumerate(units):
        label = unit & ((1 << 31) | 0xFF)
        if 0 < label < 256:
            children.setdefault(pos ^ label, []).append((label, pos))
    stack: list[tuple[int, bytes]] = [(_offset(units[0]), b"")]
    while stack:
        base, key = stack.pop()
        for label, pos in children.get(base, ()):
            unit = units[pos]
            child_base = pos ^ _offset(unit)
            child_key = key + bytes((label,))
            if unit & (1 << 8):  # has a leaf: the value sits at the child base
                value = units[child_base] & 0x7FFFFFFF
                end = normalized.find(b"\0", value)
                target = normalized[value:end if end >= 0 else len(normalized)]
                try:
                    rules[child_key.decode("utf-8")] = target.decode("utf-8")
                except UnicodeDecodeError:
                    pass  # keys that are not whole characters never match a str
            stack.append((child_base, child_key))
    return rules


class SentencePieceNormalizer:
    """Normalize text the way a SentencePiece model does (see the module docstring)."""

    __slots__ = ("rules", "add_dummy_prefix", "remove_extra_whitespaces", "escape_whitespaces",
                 "treat_whitespace_as_suffix", "user_defined_symbols", "_first", "_max_len", "_user_first")

    def __init__(self, charsmap: bytes = b"", *, add_dummy_prefix: bool = True, remove_extra_whitespaces: bool = True,
                 escape_whitespaces: bool = True, treat_whitespace_as_suffix: bool = False,
                 user_defined_symbols: Iterable[str] = ()) -> None:
        self.rules = parse_charsmap(bytes(charsmap))
        self.add_dummy_prefix = add_dummy_prefix
        self.remove_extra_whitespaces = remove_extra_whitespaces
        self.escape_whitespaces = escape_whitespaces
        self.treat_whitespace_as_suffix = treat_whitespace_as_suffix
        self.user_defined_symbols = tuple(s for s in user_defined_symbols if s)
        # first character -> the lengths of the keys starting with it, longest first
        lengths: dict[str, set[int]] = {}
        for key in self.rules:
            lengths.setdefault(key[0], set()).add(len(key))
        self._first: dict[str, tuple[int, ...]] = {c: tuple(sorted(ls, reverse=True)) for c, ls in lengths.items()}
        self._user_first: dict[str, list[str]] = {}
        for sym in sorted(set(self.user_defined_symbols), key=len, reverse=True):
            self._user_first.setdefault(sym[0], []).append(sym)

    @classmethod
    def from_rule(cls, name: str, **options: object) -> "SentencePieceNormalizer":
        return cls(charsmap_for_rule(name), **options)  # type: ignore[arg-type]

    def _prefix(self, text: str, pos: int) -> tuple[str, int]:
        """``(replacement, consumed length)`` of the longest rule or user symbol at ``pos``."""
        char = text[pos]
        for sym in self._user_first.get(char, ()):
            if text.startswith(sym, pos):
                return sym, len(sym)
        rules = self.rules
        for length in self._first.get(char, ()):
            replacement = rules.get(text[pos:pos + length])
            if replacement is not None:
                return replacement, length
        return char, 1

    def normalize(self, text: str) -> str:
        """The normalized string sentencepiece encodes (``▁`` for spaces when escaping)."""
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
