"""What a partition and a split spec share: a ``samples`` table, one row per sample, with its id and its group."""

from __future__ import annotations

import numpy as np


class GroupedSamples:
    """Read-only views of ``self.samples`` (a DataFrame with ``sample_id`` and ``group_id`` columns) for the classes
    that hold one: :class:`~depgraph.derivation.groups.Partition` and :class:`~depgraph.spec.model.SplitSpec`."""

    __slots__ = ()

    @property
    def n_samples(self) -> int:
        return len(self.samples)  # type: ignore[attr-defined]

    @property
    def sample_ids(self) -> np.ndarray:
        return self.samples["sample_id"].to_numpy(dtype=object)  # type: ignore[attr-defined]

    @property
    def group_ids(self) -> np.ndarray:
        return self.samples["group_id"].to_numpy(dtype=object)  # type: ignore[attr-defined]
