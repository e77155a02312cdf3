"""Reading tables and writing files, with the failures a user can cause named.

Tables come as pandas, polars or pyarrow objects, or as CSV / TSV / Parquet /
Excel paths. CSV cells are read as text so identifiers keep their spelling ("01"
stays "01"); the cells listed in :data:`MISSING_TOKENS` mean "missing".

Every file depgraph writes goes through :func:`atomic_path` (from
:mod:`depgraph.outputs`, re-exported here for the writers): the content is
staged beside the target and put in place only when the command succeeds, so
a failure never leaves a half-written file; what cannot be replaced (a FIFO, a
device) is written through or refused, never replaced.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import numpy as np
import orjson
import pandas as pd
import pyarrow as pa

from depgraph.delimited import checked_encoding
from depgraph.errors import DepgraphError
from depgraph.outputs import atomic_path as atomic_path
from depgraph.outputs import atomic_write_bytes as atomic_write_bytes
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


def file_name(path: str | os.PathLike[str]) -> str:
    """The name a record keeps of an input file: its last component, never its folder, so the same data read
    from two places (or by a relative and an absolute path) gives the same graph and spec bytes.

    >>> file_name("/home/ana/cohort/kinship.kin0"), file_name("kinship.kin0")
    ('kinship.kin0', 'kinship.kin0')
    """
    return Path(path).name


def read_table(
    source: TableLike, what: str = "table", *, encoding: str | None = None, sheet: str | int | None = None
) -> pd.DataFrame:
    """A pandas DataFrame from a table object or a CSV/TSV/Parquet/Excel path.

    ``what`` names the table in messages (``"metadata"``); a path is added to
    it once. Column names are stripped of surrounding blanks; a name given
    twice is a ``schema`` error. Text files are read with every cell as a
    string, with the delimiter their header uses (``,`` ``;`` tab ``|``), in
    UTF-8 unless ``encoding`` names another (see :mod:`depgraph.tables` and
    :mod:`depgraph.delimited` for every rule and refusal); ``sheet`` picks an
    Excel workbook's sheet (a name, or a number from 1). Arrow-typed tables
    (Parquet, pyarrow, polars) are converted by
    :func:`depgraph.tables.frame_from_arrow`'s rules, pandas frames and Excel
    sheets checked by :func:`depgraph.tables.checked_frame`'s.

    >>> read_table(pd.DataFrame({" sample_id ": ["S1"]})).columns.tolist()
    ['sample_id']
    """
    label = describe_source(source, what)
    checked_encoding(encoding)  # a misspelt codec is refused whatever the source
    if sheet is not None and not isinstance(source, (str, os.PathLike)):
        raise DepgraphError("invalid_argument", f"sheet= applies to an Excel workbook's path; {what} is a table object")
    if isinstance(source, pd.DataFrame):
        return checked_frame(source, label)
    if isinstance(source, pa.RecordBatch):
        source = pa.Table.from_batches([source])
    if isinstance(source, pa.Table):
        return frame_from_arrow(source, label)
    if hasattr(source, "to_arrow") and not isinstance(source, (str, os.PathLike)):
        return frame_from_arrow(source.to_arrow(), label)  # polars DataFrame
    if isinstance(source, (str, os.PathLike)):
        return read_table_file(existing_file(source, what), label, encoding=encoding, sheet=sheet)
    raise DepgraphError(
        "invalid_argument",
        f"{what} must be a DataFrame, a pyarrow/polars table or a CSV/TSV/Parquet/Excel path, "
        f"not {type(source).__name__}",
    )


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
