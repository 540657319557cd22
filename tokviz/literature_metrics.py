"""Tokenizer metrics from the literature, each defined in one sentence with its source.

Every metric is computed from the token stream a tokenizer gives for an evaluation text: the
non-special tokens of each text's encoding (a post-processor's ``[CLS]`` is not part of the text).
Words are the text's whitespace-separated words, so every tokenizer is divided by the same number.
A token belongs to each word its span (trimmed of whitespace: GPT-2's ``'Ġworld'`` covers the
space before the word) overlaps.

>>> from tokviz import Tokenizer, models, pre_tokenizers
>>> tokenizer = Tokenizer(models.WordPiece({"[UNK]": 0, "hug": 1, "##s": 2, "pug": 3}, unk_token="[UNK]"))
>>> tokenizer.pre_tokenizer = pre_tokenizers.Whitespace()
>>> stats = stream_stats(tokenizer, ["hugs pug", "hug 🤗"])
>>> stats.tokens, stats.words, stats.continued_words, stats.unknown_tokens, stats.distinct_tokens
(5, 4, 1, 1, 4)
>>> stats.fertility, stats.continued_share, stats.unknown_rate, stats.vocabulary_used
(1.25, 0.25, 0.2, 1.0)

Rényi efficiency (Zouhar et al., 2023) is the Rényi entropy of order α of the token unigram
distribution divided by the log of the vocabulary size; :func:`renyi_efficiency` computes it the
way the ``tokenization-scorer`` package does (its tests check the two agree to 1e-6).

Parity (Petrov et al., 2023) uses the multilingual parallel sample shipped in
``tokviz/data/parallel_sample.tsv`` (:func:`parallel_sample`): 24 sentences in 10 languages.

What this leaves out: metrics that need a trained language model (bits per byte, perplexity),
morphological alignment (it needs gold segmentations), and pair inputs.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from functools import cache
from importlib import resources
from typing import Any

from tokviz.metrics import text_token_spans, whitespace_words

#: α of Rényi efficiency, as Zouhar et al. (2023) recommend.
RENYI_ALPHA = 2.5


@dataclass(frozen=True, slots=True)
class MetricInfo:
    """A metric as the page shows it: label, one-sentence definition, source, and which way is better.

    ``better`` is ``"higher"``, ``"lower"`` or ``"closer to 1"``.
    """

    key: str
    label: str
    definition: str
    source: str
    better: str


#: The metrics of :func:`tokviz.compare.evaluate`, in column order.
METRICS: dict[str, MetricInfo] = {
    info.key: info
    for info in (
        MetricInfo(
            "fertility",
            "Fertility (tokens per word)",
            "The number of tokens divided by the number of whitespace-separated words; 1.0 means every word is one token.",
            "Rust et al., 2021, How Good is Your Tokenizer? (ACL); Ács, 2019",
            "lower",
        ),
        MetricInfo(
            "continued_words",
            "Proportion of continued words",
            "The share of words that the tokenizer splits into two or more tokens.",
            "Rust et al., 2021, How Good is Your Tokenizer? (ACL)",
            "lower",
        ),
        MetricInfo(
            "characters_per_token",
            "Characters per token",
            "The number of characters of the text divided by the number of tokens (a compression rate).",
            "Goldman et al., 2024, Unpacking Tokenization: Evaluating Text Compression and its Correlation with Model Performance (ACL Findings)",
            "higher",
        ),
        MetricInfo(
            "bytes_per_token",
            "UTF-8 bytes per token",
            "The number of UTF-8 bytes of the text divided by the number of tokens, comparable across scripts.",
            "Petrov et al., 2023, Language Model Tokenizers Introduce Unfairness Between Languages (NeurIPS)",
            "higher",
        ),
        MetricInfo(
            "unknown_rate",
            "Unknown rate",
            "The share of tokens that are the unknown token ([UNK], <unk>): text the tokenizer cannot represent.",
            "Ács, 2019, Exploring BERT's Vocabulary; Rust et al., 2021",
            "lower",
        ),
        MetricInfo(
            "vocabulary_used",
            "Vocabulary used",
            "The share of the tokenizer's vocabulary that occurs at least once in the evaluation text.",
            "Zouhar et al., 2023, Tokenization and the Noiseless Channel (ACL), on unevenly used vocabularies",
            "higher",
        ),
        MetricInfo(
            "renyi_efficiency",
            "Rényi efficiency (α = 2.5)",
            "The Rényi entropy of order 2.5 of the token frequencies divided by log |V| (the tokenizer's vocabulary size): "
            "1.0 when every token of the vocabulary is used equally often.",
            "Zouhar et al., 2023, Tokenization and the Noiseless Channel (ACL); package tokenization-scorer",
            "higher",
        ),
        MetricInfo(
            "renyi_efficiency_observed",
            "Rényi efficiency (α = 2.5, observed types)",
            "The same entropy divided by the log of the number of distinct tokens that occur in the text "
            "(tokenization-scorer's default when no vocabulary size is given).",
            "Zouhar et al., 2023; package tokenization-scorer (score(text, metric='renyi', power=2.5))",
            "higher",
        ),
        MetricInfo(
            "parity",
            "Parity with English",
            "Tokens for a sentence divided by tokens for its English parallel, averaged over the sentences and "
            "languages of the shipped parallel sample; 1.0 means no language pays a premium.",
            "Petrov et al., 2023, Language Model Tokenizers Introduce Unfairness Between Languages (NeurIPS)",
            "closer to 1",
        ),
    )
}


@dataclass(frozen=True, slots=True)
class StreamStats:
    """Counts of one tokenizer's token stream over the evaluation texts; metrics are properties."""

    vocab_size: int
    tokens: int
    words: int
    continued_words: int
    characters: int
    utf8_bytes: int
    unknown_tokens: int
    token_counts: tuple[tuple[int, int], ...]  # (token id, occurrences), most frequent first

    @property
    def distinct_tokens(self) -> int:
        return len(self.token_counts)

    @property
    def fertility(self) -> float:
        return self.tokens / self.words if self.words else 0.0

    @property
    def continued_share(self) -> float:
        return self.continued_words / self.words if self.words else 0.0

    @property
    def characters_per_token(self) -> float:
        return self.characters / self.tokens if self.tokens else 0.0

    @property
    def bytes_per_token(self) -> float:
        return self.utf8_bytes / self.tokens if self.tokens else 0.0

    @property
    def unknown_rate(self) -> float:
        return self.unknown_tokens / self.tokens if self.tokens else 0.0

    @property
    def vocabulary_used(self) -> float:
        return self.distinct_tokens / self.vocab_size if self.vocab_size else 0.0

    def renyi_efficiency(self, alpha: float = RENYI_ALPHA, observed: bool = False) -> float:
        """Rényi efficiency over |V| (``observed=True``: over the distinct tokens seen)."""
        counts = [count for _, count in self.token_counts]
        return renyi_efficiency(counts, alpha, None if observed else self.vocab_size)


def renyi_entropy(counts: Iterable[int], alpha: float = RENYI_ALPHA) -> float:
    """Rényi entropy of order α, in bits, of the distribution given by ``counts``.

    H_α(p) = log2(Σ p_i^α) / (1 - α); α = 1 is Shannon's entropy.

    >>> round(renyi_entropy([1, 1, 1, 1]), 6), round(renyi_entropy([3, 1], alpha=2), 6)
    (2.0, 0.678072)
    """
    values = [count for count in counts if count > 0]
    total = sum(values)
    if not total:
        return 0.0
    probabilities = [count / total for count in values]
    if alpha == 1.0:
        return -sum(p * math.log2(p) for p in probabilities)
    return math.log2(sum(p**alpha for p in probabilities)) / (1.0 - alpha)


def renyi_efficiency(counts: Iterable[int], alpha: float = RENYI_ALPHA, vocab_size: int | None = None) -> float:
    """H_α(p) / log2(|V|): ``vocab_size`` is |V|, or the number of distinct tokens when None.

    >>> renyi_efficiency([5, 5, 5, 5], vocab_size=4), renyi_efficiency([5, 5, 5, 5], vocab_size=16)
    (1.0, 0.5)
    >>> renyi_efficiency([7])  # one type: no choice, no entropy, and log|V| is 0
    0.0
    """
    values = [count for count in counts if count > 0]
    size = len(values) if vocab_size is None else vocab_size
    if size <= 1 or not values:
        return 0.0
    return renyi_entropy(values, alpha) / math.log2(size)


def unknown_token_id(tokenizer: Any) -> int | None:
    """The id of the tokenizer's unknown token (``model.unk_token`` or Unigram's ``unk_id``), else None."""
    model = getattr(tokenizer, "model", None)
    unk_token = getattr(model, "unk_token", None)
    if isinstance(unk_token, str) and unk_token:
        return tokenizer.token_to_id(unk_token)
    unk_id = getattr(model, "unk_id", None)
    return unk_id if isinstance(unk_id, int) else None


def stats_from_encodings(
    texts: Sequence[str], encodings: Sequence[Any], vocab_size: int, unk_id: int | None = None
) -> StreamStats:
    """Count the token stream of ``encodings`` (one per text; tokviz's or HF's ``Encoding``).

    Special tokens (``special_tokens_mask``) are left out; a word is continued when two or more
    of the remaining tokens overlap it.
    """
    tokens = words = continued = characters = utf8_bytes = unknown = 0
    counts: Counter[int] = Counter()
    for text, encoding in zip(texts, encodings, strict=True):
        mask = list(getattr(encoding, "special_tokens_mask", None) or [0] * len(encoding.ids))
        ids = [token_id for token_id, special in zip(encoding.ids, mask) if not special]
        tokens += len(ids)
        counts.update(ids)
        if unk_id is not None:
            unknown += sum(1 for token_id in ids if token_id == unk_id)
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
        continued += sum(1 for count in per_word.values() if count >= 2)
    return StreamStats(
        vocab_size=vocab_size,
        tokens=tokens,
        words=words,
        continued_words=continued,
        characters=characters,
        utf8_bytes=utf8_bytes,
        unknown_tokens=unknown,
        token_counts=tuple(counts.most_common()),
    )


def encode_for_evaluation(tokenizer: Any, texts: Sequence[str]) -> list[Any]:
    """Each text's encoding without truncation or padding, and without special tokens.

    A tokenizer loaded from a file may have truncation on (max_length 512): evaluation must see the
    whole text, so such a tokenizer is copied (through its tokenizer.json) with both turned off;
    the caller's tokenizer is never changed.
    """
    if getattr(tokenizer, "truncation", None) or getattr(tokenizer, "padding", None):
        tokenizer = type(tokenizer).from_str(tokenizer.to_str())
        tokenizer.no_truncation()
        tokenizer.no_padding()
    return [tokenizer.encode(text, add_special_tokens=False) for text in texts]


def stream_stats(tokenizer: Any, texts: Sequence[str]) -> StreamStats:
    """:func:`stats_from_encodings` of ``tokenizer`` on ``texts`` (vocab size with added tokens)."""
    encodings = encode_for_evaluation(tokenizer, texts)
    return stats_from_encodings(texts, encodings, tokenizer.get_vocab_size(with_added_tokens=True), unknown_token_id(tokenizer))


def metric_values(stats: StreamStats) -> dict[str, float]:
    """The text metrics of :data:`METRICS` (all but parity) from one tokenizer's counts."""
    return {
        "fertility": stats.fertility,
        "continued_words": stats.continued_share,
        "characters_per_token": stats.characters_per_token,
        "bytes_per_token": stats.bytes_per_token,
        "unknown_rate": stats.unknown_rate,
        "vocabulary_used": stats.vocabulary_used,
        "renyi_efficiency": stats.renyi_efficiency(),
        "renyi_efficiency_observed": stats.renyi_efficiency(observed=True),
    }


# ---------------------------------------------------------------------- parallel sample and parity
#: Language code -> name, in the column order of ``parallel_sample.tsv``.
LANGUAGES: dict[str, str] = {
    "en": "English",
    "de": "German",
    "fr": "French",
    "es": "Spanish",
    "ru": "Russian",
    "zh": "Chinese",
    "ja": "Japanese",
    "ko": "Korean",
    "hi": "Hindi",
    "ar": "Arabic",
}


@cache
def parallel_sample() -> dict[str, tuple[str, ...]]:
    """The shipped parallel sample: language code -> its sentences (sentence i of each is a translation of the others).

    >>> sample = parallel_sample()
    >>> len(sample), len(sample["en"]), sample["en"][0]
    (10, 24, 'The weather is nice today, so we are going to the park.')
    >>> sample["de"][0]
    'Heute ist das Wetter schön, deshalb gehen wir in den Park.'
    """
    text = resources.files("tokviz").joinpath("data", "parallel_sample.tsv").read_text(encoding="utf-8")
    header, *rows = [line.split("\t") for line in text.splitlines() if line]
    return {code: tuple(row[column] for row in rows) for column, code in enumerate(header)}


def token_counts_by_sentence(tokenizer: Any, sample: Mapping[str, Sequence[str]] | None = None) -> dict[str, list[int]]:
    """Tokens (no special tokens) of every sentence of the sample, per language."""
    sample = parallel_sample() if sample is None else sample
    result = {}
    for language, sentences in sample.items():
        encodings = encode_for_evaluation(tokenizer, list(sentences))
        result[language] = [
            sum(1 for special in (getattr(e, "special_tokens_mask", None) or [0] * len(e.ids)) if not special) for e in encodings
        ]
    return result


def parity_by_language(
    token_counts: Mapping[str, Sequence[int]], reference: str = "en"
) -> dict[str, float]:
    """Mean over sentences of tokens(sentence) / tokens(its English parallel), per language.

    >>> parity_by_language({"en": [4, 5], "de": [6, 5]})
    {'en': 1.0, 'de': 1.25}
    """
    english = token_counts[reference]
    result = {}
    for language, counts in token_counts.items():
        ratios = [count / base for count, base in zip(counts, english, strict=True) if base]
        result[language] = sum(ratios) / len(ratios) if ratios else 0.0
    return result


def mean_parity(parities: Mapping[str, float], reference: str = "en") -> float:
    """The average premium over the languages other than the reference: the ``parity`` column.

    >>> mean_parity({"en": 1.0, "de": 1.25, "ko": 2.75})
    2.0
    """
    others = [value for language, value in parities.items() if language != reference]
    return sum(others) / len(others) if others else 1.0
