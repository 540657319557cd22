"""tokviz.implementations.sentencepiece_bpe: SentencePieceBPETokenizer (Metaspace + BPE) trains and encodes as HF's does."""

from __future__ import annotations

import pytest

from tokviz.implementations import SentencePieceBPETokenizer

hf = pytest.importorskip("tokenizers")

CORPUS = ["▁ is the marker of a space", "newer newest lower lowest", "Héllo wörld"] * 5
TEXTS = ["the newest space", " leading and  double", "wörld?"]


@pytest.mark.parametrize("options", [{}, {"add_prefix_space": False}, {"replacement": "_"}])
def test_trains_and_encodes_as_hf(options) -> None:
    ours, theirs = SentencePieceBPETokenizer(**options), hf.SentencePieceBPETokenizer(**options)
    for tokenizer in (ours, theirs):
        tokenizer.train_from_iterator(CORPUS, vocab_size=70, min_frequency=2, show_progress=False)
    assert ours.get_vocab() == theirs.get_vocab()
    for text in TEXTS:
        mine, reference = ours.encode(text), theirs.encode(text)
        assert (mine.ids, mine.tokens, mine.offsets) == (reference.ids, reference.tokens, reference.offsets)
        assert ours.decode(mine.ids) == theirs.decode(reference.ids)


def test_worked_example() -> None:
    tokenizer = SentencePieceBPETokenizer()
    tokenizer.train_from_iterator(["low low low"], vocab_size=10, min_frequency=1, show_progress=False)
    assert tokenizer.encode("low").tokens == ["▁low"]
    assert tokenizer.get_vocab()["<unk>"] == 0
