"""Work in a forked child, its result sent back as JSON: the second core for pure Python.

    >>> call = fork_call(sum, [3, 4])
    >>> call.result() if call is not None else sum([3, 4])
    7

The child is a copy of this process (fork: nothing is imported or pickled on the way in; it
starts from the caller's tokenizer and word caches as they are). It sends its result back
through a pipe as JSON, not pickle: nothing here unpickles bytes, trusted or not. So a result
must be JSON data (tuples come back as lists, dict keys as strings; lone surrogates survive),
or ``bytes``, which come back as they are.

Only on Linux: macOS's system libraries are not safe to use in a forked child, which is why
Python spawns there. A process that runs other threads is refused unless the caller allows it
(a lock another thread holds stays held in the child; Streamlit's and Dask's processes run
trainings in one process). :func:`fork_call` gives ``None`` where it cannot fork, and
:meth:`ForkedCall.result` raises :class:`ChildFailed` when the child did not answer: the
caller then computes the same thing itself.
"""

from __future__ import annotations

import gc
import json
import os
import select
import signal
import struct
import sys
import threading
from typing import Any, Callable, Iterable

__all__ = ["ChildFailed", "ForkedCall", "ForkedWorker", "can_fork", "fork_call", "finished_requests"]


class ChildFailed(RuntimeError):
    """The forked child raised, died or sent something that is not its answer."""


def can_fork(allow_threads: bool = False) -> bool:
    """Whether :func:`fork_call` forks here: on Linux, in the only thread unless ``allow_threads``."""
    return sys.platform.startswith("linux") and hasattr(os, "fork") and (allow_threads or threading.active_count() == 1)


class ForkedCall:
    """A call running in a forked child; :meth:`result` waits for it (once)."""

    def __init__(self, pid: int, read_end: int) -> None:
        self._pid = pid
        self._read_end = read_end

    def result(self) -> Any:
        """The child's return value (JSON round-tripped); :class:`ChildFailed` if it has none."""
        with os.fdopen(self._read_end, "rb") as pipe:
            data = pipe.read()
        os.waitpid(self._pid, 0)
        if data[:1] == b"B":
            return data[1:]
        if data[:1] == b"J":
            try:
                return json.loads(data[1:])
            except ValueError:
                pass
        raise ChildFailed("the forked child did not send its result")


def fork_call(func: Callable[[Any], Any], argument: Any, allow_threads: bool = False) -> ForkedCall | None:
    """Start ``func(argument)`` in a forked child, or ``None`` when this process cannot fork."""
    if not can_fork(allow_threads):
        return None
    read_end, write_end = _pipe()
    try:
        pid = os.fork()
    except OSError:
        os.close(read_end)
        os.close(write_end)
        return None
    if pid == 0:  # the child: compute, send, leave at once (no cleanup of the parent's copy)
        try:
            _close_other_workers_ends()
            os.close(read_end)
            # The child lives for one call: a collection pass would only touch (and so copy)
            # the parent's pages.
            gc.disable()
            try:
                value = func(argument)
                data = b"B" + value if isinstance(value, bytes) else b"J" + json.dumps(value).encode()
            except BaseException:
                data = b"!"
            view = memoryview(data)
            while view:
                view = view[os.write(write_end, view) :]
        finally:
            os._exit(0)
    os.close(write_end)
    return ForkedCall(pid, read_end)


def _pipe() -> tuple[int, int]:
    read_end, write_end = os.pipe()
    try:  # (a pipe of 1 MiB rather than 64 KiB: a large answer crosses in fewer turns)
        import fcntl

        fcntl.fcntl(write_end, getattr(fcntl, "F_SETPIPE_SZ", 1031), 1 << 20)
    except (ImportError, OSError):
        pass
    return read_end, write_end


#: This process's ends of its workers' pipes. A child forked later closes its copies at once:
#: else a worker would not see the end of its requests while a sibling holds their pipe open.
_WORKER_ENDS: set[int] = set()


def _close_other_workers_ends() -> None:
    for end in list(_WORKER_ENDS):
        try:
            os.close(end)
        except OSError:
            pass
    _WORKER_ENDS.clear()


_REQUEST = struct.Struct("<q")
_HEADER = struct.Struct("<qq")  # an answer: (request, length of the bytes that follow, or -1: it failed)


class ForkedWorker:
    """A forked child that answers requests until closed: ``func(request) -> bytes`` for each
    int request :meth:`send` gives it, in order. The answers come back through
    :func:`finished_requests`, so that one process can hand out work to several workers and
    do its own share between their answers.

    >>> worker = ForkedWorker.start(lambda n: b"x" * n, allow_threads=True)
    >>> worker.send(3); worker.send(0)
    >>> sorted(answer for _, _, answer in finished_requests([worker], block=True) + finished_requests([worker], block=True))
    [b'', b'xxx']
    >>> worker.close()
    """

    def __init__(self, pid: int, requests: int, answers: int) -> None:
        self._pid = pid
        self._requests = requests
        self._answers = answers
        self._buffer = bytearray()
        self.pending: list[int] = []  # requests sent and not answered, oldest first
        self.alive = True

    @classmethod
    def start(cls, func: Callable[[int], bytes], allow_threads: bool = False) -> ForkedWorker | None:
        """Fork a worker, or ``None`` when this process cannot fork."""
        if not can_fork(allow_threads):
            return None
        requests_read, requests_write = os.pipe()
        answers_read, answers_write = _pipe()
        try:
            pid = os.fork()
        except OSError:
            for end in (requests_read, requests_write, answers_read, answers_write):
                os.close(end)
            return None
        if pid == 0:  # the child: answer until the requests pipe closes, then leave at once
            try:
                _close_other_workers_ends()
                os.close(requests_write)
                os.close(answers_read)
                gc.disable()  # (one batch's life: a collection would only copy the parent's pages)
                _serve(func, requests_read, answers_write)
            finally:
                os._exit(0)
        os.close(requests_read)
        os.close(answers_write)
        os.set_blocking(answers_read, False)
        _WORKER_ENDS.update((requests_write, answers_read))
        return cls(pid, requests_write, answers_read)

    def send(self, request: int) -> None:
        self.pending.append(request)
        try:
            os.write(self._requests, _REQUEST.pack(request))
        except OSError:  # (it died: the request fails with the others it had)
            self.alive = False

    def fileno(self) -> int:
        return self._answers

    def _read(self) -> list[tuple[int, bytes | None]]:
        """The answers complete so far (non-blocking); at the end of the pipe, a failure
        (``None``) for each request still pending."""
        while True:
            try:
                data = os.read(self._answers, 1 << 20)
            except BlockingIOError:
                break
            if not data:
                self.alive = False
                break
            self._buffer += data
        answers = []
        while len(self._buffer) >= _HEADER.size:
            request, length = _HEADER.unpack_from(self._buffer)
            end = _HEADER.size + max(length, 0)
            if len(self._buffer) < end:
                break
            answers.append((request, bytes(self._buffer[_HEADER.size : end]) if length >= 0 else None))
            del self._buffer[:end]
            self.pending.remove(request)
        if not self.alive:
            answers += [(request, None) for request in self.pending]
            self.pending = []
        return answers

    def kill(self) -> None:
        """Stop the worker now, whatever it is doing (its pending answers are dropped)."""
        try:
            os.kill(self._pid, signal.SIGKILL)
        except OSError:
            pass
        self.alive = False
        self.pending = []

    def close(self) -> None:
        """Stop the worker (it leaves when it has read every request) and reap it."""
        for end in (self._requests, self._answers):
            _WORKER_ENDS.discard(end)
            try:
                os.close(end)
            except OSError:
                pass
        os.waitpid(self._pid, 0)


def finished_requests(workers: Iterable[ForkedWorker], block: bool) -> Iterable[tuple[ForkedWorker, int, bytes | None]]:
    """``(worker, request, answer)`` for each answer that has arrived (``None``: that request
    failed, or its worker died). With ``block``, waits until there is at least one, unless no
    worker has requests pending."""
    workers = [worker for worker in workers if worker.pending]
    while workers:
        if block:
            select.select(workers, [], [])
        found = [(worker, request, answer) for worker in workers for request, answer in worker._read()]
        if found or not block:
            return found
    return []


def _serve(func: Callable[[int], bytes], requests: int, answers: int) -> None:
    with os.fdopen(requests, "rb") as pipe:
        while True:
            data = pipe.read(_REQUEST.size)
            if len(data) < _REQUEST.size:
                return
            (request,) = _REQUEST.unpack(data)
            try:
                answer: bytes | None = func(request)
            except Exception:
                answer = None
            header = _HEADER.pack(request, len(answer) if answer is not None else -1)
            view = memoryview(header + answer if answer is not None else header)
            while view:
                view = view[os.write(answers, view) :]
