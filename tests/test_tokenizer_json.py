"""tokviz.tokenizer_json: the one reader of tokenizer.json -- a real file read as HF writes it (a Unigram's
scores as HF reads them), and every section checked against the server's limits before anything is built."""

from __future__ import annotations

import json

import pytest

from tokviz.errors import LimitExceededError, TokenizerFileError
from tokviz.tokenizer_json import check_tokenizer_json_sections, read_tokenizer_json

hf = pytest.importorskip("tokenizers")


def _hf_json(kind: str) -> str:
    tokenizer = hf.Tokenizer(hf.models.BPE(unk_token="[UNK]") if kind == "bpe" else hf.models.Unigram())
    tokenizer.pre_tokenizer = hf.pre_tokenizers.Whitespace()
    trainer = hf.trainers.BpeTrainer(vocab_size=60, special_tokens=["[UNK]"], show_progress=False) if kind == "bpe" else \
        hf.trainers.UnigramTrainer(vocab_size=30, show_progress=False)
    tokenizer.train_from_iterator(["low lower lowest newer newest wider"] * 5, trainer)
    tokenizer.enable_truncation(max_length=16)
    return tokenizer.to_str()


@pytest.mark.parametrize("kind", ["bpe", "unigram"])
def test_reads_what_hf_writes_and_builds_the_same_tokenizer(kind: str) -> None:
    from tokviz import Tokenizer

    text = _hf_json(kind)
    data = read_tokenizer_json(text)
    plain = json.loads(text)
    if kind == "unigram":  # a Unigram's scores are read as HF's reader rounds them (to f32 and back), nothing else moves
        assert [piece for piece, _ in data["model"]["vocab"]] == [piece for piece, _ in plain["model"]["vocab"]]
        assert max(abs(float(a[1]) - b[1]) for a, b in zip(data["model"]["vocab"], plain["model"]["vocab"])) < 1e-6
        data_rest, plain_rest = dict(data, model=None), dict(plain, model=None)
        assert data_rest == plain_rest
    else:
        assert data == plain
    assert data["truncation"]["max_length"] == 16
    ours, theirs = Tokenizer.from_str(text), hf.Tokenizer.from_str(text)
    assert ours.encode("lowest wider").ids == theirs.encode("lowest wider").ids
    assert read_tokenizer_json(text.encode("utf-8")) == data  # bytes as well as text


def test_each_section_is_checked_with_a_sentence_naming_the_file(monkeypatch) -> None:
    import tokviz.limits as limits

    check_tokenizer_json_sections({"model": {"type": "BPE", "vocab": {"a": 0, "b": 1, "ab": 2}, "merges": ["a b"]}})
    with pytest.raises(LimitExceededError, match=r"^long\.json has a token of 2,000 characters, above this server's limit of 1,024"):
        check_tokenizer_json_sections({"model": {"vocab": {"a" * 2000: 0}}}, "long.json")
    with pytest.raises(LimitExceededError, match=r"^ids\.json uses the id 1,000,000,000,000,000,000,000,000,000,000 \(for 'b'\)"):
        check_tokenizer_json_sections({"model": {"vocab": {"a": 0, "b": 10**30}}}, "ids.json")
    with pytest.raises(LimitExceededError, match=r"^pad\.json asks for a padding length of -1 tokens"):
        check_tokenizer_json_sections({"padding": {"strategy": {"Fixed": -1}}}, "pad.json")
    with pytest.raises(LimitExceededError, match=r"^cut\.json asks for a truncation max length of"):
        check_tokenizer_json_sections({"truncation": {"max_length": limits.MAX_PADDING_LENGTH + 1}}, "cut.json")
    monkeypatch.setattr(limits, "MAX_JSON_DEPTH", 5)
    with pytest.raises(LimitExceededError):
        check_tokenizer_json_sections({"normalizer": {"a": [[[[["deep"]]]]]}}, "deep.json")


def test_not_json_is_said_not_raised_as_a_crash() -> None:
    with pytest.raises(TokenizerFileError):
        read_tokenizer_json('{"model": ', "cut.json")
    with pytest.raises(LimitExceededError, match=r"^big\.json has a number of 5,001 digits"):
        read_tokenizer_json('{"model": {"vocab": {"a": 1' + "0" * 5000 + "}}}", "big.json")


def test_the_proofs_of_vocab_and_merges_travel_with_them_to_the_model() -> None:
    # The reader proves the vocabulary {str: int} and the merges [str, str] lists once; the model
    # keeps the reader's vocabulary copy and takes the merges' columns without proving them again.
    # Merges of another shape are not marked, and the model's own checks still say what is wrong.
    from tokviz import Tokenizer
    from tokviz.errors import SerializationError
    from tokviz.models.base import ProvenPairs, ProvenVocab
    from tokviz.models.bpe.model import parse_merges

    text = json.dumps({"model": {"type": "BPE", "vocab": {"a": 0, "b": 1, "ab": 2}, "merges": [["a", "b"]]}})
    data = read_tokenizer_json(text)
    assert type(data["model"]["vocab"]) is ProvenVocab and type(data["model"]["merges"]) is ProvenPairs
    assert parse_merges(data["model"]["merges"]) == (("a",), ("b",)) == parse_merges([["a", "b"]])
    tokenizer = Tokenizer.from_str(text)
    assert tokenizer.encode("abab").tokens == ["ab", "ab"] and tokenizer.model.get_vocab() == {"a": 0, "b": 1, "ab": 2}
    legacy = read_tokenizer_json(text.replace('[["a", "b"]]', '["a b"]'))
    assert type(legacy["model"]["merges"]) is list and parse_merges(legacy["model"]["merges"]) == (("a",), ("b",))
    odd = read_tokenizer_json(text.replace('[["a", "b"]]', '[["a", "b", "c"]]'))
    assert type(odd["model"]["merges"]) is list
    with pytest.raises(SerializationError, match="is not a pair of strings"):
        Tokenizer.from_str(text.replace('[["a", "b"]]', '[["a", "b", "c"]]'))
    # A Unigram's [piece, score] lists likewise; a score that is no number is still refused.
    unigram = json.dumps({"model": {"type": "Unigram", "unk_id": 0, "vocab": [["<unk>", 0.0], ["a", -1.5], ["ab", -2.0]]}})
    assert type(read_tokenizer_json(unigram)["model"]["vocab"]) is ProvenPairs
    assert Tokenizer.from_str(unigram).encode("ab").tokens == ["ab"]
    with pytest.raises(SerializationError, match="a score is not a number"):
        Tokenizer.from_str(unigram.replace("-1.5", '"x"'))
