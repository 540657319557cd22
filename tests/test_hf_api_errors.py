"""The same mistake raises the same built-in exception type on tokviz as on HF ``tokenizers``
(tokviz's errors stay TokvizErrors too, so the app's ``except TokvizError`` still catches
them), and tokviz's message names the value given."""

from __future__ import annotations

import pytest
import tokenizers as hf

import tokviz
from tokviz.errors import TokvizError


def tok(lib):
    return lib.Tokenizer(lib.models.BPE({"a": 0, "b": 1, "ab": 2}, [("a", "b")]))


CASES = {
    "encode an int": lambda lib: tok(lib).encode(3),
    "encode None": lambda lib: tok(lib).encode(None),
    "encode a pair that is an int": lambda lib: tok(lib).encode("a", 3),
    "encode_batch of ints": lambda lib: tok(lib).encode_batch([1, 2]),
    "decode a string": lambda lib: tok(lib).decode("ab"),
    "decode strings": lambda lib: tok(lib).decode(["a"]),
    "decode a negative id": lambda lib: tok(lib).decode([-1]),
    "token_to_id of an int": lambda lib: tok(lib).token_to_id(3),
    "id_to_token of a string": lambda lib: tok(lib).id_to_token("a"),
    "id_to_token of a negative id": lambda lib: tok(lib).id_to_token(-1),
    "truncation to a negative length": lambda lib: tok(lib).enable_truncation(-1),
    "truncation to a string length": lambda lib: tok(lib).enable_truncation("5"),
    "padding to a string length": lambda lib: tok(lib).enable_padding(length="5"),
    "a tokenizer over None": lambda lib: lib.Tokenizer(None),
    "a tokenizer over a string": lambda lib: lib.Tokenizer("bpe"),
    "a string as the model": lambda lib: setattr(tok(lib), "model", "bpe"),
    "a string as the normalizer": lambda lib: setattr(tok(lib), "normalizer", "nfc"),
    "an int as the pre-tokenizer": lambda lib: setattr(tok(lib), "pre_tokenizer", 3),
    "a string as the decoder": lambda lib: setattr(tok(lib), "decoder", "x"),
    "a string as the post-processor": lambda lib: setattr(tok(lib), "post_processor", "x"),
    "a BPE vocab that is a list": lambda lib: lib.models.BPE(["a"], []),
    "a WordPiece vocab that is a list": lambda lib: lib.models.WordPiece(["a"]),
    "a Unigram vocab that is a dict": lambda lib: lib.models.Unigram({"a": 0.0}),
    "a WordLevel vocab that is a list": lambda lib: lib.models.WordLevel(["a"]),
    "BertProcessing with a bare token": lambda lib: lib.processors.BertProcessing("x", ("y", 1)),
    "ByteLevel processor with a string flag": lambda lib: lib.processors.ByteLevel(trim_offsets="x"),
    "WordPiece decoder with an int prefix": lambda lib: lib.decoders.WordPiece(prefix=3),
    "a decoder Sequence of ints": lambda lib: lib.decoders.Sequence([1]),
    "Encoding.truncate to a negative length": lambda lib: tok(lib).encode("ab").truncate(-1),
    "Encoding.merge of ints": lambda lib: lib.Encoding.merge([1]),
    "post_process of an int": lambda lib: tok(lib).post_process(3),
    "num_special_tokens_to_add of a string": lambda lib: tok(lib).num_special_tokens_to_add("x"),
    "a DecodeStream step with a string": lambda lib: lib.decoders.DecodeStream().step(tok(lib), "x"),
}


def raised(call, lib):
    try:
        call(lib)
    except Exception as error:  # noqa: BLE001 - the type is what is compared
        return error
    raise AssertionError(f"{lib.__name__} accepted it")


@pytest.mark.parametrize("name", list(CASES))
def test_same_exception_type_as_hf(name):
    theirs = raised(CASES[name], hf)
    ours = raised(CASES[name], tokviz)
    assert isinstance(ours, type(theirs)), (type(ours).__mro__, type(theirs))


def test_messages_name_the_value_and_stay_tokviz_errors():
    error = raised(CASES["truncation to a string length"], tokviz)
    assert isinstance(error, TokvizError) and str(error) == "enable_truncation max_length must be a whole number, got str '5'."
    error = raised(CASES["a string as the normalizer"], tokviz)
    assert str(error) == "The tokenizer's normalizer must be a Normalizer or None, got str 'nfc'."
    error = raised(CASES["decode a negative id"], tokviz)
    assert isinstance(error, OverflowError) and str(error).startswith("Cannot decode the id -1: it is not in the vocabulary")
    assert isinstance(raised(CASES["a BPE vocab that is a list"], tokviz), tokviz.errors.VocabularyError)
