"""Read an uploaded file where the server can stop it: a child process with a time bound and a memory bound.

A class uploads whatever it finds, and the app serves every student from one process. Reading a file
is pure Python, and pure Python cannot be stopped from another thread: CPython's ``re`` holds the
interpreter for a whole match, and a loader's loop has no place where a deadline would be checked
on every hostile path. So the pages read each upload in a child process:

- the child is forked from a small server process that has tokviz imported already
  (multiprocessing's "forkserver": a fork costs milliseconds, never the app's threads or locks);
- the page waits at most :data:`tokviz.limits.MAX_LOAD_SECONDS`; past it the child is killed and the
  caller gets :class:`LoadTimeoutError`, a sentence naming the file and the bound;
- the child's address space may grow at most :data:`tokviz.limits.MAX_LOAD_MEMORY_MB` above what it
  started with; past it the read stops with :class:`LoadMemoryError`, and the app process never
  held the memory;
- a :class:`~tokviz.errors.TokvizError` raised in the child (a limit, a malformed file) is raised
  again in the caller with the same class and sentence; anything else is a bug and says so.

The result comes back pickled: a Tokenizer's pickle is its own state (tokenizer.json text rebuilt
with ``own=True``), so the upload checks, the growth sample and any user pattern ran in the child,
under its bounds; what the app process then builds is linear in a file the limits already bounded.

>>> call(sorted, [3, 1, 2], name="numbers")
[1, 2, 3]

``tokviz.load`` in a script does not use this (a script's user can press Ctrl-C); the pages do.
"""

from __future__ import annotations

import io
import multiprocessing
import pickle
import sys
import threading
import time
import traceback
import types
from collections.abc import Callable
from typing import Any

from tokviz.errors import LimitExceededError, TokvizError

#: Modules the fork server imports once, so a child starts with them (what reading any upload needs).
PRELOAD = ("tokviz.loaders", "tokviz.inspect", "tokviz.history_io", "tokviz.pipeline_config", "tokviz.sentencepiece.convert")

#: Uploads read at the same time (each in its own child process); more wait for a free one.
MAX_CONCURRENT_READS = 4


class LoadTimeoutError(LimitExceededError):
    """Reading an upload ran past :data:`tokviz.limits.MAX_LOAD_SECONDS` and was stopped."""


class LoadMemoryError(LimitExceededError):
    """Reading an upload needed more than :data:`tokviz.limits.MAX_LOAD_MEMORY_MB` and was stopped."""


_context_lock = threading.Lock()
_context: Any = None
_slots = threading.BoundedSemaphore(MAX_CONCURRENT_READS)


def _forkserver() -> Any:
    """The multiprocessing context whose children are forked from a server with :data:`PRELOAD` imported."""
    global _context
    with _context_lock:
        if _context is None:
            context = multiprocessing.get_context("forkserver")
            context.set_forkserver_preload(list(PRELOAD))
            _context = context
        return _context


def _virtual_bytes() -> int:
    """This process's address space (``VmSize``), in bytes; 0 where /proc is not there."""
    try:
        with open("/proc/self/status") as status:
            for line in status:
                if line.startswith("VmSize:"):
                    return int(line.split()[1]) * 1024
    except OSError:
        pass
    return 0


def _limits() -> dict[str, int | float]:
    """The server's limits as this process has them (``TOKVIZ_*`` read at import, or set since), for the child."""
    from tokviz import limits

    return {key: value for key, value in vars(limits).items() if key.isupper() and type(value) in (int, float)}


class _Pickler(pickle.Pickler):
    """Pickles a result as usual, except that a Tokenizer crosses whole: HF's pickle (its tokenizer.json) does not
    hold ``encode_special_tokens`` (a tiktoken sidecar's tokenizer sets it) nor what a reader attached to it
    (``transformers_post_processor`` of a ``.model``), so those come along and are set again."""

    def reducer_override(self, obj: Any) -> Any:
        from tokviz.tokenizer import Tokenizer

        if not isinstance(obj, Tokenizer):
            return NotImplemented
        rebuild, arguments = obj.__reduce__()[:2]
        extras = {key: value for key, value in vars(obj).items()
                  if not key.startswith("_") and key not in ("training_history", "use_fast_path")}
        extras["encode_special_tokens"] = obj.encode_special_tokens
        return _tokenizer_with, (rebuild, arguments, extras)


def _tokenizer_with(rebuild: Callable[..., Any], arguments: tuple[Any, ...], extras: dict[str, Any]) -> Any:
    tokenizer = rebuild(*arguments)
    for key, value in extras.items():
        setattr(tokenizer, key, value)
    return tokenizer


def _dumps(value: Any) -> bytes:
    buffer = io.BytesIO()
    _Pickler(buffer, protocol=pickle.HIGHEST_PROTOCOL).dump(value)
    return buffer.getvalue()


def _child(connection: Any, function: Callable[..., Any], args: tuple[Any, ...], kwargs: dict[str, Any], memory_bytes: int,
           server_limits: dict[str, int | float]) -> None:
    """Run ``function`` under the memory bound and the caller's limits, and send back ``(outcome, value)``."""
    from tokviz import limits

    vars(limits).update(server_limits)
    try:
        import resource

        if memory_bytes and _virtual_bytes():
            cap = _virtual_bytes() + memory_bytes
            resource.setrlimit(resource.RLIMIT_AS, (cap, cap))
    except (ImportError, ValueError, OSError):  # (a platform without the bound still has the time bound)
        pass
    try:
        payload: tuple[str, Any] = ("ok", _dumps(function(*args, **kwargs)))
    except TokvizError as error:
        try:
            payload = ("error", pickle.dumps(error))
            pickle.loads(payload[1])
        except Exception:  # noqa: BLE001 - an error class that does not pickle: its sentence still does
            payload = ("error", pickle.dumps(TokvizError(str(error))))
    except MemoryError:
        payload = ("memory", None)
    except BaseException:  # noqa: BLE001 - a bug: its traceback goes back, to be raised as one
        payload = ("bug", traceback.format_exc())
    try:
        connection.send(payload)
    except MemoryError:
        connection.send(("memory", None))
    finally:
        connection.close()


def call(function: Callable[..., Any], *args: Any, name: str, seconds: float | None = None,
         memory_mb: int | None = None, **kwargs: Any) -> Any:
    """``function(*args, **kwargs)`` in a child process, stopped after ``seconds`` (default
    :data:`tokviz.limits.MAX_LOAD_SECONDS`) or past ``memory_mb`` (default :data:`tokviz.limits.MAX_LOAD_MEMORY_MB`).

    ``function``, its arguments and its result must pickle. ``name`` (the file's name) leads the sentences.
    """
    from tokviz import limits

    seconds = limits.MAX_LOAD_SECONDS if seconds is None else seconds
    memory_mb = limits.MAX_LOAD_MEMORY_MB if memory_mb is None else memory_mb
    if not _slots.acquire(timeout=max(seconds, 1.0) * 3):
        raise LimitExceededError(
            f"{name} was not read: this server is reading {MAX_CONCURRENT_READS} other uploads; try again in a minute."
        )
    try:
        return _call(function, args, kwargs, name, seconds, memory_mb)
    finally:
        _slots.release()


_main_lock = threading.Lock()


def _start_without_main(process: Any) -> None:
    """Start ``process`` with no main script for multiprocessing to import in the child.

    multiprocessing makes a forkserver child import the parent's ``__main__`` by its file path, and
    Streamlit runs each page as ``__main__``: the child would run the whole page script (and an
    AppTest script, which cannot run outside its test) before reading a byte. A bare ``__main__``
    while the child starts means the child runs only what it was given. Streamlit swaps
    ``sys.modules["__main__"]`` itself for each run, so this is put back only if still ours.
    """
    with _main_lock:
        page = sys.modules.get("__main__")
        bare = types.ModuleType("__main__")
        sys.modules["__main__"] = bare
        try:
            process.start()
        finally:
            if sys.modules.get("__main__") is bare and page is not None:
                sys.modules["__main__"] = page


def _call(function: Callable[..., Any], args: tuple[Any, ...], kwargs: dict[str, Any], name: str, seconds: float,
          memory_mb: int) -> Any:
    context = _forkserver()
    receiving, sending = context.Pipe(duplex=False)
    process = context.Process(target=_child, args=(sending, function, args, kwargs, memory_mb * 1024 * 1024, _limits()), daemon=True,
                              name="tokviz-read")
    start = time.monotonic()
    _start_without_main(process)
    sending.close()  # (the child holds its end: EOF here when it dies without answering)
    try:
        if not receiving.poll(max(0.0, seconds - (time.monotonic() - start))):
            raise LoadTimeoutError(
                f"{name} took more than this server's limit of {seconds:g} second{'' if seconds == 1 else 's'} to read, so reading it was stopped "
                "(TOKVIZ_MAX_LOAD_SECONDS); the largest tokenizer files this server accepts read in under 10 seconds."
            )
        try:
            outcome, value = receiving.recv()
        except EOFError:  # killed from outside (the kernel's OOM killer, an operator): no answer
            outcome, value = "died", process.exitcode
    finally:
        receiving.close()
        if process.is_alive():
            process.kill()
        process.join(5)
    if outcome == "ok":
        return pickle.loads(value)
    if outcome == "error":
        raise pickle.loads(value)
    if outcome == "memory":
        raise LoadMemoryError(
            f"{name} needed more than this server's limit of {memory_mb:,} MB to read, so reading it was stopped "
            "(TOKVIZ_MAX_LOAD_MEMORY_MB)."
        )
    if outcome == "died":
        raise LimitExceededError(f"{name} was not read: the process reading it was stopped from outside (exit code {value}).")
    raise RuntimeError(f"Reading {name} failed in its worker process:\n{value}")


__all__ = ["LoadMemoryError", "LoadTimeoutError", "MAX_CONCURRENT_READS", "call"]
