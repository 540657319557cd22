"""Splitting a normalized piece into words, as the pre-tokenizer's steps declare them.

:func:`split_kind` reads what a step declares (``plain_split()``, ``cut_spans``); the words of
several steps are composed as HF's ``Sequence`` composes them, a later step once per distinct
word (:func:`_per_word`), a step after ByteLevel on a word's byte symbols
(:func:`_byte_level_split`); long BPE words are cut where the model never merges across
(:func:`_long_words_cut`).
"""

from __future__ import annotations

from itertools import accumulate, chain, compress, count, islice, repeat
from operator import add, is_, sub
from typing import Any, TYPE_CHECKING

from tokviz.byte_level import text_to_symbols

if TYPE_CHECKING:  # (the plan, a layer up, in annotations only)
    from tokviz.engine.plan import CutPlan


_MAX_CACHED_WORDS = 200_000


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


def _metaspace_words(plan: CutPlan, text: str, opens_text: bool = False) -> tuple[list[str], list[int], list[int] | None]:
    """WhitespaceSplit then Metaspace (T5's and ALBERT's) on a normalized piece: ``(words,
    starts, floors)``; ``floors``: per word, its run's first char, which a prepended mark's
    offsets map to (as HF's), or None when no mark was prepended. ``opens_text``: the piece
    starts the text (for ``prepend_scheme="first"``).

    >>> from tokviz import models, pre_tokenizers
    >>> from tokviz.engine.plan import build_plan
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


#: BPE words longer than this are merged piece by piece where the model allows it (a Llama line).
PIECES_FROM = 16


def _long_words_cut(plan: CutPlan, words: list[str], starts: list[int] | None) -> tuple[list[str], list[int] | None, list[int], list[int]] | None:
    """The words of a piece holding one longer than :data:`PIECES_FROM`, cut into the pieces
    the BPE model never merges across (:func:`~tokviz.engine.bpe.word_pieces`), as ``(pieces,
    their starts (None for None), per piece the index of its word, the long words met before)``;
    None when no word is cut. Each piece is then a word of the cache (merged once, wherever it
    comes); a long word met again gets its whole entry cached (see ``fields``), then stays whole.

    >>> from tokviz import models, pre_tokenizers
    >>> from tokviz.engine.plan import build_plan
    >>> plan = build_plan(None, pre_tokenizers.Digits(), models.BPE({"a": 0, "▁": 1, "▁a": 2}, [("▁", "a")]))
    >>> pieces, starts, word_of, again = _long_words_cut(plan, ["▁a" * 17, "1", "a▁a"], [0, 34, 35])
    >>> pieces[-4:], starts[-4:], word_of[-4:], again  # (the short word's pieces too)
    (['▁a', '1', 'a', '▁a'], [32, 34, 35, 36], [0, 1, 2, 2], [])
    >>> _long_words_cut(plan, ["▁a" * 17], None)[3]  # (met again: its whole entry is cached next)
    [0]
    """
    pieces_of = plan.pieces
    cache, met = plan.words, plan.long_words
    found: list[Any] = []
    again: list[int] = []
    for index, word in enumerate(words):
        if word in cache:
            found.append((word,))
            continue
        found.append(pieces_of(word))
        if len(word) <= PIECES_FROM:
            continue
        if word in met:
            again.append(index)
        elif len(met) < _MAX_CACHED_WORDS:
            met.add(word)
    pieces = list(chain.from_iterable(found))
    if len(pieces) == len(words) or sum(map(len, pieces)) != sum(map(len, words)):
        return None  # (no word cut, or pieces that do not tile their words)
    counts = list(map(len, found))
    word_of = list(chain.from_iterable(map(repeat, count(), counts)))
    if starts is not None:
        # A piece starts where its word does, plus the pieces of that word before it.
        shifts = map(sub, starts, accumulate(map(len, words), initial=0))
        starts = list(map(add, accumulate(map(len, pieces), initial=0), chain.from_iterable(map(repeat, shifts, counts))))
    return pieces, starts, word_of, again


def _missing(entries: list[Any]) -> list[int]:
    """The positions of the words not in the cache (found in C): ``[e, None, e, None] -> [1, 3]``."""
    return list(compress(count(), map(is_, entries, repeat(None))))
