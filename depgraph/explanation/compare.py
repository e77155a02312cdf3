"""Groupings side by side: what each leaves whole, how coarse it is, and what it leaves exposed.

:func:`compare` derives each grouping asked for over one graph and gives one row each::

    grouping     groups  largest  largest_share  effective_folds  changed  exposed_links  exposed
    subject           5        2          0.333                3        0              5  sample_processed_in_batch 2, …
    relatedness       3        4          0.667                1        4              3  …

- ``groups``, ``largest`` (samples in the largest group) and ``largest_share`` (of all samples);
- ``effective_folds``: the most folds whose test sets could each hold the largest group whole, ⌊samples / largest⌋,
  at most the number of groups — a grouping whose largest group is half the cohort allows two;
- ``changed``: the samples whose group, as a set of samples, differs from the first grouping's;
- ``exposed`` and ``exposed_links``: per declared relation the grouping does not follow, the entities or pairs it
  spreads over several groups (:func:`~depgraph.audit.exposure.exposure`): what could cross a split;
- ``warnings``: what the derivation warned of — samples without the mode's target kept as groups of one (their
  grouping is unknown, and they count among the groups and the exposed), a dominant group.

A composite combines ``via`` (every declared mode when not given). One group is an answer here, not an error: the
row says so (``effective_folds`` 1).

>>> import pandas as pd
>>> from depgraph import add_kinship, from_metadata
>>> g = from_metadata(pd.DataFrame({"sample_id": ["S1", "S2", "S3", "S4"], "subject_id": ["P1", "P1", "P2", "P3"]}))
>>> g = add_kinship(g, pd.DataFrame({"id1": ["P1"], "id2": ["P2"], "kinship": [0.25]}), "first")
>>> compare(g, ["subject", "relatedness"])[["grouping", "groups", "largest", "changed", "exposed"]].values.tolist()
[['subject', 3, 2, 0, 'subject_related_to 1'], ['relatedness', 2, 3, 3, '']]
>>> compare(g, ["subject", "relatedness"])["warnings"].tolist()[1]
'mode relatedness: group relatedness:S1 holds 3 of 4 samples (75%), the next largest 1; any split will be lopsided'
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd

from depgraph.audit.exposure import exposure
from depgraph.derivation.groups import derive
from depgraph.derivation.partition import Partition
from depgraph.errors import DepgraphError
from depgraph.graph.model import StudyGraph
from depgraph.spec.model import SplitSpec

COMPARE_COLUMNS = ["grouping", "groups", "largest", "largest_share", "effective_folds", "changed", "exposed_links",
                   "exposed", "warnings"]  # fmt: skip


def compare(graph: StudyGraph, modes: Sequence[str], *, via: Sequence[str] | None = None) -> pd.DataFrame:
    """One row per grouping of ``modes`` (a composite's over ``via``), in the order given: see the module."""
    if isinstance(modes, str) or not modes:
        raise DepgraphError("invalid_argument", f"compare takes a list of one or more modes, not {modes!r}")
    if len(set(modes)) != len(modes):
        raise DepgraphError("invalid_argument", f"compare: {modes!r} names a mode twice")
    if via is not None and "composite" not in modes:
        raise DepgraphError("invalid_argument", "compare: via names the modes a composite combines; no composite is "
                            "compared", parameter="via")  # fmt: skip
    # one group is an answer here: a composite over every declared mode is let make one (with via, derive does)
    partitions = [derive(graph, m, via=via if m == "composite" else None,
                         allow_single_group=m == "composite" and via is None) for m in modes]  # fmt: skip
    rows = [_row(graph, p, partitions[0]) for p in partitions]
    return pd.DataFrame(rows, columns=COMPARE_COLUMNS)


def _row(graph: StudyGraph, partition: Partition, first: Partition) -> tuple:  # type: ignore[type-arg]
    sizes = partition.group_sizes().to_numpy()
    n = int(sizes.sum())
    largest = int(sizes.max()) if len(sizes) else 0
    table = exposure(graph, SplitSpec.from_partition(partition, graph)).table
    spread = table[~table["followed"] & (table["spread_over_groups"] > 0)]
    name = partition.mode if partition.mode != "composite" else f"composite({'+'.join(partition.via)})"
    exposed = ", ".join(f"{r} {k}" for r, k in zip(spread["relation"], spread["spread_over_groups"], strict=True))
    return (name, int(partition.n_groups), largest, round(largest / n, 3) if n else 0.0,
            min(int(partition.n_groups), n // largest) if largest else 0, _changed(first, partition),
            int(spread["spread_over_groups"].sum()), exposed,
            "; ".join(w.message for w in partition.warnings))  # fmt: skip


def _changed(first: Partition, other: Partition) -> int:
    """Samples whose group, as a set of samples, differs between the two partitions (same samples, same order)."""
    a, b = first.group_codes().astype(np.int64), other.group_codes().astype(np.int64)
    pair = a * (int(b.max()) + 1 if len(b) else 1) + b
    _, pair_of, pair_size = np.unique(pair, return_inverse=True, return_counts=True)
    same = (pair_size[pair_of] == np.bincount(a)[a]) & (pair_size[pair_of] == np.bincount(b)[b])
    return int((~same).sum())
