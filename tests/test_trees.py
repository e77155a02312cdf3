"""The numpy passes over a breadth-first tree (depgraph/explanation/trees.py), checked against networkx on random
graphs: depths are networkx's shortest path lengths, common ancestors networkx's lowest common ancestors of the
same tree, subtree sums the values summed over networkx's descendants. Trees up to 80 levels deep, so that every
power of two is climbed."""

from __future__ import annotations

import networkx as nx
import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.sparse import csr_matrix

from depgraph.explanation.trees import PAIRS_AT_ONCE, common_ancestors, depths, search, subtree_sums


@st.composite
def graphs(draw):
    """A path of n nodes with random chords and a few nodes left apart: edges once each, in either direction."""
    n = draw(st.integers(2, 80))
    edges = [(i, i + 1) for i in range(n - 1)]
    edges += draw(st.lists(st.tuples(st.integers(0, n - 1), st.integers(0, n - 1)), max_size=12))
    edges = sorted({(a, b) for a, b in edges if a != b})
    apart = draw(st.lists(st.integers(0, n - 1), max_size=3))  # cut off from the rest: outside the tree
    edges = [(a, b) for a, b in edges if a not in apart and b not in apart]
    root = draw(st.sampled_from([v for v in range(n) if v not in apart] or [0]))
    return n, edges, root


def _tree_of(n: int, edges: list[tuple[int, int]], root: int):
    ends = np.array(edges, dtype=np.int64).reshape(-1, 2)
    adjacency = csr_matrix((np.ones(len(ends)), (ends[:, 0], ends[:, 1])), shape=(n, n))
    tree = search(adjacency, root)
    links = nx.DiGraph((int(p), c) for c, p in enumerate(tree.parent) if p >= 0)
    links.add_node(root)
    return tree, links


@settings(max_examples=60, deadline=None)
@given(graphs(), st.data())
def test_depths_ancestors_and_sums_are_networkx(case, data):
    n, edges, root = case
    tree, links = _tree_of(n, edges, root)
    view = nx.Graph(edges)
    view.add_nodes_from(range(n))
    reach = nx.single_source_shortest_path_length(view, root)
    assert depths(tree).tolist() == [reach.get(v, -1) for v in range(n)]  # breadth-first: shortest
    inside = sorted(reach)
    pairs = data.draw(st.lists(st.tuples(st.sampled_from(inside), st.sampled_from(inside)), max_size=20))
    u = np.array([a for a, _ in pairs], dtype=np.intp)
    v = np.array([b for _, b in pairs], dtype=np.intp)
    expected = [nx.lowest_common_ancestor(links, a, b) for a, b in pairs]
    assert common_ancestors(tree, u, v).tolist() == expected
    values = np.array(data.draw(st.lists(st.integers(-5, 5), min_size=n, max_size=n)), dtype=np.int64)
    sums = [int(values[v] + sum(values[d] for d in nx.descendants(links, v))) if v in reach else 0 for v in range(n)]
    assert subtree_sums(tree, values).tolist() == sums


def test_common_ancestors_of_more_pairs_than_one_block_and_of_chosen_pairs_only():
    n = 50
    tree, links = _tree_of(n, [(i, i + 1) for i in range(n - 1)] + [(0, 25)], 0)
    rng = np.random.default_rng(7)
    u, v = rng.integers(0, n, PAIRS_AT_ONCE + 1000), rng.integers(0, n, PAIRS_AT_ONCE + 1000)
    chosen = rng.random(len(u)) < 0.5
    meets = dict(nx.all_pairs_lowest_common_ancestor(links))
    pairs = zip(u[chosen].tolist(), v[chosen].tolist(), strict=True)
    expected = [meets.get((a, b), meets.get((b, a))) for a, b in pairs]
    assert common_ancestors(tree, u, v, chosen).tolist() == expected
