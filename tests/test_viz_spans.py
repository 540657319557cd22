from __future__ import annotations

import re
from types import SimpleNamespace

from hypothesis import given, settings
from hypothesis import strategies as st

from tokviz.viz.spans import (
    TokenSpan,
    make_visible,
    readable_byte_level,
    render_token_spans,
    spans_from_encoding,
    utf8_hex,
)



def token_labels(fragment: str) -> list[str]:
    body = fragment.split('<div class="tokviz-spans">', 1)[1]
    return re.findall(r'<span class="tok[^"]*"(?: style="[^"]*")? title="[^"]*">((?:[^<]|<span class="mk">[^<]*</span>)*)</span><wbr>', body)


def test_two_tokens_and_a_dropped_space_literal_html() -> None:
    # Whitespace pre-tokenizer drops the space: it is drawn as a dimmed gap '·'.
    out = render_token_spans("Hi you", [TokenSpan("Hi", 5, 0, 2), TokenSpan("you", 9, 3, 6)])
    body = out.html.split('<div class="tokviz-spans">', 1)[1]
    assert body == (
        '<span class="tok" style="background:#ffe0b2" title="token: &#x27;Hi&#x27;\nid: 5\noffsets: (0, 2)\n'
        'text: &#x27;Hi&#x27;\nUTF-8: 48 69">Hi</span><wbr>'
        '<span class="gap">·</span>'
        '<span class="tok" style="background:#c8e6c9" title="token: &#x27;you&#x27;\nid: 9\noffsets: (3, 6)\n'
        'text: &#x27;you&#x27;\nUTF-8: 79 6F 75">you</span><wbr></div>'
    )
    assert (out.rendered_tokens, out.total_tokens, out.truncated) == (2, 2, False)


def test_markers_are_dimmed_and_ids_mode_shows_ids() -> None:
    spans = [TokenSpan("Ġhow", 3, 0, 4), TokenSpan("##ing", 4, 4, 7), TokenSpan("▁the", 5, 7, 10), TokenSpan("low</w>", 6, 10, 13)]
    labels = token_labels(render_token_spans("x" * 13, spans).html)
    assert labels == [
        '<span class="mk">Ġ</span>how',
        '<span class="mk">##</span>ing',
        '<span class="mk">▁</span>the',
        'low<span class="mk">&lt;/w&gt;</span>',
    ]
    assert token_labels(render_token_spans("x" * 13, spans, show_ids=True).html) == ["3", "4", "5", "6"]


def test_whitespace_and_invisible_characters_are_made_visible() -> None:
    assert make_visible(" \n\t\r") == "·↵→␍"
    assert make_visible("a\u202eb\u200dc\x00\u00a0") == "a⟨U+202E⟩b⟨U+200D⟩c⟨U+0000⟩⟨U+00A0⟩"
    out = render_token_spans("a\nb", [TokenSpan("a", 0, 0, 1), TokenSpan("b", 1, 2, 3)])
    assert '<span class="gap">↵<br></span>' in out.html


def test_hostile_text_never_becomes_markup() -> None:
    text = '<img src=x onerror=alert(1)> <script>alert("x")</script> "\' onmouseover=1'
    spans = [TokenSpan(text[:28], 0, 0, 28), TokenSpan(text[29:], 1, 29, len(text), special=True)]
    fragment = render_token_spans(text, spans).html
    assert "<img" not in fragment and "<script" not in fragment
    assert "&lt;img" in fragment and "&lt;script&gt;" in fragment
    # Quotes cannot break out of the title attribute.
    for title in re.findall(r'title="([^"]*)"', fragment):
        assert "<" not in title and '"' not in title


def test_special_and_unknown_tokens_are_marked() -> None:
    encoding = SimpleNamespace(
        tokens=["[CLS]", "hug", "[UNK]", "[SEP]"],
        ids=[2, 10, 1, 3],
        offsets=[(0, 0), (0, 3), (4, 7), (0, 0)],
        special_tokens_mask=[1, 0, 0, 1],
    )
    spans = spans_from_encoding(encoding, unk_token="[UNK]")
    assert [(span.special, span.unknown) for span in spans] == [(True, False), (False, False), (False, True), (True, False)]
    fragment = render_token_spans("hug mug", spans).html
    assert fragment.count('class="tok special"') == 2
    assert fragment.count('class="tok unk"') == 1


def test_outlined_tokens_get_the_diff_class_and_nothing_else_changes() -> None:
    # The Compare page outlines the tokens another tokenizer cuts differently, by index.
    spans = [TokenSpan("hug", 0, 0, 3), TokenSpan("s", 1, 3, 4), TokenSpan("[UNK]", 2, 5, 6, unknown=True)]
    plain = render_token_spans("hugs x", spans).html
    outlined = render_token_spans("hugs x", spans, outlined={1, 2}).html
    assert re.findall(r'class="(tok(?: [^"]*)?)"', outlined) == ["tok", "tok diff", "tok unk diff"]
    assert outlined.replace(" diff", "") == plain
    assert ".tok.diff { outline: 2px dashed" in outlined


def test_rendering_is_capped_with_counts() -> None:
    spans = [TokenSpan("a", 0, index, index + 1) for index in range(50)]
    out = render_token_spans("a" * 50, spans, max_tokens=10)
    assert (out.rendered_tokens, out.total_tokens, out.truncated) == (10, 50, True)
    assert out.html.count('class="tok"') == 10


def test_byte_level_tokens_shown_readably() -> None:
    assert readable_byte_level("Ġhow") == "Ġhow"
    assert readable_byte_level("ê°Ģ") == "가"
    assert readable_byte_level("Ġì§§") == "Ġ짧"
    assert readable_byte_level("ê°") == "⟨EA⟩⟨B0⟩"  # two of the three bytes of 가
    assert utf8_hex("a가 짧") == "61 EA B0 80 20 EC A7 A7"


@settings(max_examples=200, deadline=None, derandomize=True)
@given(st.text(max_size=40), st.data())
def test_no_user_string_reaches_html_unescaped(text: str, data) -> None:
    cuts = sorted(data.draw(st.lists(st.integers(0, len(text)), max_size=8)))
    bounds = [0, *cuts, len(text)]
    spans = [TokenSpan(text[a:b], index, a, b) for index, (a, b) in enumerate(zip(bounds, bounds[1:])) if a < b]
    fragment = render_token_spans(text, spans).html
    body = fragment.split('<div class="tokviz-spans">', 1)[1]
    # Every '<' in the output opens one of our own tags.
    for match in re.finditer("<", body):
        assert re.match(r'</?(span|br|wbr|div)\b', body[match.start():]), body[match.start(): match.start() + 20]
