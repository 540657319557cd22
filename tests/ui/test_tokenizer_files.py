"""The uploaders of tokviz.ui.tokenizer_files on Inspect (AppTest): a refused file or a read past the server's time
bound is one sentence naming the file, and the page goes on with another tokenizer, the user's text kept."""

from __future__ import annotations

from pathlib import Path

from streamlit.testing.v1 import AppTest

import tokviz.limits
from tokviz.ui.shell import md_escape

APP = str(Path(__file__).resolve().parents[2] / "app.py")


def open_inspect() -> AppTest:
    app = AppTest.from_file(APP, default_timeout=180)
    app.run()
    app.switch_page("pages/inspect.py")
    app.run()
    return app


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
