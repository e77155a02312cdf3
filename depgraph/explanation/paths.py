"""Why two samples are never apart: the shortest chains of declared dependencies that join them.

A grouping keeps two samples on one side of every split exactly when a chain of the relations it follows joins
them. :func:`why` finds that chain, each step with its relation and its evidence (the kinship value, the duplicate
audit's similarity, the builder that declared the edge)::

    chain 1: sample S1
        -> subject P1   sample_belongs_to_subject
        -- subject P2   subject_related_to (0.25, kinship:pairs)
        <- sample S7   sample_belongs_to_subject

or says that no chain exists: under that grouping the two are free to be apart.

The followed edges become one sparse adjacency over the graph's node positions, searched as undirected; one
breadth-first search from the first node (``scipy.sparse.csgraph``) finds a shortest chain, in time and memory
linear in the edges, never over pairs of samples. Further chains (``all_paths=K``) are searched with Yen's
algorithm (``networkx.shortest_simple_paths``) among the nodes that lie on some chain at most ``extra`` steps
longer than the shortest (found from both ends' distances), ``extra`` doubling until K chains are found or the
whole component is searched — every chain that short passes only those nodes, so the K found are the K shortest.
Past :data:`MOST_NODES_SEARCHED` nodes the search stops and the answer says so (``note``) rather than pretending it
found every chain. Two nodes joined by several relations are one step, shown by the first of them in the
vocabulary's order. Chains of equal length come in the order of their nodes' positions: the same answer on every
run.

>>> import pandas as pd
>>> from depgraph import add_kinship, from_metadata
>>> g = from_metadata(pd.DataFrame({"sample_id": ["S1", "S2", "S3"], "subject_id": ["P1", "P2", "P3"]}))
>>> g = add_kinship(g, pd.DataFrame({"id1": ["P1"], "id2": ["P2"], "kinship": [0.25]}), "first")
>>> print(why(g, "S1", "S2"))
S1 and S2 are joined by 1 chain of declared dependencies (3 steps); they are never apart:
  chain 1: sample S1
      -> subject P1   sample_belongs_to_subject
      -- subject P2   subject_related_to (0.25, kinship:pairs)
      <- sample S2   sample_belongs_to_subject
>>> print(why(g, "S1", "S3", mode="relatedness"))
S1 and S3: no chain of declared dependencies joins them; they are free to be apart
  relations followed: sample_belongs_to_subject, subject_related_to
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from itertools import islice, pairwise

import numpy as np
import pandas as pd

from depgraph.common.arguments import instance
from depgraph.errors import DepgraphError
from depgraph.explanation.adjacency import (
    FollowedEdges,
    evidence_label,
    find_nodes,
    followed_adjacency,
    followed_relations,
    keys_at,
    read_ids,
    types_at,
    unlinked,
    weight_column,
)
from depgraph.explanation.trees import SearchTree, depths, search
from depgraph.graph.model import StudyGraph, node_type_named
from depgraph.vocab import NODE_TYPES, RELATION, NodeType

#: The most nodes among which further chains are searched (``all_paths``); past it the answer says so.
MOST_NODES_SEARCHED = 20_000
CHAIN_COLUMNS = ["chain", "step", "from_type", "from_id", "relation", "to_type", "to_id", "weight", "provenance"]


@dataclass(frozen=True)
class Chains:
    """What :func:`why` found: ``table``, one row per step of each chain (``chain`` and ``step`` from 1, the
    step's ends in walking order from ``a`` to ``b``, its relation, ``weight`` and ``provenance``); empty when no
    chain joins them. ``note`` says when further chains were not searched to the end; ``unlinked`` names an end no
    followed edge touches (unknown, not free)."""

    a: str
    b: str
    node_type: str
    relations: tuple[str, ...]
    table: pd.DataFrame
    note: str | None = None
    unlinked: tuple[str, ...] = ()

    @property
    def connected(self) -> bool:
        return not self.table.empty

    @property
    def n_chains(self) -> int:
        return int(self.table["chain"].nunique())

    def lines(self) -> list[str]:
        """The answer in words: a headline, then each chain on one line."""
        if not self.connected:
            followed = f"  relations followed: {', '.join(self.relations)}"
            if self.unlinked:
                alone = " and ".join(self.unlinked) + (" has" if len(self.unlinked) == 1 else " have")
                return [f"{self.a} and {self.b}: {alone} no edge of the relations followed: whether they depend on "
                        "each other is unknown, not free", followed]  # fmt: skip
            return [f"{self.a} and {self.b}: no chain of declared dependencies joins them; they are free to be apart",
                    followed]  # fmt: skip
        steps = self.table.groupby("chain").size()
        lengths = f"{steps.min()} steps" if steps.min() == steps.max() else f"{steps.min()} to {steps.max()} steps"
        plural = "chain" if self.n_chains == 1 else "chains"
        lines = [f"{self.a} and {self.b} are joined by {self.n_chains} {plural} of declared dependencies "
                 f"({lengths}); they are never apart:"]  # fmt: skip
        for chain, rows in self.table.groupby("chain", sort=True):
            first, *steps = _chain_lines(rows)
            lines += [f"  chain {chain}: {first}", *(f"    {step}" for step in steps)]
        if self.note:
            lines.append(f"  ({self.note})")
        return lines

    def __str__(self) -> str:
        return "\n".join(self.lines())


#: The most chains ``all_paths`` may ask for: Yen's algorithm costs a shortest-path search per chain found.
MOST_CHAINS = 100


def why(
    graph: StudyGraph, a: str, b: str, *, mode: str | None = None, relations: Iterable[str] | None = None,
    all_paths: int = 1, node_type: NodeType | str | None = None, samples: Iterable[str] | None = None,
) -> Chains:  # fmt: skip
    """The shortest chains (up to ``all_paths``) of declared dependencies joining nodes ``a`` and ``b`` of one type
    (samples, unless the keys name another type or ``node_type`` says), over the relations ``mode`` follows (a
    composite's: ``relations=``, as a spec's constraint lists them), or every relation a grouping can follow (not
    the outcome relations: two samples of one outcome are not dependent); with ``samples``, in the graph those
    samples induce (a spec's samples: edges through the other samples are not the spec's).

    An end no followed edge touches is named in ``unlinked``: whether it depends on the other is unknown, which
    the answer says rather than "free to be apart". Refused: a key the graph lacks (``reference``); keys of two
    types, or one key of several types without ``node_type`` (``invalid_argument``, ``ambiguity``); ``a`` equal to
    ``b``; ``all_paths`` outside 1 to :data:`MOST_CHAINS`; a graph without any edge of the followed relations
    (``no_relation``)."""
    instance(graph, StudyGraph, "why: the graph")
    a, b = read_ids([a, b], "why")
    check_request(a, b, all_paths)
    followed = followed_relations(mode, relations, "why")
    kind, (ia, ib) = _located(graph, [a, b], node_type)
    kept = None if samples is None else graph.locate(NodeType.SAMPLE, list(samples))
    adjacency, edges = followed_adjacency(graph, followed, "why", None if kept is None else kept[kept >= 0])
    paths, note = _paths(adjacency, ia, ib, all_paths)
    table = _steps(graph, paths, edges)
    alone = tuple(key for key, at in ((a, ia), (b, ib)) if at in unlinked(edges, [ia, ib]))
    return Chains(str(a), str(b), kind.value, followed, table, note, alone)


def check_request(a: object, b: object, all_paths: object) -> None:
    """Two different ids as text, and a number of chains from 1 to :data:`MOST_CHAINS`."""
    for key in (a, b):
        if not isinstance(key, str) or not key:
            raise DepgraphError("invalid_argument", f"why takes two ids as text, not {key!r}")
    if a == b:
        raise DepgraphError("invalid_argument", f"why: {a!r} twice; give two different ids")
    instance(all_paths, int, "why: all_paths")
    if isinstance(all_paths, bool) or not 1 <= all_paths <= MOST_CHAINS:  # type: ignore[operator]
        raise DepgraphError("invalid_argument", f"why: all_paths takes 1 to {MOST_CHAINS} chains, not {all_paths!r}")


def _located(graph: StudyGraph, keys: list[str], node_type: NodeType | str | None) -> tuple[NodeType, list[int]]:
    """The type both keys are of, and their node positions."""
    types = [node_type_named(node_type)] if node_type is not None else list(NODE_TYPES)
    found = dict(zip(types, find_nodes(graph, keys, types), strict=True))
    for i, key in enumerate(keys):
        if not any(at[i] >= 0 for at in found.values()):
            where = f"no {types[0].value.lower()}" if node_type is not None else "no node"
            raise DepgraphError("reference", f"why: the graph has {where} {key!r}")
    both = [t for t, at in found.items() if (at >= 0).all()]
    if not both:
        of = [", ".join(t.value.lower() for t, at in found.items() if at[i] >= 0) for i in range(2)]
        raise DepgraphError("invalid_argument", f"why joins two nodes of one type: {keys[0]!r} is a {of[0]}, "
                            f"{keys[1]!r} a {of[1]}")  # fmt: skip
    if len(both) > 1 and NodeType.SAMPLE not in both:
        types = ", ".join(t.value.lower() for t in both)
        raise DepgraphError("ambiguity", f"why: {keys[0]!r} and {keys[1]!r} are ids of {types} nodes; say which "
                            "(node_type, --type)")  # fmt: skip
    kind = NodeType.SAMPLE if NodeType.SAMPLE in both else both[0]
    return kind, [int(p) for p in found[kind]]


def _paths(adjacency: object, ia: int, ib: int, wanted: int) -> tuple[list[list[int]], str | None]:
    """Up to ``wanted`` shortest simple paths from ``ia`` to ``ib`` (node positions), and a note when longer
    chains were not searched."""
    tree = search(adjacency, ia)
    before = tree.parent
    if before[ib] < 0:
        return [], None
    shortest = [ib]
    while shortest[-1] != ia:
        shortest.append(int(before[shortest[-1]]))
    shortest.reverse()
    if wanted == 1:
        return [shortest], None
    return _more_paths(adjacency, tree, shortest, wanted)


def _more_paths(adjacency: object, tree: SearchTree, shortest: list[int],
                wanted: int) -> tuple[list[list[int]], str | None]:  # fmt: skip
    """Yen's algorithm among the nodes on chains at most ``extra`` steps longer than ``shortest`` (``tree``: the
    search from its first node), widening while fewer than ``wanted`` chains are found and the nodes stay few
    enough."""
    import networkx as nx

    ia, ib, length = shortest[0], shortest[-1], len(shortest) - 1
    from_a, from_b = depths(tree), depths(search(adjacency, ib))  # steps from either end: both breadth-first
    reachable = int(np.count_nonzero(from_a >= 0))
    through = np.where(from_a >= 0, from_a + from_b, np.iinfo(np.int32).max)
    found, extra = [shortest], 0
    while True:
        nodes = np.flatnonzero(through <= length + extra)
        if len(nodes) > MOST_NODES_SEARCHED:
            crowded = f"more than {MOST_NODES_SEARCHED:,} nodes lie on chains of {length + extra} steps"
            return found, _unsearched(len(found), wanted, f"longer ones, if any, were not searched: {crowded}")
        sub = nx.from_scipy_sparse_array(adjacency[nodes][:, nodes])
        start, stop = (int(np.searchsorted(nodes, i)) for i in (ia, ib))
        candidates = islice(nx.shortest_simple_paths(sub, start, stop), wanted + 100)
        whole = len(nodes) == reachable  # every node of the component: every chain is here, however long
        kept = [[int(nodes[i]) for i in p] for p in candidates if whole or len(p) - 1 <= length + extra]
        found = sorted(kept, key=lambda p: (len(p), p))[:wanted]
        if len(found) >= wanted or whole:
            return found, None
        extra = 2 * extra or 1


def _unsearched(n_found: int, wanted: int, why: str) -> str:
    return f"{n_found} of the {wanted} chains asked for: {why}"


def _steps(graph: StudyGraph, paths: list[list[int]], edges: FollowedEdges) -> pd.DataFrame:
    """One row per step of each path: its ends (type and key), and the first followed edge joining them — found
    among the edges between the paths' nodes only (one pass over the edges, then a lookup per step)."""
    ends = np.array([(u, v) for path in paths for u, v in pairwise(path)], dtype=np.int64).reshape(-1, 2)
    on_path = np.zeros(graph.n_nodes, dtype=bool)
    on_path[ends.ravel()] = True
    between = np.flatnonzero(on_path[edges.src] & on_path[edges.dst])
    first: dict[tuple[int, int], int] = {}
    for at, u, v in zip(between.tolist(), edges.src[between].tolist(), edges.dst[between].tolist(), strict=True):
        first.setdefault((min(u, v), max(u, v)), at)
    at = np.array([first[(min(u, v), max(u, v))] for u, v in ends.tolist()], dtype=np.int64)
    weight = edges.weight(at)
    return pd.DataFrame({
        "chain": np.repeat(np.arange(1, len(paths) + 1), [len(p) - 1 for p in paths]),
        "step": np.concatenate([np.arange(1, len(p)) for p in paths] or [np.array([], dtype=np.int64)]),
        "from_type": types_at(graph, ends[:, 0]), "from_id": keys_at(graph, ends[:, 0]), "relation": edges.relation(at),
        "to_type": types_at(graph, ends[:, 1]), "to_id": keys_at(graph, ends[:, 1]),
        "weight": weight_column(weight),
        "provenance": edges.provenance(at),
    }, columns=CHAIN_COLUMNS)  # fmt: skip


def _chain_lines(rows: pd.DataFrame) -> list[str]:
    """The chain's first node, then one line a step: the arrow of the relation's direction (``--`` for an
    undirected one), the node reached, and the relation with its evidence."""
    first = rows.iloc[0]
    lines = [f"{first['from_type'].lower()} {first['from_id']}"]
    for row in rows.itertuples(index=False):
        rule = RELATION[row.relation]
        label = evidence_label(row.relation, row.weight, row.provenance)
        forward = rule.source.value == row.from_type
        arrow = "--" if not rule.directed else ("->" if forward else "<-")
        lines.append(f"  {arrow} {row.to_type.lower()} {row.to_id}   {label}")
    return lines
