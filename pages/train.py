"""Train: corpus → pipeline → train → vocab slider → token spans, merges, scores and charts."""

import streamlit as st

from tokviz import ui
from tokviz.corpus import corpus_hash
from tokviz.errors import EmptyCorpusError, TokvizError
from tokviz.limits import (
    check_training_request,
    LIVE_TRAINING_MAX_CHARS,
    MAX_TEST_TEXT_CHARS,
    MAX_VOCAB_SIZE,
    check_test_text,
    check_vocab_request,
)
from tokviz.patterns import time_budget
from tokviz.pipeline_config import build_tokenizer, from_query_params, to_form_state, to_query_params, tokenizer_with_model
from tokviz.presets import DEFAULT_PRESET, PRESETS, preset_key
from tokviz.samples import load_sample

ui.require_app_navigation()
st.title("Train a tokenizer")
st.caption("Paste or upload a corpus, pick a pipeline, train, then drag the vocab slider: nothing is retrained.")

if "preset" not in st.session_state:  # first visit: open what the link describes, else the default preset
    config, vocab = PRESETS[DEFAULT_PRESET].build(), 1000
    try:
        if st.query_params:
            config, vocab = from_query_params(st.query_params.to_dict(), default_vocab=vocab)
        check_vocab_request(vocab)
    except TokvizError as error:
        ui.show_error(error)
    vocab = min(vocab, MAX_VOCAB_SIZE)  # a link above the limit opens at the limit, with the message above
    st.session_state.update(preset=preset_key(config) or "custom", target_vocab=vocab, **to_form_state(config))

st.header("1 · Corpus")
sample = load_sample()
try:
    corpus = ui.corpus_input(sample)
except TokvizError as error:
    ui.show_error(error)
    corpus = ui.CorpusChoice("", "unreadable upload")
if corpus.notice:
    st.warning(ui.md_escape(corpus.notice))
corpus_key = corpus_hash(corpus.text)
split, stats = ui.corpus_overview(corpus_key, _text=corpus.text)
stats_slot = st.container()

st.header("2 · Pipeline")
choice = st.selectbox("Pipeline", [*PRESETS, "custom"], key="preset", format_func=lambda key: PRESETS[key].label if key in PRESETS else "Custom…")
config = None
try:
    if choice == "custom":
        config = ui.custom_pipeline_form()
    else:
        config = PRESETS[choice].build()
        st.caption(PRESETS[choice].summary)
        st.session_state.update(to_form_state(config))  # Custom starts from the last preset
    ui.pipeline_summary(config)
    with time_budget():  # a user pattern slow on every line stops here, not hours later
        ui.pipeline_preview(build_tokenizer(config), split.train_lines[0] if split.train_lines else "", ui.is_byte_level(config))
        words = ui.word_counts_cached(corpus_key, config.normalizers, config.pre_tokenizers, split.train_lines)
except TokvizError as error:
    ui.show_error(error)
    config, words = None, None
with stats_slot:
    ui.metrics_row(
        {
            "characters": stats.characters,
            "lines": stats.lines,
            "words (pre-tokenized)": sum(words.values()) if words is not None else "—",
            "unique words": len(words) if words is not None else "—",
            "distinct characters": stats.distinct_characters,
        }
    )
    st.caption(f"Source: {ui.md_escape(corpus.source)}; {len(split.test_lines)} held-out lines are kept for testing.")

st.header("3 · Train")
target_vocab = st.number_input("Target vocab size", min_value=1, max_value=MAX_VOCAB_SIZE, step=100, key="target_vocab")
clicked = st.button("Train", key="train", type="primary")
if config is not None and (clicked or len(corpus.text) <= LIVE_TRAINING_MAX_CHARS):
    request = (corpus_key, config, int(target_vocab))
    try:
        if not split.train_lines:
            raise EmptyCorpusError("The corpus is empty: paste some text or upload a file, then train.")
        check_training_request(len(corpus.text), words)  # in the corpus's own figures (ui.train_cached checks too)
        history = ui.train_with_progress(request, split.train_lines)
        ui.remember_training(request, history, split.train_lines, split.test_lines)
    except TokvizError as error:
        ui.show_error(error)
    link = to_query_params(config, int(target_vocab), preset=preset_key(config))
    if st.query_params.to_dict() != link:  # keep the URL a link to this pipeline
        st.query_params.from_dict(link)

run = st.session_state.get("trained")
if run is None:
    st.info("Press **Train** to train a tokenizer on this corpus.")
    st.stop()
if config is not None and run.key != (corpus_key, config, int(target_vocab)):
    st.warning("The corpus or the settings changed since this tokenizer was trained: press **Train** to train again.")
history, config = run.history, run.config
st.caption(f"Trained {history.algorithm} in {history.seconds:.2f} s (cached: revisiting is instant). Stopped because {history.stop_reason}.")

st.header("4 · Vocab size")
size = ui.vocab_slider(history, run.key)
tokenizer = tokenizer_with_model(config, ui.model_at_cached(*run.key, size, _history=history))

st.header("5 · Tokens of the test text")
try:
    check_test_text(len(st.session_state.get("test_text", "")))
except TokvizError as error:  # cut before the text area is drawn, so the cut text is what it shows
    ui.show_error(error)
    st.session_state["test_text"] = st.session_state["test_text"][:MAX_TEST_TEXT_CHARS]
views = {"": lambda: ui.token_view(tokenizer, config), **ui.result_views(run, tokenizer, size)}
for place, view in zip([st.container(), *st.tabs(list(views)[1:])], views.values()):
    with place:
        try:
            view()
        except TokvizError as error:  # one view failing leaves the others working
            ui.show_error(error)
