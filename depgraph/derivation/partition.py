"""The Partition: one group per sample, and why — the value :func:`depgraph.derivation.groups.derive` makes.

It lives apart from the derivation so that what reads or writes a partition (the spec, the folds) does not load
the component search (scipy) it never runs.
"""

from __future__ import annotations

from dataclasses import InitVar, dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from depgraph.common.display import html_block, text_table
from depgraph.common.samples import GroupedSamples
from depgraph.derivation.shapes import GroupShape, group_shape
from depgraph.findings import Issue, findings_table


@dataclass(frozen=True, eq=False, kw_only=True)
class Derivation:
    """How a partition's groups were made, whichever engine made them (a :class:`Partition`, a
    :class:`~depgraph.spark.derive.SparkPartition`): a composite's strategy and modes, the relations followed,
    the findings, the builders' records (thresholds, radii) and the time order's origin (``parameters``)."""

    strategy: str | None = None
    relations: tuple[str, ...] = ()
    via: tuple[str, ...] = ()
    priority: tuple[str, ...] = ()
    warnings: tuple[Issue, ...] = ()
    parameters: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True, eq=False)
class Partition(Derivation, GroupedSamples):
    """One group per sample, and why.

    ``relations`` are the relations the grouping follows (an ordering such as
    ``timepoint_precedes`` is not one: ``parameters["time_order"]`` says where
    a time order came from). ``samples`` is a frame in sample-id order with columns ``sample_id``,
    ``group_id`` and ``basis`` (the mode that grouped the sample, or
    ``unlinked``); time-aware partitions add ``timepoint_id``, ``time_index``
    and ``order_rank``. ``shape`` (the number of groups, the largest, the
    singletons) is counted once, when the partition is made; a maker that
    counted it already passes it as ``known_shape``.

    >>> import pandas as pd
    >>> from depgraph import derive, from_metadata
    >>> g = from_metadata(pd.DataFrame({"sample_id": ["S1", "S2", "S3"], "batch_id": ["B1", "B1", None]}))
    >>> p = derive(g, "batch")
    >>> p.groups()
    {'S1': 'batch:B1', 'S2': 'batch:B1', 'S3': 'batch:unlinked:S3'}
    >>> p.n_groups, [w.code for w in p.warnings]
    (2, ['unlinked_samples', 'dominant_group'])
    """

    samples: pd.DataFrame
    mode: str
    shape: GroupShape = field(init=False, repr=False)
    known_shape: InitVar[GroupShape | None] = None

    def __post_init__(self, known_shape: GroupShape | None) -> None:
        # set while the value is made, never after (dataclasses.replace recounts unless it is passed on)
        object.__setattr__(self, "shape", known_shape if known_shape is not None else group_shape(self.group_ids))

    @property
    def n_groups(self) -> int:
        return self.shape.n_groups

    def groups(self) -> dict[str, str]:
        """``{sample_id: group_id}`` (for small partitions and tests)."""
        return dict(zip(self.sample_ids.tolist(), self.group_ids.tolist(), strict=True))

    def group_sizes(self) -> pd.Series:
        """Samples per group, largest first (ties by group id)."""
        sizes = self.samples.groupby("group_id", sort=True).size()
        return sizes.sort_values(ascending=False, kind="stable").rename("n_samples")

    def group_codes(self) -> np.ndarray:
        """Integer group codes (``0..n_groups-1`` in group-id order), one per sample."""
        return pd.factorize(self.samples["group_id"], sort=True)[0]

    def summary(self) -> dict[str, Any]:
        return {"n_samples": self.n_samples, **self.shape._asdict()}

    def _headline(self) -> str:
        how = f"{self.mode}/{self.strategy}" if self.strategy else self.mode
        found = f"; {len(self.warnings)} finding{'s' if len(self.warnings) != 1 else ''}" if self.warnings else ""
        return f"Partition({how}: {self.n_samples} samples in {self.n_groups} groups{found})"

    def __repr__(self) -> str:
        """The headline and, when the derivation found something, one line per finding with its first ids.

        >>> import pandas as pd
        >>> from depgraph import derive, from_metadata
        >>> derive(from_metadata(pd.DataFrame({"sample_id": ["S1", "S2", "S3"], "batch_id": ["B1", "B1", None]})),
        ...        "batch", allow_unlinked=True)
        Partition(batch: 3 samples in 2 groups; 2 findings)
        severity code              count about
        warning  unlinked_samples      1 S3
        warning  dominant_group        1 batch:B1
        """
        return "\n".join(filter(None, [self._headline(), text_table(findings_table(self.warnings))]))

    def _repr_html_(self) -> str:
        shape = self.shape
        lines = [
            f"relations followed: {', '.join(self.relations) or 'none'}",
            f"largest group: {shape.largest_group} ({shape.largest_group_size} samples); {shape.singletons} "
            "single-sample groups",
        ]
        return html_block(self._headline(), lines, [("findings", findings_table(self.warnings))])
