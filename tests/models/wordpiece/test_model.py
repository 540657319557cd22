"""WordPiece model: worked examples, the search trace, parity with HF ``tokenizers.models.WordPiece``."""

from __future__ import annotations

import json
import pickle

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from tokenizers import Tokenizer as HfTokenizer
from tokenizers import models as hf_models
from tokenizers import pre_tokenizers as hf_pre_tokenizers
from tokenizers import trainers as hf_trainers

from tokviz.errors import SerializationError, VocabularyError
from tokviz.models import BPE, Model, WordPiece
from tokviz.models.wordpiece.model import WordPieceAttempt

# A small vocabulary for the HF course's corpus (chapter 6, section 6), where "hugs"
# becomes hug ##s and "bum" becomes [UNK] although "b" and "##u" are known.
COURSE_VOCAB = ["[UNK]", "b", "h", "p", "##g", "##n", "##s", "##u", "gs", "hu", "hug"]


def as_triples(tokens) -> list[tuple[int, str, tuple[int, int]]]:
    return [(token.id, token.value, tuple(token.offsets)) for token in tokens]


def hf_char_tokens(hf_model, word: str) -> list[tuple[int, str, tuple[int, int]]]:
    """HF's model.tokenize with its byte offsets turned into character offsets."""
    char_start = {len(word[:index].encode("utf-8")): index for index in range(len(word) + 1)}
    return [(t.id, t.value, (char_start[t.offsets[0]], char_start[t.offsets[1]])) for t in hf_model.tokenize(word)]


@pytest.fixture
def course_model() -> WordPiece:
    return WordPiece({token: index for index, token in enumerate(COURSE_VOCAB)})


def test_course_examples(course_model):
    assert [t.value for t in course_model.tokenize("hugs")] == ["hug", "##s"]
    assert as_triples(course_model.tokenize("hugs")) == [(10, "hug", (0, 3)), (6, "##s", (3, 4))]
    assert [t.value for t in course_model.tokenize("bugs")] == ["b", "##u", "##g", "##s"]
    # "bum": b, ##u, then no "##m": the whole word is lost, not just the "m".
    assert as_triples(course_model.tokenize("bum")) == [(0, "[UNK]", (0, 3))]
    assert course_model.tokenize("") == []
    assert isinstance(course_model, Model)


def test_hf_own_examples():
    model = WordPiece({"##na": 0, "ba": 1, "[UNK]": 2})
    assert as_triples(model.tokenize("banana")) == [(1, "ba", (0, 2)), (0, "##na", (2, 4)), (0, "##na", (4, 6))]
    assert as_triples(model.tokenize("nanana")) == [(2, "[UNK]", (0, 6))]  # a first piece cannot be "##na"


def test_max_input_chars_per_word():
    vocab = {"[UNK]": 0, "a": 1, "##a": 2, "aaaaaaa": 3}
    model = WordPiece(vocab, max_input_chars_per_word=5)
    assert [t.value for t in model.tokenize("aaaaa")] == ["a", "##a", "##a", "##a", "##a"]
    # Longer than the limit: [UNK] without trying, even though "aaaaaaa" is in the vocab.
    assert as_triples(model.tokenize("aaaaaaa")) == [(0, "[UNK]", (0, 7))]
    trace = model.trace("aaaaaaa")
    assert trace.steps == () and "more than max_input_chars_per_word=5" in trace.unk_reason


def test_offsets_are_characters():
    model = WordPiece({"[UNK]": 0, "é": 1, "##t": 2, "##é": 3})
    assert as_triples(model.tokenize("été")) == [(1, "é", (0, 1)), (2, "##t", (1, 2)), (3, "##é", (2, 3))]


def test_missing_unk_token_is_a_clear_error():
    model = WordPiece({"a": 0})
    assert [t.value for t in model.tokenize("a")] == ["a"]
    with pytest.raises(VocabularyError, match="unk_token '\\[UNK\\]' is not in the vocabulary"):
        model.tokenize("b")


# -- trace -------------------------------------------------------------------------------


def test_trace_lists_every_candidate(course_model):
    trace = course_model.trace("hugs")
    assert [[(a.candidate, a.matched) for a in step.attempts] for step in trace.steps] == [
        [("hugs", False), ("hug", True)],
        [("##s", True)],
    ]
    assert [step.start for step in trace.steps] == [0, 3]
    assert [step.match.value for step in trace.steps] == ["hug", "##s"]
    assert trace.steps[0].attempts[1] == WordPieceAttempt(0, 3, "hug", True)
    assert trace.unk_reason is None and trace.unk_position is None
    assert trace.rows() == [
        {"step": 0, "start": 0, "end": 4, "candidate": "hugs", "matched": False},
        {"step": 0, "start": 0, "end": 3, "candidate": "hug", "matched": True},
        {"step": 1, "start": 3, "end": 4, "candidate": "##s", "matched": True},
    ]
    assert list(trace.tokens) == course_model.tokenize("hugs")


def test_trace_says_where_unk_came_from(course_model):
    trace = course_model.trace("bum")
    assert [[a.candidate for a in step.attempts] for step in trace.steps] == [
        ["bum", "bu", "b"],
        ["##um", "##u"],
        ["##m"],
    ]
    assert trace.steps[-1].match is None
    assert trace.unk_position == 2
    assert trace.unk_reason == "nothing in the vocabulary matches at character 2 ('m'): the whole word becomes '[UNK]'"
    assert [t.value for t in trace.tokens] == ["[UNK]"]


@settings(max_examples=300, deadline=None, derandomize=True)
@given(st.text(alphabet="bhpgnsuxé", max_size=9))
def test_trace_agrees_with_tokenize(word):
    model = WordPiece({token: index for index, token in enumerate(COURSE_VOCAB)}, max_input_chars_per_word=7)
    trace = model.trace(word)
    assert list(trace.tokens) == model.tokenize(word)
    if trace.unk_reason is None:
        assert [step.match for step in trace.steps] == model.tokenize(word)
    for step in trace.steps:
        # Longest first, one character shorter each time, only the last can match.
        assert [a.end for a in step.attempts] == list(range(len(word), len(word) - len(step.attempts), -1))
        assert not any(a.matched for a in step.attempts[:-1])


# -- immutability, serialization ------------------------------------------------------------


def test_pickle_and_options(course_model):
    with pytest.raises(OverflowError, match="max_input_chars_per_word must be a whole number >= 0, got -1"):
        course_model.max_input_chars_per_word = -1
    assert pickle.loads(pickle.dumps(course_model)).to_dict() == course_model.to_dict()
    shorter = course_model.with_options(max_input_chars_per_word=3)
    assert [t.value for t in shorter.tokenize("hugs")] == ["[UNK]"]
    assert course_model.max_input_chars_per_word == 100
    assert course_model.token_to_id("hug") == 10 and course_model.id_to_token(10) == "hug"
    assert course_model.get_vocab_size() == len(COURSE_VOCAB)


def test_to_dict_from_dict_and_files(course_model, tmp_path):
    section = course_model.to_dict()
    assert section == {
        "type": "WordPiece",
        "unk_token": "[UNK]",
        "continuing_subword_prefix": "##",
        "max_input_chars_per_word": 100,
        "vocab": {token: index for index, token in enumerate(COURSE_VOCAB)},
    }
    assert section == json.loads(HfTokenizer(hf_models.WordPiece(section["vocab"], unk_token="[UNK]")).to_str())["model"]
    assert WordPiece.from_dict(section).to_dict() == section
    with pytest.raises(SerializationError, match="no 'vocab'"):
        WordPiece.from_dict({"type": "WordPiece"})
    with pytest.raises(SerializationError, match="ids must be non-negative"):
        WordPiece.from_dict({"type": "WordPiece", "vocab": {"a": -1}})
    path = tmp_path / "vocab.txt"
    path.write_text("\n".join(COURSE_VOCAB) + "\n", encoding="utf-8")
    assert WordPiece.from_file(str(path)).to_dict() == section
    assert WordPiece.read_file(str(path)) == hf_models.WordPiece.read_file(str(path))
    saved = course_model.save(str(tmp_path), "course")
    assert saved == [str(tmp_path / "course-vocab.txt")]
    assert hf_models.WordPiece.read_file(saved[0]) == course_model.get_vocab()


def test_from_bpe():
    bpe = BPE({"a": 0, "##b": 1, "ab": 2, "<unk>": 3}, [("a", "##b")], unk_token="<unk>", continuing_subword_prefix="##")
    model = WordPiece.from_bpe(bpe)
    assert model.unk_token == "<unk>" and model.get_vocab() == bpe.get_vocab()
    assert [t.value for t in model.tokenize("abb")] == ["ab", "##b"]


# -- parity with HF on vocabularies HF trained on real text -------------------------------


@pytest.fixture(scope="module")
def words(read_shared_corpus, shared_corpus_lines, hard_strings) -> list[str]:
    splitter = hf_pre_tokenizers.BertPreTokenizer()
    held_out = read_shared_corpus("grimm_tales.txt")[300_000:420_000].splitlines()
    found = dict.fromkeys(word for line in [*held_out, *shared_corpus_lines, *hard_strings] for word, _ in splitter.pre_tokenize_str(line))
    found.update(dict.fromkeys(["", "a" * 120, "supercalifragilisticexpialidocious" * 3]))
    return list(found)


@pytest.mark.parametrize("prefix", ["##", "@@"])
@pytest.mark.parametrize("max_chars", [100, 8])
def test_parity_with_hf(prefix, max_chars, read_shared_corpus, words):
    tokenizer = HfTokenizer(hf_models.WordPiece(unk_token="[UNK]", continuing_subword_prefix=prefix))
    tokenizer.pre_tokenizer = hf_pre_tokenizers.BertPreTokenizer()
    trainer = hf_trainers.WordPieceTrainer(
        vocab_size=2000, special_tokens=["[UNK]"], continuing_subword_prefix=prefix, show_progress=False
    )
    tokenizer.train_from_iterator(read_shared_corpus("grimm_tales.txt")[:300_000].splitlines(), trainer)
    section = dict(json.loads(tokenizer.to_str())["model"], max_input_chars_per_word=max_chars)
    assert section["continuing_subword_prefix"] == prefix
    model = WordPiece.from_dict(section)
    hf = hf_models.WordPiece(section["vocab"], unk_token="[UNK]", continuing_subword_prefix=prefix, max_input_chars_per_word=max_chars)
    assert len(words) > 3000
    mismatches = [(w, as_triples(model.tokenize(w)), hf_char_tokens(hf, w)) for w in words if as_triples(model.tokenize(w)) != hf_char_tokens(hf, w)]
    assert not mismatches, f"{len(mismatches)} of {len(words)} differ, first: {mismatches[:3]}"
    # Some words are split, some are lost to [UNK]: both paths are exercised.
    assert sum(len(model.tokenize(w)) > 1 for w in words) > 500
    assert sum(model.tokenize(w)[0].value == "[UNK]" for w in words if w) > 20
    assert model.to_dict() == json.loads(HfTokenizer(hf).to_str())["model"]
