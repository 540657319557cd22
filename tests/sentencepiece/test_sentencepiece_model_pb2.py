"""tokviz.sentencepiece.sentencepiece_model_pb2: the editable ModelProto, byte for byte as sentencepiece's own
``sentencepiece_model_pb2`` (protobuf) writes and reads it."""

from __future__ import annotations

import io

import pytest

from tokviz.sentencepiece import sentencepiece_model_pb2 as ours

spm = pytest.importorskip("sentencepiece")
from sentencepiece import sentencepiece_model_pb2 as theirs  # noqa: E402


def _trained() -> bytes:
    model = io.BytesIO()
    spm.SentencePieceTrainer.train(sentence_iterator=iter(["hello world", "hello there", "a world of words"] * 20),
                                   model_writer=model, vocab_size=24, model_type="bpe", minloglevel=2)
    return model.getvalue()


def test_reads_and_writes_a_trained_model_as_protobuf_does() -> None:
    data = _trained()
    mine, reference = ours.ModelProto.FromString(data), theirs.ModelProto.FromString(data)
    assert [(p.piece, p.score, p.type) for p in mine.pieces] == [(p.piece, p.score, p.type) for p in reference.pieces]
    assert (mine.trainer_spec.vocab_size, mine.trainer_spec.model_type) == (24, ours.TrainerSpec.BPE) == (reference.trainer_spec.vocab_size, reference.trainer_spec.model_type)
    assert mine.normalizer_spec.name == reference.normalizer_spec.name == "nmt_nfkc"
    assert mine.SerializeToString() == data  # nothing lost or reordered


def test_an_edit_reads_back_in_protobuf() -> None:
    model = ours.ModelProto.FromString(_trained())
    model.pieces.add(piece="▁tokviz", score=-3.5, type=ours.ModelProto.SentencePiece.USER_DEFINED)
    model.trainer_spec.vocab_size = 25
    model.normalizer_spec.add_dummy_prefix = False
    reference = theirs.ModelProto.FromString(model.SerializeToString())
    last = reference.pieces[-1]
    assert (last.piece, last.score, last.type) == ("▁tokviz", -3.5, theirs.ModelProto.SentencePiece.USER_DEFINED)
    assert (reference.trainer_spec.vocab_size, reference.normalizer_spec.add_dummy_prefix) == (25, False)
    processor = spm.SentencePieceProcessor(model_proto=model.SerializeToString())
    assert processor.piece_to_id("▁tokviz") == 24


def test_names_and_defaults_are_sentencepieces() -> None:
    spec, reference = ours.TrainerSpec(), theirs.TrainerSpec()
    for name in ("vocab_size", "character_coverage", "max_sentencepiece_length", "unk_piece", "bos_id", "byte_fallback", "split_digits"):
        assert getattr(spec, name) == getattr(reference, name), name
    assert (ours.TrainerSpec.UNIGRAM, ours.TrainerSpec.BPE, ours.TrainerSpec.WORD, ours.TrainerSpec.CHAR) == (1, 2, 3, 4)
