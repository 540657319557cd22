"""Real browser: the Compare page trains three presets on the sample and draws their segmentations,
differences outlined, the metrics tables and the curves chart."""

from __future__ import annotations

import pytest

pytestmark = pytest.mark.e2e


def _wait_for_rerun(page) -> None:
    page.locator(".st-key-compare_curves").wait_for(state="attached", timeout=60_000)
    page.wait_for_timeout(1_000)
    page.locator("[data-testid=stStatusWidget]").wait_for(state="detached", timeout=30_000)
    page.wait_for_function("document.querySelectorAll('[data-testid=stSkeleton]').length === 0", timeout=30_000)


def test_compare_three_presets_on_the_sample(app_url: str, page, screenshot_dir) -> None:
    page.set_viewport_size({"width": 1400, "height": 3600})  # Streamlit scrolls inside its own container
    page.goto(f"{app_url}/compare")
    page.get_by_role("heading", name="Compare tokenizers").wait_for(timeout=60_000)
    _wait_for_rerun(page)
    views = page.locator(".tokviz-spans")
    assert views.count() == 3
    assert all(views.nth(index).locator(".tok").count() > 20 for index in range(3))
    outlined = page.locator(".tokviz-spans .tok.diff")
    assert outlined.count() > 0
    # The outline is drawn (dashed), not just a class name.
    assert outlined.first.evaluate("node => getComputedStyle(node).outlineStyle") == "dashed"
    page.locator(".st-key-compare_curves .js-plotly-plot").wait_for(timeout=30_000)
    page.screenshot(path=str(screenshot_dir / "compare_three_presets.png"))
    print(f"{outlined.count()} outlined tokens; screenshot in {screenshot_dir}")


def test_a_large_corpus_waits_for_train_all(app_url: str, page, read_shared_corpus) -> None:
    page.set_viewport_size({"width": 1400, "height": 3000})
    page.goto(f"{app_url}/compare")
    page.get_by_role("heading", name="Compare tokenizers").wait_for(timeout=60_000)
    _wait_for_rerun(page)
    corpus = page.locator(".st-key-corpus_text textarea")
    corpus.fill(read_shared_corpus("grimm_tales.txt")[:120_000])
    corpus.press("Control+Enter")  # Streamlit applies a text area's value on Ctrl+Enter or blur
    page.get_by_text("This corpus is large").wait_for(timeout=60_000)
    assert page.locator(".tokviz-spans").count() == 0
    page.locator(".st-key-compare_train button").click()
    _wait_for_rerun(page)
    assert page.locator(".tokviz-spans").count() == 3
    # Another rerun without a click keeps the comparison: the trainings come from the cache.
    text = page.locator(".st-key-compare_text textarea")
    text.fill("Once upon a time there was a king")
    text.press("Control+Enter")
    page.wait_for_function("document.querySelector('.tokviz-spans') && document.querySelector('.tokviz-spans').textContent.includes('king')", timeout=60_000)
    assert page.locator(".tokviz-spans").count() == 3
