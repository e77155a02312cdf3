"""From a SparkGraph to one group per sample, in Spark: the same groups, labels, findings and refusals as
:func:`depgraph.derivation.groups.derive`.

* **direct** modes (subject, batch, study, time, …): a sample's group is ``<mode>:<its target's key>``, or
  ``<mode>:unlinked:<sample_id>`` alone (an ``unlinked_samples`` warning names it); a sample with two targets is
  ``ambiguity``, except in subject mode under ``allow_multi_subject_samples`` (the smallest subject id, with a
  warning);
* **component** modes (relatedness, spatial, duplicate) and **composite strict**: connected components
  (:mod:`depgraph.spark.components`) over the mode's relations, every sample kept — a sample no edge touches is a
  component of its own — labelled ``<mode>:<smallest member sample_id>`` (``composite:`` for strict);
* **composite rule_based**: each sample takes the first mode of ``priority`` that links it
  (``composite_<mode>:…``), else ``composite:unlinked:<sample_id>``.

The findings are the single-machine engine's, word for word (a spec's digest covers them): they are counted in
Spark and only their first ids brought to the driver. ``samples=`` (a subset) is not offered here: derive on the
graph of the samples wanted.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, ClassVar

import numpy as np
import pandas as pd
import pyarrow as pa
from pyspark.sql import DataFrame
from pyspark.sql import functions as F

from depgraph.derivation import request as asked  # the request, findings and refusals both engines share
from depgraph.derivation.partition import Derivation
from depgraph.derivation.request import unknown_samples, unprefixed_samples, wanted_samples
from depgraph.derivation.shapes import GroupShape
from depgraph.derivation.timeorder import sample_time_columns
from depgraph.errors import DepgraphError, describe_ids
from depgraph.findings import Issue, finding
from depgraph.graph.assembly import assemble_sorted
from depgraph.graph.model import StudyGraph
from depgraph.graph.pieces import RelationEdges
from depgraph.spark.components import HUB_DEGREE, connected_components
from depgraph.spark.frames import SHOWN, first_values
from depgraph.spark.graph import SparkGraph
from depgraph.spark.session import checkpointed
from depgraph.vocab import (
    MODE,
    RELATION,
    NodeType,
    RelationName,
    direct_relation,
    relation_names,
)

#: The most timepoints whose order the driver computes.
MOST_TIMEPOINTS = 1_000_000
#: The time columns a time-aware partition and a spec carry.
TIME_COLUMNS = ("timepoint_id", "time_index", "order_rank")


@dataclass(frozen=True, eq=False)
class SparkPartition(Derivation):
    """One group per sample, as a Spark table, and why: what :class:`~depgraph.derivation.groups.Partition` holds.

    ``samples`` has the columns ``row`` (the sample's row: its place in sample-id order), ``sample_id``,
    ``group_id`` and ``basis`` (the mode that grouped the sample, or ``unlinked``); ``shape`` and ``n_samples``
    are counted once, in Spark; ``rounds`` is how many rounds the components took (0 for a direct mode)."""

    __depgraph_engine__: ClassVar[str] = "spark"  # its spec is made on Spark (depgraph.engines)

    graph: SparkGraph
    samples: DataFrame
    mode: str
    shape: GroupShape
    n_samples: int
    rounds: int = 0
    subset: bool = False  # derived for some of the graph's samples (samples=): ``graph`` is theirs

    @property
    def n_groups(self) -> int:
        return self.shape.n_groups

    def groups(self) -> dict[str, str]:
        """``{sample_id: group_id}``, collected to the driver (for small partitions and tests)."""
        return {r["sample_id"]: r["group_id"] for r in self.samples.select("sample_id", "group_id").collect()}


def derive_request(
    graph: SparkGraph, request: asked.DeriveRequest, samples: Any = None, *, hub_degree: int = HUB_DEGREE
) -> SparkPartition:
    """The Spark engine's part of :func:`depgraph.derive`, which checks the request and calls this for a
    :class:`~depgraph.spark.graph.SparkGraph`. ``hub_degree``: see
    :func:`~depgraph.spark.components.connected_components`. ``samples=`` derives on the graph the samples
    induce (:meth:`~depgraph.spark.graph.SparkGraph.induced`), as on one machine; edges to the samples left out
    still count as links (such a sample is declared)."""
    if graph.count(NodeType.SAMPLE) == 0:
        raise DepgraphError("empty_input", "the graph has no samples")
    whole, selected = graph, None
    if samples is not None:
        selected = selected_rows(graph, samples)
        graph = graph.induced(selected)
    partition = _partition(graph, request, hub_degree)
    if selected is not None and partition.n_samples < whole.count(NodeType.SAMPLE):
        partition = SparkPartition(**{**partition.__dict__, "subset": True})
    if not request.allow_unlinked and _links_nothing(whole, partition, selected):
        raise asked.no_relation(graph, partition)

    def top_two() -> np.ndarray:
        sizes = partition.samples.groupBy("group_id").count().orderBy(F.desc("count")).limit(2).collect()
        return np.array([r["count"] for r in sizes], dtype=np.int64)

    found = asked.shape_findings(partition, top_two)
    partition = SparkPartition(**{**partition.__dict__, "warnings": (*partition.warnings, *found)})
    culprits = lambda: _culprits(graph, partition, hub_degree)  # noqa: E731 - counted on the refusal's path only
    request.refuse_too_few_groups(partition, lambda: asked.single_group(partition, culprits()))
    return partition


def _partition(graph: SparkGraph, request: asked.DeriveRequest, hub_degree: int) -> SparkPartition:
    """The partition of a checked request, before the shape findings and refusals."""
    mode = request.mode
    kind = MODE[mode].kind
    if kind == "direct":
        samples, notes = _direct(graph, mode, f"{mode}:")
        samples = samples.select("row", "sample_id", "group_id", F.when(F.col("linked"), mode).otherwise(
            "unlinked").alias("basis"))  # fmt: skip
        parameters: dict[str, Any] = {}
        if mode == "time":
            samples, parameters = _with_time(graph, samples, notes)
        return _made(graph, samples, mode, relations=(direct_relation(mode).name,), warnings=tuple(notes),
                     parameters=parameters)  # fmt: skip
    if kind == "component":
        return _component(graph, mode, hub_degree)
    strategy, via, priority = request.composite(graph)
    if strategy == "strict":
        relations = relation_names(via)
        samples, rounds = _components(graph, relations, "composite:", hub_degree)
        parameters = asked.build_parameters(graph, via)
        return _made(graph, samples.withColumn("basis", F.lit("composite")), "composite", strategy="strict",
                     relations=relations, via=via, parameters=parameters, rounds=rounds)  # fmt: skip
    return _rule_based(graph, via, priority, hub_degree)


def _made(graph: SparkGraph, samples: DataFrame, mode: str, **fields: Any) -> SparkPartition:
    """The partition of ``samples`` (kept: its groups are read several times), its shape counted."""
    samples = checkpointed(samples)
    n, shape = shape_of_samples(samples)
    return SparkPartition(graph, samples, mode, shape, n, **fields)


def shape_of_samples(samples: DataFrame) -> tuple[int, GroupShape]:
    """The number of samples and the :class:`GroupShape` (largest group: the smallest id among the largest), in
    one Spark job: the smallest of (minus size, id) is the largest group with the smallest id."""
    sizes = samples.groupBy("group_id").agg(F.count(F.lit(1)).alias("size"))
    totals = sizes.agg(
        F.sum("size").alias("n"),
        F.count(F.lit(1)).alias("groups"),
        F.min(F.struct((-F.col("size")).alias("minus"), F.col("group_id").alias("id"))).alias("largest"),
        F.sum(F.when(F.col("size") == 1, 1).otherwise(0)).alias("singletons"),
    ).collect()[0]
    if not totals["groups"]:
        return 0, GroupShape(0, None, 0, 0)
    largest = totals["largest"]
    return int(totals["n"]), GroupShape(int(totals["groups"]), largest["id"], -int(largest["minus"]),
                                        int(totals["singletons"]))  # fmt: skip


# --------------------------------------------------------------------------- direct modes
def _targets(graph: SparkGraph, mode: str) -> tuple[DataFrame, list[Issue]]:
    """``row``, ``key``: each linked sample's one target for a direct mode (the smallest key under the
    multi-subject override, with its warning); a sample with several is ``ambiguity``."""
    rel = direct_relation(mode)
    if not graph.has_relation(rel.name):
        return graph.spark.createDataFrame([], "row long, key string"), []
    targets = graph.target_keys(rel.name)
    per_sample = targets.groupBy("row").agg(F.min("key").alias("key"), F.count(F.lit(1)).alias("n"))
    per_sample = checkpointed(per_sample)
    several = per_sample.where(F.col("n") > 1)
    count = several.count()
    notes: list[Issue] = []
    if count:
        ids = first_values(several.join(graph.sample_ids(), "row"), "sample_id", SHOWN)
        if not (mode == "subject" and graph.overrides.get("allow_multi_subject_samples")):
            hint = (" (set the allow_multi_subject_samples override to use the smallest subject id)"
                    if mode == "subject" else "")  # fmt: skip
            raise DepgraphError(
                "ambiguity",
                f"{count} sample(s) have more than one {rel.target.value.lower()}: "
                f"{describe_ids(ids, total=count)}{hint}",
                ids=ids,
            )
        notes.append(
            finding(
                "multi_subject_first_chosen",
                f"{count} sample(s) linked to several subjects were grouped by their smallest subject id: "
                f"{describe_ids(ids, total=count)}",
                ids=tuple(ids),
                count=count,
            )
        )
    return per_sample.select("row", "key"), notes


def _direct(graph: SparkGraph, mode: str, prefix: str) -> tuple[DataFrame, list[Issue]]:
    """``row``, ``sample_id``, ``group_id``, ``linked`` for a direct mode, with its findings (``prefix``:
    ``subject:``, or ``composite_subject:`` within a rule-based composite)."""
    targets, notes = _targets(graph, mode)
    samples = graph.sample_ids().join(targets, "row", "left")
    linked = F.col("key").isNotNull()
    unlinked_prefix = f"{mode}:unlinked:"
    samples = samples.select(
        "row",
        "sample_id",
        F.when(linked, F.concat(F.lit(prefix), "key"))
        .otherwise(F.concat(F.lit(unlinked_prefix), "sample_id"))
        .alias("group_id"),
        linked.alias("linked"),
        "key",
    )
    samples = checkpointed(samples)
    missing = samples.where(~F.col("linked"))
    count = missing.count()
    if count:
        if prefix == f"{mode}:" and count < graph.count(NodeType.SAMPLE):
            _refuse_label_collisions(mode, samples, missing)
        ids = first_values(missing, "sample_id", SHOWN)
        notes.append(asked.unlinked_finding(mode, ids, count))
    return samples.drop("key"), notes


def _refuse_label_collisions(mode: str, samples: DataFrame, missing: DataFrame) -> None:
    """A target key such as ``unlinked:S5`` would merge its samples with unlinked sample S5's singleton."""
    clash = samples.where(F.col("linked")).select("group_id").join(missing.select("group_id"), "group_id", "semi")
    labels = first_values(clash, "group_id")
    if labels:
        raise asked.label_collision(mode, labels)


def time_columns(graph: SparkGraph) -> tuple[DataFrame, list[Issue], str]:
    """``row``, ``timepoint_id``, ``time_index``, ``order_rank`` of each sample with a timepoint, the time-order
    findings and where the order came from, as :func:`~depgraph.derivation.timeorder.sample_time_columns` gives
    them: that function computes the order on the driver over the timepoints in use (a study has few: at most
    :data:`MOST_TIMEPOINTS`), and Spark joins it to the samples. An inconsistent order is ``time_order``."""
    relation = RelationName.SAMPLE_COLLECTED_AT_TIMEPOINT
    per_sample = graph.edges[relation].groupBy(F.col("source").alias("row")).agg(F.min("target").alias("tp"))
    per_sample = checkpointed(per_sample)
    used = sorted(r[0] for r in per_sample.select("tp").distinct().collect())
    timepoints = timepoint_graph(graph)
    table, notes, source = sample_time_columns(timepoints, np.asarray(used, dtype=np.int64))
    local = graph.spark.createDataFrame(
        pd.DataFrame({"tp": used, "timepoint_id": table["timepoint_id"].astype(object),
                      "time_index": table["time_index"], "order_rank": table["order_rank"].astype("float64")}),
        "tp long, timepoint_id string, time_index double, order_rank double",
    )  # fmt: skip
    local = local.select(
        "tp", "timepoint_id",
        F.when(~F.isnan("time_index"), F.col("time_index")).alias("time_index"),
        F.when(~F.isnan("order_rank"), F.col("order_rank").cast("long")).alias("order_rank"),
    )  # fmt: skip
    return per_sample.join(F.broadcast(local), "tp").select("row", *TIME_COLUMNS), notes, source


def timepoint_graph(graph: SparkGraph) -> StudyGraph:
    """The graph's timepoints and their precedence, on the driver (a study has few: at most
    :data:`MOST_TIMEPOINTS`; more is ``invalid_argument``), as one machine holds them."""
    n = graph.count(NodeType.TIMEPOINT)
    if n > MOST_TIMEPOINTS:
        raise DepgraphError(
            "invalid_argument",
            f"the graph has {n} timepoints; the Spark engine orders at most {MOST_TIMEPOINTS} on the driver",
        )
    nodes = graph.nodes[NodeType.TIMEPOINT].orderBy("row").toPandas()
    attributes = {NodeType.TIMEPOINT: nodes[["time_index"]]} if "time_index" in nodes.columns else {}
    relations = {}
    if graph.has_relation(RelationName.TIMEPOINT_PRECEDES):
        precedes = RelationName.TIMEPOINT_PRECEDES
        pairs = graph.edges[precedes].orderBy("source", "target").toPandas()
        relations[precedes] = RelationEdges(
            precedes, pairs["source"].to_numpy(np.int64), pairs["target"].to_numpy(np.int64), None, ("metadata",),
            canonical=True,
        )  # fmt: skip
    keys = {NodeType.TIMEPOINT: pa.array(nodes["key"].tolist(), type=pa.string())}
    return assemble_sorted(keys, attributes, relations)


def _with_time(graph: SparkGraph, samples: DataFrame, notes: list[Issue]) -> tuple[DataFrame, dict[str, Any]]:
    """``samples`` with the time columns (null where a sample has no timepoint), the time findings added to
    ``notes``, and the ``time_order`` parameter; a graph without timepoints has the order ``none``."""
    if not graph.has_relation(RelationName.SAMPLE_COLLECTED_AT_TIMEPOINT):
        empty = [
            F.lit(None).cast(kind).alias(c) for c, kind in zip(TIME_COLUMNS, ("string", "double", "long"), strict=True)
        ]
        return samples.select("*", *empty), {"time_order": "none"}
    times, time_notes, source = time_columns(graph)
    notes += time_notes
    return samples.join(times, "row", "left"), {"time_order": source}


# --------------------------------------------------------------------------- component modes
def _components(graph: SparkGraph, relations: Sequence[str], prefix: str, hub_degree: int) -> tuple[DataFrame, int]:
    """``row``, ``sample_id``, ``group_id`` (``prefix`` + the smallest member sample id) of every sample over
    the components of ``relations``, and the rounds they took. A sample no edge touches is its own component."""
    present = [r for r in relations if graph.has_relation(r)]
    samples = graph.sample_ids()
    if not present:
        return samples.select("row", "sample_id", F.concat(F.lit(prefix), "sample_id").alias("group_id")), 0
    edges = graph.vertex_edges(present[0])
    for relation in present[1:]:
        edges = edges.unionByName(graph.vertex_edges(relation))
    labels, rounds = connected_components(edges, hub_degree)
    n_samples = graph.count(NodeType.SAMPLE)  # sample vertices are 0..n-1, in sample-id order
    components = labels.where(F.col("vertex") < n_samples).select(F.col("vertex").alias("row"), "component")
    smallest = components.groupBy("component").agg(F.min("row").alias("first"))
    first_ids = smallest.join(samples.select(F.col("row").alias("first"), F.col("sample_id").alias("label")), "first")
    grouped = components.join(first_ids.select("component", "label"), "component").select("row", "label")
    samples = samples.join(grouped, "row", "left").select(
        "row", "sample_id", F.concat(F.lit(prefix), F.coalesce("label", "sample_id")).alias("group_id")
    )
    return samples, rounds


def _touched(graph: SparkGraph, relations: Sequence[str]) -> DataFrame:
    """``row`` of each sample at least one edge of ``relations`` touches."""
    ends = []
    for rel in relations:
        if not graph.has_relation(rel):
            continue
        rule = RELATION[rel]
        edges = graph.edges[rel]
        if rule.source == NodeType.SAMPLE:
            ends.append(edges.select(F.col("source").alias("row")))
        if rule.target == NodeType.SAMPLE:
            ends.append(edges.select(F.col("target").alias("row")))
    if not ends:
        return graph.spark.createDataFrame([], "row long")
    found = ends[0]
    for more in ends[1:]:
        found = found.unionByName(more)
    return found.distinct()


def _component(graph: SparkGraph, mode: str, hub_degree: int) -> SparkPartition:
    relations = relation_names([mode])
    samples, rounds = _components(graph, relations, f"{mode}:", hub_degree)
    notes = asked.missing_relation_findings(graph, mode)
    if mode == "relatedness":
        unlinked = graph.sample_ids().join(
            _touched(graph, (RelationName.SAMPLE_BELONGS_TO_SUBJECT,)), "row", "left_anti"
        )
        count = unlinked.count()
        if count:
            notes.append(asked.unlinked_finding("subject", first_values(unlinked, "sample_id"), count))
    return _made(graph, samples.withColumn("basis", F.lit(mode)), mode, relations=relations, warnings=tuple(notes),
                 parameters=asked.build_parameters(graph, [mode]), rounds=rounds)  # fmt: skip


def _rule_based(graph: SparkGraph, via: tuple[str, ...], priority: tuple[str, ...], hub_degree: int) -> SparkPartition:
    """Each sample's group from the first mode of ``priority`` that links it."""
    chosen = graph.sample_ids().select("row", "sample_id", F.lit(None).cast("string").alias("group_id"),
                                       F.lit("unlinked").alias("basis"))  # fmt: skip
    notes: list[Issue] = []
    rounds = 0
    for mode in priority:
        if MODE[mode].kind == "direct":
            targets, mode_notes = _targets(graph, mode)
            notes += mode_notes
            offered = targets.select("row", F.concat(F.lit(f"composite_{mode}:"), "key").alias("offer"))
        else:
            relations = relation_names([mode])
            groups, used = _components(graph, relations, f"composite_{mode}:", hub_degree)
            rounds += used
            offered = groups.join(_touched(graph, relations), "row", "semi").select(
                "row", F.col("group_id").alias("offer"))  # fmt: skip
        open_row = F.col("group_id").isNull() & F.col("offer").isNotNull()
        chosen = checkpointed(chosen.join(offered, "row", "left").select(
            "row", "sample_id", F.when(open_row, F.col("offer")).otherwise(F.col("group_id")).alias("group_id"),
            F.when(open_row, F.lit(mode)).otherwise(F.col("basis")).alias("basis"),
        ))  # fmt: skip
    missing = chosen.where(F.col("group_id").isNull())
    count = missing.count()
    if count:
        notes.append(asked.unprioritized_finding(first_values(missing, "sample_id"), count))
    chosen = chosen.select("row", "sample_id", F.coalesce("group_id", F.concat(F.lit("composite:unlinked:"),
                           "sample_id")).alias("group_id"), "basis")  # fmt: skip
    parameters: dict[str, Any] = {}
    if "time" in priority:
        chosen, parameters = _with_time(graph, chosen, notes)
    relations = relation_names(priority)
    return _made(graph, chosen, "composite", strategy="rule_based", relations=relations, via=via, priority=priority,
                 warnings=tuple(notes), parameters=parameters, rounds=rounds)  # fmt: skip


# --------------------------------------------------------------------------- refusals and shape findings
def _links_nothing(graph: SparkGraph, partition: SparkPartition, selected: DataFrame | None) -> bool:
    """Whether no derived sample (of ``selected`` rows of ``graph``, all without) has an edge of a relation the
    mode follows anywhere in the graph (as the single-machine engine decides)."""
    if MODE[partition.mode].kind == "direct":
        return partition.samples.where(F.col("basis") != "unlinked").limit(1).count() == 0
    if partition.shape.singletons < partition.n_samples:
        return False
    touched = _touched(graph, partition.relations)
    if selected is not None:
        touched = touched.join(selected, "row")
    return touched.limit(1).count() == 0


def selected_rows(graph: SparkGraph, samples: Any, what: str = "samples=") -> DataFrame:
    """``row`` of each sample ``samples=`` names (ids read as on one machine, node ids ``sample:S1`` too); ids
    naming no sample are ``reference``, as on one machine, naming ``what`` (the file they came from)."""
    wanted = wanted_samples(samples)
    named = graph.spark.createDataFrame(
        pd.DataFrame({"at": np.arange(len(wanted)), "key": wanted, "bare": unprefixed_samples(wanted)}),
        "at long, key string, bare string",
    )
    keys = graph.nodes[NodeType.SAMPLE].select("row", "key")
    found = named.join(keys, "key", "left")
    again = found.where(F.col("row").isNull()).select("at", F.col("bare").alias("key")).join(keys, "key", "left")
    rows = found.where(F.col("row").isNotNull()).select("at", "row").unionByName(again.select("at", "row"))
    unknown = sorted(r["at"] for r in rows.where(F.col("row").isNull()).select("at").collect())
    if unknown:
        raise unknown_samples(wanted[unknown], what)
    return checkpointed(rows.select("row").distinct())


def _culprits(graph: SparkGraph, partition: SparkPartition, hub_degree: int) -> list[str]:
    """The modes of a default composite that by themselves put every sample in one group (counted in Spark, on
    this refusal's path only)."""
    culprits = []
    for mode in partition.via:
        if MODE[mode].kind == "direct":
            targets, _ = _targets(graph, mode)
            alone = targets.count() == partition.n_samples and targets.select("key").distinct().count() == 1
        else:
            groups, _ = _components(graph, relation_names([mode]), f"{mode}:", hub_degree)
            alone = groups.select("group_id").distinct().count() == 1
        if alone:
            culprits.append(mode)
    return culprits
