"""The Spark engine's part of :func:`depgraph.validate`: the answers validation's rules ask of a graph
(:class:`~depgraph.validation.facts.GraphFacts`), counted over a :class:`~depgraph.spark.graph.SparkGraph`'s tables.

The rules and their wording are the single machine's (:mod:`depgraph.validation.rules`); what differs is how each
answer is counted — group-bys and joins over the edge tables, a regular expression over the keys, a derivation for
a mode's group shape. What comes back to the driver is bounded by what a report holds: counts, the nodes a finding
names (its ids, in node order), the distinct feature-set scopes, the timepoints (a study has few), and the two
largest group sizes. Structural findings are none: a SparkGraph is only built by the builders or read by
:func:`~depgraph.spark.graph.read_graph`, which refuse repeated ids, dangling, mistyped and repeated edges.
"""

from __future__ import annotations

import functools
from collections.abc import Sequence

import numpy as np
from pyspark.sql import DataFrame
from pyspark.sql import functions as F

from depgraph.common.identifiers import FORMULA_PATTERN
from depgraph.derivation.request import DeriveRequest
from depgraph.derivation.timeorder import time_order_problems
from depgraph.errors import DepgraphError
from depgraph.findings import Issue
from depgraph.spark.derive import derive_request, timepoint_graph
from depgraph.spark.graph import SparkGraph
from depgraph.validation.facts import SHOWN, Found, GroupCount, node_ids
from depgraph.vocab import MODE, NODE_TYPES, RELATION, NodeType, RelationName, direct_relation


def validate_request(graph: SparkGraph) -> SparkFacts:
    """The graph's answers for :func:`depgraph.validate` (which checks its arguments and words the findings)."""
    return SparkFacts(graph)


class SparkFacts:
    """:class:`~depgraph.validation.facts.GraphFacts` over a SparkGraph (each relation's edges counted once)."""

    def __init__(self, graph: SparkGraph) -> None:
        self.graph = graph
        self.name, self.history, self.overrides = graph.name, graph.history, graph.overrides
        self.n_nodes = sum(graph.count(t) for t in NODE_TYPES)
        self._edges = {relation: table.count() for relation, table in graph.edges.items()}
        self.n_edges = sum(self._edges.values())

    def count(self, node_type: NodeType) -> int:
        return self.graph.count(node_type)

    def has_relation(self, relation: str) -> bool:
        return self._edges.get(relation, 0) > 0

    def structure(self) -> list[Issue]:
        return []  # refused where a SparkGraph is built or read (the module docstring)

    def found(self, node_type: NodeType, rows: DataFrame) -> Found:
        """The nodes of ``node_type`` at ``rows`` (a ``row`` column, each once)."""
        keys = self.graph.nodes[node_type].select("row", "key")
        return self._collected(rows.join(keys, "row").select(F.lit(node_type.rank).alias("type"), "row", "key"))

    def _collected(self, keyed: DataFrame) -> Found:
        """``type``, ``row``, ``key`` rows collected in node order."""
        table = keyed.orderBy("type", "row").select(F.col("type").cast("int"), "key").toArrow()
        types, keys = (table.column(c).combine_chunks() for c in ("type", "key"))
        return Found(len(table), tuple(keys[:SHOWN].to_pylist()), lambda: tuple(node_ids(types, keys)))

    def _none(self) -> Found:
        return Found(0, (), tuple)

    def _per_end(self, relation: str, end: str) -> DataFrame:
        """``row`` (a node at ``end`` of the relation's edges), ``count`` (its edges)."""
        return self.graph.edges[relation].groupBy(F.col(end).alias("row")).count()

    def assignments(self, relation: str) -> tuple[Found, Found]:
        if not self.has_relation(relation) or not self.count(NodeType.SAMPLE):
            return self._none(), self._none()
        per = self._per_end(relation, "source")
        samples = self.graph.nodes[NodeType.SAMPLE].select("row")
        missing = samples.join(per, "row", "left_anti")
        return self.found(NodeType.SAMPLE, per.where("count > 1").select("row")), self.found(NodeType.SAMPLE, missing)

    def targets_with_samples(self, relation: str, at_least: int) -> Found:
        if not self.has_relation(relation):
            return self._none()
        heavy = self._per_end(relation, "target").where(F.col("count") >= at_least).select("row")
        return self.found(RELATION[relation].target, heavy)

    def subjects_spanning(self, relation: str) -> Found:
        edges = self.graph.edges
        subjects = edges[RelationName.SAMPLE_BELONGS_TO_SUBJECT].select("source", F.col("target").alias("row"))
        other = edges[relation].groupBy("source").agg(F.min("target").alias("other"))  # a sample's smallest, as one
        spanning = subjects.join(other, "source").groupBy("row").agg(F.countDistinct("other").alias("n"))
        return self.found(NodeType.SUBJECT, spanning.where("n > 1").select("row"))

    def _ends(self, pairs: DataFrame) -> DataFrame:
        return pairs.select(F.col("source").alias("row")).union(pairs.select(F.col("target").alias("row"))).distinct()

    def related_subjects(self) -> tuple[int, Found]:
        pairs = self.graph.edges[RelationName.SUBJECT_RELATED_TO]
        return self._edges[RelationName.SUBJECT_RELATED_TO], self.found(NodeType.SUBJECT, self._ends(pairs))

    def duplicates_across_subjects(self) -> tuple[int, Found]:
        edges = self.graph.edges
        pairs = edges[RelationName.SAMPLE_DUPLICATE_OF]
        if self.has_relation(RelationName.SAMPLE_BELONGS_TO_SUBJECT):  # (without subjects, every pair is across)
            of = edges[RelationName.SAMPLE_BELONGS_TO_SUBJECT].groupBy("source").agg(F.max("target").alias("of"))
            for end in ("source", "target"):
                pairs = pairs.join(of.select(F.col("source").alias(end), F.col("of").alias(f"{end}_of")), end, "left")
        else:
            pairs = pairs.select("*", *(F.lit(None).cast("long").alias(f"{e}_of") for e in ("source", "target")))
        across = pairs.where(
            F.col("source_of").isNull() | F.col("target_of").isNull() | (F.col("source_of") != F.col("target_of"))
        ).select("source", "target")
        across = across.cache()
        try:
            return across.count(), self.found(NodeType.SAMPLE, self._ends(across))
        finally:
            across.unpersist()

    def formula_like_keys(self) -> Found:
        hits = [
            table.where(F.col("key").rlike(FORMULA_PATTERN)).select(F.lit(node_type.rank).alias("type"), "row", "key")
            for node_type, table in self.graph.nodes.items()
            if self.count(node_type)
        ]
        return self._collected(functools.reduce(DataFrame.unionByName, hits)) if hits else self._none()

    def featuresets_by_scope(self, scopes: Sequence[str], inside: bool) -> tuple[Found, list[str]]:
        table = self.graph.nodes.get(NodeType.FEATURESET)
        if table is None or not self.count(NodeType.FEATURESET) or "derivation_scope" not in table.columns:
            return self._none(), []
        scope = F.col("derivation_scope")
        text = scope.cast("string")  # (true, 1.0E-7: only compared with the scope names, which are words)
        chosen = table.where(text.isin(list(scopes)) if inside else scope.isNotNull() & ~text.isin(list(scopes)))
        firsts = chosen.groupBy(scope.alias("scope")).agg(F.min("row").alias("first")).orderBy("first").collect()
        return self.found(NodeType.FEATURESET, chosen.select("row")), [str(r["scope"]) for r in firsts]  # as Python

    def time_order_problems(self) -> list[tuple[str, str, list[str]]]:
        if not self.has_relation(RelationName.TIMEPOINT_PRECEDES):
            return []
        return time_order_problems(timepoint_graph(self.graph))

    def timepoints_indexed(self) -> bool:
        table = self.graph.nodes.get(NodeType.TIMEPOINT)
        if table is None or "time_index" not in table.columns:
            return False
        index = F.col("time_index")
        return table.where(index.isNotNull() & ~F.isnan(index.cast("double"))).limit(1).count() > 0

    def group_shape(self, mode: str, via: Sequence[str] | None) -> GroupCount:
        if MODE[mode].kind == "direct":
            return self._direct_shape(mode)
        composite = via is not None
        request = DeriveRequest.of(mode, strategy="strict" if composite else None, via=via, allow_unlinked=True)
        partition = derive_request(self.graph, request)

        def top_two() -> np.ndarray:
            sizes = partition.samples.groupBy("group_id").count().orderBy(F.desc("count")).limit(2).collect()
            return np.array([r["count"] for r in sizes], dtype=np.int64)

        return GroupCount(partition.n_groups, partition.shape.largest_group_size, top_two)

    def _direct_shape(self, mode: str) -> GroupCount:
        """A direct mode's shape from two group-bys of its relation (no derivation): a sample's group is its target
        (its smallest, where several subjects are allowed), an unlinked sample is a group of its own."""
        relation, n = direct_relation(mode).name, self.count(NodeType.SAMPLE)
        if not self.has_relation(relation):
            return GroupCount(n, 1, lambda: np.ones(min(n, 2), dtype=np.int64))
        per_sample = self.graph.edges[relation].groupBy("source").agg(F.min("target").alias("target"),
                                                                      F.count(F.lit(1)).alias("targets"))  # fmt: skip
        sizes = per_sample.groupBy("target").agg(F.count(F.lit(1)).alias("size"), F.max("targets").alias("targets"))
        totals = sizes.agg(F.count(F.lit(1)), F.sum("size"), F.max("size"), F.max("targets")).collect()[0]
        groups, linked, largest, most_targets = (int(v) for v in totals)
        allowed = mode == "subject" and bool(self.overrides.get("allow_multi_subject_samples"))
        if most_targets > 1 and not allowed:  # as derive refuses it (its own rule reports it)
            raise DepgraphError("ambiguity", f"samples with more than one target of {relation}")
        unlinked = n - linked

        def top_two() -> np.ndarray:
            top = [r["size"] for r in sizes.orderBy(F.desc("size")).limit(2).collect()]
            return np.array(sorted([*top, *[1] * min(unlinked, 2)], reverse=True)[:2], dtype=np.int64)

        return GroupCount(groups + unlinked, max(largest, 1 if unlinked else 0), top_two)
