"""Post-processors: the last encoding stage, which adds the special tokens a model expects.

After the model has turned each sequence into tokens, the post-processor wraps them::

    BERT     [CLS] $A [SEP]            pair: [CLS] $A [SEP] $B [SEP]   (B gets type_id 1)
    RoBERTa  <s> $A </s>               pair: <s> $A </s> </s> $B </s>  (all type_id 0)
    T5       $A </s>                   pair: $A </s> $B </s>

Every processor here works like HF's: ``process_encodings(encodings, add_special_tokens)``
edits the list of per-sequence encodings, and ``process`` marks each with its sequence
id, runs that, and merges the result into one :class:`~tokviz.encoding.Encoding`.
``num_special_tokens_to_add(is_pair)`` tells truncation how much room to leave.

``ByteLevel`` (and RoBERTa, with ``trim_offsets``) also trims the spaces that byte-level
tokens carry (``'Ġworld'`` at (5, 11) -> (6, 11)) so offsets point at the word itself.
"""

from __future__ import annotations

import sys
from dataclasses import dataclass
from typing import Any, Iterable, Sequence as SequenceType

from tokviz._component import JsonComponent, SequenceItems, check_bool, check_token_id_pair
from tokviz.byte_level import BYTES_TO_UNICODE
from tokviz.decoders import ByteLevel as _ByteLevelDecoder
from tokviz.encoding import Encoding, flat_offsets_encoding, flat_offsets_of, new_encoding, whole_sequence_ranges
from tokviz.errors import SerializationError, SpecialTokenError

_SPACE_SYMBOL = BYTES_TO_UNICODE[ord(" ")]  # 'Ġ'

# Rust's char::is_whitespace (Unicode White_Space); Python's str.isspace also accepts
# U+001C..U+001F, which Rust does not, so the set is spelled out.
UNICODE_WHITESPACE = frozenset(
    "\t\n\x0b\x0c\r \x85\xa0\u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006\u2007\u2008\u2009"
    "\u200a\u2028\u2029\u202f\u205f\u3000"
)

TRIM_CHARS = UNICODE_WHITESPACE | {_SPACE_SYMBOL}


def _middle_of(encoding: Encoding, parts: tuple[Any, ...] | None) -> Encoding | None:
    """The tokens between a single sequence's special tokens (``parts`` as ``single_parts``
    gives them), type ids 0."""
    if parts is None:
        return None
    before, after = len(parts[1][0]), len(parts[2][0])
    middle = encoding._slice(before, len(encoding) - after)
    middle._type_ids = (0,) * len(middle._ids)
    return middle


class PostProcessor(JsonComponent):
    """Base class: subclasses implement ``process_encodings`` and ``num_special_tokens_to_add``."""

    @classmethod
    def _from_state_dict(cls, data: dict[str, Any]) -> "PostProcessor | None":
        return from_dict(data)

    def __init_subclass__(cls, **kwargs: Any) -> None:
        # A class that processes its own way does not inherit the engine's shortcuts its base
        # declares (they describe the base's process): it gets the general ones back.
        super().__init_subclass__(**kwargs)
        if any(name in cls.__dict__ for name in ("process", "process_encodings", "_process_single")):
            for name in ("trims_offsets", "single_parts", "single_middle", "_process_single"):
                if name not in cls.__dict__:
                    setattr(cls, name, getattr(PostProcessor, name))

    def num_special_tokens_to_add(self, is_pair: bool) -> int:
        return 0

    def trims_offsets(self) -> tuple[bool] | tuple[()] | None:
        """What the encoding engine asks of one sequence: None when :meth:`process` must see its
        encoding; else the engine may trim byte-level offsets as this processor would, in
        the same pass (``(add_prefix_space,)``; ``()``: no trimming), and
        :meth:`finish_trimmed` does the rest."""
        return None

    def finish_trimmed(self, encoding: Encoding, add_special_tokens: bool) -> Encoding:
        """:meth:`process` of one sequence whose offsets the engine trimmed already (see
        :meth:`trims_offsets`), without overflowing pieces."""
        raise NotImplementedError

    def single_parts(self) -> tuple[Any, ...] | None:
        """What the encoding engine asks to build a processed single sequence in one go: the
        special tokens before and after it (see :meth:`TemplateProcessing.single_parts`), or
        None (then :meth:`process` does it)."""
        return None

    def _process_single(self, encoding: Encoding, add_special_tokens: bool) -> Encoding | None:
        """:meth:`process` of one sequence without overflowing pieces, in one step (None:
        let :meth:`process` do it). Like it, it marks ``encoding`` as sequence 0."""
        return None

    def single_middle(self, encoding: Encoding) -> Encoding | None:
        """What the encoding engine asks: the encoding of a single sequence as it was before
        this processor added its special tokens, taken from between them in ``encoding`` (type
        ids 0, as a first sequence is encoded), or None when the processor changes more than
        its ends (RoBERTa's trims offsets). A tokenizer truncating a processed sequence cuts
        this, not the text again.

        >>> template = TemplateProcessing(single="<s> $A:1 </s>", special_tokens=[("<s>", 0), ("</s>", 2)])
        >>> processed = template.process(Encoding.from_tokens([(7, "hi", (0, 2)), (8, "!", (2, 3))], type_id=0))
        >>> middle = template.single_middle(processed)
        >>> middle.ids, middle.type_ids, middle.offsets, middle.special_tokens_mask
        ([7, 8], [0, 0], [(0, 2), (2, 3)], [0, 0])
        """
        return None

    # HF's Rust name, kept for readers of its source.
    def added_tokens(self, is_pair: bool) -> int:
        return self.num_special_tokens_to_add(is_pair)

    def process_encodings(self, encodings: list[Encoding], add_special_tokens: bool) -> list[Encoding]:
        raise NotImplementedError

    def process(
        self, encoding: Encoding, pair: Encoding | None = None, add_special_tokens: bool = True
    ) -> Encoding:
        """Add the special tokens to ``encoding`` (and ``pair``) and merge them into one."""
        if pair is None and not encoding._overflowing:
            single = self._process_single(encoding, add_special_tokens)
            if single is not None:
                return single
        encodings = [encoding] if pair is None else [encoding, pair]
        for sequence_id, item in enumerate(encodings):
            # As HF: overflowing pieces get the sequence id too, but only the main
            # encoding's type ids are reset to the sequence index.
            item.set_sequence_id(sequence_id)
            for piece in item._overflowing:
                piece.set_sequence_id(sequence_id)
            item._type_ids = (sequence_id,) * len(item._ids)
        processed = self.process_encodings(encodings, add_special_tokens)
        if len(processed) == 1:
            # Merging one encoding into an empty one gives it back unchanged.
            return processed[0]
        merged = Encoding()
        for item in processed:
            merged.merge_with(item, growing_offsets=False)
        return merged


# ---------------------------------------------------------------------- offsets trimming
def _trim_all(encodings: list[Encoding], add_prefix_space: bool) -> None:
    """:func:`trim_offsets` of every encoding and of its overflowing pieces."""
    for encoding in encodings:
        for item in (encoding, *encoding._overflowing):
            trim_offsets(item, add_prefix_space)


def trim_offsets(encoding: Encoding, add_prefix_space: bool) -> None:
    """Move offsets past the spaces a token carries, as HF's ``process_offsets`` does.

    A token ``'Ġworld'`` covering ``' world'`` at (5, 11) becomes (6, 11). The first token
    keeps a single leading space when ``add_prefix_space`` put it there.
    """
    offsets = list(encoding._offsets)
    trim_chars = TRIM_CHARS
    for i, token in enumerate(encoding._tokens):
        if token and (token[0] in trim_chars or token[-1] in trim_chars):
            start, end = offsets[i]
            offsets[i] = trim_token_offsets(token, start, end, i == 0 or start == 0, add_prefix_space)
    encoding._offsets = tuple(offsets)


def space_counts(token: str) -> tuple[int, int]:
    """Leading and trailing spaces of a token ('Ġ' or Unicode whitespace): ``'ĠĠa Ġ' -> (2, 2)``."""
    leading = 0
    for char in token:
        if char not in TRIM_CHARS:
            break
        leading += 1
    trailing = 0
    for char in reversed(token):
        if char not in TRIM_CHARS:
            break
        trailing += 1
    return leading, trailing


def trim_token_offsets(
    token: str, start: int, end: int, is_first: bool, add_prefix_space: bool
) -> tuple[int, int]:
    """HF's rule for one token: ``('Ġworld', 5, 11, False, True) -> (6, 11)``."""
    leading, trailing = space_counts(token)
    if leading:
        if is_first and add_prefix_space and leading == 1:
            leading = 0
        start = min(start + leading, end)
    if trailing and end >= trailing:
        end = max(end - trailing, start)
    return (start, end)


# ---------------------------------------------------------------------- BERT / RoBERTa
def _wrap(
    encoding: Encoding,
    before: list[tuple[str, int]],
    after: list[tuple[str, int]],
    type_id: int | None,
    sequence_id: int,
) -> Encoding:
    """``before + encoding + after``, the added tokens marked special, no overflow handling."""
    n = len(encoding._ids)
    n_before, n_after = len(before), len(after)
    type_ids = list(encoding._type_ids) if type_id is None else [type_id] * n
    edge_type = 0 if type_id is None else type_id
    return Encoding(
        [i for _, i in before] + list(encoding._ids) + [i for _, i in after],
        [edge_type] * n_before + type_ids + [edge_type] * n_after,
        [t for t, _ in before] + list(encoding._tokens) + [t for t, _ in after],
        [None] * n_before + list(encoding._words) + [None] * n_after,
        [(0, 0)] * n_before + list(encoding._offsets) + [(0, 0)] * n_after,
        [1] * n_before + [0] * n + [1] * n_after,
        [1] * (n_before + n + n_after),
        [],
        {sequence_id: (n_before, n_before + n)},
    )


def _wrap_each(encodings: list[Encoding], wrap: Any) -> list[Encoding]:
    """``wrap(encoding, index)`` of each encoding, its overflowing pieces wrapped alike."""
    result = []
    for index, encoding in enumerate(encodings):
        main = wrap(encoding, index)
        main._overflowing = [wrap(piece, index) for piece in encoding._overflowing]
        result.append(main)
    return result


def _single_between(encoding: Encoding, cls: tuple[str, int], sep: tuple[str, int], add_special_tokens: bool) -> Encoding:
    """One sequence as BERT's and RoBERTa's processors give it: sequence 0, type ids 0, and
    between ``cls`` and ``sep`` when special tokens are added."""
    n = len(encoding._ids)
    encoding._sequence_ranges = {**encoding._sequence_ranges, 0: (0, n)}  # (see Encoding.set_sequence_id)
    encoding._type_ids = (0,) * n
    if not add_special_tokens:
        return encoding
    return _wrap_single(encoding, cls, sep)


def _wrap_single(encoding: Encoding, cls: tuple[str, int], sep: tuple[str, int]) -> Encoding:
    """:func:`_wrap` of sequence 0 between ``cls`` and ``sep``, every type id 0, fields built as
    tuples in one go."""
    n = len(encoding._ids)
    fixed = _WRAPPED_FIXED.get(n)
    if fixed is None:
        fixed = ((0,) * (n + 2), (1, *(0,) * n, 1), (1,) * (n + 2), (1, n + 1), {0: (1, n + 1)})
        if len(_WRAPPED_FIXED) < 4096:
            _WRAPPED_FIXED[n] = fixed
    flat = flat_offsets_of(encoding)
    if flat is not None and not flat[2] and not flat[3]:
        # Offsets still flat: they stay flat, the special tokens at (0, 0) (see flat_offsets_encoding).
        make, offsets = flat_offsets_encoding, (flat[0], flat[1], 1, 1)
    else:
        make, offsets = new_encoding, ((0, 0), *encoding._offsets, (0, 0))
    return make((cls[1], *encoding._ids, sep[1]), fixed[0], (cls[0], *encoding._tokens, sep[0]),
                (None, *encoding._words, None), offsets, fixed[1], fixed[2], fixed[4])


#: n -> the type ids, special tokens and attention masks, the range of a wrapped sequence of
#: n tokens and its sequence ranges (shared by the Encodings: an Encoding replaces its ranges
#: rather than change them).
_WRAPPED_FIXED: dict[int, tuple[Any, ...]] = {}


class BertProcessing(PostProcessor):
    """``[CLS] A [SEP]`` and ``[CLS] A [SEP] B [SEP]`` with B's type_id 1.

    >>> p = BertProcessing(sep=("[SEP]", 102), cls=("[CLS]", 101))
    >>> p.process(Encoding.from_tokens([(7592, "hello", (0, 5))])).tokens
    ['[CLS]', 'hello', '[SEP]']
    """

    _FIELDS = ("sep", "cls")
    _CHECKS = {
        "sep": lambda v: check_token_id_pair("BertProcessing", "sep", v),
        "cls": lambda v: check_token_id_pair("BertProcessing", "cls", v),
    }

    def __init__(self, sep: tuple[str, int], cls: tuple[str, int]) -> None:
        self.sep = sep
        self.cls = cls
        self._single_parts: tuple[Any, ...] | None = None  # see single_parts

    def num_special_tokens_to_add(self, is_pair: bool) -> int:
        return 3 if is_pair else 2

    def _process_single(self, encoding: Encoding, add_special_tokens: bool) -> Encoding | None:
        return _single_between(encoding, self.cls, self.sep, add_special_tokens)

    def single_middle(self, encoding: Encoding) -> Encoding | None:
        return _middle_of(encoding, self.single_parts())

    def single_parts(self) -> tuple[Any, ...]:
        """``[CLS] $A [SEP]`` as :meth:`TemplateProcessing.single_parts` gives a template."""
        cls, sep = self.cls, self.sep
        parts = self._single_parts
        if parts is None or parts[0] != cls or parts[1] != sep:
            parts = self._single_parts = (
                cls,
                sep,
                (0, ((cls[1],), (cls[0],), (None,), ((0, 0),), (0,), (1,)), ((sep[1],), (sep[0],), (None,), ((0, 0),), (0,), (1,)), {}),
            )
        return parts[2]

    def process_encodings(self, encodings: list[Encoding], add_special_tokens: bool) -> list[Encoding]:
        if not add_special_tokens:
            return encodings

        def wrap(encoding: Encoding, index: int) -> Encoding:
            if index == 0:  # HF keeps the sequence's own type_ids and gives [CLS]/[SEP] type 0
                return _wrap(encoding, [self.cls], [self.sep], None, 0)
            wrapped = _wrap(encoding, [], [self.sep], None, 1)
            wrapped._type_ids = wrapped._type_ids[:-1] + (1,)
            return wrapped

        return _wrap_each(encodings, wrap)


class RobertaProcessing(PostProcessor):
    """``<s> A </s>`` and ``<s> A </s> </s> B </s>``, every type_id 0, offsets trimmed."""

    _FIELDS = ("sep", "cls", "trim_offsets", "add_prefix_space")
    _CHECKS = {
        "sep": lambda v: check_token_id_pair("RobertaProcessing", "sep", v),
        "cls": lambda v: check_token_id_pair("RobertaProcessing", "cls", v),
        "trim_offsets": lambda v: check_bool("RobertaProcessing", "trim_offsets", v),
        "add_prefix_space": lambda v: check_bool("RobertaProcessing", "add_prefix_space", v),
    }

    def __init__(
        self,
        sep: tuple[str, int],
        cls: tuple[str, int],
        trim_offsets: bool = True,
        add_prefix_space: bool = True,
    ) -> None:
        self.sep = sep
        self.cls = cls
        self.trim_offsets = trim_offsets
        self.add_prefix_space = add_prefix_space
        self._single_parts: tuple[Any, ...] | None = None  # see single_parts

    def num_special_tokens_to_add(self, is_pair: bool) -> int:
        return 4 if is_pair else 2

    single_parts = BertProcessing.single_parts  # (``<s> $A </s>``: the engine trims the offsets, see trims_offsets)

    def _process_single(self, encoding: Encoding, add_special_tokens: bool) -> Encoding | None:
        if self.trim_offsets:
            trim_offsets(encoding, self.add_prefix_space)
        return self.finish_trimmed(encoding, add_special_tokens)

    def trims_offsets(self) -> tuple[bool] | tuple[()]:
        return (self.add_prefix_space,) if self.trim_offsets else ()

    def finish_trimmed(self, encoding: Encoding, add_special_tokens: bool) -> Encoding:
        return _single_between(encoding, self.cls, self.sep, add_special_tokens)

    def process_encodings(self, encodings: list[Encoding], add_special_tokens: bool) -> list[Encoding]:
        if self.trim_offsets:
            _trim_all(encodings, self.add_prefix_space)
        # RoBERTa has a single segment embedding: every type id is 0.
        for encoding in encodings:
            encoding._type_ids = (0,) * len(encoding._ids)
        if not add_special_tokens:
            return encodings
        return _wrap_each(
            encodings, lambda encoding, index: _wrap(encoding, [self.cls] if index == 0 else [self.sep], [self.sep], 0, index)
        )


class ByteLevel(PostProcessor):
    """Adds no token; trims the spaces byte-level tokens carry from their offsets.

    ``add_prefix_space`` and ``use_regex`` mirror the pre-tokenizer's options (HF stores
    one ByteLevel config for the three roles); only ``add_prefix_space`` matters here.
    """

    # The decoder's: the same options, checks and constructor (other keywords ignored, as HF does).
    _FIELDS, _CHECKS, __init__ = _ByteLevelDecoder._FIELDS, _ByteLevelDecoder._CHECKS, _ByteLevelDecoder.__init__

    def process_encodings(self, encodings: list[Encoding], add_special_tokens: bool) -> list[Encoding]:
        if self.trim_offsets:
            _trim_all(encodings, self.add_prefix_space)
        for sequence_id, encoding in enumerate(encodings):
            encoding.set_sequence_id(sequence_id)
        return encodings

    def trims_offsets(self) -> tuple[bool] | tuple[()]:
        return (self.add_prefix_space,) if self.trim_offsets else ()

    def finish_trimmed(self, encoding: Encoding, add_special_tokens: bool) -> Encoding:
        encoding._sequence_ranges = whole_sequence_ranges(len(encoding._ids))  # (set_sequence_id(0), shared)
        return encoding


# ---------------------------------------------------------------------- templates
@dataclass(frozen=True, slots=True)
class SpecialToken:
    """A template's special token: its name in the template, and the ids/tokens it adds."""

    id: str
    ids: tuple[int, ...]
    tokens: tuple[str, ...]

    def to_dict(self) -> dict[str, Any]:
        return {"id": self.id, "ids": list(self.ids), "tokens": list(self.tokens)}


@dataclass(frozen=True, slots=True)
class Piece:
    """One template item: a sequence (``"A"``/``"B"``) or a special token, with its type id."""

    kind: str  # "Sequence" or "SpecialToken"
    id: str
    type_id: int

    def to_dict(self) -> dict[str, Any]:
        return {self.kind: {"id": self.id, "type_id": self.type_id}}


def parse_piece(text: str) -> Piece:
    """``"$A"`` -> sequence A, ``"$B:1"`` -> B with type 1, ``"$1"`` -> A with type 1, else a token.

    >>> parse_piece("[SEP]:1")
    Piece(kind='SpecialToken', id='[SEP]', type_id=1)
    """
    parts = text.split(":")
    if len(parts) > 2 or (len(parts) == 2 and not parts[1].isdigit()):
        raise SpecialTokenError(f'Cannot build Piece from string "{text}": expected \'$A\', \'$B:1\' or \'TOKEN:1\'.')
    type_id = int(parts[1]) if len(parts) == 2 else None
    name = parts[0]
    if name.startswith("$"):
        rest = name[1:]
        if rest in ("", "A", "a"):
            piece = Piece("Sequence", "A", 0)
        elif rest in ("B", "b"):
            piece = Piece("Sequence", "B", 0)
        elif rest.isdigit():
            piece = Piece("Sequence", "A", int(rest))
        else:
            raise SpecialTokenError(f'Cannot build Piece from string "{text}": a sequence is \'$A\' or \'$B\'.')
    else:
        piece = Piece("SpecialToken", name, 0)
    if type_id is not None:
        piece = Piece(piece.kind, piece.id, type_id)
    return piece


def _parse_template(template: str | Iterable[Any]) -> tuple[Piece, ...]:
    if isinstance(template, str):
        return tuple(parse_piece(part) for part in template.split())
    pieces = []
    for item in template:
        if isinstance(item, Piece):
            pieces.append(item)
        elif isinstance(item, str):
            pieces.append(parse_piece(item))
        elif isinstance(item, dict) and len(item) == 1:
            kind, body = next(iter(item.items()))
            if kind not in ("Sequence", "SpecialToken"):
                raise SerializationError(f"Unknown template piece {kind!r} in TemplateProcessing.")
            pieces.append(Piece(kind, str(body["id"]), int(body.get("type_id", 0))))
        else:
            raise SpecialTokenError(f"Cannot build Piece from {item!r}: expected a string such as '$A' or '[CLS]:0'.")
    return tuple(pieces)


def _parse_special_tokens(special_tokens: Any) -> dict[str, SpecialToken]:
    result: dict[str, SpecialToken] = {}
    items = special_tokens.values() if isinstance(special_tokens, dict) else special_tokens or ()
    for item in items:
        if isinstance(item, SpecialToken):
            token = item
        elif isinstance(item, dict):
            token = SpecialToken(str(item["id"]), tuple(int(i) for i in item["ids"]), tuple(item["tokens"]))
        else:
            first, second = item
            # HF accepts (token, id) and (id, token).
            if isinstance(first, int):
                first, second = second, first
            token = SpecialToken(str(first), (int(second),), (str(first),))
        if len(token.ids) != len(token.tokens):
            raise SpecialTokenError(
                f"The special token {token.id!r} has {len(token.ids)} ids but {len(token.tokens)} tokens."
            )
        result[token.id] = token
    return result


def template_masks(split: tuple[Any, ...], n: int) -> tuple[Any, ...]:
    """:func:`_template_masks`, kept per length in the split's own table (shared tuples)."""
    fixed = split[3]
    masks = fixed.get(n)
    if masks is None:
        masks = _template_masks(split, n)
        if len(fixed) < 4096:
            fixed[n] = masks
    return masks


def _template_masks(split: tuple[Any, ...], n: int) -> tuple[Any, ...]:
    """The type ids, the sequence range, and the special tokens and attention masks (for a
    sequence of no special tokens) of a single template around ``n`` tokens (``split`` as
    :meth:`TemplateProcessing.single_parts` gives it), and the sequence ranges ``{0: range}``
    the encodings share (an Encoding replaces its dict rather than change it)."""
    type_id, before, after, _ = split
    n_before = len(before[0])
    sequence_range = (n_before, n_before + n)
    return (
        before[4] + (type_id,) * n + after[4],
        sequence_range,
        before[5] + (0,) * n + after[5],
        (1,) * (n_before + n + len(after[0])),
        {0: sequence_range},
    )


class TemplateProcessing(PostProcessor):
    """Special tokens placed by a template: ``"[CLS] $A [SEP]"``, ``"$A:0 [SEP] $B:1 [SEP]:1"``.

    ``$A`` / ``$B`` stand for the sequences, ``:n`` sets the type id.

    >>> t = TemplateProcessing(single="[CLS] $A [SEP]", pair="[CLS] $A [SEP] $B:1 [SEP]:1",
    ...                        special_tokens=[("[CLS]", 1), ("[SEP]", 2)])
    >>> t.process(Encoding.from_tokens([(5, "hi", (0, 2))]), Encoding.from_tokens([(6, "yo", (0, 2))])).type_ids
    [0, 0, 0, 1, 1]
    """

    def __init__(
        self,
        single: str | Iterable[Any] = "$0",
        pair: str | Iterable[Any] = "$A:0 $B:1",
        special_tokens: Any = None,
    ) -> None:
        self.single = _parse_template(single)
        self.pair = _parse_template(pair)
        self.special_tokens = _parse_special_tokens(special_tokens)
        self._single_parts: tuple[Any, ...] | None = None  # see _process_single
        sequences = {p.id for p in self.pair if p.kind == "Sequence"}
        if sequences != {"A", "B"}:
            raise SpecialTokenError("The pair template must use both sequences, $A and $B.")
        missing = sorted(
            {p.id for p in (*self.single, *self.pair) if p.kind == "SpecialToken"} - set(self.special_tokens)
        )
        if missing:
            raise SpecialTokenError(
                f"Missing SpecialToken(s) with id(s) `{', '.join(missing)}`: the template uses them, so special_tokens "
                "must give their ids, e.g. special_tokens=[(\"[CLS]\", 1)]."
            )

    def single_middle(self, encoding: Encoding) -> Encoding | None:
        return _middle_of(encoding, self.single_parts())

    def single_parts(self) -> tuple[Any, ...] | None:
        """The single template as ``(type id of $A, before, after, {})``, each side ``(ids,
        tokens, word ids, offsets, type ids, ones)`` of its special tokens (the dict keeps
        :func:`_template_masks` per length); None unless it has $A once.

        >>> t = TemplateProcessing(single="<s> $A", special_tokens=[("<s>", 1)])
        >>> t.single_parts()[:3]
        (0, ((1,), ('<s>',), (None,), ((0, 0),), (0,), (1,)), ((), (), (), (), (), ()))
        """
        parts = self._single_parts
        if parts is None or parts[0] is not self.single or parts[1] is not self.special_tokens:
            parts = self._single_parts = (self.single, self.special_tokens, self._split_single())
        return parts[2]

    def _process_single(self, encoding: Encoding, add_special_tokens: bool) -> Encoding | None:
        split = self.single_parts()
        if split is None:
            return None
        type_id, before, after, _ = split
        n = len(encoding._ids)
        encoding._sequence_ranges = {**encoding._sequence_ranges, 0: (0, n)}  # (see Encoding.set_sequence_id)
        encoding._type_ids = (type_id,) * n
        if not add_special_tokens:
            return encoding.copy()
        ids_before, tokens_before, nones_before, zeros_before, _, ones_before = before
        ids_after, tokens_after, nones_after, zeros_after, _, ones_after = after
        # The type ids and the range depend on n only: kept per length (tuples, shared).
        masks = template_masks(split, n)
        flat = flat_offsets_of(encoding)
        if flat is not None and not flat[2] and not flat[3] and not any(map(any, zeros_before)) and not any(map(any, zeros_after)):
            # Offsets still flat, special tokens at (0, 0): they stay flat (see flat_offsets_encoding).
            make, offsets = flat_offsets_encoding, (flat[0], flat[1], len(zeros_before), len(zeros_after))
        else:
            make, offsets = new_encoding, zeros_before + encoding._offsets + zeros_after
        return make(
            ids_before + encoding._ids + ids_after,
            masks[0],
            tokens_before + encoding._tokens + tokens_after,
            nones_before + encoding._words + nones_after,
            offsets,
            ones_before + encoding._special_tokens_mask + ones_after,
            ones_before + encoding._attention_mask + ones_after,
            masks[4],
        )

    def _split_single(self) -> tuple[Any, ...] | None:
        """:meth:`single_parts`, computed."""
        positions = [index for index, piece in enumerate(self.single) if piece.kind == "Sequence"]
        if len(positions) != 1 or self.single[positions[0]].id != "A":
            return None

        def side(pieces: tuple[Piece, ...]) -> tuple[tuple[Any, ...], ...]:
            ids: list[int] = []
            types: list[int] = []
            tokens: list[str] = []
            for piece in pieces:
                token = self.special_tokens[piece.id]
                ids.extend(token.ids)
                tokens.extend(token.tokens)
                types.extend([piece.type_id] * len(token.ids))
            return tuple(ids), tuple(tokens), (None,) * len(ids), ((0, 0),) * len(ids), tuple(types), (1,) * len(ids)

        position = positions[0]
        return self.single[position].type_id, side(self.single[:position]), side(self.single[position + 1:]), {}

    def _count(self, template: tuple[Piece, ...]) -> int:
        return sum(len(self.special_tokens[p.id].ids) for p in template if p.kind == "SpecialToken")

    def num_special_tokens_to_add(self, is_pair: bool) -> int:
        return self._count(self.pair if is_pair else self.single)

    def process_encodings(self, encodings: list[Encoding], add_special_tokens: bool) -> list[Encoding]:
        template = self.pair if len(encodings) == 2 else self.single
        result: list[Encoding] = []
        for piece in template:
            if piece.kind == "Sequence":
                index = 0 if piece.id == "A" else 1
                encoding = encodings[index]
                # Like HF, only the main encoding's type ids follow the template.
                encoding._type_ids = (piece.type_id,) * len(encoding._ids)
                encoding.set_sequence_id(index)
                result.append(encoding.copy())
            elif add_special_tokens:
                token = self.special_tokens[piece.id]
                n = len(token.ids)
                result.append(
                    Encoding(
                        list(token.ids), [piece.type_id] * n, list(token.tokens), [None] * n,
                        [(0, 0)] * n, [1] * n, [1] * n, [], {},
                    )
                )
        return result

    def to_dict(self) -> dict[str, Any]:
        return {
            "type": "TemplateProcessing",
            "single": [p.to_dict() for p in self.single],
            "pair": [p.to_dict() for p in self.pair],
            "special_tokens": {name: self.special_tokens[name].to_dict() for name in sorted(self.special_tokens)},
        }


class Sequence(SequenceItems, PostProcessor):
    """Run several post-processors in order (e.g. ByteLevel trimming, then a template).

    Indexing and item assignment work as HF's: ``seq[0] = ByteLevel(trim_offsets=False)``.
    """

    _ITEMS = "processors"
    _CHECKS = {"processors": lambda v: _check_processors(v)}

    def __init__(self, processors: SequenceType[PostProcessor]) -> None:
        self.processors = _check_processors(processors)

    def num_special_tokens_to_add(self, is_pair: bool) -> int:
        return sum(p.num_special_tokens_to_add(is_pair) for p in self.processors)

    def process_encodings(self, encodings: list[Encoding], add_special_tokens: bool) -> list[Encoding]:
        for processor in self.processors:
            encodings = processor.process_encodings(encodings, add_special_tokens)
        return encodings

    def to_dict(self) -> dict[str, Any]:
        return {"type": "Sequence", "processors": [p.to_dict() for p in self.processors]}


def _check_processors(processors: Any) -> list[PostProcessor]:
    items = list(processors)
    for item in items:
        if not isinstance(item, PostProcessor):
            raise TypeError(f"Sequence takes post-processors, not {type(item).__name__} {item!r:.60}.")
    return items


_TYPES = {
    "BertProcessing": BertProcessing,
    "RobertaProcessing": RobertaProcessing,
    "ByteLevel": ByteLevel,
    "TemplateProcessing": TemplateProcessing,
    "Sequence": Sequence,
}


def from_dict(data: dict[str, Any] | None) -> PostProcessor | None:
    """Build a post-processor from its tokenizer.json section (None stays None)."""
    if data is None:
        return None
    kind = data.get("type") if isinstance(data, dict) else None
    try:
        if kind in ("BertProcessing", "RobertaProcessing", "ByteLevel"):
            return _TYPES[kind].from_fields(data)
        if kind == "TemplateProcessing":
            return TemplateProcessing(data["single"], data["pair"], data.get("special_tokens", {}))
        if kind == "Sequence":
            return Sequence([from_dict(item) for item in data["processors"]])  # type: ignore[misc]
    except (KeyError, TypeError, ValueError) as error:
        if isinstance(error, SerializationError):
            raise
        raise SerializationError(f"The post_processor {kind!r} in this tokenizer.json is malformed ({error}).") from error
    raise SerializationError(
        f"tokviz cannot represent the post_processor {kind!r} (it knows {', '.join(sorted(_TYPES))})."
    )


# HF's compiled submodule is reachable as ``tokenizers.processors.processors``; here it is this module.
processors = sys.modules[__name__]
