"""The built-in catalog: real tokenizers that installed packages ship, read without downloading anything.

Two packages made by the tokenizers' authors carry their files:

- ``llama-models`` (Meta): Llama 3's and Llama 4's ``tokenizer.model``, tiktoken rank files whose
  split pattern and special tokens live in ``llama_models.llama3.tokenizer.Tokenizer`` /
  ``llama_models.llama4.tokenizer.Tokenizer`` — read from those classes, so they are the package's own;
- ``mistral-common`` (Mistral AI): the SentencePiece models v1, v2, v3, v7 and the Tekken JSON files
  of Mistral NeMo (``tekken_240718.json``) and Pixtral (``tekken_240911.json``).

Each entry encodes as its authors' code does with a BOS token and no EOS (``Tokenizer.encode(text,
bos=True, eos=False)`` in both packages), reading the text of a special token as text, as that
code does:

>>> [entry.name for entry in CATALOG][:3]
['Llama 3', 'Llama 4', 'Mistral v1']
>>> tok = load("Llama 3")                                          # doctest: +SKIP
>>> tok.encode("Hello world").ids                                  # doctest: +SKIP
[128000, 9906, 1917]

A package that is not installed removes its entries; :func:`missing` says what to install. Nothing
is downloaded: the files are read from the installed packages (``importlib.resources``), through the
same guarded readers and :mod:`tokviz.limits` checks as an upload.

What this leaves out: the chat/instruct layers (``[INST]`` templates, tool calls, images), which
are not tokenizers, and Llama's cut of runs over 25,000 characters (see :mod:`tokviz.tiktoken_format`).
"""

from __future__ import annotations

import importlib
import importlib.metadata
import importlib.util
import re
from dataclasses import dataclass
from importlib import resources
from typing import Any, Callable

from tokviz.errors import TokvizError

#: The prefix that marks a catalog choice in a page's tokenizer choice and in links: ``catalog:Llama 3``.
CHOICE_PREFIX = "catalog:"


class CatalogError(TokvizError):
    """A catalog entry that is unknown, or whose package is not installed, with a sentence saying what to do."""


@dataclass(frozen=True, slots=True)
class CatalogEntry:
    """One tokenizer of the catalog: where its file is, how to read it, how its authors' code encodes."""

    name: str  # what the pages and links call it
    family: str  # the select box groups by it
    package: str  # the distribution on PyPI (``pip install <package>``)
    module: str  # its import name
    resource: str  # the file, inside the package
    kind: str  # "llama" (tiktoken ranks + the package's Tokenizer class), "tekken", "sentencepiece"
    description: str  # one line
    reference: str  # the authors' class that encodes with it (for the parity tests and the page's note)


@dataclass(frozen=True, slots=True)
class AvailableEntry:
    """An entry whose package is installed: with that package's version and licence as it states it."""

    entry: CatalogEntry
    version: str
    licence: str

    @property
    def name(self) -> str:
        return self.entry.name

    @property
    def label(self) -> str:
        """``'Llama 3 — llama-models 0.3.0'``."""
        return f"{self.entry.name} — {self.entry.package} {self.version}"


@dataclass(frozen=True, slots=True)
class MissingPackage:
    """A package the catalog would read, not installed here: its entries and the sentence saying what to install."""

    package: str
    entries: tuple[str, ...]

    @property
    def message(self) -> str:
        return (f"{', '.join(self.entries)} need the package {self.package}, which is not installed here: "
                f"run `python3 -m pip install {self.package}` (or `pip install -r requirements.txt`) and restart the app.")


CATALOG: tuple[CatalogEntry, ...] = (
    CatalogEntry("Llama 3", "Llama", "llama-models", "llama_models", "llama3/tokenizer.model", "llama",
                 "Meta's Llama 3 / 3.1 / 3.2 / 3.3: byte-level BPE, 128,000 tiktoken ranks and 256 special tokens.",
                 "llama_models.llama3.tokenizer.Tokenizer"),
    CatalogEntry("Llama 4", "Llama", "llama-models", "llama_models", "llama4/tokenizer.model", "llama",
                 "Meta's Llama 4 (Scout, Maverick): byte-level BPE, 200,000 tiktoken ranks, o200k's split pattern, 1,135 special tokens.",
                 "llama_models.llama4.tokenizer.Tokenizer"),
    CatalogEntry("Mistral v1", "Mistral", "mistral-common", "mistral_common", "data/tokenizer.model.v1", "sentencepiece",
                 "Mistral 7B / Mixtral 8x7B: SentencePiece BPE with byte fallback, 32,000 pieces.",
                 "mistral_common.tokens.tokenizers.sentencepiece.SentencePieceTokenizer"),
    CatalogEntry("Mistral v2", "Mistral", "mistral-common", "mistral_common", "data/mistral_instruct_tokenizer_240216.model.v2",
                 "sentencepiece", "Mixtral 8x22B / Mistral Large (2024-02): SentencePiece BPE, 32,768 pieces with control tokens.",
                 "mistral_common.tokens.tokenizers.sentencepiece.SentencePieceTokenizer"),
    CatalogEntry("Mistral v3", "Mistral", "mistral-common", "mistral_common", "data/mistral_instruct_tokenizer_240323.model.v3",
                 "sentencepiece", "Mistral 7B v0.3 / Codestral (2024-03): SentencePiece BPE, 32,768 pieces with tool-call tokens.",
                 "mistral_common.tokens.tokenizers.sentencepiece.SentencePieceTokenizer"),
    CatalogEntry("Mistral v7", "Mistral", "mistral-common", "mistral_common", "data/mistral_instruct_tokenizer_241114.model.v7",
                 "sentencepiece", "Mistral Large 2411 (2024-11): SentencePiece BPE, 32,768 pieces with system-prompt tokens.",
                 "mistral_common.tokens.tokenizers.sentencepiece.SentencePieceTokenizer"),
    CatalogEntry("Tekken (Mistral NeMo)", "Mistral", "mistral-common", "mistral_common", "data/tekken_240718.json", "tekken",
                 "Mistral NeMo 12B (2024-07): Tekken, tiktoken-style byte-level BPE, 130,072 ranks after 1,000 special ids.",
                 "mistral_common.tokens.tokenizers.tekken.Tekkenizer"),
    CatalogEntry("Tekken (Pixtral)", "Mistral", "mistral-common", "mistral_common", "data/tekken_240911.json", "tekken",
                 "Pixtral 12B (2024-09): Tekken, 130,072 ranks after 1,000 special ids (its image settings are not read).",
                 "mistral_common.tokens.tokenizers.tekken.Tekkenizer"),
)

#: Every entry by name (installed or not).
ENTRIES: dict[str, CatalogEntry] = {entry.name: entry for entry in CATALOG}


def _installed(module: str) -> bool:
    return importlib.util.find_spec(module) is not None


def package_version(package: str) -> str:
    """The installed version of a distribution (``'0.3.0'``), or ``''`` when it is not installed."""
    try:
        return importlib.metadata.version(package)
    except importlib.metadata.PackageNotFoundError:
        return ""


def package_licence(entry: CatalogEntry) -> str:
    """The licence as the package states it: its metadata's licence field, else its LICENSE file; for
    llama-models, whose LICENSE only points to a README, also the agreement its tokenizer module names.

    >>> package_licence(ENTRIES["Tekken (Mistral NeMo)"])                # doctest: +SKIP
    'Apache-2.0'
    """
    try:
        metadata = importlib.metadata.metadata(entry.package)
    except importlib.metadata.PackageNotFoundError:
        return ""
    stated = metadata.get("License-Expression") or ""
    if not stated and (field := metadata.get("License")) and len(field) < 80:
        stated = field
    if not stated:
        classifiers = [c.split("::")[-1].strip() for c in metadata.get_all("Classifier") or [] if c.startswith("License ::")]
        stated = ", ".join(classifiers)
    if not stated:
        files = [f for f in importlib.metadata.files(entry.package) or [] if f.name.upper().startswith("LICENSE")]
        if files:
            text = files[0].locate().read_text(encoding="utf-8", errors="replace").strip()
            stated = text if len(text) < 200 else text.splitlines()[0]
    agreement = _module_agreement(entry)
    return f"{agreement} ({stated})" if agreement and stated else agreement or stated or "not stated by the package"


def _module_agreement(entry: CatalogEntry) -> str:
    """The licence agreement a tokenizer module names in its header ("... the terms of the Llama 3 Community License Agreement.")."""
    module_name = entry.reference.rsplit(".", 1)[0]
    try:
        spec = importlib.util.find_spec(module_name)
    except (ImportError, ValueError):
        return ""
    if spec is None or not spec.origin:
        return ""
    try:
        with open(spec.origin, encoding="utf-8") as source:
            head = source.read(2000)
    except OSError:
        return ""
    found = re.search(r"terms of the ([A-Z][\w .]+?(?:License|Agreement)[\w ]*)", head)
    return found.group(1).strip() if found else ""


def available() -> list[AvailableEntry]:
    """The entries whose package is installed, in catalog order, each with its package's version and licence."""
    return [AvailableEntry(entry, package_version(entry.package), package_licence(entry))
            for entry in CATALOG if _installed(entry.module)]


def missing() -> list[MissingPackage]:
    """One record per catalog package that is not installed (empty when all are)."""
    packages: dict[str, list[str]] = {}
    for entry in CATALOG:
        if not _installed(entry.module):
            packages.setdefault(entry.package, []).append(entry.name)
    return [MissingPackage(package, tuple(names)) for package, names in packages.items()]


def entry(name: str) -> CatalogEntry:
    """The entry called ``name``; an unknown name raises :class:`CatalogError` listing the known ones."""
    found = ENTRIES.get(name)
    if found is None:
        raise CatalogError(f"The catalog has no tokenizer called {name!r}; it has {', '.join(ENTRIES)}.")
    if not _installed(found.module):
        raise CatalogError(MissingPackage(found.package, (found.name,)).message)
    return found


def file_bytes(name: str) -> bytes:
    """The bytes of an entry's file, read from its installed package (never downloaded)."""
    found = entry(name)
    return resources.files(found.module).joinpath(found.resource).read_bytes()


def file_name(name: str) -> str:
    """The file's own name: ``file_name("Llama 3") == 'tokenizer.model'``."""
    return ENTRIES[name].resource.rsplit("/", 1)[-1]


def load(name: str) -> Any:
    """A new tokviz Tokenizer for the entry ``name`` (a second or two for the 128k-200k rank files)."""
    found = entry(name)
    data = file_bytes(name)
    if found.kind == "llama":
        from tokviz.tiktoken_format import parse_tiktoken_ranks
        from tokviz.tiktoken_format import tokenizer_from_ranks

        return tokenizer_from_ranks(parse_tiktoken_ranks(data), llama_spec(name))
    if found.kind == "tekken":
        from tokviz.tekken import tokenizer_from_tekken

        return tokenizer_from_tekken(data, found.name)
    from tokviz.loaders import load_bytes
    from tokviz.tiktoken_format import add_bos_template

    tokenizer = load_bytes(file_name(name) + ".model" if not file_name(name).endswith(".model") else file_name(name), data)
    # mistral-common's SentencePieceTokenizer.encode: sentencepiece's encode (a control piece's
    # text is text) with the BOS id first.
    tokenizer.encode_special_tokens = True
    bos = tokenizer.token_to_id("<s>")
    if bos is not None and tokenizer.encode("a").ids[:1] != [bos]:
        add_bos_template(tokenizer, "<s>")
    return tokenizer


def llama_spec(name: str) -> Any:
    """The pattern and special tokens of a Llama entry, as the package's ``Tokenizer`` class sets them.

    The class is built once on the package's own file (tiktoken loads it in about half a second):
    its ``special_tokens`` and ``model._pat_str`` are the package's, not a copy kept here.
    """
    from pathlib import Path

    from tokviz.tiktoken_format import TiktokenSpec

    found = entry(name)
    reference = reference_tokenizer(name)
    return TiktokenSpec(
        name=Path(found.resource).parent.name,
        pat_str=reference.model._pat_str,
        special_tokens=tuple(sorted(reference.special_tokens.items(), key=lambda item: item[1])),
        bos_token="<|begin_of_text|>",
    )


def reference_tokenizer(name: str) -> Any:
    """The authors' tokenizer object for an entry (Llama's ``Tokenizer``, Mistral's ``Tekkenizer`` or
    ``SentencePieceTokenizer``, which needs the ``sentencepiece`` package)."""
    found = entry(name)
    module_name, class_name = found.reference.rsplit(".", 1)
    cls = getattr(importlib.import_module(module_name), class_name)
    path = resources.files(found.module).joinpath(found.resource)
    with resources.as_file(path) as real_path:
        if found.kind == "tekken":
            return cls.from_file(real_path)
        if found.kind == "sentencepiece":
            return cls(str(real_path))
        return cls(real_path)


def reference_encoder(name: str) -> Callable[[str], list[int]]:
    """``text -> ids`` by the authors' code, as the catalog's tokenizer encodes (BOS first, no EOS).

    >>> encode = reference_encoder("Llama 3")                          # doctest: +SKIP
    >>> encode("Hello world")                                          # doctest: +SKIP
    [128000, 9906, 1917]
    """
    reference = reference_tokenizer(name)
    return lambda text: list(reference.encode(text, bos=True, eos=False))


__all__ = [
    "CATALOG",
    "CHOICE_PREFIX",
    "ENTRIES",
    "AvailableEntry",
    "CatalogEntry",
    "CatalogError",
    "MissingPackage",
    "available",
    "entry",
    "file_bytes",
    "file_name",
    "llama_spec",
    "load",
    "missing",
    "package_licence",
    "package_version",
    "reference_encoder",
    "reference_tokenizer",
]
