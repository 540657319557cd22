"""tokviz.jobs on a real Dask LocalCluster (one per module, one worker process): trainings run on the
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
    history, text, words = jobs.train(jobs.task_key("sample", repr(config), 400), config, 400, SAMPLE, lambda *report: reports.append(report))
    local = run_training(config, 400, SAMPLE)
    assert text.startswith('{"format": "tokviz-training-history"') or '"tokviz-training-history"' in text[:80]
    assert [(step.left, step.right, step.count) for step in history.merges] == [(step.left, step.right, step.count) for step in local.merges]
    assert history.model.get_vocab() == local.model.get_vocab()
    assert reports and all(done <= total for _, done, total in reports)
    assert words == count_config_words(config, SAMPLE)  # counted on the worker (none were given), sent back for the views


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
    history, text, words = jobs.train("unused", config, 300, SAMPLE)
    assert text is None and words is None and history.algorithm == "BPE"
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
    (old_pid,) = client.run(os.getpid).values()
    os.kill(old_pid, signal.SIGTERM)
    deadline = time.monotonic() + 60
    new_pids: list[int] = []
    while time.monotonic() < deadline and not (new_pids and old_pid not in new_pids):
        time.sleep(0.2)
        try:
            new_pids = list(client.run(os.getpid).values())
        except Exception:  # the worker is between processes
            new_pids = []
    assert new_pids and old_pid not in new_pids, "the nanny did not restart its worker"
    history = jobs.train(jobs.task_key("main-script-2", repr(config), 300), config, 300, SAMPLE).history
    assert history.algorithm == "BPE"  # the restarted worker trains
    assert not marker.exists()
