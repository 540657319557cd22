"""Audit: the tokens a vocabulary can never produce, the ones it wastes, its half characters, and the texts it cannot give back."""

import streamlit as st

from tokviz.errors import TokvizError
from tokviz.ui import audit_views as views
from tokviz.ui.shell import md_escape, metrics_row, page_setup, page_title, show_error
from tokviz.ui.tokenizer_choice import tokenizer_choice
from tokviz.workspace import SESSION_TOKENIZER

workspace = page_setup("pages/audit.py")
state = workspace.audit
page_title(workspace, "pages/audit.py", "Audit a vocabulary",
           "Every token gets a verdict with a witness text or a proof: reachable, unreachable, or 'cannot decide' with the bound of "
           "the search. With texts: the tokens they never use, the texts that do not come back, and BPE's intermediate residues.")

left, right = st.columns([3, 2])
with left:
    tokenizer, choice_key = tokenizer_choice(workspace, "audit", allow_upload=True)
    history, size = None, None
    if tokenizer is not None and state.tokenizer == SESSION_TOKENIZER and (trained := views.session_at_size(workspace)) is not None:
        tokenizer, history, size = trained
        choice_key = f"{choice_key}|{size}"
with right:
    texts, texts_key, texts_name = views.audit_texts(workspace)
if tokenizer is None:
    st.stop()

try:
    report = views.run_audit(choice_key, texts_key, tokenizer, texts, history)
except TokvizError as error:
    show_error(error)
    st.stop()

counts = {finding.key: finding.count for finding in report.findings}
metrics_row({
    "vocab size": report.vocab_size,
    "unreachable": counts["unreachable"],
    "cannot decide": counts["undecided"],
    "partial UTF-8": counts["partial_utf8"],
    "unused": f"{counts['unused'] / report.vocab_size:.1%}" if "unused" in counts else "no texts",
}, helps={"unused": f"Share of the vocabulary that the texts ({md_escape(texts_name)}) never produce."})
for note in report.notes:
    st.caption(md_escape(note))

st.header("Summary")
threshold = state.threshold
views.summary_table(report, threshold)
charts = [chart for chart in (report.residue_source and "residues", report.texts_count and "unused") if chart]
for column, chart in zip(st.columns(len(charts)) if charts else [], charts):
    with column:
        if chart == "residues":
            def threshold_changed(value: float) -> None:
                state.threshold = float(value)

            # value=, not a seeded key: a widget drawn again after a run without it starts from its default
            threshold = st.slider("R(t) threshold for intermediate residues", 0.0, 1.0, value=state.threshold, step=0.01,
                                  key="audit_threshold", on_change=lambda: threshold_changed(st.session_state["audit_threshold"]),
                                  help="A merged BPE token whose uses are final in less than this share counts as a residue (LiteToken's R(t)).")
            figure = views.residue_figure(report, threshold, workspace.presentation)
        else:
            figure = views.unused_figure(report, workspace.presentation)
        st.plotly_chart(figure, width="stretch", key=f"audit_chart_{chart}")

st.header("Findings")
query = views.search_box(state)
chosen = views.findings_tabs(report, threshold, query)
if chosen is not None:
    views.token_actions(workspace, chosen[0], chosen[1], size)
views.downloads(report, threshold, choice_key.split(":")[0] or "tokenizer")
st.html('<div class="tokviz-audit-done"></div>')  # the browser tests' "the audit is on the page"
