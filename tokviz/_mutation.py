"""A process-wide count of edits to pipeline components, so derived structures know when to rebuild.

Hugging Face's components are mutable (``tokenizer.model.dropout = 0.1``). tokviz builds
derived structures from them for speed (encoding plans, prefix tables, word caches); those
are valid only while nothing they were built from has changed. Every setter of a component
calls :func:`bump`; a derived structure remembers :func:`generation` when it is built and is
rebuilt when the number has moved. One counter for the process is coarse but always right:
the app never edits a component, so in the app it never moves.

>>> before = generation(); bump(); generation() == before + 1
True
"""

from __future__ import annotations

import itertools

_counter = itertools.count(1)
_generation = 0


def bump() -> None:
    """Record that some component changed (call from every setter)."""
    global _generation
    _generation = next(_counter)


def generation() -> int:
    """The number of the latest edit (0 before any)."""
    return _generation
