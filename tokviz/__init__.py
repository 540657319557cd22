"""tokviz: a tokenizer playground whose core mirrors Hugging Face ``tokenizers``.

Submodules mirror HF's: ``normalizers``, ``pre_tokenizers``, ``models``, ``trainers``,
``processors``, ``decoders``, and HF's ready-made pipelines (``implementations``:
``ByteLevelBPETokenizer``, ``BertWordPieceTokenizer``, ...). What tokviz adds: training histories, stage traces, charts.
"""

from __future__ import annotations

from enum import Enum
from typing import List, Tuple, Union

from tokviz._lazy import lazy_exports

__version__ = "0.1.0"

# HF's type aliases and string enums, so annotations written for ``tokenizers`` import here.
Offsets = Tuple[int, int]
TextInputSequence = str
PreTokenizedInputSequence = Union[List[str], Tuple[str]]
TextEncodeInput = Union[TextInputSequence, Tuple[TextInputSequence, TextInputSequence], List[TextInputSequence]]
PreTokenizedEncodeInput = Union[
    PreTokenizedInputSequence,
    Tuple[PreTokenizedInputSequence, PreTokenizedInputSequence],
    List[PreTokenizedInputSequence],
]
InputSequence = Union[TextInputSequence, PreTokenizedInputSequence]
EncodeInput = Union[TextEncodeInput, PreTokenizedEncodeInput]


class OffsetReferential(Enum):
    ORIGINAL = "original"
    NORMALIZED = "normalized"


class OffsetType(Enum):
    BYTE = "byte"
    CHAR = "char"


class SplitDelimiterBehavior(Enum):
    REMOVED = "removed"
    ISOLATED = "isolated"
    MERGED_WITH_PREVIOUS = "merged_with_previous"
    MERGED_WITH_NEXT = "merged_with_next"
    CONTIGUOUS = "contiguous"


_TYPING_NAMES = [
    "Offsets", "TextInputSequence", "PreTokenizedInputSequence", "TextEncodeInput", "PreTokenizedEncodeInput", "InputSequence",
    "EncodeInput", "OffsetReferential", "OffsetType", "SplitDelimiterBehavior",
]

_EXPORTS = {
    "Regex": "tokviz.patterns",
    "NormalizedString": "tokviz.normalized",
    "PreTokenizedString": "tokviz.normalized",
    "Tokenizer": "tokviz.tokenizer",
    "Encoding": "tokviz.encoding",
    "AddedToken": "tokviz.added_vocabulary",
    "Token": "tokviz.models.base",
    "TrainingHistory": "tokviz.history",
    "TokvizError": "tokviz.errors",
    "load": "tokviz.loaders",
    "BertWordPieceTokenizer": "tokviz.implementations.bert_wordpiece",
    "ByteLevelBPETokenizer": "tokviz.implementations.byte_level_bpe",
    "CharBPETokenizer": "tokviz.implementations.char_level_bpe",
    "SentencePieceBPETokenizer": "tokviz.implementations.sentencepiece_bpe",
    "SentencePieceUnigramTokenizer": "tokviz.implementations.sentencepiece_unigram",
}
_SUBMODULES = ("normalizers", "pre_tokenizers", "models", "trainers", "processors", "decoders", "implementations")

__all__ = sorted([*_EXPORTS, *_SUBMODULES, *_TYPING_NAMES, "__version__"])

_getattr, _dir = lazy_exports(__name__, _EXPORTS)

# In a notebook (IPython running), the viz package registers the records' HTML views (Jupyter's
# _repr_html_): the core itself never imports viz.
if "IPython" in __import__("sys").modules:
    import tokviz.viz.notebook  # noqa: F401,E402



def __getattr__(name: str):  # noqa: D401 - module hook
    if name == "tokenizers":  # HF's compiled root module, tokenizers.tokenizers: the package itself
        import sys

        return sys.modules[__name__]
    if name in _SUBMODULES:
        import importlib

        return importlib.import_module(f"tokviz.{name}")
    return _getattr(name)


def __dir__() -> list[str]:
    return sorted([*_dir(), *_SUBMODULES, *_TYPING_NAMES, "__version__"])
