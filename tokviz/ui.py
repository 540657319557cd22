"""The only tokviz module that imports streamlit: page registry, cached wrappers, shared widgets.

Pages stay thin: they lay out widgets and call tokviz functions; anything worth testing
lives in the pure modules, which never import streamlit.
"""

from __future__ import annotations

from dataclasses import dataclass

import streamlit as st

from tokviz.errors import TokvizError


@dataclass(frozen=True, slots=True)
class PageInfo:
    path: str
    title: str
    icon: str
    summary: str  # two sentences, shown on the home view


#: Every page the app ships, in navigation order. A page appears here only once it works.
PAGES: tuple[PageInfo, ...] = (
    PageInfo(
        "pages/home.py",
        "Home",
        ":material/home:",
        "What tokviz is and what each page does. It also shows the built-in sample corpus that every page starts from.",
    ),
)


def show_error(error: Exception) -> None:
    """Show a user-caused error as ``st.error``; anything else is a bug and is shown with its trace."""
    if isinstance(error, TokvizError):
        st.error(str(error))
    else:  # pragma: no cover - only bugs get here
        st.exception(error)
