"""tiktoken rank files with what they leave out: the split pattern and the special tokens.

A ``.tiktoken`` file holds only ``base64(token bytes) rank`` lines (read by
:func:`tokviz.loaders.parse_tiktoken_ranks`). The encoding's split pattern (``pat_str``) and special
tokens live in code (``tiktoken_ext``, ``llama_models.llama3.tokenizer``). tokviz writes them into a
small JSON sidecar beside the rank file, ``<name>.tiktoken.json``, whose keys are the arguments of
``tiktoken.Encoding``, so the pair loads in tiktoken as::

    spec = json.load(open("tokenizer.tiktoken.json"))
    tiktoken.Encoding(name=spec["name"], pat_str=spec["pat_str"],
                      mergeable_ranks=tiktoken.load.load_tiktoken_bpe("tokenizer.tiktoken"),
                      special_tokens=spec["special_tokens"])

plus an optional ``bos_token`` (the token the authors' ``encode(..., bos=True)`` puts first, which
tiktoken itself never adds).

>>> spec = parse_sidecar(b'{"name": "mine", "pat_str": "\\\\\\\\S+|\\\\\\\\s+", "special_tokens": {"<|bos|>": 258}, "bos_token": "<|bos|>"}')
>>> spec.special_tokens, spec.bos_token
((('<|bos|>', 258),), '<|bos|>')

The tokenizer built from ranks + spec (:func:`tokenizer_from_ranks`) is the byte-level BPE of
:func:`tokviz.loaders.tokenizer_from_tiktoken` (one rule for turning ranks into merges), with the
BOS token as a template and ``encode_special_tokens`` on: the authors' ``encode`` (tiktoken's
``encode_ordinary``, Llama's ``allowed_special=()``, Mistral's Tekken) reads the text of a special
token such as ``<|eot_id|>`` as ordinary text, and so does this tokenizer.

What this leaves out: Llama's ``encode`` also cuts runs of more than 25,000 whitespace or
non-whitespace characters before tiktoken sees them (a guard against a tiktoken stack limit); tokviz
does not, so a text holding such a run can differ at the cut.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tokviz.loaders import TiktokenEncoding, TokenizerFileError, byte_level_string, parse_tiktoken_ranks, tokenizer_from_tiktoken

#: A sidecar is a few kilobytes (Llama 4's 1,135 special tokens: 60 kB); anything far larger is not one.
MAX_SIDECAR_BYTES = 4 * 1024 * 1024

#: ``tokenizer.tiktoken`` -> ``tokenizer.tiktoken.json``.
SIDECAR_SUFFIX = ".json"


@dataclass(frozen=True, slots=True)
class TiktokenSpec:
    """What a tiktoken encoding adds to its ranks: ``tiktoken.Encoding``'s ``name``, ``pat_str`` and
    ``special_tokens`` (as ``(content, id)`` pairs, in id order), and the BOS token the authors' code adds."""

    name: str
    pat_str: str
    special_tokens: tuple[tuple[str, int], ...] = ()
    bos_token: str | None = None

    def to_json(self) -> str:
        """The sidecar's text (``tiktoken.Encoding``'s argument names).

        >>> print(TiktokenSpec("x", "\\\\s+", (("<s>", 3),), "<s>").to_json())
        {
          "name": "x",
          "pat_str": "\\\\s+",
          "special_tokens": {
            "<s>": 3
          },
          "bos_token": "<s>"
        }
        """
        data: dict[str, Any] = {"name": self.name, "pat_str": self.pat_str, "special_tokens": dict(self.special_tokens)}
        if self.bos_token is not None:
            data["bos_token"] = self.bos_token
        return json.dumps(data, ensure_ascii=False, indent=2)


def sidecar_path(rank_file: str | Path) -> Path:
    """Where the sidecar of a rank file lives: ``sidecar_path("a/llama3.tiktoken") == Path("a/llama3.tiktoken.json")``."""
    rank_file = Path(rank_file)
    return rank_file.with_name(rank_file.name + SIDECAR_SUFFIX)


def is_sidecar(name: str, data: bytes) -> bool:
    """Whether a file is a tiktoken sidecar: a JSON object with ``pat_str`` (checked in its first 4 kB).

    >>> is_sidecar("x.tiktoken.json", b'{"name": "x", "pat_str": "."}'), is_sidecar("vocab.json", b'{"a": 0}')
    (True, False)
    """
    head = data[:4096].lstrip(b"\xef\xbb\xbf \t\r\n")
    return head.startswith(b"{") and b'"pat_str"' in head


def parse_sidecar(data: bytes, name: str = "This tiktoken sidecar") -> TiktokenSpec:
    """Read a sidecar, refusing one that is too big, malformed, or holds more special tokens than the limits allow."""
    from tokviz import limits
    from tokviz.patterns import compile_pattern

    if len(data) > MAX_SIDECAR_BYTES:
        raise TokenizerFileError(f"{name} is {len(data):,} bytes; a tiktoken sidecar holds a pattern and special tokens, a few kB.")
    limits.check_json_values(data, name)
    try:
        parsed = json.loads(data.decode("utf-8-sig"))
    except (UnicodeDecodeError, json.JSONDecodeError, RecursionError):
        raise TokenizerFileError(f"{name} is not valid UTF-8 JSON.") from None
    if not isinstance(parsed, dict) or not isinstance(parsed.get("pat_str"), str):
        raise TokenizerFileError(f"{name} must be a JSON object with a 'pat_str' (the split pattern).")
    specials = parsed.get("special_tokens", {})
    if not isinstance(specials, dict) or not all(
        isinstance(content, str) and isinstance(token_id, int) and not isinstance(token_id, bool) and token_id >= 0
        for content, token_id in specials.items()
    ):
        raise TokenizerFileError(f"{name}: 'special_tokens' must map each token's text to a whole-number id.")
    limits.check_added_tokens(len(specials), name)
    limits.check_token_chars(max(map(len, specials), default=0), name)
    bos = parsed.get("bos_token")
    if bos is not None and bos not in specials:
        raise TokenizerFileError(f"{name}: its bos_token {str(bos)[:40]!r} is not one of its special tokens.")
    try:
        compile_pattern(parsed["pat_str"])
    except ValueError as error:
        raise TokenizerFileError(f"{name}: its split pattern cannot be used ({error}).") from None
    name_field = parsed.get("name")
    return TiktokenSpec(
        name=name_field if isinstance(name_field, str) else "",
        pat_str=parsed["pat_str"],
        special_tokens=tuple(sorted(specials.items(), key=lambda item: item[1])),
        bos_token=bos,
    )


def tokenizer_from_ranks(ranks: dict[bytes, int], spec: TiktokenSpec) -> Any:
    """The Tokenizer that encodes as ``tiktoken.Encoding(pat_str, ranks, special_tokens)`` plus the spec's BOS.

    >>> ranks = {bytes([b]): b for b in range(256)} | {b"hi": 256}
    >>> tok = tokenizer_from_ranks(ranks, TiktokenSpec("mine", r" ?\\p{L}+|\\S|\\s+", (("<s>", 257),), "<s>"))
    >>> tok.encode("hi <s>").ids
    [257, 256, 32, 60, 115, 62]
    """
    encoding = TiktokenEncoding(
        name=spec.name or "custom",
        label=spec.name or "custom",
        aliases=(),
        pattern=spec.pat_str,
        tiktoken_pattern=spec.pat_str,
        special_tokens=spec.special_tokens,
        mergeable_ranks=len(ranks),
    )
    tokenizer = tokenizer_from_tiktoken(ranks, encoding)
    # The authors' encode reads a special token's text as text (tiktoken's encode_ordinary).
    tokenizer.encode_special_tokens = True
    if spec.bos_token is not None:
        add_bos_template(tokenizer, spec.bos_token)
    return tokenizer


def add_bos_template(tokenizer: Any, bos_token: str) -> None:
    """Put ``bos_token`` before every sequence, after the tokenizer's own post-processor (as HF's Llama 3 file does)."""
    from tokviz import processors

    bos_id = tokenizer.token_to_id(bos_token)
    if bos_id is None:
        raise TokenizerFileError(f"The BOS token {bos_token!r} is not in the vocabulary.")
    template = processors.TemplateProcessing(
        single=f"{bos_token}:0 $A:0",
        pair=f"{bos_token}:0 $A:0 {bos_token}:1 $B:1",
        special_tokens=[(bos_token, bos_id)],
    )
    current = tokenizer.post_processor
    tokenizer.post_processor = template if current is None else processors.Sequence([current, template])


def load_tiktoken_pair(rank_data: bytes, sidecar_data: bytes, sidecar_name: str = "This tiktoken sidecar") -> Any:
    """A Tokenizer from a rank file's bytes and its sidecar's bytes (both through the limits)."""
    spec = parse_sidecar(sidecar_data, sidecar_name)
    return tokenizer_from_ranks(parse_tiktoken_ranks(rank_data), spec)


# ---------------------------------------------------------------------- writing
def rank_file_text(ranks: dict[bytes, int]) -> str:
    """A ``.tiktoken`` file: ``base64(token) rank`` per line, by rank (what ``load_tiktoken_bpe`` reads).

    >>> rank_file_text({b"b": 1, b"a": 0})
    'YQ== 0\\nYg== 1\\n'
    """
    import base64

    return "".join(f"{base64.b64encode(token).decode('ascii')} {rank}\n" for token, rank in sorted(ranks.items(), key=lambda item: item[1]))


def token_bytes(symbol: str) -> bytes:
    """A byte-level symbol back to its bytes: ``token_bytes("Ġhi") == b" hi"`` (inverse of :func:`byte_level_string`)."""
    from tokviz.byte_level import UNICODE_TO_BYTES

    return bytes(UNICODE_TO_BYTES[char] for char in symbol)


__all__ = [
    "MAX_SIDECAR_BYTES",
    "SIDECAR_SUFFIX",
    "TiktokenSpec",
    "add_bos_template",
    "byte_level_string",
    "is_sidecar",
    "load_tiktoken_pair",
    "parse_sidecar",
    "rank_file_text",
    "sidecar_path",
    "token_bytes",
    "tokenizer_from_ranks",
]
