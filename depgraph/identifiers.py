"""Identifiers, normalised once.

Keys are text: surrounding blanks are stripped, NaN and blank cells are
missing, integers and integral floats are written without a decimal part
(``1``, ``1.0`` and ``"1"`` are the same key; ``"01"`` is not ``1``).
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import pandas as pd


def normalise_keys(values: pd.Series | Any, column: str = "id") -> pd.Series:
    """Identifiers as text, ``None`` where missing.

    >>> normalise_keys(pd.Series([1, 2.0, " S3 ", "01", None, "", float("nan")])).tolist()
    ['1', '2', 'S3', '01', None, None, None]
    """
    s = values if isinstance(values, pd.Series) else pd.Series(values)
    dtype = s.dtype
    if isinstance(dtype, pd.CategoricalDtype):
        s = s.astype(object)
        dtype = s.dtype
    if pd.api.types.is_float_dtype(dtype):
        out = _float_keys(s.to_numpy(dtype=np.float64, na_value=np.nan))
    elif pd.api.types.is_integer_dtype(dtype) or pd.api.types.is_bool_dtype(dtype):
        text = s.astype("string")
        out = text.astype(object).where(text.notna(), None).to_numpy(dtype=object)
    else:
        kind = pd.api.types.infer_dtype(s, skipna=True)
        if kind in ("string", "empty"):
            text = s.str.strip()  # vectorised (pyarrow for pandas' text dtype)
            text = text.where(text.notna() & (text != ""))
            return pd.Series(text.to_numpy(dtype=object, na_value=None), index=s.index, dtype=object)
        out = np.array([_key_of(v) for v in s.to_numpy(dtype=object)], dtype=object)  # mixed Python objects
    result = pd.Series(out, index=s.index, dtype=object)
    present = result.notna()
    if present.any():
        stripped = result[present].astype(str).str.strip()
        result[present] = stripped.where(stripped != "", None)
    return result.where(result.notna(), None)


def _float_keys(arr: np.ndarray) -> np.ndarray:
    out = np.full(arr.shape, None, dtype=object)
    finite = np.isfinite(arr)
    integral = finite & (np.floor(arr) == arr) & (np.abs(arr) < 2**53)
    out[integral] = arr[integral].astype(np.int64).astype(str)
    other = finite & ~integral
    out[other] = [repr(float(v)) for v in arr[other]]
    return out


def _key_of(value: Any) -> str | None:
    if value is None or value is pd.NA:
        return None
    if isinstance(value, (bool, np.bool_)):
        return str(bool(value))
    if isinstance(value, (int, np.integer)):
        return str(int(value))
    if isinstance(value, (float, np.floating)):
        if math.isnan(value):
            return None
        return str(int(value)) if float(value).is_integer() and abs(value) < 2**53 else repr(float(value))
    return str(value)
