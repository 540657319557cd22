"""Server limits in one place: how much a user may upload, train on and render.

Each limit can be overridden by an environment variable (read once, at import), so an
operator who serves tokviz to a class can raise or lower it without touching code:

>>> MAX_UPLOAD_BYTES >= 1
True
"""

from __future__ import annotations

import os


def _env_int(name: str, default: int) -> int:
    """``TOKVIZ_MAX_UPLOAD_MB=5`` -> 5; a missing or unreadable value falls back to ``default``."""
    raw = os.environ.get(name, "").strip()
    try:
        value = int(raw)
    except ValueError:
        return default
    return value if value > 0 else default


#: Largest upload accepted, in bytes (default 50 MB; ``TOKVIZ_MAX_UPLOAD_MB``).
MAX_UPLOAD_BYTES: int = _env_int("TOKVIZ_MAX_UPLOAD_MB", 50) * 1024 * 1024

#: Largest vocab size the Train page offers (``TOKVIZ_MAX_VOCAB``).
MAX_VOCAB_SIZE: int = _env_int("TOKVIZ_MAX_VOCAB", 50_000)

#: Most tokens drawn as spans; the rest is counted but not drawn (``TOKVIZ_MAX_RENDERED_TOKENS``).
MAX_RENDERED_TOKENS: int = _env_int("TOKVIZ_MAX_RENDERED_TOKENS", 20_000)

#: Corpora up to this many characters retrain live on every change (they train in well under
#: a second); larger ones wait for the Train button (``TOKVIZ_LIVE_TRAINING_MAX_CHARS``).
LIVE_TRAINING_MAX_CHARS: int = _env_int("TOKVIZ_LIVE_TRAINING_MAX_CHARS", 100_000)

#: Trained tokenizers kept in the server's cache (each holds a model and its history).
TRAINING_CACHE_ENTRIES: int = _env_int("TOKVIZ_TRAINING_CACHE_ENTRIES", 8)
