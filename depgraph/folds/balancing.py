"""Balanced assignment: whole groups placed so that their category counts spread as evenly as possible.

Two problems, one idea (a weighted squared distance of each side's or fold's counts from its target, lowered by
greedy placement and then by local search):

- :func:`balanced_folds`: k folds balancing strata and sizes (the k-fold schemes);
- :func:`balanced_sides`: a holdout (test / train) balancing many categories at once — every category of several
  columns and every cell of their pairs — with some groups' sides fixed in advance (groups an earlier spec placed).

The functions take arrays (counts per group and category) and return assignments; which columns become categories
is the schemes' business (:mod:`depgraph.folds.schemes`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:  # the counts arrive built; only their type is named here
    import scipy.sparse as sp


def water_fill(load: np.ndarray, step: float, m: int, tiebreak: np.ndarray) -> np.ndarray:
    """How many of ``m`` identical items each fold gets when items are placed one
    at a time on the fold with the lowest ``load + step * count`` (ties: lowest
    ``tiebreak``). Exact greedy result, computed in O(k log k + k)."""
    k = len(load)
    counts = np.zeros(k, dtype=np.int64)
    if m == 0:
        return counts
    if step > 0:
        ordered = np.sort(load)
        cum = np.cumsum(ordered)
        levels = (m * step + cum) / np.arange(1, k + 1)  # continuous water level using the i lowest folds
        upper = np.append(ordered[1:], np.inf)
        level = levels[np.argmax(levels <= upper)]
        threshold = level - step  # every term below it is certainly among the m smallest
        counts = np.maximum(0, np.ceil((threshold - load) / step)).astype(np.int64)
        counts = np.minimum(counts, m)
        while counts.sum() > m:  # float noise: give back from the most loaded
            f = int(np.argmax(load + (counts - 1) * step + (counts == 0) * -np.inf))
            counts[f] -= 1
    for _ in range(m - int(counts.sum())):  # the last < 2k items one by one, exactly as greedy would
        value = load + counts * step
        best = np.flatnonzero(value == value.min())
        counts[best[np.argmin(tiebreak[best])]] += 1
    return counts


def balanced_folds(vectors: np.ndarray, weights: np.ndarray, k: int, rng: np.random.Generator) -> np.ndarray:
    """A fold per group so that every weighted column of ``vectors`` (counts per
    group: strata, then size last) is spread as evenly as possible over k folds.

    The objective is the sum over folds and columns of ``w · (count − target)²``
    (targets are the column totals / k). Groups with identical count vectors
    ("compositions") are interchangeable, so the plan is a table of how many
    groups of each composition go to each fold:

    1. greedy: compositions largest and rarest first (ties in seeded random
       order), each placed by exact water filling on the objective;
    2. local search: the best single move of one group, or swap of two groups
       of different compositions between two folds, while one lowers the
       objective (swaps are searched while there are at most
       ``_SWAP_COMPOSITIONS`` compositions, which covers cohorts where
       balance is hard; large cohorts balance by their many small groups).

    Members of a composition are then dealt to folds in seeded random order.
    """
    compositions, inverse = np.unique(vectors, axis=0, return_inverse=True)
    inverse = inverse.reshape(-1)
    comp = compositions.astype(np.float64)
    size = compositions[:, -1]
    rarity = np.zeros(len(compositions))
    if vectors.shape[1] > 1:  # groups carrying rare strata go first among equal sizes
        rarity = (np.abs(compositions[:, :-1]) * weights[:-1]).max(axis=1) / np.maximum(size, 1)
    order = np.lexsort((rng.random(len(compositions)), -rarity, -size))
    shuffled = rng.permutation(len(inverse))
    members_sorted = shuffled[np.argsort(inverse[shuffled], kind="stable")]
    bounds = np.searchsorted(inverse[members_sorted], np.arange(len(compositions) + 1))
    loads = np.zeros((k, vectors.shape[1]))
    table = np.zeros((len(compositions), k), dtype=np.int64)  # groups of each composition per fold
    for u in order:
        wv = weights * comp[u]
        table[u] = water_fill(loads @ wv, float(wv @ comp[u]), int(bounds[u + 1] - bounds[u]), rng.permutation(k))
        loads += table[u][:, None] * comp[u]
    table = _improve_folds(table, comp, weights, loads)
    fold_of = np.empty(len(inverse), dtype=np.int64)
    for u in range(len(compositions)):
        fold_of[members_sorted[bounds[u] : bounds[u + 1]]] = np.repeat(np.arange(k), table[u])
    return fold_of


_SWAP_COMPOSITIONS = 400
_MAX_IMPROVEMENTS = 5000


def _improve_folds(table: np.ndarray, comp: np.ndarray, weights: np.ndarray, loads: np.ndarray) -> np.ndarray:
    """Best-improvement local search on the composition table (moves and swaps)."""
    table = table.copy()
    loads = loads.copy()
    targets = loads.sum(axis=0) / len(loads)
    wcomp = comp * weights
    q = (wcomp * comp).sum(axis=1)  # w-norm² of each composition
    gram = wcomp @ comp.T if len(comp) <= _SWAP_COMPOSITIONS else None
    k = table.shape[1]
    for _ in range(_MAX_IMPROVEMENTS):
        dev = loads - targets  # (k, D)
        proj = wcomp @ dev.T  # (U, k): w·v_u·(C_f − t)
        # move one group of composition u from fold a to fold b: Δ = 2(proj_ub − proj_ua) + 2q_u
        move = 2 * (proj[:, None, :] - proj[:, :, None]) + 2 * q[:, None, None]
        move[table == 0] = np.inf
        move[:, np.arange(k), np.arange(k)] = np.inf
        u, a, b = np.unravel_index(np.argmin(move), move.shape)
        best, action = move[u, a, b], ("move", u, a, b)
        if gram is not None:
            for fa in range(k):
                for fb in range(fa + 1, k):
                    # swap u (in fa) with u2 (in fb): Δ = 2(w·(v2−v)·(C_a−C_b)) + 2‖v2−v‖²_w
                    p = 2 * (proj[:, fa] - proj[:, fb])
                    delta = p[None, :] - p[:, None] + 2 * (q[:, None] + q[None, :] - 2 * gram)
                    delta[table[:, fa] == 0, :] = np.inf
                    delta[:, table[:, fb] == 0] = np.inf
                    i, j = np.unravel_index(np.argmin(delta), delta.shape)
                    if delta[i, j] < best:
                        best, action = delta[i, j], ("swap", i, j, fa, fb)
        if not best < -1e-9:
            break
        if action[0] == "move":
            _, u, a, b = action
            table[u, a] -= 1
            table[u, b] += 1
            loads[a] -= comp[u]
            loads[b] += comp[u]
        else:
            _, i, j, fa, fb = action
            table[i, fa] -= 1
            table[i, fb] += 1
            table[j, fb] -= 1
            table[j, fa] += 1
            loads[fa] += comp[j] - comp[i]
            loads[fb] += comp[i] - comp[j]
    return table


#: Local search on a holdout runs while there are at most this many groups to place: each step costs one pass over
#: their counts, so the search is quadratic. Above it, categories and cells hold so many groups that greedy
#: placement alone leaves them balanced (benchmarks/bench_holdout.py measures both sides of the limit).
SEARCH_GROUPS = 20_000
_SEARCH_PASSES = 50  # a safety bound: every step lowers the objective, so the search ends on its own


def balanced_sides(
    counts: sp.csr_matrix,
    weights: np.ndarray,
    test_fraction: float,
    fixed: np.ndarray,
    order: np.ndarray,
    rng: np.random.Generator,
) -> np.ndarray:
    """A side per group (0 train, 1 test) bringing every column of ``counts`` (groups × categories, the sample
    count last) close to its target: ``test_fraction`` of the column's total on the test side.

    The objective is ``Σ_d weights_d · (1/T0_d + 1/T1_d) · (test_d − T1_d)²`` (a chi-square over both sides, as
    the train side's deviation is the test side's with the sign turned). Groups with ``fixed ≥ 0`` keep that side.
    The others are placed one at a time in ``order`` on the side that lowers the objective most (ties drawn from
    ``rng``); then, while at most :data:`SEARCH_GROUPS` groups were placed, a local search moves one placed group
    to the other side, or swaps a tested one with a trained one, whenever that lowers the objective (best swap for
    each tested group in turn, and lone moves to the test side, until a pass changes nothing).
    """
    totals = np.asarray(counts.sum(axis=0)).ravel()
    targets = np.stack([(1 - test_fraction) * totals, test_fraction * totals])
    inverse = np.where(targets > 0, 1 / np.maximum(targets, 1e-12), 0.0) * weights
    side = fixed.copy()
    loads = np.zeros_like(targets)
    for s in (0, 1):
        loads[s] = np.asarray(counts[side == s].sum(axis=0)).ravel()
    indptr, indices, data = counts.indptr, counts.indices, counts.data
    for g in order:  # one group at a time: each placement moves the targets the next one sees
        idx, v = indices[indptr[g] : indptr[g + 1]], data[indptr[g] : indptr[g + 1]]
        cost = ((2 * (loads[:, idx] - targets[:, idx]) + v) * v * inverse[:, idx]).sum(axis=1)
        s = int(np.argmin(cost)) if cost[0] != cost[1] else int(rng.integers(2))
        side[g] = s
        loads[s, idx] += v
    if 0 < len(order) <= SEARCH_GROUPS:
        free = np.zeros(len(side), dtype=bool)
        free[order] = True
        side = _improve_sides(counts, side, free, loads[1] - targets[1], inverse.sum(axis=0), rng)
    return side


def _improve_sides(
    counts: sp.csr_matrix,
    side: np.ndarray,
    free: np.ndarray,
    deviation: np.ndarray,
    c: np.ndarray,
    rng: np.random.Generator,
) -> np.ndarray:
    """Local search on ``Σ c·deviation²`` (deviation: the test side's counts minus their targets) over the ``free``
    groups: for each tested free group, the best of moving it to train, swapping it with a trained free group, and
    moving the best trained free group to test; applied while it lowers the objective.

    With ``p_g = c·deviation·v_g`` and ``q_g = c·v_g·v_g``, moving ``g`` to test changes the objective by
    ``2p_g + q_g``, to train by ``−2p_g + q_g``, and swapping tested ``i`` for trained ``j`` by
    ``2(p_j − p_i) + q_i + q_j − 2·c·v_i·v_j``.
    """
    side = side.copy()
    deviation = deviation.astype(np.float64).copy()
    counts = counts.astype(np.float64).tocsr()
    indptr, indices, data = counts.indptr, counts.indices, counts.data
    q = np.asarray(counts.multiply(counts) @ c).ravel()
    p = counts @ (c * deviation)

    def row(g: int) -> np.ndarray:
        dense = np.zeros(counts.shape[1])
        dense[indices[indptr[g] : indptr[g + 1]]] = data[indptr[g] : indptr[g + 1]]
        return dense

    def apply(change: np.ndarray) -> None:
        nonlocal deviation, p
        deviation += change
        p += counts @ (c * change)

    for _ in range(_SEARCH_PASSES):
        changed = False
        for i in rng.permutation(np.flatnonzero(free & (side == 1))):
            if side[i] != 1:
                continue
            vi = row(i)
            trained = free & (side == 0)
            swap = np.where(trained, 2 * (p - p[i]) + q[i] + q - 2 * (counts @ (c * vi)), np.inf)
            move_in = np.where(trained, 2 * p + q, np.inf)
            j, k = int(np.argmin(swap)), int(np.argmin(move_in))
            deltas = np.array([swap[j], -2 * p[i] + q[i], move_in[k]])  # swap i for j, move i out, move k in
            action = int(np.argmin(deltas))
            if not deltas[action] < -1e-9:
                continue
            change = np.zeros_like(deviation)
            if action in (0, 1):
                side[i] = 0
                change -= vi
            if action in (0, 2):
                g = j if action == 0 else k
                side[g] = 1
                change += row(g)
            apply(change)
            changed = True
        while True:  # moves into the test side on their own: needed when no free group is tested yet
            move_in = np.where(free & (side == 0), 2 * p + q, np.inf)
            k = int(np.argmin(move_in)) if len(move_in) else 0
            if not (len(move_in) and move_in[k] < -1e-9):
                break
            side[k] = 1
            apply(row(k))
            changed = True
        if not changed:
            break
    return side
