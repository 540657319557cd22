"""DataFrames the Train page shows: merges with their runner-ups, pruned pieces, segmentations.

Each function turns records (``MergeStep``, ``PruneRound``, a model, a WordPiece trace) into a
``pandas.DataFrame`` with readable column names; tokens keep their markers (``Ġ``, ``##``,
``▁``, ``</w>``) and have whitespace made visible (``·``, ``↵``, ``→``), since a table cell
cannot show a space token otherwise. ``st.dataframe`` shows cells as text, never as HTML.

>>> from tokviz.history import MergeStep
>>> step = MergeStep(0, "h", "u", "hu", 15, 15.0, 31, candidates=((("u", "g"), 12.0),))
>>> merge_table([step]).iloc[0].to_dict()  # doctest: +NORMALIZE_WHITESPACE
{'merge #': 1, 'merge': 'h + u → hu', 'count': 15, 'score': 15.0, 'vocab size': 31,
 'runner-up': 'u + g', 'runner-up score': 12.0, 'margin': 3.0}

What this leaves out: styling (colors are the page's job) and pagination (the page shows
the first rows and offers the full CSV).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import pandas as pd

from tokviz.history import EmStep, MergeStep, PruneRound, merge_number
from tokviz.metrics import CompressionMetrics
from tokviz.viz.spans import make_visible, merges_at_size, readable_byte_level

if TYPE_CHECKING:  # pragma: no cover
    from tokviz.models.wordpiece.model import WordPieceTrace


def show(token: str, byte_level: bool = False) -> str:
    """A token as a table cell shows it.

    Whitespace is made visible; byte-level tokens (GPT-2's ``Ġ``-alphabet) are shown as the
    text their bytes spell, or as hex when they hold part of a character:

    >>> show("a b"), show("Ġê°Ģ", byte_level=True), show("ê°", byte_level=True)
    ('a·b', 'Ġ가', '⟨EA⟩⟨B0⟩')
    """
    if byte_level:
        return readable_byte_level(token)
    return make_visible(token)


def segmentation(tokens: Iterable[Any], byte_level: bool = False) -> str:
    """Tokens (strings or ``Token``s) joined by spaces: ``segmentation(['hug', '##s']) == 'hug ##s'``."""
    return " ".join(show(getattr(token, "value", token), byte_level) for token in tokens)


def merge_table(merges: Sequence[MergeStep], byte_level: bool = False, sentencepiece: bool = False) -> pd.DataFrame:
    """One row per merge: ``left + right → token``, its count and score, the runner-up and the margin.

    The runner-up is the best competing pair at that moment; ``margin`` is how far ahead the
    winner was (0 means a tie, decided by the tie-break rule). A training that recorded no
    runner-ups (sentencepiece's BPE) has no such columns. With ``sentencepiece`` the score is the
    piece's score in the ``.model``, minus its rank, as sentencepiece writes it.
    """
    rows = []
    for step in merges:
        runner_up, runner_score = (step.candidates[0] if step.candidates else (None, None))
        rows.append(
            {
                "merge #": merge_number(step.rank),  # the one numbering: 1-based, as the card and the picker say
                "merge": f"{show(step.left, byte_level)} + {show(step.right, byte_level)} → {show(step.token, byte_level)}",
                "count": step.count,
                "score": float(-step.rank) if sentencepiece else step.score,
                "vocab size": step.vocab_size,
                "runner-up": f"{show(runner_up[0], byte_level)} + {show(runner_up[1], byte_level)}" if runner_up else "",
                "runner-up score": runner_score,
                "margin": step.score - runner_score if runner_score is not None else None,
            }
        )
    columns = ["merge #", "merge", "count", "score", "vocab size", "runner-up", "runner-up score", "margin"]
    if merges and not any(step.candidates for step in merges):
        columns = columns[:5]
    return pd.DataFrame(rows, columns=columns)


@dataclass(frozen=True, slots=True)
class StepBox:
    """Bounds and value of the "merge step to inspect" box (merge ranks, 0-based)."""

    min_value: int
    max_value: int
    value: int


def merge_step_box(merges: Sequence[MergeStep], vocab_size: int, current: int | None = None) -> StepBox:
    """The merge-step box for the merges kept at the slider's ``vocab_size``.

    It starts on the FIRST merge (the most frequent pair, the one worth looking at); a
    ``current`` rank from the same training is kept, clamped to the merges at this size. Pass
    ``current=None`` when the training changed, so the box follows the new training.

    >>> steps = [MergeStep(rank, "a", "b", "ab", 10 - rank, 10.0 - rank, 5 + rank) for rank in range(6)]
    >>> merge_step_box(steps, 8), merge_step_box(steps, 8, current=1), merge_step_box(steps, 8, current=5)
    (StepBox(min_value=0, max_value=3, value=0), StepBox(min_value=0, max_value=3, value=1), StepBox(min_value=0, max_value=3, value=3))
    """

    last = max(merges_at_size(merges, vocab_size), 1) - 1
    value = 0 if current is None else min(max(int(current), 0), last)
    return StepBox(0, last, value)


def candidates_table(step: MergeStep, byte_level: bool = False) -> pd.DataFrame:
    """The pairs one merge beat, best first, with how far behind each was."""
    return pd.DataFrame(
        [
            {"pair": f"{show(left, byte_level)} + {show(right, byte_level)}", "score": score, "behind by": step.score - score}
            for (left, right), score in step.candidates
        ],
        columns=["pair", "score", "behind by"],
    )


def removed_pieces_table(prune_rounds: Sequence[PruneRound]) -> pd.DataFrame:
    """Every piece a Unigram pruning round removed, with the loss increase that condemned it."""
    rows = [
        {"round": item.round, "piece": show(piece), "loss increase": loss, "size before": item.size_before, "size after": item.size_after}
        for item in prune_rounds
        for piece, loss in item.removed
    ]
    return pd.DataFrame(rows, columns=["round", "piece", "loss increase", "size before", "size after"])


def em_steps_table(em_steps: Sequence[EmStep]) -> pd.DataFrame:
    """What SentencePiece logs per EM sub-iteration."""
    return pd.DataFrame(
        [
            {"round": step.round, "sub-iteration": step.sub_iteration, "vocab size": step.vocab_size, "objective": step.objective, "tokens": step.num_tokens}
            for step in em_steps
        ],
        columns=["round", "sub-iteration", "vocab size", "objective", "tokens"],
    )


def segmentations_table(top_words: Sequence[tuple[str, int]], model: Any, byte_level: bool = False) -> pd.DataFrame:
    """How the corpus's most frequent words are cut by ``model`` (e.g. ``history.model_at(k)``).

    >>> from tokviz.models.base import Token
    >>> class Chars:
    ...     def tokenize(self, word): return [Token(0, char, (i, i + 1)) for i, char in enumerate(word)]
    >>> segmentations_table([("the", 5)], Chars()).iloc[0].to_dict()
    {'word': 'the', 'count': 5, 'tokens': 't h e', 'pieces': 3}
    """
    rows = []
    for word, count in top_words:
        tokens = model.tokenize(word)
        rows.append({"word": show(word, byte_level), "count": count, "tokens": segmentation(tokens, byte_level), "pieces": len(tokens)})
    return pd.DataFrame(rows, columns=["word", "count", "tokens", "pieces"])


def words_changed_table(
    word_counts: Mapping[str, int] | Sequence[tuple[str, int]], before: Any, after: Any, limit: int = 25, byte_level: bool = False
) -> pd.DataFrame:
    """Words whose segmentation differs between two models (before and after one merge), most frequent first.

    >>> from tokviz.models.base import Token
    >>> class Model:
    ...     def __init__(self, merged): self.merged = merged
    ...     def tokenize(self, word):
    ...         return [word] if self.merged and word == "hu" else list(word)
    >>> words_changed_table({"hu": 4, "go": 2}, Model(False), Model(True)).to_dict("records")
    [{'word': 'hu', 'count': 4, 'before': 'h u', 'after': 'hu'}]
    """
    items = list(word_counts.items()) if isinstance(word_counts, Mapping) else list(word_counts)
    items.sort(key=lambda item: -item[1])
    rows = []
    for word, count in items:
        old_tokens = [getattr(token, "value", token) for token in before.tokenize(word)]
        new_tokens = [getattr(token, "value", token) for token in after.tokenize(word)]
        if old_tokens == new_tokens:  # most words: no formatting for the cells of a row never shown
            continue
        old, new = segmentation(old_tokens, byte_level), segmentation(new_tokens, byte_level)
        if old != new:
            rows.append({"word": show(word, byte_level), "count": count, "before": old, "after": new})
            if len(rows) >= limit:
                break
    return pd.DataFrame(rows, columns=["word", "count", "before", "after"])


def wordpiece_trace_table(trace: "WordPieceTrace") -> pd.DataFrame:
    """The greedy longest-match search, one row per candidate tried.

    ``result`` is ``kept`` for the piece chosen at a position, ``not in vocab`` otherwise,
    and ``→ [UNK]`` on the position where nothing matched.
    """
    rows = []
    for step in trace.steps:
        for attempt in step.attempts:
            rows.append(
                {
                    "position": attempt.start,
                    "candidate": show(attempt.candidate),
                    "span": f"[{attempt.start}, {attempt.end})",
                    "result": "kept" if attempt.matched else "not in vocab",
                }
            )
        if step.match is None:
            rows.append({"position": step.start, "candidate": "—", "span": "", "result": "nothing matches → the whole word is unknown"})
    return pd.DataFrame(rows, columns=["position", "candidate", "span", "result"])


def nbest_table(nbest: Sequence[tuple[Sequence[Any], float]]) -> pd.DataFrame:
    """Unigram n-best segmentations with their log-probability and probability."""
    import math

    return pd.DataFrame(
        [
            {"rank": rank + 1, "segmentation": segmentation(tokens), "log p": log_prob, "p": math.exp(log_prob)}
            for rank, (tokens, log_prob) in enumerate(nbest)
        ],
        columns=["rank", "segmentation", "log p", "p"],
    )


def samples_table(samples: Sequence[Sequence[Any]]) -> pd.DataFrame:
    """Sampled segmentations (subword regularization), how often each was drawn, most frequent first."""
    counts: dict[str, int] = {}
    for tokens in samples:
        key = segmentation(tokens)
        counts[key] = counts.get(key, 0) + 1
    rows = [{"segmentation": key, "drawn": count, "share": count / len(samples)} for key, count in sorted(counts.items(), key=lambda item: -item[1])]
    return pd.DataFrame(rows, columns=["segmentation", "drawn", "share"])


def vocab_table(vocab: Mapping[str, int], special_tokens: Iterable[str] = (), byte_level: bool = False) -> pd.DataFrame:
    """The vocabulary by id, with each token's length and whether it is special."""
    special = set(special_tokens)
    rows = [{"id": token_id, "token": show(token, byte_level and token not in special), "characters": len(token), "special": token in special} for token, token_id in sorted(vocab.items(), key=lambda item: item[1])]
    return pd.DataFrame(rows, columns=["id", "token", "characters", "special"])


def token_stats(metrics: CompressionMetrics) -> dict[str, float | int]:
    """Numbers shown over the token spans, read from the one metrics record (:func:`tokviz.metrics.measure_encodings`).

    Special tokens the post-processor added (``[CLS]``, ``</s>``) are not counted: they are
    not part of the text. Words are whitespace-separated, so every pipeline is measured alike;
    unknown tokens are counted by id, on every model kind.

    >>> from tokviz.metrics import measure_encodings
    >>> from types import SimpleNamespace
    >>> encoding = SimpleNamespace(tokens=["[CLS]", "hug", "##s", "are", "[UNK]", "[SEP]"], ids=[2, 5, 6, 7, 1, 3],
    ...                            offsets=[(0, 0), (0, 3), (3, 4), (5, 8), (9, 10), (0, 0)], special_tokens_mask=[1, 0, 0, 0, 0, 1])
    >>> token_stats(measure_encodings(["hugs are 🤗"], [encoding], vocab_size=8, unk_id=1))
    {'tokens': 4, 'characters per token': 2.5, 'tokens per word': 1.33, 'unknown tokens': 1}
    """
    return {
        "tokens": metrics.tokens,
        "characters per token": round(metrics.characters_per_token, 2),
        "tokens per word": round(metrics.tokens_per_word, 2),
        "unknown tokens": metrics.unknown_tokens,
    }
