"""SentencePiece in tokviz: train from raw sentences, read / write ``.model``, encode like ``sentencepiece``.

Use it as the ``sentencepiece`` package is used::

    import tokviz.sentencepiece as spm
    spm.SentencePieceTrainer.Train("--input=corpus.txt --model_prefix=m --vocab_size=5000 --model_type=bpe")
    sp = spm.SentencePieceProcessor()
    sp.load("m.model")
    sp.encode_as_pieces("Hello world")
"""

from tokviz._lazy import lazy_exports
from tokviz.sentencepiece.model_proto import ModelProto, ModelType, NormalizerSpec, PieceType, SentencePiece, TrainerSpec
from tokviz.sentencepiece.processor import SentencePieceError, SentencePieceProcessor

__all__ = [
    "ModelProto", "ModelType", "NormalizerSpec", "PieceType", "SentencePiece", "TrainerSpec",
    "SentencePieceError", "SentencePieceProcessor",
]
from tokviz.sentencepiece.trainer import SentencePieceHistory, SentencePieceTrainer, train_sentencepiece  # noqa: E402

__all__ += ["SentencePieceTrainer", "SentencePieceHistory", "train_sentencepiece"]

# the converters pull in tokviz's pipeline: imported on first use (training a .model needs none of it)
_CONVERT = ("from_model_bytes", "to_model_bytes", "tokenizer_from_proto", "proto_from_tokenizer", "model_from_proto")
__getattr__, _dir = lazy_exports(__name__, {name: "tokviz.sentencepiece.convert" for name in _CONVERT})
__all__ += list(_CONVERT)


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_CONVERT))
