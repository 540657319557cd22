"""tokviz._component: what components share -- HF's repr, HF's pickled state, checked mutable options --
against HF ``tokenizers`` on real components."""

from __future__ import annotations

import copy
import pickle

import pytest

from tokviz import _mutation, decoders, normalizers, pre_tokenizers, processors
from tokviz._component import (
    ArgumentTypeError, NegativeArgumentError, check_token_id_pair, check_whole, hf_debug,
)

hf = pytest.importorskip("tokenizers")


def _both(module: str, name: str, *args, **kwargs):
    ours = getattr({"normalizers": normalizers, "pre_tokenizers": pre_tokenizers, "decoders": decoders, "processors": processors}[module], name)
    return ours(*args, **kwargs), getattr(getattr(hf, module), name)(*args, **kwargs)


@pytest.mark.parametrize("module, name, args, kwargs", [
    ("normalizers", "Strip", (), {"left": True, "right": False}),
    ("normalizers", "Replace", ("a", "b"), {}),
    ("pre_tokenizers", "Split", ("-", "removed"), {}),
    ("pre_tokenizers", "Metaspace", (), {"prepend_scheme": "first"}),
    ("decoders", "WordPiece", (), {"prefix": "##", "cleanup": False}),
    ("processors", "BertProcessing", (("[SEP]", 102), ("[CLS]", 101)), {}),
])
def test_repr_and_state_are_hfs(module, name, args, kwargs) -> None:
    ours, theirs = _both(module, name, *args, **kwargs)
    assert repr(ours) == repr(theirs)
    assert ours.__getstate__() == theirs.__getstate__()


def test_worked_reprs() -> None:
    assert repr(normalizers.Strip(left=True, right=False)) == 'Strip(strip_left=True, strip_right=False)'
    assert repr(pre_tokenizers.Split("-", "removed")) == 'Split(pattern=String("-"), behavior=Removed, invert=False)'
    assert hf_debug({"type": "Unigram", "unk_id": 0, "vocab": [["A", 0.0], ["B", -0.01]]}) == 'Unigram(unk_id=0, vocab=[("A", 0), ("B", -0.01)])'
    assert hf_debug({"a": 0, "b": 1, "c": 2}, limit=2) == '{"a":0, "b":1, ...}'
    assert hf_debug(["x", 1.5, None, True]) == '["x", 1.5, None, True]'


def test_copies_and_pickles_share_nothing_with_the_original() -> None:
    original = decoders.WordPiece(prefix="##")
    for twin in (copy.copy(original), copy.deepcopy(original), pickle.loads(pickle.dumps(original))):
        assert twin == original and twin is not original
        twin.prefix = "__"
        assert original.prefix == "##" and twin != original


def test_an_edit_bumps_the_mutation_counter_and_is_checked() -> None:
    decoder = decoders.WordPiece()
    before = _mutation.generation()
    decoder.cleanup = False
    assert _mutation.generation() > before
    with pytest.raises(TypeError):
        decoder.cleanup = "no"


def test_argument_checks_say_what_was_given() -> None:
    assert check_whole("enable_truncation", "max_length", 7) == 7
    with pytest.raises(NegativeArgumentError, match="enable_truncation max_length must be a whole number >= 0, got -1."):
        check_whole("enable_truncation", "max_length", -1)
    with pytest.raises(ArgumentTypeError, match="must be a whole number, got bool True"):
        check_whole("enable_truncation", "max_length", True)
    assert check_token_id_pair("BertProcessing", "sep", ["[SEP]", 102]) == ("[SEP]", 102)
    with pytest.raises(TypeError, match=r"must be a \(token, id\) pair"):
        check_token_id_pair("BertProcessing", "sep", ("[SEP]", "102"))
    assert issubclass(NegativeArgumentError, OverflowError) and issubclass(ArgumentTypeError, TypeError)
