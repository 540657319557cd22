"""Tables and the chart of the Compare page, from the records of :mod:`tokviz.metrics`.

The metrics table has one row per configuration; the overlap table one row per pair; the
chart draws tokens per word and bytes per token over vocab size for every configuration,
one color per configuration in both panels:

>>> from tokviz.metrics import CompressionMetrics
>>> row = CompressionMetrics(vocab_size=2000, tokens=130, words=100, characters=560, utf8_bytes=570, unknown_tokens=2, whole_words=74)
>>> compression_table({"1 · BPE": row}).iloc[0].to_dict()  # doctest: +NORMALIZE_WHITESPACE
{'configuration': '1 · BPE', 'vocab size': 2000, 'tokens': 130, 'tokens per word': 1.3,
 'characters per token': 4.31, 'UTF-8 bytes per token': 4.38, 'unknown tokens %': 1.54, 'words kept whole %': 74.0}

What this leaves out: significance of differences (one evaluation text, no error bars).
"""

from __future__ import annotations

import html
from collections.abc import Mapping, Sequence

import pandas as pd
import plotly.graph_objects as go
from plotly.subplots import make_subplots

from tokviz.metrics import CompressionMetrics, CurvePoint
from tokviz.viz.charts import TOKENIZER_COLORS, tokenizer_colors


def compression_table(rows: Mapping[str, CompressionMetrics]) -> pd.DataFrame:
    """One row per named configuration: counts and ratios, rounded for reading (percentages as 0-100)."""
    records = [
        {
            "configuration": name,
            "vocab size": metrics.vocab_size,
            "tokens": metrics.tokens,
            "tokens per word": round(metrics.tokens_per_word, 2),
            "characters per token": round(metrics.characters_per_token, 2),
            "UTF-8 bytes per token": round(metrics.bytes_per_token, 2),
            "unknown tokens %": round(100 * metrics.unknown_rate, 2),
            "words kept whole %": round(100 * metrics.whole_word_share, 2),
        }
        for name, metrics in rows.items()
    ]
    columns = ["configuration", "vocab size", "tokens", "tokens per word", "characters per token", "UTF-8 bytes per token", "unknown tokens %", "words kept whole %"]
    return pd.DataFrame(records, columns=columns)


#: Short column names of :func:`compact_compression_table` (the table fits 1280 px with four rows).
SHORT_COLUMNS: dict[str, str] = {
    "configuration": "configuration",
    "vocab size": "vocab",
    "tokens": "tokens",
    "tokens per word": "tokens/word",
    "characters per token": "chars/token",
    "UTF-8 bytes per token": "bytes/token",
    "unknown tokens %": "unknown %",
    "words kept whole %": "whole words %",
}

#: Which direction is better for each metric column (the vocab size is a choice, not a score).
BETTER: dict[str, str] = {
    "tokens": "lower",
    "tokens/word": "lower",
    "chars/token": "higher",
    "bytes/token": "higher",
    "unknown %": "lower",
    "whole words %": "higher",
}

BEST_STYLE = "background-color: #c8e6c9; font-weight: 700"


def compact_compression_table(rows: Mapping[str, CompressionMetrics]) -> pd.DataFrame:
    """:func:`compression_table` with short column names (:data:`SHORT_COLUMNS`).

    >>> row = CompressionMetrics(vocab_size=2000, tokens=130, words=100, characters=560, utf8_bytes=570, unknown_tokens=2, whole_words=74)
    >>> list(compact_compression_table({"1 · BPE": row}).columns)
    ['configuration', 'vocab', 'tokens', 'tokens/word', 'chars/token', 'bytes/token', 'unknown %', 'whole words %']
    """
    return compression_table(rows).rename(columns=SHORT_COLUMNS)


def best_rows(frame: pd.DataFrame) -> dict[str, list[int]]:
    """For each metric column of ``frame`` (see :data:`BETTER`), the row positions holding the best value (ties: all).

    Columns where every row is equal have no best.

    >>> frame = pd.DataFrame({"configuration": ["A", "B", "C"], "tokens/word": [1.5, 1.2, 1.2], "unknown %": [0.0, 0.0, 0.0]})
    >>> best_rows(frame)
    {'tokens/word': [1, 2]}
    """
    best: dict[str, list[int]] = {}
    for column, direction in BETTER.items():
        if column not in frame.columns or frame.empty:
            continue
        values = list(frame[column])
        target = min(values) if direction == "lower" else max(values)
        if all(value == target for value in values):
            continue
        best[column] = [position for position, value in enumerate(values) if value == target]
    return best


def better_caption() -> str:
    """One line saying which direction is better per metric (the page shows it under the table).

    >>> better_caption()
    'Best value in green. Lower is better: tokens, tokens/word, unknown %. Higher is better: chars/token, bytes/token, whole words %.'
    """
    lower = ", ".join(column for column, direction in BETTER.items() if direction == "lower")
    higher = ", ".join(column for column, direction in BETTER.items() if direction == "higher")
    return f"Best value in green. Lower is better: {lower}. Higher is better: {higher}."


def styled_compression_table(rows: Mapping[str, CompressionMetrics]) -> "pd.io.formats.style.Styler":
    """The compact table with the best value of each metric column in bold on green (``st.dataframe`` shows it).

    Numbers keep their values (sorting still works); only the look of the best cells changes.
    """
    frame = compact_compression_table(rows)
    best = best_rows(frame)

    def highlight(column: pd.Series) -> list[str]:
        return [BEST_STYLE if position in best.get(column.name, ()) else "" for position in range(len(column))]

    return frame.style.apply(highlight, axis=0).format(
        {"vocab": "{:,}", "tokens": "{:,}", "tokens/word": "{:.2f}", "chars/token": "{:.2f}", "bytes/token": "{:.2f}", "unknown %": "{:.2f}", "whole words %": "{:.1f}"}
    )


def overlap_table(pairs: Sequence[tuple[str, str, float]]) -> pd.DataFrame:
    """One row per pair of configurations with their vocabulary Jaccard overlap in percent.

    >>> overlap_table([("A", "B", 0.25)]).iloc[0].to_dict()
    {'configuration': 'A', 'compared with': 'B', 'vocab overlap (Jaccard) %': 25.0}
    """
    return pd.DataFrame(
        [{"configuration": a, "compared with": b, "vocab overlap (Jaccard) %": round(100 * value, 2)} for a, b, value in pairs],
        columns=["configuration", "compared with", "vocab overlap (Jaccard) %"],
    )


def compression_curves_figure(
    curves: Mapping[str, Sequence[CurvePoint]],
    *,
    markers: Mapping[str, int] | None = None,
    presentation: bool = False,
    colors: Mapping[str, str] | None = None,
) -> go.Figure:
    """Tokens per word (left) and UTF-8 bytes per token (right) over vocab size, one line per configuration.

    Points come from ``history.model_at(k)``, so nothing is retrained. ``markers`` maps a
    configuration's name to the vocab size it was trained at; each is drawn as a dotted
    vertical line in that configuration's color, in both panels. ``colors`` is the page's one colour per
    tokenizer (:func:`tokviz.viz.charts.tokenizer_colors`), by default by place.

    >>> figure = compression_curves_figure({"A": [CurvePoint(100, 2.0, 2.5), CurvePoint(200, 1.5, 3.0)]})
    >>> [(trace.name, list(trace.y)) for trace in figure.data]
    [('A', [2.0, 1.5]), ('A', [2.5, 3.0])]
    >>> figure.layout.title.text
    'Compression by vocab size'
    """
    from tokviz.viz.charts import font_sizes, style_figure

    sizes_px = font_sizes(presentation)
    figure = make_subplots(rows=1, cols=2, subplot_titles=("Tokens per word (lower = better)", "Bytes per token (higher = better)"))
    names = {name: html.escape(name) for name in curves}
    colors = dict(colors) if colors is not None else tokenizer_colors(curves)
    for position, (name, points) in enumerate(curves.items()):
        color = colors.get(name, TOKENIZER_COLORS[position % len(TOKENIZER_COLORS)])
        sizes = [point.vocab_size for point in points]
        for column, values, unit in ((1, [point.tokens_per_word for point in points], "tokens per word"), (2, [point.bytes_per_token for point in points], "bytes per token")):
            figure.add_trace(
                go.Scatter(
                    x=sizes, y=values, mode="lines+markers", name=names[name], legendgroup=names[name], showlegend=column == 1,
                    line=dict(color=color), hovertemplate=f"vocab %{{x:,}}: %{{y:.2f}} {unit}<extra>{names[name]}</extra>",
                ),
                row=1, col=column,
            )
        if markers and name in markers:
            for column in (1, 2):
                figure.add_vline(x=markers[name], line=dict(color=color, width=2, dash="dot"), row=1, col=column)
    style_figure(
        figure, "Compression by vocab size", subtitle="on the held-out text, at sizes across each training's range (the Train slider's; Unigram's reaches up to its seed); dotted: the size it was trained to",
        presentation=presentation, height=sizes_px.height + 60,
    )
    figure.update_xaxes(title_text="vocab size", tickformat=",d")
    figure.update_annotations(font=dict(size=sizes_px.axis_title))  # the subplot titles
    figure.update_layout(legend=dict(orientation="h", y=-0.3), margin=dict(l=10, r=10, t=100, b=10))
    return figure
