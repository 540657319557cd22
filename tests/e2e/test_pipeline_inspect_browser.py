"""Real browser: the Pipeline page draws every stage of its default text; the Inspect page opens
a tokenizer.json trained by HF `tokenizers` and shows HF's tokens. Screenshots of both."""

from __future__ import annotations

import pytest

from app_driver import act, open_page, set_text, span_ids

pytestmark = pytest.mark.e2e

TEXT = "Tokenizers split unbelievably long words!"


def test_pipeline_page_draws_every_stage(app_url: str, page, screenshot_dir) -> None:
    page.set_viewport_size({"width": 1400, "height": 3600})
    open_page(page, f"{app_url}/pipeline")
    page.get_by_role("heading", name="One text through the pipeline").wait_for()
    page.get_by_role("heading", name="6 · Bytes").wait_for()
    assert page.locator(".tokviz-diff .col").count() >= 50  # one column per character of the default text
    assert page.locator(".tokviz-spans").count() == 2  # pre-tokens, then model tokens
    assert page.locator(".tokviz-spans").last.locator(".tok").count() > 20
    page.screenshot(path=str(screenshot_dir / "pipeline.png"))


def test_inspect_page_opens_an_hf_tokenizer_json(app_url: str, page, screenshot_dir, shared_corpus_lines, tmp_path) -> None:
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers

    hf = Tokenizer(models.BPE())
    hf.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    hf.train_from_iterator(shared_corpus_lines[:150], trainers.BpeTrainer(vocab_size=500, initial_alphabet=pre_tokenizers.ByteLevel.alphabet(), show_progress=False))
    hf.decoder = decoders.ByteLevel()
    path = tmp_path / "gpt2-like.json"
    path.write_text(hf.to_str(), encoding="utf-8")

    page.set_viewport_size({"width": 1400, "height": 2800})
    open_page(page, f"{app_url}/inspect")
    page.get_by_role("heading", name="Inspect a tokenizer").wait_for()
    page.screenshot(path=str(screenshot_dir / "inspect_preset.png"))

    # the upload box is always shown; a new upload becomes the chosen tokenizer
    act(page, lambda: page.locator(".st-key-inspect_tokenizer_file input[type=file]").set_input_files(str(path)))
    page.get_by_role("heading", name="Merges").wait_for()
    set_text(page, "inspect_text", TEXT)
    assert [int(value) for value in span_ids(page)] == hf.encode(TEXT).ids
    page.screenshot(path=str(screenshot_dir / "inspect_upload.png"))
