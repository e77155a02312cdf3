"""StudyGraph: the typed, columnar, immutable declaration of a study's structure — the value and its queries.

A StudyGraph holds:

* ``nodes`` — one row per entity, columns ``type`` (a :class:`~depgraph.vocab.NodeType`
  value) and ``key`` (its identifier as text, an Arrow-backed column: a
  million keys are never a million Python objects). Rows are sorted by type
  (in vocabulary order) and then by key (byte order), so every type occupies
  one contiguous block and node positions do not depend on the order rows
  were declared in. Per-node attributes (``time_index`` of timepoints, extra
  metadata columns of samples) live in ``attributes``, a frame aligned with
  ``nodes``.
* ``relations`` — one :class:`~depgraph.graph.pieces.RelationEdges` block per relation that has
  edges, in vocabulary order: ``src`` and ``dst`` (integer node positions,
  sorted by ``src`` then ``dst``; undirected relations stored once with
  ``src < dst``), ``weight`` (kinship, distance, similarity; none when the
  relation carries none) and the provenance of each edge (which builder
  declared it: ``metadata``, ``kinship:pairs``...). Adding edges of one
  relation rebuilds that block only. :attr:`StudyGraph.edges` shows every
  block as one table (``src, dst, relation, weight, provenance``).

The class holds no algorithms and never calls its builders (as networkx keeps its graph classes): graphs are
built by :mod:`depgraph.ingest` (``from_metadata``, ``add_kinship``...), assembled from pieces by
:mod:`depgraph.graph.assembly`, and read and written by :mod:`depgraph.graph.files`. Builders never modify a
graph; each returns a new one. The engine works on integer positions (numpy/scipy); :meth:`StudyGraph.to_networkx`
is the view for drawing and path queries on small graphs.

>>> import pandas as pd
>>> from depgraph import from_metadata
>>> g = from_metadata(pd.DataFrame({"sample_id": ["S2", "S1"], "subject_id": ["P1", "P1"]}))
>>> g
StudyGraph(3 nodes: 2 Sample, 1 Subject; 2 edges: 2 sample_belongs_to_subject)
>>> g.node_ids.tolist()
['sample:S1', 'sample:S2', 'subject:P1']
"""

from __future__ import annotations

import math
from collections.abc import Hashable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc

from depgraph.common.arguments import instance
from depgraph.common.arrays import packed_keys, text_array
from depgraph.errors import DepgraphError, describe_ids
from depgraph.graph.pieces import RelationEdges
from depgraph.io.jsoncolumns import plain_json
from depgraph.vocab import NODE_TYPE_BY_PREFIX, NODE_TYPES, RELATION, RELATION_NAMES, NodeType

if TYPE_CHECKING:  # pragma: no cover
    import networkx as nx


#: The ``type`` column of a node table: node types in vocabulary order.
NODE_TYPE_DTYPE = pd.CategoricalDtype([t.value for t in NODE_TYPES], ordered=True)
#: The ``relation`` column of an edge table: relations in vocabulary order.
RELATION_DTYPE = pd.CategoricalDtype(list(RELATION_NAMES), ordered=True)
_RELATION_RANK = {name: i for i, name in enumerate(RELATION_NAMES)}


@dataclass(eq=False, repr=False)
class GraphCache:
    """Memoised results of pure functions of a graph's value, kept with the graph so that the next caller does not
    compute them again. Never part of the value: excluded from equality, from ``repr`` and from
    :meth:`StudyGraph.equals`; every entry can be dropped at any time and would be computed again, the same.

    ``nodes`` holds functions of the node table alone (type offsets, key arrays, the key index of a type, the last
    key array located per type): a graph made from another with the same nodes (other edges, overrides or
    history) shares it, so adding edges never rebuilds them. ``results`` holds functions of the whole graph
    (the edge table, component labels over some relations, which :mod:`depgraph.derivation.groups` keeps here):
    each graph has its own. An entry is written once and never changed (shared arrays are read-only).

    >>> cache = GraphCache()
    >>> cache.sharing_nodes().nodes is cache.nodes, cache.sharing_nodes().results is cache.results
    (True, False)
    """

    nodes: dict[Hashable, Any] = field(default_factory=dict)
    results: dict[Hashable, Any] = field(default_factory=dict)

    def sharing_nodes(self) -> GraphCache:
        """A cache for a graph with the same node table: node lookups shared, whole-graph results fresh."""
        return GraphCache(self.nodes)


# --------------------------------------------------------------------------- the graph
@dataclass(frozen=True, eq=False, repr=False)
class StudyGraph:
    """A validated-shape, immutable study declaration. Build it with
    :func:`~depgraph.ingest.metadata.from_metadata` and the ``add_*`` functions of
    :mod:`depgraph.ingest.builders` (``add_kinship(graph, ...)``), or read it with
    :func:`~depgraph.graph.files.read_graph`.

    Parameters
    ----------
    nodes, attributes, relations:
        The columnar tables and edge blocks described in the module
        docstring. Construct graphs through the builders (or
        :meth:`from_tables` for a hand-made one); they keep the sort and
        uniqueness invariants this class relies on.
    name:
        A label for reports.
    overrides:
        Validation/derivation overrides (``allow_multi_subject_samples``).
    history:
        The build steps that produced the graph, with their parameters
        (thresholds, radii, sources, counts).
    cache:
        Memoised results of pure functions of the value (:class:`GraphCache`); not part of the value. Builders
        pass ``graph.cache.sharing_nodes()`` to a graph with the same nodes; otherwise leave it out.
    """

    nodes: pd.DataFrame
    attributes: pd.DataFrame
    relations: Mapping[str, RelationEdges]
    name: str | None = None
    overrides: Mapping[str, Any] = field(default_factory=dict)
    history: tuple[Mapping[str, Any], ...] = ()
    # memoised results of pure functions of this value (see GraphCache): not part of the value
    cache: GraphCache = field(default_factory=GraphCache, compare=False, repr=False)

    @classmethod
    def from_tables(
        cls,
        nodes: pd.DataFrame,
        attributes: pd.DataFrame,
        edges: pd.DataFrame,
        name: str | None = None,
        overrides: Mapping[str, Any] | None = None,
        history: Sequence[Mapping[str, Any]] = (),
    ) -> StudyGraph:
        """A graph from an edge table as given (``src, dst, relation, weight,
        provenance``), without sorting or de-duplicating it — for graphs made by
        hand, which :func:`~depgraph.validation.rules.validate` then inspects (dangling
        positions, repeated nodes or edges, wrong signatures are its findings).

        What the tables cannot mean is refused (``invalid_argument``): tables
        that are not DataFrames or lack a column, node types and relations
        outside the vocabulary (they would be dropped without a word), edge
        positions that are not integers, an attribute table not aligned with
        the nodes, overrides or history that a graph file could not hold.
        """
        instance(nodes, pd.DataFrame, "from_tables: nodes")
        instance(attributes, pd.DataFrame, "from_tables: attributes")
        instance(edges, pd.DataFrame, "from_tables: edges")
        for table, columns in (
            ("nodes", ("type", "key")),
            ("edges", ("src", "dst", "relation", "weight", "provenance")),
        ):
            missing = [c for c in columns if c not in {"nodes": nodes, "edges": edges}[table].columns]
            if missing:
                raise DepgraphError(
                    "invalid_argument", f"from_tables: {table} lacks the column(s) {describe_ids(missing)}"
                )
        _refuse_outside(nodes["type"], [t.value for t in NODE_TYPES], "node type")
        _refuse_outside(edges["relation"], list(RELATION_NAMES), "relation")
        types = pd.Categorical(nodes["type"].astype(str), dtype=NODE_TYPE_DTYPE)
        for column in ("src", "dst"):
            if len(edges) and not pd.api.types.is_integer_dtype(edges[column].dtype):
                raise DepgraphError(
                    "invalid_argument",
                    f"from_tables: edges.{column} holds {edges[column].dtype} values, not node positions (integers)",
                )
        if len(attributes) != len(nodes):
            raise DepgraphError(
                "invalid_argument",
                f"from_tables: attributes has {len(attributes)} rows for {len(nodes)} nodes (one row per node)",
            )
        nodes = nodes.assign(type=types)
        return cls(nodes, attributes, _blocks_of(edges), *checked_envelope(name, overrides, history))

    # ---- sizes and lookups -------------------------------------------------------
    @property
    def n_nodes(self) -> int:
        return len(self.nodes)

    @property
    def n_edges(self) -> int:
        return sum(len(block.src) for block in self.relations.values())

    @property
    def _type_offsets(self) -> np.ndarray:
        offsets = self.cache.nodes.get("type_offsets")
        if offsets is None:
            codes = self.nodes["type"].cat.codes.to_numpy()
            offsets = np.searchsorted(codes, np.arange(len(NODE_TYPES) + 1), side="left")
            self.cache.nodes["type_offsets"] = offsets
        return offsets

    def type_range(self, node_type: NodeType | str) -> tuple[int, int]:
        """``(start, stop)`` positions of the nodes of one type."""
        rank = node_type_named(node_type).rank
        off = self._type_offsets
        return int(off[rank]), int(off[rank + 1])

    def count(self, node_type: NodeType | str) -> int:
        start, stop = self.type_range(node_type)
        return stop - start

    def keys(self, node_type: NodeType | str) -> pd.Index:
        """Sorted keys of one node type, as an index for fast lookups."""
        return self._key_index(node_type_named(node_type))

    @property
    def key_values(self) -> np.ndarray:
        """Every node's key as a Python string, in node order (built once per node table)."""
        values = self.cache.nodes.get("key_values")
        if values is None:
            values = self.nodes["key"].to_numpy(dtype=object)
            self.cache.nodes["key_values"] = values
        return values

    @property
    def key_array(self) -> pa.Array:
        """Every node's key as one Arrow string array, in node order."""
        keys = self.cache.nodes.get("key_array")
        if keys is None:
            keys = self.cache.nodes["key_array"] = text_array(self.nodes["key"])
        return keys

    def _key_index(self, node_type: NodeType) -> pd.Index:
        index = self.cache.nodes.get(node_type)
        if index is None:
            start, stop = self.type_range(node_type)
            cached = self.cache.nodes.get("key_values")
            keys = cached[start:stop] if cached is not None else self.nodes["key"].iloc[start:stop].to_numpy(object)
            index = pd.Index(keys, dtype=object, name=node_type.value)
            self.cache.nodes[node_type] = index
        return index

    def holds_samples(self, ids: list[str]) -> bool:
        """Whether any of ``ids`` is a sample's key."""
        return bool((self.locate(NodeType.SAMPLE, ids) >= 0).any())

    def locate(self, node_type: NodeType | str, keys: Iterable[Any]) -> np.ndarray:
        """Node positions of ``keys`` of one type; ``-1`` where a key is unknown (or missing).

        Short ASCII keys (up to 8 bytes, most study ids) are found by binary
        search over the type's sorted keys packed as integers; others are
        matched in Arrow, each distinct key once. The last Arrow array located
        per type is remembered, so a builder that checks a vocabulary before
        adding its edges does not look it up twice.
        """
        node_type = node_type_named(node_type)
        if isinstance(keys, (str, bytes)) or not isinstance(
            keys, (list, tuple, np.ndarray, pd.Series, pd.Index, pa.Array, pa.ChunkedArray)
        ):
            raise DepgraphError("invalid_argument", f"locate takes a list or array of keys, not {type(keys).__name__}")
        memo = self.cache.nodes.get(("located", node_type))
        if memo is not None and memo[0] is keys:
            return memo[1]
        start, stop = self.type_range(node_type)
        wanted = text_array(keys)
        if (
            len(wanted) == stop - start
            and len(wanted)
            and not wanted.null_count
            and pc.all(pc.equal(wanted, self.key_array.slice(start, len(wanted)))).as_py()
        ):
            positions = np.arange(start, stop, dtype=np.int64)  # every key of the type, in node order (a file's list)
            if isinstance(keys, pa.Array):
                self.cache.nodes[("located", node_type)] = (keys, positions)
            return positions
        own = self._packed_keys(node_type)
        query = packed_keys(wanted) if own is not None and len(own) else None
        if query is not None:
            at = np.minimum(np.searchsorted(own, query), len(own) - 1)
            positions = np.where(own[at] == query, at + start, -1).astype(np.int64)
        else:
            encoded = wanted.dictionary_encode()
            found = pc.index_in(encoded.dictionary, value_set=self.key_array.slice(start, stop - start))
            found = found.fill_null(-1).to_numpy(zero_copy_only=False)
            found = np.where(found >= 0, found.astype(np.int64) + start, -1)
            # a missing key has a null code: -1 picks the appended "unknown"
            positions = np.append(found, -1)[encoded.indices.fill_null(-1).to_numpy(zero_copy_only=False)]
        if isinstance(keys, pa.Array):
            self.cache.nodes[("located", node_type)] = (keys, positions)
        return positions

    def _packed_keys(self, node_type: NodeType) -> np.ndarray | None:
        """The type's keys packed as rising integers, or None (long or non-ASCII keys, or a hand-made,
        unsorted node table)."""
        if ("packed", node_type) not in self.cache.nodes:
            start, stop = self.type_range(node_type)
            packed = packed_keys(self.key_array.slice(start, stop - start))
            if packed is not None and not (packed[1:] > packed[:-1]).all():
                packed = None
            self.cache.nodes[("packed", node_type)] = packed
        return self.cache.nodes[("packed", node_type)]

    @property
    def sample_ids(self) -> np.ndarray:
        """Sample keys in node order (sorted)."""
        start, stop = self.type_range(NodeType.SAMPLE)
        return self.key_values[start:stop]

    @property
    def node_ids(self) -> pd.Series:
        """``"<prefix>:<key>"`` ids of all nodes, in node order."""
        prefix = self.nodes["type"].map({t.value: t.prefix + ":" for t in NODE_TYPES}).astype(object)
        return (prefix + pd.Series(self.key_values, index=self.nodes.index, dtype=object)).rename("node_id")

    @property
    def edges(self) -> pd.DataFrame:
        """All edges as one table (``src, dst, relation, weight, provenance``),
        sorted by relation, then ``src``, then ``dst``. Built on first use (and kept in :attr:`cache`); the
        engine reads :attr:`relations` directly."""
        table = self.cache.results.get("edges")
        if table is None:
            table = self.cache.results["edges"] = _edge_table(self.relations)
        return table

    def relation_slice(self, relation: str) -> slice:
        """Rows of :attr:`edges` that hold one relation (edges are sorted by relation)."""
        if relation not in RELATION:
            raise DepgraphError("invalid_argument", f"unknown relation {relation!r}")
        start = 0
        for name, block in self.relations.items():
            if name == relation:
                return slice(start, start + len(block.src))
            if _RELATION_RANK[name] > _RELATION_RANK[relation]:
                break
            start += len(block.src)
        return slice(start, start)

    def relation_edges(self, relation: str) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """``(src, dst, weight)`` position arrays of one relation."""
        if relation not in RELATION:
            raise DepgraphError("invalid_argument", f"unknown relation {relation!r}")
        block = self.relations.get(relation)
        if block is None:
            empty = np.array([], dtype=np.int64)
            return empty, empty, np.array([], dtype=np.float64)
        return block.src, block.dst, block.weights()

    def sample_targets(self, relation: str) -> np.ndarray:
        """Position of each sample's target of a sample relation (the
        smallest, if several), ``-1`` where it has none; one entry per sample."""
        start, stop = self.type_range(NodeType.SAMPLE)
        src, dst, _ = self.relation_edges(relation)
        target = np.full(stop - start, -1, dtype=np.int64)
        first = np.ones(len(src), dtype=bool)
        first[1:] = src[1:] != src[:-1]  # sorted by (src, dst): first edge = smallest target
        target[src[first] - start] = dst[first]
        return target

    def has_relation(self, relation: str) -> bool:
        return len(self.relation_edges(relation)[0]) > 0

    def type_counts(self) -> dict[str, int]:
        return {t.value: self.count(t) for t in NODE_TYPES if self.count(t)}

    def relation_counts(self) -> dict[str, int]:
        return {name: len(block.src) for name, block in self.relations.items() if len(block.src)}

    def __repr__(self) -> str:
        types = ", ".join(f"{n} {t}" for t, n in self.type_counts().items())
        rels = ", ".join(f"{n} {r}" for r, n in self.relation_counts().items())
        label = f"{self.name!r}, " if self.name else ""
        return f"StudyGraph({label}{self.n_nodes} nodes: {types or 'none'}; {self.n_edges} edges: {rels or 'none'})"

    def equals(self, other: StudyGraph) -> bool:
        """Same nodes, attributes, edges, name, overrides and history."""
        return (
            isinstance(other, StudyGraph)
            and self.nodes.equals(other.nodes)
            and _frames_equal(self.attributes, other.attributes)
            and self.edges.equals(other.edges)
            and self.name == other.name
            and dict(self.overrides) == dict(other.overrides)
            and list(map(dict, self.history)) == list(map(dict, other.history))
        )

    # ---- builders (each returns a new graph) ------------------------------------
    def with_overrides(self, **overrides: Any) -> StudyGraph:
        """A copy with validation/derivation overrides set.

        Only ``True`` and ``False`` set an override: any other value (the
        string ``"false"``, ``0``, ``None``) is refused (``invalid_value``),
        never read as true.

        >>> import pandas as pd
        >>> from depgraph import from_metadata
        >>> g = from_metadata(pd.DataFrame({"sample_id": ["S1"]}))
        >>> dict(g.with_overrides(allow_multi_subject_samples=True).overrides)
        {'allow_multi_subject_samples': True}
        """
        unknown = set(overrides) - KNOWN_OVERRIDES
        if unknown:
            raise DepgraphError(
                "invalid_argument",
                f"unknown override(s) {describe_ids(sorted(unknown))}; known: {describe_ids(sorted(KNOWN_OVERRIDES))}",
            )
        merged = {**self.overrides, **checked_overrides(overrides, "invalid_value", "override")}
        return StudyGraph(
            self.nodes,
            self.attributes,
            self.relations,
            self.name,
            _frozen(merged),
            self.history,
            self.cache.sharing_nodes(),
        )

    # ---- views ---------------------------------------------------------------------
    def to_networkx(self) -> nx.MultiDiGraph:
        """The graph as a networkx MultiDiGraph, for drawing and path queries.

        Nodes are ``"<prefix>:<key>"`` ids with ``type``, ``key`` and attribute
        data; edges carry ``relation``, ``weight`` (when set), ``provenance``
        and ``directed``. Undirected relations appear once, ``src -> dst``
        with ``directed=False``. Meant for small graphs: the engine itself
        never goes through networkx.
        """
        import networkx as nx

        out = nx.MultiDiGraph(name=self.name or "")
        ids = self.node_ids.to_numpy()
        attrs = self.attributes
        for pos, (node_id, node_type, key) in enumerate(zip(ids, self.nodes["type"], self.nodes["key"], strict=True)):
            data: dict[str, Any] = {"type": node_type, "key": key}
            for col in attrs.columns:
                value = attrs[col].iat[pos]
                if not is_missing(value):
                    data[col] = value.item() if isinstance(value, np.generic) else value
            out.add_node(node_id, **data)
        e = self.edges
        for src, dst, rel, weight, prov in zip(
            e["src"], e["dst"], e["relation"], e["weight"], e["provenance"], strict=False
        ):
            data = {"relation": rel, "provenance": prov, "directed": RELATION[rel].directed}
            if not math.isnan(weight):
                data["weight"] = float(weight)
            out.add_edge(ids[src], ids[dst], key=rel, **data)
        return out


#: Node attributes whose values the stages compute with: each must be a finite number, or missing.
NUMERIC_ATTRIBUTES: frozenset[tuple[NodeType, str]] = frozenset({(NodeType.TIMEPOINT, "time_index")})


def check_numeric_attributes(node_type: NodeType, frame: pd.DataFrame | None, keys: Any, where: str) -> None:
    """Refuse (``schema``, naming the node and the value) an attribute of :data:`NUMERIC_ATTRIBUTES` that holds text
    or a non-finite number: a graph file edited by hand would otherwise fail deep in validation or derivation.

    >>> check_numeric_attributes(NodeType.TIMEPOINT, pd.DataFrame({"time_index": [0, "late"]}), ["T0", "T1"], "g")
    Traceback (most recent call last):
    ...
    depgraph.errors.DepgraphError: [schema] g: Timepoint 'T1' has time_index 'late'; a time_index is a number
    """
    if frame is None:
        return
    for column in frame.columns:
        if (node_type, column) not in NUMERIC_ATTRIBUTES:
            continue
        values = frame[column]
        numbers = pd.to_numeric(values, errors="coerce").to_numpy(dtype=np.float64)
        bad = (~values.isna().to_numpy() & np.isnan(numbers)) | np.isinf(numbers)
        if bool(values.map(lambda v: isinstance(v, bool)).any()):
            bad |= values.map(lambda v: isinstance(v, bool)).to_numpy()
        if bad.any():
            i = int(np.flatnonzero(bad)[0])
            raise DepgraphError(
                "schema",
                f"{where}: {node_type.value} {str(keys[i])!r} has {column} {values.iloc[i]!r}; a {column} is a number",
            )


KNOWN_OVERRIDES: frozenset[str] = frozenset({"allow_multi_subject_samples"})
_JSON_KINDS = {str: "string", int: "number", float: "number", type(None): "null", list: "list", dict: "object"}


def checked_overrides(overrides: Mapping[str, Any], code: str, where: str) -> dict[str, bool]:
    """``overrides`` whose values are all booleans (numpy's too), as plain bools;
    any other value is a ``code`` error naming the override and the value.

    A string ``"false"`` is true to Python: reading it as a boolean would turn an
    override on that the file says is off, so it is refused instead.

    >>> checked_overrides({"allow_multi_subject_samples": False}, "schema", "override")
    {'allow_multi_subject_samples': False}
    """
    bad = {k: v for k, v in overrides.items() if not isinstance(v, (bool, np.bool_))}
    if bad:
        name, value = next(iter(bad.items()))
        kind = _JSON_KINDS.get(type(value), type(value).__name__)
        raise DepgraphError(
            code,
            f"{where} {name} is {value!r} ({kind}): an override is true or false (a boolean), "
            "never a string, number or null",
            override=name,
            value=value,
        )
    return {k: bool(v) for k, v in overrides.items()}


def checked_envelope(
    name: Any, overrides: Mapping[str, Any] | None, history: Sequence[Mapping[str, Any]]
) -> tuple[str | None, dict[str, bool], tuple[dict[str, Any], ...]]:
    """A graph's name, overrides and history, checked as a graph file's are (``invalid_argument`` naming the
    first that is not: a name that is not text, an unknown override or one that is not a boolean, a history
    step that is not an object of JSON data)."""
    instance(name, (str, type(None)), "the graph name")
    overrides = {} if overrides is None else instance(overrides, Mapping, "overrides")
    unknown = sorted(set(overrides) - KNOWN_OVERRIDES)
    if unknown:
        raise DepgraphError(
            "invalid_argument",
            f"unknown override(s) {describe_ids(unknown)}; known: {describe_ids(sorted(KNOWN_OVERRIDES))}",
        )
    if isinstance(history, (str, bytes, Mapping)) or not isinstance(history, (list, tuple)):
        raise DepgraphError(
            "invalid_argument", f"history must be a list of steps (objects), not {type(history).__name__}"
        )
    steps = []
    for i, step in enumerate(history):
        instance(step, Mapping, f"history[{i}]")
        try:
            steps.append(plain_json(dict(step), f"history[{i}]"))
        except ValueError as exc:
            raise DepgraphError("invalid_argument", str(exc)) from None
    return name, checked_overrides(overrides, "invalid_value", "override"), tuple(steps)


def _refuse_outside(given: pd.Series, vocabulary: list[str], what: str) -> None:
    """Values outside the vocabulary are refused by name, never turned into missing values and dropped."""
    outside = ~given.astype(object).isin(vocabulary).to_numpy()
    if outside.any():
        shown = describe_ids(pd.unique(given[outside].astype(str)))
        raise DepgraphError(
            "invalid_argument", f"from_tables: {shown} is not a {what} ({what}s: {describe_ids(vocabulary, 30)})"
        )


def _empty_edges() -> pd.DataFrame:
    return pd.DataFrame(
        {
            "src": pd.Series([], dtype=np.int64),
            "dst": pd.Series([], dtype=np.int64),
            "relation": pd.Categorical([], dtype=RELATION_DTYPE),
            "weight": pd.Series([], dtype=np.float64),
            "provenance": pd.Categorical([], categories=[]),
        }
    )


def _blocks_of(edges: pd.DataFrame) -> dict[str, RelationEdges]:
    """An edge table, as given, as one block per relation (rows keep their order)."""
    codes = pd.Categorical(edges["relation"], dtype=RELATION_DTYPE).codes.astype(np.int64)
    order = np.argsort(codes, kind="stable")
    bounds = np.searchsorted(codes[order], np.arange(len(RELATION_NAMES) + 1))
    provenance = pd.Categorical(edges["provenance"].astype(str))
    labels = tuple(str(c) for c in provenance.categories)
    label_codes = provenance.codes.astype(np.int64)
    src, dst = edges["src"].to_numpy(np.int64), edges["dst"].to_numpy(np.int64)
    weights = edges["weight"].to_numpy(np.float64)
    blocks = {}
    for r, name in enumerate(RELATION_NAMES):
        rows = order[bounds[r] : bounds[r + 1]]
        if len(rows):
            weight = weights[rows]
            blocks[name] = RelationEdges(
                name, src[rows], dst[rows], None if np.isnan(weight).all() else weight, labels, label_codes[rows]
            )
    return blocks


def _edge_table(relations: Mapping[str, RelationEdges]) -> pd.DataFrame:
    """The blocks of every relation as one edge table (see :attr:`StudyGraph.edges`)."""
    if not relations:
        return _empty_edges()
    labels = sorted({label for block in relations.values() for label in block.labels})
    rank = {label: i for i, label in enumerate(labels)}
    blocks = list(relations.values())
    return pd.DataFrame(
        {
            "src": np.concatenate([b.src for b in blocks]).astype(np.int64, copy=False),
            "dst": np.concatenate([b.dst for b in blocks]).astype(np.int64, copy=False),
            "relation": pd.Categorical.from_codes(
                np.concatenate([np.full(len(b.src), _RELATION_RANK[b.relation], dtype=np.int16) for b in blocks]),
                dtype=RELATION_DTYPE,
            ),
            "weight": np.concatenate([b.weights() for b in blocks]),
            "provenance": pd.Categorical.from_codes(
                np.concatenate([np.array([rank[x] for x in b.labels], dtype=np.int64)[b.codes()] for b in blocks]),
                categories=labels,
            ),
        }
    )


def is_missing(value: Any) -> bool:
    """Whether an attribute value is missing (None, pandas' NA, NaN).

    >>> is_missing(float("nan")), is_missing(0)
    (True, False)
    """
    return value is None or value is pd.NA or (isinstance(value, float) and math.isnan(value))


def _frames_equal(a: pd.DataFrame, b: pd.DataFrame) -> bool:
    if list(a.columns) != list(b.columns) or len(a) != len(b):
        return False
    return all(
        a[c].astype(object).where(a[c].notna(), None).tolist() == b[c].astype(object).where(b[c].notna(), None).tolist()
        for c in a.columns
    )


def _frozen(mapping: Mapping[str, Any]) -> dict[str, Any]:
    # a private copy: callers' dicts never alias a graph's (graphs stay picklable)
    return dict(mapping)


def node_type_named(value: Any) -> NodeType:
    """The node type ``value`` names (a NodeType or its name, ``"Sample"``), else ``invalid_argument``.

    >>> node_type_named("Subject")
    <NodeType.SUBJECT: 'Subject'>
    """
    try:
        return NodeType(value)
    except ValueError:
        raise DepgraphError(
            "invalid_argument",
            f"{value!r} is not a node type (types: {describe_ids([t.value for t in NODE_TYPES], 20)})",
        ) from None


def node_type_of(node_id: str) -> NodeType:
    """The type named by a node id's prefix.

    >>> node_type_of("featureset:FS1")
    <NodeType.FEATURESET: 'FeatureSet'>
    """
    prefix = node_id.split(":", 1)[0]
    if prefix not in NODE_TYPE_BY_PREFIX or ":" not in node_id:
        raise DepgraphError("invalid_argument", f"{node_id!r} is not a '<type>:<key>' node id")
    return NODE_TYPE_BY_PREFIX[prefix]
