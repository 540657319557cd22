"""tiktoken rank files with a sidecar (pattern, special tokens, BOS): read, written, and equal to tiktoken."""

from __future__ import annotations

import json

import pytest

from tokviz import limits, loaders
from tokviz.errors import LimitExceededError, TokvizError
from tokviz.tiktoken_format import (
    TiktokenSpec,
    load_tiktoken_pair,
    parse_sidecar,
    rank_file_text,
    sidecar_path,
    token_bytes,
    tokenizer_from_ranks,
)

PATTERN = r"'s|'t| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+"
RANKS = {bytes([b]): b for b in range(256)} | {b"he": 256, b"ll": 257, b"hell": 258, b" hell": 259, b"hello": 260}
SPEC = TiktokenSpec("toy", PATTERN, (("<|bos|>", 261), ("<|eos|>", 262)), "<|bos|>")


def test_worked_example_to_the_id():
    tokenizer = tokenizer_from_ranks(RANKS, SPEC)
    encoding = tokenizer.encode("hello hello!")
    # " hello" is not a rank: its best merge is " hell" (rank 259), then "o" stays alone.
    assert encoding.ids == [261, 260, 259, 111, 33]
    assert encoding.tokens == ["<|bos|>", "hello", "Ġhell", "o", "!"]
    assert tokenizer.encode("<|eos|>").ids == [261, 60, 124, 101, 111, 115, 124, 62]  # special text stays text


def test_equal_to_tiktoken_with_the_same_pattern_ranks_and_specials():
    tiktoken = pytest.importorskip("tiktoken")
    reference = tiktoken.Encoding(name="toy", pat_str=PATTERN, mergeable_ranks=RANKS, special_tokens=dict(SPEC.special_tokens))
    tokenizer = tokenizer_from_ranks(RANKS, SPEC)
    for text in ("hello hello!", " hellhell's  ll\n\nhe", "héllo wörld 123", "<|eos|> hello"):
        assert tokenizer.encode(text).ids == [261, *reference.encode_ordinary(text)]


def test_sidecar_round_trip_and_loading_a_pair(tmp_path):
    assert parse_sidecar(SPEC.to_json().encode()) == SPEC
    rank_path = tmp_path / "toy.tiktoken"
    rank_path.write_text(rank_file_text(RANKS))
    sidecar_path(rank_path).write_text(SPEC.to_json())
    assert sidecar_path(rank_path).name == "toy.tiktoken.json"
    assert loaders.load(rank_path).encode("hello").ids == [261, 260]
    uploads = loaders.load_uploads([("toy.tiktoken.json", SPEC.to_json().encode()), ("toy.tiktoken", rank_path.read_bytes())])
    assert [(u.name, u.error) for u in uploads] == [("toy.tiktoken + toy.tiktoken.json", None)]
    assert uploads[0].tokenizer.encode("hello").ids == [261, 260]
    assert load_tiktoken_pair(rank_path.read_bytes(), SPEC.to_json().encode()).encode("hell").ids == [261, 258]


def test_sidecar_keys_are_tiktoken_encoding_arguments():
    tiktoken = pytest.importorskip("tiktoken")
    spec = json.loads(SPEC.to_json())
    encoding = tiktoken.Encoding(name=spec["name"], pat_str=spec["pat_str"], mergeable_ranks=RANKS, special_tokens=spec["special_tokens"])
    assert encoding.encode("hello", allowed_special="all") == [260]


def test_a_sidecar_alone_says_what_is_missing():
    with pytest.raises(TokvizError, match="add its .tiktoken rank file"):
        loaders.load_bytes("toy.tiktoken.json", SPEC.to_json().encode())


@pytest.mark.parametrize(
    ("data", "message"),
    [
        (b'{"name": "x"}', "must be a JSON object with a 'pat_str'"),
        (b'{"pat_str": "(", "special_tokens": {}}', "split pattern cannot be used"),
        (b'{"pat_str": ".", "special_tokens": {"<s>": "one"}}', "whole-number id"),
        (b'{"pat_str": ".", "special_tokens": {}, "bos_token": "<s>"}', "not one of its special tokens"),
        (b'{"pat_str": ', "not valid UTF-8 JSON"),
    ],
)
def test_bad_sidecars_are_refused_with_a_sentence(data, message):
    with pytest.raises(TokvizError, match=message):
        parse_sidecar(data)


def test_sidecar_limits(monkeypatch):
    monkeypatch.setattr(limits, "MAX_ADDED_TOKENS", 1)
    with pytest.raises(LimitExceededError, match="2 added tokens"):
        parse_sidecar(SPEC.to_json().encode())


def test_rank_file_text_and_token_bytes():
    assert rank_file_text({b"b": 1, b"a": 0, b" hi": 2}) == "YQ== 0\nYg== 1\nIGhp 2\n"
    assert token_bytes("Ġhi") == b" hi" and token_bytes("ê°Ģ") == "가".encode()
