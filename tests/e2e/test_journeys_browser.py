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


BOTTOM_JS = """() => { let bottom = 0;
  for (const el of document.querySelectorAll('[data-testid=stMainBlockContainer] [data-testid=stElementContainer]')) {
    const r = el.getBoundingClientRect(); if (r.height > 0) bottom = Math.max(bottom, r.bottom); }
  return bottom; }"""


@pytest.mark.parametrize(("width", "height"), [(1280, 720), (1440, 900)])
def test_learn_in_presentation_mode_fits_the_projector(app_url: str, browser, screenshot_dir, width: int, height: int) -> None:
    """Title and Copy link clear of the header, '◀ Back' whole, table text enlarged, every BPE step inside the screen."""
    context, page = new_session(browser, width, height)
    try:
        open_page(page, f"{app_url}/learn?present=true&lesson=bpe")
        header = page.locator("header[data-testid=stHeader]").first.bounding_box()
        assert page.locator("h1").first.bounding_box()["y"] >= header["y"] + header["height"]
        link = page.get_by_role("button", name="Copy link").first
        link.click()  # clickable: not under the header
        page.locator("[data-testid=stPopoverBody] code", has_text="/learn?").first.wait_for(state="visible")
        page.keyboard.press("Escape")
        back = page.locator(".st-key-learn_back button").first
        assert back.evaluate("b => b.scrollWidth <= b.clientWidth + 1") and "Back" in back.inner_text()
        step = 1
        while True:
            assert page.evaluate(BOTTOM_JS) <= height, f"BPE step {step} runs past {height} px"
            if step == 2:
                cell = page.locator("[data-testid=stTable] td").first
                assert float(cell.evaluate("c => parseFloat(getComputedStyle(c).fontSize)")) >= 18  # 1.15rem, not the grid's 14 px
                page.screenshot(path=str(screenshot_dir / f"journey_learn_present_{width}.png"))
            forward = page.locator(".st-key-learn_next button").first
            if forward.is_disabled():
                break
            act(page, forward.click)
            step += 1
    finally:
        context.close()


@pytest.mark.parametrize(("width", "height"), [(1280, 720), (1440, 900)])
def test_the_token_card_opens_next_to_the_clicked_token_inside_the_screen(app_url: str, browser, screenshot_dir, width: int, height: int) -> None:
    context, page = new_session(browser, width, height)
    try:
        open_page(page, f"{app_url}/train")
        act(page, lambda: page.locator(".st-key-show_all_lines label").first.click())  # many lines: a card docked at the end was off screen
        tokens = page.locator(".tokviz-spans summary.tok")
        token = tokens.nth(min(tokens.count() - 1, 60))
        token.scroll_into_view_if_needed()
        page.mouse.wheel(0, 0)
        token.click()
        card = page.locator(".tokviz-spans details[open] .card").first
        card.wait_for(state="visible")
        at, box = token.bounding_box(), card.bounding_box()
        below = 0 <= box["y"] - (at["y"] + at["height"]) <= 16
        above = 0 <= at["y"] - (box["y"] + box["height"]) <= 16  # flipped: the token is on the screen's last line
        assert below or above, (at, box)
        assert box["x"] <= at["x"] + at["width"] and box["x"] + box["width"] >= at["x"], (at, box)  # beside it, not at the view's end
        assert box["y"] + box["height"] <= height and box["x"] >= 0 and box["x"] + box["width"] <= width, box
        page.screenshot(path=str(screenshot_dir / f"journey_token_card_{width}.png"))
    finally:
        context.close()


def _open_inputs(page) -> None:
    """Unfold Train's "Corpus and pipeline" panel (it folds away once trained)."""
    if not page.locator(".st-key-preset").first.is_visible():
        page.locator("[data-testid=stExpander] summary", has_text="Corpus and pipeline").first.click()
        page.locator(".st-key-preset").first.wait_for(state="visible")


def test_custom_unigram_with_the_defaults_trains_on_a_first_try(app_url: str, browser, screenshot_dir) -> None:
    from app_driver import choose

    context, page = new_session(browser)
    try:
        open_page(page, f"{app_url}/train")
        _open_inputs(page)
        choose(page, "preset", "Custom…")
        _open_inputs(page)
        choose(page, "cfg_model", "Unigram")
        _open_inputs(page)
        assert page.get_by_text("Filled in as HF's examples do for Unigram", exact=False).first.is_visible()
        assert page.locator(".st-key-cfg_unk_token input").first.input_value() == "<unk>"
        assert page.locator("[data-testid=stAlertContentError]").count() == 0  # no "unk_id is missing", no stacked messages
        assert page.get_by_text("Trained Unigram in", exact=False).first.is_visible()
        page.evaluate("window.scrollTo(0, 0)")
        button = page.locator(".st-key-train button").first.bounding_box()
        assert button["y"] + button["height"] <= 720  # the form runs across the page under the corpus: Train in the first screen
        page.screenshot(path=str(screenshot_dir / "journey_custom_unigram.png"))
    finally:
        context.close()


def test_compare_measures_an_uploaded_file_without_its_truncation(app_url: str, browser, tmp_path, screenshot_dir) -> None:
    import tokenizers as hf

    from tokviz.corpus import held_out_split
    from tokviz.samples import load_sample

    peer = hf.Tokenizer(hf.models.WordLevel({"[UNK]": 0, "the": 1, "a": 2}, unk_token="[UNK]"))
    peer.pre_tokenizer = hf.pre_tokenizers.Whitespace()
    text = "\n".join(held_out_split(load_sample()).test_lines[:3])  # the page's default text to tokenize
    whole = len(peer.encode(text).ids)
    peer.enable_truncation(max_length=8)
    path = tmp_path / "short.json"
    path.write_text(peer.to_str(), encoding="utf-8")
    context, page = new_session(browser, 1440, 900)
    try:
        open_page(page, f"{app_url}/compare?cmp=2")
        page.locator("[data-testid=stExpander] summary", has_text="Pretrained tokenizers from files").first.click()
        upload = page.locator(".st-key-compare_files input[type=file]").first
        act(page, lambda: upload.set_input_files(str(path)))
        assert page.get_by_text(f"short.json — {whole:,} tokens", exact=False).first.is_visible()  # not 8
        assert page.get_by_text("short.json (truncation to 8 tokens)", exact=False).first.is_visible()
        page.screenshot(path=str(screenshot_dir / "journey_compare_truncation.png"), full_page=True)
    finally:
        context.close()


def test_the_compare_download_right_after_a_change_holds_the_new_choice(app_url: str, browser, tmp_path) -> None:
    import io
    import json
    import zipfile

    from app_driver import choose

    context, page = new_session(browser, 1440, 900)
    try:
        open_page(page, f"{app_url}/compare?cmp=2")
        choose(page, "compare_preset_1", "Character BPE with </w> (original paper)")
        button = page.locator("[data-testid=stDownloadButton] button", has_text="Character BPE").first
        with page.expect_download() as download_info:
            button.click()
        download = download_info.value
        assert download.suggested_filename == "2-character-bpe-with-w-original-paper-1000-transformers.zip"
        data = zipfile.ZipFile(io.BytesIO(open(download.path(), "rb").read()))
        model = json.loads(data.read("tokenizer.json"))["model"]
        assert model["type"] == "BPE" and model["end_of_word_suffix"] == "</w>"  # the new choice, not BERT's WordPiece
    finally:
        context.close()


def test_a_5_mb_paste_answers_and_leaves_the_text_box(app_url: str, browser, benchmark_corpus_text, screenshot_dir) -> None:
    """Pasted as a user pastes (the clipboard and Ctrl+V), applied with Ctrl+Enter: the run finishes, the page shows the
    5,000,000 characters, and the text box no longer holds them (with it holding them, every change of the page cost
    the browser 9-12 s, measured). No time is asserted: the wait is for the app's finished condition."""
    context = browser.new_context(viewport={"width": 1280, "height": 720}, permissions=["clipboard-read", "clipboard-write"])
    context.set_default_timeout(int(os.environ.get("TOKVIZ_E2E_TIMEOUT_MS", "240000")))
    page = context.new_page()
    try:
        open_page(page, f"{app_url}/train")
        _open_inputs(page)
        text = benchmark_corpus_text[:5_000_000]
        page.evaluate("text => navigator.clipboard.writeText(text)", text)
        box = page.locator(".st-key-corpus_text textarea").first
        box.focus()
        page.keyboard.press("Control+A")
        page.keyboard.press("Control+V")
        page.wait_for_function("n => document.querySelector('.st-key-corpus_text textarea').value.length === n", arg=len(text), polling=200)
        act(page, lambda: box.press("Control+Enter"))
        assert page.locator(".st-key-corpus_text textarea").count() == 0
        _open_inputs(page)
        page.get_by_text("Using your pasted text (5,000,000 characters)").first.wait_for()
        assert page.locator("[data-testid=stMetricValue]", has_text="5,000,000").count() == 1
        page.screenshot(path=str(screenshot_dir / "journey_5mb_paste.png"))
    finally:
        context.close()
