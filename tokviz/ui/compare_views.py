"""Compare page widgets: one configuration form per column (bound to the workspace) and the
compression curves, cached per training."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import streamlit as st

from tokviz.compare import Configuration
from tokviz.ui.workspace import bind
from tokviz.presets import SCORING_LABELS
from tokviz.ui.widgets import OPTION_HELP
from tokviz.workspace import CompareEntry, CompareState, TrainingRequest

#: The preset a configuration added by the count radio starts from.
NEW_ENTRY_PRESETS = ("gpt2", "bert", "t5", "char_bpe")


def configuration_count(compare: CompareState) -> int:
    """The "How many configurations" radio (key ``compare_count``), bound to the workspace's entries."""

    def write(count: int) -> None:
        entries = compare.entries[:count]
        while len(entries) < count:
            entries.append(CompareEntry(NEW_ENTRY_PRESETS[len(entries)]))
        compare.entries = entries

    return st.radio("How many configurations", [2, 3, 4], horizontal=True, key="compare_count",
                    on_change=bind("compare_count", lambda: len(compare.entries), write))


def configuration_form(compare: CompareState, position: int) -> Configuration:
    """One configuration: a preset, or model × pre-tokenizer × normalizer with trainer options; and a vocab size.

    Keys are ``compare_preset_{i}``, ``compare_model_{i}``, ``compare_pre_{i}``, ``compare_norm_{i}``,
    ``compare_scoring_{i}``, ``compare_min_frequency_{i}`` and ``compare_vocab_{i}``.
    """
    from tokviz.compare import NORMALIZER_CHOICES, PRE_TOKENIZER_CHOICES, configuration_name, custom_config
    from tokviz.limits import MAX_VOCAB_SIZE
    from tokviz.pipeline_config import MODELS
    from tokviz.presets import PRESETS

    entry = compare.entries[position]

    def field(name: str, key: str) -> Any:
        def write(value: Any) -> None:
            setattr(entry, name, value)

        return bind(key, lambda: getattr(entry, name), write)

    choice = st.selectbox(
        f"Configuration {position + 1}", [*PRESETS, "custom"], key=f"compare_preset_{position}", on_change=field("choice", f"compare_preset_{position}"),
        format_func=lambda key: PRESETS[key].label if key in PRESETS else "Custom: model × pre-tokenizer × normalizer",
    )
    if choice == "custom":
        model = st.selectbox("Model", MODELS, key=f"compare_model_{position}", on_change=field("model", f"compare_model_{position}"))
        pre_tokenizer = st.selectbox("Pre-tokenizer", list(PRE_TOKENIZER_CHOICES), key=f"compare_pre_{position}", on_change=field("pre_tokenizer", f"compare_pre_{position}"))
        normalizer = st.selectbox("Normalizer", list(NORMALIZER_CHOICES), key=f"compare_norm_{position}", on_change=field("normalizer", f"compare_norm_{position}"))
        config = custom_config(model, pre_tokenizer, normalizer)
        if model == "WordPiece":
            scoring = st.radio("Scoring", ["frequency", "likelihood"], key=f"compare_scoring_{position}", on_change=field("scoring", f"compare_scoring_{position}"),
                               format_func=SCORING_LABELS.get, help="HF scoring: the pair count (HF tokenizers). Course scoring: the HF course's likelihood.")
            config = replace(config, scoring=scoring)
        if model != "Unigram":
            label, help_text = OPTION_HELP["min_frequency"]
            minimum = st.number_input(label, min_value=0, step=1, key=f"compare_min_frequency_{position}", on_change=field("min_frequency", f"compare_min_frequency_{position}"), help=help_text)
            config = replace(config, min_frequency=int(minimum))
    else:
        config = PRESETS[choice].build()
        st.caption(PRESETS[choice].summary)
    vocab_size = st.number_input("Vocab size", min_value=1, max_value=MAX_VOCAB_SIZE, step=100, key=f"compare_vocab_{position}", on_change=field("vocab", f"compare_vocab_{position}"))
    return Configuration(configuration_name(position, choice, config.model, int(vocab_size)), config, int(vocab_size))


@st.cache_resource(max_entries=32, show_spinner=False)
def compression_curve_cached(request: TrainingRequest, text_key: str, _history: Any, _text: str, points: int = 8) -> Any:
    """Tokens per word and bytes per token at ``points`` vocab sizes of one training, on one text (by hash).

    The models come from ``history.model_at(k)`` (no retraining) and are not kept: only the
    curve is, so revisiting the page draws it at once.
    """
    from tokviz.metrics import vocab_size_curve
    from tokviz.pipeline_config import tokenizer_with_model
    from tokviz.viz.charts import evenly_spaced_sizes

    config = request.config
    sizes = evenly_spaced_sizes(_history.min_vocab_size, _history.max_vocab_size, points)
    return vocab_size_curve(lambda size: tokenizer_with_model(config, _history.model_at(size)), sizes, _text, config.unk_token)
