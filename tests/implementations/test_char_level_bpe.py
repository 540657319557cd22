"""tokviz.implementations.char_level_bpe: CharBPETokenizer (BPE with ``</w>``) trains and encodes as HF's does."""

from __future__ import annotations

import pytest

from tokviz.implementations import CharBPETokenizer

hf = pytest.importorskip("tokenizers")

CORPUS = ["low lower lowest newer newest wider", "Héllo hello HELLO world"] * 6
TEXTS = ["lowest newer hello", "Wider, héllo!", "unknownz"]


@pytest.mark.parametrize("options", [{}, {"lowercase": True}, {"unk_token": "<unk>", "suffix": "</w>"}])
def test_trains_and_encodes_as_hf(options) -> None:
    ours, theirs = CharBPETokenizer(**options), hf.CharBPETokenizer(**options)
    for tokenizer in (ours, theirs):
        tokenizer.train_from_iterator(CORPUS, vocab_size=60, min_frequency=2, show_progress=False, special_tokens=["<unk>"])
    # the same tokens and merges; HF numbers the </w> forms in its hash map's order (run to run)
    assert set(ours.get_vocab()) == set(theirs.get_vocab())
    for text in TEXTS:
        mine, reference = ours.encode(text), theirs.encode(text)
        assert (mine.tokens, mine.offsets) == (reference.tokens, reference.offsets)
        assert ours.decode(mine.ids) == theirs.decode(reference.ids)


def test_worked_example() -> None:
    tokenizer = CharBPETokenizer()
    tokenizer.train_from_iterator(["low low low lower"], vocab_size=12, min_frequency=1, show_progress=False)
    assert tokenizer.get_vocab_size() == 12
    assert tokenizer.encode("low lower").tokens == ["low</w>", "lo", "wer</w>"]  # as HF's
    assert tokenizer.decode(tokenizer.encode("low lower").ids) == "low lower"
