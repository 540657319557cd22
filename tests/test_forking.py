"""tokviz.forking: a call or a worker in a forked child, results back as JSON or bytes (never pickles)."""

from __future__ import annotations

import sys

import pytest

from tokviz.forking import ChildFailed, ForkedWorker, can_fork, finished_requests, fork_call

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="forking is used on Linux only")


def _fail(_: object) -> None:
    raise ValueError("boom")


def test_a_call_comes_back_as_json_or_bytes() -> None:
    assert can_fork(allow_threads=True)
    assert fork_call(sum, [3, 4], allow_threads=True).result() == 7
    # JSON's round trip: tuples come back as lists, dict keys as strings; lone surrogates survive
    assert fork_call(lambda x: {1: (x, "\ud800")}, "a", allow_threads=True).result() == {"1": ["a", "\ud800"]}
    assert fork_call(lambda n: b"\x00\xff" * n, 2, allow_threads=True).result() == b"\x00\xff\x00\xff"


def test_a_child_that_raises_or_sends_no_json_is_a_failure() -> None:
    with pytest.raises(ChildFailed, match="did not send its result"):
        fork_call(_fail, None, allow_threads=True).result()
    with pytest.raises(ChildFailed):
        fork_call(lambda _: object(), None, allow_threads=True).result()  # not JSON data


def test_a_worker_answers_requests_in_order_and_reports_failures() -> None:
    worker = ForkedWorker.start(lambda n: b"x" * n if n != 2 else _fail(n), allow_threads=True)
    try:
        for request in (3, 0, 2, 1):
            worker.send(request)
        answers = {}
        while worker.pending:
            for _, request, answer in finished_requests([worker], block=True):
                answers[request] = answer
        assert answers == {3: b"xxx", 0: b"", 2: None, 1: b"x"}  # None: func raised on that request
        assert finished_requests([worker], block=True) == []  # nothing pending: no wait
    finally:
        worker.close()


def test_a_killed_worker_fails_its_pending_requests() -> None:
    import time

    worker = ForkedWorker.start(lambda n: (time.sleep(n), b"done")[1], allow_threads=True)
    worker.send(30)
    worker.kill()
    assert (worker.alive, worker.pending) == (False, [])
    worker.close()
