"""What every model shares: the :class:`Token` it produces and the :class:`Model` protocol.

A model turns ONE pre-token (a word, already normalized and pre-tokenized) into tokens,
exactly like ``tokenizers.models.*.tokenize`` in Hugging Face. Offsets are character
offsets into that pre-token string; the Tokenizer maps them back to the original text.

Models are immutable: "the tokenizer at vocab size k" is a new model derived from a
training history, never an edited one. Caches inside a model are private and never
change what it returns.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Protocol, runtime_checkable


@dataclass(frozen=True, slots=True)
class Token:
    """One token of a pre-token: ``Token(id=7, value='ug', offsets=(1, 3))``."""

    id: int
    value: str
    offsets: tuple[int, int]


@runtime_checkable
class Model(Protocol):
    """The encoding protocol shared by BPE, WordPiece, Unigram and WordLevel."""

    def tokenize(self, sequence: str) -> list[Token]: ...

    def token_to_id(self, token: str) -> int | None: ...

    def id_to_token(self, id: int) -> str | None: ...

    def get_vocab(self) -> dict[str, int]: ...

    def get_vocab_size(self) -> int: ...


class ProvenVocab(dict):
    """A tokenizer.json's vocabulary the guarded reader proved ``{str: int}`` (ids in range) and
    copied: a model's ``check_vocab`` keeps it as its own without proving it again."""

    __slots__ = ()


class ProvenPairs(list):
    """Two-item lists the guarded reader (:func:`tokviz.tokenizer_json.check_tokenizer_json_sections`)
    proved: BPE merges ``[str, str]``, whose ``columns`` (lefts, rights: the proof made them)
    ``parse_merges`` takes (3.4 of a 25k-merge load's ~45 ms), and Unigram pieces ``[str, score]``,
    which ``Unigram.from_dict`` takes unchecked (the scores are still read as numbers)."""

    __slots__ = ("columns",)

    def __init__(self, pairs: Any, columns: tuple[tuple[str, ...], tuple[str, ...]] | None = None) -> None:
        super().__init__(pairs)
        self.columns = columns
