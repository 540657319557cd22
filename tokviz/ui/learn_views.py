"""Learn page views: one per lesson step kind (``tokviz.lessons`` computes, these only lay out),
and the lesson's word-count editor bound to the session workspace."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import streamlit as st

from tokviz.errors import TokvizError
from tokviz.history import merge_number
from tokviz.ui.shell import counted, md_escape, show_error
from tokviz.workspace import LearnState

_WINNER_STYLE = "background-color: #c8e6c9; font-weight: 600"
_TIED_STYLE = "background-color: #fff59d"


def _highlight_rows(frame: Any, styles: list[str] | None = None) -> Any:
    """A Styler that paints row ``i`` with ``styles[i]`` (none: plain) and shows floats with 3 decimals."""
    styled = frame.style.format(precision=3)
    return styled.apply(lambda row: [styles[row.name]] * len(row), axis=1) if styles else styled


def _rows_height(rows: int, most: int) -> int:
    """A table's height in px: every row when they fit in ``most``, a scroll bar when not."""
    return min(38 + 35 * rows, most)


_LEARN_COMPACT_CSS = """<style>
[data-testid=stMainBlockContainer] { padding-top: 1.5rem; padding-bottom: 1rem; }
[data-testid=stMainBlockContainer] h1 { font-size: 1.9rem; padding: 0.25rem 0 0.5rem 0; }
[data-testid=stMainBlockContainer] h3 { font-size: 1.35rem; padding: 0.25rem 0; }
</style>"""


#: Presentation mode on Learn (the page teachers project): the title clears Streamlit's header (Copy link clickable),
#: tighter spacing between blocks so a step fits 1280×720, and the lesson tables are HTML tables whose text grows.
_LEARN_PRESENTATION_CSS = """<style>
[data-testid=stMainBlockContainer] { padding-top: 3.75rem !important; padding-bottom: 0.5rem; }
[data-testid=stMainBlockContainer] h1 { font-size: 1.6rem; padding: 0; }
[data-testid=stMainBlockContainer] h3 { font-size: 1.35rem; padding: 0.1rem 0; }
[data-testid=stMainBlockContainer] [data-testid=stVerticalBlock] { gap: 0.35rem; }
[data-testid=stMainBlockContainer] [data-testid=stCaptionContainer] { font-size: 1rem !important; line-height: 1.4; }
[data-testid=stMainBlockContainer] [data-testid=stTable] td, [data-testid=stMainBlockContainer] [data-testid=stTable] th {
  font-size: 1.15rem !important; padding: 0.15rem 0.5rem !important; }
</style>"""


def learn_compact_layout(presentation: bool = False) -> None:
    """Less padding and smaller headings on the Learn page, so a lesson step fits a projected 1280×720 screen."""
    st.html(_LEARN_COMPACT_CSS + (_LEARN_PRESENTATION_CSS if presentation else ""))


#: Most rows a lesson table shows as one HTML table in presentation mode.
_PRESENTATION_TABLE_ROWS = 8


def _table(data: Any, **dataframe_options: Any) -> None:
    """A lesson table: ``st.dataframe`` at a desk; in presentation mode an HTML table, whose text grows with the page
    (a data grid draws on a canvas at a fixed size)."""
    from tokviz.ui.workspace import current

    if not current().presentation:
        st.dataframe(data, **dataframe_options)
        return
    from pandas.io.formats.style import Styler

    rows = len(data.data) if isinstance(data, Styler) else len(data)
    if rows <= _PRESENTATION_TABLE_ROWS:
        styler = data if isinstance(data, Styler) else data.style
        st.table(styler.hide(axis="index"))
    elif not isinstance(data, Styler) and rows <= 3 * _PRESENTATION_TABLE_ROWS:  # side by side: the step keeps its screen
        for column, start in zip(st.columns(3), range(0, rows, -(-rows // 3))):
            column.table(data.iloc[start:start + -(-rows // 3)].style.hide(axis="index"))
    else:  # too long for the screen even side by side: the scrolling grid (its text does not grow)
        st.dataframe(data, **dataframe_options)


def learn_corpus_editor(learn: LearnState, default_counts: dict[str, int]) -> dict[str, int] | None:
    """The lesson's word counts, edited as a table (``st.data_editor``) or as text; ``None`` after a shown error.

    The counts live in the workspace (``learn.word_counts``; ``None`` means the classic table).
    """
    import pandas as pd

    from tokviz.lessons import check_word_counts, format_word_counts, parse_word_counts

    current = dict(learn.word_counts) if learn.word_counts is not None else dict(default_counts)
    st.session_state.setdefault("learn_counts_text", format_word_counts(current))
    # The editor's starting table must not change under its edits (they are stored relative to it):
    # it is replaced, under a new key, only when the teacher switches from text back to the table
    # or comes back to the page.
    base_counts = st.session_state.setdefault("learn_counts_base", dict(current))
    st.session_state.setdefault("learn_counts_version", 0)
    editor_key = f"learn_counts_editor_{st.session_state['learn_counts_version']}"
    if editor_key not in st.session_state and base_counts != current:  # back on the page: start from the workspace's table
        st.session_state["learn_counts_base"] = base_counts = dict(current)

    def switch_mode() -> None:  # carry the words over to the other editor
        st.session_state["learn_counts_text"] = format_word_counts(current)
        st.session_state["learn_counts_base"] = dict(current)
        st.session_state["learn_counts_version"] += 1

    mode = st.radio("Edit as", ["table", "text"], horizontal=True, key="learn_counts_mode", on_change=switch_mode)
    try:
        if mode == "table":
            base = pd.DataFrame({"word": list(base_counts), "count": list(base_counts.values())})
            edited = st.data_editor(
                base, num_rows="dynamic", hide_index=True, width=260, height=250,
                column_config={"count": st.column_config.NumberColumn("count", min_value=0, step=1)},
                key=editor_key,
            )
            counts = check_word_counts(dict(zip(edited["word"], edited["count"])))
        else:
            counts = parse_word_counts(st.text_area("One word and its count per line", key="learn_counts_text", height=180))
    except TokvizError as error:
        show_error(error)
        return None
    learn.word_counts = None if counts == dict(default_counts) else counts
    return counts


def learn_step_view(step: Any, predict: bool, step_key: str) -> None:
    """Draw one lesson step: its title, its short explanation and the view its ``kind`` names."""
    view = step.data
    hidden = predict and step.kind == "merge" and step_key not in st.session_state.get("learn_revealed", frozenset())
    # Titles and explanations quote the user's words: shown as typed, never as Markdown (links, images).
    st.subheader(f"Merge #{merge_number(view.rank)}: which pair is merged next?" if hidden else md_escape(step.title))
    if not hidden:
        st.caption(md_escape(step.explanation))
    _LEARN_VIEWS[step.kind](view, hidden, step_key)


def _splits_view(data: Any, hidden: bool, step_key: str) -> None:
    from tokviz.lessons import splits_frame

    splits, vocab = data.splits, data.vocab
    left, right = st.columns([3, 2])
    left.dataframe(splits_frame(splits), hide_index=True, width="stretch")
    right.markdown("**Vocabulary**")
    right.code("  ".join(vocab), language=None, wrap_lines=True)


def _merge_view(view: Any, hidden: bool, step_key: str) -> None:
    from tokviz.lessons import pairs_frame, splits_frame

    left, right = st.columns([1, 1])
    with left:
        st.markdown("**Current splits**")
        _table(splits_frame(view.splits), hide_index=True, width="stretch")
        verdict = None if hidden else st.session_state.get(f"learn_verdict_{step_key}")
        if verdict is not None:
            (st.success if verdict.correct else st.warning)(md_escape(verdict.headline))
            st.caption(md_escape(verdict.why))
    with right:
        if hidden:
            st.markdown("**Your prediction**")
            options = sorted(f"{row.left} + {row.right}" for row in view.pairs)
            st.selectbox("The pair merged next", options, key=f"learn_guess_{step_key}")
            st.button("Check", key=f"learn_check_{step_key}", type="primary", on_click=_reveal_merge, args=(view, step_key))
            if view.algorithm == "WordPiece":
                st.caption("Score each pair: its count / (count of its left part × count of its right part). The best score wins.")
            else:
                st.caption("Count the pairs in the words on the left (weighted by their counts), then check.")
            return
        st.markdown("**Pairs now** (winner green, ties yellow)")
        styles = [_WINNER_STYLE if row.winner else _TIED_STYLE if row.tied else "" for row in view.pairs]
        _table(_highlight_rows(pairs_frame(view), styles), hide_index=True, width="stretch", height=_rows_height(len(view.pairs), 280))
        st.success(md_escape(f"New vocabulary entry: {view.token!r} (= {view.left!r} + {view.right!r})"))


def _reveal_merge(view: Any, step_key: str) -> None:
    """The Check button: judge the student's guess and reveal this step's merge."""
    from tokviz.lessons import judge_prediction

    pair_left, pair_right = st.session_state[f"learn_guess_{step_key}"].split(" + ", 1)
    st.session_state[f"learn_verdict_{step_key}"] = judge_prediction(view, pair_left, pair_right)
    st.session_state["learn_revealed"] = st.session_state.get("learn_revealed", frozenset()) | {step_key}


def _encode_view(data: Any, hidden: bool, step_key: str) -> None:
    from tokviz.lessons import encoded_frame, splits_frame

    splits, vocab, encoded = data.splits, data.vocab, data.encoded
    left, right = st.columns([1, 1])
    left.markdown("**The training words now**")
    left.dataframe(splits_frame(splits), hide_index=True, width="stretch")
    right.text_input("New words to tokenize (separated by spaces)", key="learn_new_words_bpe", max_chars=120)
    right.dataframe(encoded_frame(encoded), hide_index=True, width="stretch")
    right.code("  ".join(vocab), language=None, wrap_lines=True)


def _wordpiece_encode_view(data: Any, hidden: bool, step_key: str) -> None:
    import pandas as pd

    from tokviz.viz import tables

    vocab, traces = data.vocab, data.traces
    left, right = st.columns([1, 1])
    left.text_input("New words to tokenize (separated by spaces)", key="learn_new_words_wordpiece", max_chars=120)
    frame = pd.DataFrame(
        [(item.trace.word, str([token.value for token in item.trace.tokens]), str(list(item.bpe_tokens))) for item in traces],
        columns=["word", "WordPiece", "BPE (3 merges)"],
    )
    left.dataframe(frame, hide_index=True, width="stretch")
    left.code("  ".join(vocab), language=None, wrap_lines=True)
    with right:
        words = [item.trace.word for item in traces]
        if not words:
            st.info("Type a word on the left to trace its search.")
            return
        word = st.selectbox("Trace the search for", words, key="learn_trace_word")
        traced = next(item for item in traces if item.trace.word == word)
        trace = traced.trace
        _table(tables.wordpiece_trace_table(trace), hide_index=True, width="stretch", height=_rows_height(4, 200))
        if trace.unk_reason:
            bpe = traced.bpe_tokens
            st.warning(md_escape(f"{trace.unk_reason}. BPE only replaces the unknown character: {list(bpe)}."))


def _seed_view(rows: Any, hidden: bool, step_key: str) -> None:
    import pandas as pd

    frame = pd.DataFrame([(row.piece, row.count, round(row.probability, 4)) for row in rows], columns=["piece", "count", "P(piece)"])
    _table(_highlight_rows(frame), hide_index=True, width="stretch", height=_rows_height(len(frame), 390))


def _segmentations_view(data: Any, hidden: bool, step_key: str) -> None:
    import pandas as pd

    rows = data.rows
    if len(rows) > 10:
        st.caption(f"The 10 most probable of {len(rows)} cuts.")
        rows = rows[:10]
    frame = pd.DataFrame(
        [(str(list(row.pieces)), " × ".join(f"{p:.4f}" for p in row.piece_probabilities), f"{row.probability:.5f}", f"{row.share:.1%}")
         for row in rows],
        columns=["segmentation", "P(piece) × …", "probability", "share of all cuts"],
    )
    _table(_highlight_rows(frame, [_WINNER_STYLE if row.best else "" for row in rows]), hide_index=True, width="stretch")


def _viterbi_view(data: Any, hidden: bool, step_key: str) -> None:
    import pandas as pd

    cells = data.cells
    frame = pd.DataFrame(
        [(cell.end, f"{cell.piece} ({cell.start}→{cell.end})", round(cell.piece_log_prob, 3), round(cell.total, 3)) for cell in cells],
        columns=["position", "piece ending here", "log P(piece)", "best[start] + log P"],
    )
    _table(_highlight_rows(frame, [_WINNER_STYLE if cell.chosen else "" for cell in cells]), hide_index=True, width="stretch",
                 height=_rows_height(len(cells), 390))


def _loss_view(data: Any, hidden: bool, step_key: str) -> None:
    import pandas as pd

    rows, loss = data.rows, data.loss
    frame = pd.DataFrame(
        [(row.word, row.count, str(list(row.segmentation)), round(row.cost, 3), round(row.count * row.cost, 2)) for row in rows],
        columns=["word", "count", "best cut", "−log P(cut)", "count × −log P"],
    )
    left, right = st.columns([4, 1])
    left.dataframe(_highlight_rows(frame), hide_index=True, width="stretch")
    right.metric("loss", f"{loss:.2f}")


def _prune_view(view: Any, hidden: bool, step_key: str) -> None:
    import pandas as pd

    frame = pd.DataFrame([(piece, round(loss, 3), "removed" if removed else "") for piece, loss, removed in view.candidates],
                         columns=["piece", "loss increase if removed", ""])
    left, right = st.columns([1, 1])
    left.dataframe(_highlight_rows(frame, ["background-color: #ffcdd2" if removed else "" for _, _, removed in view.candidates]),
                   hide_index=True, width="stretch", height=_rows_height(len(frame), 390))
    right.markdown("**Why these go**")
    for piece, reason in view.reasons:
        right.text(f"{piece!r}: {reason}")


def _unigram_final_view(data: Any, hidden: bool, step_key: str) -> None:
    import pandas as pd

    from tokviz.lessons import encoded_frame

    pieces, encoded = data.pieces, data.encoded
    left, right = st.columns([1, 1])
    frame = pd.DataFrame([(piece, p) for piece, p in pieces], columns=["piece", "P(piece)"])
    left.dataframe(_highlight_rows(frame), hide_index=True, width="stretch", height=_rows_height(len(frame), 390))
    right.dataframe(encoded_frame(encoded), hide_index=True, width="stretch")


def _bytes_view(data: Any, hidden: bool, step_key: str) -> None:
    import pandas as pd

    rows, n_bytes = data.rows, data.n_bytes
    frame = pd.DataFrame(
        [(repr(row.char), row.code_point, " ".join(f"{b:02X}" for b in row.utf8), len(row.utf8)) for row in rows],
        columns=["character", "code point", "UTF-8 bytes", "bytes"],
    )
    left, right = st.columns([3, 1])
    left.dataframe(frame, hide_index=True, width="stretch")
    right.metric("characters", len(rows))
    right.metric("bytes", n_bytes)


def _byte_map_view(data: Any, hidden: bool, step_key: str) -> None:
    import pandas as pd

    symbols, byte_rows = data.symbols, data.byte_rows
    left, right = st.columns([1, 1])
    left.markdown("**The text as byte symbols**")
    left.code(symbols, language=None)
    right.dataframe(pd.DataFrame([(f"0x{byte:02X}", symbol) for byte, symbol in byte_rows], columns=["byte", "symbol"]), hide_index=True, width="stretch")


def _byte_pieces_view(data: Any, hidden: bool, step_key: str) -> None:
    import pandas as pd

    from tokviz.viz.spans import readable_byte_level

    text, pieces = data.text, data.pieces
    frame = pd.DataFrame(
        [(piece, readable_byte_level(piece), str(offsets), repr(text[offsets[0]:offsets[1]])) for piece, offsets in pieces],
        columns=["pre-token (byte symbols)", "readable", "offsets", "original text"],
    )
    _table(frame, hide_index=True, width="stretch")


def _no_unk_view(data: Any, hidden: bool, step_key: str) -> None:
    from tokviz.viz.spans import render_token_spans, spans_from_encoding

    sample, encoding, char_tokens, decoded = data.sample, data.encoding, data.char_tokens, data.decoded
    st.markdown("**Byte-level BPE** (trained on the lesson's words)")
    st.html(render_token_spans(sample, spans_from_encoding(encoding), byte_level=True).html)
    st.caption(md_escape(f"{counted(len(encoding.ids), 'token')}, decoded back: {decoded!r}"))
    st.markdown("**Character-level BPE** (same words)")
    st.code(str(list(char_tokens)), language=None)


def _pipeline_spans(sentence: str, pieces: Any, byte_level: bool = False) -> str:
    from tokviz.viz.spans import TokenSpan, render_token_spans

    spans = [TokenSpan(piece, None, start, end) for piece, (start, end) in pieces]
    return render_token_spans(sentence, spans, byte_level=byte_level).html


def _pipeline_view(view: Any, hidden: bool, step_key: str) -> None:
    import pandas as pd

    from tokviz.viz.spans import make_visible

    sentence = view.sentence
    left, right = st.columns([1, 1])
    with left:
        st.caption(md_escape(f"normalizer: {view.normalizer} · pre-tokenizer: {view.pre_tokenizer}"))
        st.code(view.normalized, language=None, wrap_lines=True)
        st.html(_pipeline_spans(sentence, view.pieces, view.byte_level))
    rows = [(piece, str(offsets), make_visible(sentence[offsets[0]:offsets[1]])) for piece, offsets in view.pieces]
    right.dataframe(pd.DataFrame(rows, columns=["pre-token", "offsets", "original text"]), hide_index=True, width="stretch",
                    height=_rows_height(len(rows), 390))


def _pipeline_compare_view(data: Any, hidden: bool, step_key: str) -> None:
    sentence, views = data.sentence, data.views
    for view in views:
        st.markdown(f"**{view.name}** · {len(view.pieces)} pre-tokens")
        st.html(_pipeline_spans(sentence, view.pieces, view.byte_level))


_LEARN_VIEWS: dict[str, Callable[[Any, bool, str], None]] = {
    "splits": _splits_view,
    "merge": _merge_view,
    "encode": _encode_view,
    "wordpiece_encode": _wordpiece_encode_view,
    "seed": _seed_view,
    "segmentations": _segmentations_view,
    "viterbi": _viterbi_view,
    "loss": _loss_view,
    "prune": _prune_view,
    "unigram_final": _unigram_final_view,
    "bytes": _bytes_view,
    "byte_map": _byte_map_view,
    "byte_pieces": _byte_pieces_view,
    "no_unk": _no_unk_view,
    "pipeline": _pipeline_view,
    "pipeline_compare": _pipeline_compare_view,
}
