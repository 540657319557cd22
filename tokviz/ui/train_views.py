"""Train page result tabs: merge history, Unigram EM and lattice, WordPiece trace, vocabulary, charts, export.

Which tabs a training gets depends on ``history.algorithm`` (:func:`result_views`).
"""

from __future__ import annotations

import random
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import streamlit as st

from tokviz.history import merge_number
from tokviz.inspect import training_size_range
from tokviz.pipeline_config import PipelineConfig
from tokviz.ui.shell import md_escape
from tokviz.ui.training import model_at, word_counts_cached
from tokviz.ui.workspace import reseed
from tokviz.workspace import TrainingRequest


@dataclass(frozen=True, slots=True)
class TrainedView:
    """What the result tabs draw from: the training, the corpus lines, the slider's size and its tokenizer."""

    request: TrainingRequest
    history: Any
    train_lines: tuple[str, ...]
    size: int
    tokenizer: Any
    presentation: bool = False

    @property
    def config(self) -> PipelineConfig:
        return self.request.config

    @property
    def byte_level(self) -> bool:
        return is_byte_level(self.config)


def is_byte_level(config: PipelineConfig) -> bool:
    """Whether tokens are GPT-2 byte symbols, which tables show decoded (``'ê°Ģ'`` as ``'가'``)."""
    return any(spec.type == "ByteLevel" for spec in config.pre_tokenizers)


def top_words(view: TrainedView, limit: int) -> list[tuple[str, int]]:
    """The corpus's most frequent words as the trainer saw them (from the cached word counts; for a training
    opened from a file, whose corpus is not here, the top words its history recorded)."""
    config = view.config
    if not view.train_lines:
        summary = getattr(view.history, "word_counts", None)
        return list(getattr(summary, "top_words", ()))[:limit]
    return word_counts_cached(view.request.corpus_key, config.normalizers, config.pre_tokenizers, _lines=view.train_lines).most_common(limit)


def training_note(history: Any, train_lines: tuple[str, ...], held_out_lines: int | None) -> None:
    """For a SentencePiece training: what it was trained on (the lines left after the held-out ones, minus those sentencepiece skips)."""
    if not hasattr(history, "proto_at"):
        return
    limit = dict(history.trainer_config).get("max_sentence_length", 4192)
    skipped = f"; {history.skipped_too_long:,} longer than {limit:,} bytes were skipped, as sentencepiece skips them" if history.skipped_too_long else ""
    held = f" left after holding out {held_out_lines:,} for testing" if held_out_lines is not None else " kept for training"
    st.caption(f"SentencePiece trained on {history.sentences:,} raw lines: the corpus's {len(train_lines):,} non-empty lines"
               f"{held}{skipped}. Character coverage reached "
               f"{history.character_coverage:.4%} with an alphabet of {len(history.alphabet):,} characters.")


def merges_of(history: Any) -> tuple[Any, ...]:
    """The merges of a BPE / WordPiece training, SentencePiece's BPE included (its ``merge_steps``); else ``()``."""
    return tuple(getattr(history, "merges", None) or getattr(history, "merge_steps", None) or ())


@dataclass(frozen=True, slots=True)
class UnigramRecord:
    """What the EM and pruning views read, from tokviz's Unigram history or SentencePiece's (``history.unigram``)."""

    em_steps: tuple[Any, ...]
    prune_rounds: tuple[Any, ...]
    final_pieces: tuple[tuple[str, float], ...]
    special_tokens: tuple[str, ...]
    model: Any
    stop_reason: str


def unigram_record(history: Any) -> UnigramRecord:
    """The :class:`UnigramRecord` of a Unigram or SentencePiece Unigram training."""
    record = getattr(history, "unigram", None) or history
    pieces = getattr(record, "final_pieces", None) or getattr(record, "pieces", ())
    return UnigramRecord(tuple(record.em_steps), tuple(record.prune_rounds), tuple(pieces), tuple(history.special_tokens),
                         history.model, history.stop_reason)


def result_views(view: TrainedView, held_out: str) -> dict[str, Callable[[], None]]:
    """The result tabs that apply to this training's algorithm, label -> function drawing it."""
    algorithm = view.history.algorithm.lower().removeprefix("sentencepiece-")
    views: dict[str, Callable[[], None]] = {}
    if algorithm in ("bpe", "wordpiece") and merges_of(view.history):
        views["Merge history"] = lambda: merge_history_view(view)
    if algorithm == "unigram":
        views["EM and pruning"] = lambda: unigram_view(view)
        views["Lattice and sampling"] = lambda: lattice_view(view)
    if algorithm == "wordpiece":
        views["WordPiece trace"] = lambda: wordpiece_trace_view(view.tokenizer)
    views["Vocabulary"] = lambda: vocabulary_view(view)
    views["Charts"] = lambda: charts_view(view, held_out)
    views["Export"] = lambda: export_view(view)
    return views


def arrow_table(frame: Any) -> Any:
    """``frame`` as the Arrow table ``st.dataframe`` would make of it (the same bytes reach the browser).

    Cached tables are kept in this form: ``st.dataframe`` serializes an Arrow table as it is, while a
    pandas frame is converted again on every run (for 25,000 merges, most of a slider move's cost).
    """
    from streamlit import dataframe_util

    return dataframe_util.convert_pandas_df_to_arrow_table(frame)


@st.cache_resource(max_entries=8, show_spinner=False)
def _merge_frame(request: TrainingRequest, _history: Any) -> Any:
    """The merge table of a training, built once, as an Arrow table (25,000 merges take a while to tabulate)."""
    from tokviz.viz import tables

    return arrow_table(tables.merge_table(merges_of(_history), byte_level=is_byte_level(request.config),
                                          sentencepiece=_history.algorithm == "sentencepiece-bpe"))


@st.cache_resource(max_entries=64, show_spinner=False)
def _merge_step_tables(request: TrainingRequest, rank: int, _view: TrainedView) -> tuple[Any, Any, Any]:
    """The tables of one merge (Arrow): the frequent words after it, the words it changed, the pairs it beat.

    They depend on the training and the merge only, so a slider move that lands on the same merge (the
    picker starts on the first) reuses them.
    """
    from tokviz.viz import tables

    history, byte_level = _view.history, _view.byte_level
    step = merges_of(history)[rank]
    before = model_at(request, step.vocab_size - 1, history)
    after = model_at(request, step.vocab_size, history)
    segmentations = arrow_table(tables.segmentations_table(top_words(_view, 15), after, byte_level))
    changed = arrow_table(tables.words_changed_table(top_words(_view, 2000), before, after, byte_level=byte_level))
    candidates = arrow_table(tables.candidates_table(step, byte_level)) if step.candidates else None
    return segmentations, changed, candidates


def vocabulary_view(view: TrainedView) -> None:
    """The vocabulary at the slider's size, by id (special tokens first)."""
    from tokviz.viz import tables

    vocab = view.tokenizer.get_vocab(with_added_tokens=True)
    st.caption(f"{len(vocab):,} tokens at this vocab size, by id.")
    st.dataframe(tables.vocab_table(vocab, view.history.special_tokens, view.byte_level), hide_index=True, height=320, width="stretch")


def merge_history_view(view: TrainedView) -> None:
    """Merge table, a merge picker with the frequent words' segmentations and the words it changed.

    The picker (key ``merge_step``, numbered from 1) starts on the first merge of each new
    training and stays inside that training's merges.
    """
    from tokviz.viz import tables

    history, request = view.history, view.request
    merges = merges_of(history)
    if history.algorithm == "sentencepiece-bpe":
        st.caption("sentencepiece's BPE: each merge makes one piece, the most frequent pair first; a tie goes to the shorter piece. "
                   "Count = occurrences of the pair in the corpus's words when it was merged; score = the piece's score in the "
                   ".model (minus its rank, as sentencepiece writes it).")
    st.dataframe(_merge_frame(request, _history=history), hide_index=True, height=280, width="stretch")
    same_training = st.session_state.get("_merge_step_for") == (request, view.size)
    current = st.session_state.get("merge_step") if same_training else None
    box = tables.merge_step_box(merges, view.size, None if current is None else int(current) - 1)
    if current is None or int(current) - 1 != box.value:  # a new training or size: the box follows it
        reseed("merge_step", box.value + 1)
    st.session_state["_merge_step_for"] = (request, view.size)
    number = st.number_input(
        f"Merge # to inspect (1 to {box.max_value + 1:,}: the merges of the tokenizer at the slider's size; #1 was learned first, "
        "as the token card and the table number them)",
        min_value=box.min_value + 1, max_value=box.max_value + 1, step=1, key="merge_step",
    )
    step = merges[int(number) - 1]
    show = (lambda token: tables.show(token, True)) if view.byte_level else str
    st.text(f"Merge #{merge_number(step.rank)}: {show(step.left)!r} + {show(step.right)!r} → {show(step.token)!r}   "
            f"count {step.count:,}   score {-step.rank if history.algorithm == 'sentencepiece-bpe' else step.score:.6g}")
    segmentations, changed, candidates = _merge_step_tables(request, int(number) - 1, _view=view)
    left, right = st.columns(2)
    with left:
        st.caption("The corpus's most frequent words after this merge")
        st.dataframe(segmentations, hide_index=True, width="stretch")
    with right:
        st.caption("Words this merge changed (most frequent first)")
        st.dataframe(changed, hide_index=True, width="stretch")
        if candidates is not None:  # sentencepiece's BPE records no runner-ups
            st.caption("Pairs it beat at that moment")
            st.dataframe(candidates, hide_index=True, width="stretch")


def unigram_view(view: TrainedView) -> None:
    """EM objective per sub-iteration, vocab per round, removed pieces, log-probabilities."""
    from tokviz.viz import charts, tables

    history = unigram_record(view.history)
    left, right = st.columns(2)
    if history.em_steps:
        left.plotly_chart(charts.em_objective_figure(history.em_steps, presentation=view.presentation), width="stretch")
    else:
        left.info("This method runs no EM: scores come from the seed frequencies (the HF course's version).")
    if not history.prune_rounds:
        right.info(f"No pruning round: the seed vocabulary already fit the target ({md_escape(history.stop_reason)}).")
    else:
        right.plotly_chart(charts.pruning_rounds_figure(history, marker_size=view.size, presentation=view.presentation), width="stretch")
        st.caption("Pieces removed in each pruning round, with the loss increase that condemned them")
        st.dataframe(tables.removed_pieces_table(history.prune_rounds), hide_index=True, height=240, width="stretch")
    st.plotly_chart(charts.log_prob_figure(history.final_pieces, history.special_tokens, presentation=view.presentation), width="stretch")


def as_pre_token(tokenizer: Any, word: str) -> str:
    """The first pre-token of ``word`` through the tokenizer's normalizer and pre-tokenizer (what the model sees)."""
    normalized = tokenizer.normalizer.normalize_str(word) if tokenizer.normalizer is not None else word
    if tokenizer.pre_tokenizer is None:
        return normalized
    pieces = tokenizer.pre_tokenizer.pre_tokenize_str(normalized)
    return pieces[0][0] if pieces else ""


def lattice_view(view: TrainedView) -> None:
    """A word's Viterbi lattice, its n-best segmentations and sampled ones (subword regularization)."""
    from tokviz.viz import charts, tables

    model = view.tokenizer.model
    if "lattice_word" not in st.session_state:
        words = [word for word, _ in top_words(view, 200) if len(word.strip("▁Ġ")) >= 5]
        st.session_state["lattice_word"] = (words[0] if words else "tokenizer").lstrip("▁Ġ")
    word = st.text_input("Word", key="lattice_word", max_chars=40)
    piece = as_pre_token(view.tokenizer, word)
    if not piece:
        st.info("Type a word to see its lattice.")
        return
    st.caption(f"As the model sees it: {md_escape(repr(piece))}")
    st.plotly_chart(charts.lattice_figure(model.lattice(piece), presentation=view.presentation), width="stretch")
    left, right = st.columns(2)
    with left:
        st.caption("The 5 best segmentations")
        st.dataframe(tables.nbest_table(model.nbest(piece, 5)), hide_index=True, width="stretch")
    with right:
        alpha = st.slider("Sampling alpha (smaller = more varied)", 0.0, 1.0, 0.1, 0.05, key="sample_alpha")
        rng = random.Random(0)  # the same draws on every rerun, so the table does not flicker
        samples = [model.sample(piece, alpha=alpha, rng=rng) for _ in range(20)]
        st.caption("20 sampled segmentations")
        st.dataframe(tables.samples_table(samples), hide_index=True, width="stretch")


def wordpiece_trace_view(tokenizer: Any) -> None:
    """The greedy longest-match search for one word: each prefix tried, and where [UNK] came from."""
    from tokviz.viz import tables

    if "trace_word" not in st.session_state:  # seeded, not value=: the page keeps it while the tab is closed
        st.session_state["trace_word"] = "tokenization"
    word = st.text_input("Word to trace", key="trace_word", max_chars=60)
    piece = as_pre_token(tokenizer, word)
    if not piece:
        st.info("Type a word to trace.")
        return
    trace = tokenizer.model.trace(piece)
    st.text(f"{piece!r} → {[token.value for token in trace.tokens]}")
    if trace.unk_reason:
        st.warning(md_escape(trace.unk_reason))
    st.dataframe(tables.wordpiece_trace_table(trace), hide_index=True, width="stretch")


@st.cache_data(max_entries=16, show_spinner=False)
def _single_token_points(request: TrainingRequest, _view: TrainedView) -> list[tuple[int, float]]:
    from tokviz.viz import charts

    history = _view.history
    sizes = charts.evenly_spaced_sizes(*training_size_range(history)[:2], 10)
    words = dict(top_words(_view, 2000))
    return charts.single_token_share(words, lambda size: model_at(request, size, history), sizes)


@st.cache_resource(max_entries=16, show_spinner=False)
def _held_out_curve(request: TrainingRequest, text_key: str, _history: Any, _text: str) -> Any:
    """Held-out tokens per word at 10 sizes of one training (models from ``model_at``: no retraining)."""
    from tokviz.metrics import vocab_size_curve
    from tokviz.viz import charts

    sizes = charts.evenly_spaced_sizes(*training_size_range(_history)[:2], 10)
    return vocab_size_curve(lambda size: _tokenizer_for(request, size, _history), sizes, _text)


def _tokenizer_for(request: TrainingRequest, size: int, history: Any) -> Any:
    from tokviz.ui.training import tokenizer_at

    return tokenizer_at(request, size, history)


#: Characters of held-out text behind the tokens-per-word curve (encoded at ten vocab sizes).
CURVE_TEXT_CHARS = 20_000


def charts_view(view: TrainedView, held_out: str) -> None:
    """Count per merge (log axis), held-out tokens per word over vocab size, token lengths, single-token words.

    Every chart over vocab size or merges marks the slider's size.
    """
    from tokviz.corpus import corpus_hash
    from tokviz.viz import charts

    history, config, big = view.history, view.config, view.presentation
    left, right = st.columns(2)
    merges = merges_of(history)
    if merges:
        score_label = "count" if config.model in ("BPE", "SentencePiece") or config.scoring == "frequency" else "score"
        left.plotly_chart(charts.merge_scores_figure(merges, score_label, marker_size=view.size, presentation=big, log_axis=True), width="stretch")
    held_out = held_out[:CURVE_TEXT_CHARS]  # ten encodings per training: keep them quick
    if held_out.strip():
        points = _held_out_curve(view.request, corpus_hash(held_out), _history=history, _text=held_out)
        (right if merges else left).plotly_chart(charts.tokens_per_word_figure(points, marker_size=view.size, presentation=big), width="stretch")
    left, right = st.columns(2)
    vocab = view.tokenizer.model.get_vocab()
    left.plotly_chart(charts.token_length_figure(vocab, history.special_tokens, presentation=big), width="stretch")
    points = _single_token_points(view.request, view)
    right.plotly_chart(charts.single_token_share_figure(points, "2,000 most frequent words", marker_size=view.size, presentation=big), width="stretch")


def export_view(view: TrainedView) -> None:
    """Downloads: tokenizer.json (loads in HF tokenizers), vocab.txt, merges.txt, the history as CSV."""
    from tokviz.export import history_csv, merges_txt, model_merges, transformers_zip, vocab_txt

    tokenizer = view.tokenizer
    size = tokenizer.get_vocab_size()
    st.caption(f"Every file below is the tokenizer at the slider's size ({size:,} tokens); "
               "history.csv holds the training steps that made it."
               + (" The .model is sentencepiece's own file of that tokenizer." if hasattr(view.history, "proto_at") else ""))
    sentencepiece = hasattr(view.history, "proto_at")
    # Up to seven buttons: two rows of four keep every label whole at 1280 px.
    files, training = st.columns(4), st.columns(4)
    # Each file is made when its button is clicked, not on every rerun (a slider move reruns the page).
    files[0].download_button("tokenizer.json", lambda: tokenizer.to_str(pretty=True), "tokenizer.json", "application/json", key="download_json")
    files[1].download_button("vocab.txt", lambda: vocab_txt(tokenizer.get_vocab(with_added_tokens=True)), "vocab.txt", "text/plain", key="download_vocab")
    merges = model_merges(tokenizer.model)
    if merges is not None:
        files[2].download_button("merges.txt", lambda: merges_txt(merges), "merges.txt", "text/plain", key="download_merges")
    files[3].download_button("Download for transformers", lambda: transformers_zip(tokenizer), "tokenizer.zip", "application/zip", key="download_transformers",
                             help="tokenizer.json, tokenizer_config.json and special_tokens_map.json: unzip into a folder and load it with "
                                  "transformers' AutoTokenizer.from_pretrained(folder).")
    training[0].download_button("history.csv", lambda: history_csv(view.history, view.size), "history.csv", "text/csv", key="download_history")
    training[1].download_button("history.json", lambda: history_json(view.history, view.request.config), "history.json", "application/json",
                                key="download_history_json",
                                help="The whole training (every step, its pipeline): open it again with Open a training on Train or Inspect.")
    if sentencepiece:  # its .model at the slider's size, beside tokenizer.json
        training[2].download_button("sentencepiece .model", lambda: sentencepiece_model_bytes(view.history, view.size), "tokviz.model",
                                    "application/octet-stream", key="download_sp_model",
                                    help="The SentencePiece model at the slider's size: load it with sentencepiece.SentencePieceProcessor"
                                         "(model_file=...) or tokviz.sentencepiece.")


def history_json(history: Any, config: Any) -> str:
    """The training as ``history.json`` (:mod:`tokviz.history_io`), with its pipeline, as the CLI writes it."""
    from tokviz import history_io

    return history_io.dumps(history, config)


def sentencepiece_model_bytes(history: Any, size: int) -> bytes:
    """The ``.model`` of a SentencePiece training at vocab ``size`` (the trained model itself at its trained size)."""
    from tokviz.ui.training import trained_size

    return history.to_model_bytes() if size == trained_size(history) else history.proto_at(size).to_bytes()


def test_text_box(workspace: Any, held_out: str) -> str:
    """The test text area (key ``test_text``): the corpus's held-out lines until the user types, cut to the limit
    for text tokenized on every change before it is drawn (so the cut text is what it shows). Returns its text."""
    from tokviz.errors import TokvizError
    from tokviz.limits import MAX_TEST_TEXT_CHARS, check_test_text
    from tokviz.ui.shell import show_error
    from tokviz.ui.workspace import bind

    train = workspace.train
    if train.test_text is not None and len(train.test_text) > MAX_TEST_TEXT_CHARS:
        try:
            check_test_text(len(train.test_text))
        except TokvizError as error:
            show_error(error)
        train.test_text = train.test_text[:MAX_TEST_TEXT_CHARS]
        reseed("test_text", train.test_text)

    def test_text_changed(value: str) -> None:
        train.test_text = None if value == held_out else value

    return st.text_area("Test text (held-out lines of the corpus by default)", key="test_text", height=90,
                        on_change=bind("test_text", lambda: held_out if train.test_text is None else train.test_text, test_text_changed))


#: Widgets inside result tabs: Streamlit would forget their values while their tab is closed.
TAB_WIDGET_KEYS = ("merge_step", "lattice_word", "sample_alpha", "trace_word")


def result_tabs(workspace: Any, view: TrainedView, held_out: str) -> None:
    """The result tabs, only the open one built (a slider move must not rebuild four tabs nobody sees); the open
    tab lives in the workspace (a page switch or a link keeps it), and one another model lacks opens the first."""
    from tokviz.errors import TokvizError
    from tokviz.ui.shell import show_error
    from tokviz.ui.workspace import bind

    train = workspace.train
    for key in TAB_WIDGET_KEYS:  # the closed tabs' widgets keep their values for when their tab opens again
        if key in st.session_state:
            st.session_state[key] = st.session_state[key]
    views = result_views(view, held_out)

    def tab_changed(label: str) -> None:
        train.tab = label

    chosen_tab = train.tab if train.tab in views else next(iter(views))
    tabs = st.tabs(list(views), key="result_tab", on_change=bind("result_tab", lambda: chosen_tab, tab_changed))
    for place, draw in zip(tabs, views.values()):
        if not place.open:
            continue
        with place:
            try:
                draw()
            except TokvizError as error:  # one view failing leaves the others working
                show_error(error)
