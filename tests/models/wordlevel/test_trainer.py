"""WordLevelTrainer: HF's own test case, HF parity, history and model_at."""

from __future__ import annotations

import dataclasses

import pytest
from tokenizers import Tokenizer as HfTokenizer
from tokenizers import models as hf_models
from tokenizers import pre_tokenizers as hf_pre_tokenizers
from tokenizers import trainers as hf_trainers

from tokviz import pre_tokenizers, trainers
from tokviz.errors import EmptyCorpusError, VocabSizeError
from tokviz.models.wordlevel.trainer import WordLevelTrainer
from tokviz.word_counts import count_words

ROSES = {"the": 25, "roses": 22, "are": 24, "red": 12, "voilets": 10, "blue": 16}  # HF's unit test


def test_hf_unit_test_case():
    history = WordLevelTrainer(vocab_size=5, show_progress=False).train_from_word_counts(ROSES)
    assert history.vocab_at() == {"the": 0, "are": 1, "roses": 2, "blue": 3, "red": 4}
    assert history.kept == (("the", 25), ("are", 24), ("roses", 22), ("blue", 16), ("red", 12))
    assert history.dropped == 1
    assert history.stop_reason == "reached the target vocab size of 5"
    with_min = WordLevelTrainer(vocab_size=5, min_frequency=15, show_progress=False).train_from_word_counts(ROSES)
    assert with_min.vocab == ("the", "are", "roses", "blue")
    assert "min_frequency=15 occurrences (2 below)" in with_min.stop_reason


def test_ties_sorted_by_word_and_specials_first():
    history = trainers.WordLevelTrainer(vocab_size=4, special_tokens=["[UNK]"]).train_from_word_counts(
        {"b": 2, "c": 2, "a": 2, "z": 9}
    )
    assert history.vocab == ("[UNK]", "z", "a", "b")
    assert history.model_at(2).get_vocab() == {"[UNK]": 0, "z": 1}
    assert history.min_vocab_size == 1 and history.max_vocab_size == 4


def test_matches_hf_on_shared_lines(shared_corpus_lines):
    tokenizer = HfTokenizer(hf_models.WordLevel(unk_token="[UNK]"))
    tokenizer.pre_tokenizer = hf_pre_tokenizers.Whitespace()
    tokenizer.train_from_iterator(
        shared_corpus_lines, hf_trainers.WordLevelTrainer(vocab_size=800, min_frequency=2, special_tokens=["[UNK]"])
    )
    history = WordLevelTrainer(vocab_size=800, min_frequency=2, special_tokens=["[UNK]"]).train_from_word_counts(
        count_words(shared_corpus_lines, pre_tokenizer=pre_tokenizers.Whitespace())
    )
    assert history.vocab_at() == tokenizer.get_vocab()


def test_history_frame_and_immutability():
    history = WordLevelTrainer(vocab_size=3, special_tokens=["<unk>"]).train_from_word_counts(ROSES)
    frame = history.to_frame()
    assert frame.to_dict("list") == {"rank": [0, 1], "token": ["the", "are"], "count": [25, 24], "vocab_size": [2, 3]}
    with pytest.raises(dataclasses.FrozenInstanceError):
        history.kept = ()  # type: ignore[misc]
    assert [token.value for token in history.model.tokenize("the")] == ["the"]
    assert history.word_counts.unique_words == 6


def test_special_token_in_the_corpus_is_not_doubled():
    history = WordLevelTrainer(vocab_size=10, special_tokens=["the"]).train_from_word_counts(ROSES)
    assert history.vocab == ("the", "are", "roses", "blue", "red", "voilets")


def test_bad_input():
    with pytest.raises(EmptyCorpusError):
        WordLevelTrainer().train_from_word_counts({})
    with pytest.raises(VocabSizeError):
        WordLevelTrainer(vocab_size=-3)
    history = WordLevelTrainer(vocab_size=1, special_tokens=["[UNK]"]).train_from_word_counts(ROSES)
    assert history.vocab == ("[UNK]",)
    assert "no word was kept" in history.stop_reason
    everything = WordLevelTrainer(vocab_size=100).train_from_word_counts(ROSES)
    assert everything.stop_reason == "kept every word (6): the corpus has no more; vocab size 6, below the target of 100"


def test_for_model_keeps_the_users_unk_token():
    from tokviz import models

    history = WordLevelTrainer(vocab_size=10, special_tokens=["[UNK]"]).train_from_word_counts(ROSES)
    kept = history.for_model(models.WordLevel(unk_token="[UNK]"))
    assert [token.value for token in kept.model.tokenize("tulips")] == ["[UNK]"]
    assert kept.model_at(3).unk_token == "[UNK]"
    assert history.model.unk_token == "<unk>"  # the original history is unchanged
