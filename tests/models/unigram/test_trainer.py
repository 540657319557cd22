"""UnigramTrainer: HF's seed test, the HF course goldens, HF / SentencePiece parity, history, errors."""

from __future__ import annotations

import io
import json
import math

import numpy as np
import pytest
import sentencepiece as spm
from tokenizers import Tokenizer as HFTokenizer
from tokenizers import models as hf_models
from tokenizers import pre_tokenizers as hf_pre_tokenizers
from tokenizers import trainers as hf_trainers

from tokviz import pre_tokenizers
from tokviz.errors import EmptyCorpusError, SpecialTokenError, VocabSizeError
from tokviz.history import EmStep, PruneRound
from tokviz.models.unigram import _em
from tokviz.models.unigram.model import Unigram
from tokviz.models.unigram.trainer import UnigramTrainer, UnigramTrainingHistory, course_encode_word
from tokviz.word_counts import count_words


# -- building blocks ------------------------------------------------------------------------


def test_seed_pieces_match_hf_unit_test():
    # HF's trainer.rs test_unigram_chars: characters by (count, char) descending, then
    # right-maximal repeated substrings by occurrences * length ("is" is always followed by " ").
    seeds = _em.find_seeds(["This is a", "こんにちは友達"], np.array([1, 1]), 16, 1_000_000)
    assert seeds.pieces == ["<UNK>", "s", "i", " ", "達", "友", "ん", "は", "に", "ち", "こ", "h", "a", "T", "is ", "s "]
    assert seeds.counts[1:].tolist() == [2, 2, 2, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 6, 4]


def test_seed_substrings_count_unique_words_once():
    # HF puts each unique word once in its suffix array: "ab" occurs in 2 words whatever their counts.
    seeds = _em.find_seeds(["abx", "aby"], np.array([100, 1]), 16, 1_000_000)
    assert dict(zip(seeds.pieces, seeds.counts.tolist()))["ab"] == 4.0  # 2 occurrences * 2 chars
    assert dict(zip(seeds.pieces, seeds.counts.tolist()))["a"] == 101.0  # characters are weighted


def test_digamma_matches_known_values():
    values = _em.digamma(np.array([1.0, 0.5, 10.0, 1000.0]))
    assert values == pytest.approx([-0.5772156649, -1.9635100260, 2.2517525891, 6.9072551956], abs=1e-9)


def test_lattice_set_agrees_with_the_python_lattice():
    words = ["▁hugs", "▁hug", "▁pugs", "▁bun"]
    seeds = _em.find_seeds(words, np.array([5, 10, 5, 4]), 16, 1_000_000)
    lattices = _em.LatticeSet(*seeds.nodes(), seeds.first, seeds.last, len(seeds.flat))
    scores = np.log(np.nan_to_num(seeds.counts, nan=1.0)) - math.log(np.nansum(seeds.counts))
    node_scores = scores[lattices.seed]
    alpha = lattices.forward(node_scores)
    model = Unigram([(p, float(s)) for p, s in zip(seeds.pieces, scores)])
    for index, word in enumerate(words):
        assert alpha[seeds.last[index]] == pytest.approx(model.lattice(word).log_partition(), abs=1e-12)
    _, back = lattices.viterbi(node_scores)
    docs, nodes = lattices.backtrack(back)
    for index, word in enumerate(words):
        pieces = [seeds.pieces[lattices.seed[n]] for d, n in zip(docs, nodes) if d == index][::-1]
        assert pieces == model.encode(word)


def test_seed_budget_keeps_the_best_scores_then_the_larger_string():
    # "bc" (3 occurrences * 2) and "abc" (2 * 3) tie at 6 ("ab" is always followed by "c"): HF's reverse
    # sort of (score, string) puts the larger string "bc" first, so a budget of one substring keeps it.
    six_chars = 6
    seeds = _em.find_seeds(["abcx", "abcy", "bcz"], np.array([1, 1, 1]), 16, six_chars + 2)
    assert seeds.pieces[-2:] == ["bc", "abc"] and seeds.counts[-2:].tolist() == [6.0, 6.0]
    seeds = _em.find_seeds(["abcx", "abcy", "bcz"], np.array([1, 1, 1]), 16, six_chars + 1)
    assert seeds.pieces[-1] == "bc" and "abc" not in seeds.pieces


def test_seed_nodes_of_a_range_of_positions():
    seeds = _em.find_seeds(["abx", "aby"], np.array([1, 1]), 16, 1_000_000)  # flat "abx\0aby\0"
    start, end, seed, single = seeds.nodes(4, 8)  # the second word
    assert sorted(zip(start.tolist(), end.tolist(), [seeds.pieces[i] for i in seed])) == [
        (4, 5, "a"), (4, 6, "ab"), (5, 6, "b"), (6, 7, "y")]
    assert sorted(single.tolist()) == [False, True, True, True]


def test_em_in_chunks_trains_the_model_of_one_lattice_set(read_shared_corpus, monkeypatch):
    """The corpus cut into many lattice chunks (as a large corpus is) gives the same pieces and EM record;
    scores agree to rounding (the expected counts are summed chunk by chunk)."""
    from tokviz.models.unigram import trainer as trainer_module

    words = count_words(read_shared_corpus("tinyshakespeare.txt")[:60_000].splitlines(), pre_tokenizer=pre_tokenizers.Metaspace())
    whole = UnigramTrainer(vocab_size=800, unk_token="<unk>").train_from_word_counts(words)
    monkeypatch.setattr(trainer_module, "CHUNK_CHARACTERS", 500)
    chunked = UnigramTrainer(vocab_size=800, unk_token="<unk>").train_from_word_counts(words)
    assert dict(chunked.model.vocab) == pytest.approx(dict(whole.model.vocab), abs=1e-9)
    assert [(s.vocab_size, s.num_tokens) for s in chunked.em_steps] == [(s.vocab_size, s.num_tokens) for s in whole.em_steps]
    assert [s.objective for s in chunked.em_steps] == pytest.approx([s.objective for s in whole.em_steps], rel=1e-12)
    assert [r.removed for r in chunked.prune_rounds] == [r.removed for r in whole.prune_rounds]


# -- the HF course (chapter 6, section 7) ---------------------------------------------------


@pytest.fixture(scope="module")
def course_history(course_corpus) -> UnigramTrainingHistory:
    words = count_words(course_corpus, pre_tokenizer=pre_tokenizers.Sequence([pre_tokenizers.WhitespaceSplit(), pre_tokenizers.Metaspace()]))
    return UnigramTrainer(vocab_size=100, method="course").train_from_word_counts(words)


def test_course_goldens(course_history):
    assert course_history.initial_loss == pytest.approx(413.3626, abs=1e-4)
    seed_costs = {piece: -score for piece, score in course_history.snapshots[0].pieces}
    assert len(seed_costs) == 300
    tokens, cost = course_encode_word("Hopefully", seed_costs)
    assert tokens == ["H", "o", "p", "e", "f", "u", "ll", "y"]
    assert cost == pytest.approx(41.5426, abs=1e-4)
    first_losses = dict(course_history.snapshots[0].losses)
    assert first_losses["ll"] == pytest.approx(6.3831, abs=1e-4)
    assert first_losses["his"] == pytest.approx(0.0, abs=1e-9)
    final = course_history.model
    words = ["▁" + w for w in "This is the Hugging Face course.".split()]
    assert [t.value for w in words for t in final.tokenize(w)] == ["▁This", "▁is", "▁the", "▁Hugging", "▁Face", "▁course."]


def test_course_rounds_remove_ten_percent(course_history):
    sizes = [(r.size_before, r.size_after) for r in course_history.prune_rounds]
    assert sizes[:3] == [(300, 270), (270, 243), (243, 219)]
    assert sizes[-1][1] == 100 == course_history.model.get_vocab_size()
    for r in course_history.prune_rounds:
        assert len(r.removed) == r.size_before - r.size_after
        assert all(len(piece) > 1 for piece, _ in r.removed)  # never a single character
    assert "his" in dict(course_history.prune_rounds[0].removed)
    assert course_history.to_frame()["size_after"].tolist()[-1] == 100


def test_course_progress(course_corpus):
    calls = []
    words = count_words(course_corpus, pre_tokenizer=pre_tokenizers.Metaspace())
    UnigramTrainer(vocab_size=250, method="course").train_from_word_counts(words, progress=lambda *c: calls.append(c))
    assert len(calls) > 200 and calls[-1][1] == calls[-1][2]
    assert [done for _, done, _ in calls] == sorted(done for _, done, _ in calls)


def test_course_model_at(course_history):
    for size in (60, 100, 150, 270, 300):
        model = course_history.model_at(size)
        assert model.get_vocab_size() == max(size, course_history.min_vocab_size)
    assert course_history.model_at(100) is course_history.model
    assert course_history.model_at(300).get_vocab_size() == course_history.max_vocab_size == 300


# -- method="em": HF and SentencePiece parity ---------------------------------------------------


def _split_lines(text: str) -> tuple[list[str], list[str]]:
    lines = [line for line in text.splitlines() if line.strip()]
    return [l for i, l in enumerate(lines) if i % 10 != 9], [l for i, l in enumerate(lines) if i % 10 == 9]


@pytest.fixture(scope="module")
def parity_corpus(read_shared_corpus) -> tuple[list[str], list[str]]:
    """80 KB of each shared corpus (400 KB, like the benchmark mix), every 10th line held out.

    The mix matters for the SentencePiece comparison: on wikitext alone (its " @-@ " markup)
    HF and SentencePiece differ by 7%; on the benchmark mix by under 1% (bench/bench_unigram.py).
    """
    names = ("tinyshakespeare.txt", "grimm_tales.txt", "wikitext2_valid.txt", "wikitext2_test.txt", "big.txt")
    return _split_lines("".join(read_shared_corpus(name)[:80_000] for name in names))


def _tokens_per_word(tokenize, word_counts) -> float:
    return sum(count * len(tokenize(word)) for word, count in word_counts.items()) / sum(word_counts.values())


@pytest.mark.slow
@pytest.mark.parametrize("vocab_size", [2000, 8000])
def test_em_matches_hf_and_sentencepiece(parity_corpus, vocab_size):
    train, held_out = parity_corpus
    metaspace = hf_pre_tokenizers.Metaspace()
    hf = HFTokenizer(hf_models.Unigram())
    hf.pre_tokenizer = metaspace
    hf_trainer = hf_trainers.UnigramTrainer(vocab_size=vocab_size, special_tokens=["<unk>"], unk_token="<unk>", show_progress=False)
    hf.train_from_iterator(train, trainer=hf_trainer)
    words = count_words(train, pre_tokenizer=metaspace)  # identical word counts for both
    history = UnigramTrainer(vocab_size=vocab_size, special_tokens=["<unk>"], unk_token="<unk>").train_from_word_counts(words)
    ours, theirs = set(history.model.get_vocab()), set(hf.get_vocab())
    jaccard = len(ours & theirs) / len(ours | theirs)
    assert jaccard >= 0.95

    held_words = count_words(held_out, pre_tokenizer=metaspace)
    hf_section = json.loads(hf.to_str())["model"]
    hf_model = hf_models.Unigram([tuple(e) for e in hf_section["vocab"]], hf_section["unk_id"], False)
    ours_tpw = _tokens_per_word(history.model.tokenize, held_words)
    hf_tpw = _tokens_per_word(hf_model.tokenize, held_words)
    assert ours_tpw == pytest.approx(hf_tpw, rel=0.01)

    proto = io.BytesIO()
    spm.SentencePieceTrainer.train(sentence_iterator=iter(train), model_writer=proto, vocab_size=min(vocab_size, hf.get_vocab_size()),
                                   model_type="unigram", minloglevel=2, num_threads=1, hard_vocab_limit=False)
    sp = spm.SentencePieceProcessor(model_proto=proto.getvalue())
    sp_tpw = sum(len(sp.encode(line)) for line in held_out) / sum(held_words.values())
    assert ours_tpw == pytest.approx(sp_tpw, rel=0.03)


@pytest.mark.slow
@pytest.mark.parametrize(
    "options",
    [
        {"max_piece_length": 6},
        {"shrinking_factor": 0.5},
        {"n_sub_iterations": 3},
        {"initial_alphabet": ["é", "ß"]},
        {"special_tokens": ["<a>", "<b>"], "unk_token": "<u>"},
    ],
)
def test_em_options_match_hf(read_shared_corpus, options):
    lines = read_shared_corpus("tinyshakespeare.txt")[:100_000].splitlines()
    metaspace = hf_pre_tokenizers.Metaspace()
    hf = HFTokenizer(hf_models.Unigram())
    hf.pre_tokenizer = metaspace
    hf.train_from_iterator(lines, trainer=hf_trainers.UnigramTrainer(vocab_size=1000, show_progress=False, **options))
    model = UnigramTrainer(vocab_size=1000, **options).train_from_word_counts(count_words(lines, pre_tokenizer=metaspace)).model
    ours, theirs = model.get_vocab(), hf.get_vocab()
    assert len(set(ours) & set(theirs)) / len(set(ours) | set(theirs)) >= 0.99
    for special in options.get("special_tokens", []) + [options.get("unk_token")]:
        if special is not None:
            assert ours[special] == theirs[special]


# -- method="em": history, options, errors --------------------------------------------------


@pytest.fixture(scope="module")
def em_history(parity_corpus) -> UnigramTrainingHistory:
    words = count_words(parity_corpus[0][:1500], pre_tokenizer=pre_tokenizers.Metaspace())
    calls: list[tuple[str, int, int]] = []
    history = UnigramTrainer(vocab_size=500, special_tokens=["<pad>"], unk_token="<unk>").train_from_word_counts(
        words, progress=lambda phase, done, total: calls.append((phase, done, total)))
    object.__setattr__(history, "_calls", calls)  # for the progress test only
    return history


def test_em_history_records(em_history):
    steps = em_history.em_steps
    assert steps and all(isinstance(s, EmStep) for s in steps)
    assert [s.sub_iteration for s in steps[:4]] == [0, 1, 0, 1]
    assert steps[0].round == 0 and steps[-1].round == len(em_history.prune_rounds)
    # the objective (negative log-likelihood per word) falls within the first EM round
    assert steps[1].objective < steps[0].objective
    assert all(s.num_tokens > 0 for s in steps)
    for r in em_history.prune_rounds:
        assert isinstance(r, PruneRound) and r.size_after < r.size_before
        assert len(r.removed) == r.size_before - r.size_after
    frame = em_history.to_frame()
    assert list(frame.columns) == ["round", "sub_iteration", "vocab_size", "objective", "num_tokens"]
    assert len(frame) == len(steps)
    assert len(em_history.removed_frame()) == sum(len(r.removed) for r in em_history.prune_rounds)
    assert len(em_history.prune_frame()) == len(em_history.prune_rounds)
    assert em_history.stop_reason == "reached the target vocab size of 500"
    assert em_history.final_pieces == em_history.model.vocab


def test_em_special_tokens_unk_and_required_chars(em_history):
    model = em_history.model
    assert model.vocab[0] == ("<unk>", 0.0) and model.vocab[1] == ("<pad>", 0.0)
    assert model.unk_id == 0 and model.get_vocab_size() == 500
    assert set(em_history.required_chars) <= set(model.get_vocab())
    assert em_history.min_vocab_size == len(em_history.required_chars) + 2
    scores = [score for _, score in model.vocab[2:]]
    assert scores == sorted(scores, reverse=True)
    assert [t.id for t in model.tokenize("▁\u2603")][-1] == 0  # an unseen character is <unk>


def test_em_model_at(em_history):
    assert em_history.model_at(500) is em_history.model
    for size in (em_history.min_vocab_size, 300, 499, 700, 1500, em_history.max_vocab_size):
        model = em_history.model_at(size)
        assert model.get_vocab_size() == size
        assert set(em_history.required_chars) <= set(model.get_vocab())
        assert model.vocab[0][0] == "<unk>"
    # a smaller model keeps the pieces the larger one ranks first
    small, large = set(em_history.model_at(300).get_vocab()), set(em_history.model_at(450).get_vocab())
    assert len(small - large) <= 5
    assert em_history.model_at(10**9).get_vocab_size() == em_history.max_vocab_size
    assert em_history.model_at(np.int64(300)).get_vocab_size() == 300
    with pytest.raises(VocabSizeError):
        em_history.model_at(300.5)


def test_progress_reports(em_history):
    calls = em_history._calls
    phases = {phase for phase, _, _ in calls}
    assert {"seed pieces", "EM training", "finalize"} <= phases
    em_calls = [(done, total) for phase, done, total in calls if phase == "EM training"]
    assert len(em_calls) >= 4 * len(em_history.em_steps)
    assert em_calls[-1][0] == em_calls[-1][1]
    assert all(0 <= done <= total for done, total in em_calls)
    assert [d for d, _ in em_calls] == sorted(d for d, _ in em_calls)


def test_hf_unk_placement_examples():
    # HF trainer.rs test_unk_token and test_special_tokens.
    words = {"The": 12, "are": 11}
    first = UnigramTrainer(special_tokens=["[SEP]", "[CLS]"], unk_token="[UNK]").train_from_word_counts(words).model
    assert [p for p, _ in first.vocab[:3]] == ["[UNK]", "[SEP]", "[CLS]"] and first.unk_id == 0
    kept = UnigramTrainer(special_tokens=["[SEP]", "[CLS]", "[UNK]"], unk_token="[UNK]").train_from_word_counts(words).model
    assert [p for p, _ in kept.vocab[:3]] == ["[SEP]", "[CLS]", "[UNK]"] and kept.unk_id == 2
    plain = UnigramTrainer().train_from_word_counts(words).model
    assert plain.vocab[0][0] == "e" and plain.unk_id is None
    hf = HFTokenizer(hf_models.Unigram())
    hf.train_from_iterator(["The"] * 12 + ["are"] * 11, trainer=hf_trainers.UnigramTrainer(show_progress=False))
    assert set(hf.get_vocab()) == set(plain.get_vocab())


def test_initial_alphabet_is_required():
    model = UnigramTrainer(vocab_size=30, initial_alphabet=["x", "yz"]).train_from_word_counts({"hug": 3}).model
    assert {"x", "y", "h", "u", "g"} <= set(model.get_vocab()) and "z" not in model.get_vocab()


def test_bad_input():
    with pytest.raises(EmptyCorpusError):
        UnigramTrainer().train_from_word_counts({})
    with pytest.raises(EmptyCorpusError):
        UnigramTrainer().train_from_word_counts({"": 3})
    with pytest.raises(VocabSizeError, match="at least 5"):
        UnigramTrainer(vocab_size=4, special_tokens=["<s>"]).train_from_word_counts({"hello": 2})
    with pytest.raises(VocabSizeError):
        UnigramTrainer(vocab_size=0)
    assert UnigramTrainer(special_tokens=["<s>", "<s>"]).special_token_contents == ("<s>",)  # a repeat is kept once
    with pytest.raises(SpecialTokenError):
        UnigramTrainer(special_tokens=[""])
    with pytest.raises(ValueError, match="method"):
        UnigramTrainer(method="bpe")


def test_target_above_what_the_corpus_allows():
    history = UnigramTrainer(vocab_size=1000).train_from_word_counts({"▁hug": 10, "▁pug": 5, "▁hugs": 5})
    size = history.model.get_vocab_size()
    assert size < 1000
    assert history.stop_reason == f"the corpus supports only {size} tokens (target 1000)"
