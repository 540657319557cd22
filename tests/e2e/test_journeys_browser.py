"""Real browser journeys where two answers to one question used to differ: the link, unknown tokens, measuring.

Each test opens its own browser context (its own Streamlit session) at 1280x720 or 1440x900 and
waits only for the app's finished condition (``app_driver.wait_for_app``), never for a fixed time.
"""

from __future__ import annotations

import os
from urllib.parse import parse_qs, urlsplit

import pytest

from app_driver import act, open_page, set_text, slider_value, step_slider

pytestmark = pytest.mark.e2e


def new_session(browser, width: int = 1280, height: int = 720):
    context = browser.new_context(viewport={"width": width, "height": height})
    context.set_default_timeout(int(os.environ.get("TOKVIZ_E2E_TIMEOUT_MS", "240000")))
    return context, context.new_page()


def copied_link(page) -> str:
    """Open the Copy link popover and read the link it offers."""
    page.get_by_role("button", name="Copy link").first.click()
    code = page.locator("[data-testid=stPopoverBody] code", has_text="/train?").first
    code.wait_for(state="visible")
    link = code.inner_text().strip()
    page.keyboard.press("Escape")
    return link


def test_copy_link_after_moving_the_slider_opens_the_same_tokenizer_in_a_fresh_context(app_url: str, browser, screenshot_dir) -> None:
    context, page = new_session(browser)
    try:
        open_page(page, f"{app_url}/train")
        size = step_slider(page, "vocab_slider", 20)  # the slider's own fragment reruns, not the page
        assert size < 1000
        set_text(page, "test_text", "a teacher's text, typed")
        link = copied_link(page)
        query = parse_qs(urlsplit(link).query)
        assert query["size"] == [str(size)] and query["text"] == ["a teacher's text, typed"]
        address = parse_qs(urlsplit(page.url).query)
        assert address == query  # Copy link and the address bar: one link
        page.screenshot(path=str(screenshot_dir / "journey_copy_link.png"))
    finally:
        context.close()
    context, page = new_session(browser, 1440, 900)
    try:
        open_page(page, link)
        assert slider_value(page) == size
        assert page.locator(".st-key-test_text textarea").first.input_value() == "a teacher's text, typed"
        open_page(page, page.url)  # a reload
        assert slider_value(page) == size  # and a reload agrees
    finally:
        context.close()
