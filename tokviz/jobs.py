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

A shared server, one class (issue: "one student cannot take over"):

- Two lanes: a training of a corpus up to :data:`SMALL_TRAINING_CHARS` (the sample, a pasted page)
  runs on the *small* lane, a larger one on the *big* lane, each its own worker process (Dask
  resources ``small`` / ``big``), so a sample training starts at once however long another
  student's 20 M-character training takes. Within a lane the scheduler serves trainings in order.
- One training per session (``owner``): a session's newer training replaces its older one, whose
  wait stops (and whose task stops unless another session waits for it too).
- ``wanted``: the caller says whether its session is still there; a waiter whose session went away
  stops waiting, and its task is cancelled. A task that does not stop by itself within
  :data:`REAP_SECONDS` (a phase that reports no progress) has its worker process restarted.
- Each worker process is bounded by ``TOKVIZ_TRAINING_MEMORY_MB``; a training past it is stopped and
  its waiters get :class:`TrainingMemoryError`, a sentence naming the bound, instead of the machine
  swapping for everyone.

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
MEMORY_ENV = "TOKVIZ_TRAINING_MEMORY_MB"

#: Corpora up to this many characters train on the small lane (the live-training size: the sample,
#: a pasted page; such a training takes about a second), larger ones on the big lane.
SMALL_TRAINING_CHARS = 100_000
#: The memory of the small lane's worker process (the big lane's is ``TOKVIZ_TRAINING_MEMORY_MB``).
SMALL_LANE_MEMORY_MB = 1024
#: How long a cancelled task may keep its worker busy before the worker process is restarted (seconds);
#: with the session check's grace (:data:`GONE_GRACE_SECONDS`) a training stops within 10 s of its
#: session going away.
REAP_SECONDS = 4.0
#: How long a session may be disconnected (a reload reconnects within a second or two) before its
#: waiting training is given up (seconds).
GONE_GRACE_SECONDS = 3.0

#: How often a waiter reads the task's progress (seconds).
POLL_SECONDS = 0.25


class TrainingCancelled(TokvizError):
    """A training stopped because nobody waited for it any more, or it ran past the server's time bound."""


class TrainingMemoryError(TokvizError):
    """A training needed more memory than a worker may hold (``TOKVIZ_TRAINING_MEMORY_MB``)."""


def memory_limit_mb() -> int:
    """The memory of a big-lane worker process, in MB (``TOKVIZ_TRAINING_MEMORY_MB``, 4,096 by default:
    a 20 M-character training of distinct words needs up to about 3 GB; the machine has 24 GB)."""
    return int(os.environ.get(MEMORY_ENV, "4096"))


def lane_for(chars: int) -> str:
    """``"small"`` for a corpus of up to :data:`SMALL_TRAINING_CHARS` characters, else ``"big"``.

    >>> lane_for(20_000), lane_for(20_000_000)
    ('small', 'big')
    """
    return "small" if chars <= SMALL_TRAINING_CHARS else "big"


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
            _client.wait_for_workers(len(_cluster.worker_spec), timeout=120)
        return _client


_lanes_checked: dict[str, Any] = {"at": 0.0, "lanes": frozenset()}


def _lanes(dask: Any) -> frozenset[str]:
    """The lanes the cluster's workers offer (their ``small`` / ``big`` resources; read every 30 s). A
    scheduler whose workers declare none (started without ``--resources``) gets trainings unrestricted."""
    now = time.monotonic()
    if now - _lanes_checked["at"] > 30 or not _lanes_checked["lanes"]:
        try:
            workers = dask.scheduler_info(n_workers=-1).get("workers", {}) if _cluster is None else None
        except TypeError:  # an older distributed: every worker is listed anyway
            workers = dask.scheduler_info().get("workers", {})
        if workers is None:  # the embedded cluster: its workers are ours
            lanes = frozenset(("small", "big"))
        else:
            lanes = frozenset(lane for info in workers.values() for lane in (info.get("resources") or {}) if lane in ("small", "big"))
        _lanes_checked.update(at=now, lanes=lanes)
    return _lanes_checked["lanes"]


def _local_cluster(workers: int) -> Any:
    """The embedded LocalCluster: worker processes, one thread each (a training holds the GIL for its
    whole run, so it must not share a process with the app's page threads or another training):
    one small-lane worker and ``workers`` big-lane ones, each with its lane as a Dask resource and
    its memory bound (the nanny stops a worker past it).

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
        cluster = LocalCluster(n_workers=0, threads_per_worker=1, processes=True, dashboard_address=None, host="127.0.0.1",
                               worker_class=_nanny_class())
        template = cluster.new_spec
        lanes = [("small", SMALL_LANE_MEMORY_MB)] + [("big", memory_limit_mb())] * max(1, workers)
        for number, (lane, memory) in enumerate(lanes):
            options = {**template["options"], "resources": {lane: 1}, "memory_limit": f"{memory}MiB", "name": f"tokviz-{lane}-{number}"}
            cluster.worker_spec[f"tokviz-{lane}-{number}"] = {"cls": template["cls"], "options": options}
        cluster.sync(cluster._correct_state)
        return cluster


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
    # A training that outgrows its worker's memory is stopped and said so, never run again elsewhere.
    "distributed.scheduler.allowed-failures": 0,
    "distributed.worker.memory.target": False,
    "distributed.worker.memory.spill": False,
    "distributed.worker.memory.pause": False,
    "distributed.worker.memory.terminate": 0.95,
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
    # The history goes back as its JSON: the form the shared cache stores, and no pickle of a large record;
    # with it the memory it holds once decoded, measured here so that the app process need not.
    from tokviz.history import retained_bytes

    history = run_training(config, vocab_size, lines, report, words=words)
    return history_io.dumps(history), (words if counted_here else None), retained_bytes(history)


# --- waiting for a training ------------------------------------------------------------------------


class TrainingResult(NamedTuple):
    """What :func:`train` returns: the history, its JSON (None in the thread backend), and the word
    counts if the worker counted them (``words`` was not given), for the page's views."""

    history: Any
    text: str | None
    words: Any
    retained: int | None = None  # tokviz.history.retained_bytes(history), measured on the worker


def train(key: str, config: Any, vocab_size: int, lines: Sequence[str], progress: Progress | None = None,
          words: Any = None, *, owner: str | None = None, wanted: Callable[[], bool] | None = None) -> TrainingResult:
    """Train ``config`` to ``vocab_size`` on ``lines`` (word counts ``words`` if known).

    With the Dask backend the training runs as task ``key`` on a worker of its lane (:func:`lane_for`),
    which counts the words when ``words`` is None and sends the history back as JSON
    (:mod:`tokviz.history_io`); this call waits, passes the task's progress to ``progress`` (in this
    thread), and re-raises the task's error. ``owner`` (a session) holds one training at a time: a
    newer call of the same owner ends this wait. ``wanted()`` False (the session went away) ends it
    too. However the wait ends early (also an exception from ``progress``, e.g. Streamlit stopping a
    run), this waiter's claim on the task is dropped; the task stops once no waiter is left.
    """
    if backend() == "thread":
        from tokviz.training import run_training

        return TrainingResult(run_training(config, vocab_size, lines, progress, words=words), None, None)

    dask = client()
    lane = lane_for(sum(map(len, lines)))
    resources = {lane: 1} if lane in _lanes(dask) else None
    replaced = _claim(owner)

    def submit() -> Any:
        return dask.submit(_training_task, key, config, int(vocab_size), tuple(lines), words, timeout_seconds(),
                           key=key, pure=False, retries=0, resources=resources)

    future = submit()
    resubmits = 0
    seen = None
    finished = False
    gone_since: float | None = None
    try:
        while True:
            if future.cancelled():
                # Cancelled while this waiter still waits: a lane's worker was restarted under it (distributed's
                # result() would then fail inside the library). Submit it again, a bounded number of times.
                if resubmits >= 2:
                    finished = True
                    raise TrainingCancelled("The server restarted the worker this training ran on; press Train to train again.")
                resubmits += 1
                future = submit()
                continue
            try:
                text, counted, retained = future.result(timeout=POLL_SECONDS)  # the task's error is re-raised here, message and all
            except TimeoutError:
                pass
            except Exception as error:
                if type(error).__name__ == "KilledWorker":  # the nanny stopped it past its memory bound
                    finished = True
                    raise TrainingMemoryError(
                        f"This training needed more memory than this server gives one training "
                        f"({memory_limit_mb() if lane == 'big' else SMALL_LANE_MEMORY_MB:,} MB, {MEMORY_ENV}) and was stopped; "
                        "train on a smaller corpus or to a smaller vocab size.") from None
                finished = True
                raise
            else:  # the task's last report reached the scheduler before its result: show it, then clear it
                finished = True
                state = dask.get_metadata(_progress_path(key), default=None) if progress is not None else None
                if state is not None and state != seen:
                    progress(*state)
                _forget(dask, key)
                return TrainingResult(_take_in(key, text, replaced, wanted), text, counted, retained)
            if replaced.is_set():
                raise TrainingCancelled("This session started another training, which replaces this one.")
            if wanted is not None and not wanted():
                gone_since = gone_since or time.monotonic()
                if time.monotonic() - gone_since >= GONE_GRACE_SECONDS:
                    raise TrainingCancelled("The session that asked for this training has gone.")
            else:
                gone_since = None
            if progress is not None:
                state = dask.get_metadata(_progress_path(key), default=None)  # None: no report yet
                if state is not None and state != seen:
                    seen = state
                    progress(*state)
    finally:
        future.release()
        _release(owner, replaced)
        if not finished:
            _abandoned(key)


# --- one training per session ---------------------------------------------------------------------------

_owners_lock = threading.Lock()
_owners: dict[str, threading.Event] = {}


def _claim(owner: str | None) -> threading.Event:
    """Make this wait the owner's one training: the owner's earlier wait, if any, is told to stop."""
    mine = threading.Event()
    if owner is not None:
        with _owners_lock:
            earlier = _owners.get(owner)
            if earlier is not None:
                earlier.set()
            _owners[owner] = mine
    return mine


def _release(owner: str | None, mine: threading.Event) -> None:
    if owner is not None:
        with _owners_lock:
            if _owners.get(owner) is mine:
                del _owners[owner]


# --- decoding a returned history once per process ------------------------------------------------------

_decoding_lock = threading.Lock()
_decoding: dict[str, tuple[threading.Event, list[Any]]] = {}


_take_in_lock = threading.Lock()
_take_in_pool: Any = None


def _take_in(key: str, text: str, replaced: threading.Event, wanted: Callable[[], bool] | None) -> Any:
    """The history of ``text``, decoded off the script thread (one thread of this process decodes, one
    history at a time): the page's thread only waits, and stops waiting as it stops waiting for the
    training (a newer training of the session, the session gone). A decode nobody waits for any more
    finishes and is dropped."""
    global _take_in_pool
    from concurrent.futures import ThreadPoolExecutor, TimeoutError as WaitTimeout

    with _take_in_lock:
        if _take_in_pool is None:
            _take_in_pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix="tokviz-take-in")
        decoding = _take_in_pool.submit(_decode_once, key, text)
    while True:
        try:
            return decoding.result(timeout=POLL_SECONDS)
        except WaitTimeout:
            pass
        if replaced.is_set():
            raise TrainingCancelled("This session started another training, which replaces this one.")
        if wanted is not None and not wanted():
            raise TrainingCancelled("The session that asked for this training has gone.")


def _decode_once(key: str, text: str) -> Any:
    """The history of ``text``: sessions of this process waiting for the same training decode it once
    (the others take that record; it is immutable) instead of each paying for it."""
    from tokviz import history_io

    with _decoding_lock:
        entry = _decoding.get(key)
        first = entry is None
        if first:
            entry = _decoding[key] = (threading.Event(), [])
    done, box = entry
    if first:
        try:
            box.append(history_io.loads(text, from_worker=True))
        except BaseException as error:
            box.append(error)
        finally:
            done.set()
            with _decoding_lock:
                _decoding.pop(key, None)
    else:
        done.wait()
    if isinstance(box[0], BaseException):
        raise box[0]
    return box[0]


# --- cancelled tasks that keep their worker busy --------------------------------------------------------

_reaper_lock = threading.Lock()
_abandoned_at: dict[str, float] = {}
_reaper: threading.Thread | None = None


def _abandoned(key: str) -> None:
    """A waiter gave ``key`` up. If the scheduler released the task but its worker is still running it
    (a phase without progress reports never looks at the cancellation), the worker process is ended
    after :data:`REAP_SECONDS` and its nanny starts a new one: the lane is free again and nothing else
    of that worker is lost (one thread, one training). A task another waiter still wants is not cancelled and is left alone."""
    global _reaper
    with _reaper_lock:
        _abandoned_at[key] = time.monotonic()
        if _reaper is None or not _reaper.is_alive():
            _reaper = threading.Thread(target=_reap, name="tokviz-training-reaper", daemon=True)
            _reaper.start()


def _reap() -> None:
    while True:
        time.sleep(1.0)
        with _reaper_lock:
            if not _abandoned_at:
                return
            pending = dict(_abandoned_at)
        dask = _client
        if dask is None:
            with _reaper_lock:
                _abandoned_at.clear()
            return
        try:
            running = dask.run(_cancelled_tasks)  # {worker address: [keys it runs that nobody wants]}
        except Exception:  # noqa: BLE001 - a worker between processes: look again in a second
            continue
        now = time.monotonic()
        stuck = [address for address, keys in running.items() if any(now - pending.get(key, now) >= REAP_SECONDS for key in keys)]
        busy = {key for keys in running.values() for key in keys}
        with _reaper_lock:
            for key in list(_abandoned_at):
                if key not in busy or now - _abandoned_at[key] > 10 * REAP_SECONDS:
                    _abandoned_at.pop(key, None)
        if stuck:  # its nanny starts a new worker process at once (a graceful restart would wait for the training)
            try:
                dask.run(_end_worker_process, workers=stuck, wait=False)
            except Exception:  # noqa: BLE001 - gone already; look again
                pass


async def _end_worker_process() -> None:  # async: Client.run can send it without waiting for an answer
    os._exit(1)


def _cancelled_tasks(dask_worker: Any) -> list[str]:
    """The training tasks this worker still runs although the scheduler released them."""
    return [str(key) for key, state in dask_worker.state.tasks.items()
            if str(key).startswith("tokviz-train-") and state.state == "cancelled"]


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
