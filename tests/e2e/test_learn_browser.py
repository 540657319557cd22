"""Real browser at a projector's resolution (1280×720): a step of each lesson, screenshotted.

Each test also checks that the step's view ends inside the first screen (no scrolling
through walls of text), by measuring the main block's height in the page.
"""

from __future__ import annotations

import pytest

pytestmark = pytest.mark.e2e

# (lesson label, Next clicks, text the step must show, screenshot name)
STEPS = [
    ("BPE, merge by merge", 3, "Merge #3: 'h' + 'ug' → 'hug'", "learn_bpe.png"),
    ("WordPiece: scores, not counts", 6, "Encoding: greedy longest match", "learn_wordpiece.png"),
    ("Unigram: start big, prune", 1, "Every way to cut 'pug', with its probability", "learn_unigram.png"),
    ("Byte-level BPE", 0, "4 characters, 8 bytes", "learn_byte_level.png"),
    ("Normalization and pre-tokenization", 3, "Side by side: the words each model will see", "learn_normalization.png"),
]


def _settle(page) -> None:
    page.wait_for_timeout(800)
    page.locator("[data-testid=stStatusWidget]").wait_for(state="detached", timeout=30_000)
    page.wait_for_function("document.querySelectorAll('[data-testid=stSkeleton]').length === 0", timeout=30_000)


def _open_lesson(page, app_url: str, label: str) -> None:
    page.set_viewport_size({"width": 1280, "height": 720})
    page.goto(f"{app_url}/learn")
    page.get_by_role("heading", name="Learn how tokenizers are trained").wait_for(timeout=60_000)
    _settle(page)
    page.locator(".st-key-learn_lesson").click()
    page.get_by_role("option", name=label).click()
    _settle(page)


def _bottom_of_content(page) -> float:
    """How far down (in px) the last element of the page's main block ends."""
    return page.evaluate(
        "() => { const blocks = document.querySelectorAll('[data-testid=stMainBlockContainer] [data-testid=stElementContainer]');"
        " let bottom = 0; const top = document.querySelector('[data-testid=stMain]').getBoundingClientRect().top;"
        " for (const el of blocks) { const r = el.getBoundingClientRect(); if (r.height > 0) bottom = Math.max(bottom, r.bottom - top); }"
        " return bottom; }"
    )


@pytest.mark.parametrize(("label", "clicks", "expected", "name"), STEPS, ids=[name for *_, name in STEPS])
def test_a_step_of_each_lesson_fits_a_projector(app_url: str, page, screenshot_dir, label, clicks, expected, name) -> None:
    _open_lesson(page, app_url, label)
    for _ in range(clicks):
        page.locator(".st-key-learn_next button").click()
        _settle(page)
    page.get_by_text(expected, exact=True).wait_for(timeout=30_000)
    page.screenshot(path=str(screenshot_dir / name))
    bottom = _bottom_of_content(page)
    print(f"{name}: content ends at {bottom:.0f} px of 720")
    assert bottom <= 720 + 40, f"{label} step {clicks + 1} runs to {bottom:.0f} px: it does not fit a 1280×720 screen"


def test_predict_the_next_merge_in_the_browser(app_url: str, page, screenshot_dir) -> None:
    _open_lesson(page, app_url, "BPE, merge by merge")
    page.locator(".st-key-learn_predict label").click()
    _settle(page)
    page.locator(".st-key-learn_next button").click()
    _settle(page)
    page.get_by_text("Merge #1: which pair is merged next?").wait_for(timeout=30_000)
    assert page.get_by_text("Pairs now").count() == 0  # the pair counts would give the answer away
    page.screenshot(path=str(screenshot_dir / "learn_predict_hidden.png"))
    page.locator("[class*=st-key-learn_check_] button").click()
    _settle(page)
    page.get_by_text("New vocabulary entry: 'ug'", exact=False).wait_for(timeout=30_000)
    page.screenshot(path=str(screenshot_dir / "learn_predict.png"))


def test_word_counts_edited_in_the_table_retrain_the_lesson(app_url: str, page, screenshot_dir) -> None:
    _open_lesson(page, app_url, "BPE, merge by merge")
    page.get_by_role("button", name="Word counts").click()
    _settle(page)
    grid = page.locator("[class*=st-key-learn_counts_editor_] [data-testid=stDataFrameResizable]")
    box = None
    for _ in range(40):  # the popover slides in: measure the grid once it stands still
        page.wait_for_timeout(150)
        previous, box = box, grid.bounding_box()
        if previous is not None and box == previous:
            break
    # The grid is a canvas: double-click "hug"'s count cell by position (first row, right column).
    page.mouse.click(box["x"] + box["width"] - 30, box["y"] + 35 + 17)
    page.wait_for_timeout(400)
    page.keyboard.type("1")  # typing over a selected cell replaces its value
    page.wait_for_timeout(300)
    page.keyboard.press("Enter")
    _settle(page)
    page.screenshot(path=str(screenshot_dir / "learn_table_edited.png"))
    page.keyboard.press("Escape")
    _settle(page)
    for _ in range(3):  # a click that only closes the popover does not press Next: try again
        page.locator(".st-key-learn_next button").click()
        _settle(page)
        if page.get_by_text("Merge #1:", exact=False).count():
            break
    page.screenshot(path=str(screenshot_dir / "learn_table_next.png"))
    # "hug" 1 instead of 10: 'u'+'g' drops to 11, so 'p'+'u' (17) is merged first, before 'u'+'n' (16).
    page.get_by_text("Merge #1: 'p' + 'u' → 'pu'", exact=True).wait_for(timeout=30_000)
