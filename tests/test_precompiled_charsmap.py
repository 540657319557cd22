"""The one reader of SentencePiece's precompiled charsmap: header checks, units, replacements."""

import pytest

from tokviz.errors import SerializationError
from tokviz.precompiled_charsmap import PrecompiledCharsmap
from tokviz.sentencepiece.charsmap import compile_charsmap
from tokviz.sentencepiece.normalizer import charsmap_for_rule


def test_units_and_replacements_of_a_compiled_map() -> None:
    blob = compile_charsmap({"a": "xy"})
    charsmap = PrecompiledCharsmap(blob)
    assert len(charsmap.units) * 4 == int.from_bytes(blob[:4], "little") == len(charsmap.raw)
    assert charsmap.replacements == b"xy\0"
    assert charsmap.replacement(0) == b"xy"


def test_the_shipped_nfkc_map_is_read_whole() -> None:
    blob = charsmap_for_rule("nmt_nfkc")
    charsmap = PrecompiledCharsmap(blob)
    assert 4 + len(charsmap.raw) + len(charsmap.replacements) == len(blob)
    assert charsmap.replacements.count(b"\0") > 1000


@pytest.mark.parametrize("blob, message", [
    (b"", "empty or truncated"),
    (b"\x03\0\0\0abcd", "trie size is wrong"),  # not a whole number of units
    (b"\x08\0\0\0abcd", "trie size is wrong"),  # longer than the data
    (b"\0\0\0\0abcd", "trie size is wrong"),  # no trie at all
])
def test_a_bad_header_is_refused_with_a_sentence(blob: bytes, message: str) -> None:
    with pytest.raises(SerializationError, match=message):
        PrecompiledCharsmap(blob)
