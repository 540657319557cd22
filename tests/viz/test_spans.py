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
    spans = spans_from_encoding(encoding, unk_id=1)
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


# --- click-to-pin token cards, origins, copyable ids and tokens ----------------------------

from tokviz.viz.spans import TokenOrigin, copyable_ids, copyable_tokens, token_origins  # noqa: E402


def test_pinned_cards_replace_the_tooltips() -> None:
    spans = [TokenSpan("Hi", 5, 0, 2), TokenSpan("you", 9, 3, 6)]
    out = render_token_spans("Hi you", spans, pinned=True, origins={"you": TokenOrigin("merge", 2, "yo", "u", 7, 7.0)})
    body = out.html.split('<div class="tokviz-spans pinned">', 1)[1]
    group = re.search(r'name="(tvz-[0-9a-f]{12})"', body).group(1)
    assert body == (
        f'<details class="tw" name="{group}"><summary class="tok" style="background:#ffe0b2">Hi</summary>'
        '<span class="card"><span class="k">token</span><span class="v">Hi</span><span class="k">id</span><span class="v">5</span>'
        '<span class="k">offsets</span><span class="v">(0, 2)</span><span class="k">text</span><span class="v">Hi</span>'
        '<span class="k">UTF-8</span><span class="v">48 69</span></span></details><wbr>'
        '<span class="gap">·</span>'
        f'<details class="tw" name="{group}"><summary class="tok" style="background:#c8e6c9">you</summary>'
        '<span class="card"><span class="k">token</span><span class="v">you</span><span class="k">id</span><span class="v">9</span>'
        '<span class="k">offsets</span><span class="v">(3, 6)</span><span class="k">text</span><span class="v">you</span>'
        '<span class="k">UTF-8</span><span class="v">79 6F 75</span><span class="k">origin</span><span class="v">merge #3: yo + u (count 7)</span>'
        "</span></details><wbr></div>"
    )
    assert "title=" not in out.html and ".tokviz-spans.pinned .card" in out.html
    # The same view keeps its group name on a rerun; another tokenizer's view of the text gets another.
    again = render_token_spans("Hi you", spans, pinned=True).html
    other = render_token_spans("Hi you", [TokenSpan("H", 1, 0, 1), TokenSpan("i", 2, 1, 2), TokenSpan("you", 9, 3, 6)], pinned=True).html
    assert f'name="{group}"' in again and f'name="{group}"' not in other


def test_pinned_cards_escape_and_label_special_unknown_and_byte_level_tokens() -> None:
    text = '<b>"가'
    spans = [TokenSpan("[CLS]", 2, 0, 0, special=True), TokenSpan("<b>", 7, 0, 3), TokenSpan('"', 1, 3, 4, unknown=True), TokenSpan("ê°Ģ", 40, 4, 5)]
    fragment = render_token_spans(text, spans, pinned=True, byte_level=True).html
    body = fragment.split("</style>")[-1]
    assert "<b>" not in body and "&lt;b&gt;" in body
    assert '<span class="k">origin</span><span class="v">special token</span>' in body
    assert '<span class="k">note</span><span class="v">unknown token: the vocabulary cannot spell this text</span>' in body
    assert '<span class="v">&quot;</span>' in body
    # A byte-level token: the text it spells, then the model's own symbols.
    assert '<span class="v">가  (ê°Ģ)</span>' in body and '<span class="v">EA B0 80</span>' in body


def test_presentation_enlarges_the_type() -> None:
    spans = [TokenSpan("Hi", 5, 0, 2)]
    assert '<div class="tokviz-spans present">' in render_token_spans("Hi", spans, presentation=True).html
    assert '<div class="tokviz-spans present pinned">' in render_token_spans("Hi", spans, presentation=True, pinned=True).html
    assert ".tokviz-spans.present { font-size: 1.45rem;" in render_token_spans("Hi", spans).html


def test_default_rendering_is_unchanged_by_the_new_options() -> None:
    spans = [TokenSpan("Hi", 5, 0, 2)]
    assert render_token_spans("Hi", spans).html == render_token_spans("Hi", spans, origins={"Hi": TokenOrigin("alphabet")}).html
    assert "<details" not in render_token_spans("Hi", spans).html


def test_copyable_ids_and_tokens() -> None:
    spans = [TokenSpan("[CLS]", 2, 0, 0, special=True), TokenSpan("Ġhow", 71, 0, 4), TokenSpan('"a\\', 8, 4, 7), TokenSpan("x", None, 7, 8)]
    assert copyable_ids(spans) == "[2, 71, 8, null]"
    assert copyable_tokens(spans) == '["[CLS]", "Ġhow", "\\"a\\\\", "x"]'
    assert copyable_ids([]) == "[]" and copyable_tokens([]) == "[]"


def _trained(config, vocab_size):
    from tokviz.pipeline_config import build_tokenizer, build_trainer

    trained_tokenizer = build_tokenizer(config)
    trained_tokenizer.train_from_iterator(["hug hug hug pug pun bun hugs"], build_trainer(config, vocab_size))
    return trained_tokenizer.training_history


def test_token_origins_of_bpe_name_the_first_merge_that_made_each_token() -> None:
    from tokviz.pipeline_config import PipelineConfig

    history = _trained(PipelineConfig(model="BPE", special_tokens=("<unk>",), unk_token="<unk>"), 14)
    origins = token_origins(history)
    # Alphabet b g h n p s u (7) + <unk>: merges ug, hug, un, ... (the HF course's example in miniature).
    assert [(step.rank, step.token, step.count) for step in history.merges[:2]] == [(0, "ug", 5), (1, "hug", 4)]
    assert origins["ug"] == TokenOrigin("merge", 0, "u", "g", 5, 5.0)
    assert origins["hug"] == TokenOrigin("merge", 1, "h", "ug", 4, 4.0)
    assert origins["h"] == TokenOrigin("alphabet") and origins["<unk>"] == TokenOrigin("special")
    at_9 = token_origins(history, 9)  # 8 tokens + the first merge
    assert "ug" in at_9 and "hug" not in at_9


def test_token_origins_of_wordpiece_unigram_and_wordlevel() -> None:
    from tokviz.pipeline_config import PipelineConfig
    from tokviz.presets import bert_like, t5_like

    wordpiece = token_origins(_trained(bert_like(), 30))
    merges = {token: origin for token, origin in wordpiece.items() if origin.kind == "merge"}
    assert merges and all(origin.count is not None and origin.rank is not None for origin in merges.values())
    assert wordpiece["[CLS]"].kind == "special" and wordpiece["##g"].kind == "alphabet"
    history = _trained(t5_like(), 20)
    unigram = token_origins(history)
    assert {piece: origin.score for piece, origin in unigram.items() if origin.kind == "piece"} == {
        piece: score for piece, score in history.model.vocab if piece not in history.special_tokens
    }
    wordlevel = _trained(PipelineConfig(model="WordLevel", special_tokens=("[UNK]",), unk_token="[UNK]"), 3)
    assert token_origins(wordlevel) == {"hug": TokenOrigin("word", count=3), "bun": TokenOrigin("word", count=1), "[UNK]": TokenOrigin("special")}
