"""corpus_stream: chunked reading of txt / jsonl / csv / parquet, and parallel counts equal serial ones."""

from __future__ import annotations

import csv
import json
from collections import Counter

import pytest

from tokviz.corpus_stream import (
    Chunk,
    count_chunk,
    count_parallel,
    count_serial,
    detect_format,
    iter_texts,
    merge_in_order,
    plan_chunks,
    read_chunk,
)
from tokviz.errors import CorpusReadError
from tokviz.presets import PRESETS
from tokviz.training import count_config_words

LINES = [
    "Héllo wörld, naïve café",
    "東京は晴れ 😂👍 emoji",
    "",
    "the the the",
    "x, \"quoted\" y",
    "   spaced   out   ",
    "Ünïcödé ends here é",
] * 7


@pytest.fixture()
def text_file(tmp_path):
    path = tmp_path / "corpus.txt"
    path.write_bytes(("\n".join(LINES) + "\n").encode("utf-8"))
    return str(path)


def test_worked_example_a_line_belongs_to_the_chunk_it_starts_in(tmp_path):
    path = tmp_path / "t.txt"
    path.write_bytes(b"ab\ncd\nef\n")
    first, second = Chunk(str(path), "txt", None, 0, 4), Chunk(str(path), "txt", None, 4, 9)
    assert list(read_chunk(first)) == ["ab", "cd"]
    assert list(read_chunk(second)) == ["ef"]


@pytest.mark.parametrize("chunk_bytes", [1, 2, 3, 5, 7, 11, 64, 1 << 20])
def test_every_cut_reads_every_line_once_even_inside_a_character(text_file, chunk_bytes):
    chunks = plan_chunks([text_file], chunk_bytes=chunk_bytes)
    assert list(iter_texts(chunks)) == LINES


def test_bom_and_crlf_are_not_text(tmp_path):
    path = tmp_path / "w.txt"
    path.write_bytes("\ufeffone\r\ntwo\r\n".encode("utf-8"))
    assert list(iter_texts(plan_chunks([str(path)], chunk_bytes=3))) == ["one", "two"]


@pytest.mark.parametrize("chunk_bytes", [1, 4, 9, 50, 1 << 20])
def test_csv_cuts_never_fall_inside_a_quoted_newline(tmp_path, chunk_bytes):
    texts = [line.replace(" ", "\n", 1) for line in LINES]  # quoted fields holding newlines
    path = tmp_path / "c.csv"
    with open(path, "w", newline="", encoding="utf-8") as handle:
        writer = csv.writer(handle)
        writer.writerow(["id", "text"])
        for index, text in enumerate(texts):
            writer.writerow([index, text])
    assert list(iter_texts(plan_chunks([str(path)], field="text", chunk_bytes=chunk_bytes))) == texts


@pytest.mark.parametrize("chunk_bytes", [1, 13, 1 << 20])
def test_jsonl_field(tmp_path, chunk_bytes):
    path = tmp_path / "d.jsonl"
    path.write_text("".join(json.dumps({"text": line, "n": 1}, ensure_ascii=False) + "\n" for line in LINES), encoding="utf-8")
    assert list(iter_texts(plan_chunks([str(path)], field="text", chunk_bytes=chunk_bytes))) == LINES


def test_parquet_is_read_by_row_groups(tmp_path):
    import pyarrow as pa
    import pyarrow.parquet as pq

    path = tmp_path / "p.parquet"
    pq.write_table(pa.table({"text": LINES, "n": list(range(len(LINES)))}), path, row_group_size=10)
    chunks = plan_chunks([str(path)], field="text")
    assert [chunk.row_group for chunk in chunks] == [0, 1, 2, 3, 4]
    assert list(iter_texts(chunks)) == LINES


def test_formats_from_extensions():
    assert [detect_format(name) for name in ("a.txt", "a.JSONL", "a.ndjson", "a.csv", "a.parquet", "a.md")] == [
        "txt", "jsonl", "jsonl", "csv", "parquet", "txt"]


def test_bad_sources_say_what_is_wrong(tmp_path):
    with pytest.raises(CorpusReadError, match="no such file"):
        plan_chunks([str(tmp_path / "missing.txt")])
    with pytest.raises(CorpusReadError, match="is a folder"):
        plan_chunks([str(tmp_path)])
    data = tmp_path / "d.jsonl"
    data.write_text('{"body": "x"}\n', encoding="utf-8")
    with pytest.raises(CorpusReadError, match="--field"):
        plan_chunks([str(data)])
    with pytest.raises(CorpusReadError, match=r"has no field 'text' \('body'\)"):
        list(iter_texts(plan_chunks([str(data)], field="text")))
    table = tmp_path / "t.csv"
    table.write_text("a,b\n1,2\n", encoding="utf-8")
    with pytest.raises(CorpusReadError, match="no column 'text'; its columns are: 'a', 'b'"):
        plan_chunks([str(table)], field="text")
    latin = tmp_path / "latin.txt"
    latin.write_bytes("ok\ncaf\xe9\n".encode("latin-1"))
    with pytest.raises(CorpusReadError, match="not UTF-8 text: byte 6"):
        list(iter_texts(plan_chunks([str(latin)])))
    binary = tmp_path / "b.txt"
    binary.write_bytes(b"PAR1\0\0\x15")
    with pytest.raises(CorpusReadError, match="looks binary"):
        plan_chunks([str(binary)])
    fake = tmp_path / "fake.parquet"
    fake.write_text("not parquet", encoding="utf-8")
    with pytest.raises(CorpusReadError, match="not a readable Parquet file"):
        plan_chunks([str(fake)], field="text")


def test_merge_keeps_corpus_order():
    merged = merge_in_order(iter([(2, Counter(d=1)), (0, Counter(b=1, a=1)), (1, Counter(a=2, c=1))]), 3)
    assert list(merged.items()) == [("b", 1), ("a", 3), ("c", 1), ("d", 1)]


@pytest.mark.parametrize("preset", ["gpt2", "bert", "t5", "char_bpe"])
def test_serial_chunked_count_equals_the_apps_count(text_file, preset):
    config = PRESETS[preset].build()
    expected = count_config_words(config, LINES)
    counted = count_serial(plan_chunks([text_file], chunk_bytes=7), config)
    assert counted == expected
    assert list(counted) == list(expected)  # the same first-seen order, which first_seen tie-breaks read


def test_a_blank_chunk_counts_nothing(tmp_path):
    path = tmp_path / "blank.txt"
    path.write_text("\n\n   \n", encoding="utf-8")
    assert count_chunk(plan_chunks([str(path)])[0], PRESETS["gpt2"].build()) == Counter({"ĠĠĠ": 1})  # GPT-2 keeps spaces
    assert count_chunk(plan_chunks([str(path)])[0], PRESETS["bert"].build()) == Counter()


@pytest.fixture(scope="module")
def dask_client():
    import logging

    from distributed import Client, LocalCluster

    cluster = LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=":0", silence_logs=logging.ERROR)
    client = Client(cluster)
    yield client
    client.close()
    cluster.close()


@pytest.mark.parametrize("preset", ["gpt2", "bert"])
def test_parallel_counts_on_two_workers_equal_serial_counts(text_file, dask_client, preset):
    config = PRESETS[preset].build()
    chunks = plan_chunks([text_file], chunk_bytes=5)  # boundaries inside lines and inside multi-byte characters
    assert len(chunks) > 50
    serial = count_serial(chunks, config)
    parallel = count_parallel(chunks, config, dask_client)
    assert parallel == serial == count_config_words(config, LINES)
    assert list(parallel) == list(serial)
    assert len(dask_client.scheduler_info()["workers"]) == 2


def test_a_worker_error_reaches_the_client_as_the_same_message(tmp_path, dask_client):
    path = tmp_path / "latin.txt"
    path.write_bytes(b"fine\n" * 10 + "caf\xe9\n".encode("latin-1"))
    with pytest.raises(CorpusReadError, match="not UTF-8 text: byte 53"):
        count_parallel(plan_chunks([str(path)], chunk_bytes=8), PRESETS["gpt2"].build(), dask_client)
