"""Token spans as escaped HTML: the colored view of a text cut into tokens.

Each token becomes a ``<span>`` (followed by ``<wbr>`` so long lines wrap) in alternating colors, labelled with the token as the model
sees it (``'Ġhow'``, ``'##ing'``, ``'▁the'``), its markers dimmed; a tooltip gives the token, its
id, its character offsets into the ORIGINAL text, the original characters and their UTF-8
bytes. Text between tokens (whitespace a pre-tokenizer dropped) is shown dimmed, with
whitespace and invisible characters made visible: space ``·``, newline ``↵``, tab ``→``, and
any other control, format, bidi or zero-width character as ``⟨U+202E⟩``.

Every string that comes from the user (the text, token values, special tokens) goes
through :func:`html.escape` after being made visible; nothing else reaches the HTML.

``pinned=True`` replaces the tooltips by panels a click (or a tap) pins: each token is a
``<details>`` element whose ``<summary>`` is the colored token and whose body is a styled
card (token, id, offsets, text, UTF-8 bytes and, from :func:`token_origins`, the merge that
made it with its rank and count, or its Unigram log-probability). Streamlit's ``st.html``
runs no JavaScript, so this is HTML and CSS only: a second click closes the card, and
the ``name`` shared by a view's tokens keeps one card open at a time (Chromium 120+,
Firefox 130+, Safari 17.2+; older browsers allow several). :func:`copyable_ids` and
:func:`copyable_tokens` give the ids and tokens as text for a copy button.

>>> spans = [TokenSpan("Hi", 0, 0, 2), TokenSpan("!", 1, 2, 3)]
>>> html_out = render_token_spans("Hi!", spans).html
>>> html_out.count('class="tok"')
2
"""

from __future__ import annotations

import hashlib
import html
import json
import unicodedata
from itertools import repeat
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, NamedTuple

from tokviz.byte_level import UNICODE_TO_BYTES
from tokviz.history import MergeStep, merge_number

#: Pastel backgrounds cycled token by token (readable on a projector, distinct neighbours).
PALETTE = ("#ffe0b2", "#c8e6c9", "#bbdefb", "#f8bbd0", "#fff59d", "#d1c4e9")
DEFAULT_MAX_TOKENS = 20_000

_VISIBLE_WHITESPACE = {" ": "·", "\n": "↵", "\t": "→", "\r": "␍"}
_WHITESPACE_TABLE = str.maketrans(_VISIBLE_WHITESPACE)
_MARKERS_PREFIX = ("##", "Ġ", "▁")
_MARKERS_SUFFIX = ("</w>",)


class TokenSpan(NamedTuple):
    """One token to draw: its value, id and character offsets into the original text.

    An immutable record like the others, but a named tuple: the Train page makes 20,000 of
    them on a slider move, and a tuple is built and unpacked several times faster than a
    frozen dataclass.
    """

    value: str
    id: int | None
    start: int
    end: int
    special: bool = False
    unknown: bool = False


@dataclass(frozen=True, slots=True)
class TokenOrigin:
    """Why a token is in the vocabulary, as its details panel says it.

    ``kind`` is ``"merge"`` (BPE / WordPiece: ``rank``, ``left`` + ``right``, the pair's
    ``count`` and the ``score`` that chose it), ``"piece"`` (Unigram: ``score`` is its
    log-probability), ``"word"`` (WordLevel: ``count``), ``"alphabet"`` (an initial symbol)
    or ``"special"``.

    >>> TokenOrigin("merge", rank=11, left="h", right="ug", count=15, score=15.0).describe()  # rank 11: merge #12
    'merge #12: h + ug (count 15)'
    >>> TokenOrigin("piece", score=-4.2137).describe(), TokenOrigin("alphabet").describe()
    ('Unigram piece, log p = -4.214', 'in the initial alphabet')
    """

    kind: str
    rank: int | None = None
    left: str | None = None
    right: str | None = None
    count: int | None = None
    score: float | None = None

    def describe(self, byte_level: bool = False) -> str:
        """One line of plain text (escape it before it reaches HTML)."""
        if self.kind == "merge":
            show = (lambda token: make_visible(readable_byte_level(token))) if byte_level else make_visible
            line = f"merge #{merge_number(self.rank):,}: {show(self.left or '')} + {show(self.right or '')} (count {self.count:,}"
            if self.score is not None and self.count is not None and self.score != self.count:
                line += f", score {self.score:.4g}"
            return line + ")"
        if self.kind == "piece":
            return f"Unigram piece, log p = {self.score:.4g}"
        if self.kind == "word":
            return f"a whole word, seen {self.count:,} times"
        if self.kind == "special":
            return "special token"
        return "in the initial alphabet"


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
    pinned: bool = False,
    origins: Mapping[str, TokenOrigin] | None = None,
    presentation: bool = False,
) -> RenderedSpans:
    """Draw ``spans`` over ``original`` as one HTML fragment (styles included).

    Tokens are drawn in encoding order; text of ``original`` that no token covers is drawn
    between them as a dimmed gap. At most ``max_tokens`` tokens are drawn. Tokens whose
    index (position in ``spans``) is in ``outlined`` get class ``diff``, a dashed outline: the
    Compare page marks where another tokenizer cuts the text differently.

    ``pinned``: a click pins a details card instead of a hover tooltip; ``origins`` (token
    value -> :class:`TokenOrigin`, from :func:`token_origins`) adds why each token exists.
    ``presentation``: larger type for a projector.

    A slider move redraws up to 20,000 tokens, most of them repeats: each distinct token
    (value, id, flags and the original characters it covers) is escaped and formatted once,
    as the HTML before its color, between its color and its offsets, and after its offsets;
    a token then costs one dict look-up and one f-string.
    """
    rendered = spans[:max_tokens] if isinstance(spans, (list, tuple)) else list(spans)[:max_tokens]
    container = "tokviz-spans" + (" present" if presentation else "") + (" pinned" if pinned else "")
    pieces: list[str] = [SPAN_STYLE, PINNED_STYLE if pinned else "", f'<div class="{container}">']
    group = _group_name(original, rendered) if pinned else ""
    origins = origins or {}
    parts_of: dict[tuple, tuple[str, str, str]] = {}
    gaps: dict[str, str] = {}
    styles = tuple(f' style="background:{color}"' for color in PALETTE)
    period = len(PALETTE)
    append = pieces.append
    cursor = 0
    for index, (value, token_id, start, end, special, unknown) in enumerate(rendered):
        if not special and start > cursor:
            gap = original[cursor:start]
            gap_html = gaps.get(gap)
            if gap_html is None:
                gap_html = gaps[gap] = _gap_html(gap)
            append(gap_html)
        original_slice = original[start:end]
        diff = index in outlined if outlined else False
        key = (value, token_id, special, unknown, original_slice, diff)
        parts = parts_of.get(key)
        if parts is None:
            parts = parts_of[key] = _token_parts(
                value, token_id, special, unknown, diff, original_slice, show_ids, byte_level, pinned, origins, group
            )
        head, middle, tail = parts
        if special:
            append(f"{head}{middle}{start}, {end}{tail}")
        else:
            append(f"{head}{styles[index % period]}{middle}{start}, {end}{tail}")
            if end > cursor:
                cursor = end
    if len(rendered) == len(spans) and cursor < len(original):
        pieces.append(_gap_html(original[cursor:]))
    pieces.append("</div>")
    return RenderedSpans(html="".join(pieces), rendered_tokens=len(rendered), total_tokens=len(spans))


def _token_parts(
    value: str,
    token_id: int | None,
    special: bool,
    unknown: bool,
    diff: bool,
    original_slice: str,
    show_ids: bool,
    byte_level: bool,
    pinned: bool,
    origins: Mapping[str, TokenOrigin],
    group: str,
) -> tuple[str, str, str]:
    r"""One token's HTML in three parts: before its color style, up to its offsets ``start, end``, after them.

    >>> _token_parts("Hi", 5, False, False, False, "Hi", False, False, False, {}, "")
    ('<span class="tok"', ' title="token: &#x27;Hi&#x27;\nid: 5\noffsets: (', ')\ntext: &#x27;Hi&#x27;\nUTF-8: 48 69">Hi</span><wbr>')
    """
    label_source = readable_byte_level(value) if byte_level and not special else value
    label = html.escape(str(token_id)) if show_ids else _label_html(label_source)
    classes = "tok" + (" special" if special else "") + (" unk" if unknown else "") + (" diff" if diff else "")
    line_break = "<br>" if "\n" in original_slice and not special else ""
    if pinned:
        origin = origins.get(value)
        if origin is None and special:
            origin = TokenOrigin("special")
        card_head, card_tail = _card_parts(value, token_id, special, unknown, original_slice, origin, byte_level)
        return (
            f'<details class="tw" name="{group}"><summary class="{classes}"',
            f">{label}</summary>{card_head}",
            f"{card_tail}</details><wbr>{line_break}",
        )
    # html.escape replaces characters one by one, so the tooltip escapes in pieces around its offsets.
    before = f"token: {value!r}\nid: {token_id}\noffsets: ("
    after = f")\ntext: {make_visible(original_slice)!r}\nUTF-8: {utf8_hex(original_slice) or '—'}"
    # <wbr>: adjacent `white-space: pre` spans give the browser no other place to wrap a long line.
    return (
        f'<span class="{classes}"',
        f' title="{html.escape(before, quote=True)}',
        f'{html.escape(after, quote=True)}">{label}</span><wbr>{line_break}',
    )


def _group_name(original: str, spans: Sequence[TokenSpan]) -> str:
    """A name shared by one view's ``<details>`` (one card open at a time), distinct between views.

    Derived from the text and the tokens, so the same view gets the same name on every rerun
    and two tokenizers' views of one text get different names.
    """
    digest = hashlib.sha1(original.encode("utf-8", errors="surrogatepass"))
    digest.update("".join([f"\x00{span[0]}\x01{span[1]}\x01{span[2]}" for span in spans]).encode("utf-8", errors="surrogatepass"))
    return "tvz-" + digest.hexdigest()[:12]


def _card_parts(
    value: str, token_id: int | None, special: bool, unknown: bool, original_slice: str, origin: TokenOrigin | None, byte_level: bool
) -> tuple[str, str]:
    """The details card of one token, split around its offsets ``start, end``: a small two-column table, every value escaped."""
    token = readable_byte_level(value) if byte_level and not special else value
    rows = [
        ("token", make_visible(token) + (f"  ({make_visible(value)})" if token != value else "")),
        ("id", "—" if token_id is None else f"{token_id:,}"),
    ]
    rows_after = [
        ("text", make_visible(original_slice) if original_slice else "—"),
        ("UTF-8", utf8_hex(original_slice) or "—"),
    ]
    if unknown:
        rows_after.append(("note", "unknown token: the vocabulary cannot spell this text"))
    if origin is not None:
        rows_after.append(("origin", origin.describe(byte_level)))
    head = "".join(_card_cell(key, cell) for key, cell in rows)
    tail = "".join(_card_cell(key, cell) for key, cell in rows_after)
    return f'<span class="card">{head}<span class="k">offsets</span><span class="v">(', f")</span>{tail}</span>"


def _card_cell(key: str, value: str) -> str:
    return f'<span class="k">{html.escape(key)}</span><span class="v">{html.escape(value, quote=True)}</span>'


def copyable_ids(spans: Sequence[TokenSpan]) -> str:
    """The ids as a Python / JSON list, for a copy button (``st.code`` shows text, not HTML).

    >>> copyable_ids([TokenSpan("Hi", 5, 0, 2), TokenSpan("!", 0, 2, 3)])
    '[5, 0]'
    """
    return "[" + ", ".join("null" if span.id is None else str(span.id) for span in spans) + "]"


def copyable_tokens(spans: Sequence[TokenSpan]) -> str:
    """The tokens as a JSON list of strings (the model's own form: ``Ġ``, ``##``, ``▁`` kept).

    >>> copyable_tokens([TokenSpan("Ġhow", 1, 0, 4), TokenSpan("##s", 2, 4, 5), TokenSpan("가", 3, 5, 6)])
    '["Ġhow", "##s", "가"]'
    """
    return json.dumps([span.value for span in spans], ensure_ascii=False)


def token_origins(history: Any, vocab_size: int | None = None) -> dict[str, TokenOrigin]:
    """Token -> :class:`TokenOrigin` for the tokenizer at ``vocab_size`` (default: the trained one).

    BPE / WordPiece: the FIRST merge that created each token (among the merges kept at that
    size), alphabet symbols as ``alphabet``; Unigram: each piece's log-probability in
    ``history.model_at(vocab_size)``; WordLevel: each kept word's count. Special tokens are
    ``special``.

    >>> from tokviz.trainers import BpeTrainer
    >>> history = BpeTrainer(vocab_size=8, show_progress=False).train_from_word_counts({"hug": 10, "pug": 5})
    >>> origins = token_origins(history)
    >>> origins["ug"], origins["h"].kind
    (TokenOrigin(kind='merge', rank=0, left='u', right='g', count=15, score=15.0), 'alphabet')
    """
    origins: dict[str, TokenOrigin] = {}
    algorithm = history.algorithm.lower().removeprefix("sentencepiece-")  # SentencePiece's BPE and Unigram alike
    if algorithm in ("bpe", "wordpiece"):
        all_merges = getattr(history, "merges", None) or getattr(history, "merge_steps", ())
        merges = all_merges if vocab_size is None else all_merges[: merges_at_size(all_merges, vocab_size)]
        model = history.model if vocab_size is None else history.model_at(vocab_size)
        for token in model.get_vocab():
            origins[token] = TokenOrigin("alphabet")
        for step in merges:
            if origins.get(step.token, TokenOrigin("alphabet")).kind != "merge":
                origins[step.token] = TokenOrigin("merge", step.rank, step.left, step.right, step.count, float(step.score))
    elif algorithm == "unigram":
        model = history.model if vocab_size is None else history.model_at(vocab_size)
        for piece, score in model.vocab:
            origins[piece] = TokenOrigin("piece", score=float(score))
    elif algorithm == "wordlevel":
        kept = history.kept if vocab_size is None else history.kept[: max(vocab_size - len(history.special_tokens), 0)]
        for word, count in kept:
            origins[word] = TokenOrigin("word", count=count)
    for token in history.special_tokens:
        origins[token] = TokenOrigin("special")
    return origins


def spans_from_encoding(encoding: Any, unk_id: int | None = None) -> list[TokenSpan]:
    """Token spans of an ``Encoding`` (tokviz's or HF's: anything with tokens/ids/offsets/special_tokens_mask).

    A token is drawn as unknown when its id is ``unk_id`` (:func:`tokviz.metrics.unknown_token_id`): by id,
    so a Unigram model's ``<unk>`` is marked like WordPiece's ``[UNK]``.
    """
    tokens = encoding.tokens
    special_mask = getattr(encoding, "special_tokens_mask", None) or [0] * len(encoding.ids)
    specials = map(bool, special_mask)
    if unk_id is not None and not isinstance(unk_id, int):
        raise TypeError(f"spans_from_encoding takes the unknown token's id, not {unk_id!r}")
    unknowns = map(unk_id.__eq__, encoding.ids) if unk_id is not None else repeat(False)
    starts, ends = (zip(*encoding.offsets) if len(tokens) else ((), ()))
    # One C-level pass: tuple.__new__ per token instead of a Python __init__ (20,000 tokens a slider move).
    return list(map(_new_span, repeat(TokenSpan), zip(tokens, encoding.ids, starts, ends, specials, unknowns)))


_new_span = tuple.__new__


SPAN_STYLE = """<style>
.tokviz-spans { font-family: ui-monospace, SFMono-Regular, Menlo, monospace; font-size: 0.95rem; line-height: 2.1; }
.tokviz-spans .tok { border-radius: 4px; padding: 1px 2px; margin: 0 1px; white-space: pre; border: 1px solid rgba(0,0,0,0.08); }
.tokviz-spans .tok .mk { opacity: 0.45; }
.tokviz-spans .tok.special { background: #455a64; color: #fff; font-weight: 600; }
.tokviz-spans .tok.unk { outline: 2px solid #d32f2f; background: #ffcdd2 !important; }
.tokviz-spans .tok.diff { outline: 2px dashed #6a1b9a; outline-offset: 1px; }
.tokviz-spans .gap { color: #9e9e9e; white-space: pre; }
.tokviz-spans.present { font-size: 1.45rem; line-height: 2.2; }
</style>"""

#: Styles of the click-to-pin cards (``pinned=True``): a ``<details>`` per token; an open card opens
#: right under its token (the open ``<details>`` is the card's positioning box), over the next line,
#: so it is next to what was clicked and on the screen; the view reserves room under its last line
#: while a card is open (``:has``), for a card opened there.
PINNED_STYLE = """<style>
.tokviz-spans.pinned { position: relative; }
.tokviz-spans.pinned:has(details[open]) { padding-bottom: 5.6em; }
.tokviz-spans.pinned details.tw { display: inline; }
.tokviz-spans.pinned details.tw::details-content { display: contents; }
.tokviz-spans.pinned details.tw:not([open])::details-content { display: none; }
.tokviz-spans.pinned summary.tok { display: inline; list-style: none; cursor: pointer; }
.tokviz-spans.pinned summary.tok::-webkit-details-marker { display: none; }
.tokviz-spans.pinned summary.tok:hover { filter: brightness(0.93); }
.tokviz-spans.pinned summary.tok:focus-visible { outline: 2px solid #1565c0; outline-offset: 1px; }
.tokviz-spans.pinned details.tw[open] > summary.tok { outline: 2px solid #263238; outline-offset: 1px; }
.tokviz-spans.pinned details.tw[open] { position: relative; }
.tokviz-spans.pinned .card {
  position: absolute; left: 0; top: calc(100% + 6px); width: max-content; max-width: min(36em, 62vw);
  z-index: 30; display: flex; flex-wrap: wrap; gap: 0 14px;
  padding: 4px 10px; background: #fff; color: #263238; border: 1px solid #90a4ae; border-radius: 6px;
  box-shadow: 0 2px 8px rgba(0,0,0,0.15); font-size: 0.85em; line-height: 1.6; white-space: normal; max-height: 5.4em; overflow-y: auto;
}
/* Where the browser anchors (Chromium 125+): the card follows its token and flips above it, or to its left,
   rather than leave the screen (a token on the last visible line, or at the right edge). */
.tokviz-spans.pinned details.tw { anchor-scope: --tokviz-token; }
.tokviz-spans.pinned details.tw > summary.tok { anchor-name: --tokviz-token; }
@supports (position-anchor: --tokviz-token) and (position-try-fallbacks: flip-block) {
  .tokviz-spans.pinned details.tw[open] { position: static; }
  .tokviz-spans.pinned .card {
    position: fixed; position-anchor: --tokviz-token; top: anchor(bottom); left: anchor(left); margin: 6px 0;
    position-try-fallbacks: flip-block, flip-inline, flip-block flip-inline;
  }
}
.tokviz-spans.pinned .card .k { color: #607d8b; margin-right: 5px; }
.tokviz-spans.pinned .card .v { white-space: pre-wrap; overflow-wrap: anywhere; font-weight: 600; }
.tokviz-spans.pinned .card .k:not(:first-child)::before { content: "· "; color: #b0bec5; }
</style>"""


def merges_at_size(merges: Sequence[MergeStep], vocab_size: int) -> int:
    """How many merges the model at ``vocab_size`` keeps (as ``history.model_at`` replays them).

    A training stops at the first merge whose vocab size after it reaches the target.

    >>> steps = [MergeStep(0, "u", "g", "ug", 20, 20.0, 8), MergeStep(1, "u", "n", "un", 16, 16.0, 9)]
    >>> merges_at_size(steps, 7), merges_at_size(steps, 8), merges_at_size(steps, 9), merges_at_size(steps, 50)
    (0, 1, 2, 2)
    """
    if not merges or vocab_size < merges[0].vocab_size:
        return 0
    low, high = 0, len(merges)
    while low < high:  # vocab sizes after each merge never decrease
        middle = (low + high) // 2
        if merges[middle].vocab_size >= vocab_size:
            high = middle
        else:
            low = middle + 1
    return min(low + 1, len(merges))
