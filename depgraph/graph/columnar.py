"""The study graph's columnar form: the same declaration as the JSON file, its node keys, attributes and edges
in Parquet (:mod:`depgraph.io.columnar`)::

    graph.dggraph/
      manifest.json                       format, format_version, name, overrides, history, and tables
      nodes/Sample.parquet                one table per node type: key (text), then its attribute columns
      nodes/Subject.parquet
      edges/sample_belongs_to_subject.parquet
                                          one table per relation: source, target, [weight], provenance

A node table lists its type's keys in byte order, each once, with that type's attributes beside them (the JSON
file's ``nodes`` and ``attributes``). An edge table names its endpoints by their **row** in the node table of the
relation's source and target types (0-based), where the JSON file names them by key: ``source`` and ``target``
are 64-bit integers, ``weight`` (kinship, distance, similarity; only where the relation carries one) 64-bit floats
or null, ``provenance`` the builder that declared the edge (``metadata``, ``kinship:pairs``…). Rows are in the
graph's own order: by source, then target, each edge once, an undirected relation's edges with source < target.

Reading checks every element, as the JSON reader does: keys non-empty text, in byte order without repeats
(``duplicate_id`` for a repeat); attribute values of one kind per column; every endpoint a row of its node table
(``reference``); edges in order, none listed twice (``duplicate_id``); weights finite. Nothing is hashed or sorted:
the positions are the graph's, so a graph of a million samples reads in a fraction of its JSON file's time.

>>> import pandas as pd, tempfile, pathlib
>>> from depgraph import from_metadata
>>> g = from_metadata(pd.DataFrame({"sample_id": ["S2", "S1"], "subject_id": ["P1", "P1"]}))
>>> path = pathlib.Path(tempfile.mkdtemp()) / "graph.dggraph"
>>> write_columnar_graph(g, path)
>>> sorted(p.relative_to(path).as_posix() for p in path.rglob("*.parquet"))
['edges/sample_belongs_to_subject.parquet', 'nodes/Sample.parquet', 'nodes/Subject.parquet']
>>> graph_from_columnar(path).equals(g)
True
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from typing import Any, TypeVar

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc

from depgraph.common.arguments import instance
from depgraph.common.identifiers import apply_id_rules
from depgraph.errors import DepgraphError, describe_ids
from depgraph.formats import GRAPH_FORMAT, GRAPH_FORMAT_VERSION
from depgraph.graph.assembly import assemble_sorted
from depgraph.graph.model import StudyGraph, check_numeric_attributes
from depgraph.graph.pieces import RelationEdges
from depgraph.io.columnar import (
    arrow_column,
    integer_column,
    number_column,
    positions_type,
    read_columnar,
    scalar_column,
    text_column,
    write_columnar,
)
from depgraph.io.schemas import check_document
from depgraph.vocab import NODE_TYPES, RELATION, RELATION_NAMES, NodeType

T = TypeVar("T")

#: Where each table lives in the directory.
NODES, EDGES = "nodes", "edges"
#: The columns of an edge table, in order (weight only where the relation carries one).
EDGE_COLUMNS = ("source", "target", "weight", "provenance")


# --------------------------------------------------------------------------- writing
def write_columnar_graph(graph: StudyGraph, path: str | os.PathLike[str]) -> None:
    """Write ``graph`` in the columnar form at ``path`` (a directory, written whole)."""
    instance(graph, StudyGraph, "write_graph: the graph")
    manifest, tables = graph_tables(graph)
    write_columnar(path, manifest, tables)


def graph_tables(graph: StudyGraph) -> tuple[dict[str, Any], dict[str, pa.Table]]:
    """The manifest (without ``tables``) and the Parquet tables of ``graph``'s columnar form."""
    manifest = graph_envelope(graph)
    keys = graph.key_array
    tables: dict[str, pa.Table] = {}
    for t in NODE_TYPES:
        start, stop = graph.type_range(t)
        if stop == start:
            continue
        columns = {"key": keys.slice(start, stop - start)}
        block = graph.attributes.iloc[start:stop]
        for name in block.columns:
            if block[name].notna().any():
                columns[name] = _attribute(block[name], t, name)
        tables[f"{NODES}/{t.value}.parquet"] = pa.table(columns)
    for rel, edges in graph.relations.items():
        rule = RELATION[rel]
        source_start, target_start = graph.type_range(rule.source)[0], graph.type_range(rule.target)[0]
        rows = positions_type(graph.n_nodes)
        columns = {
            "source": pa.array(edges.src - source_start).cast(rows),
            "target": pa.array(edges.dst - target_start).cast(rows),
        }
        if edges.weighted:
            columns["weight"] = pa.array(edges.weight, type=pa.float64(), from_pandas=True)  # NaN is null
        columns["provenance"] = edges.provenance()
        tables[f"{EDGES}/{rel}.parquet"] = pa.table(columns)
    return manifest, tables


def graph_envelope(graph: StudyGraph) -> dict[str, Any]:
    """What a graph file holds besides its nodes and edges, in either form: format, version, name, overrides,
    history."""
    return {
        "format": GRAPH_FORMAT,
        "format_version": GRAPH_FORMAT_VERSION,
        "name": graph.name,
        "overrides": dict(graph.overrides),
        "history": [dict(h) for h in graph.history],
    }


def _attribute(series: pd.Series, node_type: NodeType, name: str) -> pa.Array:
    arrow = arrow_column(series.reset_index(drop=True))
    if arrow is None:
        raise DepgraphError(
            "invalid_argument",
            f"attribute {name!r} of {node_type.value} nodes mixes kinds of value; a Parquet column holds one: make "
            "it one kind, or write the graph as JSON",
            column=name,
        )
    return arrow


# --------------------------------------------------------------------------- reading
def graph_from_columnar(path: str | os.PathLike[str], source: str | None = None) -> StudyGraph:
    """A graph from its columnar file, every element checked (see the module docstring)."""
    source = source or f"graph file {str(path)!r}"
    found = read_columnar(path, source, dictionaries={"provenance"})
    node_tables, edge_tables = tables_by_kind(found.tables, source)
    columns = {t: table.column_names for t, table in node_tables.items()}
    check_document(manifest_document(found.manifest, columns, edge_tables), "study-graph", source)
    keys, attributes = {}, {}
    for node_type, table in node_tables.items():
        keys[node_type], frame = _node_table(node_type, table, source)
        check_numeric_attributes(NodeType(node_type), frame, keys[node_type], source)
        if frame is not None:
            attributes[node_type] = frame
    starts, start = {}, 0
    for t in NODE_TYPES:
        starts[t] = start
        start += len(keys.get(t, []))
    relations = {
        rel: _edge_block(rel, table, {t: len(k) for t, k in keys.items()}, starts, source)
        for rel, table in edge_tables.items()
    }
    manifest = found.manifest
    try:
        return assemble_sorted(
            keys, attributes, relations, name=manifest.get("name"), overrides=manifest.get("overrides") or {},
            history=manifest.get("history") or [],
        )  # fmt: skip
    except DepgraphError as exc:
        raise DepgraphError("schema", f"{source}: {exc.message}") from None


def tables_by_kind(tables: dict[str, T], source: str) -> tuple[dict[NodeType, T], dict[str, T]]:
    """The node tables by type and the edge tables by relation, in vocabulary order; any other table is refused."""
    types = {t.value: t for t in NODE_TYPES}
    nodes, edges = {}, {}
    for name, table in tables.items():
        folder, _, file = name.partition("/")
        stem = file.removesuffix(".parquet")
        if folder == NODES and stem in types and "/" not in stem:
            nodes[types[stem]] = table
        elif folder == EDGES and stem in RELATION and "/" not in stem:
            edges[stem] = table
        else:
            raise DepgraphError(
                "schema",
                f"{source}: {name!r} is not a graph's table (nodes/<node type>.parquet or edges/<relation>.parquet)",
            )
    ordered_nodes = {t: nodes[t] for t in NODE_TYPES if t in nodes}
    return ordered_nodes, {rel: edges[rel] for rel in RELATION_NAMES if rel in edges}


def manifest_document(
    manifest: dict[str, Any], node_columns: dict[NodeType, list[str]], relations: Iterable[str]
) -> dict[str, Any]:
    """The JSON document the manifest stands for, its long arrays empty (what jsonschema checks), given each node
    table's columns (``key`` first) and the relations with an edge table."""
    return {
        **manifest,
        "nodes": {t.value: [] for t in node_columns},
        "attributes": {
            t.value: {c: [] for c in columns[1:]} for t, columns in node_columns.items() if len(columns) > 1
        },
        "edges": {rel: {"source": [], "target": [], "provenance": "x"} for rel in relations},
    }


def _node_table(node_type: NodeType, table: pa.Table, source: str) -> tuple[pa.Array, pd.DataFrame | None]:
    """A type's keys (non-empty text in byte order, each once) and its attribute columns."""
    where = f"{source}: nodes.{node_type.value}"
    if not table.column_names or table.column_names[0] != "key":
        raise DepgraphError("schema", f"{where} must begin with its key column ('key'), not {table.column_names[:1]}")
    keys = text_column(table.column("key"), f"{where}.key", non_empty=True)
    if len(keys) > 1:
        rising = pc.less(keys.slice(0, len(keys) - 1), keys.slice(1)).to_numpy(zero_copy_only=False)
        if not rising.all():
            i = int(np.flatnonzero(~rising)[0]) + 1
            if keys[i].as_py() == keys[i - 1].as_py():
                raise DepgraphError(
                    "duplicate_id", f"{where} repeats {describe_ids([keys[i].as_py()])}", ids=[keys[i].as_py()]
                )
            raise DepgraphError(
                "schema", f"{where}.key[{i}] is {keys[i].as_py()!r}, before {keys[i - 1].as_py()!r}: keys are in byte "
                "order",
            )  # fmt: skip
    apply_id_rules(keys, f"nodes.{node_type.value}", source)  # the id rules of every table reader
    names = table.column_names[1:]
    if not names:
        return keys, None
    columns = {name: scalar_column(table.column(name), f"{where}.{name}") for name in names}
    return keys, pd.DataFrame({name: column.to_pandas() for name, column in columns.items()})


def _edge_block(
    relation: str, table: pa.Table, counts: dict[NodeType, int], starts: dict[NodeType, int], source: str
) -> RelationEdges:
    """One relation's edges as node positions, every row checked."""
    rule = RELATION[relation]
    where = f"{source}: edges.{relation}"
    expected = [c for c in EDGE_COLUMNS if c != "weight" or "weight" in table.column_names]
    if table.column_names != expected:
        raise DepgraphError("schema", f"{where} holds the columns {table.column_names}; expected {expected}")
    ends = []
    for column, node_type in (("source", rule.source), ("target", rule.target)):
        n = counts.get(node_type, 0)
        if n == 0 and table.num_rows:
            raise DepgraphError("reference", f"{where}.{column} names {node_type.value} nodes, and the graph has none")
        rows = integer_column(table.column(column), f"{where}.{column}").to_numpy(zero_copy_only=False)
        if len(rows) and (rows.min() < 0 or rows.max() >= n):  # a dangling reference, as an unknown key is in JSON
            i = int(np.flatnonzero((rows < 0) | (rows >= n))[0])
            raise DepgraphError(
                "reference",
                f"{where}.{column}[{i}] is {int(rows[i])}, which is not a row of nodes.{node_type.value} ({n} rows)",
                relation=relation,
            )
        ends.append(np.add(rows, starts[node_type], dtype=np.int64))
    src, dst = ends
    _check_order(src, dst, rule.directed, where)
    weight = None
    if "weight" in table.column_names:
        weight = number_column(table.column("weight"), f"{where}.weight").to_numpy(zero_copy_only=False)
    labels = text_column(table.column("provenance"), f"{where}.provenance")
    encoded = labels if pa.types.is_dictionary(labels.type) else labels.dictionary_encode()
    codes = encoded.indices.to_numpy(zero_copy_only=False).astype(np.int64)
    names = encoded.dictionary.to_pylist()
    order = np.argsort(names)  # labels sorted, as assembly keeps them
    rank = np.empty(len(names), dtype=np.int64)
    rank[order] = np.arange(len(names))
    kept = tuple(names[i] for i in order)
    return RelationEdges(relation, src, dst, weight, kept, None if len(kept) == 1 else rank[codes], canonical=True)


def _check_order(src: np.ndarray, dst: np.ndarray, directed: bool, where: str) -> None:
    """Edges by source, then target, each once; an undirected one with source < target."""
    if not directed and len(src):
        backwards = src >= dst
        if backwards.any():
            i = int(np.flatnonzero(backwards)[0])
            raise DepgraphError(
                "schema", f"{where}: row {i} runs from node {src[i]} to {dst[i]}; an undirected relation lists each "
                "edge once, from its lower row to its higher",
            )  # fmt: skip
    if len(src) > 1:
        same_source = src[1:] == src[:-1]  # compared, not subtracted: one byte a row, not eight
        wrong = (src[1:] < src[:-1]) | (same_source & (dst[1:] <= dst[:-1]))
        if wrong.any():
            i = int(np.flatnonzero(wrong)[0]) + 1
            code = "duplicate_id" if same_source[i - 1] and dst[i] == dst[i - 1] else "schema"
            raise DepgraphError(
                code, f"{where}: row {i} " + ("lists an edge again" if code == "duplicate_id" else "is out of order")
                + "; rows are ordered by source, then target, each edge once",
            )  # fmt: skip
