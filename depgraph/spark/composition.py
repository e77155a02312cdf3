"""What each fold holds, counted in Spark: :func:`depgraph.fold_composition` of a
:class:`~depgraph.spark.spec.SparkSpec`.

The same tables as one machine's (:mod:`depgraph.audit.composition`), from three queries whose results are small:
each split's test samples and groups; each split's test samples per category of every declared factor; and, per
repeat and factor, the contingency table of units (a group's samples of one category in one fold count once) from
which the driver computes Cramér's V. No sample is collected to the driver.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from pyspark.sql import Column, DataFrame
from pyspark.sql import functions as F

from depgraph.audit.composition import (
    EXCLUDED,
    FoldComposition,
    association_row,
    composition_of,
    factor_columns,
    intended_columns,
    share_rows,
)
from depgraph.spark.cohort import EXCLUDED as EXCLUDED_ROLE
from depgraph.spark.cohort import TESTED, category_codes
from depgraph.spark.spec import SparkSpec
from depgraph.spec.model import Constraint


def fold_composition_request(spec: SparkSpec, warn: bool = True) -> FoldComposition:
    """:func:`depgraph.fold_composition` on Spark: the composition of ``spec``'s folds, warned about with ``warn``.
    A factor column not of text (which no derivation writes) is left out: Spark reads categories from text."""
    text = dict(spec.samples.dtypes)
    columns = [c for c in factor_columns(spec.columns) if text[c] == "string"]
    codes, names = {}, {}
    for column in columns:
        codes[column], names[column] = category_codes(spec.samples, column)
    coded = spec.samples.select("row", "group_id", *[code.alias(column) for column, code in codes.items()])
    splits = spec.folds.plan["splits"]
    tested = spec.folds.rows.where(F.col("role") == TESTED).select("split", F.col("position").alias("row"))
    tested = tested.join(coded, "row")
    sizes = {s: (n, g) for s, n, g in tested.groupBy("split").agg(F.count(F.lit(1)), F.countDistinct("group_id"))
             .collect()}  # fmt: skip
    counts = _counts_by_split(tested, columns, names, len(splits))
    shares = []
    for i, split in enumerate(splits):
        for column in columns:
            shares += share_rows(split["repeat"], split["fold"], column, names[column], counts[column][i])
    constraint = spec.envelope.get("constraint")
    intended = intended_columns(None if constraint is None else Constraint.model_validate(constraint),
                                spec.folds.plan["parameters"])  # fmt: skip
    blocks = [c for c in columns if c != "stratum"]  # the outcome's association is the plan's own
    tables = _unit_tables(spec, coded, blocks, splits)
    association = [
        association_row(repeat, column, *tables.get((repeat, column), (None, None)), column in intended)
        for repeat in sorted({s["repeat"] for s in splits})
        for column in blocks
    ]
    size_rows = [{"repeat": s["repeat"], "fold": s["fold"], "n_test": int(sizes.get(i, (0, 0))[0]),
                  "n_groups": int(sizes.get(i, (0, 0))[1])} for i, s in enumerate(splits)]  # fmt: skip
    return composition_of(size_rows, shares, association, warn)


def _long(frame: DataFrame, columns: list[str], keys: list[str]) -> DataFrame:
    """``frame``'s ``keys`` with one row per factor column: ``column`` (its position in ``columns``), ``code``."""
    pairs = F.array(*[F.struct(F.lit(i).alias("column"), F.col(c).alias("code")) for i, c in enumerate(columns)])
    return frame.select(*keys, F.explode(pairs).alias("pair")).select(*keys, "pair.column", "pair.code")


def _counts_by_split(tested: DataFrame, columns: list[str], names: dict[str, np.ndarray],
                     n_splits: int) -> dict[str, list[np.ndarray]]:  # fmt: skip
    """Per factor column, each split's test samples per category (in the categories' order)."""
    counts = {c: [np.zeros(len(names[c]), dtype=np.int64) for _ in range(n_splits)] for c in columns}
    if columns:
        for split, column, code, n in _long(tested, columns, ["split"]).groupBy("split", "column", "code").count(
        ).collect():  # fmt: skip
            counts[columns[column]][split][code] = n
    return counts


def _unit_tables(spec: SparkSpec, coded: DataFrame, columns: list[str],
                 splits: list[dict[str, Any]]) -> dict[tuple[int, str], tuple[np.ndarray, np.ndarray]]:  # fmt: skip
    """Per repeat and block column, the fold labels present (-1: trained, never tested) and the contingency table
    of units by label and category; a repeat testing some sample twice has none (no fold label: V is NaN)."""
    if not columns:
        return {}
    repeats = sorted({s["repeat"] for s in splits})
    labels = _labels(spec.folds.rows, splits, repeats)
    twice = {r for r, most in labels.groupBy("repeat").agg(F.max("n_tested")).collect() if most > 1}
    per_repeat = coded.crossJoin(coded.sparkSession.createDataFrame([(r,) for r in repeats], "repeat int"))
    labelled = per_repeat.join(labels, ["repeat", "row"], "left")
    label = _label(labelled, {r: sum(s["repeat"] == r for s in splits) for r in repeats})
    units = _long(labelled.select("repeat", "group_id", label.alias("label"), *columns), columns,
                  ["repeat", "group_id", "label"]).where(F.col("label") != EXCLUDED).distinct()  # fmt: skip
    found: dict[tuple[int, str], dict[tuple[int, int], int]] = {}
    for repeat, column, fold, code, n in units.groupBy("repeat", "column", "label", "code").count().collect():
        if repeat not in twice:
            found.setdefault((repeat, columns[column]), {})[(fold, code)] = n
    return {key: _table(cells) for key, cells in found.items()}


def _labels(rows: DataFrame, splits: list[dict[str, Any]], repeats: list[int]) -> DataFrame:
    """Per repeat and sample row a plan lists: the splits testing it (``n_tested``), the fold of one that does, and
    the splits excluding it (``n_excluded``)."""
    repeat_of = F.element_at(F.array(*[F.lit(s["repeat"]) for s in splits]), F.col("split") + 1)
    fold_of = F.element_at(F.array(*[F.lit(s["fold"]) for s in splits]), F.col("split") + 1)
    is_tested = F.col("role") == TESTED
    return rows.select(repeat_of.alias("repeat"), F.col("position").alias("row"), is_tested.alias("tested"),
                       fold_of.alias("fold"), (F.col("role") == EXCLUDED_ROLE).alias("excluded")).groupBy(
        "repeat", "row").agg(F.sum(F.col("tested").cast("int")).alias("n_tested"),
                             F.max(F.when(F.col("tested"), F.col("fold"))).alias("fold"),
                             F.sum(F.col("excluded").cast("int")).alias("n_excluded"))  # fmt: skip


def _label(labelled: DataFrame, splits_in: dict[int, int]) -> Column:
    """A sample's fold in its repeat: the fold testing it; -1 when the repeat trains on it but never tests it;
    EXCLUDED when every split of the repeat excludes it."""
    in_repeat = F.element_at(F.create_map(*[F.lit(x) for r, k in splits_in.items() for x in (r, k)]), F.col("repeat"))
    return (F.when(F.coalesce(F.col("n_tested"), F.lit(0)) > 0, F.col("fold"))
            .when(F.coalesce(F.col("n_excluded"), F.lit(0)) == in_repeat, F.lit(EXCLUDED))
            .otherwise(F.lit(-1)))  # fmt: skip


def _table(cells: dict[tuple[int, int], int]) -> tuple[np.ndarray, np.ndarray]:
    """The fold labels present, and the table of counts by label (rows) and category present (columns)."""
    folds = np.array(sorted({f for f, _ in cells}), dtype=np.int64)
    codes = sorted({c for _, c in cells})
    table = np.zeros((len(folds), len(codes)), dtype=np.int64)
    for (fold, code), n in cells.items():
        table[np.searchsorted(folds, fold), codes.index(code)] = n
    return folds, table
