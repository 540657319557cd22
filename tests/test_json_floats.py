"""Unigram scores read from a tokenizer.json as HF reads them (tokviz.json_floats).

HF's JSON reader (serde_json without ``float_roundtrip``) does not always give the float
nearest to a literal; where two segmentations of a word tie to the last bit, which one HF
picks follows the floats it holds. Found on the shared corpora: one line of dots under an
ALBERT-like vocabulary (1 in 106,852) came out differently until tokviz read the scores
the same way.
"""

from __future__ import annotations

import json
import random

import pytest

from tokviz import Tokenizer, models
from tokviz.errors import SerializationError
from tokviz.json_floats import JsonNumber, hf_floats, serde_float

hf = pytest.importorskip("tokenizers")

# The scores of the pieces of that line, as HF wrote them (ryu's shortest digits).
DOTS_VOCAB = [
    ["<unk>", 0.0], ["▁.|", "-11.246915147395075"], [".", "-3.6622784482770996"],
    ["....", "-9.797982479164101"], [".............", "-14.844216823956343"],
]
DOTS_WORD = "▁.|" + "." * 29


def _unigram_json(vocab_literals: list[list]) -> str:
    entries = ",".join(f"[{json.dumps(piece)},{score}]" for piece, score in vocab_literals)
    return (
        '{"version":"1.0","truncation":null,"padding":null,"added_tokens":[],"normalizer":null,'
        '"pre_tokenizer":null,"post_processor":null,"decoder":null,'
        '"model":{"type":"Unigram","unk_id":0,"vocab":[' + entries + '],"byte_fallback":false}}'
    )


def test_a_tie_follows_the_floats_hf_reads_from_the_file():
    text = _unigram_json(DOTS_VOCAB)
    from_file = ["▁.|", ".", ".", ".............", ".", "............."]
    assert hf.Tokenizer.from_str(text).encode(DOTS_WORD).tokens == from_file
    assert Tokenizer.from_str(text).encode(DOTS_WORD).tokens == from_file
    # Built from Python floats (the nearest ones) the same pieces tie the other way, in both.
    exact = [(piece, float(score)) for piece, score in DOTS_VOCAB]
    in_memory = ["▁.|", ".", ".", ".", ".............", "............."]
    assert hf.Tokenizer(hf.models.Unigram(exact, 0, False)).encode(DOTS_WORD).tokens == in_memory
    assert Tokenizer(models.Unigram(exact, 0, False)).encode(DOTS_WORD).tokens == in_memory
    # and HF's to_str writes the floats it holds: so does tokviz's.
    assert json.loads(Tokenizer.from_str(text).to_str())["model"]["vocab"] == json.loads(hf.Tokenizer.from_str(text).to_str())["model"]["vocab"]


def test_serde_float_worked_examples():
    assert serde_float("-3.6622784482770996") == -3.662278448277099 != float("-3.6622784482770996")
    assert serde_float("-7.2528736775797125") == -7.252873677579712
    assert serde_float("0.1") == 0.1 and serde_float("1e-5") == 1e-05 and serde_float("-1.5E+2") == -150.0
    assert str(serde_float("-0.0")) == "-0.0"
    # Digits past 64 bits are dropped (the integer part's only scale the value).
    assert serde_float("123456789012345678901.5") == 1.2345678901234567e20
    assert serde_float("1844674407370955161.9") == 1.8446744073709553e18  # (as HF reads it)
    assert hf_floats([JsonNumber("-3.6622784482770996"), 2, JsonNumber("-0.0"), 0.25]) == [-3.662278448277099, 2.0, -0.0, 0.25]


def test_serde_float_equals_hf_on_random_literals():
    rng = random.Random(13)
    literals = []
    for _ in range(1500):
        digits = "".join(rng.choice("0123456789") for _ in range(rng.randint(1, 23)))
        point = rng.randint(1, len(digits))
        literal = rng.choice(["-", ""]) + (digits[:point].lstrip("0") or "0") + "." + (digits[point:] or "0")
        if rng.random() < 0.3:
            literal += rng.choice("eE") + rng.choice(["", "+", "-"]) + str(rng.randint(0, 320) if rng.random() < 0.3 else rng.randint(0, 25))
        literals.append(literal)
    readable = []
    for literal in literals:
        try:
            hf.Tokenizer.from_str(_unigram_json([["<unk>", literal]]))
        except Exception:  # out of range for HF: tokviz refuses it too
            with pytest.raises(SerializationError, match="out of range"):
                Tokenizer.from_str(_unigram_json([["<unk>", literal]]))
            continue
        readable.append(literal)
    assert len(readable) > 1400
    text = _unigram_json([[f"p{index}", literal] for index, literal in enumerate(readable)])
    held_by_hf = [score for _, score in json.loads(hf.Tokenizer.from_str(text).to_str())["model"]["vocab"]]
    assert list(map(serde_float, readable)) == held_by_hf
    assert [score for _, score in Tokenizer.from_str(text).model.vocab] == held_by_hf
    # The common form (no exponent) goes through hf_floats' C path: the same floats.
    plain = [literal for literal in readable if "e" not in literal.lower()]
    assert hf_floats(list(map(JsonNumber, plain))) == list(map(serde_float, plain))


def test_other_files_and_other_floats_are_read_as_before():
    # A BPE file naming a token "Unigram" is parsed plainly; floats elsewhere are floats.
    bpe = hf.Tokenizer(hf.models.BPE({"Unigram": 0, "a": 1}, [], dropout=0.25, unk_token="a"))
    ours = Tokenizer.from_str(bpe.to_str())
    assert ours.model.dropout == 0.25 and ours.get_vocab() == {"Unigram": 0, "a": 1}
