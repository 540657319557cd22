"""tokviz.sentencepiece.sentencepiece_pb2: the result messages of an encode, as sentencepiece's
``sentencepiece_pb2`` reads and writes them."""

from __future__ import annotations

import io

import pytest

from tokviz.sentencepiece import sentencepiece_pb2 as ours

spm = pytest.importorskip("sentencepiece")
from sentencepiece import sentencepiece_pb2 as theirs  # noqa: E402


def test_a_worked_message_round_trips_and_matches_protobuf() -> None:
    text = ours.SentencePieceText(text="ab")
    text.pieces.add(piece="▁ab", id=5, surface="ab", begin=0, end=2)
    data = text.SerializeToString()
    assert ours.SentencePieceText.FromString(data) == text
    reference = theirs.SentencePieceText.FromString(data)
    assert (reference.text, reference.pieces[0].piece, reference.pieces[0].id, reference.pieces[0].end) == ("ab", "▁ab", 5, 2)
    assert data == reference.SerializeToString()


def test_reads_what_sentencepiece_returns_for_an_encode() -> None:
    model = io.BytesIO()
    spm.SentencePieceTrainer.train(sentence_iterator=iter(["hello world", "hello there"] * 20), model_writer=model,
                                   vocab_size=12, model_type="unigram", minloglevel=2)
    processor = spm.SentencePieceProcessor(model_proto=model.getvalue())
    serialized = processor.encode_as_proto("hello wörld").SerializeToString()
    mine, reference = ours.SentencePieceText.FromString(serialized), theirs.SentencePieceText.FromString(serialized)
    assert mine.text == reference.text == "hello wörld"
    assert [(p.piece, p.id, p.surface, p.begin, p.end) for p in mine.pieces] == [(p.piece, p.id, p.surface, p.begin, p.end) for p in reference.pieces]
    nbest = processor.nbest_encode_as_proto("hello", 2).SerializeToString()
    mine_best, their_best = ours.NBestSentencePieceText.FromString(nbest), theirs.NBestSentencePieceText.FromString(nbest)
    assert [[p.piece for p in text.pieces] for text in mine_best.nbests] == [[p.piece for p in text.pieces] for text in their_best.nbests]
    assert [round(text.score, 4) for text in mine_best.nbests] == [round(text.score, 4) for text in their_best.nbests]
