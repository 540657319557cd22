"""Stage traces: what each stage of a tokenizer made of one input (:meth:`Tokenizer.trace`), the
records the Pipeline page draws. Tokens carry offsets into the ORIGINAL text.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from tokviz.encoding import Encoding
from tokviz.models.base import Token


@dataclass(frozen=True, slots=True)
class PreTokenTrace:
    """One pre-token: its (normalized) text, original char offsets, and the model's tokens.

    ``tokens`` carry offsets into the ORIGINAL text. ``added`` marks an added/special
    token that was cut out before normalization and never reached the model.
    """

    text: str
    offsets: tuple[int, int]
    tokens: tuple[Token, ...]
    added: bool = False


@dataclass(frozen=True, slots=True)
class SequenceTrace:
    """Every stage of one input sequence.

    ``alignments[i]`` is the original span of normalized char ``i``; ``changed[i]`` says
    whether the normalizer changed that char (replaced, inserted, or merged several).
    ``decoded`` is the decoder's output for this sequence's tokens, and ``round_trip``
    whether it equals the normalized text.
    """

    original: str
    normalized: str
    alignments: tuple[tuple[int, int], ...]
    changed: tuple[bool, ...]
    pre_tokens: tuple[PreTokenTrace, ...]
    decoded: str
    round_trip: bool

    @property
    def tokens(self) -> tuple[Token, ...]:
        return tuple(token for pre_token in self.pre_tokens for token in pre_token.tokens)


@dataclass(frozen=True, slots=True)
class TokenizerTrace:
    """What :meth:`Tokenizer.trace` returns: one :class:`SequenceTrace` per input sequence,
    the final post-processed :class:`Encoding` (truncation and padding applied), and the
    decoded text of that encoding (special tokens skipped)."""

    sequences: tuple[SequenceTrace, ...]
    encoding: Encoding
    decoded: str

    @property
    def original(self) -> str:
        return self.sequences[0].original

    @property
    def normalized(self) -> str:
        return self.sequences[0].normalized

    @property
    def round_trip(self) -> bool:
        return all(sequence.round_trip for sequence in self.sequences)


def sequence_trace(text: str, normalized_splits: list[Any], splits: list[Any], added_splits: set[int], decoder: Any) -> SequenceTrace:
    """The trace of one sequence: its normalized splits (before pre-tokenization, with their
    alignments), its tokenized splits, the ``id()`` of those that are added tokens, and the
    decoder (None: tokens joined by spaces)."""
    # The normalized text of the whole sequence (before pre-tokenization), with its alignment.
    normalized_parts: list[str] = []
    alignments: list[tuple[int, int]] = []
    for split in normalized_splits:
        normalized_parts.append(split.normalized.normalized)
        alignments.extend(split.normalized.alignments)
    normalized = "".join(normalized_parts)
    changed = tuple(
        end - start != 1 or text[start:end] != char for char, (start, end) in zip(normalized, alignments)
    )
    pre_tokens = []
    for split in splits:
        ns = split.normalized
        convert = ns.convert_offsets_to_original
        model_tokens = tuple(
            Token(t.id, t.value, convert(t.offsets[0], t.offsets[1]) or tuple(t.offsets)) for t in split.tokens
        )
        pre_tokens.append(PreTokenTrace(ns.normalized, ns.offsets_original(), model_tokens, id(ns) in added_splits))
    sequence_tokens = [t.value for p in pre_tokens for t in p.tokens]
    decoded = " ".join(sequence_tokens) if decoder is None else decoder.decode(sequence_tokens)
    return SequenceTrace(
        original=text,
        normalized=normalized,
        alignments=tuple(alignments),
        changed=changed,
        pre_tokens=tuple(pre_tokens),
        decoded=decoded,
        round_trip=decoded == normalized,
    )
