"""sentencepiece_model_pb2 / sentencepiece_pb2 as user code and transformers' converters use them, byte for byte
against the protobuf messages the sentencepiece package ships."""

from __future__ import annotations

import copy
import io
import pickle

import pytest

spm = pytest.importorskip("sentencepiece")
real_model_pb2 = pytest.importorskip("sentencepiece.sentencepiece_model_pb2")

import tokviz.sentencepiece as tsp  # noqa: E402
from tokviz.sentencepiece import sentencepiece_model_pb2 as model_pb2  # noqa: E402
from tokviz.sentencepiece.messages import DecodeError  # noqa: E402

HUG = ["hug pug hugs", "hug the pug", "the hugs", "pugs hug bugs"] * 20


@pytest.fixture(scope="module")
def blob() -> bytes:
    out = io.BytesIO()
    spm.SentencePieceTrainer.train(sentence_iterator=iter(HUG), model_writer=out, vocab_size=30, model_type="unigram", hard_vocab_limit=False,
                                   byte_fallback=False, minloglevel=2)
    return out.getvalue()


def _edit(m, pb2) -> None:
    """The edits transformers' converters and user scripts make."""
    m.normalizer_spec.add_dummy_prefix = False
    m.normalizer_spec.remove_extra_whitespaces = False
    m.trainer_spec.model_type = pb2.TrainerSpec.BPE
    new = m.pieces.add()
    new.piece, new.score, new.type = "<new>", 0.0, pb2.ModelProto.SentencePiece.USER_DEFINED
    m.pieces[3].score = -1.5
    del m.pieces[5]
    m.trainer_spec.ClearField("vocab_size")
    m.trainer_spec.user_defined_symbols.append("<new>")


def test_round_trip_and_edits_give_protobufs_bytes(blob: bytes) -> None:
    ours, theirs = model_pb2.ModelProto(), real_model_pb2.ModelProto()
    ours.ParseFromString(blob)
    theirs.ParseFromString(blob)
    assert ours.SerializeToString() == blob == theirs.SerializeToString()
    assert [(p.piece, p.score, p.type) for p in ours.pieces] == [(p.piece, p.score, p.type) for p in theirs.pieces]
    assert ours.trainer_spec.vocab_size == len(ours.pieces) and ours.HasField("normalizer_spec") and not ours.HasField("denormalizer_spec")
    _edit(ours, model_pb2)
    _edit(theirs, real_model_pb2)
    assert ours.SerializeToString() == theirs.SerializeToString()
    edited = ours.SerializeToString()
    sp = tsp.SentencePieceProcessor(model_proto=edited)  # loads in both processors
    ref = spm.SentencePieceProcessor(model_proto=edited)
    assert sp.encode("hug <new> pugs", out_type=str) == ref.encode("hug <new> pugs", out_type=str)


def test_message_api(blob: bytes) -> None:
    m = model_pb2.ModelProto.FromString(blob)
    assert model_pb2.TrainerSpec.ModelType.Name(2) == "BPE" and model_pb2.TrainerSpec.ModelType.Value("UNIGRAM") == 1
    assert m.pieces[0].type == model_pb2.ModelProto.SentencePiece.Type.UNKNOWN
    clone = copy.deepcopy(m)
    assert clone == m and pickle.loads(pickle.dumps(m)) == m
    clone.pieces[1].piece = "changed"
    assert clone != m
    other = model_pb2.ModelProto()
    other.CopyFrom(m)
    assert other == m
    with pytest.raises(AttributeError):
        m.pieces = []
    with pytest.raises(TypeError):
        m.trainer_spec.vocab_size = "big"
    with pytest.raises(DecodeError):
        model_pb2.ModelProto.FromString(b"\x0a\xff\xff")
    assert "trainer_spec {" in str(m)


def test_result_messages_match_protobufs() -> None:
    real_pb2 = pytest.importorskip("sentencepiece.sentencepiece_pb2")
    from tokviz.sentencepiece import sentencepiece_pb2

    for pb2 in (sentencepiece_pb2, real_pb2):
        t = pb2.SentencePieceText(text="ab")
        t.pieces.add(piece="▁ab", id=5, surface="ab", begin=0, end=2)
        t.score = -1.25
    ours = sentencepiece_pb2.SentencePieceText(text="ab", score=-1.25)
    ours.pieces.add(piece="▁ab", id=5, surface="ab", begin=0, end=2)
    theirs = real_pb2.SentencePieceText(text="ab", score=-1.25)
    theirs.pieces.add(piece="▁ab", id=5, surface="ab", begin=0, end=2)
    assert ours.SerializeToString() == theirs.SerializeToString()
    nbest = sentencepiece_pb2.NBestSentencePieceText()
    nbest.nbests.append(ours)
    assert sentencepiece_pb2.NBestSentencePieceText.FromString(nbest.SerializeToString()).nbests[0].pieces[0].surface == "ab"
