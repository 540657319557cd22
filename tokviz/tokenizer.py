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

Speed: the engine (:mod:`tokviz.engine`) normalizes and splits plain strings as the components
declare and encodes each distinct word once; ``encode_batch(..., processes=2)`` spreads a batch.

What this version leaves out: byte offsets (``OffsetType.Byte``), multi-threading (use
processes), and HF's ``encode_special_tokens`` switch.
"""

from __future__ import annotations

import copy
import importlib
import json
from pathlib import Path
from typing import Any, Iterable, Iterator, Sequence

from tokviz import _mutation
from tokviz._component import ArgumentTypeError, NegativeArgumentError, check_whole
from tokviz.added_vocabulary import AddedToken, AddedVocabulary
from tokviz.encoding import Encoding, PaddingParams, TruncationParams, check_direction, pad_encodings, truncate_encodings
from tokviz.engine.cut import encode_cut, encode_processed
from tokviz.engine.plans import EnginePlans
from tokviz.errors import SpecialTokenError, TokvizError, UnknownIdError
from tokviz.models.trainer import finish_progress_lines, train_for_model
from tokviz.models.base import Token
from tokviz.processes import PARALLEL_MIN_INPUTS, encode_in_processes
from tokviz.trace import TokenizerTrace, sequence_trace

_STRATEGIES = ("longest_first", "only_first", "only_second")


def _component_property(name: str, refresh: bool = False) -> property:
    """The tokenizer's component ``name``: read through :meth:`Tokenizer._own`, set through
    :meth:`Tokenizer._set` (then, with ``refresh``, the added tokens are matched again)."""

    def get(self: "Tokenizer") -> Any:
        return self._own(name)

    def set(self: "Tokenizer", component: Any) -> None:
        self._set(name, component)
        if refresh:
            self._own_added().refresh(self._model, self._normalizer)

    return property(get, set)


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
        self._model = _adopt(model, "model")
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
        self._plans = EnginePlans()  # the engine's plans and word caches (tokviz.engine.plans), one cache
        #: The byte-level fast path gives the same encodings as the general one (the
        #: tests compare both); set False to always take the general path.
        self.use_fast_path = True
        #: The TrainingHistory of the last ``train`` / ``train_from_iterator`` (HF returns None from both;
        #: tokviz keeps what the training went through here).
        self.training_history: Any = None

    # ----------------------------------------------------------------- components
    # HF's components are shared handles: ``tok.model.dropout = 0.1`` edits the tokenizer's model.
    # A tokenizer made by ``copy.copy`` shares its components with the original until user code
    # reaches one through a getter, which then gives this tokenizer a private copy first.
    # Added tokens with normalized=True are matched in their normalized form: a new model or
    # normalizer refreshes them.
    model = _component_property("model", refresh=True)
    normalizer = _component_property("normalizer", refresh=True)
    pre_tokenizer = _component_property("pre_tokenizer")
    post_processor = _component_property("post_processor")
    decoder = _component_property("decoder")

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

    def _set(self, name: str, component: Any) -> Any:
        """Set the component ``name`` (HF's rebuilt as tokviz's), private to this tokenizer."""
        component = _adopt(component, name)
        setattr(self, "_" + name, component)
        self._shared.discard(name)
        return component

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
        self._plans.rekey(shared, private)
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
        twin._plans = copy.copy(self._plans)
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
        from tokviz.serialization import tokenizer_from_str

        text = state.decode("utf-8") if isinstance(state, (bytes, bytearray)) else state
        self.__dict__.update(tokenizer_from_str(text, own=True).__dict__)  # (its own state: not an upload's limits)

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
        direction = check_direction(direction, "truncation")
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
        direction = check_direction(direction, "padding")
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
            processor = self._post_processor
            middle = processor.single_middle(encoding) if add_special_tokens and processor is not None else None
            if middle is not None:
                return self.post_process(middle, None, add_special_tokens)
        encoding = self._encode_input(sequence, 0, is_pretokenized)
        pair_encoding = None if pair is None else self._encode_input(pair, 1, is_pretokenized)
        return self.post_process(encoding, pair_encoding, add_special_tokens)

    def _fast_lane(self, sequence: str, add_special_tokens: bool, pad: bool = True) -> Encoding:
        """:meth:`encode` of one untruncated string, as the post-processor declares it may be
        done: the engine's encoding with its offsets trimmed in the same pass
        (``trims_offsets``), or the whole-piece fields between the special tokens
        (``single_parts``), else the engine's or general path and the post-processor's
        one-sequence step; padded (unless ``pad`` is False)."""
        padding = self._padding if pad else None
        processor = self._post_processor
        trim = () if processor is None else processor.trims_offsets()
        plan = self._engine().cut() if self.use_fast_path else None
        split = processor.single_parts() if add_special_tokens and processor is not None else None
        tried = False  # (the engine, its offsets untrimmed)
        encoding = None
        if split is not None and plan is not None:
            # The sequence's fields between the special tokens, in one step.
            encoding = encode_processed(self._added, plan, sequence, split, trim or ())
            tried = not trim
        if encoding is None and trim is not None and plan is not None and not tried:
            encoding = encode_cut(self._added, plan, sequence, 0, None, trim)
            if encoding is not None and processor is not None:
                encoding = processor.finish_trimmed(encoding, add_special_tokens)
            tried = not trim
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

    def _encode_sequence(self, sequence: str, type_id: int, word_index: int | None, engine_tried: bool = False) -> Encoding:
        if self.use_fast_path and not engine_tried:
            plan = self._engine().cut()
            if plan is not None:
                fast = encode_cut(self._added, plan, sequence, type_id, word_index)
                if fast is not None:
                    return fast
        return self._encoding_from_splits(self._pipeline(sequence)[0], type_id, word_index)

    def _prepare_engine(self) -> None:
        """Build the engine's plans now (a load does, as HF's loaded tokenizers are ready to
        encode; XLM-R's 250k Unigram pieces take 45 ms, a converted Llama's plan 3 ms)."""
        self._engine().cut()

    def _engine(self) -> EnginePlans:
        """The engine's plans for the current components (:class:`tokviz.engine.plans.EnginePlans`:
        made again when one is replaced or edited, word caches emptied with the model's)."""
        return self._plans.current(self._normalizer, self._pre_tokenizer, self._model)

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
            normalized_splits = self._extract_and_normalize(item).splits
            sequences.append(sequence_trace(item, normalized_splits, splits, added, self._decoder))
        encoding = self.post_process(encodings[0], encodings[1] if len(encodings) > 1 else None, True)
        decoded = self.decode(encoding._ids, skip_special_tokens=True)
        return TokenizerTrace(tuple(sequences), encoding, decoded)

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
        # HF's trainers keep the options of the model they train (unk_token, dropout, ...): the history
        # carries them into its model, built once, and every model_at(k).
        history = train_for_model(trainer, word_counts, self._model, progress)
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


_BUILDERS = {
    "model": "tokviz.serialization:model_from_dict",
    "normalizer": "tokviz.normalizers:from_dict",
    "pre_tokenizer": "tokviz.pre_tokenizers:from_dict",
    "post_processor": "tokviz.processors:from_dict",
    "decoder": "tokviz.decoders:from_dict",
}


class NegativeIdError(UnknownIdError, OverflowError):
    """An id below zero given to decode (HF raises ``OverflowError``)."""


#: What each component must be able to do (HF checks the class; tokviz the methods, so
#: custom components and tokviz's own all pass).
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
    """The component checked (:data:`_COMPONENT_METHODS`); one of HF's ``tokenizers`` (as
    ``transformers`` assigns them) rebuilt as tokviz's from its JSON state first."""
    if component is None or not type(component).__module__.startswith("tokenizers"):
        _check_component(component, section)
        return component
    try:
        data = json.loads(component.__getstate__())
    except (AttributeError, TypeError, ValueError) as error:
        raise TypeError(f"Cannot use {type(component).__name__} {component!r:.60} as the {section}.") from error
    module, _, name = _BUILDERS[section].partition(":")
    return _adopt(getattr(importlib.import_module(module), name)(data), section)


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
