"""One text through every stage of a tokenizer, as tables and escaped HTML.

Everything here is drawn from :meth:`tokviz.Tokenizer.trace`: the original text against
the normalized one (character by character, aligned through the normalizer's alignments,
changed characters highlighted), the pre-tokens (a table of text and original offsets,
and spans over the text), the model's tokens, the post-processed ``Encoding`` as a table,
and a bytes view of the raw text (each character's code point, name and UTF-8 bytes, and
the GPT-2 byte-level symbols those bytes become).

>>> [(column.original, column.normalized, column.status) for column in alignment_columns(_demo_trace())]
[('C', 'c', 'changed'), ('a', 'a', 'same'), ('f', 'f', 'same'), ('é', 'e', 'changed')]
>>> bytes_frame("a가").to_dict("list")["UTF-8 bytes"]
['61', 'EA B0 80']

What this leaves out: styling beyond a few inline classes (the page lays things out), and
more than one text at a time.
"""

from __future__ import annotations

import html
import unicodedata
from dataclasses import dataclass
from typing import Any

import pandas as pd

from tokviz.byte_level import bytes_to_symbols
from tokviz.viz.spans import TokenSpan, make_visible, readable_byte_level, utf8_hex

#: Status of one aligned column: the normalizer kept, changed, dropped or added characters.
STATUSES = ("same", "changed", "removed", "inserted")


@dataclass(frozen=True, slots=True)
class AlignedColumn:
    """One column of the original/normalized view: original characters over the normalized ones."""

    original: str
    normalized: str
    status: str  # one of STATUSES
    start: int  # original char offsets covered by this column
    end: int


def alignment_columns(sequence: Any) -> list[AlignedColumn]:
    """Pair the original text with the normalized text through ``sequence.alignments``.

    Consecutive normalized characters that come from the same original span form one column
    (``'ﬁ'`` over ``'fi'`` under NFKC); original characters no normalized character comes from
    form ``removed`` columns (a stripped accent, a dropped control character); normalized
    characters aligned to nothing (or to characters an earlier column already showed) are
    ``inserted``. ``sequence`` is a :class:`tokviz.trace.SequenceTrace`.
    """
    original, normalized, alignments = sequence.original, sequence.normalized, sequence.alignments
    columns: list[AlignedColumn] = []
    cursor = 0

    def removed_up_to(limit: int) -> None:
        nonlocal cursor
        for index in range(cursor, limit):
            columns.append(AlignedColumn(original[index], "", "removed", index, index + 1))
        cursor = max(cursor, limit)

    index = 0
    while index < len(normalized):
        start, end = alignments[index]
        group_end = index + 1
        while group_end < len(normalized) and tuple(alignments[group_end]) == (start, end):
            group_end += 1
        chars = normalized[index:group_end]
        removed_up_to(start)
        if start >= end or end <= cursor:
            columns.append(AlignedColumn("", chars, "inserted", cursor, cursor))
        else:
            source, first = original[max(start, cursor) : end], max(start, cursor)
            kept = chars.find(source) if len(source) == 1 and source != chars else -1
            if kept >= 0:  # HF aligns inserted chars to their neighbour: 'a' -> '▁a' is an insertion, then 'a'
                if kept:
                    columns.append(AlignedColumn("", chars[:kept], "inserted", first, first))
                columns.append(AlignedColumn(source, source, "same", first, end))
                if chars[kept + 1 :]:
                    columns.append(AlignedColumn("", chars[kept + 1 :], "inserted", end, end))
            else:
                columns.append(AlignedColumn(source, chars, "same" if source == chars else "changed", first, end))
            cursor = end
        index = group_end
    removed_up_to(len(original))
    return columns


_DIFF_STYLE = """<style>
.tokviz-diff { display: flex; flex-wrap: wrap; font-family: ui-monospace, SFMono-Regular, Menlo, monospace; font-size: 0.95rem; gap: 2px 1px; }
.tokviz-diff .col { display: inline-flex; flex-direction: column; align-items: center; border-radius: 4px; padding: 0 2px; min-width: 0.9em; }
.tokviz-diff .col span { white-space: pre; line-height: 1.5; }
.tokviz-diff .col .n { border-top: 1px dashed #bdbdbd; }
.tokviz-diff .changed { background: #fff59d; }
.tokviz-diff .removed { background: #ffcdd2; }
.tokviz-diff .removed .o { text-decoration: line-through; }
.tokviz-diff .inserted { background: #c8e6c9; }
.tokviz-diff .legend { width: 100%; font-family: sans-serif; font-size: 0.8rem; color: #757575; }
</style>"""


def normalization_html(sequence: Any) -> str:
    """The original text over the normalized text, column by column, changes highlighted.

    Each column shows original characters on top and what the normalizer made of them below,
    whitespace made visible; every user character goes through :func:`html.escape`.

    >>> snippet = normalization_html(_demo_trace())
    >>> snippet.count('class="col changed"'), snippet.count('class="col same"')
    (2, 2)
    """
    pieces = [_DIFF_STYLE, '<div class="tokviz-diff">']
    for column in alignment_columns(sequence):
        title = f"original {column.start}:{column.end} {make_visible(column.original)!r} → {make_visible(column.normalized)!r} ({column.status})"
        pieces.append(
            f'<div class="col {column.status}" title="{html.escape(title, quote=True)}">'
            f'<span class="o">{html.escape(make_visible(column.original)) or "&nbsp;"}</span>'
            f'<span class="n">{html.escape(make_visible(column.normalized)) or "&nbsp;"}</span></div>'
        )
    pieces.append(
        '<div class="legend">top: original · bottom: normalized · '
        "yellow: changed · red: removed · green: inserted</div></div>"
    )
    return "".join(pieces)


def normalization_counts(sequence: Any) -> dict[str, int]:
    """How many columns the normalizer kept, changed, removed and inserted.

    >>> normalization_counts(_demo_trace())
    {'same': 2, 'changed': 2, 'removed': 0, 'inserted': 0}
    """
    counts = dict.fromkeys(STATUSES, 0)
    for column in alignment_columns(sequence):
        counts[column.status] += 1
    return counts


def pre_tokens_frame(sequence: Any) -> pd.DataFrame:
    """The pre-tokens: their text as the model sees it, the ORIGINAL characters they cover and
    those characters' offsets. ``added token`` marks an added or special token cut out before
    normalization.

    >>> pre_tokens_frame(_demo_trace()).to_dict("records")
    [{'pre-token': 'cafe', 'original text': 'Café', 'start': 0, 'end': 4, 'added token': False}]
    """
    rows = [
        {
            "pre-token": make_visible(pre_token.text),
            "original text": make_visible(sequence.original[pre_token.offsets[0] : pre_token.offsets[1]]),
            "start": pre_token.offsets[0],
            "end": pre_token.offsets[1],
            "added token": pre_token.added,
        }
        for pre_token in sequence.pre_tokens
    ]
    return pd.DataFrame(rows, columns=["pre-token", "original text", "start", "end", "added token"])


def pre_token_spans(sequence: Any) -> list[TokenSpan]:
    """Spans of the pre-tokens over the original text, for :func:`tokviz.viz.spans.render_token_spans`."""
    return [
        TokenSpan(pre_token.text, index, pre_token.offsets[0], pre_token.offsets[1])
        for index, pre_token in enumerate(sequence.pre_tokens)
    ]


def model_token_spans(sequence: Any, unk_id: int | None = None) -> list[TokenSpan]:
    """Spans of the model's tokens (before post-processing) over the original text; unknowns by id."""
    spans = []
    for pre_token in sequence.pre_tokens:
        for token in pre_token.tokens:
            spans.append(
                TokenSpan(token.value, token.id, token.offsets[0], token.offsets[1], special=pre_token.added,
                          unknown=unk_id is not None and token.id == unk_id)
            )
    return spans


ENCODING_COLUMNS = ["position", "token", "id", "type id", "attention mask", "special tokens mask", "word id", "sequence id", "offsets"]


def encoding_frame(encoding: Any, byte_level: bool = False) -> pd.DataFrame:
    """The post-processed encoding, one row per token: what a model receives.

    ``word id`` and ``sequence id`` are empty for tokens the post-processor added; with
    ``byte_level``, byte symbols are shown as the text they spell (``'Ã©'`` as ``'é'``).
    """
    word_ids = encoding.word_ids
    sequence_ids = encoding.sequence_ids
    rows = [
        {
            "position": position,
            "token": readable_byte_level(token) if byte_level and not special else make_visible(token),
            "id": token_id,
            "type id": type_id,
            "attention mask": attention,
            "special tokens mask": special,
            "word id": word_ids[position],
            "sequence id": sequence_ids[position],
            "offsets": f"({start}, {end})",
        }
        for position, (token, token_id, type_id, attention, special, (start, end)) in enumerate(
            zip(encoding.tokens, encoding.ids, encoding.type_ids, encoding.attention_mask, encoding.special_tokens_mask, encoding.offsets)
        )
    ]
    frame = pd.DataFrame(rows, columns=ENCODING_COLUMNS)
    # Nullable integers: a missing word id shows as empty, not as 'nan' or a float.
    return frame.astype({"word id": "Int64", "sequence id": "Int64"})


def _char_name(char: str) -> str:
    name = unicodedata.name(char, "")
    if name:
        return name
    return f"<{unicodedata.category(char)} U+{ord(char):04X}>"  # controls have no name, only a category


def bytes_frame(text: str) -> pd.DataFrame:
    """Each character: its code point, name, UTF-8 bytes and the byte-level symbols of those bytes.

    >>> bytes_frame(" \\n").to_dict("list")["byte-level"]
    ['Ġ', 'Ċ']
    """
    rows = [
        {
            "position": position,
            "character": make_visible(char),
            "code point": f"U+{ord(char):04X}",
            "name": _char_name(char),
            "UTF-8 bytes": utf8_hex(char),
            "bytes": len(char.encode("utf-8", errors="surrogatepass")),
            "byte-level": byte_level_text(char),
        }
        for position, char in enumerate(text)
    ]
    return pd.DataFrame(rows, columns=["position", "character", "code point", "name", "UTF-8 bytes", "bytes", "byte-level"])


def bytes_summary(text: str) -> dict[str, int]:
    """Characters against UTF-8 bytes: ``'a가 짧'`` has 4 characters and 8 bytes.

    >>> bytes_summary("a가 짧")
    {'characters': 4, 'UTF-8 bytes': 8}
    """
    return {"characters": len(text), "UTF-8 bytes": len(text.encode("utf-8", errors="surrogatepass"))}


def byte_level_text(text: str) -> str:
    """The text as GPT-2's byte-level pre-tokenizer sees it: one printable symbol per byte.

    >>> byte_level_text("a가 b\\n")
    'aê°ĢĠbĊ'
    """
    return bytes_to_symbols(text.encode("utf-8", errors="surrogatepass"))


def _demo_trace() -> Any:
    """A tiny trace for the examples: lowercase and strip accents over ``'Café'``."""
    from tokviz import normalizers
    from tokviz.models import WordLevel
    from tokviz.tokenizer import Tokenizer

    tokenizer = Tokenizer(WordLevel({"[UNK]": 0, "cafe": 1}, unk_token="[UNK]"))
    tokenizer.normalizer = normalizers.Sequence([normalizers.NFD(), normalizers.Lowercase(), normalizers.StripAccents()])
    return tokenizer.trace("Café").sequences[0]
