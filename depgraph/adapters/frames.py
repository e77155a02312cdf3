"""Specs as flat tables: the samples table (CSV / Parquet) for any tool that reads tables.

>>> import pandas as pd
>>> from depgraph.spec import Constraint, SplitSpec
>>> s = SplitSpec.build(pd.DataFrame({"sample_id": ["S1"], "group_id": ["subject:P1"]}),
...                     constraint=Constraint(mode="subject"), recommended_resampling="grouped_cv")
>>> samples_table(s).columns.tolist()
['sample_id', 'group_id']
"""

from __future__ import annotations

import os
from pathlib import Path

import pandas as pd

from depgraph.errors import DepgraphError
from depgraph.files import atomic_path
from depgraph.spec import SplitSpec

TABLE_FORMATS = {".csv": "csv", ".tsv": "tsv", ".parquet": "parquet", ".pq": "parquet"}


def samples_table(spec: SplitSpec) -> pd.DataFrame:
    """One row per sample: the spec's sample columns, in the spec's order."""
    return spec.samples.copy()


def write_table(frame: pd.DataFrame, path: str | os.PathLike[str], kind: str | None = None) -> None:
    """Write a table as CSV, TSV or Parquet (chosen by ``kind`` or the file suffix), atomically."""
    target = Path(path)
    kind = kind or TABLE_FORMATS.get(target.suffix.lower())
    if kind not in ("csv", "tsv", "parquet"):
        raise DepgraphError(
            "invalid_argument", f"cannot tell the table format of {str(target)!r}: use .csv, .tsv or .parquet"
        )
    with atomic_path(target) as tmp:
        if kind == "parquet":
            frame.to_parquet(tmp, index=False)
        else:
            frame.to_csv(tmp, index=False, sep="\t" if kind == "tsv" else ",")
