"""Assembling a graph from pieces: the one place node keys become node positions.

* :func:`assemble` — node and edge pieces (:mod:`depgraph.graph.pieces`) → a :class:`~depgraph.graph.model.StudyGraph`:
  one factorisation and one sort per node type; edges oriented, sorted and de-duplicated per relation.
* :func:`with_edges` — a graph plus edge pieces between its nodes (what every ``add_*`` builder of
  :mod:`depgraph.ingest.builders` returns); only the relations the pieces hold are rebuilt.
* :func:`combine` — several graphs merged into one (the same node id is the same entity).

Every reader of tables or files assembles through here: :mod:`depgraph.ingest` (from tables),
:mod:`depgraph.graph.files` (graph files) and :mod:`depgraph.adapters.splitgraph` (splitGraph files). It sits with
the graph rather than with ingest because the graph-file reader (graph layer) needs it too.

>>> import pandas as pd
>>> from depgraph.graph.pieces import EdgePiece, NodePiece
>>> from depgraph.vocab import NodeType
>>> g = assemble([NodePiece(NodeType.SAMPLE, pd.Series(["S2", "S1"])), NodePiece(NodeType.SUBJECT, pd.Series(["P1"]))],
...              [EdgePiece("sample_belongs_to_subject", pd.Series(["S2", "S1"]), pd.Series(["P1", "P1"]), "hand")])
>>> g
StudyGraph(3 nodes: 2 Sample, 1 Subject; 2 edges: 2 sample_belongs_to_subject)
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc

from depgraph.common.arguments import instance
from depgraph.common.arrays import distinct
from depgraph.errors import DepgraphError, describe_ids
from depgraph.graph.model import NODE_TYPE_DTYPE, StudyGraph, checked_envelope
from depgraph.graph.pieces import EdgePiece, NodePiece, RelationEdges
from depgraph.vocab import NODE_TYPES, RELATION, RELATION_NAMES, NodeType, RelationName


def with_edges(graph: StudyGraph, pieces: Sequence[EdgePiece], record: Mapping[str, Any]) -> StudyGraph:
    """``graph`` with the edges of ``pieces`` added and ``record`` appended to its history (a new graph; ``graph``
    is unchanged). Endpoints must name nodes of the graph (``reference`` otherwise); an edge already present is
    kept once, with the larger weight. Only the relations the pieces hold are rebuilt, and the new graph shares
    the node lookups of ``graph`` (same nodes).

    >>> import pandas as pd
    >>> from depgraph import from_metadata
    >>> g = from_metadata(pd.DataFrame({"sample_id": ["S1", "S2"]}))
    >>> pair = EdgePiece("sample_duplicate_of", pd.Series(["S1"]), pd.Series(["S2"]), "hand")
    >>> with_edges(g, [pair], {"step": "by hand"}).relation_counts()
    {'sample_duplicate_of': 1}
    """
    relations = _canonical_edges([*graph.relations.values(), *(_edge_block(graph, p) for p in pieces)])
    history = (*graph.history, dict(record))
    return StudyGraph(
        graph.nodes, graph.attributes, relations, graph.name, graph.overrides, history, graph.cache.sharing_nodes()
    )


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
        n, e = graph_pieces(g)
        node_pieces += n
        edge_pieces += e
        overrides.update({k: v for k, v in g.overrides.items() if v})
        history += list(g.history)
    history.append({"step": "combine", "graphs": len(graphs)})
    merged = assemble(node_pieces, edge_pieces, name=name or first.name, overrides=overrides, history=history)
    _refuse_conflicting_assignments(merged)
    return merged


def graph_pieces(graph: StudyGraph) -> tuple[list[NodePiece], list[EdgePiece]]:
    """A graph as the pieces it could be assembled from again: one node piece per type (with its attributes), one
    edge piece per relation and provenance label. :func:`combine` merges graphs through them."""
    node_pieces = []
    for t in NODE_TYPES:
        start, stop = graph.type_range(t)
        if stop == start:
            continue
        attrs = graph.attributes.iloc[start:stop].reset_index(drop=True)
        attrs = attrs.loc[:, attrs.notna().any()] if len(attrs.columns) else None
        node_pieces.append(
            NodePiece(
                t,
                graph.nodes["key"].iloc[start:stop].reset_index(drop=True),
                attrs if attrs is not None and len(attrs.columns) else None,
            )
        )
    keys = graph.key_values
    edge_pieces = []
    for rel, block in graph.relations.items():
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
            "type": pd.Categorical.from_codes(all_types, dtype=NODE_TYPE_DTYPE),
            "key": _key_column(pa.chunked_array(key_blocks, type=pa.string())),
        }
    )
    attributes = (
        pd.concat(attr_blocks, ignore_index=True, sort=False) if attr_blocks else pd.DataFrame(index=nodes.index)
    )
    attributes.index = nodes.index
    attributes = attributes.loc[:, attributes.notna().any()]  # a column with no value declares nothing
    shell = StudyGraph(nodes, attributes, {}, *checked_envelope(name, overrides, history))
    shared: dict[tuple[int, ...], np.ndarray] = {}
    relations = _canonical_edges([_edge_block(shell, p, placed, shared) for p in edge_pieces])
    return StudyGraph(nodes, attributes, relations, name, shell.overrides, shell.history, shell.cache)


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
    if len(pair) < 2 or (pair[1:] > pair[:-1]).all():  # canonical already (a graph file's edges): nothing to sort
        return src, dst, weight, prov
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
        if not rel.single_target or (allow_multi and rel.name == RelationName.SAMPLE_BELONGS_TO_SUBJECT):
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


def assemble_sorted(
    keys: Mapping[NodeType, pa.Array],
    attributes: Mapping[NodeType, pd.DataFrame],
    relations: Mapping[str, RelationEdges],
    *,
    name: str | None = None,
    overrides: Mapping[str, Any] | None = None,
    history: Sequence[Mapping[str, Any]] = (),
) -> StudyGraph:
    """A graph from nodes already distinct and sorted per type (``keys``, with each type's ``attributes`` row by
    row) and edge blocks already canonical (oriented, sorted by (src, dst), each edge once, positions into the
    node table this makes): what a columnar graph file holds, checked by its reader. Nothing is sorted, hashed or
    looked up; the result equals what :func:`assemble` makes of the same declaration."""
    present = [t for t in NODE_TYPES if t in keys and len(keys[t])]
    codes = np.concatenate([np.full(len(keys[t]), t.rank, dtype=np.int8) for t in present]) if present else []
    nodes = pd.DataFrame(
        {
            "type": pd.Categorical.from_codes(np.asarray(codes, dtype=np.int8), dtype=NODE_TYPE_DTYPE),
            "key": _key_column(pa.chunked_array([keys[t] for t in present], type=pa.string())),
        }
    )
    blocks = [
        attributes[t].reset_index(drop=True) if t in attributes else pd.DataFrame(index=pd.RangeIndex(len(keys[t])))
        for t in present
    ]
    table = pd.concat(blocks, ignore_index=True, sort=False) if blocks else pd.DataFrame(index=nodes.index)
    table.index = nodes.index
    table = table.loc[:, table.notna().any()]  # a column with no value declares nothing
    return StudyGraph(nodes, table, dict(relations), *checked_envelope(name, overrides, history))
