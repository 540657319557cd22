"""Charts for choosing a tokenizer: each metric across tokenizers (best marked), tokens per language."""

from __future__ import annotations

import pandas as pd
import pytest

from tokviz import Tokenizer, decoders, models, pre_tokenizers
from tokviz.compare import evaluate, parity_table, tokens_per_language
from tokviz.literature_metrics import LANGUAGES, METRICS
from tokviz.trainers import BpeTrainer
from tokviz.viz.charts import MARKER_COLOR, TOKENIZER_COLORS
from tokviz.viz.choose import (
    BAR_COLOR,
    metric_figure,
    metrics_figure,
    parity_figure,
    tokens_per_language_figure,
)

NAME = "<img src=x onerror=alert(1)>.json"


@pytest.fixture(scope="module")
def two_tokenizers(read_shared_corpus):
    text = read_shared_corpus("tinyshakespeare.txt")[:40_000].splitlines()
    result = {}
    for name, size in (("small", 300), (NAME, 900)):
        tok = Tokenizer(models.BPE())
        tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
        tok.decoder = decoders.ByteLevel()
        tok.train_from_iterator(text, BpeTrainer(vocab_size=size, initial_alphabet=pre_tokenizers.ByteLevel.alphabet(), show_progress=False))
        result[name] = tok
    return result


def test_metric_figure_marks_the_best(two_tokenizers):
    frame = evaluate(two_tokenizers, ["To be, or not to be, that is the question."], parallel=False)
    figure = metric_figure(frame, "fertility")
    bar = figure.data[0]
    assert list(bar.x) == ["small", "&lt;img src=x onerror=alert(1)&gt;.json"]
    best = int(frame["fertility"].argmin())  # lower is better: the larger vocabulary
    assert [color == MARKER_COLOR for color in bar.marker.color] == [i == best for i in range(2)]
    assert bar.text[best].startswith("★") and not bar.text[1 - best].startswith("★")
    assert list(bar.y) == pytest.approx(list(frame["fertility"]))
    assert figure.layout.title.text == "Fertility (tokens per word)"


def test_closer_to_one_is_best_for_parity():
    frame = pd.DataFrame({"parity": [1.8, 0.9, 1.15]}, index=["a", "b", "c"])
    colors = list(metric_figure(frame, "parity").data[0].marker.color)
    assert colors == [BAR_COLOR, MARKER_COLOR, BAR_COLOR]


def test_metrics_figure_has_a_panel_per_metric(two_tokenizers):
    frame = evaluate(two_tokenizers, ["Now is the winter of our discontent."])
    figure = metrics_figure(frame)
    bars = [trace for trace in figure.data if trace.type == "bar"]
    assert len(bars) == len(METRICS)  # every metric, parity included
    # One colour per tokenizer in every panel, named once in the legend (no rotated names under the bars).
    legend = [(trace.name, trace.marker.color) for trace in figure.data if trace.showlegend]
    assert [color for _, color in legend] == list(TOKENIZER_COLORS[:2])
    assert all(list(bar.marker.color) == list(TOKENIZER_COLORS[:2]) for bar in bars)
    assert figure.layout.xaxis.showticklabels is False
    titles = [annotation.text for annotation in figure.layout.annotations]
    assert "Rényi efficiency α=2.5 (higher)" in titles and "parity with English (closer to 1)" in titles
    assert max(map(len, titles)) <= 36  # short titles: none cut at 1280 px with three panels a row
    assert all(sum(width == 2 and color == "#212121" for color, width in zip(bar.marker.line.color, [bar.marker.line.width] * 2)) >= 1 for bar in bars)


def test_tokens_per_language_and_parity_figures(two_tokenizers):
    counts = tokens_per_language(two_tokenizers)
    figure = tokens_per_language_figure(counts)
    assert [trace.name for trace in figure.data] == ["small", "&lt;img src=x onerror=alert(1)&gt;.json"]
    assert list(figure.data[0].x) == list(LANGUAGES.values())
    assert list(figure.data[1].y) == list(counts.loc[NAME])
    parity = parity_table(two_tokenizers)
    drawn = parity_figure(parity)
    assert list(drawn.data[0].y) == pytest.approx(list(parity.loc["small"]))
    assert drawn.data[0].y[0] == 1.0  # English against itself
    assert any(shape.y0 == 1.0 for shape in drawn.layout.shapes)


def test_comparison_frame_draws_its_charts(two_tokenizers):
    frame = evaluate(two_tokenizers, ["Now is the winter of our discontent."], parallel=False)
    assert list(frame.figure("fertility").data[0].y) == pytest.approx(list(frame["fertility"]))
    assert len([trace for trace in frame.figure().data if trace.type == "bar"]) == len(METRICS) - 1  # no parity column here
    with pytest.raises(ValueError, match="No metric 'speed'"):
        frame.figure("speed")
