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
by networkx's chain decomposition over that component alone (``networkx.bridges``), and the samples on each side of
every bridge at once, from the tree the bridges make between the component's 2-edge-connected parts.

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

import numpy as np
import pandas as pd

from depgraph.errors import DepgraphError
from depgraph.explain.adjacency import FollowedEdges, evidence_label, followed_adjacency, followed_relations
from depgraph.graph.model import StudyGraph
from depgraph.vocab import NODE_TYPES, NodeType

BRIDGE_COLUMNS = ["from_type", "from_id", "relation", "to_type", "to_id", "weight", "provenance", "cut_off", "kept"]


@dataclass(frozen=True)
class GroupMakeup:
    """What :func:`explain` found: the group's samples (``samples``, in node order), its nodes by type
    (``nodes``: type → count), its followed edges by relation (``edges``: relation, count, lowest and highest
    weight), and its ``bridges``: one row per edge whose removal splits it, the samples on the smaller side
    (``cut_off``) and on the other (``kept``), largest split first."""

    sample: str
    relations: tuple[str, ...]
    samples: np.ndarray
    n_graph_samples: int
    nodes: dict[str, int]
    edges: pd.DataFrame
    bridges: pd.DataFrame

    @property
    def n_samples(self) -> int:
        return len(self.samples)

    def lines(self, bridges: int = 10) -> list[str]:
        """The answer in words, the first ``bridges`` bridges shown."""
        share = 100 * self.n_samples / max(self.n_graph_samples, 1)
        lines = [f"group of {self.sample} ({self.n_samples} samples; {share:.0f} % of the graph's "
                 f"{self.n_graph_samples} samples)",
                 "  nodes: " + ", ".join(f"{n} {_plural(t.lower(), n)}" for t, n in self.nodes.items())]  # fmt: skip
        inside = [f"{r.count} {r.relation}" + (f" ({r.lowest:g} to {r.highest:g})" if pd.notna(r.lowest) else "")
                  for r in self.edges.itertuples()]  # fmt: skip
        lines.append("  edges inside: " + (", ".join(inside) or "none"))
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
    return word if n == 1 else word + ("es" if word.endswith(("ch", "s")) else "s")


def explain(
    graph: StudyGraph, sample: str, *, mode: str | None = None, relations: Iterable[str] | None = None
) -> GroupMakeup:
    """The group of ``sample`` over the relations ``mode`` follows (a composite's: ``relations=``, as a spec's
    constraint lists them; by default every relation a grouping can follow): its samples, nodes by type, edges by
    relation and bridges. A sample the graph lacks is ``reference``."""
    followed = followed_relations(mode, relations, "explain")
    if not isinstance(sample, str) or not sample:
        raise DepgraphError("invalid_argument", f"explain takes a sample id as text, not {sample!r}")
    at = int(graph.locate(NodeType.SAMPLE, [sample])[0])
    if at < 0:
        raise DepgraphError("reference", f"explain: the graph has no sample {sample!r}")
    adjacency, edges = followed_adjacency(graph, followed)
    from scipy.sparse.csgraph import breadth_first_order

    nodes = np.sort(breadth_first_order(adjacency, at, directed=True, return_predecessors=False))
    start, stop = graph.type_range(NodeType.SAMPLE)
    samples = nodes[(nodes >= start) & (nodes < stop)]
    inside = np.isin(edges.src, nodes)  # an edge with one end in the component has both there
    kinds = graph.nodes["type"].to_numpy()[nodes]
    counted = {t.value: int((kinds == t.value).sum()) for t in NODE_TYPES if (kinds == t.value).any()}
    bridges = _bridges(graph, adjacency, nodes, edges, (start, stop))
    return GroupMakeup(sample, followed, graph.key_values[samples], stop - start, counted,
                       _edge_counts(edges, inside), bridges)  # fmt: skip


def _edge_counts(edges: FollowedEdges, inside: np.ndarray) -> pd.DataFrame:
    frame = pd.DataFrame({"relation": edges.relation[inside], "weight": edges.weight[inside]})
    return (
        frame.groupby("relation", sort=False)
        .agg(count=("weight", "size"), lowest=("weight", "min"), highest=("weight", "max"))
        .reset_index()
    )


def _bridges(graph: StudyGraph, adjacency: object, nodes: np.ndarray, edges: FollowedEdges,
             samples: tuple[int, int]) -> pd.DataFrame:  # fmt: skip
    """Every bridge of the component ``nodes``, with the samples on each side, largest smaller side first."""
    import networkx as nx
    from scipy.sparse.csgraph import breadth_first_order, connected_components

    sub = adjacency[nodes][:, nodes].tocsr()
    found = np.array(sorted(tuple(sorted(e)) for e in nx.bridges(nx.from_scipy_sparse_array(sub))), dtype=np.int64)
    if not len(found):
        return pd.DataFrame(columns=BRIDGE_COLUMNS)
    # without the bridges the component falls into 2-edge-connected parts; the bridges join them as a tree
    cut = sub.tolil()
    cut[found[:, 0], found[:, 1]] = 0
    cut[found[:, 1], found[:, 0]] = 0
    _, part = connected_components(cut.tocsr(), directed=False)
    is_sample = (nodes >= samples[0]) & (nodes < samples[1])
    weight = np.bincount(part, weights=is_sample, minlength=part.max() + 1)
    from scipy.sparse import coo_matrix

    ends = part[found]
    tree = coo_matrix((np.ones(2 * len(ends)), (np.r_[ends[:, 0], ends[:, 1]], np.r_[ends[:, 1], ends[:, 0]])),
                      shape=(len(weight),) * 2).tocsr()  # fmt: skip
    order, parent = breadth_first_order(tree, 0, directed=False, return_predecessors=True)
    below = weight.copy()
    for p in order[:0:-1]:  # leaves first: each part's samples with those of the parts below it
        below[parent[p]] += below[p]
    child = np.where(parent[ends[:, 0]] == ends[:, 1], ends[:, 0], ends[:, 1])
    side = below[child].astype(np.int64)
    total = int(is_sample.sum())
    return _bridge_table(graph, nodes[found], np.minimum(side, total - side), edges, total)


def _bridge_table(graph: StudyGraph, ends: np.ndarray, cut_off: np.ndarray, edges: FollowedEdges,
                  total: int) -> pd.DataFrame:  # fmt: skip
    kinds = graph.nodes["type"].to_numpy()
    keys = graph.key_values
    rows = []
    for (u, v), n in zip(ends, cut_off, strict=True):
        at = int(np.flatnonzero(((edges.src == u) & (edges.dst == v)) | ((edges.src == v) & (edges.dst == u)))[0])
        u, v = (edges.src[at], edges.dst[at])
        weight = float(edges.weight[at])
        rows.append((kinds[u], keys[u], edges.relation[at], kinds[v], keys[v], None if np.isnan(weight) else weight,
                     edges.provenance[at], int(n), total - int(n)))  # fmt: skip
    table = pd.DataFrame(rows, columns=BRIDGE_COLUMNS)
    table = table[table["cut_off"] > 0]  # a bridge to nodes without samples (a batch of one sample) splits no samples
    return table.sort_values(["cut_off", "from_id", "to_id"], ascending=[False, True, True], kind="stable").reset_index(
        drop=True
    )
