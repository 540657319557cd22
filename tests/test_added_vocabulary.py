"""Added tokens: ids, matching options, and the splits HF produces for the same vocabulary."""

from __future__ import annotations

import pytest

from tokviz import AddedToken, Tokenizer
from tokviz.added_vocabulary import AddedVocabulary
from tokviz.models import WordLevel

tokenizers = pytest.importorskip("tokenizers")


class _Lower:
    """A lowercasing normalizer, enough for matching normalized added tokens."""

    def normalize_str(self, text: str) -> str:
        return text.lower()


def test_special_tokens_are_not_normalized_by_default():
    assert AddedToken("[MASK]", special=True).normalized is False
    assert AddedToken("word").normalized is True
    assert AddedToken("word", normalized=False).normalized is False


def test_ids_follow_the_model_vocabulary():
    model = WordLevel({"test": 0, "tost": 1}, unk_token="test")
    vocab = AddedVocabulary()
    assert vocab.add_tokens([AddedToken("added_1")], model) == 1
    assert vocab.add_tokens([AddedToken("added_2"), AddedToken("added_2")], model) == 1
    assert vocab.add_tokens([AddedToken("test")], model) == 1  # already in the model: keeps its id
    assert vocab.add_tokens([AddedToken("")], model) == 0
    assert vocab.get_vocab() == {"added_1": 2, "added_2": 3, "test": 0}


def test_matching_options_worked_example():
    # HF's own example: lstrip/rstrip swallow spaces, single_word refuses 'ony' in 'Anthony'.
    vocab = AddedVocabulary()
    normalizer = _Lower()
    vocab.add_tokens(
        [
            AddedToken("my", lstrip=True, rstrip=True),
            AddedToken("name"),
            AddedToken("ony", single_word=True),
            AddedToken("[CLS]", special=True),
            AddedToken("[SEP]", special=True),
        ],
        model=None,
        normalizer=normalizer,
    )
    text = "[CLS] my name is anthony [SEP]"
    assert vocab.find_matches(text, normalized=False) == [(3, (0, 5)), (None, (5, 25)), (4, (25, 30))]
    assert vocab.find_matches(" my name is anthony ", normalized=True) == [
        (0, (0, 4)),
        (1, (4, 8)),
        (None, (8, 20)),
    ]


def test_single_word_is_unicode_aware():
    vocab = AddedVocabulary()
    vocab.add_tokens([AddedToken("<mask>", single_word=True)], model=None)
    splits = vocab.find_matches("<mask>, <mask>- \u25cc\u0330<mask>", normalized=True)
    assert [span for token_id, span in splits if token_id is not None] == [(0, 6), (8, 14)]


def test_longest_match_wins():
    vocab = AddedVocabulary()
    vocab.add_tokens([AddedToken("ab"), AddedToken("abc")], model=None)
    assert vocab.find_matches("xabcab", normalized=True) == [(None, (0, 1)), (1, (1, 4)), (0, (4, 6))]


def _pair_of_tokenizers():
    from tokenizers import Tokenizer as HFTokenizer
    from tokenizers import models, normalizers, pre_tokenizers

    vocab = {"[UNK]": 0, "hi": 1, "there": 2, "yesterday": 3, "a": 4}
    theirs = HFTokenizer(models.WordLevel(vocab, unk_token="[UNK]"))
    theirs.normalizer = normalizers.Lowercase()
    theirs.pre_tokenizer = pre_tokenizers.Whitespace()
    ours = Tokenizer.from_str(theirs.to_str())
    return ours, theirs


@pytest.mark.parametrize(
    "text",
    [
        "Hi <mask> there\t<mask>\t<mask>\u2000",
        "YESTERDAY a<mask>b [SEP]yesterday",
        "[SEP][SEP] x [SEP]",
        "<mask><mask> hi",
        "",
    ],
)
def test_tokenizer_splits_match_hf(text):
    from tokenizers import AddedToken as HFAddedToken

    ours, theirs = _pair_of_tokenizers()
    for tok, added in ((ours, AddedToken), (theirs, HFAddedToken)):
        tok.add_tokens([added("<mask>", lstrip=True, rstrip=True, single_word=True), added("Yesterday")])
        tok.add_special_tokens([added("[SEP]", special=True)])
    mine, reference = ours.encode(text), theirs.encode(text)
    assert (mine.ids, mine.tokens, mine.offsets, mine.word_ids) == (
        reference.ids,
        reference.tokens,
        reference.offsets,
        reference.word_ids,
    )
    assert ours.decode(mine.ids, skip_special_tokens=True) == theirs.decode(reference.ids, skip_special_tokens=True)
    assert ours.get_vocab() == theirs.get_vocab()


def test_added_tokens_are_never_split():
    ours, _ = _pair_of_tokenizers()
    ours.add_special_tokens(["<|end of text|>"])
    assert ours.encode("hi<|end of text|>there").tokens == ["hi", "<|end of text|>", "there"]


def test_tokens_up_to_the_length_limit_and_thousands_of_overlapping_ones_match_longest_first():
    # The trie's regex nests a group per token that ends inside a longer one: 1,024 of them here.
    vocab = AddedVocabulary()
    chains = ["a" * length for length in range(1, 1025)] + ["b" * length for length in range(1, 1000)] + ["ab" * 500]
    vocab.add_tokens([AddedToken(token) for token in chains], model=None)
    ids = {token: vocab.token_to_id(token) for token in chains}
    text = "x" + "a" * 1030 + " " + "ab" * 500 + "b" * 3
    assert vocab.find_matches(text, normalized=True) == [
        (None, (0, 1)), (ids["a" * 1024], (1, 1025)), (ids["a" * 6], (1025, 1031)), (None, (1031, 1032)),
        (ids["ab" * 500], (1032, 2032)), (ids["bbb"], (2032, 2035)),
    ]
