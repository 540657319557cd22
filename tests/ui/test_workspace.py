"""tokviz.ui.workspace: the workspace in session state -- restored from the link on a session's first
run (what it could not read said once), mirrored back into the URL, and widgets bound to it."""

from __future__ import annotations

from streamlit.testing.v1 import AppTest


def _page() -> None:
    import streamlit as st

    from tokviz.ui import workspace as ws_ui

    workspace = ws_ui.current()
    ws_ui.show_link_notes()

    def write(value: int) -> None:
        workspace.train.target_vocab = int(value)

    st.number_input("vocab", key="vocab_box", on_change=ws_ui.bind("vocab_box", lambda: workspace.train.target_vocab, write))
    ws_ui.presentation_toggle(workspace)
    st.session_state["url"] = ws_ui.link_url(workspace, "pages/train.py")
    ws_ui.sync_link(workspace)


def test_a_link_restores_the_workspace_and_widgets_write_back() -> None:
    app = AppTest.from_function(_page, default_timeout=60)
    app.query_params["preset"] = "gpt2"
    app.query_params["vocab"] = "500"
    app.run()
    assert not app.exception and not app.error
    workspace = app.session_state["_tokviz_workspace"]
    assert workspace.train.target_vocab == 500 and app.number_input(key="vocab_box").value == 500
    app.number_input(key="vocab_box").set_value(700).run()
    assert workspace.train.target_vocab == 700
    assert app.session_state["url"] == "http://localhost:8501/train?preset=gpt2&vocab=700"
    app.toggle(key="presentation").set_value(True).run()
    assert workspace.presentation is True
    assert app.session_state["url"].endswith("&vocab=700&present=true")


def test_what_a_link_could_not_read_is_said_until_the_user_acts() -> None:
    app = AppTest.from_function(_page, default_timeout=60)
    app.query_params["preset"] = "gpt2"
    app.query_params["vocab"] = "abc"
    app.run()
    assert [error.value for error in app.error] == [
        "This link was not used in full\\. Train settings: The link's value 'abc' for vocab cannot be read as int\\."]
    assert app.session_state["_tokviz_workspace"].train.target_vocab == 1000
    app.number_input(key="vocab_box").set_value(800).run()
    assert not app.error
