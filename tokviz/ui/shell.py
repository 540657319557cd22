"""What every page shares: the page registry, the page frame (config, navigation, presentation
mode, the link) and how user-caused errors are shown.

The app uses Streamlit's own multipage discovery: ``app.py`` is the home page and every
script in ``pages/`` is a page, so a deep link such as ``/train?preset=bert`` opens that page
on a fresh server with no private flags. The sidebar lists the pages by :data:`PAGES` (titles
and icons), drawn with ``st.page_link``.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import streamlit as st

from tokviz.errors import TokvizError
from tokviz.markdown import md_escape  # noqa: F401 - the one escaping function; pages import it from here

#: The browser tab's title on every page (the existing links and tests know it).
APP_TITLE = "tokviz · tokenizer playground"
#: The favicon: an emoji, which the browser draws itself (a ``:material/…:`` icon is fetched from a font server).
APP_ICON = "🔤"


@dataclass(frozen=True, slots=True)
class PageInfo:
    path: str
    title: str
    icon: str
    summary: str  # two sentences, shown on the home view


#: Every page the app ships, in navigation order. A page appears here only once it works.
PAGES: tuple[PageInfo, ...] = (
    PageInfo(
        "app.py",
        "Home",
        ":material/home:",
        "What tokviz is and what each page does. It also shows the built-in sample corpus that every page starts from.",
    ),
    PageInfo(
        "pages/train.py",
        "Train",
        ":material/model_training:",
        "Paste or upload a corpus, pick a pipeline (BERT, GPT-2, T5 or your own) and train a tokenizer in seconds. "
        "Drag the vocab slider to watch tokens, merges, scores and charts change without retraining.",
    ),
    PageInfo(
        "pages/compare.py",
        "Compare",
        ":material/compare_arrows:",
        "Train two to four pipelines (BPE, WordPiece, Unigram, presets or your own) on the session's corpus and see the same text cut by each, "
        "differences outlined. A metrics table and curves over vocab size measure their compression on held-out text.",
    ),
    PageInfo(
        "pages/pipeline.py",
        "Pipeline",
        ":material/account_tree:",
        "Follow one text through every stage of the tokenizer you trained (or a preset): normalization, pre-tokenization, the model, "
        "post-processing and decoding. A bytes view shows each character's code point and UTF-8 bytes, and what byte-level BPE makes of them.",
    ),
    PageInfo(
        "pages/inspect.py",
        "Inspect",
        ":material/search:",
        "Open any tokenizer.json (from Hugging Face or trained here) and read its pipeline, vocabulary and merges. "
        "Search and filter the vocabulary, see the merge tree behind any BPE token and tokenize your own text.",
    ),
    PageInfo(
        "pages/audit.py",
        "Audit",
        ":material/fact_check:",
        "Audit any tokenizer's vocabulary: the tokens no text can produce (with the proof), the ones your texts never use, "
        "half-character byte tokens, duplicates, special tokens plain text can type, and the texts decode(encode(x)) does not give back.",
    ),
    PageInfo(
        "pages/learn.py",
        "Learn",
        ":material/school:",
        "Step-by-step lessons on BPE, WordPiece, Unigram, byte-level BPE and normalization, driven by the real trainers "
        "on a word-count table you can edit live. One click per step, sized for a projector, with a predict-the-next-merge exercise.",
    ),
)

def _user_error_log() -> logging.Logger:
    """The server log's line for user errors: ``tokviz`` at INFO, one line each (Streamlit's own loggers stay as they are)."""
    log = logging.getLogger("tokviz.user_errors")
    if not log.handlers:
        handler = logging.StreamHandler()
        handler.setFormatter(logging.Formatter("%(asctime)s INFO tokviz: %(message)s"))
        log.addHandler(handler)
        log.setLevel(logging.INFO)
        log.propagate = False
    return log


def log_user_error(error: BaseException) -> None:
    """Log a user-caused problem as one INFO line: ``user error (VocabularyError): <the message, on one line>``."""
    message = " ".join(str(error).split())
    _user_error_log().info("user error (%s): %s", type(error).__name__, message[:300])


def _user_error_in(exc_info: Any) -> BaseException | None:
    """The user-caused error behind a log record's exception, if that is what it is: a ``TokvizError`` anywhere in
    its cause chain (Streamlit wraps a download's error in ``MediaFileStorageError``), or a download asked for after
    the page changed (its file is gone: the browser held an old button)."""
    error = exc_info[1] if isinstance(exc_info, tuple) else exc_info if isinstance(exc_info, BaseException) else None
    seen: set[int] = set()
    while error is not None and id(error) not in seen:
        seen.add(id(error))
        if isinstance(error, TokvizError):
            return error
        if type(error).__name__ == "MediaFileStorageError" and str(error).startswith("Deferred file"):
            return error
        error = error.__cause__ or error.__context__
    return None


class _UserErrorsAsOneLine(logging.Filter):
    """Turns a traceback Streamlit logs for a user's error (one raised in a download's callable, a fragment, a
    stale download button) into :func:`log_user_error`'s one INFO line; every other record passes unchanged."""

    def filter(self, record: logging.LogRecord) -> bool:
        error = _user_error_in(record.exc_info)
        if error is None:
            return True
        log_user_error(error)
        return False


#: Streamlit's loggers that log an exception escaping a script, a fragment or a deferred download with its traceback.
STREAMLIT_ERROR_LOGGERS = ("streamlit.error_util", "streamlit.runtime.backend_operation_handler", "streamlit.runtime.fragment",
                           "streamlit.runtime.scriptrunner.script_runner", "streamlit.runtime.scriptrunner.exec_code")


def quiet_user_errors() -> None:
    """Install :class:`_UserErrorsAsOneLine` on Streamlit's error loggers (once per process)."""
    for name in STREAMLIT_ERROR_LOGGERS:
        logger = logging.getLogger(name)
        if not any(isinstance(existing, _UserErrorsAsOneLine) for existing in logger.filters):
            logger.addFilter(_UserErrorsAsOneLine())


def show_error(error: Exception) -> None:
    """Show a user-caused error as ``st.error`` and log it as one INFO line (no traceback: nothing broke);
    anything else is a bug and is shown with its trace."""
    if isinstance(error, TokvizError):
        log_user_error(error)
        st.error(md_escape(str(error)))  # messages quote user text (patterns, tokens): show it as typed
    else:  # pragma: no cover - only bugs get here
        st.exception(error)


def metrics_row(values: Mapping[str, Any], helps: Mapping[str, str] | None = None) -> None:
    """One ``st.metric`` per entry, side by side; integers get thousands separators."""
    helps = helps or {}
    for column, (label, value) in zip(st.columns(len(values)), values.items()):
        column.metric(label, f"{value:,}" if isinstance(value, int) else value, help=helps.get(label))


def counted(number: int, noun: str) -> str:
    """``number`` and ``noun``, plural unless it is one: "1 token", "2,048 tokens".

    >>> counted(1, "token"), counted(0, "token"), counted(12345, "place")
    ('1 token', '0 tokens', '12,345 places')
    """
    return f"{number:,} {noun}" if number == 1 else f"{number:,} {noun}s"


def capped_text(text: str, what: str) -> str:
    """``text`` cut to the server's limit for text tokenized on every change, saying so when it cuts."""
    from tokviz.limits import MAX_TEST_TEXT_CHARS

    if len(text) <= MAX_TEST_TEXT_CHARS:
        return text
    st.caption(
        f"Using the first {MAX_TEST_TEXT_CHARS:,} characters of the {what} ({len(text):,} in all): "
        "this server's limit for text tokenized on every change."
    )
    return text[:MAX_TEST_TEXT_CHARS]


def page_setup(path: str) -> Any:
    """Start a page: page config, the session workspace (restored from the link on a session's
    first run), the sidebar (pages, presentation mode, link) and the presentation styles.

    Returns the session's :class:`~tokviz.workspace.Workspace`.
    """
    from tokviz.ui import workspace as ws_ui

    quiet_user_errors()
    workspace = ws_ui.current()
    st.set_page_config(
        page_title=APP_TITLE, page_icon=APP_ICON, layout="wide",
        initial_sidebar_state="collapsed" if workspace.presentation else "auto",
    )
    with st.sidebar:
        for page in PAGES:
            st.page_link(page.path, label=page.title, icon=page.icon)
        st.divider()
        ws_ui.presentation_toggle(workspace)
        run_marker()
    st.html(PRESENTATION_CSS if workspace.presentation else COMPACT_CSS)
    ws_ui.show_link_notes()
    ws_ui.sync_link(workspace)
    return workspace


def page_title(workspace: Any, path: str, title: str, caption: str = "", *, with_link: bool = True) -> None:
    """The page's title with **Copy link** beside it and a caption under both (every page opens this way).

    ``with_link=False`` leaves the link to a part of the page drawn later (Train's results draw it beside the
    slider, whose fragment reruns alone and must carry the slider's size)."""
    from tokviz.ui.workspace import copy_link

    title_column, link_column = st.columns([5, 1], vertical_alignment="bottom")
    title_column.title(title)
    if with_link:
        with link_column:
            copy_link(workspace, path)
    if caption:
        st.caption(caption)


_RUNS_KEY = "_tokviz_runs"


def run_marker() -> None:
    """The run's number, for browser tests: a run has finished when the highest marker moved past the
    one seen before an action and Streamlit reports the script as not running.

    Every page draws one in its sidebar; a fragment (``st.fragment``, which reruns alone) draws its
    own, so a fragment's run moves the highest number too.
    """
    runs = st.session_state[_RUNS_KEY] = st.session_state.get(_RUNS_KEY, 0) + 1
    st.html(f'<div class="tokviz-run" title="{runs}"></div>')

#: Every page: less blank above the title and a narrower sidebar, so results start on the first screen.
COMPACT_CSS = """<style>
[data-testid=stMainBlockContainer] { padding-top: 2.2rem; padding-bottom: 2rem; }
section[data-testid=stSidebar] { width: 210px !important; min-width: 210px !important; }
[data-testid=stSidebarUserContent] { padding-top: 1rem; }
</style>"""

#: Presentation mode: larger type everywhere a class reads from the back of the room.
PRESENTATION_CSS = COMPACT_CSS + """<style>
[data-testid=stMainBlockContainer] { font-size: 1.25rem; }
[data-testid=stMainBlockContainer] p, [data-testid=stMainBlockContainer] li,
[data-testid=stMainBlockContainer] label, [data-testid=stMainBlockContainer] textarea,
[data-testid=stMainBlockContainer] input { font-size: 1.2rem !important; }
[data-testid=stMainBlockContainer] [data-testid=stCaptionContainer] { font-size: 1.05rem !important; }
[data-testid=stMainBlockContainer] [data-testid=stMetricValue], [data-testid=stMainBlockContainer] [data-testid=stMetricValue] * { font-size: 2.4rem !important; }
.tokviz-spans { font-size: 1.6rem !important; line-height: 2.6 !important; }
[data-testid=stMainBlockContainer] [data-testid=stTable] td, [data-testid=stMainBlockContainer] [data-testid=stTable] th { font-size: 1.2rem; }
[data-testid=stMainBlockContainer] [data-testid=stCode] code { font-size: 1.1rem; }
</style>"""
