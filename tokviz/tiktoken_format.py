"""tiktoken rank files with what they leave out: the split pattern and the special tokens.

A ``.tiktoken`` file holds only ``base64(token bytes) rank`` lines (read by
:func:`parse_tiktoken_ranks`). The encoding's split pattern (``pat_str``) and special
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
:func:`tokenizer_from_tiktoken` (one rule for turning ranks into merges), with the
BOS token as a template and ``encode_special_tokens`` on: the authors' ``encode`` (tiktoken's
``encode_ordinary``, Llama's ``allowed_special=()``, Mistral's Tekken) reads the text of a special
token such as ``<|eot_id|>`` as ordinary text, and so does this tokenizer.

What this leaves out: Llama's ``encode`` also cuts runs of more than 25,000 whitespace or
non-whitespace characters before tiktoken sees them (a guard against a tiktoken stack limit); tokviz
does not, so a text holding such a run can differ at the cut.
"""

from __future__ import annotations

import base64
import binascii
import json
from dataclasses import dataclass
from functools import cache
from importlib import resources
from pathlib import Path
from typing import Any

from tokviz.byte_level import BYTES_TO_UNICODE
from tokviz.errors import TokenizerFileError
from tokviz.limits import line_count

#: Byte (as a latin-1 character) -> its GPT-2 byte-level symbol, for ``str.translate``.
_BYTE_SYMBOLS = str.maketrans({chr(byte): symbol for byte, symbol in BYTES_TO_UNICODE.items()})

# ---------------------------------------------------------------------- rank files and known encodings
@dataclass(frozen=True, slots=True)
class TiktokenEncoding:
    """What a ``.tiktoken`` file leaves out: the split pattern and special tokens of its encoding.

    >>> encoding = tiktoken_encodings()["cl100k_base"]
    >>> encoding.special_tokens[0], encoding.mergeable_ranks
    (('<|endoftext|>', 100257), 100256)
    """

    name: str
    label: str
    aliases: tuple[str, ...]
    pattern: str  # tiktoken's pattern, written so Oniguruma (HF) and ``regex`` match alike
    tiktoken_pattern: str  # tiktoken's pattern verbatim
    special_tokens: tuple[tuple[str, int], ...]
    mergeable_ranks: int


@cache
def tiktoken_encodings() -> dict[str, TiktokenEncoding]:
    """The known encodings by name (``'gpt2'``, ``'p50k_base'``, ``'p50k_edit'``, ``'cl100k_base'``, ``'o200k_base'``).

    >>> list(tiktoken_encodings())
    ['gpt2', 'p50k_base', 'p50k_edit', 'cl100k_base', 'o200k_base']
    """
    text = resources.files("tokviz").joinpath("data", "tiktoken_encodings.json").read_text(encoding="utf-8")
    return {
        name: TiktokenEncoding(
            name=name,
            label=entry["label"],
            aliases=tuple(entry["aliases"]),
            pattern=entry["pattern"],
            tiktoken_pattern=entry["tiktoken_pattern"],
            special_tokens=tuple(entry["special_tokens"].items()),
            mergeable_ranks=entry["mergeable_ranks"],
        )
        for name, entry in json.loads(text)["encodings"].items()
    }


def guess_tiktoken_encoding(file_name: str, rank_count: int | None = None) -> str | None:
    """The encoding a rank file belongs to, from its name or else its number of ranks; None if unsure.

    >>> guess_tiktoken_encoding("cl100k_base.tiktoken"), guess_tiktoken_encoding("x.tiktoken", 50256)
    ('cl100k_base', 'gpt2')
    >>> guess_tiktoken_encoding("mine.tiktoken", 300) is None
    True
    """
    stem = Path(file_name).name.lower()
    for name, encoding in tiktoken_encodings().items():
        if any(alias in stem for alias in sorted(encoding.aliases, key=len, reverse=True)) and name != "p50k_base":
            return name
    if "p50k" in stem:
        return "p50k_base"
    if rank_count is not None:
        # p50k_edit shares p50k_base's ranks: the count alone means the base encoding.
        matches = [e.name for e in tiktoken_encodings().values() if e.mergeable_ranks == rank_count and e.name != "p50k_edit"]
        if len(matches) == 1:
            return matches[0]
    return None


def parse_tiktoken_ranks(data: bytes) -> dict[bytes, int]:
    """Read a rank file: one ``base64(token) rank`` per line.

    >>> parse_tiktoken_ranks(b"aGk= 7\\nIQ== 8\\n")
    {b'hi': 7, b'!': 8}
    """
    from tokviz import limits

    limits.check_tokenizer_vocab(line_count(data), "This tiktoken file")
    ranks: dict[bytes, int] = {}
    longest = 0
    for number, line in enumerate(data.splitlines(), start=1):
        if not line.strip():
            continue
        parts = line.split()
        if len(parts) != 2:
            raise TokenizerFileError(
                f"This is not a tiktoken rank file: line {number} should be 'base64-token rank', "
                f"found {len(parts)} field(s)."
            )
        try:
            token = base64.b64decode(parts[0], validate=True)
            rank = int(parts[1])
        except (binascii.Error, ValueError):
            raise TokenizerFileError(
                f"This is not a tiktoken rank file: line {number} does not hold a base64 token and a whole-number rank."
            ) from None
        if token in ranks:
            raise TokenizerFileError(f"This tiktoken file lists the same token twice (line {number}).")
        ranks[token] = rank
        longest = max(longest, len(token))
    limits.check_token_chars(longest, "This tiktoken file", "bytes")
    if not ranks:
        raise TokenizerFileError("This tiktoken rank file is empty.")
    return ranks


def byte_level_string(token: bytes) -> str:
    """Bytes as GPT-2's byte-level symbols: ``b' hi' -> 'Ġhi'``.

    >>> byte_level_string(b" hi"), byte_level_string("가".encode())
    ('Ġhi', 'ê°Ģ')
    """
    return token.decode("latin-1").translate(_BYTE_SYMBOLS)


def tiktoken_vocab_and_merges(ranks: dict[bytes, int]) -> tuple[dict[str, int], list[tuple[str, str]]]:
    """The BPE vocab and merges equivalent to tiktoken's ranks (HF's ``TikTokenConverter`` rule).

    A token of rank r comes from every split into two ranked halves; those merges are ranked by r
    (ties by the halves' ranks), so merging by merge rank replays tiktoken's "merge the pair whose
    result has the lowest rank".

    >>> ranks = {b"a": 0, b"b": 1, b"ab": 2, b"abb": 3}
    >>> tiktoken_vocab_and_merges(ranks)
    ({'a': 0, 'b': 1, 'ab': 2, 'abb': 3}, [('a', 'b'), ('ab', 'b')])
    """
    from tokviz import limits

    symbols = {token: byte_level_string(token) for token in ranks}
    vocab = {symbols[token]: rank for token, rank in ranks.items()}
    ranked: list[tuple[int, int, int, bytes, bytes]] = []
    for token, rank in ranks.items():
        for cut in range(1, len(token)):
            left, right = token[:cut], token[cut:]
            left_rank, right_rank = ranks.get(left), ranks.get(right)
            if left_rank is not None and right_rank is not None:
                ranked.append((rank, left_rank, right_rank, left, right))
        if len(ranked) > limits.MAX_TOKENIZER_MERGES:  # refused as soon as it is known, not once all are held
            limits.check_tokenizer_merges(len(ranked), "This tiktoken file (counting every split of its tokens)")
    ranked.sort(key=lambda item: item[:3])
    return vocab, [(symbols[left], symbols[right]) for _, _, _, left, right in ranked]


def tokenizer_from_tiktoken(ranks: dict[bytes, int], encoding: str | TiktokenEncoding) -> Any:
    """A byte-level BPE Tokenizer that encodes as tiktoken's ``encoding`` with these ranks does."""
    from tokviz import decoders, models, pre_tokenizers, processors
    from tokviz.patterns import Regex
    from tokviz.tokenizer import Tokenizer

    if isinstance(encoding, str):
        known = tiktoken_encodings()
        if encoding not in known:
            raise TokenizerFileError(f"Unknown tiktoken encoding {encoding!r}; choose one of {', '.join(known)}.")
        encoding = known[encoding]
    missing = 256 - sum(1 for token in ranks if len(token) == 1)
    if missing:
        raise TokenizerFileError(
            f"This tiktoken file lacks {missing} of the 256 single bytes, so some text could not be encoded."
        )
    vocab, merges = tiktoken_vocab_and_merges(ranks)
    taken = set(vocab.values())
    for content, token_id in encoding.special_tokens:
        if token_id in taken and vocab.get(content) != token_id:
            raise TokenizerFileError(
                f"This rank file already uses id {token_id}, which encoding {encoding.name!r} gives to {content}; "
                "choose the encoding the file was made for."
            )
        vocab[content] = token_id
    tokenizer = Tokenizer(models.BPE(vocab, merges, fuse_unk=False, ignore_merges=True))
    tokenizer.pre_tokenizer = pre_tokenizers.Sequence(
        [
            pre_tokenizers.Split(Regex(encoding.pattern), behavior="isolated", invert=False),
            pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=False),
        ]
    )
    tokenizer.decoder = decoders.ByteLevel()
    tokenizer.post_processor = processors.ByteLevel(trim_offsets=False)
    tokenizer.add_special_tokens([content for content, _ in encoding.special_tokens])
    return tokenizer



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
