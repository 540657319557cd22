"""tokviz.implementations.byte_level_bpe: ByteLevelBPETokenizer trains and encodes as HF's does."""

from __future__ import annotations

import pytest

from tokviz.implementations import ByteLevelBPETokenizer

hf = pytest.importorskip("tokenizers")

CORPUS = ["The quick brown fox jumps over the lazy dog.", "Hello, world! Héllo wörld 你好", "the the the dog dogs doggo"] * 5
TEXTS = ["The lazy doggo says héllo.", "  two spaces, 你好!", ""]


def _pair(**options):
    ours, theirs = ByteLevelBPETokenizer(**options), hf.ByteLevelBPETokenizer(**options)
    for tokenizer in (ours, theirs):
        tokenizer.train_from_iterator(CORPUS, vocab_size=300, min_frequency=2, show_progress=False, special_tokens=["<s>"])
    return ours, theirs


@pytest.mark.parametrize("options", [{}, {"add_prefix_space": True}, {"lowercase": True, "trim_offsets": True}])
def test_trains_and_encodes_as_hf(options) -> None:
    ours, theirs = _pair(**options)
    assert ours.get_vocab() == theirs.get_vocab()
    for text in TEXTS:
        mine, reference = ours.encode(text), theirs.encode(text)
        assert (mine.ids, mine.tokens, mine.offsets) == (reference.ids, reference.tokens, reference.offsets)
        assert ours.decode(mine.ids) == theirs.decode(reference.ids)


def test_worked_example_and_files(tmp_path) -> None:
    ours, _ = _pair()
    assert ours.encode("the dog").tokens == ["the", "Ġdog"]
    assert ours.get_vocab()["<s>"] == 0
    vocab, merges = ours.save_model(str(tmp_path))
    again = ByteLevelBPETokenizer.from_file(vocab, merges)
    assert again.encode("the doggo").ids == ours.encode("the doggo").ids
