"""The structural findings a :class:`~depgraph.graph.model.StudyGraph` can hold: a node id declared twice, an edge
pointing outside the node table, joining types its relation does not allow, or declared twice.

A graph built by depgraph's builders or read by its readers holds none of them (the readers refuse them); a graph
assembled by hand from arrays can, and validation says so before reading it for meaning. A Spark graph is only
ever built or read, with these checks made there (:mod:`depgraph.spark.graph`).
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import pandas as pd
import pyarrow.compute as pc

from depgraph.errors import describe_ids
from depgraph.findings import Issue, finding
from depgraph.graph.model import StudyGraph
from depgraph.vocab import RELATION

NodeIds = Callable[[np.ndarray], tuple[str, ...]]


def structure_findings(g: StudyGraph, ids: NodeIds) -> list[Issue]:
    """Node ids unique, edges inside the node table, endpoint types matching the relation's signature, no repeated
    edge (``ids`` names node positions)."""
    out = _repeated_node_ids(g, ids)
    types = g.nodes["type"].cat.codes.to_numpy()
    dangling_rows: list[np.ndarray] = []
    misjoined: list[tuple[str, np.ndarray, np.ndarray]] = []
    repeated = 0
    offset = 0  # edge rows are counted as in StudyGraph.edges: relation by relation
    for name, block in g.relations.items():
        rel = RELATION[name]
        src, dst = block.src, block.dst
        dangling = (src < 0) | (src >= g.n_nodes) | (dst < 0) | (dst >= g.n_nodes)
        dangling_rows.append(np.flatnonzero(dangling) + offset)
        ok = ~dangling
        bad = ok.copy()
        bad[ok] = (types[src[ok]] != rel.source.rank) | (types[dst[ok]] != rel.target.rank)
        if bad.any():
            misjoined.append((name, src[bad], dst[bad]))
        if len(src) > 1:
            width = max(int(src.max()), int(dst.max()), 0) + 1
            pair = src.astype(np.int64) * width + dst
            if (np.diff(pair) < 0).any():  # builders keep edges sorted; a hand-made table may not be
                pair = np.sort(pair)
            repeated += int((pair[1:] == pair[:-1]).sum())
        offset += len(src)
    rows = np.concatenate(dangling_rows) if dangling_rows else np.array([], dtype=np.int64)
    if len(rows):
        message = f"{len(rows)} edge(s) point outside the node table (edge rows {describe_ids(rows)})"
        out.append(finding("dangling_edge", message, details={"edge_rows": rows.tolist()}, count=len(rows)))
    if misjoined:
        out.append(_misjoined(misjoined, ids))
    if repeated:
        out.append(finding("duplicate_edge", f"{repeated} edge(s) are declared twice", count=repeated))
    return out


def _repeated_node_ids(g: StudyGraph, ids: NodeIds) -> list[Issue]:
    """A node id declared twice (builders sort nodes by type and key: ids are unique when the keys rise)."""
    step = np.diff(g.nodes["type"].cat.codes.to_numpy())
    keys = g.key_array
    rising = pc.greater(keys[1:], keys[:-1]).to_numpy(zero_copy_only=False) if len(keys) > 1 else np.ones(0, bool)
    if ((step > 0) | ((step == 0) & rising)).all():
        return []
    every = pd.Series(ids(np.arange(g.n_nodes)))
    dup = every[every.duplicated()].unique()
    return [finding("duplicate_node_id", f"node ids repeat: {describe_ids(dup)}", tuple(dup))] if len(dup) else []


def _misjoined(misjoined: list[tuple[str, np.ndarray, np.ndarray]], ids: NodeIds) -> Issue:
    count = sum(len(s) for _, s, _ in misjoined)
    shown = [
        f"{ids(s[[i]])[0]} -[{name}]-> {ids(d[[i]])[0]}" for name, s, d in misjoined for i in range(min(3, len(s)))
    ][:3]
    every = tuple(dict.fromkeys(x for _, s, d in misjoined for x in ids(s) + ids(d)))
    message = f"{count} edge(s) join node types their relation does not allow: {'; '.join(shown)}"
    return finding("invalid_edge_signature", message, ids=every, count=count)
