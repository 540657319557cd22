"""Compare-page tables and chart built from metrics records (issue 5)."""

from __future__ import annotations

from tokviz.metrics import CompressionMetrics, CurvePoint
from tokviz.viz.compare import COLORS, compression_curves_figure, compression_table, overlap_table


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
