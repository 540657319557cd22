"""Corpus statistics and uploads: what a user pasted or uploaded, in numbers a teacher can read out loud.

Uploads (.txt, .md, .csv, .tsv, .jsonl, .json) become training text here: non-UTF-8 files
are decoded with a notice saying what was guessed, binary and oversized files are refused
with :class:`tokviz.errors.CorpusReadError`, tables give a column to train on. What this
leaves out: Excel and Parquet files, encodings other than UTF-8 / UTF-16 / Windows-1252.

>>> stats = corpus_stats("a가 짧\\nab")
>>> (stats.characters, stats.utf8_bytes, stats.lines, stats.distinct_characters)
(7, 11, 2, 6)
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # pragma: no cover
    import pandas as pd


@dataclass(frozen=True, slots=True)
class CorpusStats:
    characters: int
    utf8_bytes: int
    lines: int
    non_empty_lines: int
    distinct_characters: int


def corpus_stats(text: str) -> CorpusStats:
    """Counts over the raw text (before any normalizer); lines as ``str.splitlines`` sees them."""
    lines = text.splitlines()
    return CorpusStats(
        characters=len(text),
        utf8_bytes=len(text.encode("utf-8", errors="surrogatepass")),
        lines=len(lines),
        non_empty_lines=sum(1 for line in lines if line.strip()),
        distinct_characters=len(set(text)),
    )


# ---------------------------------------------------------------------------------------
# Uploads: bytes -> text, with a notice when something had to be guessed


#: File types the Train page accepts; tabular ones get a column / field picker.
TEXT_SUFFIXES = (".txt", ".md")
TABLE_SUFFIXES = (".csv", ".tsv", ".jsonl", ".json")
UPLOAD_SUFFIXES = TEXT_SUFFIXES + TABLE_SUFFIXES

_MAGIC = (
    (b"PK\x03\x04", "a ZIP archive (or a .docx/.xlsx, which are ZIP archives)"),
    (b"%PDF", "a PDF document"),
    (b"\x89PNG", "a PNG image"),
    (b"\xff\xd8\xff", "a JPEG image"),
    (b"GIF8", "a GIF image"),
    (b"\x1f\x8b", "a gzip archive"),
    (b"\x7fELF", "a program (ELF executable)"),
)
_BOMS = (
    (b"\xef\xbb\xbf", "utf-8-sig", "UTF-8 with a byte-order mark"),
    (b"\xff\xfe", "utf-16", "UTF-16 (little-endian)"),
    (b"\xfe\xff", "utf-16", "UTF-16 (big-endian)"),
)


@dataclass(frozen=True, slots=True)
class DecodedText:
    """Text decoded from an upload; ``notice`` says in a sentence what was guessed, if anything."""

    text: str
    encoding: str
    notice: str | None = None


@dataclass(frozen=True, slots=True)
class CorpusUpload:
    """What an upload became: the training text, plus the column choice for tabular files."""

    name: str
    text: str
    notice: str | None = None
    columns: tuple[str, ...] = ()
    column: str | None = None
    rows: int = 0


def _size_text(size: int) -> str:
    return f"{size / (1024 * 1024):.1f} MB" if size >= 1024 * 1024 else f"{size:,} bytes"


def decode_upload(data: bytes, name: str = "upload", max_bytes: int | None = None) -> DecodedText:
    """Decode uploaded bytes as text, refusing binary files and files above the size limit.

    UTF-8 is tried first (a BOM is dropped); UTF-16 is used when its BOM says so; anything
    else is decoded as Windows-1252 — every byte maps to a character — with a notice,
    since that guess can be wrong for other legacy encodings.

    >>> decode_upload("naïve".encode("utf-8")).notice is None
    True
    >>> decoded = decode_upload("naïve".encode("cp1252"), "old.txt")
    >>> decoded.text, decoded.encoding
    ('naïve', 'cp1252')
    """
    from tokviz.errors import CorpusReadError
    from tokviz.limits import MAX_UPLOAD_BYTES

    limit = MAX_UPLOAD_BYTES if max_bytes is None else max_bytes
    if len(data) > limit:
        raise CorpusReadError(
            f"{name} is {_size_text(len(data))}, above this server's upload limit of {_size_text(limit)}; "
            "upload a smaller part of it."
        )
    for signature, what in _MAGIC:
        if data.startswith(signature):
            raise CorpusReadError(f"{name} looks like {what}, not text; save it as plain text (.txt) or CSV first.")
    for bom, encoding, label in _BOMS:
        if data.startswith(bom):
            try:
                text = data.decode(encoding)
            except UnicodeDecodeError:
                break
            notice = None if encoding == "utf-8-sig" else f"{name} is {label}; it was converted to text."
            return DecodedText(text, encoding, notice)
    head = data[:65536]
    if b"\x00" in head:
        unmarked = _utf16_without_bom(data, name)
        if unmarked is not None:
            return unmarked
        raise CorpusReadError(f"{name} contains NUL bytes, so it is a binary file, not text.")
    controls = sum(1 for byte in head if byte < 32 and byte not in (9, 10, 12, 13))
    if head and controls / len(head) > 0.05:
        raise CorpusReadError(f"{name} is mostly control bytes, so it is a binary file, not text.")
    try:
        return DecodedText(data.decode("utf-8"), "utf-8")
    except UnicodeDecodeError as error:
        bad_at = error.start
    text = data.decode("cp1252", errors="replace")
    return DecodedText(
        text,
        "cp1252",
        f"{name} is not valid UTF-8 (the first invalid byte, 0x{data[bad_at]:02X}, is at byte {bad_at:,}); "
        "it was decoded as Windows-1252 (Western European). If accented letters look wrong, save the file as UTF-8.",
    )


def _utf16_without_bom(data: bytes, name: str) -> DecodedText | None:
    """UTF-16 text saved without a byte-order mark (Windows tools do), or None.

    Its NUL bytes are the high bytes of Latin characters, so they sit on one side of each byte pair:
    at odd offsets in little-endian, even ones in big-endian. Binary files hold NULs on both sides.

    >>> _utf16_without_bom("naïve text".encode("utf-16-le"), "a.txt").text
    'naïve text'
    >>> _utf16_without_bom(bytes(range(256)) * 4, "a.bin") is None
    True
    """
    head = data[:65536]
    if len(data) % 2 or len(head) < 4:
        return None
    even, odd = head[0::2].count(0), head[1::2].count(0)
    pairs = len(head) // 2
    for nuls, other, encoding, label in ((odd, even, "utf-16-le", "little-endian"), (even, odd, "utf-16-be", "big-endian")):
        if nuls >= 0.3 * pairs and other <= 0.01 * pairs:
            try:
                text = data.decode(encoding)
            except UnicodeDecodeError:
                return None
            return DecodedText(text, encoding, f"{name} is UTF-16 ({label}) without a byte-order mark; it was converted to text.")
    return None


def read_table(text: str, name: str) -> "pd.DataFrame":
    """Read CSV / TSV / JSON Lines / JSON text into a DataFrame with pandas; errors become CorpusReadError.

    >>> read_table("id,text\\n1,hello\\n2,world\\n", "a.csv")["text"].tolist()
    ['hello', 'world']
    """
    import io

    import pandas as pd

    from tokviz.errors import CorpusReadError

    suffix = _suffix(name)
    try:
        if suffix in (".csv", ".tsv"):
            frame = _read_delimited(text, "\t" if suffix == ".tsv" else ",")
        elif suffix == ".jsonl":
            frame = pd.read_json(io.StringIO(text), lines=True, dtype=False)
            _check_depth((value for value in frame.to_numpy(dtype=object).ravel() if isinstance(value, (dict, list))), name, 1)
        else:
            import json

            try:
                loaded = json.loads(text)
            except RecursionError:  # Python's parser gives up near 1,000 levels: the same sentence as above the limit
                _check_depth(([],), name, _max_depth() + 1)
            _check_depth((loaded,), name, 0)
            if isinstance(loaded, dict):
                # {"text": [...], ...} (columns) or {"data": [{...}, ...]} (records under one key)
                lists = {key: value for key, value in loaded.items() if isinstance(value, list)}
                if len(lists) == 1 and all(isinstance(item, dict) for item in next(iter(lists.values()))):
                    loaded = next(iter(lists.values()))
                else:
                    loaded = lists or [loaded]
            if isinstance(loaded, list) and loaded and not isinstance(loaded[0], dict):
                loaded = {"value": loaded}
            frame = pd.DataFrame(loaded)
    except CorpusReadError:
        raise
    except (ValueError, TypeError) as error:
        if "depth limit" in str(error):  # pandas' JSON Lines parser stops at 1,024 levels
            _check_depth(([],), name, _max_depth() + 1)
        raise CorpusReadError(f"{name} could not be read as {suffix[1:].upper()}: {str(error).splitlines()[0]}") from error
    if frame.empty or not len(frame.columns):
        raise CorpusReadError(f"{name} has no rows or no columns to train on.")
    frame.columns = [str(column) for column in frame.columns]
    return frame


#: Deepest nesting of values in a JSON / JSON Lines corpus: the server's one JSON depth limit
#: (:data:`tokviz.limits.MAX_JSON_DEPTH`, 40). A corpus is text in fields; a nested field is trained on
#: as its JSON text, and real records nest a few levels. Far deeper values (a ``.json`` of 100,000
#: ``[``, a JSON Lines object 1,000 deep) raised ``RecursionError`` when read or turned into text, and
#: the rest of the page, its Train button included, was not drawn.
def _max_depth() -> int:
    from tokviz.limits import MAX_JSON_DEPTH

    return MAX_JSON_DEPTH


def _check_depth(values: Any, name: str, start: int) -> None:
    """Refuse values nested deeper than :func:`_max_depth` (``start``: the depth of ``values``
    themselves), walked without recursion.

    >>> _check_depth(([[["a"]]],), "a.json", 0)
    >>> _check_depth(([[["a"]]],), "a.json", _max_depth() - 1)
    Traceback (most recent call last):
    ...
    tokviz.errors.CorpusReadError: a.json nests its values more than 40 levels deep (TOKVIZ_MAX_JSON_DEPTH); a corpus is text in fields (JSON Lines: one object per line, each field text).
    """
    from tokviz.errors import CorpusReadError

    limit = _max_depth()
    stack = [(value, start) for value in values]
    while stack:
        value, depth = stack.pop()
        if depth > limit:
            raise CorpusReadError(f"{name} nests its values more than {limit} levels deep (TOKVIZ_MAX_JSON_DEPTH); a corpus is text in fields "
                                  "(JSON Lines: one object per line, each field text).")
        children = value.values() if isinstance(value, dict) else value
        stack.extend((child, depth + 1) for child in children if isinstance(child, (dict, list)))


def _read_delimited(text: str, delimiter: str) -> "pd.DataFrame":
    """A CSV / TSV as a table of strings, read in one pass with the ``csv`` module into one block of cells.

    pandas' ``read_csv`` makes a column object per column (0.95 s for a 100 KB file of 10,000 columns);
    this is linear in the file. Like ``read_csv(dtype=str, keep_default_na=False)``: the first row
    names the columns (empty names become ``Unnamed: i``, repeated ones ``name.1``, ``name.2``),
    blank lines are skipped, short rows end in missing cells, and a row with more cells than the
    header is an error naming its line.

    >>> _read_delimited('id,text,text\\n1,"a, b"\\n\\n2,c,d\\n', ",").values.tolist()
    [['1', 'a, b', None], ['2', 'c', 'd']]
    >>> list(_read_delimited('id,text,text\\n1,x,y\\n', ",").columns)
    ['id', 'text', 'text.1']
    """
    import csv
    import io

    import numpy as np
    import pandas as pd

    reader = csv.reader(io.StringIO(text), delimiter=delimiter)
    header: list[str] | None = None
    rows: list[list[str | None]] = []
    for row in reader:
        if not row or (len(row) == 1 and not row[0].strip() and header is not None):
            continue  # a blank line
        if header is None:
            header = row
            continue
        if len(row) > len(header):
            raise ValueError(f"Expected {len(header)} fields in line {reader.line_num}, saw {len(row)}")
        rows.append(row + [None] * (len(header) - len(row)) if len(row) < len(header) else row)
    if header is None:
        raise ValueError("No columns to parse from file")
    names: list[str] = []
    seen: dict[str, int] = {}
    for position, name in enumerate(header):
        name = name or f"Unnamed: {position}"
        if name in seen:
            seen[name] += 1
            name = f"{name}.{seen[name]}"
        seen.setdefault(name, 0)
        names.append(name)
    cells = np.empty((len(rows), len(names)), dtype=object)
    if rows:
        cells[:, :] = rows
    return pd.DataFrame(cells, columns=names, dtype=object, copy=False)  # one block of cells: no inference per column


def text_columns(frame: "pd.DataFrame") -> list[str]:
    """Columns worth training on, best first: those holding mostly text, by average text length.

    Computed on the whole table at once (one pass over its cells), not column by column: a 100 KB
    CSV of 10,000 columns took 98 s when each column was looked at on its own.

    >>> import pandas as pd
    >>> text_columns(pd.DataFrame({"id": [1, 2], "title": ["a", "bb"], "review": ["great film", None]}))
    ['review', 'title']
    """
    import numpy as np
    import pandas as pd

    cells = frame.to_numpy(dtype=object)
    present = ~pd.isna(cells)
    lengths = np.frompyfunc(lambda value: len(value) if isinstance(value, str) else -1, 1, 1)(cells).astype(np.int64)
    is_text = (lengths >= 0) & present
    values = present.sum(axis=0)
    texts = is_text.sum(axis=0)
    total_length = np.where(is_text, lengths, 0).sum(axis=0)
    scored = [(-int(total_length[position]) / int(texts[position]), position, column)
              for position, column in enumerate(frame.columns)
              if values[position] and texts[position] * 2 >= values[position]]
    return [column for _, _, column in sorted(scored)] or [str(column) for column in frame.columns]


def column_text(frame: "pd.DataFrame", column: str, name: str = "the file") -> str:
    """One line per non-empty cell of ``column`` (newlines inside a cell kept)."""
    from tokviz.errors import CorpusReadError

    if column not in frame.columns:
        raise CorpusReadError(f"{name} has no column {column!r}; its columns are: {', '.join(map(str, frame.columns))}.")
    values = [value if isinstance(value, str) else str(value) for value in frame[column].dropna().tolist()]
    return "\n".join(value for value in values if value.strip())


def read_upload(data: bytes, name: str, column: str | None = None, max_bytes: int | None = None) -> CorpusUpload:
    """Turn an upload into training text: plain text as is, tables through a chosen column.

    >>> upload = read_upload(b"id,review\\n1,great film\\n2,too long\\n", "reviews.csv")
    >>> upload.columns, upload.column, upload.text
    (('review', 'id'), 'review', 'great film\\ntoo long')
    """
    from tokviz.errors import CorpusReadError

    suffix = _suffix(name)
    if suffix not in UPLOAD_SUFFIXES:
        raise CorpusReadError(f"{name}: tokviz reads {', '.join(UPLOAD_SUFFIXES)} files, not {suffix or 'files without an extension'}.")
    decoded = decode_upload(data, name, max_bytes)
    if suffix in TEXT_SUFFIXES:
        return CorpusUpload(name, decoded.text, decoded.notice)
    frame = read_table(decoded.text, name)
    columns = tuple(text_columns(frame))
    chosen = column if column is not None else columns[0]
    return CorpusUpload(name, column_text(frame, chosen, name), decoded.notice, columns, chosen, len(frame))


def _suffix(name: str) -> str:
    dot = name.rfind(".")
    return name[dot:].lower() if dot > 0 else ""


# ---------------------------------------------------------------------------------------
# Held-out lines and a stable key for caching


@dataclass(frozen=True, slots=True)
class CorpusSplit:
    train_lines: tuple[str, ...]
    test_lines: tuple[str, ...]


def held_out_split(text: str, every: int = 10, max_test_lines: int = 40) -> CorpusSplit:
    """Hold out every ``every``-th non-empty line (spread over the corpus) as test text.

    A corpus of fewer than ``every`` non-empty lines keeps all of them for training and tests
    on its first line, so even a one-line corpus has something to show.

    >>> split = held_out_split("\\n".join(f"line {i}" for i in range(25)))
    >>> split.test_lines, len(split.train_lines)
    (('line 9', 'line 19'), 23)
    """
    lines = [line for line in text.splitlines() if line.strip()]
    if len(lines) < every:
        return CorpusSplit(tuple(lines), tuple(lines[:1]))
    held = set(list(range(every - 1, len(lines), every))[:max_test_lines])
    train = [line for index, line in enumerate(lines) if index not in held]
    return CorpusSplit(tuple(train), tuple(lines[index] for index in sorted(held)))


def corpus_hash(text: str) -> str:
    """A short stable fingerprint of a corpus, for cache keys: ``corpus_hash('') == 'e3b0c44298fc1c14'``."""
    import hashlib

    return hashlib.sha256(text.encode("utf-8", errors="surrogatepass")).hexdigest()[:16]
