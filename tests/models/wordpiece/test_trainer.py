"""WordPieceTrainer: the HF course golden (likelihood), HF parity (frequency), history, model_at."""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from tokenizers import Tokenizer as HfTokenizer
from tokenizers import models as hf_models
from tokenizers import pre_tokenizers as hf_pre_tokenizers
from tokenizers import trainers as hf_trainers

from tokviz import pre_tokenizers, trainers
from tokviz.errors import EmptyCorpusError, TokvizError
from tokviz.models.wordpiece.trainer import WordPieceTrainer
from tokviz.word_counts import count_words


def course_reference_vocab(
    word_counts: Mapping[str, int],
    vocab_size: int,
    special_tokens: Sequence[str] = (),
    prefix: str = "##",
    tie_break: str = "first_seen",
) -> list[str]:
    """The HF course's WordPiece loop: rescore every pair of every word at every merge.
    Quadratic; the oracle of these tests. With
    ``tie_break="hf"`` equal scores go to the smallest (left id, right id) instead.

    >>> course_reference_vocab({"hug": 10, "hugs": 5}, 6)
    ['##g', '##s', '##u', 'h', 'hu', 'hug']
    """
    alphabet: set[str] = set()
    for word in word_counts:
        alphabet.add(word[0])
        alphabet.update(prefix + char for char in word[1:])
    vocab = list(special_tokens) + sorted(alphabet)
    splits = {word: [char if index == 0 else prefix + char for index, char in enumerate(word)] for word in word_counts}
    while len(vocab) < vocab_size:
        letter_freqs: dict[str, int] = {}
        pair_freqs: dict[tuple[str, str], int] = {}
        for word, freq in word_counts.items():
            split = splits[word]
            for index, token in enumerate(split):
                letter_freqs[token] = letter_freqs.get(token, 0) + freq
                if index + 1 < len(split):
                    pair = (token, split[index + 1])
                    pair_freqs[pair] = pair_freqs.get(pair, 0) + freq
        best_pair, best_score = None, 0.0
        for pair, freq in pair_freqs.items():  # strict '>': the first pair met wins ties
            score = freq / (letter_freqs[pair[0]] * letter_freqs[pair[1]])
            if score > best_score:
                best_pair, best_score = pair, score
        if best_pair is None:
            break
        if tie_break == "hf":
            ids = {token: index for index, token in reversed(list(enumerate(vocab)))}
            best_pair = min(
                (pair for pair, freq in pair_freqs.items()
                 if freq / (letter_freqs[pair[0]] * letter_freqs[pair[1]]) == best_score),
                key=lambda pair: (ids[pair[0]], ids[pair[1]]),
            )
        left, right = best_pair
        new_token = left + (right[len(prefix) :] if right.startswith(prefix) else right)
        for word in word_counts:
            split = splits[word]
            index = 0
            while index < len(split) - 1:
                if split[index] == left and split[index + 1] == right:
                    split = split[:index] + [new_token] + split[index + 2 :]
                else:
                    index += 1
            splits[word] = split
        vocab.append(new_token)
    return vocab


BERT_SPECIALS = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"]
COURSE_WORDPIECE_70_TAIL = [
    'ab', '##fu', 'Fa', 'Fac', '##ct', '##ful', '##full', '##fully', 'Th', '##hm', '##thm', 'Hu', 'Hug', 'Hugg',
    'ch', 'cha', 'chap', 'chapt', 'sh', 'th', 'is', '##thms', '##za', '##zat', '##ut', '##ta',
]  # fmt: skip


def bert_counts(texts):
    return count_words(texts, pre_tokenizer=pre_tokenizers.BertPreTokenizer())


def test_worked_example_scores():
    history = WordPieceTrainer(vocab_size=6, scoring="likelihood", show_progress=False).train_from_word_counts({"hug": 10, "hugs": 5})
    first = history.merges[0]
    # ids: ##g 0, ##s 1, ##u 2, h 3. (h,##u), (##u,##g), (##g,##s) all score 1/15:
    # "hf" takes the smallest (left id, right id) = (0, 1).
    assert (first.left, first.right, first.token, first.count, first.score) == ("##g", "##s", "##gs", 5, 1 / 15)
    assert first.candidates == ((("##u", "##g"), 1 / 15), (("h", "##u"), 1 / 15))
    assert history.vocab == ("##g", "##s", "##u", "h", "##gs", "##ug")


def test_course_golden_likelihood_first_seen(course_corpus):
    trainer = trainers.WordPieceTrainer(vocab_size=70, special_tokens=BERT_SPECIALS, tie_break="first_seen", scoring="likelihood")
    history = trainer.train_from_word_counts(bert_counts(course_corpus))
    assert list(history.vocab[: len(BERT_SPECIALS)]) == BERT_SPECIALS
    assert list(history.vocab[-len(COURSE_WORDPIECE_70_TAIL) :]) == COURSE_WORDPIECE_70_TAIL
    assert len(history.vocab) == 70
    first = history.merges[0]
    assert (first.left, first.right, first.token, first.score) == ("a", "##b", "ab", 0.2)  # as the course prints
    assert [token.value for token in history.model.tokenize("Hugging")] == ["Hugg", "##i", "##n", "##g"]
    assert [token.value for token in history.model_at(70).tokenize("Hugging")] == ["Hugg", "##i", "##n", "##g"]


def test_course_corpus_hf_tie_break_differs(course_corpus):
    history = WordPieceTrainer(vocab_size=70, special_tokens=BERT_SPECIALS, scoring="likelihood", show_progress=False).train_from_word_counts(
        bert_counts(course_corpus)
    )
    # ('a','##b') and ('##f','##u') both score 0.2; "hf" takes the smaller ids (##f < a).
    assert [step.token for step in history.merges[:3]] == ["##fu", "ab", "Fa"]


@pytest.mark.parametrize("tie_break", ["first_seen", "hf"])
def test_likelihood_matches_the_course_reference_loop(shared_corpus_lines, tie_break):
    counts = bert_counts(shared_corpus_lines[:150])
    fast = WordPieceTrainer(vocab_size=1100, tie_break=tie_break, scoring="likelihood", show_progress=False).train_from_word_counts(counts)
    assert list(fast.vocab) == course_reference_vocab(counts, 1100, tie_break=tie_break)


# --------------------------------------------------------------------------- HF parity (frequency scoring)


def hf_wordpiece_vocab(lines, **options):
    tokenizer = HfTokenizer(hf_models.WordPiece(unk_token="[UNK]"))
    tokenizer.pre_tokenizer = hf_pre_tokenizers.BertPreTokenizer()
    tokenizer.train_from_iterator(lines, hf_trainers.WordPieceTrainer(show_progress=False, **options))
    return tokenizer.get_vocab()


def hash_ordered_forms(vocab):
    """HF numbers the '##x' forms in hash order (it changes per run and decides ties): replay it."""
    return [token for token, _ in sorted(vocab.items(), key=lambda item: item[1]) if token.startswith("##") and len(token) == 3]


def test_frequency_scoring_matches_hf_on_course_corpus(course_corpus):
    expected = hf_wordpiece_vocab(course_corpus, vocab_size=90, special_tokens=BERT_SPECIALS)
    history = WordPieceTrainer(
        vocab_size=90, special_tokens=BERT_SPECIALS, scoring="frequency", show_progress=False
    ).train_from_word_counts(bert_counts(course_corpus), prefixed_order=hash_ordered_forms(expected))
    assert history.vocab_at() == expected


@pytest.mark.slow
@pytest.mark.parametrize(
    "name", ["tinyshakespeare.txt", "grimm_tales.txt", "wikitext2_valid.txt", "wikitext2_test.txt", "big.txt"]
)
def test_frequency_scoring_same_token_set_as_hf(read_shared_corpus, name):
    lines = read_shared_corpus(name).splitlines()
    expected = hf_wordpiece_vocab(lines, vocab_size=5000)
    history = WordPieceTrainer(vocab_size=5000, scoring="frequency", show_progress=False).train_from_word_counts(
        bert_counts(lines), prefixed_order=hash_ordered_forms(expected)
    )
    assert set(history.vocab) == set(expected)
    assert history.vocab_at() == expected  # ids too


# --------------------------------------------------------------------------- history and model_at


@pytest.fixture(scope="module", params=["likelihood", "frequency"])
def shared_history(request, shared_corpus_lines):
    trainer = WordPieceTrainer(vocab_size=700, scoring=request.param, show_progress=False)
    return trainer, trainer.train_from_word_counts(bert_counts(shared_corpus_lines))


@settings(max_examples=12, deadline=None, derandomize=True)
@given(data=st.data())
def test_model_at_equals_a_fresh_training(shared_corpus_lines, shared_history, data):
    trainer, history = shared_history
    size = data.draw(st.integers(min_value=history.min_vocab_size - 2, max_value=history.max_vocab_size))
    fresh = WordPieceTrainer(vocab_size=max(1, size), scoring=trainer.scoring, show_progress=False).train_from_word_counts(
        bert_counts(shared_corpus_lines)
    )
    assert history.vocab_at(size) == fresh.vocab_at()
    model = history.model_at(size)
    assert model.get_vocab() == fresh.model.get_vocab()
    assert [t.value for t in model.tokenize("tokenization")] == [t.value for t in fresh.model.tokenize("tokenization")]


def test_history_records(shared_history):
    _, history = shared_history
    with pytest.raises(dataclasses.FrozenInstanceError):
        history.vocab = ()  # type: ignore[misc]
    frame = history.to_frame()
    assert len(frame) == len(history.merges) == 700 - history.min_vocab_size
    assert list(frame.columns) == ["rank", "left", "right", "token", "count", "score", "vocab_size", "candidates"]
    assert all(len(step.candidates) == 10 for step in history.merges)
    assert all(step.score >= step.candidates[0][1] for step in history.merges)
    assert history.stop_reason == "reached the target vocab size of 700"


def test_likelihood_score_is_count_over_product_of_frequencies(shared_corpus_lines):
    counts = bert_counts(shared_corpus_lines)
    history = WordPieceTrainer(vocab_size=1, scoring="likelihood", show_progress=False).train_from_word_counts(counts)
    history = WordPieceTrainer(vocab_size=history.min_vocab_size + 1, scoring="likelihood", show_progress=False).train_from_word_counts(counts)
    token_freq: dict[str, int] = {}
    pair_count: dict[tuple[str, str], int] = {}
    for word, count in counts.items():
        split = [char if index == 0 else "##" + char for index, char in enumerate(word)]
        for index, token in enumerate(split):
            token_freq[token] = token_freq.get(token, 0) + count
            if index + 1 < len(split):
                pair_count[token, split[index + 1]] = pair_count.get((token, split[index + 1]), 0) + count
    step = history.merges[0]
    expected = pair_count[step.left, step.right] / (token_freq[step.left] * token_freq[step.right])
    assert (step.count, step.score) == (pair_count[step.left, step.right], expected)
    assert step.score == max(c / (token_freq[a] * token_freq[b]) for (a, b), c in pair_count.items())


# --------------------------------------------------------------------------- bad input


def test_empty_corpus_raises():
    with pytest.raises(EmptyCorpusError):
        WordPieceTrainer().train_from_word_counts({})


def test_vocab_at_or_below_the_alphabet_trains_no_merge():
    history = WordPieceTrainer(vocab_size=4, scoring="likelihood", show_progress=False).train_from_word_counts({"hug": 10, "hugs": 5})
    assert history.merges == ()
    assert history.vocab == ("##g", "##s", "##u", "h")
    assert history.stop_reason == (
        "the target vocab size of 4 is at or below the 4 special tokens and alphabet symbols: no merge was trained"
    )


@pytest.mark.parametrize("scoring", ["likelihood", "frequency"])
def test_target_above_what_the_corpus_allows_stops_and_says_why(scoring):
    history = WordPieceTrainer(vocab_size=500, scoring=scoring, show_progress=False).train_from_word_counts(
        {"hug": 10, "hugs": 5}
    )
    assert history.vocab[-1] == "hugs"
    assert "no pair left to merge" in history.stop_reason and "below the target of 500" in history.stop_reason


def test_default_scoring_is_hfs_frequency_and_the_course_likelihood_is_explicit(course_corpus):
    counts = bert_counts(course_corpus)
    default = WordPieceTrainer(vocab_size=80, show_progress=False)
    assert default.scoring == hf_default_scoring() == "frequency"
    explicit = WordPieceTrainer(vocab_size=80, scoring="frequency", show_progress=False)
    assert set(default.train_from_word_counts(counts).vocab) == set(explicit.train_from_word_counts(counts).vocab)
    expected = hf_wordpiece_vocab(course_corpus, vocab_size=80)  # ties follow HF's per-run hash order: replay it
    assert default.train_from_word_counts(counts, prefixed_order=hash_ordered_forms(expected)).vocab_at() == expected


def hf_default_scoring():
    """HF's WordPieceTrainer is a BpeTrainer with a '##' prefix: it scores pairs by their count."""
    return "frequency" if "bpe_trainer" in hf_trainers.WordPieceTrainer().__getstate__().decode() else "unknown"


def test_bad_scoring_raises():
    with pytest.raises(TokvizError, match="scoring"):
        WordPieceTrainer(scoring="best")


def test_progress_reaches_the_total(course_corpus):
    calls = []
    WordPieceTrainer(vocab_size=120, show_progress=False).train_from_word_counts(
        bert_counts(course_corpus), progress=lambda *call: calls.append(call)
    )
    merges = [call for call in calls if call[0] == "merges"]
    assert len(merges) >= 50
    assert merges[-1][1] == merges[-1][2]
    assert [done for _, done, _ in merges] == sorted(done for _, done, _ in merges)


def test_for_model_keeps_unk_token_and_max_input_chars():
    from tokviz import models

    history = WordPieceTrainer(vocab_size=7, special_tokens=["<unk>"], show_progress=False).train_from_word_counts(
        {"hug": 10, "hugs": 5}
    )
    kept = history.for_model(models.WordPiece(unk_token="<unk>", max_input_chars_per_word=3))
    assert [token.value for token in kept.model.tokenize("hugs")] == ["<unk>"]  # longer than 3 chars
    assert kept.model_at(5).unk_token == "<unk>"
    assert history.model.unk_token == "[UNK]"


@settings(max_examples=60, deadline=None, derandomize=True)
@given(
    word_counts=st.dictionaries(
        st.text(alphabet="abcd", min_size=1, max_size=9), st.integers(min_value=1, max_value=5), min_size=1, max_size=12
    ),
    vocab_size=st.integers(min_value=3, max_value=40),
    tie_break=st.sampled_from(["first_seen", "hf"]),
)
def test_tie_heavy_small_corpora_match_the_course_loop(word_counts, vocab_size, tie_break):
    expected = course_reference_vocab(word_counts, vocab_size, tie_break=tie_break)
    if len(set(expected)) < len(expected):
        return  # the course appends a token twice when two paths build it; we keep one id
    history = WordPieceTrainer(vocab_size=vocab_size, tie_break=tie_break, scoring="likelihood", show_progress=False).train_from_word_counts(
        word_counts
    )
    assert list(history.vocab) == expected
