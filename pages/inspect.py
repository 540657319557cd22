"""Inspect: open a tokenizer.json (or one trained here) — summary, vocab browser, BPE merges and trees, token spans."""

import pandas as pd
import streamlit as st

from tokviz import inspect as inspect_tok
from tokviz.errors import TokvizError
from tokviz.ui import downloads
from tokviz.ui.shell import md_escape, metrics_row, page_setup, show_error
from tokviz.ui.tokenizer_choice import tokenizer_choice, vocab_frame_cached
from tokviz.ui.tokenizer_files import training_file
from tokviz.ui.widgets import spans_block
from tokviz.ui.workspace import bind

workspace = page_setup("pages/inspect.py")
state = workspace.inspect
st.title("Inspect a tokenizer")
source = st.radio("Inspect", ["a tokenizer", "a training"], horizontal=True, key="inspect_source",
                  captions=["tokenizer.json, .model, tiktoken, vocab.txt or the session's", "history.json from `python -m tokviz train`"])

history = None
if source == "a training":
    opened = training_file("inspect_training_file")
    if opened is None:
        st.stop()
    training, training_key = opened
    history = training.history
    low, high, trained = inspect_tok.training_size_range(history)
    if st.session_state.get("inspect_training_for") != training_key:  # another file: start at its trained size
        st.session_state.update(inspect_training_for=training_key, inspect_training_vocab=trained)
    if low < high:
        size = st.slider("Vocab size", low, high, key="inspect_training_vocab",
                         help="The tokenizer at any size the training went through, derived from its record (no retraining).")
    else:  # one size only (e.g. a vocab asked below the alphabet): a fixed view, no slider
        size = high
        st.caption(f"Vocab size: {high:,} (this training went through no other size).")
    if not training.has_pipeline:
        st.info("This history does not name its pipeline: the model is shown without normalizer or pre-tokenizer.")
    tokenizer, choice_key = training.tokenizer_at(size), f"{training_key}:{size}"
else:
    st.caption("Upload a tokenizer (an HF tokenizer.json, a SentencePiece .model, a tiktoken rank file, a BERT vocab.txt or GPT-2's "
               "vocab.json + merges.txt), or pick the one trained in this session.")
    tokenizer, choice_key = tokenizer_choice(workspace, "inspect", allow_upload=True)
if tokenizer is None:
    st.stop()
byte_level = inspect_tok.is_byte_level(tokenizer)

if history is not None:
    st.header("Training")
    metrics_row(inspect_tok.training_summary(history))
    st.caption(f"Stopped because: {md_escape(history.stop_reason)}")
    views = inspect_tok.training_views(history, size, byte_level)
    for tab, view in zip(st.tabs([view.title for view in views]) if views else (), views):  # no merges: no views
        with tab:
            if view.caption:
                st.caption(md_escape(view.caption))
            if view.table is not None:
                st.dataframe(view.table, hide_index=True, height=320, width="stretch")
            if view.figure is not None:
                st.plotly_chart(view.figure, width="stretch")
summary = inspect_tok.summarize(tokenizer)

st.header("Summary")
metrics_row({"model": summary.model_type, "vocab size": summary.vocab_size, "added tokens": len(summary.added_tokens)})
st.dataframe(pd.DataFrame(summary.rows(), columns=["stage", "component"]), hide_index=True, width="stretch")
downloads.file_downloads(tokenizer, choice_key, "inspect")

st.header("Try it")
DEFAULT_TEXT = "Tokenizers split words into pieces: unbelievably, naïve 東京 a가 2024!"


def text_changed(value: str) -> None:
    state.text = None if value == DEFAULT_TEXT else value


text = st.text_area("Text", key="inspect_text", height=90, max_chars=20_000,
                    on_change=bind("inspect_text", lambda: DEFAULT_TEXT if state.text is None else state.text, text_changed))
try:  # a pattern past its time limit, a normalizer past its growth bound: a sentence, the rest of the page drawn
    spans_block(tokenizer, text, byte_level)
except TokvizError as error:
    show_error(error)

st.header("Vocabulary")
frame = vocab_frame_cached(choice_key, _tokenizer=tokenizer)
present = [kind for kind in inspect_tok.KINDS if (frame["kind"] == kind).any()]
opened = st.session_state.pop("inspect_open_token", None)  # a token the Audit page sent here
if st.session_state.get("inspect_for") != choice_key or opened:  # another tokenizer: its own kinds, its longest word's tree
    st.session_state.update(
        inspect_for=choice_key, vocab_kinds=present, vocab_sort="id", merge_tree_token=opened or inspect_tok.example_word_token(frame)
    )
left, middle, right = st.columns([2, 3, 2])
search = left.text_input("Search tokens (plain text)", key="vocab_search")
kinds = middle.multiselect("Kinds", present, key="vocab_kinds")
has_scores = bool(frame["score"].notna().any())  # only Unigram has scores
sort_columns = ["id", "length", "token"] + (["score"] if has_scores else [])
sort_by = right.selectbox("Sort by", sort_columns, key="vocab_sort")
descending = right.toggle("Descending", key="vocab_descending")
shown = inspect_tok.filter_vocab(frame, search, kinds, sort_by, descending)
st.caption(f"{len(shown):,} of {len(frame):,} tokens. Click a column header to sort the table itself.")
st.dataframe(shown if has_scores else shown.drop(columns="score"), hide_index=True, height=320, width="stretch")

if summary.model_type == "BPE":
    st.header("Merges")
    model = tokenizer.model
    left, right = st.columns([3, 2])
    with left:
        st.caption(f"{len(model.merges):,} merges, numbered in the order they apply (merge #1 first, as on Train)")
        st.dataframe(inspect_tok.merges_frame(model, byte_level), hide_index=True, height=360, width="stretch")
    with right:
        recipes = inspect_tok.merge_recipes(model)
        token = st.text_input("Token (exactly as in the vocabulary, markers included)", key="merge_tree_token")
        if token and model.token_to_id(token) is None:  # typed as shown ('가' for 'ê°Ģ')? use the vocabulary's form
            token = next(iter(frame.loc[frame["shown as"] == token, "token"]), token)
        tree = inspect_tok.merge_tree(model, token, recipes) if token else None
        if tree is None:
            st.info("Type a token from the vocabulary to see the merges that build it.")
        else:
            st.caption(f"Built from {len(tree.leaves())} base symbols")
            st.code(inspect_tok.render_merge_tree(tree, byte_level), language=None)
            with st.expander("As a nested structure"):
                st.json(tree.as_dict())
