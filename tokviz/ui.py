"""The only tokviz module that imports streamlit: page registry, cached wrappers, shared widgets.

Pages stay thin: they lay out widgets and call tokviz functions; anything worth testing
lives in the pure modules, which never import streamlit.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import streamlit as st

from tokviz.errors import TokvizError
from tokviz.limits import TRAINING_CACHE_ENTRIES
from tokviz.pipeline_config import NORMALIZERS, PRE_TOKENIZERS, Param, PipelineConfig, from_form_state


@dataclass(frozen=True, slots=True)
class PageInfo:
    path: str
    title: str
    icon: str
    summary: str  # two sentences, shown on the home view


#: Every page the app ships, in navigation order. A page appears here only once it works.
PAGES: tuple[PageInfo, ...] = (
    PageInfo(
        "pages/home.py",
        "Home",
        ":material/home:",
        "What tokviz is and what each page does. It also shows the built-in sample corpus that every page starts from.",
    ),
    PageInfo(
        "pages/train.py",
        "Train",
        ":material/model_training:",
        "Paste or upload a corpus, pick a pipeline (BERT, GPT-2, T5 or your own) and train a tokenizer in seconds. "
        "Drag the vocab slider to watch tokens, merges, scores and charts change without retraining.",
    ),
    PageInfo(
        "pages/compare.py",
        "Compare",
        ":material/compare_arrows:",
        "Train two to four pipelines (BPE, WordPiece, Unigram, presets or your own) on one corpus and see the same text cut by each, differences outlined. "
        "A metrics table and curves over vocab size measure their compression on held-out text.",
    ),
    PageInfo(
        "pages/pipeline.py",
        "Pipeline",
        ":material/account_tree:",
        "Follow one text through every stage: normalization, pre-tokenization, the model, post-processing and decoding. "
        "A bytes view shows each character's code point and UTF-8 bytes, and what byte-level BPE makes of them.",
    ),
    PageInfo(
        "pages/inspect.py",
        "Inspect",
        ":material/search:",
        "Open any tokenizer.json (from Hugging Face or trained here) and read its pipeline, vocabulary and merges. "
        "Search and filter the vocabulary, see the merge tree behind any BPE token and tokenize your own text.",
    ),
    PageInfo(
        "pages/learn.py",
        "Learn",
        ":material/school:",
        "Step-by-step lessons on BPE, WordPiece, Unigram, byte-level BPE and normalization, driven by the real trainers "
        "on a word-count table you can edit live. One click per step, sized for a projector, with a predict-the-next-merge exercise.",
    ),
)


_MARKDOWN_SPECIALS = "\\`*_{}[]()<>#+-.!|~$"


def require_app_navigation() -> None:
    """Call first on every page: make a deep link (``/train?...``) run through ``app.py``.

    Until ``app.py`` has called ``st.navigation`` once, a fresh Streamlit server runs a
    deep-linked page straight from ``pages/`` in its legacy multipage mode: no page config,
    no page titles, a sidebar listing file names. Streamlit keeps that mode in a class flag
    that ``st.navigation`` clears; clearing it here and rerunning sends the same URL through
    ``app.py``, whose navigation then opens the requested page.
    """
    # Only a session's first run can be a deep link, and it is never a widget's run, so the
    # rerun below can lose no click. (AppTest resets the flag before every run; this keeps
    # its later runs, which carry the clicks, untouched.)
    if st.session_state.get("_tokviz_navigation_checked"):
        return
    st.session_state["_tokviz_navigation_checked"] = True
    try:
        from streamlit.runtime.pages_manager import PagesManager
    except ImportError:  # pragma: no cover - a Streamlit without the legacy mode
        return
    if getattr(PagesManager, "uses_pages_directory", False):
        PagesManager.uses_pages_directory = False
        st.rerun()


def capped_text(text: str, what: str) -> str:
    """``text`` cut to the server's limit for text tokenized on every change, saying so when it cuts.

    >>> capped_text("short", "text")
    'short'
    """
    from tokviz.limits import MAX_TEST_TEXT_CHARS

    if len(text) <= MAX_TEST_TEXT_CHARS:
        return text
    st.caption(
        f"Using the first {MAX_TEST_TEXT_CHARS:,} characters of the {what} ({len(text):,} in all): "
        "this server's limit for text tokenized on every change."
    )
    return text[:MAX_TEST_TEXT_CHARS]


def md_escape(text: str) -> str:
    r"""User text inside a Markdown string (captions, notices) shows as typed, never as markup.

    >>> print(md_escape("*bold* [x](y)"))
    \*bold\* \[x\]\(y\)
    """
    return "".join("\\" + char if char in _MARKDOWN_SPECIALS else char for char in text)


def show_error(error: Exception) -> None:
    """Show a user-caused error as ``st.error``; anything else is a bug and is shown with its trace."""
    if isinstance(error, TokvizError):
        st.error(md_escape(str(error)))  # messages quote user text (patterns, tokens): show it as typed
    else:  # pragma: no cover - only bugs get here
        st.exception(error)


# ---------------------------------------------------------------------------------------
# Training, cached on (corpus hash, pipeline config, vocab size)


@dataclass(frozen=True, slots=True)
class CorpusChoice:
    """The corpus the page trains on and where it came from (``notice``: what was guessed)."""

    text: str
    source: str
    notice: str | None = None


@st.cache_resource(max_entries=TRAINING_CACHE_ENTRIES, show_spinner=False)
def _training_slot(corpus_key: str, config: PipelineConfig, vocab_size: int) -> dict[str, Any]:
    """One shared, initially empty holder per (corpus hash, config, vocab size), evicted least recently used.

    The training itself runs outside the cached function, so that it can move an
    ``st.progress`` bar created by the page (Streamlit cannot replay elements a cached
    function drew on an outside block).
    """
    return {}


def train_cached(
    corpus_key: str,
    config: PipelineConfig,
    vocab_size: int,
    lines: tuple[str, ...],
    progress: Callable[[str, int, int], None] | None = None,
) -> Any:
    """Train ``config`` on ``lines``, or return the history trained before for the same key.

    Keyed on the corpus hash, not the text, so a 50 MB corpus is not re-hashed on every
    rerun; histories are immutable, so every session can share them.

    Every page trains through here, so the server's limits hold everywhere: a corpus or a
    word above them raises ``LimitExceededError`` before any training, and all user patterns
    of the training share one time budget.
    """
    from tokviz.limits import check_training_request
    from tokviz.patterns import time_budget
    from tokviz.pipeline_config import build_tokenizer, build_trainer

    slot = _training_slot(corpus_key, config, vocab_size)
    if "history" not in slot:
        with time_budget():
            check_training_request(sum(map(len, lines)), word_counts_cached(corpus_key, config.normalizers, config.pre_tokenizers, lines))
            tokenizer = build_tokenizer(config)
            slot["history"] = tokenizer.train_from_iterator(lines, build_trainer(config, vocab_size), progress=progress)
    return slot["history"]


@st.cache_resource(max_entries=64, show_spinner=False)
def model_at_cached(corpus_key: str, config: PipelineConfig, vocab_size: int, size: int, _history: Any) -> Any:
    """``history.model_at(size)`` with the config's unknown token, kept so that moving the slider back and forth is instant."""
    from tokviz.pipeline_config import configured_model

    return configured_model(config, _history.model_at(size))


@st.cache_resource(max_entries=4, show_spinner=False)
def word_counts_cached(corpus_key: str, normalizers: tuple, pre_tokenizers: tuple, _lines: tuple[str, ...]) -> Counter:
    """Word counts of the corpus through the config's normalizers and pre-tokenizers."""
    from tokviz.pipeline_config import build_normalizer, build_pre_tokenizer
    from tokviz.word_counts import count_words

    config = PipelineConfig(normalizers=normalizers, pre_tokenizers=pre_tokenizers)
    return count_words(_lines, build_normalizer(config), build_pre_tokenizer(config))


def train_with_progress(request: tuple[str, PipelineConfig, int], lines: tuple[str, ...]) -> Any:
    """Train (or fetch from the cache) with an ``st.progress`` bar shown only while training runs."""
    if "history" in _training_slot(*request):
        return train_cached(*request, lines)
    bar = st.progress(0, text="counting words")
    try:
        return train_cached(*request, lines, progress_callback(bar))
    finally:
        bar.empty()


def progress_callback(bar: Any) -> Callable[[str, int, int], None]:
    """A trainer progress callback that moves ``bar`` (an ``st.progress``), at most 100 updates."""
    last = {"value": -1}

    def report(phase: str, done: int, total: int) -> None:
        value = int(100 * done / total) if total else 0
        if value != last["value"]:
            last["value"] = value
            bar.progress(min(max(value, 0), 100), text=f"{phase}: {done:,} / {total:,}")

    return report


# ---------------------------------------------------------------------------------------
# Shared widgets


def corpus_input(sample: str) -> CorpusChoice:
    """The corpus: a text area (key ``corpus_text``, the built-in sample by default) or an upload.

    A tabular upload (.csv, .tsv, .jsonl, .json) gets a column picker (key ``corpus_column``).
    Read errors raise :class:`tokviz.errors.CorpusReadError` for the caller to show.
    """
    from tokviz.corpus import UPLOAD_SUFFIXES

    text = st.text_area("Corpus text (the built-in sample until you edit it)", value=sample, key="corpus_text", height=160)
    uploaded = st.file_uploader(
        "…or upload a file", type=[suffix[1:] for suffix in UPLOAD_SUFFIXES], key="corpus_file",
        help="Plain text, Markdown, CSV / TSV, JSON Lines or JSON. Tables get a column picker.",
    )
    if uploaded is None:
        source = "built-in sample" if text == sample else "your text"
        return CorpusChoice(text, source)
    name = uploaded.name
    decoded, frame, columns = _read_upload(uploaded.file_id, name, _data=uploaded.getvalue())
    if frame is None:
        return CorpusChoice(decoded.text, f"upload {name}", decoded.notice)
    column = st.selectbox("Column / field to train on", columns, key="corpus_column")
    return CorpusChoice(_column_text(uploaded.file_id, column, _frame=frame, _name=name), f"upload {name}, column {column!r}", decoded.notice)


@st.cache_resource(max_entries=2, show_spinner="Reading the upload…")
def _read_upload(file_id: str, name: str, _data: bytes) -> tuple[Any, Any, list[str]]:
    """Decode an upload once per file (reruns reuse it): ``(DecodedText, DataFrame or None, columns)``."""
    from tokviz.corpus import TABLE_SUFFIXES, decode_upload, read_table, text_columns

    decoded = decode_upload(_data, name)
    if not name.lower().endswith(TABLE_SUFFIXES):
        return decoded, None, []
    frame = read_table(decoded.text, name)
    return decoded, frame, text_columns(frame)


@st.cache_resource(max_entries=4, show_spinner=False)
def _column_text(file_id: str, column: str, _frame: Any, _name: str) -> str:
    from tokviz.corpus import column_text

    return column_text(_frame, column, _name)


@st.cache_resource(max_entries=4, show_spinner=False)
def corpus_overview(corpus_key: str, _text: str) -> tuple[Any, Any]:
    """``(held_out_split, corpus_stats)`` of a corpus, computed once per corpus hash."""
    from tokviz.corpus import corpus_stats, held_out_split

    return held_out_split(_text), corpus_stats(_text)


def _param_widget(key: str, param: Param, label: str) -> None:
    if param.kind == "bool":
        st.checkbox(label, key=key, help=param.help or None)
    elif param.kind == "choice":
        st.selectbox(label, param.choices, key=key, help=param.help or None)
    elif param.kind == "optional_bool":
        st.selectbox(label, [None, True, False], key=key, format_func=lambda value: "auto" if value is None else str(value), help=param.help or None)
    else:
        st.text_input(label, key=key, help=param.help or None)


def custom_pipeline_form() -> PipelineConfig:
    """The Custom mode: ordered normalizers and pre-tokenizers with options, model and trainer options.

    Widget keys are ``cfg_*`` (see ``tokviz.pipeline_config.to_form_state``), so the page can
    fill the form from a preset or a link by writing ``st.session_state`` before it runs.
    """
    from tokviz.pipeline_config import MODELS, POST_PROCESSORS

    left, right = st.columns(2)
    with left:
        chosen_normalizers = st.multiselect("Normalizers, in the order you pick them", list(NORMALIZERS), key="cfg_normalizers")
        for type_name in chosen_normalizers:
            for param in NORMALIZERS[type_name]:
                _param_widget(f"cfg_n_{type_name}_{param.name}", param, f"{type_name} · {param.name}")
        chosen_pre = st.multiselect("Pre-tokenizers, in order", list(PRE_TOKENIZERS), key="cfg_pre_tokenizers")
        for type_name in chosen_pre:
            for param in PRE_TOKENIZERS[type_name]:
                _param_widget(f"cfg_p_{type_name}_{param.name}", param, f"{type_name} · {param.name}")
    with right:
        model = st.selectbox("Model", MODELS, key="cfg_model")
        st.text_input("Special tokens (separated by spaces)", key="cfg_special_tokens")
        st.text_input("Unknown token (one of the special tokens; empty for none)", key="cfg_unk_token")
        if model != "Unigram":
            st.number_input("min_frequency", min_value=0, step=1, key="cfg_min_frequency")
        if model in ("BPE", "WordPiece"):
            st.number_input("limit_alphabet (0 = no limit)", min_value=0, step=1, key="cfg_limit_alphabet")
            st.text_input("continuing_subword_prefix", key="cfg_continuing_subword_prefix")
            st.text_input("end_of_word_suffix", key="cfg_end_of_word_suffix")
            st.radio(
                "Tie-break", ["hf", "first_seen"], key="cfg_tie_break", horizontal=True,
                help="hf: highest count, then the smallest (left id, right id). first_seen: the first pair met "
                "scanning words in first-seen order, as the HF course notebooks do.",
            )
        if model == "BPE":
            st.number_input("max_token_length (0 = no limit)", min_value=0, step=1, key="cfg_max_token_length")
        if model == "WordPiece":
            st.radio(
                "WordPiece scoring", ["likelihood", "frequency"], key="cfg_scoring", horizontal=True,
                help="likelihood: freq(ab) / (freq(a)·freq(b)), the HF course's WordPiece. "
                "frequency: the pair count, which is what HF's WordPieceTrainer really does.",
            )
        if model in ("BPE", "WordPiece", "Unigram"):
            st.checkbox("Start from all 256 byte symbols (byte-level alphabet)", key="cfg_byte_alphabet")
        if model == "Unigram":
            st.radio("Unigram method", ["em", "course"], key="cfg_unigram_method", horizontal=True,
                     help="em: SentencePiece / HF. course: the HF course's simplified version.")
            st.number_input("shrinking_factor", min_value=0.05, max_value=0.95, step=0.05, key="cfg_shrinking_factor")
            st.number_input("max_piece_length", min_value=1, step=1, key="cfg_max_piece_length")
            st.number_input("n_sub_iterations", min_value=1, step=1, key="cfg_n_sub_iterations")
        st.selectbox("Post-processor", POST_PROCESSORS, key="cfg_post_processor")
    return from_form_state(st.session_state)


def metrics_row(values: dict[str, Any]) -> None:
    """One ``st.metric`` per entry, side by side; integers get thousands separators."""
    for column, (label, value) in zip(st.columns(len(values)), values.items()):
        column.metric(label, f"{value:,}" if isinstance(value, int) else value)


def pipeline_summary(config: PipelineConfig) -> None:
    """The pipeline in one code block (code blocks show user text as text, never as markup)."""
    lines = [
        "normalizer:    " + (" → ".join(spec.label() for spec in config.normalizers) or "none"),
        "pre-tokenizer: " + (" → ".join(spec.label() for spec in config.pre_tokenizers) or "none"),
        f"model:         {config.model}" + (f" (unk {config.unk_token})" if config.unk_token else ""),
        "special:       " + (" ".join(config.special_tokens) or "none"),
    ]
    st.code("\n".join(lines), language=None)


def pipeline_preview(tokenizer: Any, line: str, byte_level: bool = False) -> None:
    """Live preview: the first corpus line normalized, then cut into pre-tokens."""
    from tokviz.viz.spans import TokenSpan, render_token_spans

    normalized = tokenizer.normalizer.normalize_str(line) if tokenizer.normalizer is not None else line
    pre_tokens = tokenizer.pre_tokenizer.pre_tokenize_str(normalized) if tokenizer.pre_tokenizer is not None else [(normalized, (0, len(normalized)))]
    st.caption("Preview on the first line: normalized text, then its pre-tokens")
    st.code(normalized or " ", language=None)
    spans = [TokenSpan(word, index, start, end) for index, (word, (start, end)) in enumerate(pre_tokens)]
    st.html(render_token_spans(normalized, spans, byte_level=byte_level).html)


@dataclass(frozen=True, slots=True)
class TrainedRun:
    """What the page shows results for: the request that trained it and its history."""

    key: tuple[str, PipelineConfig, int]
    history: Any
    train_lines: tuple[str, ...]
    test_lines: tuple[str, ...]

    @property
    def config(self) -> PipelineConfig:
        return self.key[1]


def remember_training(request: tuple[str, PipelineConfig, int], history: Any, train_lines: tuple[str, ...], test_lines: tuple[str, ...]) -> None:
    """Keep the latest training in the session; a new corpus resets the test text, a new history the slider."""
    previous = st.session_state.get("trained")
    if previous is not None and previous.history is history:
        return
    if previous is None or previous.test_lines != test_lines or "test_text" not in st.session_state:
        st.session_state["test_text"] = "\n".join(test_lines)
    st.session_state.pop("merge_step", None)  # (the slider returns to the trained size by itself: vocab_slider)
    st.session_state["trained"] = TrainedRun(request, history, train_lines, test_lines)


def vocab_slider(history: Any, run_key: Any = None) -> int:
    """The vocab slider (key ``vocab_slider``) from the alphabet to the largest recorded size.

    It starts at the trained model's size. For BPE, WordPiece and WordLevel that is the top
    of the range; Unigram prunes downwards, so its history also holds the larger
    vocabularies of the seed and earlier pruning rounds, above the trained size. A new
    training run (another ``run_key``) moves the slider back to its trained size.
    """
    low, high = history.min_vocab_size, history.max_vocab_size
    trained = min(max(history.model.get_vocab_size(), low), high)
    if high <= low:
        st.info(f"The vocabulary has {high:,} tokens and nothing to slide: {history.stop_reason}.")
        return high
    current = st.session_state.get("vocab_slider")
    if current is None or not low <= current <= high or st.session_state.get("_vocab_slider_run") != run_key:
        st.session_state["vocab_slider"] = trained
    st.session_state["_vocab_slider_run"] = run_key
    size = st.slider(
        "Vocab size (drag to see the tokenizer at any size the training went through, without retraining)",
        min_value=low, max_value=high, key="vocab_slider",
    )
    caption = f"{low:,} = special tokens and alphabet; {trained:,} = trained size."
    if high > trained:
        caption += f" Up to {high:,}: the larger vocabularies of the seed and earlier pruning rounds."
    st.caption(caption)
    return size


def token_view(tokenizer: Any, config: PipelineConfig) -> None:
    """Test text (key ``test_text``) as colored token spans, with counts and an ids toggle."""
    from tokviz.limits import MAX_RENDERED_TOKENS
    from tokviz.viz.spans import render_token_spans, spans_from_encoding
    from tokviz.viz.tables import token_stats

    text = st.text_area("Test text (held-out lines of the corpus by default)", key="test_text", height=120)
    show_ids = st.toggle("Show ids instead of token text", key="show_ids")
    encoding = tokenizer.encode(text)
    metrics_row(token_stats(text, encoding, config.unk_token))
    byte_level = is_byte_level(config)
    rendered = render_token_spans(
        text, spans_from_encoding(encoding, config.unk_token), show_ids=show_ids, byte_level=byte_level, max_tokens=MAX_RENDERED_TOKENS
    )
    if rendered.truncated:
        st.info(f"Showing the first {rendered.rendered_tokens:,} of {rendered.total_tokens:,} tokens; the counts above cover all of them.")
    st.html(rendered.html)


def _top_words(run: TrainedRun, limit: int) -> list[tuple[str, int]]:
    """The corpus's most frequent words as the trainer saw them (from the cached word counts)."""
    counts = word_counts_cached(run.key[0], run.config.normalizers, run.config.pre_tokenizers, _lines=run.train_lines)
    return counts.most_common(limit)


def result_views(run: TrainedRun, tokenizer: Any, size: int) -> dict[str, Callable[[], None]]:
    """The result tabs that apply to this algorithm, label -> function drawing it."""
    views: dict[str, Callable[[], None]] = {}
    if getattr(run.history, "merges", None):
        views["Merge history"] = lambda: merge_history_view(run, size)
    if hasattr(run.history, "em_steps"):
        views["Unigram: EM and pruning"] = lambda: unigram_view(run)
        views["Unigram: lattice and sampling"] = lambda: lattice_view(run, tokenizer)
    if type(tokenizer.model).__name__ == "WordPiece":
        views["WordPiece trace"] = lambda: wordpiece_trace_view(tokenizer)
    views["Vocabulary"] = lambda: vocabulary_view(run, tokenizer)
    views["Charts"] = lambda: charts_view(run, tokenizer, size)
    views["Export"] = lambda: export_view(run, tokenizer)
    return views


@st.cache_resource(max_entries=8, show_spinner=False)
def _merge_frame(run_key: tuple, _run: TrainedRun) -> Any:
    """The merge table of a training, built once (25,000 merges take a while to tabulate)."""
    from tokviz.viz import tables

    return tables.merge_table(_run.history.merges, byte_level=is_byte_level(_run.config))


def is_byte_level(config: PipelineConfig) -> bool:
    """Whether tokens are GPT-2 byte symbols, which tables show decoded (``'ê°Ģ'`` as ``'가'``)."""
    return any(spec.type == "ByteLevel" for spec in config.pre_tokenizers)


def vocabulary_view(run: TrainedRun, tokenizer: Any) -> None:
    """The vocabulary at the slider's size, by id (special tokens first)."""
    from tokviz.viz import tables

    vocab = tokenizer.get_vocab(with_added_tokens=True)
    st.caption(f"{len(vocab):,} tokens at this vocab size, by id.")
    st.dataframe(tables.vocab_table(vocab, run.history.special_tokens, is_byte_level(run.config)), hide_index=True, height=320, width="stretch")


def merge_history_view(run: TrainedRun, size: int) -> None:
    """Merge table, a step picker with the frequent words' segmentations and the words it changed."""
    from tokviz.viz import tables

    history = run.history
    merges = history.merges
    st.dataframe(_merge_frame(run.key, run), hide_index=True, height=280, width="stretch")
    shown = [step for step in merges if step.vocab_size <= size] or merges[:1]
    if st.session_state.get("merge_step", 0) >= len(merges):
        st.session_state.pop("merge_step")
    rank = st.number_input("Merge step to inspect", min_value=0, max_value=len(merges) - 1, value=shown[-1].rank, key="merge_step")
    step = merges[int(rank)]
    byte_level = is_byte_level(run.config)
    show = (lambda token: tables.show(token, byte_level)) if byte_level else str
    st.text(f"Step {step.rank}: {show(step.left)!r} + {show(step.right)!r} → {show(step.token)!r}   count {step.count:,}   score {step.score:.6g}")
    before = model_at_cached(*run.key, step.vocab_size - 1, _history=history)
    after = model_at_cached(*run.key, step.vocab_size, _history=history)
    left, right = st.columns(2)
    with left:
        st.caption("The corpus's most frequent words after this step")
        st.dataframe(tables.segmentations_table(_top_words(run, 15), after, byte_level), hide_index=True, width="stretch")
    with right:
        st.caption("Words this merge changed (most frequent first)")
        st.dataframe(tables.words_changed_table(_top_words(run, 2000), before, after, byte_level=byte_level), hide_index=True, width="stretch")
        st.caption("Pairs it beat at that moment")
        st.dataframe(tables.candidates_table(step, byte_level), hide_index=True, width="stretch")


def unigram_view(run: TrainedRun) -> None:
    """EM objective per sub-iteration, vocab per round, removed pieces, log-probabilities."""
    from tokviz.viz import charts, tables

    history = run.history
    left, right = st.columns(2)
    if history.em_steps:
        left.plotly_chart(charts.em_objective_figure(history.em_steps), width="stretch")
    else:
        left.info("This method runs no EM: scores come from the seed frequencies (the HF course's version).")
    if not history.prune_rounds:
        right.info(f"No pruning round: the seed vocabulary already fit the target ({history.stop_reason}).")
    else:
        right.plotly_chart(charts.unigram_vocab_figure(history.prune_rounds, history.max_vocab_size), width="stretch")
        st.caption("Pieces removed in each pruning round, with the loss increase that condemned them")
        st.dataframe(tables.removed_pieces_table(history.prune_rounds), hide_index=True, height=240, width="stretch")
    st.plotly_chart(charts.log_prob_figure(history.final_pieces, history.special_tokens), width="stretch")


def _as_pre_token(tokenizer: Any, word: str) -> str:
    """The first pre-token of ``word`` through the tokenizer's normalizer and pre-tokenizer (what the model sees)."""
    normalized = tokenizer.normalizer.normalize_str(word) if tokenizer.normalizer is not None else word
    if tokenizer.pre_tokenizer is None:
        return normalized
    pieces = tokenizer.pre_tokenizer.pre_tokenize_str(normalized)
    return pieces[0][0] if pieces else ""


def _default_word(run: TrainedRun) -> str:
    words = [word for word, _ in _top_words(run, 200) if len(word.strip("▁Ġ")) >= 5]
    return (words[0] if words else "tokenizer").lstrip("▁Ġ")


def lattice_view(run: TrainedRun, tokenizer: Any) -> None:
    """A word's Viterbi lattice, its n-best segmentations and sampled ones (subword regularization)."""
    import random

    from tokviz.viz import charts, tables

    model = tokenizer.model
    if "lattice_word" not in st.session_state:
        st.session_state["lattice_word"] = _default_word(run)
    word = st.text_input("Word", key="lattice_word", max_chars=40)
    piece = _as_pre_token(tokenizer, word)
    if not piece:
        st.info("Type a word to see its lattice.")
        return
    st.caption(f"As the model sees it: {md_escape(repr(piece))}")
    st.plotly_chart(charts.lattice_figure(model.lattice(piece)), width="stretch")
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

    word = st.text_input("Word to trace", value="tokenization", key="trace_word", max_chars=60)
    piece = _as_pre_token(tokenizer, word)
    if not piece:
        st.info("Type a word to trace.")
        return
    trace = tokenizer.model.trace(piece)
    st.text(f"{piece!r} → {[token.value for token in trace.tokens]}")
    if trace.unk_reason:
        st.warning(md_escape(trace.unk_reason))
    st.dataframe(tables.wordpiece_trace_table(trace), hide_index=True, width="stretch")


@st.cache_data(max_entries=16, show_spinner=False)
def _single_token_points(run_key: tuple, _run: TrainedRun) -> list[tuple[int, float]]:
    from tokviz.viz import charts

    history = _run.history
    sizes = charts.evenly_spaced_sizes(history.min_vocab_size, history.max_vocab_size, 10)
    words = dict(_top_words(_run, 2000))
    return charts.single_token_share(words, lambda size: model_at_cached(*_run.key, size, _history=history), sizes)


def charts_view(run: TrainedRun, tokenizer: Any, size: int) -> None:
    """Score per merge, vocab growth, token lengths at the current size, single-token words."""
    from tokviz.viz import charts

    history = run.history
    left, right = st.columns(2)
    merges = getattr(history, "merges", None)
    if merges:
        score_label = "count" if run.config.model == "BPE" or run.config.scoring == "frequency" else "score"
        left.plotly_chart(charts.merge_scores_figure(merges, score_label), width="stretch")
        right.plotly_chart(charts.vocab_growth_figure(merges, history.min_vocab_size), width="stretch")
    left, right = st.columns(2)
    vocab = tokenizer.model.get_vocab()
    left.plotly_chart(charts.token_length_figure(vocab, history.special_tokens), width="stretch")
    points = _single_token_points((run.key[0], run.key[1], run.key[2]), run)
    right.plotly_chart(charts.single_token_share_figure(points, "2,000 most frequent words"), width="stretch")


def export_view(run: TrainedRun, tokenizer: Any) -> None:
    """Downloads: tokenizer.json (loads in HF tokenizers), vocab.txt, merges.txt, the history as CSV."""
    from tokviz.export import history_csv, merges_txt, model_merges, vocab_txt

    size = tokenizer.model.get_vocab_size()
    st.caption(f"Everything below is the tokenizer at the slider's vocab size ({size:,}).")
    columns = st.columns(4)
    columns[0].download_button("tokenizer.json", tokenizer.to_str(pretty=True), "tokenizer.json", "application/json", key="download_json")
    columns[1].download_button("vocab.txt", vocab_txt(tokenizer.get_vocab(with_added_tokens=True)), "vocab.txt", "text/plain", key="download_vocab")
    merges = model_merges(tokenizer.model)
    if merges is not None:
        columns[2].download_button("merges.txt", merges_txt(merges), "merges.txt", "text/plain", key="download_merges")
    columns[3].download_button("history.csv", history_csv(run.history), "history.csv", "text/csv", key="download_history")


# ---------------------------------------------------------------------------------------
# Pipeline and Inspect pages: tokenizers to look at (a preset trained on the sample, the
# Train page's latest run, an uploaded tokenizer.json)

#: Vocab size of the presets the Pipeline and Inspect pages train on the built-in sample
#: (the Train page's default, so both share its cached training).
SAMPLE_PRESET_VOCAB = 1000


def preset_on_sample(preset: str) -> Any:
    """The preset trained on the built-in sample at :data:`SAMPLE_PRESET_VOCAB` (cached, shared with Train)."""
    from tokviz.corpus import corpus_hash
    from tokviz.pipeline_config import tokenizer_with_model
    from tokviz.presets import PRESETS
    from tokviz.samples import load_sample

    sample = load_sample()
    corpus_key = corpus_hash(sample)
    split, _ = corpus_overview(corpus_key, _text=sample)
    config = PRESETS[preset].build()
    request = (corpus_key, config, SAMPLE_PRESET_VOCAB)
    history = train_with_progress(request, split.train_lines)
    return tokenizer_with_model(config, model_at_cached(*request, history.max_vocab_size, _history=history))


def session_trained_tokenizer() -> Any | None:
    """The tokenizer the Train page trained last in this session (at its trained size), if any."""
    from tokviz.pipeline_config import tokenizer_with_model

    run = st.session_state.get("trained")
    if run is None:
        return None
    return tokenizer_with_model(run.config, model_at_cached(*run.key, run.history.max_vocab_size, _history=run.history))


def tokenizer_choice(key: str, allow_upload: bool = False) -> tuple[Any | None, str]:
    """A selectbox (key ``key``) over the presets trained on the sample, this session's Train run
    and, with ``allow_upload``, an uploaded tokenizer.json (uploader key ``{key}_file``).

    Returns ``(tokenizer or None, a cache key naming the choice)``; a bad upload shows its error
    and returns ``None``.
    """
    from tokviz.presets import PRESETS

    options = ([("upload", "Upload a tokenizer.json")] if allow_upload else [])
    run = st.session_state.get("trained")
    if run is not None:
        options.append(("trained", f"Trained on the Train page ({run.history.algorithm}, {run.history.max_vocab_size:,} tokens)"))
    options += [(name, f"{preset.label}, trained on the sample ({SAMPLE_PRESET_VOCAB:,} tokens)") for name, preset in PRESETS.items()]
    labels = dict(options)
    if st.session_state.get(key) not in labels:
        st.session_state[key] = "trained" if run is not None else next(iter(PRESETS))
    choice = st.selectbox("Tokenizer", list(labels), key=key, format_func=labels.__getitem__)
    if choice == "trained":
        return session_trained_tokenizer(), f"trained:{run.key[0]}:{hash(run.key[1])}:{run.key[2]}"
    if choice != "upload":
        return preset_on_sample(choice), f"preset:{choice}"
    from tokviz.limits import MAX_UPLOAD_BYTES

    uploaded = st.file_uploader(
        f"tokenizer.json (up to {MAX_UPLOAD_BYTES // (1024 * 1024)} MB)", type=["json"], key=f"{key}_file",
        help="A tokenizer.json saved by Hugging Face tokenizers (tokenizer.save / to_str) or by tokviz.",
    )
    if uploaded is None:
        st.info("Upload a tokenizer.json, or pick a tokenizer above.")
        return None, ""
    try:
        return load_tokenizer_cached(uploaded.file_id, uploaded.name, _data=uploaded.getvalue()), f"upload:{uploaded.file_id}"
    except TokvizError as error:
        show_error(error)
        return None, ""


@st.cache_resource(max_entries=4, show_spinner="Reading the tokenizer…")
def load_tokenizer_cached(file_id: str, name: str, _data: bytes) -> Any:
    """An uploaded tokenizer.json, read once per file (errors are not cached: they re-raise)."""
    from tokviz.inspect import load_tokenizer_json

    return load_tokenizer_json(_data, name)


@st.cache_resource(max_entries=4, show_spinner=False)
def vocab_frame_cached(choice_key: str, _tokenizer: Any) -> Any:
    """The vocab browser's table of one tokenizer, built once (50,000 rows take a moment)."""
    from tokviz.inspect import vocab_frame

    return vocab_frame(_tokenizer)


def token_spans_html(tokenizer: Any, text: str, byte_level: bool) -> None:
    """``text`` encoded by ``tokenizer`` as token spans (the shared renderer), with counts."""
    from tokviz.limits import MAX_RENDERED_TOKENS
    from tokviz.viz.spans import render_token_spans, spans_from_encoding
    from tokviz.viz.tables import token_stats

    unk_token = getattr(tokenizer.model, "unk_token", None)
    if not isinstance(unk_token, str):  # Unigram keeps an unk id, not a token
        unk_id = getattr(tokenizer.model, "unk_id", None)
        unk_token = tokenizer.id_to_token(unk_id) if isinstance(unk_id, int) else None
    encoding = tokenizer.encode(text)
    metrics_row(token_stats(text, encoding, unk_token))
    rendered = render_token_spans(text, spans_from_encoding(encoding, unk_token), byte_level=byte_level, max_tokens=MAX_RENDERED_TOKENS)
    if rendered.truncated:
        st.info(f"Showing the first {rendered.rendered_tokens:,} of {rendered.total_tokens:,} tokens.")
    st.html(rendered.html)


# ---------------------------------------------------------------------------------------
# Compare page: one configuration form per column, compression curves cached per training


def compare_configuration_form(position: int, default_preset: str, default_vocab: int = 1000) -> Any:
    """One configuration of the Compare page: a preset, or model / pre-tokenizer / normalizer; and a vocab size.

    Keys are ``compare_preset_{i}``, ``compare_model_{i}``, ``compare_pre_{i}``,
    ``compare_norm_{i}`` and ``compare_vocab_{i}``; returns a ``tokviz.compare.Configuration``.
    """
    from tokviz.compare import NORMALIZER_CHOICES, PRE_TOKENIZER_CHOICES, Configuration, configuration_name, custom_config
    from tokviz.limits import MAX_VOCAB_SIZE
    from tokviz.pipeline_config import MODELS
    from tokviz.presets import PRESETS

    options = [*PRESETS, "custom"]
    choice = st.selectbox(
        f"Configuration {position + 1}", options, index=options.index(default_preset), key=f"compare_preset_{position}",
        format_func=lambda key: PRESETS[key].label if key in PRESETS else "Custom: model × pre-tokenizer × normalizer",
    )
    if choice == "custom":
        model = st.selectbox("Model", MODELS, key=f"compare_model_{position}")
        pre_tokenizer = st.selectbox("Pre-tokenizer", list(PRE_TOKENIZER_CHOICES), key=f"compare_pre_{position}")
        normalizer = st.selectbox("Normalizer", list(NORMALIZER_CHOICES), key=f"compare_norm_{position}")
        config = custom_config(model, pre_tokenizer, normalizer)
    else:
        config = PRESETS[choice].build()
        st.caption(PRESETS[choice].summary)
    vocab_size = st.number_input("Vocab size", min_value=1, max_value=MAX_VOCAB_SIZE, value=default_vocab, step=100, key=f"compare_vocab_{position}")
    return Configuration(configuration_name(position, choice, config.model, int(vocab_size)), config, int(vocab_size))


def is_trained(request: tuple[str, PipelineConfig, int]) -> bool:
    """Whether the training for ``(corpus hash, config, vocab size)`` is in the cache (so showing it costs nothing)."""
    return "history" in _training_slot(*request)


@st.cache_resource(max_entries=32, show_spinner=False)
def compression_curve_cached(request: tuple[str, PipelineConfig, int], text_key: str, _history: Any, _text: str, points: int = 8) -> Any:
    """Tokens per word and bytes per token at ``points`` vocab sizes of one training, on one text (by hash).

    The models come from ``history.model_at(k)`` (no retraining) and are not kept: only the
    curve is, so revisiting the page draws it at once.
    """
    from tokviz.metrics import vocab_size_curve
    from tokviz.pipeline_config import tokenizer_with_model
    from tokviz.viz.charts import evenly_spaced_sizes

    config = request[1]
    sizes = evenly_spaced_sizes(_history.min_vocab_size, _history.max_vocab_size, points)
    return vocab_size_curve(lambda size: tokenizer_with_model(config, _history.model_at(size)), sizes, _text, config.unk_token)


# ---------------------------------------------------------------------------------------
# Learn page: one view per lesson step kind (tokviz.lessons computes, these only lay out)

_WINNER_STYLE = "background-color: #c8e6c9; font-weight: 600"
_TIED_STYLE = "background-color: #fff59d"


def _highlight_rows(frame: Any, styles: list[str] | None = None) -> Any:
    """A Styler that paints row ``i`` with ``styles[i]`` (none: plain) and shows floats with 3 decimals."""
    styled = frame.style.format(precision=3)
    return styled.apply(lambda row: [styles[row.name]] * len(row), axis=1) if styles else styled


def _rows_height(rows: int, most: int) -> int:
    """A table's height in px: every row when they fit in ``most``, a scroll bar when not."""
    return min(38 + 35 * rows, most)


_LEARN_COMPACT_CSS = """<style>
[data-testid=stMainBlockContainer] { padding-top: 1.5rem; padding-bottom: 1rem; }
[data-testid=stMainBlockContainer] h1 { font-size: 1.9rem; padding: 0.25rem 0 0.5rem 0; }
[data-testid=stMainBlockContainer] h3 { font-size: 1.35rem; padding: 0.25rem 0; }
</style>"""


def learn_compact_layout() -> None:
    """Less padding and smaller headings on the Learn page, so a lesson step fits a projected 1280×720 screen."""
    st.html(_LEARN_COMPACT_CSS)


def learn_corpus_editor(default_counts: dict[str, int]) -> dict[str, int] | None:
    """The lesson's word counts, edited as a table (``st.data_editor``) or as text; ``None`` after a shown error."""
    import pandas as pd

    from tokviz.lessons import check_word_counts, format_word_counts, parse_word_counts

    current = st.session_state.setdefault("learn_counts_current", dict(default_counts))
    st.session_state.setdefault("learn_counts_text", format_word_counts(current))
    # The editor's starting table must not change under its edits (they are stored relative to it):
    # it is replaced, under a new key, only when the teacher switches from text back to the table.
    base_counts = st.session_state.setdefault("learn_counts_base", dict(current))
    st.session_state.setdefault("learn_counts_version", 0)

    def switch_mode() -> None:  # carry the words over to the other editor
        latest = st.session_state["learn_counts_current"]
        st.session_state["learn_counts_text"] = format_word_counts(latest)
        st.session_state["learn_counts_base"] = dict(latest)
        st.session_state["learn_counts_version"] += 1

    mode = st.radio("Edit as", ["table", "text"], horizontal=True, key="learn_counts_mode", on_change=switch_mode)
    try:
        if mode == "table":
            base = pd.DataFrame({"word": list(base_counts), "count": list(base_counts.values())})
            edited = st.data_editor(
                base, num_rows="dynamic", hide_index=True, width=260, height=250,
                column_config={"count": st.column_config.NumberColumn("count", min_value=0, step=1)},
                key=f"learn_counts_editor_{st.session_state['learn_counts_version']}",
            )
            counts = check_word_counts(dict(zip(edited["word"], edited["count"])))
        else:
            counts = parse_word_counts(st.text_area("One word and its count per line", key="learn_counts_text", height=180))
    except TokvizError as error:
        show_error(error)
        return None
    st.session_state["learn_counts_current"] = counts
    return counts


def learn_step_view(step: Any, predict: bool, step_key: str) -> None:
    """Draw one lesson step: its title, its short explanation and the view its ``kind`` names."""
    view = step.data
    hidden = predict and step.kind == "merge" and step_key not in st.session_state.get("learn_revealed", frozenset())
    st.subheader(f"Merge {view.rank + 1}: which pair is merged next?" if hidden else step.title)
    if not hidden:
        st.caption(step.explanation)
    _LEARN_VIEWS[step.kind](view, hidden, step_key)


def _splits_view(data: Any, hidden: bool, step_key: str) -> None:
    from tokviz.lessons import splits_frame

    splits, vocab = data
    left, right = st.columns([3, 2])
    left.dataframe(splits_frame(splits), hide_index=True, width="stretch")
    right.markdown("**Vocabulary**")
    right.code("  ".join(vocab), language=None, wrap_lines=True)


def _merge_view(view: Any, hidden: bool, step_key: str) -> None:
    from tokviz.lessons import pairs_frame, splits_frame

    left, right = st.columns([1, 1])
    with left:
        st.markdown("**Current splits**")
        st.dataframe(splits_frame(view.splits), hide_index=True, width="stretch")
        verdict = None if hidden else st.session_state.get(f"learn_verdict_{step_key}")
        if verdict is not None:
            (st.success if verdict.correct else st.warning)(md_escape(verdict.headline))
            st.caption(md_escape(verdict.why))
    with right:
        if hidden:
            st.markdown("**Your prediction**")
            options = sorted(f"{row.left} + {row.right}" for row in view.pairs)
            st.selectbox("The pair merged next", options, key=f"learn_guess_{step_key}")
            st.button("Check", key=f"learn_check_{step_key}", type="primary", on_click=_reveal_merge, args=(view, step_key))
            if view.algorithm == "WordPiece":
                st.caption("Score each pair: its count / (count of its left part × count of its right part). The best score wins.")
            else:
                st.caption("Count the pairs in the words on the left (weighted by their counts), then check.")
            return
        st.markdown("**Pairs now** (winner green, ties yellow)")
        styles = [_WINNER_STYLE if row.winner else _TIED_STYLE if row.tied else "" for row in view.pairs]
        st.dataframe(_highlight_rows(pairs_frame(view), styles), hide_index=True, width="stretch", height=_rows_height(len(view.pairs), 280))
        st.success(md_escape(f"New vocabulary entry: {view.token!r} (= {view.left!r} + {view.right!r})"))


def _reveal_merge(view: Any, step_key: str) -> None:
    """The Check button: judge the student's guess and reveal this step's merge."""
    from tokviz.lessons import judge_prediction

    pair_left, pair_right = st.session_state[f"learn_guess_{step_key}"].split(" + ", 1)
    st.session_state[f"learn_verdict_{step_key}"] = judge_prediction(view, pair_left, pair_right)
    st.session_state["learn_revealed"] = st.session_state.get("learn_revealed", frozenset()) | {step_key}


def _encode_view(data: Any, hidden: bool, step_key: str) -> None:
    from tokviz.lessons import encoded_frame, splits_frame

    splits, vocab, encoded = data
    left, right = st.columns([1, 1])
    left.markdown("**The training words now**")
    left.dataframe(splits_frame(splits), hide_index=True, width="stretch")
    right.text_input("New words to tokenize (separated by spaces)", key="learn_new_words_bpe", max_chars=120)
    right.dataframe(encoded_frame(encoded), hide_index=True, width="stretch")
    right.code("  ".join(vocab), language=None, wrap_lines=True)


def _wordpiece_encode_view(data: Any, hidden: bool, step_key: str) -> None:
    import pandas as pd

    from tokviz.viz import tables

    _splits, vocab, traces = data
    left, right = st.columns([1, 1])
    left.text_input("New words to tokenize (separated by spaces)", key="learn_new_words_wordpiece", max_chars=120)
    frame = pd.DataFrame(
        [(trace.word, str([token.value for token in trace.tokens]), str(list(bpe))) for trace, bpe in traces],
        columns=["word", "WordPiece", "BPE (3 merges)"],
    )
    left.dataframe(frame, hide_index=True, width="stretch")
    left.code("  ".join(vocab), language=None, wrap_lines=True)
    with right:
        words = [trace.word for trace, _ in traces]
        if not words:
            st.info("Type a word on the left to trace its search.")
            return
        word = st.selectbox("Trace the search for", words, key="learn_trace_word")
        trace = next(trace for trace, _ in traces if trace.word == word)
        st.dataframe(tables.wordpiece_trace_table(trace), hide_index=True, width="stretch", height=_rows_height(4, 200))
        if trace.unk_reason:
            bpe = dict((t.word, b) for t, b in traces)[word]
            st.warning(md_escape(f"{trace.unk_reason}. BPE only replaces the unknown character: {list(bpe)}."))


def _seed_view(rows: Any, hidden: bool, step_key: str) -> None:
    import pandas as pd

    frame = pd.DataFrame([(row.piece, row.count, round(row.probability, 4)) for row in rows], columns=["piece", "count", "P(piece)"])
    st.dataframe(_highlight_rows(frame), hide_index=True, width="stretch", height=_rows_height(len(frame), 390))


def _segmentations_view(data: Any, hidden: bool, step_key: str) -> None:
    import pandas as pd

    word, rows = data
    if len(rows) > 10:
        st.caption(f"The 10 most probable of {len(rows)} cuts.")
        rows = rows[:10]
    frame = pd.DataFrame(
        [(str(list(row.pieces)), " × ".join(f"{p:.4f}" for p in row.piece_probabilities), f"{row.probability:.5f}", f"{row.share:.1%}")
         for row in rows],
        columns=["segmentation", "P(piece) × …", "probability", "share of all cuts"],
    )
    st.dataframe(_highlight_rows(frame, [_WINNER_STYLE if row.best else "" for row in rows]), hide_index=True, width="stretch")


def _viterbi_view(data: Any, hidden: bool, step_key: str) -> None:
    import pandas as pd

    word, cells = data
    frame = pd.DataFrame(
        [(cell.end, f"{cell.piece} ({cell.start}→{cell.end})", round(cell.piece_log_prob, 3), round(cell.total, 3)) for cell in cells],
        columns=["position", "piece ending here", "log P(piece)", "best[start] + log P"],
    )
    st.dataframe(_highlight_rows(frame, [_WINNER_STYLE if cell.chosen else "" for cell in cells]), hide_index=True, width="stretch",
                 height=_rows_height(len(cells), 390))


def _loss_view(data: Any, hidden: bool, step_key: str) -> None:
    import pandas as pd

    rows, loss = data
    frame = pd.DataFrame(
        [(row.word, row.count, str(list(row.segmentation)), round(row.cost, 3), round(row.count * row.cost, 2)) for row in rows],
        columns=["word", "count", "best cut", "−log P(cut)", "count × −log P"],
    )
    left, right = st.columns([4, 1])
    left.dataframe(_highlight_rows(frame), hide_index=True, width="stretch")
    right.metric("loss", f"{loss:.2f}")


def _prune_view(view: Any, hidden: bool, step_key: str) -> None:
    import pandas as pd

    frame = pd.DataFrame([(piece, round(loss, 3), "removed" if removed else "") for piece, loss, removed in view.candidates],
                         columns=["piece", "loss increase if removed", ""])
    left, right = st.columns([1, 1])
    left.dataframe(_highlight_rows(frame, ["background-color: #ffcdd2" if removed else "" for _, _, removed in view.candidates]),
                   hide_index=True, width="stretch", height=_rows_height(len(frame), 390))
    right.markdown("**Why these go**")
    for piece, reason in view.reasons:
        right.text(f"{piece!r}: {reason}")


def _unigram_final_view(data: Any, hidden: bool, step_key: str) -> None:
    import pandas as pd

    from tokviz.lessons import encoded_frame

    pieces, encoded = data
    left, right = st.columns([1, 1])
    frame = pd.DataFrame([(piece, p) for piece, p in pieces], columns=["piece", "P(piece)"])
    left.dataframe(_highlight_rows(frame), hide_index=True, width="stretch", height=_rows_height(len(frame), 390))
    right.dataframe(encoded_frame(encoded), hide_index=True, width="stretch")


def _bytes_view(data: Any, hidden: bool, step_key: str) -> None:
    import pandas as pd

    text, rows, n_bytes = data
    frame = pd.DataFrame(
        [(repr(row.char), row.code_point, " ".join(f"{b:02X}" for b in row.utf8), len(row.utf8)) for row in rows],
        columns=["character", "code point", "UTF-8 bytes", "bytes"],
    )
    left, right = st.columns([3, 1])
    left.dataframe(frame, hide_index=True, width="stretch")
    right.metric("characters", len(rows))
    right.metric("bytes", n_bytes)


def _byte_map_view(data: Any, hidden: bool, step_key: str) -> None:
    import pandas as pd

    text, symbols, byte_rows = data
    left, right = st.columns([1, 1])
    left.markdown("**The text as byte symbols**")
    left.code(symbols, language=None)
    right.dataframe(pd.DataFrame([(f"0x{byte:02X}", symbol) for byte, symbol in byte_rows], columns=["byte", "symbol"]), hide_index=True, width="stretch")


def _byte_pieces_view(data: Any, hidden: bool, step_key: str) -> None:
    import pandas as pd

    from tokviz.viz.spans import readable_byte_level

    text, pieces = data
    frame = pd.DataFrame(
        [(piece, readable_byte_level(piece), str(offsets), repr(text[offsets[0]:offsets[1]])) for piece, offsets in pieces],
        columns=["pre-token (byte symbols)", "readable", "offsets", "original text"],
    )
    st.dataframe(frame, hide_index=True, width="stretch")


def _no_unk_view(data: Any, hidden: bool, step_key: str) -> None:
    from tokviz.viz.spans import render_token_spans, spans_from_encoding

    sample, encoding, char_tokens, decoded = data
    st.markdown("**Byte-level BPE** (trained on the lesson's words)")
    st.html(render_token_spans(sample, spans_from_encoding(encoding), byte_level=True).html)
    st.caption(md_escape(f"{len(encoding.ids)} tokens, decoded back: {decoded!r}"))
    st.markdown("**Character-level BPE** (same words)")
    st.code(str(list(char_tokens)), language=None)


def _pipeline_spans(sentence: str, pieces: Any, byte_level: bool = False) -> str:
    from tokviz.viz.spans import TokenSpan, render_token_spans

    spans = [TokenSpan(piece, None, start, end) for piece, (start, end) in pieces]
    return render_token_spans(sentence, spans, byte_level=byte_level).html


def _pipeline_view(view: Any, hidden: bool, step_key: str) -> None:
    import pandas as pd

    from tokviz.viz.spans import make_visible

    sentence = view.sentence
    left, right = st.columns([1, 1])
    with left:
        st.caption(md_escape(f"normalizer: {view.normalizer} · pre-tokenizer: {view.pre_tokenizer}"))
        st.code(view.normalized, language=None, wrap_lines=True)
        st.html(_pipeline_spans(sentence, view.pieces, view.byte_level))
    rows = [(piece, str(offsets), make_visible(sentence[offsets[0]:offsets[1]])) for piece, offsets in view.pieces]
    right.dataframe(pd.DataFrame(rows, columns=["pre-token", "offsets", "original text"]), hide_index=True, width="stretch",
                    height=_rows_height(len(rows), 390))


def _pipeline_compare_view(data: Any, hidden: bool, step_key: str) -> None:
    sentence, views = data
    for view in views:
        st.markdown(f"**{view.name}** · {len(view.pieces)} pre-tokens")
        st.html(_pipeline_spans(sentence, view.pieces, view.byte_level))


_LEARN_VIEWS: dict[str, Callable[[Any, bool, str], None]] = {
    "splits": _splits_view,
    "merge": _merge_view,
    "encode": _encode_view,
    "wordpiece_encode": _wordpiece_encode_view,
    "seed": _seed_view,
    "segmentations": _segmentations_view,
    "viterbi": _viterbi_view,
    "loss": _loss_view,
    "prune": _prune_view,
    "unigram_final": _unigram_final_view,
    "bytes": _bytes_view,
    "byte_map": _byte_map_view,
    "byte_pieces": _byte_pieces_view,
    "no_unk": _no_unk_view,
    "pipeline": _pipeline_view,
    "pipeline_compare": _pipeline_compare_view,
}
