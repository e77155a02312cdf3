"""Connected components on Spark DataFrames: the alternating large-star / small-star algorithm.

Kiveris, Lattanzi, Mirrokni, Rastogi and Vassilvitskii, *Connected Components in MapReduce and Beyond* (SoCC
2014). Vertices are 64-bit integers; each round applies two operations that keep every component connected and
move each vertex's edges towards the smallest vertex it can see:

* **large-star**: every vertex ``u`` links each larger neighbour ``v > u`` to ``m(u)``, the smallest of ``u`` and
  its neighbours (and drops the edge ``u – v``);
* **small-star**: every vertex ``u`` links itself and each smaller neighbour to ``m(u)``, the smallest of ``u``
  and its smaller neighbours.

The graph converges to one star per component, centred on the component's smallest vertex, in ``O(log n)``
rounds in practice (``O(log² n)`` proven); a chain of ``n`` vertices, the worst case of label propagation
(``n`` rounds), takes about ``log₂ n``. The loop stops when the edges form stars (each leaf one edge, no centre a
leaf), a test of the state itself rather than of a count that might repeat by chance::

    chain 1–2–3–4–5–6–7–8        after round 1: stars around 1 and 3…    converged: 1 ← 2, 3, …, 8

As GraphFrames does, the edges are checkpointed every :data:`CHECKPOINT_EVERY` rounds, so the lineage (and the
plan Spark optimises) does not grow with the rounds; and vertices with more than ``hub_degree`` neighbours (a
batch node joined to thousands of samples) have their smallest neighbour broadcast to every executor instead of
sending all their edges to one task. A vertex without edges is in no edge table: callers keep their isolated
vertices themselves (:func:`depgraph.derive` on Spark gives every sample a group, linked or not — the bug
GraphFrames had in its issue 441).
"""

from __future__ import annotations

from typing import NamedTuple

from pyspark.sql import DataFrame
from pyspark.sql import functions as F

from depgraph.spark.session import checkpointed

#: Rounds between checkpoints of the edges (GraphFrames' choice).
CHECKPOINT_EVERY = 2
#: A vertex with more neighbours than this is a hub: its smallest neighbour is broadcast.
HUB_DEGREE = 100_000
#: Hubs broadcast at most (beyond, they are joined as any other vertex, and Spark's skew handling splits them).
MOST_HUBS = 100_000
#: A bound no connected graph of 2^63 vertices needs: reaching it means the loop is broken, not slow.
MOST_ROUNDS = 200


class Components(NamedTuple):
    """Each vertex of an edge (``vertex``) with its component (``component``: the component's smallest vertex),
    and how many rounds it took."""

    labels: DataFrame
    rounds: int


def connected_components(edges: DataFrame, hub_degree: int = HUB_DEGREE) -> Components:
    """The components of the undirected graph ``edges`` (columns ``src``, ``dst``: 64-bit vertex ids; repeats and
    self-loops allowed). Every vertex that is an endpoint of some edge gets a label; see the module docstring."""
    current = (  # kept as the first survey computes it (a checkpoint would be a job of its own)
        edges.select(F.greatest("src", "dst").alias("hi"), F.least("src", "dst").alias("lo"))
        .where(F.col("hi") != F.col("lo"))
        .distinct()
        .persist()
    )
    rounds = 0
    while True:
        converged, hubs = _survey(current, hub_degree)
        if converged:
            break
        if rounds == MOST_ROUNDS:
            raise RuntimeError(f"connected components did not converge in {MOST_ROUNDS} rounds")
        following = _small_star(_large_star(current, hubs))
        rounds += 1
        # kept between checkpoints (the next survey computes it once), the lineage cut every CHECKPOINT_EVERY rounds
        following = checkpointed(following) if rounds % CHECKPOINT_EVERY == 0 else following.persist()
        current.unpersist()
        current = following
    leaves = current.select(F.col("hi").alias("vertex"), F.col("lo").alias("component"))
    centres = current.select(F.col("lo").alias("vertex"), F.col("lo").alias("component")).distinct()
    return Components(leaves.unionByName(centres), rounds)


def _survey(edges: DataFrame, hub_degree: int) -> tuple[bool, DataFrame | None]:
    """Whether ``edges`` (``hi > lo``) are stars (every ``hi`` on one edge, no ``lo`` also a ``hi``), and the hubs:
    vertices with more than ``hub_degree`` neighbours, each with the smallest of itself and its neighbours
    (``u``, ``m``: what large-star needs of them), as a small table to broadcast (None when there are none)."""
    ends = edges.select(
        F.col("hi").alias("u"), F.col("lo").alias("v"), F.lit(1).alias("leaf"), F.lit(0).alias("centre")
    ).unionByName(edges.select(F.col("lo").alias("u"), F.col("hi").alias("v"), F.lit(0).alias("leaf"),
                               F.lit(1).alias("centre")))  # fmt: skip
    roles = ends.groupBy("u").agg(
        F.sum("leaf").alias("leaf"),
        F.max("centre").alias("centre"),
        F.count(F.lit(1)).alias("degree"),
        F.least(F.col("u"), F.min("v")).alias("m"),
    )
    broken = (F.col("leaf") > 1) | ((F.col("leaf") > 0) & (F.col("centre") > 0))
    flagged = (
        roles.where(broken).select("u", "m", F.lit(True).alias("broken")).limit(1)
        .unionByName(roles.where(F.col("degree") > hub_degree).select("u", "m", F.lit(False).alias("broken"))
                     .limit(MOST_HUBS))
        .collect()
    )  # fmt: skip
    if not any(row["broken"] for row in flagged):
        return True, None
    found = [(row["u"], row["m"]) for row in flagged if not row["broken"]]
    return False, edges.sparkSession.createDataFrame(found, "u long, m long") if found else None


def _large_star(edges: DataFrame, hubs: DataFrame | None) -> DataFrame:
    """Each vertex ``u`` links its larger neighbours to the smallest of ``u`` and its neighbours. A hub's edges are
    joined against the broadcast ``hubs``, so no task receives all of them."""
    both = edges.select(F.col("hi").alias("u"), F.col("lo").alias("v")).unionByName(
        edges.select(F.col("lo").alias("u"), F.col("hi").alias("v"))
    )
    larger = both.where(F.col("v") > F.col("u"))
    if hubs is not None:
        ordinary = both.join(F.broadcast(hubs.select("u")), "u", "left_anti")
        smallest = ordinary.groupBy("u").agg(F.min("v").alias("m"))
        linked = larger.join(F.broadcast(hubs), "u").unionByName(
            larger.join(F.broadcast(hubs.select("u")), "u", "left_anti").join(smallest, "u")
        )
    else:
        linked = larger.join(both.groupBy("u").agg(F.min("v").alias("m")), "u")
    return linked.select(F.col("v").alias("hi"), F.least("u", "m").alias("lo")).distinct()


def _small_star(edges: DataFrame) -> DataFrame:
    """Each vertex ``u`` links itself and its smaller neighbours to the smallest of them (a star centre's many
    leaves are split across tasks by Spark's skew-join handling)."""
    smaller = edges.select(F.col("hi").alias("u"), F.col("lo").alias("v"))
    smallest = smaller.groupBy("u").agg(F.min("v").alias("m"))
    linked = smaller.join(smallest, "u")
    moved = linked.where(F.col("v") != F.col("m")).select(F.col("v").alias("hi"), F.col("m").alias("lo"))
    own = smallest.select(F.col("u").alias("hi"), F.col("m").alias("lo"))
    return moved.unionByName(own).distinct()
