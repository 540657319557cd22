"""tokviz.ui.tokenizer_files: tokenizers from the user's uploaded files, kept in the workspace -- each one
read, a bad one named with its reason while the others load, the limit said; a history.json opened."""

from __future__ import annotations

from streamlit.testing.v1 import AppTest


def _page() -> None:
    import streamlit as st

    from tokviz import Tokenizer, pre_tokenizers
    from tokviz.models import WordLevel
    from tokviz.ui.tokenizer_files import tokenizer_files
    from tokviz.workspace import UploadedFile

    tokenizer = Tokenizer(WordLevel({"[UNK]": 0, "hello": 1}, unk_token="[UNK]"))
    tokenizer.pre_tokenizer = pre_tokenizers.Whitespace()
    files = [UploadedFile("good.json", tokenizer.to_str().encode()), UploadedFile("bad.json", b'{"model": '),
             UploadedFile("other.json", tokenizer.to_str().encode())]
    loaded = tokenizer_files(files[: st.session_state.get("how_many", 3)], "files", limit=1)
    st.session_state["loaded"] = [(item.name, item.tokenizer.encode("hello there").ids, item.byte_level) for item in loaded]


def test_files_load_a_bad_one_is_named_and_the_limit_said() -> None:
    app = AppTest.from_function(_page, default_timeout=120).run()
    assert not app.exception, [str(error.value) for error in app.exception]
    assert app.session_state["loaded"] == [("good.json", [1, 0], False)]
    assert len(app.error) == 1 and app.error[0].value.startswith("bad\\.json ")  # named, as typed (Markdown escaped)
    assert [warning.value for warning in app.warning] == [
        "2 tokenizers were uploaded; this comparison takes 1 more (8 in all): using the first 1."]
    app.session_state["how_many"] = 1
    app.run()
    assert not app.error and not app.warning and app.session_state["loaded"] == [("good.json", [1, 0], False)]


def _training() -> None:
    import streamlit as st

    from tokviz import history_io
    from tokviz.pipeline_config import PipelineConfig
    from tokviz.training import run_training
    from tokviz.ui.tokenizer_files import TRAINING_UPLOAD, training_file

    if st.session_state.get("bad"):
        st.session_state[TRAINING_UPLOAD] = ("history.json", b'{"format": "something else"}')
    else:
        config = PipelineConfig(model="BPE")
        history = run_training(config, 30, ["low lower lowest", "new newer"])
        st.session_state[TRAINING_UPLOAD] = ("history.json", history_io.dumps(history, config).encode())
    opened = training_file("history_upload")
    st.session_state["opened"] = None if opened is None else (opened[0].history.algorithm, opened[1].startswith("training:"))


def test_a_history_json_opens_and_a_bad_one_is_named() -> None:
    app = AppTest.from_function(_training, default_timeout=120).run()
    assert not app.exception and app.session_state["opened"] == ("BPE", True)
    app.session_state["bad"] = True
    app.run()
    assert app.session_state["opened"] is None and len(app.error) == 1
