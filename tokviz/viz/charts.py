"""Plotly figures from training histories: what a trainer learned, drawn.

Every function takes plain records (``MergeStep``, ``EmStep``, ``PruneRound``, a lattice,
word counts) and returns a ``plotly.graph_objects.Figure``; nothing here trains or caches,
so each figure is a pure function a test can call with hand-made records:

>>> from tokviz.history import MergeStep
>>> steps = [MergeStep(0, "h", "u", "hu", 15, 15.0, 31), MergeStep(1, "hu", "g", "hug", 15, 15.0, 32)]
>>> list(merge_scores_figure(steps).data[0].y)
[15.0, 15.0]

BPE / WordPiece: score per merge step, held-out tokens per word as the vocab grows (and the
older vocab growth line), token length distribution, and the share of corpus words that are a
single token as the vocab grows. Unigram: the EM objective per sub-iteration across pruning
rounds, vocab size per round, the distribution of the final pieces' log-probabilities, and the
Viterbi lattice of one word with the best path drawn.

Every chart over vocab size or merge steps takes an optional marker (the vocab slider's size,
the merge step being inspected) and draws it as a labelled dashed line. Every chart takes
``presentation=True`` for a projector: ticks of 16 px (14 px otherwise), larger titles, taller
plots. Titles are short (they must fit half a 1280 px screen, :data:`MAX_TITLE_CHARACTERS`);
details go to the axis titles or the subtitle.

What this leaves out: animation, and any chart over more points than a browser draws
smoothly (long histories are thinned evenly, first and last step always kept).
"""

from __future__ import annotations

import html
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import plotly.graph_objects as go

from tokviz.history import EmStep, MergeStep, PruneRound, merge_number
from tokviz.viz.spans import make_visible, merges_at_size  # noqa: F401 - merges_at_size is also read from here

#: Most points drawn per line; longer series are thinned evenly.
MAX_POINTS = 2_000
_MARKERS = ("##", "Ġ", "▁")
_SUFFIXES = ("</w>",)
#: Longest chart title: half a 1280 px page (about 470 px of plot) at the presentation title size.
MAX_TITLE_CHARACTERS = 38
MARKER_COLOR = "#e65100"
#: One colour per tokenizer of a comparison, in page order (up to the comparison's 8): the same in every chart.
TOKENIZER_COLORS = ("#1565c0", "#2e7d32", "#c62828", "#6a1b9a", "#ef6c00", "#00838f", "#ad1457", "#4e342e")


def tokenizer_colors(names: Iterable[str]) -> dict[str, str]:
    """Each tokenizer's colour, by its place on the page; every chart of a page takes this one mapping.

    >>> tokenizer_colors(["gpt2", "bert", "t5"])
    {'gpt2': '#1565c0', 'bert': '#2e7d32', 't5': '#c62828'}
    """
    return {str(name): TOKENIZER_COLORS[position % len(TOKENIZER_COLORS)] for position, name in enumerate(names)}


@dataclass(frozen=True, slots=True)
class FontSizes:
    """Pixel sizes of a chart's text: ticks, axis titles, the title, and the plot height."""

    tick: int
    axis_title: int
    title: int
    subtitle: int
    height: int


#: Normal reading at a desk, and ``presentation=True`` for a projector.
FONT_SIZES = {False: FontSizes(tick=14, axis_title=15, title=18, subtitle=13, height=340), True: FontSizes(tick=16, axis_title=18, title=24, subtitle=16, height=440)}


def font_sizes(presentation: bool = False) -> FontSizes:
    """The text sizes for a chart: ``font_sizes(True).tick == 16``, ``font_sizes().tick == 14``."""
    return FONT_SIZES[bool(presentation)]


def style_figure(
    figure: go.Figure,
    title: str,
    *,
    xaxis_title: str | None = None,
    yaxis_title: str | None = None,
    subtitle: str = "",
    presentation: bool = False,
    height: int | None = None,
) -> go.Figure:
    """Apply tokviz's chart style: white template, short title (+ optional subtitle), readable fonts.

    ``title`` and ``subtitle`` must already be escaped (Plotly renders them as HTML).

    >>> figure = style_figure(go.Figure(), "Count of each merge", presentation=True)
    >>> figure.layout.xaxis.tickfont.size, figure.layout.title.font.size
    (16, 24)
    """
    sizes = font_sizes(presentation)
    title_layout: dict[str, Any] = dict(text=title, font=dict(size=sizes.title))
    if subtitle:
        title_layout["subtitle"] = dict(text=subtitle, font=dict(size=sizes.subtitle))
    figure.update_layout(
        template="plotly_white",
        height=height or sizes.height,
        margin=dict(l=10, r=10, t=80 if subtitle else 56, b=10),
        title=title_layout,
        font=dict(size=sizes.tick),
        legend=dict(font=dict(size=sizes.tick)),
        hoverlabel=dict(font=dict(size=sizes.tick)),
    )
    figure.update_xaxes(tickfont=dict(size=sizes.tick), title_font=dict(size=sizes.axis_title))
    figure.update_yaxes(tickfont=dict(size=sizes.tick), title_font=dict(size=sizes.axis_title))
    if xaxis_title is not None:
        figure.update_xaxes(title_text=xaxis_title)
    if yaxis_title is not None:
        figure.update_yaxes(title_text=yaxis_title)
    return figure


def mark_x(figure: go.Figure, x: float, label: str, presentation: bool = False, **where: Any) -> go.Figure:
    """A dashed vertical line at ``x`` with ``label`` on top (the slider's size, the inspected step).

    >>> figure = mark_x(go.Figure(go.Scatter(x=[0, 10], y=[0, 1])), 4, "vocab 480")
    >>> [(shape.x0, shape.line.dash) for shape in figure.layout.shapes], figure.layout.annotations[0].text
    ([(4, 'dash')], 'vocab 480')
    """
    sizes = font_sizes(presentation)
    figure.add_vline(x=x, line=dict(color=MARKER_COLOR, width=2, dash="dash"), **where)
    # The label sits INSIDE the plot, at its top, right of the line: above the plot it would
    # collide with the subtitle.
    figure.add_annotation(
        x=x, y=1, yref="paper", xanchor="left", yanchor="top", xshift=4, text=html.escape(label), showarrow=False,
        font=dict(size=sizes.tick, color=MARKER_COLOR), bgcolor="rgba(255,255,255,0.85)",
    )
    return figure


def mark_y(figure: go.Figure, y: float, label: str, presentation: bool = False) -> go.Figure:
    """A dashed horizontal line at ``y`` with ``label`` at its right end."""
    sizes = font_sizes(presentation)
    figure.add_hline(
        y=y, line=dict(color=MARKER_COLOR, width=2, dash="dash"), annotation_text=html.escape(label),
        annotation_position="top right", annotation_font=dict(size=sizes.tick, color=MARKER_COLOR),
    )
    return figure


def _thin(items: Sequence[Any], limit: int = MAX_POINTS) -> list[Any]:
    """Keep at most ``limit`` items evenly, first and last included: ``_thin(range(10), 4) -> [0, 3, 6, 9]``."""
    if len(items) <= limit:
        return list(items)
    step = (len(items) - 1) / (limit - 1)
    return [items[round(index * step)] for index in range(limit)]


def _label(token: str) -> str:
    # Plotly renders hover text as (a subset of) HTML: escape what users wrote.
    return html.escape(make_visible(token))


def _log_ticks(values: Sequence[float]) -> dict[str, Any]:
    """Log-axis ticks at whole powers of ten only, written out (no bare "2", "5" minor labels).

    Counts read as ``1``, ``10``, ``1,000``; scores below 1 (WordPiece likelihood) as ``1e-5``.

    >>> _log_ticks([3.0, 4000.0])["tickformat"], _log_ticks([0.5, 0.00004])["tickformat"]
    (',.0f', '.0e')
    """
    return dict(type="log", dtick=1, tickformat=",.0f" if min(values) >= 1 else ".0e", minor=dict(showgrid=False))


def merge_scores_figure(
    merges: Sequence[MergeStep],
    score_label: str = "count",
    *,
    marker_size: int | None = None,
    current_step: int | None = None,
    presentation: bool = False,
    log_axis: bool | None = None,
) -> go.Figure:
    """Score (BPE: the pair's count; WordPiece: its score) of each merge, in merge order.

    ``log_axis``: ``None`` (default) uses a log axis when the scores span more than two
    decades; ``True`` / ``False`` force it (ticks at powers of ten only). On a log axis the
    BPE counts show what the merges buy: a few very frequent pairs, then a long tail.
    ``marker_size`` (the vocab slider) marks the last merge the model at that size keeps;
    ``current_step`` (the merge being inspected, a rank) marks that merge.
    """
    shown = _thin(merges)
    figure = go.Figure(
        go.Scatter(
            x=[merge_number(step.rank) for step in shown],
            y=[float(step.score) for step in shown],
            mode="lines+markers" if len(shown) < 200 else "lines",
            marker=dict(size=5),
            customdata=[[_label(step.left), _label(step.right), _label(step.token), step.count] for step in shown],
            hovertemplate="merge #%{x}: %{customdata[0]} + %{customdata[1]} → %{customdata[2]}<br>"
            f"{html.escape(score_label)}: %{{y:.6g}}<br>count: %{{customdata[3]}}<extra></extra>",
            name=score_label,
        )
    )
    positive = bool(merges) and min(step.score for step in merges) > 0
    if log_axis is None:
        log_axis = positive and max(step.score for step in merges) / min(step.score for step in merges) > 100
    log_axis = bool(log_axis and positive)  # a zero or negative score has no place on a log axis
    style_figure(
        figure, html.escape(f"{score_label.capitalize()} of each merge"), xaxis_title="merge #",
        yaxis_title=html.escape(score_label) + (" (log scale)" if log_axis else ""), presentation=presentation,
    )
    if log_axis:
        figure.update_yaxes(**_log_ticks([float(step.score) for step in merges]))
    if marker_size is not None and merges:
        kept = merges_at_size(merges, marker_size)
        mark_x(figure, merge_number(max(kept - 1, 0)), f"vocab {marker_size:,}", presentation)
    if current_step is not None and merges:
        shown_step = min(max(current_step, 0), len(merges) - 1)
        mark_x(figure, merge_number(shown_step), f"merge #{merge_number(shown_step):,}", presentation)
    return figure


def vocab_growth_figure(
    merges: Sequence[MergeStep], min_vocab_size: int, *, marker_size: int | None = None, presentation: bool = False
) -> go.Figure:
    """Vocab size after each merge (flat where a merge re-created an existing token).

    Nearly a straight line for BPE (one new token per merge): prefer
    :func:`tokens_per_word_figure`, which shows what the merges buy.
    """
    shown = _thin(merges)
    figure = go.Figure(
        go.Scatter(
            x=[0, *[step.rank + 1 for step in shown]],
            y=[min_vocab_size, *[step.vocab_size for step in shown]],
            mode="lines",
            name="vocab size",
            hovertemplate="after %{x} merges: %{y} tokens<extra></extra>",
        )
    )
    style_figure(figure, "Vocab growth", xaxis_title="merges", yaxis_title="vocab size", presentation=presentation)
    if marker_size is not None:
        mark_y(figure, marker_size, f"vocab {marker_size:,}", presentation)
    return figure


def tokens_per_word_figure(
    points: Sequence[Any],
    *,
    marker_size: int | None = None,
    presentation: bool = False,
    text_note: str = "held-out text",
) -> go.Figure:
    """Tokens per word on a held-out text as the vocab grows: what the merges buy.

    ``points`` are :class:`tokviz.metrics.CurvePoint` (``vocab_size``, ``tokens_per_word``,
    ``bytes_per_token``), as :func:`tokviz.metrics.vocab_size_curve` computes them from
    ``history.model_at`` without retraining. 1.0 means every word is one token.

    >>> from tokviz.metrics import CurvePoint
    >>> figure = tokens_per_word_figure([CurvePoint(300, 2.5, 2.0), CurvePoint(600, 1.6, 3.1)], marker_size=480)
    >>> list(figure.data[0].y), figure.layout.title.text, figure.layout.shapes[0].x0
    ([2.5, 1.6], 'Tokens per word', 480)
    """
    figure = go.Figure(
        go.Scatter(
            x=[point.vocab_size for point in points],
            y=[point.tokens_per_word for point in points],
            mode="lines+markers",
            name="tokens per word",
            hovertemplate="vocab %{x:,}: %{y:.2f} tokens per word<extra></extra>",
        )
    )
    style_figure(
        figure, "Tokens per word", subtitle=html.escape(f"on the {text_note}; lower = fewer tokens"),
        xaxis_title="vocab size", yaxis_title="tokens per word", presentation=presentation,
    )
    figure.update_xaxes(tickformat=",d")
    if points:
        figure.update_yaxes(rangemode="tozero")
    if marker_size is not None:
        mark_x(figure, marker_size, f"vocab {marker_size:,}", presentation)
    return figure


def token_length(token: str) -> int:
    """Characters of a token without its markers: ``token_length('##ing') == 3``, ``token_length('the</w>') == 3``."""
    for marker in _MARKERS:
        if token.startswith(marker) and len(token) > len(marker):
            token = token[len(marker) :]
            break
    for suffix in _SUFFIXES:
        if token.endswith(suffix) and len(token) > len(suffix):
            token = token[: -len(suffix)]
    return len(token)


def token_length_figure(tokens: Iterable[str], special_tokens: Iterable[str] = (), *, presentation: bool = False) -> go.Figure:
    """How many tokens of each length (markers ``##``, ``Ġ``, ``▁``, ``</w>`` not counted)."""
    special = set(special_tokens)
    lengths: dict[int, int] = {}
    for token in tokens:
        if token not in special:
            length = token_length(token)
            lengths[length] = lengths.get(length, 0) + 1
    xs = sorted(lengths)
    figure = go.Figure(go.Bar(x=xs, y=[lengths[x] for x in xs], name="tokens", hovertemplate="%{y} tokens of length %{x}<extra></extra>"))
    style_figure(figure, "Token lengths", xaxis_title="characters (markers excluded)", yaxis_title="tokens", presentation=presentation)
    figure.update_yaxes(tickformat=",d")
    return figure


def single_token_share(
    word_counts: Mapping[str, int],
    model_at: Callable[[int], Any],
    vocab_sizes: Iterable[int],
) -> list[tuple[int, float]]:
    """For each vocab size, the share of word OCCURRENCES the model keeps as one token.

    ``model_at`` is ``history.model_at``; ``word_counts`` maps pre-tokenized words to counts.

    >>> from tokviz.models.base import Token
    >>> class Model:  # a toy model that knows whole words only from size 2 on
    ...     def __init__(self, size): self.size = size
    ...     def tokenize(self, word): return [Token(0, word, (0, len(word)))] if self.size >= 2 and word == "the" else list(word)
    >>> single_token_share({"the": 3, "cat": 1}, Model, [1, 2])
    [(1, 0.0), (2, 0.75)]
    """
    total = sum(word_counts.values())
    points = []
    for size in vocab_sizes:
        model = model_at(size)
        single = sum(count for word, count in word_counts.items() if len(model.tokenize(word)) == 1)
        points.append((size, single / total if total else 0.0))
    return points


def evenly_spaced_sizes(low: int, high: int, count: int = 12) -> list[int]:
    """``count`` vocab sizes from ``low`` to ``high`` inclusive: ``evenly_spaced_sizes(10, 20, 3) -> [10, 15, 20]``."""
    if high <= low:
        return [low]
    count = max(2, min(count, high - low + 1))
    return sorted({round(low + (high - low) * index / (count - 1)) for index in range(count)})


def single_token_share_figure(
    points: Sequence[tuple[int, float]], words_note: str = "", *, marker_size: int | None = None, presentation: bool = False
) -> go.Figure:
    """The share of corpus words that are a single token, as the vocab grows.

    ``words_note`` (which words were counted) goes to the subtitle, so the title stays short.
    """
    figure = go.Figure(
        go.Scatter(
            x=[size for size, _ in points],
            y=[share * 100 for _, share in points],
            mode="lines+markers",
            name="single-token words",
            hovertemplate="vocab %{x}: %{y:.1f}% of word occurrences are one token<extra></extra>",
        )
    )
    style_figure(
        figure, "Words kept as one token", subtitle=html.escape(words_note), xaxis_title="vocab size",
        yaxis_title="% of word occurrences", presentation=presentation,
    )
    figure.update_yaxes(range=[0, 100])
    figure.update_xaxes(tickformat=",d")
    if marker_size is not None:
        mark_x(figure, marker_size, f"vocab {marker_size:,}", presentation)
    return figure


# ---------------------------------------------------------------------------------------
# Unigram


def em_objective_figure(em_steps: Sequence[EmStep], *, presentation: bool = False) -> go.Figure:
    """The EM objective after each sub-iteration, one colored line per pruning round."""
    figure = go.Figure()
    rounds: dict[int, list[tuple[int, EmStep]]] = {}
    for index, step in enumerate(em_steps):
        rounds.setdefault(step.round, []).append((index, step))
    for round_number, steps in rounds.items():
        figure.add_trace(
            go.Scatter(
                x=[index for index, _ in steps],
                y=[step.objective for _, step in steps],
                mode="lines+markers",
                name=f"round {round_number}",
                customdata=[[step.sub_iteration, step.vocab_size, step.num_tokens] for _, step in steps],
                hovertemplate="round " + str(round_number) + ", sub-iteration %{customdata[0]}<br>objective %{y:.5g}<br>"
                "vocab %{customdata[1]}, tokens %{customdata[2]}<extra></extra>",
            )
        )
    style_figure(
        figure, "EM objective", subtitle="negative log-likelihood per word; lower = better fit",
        xaxis_title="EM sub-iteration (all rounds)", yaxis_title="objective", presentation=presentation,
    )
    if len(em_steps) <= 12:  # a few sub-iterations: whole-number ticks (plotly's own put 0.5 between 0 and 1)
        figure.update_xaxes(tick0=0, dtick=1)
    return figure


def unigram_vocab_figure(
    prune_rounds: Sequence[PruneRound],
    final_size: int | None = None,
    *,
    marker_size: int | None = None,
    presentation: bool = False,
) -> go.Figure:
    """Vocab size at the start of each pruning round, and after the last one ("end").

    ``final_size`` is the trained model's size (``history.model.get_vocab_size()``; default:
    the last round's size after pruning). :func:`pruning_rounds_figure` takes it from a
    history. ``marker_size`` (the vocab slider) is drawn as a horizontal line.
    """
    xs = [str(item.round) for item in prune_rounds]
    ys = [item.size_before for item in prune_rounds]
    if prune_rounds:
        xs.append("end")
        ys.append(final_size if final_size is not None else prune_rounds[-1].size_after)
    figure = go.Figure(go.Bar(x=xs, y=ys, name="vocab size", hovertemplate="round %{x}: %{y:,} pieces<extra></extra>"))
    style_figure(
        figure, "Vocab size per pruning round", subtitle="size at the start of each round; end = the trained model",
        xaxis_title="pruning round", yaxis_title="pieces", presentation=presentation,
    )
    figure.update_yaxes(tickformat=",d")
    if marker_size is not None:
        mark_y(figure, marker_size, f"vocab {marker_size:,}", presentation)
    return figure


def pruning_rounds_figure(history: Any, *, marker_size: int | None = None, presentation: bool = False) -> go.Figure:
    """:func:`unigram_vocab_figure` of a Unigram history, the "end" bar at the TRAINED model's size.

    (Not ``history.max_vocab_size``: for Unigram that is the seed vocabulary, the slider's top.)
    """
    return unigram_vocab_figure(
        history.prune_rounds, history.model.get_vocab_size(), marker_size=marker_size, presentation=presentation
    )


def log_prob_figure(pieces: Sequence[tuple[str, float]], special_tokens: Iterable[str] = (), *, presentation: bool = False) -> go.Figure:
    """Histogram of the final pieces' log-probabilities (special tokens, scored 0, left out)."""
    special = set(special_tokens)
    scores = [score for piece, score in pieces if piece not in special]
    figure = go.Figure(go.Histogram(x=scores, nbinsx=40, name="pieces", hovertemplate="log p in %{x}: %{y} pieces<extra></extra>"))
    style_figure(figure, "Log-probability of the pieces", xaxis_title="log probability (natural log)", yaxis_title="pieces", presentation=presentation)
    return figure


def lattice_figure(
    lattice: Any, best_path: Sequence[Any] | None = None, max_edges: int = 400, *, presentation: bool = False
) -> go.Figure:
    """The Viterbi lattice of one word: characters on the axis, every candidate piece an arc.

    ``lattice`` has ``.sentence`` and ``.nodes`` (each with ``start``, ``end``, ``score``,
    ``text``), as ``tokviz.models.unigram.lattice.Lattice``; ``best_path`` (default: its
    Viterbi path) is drawn thick and red under the axis. Longer pieces arc higher.
    """
    sentence = lattice.sentence
    best = list(best_path) if best_path is not None else list(lattice.viterbi())
    best_spans = {(node.start, node.end) for node in best}
    figure = go.Figure()
    nodes = list(lattice.nodes)[:max_edges]
    label_x, label_y, label_text, label_hover = [], [], [], []
    for node in nodes:
        on_path = (node.start, node.end) in best_spans
        xs, ys = _arc(node.start, node.end, -1 if on_path else 1)
        figure.add_trace(
            go.Scatter(
                x=xs,
                y=ys,
                mode="lines",
                line=dict(color="#d32f2f" if on_path else "rgba(90,110,140,0.45)", width=4 if on_path else 1.5),
                hoverinfo="skip",
                showlegend=False,
            )
        )
        middle = len(xs) // 2
        label_x.append(xs[middle])
        label_y.append(ys[middle])
        label_text.append(_label(node.text))
        label_hover.append(f"{_label(node.text)} [{node.start}, {node.end})<br>log p = {node.score:.4g}" + ("<br><b>on the best path</b>" if on_path else ""))
    figure.add_trace(
        go.Scatter(
            x=label_x, y=label_y, mode="text", text=label_text, textposition="top center", hovertext=label_hover,
            hoverinfo="text", showlegend=False, textfont=dict(size=font_sizes(presentation).tick - 1),
        )
    )
    figure.add_trace(
        go.Scatter(
            x=list(range(len(sentence) + 1)), y=[0] * (len(sentence) + 1), mode="markers", marker=dict(size=9, color="#263238"),
            hovertemplate="position %{x}<extra></extra>", showlegend=False,
        )
    )
    figure.update_xaxes(
        tickvals=[index + 0.5 for index in range(len(sentence))], ticktext=[_label(char) for char in sentence], showgrid=False, zeroline=False
    )
    figure.update_yaxes(visible=False)
    shown_word = sentence if len(sentence) <= 16 else sentence[:15] + "…"
    subtitle = f"{len(lattice.nodes)} candidate pieces; best path in red"
    if len(lattice.nodes) > max_edges:
        subtitle += f" (first {max_edges} drawn)"
    style_figure(figure, f"Lattice of {_label(shown_word)}", subtitle=subtitle, presentation=presentation, height=font_sizes(presentation).height + 40)
    figure.update_yaxes(visible=False)
    return figure


def _arc(start: int, end: int, direction: int, points: int = 21) -> tuple[list[float], list[float]]:
    """A half-ellipse from ``start`` to ``end`` whose height grows with the span length."""
    import math

    height = 0.35 + 0.3 * (end - start)
    xs, ys = [], []
    for index in range(points):
        angle = math.pi * index / (points - 1)
        xs.append(start + (end - start) * (1 - math.cos(angle)) / 2)
        ys.append(direction * height * math.sin(angle))
    return xs, ys
