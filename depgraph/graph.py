"""StudyGraph: the typed, columnar, immutable declaration of a study's structure.

A StudyGraph holds two tables:

* ``nodes`` — one row per entity, columns ``type`` (a :class:`~depgraph.vocab.NodeType`
  value) and ``key`` (its identifier as text). Rows are sorted by type (in
  vocabulary order) and then by key, so every type occupies one contiguous
  block and node positions do not depend on the order rows were declared in.
  Per-node attributes (``time_index`` of timepoints, extra metadata columns of
  samples) live in ``attributes``, a frame aligned with ``nodes``.
* ``edges`` — one row per relation instance, columns ``src`` and ``dst``
  (integer node positions), ``relation`` (a name from
  :data:`~depgraph.vocab.RELATIONS`), ``weight`` (kinship, distance,
  similarity; NaN when the relation carries none) and ``provenance`` (which
  builder declared it: ``metadata``, ``kinship:pairs``...). Rows are sorted by
  relation, then ``src``, then ``dst``; undirected relations are stored once
  with ``src < dst``.

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

from depgraph.errors import DepgraphError, describe_ids
from depgraph.files import atomic_write_bytes, read_json
from depgraph.vocab import NODE_TYPE_BY_PREFIX, NODE_TYPES, RELATION, RELATION_NAMES, NodeType

if TYPE_CHECKING:  # pragma: no cover
    import networkx as nx

GRAPH_FORMAT = "depgraph.study-graph"
GRAPH_FORMAT_VERSION = "1.0.0"

_TYPE_CATEGORIES = pd.CategoricalDtype([t.value for t in NODE_TYPES], ordered=True)
_RELATION_CATEGORIES = pd.CategoricalDtype(list(RELATION_NAMES), ordered=True)
_RELATION_RANK = {name: i for i, name in enumerate(RELATION_NAMES)}


# --------------------------------------------------------------------------- pieces
@dataclass(frozen=True)
class Keys:
    """Identifiers as integer codes into a vocabulary of distinct keys.

    One factorisation per column: builders that share a column (every
    sample-side edge of a metadata table) share its vocabulary, and assembly
    maps each vocabulary to node positions once, then indexes with the codes.

    >>> k = Keys.of(["b", "a", "b"])
    >>> k.codes.tolist(), k.vocab.tolist(), k.values().tolist()
    ([0, 1, 0], ['b', 'a'], ['b', 'a', 'b'])
    """

    codes: np.ndarray
    vocab: np.ndarray

    @classmethod
    def of(cls, values: Any) -> Keys:
        """Factorise key values (text, no missing values)."""
        if isinstance(values, Keys):
            return values
        codes, uniques = pd.factorize(np.asarray(values, dtype=object))
        return cls(codes.astype(np.int64), np.asarray(uniques, dtype=object))

    def take(self, rows: np.ndarray) -> Keys:
        """The keys of some rows (a mask or positions), sharing the vocabulary."""
        return Keys(self.codes[rows], self.vocab)

    def values(self) -> np.ndarray:
        return self.vocab[self.codes]

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
    """Edges of one relation declared by a builder, named by endpoint keys."""

    relation: str
    src_keys: Keys
    dst_keys: Keys
    provenance: str
    weight: np.ndarray | None = None

    def __post_init__(self) -> None:
        object.__setattr__(self, "src_keys", Keys.of(self.src_keys))
        object.__setattr__(self, "dst_keys", Keys.of(self.dst_keys))


# --------------------------------------------------------------------------- the graph
@dataclass(frozen=True, eq=False, repr=False)
class StudyGraph:
    """A validated-shape, immutable study declaration. Build it with
    :func:`~depgraph.ingest.from_metadata` and the ``add_*`` methods, or read it
    with :func:`read_graph`.

    Parameters
    ----------
    nodes, attributes, edges:
        The columnar tables described in the module docstring. Construct
        graphs through the builders; they keep the sort and uniqueness
        invariants this class relies on.
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
    edges: pd.DataFrame
    name: str | None = None
    overrides: Mapping[str, Any] = field(default_factory=dict)
    history: tuple[Mapping[str, Any], ...] = ()

    # ---- sizes and lookups -------------------------------------------------------
    @property
    def n_nodes(self) -> int:
        return len(self.nodes)

    @property
    def n_edges(self) -> int:
        return len(self.edges)

    @functools.cached_property
    def _type_offsets(self) -> np.ndarray:
        codes = self.nodes["type"].cat.codes.to_numpy()
        return np.searchsorted(codes, np.arange(len(NODE_TYPES) + 1), side="left")

    def type_range(self, node_type: NodeType | str) -> tuple[int, int]:
        """``(start, stop)`` positions of the nodes of one type."""
        rank = NodeType(node_type).rank
        off = self._type_offsets
        return int(off[rank]), int(off[rank + 1])

    def count(self, node_type: NodeType | str) -> int:
        start, stop = self.type_range(node_type)
        return stop - start

    def keys(self, node_type: NodeType | str) -> pd.Index:
        """Sorted keys of one node type, as an index for fast lookups."""
        return self._key_index(NodeType(node_type))

    @functools.cached_property
    def _key_indexes(self) -> dict[NodeType, pd.Index]:
        return {}

    def _key_index(self, node_type: NodeType) -> pd.Index:
        index = self._key_indexes.get(node_type)
        if index is None:
            start, stop = self.type_range(node_type)
            index = pd.Index(self.nodes["key"].iloc[start:stop].to_numpy(), dtype=object, name=node_type.value)
            self._key_indexes[node_type] = index
        return index

    def locate(self, node_type: NodeType | str, keys: Iterable[Any]) -> np.ndarray:
        """Node positions of ``keys`` of one type; ``-1`` where a key is unknown."""
        node_type = NodeType(node_type)
        start, _ = self.type_range(node_type)
        found = self._key_index(node_type).get_indexer(pd.Index(np.asarray(keys, dtype=object)))
        return np.where(found >= 0, found + start, -1).astype(np.int64)

    @property
    def sample_ids(self) -> np.ndarray:
        """Sample keys in node order (sorted)."""
        return self.keys(NodeType.SAMPLE).to_numpy()

    @property
    def node_ids(self) -> pd.Series:
        """``"<prefix>:<key>"`` ids of all nodes, in node order."""
        prefix = self.nodes["type"].map({t.value: t.prefix + ":" for t in NODE_TYPES}).astype(object)
        return (prefix + self.nodes["key"].astype(object)).rename("node_id")

    @functools.cached_property
    def _relation_bounds(self) -> np.ndarray:
        codes = self.edges["relation"].cat.codes.to_numpy()
        return np.searchsorted(codes, np.arange(len(RELATION_NAMES) + 1), side="left")

    def relation_slice(self, relation: str) -> slice:
        """Rows of ``edges`` that hold one relation (edges are sorted by relation)."""
        if relation not in RELATION:
            raise DepgraphError("invalid_argument", f"unknown relation {relation!r}")
        rank = _RELATION_RANK[relation]
        bounds = self._relation_bounds
        return slice(int(bounds[rank]), int(bounds[rank + 1]))

    def relation_edges(self, relation: str) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """``(src, dst, weight)`` position arrays of one relation."""
        rows = self.relation_slice(relation)
        e = self.edges
        return (
            e["src"].to_numpy()[rows],
            e["dst"].to_numpy()[rows],
            e["weight"].to_numpy()[rows],
        )

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
        rows = self.relation_slice(relation)
        return rows.stop > rows.start

    def type_counts(self) -> dict[str, int]:
        return {t.value: self.count(t) for t in NODE_TYPES if self.count(t)}

    def relation_counts(self) -> dict[str, int]:
        counts = self.edges["relation"].value_counts(sort=False)
        return {name: int(counts[name]) for name in RELATION_NAMES if counts.get(name, 0)}

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

        See :func:`depgraph.ingest.kinship_pairs` for the accepted sources
        (a pair table ``id1, id2, kinship``, or a square dense/sparse matrix
        with ``ids=``) and options. ``threshold`` may be a KING degree name:
        ``"duplicate"``, ``"first"``, ``"second"``, ``"third"``.
        """
        from depgraph.ingest import kinship_pairs

        piece, record = kinship_pairs(self, source, threshold, **options)
        return self._with_edges([piece], record)

    def add_spatial(self, coords: Any, radius: float, **options: Any) -> StudyGraph:
        """Make samples within ``radius`` of each other adjacent (inclusive, KD-tree).

        See :func:`depgraph.ingest.spatial_pairs`.
        """
        from depgraph.ingest import spatial_pairs

        piece, record = spatial_pairs(self, coords, radius, **options)
        return self._with_edges([piece], record)

    def add_duplicates(self, pairs: Any, **options: Any) -> StudyGraph:
        """Declare pairs of samples that are the same specimen or record.

        See :func:`depgraph.ingest.duplicate_pairs`.
        """
        from depgraph.ingest import duplicate_pairs

        piece, record = duplicate_pairs(self, pairs, **options)
        return self._with_edges([piece], record)

    def add_relations(self, pairs: Any, relation: str, **options: Any) -> StudyGraph:
        """Add explicit edges of any relation between existing nodes.

        See :func:`depgraph.ingest.explicit_pairs`.
        """
        from depgraph.ingest import explicit_pairs

        piece, record = explicit_pairs(self, pairs, relation, **options)
        return self._with_edges([piece], record)

    def with_overrides(self, **overrides: Any) -> StudyGraph:
        """A copy with validation/derivation overrides set.

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
        merged = {**self.overrides, **overrides}
        return StudyGraph(self.nodes, self.attributes, self.edges, self.name, _frozen(merged), self.history)

    def _with_edges(self, pieces: Sequence[EdgePiece], record: Mapping[str, Any]) -> StudyGraph:
        edges = _canonical_edges([*_blocks_of(self.edges), *(_edge_block(self, p) for p in pieces)])
        return StudyGraph(
            self.nodes, self.attributes, edges, self.name, self.overrides, (*self.history, _frozen(record))
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
        keys = self.nodes["key"].to_numpy(dtype=object)
        edge_pieces = []
        e = self.edges
        for rel in self.relation_counts():
            rows = self.relation_slice(rel)
            part = e.iloc[rows]
            for prov, sub in part.groupby("provenance", observed=True, sort=True):
                weight = sub["weight"].to_numpy()
                edge_pieces.append(
                    EdgePiece(
                        rel,
                        pd.Series(keys[sub["src"].to_numpy()], dtype=object),
                        pd.Series(keys[sub["dst"].to_numpy()], dtype=object),
                        str(prov),
                        None if np.isnan(weight).all() else weight,
                    )
                )
        return node_pieces, edge_pieces

    # ---- JSON ---------------------------------------------------------------------
    def to_json_dict(self) -> dict[str, Any]:
        """The graph as a JSON-ready dict (columnar: keys grouped by type,
        edges grouped by relation and named by endpoint keys)."""
        keys = self.nodes["key"].to_numpy(dtype=object)
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
        e = self.edges
        for rel in self.relation_counts():
            part = e.iloc[self.relation_slice(rel)]
            entry: dict[str, Any] = {
                "source": keys[part["src"].to_numpy()].tolist(),
                "target": keys[part["dst"].to_numpy()].tolist(),
            }
            weight = part["weight"].to_numpy()
            if not np.isnan(weight).all():
                entry["weight"] = _json_column(part["weight"])
            provs = part["provenance"].astype(str)
            entry["provenance"] = provs.iat[0] if provs.nunique() == 1 else provs.tolist()
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


def write_graph(graph: StudyGraph, path: str | os.PathLike[str]) -> None:
    """Write ``graph`` as JSON to ``path`` atomically."""
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
    key_blocks: list[np.ndarray] = []
    type_blocks: list[np.ndarray] = []
    attr_blocks: list[pd.DataFrame] = []
    placed: dict[int, np.ndarray] = {}  # id(vocab) -> node position of each vocabulary entry
    start = 0
    for t in NODE_TYPES:
        pieces = [p for p in node_pieces if p.type == t]
        if not pieces:
            continue
        vocabs = list({id(p.keys.vocab): p.keys.vocab for p in pieces}.values())
        used = {id(v): np.zeros(len(v), dtype=bool) for v in vocabs}
        for p in pieces:
            used[id(p.keys.vocab)][p.keys.codes] = True
        single = len(vocabs) == 1 and used[id(vocabs[0])].all()  # the usual case: one column, all used
        uniques = vocabs[0] if single else pd.unique(np.concatenate([v[used[id(v)]] for v in vocabs]))
        order = np.asarray(pc.sort_indices(pa.array(uniques, type=pa.string())))
        ordered = uniques[order]
        rank = np.empty(len(uniques), dtype=np.int64)
        rank[order] = np.arange(len(uniques))
        if single:  # a vocabulary holds distinct keys: its entries are the nodes themselves
            placed[id(vocabs[0])] = start + rank
        else:
            index = pd.Index(uniques, dtype=object)
            for v in vocabs:  # vocabularies are small next to the rows that use them
                found = index.get_indexer(v)
                placed[id(v)] = np.where(found >= 0, start + rank[np.maximum(found, 0)], -1)
        key_blocks.append(ordered.astype(object))
        type_blocks.append(np.full(len(ordered), t.rank, dtype=np.int8))
        attr_blocks.append(_merge_attributes(t, pieces, placed, start, len(ordered)))
        start += len(ordered)
    all_keys = np.concatenate(key_blocks) if key_blocks else np.array([], dtype=object)
    all_types = np.concatenate(type_blocks) if type_blocks else np.array([], dtype=np.int8)
    nodes = pd.DataFrame(
        {
            "type": pd.Categorical.from_codes(all_types, dtype=_TYPE_CATEGORIES),
            "key": pd.Series(all_keys, dtype=object),
        }
    )
    attributes = (
        pd.concat(attr_blocks, ignore_index=True, sort=False) if attr_blocks else pd.DataFrame(index=nodes.index)
    )
    attributes.index = nodes.index
    attributes = attributes.loc[:, attributes.notna().any()]  # a column with no value declares nothing
    shell = StudyGraph(nodes, attributes, _empty_edges(), name, _frozen(overrides or {}), tuple(map(_frozen, history)))
    edges = _canonical_edges([_edge_block(shell, p, placed) for p in edge_pieces])
    return StudyGraph(nodes, attributes, edges, name, shell.overrides, shell.history)


def _merge_attributes(
    node_type: NodeType, pieces: Sequence[NodePiece], placed: Mapping[int, np.ndarray], start: int, n: int
) -> pd.DataFrame:
    """One attribute row per node of a type; two different values for one node are an error."""
    frames = []
    for p in pieces:
        if p.attributes is not None and len(p.attributes.columns):
            frame = p.attributes.reset_index(drop=True).copy()
            frame.insert(0, "__node", placed[id(p.keys.vocab)][p.keys.codes] - start)
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


def _key_of_vocab(pieces: Sequence[NodePiece], placed: Mapping[int, np.ndarray], start: int, node: int) -> str:
    for p in pieces:
        hit = np.flatnonzero(placed[id(p.keys.vocab)] == start + node)
        if len(hit):
            return str(p.keys.vocab[hit[0]])
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


@dataclass(frozen=True)
class _EdgeBlock:
    """Edges of one relation as position arrays (the working form before the final table).

    Provenance is a list of labels and, per edge, a code into it (``None``: every
    edge has the first label), so no per-edge string is ever built.
    """

    relation: int
    src: np.ndarray
    dst: np.ndarray
    weight: np.ndarray | None
    labels: tuple[str, ...]
    label_codes: np.ndarray | None = None
    canonical: bool = False  # already oriented, sorted and without repeats

    def codes(self) -> np.ndarray:
        return np.zeros(len(self.src), dtype=np.int64) if self.label_codes is None else self.label_codes


def _edge_block(graph: StudyGraph, piece: EdgePiece, placed: Mapping[int, np.ndarray] | None = None) -> _EdgeBlock:
    """A piece's edges as node positions; endpoints must name declared nodes."""
    rel = RELATION.get(piece.relation)
    if rel is None:
        raise DepgraphError("invalid_argument", f"unknown relation {piece.relation!r}")
    ends = []
    for keys, node_type in ((piece.src_keys, rel.source), (piece.dst_keys, rel.target)):
        where = (placed or {}).get(id(keys.vocab))
        start, stop = graph.type_range(node_type)
        if where is None or (len(where) and ((where >= 0) & ((where < start) | (where >= stop))).any()):
            where = graph.locate(node_type, keys.vocab)  # a vocabulary of another type or builder
        positions = where[keys.codes]
        missing = positions < 0
        if missing.any():
            unknown = pd.unique(keys.vocab[keys.codes[missing]]).tolist()
            raise DepgraphError(
                "reference",
                f"{piece.relation} ({piece.provenance}) names {len(unknown)} unknown {node_type.value} id(s): "
                f"{describe_ids(unknown)}",
                ids=unknown,
                relation=piece.relation,
            )
        ends.append(positions)
    weight = None if piece.weight is None else np.asarray(piece.weight, dtype=np.float64)
    return _EdgeBlock(_RELATION_RANK[piece.relation], ends[0], ends[1], weight, (piece.provenance,))


def _blocks_of(edges: pd.DataFrame) -> list[_EdgeBlock]:
    """An existing (canonical) edge table as one block per relation."""
    codes = edges["relation"].cat.codes.to_numpy()
    bounds = np.searchsorted(codes, np.arange(len(RELATION_NAMES) + 1))
    provenance = edges["provenance"]
    labels = tuple(str(c) for c in provenance.cat.categories)
    label_codes = provenance.cat.codes.to_numpy().astype(np.int64)
    weights = edges["weight"].to_numpy()
    blocks = []
    for r in range(len(RELATION_NAMES)):
        rows = slice(int(bounds[r]), int(bounds[r + 1]))
        if rows.stop > rows.start:
            weight = weights[rows]
            blocks.append(
                _EdgeBlock(
                    r,
                    edges["src"].to_numpy()[rows],
                    edges["dst"].to_numpy()[rows],
                    None if np.isnan(weight).all() else weight,
                    labels,
                    label_codes[rows],
                    canonical=True,
                )
            )
    return blocks


def _canonical_edges(blocks: Sequence[_EdgeBlock]) -> pd.DataFrame:
    """One edge table: undirected edges stored as ``src < dst``, sorted by
    (relation, src, dst), one row per triple (the one with the largest weight).

    Relations are handled one at a time and a relation held by a single
    canonical block is passed through untouched, so adding kinship to a large
    graph sorts only the kinship edges.
    """
    labels = sorted({label for block in blocks for label in block.labels})
    label_rank = {label: i for i, label in enumerate(labels)}
    by_relation: dict[int, list[_EdgeBlock]] = {}
    for block in blocks:
        if len(block.src):
            by_relation.setdefault(block.relation, []).append(block)
    src_parts, dst_parts, rel_parts, weight_parts, prov_parts = [], [], [], [], []
    for r in sorted(by_relation):
        parts = by_relation[r]
        remapped = [np.array([label_rank[x] for x in p.labels], dtype=np.int64)[p.codes()] for p in parts]
        if len(parts) == 1 and parts[0].canonical:
            src, dst, weight, prov = parts[0].src, parts[0].dst, parts[0].weight, remapped[0]
        else:
            src, dst, weight, prov = _sorted_unique(parts, remapped, RELATION[RELATION_NAMES[r]].directed)
        src_parts.append(src)
        dst_parts.append(dst)
        rel_parts.append(np.full(len(src), r, dtype=np.int16))
        weight_parts.append(np.full(len(src), np.nan) if weight is None else weight)
        prov_parts.append(prov)
    if not src_parts:
        return _empty_edges()
    prov = np.concatenate(prov_parts)
    used = np.bincount(prov, minlength=len(labels)) > 0  # labels of edges that exist (none of dropped pieces)
    renumber = np.cumsum(used) - 1
    return pd.DataFrame(
        {
            "src": np.concatenate(src_parts).astype(np.int64, copy=False),
            "dst": np.concatenate(dst_parts).astype(np.int64, copy=False),
            "relation": pd.Categorical.from_codes(np.concatenate(rel_parts), dtype=_RELATION_CATEGORIES),
            "weight": np.concatenate(weight_parts),
            "provenance": pd.Categorical.from_codes(
                renumber[prov], categories=[x for x, u in zip(labels, used, strict=True) if u]
            ),
        }
    )


def _sorted_unique(
    parts: Sequence[_EdgeBlock], provenance: Sequence[np.ndarray], directed: bool
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
    keys = graph.nodes["key"].to_numpy(dtype=object)
    for rel in RELATION.values():
        if not rel.single_target or (allow_multi and rel.name == "sample_belongs_to_subject"):
            continue
        src, _, _ = graph.relation_edges(rel.name)
        if len(src) < 2:
            continue
        repeated = np.unique(src[1:][src[1:] == src[:-1]])
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
    from depgraph.schemas import check_document

    def bad(what: str) -> DepgraphError:
        return DepgraphError("schema", f"{source}: {what}")

    doc = check_document(doc, "study-graph", source)  # format, version policy, schema
    nodes_doc = doc.get("nodes")
    edges_doc = doc.get("edges", {})
    attrs_doc = doc.get("attributes", {})
    if not isinstance(nodes_doc, dict) or not isinstance(edges_doc, dict) or not isinstance(attrs_doc, dict):
        raise bad("'nodes', 'edges' and 'attributes' must be objects")
    node_pieces = []
    for type_name, keys in nodes_doc.items():
        if type_name not in {t.value for t in NODE_TYPES}:
            raise bad(f"unknown node type {type_name!r} in 'nodes'")
        if not isinstance(keys, list) or not all(isinstance(k, str) and k for k in keys):
            raise bad(f"nodes.{type_name} must be a list of non-empty strings")
        if len(set(keys)) != len(keys):
            dups = pd.Series(keys)[pd.Series(keys).duplicated()].unique().tolist()
            raise DepgraphError("duplicate_id", f"{source}: nodes.{type_name} repeats {describe_ids(dups)}", ids=dups)
        attr_cols = attrs_doc.get(type_name, {})
        if not isinstance(attr_cols, dict):
            raise bad(f"attributes.{type_name} must be an object")
        for col, values in attr_cols.items():
            if not isinstance(values, list) or len(values) != len(keys):
                raise bad(f"attributes.{type_name}.{col} must be a list as long as nodes.{type_name} ({len(keys)})")
        attrs = pd.DataFrame({c: _from_json_column(v) for c, v in attr_cols.items()}) if attr_cols else None
        node_pieces.append(NodePiece(NodeType(type_name), pd.Series(keys, dtype=object), attrs))
    edge_pieces = []
    for rel, entry in edges_doc.items():
        if rel not in RELATION:
            raise bad(f"unknown relation {rel!r} in 'edges'")
        if not isinstance(entry, dict):
            raise bad(f"edges.{rel} must be an object")
        src, dst = entry.get("source"), entry.get("target")
        if not isinstance(src, list) or not isinstance(dst, list) or len(src) != len(dst):
            raise bad(f"edges.{rel}.source and .target must be lists of equal length")
        weight = entry.get("weight")
        if weight is not None and (not isinstance(weight, list) or len(weight) != len(src)):
            raise bad(f"edges.{rel}.weight must be a list as long as its source list")
        prov = entry.get("provenance", "unknown")
        w = None if weight is None else np.array([np.nan if v is None else v for v in weight], dtype=np.float64)
        if isinstance(prov, str):
            edge_pieces.append(EdgePiece(rel, pd.Series(src, dtype=object), pd.Series(dst, dtype=object), prov, w))
        elif isinstance(prov, list) and len(prov) == len(src):
            prov_arr = np.asarray(prov, dtype=object)
            for label in pd.unique(prov_arr):
                mask = prov_arr == label
                edge_pieces.append(
                    EdgePiece(
                        rel,
                        pd.Series(np.asarray(src, dtype=object)[mask], dtype=object),
                        pd.Series(np.asarray(dst, dtype=object)[mask], dtype=object),
                        str(label),
                        None if w is None else w[mask],
                    )
                )
        else:
            raise bad(f"edges.{rel}.provenance must be a string or a list as long as its source list")
    overrides = doc.get("overrides") or {}
    history = doc.get("history") or []
    if not isinstance(overrides, dict) or not isinstance(history, list):
        raise bad("'overrides' must be an object and 'history' a list")
    try:
        return assemble(node_pieces, edge_pieces, name=doc.get("name"), overrides=overrides, history=history)
    except DepgraphError as exc:
        raise DepgraphError(exc.code, f"{source}: {exc.message}", **exc.details) from exc


def _json_column(series: pd.Series) -> list[Any]:
    if pd.api.types.is_float_dtype(series.dtype):
        return [None if math.isnan(v) else v for v in series.to_numpy(np.float64).tolist()]
    if pd.api.types.is_integer_dtype(series.dtype) or pd.api.types.is_bool_dtype(series.dtype):
        return series.astype(object).where(series.notna(), None).tolist()
    return [None if _is_missing(v) else (v.item() if isinstance(v, np.generic) else v) for v in series.astype(object)]


def _from_json_column(values: list[Any]) -> pd.Series:
    """A JSON attribute list as the column it was written from: int64 when
    every value is an integer, float64 when numbers have gaps, else text."""
    if values and all(isinstance(v, int) and not isinstance(v, bool) for v in values):
        return pd.Series(values, dtype=np.int64)
    if all(v is None or (isinstance(v, (int, float)) and not isinstance(v, bool)) for v in values):
        return pd.Series([np.nan if v is None else v for v in values], dtype=np.float64)
    return pd.Series(values, dtype=object)


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


def node_type_of(node_id: str) -> NodeType:
    """The type named by a node id's prefix.

    >>> node_type_of("featureset:FS1")
    <NodeType.FEATURESET: 'FeatureSet'>
    """
    prefix = node_id.split(":", 1)[0]
    if prefix not in NODE_TYPE_BY_PREFIX or ":" not in node_id:
        raise DepgraphError("invalid_argument", f"{node_id!r} is not a '<type>:<key>' node id")
    return NODE_TYPE_BY_PREFIX[prefix]
