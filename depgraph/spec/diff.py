"""Do two specs hold the same split? Which samples changed group?

Group labels are names, not the grouping: two specs whose groups hold the same
samples agree even if the labels differ (a relabelling is reported, not counted
as a change). A sample *changed group* when the samples it is grouped with
(among the samples both specs hold) differ between the two specs.

>>> import pandas as pd
>>> from depgraph.spec.model import Constraint, SplitSpec
>>> def spec(groups):
...     frame = pd.DataFrame({"sample_id": ["S1", "S2", "S3"], "group_id": groups})
...     return SplitSpec.build(frame, constraint=Constraint(mode="subject"), recommended_resampling="grouped_cv")
>>> d = compare_specs(spec(["a", "a", "b"]), spec(["x", "x", "y"]))
>>> d.differs, d.relabelled
(False, True)
>>> compare_specs(spec(["a", "a", "b"]), spec(["a", "b", "b"])).changed["sample_id"].tolist()
['S1', 'S2', 'S3']
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from depgraph.common.arguments import instance
from depgraph.errors import DepgraphError
from depgraph.spec.model import SplitSpec


@dataclass(frozen=True)
class SpecDiff:
    """How two specs differ."""

    same_digest: bool
    only_in_first: tuple[str, ...]
    only_in_second: tuple[str, ...]
    changed: pd.DataFrame  # sample_id, group_first, group_second
    relabelled: bool
    folds_differ: bool | None  # None when neither spec has folds
    digests: tuple[str, str]  # the first spec's, the second's

    @property
    def differs(self) -> bool:
        """The grouping (or the folds, or the sample set) differs."""
        return bool(self.only_in_first or self.only_in_second or len(self.changed) or self.folds_differ)


def compare_specs(first: SplitSpec, second: SplitSpec) -> SpecDiff:
    instance(first, SplitSpec, "compare_specs: the first spec")
    instance(second, SplitSpec, "compare_specs: the second spec")
    a = first.samples[["sample_id", "group_id"]]
    b = second.samples[["sample_id", "group_id"]]
    joined = a.merge(b, on="sample_id", how="inner", suffixes=("_first", "_second"))
    only_a = np.setdiff1d(a["sample_id"].to_numpy(dtype=str), b["sample_id"].to_numpy(dtype=str))
    only_b = np.setdiff1d(b["sample_id"].to_numpy(dtype=str), a["sample_id"].to_numpy(dtype=str))
    ga, gb = joined["group_id_first"], joined["group_id_second"]
    # a sample keeps its group iff its first group maps to one second group and back
    fan_out = joined.groupby("group_id_first")["group_id_second"].transform("nunique")
    fan_in = joined.groupby("group_id_second")["group_id_first"].transform("nunique")
    moved = (fan_out > 1) | (fan_in > 1)
    changed = (
        joined.loc[moved, ["sample_id", "group_id_first", "group_id_second"]]
        .rename(columns={"group_id_first": "group_first", "group_id_second": "group_second"})
        .sort_values("sample_id", kind="stable")
        .reset_index(drop=True)
    )
    relabelled = bool(((ga != gb) & ~moved).any())
    return SpecDiff(
        same_digest=first.digest == second.digest,
        only_in_first=tuple(only_a.tolist()),
        only_in_second=tuple(only_b.tolist()),
        changed=changed,
        relabelled=relabelled,
        folds_differ=_folds_differ(first, second),
        digests=(first.digest, second.digest),
    )


def _folds_differ(first: SplitSpec, second: SplitSpec) -> bool | None:
    if first.folds is None and second.folds is None:
        return None
    if first.folds is None or second.folds is None:
        return True
    if len(first.folds.splits) != len(second.folds.splits):
        return True
    if first.n_samples != second.n_samples:
        return True
    try:
        order = second.positions(first.sample_ids, "the first spec's samples")
    except DepgraphError:  # a sample of the first that the second lacks
        return True
    n = first.n_samples
    return any(
        not np.array_equal(a.roles(n), b.roles(n)[order])
        for a, b in zip(first.folds.splits, second.folds.splits, strict=True)
    )
