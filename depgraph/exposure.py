"""Which declared dependencies a split leaves crossing.

:func:`straddling_groups` checks a split made elsewhere (a table with a fold
or train/test column per sample) against a spec: every spec group whose
samples fall on both sides of the split is listed.

>>> import pandas as pd
>>> from depgraph.spec import Constraint, SplitSpec
>>> spec = SplitSpec.build(pd.DataFrame({"sample_id": ["a", "b", "c"], "group_id": ["g1", "g1", "g2"]}),
...                        constraint=Constraint(mode="subject"), recommended_resampling="grouped_cv")
>>> made_elsewhere = pd.DataFrame({"sample_id": ["a", "b", "c"], "fold": [0, 1, 1]})
>>> straddling_groups(spec, made_elsewhere).groups["group_id"].tolist()
['g1']
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from depgraph.errors import DepgraphError, describe_ids
from depgraph.files import read_table
from depgraph.identifiers import normalise_keys
from depgraph.spec import SplitSpec

#: Split values that mean "not used" in an assignment table.
UNUSED = frozenset({"excluded", "exclude", "none", "unused", "-"})
#: Column names tried, in order, when the split column is not named.
SPLIT_COLUMNS = ("fold", "split", "role", "set", "partition")


@dataclass(frozen=True)
class StraddleReport:
    """Groups that straddle an assignment, with the values their samples took."""

    groups: pd.DataFrame  # group_id, n_samples, values (sorted, joined with ", ")
    n_checked: int
    n_unused: int
    id_column: str
    split_column: str

    @property
    def clean(self) -> bool:
        return self.groups.empty


def straddling_groups(
    spec: SplitSpec, assignment: object, id_column: str = "sample_id", split_column: str | None = None
) -> StraddleReport:
    """The spec groups whose samples take more than one value of ``split_column``.

    Two different folds, or train and test, put a group on both sides of some
    split. Rows whose value is missing or ``excluded`` are not checked; rows
    naming samples the spec does not have are a ``reference`` error.
    """
    table = read_table(assignment, "assignment")
    if id_column not in table.columns:
        raise DepgraphError(
            "schema", f"assignment has no {id_column!r} column (columns: {describe_ids(table.columns, 12)})"
        )
    if split_column is None:
        split_column = next((c for c in SPLIT_COLUMNS if c in table.columns), None)
        if split_column is None:
            raise DepgraphError(
                "schema",
                f"assignment has none of the split columns {describe_ids(SPLIT_COLUMNS)}; name yours with "
                "--split-column",
            )
    elif split_column not in table.columns:
        raise DepgraphError("schema", f"assignment has no {split_column!r} column")
    ids = normalise_keys(table[id_column], id_column)
    values = normalise_keys(table[split_column], split_column)
    unused = values.isna() | values.str.lower().isin(UNUSED)
    positions = pd.Index(spec.sample_ids).get_indexer(ids.to_numpy(dtype=object))
    unknown = ids[(positions < 0) & ids.notna().to_numpy()].unique().tolist()
    if unknown:
        raise DepgraphError(
            "reference",
            f"assignment names {len(unknown)} sample(s) not in the spec: {describe_ids(unknown)}",
            ids=unknown,
        )
    used = ~unused.to_numpy() & (positions >= 0)
    frame = pd.DataFrame(
        {
            "group_id": spec.samples["group_id"].to_numpy(dtype=object)[positions[used]],
            "value": values[used].to_numpy(dtype=object),
        }
    )
    distinct = frame.groupby("group_id", sort=True)["value"].agg(lambda v: sorted(set(v)))
    sizes = frame.groupby("group_id", sort=True).size()
    crossing = distinct[distinct.map(len) > 1]
    groups = pd.DataFrame(
        {
            "group_id": crossing.index.to_numpy(dtype=object),
            "n_samples": sizes.loc[crossing.index].to_numpy(np.int64),
            "values": [", ".join(v) for v in crossing],
        }
    )
    return StraddleReport(groups, int(used.sum()), int(unused.sum()), id_column, split_column)
