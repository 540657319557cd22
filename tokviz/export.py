"""Files a trained tokenizer exports: vocab.txt, merges.txt, the training history as CSV, and the
folder (or zip) ``transformers`` loads: :func:`save_pretrained`, :func:`transformers_zip`.

tokenizer.json itself comes from ``Tokenizer.to_str()`` (HF's format, loads in ``tokenizers``).
The two text files follow what HF's ``model.save(folder)`` writes:

>>> vocab_txt({"[UNK]": 0, "##s": 2, "hug": 1})
'[UNK]\\nhug\\n##s\\n'
>>> merges_txt([("h", "u"), ("hu", "g")])
'#version: 0.2\\nh u\\nhu g\\n'

What this leaves out: SentencePiece ``.model`` files (a protobuf format tokviz does not write).
"""

from __future__ import annotations

import io
import json
import os
import zipfile
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

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

#: The files of the hand-off, in the order they are written.
TRANSFORMERS_FILES = ("tokenizer.json", "tokenizer_config.json", "special_tokens_map.json")


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

    copy = type(tokenizer).from_str(tokenizer.to_str())
    copy.post_processor = TemplateProcessing(single="$A:0", pair="$A:0 $B:1", special_tokens=[])
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
