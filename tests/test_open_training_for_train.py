"""open_training_for_train: an uploaded history.json to what the Train page needs (history, pipeline, size, key)."""

from __future__ import annotations

import dataclasses
import hashlib
import json
import pytest

from tokviz import history_io, pipeline_config
from tokviz.errors import LimitExceededError
from tokviz.history_io import HistoryFormatError
from tokviz.inspect import open_training_for_train
from tokviz.pipeline_config import tokenizer_with_model
from tokviz.presets import PRESETS
from tokviz.training import run_training

LINES = [
    "First Citizen: Before we proceed any further, hear me speak.",
    "All: Speak, speak. You are all resolved rather to die than to famish?",
    "We are accounted poor citizens, the patricians good.",
] * 4


@pytest.fixture(scope="module")
def bert():
    config = PRESETS["bert"].build()
    history = run_training(config, 120, LINES)
    return config, history, history_io.dumps(history, config).encode("utf-8")


def test_a_bert_training_opens_with_its_pipeline_size_and_a_key_of_its_own(bert):
    config, history, data = bert
    opened = open_training_for_train(data, "bert.json")
    assert opened.name == "bert.json"
    assert opened.config == config
    assert opened.history.algorithm == "WordPiece"
    assert opened.vocab_size == history.model.get_vocab_size() == 120
    assert opened.corpus_key == "history:" + hashlib.sha256(data).hexdigest()
    for size in (opened.history.min_vocab_size, 90, 120):  # the tokenizer Train builds equals the trained one
        before = tokenizer_with_model(config, history.model_at(size)).encode("Speak, citizens!")
        after = tokenizer_with_model(opened.config, opened.history.model_at(size)).encode("Speak, citizens!")
        assert (after.tokens, after.ids) == (before.tokens, before.ids)
    assert tokenizer_with_model(opened.config, opened.history.model_at(120)).encode("speak").tokens == ["[CLS]", "speak", "[SEP]"]


def test_a_history_without_its_pipeline_is_refused_with_what_to_do(bert):
    _config, history, _data = bert
    with pytest.raises(HistoryFormatError, match=r"^bare\.json: this training history does not name its pipeline .* Open it on Inspect"):
        open_training_for_train(history_io.dumps(history).encode(), "bare.json")


def test_a_pipeline_of_another_model_is_refused(bert):
    _config, _history, data = bert
    document = json.loads(data)
    document["pipeline"] = {"preset": "gpt2", "vocab": "120"}  # a BPE pipeline on a WordPiece history
    with pytest.raises(HistoryFormatError, match="the pipeline in this file trains BPE, but its history is a WordPiece training"):
        open_training_for_train(json.dumps(document).encode(), "edited.json")


def test_size_and_format_are_checked_as_on_inspect():
    with pytest.raises(LimitExceededError, match="up to 10 bytes"):
        open_training_for_train(b"x" * 11, "big.json", max_bytes=10)
    with pytest.raises(HistoryFormatError, match=r"^notes\.json: This file is not a tokviz training history"):
        open_training_for_train(b'{"format": "tokviz-tokenizer"}', "notes.json")


@pytest.mark.skipif(not hasattr(pipeline_config, "sentencepiece_config"),
                    reason="SentencePiece pipelines (spapp's sentencepiece_config) are not in this tree yet")
@pytest.mark.parametrize("model_type, vocab", [("bpe", 500), ("unigram", 300), ("char", 60), ("word", 200)])
def test_a_sentencepiece_training_opens_with_the_pipeline_read_from_its_model(model_type, vocab):
    words = sorted({word for line in LINES for word in line.split()})
    lines = [" ".join(words[(i * step) % len(words)] for step in range(1, 10)) for i in range(600)]
    config = pipeline_config.sentencepiece_config(sp_model_type=model_type, byte_fallback=model_type == "bpe",
                                                  normalization_rule="nmt_nfkc_cf" if model_type == "unigram" else "nmt_nfkc")
    history = run_training(config, vocab, lines)
    for written in (None, config):  # the CLI writes no pipeline for SentencePiece: it is read from the .model
        opened = open_training_for_train(history_io.dumps(history, written).encode(), "spm.json")
        assert opened.config == config
        assert type(opened.history) is type(history)
        assert opened.vocab_size == history.model.get_vocab_size()
        text = "Speak, citizens! Zyx"
        before = tokenizer_with_model(config, history.model_at(opened.vocab_size)).encode(text)
        after = tokenizer_with_model(opened.config, opened.history.model_at(opened.vocab_size)).encode(text)
        assert (after.tokens, after.ids) == (before.tokens, before.ids)


def test_the_opening_is_frozen(bert):
    opened = open_training_for_train(bert[2])
    with pytest.raises(dataclasses.FrozenInstanceError):
        opened.vocab_size = 5


# --- every real history opens: five model kinds, the app's Export and the CLI, sizes at, just above and far
# above the alphabet (a Unigram history was refused: its trainer records "unigram", the pipeline "Unigram").

KINDS = {  # kind -> (the app's pipeline, the CLI's arguments, a size far above the alphabet the corpus allows)
    "bpe": (lambda: PRESETS["gpt2"].build(), ["--model", "bpe"], 5000),
    "wordpiece": (lambda: PRESETS["bert"].build(), ["--model", "wordpiece"], 5000),
    "unigram": (lambda: PRESETS["t5"].build(), ["--model", "unigram"], 5000),
    "wordlevel": (lambda: PRESETS["bert"].build().with_model("WordLevel"), ["--model", "wordlevel"], 5000),
    "sentencepiece": (lambda: pipeline_config.sentencepiece_config(sp_model_type="unigram"),
                      ["--model", "sentencepiece", "--model-type", "unigram"], 54),  # sentencepiece's own maximum here
}
#: The smallest vocab of each kind on LINES (the alphabet and special tokens): 257 bytes + <|endoftext|>;
#: WordPiece's 47 characters and ## forms + 5 specials; 34 characters + 3 specials; 5 specials; 34 + 3 metas.
ALPHABET = {"bpe": 257, "wordpiece": 52, "unigram": 37, "wordlevel": 5, "sentencepiece": 37}


def _cli_history(tmp_path, kind: str, vocab: int) -> bytes:
    from tokviz.cli import main

    corpus = tmp_path / "corpus.txt"
    corpus.write_text("\n".join(LINES) + "\n", encoding="utf-8")
    out = tmp_path / f"{kind}-{vocab}"
    assert main(["train", str(corpus), *KINDS[kind][1], "--vocab-size", str(vocab), "--out", str(out),
                 "--no-progress", "--workers", "0"]) == 0
    return (out / "history.json").read_bytes()


def _export_history(kind: str, vocab: int) -> bytes:
    from tokviz.ui.train_views import history_json  # what Train's Export tab downloads

    config = KINDS[kind][0]()
    return history_json(run_training(config, vocab, LINES), config).encode("utf-8")


@pytest.mark.parametrize("kind", list(KINDS))
@pytest.mark.parametrize("origin", ["export", "cli"])
def test_every_real_history_opens_on_train_at_every_size(tmp_path, kind, origin):
    from tokviz.inspect import open_training, training_size_range

    alphabet, far = ALPHABET[kind], KINDS[kind][2]
    for vocab in (alphabet, alphabet + 1, far):
        data = _cli_history(tmp_path, kind, vocab) if origin == "cli" else _export_history(kind, vocab)
        opened = open_training_for_train(data, "history.json")
        assert opened.config.model == {"bpe": "BPE", "wordpiece": "WordPiece", "unigram": "Unigram",
                                       "wordlevel": "WordLevel", "sentencepiece": "SentencePiece"}[kind]
        low, high, trained = training_size_range(opened.history)
        assert low == alphabet and opened.vocab_size == trained
        if vocab == alphabet and kind != "unigram":  # nothing was learned: one size only (a fixed view on the pages)
            assert (low, high, trained) == (alphabet, alphabet, alphabet)
        if vocab == alphabet + 1:
            assert trained == alphabet + 1
        inspected = open_training(data, "history.json")  # Inspect's reader
        assert inspected.tokenizer_at(trained).encode("Speak, citizens").tokens \
            == tokenizer_with_model(opened.config, opened.history.model_at(trained)).encode("Speak, citizens").tokens


def test_size_ranges_of_edited_files_are_bounded(bert):
    from tokviz.inspect import training_size_range
    from tokviz.limits import MAX_TOKENIZER_VOCAB

    _config, history, data = bert
    document = json.loads(data)
    document["history"]["max_vocab_size"] = 10**30
    opened = open_training_for_train(json.dumps(document).encode(), "edited.json")
    assert training_size_range(opened.history) == (history.min_vocab_size, MAX_TOKENIZER_VOCAB, 120)
    document["history"]["max_vocab_size"] = document["history"]["min_vocab_size"] = 120
    assert training_size_range(open_training_for_train(json.dumps(document).encode(), "edited.json").history) == (120, 120, 120)
