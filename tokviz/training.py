"""One training, start to end, as a pure function: the seam between the app and where trainings run.

``run_training(config, vocab_size, lines)`` counts the words of ``lines`` through the config's
normalizers and pre-tokenizers (or takes counts already made), checks the server's limits, and
trains the config's model to ``vocab_size``. It imports no streamlit, so the app's cache, a
worker process and the command line all train through the same code and get the same history.

>>> from tokviz.pipeline_config import PipelineConfig
>>> history = run_training(PipelineConfig(model="BPE"), 40, ("low lower lowest", "new newer"))
>>> history.algorithm
'BPE'
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Sequence
from typing import Any

from tokviz.pipeline_config import PipelineConfig

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
    from tokviz.patterns import time_budget
    from tokviz.pipeline_config import build_model, build_trainer

    with time_budget():
        if words is None:
            words = count_config_words(config, lines)
        check_training_request(sum(map(len, lines)), words)
        history = build_trainer(config, vocab_size).train_from_word_counts(words, progress)
    # HF's trainers keep the options of the model they train (unk_token, dropout, ...).
    return history.for_model(build_model(config)) if hasattr(history, "for_model") else history
