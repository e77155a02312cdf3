"""Every two points at most a radius apart, found in Spark: the pairs the single machine's KD-tree finds
(:func:`depgraph.ingest.spatial.spatial_pairs`), never a distance matrix.

Each point is put in a grid cell per axis and paired with the points of its own and the neighbouring cells (3, 9 or
27 cells for 1, 2 or 3 axes); only those candidates are measured. The cells are at least twice the radius, so two
points within it are never two cells apart whatever the rounding of a coordinate's cell, and at most 2⁵⁰ per axis,
so a cell number is a whole number Spark holds exactly (a cohort spread over a huge range with a tiny radius gets
larger cells: more candidates, the same pairs).

A candidate is kept by the KD-tree's own test, in the executors' Python on numpy arrays: the Minkowski sum of the
coordinate differences, added axis by axis, at most the radius to the power ``p`` (``r · r`` for Euclidean
distances; the largest difference for ``p = inf``), inclusive. The edge's weight is its distance as the single
machine computes it (``numpy.linalg.norm(..., ord=p)``), so both engines write the same bits. (The KD-tree prunes
whole boxes of points on sums it updates as it descends; a pair whose sum lies within a rounding error of the
radius could in principle be decided otherwise there. Whole-number coordinates and radii are exact on both.)
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Iterator, Sequence

import numpy as np
import pandas as pd
from pyspark.sql import DataFrame
from pyspark.sql import functions as F

#: A cell holds at most this many steps of an axis' span: the cell numbers stay exact in a 64-bit float and a long.
LARGEST_CELL_NUMBER = 2.0**50
PAIR_SCHEMA = "source long, target long, weight double"


def near_pairs(
    points: DataFrame, axes: Sequence[str], radius: float, p: float, low: Sequence[float], span: float
) -> DataFrame:
    """``source``, ``target`` (the points' ``row``, lower first) and ``weight`` (their distance) of every two rows
    of ``points`` (``row`` and one float column per axis, none missing) at most ``radius`` apart in the Minkowski
    ``p`` norm; ``low`` is each axis' smallest coordinate and ``span`` the largest extent of an axis (of these
    points or of a table holding them)."""
    size = max(2.0 * radius, span / LARGEST_CELL_NUMBER)
    cells = [
        (F.floor((F.col(a) - F.lit(low[k])) / F.lit(size)) if size > 0 else F.lit(0)).cast("long").alias(f"_c{k}")
        for k, a in enumerate(axes)
    ]
    placed = points.select("row", *axes, *cells)
    offsets = F.explode(F.array(*[F.array(*[F.lit(o) for o in step])
                                  for step in itertools.product((-1, 0, 1), repeat=len(axes))]))  # fmt: skip
    cell = [f"_c{k}" for k in range(len(axes))]
    reached = placed.select(F.col("row").alias("_other"), *[F.col(a).alias(f"_{a}") for a in axes], *cell,
                            offsets.alias("_step"))  # fmt: skip
    reached = reached.select("_other", *[f"_{a}" for a in axes],
                             *[(F.col(c) + F.col("_step")[k]).alias(c) for k, c in enumerate(cell)])  # fmt: skip
    candidates = placed.join(reached, cell).where(F.col("row") < F.col("_other"))
    measured = candidates.select(F.col("row").alias("source"), F.col("_other").alias("target"), *axes,
                                 *[f"_{a}" for a in axes])  # fmt: skip
    return measured.mapInPandas(_within(list(axes), radius, p), PAIR_SCHEMA)


def _within(axes: list[str], radius: float, p: float):  # type: ignore[no-untyped-def]
    """The executors' test of each candidate (see the module docstring), and the kept pairs' distances."""
    bound = radius * radius if p == 2 else radius if math.isinf(p) else math.pow(radius, p)

    def kept(batches: Iterator[pd.DataFrame]) -> Iterator[pd.DataFrame]:
        for batch in batches:
            difference = np.column_stack([batch[a].to_numpy(float) - batch[f"_{a}"].to_numpy(float) for a in axes])
            if math.isinf(p):
                total = np.abs(difference).max(axis=1)
            else:
                total = np.zeros(len(batch))
                for k in range(len(axes)):  # axis by axis, as the KD-tree adds them
                    step = difference[:, k] * difference[:, k] if p == 2 else np.abs(difference[:, k]) ** p
                    total = total + step
            near = total <= bound
            distance = np.linalg.norm(difference[near], ord=p, axis=1) if near.any() else np.empty(0)
            yield pd.DataFrame({"source": batch["source"].to_numpy()[near], "target": batch["target"].to_numpy()[near],
                                "weight": distance})  # fmt: skip

    return kept
