"""Two halves of a training's work at once: the second in a forked process (sentencepiece's threads, for Python).

    >>> in_two_processes(sum, [1, 2], [3, 4])
    (3, 7)

The child gets a copy of the parent (fork: nothing to import or pickle on the way in) and sends
its result back pickled through a pipe. Only on Linux (macOS's system libraries are not safe to
use in a forked child, which is why Python spawns there), and not in a process that runs other
threads (a lock another thread holds stays held in the child: Streamlit's and Dask's processes
train in one process). There, or when anything goes wrong in the child, both halves run here,
one after the other: the results are the same.
"""

from __future__ import annotations

import os
import pickle
import sys
import threading
from typing import Callable, TypeVar

__all__ = ["in_two_processes", "can_fork"]

T = TypeVar("T")
R = TypeVar("R")


def can_fork() -> bool:
    """Whether :func:`in_two_processes` forks here: on Linux, in the only thread."""
    return sys.platform.startswith("linux") and hasattr(os, "fork") and threading.active_count() == 1


def in_two_processes(func: Callable[[T], R], first: T, second: T) -> tuple[R, R]:
    """``(func(first), func(second))``, the second computed in a forked child meanwhile."""
    if not can_fork():
        return func(first), func(second)
    read_end, write_end = os.pipe()
    try:
        pid = os.fork()
    except OSError:
        os.close(read_end)
        os.close(write_end)
        return func(first), func(second)
    if pid == 0:  # the child: compute, send, leave at once (no cleanup of the parent's copy)
        try:
            os.close(read_end)
            try:
                data = pickle.dumps((True, func(second)), protocol=pickle.HIGHEST_PROTOCOL)
            except BaseException:
                data = pickle.dumps((False, None))
            view = memoryview(data)
            while view:
                view = view[os.write(write_end, view):]
        finally:
            os._exit(0)
    os.close(write_end)
    try:
        mine = func(first)
    finally:  # (even if it failed: read the child's answer and reap it)
        with os.fdopen(read_end, "rb") as pipe:
            data = pipe.read()
        os.waitpid(pid, 0)
    try:
        ok, theirs = pickle.loads(data)
    except Exception:
        ok, theirs = False, None
    if not ok:
        theirs = func(second)
    return mine, theirs
