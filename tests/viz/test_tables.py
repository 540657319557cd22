"""Tables from hand-made records and small real models: literal rows."""

from __future__ import annotations

import random

from tokviz.history import EmStep, MergeStep, PruneRound
from tokviz.models import BPE, Unigram, WordPiece
from tokviz.viz.tables import (
    candidates_table,
    em_steps_table,
    merge_table,
    nbest_table,
    removed_pieces_table,
    samples_table,
    segmentation,
    segmentations_table,
    vocab_table,
    words_changed_table,
    wordpiece_trace_table,
)

STEPS = [
    MergeStep(0, "u", "g", "ug", 20, 20.0, 8, ((("u", "n"), 16.0), (("h", "u"), 15.0))),
    MergeStep(1, "Ġ", "t", "Ġt", 7, 7.0, 9, ((("i", "s"), 7.0),)),
    MergeStep(2, "a", "b", "ab", 1, 1.0, 10),
]


def test_merge_table_rows_with_runner_up_and_margin() -> None:
    frame = merge_table(STEPS)
    assert list(frame.columns) == ["merge #", "merge", "count", "score", "vocab size", "runner-up", "runner-up score", "margin"]
    assert frame.to_dict("records")[0] == {
        "merge #": 1, "merge": "u + g → ug", "count": 20, "score": 20.0, "vocab size": 8,
        "runner-up": "u + n", "runner-up score": 16.0, "margin": 4.0,
    }
    # A tie (margin 0) is visible as such; a step without competitors has no runner-up.
    assert (frame.loc[1, "runner-up"], frame.loc[1, "margin"]) == ("i + s", 0.0)
    assert frame.loc[2, "runner-up"] == "" and frame["margin"].isna().tolist() == [False, False, True]


def test_candidates_table_lists_what_a_merge_beat() -> None:
    assert candidates_table(STEPS[0]).to_dict("records") == [
        {"pair": "u + n", "score": 16.0, "behind by": 4.0},
        {"pair": "h + u", "score": 15.0, "behind by": 5.0},
    ]


def test_whitespace_in_tokens_is_made_visible_not_lost() -> None:
    step = MergeStep(0, " ", "\n", " \n", 2, 2.0, 3)
    assert merge_table([step]).loc[0, "merge"] == "· + ↵ → ·↵"
    assert segmentation(["a b", "\t"]) == "a·b →"


def test_removed_pieces_table_one_row_per_piece() -> None:
    rounds = [PruneRound(1, 120, 90, (("ll", 6.3831), ("his", 0.0))), PruneRound(2, 90, 88, (("ab", 1.5),))]
    assert removed_pieces_table(rounds).to_dict("records") == [
        {"round": 1, "piece": "ll", "loss increase": 6.3831, "size before": 120, "size after": 90},
        {"round": 1, "piece": "his", "loss increase": 0.0, "size before": 120, "size after": 90},
        {"round": 2, "piece": "ab", "loss increase": 1.5, "size before": 90, "size after": 88},
    ]
    assert removed_pieces_table([]).empty


def test_em_steps_table() -> None:
    assert em_steps_table([EmStep(0, 1, 120, 9.1, 760)]).to_dict("records") == [
        {"round": 0, "sub-iteration": 1, "vocab size": 120, "objective": 9.1, "tokens": 760}
    ]


# The HF course's BPE example: vocab of the corpus hug/pug/pun/bun/hugs and its three first merges.
VOCAB = {"b": 0, "g": 1, "h": 2, "n": 3, "p": 4, "s": 5, "u": 6, "ug": 7, "un": 8, "hug": 9}
MERGES = [("u", "g"), ("u", "n"), ("h", "ug")]
WORDS = {"hug": 10, "pug": 5, "pun": 12, "bun": 4, "hugs": 5}


def test_segmentations_of_frequent_words_at_a_step() -> None:
    assert segmentations_table([("hugs", 5), ("bun", 4)], BPE(VOCAB, MERGES)).to_dict("records") == [
        {"word": "hugs", "count": 5, "tokens": "hug s", "pieces": 2},
        {"word": "bun", "count": 4, "tokens": "b un", "pieces": 2},
    ]
    assert segmentations_table([("hugs", 5)], BPE(VOCAB, MERGES[:1])).loc[0, "tokens"] == "h ug s"


def test_words_changed_by_the_third_merge() -> None:
    before, after = BPE(VOCAB, MERGES[:2]), BPE(VOCAB, MERGES[:3])
    assert words_changed_table(WORDS, before, after).to_dict("records") == [
        {"word": "hug", "count": 10, "before": "h ug", "after": "hug"},
        {"word": "hugs", "count": 5, "before": "h ug s", "after": "hug s"},
    ]
    assert len(words_changed_table(WORDS, before, after, limit=1)) == 1
    assert words_changed_table(WORDS, after, after).empty


def test_wordpiece_trace_table_shows_each_candidate_and_where_unk_came_from() -> None:
    model = WordPiece({"[UNK]": 0, "h": 1, "##u": 2, "##g": 3, "hug": 4})
    assert wordpiece_trace_table(model.trace("hug")).to_dict("records") == [
        {"position": 0, "candidate": "hug", "span": "[0, 3)", "result": "kept"}
    ]
    rows = wordpiece_trace_table(model.trace("hum")).to_dict("records")
    assert [(row["candidate"], row["result"]) for row in rows] == [
        ("hum", "not in vocab"), ("hu", "not in vocab"), ("h", "kept"),
        ("##um", "not in vocab"), ("##u", "kept"),
        ("##m", "not in vocab"), ("—", "nothing matches → the whole word is unknown"),
    ]


UNIGRAM = Unigram([("<unk>", 0.0), ("h", -2.0), ("u", -2.0), ("g", -2.0), ("hu", -2.5), ("ug", -3.5), ("hug", -6.0)], unk_id=0)


def test_nbest_table_probabilities() -> None:
    # Paths: hu+g = -4.5, h+ug = -5.5, hug = h+u+g = -6.0; log Z = log(e^-4.5 + e^-5.5 + 2 e^-6) = -3.9044.
    frame = nbest_table(UNIGRAM.nbest("hug", 3))
    assert frame["segmentation"].tolist()[:2] == ["hu g", "h ug"]
    assert frame["log p"].round(4).tolist() == [-0.5956, -1.5956, -2.0956]
    assert frame["p"].sum() < 1.0 and frame["rank"].tolist() == [1, 2, 3]


def test_samples_table_counts_draws() -> None:
    rng = random.Random(0)
    samples = [UNIGRAM.sample("hug", alpha=0.5, rng=rng) for _ in range(200)]
    frame = samples_table(samples)
    assert frame["drawn"].sum() == 200
    assert set(frame["segmentation"]) <= {"hu g", "h ug", "hug", "h u g"}
    assert frame["share"].sum() == 1.0 and frame["drawn"].is_monotonic_decreasing


def test_vocab_table_by_id() -> None:
    frame = vocab_table({"b": 1, "[UNK]": 0, "a b": 2}, special_tokens=["[UNK]"])
    assert frame.to_dict("records") == [
        {"id": 0, "token": "[UNK]", "characters": 5, "special": True},
        {"id": 1, "token": "b", "characters": 1, "special": False},
        {"id": 2, "token": "a·b", "characters": 3, "special": False},
    ]


def test_byte_level_tokens_are_shown_as_the_text_their_bytes_spell() -> None:
    # 'ê°Ģ' are the GPT-2 symbols of the UTF-8 bytes EA B0 80, i.e. '가'.
    step = MergeStep(0, "ê°", "Ģ", "ê°Ģ", 3, 3.0, 258, candidates=((("Ġ", "ê°"), 2.0),))
    assert merge_table([step], byte_level=True).loc[0, "merge"] == "⟨EA⟩⟨B0⟩ + ⟨80⟩ → 가"
    assert candidates_table(step, byte_level=True).loc[0, "pair"] == "Ġ + ⟨EA⟩⟨B0⟩"
    assert merge_table([step]).loc[0, "merge"] == "ê° + Ģ → ê°Ģ"
    assert segmentation(["Ġhow", "ê°Ģ"], byte_level=True) == "Ġhow 가"


def test_token_stats_leave_added_special_tokens_out() -> None:
    from types import SimpleNamespace

    from tokviz.metrics import measure_encodings
    from tokviz.viz.tables import token_stats

    encoding = SimpleNamespace(tokens=["<s>", "▁hug", "s", "▁🤗", "</s>"], ids=[1, 5, 6, 2, 3],
                               offsets=[(0, 0), (0, 3), (3, 4), (4, 6), (0, 0)], special_tokens_mask=[1, 0, 0, 0, 1])
    assert token_stats(measure_encodings(["hugs 🤗"], [encoding], vocab_size=7, unk_id=2)) == {  # 6 characters, 2 words
        "tokens": 3, "characters per token": 2.0, "tokens per word": 1.5, "unknown tokens": 1,  # '▁🤗' is id 2, the unknown piece
    }
    empty = SimpleNamespace(tokens=[], ids=[], offsets=[], special_tokens_mask=[])
    assert token_stats(measure_encodings([""], [empty], vocab_size=7)) == {"tokens": 0, "characters per token": 0.0, "tokens per word": 0.0, "unknown tokens": 0}


def test_merge_step_box_starts_on_the_first_merge_and_follows_the_slider() -> None:
    from tokviz.history import MergeStep
    from tokviz.viz.tables import StepBox, merge_step_box

    # Issue 12: the box started on the last merge (count 1) and kept a stale 742 after GPT-2 -> BERT.
    steps = [MergeStep(rank, "a", "b", "ab", 100 - rank, 100.0 - rank, 258 + rank) for rank in range(743)]
    assert merge_step_box(steps, 1000) == StepBox(0, 742, 0)
    assert merge_step_box(steps, 1000, current=742) == StepBox(0, 742, 742)
    bert = steps[:683]  # a new training: the page passes current=None, or a stale rank is clamped
    assert merge_step_box(bert, 1000, current=742) == StepBox(0, 682, 682)
    assert merge_step_box(bert, 480, current=None) == StepBox(0, 222, 0)  # 480 - 258 + 1 merges at the slider's size
    assert merge_step_box([], 480) == StepBox(0, 0, 0)


def test_sentencepiece_merge_table_shows_the_model_score_and_no_empty_runner_up_columns() -> None:
    steps = [MergeStep(0, "▁", "t", "▁t", 71, 71.0, 577), MergeStep(1, "h", "e", "he", 53, 53.0, 578)]
    frame = merge_table(steps, sentencepiece=True)
    assert list(frame.columns) == ["merge #", "merge", "count", "score", "vocab size"]
    assert frame.to_dict("records") == [
        {"merge #": 1, "merge": "▁ + t → ▁t", "count": 71, "score": 0.0, "vocab size": 577},
        {"merge #": 2, "merge": "h + e → he", "count": 53, "score": -1.0, "vocab size": 578},
    ]
