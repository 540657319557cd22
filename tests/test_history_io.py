"""history_io: every trainer's history to JSON and back gives the same tokenizers and views."""

from __future__ import annotations

import dataclasses
import json
import math
from collections import Counter

import pytest

from tokviz import history_io
from tokviz.history_io import HistoryFormatError
from tokviz.models.bpe.trainer import BpeTrainer
from tokviz.models.unigram.trainer import UnigramTrainer
from tokviz.models.wordlevel.trainer import WordLevelTrainer
from tokviz.models.wordpiece.trainer import WordPieceTrainer
from tokviz.samples import load_sample
from tokviz.sentencepiece import train_sentencepiece
from tokviz.tokenizer import Tokenizer

LINES = load_sample().splitlines()[:120]
WORDS = Counter(word for line in LINES for word in line.split())
TEXT = "Héllo, the hugging tokenizers — 東京 naïve résumé 42!"


def _histories():
    small = dict(list(WORDS.items())[:150])
    alphabet = len({char for word in WORDS for char in word})
    return {
        "bpe": BpeTrainer(vocab_size=alphabet + 150, show_progress=False, special_tokens=["<unk>"]).train_from_word_counts(WORDS),
        "wordpiece-likelihood": WordPieceTrainer(vocab_size=alphabet * 2 + 80, show_progress=False, scoring="likelihood").train_from_word_counts(WORDS),
        "wordpiece-frequency": WordPieceTrainer(vocab_size=alphabet * 2 + 80, show_progress=False, scoring="frequency").train_from_word_counts(WORDS),
        "unigram-em": UnigramTrainer(vocab_size=alphabet + 150, unk_token="<unk>", special_tokens=["<unk>"]).train_from_word_counts(WORDS),
        "unigram-course": UnigramTrainer(vocab_size=len({c for w in small for c in w}) + 20, method="course").train_from_word_counts(small),
        "wordlevel": WordLevelTrainer(vocab_size=200, special_tokens=["[UNK]"]).train_from_word_counts(WORDS),
        "sentencepiece-bpe": train_sentencepiece(sentence_iterator=iter(LINES), vocab_size=alphabet + 100, model_type="bpe"),
        "sentencepiece-unigram": train_sentencepiece(sentence_iterator=iter(LINES), vocab_size=alphabet + 100, model_type="unigram"),
        "sentencepiece-char": train_sentencepiece(sentence_iterator=iter(LINES), vocab_size=100, model_type="char"),
        "sentencepiece-word": train_sentencepiece(sentence_iterator=iter(LINES), vocab_size=100, model_type="word"),
    }


HISTORIES = _histories()


def _same(a, b) -> bool:
    if isinstance(a, float) and isinstance(b, float):
        return a == b or (math.isnan(a) and math.isnan(b))
    if isinstance(a, tuple) and isinstance(b, tuple):
        return len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b))
    if dataclasses.is_dataclass(a) and type(a) is type(b):
        return all(_same(getattr(a, f.name), getattr(b, f.name)) for f in dataclasses.fields(a))
    return a == b


def _encoded(tokenizer, text):
    """Tokens and ids, or the error a model without an unk token raises (the same one, too)."""
    try:
        encoding = tokenizer.encode(text)
    except Exception as error:  # noqa: BLE001
        return type(error).__name__, str(error)
    return encoding.tokens, encoding.ids


@pytest.mark.parametrize("name", sorted(HISTORIES))
def test_round_trip_gives_the_same_models_records_and_views(name):
    original = HISTORIES[name]
    text = history_io.dumps(original)
    loaded = history_io.loads(text)
    assert type(loaded) is type(original)
    for spec in dataclasses.fields(original):
        if spec.name != "model":
            assert _same(getattr(loaded, spec.name), getattr(original, spec.name)), spec.name
    assert history_io.dumps(loaded) == text
    if original.model is None:
        assert loaded.model is None
    else:
        assert loaded.model.to_dict() == original.model.to_dict()
    if name not in ("sentencepiece-char", "sentencepiece-word"):  # those have no tokviz model
        middle = (original.min_vocab_size + original.max_vocab_size) // 2
        for size in (original.min_vocab_size, middle, original.max_vocab_size):
            before, after = Tokenizer(original.model_at(size)), Tokenizer(loaded.model_at(size))
            for sample in (TEXT, *LINES[:5]):
                assert _encoded(after, sample) == _encoded(before, sample)
    assert loaded.to_frame().equals(original.to_frame())
    for view in ("prune_frame", "removed_frame"):
        if hasattr(original, view):
            assert getattr(loaded, view)().equals(getattr(original, view)())
    from tokviz.export import full_history_csv

    if name.startswith(("bpe", "wordpiece", "unigram", "wordlevel")):
        assert full_history_csv(loaded) == full_history_csv(original)
    assert loaded._repr_html_() == original._repr_html_()


def test_worked_example_layout_uses_string_ids():
    history = BpeTrainer(vocab_size=7, show_progress=False).train_from_word_counts({"hug": 10, "pug": 5, "hugs": 5})
    document = json.loads(history_io.dumps(history))
    assert document["format"] == "tokviz-training-history"
    assert document["version"] == 1
    assert document["type"] == "bpe"
    strings = document["strings"]
    body = document["history"]
    assert [strings[i] for i in body["vocab"]] == ["g", "h", "p", "s", "u", "ug", "hug"]
    rank, left, right, token, count, score, vocab_size, candidates = body["merges"][0]
    assert (rank, strings[left], strings[right], strings[token], count, score, vocab_size) == (0, "u", "g", "ug", 20, 20.0, 6)
    assert [strings[c] if i % 3 < 2 else c for i, c in enumerate(candidates[:3])] == ["h", "u", 15.0]
    assert body["model"] == {"derived": True}
    # every token string is written once
    assert len(strings) == len(set(strings))


def test_json_is_strict_and_compact():
    unigram = HISTORIES["unigram-em"]
    text = history_io.dumps(unigram)
    json.loads(text, parse_constant=lambda name: pytest.fail(f"non-standard JSON constant {name}"))
    assert "NaN" not in text
    assert "\n" not in text and ", " not in text[:200]
    # the standard nmt_nfkc charsmap is not repeated in every SentencePiece history
    assert len(history_io.dumps(HISTORIES["sentencepiece-bpe"])) < 100_000


def test_save_and_load_a_file(tmp_path):
    path = tmp_path / "history.json"
    history_io.save(HISTORIES["wordpiece-likelihood"], path)
    loaded = history_io.load(path)
    assert loaded.scoring == "likelihood"
    assert [step.token for step in loaded.merges[:20]] == [step.token for step in HISTORIES["wordpiece-likelihood"].merges[:20]]


def _document(name: str = "bpe") -> dict:
    return json.loads(history_io.dumps(HISTORIES[name]))


@pytest.mark.parametrize(
    "text, message",
    [
        ("", "not valid JSON"),
        ("[1, 2]", 'its "format" is not'),
        ('{"format": "tokviz-training-history", "version": 99}', "version 99"),
        ('{"format": "tokviz-training-history", "version": "1"}', "no valid version"),
        ('{"format": "tokviz-training-history", "version": 1, "type": "pickle"}', "unknown type"),
        ("\x80\x04\x95pickle", "not valid JSON"),
        ("[" * 100_000 + "]" * 100_000, "nested too deeply"),
    ],
)
def test_not_a_history_is_refused_with_a_message(text, message):
    with pytest.raises(HistoryFormatError, match=message):
        history_io.loads(text)


def test_pickle_bytes_are_refused_not_unpickled():
    import pickle

    blob = pickle.dumps(HISTORIES["bpe"].merges[:2])
    with pytest.raises(HistoryFormatError, match="not UTF-8|not valid JSON"):
        history_io.loads(blob)


def test_damaged_histories_name_what_is_wrong():
    document = _document()
    document["history"]["merges"][3][1] = 10 ** 6
    with pytest.raises(HistoryFormatError, match=r"merges\[3\] left refers to string 1000000"):
        history_io.loads(json.dumps(document))
    document = _document()
    document["history"]["merges"][0][4] = "many"
    with pytest.raises(HistoryFormatError, match=r"merges\[0\] count should be a whole number"):
        history_io.loads(json.dumps(document))
    document = _document()
    del document["history"]["vocab"]
    with pytest.raises(HistoryFormatError, match='no "vocab"'):
        history_io.loads(json.dumps(document))
    document = _document()
    document["history"]["trainer_config"] = [["x", {"__class__": "os.system"}]]
    with pytest.raises(HistoryFormatError, match="trainer_config holds a value tokviz does not know"):
        history_io.loads(json.dumps(document))
    document = _document()
    document["history"]["surprise"] = 1
    with pytest.raises(HistoryFormatError, match="surprise"):
        history_io.loads(json.dumps(document))
    document = _document("unigram-em")
    document["history"]["model"] = {"section": {"type": "Unigram", "vocab": "oops"}}
    with pytest.raises(HistoryFormatError, match="final model"):
        history_io.loads(json.dumps(document))
    document = _document("sentencepiece-unigram")
    document["history"]["proto"] = "!!!"
    with pytest.raises(HistoryFormatError, match="SentencePiece model"):
        history_io.loads(json.dumps(document))


def test_size_limit_is_checked_before_parsing(tmp_path):
    text = history_io.dumps(HISTORIES["bpe"])
    with pytest.raises(HistoryFormatError, match="the limit is"):
        history_io.loads(text, max_bytes=100)
    path = tmp_path / "big.json"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(HistoryFormatError, match="limit for a training history"):
        history_io.load(path, max_bytes=100)
    with pytest.raises(HistoryFormatError, match="Cannot read"):
        history_io.load(tmp_path / "missing.json")


def test_the_module_never_unpickles_or_evaluates():
    import inspect

    source = inspect.getsource(history_io)
    for forbidden in ("import pickle", "eval(", "exec(", "__import__", "importlib"):
        assert forbidden not in source


def _whole_piece_type():
    import tokviz.training

    return getattr(tokviz.training, "WholePieceHistory", None)


@pytest.mark.skipif(_whole_piece_type() is None, reason="tokviz.training.WholePieceHistory (spapp's SentencePiece char/word models) is not in this tree yet")
@pytest.mark.parametrize("name", ["sentencepiece-char", "sentencepiece-word"])
def test_sentencepiece_char_and_word_trainings_of_the_app_round_trip(name):
    """The app's char/word SentencePiece trainings (a subclass whose model_at is a tokviz model) save and load as themselves."""
    whole = _whole_piece_type()
    base = HISTORIES[name]
    original = whole(**{spec.name: getattr(base, spec.name) for spec in dataclasses.fields(base)})
    original = dataclasses.replace(original, model=original.model_at(original.max_vocab_size))
    text = history_io.dumps(original)
    document = json.loads(text)
    assert (document["type"], document["history"]["model"]) == ("sentencepiece-whole", {"derived": True})
    loaded = history_io.loads(text)
    assert type(loaded) is whole
    assert loaded.model.to_dict() == original.model.to_dict()
    for size in (original.min_vocab_size, original.max_vocab_size):
        assert _encoded(Tokenizer(loaded.model_at(size)), TEXT) == _encoded(Tokenizer(original.model_at(size)), TEXT)


def test_bulk_read_entries_still_name_a_damaged_one():
    """Candidates, token lists and scored pieces are checked in bulk; a bad entry is still named."""
    document = _document()
    document["history"]["merges"][2][7][1] = 10 ** 6  # a candidate's right string
    with pytest.raises(HistoryFormatError, match=r"merges\[2\] refers to string 1000000"):
        history_io.loads(json.dumps(document))
    document = _document()
    document["history"]["merges"][2][7][2] = "lots"  # a candidate's score
    with pytest.raises(HistoryFormatError, match=r"merges\[2\] should be a number, not text \"lots\""):
        history_io.loads(json.dumps(document))
    document = _document()
    document["history"]["merges"][2][7][0] = True  # true is not a string index
    with pytest.raises(HistoryFormatError, match=r"merges\[2\] should be a whole number, not true/false"):
        history_io.loads(json.dumps(document))
    document = _document()
    document["history"]["vocab"][1] = -1
    with pytest.raises(HistoryFormatError, match=r"vocab\[1\] refers to string -1"):
        history_io.loads(json.dumps(document))


def test_a_workers_history_reads_the_same_in_steps_and_leaves_the_collector_on():
    import gc

    history = BpeTrainer(vocab_size=300, show_progress=False).train_from_word_counts({"hug": 10, "pug": 5, "hugs": 5, "bun": 4})
    text = history_io.dumps(history)
    assert history_io._parse_in_steps(text) == json.loads(text)
    from_worker = history_io.loads(text, from_worker=True)
    assert from_worker.merges == history_io.loads(text).merges == history.merges
    assert gc.isenabled()
    with pytest.raises(HistoryFormatError, match="damaged history"):
        history_io.loads(text[:-5], from_worker=True)
    with pytest.raises(json.JSONDecodeError):
        history_io._parse_in_steps('{"a": [1 2]}')
    assert gc.isenabled()
