"""Table files read whole (CSV, TSV, Parquet, compressed or not) and the cell types a table may hold.

Every failure a file can cause is a :class:`~depgraph.errors.DepgraphError`
naming the file once, and the line or column at fault:

* CSV/TSV is parsed by pyarrow's multi-threaded reader, every cell as text,
  with the delimiter its header uses (:func:`header_delimiter`: ``,`` ``;``
  tab or ``|``, whatever the file's extension). A row with more or fewer
  fields than the header is a ``parse`` error naming its line (the first
  column is never taken as an index, a short row is never padded); so are
  bytes that are not UTF-8 (unless an ``encoding`` is given), NUL bytes, and
  files of another kind (a workbook, Parquet or UTF-16 text under a ``.csv``
  name). Rows of nothing but delimiters and blanks at the end of the file (as
  spreadsheets write them) are not rows.
* An Excel workbook (``.xlsx``) is read through pandas and openpyxl, its cells
  typed by Excel and checked by :func:`checked_frame`'s rules.
* A compressed file (``.gz``, ``.bz2``, ``.xz``, ``.zst``, ``.zip``) that is
  truncated or corrupt is a ``parse`` error.
* Column names are read as written: a name given twice (also after stripping
  blanks) is a ``schema`` error, never renamed ``name.1``; a column without a
  name is dropped when it is empty (a trailing separator) and refused otherwise.
* Arrow-typed tables (Parquet, pyarrow, polars) follow :func:`frame_from_arrow`'s
  rules; pandas frames :func:`checked_frame`'s.

>>> import pyarrow as pa
>>> frame_from_arrow(pa.table({"sample_id": ["S1"], "n": [3]}), "metadata").dtypes.astype(str).tolist()
['str', 'int64']
"""

from __future__ import annotations

import bz2
import codecs
import contextlib
import gzip
import io
import lzma
import mmap
import zipfile
import zlib
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import orjson
import pandas as pd
import pyarrow as pa
import pyarrow.csv as pacsv
import pyarrow.parquet as pq

from depgraph.common.arrays import needs_trimming
from depgraph.errors import DepgraphError, describe_ids
from depgraph.io.delimited import (
    BOM,
    EXTENSION_DELIMITERS,
    checked_delimiter,
    checked_encoding,
    content_end,
    header_delimiter,
    not_utf8,
    to_utf8,
)

#: Cell values read as missing in CSV/TSV files (what R, pandas and spreadsheets write).
MISSING_TOKENS: tuple[str, ...] = ("", "NA", "NaN", "nan", "NULL", "null", "None", "N/A", "<NA>")

#: Compression suffixes read through, and the codec behind each.
COMPRESSIONS: dict[str, str] = {".gz": "gzip", ".bz2": "bzip2", ".xz": "xz", ".zst": "zstd", ".zip": "zip"}

_SHOWN = 5  # offending lines named in a message

#: Excel workbooks read through pandas and openpyxl.
EXCEL_SUFFIXES: tuple[str, ...] = (".xlsx", ".xlsm")

#: Workbook formats refused with a hint, and what each is.
_UNREAD_WORKBOOKS: dict[str, str] = {
    ".xls": "an Excel 97-2003 workbook (.xls)",
    ".xlsb": "an Excel binary workbook (.xlsb)",
    ".ods": "an OpenDocument spreadsheet (.ods)",
    ".numbers": "an Apple Numbers document",
}

#: The key of a frame's ``attrs`` that tells how the text file it was read from wrote its values (:func:`text_layout`).
TEXT_LAYOUT = "depgraph.text_layout"

#: Leading bytes of files that are not delimited text, and what they are.
_MAGIC: tuple[tuple[bytes, str], ...] = (
    (b"PK\x03\x04", "a ZIP archive (an Excel workbook? name it .xlsx)"),
    (b"\xd0\xcf\x11\xe0", "an OLE2 document (an Excel .xls workbook?)"),
    (b"\x1f\x8b", "gzip-compressed"),
    (b"\xfd7zXZ\x00", "xz-compressed"),
    (b"\x28\xb5\x2f\xfd", "Zstandard-compressed"),
    (b"\xff\xfe", "UTF-16 text"),
    (b"\xfe\xff", "UTF-16 text"),
)


# --------------------------------------------------------------------------- files
def table_kind(path: Path) -> tuple[str, str | None]:
    """The table suffix (``.csv``, ``.parquet``...) and compression suffix of ``path``.

    >>> table_kind(Path("cohort.tsv.gz")), table_kind(Path("cohort.csv"))
    (('.tsv', '.gz'), ('.csv', None))
    """
    suffixes = [s.lower() for s in path.suffixes]
    compression = suffixes[-1] if suffixes and suffixes[-1] in COMPRESSIONS else None
    if compression:
        suffixes = suffixes[:-1]
    return (suffixes[-1] if suffixes else ""), compression


def read_table_file(
    path: Path,
    label: str,
    *,
    encoding: str | None = None,
    sheet: str | int | None = None,
    delimiter: str | None = None,
) -> pd.DataFrame:
    """A CSV/TSV/Parquet/Excel file (``label`` names it in messages: ``metadata 'x.csv'``).

    ``encoding`` is the text encoding of a text table (default UTF-8, with or
    without a byte-order mark; it does not apply to Parquet or Excel files);
    ``sheet`` names an Excel workbook's sheet (a name, or its number counted
    from 1; default the first) and applies to workbooks only; ``delimiter`` (one
    of :data:`~depgraph.io.delimited.DELIMITERS`) is a text table's delimiter,
    used as given instead of the one its header suggests.
    """
    kind, compression = table_kind(path)
    codec = checked_encoding(encoding)
    delimiter = checked_delimiter(delimiter)
    if delimiter is not None and kind in (".parquet", ".pq", *EXCEL_SUFFIXES):
        raise DepgraphError(
            "invalid_argument", f"a delimiter applies to text tables (CSV, TSV); {label} is not one", path=str(path)
        )
    if sheet is not None and kind not in EXCEL_SUFFIXES:
        raise DepgraphError(
            "invalid_argument",
            f"a sheet (--sheet, sheet=) applies to Excel workbooks (.xlsx); {label} is not one",
            path=str(path),
        )
    if kind in _UNREAD_WORKBOOKS:
        raise DepgraphError(
            "parse",
            f"{label} is {_UNREAD_WORKBOOKS[kind]}, which depgraph does not read; save it as .xlsx or as CSV UTF-8",
            path=str(path),
        )
    if path.stat().st_size == 0:
        raise DepgraphError("empty_input", f"{label} is empty (0 bytes)", path=str(path))
    data = decompressed(path, compression, label) if compression else _mapped(path, label)
    if kind in (".parquet", ".pq"):
        return _read_parquet(data, path, label)
    if kind in EXCEL_SUFFIXES:
        return _read_excel(data, path, label, sheet)
    return _read_text(data, EXTENSION_DELIMITERS.get(kind), path, label, codec, delimiter)


def decompressed(path: Path, compression: str, label: str) -> bytes:
    """The bytes of a compressed file; a truncated or corrupt one is a ``parse`` error."""
    codec = COMPRESSIONS[compression]
    try:
        if codec == "gzip":
            with gzip.open(path, "rb") as handle:
                return handle.read()
        if codec == "bzip2":
            with bz2.open(path, "rb") as handle:
                return handle.read()
        if codec == "xz":
            with lzma.open(path, "rb") as handle:
                return handle.read()
        if codec == "zstd":
            with pa.input_stream(str(path), compression="zstd") as stream:
                return stream.read()
        with zipfile.ZipFile(path) as archive:
            members = [m for m in archive.infolist() if not m.is_dir()]
            if len(members) != 1:
                raise DepgraphError(
                    "parse",
                    f"{label} is a ZIP archive of {len(members)} files; depgraph reads a .zip holding one table",
                    path=str(path),
                )
            return archive.read(members[0])
    except (PermissionError, FileNotFoundError) as exc:
        raise DepgraphError("io", f"{label} cannot be read: {exc.strerror}", path=str(path)) from None
    except (EOFError, OSError, zlib.error, lzma.LZMAError, zipfile.BadZipFile, pa.ArrowException) as exc:
        reason = _first_line_of(exc)
        raise DepgraphError(
            "parse", f"{label} is not a valid {codec} file (truncated or corrupt?): {reason}", path=str(path)
        ) from None


def compression_failure(exc: BaseException) -> bool:
    """Whether ``exc``, raised while reading a compressed stream, says the data is bad (not the disk)."""
    if isinstance(exc, (PermissionError, FileNotFoundError, IsADirectoryError)):
        return False
    return isinstance(exc, (EOFError, OSError, zlib.error, lzma.LZMAError, zipfile.BadZipFile))


def _mapped(path: Path, label: str) -> bytes | mmap.mmap:
    """The file's bytes without a copy (memory-mapped), or read when it cannot be mapped."""
    try:
        with open(path, "rb") as handle:
            try:
                return mmap.mmap(handle.fileno(), 0, access=mmap.ACCESS_READ)
            except (ValueError, OSError):  # not a regular file (a FIFO...)
                return handle.read()
    except OSError as exc:
        raise DepgraphError("io", f"{label} cannot be read: {exc.strerror}", path=str(path)) from None


def _first_line_of(exc: BaseException) -> str:
    text = str(exc).strip()
    return text.splitlines()[0] if text else type(exc).__name__


# --------------------------------------------------------------------------- CSV / TSV
def _read_text(
    data: bytes | mmap.mmap,
    preferred: str | None,
    path: Path,
    label: str,
    encoding: str | None = None,
    delimiter: str | None = None,
) -> pd.DataFrame:
    """Every cell as text, through pyarrow, with ``delimiter`` or else the delimiter the header uses
    (:func:`~depgraph.io.delimited.header_delimiter`); the failures a user can cause named by line."""
    _refuse_other_kinds(data, path, label, encoding)
    if encoding is not None:
        data = to_utf8(data, encoding, path, label)
    start = len(BOM) if bytes(data[: len(BOM)]) == BOM else 0
    if not data[start : start + (1 << 16)].strip() and not bytes(data[start:]).strip():
        raise DepgraphError("empty_input", f"{label} has no header line (only blank lines)", path=str(path))
    nul = data.find(b"\x00")
    if nul >= 0:
        raise DepgraphError(
            "parse",
            f"{label} holds a NUL byte at line {_line_at(data, nul)} ({_nul_hint(data, start)})",
            path=str(path),
        )
    found = header_delimiter(bytes(data[start : start + (1 << 16)]), preferred)
    if delimiter and found and found != delimiter and delimiter not in _header_line(data, start):
        raise DepgraphError(
            "parse",
            f"{label} is to be read with the delimiter {delimiter!r}, which its header line does not hold; the header "
            f"is separated by {found!r} (give that delimiter, or none to read it from the header)",
            path=str(path),
        )
    sep = delimiter or found or preferred or ","
    end = content_end(data, sep)
    buffer = pa.py_buffer(data).slice(start, end - start)  # without the BOM and the rows of nothing at the end
    try:
        table = _parse(buffer, sep)
    except pa.ArrowInvalid as exc:
        message = str(exc)
        if "Empty CSV file" in message:  # a header line without a line break after it
            try:
                table = _parse(pa.py_buffer(buffer.to_pybytes() + b"\n"), sep)
            except pa.ArrowInvalid:
                raise DepgraphError(
                    "parse",
                    f"{label} cannot be parsed: its header line never ends (a quote opened in it is never closed?)",
                    path=str(path),
                ) from None
        elif "Expected" in message and "columns, got" in message:
            raise _ragged(buffer, sep, path, label) from None
        elif "UTF8" in message or "UTF-8" in message:
            raise not_utf8(data, path, label) from None
        else:
            raise DepgraphError("parse", f"{label} cannot be parsed: {_first_line_of(exc)}", path=str(path)) from None
    try:
        table.schema.names  # noqa: B018 - pyarrow checks the cells' UTF-8, not the header's: decoding it does
    except UnicodeDecodeError:
        raise not_utf8(data, path, label) from None
    frame = frame_from_arrow(table, label, text=True)
    frame = frame.apply(_missing_to_nan) if len(frame.columns) else frame
    frame.attrs[TEXT_LAYOUT] = {"delimiter": sep, "decimal": "," if sep == ";" else "."}
    return frame


def _header_line(data: bytes | mmap.mmap, start: int) -> str:
    """The first line of the text after ``start`` that is not blank, decoded as far as it decodes."""
    lines = bytes(data[start : start + (1 << 16)]).decode("utf-8", "replace").splitlines()
    return next((line for line in lines if line.strip()), "")


def text_layout(frame: pd.DataFrame) -> dict[str, str] | None:
    """How the text file a frame was read from wrote its values: its ``delimiter`` and ``decimal`` mark (``,`` in a
    semicolon-separated file, ``.`` otherwise); None for a frame that was not read from text (its cells are typed).

    Read it right after :func:`read_table_file` (pandas carries a frame's ``attrs`` through most, not all, steps).
    """
    layout = frame.attrs.get(TEXT_LAYOUT)
    return dict(layout) if isinstance(layout, dict) else None


def _parse(buffer: pa.Buffer, sep: str, **read: Any) -> pa.Table:
    options = {"null_values": list(MISSING_TOKENS), "strings_can_be_null": True}
    try:
        convert = pacsv.ConvertOptions(default_column_type=pa.large_string(), **options)
    except TypeError:  # pyarrow < 25: every column named, from the header, as text
        names = pacsv.open_csv(pa.BufferReader(buffer), parse_options=pacsv.ParseOptions(delimiter=sep)).schema.names
        convert = pacsv.ConvertOptions(column_types=dict.fromkeys(names, pa.large_string()), **options)
    return pacsv.read_csv(
        pa.BufferReader(buffer),
        read_options=pacsv.ReadOptions(**read),
        parse_options=pacsv.ParseOptions(delimiter=sep),
        convert_options=convert,
    )


def _ragged(buffer: pa.Buffer, sep: str, path: Path, label: str) -> DepgraphError:
    """The rows whose field count differs from the header's, by file line.

    Read again on one thread (pyarrow numbers rows only then), counting blank
    lines, so a row's number is its line in the file (the header is line 1; a
    quoted value spanning several lines counts as one)."""
    bad: list[tuple[int, int, int, str]] = []

    def collect(row: Any) -> str:
        if row.text.strip():  # blank lines are skipped, as the first read did
            bad.append((row.number, row.expected_columns, row.actual_columns, row.text))
        return "skip"

    if not _is_utf8(buffer):  # pyarrow decodes each bad row's text for the handler: bytes must be UTF-8 first
        return not_utf8(buffer, path, label)
    with contextlib.suppress(pa.ArrowInvalid):  # the lines collected before the reader stopped are named
        pacsv.read_csv(
            pa.BufferReader(buffer),
            read_options=pacsv.ReadOptions(use_threads=False),
            parse_options=pacsv.ParseOptions(delimiter=sep, ignore_empty_lines=False, invalid_row_handler=collect),
            convert_options=pacsv.ConvertOptions(include_columns=[]),
        )
    if not bad:
        return DepgraphError(
            "parse", f"{label} cannot be parsed: rows differ in their number of fields", path=str(path)
        )
    number, expected, actual, text = bad[0]
    lines = [b[0] for b in bad]
    hint = " (a quote opened there is never closed?)" if '"' in text and "\n" in text else ""
    if len(bad) == 1:
        where = f"line {number} has {actual} field(s) where the header has {expected}{hint}"
    else:
        where = (
            f"lines {describe_ids(lines, _SHOWN)} do not have the header's {expected} fields "
            f"(line {number} has {actual}){hint}"
        )
    return DepgraphError("parse", f"{label} cannot be parsed: {where}", path=str(path), lines=lines)


def _is_utf8(data: bytes | mmap.mmap | pa.Buffer) -> bool:
    try:
        codecs.decode(memoryview(data), "utf-8")
    except UnicodeDecodeError:
        return False
    return True


def _nul_hint(data: bytes | mmap.mmap, start: int) -> str:
    """What a file holding NUL bytes may be: UTF-16 text without a byte-order mark has one in every other byte."""
    head = bytes(data[start : start + 64])
    for order, zeros in (("le", head[1::2]), ("be", head[0::2])):
        if len(zeros) >= 2 and not zeros.strip(b"\x00"):
            return (
                f"UTF-16 text without a byte-order mark? read it with --encoding utf-16-{order} on the command line, "
                f"encoding='utf-16-{order}' in Python, or save it as UTF-8"
            )
    return "a binary file, or not UTF-8 text?"


def _line_at(data: bytes | mmap.mmap, position: int) -> int:
    """The 1-based line of a byte position (an error path: the bytes before it are copied)."""
    return bytes(data[:position]).count(b"\n") + 1


def _refuse_other_kinds(data: bytes | mmap.mmap, path: Path, label: str, encoding: str | None = None) -> None:
    head = bytes(data[:10])
    kind = next((k for magic, k in _MAGIC if head.startswith(magic)), None)
    if kind is None and head.startswith(b"PAR1") and bytes(data[-4:]) == b"PAR1":  # Parquet: at both ends
        kind = "a Parquet file"
    if kind is None and head[:3] == b"BZh" and head[3:4].isdigit() and head[4:10] == b"1AY&SY":
        kind = "bzip2-compressed"
    if kind is not None and kind.startswith("UTF-16"):
        if encoding is not None:  # a byte-order mark of UTF-16 (or UTF-32): the named encoding decodes it or not
            return
        kind = "UTF-16 text (read it with --encoding utf-16, encoding='utf-16' in Python, or save it as UTF-8)"
    if kind is not None:
        raise DepgraphError("parse", f"{label} is {kind}, not delimited text", path=str(path))


def _missing_to_nan(column: pd.Series) -> pd.Series:
    """Cells stripped of surrounding blanks; the missing tokens become NaN. The
    parser already made exact tokens missing: a column with no blank space to
    strip is left as it is."""
    if not _may_need_stripping(column):
        return column
    text = column.str.strip()
    return text.where(~text.isin(MISSING_TOKENS))


def _may_need_stripping(column: pd.Series) -> bool:
    """False only when no cell can start or end with blank space (read from the
    Arrow buffers, one byte per end: cheaper than stripping a million cells)."""
    if column.dtype == object or not pd.api.types.is_string_dtype(column.dtype):
        return True
    try:
        return needs_trimming(pa.array(column.array))
    except (TypeError, ValueError, pa.ArrowException):  # not Arrow-backed text after all
        return True


# --------------------------------------------------------------------------- Parquet
def _read_parquet(data: bytes | mmap.mmap, path: Path, label: str) -> pd.DataFrame:
    try:
        parquet = pq.ParquetFile(pa.BufferReader(pa.py_buffer(data)))
        table = parquet.read()
    except (pa.ArrowException, OSError, ValueError) as exc:
        raise DepgraphError(
            "parse", f"{label} cannot be parsed as Parquet: {_first_line_of(exc)}", path=str(path)
        ) from None
    return frame_from_arrow(_without_pandas_index(table), label)


def _without_pandas_index(table: pa.Table) -> pa.Table:
    """The table without the unnamed index pandas stored in it (``__index_level_0__``).

    The ``pandas`` schema metadata is otherwise ignored: a named index (a
    ``sample_id`` set as the index) is an ordinary column, and metadata that is
    not valid JSON or names absent columns changes nothing."""
    metadata = table.schema.metadata or {}
    try:
        index = orjson.loads(metadata[b"pandas"]).get("index_columns", []) if b"pandas" in metadata else []
    except (orjson.JSONDecodeError, AttributeError, TypeError):
        index = []
    unnamed = {c for c in index if isinstance(c, str) and c.startswith("__index_level_")}
    keep = [i for i, name in enumerate(table.column_names) if name not in unnamed]
    table = table.select(keep) if len(keep) != table.num_columns else table
    return table.replace_schema_metadata(None)


# --------------------------------------------------------------------------- Excel
def _read_excel(data: bytes | mmap.mmap, path: Path, label: str, sheet: str | int | None) -> pd.DataFrame:
    """One sheet of an Excel workbook through pandas and openpyxl (the first sheet unless ``sheet`` names one).

    The header is the sheet's first row holding a value. Cells keep the type
    Excel gave them (numbers, dates, booleans, text) and follow
    :func:`checked_frame`'s rules; an integral number is an integer (``1``, not
    ``1.0``); text cells are stripped and :data:`MISSING_TOKENS` are missing,
    as in a CSV file. Rows of empty cells below the table are not rows."""
    try:
        with pd.ExcelFile(io.BytesIO(data), engine="openpyxl") as book:
            names = [str(n) for n in book.sheet_names]
            name = _sheet_name(names, sheet, label, path)
            raw = pd.read_excel(book, sheet_name=name, header=None, dtype=object, keep_default_na=False, na_values=[])
    except ImportError:
        raise DepgraphError(
            "io",
            f"{label} is an Excel workbook; reading it needs openpyxl: pip install 'depgraph[excel]' "
            "(or save the sheet as CSV UTF-8)",
            path=str(path),
        ) from None
    except DepgraphError:
        raise
    except Exception as exc:  # openpyxl and zipfile raise many kinds of error on a damaged workbook
        raise DepgraphError(
            "parse", f"{label} cannot be read as an Excel workbook: {_first_line_of(exc)}", path=str(path)
        ) from None
    where = f"{label} sheet {name!r}"
    cells = raw.apply(_excel_cells) if len(raw.columns) else raw
    filled = cells.notna().any(axis=1).to_numpy()
    if not filled.any():
        raise DepgraphError("empty_input", f"{where} is empty", path=str(path), sheet=name)
    top, bottom = int(np.flatnonzero(filled)[0]), int(np.flatnonzero(filled)[-1])
    header = ["" if pd.isna(v) else _header_text(v) for v in cells.iloc[top]]
    body = cells.iloc[top + 1 : bottom + 1].reset_index(drop=True).infer_objects()
    body.columns = pd.RangeIndex(len(header))
    frame = checked_frame(body.set_axis(check_names(header, where), axis=1), where)
    return frame


def _sheet_name(names: list[str], sheet: str | int | None, label: str, path: Path) -> str:
    """The sheet ``sheet`` names: a sheet's name, or its number counted from 1 (as a number or as digits that name
    no sheet); the first sheet when None."""
    listed = describe_ids([repr(n) for n in names], 10)
    if not names:
        raise DepgraphError("empty_input", f"{label} holds no sheet", path=str(path))
    if sheet is None:
        return names[0]
    if isinstance(sheet, str) and sheet in names:
        return sheet
    number: int | None = None
    if isinstance(sheet, (int, np.integer)) and not isinstance(sheet, bool):
        number = int(sheet)
    elif isinstance(sheet, str) and sheet.strip().isdigit():
        number = int(sheet.strip())
    if number is None:
        raise DepgraphError(
            "invalid_argument", f"{label} has no sheet {sheet!r} (its sheets: {listed})", path=str(path), sheet=sheet
        )
    if not 1 <= number <= len(names):
        raise DepgraphError(
            "invalid_argument",
            f"{label} has no sheet number {number}: sheets are numbered from 1 to {len(names)} ({listed})",
            path=str(path),
            sheet=sheet,
        )
    return names[number - 1]


def _excel_cells(column: pd.Series) -> pd.Series:
    """Text cells stripped, the missing tokens missing; other cells (numbers, dates, booleans) as Excel typed them."""
    return column.map(lambda v: (None if v.strip() in MISSING_TOKENS else v.strip()) if isinstance(v, str) else v)


def _header_text(value: Any) -> str:
    """A header cell as a column name: an integral number without ``.0``."""
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return str(value)


# --------------------------------------------------------------------------- cell types
def check_names(names: Sequence[Any], label: str) -> list[str]:
    """Column names as text, stripped; a repeated name, a NUL byte, or a
    non-text name is refused. Columns without a name may be several (they are
    dropped when empty, see :func:`frame_from_arrow`)."""
    stripped = [str(c).strip() for c in names]
    nul = [c for c in stripped if "\x00" in c]
    if nul:
        raise DepgraphError("parse", f"{label} has a NUL byte in the column name {nul[0]!r}", columns=nul)
    seen: set[str] = set()
    repeated = []
    for name in stripped:
        if name in seen and name not in repeated and name:
            repeated.append(name)
        seen.add(name)
    if repeated:
        raise DepgraphError(
            "schema", f"{label} has the column {describe_ids(repeated)} more than once", columns=repeated
        )
    return stripped


def _unnamed(frame: pd.DataFrame, label: str) -> pd.DataFrame:
    """Empty columns without a name (trailing separators, a spreadsheet's empty
    columns) are dropped; one holding values is refused."""
    names = list(frame.columns)
    if "" not in names:
        return frame
    nameless = [i for i, name in enumerate(names) if name == ""]
    for position in nameless:
        present = frame.iloc[:, position].notna().to_numpy()
        if present.any():
            row = int(np.flatnonzero(present)[0]) + 1
            raise DepgraphError(
                "schema",
                f"{label}: column {position + 1} has no name but holds values (e.g. row {row}); name it in the header",
                column=position + 1,
            )
    return frame.iloc[:, [i for i in range(len(names)) if names[i] != ""]]


def _nested(t: pa.DataType) -> bool:
    return pa.types.is_nested(t) or pa.types.is_union(t) or pa.types.is_map(t)


def _arrow_column(column: pa.ChunkedArray, name: str, label: str) -> pa.ChunkedArray:
    """One Arrow column in a type pandas and depgraph read faithfully, or a ``schema`` error."""
    t = column.type
    if pa.types.is_dictionary(t):
        column = column.cast(t.value_type)
        t = column.type
    if _nested(t):
        raise DepgraphError(
            "schema",
            f"{label}: column {name!r} holds {t} values; depgraph reads one value per cell (no lists or structs)",
            column=name,
        )
    if (
        pa.types.is_binary(t)
        or pa.types.is_large_binary(t)
        or pa.types.is_fixed_size_binary(t)
        or _is_view(t, "binary")
    ):
        try:
            return column.cast(pa.large_binary()).cast(pa.large_string())
        except (pa.ArrowInvalid, pa.ArrowTypeError):
            raise DepgraphError(
                "schema", f"{label}: column {name!r} holds bytes that are not UTF-8 text", column=name
            ) from None
    if pa.types.is_string(t) or pa.types.is_large_string(t) or _is_view(t, "string"):
        try:  # a Parquet reader does not check that text is UTF-8; everything after it assumes so
            column.validate(full=True)
        except pa.ArrowInvalid:
            raise DepgraphError(
                "parse", f"{label}: column {name!r} holds text that is not valid UTF-8", column=name
            ) from None
        return column.cast(pa.large_string())
    if pa.types.is_time(t) or pa.types.is_duration(t) or pa.types.is_interval(t):
        raise DepgraphError(
            "schema",
            f"{label}: column {name!r} holds {t} values (times of day or durations); write them as text or numbers",
            column=name,
        )
    if pa.types.is_decimal(t):
        target = pa.int64() if t.scale == 0 else pa.float64()
        try:
            return column.cast(target)
        except (pa.ArrowInvalid, pa.ArrowTypeError):
            raise DepgraphError(
                "schema", f"{label}: column {name!r} holds decimals too large to read exactly", column=name
            ) from None
    if pa.types.is_float16(t):
        return column.cast(pa.float32())
    return column


def _is_view(t: pa.DataType, kind: str) -> bool:
    check: Callable[[pa.DataType], bool] | None = getattr(pa.types, f"is_{kind}_view", None)
    return bool(check and check(t))


def _to_pandas(column: pa.ChunkedArray) -> pd.Series:
    """One column as pandas: integers with gaps become pandas' nullable
    integers, never floats (which would round ids beyond 2**53)."""
    if pa.types.is_integer(column.type) and column.null_count:
        nullable = pd.api.types.pandas_dtype(str(column.type).replace("uint", "UInt").replace("int", "Int"))
        return column.to_pandas(types_mapper={column.type: nullable}.get)
    return column.to_pandas(date_as_object=False)


def frame_from_arrow(table: pa.Table, label: str, *, text: bool = False) -> pd.DataFrame:
    """A pandas frame from an Arrow table, by these rules:

    * text stays text (pandas' string dtype); dictionary-encoded columns are
      read as their values; bytes are decoded as UTF-8 (``schema`` error if
      they are not UTF-8 text);
    * integers stay integers (nullable ``Int64`` when a cell is missing);
      decimals become integers (scale 0) or floats; booleans stay booleans;
    * timestamps and dates become pandas datetimes (identifier columns refuse
      them; attribute columns write them as ISO-8601 text);
    * times of day, durations, intervals, lists, structs, maps and unions are
      a ``schema`` error naming the column and its type.

    ``text=True`` for a CSV read (every column text already).
    """
    names = check_names(table.column_names, label)
    if text:
        frame = table.to_pandas()
        frame.columns = names
    else:
        columns = [_arrow_column(c, n, label) for c, n in zip(table.columns, names, strict=True)]
        frame = pd.concat([_to_pandas(c) for c in columns], axis=1, ignore_index=True) if columns else pd.DataFrame()
        frame = frame.set_axis(names, axis=1) if columns else pd.DataFrame(index=pd.RangeIndex(table.num_rows))
    return _unnamed(frame, label)


def checked_frame(frame: pd.DataFrame, label: str) -> pd.DataFrame:
    """A pandas frame given by a caller, with cells of the kinds Arrow-typed
    tables may hold (:func:`frame_from_arrow`): bytes are decoded as UTF-8,
    Python dates become datetimes, and cells holding lists, dicts, sets or
    arrays, complex numbers, periods, intervals, times of day or durations are
    a ``schema`` error naming the column and a row. Only object (and the rare
    extension) columns are inspected: a numeric or text column costs nothing.
    """
    names = check_names(list(frame.columns), label)
    replaced: dict[int, pd.Series] = {}
    for position, name in enumerate(names):
        column = frame.iloc[:, position]
        fixed = _checked_column(column, name, label)
        if fixed is not None:
            replaced[position] = fixed
    if replaced or names != list(frame.columns):
        frame = pd.DataFrame(
            {i: replaced.get(i, frame.iloc[:, i]) for i in range(len(names))}, index=frame.index
        ).set_axis(names, axis=1)
    return _unnamed(frame, label)


def _refuse_surrogates(column: pd.Series, name: str, label: str) -> None:
    """Text cells must be Unicode a file can hold: a lone surrogate (``"\\ud800"``, from a bad decode) has no
    UTF-8 form, so no file depgraph writes could carry it. Only object columns can hold one (pandas' own text
    columns refuse it); Arrow checks the whole column at once."""
    text = column.to_numpy(dtype=object)
    strings = (
        text[[isinstance(v, str) for v in text]] if pd.api.types.infer_dtype(column, skipna=True) == "mixed" else text
    )
    try:
        pa.array(strings, type=pa.string(), from_pandas=True)
    except UnicodeEncodeError:
        row = next(i for i, v in enumerate(text) if isinstance(v, str) and not _encodable(v))
        raise DepgraphError(
            "schema",
            f"{label}: column {name!r} holds text that is not valid Unicode (a lone surrogate, e.g. row {row + 1}: "
            f"{text[row]!r})",
            column=name,
        ) from None
    except (pa.ArrowInvalid, pa.ArrowTypeError):  # not all text after all: the kinds are checked elsewhere
        return


def _encodable(text: str) -> bool:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def _checked_column(column: pd.Series, name: str, label: str) -> pd.Series | None:
    """``column`` converted (or None when it is fine as it is), or a ``schema`` error."""
    dtype = column.dtype
    if isinstance(dtype, (pd.PeriodDtype, pd.IntervalDtype)) or pd.api.types.is_complex_dtype(dtype):
        raise _refused_kind(name, str(dtype), label)
    if pd.api.types.is_timedelta64_dtype(dtype):
        raise _refused_kind(name, "durations", label)
    if isinstance(dtype, pd.ArrowDtype):
        converted = frame_from_arrow(pa.table({name: pa.chunked_array([pa.array(column.array)])}), label)
        return converted.iloc[:, 0].set_axis(column.index)
    if not pd.api.types.is_object_dtype(dtype):
        return None
    kind = pd.api.types.infer_dtype(column, skipna=True)
    if kind in ("integer", "mixed-integer", "mixed-integer-float", "mixed"):
        huge = column.map(_beyond_64_bits).to_numpy(dtype=bool)  # Python ints: an object column, read cell by cell
        if huge.any():
            row = int(np.flatnonzero(huge)[0])
            raise DepgraphError(
                "schema",
                f"{label}: column {name!r} holds integers beyond 64 bits (e.g. row {row + 1}); write them as text",
                column=name,
                rows=np.flatnonzero(huge).tolist(),
            )
    if kind in ("string", "mixed", "mixed-integer"):
        _refuse_surrogates(column, name, label)
    if kind in ("string", "empty", "integer", "floating", "mixed-integer-float", "boolean", "categorical"):
        return None
    if kind == "bytes":
        present = column.notna().to_numpy()
        try:
            text = pa.array(column.to_numpy(dtype=object), type=pa.large_binary(), from_pandas=True).cast(
                pa.large_string()
            )
        except (pa.ArrowInvalid, pa.ArrowTypeError):
            raise DepgraphError(
                "schema", f"{label}: column {name!r} holds bytes that are not UTF-8 text", column=name
            ) from None
        out = pd.Series(text.to_numpy(zero_copy_only=False), index=column.index, dtype=object)
        return out.where(present, None)
    if kind == "decimal":  # Arrow's rule: integral decimals are integers, others floats
        converted = frame_from_arrow(pa.table({name: pa.array(column, from_pandas=True)}), label)
        return converted.iloc[:, 0].set_axis(column.index)
    if kind in ("datetime", "date", "datetime64"):
        try:
            return pd.to_datetime(column)
        except (ValueError, TypeError):
            raise _refused_kind(name, "dates of mixed time zones", label) from None
    if kind in ("time", "timedelta", "period", "interval", "complex"):
        raise _refused_kind(name, {"time": "times of day", "timedelta": "durations"}.get(kind, kind), label)
    # a mixed column (text and numbers...): rare, and read cell by cell anyway, so each cell is looked at here
    odd = column.map(_odd_cell).to_numpy(dtype=bool)
    if odd.any():
        row = int(np.flatnonzero(odd)[0])
        raise DepgraphError(
            "schema",
            f"{label}: column {name!r} holds {type(column.iloc[row]).__name__} values (e.g. row {row + 1}) among "
            "others; a mixed column may hold text, numbers and booleans only, one value per cell (no lists or structs)",
            column=name,
            rows=np.flatnonzero(odd).tolist(),
        )
    return None


def _beyond_64_bits(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and not -(2**63) <= value < 2**64


def _odd_cell(value: Any) -> bool:
    """A cell of a mixed object column that is not text, a number, a boolean or missing."""
    if value is None or value is pd.NA or value is pd.NaT:
        return False
    return not isinstance(value, (str, bool, int, float, np.integer, np.floating, np.bool_))


def _refused_kind(name: str, kind: str, label: str) -> DepgraphError:
    return DepgraphError("schema", f"{label}: column {name!r} holds {kind}; write them as text or numbers", column=name)


def attribute_values(column: pd.Series) -> pd.Series:
    """An attribute column as stored in a graph: dates and date-times become
    ISO-8601 text, anything else is returned as it is.

    A column whose every value falls at midnight is written as dates
    (``2024-01-05``); otherwise every value to the finest unit the column
    needs, whole seconds at least (``2024-01-05T10:30:00``). Time-zone-aware
    values are written in UTC with a trailing ``Z``. Missing values stay missing.

    >>> attribute_values(pd.Series(pd.to_datetime(["2024-01-05", None]))).tolist()
    ['2024-01-05', None]
    >>> attribute_values(pd.Series(pd.to_datetime(["2024-01-05 10:30", "2024-01-06 00:00"]))).tolist()
    ['2024-01-05T10:30:00', '2024-01-06T00:00:00']
    """
    if not pd.api.types.is_datetime64_any_dtype(column.dtype):
        return column
    aware = isinstance(column.dtype, pd.DatetimeTZDtype)
    values = (column.dt.tz_convert("UTC").dt.tz_localize(None) if aware else column).to_numpy(dtype="datetime64[ns]")
    present = ~np.isnat(values)
    ticks = values[present].astype(np.int64)
    unit = "ns"
    for name, size in (("D", 86_400 * 10**9), ("s", 10**9), ("ms", 10**6), ("us", 10**3)):
        if not (ticks % size).any():
            unit = name
            break
    text = np.datetime_as_string(values, unit=unit, timezone="UTC" if aware and unit != "D" else "naive")
    out = pd.Series(text.astype(object), index=column.index, dtype=object)
    return out.where(present, None)


def non_number_kind(values: pd.Series) -> str | None:
    """What a column holds when a number is expected and it holds booleans,
    dates or durations (never read as 0/1 or nanoseconds); None otherwise.

    >>> non_number_kind(pd.Series([True, False])), non_number_kind(pd.Series(["0.5"]))
    ('booleans', None)
    """
    dtype = values.dtype
    if pd.api.types.is_bool_dtype(dtype):
        return "booleans"
    if pd.api.types.is_datetime64_any_dtype(dtype):
        return "dates or times"
    if pd.api.types.is_timedelta64_dtype(dtype):
        return "durations"
    if pd.api.types.is_object_dtype(dtype):
        inferred = pd.api.types.infer_dtype(values, skipna=True)
        return {"boolean": "booleans", "datetime": "dates or times", "date": "dates", "timedelta": "durations"}.get(
            inferred
        )
    return None
