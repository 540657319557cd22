"""tokviz.models.merges: the merge engine BPE and WordPiece training share, on worked examples."""

from __future__ import annotations

import tokviz.models.bpe.parity_trainer as parity_trainer
import tokviz.models.bpe.trainer as bpe_trainer
import tokviz.models.wordpiece.trainer as wordpiece_trainer
from tokviz.models import merges
from tokviz.models.merges import PAIR_SHIFT, PairCounts, Symbols, count_pairs
from tokviz.trainers import BpeTrainer, WordPieceTrainer


def test_pairs_are_counted_by_word_weight() -> None:
    # "hug" x10, "pug" x5, "hugs" x5 with ids h=0 u=1 g=2 p=3 s=4
    pair_counts, where = count_pairs([[0, 1, 2], [3, 1, 2], [0, 1, 2, 4]], [10, 5, 5])
    decoded = {divmod(code, PAIR_SHIFT): count for code, count in pair_counts.items()}
    assert decoded == {(0, 1): 15, (1, 2): 20, (3, 1): 5, (2, 4): 5}
    assert where[1 * PAIR_SHIFT + 2] == {0, 1, 2}


def test_a_merge_replaces_every_occurrence_left_to_right_and_patches_the_counts() -> None:
    corpus = PairCounts([[1, 1, 1, 2], [1, 2, 3]], [2, 5], token_len=[1] * 10, max_token_length=None)
    lowered: set[int] = set()
    merged, created = corpus.merge(1 * PAIR_SHIFT + 1, 9, lowered)
    assert (merged, corpus.words) == (2, [[9, 1, 2], [1, 2, 3]])
    assert {divmod(code, PAIR_SHIFT) for code in created} == {(9, 1)}
    assert {divmod(code, PAIR_SHIFT) for code in lowered} == {(1, 1)}
    counts = {divmod(code, PAIR_SHIFT): count for code, count in corpus.pair_counts.items() if count}
    assert counts == {(1, 1): 2, (1, 2): 7, (2, 3): 5, (9, 1): 2}  # the merged pair's own count is left alone, as in HF
    assert corpus.where[9 * PAIR_SHIFT + 1] == {0}


def test_max_token_length_stops_a_pair_being_counted_as_hf_does() -> None:
    corpus = PairCounts([[0, 1, 2]], [3], token_len=[1, 1, 1, 2], max_token_length=3)
    merged, created = corpus.merge(0 * PAIR_SHIFT + 1, 3)  # "ab" + "c" would have 3 characters
    assert (merged, created, corpus.words) == (3, set(), [[3, 2]])
    assert corpus.pair_counts.get(3 * PAIR_SHIFT + 2) is None


def test_bpe_and_wordpiece_train_with_the_same_engine_and_options() -> None:
    for name in ("merge_loop", "count_queue", "compute_alphabet", "records_to_steps", "MergeTrainerOptions"):
        engine_part = getattr(merges, name)
        assert getattr(bpe_trainer, name) is engine_part
        assert getattr(wordpiece_trainer, name) is engine_part
    assert issubclass(BpeTrainer, merges.MergeTrainerOptions) and issubclass(WordPieceTrainer, merges.MergeTrainerOptions)
    # the scores that are not counts plug into the same loop as queues
    assert issubclass(wordpiece_trainer.LikelihoodQueue, merges.MergeQueue)
    assert issubclass(parity_trainer.LargerPairQueue, merges.MergeQueue)
    assert parity_trainer.PairCounts is merges.PairCounts and parity_trainer.Symbols is merges.Symbols


def test_the_hf_course_corpus_merges_as_the_course_shows() -> None:
    from tokviz import Tokenizer, models, pre_tokenizers

    corpus = ["hug " * 10, "pug " * 5, "pun " * 12, "bun " * 4, "hugs " * 5]
    tok = Tokenizer(models.BPE())
    tok.pre_tokenizer = pre_tokenizers.Whitespace()
    tok.train_from_iterator(corpus, BpeTrainer(vocab_size=10, show_progress=False))
    history = tok.training_history
    assert [(step.left, step.right) for step in history.merges] == [("u", "g"), ("u", "n"), ("h", "ug")]


def test_symbols_grow_with_their_lengths() -> None:
    symbols = Symbols.start(["h", "u", "g"])
    symbols.add("ug", 2)
    assert (symbols.id_to_token, symbols.token_to_id["ug"], symbols.token_len) == (["h", "u", "g", "ug"], 3, [1, 1, 1, 2])
