"""Exposure on Spark: :func:`depgraph.exposure` for a :class:`~depgraph.spark.graph.SparkGraph` and a
:class:`~depgraph.spark.spec.SparkSpec` (or a :class:`~depgraph.spark.derive.SparkPartition`), counted by joins of
the graph's edge tables with the spec's groups and its folds' rows; the same table and block balance as on one
machine (:func:`depgraph.audit.exposure.exposure`), put together by the same code
(:func:`~depgraph.audit.exposure.exposure_report`, :func:`~depgraph.audit.exposure.block_balance`).

What is counted where:

- **Kept whole, spread over groups**: per entity (a subject, a batch…) or pair, in Spark; the driver receives the
  three sums and the first ``examples`` ids in sorted order.
- **Crossing**: a split's roles are the rows of its tested and excluded samples (every other sample of the spec is
  on the training side, as in the spec's file); an entity crosses a split when it has a tested member and a member
  neither tested nor excluded, a pair when one end is tested and the other on the training side, a pair of subjects
  when one subject has a tested sample and the other a training one. Counted per split in Spark.
- **Block balance**: the folds × blocks counts of the first repeat (a few numbers per fold and block) are collected,
  and χ² and Cramér's V computed on the driver.

A split made elsewhere (``assignment``) is judged on one machine only: reading it would repeat the assignment
reader's rules (ids, unused values, train/test or folds) in Spark.
"""

from __future__ import annotations

from functools import reduce
from typing import Any

import numpy as np
import pandas as pd
import pyarrow as pa
from pyspark.sql import Column, DataFrame, Window
from pyspark.sql import functions as F

from depgraph.audit.exposure import (
    BLOCK_RELATIONS,
    SKIPPED_RELATIONS,
    ExposureReport,
    assignment_roles,
    block_balance,
    exposure_report,
)
from depgraph.errors import DepgraphError, describe_ids
from depgraph.spark.cohort import EXCLUDED, TESTED
from depgraph.spark.derive import SparkPartition
from depgraph.spark.frames import SHOWN
from depgraph.spark.graph import SparkGraph
from depgraph.spark.session import checkpointed
from depgraph.spark.spec import SparkSpec
from depgraph.spec.model import SampleIndex
from depgraph.vocab import NODE_TYPES, RELATION, RELATIONS, NodeType, RelationName


def exposure_request(
    graph: SparkGraph,
    spec: SparkSpec | SparkPartition,
    assignment: object | None = None,
    *,
    examples: int = 3,
    **reading: Any,
) -> ExposureReport:
    """:func:`depgraph.exposure` on Spark: which of ``graph``'s declared dependencies ``spec`` keeps whole, leaves
    spread over groups and, with folds, lets cross a split (see the module docstring). ``reading`` (``id_column``,
    ``split_column``, ``encoding``) reads an assignment made elsewhere, judged instead of the spec's folds: read on
    the driver by the single machine's reader (:func:`~depgraph.audit.exposure.assignment_roles`) against the spec's
    sample ids collected there, its splits' tested and excluded samples then joined in Spark as a plan's rows."""
    if not isinstance(graph, SparkGraph):
        raise DepgraphError(
            "invalid_argument", f"exposure on Spark takes the graph as a SparkGraph, not {type(graph).__name__}"
        )
    if isinstance(spec, SparkPartition):
        spec = SparkSpec.of(spec)
    elif not isinstance(spec, SparkSpec):
        raise DepgraphError(
            "invalid_argument",
            f"exposure on Spark takes the spec as a SparkSpec or SparkPartition, not {type(spec).__name__}",
        )
    members = _members(graph, spec)
    fold_rows, splits = _splits(spec, assignment, reading)
    roles = None if fold_rows is None else checkpointed(_roles(members, fold_rows))
    counting = _Counting(graph, members, roles, len(splits), examples)
    present = [r for r in RELATIONS if r.name not in SKIPPED_RELATIONS and graph.has_relation(r.name)]
    entities = [r.name for r in present if r.source == NodeType.SAMPLE and r.target != NodeType.SAMPLE]
    found = {**counting.entities(entities), **counting.pairs([r.name for r in present if r.name not in entities])}
    blocks = block_balance(_block_counts(graph, members, roles, splits))
    return exposure_report([found[r.name] for r in present], spec.envelope["constraint"]["relations"], blocks)


def _members(graph: SparkGraph, spec: SparkSpec) -> DataFrame:
    """``g`` (the sample's vertex in the graph: samples come first), ``position`` (its row in the spec),
    ``group_id`` of every spec sample; ``reference`` when the spec holds samples the graph lacks, as on one
    machine."""
    samples = spec.samples.select(F.col("row").alias("position"), "sample_id", "group_id")
    keys = graph.nodes[NodeType.SAMPLE].select(F.col("row").alias("g"), F.col("key").alias("sample_id"))
    members = checkpointed(samples.join(keys, "sample_id", "left"))
    unknown = members.where(F.col("g").isNull())
    n_unknown = unknown.count()
    if n_unknown:
        first = [r[0] for r in unknown.orderBy("position").select("sample_id").limit(SHOWN).collect()]
        raise DepgraphError(
            "reference",
            f"the spec holds {n_unknown} sample(s) the graph lacks: {describe_ids(first, total=n_unknown)}",
        )
    return members.select("g", "position", "group_id")


def _splits(
    spec: SparkSpec, assignment: object | None, reading: dict[str, Any]
) -> tuple[DataFrame | None, list[dict[str, Any]]]:
    """The rows of the splits judged (``position``, ``split``, ``role`` of each tested or excluded sample) and the
    splits (their ``repeat``): the spec's folds, or an assignment's splits, all of one repeat (None: no folds)."""
    if assignment is None:
        return (None, []) if spec.folds is None else (spec.folds.rows, spec.folds.plan["splits"])
    if isinstance(assignment, DataFrame):  # a Spark table of the assignment: its rows read on the driver
        assignment = assignment.toArrow().to_pandas()
    ids = spec.samples.orderBy("row").select("sample_id").toArrow().column(0).to_numpy(zero_copy_only=False)
    roles = assignment_roles(SampleIndex(ids), assignment, **reading)  # type: ignore[arg-type]
    split, position = np.nonzero(roles)  # every role but training
    rows = pa.table(
        {
            "position": pa.array(position, pa.int64()),
            "split": pa.array(split, pa.int32()),
            "role": pa.array(np.where(roles[split, position] == 1, TESTED, EXCLUDED), pa.string()),
        }
    )
    frame = spec.samples.sparkSession.createDataFrame(rows)  # (from Arrow: PySpark warns about pandas 3)
    return frame, [{"repeat": 0}] * len(roles)


def _roles(members: DataFrame, fold_rows: DataFrame) -> DataFrame:
    """``g``, ``split``, ``tested`` (else excluded): the samples of each split not on its training side."""
    tested = (F.col("role") == TESTED).alias("tested")
    on_graph = members.select("g", "position")
    return fold_rows.select("position", "split", tested).join(on_graph, "position").drop("position")


def _sum(condition: Column) -> Column:
    return F.coalesce(F.sum(condition.cast("long")), F.lit(0))


class _Counting:
    """The exposure table's rows, counted in Spark for one graph, spec and fold plan: every relation of a kind
    (entities, pairs) in one query, the relation a column."""

    def __init__(self, graph: SparkGraph, members: DataFrame, roles: DataFrame | None, n_splits: int, examples: int):
        self.graph, self.members, self.roles, self.n_splits = graph, members, roles, n_splits
        self.examples = min(examples, 2**31 - 1)  # a row number's bound in Spark; more than any relation shows

    def entities(self, relations: list[str]) -> dict[str, dict[str, Any]]:
        """An entity (subject, batch…) links its samples when it has two or more; it is spread over groups when
        they are in two groups, and crosses a split with a tested member and a training one."""
        if not relations:
            return {}
        links = _union([self._edges(r, "g", "item") for r in relations]).join(self.members, "g")
        per = _spread(links, ["relation", "item"])
        linking = F.col("n") > 1
        crossing = None
        if self.roles is not None:
            sides = _sides(links, self.roles, ["relation", "item"], per)
            crossing = sides.where(F.col("test") & F.col("train")).select("relation", "item", "split")
        return self._rows("entities", relations, per, linking, linking & (F.col("low") != F.col("high")), crossing)

    def pairs(self, relations: list[str]) -> dict[str, dict[str, Any]]:
        """A pair (related subjects, adjacent or duplicate samples) is kept whole when both ends' samples are in
        one group, and crosses a split when one end has a tested sample and the other a training one. A sample is
        an end of one sample; a subject, of its samples in the spec."""
        if not relations:
            return {}
        ends, sides = self._sample_ends()
        if any(RELATION[r].source == NodeType.SUBJECT for r in relations):
            subject_ends, subject_sides = self._subject_ends()
            ends, sides = _union([ends, subject_ends]), None if sides is None else _union([sides, subject_sides])
        pairs = _union([self._edges(r, "a", "b") for r in relations])
        for end in ("a", "b"):
            pairs = pairs.join(ends.select(*(F.col(c).alias(f"{c}_{end}") for c in ends.columns)).withColumnRenamed(
                f"end_{end}", end), end)  # fmt: skip
        low_a, high_a, low_b, high_b = (F.col(c) for c in ("low_a", "high_a", "low_b", "high_b"))
        whole = (low_a == high_a) & (low_b == high_b) & (low_a == low_b)
        crossing = None
        if sides is not None:
            at = {end: pairs.select("relation", "a", "b").join(
                      sides.select(F.col("end").alias(end), "split", *(F.col(c).alias(f"{c}_{end}")
                                                                       for c in ("test", "train"))), end)
                  for end in ("a", "b")}  # fmt: skip
            both = at["a"].join(at["b"], ["relation", "a", "b", "split"], "full")
            # an end with no sample tested or excluded in a split has all its samples on the training side
            test_a, test_b = (F.coalesce(F.col(f"test_{e}"), F.lit(False)) for e in ("a", "b"))
            train_a, train_b = (F.coalesce(F.col(f"train_{e}"), F.lit(True)) for e in ("a", "b"))
            crossing = both.where((train_a & test_b) | (test_a & train_b)).select("relation", "a", "b", "split")
        return self._rows("pairs", relations, pairs, F.lit(True), ~whole, crossing)

    def _sample_ends(self) -> tuple[DataFrame, DataFrame | None]:
        """Each spec sample as the end of a pair (``end``, ``low`` = ``high`` its group, ``n`` 1), and its sides
        in each split that tests or excludes it (``end``, ``split``, ``test``, ``train`` false)."""
        ends = self.members.select(F.col("g").alias("end"), F.col("group_id").alias("low"),
                                   F.col("group_id").alias("high"), F.lit(1).cast("long").alias("n"))  # fmt: skip
        if self.roles is None:
            return ends, None
        return ends, self.roles.select(F.col("g").alias("end"), "split", F.col("tested").alias("test"),
                                       F.lit(False).alias("train"))  # fmt: skip

    def _subject_ends(self) -> tuple[DataFrame, DataFrame | None]:
        """Each subject with samples in the spec as the end of a pair: their lowest and highest group, their
        number; and its sides in each split that tests or excludes some of them."""
        links = self._edges(RelationName.SAMPLE_BELONGS_TO_SUBJECT, "g", "end").drop("relation")
        links = links.join(self.members, "g")
        per = _spread(links, ["end"])
        return per, None if self.roles is None else _sides(links, self.roles, ["end"], per)

    def _edges(self, relation: str, source: str, target: str) -> DataFrame:
        """The relation's edges as vertices (``source``, ``target``), with the relation's name."""
        rule = RELATION[relation]
        if relation not in self.graph.edges:  # a sample relation the graph lacks: no subject has a sample
            return self.members.sparkSession.createDataFrame([], f"relation string, {source} long, {target} long")
        return self.graph.edges[relation].select(
            F.lit(relation).alias("relation"),
            (F.col("source") + self.graph.start(rule.source)).alias(source),
            (F.col("target") + self.graph.start(rule.target)).alias(target),
        )

    def _rows(self, unit: str, relations: list[str], per: DataFrame, linking: Column, spread: Column,
              crossing: DataFrame | None) -> dict[str, dict[str, Any]]:  # fmt: skip
        """Each relation's row from ``per`` (one row per entity or pair) and its ``crossing`` rows (an entity or
        pair and a split it crosses)."""
        counts = {r: (linked, spread_n) for r, linked, spread_n in
                  per.groupBy("relation").agg(_sum(linking), _sum(spread)).collect()}  # fmt: skip
        rows = {r: _row(r, unit, *counts.get(r, (0, 0))) for r in relations}
        item = ["item"] if unit == "entities" else ["a", "b"]
        if crossing is not None:
            # per relation and split, and per relation over every split (the rollup's subtotal, split null);
            # distinct pairs are edges: a graph on Spark holds each edge once, as one machine's does (its readers
            # and builders check it)
            counted = crossing.rollup("relation", "split").agg(F.countDistinct(*item).alias("n")).collect()
            by_split = {(r, s): n for r, s, n in counted if r is not None}
            for r, row in rows.items():
                row["crossing_by_split"] = [int(by_split.get((r, i), 0)) for i in range(self.n_splits)]
                row["crossing"] = int(by_split.get((r, None), 0))
            crossed = [r for r in relations if rows[r]["crossing"]]
            for r, text in self._shown(crossing.select("relation", *item).distinct(), item, crossed).items():
                rows[r]["examples"] = text
        unshown = [r for r in relations if rows[r]["spread_over_groups"] and not rows[r]["crossing"]]
        for r, text in self._shown(per.where(spread).select("relation", *item), item, unshown).items():
            rows[r]["examples"] = text
        return rows

    def _shown(self, found: DataFrame, item: list[str], relations: list[str]) -> dict[str, str]:
        """Per relation of ``relations``, its first ``examples`` entities or pairs of ``found``, in sorted order:
        an entity by its id, a pair written ``low~high``."""
        if not self.examples or not relations:
            return {}
        ends = {getattr(RELATION[r], end) for r in relations for end in ("source", "target")} - {
            NodeType.SAMPLE if item == ["item"] else None
        }  # the entities' types, or the pairs' ends
        keys = _union([self.graph.nodes[t].select((F.col("row") + self.graph.start(t)).alias("vertex"), "key")
                       for t in sorted(ends, key=NODE_TYPES.index)])  # fmt: skip
        found = found.where(F.col("relation").isin(relations))
        for end in item:
            found = found.join(keys.select(F.col("vertex").alias(end), F.col("key").alias(f"key_{end}")), end)
        if item == ["item"]:
            found = found.select("relation", F.col("key_item").alias("low"), F.lit("").alias("high"))
        else:
            found = found.select("relation", F.least("key_a", "key_b").alias("low"),
                                 F.greatest("key_a", "key_b").alias("high"))  # fmt: skip
        place = F.row_number().over(Window.partitionBy("relation").orderBy("low", "high"))
        first = found.select("*", place.alias("place")).where(F.col("place") <= self.examples)
        shown: dict[str, list[str]] = {}
        for r in first.orderBy("relation", "place").collect():
            shown.setdefault(r["relation"], []).append(r["low"] if item == ["item"] else f"{r['low']}~{r['high']}")
        return {relation: ", ".join(texts) for relation, texts in shown.items()}


def _union(frames: list[DataFrame]) -> DataFrame:
    return reduce(DataFrame.unionByName, frames)


def _spread(links: DataFrame, item: list[str]) -> DataFrame:
    """Per ``item``: ``n``, its members among the spec's samples, and the ``low`` and ``high`` group among them."""
    return links.groupBy(*item).agg(
        F.count(F.lit(1)).alias("n"), F.min("group_id").alias("low"), F.max("group_id").alias("high")
    )


def _sides(links: DataFrame, roles: DataFrame, item: list[str], per: DataFrame) -> DataFrame:
    """Per ``item`` and split where some member is tested or excluded: ``test`` (a member is tested) and ``train``
    (a member is neither: fewer tested and excluded than its ``n`` members in ``per``)."""
    counted = (
        links.join(roles, "g")
        .groupBy(*item, "split")
        .agg(_sum(F.col("tested")).alias("tested"), F.count(F.lit(1)).alias("out"))
    )
    return counted.join(per.select(*item, "n"), item).select(
        *item, "split", (F.col("tested") > 0).alias("test"), (F.col("n") > F.col("out")).alias("train")
    )


def _row(relation: str, unit: str, linked: int, spread: int) -> dict[str, Any]:
    linked, spread = int(linked), int(spread)
    return {"relation": relation, "unit": unit, "linked": linked, "kept_whole": linked - spread,
            "spread_over_groups": spread, "crossing": None, "crossing_by_split": None,
            "examples": ""}  # fmt: skip


def _block_counts(
    graph: SparkGraph, members: DataFrame, roles: DataFrame | None, splits: list[dict[str, Any]]
) -> list[tuple[str, np.ndarray]]:
    """Per block relation the graph holds, the folds × blocks counts of the first repeat's splits (for one holdout
    split: test side against train side) over the spec's samples, each sample in its smallest block; one query."""
    relations = [r for r in BLOCK_RELATIONS if graph.has_relation(r)]
    if roles is None or not splits or not relations:
        return []
    first = [i for i, s in enumerate(splits) if s["repeat"] == splits[0]["repeat"]]
    if len(first) == 1:  # a holdout: tested 0, training 1, excluded in no fold
        role = members.select("g").join(roles.where(F.col("split") == first[0]), "g", "left")
        fold = role.select("g", F.when(F.col("tested").isNull(), 1).when(F.col("tested"), 0).alias("fold"))
    else:  # each sample in the fold that tests it
        fold = roles.where(F.col("tested") & F.col("split").isin(first)).groupBy("g").agg(F.max("split").alias("fold"))
    blocks = _union([graph.edges[r].groupBy(F.col("source").alias("g"))
                     .agg(F.min("target").alias("block")).select(F.lit(r).alias("relation"), "g", "block")
                     for r in relations])  # fmt: skip
    cells = fold.where(F.col("fold").isNotNull()).join(blocks, "g").groupBy("relation", "fold", "block").count()
    table = pd.DataFrame(cells.collect(), columns=["relation", "fold", "block", "count"])
    counts = []
    for relation in relations:
        mine = table[table["relation"] == relation]
        grid = mine.pivot_table(index="fold", columns="block", values="count", fill_value=0, aggfunc="sum")
        counts.append((relation, grid.sort_index().sort_index(axis=1).to_numpy(dtype=np.int64)))
    return counts
