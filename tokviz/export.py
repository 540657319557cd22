"""Files a trained tokenizer exports: vocab.txt, merges.txt, the training history as CSV, and the
folder (or zip) ``transformers`` loads: :func:`save_pretrained`, :func:`transformers_zip`.

tokenizer.json itself comes from ``Tokenizer.to_str()`` (HF's format, loads in ``tokenizers``).
The two text files follow what HF's ``model.save(folder)`` writes:

>>> vocab_txt({"[UNK]": 0, "##s": 2, "hug": 1})
'[UNK]\\nhug\\n##s\\n'
>>> merges_txt([("h", "u"), ("hu", "g")])
'#version: 0.2\\nh u\\nhu g\\n'

Every file kind tokviz reads is written by :func:`export` (one conversion per pair of formats),
with one sentence per part of the pipeline the format cannot hold, or a :class:`ConversionError`
saying why the conversion is impossible:

>>> from tokviz import Tokenizer, models, normalizers, pre_tokenizers
>>> tok = Tokenizer(models.WordPiece({"[UNK]": 0, "hi": 1, "##s": 2}, unk_token="[UNK]"))
>>> tok.normalizer, tok.pre_tokenizer = normalizers.Lowercase(), pre_tokenizers.Whitespace()
>>> written = export(tok, "vocab.txt")
>>> sorted(written.files), written.files["vocab.txt"]
(['vocab.txt'], b'[UNK]\\nhi\\n##s\\n')
>>> export(tok, "tiktoken")
Traceback (most recent call last):
    ...
tokviz.export.ConversionError: A .tiktoken file holds a byte-level BPE's ranks; this tokenizer's model is WordPiece, which has no merges to rank.

What is lost is found by reading the written files back with tokviz's own reader for that format
and comparing each stage with the original's, so the sentences say exactly what a user of the
file would get instead.
"""

from __future__ import annotations

import copy as copy_module
import io
import json
import os
import zipfile
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from tokviz.errors import TokvizError

if TYPE_CHECKING:  # pragma: no cover
    import pandas as pd


def vocab_txt(vocab: Mapping[str, int]) -> str:
    """One token per line, in id order (WordPiece's vocab.txt; line number = id)."""
    return "".join(token + "\n" for token, _ in sorted(vocab.items(), key=lambda item: item[1]))


def merges_txt(merges: Iterable[tuple[str, str]]) -> str:
    """BPE merges by rank, ``left right`` per line, under HF's ``#version: 0.2`` header."""
    return "#version: 0.2\n" + "".join(f"{left} {right}\n" for left, right in merges)


def history_rows_at(history: Any, vocab_size: int | None = None) -> "pd.DataFrame":
    """The rows of ``history.to_frame()`` that the tokenizer at ``vocab_size`` was built from.

    - BPE / WordPiece: the merges ``history.model_at(vocab_size)`` replays (a training to that
      size stops at the first merge that reaches it).
    - WordLevel: the words kept at that size.
    - SentencePiece: its BPE merges as BPE's; char / word: the pieces kept; Unigram: every EM
      step (the slider goes no higher than the trained size, and every step made that vocabulary).
    - Unigram: the EM steps (``method="course"``: the pruning rounds) up to the vocabulary
      ``model_at`` cuts the model from, i.e. the smallest recorded one still holding
      ``vocab_size`` tokens; later steps only shrank the vocabulary below the slider.

    ``None`` keeps every row, as does the trained size.

    >>> from tokviz.trainers import BpeTrainer
    >>> history = BpeTrainer(vocab_size=10, show_progress=False).train_from_word_counts({"hug": 10, "pug": 5, "pun": 12})
    >>> [len(history_rows_at(history, size)) for size in (None, 5, 6, 7, 10)]
    [5, 0, 1, 2, 5]
    """
    frame = history.to_frame()
    if vocab_size is None:
        return frame
    algorithm = history.algorithm.lower()
    if algorithm in ("bpe", "wordpiece"):
        from tokviz.viz.charts import merges_at_size

        return frame.iloc[: merges_at_size(history.merges, vocab_size)]
    if algorithm == "wordlevel":
        return frame[frame["vocab_size"] <= vocab_size]
    if algorithm == "sentencepiece-bpe":  # merge k makes piece k: the model at a size keeps the merges before it
        from tokviz.viz.charts import merges_at_size

        return frame.iloc[: merges_at_size(history.merge_steps, vocab_size)]
    if algorithm in ("sentencepiece-char", "sentencepiece-word"):  # one row per piece, by id
        return frame.iloc[:vocab_size]
    if algorithm == "unigram":
        last_round = _unigram_round_at(history, vocab_size)
        if last_round is None:
            return frame
        if getattr(history, "method", "em") == "course":
            return frame[frame["round"] < last_round]
        return frame[frame["round"] <= last_round]
    return frame


def _unigram_round_at(history: Any, vocab_size: int) -> int | None:
    """The round of the snapshot ``model_at(vocab_size)`` cuts from (``None``: the trained model)."""
    # Unigram prunes DOWN to its target: at or below the trained size every round ran.
    if vocab_size <= history.model.get_vocab_size() or not history.snapshots:
        return None
    specials = list(history.special_tokens)
    if history.unk_token is not None and history.unk_token not in specials:
        specials.append(history.unk_token)
    required = set(history.required_chars)
    # A snapshot's size as model_at counts it: its pieces (not the trainer's temporary <UNK>),
    # the required characters and the special tokens.
    sizes = [len({piece for piece, _ in snapshot.pieces if piece != "<UNK>"} | required) + len(specials) for snapshot in history.snapshots]
    target = max(vocab_size, history.min_vocab_size)
    usable = [index for index, size in enumerate(sizes) if size >= target]
    chosen = min(usable, key=lambda index: sizes[index]) if usable else 0
    return history.snapshots[chosen].round


def history_csv(history: Any, vocab_size: int | None = None) -> str:
    """The history's table as CSV: one row per merge or EM step, up to ``vocab_size`` when given
    (the slider's size, so the file matches the tokenizer downloaded beside it; see
    :func:`history_rows_at`), else every row."""
    if vocab_size is None:
        return full_history_csv(history)
    return history_rows_at(history, vocab_size).to_csv(index=False)


def model_merges(model: Any) -> list[tuple[str, str]] | None:
    """The merge list of a BPE model (``None`` for models without merges)."""
    if type(model).__name__ != "BPE":
        return None
    return [tuple(pair) for pair in model.to_dict()["merges"]]  # type: ignore[misc]


def full_history_csv(history: Any) -> str:
    """The whole history's table (one row per merge or EM step) as CSV, whatever the slider says."""
    return history.to_frame().to_csv(index=False)


# ---------------------------------------------------------------------- the transformers hand-off
#: The roles ``transformers`` gives special tokens, in the order its files list them.
SPECIAL_TOKEN_ROLES: tuple[str, ...] = ("bos", "eos", "unk", "sep", "pad", "cls", "mask")

#: Token spellings recognised for each role (the common ones of BERT, RoBERTa/T5, GPT-2, Llama).
ROLE_SPELLINGS: dict[str, tuple[str, ...]] = {
    "bos": ("<s>", "[BOS]", "<bos>", "<|startoftext|>", "<|begin_of_text|>", "<|endoftext|>"),
    "eos": ("</s>", "[EOS]", "<eos>", "<|endoftext|>", "<|end_of_text|>"),
    "unk": ("[UNK]", "<unk>", "<|unk|>"),
    "sep": ("[SEP]", "<sep>"),
    "pad": ("[PAD]", "<pad>", "<|pad|>", "<|padding|>"),
    "cls": ("[CLS]", "<cls>"),
    "mask": ("[MASK]", "<mask>"),
}

#: What transformers writes for "no limit" (``transformers.tokenization_utils_base.VERY_LARGE_INTEGER``).
NO_MAX_LENGTH = int(1e30)

def special_token_roles(tokenizer: Any) -> dict[str, str]:
    """Special tokens by transformers role, from the model's unknown token and the usual spellings.

    Only tokens of the vocabulary count; the model's own ``unk_token`` wins for ``unk``.

    >>> from tokviz import Tokenizer, models
    >>> tok = Tokenizer(models.WordPiece({"[UNK]": 0, "[CLS]": 1, "[SEP]": 2, "[PAD]": 3, "hi": 4}))
    >>> special_token_roles(tok)
    {'unk': '[UNK]', 'sep': '[SEP]', 'pad': '[PAD]', 'cls': '[CLS]'}
    """
    roles: dict[str, str] = {}
    vocab = tokenizer.get_vocab(with_added_tokens=True)
    model = tokenizer.model
    unk = getattr(model, "unk_token", None)
    if not isinstance(unk, str):
        unk_id = getattr(model, "unk_id", None)
        unk = tokenizer.id_to_token(unk_id) if isinstance(unk_id, int) else None
    for role in SPECIAL_TOKEN_ROLES:
        if role == "unk" and unk and unk in vocab:
            roles[role] = unk
            continue
        found = next((spelling for spelling in ROLE_SPELLINGS[role] if spelling in vocab), None)
        if found is not None:
            roles[role] = found
    return roles


def _added_token_entry(token: Any) -> dict[str, Any]:
    return {
        "content": token.content,
        "lstrip": token.lstrip,
        "normalized": token.normalized,
        "rstrip": token.rstrip,
        "single_word": token.single_word,
        "special": token.special,
    }


def transformers_files(
    tokenizer: Any,
    *,
    model_max_length: int | None = None,
    special_tokens: Mapping[str, str] | None = None,
) -> dict[str, str]:
    """The three files ``transformers.AutoTokenizer.from_pretrained`` reads, name -> text.

    - ``tokenizer.json``: :meth:`Tokenizer.to_str` (with an explicit ``$A:0 $B:1`` template when the
      tokenizer has no post-processor, as transformers 5 would add: see :func:`_with_explicit_post_processor`).
    - ``tokenizer_config.json``: ``tokenizer_class`` ``PreTrainedTokenizerFast``, ``model_max_length``
      (given, else the tokenizer's truncation length, else transformers' "no limit"), the special tokens
      by role, the added tokens by id, and ``clean_up_tokenization_spaces: false`` so ``decode`` gives
      what tokviz's decoder gives.
    - ``special_tokens_map.json``: the special tokens by role (``bos``, ``eos``, ``unk``, ``sep``,
      ``pad``, ``cls``, ``mask`` — :func:`special_token_roles`, or ``special_tokens`` given as
      ``{"pad": "<pad>", ...}``), and the other special tokens as ``additional_special_tokens``.

    >>> from tokviz import Tokenizer, models
    >>> tok = Tokenizer(models.WordLevel({"<unk>": 0, "hi": 1}, unk_token="<unk>"))
    >>> tok.add_special_tokens(["<unk>"])
    1
    >>> files = transformers_files(tok, model_max_length=128)
    >>> json.loads(files["special_tokens_map.json"])
    {'unk_token': '<unk>'}
    >>> json.loads(files["tokenizer_config.json"])["model_max_length"]
    128
    """
    vocab = tokenizer.get_vocab(with_added_tokens=True)
    roles = dict(special_token_roles(tokenizer))
    for role, content in (special_tokens or {}).items():
        role = role.removesuffix("_token")
        if role not in SPECIAL_TOKEN_ROLES:
            from tokviz.errors import SpecialTokenError

            raise SpecialTokenError(f"Unknown special-token role {role!r}; use one of {', '.join(SPECIAL_TOKEN_ROLES)}.")
        if content not in vocab:
            from tokviz.errors import SpecialTokenError

            raise SpecialTokenError(f"The {role} token {content!r} is not in the tokenizer's vocabulary.")
        roles[role] = content
    if model_max_length is None:
        truncation = tokenizer.truncation
        model_max_length = truncation["max_length"] if truncation else NO_MAX_LENGTH
    added = tokenizer.get_added_tokens_decoder()
    role_tokens = set(roles.values())
    additional = [token.content for _, token in sorted(added.items()) if token.special and token.content not in role_tokens]
    special_map: dict[str, Any] = {f"{role}_token": roles[role] for role in SPECIAL_TOKEN_ROLES if role in roles}
    if additional:
        special_map["additional_special_tokens"] = additional
    config: dict[str, Any] = {
        "added_tokens_decoder": {str(token_id): _added_token_entry(token) for token_id, token in sorted(added.items())},
        **special_map,
        "clean_up_tokenization_spaces": False,
        "model_max_length": model_max_length,
        "tokenizer_class": "PreTrainedTokenizerFast",
    }
    return {
        "tokenizer.json": _with_explicit_post_processor(tokenizer).to_str(pretty=True),
        "tokenizer_config.json": json.dumps(config, ensure_ascii=False, indent=2),
        "special_tokens_map.json": json.dumps(special_map, ensure_ascii=False, indent=2),
    }


def _with_explicit_post_processor(tokenizer: Any) -> Any:
    """The tokenizer, or a copy with ``TemplateProcessing("$A:0", "$A:0 $B:1")`` when it has no post-processor.

    transformers 5 installs exactly this template in a fast tokenizer that has none; HF ``tokenizers``
    without a post-processor leaves the overflowing pieces of a pair without sequence ids, the template
    gives them theirs. Writing it makes transformers 4 and 5, and ``tokviz.load(folder)``, agree on every
    field (the ids, type ids and tokens are the same either way).
    """
    if tokenizer.post_processor is not None:
        return tokenizer
    from tokviz.processors import TemplateProcessing

    copy = copy_module.copy(tokenizer)  # (an independent copy; re-reading its JSON put it through the upload limits)
    # a SentencePiece .model's tokenizer carries the BOS template transformers puts on that file
    # (tokviz.sentencepiece.convert.from_model_bytes); the app's views encode without it, as sentencepiece
    template = getattr(tokenizer, "transformers_post_processor", None)
    copy.post_processor = template or TemplateProcessing(single="$A:0", pair="$A:0 $B:1", special_tokens=[])
    return copy


def save_pretrained(
    tokenizer: Any,
    directory: str | os.PathLike[str],
    *,
    model_max_length: int | None = None,
    special_tokens: Mapping[str, str] | None = None,
) -> tuple[str, ...]:
    """Write :func:`transformers_files` into ``directory`` (created if needed); returns the paths.

    Then ``transformers.AutoTokenizer.from_pretrained(directory)`` loads it as a fast tokenizer.
    """
    folder = Path(directory)
    folder.mkdir(parents=True, exist_ok=True)
    paths = []
    for name, text in transformers_files(tokenizer, model_max_length=model_max_length, special_tokens=special_tokens).items():
        path = folder / name
        path.write_text(text, encoding="utf-8")
        paths.append(str(path))
    return tuple(paths)


def transformers_zip(
    tokenizer: Any,
    *,
    model_max_length: int | None = None,
    special_tokens: Mapping[str, str] | None = None,
) -> bytes:
    """The bytes of a zip holding :func:`transformers_files` (the "Download for transformers" button).

    Unzip it into a folder and pass the folder to ``AutoTokenizer.from_pretrained``.

    >>> from tokviz import Tokenizer, models
    >>> data = transformers_zip(Tokenizer(models.WordLevel({"<unk>": 0}, unk_token="<unk>")))
    >>> sorted(zipfile.ZipFile(io.BytesIO(data)).namelist())
    ['special_tokens_map.json', 'tokenizer.json', 'tokenizer_config.json']
    """
    buffer = io.BytesIO()
    files = transformers_files(tokenizer, model_max_length=model_max_length, special_tokens=special_tokens)
    with zipfile.ZipFile(buffer, "w", compression=zipfile.ZIP_DEFLATED) as archive:
        for name, text in files.items():
            # A fixed date: the same tokenizer gives the same bytes (Streamlit can cache them).
            info = zipfile.ZipInfo(name, date_time=(2020, 1, 1, 0, 0, 0))
            info.compress_type = zipfile.ZIP_DEFLATED
            archive.writestr(info, text.encode("utf-8"))
    return buffer.getvalue()


# ---------------------------------------------------------------------- every file kind written
#: The file kinds :func:`export` writes, with the label the pages show.
EXPORT_FORMATS: dict[str, str] = {
    "tokenizer.json": "Hugging Face tokenizer.json",
    "vocab.json+merges.txt": "GPT-2 vocab.json + merges.txt",
    "vocab.txt": "BERT vocab.txt (WordPiece)",
    "tiktoken": "tiktoken ranks (.tiktoken + .tiktoken.json sidecar: pattern, special tokens)",
    "sentencepiece": "SentencePiece .model",
    "transformers": "transformers folder (tokenizer.json, tokenizer_config.json, special_tokens_map.json)",
}


class ConversionError(TokvizError):
    """A tokenizer that cannot be written in a format, with a sentence saying why."""


@dataclass(frozen=True, slots=True)
class ExportedFiles:
    """The files of one format (name -> bytes) and a sentence for each thing they do not keep."""

    format: str
    files: dict[str, bytes]
    lost: tuple[str, ...] = ()

    @property
    def download_name(self) -> str:
        """One file as itself, several as a zip: ``'tokenizer.json'``, ``'tokenizer-tiktoken.zip'``."""
        if len(self.files) == 1:
            return next(iter(self.files))
        return f"tokenizer-{self.format.replace('+', '-').replace('.', '-')}.zip"

    def data(self) -> bytes:
        """The single file's bytes, or a zip of the files (fixed dates: the same files give the same bytes)."""
        if len(self.files) == 1:
            return next(iter(self.files.values()))
        buffer = io.BytesIO()
        with zipfile.ZipFile(buffer, "w", compression=zipfile.ZIP_DEFLATED) as archive:
            for name, data in self.files.items():
                info = zipfile.ZipInfo(name, date_time=(2020, 1, 1, 0, 0, 0))
                info.compress_type = zipfile.ZIP_DEFLATED
                archive.writestr(info, data)
        return buffer.getvalue()

    def save(self, directory: str | os.PathLike[str]) -> tuple[str, ...]:
        """Write the files into ``directory`` (created if needed); returns their paths."""
        folder = Path(directory)
        folder.mkdir(parents=True, exist_ok=True)
        paths = []
        for name, data in self.files.items():
            (folder / name).write_bytes(data)
            paths.append(str(folder / name))
        return tuple(paths)


def export(tokenizer: Any, format: str) -> ExportedFiles:
    """The tokenizer written as ``format`` (a key of :data:`EXPORT_FORMATS`), with what the files lose.

    Raises :class:`ConversionError` when the format cannot hold the tokenizer's model at all (a
    Unigram in a vocab.txt, a character-level BPE in a .tiktoken file).
    """
    writers = {
        "tokenizer.json": _tokenizer_json_files,
        "vocab.json+merges.txt": _gpt2_files,
        "vocab.txt": _vocab_txt_files,
        "tiktoken": _tiktoken_files,
        "sentencepiece": _sentencepiece_files,
        "transformers": lambda tok: {name: text.encode("utf-8") for name, text in transformers_files(tok).items()},
    }
    if format not in writers:
        raise ConversionError(f"Unknown file kind {format!r}; tokviz writes {', '.join(EXPORT_FORMATS)}.")
    files, reasons = writers[format](tokenizer) if format == "tiktoken" else (writers[format](tokenizer), ())
    return ExportedFiles(format, files, tuple(reasons) + lost_in(tokenizer, format, files))


def _model_name(tokenizer: Any) -> str:
    return type(tokenizer.model).__name__


def _tokenizer_json_files(tokenizer: Any) -> dict[str, bytes]:
    return {"tokenizer.json": tokenizer.to_str(pretty=True).encode("utf-8")}


def _gpt2_files(tokenizer: Any) -> dict[str, bytes]:
    """HF's ``BPE.save(folder)``: the model's vocab (by id) and merges, nothing else."""
    if _model_name(tokenizer) != "BPE":
        raise ConversionError(
            f"vocab.json + merges.txt hold a BPE's vocabulary and merges; this tokenizer's model is {_model_name(tokenizer)}, "
            "which has no merges." + (" Write a vocab.txt instead." if _model_name(tokenizer) == "WordPiece" else ""))
    vocab = tokenizer.model.get_vocab()
    ordered = dict(sorted(vocab.items(), key=lambda item: item[1]))
    merges = model_merges(tokenizer.model) or []
    unwritable = [pair for pair in merges if any(" " in part or "\n" in part or "\r" in part or not part for part in pair)]
    if unwritable:
        raise ConversionError(
            f"merges.txt holds one merge per line, its two tokens separated by a space; {len(unwritable):,} of this model's "
            f"merges hold a token with a space or a line break (e.g. {unwritable[0]!r}), which the file cannot hold: "
            "write a tokenizer.json instead.")
    return {
        "vocab.json": json.dumps(ordered, ensure_ascii=False).encode("utf-8"),
        "merges.txt": merges_txt(merges).encode("utf-8"),
    }


def _vocab_txt_files(tokenizer: Any) -> dict[str, bytes]:
    if _model_name(tokenizer) != "WordPiece":
        raise ConversionError(
            f"A vocab.txt holds a WordPiece vocabulary (one token per line); this tokenizer's model is {_model_name(tokenizer)}"
            + (", whose merges a list of tokens cannot hold." if _model_name(tokenizer) == "BPE" else
               ", whose scores a list of tokens cannot hold." if _model_name(tokenizer) == "Unigram" else
               ", which BERT's reader would read as WordPiece."))
    vocab = tokenizer.model.get_vocab()
    ids = sorted(vocab.values())
    if ids != list(range(len(ids))):
        raise ConversionError("A vocab.txt gives each token the id of its line; this vocabulary's ids have gaps.")
    broken = [token for token in vocab if "\n" in token or "\r" in token or token != token.rstrip()]
    if broken:
        raise ConversionError(f"A vocab.txt holds one token per line, its end trimmed; {len(broken):,} tokens hold a line break "
                              f"or end in a space (e.g. {broken[0]!r}), which the file cannot hold: write a tokenizer.json instead.")
    return {"vocab.txt": vocab_txt(vocab).encode("utf-8")}


def _sentencepiece_files(tokenizer: Any) -> dict[str, bytes]:
    from tokviz.sentencepiece.convert import to_model_bytes

    if _model_name(tokenizer) not in ("BPE", "Unigram"):
        raise ConversionError(
            f"A SentencePiece .model holds a Unigram or BPE model; this tokenizer's model is {_model_name(tokenizer)}.")
    try:
        return {"tokenizer.model": to_model_bytes(tokenizer)}
    except TokvizError as error:
        raise ConversionError(f"This tokenizer cannot be written as a SentencePiece .model: {error}") from None


def _tiktoken_files(tokenizer: Any) -> tuple[dict[str, bytes], list[str]]:
    """``tokenizer.tiktoken`` (ranks = ids) and ``tokenizer.tiktoken.json`` (pattern, special tokens, BOS)."""
    from tokviz.inspect import is_byte_level
    from tokviz.tiktoken_format import tiktoken_vocab_and_merges
    from tokviz.tiktoken_format import TiktokenSpec, rank_file_text, token_bytes

    if _model_name(tokenizer) != "BPE":
        raise ConversionError(
            f"A .tiktoken file holds a byte-level BPE's ranks; this tokenizer's model is {_model_name(tokenizer)}, "
            "which has no merges to rank.")
    if not is_byte_level(tokenizer):
        raise ConversionError(
            "A .tiktoken file ranks byte strings; this BPE's tokens are characters (no ByteLevel pre-tokenizer), "
            "so its tokens and merges have no byte form tiktoken could use.")
    added = tokenizer.get_added_tokens_decoder()
    specials = tuple((token.content, token_id) for token_id, token in sorted(added.items()) if token.special)
    special_ids = {token_id for _, token_id in specials}
    # A special token the model's vocab also holds (GPT-2's <|endoftext|>) is tiktoken's special token, not a rank.
    vocab = {symbol: token_id for symbol, token_id in tokenizer.model.get_vocab().items() if token_id not in special_ids}
    try:
        ranks = {token_bytes(symbol): token_id for symbol, token_id in vocab.items()}
    except KeyError:
        odd = next(symbol for symbol in vocab if any(char not in _byte_symbols() for char in symbol))
        raise ConversionError(f"The token {odd[:30]!r} is not made of byte-level symbols, so it has no bytes for a .tiktoken file.") from None
    if len(ranks) != len(vocab):
        raise ConversionError("Two tokens of this vocabulary spell the same bytes; tiktoken gives each byte string one rank.")
    missing = 256 - sum(1 for token in ranks if len(token) == 1)
    if missing:
        raise ConversionError(f"tiktoken needs all 256 single bytes as ranks; this vocabulary lacks {missing} of them.")
    reasons: list[str] = []
    pattern, pattern_reasons = _split_pattern(tokenizer)
    reasons += pattern_reasons
    not_special = [token.content for token in added.values() if not token.special]
    if not_special:
        reasons.append(f"tiktoken has no added tokens that are not special: {', '.join(map(repr, not_special[:3]))} "
                       "are written as special tokens, which tiktoken matches only when asked (allowed_special).")
    bos = _bos_token(tokenizer)
    _, derived = tiktoken_vocab_and_merges(ranks)
    own = [(left, right) for left, right in (model_merges(tokenizer.model) or [])]
    if derived != own and own:
        differing = sum(1 for pair in set(derived) ^ set(own))
        reasons.append(
            "tiktoken merges any two adjacent pieces whose join is a token, lowest rank first, and keeps a piece that is "
            f"a token whole; this BPE's own merge list differs from that rule ({differing:,} merges differ), so some words "
            "can split differently.")
    spec = TiktokenSpec(name="tokenizer", pat_str=pattern, special_tokens=specials, bos_token=bos)
    files = {"tokenizer.tiktoken": rank_file_text(ranks).encode("ascii"), "tokenizer.tiktoken.json": spec.to_json().encode("utf-8")}
    return files, reasons


def _byte_symbols() -> set[str]:
    from tokviz.byte_level import UNICODE_TO_BYTES

    return set(UNICODE_TO_BYTES)




def _split_pattern(tokenizer: Any) -> tuple[str, list[str]]:
    """The one pattern a byte-level pre-tokenizer splits with, and what tiktoken cannot do of the rest."""
    data = tokenizer.pre_tokenizer.to_dict() if tokenizer.pre_tokenizer is not None else None
    steps = data.get("pretokenizers", []) if isinstance(data, dict) and data.get("type") == "Sequence" else [data] if data else []
    patterns: list[str] = []
    reasons: list[str] = []
    for step in steps:
        kind = step.get("type")
        if kind == "Split" and step.get("behavior") == "Isolated" and not step.get("invert"):
            pattern = step.get("pattern", {})
            patterns.append(pattern.get("Regex") if "Regex" in pattern else _regex_escape(pattern.get("String", "")))
        elif kind == "ByteLevel":
            if step.get("use_regex", True):
                # GPT-2's split pattern, what ByteLevel(use_regex=True) splits with (tiktoken's r50k)
                from tokviz.pre_tokenizers import GPT2_PATTERN

                patterns.append(GPT2_PATTERN)
            if step.get("add_prefix_space"):
                reasons.append("ByteLevel's add_prefix_space (a space put before the text) has no place in tiktoken: "
                               "the first word is encoded without it.")
        else:
            reasons.append(f"The pre-tokenizer step {kind} cannot be written in tiktoken's single split pattern.")
    if len(patterns) != 1:
        reasons.append("tiktoken splits with exactly one pattern; this pipeline splits with "
                       f"{len(patterns)}, so the sidecar keeps {'the first' if patterns else 'none (one piece per text)'}.")
    return (patterns[0] if patterns else r"[\s\S]+"), reasons


def _regex_escape(text: str) -> str:
    import re

    return re.escape(text)


def _bos_token(tokenizer: Any) -> str | None:
    """The special token the post-processor puts first in a single sequence (``<|begin_of_text|>``), if any."""
    try:
        ids = tokenizer.encode("a").ids
        plain = tokenizer.encode("a", add_special_tokens=False).ids
    except Exception:  # noqa: BLE001 - a tokenizer that cannot encode "a" has no BOS to find
        return None
    if len(ids) > len(plain) and ids[1 : 1 + len(plain)] == plain:
        token = tokenizer.id_to_token(ids[0])
        return token
    return None


# ---------------------------------------------------------------------- what a format loses
#: Why each stage is lost, by format (the reader rebuilds it the way the sentence says).
_REBUILT_BY = {
    "vocab.json+merges.txt": "GPT-2's reader builds GPT-2's pipeline around them (ByteLevel pre-tokenizer and decoder)",
    "vocab.txt": "BERT's reader builds BERT's pipeline around it (BertNormalizer, BertPreTokenizer, [CLS] $A [SEP], WordPiece decoder)",
    "tiktoken": "a tiktoken encoding is byte-level BPE with one split pattern and special tokens",
    "sentencepiece": "SentencePiece's .model keeps its own normalizer spec and Metaspace-style pieces",
    "tokenizer.json": "HF's tokenizer.json",
    "transformers": "the folder's tokenizer.json",
}
_STAGES = ("normalizer", "pre_tokenizer", "post_processor", "decoder")


def lost_in(tokenizer: Any, format: str, files: Mapping[str, bytes]) -> tuple[str, ...]:
    """One sentence per stage, model option or added token the written ``files`` do not give back.

    The files are read back with tokviz's reader for the format and compared stage by stage (a
    SentencePiece .model whose ``tokviz.sentencepiece`` reader is missing is not compared).
    """
    from tokviz.errors import TokvizError
    from tokviz.inspect import describe_component
    from tokviz.loaders import load_bytes

    names = list(files)
    try:
        if format == "transformers":
            reloaded = load_bytes("tokenizer.json", files["tokenizer.json"])
        elif format == "vocab.json+merges.txt":
            reloaded = load_bytes("vocab.json", files["vocab.json"], companion=("merges.txt", files["merges.txt"]))
        elif format == "tiktoken":
            reloaded = load_bytes("tokenizer.tiktoken", files["tokenizer.tiktoken"], companion=("tokenizer.tiktoken.json", files["tokenizer.tiktoken.json"]))
        elif format == "sentencepiece":
            reloaded = load_bytes("tokenizer.model", files[names[0]])
        else:
            reloaded = load_bytes(names[0], files[names[0]])
    except TokvizError as error:
        return (f"tokviz cannot read the written files back ({error}), so what they keep was not checked.",)
    reasons = []
    why = _REBUILT_BY[format]
    # tiktoken's own differences are said by _tiktoken_files: its one pattern, its merge rule (ignore_merges).
    skipped = {"pre_tokenizer", "ignore_merges"} if format == "tiktoken" else set()
    for stage in _STAGES:
        if stage in skipped:
            continue
        before, after = getattr(tokenizer, stage), getattr(reloaded, stage)
        before_dict = None if before is None else before.to_dict()
        after_dict = None if after is None else after.to_dict()
        if format == "transformers" and stage == "post_processor" and before_dict is None:
            continue  # the hand-off writes transformers' own $A:0 $B:1 template (see _with_explicit_post_processor)
        if before_dict != after_dict:
            reasons.append(f"The {stage.replace('_', '-')} {describe_component(before_dict)} is not kept: "
                           f"read back it is {describe_component(after_dict)} ({why}).")
    model_before = {k: v for k, v in tokenizer.model.to_dict().items() if k not in ("vocab", "merges")}
    model_after = {k: v for k, v in reloaded.model.to_dict().items() if k not in ("vocab", "merges")}
    changed = sorted(key for key in model_before.keys() | model_after.keys()
                     if model_before.get(key) != model_after.get(key) and key not in skipped)
    if changed:
        reasons.append("The model's " + ", ".join(f"{key}={model_before.get(key)!r}" for key in changed)
                       + " " + ("is" if len(changed) == 1 else "are") + " not kept: read back "
                       + ", ".join(f"{key}={model_after.get(key)!r}" for key in changed) + ".")
    added_before = {(t.content, i, t.special) for i, t in tokenizer.get_added_tokens_decoder().items()}
    added_after = {(t.content, i, t.special) for i, t in reloaded.get_added_tokens_decoder().items()}
    dropped = sorted(added_before - added_after, key=lambda item: item[1])
    if dropped:
        reasons.append(f"{len(dropped):,} added token(s) are not kept ({', '.join(repr(c) for c, _, _ in dropped[:4])}"
                       f"{', …' if len(dropped) > 4 else ''}).")
    if tokenizer.encode_special_tokens != reloaded.encode_special_tokens:
        reasons.append("encode_special_tokens is not kept: read back, special tokens written in the text are "
                       + ("read as text." if reloaded.encode_special_tokens else "matched as special tokens."))
    return tuple(reasons)
