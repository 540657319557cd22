"""Real browser: train on the sample, drag the vocab slider, and watch the token spans change."""

from __future__ import annotations

import pytest

from app_driver import act, open_page, slider_value, wait_for_app

pytestmark = pytest.mark.e2e


def _span_count(page) -> int:
    # The last span view on the page is the test text's (the first one is the pipeline preview).
    return page.locator(".tokviz-spans.pinned").last.locator(".tok").count()


def test_train_on_the_sample_and_drag_the_vocab_slider(app_url: str, page, screenshot_dir) -> None:
    page.set_viewport_size({"width": 1400, "height": 4200})  # Streamlit scrolls inside its own container
    open_page(page, f"{app_url}/train")
    page.get_by_role("heading", name="Train a tokenizer").wait_for()
    act(page, lambda: page.locator(".st-key-show_all_lines label").first.click())  # every held-out line, not the first 4
    before = _span_count(page)
    assert before > 50
    assert slider_value(page) == 1000
    page.screenshot(path=str(screenshot_dir / "train_trained.png"))

    # Drag the slider's thumb to the far left: the smallest vocab, so more tokens.
    thumb = page.locator(".st-key-vocab_slider input[type=range]").locator("xpath=../..")  # the visible thumb holds the hidden input
    box = thumb.bounding_box()
    track = page.locator(".st-key-vocab_slider [role=group]").first.bounding_box()
    page.mouse.move(box["x"] + box["width"] / 2, box["y"] + box["height"] / 2)
    page.mouse.down()
    page.mouse.move(track["x"] + 2, box["y"] + box["height"] / 2, steps=12)
    act(page, page.mouse.up)
    after = _span_count(page)
    assert slider_value(page) == 257
    assert after > before
    page.screenshot(path=str(screenshot_dir / "train_slider_left.png"))
    print(f"spans: {before} at the trained size, {after} at 257; screenshots in {screenshot_dir}")


def test_unigram_preset_draws_its_lattice(app_url: str, page, screenshot_dir) -> None:
    page.set_viewport_size({"width": 1400, "height": 4200})
    open_page(page, f"{app_url}/train?preset=t5&vocab=600")
    page.locator(".tokviz-spans.pinned .tok").first.wait_for()
    page.get_by_role("tab", name="Lattice and sampling").click()  # only the open tab is built: the click reruns the results fragment
    page.get_by_text("The 5 best segmentations").wait_for()
    page.locator(".js-plotly-plot >> visible=true").first.wait_for()
    wait_for_app(page)
    page.screenshot(path=str(screenshot_dir / "train_unigram_lattice.png"))
    assert page.locator(".js-plotly-plot").count() >= 1
