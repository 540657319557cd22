"""Real browser: from Train, one click compares the session's tokenizer with Llama 3 and Tekken on the
session's corpus; Inspect shows a catalog entry chosen in its select box. Screenshots at 1280x720 and 1440x900."""

from __future__ import annotations

import pytest

from app_driver import act, choose, open_page, selected

pytestmark = pytest.mark.e2e

pytest.importorskip("llama_models")
pytest.importorskip("mistral_common")


def test_train_to_compare_with_llama3_and_tekken_in_one_click(app_url: str, page, screenshot_dir) -> None:
    page.set_viewport_size({"width": 1280, "height": 720})
    open_page(page, f"{app_url}/train")
    button = page.locator(".st-key-train_compare_catalog button").first
    assert button.text_content().strip().endswith("Compare with Llama 3 and Tekken")
    act(page, button.click)  # click 1 (the page switches to Compare and trains its configurations from the cache)
    assert page.url.endswith("/compare") or "/compare?" in page.url
    names = page.locator("[data-testid=stMarkdownContainer] strong").all_text_contents()
    assert "This session's tokenizer" in names and "Llama 3" in names and "Tekken (Mistral NeMo)" in names
    assert page.locator(".tokviz-spans").count() == 6  # three configurations, the session's, Llama 3, Tekken
    page.locator(".st-key-compare_catalog").scroll_into_view_if_needed()  # the picker, open with the three chosen
    page.screenshot(path=str(screenshot_dir / "catalog_compare_1280x720.png"))
    page.set_viewport_size({"width": 1440, "height": 900})
    page.locator(".tokviz-spans").nth(4).scroll_into_view_if_needed()
    page.screenshot(path=str(screenshot_dir / "catalog_compare_1440x900.png"))
    # The choice is kept in the link, by name.
    assert "ccat=session%2CLlama+3%2CTekken+%28Mistral+NeMo%29" in page.url or "ccat=session,Llama" in page.url


def test_inspect_a_catalog_entry(app_url: str, page, screenshot_dir) -> None:
    page.set_viewport_size({"width": 1440, "height": 900})
    open_page(page, f"{app_url}/inspect")
    choose(page, "inspect_tokenizer", "Llama · Llama 3 (llama-models 0.3.0)")
    assert selected(page, "inspect_tokenizer").startswith("Llama · Llama 3")
    page.get_by_text("128,256 of 128,256 tokens").first.wait_for()
    assert "itok=catalog%3ALlama+3" in page.url or "itok=catalog:Llama" in page.url
    page.screenshot(path=str(screenshot_dir / "catalog_inspect_1440x900.png"))


def test_download_kinds_on_inspect_name_what_is_lost(app_url: str, page, screenshot_dir) -> None:
    page.set_viewport_size({"width": 1280, "height": 720})
    open_page(page, f"{app_url}/inspect?itok=gpt2")
    choose(page, "inspect_export_format", "tiktoken ranks (.tiktoken + .tiktoken.json sidecar: pattern, special tokens)")
    lost = page.get_by_text("What this file kind does not keep").first
    lost.wait_for()
    assert page.locator(".st-key-inspect_export_format").is_visible()
    assert "tiktoken merges any two adjacent pieces" in page.locator("[data-testid=stMarkdownContainer]", has=lost).first.text_content()
    lost.scroll_into_view_if_needed()
    page.screenshot(path=str(screenshot_dir / "downloads_inspect_1280x720.png"))
    choose(page, "inspect_export_format", "BERT vocab.txt (WordPiece)")
    page.get_by_text("A vocab.txt holds a WordPiece vocabulary").first.wait_for()
