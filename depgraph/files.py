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
import os
import tempfile
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

import orjson
import pandas as pd
import pyarrow as pa

from depgraph.errors import DepgraphError
from depgraph.tables import MISSING_TOKENS as MISSING_TOKENS  # re-exported: readers import it from here
from depgraph.tables import checked_frame, frame_from_arrow, read_table_file

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

    ``what`` names the table in messages (``"metadata"``); a path is added to
    it once. Column names are stripped of surrounding blanks; a name given
    twice is a ``schema`` error. Text files are read with every cell as a
    string (see :mod:`depgraph.tables` for every refusal); Arrow-typed tables
    (Parquet, pyarrow, polars) are converted by
    :func:`depgraph.tables.frame_from_arrow`'s rules and pandas frames checked
    by :func:`depgraph.tables.checked_frame`'s.

    >>> read_table(pd.DataFrame({" sample_id ": ["S1"]})).columns.tolist()
    ['sample_id']
    """
    label = describe_source(source, what)
    if isinstance(source, pd.DataFrame):
        return checked_frame(source, label)
    if isinstance(source, pa.RecordBatch):
        source = pa.Table.from_batches([source])
    if isinstance(source, pa.Table):
        return frame_from_arrow(source, label)
    if hasattr(source, "to_arrow") and not isinstance(source, (str, os.PathLike)):
        return frame_from_arrow(source.to_arrow(), label)  # polars DataFrame
    if isinstance(source, (str, os.PathLike)):
        return read_table_file(existing_file(source, what), label)
    raise DepgraphError(
        "invalid_argument",
        f"{what} must be a DataFrame, a pyarrow/polars table or a CSV/TSV/Parquet path, not {type(source).__name__}",
    )


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
