"""The bundled example: a synthetic family cohort, and the story run on it.

:func:`demo_cohort` builds, deterministically, what a family study hands
over: families of two siblings, each seen at three visits, samples processed
in six batches, a kinship table in which siblings are first-degree relatives,
and a few samples re-deposited under new sample *and subject* ids, declared as
duplicates. Subject grouping cannot see either kind of link; relatedness plus
duplicates can.

>>> cohort = demo_cohort(n_families=4, n_redeposits=2)
>>> len(cohort.metadata), len(cohort.kinship), len(cohort.duplicates)
(26, 4, 2)
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from depgraph.derive import Partition
from depgraph.graph import StudyGraph

N_BATCHES = 6
VISITS = (("V0", 0), ("V1", 6), ("V2", 12))  # months since baseline


@dataclass(frozen=True)
class DemoCohort:
    """The tables a study team would hand over."""

    metadata: pd.DataFrame
    kinship: pd.DataFrame
    duplicates: pd.DataFrame


def demo_cohort(n_families: int = 40, n_redeposits: int = 6, seed: int = 7) -> DemoCohort:
    """A family cohort with kinship and re-deposited samples (deterministic for a seed)."""
    rng = np.random.default_rng(seed)
    rows = []
    for f in range(1, n_families + 1):
        site = "north" if f % 2 else "south"
        for sib in ("a", "b"):
            subject = f"F{f:03d}{sib}"
            for visit, month in VISITS:
                rows.append(
                    {
                        "sample_id": f"S-{subject}-{visit}",
                        "subject_id": subject,
                        "family": f"F{f:03d}",
                        "batch_id": f"B{rng.integers(1, N_BATCHES + 1)}",
                        "site_id": site,
                        "timepoint_id": visit,
                        "time_index": month,
                        "outcome_id": "case" if rng.random() < 0.35 else "control",
                    }
                )
    metadata = pd.DataFrame(rows)
    # Re-deposits: the same specimen uploaded again with a new sample id and a new subject id.
    originals = metadata.iloc[rng.choice(len(metadata), size=n_redeposits, replace=False)].sort_values("sample_id")
    copies = originals.copy()
    copies["sample_id"] = [f"R{i:03d}" for i in range(1, n_redeposits + 1)]
    copies["subject_id"] = [f"X{i:03d}" for i in range(1, n_redeposits + 1)]
    copies["batch_id"] = [f"B{b}" for b in rng.integers(1, N_BATCHES + 1, size=n_redeposits)]
    metadata = pd.concat([metadata, copies], ignore_index=True)
    families = metadata.drop_duplicates("family")["family"]
    kinship = pd.DataFrame(
        {
            "id1": [f"{fam}a" for fam in families],
            "id2": [f"{fam}b" for fam in families],
            "kinship": np.round(rng.normal(0.25, 0.02, size=len(families)).clip(0.19, 0.31), 4),
        }
    )
    duplicates = pd.DataFrame({"id1": originals["sample_id"].to_numpy(), "id2": copies["sample_id"].to_numpy()})
    return DemoCohort(metadata.reset_index(drop=True), kinship, duplicates)


def pairs_split(graph: StudyGraph, partition: Partition) -> dict[str, int]:
    """How many related-subject and duplicate pairs a partition puts in different groups."""
    group_of = pd.Series(partition.group_ids, index=partition.sample_ids)
    keys = graph.nodes["key"].to_numpy(dtype=object)
    # a subject's group: the group of its samples (one per subject in any mode that keeps subjects whole)
    s_src, s_dst, _ = graph.relation_edges("sample_belongs_to_subject")
    subject_group = pd.Series(group_of.reindex(keys[s_src]).to_numpy(), index=s_dst).groupby(level=0).first()
    k_src, k_dst, _ = graph.relation_edges("subject_related_to")
    d_src, d_dst, _ = graph.relation_edges("sample_duplicate_of")
    return {
        "subject_related_to": int(
            (subject_group.reindex(k_src).to_numpy() != subject_group.reindex(k_dst).to_numpy()).sum()
        ),
        "sample_duplicate_of": int(
            (group_of.reindex(keys[d_src]).to_numpy() != group_of.reindex(keys[d_dst]).to_numpy()).sum()
        ),
    }
