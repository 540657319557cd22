"""Compare-page tables and chart built from metrics records (issue 5)."""

from __future__ import annotations

from tokviz.metrics import CompressionMetrics, CurvePoint
from tokviz.viz.charts import TOKENIZER_COLORS as COLORS
from tokviz.viz.compare import compression_curves_figure, compression_table, overlap_table


def test_compression_table_literal() -> None:
    rows = {
        "1 · BPE": CompressionMetrics(vocab_size=2000, tokens=743, words=389, characters=2424, utf8_bytes=2452, unknown_tokens=0, whole_words=241),
        "2 · WordPiece": CompressionMetrics(vocab_size=2000, tokens=600, words=389, characters=2424, utf8_bytes=2452, unknown_tokens=3, whole_words=300),
    }
    frame = compression_table(rows)
    assert list(frame["configuration"]) == ["1 · BPE", "2 · WordPiece"]
    assert frame.iloc[1].to_dict() == {
        "configuration": "2 · WordPiece", "vocab size": 2000, "tokens": 600, "tokens per word": 1.54, "characters per token": 4.04,
        "UTF-8 bytes per token": 4.09, "unknown tokens %": 0.5, "words kept whole %": 77.12,
    }
    assert compression_table({}).columns[3] == "tokens per word"


def test_overlap_table_literal() -> None:
    frame = overlap_table([("A", "B", 0.1234), ("A", "C", 1.0)])
    assert frame.values.tolist() == [["A", "B", 12.34], ["A", "C", 100.0]]


def test_curves_figure_one_color_per_configuration_in_both_panels() -> None:
    curves = {"A": [CurvePoint(100, 3.0, 1.5), CurvePoint(200, 2.0, 2.5)], "B": [CurvePoint(150, 2.5, 2.0)]}
    figure = compression_curves_figure(curves)
    assert [(trace.name, trace.xaxis, list(trace.x), list(trace.y)) for trace in figure.data] == [
        ("A", "x", [100, 200], [3.0, 2.0]), ("A", "x2", [100, 200], [1.5, 2.5]), ("B", "x", [150], [2.5]), ("B", "x2", [150], [2.0])
    ]
    assert [trace.line.color for trace in figure.data] == [COLORS[0], COLORS[0], COLORS[1], COLORS[1]]
    assert [trace.showlegend for trace in figure.data] == [True, False, True, False]


def _three_rows() -> dict[str, CompressionMetrics]:
    return {
        "1 · GPT-2-like byte-level BPE · 2,000": CompressionMetrics(2000, 743, 389, 2424, 2452, 0, 241),
        "2 · BERT-like WordPiece · 2,000": CompressionMetrics(2000, 600, 389, 2424, 2452, 3, 300),
        "3 · T5 / SentencePiece-like Unigram · 2,000": CompressionMetrics(2000, 650, 389, 2424, 2452, 0, 280),
    }


def test_compact_table_marks_the_best_value_of_each_metric() -> None:
    from tokviz.viz.compare import BEST_STYLE, best_rows, better_caption, compact_compression_table, styled_compression_table

    frame = compact_compression_table(_three_rows())
    assert frame.iloc[1].to_dict() == {
        "configuration": "2 · BERT-like WordPiece · 2,000", "vocab": 2000, "tokens": 600, "tokens/word": 1.54, "chars/token": 4.04,
        "bytes/token": 4.09, "unknown %": 0.5, "whole words %": 77.12,
    }
    # WordPiece has the fewest tokens and the most whole words; BPE and Unigram tie with no unknown token.
    assert best_rows(frame) == {"tokens": [1], "tokens/word": [1], "chars/token": [1], "bytes/token": [1], "unknown %": [0, 2], "whole words %": [1]}
    styles = styled_compression_table(_three_rows())._compute().ctx
    marked = sorted((row, frame.columns[column]) for (row, column), props in styles.items() if props)
    assert marked == [(0, "unknown %"), (1, "bytes/token"), (1, "chars/token"), (1, "tokens"), (1, "tokens/word"), (1, "whole words %"), (2, "unknown %")]
    assert styles[(1, 3)] == [("background-color", "#c8e6c9"), ("font-weight", "700")] and BEST_STYLE.startswith("background-color")
    assert better_caption().startswith("Best value in green. Lower is better: tokens, tokens/word, unknown %.")


def test_compact_table_fits_1280_px() -> None:
    """Every header of the compact table is at most 13 characters; 8 columns of ~100 px fit beside a 300 px sidebar."""
    from tokviz.viz.compare import compact_compression_table

    frame = compact_compression_table(_three_rows())
    assert max(len(column) for column in frame.columns[1:]) <= 13
    assert sum(max(len(column), 8) for column in frame.columns[1:]) < sum(len(column) for column in compression_table(_three_rows()).columns[1:])


def test_curves_mark_each_trained_size_and_have_a_short_title() -> None:
    curves = {"A": [CurvePoint(100, 3.0, 1.5), CurvePoint(200, 2.0, 2.5)], "B <i>": [CurvePoint(150, 2.5, 2.0)]}
    figure = compression_curves_figure(curves, markers={"A": 200, "B <i>": 150}, presentation=True)
    assert figure.layout.title.text == "Compression by vocab size" and "model_at" not in figure.layout.title.subtitle.text
    assert sorted((shape.x0, shape.line.color) for shape in figure.layout.shapes) == [(150, COLORS[1]), (150, COLORS[1]), (200, COLORS[0]), (200, COLORS[0])]
    assert figure.data[2].name == "B &lt;i&gt;"
    assert figure.layout.xaxis.tickfont.size == 16
