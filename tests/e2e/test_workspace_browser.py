"""Real browser: what the user chose survives page switches and reloads, one corpus serves Train and
Compare, and Pipeline and Inspect show the tokenizer trained on Train (issue 17).

Each test opens its own browser context (its own Streamlit session) and waits only for the app's
finished condition (``app_driver.wait_for_app``), never for a fixed time.
"""

from __future__ import annotations

import os

import uuid

import pytest

from app_driver import act, choose, go_to, open_page, selected, set_text, slider_value, span_ids, step_slider, wait_for_app

pytestmark = pytest.mark.e2e


@pytest.fixture()
def session(browser):
    context = browser.new_context(viewport={"width": 1440, "height": 900})
    context.set_default_timeout(int(os.environ.get("TOKVIZ_E2E_TIMEOUT_MS", "240000")))
    try:
        yield context.new_page()
    finally:
        context.close()


def textarea(page, key: str) -> str:
    return page.locator(f".st-key-{key} textarea").first.input_value()


def number(page, key: str) -> str:
    return page.locator(f".st-key-{key} input").first.input_value()


def open_inputs(page) -> None:
    """Unfold the Train page's "Corpus and pipeline" panel (it folds away once trained)."""
    panel = page.locator("[data-testid=stExpander] summary", has_text="Corpus and pipeline").first
    if page.locator(".st-key-corpus_text textarea").first.is_visible():
        return
    panel.click()
    page.locator(".st-key-corpus_text textarea").first.wait_for(state="visible")


def own_corpus(read_shared_corpus) -> str:
    return read_shared_corpus("grimm_tales.txt")[:30_000] + f"\nA line only this test has: {uuid.uuid4().hex}.\n"


def test_train_home_train_keeps_everything(app_url: str, session, read_shared_corpus) -> None:
    page = session
    open_page(page, f"{app_url}/train")
    open_inputs(page)
    corpus = own_corpus(read_shared_corpus)
    set_text(page, "corpus_text", corpus)  # under the live-training limit: it trains as it changes
    open_inputs(page)
    choose(page, "preset", "Custom…")
    open_inputs(page)  # the panel's title names the pipeline: a new title draws it folded
    choose(page, "cfg_model", "WordPiece")
    # Custom fills in WordPiece's unknown token as HF's examples do; the user trims the special tokens.
    assert page.locator(".st-key-cfg_unk_token input").first.input_value() == "[UNK]"
    for key, value in (("cfg_special_tokens", "[UNK] [CLS] [SEP]"), ("target_vocab", "2000")):
        open_inputs(page)
        set_text(page, key, value)
    open_inputs(page)
    # This corpus trains live, so the target of 2,000 is usually trained before the click: the click may
    # start no new run (the panel can be redrawn under it), so wait for a finished page, not a new run.
    page.locator(".st-key-train button").first.click()
    wait_for_app(page)
    page.wait_for_function("() => document.querySelector('.st-key-vocab_slider input[type=range]')?.value === '2000'")
    wait_for_app(page)
    assert slider_value(page) == 2000
    moved = step_slider(page, "vocab_slider", 5)
    assert moved == 1995
    set_text(page, "test_text", "Once upon a time a king kept what he chose.")
    before = {
        "corpus": textarea(page, "corpus_text"), "preset": selected(page, "preset"), "model": selected(page, "cfg_model"),
        "target": number(page, "target_vocab"), "slider": slider_value(page), "text": textarea(page, "test_text"),
        "ids": span_ids(page),
    }
    assert before["corpus"] == corpus and before["target"] == "2000" and len(before["ids"]) > 5

    go_to(page, "Home")
    page.get_by_role("heading", name="tokviz — a tokenizer playground").wait_for()
    go_to(page, "Train")
    after = {
        "corpus": textarea(page, "corpus_text"), "preset": selected(page, "preset"), "model": selected(page, "cfg_model"),
        "target": number(page, "target_vocab"), "slider": slider_value(page), "text": textarea(page, "test_text"),
        "ids": span_ids(page),
    }
    assert after == before
    # The user's corpus, not the sample, is what Compare works on.
    go_to(page, "Compare")
    assert page.get_by_text("Corpus: your pasted text").count() >= 1
    assert textarea(page, "compare_corpus_text") == corpus


def test_four_compare_configurations_and_a_learn_step_survive_page_switches(app_url: str, session) -> None:
    page = session
    open_page(page, f"{app_url}/compare")
    act(page, lambda: page.locator(".st-key-compare_count label", has_text="4").click())
    choose(page, "compare_preset_3", "Custom: model × pre-tokenizer × normalizer")
    assert page.locator(".st-key-compare_preset_3").count() == 1
    go_to(page, "Learn")
    choose(page, "learn_lesson", "Unigram: start big, prune")
    act(page, lambda: page.locator(".st-key-learn_next button").click())
    act(page, lambda: page.locator(".st-key-learn_next button").click())
    assert slider_value(page, "learn_step") == 3
    go_to(page, "Home")
    go_to(page, "Compare")
    assert page.locator("[class*=st-key-compare_preset_]").count() == 4
    assert selected(page, "compare_preset_3") == "Custom: model × pre-tokenizer × normalizer"
    go_to(page, "Learn")
    assert selected(page, "learn_lesson") == "Unigram: start big, prune"
    assert slider_value(page, "learn_step") == 3


def test_a_reload_restores_each_page_but_not_a_pasted_corpus(app_url: str, session) -> None:
    page = session
    open_page(page, f"{app_url}/train")
    open_inputs(page)
    choose(page, "preset", "T5 / SentencePiece-like Unigram")
    open_inputs(page)
    set_text(page, "target_vocab", "600")
    set_text(page, "test_text", "A reload keeps this text.")
    slider = step_slider(page, "vocab_slider", 3)
    page.reload()
    wait_for_app(page)
    assert selected(page, "preset") == "T5 / SentencePiece-like Unigram"
    assert number(page, "target_vocab") == "600"
    assert textarea(page, "test_text") == "A reload keeps this text."
    assert slider_value(page) == slider

    go_to(page, "Compare")
    act(page, lambda: page.locator(".st-key-compare_count label", has_text="2").click())
    page.reload()
    wait_for_app(page)
    assert page.locator("[class*=st-key-compare_preset_]").count() == 2

    go_to(page, "Pipeline")
    set_text(page, "pipeline_text", "Pipelines keep their text too.")
    page.reload()
    wait_for_app(page)
    assert textarea(page, "pipeline_text") == "Pipelines keep their text too."

    go_to(page, "Learn")
    choose(page, "learn_lesson", "WordPiece: scores, not counts")
    page.reload()
    wait_for_app(page)
    assert selected(page, "learn_lesson") == "WordPiece: scores, not counts"

    # A pasted corpus stays out of links, and the reloaded page says so.
    go_to(page, "Train")
    open_inputs(page)
    set_text(page, "corpus_text", "a pasted corpus\n" * 40)
    page.reload()
    wait_for_app(page)
    page.get_by_text("pasted corpus, which links do not carry").first.wait_for()


def test_pipeline_and_inspect_show_the_unigram_tokenizer_trained_on_train(app_url: str, session) -> None:
    page = session
    text = "Tokenizers cut words into pieces."
    open_page(page, f"{app_url}/train?preset=t5&vocab=400")
    set_text(page, "test_text", text)
    size = slider_value(page)
    assert size <= 400
    train_ids = span_ids(page)

    go_to(page, "Pipeline")
    label = f"Trained on the Train page (Unigram, {size:,} tokens)"
    assert selected(page, "pipeline_tokenizer") == label
    set_text(page, "pipeline_text", text)
    model_ids = span_ids(page)  # the model's tokens, before the post-processor appends </s>
    assert model_ids and model_ids == train_ids[: len(model_ids)]

    go_to(page, "Inspect")
    assert selected(page, "inspect_tokenizer") == label
    set_text(page, "inspect_text", text)
    assert span_ids(page) == train_ids
