"""Lazy re-exports: ``from tokviz import Tokenizer`` imports only what it needs."""

from __future__ import annotations

import importlib
from typing import Any, Callable


def lazy_exports(module_name: str, exports: dict[str, str]) -> tuple[Callable[[str], Any], Callable[[], list[str]]]:
    """Return ``(__getattr__, __dir__)`` for a package re-exporting ``name -> module``."""

    def __getattr__(name: str) -> Any:
        target = exports.get(name)
        if target is None:
            raise AttributeError(f"module {module_name!r} has no attribute {name!r}")
        return getattr(importlib.import_module(target), name)

    def __dir__() -> list[str]:
        return sorted(exports)

    return __getattr__, __dir__
