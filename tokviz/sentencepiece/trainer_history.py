"""The history of a SentencePiece training (:func:`~tokviz.sentencepiece.trainer.train_sentencepiece`'s result).

Apart from :mod:`tokviz.sentencepiece.trainer` so that ``SentencePieceTrainer.train``, which returns no
history, never loads it (nor :mod:`tokviz.history`): a small training's imports count against it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from tokviz.history import MergeStep, TrainingHistory
from tokviz.sentencepiece.model_proto import ModelProto, PieceType, SentencePiece

__all__ = ["SentencePieceHistory"]


@dataclass(frozen=True)
class SentencePieceHistory(TrainingHistory):
    """A SentencePiece training: the ``.model`` (``proto``) plus what the model type's trainer recorded.

    ``merge_steps`` (bpe) are :class:`MergeStep` records; ``unigram`` holds the
    :class:`~tokviz.sentencepiece.trainer_unigram.UnigramResult` (``em_steps``: :class:`EmStep`,
    ``prune_rounds``: :class:`PruneRound` with the loss of each removed piece, ``snapshots``). ``proto_at(k)`` is the ``.model`` at vocab size ``k``;
    ``model_at(k)`` its tokviz model (see :mod:`tokviz.sentencepiece.convert`).
    """

    proto: ModelProto | None = None
    merge_steps: tuple[MergeStep, ...] = ()
    unigram: Any = None
    sentences: int = 0
    skipped_too_long: int = 0
    character_coverage: float = 1.0

    def to_model_bytes(self) -> bytes:
        return self.proto.to_bytes()  # type: ignore[union-attr]

    def proto_at(self, vocab_size: int) -> ModelProto:
        """The model at ``vocab_size`` pieces (bpe: fewer merges; unigram: the pruning snapshot; char/word: the most frequent)."""
        proto = self.proto
        assert proto is not None
        if not self.min_vocab_size <= vocab_size <= self.max_vocab_size:
            raise ValueError(f"vocab_size must be between {self.min_vocab_size} and {self.max_vocab_size}, got {vocab_size}.")
        fixed = [p for p in proto.pieces if p.type != PieceType.NORMAL]
        normal = [p for p in proto.pieces if p.type == PieceType.NORMAL]
        keep = vocab_size - len(fixed)
        if self.algorithm == "sentencepiece-bpe":
            n_merges = len(self.merge_steps)
            chars = normal[n_merges:]
            merges = normal[: max(0, keep - len(chars))]
            kept = [SentencePiece(p.piece, -float(i)) for i, p in enumerate(merges + chars)]
        elif self.algorithm == "sentencepiece-unigram" and self.unigram is not None:
            # the smallest recorded vocabulary that is large enough, its best pieces (characters kept)
            pool = next((snap for snap in reversed(self.unigram.snapshots) if len(snap) >= keep), self.unigram.snapshots[0])
            chars = [(p, s) for p, s in pool if len(p) == 1][:keep]
            rest = [(p, s) for p, s in pool if len(p) != 1][: max(0, keep - len(chars))]
            kept = [SentencePiece(p, s) for p, s in sorted(chars + rest, key=lambda item: -item[1])]
        else:
            kept = sorted(normal, key=lambda p: -p.score)[:keep]
        pieces: list[SentencePiece] = []
        it = iter(kept)
        for p in proto.pieces:
            if p.type != PieceType.NORMAL:
                pieces.append(p)
            else:
                nxt = next(it, None)
                if nxt is not None:
                    pieces.append(nxt)
        pieces.extend(it)
        return proto.replace(pieces=tuple(pieces), trainer_spec=proto.trainer_spec.replace(vocab_size=len(pieces)))

    def model_at(self, vocab_size: int) -> Any:
        from tokviz.sentencepiece.convert import model_from_proto

        return model_from_proto(self.proto_at(vocab_size))

    def to_frame(self) -> Any:
        import pandas as pd

        if self.merge_steps:
            return pd.DataFrame([{"rank": s.rank, "left": s.left, "right": s.right, "token": s.token, "count": s.count,
                                  "vocab_size": s.vocab_size} for s in self.merge_steps])
        if self.unigram is not None:
            return pd.DataFrame([{"round": e.round, "sub_iteration": e.sub_iteration, "vocab_size": e.vocab_size,
                                  "objective": e.objective, "num_tokens": e.num_tokens} for e in self.unigram.em_steps])
        return pd.DataFrame([{"piece": p.piece, "score": p.score, "type": p.type.name} for p in self.proto.pieces])  # type: ignore[union-attr]
