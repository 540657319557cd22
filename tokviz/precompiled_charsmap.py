"""The one reader of SentencePiece's ``precompiled_charsmap`` (the table a ``.model`` and HF's
``Precompiled`` normalizer carry): HF's reading (:mod:`tokviz.normalizers`) and sentencepiece's
(:mod:`tokviz.sentencepiece.normalizer`) both parse it here. It imports nothing heavy, so the
SentencePiece processor loads without the pipeline modules.
"""

from __future__ import annotations

import sys
from array import array

from tokviz.errors import SerializationError

__all__ = ["PrecompiledCharsmap"]


class PrecompiledCharsmap:
    """A Darts double-array trie over UTF-8 bytes whose leaves point into a blob of
    NUL-terminated replacement strings.

    Layout: ``[trie size in bytes: u32 LE][trie units: u32 LE ...][replacements]``; the header is
    checked here, once.

    >>> charsmap = PrecompiledCharsmap((4).to_bytes(4, "little") + bytes(4) + b"x\\0")
    >>> (list(charsmap.units), charsmap.replacement(0))
    ([0], b'x')
    """

    __slots__ = ("raw", "units", "replacements")

    def __init__(self, data: bytes, what: str = "The precompiled charsmap") -> None:
        if len(data) < 4:
            raise SerializationError(f"{what} is empty or truncated.")
        trie_bytes = int.from_bytes(data[:4], "little")
        if trie_bytes % 4 or 4 + trie_bytes > len(data) or trie_bytes == 0:
            raise SerializationError(f"{what} is not a SentencePiece charsmap (its trie size is wrong).")
        #: The trie's bytes, and its units (one C-level copy; the file is little-endian).
        self.raw = data[4 : 4 + trie_bytes]
        self.units = array("I", self.raw)
        if sys.byteorder == "big":
            self.units.byteswap()
        self.replacements = data[4 + trie_bytes :]

    def replacement(self, value: int) -> bytes:
        """The NUL-terminated replacement a leaf's ``value`` points at."""
        end = self.replacements.find(b"\0", value)
        return self.replacements[value:] if end == -1 else self.replacements[value:end]
