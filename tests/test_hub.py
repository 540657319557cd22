"""tokviz.hub against a local stand-in for the Hugging Face Hub, started by the test on 127.0.0.1 and
reached through ``HF_ENDPOINT``: real tokenizer files (Mistral's Tekken JSON and SentencePiece model from
mistral-common, a tokenizer.json trained here), the library's cache, HF_TOKEN for a gated repository,
clear sentences when access is denied, a file is too big, or the Hub cannot be reached."""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

pytest.importorskip("huggingface_hub")

PROJECT_ROOT = Path(__file__).resolve().parent.parent
COMMIT = "0123456789abcdef0123456789abcdef01234567"
TOKEN = "hf_standin_token_for_tests"


def _repos() -> dict[str, dict[str, bytes]]:
    from tokviz import Tokenizer, models, pre_tokenizers

    tokenizer = Tokenizer(models.WordLevel({"[UNK]": 0, "hello": 1, "world": 2}, unk_token="[UNK]"))
    tokenizer.pre_tokenizer = pre_tokenizers.Whitespace()
    repos = {
        "tokviz-test/wordlevel": {"tokenizer.json": tokenizer.to_str().encode(), "config.json": b"{}",
                                  "model.safetensors": b"\0" * 1024},
        "tokviz-test/gated": {"tokenizer.json": tokenizer.to_str().encode()},
        "tokviz-test/too-big": {"tokenizer.json": b"{" + b" " * (2 * 1024 * 1024) + b"}"},
        "tokviz-test/no-tokenizer": {"config.json": b"{}"},
    }
    try:
        import mistral_common

        data = Path(mistral_common.__file__).parent / "data"
        repos["mistralai/Mistral-Nemo-Instruct-2407"] = {"tekken.json": (data / "tekken_240718.json").read_bytes()}
        repos["mistralai/Mistral-7B-v0.3"] = {"tokenizer.model": (data / "mistral_instruct_tokenizer_240323.model.v3").read_bytes()}
    except ImportError:
        pass
    return repos


class StandIn(BaseHTTPRequestHandler):
    """HEAD/GET ``/{owner}/{name}/resolve/{revision}/{file}`` as the Hub answers them (headers the library reads)."""

    repos: dict[str, dict[str, bytes]] = {}
    requests: list[str] = []

    def log_message(self, *args) -> None:  # quiet
        pass

    def _answer(self, body: bool) -> None:
        self.requests.append(f"{self.command} {self.path}")
        parts = self.path.split("?")[0].strip("/").split("/")
        if len(parts) < 5 or parts[2] != "resolve":
            return self._error(404, "RepoNotFound")
        repo_id, revision, filename = "/".join(parts[:2]), parts[3], "/".join(parts[4:])
        repo = self.repos.get(repo_id)
        if repo is None:
            return self._error(401, "RepoNotFound")
        if repo_id == "tokviz-test/gated" and self.headers.get("authorization") != f"Bearer {TOKEN}":
            return self._error(403, "GatedRepo")
        if revision not in ("main", COMMIT):
            return self._error(404, "RevisionNotFound")
        if filename not in repo:
            return self._error(404, "EntryNotFound")
        data = repo[filename]
        self.send_response(200)
        self.send_header("X-Repo-Commit", COMMIT)
        self.send_header("ETag", '"' + hashlib.sha256(data).hexdigest() + '"')
        self.send_header("Content-Length", str(len(data)))
        self.send_header("Content-Type", "application/octet-stream")
        self.end_headers()
        if body:
            self.wfile.write(data)

    def _error(self, status: int, code: str) -> None:
        self.send_response(status)
        self.send_header("X-Error-Code", code)
        self.send_header("Content-Length", "0")
        self.end_headers()

    def do_HEAD(self) -> None:  # noqa: N802
        self._answer(body=False)

    def do_GET(self) -> None:  # noqa: N802
        self._answer(body=True)


@pytest.fixture(scope="module")
def hub_url():
    StandIn.repos = _repos()
    server = ThreadingHTTPServer(("127.0.0.1", 0), StandIn)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()


def run_hub(script: str, endpoint: str, cache: Path, **env: str) -> dict:
    """Run ``script`` in a fresh interpreter whose huggingface_hub reads HF_ENDPOINT / HF_HOME / HF_TOKEN from its start."""
    environment = {key: value for key, value in os.environ.items() if not key.startswith(("HF_", "HUGGING"))}
    environment.update(HF_ENDPOINT=endpoint, HF_HOME=str(cache), HF_HUB_DISABLE_TELEMETRY="1", HF_HUB_DISABLE_XET="1",
                       PYTHONPATH=str(PROJECT_ROOT), **env)
    prelude = "import json, sys\nfrom tokviz import hub\nout = {}\ntry:\n"
    body = "".join(f"    {line}\n" for line in script.strip().splitlines())
    ending = "except Exception as error:\n    out['error'] = type(error).__name__ + ': ' + str(error)\nprint(json.dumps(out))\n"
    done = subprocess.run([sys.executable, "-c", prelude + body + ending], capture_output=True, text=True, env=environment,
                          cwd=PROJECT_ROOT, timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    return json.loads(done.stdout.strip().splitlines()[-1])


def test_a_tokenizer_json_is_fetched_alone_and_encodes(hub_url, tmp_path) -> None:
    StandIn.requests.clear()
    out = run_hub("tok = hub.load('tokviz-test/wordlevel')\nout['ids'] = tok.encode('hello world').ids\n"
                  "out['bounded'] = hub.load('tokviz-test/wordlevel', bounded=True).encode('hello world').ids", hub_url, tmp_path)
    assert out == {"ids": [1, 2], "bounded": [1, 2]}  # (bounded: read in the pages' child process, tokviz.bounded)
    fetched = {request.split(" ")[1].rsplit("/", 1)[-1] for request in StandIn.requests}
    assert fetched == {"tokenizer.json"}  # never the weights or the config
    assert list((tmp_path / "hub").glob("models--tokviz-test--wordlevel/snapshots/*/tokenizer.json"))  # the library's cache


def test_real_mistral_files_encode_as_mistral_common(hub_url, tmp_path) -> None:
    pytest.importorskip("mistral_common")
    out = run_hub(
        "text = 'Hello world, tokenizers 東京 2024!'\n"
        "out['tekken'] = hub.load('mistralai/Mistral-Nemo-Instruct-2407').encode(text).ids\n"
        "out['spm'] = hub.load('mistralai/Mistral-7B-v0.3').encode(text, add_special_tokens=False).ids",
        hub_url, tmp_path)
    from tokviz import catalog

    text = "Hello world, tokenizers 東京 2024!"
    assert out["tekken"] == catalog.reference_encoder("Tekken (Mistral NeMo)")(text)
    pytest.importorskip("sentencepiece")
    assert out["spm"] == catalog.reference_encoder("Mistral v3")(text)[1:]  # the pieces, whatever BOS rule the .model reader follows


def test_gated_repository_needs_hf_token(hub_url, tmp_path) -> None:
    out = run_hub("hub.load('tokviz-test/gated')", hub_url, tmp_path)
    assert out["error"].startswith("HubError: tokviz-test/gated is gated: accept its licence")
    assert "HF_TOKEN" in out["error"]
    out = run_hub("out['ids'] = hub.load('tokviz-test/gated').encode('world').ids", hub_url, tmp_path, HF_TOKEN=TOKEN)
    assert out == {"ids": [2]}


@pytest.mark.parametrize(
    ("repo", "message"),
    [
        ("tokviz-test/missing", "HubError: The Hub has no repository tokviz-test/missing that this server may read"),
        ("tokviz-test/no-tokenizer", "HubError: tokviz-test/no-tokenizer holds no tokenizer file tokviz reads"),
        ("tokviz-test/wordlevel@v9", "HubError: tokviz-test/wordlevel has no revision 'v9'"),
        ("tokviz-test/too-big", "LimitExceededError: tokviz-test/too-big/tokenizer.json is 2.0 MB, above this server's limit"),
        ("../etc/passwd", "HubError: '../etc/passwd' is not a Hugging Face repository id"),
    ],
)
def test_denied_missing_and_oversized_get_a_sentence(hub_url, tmp_path, repo, message) -> None:
    StandIn.requests.clear()
    out = run_hub(f"hub.load({repo!r})", hub_url, tmp_path, TOKVIZ_MAX_UPLOAD_MB="1")
    assert out["error"].startswith(message), out
    assert not any(request.startswith("GET") for request in StandIn.requests if "too-big" in request)  # refused before download


def test_offline_uses_the_cache_and_says_when_it_cannot(hub_url, tmp_path) -> None:
    run_hub("hub.load('tokviz-test/wordlevel')", hub_url, tmp_path)  # once online: now in the cache
    out = run_hub("out['ids'] = hub.load('tokviz-test/wordlevel').encode('hello').ids", "http://127.0.0.1:9", tmp_path)
    assert out == {"ids": [1]}  # the Hub unreachable (port 9, nothing listens): from the cache
    out = run_hub("out['ids'] = hub.load('tokviz-test/wordlevel').encode('hello').ids", hub_url, tmp_path, HF_HUB_OFFLINE="1")
    assert out == {"ids": [1]}
    out = run_hub("hub.load('tokviz-test/gated')", "http://127.0.0.1:9", tmp_path)
    assert out["error"].startswith("HubError: The Hub could not be reached for tokviz-test/gated")
