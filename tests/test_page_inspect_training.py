"""AppTest: "Open a training" on Inspect — a history.json uploaded, the tokenizer at any size, the training's views."""

from __future__ import annotations

from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from tests.app_pages import open_page
from tokviz import history_io
from tokviz.inspect import open_training, training_size_range, training_views
from tokviz.presets import PRESETS
from tokviz.samples import load_sample
from tokviz.training import run_training

LINES = load_sample().splitlines()


@pytest.fixture(scope="module")
def bpe_file() -> bytes:
    config = PRESETS["gpt2"].build()
    return history_io.dumps(run_training(config, 400, LINES), config).encode("utf-8")


@pytest.fixture(scope="module")
def unigram_file() -> bytes:
    config = PRESETS["t5"].build()
    return history_io.dumps(run_training(config, 600, LINES), config).encode("utf-8")


def open_a_training() -> AppTest:
    """Inspect with "Open a training" chosen."""
    return open_page("pages/inspect.py").radio(key="inspect_source").set_value("a training").run()


def upload(app: AppTest, name: str, data: bytes) -> AppTest:
    app.file_uploader(key="inspect_training_file").set_value((name, data, "application/json")).run()
    return app


def test_core_open_training_gives_the_tokenizer_at_every_size(bpe_file):
    opened = open_training(bpe_file)
    low, high, trained = training_size_range(opened.history)
    assert (low, high, trained) == (257, 400, 400)
    assert opened.tokenizer_at(low).encode("hello world").tokens == ["h", "e", "l", "l", "o", "Ġ", "w", "o", "r", "l", "d"]
    assert len(opened.tokenizer_at(300).encode("hello world").tokens) < 11
    titles = [view.title for view in training_views(opened.history, 300)]
    assert titles == ["Merges", "Merge scores", "Vocab growth"]


def test_open_training_refuses_big_files_before_reading():
    from tokviz.errors import LimitExceededError

    with pytest.raises(LimitExceededError, match="opens training histories up to 10 bytes"):
        open_training(b"x" * 11, max_bytes=10)


def test_inspect_opens_a_bpe_training_and_moves_through_its_sizes(bpe_file):
    app = upload(open_a_training(), "history.json", bpe_file)
    assert not app.exception, [str(error.value) for error in app.exception]
    slider = app.slider(key="inspect_training_vocab")
    assert (slider.min, slider.max, slider.value) == (257, 400, 400)
    assert [tab.label for tab in app.tabs] == ["Merges", "Merge scores", "Vocab growth"]
    metrics = {metric.label: metric.value for metric in app.metric}
    assert metrics["algorithm"] == "BPE" and metrics["trained size"] == "400"
    assert any("Merges" == header.value for header in app.header)  # Inspect's own BPE merges section, on the opened model
    slider.set_value(300).run()
    assert not app.exception
    assert app.metric[0].value == "BPE"
    assert any("300" in str(caption.value) for caption in app.caption)


def test_inspect_opens_a_unigram_training_with_its_em_views(unigram_file):
    app = upload(open_a_training(), "t5.json", unigram_file)
    assert not app.exception, [str(error.value) for error in app.exception]
    assert [tab.label for tab in app.tabs] == ["EM steps", "EM objective", "Pruning rounds", "Removed pieces"]
    app.slider(key="inspect_training_vocab").set_value(app.slider(key="inspect_training_vocab").min).run()
    assert not app.exception


def test_a_file_that_is_not_a_training_is_named_with_its_reason_and_no_markdown():
    app = upload(open_a_training(), "[x](//e.co) **bold**.json", b'{"format": "nope"}')
    assert not app.exception
    errors = [error.value for error in app.error]
    assert len(errors) == 1
    assert "is not a tokviz training history" in errors[0]
    assert errors[0].startswith(r"\[x\]\(//e\.co\) \*\*bold\*\*\.json: ")  # escaped: shown as typed, never a link
    assert "](" not in errors[0] and "**" not in errors[0]


@pytest.mark.parametrize("name", ["one_size.json", "huge.json", "pinned.json"])
def test_degenerate_size_ranges_draw_a_fixed_view_or_a_bounded_slider(name):
    import sys

    sys.path.insert(0, str(Path(__file__).resolve().parent))
    from tests.test_page_train_open_training import _degenerate_files

    from tokviz.limits import MAX_TOKENIZER_VOCAB

    app = upload(open_a_training(), name, _degenerate_files()[name])
    assert not app.exception, [str(error.value) for error in app.exception]
    sliders = [slider for slider in app.slider if slider.key == "inspect_training_vocab"]
    if name == "huge.json":
        assert (sliders[0].min, sliders[0].max) == (257, MAX_TOKENIZER_VOCAB)
    else:
        assert not sliders
        size = 257 if name == "one_size.json" else 270
        assert any(f"Vocab size: {size:,} (this training went through no other size)" in caption.value for caption in app.caption)
    assert any(metric.label == "vocab size" for metric in app.metric)
