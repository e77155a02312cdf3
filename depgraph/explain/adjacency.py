"""The followed edges of a graph as one sparse adjacency: what :mod:`~depgraph.explain.paths` and
:mod:`~depgraph.explain.groups` search.

A grouping follows some relations (a mode's, a spec's constraint's, or every relation a grouping can follow);
their edges, over the graph's node positions and in both directions, make one symmetric ``scipy.sparse`` matrix
that a breadth-first search walks in time linear in the edges. The edges themselves are kept beside it, in the
vocabulary's relation order, so a step found in the matrix is told by its relation, weight and provenance.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

import numpy as np
import pandas as pd

from depgraph.errors import DepgraphError, describe_ids
from depgraph.graph.model import StudyGraph
from depgraph.graph.pieces import RelationEdges
from depgraph.vocab import COMBINABLE_MODES, MODE, NODE_TYPES, RELATION, RELATIONS, relation_names


def followed_relations(mode: str | None, relations: Iterable[str] | None, what: str) -> tuple[str, ...]:
    """The relations ``mode`` follows, or ``relations`` (checked), or every relation a grouping can follow (not the
    outcome relations: two samples of one outcome are not dependent), in the vocabulary's order."""
    if mode is not None and relations is not None:
        raise DepgraphError("invalid_argument", f"{what}: give a mode or the relations it follows, not both")
    if mode is not None:
        if mode not in MODE or MODE[mode].kind == "composite":
            modes = [m for m in MODE if MODE[m].kind != "composite"]
            raise DepgraphError("invalid_argument", f"{what}: mode {mode!r} is not one of {', '.join(modes)} (for a "
                                "composite, give the relations its spec lists)")  # fmt: skip
        return relation_names([mode])
    if relations is None:
        return relation_names(COMBINABLE_MODES)  # every dependency a grouping can follow (not outcomes)
    names = list(relations) if not isinstance(relations, str) else [relations]
    unknown = [r for r in names if r not in RELATION]
    if unknown:
        raise DepgraphError("invalid_argument", f"{what}: {describe_ids(unknown)} are not relations of the vocabulary")
    return tuple(r.name for r in RELATIONS if r.name in names)


@dataclass(frozen=True)
class FollowedEdges:
    """The followed edges, concatenated in the vocabulary's relation order: ``src`` and ``dst`` node positions and
    an edge's relation, weight and provenance are read from its relation's block, for the few edges an answer names,
    so no per-edge text (nor a weight for every edge) is built."""

    src: np.ndarray
    dst: np.ndarray
    blocks: tuple[RelationEdges, ...]
    starts: np.ndarray  # where each block's edges begin, and the end

    def block_of(self, at: np.ndarray) -> np.ndarray:
        """The block (a position in ``blocks``) of each edge ``at``."""
        return np.searchsorted(self.starts, at, side="right") - 1

    def relation(self, at: np.ndarray) -> np.ndarray:
        names = np.array([b.relation for b in self.blocks] or [""], dtype=object)
        return names[self.block_of(at)]

    def weight(self, at: np.ndarray) -> np.ndarray:
        """The weight of each edge ``at`` (NaN where its relation carries none)."""
        block = self.block_of(at)
        found = np.full(len(at), np.nan)
        for i in np.unique(block):
            if self.blocks[i].weight is not None:
                these = block == i
                found[these] = self.blocks[i].weight[at[these] - self.starts[i]]
        return found

    def provenance(self, at: np.ndarray) -> np.ndarray:
        """The builder's label of each edge ``at``."""
        block = self.block_of(at)
        found = np.empty(len(at), dtype=object)
        for i in np.unique(block):
            these = block == i
            b = self.blocks[i]
            found[these] = np.asarray(b.labels, dtype=object)[b.codes()[at[these] - self.starts[i]]]
        return found


def followed_adjacency(graph: StudyGraph, followed: tuple[str, ...]) -> tuple[object, FollowedEdges]:
    """The followed edges as a symmetric sparse matrix over node positions, and the edges themselves."""
    from scipy.sparse import csr_matrix

    blocks = tuple(graph.relations[r] for r in followed if r in graph.relations and len(graph.relations[r].src))
    starts = np.cumsum([0, *(len(b.src) for b in blocks)])
    empty = np.array([], dtype=np.int64)
    edges = FollowedEdges(np.concatenate([empty, *(b.src for b in blocks)]),
                          np.concatenate([empty, *(b.dst for b in blocks)]), blocks, starts)  # fmt: skip
    ends = np.concatenate([edges.src, edges.dst]), np.concatenate([edges.dst, edges.src])
    ones = np.ones(len(ends[0]), dtype=np.int8)
    return csr_matrix((ones, ends), shape=(graph.n_nodes, graph.n_nodes)), edges


def keys_at(graph: StudyGraph, positions: np.ndarray) -> np.ndarray:
    """The keys of the nodes at ``positions``, as Python strings: taken from the graph's Arrow keys, so an answer
    naming a few nodes never turns every key of a large graph into a Python string."""
    import pyarrow as pa

    return graph.key_array.take(pa.array(np.asarray(positions, dtype=np.int64))).to_numpy(zero_copy_only=False)


def types_at(graph: StudyGraph, positions: np.ndarray) -> np.ndarray:
    """The node type (its name) of the nodes at ``positions``, from the type ranges."""
    ranges = [(t.value, *graph.type_range(t)) for t in NODE_TYPES]
    starts = np.array([start for _, start, _ in ranges])
    names = np.array([name for name, _, _ in ranges], dtype=object)
    return names[np.searchsorted(starts, np.asarray(positions, dtype=np.int64), side="right") - 1]


def evidence_label(relation: str, weight: float | None, provenance: str | None) -> str:
    """``relation (weight, provenance)``: an edge's relation with what declared it (the metadata table's edges, the
    usual case, say nothing more)."""
    evidence = [f"{weight:g}"] if weight is not None and not pd.isna(weight) else []
    evidence += [provenance] if provenance and provenance != "metadata" else []
    return relation + (f" ({', '.join(evidence)})" if evidence else "")
