"""Reading tables and writing files, with the failures a user can cause named.

Tables come as pandas, polars or pyarrow objects, or as CSV / TSV / Parquet
paths. CSV cells are read as text so identifiers keep their spelling ("01"
stays "01"); the cells listed in :data:`MISSING_TOKENS` mean "missing".

Every file depgraph writes goes through :func:`atomic_path` (from
:mod:`depgraph.outputs`, re-exported here for the writers): the content is
staged beside the target and put in place only when the command succeeds, so
a failure never leaves a half-written file; what cannot be replaced (a FIFO, a
device) is written through or refused, never replaced.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import orjson
import pandas as pd
import pyarrow as pa

from depgraph.arrays import needs_trimming
from depgraph.errors import DepgraphError, describe_ids
from depgraph.outputs import atomic_path as atomic_path
from depgraph.outputs import atomic_write_bytes as atomic_write_bytes

#: Cell values read as missing in CSV/TSV files (what R, pandas and spreadsheets write).
MISSING_TOKENS: tuple[str, ...] = ("", "NA", "NaN", "nan", "NULL", "null", "None", "N/A", "<NA>")

TableLike = Any  # pandas / polars DataFrame, pyarrow Table, or a path


def existing_file(path: str | os.PathLike[str], what: str = "file") -> Path:
    """``path`` as a Path, or a DepgraphError(io) saying why it cannot be read."""
    p = Path(path)
    if not p.exists():
        raise DepgraphError("io", f"{what} {str(p)!r} does not exist", path=str(p))
    if p.is_dir():
        raise DepgraphError("io", f"{what} {str(p)!r} is a directory, not a file", path=str(p))
    return p


def describe_source(source: Any, what: str) -> str:
    """``what`` plus the file name when the source is a path, for messages.

    >>> describe_source("cohort/meta.csv", "metadata")
    "metadata 'cohort/meta.csv'"
    >>> describe_source(pd.DataFrame(), "metadata")
    'metadata'
    """
    if isinstance(source, (str, os.PathLike)):
        return f"{what} {str(source)!r}"
    return what


def file_name(path: str | os.PathLike[str]) -> str:
    """The name a record keeps of an input file: its last component, never its folder, so the same data read
    from two places (or by a relative and an absolute path) gives the same graph and spec bytes.

    >>> file_name("/home/ana/cohort/kinship.kin0"), file_name("kinship.kin0")
    ('kinship.kin0', 'kinship.kin0')
    """
    return Path(path).name


def read_table(source: TableLike, what: str = "table") -> pd.DataFrame:
    """A pandas DataFrame from a table object or a CSV/TSV/Parquet path.

    Column names are stripped of surrounding blanks. Text files are read with
    every cell as a string; Parquet keeps its column types.

    >>> read_table(pd.DataFrame({" sample_id ": ["S1"]})).columns.tolist()
    ['sample_id']
    """
    if isinstance(source, pd.DataFrame):
        frame = source
    elif hasattr(source, "to_pandas") and not isinstance(source, (str, os.PathLike)):
        frame = source.to_pandas()  # polars DataFrame, pyarrow Table
    elif isinstance(source, (str, os.PathLike)):
        named = f" {str(source)!r}"  # callers may describe the source with its path already (describe_source)
        noun = what[: -len(named)] if what.endswith(named) and len(what) > len(named) else what
        frame = _read_table_file(existing_file(source, noun), noun)  # the messages name the path once
    else:
        raise DepgraphError(
            "invalid_argument",
            f"{what} must be a DataFrame, a pyarrow/polars table or a CSV/TSV/Parquet path, "
            f"not {type(source).__name__}",
        )
    stripped = [str(c).strip() for c in frame.columns]
    repeated = sorted({c for c in stripped if stripped.count(c) > 1})
    if repeated:
        raise DepgraphError(
            "schema", f"{what} has the column {describe_ids(repeated)} more than once", columns=repeated
        )
    if stripped != list(frame.columns):
        frame = frame.set_axis(stripped, axis=1)
    return frame


def _read_table_file(path: Path, what: str) -> pd.DataFrame:
    suffixes = [s.lower() for s in path.suffixes]
    if suffixes and suffixes[-1] in (".gz", ".bz2", ".xz", ".zst", ".zip"):
        suffixes = suffixes[:-1]
    kind = suffixes[-1] if suffixes else ""
    if path.stat().st_size == 0:
        raise DepgraphError("empty_input", f"{what} {str(path)!r} is empty (0 bytes)", path=str(path))
    try:
        if kind in (".parquet", ".pq"):
            return pd.read_parquet(path)
        sep = "\t" if kind in (".tsv", ".tab", ".txt") else ","
        frame = _read_text(path, sep)
        return frame.apply(_missing_to_nan)
    except (pd.errors.ParserError, pd.errors.EmptyDataError, UnicodeDecodeError, ValueError, OSError) as exc:
        reason = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        if isinstance(exc, pd.errors.EmptyDataError):
            raise DepgraphError("empty_input", f"{what} {str(path)!r} has no columns", path=str(path)) from exc
        raise DepgraphError("parse", f"{what} {str(path)!r} cannot be parsed: {reason}", path=str(path)) from exc


def _read_text(path: Path, sep: str) -> pd.DataFrame:
    """Every cell as text. pyarrow's multi-threaded reader first; pandas' own
    reader for what pyarrow refuses, so its message names the bad line."""
    tokens = list(MISSING_TOKENS)  # cells that are exactly a token are missing from the parser on
    try:
        return pd.read_csv(path, sep=sep, dtype=str, keep_default_na=False, na_values=tokens, engine="pyarrow")
    except (ValueError, pd.errors.ParserError):  # pyarrow.ArrowInvalid is a ValueError
        return pd.read_csv(path, sep=sep, dtype=str, keep_default_na=False, na_values=tokens)


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


def read_json(path: str | os.PathLike[str], what: str = "file") -> Any:
    """The parsed JSON of an existing, non-empty file (``io``, ``empty_input``
    or ``parse`` errors otherwise)."""
    raw = read_bytes(path, what)
    if not raw or raw.isspace():  # (strip() would copy the whole file)
        raise DepgraphError("empty_input", f"{what} {str(path)!r} is empty", path=str(path))
    try:
        return orjson.loads(raw)
    except orjson.JSONDecodeError as exc:
        raise DepgraphError("parse", f"{what} {str(path)!r} is not valid JSON: {exc}", path=str(path)) from exc


def read_bytes(path: str | os.PathLike[str], what: str = "file") -> bytes:
    """The bytes of an existing regular file, or DepgraphError(io)."""
    p = existing_file(path, what)
    try:
        return p.read_bytes()
    except OSError as exc:
        raise DepgraphError("io", f"{what} {str(p)!r} cannot be read: {exc.strerror}", path=str(p)) from exc
