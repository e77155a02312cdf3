"""What every fold scheme on Spark starts from, and the few ways its choices go back to the samples.

A scheme is planned over a :class:`Cohort`: the spec's sample columns as a Spark table and each group's size. What
the single-machine scheme decides from the groups (k-fold, holdouts) is decided on the driver from one row per group
(:func:`ranked_groups`; at most :data:`DRIVER_GROUPS` groups) and sent back as a broadcast array
(:func:`splits_of_groups`); a planner gives :func:`depgraph.spark.folds.plan_folds` a :class:`Planned`: each
split's rows, tested or excluded.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pyarrow as pa
from pyspark import Broadcast
from pyspark.sql import Column, DataFrame
from pyspark.sql import functions as F

from depgraph.common.arrays import sorted_categories
from depgraph.errors import DepgraphError
from depgraph.folds.schemes import FoldScheme
from depgraph.spark.frames import numbered
from depgraph.spec.balance import MISSING_CATEGORY
from depgraph.spec.model import ROLES, SpecWarning

#: Groups the driver decides folds for at most (their sizes, class counts and folds are driver arrays).
DRIVER_GROUPS = 10_000_000
#: The rows of each tested sample a fold plan gives (one per split it is tested in).
FOLD_ROWS = "row long, sample_id string, split int"
#: A fold row's role: tested, or excluded (neither tested nor trained on); every other sample of a split trains.
TESTED, EXCLUDED = ROLES[1], ROLES[2]


@dataclass(frozen=True)
class Cohort:
    """The spec's sample columns (``samples``: ``row``, ``sample_id``, ``group_id`` and the rest), their names but
    ``row`` (``columns``), each group's size (``groups``: ``group_id``, ``size``), how many groups, and the most
    groups the driver may hold."""

    samples: DataFrame
    columns: list[str]
    groups: DataFrame
    n_groups: int
    driver_groups: int


@dataclass(frozen=True)
class Planned:
    """What a scheme's planner gives: the plan's rows (``row``, ``sample_id``, ``split``, ``role``: tested or
    excluded; every other sample of a split trains), the scheme as planned (its thresholds cut), the plan's
    number of splits, what it adds to its parameters and to its balance, and the warnings it makes."""

    rows: DataFrame
    scheme: FoldScheme
    n_splits: int
    parameters: dict[str, Any] = field(default_factory=dict)
    balance: dict[str, Any] = field(default_factory=dict)
    findings: list[SpecWarning] = field(default_factory=list)


def tested(frame: DataFrame) -> DataFrame:
    """``row``, ``sample_id``, ``split`` of tested samples as plan rows (``role`` tested)."""
    return frame.select("row", "sample_id", "split", F.lit(TESTED).alias("role"))


def ranked_groups(cohort: Cohort, scheme: FoldScheme) -> tuple[DataFrame, np.ndarray]:
    """Each group's number in group-id byte order (``group_id``, ``group``) and the sizes in that order, on the
    driver: ``invalid_argument`` beyond the cohort's ``driver_groups``."""
    refuse_beyond_driver(cohort.n_groups, cohort.driver_groups, scheme, "one row per group")
    ranked = numbered(cohort.groups, ["group_id"], "group")
    return ranked, driver_column(ranked.orderBy("group").select("size"))


def refuse_beyond_driver(rows: int, driver_groups: int, scheme: FoldScheme, what: str) -> None:
    """``invalid_argument`` when a scheme would bring more than ``driver_groups`` rows to the driver."""
    if rows > driver_groups:
        raise DepgraphError(
            "invalid_argument",
            f"{scheme.name} assigns folds on the Spark driver, {what}: {rows:,} rows exceed its limit of "
            f"{driver_groups:,} (driver_groups=); use hash folds, computed in Spark for any number of groups",
        )


def splits_of_groups(samples: DataFrame, ranked: DataFrame, splits: np.ndarray) -> DataFrame:
    """One row per sample and repeat with the split the driver's ``repeats × groups`` array gives its group. The
    array goes to the executors as a broadcast (4 bytes a group and repeat), looked up by the group's number in
    Spark's Python workers: a table made from driver rows would be copied into the driver's heap several times
    over (at 10^7 samples it ran a 1 GB heap out of memory)."""
    shared = samples.sparkSession.sparkContext.broadcast(splits.astype(np.int32))
    placed = samples.select("row", "sample_id", "group_id").join(ranked.select("group_id", "group"), "group_id")
    return placed.select("row", "sample_id", "group").mapInArrow(_folds_of_groups(shared), FOLD_ROWS)


def _folds_of_groups(shared: Broadcast) -> Callable[[Iterator[pa.RecordBatch]], Iterator[pa.RecordBatch]]:
    """The function each Spark Python worker runs over its batches of ``row``, ``sample_id``, ``group``: one row
    per repeat, with the split the broadcast ``repeats × groups`` array gives the sample's group."""

    def look_up(batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        folds = shared.value
        for batch in batches:
            group = batch.column("group").to_numpy()
            for splits in folds:
                yield pa.RecordBatch.from_arrays(
                    [batch.column("row"), batch.column("sample_id"), pa.array(splits[group], pa.int32())],
                    ["row", "sample_id", "split"],
                )

    return look_up


def category_codes(samples: DataFrame, column: str) -> tuple[Column, np.ndarray]:
    """The code of each sample's category of the text ``column`` (missing: ``(missing)``), numbered in sorted
    order as the single-machine plans number them, and the categories in that order; a column not of text is
    refused."""
    if dict(samples.dtypes)[column] != "string":
        raise DepgraphError(
            "invalid_argument",
            f"the Spark engine reads categories (to balance, stratify or leave out) from text columns; {column!r} "
            f"is {dict(samples.dtypes)[column]}: name a text column, or assign these folds on one machine",
            column=column,
        )
    value = F.coalesce(F.col(column), F.lit(MISSING_CATEGORY))
    found = [r[0] for r in samples.select(value.alias("v")).distinct().collect()]
    _, names = sorted_categories(pa.array(found, pa.string()))
    pairs = [item for i, name in enumerate(names) for item in (F.lit(name), F.lit(i))]
    return F.element_at(F.create_map(*pairs), value), names


def driver_column(frame: DataFrame) -> np.ndarray:
    """The one column of ``frame`` as a numpy array on the driver (through Arrow: no Python object per row)."""
    table = frame.toArrow()
    return numpy_column(table, table.column_names[0])


def numpy_column(table: pa.Table, column: str) -> np.ndarray:
    return table.column(column).to_numpy()
