"""``python -m tokviz train``: outputs, parity with the app's training, exit codes and messages."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tokviz import history_io
from tokviz.cli import EXIT_INPUT, EXIT_TRAINING, main, pipeline_for
from tokviz.presets import PRESETS
from tokviz.samples import load_sample
from tokviz.tokenizer import Tokenizer
from tokviz.training import run_training

ROOT = Path(__file__).resolve().parents[1]
SAMPLE = load_sample()
TEXT = "Héllo, the hugging tokenizers — naïve résumé 42!"


@pytest.fixture(scope="module")
def sample_file(tmp_path_factory):
    path = tmp_path_factory.mktemp("corpus") / "sample.txt"
    path.write_text(SAMPLE, encoding="utf-8")
    return path


def _train(tmp_path, *args):
    out = tmp_path / "out"
    code = main(["train", *map(str, args), "--out", str(out), "--no-progress"])
    return code, out


@pytest.mark.parametrize("model, preset, vocab", [("bpe", None, 400), ("wordpiece", None, 500), ("unigram", None, 500),
                                                  ("wordlevel", None, 300), ("bpe", "char_bpe", 400)])
def test_cli_trains_what_the_app_trains(tmp_path, sample_file, model, preset, vocab):
    extra = ["--preset", preset] if preset else []
    code, out = _train(tmp_path, sample_file, "--model", model, "--vocab-size", vocab, "--workers", "0", *extra)
    assert code == 0
    config = pipeline_for(model, preset)
    app_history = run_training(config, vocab, SAMPLE.splitlines())
    tokenizer = Tokenizer.from_file(out / "tokenizer.json")
    from tokviz.pipeline_config import tokenizer_with_model

    app_tokenizer = tokenizer_with_model(config, app_history.model)
    assert tokenizer.encode(TEXT).tokens == app_tokenizer.encode(TEXT).tokens
    # (Each read from its tokenizer.json: a Unigram's scores as HF reads them, see tokviz.json_floats.)
    assert json.loads(tokenizer.to_str()) == json.loads(Tokenizer.from_str(app_tokenizer.to_str()).to_str())
    opened = history_io.load_training(out / "history.json")
    assert opened.config == config
    assert opened.tokenizer_at(vocab).encode(TEXT).ids == app_tokenizer.encode(TEXT).ids
    smaller = max(opened.history.min_vocab_size, vocab - 100)
    assert opened.tokenizer_at(smaller).encode(TEXT).ids == tokenizer_with_model(config, app_history.model_at(smaller)).encode(TEXT).ids
    assert sorted(os.listdir(out / "transformers")) == ["special_tokens_map.json", "tokenizer.json", "tokenizer_config.json"]


def test_pipelines_for_models_and_presets():
    assert pipeline_for("bpe", None) == PRESETS["gpt2"].build()
    assert pipeline_for("wordpiece", None) == PRESETS["bert"].build()
    assert pipeline_for("unigram", None) == PRESETS["t5"].build()
    wordlevel = pipeline_for("wordlevel", None)
    assert (wordlevel.model, wordlevel.unk_token, wordlevel.pre_tokenizers) == ("WordLevel", "[UNK]", PRESETS["bert"].build().pre_tokenizers)
    gpt2_wordpiece = pipeline_for("wordpiece", "gpt2")
    assert (gpt2_wordpiece.unk_token, gpt2_wordpiece.special_tokens[0], gpt2_wordpiece.continuing_subword_prefix) == ("[UNK]", "[UNK]", "##")
    assert pipeline_for("bpe", None, min_frequency=3).min_frequency == 3


def test_two_workers_write_the_same_tokenizer_as_one_process(tmp_path, sample_file):
    serial_code, serial_out = _train(tmp_path / "a", sample_file, "--model", "bpe", "--vocab-size", 400, "--workers", "0")
    report = tmp_path / "report.json"
    code, out = _train(tmp_path / "b", sample_file, "--model", "bpe", "--vocab-size", 400, "--workers", "2",
                       "--chunk-mb", "0.0002", "--report", report)
    assert serial_code == code == 0
    assert (out / "tokenizer.json").read_bytes() == (serial_out / "tokenizer.json").read_bytes()
    figures = json.loads(report.read_text())
    assert figures["workers"] == 2 and figures["chunks"] > 10
    assert len(figures["worker_peak_rss_mb"]) == 2
    assert len(figures["worker_cpu_seconds"]) == 2 and all(value > 0 for value in figures["worker_cpu_seconds"].values())
    assert figures["client_cpu_seconds"] > 0


def test_sentencepiece_samples_sentences_and_writes_a_model(tmp_path):
    lines = SAMPLE.splitlines()
    many = tmp_path / "many.txt"
    many.write_text("".join(f"{index} {lines[index % len(lines)]}\n" for index in range(600)), encoding="utf-8")
    code, out = _train(tmp_path, many, "--model", "sentencepiece", "--model-type", "bpe", "--vocab-size", 800,
                       "--input-sentence-size", 200)
    assert code == 0
    history = history_io.load(out / "history.json")
    assert history.algorithm == "sentencepiece-bpe"
    assert history.sentences == 200
    from tokviz.sentencepiece import SentencePieceProcessor

    processor = SentencePieceProcessor(model_file=str(out / "spm.model"))
    tokenizer = Tokenizer.from_file(out / "tokenizer.json")
    assert tokenizer.encode("hello world").ids == processor.encode("hello world")


def test_jsonl_csv_and_parquet_inputs(tmp_path):
    import pyarrow as pa
    import pyarrow.parquet as pq

    lines = SAMPLE.splitlines()[:200]
    jsonl = tmp_path / "d.jsonl"
    jsonl.write_text("".join(json.dumps({"body": line}) + "\n" for line in lines), encoding="utf-8")
    parquet = tmp_path / "d.parquet"
    pq.write_table(pa.table({"body": lines}), parquet, row_group_size=50)
    outs = []
    for path in (jsonl, parquet):
        code, out = _train(tmp_path / path.suffix[1:], path, "--field", "body", "--model", "wordlevel", "--vocab-size", 100, "--workers", "0")
        assert code == 0
        outs.append((out / "tokenizer.json").read_text(encoding="utf-8"))
    assert outs[0] == outs[1]


@pytest.mark.parametrize(
    "files, extra, code, message",
    [
        (["missing.txt"], [], EXIT_INPUT, "missing.txt: no such file"),
        (["data.jsonl"], [], EXIT_INPUT, "say which field holds the text with --field"),
        (["data.jsonl"], ["--field", "text"], EXIT_INPUT, "has no field 'text' ('body')"),
        (["latin.txt"], [], EXIT_INPUT, "is not UTF-8 text: byte 6"),
        (["blank.txt"], [], EXIT_TRAINING, "No word to train on"),
        (["corpus.txt"], ["--vocab-size", "3"], EXIT_TRAINING, "too small"),
    ],
)
def test_bad_input_exits_with_a_code_and_a_sentence(tmp_path, capsys, files, extra, code, message):
    (tmp_path / "data.jsonl").write_text('{"body": "x"}\n', encoding="utf-8")
    (tmp_path / "latin.txt").write_bytes("ok\ncaf\xe9\n".encode("latin-1"))
    (tmp_path / "blank.txt").write_text("\n\n", encoding="utf-8")
    (tmp_path / "corpus.txt").write_text("hello world\n", encoding="utf-8")
    vocab = [] if "--vocab-size" in extra else ["--vocab-size", "100"]
    argv = ["train", *(str(tmp_path / name) for name in files), "--model", "unigram", *vocab, *extra,
            "--out", str(tmp_path / "out"), "--workers", "0", "--no-progress"]
    assert main(argv) == code
    error = capsys.readouterr().err
    assert message in error
    assert "Traceback" not in error


@pytest.mark.parametrize(
    "extra, message",
    [
        (["--vocab-size", "0"], "--vocab-size must be 1 or more"),
        (["--vocab-size", "10", "--workers", "-1"], "--workers must be 0 or more"),
        (["--vocab-size", "10", "--scheduler", "localhost:8786"], "--scheduler must be an address like tcp://"),
        (["--vocab-size", "ten"], "invalid int value: 'ten'"),
    ],
)
def test_bad_command_lines_exit_2(tmp_path, capsys, extra, message):
    with pytest.raises(SystemExit) as stop:
        main(["train", "x.txt", "--model", "bpe", "--out", str(tmp_path), *extra])
    assert stop.value.code == 2
    assert message in capsys.readouterr().err


def test_python_dash_m_tokviz_help_reads_well():
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    result = subprocess.run([sys.executable, "-m", "tokviz", "train", "--help"], capture_output=True, text=True, env=env, cwd=ROOT,
                            timeout=120)
    assert result.returncode == 0
    for expected in ("--model {bpe,wordpiece,unigram,wordlevel,sentencepiece}", "--vocab-size N", "--scheduler tcp://HOST:PORT",
                     "--workers K", "--field NAME, --column NAME", "exit codes:", "Open a training", "--input-sentence-size N"):
        assert expected in result.stdout


def test_scheduler_option_uses_a_running_cluster(tmp_path, sample_file):
    import logging

    from distributed import LocalCluster

    with LocalCluster(n_workers=1, threads_per_worker=1, processes=True, dashboard_address=":0", silence_logs=logging.ERROR) as cluster:
        report = tmp_path / "report.json"
        code, out = _train(tmp_path, sample_file, "--model", "wordlevel", "--vocab-size", 200, "--scheduler", cluster.scheduler_address,
                           "--report", report)
    assert code == 0
    figures = json.loads(report.read_text())
    assert (figures["scheduler"], figures["workers"]) == (cluster.scheduler_address, 1)
    assert Tokenizer.from_file(out / "tokenizer.json").get_vocab_size() == 200


def test_an_unreachable_scheduler_exits_5(tmp_path, sample_file, capsys, monkeypatch):
    import socket

    from tokviz import cli

    monkeypatch.setattr(cli, "SCHEDULER_TIMEOUT", "2s")
    with socket.socket() as probe:  # a port nobody listens on
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    code, _out = _train(tmp_path, sample_file, "--model", "bpe", "--vocab-size", 300, "--scheduler", f"tcp://127.0.0.1:{port}")
    assert code == cli.EXIT_CLUSTER
    assert f"Cannot start or reach the Dask scheduler (tcp://127.0.0.1:{port})" in capsys.readouterr().err
