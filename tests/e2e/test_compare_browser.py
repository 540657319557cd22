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
