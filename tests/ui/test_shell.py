"""The page frame (tokviz.ui.shell): every registered page exists; user errors shown as typed; numbers with
separators; long texts cut with a note; run markers -- and its logging: a user's error is one INFO line in the
server log, never a traceback.

Streamlit logs with a traceback an error raised in a download's callable (it wraps it in MediaFileStorageError), a
download asked for after the page changed ("Deferred file ... not found"), and an exception escaping a script or a
fragment. These checks drive Streamlit's own handler and loggers, with the filter ``page_setup`` installs.
"""

from __future__ import annotations

import logging
from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from tests._async import run_coroutine
from tokviz.errors import TokvizError, VocabularyError
from tokviz.ui import shell
from tokviz.ui.shell import PAGES

ROOT = Path(__file__).resolve().parents[2]


class Collect(logging.Handler):
    def __init__(self) -> None:
        super().__init__(logging.DEBUG)
        self.records: list[logging.LogRecord] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.records.append(record)


@pytest.fixture()
def logs():
    """``(tokviz's user-error records, records reaching Streamlit's loggers' handlers)``."""
    shell.quiet_user_errors()
    ours, theirs = Collect(), Collect()
    shell._user_error_log().addHandler(ours)
    loggers = [logging.getLogger(name) for name in shell.STREAMLIT_ERROR_LOGGERS]
    for logger in loggers:
        logger.addHandler(theirs)
    try:
        yield ours.records, theirs.records
    finally:
        shell._user_error_log().removeHandler(ours)
        for logger in loggers:
            logger.removeHandler(theirs)


def run_deferred(data_callable) -> object:
    """Ask Streamlit's deferred-download handler for a file, as the browser does when a download button is clicked."""
    from streamlit.proto.BackMsg_pb2 import BackendOperationRequest
    from streamlit.runtime.backend_operation_handler import DeferredFileHandler
    from streamlit.runtime.media_file_manager import MediaFileManager
    from streamlit.runtime.memory_media_file_storage import MemoryMediaFileStorage

    manager = MediaFileManager(MemoryMediaFileStorage("/media"))
    file_id = manager.add_deferred(data_callable, "application/json", "coordinates", "tokenizer.json") if data_callable else "gone"
    request = BackendOperationRequest(request_id="1")
    request.deferred_file.file_id = file_id
    return run_coroutine(DeferredFileHandler(lambda: manager).handle(request, "session"))  # (Playwright's loop may run here)


def test_an_error_in_a_download_is_one_info_line(logs) -> None:
    ours, theirs = logs

    def fails() -> bytes:
        raise VocabularyError("The vocabulary has no token 'x'.\nPick another size.")

    response = run_deferred(fails)
    assert response.error_msg  # the browser still hears the download failed
    assert theirs == []  # no traceback from Streamlit
    assert [(record.levelno, record.getMessage(), record.exc_info) for record in ours] == [
        (logging.INFO, "user error (VocabularyError): The vocabulary has no token 'x'. Pick another size.", None)]


def test_a_download_asked_for_after_the_page_changed_is_one_info_line(logs) -> None:
    ours, theirs = logs
    run_deferred(None)  # the file id is no longer registered: the browser held an old button
    assert theirs == []
    assert len(ours) == 1 and ours[0].getMessage() == "user error (MediaFileStorageError): Deferred file gone not found"


def test_an_escaping_user_error_is_one_line_and_a_bug_keeps_its_traceback(logs) -> None:
    ours, theirs = logs
    log = logging.getLogger("streamlit.error_util")
    try:
        raise TokvizError("A user's mistake.")
    except TokvizError as error:
        log.error("Uncaught app execution", exc_info=error)
    try:
        raise KeyError("a bug")
    except KeyError as error:
        log.error("Uncaught app execution", exc_info=error)
    assert [record.getMessage() for record in ours] == ["user error (TokvizError): A user's mistake."]
    assert len(theirs) == 1 and theirs[0].exc_info[0] is KeyError  # a bug is still logged with its trace


def test_every_registered_page_is_a_file_with_a_summary() -> None:
    assert [page.title for page in PAGES] == ["Home", "Train", "Compare", "Pipeline", "Inspect", "Audit", "Learn"]
    for page in PAGES:
        assert (ROOT / page.path).is_file(), page.path
        assert page.summary.endswith(".") and page.icon.startswith(":material/")
    assert {path.name for path in (ROOT / "pages").glob("*.py")} == {Path(page.path).name for page in PAGES[1:]}


def _frame() -> None:
    import streamlit as st

    from tokviz.errors import TokvizError
    from tokviz.ui.shell import capped_text, metrics_row, run_marker, show_error

    show_error(TokvizError("The pattern *a[ is not a valid regex."))
    metrics_row({"tokens": 12345, "ratio": "1.5x"}, {"tokens": "how many"})
    st.session_state["cut"] = capped_text("x" * 300_000, "test text")
    run_marker()
    run_marker()


def test_errors_metrics_cuts_and_run_markers() -> None:
    app = AppTest.from_function(_frame, default_timeout=60).run()
    assert not app.exception
    assert [error.value for error in app.error] == ["The pattern \\*a\\[ is not a valid regex\\."]  # shown as typed
    assert [(metric.label, metric.value, metric.help) for metric in app.metric] == [("tokens", "12,345", "how many"), ("ratio", "1.5x", "")]
    from tokviz.limits import MAX_TEST_TEXT_CHARS

    assert len(app.session_state["cut"]) == MAX_TEST_TEXT_CHARS
    assert app.caption[0].value.startswith(f"Using the first {MAX_TEST_TEXT_CHARS:,} characters of the test text (300,000 in all)")
    assert app.session_state["_tokviz_runs"] == 2
