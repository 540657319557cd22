"""AppTest: "Open a training" on Train — a history.json made elsewhere (the CLI, another server) becomes the
page's training: its tokenizer on the slider at every size, until Train trains this page's corpus again."""

from __future__ import annotations

import re
import sys
from pathlib import Path

import pytest

from tokviz import history_io
from tokviz.pipeline_config import tokenizer_with_model
from tokviz.presets import PRESETS
from tokviz.training import run_training

from tests.test_page_train import assert_clean, open_train, span_html  # noqa: E402


@pytest.fixture(scope="module")
def shakespeare(shared_corpora_dir: Path) -> tuple[object, object, bytes]:
    """A GPT-2-like BPE trained on Shakespeare (not the page's sample), saved as the CLI saves it."""
    lines = (shared_corpora_dir / "tinyshakespeare.txt").read_text(encoding="utf-8").splitlines()[:4000]
    config = PRESETS["gpt2"].build()
    history = run_training(config, 600, lines)
    return config, history, history_io.dumps(history, config).encode("utf-8")


def ids_on_page(app) -> list[int]:
    if not app.toggle(key="show_ids").value or not app.toggle(key="show_all_lines").value:
        app.toggle(key="show_ids").set_value(True)
        app.toggle(key="show_all_lines").set_value(True).run()
    return [int(found) for found in re.findall(r"<summary[^>]*>(\d+)</summary>", span_html(app))]


def captions(app) -> list[str]:
    return [re.sub(r"\\(.)", r"\1", caption.value) for caption in app.caption]  # Markdown-escaped on the page


def test_an_opened_training_is_the_page_s_tokenizer_at_every_size_until_train_is_pressed(shakespeare) -> None:
    config, history, data = shakespeare
    app = open_train()
    assert any(caption.startswith("Trained ") for caption in captions(app))  # the sample, trained live
    app.file_uploader(key="train_history_upload").set_value(("shakespeare.json", data, "application/json")).run()
    assert_clean(app)
    assert not app.error, [error.value for error in app.error]
    assert any(caption.startswith("Opened from shakespeare.json: a training made elsewhere") for caption in captions(app))
    slider = app.slider(key="vocab_slider")
    assert (slider.min, slider.max, slider.value) == (257, 600, 600)
    text = app.text_area(key="test_text").value
    assert text  # the page's own held-out lines
    assert ids_on_page(app) == tokenizer_with_model(config, history.model).encode(text).ids
    app.slider(key="vocab_slider").set_value(300).run()
    assert_clean(app)
    assert ids_on_page(app) == tokenizer_with_model(config, history.model_at(300)).encode(text).ids
    # Its merges are Shakespeare's: the first merge the page lists is the history's first.
    first = history.merges[0]
    assert any(f"{first.left!r} + {first.right!r}" in str(element.value) for element in [*app.text, *app.markdown, *app.caption])

    app.button(key="train").click().run()  # back to this page's corpus
    assert_clean(app)
    assert not any(caption.startswith("Opened from") for caption in captions(app))
    assert any(caption.startswith("Trained ") for caption in captions(app))


def test_a_bad_history_file_is_named_and_the_page_keeps_its_training(shakespeare) -> None:
    app = open_train()
    before = app.slider(key="vocab_slider").max
    app.file_uploader(key="train_history_upload").set_value(("notes.json", b'{"format": "something else"}', "application/json")).run()
    assert_clean(app)
    errors = [re.sub(r"\\(.)", r"\1", error.value) for error in app.error]  # Markdown-escaped on the page
    assert any(error.startswith('notes.json: This file is not a tokviz training history') for error in errors), errors
    assert app.slider(key="vocab_slider").max == before
    assert not any(caption.startswith("Opened from") for caption in captions(app))


def test_the_export_tab_writes_a_history_json_that_opens_on_train_again() -> None:
    from tokviz.inspect import open_training_for_train
    from tokviz.ui.train_views import history_json

    config = PRESETS["bert"].build()
    history = run_training(config, 300, ["Hugging Face tokenizers are fast", "hugging faces and tokens"] * 20)
    opened = open_training_for_train(history_json(history, config).encode("utf-8"), "history.json")
    assert opened.config == config and opened.vocab_size == len(history.model.get_vocab())
    assert opened.history.model.get_vocab() == history.model.get_vocab()


def _degenerate_files() -> dict[str, bytes]:
    """Real histories whose size range is one size ((257, 257, 257): a BPE asked for less than its alphabet),
    and edited ones (max_vocab_size 10**30; min = max)."""
    import json

    config = PRESETS["gpt2"].build()
    lines = ["low lower lowest", "newer newest"] * 5
    one_size = history_io.dumps(run_training(config, 100, lines), config)
    document = json.loads(history_io.dumps(run_training(config, 270, lines), config))
    huge = dict(document, history=dict(document["history"], max_vocab_size=10**30))
    pinned = dict(document, history=dict(document["history"], min_vocab_size=270, max_vocab_size=270))
    return {"one_size.json": one_size.encode(), "huge.json": json.dumps(huge).encode(), "pinned.json": json.dumps(pinned).encode()}


@pytest.mark.parametrize("name", ["one_size.json", "huge.json", "pinned.json"])
def test_degenerate_size_ranges_draw_a_fixed_view_or_a_bounded_slider(name) -> None:
    from tokviz.limits import MAX_TOKENIZER_VOCAB

    data = _degenerate_files()[name]
    app = open_train()
    app.file_uploader(key="train_history_upload").set_value((name, data, "application/json")).run()
    assert_clean(app)
    assert not app.error, [error.value for error in app.error]
    if name == "huge.json":
        slider = app.slider(key="vocab_slider")
        assert (slider.min, slider.max) == (257, MAX_TOKENIZER_VOCAB)
    else:
        assert not [slider for slider in app.slider if slider.key == "vocab_slider"]
        assert any("nothing to slide" in info.value for info in app.info)
    assert span_html(app)  # the tokenizer at its one size is drawn


def test_a_unigram_export_opens_on_train() -> None:
    """Train's own Export with the T5-like preset was refused ("its history is a unigram training")."""
    from tokviz.ui.train_views import history_json

    config = PRESETS["t5"].build()
    history = run_training(config, 60, ["low lower lowest", "newer newest"] * 5)
    app = open_train()
    app.file_uploader(key="train_history_upload").set_value(("t5.json", history_json(history, config).encode(), "application/json")).run()
    assert_clean(app)
    assert not app.error, [error.value for error in app.error]
    assert any(caption.startswith("Opened from t5.json") for caption in captions(app))
    assert app.slider(key="vocab_slider").value == history.model.get_vocab_size()
