"""A breadth-first tree of a component, worked with numpy over all its nodes at once rather than node by node.

One breadth-first search (``scipy.sparse.csgraph.breadth_first_order``) gives each node of the component its
parent. From the parents alone, by doubling (each step one gather over the nodes, as many steps as the tree's
depth has binary digits), come each node's ancestors at every power of two, its depth, the lowest common ancestor
of millions of pairs of nodes, and any value summed over every subtree::

    root ── a ── c          depth   root 0, a 1, b 1, c 2, d 2
      └──── b ── d          common ancestor of (c, d): root; of (c, a): a
                            subtree sums of ones: root 5, a 2, b 2, c 1, d 1

:mod:`~depgraph.explanation.groups` finds bridges with them; :mod:`~depgraph.explanation.paths` reads distances.

>>> import numpy as np
>>> from scipy.sparse import csr_matrix
>>> edges = np.array([[0, 1], [0, 2], [1, 3], [2, 4]])  # root 0; a 1, b 2; c 3, d 4
>>> adjacency = csr_matrix((np.ones(4), (edges[:, 0], edges[:, 1])), shape=(5, 5))
>>> tree = search(adjacency, 0)
>>> depths(tree).tolist(), common_ancestors(tree, np.array([3, 3]), np.array([4, 1])).tolist()
([0, 1, 1, 2, 2], [0, 1])
>>> subtree_sums(tree, np.ones(5, dtype=np.int64)).tolist()
[5, 2, 2, 1, 1]
"""

from __future__ import annotations

import os
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from functools import cached_property

import numpy as np

#: Pairs of nodes whose common ancestors are found at once. A biobank's one group has millions, and fresh memory
#: for each step's result over all of them cost more than the steps themselves; blocks of this many keep each
#: step's arrays a few megabytes, reused from one block to the next (and in cache).
PAIRS_AT_ONCE = 1 << 18


@dataclass(frozen=True)
class SearchTree:
    """A breadth-first tree: its ``root``, its nodes in search ``order``, and each node's ``parent`` over every
    node of the graph (negative at the root and outside the component), as ``scipy.sparse.csgraph`` returns them."""

    root: int
    order: np.ndarray
    parent: np.ndarray

    @cached_property
    def members(self) -> np.ndarray:
        """Whether each node of the graph is in the tree (the component searched)."""
        held = np.zeros(len(self.parent), dtype=bool)
        held[self.order] = True
        return held

    @cached_property
    def ancestors(self) -> list[np.ndarray]:
        """Each node's 1st, 2nd, 4th, 8th … ancestor, one array per power of two until none has one. The root's,
        and those beyond it, are a sink node (position ``len(parent)``, its own ancestor)."""
        n = len(self.parent)
        up = np.append(np.where(self.parent >= 0, self.parent, n), n).astype(np.intp)  # numpy's index type: no copy
        found = [up]
        while (up[:n] < n).any():
            up = up[up]
            found.append(up)
        return found


def search(adjacency: object, root: int) -> SearchTree:
    """The breadth-first tree from ``root`` over ``adjacency`` (each edge once, searched as undirected)."""
    from scipy.sparse.csgraph import breadth_first_order

    order, parent = breadth_first_order(adjacency, root, directed=False, return_predecessors=True)
    return SearchTree(root, order, parent)


def depths(tree: SearchTree) -> np.ndarray:
    """Each node's number of steps from the root (-1 outside the tree): the powers of two it climbs, summed, from
    the highest down, each while it stays below the root."""
    n = len(tree.parent)
    depth = np.zeros(n, dtype=np.int32)
    at = np.arange(n)
    for k in range(len(tree.ancestors) - 1, -1, -1):
        step = tree.ancestors[k][at]
        climbs = step < n
        depth[climbs] += 1 << k
        at = np.where(climbs, step, at)
    return np.where(tree.members, depth, -1)


def common_ancestors(tree: SearchTree, u: np.ndarray, v: np.ndarray, chosen: np.ndarray | None = None) -> np.ndarray:
    """The lowest common ancestor of each pair of nodes of the tree (``u[i]``, ``v[i]``; with ``chosen``, of the
    chosen pairs only), :data:`PAIRS_AT_ONCE` pairs at a time. Blocks are independent and numpy lets go of the
    interpreter's lock while it gathers, so they run on every core (in order: the same answer on any machine)."""
    depth = depths(tree)
    chosen = np.ones(len(u), dtype=bool) if chosen is None else chosen

    def block(start: int) -> np.ndarray:
        these = slice(start, start + PAIRS_AT_ONCE)
        return _lift(tree.ancestors, depth, u[these][chosen[these]], v[these][chosen[these]])

    starts = range(0, len(u), PAIRS_AT_ONCE)
    if len(starts) < 2:
        return np.concatenate([block(s) for s in starts] or [np.array([], dtype=np.intp)])
    with ThreadPoolExecutor(max_workers=min(len(starts), os.cpu_count() or 1)) as pool:
        return np.concatenate(list(pool.map(block, starts)))


def _lift(ancestors: list[np.ndarray], depth: np.ndarray, u: np.ndarray, v: np.ndarray) -> np.ndarray:
    """Binary lifting: the deeper of each pair climbs to the other's depth, then the pairs still apart climb
    every power of two that keeps them apart; their parents are the common ancestors."""
    gap = depth[u] - depth[v]
    u, v = np.where(gap < 0, v, u), np.where(gap < 0, u, v)  # u the deeper
    gap = np.abs(gap)
    for k, up in enumerate(ancestors):  # in a breadth-first tree a gap is at most one: one pass
        if not (gap >> k).any():
            break
        u = np.where((gap >> k) & 1 == 1, up[u], u)
    apart = np.flatnonzero(u != v)
    a, b = u[apart], v[apart]
    for up in reversed(ancestors[:-1]):  # the last holds the sink alone: no pair is apart there
        above_a, above_b = up[a], up[b]
        climbs = above_a != above_b
        a, b = np.where(climbs, above_a, a), np.where(climbs, above_b, b)
    u[apart] = ancestors[0][a]
    return u


def subtree_sums(tree: SearchTree, values: np.ndarray) -> np.ndarray:
    """Each node's value summed over its subtree (0 outside the tree).

    Every value is added to each of its ancestors by doubling, without a loop over the nodes: the sum over k of
    the values k levels below equals the product over j of (1 + the values 2**j levels below), each factor one
    scatter-add along the 2**j-th ancestors."""
    n = len(tree.parent)
    sums = np.append(np.where(tree.members, values, 0), 0).astype(np.float64)  # exact below 2**53; the sink last
    for up in tree.ancestors:
        sums = sums + np.bincount(up, weights=sums, minlength=n + 1)
        sums[n] = 0
    return sums[:n].astype(np.int64)
