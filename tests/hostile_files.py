"""A corpus of hostile and odd tokenizer files, made by code: ``python tests/hostile_files.py DIR`` writes it.

Each :class:`HostileCase` is one upload (one file, or a GPT-2 pair) and what must come of it:
either it loads and encodes (``expect=None``), or it is refused with a sentence holding ``expect``.
``tests/test_limits.py`` runs every case through ``tokviz.load`` (the script's way in) and through
the Inspect and Compare pages (AppTest), and checks that both give the same sentence, with no
traceback, no ``MemoryError`` and no gigabytes.

The cases are the ones an adversarial pass through the app found (issue 38): numbers of 5,000
digits, lone surrogates, ids of 10**30, thousands of overlapping added tokens, a normalizer
``Sequence`` nested 450 deep, ``Replace`` and ``Prepend`` bombs, padding to 10**9, a regular
expression that backtracks, training histories with a pipeline bomb or a merge list repeated
150 times; and the kinds that were already refused or loaded well, so those stay so.

Nothing here is big: the largest file is the 20-million-character ``Prepend`` (20 MB).
"""

from __future__ import annotations

import base64
import json
import sys
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any


@dataclass(frozen=True)
class HostileCase:
    """One upload and what must come of it."""

    case: str  # an identifier for test ids
    files: tuple[tuple[str, bytes], ...]  # (file name, bytes); two for a GPT-2 pair
    expect: str | None  # a piece of the refusal's sentence; None: it loads and encodes
    kind: str = "tokenizer"  # "tokenizer" (tokviz.load, Inspect and Compare uploads) or "training" (history.json)
    text: str | None = None  # a text to encode after loading (the page's text box), when it matters

    @property
    def name(self) -> str:
        return self.files[0][0]


def _dumps(data: Any) -> bytes:
    # ensure_ascii=True writes a lone surrogate as the escape "\ud800", as a hostile file would.
    return json.dumps(data, ensure_ascii=True).encode("ascii")


def word_level(vocab: dict[str, int] | None = None, **sections: Any) -> dict[str, Any]:
    """A small WordLevel tokenizer.json as a dict (its sections replaced by ``sections``)."""
    vocab = {"[UNK]": 0, "hello": 1, "world": 2, "!": 3} if vocab is None else vocab
    data: dict[str, Any] = {
        "version": "1.0", "truncation": None, "padding": None, "added_tokens": [],
        "normalizer": None, "pre_tokenizer": {"type": "Whitespace"},
        "model": {"type": "WordLevel", "vocab": vocab, "unk_token": "[UNK]"},
        "post_processor": None, "decoder": None,
    }
    data.update(sections)
    return data


def bpe(vocab: dict[str, int] | None = None, merges: list[Any] | None = None, **sections: Any) -> dict[str, Any]:
    vocab = {"h": 0, "e": 1, "l": 2, "o": 3, "he": 4, "ll": 5, "hell": 6, "hello": 7} if vocab is None else vocab
    merges = [["h", "e"], ["l", "l"], ["he", "ll"], ["hell", "o"]] if merges is None else merges
    data = word_level(**sections)
    data["model"] = {"type": "BPE", "dropout": None, "unk_token": None, "continuing_subword_prefix": None,
                     "end_of_word_suffix": None, "fuse_unk": False, "byte_fallback": False, "ignore_merges": False,
                     "vocab": vocab, "merges": merges}
    return data


def unigram(pieces: list[list[Any]] | None = None) -> dict[str, Any]:
    pieces = [["<unk>", 0.0], ["▁hello", -1.0], ["▁", -2.0], ["h", -3.0], ["e", -3.0], ["l", -3.0], ["o", -3.0]] if pieces is None else pieces
    data = word_level()
    data["pre_tokenizer"] = {"type": "Metaspace", "replacement": "▁", "prepend_scheme": "always", "split": True}
    data["model"] = {"type": "Unigram", "unk_id": 0, "vocab": pieces, "byte_fallback": False}
    return data


def added(content: str, token_id: int, special: bool = True) -> dict[str, Any]:
    return {"id": token_id, "content": content, "single_word": False, "lstrip": False, "rstrip": False,
            "normalized": not special, "special": special}


def _nested_sequence(depth: int) -> dict[str, Any]:
    node: dict[str, Any] = {"type": "Lowercase"}
    for _ in range(depth):
        node = {"type": "Sequence", "normalizers": [node]}
    return node


def tiktoken_file(extra: list[bytes] = ()) -> bytes:
    tokens = [bytes([b]) for b in range(256)] + list(extra)
    return b"".join(base64.b64encode(token) + b" %d\n" % rank for rank, token in enumerate(tokens))


def _history(training_merges: int = 40, repeat: int = 1, pipeline: dict[str, str] | None = None) -> bytes:
    """A real history.json of a small BPE training, its merge list repeated ``repeat`` times, its pipeline edited."""
    from tokviz import history_io
    from tokviz.presets import PRESETS
    from tokviz.samples import load_sample
    from tokviz.training import run_training

    config = PRESETS["gpt2"].build()
    history = run_training(config, 257 + training_merges, load_sample().splitlines())
    document = json.loads(history_io.dumps(history, config))
    document["history"]["merges"] = document["history"]["merges"] * repeat
    if pipeline:
        document["pipeline"].update(pipeline)
    return json.dumps(document).encode()


def _charsmap_bomb() -> str:
    """SentencePiece's nmt_nfkc map with every replacement from 'ﬁ''s on made 5,000 x's long (base64)."""
    from tokviz.normalizers import _CharsMap
    from tokviz.sentencepiece.normalizer import charsmap_for_rule

    data = charsmap_for_rule("nmt_nfkc")
    start = len(data) - len(_CharsMap(data).replacements) + _CharsMap(data).first_prefix_value("ﬁ".encode())
    return base64.b64encode(data[:start] + b"x" * 5_000 + b"\0").decode("ascii")


def _sentencepiece_model_with(piece: bytes, replacement: bytes) -> bytes:
    """A small real SentencePiece .model (trained by the ``sentencepiece`` package) with the piece
    ``piece`` swapped for ``replacement`` of the same length (here the CESU-8 bytes of a lone surrogate)."""
    import io

    import sentencepiece

    model = io.BytesIO()
    sentencepiece.SentencePieceTrainer.train(sentence_iterator=iter(["hello world this is a test"] * 50), model_writer=model,
                                             vocab_size=30, hard_vocab_limit=False, minloglevel=2)
    data = model.getvalue()
    at = data.index(b"\x0a" + bytes([len(piece)]) + piece)  # the piece's field: tag, length, bytes
    return data[: at + 2] + replacement + data[at + 2 + len(piece):]


def _digits(count: int) -> str:
    return "9" * count


@cache
def cases() -> tuple[HostileCase, ...]:
    """Every case, refused ones first (see the module's docstring)."""
    from tokviz.sentencepiece.normalizer import charsmap_for_rule

    big_int = _digits(5_000)
    out: list[HostileCase] = []

    # Every file is named after its case (``<case>.json``, ``gpt2-<case>.tiktoken``, ``<case>-vocab.txt``), so
    # a batch of uploads, and the sentences about them, are told apart by name.
    def add(case: str, name: str, data: bytes, expect: str | None, **options: Any) -> None:
        unique = {"tokenizer.json": f"{case}.json", "vocab.txt": f"{case}-vocab.txt"}.get(name)
        if unique is None:
            unique = f"gpt2-{case}.tiktoken" if name.endswith(".tiktoken") else f"{case}{Path(name).suffix}"
        out.append(HostileCase(case, ((unique, data),), expect, **options))

    def pair(case: str, vocab_json: bytes, merges_txt: bytes, expect: str | None, **options: Any) -> None:
        out.append(HostileCase(case, ((f"{case}-vocab.json", vocab_json), (f"{case}-merges.txt", merges_txt)), expect, **options))

    # -------------------------------------------------------------- JSON numbers, strings, ids, depth
    wl = json.dumps(word_level())
    add("int-5000-digits-in-vocab", "tokenizer.json", wl.replace('"hello": 1', f'"hello": {big_int}').encode(),
        "a number of 5,000 digits")
    pair("int-5000-digits-vocab-json", b'{"a": 0, "b": ' + big_int.encode() + b"}", b"#version: 0.2\n", "a number of 5,000 digits")
    add("int-5000-digits-in-padding", "tokenizer.json", wl.replace('"padding": null', f'"padding": {{"strategy": {{"Fixed": {big_int}}}}}').encode(),
        "a number of 5,000 digits")
    add("float-5000-digits", "tokenizer.json", wl.replace('"hello": 1', f'"hello": 1.{big_int}').encode(), "a number of 5,001 digits")
    add("lone-surrogate-in-vocab", "tokenizer.json", _dumps(word_level({"[UNK]": 0, "a\ud800b": 1})), "lone surrogate")
    add("lone-low-surrogate-in-vocab", "tokenizer.json", _dumps(word_level({"[UNK]": 0, "\udc00": 1})), "lone surrogate")
    add("lone-surrogate-in-added-token", "tokenizer.json", _dumps(word_level(added_tokens=[added("<\ud83d>", 4)])), "lone surrogate")
    add("lone-surrogate-in-unigram-piece", "tokenizer.json", _dumps(unigram([["<unk>", 0.0], ["\udfff", -1.0]])), "lone surrogate")
    pair("lone-surrogate-in-vocab-json", _dumps({"\ud800": 0, "a": 1}), b"#version: 0.2\n", "lone surrogate")
    add("id-10e30-in-vocab", "tokenizer.json", _dumps(word_level({"[UNK]": 0, "hello": 10**30})), "id 1,000,000,000,000,000,000,000,000,000,000")
    add("id-negative-in-vocab", "tokenizer.json", _dumps(word_level({"[UNK]": 0, "hello": -5})), "id -5")
    add("id-10e30-in-added-token", "tokenizer.json", _dumps(word_level(added_tokens=[added("<x>", 10**30)])), "id 1,000,000,000,000,000,000,000,000,000,000")
    add("id-10e30-in-template", "tokenizer.json", _dumps(word_level(post_processor={
        "type": "TemplateProcessing", "single": [{"SpecialToken": {"id": "[UNK]", "type_id": 0}}, {"Sequence": {"id": "A", "type_id": 0}}],
        "pair": [{"Sequence": {"id": "A", "type_id": 0}}, {"Sequence": {"id": "B", "type_id": 1}}],
        "special_tokens": {"[UNK]": {"id": "[UNK]", "ids": [10**30], "tokens": ["[UNK]"]}}})),
        "id 1,000,000,000,000,000,000,000,000,000,000")
    pair("id-10e30-vocab-json", _dumps({"a": 0, "b": 10**30}), b"#version: 0.2\n", "id 1,000,000,000,000,000,000,000,000,000,000")
    add("normalizer-sequence-450-deep", "tokenizer.json", _dumps(word_level(normalizer=_nested_sequence(450))), "nested too deeply")
    add("json-100k-deep", "tokenizer.json", b"[" * 100_000 + b"]" * 100_000, "nested too deeply")
    add("json-900-deep-in-model", "tokenizer.json", wl.replace('"hello": 1', '"hello": ' + "[" * 900 + "]" * 900).encode(), "nested too deeply")

    # -------------------------------------------------------------- added tokens
    chains = [c * length for c in "abcde" for length in range(1, 1000)]
    add("added-4999-overlapping", "tokenizer.json", _dumps(word_level(added_tokens=[added(t, 4 + i, False) for i, t in enumerate(chains[:4_995])])),
        None, text="hello aaaa bbbbbbbbbb world")
    add("added-token-500-chars", "tokenizer.json", _dumps(word_level(added_tokens=[added("x" * 500, 4)])), None, text="hello " + "x" * 500)
    add("added-token-1024-chars", "tokenizer.json", _dumps(word_level(added_tokens=[added("y" * 1024, 4)])), None, text="y" * 2000)
    add("added-token-1025-chars", "tokenizer.json", _dumps(word_level(added_tokens=[added("y" * 1025, 4)])), "a token of 1,025 characters")
    add("added-5001-tokens", "tokenizer.json", _dumps(word_level(added_tokens=[added(f"<t{i}>", 4 + i) for i in range(5_001)])), "5,001 added tokens")

    # -------------------------------------------------------------- normalizer output, padding, truncation
    nested_replace = {"type": "Sequence", "normalizers": [
        {"type": "Replace", "pattern": {"String": "a"}, "content": "a" * 2_000},
        {"type": "Replace", "pattern": {"String": "a"}, "content": "a" * 2_000},
        {"type": "Replace", "pattern": {"String": "a"}, "content": "a" * 2_000}]}
    add("replace-bomb-3x2000", "tokenizer.json", _dumps(word_level(normalizer=nested_replace)), "2,000 characters")
    add("replace-bomb-3x1000", "tokenizer.json", _dumps(word_level(normalizer={"type": "Sequence", "normalizers": [
        {"type": "Replace", "pattern": {"String": "e"}, "content": "e" * 1_000}] * 3})), "longer")
    add("precompiled-charsmap-bomb", "tokenizer.json", _dumps(word_level(normalizer={"type": "Precompiled", "precompiled_charsmap": _charsmap_bomb()})),
        "Precompiled would make this text")
    nmt_nfkc = base64.b64encode(charsmap_for_rule("nmt_nfkc")).decode("ascii")
    add("precompiled-nmt-nfkc", "tokenizer.json", _dumps(word_level(normalizer={"type": "Precompiled", "precompiled_charsmap": nmt_nfkc})),
        None, text="ﬁ ① ﷺ hello")
    add("replace-empty-regex-bomb", "tokenizer.json", _dumps(word_level(normalizer={
        "type": "Replace", "pattern": {"Regex": ""}, "content": "z" * 1_000})), "longer")
    add("replace-content-1025", "tokenizer.json", _dumps(word_level(normalizer={
        "type": "Replace", "pattern": {"String": "q"}, "content": "z" * 1_025})), "1,025 characters")
    add("prepend-20-million", "tokenizer.json", _dumps(word_level(normalizer={"type": "Prepend", "prepend": "x" * 20_000_000})),
        "20,000,000 characters")
    add("padding-fixed-1e9", "tokenizer.json", _dumps(word_level(padding={
        "strategy": {"Fixed": 10**9}, "direction": "Right", "pad_to_multiple_of": None, "pad_id": 0, "pad_type_id": 0, "pad_token": "[UNK]"})),
        "1,000,000,000")
    add("padding-multiple-1e9", "tokenizer.json", _dumps(word_level(padding={
        "strategy": "BatchLongest", "direction": "Right", "pad_to_multiple_of": 10**9, "pad_id": 0, "pad_type_id": 0, "pad_token": "[UNK]"})),
        "1,000,000,000")
    add("truncation-1e30", "tokenizer.json", _dumps(word_level(truncation={
        "direction": "Right", "max_length": 10**30, "strategy": "LongestFirst", "stride": 0})), "1,000,000,000,000,000,000,000,000,000,000")
    add("padding-fixed-512", "tokenizer.json", _dumps(word_level(padding={
        "strategy": {"Fixed": 512}, "direction": "Right", "pad_to_multiple_of": None, "pad_id": 0, "pad_type_id": 0, "pad_token": "[UNK]"})), None)
    add("replace-newline-marker", "tokenizer.json", _dumps(word_level(normalizer={
        "type": "Replace", "pattern": {"String": "\n"}, "content": "<n>"})), None, text="hello\nworld\n")
    add("regex-times-out", "tokenizer.json", _dumps(word_level(pre_tokenizer={
        "type": "Split", "pattern": {"Regex": "(a|aa)+$"}, "behavior": "Isolated", "invert": False})), "took longer than 1 s",
        text="a" * 60 + "!")

    # -------------------------------------------------------------- already refused, and must stay so
    add("not-json", "tokenizer.json", b"this is not json at all", "not a valid tokenizer.json")
    add("truncated-json", "tokenizer.json", wl[: len(wl) // 2].encode(), "malformed")
    add("binary-file", "tokenizer.bin", bytes(range(256)) * 4, "not a tokenizer file tokviz recognises")  # (browsers refuse .bin)
    add("binary-as-txt", "vocab.txt", bytes(range(256)) * 4, "not UTF-8")
    add("empty-file", "tokenizer.json", b"", "is empty")
    add("not-utf8", "tokenizer.json", b'{"model": {"vocab": {"\xff": 0}}}', "not UTF-8")
    add("unknown-model", "tokenizer.json", _dumps(word_level() | {"model": {"type": "Magic", "vocab": {}}}), "Magic")
    add("vocab-300001", "tokenizer.json", _dumps(word_level({f"t{i}": i for i in range(300_001)})), "300,001 vocabulary entries")
    add("token-2000-chars", "tokenizer.json", _dumps(word_level({"[UNK]": 0, "w" * 2_000: 1})), "a token of 2,000 characters")
    add("json-3-million-values", "tokenizer.json", b"[" + b"[]," * 3_000_000 + b"[]]", "JSON values")
    add("merge-unknown-token", "tokenizer.json", _dumps(bpe(merges=[["q", "z"]])), "'q'")
    add("unigram-prefix-bomb", "tokenizer.json", _dumps(unigram([["<unk>", 0.0]] + [[f"{i:04d}" + "p" * 1000, -1.0] for i in range(30)])),
        "prefixes")
    add("tiktoken-missing-bytes", "gpt2.tiktoken", b"".join(base64.b64encode(bytes([b])) + b" %d\n" % b for b in range(200)), "lacks 56")
    add("tiktoken-bad-line", "mine.tiktoken", b"aGk= 7\nnot base64 !!\n", "tiktoken")
    add("tiktoken-token-2000-bytes", "gpt2.tiktoken", tiktoken_file([b"z" * 2_000]), "2,000 bytes")
    add("vocab-txt-without-unk", "vocab.txt", b"[PAD]\nhello\nworld\n", "[UNK]")
    out.append(HostileCase("vocab-json-alone", (("alone-vocab.json", b'{"a": 0, "b": 1}'),), "merges.txt"))
    pair("merges-600001", b'{"a": 0, "b": 1, "ab": 2}', b"#version: 0.2\n" + b"a b\n" * 600_001, "600,001 merges")
    pair("gpt2-merge-not-in-vocab", b'{"a": 0, "b": 1, "ab": 2}', b"#version: 0.2\nq z\n", "'q'")
    add("sentencepiece-surrogate-piece", "spm.model", _sentencepiece_model_with(b"\xe2\x96\x81", b"\xed\xa0\x80"), "not UTF-8")
    add("sentencepiece-garbage", "spm.model", b"\x0a\xff\xff\xff\xff\x0f" + bytes(range(200)), "model")

    # -------------------------------------------------------------- loads, and must keep loading
    add("bpe-small", "tokenizer.json", _dumps(bpe()), None, text="hello hello")
    add("unigram-small", "tokenizer.json", _dumps(unigram()), None, text="hello")
    add("markup-in-tokens", "tokenizer.json", _dumps(word_level(
        {"[UNK]": 0, "<script>alert(1)</script>": 1, "<img src=x onerror=alert(2)>": 2},
        added_tokens=[added("<b>**bold**</b>", 3)])), None, text="<script>alert(1)</script> <b>**bold**</b>")
    add("surrogate-pair-escaped", "tokenizer.json", _dumps(word_level({"[UNK]": 0, "\U0001f600": 1})), None, text="\U0001f600")
    add("tiktoken-gpt2-like", "gpt2.tiktoken", tiktoken_file([b"hi", b" hi"]), None, text="hi hi")
    add("vocab-txt", "vocab.txt", b"[PAD]\n[UNK]\n[CLS]\n[SEP]\nhello\n##s\n", None, text="hellos")
    pair("gpt2-pair", b'{"a": 0, "b": 1, "ab": 2}', b"#version: 0.2\na b\n", None, text="ab")

    # -------------------------------------------------------------- training histories (Inspect's "a training")
    out.append(HostileCase("history-merges-repeated-150", (("repeated-history.json", _history(400, repeat=150)),), "merges are numbered in order",
                           kind="training"))
    out.append(HostileCase("history-merges-repeated-twice", (("twice-history.json", _history(400, repeat=2)),), "merges are numbered in order",
                           kind="training"))
    out.append(HostileCase("history-replace-bomb", (("bomb-history.json", _history(pipeline={
        "n0": "Replace", "n0.pattern": "e", "n0.content": "e" * 1_000, "n1": "Replace", "n1.pattern": "e", "n1.content": "e" * 1_000,
    })),), "longer", kind="training"))
    out.append(HostileCase("history-good", (("good-history.json", _history()),), None, kind="training"))
    return tuple(out)


def write(folder: Path) -> list[Path]:
    """Write every case's files under ``folder/<case>/`` (a GPT-2 pair side by side)."""
    written = []
    for case in cases():
        where = folder / case.case
        where.mkdir(parents=True, exist_ok=True)
        for name, data in case.files:
            (where / name).write_bytes(data)
            written.append(where / name)
    return written


if __name__ == "__main__":
    target = Path(sys.argv[1] if len(sys.argv) > 1 else "hostile_files")
    print(f"{len(write(target))} files in {target}")
