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

from collections.abc import Mapping, Sequence

import pandas as pd
import plotly.graph_objects as go
from plotly.subplots import make_subplots

from tokviz.metrics import CompressionMetrics, CurvePoint

#: One color per configuration (up to four), the same in every panel.
COLORS = ("#1f77b4", "#d62728", "#2ca02c", "#9467bd")


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


def overlap_table(pairs: Sequence[tuple[str, str, float]]) -> pd.DataFrame:
    """One row per pair of configurations with their vocabulary Jaccard overlap in percent.

    >>> overlap_table([("A", "B", 0.25)]).iloc[0].to_dict()
    {'configuration': 'A', 'compared with': 'B', 'vocab overlap (Jaccard) %': 25.0}
    """
    return pd.DataFrame(
        [{"configuration": a, "compared with": b, "vocab overlap (Jaccard) %": round(100 * value, 2)} for a, b, value in pairs],
        columns=["configuration", "compared with", "vocab overlap (Jaccard) %"],
    )


def compression_curves_figure(curves: Mapping[str, Sequence[CurvePoint]]) -> go.Figure:
    """Tokens per word (left) and UTF-8 bytes per token (right) over vocab size, one line per configuration.

    >>> figure = compression_curves_figure({"A": [CurvePoint(100, 2.0, 2.5), CurvePoint(200, 1.5, 3.0)]})
    >>> [(trace.name, list(trace.y)) for trace in figure.data]
    [('A', [2.0, 1.5]), ('A', [2.5, 3.0])]
    """
    figure = make_subplots(rows=1, cols=2, subplot_titles=("Tokens per word (lower = fewer tokens)", "UTF-8 bytes per token (higher = more compression)"))
    for position, (name, points) in enumerate(curves.items()):
        color = COLORS[position % len(COLORS)]
        sizes = [point.vocab_size for point in points]
        for column, values, unit in ((1, [point.tokens_per_word for point in points], "tokens per word"), (2, [point.bytes_per_token for point in points], "bytes per token")):
            figure.add_trace(
                go.Scatter(
                    x=sizes, y=values, mode="lines+markers", name=name, legendgroup=name, showlegend=column == 1,
                    line=dict(color=color), hovertemplate=f"vocab %{{x:,}}: %{{y:.2f}} {unit}<extra>{name}</extra>",
                ),
                row=1, col=column,
            )
    figure.update_xaxes(title_text="vocab size")
    figure.update_layout(
        title="Compression on the evaluation text as the vocabulary grows (no retraining: history.model_at)",
        template="plotly_white", height=380, margin=dict(l=10, r=10, t=80, b=10), legend=dict(orientation="h", y=-0.25),
    )
    return figure
