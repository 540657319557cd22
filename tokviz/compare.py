"""Configurations for the Compare page: a preset in one click, or model × pre-tokenizer × normalizer.

The Compare page puts 2 to 4 pipelines side by side. Each is either a preset
(:data:`tokviz.presets.TRAIN_PRESETS`, the Train page's, SentencePiece's included) or three choices from short menus, turned into a full
:class:`~tokviz.pipeline_config.PipelineConfig` with the conventions each choice implies
(WordPiece continues words with ``##`` and is scored by pair frequency, as HF's
``WordPieceTrainer`` does — the BERT-like preset keeps the HF course's likelihood score, which
at small vocab sizes cuts words into more pieces; a byte-level pipeline starts from the 256
byte symbols and needs no unknown token):

>>> config = custom_config("WordPiece", "Whitespace", "lowercase")
>>> config.model, config.continuing_subword_prefix, config.scoring, config.unk_token
('WordPiece', '##', 'frequency', '[UNK]')
>>> [spec.type for spec in config.normalizers]
['NFD', 'Lowercase', 'StripAccents']
>>> custom_config("BPE", "ByteLevel", "none").unk_token is None
True

SentencePiece trains on raw lines with its own normalization rule, so the menus' pre-tokenizer and
normalizer do not apply to it: the choice is ``spm_train``'s default pipeline (unigram, ``nmt_nfkc``):

>>> config = custom_config("SentencePiece", "Whitespace", "lowercase")
>>> config.sp_model_type, config.normalization_rule, [spec.type for spec in config.pre_tokenizers]
('unigram', 'nmt_nfkc', ['Metaspace'])

Any tokenizers, trained here or loaded from files (:func:`tokviz.load`), are measured with the
literature's metrics by :func:`evaluate` (up to :data:`MAX_COMPARED` at once):

>>> from tokviz import Tokenizer, models, pre_tokenizers
>>> words = Tokenizer(models.WordLevel({"[UNK]": 0, "hug": 1, "pug": 2}, unk_token="[UNK]"))
>>> words.pre_tokenizer = pre_tokenizers.Whitespace()
>>> frame = evaluate({"words": words}, ["hug pug hugs"], parallel=False)
>>> frame.loc["words", ["tokens", "fertility", "unknown_rate", "vocabulary_used"]].tolist()
[3.0, 1.0, 0.3333333333333333, 1.0]

What this leaves out: every other option of the Train page's Custom form (use the Train
page for those); pipelines are compared at their own vocab size each.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import pandas as pd

from tokviz.errors import PipelineConfigError, TokvizError
from tokviz.metrics import CompressionMetrics, measure
from tokviz.pipeline_config import MODELS, ComponentSpec, PipelineConfig, component, sentencepiece_config
from tokviz.presets import TRAIN_PRESETS

#: Pre-tokenizer menu: label -> the components it stands for.
PRE_TOKENIZER_CHOICES: dict[str, tuple[ComponentSpec, ...]] = {
    "Whitespace": (component("Whitespace"),),
    "WhitespaceSplit": (component("WhitespaceSplit"),),
    "BertPreTokenizer": (component("BertPreTokenizer"),),
    "ByteLevel": (component("ByteLevel", add_prefix_space=False),),
    "Metaspace": (component("Metaspace"),),
}

#: Normalizer menu: label -> the components it stands for.
NORMALIZER_CHOICES: dict[str, tuple[ComponentSpec, ...]] = {
    "none": (),
    "NFKC": (component("NFKC"),),
    "lowercase": (component("NFD"), component("Lowercase"), component("StripAccents")),
    "BertNormalizer": (component("BertNormalizer"),),
}

UNK_TOKEN = "[UNK]"

#: Most tokenizers one comparison takes (trained configurations and uploaded files together).
MAX_COMPARED = 8


@dataclass(frozen=True, slots=True)
class Configuration:
    """One column of the comparison: a name the tables use, the pipeline and its vocab size."""

    name: str
    config: PipelineConfig
    vocab_size: int

    @property
    def byte_level(self) -> bool:
        return any(spec.type == "ByteLevel" for spec in self.config.pre_tokenizers)


def custom_config(model: str, pre_tokenizer: str, normalizer: str) -> PipelineConfig:
    """A full pipeline from three menu choices (see the module docstring for the conventions)."""
    if model not in MODELS:
        raise PipelineConfigError(f"Unknown model {model!r}; choose one of {', '.join(MODELS)}.")
    if pre_tokenizer not in PRE_TOKENIZER_CHOICES:
        raise PipelineConfigError(f"Unknown pre-tokenizer {pre_tokenizer!r}; choose one of {', '.join(PRE_TOKENIZER_CHOICES)}.")
    if normalizer not in NORMALIZER_CHOICES:
        raise PipelineConfigError(f"Unknown normalizer {normalizer!r}; choose one of {', '.join(NORMALIZER_CHOICES)}.")
    if model == "SentencePiece":
        return sentencepiece_config()
    byte_level = pre_tokenizer == "ByteLevel"
    # Byte-level BPE can spell any text from its 256 byte symbols; everything else may meet an unseen character.
    needs_unk = not (byte_level and model == "BPE")
    return PipelineConfig(
        normalizers=NORMALIZER_CHOICES[normalizer],
        pre_tokenizers=PRE_TOKENIZER_CHOICES[pre_tokenizer],
        model=model,
        special_tokens=(UNK_TOKEN,) if needs_unk else (),
        unk_token=UNK_TOKEN if needs_unk else None,
        byte_alphabet=byte_level and model != "WordLevel",
        continuing_subword_prefix="##" if model == "WordPiece" else None,
        scoring="frequency",  # what HF's WordPieceTrainer really does (ignored by the other models)
        post_processor="byte_level" if byte_level else "none",
    )


def configuration_name(position: int, choice: str, model: str, vocab_size: int) -> str:
    """The row name tables and charts use: ``'1 · GPT-2-like byte-level BPE · 2,000'``.

    >>> configuration_name(0, "bert", "WordPiece", 2000), configuration_name(2, "custom", "Unigram", 500)
    ('1 · BERT-like WordPiece · 2,000', '3 · custom Unigram · 500')
    """
    label = TRAIN_PRESETS[choice].label if choice in TRAIN_PRESETS else f"custom {model}"
    return f"{position + 1} · {label} · {vocab_size:,}"


def download_file_name(name: str, what: str) -> str:
    """A download's file name saying what it holds: the tokenizer's name made safe for a file system, then ``what``.

    >>> download_file_name("1 · GPT-2-like byte-level BPE · 1,000", "transformers.zip")
    '1-gpt-2-like-byte-level-bpe-1000-transformers.zip'
    >>> download_file_name("../../etc/passwd", "transformers.zip"), download_file_name("東京", "transformers.zip")
    ('etc-passwd-transformers.zip', 'tokenizer-transformers.zip')
    """
    import re

    slug = re.sub(r"[^a-z0-9]+", "-", name.lower().replace(",", "")).strip("-")[:60].strip("-") or "tokenizer"
    return f"{slug}-{what}"


# ---------------------------------------------------------------------- evaluation with the literature's metrics
def _check_tokenizers(tokenizers: Mapping[str, Any]) -> None:
    if not tokenizers:
        raise TokvizError("Give at least one tokenizer to compare.")
    if len(tokenizers) > MAX_COMPARED:
        raise TokvizError(f"A comparison takes at most {MAX_COMPARED} tokenizers; {len(tokenizers)} were given.")


@dataclass(frozen=True, slots=True)
class Measurement:
    """Every tokenizer of a comparison measured once: what every table and chart of the comparison reads.

    ``metrics`` maps a name to its record on the evaluation text (:func:`tokviz.metrics.measure`);
    ``sentence_tokens`` maps it to the tokens of each sentence of the parallel sample, per language
    (empty when the comparison skips the sample).
    """

    metrics: dict[str, CompressionMetrics]
    sentence_tokens: dict[str, dict[str, list[int]]]
    failures: dict[str, str] = field(default_factory=dict)  # name -> why it was not measured (``keep_going``)


def measure_tokenizers(
    tokenizers: Mapping[str, Any], texts: str | Sequence[str], *, parallel: Mapping[str, Sequence[str]] | bool = True,
    keep_going: bool = False,
) -> Measurement:
    """Encode the evaluation texts and the parallel sample once per tokenizer, truncation and padding off.

    ``keep_going=True`` (the Compare page, where tokenizers are uploaded): each tokenizer's user patterns share
    1/n of the request's time budget (:data:`tokviz.limits.PATTERN_REQUEST_BUDGET_SECONDS`), and a tokenizer whose
    measuring raises a ``TokvizError`` (a pattern past its time limit) is left out with its sentence in
    ``failures``; the others are measured. Without it the error is raised.
    """
    from contextlib import nullcontext

    from tokviz import limits
    from tokviz.literature_metrics import parallel_sample, token_counts_by_sentence
    from tokviz.patterns import time_budget

    _check_tokenizers(tokenizers)
    sample = None if parallel is False else parallel_sample() if parallel is True else parallel
    metrics: dict[str, CompressionMetrics] = {}
    sentence_tokens: dict[str, dict[str, list[int]]] = {}
    failures: dict[str, str] = {}
    for name, tokenizer in tokenizers.items():
        try:
            with time_budget(limits.PATTERN_REQUEST_BUDGET_SECONDS / len(tokenizers)) if keep_going else nullcontext():
                record = measure(tokenizer, texts)
                counts = None if sample is None else token_counts_by_sentence(tokenizer, sample)
        except TokvizError as error:
            if not keep_going:
                raise
            failures[str(name)] = str(error)
            continue
        metrics[str(name)] = record
        if counts is not None:
            sentence_tokens[str(name)] = counts
    return Measurement(metrics, sentence_tokens, failures)


def metrics_frame(measurement: Measurement) -> "ComparisonFrame":
    """One row per tokenizer, one column per metric of :data:`tokviz.literature_metrics.METRICS` (see :func:`evaluate`)."""
    from tokviz.literature_metrics import METRICS, mean_parity, metric_values, parity_by_language

    rows = []
    for name, record in measurement.metrics.items():
        row: dict[str, Any] = {"tokenizer": name, "vocab_size": record.vocab_size, "tokens": record.tokens, "words": record.words}
        row.update(metric_values(record))
        if name in measurement.sentence_tokens:
            row["parity"] = mean_parity(parity_by_language(measurement.sentence_tokens[name]))
        rows.append(row)
    frame = ComparisonFrame(pd.DataFrame(rows).set_index("tokenizer"))
    frame.attrs["metrics"] = {key: info for key, info in METRICS.items() if key in frame.columns}
    return frame


def language_frame(measurement: Measurement) -> pd.DataFrame:
    """Tokens for the whole parallel sample in each language: rows tokenizers, columns language codes."""
    data = {name: {language: sum(counts) for language, counts in per_language.items()}
            for name, per_language in measurement.sentence_tokens.items()}
    frame = pd.DataFrame.from_dict(data, orient="index")
    frame.index.name = "tokenizer"
    return frame


def evaluate(
    tokenizers: Mapping[str, Any],
    texts: Sequence[str],
    *,
    parallel: Mapping[str, Sequence[str]] | bool = True,
) -> pd.DataFrame:
    """One row per tokenizer, one column per metric of :data:`tokviz.literature_metrics.METRICS`.

    Columns: ``vocab_size``, ``tokens``, ``words``, then fertility, continued_words,
    characters_per_token, bytes_per_token, unknown_rate, vocabulary_used, renyi_efficiency,
    renyi_efficiency_observed and (unless ``parallel=False``) parity, measured on the shipped parallel
    sample (or the ``{language: sentences}`` given, English under ``"en"``). Tokenizers are measured
    without truncation or padding (:func:`tokviz.metrics.measuring_tokenizer`). The frame renders in
    Jupyter with each metric's definition and source and the best value of each column in bold
    (its ``_repr_html_``); ``frame.attrs["metrics"]`` holds the definitions.
    """
    return metrics_frame(measure_tokenizers(tokenizers, texts, parallel=parallel))


def tokens_per_language(
    tokenizers: Mapping[str, Any], sample: Mapping[str, Sequence[str]] | None = None
) -> pd.DataFrame:
    """Tokens for the whole parallel sample in each language: rows tokenizers, columns language codes."""
    from tokviz.literature_metrics import token_counts_by_sentence

    _check_tokenizers(tokenizers)
    return language_frame(Measurement({}, {str(name): token_counts_by_sentence(tokenizer, sample) for name, tokenizer in tokenizers.items()}))


def parity_table(tokenizers: Mapping[str, Any], sample: Mapping[str, Sequence[str]] | None = None) -> pd.DataFrame:
    """Petrov et al.'s premium per language (English = 1.0): rows tokenizers, columns language codes."""
    from tokviz.literature_metrics import parity_by_language, token_counts_by_sentence

    _check_tokenizers(tokenizers)
    data = {name: parity_by_language(token_counts_by_sentence(tokenizer, sample)) for name, tokenizer in tokenizers.items()}
    frame = pd.DataFrame.from_dict(data, orient="index")
    frame.index.name = "tokenizer"
    return frame


def best_tokenizers(frame: pd.DataFrame) -> dict[str, list[str]]:
    """Per metric column, the tokenizer(s) with the best value (ties all kept).

    >>> import pandas as pd
    >>> best_tokenizers(pd.DataFrame({"fertility": [1.5, 1.2], "parity": [1.1, 0.8]}, index=["a", "b"]))
    {'fertility': ['b'], 'parity': ['a']}
    """
    from tokviz.literature_metrics import METRICS

    best: dict[str, list[str]] = {}
    for key, info in METRICS.items():
        if key not in frame.columns or frame.empty:
            continue
        values = frame[key].astype(float)
        score = -values if info.better == "lower" else -(values - 1.0).abs() if info.better == "closer to 1" else values
        top = score.max()
        best[key] = [str(name) for name, value in score.items() if abs(value - top) <= 1e-12]
    return best


class ComparisonFrame(pd.DataFrame):
    """The frame :func:`evaluate` returns: a DataFrame whose notebook view adds each metric's
    definition and source and marks the best value of each column (see :mod:`tokviz.viz.notebook`)."""

    @property
    def _constructor(self) -> type:
        return pd.DataFrame  # slices and arithmetic give plain frames

    # Its views are registered by tokviz.viz (viz.notebook and viz.choose), a layer above: this one never imports it.
    def _repr_html_(self) -> str | None:  # Jupyter hook
        from tokviz._views import html_view

        return html_view(self)

    def figure(self, metric: str | None = None, *, presentation: bool = False) -> Any:
        """The plotly chart of one metric across tokenizers (best marked), or of every metric when None."""
        from tokviz._views import figure_view

        if metric is not None and metric not in self.columns:
            raise TokvizError(f"No metric {metric!r} in this comparison; choose one of {', '.join(map(str, self.columns))}.")
        return figure_view(self, metric, presentation=presentation)
