"""Trainings as tasks on Dask, off the page's thread: one task per (corpus, pipeline, vocab), progress
read back by whoever waits, cancelled when nobody waits any more.

By default the first training starts an embedded ``distributed.LocalCluster`` of worker processes
(nothing to install or start); ``TOKVIZ_DASK_SCHEDULER=tcp://host:port`` names a running scheduler
instead, shared by several app replicas. ``TOKVIZ_TRAINING_BACKEND=thread`` trains in the caller's
thread (no Dask at all: quick unit tests of the pages, or a single-user laptop).

How the pieces meet:

- The task key is derived from the request (:func:`task_key`), so two sessions (or two replicas on one
  scheduler) asking for the same training get the same task: Dask runs it once.
- The task writes its progress to the scheduler's metadata under the key (last value wins, so any
  number of readers can poll it, and reading a training that has not reported yet is no error on the
  scheduler); :func:`train` polls it and calls the page's progress callback.
- A waiter that stops (its session left, or Streamlit stopped its run) drops its future. When no future
  of the key is left, the scheduler releases the task, the worker marks it cancelled, and the task's
  next progress report raises :class:`TrainingCancelled`, so the training stops instead of running on.
  Every task is also bounded by ``TOKVIZ_TRAINING_TIMEOUT`` seconds (600 by default).
- User errors raised in the worker (limits, bad patterns) are the same ``TokvizError`` subclasses,
  re-raised in the caller with the same messages.

>>> task_key("0123abcd", "PipelineConfig(model='BPE')", 1000)
'tokviz-train-eeb36609fae3ff4c7a6f'
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import sys
import threading
import time
import types
from collections.abc import Callable, Iterator, Sequence
from typing import Any, NamedTuple

from tokviz.errors import TokvizError

Progress = Callable[[str, int, int], None]

SCHEDULER_ENV = "TOKVIZ_DASK_SCHEDULER"
BACKEND_ENV = "TOKVIZ_TRAINING_BACKEND"
WORKERS_ENV = "TOKVIZ_DASK_WORKERS"
TIMEOUT_ENV = "TOKVIZ_TRAINING_TIMEOUT"

#: How often a waiter reads the task's progress (seconds).
POLL_SECONDS = 0.25


class TrainingCancelled(TokvizError):
    """A training stopped because nobody waited for it any more, or it ran past the server's time bound."""


def task_key(corpus_key: str, pipeline: str, vocab_size: int) -> str:
    """The Dask key of a training: the same (corpus, pipeline, vocab) always gives the same key."""
    digest = hashlib.sha256(f"{corpus_key}\x00{pipeline}\x00{int(vocab_size)}".encode()).hexdigest()
    return f"tokviz-train-{digest[:20]}"


def backend() -> str:
    """``"dask"`` (the default) or ``"thread"`` (``TOKVIZ_TRAINING_BACKEND=thread``)."""
    value = os.environ.get(BACKEND_ENV, "dask").strip().lower() or "dask"
    if value not in ("dask", "thread"):
        raise ValueError(f"{BACKEND_ENV} must be 'dask' or 'thread', not {value!r}")
    return value


def timeout_seconds() -> float:
    return float(os.environ.get(TIMEOUT_ENV, "600"))


# --- the client: one per process, made on first use -------------------------------------------------

_client_lock = threading.Lock()
_client: Any = None
_cluster: Any = None


def client() -> Any:
    """The process's Dask client: to ``TOKVIZ_DASK_SCHEDULER`` if set, else to an embedded LocalCluster."""
    global _client, _cluster
    with _client_lock:
        if _client is not None and _client.status in ("running", "connecting"):
            return _client
        from distributed import Client

        address = os.environ.get(SCHEDULER_ENV, "").strip()
        if address:
            _client = Client(address, set_as_default=False, timeout="20s")
        else:
            _cluster = _local_cluster(int(os.environ.get(WORKERS_ENV, "1")))
            _client = Client(_cluster, set_as_default=False)
        return _client


def _local_cluster(workers: int) -> Any:
    """The embedded LocalCluster: worker processes, one thread each (a training holds the GIL for its
    whole run, so it must not share a process with the app's page threads or another training).

    Dask starts its workers with multiprocessing's "spawn", which re-runs the parent's ``__main__`` in
    every child. Under Streamlit ``__main__`` is the app script (a module without ``__spec__``), so each
    worker ran the whole app in bare mode as it started (hundreds of "missing ScriptRunContext" warnings
    in the server log). While a worker starts, ``__main__`` is a bare module: it runs nothing of ours.
    That holds for the workers' restarts too (:class:`_BareMainNanny`): when the server gets SIGTERM,
    its worker process gets it too, and the nanny starts a new one while the server shuts down.
    """
    import dask
    from distributed import LocalCluster

    with _bare_main(), dask.config.set(EMBEDDED_CLUSTER_CONFIG):
        return LocalCluster(n_workers=workers, threads_per_worker=1, processes=True, dashboard_address=None, host="127.0.0.1",
                            worker_class=_nanny_class())


#: Dask settings of the embedded cluster, whose scheduler and nanny live in the app server's process:
#: Dask's defaults poll every 20 ms (event-loop tick), 100 ms (the worker's memory) and 500 ms (system
#: monitor with disk counters), about 25 ms of the server's CPU per second while nobody trains, as much
#: as a third of what a slider move costs at 8 sessions. Slower polls leave trainings as they are.
EMBEDDED_CLUSTER_CONFIG = {
    "distributed.admin.tick.interval": "1s",
    "distributed.admin.system-monitor.interval": "2s",
    "distributed.admin.system-monitor.disk": False,
    "distributed.admin.system-monitor.gil.enabled": False,
    "distributed.worker.memory.monitor-interval": "500ms",
}


@contextlib.contextmanager
def _bare_main() -> Iterator[None]:
    """``sys.modules["__main__"]`` is a bare module inside (when it is a script, as under Streamlit)."""
    main = sys.modules.get("__main__")
    placeholder = None
    if main is not None and getattr(main, "__spec__", None) is None and getattr(main, "__file__", None):
        placeholder = sys.modules["__main__"] = types.ModuleType("__main__")
    try:
        yield
    finally:
        if placeholder is not None and sys.modules.get("__main__") is placeholder:  # a page's run may have set its own
            sys.modules["__main__"] = main


_NANNY: Any = None


def _nanny_class() -> Any:
    """A ``distributed.Nanny`` that starts (and restarts) its worker process under :func:`_bare_main`."""
    global _NANNY
    if _NANNY is None:
        from distributed import Nanny

        class _BareMainNanny(Nanny):
            async def instantiate(self) -> Any:
                with _bare_main():
                    return await super().instantiate()

        _NANNY = _BareMainNanny
    return _NANNY


def close() -> None:
    """Close the process's client and its embedded cluster, if any (tests, shutdown)."""
    global _client, _cluster
    with _client_lock:
        if _client is not None:
            _client.close()
        if _cluster is not None:
            _cluster.close()
        _client = _cluster = None


# --- the task, run on a worker -------------------------------------------------------------------------


def _training_task(key: str, config: Any, vocab_size: int, lines: Sequence[str], words: Any, bound: float) -> Any:
    """Run one training on a Dask worker, publishing progress and stopping when cancelled or too long."""
    from distributed import get_client, get_worker

    from tokviz.training import run_training

    worker = get_worker()
    scheduler = get_client()  # the worker's own client
    started = time.monotonic()
    last = {"value": -1, "checked": 0.0}

    def still_wanted() -> bool:
        state = worker.state.tasks.get(key)
        return state is not None and state.state not in ("cancelled", "released", "forgotten")

    def report(phase: str, done: int, total: int) -> None:
        now = time.monotonic()
        if now - last["checked"] >= 0.2:  # the scheduler's verdict is cheap to read but not free
            last["checked"] = now
            if not still_wanted():
                raise TrainingCancelled("The training was cancelled: nobody was waiting for it any more.")
            if now - started > bound:
                raise TrainingCancelled(f"The training ran longer than this server's limit of {bound:.0f} s and was stopped.")
        value = int(100 * done / total) if total else 0
        if value != last["value"]:
            last["value"] = value
            scheduler.set_metadata(_progress_path(key), (phase, int(done), int(total)))

    from tokviz import history_io
    from tokviz.patterns import time_budget
    from tokviz.training import count_config_words

    counted_here = words is None
    if counted_here:  # a large corpus: its words are counted here, not in the page's process
        with time_budget():
            words = count_config_words(config, lines)
    # The history goes back as its JSON: the form the shared cache stores, and no pickle of a large record.
    text = history_io.dumps(run_training(config, vocab_size, lines, report, words=words))
    return text, (words if counted_here else None)


# --- waiting for a training ------------------------------------------------------------------------


class TrainingResult(NamedTuple):
    """What :func:`train` returns: the history, its JSON (None in the thread backend), and the word
    counts if the worker counted them (``words`` was not given), for the page's views."""

    history: Any
    text: str | None
    words: Any


def train(key: str, config: Any, vocab_size: int, lines: Sequence[str], progress: Progress | None = None,
          words: Any = None) -> TrainingResult:
    """Train ``config`` to ``vocab_size`` on ``lines`` (word counts ``words`` if known).

    With the Dask backend the training runs as task ``key`` on a worker, which counts the words
    when ``words`` is None and sends the history back as JSON (:mod:`tokviz.history_io`); this
    call waits, passes the task's progress to ``progress`` (in this thread), and re-raises the
    task's error. If the wait is interrupted (an exception from ``progress``, e.g. Streamlit
    stopping a run), this waiter's claim on the task is dropped; the task stops once no waiter is left.
    """
    if backend() == "thread":
        from tokviz.training import run_training

        return TrainingResult(run_training(config, vocab_size, lines, progress, words=words), None, None)
    from tokviz import history_io

    dask = client()
    future = dask.submit(_training_task, key, config, int(vocab_size), tuple(lines), words, timeout_seconds(),
                         key=key, pure=False, retries=0)
    seen = None
    try:
        while True:
            try:
                text, counted = future.result(timeout=POLL_SECONDS)  # the task's error is re-raised here, message and all
            except TimeoutError:
                pass
            else:  # the task's last report reached the scheduler before its result: show it, then clear it
                state = dask.get_metadata(_progress_path(key), default=None) if progress is not None else None
                if state is not None and state != seen:
                    progress(*state)
                _forget(dask, key)
                return TrainingResult(history_io.loads(text), text, counted)
            if progress is not None:
                state = dask.get_metadata(_progress_path(key), default=None)  # None: no report yet
                if state is not None and state != seen:
                    seen = state
                    progress(*state)
    finally:
        future.release()


def _progress_path(key: str) -> list[str]:
    return ["tokviz-progress", key]


def _forget(dask: Any, key: str) -> None:
    """Clear a finished training's progress record (a later training of the same key starts at 0)."""
    dask.set_metadata(_progress_path(key), None)


def is_running(key: str) -> bool:
    """Whether the scheduler holds task ``key`` (queued or running) — for tests and the load script."""
    if backend() == "thread" or _client is None:
        return False
    keys = _client.run_on_scheduler(lambda dask_scheduler: list(dask_scheduler.tasks))
    return key in keys
