"""Server limits in one place: how much a user may upload, train on, render and keep cached.

tokviz runs live in classrooms and on shared servers, where one pasted novel or a
weird file must not take the server down for everyone. Every limit the app enforces
is defined here, each with the sentence the README's "Limits" section repeats, and
each can be overridden by an environment variable (read once, at import), so an
operator can raise or lower it without touching code (``TOKVIZ_MAX_UPLOAD_MB=200``).

A request above a training limit raises :class:`tokviz.errors.LimitExceededError`
*before* anything runs, with a sentence saying which limit and what to do:

>>> check_training_request(text_chars=12, words={"hello": 2})
>>> check_training_request(text_chars=MAX_TRAINING_CHARS + 1)
Traceback (most recent call last):
    ...
tokviz.errors.LimitExceededError: This corpus has 20,000,001 characters, above this server's training limit of 20,000,000 characters per training; train on a part of it (or ask the operator to raise TOKVIZ_MAX_TRAINING_CHARS).

The core library (models, trainers, Tokenizer) enforces none of these: like HF
``tokenizers`` it trains on whatever it is given. The pages call the checks.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping

from tokviz.errors import LimitExceededError


def _env_int(name: str, default: int) -> int:
    """``TOKVIZ_MAX_UPLOAD_MB=5`` -> 5; a missing or unreadable value falls back to ``default``."""
    raw = os.environ.get(name, "").strip()
    try:
        value = int(raw)
    except ValueError:
        return default
    return value if value > 0 else default


#: Largest upload accepted, in bytes (default 50 MB; ``TOKVIZ_MAX_UPLOAD_MB``). A larger file is
#: refused with a message before it is decoded; Streamlit's own ``server.maxUploadSize`` in
#: ``.streamlit/config.toml`` is set to the same 50 MB so the browser refuses it first.
MAX_UPLOAD_BYTES: int = _env_int("TOKVIZ_MAX_UPLOAD_MB", 50) * 1024 * 1024

#: Largest tokenizer.json read, in bytes (default 50 MB; ``TOKVIZ_MAX_TOKENIZER_JSON_MB``): a larger
#: one is refused before it is parsed (real ones are 0.5-20 MB).
MAX_TOKENIZER_JSON_BYTES: int = _env_int("TOKVIZ_MAX_TOKENIZER_JSON_MB", 50) * 1024 * 1024

#: Most corpus characters one training may use (default 20 million, about 20 MB of English;
#: ``TOKVIZ_MAX_TRAINING_CHARS``): a larger corpus is refused with a message instead of training.
MAX_TRAINING_CHARS: int = _env_int("TOKVIZ_MAX_TRAINING_CHARS", 20_000_000)

#: Longest word (pre-token) one training accepts, in characters (default 10,000;
#: ``TOKVIZ_MAX_TRAINING_WORD_CHARS``). A line of megabytes without a break (a minified file,
#: one character repeated) is one huge word that the trainers would chew on for minutes;
#: SentencePiece's trainer skips such sentences (``max_sentence_length``), we say so instead.
MAX_TRAINING_WORD_CHARS: int = _env_int("TOKVIZ_MAX_TRAINING_WORD_CHARS", 10_000)

#: Time a user regular expression (Replace, Split) may run on one piece of text, in seconds
#: (default 1; ``TOKVIZ_PATTERN_TIMEOUT_MS``); a pattern that backtracks catastrophically stops
#: with :class:`tokviz.errors.PatternTimeoutError` instead of hanging the server.
PATTERN_TIMEOUT_SECONDS: float = _env_int("TOKVIZ_PATTERN_TIMEOUT_MS", 1_000) / 1000

#: Time all user regular expressions of one request may take together, in seconds (default 30;
#: ``TOKVIZ_PATTERN_BUDGET_SECONDS``): a pattern slow on every line (0.5 s each, under the limit
#: above) stops with :class:`tokviz.errors.PatternTimeoutError` instead of running for hours.
#: A plain pattern over a 20-million-character corpus takes about 10 s.
PATTERN_REQUEST_BUDGET_SECONDS: float = float(_env_int("TOKVIZ_PATTERN_BUDGET_SECONDS", 30))

#: Largest vocab size the Train page offers (``TOKVIZ_MAX_VOCAB``).
MAX_VOCAB_SIZE: int = _env_int("TOKVIZ_MAX_VOCAB", 50_000)

#: Most tokens drawn as spans; the rest is counted but not drawn, with a notice (``TOKVIZ_MAX_RENDERED_TOKENS``).
MAX_RENDERED_TOKENS: int = _env_int("TOKVIZ_MAX_RENDERED_TOKENS", 20_000)

#: Longest test text encoded and drawn on every rerun, in characters (default 100,000;
#: ``TOKVIZ_MAX_TEST_TEXT_CHARS``): a longer one is cut there, with a message (a pasted 5 MB
#: text would otherwise be re-encoded, for tens of seconds, on every click).
MAX_TEST_TEXT_CHARS: int = _env_int("TOKVIZ_MAX_TEST_TEXT_CHARS", 100_000)

#: Corpora up to this many characters retrain live on every change (they train in well under
#: a second); larger ones wait for the Train button (``TOKVIZ_LIVE_TRAINING_MAX_CHARS``).
LIVE_TRAINING_MAX_CHARS: int = _env_int("TOKVIZ_LIVE_TRAINING_MAX_CHARS", 100_000)

#: Trained tokenizers kept in the server's cache (each holds a model and its history), shared by
#: all sessions and evicted least recently used, so memory stays bounded (``TOKVIZ_TRAINING_CACHE_ENTRIES``).
TRAINING_CACHE_ENTRIES: int = _env_int("TOKVIZ_TRAINING_CACHE_ENTRIES", 8)


def check_training_request(text_chars: int, words: Mapping[str, int] | Iterable[str] | None = None) -> None:
    """Raise :class:`LimitExceededError` if training on this corpus would exceed a limit.

    ``text_chars`` is the corpus length; ``words`` (optional) the pre-tokenized words, e.g.
    the word counts the page already has, to check the longest one.

    >>> check_training_request(5, ["a" * 10_001])
    Traceback (most recent call last):
        ...
    tokviz.errors.LimitExceededError: The corpus has a word (a run of text without a break) of 10,001 characters, above this server's limit of 10,000 characters per word; break long lines (add spaces or newlines) or pick a pipeline whose pre-tokenizer splits them.
    """
    if text_chars > MAX_TRAINING_CHARS:
        raise LimitExceededError(
            f"This corpus has {text_chars:,} characters, above this server's training limit of "
            f"{MAX_TRAINING_CHARS:,} characters per training; train on a part of it "
            "(or ask the operator to raise TOKVIZ_MAX_TRAINING_CHARS)."
        )
    if words is None:
        return
    longest = max(map(len, words), default=0)
    if longest > MAX_TRAINING_WORD_CHARS:
        raise LimitExceededError(
            f"The corpus has a word (a run of text without a break) of {longest:,} characters, above this "
            f"server's limit of {MAX_TRAINING_WORD_CHARS:,} characters per word; break long lines (add spaces "
            "or newlines) or pick a pipeline whose pre-tokenizer splits them."
        )


def check_vocab_request(vocab_size: int) -> None:
    """Raise :class:`LimitExceededError` for a vocab size above :data:`MAX_VOCAB_SIZE` (e.g. from a link).

    >>> check_vocab_request(1_000)
    >>> check_vocab_request(MAX_VOCAB_SIZE + 1)
    Traceback (most recent call last):
        ...
    tokviz.errors.LimitExceededError: A vocab size of 50,001 is above this server's limit of 50,000; it is set to 50,000.
    """
    if vocab_size > MAX_VOCAB_SIZE:
        raise LimitExceededError(
            f"A vocab size of {vocab_size:,} is above this server's limit of {MAX_VOCAB_SIZE:,}; it is set to {MAX_VOCAB_SIZE:,}."
        )


def check_test_text(text_chars: int) -> None:
    """Raise :class:`LimitExceededError` for a test text above :data:`MAX_TEST_TEXT_CHARS`.

    >>> check_test_text(MAX_TEST_TEXT_CHARS)
    """
    if text_chars > MAX_TEST_TEXT_CHARS:
        raise LimitExceededError(
            f"The test text has {text_chars:,} characters, above this server's limit of {MAX_TEST_TEXT_CHARS:,} "
            "for the text tokenized on every change; it is cut to that length."
        )


def check_tokenizer_json_size(size: int, name: str = "This tokenizer.json") -> None:
    """Raise :class:`LimitExceededError` for a tokenizer.json above :data:`MAX_TOKENIZER_JSON_BYTES`.

    >>> check_tokenizer_json_size(1_000)
    """
    if size > MAX_TOKENIZER_JSON_BYTES:
        raise LimitExceededError(
            f"{name} is {size / 1024 / 1024:,.1f} MB, above this server's limit of "
            f"{MAX_TOKENIZER_JSON_BYTES / 1024 / 1024:,.0f} MB for a tokenizer.json."
        )
