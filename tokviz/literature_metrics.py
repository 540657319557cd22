"""Tokenizer metrics from the literature, each defined in one sentence with its source.

Every metric is read from the one metrics record, :class:`tokviz.metrics.CompressionMetrics`
(:func:`tokviz.metrics.measure`: the non-special tokens of each text's encoding, truncation and
padding off, unknown tokens counted by id), so the Compare page's tables cannot disagree.

>>> from tokviz import Tokenizer, models, pre_tokenizers
>>> tokenizer = Tokenizer(models.WordPiece({"[UNK]": 0, "hug": 1, "##s": 2, "pug": 3}, unk_token="[UNK]"))
>>> tokenizer.pre_tokenizer = pre_tokenizers.Whitespace()
>>> record = measure(tokenizer, ["hugs pug", "hug 🤗"])
>>> record.tokens, record.words, record.continued_words, record.unknown_tokens, record.distinct_tokens
(5, 4, 1, 1, 4)
>>> values = metric_values(record)
>>> values["fertility"], values["continued_words"], values["unknown_rate"], values["vocabulary_used"]
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
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from functools import cache
from importlib import resources
from typing import Any

from tokviz.metrics import CompressionMetrics, measure, measuring_tokenizer

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


def metric_values(metrics: CompressionMetrics) -> dict[str, float]:
    """The text metrics of :data:`METRICS` (all but parity) from one tokenizer's record (:func:`tokviz.metrics.measure`)."""
    counts = [count for _, count in metrics.token_counts]
    return {
        "fertility": metrics.tokens_per_word,
        "continued_words": metrics.continued_share,
        "characters_per_token": metrics.characters_per_token,
        "bytes_per_token": metrics.bytes_per_token,
        "unknown_rate": metrics.unknown_rate,
        "vocabulary_used": metrics.vocabulary_used,
        "renyi_efficiency": renyi_efficiency(counts, RENYI_ALPHA, metrics.vocab_size),
        "renyi_efficiency_observed": renyi_efficiency(counts, RENYI_ALPHA),
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
    measured = measuring_tokenizer(tokenizer)
    result = {}
    for language, sentences in sample.items():
        result[language] = [
            sum(1 for special in (getattr(encoding, "special_tokens_mask", None) or [0] * len(encoding.ids)) if not special)
            for encoding in map(measured.encode, sentences)
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
