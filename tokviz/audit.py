"""Audit a vocabulary: the tokens a tokenizer can never produce, the ones it wastes, the texts it cannot give back.

``audit(tokenizer, texts)`` looks at every token of the model's vocabulary and says, with a witness or a proof:

* **own text** — the token's text, encoded alone as the pipeline would see it (a WordPiece ``##`` piece as
  the continuation of a word, a Metaspace ``▁`` as a space, a byte-level token as its bytes), and the
  segmentation it gets; the verdict is what HF ``tokenizers`` gives for the same text (tests check it);
* **reachable** — a short witness text whose encoding holds the token (always checked by encoding it);
* **unreachable** — only with a proof: a character the normalizer never lets through (uppercase under
  Lowercase, composed forms under NFD), a character or a boundary the pre-tokenizer always removes or
  splits, BPE's merge order (the merges inside a token's span run as they do on its text alone, so if they
  do not build it there they build it nowhere), a Unigram piece beaten on its own text (swapping the better
  segmentation in beats every path through the piece, in any context);
* **cannot decide** — neither: the search for a witness had a bound, and the bound is stated.

With texts it also counts the tokens they never use, the texts ``decode(encode(x))`` does not give back (by
cause), and BPE's intermediate residues ``R(t) = F1 / (F1 + F2)`` (F1: how often ``t`` ends in an encoding,
F2: how often a later merge takes it further; from a training's history when there is one). Partial UTF-8
tokens, duplicates and added tokens that plain text produces need no texts.

What it leaves out: BPE dropout and Unigram sampling (it audits the deterministic encoder), and pre-tokenizers
whose splits depend on context (regular expressions) prove nothing here — their tokens get witnesses or
"cannot decide". It reads the tokenizer through public APIs only: ``to_str()``, ``encode``, ``decode``,
``get_vocab``, ``get_added_tokens_decoder``, ``normalizer.normalize_str``, ``pre_tokenizer.pre_tokenize_str``
and ``model.tokenize``.
"""

from __future__ import annotations

import heapq
import json
import math
import unicodedata
from collections import Counter, defaultdict
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import asdict, dataclass, field
from functools import lru_cache
from typing import Any

from tokviz.byte_level import UNICODE_TO_BYTES
from tokviz.errors import TokvizError

#: Statuses a model token gets.
REACHABLE, UNREACHABLE, UNDECIDED, ADDED = "reachable", "unreachable", "cannot decide", "added token"
#: Round-trip causes, in the order they are tested.
ROUND_TRIP_CAUSES = ("unknown token", "bytes", "whitespace handling", "normalization", "other")
#: Most left (and right) contexts tried per token when its own text is not a witness.
CONTEXT_BOUND = 16
#: Longest whole words of the vocabulary also tried as left contexts (WordPiece's ``##`` pieces need one).
WORD_START_CONTEXTS = 8
#: Most characters tried as witnesses of a byte-fallback token ``<0xNN>``.
BYTE_CANDIDATES = 64
#: Default threshold under which a BPE token counts as an intermediate residue (LiteToken's order of size).
DEFAULT_RESIDUE_THRESHOLD = 0.05
#: Examples kept per round-trip cause, and characters shown for each example.
ROUND_TRIP_EXAMPLES = 5
EXAMPLE_CHARS = 200

Progress = Callable[[float, str], None]


class AuditError(TokvizError):
    """The tokenizer cannot be audited (an unknown model kind, nothing in its vocabulary)."""


# ---------------------------------------------------------------------------------------------- records


@dataclass(frozen=True, slots=True)
class TokenVerdict:
    """What the audit found for one token of the model's vocabulary.

    ``shown`` is the token as text (``▁`` as a space, bytes decoded, ``##`` kept); ``own_text`` the text
    encoded alone (``None``: its bytes are not UTF-8); ``segmentation`` the tokens that text gets;
    ``witness`` a text whose encoding holds the token (``None`` unless reachable).
    """

    id: int
    token: str
    shown: str
    status: str
    reason: str
    own_text: str | None = None
    segmentation: tuple[str, ...] = ()
    witness: str | None = None

    @property
    def own_text_ok(self) -> bool:
        return self.segmentation == (self.token,)


@dataclass(frozen=True, slots=True)
class Item:
    """One row of a finding: tokens (one, or a group of duplicates), a reason in words and a witness."""

    tokens: tuple[str, ...]
    ids: tuple[int, ...]
    shown: str
    reason: str
    witness: str = ""
    detail: str = ""  # the segmentation it gets instead, the characters it is part of, ...


@dataclass(frozen=True, slots=True)
class Finding:
    key: str
    title: str
    description: str
    items: tuple[Item, ...]
    share_of: int  # the vocab size the share is taken of

    @property
    def count(self) -> int:
        return sum(len(item.ids) for item in self.items)

    @property
    def share(self) -> float:
        return self.count / self.share_of if self.share_of else 0.0


@dataclass(frozen=True, slots=True)
class Residue:
    """BPE's residue ratio of one merged token: ``r = f1 / (f1 + f2)``."""

    id: int
    token: str
    shown: str
    f1: int  # times it ends in an encoding
    f2: int  # times a later merge takes it further

    @property
    def r(self) -> float:
        total = self.f1 + self.f2
        return self.f1 / total if total else math.nan


@dataclass(frozen=True, slots=True)
class RoundTripFailure:
    text: str
    decoded: str
    cause: str


@dataclass(frozen=True, slots=True)
class AuditReport:
    model_type: str
    vocab_size: int  # with added tokens
    model_vocab_size: int
    verdicts: tuple[TokenVerdict, ...]
    findings: tuple[Finding, ...]
    residues: tuple[Residue, ...] = ()
    residue_source: str = ""  # "history", "texts" or "" (not BPE / no texts)
    texts_count: int = 0
    texts_chars: int = 0
    round_trip_counts: tuple[tuple[str, int], ...] = ()
    round_trip_examples: tuple[RoundTripFailure, ...] = ()
    token_counts: tuple[tuple[int, int], ...] = ()  # (id, times in the texts' encodings), used ones only
    notes: tuple[str, ...] = ()

    def finding(self, key: str) -> Finding:
        for finding in self.findings:
            if finding.key == key:
                return finding
        raise KeyError(key)

    def verdict(self, token: str) -> TokenVerdict:
        for verdict in self.verdicts:
            if verdict.token == token:
                return verdict
        raise KeyError(token)

    def residues_below(self, threshold: float) -> tuple[Residue, ...]:
        """Merged tokens whose R(t) is under ``threshold``, lowest first."""
        return tuple(sorted((r for r in self.residues if r.r < threshold), key=lambda r: (r.r, r.id)))

    def summary(self, residue_threshold: float = DEFAULT_RESIDUE_THRESHOLD) -> list[dict[str, Any]]:
        """One row per finding: what it is, how many tokens, their share of the vocabulary."""
        rows = [{"finding": f.title, "tokens": f.count, "share of vocab": f.share, "what it means": f.description}
                for f in self.findings]
        if self.residue_source:
            below = self.residues_below(residue_threshold)
            rows.append({"finding": f"Intermediate residues (R < {residue_threshold:g})", "tokens": len(below),
                         "share of vocab": len(below) / self.vocab_size if self.vocab_size else 0.0,
                         "what it means": f"BPE tokens that later merges almost always take further (F1, F2 from {self.residue_source})."})
        if self.texts_count:
            failed = sum(count for _, count in self.round_trip_counts)
            rows.append({"finding": "Round-trip failures", "tokens": failed, "share of vocab": math.nan,
                         "what it means": f"texts (of {self.texts_count:,}) where decode(encode(x)) != x; the count is of texts, not tokens."})
        return rows

    def to_json(self, residue_threshold: float = DEFAULT_RESIDUE_THRESHOLD) -> str:
        """The whole report as JSON (the download): summary, findings with their items, verdicts, residues."""
        data = {
            "model_type": self.model_type, "vocab_size": self.vocab_size, "model_vocab_size": self.model_vocab_size,
            "texts": {"count": self.texts_count, "characters": self.texts_chars},
            "summary": [{k: (None if isinstance(v, float) and math.isnan(v) else v) for k, v in row.items()}
                        for row in self.summary(residue_threshold)],
            "findings": {f.key: {"title": f.title, "description": f.description, "count": f.count,
                                 "items": [{"tokens": list(i.tokens), "ids": list(i.ids), "shown": i.shown, "reason": i.reason,
                                            "witness": i.witness, "detail": i.detail} for i in f.items]}
                         for f in self.findings},
            "residues": {"source": self.residue_source, "threshold": residue_threshold,
                         "tokens": [{"id": r.id, "token": r.token, "f1": r.f1, "f2": r.f2,
                                     "r": None if math.isnan(r.r) else r.r} for r in self.residues]},
            "round_trip": {"counts": dict(self.round_trip_counts), "examples": [asdict(e) for e in self.round_trip_examples]},
            "verdicts": [{"id": v.id, "token": v.token, "shown": v.shown, "status": v.status, "reason": v.reason,
                          "own_text": v.own_text, "segmentation": list(v.segmentation), "witness": v.witness} for v in self.verdicts],
            "notes": list(self.notes),
        }
        return json.dumps(data, ensure_ascii=False)


# ---------------------------------------------------------------------------------------------- UTF-8 parts

_LEADS = {2: range(0xC2, 0xE0), 3: range(0xE0, 0xF0), 4: range(0xF0, 0xF5)}


def _second_range(lead: int) -> range:
    """Valid second bytes after ``lead`` (no overlong forms, no surrogates, nothing past U+10FFFF)."""
    return {0xE0: range(0xA0, 0xC0), 0xED: range(0x80, 0xA0), 0xF0: range(0x90, 0xC0), 0xF4: range(0x80, 0x90)}.get(lead, range(0x80, 0xC0))


def _completions(fragment: bytes, start_in_char: bool, limit: int = 4) -> tuple[int, tuple[str, ...]]:
    """How many characters hold ``fragment`` at their start (``start_in_char``) or after their lead byte
    (a run of continuation bytes), and a few of them.

    >>> _completions(bytes([0xE4, 0xB8]), True)
    (64, ('一', '丁', '丂', '七'))
    """
    total, examples = 0, []
    for length in (2, 3, 4):
        offsets = [0] if start_in_char else range(1, length - len(fragment) + 1)
        for offset in offsets:
            if offset + len(fragment) > length:
                continue
            fixed = {offset + i: byte for i, byte in enumerate(fragment)}
            for lead in _LEADS[length]:
                if fixed.get(0, lead) != lead:
                    continue
                for second in _second_range(lead):
                    if fixed.get(1, second) != second:
                        continue
                    free = sum(1 for position in range(2, length) if position not in fixed)
                    if any(not 0x80 <= fixed[p] < 0xC0 for p in fixed if p >= 2):
                        continue
                    total += 64**free
                    # One example per (lead, second byte), so they differ early; only where both are fixed do
                    # the examples vary the last byte (the first 2 bytes of '中' -> 一, 丁, 丂, 七).
                    vary_last = 0 in fixed and 1 in fixed and free and (length - 1) not in fixed
                    for last in range(0x80, 0xC0 if vary_last else 0x81):
                        if len(examples) >= limit:
                            break
                        raw = bytes([lead, second] + [fixed.get(p, last if p == length - 1 else 0x80) for p in range(2, length)])
                        char = raw.decode("utf-8")
                        if char not in examples:
                            examples.append(char)
    return total, tuple(examples)


def utf8_parts(data: bytes) -> str | None:
    """For bytes that are not UTF-8 on their own, which characters they are parts of; ``None`` when they are UTF-8.

    >>> print(utf8_parts("中".encode()[:2]))
    the first 2 bytes of a character (1 of 64: 一, 丁, 丂, 七…)
    >>> print(utf8_parts(b"a" + "é".encode()[:1]))
    'a', then the first byte of a character (1 of 64: À, Á, Â, Ã…)
    """
    try:
        data.decode("utf-8")
        return None
    except UnicodeDecodeError:
        pass
    parts: list[str] = []
    index = 0
    head = 0
    while head < len(data) and 0x80 <= data[head] < 0xC0:
        head += 1
    if head:
        count, examples = _completions(data[:head], start_in_char=False)
        what = "byte" if head == 1 else f"{head} bytes"
        parts.append(f"a continuation {what} of a character (1 of {count:,}: {', '.join(examples)}…)")
        index = head
    # whole characters in the middle, then an unfinished one at the end
    tail = len(data)
    for start in range(max(index, len(data) - 3), len(data)):
        byte = data[start]
        if byte >= 0xC0:
            need = 2 if byte < 0xE0 else 3 if byte < 0xF0 else 4
            if start + need > len(data):
                tail = start
            break
    middle = data[index:tail]
    if middle:
        try:
            parts.append(repr(middle.decode("utf-8")))
        except UnicodeDecodeError:
            parts.append(f"bytes {middle.hex(' ')} that are no UTF-8")
    if tail < len(data):
        fragment = data[tail:]
        count, examples = _completions(fragment, start_in_char=True)
        what = "byte" if len(fragment) == 1 else f"{len(fragment)} bytes"
        parts.append(f"the first {what} of a character (1 of {count:,}: {', '.join(examples)}…)")
    return ", then ".join(parts)


def _in_some_utf8(data: bytes) -> bool:
    """Whether ``data`` occurs in the UTF-8 of some text (bytes C0, C1 and F5-FF never do, nor broken sequences).

    >>> _in_some_utf8(bytes([0xE4, 0xB8])), _in_some_utf8(bytes([0xC0])), _in_some_utf8(b"a" + bytes([0x80]))
    (True, False, False)
    """
    try:
        data.decode("utf-8")
        return True
    except UnicodeDecodeError:
        pass
    head = 0
    while head < len(data) and 0x80 <= data[head] < 0xC0:
        head += 1
    if head > 3 or (head and _completions(data[:head], False, 1)[0] == 0):
        return False
    rest = data[head:]
    tail = len(rest)
    for start in range(max(0, len(rest) - 3), len(rest)):
        if rest[start] >= 0xC0:
            need = 2 if rest[start] < 0xE0 else 3 if rest[start] < 0xF0 else 4
            if start + need > len(rest):
                tail = start
            break
    try:
        rest[:tail].decode("utf-8")
    except UnicodeDecodeError:
        return False
    return tail == len(rest) or _completions(rest[tail:], True, 1)[0] > 0


# ---------------------------------------------------------------------------------------------- normalizers


@lru_cache(maxsize=1)
def _lowercase_image() -> frozenset[str]:
    """Every character that lowercasing some character can output (Lowercase never outputs the others)."""
    image: set[str] = set()
    for code in range(0x110000):
        if 0xD800 <= code < 0xE000:
            continue
        image.update(chr(code).lower())
    return frozenset(image)


def _flatten(component: Any) -> list[dict[str, Any]]:
    if not isinstance(component, dict):
        return []
    if component.get("type") == "Sequence":
        key = "normalizers" if "normalizers" in component else "pretokenizers" if "pretokenizers" in component else "decoders"
        return [part for item in component.get(key, []) for part in _flatten(item)]
    return [component]


def _kill_reason(component: Mapping[str, Any], char: str) -> str | None:
    """Why ``component`` never outputs ``char`` (for any input), or ``None`` when it may."""
    kind = component.get("type")
    name = f"U+{ord(char):04X} {char!r}"
    if kind == "Lowercase" and char not in _lowercase_image():
        return f"the normalizer's Lowercase never outputs {name}: no character lowercases to it"
    if kind in ("NFD", "NFKD", "NFC", "NFKC") and unicodedata.normalize(kind, char) != char:
        becomes = " ".join(f"U+{ord(c):04X}" for c in unicodedata.normalize(kind, char))
        return f"the normalizer's {kind} never outputs {name}: it becomes {becomes}"
    if kind == "StripAccents" and unicodedata.category(char) == "Mn":
        return f"the normalizer's StripAccents removes every combining mark such as {name}"
    if kind == "Replace":
        pattern = component.get("pattern", {})
        if pattern.get("String") == char and char not in component.get("content", ""):
            return f"the normalizer replaces every {name} with {component.get('content', '')!r}"
    if kind == "BertNormalizer":
        lowercase = component.get("lowercase", True)
        strip = component.get("strip_accents")
        strip = lowercase if strip is None else strip
        if component.get("clean_text", True):
            if char in "\t\n\r" or (unicodedata.category(char) == "Zs" and char != " "):
                return f"BertNormalizer's clean_text turns {name} into a plain space"
            if unicodedata.category(char) in ("Cc", "Cf") or char in "\x00\ufffd":
                return f"BertNormalizer's clean_text removes {name}"
        if strip and (unicodedata.category(char) == "Mn" or unicodedata.normalize("NFD", char) != char):
            return f"BertNormalizer strips accents: {name} never comes out composed or as a mark"
        if lowercase and char not in _lowercase_image():
            return f"BertNormalizer lowercases: no character lowercases to {name}"
    return None


@lru_cache(maxsize=1)
def _lowercase_preimages() -> dict[str, tuple[str, ...]]:
    """For each character, the other characters whose lowercase holds it (``'é' -> ('É',)``)."""
    preimages: dict[str, list[str]] = defaultdict(list)
    for code in range(0x110000):
        if 0xD800 <= code < 0xE000:
            continue
        char = chr(code)
        lowered = char.lower()
        if lowered != char:
            for out in set(lowered):
                preimages[out].append(char)
    return {char: tuple(chars) for char, chars in preimages.items()}


def _sources(component: Mapping[str, Any], char: str) -> set[str] | None:
    """The input characters from which ``component`` can output ``char`` (``None``: it may make it from anything)."""
    kind = component.get("type")
    if kind in ("Strip", "StripAccents"):
        return {char}
    if kind == "Prepend":
        return {char} if char not in component.get("prepend", "") else None
    if kind == "Replace":
        return {char} if char not in component.get("content", "") else None
    if kind == "Lowercase":
        return {char, *_lowercase_preimages().get(char, ())}
    return None


def _killed(components: Sequence[Mapping[str, Any]], char: str, depth: int = 0) -> str | None:
    """Why ``components`` (applied in order) never output ``char``, or ``None``."""
    if not components or depth > 4:
        return None
    last = components[-1]
    reason = _kill_reason(last, char)
    if reason is not None:
        return reason
    sources = _sources(last, char)
    if sources is None or len(sources) > 8:
        return None
    reasons = []
    for source in sorted(sources):
        why = _killed(components[:-1], source, depth + 1)
        if why is None:
            return None
        reasons.append(why)
    return reasons[0] if len(reasons) == 1 else "; ".join(dict.fromkeys(reasons))


def normalizer_kill(normalizer: Any, char: str) -> str | None:
    """Why no input makes the normalizer output ``char``, or ``None``.

    A step never outputs it, or it can make it only from characters that earlier steps never output
    (NFD then Lowercase: 'é' could only come from 'é' or 'É', and NFD leaves neither).
    """
    return _killed(_flatten(normalizer), char)


# ---------------------------------------------------------------------------------------------- pre-tokenizers


def _is_punctuation(char: str) -> bool:
    """HF's BERT punctuation: ASCII non-alphanumeric printable symbols, or any Unicode P* character."""
    code = ord(char)
    if 33 <= code <= 47 or 58 <= code <= 64 or 91 <= code <= 96 or 123 <= code <= 126:
        return True
    return unicodedata.category(char).startswith("P")


def _is_cjk(char: str) -> bool:
    code = ord(char)
    return any(low <= code <= high for low, high in (
        (0x4E00, 0x9FFF), (0x3400, 0x4DBF), (0x20000, 0x2A6DF), (0x2A700, 0x2B73F), (0x2B740, 0x2B81F),
        (0x2B820, 0x2CEAF), (0xF900, 0xFAFF), (0x2F800, 0x2FA1F)))


def _word_class(char: str) -> str | None:
    """The class Whitespace's ``\\w+|[^\\w\\s]+`` puts a character in, where Python and Rust surely agree."""
    if char.isalnum() and unicodedata.category(char)[0] in "LN":
        return "word"
    if unicodedata.category(char)[0] in "PS":
        return "punct"
    return None


def pre_tokenizer_split(pre_tokenizer: Any, text: str, continuation: bool) -> str | None:
    """Why the pre-tokenizer never leaves ``text`` inside one word (for any surrounding text), or ``None``.

    ``continuation``: the text must continue a word (a ``##`` piece), so a forced split before it counts too.
    """
    for component in _flatten(pre_tokenizer):
        kind = component.get("type")
        if kind in ("Whitespace", "WhitespaceSplit", "BertPreTokenizer"):
            spaces = [char for char in text if char.isspace()]
            if spaces:
                return f"the pre-tokenizer {kind} splits at every whitespace character such as {spaces[0]!r}"
        if kind == "Whitespace":
            classes = {_word_class(char) for char in text} - {None}
            if classes == {"word", "punct"}:
                return "the pre-tokenizer Whitespace always splits a run of letters or digits from a run of punctuation"
        if kind in ("BertPreTokenizer", "Punctuation") and (kind == "BertPreTokenizer" or component.get("behavior", "isolated") == "isolated"):
            isolated = [char for char in text if _is_punctuation(char) or (kind == "BertPreTokenizer" and _is_cjk(char))]
            if isolated and (len(text) > 1 or continuation):
                return f"the pre-tokenizer {kind} makes every {isolated[0]!r} a word of its own"
        if kind == "Digits":
            digits = [char for char in text if char.isdecimal() and char.isascii()]
            if digits and component.get("individual_digits") and (len(text) > 1 or continuation):
                return "the pre-tokenizer Digits makes every digit a word of its own"
    return None


def _metaspace_split(pipeline: Any, body: str) -> str | None:
    """Metaspace with ``split`` starts a word at every ``▁``: a token with one past its first character never forms."""
    for component in _flatten(pipeline.pre_tokenizer):
        if component.get("type") == "Metaspace" and component.get("split", True):
            marker = component.get("replacement", "▁")
            if marker in body[1:]:
                return f"the pre-tokenizer Metaspace starts a new word at every {marker!r}, and this token holds one after its start"
    return None


# ---------------------------------------------------------------------------------------------- the pipeline


@dataclass(slots=True)
class _Pipeline:
    """What the audit reads of a tokenizer, once: its JSON parts, its vocabulary and how to show tokens."""

    tokenizer: Any
    model: dict[str, Any]
    normalizer: Any
    pre_tokenizer: Any
    decoder: Any
    model_vocab: dict[str, int]
    added: dict[int, Any]
    byte_level: bool
    markers: frozenset[str]  # characters that stand for a space (Metaspace's ▁)
    marker_from_pre_tokenizer: bool
    prefix: str  # continuing_subword_prefix ("##")
    suffix: str  # end_of_word_suffix ("</w>")
    scores: dict[str, float] = field(default_factory=dict)
    unk_id: int | None = None
    prepends: bool = False  # a Prepend normalizer adds the space marker to every text
    _word_starts: list[str] | None = None

    @classmethod
    def of(cls, tokenizer: Any) -> _Pipeline:
        try:
            data = json.loads(tokenizer.to_str())
        except Exception as error:  # pragma: no cover - every tokviz tokenizer serializes
            raise AuditError(f"The tokenizer cannot be audited: it does not serialize ({error}).") from error
        model = data.get("model") or {}
        kind = model.get("type")
        if kind not in ("BPE", "WordPiece", "WordLevel", "Unigram"):
            raise AuditError(f"The audit knows BPE, WordPiece, WordLevel and Unigram models, not {kind!r}.")
        components = _flatten(data.get("pre_tokenizer")) + _flatten(data.get("decoder")) + _flatten(data.get("normalizer"))
        byte_level = any(c.get("type") == "ByteLevel" for c in components)
        markers = {c["replacement"] for c in components if c.get("type") == "Metaspace" and c.get("replacement")}
        from_pre = bool(markers & {c.get("replacement") for c in _flatten(data.get("pre_tokenizer")) if c.get("type") == "Metaspace"})
        for c in _flatten(data.get("normalizer")):
            if c.get("type") == "Replace" and c.get("pattern", {}).get("String") == " " and len(c.get("content", "")) == 1:
                markers.add(c["content"])
        prepends = any(c.get("type") == "Prepend" and c.get("prepend") in markers for c in _flatten(data.get("normalizer")))
        scores: dict[str, float] = {}
        if kind == "Unigram":
            pieces = model.get("vocab") or []
            scores = {piece: float(score) for piece, score in pieces}
            model_vocab = {piece: index for index, (piece, _) in enumerate(pieces)}
        else:
            model_vocab = dict(model.get("vocab") or {})
        if not model_vocab:
            raise AuditError("The tokenizer's model has an empty vocabulary: there is nothing to audit.")
        return cls(
            tokenizer=tokenizer, model=model, normalizer=data.get("normalizer"), pre_tokenizer=data.get("pre_tokenizer"),
            decoder=data.get("decoder"), model_vocab=model_vocab, added=dict(tokenizer.get_added_tokens_decoder()),
            byte_level=byte_level, markers=frozenset(markers), marker_from_pre_tokenizer=from_pre,
            prefix=model.get("continuing_subword_prefix") or "" if kind in ("BPE", "WordPiece") else "",
            suffix=model.get("end_of_word_suffix") or "" if kind == "BPE" else "", scores=scores, prepends=prepends,
        )

    @property
    def kind(self) -> str:
        return self.model["type"]

    def encode(self, text: str) -> Any:
        return self.tokenizer.encode(text, add_special_tokens=False)

    # -- a token as text --------------------------------------------------------------------------

    def parts(self, token: str) -> tuple[bool, str, bool]:
        """``(continuation, body, word_end)``: the token without its ``##`` prefix or ``</w>`` suffix."""
        continuation = bool(self.prefix) and token.startswith(self.prefix) and len(token) > len(self.prefix)
        body = token[len(self.prefix):] if continuation else token
        word_end = bool(self.suffix) and body.endswith(self.suffix) and len(body) > len(self.suffix)
        return continuation, body[: len(body) - len(self.suffix)] if word_end else body, word_end

    def word_starts(self) -> list[str]:
        """The texts of the vocabulary's :data:`WORD_START_CONTEXTS` longest word-initial tokens made of letters."""
        if self._word_starts is None:
            words = []
            for token in self.model_vocab:
                continuation, body, word_end = self.parts(token)
                text = self.surface(token) if not continuation and not word_end else None
                if text and text.isalpha():
                    words.append(text)
            words.sort(key=lambda word: (-len(word), word))
            self._word_starts = words[:WORD_START_CONTEXTS]
        return self._word_starts

    def byte_fallback_byte(self, token: str) -> int | None:
        if self.model.get("byte_fallback") and len(token) == 6 and token.startswith("<0x") and token.endswith(">"):
            try:
                return int(token[3:5], 16)
            except ValueError:
                return None
        return None

    def token_bytes(self, token: str) -> bytes | None:
        """The bytes a token stands for (byte-level tokens, ``<0xNN>`` pieces), ``None`` for text tokens."""
        if self.byte_level and all(char in UNICODE_TO_BYTES for char in token):
            return bytes(UNICODE_TO_BYTES[char] for char in token)
        byte = self.byte_fallback_byte(token)
        return None if byte is None else bytes([byte])

    def surface(self, token: str) -> str | None:
        """The token's text as a user types it, ``None`` when its bytes are not UTF-8.

        Metaspace's ``▁`` is a space, a byte-level token is its bytes, a ``##`` piece its text without the prefix.
        """
        data = self.token_bytes(token)
        if data is not None:
            try:
                return data.decode("utf-8")
            except UnicodeDecodeError:
                return None
        _, body, _ = self.parts(token)
        for marker in self.markers:
            body = body.replace(marker, " ")
        return body

    def own_text(self, token: str) -> str | None:
        """The text a user types for the token alone: its :meth:`surface`, less the space a pipeline that always
        prepends ``▁`` (a ``Prepend`` normalizer, Llama's legacy form) adds itself.

        Metaspace's own prepending already skips a text that starts with a space, so its pieces keep theirs.
        """
        text = self.surface(token)
        if text and self.prepends and token[:1] in self.markers and text.startswith(" ") and len(text) > 1:
            return text[1:]
        return text

    def shown(self, token: str) -> str:
        text = self.surface(token)
        if text is None:
            data = self.token_bytes(token) or b""
            return "bytes " + data.hex(" ")
        continuation, _, word_end = self.parts(token)
        return (self.prefix if continuation else "") + text + (self.suffix if word_end else "")

    # -- encoding a token's own text ---------------------------------------------------------------

    def own_segmentation(self, token: str, text: str) -> tuple[str, ...]:
        """The tokens the pipeline gives ``text`` as the token's own text (a ``##`` piece: as a word's continuation)."""
        continuation, _, _ = self.parts(token)
        if not (continuation and self.kind == "WordPiece"):
            return tuple(self.encode(text).tokens)
        normalized = self.normalizer_str(text)
        words = [word for word, _ in self.pre_tokenize(normalized)] if normalized else []
        if not words:
            return ()
        first = self.wordpiece_continuation(words[0])
        rest = [t.value for word in words[1:] for t in self.tokenizer.model.tokenize(word)]
        return tuple(first + rest)

    def normalizer_str(self, text: str) -> str:
        normalizer = self.tokenizer.normalizer
        return normalizer.normalize_str(text) if normalizer is not None else text

    def pre_tokenize(self, text: str) -> list[tuple[str, tuple[int, int]]]:
        pre_tokenizer = self.tokenizer.pre_tokenizer
        return pre_tokenizer.pre_tokenize_str(text) if pre_tokenizer is not None else [(text, (0, len(text)))]

    def wordpiece_continuation(self, word: str) -> list[str]:
        """WordPiece's greedy longest match over ``word`` as the rest of a word (every piece takes the prefix).

        As HF: a word longer than ``max_input_chars_per_word`` or with a position no piece matches is one unk.
        """
        vocab, prefix = self.model_vocab, self.prefix
        unk = self.model.get("unk_token", "[UNK]")
        if len(word) > int(self.model.get("max_input_chars_per_word", 100)):
            return [unk]
        pieces, start = [], 0
        while start < len(word):
            end = len(word)
            while end > start and prefix + word[start:end] not in vocab:
                end -= 1
            if end == start:
                return [unk]
            pieces.append(prefix + word[start:end])
            start = end
        return pieces


# ---------------------------------------------------------------------------------------------- BPE merges


class MergeEngine:
    """BPE's merges on symbol lists, as HF applies them: the lowest-ranked pair first, the leftmost among equals.

    >>> engine = MergeEngine({"a": 0, "b": 1, "c": 2, "ab": 3, "bc": 4}, [("b", "c"), ("a", "b")], "")
    >>> engine.apply(["a", "b", "c"])
    ['a', 'bc']
    >>> engine.apply(["a", "b"])
    ['ab']
    """

    def __init__(self, vocab: Mapping[str, int], merges: Iterable[Sequence[str] | str], prefix: str) -> None:
        self.ranks: dict[tuple[str, str], tuple[int, str]] = {}
        for rank, merge in enumerate(merges):
            left, right = merge.split(" ", 1) if isinstance(merge, str) else merge
            joined = left + (right[len(prefix):] if prefix and right.startswith(prefix) else right)
            if joined in vocab and (left, right) not in self.ranks:
                self.ranks[(left, right)] = (rank, joined)

    def apply(self, symbols: list[str], record: Callable[[str, str, str], None] | None = None) -> list[str]:
        """Merge ``symbols`` to the end; ``record(left, right, new)`` hears every merge, in order.

        A heap of candidate pairs by (rank, position) over a linked list, as HF's ``merge_all``: O(n log n), so a
        line with no pre-tokenizer (one long word) replays as fast as its words would.
        """
        ranks = self.ranks
        symbols = list(symbols)
        count = len(symbols)
        if count < 2:
            return symbols
        following = list(range(1, count + 1))
        preceding = list(range(-1, count - 1))
        heap: list[tuple[int, int, str, str]] = []
        for index in range(count - 1):
            found = ranks.get((symbols[index], symbols[index + 1]))
            if found is not None:
                heap.append((found[0], index, symbols[index], symbols[index + 1]))
        heapq.heapify(heap)
        alive = [True] * count
        while heap:
            rank, index, left, right = heapq.heappop(heap)
            nxt = following[index]
            if not alive[index] or nxt >= count or symbols[index] != left or symbols[nxt] != right:
                continue  # a stale pair: one of its symbols merged since it was pushed
            new = ranks[(left, right)][1]
            if record is not None:
                record(left, right, new)
            symbols[index] = new
            alive[nxt] = False
            following[index] = following[nxt]
            if following[index] < count:
                preceding[following[index]] = index
            before = preceding[index]
            if before >= 0:
                found = ranks.get((symbols[before], new))
                if found is not None:
                    heapq.heappush(heap, (found[0], before, symbols[before], new))
            after = following[index]
            if after < count:
                found = ranks.get((new, symbols[after]))
                if found is not None:
                    heapq.heappush(heap, (found[0], index, new, symbols[after]))
        return [symbol for symbol, keep in zip(symbols, alive) if keep]

    def makers(self, token: str) -> list[tuple[str, str]]:
        """The merges whose result is ``token``."""
        if not hasattr(self, "_makers"):
            makers: dict[str, list[tuple[str, str]]] = defaultdict(list)
            for pair, (_, new) in self.ranks.items():
                makers[new].append(pair)
            self._makers = makers
        return self._makers.get(token, [])

    def recipe(self, token: str) -> set[str]:
        """Every symbol some merge sequence building ``token`` passes through.

        >>> sorted(MergeEngine({"a": 0, "b": 1, "c": 2, "ab": 3, "abc": 4}, [("a", "b"), ("ab", "c")], "").recipe("abc"))
        ['a', 'ab', 'abc', 'b', 'c']
        """
        seen, stack = {token}, [token]
        while stack:
            for pair in self.makers(stack.pop()):
                for part in pair:
                    if part not in seen:
                        seen.add(part)
                        stack.append(part)
        return seen


def _initial_symbols(pipeline: _Pipeline, token: str) -> list[str]:
    """The symbols a word holds where the token's characters sit, before any merge."""
    continuation, body, word_end = pipeline.parts(token)
    prefix, suffix = pipeline.prefix, pipeline.suffix
    symbols = [(prefix if (index or continuation) and prefix else "") + char for index, char in enumerate(body)]
    if word_end and symbols:
        symbols[-1] += suffix
    return symbols


def _bpe_proof(pipeline: _Pipeline, engine: MergeEngine, token: str) -> str | None:
    """Why BPE's merge order can never build ``token`` in any word, or ``None`` when it builds it on its own symbols."""
    if pipeline.model.get("ignore_merges"):
        return None  # a whole word found in the vocabulary skips the merges: the order proves nothing
    symbols = _initial_symbols(pipeline, token)
    missing = [symbol for symbol in symbols if symbol not in pipeline.model_vocab]
    if missing and len(symbols) > 1:
        return (f"its symbol {missing[0]!r} is not in the vocabulary, so a word holding it starts from "
                "an unknown token or bytes there, and no merge takes those back")
    final = engine.apply(symbols)
    if final == [token]:
        return None
    steps: list[tuple[str, str, str]] = []
    engine.apply(symbols, lambda left, right, new: steps.append((left, right, new)))
    shown = " ".join(final)
    if len(symbols) == 1:
        return None
    recipe = engine.recipe(token)
    taker = next(((l, r, n) for l, r, n in steps if n not in recipe), None)
    if not engine.makers(token):
        return (f"no merge makes it, and it is {len(symbols)} symbols long; its symbols alone end as {shown}")
    detail = f"; merge {steps[0][0]!r} + {steps[0][1]!r} comes first" if steps and taker is None else ""
    if taker is not None:
        rank = engine.ranks[(taker[0], taker[1])][0]
        detail = f"; merge #{rank} ({taker[0]!r} + {taker[1]!r} → {taker[2]!r}) takes a part first"
    return ("the merges inside its span run as on its symbols alone (a merge with a neighbour would make a symbol that "
            f"sticks out of it), and alone they end as {shown}{detail}")


# ---------------------------------------------------------------------------------------------- Unigram


def _unigram_proof(pipeline: _Pipeline, token: str) -> str | None:
    """Why a Unigram piece is on no best path of any text, or ``None``.

    If its own string has a segmentation scoring strictly higher than the piece, swapping it in beats every path
    through the piece, in every context: the piece never wins.
    """
    tokens = [t.value for t in pipeline.tokenizer.model.tokenize(token)]
    if tokens == [token] or len(tokens) < 2:
        return None
    scores = pipeline.scores
    if any(piece not in scores for piece in tokens):
        return None  # unknown or byte-fallback pieces: their score is not a piece's
    unk_id = pipeline.model.get("unk_id")
    unk = next((piece for piece, index in pipeline.model_vocab.items() if index == unk_id), None)
    if unk is not None and unk in tokens:
        return None
    best = sum(scores[piece] for piece in tokens)
    own = scores[token]
    if not best > own:
        return None  # a tie: which path wins depends on the tie-break, so nothing is proven
    return (f"its own string segments as {' '.join(tokens)} with log-probability {best:.4f} > {own:.4f} for the piece; "
            "that swap beats every path through the piece in any context")


# ---------------------------------------------------------------------------------------------- witnesses

_LEFT_CONTEXTS = ("a", "e", "o", "i", "s", "t", "n", "r", "x", "q", "z", "k", "u", "m", "1", "é")
_RIGHT_CONTEXTS = ("", "s", "a", "e", "x", "1")


def _contains(pipeline: _Pipeline, text: str, token_id: int) -> bool:
    return token_id in pipeline.encode(text).ids


def _context_candidates(pipeline: _Pipeline, text: str, needs_left: bool) -> list[str]:
    """The texts tried around a token's text: one-character contexts, then words of the vocabulary before it.

    A word the vocabulary holds whole (WordPiece's greedy match stops right after it) is the left context a
    ``##`` piece needs; one character on either side is what BPE and Unigram pieces need.
    """
    if needs_left:
        candidates = [left + text for left in _LEFT_CONTEXTS if left != text[:1]]
        candidates += [word + text for word in pipeline.word_starts()]
        candidates += ["a" + text + right for right in _RIGHT_CONTEXTS[1:4]]
    else:
        candidates = [text + right for right in _RIGHT_CONTEXTS[1:]]
        candidates += [left + text for left in _LEFT_CONTEXTS[:8]] + [" " + text, "a " + text]
        candidates += [word + text for word in pipeline.word_starts()]
    return list(dict.fromkeys(candidate for candidate in candidates if candidate != text))


def _context_witness(pipeline: _Pipeline, token: str, token_id: int, text: str, needs_left: bool) -> str | None:
    """A text holding ``text`` in a small context whose encoding holds the token (:func:`_context_candidates`)."""
    for candidate in _context_candidates(pipeline, text, needs_left):
        if _contains(pipeline, candidate, token_id):
            return candidate
    return None


def _byte_witness(pipeline: _Pipeline, token_id: int, byte: int) -> str | None:
    """A character holding ``byte`` that the vocabulary has no symbol for (so it falls back to bytes).

    Tried: the characters whose UTF-8 starts with ``byte`` (a lead byte) or has it second (a continuation
    byte), at most :data:`BYTE_CANDIDATES` of them, alone and after a space or a letter.
    """
    if byte < 0x80:
        candidates: Iterable[str] = [chr(byte)]
    else:
        candidates = _completions(bytes([byte]), byte >= 0xC0, BYTE_CANDIDATES)[1]
    for char in candidates:
        if char in pipeline.model_vocab:
            continue
        for candidate in (char, " " + char, "a" + char):
            if _contains(pipeline, candidate, token_id):
                return candidate
    return None


def _fragment_witness(pipeline: _Pipeline, token_id: int, data: bytes) -> str | None:
    """A short text whose encoding holds a partial UTF-8 token: its bytes completed into characters."""
    parts_head = 0
    while parts_head < len(data) and 0x80 <= data[parts_head] < 0xC0:
        parts_head += 1
    head_chars = _completions(data[:parts_head], False, 6)[1] if parts_head else ("",)
    rest = data[parts_head:]
    tail_start = len(rest)
    for start in range(max(0, len(rest) - 3), len(rest)):
        if rest[start] >= 0xC0:
            tail_start = start
            break
    middle, tail = rest[:tail_start], rest[tail_start:]
    try:
        middle_text = middle.decode("utf-8")
    except UnicodeDecodeError:
        return None
    tail_chars = _completions(tail, True, 6)[1] if tail else ("",)
    tries = 0
    for head in head_chars:
        for end in tail_chars:
            candidate = head + middle_text + end
            for shaped in (candidate, " " + candidate):
                tries += 1
                if tries > 2 * CONTEXT_BOUND:
                    return None
                if _contains(pipeline, shaped, token_id):
                    return shaped
    return None


# ---------------------------------------------------------------------------------------------- the audit


#: Characters tried as witnesses of the unknown token (rare scripts and symbols few vocabularies hold).
_UNKNOWN_CANDIDATES = ("\U0001d518", "\u16a0", "\u2603", "\U0001f9ec", "\ua000", "\u0f00", "\u1400", "\U00010330")


def _unk_verdict(pipeline: _Pipeline, token: str, token_id: int, text_witness: str | None) -> TokenVerdict:
    """The unknown token stands for text the vocabulary cannot cover: its own text says nothing about it."""
    shown = pipeline.shown(token)
    if pipeline.model.get("byte_fallback") and all(f"<0x{byte:02X}>" in pipeline.model_vocab for byte in range(256)):
        return TokenVerdict(token_id, token, shown, UNREACHABLE,
                            "unreachable: the unknown token, and byte fallback spells every character the vocabulary lacks "
                            "with its bytes (all 256 <0xNN> tokens are in the vocabulary)")
    for candidate in ((text_witness,) if text_witness else ()) + _UNKNOWN_CANDIDATES:
        if _contains(pipeline, candidate, token_id):
            return TokenVerdict(token_id, token, shown, REACHABLE, "the unknown token: a character the vocabulary lacks gives it",
                                None, (), candidate)
    return TokenVerdict(token_id, token, shown, UNDECIDED,
                        f"cannot decide: the unknown token, and none of {len(_UNKNOWN_CANDIDATES)} rare characters tried gives it")


def _unk_id(pipeline: _Pipeline) -> int | None:
    if pipeline.kind == "Unigram":
        unk_id = pipeline.model.get("unk_id")
        return unk_id if isinstance(unk_id, int) else None
    unk = pipeline.model.get("unk_token")
    return pipeline.model_vocab.get(unk) if isinstance(unk, str) else None


def _chars_with_byte(byte: int) -> list[str] | None:
    """Every character whose UTF-8 holds ``byte``, when there are few (ASCII, or a lead byte); ``None`` otherwise.

    >>> len(_chars_with_byte(0xC3)), _chars_with_byte(0x41), _chars_with_byte(0x80) is None
    (64, ['A'], True)
    """
    if byte < 0x80:
        return [chr(byte)]
    if not 0xC2 <= byte <= 0xEF:
        return None  # continuation bytes and 4-byte leads sit in tens of thousands of characters
    length = 2 if byte < 0xE0 else 3
    chars = []
    for second in _second_range(byte):
        for third in (range(0x80, 0xC0) if length == 3 else (None,)):
            raw = bytes([byte, second] + ([third] if third is not None else []))
            chars.append(raw.decode("utf-8"))
    return chars


def _byte_symbol_proof(pipeline: _Pipeline, byte: int) -> str | None:
    """A byte-fallback token ``<0xNN>`` is produced only for a character the vocabulary has no symbol for: when every
    character holding the byte has one (in every place of a word), the token never comes out."""
    chars = _chars_with_byte(byte)
    if chars is None:
        return None
    vocab = pipeline.model_vocab
    for char in chars:
        symbols = sorted(pipeline.markers) if pipeline.markers and char == " " else [char]
        if pipeline.prefix:
            symbols = symbols + [pipeline.prefix + symbol for symbol in symbols]
        if pipeline.suffix:
            symbols = symbols + [symbol + pipeline.suffix for symbol in symbols]
        if not all(symbol in vocab for symbol in symbols):
            return None
    if len(chars) == 1:
        return (f"the byte 0x{byte:02X} occurs only in the character {chars[0]!r}, which the vocabulary has as a symbol, "
                "so it never falls back to bytes")
    return (f"the byte 0x{byte:02X} occurs only in {len(chars):,} characters ({chars[0]} to {chars[-1]}), and the vocabulary "
            "has each as a symbol, so none falls back to bytes")


def _verdict(pipeline: _Pipeline, engine: MergeEngine | None, token: str, token_id: int, text_witness: str | None) -> TokenVerdict:
    if token_id == pipeline.unk_id:
        return _unk_verdict(pipeline, token, token_id, text_witness)
    shown = pipeline.shown(token)
    own_text = pipeline.own_text(token)
    continuation, body, word_end = pipeline.parts(token)
    segmentation: tuple[str, ...] = ()
    if own_text is not None and own_text != "":
        segmentation = pipeline.own_segmentation(token, own_text)
        if segmentation == (token,) and not (continuation and pipeline.kind == "WordPiece"):
            return TokenVerdict(token_id, token, shown, REACHABLE, "its own text gives it", own_text, segmentation, own_text)
    # proofs of unreachability
    data = pipeline.token_bytes(token)
    surface = pipeline.surface(token)
    chars = surface if surface is not None else (data or b"").decode("utf-8", "ignore")
    model_chars = body if not pipeline.byte_level else chars
    kill_chars = chars if (pipeline.byte_level or pipeline.marker_from_pre_tokenizer or data is not None) else model_chars
    if data is not None and pipeline.byte_level and not _in_some_utf8(data):
        return TokenVerdict(token_id, token, shown, UNREACHABLE,
                            f"unreachable: no UTF-8 text holds the bytes {data.hex(' ')}, and byte-level pre-tokenizers see only UTF-8",
                            own_text, segmentation)
    byte = pipeline.byte_fallback_byte(token)
    if byte is not None and not _in_some_utf8(bytes([byte])):
        return TokenVerdict(token_id, token, shown, UNREACHABLE,
                            f"unreachable: the byte 0x{byte:02X} occurs in no UTF-8 text, so no character falls back to it", own_text, segmentation)
    if byte is not None and (proof := _byte_symbol_proof(pipeline, byte)) is not None:
        return TokenVerdict(token_id, token, shown, UNREACHABLE, f"unreachable: {proof}", own_text, segmentation)
    if pipeline.byte_fallback_byte(token) is None:
        for char in dict.fromkeys(kill_chars):
            if char == " " and pipeline.markers and not pipeline.marker_from_pre_tokenizer and not pipeline.byte_level:
                continue
            reason = normalizer_kill(pipeline.normalizer, char)
            if reason is not None:
                return TokenVerdict(token_id, token, shown, UNREACHABLE, f"unreachable: {reason}", own_text, segmentation)
        split = pre_tokenizer_split(pipeline.pre_tokenizer, chars, continuation) or _metaspace_split(pipeline, body)
        if split is not None:
            return TokenVerdict(token_id, token, shown, UNREACHABLE, f"unreachable: {split}", own_text, segmentation)
    if engine is not None and pipeline.byte_fallback_byte(token) is None:
        proof = _bpe_proof(pipeline, engine, token)
        if proof is not None:
            return TokenVerdict(token_id, token, shown, UNREACHABLE, f"unreachable: {proof}", own_text, segmentation)
    if pipeline.kind == "Unigram" and pipeline.byte_fallback_byte(token) is None:
        proof = _unigram_proof(pipeline, token)
        if proof is not None:
            return TokenVerdict(token_id, token, shown, UNREACHABLE, f"unreachable: {proof}", own_text, segmentation)
    # witnesses
    if text_witness is not None and _contains(pipeline, text_witness, token_id):
        return TokenVerdict(token_id, token, shown, REACHABLE, "a word of the given texts gives it", own_text, segmentation, text_witness)
    byte = pipeline.byte_fallback_byte(token)
    witness = None
    if byte is not None:
        witness = _byte_witness(pipeline, token_id, byte)
        bound = (f"the one character holding that byte, {chr(byte)!r}" if byte < 0x80
                 else f"{BYTE_CANDIDATES} characters holding that byte")
    elif own_text is None and data is not None:
        witness = _fragment_witness(pipeline, token_id, data)
        bound = f"{2 * CONTEXT_BOUND} texts made of characters its bytes are part of"
    elif own_text:
        needs_left = continuation or (bool(pipeline.markers) and token[:1] not in pipeline.markers and not own_text.startswith(" "))
        witness = _context_witness(pipeline, token, token_id, own_text, needs_left)
        bound = (f"{len(_context_candidates(pipeline, own_text, needs_left))} contexts around its text "
                 f"(one character, or one of the vocabulary's {WORD_START_CONTEXTS} longest whole words, before or after it)")
    else:
        bound = "nothing: it has no text"
    if witness is not None:
        return TokenVerdict(token_id, token, shown, REACHABLE, "a short context gives it", own_text, segmentation, witness)
    return TokenVerdict(token_id, token, shown, UNDECIDED,
                        f"cannot decide: no proof applies, and no witness among {bound}", own_text, segmentation)


def _text_words(pipeline: _Pipeline, texts: Sequence[str], progress: Progress | None) -> tuple[Counter, dict[int, str], list[Any]]:
    """Encode the texts once: token counts, a word of the texts for each token (its first occurrence), the encodings."""
    counts: Counter = Counter()
    first_word: dict[int, str] = {}
    encodings = []
    step = max(1, len(texts) // 20)
    for index, text in enumerate(texts):
        encoding = pipeline.encode(text)
        encodings.append(encoding)
        ids = encoding.ids
        counts.update(ids)
        new = [position for position, token_id in enumerate(ids) if token_id not in first_word]
        if new:
            offsets, word_ids = encoding.offsets, encoding.word_ids
            for position in new:
                token_id = ids[position]
                if token_id in first_word:
                    continue
                word = word_ids[position]
                span = [offsets[p] for p in range(len(ids)) if word is not None and word_ids[p] == word] or [offsets[position]]
                start, end = min(s for s, _ in span), max(e for _, e in span)
                first_word[token_id] = text[start:end] if end - start <= 80 else text[offsets[position][0]: offsets[position][1]]
        if progress is not None and index % step == 0:
            progress(0.4 * index / max(1, len(texts)), f"Encoding the texts: {index:,} of {len(texts):,}")
    return counts, first_word, encodings


def _round_trip_cause(pipeline: _Pipeline, text: str, decoded: str, ids: Sequence[int]) -> str:
    unk = pipeline.model.get("unk_token") if pipeline.kind != "Unigram" else None
    unk_id = pipeline.model_vocab.get(unk) if unk else pipeline.model.get("unk_id") if pipeline.kind == "Unigram" else None
    if unk_id is not None and unk_id in ids:
        return "unknown token"
    if "\ufffd" in decoded and "\ufffd" not in text:
        return "bytes"
    if "".join(text.split()) == "".join(decoded.split()):
        return "whitespace handling"
    if pipeline.tokenizer.normalizer is not None and pipeline.normalizer_str(text) != text:
        return "normalization"
    return "other"


def _residues_from_texts(pipeline: _Pipeline, engine: MergeEngine, encodings: Sequence[Any]) -> tuple[dict[int, tuple[int, int]], int]:
    """F1 and F2 per merged token, recorded while the texts' words go through the merges again.

    Each word of the encodings is rebuilt from its tokens, merged from its symbols with the merges recorded, and
    counted only where the replay ends in the encoding's own tokens (the words where it does not are counted apart).
    """
    vocab = pipeline.model_vocab
    word_tokens: Counter = Counter()
    for encoding in encodings:
        tokens, word_ids = encoding.tokens, encoding.word_ids
        current: list[str] = []
        last = object()
        for token, word in zip(tokens, word_ids):
            if word != last and current:
                word_tokens[tuple(current)] += 1
                current = []
            last = word
            current.append(token)
        if current:
            word_tokens[tuple(current)] += 1
    created: Counter = Counter()
    consumed: Counter = Counter()
    mismatched = 0
    prefix, suffix = pipeline.prefix, pipeline.suffix
    for tokens, count in word_tokens.items():
        if any(token not in vocab for token in tokens):
            continue
        text = "".join((t[len(prefix):] if prefix and i and t.startswith(prefix) else t) for i, t in enumerate(tokens))
        if suffix and text.endswith(suffix):
            text = text[: -len(suffix)]
            symbols = [(prefix if i and prefix else "") + c for i, c in enumerate(text)]
            symbols[-1] += suffix
        else:
            symbols = [(prefix if i and prefix else "") + c for i, c in enumerate(text)]
        if any(symbol not in vocab for symbol in symbols):
            continue
        steps: list[tuple[str, str, str]] = []
        final = engine.apply(symbols, lambda l, r, n: steps.append((l, r, n)))
        if tuple(final) != tokens:
            mismatched += count
            continue
        for left, right, new in steps:
            created[new] += count
            consumed[left] += count
            consumed[right] += count
    out = {}
    for token, made in created.items():
        out[vocab[token]] = (made - consumed[token], consumed[token])
    return out, mismatched


def _residues_from_history(history: Any, vocab: Mapping[str, int], size: int | None) -> dict[int, tuple[int, int]]:
    """F1 and F2 from a BPE training's merges: F1 + F2 is the merge's count, F2 what later merges took of it.

    The trainer counts overlapping pairs the way HF does (``aaa`` holds ``a a`` twice), so F1 is clamped at 0.
    """
    merges = [step for step in getattr(history, "merges", ()) if size is None or step.vocab_size <= size]
    created: dict[str, int] = {}
    consumed: Counter = Counter()
    for step in merges:
        consumed[step.left] += step.count
        consumed[step.right] += step.count
        created.setdefault(step.token, 0)
        created[step.token] += step.count
    return {vocab[token]: (max(0, made - consumed[token]), min(made, consumed[token])) for token, made in created.items() if token in vocab}


def audit(
    tokenizer: Any,
    texts: Sequence[str] | str | None = None,
    *,
    history: Any = None,
    progress: Progress | None = None,
) -> AuditReport:
    """Audit ``tokenizer``'s vocabulary, and with ``texts`` its use of them (see the module docstring).

    ``texts``: a list of texts, or one string (split into lines). ``history``: the BPE training the tokenizer
    comes from (F1, F2 from its merges, up to the tokenizer's vocab size). ``progress(fraction, message)`` is
    called as the audit goes.
    """
    pipeline = _Pipeline.of(tokenizer)
    if isinstance(texts, str):
        texts = [line for line in texts.splitlines() if line.strip()]
    texts = list(texts or [])
    pipeline.unk_id = _unk_id(pipeline)
    engine = MergeEngine(pipeline.model_vocab, pipeline.model.get("merges") or [], pipeline.prefix) if pipeline.kind == "BPE" else None
    notes: list[str] = []
    if pipeline.model.get("dropout"):
        notes.append("The model has BPE dropout; the audit looks at the deterministic merges (dropout off).")
    counts: Counter = Counter()
    first_word: dict[int, str] = {}
    encodings: list[Any] = []
    if texts:
        counts, first_word, encodings = _text_words(pipeline, texts, progress)
    added_ids = set(pipeline.added)
    model_items = sorted(((index, token) for token, index in pipeline.model_vocab.items() if index not in added_ids))
    verdicts: list[TokenVerdict] = []
    step = max(1, len(model_items) // 50)
    base = 0.4 if texts else 0.0
    for position, (token_id, token) in enumerate(model_items):
        verdicts.append(_verdict(pipeline, engine, token, token_id, first_word.get(token_id)))
        if progress is not None and position % step == 0:
            progress(base + (0.9 - base) * position / len(model_items), f"Auditing tokens: {position:,} of {len(model_items):,}")
    for token_id, added in sorted(pipeline.added.items()):
        verdicts.append(TokenVerdict(token_id, added.content, added.content, ADDED, "an added token: matched in the text before the model runs"))
    vocab_size = tokenizer.get_vocab_size(with_added_tokens=True)
    findings = [_own_text_finding(verdicts, vocab_size), *_status_findings(verdicts, vocab_size),
                _partial_finding(pipeline, verdicts, vocab_size), _duplicates_finding(pipeline, verdicts, vocab_size),
                _special_finding(pipeline, vocab_size)]
    residues: list[Residue] = []
    residue_source = ""
    round_counts: Counter = Counter()
    examples: list[RoundTripFailure] = []
    if texts:
        findings.append(_unused_finding(pipeline, verdicts, counts, vocab_size, len(texts)))
        if progress is not None:
            progress(0.92, "Decoding the texts back")
        for text, encoding in zip(texts, encodings):
            decoded = tokenizer.decode(encoding.ids)
            if decoded != text:
                cause = _round_trip_cause(pipeline, text, decoded, encoding.ids)
                round_counts[cause] += 1
                if sum(1 for e in examples if e.cause == cause) < ROUND_TRIP_EXAMPLES:
                    examples.append(RoundTripFailure(text[:EXAMPLE_CHARS], decoded[:EXAMPLE_CHARS], cause))
    if engine is not None and (history is not None and getattr(history, "merges", None) is not None):
        f_values = _residues_from_history(history, pipeline.model_vocab, tokenizer.get_vocab_size(with_added_tokens=False))
        residue_source = "the training history"
    elif engine is not None and texts:
        if progress is not None:
            progress(0.95, "Replaying the merges on the texts' words")
        f_values, mismatched = _residues_from_texts(pipeline, engine, encodings)
        residue_source = "the given texts"
        if mismatched:
            notes.append(f"{mismatched:,} words of the texts did not replay to their encoding's tokens and were left out of F1 and F2.")
    else:
        f_values = {}
    by_id = {v.id: v for v in verdicts}
    residues = [Residue(token_id, by_id[token_id].token, by_id[token_id].shown, f1, f2)
                for token_id, (f1, f2) in sorted(f_values.items()) if token_id in by_id]
    if progress is not None:
        progress(1.0, "Done")
    return AuditReport(
        model_type=pipeline.kind, vocab_size=vocab_size, model_vocab_size=len(pipeline.model_vocab),
        verdicts=tuple(verdicts), findings=tuple(findings), residues=tuple(residues), residue_source=residue_source,
        texts_count=len(texts), texts_chars=sum(map(len, texts)),
        round_trip_counts=tuple((cause, round_counts[cause]) for cause in ROUND_TRIP_CAUSES if round_counts[cause]),
        round_trip_examples=tuple(examples), token_counts=tuple(sorted(counts.items())), notes=tuple(notes),
    )


# ---------------------------------------------------------------------------------------------- findings


def _item(verdict: TokenVerdict, reason: str | None = None, detail: str = "") -> Item:
    return Item((verdict.token,), (verdict.id,), verdict.shown, reason or verdict.reason, verdict.witness or "", detail)


def _own_text_finding(verdicts: Sequence[TokenVerdict], vocab_size: int) -> Finding:
    items = tuple(
        _item(v, f"its own text {v.own_text!r} gives {' '.join(v.segmentation) or 'nothing'}", " ".join(v.segmentation))
        for v in verdicts if v.status != ADDED and v.own_text and not v.own_text_ok
    )
    return Finding("own_text", "Unreachable from its own text",
                   "The token's text, encoded alone as the pipeline sees it, gives other tokens (shown as detail).", items, vocab_size)


def _status_findings(verdicts: Sequence[TokenVerdict], vocab_size: int) -> list[Finding]:
    return [
        Finding("unreachable", "Unreachable at all", "No text can produce these tokens; the reason is the proof.",
                tuple(_item(v) for v in verdicts if v.status == UNREACHABLE), vocab_size),
        Finding("undecided", "Cannot decide", "No proof applies and the bounded search found no witness (the bound is in the reason).",
                tuple(_item(v) for v in verdicts if v.status == UNDECIDED), vocab_size),
        Finding("reachable", "Reachable", "A witness text whose encoding holds the token (checked by encoding it).",
                tuple(_item(v) for v in verdicts if v.status == REACHABLE), vocab_size),
    ]


def _partial_finding(pipeline: _Pipeline, verdicts: Sequence[TokenVerdict], vocab_size: int) -> Finding:
    items = []
    for verdict in verdicts:
        if verdict.status == ADDED or verdict.own_text is not None:
            continue
        data = pipeline.token_bytes(verdict.token)
        if data is None:
            continue
        parts = utf8_parts(data)
        if parts is not None:
            items.append(Item((verdict.token,), (verdict.id,), verdict.shown, f"its bytes are not UTF-8 alone: {parts}",
                              verdict.witness or "", verdict.status))
    return Finding("partial_utf8", "Partial UTF-8 tokens", "Byte-level tokens whose bytes are part of a character, not whole characters.",
                   tuple(items), vocab_size)


def _duplicates_finding(pipeline: _Pipeline, verdicts: Sequence[TokenVerdict], vocab_size: int) -> Finding:
    groups: dict[tuple[bool, bool, str], list[TokenVerdict]] = defaultdict(list)
    for verdict in verdicts:
        if verdict.status == ADDED or verdict.own_text is None:
            continue
        continuation, _, word_end = pipeline.parts(verdict.token)
        groups[(continuation, word_end, pipeline.surface(verdict.token))].append(verdict)
    items = []
    for (continuation, word_end, text), group in groups.items():
        if len(group) > 1:
            where = " as a word's continuation" if continuation else " at a word's end" if word_end else ""
            items.append(Item(tuple(v.token for v in group), tuple(v.id for v in group), group[0].shown,
                              f"{len(group)} tokens decode to {text!r}{where}", "", ", ".join(str(v.id) for v in group)))
    return Finding("duplicates", "Duplicates", "Distinct tokens that decode to the same text in the same place of a word.", tuple(items), vocab_size)


def _special_finding(pipeline: _Pipeline, vocab_size: int) -> Finding:
    items = []
    for token_id, added in sorted(pipeline.added.items()):
        if not added.content:
            continue
        if token_id in pipeline.encode(added.content).ids:
            kind = "special token" if added.special else "added token"
            items.append(Item((added.content,), (token_id,), added.content,
                              f"the {kind}'s text typed as plain text gives the token itself (a prompt-injection hazard)", added.content))
    return Finding("special_from_text", "Special and added tokens from plain text",
                   "Typing these tokens' text produces them; a model cannot tell them from the real markers.", tuple(items), vocab_size)


def _unused_finding(pipeline: _Pipeline, verdicts: Sequence[TokenVerdict], counts: Counter, vocab_size: int, n_texts: int) -> Finding:
    items = tuple(
        _item(v, f"never produced by the {n_texts:,} texts" + ("" if v.status == REACHABLE else f" ({v.status})"), str(len(v.own_text or v.token)))
        for v in verdicts if counts.get(v.id, 0) == 0
    )
    return Finding("unused", "Unused on the given texts", "Tokens the texts never produce: a model trained on them leaves these embeddings untrained.",
                   items, vocab_size)


# ---------------------------------------------------------------------------------------------- tables

#: Columns of every findings table (the page's tables and their CSV downloads).
ITEM_COLUMNS = ["ids", "tokens", "shown as", "reason", "witness", "detail"]


def items_frame(finding: Finding) -> Any:
    """A finding's items as a table: one row per item, ids and tokens joined by spaces when it is a group.

    >>> report = audit(_toy_bpe())
    >>> items_frame(report.finding("unreachable"))[["tokens", "witness"]].to_dict("records")
    [{'tokens': 'abc', 'witness': ''}]
    """
    import pandas as pd

    rows = [[" ".join(map(str, item.ids)), " ".join(item.tokens), item.shown, item.reason, item.witness, item.detail]
            for item in finding.items]
    return pd.DataFrame(rows, columns=ITEM_COLUMNS)


def residues_frame(report: AuditReport) -> Any:
    """Every merged BPE token with F1, F2 and R(t), lowest R first."""
    import pandas as pd

    rows = [[r.id, r.token, r.shown, r.f1, r.f2, r.r] for r in sorted(report.residues, key=lambda r: (r.r, r.id))]
    return pd.DataFrame(rows, columns=["id", "token", "shown as", "F1 (final)", "F2 (merged further)", "R = F1/(F1+F2)"])


def round_trip_frame(report: AuditReport) -> Any:
    import pandas as pd

    return pd.DataFrame([[e.cause, e.text, e.decoded] for e in report.round_trip_examples], columns=["cause", "text", "decode(encode(text))"])


def unused_by_length(report: AuditReport) -> Any:
    """Model tokens by the length of their text (characters; bytes for partial UTF-8 tokens): used and unused on the texts.

    >>> unused_by_length(audit(_toy_bpe(), ["ab"])).to_dict("records")
    [{'length': 1, 'used': 0, 'unused': 3}, {'length': 2, 'used': 1, 'unused': 1}, {'length': 3, 'used': 0, 'unused': 1}]
    """
    import pandas as pd

    used_ids = {token_id for token_id, count in report.token_counts if count}
    table: dict[int, list[int]] = defaultdict(lambda: [0, 0])
    for verdict in report.verdicts:
        if verdict.status == ADDED:
            continue
        length = len(verdict.own_text) if verdict.own_text is not None else len(verdict.shown.removeprefix("bytes ").split())
        table[length][0 if verdict.id in used_ids else 1] += 1
    return pd.DataFrame([[length, used, unused] for length, (used, unused) in sorted(table.items())], columns=["length", "used", "unused"])


def filter_frame(frame: Any, query: str) -> Any:
    """Rows where the query (plain text, any case) occurs in a token, its shown form, reason or witness."""
    if not query:
        return frame
    needle = query.casefold()
    columns = [c for c in ("tokens", "token", "shown as", "reason", "witness", "text") if c in frame.columns]
    mask = frame[columns].astype(str).apply(lambda column: column.str.casefold().str.contains(needle, regex=False)).any(axis=1)
    return frame[mask]


def _toy_bpe() -> Any:
    """The docstrings' tokenizer: 'b c' merges before 'a b', so 'abc' never forms."""
    from tokviz import models, pre_tokenizers
    from tokviz.tokenizer import Tokenizer

    vocab = {token: index for index, token in enumerate(["a", "b", "c", "bc", "ab", "abc"])}
    tokenizer = Tokenizer(models.BPE(vocab, [("b", "c"), ("a", "b"), ("ab", "c")]))
    tokenizer.pre_tokenizer = pre_tokenizers.Whitespace()
    return tokenizer


__all__ = [
    "ADDED", "AuditError", "AuditReport", "CONTEXT_BOUND", "DEFAULT_RESIDUE_THRESHOLD", "Finding", "Item", "MergeEngine",
    "REACHABLE", "ROUND_TRIP_CAUSES", "RoundTripFailure", "Residue", "TokenVerdict", "UNDECIDED", "UNREACHABLE", "audit",
    "ITEM_COLUMNS", "filter_frame", "items_frame", "normalizer_kill", "pre_tokenizer_split", "residues_frame", "round_trip_frame",
    "unused_by_length", "utf8_parts",
]
