"""The span renderer formats each distinct token once and reuses it; this oracle draws every
token from scratch, one at a time (the renderer as it was before issue 13), and the two must
give the same HTML byte for byte on random texts and spans, in every mode."""

from __future__ import annotations

import hashlib
import html

from hypothesis import given, settings
from hypothesis import strategies as st

from tokviz.viz.spans import (
    PALETTE,
    PINNED_STYLE,
    SPAN_STYLE,
    TokenOrigin,
    TokenSpan,
    _gap_html,
    _label_html,
    make_visible,
    readable_byte_level,
    render_token_spans,
    spans_from_encoding,
    utf8_hex,
)


def oracle_card(span: TokenSpan, original_slice: str, origin, byte_level: bool) -> str:
    token = readable_byte_level(span.value) if byte_level and not span.special else span.value
    rows = [
        ("token", make_visible(token) + (f"  ({make_visible(span.value)})" if token != span.value else "")),
        ("id", "—" if span.id is None else f"{span.id:,}"),
        ("offsets", f"({span.start}, {span.end})"),
        ("text", make_visible(original_slice) if original_slice else "—"),
        ("UTF-8", utf8_hex(original_slice) or "—"),
    ]
    if span.unknown:
        rows.append(("note", "unknown token: the vocabulary cannot spell this text"))
    if origin is not None:
        rows.append(("origin", origin.describe(byte_level)))
    cells = "".join(f'<span class="k">{html.escape(k)}</span><span class="v">{html.escape(v, quote=True)}</span>' for k, v in rows)
    return f'<span class="card">{cells}</span>'


def oracle_render(original, spans, *, show_ids=False, byte_level=False, max_tokens=20_000, outlined=frozenset(),
                  pinned=False, origins=None, presentation=False) -> str:
    rendered = list(spans[:max_tokens])
    container = "tokviz-spans" + (" present" if presentation else "") + (" pinned" if pinned else "")
    pieces = [SPAN_STYLE, PINNED_STYLE if pinned else "", f'<div class="{container}">']
    digest = hashlib.sha1(original.encode("utf-8", errors="surrogatepass"))
    for span in rendered:
        digest.update(f"\x00{span.value}\x01{span.id}\x01{span.start}".encode("utf-8", errors="surrogatepass"))
    group = "tvz-" + digest.hexdigest()[:12]
    cursor = 0
    for index, span in enumerate(rendered):
        if not span.special and span.start > cursor:
            pieces.append(_gap_html(original[cursor : span.start]))
        label_source = readable_byte_level(span.value) if byte_level and not span.special else span.value
        label = html.escape(str(span.id)) if show_ids else _label_html(label_source)
        original_slice = original[span.start : span.end]
        classes = ["tok"] + (["special"] if span.special else []) + (["unk"] if span.unknown else []) + (["diff"] if index in outlined else [])
        style = "" if span.special else f' style="background:{PALETTE[index % len(PALETTE)]}"'
        if pinned:
            origin = (origins or {}).get(span.value)
            if origin is None and span.special:
                origin = TokenOrigin("special")
            card = oracle_card(span, original_slice, origin, byte_level)
            pieces.append(f'<details class="tw" name="{group}"><summary class="{" ".join(classes)}"{style}>{label}</summary>{card}</details><wbr>')
        else:
            tooltip = (f"token: {span.value!r}\nid: {span.id}\noffsets: ({span.start}, {span.end})\n"
                       f"text: {make_visible(original_slice)!r}\nUTF-8: {utf8_hex(original_slice) or '—'}")
            pieces.append(f'<span class="{" ".join(classes)}"{style} title="{html.escape(tooltip, quote=True)}">{label}</span><wbr>')
        if "\n" in original_slice and not span.special:
            pieces.append("<br>")
        if not span.special:
            cursor = max(cursor, span.end)
    if len(rendered) == len(spans) and cursor < len(original):
        pieces.append(_gap_html(original[cursor:]))
    pieces.append("</div>")
    return "".join(pieces)


TEXT = st.text(st.sampled_from(list("ab c\n\t<>&\"'") + ["가", "é", "\u0301", "\u202e", "😀", "Ġ", "▁"]), max_size=30)


@settings(max_examples=150, deadline=None, derandomize=True)
@given(TEXT, st.data())
def test_fast_renderer_matches_the_token_by_token_oracle(text: str, data) -> None:
    # Spans with repeats, overlaps, gaps, specials and unknowns, in any order (the renderer must not assume sorted input).
    bounds = st.tuples(st.integers(0, len(text)), st.integers(0, len(text))).map(sorted)
    raw = data.draw(st.lists(st.tuples(bounds, st.sampled_from(["a", "##b", "Ġc", "▁", "x</w>", "ê°Ģ", "<s>", "&"]),
                                       st.one_of(st.none(), st.integers(0, 3)), st.booleans(), st.booleans()), max_size=12))
    spans = [TokenSpan(value, token_id, start, end, special=special, unknown=unknown)
             for (start, end), value, token_id, special, unknown in raw]
    options = dict(
        show_ids=data.draw(st.booleans()),
        byte_level=data.draw(st.booleans()),
        pinned=data.draw(st.booleans()),
        presentation=data.draw(st.booleans()),
        max_tokens=data.draw(st.integers(0, 14)),
        outlined=frozenset(data.draw(st.lists(st.integers(0, 12), max_size=3))),
        origins=data.draw(st.sampled_from([None, {"a": TokenOrigin("merge", 3, "<", "&", 2, 2.0), "&": TokenOrigin("piece", score=-1.5)}])),
    )
    assert render_token_spans(text, spans, **options).html == oracle_render(text, spans, **options)


def test_spans_from_encoding_literal() -> None:
    class Encoding:
        tokens = ["[CLS]", "hug", "[UNK]"]
        ids = [2, 10, 1]
        offsets = [(0, 0), (0, 3), (4, 7)]
        special_tokens_mask = [1, 0, 0]

    assert spans_from_encoding(Encoding(), unk_id=1) == [  # unknown by id
        TokenSpan("[CLS]", 2, 0, 0, special=True),
        TokenSpan("hug", 10, 0, 3),
        TokenSpan("[UNK]", 1, 4, 7, unknown=True),
    ]
    Encoding.tokens, Encoding.ids, Encoding.offsets, Encoding.special_tokens_mask = [], [], [], []
    assert spans_from_encoding(Encoding()) == []
    assert TokenSpan("a", 1, 0, 1).special is False and TokenSpan("a", 1, 0, 1).unknown is False
