"""Finished trainings, stored by (corpus hash, pipeline, vocab): in Redis when ``TOKVIZ_REDIS_URL`` is
set (shared by every replica of the app), in this process otherwise. Both are bounded by bytes.

What is stored is the history's JSON (:mod:`tokviz.history_io`, never a pickle), so a replica that
did not train reads the same record the training made. Sizes are the JSON's bytes: the in-process
store drops the least recently used trainings once their JSON passes ``TOKVIZ_CACHE_MAX_MB`` (and
keeps at most ``TOKVIZ_CACHE_MAX_ENTRIES``); in Redis every record expires after
``TOKVIZ_CACHE_TTL_SECONDS`` and one record may not pass ``TOKVIZ_CACHE_MAX_ITEM_MB`` — the server's
own ``maxmemory`` with ``allkeys-lru`` bounds the whole (see README, "Deploying for a class").
Each process also keeps the decoded histories it uses in a small byte-bounded in-process store, so
a slider move reads no Redis.

>>> store = MemoryStore(max_bytes=10, max_entries=4)
>>> store.put("a", "A", 6); store.put("b", "B", 6)  # 12 bytes > 10: "a" goes
>>> store.get("a"), store.get("b"), store.bytes
(None, 'B', 6)
"""

from __future__ import annotations

import hashlib
import os
import threading
from collections import OrderedDict
from typing import Any

REDIS_ENV = "TOKVIZ_REDIS_URL"
PREFIX = "tokviz:training:"


def _env_number(name: str, default: float) -> float:
    value = os.environ.get(name, "").strip()
    return float(value) if value else default


def _memory_of(history: Any) -> int:
    """The memory a decoded history holds (:func:`tokviz.history.retained_bytes`: every object it reaches,
    counted once), what the process's store is bounded by; its JSON is 3-10 times smaller."""
    from tokviz.history import retained_bytes

    return retained_bytes(history)


def max_bytes() -> int:
    """Memory of decoded histories one process keeps (``TOKVIZ_CACHE_MAX_MB``, 256 by default)."""
    return int(_env_number("TOKVIZ_CACHE_MAX_MB", 256) * 1024 * 1024)


def max_entries() -> int:
    """Trainings one process keeps (``TOKVIZ_CACHE_MAX_ENTRIES``; by default ``TOKVIZ_TRAINING_CACHE_ENTRIES``, 8)."""
    from tokviz.limits import TRAINING_CACHE_ENTRIES

    return int(_env_number("TOKVIZ_CACHE_MAX_ENTRIES", TRAINING_CACHE_ENTRIES))


def request_key(corpus_key: str, pipeline: str, vocab_size: int) -> str:
    """The store's key of a training: a digest of (corpus hash, pipeline description, target vocab)."""
    digest = hashlib.sha256(f"{corpus_key}\x00{pipeline}\x00{int(vocab_size)}".encode()).hexdigest()
    return digest[:32]


class MemoryStore:
    """Least recently used values with their sizes, bounded by total bytes and by entries. Thread-safe."""

    def __init__(self, max_bytes: int, max_entries: int) -> None:
        self.max_bytes, self.max_entries = int(max_bytes), int(max_entries)
        self._items: OrderedDict[str, tuple[Any, int]] = OrderedDict()
        self._lock = threading.Lock()
        self.bytes = 0

    def get(self, key: str) -> Any | None:
        with self._lock:
            item = self._items.get(key)
            if item is None:
                return None
            self._items.move_to_end(key)
            return item[0]

    def put(self, key: str, value: Any, size: int) -> None:
        """Keep ``value`` (``size`` bytes); a value larger than the whole budget is not kept at all."""
        with self._lock:
            if key in self._items:
                self.bytes -= self._items.pop(key)[1]
            if size > self.max_bytes:
                return
            self._items[key] = (value, int(size))
            self.bytes += int(size)
            while self._items and (self.bytes > self.max_bytes or len(self._items) > self.max_entries):
                _, (_, dropped) = self._items.popitem(last=False)
                self.bytes -= dropped

    def __len__(self) -> int:
        return len(self._items)


class RedisStore:
    """History JSON in Redis under ``tokviz:training:<key>``, each with a time to live."""

    def __init__(self, url: str) -> None:
        import redis

        self.client = redis.Redis.from_url(url, socket_timeout=10, socket_connect_timeout=5)
        self.ttl = int(_env_number("TOKVIZ_CACHE_TTL_SECONDS", 24 * 3600))
        self.max_item_bytes = int(_env_number("TOKVIZ_CACHE_MAX_ITEM_MB", 64) * 1024 * 1024)

    def get_json(self, key: str) -> str | None:
        data = self.client.get(PREFIX + key)
        return None if data is None else data.decode("utf-8")

    def put_json(self, key: str, text: str) -> bool:
        data = text.encode("utf-8")
        if len(data) > self.max_item_bytes:
            return False
        self.client.set(PREFIX + key, data, ex=self.ttl)
        return True


class TrainingStore:
    """The app's store of finished trainings: decoded histories in process, JSON in Redis if configured."""

    def __init__(self, redis_url: str | None = None) -> None:
        self.local = MemoryStore(max_bytes(), max_entries())
        self.shared = RedisStore(redis_url) if redis_url else None

    def get(self, key: str) -> Any | None:
        """The history stored under ``key``, or None (read from Redis, and decoded, at most once per process)."""
        history = self.local.get(key)
        if history is not None or self.shared is None:
            return history
        text = self.shared.get_json(key)
        if text is None:
            return None
        from tokviz import history_io

        history = history_io.loads(text)
        self.local.put(key, history, _memory_of(history))
        return history

    def put(self, key: str, history: Any, text: str | None = None, size: int | None = None) -> None:
        """Store ``history`` (``text``: its JSON, if the caller has it already; made only for Redis; ``size``:
        its :func:`~tokviz.history.retained_bytes` if known -- a training worker measures it, so the app
        process does not walk a large history's every object while other sessions wait for it)."""
        self.local.put(key, history, _memory_of(history) if size is None else size)
        if self.shared is not None:
            if text is None:
                from tokviz import history_io

                text = history_io.dumps(history)
            self.shared.put_json(key, text)

    def __contains__(self, key: str) -> bool:
        return self.get(key) is not None


_store: TrainingStore | None = None
_store_lock = threading.Lock()


def store() -> TrainingStore:
    """The process's store, made on first use from ``TOKVIZ_REDIS_URL`` (unset: in process only)."""
    global _store
    with _store_lock:
        if _store is None:
            _store = TrainingStore(os.environ.get(REDIS_ENV, "").strip() or None)
        return _store
