"""PreTokenizedString.get_splits(offset_type="byte"): UTF-8 byte offsets of the original text, as HF gives them."""

from __future__ import annotations

import pytest
import tokenizers as hf

import tokviz

TEXTS = ["café au lait", "naïve 日本語 text, 😀 emoji!", "Hello   world", "ça va? très bien", "a\u0301b c"]


@pytest.mark.parametrize("name", ["Whitespace", "WhitespaceSplit", "BertPreTokenizer", "Metaspace", "ByteLevel", "Punctuation", "UnicodeScripts"])
@pytest.mark.parametrize("text", TEXTS)
def test_byte_offsets_of_the_original_match_hf(name: str, text: str) -> None:
    ours, theirs = tokviz.PreTokenizedString(text), hf.PreTokenizedString(text)
    getattr(tokviz.pre_tokenizers, name)().pre_tokenize(ours)
    getattr(hf.pre_tokenizers, name)().pre_tokenize(theirs)
    for offset_type in ("byte", "char"):
        assert [(piece, offsets) for piece, offsets, _ in ours.get_splits("original", offset_type)] == \
            [(piece, offsets) for piece, offsets, _ in theirs.get_splits("original", offset_type)]


def test_byte_offsets_literal_and_a_bad_offset_type() -> None:
    pretok = tokviz.PreTokenizedString("日本 ok")
    tokviz.pre_tokenizers.Whitespace().pre_tokenize(pretok)
    assert [offsets for _, offsets, _ in pretok.get_splits(offset_type="byte")] == [(0, 6), (7, 9)]
    assert [offsets for _, offsets, _ in pretok.get_splits("normalized", "byte")] == [(0, 6), (6, 8)]
    with pytest.raises(tokviz.TokvizError, match="Unknown offset type 'word'"):
        pretok.get_splits(offset_type="word")
