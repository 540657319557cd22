"""``sentencepiece_model_pb2`` as the ``sentencepiece`` package ships it: an editable ``ModelProto``.

    >>> from tokviz.sentencepiece import sentencepiece_model_pb2 as model_pb2
    >>> m = model_pb2.ModelProto()
    >>> p = m.pieces.add(piece="<unk>", score=0.0, type=model_pb2.ModelProto.SentencePiece.UNKNOWN)
    >>> m.trainer_spec.model_type = model_pb2.TrainerSpec.BPE
    >>> model_pb2.ModelProto.FromString(m.SerializeToString()).pieces[0].piece
    '<unk>'

The field names, numbers and defaults are those of sentencepiece's ``sentencepiece_model.proto``
(the scalar schemas are :mod:`tokviz.sentencepiece.model_proto`'s, the one place that lists them);
see :mod:`tokviz.sentencepiece.messages` for the message API and why it is not ``protobuf``.
"""

from __future__ import annotations

from tokviz.sentencepiece import model_proto as _schema
from tokviz.sentencepiece.messages import DecodeError, EnumType, Message

__all__ = ["ModelProto", "TrainerSpec", "NormalizerSpec", "SelfTestData", "DecodeError"]

_MODEL_TYPES = {t.name: int(t) for t in _schema.ModelType}
_PIECE_TYPES = {t.name: int(t) for t in _schema.PieceType}


class TrainerSpec(Message):
    FIELDS = dict(_schema.TrainerSpec.SCHEMA)
    ModelType = EnumType(_MODEL_TYPES)
    _ENUMS = {"model_type": ModelType}
    locals().update(_MODEL_TYPES)


class NormalizerSpec(Message):
    FIELDS = dict(_schema.NormalizerSpec.SCHEMA)


class SelfTestData(Message):
    class Sample(Message):
        FIELDS = {"input": (1, "string", False, ""), "expected": (2, "string", False, "")}

    FIELDS = {"samples": (1, Sample, True, ())}


class ModelProto(Message):
    class SentencePiece(Message):
        FIELDS = {"piece": (1, "string", False, ""), "score": (2, "float", False, 0.0),
                  "type": (3, "enum", False, int(_schema.PieceType.NORMAL))}
        Type = EnumType(_PIECE_TYPES)
        _ENUMS = {"type": Type}
        locals().update(_PIECE_TYPES)

    FIELDS = {
        "pieces": (1, SentencePiece, True, ()),
        "trainer_spec": (2, TrainerSpec, False, None),
        "normalizer_spec": (3, NormalizerSpec, False, None),
        "self_test_data": (4, SelfTestData, False, None),
        "denormalizer_spec": (5, NormalizerSpec, False, None),
    }
