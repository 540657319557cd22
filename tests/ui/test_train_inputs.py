"""tokviz.ui.train_inputs: the Train page's inputs panel and when a training runs -- a small corpus trains as
it changes and the training becomes the page's; one message per problem; the numbers say what they count."""

from __future__ import annotations

from streamlit.testing.v1 import AppTest


def _page() -> None:
    import streamlit as st

    from tokviz.ui.train_inputs import inputs_panel, train_when_asked
    from tokviz.ui.workspace import current

    workspace = current()
    inputs = inputs_panel(workspace)
    st.session_state["asked"] = None if inputs.request is None else (inputs.request.config.model, inputs.request.vocab_size)
    st.session_state["problem"] = train_when_asked(workspace, inputs)
    st.session_state["trained"] = workspace.train.trained


def test_a_small_corpus_trains_as_it_changes_and_becomes_the_pages_training() -> None:
    app = AppTest.from_function(_page, default_timeout=240)
    app.query_params["preset"] = "bert"
    app.query_params["vocab"] = "200"
    app.run()
    assert not app.exception, [str(error.value) for error in app.exception]
    assert app.session_state["asked"] == ("WordPiece", 200) and app.session_state["problem"] is False
    trained = app.session_state["trained"]
    assert trained is not None and (trained.config.model, trained.vocab_size) == ("WordPiece", 200)
    numbers = {metric.label: metric.value for metric in app.metric}
    assert {"characters", "lines", "words (pre-tokenized)", "unique words", "distinct characters"} <= numbers.keys()
    assert numbers["words (pre-tokenized)"] != "—"
    app.text_area(key="corpus_text").set_value("hug hugs hugging pug pun bun\n" * 30).run()
    assert app.session_state["trained"].corpus_key != trained.corpus_key  # the new corpus trained at once


def test_a_problem_is_said_once() -> None:
    app = AppTest.from_function(_page, default_timeout=240)
    app.query_params["preset"] = "bert"
    app.run()
    app.text_area(key="corpus_text").set_value("   \n").run()  # nothing to train on
    assert not app.exception
    assert app.session_state["problem"] is True
    assert len(app.error) == 1 and "empty" in app.error[0].value
