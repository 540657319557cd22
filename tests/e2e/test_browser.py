"""Real-browser tests: the app served by ``streamlit run`` and rendered by Chromium."""

from __future__ import annotations

import urllib.request

import pytest

from app_driver import go_to, open_page
from tokviz.samples import load_sample

pytestmark = pytest.mark.e2e


def test_health_endpoint_answers_ok(app_url: str) -> None:
    with urllib.request.urlopen(f"{app_url}/_stcore/health", timeout=5) as response:
        assert response.read().decode().strip() == "ok"


def test_home_page_renders_title_and_sample(app_url: str, page, screenshot_dir) -> None:
    page.goto(app_url)
    heading = page.get_by_role("heading", name="tokviz — a tokenizer playground")
    heading.wait_for(timeout=60_000)
    assert page.title() == "tokviz · tokenizer playground"
    page.get_by_text("Built-in sample corpus").wait_for(timeout=30_000)
    # The statistics table shows the sample's real character count.
    page.get_by_text(f"{len(load_sample()):,}").first.wait_for(timeout=30_000)
    path = screenshot_dir / "home.png"
    page.screenshot(path=str(path), full_page=True)
    print(f"screenshot: {path}")
    assert path.stat().st_size > 10_000


def test_deep_link_on_a_fresh_server_runs_through_app_navigation(browser, fresh_app_url, screenshot_dir) -> None:
    """The first visitor of a new server follows a shared link straight to /train."""
    url = fresh_app_url
    context = browser.new_context(viewport={"width": 1400, "height": 900})
    try:
        page = context.new_page()
        open_page(page, f"{url}/train")
        page.get_by_role("heading", name="Train a tokenizer").wait_for()
        # The app's page titles and icons (tokviz.ui.shell.PAGES), not Streamlit's list of file names.
        sidebar = page.get_by_test_id("stSidebar")
        assert [link.split()[-1] for link in sidebar.locator("a").all_inner_texts()][:7] == [
            "Home", "Train", "Compare", "Pipeline", "Inspect", "Audit", "Learn"]
        assert sidebar.get_by_text("app", exact=True).count() == 0
        assert page.title() == "tokviz · tokenizer playground"
        page.screenshot(path=str(screenshot_dir / "deep_link_train.png"))
        # Page switches keep working after a deep link.
        go_to(page, "Learn")
        page.get_by_role("heading", name="Learn how tokenizers are trained").wait_for()
        assert page.url.split("?")[0].endswith("/learn")
    finally:
        context.close()
