"""What holds a group together: its composition, and the bridges whose removal would split it.

A component grouping puts two samples in one group when a chain of followed relations joins them, so one weak edge
— a kinship of 0.09, one mis-declared batch — can glue two families, or a cohort, into one group. :func:`explain`
gives a sample's group (its connected component over the followed relations: what a component mode derives; for a
direct mode, the samples of its target), what it is made of, and its **bridges**: the edges whose removal would
split its samples, each with the samples on either side, largest split first::

    group of S1 (6 samples; 60 % of the graph's 10 samples)
      nodes: 6 samples, 3 subjects
      edges inside: 6 sample_belongs_to_subject, 2 subject_related_to (0.09 to 0.25)
      bridges, largest split first (4; removing one splits the group):
        subject P2 -- subject P3   subject_related_to (0.09, kinship:pairs): 3 samples | 3 samples
        …

The component is found by one breadth-first search over the sparse adjacency (``scipy.sparse.csgraph``); the bridges
and the samples on either side of each from that search's tree (:mod:`~depgraph.explanation.trees`), each edge
outside it covering the tree's path between its ends (:func:`_bridges` says why that suffices), in numpy passes over
the group's edges and nodes.

>>> import pandas as pd
>>> from depgraph import add_kinship, from_metadata
>>> g = from_metadata(pd.DataFrame({"sample_id": ["S1", "S2", "S3", "S4"], "subject_id": ["P1", "P1", "P2", "P2"]}))
>>> g = add_kinship(g, pd.DataFrame({"id1": ["P1"], "id2": ["P2"], "kinship": [0.09]}), 0.05)
>>> found = explain(g, "S1", mode="relatedness")
>>> found.n_samples, found.bridges[["from_id", "to_id", "cut_off", "kept"]].values.tolist()[0]
(4, ['P1', 'P2', 2, 2])
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from functools import cached_property

import numpy as np
import pandas as pd
import pyarrow as pa

from depgraph.common.arguments import instance
from depgraph.common.display import share
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
    weight_column,
)
from depgraph.explanation.trees import SearchTree, common_ancestors, search, subtree_sums
from depgraph.graph.model import StudyGraph
from depgraph.vocab import NODE_TYPES, NodeType

BRIDGE_COLUMNS = ["from_type", "from_id", "relation", "to_type", "to_id", "weight", "provenance", "cut_off", "kept"]


@dataclass(frozen=True)
class GroupMakeup:
    """What :func:`explain` found: the group's samples (``samples``, in node order; ``sample_keys`` in Arrow),
    its nodes by type (``nodes``: type → count), its followed edges by relation (``edges``: relation, count, lowest
    and highest weight), and its ``bridges``: one row per edge whose removal splits it, the samples on the smaller
    side (``cut_off``) and on the other (``kept``), largest split first."""

    sample: str
    relations: tuple[str, ...]
    sample_keys: pa.Array  # the samples' keys in Arrow: a million of them are not made Python strings unless asked
    n_graph_samples: int
    nodes: dict[str, int]
    edges: pd.DataFrame
    bridges: pd.DataFrame

    @cached_property
    def samples(self) -> np.ndarray:
        """The group's sample ids, in node order."""
        return self.sample_keys.to_numpy(zero_copy_only=False)

    @property
    def n_samples(self) -> int:
        return len(self.sample_keys)

    def lines(self, bridges: int = 10) -> list[str]:
        """The answer in words, the first ``bridges`` bridges shown."""
        part = share(self.n_samples / max(self.n_graph_samples, 1)).replace("%", " %")
        lines = [f"group of {self.sample} ({_samples(self.n_samples)}; {part} of the graph's "
                 f"{self.n_graph_samples} samples)",
                 "  nodes: " + ", ".join(f"{n} {_plural(t.lower(), n)}" for t, n in self.nodes.items())]  # fmt: skip
        inside = [f"{r.count} {r.relation}" + (f" ({r.lowest:g} to {r.highest:g})" if pd.notna(r.lowest) else "")
                  for r in self.edges.itertuples()]  # fmt: skip
        lines.append("  edges inside: " + (", ".join(inside) or "none"))
        if self.edges.empty:
            lines.append(f"  {self.sample} has no edge of the relations followed: its dependencies through them are "
                         "unknown, not none")  # fmt: skip
            return lines
        if self.bridges.empty:
            lines.append("  no bridge: no single edge's removal would split the group")
            return lines
        lines.append(f"  bridges, largest split first ({len(self.bridges)}; removing one splits the group):")
        for row in self.bridges.head(bridges).itertuples():
            label = evidence_label(row.relation, row.weight, row.provenance)
            lines.append(f"    {row.from_type.lower()} {row.from_id} -- {row.to_type.lower()} {row.to_id}   {label}: "
                         f"{_samples(row.cut_off)} | {_samples(row.kept)}")  # fmt: skip
        if len(self.bridges) > bridges:
            lines.append(f"    … and {len(self.bridges) - bridges} more")
        return lines

    def __str__(self) -> str:
        return "\n".join(self.lines())


def _samples(n: int) -> str:
    return f"{n} {_plural('sample', n)}"


def _plural(word: str, n: int) -> str:
    if n == 1:
        return word
    if word.endswith("y"):
        return word[:-1] + "ies"  # study, studies
    return word + ("es" if word.endswith(("ch", "s")) else "s")


def explain(
    graph: StudyGraph, sample: str, *, mode: str | None = None, relations: Iterable[str] | None = None,
    samples: Iterable[str] | None = None,
) -> GroupMakeup:  # fmt: skip
    """The group of ``sample`` over the relations ``mode`` follows (a composite's: ``relations=``, as a spec's
    constraint lists them; by default every relation a grouping can follow): its samples, nodes by type, edges by
    relation and bridges; with ``samples``, in the graph those samples induce (a spec's samples). A sample the
    graph lacks is ``reference``; a graph without any edge of the followed relations ``no_relation``."""
    instance(graph, StudyGraph, "explain: the graph")
    followed = followed_relations(mode, relations, "explain")
    if isinstance(sample, (list, tuple, set)):
        raise DepgraphError("invalid_argument", f"explain takes one sample id, not {type(sample).__name__}")
    (sample,) = read_ids(sample, "explain")
    at = int(find_nodes(graph, [sample], [NodeType.SAMPLE])[0, 0])
    if at < 0:
        raise DepgraphError("reference", f"explain: the graph has no sample {sample!r}")
    kept = None if samples is None else graph.locate(NodeType.SAMPLE, list(samples))
    adjacency, edges = followed_adjacency(graph, followed, "explain", None if kept is None else kept[kept >= 0])
    tree = search(adjacency, at)
    in_group = tree.members
    start, stop = graph.type_range(NodeType.SAMPLE)
    samples = start + np.flatnonzero(in_group[start:stop])  # in node order
    inside = in_group[edges.src]  # an edge with one end in the component has both there
    counted = {t.value: int(np.count_nonzero(in_group[slice(*graph.type_range(t))])) for t in NODE_TYPES}
    counted = {t: n for t, n in counted.items() if n}
    bridges = _bridges(graph, tree, edges, np.flatnonzero(inside), (start, stop))
    return GroupMakeup(sample, followed, graph.key_array.take(pa.array(samples)), stop - start, counted,
                       _edge_counts(edges, inside), bridges)  # fmt: skip


def _edge_counts(edges: FollowedEdges, inside: np.ndarray) -> pd.DataFrame:
    """Per followed relation with edges in the group: how many, and their lowest and highest weight."""
    rows = []
    for i, block in enumerate(edges.blocks):
        held = inside[edges.starts[i] : edges.starts[i + 1]]
        weights = block.weights()[held] if block.weight is not None else np.array([])
        weights = weights[~np.isnan(weights)]
        if held.any():
            rows.append((block.relation, int(held.sum()), weights.min() if len(weights) else np.nan,
                         weights.max() if len(weights) else np.nan))  # fmt: skip
    return pd.DataFrame(rows, columns=["relation", "count", "lowest", "highest"])


def _bridges(graph: StudyGraph, tree: SearchTree, edges: FollowedEdges, inside: np.ndarray,
             samples: tuple[int, int]) -> pd.DataFrame:  # fmt: skip
    """Every edge of the component (``inside``: its edges' positions) whose removal splits its samples, with the
    samples on each side.

    Every edge outside a spanning tree closes a cycle: the tree's path between its ends, through their lowest
    common ancestor. A tree edge is a bridge exactly when no such cycle runs through it. Each other edge adds one at
    both its ends and takes two away at their common ancestor, so a tree edge (a node and its parent) lies on a
    cycle exactly when the node's subtree sums to more than zero. The samples in the subtree are one side of the
    split. Two relations joining one pair of nodes are two edges, so neither is a bridge."""
    parent = tree.parent
    every = len(inside) == len(edges.src)  # the whole graph one group: no copy of its edges
    src, dst = (edges.src, edges.dst) if every else (edges.src[inside], edges.dst[inside])
    down = parent[dst] == src
    candidate = np.flatnonzero(down | (parent[src] == dst))
    child = np.where(down, dst, src)
    in_tree = _first_per_child(candidate, child[candidate], len(parent))
    other = np.ones(len(inside), dtype=bool)
    other[in_tree] = False
    meet = common_ancestors(tree, src, dst, other)
    n = len(parent)
    ends = np.bincount(src, minlength=n) + np.bincount(dst, minlength=n)  # every edge's ends, less the tree's
    ends -= np.bincount(src[in_tree], minlength=n) + np.bincount(dst[in_tree], minlength=n)
    cover = ends - 2 * np.bincount(meet, minlength=n)
    nodes = np.arange(n)
    below = ((nodes >= samples[0]) & (nodes < samples[1])).astype(np.int64)
    cover, below = subtree_sums(tree, cover), subtree_sums(tree, below)
    bridge = in_tree[cover[child[in_tree]] == 0]
    total = int(below[tree.root])
    side = below[child[bridge]]
    cut_off = np.minimum(side, total - side)
    keep = cut_off > 0  # a bridge to nodes without samples (a batch of one sample) splits no samples
    return _bridge_table(graph, inside[bridge[keep]], cut_off[keep], edges, total)


def _first_per_child(candidate: np.ndarray, child: np.ndarray, n: int) -> np.ndarray:
    """One edge per tree link (``candidate``: the edges joining a node to its parent, ``child`` that node), the
    first of parallel ones."""
    if np.bincount(child, minlength=n).max(initial=0) <= 1:  # no parallel edges: every candidate
        return candidate
    _, first = np.unique(child, return_index=True)
    return candidate[np.sort(first)]


def _bridge_table(graph: StudyGraph, at: np.ndarray, cut_off: np.ndarray, edges: FollowedEdges,
                  total: int) -> pd.DataFrame:  # fmt: skip
    src, dst = edges.src[at], edges.dst[at]
    weight = edges.weight(at)
    table = pd.DataFrame({"from_type": types_at(graph, src), "from_id": keys_at(graph, src),
                          "relation": edges.relation(at), "to_type": types_at(graph, dst), "to_id": keys_at(graph, dst),
                          "weight": weight_column(weight),
                          "provenance": edges.provenance(at), "cut_off": cut_off.astype(np.int64),
                          "kept": (total - cut_off).astype(np.int64)}, columns=BRIDGE_COLUMNS)  # fmt: skip
    return table.sort_values(["cut_off", "from_id", "to_id"], ascending=[False, True, True], kind="stable").reset_index(
        drop=True
    )
