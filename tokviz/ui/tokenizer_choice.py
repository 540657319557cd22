"""The tokenizer the Pipeline and Inspect pages look at: the session's, a preset trained on the
sample, or uploaded tokenizer files (tokenizer.json, .model, .tiktoken, vocab.txt, vocab.json +
merges.txt, read by ``tokviz.loaders``) — chosen in one selectbox bound to the workspace."""

from __future__ import annotations

from typing import Any

import streamlit as st

from tokviz.errors import TokvizError
from tokviz.ui import catalog_choice
from tokviz.ui.shell import md_escape, show_error
from tokviz.ui.training import session_tokenizer, tokenizer_at, train_with_progress, trained_size
from tokviz.ui.workspace import bind
from tokviz.workspace import SESSION_TOKENIZER, UPLOADED_TOKENIZER, Workspace

#: Vocab size of the presets the Pipeline and Inspect pages train on the built-in sample
#: (the Train page's default, so both share its cached training).
SAMPLE_PRESET_VOCAB = 1000


def preset_on_sample(preset: str) -> tuple[Any, int]:
    """The preset trained on the built-in sample at :data:`SAMPLE_PRESET_VOCAB`, and its trained size."""
    from tokviz.corpus import corpus_hash
    from tokviz.presets import PRESETS
    from tokviz.samples import load_sample
    from tokviz.ui.corpus_input import corpus_overview
    from tokviz.ui.training import request_for

    sample = load_sample()
    corpus_key = corpus_hash(sample)
    split, _ = corpus_overview(corpus_key, _text=sample)
    request = request_for(corpus_key, PRESETS[preset].build(), SAMPLE_PRESET_VOCAB)
    history = train_with_progress(request, split.train_lines)
    size = trained_size(history)
    return tokenizer_at(request, size, history), size


def preset_size_if_trained(preset: str) -> int | None:
    """The size a preset trained to on the sample, if that training is in the cache (else ``None``: no guess)."""
    from tokviz.corpus import corpus_hash
    from tokviz.presets import PRESETS
    from tokviz.samples import load_sample
    from tokviz.ui.training import request_for, training_of

    history = training_of(request_for(corpus_hash(load_sample()), PRESETS[preset].build(), SAMPLE_PRESET_VOCAB))
    return None if history is None else trained_size(history)


def tokenizer_choice(workspace: Workspace, page: str, allow_upload: bool = False) -> tuple[Any | None, str]:
    """A selectbox (key ``{page}_tokenizer``) over the session's tokenizer, the presets trained on
    the sample and, with ``allow_upload``, an uploaded tokenizer.json (uploader key ``{page}_tokenizer_file``).

    ``page`` is ``"pipeline"`` or ``"inspect"`` (the workspace section that holds the choice).
    Returns ``(tokenizer or None, a cache key naming the choice)``.
    """
    from tokviz.presets import PRESETS, preset_label

    state = getattr(workspace, page)
    key = f"{page}_tokenizer"
    session = session_tokenizer(workspace)
    options: dict[str, str] = {}
    if allow_upload:
        options[UPLOADED_TOKENIZER] = "The uploaded tokenizer files (the box above: tokenizer.json, .model, .tiktoken, vocab.txt, vocab.json + merges.txt)"
    if session is not None:
        options[SESSION_TOKENIZER] = session[1]
    for name in PRESETS:
        options[name] = f"{preset_label(name, preset_size_if_trained(name))}, trained on the sample"
    options |= catalog_choice.catalog_options()  # real tokenizers from installed packages, by family
    options |= catalog_choice.hub_options(state.tokenizer)  # and any Hub repository, by id
    if state.tokenizer not in options:  # nothing trained yet, or no uploads on this page
        state.tokenizer = SESSION_TOKENIZER if session is not None else next(iter(PRESETS))
        st.session_state.pop(key, None)
    upload = None
    if allow_upload:  # the upload box is there at once (the page says "Upload a tokenizer"), not behind an option
        seen_key = f"_{key}_files_seen"
        upload = _uploaded(state.files, f"{key}_file", hint=False)
        if len(state.files) > st.session_state.get(seen_key, len(state.files)):  # a new upload: show it
            state.tokenizer = UPLOADED_TOKENIZER
        st.session_state[seen_key] = len(state.files)

    def write(value: str) -> None:
        state.tokenizer = value

    choice = st.selectbox("Tokenizer", list(options), key=key, format_func=options.__getitem__,
                          on_change=bind(key, lambda: state.tokenizer, write))
    catalog_choice.missing_note()  # a catalog package not installed: what to install
    if choice == UPLOADED_TOKENIZER and upload is not None and upload[0] is None and state.files:
        # Every uploaded file was refused (its sentence is above): the page goes on with another tokenizer.
        choice = SESSION_TOKENIZER if session is not None else next(iter(PRESETS))
        st.info(f"Showing {md_escape(options[choice])} instead; upload another file, or pick a tokenizer above.")
    if choice == SESSION_TOKENIZER and session is not None:
        request = workspace.train.trained
        return session[0], f"session:{hash(request)}:{session[0].get_vocab_size()}"
    if choice in PRESETS:
        tokenizer, _ = preset_on_sample(choice)
        return tokenizer, f"preset:{choice}"
    if choice.startswith(catalog_choice.CHOICE_PREFIX):
        return catalog_choice.chosen(choice)
    if choice.startswith(catalog_choice.HUB_PREFIX):
        return catalog_choice.hub_chosen(state, choice, key)
    if upload is not None:
        if upload[0] is None:
            st.info("Upload a tokenizer file above, or pick another tokenizer.")
        return upload
    return _uploaded(state.files, f"{key}_file")


def _uploaded(files: list, key: str, hint: bool = True) -> tuple[Any | None, str]:
    """The tokenizer of the files uploaded for this page (kept in the workspace across pages)."""
    from tokviz.ui.tokenizer_files import tokenizer_files

    try:
        loaded = tokenizer_files(files, key, limit=1)
    except TokvizError as error:
        show_error(error)
        return None, ""
    if not loaded:
        if not files and hint:
            st.info("Upload a tokenizer file, or pick a tokenizer above.")
        return None, ""
    if hint:
        st.caption(f"Showing {md_escape(loaded[0].name)}.")
    return loaded[0].tokenizer, loaded[0].key


@st.cache_resource(max_entries=4, show_spinner=False)
def vocab_frame_cached(choice_key: str, _tokenizer: Any) -> Any:
    """The vocab browser's table of one tokenizer, built once (50,000 rows take a moment)."""
    from tokviz.inspect import vocab_frame

    return vocab_frame(_tokenizer)
