"""md_escape: user text in any Markdown string (notes, captions, notices, labels, help) shows as typed.

The payload of the phishing report -- ``[Session expired: sign in again](http://127.0.0.1:9/phish) **x**`` -- and
the other forms Streamlit's Markdown knows (autolinks, emphasis, ``:red[]``, ``$``, HTML, headings) go in through
links on every page and a CSV column name; every string a page renders as Markdown is rendered here with a
CommonMark renderer and checked: no ``<a>``, ``<strong>`` or ``<em>`` comes from the payload, the payload reads
as typed, and no bare URL is left for Streamlit's autolinker (which works on the text after escapes, so the
escape puts an invisible word joiner into ``://``, ``www.`` and after ``@``; checked in Chromium when written).
"""

from __future__ import annotations

import html
import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from markdown_it import MarkdownIt
from streamlit.testing.v1 import AppTest

from tests.app_pages import open_page
from tokviz.markdown import WORD_JOINER, md_escape

PHISH = "[Session expired: sign in again](http://127.0.0.1:9/phish) **x**"
PAYLOADS = (PHISH, ":red[alarm] _under_ *star* `code` $x^2$ <b>bold</b> &amp; # Heading", "see http://evil.example/a www.evil.com a@evil.co")
MARKDOWN = MarkdownIt("commonmark")


def rendered(text: str) -> str:
    return MARKDOWN.render(text)


def visible(text: str) -> str:
    """The text a reader sees: tags dropped, entities resolved, word joiners removed."""
    return html.unescape(re.sub(r"<[^>]+>", "", rendered(text))).replace(WORD_JOINER, "").strip()


def bare_autolinks(text: str) -> list[str]:
    """What GitHub-flavoured Markdown would turn into a link in the text after escapes (word joiners kept)."""
    shown = html.unescape(re.sub(r"<[^>]+>", "", rendered(text)))
    return re.findall(r"https?://|(?i:www)\.|[\w.+-]@[\w-]", shown)


@pytest.mark.parametrize("payload", PAYLOADS)
def test_payloads_show_as_typed_with_no_markup(payload):
    escaped = md_escape(payload)
    out = rendered(escaped)
    for tag in ("<a", "<strong", "<em", "<code", "<h1", "<b>", "<img"):
        assert tag not in out, (tag, out)
    assert visible(escaped) == payload
    assert not bare_autolinks(escaped)
    assert not re.search(r"(?<!\\)(?::\w|[$\[])", escaped)  # Streamlit's colour directives and math need these unescaped


def test_worked_example():
    assert md_escape("**x** http://a.b: :red[y]") == "\\*\\*x\\*\\* http:\u2060//a\\.b: \\:red\\[y\\]"


@settings(max_examples=300, deadline=None)
@given(st.text(alphabet=st.characters(blacklist_categories=("Cs", "Cc", "Zl", "Zp")), max_size=60))
def test_any_line_reads_as_typed(text):
    text = text.strip()
    escaped = md_escape(text)
    assert "<a" not in rendered(escaped) and "<em" not in rendered(escaped) and "<strong" not in rendered(escaped)
    assert visible(escaped) == re.sub(r"[ \t]+", " ", text).replace(WORD_JOINER, "") or not text.strip()


# --- every page: the payload through links and a CSV column name ------------------------------------------------

MARKDOWN_ELEMENTS = ("title", "header", "subheader", "caption", "markdown", "info", "warning", "error", "success")
WIDGETS = ("expander", "text_area", "text_input", "selectbox", "number_input", "radio", "toggle", "checkbox", "slider",
           "multiselect", "button", "file_uploader")


def markdown_strings(app: AppTest) -> list[str]:
    """Every string the page renders as Markdown: element bodies, widget labels and help texts."""
    texts = [element.value for kind in MARKDOWN_ELEMENTS for element in app.get(kind) if isinstance(getattr(element, "value", None), str)]
    for kind in WIDGETS:
        for element in app.get(kind):
            texts.extend(value for value in (getattr(element, "label", None), getattr(element, "help", None)) if isinstance(value, str))
    return texts


def assert_payload_inert(app: AppTest, where: str) -> int:
    """Check every Markdown string that carries the payload; returns how many did."""
    assert not app.exception, (where, [str(error.value) for error in app.exception])
    carrying = [text for text in markdown_strings(app) if "Session expired" in text or "evil" in text]
    for text in carrying:
        out = rendered(text)
        assert "<a" not in out, (where, text, out)
        for inner in re.findall(r"<(?:strong|em)>(.*?)</(?:strong|em)>", out):  # the page's own bold (**Train**) only
            assert not any(inner in payload for payload in (PHISH, "http://evil.example/phish,Session expired: sign in again **x**")), (where, out)
        assert not bare_autolinks(text), (where, text)
        if "Session expired" in text:
            assert PHISH in visible(text), (where, text)
    return len(carrying)


def open_with_link(page: str, params: dict[str, str]) -> AppTest:
    return open_page(page, query=params)


LINK = {"preset": PHISH, "vocab": PHISH, "lesson": PHISH, "corpus": PHISH, "cmp": PHISH, "model": PHISH}


@pytest.mark.parametrize("page", ["pages/train.py", "pages/compare.py", "pages/pipeline.py", "pages/inspect.py", "pages/learn.py"])
def test_a_phishing_link_draws_no_link_on_any_page(page):
    app = open_with_link(page, LINK)
    assert not app.exception, [str(error.value) for error in app.exception]
    assert assert_payload_inert(app, page) >= 1  # the link's note names the value, escaped


def test_the_link_of_the_report_on_train():
    app = open_with_link("pages/train.py", {"preset": PHISH})
    assert assert_payload_inert(app, "train preset") >= 1
    assert app.error  # the note is still the app's own error box, now with the text as typed


def test_a_csv_column_name_with_a_url_is_not_an_autolink():
    app = open_with_link("pages/train.py", {})
    header = "http://evil.example/phish,Session expired: sign in again **x**"
    rows = [header] + [f"review number {number} of the shop,good {number}" for number in range(40)]
    app.file_uploader(key="corpus_file").set_value(("reviews.csv", "\n".join(rows).encode(), "text/csv")).run()
    assert not app.exception
    assert assert_payload_inert(app, "csv column") >= 1
