"""Charts from hand-made history records: the numbers drawn are the numbers recorded."""

from __future__ import annotations

import plotly.graph_objects as go
import pytest

from tokviz.history import EmStep, MergeStep, PruneRound
from tokviz.models.base import Token
from tokviz.models.unigram.lattice import Lattice
from tokviz.viz.charts import (
    MAX_POINTS,
    em_objective_figure,
    evenly_spaced_sizes,
    lattice_figure,
    log_prob_figure,
    merge_scores_figure,
    single_token_share,
    single_token_share_figure,
    token_length,
    token_length_figure,
    unigram_vocab_figure,
    vocab_growth_figure,
)

# The HF course's BPE example (chapter 6.5): hug/pug/pun/bun/hugs with counts 10, 5, 12, 4, 5.
COURSE_MERGES = [
    MergeStep(0, "u", "g", "ug", 20, 20.0, 8, ((("u", "n"), 16.0), (("h", "u"), 15.0))),
    MergeStep(1, "u", "n", "un", 16, 16.0, 9, ((("h", "ug"), 15.0),)),
    MergeStep(2, "h", "ug", "hug", 15, 15.0, 10, ((("p", "un"), 12.0),)),
]


def test_merge_scores_follow_the_steps_and_hover_names_the_pair() -> None:
    figure = merge_scores_figure(COURSE_MERGES)
    trace = figure.data[0]
    assert list(trace.x) == [1, 2, 3]  # merge #1 first, as every page numbers merges
    assert list(trace.y) == [20.0, 16.0, 15.0]
    assert [list(row[:3]) for row in trace.customdata] == [["u", "g", "ug"], ["u", "n", "un"], ["h", "ug", "hug"]]
    assert figure.layout.title.text == "Count of each merge"
    assert figure.layout.yaxis.type is None  # linear: the scores are within a factor of 100


def test_wordpiece_scores_spanning_decades_use_a_log_axis() -> None:
    steps = [MergeStep(0, "a", "##b", "ab", 2, 0.5, 10), MergeStep(1, "c", "##d", "cd", 9, 0.0004, 11)]
    figure = merge_scores_figure(steps, score_label="score")
    assert figure.layout.yaxis.type == "log"
    assert figure.layout.title.text == "Score of each merge"


def test_hover_text_escapes_html_in_tokens() -> None:
    steps = [MergeStep(0, "<img", " src=x>", "<img src=x>", 3, 3.0, 5)]
    row = list(merge_scores_figure(steps).data[0].customdata[0])
    assert row[:3] == ["&lt;img", "·src=x&gt;", "&lt;img·src=x&gt;"]


def test_long_histories_are_thinned_keeping_first_and_last() -> None:
    steps = [MergeStep(rank, "a", "b", "ab", 10_000 - rank, float(10_000 - rank), 300 + rank) for rank in range(5_000)]
    trace = merge_scores_figure(steps).data[0]
    assert len(trace.x) == MAX_POINTS
    assert (trace.x[0], trace.x[-1]) == (1, 5_000)


def test_vocab_growth_starts_at_the_alphabet_and_stays_flat_on_repeated_tokens() -> None:
    steps = [*COURSE_MERGES, MergeStep(3, "h", "ug", "hug", 5, 5.0, 10)]
    trace = vocab_growth_figure(steps, min_vocab_size=7).data[0]
    assert list(trace.x) == [0, 1, 2, 3, 4]
    assert list(trace.y) == [7, 8, 9, 10, 10]


def test_token_length_ignores_markers_and_special_tokens() -> None:
    assert [token_length(t) for t in ("##ing", "Ġthe", "▁a", "low</w>", "##", "Ġ", "</w>")] == [3, 3, 1, 3, 2, 1, 4]
    figure = token_length_figure(["a", "b", "##ab", "Ġthe", "[UNK]"], special_tokens=["[UNK]"])
    assert (list(figure.data[0].x), list(figure.data[0].y)) == ([1, 2, 3], [2, 1, 1])


class PrefixModel:
    """Knows the first ``size`` words of a fixed list as single tokens; spells the rest."""

    ORDER = ["the", "of", "tokenizer"]

    def __init__(self, size: int) -> None:
        self.known = set(self.ORDER[:size])

    def tokenize(self, word: str) -> list[Token]:
        if word in self.known:
            return [Token(0, word, (0, len(word)))]
        return [Token(0, char, (i, i + 1)) for i, char in enumerate(word)]


def test_single_token_share_counts_occurrences_not_types() -> None:
    counts = {"the": 6, "of": 3, "tokenizer": 1}
    points = single_token_share(counts, PrefixModel, [0, 1, 2, 3])
    assert points == [(0, 0.0), (1, 0.6), (2, 0.9), (3, 1.0)]
    figure = single_token_share_figure(points, "10 words")
    assert list(figure.data[0].y) == [0.0, 60.0, 90.0, 100.0]
    assert figure.layout.title.text == "Words kept as one token"
    assert figure.layout.title.subtitle.text == "10 words"
    assert single_token_share({}, PrefixModel, [1]) == [(1, 0.0)]


def test_single_letter_words_are_single_tokens_from_the_start() -> None:
    assert single_token_share({"a": 1, "of": 1}, PrefixModel, [0]) == [(0, 0.5)]


def test_evenly_spaced_sizes() -> None:
    assert evenly_spaced_sizes(257, 500, 4) == [257, 338, 419, 500]
    assert evenly_spaced_sizes(10, 12, 12) == [10, 11, 12]
    assert evenly_spaced_sizes(30, 30) == [30]


# --- Unigram -------------------------------------------------------------------------------

EM_STEPS = [
    EmStep(0, 0, 120, 9.5, 800),
    EmStep(0, 1, 120, 9.1, 760),
    EmStep(1, 0, 90, 9.3, 790),
    EmStep(1, 1, 90, 9.2, 780),
]
PRUNE_ROUNDS = [
    PruneRound(1, 120, 90, (("ll", 6.3831), ("his", 0.0))),
    PruneRound(2, 90, 70, (("ab", 1.5),)),
]


def test_em_objective_has_one_line_per_round_on_a_global_axis() -> None:
    figure = em_objective_figure(EM_STEPS)
    assert [trace.name for trace in figure.data] == ["round 0", "round 1"]
    assert [list(trace.x) for trace in figure.data] == [[0, 1], [2, 3]]
    assert [list(trace.y) for trace in figure.data] == [[9.5, 9.1], [9.3, 9.2]]
    assert (figure.layout.xaxis.tick0, figure.layout.xaxis.dtick) == (0, 1)  # whole sub-iterations, no 0.5 tick


def test_unigram_vocab_per_round_ends_at_the_final_size() -> None:
    trace = unigram_vocab_figure(PRUNE_ROUNDS, final_size=68).data[0]
    assert (list(trace.x), list(trace.y)) == (["1", "2", "end"], [120, 90, 68])
    assert list(unigram_vocab_figure(PRUNE_ROUNDS).data[0].y) == [120, 90, 70]


def test_log_prob_histogram_leaves_special_tokens_out() -> None:
    trace = log_prob_figure([("<unk>", 0.0), ("▁the", -2.5), ("a", -4.0)], special_tokens=["<unk>"]).data[0]
    assert isinstance(trace, go.Histogram)
    assert list(trace.x) == [-2.5, -4.0]


def test_lattice_draws_every_candidate_and_the_best_path_in_red_below_the_axis() -> None:
    lattice = Lattice("hug", [(0, 1, 1, -1.0), (1, 2, 2, -1.0), (2, 3, 3, -1.0), (0, 2, 4, -1.5), (1, 3, 5, -3.0)])
    figure = lattice_figure(lattice)
    arcs = [trace for trace in figure.data if trace.mode == "lines"]
    assert len(arcs) == 5
    red = [trace for trace in arcs if trace.line.color == "#d32f2f"]
    # Viterbi: 'hu' + 'g' (-2.5) beats 'h'+'u'+'g' (-3.0) and 'h'+'ug' (-4.0).
    assert sorted((round(trace.x[0]), round(trace.x[-1])) for trace in red) == [(0, 2), (2, 3)]
    assert all(max(trace.y) <= 0 for trace in red) and all(min(trace.y) >= 0 for trace in arcs if trace not in red)
    labels = next(trace for trace in figure.data if trace.mode == "text")
    assert list(labels.text) == ["h", "u", "g", "hu", "ug"]
    assert list(figure.layout.xaxis.ticktext) == ["h", "u", "g"]
    assert figure.layout.title.text == "Lattice of hug"
    assert figure.layout.title.subtitle.text == "5 candidate pieces; best path in red"


def test_lattice_labels_are_escaped_and_edges_capped() -> None:
    text = "<b>"
    lattice = Lattice(text, [(i, i + 1, i, -1.0) for i in range(3)] + [(0, 3, 9, -0.5)])
    figure = lattice_figure(lattice, max_edges=2)
    labels = next(trace for trace in figure.data if trace.mode == "text")
    assert list(labels.text) == ["&lt;", "b"]
    assert "first 2 drawn" in figure.layout.title.subtitle.text
    assert figure.layout.title.text == "Lattice of &lt;b&gt;"


@pytest.mark.parametrize("builder", [merge_scores_figure, lambda steps: vocab_growth_figure(steps, 0)])
def test_empty_histories_draw_empty_figures(builder) -> None:
    figure = builder([])
    assert len(figure.data[0].x) in (0, 1)


# --- markers, presentation, readable titles and ticks ----------------------------------------

from tokviz.metrics import CurvePoint  # noqa: E402
from tokviz.viz.charts import (  # noqa: E402
    MAX_TITLE_CHARACTERS,
    font_sizes,
    merges_at_size,
    pruning_rounds_figure,
    tokens_per_word_figure,
)


def _markers(figure: go.Figure) -> list[tuple[str, float, str]]:
    """``(orientation, position, label)`` of every dashed marker line, labels in order."""
    lines = [shape for shape in figure.layout.shapes if shape.line.dash == "dash"]
    labels = [annotation.text for annotation in figure.layout.annotations]
    return [("x" if shape.x0 == shape.x1 else "y", shape.x0 if shape.x0 == shape.x1 else shape.y0, label) for shape, label in zip(lines, labels)]


def test_merges_at_size_replays_like_model_at() -> None:
    # Course merges: the alphabet has 7 tokens; each merge adds one (8, 9, 10).
    assert [merges_at_size(COURSE_MERGES, size) for size in (5, 7, 8, 9, 10, 11)] == [0, 0, 1, 2, 3, 3]
    assert merges_at_size([], 100) == 0


def test_merge_scores_mark_the_slider_and_the_inspected_step() -> None:
    figure = merge_scores_figure(COURSE_MERGES, marker_size=9, current_step=0)
    # vocab 9 keeps merges #1 and #2: the marker stands on the last kept merge (#2).
    assert _markers(figure) == [("x", 2, "vocab 9"), ("x", 1, "merge #1")]
    assert _markers(merge_scores_figure(COURSE_MERGES)) == []


def test_wordpiece_log_axis_ticks_are_powers_of_ten_written_out() -> None:
    steps = [MergeStep(0, "a", "##b", "ab", 2, 0.5, 10), MergeStep(1, "c", "##d", "cd", 9, 0.0004, 11)]
    axis = merge_scores_figure(steps, score_label="score").layout.yaxis
    # dtick=1 on a log axis: one tick per decade, none of Plotly's bare "2" and "5" minor labels.
    assert (axis.type, axis.dtick, axis.tickformat) == ("log", 1, ".0e")
    counts = [MergeStep(rank, "a", "b", "ab", count, float(count), 10 + rank) for rank, count in enumerate([5000, 30, 2])]
    axis = merge_scores_figure(counts).layout.yaxis
    assert (axis.type, axis.dtick, axis.tickformat) == ("log", 1, ",.0f")


def test_log_axis_can_be_forced_on_or_off() -> None:
    assert merge_scores_figure(COURSE_MERGES, log_axis=True).layout.yaxis.type == "log"
    assert merge_scores_figure(COURSE_MERGES, log_axis=True).layout.yaxis.title.text == "count (log scale)"
    steps = [MergeStep(0, "a", "##b", "ab", 2, 0.5, 10), MergeStep(1, "c", "##d", "cd", 9, 0.0004, 11)]
    assert merge_scores_figure(steps, "score", log_axis=False).layout.yaxis.type is None
    zero = [MergeStep(0, "a", "b", "ab", 0, 0.0, 10)]
    assert merge_scores_figure(zero, log_axis=True).layout.yaxis.type is None


def test_tokens_per_word_curve_with_the_slider_marked() -> None:
    points = [CurvePoint(300, 2.4, 2.1), CurvePoint(400, 1.9, 2.7), CurvePoint(500, 1.6, 3.2)]
    figure = tokens_per_word_figure(points, marker_size=480)
    assert (list(figure.data[0].x), list(figure.data[0].y)) == ([300, 400, 500], [2.4, 1.9, 1.6])
    assert figure.layout.title.text == "Tokens per word"
    assert figure.layout.title.subtitle.text == "on the held-out text; lower = fewer tokens"
    assert _markers(figure) == [("x", 480, "vocab 480")]


def test_charts_over_vocab_size_mark_the_slider() -> None:
    assert _markers(single_token_share_figure([(10, 0.1), (20, 0.5)], marker_size=15)) == [("x", 15, "vocab 15")]
    assert _markers(vocab_growth_figure(COURSE_MERGES, 7, marker_size=9)) == [("y", 9, "vocab 9")]
    assert _markers(unigram_vocab_figure(PRUNE_ROUNDS, 68, marker_size=80)) == [("y", 80, "vocab 80")]


def test_unigram_pruning_chart_ends_at_the_trained_size_not_the_seed_size() -> None:
    from tokviz.pipeline_config import build_tokenizer, build_trainer
    from tokviz.presets import t5_like
    from tokviz.samples import load_sample

    tokenizer = build_tokenizer(t5_like())
    tokenizer.train_from_iterator(load_sample().splitlines(True), build_trainer(t5_like(), 400))
    history = tokenizer.training_history
    # The sample's seed vocabulary (701 with special tokens) is pruned in two rounds to 400.
    assert [(r.size_before, r.size_after) for r in history.prune_rounds] == [(678, 508), (508, 440)]
    assert (history.max_vocab_size, history.model.get_vocab_size()) == (701, 400)
    trace = pruning_rounds_figure(history, marker_size=450).data[0]
    assert (list(trace.x), list(trace.y)) == (["0", "1", "end"], [678, 508, 400])
    # What the Train page drew before: the end bar at history.max_vocab_size, the seed's size.
    assert list(unigram_vocab_figure(history.prune_rounds, history.max_vocab_size).data[0].y)[-1] == 701


def _every_figure(presentation: bool) -> list[go.Figure]:
    lattice = Lattice("hug", [(0, 1, 1, -1.0), (1, 2, 2, -1.0), (2, 3, 3, -1.0), (0, 2, 4, -1.5)])
    return [
        merge_scores_figure(COURSE_MERGES, presentation=presentation),
        merge_scores_figure(COURSE_MERGES, "score", presentation=presentation),
        vocab_growth_figure(COURSE_MERGES, 7, presentation=presentation),
        tokens_per_word_figure([CurvePoint(300, 2.4, 2.1)], presentation=presentation),
        token_length_figure(["ab", "c"], presentation=presentation),
        single_token_share_figure([(10, 0.1)], "2,000 most frequent words", presentation=presentation),
        em_objective_figure(EM_STEPS, presentation=presentation),
        unigram_vocab_figure(PRUNE_ROUNDS, 68, presentation=presentation),
        log_prob_figure([("a", -1.0)], presentation=presentation),
        lattice_figure(lattice, presentation=presentation),
    ]


@pytest.mark.parametrize("presentation", [False, True])
def test_titles_are_short_and_fonts_readable(presentation: bool) -> None:
    sizes = font_sizes(presentation)
    assert (sizes.tick, sizes.title) == ((16, 24) if presentation else (14, 18))
    for figure in _every_figure(presentation):
        layout = figure.layout
        assert len(layout.title.text) <= MAX_TITLE_CHARACTERS, layout.title.text
        assert "_" not in layout.title.text and "model_at" not in (layout.title.subtitle.text or "")
        assert layout.title.font.size == sizes.title
        assert layout.xaxis.tickfont.size == layout.yaxis.tickfont.size == sizes.tick >= 14
    assert font_sizes(True).title > font_sizes(False).title
