"""Reading tables and writing files, with the failures a user can cause named.

Tables come as pandas, polars or pyarrow objects, or as CSV / TSV / Parquet
paths. CSV cells are read as text so identifiers keep their spelling ("01"
stays "01"); the cells listed in :data:`MISSING_TOKENS` mean "missing".

Every file depgraph writes goes through :func:`atomic_path`: the content is
written next to the target and renamed over it only when complete, so a
failure never leaves a half-written file.
"""

from __future__ import annotations

import contextlib
import json
import os
import tempfile
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

import numpy as np
import orjson
import pandas as pd
import pyarrow as pa

from depgraph.arrays import needs_trimming
from depgraph.errors import DepgraphError, describe_ids

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
        frame = _read_table_file(existing_file(source, what), what)
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


@contextlib.contextmanager
def atomic_path(path: str | os.PathLike[str]) -> Iterator[Path]:
    """Yield a temporary path beside ``path``; rename it over ``path`` on success.

    On any exception the temporary file is removed and ``path`` is untouched.
    """
    target = Path(path)
    if target.is_dir():
        raise DepgraphError("io", f"output {str(target)!r} is a directory", path=str(target))
    parent = target.parent if str(target.parent) else Path(".")
    if not parent.is_dir():
        raise DepgraphError("io", f"output directory {str(parent)!r} does not exist", path=str(target))
    fd, tmp_name = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=parent)
    os.close(fd)
    tmp = Path(tmp_name)
    umask = os.umask(0)
    os.umask(umask)
    os.chmod(tmp, 0o666 & ~umask)  # mkstemp makes 0600; give the file ordinary permissions
    try:
        yield tmp
        os.replace(tmp, target)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            tmp.unlink()
        raise


def atomic_write_bytes(path: str | os.PathLike[str], data: bytes | Iterable[bytes]) -> None:
    """Write ``data`` (bytes, or pieces written one after another, never
    joined in memory) to ``path`` atomically (temp file, fsync, rename)."""
    with atomic_path(path) as tmp, open(tmp, "wb") as handle:
        if isinstance(data, (bytes, bytearray, memoryview)):
            handle.write(data)
        else:
            handle.writelines(data)
        handle.flush()
        os.fsync(handle.fileno())


def read_json(path: str | os.PathLike[str], what: str = "file") -> Any:
    """The parsed JSON of an existing, non-empty file (``io``, ``empty_input``
    or ``parse`` errors otherwise).

    An object that repeats a key is a ``parse`` error: JSON readers disagree on
    which of the two values counts (orjson and Python keep the last, R's
    jsonlite lets ``$`` find the first), so a second ``"samples"`` could show
    each reader a different document. orjson parses (it cannot report repeats);
    :func:`_may_repeat_keys` then compares the keys it kept with the keys the
    text holds, and only a document where they may differ is parsed again by
    Python's json module, which names the repeated key.
    """
    raw = read_bytes(path, what)
    if not raw or raw.isspace():  # (strip() would copy the whole file)
        raise DepgraphError("empty_input", f"{what} {str(path)!r} is empty", path=str(path))
    try:
        doc = orjson.loads(raw)
    except orjson.JSONDecodeError as exc:
        raise DepgraphError("parse", f"{what} {str(path)!r} is not valid JSON: {exc}", path=str(path)) from exc
    if _may_repeat_keys(raw, doc):
        repeated = _repeated_key(raw)
        if repeated is not None:
            raise DepgraphError(
                "parse",
                f"{what} {str(path)!r} repeats the key {repeated!r} within one object; JSON readers disagree "
                "on which value counts, so depgraph refuses it",
                path=str(path),
                key=repeated,
            )
    return doc


def _may_repeat_keys(raw: bytes, doc: Any) -> bool:
    """False only when no object of ``raw`` repeats a key (``doc`` is its parse).

    Every key in the text ends with ``"``, JSON blank space and ``:``, so the
    colons right after a ``"`` (after removing the blanks, when some colon
    follows one) number at least the keys in the text (a string holding ``":``
    adds more), which number at least those ``doc`` kept (one per distinct key
    of an object). When the two counts are equal, no key was repeated. Lists
    whose first element is not a container are not searched for objects (they
    are columns of values); an object inside one only makes the counts differ,
    which sends the text to the exact check. Costs one pass over the bytes.
    """
    text = np.frombuffer(raw, dtype=np.uint8)
    colons = np.flatnonzero(text == ord(":"))
    before = text[np.maximum(colons - 1, 0)]
    if np.isin(before, _BLANKS).any():  # "key" : value somewhere: count again without the blanks
        in_text = raw.translate(None, bytes(_BLANKS)).count(b'":')
    else:
        in_text = int(np.count_nonzero(before == ord('"')))
    kept = 0
    pending = [doc]
    while pending:
        value = pending.pop()
        if type(value) is dict:
            kept += len(value)
            pending.extend(value.values())
        elif type(value) is list and value and type(value[0]) in (dict, list):
            pending.extend(value)
    return in_text != kept


_BLANKS = np.frombuffer(b" \t\r\n", dtype=np.uint8)


def _repeated_key(raw: bytes) -> str | None:
    """The first key some object of ``raw`` repeats (Python's json parses it again), or None."""

    def refuse_repeats(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
        seen: dict[str, Any] = {}
        for key, value in pairs:
            if key in seen:
                raise _RepeatedKey(key)
            seen[key] = value
        return seen

    try:
        json.loads(raw.decode("utf-8"), object_pairs_hook=refuse_repeats)
    except _RepeatedKey as found:
        return found.key
    except RecursionError:  # deeper than Python's json follows (orjson allows 1024 levels)
        return "(not checked: nested too deeply)"
    return None


class _RepeatedKey(Exception):
    def __init__(self, key: str) -> None:
        super().__init__(key)
        self.key = key


def read_bytes(path: str | os.PathLike[str], what: str = "file") -> bytes:
    """The bytes of an existing regular file, or DepgraphError(io)."""
    p = existing_file(path, what)
    try:
        return p.read_bytes()
    except OSError as exc:
        raise DepgraphError("io", f"{what} {str(p)!r} cannot be read: {exc.strerror}", path=str(p)) from exc
