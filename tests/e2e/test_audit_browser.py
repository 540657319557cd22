"""Real browser: the Audit page audits the GPT-2-like preset, a clicked row of a findings table opens its token in
Inspect (the merge-tree box holds it), and the page fits 1280x720 and 1440x900, also in presentation mode. Screenshots."""

from __future__ import annotations

import pytest

from app_driver import act, open_page

pytestmark = pytest.mark.e2e


def audit_done(page) -> None:
    """The audit is on the page: its report's last element is drawn (the run itself was awaited by open_page/act)."""
    page.locator(".tokviz-audit-done").first.wait_for(state="attached")


def test_audit_page_and_a_token_opened_in_inspect(app_url: str, page, screenshot_dir) -> None:
    page.set_viewport_size({"width": 1280, "height": 720})
    open_page(page, f"{app_url}/audit?atexts=none")
    audit_done(page)
    page.get_by_role("heading", name="Audit a vocabulary").wait_for()
    assert page.locator('[data-testid="stMetricValue"]').first.inner_text() == "1,000"
    page.screenshot(path=str(screenshot_dir / "audit_1280x720.png"))

    tab = page.get_by_role("tab", name="Unreachable at all (13)")
    tab.click()  # tabs switch in the browser: no run to wait for
    grid = page.locator(".st-key-audit_table_unreachable")
    grid.scroll_into_view_if_needed()
    box = grid.bounding_box()
    # the row-selection column sits at the grid's left edge; the first data row under the 35 px header
    act(page, lambda: page.mouse.click(box["x"] + 18, box["y"] + 35 + 17))
    page.get_by_text("Selected token:").wait_for()
    act(page, page.get_by_role("button", name="Open in Inspect").click)
    page.get_by_role("heading", name="Inspect a tokenizer").wait_for()
    assert page.locator(".st-key-merge_tree_token input").first.input_value() == "À"  # byte C0, in no UTF-8 text


@pytest.mark.parametrize("width, height, present", [(1440, 900, False), (1280, 720, True)])
def test_audit_page_fits(app_url: str, page, screenshot_dir, width: int, height: int, present: bool) -> None:
    page.set_viewport_size({"width": width, "height": height})
    open_page(page, f"{app_url}/audit" + ("?present=true" if present else ""))
    audit_done(page)
    main = page.locator('[data-testid="stMainBlockContainer"]').first
    assert main.evaluate("node => node.scrollWidth <= node.clientWidth + 1")  # nothing wider than the window
    page.screenshot(path=str(screenshot_dir / f"audit_{width}x{height}{'_present' if present else ''}.png"))
