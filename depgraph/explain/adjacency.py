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
from depgraph.vocab import COMBINABLE_MODES, MODE, RELATION, RELATIONS, relation_names


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
    """The followed edges, concatenated in the vocabulary's relation order."""

    src: np.ndarray
    dst: np.ndarray
    relation: np.ndarray  # the relation's name, per edge (object)
    weight: np.ndarray
    provenance: np.ndarray  # the builder's label, per edge (object)


def followed_adjacency(graph: StudyGraph, followed: tuple[str, ...]) -> tuple[object, FollowedEdges]:
    """The followed edges as a symmetric sparse matrix over node positions, and the edges themselves."""
    from scipy.sparse import csr_matrix

    blocks = [graph.relations[r] for r in followed if r in graph.relations and len(graph.relations[r].src)]
    if blocks:
        edges = FollowedEdges(
            np.concatenate([b.src for b in blocks]), np.concatenate([b.dst for b in blocks]),
            np.concatenate([np.full(len(b.src), b.relation, dtype=object) for b in blocks]),
            np.concatenate([b.weights() for b in blocks]),
            np.concatenate([np.asarray(b.labels, dtype=object)[b.codes()] for b in blocks]),
        )  # fmt: skip
    else:
        empty = np.array([], dtype=np.int64)
        edges = FollowedEdges(empty, empty, empty.astype(object), empty.astype(float), empty.astype(object))
    ends = np.concatenate([edges.src, edges.dst]), np.concatenate([edges.dst, edges.src])
    ones = np.ones(len(ends[0]), dtype=np.int8)
    return csr_matrix((ones, ends), shape=(graph.n_nodes, graph.n_nodes)), edges


def evidence_label(relation: str, weight: float | None, provenance: str | None) -> str:
    """``relation (weight, provenance)``: an edge's relation with what declared it (the metadata table's edges, the
    usual case, say nothing more)."""
    evidence = [f"{weight:g}"] if weight is not None and not pd.isna(weight) else []
    evidence += [provenance] if provenance and provenance != "metadata" else []
    return relation + (f" ({', '.join(evidence)})" if evidence else "")
