"""trainers.ParityBpeTrainer (parity-aware BPE) on tokviz and on HF ``tokenizers``: the same
merges, vocabulary, state, repr and errors. Literal worked examples besides the parity runs."""

from __future__ import annotations

import json
import pickle

import pytest
import tokenizers as hf

import tokviz

ENGLISH = [
    "hello world", "the quick brown fox jumps over the lazy dog", "hello there my friend how are you",
    "the cat sat on the mat and the dog barked", "hello world hello world",
]
SPANISH = [
    "hola mundo", "el rápido zorro marrón salta sobre el perro perezoso", "hola amigo cómo estás",
    "el gato se sentó sobre el tapete y el perro ladró", "hola mundo hola mundo",
]


def trained(lib, options, *args, **kwargs):
    tokenizer = lib.Tokenizer(lib.models.BPE())
    tokenizer.pre_tokenizer = lib.pre_tokenizers.Whitespace()
    result = lib.trainers.ParityBpeTrainer(show_progress=False, **options).train_from_iterator(tokenizer, *args, **kwargs)
    assert result is None
    data = json.loads(tokenizer.to_str())
    return data["model"], data["added_tokens"], tokenizer.encode("hello world hola mundo").tokens


@pytest.mark.parametrize(
    ("options", "kwargs"),
    [
        ({"num_merges": 20, "min_frequency": 2, "special_tokens": ["[UNK]"]}, {}),
        ({"num_merges": 20, "variant": "window", "window_size": 4, "alpha": 1.0}, {"dev_iterators": [SPANISH[:2], ENGLISH[:1]]}),
        ({"num_merges": 20, "global_merges": 3}, {"ratio": [1.0, 1.5]}),
        ({"num_merges": 25, "variant": "window", "window_size": 3, "ratio": [2.0, 1.0]}, {}),
        ({"num_merges": 500}, {"dev_iterators": [ENGLISH, SPANISH]}),  # runs out of pairs
        ({"num_merges": 50, "total_symbols": True, "max_token_length": 3, "limit_alphabet": 19}, {}),
        ({"num_merges": 30, "continuing_subword_prefix": "##", "end_of_word_suffix": "</w>"}, {"dev_iterators": [ENGLISH, SPANISH]}),
        ({"num_merges": 30, "initial_alphabet": ["q", "Z"]}, {}),
    ],
)
def test_parity_training_equals_hf(options, kwargs):
    ours = trained(tokviz, options, [ENGLISH, SPANISH], **kwargs)
    theirs = trained(hf, options, [ENGLISH, SPANISH], **kwargs)
    if "continuing_subword_prefix" in options:  # HF numbers the '##x' variants in hash order
        assert sorted(ours[0]["vocab"]) == sorted(theirs[0]["vocab"])
        assert ours[0]["merges"] == theirs[0]["merges"]
    else:
        assert ours == theirs


def test_worked_examples_of_the_selection():
    """Two languages of one word each: base alternates while tied, the window variant gives
    the smaller language a turn early, the dev set decides over the training sizes."""
    def merges(options, train, **kwargs):
        tokenizer = tokviz.Tokenizer(tokviz.models.BPE())
        tokenizer.pre_tokenizer = tokviz.pre_tokenizers.Whitespace()
        trainer = tokviz.trainers.ParityBpeTrainer(min_frequency=1, show_progress=False, **options)
        trainer.train_from_iterator(tokenizer, train, **kwargs)
        return [" ".join(pair) for pair in tokenizer.model.merges]

    assert merges({"num_merges": 6}, [["aabb"] * 10, ["ccdd"] * 10]) == ["b b", "d d", "a bb", "c dd", "a abb", "c cdd"]
    assert merges({"num_merges": 6}, [["aabb"] * 100, ["ccdd"]]) == ["b b", "a bb", "a abb", "d d", "c dd", "c cdd"]
    assert merges({"num_merges": 6, "variant": "window", "window_size": 2, "alpha": 1.0}, [["aabb"] * 100, ["ccdd"]]) == [
        "b b", "a bb", "d d", "a abb", "c dd", "c cdd",
    ]
    assert merges({"num_merges": 2}, [["ab"] * 10, ["cd"] * 5], dev_iterators=[["ab"], ["cd"] * 10]) == ["c d", "a b"]
    assert merges({"num_merges": 10}, [["ab"] * 10, ["cdef"] * 10]) == ["e f", "d ef", "a b", "c def"]
    two = [["ab"] * 5 + ["cd"], ["ab"] + ["cd"] * 5]
    assert merges({"num_merges": 2, "global_merges": 1}, two) == ["c d", "a b"]
    assert merges({"num_merges": 2}, two) == ["a b", "c d"]


@pytest.mark.parametrize("lib", [tokviz, hf], ids=["tokviz", "hf"])
def test_options_state_repr_and_errors_as_hf(lib):
    trainer_class = lib.trainers.ParityBpeTrainer
    trainer = trainer_class()
    assert (trainer.num_merges, trainer.variant, trainer.min_frequency, trainer.global_merges) == (32000, "base", 0, 0)
    assert (trainer.window_size, trainer.alpha, trainer.total_symbols) == (100, 2.0, False)
    trainer = trainer_class(num_merges=10, variant="window", ratio=[1.0, 2.0], special_tokens=["[UNK]"], alpha=1.5)
    assert repr(trainer) == (
        'ParityBpeTrainer(num_merges=10, variant="window", min_frequency=0, global_merges=0, window_size=100, alpha=1.5, total_symbols=false)'
    )
    assert trainer.__getstate__()["ratio"] == [1.0, 2.0] and trainer.__getstate__()["special_tokens"] == ["[UNK]"]
    restored = pickle.loads(pickle.dumps(trainer))
    assert (restored.num_merges, restored.variant, restored.alpha) == (10, "window", 1.5)
    assert not isinstance(trainer, lib.trainers.Trainer)
    trainer.num_merges = 5
    assert trainer.num_merges == 5
    with pytest.raises(ValueError, match="Unknown variant 'x'. Use 'base' or 'window'."):
        trainer_class(variant="x")
    with pytest.raises(OverflowError):
        trainer_class(num_merges=-1)
    with pytest.raises(TypeError):
        trainer_class(alpha="x")
    with pytest.raises(TypeError):
        trainer_class(total_symbols=1)
    tokenizer = lib.Tokenizer(lib.models.BPE())
    with pytest.raises(ValueError, match=r"dev_iterators length \(1\) must match train_iterators length \(2\)"):
        trainer.train_from_iterator(tokenizer, [ENGLISH, SPANISH], dev_iterators=[ENGLISH])
    with pytest.raises(ValueError, match="train_iterators must not be empty"):
        trainer.train_from_iterator(tokenizer, [])
    with pytest.raises(RuntimeError, match=r"ratio length \(1\) does not match number of languages \(2\)"):
        trainer_class(show_progress=False).train_from_iterator(tokenizer, [ENGLISH, SPANISH], ratio=[1.0])
    with pytest.raises(TypeError, match="'ParityBpeTrainer' object is not an instance of 'Trainer'"):
        tokenizer.train_from_iterator(ENGLISH, trainer=trainer)


def test_batches_normalizer_and_special_tokens():
    tokenizer = tokviz.Tokenizer(tokviz.models.BPE(unk_token="[UNK]"))
    tokenizer.normalizer = tokviz.normalizers.Lowercase()
    tokenizer.pre_tokenizer = tokviz.pre_tokenizers.Whitespace()
    trainer = tokviz.trainers.ParityBpeTrainer(num_merges=3, show_progress=False, special_tokens=["<s>"])
    trainer.train_from_iterator(tokenizer, [iter(["Ab ab", "cd"]), [["ab ab"], ["x"]]])
    assert list(tokenizer.model.merges) == [("a", "b"), ("c", "d")]
    assert tokenizer.get_vocab() == {"<s>": 0, "a": 1, "b": 2, "c": 3, "d": 4, "x": 5, "ab": 6, "cd": 7}
    assert tokenizer.encode("<s>AB").tokens == ["<s>", "ab"]


def test_limit_alphabet_follows_the_bpe_trainers_rule() -> None:
    """One rule for the alphabet (models.merges.compute_alphabet): the most frequent characters, over the
    train and dev texts; among equal counts HF's parity trainer keeps a different one from run to run (its
    hash map's order), this one keeps the smallest code points, as the BPE trainer does."""

    from tokviz import Tokenizer, models, pre_tokenizers
    from tokviz.models.merges import compute_alphabet

    texts = [["ab cd ef gh ab cd"] * 3, ["ij kl ab mn"] * 3]
    tokenizer = Tokenizer(models.BPE())
    tokenizer.pre_tokenizer = pre_tokenizers.Whitespace()
    tokviz.trainers.ParityBpeTrainer(num_merges=0, limit_alphabet=5, show_progress=False).train_from_iterator(tokenizer, texts)
    assert sorted(tokenizer.get_vocab()) == ["a", "b", "c", "d", "e"]
    assert compute_alphabet({"ab": 9, "cd": 6, "ef": 3, "gh": 3, "ij": 3, "kl": 3, "mn": 3}, [], 5) == ["a", "b", "c", "d", "e"]
    theirs = hf.Tokenizer(hf.models.BPE())
    theirs.pre_tokenizer = hf.pre_tokenizers.Whitespace()
    hf.trainers.ParityBpeTrainer(num_merges=0, limit_alphabet=5, show_progress=False).train_from_iterator(theirs, texts)
    assert set(theirs.get_vocab()) >= {"a", "b", "c", "d"} and len(theirs.get_vocab()) == 5  # the fifth: a tie
