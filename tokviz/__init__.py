"""tokviz: a tokenizer playground whose core mirrors Hugging Face ``tokenizers``.

Submodules mirror HF's: ``normalizers``, ``pre_tokenizers``, ``models``, ``trainers``,
``processors``, ``decoders``. What tokviz adds: training histories, stage traces, charts.
"""

from __future__ import annotations

from tokviz._lazy import lazy_exports

__version__ = "0.1.0"

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
}
_SUBMODULES = ("normalizers", "pre_tokenizers", "models", "trainers", "processors", "decoders")

__all__ = sorted([*_EXPORTS, *_SUBMODULES])

_getattr, _dir = lazy_exports(__name__, _EXPORTS)


def __getattr__(name: str):  # noqa: D401 - module hook
    if name in _SUBMODULES:
        import importlib

        return importlib.import_module(f"tokviz.{name}")
    return _getattr(name)


def __dir__() -> list[str]:
    return sorted([*_dir(), *_SUBMODULES])
