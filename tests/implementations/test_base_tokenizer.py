"""tokviz.implementations.base_tokenizer: BaseTokenizer passes every call to the Tokenizer it wraps, as HF's does."""

from __future__ import annotations

import pytest

from tokviz import Tokenizer, pre_tokenizers
from tokviz.implementations.base_tokenizer import BaseTokenizer
from tokviz.models import WordLevel


def _wrapped() -> BaseTokenizer:
    inner = Tokenizer(WordLevel({"[UNK]": 0, "[PAD]": 1, "hello": 2, "world": 3}, unk_token="[UNK]"))
    inner.pre_tokenizer = pre_tokenizers.Whitespace()
    return BaseTokenizer(inner, {"model": "WordLevel", "add_prefix_space": False})


def test_repr_names_the_parameters_as_hf() -> None:
    assert repr(_wrapped()) == "Tokenizer(vocabulary_size=4, model=WordLevel, add_prefix_space=False)"


def test_calls_reach_the_wrapped_tokenizer() -> None:
    tokenizer = _wrapped()
    assert tokenizer.encode("hello there world").ids == [2, 0, 3]
    assert tokenizer.get_vocab_size() == 4 and tokenizer.token_to_id("world") == 3 and tokenizer.id_to_token(2) == "hello"
    tokenizer.enable_padding(pad_id=1, pad_token="[PAD]", length=5)
    assert tokenizer.encode("hello").ids == [2, 1, 1, 1, 1]
    assert [e.ids for e in tokenizer.encode_batch(["world", "hello hello"])] == [[3, 1, 1, 1, 1], [2, 2, 1, 1, 1]]
    tokenizer.no_padding()
    assert tokenizer.add_special_tokens(["<s>"]) == 1 and tokenizer.encode("<s> hello").tokens == ["<s>", "hello"]
    assert tokenizer.decode([2, 3]) == "hello world"


def test_wraps_only_a_tokenizer() -> None:
    with pytest.raises(TypeError, match="BaseTokenizer wraps a Tokenizer, got str"):
        BaseTokenizer("hello")
