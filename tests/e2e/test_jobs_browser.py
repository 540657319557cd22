"""Real browser, tokviz.jobs: closing the tab of a session whose training runs cancels that training.

The server trains on a Dask cluster this test starts (``TOKVIZ_DASK_SCHEDULER``, as the class setup
does), so the test reads the scheduler the app uses: the training's task is there while the tab is open
and is gone, its worker executing nothing, once the tab is closed. Issue 39 asks for within 10 s; the
waits are for the scheduler's own state, polled, never a fixed sleep.
"""

from __future__ import annotations

import importlib.util
import os
import time
from pathlib import Path

import pytest

from app_driver import act, open_page

pytestmark = pytest.mark.e2e

#: The issue's bound: a training whose session goes away is cancelled within this many seconds.
CANCELLED_WITHIN_S = 10.0


def _e2e_conftest():
    spec = importlib.util.spec_from_file_location("tokviz_e2e_conftest_jobs", Path(__file__).with_name("conftest.py"))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _training_tasks(client) -> dict[str, str]:
    """The scheduler's training tasks and their states (``processing`` while a worker runs one)."""
    return client.run_on_scheduler(
        lambda dask_scheduler: {key: task.state for key, task in dask_scheduler.tasks.items() if str(key).startswith("tokviz-train-")})


def _executing(client) -> int:
    """Tasks executing on the workers; -1 while a worker is between processes."""
    try:
        return sum(client.run(lambda dask_worker: len(dask_worker.state.executing)).values())
    except OSError:
        return -1


def _wait_until(condition, seconds: float) -> float:
    """Seconds until ``condition()`` held, polling the scheduler every 0.1 s; raise after ``seconds``."""
    started = time.monotonic()
    while not condition():
        if time.monotonic() - started > seconds:
            raise AssertionError(f"not within {seconds:.0f} s")
        time.sleep(0.1)  # a poll interval, not a wait for something to happen
    return time.monotonic() - started


def test_closing_the_tab_cancels_its_training(browser, tmp_path: Path, monkeypatch) -> None:
    from distributed import Client

    from tokviz import jobs

    cluster = jobs._local_cluster(1)  # the app's lanes (small and big workers), as an external scheduler
    client = Client(cluster.scheduler_address, set_as_default=False)
    fixtures = _e2e_conftest()
    monkeypatch.setenv(jobs.SCHEDULER_ENV, cluster.scheduler_address)
    process, url = fixtures.start_server(tmp_path / "server.log")
    try:
        # 2.2 M characters of mostly distinct words: a Unigram training of a minute or more on the big lane.
        corpus = tmp_path / "distinct.txt"
        corpus.write_text("\n".join(" ".join(f"w{index * 41 + offset:x}z{index % 17}" for offset in range(40))
                                    for index in range(6000)), encoding="utf-8")
        context = browser.new_context(viewport={"width": 1280, "height": 900})
        context.set_default_timeout(int(os.environ.get("TOKVIZ_E2E_TIMEOUT_MS", "240000")))
        page = context.new_page()
        open_page(page, f"{url}/train?preset=t5&vocab=8000")
        act(page, lambda: page.locator(".st-key-corpus_file input[type=file]").set_input_files(str(corpus)))
        # The sample trained as the page opened, so the panel is folded (and drawn anew: its label names the upload).
        page.locator('[data-testid="stExpander"] summary').first.click()
        page.locator(".st-key-train button").click()  # the run that trains waits for the worker: not awaited
        _wait_until(lambda: "processing" in _training_tasks(client).values() and _executing(client) > 0, 240)
        running = [key for key, state in _training_tasks(client).items() if state == "processing"]

        closed = time.monotonic()
        context.close()  # the tab (and its websocket) goes away
        gone = _wait_until(lambda: not set(running) & set(_training_tasks(client)) and _executing(client) == 0, 60)
        seconds = time.monotonic() - closed
        print(f"\ntraining {running} cancelled {seconds:.1f} s after its tab closed (bound {CANCELLED_WITHIN_S:.0f} s)")
        assert gone <= CANCELLED_WITHIN_S, f"the training stopped {gone:.1f} s after its tab closed"
    finally:
        fixtures.stop_server(process)
        client.close()
        cluster.close()
