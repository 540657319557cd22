"""WordLevel model: literal examples, parity with HF ``tokenizers.models.WordLevel``, tokenizer.json."""

from __future__ import annotations

import json
import pickle

import pytest
from tokenizers import Tokenizer as HfTokenizer
from tokenizers import models as hf_models
from tokenizers import pre_tokenizers as hf_pre_tokenizers
from tokenizers import trainers as hf_trainers

from tokviz.errors import SerializationError, VocabularyError
from tokviz.models import Model, WordLevel


def as_triples(tokens) -> list[tuple[int, str, tuple[int, int]]]:
    return [(token.id, token.value, tuple(token.offsets)) for token in tokens]


def test_known_and_unknown_words():
    model = WordLevel({"hello": 0, "world": 1, "<unk>": 2}, unk_token="<unk>")
    assert as_triples(model.tokenize("hello")) == [(0, "hello", (0, 5))]
    # Unknown: the unk token, with offsets over the whole word (in characters).
    assert as_triples(model.tokenize("héllo")) == [(2, "<unk>", (0, 5))]
    assert isinstance(model, Model)
    assert WordLevel().unk_token == "<unk>" and WordLevel().get_vocab_size() == 0


def test_missing_unk_token_is_a_clear_error():
    model = WordLevel({"a": 0}, unk_token="[UNK]")
    with pytest.raises(VocabularyError, match="unk_token '\\[UNK\\]' is not in it either"):
        model.tokenize("b")


def test_vocab_lookups_and_immutability():
    model = WordLevel({"a": 0, "b": 1, "<unk>": 2})
    assert model.token_to_id("b") == 1 and model.token_to_id("z") is None
    assert model.id_to_token(2) == "<unk>" and model.id_to_token(9) is None
    vocab = model.get_vocab()
    vocab["z"] = 5
    assert model.token_to_id("z") is None
    with pytest.raises(TypeError, match="WordLevel.unk_token must be a string, got NoneType None"):
        model.unk_token = None  # type: ignore[assignment]
    assert model.with_options(unk_token="b").tokenize("q")[0].id == 1
    assert pickle.loads(pickle.dumps(model)).to_dict() == model.to_dict()
    with pytest.raises(VocabularyError, match="must be a dict"):
        WordLevel(["a", "b"])  # type: ignore[arg-type]


def test_serialization(tmp_path):
    model = WordLevel({"b": 1, "a": 0, "[UNK]": 2}, unk_token="[UNK]")
    section = model.to_dict()
    assert section == {"type": "WordLevel", "vocab": {"a": 0, "b": 1, "[UNK]": 2}, "unk_token": "[UNK]"}
    assert list(section) == ["type", "vocab", "unk_token"]
    hf = hf_models.WordLevel({"b": 1, "a": 0, "[UNK]": 2}, unk_token="[UNK]")
    assert section == json.loads(HfTokenizer(hf).to_str())["model"]
    assert WordLevel.from_dict(section).to_dict() == section
    with pytest.raises(SerializationError, match="not 'WordLevel'"):
        WordLevel.from_dict({"type": "BPE", "vocab": {}})
    path = tmp_path / "vocab.json"
    path.write_text(json.dumps({"a": 0, "b": 1, "[UNK]": 2}), encoding="utf-8")
    assert WordLevel.from_file(str(path), unk_token="[UNK]").to_dict() == section
    saved = model.save(str(tmp_path), "w")
    assert hf_models.WordLevel.read_file(saved[0]) == model.get_vocab()
    path.write_text("[1, 2]", encoding="utf-8")
    with pytest.raises(SerializationError, match="JSON object"):
        WordLevel.read_file(str(path))


def test_parity_with_hf(read_shared_corpus, shared_corpus_lines, hard_strings):
    tokenizer = HfTokenizer(hf_models.WordLevel(unk_token="[UNK]"))
    tokenizer.pre_tokenizer = hf_pre_tokenizers.Whitespace()
    trainer = hf_trainers.WordLevelTrainer(vocab_size=3000, special_tokens=["[UNK]"], show_progress=False)
    tokenizer.train_from_iterator(read_shared_corpus("grimm_tales.txt")[:300_000].splitlines(), trainer)
    section = json.loads(tokenizer.to_str())["model"]
    model = WordLevel.from_dict(section)
    assert model.to_dict() == section
    hf = hf_models.WordLevel(section["vocab"], unk_token="[UNK]")
    splitter = hf_pre_tokenizers.Whitespace()
    held_out = read_shared_corpus("grimm_tales.txt")[300_000:420_000].splitlines()
    words = list(dict.fromkeys(w for line in [*held_out, *shared_corpus_lines, *hard_strings] for w, _ in splitter.pre_tokenize_str(line)))
    assert len(words) > 3000
    for word in words:
        theirs = hf.tokenize(word)
        assert [(t.id, t.value) for t in model.tokenize(word)] == [(t.id, t.value) for t in theirs]
        # HF's offsets are bytes; ours are characters.
        assert model.tokenize(word)[0].offsets == (0, len(word)) and theirs[0].offsets == (0, len(word.encode("utf-8")))
    assert sum(model.tokenize(w)[0].value == "[UNK]" for w in words) > 100  # unknown words were tried
