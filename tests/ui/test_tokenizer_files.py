"""tokviz.ui.tokenizer_files (AppTest): the uploaders on Inspect -- a refused file or a read past the server's time
bound is one sentence naming the file, and the page goes on with another tokenizer, the user's text kept -- and
the module's parts alone: files kept in the workspace load, a bad one is named while the others load, the limit
is said; a history.json opens, a bad one is named."""

from __future__ import annotations

from pathlib import Path

from streamlit.testing.v1 import AppTest

from tests.app_pages import open_page

import tokviz.limits
from tokviz.ui.shell import md_escape


def open_inspect() -> AppTest:
    return open_page("pages/inspect.py")


def upload(app: AppTest, name: str, data: bytes) -> AppTest:
    app.file_uploader(key="inspect_tokenizer_file").set_value([(name, data, "application/octet-stream")]).run()
    return app


def assert_page_goes_on(app: AppTest) -> None:
    assert not app.exception, [str(error.value)[:300] for error in app.exception]
    infos = [info.value for info in app.info]
    assert not any("Upload a tokenizer file above" in info for info in infos), infos  # the user did upload one
    assert any(info.startswith("Showing ") and info.endswith(" instead; upload another file, or pick a tokenizer above.")
               for info in infos), infos
    assert {"Summary", "Try it", "Vocabulary"} <= {header.value for header in app.header}  # the rest of the page is drawn


def test_a_refused_upload_shows_its_sentence_and_the_page_goes_on() -> None:
    app = open_inspect()
    app.text_area(key="inspect_text").set_value("my own text").run()
    upload(app, "vocab.txt", b"hello\nworld\n")
    assert [error.value for error in app.error] == [
        md_escape("vocab.txt: This vocab.txt has no [UNK] token, so it is not a BERT WordPiece vocabulary.")]
    assert_page_goes_on(app)
    assert app.text_area(key="inspect_text").value == "my own text"


def test_a_read_past_the_time_bound_is_stopped_and_said(monkeypatch) -> None:
    monkeypatch.setattr(tokviz.limits, "MAX_LOAD_SECONDS", 0.001)  # every read is past it (a fork alone takes longer)
    app = open_inspect()
    upload(app, "vocab.txt", b"[UNK]\nslow\nread\n")
    assert [error.value for error in app.error] == [md_escape(
        "vocab.txt took more than this server's limit of 0.001 seconds to read, so reading it was stopped (TOKVIZ_MAX_LOAD_SECONDS); "
        "the largest tokenizer files this server accepts read in under 10 seconds.")]
    assert_page_goes_on(app)
    monkeypatch.setattr(tokviz.limits, "MAX_LOAD_SECONDS", 20.0)  # a file that reads in time is shown (the page was not stuck)
    upload(app, "vocab.txt", b"[UNK]\nquick\nread\n")
    assert not app.error and not app.exception
    assert any(metric.value == "3" for metric in app.metric), [metric.value for metric in app.metric]  # its vocab size


# The module's parts run in a script file of their own: reads go through tokviz.bounded's fork server, which
# imports the running script as __mp_main__ (so the script's work sits under a __main__ guard, as a
# multiprocessing script's does; AppTest.from_function's wrapper cannot be imported that way).
FILES_PAGE = """
import streamlit as st
from tokviz import Tokenizer, pre_tokenizers
from tokviz.models import WordLevel
from tokviz.ui.tokenizer_files import tokenizer_files
from tokviz.workspace import UploadedFile

if __name__ == "__main__":  # not when the fork server imports this script as __mp_main__
    tokenizer = Tokenizer(WordLevel({"[UNK]": 0, "hello": 1}, unk_token="[UNK]"))
    tokenizer.pre_tokenizer = pre_tokenizers.Whitespace()
    files = [UploadedFile("good.json", tokenizer.to_str().encode()), UploadedFile("bad.json", b'{"model": '),
             UploadedFile("other.json", tokenizer.to_str().encode())]
    loaded = tokenizer_files(files[: st.session_state.get("how_many", 3)], "files", limit=1)
    st.session_state["loaded"] = [(item.name, item.tokenizer.encode("hello there").ids, item.byte_level) for item in loaded]
"""

TRAINING_PAGE = """
import streamlit as st
from tokviz import history_io
from tokviz.pipeline_config import PipelineConfig
from tokviz.training import run_training
from tokviz.ui.tokenizer_files import TRAINING_UPLOAD, training_file

if __name__ == "__main__":  # not when the fork server imports this script as __mp_main__
    if st.session_state.get("bad"):
        st.session_state[TRAINING_UPLOAD] = ("history.json", b'{"format": "something else"}')
    else:
        config = PipelineConfig(model="BPE")
        history = run_training(config, 30, ["low lower lowest", "new newer"])
        st.session_state[TRAINING_UPLOAD] = ("history.json", history_io.dumps(history, config).encode())
    opened = training_file("history_upload")
    st.session_state["opened"] = None if opened is None else (opened[0].history.algorithm, opened[1].startswith("training:"))
"""


def _script(tmp_path: Path, text: str) -> AppTest:
    path = tmp_path / "page.py"
    path.write_text(text, encoding="utf-8")
    return AppTest.from_file(str(path), default_timeout=120).run()


def test_files_load_a_bad_one_is_named_and_the_limit_said(tmp_path) -> None:
    app = _script(tmp_path, FILES_PAGE)
    assert not app.exception, [str(error.value) for error in app.exception]
    assert app.session_state["loaded"] == [("good.json", [1, 0], False)]
    assert len(app.error) == 1 and app.error[0].value.startswith("bad\\.json ")  # named, as typed (Markdown escaped)
    assert [warning.value for warning in app.warning] == [
        "2 tokenizers were uploaded; this comparison takes 1 more (8 in all): using the first 1."]
    app.session_state["how_many"] = 1
    app.run()
    assert not app.error and not app.warning and app.session_state["loaded"] == [("good.json", [1, 0], False)]


def test_a_history_json_opens_and_a_bad_one_is_named(tmp_path) -> None:
    app = _script(tmp_path, TRAINING_PAGE)
    assert not app.exception and app.session_state["opened"] == ("BPE", True)
    app.session_state["bad"] = True
    app.run()
    assert app.session_state["opened"] is None and len(app.error) == 1
