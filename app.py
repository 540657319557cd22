"""tokviz: a tokenizer playground. Run with ``streamlit run app.py``.

This script is the home page; Streamlit finds the other pages in ``pages/`` by itself.
"""

import streamlit as st

from tokviz.corpus import corpus_stats
from tokviz.samples import DEFAULT_SAMPLE, load_sample
from tokviz.ui.shell import PAGES, metrics_row, page_setup

workspace = page_setup("app.py")
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

st.subheader("Built-in sample corpus")
sample = load_sample()
stats = corpus_stats(sample)
metrics_row({"characters": stats.characters, "UTF-8 bytes": stats.utf8_bytes, "lines": stats.lines, "distinct characters": stats.distinct_characters})
with st.expander(f"{DEFAULT_SAMPLE}: the text", expanded=False):
    st.text(sample)
