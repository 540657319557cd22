"""HF's Python API on the training side: code of the HF course's kind runs unchanged on tokviz.

Trainers take batches, default as HF, hand back AddedTokens, can be edited (checked as HF
checks), pickle / copy / print as HF's; a trainer refuses another algorithm's model.
"""

from __future__ import annotations

import copy
import json
import pickle

import pytest
import tokenizers as hf

import tokviz
from tokviz import _mutation
from tokviz.added_vocabulary import AddedToken

LIBRARIES = {"tokenizers": hf, "tokviz": tokviz}


def course_script(lib, lines, folder):
    """The HF course's chapter 6.8 kind of script, written once for both libraries."""
    tokenizer = lib.Tokenizer(lib.models.BPE())
    tokenizer.pre_tokenizer = lib.pre_tokenizers.ByteLevel(add_prefix_space=False)

    def get_training_corpus():
        for start in range(0, len(lines), 40):
            yield lines[start : start + 40]

    trainer = lib.trainers.BpeTrainer(vocab_size=400, special_tokens=["<|endoftext|>"])
    tokenizer.train_from_iterator(get_training_corpus(), trainer=trainer)
    tokenizer.post_processor = lib.processors.ByteLevel(trim_offsets=False)
    tokenizer.decoder = lib.decoders.ByteLevel()
    encoding = tokenizer.encode("Let's test this tokenizer.")
    path = folder / f"{lib.__name__}.json"
    tokenizer.save(str(path))
    reloaded = lib.Tokenizer.from_file(str(path))
    return (
        tokenizer.get_vocab_size(),
        encoding.tokens,
        encoding.ids,
        encoding.offsets,
        reloaded.encode("Let's test this tokenizer.").ids,
        reloaded.decode(encoding.ids),
        [(token.content, token.special, token.normalized) for token in trainer.special_tokens],
    )


def test_course_script_gives_the_same_results_on_both_libraries(shared_corpus_lines, tmp_path):
    lines = shared_corpus_lines[:200]
    results = {name: course_script(lib, lines, tmp_path) for name, lib in LIBRARIES.items()}
    assert results["tokviz"] == results["tokenizers"]
    assert results["tokviz"][5] == "Let's test this tokenizer."
    assert results["tokviz"][6] == [("<|endoftext|>", True, False)]


def test_wordpiece_trained_from_batches_matches_the_flat_texts(shared_corpus_lines):
    lines = shared_corpus_lines[:120]
    vocabs = []
    for texts in (lines, [lines[:50], iter(lines[50:100]), *lines[100:]]):
        tokenizer = tokviz.Tokenizer(tokviz.models.WordPiece(unk_token="[UNK]"))
        tokenizer.pre_tokenizer = tokviz.pre_tokenizers.BertPreTokenizer()
        tokenizer.train_from_iterator(texts, tokviz.trainers.WordPieceTrainer(vocab_size=300, special_tokens=["[UNK]"]))
        vocabs.append(tokenizer.get_vocab())
    assert vocabs[0] == vocabs[1]
    assert len(vocabs[0]) == 300


@pytest.mark.parametrize(
    ("trainer", "model", "message"),
    [
        ("UnigramTrainer", "BPE", "UnigramTrainer can only train a Unigram"),
        ("WordPieceTrainer", "BPE", "WordPieceTrainer can only train a WordPiece"),
        ("BpeTrainer", "WordPiece", "BpeTrainer can only train a BPE"),
        ("WordLevelTrainer", "Unigram", "WordLevelTrainer can only train a WordLevel"),
    ],
)
def test_a_trainer_refuses_another_algorithms_model_as_hf(trainer, model, message):
    for lib in LIBRARIES.values():
        tokenizer = lib.Tokenizer(getattr(lib.models, model)())
        with pytest.raises(Exception, match=message):
            tokenizer.train_from_iterator(["a b c", "a b"], getattr(lib.trainers, trainer)(vocab_size=10, show_progress=False))
    tokenizer = tokviz.Tokenizer(getattr(tokviz.models, model)())
    with pytest.raises(tokviz.TokvizError, match=f"this tokenizer's model is a {model}"):
        tokenizer.train_from_iterator(["a b c"], getattr(tokviz.trainers, trainer)(vocab_size=10, show_progress=False))


def test_models_models_is_hfs_compiled_submodule_name():
    assert tokviz.models.models.Unigram is tokviz.models.Unigram
    assert tokviz.models.models.BPE().get_vocab_size() == 0
    assert sorted(name for name in dir(hf.models.models) if name[0].isupper()) == ["BPE", "Model", "Unigram", "WordLevel", "WordPiece"]
    assert all(hasattr(tokviz.models.models, name) for name in ["BPE", "Model", "Unigram", "WordLevel", "WordPiece"])


# --------------------------------------------------------------------------- special tokens


@pytest.mark.parametrize("name", ["BpeTrainer", "WordPieceTrainer", "UnigramTrainer", "WordLevelTrainer"])
def test_special_tokens_read_back_as_added_tokens_as_hf(name):
    given = ["<s>", AddedToken("<mask>", lstrip=True), "<s>"]
    ours = getattr(tokviz.trainers, name)(special_tokens=given).special_tokens
    theirs = getattr(hf.trainers, name)(special_tokens=["<s>", hf.AddedToken("<mask>", lstrip=True)]).special_tokens
    fields = ("content", "single_word", "lstrip", "rstrip", "normalized", "special")
    assert [tuple(getattr(t, f) for f in fields) for t in ours] == [tuple(getattr(t, f) for f in fields) for t in theirs]
    assert [tuple(getattr(t, f) for f in fields) for t in ours] == [
        ("<s>", False, False, False, False, True),
        ("<mask>", False, True, False, False, True),
    ]
    assert all(isinstance(token, AddedToken) for token in ours)


def test_setting_special_tokens_takes_strings_and_trains_with_them():
    trainer = tokviz.trainers.WordLevelTrainer(vocab_size=5, show_progress=False)
    trainer.special_tokens = ["[UNK]", "[PAD]"]
    assert [token.content for token in trainer.special_tokens] == ["[UNK]", "[PAD]"]
    history = trainer.train_from_word_counts({"the": 3, "cat": 2, "sat": 1})
    assert history.vocab == ("[UNK]", "[PAD]", "the", "cat", "sat")
    with pytest.raises(TypeError, match=r"Special tokens must be a List\[Union\[str, AddedToken\]\]; got int 1"):
        trainer.special_tokens = [1]


# --------------------------------------------------------------------------- mutability


def test_options_can_be_set_and_each_edit_bumps_the_mutation_counter():
    trainer = tokviz.trainers.BpeTrainer(vocab_size=100, show_progress=False)
    before = _mutation.generation()
    trainer.vocab_size = 12
    trainer.min_frequency = 2
    trainer.initial_alphabet = ["x", "y", "x"]
    trainer.continuing_subword_prefix = "##"
    trainer.limit_alphabet = 5
    assert _mutation.generation() > before
    assert (trainer.vocab_size, trainer.min_frequency, trainer.initial_alphabet) == (12, 2, ["x", "y"])
    history = trainer.train_from_word_counts({"hug": 10, "pug": 5})
    assert history.vocab[:7] == ("g", "h", "u", "x", "y", "##u", "##g")  # the alphabet set, then the prefix



@pytest.mark.parametrize(
    ("name", "value", "error", "message"),
    [
        ("vocab_size", -1, OverflowError, "vocab_size must be a whole number >= 0, got -1"),
        ("vocab_size", "a", TypeError, "vocab_size must be a whole number, got str 'a'"),
        ("min_frequency", -1, OverflowError, "min_frequency must be a whole number >= 0, got -1"),
        ("show_progress", "x", TypeError, "show_progress must be True or False, got str 'x'"),
        ("limit_alphabet", -2, OverflowError, "limit_alphabet must be a whole number >= 0, got -2"),
        ("continuing_subword_prefix", 3, TypeError, "continuing_subword_prefix must be a string or None, got int 3"),
        ("foo", 1, AttributeError, "'BpeTrainer' object has no attribute 'foo'"),
    ],
)
def test_setters_check_as_hf_with_hfs_exception_types(name, value, error, message):
    ours = tokviz.trainers.BpeTrainer()
    with pytest.raises(error, match=message):
        setattr(ours, name, value)
    with pytest.raises(error):
        setattr(hf.trainers.BpeTrainer(), name, value)
    assert ours.vocab_size == 30000  # a refused edit changes nothing


def test_unigram_trainer_options_as_hf():
    trainer = tokviz.trainers.UnigramTrainer()
    hf_trainer = hf.trainers.UnigramTrainer()
    for name in ("vocab_size", "show_progress", "initial_alphabet"):
        assert getattr(trainer, name) == getattr(hf_trainer, name)
    trainer.vocab_size = 5
    trainer.special_tokens = ["<s>"]
    assert (trainer.vocab_size, [t.content for t in trainer.special_tokens]) == (5, ["<s>"])
    with pytest.raises(TypeError, match="unk_token must be a string or None, got int 3"):
        trainer.unk_token = 3


# --------------------------------------------------------------------------- state, pickling, copies, repr


@pytest.mark.parametrize(
    ("name", "options"),
    [
        ("BpeTrainer", dict(vocab_size=12, special_tokens=["a"], continuing_subword_prefix="##", end_of_word_suffix="</w>")),
        ("WordPieceTrainer", dict(vocab_size=40, special_tokens=["[UNK]"], min_frequency=2)),
        ("UnigramTrainer", dict(vocab_size=80, special_tokens=["<unk>"], unk_token="<unk>", shrinking_factor=0.5)),
        ("WordLevelTrainer", dict(vocab_size=9, special_tokens=["[UNK]"], show_progress=False)),
    ],
)
def test_state_and_repr_are_hfs(name, options):
    ours = getattr(tokviz.trainers, name)(**options)
    theirs = getattr(hf.trainers, name)(**options)
    assert json.loads(ours.__getstate__()) == json.loads(theirs.__getstate__())
    assert repr(ours) == repr(theirs)
    reloaded = pickle.loads(pickle.dumps(ours))
    assert type(reloaded) is type(ours) and reloaded.__getstate__() == ours.__getstate__()


def test_tokviz_options_survive_pickling_and_copies_are_independent():
    trainer = tokviz.trainers.WordPieceTrainer(vocab_size=50, scoring="likelihood", tie_break="first_seen")
    assert json.loads(trainer.__getstate__())["WordPieceTrainer"]["scoring"] == "likelihood"
    reloaded = pickle.loads(pickle.dumps(trainer))
    assert (reloaded.scoring, reloaded.tie_break, reloaded.vocab_size) == ("likelihood", "first_seen", 50)
    for duplicate in (copy.copy(trainer), copy.deepcopy(trainer)):
        duplicate.vocab_size = 99
        duplicate.special_tokens = ["x"]
        assert (trainer.vocab_size, trainer.special_tokens) == (50, [])
    assert "scoring" not in json.loads(tokviz.trainers.WordPieceTrainer().__getstate__())["WordPieceTrainer"]


def test_check_model_names_the_mistake_before_any_counting():
    with pytest.raises(Exception, match="UnigramTrainer can only train a Unigram; this tokenizer's model is a BPE"):
        tokviz.trainers.UnigramTrainer().check_model(tokviz.models.BPE())
    tokviz.trainers.WordPieceTrainer().check_model(tokviz.models.WordPiece())  # its own model: no error


def test_special_tokens_equal_hfs_literal_added_tokens():
    trainer = tokviz.trainers.WordPieceTrainer(special_tokens=["1", AddedToken("2", lstrip=True)])
    assert trainer.special_tokens == [AddedToken("1", special=True), AddedToken("2", lstrip=True, normalized=False, special=True)]
    trainer.special_tokens = []
    assert trainer.special_tokens == []
    trainer.limit_alphabet = None
    trainer.continuing_subword_prefix = None
    assert (trainer.limit_alphabet, trainer.continuing_subword_prefix) == (None, None)


def test_wordpiece_trainer_with_its_prefix_unset_trains_hfs_vocab():
    vocabs = []
    for lib in LIBRARIES.values():
        tokenizer = lib.Tokenizer(lib.models.WordPiece(unk_token="[UNK]"))
        tokenizer.pre_tokenizer = lib.pre_tokenizers.Whitespace()
        trainer = lib.trainers.WordPieceTrainer(vocab_size=30, show_progress=False)
        trainer.continuing_subword_prefix = None
        assert trainer.continuing_subword_prefix is None
        tokenizer.train_from_iterator(["hug hug hug pug pug"], trainer)
        vocabs.append(sorted(tokenizer.get_vocab()))
    assert vocabs[0] == vocabs[1] == ["g", "h", "hug", "p", "pug", "u", "ug"]


@pytest.mark.parametrize(
    ("trainer", "model", "lines"),
    [("BpeTrainer", "BPE", 3), ("WordPieceTrainer", "WordPiece", 3), ("UnigramTrainer", "Unigram", 2), ("WordLevelTrainer", "WordLevel", 0)],
)
def test_shown_progress_ends_with_hfs_empty_lines_on_stdout(capfd, trainer, model, lines):
    """HF's trainers end each progress stage with an empty line on file descriptor 1 when
    show_progress=True (nothing when False): a script prints the same on both libraries."""
    for lib in (tokviz, hf):
        for show in (True, False):
            tokenizer = lib.Tokenizer(getattr(lib.models, model)())
            tokenizer.train_from_iterator(["hug pug pun", "bun hug"], getattr(lib.trainers, trainer)(show_progress=show))
            assert capfd.readouterr().out == ("\n" * lines if show else ""), (lib.__name__, show)
