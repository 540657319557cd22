"""The built-in catalog: entries from installed packages, encodings identical to the authors' code.

Parity runs each entry and its authors' tokenizer (``llama_models``' ``Tokenizer``, ``mistral_common``'s
``Tekkenizer`` and ``SentencePieceTokenizer``) on the shared corpora (lines and whole blocks) and
multilingual lines; skipped when a package or the shared corpora are absent.
"""

from __future__ import annotations

from functools import cache

import pytest

from tokviz import catalog

MULTILINGUAL = (
    "The quick brown fox jumps over the lazy dog.",
    "Der schnelle braune Fuchs springt über den faulen Hund — Größe, Maß.",
    "Le cœur a ses raisons que la raison ne connaît point.",
    "Съешь же ещё этих мягких французских булок, да выпей чаю.",
    "Ἐν ἀρχῇ ἦν ὁ λόγος, καὶ ὁ λόγος ἦν πρὸς τὸν θεόν.",
    "中文分词测试，包括标点符号。",
    "日本語のテキストとカタカナ、ひらがな、漢字。",
    "한국어 문장입니다. 짧은 테스트!",
    "مرحبا بالعالم، كيف حالك اليوم؟",
    "שלום עולם, מה שלומך?",
    "नमस्ते दुनिया, यह एक परीक्षण है।",
    "สวัสดีชาวโลก นี่คือการทดสอบ",
    "Tiếng Việt có dấu: Xin chào thế giới!",
    "👩‍👩‍👧‍👦 family, 👍🏽 thumbs, 🇫🇷 flag, 🙂",
    "def f(x):\n    return x**2  # square\n\n\tindented\ttabs",
    "Numbers 1234567 3.14159 1,000,000 and 2024-07-18T12:00Z",
    "I'M SHOUTING, they'll've, we'd, it's, DON'T",
    "  leading and trailing spaces  ",
    "multiple    spaces\n\n\nand newlines\r\n",
    "special-token text: <s> </s> [INST] hi [/INST] <|begin_of_text|> <|eot_id|> <unk>",
    "",
)



@cache
def _pair(name: str):
    return catalog.load(name), catalog.reference_encoder(name)


def _needs(name: str) -> None:
    found = catalog.ENTRIES[name]
    pytest.importorskip(found.module)
    if found.kind == "sentencepiece":
        pytest.importorskip("sentencepiece")


def _parity(name: str, texts) -> None:
    _needs(name)
    tokenizer, reference = _pair(name)
    mismatches = [(text[:60], tokenizer.encode(text).ids[:12], reference(text)[:12])
                  for text in texts if tokenizer.encode(text).ids != reference(text)]
    assert mismatches == []


ENTRY_PARAMS = [entry.name for entry in catalog.CATALOG]


@pytest.mark.parametrize("name", ENTRY_PARAMS)
def test_multilingual_lines_encode_as_the_authors_code(name, hard_strings):
    _parity(name, MULTILINGUAL + tuple(hard_strings))


@pytest.mark.parametrize("name", ENTRY_PARAMS)
def test_shared_corpora_encode_as_the_authors_code(name, shared_corpus_lines, read_shared_corpus):
    from tests.conftest import SHARED_CORPUS_FILES

    blocks = []
    for file_name in SHARED_CORPUS_FILES:
        text = read_shared_corpus(file_name)
        middle = len(text) // 2
        blocks += [text[:20_000], text[middle : middle + 20_000]]  # whole stretches: newlines, blank lines, indents
    _parity(name, list(shared_corpus_lines) + blocks)


def test_worked_examples_to_the_id():
    pytest.importorskip("llama_models")
    pytest.importorskip("mistral_common")
    assert _pair("Llama 3")[0].encode("Hello world").ids == [128000, 9906, 1917]
    assert _pair("Tekken (Mistral NeMo)")[0].encode("Hello world").ids == [1, 22177, 4304]
    # The text of a special token is text, as the authors' encode reads it.
    assert _pair("Llama 3")[0].encode("<|eot_id|>").ids == [128000, 27, 91, 68, 354, 851, 91, 29]


def test_every_entry_is_listed_with_package_version_licence_and_description():
    pytest.importorskip("llama_models")
    pytest.importorskip("mistral_common")
    listed = {item.name: item for item in catalog.available()}
    assert {"Llama 3", "Llama 4", "Mistral v1", "Mistral v3", "Tekken (Mistral NeMo)"} <= set(listed)
    llama = listed["Llama 3"]
    assert llama.entry.package == "llama-models" and llama.version == catalog.package_version("llama-models") != ""
    assert "Llama 3 Community License Agreement" in llama.licence
    assert listed["Tekken (Mistral NeMo)"].licence == "Apache-2.0"
    assert all(item.entry.description and "\n" not in item.entry.description for item in listed.values())
    assert catalog.missing() == []


def test_a_missing_package_removes_its_entries_and_says_what_to_install(monkeypatch):
    monkeypatch.setattr(catalog, "_installed", lambda module: module != "llama_models")
    assert [item.name for item in catalog.available() if item.entry.family == "Llama"] == []
    (missing,) = catalog.missing()
    assert missing.entries == ("Llama 3", "Llama 4")
    assert "python3 -m pip install llama-models" in missing.message
    with pytest.raises(catalog.CatalogError, match="pip install llama-models"):
        catalog.load("Llama 3")


def test_an_unknown_name_is_refused_with_the_known_names():
    with pytest.raises(catalog.CatalogError, match="no tokenizer called 'GPT-5'.*Llama 3"):
        catalog.entry("GPT-5")


def test_nothing_is_downloaded(monkeypatch):
    """Loading reads the installed package only: any socket use fails the test."""
    pytest.importorskip("mistral_common")
    import socket

    def refuse(*args, **kwargs):
        raise AssertionError("the catalog opened a network connection")

    monkeypatch.setattr(socket.socket, "connect", refuse)
    assert catalog.load("Tekken (Pixtral)").get_vocab_size() == 131072


def test_tekken_default_special_tokens_are_the_packages():
    pytest.importorskip("mistral_common")
    from mistral_common.tokens.tokenizers.tekken import Tekkenizer

    from tokviz.tekken import DEFAULT_SPECIAL_TOKENS

    assert DEFAULT_SPECIAL_TOKENS == tuple(str(token["token_str"]) for token in Tekkenizer.DEPRECATED_SPECIAL_TOKENS)
