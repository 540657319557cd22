"""AppTest smoke tests: every page the app ships runs on the built-in sample without exception."""

from __future__ import annotations


import pytest
from streamlit.testing.v1 import AppTest

from tests.app_pages import open_page
from tokviz.corpus import corpus_stats
from tokviz.samples import load_sample
from tokviz.ui import PAGES


def run_page(page_path: str) -> AppTest:
    return open_page(page_path)


@pytest.mark.parametrize("page_path", [page.path for page in PAGES])
def test_every_page_runs_without_exception(page_path: str) -> None:
    app = run_page(page_path)
    assert not app.exception, [str(error.value) for error in app.exception]
    assert not app.error, [error.value for error in app.error]


def test_home_names_the_product_and_shows_the_sample_statistics() -> None:
    app = run_page(PAGES[0].path)
    assert app.title[0].value == "tokviz — a tokenizer playground"
    metrics = {metric.label: metric.value for metric in app.metric}
    stats = corpus_stats(load_sample())
    assert metrics["characters"] == f"{stats.characters:,}"
    assert metrics["UTF-8 bytes"] == f"{stats.utf8_bytes:,}"


def test_home_describes_every_other_page() -> None:
    app = run_page(PAGES[0].path)
    captions = [caption.value for caption in app.caption]
    for page in PAGES[1:]:
        assert page.summary in captions
