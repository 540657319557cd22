"""Plotly figures from training histories: what a trainer learned, drawn.

Every function takes plain records (``MergeStep``, ``EmStep``, ``PruneRound``, a lattice,
word counts) and returns a ``plotly.graph_objects.Figure``; nothing here trains or caches,
so each figure is a pure function a test can call with hand-made records:

>>> from tokviz.history import MergeStep
>>> steps = [MergeStep(0, "h", "u", "hu", 15, 15.0, 31), MergeStep(1, "hu", "g", "hug", 15, 15.0, 32)]
>>> list(merge_scores_figure(steps).data[0].y)
[15.0, 15.0]

BPE / WordPiece: score per merge step, vocab growth, token length distribution, and the
share of corpus words that are a single token as the vocab grows. Unigram: the EM objective
per sub-iteration across pruning rounds, vocab size per round, the distribution of the final
pieces' log-probabilities, and the Viterbi lattice of one word with the best path drawn.

What this leaves out: animation, and any chart over more points than a browser draws
smoothly (long histories are thinned evenly, first and last step always kept).
"""

from __future__ import annotations

import html
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any

import plotly.graph_objects as go

from tokviz.history import EmStep, MergeStep, PruneRound
from tokviz.viz.spans import make_visible

#: Most points drawn per line; longer series are thinned evenly.
MAX_POINTS = 2_000
_MARKERS = ("##", "Ġ", "▁")
_SUFFIXES = ("</w>",)
_LAYOUT = dict(template="plotly_white", height=320, margin=dict(l=10, r=10, t=50, b=10))


def _thin(items: Sequence[Any], limit: int = MAX_POINTS) -> list[Any]:
    """Keep at most ``limit`` items evenly, first and last included: ``_thin(range(10), 4) -> [0, 3, 6, 9]``."""
    if len(items) <= limit:
        return list(items)
    step = (len(items) - 1) / (limit - 1)
    return [items[round(index * step)] for index in range(limit)]


def _label(token: str) -> str:
    # Plotly renders hover text as (a subset of) HTML: escape what users wrote.
    return html.escape(make_visible(token))


def merge_scores_figure(merges: Sequence[MergeStep], score_label: str = "count") -> go.Figure:
    """Score (BPE: the pair's count; WordPiece: its score) of each merge, in merge order."""
    shown = _thin(merges)
    figure = go.Figure(
        go.Scatter(
            x=[step.rank for step in shown],
            y=[float(step.score) for step in shown],
            mode="lines+markers" if len(shown) < 200 else "lines",
            marker=dict(size=5),
            customdata=[[_label(step.left), _label(step.right), _label(step.token), step.count] for step in shown],
            hovertemplate="merge %{x}: %{customdata[0]} + %{customdata[1]} → %{customdata[2]}<br>"
            f"{score_label}: %{{y:.6g}}<br>count: %{{customdata[3]}}<extra></extra>",
            name=score_label,
        )
    )
    figure.update_layout(title=f"{score_label.capitalize()} of each merge", xaxis_title="merge step", yaxis_title=score_label, **_LAYOUT)
    if merges and min(step.score for step in merges) > 0 and max(step.score for step in merges) / min(step.score for step in merges) > 100:
        figure.update_yaxes(type="log")
    return figure


def vocab_growth_figure(merges: Sequence[MergeStep], min_vocab_size: int) -> go.Figure:
    """Vocab size after each merge (flat where a merge re-created an existing token)."""
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
    figure.update_layout(title="Vocab growth", xaxis_title="merges", yaxis_title="vocab size", **_LAYOUT)
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


def token_length_figure(tokens: Iterable[str], special_tokens: Iterable[str] = ()) -> go.Figure:
    """How many tokens of each length (markers ``##``, ``Ġ``, ``▁``, ``</w>`` not counted)."""
    special = set(special_tokens)
    lengths: dict[int, int] = {}
    for token in tokens:
        if token not in special:
            length = token_length(token)
            lengths[length] = lengths.get(length, 0) + 1
    xs = sorted(lengths)
    figure = go.Figure(go.Bar(x=xs, y=[lengths[x] for x in xs], name="tokens", hovertemplate="%{y} tokens of length %{x}<extra></extra>"))
    figure.update_layout(title="Token length distribution", xaxis_title="characters (markers excluded)", yaxis_title="tokens", **_LAYOUT)
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


def single_token_share_figure(points: Sequence[tuple[int, float]], words_note: str = "") -> go.Figure:
    """The share of corpus words that are a single token, as the vocab grows."""
    figure = go.Figure(
        go.Scatter(
            x=[size for size, _ in points],
            y=[share * 100 for _, share in points],
            mode="lines+markers",
            name="single-token words",
            hovertemplate="vocab %{x}: %{y:.1f}% of word occurrences are one token<extra></extra>",
        )
    )
    title = "Words that are a single token" + (f" ({words_note})" if words_note else "")
    figure.update_layout(title=title, xaxis_title="vocab size", yaxis_title="% of word occurrences", **_LAYOUT)
    figure.update_yaxes(range=[0, 100])
    return figure


# ---------------------------------------------------------------------------------------
# Unigram


def em_objective_figure(em_steps: Sequence[EmStep]) -> go.Figure:
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
    figure.update_layout(title="EM objective per sub-iteration", xaxis_title="EM sub-iteration (all rounds)", yaxis_title="objective (neg. log-likelihood per word)", **_LAYOUT)
    return figure


def unigram_vocab_figure(prune_rounds: Sequence[PruneRound], final_size: int | None = None) -> go.Figure:
    """Vocab size at the start of each pruning round, and after the last one."""
    xs = [str(item.round) for item in prune_rounds]
    ys = [item.size_before for item in prune_rounds]
    if prune_rounds:
        xs.append("end")
        ys.append(final_size if final_size is not None else prune_rounds[-1].size_after)
    figure = go.Figure(go.Bar(x=xs, y=ys, name="vocab size", hovertemplate="round %{x}: %{y} pieces<extra></extra>"))
    figure.update_layout(title="Vocab size per pruning round", xaxis_title="round", yaxis_title="pieces", **_LAYOUT)
    return figure


def log_prob_figure(pieces: Sequence[tuple[str, float]], special_tokens: Iterable[str] = ()) -> go.Figure:
    """Histogram of the final pieces' log-probabilities (special tokens, scored 0, left out)."""
    special = set(special_tokens)
    scores = [score for piece, score in pieces if piece not in special]
    figure = go.Figure(go.Histogram(x=scores, nbinsx=40, name="pieces", hovertemplate="log p in %{x}: %{y} pieces<extra></extra>"))
    figure.update_layout(title="Log-probability of the final pieces", xaxis_title="log probability", yaxis_title="pieces", **_LAYOUT)
    return figure


def lattice_figure(lattice: Any, best_path: Sequence[Any] | None = None, max_edges: int = 400) -> go.Figure:
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
            hoverinfo="text", showlegend=False, textfont=dict(size=11),
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
    title = f"Lattice of {_label(sentence)!s}: {len(lattice.nodes)} candidate pieces; best path in red"
    if len(lattice.nodes) > max_edges:
        title += f" (first {max_edges} drawn)"
    figure.update_layout(title=title, template="plotly_white", height=360, margin=dict(l=10, r=10, t=50, b=10))
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
