"""The corpus input (tokviz.ui.corpus_input): the session's corpus -- the sample until the text box is
edited, an upload's text when one is in use, the same corpus on every page (the workspace carries it, not
the widget) -- and a large paste kept by the page, not by the text box.

A text box holding megabytes costs the browser seconds at every change of the page (it re-lays out and
re-scans the whole value) and its value travels with every rerun; the page measured 33-77 s from
applying a 5 MB paste to the end of the run with the text kept in the box, 2.6-5.3 s without it.
These checks would catch the text box coming back with the large text in it.
"""

from __future__ import annotations

from streamlit.testing.v1 import AppTest

from tests.app_pages import open_page
from tokviz.corpus import corpus_hash
from tokviz.samples import load_sample
from tokviz.ui.corpus_input import TEXT_BOX_MAX_CHARS, active_text
from tokviz.workspace import Workspace

LARGE = ("the quick brown fox jumps over the lazy dog\n" * (TEXT_BOX_MAX_CHARS // 44 + 10))


def keys(app: AppTest, kind: str) -> set[str]:
    return {element.key for element in app.get(kind)}


def test_a_large_paste_leaves_the_text_box_and_is_the_corpus() -> None:
    app = open_page("pages/train.py", query={})
    app.text_area(key="corpus_text").set_value(LARGE).run()
    assert not app.exception
    assert "corpus_text" not in keys(app, "text_area")  # the browser is not handed the text back
    assert app.session_state["_tokviz_workspace"].corpus.pasted == LARGE
    assert next(item.value for item in app.metric if item.label == "characters") == f"{len(LARGE):,}"
    assert any(f"Using your pasted text ({len(LARGE):,} characters)" in caption.value for caption in app.caption)

    app.button(key="corpus_edit_text").click().run()  # asked for: the text box shows it again
    assert app.text_area(key="corpus_text").value == LARGE
    app.text_area(key="corpus_text").set_value(LARGE + "one more line\n").run()  # applying hides it again
    assert "corpus_text" not in keys(app, "text_area")

    app.button(key="corpus_use_sample").click().run()
    from tokviz.samples import load_sample

    assert app.text_area(key="corpus_text").value == load_sample()
    assert app.session_state["_tokviz_workspace"].corpus.source == "sample"


def test_a_small_paste_stays_in_the_text_box() -> None:
    app = open_page("pages/train.py", query={})
    app.text_area(key="corpus_text").set_value("a small corpus\n" * 40).run()
    assert app.text_area(key="corpus_text").value == "a small corpus\n" * 40


def test_compare_keeps_a_large_paste_the_same_way() -> None:
    app = open_page("pages/compare.py", query={})
    app.text_area(key="compare_corpus_text").set_value(LARGE).run()
    assert not app.exception
    assert "compare_corpus_text" not in keys(app, "text_area")
    assert "compare_corpus_edit_text" in keys(app, "button")


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


def test_letting_a_large_paste_go_gives_memory_back(monkeypatch) -> None:
    import tokviz.ui.corpus_input as corpus_input

    calls = []
    monkeypatch.setattr(corpus_input, "give_back_memory", lambda: calls.append(1))
    app = open_page("pages/train.py", query={})
    app.text_area(key="corpus_text").set_value("a small corpus\n" * 40).run()
    assert calls == []  # a small text: nothing to give back
    app.text_area(key="corpus_text").set_value(LARGE).run()
    app.button(key="corpus_use_sample").click().run()
    assert calls == [1]
