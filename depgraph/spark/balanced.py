"""The balanced holdout on Spark (``balanced-holdout``), with or without a prior spec: the single-machine
:class:`~depgraph.folds.schemes.BalancedHoldout`, decided on the driver from a group-level summary.

What the holdout weighs is, for each group, how many of its samples fall in each category of the balance columns.
Spark counts each group's distinct combinations of those categories (one row per group and combination, at most
``driver_groups`` rows), and the driver runs the single-machine search over them
(:meth:`~depgraph.folds.schemes.BalancedHoldout.tested_groups`, each row weighing its count), so the tested groups,
the balance and the digest are those of one machine; the tested groups go back as a broadcast array.

A prior spec (``prior=``, a spec in the driver's memory) is matched in Spark: its samples' sides are joined to this
spec's samples, each group's returning samples counted, and the driver decides each group's side as one machine
does (:func:`~depgraph.folds.prior.group_sides`); the returning samples whose group takes the other side are
counted in Spark and the first of them named (``prior_side_changed``).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd
import pyarrow as pa
from pyspark.sql import DataFrame
from pyspark.sql import functions as F

from depgraph.folds.prior import (
    EXCLUDED,
    TESTED,
    PriorSides,
    group_sides,
    prior_roles_of,
    unrelated_prior,
)
from depgraph.folds.schemes import BalancedHoldout, require_column
from depgraph.spark.cohort import (
    Cohort,
    Planned,
    category_codes,
    numpy_column,
    ranked_groups,
    refuse_beyond_driver,
    splits_of_groups,
    tested,
)
from depgraph.spec.balance import joint_cell_metrics
from depgraph.spec.model import WARNING_ID_LIMIT


@dataclass(frozen=True)
class _RowsTested:
    """A holdout split over rows that stand for several samples each (what the joint-cell balance reads)."""

    n_train: int
    n_test: int
    n_excluded: int
    test: np.ndarray


def balanced_holdout_plan(cohort: Cohort, scheme: BalancedHoldout) -> Planned:
    """The single-machine balanced holdout over each group's category counts; see the module."""
    scheme.check_balance_parameters()
    for column in scheme.balance:
        require_column(cohort.columns, column, "--balance")
    coded = [category_codes(cohort.samples, column) for column in scheme.balance]
    ranked, sizes = ranked_groups(cohort, scheme)
    cells = [f"_cell{i}" for i in range(len(coded))]
    classes = (
        cohort.samples.select("group_id", *[code.alias(name) for (code, _), name in zip(coded, cells, strict=True)])
        .groupBy("group_id", *cells)
        .count()
    )
    refuse_beyond_driver(classes.count(), cohort.driver_groups, scheme, "one row per group and category")
    table = classes.join(ranked.select("group_id", "group"), "group_id").orderBy("group", *cells).toArrow()
    codes, weights = numpy_column(table, "group"), numpy_column(table, "count")
    sides = None if scheme.prior is None else _prior_sides(cohort, scheme, ranked)
    chosen = scheme.tested_groups(
        codes, sizes, [numpy_column(table, c) for c in cells], None if sides is None else sides.side, weights
    )
    rows = splits_of_groups(cohort.samples, ranked, np.where(chosen, 0, -1)[None]).where(F.col("split") >= 0)
    balance = {}
    if len(scheme.balance) >= 2:
        frame = pd.DataFrame({
            column: names[numpy_column(table, cell)]
            for column, (_, names), cell in zip(scheme.balance, coded, cells, strict=True)
        })  # fmt: skip
        n_test = int(sizes[chosen].sum())
        split = _RowsTested(int(sizes.sum()) - n_test, n_test, 0, np.flatnonzero(chosen[codes]))
        balance["joint_cells"] = joint_cell_metrics(frame, [split], scheme.balance, scheme.test_fraction, weights)
    findings = []
    if sides is not None:
        balance.update(scheme.prior_balance(sides))
        findings = scheme.moved_findings(sides)
    return Planned(tested(rows), scheme, 1, balance=balance, findings=findings)


def _prior_sides(cohort: Cohort, scheme: BalancedHoldout, ranked: DataFrame) -> PriorSides:
    """The prior's side of each group (in ``ranked``'s order), its returning samples counted in Spark."""
    prior = scheme.prior
    assert prior is not None
    roles = prior_roles_of(prior)
    spark = cohort.samples.sparkSession
    placed = spark.createDataFrame(
        pa.table({"sample_id": pa.array(prior.sample_ids, pa.string()), "_role": pa.array(roles, pa.int8())})
    )
    returning = cohort.samples.select("row", "sample_id", "group_id").join(placed, "sample_id")
    if returning.limit(1).count() == 0:  # entity ids alone do not make one cohort
        first = [r[0] for r in cohort.samples.orderBy("row").select("sample_id").limit(5).collect()]
        raise unrelated_prior(prior, first, cohort.samples.count(), False)
    known = returning.where(F.col("_role") != int(EXCLUDED))
    per_group = (
        known.join(ranked.select("group_id", "group"), "group_id")
        .groupBy("group")
        .agg(F.count(F.lit(1)).alias("seen"), F.sum((F.col("_role") == int(TESTED)).cast("long")).alias("tested"))
        .toArrow()
    )
    n = cohort.n_groups
    seen, tested_here = np.zeros(n, dtype=np.int64), np.zeros(n, dtype=np.float64)
    at = numpy_column(per_group, "group")
    seen[at], tested_here[at] = numpy_column(per_group, "seen"), numpy_column(per_group, "tested")
    group_ids = ranked.orderBy("group").select("group_id").toArrow().column(0).combine_chunks()
    side, conflicts = group_sides(prior, roles, np.asarray(group_ids.to_numpy(zero_copy_only=False)), tested_here, seen)
    sided = splits_of_groups(known, ranked, side[None]).withColumnRenamed("split", "_side")
    moved = sided.join(known.select("row", "_role"), "row").where(
        (F.col("_role") == int(TESTED)) != (F.col("_side") == 1)
    )
    ids = [r[0] for r in moved.orderBy("row").select("sample_id").limit(WARNING_ID_LIMIT).collect()]
    return PriorSides(side, conflicts, moved.count(), ids)
