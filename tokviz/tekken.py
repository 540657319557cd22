"""Mistral's Tekken tokenizer files (``tekken.json``, ``tekken_240718.json``): read into a tokviz Tokenizer.

Tekken is tiktoken with a JSON file instead of a rank file and code. Its layout, as
``mistral_common.tokens.tokenizers.tekken.Tekkenizer`` reads it:

- ``config``: ``pattern`` (tiktoken's ``pat_str``), ``default_vocab_size`` (all ids),
  ``default_num_special_tokens`` (n), ``version`` (``"v3"``, ``"v7"``, ...);
- ``vocab``: ``{"rank", "token_bytes" (base64), "token_str"}`` by rank; only the first
  ``default_vocab_size - n`` ranks are used (Mistral NeMo's file lists 150,000 and uses 130,072);
- ``special_tokens``: ``{"rank", "token_str", "is_control"}`` — absent from files of version v7 and
  older, which use the 20 tokens of :data:`DEFAULT_SPECIAL_TOKENS`; the ids left up to n are filled
  with ``<SPECIAL_{id}>``.

Special tokens take ids 0..n-1 and a token of rank r takes id r + n, so ``encode`` gives
``[bos_id, *(tiktoken ranks + n)]`` as ``Tekkenizer.encode(text, bos=True, eos=False)`` does.

>>> import base64, json
>>> vocab = [{"rank": b, "token_bytes": base64.b64encode(bytes([b])).decode(), "token_str": None} for b in range(256)]
>>> vocab.append({"rank": 256, "token_bytes": base64.b64encode(b"hi").decode(), "token_str": "hi"})
>>> config = {"pattern": r" ?\\p{L}+|\\S|\\s+", "default_vocab_size": 277, "default_num_special_tokens": 20, "version": "v3"}
>>> tok = tokenizer_from_tekken(json.dumps({"config": config, "vocab": vocab}).encode())
>>> tok.encode("hi!").ids, tok.id_to_token(1), tok.id_to_token(276)
([1, 276, 53], '<s>', 'hi')

What this leaves out: the image and audio sections (the vision encoder's settings), and the
instruct layer's chat templates; only text encoding is read.
"""

from __future__ import annotations

import base64
import binascii
import json
from typing import Any

from tokviz.errors import TokenizerFileError
from tokviz.tiktoken_format import TiktokenSpec, tokenizer_from_ranks

#: The special tokens of Tekken files that list none (version v7 and older), by id, as
#: ``Tekkenizer.DEPRECATED_SPECIAL_TOKENS`` spells them (a test checks the two agree).
DEFAULT_SPECIAL_TOKENS: tuple[str, ...] = (
    "<unk>", "<s>", "</s>", "[INST]", "[/INST]", "[AVAILABLE_TOOLS]", "[/AVAILABLE_TOOLS]", "[TOOL_RESULTS]",
    "[/TOOL_RESULTS]", "[TOOL_CALLS]", "[IMG]", "<pad>", "[IMG_BREAK]", "[IMG_END]", "[PREFIX]", "[MIDDLE]",
    "[SUFFIX]", "[SYSTEM_PROMPT]", "[/SYSTEM_PROMPT]", "[TOOL_CONTENT]",
)

#: Versions whose files must list their special tokens (Tekkenizer refuses them otherwise).
_VERSIONS_WITHOUT_DEFAULTS_FROM = 11  # v11 and later; v2..v7 fall back to the defaults


def is_tekken(name: str, data: bytes) -> bool:
    """A Tekken file: JSON whose first 64 kB hold a ``config`` with a ``pattern`` and base64 ``token_bytes``.

    >>> is_tekken("tekken.json", b'{"config": {"pattern": "."}, "vocab": [{"rank": 0, "token_bytes": "AA=="}]}')
    True
    >>> is_tekken("vocab.json", b'{"hello": 0}')
    False
    """
    head = data[:65536].lstrip(b"\xef\xbb\xbf \t\r\n")
    return head.startswith(b"{") and b'"config"' in head and b'"pattern"' in head and b'"token_bytes"' in head


def _version_number(version: Any) -> int:
    """``"v7"`` -> 7; anything unreadable -> 0 (treated as an old file)."""
    if isinstance(version, str) and version[:1] == "v":
        digits = "".join(char for char in version[1:] if char.isdigit())
        return int(digits) if digits else 0
    return 0


def parse_tekken(data: bytes, name: str = "This Tekken file") -> tuple[dict[bytes, int], TiktokenSpec]:
    """The ranks (already shifted to ids) and the spec (pattern, special tokens, ``<s>``) of a Tekken file.

    Checked against :mod:`tokviz.limits` before and while reading: the file's size, its JSON values,
    the number of ranks, the longest token and the number of special tokens.
    """
    from tokviz import limits

    limits.check_tokenizer_json_size(len(data), name)
    limits.check_json_values(data, name)
    try:
        parsed = json.loads(data.decode("utf-8-sig"))
    except UnicodeDecodeError:
        raise TokenizerFileError(f"{name} is not UTF-8 text.") from None
    except json.JSONDecodeError as error:
        raise TokenizerFileError(f"{name} is not valid JSON (line {error.lineno}: {error.msg}).") from None
    except RecursionError:
        raise TokenizerFileError(f"{name}: its JSON is nested too deeply to read.") from None
    config = parsed.get("config") if isinstance(parsed, dict) else None
    vocab = parsed.get("vocab") if isinstance(parsed, dict) else None
    if not isinstance(config, dict) or not isinstance(vocab, list):
        raise TokenizerFileError(f"{name} is not a Tekken file: it needs a 'config' object and a 'vocab' list.")
    pattern = config.get("pattern")
    vocab_size = config.get("default_vocab_size")
    special_count = config.get("default_num_special_tokens")
    if not isinstance(pattern, str) or not all(isinstance(n, int) and not isinstance(n, bool) for n in (vocab_size, special_count)):
        raise TokenizerFileError(
            f"{name}: its config needs 'pattern', 'default_vocab_size' and 'default_num_special_tokens'."
        )
    inner_size = vocab_size - special_count
    if special_count < 0 or inner_size < 256 or inner_size > len(vocab):
        raise TokenizerFileError(
            f"{name}: default_vocab_size {vocab_size:,} minus {special_count:,} special tokens must leave between 256 "
            f"and the {len(vocab):,} ranks the file lists."
        )
    limits.check_tokenizer_vocab(vocab_size, name)
    limits.check_added_tokens(special_count, name)

    ranks: dict[bytes, int] = {}
    for rank, entry in enumerate(vocab[:inner_size]):
        if not isinstance(entry, dict) or entry.get("rank") != rank or not isinstance(entry.get("token_bytes"), str):
            raise TokenizerFileError(f"{name}: vocab entry {rank} should be {{'rank': {rank}, 'token_bytes': base64}}.")
        try:
            token = base64.b64decode(entry["token_bytes"], validate=True)
        except binascii.Error:
            raise TokenizerFileError(f"{name}: vocab entry {rank} has token_bytes that are not base64.") from None
        if len(token) > limits.MAX_TOKEN_CHARS:
            limits.check_token_chars(len(token), name, "bytes")
        if token in ranks:
            raise TokenizerFileError(f"{name} lists the same token twice (ranks {ranks[token]} and {rank}).")
        ranks[token] = rank + special_count

    listed = parsed.get("special_tokens")
    if listed is None:
        if _version_number(config.get("version")) >= _VERSIONS_WITHOUT_DEFAULTS_FROM:
            raise TokenizerFileError(f"{name} (version {config.get('version')}) must list its special tokens.")
        specials = list(DEFAULT_SPECIAL_TOKENS)
    elif isinstance(listed, list) and all(isinstance(t, dict) and isinstance(t.get("token_str"), str) for t in listed):
        by_rank = sorted(listed, key=lambda t: t.get("rank", 0) if isinstance(t.get("rank"), int) else 0)
        if [t.get("rank") for t in by_rank] != list(range(len(by_rank))):
            raise TokenizerFileError(f"{name}: its special tokens must have ranks 0, 1, 2, ... without gaps.")
        specials = [t["token_str"] for t in by_rank]
    else:
        raise TokenizerFileError(f"{name}: 'special_tokens' must be a list of {{'rank', 'token_str'}} objects.")
    if len(specials) > special_count or len(set(specials)) != len(specials):
        raise TokenizerFileError(f"{name} lists {len(specials)} special tokens (some twice, or more than its {special_count}).")
    limits.check_token_chars(max(map(len, specials), default=0), name)
    specials += [f"<SPECIAL_{token_id}>" for token_id in range(len(specials), special_count)]
    spec = TiktokenSpec(
        name=str(config.get("version") or "tekken"),
        pat_str=pattern,
        special_tokens=tuple((content, token_id) for token_id, content in enumerate(specials)),
        bos_token="<s>" if "<s>" in specials else None,
    )
    return ranks, spec


def tokenizer_from_tekken(data: bytes, name: str = "This Tekken file") -> Any:
    """A Tokenizer that encodes as mistral-common's ``Tekkenizer.encode(text, bos=True, eos=False)``."""
    ranks, spec = parse_tekken(data, name)
    return tokenizer_from_ranks(ranks, spec)
