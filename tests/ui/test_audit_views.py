"""tokviz.ui.audit_views: the Audit page's parts -- the texts to audit with (bound to the workspace, cut at
the server's limit), the audit run once per tokenizer and texts, its summary, tables, charts and downloads."""

from __future__ import annotations

from streamlit.testing.v1 import AppTest

from tokviz.audit import _toy_bpe, audit
from tokviz.ui.audit_views import finding_frame, residue_figure, run_audit, unused_figure


def _texts() -> None:
    import streamlit as st

    from tokviz.ui.audit_views import audit_texts
    from tokviz.ui.workspace import current

    texts, key, name = audit_texts(current())
    st.session_state["texts"] = (len(texts), key.split(":")[0], name)


def test_the_texts_follow_the_choice_and_the_limit(monkeypatch) -> None:
    app = AppTest.from_function(_texts, default_timeout=60).run()
    count, choice, name = app.session_state["texts"]
    assert count > 10 and choice == "corpus" and name == "the session's corpus (the built-in sample)"
    app.radio(key="audit_texts").set_value("none").run()
    assert app.session_state["texts"][:2] == (0, "none")
    app.radio(key="audit_texts").set_value("multilingual").run()
    assert app.session_state["texts"][0] > 10 and app.session_state["_tokviz_workspace"].audit.texts == "multilingual"
    app.radio(key="audit_texts").set_value("upload").run()
    assert [info.value for info in app.info] == ["Upload a text file, or pick other texts."]


def _run() -> None:
    import streamlit as st

    from tokviz.audit import _toy_bpe
    from tokviz.ui.audit_views import downloads, findings_tabs, run_audit, summary_table

    report = run_audit("toy", "texts:1", _toy_bpe(), ["abc ab", "b c"], None)
    st.session_state["same"] = report is run_audit("toy", "texts:1", _toy_bpe(), ["something else"], None)  # kept by key
    summary_table(report, 0.05)
    findings_tabs(report, 0.05, "")
    downloads(report, 0.05, "toy")


def test_an_audit_is_run_once_and_drawn() -> None:
    app = AppTest.from_function(_run, default_timeout=60).run()
    assert not app.exception, [str(error.value) for error in app.exception]
    assert app.session_state["same"] is True
    assert len(app.dataframe) >= 2 and len(app.tabs) >= 2


def test_tables_and_charts_of_a_report() -> None:
    report = run_audit("toy-direct", "texts:2", _toy_bpe(), ["abc ab", "b c"], None)
    frame = finding_frame(report, "unreachable")
    assert frame is finding_frame(report, "unreachable")  # built once
    assert list(frame.columns) == ["ids", "tokens", "shown as", "reason", "witness", "detail"]
    assert (frame.iloc[0]["ids"], frame.iloc[0]["tokens"]) == ("5", "abc")
    assert "merge #0 ('b' + 'c' → 'bc') takes a part first" in frame.iloc[0]["reason"]
    assert unused_figure(report, presentation=False).layout.title.text.startswith("Tokens the texts use, by length")
    figure = residue_figure(report, 0.05, presentation=False)
    assert figure.layout.title.text.startswith("R(t) = F1 / (F1 + F2) of merged tokens")
    assert report.finding("unreachable").items[0].tokens == ("abc",) == audit(_toy_bpe(), ["abc ab", "b c"]).finding("unreachable").items[0].tokens
