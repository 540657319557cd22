"""No user text is read as Markdown on any page (issue 18, item 5).

Markdown and HTML payloads go in wherever a user can type or upload text: the corpus, the test
texts, Compare's texts, Pipeline's and Inspect's texts, Learn's word table and sentence, an
uploaded file's name. Every element Streamlit renders as Markdown (titles, headers, captions,
Markdown, notices, widget labels) is then checked: a payload may appear only escaped, so no
link, image, emphasis, code span or math can form from it.
"""

from __future__ import annotations

import re

import pytest
from streamlit.testing.v1 import AppTest

from tests.app_pages import open_page

PAYLOAD = "[x](e.co) ![](e.co) <b>bold</b> **strong** `code` $math$"
#: A payload piece left unescaped (not preceded by a backslash) in a Markdown string.
UNESCAPED = re.compile(r"(?<!\\)\[x(?<!\\)\]\(e|(?<!\\)!(?<!\\)\[\]|<b>bold|(?<!\\)\*\*strong|(?<!\\)`code|(?<!\\)\$math")
MARKDOWN_ELEMENTS = ("title", "header", "subheader", "caption", "markdown", "info", "warning", "error", "success")


def rendered_markdown(app: AppTest) -> list[str]:
    texts = [element.value for kind in MARKDOWN_ELEMENTS for element in app.get(kind) if isinstance(getattr(element, "value", None), str)]
    for kind in ("expander", "text_area", "text_input", "selectbox", "number_input", "radio", "toggle", "checkbox", "slider", "multiselect"):
        texts.extend(element.label for element in app.get(kind) if isinstance(getattr(element, "label", None), str))
    return texts


def assert_no_markdown_from_payload(app: AppTest, where: str) -> None:
    assert not app.exception, (where, [str(error.value) for error in app.exception])
    for text in rendered_markdown(app):
        assert not UNESCAPED.search(text), (where, text)


def test_train_corpus_and_test_text() -> None:
    app = open_page("pages/train.py")
    corpus = "\n".join(f"{PAYLOAD} line {number}" for number in range(30))
    app.text_area(key="corpus_text").set_value(corpus).run()
    app.text_area(key="test_text").set_value(PAYLOAD).run()
    assert_no_markdown_from_payload(app, "train")


def test_train_upload_name() -> None:
    app = open_page("pages/train.py")
    text = "\n".join(f"plain line {number}" for number in range(30)).encode()
    app.file_uploader(key="corpus_file").set_value(("[x](e.co) **strong** `code`.txt", text, "text/plain")).run()
    shown = rendered_markdown(app)
    assert any("strong" in item for item in shown)  # the name is on the page (escaped)
    assert_no_markdown_from_payload(app, "train upload")


def test_compare_texts() -> None:
    app = open_page("pages/compare.py")
    app.text_area(key="compare_text").set_value(PAYLOAD).run()
    app.radio(key="compare_eval_source").set_value("paste").run()
    app.text_area(key="compare_eval_text").set_value(PAYLOAD).run()
    assert_no_markdown_from_payload(app, "compare")


@pytest.mark.parametrize(("page", "key"), [("pages/pipeline.py", "pipeline_text"), ("pages/inspect.py", "inspect_text")])
def test_pipeline_and_inspect_texts(page: str, key: str) -> None:
    app = open_page(page)
    app.text_area(key=key).set_value(PAYLOAD).run()
    assert_no_markdown_from_payload(app, page)


def test_learn_sentence_and_byte_text() -> None:
    app = open_page("pages/learn.py")
    app.selectbox(key="learn_lesson").set_value("normalization").run()
    app.text_input(key="learn_sentence").set_value(PAYLOAD[:110]).run()
    steps = int(app.slider(key="learn_step").max)
    for step in range(1, steps + 1):
        app.slider(key="learn_step").set_value(step).run()
        assert_no_markdown_from_payload(app, f"normalization step {step}")
    app.selectbox(key="learn_lesson").set_value("byte_level").run()
    app.text_input(key="learn_byte_text").set_value("[x](e.co) **s**").run()
    steps = int(app.slider(key="learn_step").max)
    for step in range(1, steps + 1):
        app.slider(key="learn_step").set_value(step).run()
        assert_no_markdown_from_payload(app, f"byte-level step {step}")
