"""The Train page's inputs and when a training runs: the corpus, the pipeline, the target vocab and **Train**
(one panel, folded away once trained), then the training they ask for.

A corpus up to ``LIVE_TRAINING_MAX_CHARS`` trains as it changes; a larger one waits for **Train**. A training
opened from a history.json stays until **Train** is pressed. One message per problem: a panel that showed an
error does not add the "settings changed" warning under it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import streamlit as st

from tokviz.errors import EmptyCorpusError, TokvizError
from tokviz.limits import LIVE_TRAINING_MAX_CHARS, MAX_VOCAB_SIZE, check_training_request
from tokviz.patterns import time_budget
from tokviz.pipeline_config import PipelineConfig, build_tokenizer
from tokviz.ui import train_views, widgets
from tokviz.ui.corpus_input import Corpus, corpus_input, session_corpus
from tokviz.ui.shell import md_escape, metrics_row, show_error
from tokviz.ui.tokenizer_files import training_opener
from tokviz.ui.training import counted_words, is_opened, request_for, train_with_progress, word_counts_cached
from tokviz.ui.workspace import bind, sync_link
from tokviz.workspace import TrainingRequest, Workspace


@dataclass(frozen=True, slots=True)
class TrainInputs:
    """What the panel read: the corpus, the pipeline (None after an error), the target vocab, whether **Train**
    was clicked, and whether a problem was shown already."""

    corpus: Corpus
    config: PipelineConfig | None
    words: Any  # the corpus's word counts through the pipeline's text side, None until counted
    target_vocab: int
    clicked: bool
    problem_shown: bool

    @property
    def request(self) -> TrainingRequest | None:
        """The training these inputs ask for (None while the pipeline has an error)."""
        return request_for(self.corpus.key, self.config, self.target_vocab) if self.config is not None else None


def inputs_panel(workspace: Workspace) -> TrainInputs:
    """The "Corpus and pipeline" panel: corpus (left), pipeline, target vocab and **Train** (right), the Custom form
    across the page under them, the pipeline's summary and preview, and the corpus's numbers."""
    train = workspace.train
    corpus = session_corpus(workspace)
    panel = f"Corpus and pipeline · {md_escape(corpus.source)} · {md_escape(widgets.pipeline_name(train))} · vocab {train.target_vocab:,}"
    config, words, problem_shown = None, None, False
    with st.expander(panel, expanded=train.trained is None, icon=":material/tune:"):
        left, right = st.columns([3, 2])
        form_area = st.container()  # Custom's form, under the corpus and across the page: Train stays in the first screen
        with left:
            corpus = corpus_input(workspace)
        with right:
            try:
                config = widgets.pipeline_choice(train, form_area)
            except TokvizError as error:
                show_error(error)
                problem_shown = True
            sync_link(workspace)  # the Custom form updates the pipeline during the run: the link follows now
            target_vocab, clicked = _vocab_and_train_button(workspace)
        if config is not None:
            try:
                words = _preview_and_words(config, corpus)
            except TokvizError as error:
                show_error(error)
                config, problem_shown = None, True
        _corpus_numbers(corpus, config, words)
    return TrainInputs(corpus, config, words, target_vocab, clicked, problem_shown)


def _vocab_and_train_button(workspace: Workspace) -> tuple[int, bool]:
    train = workspace.train
    vocab_column, button_column = st.columns([2, 1], vertical_alignment="bottom")

    def vocab_changed(value: int) -> None:
        train.target_vocab = int(value)

    target_vocab = vocab_column.number_input("Target vocab size", min_value=1, max_value=MAX_VOCAB_SIZE, step=100, key="target_vocab",
                                             on_change=bind("target_vocab", lambda: train.target_vocab, vocab_changed))
    clicked = button_column.button("Train", key="train", type="primary", width="stretch")
    with st.popover("Open a training (history.json)", icon=":material/folder_open:", width="content",
                    help="A training saved as history.json (Export tab, or `python -m tokviz train`)"):
        training_opener(workspace)
    return int(target_vocab), clicked


def _preview_and_words(config: PipelineConfig, corpus: Corpus) -> Any:
    """The pipeline's summary and its preview on the first line; the corpus's word counts when they are at hand."""
    widgets.pipeline_summary(config)
    with time_budget():  # a user pattern slow on every line stops here, not hours later
        widgets.pipeline_preview(build_tokenizer(config), corpus.split.train_lines[0] if corpus.split.train_lines else "",
                                 train_views.is_byte_level(config))
        if len(corpus.text) <= LIVE_TRAINING_MAX_CHARS:
            return word_counts_cached(corpus.key, config.normalizers, config.pre_tokenizers, corpus.split.train_lines)
        # a large corpus's words are counted where it trains (a Dask worker), not in this page's thread
        return counted_words(corpus.key, config.normalizers, config.pre_tokenizers)


def _corpus_numbers(corpus: Corpus, config: PipelineConfig | None, words: Any) -> None:
    metrics_row({
        "characters": corpus.stats.characters, "lines": corpus.stats.lines,
        # SentencePiece has no pre-tokenizer: its words are the raw text's pieces between spaces (▁ marks them).
        ("words (between spaces)" if config is not None and config.model == "SentencePiece" else "words (pre-tokenized)"):
            sum(words.values()) if words is not None else "—",
        "unique words": len(words) if words is not None else "—", "distinct characters": corpus.stats.distinct_characters,
    })
    st.caption(f"Source: {md_escape(corpus.source)}; {len(corpus.split.test_lines)} held-out lines are kept for testing. "
               f"Corpora up to {LIVE_TRAINING_MAX_CHARS:,} characters train as you change them; larger ones wait for **Train**.")


def train_when_asked(workspace: Workspace, inputs: TrainInputs) -> bool:
    """Train what the inputs ask for when **Train** was clicked, or live for a small corpus (not over an opened
    training); a new training becomes the page's and the page reruns from the top. Returns whether a problem was shown."""
    train, corpus, request = workspace.train, inputs.corpus, inputs.request
    opened = train.trained is not None and is_opened(train.trained)  # an opened training stays until Train is pressed
    if request is None or not (inputs.clicked or (len(corpus.text) <= LIVE_TRAINING_MAX_CHARS and not opened)):
        return inputs.problem_shown
    try:
        if not corpus.split.train_lines:
            raise EmptyCorpusError("The corpus is empty: paste some text or upload a file, then train.")
        check_training_request(len(corpus.text), inputs.words)
        train_with_progress(request, corpus.split.train_lines)
    except TokvizError as error:
        show_error(error)
        return True
    if request != train.trained:  # a new training: the slider returns to its trained size
        # (The first training of a session opened from a link keeps the link's slider and test text.)
        if train.trained is not None:
            if train.trained.corpus_key != request.corpus_key:
                train.test_text = None  # a new corpus: its own held-out lines
            train.slider = None
        train.trained = request
        sync_link(workspace)
        st.rerun()  # fold the inputs away and draw the results from the top
    return inputs.problem_shown
