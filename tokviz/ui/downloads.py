"""Downloads of a tokenizer in every file kind tokviz reads (``tokviz.export.export``), on Inspect and
Compare: pick a kind, read what it cannot keep (or why it is impossible), download the file or zip.

Nothing is written until a kind is chosen (a 128k-token tokenizer takes a few seconds to write and
read back); each (tokenizer, kind) is written once per server and kept in a small cache.
"""

from __future__ import annotations

from typing import Any

import streamlit as st

from tokviz.ui.shell import md_escape


@st.cache_data(max_entries=8, show_spinner="Writing the files and reading them back…")
def _exported(choice_key: str, format: str, _tokenizer: Any) -> Any:
    """``tokviz.export.export`` once per (tokenizer, kind); a ConversionError is kept as its sentence."""
    from tokviz.export import ConversionError, export

    try:
        return export(_tokenizer, format)
    except ConversionError as error:
        return str(error)


def file_downloads(tokenizer: Any, choice_key: str, key: str) -> None:
    """A select box of file kinds (widget ``{key}_export_format``), then what is lost and the download."""
    from tokviz.export import EXPORT_FORMATS

    left, right = st.columns([3, 1], vertical_alignment="bottom")
    format = left.selectbox("Download as", list(EXPORT_FORMATS), index=None, key=f"{key}_export_format",
                            format_func=EXPORT_FORMATS.__getitem__, placeholder="Choose a file kind…",
                            help="Every kind tokviz reads. Each is read back by tokviz's own reader and compared stage by "
                            "stage with this tokenizer, so what the file cannot keep is named below.")
    if format is None:
        return
    result = _exported(choice_key, format, _tokenizer=tokenizer)
    if isinstance(result, str):
        st.warning(md_escape(result), icon=":material/block:")
        return
    right.download_button("Download", result.data, result.download_name, key=f"{key}_export_download_{abs(hash((choice_key, format)))}", width="stretch",
                          mime="application/zip" if result.download_name.endswith(".zip") else "application/octet-stream")
    if result.lost:
        st.markdown("**What this file kind does not keep:**\n" + "\n".join(f"- {md_escape(sentence)}" for sentence in result.lost))
    else:
        st.caption(f"{md_escape(', '.join(result.files))}: nothing is lost — read back, every stage is this tokenizer's.")


def compare_downloads(entries: list[Any]) -> None:
    """Compare's downloads: one tokenizer of the comparison (widget ``compare_download_choice``) in any file kind."""
    names = [entry.name for entry in entries]
    choice = st.selectbox("Download another file kind of", names, key="compare_download_choice")
    entry = entries[names.index(choice)]
    file_downloads(getattr(entry, "original", entry.tokenizer), entry.key, "compare")  # as trained or uploaded
