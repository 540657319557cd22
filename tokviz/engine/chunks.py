"""Chunk-cached encoding: the general pipeline run once per distinct chunk of text, not per call.

The general path (:meth:`Tokenizer._pipeline`) builds a :class:`NormalizedString` with one
alignment per character for every input. Most pipelines are *local*: cut the original text
before each run of ASCII whitespace (``"Hi there,\\tyou"`` -> ``"Hi"``, ``" there,"``,
``"\\tyou"``; before runs of spaces only for Metaspace and Llama-style pipelines, where a
newline stays inside a word) and the encoding of the whole is the encodings of the chunks
side by side (offsets shifted, word ids counted on). So each distinct chunk is encoded once
and cached; a call looks its chunks up and joins them in C-level loops. A chunk that is
missing is encoded on plain strings when every stage leaves it aligned char for char (ASCII
text, most of the time: :func:`_fast_entry`), else by the general machinery on the chunk.

Whether cutting there is safe depends on every component, so a plan is made per pipeline
(and rebuilt when a component is replaced or edited, see :mod:`tokviz._mutation`):

* normalizer stages must be local around a boundary "x|w" (x not whitespace, w whitespace or
  '▁'): per-character ones (Lowercase, NF*, StripAccents, BertNormalizer, Precompiled, Nmt),
  Replace whose pattern cannot span the boundary, and Prepend (applied to a piece's first
  chunk only). After *every* stage each chunk is checked: a chunk that follows a boundary must
  still start with whitespace or '▁', a chunk that precedes one must not end with them
  (``"a\\u00a0"`` under NFKC ends with a space: such a text takes the general path);
* the first pre-tokenizer must split at every such boundary (Whitespace, WhitespaceSplit,
  BertPreTokenizer, Metaspace, ByteLevel without prefix space, CLIP's Split); the ones after it
  work inside the splits it made, so any will do;
* with no splitting pre-tokenizer (Llama: Prepend + Replace, or Metaspace(split=False)), the
  BPE model itself must not join across '▁': no vocabulary token has '▁' after another char.

Everything else (Strip, truncation, pairs, added tokens matched after a normalizer, dropout)
takes the general path. The tests compare this path with the general one on random text.

>>> from tokviz import Tokenizer, models, normalizers, pre_tokenizers
>>> tok = Tokenizer(models.WordLevel({"[UNK]": 0, "hello": 1, "world": 2}, unk_token="[UNK]"))
>>> tok.normalizer = normalizers.Lowercase()
>>> tok.pre_tokenizer = pre_tokenizers.Whitespace()
>>> split_chunks("Hello  World!")
['Hello', '  World!']
>>> tok.encode("Hello  World!").ids
[1, 2, 0]
"""

from __future__ import annotations

import gc
import re
import unicodedata
from bisect import bisect_left
from itertools import accumulate, chain, compress, islice, repeat
from operator import itemgetter
from operator import add, eq, is_, sub
from typing import Any

import regex

from tokviz.encoding import Encoding, FlatOffsets, flat_offsets_encoding, new_encoding
from tokviz.engine.cut import added_pieces
from tokviz.engine.bpe import bpe_word_encoder, joined_tokens, model_splits_at, pieces_pattern, plain_bpe_vocab
from tokviz.engine.bpe import byte_word_tokens as _byte_word_tokens
from tokviz.models.bpe.model import BpeTables
from tokviz.models.unigram.model import UnigramTables
from tokviz.models.wordpiece.model import WordPieceTables
from tokviz.models.wordlevel.model import WordLevelTables
from tokviz.engine.unigram import _UNIGRAM_MAX_WORD, unigram_word_encoder
from tokviz.engine.wordpiece import wordpiece_word_encoder
from tokviz.normalizers import SPACE_ONLY_PATTERNS, WHITESPACE_PATTERNS
from tokviz.patterns import Regex
from tokviz.processors import template_masks

#: Chunks start before a run of these (ASCII whitespace every component agrees on).
_CUT = " \t\n\r"
_CHUNK_FINDALL = re.compile(r"[ \t\n\r]*[^ \t\n\r]+|[ \t\n\r]+").findall
_SPACE_CHUNK_FINDALL = re.compile(r" *[^ ]+| +").findall
_WHITE_SPACE = regex.compile(r"\s")  # Unicode White_Space, as the GPT-2 pattern's \s
_PREPEND_CLASS = regex.compile(r"\p{Grapheme_Cluster_Break=Prepend}")

#: CLIP's pre-tokenizer pattern: no alternative matches whitespace.
CLIP_PATTERN = r"""<\|startoftext\|>|<\|endoftext\|>|'s|'t|'re|'ve|'m|'ll|'d|[\p{L}]+|[\p{N}]|[^\s\p{L}\p{N}]+"""
#: The same on ASCII text (where \p{L} is [A-Za-z], \p{N} is [0-9] and \s is [\t\n\x0b\x0c\r ]), in re.
_CLIP_ASCII = re.compile(r"""<\|startoftext\|>|<\|endoftext\|>|'s|'t|'re|'ve|'m|'ll|'d|[A-Za-z]+|[0-9]|[^\t\n\x0b\x0c\r A-Za-z0-9]+""")

_MAX_CACHED_CHUNKS = 200_000

# Fields of a chunk entry (see chunk_entry).
_IDS, _TOKENS, _STARTS, _ENDS, _WORDS, _N_WORDS, _MAY_FOLLOW, _MAY_PRECEDE = map(itemgetter, range(8))
_MAY_FOLLOW_AT, _MAY_PRECEDE_AT = 6, 7


def split_chunks(text: str) -> list[str]:
    """Cut ``text`` before each run of ASCII whitespace: ``"a b  c" -> ['a', ' b', '  c']``."""
    return _CHUNK_FINDALL(text)


# ---------------------------------------------------------------------- the plan
class ChunkPlan:
    """What is known about one pipeline: how to encode a chunk, and when joining is safe.

    After every normalizer stage a chunk after a boundary must start with a char of
    ``stage_boundary`` and one before a boundary must not end with one; after the last stage
    the first must be in ``boundary`` (where the pre-tokenizer or model surely splits) and
    ``right_blocked(last char)`` must be False. ``heads``/``bodies`` are the chunk caches (a
    piece's first chunk is normalized with Prepend stages and knows if it starts the text).
    """

    __slots__ = (
        "stages", "stage_boundary", "boundary", "right_blocked", "pre_tokenizer", "model", "graphemes", "heads", "bodies",
        "splitter", "one_word", "clip_literals", "chunk_findall", "words",
        "steps", "words_of", "unigram", "bpe", "wordpiece", "run_findall", "wordlevel", "ascii_finditer", "char_groups",
        "odd_values", "shifts", "segments", "space_finditer",
    )

    def __init__(self, stages: tuple[Any, ...], stage_boundary: frozenset[str], boundary: frozenset[str],
                 right_blocked: Any, pre_tokenizer: Any, model: Any, graphemes: bool, joined: str | None = None,
                 encoder: Any = None) -> None:
        self.stages = stages
        self.stage_boundary = stage_boundary
        self.boundary = boundary
        self.right_blocked = right_blocked
        self.pre_tokenizer = pre_tokenizer
        #: The pre-tokenizer's steps (``steps()``: a Sequence flattened).
        self.steps: tuple[Any, ...] = ()
        self.model = model
        self.graphemes = graphemes  # a Precompiled stage works on grapheme clusters
        self.heads: tuple[dict[str, Any], dict[str, Any]] = ({}, {})  # (not at text start, at text start)
        self.bodies: dict[str, Any] = {}
        #: How to pre-tokenize a chunk without NormalizedString (see _fast_entry), or None.
        self.splitter: str | None = None
        #: No pre-tokenizer splits (Llama): the whole piece is one word however many chunks.
        self.one_word = False
        #: CLIP's split then ByteLevel with its own regex: a text holding a special's literal
        #: is not for the plain-string split (see _splitter).
        self.clip_literals = False
        #: Cuts the text into chunks (before runs of the chars the splitter surely splits at).
        self.chunk_findall = _CHUNK_FINDALL
        #: Word (pre-token) -> its tokens as (ids, values, starts, ends): many chunks share a word
        #: (" the", "\nthe", " the,"), so the model runs once per distinct word.
        self.words: dict[str, tuple[tuple[Any, ...], ...]] = {}
        #: The pre-tokenizer's words function (``PlainSplit.words``: text -> matches or None).
        self.words_of: Any = None
        # The model's word encoder (made once for all the tokenizer's plans), by the kind of
        # tables the model declares: a Unigram's (no prefix dict), a BPE's, a WordPiece's.
        tables = model.word_tables()
        self.unigram = (encoder or unigram_word_encoder(model)) if isinstance(tables, UnigramTables) else None
        self.bpe = (encoder or bpe_word_encoder(model)) if isinstance(tables, BpeTables) else None
        self.wordpiece = (encoder or wordpiece_word_encoder(model)) if isinstance(tables, WordPieceTables) else None
        #: Metaspace / model-level splits of a whole piece (see _line_fields), or None.
        self.run_findall: Any = None
        #: The splitter's regex for ASCII text in :mod:`re` (faster than :mod:`regex`'s), or None.
        self.ascii_finditer: Any = None
        #: WhitespaceSplit's regex (its words) when a Metaspace follows it (T5's, see _metaspace_words).
        self.space_finditer: Any = None
        #: The stages as groups for non-ASCII pieces, made on first use (see _char_groups).
        self.char_groups: list[tuple[str, Any, Any]] | None = None
        #: Token values that may differ in length from the text they cover (unk, byte
        #: fallback): without them a model's tokens are slices of the word (see
        #: _line_fields), or None when the model's values may not be slices at all.
        self.odd_values = _odd_values(model, joined)
        #: ``(prepended chars, ((char, replacement), ...))`` when every stage is a Prepend or a
        #: one-char-for-one-char Replace (Llama's): the stages in one step (see _line_fields).
        self.shifts = _shifts(stages)
        #: The segments of long texts (see _segmented_fields): (opens the text, segment) -> its
        #: fields, or False when the whole-piece path refuses it; and the chars of the keys.
        self.segments: tuple[dict[tuple[bool, str], Any], list[int]] = ({}, [0])
        #: A WordLevel model's ``(vocab, unk_id, unk_token)``: its words need no cache.
        self.wordlevel: tuple[dict[str, int], int | None, str] | None = None
        if isinstance(tables := model.word_tables(), WordLevelTables):
            self.wordlevel = (tables.vocab, tables.vocab.get(model.unk_token), model.unk_token)

    def clear_caches(self) -> None:
        """Empty the chunk, word and segment caches (in place: encoders hold them), keeping the
        tables derived from the components."""
        for cache in (*self.heads, self.bodies, self.words, self.segments[0]):
            cache.clear()
        self.segments[1][0] = 0


def _stage_is_local(stage: Any, boundary: frozenset[str]) -> bool:
    if stage.per_char or stage.prepends:
        return True
    if not stage.replaces:
        return False
    pattern = stage.pattern
    if isinstance(pattern, str):
        # A literal of boundary chars only cannot contain the char before a boundary; one
        # without any cannot contain the char after it.
        chars = set(pattern)
        return chars <= boundary or chars.isdisjoint(boundary)
    source = pattern.pattern
    if source in SPACE_ONLY_PATTERNS:
        return True
    # \s+ may swallow a no-break space before a boundary; then the chunk before it ends with
    # the replacement, which must be a boundary char for the check after the stage to see it.
    return source in WHITESPACE_PATTERNS and bool(stage.content) and set(stage.content) <= boundary


def split_kind(step: Any) -> str | None:
    """How the engine splits plain strings for one pre-tokenizer step, from what it declares
    (``plain_split()``, :class:`~tokviz.pre_tokenizers.PlainSplit`): "words" (its own words
    function), "metaspace", "byte_level", "regex" (a pattern), "digits"; None: the engine
    cannot (a custom one, or a subclass with its own ``pre_tokenize``).

    >>> from tokviz import pre_tokenizers
    >>> split_kind(pre_tokenizers.BertPreTokenizer()), split_kind(pre_tokenizers.Punctuation())
    ('words', None)
    """
    declare = getattr(step, "plain_split", None)
    plain = declare() if declare is not None else None
    if plain is None:
        return None
    if plain.space_mark is not None:
        return "metaspace"
    if plain.to_bytes:
        return "byte_level"
    if plain.pattern is not None:
        return "regex"
    if plain.digits:
        return "digits"
    return "words" if plain.words is not None and plain.whitespace else None


def pre_tokenizer_steps(pre_tokenizer: Any) -> tuple[Any, ...]:
    """The pre-tokenizers ``pre_tokenizer`` runs in order (its ``steps()``; none for None).

    >>> from tokviz import pre_tokenizers
    >>> pre_tokenizer_steps(pre_tokenizers.Sequence([pre_tokenizers.Sequence([pre_tokenizers.Whitespace()])]))
    (Whitespace(),)
    """
    if pre_tokenizer is None:
        return ()
    steps = getattr(pre_tokenizer, "steps", None)
    return steps() if steps is not None else (pre_tokenizer,)


def _odd_values(model: Any, joined: str | None = None) -> frozenset[str] | None:
    """The values of the tokens a model makes that are not the text they cover (its unk
    token and the ``<0xNN>`` byte tokens), or None when other tokens may not be either
    (a subword prefix or suffix, two tokens sharing an id, WordPiece's ``##``, a BPE token
    that merges a byte token with others). ``joined``: as for :func:`model_splits_at`.

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


def _shifts(stages: tuple[Any, ...]) -> tuple[str, tuple[tuple[str, str], ...]] | None:
    """Stages that only prepend chars and replace one char by another, in one step: the
    text becomes ``prepended + text.replace(a, b)...`` (each Replace also acts on the chars
    prepended before it), or None.

    >>> from tokviz import normalizers
    >>> stages = [normalizers.Replace(" ", "_"), normalizers.Prepend(" "), normalizers.Replace(" ", "▁")]
    >>> _shifts(stages)
    ('▁', ((' ', '_'), (' ', '▁')))
    """
    if not stages:
        return None
    prepended = ""
    replaces = []
    for stage in stages:
        if stage.prepends and isinstance(stage.prepend, str):
            prepended = stage.prepend + prepended
        elif stage.replaces and type(stage.pattern) is str and len(stage.pattern) == 1 and len(stage.content) == 1:
            prepended = prepended.replace(stage.pattern, stage.content)
            replaces.append((stage.pattern, stage.content))
        else:
            return None
    return prepended, tuple(replaces)


def build_plan(normalizer: Any, pre_tokenizer: Any, model: Any, encoder: Any = None) -> ChunkPlan | None:
    """A :class:`ChunkPlan` for this pipeline, or None when chunks may not be cached.
    ``encoder``: the model's word encoder, when made already."""
    if not getattr(model, "deterministic", False) or not hasattr(model, "word_tables") or model.word_tables() is None:
        return None  # (a model of no kind the engine knows, BPE with dropout, a sampling Unigram)
    stages = () if normalizer is None else normalizer.steps()
    steps = pre_tokenizer_steps(pre_tokenizer)
    if len(steps) == 1:
        pre_tokenizer = steps[0]  # (a Sequence of one splits as its one step)
    first = steps[0] if steps else None
    first_kind = None if first is None else split_kind(first)
    if first is not None and first_kind is None:
        return None
    # The chars chunks start with (Metaspace and the model-level split see spaces only).
    boundary = {" ", "▁"} if first is None or first_kind == "metaspace" else set(_CUT) | {"▁"}
    if first_kind == "metaspace":
        boundary.add(first.replacement)
    stage_boundary = boundary = frozenset(boundary)
    if not all(_stage_is_local(stage, stage_boundary) for stage in stages):
        return None

    def right_blocked(char: str) -> bool:
        return char in stage_boundary

    joined = None  # the model's tokens joined, for one-word pipelines (see model_splits_at)
    joins: frozenset[str] = frozenset()  # chars such a model may join the split char to
    if first is None or (first_kind == "metaspace" and not first.split):
        # One split per piece: the model must split at the boundary char itself.
        split_char = "▁" if first is None else first.replacement
        vocab = plain_bpe_vocab(model)
        joined = None if vocab is None else joined_tokens(vocab)
        joins = model_splits_at(model, split_char, joined)
        if joins is None:
            return None
        if joins:
            # A multi-word vocabulary: a chunk ending in one of these chars may not be cut from
            # the next (the chunks are joined, see _joined).
            def right_blocked(char: str) -> bool:  # noqa: F811
                return char in stage_boundary or char in joins
        if first is None:
            if not any(stage.replaces and stage.content == split_char for stage in stages):
                return None
            boundary = frozenset({split_char})
        else:
            boundary = frozenset({" ", split_char})
    elif first_kind == "words":
        boundary = frozenset(_CUT)
    elif first_kind == "metaspace":
        boundary = frozenset({" ", first.replacement})
    elif first_kind == "byte_level":
        if not first.use_regex or first.add_prefix_space:
            return None
        boundary = frozenset(_CUT)

        def right_blocked(char: str) -> bool:  # noqa: F811 - the GPT-2 pattern joins \s runs
            return char in stage_boundary or _WHITE_SPACE.match(char) is not None

    elif first_kind == "regex":
        pattern = first.pattern
        if not (first.invert and first.behavior == "removed" and getattr(pattern, "pattern", None) == CLIP_PATTERN):
            return None
        boundary = frozenset(_CUT)
    else:
        return None
    graphemes = any(stage.on_graphemes for stage in stages)
    plan = ChunkPlan(tuple(stages), stage_boundary, boundary, right_blocked, pre_tokenizer, model, graphemes, joined, encoder)
    plan.steps = steps
    plan.splitter = _splitter(pre_tokenizer, steps)
    if plan.splitter == "clip":
        plan.ascii_finditer = _CLIP_ASCII.finditer
        plan.clip_literals = steps[1].use_regex
    if plan.splitter == "words":
        plan.words_of = steps[0].plain_split().words  # (the pre-tokenizer's own function)
    elif plan.splitter == "ws_metaspace":
        plan.space_finditer = steps[0].plain_split().words
        metaspace = steps[1]
        mark = re.escape(metaspace.replacement)
        # Metaspace(split=True) cuts before every replacement char (HF's MergedWithNext).
        plan.run_findall = re.compile(f"[^{mark}]+|{mark}[^{mark}]*").findall if metaspace.split else None
    plan.one_word = first is None or (first_kind == "metaspace" and not first.split)
    if plan.one_word:
        # The model never joins across a split char that follows another char: cut before runs
        # of it; and around newlines when the model never joins them to anything (each line
        # of a long text then ends and starts with words met before).
        # A run after a char the model may join it to stays in the word (multi-word vocabularies).
        plan.run_findall = re.compile(pieces_pattern(model, "▁" if first is None else first.replacement, joins, joined)).findall
    elif first_kind == "metaspace":
        # Metaspace(split=True) cuts before every replacement char (HF's MergedWithNext).
        mark = re.escape(first.replacement)
        plan.run_findall = re.compile(f"[^{mark}]+|{mark}[^{mark}]*").findall
    if first is None or first_kind == "metaspace":
        # Only spaces become '▁': "a\nb" is one Metaspace word, so cut before spaces only.
        plan.chunk_findall = _SPACE_CHUNK_FINDALL
    return plan


def _has_clip_literal(text: str) -> bool:
    """Whether ``text`` holds a literal of CLIP's pattern that ByteLevel's own regex would cut
    in three (``<|``, the name, ``|>``): the specials, when they are not added tokens.

    >>> _has_clip_literal("a <|endoftext|>"), _has_clip_literal("a <| b |>")
    (True, False)
    """
    return "<|" in text and ("<|startoftext|>" in text or "<|endoftext|>" in text)


def _splitter(pre_tokenizer: Any, steps: tuple[Any, ...]) -> str | None:
    """The pre-tokenizers :func:`_fast_entry` does on plain strings, by what their steps
    declare (:func:`split_kind`)."""
    if pre_tokenizer is None:
        return "none"
    rules = tuple(map(split_kind, steps))
    if len(steps) == 1 and rules[0] in ("words", "metaspace"):
        return rules[0]
    if rules == ("byte_level",) and steps[0].use_regex and not steps[0].add_prefix_space:
        return "byte_level"
    if len(steps) == 2:
        first, second = steps
        if rules == ("words", "metaspace") and first.plain_split().runs and len(second.replacement) == 1:
            return "ws_metaspace"  # T5's and ALBERT's: every whitespace-free word gets its '▁'
        if rules == ("regex", "byte_level") and getattr(first.pattern, "pattern", None) == CLIP_PATTERN and not second.add_prefix_space:
            # (With use_regex, as transformers' CLIP converter writes it, GPT-2's pattern
            # splits each piece again, and leaves every piece whole -- a run of letters, a
            # digit, a run of other chars, a contraction -- but the two specials' literals: a
            # text with one of those takes the chunks, see clip_literals.)
            return "clip"
    return None


# ---------------------------------------------------------------------- one chunk
def chunk_entry(plan: ChunkPlan, chunk: str, head: bool, at_start: bool) -> tuple[Any, ...]:
    """Encode one chunk with the general machinery; fields:

    ``(ids, tokens, starts, ends, word_of_token, n_words, may_follow, may_precede)``, offsets
    relative to the chunk's start. ``may_follow``: after every normalizer stage the chunk
    started with a boundary char (so it may come after a boundary); ``may_precede``: it never
    ended with one (so a boundary may come after it).
    """
    if plan.splitter is not None:
        entry = _fast_entry(plan, chunk, head, at_start)
        if entry is not None:
            return entry
    from tokviz.normalized import NormalizedString, PreTokenizedString

    # A head chunk that does not start the text gets a nonzero shift, so position-dependent
    # components (Metaspace prepend_scheme="first") see what they see in the whole text.
    shift = 0 if at_start else 1
    normalized = NormalizedString(chunk, original_shift=shift)
    stage_boundary = plan.stage_boundary
    text = chunk
    may_follow = text[0] in stage_boundary
    may_precede = text[-1] not in stage_boundary
    for stage in plan.stages:
        if not head and stage.prepends:
            continue  # the whole text has one prepended char, at its start
        before = normalized.normalized
        stage.normalize(normalized)
        text = normalized.normalized
        if not text:
            break
        if text != before and stage.on_graphemes and _loses_a_removal(stage, before):
            # Like HF, Precompiled loses the removal of chars at the very start of its text,
            # and every later alignment is shifted, to the end of the whole text: a chunk
            # where that happens cannot be joined. (Elsewhere a removal is counted.)
            may_follow = may_precede = False
        may_follow = may_follow and text[0] in stage_boundary
        may_precede = may_precede and text[-1] not in stage_boundary
    if text:
        may_follow = may_follow and text[0] in plan.boundary
        may_precede = may_precede and not plan.right_blocked(text[-1])
    else:
        may_follow = may_precede = False
    pre_tokenized = PreTokenizedString(normalized)
    if not text:
        pre_tokenized.splits = []
    if plan.pre_tokenizer is not None:
        plan.pre_tokenizer.pre_tokenize(pre_tokenized)
    words_cache = plan.words
    ids: list[int] = []
    values: list[str] = []
    starts: list[int] = []
    ends: list[int] = []
    words: list[int] = []
    splits = pre_tokenized.splits
    for index, split in enumerate(splits):
        piece = split.normalized
        convert = piece.convert_offsets_to_original
        word = piece.normalized
        for token_id, value, token_start, token_end in zip(*(words_cache.get(word) or _word_entry(plan, word))):
            original = convert(token_start, token_end)
            start, end = original if original is not None else (token_start, token_end)
            ids.append(token_id)
            values.append(value)
            starts.append(start - shift)
            ends.append(end - shift)
            words.append(index)
    return (tuple(ids), tuple(values), tuple(starts), tuple(ends), tuple(words), len(splits), may_follow, may_precede)


def _loses_a_removal(stage: Any, text: str) -> bool:
    """Whether HF's Precompiled loses a removal on ``text``: its first grapheme cluster is
    removed (nothing before it to count the removal on, see ``normalizers._replace_changes``).

    >>> from tokviz.normalizers import Precompiled
    >>> from tokviz.sentencepiece.normalizer import charsmap_for_rule
    >>> nmt_nfkc = Precompiled(charsmap_for_rule("nmt_nfkc"))
    >>> _loses_a_removal(nmt_nfkc, "\\x1cﬁ"), _loses_a_removal(nmt_nfkc, " \\x1cﬁ")
    (True, False)
    """
    from tokviz.normalizers import GRAPHEME

    first = GRAPHEME.match(text)
    return first is not None and stage.normalize_str(first.group()) == ""


def _fast_entry(plan: ChunkPlan, chunk: str, head: bool, at_start: bool) -> tuple[Any, ...] | None:
    """:func:`chunk_entry` on plain strings when every normalizer stage leaves the chunk
    char-for-char aligned (unchanged, or a same-length change of ASCII text, plus chars
    prepended at the start, which take the first char's alignment); None otherwise.

    >>> from tokviz import models, normalizers, pre_tokenizers
    >>> plan = build_plan(normalizers.Lowercase(), pre_tokenizers.Whitespace(),
    ...                   models.WordLevel({"hi": 0, "!": 1, "[UNK]": 2}, unk_token="[UNK]"))
    >>> _fast_entry(plan, " Hi!", False, False)
    ((0, 1), ('hi', '!'), (1, 3), (3, 4), (0, 1), 2, True, True)
    """
    text = chunk
    stage_boundary = plan.stage_boundary
    may_follow = text[0] in stage_boundary
    may_precede = text[-1] not in stage_boundary
    prefix = 0  # chars inserted before the chunk's first char
    for stage in plan.stages:
        if stage.prepends:
            if not head:
                continue
            new = stage.prepend + text
            prefix += len(stage.prepend)
        else:
            new = _aligned_stage(stage, text)
            if new is None:
                return None
        text = new
        if not text:
            return None
        may_follow = may_follow and text[0] in stage_boundary
        may_precede = may_precede and text[-1] not in stage_boundary
    may_follow = may_follow and text[0] in plan.boundary
    may_precede = may_precede and not plan.right_blocked(text[-1])

    # Pre-tokenize: (start, end) spans of ``text``; byte-level words go to the model as symbols.
    splitter = plan.splitter
    byte_level = False
    words_cache = plan.words
    if plan.words_of is not None and not prefix:
        word_matches = plan.words_of(text)
        if word_matches is None:
            return None
        # The common case: one regex pass, each word's tokens from the word cache, offsets
        # of the text are offsets of the chunk.
        ids: list[int] = []
        values: list[str] = []
        starts: list[int] = []
        ends: list[int] = []
        words: list[int] = []
        index = -1
        for index, match in enumerate(word_matches):
            word = match.group()
            entry = words_cache.get(word) or _word_entry(plan, word)
            span_start = match.start()
            word_ids = entry[0]
            if len(word_ids) == 1:
                ids.append(word_ids[0])
                values.append(entry[1][0])
                starts.append(entry[2][0] + span_start)
                ends.append(entry[3][0] + span_start)
                words.append(index)
            else:
                ids.extend(word_ids)
                values.extend(entry[1])
                starts.extend([start + span_start for start in entry[2]])
                ends.extend([end + span_start for end in entry[3]])
                words.extend([index] * len(word_ids))
        return (tuple(ids), tuple(values), tuple(starts), tuple(ends), tuple(words), index + 1, may_follow, may_precede)
    if splitter == "ws_metaspace":
        if prefix:
            return None
        words_list, word_starts, floors = _metaspace_words(plan, text, head and at_start)
        ids = []
        values = []
        starts = []
        ends = []
        words = []
        for index, word in enumerate(words_list):
            base = word_starts[index]
            floor = base if floors is None else floors[index]
            entry = words_cache.get(word) or _word_entry(plan, word)
            for token_id, value, start, end in zip(*entry):
                start += base
                end += base
                if start == end:
                    return None  # (HF maps an empty range to itself: the general machinery)
                ids.append(token_id)
                values.append(value)
                starts.append(start if start >= floor else floor)
                ends.append(end if end > floor else floor + 1)
                words.append(index)
        return (tuple(ids), tuple(values), tuple(starts), tuple(ends), tuple(words), len(words_list), may_follow, may_precede)
    if splitter == "none":
        spans = [(0, len(text))]
    elif splitter == "words":
        matches = plan.words_of(text)
        if matches is None:
            return None
        spans = [match.span() for match in matches]
    elif splitter == "metaspace":
        pre_tokenizer = plan.pre_tokenizer
        replacement = pre_tokenizer.replacement
        text = text.replace(" ", replacement)
        scheme = pre_tokenizer.prepend_scheme
        if scheme != "never" and not text.startswith(replacement) and (scheme == "always" or (head and at_start)):
            text = replacement + text
            prefix += 1
        if pre_tokenizer.split and replacement in text[1:]:
            cuts = [index for index, char in enumerate(text) if char == replacement and index]
            spans = list(zip([0, *cuts], [*cuts, len(text)]))
        else:
            spans = [(0, len(text))]
    elif splitter == "byte_level":
        spans = [match.span() for match in _gpt2_finditer(text)]
        byte_level = True
    elif splitter == "clip":
        if plan.clip_literals and _has_clip_literal(text):
            return None
        spans = [match.span() for match in plan.steps[0].pattern.compiled.finditer(text)]
        byte_level = True
    else:
        return None

    ids = []
    values = []
    starts = []
    ends = []
    words = []
    if not byte_level and not prefix:
        for index, (span_start, span_end) in enumerate(spans):
            word = text[span_start:span_end]
            entry = words_cache.get(word) or _word_entry(plan, word)
            ids.extend(entry[0])
            values.extend(entry[1])
            starts.extend([start + span_start for start in entry[2]])
            ends.extend([end + span_start for end in entry[3]])
            words.extend([index] * len(entry[0]))
        return (tuple(ids), tuple(values), tuple(starts), tuple(ends), tuple(words), len(spans), may_follow, may_precede)
    for index, (span_start, span_end) in enumerate(spans):
        word = text[span_start:span_end]
        entry = words_cache.get(word) or _word_entry(plan, word, byte_level)
        for token_id, value, start, end in zip(*entry):
            start += span_start
            end += span_start
            ids.append(token_id)
            values.append(value)
            words.append(index)
            if start == end:  # HF maps an empty range to itself
                starts.append(start)
                ends.append(end)
            else:
                starts.append(start - prefix if start >= prefix else 0)
                ends.append(end - prefix if end > prefix else 1)
    return (tuple(ids), tuple(values), tuple(starts), tuple(ends), tuple(words), len(spans), may_follow, may_precede)


def _metaspace_words(plan: ChunkPlan, text: str, opens_text: bool = False) -> tuple[list[str], list[int], list[int] | None]:
    """WhitespaceSplit then Metaspace (T5's and ALBERT's pre-tokenizer) on a normalized piece:
    ``(words, starts, floors)``. Each whitespace-free run gets the replacement char prepended
    unless it starts with one (with ``prepend_scheme="first"`` only a run at the very start of
    the text: ``opens_text`` says the piece's first char is the text's first), and is cut
    before each replacement char when Metaspace splits. A word starts one char before its run
    when the char was prepended; ``floors``: the run's first char for each word, which the
    prepended char's offsets map to (HF aligns a prepended char with the char after it), or
    None when no char was prepended.

    >>> from tokviz import models, pre_tokenizers
    >>> plan = build_plan(None, pre_tokenizers.Sequence([pre_tokenizers.WhitespaceSplit(), pre_tokenizers.Metaspace()]),
    ...                   models.Unigram([("<unk>", 0.0)], 0))
    >>> _metaspace_words(plan, " ab\\tc"), _metaspace_words(plan, "a▁b ▁c")
    ((['▁ab', '▁c'], [0, 3], [1, 4]), (['▁a', '▁b', '▁c'], [-1, 1, 4], [0, 1, 4]))
    """
    matches = list(plan.space_finditer(text))
    if not matches:
        return [], [], None
    metaspace = plan.steps[1]
    mark = metaspace.replacement
    scheme = metaspace.prepend_scheme
    match_type = type(matches[0])
    runs = list(map(match_type.group, matches))
    run_starts = list(map(match_type.start, matches))
    # "first": HF prepends where a split starts at offset 0 of the original text, the first run.
    first_prepended = scheme == "first" and opens_text and not run_starts[0] and not runs[0].startswith(mark)
    if mark not in text:
        if scheme == "always":
            return list(map(add, repeat(mark), runs)), list(map(sub, run_starts, repeat(1))), run_starts
        if first_prepended:
            runs[0] = mark + runs[0]
            run_starts[0] = -1
            return runs, run_starts, [0, *run_starts[1:]]
        return runs, run_starts, None
    split = plan.run_findall
    words: list[str] = []
    starts: list[int] = []
    floors: list[int] = []
    for index, (run, start) in enumerate(zip(runs, run_starts)):
        floor = start
        if (scheme == "always" and not run.startswith(mark)) or (first_prepended and not index):
            run = mark + run
            start -= 1
        for word in split(run) if split is not None else (run,):
            words.append(word)
            starts.append(start)
            floors.append(floor)
            start += len(word)
            floor = start
    return words, starts, floors


def _word_entry(plan: ChunkPlan, word: str, byte_level: bool = False) -> tuple[tuple[Any, ...], ...]:
    """One word's tokens as ``(ids, values, starts, ends)`` (char offsets in the word), cached in the plan.

    >>> from tokviz import models, pre_tokenizers
    >>> plan = build_plan(None, pre_tokenizers.Whitespace(), models.WordPiece({"[UNK]": 0, "hug": 1, "##s": 2}))
    >>> _word_entry(plan, "hugs"), plan.words["hugs"]
    (((1, 2), ('hug', '##s'), (0, 3), (3, 4)), ((1, 2), ('hug', '##s'), (0, 3), (3, 4)))
    """
    if byte_level:
        entry = tuple(map(tuple, _byte_word_tokens(word, plan.model.tokenize, plan.bpe)))
    elif plan.bpe is not None:
        entry = plan.bpe(word) or _model_word_entry(plan.model, word)
    elif plan.wordpiece is not None:
        entry = plan.wordpiece(word) or _model_word_entry(plan.model, word)
    elif plan.unigram is not None and len(word) <= _UNIGRAM_MAX_WORD:
        entry = plan.unigram(word) or _model_word_entry(plan.model, word)
    else:
        entry = _model_word_entry(plan.model, word)
    if len(plan.words) < _MAX_CACHED_CHUNKS:
        plan.words[word] = entry
    return entry


def _model_word_entry(model: Any, word: str) -> tuple[tuple[Any, ...], ...]:
    """``model.tokenize(word)`` as ``(ids, values, starts, ends)``."""
    tokens = model.tokenize(word)
    if len(tokens) == 1:
        token = tokens[0]
        return (token.id,), (token.value,), (token.offsets[0],), (token.offsets[1],)
    return (
        tuple([token.id for token in tokens]),
        tuple([token.value for token in tokens]),
        tuple([token.offsets[0] for token in tokens]),
        tuple([token.offsets[1] for token in tokens]),
    )


#: ASCII whitespace as the patterns' ``\s`` sees it (Unicode White_Space: not \x1c-\x1f).
_ASCII_SPACES = "\t\n\x0b\x0c\r "


def _aligned_stage(stage: Any, text: str) -> str | None:
    """A normalizer stage (not Prepend) on ``text`` when its result is aligned char for
    char with ``text`` (unchanged, or each char replaced by one char), else None (also for
    an empty result): the whole-piece and chunk paths then leave it to the general path.

    >>> from tokviz.normalizers import NFKC, Lowercase
    >>> _aligned_stage(Lowercase(), "ÉtÉ"), _aligned_stage(NFKC(), "ﬁne")
    (None, None)
    """
    is_ascii = text.isascii()
    new = stage.ascii_one_for_one(text) if is_ascii else None  # (False: surely not one for one)
    if new is not None:
        return new or None
    new = stage.normalize_str(text)
    if new == text:
        return new or None
    if len(new) != len(text):
        return None
    if stage.replaces:
        # A one-char pattern replaced by one char (the lengths are equal).
        return new if isinstance(stage.pattern, str) and len(stage.pattern) == 1 else None
    return new if stage.aligned_if_same_length_on_ascii and is_ascii else None


def _entries(plan: ChunkPlan, chunks: list[str], at_start: bool, head_first: bool = True) -> list[Any] | None:
    """The cache entries of one piece's chunks (filling the caches). Where a boundary between
    two chunks is not safe, they are joined into one (``chunks`` is edited to match, see
    :func:`_joined`); None when that would take the whole piece. ``head_first``: the first
    chunk opens the piece (else they are chunks from its middle, see :func:`_segmented_fields`)."""
    head = _cached_entry(plan, chunks[0], head_first, at_start and head_first)
    if len(chunks) == 1:
        return [head]
    bodies = plan.bodies
    entries = list(map(bodies.get, chunks))
    entries[0] = head
    if None in entries:
        for position, entry in enumerate(entries):
            if entry is None:
                chunk = chunks[position]
                # Looked up again: a chunk repeated in this text is encoded once.
                entry = entries[position] = bodies.get(chunk) or chunk_entry(plan, chunk, False, False)
                if len(bodies) < _MAX_CACHED_CHUNKS:
                    bodies[chunk] = entry
    if not all(map(_MAY_PRECEDE, islice(entries, len(entries) - 1))) or not all(map(_MAY_FOLLOW, islice(entries, 1, None))):
        return _joined(plan, chunks, entries, at_start and head_first, head_first)
    return entries


def _cached_entry(plan: ChunkPlan, chunk: str, head: bool, at_start: bool) -> tuple[Any, ...]:
    """:func:`chunk_entry` through the plan's caches (a piece's first chunk in ``heads``)."""
    cache = plan.heads[at_start] if head else plan.bodies
    entry = cache.get(chunk)
    if entry is None:
        entry = chunk_entry(plan, chunk, head, at_start)
        if len(cache) < _MAX_CACHED_CHUNKS:
            cache[chunk] = entry
    return entry


def _joined(plan: ChunkPlan, chunks: list[str], entries: list[Any], at_start: bool, head_first: bool = True) -> list[Any] | None:
    """The entries once each run of chunks with unsafe boundaries between them is one chunk,
    encoded whole by the general machinery: a chunk's entry is that machinery's result on
    its own text, whatever the text, so a joined run is a chunk like any other, and joining
    repeats until every boundary left is safe. ``chunks`` is edited to match. None when the
    runs would cover the whole piece or cost more than encoding it twice (the caller's
    general path then encodes it once): one combining mark in a 20 KB text costs a few
    chunks, not the text.

    >>> from tokviz import models, normalizers, pre_tokenizers
    >>> plan = build_plan(normalizers.NFC(), pre_tokenizers.Whitespace(), models.WordLevel({"[UNK]": 0}, unk_token="[UNK]"))
    >>> chunks = ["a", " e", "\u0301", " b"]
    >>> entries = [chunk_entry(plan, chunks[0], True, True)] + [chunk_entry(plan, c, False, False) for c in chunks[1:]]
    >>> len(_joined(plan, chunks, entries, True)), chunks
    (3, ['a', ' e\u0301', ' b'])
    """
    budget = 2 * sum(map(len, chunks))
    while True:
        safe = [left[_MAY_PRECEDE_AT] and right[_MAY_FOLLOW_AT] for left, right in zip(entries, islice(entries, 1, None))]
        if all(safe):
            return entries
        if not any(safe):
            return None
        joined_chunks: list[str] = []
        joined_entries: list[Any] = []
        start = 0
        for position in range(len(entries)):
            if position < len(safe) and not safe[position]:
                continue  # (the run goes on past this boundary)
            if position == start:
                joined_chunks.append(chunks[start])
                joined_entries.append(entries[start])
            else:
                text = "".join(chunks[start : position + 1])
                budget -= len(text)
                if budget < 0:
                    return None
                head = head_first and start == 0
                entry = _cached_entry(plan, text, head, at_start and head)
                joined_chunks.append(text)
                joined_entries.append(entry)
            start = position + 1
        chunks[:] = joined_chunks
        entries = joined_entries


_ASCII_CHARS = frozenset(map(chr, range(128)))
_SPACE_RUN_FINDITER = re.compile(" {2,}").finditer
_ASCII_SPACE_RUN_FINDITER = re.compile("[\t\n\x0b\x0c\r ]{2,}").finditer


def _collapsed_runs(stage: Any, text: str, origin: list[int] | None, spaces_ascii: bool = False) -> tuple[str, list[int] | None] | None:
    """A Replace of runs of spaces (or of ASCII whitespace) by one char, on a piece where it
    changes a run of two or more (which :func:`_aligned_stage` refuses): the new text and,
    per char of it, the position of the char of the piece it stands for (``origin``: that
    of ``text``'s chars, None for themselves). Like the general path (and HF), the char
    that replaces a run stands for the run's last char. None for other stages.
    ``spaces_ascii``: the caller has checked that ``text``'s whitespace is ASCII.

    >>> from tokviz.normalizers import Replace
    >>> from tokviz.patterns import Regex
    >>> _collapsed_runs(Replace(Regex(r"\\s+"), " "), "a\\n\\nb c", None)
    ('a b c', [0, 2, 3, 4, 5])
    >>> _collapsed_runs(Replace(Regex(r"\\s+"), " "), "a\\tb", None)
    ('a b', None)
    """
    pattern = stage.pattern
    content = stage.content
    if not isinstance(pattern, Regex) or len(content) != 1:
        return None
    source = pattern.pattern
    if source in SPACE_ONLY_PATTERNS:
        finditer = _SPACE_RUN_FINDITER
        singles = " " if source == " +" else ""
    elif source in WHITESPACE_PATTERNS and (spaces_ascii or text.isascii()):
        finditer = _ASCII_SPACE_RUN_FINDITER
        singles = _ASCII_SPACES if source == r"\s+" else ""
    else:
        return None
    for single in singles:  # (str.replace per char: str.translate with a dict is slow on non-ASCII text)
        if single != content and single in text:
            text = text.replace(single, content)
    parts: list[str] = []
    positions: list[int] = []
    kept_from = 0
    for match in finditer(text):
        start, end = match.span()
        parts.append(text[kept_from:start])
        parts.append(content)
        if origin is None:
            positions.extend(range(kept_from, start))
            positions.append(end - 1)
        else:
            positions.extend(origin[kept_from:start])
            positions.append(origin[end - 1])
        kept_from = end
    if not parts:
        return text, origin  # no run: each char stands where it stood
    parts.append(text[kept_from:])
    if origin is None:
        positions.extend(range(kept_from, len(text)))
    else:
        positions.extend(origin[kept_from:])
    return "".join(parts), positions


def _staged(plan: ChunkPlan, text: str, head: bool = True) -> tuple[str | None, int, list[int] | None]:
    """The normalizer stages on a whole piece, the number of chars they prepended, and where
    runs of whitespace were collapsed, the position in the piece of each char of the result
    (None while every char stands for the char at its own position, see
    :func:`_collapsed_runs`); None for the text when a stage does not leave the piece
    aligned that way (or empties it). ``head``: the text opens a piece (Prepend stages act).
    """
    if not text.isascii():
        return _staged_chars(plan, text, head)
    prefix = 0  # chars inserted before the piece's first char
    origin = None
    for stage in plan.stages:
        if stage.prepends:
            if not head:
                continue
            text = stage.prepend + text
            prefix += len(stage.prepend)
            continue
        new = _aligned_stage(stage, text)
        if new is None:
            collapsed = _collapsed_runs(stage, text, origin) if stage.replaces and not prefix else None
            if collapsed is None:
                return None, prefix, None
            new, origin = collapsed
        text = new
    return text, prefix, origin


#: A char that joins the one before it in a grapheme cluster, or may compose with it (a
#: non-starter, or Hangul V/T), and one that joins the char after it in a cluster (also an
#: Extend: a virama links Indic consonants; and CR before LF).
_JOINS_PREVIOUS = regex.compile(r"[\p{Grapheme_Cluster_Break=Extend}\p{Grapheme_Cluster_Break=ZWJ}\p{Grapheme_Cluster_Break=SpacingMark}"
                                r"\p{Grapheme_Cluster_Break=V}\p{Grapheme_Cluster_Break=T}\p{Grapheme_Cluster_Break=Regional_Indicator}]")
_JOINS_NEXT = regex.compile(r"[\p{Grapheme_Cluster_Break=Prepend}\p{Grapheme_Cluster_Break=L}\p{Grapheme_Cluster_Break=Regional_Indicator}"
                            r"\p{Grapheme_Cluster_Break=ZWJ}\p{Grapheme_Cluster_Break=Extend}\r]")
#: White_Space outside ASCII (what ``\s`` also matches there).
_NON_ASCII_SPACE = regex.compile(r"(?![\x00-\x7f])\s")


class _CharTables:
    """What a run of per-char stages makes of each char met so far (see :func:`_staged_chars`):
    ``known`` chars, the ``translation`` (for ``str.translate``) of those it changes, the
    ``changed`` ones, the ``longer`` ones it makes several chars of (char -> them), and the
    ``refused`` chars (whose pieces go to the chunks).

    >>> tables = _CharTables()
    >>> tables.learn("a", "a"); tables.learn("ﬁ", "fi"); tables.known == {"a", "ﬁ"}, tables.translation, tables.longer
    (True, {64257: 'fi'}, {'ﬁ': 'fi'})
    """

    __slots__ = ("known", "translation", "changed", "longer", "refused")

    def __init__(self) -> None:
        self.known: set[str] = set()
        self.translation: dict[int, str] = {}
        self.changed: set[str] = set()
        self.longer: dict[str, str] = {}
        self.refused: set[str] = set()

    def learn(self, char: str, new: str) -> None:
        # (known last: another thread that sees a char known sees what it becomes)
        if new != char:
            self.translation[ord(char)] = new
            if len(new) > 1:
                self.longer[char] = new
            self.changed.add(char)
        self.known.add(char)


def _char_groups(plan: ChunkPlan) -> list[tuple[str, Any, Any]]:
    """The normalizer stages as :func:`_staged_chars` runs them: ``("prepend", stage, None)``,
    ``("replace", stage, None)`` for a Replace that is not one char for one, and
    ``("chars", stages, tables)`` for each run of per-char stages, whose :class:`_CharTables`
    are filled as chars are met (the printable ASCII ones at once, where they can be)."""
    groups: list[tuple[str, Any, Any]] = []
    for stage in plan.stages:
        if stage.prepends:
            groups.append(("prepend", stage, None))
        elif stage.per_char or (stage.replaces and isinstance(stage.pattern, str) and len(stage.pattern) == 1):
            if groups and groups[-1][0] == "chars":
                groups[-1][1].append(stage)
            else:
                groups.append(("chars", [stage], _CharTables()))
        else:
            groups.append(("replace", stage, None))
    for kind, stages, tables in groups:
        through = _printable_ascii_through(stages) if kind == "chars" else None
        if through is not None:
            for char, new in zip(_PRINTABLE_ASCII, through):
                tables.learn(char, new)
    return groups


def _chars_output(stages: list[Any], chars: list[str]) -> list[str | None]:
    """What a run of per-char stages makes of each of ``chars`` alone, or None where that is
    not what they make of it in any text without the chars refused here: every stage's input
    for it must start a cluster and a normalization's combining sequence (it does not join
    or compose with what comes before), and a Precompiled stage's input must not join what
    comes after (clusters are its units); nor may a stage make nothing of it. (Whether the
    chars of a longer output are each aligned to the char: :func:`_aligned_to_their_chars`.)
    Stage by stage over all of them: the checks of a stage's inputs in one regex pass over
    their first chars (their last before a Precompiled stage), only where an input changed
    since it was checked (a stage that changes nothing hands on an input already checked).

    >>> from tokviz.normalizers import NFKD, StripAccents, Lowercase
    >>> _chars_output([NFKD(), StripAccents(), Lowercase()], ["É", "\u0301", "ﬁ", "a"])
    ['e', None, 'fi', 'a']
    """
    texts: list[str | None] = list(chars)
    checked = [""] * len(texts)
    live = list(range(len(texts)))
    for stage in stages:
        fresh = [index for index in live if texts[index] != checked[index]]
        if fresh:
            firsts = "".join([texts[index][0] for index in fresh])  # type: ignore[index]
            joining = {match.start() for match in _JOINS_PREVIOUS.finditer(firsts)}
            joining.update(compress(range(len(firsts)), map(unicodedata.combining, firsts)))
            for position in joining:
                texts[fresh[position]] = None
            for index in fresh:
                checked[index] = texts[index]  # type: ignore[assignment]
        if stage.on_graphemes:
            lasts = "".join([texts[index][-1] for index in live if texts[index] is not None])  # type: ignore[index]
            if _JOINS_NEXT.search(lasts) is not None:
                kept = [index for index in live if texts[index] is not None]
                for match in _JOINS_NEXT.finditer(lasts):
                    texts[kept[match.start()]] = None
        live = [index for index in live if texts[index] is not None]
        for index, new in zip(live, map(stage.normalize_str, [texts[index] for index in live])):
            texts[index] = new or None
        live = [index for index in live if texts[index] is not None]
    return texts


def _aligned_to_their_chars(stages: list[Any], chars: str, outputs: list[str]) -> bool:
    """Whether the stages, on ``chars`` (each a char :func:`_chars_output` passed), make
    ``outputs`` one after the other with each char of an output aligned to the char it is made
    of (as HF aligns a char's expansion: the first char replaces it, the others are inserted
    after it with its alignment), by the general machinery; all the chars met in a piece
    are checked in one run.

    >>> from tokviz.normalizers import BertNormalizer, NFKD
    >>> _aligned_to_their_chars([BertNormalizer()], "我们", [" 我 ", " 们 "]), _aligned_to_their_chars([NFKD()], "ﬁ", ["fi"])
    (True, True)
    """
    from tokviz.normalized import NormalizedString

    normalized = NormalizedString(chars)
    try:
        for stage in stages:
            stage.normalize(normalized)
    except Exception:  # (the chunks meet it, and say what is wrong)
        return False
    expected = list(chain.from_iterable(repeat((index, index + 1), len(output)) for index, output in enumerate(outputs)))
    return normalized.normalized == "".join(outputs) and normalized.alignments == expected


#: The printable ASCII chars, whose tables :func:`_char_groups` fills at once.
_PRINTABLE_ASCII = "".join(map(chr, range(0x20, 0x7F)))


def _printable_ascii_through(stages: list[Any]) -> str | None:
    """:func:`_chars_output` of each printable ASCII char at once: the stages run on the 95
    chars together, which is each char on its own when no stage's input has a char that may
    join a neighbour or compose (each is then its own cluster and combining sequence) and
    every stage keeps the length (one char for one); None otherwise (the chars are then
    looked at one by one as they are met).

    >>> from tokviz.normalizers import NFKD, StripAccents, Lowercase
    >>> _printable_ascii_through([NFKD(), StripAccents(), Lowercase()])[33:40]
    'abcdefg'
    """
    text = _PRINTABLE_ASCII
    for stage in stages:
        if _JOINS_PREVIOUS.search(text) is not None or _JOINS_NEXT.search(text) is not None or any(map(unicodedata.combining, text)):
            return None
        try:
            text = stage.normalize_str(text)
        except Exception:  # (a stage that cannot run says so where the chars meet it, as before)
            return None
        if len(text) != len(_PRINTABLE_ASCII):
            return None
    return text


def _staged_chars(plan: ChunkPlan, text: str, head: bool = True) -> tuple[str | None, int, list[int] | None]:
    """:func:`_staged` on a piece with non-ASCII chars: each run of per-char stages maps
    every char to what it makes of it alone (one ``str.translate``): one char, which keeps the
    piece aligned char for char, or several, each aligned to the char (BERT's spaces around a
    Chinese char, a ligature's letters, the jamo of a Hangul syllable under NFKD): then the
    position of each char of the result in the piece is kept. A char they do not make one or
    more chars of so, alone or in context (see :func:`_chars_output`), leaves the piece to
    the chunks. Replaces of runs of whitespace collapse them as on ASCII pieces; other
    Replaces must find nothing.

    >>> from tokviz import models, normalizers, pre_tokenizers
    >>> plan = build_plan(normalizers.Sequence([normalizers.NFKD(), normalizers.StripAccents(), normalizers.Lowercase()]),
    ...                   pre_tokenizers.Whitespace(), models.WordLevel({"[UNK]": 0}, unk_token="[UNK]"))
    >>> _staged_chars(plan, "Été à Ｐaris"), _staged_chars(plan, "ﬁné")
    (('ete a paris', 0, None), ('fine', 0, [0, 0, 1, 2]))
    """
    groups = plan.char_groups
    if groups is None:
        groups = plan.char_groups = _char_groups(plan)
    prefix = 0
    origin = None
    for kind, stage, tables in groups:
        if kind == "prepend":
            if not head:
                continue
            text = stage.prepend + text
            prefix += len(stage.prepend)
            continue
        if kind == "replace":
            pattern = stage.pattern
            if isinstance(pattern, str):
                if pattern in text:
                    return None, prefix, None
                continue
            if pattern.pattern in WHITESPACE_PATTERNS and _NON_ASCII_SPACE.search(text) is not None:
                return None, prefix, None
            collapsed = None if prefix else _collapsed_runs(stage, text, origin, True)
            if collapsed is None:
                return None, prefix, None
            text, origin = collapsed
            continue
        chars = set(text)
        fresh = chars.difference(tables.known)
        if fresh:
            if not tables.refused.isdisjoint(fresh):
                return None, prefix, None
            longer_fresh = []
            fresh_chars = list(fresh)
            outputs = _chars_output(stage, fresh_chars)
            if None in outputs:
                tables.refused.update(compress(fresh_chars, map(is_, outputs, repeat(None))))
                return None, prefix, None
            for char, new in zip(fresh_chars, outputs):
                if len(new) > 1:
                    longer_fresh.append((char, new))
                else:
                    tables.learn(char, new)
            if longer_fresh:
                # Their alignments, by the general machinery, in one run for all of them.
                if not _aligned_to_their_chars(stage, "".join([char for char, _ in longer_fresh]), [new for _, new in longer_fresh]):
                    # Those that fail alone are refused (all of them, if each passes alone).
                    failed = [char for char, new in longer_fresh if not _aligned_to_their_chars(stage, char, [new])]
                    tables.refused.update(failed or [char for char, _ in longer_fresh])
                    return None, prefix, None
                for char, new in longer_fresh:
                    tables.learn(char, new)
        if tables.changed.isdisjoint(chars):
            continue
        longer = tables.longer
        if longer and not longer.keys().isdisjoint(chars):
            if prefix:
                return None, prefix, None  # (prepended chars and an origin: the chunks)
            # Each char of the result comes from the char it was made of (or, after collapsed
            # runs, from where that char came from).
            sizes = map(len, map(longer.get, text, text))
            origin = list(chain.from_iterable(map(repeat, range(len(text)) if origin is None else origin, sizes)))
        text = text.translate(tables.translation)
    return (text or None), prefix, origin


def _through_origin(offsets: tuple[tuple[int, int], ...], origin: list[int]) -> tuple[tuple[int, int], ...] | None:
    """Offsets in a normalized piece as offsets in the piece (see :func:`_staged`): from the
    first char's origin to one past the last char's; None when a token is empty.

    >>> _through_origin(((0, 1), (1, 3)), [0, 2, 3])
    ((0, 1), (2, 4))
    """
    starts = list(map(itemgetter(0), offsets))
    ends = list(map(itemgetter(1), offsets))
    if any(map(eq, starts, ends)):
        return None
    at = origin.__getitem__
    return tuple(zip(map(at, starts), map(add, map(at, map(sub, ends, repeat(1))), repeat(1))))


def _line_fields(
    plan: ChunkPlan, text: str, at_start: bool, normalized_search: Any = None, head: bool = True, flat: bool = False
) -> tuple[Any, ...] | None:
    """One whole piece of text (a line, or the text between added tokens) on plain strings:
    ``(ids, tokens, offsets, word_ids, n_words)``, offsets relative to the piece; None when a
    stage does not leave the piece aligned char for char (then the chunks do it), or when
    ``normalized_search`` (of normalized-matched added tokens) finds one after the stages.

    The rules are :func:`_fast_entry`'s, applied once to the whole piece instead of once per
    chunk: each stage is run on the piece (an ASCII piece in one C call where possible) and
    must leave it unchanged or change chars one for one (a non-ASCII piece: see
    :func:`_staged_chars`), but for Replaces that collapse runs of whitespace, whose
    positions map the offsets back (a blank line under T5's normalizer, see
    :func:`_collapsed_runs`). The pre-tokenizer's split is
    done on the normalized piece (one regex pass), each word's tokens come from the word
    cache; no chunk entry is made, so a cold text costs one model call per new word only.
    One-word pipelines (Llama's) are cut before runs of '▁', where their model surely splits.

    >>> from tokviz import models, normalizers, pre_tokenizers
    >>> plan = build_plan(normalizers.Lowercase(), pre_tokenizers.Whitespace(),
    ...                   models.WordLevel({"hi": 0, "!": 1, "[UNK]": 2}, unk_token="[UNK]"))
    >>> _line_fields(plan, "Hi! you", True)
    ((0, 1, 2), ('hi', '!', '[UNK]'), ((0, 2), (2, 3), (4, 7)), (0, 1, 2), 3)
    """
    shifts = plan.shifts
    if shifts is not None:
        # Prepends and one-char Replaces (Llama's): they keep the piece aligned, in one step.
        if not text:
            return None
        prepended, replaces = shifts
        for char, replacement in replaces:
            text = text.replace(char, replacement)
        prefix = 0
        if head:
            prefix = len(prepended)
            text = prepended + text
    origin = None
    if shifts is None:
        text, prefix, origin = _staged(plan, text, head)
        if text is None:
            return None
    if normalized_search is not None and normalized_search(text) is not None:
        return None
    if origin is not None and at_start and plan.splitter == "ws_metaspace" and plan.steps[1].prepend_scheme == "first":
        return None  # (whether the first word starts the original text: the chunks or the general path tell)
    fields = _normalized_fields(plan, text, prefix, at_start, flat and origin is None)
    if origin is None or fields is None:
        return fields
    offsets = _through_origin(fields[2], origin)
    if offsets is None:
        return None
    return fields[0], fields[1], offsets, fields[3], fields[4]


def _normalized_fields(plan: ChunkPlan, text: str, prefix: int, at_start: bool, flat: bool = False) -> tuple[Any, ...] | None:
    """:func:`_line_fields` on the normalized piece (``prefix``: how many chars the stages
    prepended), offsets in it less the prepended chars (``flat``: as :class:`FlatOffsets`
    where they come out as runs of ints, else always pairs)."""
    splitter = plan.splitter
    byte_level = splitter == "clip"
    floors = None  # (see _metaspace_words)
    if plan.words_of is not None or byte_level:
        if byte_level:
            if plan.clip_literals and _has_clip_literal(text):
                return None
            if text.isascii():
                matches = list(plan.ascii_finditer(text))
            else:
                matches = list(plan.steps[0].pattern.compiled.finditer(text))
        else:
            found = plan.words_of(text)
            if found is None:
                return None
            matches = list(found)
        n_words = len(matches)
        if not n_words:
            return (), (), (), (), 0
        match_type = type(matches[0])
        words = list(map(match_type.group, matches))
        word_starts = list(map(match_type.start, matches))
        if prefix:
            word_starts = list(map(sub, word_starts, repeat(prefix)))
            if n_words > 1 and word_starts[1] < 0:
                return None
    else:
        if splitter == "metaspace":
            pre_tokenizer = plan.pre_tokenizer
            replacement = pre_tokenizer.replacement
            text = text.replace(" ", replacement)
            scheme = pre_tokenizer.prepend_scheme
            if scheme != "never" and not text.startswith(replacement) and (scheme == "always" or at_start):
                text = replacement + text
                prefix += 1
        elif splitter == "ws_metaspace":
            if prefix:
                return None
            words, word_starts, floors = _metaspace_words(plan, text, at_start)
            if not words:
                return (), (), (), (), 0
        elif splitter != "none" or plan.run_findall is None:
            return None
        if splitter != "ws_metaspace":
            # These words tile the text: their starts are the running sum of their lengths
            # (less the prepended chars, which are mapped below).
            words = plan.run_findall(text)
            if not words:
                return (), (), (), (), 0
            word_starts = None  # the words tile the text: see below
        n_words = len(words)
    wordlevel = plan.wordlevel
    if wordlevel is not None and not prefix and plan.words_of is not None:
        # One token per word: the word itself, or the unk token.
        vocab, unk_id, unk_token = wordlevel
        ids = list(map(vocab.get, words))
        if None in ids:
            if unk_id is None:
                return None  # the model raises: the general path says why
            tokens = tuple([unk_token if token_id is None else word for token_id, word in zip(ids, words)])
            ids = [unk_id if token_id is None else token_id for token_id in ids]
        else:
            tokens = tuple(words)
        word_ids = tuple(range(n_words)) if not plan.one_word else (0,) * n_words
        if flat:
            offsets = FlatOffsets((list(map(match_type.start, matches)), list(map(match_type.end, matches)), 0, 0))
            return tuple(ids), tokens, offsets, word_ids, n_words
        return tuple(ids), tokens, tuple(map(match_type.span, matches)), word_ids, n_words
    cache_get = plan.words.get
    entries = list(map(cache_get, words))
    if None in entries:
        encoder = None if byte_level else plan.bpe or plan.wordpiece
        if encoder is None:
            for position, entry in enumerate(entries):
                if entry is None:
                    word = words[position]
                    # Looked up again: a word repeated in this piece is encoded once.
                    entries[position] = cache_get(word) or _word_entry(plan, word, byte_level)
        else:
            # _word_entry's BPE and WordPiece cases inline (a cold line has several new words).
            words_cache = plan.words
            for position, entry in enumerate(entries):
                if entry is None:
                    word = words[position]
                    entry = cache_get(word)
                    if entry is None:
                        entry = encoder(word) or _model_word_entry(plan.model, word)
                        if len(words_cache) < _MAX_CACHED_CHUNKS:
                            words_cache[word] = entry
                    entries[position] = entry
    ids = tuple(chain.from_iterable(map(_IDS, entries)))
    n = len(ids)
    tokens = tuple(chain.from_iterable(map(_TOKENS, entries)))
    odd_values = plan.odd_values
    if word_starts is None and odd_values is not None and odd_values.isdisjoint(tokens):
        # The words tile the text and, without unk or byte tokens, each token is the slice
        # of the text it covers: offsets are running sums of the tokens' lengths.
        if plan.one_word:
            word_ids = (0,) * n
        elif n == n_words:
            word_ids = tuple(range(n_words))
        else:
            word_ids = tuple(chain.from_iterable(map(repeat, range(n_words), map(len, map(_IDS, entries)))))
        bounds = list(accumulate(map(len, tokens), initial=-prefix))
        if prefix and n and bounds[1] > 0:
            # Only the first token reaches into the prepended chars: it starts at the first char.
            bounds[0] = 0
            prefix = 0
        if not prefix:
            if flat:
                return ids, tokens, FlatOffsets((bounds, None, 0, 0)), word_ids, n_words
            return ids, tokens, tuple(zip(bounds, islice(bounds, 1, None))), word_ids, n_words
        starts = bounds[:-1]
        ends = bounds[1:]
        index = 0
        while index < n and starts[index] < 0:
            # Inside the prepended chars: from the first char (tokens are never empty here).
            starts[index] = 0
            if ends[index] <= 0:
                ends[index] = 1
            index += 1
        if flat:
            return ids, tokens, FlatOffsets((starts, ends, 0, 0)), word_ids, n_words
        return ids, tokens, tuple(zip(starts, ends)), word_ids, n_words
    if word_starts is None:
        word_starts = list(accumulate(map(len, words), initial=-prefix))
        if prefix and n_words > 1 and word_starts[1] < 0:
            return None
    if n == n_words:
        bases = word_starts
        word_ids = (0,) * n if plan.one_word else tuple(range(n_words))
    else:
        counts = list(map(len, map(_IDS, entries)))
        bases = list(chain.from_iterable(map(repeat, word_starts, counts)))
        word_ids = (0,) * n if plan.one_word else tuple(chain.from_iterable(map(repeat, range(n_words), counts)))
    starts = list(map(add, chain.from_iterable(map(_STARTS, entries)), bases))
    ends = list(map(add, chain.from_iterable(map(_ENDS, entries)), bases))
    if floors is not None:
        # A token on a word's prepended char maps to the run's first char (see _metaspace_words).
        if any(map(eq, starts, ends)):
            return None  # (HF maps an empty range to itself: the general machinery)
        if n != n_words:
            floors = list(chain.from_iterable(map(repeat, floors, counts)))
        starts = list(map(max, starts, floors))
        ends = list(map(max, ends, map(add, floors, repeat(1))))
    if prefix:
        # Offsets of the normalized piece less the prepended chars (taken off the bases); a
        # token inside them maps to the first char, and HF maps an empty range to itself.
        # Only the first word's tokens can reach into the prepended chars.
        fix = range(n) if any(map(eq, starts, ends)) else range(len(entries[0][0]))
        for index in fix:
            start = starts[index]
            end = ends[index]
            if start == end:
                starts[index] = ends[index] = start + prefix
            elif start < 0:
                starts[index] = 0
                ends[index] = end if end > 0 else 1
    if flat:
        return ids, tokens, FlatOffsets((starts, ends, 0, 0)), word_ids, n_words
    return ids, tokens, tuple(zip(starts, ends)), word_ids, n_words


#: Sequences this long that the whole-piece path refuses are tried in segments.
SEGMENTED_MIN_LENGTH = 1024
#: Segments this short that the whole-piece path refuses go to the chunks.
SEGMENT_MIN_LENGTH = 256
#: The segment cache of a plan stops growing past this many chars of segments.
_MAX_SEGMENT_CHARS = 500_000


def _segmented_fields(plan: ChunkPlan, text: str) -> tuple[Any, ...] | None:
    """A long piece's fields (as :func:`_line_fields` gives them) when the whole-piece path
    refuses it for a few awkward chars (a line of Hindi or Korean in a long English text
    under ALBERT's normalizer): the piece is cut in two at the chunk boundary nearest its
    middle, when the chunks on both sides allow it (their entries' flags, which the chunk
    path checks at every boundary), each half is taken whole or cut again, and a half under
    :data:`SEGMENT_MIN_LENGTH` (or with no safe cut in the middle) goes to the chunks. None
    when the chunks refuse a half, or when the first chunk may not be joined to the next (a
    Precompiled removal at the very start shifts everything after it): the general path.
    Each segment's fields (or the whole-piece path's refusal) are cached by its text, as
    chunks are: the same long text again costs look-ups.
    """
    chunks = plan.chunk_findall(text)
    if len(chunks) < 2 or not _cached_entry(plan, chunks[0], True, True)[_MAY_PRECEDE_AT]:
        return None
    bounds = list(accumulate(map(len, chunks), initial=0))
    parts: list[tuple[int, tuple[Any, ...]]] = []
    cache, cached_chars = plan.segments
    cache_get = cache.get

    def safe_cut(cut: int) -> bool:
        before = _cached_entry(plan, chunks[cut - 1], cut == 1, cut == 1)
        return before[_MAY_PRECEDE_AT] and _cached_entry(plan, chunks[cut], False, False)[_MAY_FOLLOW_AT]

    def solve(first: int, last: int, whole: bool = True) -> bool:  # chunks[first:last]
        head = first == 0
        start, end = bounds[first], bounds[last]
        key = (head, text[start:end])
        fields = cache_get(key)
        if fields:
            parts.append((start, fields))
            return True
        if fields is None and whole:
            fields = _line_fields(plan, key[1], head, None, head)
            if fields is not None:
                remember(key, fields)
                parts.append((start, fields))
                return True
            remember(key, False)
        cut = bisect_left(bounds, (start + end) // 2, first + 1, last)
        if end - start <= SEGMENT_MIN_LENGTH or cut >= last or not safe_cut(cut):
            pieces = chunks[first:last]
            entries = _entries(plan, pieces, head, head)
            if entries is None:
                return False
            fields = _entries_fields(pieces, entries)
            remember(key, fields)
            parts.append((start, fields))
            return True
        return solve(first, cut) and solve(cut, last)

    def remember(key: tuple[bool, str], fields: Any) -> None:
        if cached_chars[0] < _MAX_SEGMENT_CHARS:
            cache[key] = fields
            cached_chars[0] += len(key[1])

    if not solve(0, len(chunks), False):  # (the caller found the whole piece refused)
        return None
    if len(parts) == 1:
        return parts[0][1]
    # Joined in C: each part's offsets shifted by its start, word ids by the words before it.
    fields = list(map(itemgetter(1), parts))
    counts = list(map(len, map(_IDS, fields)))
    ids = tuple(chain.from_iterable(map(_IDS, fields)))
    offsets = list(chain.from_iterable(map(itemgetter(2), fields)))
    bases = list(chain.from_iterable(map(repeat, map(itemgetter(0), parts), counts)))
    shifted = tuple(zip(map(add, map(itemgetter(0), offsets), bases), map(add, map(itemgetter(1), offsets), bases)))
    word_bases = list(accumulate(map(itemgetter(4), fields), initial=0))
    n_words = word_bases.pop()
    if plan.one_word:
        words: tuple[int, ...] = (0,) * len(ids)
    else:
        words = tuple(map(add, chain.from_iterable(map(itemgetter(3), fields)), chain.from_iterable(map(repeat, word_bases, counts))))
    return ids, tuple(chain.from_iterable(map(_TOKENS, fields))), shifted, words, n_words


def _entries_fields(chunks: list[str], entries: list[Any]) -> tuple[Any, ...]:
    """Chunk entries as fields: ``(ids, tokens, offsets, word_ids, n_words)``."""
    ids = tuple(chain.from_iterable(map(_IDS, entries)))
    counts = list(map(len, map(_IDS, entries)))
    bases = list(chain.from_iterable(map(repeat, accumulate(map(len, chunks), initial=0), counts)))
    offsets = tuple(
        zip(
            map(add, chain.from_iterable(map(_STARTS, entries)), bases),
            map(add, chain.from_iterable(map(_ENDS, entries)), bases),
        )
    )
    word_bases = list(accumulate(map(_N_WORDS, entries), initial=0))
    n_words = word_bases.pop()
    words = tuple(map(add, chain.from_iterable(map(_WORDS, entries)), chain.from_iterable(map(repeat, word_bases, counts))))
    return ids, tuple(chain.from_iterable(map(_TOKENS, entries))), offsets, words, n_words


def _encode_whole(plan: ChunkPlan, sequence: str, type_id: int) -> Any:
    """:func:`encode_chunked` of a sequence without added tokens: tuples built in one go."""
    if len(sequence) >= SEGMENTED_MIN_LENGTH:
        fields = _segmented_fields(plan, sequence)
        if fields is not None:
            ids, tokens, offsets, words, _ = fields
            n = len(ids)
            return Encoding(ids, (type_id,) * n, tokens, words, offsets, (0,) * n, (1,) * n, None, {})
    chunks = plan.chunk_findall(sequence)
    entries = _entries(plan, chunks, True)
    if entries is None:
        return None
    ids = tuple(chain.from_iterable(map(_IDS, entries)))
    n = len(ids)
    if len(entries) == 1:
        entry = entries[0]
        offsets = tuple(zip(entry[2], entry[3]))
        words = (0,) * n if plan.one_word else entry[4]
        return Encoding(ids, (type_id,) * n, entry[1], words, offsets, (0,) * n, (1,) * n, None, {})
    counts = list(map(len, map(_IDS, entries)))
    bases = list(chain.from_iterable(map(repeat, accumulate(map(len, chunks), initial=0), counts)))
    offsets = tuple(
        zip(
            map(add, chain.from_iterable(map(_STARTS, entries)), bases),
            map(add, chain.from_iterable(map(_ENDS, entries)), bases),
        )
    )
    if plan.one_word:
        words: tuple[int, ...] = (0,) * n
    else:
        word_bases = accumulate(map(_N_WORDS, entries), initial=0)
        words = tuple(map(add, chain.from_iterable(map(_WORDS, entries)), chain.from_iterable(map(repeat, word_bases, counts))))
    tokens = tuple(chain.from_iterable(map(_TOKENS, entries)))
    return Encoding(ids, (type_id,) * n, tokens, words, offsets, (0,) * n, (1,) * n, None, {})


def _gpt2_finditer(text: str) -> Any:
    from tokviz.pre_tokenizers import GPT2_ASCII_REGEX, GPT2_REGEX

    return (GPT2_ASCII_REGEX if text.isascii() else GPT2_REGEX).finditer(text)


# ---------------------------------------------------------------------- the tokenizer's side
def encode_chunked(added: Any, plan: ChunkPlan, sequence: str, type_id: int, word_index: int | None) -> Any:
    """The sequence's Encoding (before post-processing) from cached chunks, or None when the
    general path must do it (a boundary that is not safe in this text).

    The cycle collector waits meanwhile: a long cold text makes thousands of cache and
    offset tuples (no cycles among them), and the collections they trigger also walk the
    loaded tokenizer's tables (5-15% of a cold 20 KB encode)."""
    if not gc.isenabled():
        return _encode_chunked(added, plan, sequence, type_id, word_index)
    gc.disable()
    try:
        return _encode_chunked(added, plan, sequence, type_id, word_index)
    finally:
        gc.enable()


_NO_FIELDS = ((), (), (), (), 0)


def _processed_fields(plan: ChunkPlan, sequence: str, normalized_search: Any) -> tuple[Any, ...] | None:
    """A one-piece sequence's fields as :func:`_encode_chunked` finds them: the whole piece,
    else its chunks (not when added tokens are matched after the normalizer)."""
    fields = _line_fields(plan, sequence, True, normalized_search, flat=True)
    if fields is not None or normalized_search is not None:
        return fields
    encoding = _encode_whole(plan, sequence, 0)
    if encoding is None:
        return None
    return (*encoding.held_fields(), 0)


def encode_processed(added: Any, plan: ChunkPlan, sequence: str, split: Any) -> Any:
    """``encode(sequence)`` of a one-piece line (no added token in it) post-processed by a
    single template ``split`` (see :meth:`TemplateProcessing.single_parts`), built in one go:
    the whole-piece fields between the template's special tokens, no Encoding in between.
    None when the line is not such a piece or the whole-piece path cannot take it (then the
    chunk or general path does it).

    >>> from tokviz import models, pre_tokenizers, processors
    >>> from tokviz.added_vocabulary import AddedVocabulary
    >>> plan = build_plan(None, pre_tokenizers.Whitespace(), models.WordLevel({"[UNK]": 0, "hi": 1}, unk_token="[UNK]"))
    >>> template = processors.TemplateProcessing(single="<s> $A", special_tokens=[("<s>", 2)])
    >>> encoding = encode_processed(AddedVocabulary(), plan, "hi yo", template.single_parts())
    >>> encoding.ids, encoding.tokens, encoding.offsets, encoding.word_ids
    ([2, 1, 0], ['<s>', 'hi', '[UNK]'], [(0, 0), (0, 2), (3, 5)], [None, 0, 1])
    """
    raw_search, normalized_search = added.searches()
    if not sequence:
        fields: tuple[Any, ...] | None = _NO_FIELDS  # only the template's special tokens
    elif raw_search is not None and raw_search(sequence) is not None:
        return None  # (normalized-matched ones are looked for by _line_fields, after the stages)
    elif plan.graphemes and _PREPEND_CLASS.search(sequence) is not None:
        return None
    elif not gc.isenabled():
        fields = _processed_fields(plan, sequence, normalized_search)
    else:
        gc.disable()
        try:
            fields = _processed_fields(plan, sequence, normalized_search)
        finally:
            gc.enable()
    if fields is None:
        return None
    ids, tokens, offsets, words, _ = fields
    n = len(ids)
    _, before, after, _ = split
    masks = template_masks(split, n)
    if type(offsets) is FlatOffsets and not any(map(any, before[3])) and not any(map(any, after[3])):
        # (the template's special tokens all at (0, 0))
        starts, ends, _, _ = offsets
        return flat_offsets_encoding(
            before[0] + ids + after[0],
            masks[0],
            before[1] + tokens + after[1],
            before[2] + words + after[2],
            # (tuples: an encoding that lives on keeps no list for the collector to walk)
            (tuple(starts), ends if ends is None else tuple(ends), len(before[0]), len(after[0])),
            masks[2],
            masks[3],
            masks[4],
        )
    if type(offsets) is FlatOffsets:
        offsets = offsets.pairs()
    return new_encoding(
        before[0] + ids + after[0],
        masks[0],
        before[1] + tokens + after[1],
        before[2] + words + after[2],
        before[3] + offsets + after[3],
        masks[2],
        masks[3],
        masks[4],
    )


def _encode_chunked(added: Any, plan: ChunkPlan, sequence: str, type_id: int, word_index: int | None) -> Any:
    raw_search, normalized_search = added.searches()
    if normalized_search is not None and plan.stages:
        # Added tokens matched in the normalized text: only the whole-piece path, which has
        # that text at hand, can tell that none occurs (else the general path finds them).
        if not sequence or word_index is not None or (raw_search is not None and raw_search(sequence) is not None):
            return None
        if plan.graphemes and _PREPEND_CLASS.search(sequence) is not None:
            return None
        fields = _line_fields(plan, sequence, True, normalized_search)
        if fields is None:
            return None
        ids, tokens, offsets, words, _ = fields
        n = len(ids)
        return new_encoding(ids, (type_id,) * n, tokens, words, offsets, (0,) * n, (1,) * n, {})
    if not sequence:
        pieces: list[tuple[int | None, int, int]] = []
    elif (raw_search is None or raw_search(sequence) is None) and (
        normalized_search is None or normalized_search(sequence) is None
    ):
        pieces = [(None, 0, len(sequence))]
    else:
        pieces = added_pieces(added, sequence)
    if plan.graphemes and _PREPEND_CLASS.search(sequence) is not None:
        return None  # a Prepend-class char joins the next char (maybe a space) in one grapheme
    if len(pieces) == 1 and pieces[0][0] is None and word_index is None:
        fields = _line_fields(plan, sequence, True, flat=True)
        if fields is None:
            return _encode_whole(plan, sequence, type_id)
        ids, tokens, offsets, words, _ = fields
        n = len(ids)
        if type(offsets) is FlatOffsets:
            starts, ends, _, _ = offsets
            flat = (tuple(starts), ends if ends is None else tuple(ends), 0, 0)
            return flat_offsets_encoding(ids, (type_id,) * n, tokens, words, flat, (0,) * n, (1,) * n, {})
        return new_encoding(ids, (type_id,) * n, tokens, words, offsets, (0,) * n, (1,) * n, {})
    ids: list[int] = []
    tokens: list[str] = []
    starts: list[int] = []
    ends: list[int] = []
    words: list[int] = []
    split_index = 0
    for token_id, start, end in pieces:
        if token_id is not None:
            ids.append(token_id)
            tokens.append(sequence[start:end])
            starts.append(start)
            ends.append(end)
            words.append(split_index)
            split_index += 1
            continue
        text = sequence[start:end] if (start or end != len(sequence)) else sequence
        fields = _line_fields(plan, text, start == 0)
        if fields is not None:
            piece_ids, piece_tokens, piece_offsets, piece_words, n_words = fields
            if not piece_ids:
                split_index += min(n_words, 1) if plan.one_word else n_words
                continue
            ids.extend(piece_ids)
            tokens.extend(piece_tokens)
            starts.extend([offset[0] + start for offset in piece_offsets])
            ends.extend([offset[1] + start for offset in piece_offsets])
            if plan.one_word:
                words.extend(repeat(split_index, len(piece_ids)))
                split_index += 1
            else:
                words.extend([word + split_index for word in piece_words])
                split_index += n_words
            continue
        chunks = plan.chunk_findall(text)
        entries = _entries(plan, chunks, start == 0)
        if entries is None:
            return None
        first = len(ids)
        ids.extend(chain.from_iterable(map(_IDS, entries)))
        if len(ids) == first:
            n_words = sum(map(_N_WORDS, entries))
            split_index += min(n_words, 1) if plan.one_word else n_words
            continue
        tokens.extend(chain.from_iterable(map(_TOKENS, entries)))
        counts = list(map(len, map(_IDS, entries)))
        # Each token's chunk start and word base, repeated once per token of the chunk (in C).
        bases = list(chain.from_iterable(map(repeat, accumulate(map(len, chunks), initial=start), counts)))
        starts.extend(map(add, chain.from_iterable(map(_STARTS, entries)), bases))
        ends.extend(map(add, chain.from_iterable(map(_ENDS, entries)), bases))
        if plan.one_word:
            words.extend(repeat(split_index, len(ids) - first))
            split_index += 1
            continue
        word_bases = list(accumulate(map(_N_WORDS, entries), initial=split_index))
        split_index = word_bases.pop()
        words.extend(map(add, chain.from_iterable(map(_WORDS, entries)), chain.from_iterable(map(repeat, word_bases, counts))))
    n = len(ids)
    if word_index is not None:
        words = [word_index] * n
    # (flat offsets: pairs made on first read, see flat_offsets_encoding)
    return flat_offsets_encoding(
        tuple(ids), (type_id,) * n, tuple(tokens), tuple(words), (tuple(starts), tuple(ends), 0, 0), (0,) * n, (1,) * n, {}
    )


__all__ = ["ChunkPlan", "build_plan", "chunk_entry", "encode_chunked", "encode_processed", "split_chunks"]
