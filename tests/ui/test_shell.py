"""tokviz.ui.shell: the page registry and frame -- every registered page exists, user errors shown as
typed and logged once, numbers with separators, long texts cut with a note."""

from __future__ import annotations

from pathlib import Path

from streamlit.testing.v1 import AppTest

from tokviz.ui.shell import PAGES

ROOT = Path(__file__).resolve().parents[2]


def test_every_registered_page_is_a_file_with_a_summary() -> None:
    assert [page.title for page in PAGES] == ["Home", "Train", "Compare", "Pipeline", "Inspect", "Audit", "Learn"]
    for page in PAGES:
        assert (ROOT / page.path).is_file(), page.path
        assert page.summary.endswith(".") and page.icon.startswith(":material/")
    assert {path.name for path in (ROOT / "pages").glob("*.py")} == {Path(page.path).name for page in PAGES[1:]}


def _frame() -> None:
    import streamlit as st

    from tokviz.errors import TokvizError
    from tokviz.ui.shell import capped_text, metrics_row, run_marker, show_error

    show_error(TokvizError("The pattern *a[ is not a valid regex."))
    metrics_row({"tokens": 12345, "ratio": "1.5x"}, {"tokens": "how many"})
    st.session_state["cut"] = capped_text("x" * 300_000, "test text")
    run_marker()
    run_marker()


def test_errors_metrics_cuts_and_run_markers() -> None:
    app = AppTest.from_function(_frame, default_timeout=60).run()
    assert not app.exception
    assert [error.value for error in app.error] == ["The pattern \\*a\\[ is not a valid regex\\."]  # shown as typed
    assert [(metric.label, metric.value, metric.help) for metric in app.metric] == [("tokens", "12,345", "how many"), ("ratio", "1.5x", "")]
    from tokviz.limits import MAX_TEST_TEXT_CHARS

    assert len(app.session_state["cut"]) == MAX_TEST_TEXT_CHARS
    assert app.caption[0].value.startswith(f"Using the first {MAX_TEST_TEXT_CHARS:,} characters of the test text (300,000 in all)")
    assert app.session_state["_tokviz_runs"] == 2
