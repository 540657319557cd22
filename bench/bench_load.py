"""Load on the Train page at the websocket level: N sessions moving their vocab sliders, with and
without one session training a big corpus meanwhile. No browsers: each session speaks Streamlit's
``/_stcore/stream`` protocol (``streamlit.proto`` BackMsg / ForwardMsg) as the browser does.

For each scenario the script starts a fresh ``streamlit run app.py`` from ``--app-dir`` on 127.0.0.1
(so "before" is ``--app-dir /work/main`` as it was, "after" this worktree), opens N Train pages on the
built-in sample, and has each move its slider to a random size every 1-4 s for ``--seconds``. A move
is timed from the BackMsg to the ForwardMsg ``script_finished`` of the run it started (a whole-page
run, or only the fragment when the slider lives in one; the browser sends the slider's fragment id
exactly so). It prints p50 / p95 / max of a move and the server process's CPU seconds divided by
the moves (user + system time from ``/proc``; the Dask worker processes, which are separate
processes, are reported apart).

With ``--train unigram`` or ``--train wordpiece`` one more session pastes ``--train-chars``
characters (the shared corpora repeated) and trains at ``--train-vocab`` (the T5-like or BERT-like
preset); the slider sessions start moving once that training has started and the scenario ends
after ``--seconds`` whether or not the training finished (bounded: nothing outlives the script).

    python3 bench/bench_load.py --app-dir /work/main --port 8630 --sessions 8 30 --train none unigram wordpiece
"""

from __future__ import annotations

import argparse
import asyncio
import os
import random
import signal
import statistics
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import websockets
from streamlit.proto.BackMsg_pb2 import BackMsg
from streamlit.proto.ForwardMsg_pb2 import ForwardMsg
from streamlit.proto.WidgetStates_pb2 import WidgetState

CORPORA = Path(__file__).resolve().parent.parent.parent / "shared" / "corpora"  # ../shared beside the project
TICKS = os.sysconf("SC_CLK_TCK")
FINISHED = {ForwardMsg.FINISHED_SUCCESSFULLY, ForwardMsg.FINISHED_FRAGMENT_RUN_SUCCESSFULLY}


def cpu_seconds(pid: int) -> float:
    """User + system CPU seconds of process ``pid`` (not its children)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / TICKS


def children_cpu_seconds(pid: int) -> float:
    """CPU seconds of every live descendant of ``pid`` (the Dask scheduler's workers, if any)."""
    total = 0.0
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            text = stat.read_text()
            parent = int(text.rsplit(")", 1)[1].split()[1])
            if _descends(int(stat.parent.name), pid, parent):
                total += cpu_seconds(int(stat.parent.name))
        except (OSError, ValueError, IndexError):
            continue
    return total


def _descends(child: int, ancestor: int, parent: int) -> bool:
    seen = 0
    while parent > 1 and seen < 16:
        if parent == ancestor:
            return True
        try:
            parent = int(Path(f"/proc/{parent}/stat").read_text().rsplit(")", 1)[1].split()[1])
        except (OSError, ValueError, IndexError):
            return False
        seen += 1
    return False


def _element_widget(element) -> tuple[str, object] | None:
    """(widget id, widget proto) of an Element that is a widget, else None."""
    kind = element.WhichOneof("type")
    if kind is None:
        return None
    proto = getattr(element, kind)
    widget_id = getattr(proto, "id", "")
    return (widget_id, proto) if isinstance(widget_id, str) and widget_id.startswith("$$ID") else None


class Session:
    """One browser tab on the Train page, at the websocket level."""

    def __init__(self, url: str, query: str = ""):
        self.url = url.replace("http://", "ws://") + "/_stcore/stream"
        self.query = query
        self.widgets: dict[str, tuple[str, object, str]] = {}  # key -> (widget id, proto, fragment id)
        self.page_hash = ""
        self.ws = None
        self.texts: list[str] = []  # the Markdown and alert bodies of the latest run (captions, errors)

    async def open(self) -> float:
        self.ws = await websockets.connect(self.url, subprotocols=["streamlit"], max_size=None, open_timeout=60,
                                           ping_interval=None)
        return await self.rerun([])

    async def rerun(self, states: list[WidgetState], fragment_id: str = "", timeout: float = 900.0) -> float:
        """Send one rerun request and wait for its run to finish; return the seconds it took."""
        message = BackMsg()
        client = message.rerun_script
        client.query_string = self.query
        client.page_name = "" if self.page_hash else "train"
        client.page_script_hash = self.page_hash
        client.fragment_id = fragment_id
        client.widget_states.widgets.extend(states)
        start = time.perf_counter()
        await self.ws.send(message.SerializeToString())
        self.texts = []
        deadline = start + timeout
        while True:
            data = await asyncio.wait_for(self.ws.recv(), timeout=max(deadline - time.perf_counter(), 0.1))
            forward = ForwardMsg()
            forward.ParseFromString(data)
            kind = forward.WhichOneof("type")
            if kind == "new_session":
                self.page_hash = forward.new_session.page_script_hash
            elif kind == "delta" and forward.delta.WhichOneof("type") == "new_element":
                element = forward.delta.new_element
                if element.WhichOneof("type") in ("markdown", "alert"):
                    self.texts.append(getattr(element, element.WhichOneof("type")).body)
                found = _element_widget(element)
                if found is not None:
                    widget_id, proto = found
                    key = widget_id.rsplit("-", 1)[-1]
                    self.widgets[key] = (widget_id, proto, forward.delta.fragment_id)
            elif kind == "script_finished":
                if forward.script_finished in FINISHED:
                    return time.perf_counter() - start
                if forward.script_finished == ForwardMsg.FINISHED_WITH_COMPILE_ERROR:
                    raise RuntimeError("the app failed to compile")

    async def move_slider(self, rng: random.Random) -> float:
        widget_id, proto, fragment = self.widgets["vocab_slider"]
        value = rng.randint(int(proto.min), int(proto.max))
        state = WidgetState(id=widget_id)
        state.double_array_value.data.extend([float(value)])
        return await self.rerun([state], fragment)

    async def train(self, text: str) -> float:
        """Paste ``text`` as the corpus, then press Train (two runs, as a browser makes them)."""
        corpus_id = self.widgets["corpus_text"][0]
        pasted = WidgetState(id=corpus_id, string_value=text)
        await self.rerun([pasted])
        click = WidgetState(id=self.widgets["train"][0], trigger_value=True)
        return await self.rerun([pasted, click], timeout=3600)

    async def close(self) -> None:
        if self.ws is not None:
            await self.ws.close()


def training_corpus(chars: int) -> str:
    """``chars`` characters of the shared corpora, repeated in turn."""
    texts = [path.read_text(encoding="utf-8", errors="replace") for path in sorted(CORPORA.glob("*.txt"))]
    parts, total = [], 0
    while total < chars:
        for text in texts:
            parts.append(text)
            total += len(text)
    return "".join(parts)[:chars]


def start_server(app_dir: Path, port: int, log: Path, env: dict[str, str]) -> subprocess.Popen:
    process = subprocess.Popen(
        [sys.executable, "-m", "streamlit", "run", "app.py", "--server.headless", "true", "--server.port", str(port),
         "--server.address", "127.0.0.1", "--browser.gatherUsageStats", "false", "--server.fileWatcherType", "none",
         "--server.maxMessageSize", "400"],
        cwd=app_dir, stdout=log.open("w"), stderr=subprocess.STDOUT, start_new_session=True, env={**os.environ, **env},
    )
    url = f"http://127.0.0.1:{port}"
    for _ in range(240):
        try:
            with urllib.request.urlopen(f"{url}/_stcore/health", timeout=2) as response:
                if response.status == 200:
                    return process
        except OSError:
            time.sleep(0.5)
    os.killpg(process.pid, signal.SIGTERM)
    raise RuntimeError(f"the server did not start; see {log}")


def stop_server(process: subprocess.Popen) -> None:
    if process.poll() is None:
        os.killpg(process.pid, signal.SIGTERM)
        try:
            process.wait(timeout=15)
        except subprocess.TimeoutExpired:
            os.killpg(process.pid, signal.SIGKILL)
            process.wait()


async def scenario(url: str, pid: int, sessions: int, seconds: float, train: str, train_chars: int, train_vocab: int,
                   seed: int) -> dict:
    rng = random.Random(seed)
    clients = [Session(url) for _ in range(sessions)]
    for client in clients:  # open one by one: page loads are not what is measured
        await client.open()
    trainer_task, trainer = None, None
    if train != "none":
        preset = {"unigram": "t5", "wordpiece": "bert"}[train]
        trainer = Session(url, f"preset={preset}&vocab={train_vocab}")
        await trainer.open()
        text = training_corpus(train_chars)
        trainer_task = asyncio.create_task(trainer.train(text))
        await asyncio.sleep(3)  # the paste's run and the Train click are under way
    moves: list[float] = []
    end = time.perf_counter() + seconds
    cpu_before, workers_before = cpu_seconds(pid), children_cpu_seconds(pid)

    async def mover(client: Session, own: random.Random) -> None:
        await asyncio.sleep(own.uniform(0, 2))
        while time.perf_counter() < end:
            moves.append(await client.move_slider(own))
            await asyncio.sleep(own.uniform(1, 4))

    await asyncio.gather(*(mover(client, random.Random(rng.random())) for client in clients))
    cpu = cpu_seconds(pid) - cpu_before
    workers = children_cpu_seconds(pid) - workers_before
    trained = None
    if trainer_task is not None:
        if trainer_task.done():
            trained = trainer_task.result()
        trainer_task.cancel()
        await trainer.close()
    for client in clients:
        await client.close()
    moves.sort()
    return {
        "sessions": sessions, "train": train, "moves": len(moves),
        "p50": statistics.median(moves), "p95": moves[min(len(moves) - 1, int(0.95 * len(moves)))], "max": moves[-1],
        "cpu_per_move_ms": 1000 * cpu / max(len(moves), 1), "server_cpu": cpu, "worker_cpu": workers,
        "training_s": trained,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--app-dir", type=Path, default=Path(__file__).resolve().parent.parent)
    parser.add_argument("--port", type=int, default=8630)
    parser.add_argument("--sessions", type=int, nargs="+", default=[8, 30])
    parser.add_argument("--train", nargs="+", default=["none", "unigram", "wordpiece"], choices=["none", "unigram", "wordpiece"])
    parser.add_argument("--seconds", type=float, default=45)
    parser.add_argument("--train-chars", type=int, default=20_000_000)
    parser.add_argument("--train-vocab", type=int, default=50_000)
    parser.add_argument("--env", action="append", default=[], help="NAME=VALUE for the server (repeatable)")
    parser.add_argument("--log", type=Path, default=Path("/tmp/bench_load_server.log"))
    args = parser.parse_args()
    env = dict(item.split("=", 1) for item in args.env)
    print(f"app: {args.app_dir}  load average before: {os.getloadavg()}")
    print(f"{'sessions':>8} {'training':>10} {'moves':>6} {'p50 s':>7} {'p95 s':>7} {'max s':>7} {'CPU ms/move':>12} "
          f"{'server CPU s':>13} {'worker CPU s':>13} {'trained in s':>13}  load")
    for train in args.train:
        for sessions in args.sessions:
            process = start_server(args.app_dir, args.port, args.log, env)
            try:
                result = asyncio.run(scenario(f"http://127.0.0.1:{args.port}", process.pid, sessions, args.seconds, train,
                                              args.train_chars, args.train_vocab, seed=sessions))
            finally:
                stop_server(process)
            trained = "-" if result["training_s"] is None else f"{result['training_s']:.1f}"
            print(f"{sessions:>8} {train:>10} {result['moves']:>6} {result['p50']:>7.3f} {result['p95']:>7.3f} {result['max']:>7.3f} "
                  f"{result['cpu_per_move_ms']:>12.1f} {result['server_cpu']:>13.1f} {result['worker_cpu']:>13.1f} {trained:>13}  "
                  f"{os.getloadavg()[0]:.1f}", flush=True)


if __name__ == "__main__":
    main()
