"""tokviz.jobs on a real Dask LocalCluster (one per module: a small-lane and a big-lane worker process): trainings run on the
worker and equal the in-thread training, progress comes back, the same request trains once, user
errors keep their messages, and a training nobody waits for any more stops."""

from __future__ import annotations

import os
import signal
import sys
import threading
import time
import types

import pytest

from tokviz import jobs
from tokviz.errors import EmptyCorpusError, LimitExceededError, TokvizError
from tokviz.pipeline_config import PipelineConfig
from tokviz.samples import load_sample
from tokviz.training import count_config_words, run_training

SAMPLE = tuple(line for line in load_sample().splitlines() if line.strip())


@pytest.fixture(scope="module", autouse=True)
def cluster():
    saved = {name: os.environ.get(name) for name in (jobs.BACKEND_ENV, jobs.SCHEDULER_ENV, jobs.WORKERS_ENV)}
    os.environ[jobs.BACKEND_ENV] = "dask"
    os.environ.pop(jobs.SCHEDULER_ENV, None)
    os.environ[jobs.WORKERS_ENV] = "1"
    jobs.close()
    client = jobs.client()
    yield client
    jobs.close()
    for name, value in saved.items():
        if value is None:
            os.environ.pop(name, None)
        else:
            os.environ[name] = value


def test_task_key_is_deterministic_and_distinguishes_requests() -> None:
    key = jobs.task_key("c0ffee", "PipelineConfig(model='BPE')", 500)
    assert key == jobs.task_key("c0ffee", "PipelineConfig(model='BPE')", 500)
    assert key != jobs.task_key("c0ffee", "PipelineConfig(model='BPE')", 501)
    assert key != jobs.task_key("c0ffe", "ePipelineConfig(model='BPE')", 500)  # fields are separated


def test_a_training_on_the_worker_equals_the_one_in_this_thread_and_reports_progress(cluster) -> None:
    config = PipelineConfig(model="BPE")
    reports: list[tuple[str, int, int]] = []
    history, text, words, retained = jobs.train(jobs.task_key("sample", repr(config), 400), config, 400, SAMPLE,
                                                lambda *report: reports.append(report))
    local = run_training(config, 400, SAMPLE)
    assert text.startswith('{"format": "tokviz-training-history"') or '"tokviz-training-history"' in text[:80]
    assert [(step.left, step.right, step.count) for step in history.merges] == [(step.left, step.right, step.count) for step in local.merges]
    assert history.model.get_vocab() == local.model.get_vocab()
    assert reports and all(done <= total for _, done, total in reports)
    assert words == count_config_words(config, SAMPLE)  # counted on the worker (none were given), sent back for the views
    from tokviz.history import retained_bytes

    assert 0.5 < retained / retained_bytes(history) < 2  # measured on the worker, for the store's budget


def test_the_same_request_from_two_sessions_at_once_trains_once(cluster) -> None:
    config = PipelineConfig(model="WordPiece", special_tokens=("[UNK]",), unk_token="[UNK]")
    key = jobs.task_key("twice", repr(config), 600)
    results: list = []
    from distributed import get_task_stream

    with get_task_stream(client=cluster) as stream:
        threads = [threading.Thread(target=lambda: results.append(jobs.train(key, config, 600, SAMPLE)[0])) for _ in range(2)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(120)
    assert len(results) == 2 and results[0].model.get_vocab() == results[1].model.get_vocab()
    assert [record["key"] for record in stream.data].count(key) == 1


def test_user_errors_come_back_with_their_messages(cluster) -> None:
    config = PipelineConfig(model="BPE")
    with pytest.raises(EmptyCorpusError, match="The corpus is empty"):
        jobs.train(jobs.task_key("empty", repr(config), 100), config, 100, ("", "  "))
    long_word = "x" * 10_001
    with pytest.raises(LimitExceededError) as limit:
        jobs.train(jobs.task_key("long-word", repr(config), 100), config, 100, (long_word,))
    with pytest.raises(LimitExceededError) as local:
        run_training(config, 100, (long_word,))
    assert str(limit.value) == str(local.value)


def test_a_training_nobody_waits_for_stops_on_the_worker(cluster) -> None:
    # Many distinct words and a large target: a training that runs for a while on the worker.
    lines = tuple(" ".join(f"w{index * 7 + offset:x}q{index % 13}" for offset in range(40)) for index in range(4000))
    config = PipelineConfig(model="BPE")
    key = jobs.task_key("abandoned", repr(config), 60_000)
    reports: list = []

    def leave(phase: str, done: int, total: int) -> None:  # the session leaves at the first report
        reports.append((phase, done, total))
        raise KeyboardInterrupt  # what Streamlit's stop looks like to the waiting code: not a TokvizError

    with pytest.raises(KeyboardInterrupt):
        jobs.train(key, config, 60_000, lines, leave)
    assert reports
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        executing = cluster.run(lambda dask_worker: len(dask_worker.state.executing))
        if not jobs.is_running(key) and sum(executing.values()) == 0:
            break
        time.sleep(0.2)
    assert not jobs.is_running(key)
    assert sum(cluster.run(lambda dask_worker: len(dask_worker.state.executing)).values()) == 0


def test_the_backend_is_named_by_the_environment(monkeypatch) -> None:
    monkeypatch.setenv(jobs.BACKEND_ENV, "thread")
    config = PipelineConfig(model="BPE")
    history, text, words, retained = jobs.train("unused", config, 300, SAMPLE)
    assert text is None and words is None and retained is None and history.algorithm == "BPE"
    monkeypatch.setenv(jobs.BACKEND_ENV, "carrier-pigeon")
    with pytest.raises(ValueError, match="TOKVIZ_TRAINING_BACKEND must be"):
        jobs.backend()
    assert issubclass(jobs.TrainingCancelled, TokvizError)


def test_a_training_longer_than_the_bound_stops_with_a_clear_message(cluster, monkeypatch) -> None:
    # Someone waits, but the server's bound (TOKVIZ_TRAINING_TIMEOUT) is 1 s: the task stops itself.
    monkeypatch.setenv(jobs.TIMEOUT_ENV, "1")
    lines = tuple(" ".join(f"v{index * 7 + offset:x}z{index % 11}" for offset in range(40)) for index in range(4000))
    config = PipelineConfig(model="BPE")
    key = jobs.task_key("too-long", repr(config), 60_000)
    with pytest.raises(jobs.TrainingCancelled, match="longer than this server's limit of 1 s"):
        jobs.train(key, config, 60_000, lines, lambda *report: None)
    deadline = time.monotonic() + 30
    while jobs.is_running(key) and time.monotonic() < deadline:
        time.sleep(0.2)
    assert not jobs.is_running(key)
    assert sum(cluster.run(lambda dask_worker: len(dask_worker.state.executing)).values()) == 0


def test_the_workers_do_not_rerun_the_callers_main_script(tmp_path, monkeypatch) -> None:
    # Under Streamlit, __main__ is the app script (no __spec__, a __file__): multiprocessing's spawn
    # would re-run it in every worker process as the embedded cluster starts.
    marker = tmp_path / "ran"
    script = tmp_path / "app_script.py"
    script.write_text(f"open({str(marker)!r}, 'w').write('the worker ran the app script')\n")
    fake = types.ModuleType("__main__")
    fake.__file__ = str(script)
    jobs.close()
    monkeypatch.setitem(sys.modules, "__main__", fake)
    config = PipelineConfig(model="BPE")
    history = jobs.train(jobs.task_key("main-script", repr(config), 300), config, 300, SAMPLE).history
    assert history.algorithm == "BPE"  # a worker started and trained
    assert sys.modules["__main__"] is fake  # given back
    assert not marker.exists()
    # The server's SIGTERM reaches its worker process too, and the nanny starts a new worker while the
    # server shuts down: that restart must not run the app script either.
    client = jobs.client()
    old_pids = set(client.run(os.getpid).values())  # the small lane's worker and the big lane's
    for old_pid in old_pids:
        os.kill(old_pid, signal.SIGTERM)
    deadline = time.monotonic() + 60
    new_pids: set[int] = set()
    while time.monotonic() < deadline and not (len(new_pids) == len(old_pids) and not new_pids & old_pids):
        time.sleep(0.2)
        try:
            new_pids = set(client.run(os.getpid).values())
        except Exception:  # the worker is between processes
            new_pids = set()
    assert len(new_pids) == len(old_pids) and not new_pids & old_pids, "the nanny did not restart its workers"
    history = jobs.train(jobs.task_key("main-script-2", repr(config), 300), config, 300, SAMPLE).history
    assert history.algorithm == "BPE"  # the restarted worker trains
    assert not marker.exists()


# --- a shared server: lanes, one training per session, sessions that leave, memory -----------------------

def _big_corpus(tag: str, lines: int = 6000) -> tuple[str, ...]:
    """Over SMALL_TRAINING_CHARS, with many distinct words: a training that runs for a while on the big lane."""
    return tuple(" ".join(f"{tag}{index * 7 + offset:x}q{index % 13}" for offset in range(40)) for index in range(lines))


def _wait_until(condition, seconds: float) -> float:
    """Seconds until ``condition()`` held (polled every 0.1 s), or raise after ``seconds``."""
    started = time.monotonic()
    while not condition():
        if time.monotonic() - started > seconds:
            raise AssertionError(f"not within {seconds} s")
        time.sleep(0.1)
    return time.monotonic() - started


def _executing(_cluster=None) -> int:
    """Tasks executing on the workers (of the process's client: an earlier test may have made a new one);
    -1 while a worker is between processes."""
    try:
        return sum(jobs.client().run(lambda dask_worker: len(dask_worker.state.executing)).values())
    except OSError:  # CommClosedError: a worker process just ended
        return -1


def test_a_sample_training_runs_while_another_session_s_big_training_runs(cluster) -> None:
    """Two sessions: A's big training (big lane) is running when B asks for a sample training (small lane);
    B's finishes while A's still runs. Before the lanes, B waited for A (150 s and more)."""
    big = _big_corpus("a")
    assert jobs.lane_for(sum(map(len, big))) == "big" and jobs.lane_for(sum(map(len, SAMPLE))) == "small"
    config = PipelineConfig(model="BPE")
    big_key = jobs.task_key("session-a", repr(config), 60_000)
    started = threading.Event()
    outcome: list = []

    def session_a() -> None:
        try:
            jobs.train(big_key, config, 60_000, big, lambda *report: started.set(), owner="session-a", wanted=lambda: not stop.is_set())
        except BaseException as error:  # noqa: BLE001 - the test ends A's wait below
            outcome.append(error)

    stop = threading.Event()
    thread = threading.Thread(target=session_a)
    thread.start()
    try:
        assert started.wait(120), "A's training did not start"
        small = PipelineConfig(model="WordPiece", special_tokens=("[UNK]",), unk_token="[UNK]")
        history = jobs.train(jobs.task_key("session-b", repr(small), 500), small, 500, SAMPLE, owner="session-b").history
        assert history.algorithm == "WordPiece"
        assert jobs.is_running(big_key)  # B was served while A's training went on
    finally:
        stop.set()
        thread.join(60)
    assert outcome and isinstance(outcome[0], jobs.TrainingCancelled) and "has gone" in str(outcome[0])
    _wait_until(lambda: not jobs.is_running(big_key) and _executing(cluster) == 0, 30)


def test_a_session_holds_one_training_its_newer_one_replaces_the_older(cluster) -> None:
    config = PipelineConfig(model="BPE")
    old_key = jobs.task_key("replaced", repr(config), 60_000)
    started = threading.Event()
    outcome: list = []

    def first() -> None:
        try:
            jobs.train(old_key, config, 60_000, _big_corpus("r"), lambda *report: started.set(), owner="session-c")
        except BaseException as error:  # noqa: BLE001
            outcome.append(error)

    thread = threading.Thread(target=first)
    thread.start()
    assert started.wait(120)
    jobs.train(jobs.task_key("replacing", repr(config), 400), config, 400, SAMPLE, owner="session-c")
    thread.join(60)
    assert outcome and isinstance(outcome[0], jobs.TrainingCancelled) and "started another training" in str(outcome[0])
    _wait_until(lambda: not jobs.is_running(old_key) and _executing(cluster) == 0, 30)


def test_a_training_whose_session_left_stops_within_10_s(cluster) -> None:
    config = PipelineConfig(model="BPE")
    key = jobs.task_key("gone", repr(config), 60_000)
    left = time.monotonic()
    with pytest.raises(jobs.TrainingCancelled, match="has gone"):
        jobs.train(key, config, 60_000, _big_corpus("g"), owner="session-d", wanted=lambda: False)
    _wait_until(lambda: _executing(cluster) == 0, 30)
    stopped_after = time.monotonic() - left
    assert not jobs.is_running(key)
    print(f"stopped {stopped_after:.1f} s after its session left")
    assert stopped_after < 10 + 5  # 10 s asked; 5 s of slack for this loaded test machine


def _sleep_without_reports(seconds: float) -> str:
    time.sleep(seconds)
    return "done"


def test_a_cancelled_task_that_never_reports_has_its_worker_restarted(cluster) -> None:
    """A phase without progress reports never sees its cancellation: the worker process is restarted
    REAP_SECONDS after the scheduler let the task go, and the lane trains again."""
    key = "tokviz-train-silent-phase"
    _wait_until(lambda: not jobs._abandoned_at, 30)  # earlier tests' given-up trainings are settled (no restart pending)
    _wait_until(lambda: len(jobs.client().scheduler_info()["workers"]) == 2 and _executing() == 0, 60)
    future = jobs.client().submit(_sleep_without_reports, 300, key=key, pure=False, resources={"big": 1})
    _wait_until(lambda: _executing(cluster) == 1, 60)
    before = set(jobs.client().run(os.getpid).values())
    left = time.monotonic()
    future.release()
    jobs._abandoned(key)
    _wait_until(lambda: _executing(cluster) == 0, 30)
    print(f"worker freed {time.monotonic() - left:.1f} s after the task was given up")
    _wait_until(lambda: len(jobs.client().scheduler_info()["workers"]) == 2, 60)
    assert set(jobs.client().run(os.getpid).values()) != before  # the big lane's process was restarted
    config = PipelineConfig(model="BPE")
    assert jobs.train(jobs.task_key("after-silent", repr(config), 300), config, 300, _big_corpus("s", 3000)).history.algorithm == "BPE"


def test_a_training_past_its_memory_bound_is_stopped_with_a_sentence(monkeypatch) -> None:
    """The big lane's worker may hold TOKVIZ_TRAINING_MEMORY_MB; a Unigram training on ~3.3 M characters of
    distinct text peaks at about 550 MB (in a bare process), so the nanny stops it past 400 MB and the waiter is
    told why (the task is not run again)."""
    monkeypatch.setenv(jobs.MEMORY_ENV, "400")
    jobs.close()
    try:
        config = PipelineConfig(model="Unigram", special_tokens=("<unk>",), unk_token="<unk>")
        lines = tuple(" ".join(f"{index * 31 + offset:x}{chr(0x4E00 + (index * 7 + offset) % 2000)}" for offset in range(30))
                      for index in range(16000))
        with pytest.raises(jobs.TrainingMemoryError, match=r"more memory than this server gives one training \(400 MB, TOKVIZ_TRAINING_MEMORY_MB\)"):
            jobs.train(jobs.task_key("too-big", repr(config), 8000), config, 8000, lines)
    finally:
        jobs.close()


def test_a_returned_history_is_decoded_off_the_waiting_thread(monkeypatch):
    # Issue 39: taking in a history must not hold the page's script thread; it waits, and can stop waiting.
    from tokviz import history_io

    seen = []
    release = threading.Event()

    def loads(text, *args, from_worker=False, **kwargs):
        seen.append((threading.current_thread().name, text, from_worker))
        release.wait(5)
        return "history of " + text

    monkeypatch.setattr(history_io, "loads", loads)
    release.set()
    assert jobs._take_in("k1", "{}", threading.Event(), None) == "history of {}"
    assert seen[0][0].startswith("tokviz-take-in") and seen[0][1:] == ("{}", True)
    release.clear()
    replaced = threading.Event()
    replaced.set()
    with pytest.raises(jobs.TrainingCancelled, match="replaces this one"):
        jobs._take_in("k2", "[]", replaced, None)
    with pytest.raises(jobs.TrainingCancelled, match="has gone"):
        jobs._take_in("k3", "[1]", threading.Event(), lambda: False)
    release.set()
