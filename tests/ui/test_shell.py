"""The page frame's logging (tokviz.ui.shell): a user's error is one INFO line in the server log, never a traceback.

Streamlit logs with a traceback an error raised in a download's callable (it wraps it in MediaFileStorageError), a
download asked for after the page changed ("Deferred file ... not found"), and an exception escaping a script or a
fragment. These checks drive Streamlit's own handler and loggers, with the filter ``page_setup`` installs.
"""

from __future__ import annotations

import asyncio
import logging

import pytest

from tokviz.errors import TokvizError, VocabularyError
from tokviz.ui import shell


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
    return asyncio.run(DeferredFileHandler(lambda: manager).handle(request, "session"))


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
