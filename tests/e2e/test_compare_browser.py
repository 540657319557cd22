"""Real browser: the Compare page trains three presets on the sample and draws their segmentations,
differences outlined, the metrics tables and the curves chart."""

from __future__ import annotations

import pytest

from app_driver import act, open_page, set_text

pytestmark = pytest.mark.e2e


def test_compare_three_presets_on_the_sample(app_url: str, page, screenshot_dir) -> None:
    page.set_viewport_size({"width": 1400, "height": 3600})  # Streamlit scrolls inside its own container
    open_page(page, f"{app_url}/compare")
    views = page.locator(".tokviz-spans")
    assert views.count() == 3
    assert all(views.nth(index).locator(".tok").count() > 20 for index in range(3))
    outlined = page.locator(".tokviz-spans .tok.diff")
    assert outlined.count() > 0
    # The outline is drawn (dashed), not just a class name.
    assert outlined.first.evaluate("node => getComputedStyle(node).outlineStyle") == "dashed"
    page.locator(".st-key-compare_curves .js-plotly-plot").wait_for()
    page.screenshot(path=str(screenshot_dir / "compare_three_presets.png"))
    print(f"{outlined.count()} outlined tokens; screenshot in {screenshot_dir}")


def test_a_large_corpus_waits_for_train_all(app_url: str, page, read_shared_corpus) -> None:
    page.set_viewport_size({"width": 1400, "height": 3000})
    open_page(page, f"{app_url}/compare")
    page.locator("[data-testid=stExpander] summary", has_text="Corpus (shared with the Train page)").first.click()
    set_text(page, "compare_corpus_text", read_shared_corpus("grimm_tales.txt")[:120_000])
    page.get_by_text("This corpus is large").wait_for()
    assert page.locator(".tokviz-spans").count() == 0
    act(page, lambda: page.locator(".st-key-compare_train button").click())
    assert page.locator(".tokviz-spans").count() == 3
    # Another rerun without a click keeps the comparison: the trainings come from the cache.
    set_text(page, "compare_text", "Once upon a time there was a king")
    assert page.locator(".tokviz-spans").count() == 3
    assert "king" in page.locator(".tokviz-spans").first.text_content()


@pytest.mark.parametrize(("width", "height"), [(1280, 720), (1440, 900)])
def test_eight_tokenizers_keep_their_names_whole(app_url: str, browser, screenshot_dir, width: int, height: int) -> None:
    """Four trained configurations and four catalog tokenizers: the tables wrap rather than scroll or cut a name,
    and every download button shows its tokenizer's whole name."""
    from urllib.parse import urlencode

    context = browser.new_context(viewport={"width": width, "height": height})
    page = context.new_page()
    try:
        query = urlencode({"cmp": "4", "c0": "gpt2", "c1": "bert", "c2": "t5", "c3": "sp_bpe",
                           "ccat": "Llama 3,Mistral v1,Mistral v3,Tekken (Mistral NeMo)"})
        open_page(page, f"{app_url}/compare?{query}")
        assert page.locator(".tokviz-spans").count() == 8
        tables = page.locator("[data-testid=stTable]")
        assert tables.count() >= 3  # compression, the literature's metrics, vocabulary overlap
        for index in range(tables.count()):
            cut = tables.nth(index).evaluate("t => [...t.querySelectorAll('*')].filter(n => n.scrollWidth > n.clientWidth + 1).length")
            assert cut == 0, f"table {index} scrolls or cuts a cell"
        assert "4 · SentencePiece BPE (Llama-like, byte fallback) · 1,000" in tables.first.inner_text()
        names = ["1 · GPT-2-like byte-level BPE · 1,000", "4 · SentencePiece BPE (Llama-like, byte fallback) · 1,000", "Tekken (Mistral NeMo)"]
        for name in names:  # the download button named by each tokenizer shows the whole name
            button = page.locator("[data-testid=stDownloadButton] button", has_text=name).first
            assert button.evaluate("b => [...b.querySelectorAll('*')].every(n => n.scrollWidth <= n.clientWidth + 1)"), name
        page.locator("[data-testid=stTable]").nth(1).scroll_into_view_if_needed()
        page.screenshot(path=str(screenshot_dir / f"compare_eight_{width}.png"))
    finally:
        context.close()
