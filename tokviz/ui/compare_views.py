"""Compare page widgets: one configuration form per column (bound to the workspace) and the
compression curves, cached per training."""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any

import streamlit as st

from tokviz.compare import Configuration
from tokviz.ui.workspace import bind
from tokviz.presets import SCORING_LABELS, preset_vocab
from tokviz.ui.widgets import OPTION_HELP
from tokviz.workspace import CompareEntry, CompareState, TrainingRequest

#: The preset a configuration added by the count radio starts from.
NEW_ENTRY_PRESETS = ("gpt2", "bert", "t5", "char_bpe")


def configuration_count(compare: CompareState) -> int:
    """The "How many configurations" radio (key ``compare_count``), bound to the workspace's entries."""

    def write(count: int) -> None:
        entries = compare.entries[:count]
        while len(entries) < count:
            entries.append(CompareEntry(NEW_ENTRY_PRESETS[len(entries)], vocab=preset_vocab(NEW_ENTRY_PRESETS[len(entries)])))
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
    from tokviz.presets import TRAIN_PRESETS as PRESETS  # every preset Train offers, SentencePiece's included

    entry = compare.entries[position]

    def field(name: str, key: str) -> Any:
        def write(value: Any) -> None:
            if name == "choice" and entry.vocab == preset_vocab(entry.choice):  # the old preset's start: take the new one's
                entry.vocab = preset_vocab(value)
            setattr(entry, name, value)

        return bind(key, lambda: getattr(entry, name), write)

    choice = st.selectbox(
        f"Configuration {position + 1}", [*PRESETS, "custom"], key=f"compare_preset_{position}", on_change=field("choice", f"compare_preset_{position}"),
        format_func=lambda key: PRESETS[key].label if key in PRESETS else "Custom: model × pre-tokenizer × normalizer",
    )
    if choice == "custom":
        model = st.selectbox("Model", MODELS, key=f"compare_model_{position}", on_change=field("model", f"compare_model_{position}"))
        if model == "SentencePiece":  # trains on raw lines with its own rule: the two menus below do not apply
            pre_tokenizer, normalizer = entry.pre_tokenizer, entry.normalizer
            st.caption("SentencePiece as `spm_train` trains by default: unigram, nmt_nfkc normalization, on raw lines "
                       "(no pre-tokenizer). For SentencePiece BPE pick the Llama-like preset; Train's Custom form has every option.")
        else:
            pre_tokenizer = st.selectbox("Pre-tokenizer", list(PRE_TOKENIZER_CHOICES), key=f"compare_pre_{position}", on_change=field("pre_tokenizer", f"compare_pre_{position}"))
            normalizer = st.selectbox("Normalizer", list(NORMALIZER_CHOICES), key=f"compare_norm_{position}", on_change=field("normalizer", f"compare_norm_{position}"))
        config = custom_config(model, pre_tokenizer, normalizer)
        if model == "WordPiece":
            scoring = st.radio("Scoring", ["frequency", "likelihood"], key=f"compare_scoring_{position}", on_change=field("scoring", f"compare_scoring_{position}"),
                               format_func=SCORING_LABELS.get, help="HF scoring: the pair count (HF tokenizers). Course scoring: the HF course's likelihood.")
            config = replace(config, scoring=scoring)
        if model not in ("Unigram", "SentencePiece"):  # neither trainer has a minimum count
            label, help_text = OPTION_HELP["min_frequency"]
            minimum = st.number_input(label, min_value=0, step=1, key=f"compare_min_frequency_{position}", on_change=field("min_frequency", f"compare_min_frequency_{position}"), help=help_text)
            config = replace(config, min_frequency=int(minimum))
    else:
        config = PRESETS[choice].build()
        st.caption(PRESETS[choice].summary)
    vocab_size = st.number_input("Vocab size", min_value=1, max_value=MAX_VOCAB_SIZE, step=100, key=f"compare_vocab_{position}", on_change=field("vocab", f"compare_vocab_{position}"))
    return Configuration(configuration_name(position, choice, config.model, int(vocab_size)), config, int(vocab_size))


@st.cache_resource(max_entries=32, show_spinner=False)
def compression_curve_cached(request: TrainingRequest, text_key: str, _history: Any, _texts: tuple[str, ...], points: int = 8) -> Any:
    """Tokens per word and bytes per token at ``points`` vocab sizes of one training, on one text (by hash).

    The models come from ``history.model_at(k)`` (no retraining) and are not kept: only the
    curve is, so revisiting the page draws it at once.
    """
    from tokviz.metrics import vocab_size_curve
    from tokviz.pipeline_config import tokenizer_with_model
    from tokviz.viz.charts import evenly_spaced_sizes

    config = request.config
    sizes = evenly_spaced_sizes(_history.min_vocab_size, _history.max_vocab_size, points)
    return vocab_size_curve(lambda size: tokenizer_with_model(config, _history.model_at(size)), sizes, _texts)


@dataclass(frozen=True, slots=True)
class Compared:
    """One tokenizer of the comparison: a trained configuration or an uploaded file, as the page shows it.

    ``tokenizer`` is the one measured (truncation and padding off, :func:`tokviz.metrics.measuring_tokenizer`);
    ``original`` is the tokenizer as trained or uploaded, which the download hands on unchanged.
    """

    name: str
    tokenizer: Any
    original: Any
    unk_id: int | None
    byte_level: bool
    key: str  # names the tokenizer in caches
    special_tokens: tuple[str, ...] = ()
    measuring_note: str = ""  # what measuring turned off ("truncation to 32 tokens"), empty when nothing


def _measuring_note(tokenizer: Any) -> str:
    """``'truncation to 32 tokens and padding'``: what :func:`tokviz.metrics.measuring_tokenizer` turns off."""
    parts = []
    truncation = getattr(tokenizer, "truncation", None)
    if truncation:
        parts.append(f"truncation to {truncation.get('max_length', '?'):,} tokens" if isinstance(truncation.get("max_length"), int) else "truncation")
    if getattr(tokenizer, "padding", None):
        parts.append("padding")
    return " and ".join(parts)


def compared(trained: list[tuple[Any, Any, TrainingRequest, Any]], files: list[Any]) -> list[Compared]:
    """The trained configurations (configuration, tokenizer, request, history) and the uploaded files, in page order."""
    from tokviz.metrics import measuring_tokenizer, unknown_token_id

    entries = [
        Compared(configuration.name, tokenizer, tokenizer, unknown_token_id(tokenizer), configuration.byte_level,
                 f"trained:{hash(request)}:{tokenizer.get_vocab_size()}", tuple(configuration.config.special_tokens))
        for configuration, tokenizer, request, _ in trained
    ]
    for item in files:
        specials = tuple(token.content for token in item.tokenizer.get_added_tokens_decoder().values() if token.special) \
            if hasattr(item.tokenizer, "get_added_tokens_decoder") else ()
        entries.append(Compared(item.name, measuring_tokenizer(item.tokenizer), item.tokenizer, unknown_token_id(item.tokenizer),
                                item.byte_level, item.key, specials, _measuring_note(item.tokenizer)))
    return entries


def measuring_caption(entries: list[Compared]) -> str:
    """The page's one line on how tokenizers are measured, naming what was turned off for which file."""
    turned_off = [f"{entry.name} ({entry.measuring_note})" for entry in entries if entry.measuring_note]
    caption = ("Every tokenizer is measured as a tokenizer, without truncation or padding, and without the special tokens "
               "a post-processor adds.")
    if turned_off:
        caption += " Turned off for measuring: " + "; ".join(turned_off) + " (the download keeps them)."
    return caption


def compression_curves(trained: list[tuple[Any, Any, TrainingRequest, Any]], text_key: str, texts: tuple[str, ...]) -> dict[str, Any]:
    """Section 5's curve of each trained configuration (cached). One whose user pattern times out on the evaluation
    text is left out (section 4 names it with the sentence): each shares 1/n of the request's pattern budget."""
    from tokviz import limits
    from tokviz.errors import TokvizError
    from tokviz.patterns import time_budget

    curves = {}
    for configuration, _, request, history in trained:
        try:
            with time_budget(limits.PATTERN_REQUEST_BUDGET_SECONDS / len(trained)):
                curves[configuration.name] = compression_curve_cached(request, text_key, _history=history, _texts=texts)
        except TokvizError:
            continue
    return curves


@st.cache_data(max_entries=16, show_spinner="Measuring every tokenizer…")
def measurement_cached(keys: tuple[tuple[str, str], ...], eval_key: str, _tokenizers: dict[str, Any], _texts: tuple[str, ...]) -> Any:
    """``tokviz.compare.measure_tokenizers`` once per (tokenizers, evaluation texts): each text encoded once."""
    from tokviz.compare import measure_tokenizers

    return measure_tokenizers(_tokenizers, _texts, keep_going=True)  # a pattern timing out leaves the others measured


def literature_metrics(entries: list[Compared], measurement: Any, presentation: bool) -> None:
    """The literature's metrics for every tokenizer (one row per metric, best marked), what each measures and where
    it comes from, a chart per metric and the tokens per language of the shipped parallel sample."""
    from tokviz.compare import language_frame, metrics_frame
    from tokviz.literature_metrics import METRICS
    from tokviz.viz.charts import tokenizer_colors
    from tokviz.viz.choose import SHORT_LABELS, literature_table, metrics_figure, tokens_per_language_figure

    st.subheader("Metrics from the literature")
    frame, per_language = metrics_frame(measurement), language_frame(measurement)
    # st.table, not st.dataframe: one column per tokenizer, and its header cells wrap (8 names whole at 1280 px, no scrolling)
    st.table(literature_table(frame))
    st.caption("Best value of each row in green. Parity is measured on the shipped parallel sample (24 sentences in 10 languages); "
               "the other rows on the evaluation text, from the same counts as the table above.")
    with st.expander("What each metric measures, and its source"):
        for key, info in METRICS.items():
            if key in frame.columns:
                st.markdown(f"**{SHORT_LABELS.get(key, info.label)}** — {info.definition} Better: {info.better}. *{info.source}*")
    # Full width, one colour per tokenizer (the page's one mapping): 8 tokenizers stay readable at 1280 px.
    colors = tokenizer_colors(entry.name for entry in entries)
    st.plotly_chart(metrics_figure(frame, presentation=presentation, colors=colors), width="stretch", key="compare_literature_chart")
    st.plotly_chart(tokens_per_language_figure(per_language, presentation=presentation, colors=colors), width="stretch", key="compare_languages_chart")


@st.cache_data(max_entries=32, show_spinner=False)
def _transformers_zip_cached(key: str, _tokenizer: Any) -> bytes:
    """The zip of one compared tokenizer (by its cache key), made once: every button holds its own bytes."""
    from tokviz.export import transformers_zip

    return transformers_zip(_tokenizer)


def transformers_download(entries: list[Compared]) -> None:
    """"Download for transformers": one button per tokenizer of the comparison, each named by it and holding
    its own zip (tokenizer.json, tokenizer_config.json, special_tokens_map.json; ``tokviz.export.transformers_zip``).

    One button per tokenizer, not a chooser and one button: a click right after a change could fetch what the
    button held before the change (the previous tokenizer's zip, or a deferred file already gone).
    """
    from tokviz.compare import download_file_name
    from tokviz.ui.shell import md_escape

    st.caption("Download for transformers: unzip into a folder and load it with `AutoTokenizer.from_pretrained(folder)`. "
               "Uploaded files keep their truncation and padding.")
    # Four to a row while the names fit a quarter of the page at 1280 px; two for longer names, so each stays whole.
    per_row = 4 if max(len(entry.name) for entry in entries) <= 24 else 2
    columns = st.columns(min(len(entries), per_row))
    for index, entry in enumerate(entries):
        columns[index % len(columns)].download_button(
            md_escape(entry.name), _transformers_zip_cached(entry.key, _tokenizer=entry.original),
            file_name=download_file_name(entry.name, "transformers.zip"), mime="application/zip",
            key=f"compare_download_{entry.key}", icon=":material/download:", width="stretch",
            help=md_escape(f"{entry.name}: tokenizer.json, tokenizer_config.json and special_tokens_map.json in a zip"),
        )
