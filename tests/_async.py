"""``asyncio.run`` for tests that may run after the browser tests in one pytest process."""

from __future__ import annotations

import asyncio
import threading
from typing import Any


def run_coroutine(coroutine: Any) -> Any:
    """``asyncio.run(coroutine)`` in a thread of its own: the browser tests' Playwright keeps an event loop
    running in the main thread for the whole session, where ``asyncio.run`` refuses to start. Exceptions
    are re-raised in the caller's thread."""
    result: dict[str, Any] = {}

    def target() -> None:
        try:
            result["value"] = asyncio.run(coroutine)
        except BaseException as error:  # noqa: BLE001 - re-raised below
            result["error"] = error

    thread = threading.Thread(target=target)
    thread.start()
    thread.join()
    if "error" in result:
        raise result["error"]
    return result["value"]
