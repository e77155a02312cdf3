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
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd
import pyarrow as pa
from pyspark.sql import DataFrame
from pyspark.sql import functions as F

from depgraph.common.arguments import flag, names, whole_number
from depgraph.derivation.shapes import GroupShape, collapse_finding
from depgraph.derivation.timeorder import sample_time_columns
from depgraph.errors import DepgraphError, describe_ids
from depgraph.findings import Issue, finding
from depgraph.graph.assembly import assemble_sorted
from depgraph.graph.pieces import RelationEdges
from depgraph.spark.components import HUB_DEGREE, connected_components
from depgraph.spark.frames import SHOWN, first_values
from depgraph.spark.graph import SparkGraph
from depgraph.spark.session import checkpointed
from depgraph.vocab import (
    COMBINABLE_MODES,
    MODE,
    RELATION,
    NodeType,
    canonical_name,
    direct_relation,
    mode_named,
    relations_for_mode,
    strategy_named,
)

#: The most timepoints whose order the driver computes.
MOST_TIMEPOINTS = 1_000_000
#: The time columns a time-aware partition and a spec carry.
TIME_COLUMNS = ("timepoint_id", "time_index", "order_rank")


@dataclass(frozen=True, eq=False)
class SparkPartition:
    """One group per sample, as a Spark table, and why: what :class:`~depgraph.derivation.groups.Partition` holds.

    ``samples`` has the columns ``row`` (the sample's row: its place in sample-id order), ``sample_id``,
    ``group_id`` and ``basis`` (the mode that grouped the sample, or ``unlinked``); ``shape`` and ``n_samples``
    are counted once, in Spark; ``rounds`` is how many rounds the components took (0 for a direct mode)."""

    graph: SparkGraph
    samples: DataFrame
    mode: str
    shape: GroupShape
    n_samples: int
    strategy: str | None = None
    relations: tuple[str, ...] = ()
    via: tuple[str, ...] = ()
    priority: tuple[str, ...] = ()
    warnings: tuple[Issue, ...] = ()
    parameters: dict[str, Any] = field(default_factory=dict)
    rounds: int = 0

    @property
    def n_groups(self) -> int:
        return self.shape.n_groups

    def groups(self) -> dict[str, str]:
        """``{sample_id: group_id}``, collected to the driver (for small partitions and tests)."""
        return {r["sample_id"]: r["group_id"] for r in self.samples.select("sample_id", "group_id").collect()}


def derive(
    graph: SparkGraph,
    mode: str,
    *,
    strategy: str | None = None,
    via: Sequence[str] | None = None,
    priority: Sequence[str] | None = None,
    min_groups: int | None = None,
    allow_unlinked: bool = False,
    allow_single_group: bool = False,
    hub_degree: int = HUB_DEGREE,
) -> SparkPartition:
    """Reduce ``graph`` to one group per sample, as :func:`depgraph.derive` does (same arguments but ``samples``;
    ``hub_degree``: see :func:`~depgraph.spark.components.connected_components`)."""
    mode = mode_named(mode)
    if min_groups is not None:
        min_groups = whole_number(min_groups, "min_groups", minimum=1)
    allow_unlinked = flag(allow_unlinked, "allow_unlinked")
    allow_single_group = flag(allow_single_group, "allow_single_group")
    via = None if via is None else names(via, "via")
    priority = None if priority is None else names(priority, "priority")
    if MODE[mode].kind != "composite" and (strategy is not None or via is not None or priority is not None):
        raise DepgraphError("invalid_argument", f"strategy, via and priority apply to mode 'composite', not {mode!r}")
    by_default = mode == "composite" and via is None and priority is None
    if allow_single_group and not by_default:
        raise DepgraphError(
            "invalid_argument",
            "allow_single_group (--allow-single-group) applies to mode 'composite' without via or priority",
        )
    if graph.count(NodeType.SAMPLE) == 0:
        raise DepgraphError("empty_input", "the graph has no samples")
    partition = _partition(graph, mode, strategy, via, priority, hub_degree)
    if not allow_unlinked and _links_nothing(graph, partition):
        raise _no_relation(graph, partition)
    partition = _with_shape_warnings(partition)
    if by_default and not allow_single_group and partition.n_groups == 1 and partition.n_samples > 1:
        raise DepgraphError(
            "too_few_groups",
            f"mode composite/{partition.strategy} over every declared mode ({','.join(partition.via)}) puts all "
            f"{partition.n_samples} samples in one group; choose the modes with --via, or accept one group with "
            "--allow-single-group / allow_single_group=True",
            n_groups=1,
        )
    if min_groups is not None and partition.n_groups < min_groups:
        raise DepgraphError(
            "too_few_groups",
            f"mode {_mode_label(partition)} leaves {partition.n_groups} group(s) for {partition.n_samples} samples; "
            f"{min_groups} are needed",
            n_groups=partition.n_groups,
            min_groups=min_groups,
        )
    return partition


def _partition(
    graph: SparkGraph,
    mode: str,
    strategy: str | None,
    via: Sequence[str] | None,
    priority: Sequence[str] | None,
    hub_degree: int,
) -> SparkPartition:
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
    strategy = "strict" if strategy is None else strategy_named(strategy)
    via_modes = _via_modes(graph, via, priority)
    if strategy == "strict":
        if priority is not None:
            raise DepgraphError("invalid_argument", "priority applies to strategy 'rule_based', not 'strict'")
        relations = tuple(dict.fromkeys(r.name for m in via_modes for r in relations_for_mode(m)))
        samples, rounds = _components(graph, relations, "composite:", hub_degree)
        parameters = {}
        for m in via_modes:
            parameters.update(_build_parameters(graph, m))
        return _made(graph, samples.withColumn("basis", F.lit("composite")), "composite", strategy="strict",
                     relations=relations, via=via_modes, parameters=parameters, rounds=rounds)  # fmt: skip
    return _rule_based(graph, via_modes, _priority(priority, via_modes), hub_degree)


def _made(graph: SparkGraph, samples: DataFrame, mode: str, **fields: Any) -> SparkPartition:
    """The partition of ``samples`` (kept: its groups are read several times), its shape counted."""
    samples = checkpointed(samples)
    n, shape = _shape(samples)
    return SparkPartition(graph, samples, mode, shape, n, **fields)


def _shape(samples: DataFrame) -> tuple[int, GroupShape]:
    """The number of samples and the :class:`GroupShape` (largest group: the smallest id among the largest)."""
    sizes = samples.groupBy("group_id").agg(F.count(F.lit(1)).alias("size"))
    totals = sizes.agg(
        F.sum("size").alias("n"),
        F.count(F.lit(1)).alias("groups"),
        F.max("size").alias("largest"),
        F.sum(F.when(F.col("size") == 1, 1).otherwise(0)).alias("singletons"),
    ).collect()[0]
    if not totals["groups"]:
        return 0, GroupShape(0, None, 0, 0)
    name = sizes.where(F.col("size") == totals["largest"]).agg(F.min("group_id")).collect()[0][0]
    return int(totals["n"]), GroupShape(int(totals["groups"]), name, int(totals["largest"]), int(totals["singletons"]))


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
        notes.append(_unlinked_warning(mode, ids, count))
    return samples.drop("key"), notes


def _refuse_label_collisions(mode: str, samples: DataFrame, missing: DataFrame) -> None:
    """A target key such as ``unlinked:S5`` would merge its samples with unlinked sample S5's singleton."""
    clash = samples.where(F.col("linked")).select("group_id").join(missing.select("group_id"), "group_id", "semi")
    labels = first_values(clash, "group_id")
    if labels:
        keys = [c.split(":", 1)[1] for c in labels]
        raise DepgraphError(
            "ambiguity",
            f"{mode} key(s) {describe_ids(keys)} read as the label of an unlinked sample ({describe_ids(labels)}); "
            "rename them",
            ids=keys,
        )


def _unlinked_warning(mode: str, ids: list[str], count: int) -> Issue:
    what = "timepoint" if mode == "time" else mode
    return finding(
        "unlinked_samples",
        f"{count} sample(s) have no {what} and were kept as singleton groups: {describe_ids(ids, total=count)}",
        ids=tuple(ids),
        count=count,
        details={"mode": mode},
    )


def time_columns(graph: SparkGraph) -> tuple[DataFrame, list[Issue], str]:
    """``row``, ``timepoint_id``, ``time_index``, ``order_rank`` of each sample with a timepoint, the time-order
    findings and where the order came from, as :func:`~depgraph.derivation.timeorder.sample_time_columns` gives
    them: that function computes the order on the driver over the timepoints in use (a study has few: at most
    :data:`MOST_TIMEPOINTS`), and Spark joins it to the samples. An inconsistent order is ``time_order``."""
    relation = "sample_collected_at_timepoint"
    per_sample = graph.edges[relation].groupBy(F.col("source").alias("row")).agg(F.min("target").alias("tp"))
    per_sample = checkpointed(per_sample)
    used = sorted(r[0] for r in per_sample.select("tp").distinct().collect())
    n = graph.count(NodeType.TIMEPOINT)
    if n > MOST_TIMEPOINTS:
        raise DepgraphError(
            "invalid_argument",
            f"the graph has {n} timepoints; the Spark engine orders at most {MOST_TIMEPOINTS} on the driver",
        )
    nodes = graph.nodes[NodeType.TIMEPOINT].orderBy("row").toPandas()
    attributes = {NodeType.TIMEPOINT: nodes[["time_index"]]} if "time_index" in nodes.columns else {}
    relations = {}
    if graph.has_relation("timepoint_precedes"):
        pairs = graph.edges["timepoint_precedes"].orderBy("source", "target").toPandas()
        relations["timepoint_precedes"] = RelationEdges(
            "timepoint_precedes", pairs["source"].to_numpy(np.int64), pairs["target"].to_numpy(np.int64), None,
            ("metadata",), canonical=True,
        )  # fmt: skip
    keys = {NodeType.TIMEPOINT: pa.array(nodes["key"].tolist(), type=pa.string())}
    timepoints = assemble_sorted(keys, attributes, relations)
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


def _with_time(graph: SparkGraph, samples: DataFrame, notes: list[Issue]) -> tuple[DataFrame, dict[str, Any]]:
    """``samples`` with the time columns (null where a sample has no timepoint), the time findings added to
    ``notes``, and the ``time_order`` parameter; a graph without timepoints has the order ``none``."""
    if not graph.has_relation("sample_collected_at_timepoint"):
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
    relations = tuple(r.name for r in relations_for_mode(mode))
    samples, rounds = _components(graph, relations, f"{mode}:", hub_degree)
    notes: list[Issue] = []
    own = relations[-1]
    if not graph.has_relation(own):
        notes.append(
            finding(
                "no_relation_edges",
                f"the graph has no {own} edges: {mode} groups "
                + ("equal subject groups" if mode == "relatedness" else "are all singletons"),
                details={"relation": own},
            )
        )
    if mode == "relatedness":
        unlinked = graph.sample_ids().join(_touched(graph, ("sample_belongs_to_subject",)), "row", "left_anti")
        count = unlinked.count()
        if count:
            notes.append(_unlinked_warning("subject", first_values(unlinked, "sample_id"), count))
    return _made(graph, samples.withColumn("basis", F.lit(mode)), mode, relations=relations, warnings=tuple(notes),
                 parameters=_build_parameters(graph, mode), rounds=rounds)  # fmt: skip


def _build_parameters(graph: SparkGraph, mode: str) -> dict[str, Any]:
    """Thresholds and radii recorded by the builders the mode relies on."""
    step = {"relatedness": "add_kinship", "spatial": "add_spatial", "duplicate": "add_duplicates"}.get(mode)
    records = [dict(h) for h in graph.history if h.get("step") == step]
    return {step: records} if records else {}


# --------------------------------------------------------------------------- composite modes
def _via_modes(graph: SparkGraph, via: Sequence[str] | None, priority: Sequence[str] | None) -> tuple[str, ...]:
    if via is None and priority is not None:
        via = priority
    if via is None:
        present = tuple(m for m in COMBINABLE_MODES if graph.has_relation(relations_for_mode(m)[-1].name))
        if not present:
            raise DepgraphError(
                "no_relation",
                "mode 'composite' has nothing to combine: the graph holds none of the relations of "
                f"{', '.join(COMBINABLE_MODES)}; declare one, or name modes with via",
                mode="composite",
            )
        return present
    modes = tuple(dict.fromkeys(canonical_name(m) for m in via))
    unknown = [m for m in modes if m not in COMBINABLE_MODES]
    if unknown or not modes:
        raise DepgraphError(
            "invalid_argument",
            f"via/priority take mode names ({describe_ids(COMBINABLE_MODES, 20)}); "
            f"got {describe_ids(unknown) or 'none'}",
        )
    return modes


def _priority(priority: Sequence[str] | None, via: tuple[str, ...]) -> tuple[str, ...]:
    if priority is None:
        return via
    order = tuple(dict.fromkeys(canonical_name(m) for m in priority))
    outside = [m for m in order if m not in via]
    if outside:
        raise DepgraphError(
            "invalid_argument", f"priority modes {describe_ids(outside)} are not in via ({describe_ids(via)})"
        )
    return order


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
            relations = tuple(r.name for r in relations_for_mode(mode))
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
        ids = first_values(missing, "sample_id")
        notes.append(
            finding(
                "unlinked_samples",
                f"{count} sample(s) match no prioritized mode and were kept as singleton groups: "
                f"{describe_ids(ids, total=count)}",
                ids=tuple(ids),
                count=count,
                details={"mode": "composite"},
            )
        )
    chosen = chosen.select("row", "sample_id", F.coalesce("group_id", F.concat(F.lit("composite:unlinked:"),
                           "sample_id")).alias("group_id"), "basis")  # fmt: skip
    parameters: dict[str, Any] = {}
    if "time" in priority:
        chosen, parameters = _with_time(graph, chosen, notes)
    relations = tuple(dict.fromkeys(r.name for m in priority for r in relations_for_mode(m)))
    return _made(graph, chosen, "composite", strategy="rule_based", relations=relations, via=via, priority=priority,
                 warnings=tuple(notes), parameters=parameters, rounds=rounds)  # fmt: skip


# --------------------------------------------------------------------------- refusals and shape findings
def _links_nothing(graph: SparkGraph, partition: SparkPartition) -> bool:
    """Whether no sample has an edge of a relation the mode follows (as the single-machine engine decides)."""
    if MODE[partition.mode].kind == "direct":
        return partition.samples.where(F.col("basis") != "unlinked").limit(1).count() == 0
    if partition.shape.singletons < partition.n_samples:
        return False
    return _touched(graph, partition.relations).limit(1).count() == 0


def _no_relation(graph: SparkGraph, partition: SparkPartition) -> DepgraphError:
    label = f"'{_mode_label(partition)}'" + (f" (via {','.join(partition.via)})" if partition.mode == "composite"
                                             else "")  # fmt: skip
    missing = [r for r in partition.relations if not graph.has_relation(r)]
    lacking = "none" if len(missing) == len(partition.relations) else f"no {' or '.join(missing)} edges"
    return DepgraphError(
        "no_relation",
        f"mode {label} needs {' and '.join(partition.relations)} edges; the graph has {lacking}; every one of the "
        f"{partition.n_samples} samples would be a group of its own (accept that with --allow-unlinked / "
        "allow_unlinked=True)",
        mode=partition.mode,
        missing=missing,
    )


def _with_shape_warnings(partition: SparkPartition) -> SparkPartition:
    """The single-machine engine's shape findings: one group, a dominant group, mostly singletons."""
    notes = list(partition.warnings)
    shape, n = partition.shape, partition.n_samples
    label = _mode_label(partition)

    def top_two() -> np.ndarray:
        sizes = partition.samples.groupBy("group_id").count().orderBy(F.desc("count")).limit(2).collect()
        return np.array([r["count"] for r in sizes], dtype=np.int64)

    collapse = collapse_finding(n, shape.n_groups, shape.largest_group_size, top_two, label,
                                group=shape.largest_group)  # fmt: skip
    notes += [collapse] if collapse is not None else []
    alone = shape.singletons
    if MODE[partition.mode].kind != "direct" and partition.strategy != "rule_based" and n > 1 and alone > n / 2:
        notes.append(
            finding(
                "mostly_singletons",
                f"mode {label}: {alone} of {n} samples are alone in their group; dependency coverage may be sparse",
            )
        )
    return SparkPartition(**{**partition.__dict__, "warnings": tuple(notes)})


def _mode_label(partition: SparkPartition) -> str:
    return f"composite/{partition.strategy}" if partition.strategy else partition.mode
