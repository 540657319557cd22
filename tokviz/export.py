"""Files a trained tokenizer exports: vocab.txt, merges.txt and the training history as CSV.

tokenizer.json itself comes from ``Tokenizer.to_str()`` (HF's format, loads in ``tokenizers``).
The two text files follow what HF's ``model.save(folder)`` writes:

>>> vocab_txt({"[UNK]": 0, "##s": 2, "hug": 1})
'[UNK]\\nhug\\n##s\\n'
>>> merges_txt([("h", "u"), ("hu", "g")])
'#version: 0.2\\nh u\\nhu g\\n'

What this leaves out: SentencePiece ``.model`` files (a protobuf format tokviz does not write).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
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
