"""tokviz.sentencepiece.trainer_unigram: sentencepiece's unigram trainer -- the course's corpus worked
through, and the pieces sentencepiece trains on real text."""

from __future__ import annotations

import io

import pytest

from tokviz.sentencepiece.pieces import PieceRules
from tokviz.sentencepiece.trainer_unigram import train_unigram

# the HF course's corpus as sentencepiece cuts it: words with "▁" in front, and the character after each
CONTEXTS = {("▁hug", "▁"): 10, ("▁pug", "▁"): 5, ("▁hugs", "▁"): 5, ("▁pun", "▁"): 12, ("▁bun", "▁"): 4}


def _required() -> dict[str, int]:
    required: dict[str, int] = {}
    for (word, _), count in CONTEXTS.items():
        for char in word:
            required[char] = required.get(char, 0) + count
    return required


def test_the_course_corpus() -> None:
    result = train_unigram(CONTEXTS, _required(), 14, 3, PieceRules())
    assert [piece for piece, _ in result.pieces] == ["▁pu", "n", "▁hug", "g", "s", "▁", "h", "u", "b", "p"]
    assert [round(score, 4) for _, score in result.pieces][:3] == [-1.4409, -1.5003, -1.5705]
    assert result.stop_reason == "the corpus supports only 13 pieces (target 14)"
    assert (len(result.em_steps), len(result.prune_rounds)) == (2, 1)
    # every required character stays a piece, whatever its score
    assert set(_required()) <= {piece for piece, _ in result.pieces}
    # without a history (SentencePieceTrainer.train): the same pieces, no records
    bare = train_unigram(CONTEXTS, _required(), 14, 3, PieceRules(), history=False)
    assert (bare.pieces, bare.stop_reason) == (result.pieces, result.stop_reason)
    assert (bare.em_steps, bare.prune_rounds, bare.snapshots) == ((), (), ())


def test_pieces_and_scores_as_sentencepiece_trains_them(read_shared_corpus) -> None:
    spm = pytest.importorskip("sentencepiece")
    from tokviz.sentencepiece import train_sentencepiece

    lines = [line for line in read_shared_corpus("grimm_tales.txt").splitlines() if line.strip()][:400]
    ours = train_sentencepiece(sentence_iterator=iter(lines), vocab_size=300, model_type="unigram")
    model = io.BytesIO()
    spm.SentencePieceTrainer.train(sentence_iterator=iter(lines), model_writer=model, vocab_size=300, model_type="unigram", minloglevel=2)
    processor = spm.SentencePieceProcessor(model_proto=model.getvalue())
    theirs = {processor.id_to_piece(i): processor.get_score(i) for i in range(processor.get_piece_size())}
    mine = {piece.piece: piece.score for piece in ours.proto.pieces}
    # the same pieces; pieces whose scores differ in the last float digits may swap places
    assert mine.keys() == theirs.keys()
    assert max(abs(mine[piece] - theirs[piece]) for piece in mine) < 1e-4


def test_words_are_cut_where_no_piece_can_cross() -> None:
    from tokviz.sentencepiece.trainer_unigram import located_chunks

    rules = PieceRules()
    assert located_chunks("▁hello,", rules) == [("▁hello", 0), (",", 6)]
    assert located_chunks("▁it's", rules) == [("▁it", 0), ("'", 3), ("s", 4)]
    assert located_chunks("▁1990s", rules) == [("▁1990", 0), ("s", 5)]
    assert located_chunks("▁naïve▅x", rules) == [("▁naïve", 0), ("x", 7)]  # (the unknown marker is no piece's)
    # a run of ASCII letters cuts the same whatever its length (found once per shape)
    assert located_chunks("▁abcdefghijklmnopqrstuvwxyz--", rules) == [("▁abcdefghijklmnopqrstuvwxyz", 0), ("--", 27)]


def test_runs_of_whitespace_overlap_the_word_after_them() -> None:
    from tokviz.sentencepiece.trainer_unigram import located_chunks

    rules = PieceRules(allow_whitespace_only_pieces=True)
    # "▁▁▁" is a piece and so is "▁hello" (its last "▁"); "▁▁h..." is none
    assert located_chunks("▁▁▁hello", rules) == [("▁▁▁", 0), ("hello", 3), ("▁▁▁", 0), ("▁hello", 2)]


def test_stable_order_is_numpys_stable_argsort() -> None:
    """The seeds' k-grams are numbered by a 16-bit-at-a-time sort: numpy's stable argsort, ties in place."""
    np = pytest.importorskip("numpy")
    from tokviz.sentencepiece.trainer_unigram import _stable_order

    assert _stable_order(np.array([3, 1, 3, 0, 1, 2**40, 2**17 + 1, 1])).tolist() == [3, 1, 4, 7, 0, 2, 6, 5]
    rng = np.random.default_rng(5)
    for top in (2, 2**16, 2**20, 2**35):
        for size in (0, 1, 500):
            keys = rng.integers(0, top, size)
            assert np.array_equal(_stable_order(keys), np.argsort(keys, kind="stable"))
