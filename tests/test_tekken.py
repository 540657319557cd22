"""Tekken files read as mistral-common reads them; bad and oversized files refused with a sentence."""

from __future__ import annotations

import base64
import json

import pytest

from tokviz import limits, loaders
from tokviz.errors import LimitExceededError, TokvizError
from tokviz.tekken import DEFAULT_SPECIAL_TOKENS, is_tekken, parse_tekken, tokenizer_from_tekken

PATTERN = r"[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n/]*|\s*[\r\n]+|\s+(?!\S)|\s+"


def _file(extra_tokens=(b"he", b"ll", b"hell", b"hello"), specials=None, version="v3", special_count=20, **config):
    vocab = [{"rank": r, "token_bytes": base64.b64encode(bytes([r])).decode(), "token_str": None} for r in range(256)]
    for token in extra_tokens:
        vocab.append({"rank": len(vocab), "token_bytes": base64.b64encode(token).decode(), "token_str": token.decode()})
    data = {"config": {"pattern": PATTERN, "default_vocab_size": len(vocab) + special_count,
                       "default_num_special_tokens": special_count, "version": version, **config}, "vocab": vocab}
    if specials is not None:
        data["special_tokens"] = specials
    return json.dumps(data).encode()


def test_ids_are_ranks_after_the_special_ids_with_bos_first():
    tokenizer = tokenizer_from_tekken(_file())
    encoding = tokenizer.encode("hello hell")
    assert encoding.ids == [1, 259 + 20, 32 + 20, 258 + 20]
    assert encoding.tokens == ["<s>", "hello", "Ġ", "hell"]
    assert tokenizer.decode(encoding.ids) == "hello hell"
    assert [tokenizer.id_to_token(i) for i in (0, 1, 2, 3, 19, 20)] == ["<unk>", "<s>", "</s>", "[INST]", "[TOOL_CONTENT]", "Ā"]


def test_listed_special_tokens_and_fillers():
    specials = [{"rank": 0, "token_str": "<unk>", "is_control": True}, {"rank": 1, "token_str": "<s>", "is_control": True}]
    tokenizer = tokenizer_from_tekken(_file(specials=specials, version="v13", special_count=5))
    assert [tokenizer.id_to_token(i) for i in range(5)] == ["<unk>", "<s>", "<SPECIAL_2>", "<SPECIAL_3>", "<SPECIAL_4>"]
    assert tokenizer.encode("hello").ids == [1, 259 + 5]


def test_only_the_first_ranks_of_the_vocab_size_are_used():
    data = json.loads(_file())
    data["config"]["default_vocab_size"] -= 2  # drops "hell" and "hello"
    tokenizer = tokenizer_from_tekken(json.dumps(data).encode())
    assert tokenizer.encode("hello").tokens == ["<s>", "he", "ll", "o"]


def test_recognised_and_loaded_by_tokviz_load(tmp_path):
    path = tmp_path / "tekken.json"
    path.write_bytes(_file())
    assert loaders.file_kind("tekken.json", _file()) == "tekken" and is_tekken("x.json", _file())
    assert loaders.load(tmp_path).encode("hello").ids == [1, 279]
    assert loaders.load_bytes("anything.json", _file()).encode("hell").ids == [1, 278]


@pytest.mark.parametrize(
    ("data", "message"),
    [
        (b'{"config": {"pattern": "."}, "vocab": [{"token_bytes": "AA=="}]}', "needs 'pattern', 'default_vocab_size'"),
        (_file(version="v13"), "must list its special tokens"),
        (_file(specials=[{"rank": 0, "token_str": "<s>"}, {"rank": 0, "token_str": "<unk>"}]), "ranks 0, 1, 2"),
        (_file().replace(b'"token_bytes": "AA=="', b'"token_bytes": "!!"'), "not base64"),
        (_file().replace(b'"rank": 7,', b'"rank": 8,'), "vocab entry 7"),
        (_file(extra_tokens=(b"he", b"he")), "same token twice"),
        (b'{"config": {"pattern": "(", "x": "token_bytes"', "not valid JSON"),
    ],
)
def test_bad_files_are_refused_with_a_sentence(data, message):
    with pytest.raises(TokvizError, match=message):
        tokenizer_from_tekken(data)


def test_limits_apply_before_building(monkeypatch):
    monkeypatch.setattr(limits, "MAX_ADDED_TOKENS", 10)
    with pytest.raises(LimitExceededError, match="20 added tokens"):
        parse_tekken(_file())
    monkeypatch.setattr(limits, "MAX_ADDED_TOKENS", 5000)
    monkeypatch.setattr(limits, "MAX_TOKEN_CHARS", 3)
    with pytest.raises(LimitExceededError, match="token of 4 bytes"):
        parse_tekken(_file())
    monkeypatch.setattr(limits, "MAX_TOKEN_CHARS", 1024)
    monkeypatch.setattr(limits, "MAX_JSON_VALUES", 100)
    with pytest.raises(LimitExceededError, match="JSON values"):
        parse_tekken(_file())


def test_default_specials_are_twenty():
    assert len(DEFAULT_SPECIAL_TOKENS) == 20 and DEFAULT_SPECIAL_TOKENS[:3] == ("<unk>", "<s>", "</s>")
