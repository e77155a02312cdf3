"""StudyGraph: the typed, columnar, immutable declaration of a study's structure.

A StudyGraph holds:

* ``nodes`` — one row per entity, columns ``type`` (a :class:`~depgraph.vocab.NodeType`
  value) and ``key`` (its identifier as text, an Arrow-backed column: a
  million keys are never a million Python objects). Rows are sorted by type
  (in vocabulary order) and then by key (byte order), so every type occupies
  one contiguous block and node positions do not depend on the order rows
  were declared in. Per-node attributes (``time_index`` of timepoints, extra
  metadata columns of samples) live in ``attributes``, a frame aligned with
  ``nodes``.
* ``relations`` — one :class:`RelationEdges` block per relation that has
  edges, in vocabulary order: ``src`` and ``dst`` (integer node positions,
  sorted by ``src`` then ``dst``; undirected relations stored once with
  ``src < dst``), ``weight`` (kinship, distance, similarity; none when the
  relation carries none) and the provenance of each edge (which builder
  declared it: ``metadata``, ``kinship:pairs``...). Adding edges of one
  relation rebuilds that block only. :attr:`StudyGraph.edges` shows every
  block as one table (``src, dst, relation, weight, provenance``).

Builders never modify a graph; each returns a new one. The engine works on
integer positions (numpy/scipy); :meth:`StudyGraph.to_networkx` is the view for
drawing and path queries on small graphs.

>>> import pandas as pd
>>> from depgraph import from_metadata
>>> g = from_metadata(pd.DataFrame({"sample_id": ["S2", "S1"], "subject_id": ["P1", "P1"]}))
>>> g
StudyGraph(3 nodes: 2 Sample, 1 Subject; 2 edges: 2 sample_belongs_to_subject)
>>> g.node_ids.tolist()
['sample:S1', 'sample:S2', 'subject:P1']
"""

from __future__ import annotations

import functools
import inspect
import math
import os
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np
import orjson
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc

from depgraph.common.arguments import instance
from depgraph.common.arrays import distinct, packed_keys, sorted_codes
from depgraph.errors import DepgraphError, describe_ids
from depgraph.formats import GRAPH_FORMAT, GRAPH_FORMAT_VERSION
from depgraph.io.files import atomic_write_bytes, read_json
from depgraph.io.jsoncolumns import numbers, plain_json, scalars, strings
from depgraph.vocab import NODE_TYPE_BY_PREFIX, NODE_TYPES, RELATION, RELATION_NAMES, NodeType

if TYPE_CHECKING:  # pragma: no cover
    import networkx as nx


_TYPE_CATEGORIES = pd.CategoricalDtype([t.value for t in NODE_TYPES], ordered=True)
_RELATION_CATEGORIES = pd.CategoricalDtype(list(RELATION_NAMES), ordered=True)
_RELATION_RANK = {name: i for i, name in enumerate(RELATION_NAMES)}


# --------------------------------------------------------------------------- pieces
def text_array(values: Any) -> pa.Array:
    """Key values (text, no missing value) as one Arrow string array, without
    a round trip through Python objects when they already live in Arrow.

    >>> text_array(pd.Series(["b", "a"])).to_pylist()
    ['b', 'a']
    """
    if isinstance(values, (pd.Series, pd.Index)) and values.dtype != object:
        values = pa.array(values.array)  # pyarrow-backed text: zero copy
    if isinstance(values, pa.ChunkedArray):
        values = values.combine_chunks() if values.num_chunks != 1 else values.chunk(0)
    if isinstance(values, pa.Array):
        if pa.types.is_dictionary(values.type):
            values = values.dictionary_decode()
        return values if values.type == pa.string() else values.cast(pa.string())
    objects = np.asarray(values, dtype=object)
    try:
        return pa.array(objects, type=pa.string(), from_pandas=True)
    except (pa.ArrowInvalid, pa.ArrowTypeError):
        return pa.array(objects.astype(str), type=pa.string())


#: A column whose first 10,000 ids hold more distinct ones than this is ranked by sorting;
#: fewer, and hashing is cheaper.
MANY_DISTINCT = 2_000


def many_distinct(text: pa.Array) -> bool:
    """Whether the first 10,000 keys hold more than :data:`MANY_DISTINCT` distinct ones."""
    return pc.count_distinct(text.slice(0, 10_000)).as_py() > MANY_DISTINCT


@dataclass(frozen=True)
class Keys:
    """Identifiers as integer codes into a vocabulary of distinct keys.

    One factorisation per column: builders that share a column (every
    sample-side edge of a metadata table) share its vocabulary, and assembly
    maps each vocabulary to node positions once, then indexes with the codes.
    The vocabulary is an Arrow string array, so a million keys never become a
    million Python objects; ``order`` (positions of the vocabulary in sorted
    order), when a builder already sorted it, spares assembly a second sort.

    >>> k = Keys.of(["b", "a", "b"])
    >>> k.codes.tolist(), k.vocab.to_pylist(), k.values().tolist()
    ([0, 1, 0], ['b', 'a'], ['b', 'a', 'b'])
    """

    codes: np.ndarray
    vocab: pa.Array
    order: np.ndarray | None = None

    @classmethod
    def of(cls, values: Any) -> Keys:
        """Factorise key values (text, no missing values)."""
        if isinstance(values, Keys):
            return values
        encoded = text_array(values).dictionary_encode()
        return cls(encoded.indices.to_numpy(zero_copy_only=False), encoded.dictionary)  # int32: half the bytes

    @classmethod
    def ranked(cls, values: Any) -> Keys:
        """Factorise by sorting: codes are ranks and the vocabulary comes sorted
        (faster than hashing when most keys are distinct; see :func:`~depgraph.common.arrays.sorted_codes`).

        >>> k = Keys.ranked(["b", "a", "b"])
        >>> k.codes.tolist(), k.vocab.to_pylist()
        ([1, 0, 1], ['a', 'b'])
        """
        text = text_array(values)
        codes, first = sorted_codes(text)
        return cls(codes, text.take(pa.array(first)), np.arange(len(first), dtype=np.int64))

    @classmethod
    def factorised(cls, values: Any) -> Keys:
        """:meth:`of` or :meth:`ranked`, whichever suits the values: ranking when
        many of the first 10,000 are distinct (subject or sample ids), hashing
        otherwise (batches, sites)."""
        text = text_array(values)
        return cls.ranked(text) if many_distinct(text) else cls.of(text)

    @classmethod
    def distinct(cls, vocab: pa.Array, order: np.ndarray | None = None) -> Keys:
        """Keys already distinct: each row is its own vocabulary entry."""
        return cls(np.arange(len(vocab), dtype=np.int64), vocab, order)

    def take(self, rows: np.ndarray) -> Keys:
        """The keys of some rows (a mask or positions), sharing the vocabulary."""
        return Keys(self.codes[rows], self.vocab, self.order)

    def values(self) -> np.ndarray:
        return self.vocab.take(pa.array(self.codes)).to_numpy(zero_copy_only=False)

    def __len__(self) -> int:
        return len(self.codes)


@dataclass(frozen=True)
class NodePiece:
    """Nodes of one type declared by a builder, with optional attributes.

    ``keys`` may repeat; ``attributes`` (if any) has one row per key.
    """

    type: NodeType
    keys: Keys
    attributes: pd.DataFrame | None = None

    def __post_init__(self) -> None:
        object.__setattr__(self, "keys", Keys.of(self.keys))


@dataclass(frozen=True)
class EdgePiece:
    """Edges of one relation declared by a builder, named by endpoint keys.

    ``source_order`` (optional) lists the rows in the sorted order of their
    sources, from a builder whose sources are distinct (a metadata column:
    one target per sample); assembly then places the edges without sorting.
    """

    relation: str
    src_keys: Keys
    dst_keys: Keys
    provenance: str
    weight: np.ndarray | None = None
    source_order: np.ndarray | None = None

    def __post_init__(self) -> None:
        object.__setattr__(self, "src_keys", Keys.of(self.src_keys))
        object.__setattr__(self, "dst_keys", Keys.of(self.dst_keys))


@dataclass(frozen=True)
class RelationEdges:
    """The edges of one relation, as node-position arrays.

    A graph keeps one block per relation (:attr:`StudyGraph.relations`):
    adding edges of one relation rebuilds that block only. Provenance is a
    tuple of labels and, per edge, a code into it (``None``: every edge has
    the first label), so no per-edge string is ever built. ``weight`` is
    ``None`` when the relation carries none.
    """

    relation: str
    src: np.ndarray
    dst: np.ndarray
    weight: np.ndarray | None
    labels: tuple[str, ...]
    label_codes: np.ndarray | None = None
    canonical: bool = False  # oriented, sorted by (src, dst) and without repeats

    def codes(self) -> np.ndarray:
        """Each edge's provenance as a position in ``labels``."""
        return np.zeros(len(self.src), dtype=np.int64) if self.label_codes is None else self.label_codes

    def weights(self) -> np.ndarray:
        """Each edge's weight, NaN where it has none."""
        return np.full(len(self.src), np.nan) if self.weight is None else self.weight


# --------------------------------------------------------------------------- the graph
@dataclass(frozen=True, eq=False, repr=False)
class StudyGraph:
    """A validated-shape, immutable study declaration. Build it with
    :func:`~depgraph.ingest.metadata.from_metadata` and the ``add_*`` methods, or read it
    with :func:`read_graph`.

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
    """

    nodes: pd.DataFrame
    attributes: pd.DataFrame
    relations: Mapping[str, RelationEdges]
    name: str | None = None
    overrides: Mapping[str, Any] = field(default_factory=dict)
    history: tuple[Mapping[str, Any], ...] = ()
    # lookups built from ``nodes`` (key index, key arrays), shared by every graph
    # derived from this one with the same nodes: adding edges never rebuilds them
    _lookups: dict[Any, Any] = field(default_factory=dict, compare=False)
    # results computed from this graph (component labels), kept for whoever asks next
    derived: dict[Any, Any] = field(default_factory=dict, compare=False, repr=False, init=False)

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
        types = pd.Categorical(nodes["type"].astype(str), dtype=_TYPE_CATEGORIES)
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
        return cls(nodes, attributes, _blocks_of(edges), *_envelope(name, overrides, history))

    # ---- sizes and lookups -------------------------------------------------------
    @property
    def n_nodes(self) -> int:
        return len(self.nodes)

    @property
    def n_edges(self) -> int:
        return sum(len(block.src) for block in self.relations.values())

    @property
    def _type_offsets(self) -> np.ndarray:
        offsets = self._lookups.get("type_offsets")
        if offsets is None:
            codes = self.nodes["type"].cat.codes.to_numpy()
            offsets = np.searchsorted(codes, np.arange(len(NODE_TYPES) + 1), side="left")
            self._lookups["type_offsets"] = offsets
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
        values = self._lookups.get("key_values")
        if values is None:
            values = self.nodes["key"].to_numpy(dtype=object)
            self._lookups["key_values"] = values
        return values

    @property
    def key_array(self) -> pa.Array:
        """Every node's key as one Arrow string array, in node order."""
        keys = self._lookups.get("key_array")
        if keys is None:
            keys = self._lookups["key_array"] = text_array(self.nodes["key"])
        return keys

    def _key_index(self, node_type: NodeType) -> pd.Index:
        index = self._lookups.get(node_type)
        if index is None:
            start, stop = self.type_range(node_type)
            cached = self._lookups.get("key_values")
            keys = cached[start:stop] if cached is not None else self.nodes["key"].iloc[start:stop].to_numpy(object)
            index = pd.Index(keys, dtype=object, name=node_type.value)
            self._lookups[node_type] = index
        return index

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
        memo = self._lookups.get(("located", node_type))
        if memo is not None and memo[0] is keys:
            return memo[1]
        start, stop = self.type_range(node_type)
        wanted = text_array(keys)
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
            self._lookups[("located", node_type)] = (keys, positions)
        return positions

    def _packed_keys(self, node_type: NodeType) -> np.ndarray | None:
        """The type's keys packed as rising integers, or None (long or non-ASCII keys, or a hand-made,
        unsorted node table)."""
        if ("packed", node_type) not in self._lookups:
            start, stop = self.type_range(node_type)
            packed = packed_keys(self.key_array.slice(start, stop - start))
            if packed is not None and not (packed[1:] > packed[:-1]).all():
                packed = None
            self._lookups[("packed", node_type)] = packed
        return self._lookups[("packed", node_type)]

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

    @functools.cached_property
    def edges(self) -> pd.DataFrame:
        """All edges as one table (``src, dst, relation, weight, provenance``),
        sorted by relation, then ``src``, then ``dst``. Built on first use; the
        engine reads :attr:`relations` directly."""
        return _edge_table(self.relations)

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
    def add_kinship(self, source: Any, threshold: float | str, **options: Any) -> StudyGraph:
        """Relate subjects whose kinship is at least ``threshold`` (inclusive).

        See :func:`depgraph.ingest.metadata.kinship_pairs` for the accepted sources
        (a pair table ``id1, id2, kinship``, or a square dense/sparse matrix
        with ``ids=``) and options. ``threshold`` may be a KING degree name:
        ``"duplicate"``, ``"first"``, ``"second"``, ``"third"``.
        """
        from depgraph.ingest.metadata import kinship_pairs

        _refuse_options(kinship_pairs, options)
        piece, record = kinship_pairs(self, source, threshold, **options)
        return self._with_edges([piece], record)

    def add_spatial(self, coords: Any, radius: float, **options: Any) -> StudyGraph:
        """Make samples within ``radius`` of each other adjacent (inclusive, KD-tree).

        See :func:`depgraph.ingest.metadata.spatial_pairs`.
        """
        from depgraph.ingest.metadata import spatial_pairs

        _refuse_options(spatial_pairs, options)
        piece, record = spatial_pairs(self, coords, radius, **options)
        return self._with_edges([piece], record)

    def add_duplicates(self, pairs: Any, **options: Any) -> StudyGraph:
        """Declare pairs of samples that are the same specimen or record.

        See :func:`depgraph.ingest.metadata.duplicate_pairs`.
        """
        from depgraph.ingest.metadata import duplicate_pairs

        _refuse_options(duplicate_pairs, options)
        piece, record = duplicate_pairs(self, pairs, **options)
        return self._with_edges([piece], record)

    def add_relations(self, pairs: Any, relation: str, **options: Any) -> StudyGraph:
        """Add explicit edges of any relation between existing nodes.

        See :func:`depgraph.ingest.metadata.explicit_pairs`.
        """
        from depgraph.ingest.metadata import explicit_pairs

        _refuse_options(explicit_pairs, options)
        piece, record = explicit_pairs(self, pairs, relation, **options)
        return self._with_edges([piece], record)

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
            self.nodes, self.attributes, self.relations, self.name, _frozen(merged), self.history, self._lookups
        )

    def _with_edges(self, pieces: Sequence[EdgePiece], record: Mapping[str, Any]) -> StudyGraph:
        relations = _canonical_edges([*self.relations.values(), *(_edge_block(self, p) for p in pieces)])
        history = (*self.history, _frozen(record))
        return StudyGraph(self.nodes, self.attributes, relations, self.name, self.overrides, history, self._lookups)

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
                if not _is_missing(value):
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

    def to_pieces(self) -> tuple[list[NodePiece], list[EdgePiece]]:
        """The graph as builder pieces (used to merge graphs)."""
        node_pieces = []
        for t in NODE_TYPES:
            start, stop = self.type_range(t)
            if stop == start:
                continue
            attrs = self.attributes.iloc[start:stop].reset_index(drop=True)
            attrs = attrs.loc[:, attrs.notna().any()] if len(attrs.columns) else None
            node_pieces.append(
                NodePiece(
                    t,
                    self.nodes["key"].iloc[start:stop].reset_index(drop=True),
                    attrs if attrs is not None and len(attrs.columns) else None,
                )
            )
        keys = self.key_values
        edge_pieces = []
        for rel, block in self.relations.items():
            codes = block.codes()
            for code in distinct(codes):
                rows = codes == code
                edge_pieces.append(
                    EdgePiece(
                        rel,
                        keys[block.src[rows]],
                        keys[block.dst[rows]],
                        block.labels[code],
                        None if block.weight is None else block.weight[rows],
                    )
                )
        return node_pieces, edge_pieces

    # ---- JSON ---------------------------------------------------------------------
    def to_json_dict(self) -> dict[str, Any]:
        """The graph as a JSON-ready dict (columnar: keys grouped by type,
        edges grouped by relation and named by endpoint keys)."""
        keys = self.key_values
        nodes: dict[str, Any] = {}
        attributes: dict[str, Any] = {}
        for t in NODE_TYPES:
            start, stop = self.type_range(t)
            if stop == start:
                continue
            nodes[t.value] = keys[start:stop].tolist()
            block = self.attributes.iloc[start:stop]
            cols = {c: _json_column(block[c]) for c in block.columns if block[c].notna().any()}
            if cols:
                attributes[t.value] = cols
        edges: dict[str, Any] = {}
        for rel, block in self.relations.items():
            entry: dict[str, Any] = {"source": keys[block.src].tolist(), "target": keys[block.dst].tolist()}
            if block.weight is not None and not np.isnan(block.weight).all():
                entry["weight"] = _json_column(pd.Series(block.weight))
            codes = block.codes()
            used = distinct(codes)
            entry["provenance"] = (
                block.labels[used[0]] if len(used) == 1 else np.asarray(block.labels, dtype=object)[codes].tolist()
            )
            edges[rel] = entry
        return {
            "format": GRAPH_FORMAT,
            "format_version": GRAPH_FORMAT_VERSION,
            "name": self.name,
            "overrides": dict(self.overrides),
            "history": [dict(h) for h in self.history],
            "nodes": nodes,
            "attributes": attributes,
            "edges": edges,
        }

    def to_json_bytes(self) -> bytes:
        return orjson.dumps(self.to_json_dict(), option=orjson.OPT_INDENT_2 | orjson.OPT_SERIALIZE_NUMPY)

    @classmethod
    def from_json_dict(cls, doc: Mapping[str, Any], source: str = "graph") -> StudyGraph:
        """Rebuild a graph written by :meth:`to_json_dict`; shape errors raise ``schema``."""
        return _graph_from_document(doc, source)


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


def _refuse_options(builder: Any, options: Mapping[str, Any]) -> None:
    """``invalid_argument`` naming an option the builder does not take (Python would raise a TypeError)."""
    taken = [n for n, p in inspect.signature(builder).parameters.items() if p.kind is inspect.Parameter.KEYWORD_ONLY]
    unknown = sorted(set(options) - set(taken))
    if unknown:
        raise DepgraphError(
            "invalid_argument", f"{describe_ids(unknown)}: not an option here (options: {describe_ids(taken, 20)})"
        )


def _envelope(
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


def write_graph(graph: StudyGraph, path: str | os.PathLike[str]) -> None:
    """Write ``graph`` as JSON to ``path`` atomically."""
    instance(graph, StudyGraph, "write_graph: the graph")
    atomic_write_bytes(path, graph.to_json_bytes())


def read_graph(path: str | os.PathLike[str]) -> StudyGraph:
    """Read a graph written by :func:`write_graph`."""
    doc = read_json(path, "graph file")
    return _graph_from_document(doc, f"graph file {str(path)!r}")


def combine(first: StudyGraph, second: StudyGraph, *more: StudyGraph, name: str | None = None) -> StudyGraph:
    """Merge declarations of overlapping cohorts into one graph.

    The same node id is the same entity. Edges are united (an edge declared
    twice is kept once, with the larger weight). Conflicting declarations are
    errors that name them: a node attribute with two values, or a sample given
    two targets of a single-target relation (two subjects, two batches...)
    unless ``allow_multi_subject_samples`` is set for subjects.

    >>> import pandas as pd
    >>> from depgraph import from_metadata
    >>> a = from_metadata(pd.DataFrame({"sample_id": ["S1", "S2"], "subject_id": ["P1", "P2"]}))
    >>> b = from_metadata(pd.DataFrame({"sample_id": ["S2", "S3"], "subject_id": ["P2", "P3"]}))
    >>> combine(a, b).sample_ids.tolist()
    ['S1', 'S2', 'S3']
    """
    graphs = (first, second, *more)
    for i, g in enumerate(graphs):
        instance(g, StudyGraph, f"combine: graph {i + 1}")
    node_pieces: list[NodePiece] = []
    edge_pieces: list[EdgePiece] = []
    overrides: dict[str, Any] = {}
    history: list[Mapping[str, Any]] = []
    for g in graphs:
        n, e = g.to_pieces()
        node_pieces += n
        edge_pieces += e
        overrides.update({k: v for k, v in g.overrides.items() if v})
        history += list(g.history)
    history.append({"step": "combine", "graphs": len(graphs)})
    merged = assemble(node_pieces, edge_pieces, name=name or first.name, overrides=overrides, history=history)
    _refuse_conflicting_assignments(merged)
    return merged


# --------------------------------------------------------------------------- assembly
def assemble(
    node_pieces: Sequence[NodePiece],
    edge_pieces: Sequence[EdgePiece],
    *,
    name: str | None = None,
    overrides: Mapping[str, Any] | None = None,
    history: Sequence[Mapping[str, Any]] = (),
) -> StudyGraph:
    """Build a graph from builder pieces: one factorisation and one sort per type.

    Node keys are de-duplicated and sorted per type; a node declared twice with
    different values of one attribute is an ``ambiguity`` error. Edge endpoints
    must name declared nodes (``reference`` error otherwise).
    """
    key_blocks: list[pa.Array] = []
    type_blocks: list[np.ndarray] = []
    attr_blocks: list[pd.DataFrame] = []
    placed: dict[int, tuple[NodeType, np.ndarray]] = {}  # id(vocab) -> type, node position of each entry
    start = 0
    for t in NODE_TYPES:
        pieces = [p for p in node_pieces if p.type == t]
        if not pieces:
            continue
        vocabs = {id(p.keys.vocab): p.keys for p in pieces}
        used = {v: np.zeros(len(k.vocab), dtype=bool) for v, k in vocabs.items()}
        for p in pieces:
            used[id(p.keys.vocab)][p.keys.codes] = True
        first = next(iter(vocabs.values()))
        single = len(vocabs) == 1 and bool(used[id(first.vocab)].all())  # the usual case: one column, all used
        if single:  # a vocabulary holds distinct keys: its entries are the nodes themselves
            uniques = first.vocab
            order = first.order if first.order is not None else _sort_order(uniques)
        else:
            kept = [k.vocab.filter(pa.array(used[v])) for v, k in vocabs.items()]
            uniques = pc.unique(pa.concat_arrays(kept))
            order = _sort_order(uniques)
        rank = np.empty(len(uniques), dtype=np.int64)
        rank[order] = np.arange(len(uniques))
        if single:
            placed[id(first.vocab)] = (t, start + rank)
        else:
            for k in vocabs.values():  # vocabularies are small next to the rows that use them
                found = pc.index_in(k.vocab, value_set=uniques).fill_null(-1).to_numpy(zero_copy_only=False)
                placed[id(k.vocab)] = (t, np.where(found >= 0, start + rank[np.maximum(found, 0)], -1))
        key_blocks.append(uniques.take(pa.array(order)))
        type_blocks.append(np.full(len(uniques), t.rank, dtype=np.int8))
        attr_blocks.append(_merge_attributes(t, pieces, placed, start, len(uniques)))
        start += len(uniques)
    all_types = np.concatenate(type_blocks) if type_blocks else np.array([], dtype=np.int8)
    nodes = pd.DataFrame(
        {
            "type": pd.Categorical.from_codes(all_types, dtype=_TYPE_CATEGORIES),
            "key": _key_column(pa.chunked_array(key_blocks, type=pa.string())),
        }
    )
    attributes = (
        pd.concat(attr_blocks, ignore_index=True, sort=False) if attr_blocks else pd.DataFrame(index=nodes.index)
    )
    attributes.index = nodes.index
    attributes = attributes.loc[:, attributes.notna().any()]  # a column with no value declares nothing
    shell = StudyGraph(nodes, attributes, {}, *_envelope(name, overrides, history))
    shared: dict[tuple[int, ...], np.ndarray] = {}
    relations = _canonical_edges([_edge_block(shell, p, placed, shared) for p in edge_pieces])
    return StudyGraph(nodes, attributes, relations, name, shell.overrides, shell.history, shell._lookups)


def _sort_order(keys: pa.Array) -> np.ndarray:
    """Positions of text keys in sorted (byte) order."""
    return pc.sort_indices(keys).to_numpy(zero_copy_only=False).astype(np.int64, copy=False)


def _key_column(keys: pa.ChunkedArray) -> pd.Series:
    """Node keys as an Arrow-backed text column (no Python object per key)."""
    return pd.Series(pd.arrays.ArrowExtensionArray(keys))


def _merge_attributes(
    node_type: NodeType,
    pieces: Sequence[NodePiece],
    placed: Mapping[int, tuple[NodeType, np.ndarray]],
    start: int,
    n: int,
) -> pd.DataFrame:
    """One attribute row per node of a type; two different values for one node are an error."""
    frames = []
    for p in pieces:
        if p.attributes is not None and len(p.attributes.columns):
            frame = p.attributes.reset_index(drop=True).copy()
            frame.insert(0, "__node", placed[id(p.keys.vocab)][1][p.keys.codes] - start)
            frames.append(frame)
    if not frames:
        return pd.DataFrame(index=pd.RangeIndex(n))
    stacked = pd.concat(frames, ignore_index=True, sort=False)
    value_cols = [c for c in stacked.columns if c != "__node"]
    repeated = stacked["__node"].duplicated(keep=False).to_numpy()
    if repeated.any():  # only nodes declared on several rows can disagree
        several = stacked[repeated]
        distinct = several.groupby("__node", sort=True)[value_cols].nunique(dropna=True)
        clash = distinct[(distinct > 1).any(axis=1)]
        if len(clash):
            column = next(c for c in value_cols if (clash[c] > 1).any())
            nodes = clash.index[clash[column] > 1].to_numpy()
            keys = [_key_of_vocab(pieces, placed, start, int(i)) for i in nodes]
            values = several.loc[several["__node"] == nodes[0], column].dropna().unique().tolist()
            raise DepgraphError(
                "ambiguity",
                f"{node_type.value} {describe_ids(keys)} declared with conflicting {column!r} values "
                f"(e.g. {keys[0]}: {describe_ids(values)})",
                ids=keys,
                column=column,
            )
        stacked = stacked.groupby("__node", sort=True)[value_cols].first().reset_index()
    return stacked.set_index("__node")[value_cols].reindex(pd.RangeIndex(n)).reset_index(drop=True)


def _key_of_vocab(
    pieces: Sequence[NodePiece], placed: Mapping[int, tuple[NodeType, np.ndarray]], start: int, node: int
) -> str:
    for p in pieces:
        hit = np.flatnonzero(placed[id(p.keys.vocab)][1] == start + node)
        if len(hit):
            return str(p.keys.vocab[int(hit[0])].as_py())
    return str(node)  # pragma: no cover - every node comes from a piece


def _empty_edges() -> pd.DataFrame:
    return pd.DataFrame(
        {
            "src": pd.Series([], dtype=np.int64),
            "dst": pd.Series([], dtype=np.int64),
            "relation": pd.Categorical([], dtype=_RELATION_CATEGORIES),
            "weight": pd.Series([], dtype=np.float64),
            "provenance": pd.Categorical([], categories=[]),
        }
    )


def _edge_block(
    graph: StudyGraph,
    piece: EdgePiece,
    placed: Mapping[int, tuple[NodeType, np.ndarray]] | None = None,
    shared: dict[tuple[int, ...], np.ndarray] | None = None,
) -> RelationEdges:
    """A piece's edges as node positions; endpoints must name declared nodes.

    ``shared`` remembers the positions of key columns already placed during
    one assembly: every metadata relation has the same samples as sources.
    """
    rel = RELATION.get(piece.relation)
    if rel is None:
        raise DepgraphError("invalid_argument", f"unknown relation {piece.relation!r}")
    order = piece.source_order if rel.directed else None  # rows in source order: place them in that order
    ends = []
    for keys, node_type in ((piece.src_keys, rel.source), (piece.dst_keys, rel.target)):
        placed_type, where = (placed or {}).get(id(keys.vocab), (None, None))
        if where is None or placed_type != node_type:
            where = graph.locate(node_type, keys.vocab)  # a vocabulary of another type or builder
        memo = (id(keys.codes), id(where), id(order))
        positions = None if shared is None else shared.get(memo)
        if positions is None:
            positions = where[keys.codes if order is None else keys.codes[order]]
            if shared is not None:
                shared[memo] = positions
        missing = positions < 0
        if missing.any():
            codes = keys.codes if order is None else keys.codes[order]
            unknown = list(dict.fromkeys(keys.vocab.take(pa.array(codes[missing])).to_pylist()))
            raise DepgraphError(
                "reference",
                f"{piece.relation} ({piece.provenance}) names {len(unknown)} unknown {node_type.value} id(s): "
                f"{describe_ids(unknown)}",
                ids=unknown,
                relation=piece.relation,
            )
        ends.append(positions)
    src, dst = ends
    weight = None if piece.weight is None else np.asarray(piece.weight, dtype=np.float64)
    if order is not None:
        weight = None if weight is None else weight[order]
        rising = None if shared is None else shared.get((id(src),))
        if rising is None:
            rising = np.array(len(src) < 2 or bool((src[1:] > src[:-1]).all()))
            if shared is not None:
                shared[(id(src),)] = rising
        # distinct, rising sources: canonical as it stands
        return RelationEdges(piece.relation, src, dst, weight, (piece.provenance,), canonical=bool(rising))
    return RelationEdges(piece.relation, src, dst, weight, (piece.provenance,))


def _blocks_of(edges: pd.DataFrame) -> dict[str, RelationEdges]:
    """An edge table, as given, as one block per relation (rows keep their order)."""
    codes = pd.Categorical(edges["relation"], dtype=_RELATION_CATEGORIES).codes.astype(np.int64)
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


def _canonical_edges(blocks: Sequence[RelationEdges]) -> dict[str, RelationEdges]:
    """One canonical block per relation, in vocabulary order: undirected edges
    stored as ``src < dst``, sorted by (src, dst), one row per pair (the one
    with the largest weight).

    A relation held by a single canonical block is passed through untouched,
    so adding kinship to a large graph sorts only the kinship edges and
    copies nothing else.
    """
    by_relation: dict[str, list[RelationEdges]] = {}
    for block in blocks:
        if len(block.src):
            by_relation.setdefault(block.relation, []).append(block)
    out: dict[str, RelationEdges] = {}
    for name in RELATION_NAMES:
        parts = by_relation.get(name)
        if not parts:
            continue
        if len(parts) == 1 and parts[0].canonical:
            out[name] = parts[0]
            continue
        labels = sorted({label for p in parts for label in p.labels})
        rank = {label: i for i, label in enumerate(labels)}
        provenance = [np.array([rank[x] for x in p.labels], dtype=np.int64)[p.codes()] for p in parts]
        src, dst, weight, prov = _sorted_unique(parts, provenance, RELATION[name].directed)
        used = np.bincount(prov, minlength=len(labels)) > 0  # labels of edges kept (none of dropped repeats)
        kept = tuple(x for x, u in zip(labels, used, strict=True) if u)
        codes = None if len(kept) == 1 else (np.cumsum(used) - 1)[prov]
        out[name] = RelationEdges(name, src, dst, weight, kept, codes, canonical=True)
    return out


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
                dtype=_RELATION_CATEGORIES,
            ),
            "weight": np.concatenate([b.weights() for b in blocks]),
            "provenance": pd.Categorical.from_codes(
                np.concatenate([np.array([rank[x] for x in b.labels], dtype=np.int64)[b.codes()] for b in blocks]),
                categories=labels,
            ),
        }
    )


def _sorted_unique(
    parts: Sequence[RelationEdges], provenance: Sequence[np.ndarray], directed: bool
) -> tuple[np.ndarray, np.ndarray, np.ndarray | None, np.ndarray]:
    src = np.concatenate([p.src for p in parts]).astype(np.int64, copy=False)
    dst = np.concatenate([p.dst for p in parts]).astype(np.int64, copy=False)
    prov = np.concatenate(provenance)
    weighted = any(p.weight is not None for p in parts)
    weight = (
        np.concatenate([np.full(len(p.src), np.nan) if p.weight is None else p.weight for p in parts])
        if weighted
        else None
    )
    if not directed:
        swap = src > dst
        src, dst = np.where(swap, dst, src), np.where(swap, src, dst)
    elif weight is None and len(src):
        low = int(src.min())
        if np.bincount(src - low).max() <= 1:  # one edge per source (metadata relations): scatter, no sort
            target = np.full(int(src.max()) - low + 1, -1, dtype=np.int64)
            slot = np.full(len(target), -1, dtype=np.int64)
            target[src - low] = dst
            slot[src - low] = np.arange(len(src))
            rows = slot[slot >= 0]
            return src[rows], dst[rows], None, prov[rows]
    width = int(max(src.max(), dst.max())) + 1
    pair = src * width + dst
    if weight is None:
        order = np.argsort(pair, kind="stable")
    else:  # among repeats of a pair the largest weight comes first
        order = np.lexsort((np.where(np.isnan(weight), np.inf, -weight), pair))
    pair = pair[order]
    keep = np.ones(len(pair), dtype=bool)
    keep[1:] = pair[1:] != pair[:-1]
    rows = order[keep]
    return src[rows], dst[rows], None if weight is None else weight[rows], prov[rows]


def _refuse_conflicting_assignments(graph: StudyGraph) -> None:
    allow_multi = bool(graph.overrides.get("allow_multi_subject_samples"))
    keys = graph.key_values
    for rel in RELATION.values():
        if not rel.single_target or (allow_multi and rel.name == "sample_belongs_to_subject"):
            continue
        src, _, _ = graph.relation_edges(rel.name)
        if len(src) < 2:
            continue
        repeated = distinct(src[1:][src[1:] == src[:-1]])
        if len(repeated):
            samples = keys[repeated].tolist()
            raise DepgraphError(
                "ambiguity",
                f"the graphs disagree: sample(s) {describe_ids(samples)} get more than one target of {rel.name}",
                ids=samples,
                relation=rel.name,
            )


# --------------------------------------------------------------------------- JSON helpers
def _graph_from_document(doc: Any, source: str) -> StudyGraph:
    """A graph from its JSON document: the envelope by jsonschema, every element of the long arrays
    (node keys, attribute columns, edge endpoints, weights, provenance) by vectorised checks that name
    the first offender (``nodes.Sample[10] is ''``), then assembly (unknown endpoints are ``reference``)."""
    from depgraph.io.schemas import check_document

    def bad(what: str) -> DepgraphError:
        return DepgraphError("schema", f"{source}: {what}")

    doc = check_document(doc, "study-graph", source)  # format, version policy, envelope schema
    nodes_doc = doc.get("nodes")
    edges_doc = doc.get("edges", {})
    attrs_doc = doc.get("attributes", {})
    if not isinstance(nodes_doc, dict) or not isinstance(edges_doc, dict) or not isinstance(attrs_doc, dict):
        raise bad("'nodes', 'edges' and 'attributes' must be objects")
    types = {t.value for t in NODE_TYPES}
    for type_name in attrs_doc:
        if type_name not in nodes_doc:
            raise bad(f"attributes.{type_name} describes nodes that 'nodes' does not declare")
    node_pieces = []
    for type_name, keys in nodes_doc.items():
        if type_name not in types:
            raise bad(f"unknown node type {type_name!r} in 'nodes'")
        text = strings(keys, f"{source}: nodes.{type_name}", non_empty=True)
        ranked = Keys.ranked(text) if len(text) else Keys.of(text)
        if len(ranked.vocab) < len(text):
            counts = pc.value_counts(text)
            dups = counts.field("values").filter(pc.greater(counts.field("counts"), 1)).to_pylist()
            raise DepgraphError("duplicate_id", f"{source}: nodes.{type_name} repeats {describe_ids(dups)}", ids=dups)
        attr_cols = attrs_doc.get(type_name, {})
        if not isinstance(attr_cols, dict):
            raise bad(f"attributes.{type_name} must be an object")
        columns = {}
        for col, values in attr_cols.items():
            if not isinstance(values, list) or len(values) != len(text):
                raise bad(f"attributes.{type_name}.{col} must be a list as long as nodes.{type_name} ({len(text)})")
            columns[col] = scalars(values, f"{source}: attributes.{type_name}.{col}")
        attrs = pd.DataFrame(columns) if columns else None
        node_pieces.append(NodePiece(NodeType(type_name), ranked, attrs))  # ranked: no second hashing, no sort
    edge_pieces = []
    for rel, entry in edges_doc.items():
        if rel not in RELATION:
            raise bad(f"unknown relation {rel!r} in 'edges'")
        if not isinstance(entry, dict):
            raise bad(f"edges.{rel} must be an object")
        src = strings(entry.get("source"), f"{source}: edges.{rel}.source")
        dst = strings(entry.get("target"), f"{source}: edges.{rel}.target")
        if len(src) != len(dst):
            raise bad(f"edges.{rel}.source and .target must be lists of equal length ({len(src)} and {len(dst)})")
        weight = entry.get("weight")
        w = None
        if weight is not None:
            w, _ = numbers(weight, f"{source}: edges.{rel}.weight")
            if len(w) != len(src):
                raise bad(f"edges.{rel}.weight must be a list as long as its source list ({len(src)})")
        prov = entry.get("provenance", "unknown")
        if isinstance(prov, str):
            edge_pieces.append(EdgePiece(rel, src, dst, prov, w))
            continue
        if not isinstance(prov, list) or len(prov) != len(src):
            raise bad(f"edges.{rel}.provenance must be a string or a list as long as its source list ({len(src)})")
        labels = strings(prov, f"{source}: edges.{rel}.provenance").dictionary_encode()
        codes = labels.indices.to_numpy(zero_copy_only=False)
        for code, label in enumerate(labels.dictionary.to_pylist()):  # one piece per label: labels are few
            mask = pa.array(codes == code)
            edge_pieces.append(
                EdgePiece(rel, src.filter(mask), dst.filter(mask), label, None if w is None else w[codes == code])
            )
    overrides = doc.get("overrides") or {}
    history = doc.get("history") or []
    if not isinstance(overrides, dict) or not isinstance(history, list):
        raise bad("'overrides' must be an object and 'history' a list")
    try:
        graph = assemble(node_pieces, edge_pieces, name=doc.get("name"), overrides=overrides, history=history)
    except DepgraphError as exc:
        raise DepgraphError(exc.code, f"{source}: {exc.message}", **exc.details) from exc
    for rel, entry in edges_doc.items():  # assembly keeps one edge per pair: fewer kept means the file repeats one
        block = graph.relations.get(rel)
        if block is not None and len(block.src) < len(entry["source"]):
            _refuse_repeated_edge(graph, rel, entry, source)
    return graph


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
    return [None if _is_missing(v) else (v.item() if isinstance(v, np.generic) else v) for v in series.astype(object)]


def _is_missing(value: Any) -> bool:
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
