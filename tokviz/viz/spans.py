"""Token spans as escaped HTML: the colored view of a text cut into tokens.

Each token becomes a ``<span>`` (followed by ``<wbr>`` so long lines wrap) in alternating colors, labelled with the token as the model
sees it (``'Ġhow'``, ``'##ing'``, ``'▁the'``), its markers dimmed; a tooltip gives the token, its
id, its character offsets into the ORIGINAL text, the original characters and their UTF-8
bytes. Text between tokens (whitespace a pre-tokenizer dropped) is shown dimmed, with
whitespace and invisible characters made visible: space ``·``, newline ``↵``, tab ``→``, and
any other control, format, bidi or zero-width character as ``⟨U+202E⟩``.

Every string that comes from the user (the text, token values, special tokens) goes
through :func:`html.escape` after being made visible; nothing else reaches the HTML.

>>> spans = [TokenSpan("Hi", 0, 0, 2), TokenSpan("!", 1, 2, 3)]
>>> html_out = render_token_spans("Hi!", spans).html
>>> html_out.count('class="tok"')
2
"""

from __future__ import annotations

import html
import unicodedata
from collections.abc import Collection, Sequence
from dataclasses import dataclass
from typing import Any

from tokviz.byte_level import UNICODE_TO_BYTES

#: Pastel backgrounds cycled token by token (readable on a projector, distinct neighbours).
PALETTE = ("#ffe0b2", "#c8e6c9", "#bbdefb", "#f8bbd0", "#fff59d", "#d1c4e9")
DEFAULT_MAX_TOKENS = 20_000

_VISIBLE_WHITESPACE = {" ": "·", "\n": "↵", "\t": "→", "\r": "␍"}
_WHITESPACE_TABLE = str.maketrans(_VISIBLE_WHITESPACE)
_MARKERS_PREFIX = ("##", "Ġ", "▁")
_MARKERS_SUFFIX = ("</w>",)


@dataclass(frozen=True, slots=True)
class TokenSpan:
    """One token to draw: its value, id and character offsets into the original text."""

    value: str
    id: int | None
    start: int
    end: int
    special: bool = False
    unknown: bool = False


@dataclass(frozen=True, slots=True)
class RenderedSpans:
    html: str
    rendered_tokens: int
    total_tokens: int

    @property
    def truncated(self) -> bool:
        return self.rendered_tokens < self.total_tokens


def make_visible(text: str) -> str:
    """Replace whitespace and invisible characters by visible stand-ins.

    >>> make_visible("a b\\tc\\n")
    'a·b→c↵'
    >>> make_visible("x\\u202ey\\u200b")
    'x⟨U+202E⟩y⟨U+200B⟩'
    """
    visible = text.translate(_WHITESPACE_TABLE)
    if visible.isprintable():
        return visible  # the common case: isprintable() is False exactly for what is left to replace
    out: list[str] = []
    for char in visible:
        if unicodedata.category(char)[0] in "CZ":  # Other (controls, format, bidi) and Separators
            out.append(f"⟨U+{ord(char):04X}⟩")
        else:
            out.append(char)
    return "".join(out)


def utf8_hex(text: str) -> str:
    """``'a가' -> '61 EA B0 80'`` (lone surrogates shown with surrogatepass)."""
    return text.encode("utf-8", errors="surrogatepass").hex(" ").upper()


def readable_byte_level(value: str) -> str:
    """Show a byte-level token readably: ASCII stays, other bytes are decoded when they form UTF-8.

    A token that holds only part of a character's bytes is shown as hex, one byte a bracket
    (no spaces, which the label would otherwise show as '·').

    >>> readable_byte_level("Ġhow"), readable_byte_level("ê°Ģ"), readable_byte_level("ê°")
    ('Ġhow', '가', '⟨EA⟩⟨B0⟩')
    """
    if all(ord(char) < 128 or char == "Ġ" or char == "Ċ" for char in value):
        return value
    if any(char not in UNICODE_TO_BYTES for char in value):
        return value
    prefix = ""
    if value.startswith("Ġ"):
        prefix, value = "Ġ", value[1:]
    raw = bytes(UNICODE_TO_BYTES[char] for char in value)
    try:
        return prefix + raw.decode("utf-8")
    except UnicodeDecodeError:
        return prefix + "".join(f"⟨{byte:02X}⟩" for byte in raw)


def _label_html(value: str) -> str:
    """Escaped label with a leading/trailing marker dimmed: ``'##ing' -> '<span class="mk">##</span>ing'``."""
    prefix = next((marker for marker in _MARKERS_PREFIX if value.startswith(marker) and len(value) > len(marker)), "")
    suffix = next((marker for marker in _MARKERS_SUFFIX if value.endswith(marker) and len(value) > len(marker)), "")
    core = value[len(prefix) : len(value) - len(suffix)]
    parts = []
    if prefix:
        parts.append(f'<span class="mk">{html.escape(prefix)}</span>')
    parts.append(html.escape(make_visible(core), quote=True))
    if suffix:
        parts.append(f'<span class="mk">{html.escape(suffix)}</span>')
    return "".join(parts)


def _gap_html(gap: str) -> str:
    if not gap:
        return ""
    visible = html.escape(make_visible(gap), quote=True).replace("↵", "↵<br>")
    return f'<span class="gap">{visible}</span>'


def render_token_spans(
    original: str,
    spans: Sequence[TokenSpan],
    *,
    show_ids: bool = False,
    byte_level: bool = False,
    max_tokens: int = DEFAULT_MAX_TOKENS,
    outlined: Collection[int] = frozenset(),
) -> RenderedSpans:
    """Draw ``spans`` over ``original`` as one HTML fragment (styles included).

    Tokens are drawn in encoding order; text of ``original`` that no token covers is drawn
    between them as a dimmed gap. At most ``max_tokens`` tokens are drawn. Tokens whose
    index (position in ``spans``) is in ``outlined`` get class ``diff``, a dashed outline: the
    Compare page marks where another tokenizer cuts the text differently.
    """
    rendered = list(spans[:max_tokens])
    pieces: list[str] = [SPAN_STYLE, '<div class="tokviz-spans">']
    cursor = 0
    for index, span in enumerate(rendered):
        if not span.special and span.start > cursor:
            pieces.append(_gap_html(original[cursor : span.start]))
        label_source = readable_byte_level(span.value) if byte_level and not span.special else span.value
        label = html.escape(str(span.id)) if show_ids else _label_html(label_source)
        original_slice = original[span.start : span.end]
        tooltip = (
            f"token: {span.value!r}\nid: {span.id}\noffsets: ({span.start}, {span.end})\n"
            f"text: {make_visible(original_slice)!r}\nUTF-8: {utf8_hex(original_slice) or '—'}"
        )
        classes = ["tok"]
        if span.special:
            classes.append("special")
        if span.unknown:
            classes.append("unk")
        if index in outlined:
            classes.append("diff")
        color = PALETTE[index % len(PALETTE)]
        style = "" if span.special else f' style="background:{color}"'
        # <wbr>: adjacent `white-space: pre` spans give the browser no other place to wrap a long line.
        pieces.append(
            f'<span class="{" ".join(classes)}"{style} title="{html.escape(tooltip, quote=True)}">{label}</span><wbr>'
        )
        if "\n" in original_slice and not span.special:
            pieces.append("<br>")
        if not span.special:
            cursor = max(cursor, span.end)
    if len(rendered) == len(spans) and cursor < len(original):
        pieces.append(_gap_html(original[cursor:]))
    pieces.append("</div>")
    return RenderedSpans(html="".join(pieces), rendered_tokens=len(rendered), total_tokens=len(spans))


def spans_from_encoding(encoding: Any, unk_token: str | None = None) -> list[TokenSpan]:
    """Token spans of an ``Encoding`` (tokviz's or HF's: anything with tokens/ids/offsets/special_tokens_mask)."""
    special_mask = list(getattr(encoding, "special_tokens_mask", None) or [0] * len(encoding.ids))
    return [
        TokenSpan(
            value=token,
            id=token_id,
            start=start,
            end=end,
            special=bool(is_special),
            unknown=unk_token is not None and token == unk_token,
        )
        for token, token_id, (start, end), is_special in zip(encoding.tokens, encoding.ids, encoding.offsets, special_mask)
    ]


SPAN_STYLE = """<style>
.tokviz-spans { font-family: ui-monospace, SFMono-Regular, Menlo, monospace; font-size: 0.95rem; line-height: 2.1; }
.tokviz-spans .tok { border-radius: 4px; padding: 1px 2px; margin: 0 1px; white-space: pre; border: 1px solid rgba(0,0,0,0.08); }
.tokviz-spans .tok .mk { opacity: 0.45; }
.tokviz-spans .tok.special { background: #455a64; color: #fff; font-weight: 600; }
.tokviz-spans .tok.unk { outline: 2px solid #d32f2f; background: #ffcdd2 !important; }
.tokviz-spans .tok.diff { outline: 2px dashed #6a1b9a; outline-offset: 1px; }
.tokviz-spans .gap { color: #9e9e9e; white-space: pre; }
</style>"""
