"""Tests for tokviz.lessons: every lesson step agrees with the real trainers, the course's worked
examples and HF ``tokenizers`` run on the same words."""

from __future__ import annotations

import json
import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tokviz import lessons
from tokviz.errors import CorpusReadError
from tokviz.lessons import CLASSIC_WORD_COUNTS, UNK

tokenizers = pytest.importorskip("tokenizers")


def merges_of(lesson: lessons.Lesson) -> list[tuple[str, str]]:
    return [(step.data.left, step.data.right) for step in lesson.steps if step.kind == "merge"]


def hf_bpe_merges(word_counts: dict[str, int], n_merges: int) -> list[tuple[str, str]]:
    """HF's BpeTrainer on the same words (one line per word occurrence)."""
    from tokenizers import models, pre_tokenizers, trainers

    tok = tokenizers.Tokenizer(models.BPE(unk_token=UNK))
    tok.pre_tokenizer = pre_tokenizers.WhitespaceSplit()
    alphabet = {char for word in word_counts for char in word}
    trainer = trainers.BpeTrainer(vocab_size=1 + len(alphabet) + n_merges, special_tokens=[UNK], show_progress=False)
    tok.train_from_iterator([word for word, count in word_counts.items() for _ in range(count)], trainer)
    merges = json.loads(tok.to_str())["model"]["merges"]
    return [tuple(merge.split(" ")) if isinstance(merge, str) else tuple(merge) for merge in merges]


# --------------------------------------------------------------------------- BPE


def test_bpe_lesson_learns_the_course_merges_in_order() -> None:
    lesson = lessons.bpe_lesson(CLASSIC_WORD_COUNTS, n_merges=3)
    assert merges_of(lesson) == [("u", "g"), ("u", "n"), ("h", "ug")]
    assert [step.data.token for step in lesson.steps if step.kind == "merge"] == ["ug", "un", "hug"]
    assert [step.data.count for step in lesson.steps if step.kind == "merge"] == [20, 16, 15]
    assert [step.kind for step in lesson.steps] == ["splits", "merge", "merge", "merge", "encode"]
    # The same merges as the course's quadratic loop and as HF's BpeTrainer on the same words.
    from tests.models.bpe.test_trainer import course_reference_merges

    assert merges_of(lesson) == course_reference_merges(CLASSIC_WORD_COUNTS, 11, [UNK])
    assert merges_of(lesson) == hf_bpe_merges(CLASSIC_WORD_COUNTS, 3)


def test_bpe_first_step_shows_every_pair_count_with_the_winner_first() -> None:
    view = lessons.bpe_lesson(CLASSIC_WORD_COUNTS, n_merges=1).steps[1].data
    assert [(row.left, row.right, row.count) for row in view.pairs] == [
        ("u", "g", 20), ("p", "u", 17), ("u", "n", 16), ("h", "u", 15), ("g", "s", 5), ("b", "u", 4),
    ]
    assert [row.winner for row in view.pairs] == [True, False, False, False, False, False]
    assert not any(row.tied for row in view.pairs)
    assert [(split.word, split.symbols) for split in view.splits][-1] == ("hugs", ("h", "u", "g", "s"))
    assert view.vocab_before == (UNK, "b", "g", "h", "n", "p", "s", "u")
    assert lessons.pairs_frame(view).iloc[0].to_dict() == {"pair": "u + g", "count": 20}


def test_bpe_splits_before_each_merge_are_what_the_trained_model_gives() -> None:
    from tokviz.models.bpe.trainer import BpeTrainer

    history = BpeTrainer(vocab_size=100, special_tokens=[UNK], show_progress=False).train_from_word_counts(CLASSIC_WORD_COUNTS)
    lesson = lessons.bpe_lesson(CLASSIC_WORD_COUNTS, n_merges=len(history.merges))
    for step in (step for step in lesson.steps if step.kind == "merge"):
        view = step.data
        model = history.model_at(view.vocab_before.__len__())
        for split in view.splits:
            assert split.symbols == tuple(token.value for token in model.tokenize(split.word))
        # The table's best row is the history's merge, with the history's count.
        assert (view.pairs[0].left, view.pairs[0].right, view.pairs[0].count) == (view.left, view.right, view.count)


def test_bpe_new_words_as_in_the_course_and_as_hf_encodes_them() -> None:
    lesson = lessons.bpe_lesson(CLASSIC_WORD_COUNTS, n_merges=3, new_words=("bug", "mug", "bum", "hugs"))
    final = lesson.steps[-1]
    splits, vocab, encoded = final.data.splits, final.data.vocab, final.data.encoded
    assert {word.word: list(word.tokens) for word in encoded} == {
        "bug": ["b", "ug"], "mug": [UNK, "ug"], "bum": ["b", "u", UNK], "hugs": ["hug", "s"],
    }
    assert [split.symbols for split in splits] == [("hug",), ("p", "ug"), ("p", "un"), ("b", "un"), ("hug", "s")]
    from tokenizers import models

    hf = tokenizers.Tokenizer(models.BPE({token: index for index, token in enumerate(vocab)}, [("u", "g"), ("u", "n"), ("h", "ug")], unk_token=UNK))
    for word in encoded:
        assert hf.encode(word.word).tokens == list(word.tokens)
    assert lessons.encoded_frame(encoded).iloc[1].to_dict() == {"word": "mug", "tokens": "['[UNK]', 'ug']", "note": "has characters never seen in training"}


def test_more_merges_than_the_words_allow_stops_at_the_last_one() -> None:
    lesson = lessons.bpe_lesson(CLASSIC_WORD_COUNTS, n_merges=99)
    assert len(merges_of(lesson)) == 7  # every word is one token after seven merges
    assert all(len(split.symbols) == 1 for split in lesson.steps[-1].data.splits)


# --------------------------------------------------------------------------- predict the next merge


def test_prediction_right_wrong_and_not_a_pair() -> None:
    view = lessons.bpe_lesson(CLASSIC_WORD_COUNTS, n_merges=1).steps[1].data
    right = lessons.judge_prediction(view, "u", "g")
    assert right.correct and right.headline == "Right!"
    assert right.why == "'u' + 'g' occurs 20 times: no other pair has a count this high."
    wrong = lessons.judge_prediction(view, "p", "u")
    assert not wrong.correct
    assert wrong.why == "'p' + 'u' occurs 17 times; 'u' + 'g' occurs 20 times."
    assert "not an adjacent pair" in lessons.judge_prediction(view, "h", "g").headline


def test_a_tie_is_explained_by_the_documented_tie_break() -> None:
    # WordPiece step 2: '##u'+'##g', '##u'+'##n', '##u'+'##gs', 'b'+'##u', 'h'+'##u', 'p'+'##u' all score 1/36.
    view = lessons.wordpiece_lesson(CLASSIC_WORD_COUNTS, n_merges=2).steps[2].data
    assert (view.left, view.right) == ("##u", "##g")
    assert {(row.left, row.right) for row in view.pairs if row.tied} == {("##u", "##n"), ("##u", "##gs"), ("b", "##u"), ("h", "##u"), ("p", "##u")}
    verdict = lessons.judge_prediction(view, "##u", "##n")
    assert not verdict.correct
    assert verdict.why.startswith("Your pair tied: '##u' + '##n': 16 / (36 × 16) = 0.0278, '##u' + '##g': 15 / (36 × 15) = 0.0278.")
    assert "Ids: '##u' 4, '##n' 2 vs '##u' 4, '##g' 1." in verdict.why
    assert "smaller id" in verdict.why
    right = lessons.judge_prediction(view, "##u", "##g")
    assert right.correct and "tie-break" in right.headline


# --------------------------------------------------------------------------- WordPiece


def test_wordpiece_lesson_scores_and_a_rare_pair_beating_a_frequent_one() -> None:
    lesson = lessons.wordpiece_lesson(CLASSIC_WORD_COUNTS, n_merges=5)
    start = lesson.steps[0].data.splits
    assert [split.symbols for split in start] == [
        ("h", "##u", "##g"), ("p", "##u", "##g"), ("p", "##u", "##n"), ("b", "##u", "##n"), ("h", "##u", "##g", "##s"),
    ]
    first = lesson.steps[1].data
    assert (first.left, first.right, first.count) == ("##g", "##s", 5)
    assert first.score == pytest.approx(5 / (20 * 5))
    frequent = next(row for row in first.pairs if (row.left, row.right) == ("##u", "##g"))
    assert (frequent.count, frequent.left_count, frequent.right_count) == (20, 36, 20)
    assert frequent.count > first.count and frequent.score < first.score  # the frequent pair loses
    verdict = lessons.judge_prediction(first, "##u", "##g")
    assert verdict.why.startswith("Your pair is more frequent, but its parts are frequent on their own")
    assert merges_of(lesson) == [("##g", "##s"), ("##u", "##g"), ("##u", "##n"), ("##u", "##gs"), ("h", "##ugs")]
    for step in lesson.steps[1:-1]:  # the table's winner is the history's, with the history's score
        assert step.data.pairs[0].winner and math.isclose(step.data.pairs[0].score, step.data.score)
    assert list(lessons.pairs_frame(first).columns) == ["pair", "count", "count(left)", "count(right)", "score"]


def test_wordpiece_vocab_is_the_course_loop_s() -> None:
    from tests.models.wordpiece.test_trainer import course_reference_vocab

    lesson = lessons.wordpiece_lesson(CLASSIC_WORD_COUNTS, n_merges=99)
    vocab = lesson.steps[-1].data.vocab
    assert list(vocab) == course_reference_vocab(CLASSIC_WORD_COUNTS, 100, [UNK], tie_break="hf")


def test_wordpiece_encoding_bum_is_one_unk_while_bpe_keeps_b_and_u() -> None:
    lesson = lessons.wordpiece_lesson(CLASSIC_WORD_COUNTS, n_merges=5, new_words=("bum", "hugs", "bugs", "pun"))
    vocab, traces = lesson.steps[-1].data.vocab, [(item.trace, item.bpe_tokens) for item in lesson.steps[-1].data.traces]
    got = {trace.word: ([token.value for token in trace.tokens], list(bpe)) for trace, bpe in traces}
    assert got == {
        "bum": ([UNK], ["b", "u", UNK]),
        "hugs": (["hugs"], ["hug", "s"]),
        "bugs": (["b", "##ugs"], ["b", "ug", "s"]),
        "pun": (["p", "##un"], ["p", "un"]),
    }
    bum = traces[0][0]
    assert bum.unk_position == 2 and "'m'" in bum.unk_reason
    from tokenizers import models

    hf = tokenizers.Tokenizer(models.WordPiece({token: index for index, token in enumerate(vocab)}, unk_token=UNK))
    for trace, _ in traces:
        assert hf.encode(trace.word).tokens == [token.value for token in trace.tokens]


# --------------------------------------------------------------------------- Unigram


def test_unigram_seed_segmentations_of_pug_and_their_probabilities() -> None:
    lesson = lessons.unigram_lesson(CLASSIC_WORD_COUNTS, vocab_size=12, word="pug")
    seed = {row.piece: row.count for row in lesson.steps[0].data}
    assert sum(seed.values()) == 236
    assert seed["u"] == 36 and seed["ug"] == 20 and seed["pu"] == 17 and seed["pug"] == 5
    assert lesson.steps[1].data.word == "pug"
    rows = lesson.steps[1].data.rows
    got = {row.pieces: row.probability for row in rows}
    assert set(got) == {("pug",), ("p", "ug"), ("pu", "g"), ("p", "u", "g")}
    assert got[("p", "u", "g")] == pytest.approx(17 / 236 * 36 / 236 * 20 / 236)
    assert got[("p", "ug")] == pytest.approx(17 / 236 * 20 / 236)
    assert got[("pu", "g")] == pytest.approx(17 / 236 * 20 / 236)
    assert got[("pug",)] == pytest.approx(5 / 236)
    assert sum(row.share for row in rows) == pytest.approx(1.0)
    assert [row.pieces for row in rows if row.best] == [("pug",)]


def test_unigram_viterbi_table_builds_the_lattice_s_best_path() -> None:
    from tokviz.models.unigram.trainer import UnigramTrainer

    lesson = lessons.unigram_lesson(CLASSIC_WORD_COUNTS, vocab_size=12, viterbi_word="bugs")
    word, cells = lesson.steps[2].data.word, lesson.steps[2].data.cells
    history = UnigramTrainer(vocab_size=12, method="course", special_tokens=[UNK], unk_token=UNK).train_from_word_counts(CLASSIC_WORD_COUNTS)
    best = [node.text for node in history.model_at(history.max_vocab_size).lattice("bugs").viterbi()]
    assert [cell.piece for cell in cells if cell.chosen] == best == ["b", "ugs"]
    # best[end] is the largest total among the pieces ending there.
    for end in range(1, len(word) + 1):
        totals = [cell.total for cell in cells if cell.end == end]
        chosen = [cell for cell in cells if cell.end == end and cell.chosen]
        if chosen:
            assert chosen[0].total == max(totals)


def test_unigram_loss_and_pruning_rounds_come_from_the_history() -> None:
    from tokviz.models.unigram.trainer import UnigramTrainer

    lesson = lessons.unigram_lesson(CLASSIC_WORD_COUNTS, vocab_size=12)
    history = UnigramTrainer(vocab_size=12, method="course", special_tokens=[UNK], unk_token=UNK).train_from_word_counts(CLASSIC_WORD_COUNTS)
    loss_data = next(step.data for step in lesson.steps if step.kind == "loss")
    rows, loss = loss_data.rows, loss_data.loss
    assert [(row.word, row.segmentation) for row in rows] == [("hug", ("hug",)), ("pug", ("pug",)), ("pun", ("pun",)), ("bun", ("bun",)), ("hugs", ("hugs",))]
    # The course's loss starts every word at a cost of 1; ours is the plain -log P.
    assert loss + sum(CLASSIC_WORD_COUNTS.values()) == pytest.approx(history.initial_loss)
    prunes = [step.data for step in lesson.steps if step.kind == "prune"]
    assert [[piece for piece, _, removed in view.candidates if removed] for view in prunes] == [
        [piece for piece, _ in prune_round.removed] for prune_round in history.prune_rounds
    ]
    assert [piece for view in prunes for piece, _, removed in view.candidates if removed] == ["ug", "pu", "un", "hu", "ugs", "gs", "bu", "pug"]
    assert dict(prunes[0].reasons)["ug"] == "no word's best cut uses 'ug': removing it raises the loss by 0.00"
    assert dict(prunes[-1].reasons)["pug"] == "the loss rises by only 11.35: 'pug': ['pug'] → ['p', 'u', 'g']"
    pieces, encoded = lesson.steps[-1].data.pieces, lesson.steps[-1].data.encoded
    assert [piece for piece, _ in pieces] == [piece for piece, _ in history.final_pieces if piece != UNK]
    assert {word.word: word.tokens for word in encoded}["pug"] == ("p", "u", "g")


def test_unigram_lesson_on_an_edited_table_picks_a_word_it_can_cut() -> None:
    lesson = lessons.unigram_lesson({"low": 5, "lower": 2, "newest": 6, "widest": 3}, vocab_size=16)
    word, rows = lesson.steps[1].data.word, lesson.steps[1].data.rows
    assert word == "newest" and len(rows) == 2 ** 5  # a cut or not between each pair of letters
    assert lesson.steps[2].data.word == "newest"
    assert "'pug'" not in lesson.steps[1].title


# --------------------------------------------------------------------------- byte-level


def test_byte_level_lesson_counts_bytes_and_maps_them_like_hf() -> None:
    lesson = lessons.byte_level_lesson("a가 짧")
    rows, n_bytes = lesson.steps[0].data.rows, lesson.steps[0].data.n_bytes
    assert (len(rows), n_bytes) == (4, 8)
    assert [row.utf8 for row in rows] == [(0x61,), (0xEA, 0xB0, 0x80), (0x20,), (0xEC, 0xA7, 0xA7)]
    assert lesson.steps[0].title == "4 characters, 8 bytes"
    symbols, byte_rows = lesson.steps[1].data.symbols, lesson.steps[1].data.byte_rows
    assert symbols == "aê°ĢĠì§§"
    assert dict(byte_rows)[0x20] == "Ġ"
    pieces = lesson.steps[2].data.pieces
    from tokenizers import pre_tokenizers

    assert list(pieces) == pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=True).pre_tokenize_str("a가 짧")
    assert list(pieces) == [("aê°Ģ", (0, 2)), ("Ġì§§", (2, 4))]


def test_byte_level_never_needs_an_unknown_token() -> None:
    no_unk = lessons.byte_level_lesson("a가 짧 🤗").steps[3].data
    sample, encoding, char_tokens, decoded = no_unk.sample, no_unk.encoding, no_unk.char_tokens, no_unk.decoded
    assert sample == "a가 짧 🤗 mug"
    assert decoded == sample
    assert UNK not in encoding.tokens and "<unk>" not in encoding.tokens
    assert char_tokens.count(UNK) >= 4 and "ug" in char_tokens


# --------------------------------------------------------------------------- normalization


def test_normalization_lesson_offsets_point_into_the_original_like_hf() -> None:
    from tokviz.models import WordLevel
    from tokviz.pipeline_config import build_tokenizer
    from tokviz.presets import bert_like, gpt2_like, t5_like

    sentence = lessons.DEFAULT_SENTENCE
    lesson = lessons.normalization_lesson(sentence)
    views = [step.data for step in lesson.steps[:3]]
    assert views[0].normalized == "hello  world! don't panic: naive cafe, 2024."
    assert [piece for piece, _ in views[0].pieces][:4] == ["hello", "world", "!", "don"]
    assert views[1].pieces[0] == ("HÃ©llo", (0, 5)) and views[1].byte_level
    assert views[2].pieces[1] == ("▁WORLD!", (6, 13))
    for config, view in zip((bert_like(), gpt2_like(), t5_like()), views):
        ours = build_tokenizer(config)
        ours.model = WordLevel({UNK: 0}, unk_token=UNK)  # one [UNK] token per pre-token: its offsets are the pre-token's
        hf = tokenizers.Tokenizer.from_str(ours.to_str())
        assert hf.encode(sentence, add_special_tokens=False).offsets == [offsets for _, offsets in view.pieces], view.name
    assert lesson.steps[-1].kind == "pipeline_compare"


# --------------------------------------------------------------------------- the word-count table


def test_parse_and_format_word_counts() -> None:
    text = lessons.format_word_counts(CLASSIC_WORD_COUNTS)
    assert text == "hug 10\npug 5\npun 12\nbun 4\nhugs 5"
    assert lessons.parse_word_counts(text) == CLASSIC_WORD_COUNTS
    assert lessons.parse_word_counts("hug: 3\nhug 2\n\nbun,1") == {"hug": 5, "bun": 1}


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("hug ten", "not a whole number"),
        ("hug 1 2", "a word and a count"),
        ("", "empty"),
        ("hug 0", "empty"),
        ("hug -3", "between 0"),
        ("supercalifragilistic 3", "longer than"),
        ("\n".join(f"w{index} 1" for index in range(20)), "at most 12 words"),
    ],
)
def test_bad_word_counts_raise_a_sentence(text: str, message: str) -> None:
    with pytest.raises(CorpusReadError, match=message):
        lessons.parse_word_counts(text)


def test_table_rows_from_the_data_editor_are_cleaned() -> None:
    assert lessons.check_word_counts({"hug": 10.0, None: 3, "pug": float("nan"), " bun ": "4"}) == {"hug": 10, "bun": 4}
    with pytest.raises(CorpusReadError, match="holds a space"):
        lessons.check_word_counts({"h ug": 1})


words = st.dictionaries(st.text(alphabet="abcdeé가", min_size=1, max_size=6), st.integers(1, 50), min_size=1, max_size=6)


@settings(max_examples=25, deadline=None, derandomize=True)
@given(words)
def test_any_table_gives_merges_consistent_with_the_trainer(word_counts: dict[str, int]) -> None:
    from tokviz.models.bpe.trainer import BpeTrainer

    lesson = lessons.bpe_lesson(word_counts, n_merges=50)
    history = BpeTrainer(vocab_size=10_000, special_tokens=[UNK], show_progress=False).train_from_word_counts(word_counts)
    assert merges_of(lesson) == history.merge_pairs()
    for step in lesson.steps[1:-1]:
        assert step.data.pairs[0].winner and step.data.pairs[0].count == step.data.count
    final_splits = lesson.steps[-1].data.splits
    model = history.model
    for split in final_splits:
        assert split.symbols == tuple(token.value for token in model.tokenize(split.word))


@settings(max_examples=15, deadline=None, derandomize=True)
@given(words)
def test_any_table_gives_wordpiece_and_unigram_lessons(word_counts: dict[str, int]) -> None:
    wordpiece = lessons.wordpiece_lesson(word_counts, n_merges=30)
    for step in wordpiece.steps[1:-1]:
        assert step.data.pairs[0].winner and math.isclose(step.data.pairs[0].score, step.data.score)
    unigram = lessons.unigram_lesson(word_counts, vocab_size=12, word=next(iter(word_counts)))
    assert unigram.steps[-1].kind == "unigram_final"
    rows = unigram.steps[1].data.rows
    assert sum(row.share for row in rows) == pytest.approx(1.0)


def test_lessons_registry_names_every_lesson() -> None:
    built = {
        "bpe": lessons.bpe_lesson(CLASSIC_WORD_COUNTS),
        "wordpiece": lessons.wordpiece_lesson(CLASSIC_WORD_COUNTS),
        "unigram": lessons.unigram_lesson(CLASSIC_WORD_COUNTS),
        "byte_level": lessons.byte_level_lesson(),
        "normalization": lessons.normalization_lesson(),
    }
    assert list(built) == list(lessons.LESSONS)
    for key, lesson in built.items():
        assert lesson.key == key and lesson.title == lessons.LESSONS[key]
        assert all(step.title and step.explanation for step in lesson.steps)
        assert all(len(step.explanation) < 320 for step in lesson.steps), "explanations stay short (a projector, not a book)"
