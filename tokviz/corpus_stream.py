"""Corpora too large for memory, read in chunks that parallel workers can count on their own.

A corpus is one or more files: plain text (one text per line), JSON Lines (one object per
line, text in a ``field``), CSV (text in a ``column``) or Parquet (text in a ``column``).
:func:`plan_chunks` cuts them into :class:`Chunk` descriptions without reading them whole —
byte ranges for the line formats, row groups for Parquet — and :func:`read_chunk` yields the
texts of one chunk, so a worker process holds one line (or one Parquet batch) at a time.

A byte range ``[start, end)`` owns every line that STARTS inside it; the previous range's
last line may run past ``end`` and is read whole by that range. So a boundary may fall in the
middle of a line or of a multi-byte character and every line is still read exactly once, whole:

    b"ab\\ncd\\nef\\n" cut at 4 -> [0, 4) reads "ab", "cd";  [4, 9) reads "ef"

CSV boundaries are moved to a newline outside quotes (a quoted field may hold newlines;
RFC 4180's ``""`` escapes keep the quote count's parity right), found by one fast pass
counting quote bytes. What this version leaves out: compressed files (decompress first), CSV
dialects other than the default comma/double-quote one, and JSON Lines objects spanning lines.
"""

from __future__ import annotations

import csv
import io
import json
import os
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from tokviz.errors import CorpusReadError

if TYPE_CHECKING:  # pragma: no cover
    from collections import Counter

    from tokviz.pipeline_config import PipelineConfig

__all__ = ["FORMATS", "Chunk", "detect_format", "plan_chunks", "read_chunk", "iter_texts", "check_source", "count_chunk",
           "count_serial", "count_parallel", "merge_in_order"]

FORMATS = ("txt", "jsonl", "csv", "parquet")
_EXTENSIONS = {".txt": "txt", ".text": "txt", ".jsonl": "jsonl", ".ndjson": "jsonl", ".csv": "csv", ".parquet": "parquet",
               ".pq": "parquet"}
#: Bytes per chunk by default: small enough for a smooth progress bar and balanced workers.
DEFAULT_CHUNK_BYTES = 16 * 1024 * 1024
_SCAN_BLOCK = 4 * 1024 * 1024


@dataclass(frozen=True, slots=True)
class Chunk:
    """One unit of work: ``path``'s bytes ``[start, end)`` or Parquet row group ``row_group``.

    ``size`` is what the progress bar advances by when the chunk is done (bytes; for Parquet,
    the row group's share of the file size).
    """

    path: str
    format: str
    field: str | None
    start: int = 0
    end: int = 0
    row_group: int = -1
    size: int = 0


def detect_format(path: str, given: str | None = None) -> str:
    """``given`` if set, else from the extension: ``"a/b.jsonl" -> "jsonl"``; unknown extensions are text.

    >>> detect_format("wiki.parquet"), detect_format("notes.md"), detect_format("x.csv", "txt")
    ('parquet', 'txt', 'txt')
    """
    if given is not None:
        if given not in FORMATS:
            raise CorpusReadError(f"Unknown format {given!r}; choose one of {', '.join(FORMATS)}.")
        return given
    return _EXTENSIONS.get(os.path.splitext(path)[1].lower(), "txt")


def check_source(path: str, fmt: str, field: str | None) -> None:
    """Fail early, with a sentence, on what would fail on a worker: a missing file, a missing field."""
    if not os.path.exists(path):
        raise CorpusReadError(f"{path}: no such file.")
    if os.path.isdir(path):
        raise CorpusReadError(f"{path} is a folder; give the files in it (e.g. {path}/*.txt).")
    if not os.access(path, os.R_OK):
        raise CorpusReadError(f"{path}: permission denied.")
    if fmt in ("jsonl", "csv", "parquet") and not field:
        what = "--field" if fmt == "jsonl" else "--column"
        raise CorpusReadError(f"{path} is {fmt}: say which {'field' if fmt == 'jsonl' else 'column'} holds the text with {what}.")
    if fmt == "txt":
        with open(path, "rb") as handle:
            head = handle.read(8192)
        if b"\0" in head:
            raise CorpusReadError(f"{path} looks binary (it holds NUL bytes), not text; for Parquet name it *.parquet or pass --format parquet.")
    elif fmt == "csv":
        header = _csv_header(path)
        if field not in header:
            raise CorpusReadError(f"{path} has no column {field!r}; its columns are: {', '.join(map(repr, header[:20]))}.")
    elif fmt == "parquet":
        parquet = _parquet_file(path)
        names = parquet.schema_arrow.names
        if field not in names:
            raise CorpusReadError(f"{path} has no column {field!r}; its columns are: {', '.join(map(repr, names[:20]))}.")
        import pyarrow as pa

        kind = parquet.schema_arrow.field(field).type
        if not (pa.types.is_string(kind) or pa.types.is_large_string(kind)):
            raise CorpusReadError(f"{path}: column {field!r} holds {kind}, not text.")


def _parquet_file(path: str):  # noqa: ANN202 - pyarrow is imported lazily
    import pyarrow.parquet as pq

    try:
        return pq.ParquetFile(path)
    except Exception as error:  # noqa: BLE001 - pyarrow raises its own error types
        raise CorpusReadError(f"{path} is not a readable Parquet file ({error}).") from None


def _csv_header(path: str) -> list[str]:
    with open(path, "rb") as handle:
        first = handle.readline()
    try:
        return next(csv.reader([_decode(first, path, 0).rstrip("\r\n")]), [])
    except csv.Error as error:
        raise CorpusReadError(f"{path}: its first line is not a CSV header ({error}).") from None


def plan_chunks(paths: Sequence[str], fmt: str | None = None, field: str | None = None,
                chunk_bytes: int = DEFAULT_CHUNK_BYTES) -> list[Chunk]:
    """Every file's chunks, in corpus order (files in the order given, chunks in file order)."""
    chunks: list[Chunk] = []
    for path in paths:
        kind = detect_format(path, fmt)
        check_source(path, kind, field)
        size = os.path.getsize(path)
        if kind == "parquet":
            parquet = _parquet_file(path)
            groups = parquet.num_row_groups
            rows = max(1, parquet.metadata.num_rows)
            for index in range(groups):
                share = size * parquet.metadata.row_group(index).num_rows // rows
                chunks.append(Chunk(path, kind, field, row_group=index, size=share))
            continue
        first = 0
        if kind == "csv":  # the header line is not a text
            with open(path, "rb") as handle:
                first = len(handle.readline())
        cuts = _csv_cuts(path, first, size, chunk_bytes) if kind == "csv" else list(range(first, size, chunk_bytes))
        cuts = [cut for cut in cuts if cut < size] or [first]
        for start, end in zip(cuts, cuts[1:] + [size]):
            chunks.append(Chunk(path, kind, field, start, end, size=end - start))
    return chunks


def _csv_cuts(path: str, first: int, size: int, chunk_bytes: int) -> list[int]:
    """Chunk starts for a CSV: just after a newline outside quotes, at or after every ``chunk_bytes``.

    Outside quotes means an even number of quote bytes since the header (``""`` adds two).
    """
    cuts = [first]
    target = first + chunk_bytes
    odd = 0  # parity of the quote bytes counted so far
    with open(path, "rb") as handle:
        handle.seek(first)
        position = first
        while target < size:
            block = handle.read(_SCAN_BLOCK)
            if not block:
                break
            end = position + len(block)
            scan = 0  # quotes of block[:scan] are counted in ``odd``
            while target < end:
                start = max(scan, target - position)
                odd ^= block.count(b'"', scan, start) & 1
                scan = start
                found = -1
                while (newline := block.find(b"\n", scan)) >= 0:
                    odd ^= block.count(b'"', scan, newline) & 1
                    scan = newline + 1
                    if not odd:
                        found = newline
                        break
                if found < 0:
                    break  # no usable newline in this block: keep looking in the next one
                cuts.append(position + found + 1)
                target = position + found + 1 + chunk_bytes
            odd ^= block.count(b'"', scan) & 1
            position = end
    return cuts


def _decode(raw: bytes, path: str, position: int) -> str:
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError as error:
        raise CorpusReadError(
            f"{path} is not UTF-8 text: byte {position + error.start:,} cannot be decoded; convert the file to UTF-8 "
            "(e.g. iconv -f latin1 -t utf-8)."
        ) from None


def _lines(chunk: Chunk) -> Iterator[tuple[int, bytes]]:
    """``(byte offset, raw line without its newline)`` for every line starting in the chunk."""
    with open(chunk.path, "rb", buffering=1024 * 1024) as handle:
        position = chunk.start
        if position > 0:
            handle.seek(position - 1)
            if handle.read(1) != b"\n":  # the line under ``start`` belongs to the previous chunk
                position += len(handle.readline())
        else:
            handle.seek(0)
        while position < chunk.end:
            raw = handle.readline()
            if not raw:
                break
            yield position, raw
            position += len(raw)


def _strip_newline(raw: bytes) -> bytes:
    if raw.endswith(b"\n"):
        raw = raw[:-1]
        if raw.endswith(b"\r"):
            raw = raw[:-1]
    return raw


def read_chunk(chunk: Chunk) -> Iterator[str]:
    """The texts of one chunk, in file order (txt: lines; jsonl: the field; csv/parquet: the column)."""
    if chunk.format == "txt":
        for position, raw in _lines(chunk):
            text = _decode(_strip_newline(raw), chunk.path, position)
            yield text[1:] if position == 0 and text.startswith("\ufeff") else text
    elif chunk.format == "jsonl":
        for number, (position, raw) in enumerate(_lines(chunk)):
            raw = _strip_newline(raw)
            if not raw.strip():
                continue
            try:
                record = json.loads(raw)
            except ValueError as error:
                raise CorpusReadError(f"{chunk.path}: the line at byte {position:,} is not JSON ({error}).") from None
            if not isinstance(record, dict) or chunk.field not in record:
                keys = ", ".join(map(repr, list(record)[:10])) if isinstance(record, dict) else "it is not an object"
                raise CorpusReadError(f"{chunk.path}: the line at byte {position:,} has no field {chunk.field!r} ({keys}).")
            value = record[chunk.field]
            if value is None:
                continue
            if not isinstance(value, str):
                raise CorpusReadError(f"{chunk.path}: field {chunk.field!r} at byte {position:,} is not text ({type(value).__name__}).")
            yield value
    elif chunk.format == "csv":
        yield from _csv_texts(chunk)
    elif chunk.format == "parquet":
        parquet = _parquet_file(chunk.path)
        for batch in parquet.iter_batches(batch_size=8192, row_groups=[chunk.row_group], columns=[chunk.field]):
            for value in batch.column(0).to_pylist():
                if value is not None:
                    yield value
    else:  # pragma: no cover - plan_chunks only makes the formats above
        raise CorpusReadError(f"Unknown format {chunk.format!r}.")


def _csv_texts(chunk: Chunk) -> Iterator[str]:
    header = _csv_header(chunk.path)
    column = header.index(chunk.field)  # type: ignore[arg-type]
    with open(chunk.path, "rb") as handle:
        handle.seek(chunk.start)
        # the chunk's bytes, read a line at a time; a quoted field's newline is inside the range
        text_stream = io.TextIOWrapper(_Range(handle, chunk.end - chunk.start), encoding="utf-8", newline="")
        reader = csv.reader(text_stream)
        try:
            for row in reader:
                if not row:
                    continue
                if column >= len(row):
                    raise CorpusReadError(
                        f"{chunk.path}: row {reader.line_num} of a chunk has {len(row)} columns, fewer than the header's.")
                yield row[column]
        except UnicodeDecodeError:
            raise CorpusReadError(f"{chunk.path} is not UTF-8 text (between bytes {chunk.start:,} and {chunk.end:,}).") from None
        except csv.Error as error:
            raise CorpusReadError(f"{chunk.path}: not valid CSV between bytes {chunk.start:,} and {chunk.end:,} ({error}).") from None


class _Range(io.RawIOBase):
    """The next ``length`` bytes of ``handle`` as a readable stream."""

    def __init__(self, handle: io.BufferedReader, length: int) -> None:
        self._handle = handle
        self._left = length

    def readable(self) -> bool:
        return True

    def readinto(self, buffer) -> int:  # noqa: ANN001 - a writable buffer
        if self._left <= 0:
            return 0
        data = self._handle.read(min(len(buffer), self._left))
        buffer[: len(data)] = data
        self._left -= len(data)
        return len(data)


def iter_texts(chunks: Sequence[Chunk]) -> Iterator[str]:
    """Every text of every chunk, in corpus order (the serial reader)."""
    for chunk in chunks:
        yield from read_chunk(chunk)


# --------------------------------------------------------------------------- counting


_COUNTERS: dict = {}


def count_chunk(chunk: Chunk, config: "PipelineConfig") -> "Counter[str]":
    """The word counts of one chunk through ``config``'s normalizers and pre-tokenizers (runs on a worker).

    A chunk of blank lines gives an empty Counter; the caller checks the merged counts.
    """
    from tokviz.pipeline_config import build_normalizer, build_pre_tokenizer
    from tokviz.word_counts import count_words

    stages = _COUNTERS.get(config)
    if stages is None:  # built once per worker process and pipeline
        stages = _COUNTERS[config] = (build_normalizer(config), build_pre_tokenizer(config))
    return count_words(read_chunk(chunk), stages[0], stages[1], empty_ok=True)


def merge_in_order(results: "Iterator[tuple[int, Counter[str]]]", total: int,
                   on_merged: "Callable[[int], None] | None" = None) -> "Counter[str]":
    """Merge ``(chunk index, counts)`` arriving in any order into one Counter, in chunk order.

    Merging in corpus order keeps the serial count's first-seen word order (what the trainers'
    ``first_seen`` tie-break reads); a result that arrives early waits for the ones before it.

    >>> from collections import Counter
    >>> merged = merge_in_order(iter([(1, Counter(b=1, c=1)), (0, Counter(a=1, b=1))]), 2)
    >>> list(merged.items())
    [('a', 1), ('b', 2), ('c', 1)]
    """
    from collections import Counter

    merged: Counter[str] = Counter()
    waiting: dict[int, Counter[str]] = {}
    next_index = 0
    for index, counts in results:
        waiting[index] = counts
        while next_index in waiting:
            merged.update(waiting.pop(next_index))
            if on_merged is not None:
                on_merged(next_index)
            next_index += 1
    if next_index != total:
        raise RuntimeError(f"Only {next_index} of {total} chunks were counted.")
    return merged


def count_serial(chunks: Sequence[Chunk], config: "PipelineConfig",
                 on_chunk: "Callable[[int], None] | None" = None) -> "Counter[str]":
    """Count every chunk in this process, in order (the reference the parallel count equals)."""
    return merge_in_order(((index, count_chunk(chunk, config)) for index, chunk in enumerate(chunks)), len(chunks), on_chunk)


def count_parallel(chunks: Sequence[Chunk], config: "PipelineConfig", client: "Any",
                   on_chunk: "Callable[[int], None] | None" = None) -> "Counter[str]":
    """Count the chunks on a ``dask.distributed`` ``client``'s workers and merge the counts in chunk order.

    Each chunk is a task (a path and a byte range or row group, a few hundred bytes); its
    result, one Counter, is fetched and released as soon as it is done, so the client holds
    the merged counts plus the results that arrived ahead of their turn.
    """
    from distributed import as_completed

    futures = [client.submit(count_chunk, chunk, config, pure=False) for chunk in chunks]
    index_of = {future.key: index for index, future in enumerate(futures)}

    def results() -> "Iterator[tuple[int, Counter[str]]]":
        try:
            for future, counts in as_completed(futures, with_results=True):
                index = index_of[future.key]
                futures[index] = None  # type: ignore[call-overload]  # release the worker's copy
                yield index, counts
        finally:
            live = [future for future in futures if future is not None]
            if live:
                client.cancel(live)

    return merge_in_order(results(), len(chunks), on_chunk)
