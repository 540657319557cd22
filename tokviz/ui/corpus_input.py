"""The session's corpus: the text box, an upload (with a column picker for tables), and its overview.

Train and Compare show the same input, bound to the workspace's one corpus, so what is pasted
or uploaded on one page is what the other trains on.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import streamlit as st

from tokviz.errors import TokvizError
from tokviz.ui.shell import md_escape, show_error
from tokviz.ui.workspace import bind
from tokviz.workspace import Workspace

#: Pasted text above this many characters is kept by the page, not shown in the text box. A browser re-lays
#: out and re-scans (autofill, paint) a text box's whole value whenever the page around it changes, and the
#: browser sends every widget's value with every rerun: with 5 MB in the box each change of the page cost the
#: browser 9-12 s, four times over after one paste (measured in Chromium at 1280x720), against 0.3 s on the server.
TEXT_BOX_MAX_CHARS = 250_000


@dataclass(frozen=True, slots=True)
class Corpus:
    """The corpus in use: its text, its hash (cache key), a phrase naming it, and its split and statistics."""

    text: str
    key: str
    source: str
    split: Any  # tokviz.corpus.CorpusSplit
    stats: Any  # tokviz.corpus.CorpusStats


def active_text(workspace: Workspace) -> str:
    """The text of the session's corpus (the sample unless something was pasted or uploaded)."""
    from tokviz.samples import load_sample

    corpus = workspace.corpus
    if corpus.source == "upload" and corpus.upload_text is not None:
        return corpus.upload_text
    return corpus.pasted if corpus.pasted is not None else load_sample()


def session_corpus(workspace: Workspace) -> Corpus:
    """The session's corpus with its held-out split and statistics (computed once per corpus hash)."""
    from tokviz.corpus import corpus_hash

    text = active_text(workspace)
    key = corpus_hash(text)
    split, stats = corpus_overview(key, _text=text)
    return Corpus(text, key, workspace.corpus.describe(), split, stats)


@st.cache_resource(max_entries=4, show_spinner="Counting the corpus's lines and characters…")
def corpus_overview(corpus_key: str, _text: str) -> tuple[Any, Any]:
    """``(held_out_split, corpus_stats)`` of a corpus, computed once per corpus hash."""
    from tokviz.corpus import corpus_stats, held_out_split

    return held_out_split(_text), corpus_stats(_text)


def corpus_input(workspace: Workspace, height: int = 140, key_prefix: str = "") -> Corpus:
    """The corpus widgets: a text area (key ``{key_prefix}corpus_text``) and an uploader (``{key_prefix}corpus_file``).

    Each page gives its own ``key_prefix``: Streamlit treats a widget of the same key on another
    page as another widget, and the workspace, not the widget, carries the corpus between pages.
    A bad upload is shown with ``st.error`` and changes nothing: the corpus in use stays.
    """
    from tokviz.corpus import UPLOAD_SUFFIXES
    from tokviz.samples import load_sample

    corpus = workspace.corpus
    sample = load_sample()

    editing_key = f"_tokviz_{key_prefix}corpus_in_box"  # the user asked to see a large pasted text in the box

    def typed(value: str) -> None:
        was_large = len(corpus.pasted or "") > TEXT_BOX_MAX_CHARS
        corpus.pasted = None if value == sample else value
        if was_large:
            give_back_memory()
        corpus.source = "sample" if corpus.pasted is None else "pasted"
        st.session_state.pop(editing_key, None)

    def upload_changed() -> None:
        if st.session_state.get(f"{key_prefix}corpus_file") is None:  # the file was removed: back to the text box
            corpus.source = "sample" if corpus.pasted is None else "pasted"
            corpus.upload_text, corpus.upload_name = None, ""

    held = corpus.source == "pasted" and len(corpus.pasted or "") > TEXT_BOX_MAX_CHARS and not st.session_state.get(editing_key)
    if held:
        _held_paste_note(workspace, editing_key, key_prefix)
    elif corpus.source != "upload":
        st.text_area(
            "Corpus text (the built-in sample until you edit it)", key=f"{key_prefix}corpus_text", height=height,
            on_change=bind(f"{key_prefix}corpus_text", lambda: corpus.pasted if corpus.pasted is not None else sample, typed),
        )
    uploaded = st.file_uploader(
        "…or upload a file", type=[suffix[1:] for suffix in UPLOAD_SUFFIXES], key=f"{key_prefix}corpus_file", on_change=upload_changed,
        help="Plain text, Markdown, CSV / TSV, JSON Lines or JSON. Tables get a column picker.",
    )
    if uploaded is not None:
        try:
            _use_upload(workspace, uploaded, f"{key_prefix}corpus_column")
        except TokvizError as error:
            show_error(error)
    elif corpus.source == "upload":
        left, right = st.columns([3, 1], vertical_alignment="center")
        left.caption(f"Using {md_escape(corpus.describe())} ({len(corpus.upload_text or ''):,} characters). Upload another file to change it.")
        if right.button("Use the text box instead", key=f"{key_prefix}corpus_use_text"):
            corpus.source = "sample" if corpus.pasted is None else "pasted"
            corpus.upload_text, corpus.upload_name = None, ""
            st.rerun()
    return session_corpus(workspace)


def give_back_memory() -> None:
    """Hand freed memory back to the operating system once a large corpus is let go.

    Splitting and counting a corpus makes millions of small objects; once they are freed, glibc keeps their
    pages for reuse, so the process stayed at its peak. Measured on a 5 MB paste replaced by the sample:
    RSS 300 MB before, 266 MB after this (218 MB before the paste; the rest is the caches that keep that
    corpus's overview and training for a return to it)."""
    import ctypes
    import gc

    gc.collect()
    try:
        ctypes.CDLL("libc.so.6").malloc_trim(0)
    except (OSError, AttributeError):  # not glibc (macOS, musl): the allocator keeps its own policy
        pass


def _held_paste_note(workspace: Workspace, editing_key: str, key_prefix: str) -> None:
    """What replaces the text box while it would hold a large pasted text: its size and the way back to editing."""
    corpus = workspace.corpus
    st.caption(
        f"Using your pasted text ({len(corpus.pasted or ''):,} characters). The page keeps it instead of the text box: "
        f"a text box of more than {TEXT_BOX_MAX_CHARS:,} characters makes the browser slow at every change."
    )
    edit, sample = st.columns(2)
    if edit.button("Edit it in the text box (slow)", key=f"{key_prefix}corpus_edit_text", width="stretch"):
        st.session_state[editing_key] = True
        st.rerun()
    if sample.button("Back to the built-in sample", key=f"{key_prefix}corpus_use_sample", width="stretch"):
        corpus.pasted, corpus.source = None, "sample"
        give_back_memory()
        st.rerun()


def _use_upload(workspace: Workspace, uploaded: Any, column_key: str) -> None:
    """Decode the upload (once per file), pick a column for tables, and make it the session's corpus."""
    name = uploaded.name
    decoded, frame, columns = _read_upload(uploaded.file_id, name, _data=uploaded.getvalue())
    if decoded.notice:
        st.warning(md_escape(decoded.notice))
    if frame is None:
        text, label = decoded.text, name
    else:
        column = st.selectbox("Column / field to train on", columns, key=column_key)
        text, label = _column_text(uploaded.file_id, column, _frame=frame, _name=name), f"{name}, column {column!r}"
    corpus = workspace.corpus
    corpus.source, corpus.upload_name, corpus.upload_text = "upload", label, text


@st.cache_resource(max_entries=2, show_spinner="Reading the upload…")
def _read_upload(file_id: str, name: str, _data: bytes) -> tuple[Any, Any, list[str]]:
    """Decode an upload once per file (reruns reuse it): ``(DecodedText, DataFrame or None, columns)``."""
    from tokviz.corpus import TABLE_SUFFIXES, decode_upload, read_table, text_columns

    decoded = decode_upload(_data, name)
    if not name.lower().endswith(TABLE_SUFFIXES):
        return decoded, None, []
    frame = read_table(decoded.text, name)
    return decoded, frame, text_columns(frame)


@st.cache_resource(max_entries=4, show_spinner=False)
def _column_text(file_id: str, column: str, _frame: Any, _name: str) -> str:
    from tokviz.corpus import column_text

    return column_text(_frame, column, _name)
