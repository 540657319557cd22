"""Errors a user can cause, each a ``ValueError`` with a sentence a user understands.

The UI catches :class:`TokvizError` and shows it with ``st.error``; anything else is a bug.
"""

from __future__ import annotations


class TokvizError(ValueError):
    """Base class of every error that bad input (not a bug) can cause."""


class PatternError(TokvizError):
    """A user-supplied regular expression does not compile; the message names the pattern."""


class PatternTimeoutError(PatternError):
    """A user-supplied regular expression ran past its time limit (catastrophic backtracking)."""


class EmptyCorpusError(TokvizError):
    """The corpus is empty, or empty after normalization and pre-tokenization."""


class VocabSizeError(TokvizError):
    """A vocab size that cannot be used (zero, negative, not a whole number)."""


class SpecialTokenError(TokvizError):
    """Special tokens that are empty, duplicated or otherwise unusable."""


class VocabularyError(TokvizError):
    """A vocabulary or merge list that cannot build a model (merge tokens missing, bad ids, no unk token)."""


class SerializationError(TokvizError):
    """A tokenizer.json that is malformed, truncated, or uses a component tokviz cannot represent."""


class TokenizerFileError(SerializationError):
    """A file that is not a tokenizer tokviz can read, with a sentence saying which and why (raised by
    ``tokviz.load`` and the format readers: tokenizer.json, tiktoken, Tekken, vocab files)."""


class UnknownIdError(TokvizError):
    """An id passed to decode / id_to_token that is not in the vocabulary."""


class CorpusReadError(TokvizError):
    """An upload that cannot be read as text (binary, too large, missing column)."""


class PipelineConfigError(TokvizError):
    """A pipeline description (preset, custom form or link) that names an unknown component or a bad option."""


class LimitExceededError(TokvizError):
    """A request larger than the server's configured limits (see tokviz.limits)."""


class NestingError(LimitExceededError, SerializationError):
    """A file nested deeper than this server reads (tokviz.limits.MAX_JSON_DEPTH): over a limit, and a
    file no tokenizer writes, so either ``except`` catches it."""


def named(error: TokvizError, name: str) -> TokvizError:
    """``error`` with its sentence led by the file's ``name`` (unless it names it already), so a page
    and a script show the same words: ``named(error, "vocab.json")`` -> ``"vocab.json: This is not ..."``.
    The same exception (class and traceback) is returned.

    >>> str(named(TokvizError("This is not valid."), "a.json")), str(named(TokvizError("a.json is empty."), "a.json"))
    ('a.json: This is not valid.', 'a.json is empty.')
    """
    message = str(error)
    if not message.startswith(name):
        error.args = (f"{name}: {message}",)
    return error
