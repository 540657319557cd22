"""tokviz.byte_level: GPT-2's byte <-> printable-char table, against HF's ByteLevel alphabet."""

from __future__ import annotations

import pytest

from tokviz.byte_level import BYTES_TO_UNICODE, bytes_to_symbols, symbols_to_bytes, text_to_symbols


def test_worked_examples() -> None:
    assert text_to_symbols("Hi there\n") == "HiĠthereĊ"
    assert bytes_to_symbols("é".encode()) == "Ã©"
    assert symbols_to_bytes("HiĠthere") == b"Hi there"


def test_the_table_is_a_bijection_on_the_256_bytes_and_matches_hf() -> None:
    assert len(BYTES_TO_UNICODE) == 256 and len(set(BYTES_TO_UNICODE.values())) == 256
    tokenizers = pytest.importorskip("tokenizers")
    assert set(BYTES_TO_UNICODE.values()) == set(tokenizers.pre_tokenizers.ByteLevel.alphabet())
