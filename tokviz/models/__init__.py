"""Encoding models, named as in ``tokenizers.models``: BPE, WordPiece, Unigram, WordLevel."""

from __future__ import annotations

from tokviz._lazy import lazy_exports

_EXPORTS = {
    "Token": "tokviz.models.base",
    "Model": "tokviz.models.base",
    "BPE": "tokviz.models.bpe.model",
    "WordPiece": "tokviz.models.wordpiece.model",
    "Unigram": "tokviz.models.unigram.model",
    "WordLevel": "tokviz.models.wordlevel.model",
}
__all__ = sorted(_EXPORTS)
__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS)
