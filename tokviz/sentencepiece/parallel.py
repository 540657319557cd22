"""Two halves of a training's work at once: the second in a forked process (sentencepiece's threads, for Python).

    >>> in_two_processes(sum, [1, 2], [3, 4])
    (3, 7)

The child gets a copy of the parent (:mod:`tokviz.forking`: nothing to import or pickle on the way in) and sends
its result back as JSON through a pipe (no pickle: nothing here unpickles bytes, trusted or not;
the result must be JSON data, e.g. a dict of str -> int counts, and tuples come back as lists). Only on Linux (macOS's system libraries are not safe to
use in a forked child, which is why Python spawns there), and not in a process that runs other
threads (a lock another thread holds stays held in the child: Streamlit's and Dask's processes
train in one process). There, or when anything goes wrong in the child, both halves run here,
one after the other: the results are the same.
"""

from __future__ import annotations

from typing import Callable, TypeVar

from tokviz.forking import ChildFailed, can_fork, fork_call

__all__ = ["in_two_processes", "can_fork"]

T = TypeVar("T")
R = TypeVar("R")


def in_two_processes(func: Callable[[T], R], first: T, second: T) -> tuple[R, R]:
    """``(func(first), func(second))``, the second computed in a forked child meanwhile."""
    child = fork_call(func, second)
    if child is None:
        return func(first), func(second)
    try:
        mine = func(first)
    finally:  # (even if it failed: read the child's answer and reap it)
        try:
            theirs = child.result()
        except ChildFailed:
            failed = True
        else:
            failed = False
    if failed:
        theirs = func(second)
    return mine, theirs
