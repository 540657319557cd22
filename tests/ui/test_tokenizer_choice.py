"""tokviz.ui.tokenizer_choice: the tokenizer Pipeline, Inspect and Audit work on -- a preset trained on
the sample (the Train page's cached training), an upload, or the session's -- kept in the workspace."""

from __future__ import annotations

from streamlit.testing.v1 import AppTest


def _page() -> None:
    import streamlit as st

    from tokviz.ui.tokenizer_choice import tokenizer_choice
    from tokviz.ui.workspace import current

    tokenizer, key = tokenizer_choice(current(), "inspect", allow_upload=True)
    st.session_state["chosen"] = (key, None if tokenizer is None else tokenizer.encode("Hello world").tokens)


def test_a_preset_on_the_sample_until_something_else_is_chosen() -> None:
    app = AppTest.from_function(_page, default_timeout=240).run()
    assert not app.exception and not app.error
    box = app.selectbox(key="inspect_tokenizer")
    assert box.options[0].startswith("The uploaded tokenizer files") and any("trained on the sample" in option for option in box.options)
    assert box.value == "gpt2"  # nothing trained in this session: the first preset
    assert app.session_state["chosen"] == ("preset:gpt2", ["He", "ll", "o", "Ġwor", "ld"])  # GPT-2-like, 1,000 tokens on the sample
    box.set_value("upload").run()
    assert app.session_state["chosen"] == ("", None)
    assert app.session_state["_tokviz_workspace"].inspect.tokenizer == "upload"
    assert [info.value for info in app.info] == ["Upload a tokenizer file above, or pick another tokenizer."]
