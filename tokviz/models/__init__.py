"""Encoding models, named as in ``tokenizers.models``: BPE, WordPiece, Unigram, WordLevel.

``models.models`` is the same set under the name of HF's compiled submodule.
"""

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
__all__ = sorted([*_EXPORTS, "models"])
_getattr, _dir = lazy_exports(__name__, _EXPORTS)


def __getattr__(name: str):  # noqa: D401 - module hook
    if name == "models":
        import importlib

        return importlib.import_module("tokviz.models.models")
    return _getattr(name)


def __dir__() -> list[str]:
    return sorted([*_dir(), "models"])
