"""The engine's whole-piece lane: each piece of text (between added tokens) normalized on plain
strings, split by what the pre-tokenizer declares, each word's tokens from the word cache.

A piece is normalized with plain ``str`` operations while every stage keeps it aligned char
for char (see :func:`_staged_chars`) or collapses whitespace runs; segments a stage does not
keep aligned get alignments from a NormalizedString of that segment alone (see
:func:`_aligned_fields`). Each distinct word is encoded once by the model's word encoder
(:mod:`tokviz.engine.bpe`, ``unigram``, ``wordpiece``). A plan is made per pipeline (see
:mod:`tokviz.engine.plans`); what it cannot take (Strip, truncation, dropout) takes the
general path (:meth:`Tokenizer._pipeline`), which the tests compare it with, and HF.

>>> from tokviz import Tokenizer, models, normalizers, pre_tokenizers
>>> tok = Tokenizer(models.WordLevel({"[UNK]": 0, "hello": 1, "world": 2}, unk_token="[UNK]"))
>>> tok.normalizer = normalizers.Lowercase()
>>> tok.pre_tokenizer = pre_tokenizers.Whitespace()
>>> tok.encode("Hello  World!").ids
[1, 2, 0]
"""

from __future__ import annotations

import gc
import re
import unicodedata
from itertools import accumulate, chain, compress, count, islice, repeat
from operator import add, eq, is_, itemgetter, lt, not_, sub
from typing import Any

import regex

from tokviz.encoding import FlatOffsets, flat_offsets_encoding, new_encoding
from tokviz.normalized import NormalizedString
from tokviz.byte_level import text_to_symbols
from tokviz.engine.bpe import ONE_TUPLE_LIMIT, ONE_TUPLES, bpe_word_encoder, byte_symbol_tokens, joined_tokens, model_splits_at
from tokviz.engine.bpe import pieces_pattern, plain_bpe_vocab, symbol_offsets_to_chars, word_pieces
from tokviz.models.bpe.model import BpeTables
from tokviz.models.unigram.model import UnigramTables
from tokviz.models.wordpiece.model import WordPieceTables
from tokviz.models.wordlevel.model import WordLevelTables
from tokviz.engine.unigram import _UNIGRAM_MAX_WORD, unigram_word_encoder
from tokviz.engine.wordpiece import wordlevel_word_encoder, wordpiece_word_encoder
from tokviz.normalizers import SPACE_ONLY_PATTERNS, WHITESPACE_PATTERNS
from tokviz.patterns import Regex
from tokviz.processors import TRIM_CHARS, template_masks, trim_token_offsets

_PREPEND_CLASS = regex.compile(r"\p{Grapheme_Cluster_Break=Prepend}")

_MAX_CACHED_WORDS = 200_000

# Fields of a word entry (see _word_entry).
_IDS, _TOKENS, _STARTS, _ENDS = map(itemgetter, range(4))


def word_encoder(model: Any) -> Any:
    """The engine's word encoder for the kind of tables the model declares (``word_tables()``:
    BPE, WordPiece, WordLevel or Unigram), or None (the engine then calls ``model.tokenize``)."""
    return bpe_word_encoder(model) or wordpiece_word_encoder(model) or unigram_word_encoder(model) or wordlevel_word_encoder(model)


def added_pieces(added: Any, sequence: str) -> list[tuple[int | None, int, int]]:
    """Raw then normalized added-token matching on a text no normalizer changes: ``(token id or
    None, start, end)`` per non-empty piece."""
    pieces: list[tuple[int | None, int, int]] = []
    raw, normalized = added.has_matchers()
    first_pass = added.find_matches(sequence, False) if raw else [(None, (0, len(sequence)))]
    for token_id, (start, end) in first_pass:
        if start == end:
            continue
        if token_id is not None or not normalized:
            pieces.append((token_id, start, end))
            continue
        for inner_id, (inner_start, inner_end) in added.find_matches(sequence[start:end], True):
            if inner_start != inner_end:
                pieces.append((inner_id, start + inner_start, start + inner_end))
    return pieces


# ---------------------------------------------------------------------- the plan
class CutPlan:
    """What the engine asked one pipeline's components once, and its word cache: how the
    normalizer's ``stages`` run on plain strings, how the pre-tokenizer splits (``splitter``,
    see :func:`_splitter`), the model's word encoder and tables."""

    __slots__ = (
        "stages", "pre_tokenizer", "model", "graphemes", "by_segments", "splitter", "one_word", "words",
        "steps", "words_of", "unigram", "bpe", "wordpiece", "run_findall", "wordlevel", "char_groups",
        "odd_values", "shifts", "space_finditer", "openers", "aligned", "aligned_chars", "runs", "cut", "pieces",
        "byte_words", "prefix_space", "sub_words",
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
        #: ``word -> pieces`` the BPE model never merges across (made at the first long word; see
        #: _long_words_cut), False when the model offers none.
        self.pieces: Any = None
        #: A WordLevel model's ``(vocab, unk_id, unk_token)``: its words need no cache.
        self.wordlevel: tuple[dict[str, int], int | None, str] | None = None
        #: A pre-tokenizer with a ByteLevel step: ``text -> its words`` (see _byte_level_split),
        #: and whether ByteLevel prefixes a space to each piece.
        self.byte_words: Any = None
        self.prefix_space = False
        #: Some byte-level word was cut inside a char (see _sub_words_entry).
        self.sub_words = False
        if isinstance(tables, WordLevelTables):
            self.wordlevel = (tables.vocab, tables.vocab.get(model.unk_token), model.unk_token)

    def clear_caches(self) -> None:
        """Empty the word and segment caches (in place: encoders hold them), keeping the
        tables derived from the components."""
        self.words.clear()
        self.aligned.clear()
        self.aligned_chars = 0


def _segment_local(stage: Any) -> bool:
    """Whether a stage gives a text cut by :func:`_segments` the same output and alignments piece
    by piece as whole (local to lines, or a Replace whose matches never reach over a cut)."""
    if stage.prepends:
        return False
    if stage.local_to_lines:
        return True
    if not stage.replaces:
        return False
    pattern = stage.pattern
    if isinstance(pattern, str):
        return not any(map(str.isspace, pattern))
    return pattern.pattern in SPACE_ONLY_PATTERNS or pattern.pattern in WHITESPACE_PATTERNS


def split_kind(step: Any) -> str | None:
    """How the engine splits plain strings for one pre-tokenizer step, by its ``plain_split()``:
    "words", "metaspace", "byte_level", "regex", "digits"; None: it cannot (a custom one).

    >>> from tokviz import pre_tokenizers
    >>> split_kind(pre_tokenizers.BertPreTokenizer()), split_kind(pre_tokenizers.Punctuation())
    ('words', None)
    """
    plain = _declared(step)
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
    return "words" if plain.words is not None else None


def _declared(step: Any) -> Any:
    """What a pre-tokenizer step declares for plain strings (its ``plain_split()``), or None."""
    declare = getattr(step, "plain_split", None)
    return declare() if declare is not None else None


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


def _shifts(stages: tuple[Any, ...]) -> tuple[str, tuple[tuple[str, str], ...]] | None:
    """Stages that only prepend and replace one char by one, as ``(prepended, ((a, b), ...))``
    (each Replace also acts on what was prepended before it), or None.

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
    return plan


def _cut_by_words(steps: tuple[Any, ...]) -> Any:
    """For a Sequence of a words step then steps that only cut: ``text -> (words, starts)``
    cutting each distinct word once (cached), or None for other pre-tokenizers.

    >>> from tokviz import pre_tokenizers
    >>> cut = _cut_by_words(pre_tokenizers.Sequence([pre_tokenizers.WhitespaceSplit(), pre_tokenizers.Digits(True)]).steps())
    >>> cut("ab12 c3")
    (['ab', '1', '2', 'c', '3'], [0, 2, 3, 5, 6])
    """
    if len(steps) < 2 or split_kind(steps[0]) != "words":
        return None
    later = [getattr(step, "cut_spans", None) for step in steps[1:]]
    if any(cut is None or cut("a b") is None for cut in later):
        return None
    words_of = steps[0].plain_split().words
    cuts: dict[str, tuple[tuple[str, ...], tuple[int, ...]] | None] = {}

    def cut(text: str) -> tuple[list[str], list[int]] | None:
        matches = words_of(text)
        if matches is None:
            return None
        words: list[str] = []
        starts: list[int] = []
        for match in matches:
            word = match.group()
            pieces = cuts.get(word, cuts)
            if pieces is cuts:
                spans = [(0, len(word))]
                for step_cut in later:
                    spans = [(start + a, start + b) for start, end in spans for a, b in step_cut(word[start:end])]
                # (None: the word stays whole, the usual)
                pieces = None if spans == [(0, len(word))] else (tuple([word[a:b] for a, b in spans]), tuple([a for a, _ in spans]))
                if len(cuts) < _MAX_CACHED_WORDS:
                    cuts[word] = pieces
            if pieces is None:
                words.append(word)
                starts.append(match.start())
            else:
                words += pieces[0]
                starts += map(add, pieces[1], repeat(match.start()))
        return words, starts

    return cut


def _words_of_spans(cut: Any) -> Any:
    """A pre-tokenizer's ``cut_spans`` as ``text -> (words, starts)`` (or None)."""

    def words(text: str) -> tuple[list[str], list[int]] | None:
        spans = cut(text)
        return None if spans is None else ([text[start:end] for start, end in spans], [start for start, _ in spans])

    return words


def _whole_piece(text: str) -> tuple[list[str], list[int]]:
    """A piece as one word (no pre-tokenizer): ``"a b" -> (['a b'], [0])``."""
    return ([text], [0]) if text else ([], [])


def _splitter(pre_tokenizer: Any, steps: tuple[Any, ...]) -> str | None:
    """The pre-tokenizers :func:`_fast_entry` does on plain strings, by what their steps
    declare (:func:`split_kind`)."""
    if pre_tokenizer is None:
        return "none"
    rules = tuple(map(split_kind, steps))
    if len(steps) == 1 and rules[0] in ("words", "metaspace"):
        return rules[0]
    if rules == ("words", "metaspace") and steps[0].plain_split().runs and len(steps[1].replacement) == 1:
        return "ws_metaspace"  # T5's and ALBERT's: every whitespace-free word gets its '▁'
    return None


# ---------------------------------------------------------------------- byte-level words
def _byte_level_split(steps: tuple[Any, ...]) -> tuple[bool, Any] | None:
    """For a pre-tokenizer with one ByteLevel step: ``(add_prefix_space, words)``, ``words``
    being ``text -> its words as strings`` (or a tuple ``(words, starts)`` when the first step
    drops text between them, ``kept_words``; None for a text only the general path splits).
    Each step's words are what it declares (``PlainSplit.word_list``) or its ``cut_spans`` where
    they tile the text; a later step splits each word of the one before (once per distinct
    word), a step after ByteLevel the word's byte symbols, as HF's Sequence does. None for
    other pre-tokenizers, or a ByteLevel prefixing a space to the words of a step before it.

    >>> from tokviz import pre_tokenizers
    >>> falcon = [pre_tokenizers.Punctuation("contiguous"), pre_tokenizers.ByteLevel(False), pre_tokenizers.Digits()]
    >>> words = _byte_level_split(tuple(falcon))[1]
    >>> words("Hi!! it's 12a"), words("½")[0].pieces  # (Digits cuts '½''s two byte symbols apart, as HF does)
    (['Hi', '!!', ' it', "'", 's', ' ', '12', 'a'], ('Â', '½'))
    """
    kinds = list(map(split_kind, steps))
    if kinds.count("byte_level") != 1:
        return None
    at = kinds.index("byte_level")
    prefix_space = bool(steps[at].add_prefix_space)
    if prefix_space and at:
        return None
    splits: list[tuple[Any, bool]] = []
    for index, step in enumerate(steps):
        plain = _declared(step)
        words = None if plain is None else plain.word_list or (plain.kept_words if index == 0 < at else None)
        if words is None and index != at:
            words = _tiling_words(getattr(step, "cut_spans", None))
            if words is None:
                return None
        if words is not None:
            splits.append((words, index > at))
    return prefix_space, _composed(splits)


def _composed(splits: list[tuple[Any, bool]]) -> Any:
    """Word functions ``(words, on_symbols)`` applied in turn, each later one per distinct word
    (see :func:`_per_word`), as one ``text -> words`` (or None; ``(words, starts)`` from a first
    one that gives them, None where a later one cuts a word then)."""
    if not splits:
        return _one_word
    if len(splits) == 1 and not splits[0][1]:
        return splits[0][0]
    first, rest = splits[0][0], [_per_word(words, after) for words, after in splits[1:]]
    if splits[0][1]:
        rest.insert(0, _per_word(first, True))
        first = _one_word

    def words(text: str) -> Any:
        found, starts = first(text), None
        if type(found) is tuple:
            found, starts = found
        for split in rest:
            cut = None if found is None else split(found)
            found = None if cut is None or (starts is not None and len(cut) != len(found)) else cut
        return found if starts is None or found is None else (found, starts)

    return words


def _one_word(text: str) -> list[str]:
    return [text] if text else []


def _tiling_words(cut: Any) -> Any:
    """A step's ``cut_spans`` as ``text -> words`` where its spans tile the text, else None."""
    if cut is None or cut("a b") is None:
        return None

    def words(text: str) -> list[str] | None:
        spans = cut(text)
        if spans is None or sum([end - start for start, end in spans]) != len(text):
            return None
        return [text[start:end] for start, end in spans]

    return words


def _per_word(split: Any, on_symbols: bool) -> Any:
    """``words -> finer words``: ``split`` on each distinct word once (cached); ``on_symbols``:
    on its byte-level symbols (a step after ByteLevel), the cuts mapped back to its chars (None
    where one falls inside a char's bytes: HF's offsets there are the general path's)."""
    # Word -> its pieces (a tuple, ``(word,)`` when it stays whole), or () when split cannot say.
    cache: dict[str, tuple[str, ...]] = {}
    cache_get = cache.get

    def finer(words: list[str]) -> list[str] | None:
        found = list(map(cache_get, words))
        if None in found:
            for position in _missing(found):
                word = words[position]
                pieces = split(word) if not on_symbols else _split_symbols(split, word)
                found[position] = () if pieces is None else tuple(pieces)
                if len(cache) < _MAX_CACHED_WORDS:
                    cache[word] = found[position]
        if () in found:
            return None
        return list(chain.from_iterable(found))  # (in C; the words themselves when each stays whole)

    return finer


class _SymbolPieces(str):
    """A word whose byte symbols a step after ByteLevel cut inside a char (Falcon's Digits cuts
    'ü''s symbols 'Ã¼' in two, as HF does): the word, and its symbol ``pieces`` (each a word of
    its own, see :func:`_sub_words_entry`)."""

    pieces: tuple[str, ...]


def _split_symbols(split: Any, word: str) -> list[str] | None:
    """``split`` on a word's byte-level symbols, as pieces of the word, or the word as
    :class:`_SymbolPieces` where a cut falls inside a char (None: ``split`` cannot say)."""
    pieces: list[str] = []
    for symbols in word.pieces if type(word) is _SymbolPieces else (text_to_symbols(word),):
        found = split(symbols)
        if found is None:
            return None
        pieces += found
    if len(pieces) < 2:
        return [word]
    if sum(map(len, pieces)) == len(word):
        bounds = list(accumulate(map(len, pieces), initial=0))
    else:
        char_at = {size: index for index, size in enumerate(accumulate(map(len, map(str.encode, word)), initial=0))}
        bounds = [char_at.get(size) for size in accumulate(map(len, pieces), initial=0)]
        if None in bounds:
            whole = _SymbolPieces(word)
            whole.pieces = tuple(pieces)
            return [whole]
    return [word[start:end] for start, end in zip(bounds, islice(bounds, 1, None))]


# The last six fields of a byte-level word's entry when it is one ASCII token covering it
# (size < 256): with one leading 'Ġ' trimmed (a word after a space), or with nothing to trim.
_SPACE_TAILS = tuple(
    (ONE_TUPLES[1], ONE_TUPLES[size], ONE_TUPLES[size], ONE_TUPLES[1], ONE_TUPLES[size], True) for size in range(ONE_TUPLE_LIMIT)
)
_PLAIN_TAILS = tuple(
    (ONE_TUPLES[0], ONE_TUPLES[size], ONE_TUPLES[size], ONE_TUPLES[0], ONE_TUPLES[size], True) for size in range(ONE_TUPLE_LIMIT)
)
_FIRST_CHAR = itemgetter(0)
_LAST_CHAR = itemgetter(-1)


def _byte_entry(plan: CutPlan, word: str) -> tuple[Any, ...]:
    """A byte-level word's entry: ids, tokens, char offsets in ``word`` (:data:`_IDS` ...
    :data:`_ENDS`, as every word's), then the offsets trimmed (the ByteLevel post-processor's
    rule, not the text's first token), token lengths, trimmed offsets relative to each token's
    start, and whether the tokens tile the word (:data:`_TRIMMED_STARTS` ... :data:`_TILES`).

    >>> from tokviz import models, pre_tokenizers
    >>> plan = build_plan(None, pre_tokenizers.ByteLevel(False), models.BPE({"a": 0, "Ġ": 1, "Ġa": 2}, [("Ġ", "a")]))
    >>> _byte_entry(plan, " a")
    ((2,), ('Ġa',), (0,), (2,), (1,), (2,), (2,), (1,), (2,), True)
    """
    if type(word) is _SymbolPieces:
        return _sub_words_entry(plan, word)
    symbols, entry = byte_symbol_tokens(word, plan.model.tokenize, plan.bpe)
    ids, values, starts, ends = entry
    size = len(word)
    same_length = len(symbols) == size
    if len(ids) == 1 and same_length and ends[0] == size < ONE_TUPLE_LIMIT and not starts[0]:
        # The usual word: one token covering it, trimmed by one leading space or not at all.
        value = values[0]
        if value[0] == "Ġ":
            if size > 1 and value[1] not in TRIM_CHARS and value[-1] not in TRIM_CHARS:
                return entry + _SPACE_TAILS[size]
        elif value[0] not in TRIM_CHARS and value[-1] not in TRIM_CHARS:
            return entry + _PLAIN_TAILS[size]
    trim_chars = TRIM_CHARS
    if same_length and ids and all(values) and starts[0] == 0 and ends[-1] == size and starts[1:] == ends[:-1]:
        # Tokens tiling a word of one-byte chars: when no token but the first starts with a
        # space symbol and none ends with one, the trimmed offsets are the offsets, the first
        # start moved past its leading 'Ġ' (in C).
        first = values[0]
        if (
            trim_chars.isdisjoint(map(_LAST_CHAR, values))
            and trim_chars.isdisjoint(map(_FIRST_CHAR, islice(values, 1, None)))
            and (first[0] not in trim_chars or (first[0] == "Ġ" and len(first) > 1 and first[1] not in trim_chars))
        ):
            lengths = tuple(map(sub, ends, starts))
            if first[0] == "Ġ":
                return ids, values, starts, ends, (1, *starts[1:]), ends, lengths, (1, *repeat(0, len(ids) - 1)), lengths, True
            return ids, values, starts, ends, starts, ends, lengths, (0,) * len(ids), lengths, True
    if not same_length:
        starts, ends = symbol_offsets_to_chars(word, starts, ends)  # a char's bytes align to the char
    return _trimmed_entry(ids, values, starts, ends, size)


def _sub_words_entry(plan: CutPlan, word: _SymbolPieces) -> tuple[Any, ...]:
    """:func:`_byte_entry` of a word cut inside a char: each symbol piece's tokens, offsets of
    the chars their symbols belong to (both pieces of a cut char align to it, as HF's), and an
    eleventh field: per token, which piece (word) of the word it is in."""
    char_of_symbol = [index for index, char in enumerate(word) for _ in range(len(char.encode()))]
    ids: list[int] = []
    values: list[str] = []
    starts: list[int] = []
    ends: list[int] = []
    pieces: list[int] = []
    position = 0
    for index, symbols in enumerate(word.pieces):
        entry = plan.bpe(symbols) if plan.bpe is not None else None
        entry = entry or _model_word_entry(plan.model, symbols)
        ids += entry[0]
        values += entry[1]
        starts += [char_of_symbol[position + start] for start in entry[2]]
        ends += [char_of_symbol[position + max(end - 1, start)] + (end > start) for start, end in zip(entry[2], entry[3])]
        pieces += repeat(index, len(entry[0]))
        position += len(symbols)
    plan.sub_words = True
    return (*_trimmed_entry(tuple(ids), tuple(values), tuple(starts), tuple(ends), len(word)), tuple(pieces))


def _trimmed_entry(ids: tuple[int, ...], values: tuple[str, ...], starts: Any, ends: Any, size: int) -> tuple[Any, ...]:
    """A byte-level entry's fields from its tokens' char offsets (see :func:`_byte_entry`)."""
    trim_chars = TRIM_CHARS
    trimmed_starts = list(starts)
    trimmed_ends = list(ends)
    for index, value in enumerate(values):
        if value and (value[0] in trim_chars or value[-1] in trim_chars):
            start, end = starts[index], ends[index]
            if value[0] == "Ġ" and len(value) > 1 and value[1] not in trim_chars and value[-1] not in trim_chars:
                trimmed_starts[index] = min(start + 1, end)  # one leading space (trim_token_offsets)
            else:
                trimmed_starts[index], trimmed_ends[index] = trim_token_offsets(value, start, end, False, False)
    tiles = bool(ids) and starts[0] == 0 and starts[1:] == ends[:-1] and ends[-1] == size and all(map(lt, starts, ends))
    return (
        ids, values, starts, ends, tuple(trimmed_starts), tuple(trimmed_ends), tuple(map(sub, ends, starts)),
        tuple(map(sub, trimmed_starts, starts)), tuple(map(sub, trimmed_ends, starts)), tiles,
    )


# The byte-level fields of a word's entry after the four every entry has (see _byte_entry).
_TRIMMED_STARTS, _TRIMMED_ENDS, _LENGTHS, _TRIM_START, _TRIM_END, _TILES = map(itemgetter, range(4, 10))


def _byte_level_fields(plan: CutPlan, text: str, at_start: bool, flat: bool, trim: tuple[bool] | tuple[()]) -> tuple[Any, ...] | None:
    """:func:`_normalized_fields` of a byte-level pipeline (``plan.byte_words``), its offsets
    trimmed as the post-processor declares (``trim=(add_prefix_space,)``; ``()``: untrimmed).
    Assembled from the words' entries in C (map/chain/accumulate), no Python loop per token.

    >>> from tokviz import models, pre_tokenizers
    >>> plan = build_plan(None, pre_tokenizers.ByteLevel(False), models.BPE({"a": 0, "Ġ": 1, "Ġa": 2}, [("Ġ", "a")]))
    >>> _byte_level_fields(plan, "a a", True, False, ()), _byte_level_fields(plan, "a a", True, False, (False,))[2]
    (((0, 2), ('a', 'Ġa'), ((0, 1), (1, 3)), (0, 1), 2), ((0, 1), (2, 3)))
    """
    prefixed = plan.prefix_space and not text.startswith(" ")
    if prefixed:
        text = " " + text
    words = plan.byte_words(text)
    word_starts = None  # (given when the words do not tile the text, see _byte_level_split)
    if type(words) is tuple:
        words, word_starts = words
    if not words:
        return None if words is None else _NO_FIELDS
    cache = plan.words
    cache_get = cache.get
    entries = list(map(cache_get, words))
    if None in entries:
        for position in _missing(entries):
            # Looked up again: a word repeated in this text is tokenized once.
            word = words[position]
            entry = entries[position] = cache_get(word) or _byte_entry(plan, word)
            if len(cache) < _MAX_CACHED_WORDS:
                cache[word] = entry
    # Char j of ``text`` is char j of the piece, or j - 1 after the prefix space (which shares
    # the first char's alignment, as HF's prepend does).
    origin = -1 if prefixed else 0
    ids = tuple(chain.from_iterable(map(_IDS, entries)))
    tokens = tuple(chain.from_iterable(map(_TOKENS, entries)))
    n_words = len(entries)
    counts = None if len(ids) == n_words else list(map(len, map(_IDS, entries)))
    ends: list[int] | None
    if word_starts is None and all(map(_TILES, entries)):
        # The tokens tile the text, each starting where the one before ended.
        bounds = list(accumulate(chain.from_iterable(map(_LENGTHS, entries)), initial=origin))
        if trim:
            starts = list(map(add, bounds, chain.from_iterable(map(_TRIM_START, entries))))
            ends = list(map(add, bounds, chain.from_iterable(map(_TRIM_END, entries))))
        elif not prefixed and flat:
            starts, ends = bounds, None
        else:
            starts, ends = bounds[:-1], bounds[1:]
    else:
        # A char split across tokens (its tokens overlap) or text between words: shift each
        # word's offsets by where it starts.
        bases = list(accumulate(map(len, words), initial=origin)) if word_starts is None else word_starts
        if counts is not None:
            bases = list(chain.from_iterable(map(repeat, bases, counts)))
        starts = list(map(add, chain.from_iterable(map(_TRIMMED_STARTS if trim else _STARTS, entries)), bases))
        ends = list(map(add, chain.from_iterable(map(_TRIMMED_ENDS if trim else _ENDS, entries)), bases))
    word_ids = tuple(range(n_words)) if counts is None else tuple(chain.from_iterable(map(repeat, count(), counts)))
    if plan.sub_words and max(map(len, entries)) > 10:
        # A word cut inside a char is several words (see _sub_words_entry).
        ids_of_words: list[int] = []
        n_words = 0
        for entry in entries:
            if len(entry) > 10:
                ids_of_words += map(add, entry[10], repeat(n_words))
                n_words += entry[10][-1] + 1 if entry[10] else 1
            else:
                ids_of_words += repeat(n_words, len(entry[0]))
                n_words += 1
        word_ids = tuple(ids_of_words)
    if prefixed or (trim and at_start and trim[0]):
        # The first word: its offsets by the general rules (the prefix space; a token at the
        # text's start keeps one leading space when the processor adds one, trim[0]).
        if ends is None:
            starts, ends = starts[:-1], starts[1:]
        head = entries[0]
        shift = word_starts[0] if word_starts else 0
        for index, (start, end, value) in enumerate(zip(head[2], head[3], head[1])):
            start, end = start + shift, end + shift
            if prefixed:
                start, end = max(start - 1, 0), max(end - 1, 1)
            elif index and start:
                break  # (past the text's start: the entry's trimmed offsets are the rule's)
            if trim and (value[:1] in TRIM_CHARS or value[-1:] in TRIM_CHARS):  # (others keep theirs)
                start, end = trim_token_offsets(value, start, end, at_start and (index == 0 or start == 0), trim[0])
            starts[index] = start
            ends[index] = end
    if flat:
        return ids, tokens, FlatOffsets((starts, ends, 0, 0)), word_ids, n_words
    if ends is None:
        return ids, tokens, tuple(zip(starts, islice(starts, 1, None))), word_ids, n_words
    return ids, tokens, tuple(zip(starts, ends)), word_ids, n_words


# ---------------------------------------------------------------------- words
def _loses_a_removal(stage: Any, text: str) -> bool:
    """Whether HF's Precompiled loses a removal on ``text``: its first grapheme cluster goes.

    >>> from tokviz.normalizers import Precompiled
    >>> from tokviz.sentencepiece.normalizer import charsmap_for_rule
    >>> nmt_nfkc = Precompiled(charsmap_for_rule("nmt_nfkc"))
    >>> _loses_a_removal(nmt_nfkc, "\\x1cﬁ"), _loses_a_removal(nmt_nfkc, " \\x1cﬁ")
    (True, False)
    """
    from tokviz.normalizers import GRAPHEME

    first = GRAPHEME.match(text)
    return first is not None and stage.normalize_str(first.group()) == ""


def _metaspace_words(plan: CutPlan, text: str, opens_text: bool = False) -> tuple[list[str], list[int], list[int] | None]:
    """WhitespaceSplit then Metaspace (T5's and ALBERT's) on a normalized piece: ``(words,
    starts, floors)``; ``floors``: per word, its run's first char, which a prepended mark's
    offsets map to (as HF's), or None when no mark was prepended. ``opens_text``: the piece
    starts the text (for ``prepend_scheme="first"``).

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


def _word_entry(plan: CutPlan, word: str) -> tuple[tuple[Any, ...], ...]:
    """One word's tokens as ``(ids, values, starts, ends)`` (char offsets in the word), cached in the plan.

    >>> from tokviz import models, pre_tokenizers
    >>> plan = build_plan(None, pre_tokenizers.Whitespace(), models.WordPiece({"[UNK]": 0, "hug": 1, "##s": 2}))
    >>> _word_entry(plan, "hugs"), plan.words["hugs"]
    (((1, 2), ('hug', '##s'), (0, 3), (3, 4)), ((1, 2), ('hug', '##s'), (0, 3), (3, 4)))
    """
    if plan.bpe is not None:
        entry = plan.bpe(word) or _model_word_entry(plan.model, word)
    elif plan.wordpiece is not None:
        entry = plan.wordpiece(word) or _model_word_entry(plan.model, word)
    elif plan.unigram is not None and len(word) <= _UNIGRAM_MAX_WORD:
        entry = plan.unigram(word) or _model_word_entry(plan.model, word)
    else:
        entry = _model_word_entry(plan.model, word)
    if len(plan.words) < _MAX_CACHED_WORDS:
        plan.words[word] = entry
    return entry


#: BPE words longer than this are merged piece by piece where the model allows it (a Llama line).
PIECES_FROM = 32


def _long_words_cut(plan: CutPlan, words: list[str], starts: list[int] | None) -> tuple[list[str], list[int] | None, list[int]] | None:
    """The words of a piece holding one longer than :data:`PIECES_FROM`, cut into the pieces
    the BPE model never merges across (:func:`~tokviz.engine.bpe.word_pieces`), as ``(pieces,
    their starts (None for None), per piece the index of its word)``, in C; None when no word is
    cut. Each piece is then a word of the cache (merged once, wherever it comes).

    >>> from tokviz import models, pre_tokenizers
    >>> plan = build_plan(None, pre_tokenizers.Digits(), models.BPE({"a": 0, "▁": 1, "▁a": 2}, [("▁", "a")]))
    >>> _long_words_cut(plan, ["▁a▁", "1", "a▁a"], [0, 3, 5])
    (['▁a', '▁', '1', 'a', '▁a'], [0, 2, 3, 5, 6], [0, 0, 1, 2, 2])
    """
    pieces_of = plan.pieces
    if pieces_of is None:
        pieces_of = plan.pieces = word_pieces(plan.model) or False
        if not pieces_of:
            return None
    found = list(map(pieces_of, words))
    pieces = list(chain.from_iterable(found))
    if len(pieces) == len(words) or sum(map(len, pieces)) != sum(map(len, words)):
        return None  # (no word cut, or pieces that do not tile their words)
    counts = list(map(len, found))
    word_of = list(chain.from_iterable(map(repeat, count(), counts)))
    if starts is not None:
        # A piece starts where its word does, plus the pieces of that word before it.
        shifts = map(sub, starts, accumulate(map(len, words), initial=0))
        starts = list(map(add, accumulate(map(len, pieces), initial=0), chain.from_iterable(map(repeat, shifts, counts))))
    return pieces, starts, word_of


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
    """A stage (not Prepend) on ``text`` when the result is aligned char for char with it,
    else None (also for an empty result).

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


_SPACE_RUN_FINDITER = re.compile(" {2,}").finditer
_ASCII_SPACE_RUN_FINDITER = re.compile("[\t\n\x0b\x0c\r ]{2,}").finditer


def _collapsed_runs(stage: Any, text: str, origin: list[int] | None, spaces_ascii: bool = False) -> tuple[str, list[int] | None] | None:
    """A Replace of runs of spaces (or ASCII whitespace) by one char: the new text and, per
    char, the position in the piece of the char it stands for (a run's last, as HF's;
    ``origin``: that of ``text``'s chars, None for themselves); None for other stages.
    ``spaces_ascii``: ``text``'s whitespace is known to be ASCII.

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


def _staged(plan: CutPlan, text: str, head: bool = True) -> tuple[str | None, int, list[int] | None]:
    """The stages on a whole piece: ``(text, chars prepended, origin)`` (``origin``: see
    :func:`_collapsed_runs`); text None where a stage does not keep the piece aligned (or
    empties it). ``head``: the text opens a piece (Prepend stages act)."""
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
    ``refused`` chars (whose pieces are aligned segment by segment).

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


def _char_groups(plan: CutPlan) -> list[tuple[str, Any, Any]]:
    """The stages as :func:`_staged_chars` runs them: ``("prepend"|"replace", stage, None)``
    or ``("chars", stages, tables)`` per run of per-char stages (printable ASCII learnt at once)."""
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
    """What a run of per-char stages makes of each of ``chars`` alone, or None where that may
    differ in context: a stage's input that joins or composes with what comes before, one a
    Precompiled stage would join to what comes after, or an emptied char. Checked stage by
    stage in one regex pass over the inputs that changed.

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
    """Whether the stages make ``outputs`` of ``chars`` (passed by :func:`_chars_output`) with
    each output char aligned to the char it is made of, by the general machinery, in one run.

    >>> from tokviz.normalizers import BertNormalizer, NFKD
    >>> _aligned_to_their_chars([BertNormalizer()], "我们", [" 我 ", " 们 "]), _aligned_to_their_chars([NFKD()], "ﬁ", ["fi"])
    (True, True)
    """
    from tokviz.normalized import NormalizedString

    normalized = NormalizedString(chars)
    try:
        for stage in stages:
            stage.normalize(normalized)
    except Exception:  # (the aligned path meets it, and says what is wrong)
        return False
    expected = list(chain.from_iterable(repeat((index, index + 1), len(output)) for index, output in enumerate(outputs)))
    return normalized.normalized == "".join(outputs) and normalized.alignments == expected


#: The printable ASCII chars, whose tables :func:`_char_groups` fills at once.
_PRINTABLE_ASCII = "".join(map(chr, range(0x20, 0x7F)))


def _printable_ascii_through(stages: list[Any]) -> str | None:
    """:func:`_chars_output` of the 95 printable ASCII chars in one run, valid while no stage's
    input may join or compose and every stage keeps the length; None otherwise.

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


def _staged_chars(plan: CutPlan, text: str, head: bool = True) -> tuple[str | None, int, list[int] | None]:
    """:func:`_staged` on a non-ASCII piece: each run of per-char stages is one ``str.translate``
    of each char to what it makes of it alone (several chars each aligned to it: then ``origin``
    is kept); a char for which that does not hold (see :func:`_chars_output`) leaves the piece
    to :func:`_aligned_fields`. Other Replaces must find nothing or collapse whitespace runs.

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
            if not stage.replaces:  # (another stage: only where it changes nothing)
                if stage.normalize_str(text) != text:
                    return None, prefix, None
                continue
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
                return None, prefix, None  # (prepended chars and an origin: see _aligned_fields)
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
    plan: CutPlan, text: str, at_start: bool, normalized_search: Any = None, head: bool = True, flat: bool = False,
    trim: tuple[bool] | tuple[()] = (),
) -> tuple[Any, ...] | None:
    """One whole piece (a line, or the text between added tokens) on plain strings: ``(ids,
    tokens, offsets, word_ids, n_words)``, offsets relative to the piece; None when a stage
    does not keep the piece aligned (see :func:`_staged`; then :func:`_aligned_fields`), or
    when ``normalized_search`` finds a normalized-matched added token after the stages.

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
    if origin is not None and ((at_start and plan.splitter == "ws_metaspace" and plan.steps[1].prepend_scheme == "first") or trim):
        return None  # (whether the first word starts the original text, offsets trimmed in it: the general path)
    fields = _normalized_fields(plan, text, prefix, at_start, flat and origin is None, trim)
    if origin is None or fields is None:
        return fields
    offsets = _through_origin(fields[2], origin)
    if offsets is None:
        return None
    return fields[0], fields[1], offsets, fields[3], fields[4]


#: Lines, each with the whitespace after its line end (so a run of whitespace is never cut).
_LINES = regex.compile(r"[^\n]*\n\s*|[^\n]+").findall
_WHITESPACE_CHAR = regex.compile(r"\s")
#: Segments normalized with their alignments kept per plan, up to this many chars in all.
_MAX_ALIGNED_CHARS = 500_000


def _opens_segment(plan: CutPlan, char: str) -> bool:
    """Whether a text may be cut between a line end and ``char`` (see :func:`_segments`): no
    cluster, whitespace run or literal can reach over the cut. Asked once per char."""
    opens = plan.openers.get(char)
    if opens is None:
        opens = _JOINS_PREVIOUS.match(char) is None and (not plan.runs or _stays(plan.stages, char, False))
        if len(plan.openers) < 100_000:
            plan.openers[char] = opens
    return opens


def _stays(stages: tuple[Any, ...], text: str, whitespace: bool) -> bool:
    """Whether each stage in turn leaves ``text`` non-empty and all whitespace (or none)."""
    try:
        for stage in stages:
            text = stage.normalize_str(text)
            if not text or (whitespace and not text.isspace()) or (not whitespace and _WHITESPACE_CHAR.search(text) is not None):
                return False
    except Exception:  # (a stage that cannot run on it: no cut there)
        return False
    return True


def _segments(plan: CutPlan, text: str) -> list[str]:
    """``text`` cut after each line end (and the whitespace after it) where
    :func:`_opens_segment` allows it.

    >>> from tokviz import models, normalizers, pre_tokenizers
    >>> plan = build_plan(normalizers.NFC(), pre_tokenizers.Whitespace(), models.WordLevel({"[UNK]": 0}, unk_token="[UNK]"))
    >>> _segments(plan, "a\\n\\u0301b\\nc \\n\\nd")
    ['a\\n\\u0301b\\n', 'c \\n\\n', 'd']
    """
    segments: list[str] = []
    for line in _LINES(text):
        if segments and not _opens_segment(plan, line[0]):
            segments[-1] += line
        else:
            segments.append(line)
    return segments


def _aligned_fields(plan: CutPlan, text: str, at_start: bool, added: Any = None) -> tuple[Any, ...] | None:
    """:func:`_line_fields` of a piece its stages do not keep aligned as a whole: each segment
    (:func:`_segments`; the whole piece when a stage is not local to them) is staged on plain
    strings where :func:`_staged` can, else by a NormalizedString of it alone (cached); token
    spans come from the alignments of their first and last chars, as HF's. None for what only
    the general path does (a removal at a segment's start, a token of no char).

    >>> from tokviz import models, normalizers, pre_tokenizers
    >>> plan = build_plan(normalizers.NFC(), pre_tokenizers.Whitespace(), models.WordLevel({"[UNK]": 0, "é": 1}, unk_token="[UNK]"))
    >>> fields = _aligned_fields(plan, "e\\u0301 b\\né", True)
    >>> fields[1], fields[2].pairs()
    (('é', '[UNK]', 'é'), ((0, 1), (3, 4), (5, 6)))
    """
    if at_start and plan.splitter == "ws_metaspace" and plan.steps[1].prepend_scheme == "first":
        return None
    parts: list[str] = []
    starts: list[int] = []  # per normalized char, the original span it stands for
    ends: list[int] = []
    identity = True  # (so far each normalized char stands for the char at its place: no spans kept)
    position = 0
    aligned = plan.aligned
    segments = _segments(plan, text) if plan.by_segments else (text,)
    for segment in segments:
        end = position + len(segment)
        staged, prefix, origin = _staged(plan, segment, not position)
        if staged is not None and not prefix and origin is None and identity:
            parts.append(staged)
            position = end
            continue
        if identity:
            identity = False
            starts.extend(range(position))
            ends.extend(range(1, position + 1))
        if staged is not None and prefix and origin is None:
            # (prepended chars take the first char's alignment)
            parts.append(staged)
            starts.extend(chain(repeat(position, prefix), range(position, end)))
            ends.extend(chain(repeat(position + 1, prefix), range(position + 1, end + 1)))
        elif staged is not None and not prefix:
            parts.append(staged)
            if origin is None:
                starts.extend(range(position, end))
                ends.extend(range(position + 1, end + 1))
            else:
                starts.extend(map(add, origin, repeat(position)))
                ends.extend(map(add, origin, repeat(position + 1)))
        else:
            if plan.graphemes and len(segments) > 1 and any(_loses_a_removal(stage, segment) for stage in plan.stages if stage.on_graphemes):
                # HF's Precompiled loses a removal at the text's start and shifts every later
                # alignment; one at a later segment's start, it counts.
                return None
            known = aligned.get(segment)
            if known is None:
                normalized = NormalizedString(segment)
                for stage in plan.stages:
                    if not normalized.normalized:
                        break  # (as a Sequence: a stage on an emptied text would find no char to align to)
                    stage.normalize(normalized)
                pairs = normalized.alignments
                known = (normalized.normalized, list(map(itemgetter(0), pairs)), list(map(itemgetter(1), pairs)))
                if plan.aligned_chars < _MAX_ALIGNED_CHARS:
                    aligned[segment] = known
                    plan.aligned_chars += len(segment)
            parts.append(known[0])
            starts.extend(map(add, known[1], repeat(position)))
            ends.extend(map(add, known[2], repeat(position)))
        position = end
    normalized_text = "".join(parts)
    if not normalized_text:
        return (), (), (), (), 0  # (an emptied piece has no word, whatever the pre-tokenizer)
    if added is not None and added.searches()[1](normalized_text) is not None:
        matches = added.find_matches(normalized_text, True)  # (normalized-matched added tokens cut out)
    else:
        matches = ((None, (0, len(normalized_text))),)
    ids: list[int] = []
    tokens: list[str] = []
    offset_starts: list[int] = []
    offset_ends: list[int] = []
    words: list[int] = []
    n_words = 0
    for token_id, (start, end) in matches:
        if start == end:
            continue
        if token_id is not None:
            ids.append(token_id)
            tokens.append(normalized_text[start:end])
            offset_starts.append(start if identity else starts[start])
            offset_ends.append(end if identity else ends[end - 1])
            words.append(n_words)
            n_words += 1
            continue
        fields = _normalized_fields(plan, normalized_text[start:end], 0, at_start and not start, True)
        if fields is None:
            return None
        token_starts, token_ends = _flat_lists(fields[2], start)
        if any(map(eq, token_starts, token_ends)):
            return None
        ids += fields[0]
        tokens += fields[1]
        if identity:
            offset_starts += token_starts
            offset_ends += token_ends
        else:
            offset_starts += map(starts.__getitem__, token_starts)
            offset_ends += map(ends.__getitem__, map(sub, token_ends, repeat(1)))
        words.extend(map(add, fields[3], repeat(n_words)))
        n_words += min(fields[4], 1) if plan.one_word else fields[4]
    return tuple(ids), tuple(tokens), FlatOffsets((offset_starts, offset_ends, 0, 0)), tuple(words), n_words


def _missing(entries: list[Any]) -> list[int]:
    """The positions of the words not in the cache (found in C): ``[e, None, e, None] -> [1, 3]``."""
    return list(compress(count(), map(is_, entries, repeat(None))))


def _slice_lengths(entries: list[Any], tokens: tuple[str, ...], odd_values: frozenset[str], words: list[str]) -> list[int] | None:
    """The lengths of the text the tokens cover, as :func:`_normalized_fields`' running sums
    need them, when some tokens are not slices of it (unk: a newline no training text had): the
    spans of the tokens of such words from their entries, which must tile their words; None
    otherwise (a byte-fallback char's tokens overlap).

    >>> _slice_lengths([((1,), ("ab",), (0,), (2,)), ((0, 2), ("<unk>", "c"), (0, 1), (1, 2))], ("ab", "<unk>", "c"), frozenset({"<unk>"}), ["ab", "éc"])
    [2, 1, 1]
    """
    odd = list(compress(count(), map(not_, map(odd_values.isdisjoint, map(_TOKENS, entries)))))
    if len(odd) > max(len(entries) // 8, 8):
        return None  # (a loop per odd word: the general offsets are then as fast)
    lengths = list(map(len, tokens))
    firsts = list(accumulate(map(len, map(_IDS, entries)), initial=0))
    tiling: dict[int, bool] = {}  # id(entry) -> whether its tokens tile its word
    for position in odd:
        entry = entries[position]
        tiles = tiling.get(id(entry))
        if tiles is None:
            _, _, starts, ends = entry[:4]
            tiles = tiling[id(entry)] = (
                starts[0] == 0 and ends[-1] == len(words[position]) and starts[1:] == ends[:-1] and all(map(lt, starts, ends))
            )
        if not tiles:
            return None
        lengths[firsts[position] : firsts[position + 1]] = map(sub, entry[3], entry[2])
    return lengths


def _flat_lists(offsets: Any, shift: int) -> tuple[list[int], list[int]]:
    """Offsets (pairs, or :class:`FlatOffsets` without special tokens) as lists of starts and
    ends, each moved by ``shift``: ``(FlatOffsets(([0, 2, 3], None, 0, 0)), 5) -> ([5, 7], [7, 8])``."""
    if type(offsets) is FlatOffsets:
        starts, ends = offsets[0], offsets[1]
        if ends is None:
            starts, ends = starts[:-1], starts[1:]
        if not shift:
            return list(starts), list(ends)
    else:
        starts, ends = map(itemgetter(0), offsets), map(itemgetter(1), offsets)
    return list(map(add, starts, repeat(shift))), list(map(add, ends, repeat(shift)))


def _piece_fields(
    plan: CutPlan, text: str, at_start: bool, added: Any = None, flat: bool = False, trim: tuple[bool] | tuple[()] = ()
) -> tuple[Any, ...] | None:
    """A piece's fields: whole on plain strings (:func:`_line_fields`), else by segments
    (``added``: the added vocabulary whose normalized-matched tokens are looked for; offsets
    are trimmed, ``trim``, only in the first way)."""
    if not plan.stages and added is None:
        fields = _normalized_fields(plan, text, 0, at_start, flat, trim)  # (no normalizer: the piece as it is)
    else:
        fields = _line_fields(plan, text, at_start, None if added is None else added.searches()[1], flat=flat, trim=trim)
    return fields if fields is not None or trim else _aligned_fields(plan, text, at_start, added)


def _normalized_fields(
    plan: CutPlan, text: str, prefix: int, at_start: bool, flat: bool = False, trim: tuple[bool] | tuple[()] = ()
) -> tuple[Any, ...] | None:
    """:func:`_line_fields` on the normalized piece (``prefix``: how many chars the stages
    prepended), offsets in it less the prepended chars (``flat``: as :class:`FlatOffsets`
    where they come out as runs of ints, else always pairs; ``trim``: see _byte_level_fields)."""
    if plan.byte_words is not None:
        return None if prefix else _byte_level_fields(plan, text, at_start, flat, trim)
    splitter = plan.splitter
    floors = None  # (see _metaspace_words)
    if plan.words_of is not None:
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
        elif splitter == "cut":
            found = plan.cut(text)
            if found is None:
                return None
            words, word_starts = found
            if not words:
                return _NO_FIELDS
            if sum(map(len, words)) == len(text):
                word_starts = None  # (they tile the text: see below)
            elif prefix:
                word_starts = list(map(sub, word_starts, repeat(prefix)))
                if len(words) > 1 and word_starts[1] < 0:
                    return None
        elif splitter not in ("none", "tiles") or plan.run_findall is None:
            return None
        if splitter not in ("ws_metaspace", "cut"):
            # These words tile the text: their starts are the running sum of their lengths
            # (less the prepended chars, which are mapped below).
            words = plan.run_findall(text)
            if not words:
                return None if words is None else _NO_FIELDS
            word_starts = None  # the words tile the text: see below
        n_words = len(words)
    word_of = None  # per word from here, the pre-tokenizer's word it is a piece of (None: itself)
    if plan.bpe is not None and plan.pieces is not False and floors is None and max(map(len, words)) > PIECES_FROM:
        cut = _long_words_cut(plan, words, word_starts)
        if cut is not None:
            words, word_starts, word_of = cut
            if prefix and word_starts is not None and word_starts[1] < 0:
                return None
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
        encoder = plan.bpe or plan.wordpiece
        if encoder is None:
            for position in _missing(entries):
                word = words[position]
                # Looked up again: a word repeated in this piece is encoded once.
                entries[position] = cache_get(word) or _word_entry(plan, word)
        else:
            # _word_entry's BPE and WordPiece cases inline (a cold line has several new words).
            words_cache = plan.words
            for position in _missing(entries):
                word = words[position]
                entry = cache_get(word)
                if entry is None:
                    entry = encoder(word) or _model_word_entry(plan.model, word)
                    if len(words_cache) < _MAX_CACHED_WORDS:
                        words_cache[word] = entry
                entries[position] = entry
    ids = tuple(chain.from_iterable(map(_IDS, entries)))
    n = len(ids)
    tokens = tuple(chain.from_iterable(map(_TOKENS, entries)))
    odd_values = plan.odd_values
    lengths = None
    if word_starts is None and odd_values is not None:
        lengths = map(len, tokens) if odd_values.isdisjoint(tokens) else _slice_lengths(entries, tokens, odd_values, words)
    n_entries = len(entries)
    if lengths is not None:
        # The words tile the text and, but for a few unk tokens, each token is the slice of the
        # text it covers: offsets are running sums of the tokens' lengths.
        if plan.one_word:
            word_ids = (0,) * n
        elif n == n_entries:
            word_ids = tuple(range(n_words) if word_of is None else word_of)
        else:
            word_ids = tuple(chain.from_iterable(map(repeat, range(n_words) if word_of is None else word_of, map(len, map(_IDS, entries)))))
        bounds = list(accumulate(lengths, initial=-prefix))
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
        if prefix and n_entries > 1 and word_starts[1] < 0:
            return None
    if n == n_entries:
        bases = word_starts
        word_ids = (0,) * n if plan.one_word else tuple(range(n_words) if word_of is None else word_of)
    else:
        counts = list(map(len, map(_IDS, entries)))
        bases = list(chain.from_iterable(map(repeat, word_starts, counts)))
        word_ids = (0,) * n if plan.one_word else tuple(chain.from_iterable(map(repeat, range(n_words) if word_of is None else word_of, counts)))
    starts = list(map(add, chain.from_iterable(map(_STARTS, entries)), bases))
    ends = list(map(add, chain.from_iterable(map(_ENDS, entries)), bases))
    if floors is not None:
        # A token on a word's prepended char maps to the run's first char (see _metaspace_words).
        if any(map(eq, starts, ends)):
            return None  # (HF maps an empty range to itself: the general machinery)
        if n != n_entries:
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




# ---------------------------------------------------------------------- the tokenizer's side
def encode_cut(
    added: Any, plan: CutPlan, sequence: str, type_id: int, word_index: int | None, trim: tuple[bool] | tuple[()] = ()
) -> Any:
    """The sequence's Encoding (before post-processing), or None for the general path. ``trim``:
    what the post-processor declares (``trims_offsets()``): a byte-level plan trims the offsets
    in the same pass (other plans give None for a non-empty one)."""
    fields = _sequence_fields(added, plan, sequence, word_index, trim)
    if fields is None:
        return None
    ids, tokens, offsets, words = fields
    n = len(ids)
    if type(offsets) is FlatOffsets:
        return flat_offsets_encoding(ids, (type_id,) * n, tokens, words, offsets, (0,) * n, (1,) * n, {})
    return new_encoding(ids, (type_id,) * n, tokens, words, offsets, (0,) * n, (1,) * n, {})


#: Texts from this many chars encode with the cycle collector paused: a cold text's cache tuples
#: would make it walk the tokenizer's tables (5-15% of a cold 20 KB encode). A shorter one does
#: not: the collection the pause defers runs at the next allocation once it is over, one per
#: call (8% of BART's warm per-line encode), where the collector would run once in hundreds of lines.
PAUSE_COLLECTOR_FROM = 2_000
_NO_FIELDS = ((), (), (), (), 0)


def encode_processed(added: Any, plan: CutPlan, sequence: str, split: Any, trim: tuple[bool] | tuple[()] = ()) -> Any:
    """``encode(sequence)`` post-processed by a single template ``split`` (see
    :meth:`TemplateProcessing.single_parts`), built in one go: the sequence's fields between the
    template's special tokens, no Encoding in between (``trim``: as :func:`encode_cut`). None
    when the engine cannot take it (then the general path does it).

    >>> from tokviz import models, pre_tokenizers, processors
    >>> from tokviz.added_vocabulary import AddedVocabulary
    >>> plan = build_plan(None, pre_tokenizers.Whitespace(), models.WordLevel({"[UNK]": 0, "hi": 1}, unk_token="[UNK]"))
    >>> template = processors.TemplateProcessing(single="<s> $A", special_tokens=[("<s>", 2)])
    >>> encoding = encode_processed(AddedVocabulary(), plan, "hi yo", template.single_parts())
    >>> encoding.ids, encoding.tokens, encoding.offsets, encoding.word_ids
    ([2, 1, 0], ['<s>', 'hi', '[UNK]'], [(0, 0), (0, 2), (3, 5)], [None, 0, 1])
    """
    fields = _sequence_fields(added, plan, sequence, None, trim)
    if fields is None:
        return None
    ids, tokens, offsets, words = fields
    n = len(ids)
    _, before, after, _ = split
    masks = template_masks(split, n)
    if type(offsets) is FlatOffsets and not any(map(any, before[3])) and not any(map(any, after[3])):
        # (the template's special tokens all at (0, 0))
        return flat_offsets_encoding(
            before[0] + ids + after[0], masks[0], before[1] + tokens + after[1], before[2] + words + after[2],
            (offsets[0], offsets[1], len(before[0]), len(after[0])), masks[2], masks[3], masks[4],
        )
    if type(offsets) is FlatOffsets:
        offsets = offsets.pairs()
    return new_encoding(
        before[0] + ids + after[0], masks[0], before[1] + tokens + after[1], before[2] + words + after[2],
        before[3] + offsets + after[3], masks[2], masks[3], masks[4],
    )


def _sequence_fields(added: Any, plan: CutPlan, sequence: str, word_index: int | None, trim: tuple[bool] | tuple[()]) -> Any:
    """``(ids, tokens, offsets, word ids)`` of a sequence as tuples (offsets as
    :class:`FlatOffsets` or pairs), or None for the general path; long texts with the cycle
    collector paused (see :data:`PAUSE_COLLECTOR_FROM`)."""
    if trim and plan.byte_words is None:
        return None
    if len(sequence) < PAUSE_COLLECTOR_FROM or not gc.isenabled():
        return _fields_of(added, plan, sequence, word_index, trim)
    gc.disable()
    try:
        return _fields_of(added, plan, sequence, word_index, trim)
    finally:
        gc.enable()


def _fields_of(added: Any, plan: CutPlan, sequence: str, word_index: int | None, trim: tuple[bool] | tuple[()]) -> Any:
    raw_search, normalized_search = added.searches()
    # Added tokens matched after the normalizer are looked for in each piece's normalized text.
    after = normalized_search is not None and bool(plan.stages)
    if not sequence:
        pieces: list[tuple[int | None, int, int]] = []
    elif (raw_search is None or raw_search(sequence) is None) and (
        after or normalized_search is None or normalized_search(sequence) is None
    ):
        pieces = [(None, 0, len(sequence))]
    elif after:
        pieces = [(token_id, start, end) for token_id, (start, end) in added.find_matches(sequence, False) if start != end]
    else:
        pieces = added_pieces(added, sequence)
    if not after:
        added = None
    if plan.graphemes and _PREPEND_CLASS.search(sequence) is not None:
        return None  # a Prepend-class char joins the next char (maybe a space) in one grapheme
    if len(pieces) == 1 and pieces[0][0] is None and word_index is None:
        fields = _piece_fields(plan, sequence, True, added, True, trim)
        if fields is None:
            return None
        ids, tokens, offsets, words, _ = fields
        if type(offsets) is FlatOffsets:
            # (tuples: an encoding that lives on keeps no list for the collector to walk)
            starts, ends, _, _ = offsets
            offsets = FlatOffsets((tuple(starts), ends if ends is None else tuple(ends), 0, 0))
        return ids, tokens, offsets, words
    ids: list[int] = []
    tokens: list[str] = []
    starts: list[int] = []
    ends: list[int] = []
    words: list[int] = []
    split_index = 0
    for token_id, start, end in pieces:
        if token_id is not None:
            value = sequence[start:end]
            ids.append(token_id)
            tokens.append(value)
            if trim:
                start, end = trim_token_offsets(value, start, end, start == 0, trim[0])
            starts.append(start)
            ends.append(end)
            words.append(split_index)
            split_index += 1
            continue
        text = sequence[start:end] if (start or end != len(sequence)) else sequence
        fields = _piece_fields(plan, text, start == 0, added, True, trim)
        if fields is None:
            return None
        piece_ids, piece_tokens, piece_offsets, piece_words, n_words = fields
        if not piece_ids:
            split_index += min(n_words, 1) if plan.one_word else n_words
            continue
        ids += piece_ids
        tokens += piece_tokens
        piece_starts, piece_ends = _flat_lists(piece_offsets, start)
        starts += piece_starts
        ends += piece_ends
        words.extend(map(add, piece_words, repeat(split_index)))
        # (one-word pipelines: a piece is one word, but where added tokens were cut out of it)
        split_index += piece_words[-1] + 1 if plan.one_word else n_words
    words_field = (word_index,) * len(ids) if word_index is not None else tuple(words)
    return tuple(ids), tuple(tokens), FlatOffsets((tuple(starts), tuple(ends), 0, 0)), words_field


__all__ = ["CutPlan", "build_plan", "encode_cut", "encode_processed"]
