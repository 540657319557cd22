"""The :class:`Tokenizer`: the whole pipeline, encode and decode, as in HF ``tokenizers``.

One input goes through five stages (HF's order, HF's names)::

    "Héllo [SEP] you"
      1. added tokens    ['Héllo ', '[SEP]', ' you']     special/added tokens cut out first
      2. normalizer      ['hello ', '[SEP]', ' you']     (tok.normalizer, e.g. Lowercase)
      3. pre_tokenizer   ['hello', '[SEP]', 'you']       (tok.pre_tokenizer, e.g. Whitespace)
      4. model           ['hel', '##lo', '[SEP]', 'you'] (tok.model.tokenize per pre-token)
      5. post_processor  ['[CLS]', ..., '[SEP]']          (tok.post_processor), then truncation
                                                         and padding as configured

and every token keeps its character offsets into the ORIGINAL text. ``decode`` maps ids back
to tokens and runs ``tok.decoder``. :meth:`Tokenizer.trace` records every stage for one input
(what the Pipeline page draws), and :meth:`Tokenizer.train_from_iterator` trains the model
and returns the trainer's :class:`~tokviz.history.TrainingHistory`.

>>> from tokviz.models import WordLevel
>>> tok = Tokenizer(WordLevel({"[UNK]": 0, "hello": 1, "world": 2}, unk_token="[UNK]"))
>>> tok.encode("hello").ids
[1]

Speed: pipelines whose stages are local encode each distinct chunk of text once and reuse
it (:mod:`tokviz.fast_paths`; GPT-2 byte-level ones have their own lane below); the
general path handles everything else. ``encode_batch(..., processes=2)`` spreads a large
batch over processes (the GIL rules out threads).

What this version leaves out: byte offsets (``OffsetType.Byte``), multi-threading (use
processes), and HF's ``encode_special_tokens`` switch.
"""

from __future__ import annotations

import copy
import importlib
import json
import re
import unicodedata
from dataclasses import dataclass
from functools import partial
from itertools import accumulate, chain, count, islice, repeat
from operator import add, itemgetter, lt, sub
from pathlib import Path
from typing import Any, Iterable, Iterator, Sequence

from tokviz import _mutation
from tokviz._component import ArgumentTypeError, NegativeArgumentError, check_whole
from tokviz.added_vocabulary import AddedToken, AddedVocabulary
from tokviz.encoding import Encoding, flat_offsets_encoding, whole_sequence_ranges
from tokviz.engine.cut import CutPlan, added_pieces, cut_plan, encode_cut
from tokviz.errors import SpecialTokenError, TokvizError, UnknownIdError
from tokviz.fast_paths import encode_chunked, encode_processed, plan_for
from tokviz.models.base import Token
from tokviz.models.bpe.fast import ONE_TUPLE_LIMIT, ONE_TUPLES, bpe_word_encoder, byte_symbol_tokens, symbol_offsets_to_chars
from tokviz.processors import ByteLevel as ByteLevelProcessor
from tokviz.processors import BertProcessing as BertProcessor
from tokviz.processors import RobertaProcessing as RobertaProcessor
from tokviz.processors import TemplateProcessing as TemplateProcessor
from tokviz.processors import _TRIM_CHARS, trim_token_offsets
from tokviz.processes import PARALLEL_MIN_INPUTS, encode_in_processes

_STRATEGIES = ("longest_first", "only_first", "only_second")


# ---------------------------------------------------------------------- truncation / padding
@dataclass(frozen=True, slots=True)
class TruncationParams:
    max_length: int
    stride: int = 0
    strategy: str = "longest_first"
    direction: str = "right"

    def as_dict(self) -> dict[str, Any]:
        return {"max_length": self.max_length, "stride": self.stride, "strategy": self.strategy, "direction": self.direction}


@dataclass(frozen=True, slots=True)
class PaddingParams:
    length: int | None = None  # None: pad to the longest of the batch
    pad_to_multiple_of: int | None = None
    pad_id: int = 0
    pad_type_id: int = 0
    pad_token: str = "[PAD]"
    direction: str = "right"

    def as_dict(self) -> dict[str, Any]:
        return {
            "length": self.length,
            "pad_to_multiple_of": self.pad_to_multiple_of,
            "pad_id": self.pad_id,
            "pad_token": self.pad_token,
            "pad_type_id": self.pad_type_id,
            "direction": self.direction,
        }


def truncate_encodings(
    encoding: Encoding, pair: Encoding | None, params: TruncationParams
) -> tuple[Encoding, Encoding | None]:
    """Cut one sequence or a pair down to ``params.max_length`` tokens in all, as HF does.

    ``longest_first`` shares the budget: with max_length 6 and lengths (5, 3), the pair
    keeps (3, 3); with (2, 9) it keeps (2, 4).
    """
    max_length, stride, direction = params.max_length, params.stride, params.direction
    if max_length == 0:
        encoding.truncate(0, stride, direction)
        if pair is not None:
            pair.truncate(0, stride, direction)
        return encoding, pair
    total = len(encoding) + (len(pair) if pair is not None else 0)
    if total <= max_length:
        return encoding, pair
    to_remove = total - max_length
    if params.strategy == "longest_first":
        if pair is None:
            encoding.truncate(total - to_remove, stride, direction)
            return encoding, pair
        n1, n2 = len(encoding), len(pair)
        swap = n1 > n2
        if swap:
            n1, n2 = n2, n1
        n2 = n1 if n1 > max_length else max(n1, max_length - n1)
        if n1 + n2 > max_length:
            n1 = max_length // 2
            n2 = n1 + max_length % 2
        if swap:
            n1, n2 = n2, n1
        encoding.truncate(n1, stride, direction)
        pair.truncate(n2, stride, direction)
        return encoding, pair
    if params.strategy == "only_first":
        target = encoding
    else:
        if pair is None:
            raise TokvizError("Truncation strategy 'only_second' needs a pair of sequences, but only one was given.")
        target = pair
    if len(target) <= to_remove:
        raise TokvizError(
            f"Cannot truncate to {max_length} tokens with strategy {params.strategy!r}: the sequence it may "
            f"cut has only {len(target)} tokens but {to_remove} must go. Use 'longest_first' or a larger max_length."
        )
    target.truncate(len(target) - to_remove, stride, direction)
    return encoding, pair


def pad_encodings(encodings: list[Encoding], params: PaddingParams) -> None:
    """Pad every encoding to the batch's longest (or the fixed length), rounded up to the multiple."""
    if not encodings:
        return
    length = params.length if params.length is not None else max(len(e) for e in encodings)
    multiple = params.pad_to_multiple_of
    if multiple and length % multiple:
        length += multiple - length % multiple
    for encoding in encodings:
        encoding.pad(length, params.direction, params.pad_id, params.pad_type_id, params.pad_token)


def _template_middle(processor: Any, encoding: Encoding) -> Encoding | None:
    """The encoding of a single sequence before ``processor`` (a template or BERT's) added its
    special tokens to it, taken from between them in ``encoding`` (type ids 0, as
    :meth:`Tokenizer.encode` encodes a first sequence before processing), or None for other
    processors: RoBERTa's trims offsets, so its output is not its input.

    >>> from tokviz.processors import TemplateProcessing
    >>> template = TemplateProcessing(single="<s> $A:1 </s>", special_tokens=[("<s>", 0), ("</s>", 2)])
    >>> processed = template.process(Encoding.from_tokens([(7, "hi", (0, 2)), (8, "!", (2, 3))], type_id=0))
    >>> middle = _template_middle(template, processed)
    >>> middle.ids, middle.type_ids, middle.offsets, middle.special_tokens_mask
    ([7, 8], [0, 0], [(0, 2), (2, 3)], [0, 0])
    """
    kind = type(processor)
    if kind is BertProcessor:
        before = after = 1
    elif kind is TemplateProcessor:
        split = processor.single_parts()
        if split is None:
            return None
        before, after = len(split[1][0]), len(split[2][0])
    else:
        return None
    middle = encoding._slice(before, len(encoding) - after)
    middle._type_ids = (0,) * len(middle._ids)
    return middle


# ---------------------------------------------------------------------- trace records
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


# ---------------------------------------------------------------------- the tokenizer
class Tokenizer:
    """A model plus optional normalizer, pre-tokenizer, post-processor and decoder.

    Components are set by attribute, as in HF::

        tok = Tokenizer(models.BPE(vocab, merges))
        tok.normalizer = normalizers.NFKC()
        tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
        tok.post_processor = processors.ByteLevel(trim_offsets=True)
        tok.decoder = decoders.ByteLevel()
    """

    def __init__(self, model: Any) -> None:
        model = _adopt(model, "model")
        _check_component(model, "model")
        self._model = model
        self._normalizer: Any = None
        self._pre_tokenizer: Any = None
        self._post_processor: Any = None
        self._decoder: Any = None
        # Components (and the added vocabulary, "added") this tokenizer shares with a copy: the
        # first time user code reaches one through its getter, this tokenizer takes a private
        # copy (copy-on-write), while encoding keeps reading the shared one. See __copy__.
        self._shared: set[str] = set()
        self._added = AddedVocabulary()
        self._truncation: TruncationParams | None = None
        self._padding: PaddingParams | None = None
        self._word_cache: dict[str, tuple[tuple[int, ...], tuple[str, ...], tuple[tuple[int, int], ...]]] = {}
        self._word_cache_model: Any = None
        self._word_cache_epoch: int | None = None  # the model's count of cache clears it follows
        #: The byte-level fast path gives the same encodings as the general one (the
        #: tests compare both); set False to always take the general path.
        self.use_fast_path = True
        self._fast_plan: Any = None
        self._fast_plan_for: Any = None
        self._fast_plan_generation = -1
        # (normalizer, pre_tokenizer, model, edit generation, ChunkPlan or None): see tokviz.fast_paths.
        self._chunk_plan: Any = None
        self._cut_plan: Any = None  # (normalizer, pre_tokenizer, model, edit generation, CutPlan or None)
        #: The TrainingHistory of the last ``train`` / ``train_from_iterator`` (HF returns None from both;
        #: tokviz keeps what the training went through here).
        self.training_history: Any = None

    # ----------------------------------------------------------------- components
    # HF's components are shared handles: ``tok.model.dropout = 0.1`` edits the tokenizer's model.
    # A tokenizer made by ``copy.copy`` shares its components with the original until user code
    # reaches one through a getter, which then gives this tokenizer a private copy first.
    @property
    def model(self) -> Any:
        return self._own("model")

    @model.setter
    def model(self, model: Any) -> None:
        model = _adopt(model, "model")
        _check_component(model, "model")
        self._model = model
        self._shared.discard("model")
        self._own_added().refresh(model, self._normalizer)

    @property
    def normalizer(self) -> Any:
        return self._own("normalizer")

    @normalizer.setter
    def normalizer(self, normalizer: Any) -> None:
        normalizer = _adopt(normalizer, "normalizer")
        _check_component(normalizer, "normalizer")
        self._normalizer = normalizer
        self._shared.discard("normalizer")
        # Added tokens with normalized=True are matched in their normalized form.
        self._own_added().refresh(self._model, normalizer)

    @property
    def pre_tokenizer(self) -> Any:
        return self._own("pre_tokenizer")

    @pre_tokenizer.setter
    def pre_tokenizer(self, pre_tokenizer: Any) -> None:
        pre_tokenizer = _adopt(pre_tokenizer, "pre_tokenizer")
        _check_component(pre_tokenizer, "pre_tokenizer")
        self._pre_tokenizer = pre_tokenizer
        self._shared.discard("pre_tokenizer")

    @property
    def post_processor(self) -> Any:
        return self._own("post_processor")

    @post_processor.setter
    def post_processor(self, post_processor: Any) -> None:
        post_processor = _adopt(post_processor, "post_processor")
        _check_component(post_processor, "post_processor")
        self._post_processor = post_processor
        self._shared.discard("post_processor")

    @property
    def decoder(self) -> Any:
        return self._own("decoder")

    @decoder.setter
    def decoder(self, decoder: Any) -> None:
        decoder = _adopt(decoder, "decoder")
        _check_component(decoder, "decoder")
        self._decoder = decoder
        self._shared.discard("decoder")

    @property
    def encode_special_tokens(self) -> bool:
        """HF's switch: True encodes special tokens as the text they are made of (not matched whole)."""
        return self._added.encode_special_tokens

    @encode_special_tokens.setter
    def encode_special_tokens(self, value: bool) -> None:
        if not isinstance(value, bool):
            raise TypeError(f"encode_special_tokens must be True or False, got {type(value).__name__} {value!r:.60}.")
        added = self._own_added()
        added.encode_special_tokens = value
        added.refresh(self._model, self._normalizer)
        _mutation.bump()

    def _own(self, name: str) -> Any:
        """The component ``name``, made private to this tokenizer first if a copy shares it."""
        attribute = "_" + name
        shared = getattr(self, attribute)
        if name not in self._shared:
            return shared
        self._shared.discard(name)
        if shared is None:
            return None
        private = _private_copy(shared)
        setattr(self, attribute, private)
        # The copy equals the shared component, so what was derived from that one (encoding
        # plans, word caches) stays valid: re-key it instead of rebuilding it.
        plan = self._chunk_plan
        if plan is not None:
            self._chunk_plan = tuple(private if part is shared else part for part in plan[:3]) + tuple(plan[3:])
        if self._word_cache_model is shared:
            self._word_cache_model = private
        if self._fast_plan_for is shared:
            self._fast_plan_for = private
        return private

    def _own_added(self) -> AddedVocabulary:
        """The added vocabulary, made private to this tokenizer first if a copy shares it."""
        if "added" in self._shared:
            self._shared.discard("added")
            self._added = copy.copy(self._added)
        return self._added

    # ----------------------------------------------------------------- copies and pickling
    def __copy__(self) -> "Tokenizer":
        """An independent tokenizer, made cheaply: both share every component (and the added
        vocabulary) until one of them reaches it through a getter or changes it, which gives
        that one a private copy (see :meth:`_own`). Encoding reads the shared components, so
        a copy encodes at once with the original's warm caches.

        >>> from tokviz.models import BPE
        >>> original = Tokenizer(BPE({"a": 0, "b": 1, "ab": 2}, [("a", "b")]))
        >>> twin = copy.copy(original)
        >>> twin.model.dropout = 1.0
        >>> original.model.dropout is None, original.encode("ab").tokens, twin.encode("ab").tokens
        (True, ['ab'], ['a', 'b'])
        """
        twin = Tokenizer.__new__(Tokenizer)
        twin.__dict__.update(self.__dict__)
        names = {"model", "normalizer", "pre_tokenizer", "post_processor", "decoder", "added"}
        self._shared = set(names)
        twin._shared = set(names)
        return twin

    def __deepcopy__(self, memo: dict[int, Any]) -> "Tokenizer":
        return self.__copy__()  # already independent: nothing is shared once either side edits

    def __getstate__(self) -> bytes:
        """HF's pickled state: the tokenizer.json text as UTF-8 bytes."""
        return self.to_str().encode("utf-8")

    def __setstate__(self, state: bytes | str) -> None:
        text = state.decode("utf-8") if isinstance(state, (bytes, bytearray)) else state
        self.__dict__.update(Tokenizer.from_str(text).__dict__)

    def __reduce__(self) -> tuple[Any, ...]:
        # HF's JSON state, plus what tokviz keeps beside it (the training history).
        return (_tokenizer_from_state, (self.__getstate__(), self.training_history, self.use_fast_path))

    @property
    def truncation(self) -> dict[str, Any] | None:
        return None if self._truncation is None else self._truncation.as_dict()

    @property
    def padding(self) -> dict[str, Any] | None:
        return None if self._padding is None else self._padding.as_dict()

    # ----------------------------------------------------------------- vocabulary
    def get_vocab(self, with_added_tokens: bool = True) -> dict[str, int]:
        vocab = dict(self._model.get_vocab())
        if with_added_tokens:
            vocab.update(self._added.get_vocab())
        return vocab

    def get_vocab_size(self, with_added_tokens: bool = True) -> int:
        if with_added_tokens:
            return len(self.get_vocab(True))
        return self._model.get_vocab_size()

    def get_added_tokens_decoder(self) -> dict[int, AddedToken]:
        return self._added.get_added_tokens_decoder()

    def token_to_id(self, token: str) -> int | None:
        if not isinstance(token, str):
            raise ArgumentTypeError(f"token_to_id takes a token (a string), got {type(token).__name__} {token!r:.60}.")
        token_id = self._added.token_to_id(token)
        return token_id if token_id is not None else self._model.token_to_id(token)

    def id_to_token(self, id: int) -> str | None:
        if isinstance(id, bool) or not isinstance(id, int):
            id = check_whole("id_to_token", "id", id)
        elif id < 0:
            raise NegativeArgumentError(f"id_to_token takes an id >= 0, got {id}.")
        token = self._added.id_to_token(id)
        return token if token is not None else self._model.id_to_token(id)

    def add_tokens(self, tokens: Iterable[str | AddedToken]) -> int:
        """Add tokens matched whole before normalization; returns how many were new."""
        added = [_as_added_token(token, special=False) for token in _token_list(tokens)]
        return self._own_added().add_tokens(added, self._model, self._normalizer)

    def add_special_tokens(self, tokens: Iterable[str | AddedToken]) -> int:
        """Add special tokens (never normalized, skipped by ``decode(skip_special_tokens=True)``)."""
        added = [_as_added_token(token, special=True) for token in _token_list(tokens)]
        return self._own_added().add_tokens(added, self._model, self._normalizer)

    # ----------------------------------------------------------------- truncation / padding
    def num_special_tokens_to_add(self, is_pair: bool) -> int:
        if not isinstance(is_pair, bool):
            raise ArgumentTypeError(f"num_special_tokens_to_add takes is_pair=True or False, got {type(is_pair).__name__} {is_pair!r:.60}.")
        if self._post_processor is None:
            return 0
        return self._post_processor.num_special_tokens_to_add(is_pair)

    def enable_truncation(
        self, max_length: int, stride: int = 0, strategy: str = "longest_first", direction: str = "right"
    ) -> None:
        strategy = str(strategy).lower().replace("-", "_")
        if strategy not in _STRATEGIES:
            raise TokvizError(f"Unknown truncation strategy {strategy!r}; use one of {', '.join(_STRATEGIES)}.")
        direction = str(direction).lower()
        if direction not in ("left", "right"):
            raise TokvizError(f"The truncation direction must be 'left' or 'right', not {direction!r}.")
        max_length = check_whole("enable_truncation", "max_length", max_length)
        stride = check_whole("enable_truncation", "stride", stride)
        effective = int(max_length) - self.num_special_tokens_to_add(False)
        if effective < int(stride):
            raise TokvizError(
                f"The truncation stride ({stride}) must be smaller than the room left for text "
                f"({effective} = max_length {max_length} - {self.num_special_tokens_to_add(False)} special tokens)."
            )
        self._truncation = TruncationParams(int(max_length), int(stride), strategy, direction)

    def no_truncation(self) -> None:
        self._truncation = None

    def enable_padding(
        self,
        direction: str = "right",
        pad_id: int = 0,
        pad_type_id: int = 0,
        pad_token: str = "[PAD]",
        length: int | None = None,
        pad_to_multiple_of: int | None = None,
    ) -> None:
        direction = str(direction).lower()
        if direction not in ("left", "right"):
            raise TokvizError(f"The padding direction must be 'left' or 'right', not {direction!r}.")
        if not isinstance(pad_token, str):
            raise ArgumentTypeError(f"enable_padding pad_token must be a string, got {type(pad_token).__name__} {pad_token!r:.60}.")
        self._padding = PaddingParams(
            None if length is None else check_whole("enable_padding", "length", length),
            None if pad_to_multiple_of is None else check_whole("enable_padding", "pad_to_multiple_of", pad_to_multiple_of),
            check_whole("enable_padding", "pad_id", pad_id),
            check_whole("enable_padding", "pad_type_id", pad_type_id),
            pad_token,
            direction,
        )

    def no_padding(self) -> None:
        self._padding = None

    # ----------------------------------------------------------------- encoding
    def encode(
        self,
        sequence: str | Sequence[str],
        pair: str | Sequence[str] | None = None,
        is_pretokenized: bool = False,
        add_special_tokens: bool = True,
    ) -> Encoding:
        """Encode one sequence, or a pair, into an :class:`Encoding` (offsets into the original).

        With ``is_pretokenized=True`` each input is a list of words; each word is encoded
        on its own (``word_ids`` are the word positions, offsets are inside each word).
        """
        if pair is None and not is_pretokenized and self.use_fast_path and type(sequence) is str:
            truncation = self._truncation
            if truncation is None:
                return self._fast_lane(sequence, add_special_tokens)
            # Truncation that cuts nothing (the text fits, special tokens included) changes
            # nothing, overflowing encodings included: the fast lane's encoding stands.
            encoding = self._fast_lane(sequence, add_special_tokens, pad=False)
            if len(encoding) <= truncation.max_length:
                if self._padding is not None:
                    pad_encodings([encoding], self._padding)
                return encoding
            # Too long: truncate the sequence's own encoding, which is the fast lane's
            # between the template's special tokens (not encoded again).
            middle = _template_middle(self._post_processor, encoding) if add_special_tokens else None
            if middle is not None:
                return self.post_process(middle, None, add_special_tokens)
        encoding = self._encode_input(sequence, 0, is_pretokenized)
        pair_encoding = None if pair is None else self._encode_input(pair, 1, is_pretokenized)
        return self.post_process(encoding, pair_encoding, add_special_tokens)

    def _fast_lane(self, sequence: str, add_special_tokens: bool, pad: bool = True) -> Encoding:
        """:meth:`encode` of one untruncated string: a byte-level sequence post-processed by
        ByteLevel, RobertaProcessing (its offsets trimmed in the same pass) or nothing, else
        the chunk-cached or general path and the post-processor's one-sequence step; padded
        (unless ``pad`` is False)."""
        padding = self._padding if pad else None
        processor = self._post_processor
        kind = type(processor)
        tried = processor is None or kind is ByteLevelProcessor or kind is RobertaProcessor
        if tried:
            trim = (processor.add_prefix_space,) if processor is not None and processor.trim_offsets else ()
            encoding = self._fast_byte_level(sequence, 0, None, trim)
            if encoding is not None:
                if kind is RobertaProcessor:
                    encoding = processor.wrap_trimmed(encoding, add_special_tokens)
                elif processor is not None:
                    encoding._sequence_ranges = whole_sequence_ranges(len(encoding._ids))  # (set_sequence_id(0), shared)
                if padding is not None:
                    pad_encodings([encoding], padding)
                return encoding
        encoding = None
        if add_special_tokens and (kind is TemplateProcessor or kind is BertProcessor):
            encoding = self._fast_byte_level(sequence, 0, None)
            tried = True
            if encoding is None:
                # The whole-piece fields between the template's special tokens, in one step.
                split = processor.single_parts()
                plan = None if split is None or getattr(self._model, "alpha", None) else plan_for(self)
                if plan is not None:
                    processed = encode_processed(self, plan, sequence, split)
                    if processed is not None:
                        if padding is not None:
                            pad_encodings([processed], padding)
                        return processed
        if encoding is None:
            encoding = self._encode_sequence(sequence, 0, None, tried)
        if processor is not None:
            encoding = processor.process(encoding, None, add_special_tokens)
        if padding is not None:
            pad_encodings([encoding], padding)
        return encoding

    def encode_batch(
        self,
        inputs: Iterable[Any],
        is_pretokenized: bool = False,
        add_special_tokens: bool = True,
        processes: int | None = None,
    ) -> list[Encoding]:
        """Encode many inputs (each a sequence or a ``(sequence, pair)`` tuple); padding is per batch.

        HF encodes a batch on all cores with threads; pure Python cannot (the GIL), so
        ``processes=N`` shares a large batch (at least ``PARALLEL_MIN_INPUTS`` inputs) between
        this process and N - 1 workers, forked on Linux so that they start from this
        tokenizer as it is (word caches included). Same encodings either way; a pipeline too
        cheap to gain from it stays in this process (:mod:`tokviz.processes` says how).

        >>> from tokviz.models import WordLevel
        >>> tok = Tokenizer(WordLevel({"[UNK]": 0, "hello": 1}, unk_token="[UNK]"))
        >>> [e.ids for e in tok.encode_batch(["hello", "bye"], processes=2)]
        [[1], [0]]
        """
        self._check_batch(inputs, is_pretokenized)
        items = inputs if isinstance(inputs, list) else list(inputs)
        if processes is not None and int(processes) > 1 and len(items) >= PARALLEL_MIN_INPUTS:
            encodings = encode_in_processes(self, items, is_pretokenized, add_special_tokens, int(processes))
        else:
            encodings = self._encode_items(items, is_pretokenized, add_special_tokens)
        if self._padding is not None:
            pad_encodings(encodings, self._padding)
        return encodings

    def _encode_items(self, items: list[Any], is_pretokenized: bool, add_special_tokens: bool) -> list[Encoding]:
        encode = self.encode
        if not is_pretokenized and all(isinstance(item, str) for item in items):
            return [encode(item, None, False, add_special_tokens) for item in items]
        encodings = []
        for item in items:
            if _is_pair_input(item, is_pretokenized):
                encodings.append(encode(item[0], item[1], is_pretokenized, add_special_tokens))
            else:
                encodings.append(encode(item, None, is_pretokenized, add_special_tokens))
        return encodings

    def _encode_input(self, sequence: Any, type_id: int, is_pretokenized: bool) -> Encoding:
        if not is_pretokenized:
            if not isinstance(sequence, str):
                raise ArgumentTypeError(
                    f"encode takes a string (or is_pretokenized=True with a list of words), not {type(sequence).__name__} {sequence!r:.60}."
                )
            return self._encode_sequence(sequence, type_id, None)
        if isinstance(sequence, str):
            raise TokvizError("With is_pretokenized=True, give a list of words, not a string.")
        merged = Encoding()
        for word_index, word in enumerate(sequence):
            merged.merge_with(self._encode_sequence(str(word), type_id, word_index), growing_offsets=False)
        return merged

    def post_process(
        self, encoding: Encoding, pair: Encoding | None = None, add_special_tokens: bool = True
    ) -> Encoding:
        """Truncate, add the special tokens, pad: HF's ``post_process``."""
        for name, value in (("encoding", encoding), ("pair", pair)):
            if not isinstance(value, Encoding) and not (name == "pair" and value is None):
                raise ArgumentTypeError(f"post_process takes Encodings, got {name}={type(value).__name__} {value!r:.60}.")
        if self._truncation is not None:
            params = self._truncation
            added = self.num_special_tokens_to_add(pair is not None) if add_special_tokens else 0
            if added:
                if params.max_length < added:
                    raise TokvizError(
                        f"Truncation max_length {params.max_length} leaves no room: the post-processor adds {added} tokens."
                    )
                params = TruncationParams(params.max_length - added, params.stride, params.strategy, params.direction)
            encoding, pair = truncate_encodings(encoding, pair, params)
        if self._post_processor is not None:
            final = self._post_processor.process(encoding, pair, add_special_tokens)
        elif pair is None:
            final = encoding
        else:
            final = Encoding()
            for sequence_id, item in enumerate((encoding, pair)):
                item.set_sequence_id(sequence_id)
                final.merge_with(item, growing_offsets=False)
        if self._padding is not None:
            pad_encodings([final], self._padding)
        return final

    def _encode_sequence(
        self, sequence: str, type_id: int, word_index: int | None, byte_level_tried: bool = False
    ) -> Encoding:
        if self.use_fast_path:
            if not byte_level_tried:
                fast = self._fast_byte_level(sequence, type_id, word_index)
                if fast is not None:
                    return fast
            # A sampling Unigram (alpha) draws anew each time: no chunk may be reused.
            plan = None if getattr(self._model, "alpha", None) else plan_for(self)
            if plan is not None:
                fast = encode_chunked(self, plan, sequence, type_id, word_index)
                if fast is not None:
                    return fast
            cut = self._engine_cut_plan()
            if cut is not None:
                fast = encode_cut(cut, self._added, sequence, type_id, word_index)
                if fast is not None:
                    return fast
        return self._encoding_from_splits(self._pipeline(sequence)[0], type_id, word_index)

    def _prepare_engine(self) -> None:
        """Build the engine's plans now (a load does, as HF's loaded tokenizers are ready to
        encode): the chunk plan (the model's word encoder and its tables), and the byte-level
        lane's (with the plan's word encoder, or its own when the pipeline has no plan:
        StarCoder's Digits before ByteLevel). A Unigram model's tables take passes over its
        pieces: 45 ms of XLM-R's 250k; a converted Llama's plan 3 ms."""
        plan_for(self)
        if self._pre_tokenizer is not None:
            self._byte_level_lane(self._pre_tokenizer, self._model)

    def _engine_cut_plan(self) -> CutPlan | None:
        """The engine's general lane for the current components (made again when one is
        replaced or edited)."""
        normalizer, pre_tokenizer, model = self._normalizer, self._pre_tokenizer, self._model
        generation = _mutation.generation()
        cached = self._cut_plan
        if cached is not None and cached[0] is normalizer and cached[1] is pre_tokenizer and cached[2] is model and cached[3] == generation:
            return cached[4]
        plan = cut_plan(normalizer, pre_tokenizer, model)
        self._cut_plan = (normalizer, pre_tokenizer, model, generation, plan)
        return plan

    def _pipeline(self, sequence: str) -> tuple[list[Any], set[int]]:
        """Stages 1-4 on one sequence: the tokenized splits, and the ``id()`` of the
        NormalizedString of every split that is an added token."""
        pre_tokenized = self._extract_and_normalize(sequence)
        added = {id(split.normalized) for split in pre_tokenized.splits if split.tokens is not None}
        if self._pre_tokenizer is not None:
            self._pre_tokenizer.pre_tokenize(pre_tokenized)
        model_tokenize = self._model.tokenize
        pre_tokenized.tokenize(lambda normalized: model_tokenize(normalized.normalized))
        return pre_tokenized.splits, added

    def _extract_and_normalize(self, sequence: str) -> Any:
        """Cut out raw-matched added tokens, normalize the rest, cut out normalized-matched ones."""
        from tokviz.normalized import PreTokenizedString

        pre_tokenized = PreTokenizedString(sequence)
        has_raw, has_normalized = self._added.has_matchers()
        if has_raw:
            pre_tokenized.splits = self._split_on_added(pre_tokenized.splits, normalized=False)
        normalizer = self._normalizer
        if normalizer is not None:
            for split in pre_tokenized.splits:
                if split.tokens is None:
                    normalizer.normalize(split.normalized)
        if has_normalized:
            pre_tokenized.splits = self._split_on_added(pre_tokenized.splits, normalized=True)
        # Like HF's split, which drops pieces that normalization emptied.
        pre_tokenized.splits = [
            s for s in pre_tokenized.splits if s.tokens is not None or not s.normalized.is_empty()
        ]
        return pre_tokenized

    def _split_on_added(self, splits: list[Any], normalized: bool) -> list[Any]:
        from tokviz.normalized import Split

        result = []
        for split in splits:
            if split.tokens is not None:
                result.append(split)
                continue
            for token_id, (start, end) in self._added.find_matches(split.normalized.normalized, normalized):
                piece = split.normalized.slice(start, end)
                if piece is None or piece.is_empty():
                    continue
                if token_id is None:
                    result.append(Split(piece))
                else:
                    value = piece.normalized
                    result.append(Split(piece, [Token(token_id, value, (0, len(value)))]))
        return result

    @staticmethod
    def _encoding_from_splits(splits: list[Any], type_id: int, word_index: int | None) -> Encoding:
        ids: list[int] = []
        tokens: list[str] = []
        offsets: list[tuple[int, int]] = []
        words: list[int | None] = []
        for index, split in enumerate(splits):
            normalized = split.normalized
            word = index if word_index is None else word_index
            convert = normalized.convert_offsets_to_original
            for token in split.tokens:
                original = convert(token.offsets[0], token.offsets[1])
                ids.append(token.id)
                tokens.append(token.value)
                offsets.append(original if original is not None else tuple(token.offsets))
                words.append(word)
        n = len(ids)
        return Encoding(ids, (type_id,) * n, tokens, words, offsets, (0,) * n, (1,) * n, None, {})

    def _byte_level_lane(self, pre_tokenizer: Any, model: Any) -> tuple[Any, ...] | None:
        """The byte-level lane's plan for these components (``(add_prefix_space, findall,
        word_entry)``), made when one is replaced or edited, or None when the lane does not apply."""
        generation = _mutation.generation()
        if (
            self._word_cache_model is not model
            or self._fast_plan_for is not pre_tokenizer
            or self._fast_plan_generation != generation
        ):
            # The plan and the word cache hold until a component is replaced or edited.
            self._word_cache = {}
            self._word_cache_epoch = getattr(model, "_cache_epoch", None)
            self._word_cache_model = model
            self._fast_plan_for = pre_tokenizer
            self._fast_plan_generation = generation
            plan = _byte_level_plan(pre_tokenizer)
            if plan is not None and _is_deterministic(model):
                # The chunk plan's word encoder when it has one for this model (made with the
                # tokenizer's load): one set of proofs, and no tables built in a first encode.
                chunk_plan = self._chunk_plan
                shared = None
                if chunk_plan is not None and chunk_plan[2] is model and chunk_plan[3] == generation and chunk_plan[4] is not None:
                    shared = chunk_plan[4].bpe
                self._fast_plan = (*plan, _byte_word_entries(model, shared))
            else:
                self._fast_plan = None
        return self._fast_plan

    # ----------------------------------------------------------------- byte-level fast path
    def _fast_byte_level(
        self, sequence: str, type_id: int, word_index: int | None, trim: tuple[bool] | tuple[()] = ()
    ) -> Encoding | None:
        """The GPT-2 / RoBERTa pipeline without per-character objects (same result as the
        general path, which the tests check): no normalizer, a ByteLevel pre-tokenizer, a
        deterministic model. Returns None when it does not apply.

        ``trim=(add_prefix_space,)`` also applies the ByteLevel post-processor's offset
        trimming (from offsets precomputed per word), for :meth:`encode`'s fast lane.
        """
        pre_tokenizer = self._pre_tokenizer
        if pre_tokenizer is None:
            return None
        normalizer = self._normalizer
        if normalizer is not None:
            # A Unicode normal form (Qwen2's NFC) that leaves this text as it is: nothing to align.
            form = type(normalizer).__name__
            if form not in _NORMAL_FORMS or type(normalizer).__module__ != "tokviz.normalizers":
                return None
            if not sequence.isascii() and not unicodedata.is_normalized(form, sequence):
                return None
        model = self._model
        plan = self._byte_level_lane(pre_tokenizer, model)
        if plan is None:
            return None
        if self._word_cache_epoch is not None and self._word_cache_epoch != model._cache_epoch:
            self._word_cache = {}  # model._clear_cache()
            self._word_cache_epoch = model._cache_epoch
        add_prefix_space, findall, word_entry = plan
        cache = self._word_cache
        cache_get = cache.get
        starts_field = _FIELD_TRIMMED_STARTS if trim else _FIELD_STARTS
        ends_field = _FIELD_TRIMMED_ENDS if trim else _FIELD_ENDS

        ids: list[int] = []
        tokens: list[str] = []
        starts: list[int] = []  # (the offsets as two runs of ints: see flat_offsets_encoding)
        ends: list[int] = []
        words: list[int | None] = []
        split_index = 0

        if not sequence:
            pieces: list[tuple[int | None, int, int]] = []
        elif self._added.is_empty or not self._added.may_occur_in(sequence):
            pieces = [(None, 0, len(sequence))]
        else:
            pieces = added_pieces(self._added, sequence)

        for token_id, start, end in pieces:
            if token_id is not None:
                value = sequence[start:end]
                ids.append(token_id)
                tokens.append(value)
                if trim:
                    start, end = trim_token_offsets(value, start, end, not starts or start == 0, trim[0])
                starts.append(start)
                ends.append(end)
                words.append(split_index if word_index is None else word_index)
                split_index += 1
                continue
            text = sequence[start:end] if (start or end != len(sequence)) else sequence
            prefixed = add_prefix_space and not text.startswith(" ")
            if prefixed:
                text = " " + text
            word_list = findall(text) if findall is not None else [text]
            if word_list is None:
                return None  # a Split whose matches leave gaps in this text: the general path
            entries = list(map(cache_get, word_list))
            if None in entries:
                for position, entry in enumerate(entries):
                    if entry is None:
                        # Looked up again: a word repeated in this text is tokenized once.
                        entry = cache_get(word_list[position]) or word_entry(word_list[position])
                        if len(cache) < 200_000:
                            cache[word_list[position]] = entry
                        entries[position] = entry
            # Char j of ``text`` is original char start + j, or start + j - 1 after the
            # prefix space (which shares the first char's alignment, as HF's prepend does).
            # Everything below runs in C (map/chain/zip/accumulate), no Python loop per token.
            origin = start - 1 if prefixed else start
            first = len(ids)
            ids.extend(chain.from_iterable(map(_FIELD_IDS, entries)))
            added_count = len(ids) - first
            tokens.extend(chain.from_iterable(map(_FIELD_VALUES, entries)))
            if all(map(_FIELD_CONTIGUOUS, entries)):
                # The tokens tile the text, each starting where the previous one ended.
                token_starts = list(accumulate(chain.from_iterable(map(_FIELD_LENGTHS, entries)), initial=origin))
                if trim:
                    starts.extend(map(add, token_starts, chain.from_iterable(map(_FIELD_TRIM_START, entries))))
                    ends.extend(map(add, token_starts, chain.from_iterable(map(_FIELD_TRIM_END, entries))))
                else:
                    starts.extend(islice(token_starts, len(token_starts) - 1))
                    ends.extend(islice(token_starts, 1, None))
            else:
                # A char split across tokens: its tokens overlap, so shift each word's offsets.
                counts = list(map(len, map(_FIELD_IDS, entries)))
                bases = list(chain.from_iterable(map(repeat, accumulate(map(len, word_list), initial=origin), counts)))
                starts.extend(map(add, chain.from_iterable(map(starts_field, entries)), bases))
                ends.extend(map(add, chain.from_iterable(map(ends_field, entries)), bases))
            if word_index is not None:
                words.extend(repeat(word_index, added_count))
            elif added_count == len(entries):
                words.extend(range(split_index, split_index + added_count))
            else:
                counts = list(map(len, map(_FIELD_IDS, entries)))
                words.extend(chain.from_iterable(map(repeat, count(split_index), counts)))
            split_index += len(entries)
            if prefixed or (trim and (first == 0 or start == 0)):
                # The first word: redo its offsets by the general rules (prefix space, is_first).
                head = entries[0]
                for k, (s, e, value) in enumerate(zip(head[2], head[3], head[1])):
                    if prefixed:
                        s, e = start + max(s - 1, 0), start + max(e - 1, 1)
                    else:
                        s, e = s + start, e + start
                    if trim and (value[:1] in _TRIM_CHARS or value[-1:] in _TRIM_CHARS):  # (others keep theirs)
                        s, e = trim_token_offsets(value, s, e, first + k == 0 or s == 0, trim[0])
                    starts[first + k] = s
                    ends[first + k] = e
        n = len(ids)
        return flat_offsets_encoding(
            tuple(ids), (type_id,) * n, tuple(tokens), tuple(words), (tuple(starts), tuple(ends), 0, 0), (0,) * n, (1,) * n, {}
        )

    # ----------------------------------------------------------------- decoding
    def decode(self, ids: Sequence[int], skip_special_tokens: bool = True) -> str:
        """Ids back to text through the decoder (tokens joined by spaces without one).

        An id that is neither in the model nor an added token raises
        :class:`~tokviz.errors.UnknownIdError` naming it (HF silently drops it).
        """
        if isinstance(ids, (str, bytes)) or not hasattr(ids, "__iter__"):
            raise ArgumentTypeError(f"decode takes a list of ids, got {type(ids).__name__} {ids!r:.60}.")
        tokens = []
        for token_id in ids:
            if type(token_id) is not int or token_id < 0:
                if type(token_id) is int or (not isinstance(token_id, bool) and hasattr(token_id, "__index__") and token_id.__index__() < 0):
                    raise NegativeIdError(
                        f"Cannot decode the id {token_id}: it is not in the vocabulary (ids go from 0 to {self.get_vocab_size(True) - 1})."
                    )
                token_id = check_whole("decode", "id", token_id)
            token = self.id_to_token(token_id)
            if token is None:
                raise UnknownIdError(
                    f"Cannot decode the id {token_id}: it is not in the vocabulary "
                    f"(ids go from 0 to {self.get_vocab_size(True) - 1})."
                )
            if skip_special_tokens and self._added.is_special_token(token):
                continue
            tokens.append(token)
        if self._decoder is not None:
            return self._decoder.decode(tokens)
        return " ".join(tokens)

    def decode_batch(self, sequences: Iterable[Sequence[int]], skip_special_tokens: bool = True) -> list[str]:
        return [self.decode(ids, skip_special_tokens) for ids in sequences]

    # ----------------------------------------------------------------- trace
    def trace(self, text: str, pair: str | None = None) -> TokenizerTrace:
        """Every stage for one input: see :class:`TokenizerTrace`.

        >>> from tokviz.models import WordLevel
        >>> tok = Tokenizer(WordLevel({"[UNK]": 0, "hi": 1}, unk_token="[UNK]"))
        >>> t = tok.trace("hi")
        >>> [p.text for p in t.sequences[0].pre_tokens], t.decoded, t.round_trip
        (['hi'], 'hi', True)
        """
        sequences = []
        encodings = []
        for type_id, item in enumerate((text, pair)):
            if item is None:
                continue
            splits, added = self._pipeline(item)
            encodings.append(self._encoding_from_splits(splits, type_id, None))
            sequences.append(self._trace_sequence(item, splits, added))
        encoding = self.post_process(encodings[0], encodings[1] if len(encodings) > 1 else None, True)
        decoded = self.decode(encoding._ids, skip_special_tokens=True)
        return TokenizerTrace(tuple(sequences), encoding, decoded)

    def _trace_sequence(self, text: str, splits: list[Any], added_splits: set[int]) -> SequenceTrace:
        # The normalized text of the whole sequence (before pre-tokenization), with its alignment.
        from tokviz.normalized import NormalizedString

        normalized_parts: list[str] = []
        alignments: list[tuple[int, int]] = []
        for split in self._extract_and_normalize(text).splits:
            normalized_parts.append(split.normalized.normalized)
            alignments.extend(split.normalized.alignments)
        normalized = "".join(normalized_parts)
        changed = tuple(
            end - start != 1 or text[start:end] != char for char, (start, end) in zip(normalized, alignments)
        )
        pre_tokens = []
        for split in splits:
            ns: NormalizedString = split.normalized
            convert = ns.convert_offsets_to_original
            model_tokens = tuple(
                Token(t.id, t.value, convert(t.offsets[0], t.offsets[1]) or tuple(t.offsets)) for t in split.tokens
            )
            pre_tokens.append(PreTokenTrace(ns.normalized, ns.offsets_original(), model_tokens, id(ns) in added_splits))
        sequence_tokens = [t.value for p in pre_tokens for t in p.tokens]
        if self._decoder is not None:
            decoded = self._decoder.decode(sequence_tokens)
        else:
            decoded = " ".join(sequence_tokens)
        return SequenceTrace(
            original=text,
            normalized=normalized,
            alignments=tuple(alignments),
            changed=changed,
            pre_tokens=tuple(pre_tokens),
            decoded=decoded,
            round_trip=decoded == normalized,
        )

    # ----------------------------------------------------------------- training
    def train_from_iterator(
        self, iterator: Iterable[str], trainer: Any, length: int | None = None, progress: Any = None
    ) -> Any:
        """Train the model on texts and return ``None``, as HF does; the trainer's TrainingHistory
        (every merge, score and pruning round) is kept as :attr:`training_history`.

        Texts are normalized and pre-tokenized with this tokenizer's components and counted
        (added tokens are not cut out, as in HF); the trained model replaces ``self.model``
        and the trainer's special tokens are added as special tokens, in order.
        """
        from tokviz.word_counts import count_words

        if not callable(getattr(trainer, "train_from_word_counts", None)):
            hint = " (a ParityBpeTrainer trains with its own train_from_iterator(tokenizer, [texts per language]))" if type(trainer).__name__ == "ParityBpeTrainer" else ""
            raise TypeError(f"'{type(trainer).__name__}' object is not an instance of 'Trainer'{hint}.")
        check_model = getattr(trainer, "check_model", None)
        if check_model is not None:  # name the wrong trainer before reading a word (HF: even for an empty corpus)
            check_model(self._model)
        texts = iterator
        if length is not None and not hasattr(iterator, "__len__"):
            texts = _SizedIterable(iterator, length)
        word_counts = count_words(texts, self._normalizer, self._pre_tokenizer, progress)
        history = trainer.train_from_word_counts(word_counts, progress)
        # HF's trainers keep the options of the model they train (unk_token, dropout, ...):
        # the history carries them into its model and every model_at(k).
        if hasattr(history, "for_model"):
            history = history.for_model(self._model)
        self.model = history.model
        special_tokens = getattr(history, "special_tokens", ()) or getattr(trainer, "special_tokens", ())
        if special_tokens:
            self.add_special_tokens([_content(t) if not isinstance(t, AddedToken) else t for t in special_tokens])
        self.training_history = history
        finish_progress_lines(trainer)
        return None

    def train(self, files: Sequence[str | Path], trainer: Any = None, progress: Any = None) -> Any:
        """Train on text files, line by line (line ends kept, as HF reads them); returns ``None``, the
        history is :attr:`training_history`."""
        if trainer is None:
            raise TokvizError("Tokenizer.train needs a trainer, e.g. trainers.BpeTrainer(vocab_size=1000).")
        if isinstance(files, (str, Path)):
            files = [files]

        def lines() -> Iterator[str]:
            for path in files:
                with open(path, encoding="utf-8", newline="") as handle:
                    yield from handle

        self.train_from_iterator(lines(), trainer, progress=progress)

    # ----------------------------------------------------------------- serialization
    def to_str(self, pretty: bool = False) -> str:
        from tokviz.serialization import tokenizer_to_str

        return tokenizer_to_str(self, pretty)

    def save(self, path: str | Path, pretty: bool = True) -> None:
        Path(path).write_text(self.to_str(pretty), encoding="utf-8")

    @staticmethod
    def from_str(json: str) -> "Tokenizer":
        from tokviz.serialization import tokenizer_from_str

        return tokenizer_from_str(json)

    @staticmethod
    def from_file(path: str | Path) -> "Tokenizer":
        from tokviz.serialization import tokenizer_from_file

        return tokenizer_from_file(path)

    @staticmethod
    def from_pretrained(identifier: str, revision: str = "main", token: str | None = None) -> "Tokenizer":
        """HF's ``Tokenizer.from_pretrained("bert-base-uncased")``: the ``tokenizer.json`` of a
        model repository on the Hugging Face Hub (through the ``huggingface_hub`` package, which
        caches it and honours ``HF_HUB_OFFLINE``), loaded with :meth:`from_file`."""
        for name, value in (("identifier", identifier), ("revision", revision)):
            if not isinstance(value, str):
                raise ArgumentTypeError(f"from_pretrained {name} must be a string, got {type(value).__name__} {value!r:.60}.")
        try:
            from huggingface_hub import hf_hub_download
        except ImportError as error:
            raise TokvizError(
                "Tokenizer.from_pretrained downloads from the Hugging Face Hub with the huggingface_hub package: "
                "pip install huggingface_hub (or download tokenizer.json and use Tokenizer.from_file)."
            ) from error
        path = hf_hub_download(identifier, "tokenizer.json", revision=revision, token=token)
        return Tokenizer.from_file(path)

    def __repr__(self) -> str:
        """HF's repr: every section of tokenizer.json, the model in full."""
        return self._debug(None)

    def __str__(self) -> str:
        """HF's str: as the repr, but lists and maps past 5 items end in ``...``."""
        return self._debug(5)

    def _debug(self, limit: int | None) -> str:
        from tokviz._component import hf_debug

        truncation = self._truncation
        truncation_text = "None" if truncation is None else (
            f"TruncationParams(direction={truncation.direction.capitalize()}, max_length={truncation.max_length}, "
            f"strategy={''.join(part.capitalize() for part in truncation.strategy.split('_'))}, stride={truncation.stride})"
        )
        padding = self._padding
        padding_text = "None" if padding is None else (
            f"PaddingParams(strategy={'BatchLongest' if padding.length is None else f'Fixed({padding.length})'}, "
            f"direction={padding.direction.capitalize()}, pad_to_multiple_of={padding.pad_to_multiple_of}, "
            f"pad_id={padding.pad_id}, pad_type_id={padding.pad_type_id}, pad_token={hf_debug(padding.pad_token)})"
        )
        added = [token.to_dict(token_id) for token_id, token in self._added.get_added_tokens_decoder().items()]
        parts = [
            'version="1.0"', f"truncation={truncation_text}", f"padding={padding_text}",
            f"added_tokens={hf_debug(added, limit)}",
        ]
        for name in ("normalizer", "pre_tokenizer", "post_processor", "decoder"):
            component = getattr(self, "_" + name)
            parts.append(f"{name}={'None' if component is None else repr(component)}")
        model = self._model
        parts.append(f"model={str(model) if limit is not None else repr(model)}")
        return f"Tokenizer({', '.join(parts)})"

    # ----------------------------------------------------------------- HF's other ways in
    def encode_batch_fast(
        self, input: Iterable[Any], is_pretokenized: bool = False, add_special_tokens: bool = True
    ) -> list[Encoding]:
        """HF's faster batch (it skips offsets); tokviz's offsets cost little, so this is
        :meth:`encode_batch` and the offsets are right."""
        return self.encode_batch(input, is_pretokenized, add_special_tokens)

    async def async_encode(
        self, sequence: Any, pair: Any = None, is_pretokenized: bool = False, add_special_tokens: bool = True
    ) -> Encoding:
        """:meth:`encode` to ``await`` (run in a worker thread, as HF runs it off the event loop)."""
        import asyncio

        return await asyncio.to_thread(self.encode, sequence, pair, is_pretokenized, add_special_tokens)

    async def async_encode_batch(
        self, input: Iterable[Any], is_pretokenized: bool = False, add_special_tokens: bool = True
    ) -> list[Encoding]:
        """:meth:`encode_batch` to ``await``."""
        import asyncio

        self._check_batch(input, is_pretokenized)
        return await asyncio.to_thread(self.encode_batch, input, is_pretokenized, add_special_tokens)

    async def async_encode_batch_fast(
        self, input: Iterable[Any], is_pretokenized: bool = False, add_special_tokens: bool = True
    ) -> list[Encoding]:
        """:meth:`encode_batch_fast` to ``await``."""
        return await self.async_encode_batch(input, is_pretokenized, add_special_tokens)

    async def async_decode_batch(self, sequences: Iterable[Sequence[int]], skip_special_tokens: bool = True) -> list[str]:
        """:meth:`decode_batch` to ``await``."""
        import asyncio

        return await asyncio.to_thread(self.decode_batch, sequences, skip_special_tokens)

    @staticmethod
    def from_buffer(buffer: bytes) -> "Tokenizer":
        """A tokenizer from tokenizer.json bytes (HF's ``from_buffer``)."""
        if not isinstance(buffer, (bytes, bytearray, memoryview)):
            raise TypeError(f"from_buffer takes bytes, got {type(buffer).__name__}.")
        return Tokenizer.from_str(bytes(buffer).decode("utf-8"))

    @staticmethod
    def _check_batch(inputs: Any, is_pretokenized: bool) -> None:
        """HF's ``TypeError`` for a batch that is not a list or tuple of inputs."""
        if isinstance(inputs, (str, bytes)) or not hasattr(inputs, "__iter__"):
            raise TypeError(
                f"encode_batch takes a list of inputs (texts, (text, pair) tuples or word lists), "
                f"got {type(inputs).__name__} {inputs!r:.60}."
            )


# ---------------------------------------------------------------------- helpers
def _private_copy(component: Any) -> Any:
    """A copy of a component, or the component itself when it cannot be copied (a custom
    Python component belongs to the user's code anyway)."""
    try:
        return copy.copy(component)
    except Exception:  # noqa: BLE001 - e.g. a custom component, which cannot be serialized
        return component


def _tokenizer_from_state(state: bytes, training_history: Any = None, use_fast_path: bool = True) -> Tokenizer:
    tokenizer = Tokenizer.__new__(Tokenizer)
    tokenizer.__setstate__(state)
    tokenizer.training_history = training_history
    tokenizer.use_fast_path = use_fast_path
    return tokenizer


#: How many progress stages HF's trainers finish (each prints an empty line when shown).
_PROGRESS_STAGES = {"BpeTrainer": 3, "WordPieceTrainer": 3, "UnigramTrainer": 2, "ParityBpeTrainer": 1}


def finish_progress_lines(trainer: Any) -> None:
    """HF's trainers with ``show_progress=True`` end every progress stage with an empty line
    on the process's standard output (file descriptor 1, as Rust's ``println!``; the bars
    themselves go to a terminal only). tokviz writes the same lines the same way, so a
    script or notebook prints the same on both libraries."""
    stages = _PROGRESS_STAGES.get(type(trainer).__name__, 0)
    if not stages or getattr(trainer, "show_progress", False) is not True:
        return
    import os
    import sys

    try:
        sys.stdout.flush()
        os.write(1, b"\n" * stages)
    except (OSError, ValueError, AttributeError):  # no standard output (a service, a closed stream)
        pass


_BUILDERS = {
    "model": "tokviz.serialization:model_from_dict",
    "normalizer": "tokviz.normalizers:from_dict",
    "pre_tokenizer": "tokviz.pre_tokenizers:from_dict",
    "post_processor": "tokviz.processors:from_dict",
    "decoder": "tokviz.decoders:from_dict",
}


#: What each component must be able to do (HF checks the class; tokviz the methods, so
#: custom components and tokviz's own all pass).
class NegativeIdError(UnknownIdError, OverflowError):
    """An id below zero given to decode (HF raises ``OverflowError``)."""


_COMPONENT_METHODS = {
    "model": ("tokenize", "token_to_id"),
    "normalizer": ("normalize_str",),
    "pre_tokenizer": ("pre_tokenize_str",),
    "post_processor": ("process", "num_special_tokens_to_add"),
    "decoder": ("decode",),
}


def _check_component(component: Any, section: str) -> None:
    if component is None and section != "model":
        return
    if not all(callable(getattr(component, method, None)) for method in _COMPONENT_METHODS[section]):
        kind = {"model": "a Model (e.g. models.BPE())", "pre_tokenizer": "a PreTokenizer", "post_processor": "a PostProcessor"}.get(
            section, f"a {section.capitalize()}"
        )
        none = "" if section == "model" else " or None"
        raise ArgumentTypeError(f"The tokenizer's {section} must be {kind}{none}, got {type(component).__name__} {component!r:.60}.")


def _adopt(component: Any, section: str) -> Any:
    """A component of HF's ``tokenizers`` (as ``transformers`` assigns them, e.g. a
    ``TemplateProcessing`` when it wraps a tokviz tokenizer) rebuilt as tokviz's from its JSON
    state; anything else is returned unchanged."""
    if component is None or not type(component).__module__.startswith("tokenizers"):
        return component
    try:
        data = json.loads(component.__getstate__())
    except (AttributeError, TypeError, ValueError) as error:
        raise TypeError(f"Cannot use {type(component).__name__} {component!r:.60} as the {section}.") from error
    module, _, name = _BUILDERS[section].partition(":")
    return getattr(importlib.import_module(module), name)(data)


def _token_list(tokens: Any) -> list[Any]:
    if not isinstance(tokens, (list, tuple)):
        raise TypeError(f"Tokens must be given as a list of strings or AddedTokens, got {type(tokens).__name__} {tokens!r:.60}.")
    return list(tokens)


_ADDED_FIELDS = ("content", "single_word", "lstrip", "rstrip", "normalized", "special")


def _as_added_token(token: Any, special: bool) -> AddedToken:
    """A string or an AddedToken (tokviz's, or HF's as transformers passes them) as tokviz's
    AddedToken (a copy: later edits of the caller's token leave the tokenizer alone);
    ``special=True`` makes the caller's token special first, as HF's add_special_tokens does."""
    if isinstance(token, str):
        return AddedToken(token, special=special)
    if isinstance(token, AddedToken):
        if special:
            token.special = True  # as HF: the caller's token becomes special (normalized follows unless given)
        return copy.copy(token)
    if all(hasattr(token, name) for name in _ADDED_FIELDS):
        if special:
            token.special = True
        return AddedToken(token.content, token.single_word, token.lstrip, token.rstrip, token.normalized, token.special)
    raise TypeError(f"Input must be a List[Union[str, AddedToken]]: got {type(token).__name__} {token!r:.60}.")


def _content(token: Any) -> str:
    if isinstance(token, AddedToken):
        return token.content
    if not isinstance(token, str):
        raise SpecialTokenError(f"A token must be a string, not {type(token).__name__}.")
    return token


def _is_pair_input(item: Any, is_pretokenized: bool) -> bool:
    if not is_pretokenized:
        return isinstance(item, (tuple, list)) and len(item) == 2
    # Pre-tokenized: a pair is a tuple/list of two word lists.
    return isinstance(item, (tuple, list)) and len(item) == 2 and all(isinstance(x, (list, tuple)) for x in item)


class _SizedIterable:
    """An iterable that reports a length (for progress totals)."""

    def __init__(self, iterable: Iterable[str], length: int) -> None:
        self._iterable = iterable
        self._length = int(length)

    def __iter__(self) -> Iterator[str]:
        return iter(self._iterable)

    def __len__(self) -> int:
        return self._length


def _is_deterministic(model: Any) -> bool:
    """Whether ``model.tokenize`` always gives the same tokens for the same word (cacheable)."""
    return not getattr(model, "dropout", None) and type(model).__name__ in ("BPE", "WordLevel", "WordPiece")


_NORMAL_FORMS = frozenset({"NFC", "NFD", "NFKC", "NFKD"})


def _byte_level_plan(pre_tokenizer: Any) -> tuple[bool, Any] | None:
    """``(add_prefix_space, findall or None)`` when the pre-tokenizer is tokviz's ByteLevel, or
    a Split by a regex (behavior "isolated") before a ByteLevel without its own regex: Llama 3's
    and tiktoken-style tokenizers (see :func:`_isolated_findall`)."""
    from tokviz.fast_paths import unwrapped_pre_tokenizer

    pre_tokenizer = unwrapped_pre_tokenizer(pre_tokenizer)
    if type(pre_tokenizer).__module__ != "tokviz.pre_tokenizers":
        return None
    kind = type(pre_tokenizer).__name__
    if kind == "Sequence" and len(pre_tokenizer.pretokenizers) == 2:
        split, byte_level = pre_tokenizer.pretokenizers
        if (
            type(split).__name__ == "Split" and type(split).__module__ == "tokviz.pre_tokenizers"
            and type(byte_level).__name__ == "ByteLevel" and type(byte_level).__module__ == "tokviz.pre_tokenizers"
            and not byte_level.use_regex
            and split.behavior == "isolated"
            and not split.invert
            and type(split.pattern).__name__ == "Regex"
            and split.pattern.compiled.groups == 0
        ):
            return bool(byte_level.add_prefix_space), _isolated_findall(split.pattern)
        if (
            type(split).__name__ == "Digits" and type(split).__module__ == "tokviz.pre_tokenizers"
            and type(byte_level).__name__ == "ByteLevel" and type(byte_level).__module__ == "tokviz.pre_tokenizers"
            and byte_level.use_regex
            and not byte_level.add_prefix_space  # (it would prefix every piece: the general path)
        ):
            return False, _digits_findall(split.individual_digits)
        return None
    if kind != "ByteLevel":
        return None
    findall = None
    if pre_tokenizer.use_regex:
        findall = _gpt2_findall()
    return bool(pre_tokenizer.add_prefix_space), findall


#: Split patterns of well-known tokenizers, searched without a time limit (each alternative is
#: a run of one class: linear time): Llama 3's / tiktoken's cl100k_base, Qwen2's, o200k_base.
_TRUSTED_SPLIT_PATTERNS = frozenset({
    r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+",
    r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+",
    r"[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]*[\p{Ll}\p{Lm}\p{Lo}\p{M}]+(?i:'s|'t|'re|'ve|'m|'ll|'d)?|"
    r"[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]+[\p{Ll}\p{Lm}\p{Lo}\p{M}]*(?i:'s|'t|'re|'ve|'m|'ll|'d)?|"
    r"\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n/]*|\s*[\r\n]+|\s+(?!\S)|\s+",
    " ?[^(\\s|[.,!?…。，、।۔،])]+",  # BLOOM's (a class nested in a class: see patterns.has_nested_class)
})


def _isolated_findall(pattern: Any) -> Any:
    """The words a Split(pattern, "isolated") makes of a text, for the byte-level lane: the
    matches, in C when they tile the text (as the patterns of Llama 3 and tiktoken do: every
    char is in a match), else the matches and the gaps between them (BLOOM's pattern leaves
    spaces and punctuation out); None if a match is empty (the general path then splits it).

    >>> from tokviz import Regex
    >>> findall = _isolated_findall(Regex(r"\\p{L}+|\\s+|\\p{N}{1,3}"))
    >>> findall("ab 12345"), findall("ab!? c"), _isolated_findall(Regex(r"\\p{L}*"))("ab!")
    (['ab', ' ', '123', '45'], ['ab', '!?', ' ', 'c'], None)
    """
    from tokviz.patterns import find_all, match_spans
    from tokviz.pre_tokenizers import GPT2_PATTERN, gpt2_findall

    compiled = pattern.compiled
    trusted = pattern.pattern in _TRUSTED_SPLIT_PATTERNS
    untimed = compiled.findall if trusted else None
    if pattern.pattern == GPT2_PATTERN:
        # GPT-2's own pattern in a Split (tiktoken files converted by transformers: GPT-2's,
        # Whisper's): its pre-tokenizer's split, in re for ASCII text.
        trusted = True
        untimed = gpt2_findall

    def findall(text: str) -> list[str] | None:
        words = untimed(text) if untimed is not None else find_all(compiled, text)
        if "" in words:
            return None
        if sum(map(len, words)) == len(text):
            return words
        words = []
        end = 0
        spans = [match.span() for match in compiled.finditer(text)] if trusted else match_spans(compiled, text)
        for start, match_end in spans:
            if start != end:
                words.append(text[end:start])
            words.append(text[start:match_end])
            end = match_end
        if end != len(text):
            words.append(text[end:])
        return words

    return findall


def _digits_findall(individual: bool) -> Any:
    """The words of Digits (each digit alone, or runs of them) then ByteLevel's own regex, as
    StarCoder's pre-tokenizer makes them, for the byte-level lane: the numbers, and GPT-2's
    pre-tokens of the text between them; None if a char the regex takes for a number is not
    one to :func:`~tokviz.pre_tokenizers.is_numeric` (the general path then splits it).

    >>> findall = _digits_findall(True)
    >>> findall("Call 123, x2"), _digits_findall(False)("Call 123, x2 ½")
    (['Call', ' ', '1', '2', '3', ',', ' x', '2'], ['Call', ' ', '123', ',', ' x', '2', ' ', '½'])
    """
    import regex

    from tokviz.pre_tokenizers import gpt2_findall, is_numeric

    ascii_split = re.compile("([0-9])" if individual else "([0-9]+)").split
    number = regex.compile(r"(\p{N})" if individual else r"(\p{N}+)")

    def findall(text: str) -> list[str] | None:
        if text.isascii():
            pieces = ascii_split(text)
        else:
            pieces = number.split(text)
            if not all(map(is_numeric, "".join(pieces[1::2]))):
                return None
        words: list[str] = []
        for index, piece in enumerate(pieces):
            if index % 2:
                words.append(piece)
            elif piece:
                words += gpt2_findall(piece)
        return words

    return findall


def _gpt2_findall() -> Any:
    # The pre-tokenizer's own split (pre_tokenizers.gpt2_findall), so both paths split alike.
    from tokviz.pre_tokenizers import gpt2_findall

    return gpt2_findall


def _byte_word_entries(model: Any, encoder: Any = None) -> Any:
    """``word -> word-cache entry`` (:func:`_tokenize_byte_word`) for the model: a BPE model's
    tuples come from its :func:`bpe_word_encoder` (``encoder``, if one is made already; no
    ``Token`` objects), others' from ``model.tokenize``."""
    return partial(_tokenize_byte_word, model.tokenize, encoder or bpe_word_encoder(model))


# The last six fields of a word's entry when it is one ASCII token covering it (size < 256):
# with one leading 'Ġ' trimmed (a word after a space), or with nothing to trim.
_SPACE_TAILS = tuple(
    (ONE_TUPLES[1], ONE_TUPLES[size], ONE_TUPLES[size], ONE_TUPLES[1], ONE_TUPLES[size], True) for size in range(ONE_TUPLE_LIMIT)
)
_PLAIN_TAILS = tuple(
    (ONE_TUPLES[0], ONE_TUPLES[size], ONE_TUPLES[size], ONE_TUPLES[0], ONE_TUPLES[size], True) for size in range(ONE_TUPLE_LIMIT)
)


def _tokenize_byte_word(model_tokenize: Any, encode: Any, word: str) -> tuple[Any, ...]:
    """A pre-token's word-cache entry (fields below): ids, tokens, start and end offsets in
    chars of ``word`` (not of its byte symbols), the same trimmed by the ByteLevel
    post-processor's rule for a token that is not the first of the text, token lengths,
    trimmed offsets relative to each token's start, and whether the tokens tile the word.
    ``encode``: the model's :func:`~tokviz.models.bpe.fast.bpe_word_encoder`, if it has one."""
    symbols, entry = byte_symbol_tokens(word, model_tokenize, encode)
    ids, values, starts, ends = entry
    size = len(word)
    same_length = len(symbols) == size
    if len(ids) == 1 and same_length and ends[0] == size < ONE_TUPLE_LIMIT and not starts[0]:
        # The usual word: one token covering it, trimmed by one leading space or not at all.
        value = values[0]
        if value[0] == "Ġ":
            if size > 1 and value[1] not in _TRIM_CHARS and value[-1] not in _TRIM_CHARS:
                return entry + _SPACE_TAILS[size]
        elif value[0] not in _TRIM_CHARS and value[-1] not in _TRIM_CHARS:
            return entry + _PLAIN_TAILS[size]
    if len(ids) == 1 and same_length:
        # The common case (a known word of ASCII text), built without intermediate lists.
        value = values[0]
        start = starts[0]
        end = ends[0]
        if not value:
            trimmed_start, trimmed_end = start, end
        elif value[0] == "Ġ" and len(value) > 1 and value[1] not in _TRIM_CHARS and value[-1] not in _TRIM_CHARS:
            trimmed_start, trimmed_end = min(start + 1, end), end  # one leading space (trim_token_offsets)
        elif value[0] in _TRIM_CHARS or value[-1] in _TRIM_CHARS:
            trimmed_start, trimmed_end = trim_token_offsets(value, start, end, False, False)
        else:
            trimmed_start, trimmed_end = start, end
        if end < ONE_TUPLE_LIMIT:  # 0 <= start <= trimmed start <= trimmed end <= end: shared (n,) tuples
            return (
                ids, values, starts, ends, ONE_TUPLES[trimmed_start], ONE_TUPLES[trimmed_end], ONE_TUPLES[end - start],
                ONE_TUPLES[trimmed_start - start], ONE_TUPLES[trimmed_end - start], start == 0 and start < end == size,
            )
        return (
            ids, values, starts, ends, (trimmed_start,), (trimmed_end,), (end - start,),
            (trimmed_start - start,), (trimmed_end - start,), start == 0 and start < end == size,
        )
    trim_chars = _TRIM_CHARS
    if same_length and ids and all(values) and starts[0] == 0 and ends[-1] == size and starts[1:] == ends[:-1]:
        # Several tokens tiling a word of one-byte chars (BPE's tokens tile it): when no token
        # but the first starts with a space symbol and none ends with one, the trimmed offsets
        # are the offsets, the first start moved past its leading 'Ġ' (as below, in C).
        first = values[0]
        if (
            trim_chars.isdisjoint(map(_LAST_CHAR, values))
            and trim_chars.isdisjoint(map(_FIRST_CHAR, islice(values, 1, None)))
            and (first[0] not in trim_chars or (first[0] == "Ġ" and len(first) > 1 and first[1] not in trim_chars))
        ):
            lengths = tuple(map(sub, ends, starts))
            if first[0] == "Ġ":
                return (
                    ids, values, starts, ends, (1, *starts[1:]), ends, lengths,
                    (1, *repeat(0, len(ids) - 1)), lengths, True,
                )
            return ids, values, starts, ends, starts, ends, lengths, (0,) * len(ids), lengths, True
    if not same_length:
        starts, ends = symbol_offsets_to_chars(word, starts, ends)  # a char's bytes align to the char
        if ids and all(values) and trim_chars.isdisjoint(map(_FIRST_CHAR, values)) and trim_chars.isdisjoint(map(_LAST_CHAR, values)):
            # No token to trim (a run of Chinese: tokens of its UTF-8 bytes, offsets of its chars).
            lengths = tuple(map(sub, ends, starts))
            contiguous = starts[0] == 0 and starts[1:] == ends[:-1] and ends[-1] == size and all(map(lt, starts, ends))
            return ids, values, starts, ends, starts, ends, lengths, (0,) * len(ids), lengths, contiguous
    trimmed_starts_list = list(starts)
    trimmed_ends_list = list(ends)
    for index, value in enumerate(values):
        if value and (value[0] in trim_chars or value[-1] in trim_chars):
            s = starts[index]
            e = ends[index]
            if value[0] == "Ġ" and len(value) > 1 and value[1] not in trim_chars and value[-1] not in trim_chars:
                trimmed_starts_list[index] = min(s + 1, e)  # one leading space (trim_token_offsets)
            else:
                trimmed_starts_list[index], trimmed_ends_list[index] = trim_token_offsets(value, s, e, False, False)
    contiguous = (
        bool(ids)
        and starts[0] == 0
        and starts[1:] == ends[:-1]
        and ends[-1] == size
        and all(map(lt, starts, ends))
    )
    trimmed_starts = tuple(trimmed_starts_list)
    trimmed_ends = tuple(trimmed_ends_list)
    return (
        ids,
        values,
        starts,
        ends,
        trimmed_starts,
        trimmed_ends,
        tuple(map(sub, ends, starts)),
        # Trimmed offsets relative to each token's own start.
        tuple(map(sub, trimmed_starts, starts)),
        tuple(map(sub, trimmed_ends, starts)),
        contiguous,
    )


_FIRST_CHAR = itemgetter(0)
_LAST_CHAR = itemgetter(-1)

# Fields of a word-cache entry (see _tokenize_byte_word).
_FIELD_IDS = itemgetter(0)
_FIELD_VALUES = itemgetter(1)
_FIELD_STARTS = itemgetter(2)
_FIELD_ENDS = itemgetter(3)
_FIELD_TRIMMED_STARTS = itemgetter(4)
_FIELD_TRIMMED_ENDS = itemgetter(5)
_FIELD_LENGTHS = itemgetter(6)
_FIELD_TRIM_START = itemgetter(7)
_FIELD_TRIM_END = itemgetter(8)
_FIELD_CONTIGUOUS = itemgetter(9)
