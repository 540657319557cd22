"""tokviz.ui.corpus_input: the session's corpus -- the sample until the text box is edited, an upload's
text when one is in use, the same corpus on every page (the workspace carries it, not the widget)."""

from __future__ import annotations

from streamlit.testing.v1 import AppTest

from tokviz.corpus import corpus_hash
from tokviz.samples import load_sample
from tokviz.ui.corpus_input import active_text
from tokviz.workspace import Workspace


def test_active_text_follows_the_source() -> None:
    workspace = Workspace()
    assert active_text(workspace) == load_sample()
    workspace.corpus.pasted, workspace.corpus.source = "my text", "pasted"
    assert active_text(workspace) == "my text"
    workspace.corpus.source, workspace.corpus.upload_text = "upload", "uploaded text"
    assert active_text(workspace) == "uploaded text"


def _page() -> None:
    import streamlit as st

    from tokviz.ui.corpus_input import corpus_input
    from tokviz.ui.workspace import current

    corpus = corpus_input(current(), key_prefix=st.session_state.get("prefix", "train_"))
    st.session_state["seen"] = (corpus.key, corpus.source, len(corpus.text), corpus.stats.lines)


def test_typing_makes_the_text_the_corpus_of_every_page() -> None:
    app = AppTest.from_function(_page, default_timeout=60).run()
    assert not app.exception
    assert app.text_area(key="train_corpus_text").value == load_sample()
    assert app.session_state["seen"][:2] == (corpus_hash(load_sample()), "the built-in sample")
    text = "low lower lowest\nnew newer newest\n"
    app.text_area(key="train_corpus_text").set_value(text).run()
    assert app.session_state["seen"] == (corpus_hash(text), "your pasted text", len(text), 2)
    app.session_state["prefix"] = "compare_"  # another page's widget: seeded from the workspace
    app.run()
    assert app.text_area(key="compare_corpus_text").value == text
    app.text_area(key="compare_corpus_text").set_value(load_sample()).run()  # back to the sample
    assert app.session_state["_tokviz_workspace"].corpus.source == "sample"
