"""Real browser: the Audit page audits the GPT-2-like preset, a clicked row of a findings table opens its token in
Inspect (the merge-tree box holds it) or its witness on Train; an upload keeps the threshold and the session's training
keeps its slider; the page fits 1280x720 and 1440x900, also in presentation mode. Screenshots."""

from __future__ import annotations

import re

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


def test_an_upload_keeps_the_threshold_and_the_session_training_keeps_its_slider(app_url: str, page, tmp_path) -> None:
    """Widgets drawn again after a run without them keep the workspace's value (the front end restarts them from their default)."""
    from app_driver import choose, go_to, selected, slider_value, step_slider

    from tokviz import Tokenizer, models, pre_tokenizers

    vocab = ["a", "b", "c", "bc", "ab", "abc"]
    tokenizer = Tokenizer(models.BPE({t: i for i, t in enumerate(vocab)}, [("b", "c"), ("a", "b"), ("ab", "c")]))
    tokenizer.pre_tokenizer = pre_tokenizers.Whitespace()
    path = tmp_path / "toy.json"
    path.write_text(tokenizer.to_str(), encoding="utf-8")

    page.set_viewport_size({"width": 1400, "height": 2400})
    open_page(page, f"{app_url}/audit?atexts=multilingual")
    audit_done(page)
    # the upload box is always there; a new upload becomes the chosen tokenizer
    act(page, lambda: page.locator(".st-key-audit_tokenizer_file input[type=file]").set_input_files(str(path)))
    audit_done(page)
    assert "0.05" in page.locator(".st-key-audit_threshold").inner_text().split()
    assert page.locator('[data-testid="stMetricValue"]').nth(1).inner_text() == "1"  # 'abc': merge order

    # the session's training (the Train page trains the sample live), then its slider on Audit; the session survives
    # only sidebar navigation, not a new page load
    open_page(page, f"{app_url}/train")
    page.get_by_role("heading", name="Train a tokenizer").wait_for()
    go_to(page, "Audit")
    audit_done(page)
    session_label = selected(page, "audit_tokenizer")
    assert session_label.startswith("Trained on the Train page")
    assert slider_value(page, "audit_vocab") == 1000
    smaller = step_slider(page, "audit_vocab", 3)
    audit_done(page)
    assert smaller < 1000
    assert page.locator('[data-testid="stMetricValue"]').first.inner_text() == f"{smaller:,}"
    # away to a preset (the slider goes) and back: the slider comes back where it was
    page.locator(".st-key-audit_tokenizer button[aria-haspopup=listbox]").first.click()
    act(page, page.get_by_role("option").filter(has_text="BERT-like").first.click)  # its label names its size once trained
    audit_done(page)
    choose(page, "audit_tokenizer", session_label)
    audit_done(page)
    assert slider_value(page, "audit_vocab") == smaller
    # a reachable token's witness, seen on Train at this size
    page.get_by_role("tab", name=re.compile(r"^Reachable \(")).click()  # tabs switch in the browser: no run
    grid = page.locator(".st-key-audit_table_reachable")
    grid.scroll_into_view_if_needed()
    box = grid.bounding_box()
    act(page, lambda: page.mouse.click(box["x"] + 18, box["y"] + 35 + 17))
    selected_line = page.get_by_text("Selected token:").inner_text()
    witness = selected_line.split(" · witness: ", 1)[1]
    act(page, page.get_by_role("button", name="See it on Train").click)
    page.get_by_role("heading", name="Train a tokenizer").wait_for()
    assert page.locator(".st-key-test_text textarea").first.input_value() == witness
    assert slider_value(page) == smaller
