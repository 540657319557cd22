"""tokviz.sentencepiece: the BPE trainer's word-level shortcuts (words counted once, characters and
rare characters handled on the distinct words) give sentencepiece's pieces."""

from __future__ import annotations

import io

import pytest

import tokviz.sentencepiece as tsp
from tokviz.sentencepiece.trainer import _replace_rare_in_words, _weighted_char_counts
from tokviz.sentencepiece.trainer_sentences import _char_counts


@pytest.mark.parametrize("numpy", [True, False])
def test_weighted_char_counts_and_rare_replacement_on_words(numpy: bool) -> None:
    assert _weighted_char_counts({"▁ab": 2, "▁b": 1}, numpy) == {"▁": 3, "a": 2, "b": 3}
    assert _weighted_char_counts({"▁ab": 1, "b": 1, "▁": 5}, numpy) == {"▁": 6, "a": 1, "b": 2}
    assert _weighted_char_counts({}, numpy) == {}
    assert _char_counts("abca", numpy) == {"a": 2, "b": 1, "c": 1}
    # two words that become equal add up; untouched words keep their counts
    assert _replace_rare_in_words({"▁aé": 2, "▁aê": 3, "▁b": 1, "▁éé": 1}, "éê") == {"▁a▅": 5, "▁b": 1, "▁▅▅": 1}
    assert _replace_rare_in_words({"▁b": 1}, "é") == {"▁b": 1}
    assert _replace_rare_in_words({}, "é") == {}


def test_bpe_with_rare_characters_matches_sentencepiece() -> None:
    spm = pytest.importorskip("sentencepiece")
    lines = ["the cat sat on the mat", "that hat is flat"] * 60 + ["a cät and a cât", "cäät ĉat"]
    options = {"vocab_size": 32, "model_type": "bpe", "character_coverage": 0.99}
    ours, theirs = io.BytesIO(), io.BytesIO()
    history = tsp.train_sentencepiece(sentence_iterator=iter(lines), model_writer=ours, **options)
    spm.SentencePieceTrainer.train(sentence_iterator=iter(lines), model_writer=theirs, minloglevel=2, **options)
    mine = [p.piece for p in tsp.ModelProto.from_bytes(ours.getvalue()).pieces]
    ref = [p.piece for p in tsp.ModelProto.from_bytes(theirs.getvalue()).pieces]
    assert "ä" not in history.alphabet and "â" not in history.alphabet  # the rare ones became the unknown marker
    assert mine == ref
