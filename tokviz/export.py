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
from typing import Any


def vocab_txt(vocab: Mapping[str, int]) -> str:
    """One token per line, in id order (WordPiece's vocab.txt; line number = id)."""
    return "".join(token + "\n" for token, _ in sorted(vocab.items(), key=lambda item: item[1]))


def merges_txt(merges: Iterable[tuple[str, str]]) -> str:
    """BPE merges by rank, ``left right`` per line, under HF's ``#version: 0.2`` header."""
    return "#version: 0.2\n" + "".join(f"{left} {right}\n" for left, right in merges)


def model_merges(model: Any) -> list[tuple[str, str]] | None:
    """The merge list of a BPE model (``None`` for models without merges)."""
    if type(model).__name__ != "BPE":
        return None
    return [tuple(pair) for pair in model.to_dict()["merges"]]  # type: ignore[misc]


def history_csv(history: Any) -> str:
    """The history's table (one row per merge or EM step) as CSV."""
    return history.to_frame().to_csv(index=False)
