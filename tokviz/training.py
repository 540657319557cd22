"""One training, start to end, as a pure function: the seam between the app and where trainings run.

``run_training(config, vocab_size, lines)`` counts the words of ``lines`` through the config's
normalizers and pre-tokenizers (or takes counts already made), checks the server's limits, and
trains the config's model to ``vocab_size``. It imports no streamlit, so the app's cache, a
worker process and the command line all train through the same code and get the same history.

>>> from tokviz.pipeline_config import PipelineConfig
>>> history = run_training(PipelineConfig(model="BPE"), 40, ("low lower lowest", "new newer"))
>>> history.algorithm
'BPE'

A SentencePiece config (``model="SentencePiece"``) trains through :mod:`tokviz.sentencepiece`
from the raw ``lines`` (no pre-tokenization: whitespace is kept as ``▁``); word counts are not
used. Its history is a :class:`~tokviz.sentencepiece.SentencePieceHistory` (``proto_at(k)`` is
the ``.model`` at size ``k``):

>>> from tokviz.pipeline_config import sentencepiece_config
>>> history = run_training(sentencepiece_config(sp_model_type="bpe"), 20, ("low lower lowest", "new newer") * 3)
>>> history.algorithm, [piece.piece for piece in history.proto.pieces][3:7]
('sentencepiece-bpe', ['lo', 'we', '▁lo', 'ne'])
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from typing import Any

from tokviz.pipeline_config import PipelineConfig
from tokviz.sentencepiece.trainer import SentencePieceHistory

Progress = Callable[[str, int, int], None]


def count_config_words(config: PipelineConfig, lines: Sequence[str]) -> Counter:
    """Word counts of ``lines`` through ``config``'s normalizers and pre-tokenizers."""
    from tokviz.pipeline_config import build_normalizer, build_pre_tokenizer
    from tokviz.word_counts import count_words

    return count_words(lines, build_normalizer(config), build_pre_tokenizer(config))


def run_training(config: PipelineConfig, vocab_size: int, lines: Sequence[str], progress: Progress | None = None,
                 words: Counter | None = None) -> Any:
    """Train ``config``'s model to ``vocab_size`` on ``lines`` and return the training's history.

    ``words`` are the word counts of ``lines`` if the caller has them already (the app caches them);
    a corpus or a word above the server's limits raises ``LimitExceededError`` before any training,
    and all user patterns of the training share one time budget.
    """
    from tokviz.limits import check_training_request
    from tokviz.models.trainer import train_for_model
    from tokviz.patterns import time_budget
    from tokviz.pipeline_config import build_model, build_trainer

    if config.model == "SentencePiece":
        check_training_request(sum(map(len, lines)))
        return train_sentencepiece_config(config, vocab_size, lines, progress)
    with time_budget():
        if words is None:
            words = count_config_words(config, lines)
        check_training_request(sum(map(len, lines)), words)
        # HF's trainers keep the options of the model they train (unk_token, dropout, ...).
        return train_for_model(build_trainer(config, vocab_size), words, build_model(config), progress)


def train_sentencepiece_config(config: PipelineConfig, vocab_size: int, lines: Sequence[str], progress: Progress | None = None) -> Any:
    """Train a SentencePiece config on the raw ``lines`` with :func:`tokviz.sentencepiece.train_sentencepiece`.

    Char and word models get a tokviz model too (sentencepiece's conversion has none for them):
    see :class:`WholePieceHistory`.
    """
    from tokviz.pipeline_config import sentencepiece_options
    from tokviz.sentencepiece import train_sentencepiece

    history = train_sentencepiece(sentence_iterator=iter(lines), progress=progress, **sentencepiece_options(config, vocab_size))
    if history.algorithm in ("sentencepiece-char", "sentencepiece-word"):
        fields = {name: getattr(history, name) for name in history.__dataclass_fields__}
        history = WholePieceHistory(**fields)
        history = replace(history, model=history.model_at(history.max_vocab_size))
    return history


@dataclass(frozen=True)
class WholePieceHistory(SentencePieceHistory):
    """A SentencePiece char or word training whose ``model_at(k)`` is a tokviz model encoding as sentencepiece does.

    - char: every character is a piece or unknown: a ``Unigram`` over the single-character
      pieces (no longer piece exists, so every path is one character per piece);
    - word: every ``▁``-led word is a piece or unknown: a ``WordLevel`` over the pieces (the
      ``Metaspace`` pre-tokenizer cuts the words as sentencepiece's word model does). One
      difference: sentencepiece fuses a run of unknown words into one ``<unk>``, ``WordLevel``
      gives one per word (the ``.model`` itself, ``proto_at(k)``, is sentencepiece's).
    """

    def model_at(self, vocab_size: int) -> Any:
        from tokviz import models
        from tokviz.sentencepiece.model_proto import PieceType

        proto = self.proto_at(vocab_size)
        unk_id = next(index for index, piece in enumerate(proto.pieces) if piece.type == PieceType.UNKNOWN)
        if self.algorithm == "sentencepiece-char":
            byte_fallback = any(piece.type == PieceType.BYTE for piece in proto.pieces)
            return models.Unigram([(piece.piece, piece.score) for piece in proto.pieces], unk_id=unk_id, byte_fallback=byte_fallback)
        vocab = {piece.piece: index for index, piece in enumerate(proto.pieces)}
        return models.WordLevel(vocab=vocab, unk_token=proto.pieces[unk_id].piece)
