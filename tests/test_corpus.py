from __future__ import annotations

import json
import re

import pytest

from tokviz.corpus import (
    CorpusStats,
    column_text,
    corpus_hash,
    corpus_stats,
    decode_upload,
    held_out_split,
    read_table,
    read_upload,
    text_columns,
)
from tokviz.errors import CorpusReadError


def test_korean_counts_characters_and_bytes_separately() -> None:
    # 'a가 짧' is 4 characters and 8 UTF-8 bytes (1 + 3 + 1 + 3).
    assert corpus_stats("a가 짧") == CorpusStats(characters=4, utf8_bytes=8, lines=1, non_empty_lines=1, distinct_characters=4)


def test_lines_and_blank_lines() -> None:
    stats = corpus_stats("one\n\n two\r\nthree")
    assert (stats.lines, stats.non_empty_lines) == (4, 3)


def test_empty_text() -> None:
    assert corpus_stats("") == CorpusStats(0, 0, 0, 0, 0)


# --- uploads -----------------------------------------------------------------------------


def test_utf8_upload_decodes_without_notice_and_drops_a_bom() -> None:
    assert decode_upload("a가 짧".encode("utf-8")).text == "a가 짧"
    decoded = decode_upload(b"\xef\xbb\xbfhello")
    assert (decoded.text, decoded.encoding, decoded.notice) == ("hello", "utf-8-sig", None)


def test_latin1_upload_is_decoded_as_windows_1252_with_a_notice_naming_the_byte() -> None:
    decoded = decode_upload("café — déjà".encode("cp1252"), "old.txt")
    assert decoded.text == "café — déjà"
    assert decoded.encoding == "cp1252"
    assert decoded.notice is not None
    assert "not valid UTF-8" in decoded.notice and "0xE9" in decoded.notice and "byte 3" in decoded.notice


def test_utf16_with_bom_is_decoded_and_said_so() -> None:
    decoded = decode_upload("hello 가".encode("utf-16"), "u16.txt")
    assert decoded.text == "hello 가"
    assert "UTF-16" in (decoded.notice or "")


@pytest.mark.parametrize(
    ("data", "fragment"),
    [
        (b"PK\x03\x04rest-of-zip", "ZIP archive"),
        (b"%PDF-1.7\n...", "PDF"),
        (b"\x89PNG\r\n\x1a\n....", "PNG"),
        (b"abc\x00def", "NUL bytes"),
        (bytes(range(1, 9)) * 100, "control bytes"),
    ],
)
def test_binary_uploads_are_refused_with_a_sentence(data: bytes, fragment: str) -> None:
    with pytest.raises(CorpusReadError, match=fragment):
        decode_upload(data, "thing.txt")


def test_oversized_upload_is_refused_naming_the_limit() -> None:
    with pytest.raises(CorpusReadError, match=r"above this server's upload limit of 1,000 bytes"):
        decode_upload(b"a" * 1001, "big.txt", max_bytes=1000)
    assert decode_upload(b"a" * 1000, "ok.txt", max_bytes=1000).text == "a" * 1000


def test_default_upload_limit_is_50_mb() -> None:
    from tokviz.limits import MAX_UPLOAD_BYTES

    assert MAX_UPLOAD_BYTES == 50 * 1024 * 1024


def test_csv_upload_picks_the_longest_text_column_and_can_switch() -> None:
    data = b"id,label,review\n1,pos,a wonderful film\n2,neg,far too long and slow\n3,pos,\n"
    upload = read_upload(data, "reviews.csv")
    assert upload.columns == ("review", "label", "id")
    assert (upload.column, upload.rows) == ("review", 3)
    assert upload.text == "a wonderful film\nfar too long and slow"  # the empty cell is skipped
    assert read_upload(data, "reviews.csv", column="label").text == "pos\nneg\npos"
    with pytest.raises(CorpusReadError, match="no column 'title'"):
        read_upload(data, "reviews.csv", column="title")


def test_tsv_jsonl_and_json_shapes() -> None:
    assert read_upload(b"n\ttext\n1\tone two\n", "a.tsv").text == "one two"
    jsonl = "\n".join(json.dumps({"id": i, "text": f"line {i}"}) for i in range(3)).encode()
    assert read_upload(jsonl, "a.jsonl").text == "line 0\nline 1\nline 2"
    records = json.dumps([{"title": "T", "body": "long body text"}]).encode()
    assert read_upload(records, "a.json").column == "body"
    assert read_upload(json.dumps({"data": [{"text": "x y"}]}).encode(), "b.json").text == "x y"
    assert read_upload(json.dumps(["first", "second"]).encode(), "c.json").text == "first\nsecond"
    assert read_upload(json.dumps({"text": ["a", "b"], "n": [1, 2]}).encode(), "d.json").text == "a\nb"


def test_csv_in_windows_1252_keeps_the_notice() -> None:
    upload = read_upload("text\ncafé\n".encode("cp1252"), "fr.csv")
    assert upload.text == "café"
    assert "Windows-1252" in (upload.notice or "")


def test_unreadable_table_and_unknown_suffix_raise_corpus_read_error() -> None:
    with pytest.raises(CorpusReadError, match="could not be read as JSON"):
        read_upload(b"{not json", "bad.json")
    with pytest.raises(CorpusReadError, match="tokviz reads"):
        read_upload(b"text", "slides.pptx")
    with pytest.raises(CorpusReadError, match="no rows"):
        read_table("[]", "empty.json")


def test_text_columns_prefers_strings_and_column_text_stringifies_numbers() -> None:
    frame = read_table('[{"n": 1, "s": "ab"}, {"n": 2, "s": "cd"}]', "x.json")
    assert text_columns(frame) == ["s"]
    assert column_text(frame, "n") == "1\n2"


def test_held_out_split_holds_every_tenth_line_and_keeps_tiny_corpora_whole() -> None:
    text = "\n".join(f"line {i}" for i in range(30)) + "\n\n"
    split = held_out_split(text)
    assert split.test_lines == ("line 9", "line 19", "line 29")
    assert len(split.train_lines) == 27 and "line 9" not in split.train_lines
    assert held_out_split("only one line\n") == held_out_split("only one line")
    assert held_out_split("only one line").test_lines == ("only one line",)
    assert held_out_split("").test_lines == ()


def test_sample_has_held_out_lines_disjoint_from_training() -> None:
    from tokviz.samples import load_sample

    split = held_out_split(load_sample())
    assert len(split.test_lines) >= 3
    assert len(split.train_lines) + len(split.test_lines) == len([l for l in load_sample().splitlines() if l.strip()])


def test_corpus_hash_is_stable_and_distinguishes_texts() -> None:
    assert corpus_hash("") == "e3b0c44298fc1c14"
    assert corpus_hash("a") != corpus_hash("a ")


def test_a_csv_of_10000_columns_is_read_in_one_pass() -> None:
    """100 KB, 10,000 columns: every column is offered, longest text first (this took 98 s column by column;
    the time itself is in bench, never asserted here)."""
    from tokviz.corpus import read_table, text_columns

    header = ",".join(f"c{index}" for index in range(10_000))
    row = ",".join("x" * (1 + index % 7) for index in range(10_000))
    frame = read_table(f"{header}\n{row}\n{row}\n", "wide.csv")
    assert frame.shape == (2, 10_000)
    columns = text_columns(frame)
    assert len(columns) == 10_000 and columns[:3] == ["c6", "c13", "c20"] and columns[-1] == "c9996"


def test_csv_shapes_read_as_pandas_reads_them() -> None:
    from tokviz.corpus import read_table

    frame = read_table('id,text,text,\n1,"a, ""b""\nc"\n\n2,d\n', "a.csv")
    assert list(frame.columns) == ["id", "text", "text.1", "Unnamed: 3"]
    assert frame["text"].tolist() == ['a, "b"\nc', "d"]
    assert frame["text.1"].isna().tolist() == [True, True]
    with pytest.raises(CorpusReadError, match=r"^b\.csv could not be read as CSV: Expected 2 fields in line 3, saw 3"):
        read_table("a,b\n1,2\n1,2,3\n", "b.csv")


@pytest.mark.parametrize("name, text", [
    ("deep.json", "[" * 100_000 + "]" * 100_000),
    ("deep.jsonl", '{"a":' * 1_000 + "1" + "}" * 1_000 + "\n"),
    ("deeper.jsonl", '{"a":' * 100_000 + "1" + "}" * 100_000 + "\n"),
    ("records.json", '{"data": [' + '{"a":' * 50 + "1" + "}" * 50 + "]}"),
], ids=["json-100k", "jsonl-1000", "jsonl-100k", "records-50"])
def test_json_nested_past_the_limit_is_refused_with_a_sentence(name, text) -> None:
    from tokviz.corpus import read_table

    with pytest.raises(CorpusReadError, match=rf"^{re.escape(name)} nests its values more than 40 levels deep \(TOKVIZ_MAX_JSON_DEPTH\); a corpus is text in fields"):
        read_table(text, name)


def test_json_nested_within_the_limit_is_read() -> None:
    from tokviz.corpus import column_text, read_table

    frame = read_table('{"text": "hello", "meta": ' + '{"a":' * 30 + "1" + "}" * 30 + "}\n", "ok.jsonl")
    assert column_text(frame, "text") == "hello" and column_text(frame, "meta").startswith("{'a': {'a':")


@pytest.mark.parametrize("encoding, label", [("utf-16-le", "little-endian"), ("utf-16-be", "big-endian")])
def test_utf16_without_a_byte_order_mark_is_text(encoding, label) -> None:
    """It was refused as 'NUL bytes, so it is a binary file'."""
    from tokviz.corpus import decode_upload

    decoded = decode_upload("naïve café, line one\nline two — ok\n".encode(encoding), "notes.txt")
    assert decoded.text == "naïve café, line one\nline two — ok\n" and decoded.encoding == encoding
    assert decoded.notice == f"notes.txt is UTF-16 ({label}) without a byte-order mark; it was converted to text."
    with pytest.raises(CorpusReadError, match="NUL bytes, so it is a binary file"):
        decode_upload(bytes(range(256)) * 8, "blob.txt")
