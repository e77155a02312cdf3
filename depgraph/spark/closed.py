"""Folds on Spark that test a block of samples and exclude the rest of the groups they touch: leave-one-block-out
(``logo``) and time-ordered folds (``time``), the single-machine splits of
:class:`~depgraph.folds.schemes.LeaveOneBlockOut` and :class:`~depgraph.folds.schemes.TimeOrdered`.

Both read one column of each sample (its block, its ``order_rank``). The driver holds only that column's distinct
values (the blocks, the time levels) and asks the single-machine scheme which of them each split tests and trains
on (:meth:`~depgraph.folds.schemes.LeaveOneBlockOut.tested_blocks`,
:meth:`~depgraph.folds.schemes.TimeOrdered.windows`); Spark tags each sample with the split testing it (a sample
is tested at most once: the blocks are disjoint), then closes the splits as one machine does: a tested group's
other samples are excluded, and so is every sample a split neither tests nor trains on (a time split's gap, its
future, samples without an ``order_rank``)::

    order_rank   1  2  3  4  5  6        split 1 of 2, gap=1: levels 3-4 tested; 1 trains;
    split 1      T  -  X  X  .  .        2 (the gap) and 5-6 (the future) excluded
"""

from __future__ import annotations

import numpy as np
from pyspark.sql import Column, DataFrame
from pyspark.sql import functions as F

from depgraph.folds.schemes import LeaveOneBlockOut, TimeOrdered, no_order_rank, require_column
from depgraph.spark.cohort import EXCLUDED, TESTED, Cohort, Planned, category_codes, driver_column


def logo_plan(cohort: Cohort, scheme: LeaveOneBlockOut) -> Planned:
    """One split per block of the ``by`` column (a text column; in sorted order, samples without one never
    tested); the plan's ``blocks`` parameter names them."""
    require_column(cohort.columns, scheme.by, "--by")
    code, names = category_codes(cohort.samples, scheme.by)
    blocks = scheme.tested_blocks(names)
    split_of_code = F.create_map(*[item for i, b in enumerate(blocks) for item in (F.lit(b), F.lit(i))])
    rows = _closed(cohort.samples, F.element_at(split_of_code, code), None, None)
    return Planned(rows, scheme, len(blocks), parameters=scheme.recorded_blocks(names))


def time_plan(cohort: Cohort, scheme: TimeOrdered) -> Planned:
    """Forward chaining over ``order_rank``: the distinct levels on the driver, each split's window of them
    (:meth:`~depgraph.folds.schemes.TimeOrdered.windows`) sent back as four level values."""
    scheme.check_window_parameters()
    samples = cohort.samples
    if "order_rank" not in cohort.columns:
        raise no_order_rank()
    rank = F.col("order_rank").cast("double")
    levels = driver_column(samples.where(rank.isNotNull() & ~F.isnan(rank)).select(rank.alias("r")).distinct())
    if not len(levels):
        raise no_order_rank()
    levels = np.sort(levels)
    windows = scheme.windows(len(levels))
    ends = np.append(levels, np.inf)  # a window trained from the last level + 1 on trains on nothing after
    split = F.lit(None).cast("int")
    for i, window in reversed(list(enumerate(windows))):
        inside = (rank >= float(levels[window.first])) & (rank <= float(levels[window.last]))
        split = F.when(inside, F.lit(i)).otherwise(split)
    bounds = samples.sparkSession.createDataFrame(
        [(i, float(levels[w.train_before]), float(ends[w.train_from])) for i, w in enumerate(windows)],
        "split int, before double, after double",
    )
    trained = (F.col("_rank") < F.col("before")) | (F.col("_rank") >= F.col("after"))
    return Planned(_closed(samples.withColumn("_rank", rank), split, bounds, trained), scheme, len(windows))


def _closed(samples: DataFrame, split: Column, bounds: DataFrame | None, trained: Column | None) -> DataFrame:
    """The plan rows (``row``, ``sample_id``, ``split``, ``role``) of splits testing the samples ``split`` names
    (null: none): each tested sample; the other samples of the groups it touches in its split; with ``bounds`` (a
    small table, one row per split), every sample ``trained`` (over a sample's columns and its split's bounds;
    null counts as false) leaves untrained."""
    tagged = samples.select("row", "sample_id", "group_id", split.alias("split"))
    tests = tagged.where(F.col("split").isNotNull())
    touched = tests.select("group_id", "split").distinct()
    others = samples.select("row", "sample_id", "group_id").join(touched, "group_id")
    excluded = others.select("row", "sample_id", "split")
    if bounds is not None and trained is not None:
        untrained = samples.crossJoin(F.broadcast(bounds)).where(~F.coalesce(trained, F.lit(False)))
        excluded = excluded.unionByName(untrained.select("row", "sample_id", "split"))
    excluded = excluded.distinct().join(tests.select("row", "split"), ["row", "split"], "left_anti")
    return tests.select("row", "sample_id", "split", F.lit(TESTED).alias("role")).unionByName(
        excluded.select("row", "sample_id", "split", F.lit(EXCLUDED).alias("role"))
    )
