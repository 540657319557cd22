"""Pretrained tokenizers from files the user uploads: tokenizer.json, SentencePiece ``.model``,
tiktoken rank files, BERT ``vocab.txt``, GPT-2 ``vocab.json`` + ``merges.txt`` (``tokviz.loaders``).

The uploaded bytes are kept in the session workspace (Streamlit forgets an uploader's files when
a run does not draw it), so a page switch keeps them; links never carry them. Each file is read
once per content (a cache keyed by its digest and, for tiktoken files, the chosen encoding).
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from typing import Any

import streamlit as st

from tokviz.ui.shell import md_escape
from tokviz.workspace import UploadedFile

#: File name endings the uploaders accept (a tiktoken file may have any name: ``cl100k_base.tiktoken``).
SUFFIXES = ["json", "model", "tiktoken", "txt", "bpe"]


@dataclass(frozen=True, slots=True)
class FileTokenizer:
    """A tokenizer read from uploaded files, named by its file."""

    name: str
    tokenizer: Any
    key: str  # a cache key naming its content

    @property
    def byte_level(self) -> bool:
        from tokviz.inspect import is_byte_level

        return is_byte_level(self.tokenizer)


def _digest(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()[:16]


@st.cache_resource(max_entries=16, show_spinner="Reading the tokenizer files…")
def _load_cached(content_key: tuple[tuple[str, str, str], ...], _files: tuple[tuple[str, bytes], ...]) -> list[Any]:
    """``tokviz.loaders.load_uploads`` once per set of file contents and chosen encodings."""
    from tokviz.loaders import load_uploads

    encodings = {name: encoding for name, _, encoding in content_key if encoding}
    return load_uploads(list(_files), tiktoken_encodings_by_file=encodings, bounded=True)  # each read stoppable (tokviz.bounded)


def tokenizer_files(files: list[UploadedFile], key: str, *, limit: int) -> list[FileTokenizer]:
    """An uploader for tokenizer files (key ``{key}``), the files kept in ``files`` (a workspace list).

    Each tiktoken rank file gets a select box for its encoding (split pattern and special tokens),
    guessed from its name or size. A file that cannot be read is named with its reason, and the
    others still load. At most ``limit`` tokenizers are returned, with a note past it.
    """
    from tokviz.loaders import file_kind
    from tokviz.tiktoken_format import guess_tiktoken_encoding, tiktoken_encodings

    def uploaded() -> None:
        chosen = st.session_state.get(key) or []
        files[:] = [UploadedFile(uploaded.name, uploaded.getvalue()) for uploaded in chosen]

    st.file_uploader(
        "Tokenizer files: tokenizer.json, SentencePiece .model, tiktoken ranks (.tiktoken), BERT vocab.txt, GPT-2 vocab.json + merges.txt",
        type=SUFFIXES, accept_multiple_files=True, key=key, on_change=uploaded,
        help="Read in memory, never stored. A vocab.json is paired with the merges.txt uploaded beside it. Links do not carry uploaded files.",
    )
    if not files:
        return []
    encodings = tiktoken_encodings()
    for index, item in enumerate(files):
        try:
            kind = file_kind(item.name, item.data)
        except Exception:  # noqa: BLE001 - an unreadable file is reported by the loader below
            kind = "unknown"
        if kind != "tiktoken":
            continue
        guess = item.encoding or guess_tiktoken_encoding(item.name, item.data.count(b"\n") + 1) or next(iter(encodings))

        def chose(position: int = index, widget: str = f"{key}_encoding_{index}") -> None:
            files[position] = UploadedFile(files[position].name, files[position].data, st.session_state[widget])

        if files[index].encoding != guess:
            files[index] = UploadedFile(item.name, item.data, guess)
        st.session_state.setdefault(f"{key}_encoding_{index}", guess)
        st.selectbox(f"Encoding of {md_escape(item.name)} (its split pattern and special tokens)", list(encodings), key=f"{key}_encoding_{index}",
                     format_func=lambda name: encodings[name].label, on_change=chose)
    content_key = tuple((item.name, _digest(item.data), item.encoding or "") for item in files)
    loaded = _load_cached(content_key, _files=tuple((item.name, item.data) for item in files))
    result = []
    for upload in loaded:
        if upload.tokenizer is None:
            # The sentence names the file already: the same words tokviz.load(path) raises in a script.
            st.error(md_escape(upload.error or f"{upload.name} could not be read."))
            continue
        result.append(FileTokenizer(upload.name, upload.tokenizer, f"file:{upload.name}:{hash(content_key)}"))
    if len(result) > limit:
        st.warning(f"{len(result)} tokenizers were uploaded; this comparison takes {limit} more (8 in all): using the first {limit}.")
        result = result[:limit]
    return result


# --------------------------------------------------------------------------- open a training

#: Where the uploaded history.json is kept (a session key no widget owns: the uploader forgets its
#: file on a page switch, this does not).
TRAINING_UPLOAD = "_opened_training_file"


@st.cache_resource(max_entries=4, show_spinner="Opening the training…")
def _open_training_cached(digest: str, name: str, _data: bytes) -> Any:
    """``tokviz.inspect.open_training`` once per file content (histories are immutable, so shared)."""
    from tokviz import bounded
    from tokviz.inspect import open_training

    return bounded.call(open_training, _data, name, name=name)  # read where it can be stopped


def training_file(key: str) -> tuple[Any, str] | None:
    """An uploader for a ``history.json`` (key ``{key}``); returns ``(OpenedTraining, content key)``.

    The file is size-checked and validated by :func:`tokviz.inspect.open_training` (never
    unpickled, never evaluated); a bad file is named with its reason in ``st.error``.
    """
    from tokviz import limits
    from tokviz.errors import TokvizError

    def uploaded() -> None:
        chosen = st.session_state.get(key)
        st.session_state[TRAINING_UPLOAD] = None if chosen is None else (chosen.name, chosen.getvalue())

    st.file_uploader(
        "A training: history.json, as `python -m tokviz train` writes it",
        type=["json"], key=key, on_change=uploaded,
        help=f"Read in memory, never stored; up to {limits.MAX_UPLOAD_BYTES // (1024 * 1024)} MB. "
        "It holds the whole training (every merge or EM step) and its pipeline.",
    )
    kept = st.session_state.get(TRAINING_UPLOAD)
    if not kept:
        return None
    name, data = kept
    digest = _digest(data)
    try:
        opened = _open_training_cached(digest, name, _data=data)
    except TokvizError as error:
        st.error(md_escape(str(error)))
        return None
    return opened, f"training:{digest}"


def training_opener(workspace: Any, key: str = "train_history_upload") -> None:
    """Train's "Open a training": an uploader for a ``history.json`` (as ``python -m tokviz train`` or
    the Export tab writes it). A good file becomes the page's training (slider at its trained size);
    a bad one is named with its reason and changes nothing."""
    from tokviz import limits
    from tokviz.errors import TokvizError
    from tokviz.ui.training import open_training

    failure = f"{key}_error"

    def uploaded() -> None:
        chosen = st.session_state.get(key)
        st.session_state[failure] = None
        if chosen is None:
            return
        try:
            request = open_training(chosen.name, chosen.getvalue())
        except TokvizError as error:
            st.session_state[failure] = str(error)
            return
        train = workspace.train
        train.trained, train.slider = request, None

    st.file_uploader(
        "Open a training: history.json", type=["json"], key=key, on_change=uploaded,
        help="A training made elsewhere (`python -m tokviz train … --out DIR` writes DIR/history.json): its tokenizer "
        f"at any size on the slider and every view of its training. Read in memory, never stored; up to "
        f"{limits.MAX_UPLOAD_BYTES // (1024 * 1024)} MB.",
    )
    if st.session_state.get(failure):
        st.error(md_escape(st.session_state[failure]), icon=":material/error:")
