"""splitGraph's JSON files, in both directions.

splitGraph (R) writes two objects with ``schema_version`` 0.1.0: a
``dependency_graph`` (node and edge tables, one JSON object per row) and a
``split_spec`` (``sample_data`` rows plus resampling hints). depgraph reads
both as written by splitGraph 0.2.0 (see ``tests/data/conformance/splitgraph_json``)
and by later releases (site, region, platform and assay groups, strata,
kinship / adjacency / duplicate relations), and writes files splitGraph's
``read_split_spec()`` and ``read_dependency_graph()`` load unchanged, so R
teams using splitGraph or bioLeak and Python teams exchange one file.

Mapping choices:

* Group labels are kept as they are on import. On export, depgraph's
  order-independent component labels (``composite:S1``, ``relatedness:S1``)
  become splitGraph's positional ones (``component_<k>``,
  ``relatedness:component_<k>``), numbered by first appearance in sample
  order; the partition is unchanged.
* splitGraph's warnings are sentences; on import they become coded
  ``SpecWarning`` s (``unlinked_samples``, ``mostly_singletons``, else
  ``splitgraph_warning``) and on export coded warnings become sentences again.
* ``splitgraph_version="0.2.0"``, the default (the release users install),
  writes a graph for splitGraph 0.2.0, whose vocabulary lacks Site, Region
  and Platform nodes and the site, region, platform, kinship, adjacency and
  duplicate relations: those nodes and edges are left out and listed in the
  returned note. ``"0.4.0"`` (splitGraph's development version) has
  depgraph's whole vocabulary.

Reading checks every field of every row (columns at a time, in Arrow and
numpy) and refuses a malformed file with a coded error naming the row; what
splitGraph reads with a warning (a ``schema_version`` other than 0.1.0, a
repeated edge) is read with a :class:`SplitGraphWarning`, also kept with the
result. docs/spec.md lists what is accepted, refused and warned about.
"""

from __future__ import annotations

import os
import re
import sys
import warnings
from collections.abc import Callable
from dataclasses import dataclass
from itertools import chain
from operator import methodcaller
from typing import Any

import numpy as np
import orjson
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc

from depgraph.common.arguments import instance
from depgraph.common.identifiers import normalise_keys, refuse_control_characters
from depgraph.errors import DepgraphError, DepgraphWarning, describe_ids
from depgraph.graph.assembly import assemble
from depgraph.graph.model import KNOWN_OVERRIDES, StudyGraph, checked_overrides
from depgraph.graph.pieces import EdgePiece, NodePiece
from depgraph.io.files import atomic_write_bytes, read_json
from depgraph.spec.columns import SAMPLE_COLUMNS
from depgraph.spec.model import Constraint, SpecWarning, SplitSpec
from depgraph.vocab import (
    BLOCK_MODES,
    DIRECT_MODES,
    MODE,
    MODES,
    NODE_TYPES,
    RELATION,
    RELATIONS,
    RESAMPLING_PLANS,
    STRATEGIES,
    NodeType,
    RelationName,
    direct_relation,
    recommended_resampling,
)

SCHEMA_VERSION = "0.1.0"
SPLITGRAPH_VERSIONS = ("0.2.0", "0.4.0")
#: The splitGraph a graph is written for by default: 0.2.0, the release users install (0.4.0, its development
#: version, holds depgraph's whole vocabulary, and 0.2.0 cannot load its files).
DEFAULT_SPLITGRAPH_VERSION = "0.2.0"
_NEW_IN_03 = {NodeType.SITE, NodeType.REGION}
_NEW_IN_04 = {NodeType.PLATFORM}
#: splitGraph 0.2.0 lacks the relations to the newer node types and the weighted ones (kinship, adjacency,
#: duplicates).
_RELATIONS_AFTER_02 = {r.name for r in RELATIONS if r.weighted or {r.source, r.target} & (_NEW_IN_03 | _NEW_IN_04)}
_COMPONENT_MODES = {m.name for m in MODES if m.kind == "component"}
_PLAIN_PROVENANCE = {"metadata", "splitgraph"}  # not written to splitGraph edge attrs
#: The sample_data fields that are a spec's own columns (splitGraph writes them in this order).
_ROW_COLUMNS = tuple(c for c in SAMPLE_COLUMNS if c != "sample_id")
#: splitGraph names a composite's modes by node type (``Timepoint``): the type each direct mode groups by.
_TYPE_TO_MODE = {direct_relation(m).target.value: m for m in DIRECT_MODES}
_UNLINKED = re.compile(r"^Samples missing (\w+) assignments were retained as singleton groups: (.*)$")


# --------------------------------------------------------------------------- reading
class SplitGraphWarning(DepgraphWarning):
    """A splitGraph file was read, but something in it needs the reader's eye
    (a ``schema_version`` other than 0.1.0, an edge listed twice; also kept in
    the result: the graph's ``history`` or the spec's ``warnings``), or one is
    written without something splitGraph's format cannot hold
    (``splitgraph_export_drops``: the folds, carried sample columns, the
    signature, the pseudonymisation record; a graph's nodes and edges an older
    splitGraph release lacks)."""


def read_splitgraph(path: str | os.PathLike[str]) -> SplitSpec | StudyGraph:
    """A splitGraph ``split_spec`` as a SplitSpec, or a ``dependency_graph`` as a StudyGraph.

    What a file may hold, what is refused and what is read with a
    :class:`SplitGraphWarning` is listed in docs/spec.md ("splitGraph files").
    """
    doc = read_json(path, "splitGraph file")
    return from_splitgraph(doc, f"splitGraph file {str(path)!r}")


def from_splitgraph(doc: Any, source: str = "splitGraph document") -> SplitSpec | StudyGraph:
    """A parsed splitGraph document as what its ``splitGraph_object`` says it is;
    ``source`` names it in messages."""
    kind = doc.get("splitGraph_object") if isinstance(doc, dict) else None
    if kind == "split_spec":
        return spec_from_splitgraph(doc, source)
    if kind == "dependency_graph":
        return graph_from_splitgraph(doc, source)
    raise DepgraphError(
        "schema",
        f"{source}: not a splitGraph file ('splitGraph_object' must be 'split_spec' or 'dependency_graph', "
        f"found {kind!r})",
    )


class _Notes(list):  # type: ignore[type-arg]
    """Warnings met while reading one file: told (Python warnings) and kept (history / spec)."""

    def __init__(self, source: str) -> None:
        super().__init__()
        self.source = source

    def add(self, code: str, message: str, **extra: Any) -> None:
        warnings.warn(SplitGraphWarning(code, f"{self.source}: {message}", **extra), stacklevel=_outside_depgraph())
        self.append({"code": code, "message": message, **extra})  # no path: it may travel with the result


def _outside_depgraph() -> int:
    """The stack level of the first caller outside depgraph (where a warning is shown as raised)."""
    frame, level = sys._getframe(2), 2
    while frame is not None and frame.f_globals.get("__name__", "").startswith("depgraph"):
        frame, level = frame.f_back, level + 1
    return level


def _schema_version(doc: dict[str, Any], source: str, notes: _Notes) -> str | None:
    """splitGraph's rule: a missing or different ``schema_version`` is read, with a warning."""
    version = doc.get("schema_version")
    if version is not None and not isinstance(version, str):
        raise DepgraphError(
            "schema", f"{source}: schema_version must be a string like {SCHEMA_VERSION!r}, not {_kind(version)}"
        )
    if not version:
        notes.add(
            "splitgraph_schema_version",
            f"no schema_version recorded; read as splitGraph schema {SCHEMA_VERSION}",
            count=1,
        )
    elif version != SCHEMA_VERSION:
        notes.add(
            "splitgraph_schema_version",
            f"schema_version {version!r} is not {SCHEMA_VERSION!r}, the splitGraph schema depgraph reads; "
            "read anyway: check the result",
            count=1,
        )
    return version or None


def _object(value: Any, source: str, where: str) -> dict[str, Any]:
    """An optional JSON object: null, absent and R's empty list ``[]`` are empty."""
    if value is None or value == []:
        return {}
    if not isinstance(value, dict):
        raise DepgraphError("schema", f"{source}: {where} must be an object, not {_kind(value)}")
    return value


def _kind(value: Any) -> str:
    """A JSON value's kind, with the value when it is short."""
    name = {str: "a string", bool: "a boolean", int: "a number", float: "a number", list: "a list",
            dict: "an object", type(None): "null"}.get(type(value), type(value).__name__)  # fmt: skip
    shown = repr(value)
    return f"{name} {shown}" if value is not None and len(shown) <= 40 else name


def _optional_text(block: dict[str, Any], field: str, source: str, where: str) -> str | None:
    value = block.get(field)
    if value is not None and not isinstance(value, str):
        raise DepgraphError("schema", f"{source}: {where} must be a string or null, not {_kind(value)}")
    return value


def _text_list(value: Any, source: str, where: str) -> list[str]:
    """R's auto_unbox writes one-element vectors as scalars: a string or a list of strings (null: none)."""
    values = [] if value is None else value if isinstance(value, list) else [value]
    bad = [v for v in values if not isinstance(v, str)]
    if bad or not isinstance(value, (str, list, type(None))):
        found = _kind(bad[0] if bad else value)
        raise DepgraphError("schema", f"{source}: {where} must be a string or a list of strings, not {found}")
    return values


def _rows(doc: dict[str, Any], field: str, source: str) -> list[dict[str, Any]]:
    """A list of JSON objects (null or absent: none)."""
    rows = doc.get(field)
    if rows is None:
        return []
    if not isinstance(rows, list):
        raise DepgraphError("schema", f"{source}: {field} must be a list of objects, not {_kind(rows)}")
    if set(map(type, rows)) - {dict}:
        i = next(i for i, r in enumerate(rows) if not isinstance(r, dict))
        raise DepgraphError("schema", f"{source}: {field}[{i}] must be an object, not {_kind(rows[i])}")
    return rows


def _column(rows: list[dict[str, Any]], field: str) -> list[Any]:
    """One field of every row (absent: None), gathered without a Python loop per row."""
    return list(map(methodcaller("get", field), rows))


def _objects(cells: Any) -> np.ndarray:
    """Cells as a 1-d object array (lists stay cells, never a second dimension)."""
    return np.fromiter(cells, dtype=object, count=len(cells))


def _is_type(cells: np.ndarray, kinds: tuple[type, ...]) -> np.ndarray:
    """Per cell: is its value one of ``kinds`` (``bool`` is not ``int`` here)."""
    types = np.fromiter(map(type, cells), dtype=object, count=len(cells))
    return np.isin(types, np.array(kinds, dtype=object)) if len(cells) else np.zeros(0, dtype=bool)


Namer = Callable[[int], str]  # names row i of a table in a message: "nodes[3] (sample:S1)"


def _texts(cells: Any, source: str, field: str, name: Namer, required: bool = True) -> pa.Array:
    """Cells as an Arrow string array: each a non-empty string (or null, when not
    ``required``); anything else is ``schema``, naming the first offending row."""
    try:
        text = pa.array(cells, type=pa.string(), from_pandas=True)  # a number, list or boolean cell fails here
    except (pa.ArrowInvalid, pa.ArrowTypeError):
        text = None
    if text is not None:
        bad = pc.equal(pc.binary_length(text), 0).fill_null(required).to_numpy(zero_copy_only=False)
    else:
        objects = _objects(cells)
        bad = ~_is_type(objects, (str,)) & (required | ~pd.isna(objects))
        bad |= _is_type(objects, (str,)) & (objects == "")
    if bad.any():
        i = int(np.flatnonzero(bad)[0])
        value = cells[i] if isinstance(cells, list) else cells.iat[i]
        raise DepgraphError(
            "schema",
            f"{source}: {name(i)}: {field} is {_kind(None if pd.isna(value) is True else value)}; "
            "it must be a non-empty string",
            row=i,
        )
    return text


def _attr_objects(cells: list[Any], source: str, name: Namer) -> np.ndarray:
    """Each row's ``attrs`` as a dict: an object, or empty (null, absent, R's ``[]``).

    Anything else (a list of values, a string) would lose every attribute of the
    node without a word (a timepoint its ``time_index``): refused, naming the node."""
    objects = _objects(cells)
    dicts = _is_type(objects, (dict,))
    if dicts.all():
        return objects
    empty = pd.isna(objects) | _empty_lists(objects)
    bad = ~dicts & ~empty
    if bad.any():
        i = int(np.flatnonzero(bad)[0])
        raise DepgraphError(
            "schema",
            f"{source}: {name(i)}: attrs must be an object of named values (or empty: {{}}, [] or null), "
            f"not {_kind(objects[i])}",
            row=i,
        )
    objects[empty] = [{}] * int(empty.sum())  # one shared empty dict: read, never written
    return objects


def _empty_lists(cells: np.ndarray) -> np.ndarray:
    """Per cell: is it ``[]`` (R's empty vector or empty named list, as jsonlite may write it)."""
    out = np.zeros(len(cells), dtype=bool)
    lists = np.flatnonzero(_is_type(cells, (list,)))
    out[lists] = [len(cells[i]) == 0 for i in lists]  # only the list cells, usually none
    return out


def _attr_frame(dicts: np.ndarray, source: str, name: Namer) -> pd.DataFrame:
    """Attribute dicts as a frame of scalar columns, in first-seen order (R's empty
    vector ``[]`` is missing); a list or object as a value is refused, naming the
    node and the attribute."""
    names = dict.fromkeys(chain.from_iterable(map(dict.keys, dicts)))
    columns = {}
    for column_name in names:
        cells = list(map(methodcaller("get", column_name), dicts))
        try:
            values = pa.array(cells, from_pandas=True)  # Arrow infers one type, or fails on a mix
        except (pa.ArrowInvalid, pa.ArrowTypeError):
            values = None
        except OverflowError:  # an integer beyond 64 bits: no attribute column holds it exactly
            i = next(i for i, c in enumerate(cells) if type(c) is int and not -(2**63) <= c < 2**63)
            raise DepgraphError(
                "invalid_value",
                f"{source}: {name(i)}: attrs.{column_name} is {cells[i]}, an "
                "integer outside the 64-bit range; write it as text to keep it exact",
                row=i,
            ) from None
        if values is not None and _is_scalar_type(values.type):
            columns[column_name] = values.to_pandas()
            continue
        objects = _objects(cells)
        empty = _empty_lists(objects)
        nested = _is_type(objects, (list, dict)) & ~empty
        if nested.any():
            i = int(np.flatnonzero(nested)[0])
            raise DepgraphError(
                "schema",
                f"{source}: {name(i)}: attrs.{column_name} is {_kind(objects[i])}; "
                "attribute values are single strings, numbers or booleans",
                row=i,
            )
        objects[empty] = None
        columns[column_name] = pd.Series(objects, dtype=object)
    return pd.DataFrame(columns, index=pd.RangeIndex(len(dicts)))


def _is_scalar_type(t: pa.DataType) -> bool:
    return any(check(t) for check in (pa.types.is_string, pa.types.is_integer, pa.types.is_floating,
                                      pa.types.is_boolean, pa.types.is_null))  # fmt: skip


_TYPE_NAMES = pa.array([t.value.lower() for t in NODE_TYPES])  # splitGraph matches node types case-blind
_RELATION_NAMES = pa.array(list(RELATION))
_RELATION_SOURCE = np.array([RELATION[r].source.rank for r in RELATION], dtype=np.int8)
_RELATION_TARGET = np.array([RELATION[r].target.rank for r in RELATION], dtype=np.int8)
_SAMPLE_COLUMNS = {r.column: r for r in RELATIONS if r.column and r.source == NodeType.SAMPLE}
_RELATION_COLUMNS = {r.column for r in RELATIONS if r.column}


@dataclass(frozen=True)
class _Nodes:
    """The node table: ids and keys (Arrow text), type ranks, attribute dicts."""

    ids: pa.Array
    types: np.ndarray
    keys: pa.Array
    attrs: np.ndarray

    def named(self, rows: np.ndarray | None = None) -> Namer:
        at = np.arange(len(self.ids)) if rows is None else rows
        return lambda i: f"nodes[{at[i]}] ({self.ids[int(at[i])].as_py()})"


@dataclass(frozen=True)
class _Edges:
    """Distinct edges: relation index, endpoint node rows, weight, provenance."""

    relation: np.ndarray
    src: np.ndarray
    dst: np.ndarray
    weight: np.ndarray
    provenance: pa.Array


def graph_from_splitgraph(doc: dict[str, Any], source: str = "splitGraph dependency_graph") -> StudyGraph:
    """A StudyGraph from splitGraph's ``dependency_graph`` JSON.

    Nodes are what ``node_id`` names: an edge endpoint is looked up among the
    node ids, and the node's ``node_type`` and ``node_key`` make the depgraph
    node (never a cut of the id at its ``:``). Every field is checked; a wrong
    one is a coded error naming the node or edge. A missing or unknown
    ``schema_version`` and repeated edges are read with a
    :class:`SplitGraphWarning` and kept in the graph's history, where
    :func:`~depgraph.validation.rules.validate` reports them.

    >>> doc = {"splitGraph_object": "dependency_graph", "schema_version": "0.1.0",
    ...        "nodes": [{"node_id": "lab:S1", "node_type": "Sample", "node_key": "lab:S1", "attrs": {}},
    ...                  {"node_id": "subject:P2", "node_type": "Subject", "node_key": "P2", "attrs": []}],
    ...        "edges": [{"from": "lab:S1", "to": "subject:P2", "edge_type": "sample_belongs_to_subject"}]}
    >>> g = graph_from_splitgraph(doc)
    >>> g.sample_ids.tolist(), g.keys("Subject").tolist()
    (['lab:S1'], ['P2'])
    """
    if not isinstance(doc, dict):
        raise DepgraphError("schema", f"{source}: a dependency_graph is a JSON object, not {_kind(doc)}")
    notes = _Notes(source)
    version = _schema_version(doc, source, notes)
    meta = _object(doc.get("metadata"), source, "metadata")
    name = _optional_text(meta, "graph_name", source, "metadata.graph_name")
    overrides = _validation_overrides(meta.get("validation_overrides"), source)
    nodes = _node_table(_rows(doc, "nodes", source), source, notes)
    edges = _edge_table(_rows(doc, "edges", source), nodes, source, notes)
    node_pieces, sample_attrs = _node_pieces(nodes, source)
    _check_sample_attrs(sample_attrs, nodes, edges, source)
    labels, provenance = pc.unique(edges.provenance), edges.provenance
    group = edges.relation.astype(np.int64) * len(labels) + pc.index_in(provenance, value_set=labels).to_numpy()
    edge_pieces = []
    for code in np.unique(group):  # one piece per (relation, provenance): a handful
        rows = np.flatnonzero(group == code)
        weight = edges.weight[rows]
        edge_pieces.append(
            EdgePiece(
                _RELATION_NAMES[int(code // len(labels))].as_py(),
                nodes.keys.take(pa.array(edges.src[rows])),
                nodes.keys.take(pa.array(edges.dst[rows])),
                labels[int(code % len(labels))].as_py(),
                None if np.isnan(weight).all() else weight,
            )
        )
    history: dict[str, Any] = {"step": "import_splitgraph", "schema_version": version}
    if notes:
        history["warnings"] = list(notes)
    try:
        return assemble(node_pieces, edge_pieces, name=name, overrides=overrides, history=[history])
    except DepgraphError as exc:
        raise DepgraphError(exc.code, f"{source}: {exc.message}", **exc.details) from exc


def _validation_overrides(value: Any, source: str) -> dict[str, bool]:
    """``metadata.validation_overrides``: empty (``{}``, R's ``[]``, null) or an object of
    known overrides set to JSON booleans. splitGraph honours an override only when it is
    ``TRUE`` and refuses to derive otherwise; a string ``"false"`` must not switch one on."""
    where = "metadata.validation_overrides"
    overrides = _object(value, source, where)
    unknown = sorted(set(overrides) - KNOWN_OVERRIDES)
    if unknown:
        raise DepgraphError(
            "schema",
            f"{source}: {where} names {describe_ids(unknown)}, not an override depgraph knows "
            f"({describe_ids(sorted(KNOWN_OVERRIDES))})",
        )
    return checked_overrides(overrides, "schema", f"{source}: {where}")


def _node_table(rows: list[dict[str, Any]], source: str, notes: _Notes) -> _Nodes:
    """Every node's id, type, key and attributes, each checked; node ids and
    (type, key) pairs unique once exact repeats are collapsed."""
    if not rows:
        raise DepgraphError("empty_input", f"{source}: the graph has no nodes (a splitGraph graph has Sample nodes)")
    ids = _texts(_column(rows, "node_id"), source, "node_id", lambda i: f"nodes[{i}]")
    if pc.count_distinct(ids).as_py() < len(ids):
        rows = _without_repeated_nodes(rows, ids, source, notes)
        ids = _texts(_column(rows, "node_id"), source, "node_id", lambda i: f"nodes[{i}]")
    named: Namer = lambda i: f"nodes[{i}] ({ids[i].as_py()})"  # noqa: E731
    names = _texts(_column(rows, "node_type"), source, "node_type", named)
    keys = _texts(_column(rows, "node_key"), source, "node_key", named)
    refuse_control_characters(keys, "node_key", source)  # the id rules of every table reader
    types = pc.index_in(pc.utf8_lower(names), value_set=_TYPE_NAMES)
    if types.null_count:
        i = int(np.flatnonzero(pc.is_null(types).to_numpy(zero_copy_only=False))[0])
        raise DepgraphError(
            "schema",
            f"{source}: {named(i)}: node_type is {names[i].as_py()!r}; "
            f"node types are {describe_ids([t.value for t in NODE_TYPES], 11)}",
            row=i,
        )
    canonical = pa.array([t.value for t in NODE_TYPES]).take(types)
    typed_keys = pc.binary_join_element_wise(canonical, keys, "\x1f")
    if pc.count_distinct(typed_keys).as_py() < len(ids):
        text = pd.Series(typed_keys.to_numpy(zero_copy_only=False), dtype=object)
        repeated = text[text.duplicated()].iat[0]
        both = [ids[int(i)].as_py() for i in np.flatnonzero((text == repeated).to_numpy())[:2]]
        t, k = repeated.split("\x1f", 1)
        raise DepgraphError(
            "duplicate_id", f"{source}: nodes {describe_ids(both)} are both {t} {k!r}: one key, one node", ids=both
        )
    # a graph without samples is read (splitGraph validates it: a cyclic timepoint_precedes is reported, not hidden
    # behind the missing samples); derive refuses it (empty_input)
    type_ranks = types.to_numpy(zero_copy_only=False).astype(np.int8)
    return _Nodes(ids, type_ranks, keys, _attr_objects(_column(rows, "attrs"), source, named))


def _without_repeated_nodes(rows: list[dict[str, Any]], ids: pa.Array, source: str, notes: _Notes) -> list[Any]:
    """``rows`` with every node that repeats an earlier node's definition exactly left out, told as
    ``repeated_node_definition`` (splitGraph's ``create_nodes`` collapses such repeats); two different definitions
    of one node id are refused (``duplicate_id``, naming the rows and the fields that differ), as splitGraph refuses
    conflicting ones. Only the rows of repeated ids are compared."""
    node_ids = pd.Series(ids.to_numpy(zero_copy_only=False), dtype=object)
    later = node_ids.duplicated().to_numpy()
    first: dict[str, tuple[int, dict[str, Any]]] = {}
    for i in np.flatnonzero(node_ids.duplicated(keep=False).to_numpy()):
        row = {**rows[i], "attrs": rows[i].get("attrs") or {}}  # empty attrs as jsonlite writes them: {}, [], null
        j, earlier = first.setdefault(node_ids.iat[i], (int(i), row))
        if orjson.dumps(row, option=orjson.OPT_SORT_KEYS) != orjson.dumps(earlier, option=orjson.OPT_SORT_KEYS):
            differ = sorted(k for k in {*row, *earlier} if row.get(k) != earlier.get(k)) or ["a value's type"]
            raise DepgraphError(
                "duplicate_id",
                f"{source}: nodes[{j}] and nodes[{i}] define the node {node_ids.iat[i]!r} differently "
                f"({', '.join(differ)}); a node is defined once (splitGraph: conflicting node definitions)",
                ids=[node_ids.iat[i]],
                rows=[j, int(i)],
            )
    repeated = node_ids[later].unique().tolist()
    notes.add(
        "repeated_node_definition",
        f"{int(later.sum())} node row(s) repeat an earlier row exactly, kept once (as splitGraph does): "
        f"{describe_ids(repeated)}",
        count=int(later.sum()),
        ids=repeated[:50],
    )
    return [row for row, drop in zip(rows, later, strict=True) if not drop]


def _node_pieces(nodes: _Nodes, source: str) -> tuple[list[NodePiece], pd.DataFrame]:
    """One piece per node type with its attributes; the Sample attributes that name a
    relation's target (``subject_id``...) are returned apart, to be checked against the edges."""
    pieces = []
    sample_attrs = pd.DataFrame()
    for t in NODE_TYPES:
        rows = np.flatnonzero(nodes.types == t.rank)
        if not len(rows):
            continue
        named = nodes.named(rows)
        keys = nodes.keys.take(pa.array(rows))
        attrs = _attr_frame(nodes.attrs[rows], source, named)
        if t == NodeType.SAMPLE:
            sample_attrs = attrs[[c for c in attrs.columns if c in _SAMPLE_COLUMNS]].assign(_row=rows)
        attrs = attrs.drop(columns=[c for c in attrs.columns if c in _RELATION_COLUMNS])
        if t == NodeType.TIMEPOINT and "time_index" in attrs.columns:
            attrs["time_index"] = _time_index(attrs["time_index"], named, source)
        attrs = attrs.loc[:, attrs.notna().any()] if len(attrs.columns) else attrs
        pieces.append(NodePiece(t, keys, attrs if len(attrs.columns) else None))
    return pieces, sample_attrs


def _time_index(values: pd.Series, name: Namer, source: str) -> pd.Series:
    """A timepoint's ``time_index``: a number or null (text, even "3", and booleans are refused)."""
    objects = _objects(values.astype(object))
    bad = ~pd.isna(objects) & ~_is_type(objects, (int, float))
    if bad.any():
        i = int(np.flatnonzero(bad)[0])
        raise DepgraphError(
            "invalid_value",
            f"{source}: {name(i)}: attrs.time_index is {_kind(objects[i])}; it must be a number",
            row=i,
        )
    return pd.Series(values.to_numpy(dtype=np.float64, na_value=np.nan), index=values.index)


def _edge_table(rows: list[dict[str, Any]], nodes: _Nodes, source: str, notes: _Notes) -> _Edges:
    """Every edge, checked, once.

    Endpoints are node ids; one that names no node is a ``reference`` error with
    splitGraph's hint when the ids look prefixed on one side only. An edge whose
    endpoints' types its relation does not join is refused. A repeated
    ``(from, to, edge_type)`` is kept once, with a ``duplicate_edge`` warning.
    """
    if not rows:
        empty = np.zeros(0, dtype=np.int64)
        return _Edges(empty, empty, empty, np.zeros(0), pa.array([], type=pa.string()))
    kinds = _texts(_column(rows, "edge_type"), source, "edge_type", lambda i: f"edges[{i}]")
    ends = {side: _texts(_column(rows, side), source, side, lambda i: f"edges[{i}]") for side in ("from", "to")}
    named: Namer = lambda i: f"edges[{i}] ({ends['from'][i]} -[{kinds[i]}]-> {ends['to'][i]})"  # noqa: E731
    relation = pc.index_in(kinds, value_set=_RELATION_NAMES)
    if relation.null_count:
        i = int(np.flatnonzero(pc.is_null(relation).to_numpy(zero_copy_only=False))[0])
        raise DepgraphError(
            "schema",
            f"{source}: edges[{i}] has edge_type {kinds[i].as_py()!r}, which neither splitGraph nor depgraph "
            f"defines (edge types: {describe_ids(list(RELATION), 20)})",
            row=i,
        )
    at = {side: pc.index_in(ends[side], value_set=nodes.ids) for side in ends}
    _refuse_unknown_endpoints(ends, at, nodes.ids, source)
    rel = relation.to_numpy(zero_copy_only=False).astype(np.int64)
    src, dst = (at[side].to_numpy(zero_copy_only=False).astype(np.int64) for side in ("from", "to"))
    wrong = (nodes.types[src] != _RELATION_SOURCE[rel]) | (nodes.types[dst] != _RELATION_TARGET[rel])
    if wrong.any():
        i = int(np.flatnonzero(wrong)[0])
        r = RELATION[kinds[i].as_py()]
        raise DepgraphError(
            "schema",
            f"{source}: {named(i)} joins a {NODE_TYPES[nodes.types[src[i]]].value} to a "
            f"{NODE_TYPES[nodes.types[dst[i]]].value} node; {r.name} joins {r.source.value} to {r.target.value} "
            "(splitGraph: invalid_edge_signature)",
            row=i,
        )
    attrs = _attr_frame(_attr_objects(_column(rows, "attrs"), source, named), source, named)
    weight = _edge_weight(attrs, source, named)
    provenance = _edge_provenance(attrs, source, named)
    triplets = pc.binary_join_element_wise(ends["from"], ends["to"], kinds, "\x1f")
    keep = np.ones(len(rows), dtype=bool)
    if pc.count_distinct(triplets).as_py() < len(rows):
        repeated = pd.Series(triplets.to_numpy(zero_copy_only=False)).duplicated().to_numpy()
        keep = ~repeated
        at_rows = np.flatnonzero(repeated)
        shown = [f"{ends['from'][i]} -[{kinds[i]}]-> {ends['to'][i]}" for i in at_rows[:3]]
        prefixes = np.array([t.prefix + ":" for t in NODE_TYPES], dtype=object)
        ends_at = np.concatenate([src[at_rows], dst[at_rows]])
        node_ids = pc.binary_join_element_wise(
            pa.array(prefixes[nodes.types[ends_at]]), nodes.keys.take(pa.array(ends_at)), ""
        )
        notes.add(
            "duplicate_edge",
            f"{len(at_rows)} edge(s) repeat an earlier (from, to, edge_type), kept once "
            f"(splitGraph: duplicate_edge_triplet): {'; '.join(shown)}",
            count=len(at_rows),
            ids=list(dict.fromkeys(node_ids.to_pylist())),
        )
    return _Edges(rel[keep], src[keep], dst[keep], weight[keep], provenance.filter(pa.array(keep)))


def _refuse_unknown_endpoints(
    ends: dict[str, pa.Array], at: dict[str, pa.Array], node_ids: pa.Array, source: str
) -> None:
    """splitGraph's refusal of endpoints missing from the node table, with its prefix hint."""
    for side, found in at.items():
        if not found.null_count:
            continue
        missing = pc.unique(ends[side].filter(pc.is_null(found))).to_pylist()
        missing_prefixed = any(":" in m for m in missing)
        nodes_prefixed = pc.any(pc.match_substring(node_ids, ":")).as_py()
        hint = ""
        if missing_prefixed and not nodes_prefixed:
            hint = "; hint: edge endpoints look prefixed (e.g. 'sample:S1') but node ids are not"
        elif not missing_prefixed and nodes_prefixed:
            hint = "; hint: node ids are prefixed (e.g. 'sample:S1') but edge endpoints are not"
        raise DepgraphError(
            "reference",
            f"{source}: edges name {side!r} node ids that are not in the node table: {describe_ids(missing)}{hint}",
            ids=missing,
        )


def _edge_weight(attrs: pd.DataFrame, source: str, named: Namer) -> np.ndarray:
    """An edge's weight: ``weight``, else ``kinship``, else ``distance`` (numbers or null)."""
    weight = np.full(len(attrs), np.nan)
    for name in ("distance", "kinship", "weight"):  # later names win
        if name not in attrs.columns:
            continue
        objects = _objects(attrs[name].astype(object))
        bad = ~pd.isna(objects) & ~_is_type(objects, (int, float))
        if bad.any():
            i = int(np.flatnonzero(bad)[0])
            raise DepgraphError(
                "schema", f"{source}: {named(i)}: attrs.{name} is {_kind(objects[i])}; it must be a number", row=i
            )
        numbers = attrs[name].to_numpy(dtype=np.float64, na_value=np.nan)
        weight = np.where(np.isnan(numbers), weight, numbers)
    return weight


def _edge_provenance(attrs: pd.DataFrame, source: str, named: Namer) -> pa.Array:
    """Which builder declared an edge (depgraph writes it; splitGraph's own edges have none)."""
    if "provenance" not in attrs.columns:
        return pa.array(np.full(len(attrs), "splitgraph", dtype=object), type=pa.string())
    text = _texts(attrs["provenance"].astype(object), source, "attrs.provenance", named, required=False)
    return text.fill_null("splitgraph")


def _check_sample_attrs(attrs: pd.DataFrame, nodes: _Nodes, edges: _Edges, source: str) -> None:
    """A Sample's ``subject_id`` (``batch_id``...) attribute must name one of its targets of
    that relation (``outcome_id``: its own outcome or its subject's): a file that says two
    things about one sample is refused (``ambiguity``). Grouping, in splitGraph as here,
    follows the edges."""
    for column in (c for c in attrs.columns if c != "_row"):
        values = attrs[column]
        given = values.notna().to_numpy()
        if not given.any():
            continue
        relation = _SAMPLE_COLUMNS[column].name
        said_keys = nodes.keys.take(pa.array(attrs["_row"].to_numpy()[given]))
        try:  # text as written (keys are exact here); numbers as depgraph writes them as keys (1.0 -> "1")
            said_values = pa.array(values[given].to_numpy(dtype=object), type=pa.string())
        except (pa.ArrowInvalid, pa.ArrowTypeError):
            said_values = pa.array(normalise_keys(values[given]).to_numpy(dtype=object), type=pa.string())
        said = pc.binary_join_element_wise(said_keys, said_values, "\x1f")
        pairs = [_pairs(nodes, edges, relation)]
        if (
            relation == RelationName.SAMPLE_HAS_OUTCOME
        ):  # splitGraph's outcome_scope = "subject" links outcomes to subjects
            subject = _pairs(nodes, edges, RelationName.SAMPLE_BELONGS_TO_SUBJECT).rename(columns={"to": "via"})
            outcome = _pairs(nodes, edges, RelationName.SUBJECT_HAS_OUTCOME).rename(columns={"from": "via"})
            pairs.append(subject.merge(outcome, on="via")[["from", "to"]])
        linked = pd.concat(pairs, ignore_index=True)
        declared = pa.array((linked["from"] + "\x1f" + linked["to"]).to_numpy(dtype=object), type=pa.string())
        contradicts = ~pc.is_in(said, value_set=declared).fill_null(False).to_numpy(zero_copy_only=False)
        if contradicts.any():
            i = int(np.flatnonzero(contradicts)[0])
            sample, value = said_keys[i].as_py(), said_values[i].as_py()
            targets = linked.loc[linked["from"] == sample, "to"].tolist()
            found = f"its {relation} edges lead to {describe_ids(targets)}" if targets else f"it has no {relation} edge"
            raise DepgraphError(
                "ambiguity",
                f"{source}: Sample {sample!r} has attrs.{column} {value!r} but {found}; "
                "grouping follows the edges: make the attribute and the edges agree",
                ids=[sample],
                column=column,
            )


def _pairs(nodes: _Nodes, edges: _Edges, relation: str) -> pd.DataFrame:
    """(source key, target key) of a relation's edges."""
    rows = edges.relation == list(RELATION).index(relation)
    keys = nodes.keys
    return pd.DataFrame(
        {
            "from": keys.take(pa.array(edges.src[rows])).to_numpy(zero_copy_only=False).astype(object),
            "to": keys.take(pa.array(edges.dst[rows])).to_numpy(zero_copy_only=False).astype(object),
        }
    )


def spec_from_splitgraph(doc: dict[str, Any], source: str = "splitGraph split_spec") -> SplitSpec:
    """A SplitSpec from splitGraph's ``split_spec`` JSON (labels kept as written,
    samples in sample-id order as in every depgraph spec).

    Every field is checked; a wrong one is a coded error naming the row and
    field. A missing or unknown ``schema_version`` is read with a
    :class:`SplitGraphWarning`, kept in the spec's ``warnings``.
    """
    if not isinstance(doc, dict):
        raise DepgraphError("schema", f"{source}: a split_spec is a JSON object, not {_kind(doc)}")
    notes = _Notes(source)
    _schema_version(doc, source, notes)
    rows = _rows(doc, "sample_data", source)
    if not rows:
        raise DepgraphError("schema", f"{source}: sample_data must be a non-empty list of rows")
    group_var = doc.get("group_var") or "group_id"
    if not isinstance(group_var, str):
        raise DepgraphError("schema", f"{source}: group_var must be a column name, not {_kind(group_var)}")
    fields = dict.fromkeys(chain.from_iterable(map(dict.keys, rows)))
    if "sample_id" not in fields:
        raise DepgraphError("schema", f"{source}: sample_data rows have no sample_id")
    if group_var not in fields:
        if group_var != "group_id" or "primary_group" not in fields:
            what = "neither group_id nor primary_group" if group_var == "group_id" else f"no {group_var} (group_var)"
            raise DepgraphError("schema", f"{source}: sample_data rows have {what}")
        group_var = "primary_group"
    ids = _texts(_column(rows, "sample_id"), source, "sample_id", lambda i: f"sample_data[{i}]")
    named: Namer = lambda i: f"sample_data[{i}] ({ids[i].as_py()})"  # noqa: E731
    groups = _texts(_column(rows, group_var), source, group_var, named)
    if pc.count_distinct(ids).as_py() < len(ids):
        text = pd.Series(ids.to_numpy(zero_copy_only=False), dtype=object)
        twice = text[text.duplicated()].unique().tolist()
        raise DepgraphError(
            "duplicate_id", f"{source}: sample_data repeats sample ids {describe_ids(twice)}", ids=twice
        )
    order = pc.sort_indices(ids).to_numpy(zero_copy_only=False)  # depgraph's sample order (byte order)
    columns = {"sample_id": ids, "group_id": groups}
    for column in _ROW_COLUMNS:
        if column != "group_id" and column in fields:
            columns[column] = _spec_column(_column(rows, column), column, source, named)
    samples = pd.DataFrame(
        {c: _as_column(v, c).iloc[order].reset_index(drop=True) for c, v in columns.items() if v is not None}
    )
    meta = _object(doc.get("metadata"), source, "metadata")
    _check_counts(meta, samples, source)
    return _spec(doc, meta, samples, notes, source)


def _spec_column(cells: list[Any], column: str, source: str, named: Namer) -> pa.Array | np.ndarray | None:
    """A sample_data column: numbers for ``time_index``, whole numbers for ``order_rank``,
    else text; ``None`` when no row has a value."""
    if column not in ("time_index", "order_rank"):
        text = _texts(cells, source, column, named, required=False)
        return None if text.null_count == len(text) else text
    objects = _objects(cells)
    bad = ~pd.isna(objects) & ~_is_type(objects, (int, float))
    numbers = np.full(len(objects), np.nan)
    if not bad.any():
        numbers = pd.Series(objects, dtype=object).to_numpy(dtype=np.float64, na_value=np.nan)
        if column == "order_rank":
            bad = ~np.isnan(numbers) & ((np.floor(numbers) != numbers) | (np.abs(numbers) > 2**53))
    if bad.any():
        i = int(np.flatnonzero(bad)[0])
        kind = "a whole number" if column == "order_rank" else "a number"
        raise DepgraphError(
            "invalid_value",
            f"{source}: {named(i)}: {column} is {_kind(objects[i])}; it must be {kind} or null",
            row=i,
            column=column,
        )
    return None if np.isnan(numbers).all() else numbers


def _as_column(values: pa.Array | np.ndarray, column: str) -> pd.Series:
    """A spec column as SplitSpec holds it: text as Python strings (None where missing),
    ``time_index`` as float64, ``order_rank`` as nullable Int64."""
    if isinstance(values, pa.Array):
        return pd.Series(values.to_numpy(zero_copy_only=False), dtype=object)  # nulls come out as None
    if column == "order_rank":
        whole = pd.array(np.where(np.isnan(values), 0, values).astype(np.int64), dtype="Int64")
        return pd.Series(whole).mask(np.isnan(values))
    return pd.Series(values, dtype=np.float64)


def _check_counts(meta: dict[str, Any], samples: pd.DataFrame, source: str) -> None:
    """splitGraph records ``n_samples`` and ``n_groups``: a file whose rows say otherwise contradicts itself."""
    actual = {"n_samples": len(samples), "n_groups": int(samples["group_id"].nunique())}
    for field, n in actual.items():
        said = meta.get(field)
        if said is None:
            continue
        if isinstance(said, bool) or not isinstance(said, (int, float)) or said != n:
            raise DepgraphError(
                "integrity", f"{source}: metadata.{field} is {_kind(said)} but sample_data holds {n}", field=field
            )


def _spec(doc: dict[str, Any], meta: dict[str, Any], samples: pd.DataFrame, notes: _Notes, source: str) -> SplitSpec:
    modes = [doc.get("constraint_mode"), meta.get("source_mode")]
    mode = next((m for m in modes if m is not None), None)
    if not isinstance(mode, str) or mode not in MODE:
        found = "missing" if mode is None else _kind(mode)
        raise DepgraphError(
            "schema", f"{source}: constraint_mode is {found}; it must be one of {describe_ids(list(MODE), 12)}"
        )
    strategy = next((s for s in (doc.get("constraint_strategy"), meta.get("source_strategy")) if s is not None), None)
    if mode == "composite" and strategy not in STRATEGIES:
        raise DepgraphError(
            "schema",
            f"{source}: a composite spec's constraint_strategy must be strict or rule_based, not {_kind(strategy)}",
        )
    if strategy is not None and not isinstance(strategy, str):
        raise DepgraphError("schema", f"{source}: constraint_strategy must be a string, not {_kind(strategy)}")
    strategy = strategy if mode == "composite" else None
    via_raw = _text_list(meta.get("via"), source, "metadata.via")
    priority_raw = _text_list(meta.get("priority"), source, "metadata.priority")
    relations_raw = _text_list(meta.get("relations_used"), source, "metadata.relations_used")
    sentences = _text_list(meta.get("warnings"), source, "metadata.warnings")
    graph_name = _optional_text(meta, "graph_name", source, "metadata.graph_name")
    dataset_name = _optional_text(meta, "dataset_name", source, "metadata.dataset_name")
    # splitGraph's own fields, as written: the constraint below keeps what maps onto depgraph's vocabulary
    kept = {k: doc.get(k) for k in ("schema_version", "group_var", "block_vars", "time_var", "ordering_required")}
    parameters = {"splitgraph": {k: v for k, v in kept.items() if k in doc}}
    for field, raw in (("via", via_raw), ("priority", priority_raw), ("relations_used", relations_raw)):
        if raw:
            parameters["splitgraph"][field] = raw
    if dataset_name is not None:
        parameters["splitgraph"]["dataset_name"] = dataset_name
    via = [_TYPE_TO_MODE.get(v, v.lower()) for v in via_raw]
    implied = _recommendation(doc, mode, strategy, parameters["splitgraph"], notes, source)
    warnings_found = [_coded(w) for w in sentences]
    warnings_found += [SpecWarning(code=n["code"], severity="warning", message=n["message"], count=1) for n in notes]
    try:
        return SplitSpec.build(
            samples=samples,
            graph_name=graph_name,
            constraint=Constraint(
                mode=mode,
                strategy=strategy,
                relations=[r for r in relations_raw if r in RELATION],
                via=[v for v in via if v in MODE and v != "composite"],
                priority=[p for p in priority_raw if p in MODE],
                parameters=parameters,
            ),
            recommended_resampling=implied,
            warnings=warnings_found,
        )
    except DepgraphError as exc:  # every field is checked above; what slipped through is named with the file
        code = "schema" if exc.code == "invalid_argument" else exc.code  # the file's content, not an argument
        raise DepgraphError(code, f"{source}: {exc.message.removeprefix('spec: ')}", **exc.details) from None


def _recommendation(
    doc: dict[str, Any], mode: str, strategy: str | None, kept: dict[str, Any], notes: _Notes, source: str
) -> str:
    """The resampling the imported spec recommends: its mode's. A file recommending another (made by hand with
    ``split_spec(recommended_resampling = ...)``) keeps its own in ``kept``, with a warning."""
    recommended = doc.get("recommended_resampling")
    if recommended is not None and recommended not in RESAMPLING_PLANS:
        raise DepgraphError(
            "schema",
            f"{source}: recommended_resampling is {_kind(recommended)}; "
            f"it must be one of {describe_ids(RESAMPLING_PLANS)}",
        )
    implied = recommended_resampling(mode, strategy)
    if recommended is not None and recommended != implied:
        kept["recommended_resampling"] = recommended
        notes.add("splitgraph_recommendation", f"recommended_resampling is {recommended!r}, but a {mode} spec "
                  f"recommends {implied!r}: the spec recommends {implied!r}; the file's is kept in "
                  "constraint.parameters.splitgraph")  # fmt: skip
    return implied


def _coded(sentence: str) -> SpecWarning:
    match = _UNLINKED.match(sentence)
    if match:
        ids = [s.strip() for s in match.group(2).split(",") if s.strip()]
        return SpecWarning(code="unlinked_samples", message=sentence, count=len(ids), ids=ids)
    if sentence.startswith("Most strict composite groups are singletons"):
        return SpecWarning(code="mostly_singletons", severity="advisory", message=sentence)
    return SpecWarning(code="splitgraph_warning", message=sentence)


# --------------------------------------------------------------------------- writing
def _tell_left_out(what: str, left_out: list[str]) -> None:
    """Say, as a ``splitgraph_export_drops`` warning, what a splitGraph file is written without."""
    if left_out:
        warnings.warn(
            SplitGraphWarning(
                "splitgraph_export_drops", f"{what} cannot hold {'; '.join(left_out)}: left out", left_out=left_out
            ),
            stacklevel=_outside_depgraph(),
        )


def spec_left_out(spec: SplitSpec) -> list[str]:
    """What of ``spec`` a splitGraph ``split_spec`` cannot hold, one phrase each: the folds, sample columns other
    than splitGraph's group, block, time and stratum columns, the signature, the pseudonymisation record.
    (The digest, the creation time and how the groups were derived — via, priority, build parameters — are not
    carried either; the groups they made are.)"""
    instance(spec, SplitSpec, "spec_left_out: the spec")
    out = []
    if spec.folds is not None:
        out.append(f"the folds ({len(spec.folds.splits)} split(s) of {spec.folds.scheme})")
    extra = [c for c in spec.samples.columns if c != "sample_id" and c not in _ROW_COLUMNS]
    if extra:
        out.append(f"sample column(s) {describe_ids(extra, 10)}")
    if spec.signature is not None:
        out.append(f"the signature (key fingerprint {spec.signature.key_fingerprint})")
    if spec.pseudonymization is not None:
        out.append("the pseudonymisation record (the ids stay pseudonyms; the file no longer says so)")
    return out


def spec_to_splitgraph(spec: SplitSpec) -> dict[str, Any]:
    """splitGraph's ``split_spec`` JSON for ``spec`` (component labels made positional). What the format cannot
    hold (:func:`spec_left_out`: the folds, carried sample columns, the signature, the pseudonymisation record) is
    left out with a ``splitgraph_export_drops`` :class:`SplitGraphWarning`."""
    instance(spec, SplitSpec, "spec_to_splitgraph: the spec")
    _tell_left_out("splitGraph's split_spec", spec_left_out(spec))
    samples = spec.samples
    mode, strategy = spec.constraint.mode, spec.constraint.strategy
    groups = _positional_labels(samples["group_id"], mode, strategy)
    block_vars = [f"{m}_group" for m in BLOCK_MODES if f"{m}_group" in samples.columns]
    has_rank = "order_rank" in samples.columns and samples["order_rank"].notna().any()
    time_aware = mode == "time" or (strategy == "rule_based" and "time" in spec.constraint.priority)
    rows = []
    columns = {c: _json_values(samples[c]) for c in samples.columns if c not in ("sample_id", "group_id")}
    for i, sample in enumerate(samples["sample_id"].tolist()):
        row: dict[str, Any] = {
            "sample_id": sample,
            "sample_node_id": f"sample:{sample}",
            "group_id": groups[i],
            "primary_group": groups[i],
        }
        for column in ("batch_group", "study_group", "site_group", "region_group", "platform_group", "assay_group"):
            if column in columns:
                row[column] = columns[column][i]
        if mode in BLOCK_MODES and f"{mode}_group" in columns and row.get(f"{mode}_group") is None:
            row[f"{mode}_group"] = f"unlinked_{sample}"  # splitGraph labels the block of an unlinked sample
        for column in ("timepoint_id", "time_index", "order_rank", "stratum"):
            if column in columns:
                row[column] = columns[column][i]
        rows.append(row)
    extra = spec.constraint.parameters.get("splitgraph", {})
    return {
        "splitGraph_object": "split_spec",
        "schema_version": SCHEMA_VERSION,
        "group_var": "group_id",
        "block_vars": block_vars,
        "time_var": "order_rank" if has_rank else None,
        "ordering_required": bool(time_aware and has_rank and samples["order_rank"].notna().all()),
        "constraint_mode": mode,
        "constraint_strategy": strategy or mode,
        "recommended_resampling": spec.recommended_resampling,
        "metadata": {
            "graph_name": spec.graph_name,
            "dataset_name": extra.get("dataset_name"),
            "source_mode": mode,
            "source_strategy": strategy or mode,
            "relations_used": _unboxed(list(spec.constraint.relations)),
            "n_samples": spec.n_samples,
            "n_groups": int(samples["group_id"].nunique()),
            "warnings": _unboxed([_sentence(w, mode) for w in spec.warnings]),
            "enriched_from_graph": True,
        },
        "sample_data": rows,
    }


def _unboxed(values: list[Any]) -> Any:
    """One value as a scalar, as R's jsonlite (auto_unbox) writes it; splitGraph reads both."""
    return values[0] if len(values) == 1 else values


def _positional_labels(groups: pd.Series, mode: str, strategy: str | None) -> list[str]:
    """Component labels as splitGraph writes them: ``[<mode>:]component_<k>`` by first appearance."""
    if not (mode in _COMPONENT_MODES or (mode == "composite" and strategy == "strict")):
        return groups.astype(str).tolist()
    prefix = "" if mode == "composite" else f"{mode}:"
    values = groups.astype(str)
    if values.str.fullmatch(re.escape(prefix) + r"component_\d+").all():
        return values.tolist()  # already positional (imported from splitGraph)
    codes, _ = pd.factorize(values)  # factorize numbers groups by first appearance
    return [f"{prefix}component_{c + 1}" for c in codes]


def _sentence(warning: SpecWarning, mode: str) -> str:
    if warning.code == "unlinked_samples" and mode != "composite":
        what = "timepoint" if mode == "time" else mode
        more = f" and {warning.count - len(warning.ids)} more" if warning.count > len(warning.ids) else ""
        return f"Samples missing {what} assignments were retained as singleton groups: {', '.join(warning.ids)}{more}"
    return warning.message


def _json_values(series: pd.Series) -> list[Any]:
    values = series.astype(object).where(series.notna(), None).tolist()
    return [v.item() if isinstance(v, np.generic) else v for v in values]


def graph_to_splitgraph(
    graph: StudyGraph, splitgraph_version: str = DEFAULT_SPLITGRAPH_VERSION
) -> tuple[dict[str, Any], list[str]]:
    """splitGraph's ``dependency_graph`` JSON for ``graph``, and a note of what
    the target splitGraph version cannot hold (left out, and told as a
    ``splitgraph_export_drops`` :class:`SplitGraphWarning`)."""
    instance(graph, StudyGraph, "graph_to_splitgraph: the graph")
    if splitgraph_version not in SPLITGRAPH_VERSIONS:
        raise DepgraphError(
            "invalid_argument", f"splitgraph_version must be one of {describe_ids(SPLITGRAPH_VERSIONS)}"
        )
    old = splitgraph_version == "0.2.0"
    left_out_types = (_NEW_IN_03 | _NEW_IN_04) if old else set()
    left_out_relations = _RELATIONS_AFTER_02 if old else set()
    notes = []
    keys = graph.key_values
    ids = graph.node_ids.to_numpy(dtype=object)
    sample_attrs = _sample_attrs(graph, left_out_relations)
    nodes = []
    for t in NODE_TYPES:
        start, stop = graph.type_range(t)
        if stop == start:
            continue
        if t in left_out_types:
            notes.append(f"{stop - start} {t.value} node(s)")
            continue
        attr_block = graph.attributes.iloc[start:stop]
        for offset, pos in enumerate(range(start, stop)):
            attrs: dict[str, Any] = {}
            if t == NodeType.SAMPLE:
                attrs.update(sample_attrs[offset])
            for column in attr_block.columns:
                value = attr_block[column].iat[offset]
                if not (value is None or (isinstance(value, float) and np.isnan(value))):
                    attrs[column] = _plain(value)
            nodes.append({"node_id": ids[pos], "node_type": t.value, "node_key": keys[pos], "label": keys[pos],
                          "attrs": attrs})  # fmt: skip
    edges = _edge_rows(graph, left_out_relations, ids, notes)
    overrides = {k: v for k, v in graph.overrides.items() if v}
    doc = {
        "splitGraph_object": "dependency_graph",
        "schema_version": SCHEMA_VERSION,
        "metadata": {
            "graph_name": graph.name,
            "dataset_name": None,
            "created_at": pd.Timestamp.now(tz="UTC").strftime("%Y-%m-%dT%H:%M:%S.%f+0000"),
            "schema_version": SCHEMA_VERSION,
            "validation_overrides": overrides if overrides else [],
        },
        "nodes": nodes,
        "edges": edges,
    }
    _tell_left_out(f"splitGraph {splitgraph_version}'s dependency_graph", notes)
    return doc, notes


def _edge_rows(graph: StudyGraph, left_out: set[str], ids: np.ndarray, notes: list[str]) -> list[dict[str, Any]]:
    """splitGraph's edge rows for every relation the target version holds (the others counted in ``notes``)."""
    edges = []
    for rel in graph.relation_counts():
        src, dst, weight = graph.relation_edges(rel)
        if rel in left_out:
            notes.append(f"{len(src)} {rel} edge(s)")
            continue
        block = graph.relations[rel]
        provenance = np.asarray(block.labels, dtype=object)[block.codes()]
        for k, (a, b, w, p) in enumerate(zip(src, dst, weight, provenance, strict=True), start=1):
            attrs = {} if str(p) in _PLAIN_PROVENANCE else {"provenance": str(p)}
            if not np.isnan(w):
                attrs["weight"] = float(w)
            edges.append({"edge_id": f"{rel}:{k}", "from": ids[a], "to": ids[b], "edge_type": rel, "attrs": attrs})
    return edges


def _sample_attrs(graph: StudyGraph, left_out: set[str]) -> list[dict[str, Any]]:
    """splitGraph's sample attributes: the metadata id of each single-target relation."""
    keys = graph.key_values
    n = graph.count(NodeType.SAMPLE)
    attrs: list[dict[str, Any]] = [{} for _ in range(n)]
    for rel in RELATIONS:
        if not rel.single_target or rel.name in left_out or not graph.has_relation(rel.name):
            continue
        target = graph.sample_targets(rel.name)
        values = np.where(target >= 0, keys[np.maximum(target, 0)], None)
        for i, value in enumerate(values.tolist()):
            attrs[i][rel.column] = value
    return attrs


def _plain(value: Any) -> Any:
    if isinstance(value, np.generic):
        value = value.item()
    if isinstance(value, float) and value.is_integer():
        return int(value)
    return value


def _r_json(doc: dict[str, Any]) -> bytes:
    return orjson.dumps(doc, option=orjson.OPT_INDENT_2) + b"\n"


def write_splitgraph_spec(spec: SplitSpec, path: str | os.PathLike[str]) -> None:
    """Write ``spec`` as splitGraph ``split_spec`` JSON, atomically."""
    atomic_write_bytes(path, _r_json(spec_to_splitgraph(spec)))


def write_splitgraph_graph(
    graph: StudyGraph, path: str | os.PathLike[str], splitgraph_version: str = DEFAULT_SPLITGRAPH_VERSION
) -> list[str]:
    """Write ``graph`` as splitGraph ``dependency_graph`` JSON, atomically; returns what was left out."""
    doc, notes = graph_to_splitgraph(graph, splitgraph_version)
    atomic_write_bytes(path, _r_json(doc))
    return notes
