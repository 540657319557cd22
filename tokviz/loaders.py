"""Load a pretrained tokenizer from the files people actually hold: ``tokviz.load(path)``.

Five kinds of file, recognised by name and content, each turned into a :class:`~tokviz.Tokenizer`
built the way Hugging Face's converters (``transformers.convert_slow_tokenizer``) build it:

- ``tokenizer.json`` (HF's format) -> parsed, checked against the limits, then :func:`tokviz.serialization.tokenizer_from_dict`.
- ``*.tiktoken`` (OpenAI's rank file: ``base64(token bytes) rank`` per line) -> a byte-level BPE whose
  vocab is the ranks and whose merges are every split of a token into two ranked tokens, ordered by
  the rank of the token they make; ``ignore_merges=True`` (a piece that is itself a token stays whole,
  as tiktoken does), the encoding's split pattern as a ``Split`` pre-tokenizer and its special tokens
  at their ids. The pattern and special tokens come from :func:`tiktoken_encodings` (gpt2/r50k, p50k,
  p50k_edit, cl100k, o200k), kept as data in ``tokviz/data/tiktoken_encodings.json``.
- BERT's ``vocab.txt`` (one token per line) -> WordPiece with BERT's normalizer, pre-tokenizer,
  ``[CLS] $A [SEP]`` template and WordPiece decoder; lowercasing is on unless the vocabulary holds
  upper-case letters (a cased BERT does, an uncased one does not).
- GPT-2's ``vocab.json`` + ``merges.txt`` -> byte-level BPE (``ByteLevel`` pre-tokenizer and decoder,
  ``<|endoftext|>`` special when the vocab has it).
- SentencePiece ``.model`` -> :func:`tokviz.sentencepiece.convert.from_model_bytes`.

>>> import base64
>>> rank_file = b"".join(base64.b64encode(bytes([b])) + b" %d\\n" % b for b in range(256))
>>> rank_file += base64.b64encode(b"hi") + b" 256\\n"
>>> tok = load_bytes("mine.tiktoken", rank_file, tiktoken_encoding="gpt2")
>>> tok.encode("hi hi").tokens, tok.encode("hi hi").ids
(['hi', 'Ġ', 'hi'], [256, 32, 256])
>>> file_kind("vocab.txt", b"[PAD]\\n[UNK]\\nhello\\n")
'vocab.txt'

Sizes: any file above :data:`tokviz.limits.MAX_UPLOAD_BYTES` (a tokenizer.json above
:data:`tokviz.limits.MAX_TOKENIZER_JSON_BYTES`) is refused before it is parsed.

What this leaves out: ``tokenizer_config.json`` options (``do_lower_case``, ``add_prefix_space``,
``add_bos_token``) — each loader uses the defaults of the converter it follows; slow-tokenizer files of
other families (``spiece.model`` is read through ``tokviz.sentencepiece``, ``sentencepiece.bpe.model`` too,
``vocab.json`` without merges is refused).
"""

from __future__ import annotations

import base64
import binascii
import importlib
import json
import re
from dataclasses import dataclass
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from tokviz.errors import LimitExceededError, TokenizerFileError
from tokviz.tekken import is_tekken, tokenizer_from_tekken
from tokviz.tiktoken_format import (
    guess_tiktoken_encoding,
    is_sidecar,
    load_tiktoken_pair,
    parse_tiktoken_ranks,
    sidecar_path,
    tiktoken_encodings,
    tokenizer_from_tiktoken,
)
from tokviz.tokenizer_json import check_ids

#: The file kinds :func:`file_kind` recognises, with the label the pages show.
FILE_KINDS: dict[str, str] = {
    "tokenizer.json": "Hugging Face tokenizer.json",
    "tiktoken": "tiktoken rank file (*.tiktoken)",
    "vocab.txt": "BERT vocab.txt (WordPiece)",
    "vocab.json": "GPT-2 vocab.json (needs merges.txt)",
    "merges.txt": "GPT-2 merges.txt (needs vocab.json)",
    "sentencepiece": "SentencePiece .model",
    "tekken": "Mistral Tekken JSON (tekken.json)",
    "tiktoken-sidecar": "tiktoken sidecar (*.tiktoken.json: split pattern and special tokens)",
}

_BERT_SPECIALS = ("[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]")
_TOKENIZER_JSON_SECTION = re.compile(rb'"(?:model|added_tokens|normalizer|pre_tokenizer|decoder|truncation)"\s*:\s*[\[{n]')


# ---------------------------------------------------------------------- BERT and GPT-2 files
def bert_vocab_is_cased(vocab: dict[str, int]) -> bool:
    """True when a vocab.txt holds upper-case letters outside its ``[SPECIAL]`` tokens (a cased BERT).

    >>> bert_vocab_is_cased({"[CLS]": 0, "the": 1}), bert_vocab_is_cased({"[CLS]": 0, "The": 1})
    (False, True)
    """
    return any(
        any(char.isupper() for char in token)
        for token in vocab
        if not (token.startswith("[") and token.endswith("]"))
    )


def tokenizer_from_bert_vocab(text: str) -> Any:
    """BERT's pipeline over a vocab.txt (one token per line, id = line number), as HF's ``BertConverter``."""
    from tokviz import decoders, models, normalizers, pre_tokenizers, processors
    from tokviz.tokenizer import Tokenizer

    from tokviz import limits

    limits.check_tokenizer_vocab(limits.line_count(text), "This vocab.txt")
    lines = text.split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    limits.check_token_chars(max(map(len, lines), default=0), "This vocab.txt")
    # As HF's WordPiece.read_file: the line's end trimmed, a repeated token keeps its last line.
    vocab = {line.rstrip(): index for index, line in enumerate(lines)}
    if "[UNK]" not in vocab:
        raise TokenizerFileError("This vocab.txt has no [UNK] token, so it is not a BERT WordPiece vocabulary.")
    lowercase = not bert_vocab_is_cased(vocab)
    tokenizer = Tokenizer(models.WordPiece(vocab, unk_token="[UNK]", continuing_subword_prefix="##"))
    tokenizer.normalizer = normalizers.BertNormalizer(
        clean_text=True, handle_chinese_chars=True, strip_accents=None, lowercase=lowercase
    )
    tokenizer.pre_tokenizer = pre_tokenizers.BertPreTokenizer()
    if "[CLS]" in vocab and "[SEP]" in vocab:
        tokenizer.post_processor = processors.TemplateProcessing(
            single="[CLS]:0 $A:0 [SEP]:0",
            pair="[CLS]:0 $A:0 [SEP]:0 $B:1 [SEP]:1",
            special_tokens=[("[CLS]", vocab["[CLS]"]), ("[SEP]", vocab["[SEP]"])],
        )
    tokenizer.decoder = decoders.WordPiece(prefix="##")
    tokenizer.add_special_tokens([token for token in _BERT_SPECIALS if token in vocab])
    return tokenizer


def _parse_vocab_json(text: str) -> dict[str, int]:
    from tokviz import limits

    data = limits.parse_json(text, "This vocab.json", what="vocab.json", error=TokenizerFileError)
    if isinstance(data, list):
        raise TokenizerFileError('This vocab.json holds a JSON list; a vocab.json is a JSON object of token -> id, like {"hello": 0}.')
    if not isinstance(data, dict) or not data:
        raise TokenizerFileError("A vocab.json must hold a JSON object of token -> id.")
    limits.check_tokenizer_vocab(len(data), "This vocab.json")
    limits.check_token_chars(max(map(len, data), default=0), "This vocab.json")
    vocab = {token: token_id for token, token_id in data.items() if isinstance(token_id, int) and not isinstance(token_id, bool)}
    if "model" in data and not vocab:
        raise TokenizerFileError("This file looks like a tokenizer.json, not a vocab.json: name it tokenizer.json.")
    if len(vocab) < len(data):  # said, never dropped: a token without its id would silently change every encoding
        bad = [(token, token_id) for token, token_id in data.items() if token not in vocab]
        # (a list or object shown by its kind: it may be nested hundreds deep)
        shown = ", ".join(f"{token!r}: {type(token_id).__name__ if isinstance(token_id, (list, dict)) else json.dumps(token_id)[:20]}"
                          for token, token_id in bad[:3])
        raise TokenizerFileError(f"This vocab.json has {len(bad):,} token{'s' if len(bad) != 1 else ''} whose id is not a whole number "
                                 f"({shown}{', …' if len(bad) > 3 else ''}); every id must be one.")
    if vocab:
        check_ids(min(vocab.values()), max(vocab.values()), vocab, "This vocab.json")
    return vocab


def _parse_merges(text: str) -> list[tuple[str, str]]:
    from tokviz import limits
    from tokviz.models.bpe.model import parse_merge

    limits.check_tokenizer_merges(limits.line_count(text) - text.startswith("#version"), "This merges.txt")
    lines = [line.rstrip("\r") for line in text.split("\n")]
    merges = []
    for index, line in enumerate(lines):
        if line.startswith("#version") or (not line and index == len(lines) - 1):
            continue
        try:
            merges.append(parse_merge(line, index))
        except Exception as error:  # parse_merge raises the core's VocabularyError
            raise TokenizerFileError(f"This merges.txt has an unreadable line {index + 1}: {error}") from None
    return merges


def tokenizer_from_gpt2_files(vocab_json: str, merges_txt: str) -> Any:
    """GPT-2's byte-level BPE from its vocab.json and merges.txt, as HF's ``GPT2Converter`` builds it."""
    from tokviz import decoders, models, pre_tokenizers, processors
    from tokviz.errors import TokvizError
    from tokviz.tokenizer import Tokenizer

    vocab = _parse_vocab_json(vocab_json)
    merges = _parse_merges(merges_txt)
    try:
        model = models.BPE(vocab, merges, fuse_unk=False)
    except TokvizError as error:
        raise TokenizerFileError(f"This vocab.json and merges.txt do not fit together: {error}") from None
    tokenizer = Tokenizer(model)
    tokenizer.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tokenizer.decoder = decoders.ByteLevel()
    tokenizer.post_processor = processors.ByteLevel(trim_offsets=False)
    if "<|endoftext|>" in vocab:
        tokenizer.add_special_tokens(["<|endoftext|>"])
    return tokenizer


# ---------------------------------------------------------------------- tokenizer.json
def _tokenizer_from_json(name: str, data: bytes) -> Any:
    """A Tokenizer from tokenizer.json bytes, through the one reader (:func:`read_tokenizer_json`)."""
    from tokviz.serialization import tokenizer_from_str

    return tokenizer_from_str(data, name=name)  # (read by tokviz.tokenizer_json.read_tokenizer_json)


# ---------------------------------------------------------------------- SentencePiece
def tokenizer_from_sentencepiece(data: bytes) -> Any:
    """A Tokenizer from a SentencePiece ``.model``, its pieces counted first, read by
    ``tokviz.sentencepiece.from_model_bytes`` (the one conversion; imported only here)."""
    check_sentencepiece_pieces(data)
    return importlib.import_module("tokviz.sentencepiece").from_model_bytes(data)


def _varint(data: bytes, position: int) -> tuple[int, int]:
    """``(value, next position)`` of the protobuf varint at ``position``: ``_varint(b"\\x96\\x01", 0) == (150, 2)``."""
    value = shift = 0
    while True:
        if position >= len(data) or shift > 63:
            raise ValueError("truncated varint")
        byte = data[position]
        position += 1
        value |= (byte & 0x7F) << shift
        if byte < 0x80:
            return value, position
        shift += 7


def sentencepiece_piece_lengths(data: bytes) -> list[int]:
    """The length in characters (UTF-8 bytes for unreadable text) of every piece of a SentencePiece
    ``.model``, read by walking its protobuf fields without building anything (a pre-scan): the
    ModelProto's field 1 repeats one SentencePiece message per piece, whose field 1 is the piece.

    A malformed file gives the pieces found so far (the real reader then says what is wrong).

    >>> sentencepiece_piece_lengths(b"\\x0a\\x09\\x0a\\x02ab\\x15\\x00\\x00\\x80\\xbf" + b"\\x0a\\x03\\x0a\\x01c")
    [2, 1]
    """
    lengths: list[int] = []
    position = 0
    try:
        while position < len(data):
            key, position = _varint(data, position)
            field, wire = key >> 3, key & 7
            if wire == 0:
                _, position = _varint(data, position)
            elif wire == 1:
                position += 8
            elif wire == 5:
                position += 4
            elif wire == 2:
                size, position = _varint(data, position)
                end = position + size
                if field == 1:
                    lengths.append(_first_string_length(data, position, end))
                position = end
            else:
                break
    except ValueError:
        pass
    return lengths


def _first_string_length(data: bytes, position: int, end: int) -> int:
    """Length of field 1 (the piece) of the SentencePiece message in ``data[position:end]``."""
    while position < end:
        key, position = _varint(data, position)
        field, wire = key >> 3, key & 7
        if wire == 2:
            size, position = _varint(data, position)
            if field == 1:
                raw = data[position : position + size]
                try:
                    return len(raw.decode("utf-8"))
                except UnicodeDecodeError:
                    return len(raw)
            position += size
        elif wire == 0:
            _, position = _varint(data, position)
        elif wire == 1:
            position += 8
        elif wire == 5:
            position += 4
        else:
            break
    return 0


def check_sentencepiece_pieces(data: bytes, name: str = "This SentencePiece model") -> None:
    """Refuse a ``.model`` with too many pieces, too long a piece or too big a prefix table, before reading it."""
    from tokviz import limits

    lengths = sentencepiece_piece_lengths(data)
    limits.check_tokenizer_vocab(len(lengths), name)
    limits.check_token_chars(max(lengths, default=0), name)
    limits.check_unigram_prefix_chars(sum(n * (n - 1) // 2 for n in lengths), name)


# ---------------------------------------------------------------------- recognising and loading
def _looks_like_tiktoken(data: bytes) -> bool:
    head = data[:2000].splitlines()[:5]
    if not head:
        return False
    for line in head:
        parts = line.split()
        if len(parts) != 2 or not parts[1].isdigit():
            return False
        try:
            base64.b64decode(parts[0], validate=True)
        except binascii.Error:
            return False
    return True


def file_kind(name: str, data: bytes) -> str:
    """Which tokenizer file this is (a key of :data:`FILE_KINDS`), from its name and first bytes.

    >>> file_kind("tokenizer.json", b'{"version": "1.0", "model": {}}'), file_kind("x.json", b'{"a": 0}')
    ('tokenizer.json', 'vocab.json')
    >>> file_kind("merges.txt", b"#version: 0.2\\nh e\\n"), file_kind("gpt.tiktoken", b"IQ== 0\\n")
    ('merges.txt', 'tiktoken')
    """
    lower = Path(name).name.lower()
    if lower.endswith(".model"):
        return "sentencepiece"
    if lower.endswith(".tiktoken"):
        return "tiktoken"
    stripped = data.lstrip(b"\xef\xbb\xbf \t\r\n")
    if is_tekken(name, stripped):
        return "tekken"
    if is_sidecar(name, stripped):
        return "tiktoken-sidecar"
    if stripped.startswith(b"{"):
        # A tokenizer.json has sections ("model": {...}, "added_tokens": [...]); a vocab.json maps
        # tokens to numbers, so a token spelled "model" is followed by a number there.
        if lower == "tokenizer.json" or _TOKENIZER_JSON_SECTION.search(stripped[:65536]):
            return "tokenizer.json"
        return "vocab.json"
    if stripped.startswith(b"#version") or "merges" in lower:
        return "merges.txt"
    if _looks_like_tiktoken(stripped):
        return "tiktoken"
    if lower.endswith("vocab.json"):  # e.g. a JSON list: the vocab.json reader says what is wrong with it
        return "vocab.json"
    if lower.endswith(".json"):
        return "tokenizer.json"
    if lower.endswith(".txt") or lower.endswith(".vocab") or b"\x00" not in data[:4096]:
        first = stripped.split(b"\n", 1)[0]
        if first.count(b" ") == 1 and not first.startswith(b"["):
            return "merges.txt"
        return "vocab.txt"
    if data[:1] in (b"\n", b"\x12"):  # a ModelProto starts with its pieces (field 1) or trainer spec (field 2)
        return "sentencepiece"
    raise TokenizerFileError(
        f"{name} is not a tokenizer file tokviz recognises; upload a tokenizer.json, a .tiktoken file, "
        "a BERT vocab.txt, a GPT-2 vocab.json with its merges.txt, or a SentencePiece .model."
    )


def check_upload_size(name: str, size: int) -> None:
    """Refuse a file above :data:`tokviz.limits.MAX_UPLOAD_BYTES` before reading it.

    >>> check_upload_size("tokenizer.json", 1_000)
    """
    from tokviz.limits import MAX_UPLOAD_BYTES

    if size > MAX_UPLOAD_BYTES:
        raise LimitExceededError(
            f"{name} is {_size_text(size)}, above this server's limit of up to {_size_text(MAX_UPLOAD_BYTES)} "
            "per uploaded file (TOKVIZ_MAX_UPLOAD_MB)."
        )


def _size_text(size: int) -> str:
    """``_size_text(1_000) == '1,000 bytes'``, ``_size_text(52_428_800) == '50.0 MB'``."""
    return f"{size:,} bytes" if size < 1024 * 1024 else f"{size / 1024 / 1024:,.1f} MB"


def _text(name: str, data: bytes) -> str:
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as error:
        raise TokenizerFileError(f"{name} is not UTF-8 text (byte {error.start} cannot be read).") from None


def load_bytes(
    name: str,
    data: bytes,
    *,
    tiktoken_encoding: str | None = None,
    companion: tuple[str, bytes] | None = None,
) -> Any:
    """A Tokenizer from an uploaded file's name and bytes (what the pages' uploaders give).

    ``tiktoken_encoding`` names the encoding of a ``.tiktoken`` file (a key of
    :func:`tiktoken_encodings`); when None it is guessed from the file name or its number of ranks.
    ``companion`` is the other file of a GPT-2 pair, ``(name, bytes)``: merges.txt for a vocab.json
    or the reverse. Bad files raise :class:`TokenizerFileError` (a ``TokvizError``) saying why.

    >>> tok = load_bytes("vocab.txt", b"[PAD]\\n[UNK]\\n[CLS]\\n[SEP]\\nhello\\n##s\\n")
    >>> tok.encode("Hellos").tokens
    ['[CLS]', 'hello', '##s', '[SEP]']
    """
    from tokviz.errors import TokvizError, named

    try:
        return _load_bytes(name, data, tiktoken_encoding, companion)
    except TokvizError as error:  # every sentence names the file, in a script as in the pages
        raise named(error, name)


def _load_bytes(name: str, data: bytes, tiktoken_encoding: str | None, companion: tuple[str, bytes] | None) -> Any:
    if not isinstance(data, (bytes, bytearray)):
        raise TokenizerFileError(f"{name}: expected the file's bytes, not {type(data).__name__}.")
    check_upload_size(name, len(data))
    if not data.strip():
        raise TokenizerFileError(f"{name} is empty.")
    kind = file_kind(name, bytes(data))
    if kind == "tokenizer.json":
        return _tokenizer_from_json(name, data)
    if kind == "tekken":
        return tokenizer_from_tekken(bytes(data), name)
    if kind == "tiktoken" and companion is not None and file_kind(companion[0], bytes(companion[1])) == "tiktoken-sidecar":
        return load_tiktoken_pair(bytes(data), bytes(companion[1]), companion[0])
    if kind == "tiktoken-sidecar":
        raise TokenizerFileError(f"{name} holds a tiktoken encoding's pattern and special tokens: add its .tiktoken rank file as well.")
    if kind == "tiktoken":
        ranks = parse_tiktoken_ranks(bytes(data))
        chosen = tiktoken_encoding or guess_tiktoken_encoding(name, len(ranks))
        if chosen is None:
            raise TokenizerFileError(
                f"tokviz cannot tell which encoding {name} belongs to; choose one of "
                f"{', '.join(tiktoken_encodings())} (its split pattern and special tokens are not in the file)."
            )
        return tokenizer_from_tiktoken(ranks, chosen)
    if kind == "vocab.txt":
        return tokenizer_from_bert_vocab(_text(name, data))
    if kind == "sentencepiece":
        return tokenizer_from_sentencepiece(bytes(data))
    # A GPT-2 pair: one file and its companion, in either order.
    if companion is None:
        needed = "merges.txt" if kind == "vocab.json" else "vocab.json"
        raise TokenizerFileError(f"{name} is half of a GPT-2 tokenizer: add its {needed} as well.")
    other_name, other_data = companion
    check_upload_size(other_name, len(other_data))
    other_kind = file_kind(other_name, bytes(other_data))
    pair = {kind: (name, data), other_kind: (other_name, other_data)}
    if set(pair) != {"vocab.json", "merges.txt"}:
        raise TokenizerFileError(
            f"{name} and {other_name} are not a vocab.json and a merges.txt; a GPT-2 tokenizer needs one of each."
        )
    return tokenizer_from_gpt2_files(_text(*pair["vocab.json"]), _text(*pair["merges.txt"]))


def load(path: str | Path, *, tiktoken_encoding: str | None = None) -> Any:
    """A Tokenizer from a file (or a folder holding one), whatever its kind.

    A vocab.json finds its merges.txt beside it (``merges.txt`` or ``<prefix>-merges.txt``); a folder
    is searched for tokenizer.json, then vocab.json + merges.txt, vocab.txt, ``*.model``, ``*.tiktoken``.

    >>> import tempfile, os
    >>> folder = tempfile.mkdtemp()
    >>> _ = Path(folder, "vocab.txt").write_text("[UNK]\\nhi\\n")
    >>> load(folder).encode("hi").tokens
    ['hi']
    """
    path = Path(path)
    if path.is_dir():
        path = _main_file(path)
    if not path.is_file():
        raise TokenizerFileError(f"There is no file {str(path)!r}.")
    check_upload_size(path.name, path.stat().st_size)
    data = path.read_bytes()
    companion = None
    kind = file_kind(path.name, data)
    if kind == "tiktoken":
        if sidecar_path(path).is_file():
            check_upload_size(sidecar_path(path).name, sidecar_path(path).stat().st_size)
            companion = (sidecar_path(path).name, sidecar_path(path).read_bytes())
    if kind in ("vocab.json", "merges.txt"):
        partner = _partner(path, kind)
        if partner is not None:
            check_upload_size(partner.name, partner.stat().st_size)
            companion = (partner.name, partner.read_bytes())
    return load_bytes(path.name, data, tiktoken_encoding=tiktoken_encoding, companion=companion)


def _partner(path: Path, kind: str) -> Path | None:
    wanted = "merges.txt" if kind == "vocab.json" else "vocab.json"
    own = "vocab.json" if kind == "vocab.json" else "merges.txt"
    candidates = [path.with_name(wanted)]
    if path.name.endswith(own) and path.name != own:
        candidates.insert(0, path.with_name(path.name[: -len(own)] + wanted))
    return next((candidate for candidate in candidates if candidate.is_file()), None)


def _main_file(folder: Path) -> Path:
    for pattern in ("tokenizer.json", "tekken.json", "vocab.json", "*-vocab.json", "vocab.txt", "*.model", "*.tiktoken"):
        found = sorted(folder.glob(pattern))
        if found:
            return found[0]
    raise TokenizerFileError(
        f"The folder {str(folder)!r} holds no tokenizer file (tokenizer.json, vocab.json + merges.txt, "
        "vocab.txt, *.model or *.tiktoken)."
    )


# ---------------------------------------------------------------------- several uploads at once
@dataclass(frozen=True, slots=True)
class LoadedUpload:
    """One tokenizer from the uploads (``tokenizer`` None and ``error`` set when its file was refused)."""

    name: str  # unique display name: the file name, "vocab.json + merges.txt" for a GPT-2 pair
    tokenizer: Any
    error: str | None = None


def load_uploads(
    files: Sequence[tuple[str, bytes]], *, tiktoken_encodings_by_file: Mapping[str, str] | None = None, bounded: bool = False
) -> list[LoadedUpload]:
    """Load every uploaded file (``(name, bytes)`` pairs), pairing GPT-2's vocab.json and merges.txt.

    A vocab.json pairs with the merges.txt of the same prefix (``gpt2-vocab.json`` with
    ``gpt2-merges.txt``), else with the only unpaired merges.txt. Names are made unique
    (``tokenizer.json``, ``tokenizer.json (2)``). A file that cannot be loaded gives an entry with its
    error sentence, so the others still load. ``bounded=True`` (the pages) reads each one in a child
    process stopped past the server's time and memory bounds (:func:`tokviz.bounded.call`).

    >>> uploads = load_uploads([("vocab.txt", b"[UNK]\\nhi\\n"), ("vocab.txt", b"[UNK]\\nyo\\n"), ("x.bin", b"\\x00\\x01")])
    >>> [(u.name, u.tokenizer is not None) for u in uploads]
    [('vocab.txt', True), ('vocab.txt (2)', True), ('x.bin', False)]
    """
    from tokviz.errors import TokvizError

    chosen = dict(tiktoken_encodings_by_file or {})
    kinds = []
    for name, data in files:
        try:
            kinds.append(file_kind(name, bytes(data)))
        except TokvizError:
            kinds.append("unknown")
    merges = [index for index, kind in enumerate(kinds) if kind == "merges.txt"]
    used: set[int] = set()
    groups: list[tuple[int, int | None]] = []
    for index, kind in enumerate(kinds):
        if kind == "merges.txt":
            continue
        partner = None
        if kind == "tiktoken-sidecar":
            continue
        if kind == "tiktoken":
            sidecars = [i for i, k in enumerate(kinds) if k == "tiktoken-sidecar" and i not in used
                        and Path(files[i][0]).name == Path(files[index][0]).name + ".json"]
            if sidecars:
                partner = sidecars[0]
                used.add(partner)
        if kind == "vocab.json":
            prefix = Path(files[index][0]).name.lower().removesuffix("vocab.json")
            same = [m for m in merges if m not in used and Path(files[m][0]).name.lower().removesuffix("merges.txt") == prefix]
            free = [m for m in merges if m not in used]
            partner = same[0] if same else free[0] if len(free) == 1 else None
            if partner is not None:
                used.add(partner)
        groups.append((index, partner))
    groups.extend((m, None) for m in merges if m not in used)
    groups.extend((i, None) for i, kind in enumerate(kinds) if kind == "tiktoken-sidecar" and i not in used)
    groups.sort(key=lambda group: group[0])

    results: list[LoadedUpload] = []
    taken: set[str] = set()
    for index, partner in groups:
        name, data = files[index]
        label = Path(name).name if partner is None else f"{Path(name).name} + {Path(files[partner][0]).name}"
        unique, copy = label, 2
        while unique in taken:
            unique, copy = f"{label} ({copy})", copy + 1
        taken.add(unique)
        companion = None if partner is None else (files[partner][0], files[partner][1])
        try:
            if bounded:
                from tokviz import bounded as worker

                tokenizer = worker.call(load_bytes, name, data, name=unique, tiktoken_encoding=chosen.get(name), companion=companion)
            else:
                tokenizer = load_bytes(name, data, tiktoken_encoding=chosen.get(name), companion=companion)
        except TokvizError as error:
            results.append(LoadedUpload(unique, None, str(error)))
        else:
            results.append(LoadedUpload(unique, tokenizer))
    return results
