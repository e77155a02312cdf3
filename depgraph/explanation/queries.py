"""The graph as tables: its nodes of some types, its edges of some relations, and the neighbours of some nodes —
splitGraph's ``query_node_type``, ``query_edge_type`` and ``query_neighbors``, answered by numpy over the relation
blocks (each edge test one vectorised pass), never by a walk of networkx over the whole graph.

>>> import pandas as pd
>>> from depgraph import from_metadata
>>> g = from_metadata(pd.DataFrame({"sample_id": ["S1", "S2"], "subject_id": ["P1", "P1"], "batch_id": ["B1", "B2"]}))
>>> neighbors(g, ["P1"])[["seed_id", "relation", "direction", "node_type", "node_id"]].values.tolist()
[['P1', 'sample_belongs_to_subject', 'in', 'Sample', 'S1'], ['P1', 'sample_belongs_to_subject', 'in', 'Sample', 'S2']]
>>> edges_of(g, ["sample_processed_in_batch"], ids=["S2"])[["from_id", "to_id"]].values.tolist()
[['S2', 'B2']]
>>> nodes_of(g, ["Batch"])["id"].tolist()
['B1', 'B2']
"""

from __future__ import annotations

from collections.abc import Iterable

import numpy as np
import pandas as pd

from depgraph.errors import DepgraphError, describe_ids
from depgraph.explanation.adjacency import find_nodes, keys_at, read_ids, types_at, weight_column
from depgraph.graph.model import StudyGraph, node_type_named
from depgraph.vocab import NODE_TYPES, RELATION, RELATIONS, NodeType

NEIGHBOR_COLUMNS = ["seed_type", "seed_id", "relation", "direction", "node_type", "node_id", "weight", "provenance"]
EDGE_COLUMNS = ["relation", "from_type", "from_id", "to_type", "to_id", "weight", "provenance"]
DIRECTIONS = ("all", "out", "in")


def neighbors(
    graph: StudyGraph, ids: Iterable[str], *, relations: Iterable[str] | None = None,
    node_types: Iterable[NodeType | str] | None = None, direction: str = "all", seed_type: NodeType | str | None = None,
) -> pd.DataFrame:  # fmt: skip
    """One row per edge joining one of ``ids`` (nodes of any type, or of ``seed_type``) to a neighbour: the seed,
    the relation, the ``direction`` of the edge from the seed (``out``: the seed is the relation's source, ``in``:
    its target, ``undirected``), the neighbour and the edge's weight and provenance. ``relations`` and
    ``node_types`` keep those of the edges and of the neighbours; ``direction`` keeps ``out`` or ``in`` edges
    (undirected ones are kept either way). Rows by seed id, relation and neighbour id."""
    seeds = _seeds(graph, ids, seed_type)
    if direction not in DIRECTIONS:
        raise DepgraphError("invalid_argument", f"neighbors: direction is one of {', '.join(DIRECTIONS)}, not "
                            f"{direction!r}")  # fmt: skip
    wanted = _relations(relations, "neighbors")
    kinds = None if node_types is None else {node_type_named(t).value for t in _listed(node_types, "node types")}
    is_seed = np.zeros(graph.n_nodes, dtype=bool)
    is_seed[seeds] = True
    parts = []
    for name, block in graph.relations.items():
        if name not in wanted or not len(block.src):
            continue
        undirected = not RELATION[name].directed
        for way, here, there in (("out", block.src, block.dst), ("in", block.dst, block.src)):
            if direction not in ("all", way) and not undirected:
                continue
            at = np.flatnonzero(is_seed[here])
            parts.append((name, "undirected" if undirected else way, block, at, here[at], there[at]))
    table = _neighbor_rows(graph, parts)
    if kinds is not None:
        table = table[table["node_type"].isin(kinds)]
    return table.sort_values(["seed_id", "relation", "node_id"], kind="stable").reset_index(drop=True)


def _neighbor_rows(graph: StudyGraph, parts: list) -> pd.DataFrame:  # type: ignore[type-arg]
    if not parts:
        return pd.DataFrame(columns=NEIGHBOR_COLUMNS)
    seed = np.concatenate([p[4] for p in parts])
    other = np.concatenate([p[5] for p in parts])
    weight = np.concatenate([p[2].weights()[p[3]] for p in parts])
    return pd.DataFrame({
        "seed_type": types_at(graph, seed), "seed_id": keys_at(graph, seed),
        "relation": np.concatenate([np.full(len(p[3]), p[0], dtype=object) for p in parts]),
        "direction": np.concatenate([np.full(len(p[3]), p[1], dtype=object) for p in parts]),
        "node_type": types_at(graph, other), "node_id": keys_at(graph, other),
        "weight": weight_column(weight),
        "provenance": np.concatenate([np.asarray(p[2].labels, dtype=object)[p[2].codes()[p[3]]] for p in parts]),
    }, columns=NEIGHBOR_COLUMNS)  # fmt: skip


def edges_of(graph: StudyGraph, relations: Iterable[str], *, ids: Iterable[str] | None = None) -> pd.DataFrame:
    """The edges of ``relations`` (those touching one of ``ids``, of any type, when given), one row each: relation,
    ends, weight, provenance; in the graph's order."""
    wanted = _relations(relations, "edges_of")
    touching = None
    if ids is not None:
        touching = np.zeros(graph.n_nodes, dtype=bool)
        touching[_seeds(graph, ids, None, every_type=True)] = True
    parts = []
    for name, block in graph.relations.items():
        if name in wanted and len(block.src):
            at = np.arange(len(block.src)) if touching is None else np.flatnonzero(touching[block.src] |
                                                                                   touching[block.dst])  # fmt: skip
            parts.append((name, block, at))
    if not parts:
        return pd.DataFrame(columns=EDGE_COLUMNS)
    src = np.concatenate([b.src[at] for _, b, at in parts])
    dst = np.concatenate([b.dst[at] for _, b, at in parts])
    weight = np.concatenate([b.weights()[at] for _, b, at in parts])
    return pd.DataFrame({
        "relation": np.concatenate([np.full(len(at), name, dtype=object) for name, _, at in parts]),
        "from_type": types_at(graph, src), "from_id": keys_at(graph, src),
        "to_type": types_at(graph, dst), "to_id": keys_at(graph, dst),
        "weight": weight_column(weight),
        "provenance": np.concatenate([np.asarray(b.labels, dtype=object)[b.codes()[at]] for _, b, at in parts]),
    }, columns=EDGE_COLUMNS)  # fmt: skip


def nodes_of(graph: StudyGraph, node_types: Iterable[NodeType | str], *, ids: Iterable[str] | None = None
             ) -> pd.DataFrame:  # fmt: skip
    """The nodes of ``node_types`` (those among ``ids`` when given), one row each: ``type``, ``id`` and the
    type's attributes; in the graph's order."""
    kinds = [node_type_named(t) for t in _listed(node_types, "node types")]
    rows = np.concatenate([np.arange(*graph.type_range(t)) for t in NODE_TYPES if t in kinds] or [np.array([], int)])
    if ids is not None:
        keys = read_ids(ids, "ids")
        found = find_nodes(graph, keys, kinds)
        missing = [k for k, hit in zip(keys, (found >= 0).any(axis=0), strict=True) if not hit]
        if missing:
            of = ", ".join(t.value for t in kinds)
            raise DepgraphError("reference", f"the graph has no node of type {of} {describe_ids(missing)}")
        rows = np.unique(found[found >= 0])
    table = pd.DataFrame({"type": types_at(graph, rows), "id": keys_at(graph, rows)})
    attributes = graph.attributes.iloc[rows].reset_index(drop=True).dropna(axis=1, how="all")
    return pd.concat([table, attributes], axis=1)


def _listed(values: Iterable[object], what: str) -> list[object]:
    if isinstance(values, (str, bytes)) or not isinstance(values, Iterable):
        values = [values]
    listed = list(values)
    if not listed:
        raise DepgraphError("invalid_argument", f"give one or more {what}")
    return listed


def _relations(relations: Iterable[str] | None, what: str) -> set[str]:
    if relations is None:
        return {r.name for r in RELATIONS}
    named = [str(r) for r in _listed(relations, "relations")]
    unknown = [r for r in named if r not in RELATION]
    if unknown:
        raise DepgraphError("invalid_argument", f"{what}: {describe_ids(unknown)} are not relations of the vocabulary")
    return set(named)


def _seeds(graph: StudyGraph, ids: Iterable[str], seed_type: NodeType | str | None, every_type: bool = False
           ) -> np.ndarray:  # fmt: skip
    """Node positions of ``ids``: each id of ``seed_type``, or of the one type that has it (every type with
    ``every_type``); an id no node has is ``reference``, one of several types without ``seed_type``
    ``ambiguity``."""
    keys = read_ids(ids, "ids")
    types = [node_type_named(seed_type)] if seed_type is not None else list(NODE_TYPES)
    found = find_nodes(graph, keys, types)
    missing = [k for k, hit in zip(keys, (found >= 0).any(axis=0), strict=True) if not hit]
    if missing:
        what = f"{types[0].value.lower()}" if seed_type is not None else "node"
        raise DepgraphError("reference", f"the graph has no {what} {describe_ids(missing)}")
    repeated = sorted({k for k in keys if keys.count(k) > 1})
    if repeated:
        raise DepgraphError("invalid_argument", f"the ids name {describe_ids(repeated)} more than once")
    several = [k for k, n in zip(keys, (found >= 0).sum(axis=0), strict=True) if n > 1]
    if several and not every_type:
        raise DepgraphError("ambiguity", f"{describe_ids(several)} name nodes of several types; say which (--type)")
    return np.unique(found[found >= 0])
