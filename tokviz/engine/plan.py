"""The plan: what the engine asked one pipeline's components once (:func:`build_plan`), with its
word cache (:class:`CutPlan`); made per tokenizer by :mod:`tokviz.engine.plans`.
"""

from __future__ import annotations

import re
from typing import Any

from tokviz.engine.bpe import bpe_word_encoder, joined_tokens, model_splits_at, pieces_pattern, plain_bpe_vocab, word_pieces
from tokviz.engine.stages import _segment_local, _shifts, _stays
from tokviz.engine.unigram import unigram_word_encoder
from tokviz.engine.wordpiece import wordlevel_word_encoder, wordpiece_word_encoder
from tokviz.engine.words import _byte_level_split, _cut_by_words, _declared, _splitter, _whole_piece, _words_of_spans, pre_tokenizer_steps, split_kind
from tokviz.models.bpe.model import BpeTables
from tokviz.models.unigram.model import UnigramTables
from tokviz.models.wordlevel.model import WordLevelTables
from tokviz.models.wordpiece.model import WordPieceTables


def word_encoder(model: Any) -> Any:
    """The engine's word encoder for the kind of tables the model declares (``word_tables()``:
    BPE, WordPiece, WordLevel or Unigram), or None (the engine then calls ``model.tokenize``)."""
    return bpe_word_encoder(model) or wordpiece_word_encoder(model) or unigram_word_encoder(model) or wordlevel_word_encoder(model)


class CutPlan:
    """What the engine asked one pipeline's components once, and its word cache: how the
    normalizer's ``stages`` run on plain strings, how the pre-tokenizer splits (``splitter``,
    see :func:`_splitter`), the model's word encoder and tables."""

    __slots__ = (
        "stages", "pre_tokenizer", "model", "graphemes", "by_segments", "splitter", "one_word", "words",
        "steps", "words_of", "unigram", "bpe", "wordpiece", "run_findall", "wordlevel", "char_groups",
        "odd_values", "shifts", "space_finditer", "openers", "aligned", "aligned_chars", "runs", "cut", "pieces",
        "byte_words", "prefix_space", "sub_words", "long_words",
    )

    def __init__(self, stages: tuple[Any, ...], pre_tokenizer: Any, model: Any, joined: str | None = None, encoder: Any = None) -> None:
        self.stages = stages
        self.pre_tokenizer = pre_tokenizer
        #: The pre-tokenizer's steps (``steps()``: a Sequence flattened).
        self.steps: tuple[Any, ...] = ()
        self.model = model
        self.graphemes = any(stage.on_graphemes for stage in stages)  # a Precompiled stage works on grapheme clusters
        #: No stage prepends and every one is local to :func:`_segments` (see _aligned_fields).
        self.by_segments = all(_segment_local(stage) for stage in stages) and _stays(stages, "\n", True)
        #: A stage replaces runs of whitespace (then a segment starts at no whitespace).
        self.runs = any(stage.replaces and not isinstance(stage.pattern, str) for stage in stages)
        #: Char -> whether a segment may start with it (see _opens_segment).
        self.openers: dict[str, bool] = {}
        #: Segment -> (normalized, starts, ends) from a NormalizedString, and their chars.
        self.aligned: dict[str, tuple[str, list[int], list[int]]] = {}
        self.aligned_chars = 0
        #: How to pre-tokenize a piece without NormalizedString (see _normalized_fields), or None.
        self.splitter: str | None = None
        #: No pre-tokenizer splits (Llama): the whole piece is one word.
        self.one_word = False
        #: Word (pre-token) -> its tokens as (ids, values, starts, ends).
        self.words: dict[str, tuple[tuple[Any, ...], ...]] = {}
        #: The pre-tokenizer's words function (``PlainSplit.words``: text -> matches or None).
        self.words_of: Any = None
        # The model's word encoder (made once for all the tokenizer's plans), by its tables' kind.
        tables = model.word_tables()
        self.unigram = (encoder or unigram_word_encoder(model)) if isinstance(tables, UnigramTables) else None
        self.bpe = (encoder or bpe_word_encoder(model)) if isinstance(tables, BpeTables) else None
        self.wordpiece = (encoder or wordpiece_word_encoder(model)) if isinstance(tables, WordPieceTables) else None
        #: Metaspace / model-level splits of a whole piece (see _line_fields), or None.
        self.run_findall: Any = None
        #: WhitespaceSplit's regex (its words) when a Metaspace follows it (T5's, see _metaspace_words).
        self.space_finditer: Any = None
        #: The stages as groups for non-ASCII pieces, made on first use (see _char_groups).
        self.char_groups: list[tuple[str, Any, Any]] | None = None
        #: Token values that are not slices of the word (unk, byte fallback; see _odd_values).
        self.odd_values = _odd_values(model, joined)
        #: Prepends and one-char Replaces (Llama's) in one step (see _shifts), or None.
        self.shifts = _shifts(stages)
        #: The pre-tokenizer's ``cut_spans`` when it only cuts and no other split applies.
        self.cut: Any = None
        #: ``word -> pieces`` the BPE model never merges across (see _long_words_cut), False when
        #: the model offers none.
        self.pieces: Any = None
        #: A WordLevel model's ``(vocab, unk_id, unk_token)``: its words need no cache.
        self.wordlevel: tuple[dict[str, int], int | None, str] | None = None
        #: A pre-tokenizer with a ByteLevel step: ``text -> its words`` (see _byte_level_split),
        #: and whether ByteLevel prefixes a space to each piece.
        self.byte_words: Any = None
        self.prefix_space = False
        #: Some byte-level word was cut inside a char (see _sub_words_entry).
        self.sub_words = False
        #: Long BPE words met once (cut into pieces; met again, their whole entry is cached: see _long_words_cut).
        self.long_words: set[str] = set()
        if isinstance(tables, WordLevelTables):
            self.wordlevel = (tables.vocab, tables.vocab.get(model.unk_token), model.unk_token)

    def clear_caches(self) -> None:
        """Empty the word and segment caches (in place: encoders hold them), keeping the
        tables derived from the components."""
        self.words.clear()
        self.long_words.clear()
        self.aligned.clear()
        self.aligned_chars = 0


def _odd_values(model: Any, joined: str | None = None) -> frozenset[str] | None:
    """The token values a model makes that are not the text they cover (unk, ``<0xNN>``), or
    None when others may not be either (a prefix or suffix, ``##``, a byte token merged with
    others). ``joined``: as for :func:`model_splits_at`.

    >>> from tokviz import models
    >>> sorted(_odd_values(models.BPE({"a": 0, "<unk>": 1}, [], unk_token="<unk>")))[:2], _odd_values(models.WordPiece({"a": 0}))
    (['<0x00>', '<0x01>'], None)
    """
    tables = model.word_tables()
    values = {f"<0x{byte:02X}>" for byte in range(256)}
    if isinstance(tables, BpeTables):
        if model.continuing_subword_prefix or model.end_of_word_suffix or not tables.plain:
            return None
        if model.byte_fallback:
            # A merge may join a byte token to others ("<0x0A>T"): then values are not slices.
            vocab = tables.vocab
            present = sum(map(vocab.__contains__, values))
            if present:
                if joined is None:
                    joined = joined_tokens(vocab)
                if joined is None or joined.count("<0x") != present:
                    return None
        unk = model.unk_token
    elif isinstance(tables, UnigramTables):
        unk = None if tables.unk_id is None else tables.tokens[tables.unk_id]
    elif isinstance(tables, WordLevelTables):
        unk = model.unk_token
    else:
        return None
    if unk is not None:
        values.add(unk)
    return frozenset(values)


def build_plan(normalizer: Any, pre_tokenizer: Any, model: Any, encoder: Any = None) -> CutPlan | None:
    """A :class:`CutPlan` for this pipeline, or None when the general path must encode.
    ``encoder``: the model's word encoder, when made already."""
    if not getattr(model, "deterministic", False) or not hasattr(model, "word_tables") or model.word_tables() is None:
        return None  # (a model of no kind the engine knows, BPE with dropout, a sampling Unigram)
    stages = () if normalizer is None else normalizer.steps()
    steps = pre_tokenizer_steps(pre_tokenizer)
    if len(steps) == 1:
        pre_tokenizer = steps[0]  # (a Sequence of one splits as its one step)
    first = steps[0] if steps else None
    first_kind = None if first is None else split_kind(first)
    cut = getattr(pre_tokenizer, "cut_spans", None)
    if cut is not None and cut("a b") is None:
        cut = None
    if not all(getattr(stage, "aligned_if_unchanged", False) for stage in stages):
        return None  # (a custom normalizer: an unchanged text may not be aligned to itself)
    if "byte_level" in map(split_kind, steps):
        byte_split = _byte_level_split(steps)
        if byte_split is None:
            return None
        plan = CutPlan(tuple(stages), pre_tokenizer, model, None, encoder)
        plan.steps, plan.splitter = steps, "bytes"
        plan.prefix_space, plan.byte_words = byte_split
        return plan
    if first is not None and first_kind is None and cut is None:
        return None
    joined = None  # the model's tokens joined, for one-word pipelines (see model_splits_at)
    joins: frozenset[str] = frozenset()  # chars such a model may join the split char to
    whole = False  # no pre-tokenizer, and the model not proved to split at '▁': one word a piece
    if first is None or (first_kind == "metaspace" and not first.split):
        # One split per piece: the model must split at the boundary char itself.
        split_char = "▁" if first is None else first.replacement
        vocab = plain_bpe_vocab(model)
        joined = None if vocab is None else joined_tokens(vocab)
        joins = model_splits_at(model, split_char, joined)
        if first is None and (joins is None or not any(stage.replaces and stage.content == split_char for stage in stages)):
            whole = True
        elif joins is None:
            return None
    elif first_kind not in ("words", "metaspace") and cut is None:
        return None
    plan = CutPlan(tuple(stages), pre_tokenizer, model, joined, encoder)
    plan.steps = steps
    plan.splitter = _splitter(pre_tokenizer, steps)
    plain = _declared(steps[0]) if plan.splitter is None and len(steps) == 1 else None
    tiles = None if plain is None else plain.word_list
    if tiles is not None:
        # Words as strings that tile the piece (Split "isolated", Digits): offsets are sums of lengths.
        plan.splitter, plan.run_findall = "tiles", tiles
    if whole or (plan.splitter is None and cut is not None):
        plan.splitter, plan.cut = "cut", _whole_piece if whole else (_cut_by_words(steps) or _words_of_spans(cut))
    if plan.splitter == "words":
        plan.words_of = steps[0].plain_split().words  # (the pre-tokenizer's own function)
    elif plan.splitter == "ws_metaspace":
        plan.space_finditer = steps[0].plain_split().words
    plan.one_word = (first is None and not whole) or (first_kind == "metaspace" and not first.split)
    if plan.one_word:
        # The model never joins across a split char that follows another char: cut before runs
        # of it; and around newlines when the model never joins them to anything (each line
        # of a long text then ends and starts with words met before).
        # A run after a char the model may join it to stays in the word (multi-word vocabularies).
        plan.run_findall = re.compile(pieces_pattern(model, "▁" if first is None else first.replacement, joins, joined)).findall
        if first is None or first.replacement == "▁":
            plan.pieces = False  # (its words are word_pieces' already: rebuilt at a long one, 6 ms of a cold pass)
    elif plan.splitter in ("metaspace", "ws_metaspace") and steps[-1].split:
        # Metaspace(split=True) cuts before every replacement char (HF's MergedWithNext).
        mark = re.escape(steps[-1].replacement)
        plan.run_findall = re.compile(f"[^{mark}]+|{mark}[^{mark}]*").findall
    if plan.pieces is None:
        plan.pieces = (plan.bpe is not None and word_pieces(model)) or False
    return plan
