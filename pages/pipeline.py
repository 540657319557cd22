"""Pipeline: one text (and an optional second sequence) through every stage of a tokenizer, then its bytes."""

import streamlit as st

from tokviz.errors import TokvizError
from tokviz.inspect import is_byte_level
from tokviz.limits import MAX_RENDERED_TOKENS
from tokviz.metrics import unknown_token_id
from tokviz.viz import pipeline as stages
from tokviz.ui.shell import counted, metrics_row, page_setup, page_title, show_error
from tokviz.ui.tokenizer_choice import tokenizer_choice
from tokviz.ui.workspace import bind
from tokviz.viz.spans import render_token_spans

DEFAULT_TEXT = "Héllo, WÖRLD!  Tokenizers don't split naïvely:\na가 짧 ﬁne 2024"

workspace = page_setup("pages/pipeline.py")
state = workspace.pipeline
page_title(workspace, "pages/pipeline.py", "One text through the pipeline",
           "Normalizer → pre-tokenizer → model → post-processor → decoder, drawn from `Tokenizer.trace`.")

tokenizer, _ = tokenizer_choice(workspace, "pipeline", allow_upload=True)
if tokenizer is None:
    st.stop()


def text_changed(value: str) -> None:
    state.text = None if value == DEFAULT_TEXT else value


def pair_changed(value: str) -> None:
    state.pair = value


text = st.text_area("Text", key="pipeline_text", height=90, max_chars=5000,
                    on_change=bind("pipeline_text", lambda: DEFAULT_TEXT if state.text is None else state.text, text_changed))
pair = st.text_input("Second sequence (optional: a question's answer, a sentence pair)", key="pipeline_pair", max_chars=2000,
                     on_change=bind("pipeline_pair", lambda: state.pair, pair_changed)) or None
byte_level = is_byte_level(tokenizer)

try:
    trace = tokenizer.trace(text, pair)
except TokvizError as error:
    show_error(error)
    st.stop()

for number, sequence in enumerate(trace.sequences):
    name = "" if len(trace.sequences) == 1 else (" · first sequence" if number == 0 else " · second sequence")
    st.header(f"1 · Normalization{name}")
    counts = stages.normalization_counts(sequence)
    if tokenizer.normalizer is None:
        st.caption("This tokenizer has no normalizer: the text goes on unchanged.")
    st.caption(f"{counts['changed']} changed, {counts['removed']} removed, {counts['inserted']} inserted; hover a column for its offsets.")
    st.html(stages.normalization_html(sequence))

    st.header(f"2 · Pre-tokens{name}")
    left, right = st.columns([2, 3])
    left.dataframe(stages.pre_tokens_frame(sequence), hide_index=True, height=260, width="stretch")
    with right:
        st.caption("Pre-tokens over the original text (offsets are original characters)")
        st.html(render_token_spans(sequence.original, stages.pre_token_spans(sequence), byte_level=byte_level, max_tokens=MAX_RENDERED_TOKENS).html)

    st.header(f"3 · Model tokens{name}")
    st.caption(f"{counted(len(sequence.tokens), 'token')} from {type(tokenizer.model).__name__}, before the post-processor adds anything.")
    spans = stages.model_token_spans(sequence, unknown_token_id(tokenizer))
    st.html(render_token_spans(sequence.original, spans, byte_level=byte_level, max_tokens=MAX_RENDERED_TOKENS).html)

st.header("4 · Post-processed encoding")
st.caption("What a model receives: special tokens added, type ids per sequence, masks and word ids.")
st.dataframe(stages.encoding_frame(trace.encoding, byte_level), hide_index=True, height=300, width="stretch")

st.header("5 · Decoded")
for number, sequence in enumerate(trace.sequences):
    st.code(sequence.decoded or " ", language=None)
    if sequence.round_trip:
        st.success("Round trip: decoding the tokens gives back the normalized text exactly.")
    else:
        st.warning(
            "No round trip: the decoded text (above) differs from the normalized text (below) — usually whitespace "
            "the pre-tokenizer dropped, an unknown token, or a decoder that cleans up spaces around punctuation."
        )
        st.code(sequence.normalized or " ", language=None)

st.header("6 · Bytes")
summary = stages.bytes_summary(text)
metrics_row({**summary, "byte-level symbols": len(stages.byte_level_text(text))})
st.caption("Each character, its code point and its UTF-8 bytes; byte-level BPE sees one symbol per byte (space → Ġ, newline → Ċ).")
st.dataframe(stages.bytes_frame(text), hide_index=True, height=300, width="stretch")
st.caption("The text as byte-level symbols")
st.code(stages.byte_level_text(text) or " ", language=None)
