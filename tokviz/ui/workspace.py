"""The session workspace in Streamlit: where it is kept, how widgets read and write it, and the link.

The :class:`~tokviz.workspace.Workspace` lives in ``st.session_state`` under
:data:`WORKSPACE_KEY`, which no widget owns, so Streamlit never deletes it. Widgets are bound
to it with :func:`bind`: the widget's key is seeded from the workspace whenever Streamlit has
dropped it (after a run on another page), and an ``on_change`` callback writes each change
back before the next run starts. The URL mirrors the workspace (:func:`sync_link`), and a
session's first run restores the workspace from the URL (a reload or a shared link).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any
from urllib.parse import urlencode, urlsplit

import streamlit as st

from tokviz.markdown import md_escape
from tokviz.links import NOT_CARRIED, from_link, to_link
from tokviz.workspace import Workspace

WORKSPACE_KEY = "_tokviz_workspace"
_MISSING = object()
_NOTES_KEY = "_tokviz_link_notes"


def current() -> Workspace:
    """The session's workspace; on a session's first run, the one the URL describes."""
    workspace = st.session_state.get(WORKSPACE_KEY)
    if workspace is None:
        workspace, notes = from_link(st.query_params.to_dict())
        st.session_state[WORKSPACE_KEY] = workspace
        st.session_state[_NOTES_KEY] = notes
    return workspace


def show_link_notes() -> None:
    """Say what a link could not restore (a broken value, a corpus it cannot carry), until the user changes something."""
    for note in st.session_state.get(_NOTES_KEY) or []:
        # A corpus the link cannot carry, or tokens filled in, is information; a part it could not read is an error.
        show = st.info if note.startswith(("Corpus:", "Filled in")) else st.error
        show(md_escape(note), icon=":material/link_off:")


def sync_link(workspace: Workspace) -> None:
    """Make the URL a link to ``workspace`` (the browser's address bar follows without a rerun)."""
    link = to_link(workspace)
    if st.query_params.to_dict() != link:
        st.query_params.from_dict(link)


def link_url(workspace: Workspace, page_path: str) -> str:
    """The full link to ``page_path`` ('pages/train.py') with ``workspace`` in its query."""
    base = st.context.url or "http://localhost:8501/"
    parts = urlsplit(base)
    name = page_path.rsplit("/", 1)[-1].removesuffix(".py")
    path = "" if name == "app" else name
    query = urlencode(to_link(workspace))
    return f"{parts.scheme}://{parts.netloc}/{path}" + (f"?{query}" if query else "")


def copy_link(workspace: Workspace, page_path: str) -> None:
    """A visible "Copy link" control: the page's link with a copy button, and what a link leaves out."""
    with st.popover("Copy link", icon=":material/link:"):
        st.code(link_url(workspace, page_path), language=None, wrap_lines=True)
        st.caption(NOT_CARRIED)


def bind(key: str, read: Callable[[], Any], write: Callable[[Any], None]) -> Callable[[], None]:
    """Seed widget ``key`` from the workspace and return the ``on_change`` callback that writes it back.

    ``read()`` gives the workspace's value in the widget's form; ``write(value)`` stores the
    widget's value. The workspace is the truth: every change reaches it through the callback
    before the next run, so seeding the key from it on every run never undoes what the user
    just did, and a widget of the same key on another page (another widget to Streamlit)
    shows the same value.
    """
    value = read()
    if st.session_state.get(key, _MISSING) != value:
        st.session_state[key] = value

    def changed() -> None:
        st.session_state.pop(_NOTES_KEY, None)  # the user acted: the link's notes have been read
        write(st.session_state[key])

    return changed


def reseed(key: str, value: Any) -> None:
    """Set widget ``key`` to ``value`` before it is drawn this run (the workspace changed under it)."""
    st.session_state[key] = value


def presentation_toggle(workspace: Workspace) -> None:
    """Presentation mode: larger type, folded sidebar; kept in the link."""

    def write(value: bool) -> None:
        workspace.presentation = bool(value)

    st.toggle(
        "Presentation mode", key="presentation",
        on_change=bind("presentation", lambda: workspace.presentation, write),
        help="Larger type for spans, tables and charts, for a projector. The sidebar folds away; the link keeps the mode.",
    )
