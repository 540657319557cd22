"""Two app servers (replicas) on 127.0.0.1 share one Redis (Debian's ``redis-server``, started here on a
free port with no persistence): a training made on one is served from the cache on the other.

The second replica is given a Dask scheduler address where nothing listens, so it cannot train at all:
if it shows the trained tokenizer, the training came from Redis. The sessions speak Streamlit's
websocket protocol (the client of ``bench/bench_load.py``), no browser.
"""

from __future__ import annotations

import importlib.util
import os
import shutil
import signal
import socket
import subprocess
import time
import uuid
from pathlib import Path

import pytest
from tests._async import run_coroutine

ROOT = Path(__file__).resolve().parent.parent
pytestmark = pytest.mark.skipif(shutil.which("redis-server") is None, reason="needs Debian's redis-server (see the README's test command)")


def _load_bench():
    spec = importlib.util.spec_from_file_location("bench_load", ROOT / "bench" / "bench_load.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


@pytest.fixture(scope="module")
def redis_url(tmp_path_factory):
    port = _free_port()
    folder = tmp_path_factory.mktemp("redis")
    process = subprocess.Popen(
        ["redis-server", "--port", str(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no",
         "--dir", str(folder), "--maxmemory", "64mb", "--maxmemory-policy", "allkeys-lru"],
        stdout=(folder / "redis.log").open("w"), stderr=subprocess.STDOUT, start_new_session=True,
    )
    import redis

    client = redis.Redis(host="127.0.0.1", port=port)
    for _ in range(100):
        try:
            client.ping()
            break
        except redis.ConnectionError:
            time.sleep(0.1)
    yield f"redis://127.0.0.1:{port}/0", client
    os.killpg(process.pid, signal.SIGTERM)
    process.wait(timeout=10)


def test_a_training_made_on_one_replica_is_served_from_redis_on_the_other(redis_url, tmp_path) -> None:
    url, redis_client = redis_url
    bench = _load_bench()
    dead_scheduler = f"tcp://127.0.0.1:{_free_port()}"  # nothing listens here: replica B cannot train
    servers = []
    try:
        a = bench.start_server(ROOT, _free_port(), tmp_path / "a.log", {"TOKVIZ_REDIS_URL": url, "TOKVIZ_TRAINING_BACKEND": "thread"})
        servers.append(a)
        b = bench.start_server(ROOT, _free_port(), tmp_path / "b.log", {
            "TOKVIZ_REDIS_URL": url, "TOKVIZ_TRAINING_BACKEND": "dask", "TOKVIZ_DASK_SCHEDULER": dead_scheduler})
        servers.append(b)
        port_a, port_b = (int(server.args[server.args.index("--server.port") + 1]) for server in servers)
        corpus = "\n".join([f"A corpus only this test has: {uuid.uuid4().hex}."] + [
            f"line {index}: the quick brown fox jumps over the lazy dog {index % 37}" for index in range(300)])

        async def paste(port: int) -> list[str]:
            session = bench.Session(f"http://127.0.0.1:{port}", "preset=gpt2&vocab=400")
            await session.open()
            state = bench.WidgetState(id=session.widgets["corpus_text"][0], string_value=corpus)
            await session.rerun([state], timeout=300)  # the corpus trains as it is pasted (small), then the page reruns
            await session.rerun([state], timeout=300)
            texts = session.texts
            await session.close()
            return texts

        texts_a = run_coroutine(paste(port_a))
        trained_a = [text for text in texts_a if text.startswith("Trained BPE in")]
        assert trained_a, texts_a
        stored = sorted(redis_client.keys("tokviz:training:*"))
        assert len(stored) == 2  # the sample the page opened on, then the pasted corpus

        texts_b = run_coroutine(paste(port_b))
        trained_b = [text for text in texts_b if text.startswith("Trained BPE in")]
        assert trained_b == trained_a, texts_b  # the same record: the same training time, to the hundredth
        assert not any("scheduler" in text.lower() or "error" in text.lower() for text in texts_b), texts_b
        assert sorted(redis_client.keys("tokviz:training:*")) == stored  # replica B stored nothing new: it trained nothing
    finally:
        for server in servers:
            bench.stop_server(server)
