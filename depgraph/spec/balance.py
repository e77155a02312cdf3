"""A fold plan's balance block: what a spec states of its splits' sizes and of the test share of each category.

The schemes (:mod:`depgraph.folds.schemes`) compute it when they plan, and every reader recomputes it from the
samples and the splits it holds (:mod:`depgraph.spec.plans`): a spec whose balance says other than its folds hold
contradicts itself. Both call :func:`balance_metrics`, so they cannot disagree.

>>> from depgraph.spec.model import FoldSplit
>>> samples = pd.DataFrame({"stratum": ["case", "control", "case", "control"]})
>>> split = FoldSplit.of(0, 0, [0, 1], [], 4)
>>> block = balance_metrics(samples, [split], ["stratum"], 0.5)
>>> block["sizes"]["n_test"], block["columns"]["stratum"]["test_proportion"]
([2], [[0.5, 0.5]])
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Sequence
from typing import Any, Protocol

import numpy as np
import pandas as pd

from depgraph.common.arrays import sorted_categories, text_array

#: The category of a missing value in a balanced or stratified column.
MISSING_CATEGORY = "(missing)"

#: Joint cells are summarised over those holding at least this many samples: with a test fraction of 0.2 such a
#: cell expects 4 test samples, so its scaled difference moves in steps of 0.25 at most.
CELL_MIN_SAMPLES = 20


class TestedSplit(Protocol):
    """What the balance reads of a split (:class:`~depgraph.spec.model.FoldSplit`)."""

    n_train: int
    n_test: int
    n_excluded: int
    test: np.ndarray


def categories(samples: pd.DataFrame, column: str) -> tuple[np.ndarray, np.ndarray]:
    """Integer codes of a categorical sample column, and its categories in sorted order (a missing value is the
    category :data:`MISSING_CATEGORY`)."""
    series = samples[column]
    if isinstance(series.dtype, pd.StringDtype):  # text in Arrow: coded there, no Python string per sample
        return sorted_categories(text_array(series).fill_null(MISSING_CATEGORY))
    values = series.astype(object).where(series.notna(), MISSING_CATEGORY)
    codes, uniques = pd.factorize(values.astype(str).to_numpy(dtype=object), sort=True)
    return codes, np.asarray(uniques, dtype=object)


def balance_metrics(
    samples: pd.DataFrame,
    splits: Sequence[TestedSplit],
    columns: Sequence[str],
    target_fraction: float | None,
    weights: np.ndarray | None = None,
) -> dict[str, Any]:
    """Sizes of every split, and per categorical column each split's test
    proportions, their worst deviation from the whole, and the scaled
    difference ``(N_test − f·N_total)/(f·N_total)`` per category, with ``f``
    the scheme's target test fraction (else the split's actual one); with two
    columns or more, the joint cells of every pair (:func:`joint_cell_metrics`).
    Columns the samples lack are left out. With ``weights``, each row stands for that many samples (an engine's
    distinct combinations of the columns with their counts; the splits' ``test`` then lists rows)."""
    present = [c for c in columns if c in samples.columns]
    w = np.ones(len(samples), dtype=np.int64) if weights is None else np.asarray(weights, dtype=np.int64)
    counted = {}
    for column in present:
        codes, names = categories(samples, column)
        totals = np.bincount(codes, weights=w, minlength=len(names)).astype(np.int64)
        tested = [np.bincount(codes[s.test], weights=w[s.test], minlength=len(names)).astype(np.int64) for s in splits]
        counted[column] = (names, totals, tested)
    sides = ([s.n_test for s in splits], [s.n_train for s in splits], [s.n_excluded for s in splits])
    out = balance_of_counts(int(w.sum()), *sides, counted, target_fraction)
    if len(present) >= 2:
        out["joint_cells"] = joint_cell_metrics(samples, splits, present, target_fraction, w)
    return out


def balance_of_counts(
    n: int,
    n_test: list[int],
    n_train: list[int],
    n_excluded: list[int],
    columns: dict[str, tuple[np.ndarray, np.ndarray, list[np.ndarray]]],
    target_fraction: float | None,
) -> dict[str, Any]:
    """:func:`balance_metrics` from counts alone: each split's sizes, and per column its categories (sorted, as
    :func:`categories` codes them), every category's count and each split's test count of it — what an engine
    that counts elsewhere (Spark) reports identically."""
    tests = np.array(n_test)
    sizes = {
        "n_test": tests.tolist(),
        "n_train": list(n_train),
        "n_excluded": list(n_excluded),
        "test_size_spread": float((tests.max() - tests.min()) / tests.mean()) if len(tests) and tests.mean() else 0.0,
    }
    out: dict[str, Any] = {"sizes": sizes, "columns": {}}
    for column, (names, totals, tested) in columns.items():
        overall = totals / n
        proportions, scaled = [], []
        for n_tested, counts in zip(n_test, tested, strict=True):
            proportions.append(counts / max(1, n_tested))
            f = target_fraction if target_fraction is not None else n_tested / n
            expected = f * totals
            scaled.append(np.where(expected > 0, (counts - expected) / np.where(expected > 0, expected, 1), 0.0))
        proportions_a, scaled_a = np.array(proportions), np.array(scaled)
        out["columns"][column] = {
            "categories": names.tolist(),
            "overall": _rounded(overall),
            "test_proportion": [_rounded(p) for p in proportions_a],
            "worst_proportion_deviation": _round(float(np.abs(proportions_a - overall).max())) if len(n_test) else 0.0,
            "scaled_difference": [_rounded(s) for s in scaled_a],
            "worst_scaled_difference": _round(float(np.abs(scaled_a).max())) if len(n_test) else 0.0,
        }
    return out


def joint_cell_metrics(
    samples: pd.DataFrame,
    splits: Sequence[TestedSplit],
    columns: Sequence[str],
    target_fraction: float | None,
    weights: np.ndarray | None = None,
) -> dict[str, Any]:
    """For every pair of columns, the scaled difference of each split's test count in each cell (a pair of
    categories) from its target, summarised over cells of at least :data:`CELL_MIN_SAMPLES` samples: how many,
    the mean and worst absolute value per split, and the worst cell (rows weighing ``weights`` samples)."""
    coded = {c: categories(samples, c) for c in columns}
    labels, codes = [], []
    for a, b in itertools.combinations(columns, 2):
        (ca, na), (cb, nb) = coded[a], coded[b]
        pair = ca.astype(np.int64) * len(nb) + cb
        present = np.unique(pair)
        codes.append(np.searchsorted(present, pair) + sum(len(x) for x in labels))
        labels.append([f"{a}={na[i // len(nb)]} & {b}={nb[i % len(nb)]}" for i in present])
    w = np.ones(len(samples), dtype=np.int64) if weights is None else weights
    return _cell_summary(np.stack(codes), [x for block in labels for x in block], splits, w, target_fraction)


def _cell_summary(
    codes: np.ndarray, labels: list[str], splits: Sequence[TestedSplit], w: np.ndarray, target_fraction: float | None
) -> dict[str, Any]:
    """Per split: mean and worst |scaled difference| over the cells of at least :data:`CELL_MIN_SAMPLES` samples
    (``codes``: pairs × rows, cell numbers unique across pairs; ``w``: the samples each row stands for)."""
    n_cells, n = len(labels), int(w.sum())
    totals = np.bincount(codes.ravel(), weights=np.tile(w, len(codes)), minlength=n_cells).astype(np.int64)
    kept = totals >= CELL_MIN_SAMPLES
    mean, worst, worst_cell = [], [], []
    for split in splits:
        held = np.bincount(
            codes[:, split.test].ravel(), weights=np.tile(w[split.test], len(codes)), minlength=n_cells
        ).astype(np.int64)
        f = target_fraction if target_fraction is not None else split.n_test / n
        scaled = np.abs(held[kept] - f * totals[kept]) / (f * totals[kept]) if kept.any() and f > 0 else np.zeros(0)
        mean.append(_round(float(scaled.mean())) if len(scaled) else 0.0)
        worst.append(_round(float(scaled.max())) if len(scaled) else 0.0)
        worst_cell.append(labels[int(np.flatnonzero(kept)[np.argmax(scaled)])] if len(scaled) else None)
    return {
        "pairs": int(codes.shape[0]),
        "cells": n_cells,
        "cells_summarised": int(kept.sum()),
        "min_samples": CELL_MIN_SAMPLES,
        "mean_abs_scaled_difference": mean,
        "worst_abs_scaled_difference": worst,
        "worst_cell": worst_cell,
    }


def _round(value: float) -> float:
    return float(f"{value:.6g}") if math.isfinite(value) else 0.0


def _rounded(values: np.ndarray) -> list[float]:
    return [_round(float(v)) for v in values]
