"""Charts for choosing a tokenizer: each literature metric across tokenizers, and tokens per language.

Every function takes the frames of :mod:`tokviz.compare` (``evaluate``, ``tokens_per_language``,
``parity_table``) and returns a plotly figure. In a metric's chart the best tokenizer's bar is drawn
in the marker color with a ★ over it (the best as :func:`tokviz.compare.best_tokenizers` finds it:
highest, lowest or closest to 1 as the metric says). Tokenizer names are user text (file names):
they are escaped, since plotly renders labels as HTML.

>>> import pandas as pd
>>> frame = pd.DataFrame({"fertility": [1.6, 1.3]}, index=["gpt2.json", "<b>mine</b>"])
>>> figure = metric_figure(frame, "fertility")
>>> list(figure.data[0].x), list(figure.data[0].text)
(['gpt2.json', '&lt;b&gt;mine&lt;/b&gt;'], ['1.60', '★ 1.30'])

What this leaves out: confidence intervals (one evaluation text gives one number per metric).
"""

from __future__ import annotations

import html
from collections.abc import Mapping, Sequence
from typing import Any

import plotly.graph_objects as go
from plotly.subplots import make_subplots

from tokviz.viz.charts import MARKER_COLOR, TOKENIZER_COLORS, font_sizes, style_figure, tokenizer_colors

#: Bar color of every tokenizer but the best one (when no colour per tokenizer is given).
BAR_COLOR = "#90a4ae"


def _names(frame: Any) -> list[str]:
    return [html.escape(str(name)) for name in frame.index]


def _format(value: float) -> str:
    return f"{value:,.0f}" if abs(value) >= 1000 else f"{value:.2f}" if abs(value) >= 0.01 or value == 0 else f"{value:.2e}"


def _metric_bars(frame: Any, metric: str, colors: Mapping[str, str] | None = None) -> go.Bar:
    """One bar per tokenizer, the best marked with ★; each bar in its tokenizer's colour when ``colors`` is given
    (the page's one colour per tokenizer), else grey with the best in the marker colour."""
    from tokviz.compare import best_tokenizers
    from tokviz.literature_metrics import METRICS

    best = set(best_tokenizers(frame[[metric]]).get(metric, [])) if metric in METRICS else set()
    values = [float(value) for value in frame[metric]]
    is_best = [str(name) in best for name in frame.index]
    if colors is None:
        marker = dict(color=[MARKER_COLOR if flag else BAR_COLOR for flag in is_best])
    else:
        marker = dict(color=[colors.get(str(name), BAR_COLOR) for name in frame.index],
                      line=dict(color=["#212121" if flag else "rgba(0,0,0,0)" for flag in is_best], width=2))
    return go.Bar(
        x=_names(frame),
        y=values,
        text=[("★ " if flag else "") + _format(value) for value, flag in zip(values, is_best)],
        textposition="outside",
        cliponaxis=False,  # a value over the tallest bar stays readable
        marker=marker,
        hovertemplate="%{x}: %{y:.4g}<extra></extra>",
        showlegend=False,
    )


def _legend_entries(figure: go.Figure, colors: Mapping[str, str], **where: Any) -> None:
    """One legend entry per tokenizer (its name and colour), for charts whose bars carry no names."""
    for name, color in colors.items():
        # A marker trace, not a bar: an empty bar would take a slot in its panel's group.
        figure.add_trace(go.Scatter(x=[None], y=[None], mode="markers", name=html.escape(name), showlegend=True, hoverinfo="skip",
                                    marker=dict(color=color, symbol="square", size=12)), **where)


def metric_figure(frame: Any, metric: str, *, presentation: bool = False) -> go.Figure:
    """One metric (a column of ``evaluate``'s frame) across tokenizers, the best bar marked."""
    from tokviz.literature_metrics import METRICS

    info = METRICS.get(metric)
    label = info.label if info else metric
    figure = go.Figure(_metric_bars(frame, metric))
    subtitle = f"{info.better} is better · ★ best" if info else ""
    style_figure(figure, html.escape(label), yaxis_title=html.escape(label), subtitle=subtitle, presentation=presentation)
    figure.update_yaxes(rangemode="tozero")
    if info and info.better == "closer to 1":
        figure.add_hline(y=1.0, line=dict(color="#455a64", width=1, dash="dot"))
    return figure


def metrics_figure(
    frame: Any, metrics: Sequence[str] | None = None, *, presentation: bool = False, colors: Mapping[str, str] | None = None, columns: int = 3,
) -> go.Figure:
    """Every metric across tokenizers, one small panel each, the best bar of each marked with ★.

    Panels carry short titles (:data:`SHORT_LABELS` and which way is better) and no rotated names under the
    bars: each tokenizer has its colour (``colors``, the page's one mapping; by default by place) and the
    legend under the panels names them once, so 8 tokenizers stay readable at 1280 px.
    """
    from tokviz.literature_metrics import METRICS

    chosen = [key for key in (metrics or METRICS) if key in frame.columns]
    colors = dict(colors) if colors is not None else tokenizer_colors(str(name) for name in frame.index)
    rows = max(1, -(-len(chosen) // columns))
    titles = [f"{SHORT_LABELS.get(key, key)} ({METRICS[key].better})" if key in METRICS else key for key in chosen]
    figure = make_subplots(rows=rows, cols=columns, subplot_titles=[html.escape(title) for title in titles],
                           vertical_spacing=0.42 / rows, horizontal_spacing=0.06)
    for position, key in enumerate(chosen):
        figure.add_trace(_metric_bars(frame, key, colors), row=position // columns + 1, col=position % columns + 1)
    _legend_entries(figure, {str(name): colors.get(str(name), BAR_COLOR) for name in frame.index}, row=1, col=1)
    sizes = font_sizes(presentation)
    style_figure(
        figure, "Metrics across tokenizers", subtitle="★ best of each metric (outlined)", presentation=presentation,
        height=max(sizes.height, 200 * rows + 140 + 26 * -(-len(frame.index) // 2)),
    )
    figure.update_xaxes(showticklabels=False)  # the legend names the colours: no rotated names running into the next row
    figure.update_yaxes(rangemode="tozero", automargin=True)
    figure.update_annotations(font=dict(size=sizes.tick))  # the panel titles
    figure.update_layout(margin=dict(l=10, r=10, t=110, b=10), bargap=0.25,
                         legend=dict(orientation="h", yanchor="top", y=-0.04, x=0, xanchor="left"))
    return figure


def tokens_per_language_figure(counts: Any, *, presentation: bool = False, colors: Mapping[str, str] | None = None) -> go.Figure:
    """Tokens for the whole parallel sample in each language, one bar per tokenizer (``tokens_per_language``),
    each in its colour (``colors``: the page's one mapping; by default by place), the legend under the plot."""
    from tokviz.literature_metrics import LANGUAGES

    languages = [str(code) for code in counts.columns]
    labels = [html.escape(LANGUAGES.get(code, code)) for code in languages]
    colors = dict(colors) if colors is not None else tokenizer_colors(str(name) for name in counts.index)
    figure = go.Figure()
    for position, (name, row) in enumerate(counts.iterrows()):
        escaped = html.escape(str(name))
        figure.add_trace(
            go.Bar(
                x=labels, y=[int(row[code]) for code in languages], name=escaped,
                marker=dict(color=colors.get(str(name), TOKENIZER_COLORS[position % len(TOKENIZER_COLORS)])),
                hovertemplate=f"%{{x}}: %{{y:,}} tokens<extra>{escaped}</extra>",
            )
        )
    style_figure(
        figure, "Tokens per language", yaxis_title="tokens for the sample",
        subtitle="the same sentences in every language (tokviz's parallel sample)", presentation=presentation,
    )
    figure.update_layout(barmode="group", legend=dict(orientation="h", y=-0.2))
    return figure


def parity_figure(parity: Any, *, presentation: bool = False) -> go.Figure:
    """Petrov et al.'s premium per language (``parity_table``), one bar per tokenizer, English = 1 dotted."""
    from tokviz.literature_metrics import LANGUAGES

    languages = [str(code) for code in parity.columns]
    labels = [html.escape(LANGUAGES.get(code, code)) for code in languages]
    figure = go.Figure()
    for position, (name, row) in enumerate(parity.iterrows()):
        escaped = html.escape(str(name))
        figure.add_trace(
            go.Bar(
                x=labels, y=[float(row[code]) for code in languages], name=escaped,
                marker=dict(color=TOKENIZER_COLORS[position % len(TOKENIZER_COLORS)]),
                hovertemplate=f"%{{x}}: %{{y:.2f}}× English<extra>{escaped}</extra>",
            )
        )
    style_figure(
        figure, "Parity with English", yaxis_title="tokens ÷ English tokens",
        subtitle="1.0 = as many tokens as English (Petrov et al., 2023)", presentation=presentation,
    )
    figure.add_hline(y=1.0, line=dict(color="#455a64", width=1, dash="dot"))
    figure.update_layout(barmode="group", legend=dict(orientation="h", y=-0.2))
    return figure


#: Short row labels of :func:`literature_table` (the full label and definition are shown under it).
SHORT_LABELS: dict[str, str] = {
    "fertility": "fertility (tokens/word)",
    "continued_words": "continued words",
    "characters_per_token": "chars/token",
    "bytes_per_token": "UTF-8 bytes/token",
    "unknown_rate": "unknown rate",
    "vocabulary_used": "vocabulary used",
    "renyi_efficiency": "Rényi efficiency α=2.5",
    "renyi_efficiency_observed": "Rényi eff. (observed types)",
    "parity": "parity with English",
}


def literature_table(frame: Any) -> Any:
    """``tokviz.compare.evaluate``'s frame turned for a page: one row per metric, one column per
    tokenizer (8 fit 1280 px), the best value of each row in bold on green (a pandas Styler).

    >>> import pandas as pd
    >>> frame = pd.DataFrame({"vocab_size": [100, 200], "fertility": [1.5, 1.2]}, index=["a.json", "b.model"])
    >>> table = literature_table(frame)
    >>> table.data.loc["fertility (tokens/word)"].tolist(), table.data.columns.tolist()
    ([1.5, 1.2], ['a.json', 'b.model'])
    """
    from tokviz.compare import best_tokenizers

    rows = [key for key in SHORT_LABELS if key in frame.columns]
    table = frame[rows].T.astype(float)
    table.attrs = {}  # the metric definitions are shown beside the table, not serialized with it
    table.index = [SHORT_LABELS[key] for key in rows]
    table.columns = [str(name) for name in frame.index]
    best = best_tokenizers(frame[rows])
    style = "background-color: #c8e6c9; font-weight: 700"

    def mark(row: Any) -> list[str]:
        key = rows[list(table.index).index(row.name)]
        winners = set(best.get(key, []))
        if len(winners) == len(table.columns):  # all equal: no best
            winners = set()
        return [style if name in winners else "" for name in table.columns]

    return table.style.apply(mark, axis=1).format("{:.4g}")


def comparison_figure(frame: Any, metric: str | None = None, *, presentation: bool = False) -> go.Figure:
    """``ComparisonFrame.figure``: one metric's chart, or every metric's when ``metric`` is None."""
    return metrics_figure(frame, presentation=presentation) if metric is None else metric_figure(frame, metric, presentation=presentation)


def _register() -> None:
    """Give :class:`tokviz.compare.ComparisonFrame` its charts (compare, a layer below, never imports viz)."""
    from tokviz._views import register_figure_view
    from tokviz.compare import ComparisonFrame

    register_figure_view(ComparisonFrame, comparison_figure)


_register()
