"""WordPiece encoding: greedy longest match from the left, the whole word -> [UNK] on failure.

BERT's WordPiece splits a word by taking, at each position, the longest piece that is
in the vocabulary; pieces after the first carry the ``continuing_subword_prefix``
("##"). If at some position no piece matches, the WHOLE word becomes ``[UNK]`` (not
just the failing part). With the HF course's example vocabulary:

>>> vocab = {"[UNK]": 0, "h": 1, "##u": 2, "##g": 3, "##s": 4, "hu": 5, "hug": 6, "b": 7}
>>> model = WordPiece(vocab)
>>> [t.value for t in model.tokenize("hugs")]  # "hugs"? no. "hug"? yes. Then "##s".
['hug', '##s']
>>> model.tokenize("bum")  # "b", "##u", then no "##m": the whole word is [UNK]
[Token(id=0, value='[UNK]', offsets=(0, 3))]

:meth:`WordPiece.trace` records every candidate tried at every position, so the Train
page can show why a word was split (or lost) the way it was.

It follows Hugging Face ``tokenizers.models.WordPiece``: a word longer than
``max_input_chars_per_word`` characters is ``[UNK]`` without trying; offsets are
character offsets into the word; an empty word gives no tokens.

Left out: nothing of the encoding; training lives in ``trainer.py``.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, ClassVar

from tokviz.errors import SerializationError, SpecialTokenError, VocabularyError
from tokviz.models.base import Token
from tokviz.models.bpe.model import BPE
from tokviz.models.wordlevel.model import (
    FrozenModel,
    check_vocab,
    optional_str,
    ordered_vocab,
    reverse_vocab,
    section_type,
)

#: Words per generation of the private word cache (it never changes results, only speed).
CACHE_CAPACITY = 10_000
#: The options of the "model" section of tokenizer.json, in HF's order (between "type" and "vocab").
_JSON_OPTIONS = ("unk_token", "continuing_subword_prefix", "max_input_chars_per_word")


@dataclass(frozen=True, slots=True)
class WordPieceAttempt:
    """One candidate looked up: ``WordPieceAttempt(start=3, end=4, candidate='##s', matched=True)``."""

    start: int
    end: int
    candidate: str
    matched: bool


@dataclass(frozen=True, slots=True)
class WordPieceStep:
    """Everything tried at one position, longest candidate first, and the piece kept (if any)."""

    start: int
    attempts: tuple[WordPieceAttempt, ...]
    match: Token | None


@dataclass(frozen=True, slots=True)
class WordPieceTrace:
    """The greedy longest-match search for one word.

    ``tokens`` equals ``model.tokenize(word)``. When the word became ``[UNK]``,
    ``unk_reason`` says why in a sentence and ``unk_position`` is the character where
    nothing matched (``None`` when the word was simply too long).
    """

    word: str
    steps: tuple[WordPieceStep, ...]
    tokens: tuple[Token, ...]
    unk_reason: str | None = None
    unk_position: int | None = None

    def rows(self) -> list[dict[str, Any]]:
        """One row per candidate tried, for a table: ``{"step": 0, "start": 0, "end": 4,
        "candidate": "hugs", "matched": False}``."""
        return [
            {
                "step": index,
                "start": attempt.start,
                "end": attempt.end,
                "candidate": attempt.candidate,
                "matched": attempt.matched,
            }
            for index, step in enumerate(self.steps)
            for attempt in step.attempts
        ]


def longest_matches(word: str, get: Any, prefix: str, longest: int) -> tuple[list[int], list[str], list[int], list[int]] | None:
    """WordPiece's greedy search: from each position the longest vocabulary piece (``get`` gives
    its id; pieces after the first carry ``prefix``, and none is longer than ``longest``), as
    ``(ids, values, starts, ends)``; None when nothing matches at some position (the word is unk).

    >>> longest_matches("hugs", {"hug": 4, "##s": 3}.get, "##", 3), longest_matches("hum", {"h": 1}.get, "##", 1)
    (([4, 3], ['hug', '##s'], [0, 3], [3, 4]), None)
    """
    ids: list[int] = []
    values: list[str] = []
    starts: list[int] = []
    ends: list[int] = []
    length = len(word)
    start = 0
    while start < length:
        end = min(length, start + longest)
        while start < end:
            piece = word[start:end] if start == 0 else prefix + word[start:end]
            token_id = get(piece)
            if token_id is not None:
                ids.append(token_id)
                values.append(piece)
                starts.append(start)
                ends.append(end)
                break
            end -= 1
        else:
            return None
        start = end
    return ids, values, starts, ends


@dataclass(frozen=True, slots=True, eq=False)
class WordPieceTables:
    """A WordPiece model's tables for the engine: its vocabulary (shared, read only) and its
    longest entry's length (no longer candidate can match)."""

    vocab: dict[str, int]
    longest: int


class WordPiece(FrozenModel):
    """``WordPiece(vocab, unk_token="[UNK]", continuing_subword_prefix="##", max_input_chars_per_word=100)``.

    >>> WordPiece({"ba": 1, "##na": 0, "[UNK]": 2}).tokenize("banana")
    [Token(id=1, value='ba', offsets=(0, 2)), Token(id=0, value='##na', offsets=(2, 4)), Token(id=0, value='##na', offsets=(4, 6))]
    """

    __slots__ = (
        "_vocab",
        "_vocab_r",
        "_longest",
        "_cache",
        "unk_token",
        "continuing_subword_prefix",
        "max_input_chars_per_word",
    )
    _SETTABLE: ClassVar[dict[str, str]] = {
        "unk_token": "str", "continuing_subword_prefix": "str", "max_input_chars_per_word": "uint",
    }

    _vocab: dict[str, int]
    _vocab_r: dict[int, str]
    _longest: int
    _cache: list[dict[str, tuple[Token, ...]]]  # [recent, old] generations
    unk_token: str
    continuing_subword_prefix: str
    max_input_chars_per_word: int

    def __init__(
        self,
        vocab: Mapping[str, int] | None = None,
        unk_token: str = "[UNK]",
        continuing_subword_prefix: str = "##",
        max_input_chars_per_word: int = 100,
    ) -> None:
        if isinstance(vocab, str):  # HF's older form: WordPiece("vocab.txt", ...)
            vocab = WordPiece.read_file(vocab)
        checked = check_vocab(vocab, "WordPiece")
        for name, value in (("unk_token", unk_token), ("continuing_subword_prefix", continuing_subword_prefix)):
            if not isinstance(value, str):
                raise SpecialTokenError(f"WordPiece's {name} must be a string, not {value!r}.")
        if (
            not isinstance(max_input_chars_per_word, int)
            or isinstance(max_input_chars_per_word, bool)
            or max_input_chars_per_word < 0
        ):
            raise VocabularyError(
                f"max_input_chars_per_word must be a non-negative whole number, not {max_input_chars_per_word!r}."
            )
        self._init(
            _vocab=checked,
            _vocab_r=reverse_vocab(checked),
            # No candidate longer than the longest entry can match, so the search may
            # start there instead of at the end of the word; results are the same.
            _longest=max(map(len, checked), default=0),
            _cache=[{}, {}],
            unk_token=unk_token,
            continuing_subword_prefix=continuing_subword_prefix,
            max_input_chars_per_word=max_input_chars_per_word,
        )

    def word_tables(self) -> WordPieceTables:
        """What the engine's word encoder reads (see :meth:`FrozenModel.word_tables`)."""
        return WordPieceTables(self._vocab, self._longest)

    # -- encoding ---------------------------------------------------------------------

    def tokenize(self, sequence: str) -> list[Token]:
        """Tokens of one pre-token, with character offsets into it."""
        cache = self._cache
        recent = cache[0]
        tokens = recent.get(sequence)
        if tokens is not None:
            return list(tokens)
        tokens = cache[1].get(sequence)
        if tokens is None:
            tokens = self._tokenize(sequence)
        # Two generations, as in BPE's cache: a full recent one becomes the old one;
        # words found in the old one move back.
        if len(recent) >= CACHE_CAPACITY:
            cache[1] = recent
            recent = cache[0] = {}
        recent[sequence] = tokens
        return list(tokens)

    def _tokenize(self, word: str) -> tuple[Token, ...]:
        found = None
        if len(word) <= self.max_input_chars_per_word:
            found = longest_matches(word, self._vocab.get, self.continuing_subword_prefix, self._longest)
        if found is None:
            return (self._unk(word),)
        ids, values, starts, ends = found
        return tuple(map(Token, ids, values, zip(starts, ends)))

    def _unk(self, word: str) -> Token:
        unk_id = self._vocab.get(self.unk_token)
        if unk_id is None:
            raise VocabularyError(
                f"The word {word!r} cannot be split into WordPiece vocabulary entries and the unk_token "
                f"{self.unk_token!r} is not in the vocabulary; add it to the vocabulary."
            )
        return Token(unk_id, self.unk_token, (0, len(word)))

    def trace(self, word: str) -> WordPieceTrace:
        """Every candidate tried, position by position, as the textbook algorithm tries them.

        >>> model = WordPiece({"[UNK]": 0, "h": 1, "##u": 2, "##g": 3, "hug": 4})
        >>> trace = model.trace("hug")
        >>> [(a.candidate, a.matched) for a in trace.steps[0].attempts]
        [('hug', True)]
        >>> trace = model.trace("hum")
        >>> [[a.candidate for a in step.attempts] for step in trace.steps]
        [['hum', 'hu', 'h'], ['##um', '##u'], ['##m']]
        >>> trace.unk_reason
        "nothing in the vocabulary matches at character 2 ('m'): the whole word becomes '[UNK]'"

        (:meth:`tokenize` skips candidates longer than the longest vocabulary entry,
        which cannot match; the trace lists them so the search reads as in the books.)
        """
        tokens = tuple(self.tokenize(word))
        length = len(word)
        if length > self.max_input_chars_per_word:
            reason = (
                f"the word has {length} characters, more than max_input_chars_per_word="
                f"{self.max_input_chars_per_word}: it becomes {self.unk_token!r} without trying"
            )
            return WordPieceTrace(word, (), tokens, reason, None)
        vocab = self._vocab
        prefix = self.continuing_subword_prefix
        steps: list[WordPieceStep] = []
        start = 0
        while start < length:
            attempts: list[WordPieceAttempt] = []
            match: Token | None = None
            for end in range(length, start, -1):
                piece = word[start:end] if start == 0 else prefix + word[start:end]
                token_id = vocab.get(piece)
                attempts.append(WordPieceAttempt(start, end, piece, token_id is not None))
                if token_id is not None:
                    match = Token(token_id, piece, (start, end))
                    break
            steps.append(WordPieceStep(start, tuple(attempts), match))
            if match is None:
                reason = (
                    f"nothing in the vocabulary matches at character {start} ({word[start]!r}): "
                    f"the whole word becomes {self.unk_token!r}"
                )
                return WordPieceTrace(word, tuple(steps), tokens, reason, start)
            start = match.offsets[1]
        return WordPieceTrace(word, tuple(steps), tokens)

    # -- construction and serialization ---------------------------------------------

    def _options(self) -> dict[str, Any]:
        return {"vocab": self._vocab, **{name: getattr(self, name) for name in _JSON_OPTIONS}}

    def to_dict(self) -> dict[str, Any]:
        """The "model" section HF writes in tokenizer.json."""
        return {"type": "WordPiece", **{name: getattr(self, name) for name in _JSON_OPTIONS}, "vocab": ordered_vocab(self._vocab_r)}

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> WordPiece:
        """Read a tokenizer.json "model" section of type WordPiece."""
        data = section_type(data, "WordPiece")
        max_chars = data.get("max_input_chars_per_word", 100)
        try:
            return cls(
                data["vocab"],
                unk_token=optional_str(data, "unk_token", "[UNK]", "WordPiece") or "[UNK]",
                continuing_subword_prefix=optional_str(data, "continuing_subword_prefix", "##", "WordPiece") or "",
                max_input_chars_per_word=max_chars,
            )
        except (VocabularyError, SpecialTokenError) as error:
            raise SerializationError(f"This WordPiece model section cannot be loaded: {error}") from error

    @staticmethod
    def read_file(vocab: str) -> dict[str, int]:
        """Read a BERT ``vocab.txt``: one token per line, its id is the line number."""
        try:
            with open(vocab, encoding="utf-8", newline="") as handle:
                text = handle.read()
        except (OSError, UnicodeDecodeError) as error:
            raise SerializationError(f"Cannot read the WordPiece vocabulary file {vocab!r}: {error}") from error
        # Split on "\n" only (str.splitlines would also split on rare characters that
        # can be tokens); a final newline does not start another token.
        lines = text.split("\n")
        if lines and lines[-1] == "":
            lines.pop()
        return {line.rstrip(): index for index, line in enumerate(lines)}

    @classmethod
    def from_file(cls, vocab: str, **kwargs: Any) -> WordPiece:
        """``WordPiece.from_file("vocab.txt", unk_token="[UNK]")``, as in HF."""
        return cls(cls.read_file(vocab), **kwargs)

    def save(self, folder: str, prefix: str | None = None) -> list[str]:
        """Write ``vocab.txt`` (``{prefix}-vocab.txt``), one token per line in id order, as HF's ``save``."""
        path = os.path.join(folder, f"{prefix}-vocab.txt" if prefix else "vocab.txt")
        with open(path, "w", encoding="utf-8", newline="") as handle:
            handle.writelines(f"{token}\n" for token in ordered_vocab(self._vocab_r))
        return [path]

    @classmethod
    def from_bpe(cls, bpe: BPE) -> WordPiece:
        """A WordPiece model over a BPE model's vocab (its unk token and prefix when it has them)."""
        options: dict[str, Any] = {}
        if bpe.unk_token is not None:
            options["unk_token"] = bpe.unk_token
        if bpe.continuing_subword_prefix is not None:
            options["continuing_subword_prefix"] = bpe.continuing_subword_prefix
        return cls(bpe.get_vocab(), **options)
