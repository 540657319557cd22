"""Compression metrics: how well a tokenizer packs a held-out text, and where two tokenizers disagree.

A tokenizer is measured on a text it was not trained on. Words are the text's
WHITESPACE-separated words (``str.split``), not each pipeline's pre-tokens, so that every
configuration is divided by the same number: a byte-level pre-tokenizer that splits off
punctuation would otherwise get a smaller "tokens per word" for free. Special tokens a
post-processor adds (``[CLS]``, ``</s>``) are not counted: they are not part of the text.

>>> from tokviz import Tokenizer, models, pre_tokenizers
>>> tokenizer = Tokenizer(models.WordLevel({"hug": 0, "s": 1, "[UNK]": 2}, unk_token="[UNK]"))
>>> tokenizer.pre_tokenizer = pre_tokenizers.Whitespace()
>>> metrics = measure(tokenizer, "hug hug 🤗")
>>> metrics.tokens, metrics.tokens_per_word, metrics.unknown_rate, metrics.whole_word_share
(3, 1.0, 0.3333333333333333, 1.0)

Curves over vocab size come from a training history without retraining: ``history.model_at(k)``
at a grid of sizes (:func:`vocab_size_curve`). Segmentation differences say, for each
tokenizer, which of its tokens cut the text where none of the other tokenizers does, or join
what all of them cut (:func:`segmentation_differences`); token spans are compared after trimming whitespace, so
GPT-2's ``'Ġworld'`` (which includes the space before the word) and BERT's ``'world'`` count as the
same cut.

What this leaves out: bits-per-character or any language-model metric, pair inputs, and
words in scripts written without spaces (a Chinese sentence counts as one word).
"""

from __future__ import annotations

import bisect

from collections import Counter
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from tokviz.byte_level import UNICODE_TO_BYTES

_PREFIX_MARKERS = ("##", "Ġ", "▁")
_SUFFIX_MARKERS = ("</w>",)


@dataclass(frozen=True, slots=True)
class CompressionMetrics:
    """The one metrics record: counts of one tokenizer's token stream over a text; every ratio is a property.

    Every page reads its numbers from this record (Train's numbers over the spans, Compare's tables
    and charts, the literature's metrics of :mod:`tokviz.literature_metrics`), so one question has
    one answer. Special tokens a post-processor adds are not counted; unknown tokens are counted by
    id (:func:`unknown_token_id`), so a Unigram model's ``unk_id`` counts like WordPiece's ``[UNK]``.
    """

    vocab_size: int
    tokens: int
    words: int
    characters: int
    utf8_bytes: int
    unknown_tokens: int
    whole_words: int  # whitespace words covered by exactly one token
    continued_words: int = 0  # whitespace words covered by two or more tokens
    token_counts: tuple[tuple[int, int], ...] = ()  # (token id, occurrences), most frequent first

    @property
    def tokens_per_word(self) -> float:
        """Fertility: tokens per whitespace word (1.0 = every word is one token)."""
        return self.tokens / self.words if self.words else 0.0

    @property
    def characters_per_token(self) -> float:
        return self.characters / self.tokens if self.tokens else 0.0

    @property
    def bytes_per_token(self) -> float:
        """UTF-8 bytes per token, the figure that compares across scripts (a Hangul syllable is 3 bytes)."""
        return self.utf8_bytes / self.tokens if self.tokens else 0.0

    @property
    def unknown_rate(self) -> float:
        return self.unknown_tokens / self.tokens if self.tokens else 0.0

    @property
    def whole_word_share(self) -> float:
        """Share of whitespace words that are a single token."""
        return self.whole_words / self.words if self.words else 0.0

    @property
    def continued_share(self) -> float:
        """Share of whitespace words split into two or more tokens (Rust et al.'s continued words)."""
        return self.continued_words / self.words if self.words else 0.0

    @property
    def distinct_tokens(self) -> int:
        return len(self.token_counts)

    @property
    def vocabulary_used(self) -> float:
        """Share of the vocabulary that occurs at least once in the text."""
        return self.distinct_tokens / self.vocab_size if self.vocab_size else 0.0


@dataclass(frozen=True, slots=True)
class CurvePoint:
    """Compression of the tokenizer at one vocab size (a point of :func:`vocab_size_curve`)."""

    vocab_size: int
    tokens_per_word: float
    bytes_per_token: float


@dataclass(frozen=True, slots=True)
class SegmentationDiff:
    """Where tokenizers cut one text differently.

    ``differing[i]`` holds the indices (in encoding order, as ``spans_from_encoding`` numbers
    them) of tokenizer ``i``'s tokens that disagree with every other tokenizer (see
    :func:`segmentation_differences`); ``ranges``
    the character ranges of the original text covered by such tokens, merged and sorted.
    """

    differing: tuple[frozenset[int], ...]
    ranges: tuple[tuple[int, int], ...]


def strip_markers(token: str) -> str:
    """The token without its word-boundary marker: ``'##ing' -> 'ing'``, ``'▁the' -> 'the'``, ``'the</w>' -> 'the'``.

    >>> [strip_markers(token) for token in ("##ing", "Ġthe", "▁", "the</w>", "##")]
    ['ing', 'the', '', 'the', '##']
    """
    for marker in _PREFIX_MARKERS:
        if token.startswith(marker) and len(token) > len(marker) or token == marker and marker != "##":
            token = token[len(marker) :]
            break
    for marker in _SUFFIX_MARKERS:
        if token.endswith(marker) and len(token) > len(marker):
            token = token[: -len(marker)]
    return token


def surface(token: str, byte_level: bool = False) -> str:
    """What a token stands for in text, markers removed; byte-level symbols decoded when they form UTF-8.

    This is what :func:`vocab_jaccard` compares, so GPT-2's ``'Ġthe'``, BERT's ``'the'`` and
    T5's ``'▁the'`` are one string.

    >>> surface("Ġthe", byte_level=True), surface("ê°Ģ", byte_level=True), surface("ê°", byte_level=True)
    ('the', '가', 'ê°')
    >>> surface("##ing"), surface("▁the")
    ('ing', 'the')
    """
    if byte_level and token and all(char in UNICODE_TO_BYTES for char in token):
        try:
            return bytes(UNICODE_TO_BYTES[char] for char in token).decode("utf-8").strip()
        except UnicodeDecodeError:
            return token  # part of a character's bytes: no text to compare, keep the symbols
    return strip_markers(token)


def whitespace_words(text: str) -> list[tuple[int, int]]:
    """Character spans of the whitespace-separated words: ``'hi  you' -> [(0, 2), (4, 7)]``.

    >>> whitespace_words("hi  you")
    [(0, 2), (4, 7)]
    """
    spans: list[tuple[int, int]] = []
    start = None
    for index, char in enumerate(text):
        if char.isspace():
            if start is not None:
                spans.append((start, index))
                start = None
        elif start is None:
            start = index
    if start is not None:
        spans.append((start, len(text)))
    return spans


def _trimmed(text: str, start: int, end: int) -> tuple[int, int]:
    """A token's span without the whitespace at its ends (GPT-2's 'Ġworld' covers the space before it)."""
    while start < end and text[start].isspace():
        start += 1
    while end > start and text[end - 1].isspace():
        end -= 1
    return start, end


def text_token_spans(text: str, encoding: Any) -> list[tuple[int, int, int]]:
    """``(index, start, end)`` of the tokens that cover text: special tokens, bare markers and whitespace skipped.

    Spans are trimmed of whitespace; ``index`` is the token's position in the encoding.
    """
    mask = list(getattr(encoding, "special_tokens_mask", None) or [0] * len(encoding.tokens))
    spans = []
    for index, (token, (start, end), special) in enumerate(zip(encoding.tokens, encoding.offsets, mask)):
        if special or not strip_markers(token):
            continue  # a post-processor's [CLS], or a lone '▁' / 'Ġ' standing for a space
        start, end = _trimmed(text, start, end)
        if start < end:
            spans.append((index, start, end))
    return spans


def unknown_token_id(tokenizer: Any) -> int | None:
    """The id of the tokenizer's unknown token: ``model.unk_token`` or a Unigram's ``unk_id``; None without one.

    Works for tokviz's and HF's ``Tokenizer`` (HF's Unigram object does not expose its ``unk_id``:
    it is read from the tokenizer's JSON).

    >>> from tokviz import Tokenizer, models
    >>> unknown_token_id(Tokenizer(models.Unigram([("<pad>", 0.0), ("<unk>", 0.0), ("a", -1.0)], unk_id=1)))
    1
    >>> unknown_token_id(Tokenizer(models.WordPiece({"[PAD]": 0, "[UNK]": 1, "a": 2}, unk_token="[UNK]")))
    1
    >>> unknown_token_id(Tokenizer(models.BPE({"a": 0}, []))) is None
    True
    """
    model = getattr(tokenizer, "model", None)
    unk_token = getattr(model, "unk_token", None)
    if isinstance(unk_token, str) and unk_token:
        return tokenizer.token_to_id(unk_token)
    if model is not None and not hasattr(model, "unk_token") and not hasattr(model, "unk_id") and hasattr(tokenizer, "to_str"):
        import json

        unk_id = json.loads(tokenizer.to_str()).get("model", {}).get("unk_id")  # HF's Unigram keeps it private
        return unk_id if isinstance(unk_id, int) else None
    unk_id = getattr(model, "unk_id", None)
    return unk_id if isinstance(unk_id, int) else None


def measuring_tokenizer(tokenizer: Any) -> Any:
    """The tokenizer as comparisons measure it: truncation and padding off; the caller's tokenizer unchanged.

    A ``tokenizer.json`` may set truncation (T5-small's file: 512 tokens, some files 32) or padding;
    measured with them on, a long text looks short and wins every compression metric. tokviz's
    tokenizer is copied cheaply (``copy.copy`` shares the components); HF's is rebuilt from its JSON.
    """
    if not (getattr(tokenizer, "truncation", None) or getattr(tokenizer, "padding", None)):
        return tokenizer
    import copy

    from tokviz.tokenizer import Tokenizer

    twin = copy.copy(tokenizer) if isinstance(tokenizer, Tokenizer) else type(tokenizer).from_str(tokenizer.to_str())
    twin.no_truncation()
    twin.no_padding()
    return twin


def measure_encodings(texts: Sequence[str], encodings: Sequence[Any], vocab_size: int, unk_id: int | None = None) -> CompressionMetrics:
    """Count the token streams of ``encodings`` (one per text; tokviz's or HF's ``Encoding``).

    Special tokens (``special_tokens_mask``) are left out; a word is whole when exactly one of the
    remaining tokens overlaps it and continued when two or more do.

    >>> from types import SimpleNamespace as Enc
    >>> encoding = Enc(tokens=["[CLS]", "hug", "##s", "are", "[UNK]", "[SEP]"], ids=[2, 5, 6, 7, 1, 3],
    ...                offsets=[(0, 0), (0, 3), (3, 4), (5, 8), (9, 10), (0, 0)], special_tokens_mask=[1, 0, 0, 0, 0, 1])
    >>> metrics = measure_encodings(["hugs are 🤗"], [encoding], vocab_size=8, unk_id=1)
    >>> metrics.tokens, metrics.words, metrics.whole_words, metrics.continued_words, metrics.unknown_tokens
    (4, 3, 2, 1, 1)
    """
    tokens = words = whole = continued = characters = utf8_bytes = unknown = 0
    counts: Counter[int] = Counter()
    for text, encoding in zip(texts, encodings, strict=True):
        mask = list(getattr(encoding, "special_tokens_mask", None) or [0] * len(encoding.ids))
        ids = [token_id for token_id, special in zip(encoding.ids, mask) if not special]
        tokens += len(ids)
        counts.update(ids)
        if unk_id is not None:
            unknown += ids.count(unk_id)
        characters += len(text)
        utf8_bytes += len(text.encode("utf-8", errors="surrogatepass"))
        spans = whitespace_words(text)
        words += len(spans)
        word_of = [-1] * len(text)
        for index, (start, end) in enumerate(spans):
            word_of[start:end] = [index] * (end - start)
        per_word: Counter[int] = Counter()
        for _, start, end in text_token_spans(text, encoding):
            for word_index in {word_of[position] for position in range(start, end)} - {-1}:
                per_word[word_index] += 1
        whole += sum(1 for count in per_word.values() if count == 1)
        continued += sum(1 for count in per_word.values() if count >= 2)
    return CompressionMetrics(
        vocab_size=vocab_size, tokens=tokens, words=words, characters=characters, utf8_bytes=utf8_bytes,
        unknown_tokens=unknown, whole_words=whole, continued_words=continued, token_counts=tuple(counts.most_common()),
    )


def measure(tokenizer: Any, texts: str | Sequence[str]) -> CompressionMetrics:
    """Encode ``texts`` once (truncation and padding off, :func:`measuring_tokenizer`) and count them.

    The vocab size counts added tokens; unknown tokens are counted by id (:func:`unknown_token_id`).
    """
    texts = [texts] if isinstance(texts, str) else [str(text) for text in texts]
    measured = measuring_tokenizer(tokenizer)
    encodings = [measured.encode(text) for text in texts]
    return measure_encodings(texts, encodings, tokenizer.get_vocab_size(with_added_tokens=True), unknown_token_id(tokenizer))


def vocab_jaccard(
    left: Iterable[str], right: Iterable[str], *, left_byte_level: bool = False, right_byte_level: bool = False, exclude: Iterable[str] = ()
) -> float:
    """Jaccard overlap |A ∩ B| / |A ∪ B| of two vocabularies compared by :func:`surface` string.

    Markers are removed first, so the overlap measures which pieces of text both learned,
    not which marker convention they use; tokens in ``exclude`` (special tokens) are left out.

    >>> vocab_jaccard(["Ġthe", "a", "b"], ["the", "##b", "c"], left_byte_level=True)
    0.5
    """
    excluded = set(exclude)
    left_set = {surface(token, left_byte_level) for token in left if token not in excluded} - {""}
    right_set = {surface(token, right_byte_level) for token in right if token not in excluded} - {""}
    union = left_set | right_set
    return len(left_set & right_set) / len(union) if union else 1.0


def pairwise_jaccard(
    vocabs: Mapping[str, Iterable[str]], byte_level: Mapping[str, bool] | None = None, exclude: Iterable[str] = ()
) -> list[tuple[str, str, float]]:
    """:func:`vocab_jaccard` for every pair of named vocabularies, in the mapping's order.

    >>> pairwise_jaccard({"A": ["a", "b"], "B": ["b"], "C": ["c"]})
    [('A', 'B', 0.5), ('A', 'C', 0.0), ('B', 'C', 0.0)]
    """
    flags = byte_level or {}
    names = list(vocabs)
    lists = {name: list(vocabs[name]) for name in names}
    excluded = tuple(exclude)
    return [
        (a, b, vocab_jaccard(lists[a], lists[b], left_byte_level=flags.get(a, False), right_byte_level=flags.get(b, False), exclude=excluded))
        for position, a in enumerate(names)
        for b in names[position + 1 :]
    ]


def vocab_size_curve(tokenizer_at: Callable[[int], Any], sizes: Iterable[int], text: str | Sequence[str]) -> tuple[CurvePoint, ...]:
    """Tokens per word and bytes per token of ``tokenizer_at(k)`` on ``text`` for each size ``k``.

    ``tokenizer_at`` builds the tokenizer around ``history.model_at(k)``, so nothing is retrained;
    the point's ``vocab_size`` is the one asked for.
    """
    points = []
    for size in sizes:
        metrics = measure(tokenizer_at(size), text)
        points.append(CurvePoint(size, metrics.tokens_per_word, metrics.bytes_per_token))
    return tuple(points)


def segmentation_differences(text: str, encodings: Sequence[Any]) -> SegmentationDiff:
    """Which tokens of each encoding of ``text`` cut it where the other encodings do not.

    Each encoding becomes whitespace-trimmed character spans (special tokens and lone markers
    skipped) and its set of CUTS, the positions where its tokens start or end. A token is
    outlined when it disagrees with ALL the other encodings at one place:

    - it starts or ends at a position no other encoding cuts at (a cut only it makes), or
    - it covers a position every other encoding cuts at (it joins what all others split).

    A token that agrees with at least one other encoding at each of its boundaries is not
    outlined, so with three or four tokenizers only the odd one out is marked, not every
    token someone somewhere cuts differently (on the sample, GPT-2 / BERT / T5 at vocab 1,000:
    6 of GPT-2's 121 tokens instead of 82). With two encodings it marks every disagreement.
    Byte-level pieces of one character share that character's span and add no cut, so they
    are not outlined (the token counts show what they cost).

    Worked example, ``"unbelievable"`` cut three ways (cuts in brackets):

    - A ``un|believ|able`` {0, 2, 8, 12}: every boundary is shared (2 with B, 8 with C): none outlined;
    - B ``un|believable`` {0, 2, 12}: ``believable`` covers 8, where A and C both cut: outlined;
    - C ``unbeliev|able`` {0, 8, 12}: ``unbeliev`` covers 2, where A and B both cut: outlined.

    >>> from types import SimpleNamespace as Enc
    >>> a = Enc(tokens=["un", "believ", "able"], offsets=[(0, 2), (2, 8), (8, 12)])
    >>> b = Enc(tokens=["un", "believable"], offsets=[(0, 2), (2, 12)])
    >>> c = Enc(tokens=["unbeliev", "able"], offsets=[(0, 8), (8, 12)])
    >>> diff = segmentation_differences("unbelievable", [a, b, c])
    >>> diff.differing, diff.ranges
    ((frozenset(), frozenset({1}), frozenset({0})), ((0, 12),))
    >>> segmentation_differences("unbelievable", [a, b]).differing  # two tokenizers: every disagreement
    (frozenset({1, 2}), frozenset({1}))
    """
    per_encoding = [text_token_spans(text, encoding) for encoding in encodings]
    cuts = [{position for _, start, end in spans for position in (start, end)} for spans in per_encoding]
    differing: list[frozenset[int]] = []
    covered: list[tuple[int, int]] = []
    for position, spans in enumerate(per_encoding):
        others = [other for index, other in enumerate(cuts) if index != position]
        if not others:
            differing.append(frozenset())
            continue
        everyone_cuts = sorted(set.intersection(*others))
        anyone_cuts = set.union(*others)
        indices = set()
        for index, start, end in spans:
            own_cut = start not in anyone_cuts or end not in anyone_cuts
            # A cut every other encoding makes strictly inside this token (binary search: texts are long).
            after_start = bisect.bisect_right(everyone_cuts, start)
            joins = after_start < len(everyone_cuts) and everyone_cuts[after_start] < end
            if own_cut or joins:
                indices.add(index)
                covered.append((start, end))
        differing.append(frozenset(indices))
    return SegmentationDiff(tuple(differing), _merge_ranges(covered))


def _merge_ranges(ranges: Iterable[tuple[int, int]]) -> tuple[tuple[int, int], ...]:
    """``[(4, 6), (0, 2), (1, 3)] -> ((0, 3), (4, 6))``: overlapping ranges joined, sorted."""
    merged: list[list[int]] = []
    for start, end in sorted(ranges):
        if merged and start < merged[-1][1]:
            merged[-1][1] = max(merged[-1][1], end)
        else:
            merged.append([start, end])
    return tuple((start, end) for start, end in merged)
