"""tokviz.implementations.sentencepiece_unigram: SentencePieceUnigramTokenizer trains and encodes as HF's does."""

from __future__ import annotations

import pytest

from tokviz.implementations import SentencePieceUnigramTokenizer

hf = pytest.importorskip("tokenizers")

CORPUS = ["the cat sat on the mat", "the dog sat on the log", "cats and dogs and logs"] * 10
TEXTS = ["the cats sat", "a dog on a log", "zebra"]


def test_trains_and_encodes_as_hf() -> None:
    ours, theirs = SentencePieceUnigramTokenizer(), hf.SentencePieceUnigramTokenizer()
    for tokenizer in (ours, theirs):
        tokenizer.train_from_iterator(CORPUS, vocab_size=40, show_progress=False, special_tokens=["<unk>"], unk_token="<unk>")
    assert set(ours.get_vocab()) == set(theirs.get_vocab())
    for text in TEXTS:
        mine, reference = ours.encode(text), theirs.encode(text)
        assert (mine.tokens, mine.offsets) == (reference.tokens, reference.offsets)


def test_worked_example() -> None:
    tokenizer = SentencePieceUnigramTokenizer()
    tokenizer.train_from_iterator(CORPUS, vocab_size=40, show_progress=False, special_tokens=["<unk>"], unk_token="<unk>")
    # what HF's gives: 21 pieces (the corpus cannot fill 40), "▁cat" and "at" kept, "the" not
    assert tokenizer.get_vocab_size() == 21
    assert tokenizer.encode("the cats sat").tokens == ["▁", "t", "h", "e", "▁cat", "s", "▁", "s", "at"]
    assert tokenizer.decode(tokenizer.encode("the cats sat").ids) == "the cats sat"
