"""The Audit page's views: the texts to audit with, the audit itself (cached, with a progress bar), the summary,
the charts of R(t) and of unused tokens by length, the findings' tables with search and downloads, and the hand-off
of a token to Inspect (its merge tree) or Train (its spans). Everything they show comes from :mod:`tokviz.audit`."""

from __future__ import annotations

import hashlib
import html
import threading
from collections import OrderedDict
from typing import Any

import plotly.graph_objects as go
import streamlit as st

from tokviz import audit as audit_lib
from tokviz.ui.shell import md_escape, show_error
from tokviz.ui.workspace import bind
from tokviz.workspace import SESSION_TOKENIZER, AuditState, UploadedFile, Workspace

TEXT_CHOICES = {
    "corpus": "the session's corpus",
    "multilingual": "the built-in multilingual sample (24 sentences, 10 languages)",
    "upload": "an uploaded text file",
    "none": "no texts (vocabulary findings only)",
}

#: The order of the findings' tabs (residues and round trips are not per-token findings of the report).
TABS = ("own_text", "unreachable", "undecided", "reachable", "partial_utf8", "duplicates", "special_from_text", "unused")


def audit_texts(workspace: Workspace) -> tuple[list[str], str, str]:
    """The radio choosing the texts (key ``audit_texts``), with an uploader for a text file; returns
    ``(texts, a cache key naming them, a phrase naming them)``, cut at the server's limit with a note."""
    from tokviz.limits import MAX_AUDIT_TEXT_CHARS

    state = workspace.audit

    def write(value: str) -> None:
        state.texts = value

    choice = st.radio("Texts to audit with", list(TEXT_CHOICES), format_func=TEXT_CHOICES.__getitem__, key="audit_texts",
                      on_change=bind("audit_texts", lambda: state.texts, write),
                      help="Unused tokens, round trips and (for loaded BPE files) residues are counted on these texts.")
    text, name = "", TEXT_CHOICES[choice]
    if choice == "corpus":
        from tokviz.ui.corpus_input import active_text

        text, name = active_text(workspace), f"the session's corpus ({workspace.corpus.describe()})"
    elif choice == "multilingual":
        from tokviz.literature_metrics import parallel_sample

        text = "\n".join(sentence for sentences in parallel_sample().values() for sentence in sentences)
    elif choice == "upload":
        text, name = _uploaded_text(state)
    if len(text) > MAX_AUDIT_TEXT_CHARS:
        st.caption(f"Using the first {MAX_AUDIT_TEXT_CHARS:,} characters of {md_escape(name)} ({len(text):,} in all): "
                   "this server's limit for audit texts.")
        text = text[:MAX_AUDIT_TEXT_CHARS]
    texts = [line for line in text.splitlines() if line.strip()]
    key = f"{choice}:{hashlib.sha256(text.encode('utf-8')).hexdigest()[:16]}"
    return texts, key, name


def _uploaded_text(state: AuditState) -> tuple[str, str]:
    def uploaded() -> None:
        file = st.session_state.get("audit_texts_file")
        state.texts_upload = None if file is None else UploadedFile(file.name, file.getvalue())

    st.file_uploader("A UTF-8 text file (one text per line)", type=["txt", "md", "csv", "tsv", "jsonl"], key="audit_texts_file",
                     on_change=uploaded, help="Read in memory, never stored. Links do not carry uploaded files.")
    if state.texts_upload is None:
        st.info("Upload a text file, or pick other texts.")
        return "", "an upload"
    try:
        return state.texts_upload.data.decode("utf-8"), f"upload {state.texts_upload.name}"
    except UnicodeDecodeError:
        show_error(audit_lib.AuditError(f"The file {state.texts_upload.name!r} is not UTF-8 text; save it as UTF-8 and upload it again."))
        return "", "an upload"


#: Audits kept for all sessions, least recently used evicted: a report of a 50,000-token vocabulary holds
#: a verdict per token (tens of MB), so few are kept. Not ``st.cache_resource``: the progress bar is drawn
#: while the audit runs, and a cached function may not draw into a block made outside it.
AUDITS_KEPT = 4
_AUDITS: OrderedDict[tuple[str, str], Any] = OrderedDict()
_AUDITS_LOCK = threading.Lock()


def run_audit(choice_key: str, texts_key: str, tokenizer: Any, texts: list[str], history: Any) -> Any:
    """The audit of ``tokenizer`` on ``texts``, computed once per (tokenizer, texts), with a progress bar meanwhile."""
    key = (choice_key, texts_key)
    with _AUDITS_LOCK:
        report = _AUDITS.get(key)
        if report is not None:
            _AUDITS.move_to_end(key)
            return report
    bar = st.progress(0.0, text="Auditing the vocabulary…")

    def progress(fraction: float, message: str) -> None:
        bar.progress(min(max(fraction, 0.0), 1.0), text=message)

    try:
        report = audit_lib.audit(tokenizer, texts, history=history, progress=progress)
    finally:
        bar.empty()
    with _AUDITS_LOCK:
        _AUDITS[key] = report
        while len(_AUDITS) > AUDITS_KEPT:
            _AUDITS.popitem(last=False)
    return report


def summary_table(report: Any, threshold: float) -> None:
    """One line per finding: count, share of the vocabulary, what it means."""
    import pandas as pd

    frame = pd.DataFrame(report.summary(threshold))
    frame["share of vocab"] = ["" if share != share else f"{share:.2%}" for share in frame["share of vocab"]]  # NaN: not of the vocab
    st.dataframe(frame, hide_index=True, width="stretch", column_config={
        "tokens": st.column_config.NumberColumn("count", format="localized", help="Tokens (texts, for round trips) in the finding."),
        "share of vocab": st.column_config.TextColumn("share of vocab", help=f"Of the {report.vocab_size:,} tokens, added tokens included."),
    })


def residue_figure(report: Any, threshold: float, presentation: bool) -> go.Figure:
    """A histogram of R(t) over the merged tokens, the threshold marked."""
    from tokviz.viz.charts import mark_x, style_figure

    values = [r.r for r in report.residues if r.f1 + r.f2]
    figure = go.Figure(go.Histogram(x=values, xbins=dict(start=0, end=1.0001, size=0.05), marker_color="#4c78a8",
                                    hovertemplate="R %{x}<br>%{y:,} tokens<extra></extra>"))
    below = len(report.residues_below(threshold))
    style_figure(figure, "R(t) = F1 / (F1 + F2) of merged tokens", xaxis_title="R(t): share of its uses that are final",
                 yaxis_title="tokens", subtitle=html.escape(f"{below:,} under {threshold:g}; F1, F2 from {report.residue_source}"),
                 presentation=presentation)
    return mark_x(figure, threshold, f"threshold {threshold:g}", presentation)


def unused_figure(report: Any, presentation: bool) -> go.Figure:
    """Used and unused model tokens by the length of their text."""
    from tokviz.viz.charts import style_figure

    frame = audit_lib.unused_by_length(report)
    figure = go.Figure([
        go.Bar(x=frame["length"], y=frame["used"], name="used", marker_color="#4c78a8", hovertemplate="length %{x}: %{y:,} used<extra></extra>"),
        go.Bar(x=frame["length"], y=frame["unused"], name="unused", marker_color="#e45756", hovertemplate="length %{x}: %{y:,} unused<extra></extra>"),
    ])
    figure.update_layout(barmode="stack")
    style_figure(figure, "Tokens the texts use, by length", xaxis_title="characters (bytes for partial UTF-8 tokens)",
                 yaxis_title="tokens", subtitle=html.escape(f"{report.texts_count:,} texts, {report.texts_chars:,} characters"),
                 presentation=presentation)
    return figure


def search_box(state: AuditState) -> str:
    def write(value: str) -> None:
        state.search = value

    return st.text_input("Search the tables (plain text: token, reason or witness)", value=state.search, key="audit_search",
                         on_change=lambda: write(st.session_state["audit_search"]))


def downloads(report: Any, threshold: float, name: str) -> None:
    """The whole report as JSON, and every token's verdict as CSV; both made only when clicked (50,000 tokens take seconds)."""
    import pandas as pd

    def verdicts_csv() -> str:
        return pd.DataFrame([[v.id, v.token, v.shown, v.status, v.reason, v.own_text or "", " ".join(v.segmentation), v.witness or ""]
                             for v in report.verdicts],
                            columns=["id", "token", "shown as", "status", "reason", "own text", "own text gives", "witness"]).to_csv(index=False)

    left, right = st.columns(2)
    left.download_button("Download the report (JSON)", lambda: report.to_json(threshold), file_name=f"audit-{name}.json",
                         mime="application/json", key="audit_json", icon=":material/download:", width="stretch", on_click="ignore")
    right.download_button("Download every token's verdict (CSV)", verdicts_csv, file_name=f"audit-{name}.csv",
                          mime="text/csv", key="audit_csv", icon=":material/download:", width="stretch", on_click="ignore")


#: Each report's findings tables, built once (a 50,000-row table takes a second or two); keyed by the report itself.
_FRAMES: OrderedDict[tuple[int, str], tuple[Any, Any]] = OrderedDict()


def finding_frame(report: Any, key: str) -> Any:
    """:func:`tokviz.audit.items_frame` of one finding, kept while its report is among the last few."""
    with _AUDITS_LOCK:
        kept = _FRAMES.get((id(report), key))
        if kept is not None and kept[0] is report:
            return kept[1]
    frame = audit_lib.items_frame(report.finding(key))
    with _AUDITS_LOCK:
        _FRAMES[(id(report), key)] = (report, frame)
        while len(_FRAMES) > AUDITS_KEPT * len(TABS):
            _FRAMES.popitem(last=False)
    return frame


def findings_tabs(report: Any, threshold: float, query: str) -> tuple[str, str] | None:
    """The findings' tables, one tab each, filtered by ``query``; a row clicked returns ``(token, witness)``."""
    keys = [key for key in TABS if any(f.key == key for f in report.findings)]
    titles = [f"{report.finding(key).title} ({report.finding(key).count:,})" for key in keys]
    extra = []
    if report.residue_source:
        extra.append(f"Residues (R < {threshold:g}: {len(report.residues_below(threshold)):,})")
    if report.texts_count:
        extra.append(f"Round trips ({sum(count for _, count in report.round_trip_counts):,} fail)")
    chosen = None
    for tab, key in zip(st.tabs(titles + extra), keys + extra):
        with tab:
            if key in keys:
                finding = report.finding(key)
                st.caption(md_escape(finding.description))
                frame = audit_lib.filter_frame(finding_frame(report, key), query)
                chosen = _selectable(frame, f"audit_table_{key}", "tokens") or chosen
            elif key.startswith("Residues"):
                frame = audit_lib.residues_frame(report)
                frame = audit_lib.filter_frame(frame[frame["R = F1/(F1+F2)"] < threshold], query)
                st.caption(f"BPE tokens whose R(t) is under {threshold:g}: later merges take them further in "
                           f"{1 - threshold:.0%} or more of their uses (F1, F2 from {md_escape(report.residue_source)}).")
                chosen = _selectable(frame, "audit_table_residues", "token") or chosen
            else:
                counts = ", ".join(f"{cause}: {count:,}" for cause, count in report.round_trip_counts) or "none"
                st.caption(f"Texts where decode(encode(x)) is not x, by cause: {md_escape(counts)}. Examples:")
                st.dataframe(audit_lib.filter_frame(audit_lib.round_trip_frame(report), query), hide_index=True, width="stretch")
    return chosen


#: Rows a findings table sends to the browser (every tab is drawn on every run); the downloads hold all of them.
MAX_TABLE_ROWS = 5000


def _selectable(frame: Any, key: str, token_column: str) -> tuple[str, str] | None:
    """A table whose rows can be clicked; returns the clicked row's first token and its witness."""
    if len(frame) > MAX_TABLE_ROWS:
        st.caption(f"The first {MAX_TABLE_ROWS:,} of {len(frame):,} rows: search to narrow them, or download the report for all. "
                   "Click a row to open its token in Inspect or on Train.")
        frame = frame.iloc[:MAX_TABLE_ROWS]
    else:
        st.caption(f"{len(frame):,} rows. Click a row to open its token in Inspect or on Train.")
    height = min(300, 35 * (max(len(frame), 1) + 1) + 3)  # short tables stay short (an empty one keeps a row for its note)
    event = st.dataframe(frame, hide_index=True, width="stretch", height=height, key=key, on_select="rerun", selection_mode="single-row")
    rows = event.selection.rows if event is not None else []
    if not rows or rows[0] >= len(frame):
        return None
    row = frame.iloc[rows[0]]
    token = str(row[token_column]).split(" ")[0] if token_column == "tokens" else str(row[token_column])
    return token, str(row.get("witness", "") or "")


def token_actions(workspace: Workspace, token: str, witness: str, size: int | None) -> None:
    """Buttons that open ``token`` in Inspect (its merge tree) or on Train (the witness as the test text)."""
    state = workspace.audit
    st.markdown(f"Selected token: **{md_escape(token)}**" + (f" · witness: {md_escape(witness)}" if witness else ""))
    left, right = st.columns(2)
    if left.button("Open in Inspect", key="audit_open_inspect", icon=":material/search:", width="stretch",
                   help="The Inspect page on this tokenizer, with this token's merge tree (BPE) and the vocabulary searched for it."):
        workspace.inspect.tokenizer = state.tokenizer
        workspace.inspect.files = list(state.files)
        if state.tokenizer == SESSION_TOKENIZER and size is not None:
            workspace.train.slider = size
        st.session_state["inspect_source"] = "a tokenizer"
        st.session_state["inspect_open_token"] = token
        st.switch_page("pages/inspect.py")
    on_train = state.tokenizer == SESSION_TOKENIZER
    if right.button("See it on Train", key="audit_open_train", icon=":material/model_training:", width="stretch", disabled=not on_train,
                    help="The Train page at this vocab size, with the witness as its test text (for the session's tokenizer)."):
        workspace.train.test_text = witness or token
        if size is not None:
            workspace.train.slider = size
        st.switch_page("pages/train.py")


def session_at_size(workspace: Workspace) -> tuple[Any, Any, int] | None:
    """The session's training at the Audit slider's size (key ``audit_vocab``): ``(tokenizer, history, size)``.

    ``None`` when the training is gone from the shared cache (the tokenizer choice retrains it, at the Train page's size).
    """
    from tokviz.inspect import training_size_range
    from tokviz.ui.training import tokenizer_at, training_of

    request = workspace.train.trained
    history = training_of(request) if request is not None else None
    if history is None:
        return None
    low, high, trained = training_size_range(history)
    state = workspace.audit

    def write(value: int) -> None:
        state.size = None if int(value) == trained else int(value)

    size = min(max(state.size or trained, low), high)
    # value=, not a key seeded from the workspace: Streamlit's front end gives a widget drawn again after a run
    # without it its default, so the default must be the workspace's value (else it jumps to the minimum)
    size = st.slider("Vocab size", low, high, value=size, key="audit_vocab", disabled=low == high,
              on_change=lambda: write(st.session_state["audit_vocab"]),
              help="The session's training at any size it went through (derived from its record, no retraining): "
                   "the findings follow the slider.")
    return tokenizer_at(request, size, history), history, size
