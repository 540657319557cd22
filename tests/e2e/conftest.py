"""Real-browser fixtures: ``streamlit run app.py`` on a free port, driven by Debian's Chromium.

The server is started once per session and always terminated. Chromium is Debian's
(/usr/bin/chromium, installed by the README's test command); Playwright never downloads
a browser of its own.
"""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest

PROJECT_ROOT = Path(__file__).resolve().parents[2]
CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update", "--no-first-run", "--disable-sync"]


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def _wait_healthy(url: str, process: subprocess.Popen, timeout: float = 60.0) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError(f"streamlit exited early with code {process.returncode}")
        try:
            with urllib.request.urlopen(f"{url}/_stcore/health", timeout=2) as response:
                if response.read().decode().strip() == "ok":
                    return
        except OSError:
            time.sleep(0.3)
    raise TimeoutError(f"{url}/_stcore/health did not answer 'ok' within {timeout:.0f} s")


@pytest.fixture(scope="session")
def app_url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    process, url = start_server(tmp_path_factory.mktemp("streamlit") / "server.log")
    try:
        yield url
    finally:
        stop_server(process)


@pytest.fixture(scope="session")
def browser():
    if not Path(CHROMIUM).exists():
        pytest.skip(f"{CHROMIUM} is missing: the README's test command installs Debian's chromium")
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        chromium = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS, headless=True)
        try:
            yield chromium
        finally:
            chromium.close()


@pytest.fixture()
def page(browser):
    context = browser.new_context(viewport={"width": 1400, "height": 1000})
    # A loaded machine makes every run slower: generous limits, and the waits are for the app's own
    # finished condition (app_driver.wait_for_app), never a fixed time.
    context.set_default_timeout(int(os.environ.get("TOKVIZ_E2E_TIMEOUT_MS", "240000")))
    browser_page = context.new_page()
    try:
        yield browser_page
    finally:
        context.close()


@pytest.fixture(scope="session")
def screenshot_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Screenshots land here (printed at the end of the run) so a person can look at them."""
    folder = Path(os.environ.get("TOKVIZ_SCREENSHOT_DIR", "")) if os.environ.get("TOKVIZ_SCREENSHOT_DIR") else tmp_path_factory.mktemp("screenshots")
    folder.mkdir(parents=True, exist_ok=True)
    return folder


def start_server(log_path: Path) -> tuple[subprocess.Popen, str]:
    """A fresh ``streamlit run app.py`` on a free port; the caller stops it with :func:`stop_server`."""
    port = _free_port()
    with log_path.open("w") as log:
        process = subprocess.Popen(
            [sys.executable, "-m", "streamlit", "run", "app.py", "--server.headless", "true",
             "--server.port", str(port), "--server.address", "127.0.0.1", "--browser.gatherUsageStats", "false",
             # The server under test runs the code it started with: an edit made while tests run is not hot-reloaded into it.
             "--server.fileWatcherType", "none"],
            cwd=PROJECT_ROOT, stdout=log, stderr=subprocess.STDOUT, start_new_session=True,
            env={**os.environ, "TOKVIZ_TRAINING_BACKEND": "dask"},  # the app as deployed: trainings on Dask workers
        )
    url = f"http://127.0.0.1:{port}"
    try:
        _wait_healthy(url, process)
    except BaseException:
        stop_server(process)
        raise
    return process, url


def stop_server(process: subprocess.Popen) -> None:
    if process.poll() is None:
        os.killpg(process.pid, signal.SIGTERM)
        try:
            process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            os.killpg(process.pid, signal.SIGKILL)
            process.wait()


@pytest.fixture()
def fresh_app_url(tmp_path: Path) -> Iterator[str]:
    """A new server that no browser has visited yet (for first-visit behaviour)."""
    process, url = start_server(tmp_path / "server.log")
    try:
        yield url
    finally:
        stop_server(process)


# The browser tests import their driver by its bare name (pytest's importlib mode adds no folder to sys.path).
sys.path.insert(0, str(Path(__file__).resolve().parent))
