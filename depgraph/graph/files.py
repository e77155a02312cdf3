"""Graph files: a :class:`~depgraph.graph.model.StudyGraph` as a JSON document and back.

The document is columnar (format ``depgraph.study-graph``, see docs/formats.md): node keys grouped by type,
attribute columns per type, edges grouped by relation and named by their endpoint keys, with the graph's name,
overrides and history. Format name and version come from :mod:`depgraph.formats`; the envelope is checked
against the published JSON Schema (:func:`depgraph.io.schemas.check_document`), every element of the long arrays
by vectorised checks that name the first offender, and the graph is then assembled
(:func:`depgraph.graph.assembly.assemble`) as any builder's is. Writing is atomic and byte-stable: the same
graph always gives the same bytes.

>>> import pandas as pd
>>> from depgraph import from_metadata
>>> g = from_metadata(pd.DataFrame({"sample_id": ["S1", "S2"], "subject_id": ["P1", "P1"]}))
>>> graph_document(g)["nodes"]
{'Sample': ['S1', 'S2'], 'Subject': ['P1']}
>>> graph_from_document(graph_document(g)).equals(g)
True
"""

from __future__ import annotations

import math
import os
from collections.abc import Iterator, Mapping
from typing import Any

import numpy as np
import orjson
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc

from depgraph.common.arguments import instance
from depgraph.common.arrays import distinct
from depgraph.common.identifiers import apply_id_rules
from depgraph.engines import checked_engine, stage
from depgraph.errors import DepgraphError, describe_ids
from depgraph.graph.assembly import assemble
from depgraph.graph.columnar import graph_envelope, graph_from_columnar, write_columnar_graph
from depgraph.graph.model import StudyGraph, check_numeric_attributes, is_missing
from depgraph.graph.pieces import EdgePiece, Keys, NodePiece
from depgraph.io.columnar import Peeked, arrow_column, is_columnar, output_form
from depgraph.io.files import atomic_write_bytes, read_json, read_parsed
from depgraph.io.jsoncolumns import is_json_array, json_array, numbers, scalars, strings
from depgraph.io.schemas import check_document
from depgraph.vocab import NODE_TYPES, RELATION, NodeType


def write_graph(graph: StudyGraph, path: str | os.PathLike[str], format: str | None = None) -> None:
    """Write ``graph`` to ``path`` atomically: as one JSON file, or in the columnar form (a directory of Parquet
    tables and a manifest, :mod:`depgraph.graph.columnar`) when ``format="parquet"`` or the path is named
    ``.dggraph``."""
    instance(graph, StudyGraph, "write_graph: the graph")
    if output_form(path, "study-graph", format) == "parquet":
        write_columnar_graph(graph, path)
    else:
        atomic_write_bytes(path, graph_json_pieces(graph))


def read_graph(path: str | os.PathLike[str], *, engine: str = "single", **engine_options: Any) -> StudyGraph:
    """Read a graph written by :func:`write_graph`, in either form (a JSON file, or a columnar directory). With
    ``engine="spark"``, a columnar graph read by Spark, every element checked there, as a
    :class:`~depgraph.spark.graph.SparkGraph` (``spark=``: the session, by default the active one)."""
    engine = checked_engine(engine)
    if engine != "single":
        return stage(engine, "read_graph").read_graph_request(path, **engine_options)
    if is_columnar(path):
        return graph_from_columnar(path, f"graph file {str(path)!r}")
    return graph_from_json(path, read_json(path, "graph file", text_arrays=True))


def peeked_graph(path: str | os.PathLike[str], found: Peeked) -> StudyGraph:
    """The study graph at ``path``, which :func:`~depgraph.io.columnar.peek_document` has ``found``: a JSON file's
    document is parsed once (the peek's), a columnar one is read from its directory."""
    return read_graph(path) if found.columnar else graph_from_json(path, found.document)


def graph_from_json(path: str | os.PathLike[str], doc: Any) -> StudyGraph:
    """The graph of the JSON file at ``path``, whose parsed document is ``doc``. A document whose long text
    arrays Arrow parsed (:func:`~depgraph.io.files.read_json` with ``text_arrays``) is checked as the usual parse
    is, and refused by the same error, without a second parse (:func:`~depgraph.io.files.read_parsed`)."""
    return read_parsed(path, "graph file", doc, lambda parsed: graph_from_document(parsed, f"graph file {str(path)!r}"))


def graph_document(graph: StudyGraph) -> dict[str, Any]:
    """The graph as a JSON-ready dict (columnar: keys grouped by type,
    edges grouped by relation and named by endpoint keys)."""
    keys = graph.key_values
    nodes: dict[str, Any] = {}
    attributes: dict[str, Any] = {}
    for t in NODE_TYPES:
        start, stop = graph.type_range(t)
        if stop == start:
            continue
        nodes[t.value] = keys[start:stop].tolist()
        block = graph.attributes.iloc[start:stop]
        cols = {c: _json_column(block[c]) for c in block.columns if block[c].notna().any()}
        if cols:
            attributes[t.value] = cols
    edges: dict[str, Any] = {}
    for rel, block in graph.relations.items():
        entry: dict[str, Any] = {"source": keys[block.src].tolist(), "target": keys[block.dst].tolist()}
        if block.weighted:
            entry["weight"] = _json_column(pd.Series(block.weight))
        codes = block.codes()
        used = distinct(codes)
        entry["provenance"] = (
            block.labels[used[0]] if len(used) == 1 else np.asarray(block.labels, dtype=object)[codes].tolist()
        )
        edges[rel] = entry
    return {
        **graph_envelope(graph),
        "nodes": nodes,
        "attributes": attributes,
        "edges": edges,
    }


def graph_bytes(graph: StudyGraph) -> bytes:
    """The bytes :func:`write_graph` writes as JSON: :func:`graph_document`, its envelope indented and each long
    list on one line (a graph of a million samples is not a file of spaces and line breaks)."""
    return b"".join(graph_json_pieces(graph))


def graph_json_pieces(graph: StudyGraph) -> Iterator[bytes]:
    """:func:`graph_bytes` in pieces, each long list encoded from its Arrow or numpy column (no Python object
    per id) and written piece by piece."""
    envelope = graph_envelope(graph)
    yield b"{"
    for i, (key, value) in enumerate(envelope.items()):
        text = orjson.dumps(value, option=orjson.OPT_INDENT_2).replace(b"\n", b"\n  ")
        yield (b",\n  " if i else b"\n  ") + orjson.dumps(key) + b": " + text
    keys = graph.key_array
    present = [t for t in NODE_TYPES if graph.count(t)]
    yield b',\n  "nodes": {'
    for i, t in enumerate(present):
        start, stop = graph.type_range(t)
        yield (
            (b",\n    " if i else b"\n    ")
            + orjson.dumps(t.value)
            + b": "
            + json_array(keys.slice(start, stop - start))
        )
    yield b"\n  }" if present else b"}"
    yield b',\n  "attributes": {'
    described = [(t, _attribute_columns(graph, t)) for t in present]
    described = [(t, columns) for t, columns in described if columns]
    for i, (t, columns) in enumerate(described):
        yield (b",\n    " if i else b"\n    ") + orjson.dumps(t.value) + b": {"
        for j, (name, values) in enumerate(columns.items()):
            yield (b",\n      " if j else b"\n      ") + orjson.dumps(name) + b": " + values
        yield b"\n    }"
    yield b"\n  }" if described else b"}"
    yield b',\n  "edges": {'
    for i, (rel, block) in enumerate(graph.relations.items()):
        yield (b",\n    " if i else b"\n    ") + orjson.dumps(rel) + b": {"
        yield b'\n      "source": ' + json_array(keys.take(pa.array(block.src)))
        yield b',\n      "target": ' + json_array(keys.take(pa.array(block.dst)))
        if block.weighted:
            yield b',\n      "weight": ' + json_array(block.weight)
        used = distinct(block.codes())
        provenance = orjson.dumps(block.labels[used[0]]) if len(used) == 1 else json_array(block.provenance())
        yield b',\n      "provenance": ' + provenance + b"\n    }"
    yield (b"\n  }" if graph.relations else b"}") + b"\n}\n"


def _attribute_columns(graph: StudyGraph, node_type: NodeType) -> dict[str, bytes]:
    """A type's attribute columns that hold a value, each as a JSON list (as :func:`_json_column` spells it)."""
    start, stop = graph.type_range(node_type)
    block = graph.attributes.iloc[start:stop]
    columns = {}
    for name in block.columns:
        series = block[name].reset_index(drop=True)
        if series.notna().any():
            arrow = arrow_column(series)
            columns[name] = json_array(arrow) if arrow is not None else orjson.dumps(_json_column(series))
    return columns


def graph_from_document(doc: Any, source: str = "graph") -> StudyGraph:
    """A graph from its JSON document (as :func:`graph_document` writes it): the envelope by jsonschema, every
    element of the long arrays (node keys, attribute columns, edge endpoints, weights, provenance) by vectorised
    checks that name the first offender (``nodes.Sample[10] is ''``), then assembly (unknown endpoints are
    ``reference``). Shape errors raise ``schema``; ``source`` names the document in messages."""
    doc = check_document(doc, "study-graph", source)  # format, version policy, envelope schema
    nodes_doc = doc.get("nodes")
    edges_doc = doc.get("edges", {})
    attrs_doc = doc.get("attributes", {})
    if not isinstance(nodes_doc, dict) or not isinstance(edges_doc, dict) or not isinstance(attrs_doc, dict):
        raise _bad(source, "'nodes', 'edges' and 'attributes' must be objects")
    node_pieces = _node_pieces(nodes_doc, attrs_doc, source)
    edge_pieces = [piece for rel, entry in edges_doc.items() for piece in _edge_pieces(rel, entry, source)]
    overrides = doc.get("overrides") or {}
    history = doc.get("history") or []
    if not isinstance(overrides, dict) or not isinstance(history, list):
        raise _bad(source, "'overrides' must be an object and 'history' a list")
    try:
        graph = assemble(node_pieces, edge_pieces, name=doc.get("name"), overrides=overrides, history=history)
    except DepgraphError as exc:
        raise DepgraphError(exc.code, f"{source}: {exc.message}", **exc.details) from exc
    for rel, entry in edges_doc.items():  # assembly keeps one edge per pair: fewer kept means the file repeats one
        block = graph.relations.get(rel)
        if block is not None and len(block.src) < len(entry["source"]):
            _refuse_repeated_edge(graph, rel, entry, source)
    return graph


def _bad(source: str, what: str) -> DepgraphError:
    return DepgraphError("schema", f"{source}: {what}")


def _node_pieces(nodes_doc: Mapping[str, Any], attrs_doc: Mapping[str, Any], source: str) -> list[NodePiece]:
    """One node piece per type of the document's ``nodes`` (keys distinct and non-empty), with its attributes."""
    types = {t.value for t in NODE_TYPES}
    for type_name in attrs_doc:
        if type_name not in nodes_doc:
            raise _bad(source, f"attributes.{type_name} describes nodes that 'nodes' does not declare")
    node_pieces = []
    for type_name, keys in nodes_doc.items():
        if type_name not in types:
            raise _bad(source, f"unknown node type {type_name!r} in 'nodes'")
        text = strings(keys, f"{source}: nodes.{type_name}", non_empty=True)
        apply_id_rules(text, f"nodes.{type_name}", source)  # the id rules of every table reader
        ranked = Keys.ranked(text) if len(text) else Keys.of(text)
        if len(ranked.vocab) < len(text):
            counts = pc.value_counts(text)
            dups = counts.field("values").filter(pc.greater(counts.field("counts"), 1)).to_pylist()
            raise DepgraphError("duplicate_id", f"{source}: nodes.{type_name} repeats {describe_ids(dups)}", ids=dups)
        attr_cols = attrs_doc.get(type_name, {})
        if not isinstance(attr_cols, dict):
            raise _bad(source, f"attributes.{type_name} must be an object")
        columns = {}
        for col, values in attr_cols.items():
            if not is_json_array(values) or len(values) != len(text):
                raise _bad(
                    source, f"attributes.{type_name}.{col} must be a list as long as nodes.{type_name} ({len(text)})"
                )
            columns[col] = scalars(values, f"{source}: attributes.{type_name}.{col}")
        attrs = pd.DataFrame(columns) if columns else None
        check_numeric_attributes(NodeType(type_name), attrs, text.to_pylist() if attrs is not None else [], source)
        node_pieces.append(NodePiece(NodeType(type_name), ranked, attrs))  # ranked: no second hashing, no sort
    return node_pieces


def _edge_pieces(rel: str, entry: Any, source: str) -> list[EdgePiece]:
    """The edge pieces of one relation's entry of the document's ``edges``: one per provenance label."""
    if rel not in RELATION:
        raise _bad(source, f"unknown relation {rel!r} in 'edges'")
    if not isinstance(entry, dict):
        raise _bad(source, f"edges.{rel} must be an object")
    src = strings(entry.get("source"), f"{source}: edges.{rel}.source")
    dst = strings(entry.get("target"), f"{source}: edges.{rel}.target")
    if len(src) != len(dst):
        raise _bad(source, f"edges.{rel}.source and .target must be lists of equal length ({len(src)} and {len(dst)})")
    weight = entry.get("weight")
    w = None
    if weight is not None:
        w, _ = numbers(weight, f"{source}: edges.{rel}.weight")
        if len(w) != len(src):
            raise _bad(source, f"edges.{rel}.weight must be a list as long as its source list ({len(src)})")
    prov = entry.get("provenance", "unknown")
    if isinstance(prov, str):
        return [EdgePiece(rel, Keys.as_listed(src), Keys.as_listed(dst), prov, w)]
    if not isinstance(prov, list) or len(prov) != len(src):
        raise _bad(source, f"edges.{rel}.provenance must be a string or a list as long as its source list ({len(src)})")
    labels = strings(prov, f"{source}: edges.{rel}.provenance").dictionary_encode()
    codes = labels.indices.to_numpy(zero_copy_only=False)
    pieces = []
    for code, label in enumerate(labels.dictionary.to_pylist()):  # one piece per label: labels are few
        mask = pa.array(codes == code)
        pieces.append(
            EdgePiece(
                rel,
                Keys.as_listed(src.filter(mask)),
                Keys.as_listed(dst.filter(mask)),
                label,
                None if w is None else w[codes == code],
            )
        )
    return pieces


def _refuse_repeated_edge(graph: StudyGraph, relation: str, entry: Mapping[str, Any], source: str) -> None:
    """A ``duplicate_id`` error naming the first edge ``entry`` lists twice (either way round, for an undirected
    relation): a graph depgraph writes lists each edge once, so a repeat contradicts the file."""
    rel = RELATION[relation]
    src = graph.locate(rel.source, pa.array(entry["source"], type=pa.string()))
    dst = graph.locate(rel.target, pa.array(entry["target"], type=pa.string()))
    if not rel.directed:
        src, dst = np.minimum(src, dst), np.maximum(src, dst)
    pair = src * graph.n_nodes + dst
    order = np.argsort(pair, kind="stable")
    repeats = np.flatnonzero(pair[order][1:] == pair[order][:-1])
    first, second = sorted(int(i) for i in order[repeats[0] : repeats[0] + 2])
    a, b = entry["source"][second], entry["target"][second]
    link = f"{a} -> {b}" if rel.directed else f"between {a} and {b}"
    raise DepgraphError(
        "duplicate_id",
        f"{source}: edges.{relation} lists the edge {link} twice (at {first} and {second} of its lists); a graph "
        "file lists each edge once",
        relation=relation,
        ids=[a, b],
    )


def _json_column(series: pd.Series) -> list[Any]:
    if pd.api.types.is_float_dtype(series.dtype):
        return [None if math.isnan(v) else v for v in series.to_numpy(np.float64).tolist()]
    if pd.api.types.is_integer_dtype(series.dtype) or pd.api.types.is_bool_dtype(series.dtype):
        return series.astype(object).where(series.notna(), None).tolist()
    return [None if is_missing(v) else (v.item() if isinstance(v, np.generic) else v) for v in series.astype(object)]
