"""Real browser: train on the sample, drag the vocab slider, and watch the token spans change."""

from __future__ import annotations

import pytest

pytestmark = pytest.mark.e2e


def _span_count(page) -> int:
    # The last span view on the page is the test text's (the first one is the pipeline preview).
    return page.locator(".tokviz-spans").last.locator(".tok").count()


def _wait_for_rerun(page) -> None:
    """Wait until the page has drawn its last element (the history download) and stopped running."""
    page.locator(".st-key-download_history").wait_for(state="attached", timeout=60_000)
    page.wait_for_timeout(1_000)
    page.locator("[data-testid=stStatusWidget]").wait_for(state="detached", timeout=30_000)
    # Widgets show grey skeletons until their code has loaded: screenshots wait for them.
    page.wait_for_function("document.querySelectorAll('[data-testid=stSkeleton]').length === 0", timeout=30_000)


def test_train_on_the_sample_and_drag_the_vocab_slider(app_url: str, page, screenshot_dir) -> None:
    page.set_viewport_size({"width": 1400, "height": 4200})  # Streamlit scrolls inside its own container
    page.goto(f"{app_url}/train")
    page.get_by_role("heading", name="Train a tokenizer").wait_for(timeout=60_000)
    page.get_by_text("Tokens of the test text").wait_for(timeout=60_000)
    page.locator(".tokviz-spans").last.locator(".tok").first.wait_for(timeout=60_000)
    _wait_for_rerun(page)
    before = _span_count(page)
    assert before > 50
    page.screenshot(path=str(screenshot_dir / "train_trained.png"))

    # Drag the slider's thumb to the far left: the smallest vocab, so more tokens.
    value = page.locator(".st-key-vocab_slider input[type=range]")
    assert value.get_attribute("value") == "1000"
    thumb = value.locator("xpath=../..")  # the visible thumb holds the hidden range input
    box = thumb.bounding_box()
    track = page.locator(".st-key-vocab_slider [role=group]").bounding_box()
    page.mouse.move(box["x"] + box["width"] / 2, box["y"] + box["height"] / 2)
    page.mouse.down()
    page.mouse.move(track["x"] + 2, box["y"] + box["height"] / 2, steps=12)
    page.mouse.up()
    _wait_for_rerun(page)
    page.wait_for_function(
        "before => { const views = document.querySelectorAll('.tokviz-spans'); "
        "return views[views.length - 1].querySelectorAll('.tok').length !== before; }",
        arg=before,
        timeout=30_000,
    )
    after = _span_count(page)
    assert after > before
    assert value.get_attribute("value") == "257"
    page.screenshot(path=str(screenshot_dir / "train_slider_left.png"))
    print(f"spans: {before} at the trained size, {after} at 257; screenshots in {screenshot_dir}")


def test_unigram_preset_draws_its_lattice(app_url: str, page, screenshot_dir) -> None:
    page.set_viewport_size({"width": 1400, "height": 4200})
    page.goto(f"{app_url}/train?preset=t5&vocab=600")
    page.get_by_text("Tokens of the test text").wait_for(timeout=60_000)
    page.get_by_role("tab", name="Unigram: lattice and sampling").click()
    _wait_for_rerun(page)
    page.get_by_text("The 5 best segmentations").wait_for(timeout=30_000)
    page.wait_for_timeout(2_000)  # plotly draws after the tab becomes visible
    page.screenshot(path=str(screenshot_dir / "train_unigram_lattice.png"))
    assert page.locator(".js-plotly-plot").count() >= 1
