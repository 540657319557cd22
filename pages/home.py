"""Home: what tokviz is, what each page does, and the built-in sample corpus."""

import streamlit as st

from tokviz.corpus import corpus_stats
from tokviz.samples import DEFAULT_SAMPLE, load_sample
from tokviz.ui import PAGES, require_app_navigation

require_app_navigation()
st.title("tokviz — a tokenizer playground")
st.markdown(
    "Train BPE, WordPiece, Unigram and WordLevel tokenizers on your own text and watch what they learn: "
    "every merge, every score, every pipeline stage. The core mirrors Hugging Face `tokenizers`, "
    "so what you build here carries over to the real library."
)

st.subheader("Pages")
for page in PAGES[1:]:
    st.page_link(page.path, label=page.title, icon=page.icon)
    st.caption(page.summary)
if len(PAGES) == 1:
    st.info("The playground pages are being built; this release ships the home view and the tokviz core library.")

st.subheader("Built-in sample corpus")
sample = load_sample()
stats = corpus_stats(sample)
for column, (label, value) in zip(
    st.columns(4),
    [
        ("characters", stats.characters),
        ("UTF-8 bytes", stats.utf8_bytes),
        ("lines", stats.lines),
        ("distinct characters", stats.distinct_characters),
    ],
):
    column.metric(label, f"{value:,}")
with st.expander(f"{DEFAULT_SAMPLE}: the text", expanded=False):
    st.text(sample)
