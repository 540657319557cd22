"""Real browser: the Train page's first screen and presentation mode (issue 12).

After training on the built-in sample, the vocab slider, the numbers and the first token spans
lie inside the first screen at 1280×720 and 1440×900 with no scrolling. Presentation mode (kept
in the link as ``present=true``) folds the sidebar and enlarges spans, tables and chart ticks,
measured as the browser computes them.

Screenshots (in the screenshot folder printed by the run): ``train_1280x720.png``,
``train_1440x900.png``, ``train_present_1280x720.png``, ``train_present_1920x1080.png``,
``train_present_charts_1280x720.png``.
"""

from __future__ import annotations

import os

import pytest

from app_driver import in_first_screen, open_page

pytestmark = pytest.mark.e2e


def _context_page(browser, width: int, height: int):
    context = browser.new_context(viewport={"width": width, "height": height})
    context.set_default_timeout(int(os.environ.get("TOKVIZ_E2E_TIMEOUT_MS", "240000")))
    return context, context.new_page()


@pytest.mark.parametrize(("width", "height"), [(1280, 720), (1440, 900)])
def test_slider_numbers_and_first_spans_are_on_the_first_screen(app_url: str, browser, screenshot_dir, width: int, height: int) -> None:
    context, page = _context_page(browser, width, height)
    try:
        open_page(page, f"{app_url}/train")
        page.locator(".tokviz-spans.pinned .tok").first.wait_for()
        page.screenshot(path=str(screenshot_dir / f"train_{width}x{height}.png"))
        assert in_first_screen(page, ".st-key-vocab_slider [data-testid=stSlider]")
        assert in_first_screen(page, "[data-testid=stMetric]")
        assert in_first_screen(page, ".tokviz-spans.pinned .tok")
        # The inputs are folded away once trained: their panel is one closed line.
        assert page.locator("[data-testid=stExpander] details").first.get_attribute("open") is None
    finally:
        context.close()


@pytest.mark.parametrize(("width", "height"), [(1280, 720), (1920, 1080)])
def test_presentation_mode_enlarges_type_and_folds_the_sidebar(app_url: str, browser, screenshot_dir, width: int, height: int) -> None:
    context, page = _context_page(browser, width, height)
    try:
        open_page(page, f"{app_url}/train?present=true")
        page.locator(".tokviz-spans.pinned .tok").first.wait_for()
        page.screenshot(path=str(screenshot_dir / f"train_present_{width}x{height}.png"))
        sidebar = page.locator("[data-testid=stSidebar]").first
        assert sidebar.get_attribute("data-collapsed") == "true"
        box = sidebar.bounding_box()
        assert box is None or box["x"] + box["width"] <= 0  # folded out of sight
        span_px = page.locator(".tokviz-spans.pinned .tok").first.evaluate("node => parseFloat(getComputedStyle(node).fontSize)")
        assert span_px >= 24, span_px
        # The size the number is drawn at: the innermost element holding the metric's text.
        metric_px = page.locator("[data-testid=stMetricValue] >> visible=true").first.evaluate(
            "node => { let at = node; while (at.firstElementChild) at = at.firstElementChild; return parseFloat(getComputedStyle(at).fontSize); }")
        assert metric_px >= 36, metric_px
        assert in_first_screen(page, ".tokviz-spans.pinned .tok")
        if width == 1280:
            page.get_by_role("tab", name="Charts").click()  # only the open tab is built: the click reruns the results fragment
            tick = page.locator(".js-plotly-plot .xtick text >> visible=true").first
            tick.wait_for()
            tick_px = tick.evaluate("node => parseFloat(node.style.fontSize || getComputedStyle(node).fontSize)")
            assert tick_px >= 14, tick_px
            page.screenshot(path=str(screenshot_dir / f"train_present_charts_{width}x{height}.png"))
    finally:
        context.close()
