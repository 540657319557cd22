"""SentencePiece in tokviz: train from raw sentences, read / write ``.model``, encode like ``sentencepiece``.

Use it as the ``sentencepiece`` package is used::

    import tokviz.sentencepiece as spm
    spm.SentencePieceTrainer.Train("--input=corpus.txt --model_prefix=m --vocab_size=5000 --model_type=bpe")
    sp = spm.SentencePieceProcessor()
    sp.load("m.model")
    sp.encode_as_pieces("Hello world")

``sentencepiece_model_pb2.ModelProto`` edits a ``.model`` as protobuf's does; ``sentencepiece_pb2``
holds what ``encode(..., return_type="proto")`` returns.
"""

from tokviz._lazy import lazy_exports
from tokviz.sentencepiece.model_proto import ModelProto, ModelType, NormalizerSpec, PieceType, SentencePiece, TrainerSpec
from tokviz.sentencepiece.processor import (
    ConvertToFlatbuffer, SentencePieceError, SentencePieceProcessor, SetMinLogLevel, SetNBestTimeout,
    SetRandomGeneratorSeed, ThreadPool, convert_to_flatbuffer, set_min_log_level, set_nbest_timeout,
    set_random_generator_seed,
)

#: The version of the ``sentencepiece`` Python API this package follows (its own tests run against it).
__version__ = "0.2.3"

__all__ = [
    "ModelProto", "ModelType", "NormalizerSpec", "PieceType", "SentencePiece", "TrainerSpec",
    "SentencePieceError", "SentencePieceProcessor", "ThreadPool", "SetRandomGeneratorSeed", "SetMinLogLevel",
    "SetNBestTimeout", "ConvertToFlatbuffer", "set_random_generator_seed", "set_min_log_level", "set_nbest_timeout",
    "convert_to_flatbuffer",
]
# imported on first use: the converters pull in tokviz's pipeline (training a .model needs none of it),
# the trainer numpy (encoding needs none of it), so `import tokviz.sentencepiece` stays quick
_LAZY = {name: "tokviz.sentencepiece.convert" for name in
         ("from_model_bytes", "to_model_bytes", "tokenizer_from_proto", "proto_from_tokenizer", "model_from_proto")}
_LAZY.update({name: "tokviz.sentencepiece.trainer" for name in ("SentencePieceTrainer", "SentencePieceHistory", "train_sentencepiece")})
_LAZY["SentencePieceNormalizer"] = "tokviz.sentencepiece.public_normalizer"
_SUBMODULES = ("sentencepiece_pb2", "sentencepiece_model_pb2")
_lazy_getattr, _dir = lazy_exports(__name__, _LAZY)


def __getattr__(name: str):  # noqa: ANN202
    if name in _SUBMODULES:
        import importlib

        return importlib.import_module(f"{__name__}.{name}")
    return _lazy_getattr(name)


__all__ += list(_LAZY)


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_LAZY) | set(_SUBMODULES))
