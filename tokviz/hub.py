"""Tokenizers from the Hugging Face Hub by repository id: ``tokviz.hub.load("meta-llama/Llama-3.1-8B")``.

Through the ``huggingface_hub`` library (never raw HTTP), so its cache (``HF_HOME`` / ``HF_HUB_CACHE``),
its token (``HF_TOKEN``, or ``huggingface-cli login``), its endpoint (``HF_ENDPOINT``) and offline mode
(``HF_HUB_OFFLINE=1``) all apply as they do for ``transformers``.

Only tokenizer files are fetched, never weights: the first of these the repository holds, in order —
``tokenizer.json``; Mistral's ``tekken.json``; ``vocab.json`` + ``merges.txt``; ``vocab.txt``;
``tokenizer.model`` / ``spiece.model`` / ``sentencepiece.bpe.model``. Each file's size is asked first
(a HEAD request) and refused above :data:`tokviz.limits.MAX_UPLOAD_BYTES` before anything is downloaded;
the bytes then go through the same guarded readers as an upload (:func:`tokviz.loaders.load_bytes`).

Offline (no network, or ``HF_HUB_OFFLINE=1``) the files already in the cache are used; a repository that
is gated, private, missing, or holds no tokenizer file gets a sentence saying so and what to do.

>>> parse_repo_id(" meta-llama/Llama-3.1-8B ")
('meta-llama/Llama-3.1-8B', None)
>>> parse_repo_id("mistralai/Mistral-Nemo-Instruct-2407@main")
('mistralai/Mistral-Nemo-Instruct-2407', 'main')
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from tokviz.errors import TokvizError

#: The tokenizer files looked for, in order; a group's files are needed together.
TOKENIZER_FILES: tuple[tuple[str, ...], ...] = (
    ("tokenizer.json",),
    ("tekken.json",),
    ("vocab.json", "merges.txt"),
    ("vocab.txt",),
    ("tokenizer.model",),
    ("spiece.model",),
    ("sentencepiece.bpe.model",),
)

_REPO_ID = re.compile(r"^(?:[A-Za-z0-9][\w.-]{0,95}/)?[A-Za-z0-9][\w.-]{0,95}$")


class HubError(TokvizError):
    """A Hub repository whose tokenizer cannot be read, with a sentence saying why and what to do."""


@dataclass(frozen=True, slots=True)
class HubFiles:
    """The tokenizer files fetched for a repository: their names and bytes, and whether they came from the cache only."""

    repo_id: str
    revision: str | None
    files: tuple[tuple[str, bytes], ...]
    from_cache_only: bool = False


def parse_repo_id(text: str) -> tuple[str, str | None]:
    """``"owner/name"`` or ``"owner/name@revision"`` -> ``(repo id, revision or None)``; a bad id raises :class:`HubError`."""
    text = text.strip().removeprefix("https://huggingface.co/")
    repo_id, _, revision = text.partition("@")
    if not _REPO_ID.match(repo_id) or ".." in repo_id or repo_id.endswith((".", "-")):
        raise HubError(f"{repo_id[:100]!r} is not a Hugging Face repository id; write it as owner/name, e.g. meta-llama/Llama-3.1-8B.")
    if revision and not re.match(r"^[\w./-]{1,100}$", revision):
        raise HubError(f"{revision[:100]!r} is not a revision (a branch, tag or commit hash).")
    return repo_id, revision or None


def _is_offline(error: BaseException) -> bool:
    """Whether an error means the Hub could not be reached (offline mode, DNS, refused, timeout)."""
    from huggingface_hub.errors import HfHubHTTPError, OfflineModeIsEnabled

    if isinstance(error, OfflineModeIsEnabled):
        return True
    if isinstance(error, HfHubHTTPError):
        return False
    module = type(error).__module__
    return isinstance(error, (ConnectionError, TimeoutError)) or module.startswith(("httpx", "httpcore", "requests", "urllib3"))


def _explain(error: BaseException, repo_id: str, revision: str | None) -> HubError:
    """The sentence for a Hub error."""
    from huggingface_hub.errors import GatedRepoError, HfHubHTTPError, RepositoryNotFoundError, RevisionNotFoundError

    if isinstance(error, GatedRepoError):
        return HubError(f"{repo_id} is gated: accept its licence on https://huggingface.co/{repo_id} with your account, then "
                        "give this server your token (the HF_TOKEN environment variable, or `huggingface-cli login`).")
    if isinstance(error, RepositoryNotFoundError):
        return HubError(f"The Hub has no repository {repo_id} that this server may read: check the name, or if it is private "
                        "give this server a token that can read it (HF_TOKEN).")
    if isinstance(error, RevisionNotFoundError):
        return HubError(f"{repo_id} has no revision {revision!r} (a branch, tag or commit hash).")
    if isinstance(error, HfHubHTTPError):
        status = getattr(getattr(error, "response", None), "status_code", None)
        if status in (401, 403):
            return HubError(f"The Hub refused access to {repo_id} ({status}): give this server a token that can read it (HF_TOKEN).")
        return HubError(f"The Hub answered with an error for {repo_id} ({status or 'no status'}); try again later.")
    return HubError(f"The Hub could not be reached for {repo_id} ({type(error).__name__}), and its cache on this server holds "
                    "no tokenizer files for it: connect this server to the internet, or fetch them once while online.")


def _cached(repo_id: str, revision: str | None) -> HubFiles | None:
    """The first group of tokenizer files the local cache holds for the repository (no network)."""
    from pathlib import Path

    from huggingface_hub import try_to_load_from_cache

    for group in TOKENIZER_FILES:
        paths = [try_to_load_from_cache(repo_id, name, revision=revision) for name in group]
        if all(isinstance(path, str) for path in paths):
            return HubFiles(repo_id, revision, tuple((name, Path(path).read_bytes()) for name, path in zip(group, paths)), True)
    return None


def fetch(repo_id: str, revision: str | None = None) -> HubFiles:
    """The repository's tokenizer files (the first group of :data:`TOKENIZER_FILES` it holds), each
    size-checked before its download; from the cache when the Hub cannot be reached."""
    from pathlib import Path

    from huggingface_hub import get_hf_file_metadata, hf_hub_download, hf_hub_url
    from huggingface_hub.errors import EntryNotFoundError

    from tokviz.loaders import check_upload_size

    try:
        for group in TOKENIZER_FILES:
            sizes = {}
            try:
                for name in group:
                    sizes[name] = get_hf_file_metadata(hf_hub_url(repo_id, name, revision=revision)).size
            except EntryNotFoundError:
                continue
            for name, size in sizes.items():
                check_upload_size(f"{repo_id}/{name}", size or 0)
            files = []
            for name in group:
                path = Path(hf_hub_download(repo_id, name, revision=revision))
                check_upload_size(f"{repo_id}/{name}", path.stat().st_size)  # the server's size may have lied
                files.append((name, path.read_bytes()))
            return HubFiles(repo_id, revision, tuple(files))
    except TokvizError:
        raise
    except Exception as error:  # noqa: BLE001 - the library's errors become sentences; unknown ones too
        if _is_offline(error):
            cached = _cached(repo_id, revision)
            if cached is not None:
                return cached
        raise _explain(error, repo_id, revision) from None
    raise HubError(f"{repo_id} holds no tokenizer file tokviz reads ({', '.join(' + '.join(group) for group in TOKENIZER_FILES)}); "
                   "it may keep its tokenizer in another repository (the base model's).")


def load(repo_id: str, revision: str | None = None, *, bounded: bool = False) -> Any:
    """A tokviz Tokenizer from a Hub repository id (``"owner/name"`` or ``"owner/name@revision"``).

    ``bounded=True`` (the pages: any repository is anyone's upload) reads the fetched files in a child process
    stopped past the server's time and memory bounds (:func:`tokviz.bounded.call`); the download stays here.

    >>> load("not a repo")
    Traceback (most recent call last):
        ...
    tokviz.hub.HubError: 'not a repo' is not a Hugging Face repository id; write it as owner/name, e.g. meta-llama/Llama-3.1-8B.
    """
    from tokviz.loaders import load_bytes

    parsed, at = parse_repo_id(repo_id)
    fetched = fetch(parsed, revision or at)
    (name, data), *rest = fetched.files
    if bounded:
        from tokviz import bounded as worker

        return worker.call(load_bytes, name, data, name=name, companion=rest[0] if rest else None)
    return load_bytes(name, data, companion=rest[0] if rest else None)


__all__ = ["TOKENIZER_FILES", "HubError", "HubFiles", "fetch", "load", "parse_repo_id"]
