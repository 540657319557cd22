"""Real-browser tests: the app served by ``streamlit run`` and rendered by Chromium."""

from __future__ import annotations

import urllib.request

import pytest

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
