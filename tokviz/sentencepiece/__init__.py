"""SentencePiece in tokviz: train from raw sentences, read / write ``.model``, encode like ``sentencepiece``.

Use it as the ``sentencepiece`` package is used::

    import tokviz.sentencepiece as spm
    spm.SentencePieceTrainer.Train("--input=corpus.txt --model_prefix=m --vocab_size=5000 --model_type=bpe")
    sp = spm.SentencePieceProcessor()
    sp.load("m.model")
    sp.encode_as_pieces("Hello world")
"""

from tokviz.sentencepiece.model_proto import ModelProto, ModelType, NormalizerSpec, PieceType, SentencePiece, TrainerSpec
from tokviz.sentencepiece.processor import SentencePieceError, SentencePieceProcessor

__all__ = [
    "ModelProto", "ModelType", "NormalizerSpec", "PieceType", "SentencePiece", "TrainerSpec",
    "SentencePieceError", "SentencePieceProcessor",
]
from tokviz.sentencepiece.trainer import SentencePieceHistory, SentencePieceTrainer, train_sentencepiece  # noqa: E402

__all__ += ["SentencePieceTrainer", "SentencePieceHistory", "train_sentencepiece"]
from tokviz.sentencepiece.convert import (  # noqa: E402
    from_model_bytes,
    model_from_proto,
    proto_from_tokenizer,
    to_model_bytes,
    tokenizer_from_proto,
)

__all__ += ["from_model_bytes", "to_model_bytes", "tokenizer_from_proto", "proto_from_tokenizer", "model_from_proto"]
