"""Column checks every ingest table shares: numbers, required ids, decimal commas, unknown ids.

Each raises a :class:`~depgraph.errors.DepgraphError` naming the offending rows; none reads a value it cannot
read (a date is no number, a blank is no id).

>>> numeric_column(pd.Series(["1", "2.5"]), "time_index", "metadata").tolist()
[1.0, 2.5]
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Literal

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc

from depgraph.errors import DepgraphError, describe_ids, describe_rows
from depgraph.io.tables import non_number_kind
from depgraph.io.textnumbers import decimal_points

#: What a builder does with ids the graph does not hold: ``"error"`` (a ``reference`` error naming them) or
#: ``"ignore"`` (their rows are dropped and counted in the step's record).
Unknown = Literal["error", "ignore"]


def numeric_column(values: pd.Series, column: str, what: str) -> np.ndarray:
    """A float column; text that is not a number, or an infinite value, is an
    ``invalid_value`` error naming rows; booleans, dates and durations are a
    ``schema`` error (never read as 0/1 or nanoseconds)."""
    kind = non_number_kind(values)
    if kind is not None:
        raise DepgraphError("schema", f"{what}: {column} holds {kind}, not numbers", column=column)
    arr = None
    if pd.api.types.is_string_dtype(values.dtype) and values.dtype != object:
        try:  # pyarrow parses a clean text column far faster than pandas
            arr = pc.cast(pa.array(values.array), pa.float64()).to_numpy(zero_copy_only=False)
        except (pa.ArrowInvalid, pa.ArrowTypeError, TypeError):
            arr = None  # find and name the offending rows below
    if arr is None:
        arr = _coerced(values, column, what)
    infinite = np.isinf(arr)
    if infinite.any():
        rows = np.flatnonzero(infinite)
        raise DepgraphError(
            "invalid_value", f"{what}: {column} is infinite in {describe_rows(rows)}", rows=rows.tolist()
        )
    return arr


def _coerced(values: pd.Series, column: str, what: str) -> np.ndarray:
    numbers = pd.to_numeric(values, errors="coerce").astype(np.float64)
    raw_missing = (
        values.isna() | (values.astype(str).str.strip() == "")
        if values.dtype == object or pd.api.types.is_string_dtype(values.dtype)
        else values.isna()
    )
    bad = numbers.isna() & ~raw_missing
    if bad.any():
        rows = np.flatnonzero(bad.to_numpy())
        examples = [repr(v) for v in values.iloc[rows[:3]].tolist()]  # repr: a cell may hold a line break
        raise DepgraphError(
            "invalid_value",
            f"{what}: {column} is not a number in {describe_rows(rows)} (e.g. {describe_ids(examples)})",
            rows=rows.tolist(),
            column=column,
        )
    return numbers.to_numpy()


def missing_keys(keys: pa.Array) -> np.ndarray:
    """Where an Arrow key column has no value."""
    if not keys.null_count:
        return np.zeros(len(keys), dtype=bool)
    return pc.is_null(keys).to_numpy(zero_copy_only=False)


def require_ids(keys: pd.Series | pa.Array, column: str, what: str) -> None:
    """A ``missing_id`` error naming the rows of an id column that hold no id."""
    missing = missing_keys(keys) if isinstance(keys, pa.Array) else keys.isna().to_numpy()
    if missing.any():
        rows = np.flatnonzero(missing)
        raise DepgraphError(
            "missing_id",
            f"{what}: {column} is missing or blank in {describe_rows(rows)}",
            rows=rows.tolist(),
            column=column,
        )


def with_decimal_points(
    frame: pd.DataFrame, columns: list[str], what: str, layout: Mapping[str, str] | None
) -> pd.DataFrame:
    """``frame`` with the numbers of ``columns`` written with decimal points, when its file wrote decimal commas
    (a semicolon-separated file; see :func:`depgraph.io.textnumbers.decimal_points`)."""
    if layout is None or layout.get("decimal") != ",":
        return frame
    for column in columns:
        if column in frame.columns:
            frame[column] = decimal_points(frame[column], column, what)
    return frame


#: Ids kept in a history record (the count is exact).
RECORDED_IDS = 50


def checked_unknown(unknown: Any) -> None:
    """``unknown=`` of a pair or coordinate table: ``"error"`` (refuse ids the graph lacks) or ``"ignore"`` (drop
    them, and record it); anything else is ``invalid_argument``. Every reader of such a table, on every engine."""
    if unknown not in ("error", "ignore"):
        raise DepgraphError("invalid_argument", f"unknown= must be 'error' or 'ignore', not {unknown!r}")


def dropped_record(n_dropped: int, strangers: np.ndarray) -> dict[str, Any]:
    return {
        "unknown_dropped": n_dropped,
        "unknown_id_count": len(strangers),
        "unknown_ids": [str(x) for x in strangers[:RECORDED_IDS]],
    }


def conflicting_values(
    what: str, column: str, samples: list[str], shown: str, rows: np.ndarray | None = None
) -> DepgraphError:
    """The ``ambiguity`` of samples declared on several rows with different values of a column that holds one
    value a sample (its subject, batch, timepoint…): ``samples`` the offenders, ``shown`` the first one's values
    and ``rows`` its rows (when the reader numbers rows)."""
    label = "subjects" if column == "subject_id" else f"{column} values"
    hint = " (set allow_multi_subject_samples to accept this)" if column == "subject_id" else ""
    where = "" if rows is None else f" in {describe_rows(rows)}"
    extra = {} if rows is None else {"rows": rows.tolist()}
    return DepgraphError(
        "ambiguity",
        f"{what}: sample {describe_ids(samples)} is declared with different {label} ({samples[0]}: {shown}{where})"
        f"{hint}",
        ids=samples,
        column=column,
        **extra,
    )
