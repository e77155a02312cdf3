"""Specs as flat tables for any tool that reads tables: the samples table and the long fold table.

>>> import pandas as pd
>>> from depgraph.spec.model import Constraint, SplitSpec
>>> s = SplitSpec.build(pd.DataFrame({"sample_id": ["S1"], "group_id": ["subject:P1"]}),
...                     constraint=Constraint(mode="subject"), recommended_resampling="grouped_cv")
>>> samples_table(s).columns.tolist()
['sample_id', 'group_id']
"""

from __future__ import annotations

import csv
import os
from pathlib import Path

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc

from depgraph.common.arguments import flag, instance
from depgraph.common.arguments import path as checked_path
from depgraph.common.identifiers import formula_like
from depgraph.errors import DepgraphError
from depgraph.io.outputs import STDOUT, Outputs, atomic_path
from depgraph.spec.model import ROLES, SplitSpec

TABLE_FORMATS = {".csv": "csv", ".tsv": "tsv", ".parquet": "parquet", ".pq": "parquet"}


def samples_table(spec: SplitSpec) -> pd.DataFrame:
    """One row per sample: the spec's sample columns, in the spec's order."""
    instance(spec, SplitSpec, "samples_table: the spec")
    return spec.samples.copy()


def fold_table(spec: SplitSpec) -> pd.DataFrame:
    """The long fold table: one row per sample and split — ``sample_id``, ``repeat``, ``fold``, ``role``
    (``train``, ``test`` or ``excluded``), splits in plan order, samples in spec order.

    >>> import pandas as pd
    >>> from depgraph.spec.model import Constraint, SplitSpec
    >>> from depgraph.folds.schemes import assign_folds
    >>> s = SplitSpec.build(pd.DataFrame({"sample_id": ["a", "b"], "group_id": ["x", "y"]}),
    ...                     constraint=Constraint(mode="subject"), recommended_resampling="grouped_cv")
    >>> fold_table(assign_folds(s, "group-kfold", n_splits=2)).to_dict("list")["role"]
    ['test', 'train', 'train', 'test']
    """
    instance(spec, SplitSpec, "fold_table: the spec")
    splits = spec.require_folds().splits
    n = spec.n_samples
    roles = np.concatenate([s.roles(n) for s in splits]) if splits else np.empty(0, np.int8)
    return pd.DataFrame(
        {
            "sample_id": np.tile(spec.sample_ids, len(splits)),
            "repeat": np.repeat([s.repeat for s in splits], n).astype(np.int64),
            "fold": np.repeat([s.fold for s in splits], n).astype(np.int64),
            "role": pd.Categorical.from_codes(roles, categories=list(ROLES)),
        }
    )


def table_format(path: str | os.PathLike[str], kind: str | None = None) -> str:
    """``csv``, ``tsv`` or ``parquet``: ``kind`` if given, else from the file suffix (CSV on standard output,
    ``-``); refused when neither tells."""
    target = Path(path)
    if kind is None:
        kind = "csv" if str(path) == STDOUT else TABLE_FORMATS.get(target.suffix.lower())
    if kind not in ("csv", "tsv", "parquet"):
        raise DepgraphError(
            "invalid_argument", f"cannot tell the table format of {str(target)!r}: use .csv, .tsv or .parquet"
        )
    return kind


def for_spreadsheets(frame: pd.DataFrame) -> pd.DataFrame:
    """A copy of ``frame`` to open in a spreadsheet: every text cell a spreadsheet would run as a formula
    (first character ``=``, ``+``, ``-``, ``@``, tab or carriage return, see
    :func:`~depgraph.common.identifiers.formula_like`) gets a leading ``'``, as OWASP recommends against CSV injection.
    Number columns are left as numbers. The result is **not id-exact** (``=1`` is written ``'=1``): it is for
    people reading a table in a spreadsheet, never for a program joining on ids.

    >>> for_spreadsheets(pd.DataFrame({"sample_id": ["S1", "=1+1", "-7", "@x"], "n": [1, -2, 3, 4]})).to_dict("list")
    {'sample_id': ['S1', "'=1+1", "'-7", "'@x"], 'n': [1, -2, 3, 4]}
    """
    out = frame.copy()
    for column in out.columns:
        values = out[column]
        risky = formula_like(values)
        if risky.any():
            cells = values.to_numpy(dtype=object, copy=True)
            cells[risky] = ("'" + values[risky].astype(str)).to_numpy(dtype=object)
            out[column] = pd.Series(cells, index=values.index, dtype=object)
    return out


def write_table(
    frame: pd.DataFrame, path: str | os.PathLike[str], kind: str | None = None, *, excel_safe: bool = False
) -> None:
    """Write a table as CSV, TSV or Parquet (chosen by ``kind`` or the file suffix; CSV on standard
    output, ``-``), atomically. Parquet is not written to a terminal.

    ``excel_safe`` writes :func:`for_spreadsheets` of the table (CSV and TSV only: a Parquet file is not opened
    as formulas, and keeps ids exact)."""
    instance(frame, pd.DataFrame, "write_table: the table")
    excel_safe = flag(excel_safe, "excel_safe")
    target = Path(checked_path(path, "output"))
    kind = table_format(target, kind)
    if excel_safe:
        if kind == "parquet":
            raise DepgraphError(
                "invalid_argument",
                f"--excel-safe is for CSV/TSV files opened in spreadsheets, not parquet ({str(target)!r}); "
                "parquet keeps ids exact and runs no formula",
            )
        frame = for_spreadsheets(frame)
    with Outputs() as plan:
        plan.file(path, binary=kind == "parquet")
        with atomic_path(target) as tmp:
            if kind == "parquet":
                frame.to_parquet(tmp, index=False)
            else:
                # Python's CSV writer quotes a cell holding "\n" but not one holding a lone "\r", which every reader
                # then takes for a line break: a table with such a cell has every text cell quoted, so ids stay exact.
                quoting = csv.QUOTE_NONNUMERIC if _holds_carriage_return(frame) else csv.QUOTE_MINIMAL
                frame.to_csv(tmp, index=False, sep="\t" if kind == "tsv" else ",", quoting=quoting)


def _holds_carriage_return(frame: pd.DataFrame) -> bool:
    for column in frame.columns:
        values = frame[column]
        if values.dtype == object or pd.api.types.is_string_dtype(values.dtype):
            # the text the writer writes (numbers in mixed cells), a missing cell none (pandas' str of None is NaN)
            text = values.astype("string")
            if pc.any(pc.match_substring(pa.array(text, type=pa.string(), from_pandas=True), "\r")).as_py():
                return True
    return False
