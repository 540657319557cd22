"""Trainings shared by every page and session: the cache, word counts, and "the session's tokenizer".

A training is keyed by a :class:`~tokviz.workspace.TrainingRequest` (corpus hash, pipeline,
target vocab). Words are counted once per (corpus, normalizers, pre-tokenizers) and the
trainer trains from those counts (``train_from_word_counts``), so a training counts words
once. Caches hold immutable records (histories, word counts); the tokenizers handed to pages
are fresh copies, so nothing one session does to a tokenizer reaches another.
"""

from __future__ import annotations

import copy
import functools
import threading
from collections import Counter, OrderedDict
from collections.abc import Callable
from typing import Any

import streamlit as st

from tokviz.limits import TRAINING_CACHE_ENTRIES
from tokviz.pipeline_config import PipelineConfig, applicable
from tokviz.workspace import TrainingRequest, Workspace


class _Lru:
    """A process-wide least-recently-used cache keyed by plain hashable values (requests are frozen
    dataclasses). ``st.cache_resource`` hashes its arguments with Streamlit's own hasher, which walks
    the whole pipeline description each call (about 7 ms at load 10); a slider move makes several such
    lookups, so the caches a move reads are these. Thread-safe; a value is computed outside the lock."""

    def __init__(self, max_entries: int) -> None:
        self.max_entries = max_entries
        self._items: OrderedDict[Any, Any] = OrderedDict()
        self._lock = threading.Lock()

    def peek(self, key: Any) -> Any | None:
        with self._lock:
            return self._items.get(key)

    def get(self, key: Any, make: Callable[[], Any]) -> Any:
        with self._lock:
            if key in self._items:
                self._items.move_to_end(key)
                return self._items[key]
        value = make()
        with self._lock:
            self._items[key] = value
            self._items.move_to_end(key)
            while len(self._items) > self.max_entries:
                self._items.popitem(last=False)
        return value


def request_for(corpus_key: str, config: PipelineConfig, vocab_size: int) -> TrainingRequest:
    """The cache key of a training; options the model does not use are left out, so they never retrain."""
    return TrainingRequest(corpus_key, applicable(config), int(vocab_size))


@functools.lru_cache(maxsize=256)
def store_key(request: TrainingRequest) -> str:
    """The key of a training in the store shared by replicas (and of its Dask task)."""
    from tokviz.cache_store import request_key

    return request_key(request.corpus_key, repr(request.config), request.vocab_size)


_LINES = _Lru(TRAINING_CACHE_ENTRIES)


def _training_lines(request: TrainingRequest) -> dict[str, Any]:
    """The corpus lines a training was made on (the views read its words even after the session moves
    to another corpus); the histories themselves live in :mod:`tokviz.cache_store`, bounded by bytes."""
    return _LINES.get(request, dict)


def is_trained(request: TrainingRequest) -> bool:
    """Whether ``request`` is in the cache (so showing it costs nothing)."""
    return training_of(request) is not None


_WORD_COUNTS = _Lru(4)


def word_counts_cached(corpus_key: str, normalizers: tuple, pre_tokenizers: tuple, _lines: tuple[str, ...]) -> Counter:
    """Word counts of the corpus through the config's normalizers and pre-tokenizers (once per corpus and text side)."""
    from tokviz.training import count_config_words

    return _WORD_COUNTS.get((corpus_key, normalizers, pre_tokenizers), lambda: count_config_words(
        PipelineConfig(normalizers=normalizers, pre_tokenizers=pre_tokenizers), _lines))


def counted_words(corpus_key: str, normalizers: tuple, pre_tokenizers: tuple) -> Counter | None:
    """The word counts :func:`word_counts_cached` holds already, or None (counting nothing)."""
    return _WORD_COUNTS.peek((corpus_key, normalizers, pre_tokenizers))


def train_cached(request: TrainingRequest, lines: tuple[str, ...], progress: Callable[[str, int, int], None] | None = None) -> Any:
    """Train ``request`` on ``lines``, or return the history trained before (by this replica or, with
    Redis, by another one).

    The training runs as a Dask task off this thread (:mod:`tokviz.jobs`); the same request asked
    by several sessions at once is one task. Every page trains through here, so the server's limits
    hold everywhere: a corpus or a word above them raises ``LimitExceededError`` (from the worker, same
    message), and all user patterns of the training share one time budget.
    """
    from tokviz import jobs
    from tokviz.cache_store import store
    from tokviz.limits import check_training_options
    from tokviz.patterns import time_budget

    key = store_key(request)
    _training_lines(request).setdefault("lines", lines)
    history = store().get(key)
    if history is None:
        config = request.config
        check_training_options(config, request.vocab_size)  # a link or the form cannot ask for an unbounded training
        words = counted_words(request.corpus_key, config.normalizers, config.pre_tokenizers)
        if words is None and jobs.backend() == "thread":
            with time_budget():
                words = word_counts_cached(request.corpus_key, config.normalizers, config.pre_tokenizers, lines)
        # Words not counted yet (a large corpus) are counted by the worker, which sends them back for the views.
        owner, wanted = _session_watch()
        result = jobs.train(jobs.task_key(request.corpus_key, repr(config), request.vocab_size), config,
                            request.vocab_size, lines, progress, words=words, owner=owner, wanted=wanted)
        if result.words is not None:
            _WORD_COUNTS.get((request.corpus_key, config.normalizers, config.pre_tokenizers), lambda: result.words)
        history = result.history
        store().put(key, history, result.text, result.retained)
    return history


def _session_watch() -> tuple[str | None, Callable[[], bool] | None]:
    """This session's id (it holds one training at a time) and whether it is still connected (a closed
    tab gives its training up); ``(None, None)`` outside a Streamlit server (AppTest, scripts)."""
    from streamlit.runtime import Runtime
    from streamlit.runtime.scriptrunner import get_script_run_ctx

    context = get_script_run_ctx()
    if context is None or not Runtime.exists():
        return None, None
    runtime, session_id = Runtime.instance(), context.session_id
    return session_id, lambda: runtime.is_active_session(session_id)


def train_with_progress(request: TrainingRequest, lines: tuple[str, ...]) -> Any:
    """Train (or fetch from the cache) with an ``st.progress`` bar shown only while training runs."""
    if is_trained(request):
        return train_cached(request, lines)
    bar = st.progress(0, text="waiting for a worker")
    try:
        return train_cached(request, lines, progress_callback(bar))
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


def trained_size(history: Any) -> int:
    """The size of the model the training produced (for Unigram: after pruning, not the seed)."""
    from tokviz.inspect import training_size_range

    return training_size_range(history)[2]


#: Tokenizers by (training, slider size): 5.7 MB (WordPiece) to 15.6 MB (Unigram) each once their word
#: caches have seen a 100,000-character text (bench/README.md, "Memory (scalemem)"), so 24 of them stay
#: under ~400 MB for the whole process while a session's back-and-forth on the slider still hits.
_TOKENIZERS = _Lru(24)


def _tokenizer_at(request: TrainingRequest, size: int, _history: Any) -> Any:
    """The finished tokenizer of a training at vocab ``size``, built once per (training, size)."""
    from tokviz.pipeline_config import tokenizer_with_model

    def build() -> Any:
        model = _history.model if size == trained_size(_history) else _history.model_at(size)
        return tokenizer_with_model(request.config, model)

    return _TOKENIZERS.get((request, size), build)


def tokenizer_at(request: TrainingRequest, size: int, history: Any) -> Any:
    """A fresh copy of the cached tokenizer of ``request`` at ``size``: a slider move builds no pipeline,
    and a session that edits its copy (``tokenizer.model.dropout = 0.1``) changes no other session's."""
    return copy.copy(_tokenizer_at(request, int(size), _history=history))


def model_at(request: TrainingRequest, size: int, history: Any) -> Any:
    """The model of a training at ``size`` (cached with its tokenizer)."""
    return _tokenizer_at(request, int(size), _history=history).model


def session_tokenizer(workspace: Workspace) -> tuple[Any, str] | None:
    """"The session's tokenizer": the Train page's latest training at the slider's size, and its label.

    ``None`` when nothing was trained in this session. A training the shared cache evicted is
    trained again from the session's corpus.
    """
    from tokviz.presets import algorithm_label

    request = workspace.train.trained
    if request is None:
        return None
    history = training_of(request)
    if history is None:  # evicted from the shared cache: retrain from the session's corpus, if it is still the one
        from tokviz.ui.corpus_input import session_corpus

        corpus = session_corpus(workspace)
        if corpus.key != request.corpus_key:
            return None
        history = train_with_progress(request, corpus.split.train_lines)
    from tokviz.inspect import training_size_range

    low, high, trained = training_size_range(history)
    size = min(max(workspace.train.slider or trained, low), high)
    tokenizer = tokenizer_at(request, size, history)
    return tokenizer, f"Trained on the Train page ({algorithm_label(history.algorithm)}, {tokenizer.get_vocab_size():,} tokens)"


def training_of(request: TrainingRequest) -> Any | None:
    """The stored history of ``request``, if the store (this process's, or Redis) still has it; a training
    this session opened from a history.json and the store evicted is read again from the session's file."""
    from tokviz.cache_store import store

    history = store().get(store_key(request))
    if history is None and is_opened(request):
        name, data = st.session_state.get(OPENED_TRAINING, (None, b""))
        if data:
            try:
                history = open_training(name, data, request_only=request)
            except ValueError:
                return None
    return history


#: Session key holding the ``(name, bytes)`` of the history.json opened on Train (no widget owns it, so a
#: page switch keeps it; the file itself is never stored on the server).
OPENED_TRAINING = "_train_opened_history"


def is_opened(request: TrainingRequest) -> bool:
    """Whether ``request`` is a training opened from a history.json (trained elsewhere, e.g. by the CLI)."""
    return request.corpus_key.startswith("history:")


def open_training(name: str, data: bytes, request_only: TrainingRequest | None = None) -> Any:
    """Open an uploaded history.json for Train: validated (:func:`tokviz.inspect.open_training_for_train`),
    put in the training store under its own request, and kept in the session. Returns the request (or,
    with ``request_only``, that request's history; ValueError if the session's file is another training).
    Bad files raise the ``TokvizError`` of ``open_training_for_train``, naming the file and the problem."""
    from tokviz import bounded
    from tokviz.cache_store import store
    from tokviz.inspect import open_training_for_train

    opening = bounded.call(open_training_for_train, data, name, name=name)  # read where it can be stopped (issue 38)
    request = request_for(opening.corpus_key, opening.config, opening.vocab_size)
    if request_only is not None and request != request_only:
        raise ValueError("the session's opened file is another training")
    store().put(store_key(request), opening.history)
    st.session_state[OPENED_TRAINING] = (opening.name, data)
    return opening.history if request_only is not None else request


def opened_name(request: TrainingRequest) -> str | None:
    """The file name of the training ``request`` was opened from in this session, if it was."""
    kept = st.session_state.get(OPENED_TRAINING)
    return kept[0] if kept and is_opened(request) else None


def training_lines(request: TrainingRequest) -> tuple[str, ...]:
    """The corpus lines ``request`` was trained on (empty if this process no longer holds them)."""
    return _training_lines(request).get("lines", ())


_ORIGINS = _Lru(16)


class _MergeOriginsAt:
    """The token origins of a BPE / WordPiece training at a smaller size, read from the whole training's.

    A token's origin is the first merge that made it, whatever the size: at a size that keeps the
    merges up to rank ``last_rank``, a token whose first merge came later is an alphabet symbol if the
    model has it at all. So a slider move needs no ``model_at`` replay and no dict of the whole
    vocabulary (they were a fifth of a move's server CPU); lookups (``get``) answer as
    :func:`tokviz.viz.spans.token_origins` at that size does for every token of that size's vocabulary.
    """

    def __init__(self, full: dict[str, Any], last_rank: int) -> None:
        self._full = full
        self._last_rank = last_rank

    def get(self, token: str, default: Any = None) -> Any:
        origin = self._full.get(token)
        if origin is None:
            return default
        if origin.kind == "merge" and origin.rank > self._last_rank:
            from tokviz.viz.spans import TokenOrigin

            return TokenOrigin("alphabet")
        return origin


def _origins_at(request: TrainingRequest, size: int, _history: Any) -> Any:
    from tokviz.viz.spans import token_origins

    if _history.algorithm.lower() in ("bpe", "wordpiece") and _history.merges:
        from tokviz.viz.charts import merges_at_size

        full = _ORIGINS.get((request, None), lambda: token_origins(_history))
        kept = merges_at_size(_history.merges, size)
        return _MergeOriginsAt(full, _history.merges[kept - 1].rank if kept else -1)
    return _ORIGINS.get((request, size), lambda: token_origins(_history, size))


def origins_at(request: TrainingRequest, size: int, history: Any) -> Any:
    """Token -> the merge or score that made it, for the token cards (``get``; once per training, or per
    training and size for Unigram and WordLevel)."""
    return _origins_at(request, int(size), _history=history)
