"""The followed edges of a graph as one sparse adjacency: what :mod:`~depgraph.explanation.paths` and
:mod:`~depgraph.explanation.groups` search.

A grouping follows some relations (a mode's, a spec's constraint's, or every relation a grouping can follow);
their edges, over the graph's node positions, make one ``scipy.sparse`` matrix holding each edge once, from its
source's row to its target's column, that ``scipy.sparse.csgraph`` searches as undirected (``directed=False``) in
time linear in the edges. Each edge is held once, not in both directions, because at biobank scale building the
matrix is most of an answer's time and memory. The edges themselves are kept beside it, in the vocabulary's relation
order, so a step found in the matrix is told by its relation, weight and provenance.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

import numpy as np
import pandas as pd

from depgraph.errors import DepgraphError, describe_ids
from depgraph.graph.model import StudyGraph
from depgraph.graph.pieces import RelationEdges
from depgraph.vocab import COMBINABLE_MODES, MODE, NODE_TYPE_BY_PREFIX, NODE_TYPES, NodeType, relation_names


def followed_relations(mode: str | None, relations: Iterable[str] | None, what: str) -> tuple[str, ...]:
    """The relations ``mode`` follows, or ``relations`` (checked), or every relation a grouping can follow (not the
    outcome relations: two samples of one outcome are not dependent), in the vocabulary's order."""
    dependencies = relation_names(COMBINABLE_MODES)
    if mode is not None and relations is not None:
        raise DepgraphError("invalid_argument", f"{what}: give a mode or the relations it follows, not both")
    if mode is not None:
        if not isinstance(mode, str) or mode not in MODE or MODE[mode].kind == "composite":
            modes = [m for m in MODE if MODE[m].kind != "composite"]
            raise DepgraphError("invalid_argument", f"{what}: mode {mode!r} is not one of {', '.join(modes)} (for a "
                                "composite, give the relations its spec lists)")  # fmt: skip
        return relation_names([mode])
    if relations is None:
        return dependencies
    names = [relations] if isinstance(relations, str) else list(relations) if isinstance(relations, Iterable) else []
    wrong = [r for r in names if not isinstance(r, str) or r not in dependencies]
    if wrong or not names:
        given = describe_ids(wrong) if wrong else "none"
        raise DepgraphError("invalid_argument", f"{what}: relations are one or more of the relations a grouping "
                            f"follows ({', '.join(dependencies)}), not {given}")  # fmt: skip
    return tuple(r for r in dependencies if r in names)


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


def followed_adjacency(graph: StudyGraph, followed: tuple[str, ...], what: str,
                       samples: np.ndarray | None = None) -> tuple[object, FollowedEdges]:  # fmt: skip
    """The followed edges as a sparse matrix over node positions (each edge once: search it with
    ``directed=False``), and the edges themselves; with
    ``samples`` (sample positions), the graph those samples induce: edges touching another sample are left out.
    A graph without any edge of the followed relations is ``no_relation``: whether its samples depend on each other
    through them is unknown, not "no"."""
    from scipy.sparse import csr_matrix

    blocks = tuple(graph.relations[r] for r in followed if r in graph.relations and len(graph.relations[r].src))
    if not blocks:
        raise DepgraphError("no_relation", f"{what}: the graph declares no {' or '.join(followed)} edge: whether its "
                            "samples depend on each other through them is unknown")  # fmt: skip
    if samples is not None:
        start, stop = graph.type_range(NodeType.SAMPLE)
        dropped = np.zeros(graph.n_nodes, dtype=bool)
        dropped[start:stop] = True
        dropped[samples] = False
        blocks = tuple(_without(b, dropped) for b in blocks)
    starts = np.cumsum([0, *(len(b.src) for b in blocks)])
    src, dst = (np.concatenate([getattr(b, end) for b in blocks], dtype=np.intp) for end in ("src", "dst"))
    edges = FollowedEdges(src, dst, blocks, starts)
    ones = np.ones(len(src))  # float64, what csgraph searches: no copy of it there
    return csr_matrix((ones, (src, dst)), shape=(graph.n_nodes, graph.n_nodes)), edges


def _without(block: RelationEdges, dropped: np.ndarray) -> RelationEdges:
    """The block without the edges touching a dropped node."""
    from dataclasses import replace

    keep = ~(dropped[block.src] | dropped[block.dst])
    if keep.all():
        return block
    return replace(block, src=block.src[keep], dst=block.dst[keep],
                   weight=None if block.weight is None else block.weight[keep],
                   label_codes=None if block.label_codes is None else block.label_codes[keep])  # fmt: skip


def unlinked(edges: FollowedEdges, positions: list[int]) -> list[int]:
    """Which of ``positions`` (a few) no followed edge touches."""
    return [p for p in positions if not ((edges.src == p).any() or (edges.dst == p).any())]


def read_ids(ids: object, what: str) -> list[str]:
    """Ids as every reader reads them (:func:`~depgraph.common.identifiers.normalise_keys`: ``1.0`` is ``"1"``,
    blanks trimmed); a missing or blank one is ``missing_id``, none at all or what is not ids ``invalid_argument``."""
    from depgraph.common.identifiers import normalise_keys

    listed = [ids] if isinstance(ids, (str, int, float)) else ids
    if isinstance(listed, (bytes, dict)) or not isinstance(listed, Iterable):
        raise DepgraphError("invalid_argument", f"{what} takes ids, not {type(ids).__name__}")
    keys = normalise_keys(pd.Series(list(listed), dtype=object), what)
    if not len(keys):
        raise DepgraphError("invalid_argument", f"{what}: give one or more ids")
    if keys.isna().any():
        raise DepgraphError("missing_id", f"{what}: an id is missing or blank (at position "
                            f"{int(np.flatnonzero(keys.isna().to_numpy())[0])})")  # fmt: skip
    return [str(k) for k in keys]


def find_nodes(graph: StudyGraph, keys: list[str], types: list[NodeType]) -> np.ndarray:
    """Node positions of ``keys`` in each of ``types`` (one row a type, -1 where a type has no such key). A key no
    type has is also read as a node id, ``<type prefix>:<key>`` (``sample:S1``), as ``samples=`` reads ids."""
    found = np.stack([graph.locate(t, keys) for t in types])
    for i, key in enumerate(keys):
        prefix, _, rest = key.partition(":")
        kind = NODE_TYPE_BY_PREFIX.get(prefix)
        if rest and kind in types and (found[:, i] < 0).all():
            found[types.index(kind), i] = graph.locate(kind, [rest])[0]
    return found


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


def weight_column(weight: np.ndarray) -> pd.Series:
    """Edge weights as a table column: the number, or None where the relation carries none (JSON's null)."""
    return pd.Series(weight, dtype=object).where(~np.isnan(weight), None)


def evidence_label(relation: str, weight: float | None, provenance: str | None) -> str:
    """``relation (weight, provenance)``: an edge's relation with what declared it (the metadata table's edges, the
    usual case, say nothing more)."""
    evidence = [f"{weight:g}"] if weight is not None and not pd.isna(weight) else []
    evidence += [provenance] if provenance and provenance != "metadata" else []
    return relation + (f" ({', '.join(evidence)})" if evidence else "")
