"""tokviz.ui.learn_views: the Learn page's lesson views -- the word-count editor bound to the workspace,
every step of every lesson drawn (with a user word holding HTML), a hidden merge in predict mode."""

from __future__ import annotations

from streamlit.testing.v1 import AppTest

from tokviz.ui.learn_views import _rows_height


def test_tables_grow_with_their_rows_up_to_a_scroll_bar() -> None:
    assert (_rows_height(1, 400), _rows_height(5, 400), _rows_height(100, 400)) == (73, 213, 400)


def _editor() -> None:
    import streamlit as st

    from tokviz.lessons import CLASSIC_WORD_COUNTS
    from tokviz.ui.learn_views import learn_corpus_editor
    from tokviz.ui.workspace import current

    st.session_state["counts"] = learn_corpus_editor(current().learn, CLASSIC_WORD_COUNTS)


def test_the_word_counts_edited_as_text_reach_the_workspace() -> None:
    app = AppTest.from_function(_editor, default_timeout=60).run()
    assert app.session_state["counts"] == {"hug": 10, "pug": 5, "pun": 12, "bun": 4, "hugs": 5}
    app.radio(key="learn_counts_mode").set_value("text").run()
    app.text_area(key="learn_counts_text").set_value("low 5\nlower 2\n").run()
    assert app.session_state["counts"] == {"low": 5, "lower": 2}
    assert app.session_state["_tokviz_workspace"].learn.word_counts == {"low": 5, "lower": 2}
    app.text_area(key="learn_counts_text").set_value("low five\n").run()
    assert app.session_state["counts"] is None and len(app.error) == 1  # said, and the workspace keeps the last good table
    assert app.session_state["_tokviz_workspace"].learn.word_counts == {"low": 5, "lower": 2}


def _lessons() -> None:
    import streamlit as st

    from tokviz.lessons import CLASSIC_WORD_COUNTS, bpe_lesson, byte_level_lesson, normalization_lesson, unigram_lesson, wordpiece_lesson
    from tokviz.ui.learn_views import learn_step_view

    words = {**CLASSIC_WORD_COUNTS, "<b>*x*</b>": 2}  # a user's word with HTML and Markdown in it
    for lesson in (bpe_lesson(words), wordpiece_lesson(words), unigram_lesson(CLASSIC_WORD_COUNTS), byte_level_lesson(), normalization_lesson()):
        for number, step in enumerate(lesson.steps):
            learn_step_view(step, predict=st.session_state.get("predict", False), step_key=f"{lesson.key}:{number}")


def test_every_step_of_every_lesson_draws() -> None:
    app = AppTest.from_function(_lessons, default_timeout=120).run()
    assert not app.exception, [str(error.value) for error in app.exception]
    assert not app.error
    titles = [header.value for header in app.subheader]
    assert len(titles) > 20 and not any("Merge #1: which pair is merged next?" == title for title in titles)
    app.session_state["predict"] = True
    app.run()
    assert not app.exception
    assert "Merge #1: which pair is merged next?" in [header.value for header in app.subheader]
