"""Specs as flat tables for any tool that reads tables: the samples table and the long fold table.

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

import numpy as np
import pandas as pd

from depgraph.errors import DepgraphError
from depgraph.outputs import STDOUT, Outputs, atomic_path
from depgraph.spec import ROLES, SplitSpec

TABLE_FORMATS = {".csv": "csv", ".tsv": "tsv", ".parquet": "parquet", ".pq": "parquet"}


def samples_table(spec: SplitSpec) -> pd.DataFrame:
    """One row per sample: the spec's sample columns, in the spec's order."""
    return spec.samples.copy()


def fold_table(spec: SplitSpec) -> pd.DataFrame:
    """The long fold table: one row per sample and split — ``sample_id``, ``repeat``, ``fold``, ``role``
    (``train``, ``test`` or ``excluded``), splits in plan order, samples in spec order.

    >>> import pandas as pd
    >>> from depgraph.spec import Constraint, SplitSpec
    >>> from depgraph.folds import assign_folds
    >>> s = SplitSpec.build(pd.DataFrame({"sample_id": ["a", "b"], "group_id": ["x", "y"]}),
    ...                     constraint=Constraint(mode="subject"), recommended_resampling="grouped_cv")
    >>> fold_table(assign_folds(s, "group-kfold", n_folds=2)).to_dict("list")["role"]
    ['test', 'train', 'train', 'test']
    """
    if spec.folds is None:
        raise DepgraphError("invalid_argument", "the spec carries no folds: assign folds first (depgraph folds)")
    n = spec.n_samples
    splits = spec.folds.splits
    roles = np.concatenate([s.roles(n) for s in splits]) if splits else np.empty(0, np.int8)
    return pd.DataFrame(
        {
            "sample_id": np.tile(spec.sample_ids, len(splits)),
            "repeat": np.repeat([s.repeat for s in splits], n).astype(np.int64),
            "fold": np.repeat([s.fold for s in splits], n).astype(np.int64),
            "role": pd.Categorical.from_codes(roles, categories=list(ROLES)),
        }
    )


def write_table(frame: pd.DataFrame, path: str | os.PathLike[str], kind: str | None = None) -> None:
    """Write a table as CSV, TSV or Parquet (chosen by ``kind`` or the file suffix; CSV on standard
    output, ``-``), atomically. Parquet is not written to a terminal."""
    target = Path(path)
    if kind is None:
        kind = "csv" if str(path) == STDOUT else TABLE_FORMATS.get(target.suffix.lower())
    if kind not in ("csv", "tsv", "parquet"):
        raise DepgraphError(
            "invalid_argument", f"cannot tell the table format of {str(target)!r}: use .csv, .tsv or .parquet"
        )
    with Outputs() as plan:
        plan.file(path, binary=kind == "parquet")
        with atomic_path(target) as tmp:
            if kind == "parquet":
                frame.to_parquet(tmp, index=False)
            else:
                frame.to_csv(tmp, index=False, sep="\t" if kind == "tsv" else ",")
