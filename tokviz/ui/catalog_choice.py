"""The built-in catalog (``tokviz.catalog``) wherever a tokenizer is chosen: Compare's picker, the
Pipeline / Inspect / Audit tokenizer select box, and Train's "Compare with Llama 3 and Tekken".

Choices are kept by name: ``catalog:Llama 3`` in a page's tokenizer choice, the names in
``workspace.compare.catalog`` (``"session"`` there is the Train page's tokenizer); links carry them.
A Hugging Face Hub repository is chosen by its id the same way: ``hub:meta-llama/Llama-3.1-8B``.
Each entry is read once per server process and shared (tokenizers are only read, never changed here).
"""

from __future__ import annotations

from typing import Any

import streamlit as st

from tokviz.catalog import CHOICE_PREFIX
from tokviz.ui.shell import md_escape

#: In ``workspace.compare.catalog``: the Train page's tokenizer, compared beside the catalog's.
SESSION_CHOICE = "session"

#: A Hub choice: ``hub:owner/name`` (``hub:`` alone: the repository id is still to be typed).
HUB_PREFIX = "hub:"

#: What Train's shortcut compares the session's tokenizer with.
SHORTCUT_ENTRIES = ("Llama 3", "Tekken (Mistral NeMo)")


@st.cache_resource(max_entries=3, show_spinner="Reading the tokenizer from its package (a few seconds, once per server)…")
def catalog_tokenizer(name: str) -> Any:
    """``tokviz.catalog.load(name)``, once per server process (Llama 3 ≈ 110 MB, Llama 4 ≈ 155 MB resident)."""
    from tokviz.catalog import load

    return load(name)


@st.cache_resource(max_entries=3, show_spinner="Fetching the tokenizer files from the Hugging Face Hub…")
def hub_tokenizer(repo_id: str) -> Any:
    """``tokviz.hub.load(repo_id)`` once per server process (files kept in huggingface_hub's cache)."""
    from tokviz.hub import load

    return load(repo_id, bounded=True)  # a repository's files read where they can be stopped (issue 38)


def hub_options(current: str) -> dict[str, str]:
    """The Hub entry of a select box: the repository chosen now, or one to type."""
    repo = current.removeprefix(HUB_PREFIX) if current.startswith(HUB_PREFIX) else ""
    return {HUB_PREFIX + repo: f"Hugging Face Hub · {repo}" if repo else "Hugging Face Hub · type a repository id…"}


def hub_chosen(state: Any, choice: str, key: str) -> tuple[Any | None, str]:
    """A text input for the repository id (widget ``{key}_hub``, written to ``state.tokenizer``), then its tokenizer."""
    from tokviz.errors import TokvizError
    from tokviz.hub import parse_repo_id
    from tokviz.ui.workspace import bind

    repo = choice.removeprefix(HUB_PREFIX)

    def write(value: str) -> None:
        state.tokenizer = HUB_PREFIX + value.strip()

    st.text_input("Hugging Face Hub repository id", key=f"{key}_hub", placeholder="meta-llama/Llama-3.1-8B or owner/name@revision",
                  on_change=bind(f"{key}_hub", lambda: repo, write),
                  help="Only its tokenizer files are fetched (never weights), through huggingface_hub's cache on this server; "
                  "a gated repository needs the server's HF_TOKEN.")
    if not repo:
        st.info("Type a repository id, e.g. mistralai/Mistral-Nemo-Instruct-2407.")
        return None, ""
    try:
        parse_repo_id(repo)
        tokenizer = hub_tokenizer(repo)
    except TokvizError as error:
        st.error(md_escape(str(error)))
        return None, ""
    st.caption(f"From the Hugging Face Hub: {md_escape(repo)} (its tokenizer files only).")
    return tokenizer, choice


def catalog_options() -> dict[str, str]:
    """The installed entries as select-box options, grouped by family: ``{"catalog:Llama 3": "Llama · Llama 3 (llama-models 0.3.0)"}``."""
    from tokviz.catalog import available

    entries = sorted(available(), key=lambda item: item.entry.family)  # stable: catalog order within a family
    return {CHOICE_PREFIX + item.name: f"{item.entry.family} · {item.name} ({item.entry.package} {item.version})" for item in entries}


def missing_note() -> None:
    """One caption per catalog package that is not installed, saying what to install."""
    from tokviz.catalog import missing

    for package in missing():
        st.caption(md_escape(package.message))


def entry_caption(name: str) -> None:
    """What an entry is, where it comes from and its licence, under the choice."""
    from tokviz.catalog import available

    for item in available():
        if item.name == name:
            st.caption(f"{md_escape(item.entry.description)} From {md_escape(item.entry.package)} {md_escape(item.version)} "
                       f"(licence: {_licence_markdown(item.licence)}); encodes as `{item.entry.reference}.encode(text, bos=True, eos=False)`.")


def _licence_markdown(licence: str) -> str:
    """The licence as Markdown: text escaped, a URL it gives as a link (escaping would show its backslashes)."""
    import re

    parts = re.split(r"(https?://[^\s()<>]+)", licence)
    return "".join(f"[{md_escape(part.split('/')[2])}]({part})" if index % 2 else md_escape(part) for index, part in enumerate(parts))


def chosen(choice: str) -> tuple[Any | None, str]:
    """The tokenizer of a ``catalog:<name>`` choice and its cache key (``(None, "")`` with a message if it cannot be read)."""
    from tokviz.errors import TokvizError

    name = choice.removeprefix(CHOICE_PREFIX)
    try:
        tokenizer = catalog_tokenizer(name)
    except TokvizError as error:
        st.error(md_escape(str(error)))
        return None, ""
    entry_caption(name)
    return tokenizer, choice


def compare_picker(workspace: Any, limit: int) -> list[Any]:
    """Compare's multiselect over the Train page's tokenizer and the catalog (``workspace.compare.catalog``);
    returns ``FileTokenizer`` records for ``compare_views.compared`` (at most ``limit``)."""
    from tokviz.ui.tokenizer_files import FileTokenizer
    from tokviz.ui.training import session_tokenizer
    from tokviz.ui.workspace import bind

    compare = workspace.compare
    session = session_tokenizer(workspace) if SESSION_CHOICE in compare.catalog or workspace.train.trained is not None else None
    options = ({SESSION_CHOICE: session[1]} if session is not None else {}) | {
        key.removeprefix(CHOICE_PREFIX): label for key, label in catalog_options().items()} | {
        name: f"Hugging Face Hub · {name.removeprefix(HUB_PREFIX)}" for name in compare.catalog if name.startswith(HUB_PREFIX)}
    kept = [name for name in compare.catalog if name in options][: max(limit, 1)]
    if kept != compare.catalog:
        compare.catalog = kept
        st.session_state.pop("compare_catalog", None)
        st.rerun()  # the panel's title, drawn above, counted what is not offered (a link's "session" with nothing trained)

    def write(value: list[str]) -> None:
        compare.catalog = list(value)

    names = st.multiselect("The Train page's tokenizer and tokenizers from the built-in catalog", list(options), key="compare_catalog",
                           format_func=options.__getitem__, max_selections=max(limit, 1), placeholder="Llama 3, Tekken, Mistral…",
                           on_change=bind("compare_catalog", lambda: list(compare.catalog), write),
                           help="Real tokenizers shipped by their authors' packages (llama-models, mistral-common), read on this "
                           "server without downloading; they encode as the authors' code does (BOS first).")
    missing_note()

    def hub_written(value: str) -> None:
        ids = [HUB_PREFIX + repo.strip() for repo in value.split(",") if repo.strip()]
        compare.catalog = [name for name in compare.catalog if not name.startswith(HUB_PREFIX)] + ids[:limit]

    st.text_input("Also from the Hugging Face Hub: repository ids, comma-separated", key="compare_hub",
                  placeholder="mistralai/Mistral-Nemo-Instruct-2407, google-bert/bert-base-uncased",
                  on_change=bind("compare_hub", lambda: ", ".join(n.removeprefix(HUB_PREFIX) for n in compare.catalog if n.startswith(HUB_PREFIX)),
                                 hub_written),
                  help="Only tokenizer files are fetched (never weights), through huggingface_hub's cache on this server.")
    result = []
    for name in names[:limit]:
        if name.startswith(HUB_PREFIX):
            from tokviz.errors import TokvizError

            try:
                result.append(FileTokenizer(name.removeprefix(HUB_PREFIX), hub_tokenizer(name.removeprefix(HUB_PREFIX)), name))
            except TokvizError as error:
                st.error(md_escape(str(error)))
            continue
        if name == SESSION_CHOICE:
            if session is not None:
                request = workspace.train.trained
                result.append(FileTokenizer("This session's tokenizer", session[0], f"session:{hash(request)}:{session[0].get_vocab_size()}"))
            continue
        tokenizer, key = chosen(CHOICE_PREFIX + name)
        if tokenizer is not None:
            result.append(FileTokenizer(name, tokenizer, key))
    return result


def compare_shortcut(workspace: Any) -> None:
    """Train's button: open Compare with this session's tokenizer beside Llama 3 and Tekken, on this corpus."""
    from tokviz.catalog import available

    names = {item.name for item in available()}
    wanted = [name for name in SHORTCUT_ENTRIES if name in names]
    if not wanted:
        return
    label = "Compare with " + " and ".join(name.split(" (")[0] for name in wanted)

    def go() -> None:
        workspace.compare.catalog = [SESSION_CHOICE, *wanted]
        st.session_state.pop("compare_catalog", None)

    if st.button(label, key="train_compare_catalog", icon=":material/compare_arrows:", on_click=go,
                 help="The Compare page with this tokenizer beside " + " and ".join(wanted) + ", on this corpus."):
        st.switch_page("pages/compare.py")
