"""Notebook views: what ``_repr_html_`` returns for an Encoding, a TrainingHistory and a comparison,
and :class:`EncodingVisualizer`, HF's notebook class with every label escaped.

Jupyter calls ``obj._repr_html_()`` to draw an object. The views are the app's: the escaped token
spans of :mod:`tokviz.viz.spans` and tables whose cells go through ``html.escape`` (pandas'
``to_html`` escapes by default). Charts stay plotly figures (:mod:`tokviz.viz.choose`), which draw
themselves in a notebook.

>>> from tokviz import Encoding
>>> html_out = encoding_html(Encoding.from_tokens([(1, "<b>", (0, 3))]))
>>> "&lt;b&gt;" in html_out and "<b>" not in html_out
True

:class:`EncodingVisualizer` mirrors ``tokenizers.tools.EncodingVisualizer``: same constructor and
``__call__(text, annotations=[], default_to_notebook=None)``, same :class:`Annotation`. Where HF writes
special tokens and labels into HTML unescaped (a token ``<img onerror=…>`` runs in the notebook), this
one escapes every string, and it imports IPython only when it is about to draw in a notebook.

What this leaves out: HF's exact CSS (ours follows the app's colors) and its ``multi-token`` marking
of characters shared by several byte-level tokens (the first token owns the character here too).
"""

from __future__ import annotations

import html
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from tokviz.viz.spans import make_visible, render_token_spans, spans_from_encoding

#: Most table rows a notebook view draws (the rest is counted in a note).
MAX_TABLE_ROWS = 200


def _table_html(frame: Any, max_rows: int = MAX_TABLE_ROWS) -> str:
    shown = frame.head(max_rows)
    table = shown.to_html(escape=True, border=0, classes="tokviz-table", na_rep="")
    if len(frame) > max_rows:
        table += f"<p><em>{max_rows:,} of {len(frame):,} rows shown.</em></p>"
    return table


# ---------------------------------------------------------------------- Encoding
def encoding_html(encoding: Any, text: str | None = None) -> str:
    """An encoding as the app draws it: colored token spans, then the table of its fields.

    Without ``text`` (an Encoding does not keep its input) the spans show the tokens alone.
    """
    from tokviz.viz.pipeline import encoding_frame

    spans = spans_from_encoding(encoding)
    rendered = render_token_spans(text or "", spans)
    note = ""
    if rendered.truncated:
        note = f"<p><em>{rendered.rendered_tokens:,} of {rendered.total_tokens:,} tokens drawn.</em></p>"
    header = f"<p><strong>Encoding</strong> · {len(encoding):,} tokens</p>"
    return f'<div class="tokviz-notebook">{header}{rendered.html}{note}{_table_html(encoding_frame(encoding))}</div>'


# ---------------------------------------------------------------------- TrainingHistory
def history_html(history: Any) -> str:
    """A training history: what was trained, why it stopped, and the first rows of its table."""
    model = history.model
    size = model.get_vocab_size() if hasattr(model, "get_vocab_size") else "?"
    facts = [
        ("algorithm", history.algorithm),
        ("vocab size", f"{size:,}" if isinstance(size, int) else size),
        ("sizes the slider can show", f"{history.min_vocab_size:,} – {history.max_vocab_size:,}"),
        ("special tokens", ", ".join(history.special_tokens) or "none"),
        ("words fed", f"{history.word_counts.total_words:,} ({history.word_counts.unique_words:,} distinct)"),
        ("stopped because", history.stop_reason),
    ]
    rows = "".join(
        f"<tr><th style='text-align:left'>{html.escape(key)}</th><td>{html.escape(str(value))}</td></tr>"
        for key, value in facts
    )
    try:
        frame = history.to_frame()
    except NotImplementedError:
        frame = None
    table = "" if frame is None else _table_html(frame, 50)
    return (
        f'<div class="tokviz-notebook"><p><strong>{html.escape(type(history).__name__)}</strong></p>'
        f"<table>{rows}</table>{table}</div>"
    )


# ---------------------------------------------------------------------- comparison
def comparison_html(frame: Any) -> str:
    """The result of :func:`tokviz.compare.evaluate`: the table (best value of each metric in bold,
    names escaped) and, under it, each metric's one-sentence definition and source."""
    from tokviz.compare import best_tokenizers
    from tokviz.literature_metrics import METRICS

    best = best_tokenizers(frame)
    columns = list(frame.columns)
    head = "".join(f"<th>{html.escape(METRICS[c].label if c in METRICS else str(c))}</th>" for c in columns)
    body = []
    for name, row in frame.iterrows():
        cells = []
        for column in columns:
            value = row[column]
            text = f"{value:,.4f}" if isinstance(value, float) else f"{value:,}" if isinstance(value, int) else str(value)
            if column in METRICS and str(name) in best.get(column, []):
                cells.append(f"<td><strong>{html.escape(text)}</strong> ★</td>")
            else:
                cells.append(f"<td>{html.escape(text)}</td>")
        body.append(f"<tr><th>{html.escape(str(name))}</th>{''.join(cells)}</tr>")
    definitions = "".join(
        f"<li><strong>{html.escape(info.label)}</strong> ({html.escape(info.better)} is better): "
        f"{html.escape(info.definition)} <em>{html.escape(info.source)}</em></li>"
        for key, info in METRICS.items()
        if key in columns
    )
    return (
        '<div class="tokviz-notebook"><table class="tokviz-table">'
        f"<thead><tr><th>tokenizer</th>{head}</tr></thead><tbody>{''.join(body)}</tbody></table>"
        f"<p>★ best of the column.</p><ul>{definitions}</ul></div>"
    )


# ---------------------------------------------------------------------- EncodingVisualizer
@dataclass(frozen=True, slots=True)
class Annotation:
    """A labelled character span of the text, as HF's ``tokenizers.tools.Annotation``."""

    start: int
    end: int
    label: str


#: Label colors, cycled over the sorted labels (readable behind dark text).
LABEL_COLORS = ("#e57373", "#64b5f6", "#81c784", "#ffb74d", "#ba68c8", "#4db6ac", "#f06292", "#a1887f")

VISUALIZER_STYLE = """<style>
.tokviz-vis { font-family: ui-monospace, SFMono-Regular, Menlo, monospace; line-height: 2.6; white-space: pre-wrap; }
.tokviz-vis .token { border-radius: 3px; padding: 1px 0; }
.tokviz-vis .even-token { background: #ffe0b2; }
.tokviz-vis .odd-token { background: #bbdefb; }
.tokviz-vis .non-token { color: #9e9e9e; }
.tokviz-vis .special-token { background: #455a64; color: #fff; border-radius: 3px; padding: 1px 3px; margin: 0 2px; font-size: 0.85em; }
.tokviz-vis .unk { outline: 2px solid #d32f2f; }
.tokviz-vis .annotation { border-bottom: 3px solid var(--label-color); padding-bottom: 2px; position: relative; }
.tokviz-vis .annotation-label { font-size: 0.7em; color: #fff; background: var(--label-color); border-radius: 3px; padding: 0 3px; margin-left: 2px; }
</style>"""


class EncodingVisualizer:
    """Draw a text cut into tokens, with optional labelled annotations, as HF's class does.

    >>> from tokviz import Tokenizer, models, pre_tokenizers
    >>> tok = Tokenizer(models.WordLevel({"[UNK]": 0, "hi": 1}, unk_token="[UNK]"))
    >>> tok.pre_tokenizer = pre_tokenizers.Whitespace()
    >>> vis = EncodingVisualizer(tok, default_to_notebook=False)
    >>> out = vis("hi <you>", annotations=[Annotation(0, 2, "<greeting>")])
    >>> "&lt;greeting&gt;" in out, "<greeting>" in out, "<you" in out
    (True, False, False)
    """

    def __init__(
        self,
        tokenizer: Any,
        default_to_notebook: bool = True,
        annotation_converter: Callable[[Any], Annotation] | None = None,
    ) -> None:
        self.tokenizer = tokenizer
        self.default_to_notebook = default_to_notebook
        self.annotation_converter = annotation_converter

    def __call__(
        self, text: str, annotations: Sequence[Any] | None = None, default_to_notebook: bool | None = None
    ) -> str | None:
        """The HTML of ``text``'s tokens; in a notebook (the default) it is displayed and None returned."""
        to_notebook = self.default_to_notebook if default_to_notebook is None else default_to_notebook
        items = list(annotations or [])
        if self.annotation_converter is not None:
            items = [self.annotation_converter(item) for item in items]
        output = visualize_html(text, self.tokenizer.encode(text), items)
        if not to_notebook:
            return output
        try:  # only now: a script that asks for the HTML string never needs IPython
            from IPython.display import HTML, display
        except ImportError:
            raise ImportError(
                "Drawing in a notebook needs IPython, which is not installed; "
                "pass default_to_notebook=False to get the HTML as a string."
            ) from None
        display(HTML(output))
        return None

    @staticmethod
    def calculate_label_colors(annotations: Sequence[Annotation]) -> dict[str, str]:
        """One color per distinct label, in sorted label order (same labels, same colors).

        >>> EncodingVisualizer.calculate_label_colors([Annotation(0, 1, "b"), Annotation(1, 2, "a")])
        {'a': '#e57373', 'b': '#64b5f6'}
        """
        labels = sorted({str(annotation.label) for annotation in annotations})
        return {label: LABEL_COLORS[index % len(LABEL_COLORS)] for index, label in enumerate(labels)}


def visualize_html(text: str, encoding: Any, annotations: Sequence[Any] = ()) -> str:
    """The visualizer's HTML: runs of characters that share a token and an annotation become one span.

    Special tokens (no characters) are drawn as their escaped text; characters no token covers are
    dimmed; unknown tokens outlined. Annotations underline their characters in their label's color
    and end with the escaped label.
    """
    char_token: list[int | None] = [None] * len(text)
    specials: dict[int, list[str]] = {}  # text position -> special tokens drawn before it
    unk_tokens = _unknown_tokens(encoding)
    mask = list(getattr(encoding, "special_tokens_mask", None) or [0] * len(encoding.ids))
    last_end = 0
    for index, (token, (start, end), special) in enumerate(zip(encoding.tokens, encoding.offsets, mask)):
        if special or start == end:
            if special:
                specials.setdefault(last_end if start == end == 0 and index else start, []).append(token)
            continue
        for position in range(max(0, start), min(end, len(text))):
            if char_token[position] is None:
                char_token[position] = index
        last_end = max(last_end, end)
    char_annotation: list[int | None] = [None] * len(text)
    for number, annotation in enumerate(annotations):
        for position in range(max(0, int(annotation.start)), min(int(annotation.end), len(text))):
            if char_annotation[position] is None:
                char_annotation[position] = number
    colors = EncodingVisualizer.calculate_label_colors(annotations)

    pieces = [VISUALIZER_STYLE, '<div class="tokviz-vis">']
    position = 0
    open_annotation: int | None = None
    while position <= len(text):
        for token in specials.pop(position, []):
            pieces.append(f'<span class="special-token">{html.escape(make_visible(token))}</span>')
        if position == len(text):
            break
        key = (char_token[position], char_annotation[position])
        end = position + 1
        while end < len(text) and (char_token[end], char_annotation[end]) == key and end not in specials:
            end += 1
        token_index, annotation_index = key
        if annotation_index != open_annotation:
            if open_annotation is not None:
                pieces.append(_label_html(annotations[open_annotation], colors))
            if annotation_index is not None:
                color = colors[str(annotations[annotation_index].label)]
                pieces.append(f'<span class="annotation" style="--label-color:{color}">')
            open_annotation = annotation_index
        chunk = html.escape(text[position:end])
        if token_index is None:
            pieces.append(f'<span class="non-token">{chunk}</span>')
        else:
            classes = ["token", "odd-token" if token_index % 2 else "even-token"]
            if token_index in unk_tokens:
                classes.append("unk")
            title = html.escape(f"{encoding.tokens[token_index]!r} (id {encoding.ids[token_index]})", quote=True)
            pieces.append(f'<span class="{" ".join(classes)}" title="{title}">{chunk}</span>')
        position = end
    if open_annotation is not None:
        pieces.append(_label_html(annotations[open_annotation], colors))
    pieces.append("</div>")
    return "".join(pieces)


def _label_html(annotation: Any, colors: dict[str, str]) -> str:
    label = str(annotation.label)
    return f'<span class="annotation-label" style="--label-color:{colors[label]}">{html.escape(label)}</span></span>'


def _unknown_tokens(encoding: Any) -> set[int]:
    """Positions of tokens that look like an unknown token (``[UNK]``, ``<unk>``), as HF marks them."""
    return {
        index
        for index, token in enumerate(encoding.tokens)
        if token.strip("[]<>").lower() in ("unk", "oov")
    }


def _register() -> None:
    """Give the core's records their notebook views (the core never imports viz; see tokviz._views)."""
    from tokviz._views import register_html_view
    from tokviz.compare import ComparisonFrame
    from tokviz.encoding import Encoding
    from tokviz.history import TrainingHistory

    register_html_view(Encoding, encoding_html)
    register_html_view(TrainingHistory, history_html)
    register_html_view(ComparisonFrame, comparison_html)
    import tokviz.viz.choose  # noqa: F401 - registers ComparisonFrame.figure's charts


_register()
