"""Real browser: the Compare page trains three presets on the sample and draws their segmentations,
differences outlined, the metrics tables and the curves chart."""

from __future__ import annotations

import pytest

from app_driver import act, open_page, set_text

pytestmark = pytest.mark.e2e


def test_compare_three_presets_on_the_sample(app_url: str, page, screenshot_dir) -> None:
    page.set_viewport_size({"width": 1400, "height": 3600})  # Streamlit scrolls inside its own container
    open_page(page, f"{app_url}/compare")
    views = page.locator(".tokviz-spans")
    assert views.count() == 3
    assert all(views.nth(index).locator(".tok").count() > 20 for index in range(3))
    outlined = page.locator(".tokviz-spans .tok.diff")
    assert outlined.count() > 0
    # The outline is drawn (dashed), not just a class name.
    assert outlined.first.evaluate("node => getComputedStyle(node).outlineStyle") == "dashed"
    page.locator(".st-key-compare_curves .js-plotly-plot").wait_for()
    page.screenshot(path=str(screenshot_dir / "compare_three_presets.png"))
    print(f"{outlined.count()} outlined tokens; screenshot in {screenshot_dir}")


def test_a_large_corpus_waits_for_train_all(app_url: str, page, read_shared_corpus) -> None:
    page.set_viewport_size({"width": 1400, "height": 3000})
    open_page(page, f"{app_url}/compare")
    page.locator("[data-testid=stExpander] summary", has_text="Corpus (shared with the Train page)").first.click()
    set_text(page, "compare_corpus_text", read_shared_corpus("grimm_tales.txt")[:120_000])
    page.get_by_text("This corpus is large").wait_for()
    assert page.locator(".tokviz-spans").count() == 0
    act(page, lambda: page.locator(".st-key-compare_train button").click())
    assert page.locator(".tokviz-spans").count() == 3
    # Another rerun without a click keeps the comparison: the trainings come from the cache.
    set_text(page, "compare_text", "Once upon a time there was a king")
    assert page.locator(".tokviz-spans").count() == 3
    assert "king" in page.locator(".tokviz-spans").first.text_content()
