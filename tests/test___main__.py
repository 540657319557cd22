"""tokviz.__main__: ``python -m tokviz`` runs the command line (tokviz.cli) and exits with its code."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def _run(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "tokviz", *args], cwd=ROOT, capture_output=True, text=True, timeout=120)


def test_help_names_the_train_command() -> None:
    done = _run("--help")
    assert done.returncode == 0 and "train" in done.stdout


def test_a_bad_command_line_exits_2_and_an_unreadable_input_3(tmp_path) -> None:
    assert _run("train").returncode == 2
    done = _run("train", str(tmp_path / "missing.txt"), "--model", "bpe", "--vocab-size", "60", "--out", str(tmp_path / "out"), "--workers", "0")
    assert done.returncode == 3 and "missing.txt" in done.stderr


def test_trains_a_file_to_the_folder_the_app_opens(tmp_path) -> None:
    corpus = tmp_path / "corpus.txt"
    corpus.write_text("low lower lowest\nnew newer newest\n" * 20, encoding="utf-8")
    done = _run("train", str(corpus), "--model", "bpe", "--vocab-size", "60", "--out", str(tmp_path / "out"), "--workers", "0")
    assert done.returncode == 0, done.stderr
    assert {"tokenizer.json", "history.json"} <= {path.name for path in (tmp_path / "out").iterdir()}
