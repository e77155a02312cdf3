"""A study graph on Spark: :class:`SparkGraph`, read from a columnar graph file with every element checked in
Spark.

A SparkGraph holds what a :class:`~depgraph.graph.model.StudyGraph` holds, as DataFrames laid out as the columnar
graph file lays them out (:mod:`depgraph.graph.columnar`): per node type a table ``row``, ``key`` and its
attributes, rows numbered ``0..n-1`` in key byte order; per relation a table ``source``, ``target`` (rows of the
relation's source and target types) and ``weight`` where the relation carries one. A node's *vertex* is its type's
start plus its row — the position the single-machine graph gives it (types in :data:`~depgraph.vocab.NODE_TYPES`
order, samples first) — so the smallest sample vertex of a component is its smallest sample id.
:mod:`depgraph.spark.tables` builds one from DataFrames.

Reading checks what :func:`~depgraph.graph.columnar.graph_from_columnar` checks, in Spark: the manifest and its
listing, every table's columns and rows, keys non-empty text in byte order each once, every endpoint a row of its
node table, edges in order and each once, weights finite.
"""

from __future__ import annotations

import os
import tempfile
from dataclasses import dataclass, field, replace
from functools import reduce
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
from pyspark.sql import Column, DataFrame, SparkSession
from pyspark.sql import functions as F

from depgraph.errors import DepgraphError, describe_ids
from depgraph.graph.columnar import EDGE_COLUMNS, graph_tables, manifest_document, tables_by_kind
from depgraph.graph.model import StudyGraph
from depgraph.io.columnar import read_listing
from depgraph.io.schemas import check_document
from depgraph.spark.frames import PLAIN_ASCII, in_file_order, numbered_with_count, refuse_unicode_twins
from depgraph.spark.session import checkpointed, fit_partitions, local_session, unreadable_file
from depgraph.vocab import NODE_TYPES, RELATION, NodeType


@dataclass(frozen=True, eq=False)
class SparkGraph:
    """A study declaration as Spark tables (see the module docstring). ``counts`` holds each node type's number of
    nodes (every type, zero where the graph has none)."""

    __depgraph_engine__ = "spark"  # depgraph.derive(graph, …) runs on Spark for this graph (depgraph.engines)

    nodes: dict[NodeType, DataFrame]
    counts: dict[NodeType, int]
    edges: dict[str, DataFrame]
    name: str | None = None
    overrides: dict[str, bool] = field(default_factory=dict)
    history: tuple[dict[str, Any], ...] = ()

    @property
    def spark(self) -> SparkSession:
        return self.nodes[NodeType.SAMPLE].sparkSession

    def count(self, node_type: NodeType) -> int:
        return self.counts.get(node_type, 0)

    def start(self, node_type: NodeType) -> int:
        """The first vertex of ``node_type`` (the types before it, counted in vocabulary order)."""
        return sum(self.count(t) for t in NODE_TYPES[: NODE_TYPES.index(node_type)])

    def has_relation(self, relation: str) -> bool:
        return relation in self.edges

    def vertex_edges(self, relation: str) -> DataFrame:
        """The relation's edges as vertices (``src``, ``dst``)."""
        rule = RELATION[relation]
        return self.edges[relation].select(
            (F.col("source") + self.start(rule.source)).alias("src"),
            (F.col("target") + self.start(rule.target)).alias("dst"),
        )

    def induced(self, rows: DataFrame) -> SparkGraph:
        """The graph of the samples at ``rows`` (a ``row`` table of this graph's sample rows, distinct), as
        ``samples=`` derives on one machine: those samples, numbered again in key order, every edge whose sample
        ends are all among them, and every other node."""
        renumbered, n = numbered_with_count(rows.select(F.col("row").alias("_old")), ["_old"])
        table = self.nodes[NodeType.SAMPLE]
        samples = table.withColumnRenamed("row", "_old").join(renumbered, "_old").select(*table.columns)
        edges = {}
        for relation, table in self.edges.items():
            rule = RELATION[relation]
            for end in ("source", "target"):
                if getattr(rule, end) == NodeType.SAMPLE:
                    moved = renumbered.select(F.col("_old").alias(end), F.col("row").alias("_new"))
                    table = table.join(moved, end).drop(end).withColumnRenamed("_new", end)
            edges[relation] = table.select(*self.edges[relation].columns)
        counts = {**self.counts, NodeType.SAMPLE: n}
        return replace(self, nodes={**self.nodes, NodeType.SAMPLE: samples}, counts=counts, edges=edges)

    def holds_samples(self, ids: list[str]) -> bool:
        """Whether any of ``ids`` is a sample's key."""
        return self.nodes[NodeType.SAMPLE].where(F.col("key").isin(list(ids))).limit(1).count() > 0

    def sample_ids(self) -> DataFrame:
        """``row``, ``sample_id`` of every sample."""
        return self.nodes[NodeType.SAMPLE].select("row", F.col("key").alias("sample_id"))

    def target_keys(self, relation: str) -> DataFrame:
        """``row`` (the sample), ``key`` (its target) of a relation from samples."""
        rule = RELATION[relation]
        targets = self.nodes[rule.target].select(F.col("row").alias("target"), "key")
        return (
            self.edges[relation].select(F.col("source").alias("row"), "target").join(targets, "target").drop("target")
        )


def read_graph(path: str | os.PathLike[str], spark: SparkSession) -> SparkGraph:
    """The columnar graph file at ``path`` (``graph.dggraph``) as a SparkGraph, every element checked in Spark
    (``schema``, ``reference`` and ``duplicate_id`` errors as the single-machine reader raises them). A JSON graph
    file is ``invalid_argument``: write it in the columnar form (``depgraph export --to parquet``) for Spark."""
    directory = Path(path)
    source = f"graph file {str(path)!r}"
    if not directory.is_dir():
        raise DepgraphError(
            "invalid_argument",
            f"{source}: the Spark engine reads the columnar form (a .dggraph directory); convert a JSON graph with "
            "depgraph export GRAPH --to parquet -o graph.dggraph",
        )
    manifest, listed = read_listing(directory, source)
    node_tables, edge_tables = tables_by_kind(listed, source)
    document = check_document(
        manifest_document(manifest, {t: shape["columns"] for t, shape in node_tables.items()}, edge_tables),
        "study-graph",
        source,
    )
    if NodeType.SAMPLE not in node_tables:
        raise DepgraphError("schema", f"{source} has no Sample nodes")
    counts = {t: node_tables[t]["rows"] if t in node_tables else 0 for t in NODE_TYPES}  # held to the files below
    checks = []
    for node_type, shape in node_tables.items():
        where = f"{source}: nodes.{node_type.value}"
        table = _table(spark, directory, f"nodes/{node_type.value}.parquet", shape, where)
        checks.append(_node_check(table, where, shape["rows"]))
    for relation, shape in edge_tables.items():
        where = f"{source}: edges.{relation}"
        table = _table(spark, directory, f"edges/{relation}.parquet", shape, where)
        checks.append(_edge_check(table, relation, counts, where, shape["rows"]))
    refuse_first_broken(checks)  # every table's rows in one Spark job, each table's first problem in file order
    tables = dict(zip([*node_tables, *edge_tables], (check.table for check in checks), strict=True))
    nodes = {t: tables[t].withColumnRenamed("_row", "row") for t in node_tables}
    edges = {r: tables[r].drop("_row", "provenance") for r in edge_tables if edge_tables[r]["rows"]}  # a relation
    # without edges is one the graph does not hold, as in memory
    return SparkGraph(
        nodes,
        counts,
        edges,
        name=document.get("name"),
        overrides=dict(document.get("overrides") or {}),
        history=tuple(dict(h) for h in document.get("history") or []),
    )


def read_graph_request(path: str | os.PathLike[str], spark: SparkSession | None = None, sized: bool = False
                       ) -> SparkGraph:  # fmt: skip
    """:func:`depgraph.read_graph` on Spark (``engine="spark"``): :func:`read_graph` with ``spark`` (the active
    session, else a local one), the session's shuffle partitions fitted to the graph's samples with ``sized``."""
    graph = read_graph(path, spark or local_session())
    if sized:
        fit_partitions(graph.spark, graph.count(NodeType.SAMPLE))
    return graph


def graph_request(
    graph: StudyGraph, spark: SparkSession, sized: bool = False, scratch: str | os.PathLike[str] | None = None
) -> SparkGraph:
    """A study graph built and validated on this machine (``depgraph run`` of a study file saying ``engine =
    "spark"``), handed to Spark: its columnar form written as Parquet into a temporary folder of ``scratch`` (a
    folder the executors can read: the spec's, on a cluster; the system's temporary folder by default), each table
    read by Spark in file order and checkpointed, the folder then removed. Nothing is checked again: a StudyGraph is
    checked as it is made. With ``sized``, the session's shuffle partitions are fitted to the graph's samples.

    Not ``createDataFrame`` from Arrow: that holds every table as rows in the driver's JVM and ships them with the
    tasks; at 10^6 samples the driver's heap filled and the job stalled.

    A graph assembled by hand with structural damage (a repeated id, an edge outside the node table, of the wrong
    types or declared twice) is refused, ``schema``: no SparkGraph holds one, as the Spark reader refuses them."""
    from depgraph.validation.facts import StudyGraphFacts  # (numpy over the graph's arrays: no Spark work)

    damage = StudyGraphFacts(graph).structure()
    if damage:
        raise DepgraphError("schema", f"the graph is damaged ({describe_ids([i.code for i in damage])}): "
                            f"{damage[0].message}; depgraph.validate names every problem")  # fmt: skip
    manifest, tables = graph_tables(graph)
    node_tables, edge_tables = tables_by_kind(tables, "graph")
    with tempfile.TemporaryDirectory(prefix=".depgraph-graph-", dir=scratch) as folder:
        nodes, counts = {}, {t: 0 for t in NODE_TYPES}
        for node_type, table in node_tables.items():
            counts[node_type] = table.num_rows
            nodes[node_type] = _staged(spark, table, Path(folder) / f"{node_type.value}.parquet").withColumnRenamed(
                "_row", "row"
            )
        edges = {
            relation: _staged(spark, table.drop_columns(["provenance"]), Path(folder) / f"{relation}.parquet")
            .select(F.col("source").cast("long"), F.col("target").cast("long"),
                    *(["weight"] if "weight" in table.column_names else []))
            for relation, table in edge_tables.items()
            if table.num_rows  # a relation without edges is one the graph does not hold
        }  # fmt: skip
    if sized:
        fit_partitions(spark, counts[NodeType.SAMPLE])
    return SparkGraph(nodes, counts, edges, name=manifest["name"], overrides=dict(manifest["overrides"]),
                      history=tuple(dict(h) for h in manifest["history"]))  # fmt: skip


def _staged(spark: SparkSession, table: pa.Table, path: Path) -> DataFrame:
    """``table`` written to ``path`` and read back by Spark, its rows numbered in file order (``_row``), computed
    now (checkpointed) so the file may go."""
    pq.write_table(table, path)
    return checkpointed(in_file_order(spark.read.parquet(str(path)), "_row"))


def _table(spark: SparkSession, directory: Path, name: str, shape: dict[str, Any], where: str) -> DataFrame:
    """A listed table, read by Spark with its rows numbered in file order, its columns and rows held to the
    listing."""
    path = directory / name
    if not path.exists():
        raise DepgraphError("schema", f"{where}: the file lacks {name}, which its manifest lists", path=str(path))
    try:
        table = spark.read.parquet(str(path))
    except Exception as exc:  # a file Spark cannot read as Parquet; any other failure is Spark's own
        reason = unreadable_file(exc)
        if reason is None:
            raise
        raise DepgraphError("parse", f"{where}: {name} is not a readable Parquet table ({reason})") from None
    if table.columns != shape["columns"]:
        raise DepgraphError(
            "schema", f"{where} holds the columns {table.columns}; the manifest lists {shape['columns']}"
        )
    return in_file_order(table, "_row")


@dataclass(frozen=True, eq=False)
class TableCheck:
    """The rules a table read from a file is held to: ``problems`` (``condition``, ``code``, ``rule``) over the
    rows of ``checked`` (``table`` with what the conditions compare, ``_row`` each row's place in the file), the
    manifest's ``rows``, and whether its ``key`` ids may be written two ways in Unicode (``keyed``)."""

    table: DataFrame
    checked: DataFrame
    problems: list[tuple[Column, str, str]]
    where: str
    rows: int
    keyed: bool = False

    def broken(self) -> Column:
        """The first rule a row breaks (its index in ``problems``), null for a row that keeps them all."""
        return F.coalesce(*[F.when(condition, F.lit(i)) for i, (condition, _, _) in enumerate(self.problems)])

    def survey(self, index: int) -> DataFrame:
        """One row: ``index``, the rows counted, the first broken row (null if none) and whether some key is not
        plain ASCII."""
        broken = self.broken()
        wide = F.max((~F.col("key").rlike(PLAIN_ASCII)).cast("int")) if self.keyed else F.lit(0)
        return self.checked.agg(
            F.lit(index).alias("index"),
            F.count(F.lit(1)).alias("n"),
            F.min(F.when(broken.isNotNull(), F.col("_row"))).alias("at"),
            F.coalesce(wide, F.lit(0)).alias("wide"),
        )

    def refuse(self, n: int, at: int | None, wide: bool) -> None:
        """Raise for the first row (in file order) that breaks a rule, for a count the manifest does not say, or
        for keys written two ways in Unicode."""
        if at is not None:
            shown_columns = [c for c in self.table.columns if c != "_row"]
            row = self.checked.where(F.col("_row") == at).select(self.broken().alias("_broken"),
                                                                  *shown_columns).collect()[0]  # fmt: skip
            _, code, rule = self.problems[row["_broken"]]
            shown = {k: v for k, v in row.asDict().items() if not k.startswith("_")}
            raise DepgraphError(code, f"{self.where}[{at}] is {shown}; {rule}", index=at)
        if n != self.rows:
            raise DepgraphError("schema", f"{self.where} holds {n} rows; its manifest says {self.rows}")
        if wide:  # two spellings of one subject: never two nodes
            refuse_unicode_twins(self.table, {"key": "key"}, self.where, probed=True)


def refuse_first_broken(checks: list[TableCheck]) -> None:
    """Hold every table to its rules in one Spark job (one aggregate row per table), then raise for the first
    table, in ``checks`` order, that breaks one: what checking them one at a time would raise, without a job per
    table and rule."""
    if not checks:
        return
    surveys = [check.survey(i) for i, check in enumerate(checks)]
    found = {r["index"]: r for r in reduce(DataFrame.unionByName, surveys).collect()}
    for i, check in enumerate(checks):
        check.refuse(int(found[i]["n"]), found[i]["at"], bool(found[i]["wide"]))


#: Spark's integer types.
INTEGER_KINDS = frozenset({"tinyint", "smallint", "int", "bigint"})
#: Spark's types of the attribute columns a graph file may hold (Parquet's text, integers, 64-bit floats, booleans).
ATTRIBUTE_KINDS = INTEGER_KINDS | {"string", "double", "boolean", "void"}


def _node_check(table: DataFrame, where: str, rows: int) -> TableCheck:
    """A node table's rules: keys non-empty text, each greater than the one before (byte order, no repeats), none
    written two ways in Unicode; its column types are checked now."""
    kinds = dict(table.dtypes)
    if kinds["key"] != "string":
        raise DepgraphError("schema", f"{where}.key holds {kinds['key']} values; values are text")
    attributes = [c for c in table.columns if c not in ("_row", "key")]
    for name in attributes:  # the single-machine reader's rule for attribute columns (JSON scalars)
        if kinds[name] not in ATTRIBUTE_KINDS:
            raise DepgraphError(
                "schema", f"{where}.{name} holds {kinds[name]} values; values are text, integers, 64-bit floats or "
                "booleans",
            )  # fmt: skip
    finite = [
        (F.isnan(name) | (F.abs(name) == float("inf")), "schema", f"{name} values are finite numbers or null")
        for name in attributes
        if kinds[name] == "double"
    ]
    before = table.select((F.col("_row") + 1).alias("_row"), F.col("key").alias("_before"))
    paired = table.join(before, "_row", "left")
    problems = [
        (F.col("key").isNull() | (F.length("key") == 0), "schema", "keys are non-empty text"),
        (F.col("key") == F.col("_before"), "duplicate_id", "a key is listed once"),
        (F.col("key") < F.col("_before"), "schema", "keys are in byte order"),
        *finite,
    ]
    return TableCheck(table, paired, problems, where, rows, keyed=True)


def _edge_check(table: DataFrame, relation: str, counts: dict[NodeType, int], where: str, rows: int) -> TableCheck:
    """An edge table's rules: endpoints rows of their node tables (``counts``), edges by source then target, each
    once (an undirected relation's from its lower row), weights finite; its columns are checked now."""
    rule = RELATION[relation]
    expected = [c for c in EDGE_COLUMNS if c != "weight" or "weight" in table.columns]
    if [c for c in table.columns if c != "_row"] != expected:
        raise DepgraphError("schema", f"{where} holds the columns {table.columns[:-1]}; expected {expected}")
    kinds = dict(table.dtypes)
    for column in ("source", "target"):
        if kinds[column] not in ("int", "bigint", "smallint", "tinyint"):
            raise DepgraphError("schema", f"{where}.{column} holds {kinds[column]} values; values are whole numbers")
    table = table.select("_row", F.col("source").cast("long"), F.col("target").cast("long"), *expected[2:])
    before = table.select((F.col("_row") + 1).alias("_row"), F.col("source").alias("_s"), F.col("target").alias("_t"))
    paired = table.join(before, "_row", "left")
    n_source, n_target = counts.get(rule.source, 0), counts.get(rule.target, 0)
    problems = [
        (F.col("source").isNull() | (F.col("source") < 0) | (F.col("source") >= n_source), "reference",
         f"a source is a row of nodes.{rule.source.value} ({n_source} rows)"),
        (F.col("target").isNull() | (F.col("target") < 0) | (F.col("target") >= n_target), "reference",
         f"a target is a row of nodes.{rule.target.value} ({n_target} rows)"),
        ((F.col("source") == F.col("_s")) & (F.col("target") == F.col("_t")), "duplicate_id",
         "each edge is listed once"),
        ((F.col("source") < F.col("_s")) | ((F.col("source") == F.col("_s")) & (F.col("target") < F.col("_t"))),
         "schema", "rows are ordered by source, then target"),
        (F.col("provenance").isNull(), "schema", "provenance is text"),
    ]  # fmt: skip
    if not rule.directed:
        problems.append((F.col("source") >= F.col("target"), "schema", "an undirected edge runs from its lower row"))
    if "weight" in expected:
        weight = F.col("weight")
        problems.append((F.isnan(weight) | (F.abs(weight) == float("inf")), "schema", "weights are finite or null"))
    return TableCheck(table, paired, problems, where, rows)
