"""Balanced holdouts that keep the joint distribution: a replay of a sequestration setting.

    python benchmarks/bench_holdout.py [--trials 50] [--patients 5000]

The setting (after MIDRC's sequestration of a test set from each intake batch): an intake batch of 5,000 patients,
one imaging study each, described by age (9 bands), race (7), sex (4), ethnicity (3), COVID status (3) and modality
(4) — 30 categories, 360 cells of two variables (those holding >= 20 patients are summarised) — drawn with
dependences between them (a site mix drives race and ethnicity, age drives COVID status and modality), split 80:20
at patient level. Three ways to choose the 20 %:

- ``per-stratum random``: within every joint stratum (all six variables at once), a random 20 % of its patients,
  rounding ``0.2 · n`` up or down at random with the probabilities that keep every stratum's expected share exact
  (an unbiased baseline: always rounding down would never test a patient of a single-patient stratum);
- ``depgraph margins``: ``balanced-holdout`` with ``joint=1`` (each variable's categories, and the size);
- ``depgraph joint``: ``balanced-holdout`` with ``joint=2`` (the default: every pair of variables' cells as well).

Per trial (a seed; the cohort stays the same, so cells can be compared across trials) and method: the scaled
difference ``(N_test - 0.2 N) / (0.2 N)`` of every category and of every two-variable cell of >= 20 patients. The
summary gives, per method, the mean over trials of the mean and worst |scaled difference| over the 30 categories
and over the cells, the worst over all trials, and in how many categories and cells (their mean over trials)
depgraph beats the baseline.

Then a second batch arrives (1,500 studies: 450 of returning patients, 1,050 of new ones). The holdout of the
union is planned with the first spec as ``prior``: the benchmark checks that every returning patient keeps its side,
and measures the union's balance the same way (the baseline keeps returning patients' sides too and places the new
patients by per-stratum random).

Writes benchmarks/results/holdout.json.
"""

from __future__ import annotations

import argparse
import itertools
import json
import time
from pathlib import Path

import numpy as np
import pandas as pd

import depgraph
from depgraph.spec.model import Constraint, SplitSpec

RESULTS = Path(__file__).resolve().parent / "results"
VARIABLES = {"age": 9, "race": 7, "sex": 4, "ethnicity": 3, "covid": 3, "modality": 4}
TEST_FRACTION = 0.2
MIN_CELL = 20


def patients(n: int, rng: np.random.Generator, first: int = 0) -> pd.DataFrame:
    """``n`` patients with dependent categorical attributes (codes), ids from ``first``."""
    site = rng.integers(0, 5, n)
    age = np.clip(np.round(rng.normal(4.5 + 0.4 * (site - 2), 2.0, n)), 0, 8).astype(int)
    race_p = np.array([0.55, 0.2, 0.1, 0.05, 0.04, 0.03, 0.03])
    race = (rng.choice(7, n, p=race_p) + site) % 7  # each site has its own leading race
    ethnicity = np.where(rng.random(n) < np.where(race == 0, 0.25, 0.08), 1, np.where(rng.random(n) < 0.05, 2, 0))
    sex = rng.choice(4, n, p=[0.52, 0.46, 0.015, 0.005])
    covid = np.where(rng.random(n) < 0.2 + 0.04 * age, 0, np.where(rng.random(n) < 0.85, 1, 2))
    modality = np.where(rng.random(n) < 0.3 + 0.05 * age, 0, rng.choice([1, 2, 3], n, p=[0.5, 0.3, 0.2]))
    frame = pd.DataFrame(
        {"age": age, "race": race, "sex": sex, "ethnicity": ethnicity, "covid": covid, "modality": modality}
    )
    frame.insert(0, "patient", [f"P{i:06d}" for i in range(first, first + n)])
    return frame


def studies(frame: pd.DataFrame, first: int) -> pd.DataFrame:
    """One imaging study per row of ``frame`` (a patient), with sample ids from ``first``."""
    out = frame.copy()
    out.insert(0, "sample_id", [f"S{i:06d}" for i in range(first, first + len(frame))])
    return out


def spec_of(rows: pd.DataFrame) -> SplitSpec:
    """A spec grouping studies by patient, carrying the six variables (as text) for the holdout to balance."""
    samples = rows.rename(columns={"patient": "group_id"})
    samples[list(VARIABLES)] = samples[list(VARIABLES)].astype(str)
    return SplitSpec.build(samples, constraint=Constraint(mode="subject"), recommended_resampling="grouped_cv")


def indicators(rows: pd.DataFrame) -> tuple[np.ndarray, np.ndarray, list[str]]:
    """Samples x categories and samples x two-variable cells (0/1), with the cells' names."""
    margins = np.hstack([np.eye(k)[rows[v].to_numpy()] for v, k in VARIABLES.items()])
    cells, names = [], []
    for (a, ka), (b, kb) in itertools.combinations(VARIABLES.items(), 2):
        cells.append(np.eye(ka * kb)[rows[a].to_numpy() * kb + rows[b].to_numpy()])
        names += [f"{a}={i // kb} & {b}={i % kb}" for i in range(ka * kb)]
    return margins, np.hstack(cells), names


def scaled(test: np.ndarray, columns: np.ndarray) -> np.ndarray:
    expected = TEST_FRACTION * columns.sum(axis=0)
    held = columns[test].sum(axis=0)
    return np.abs(held - expected) / np.where(expected > 0, expected, 1)  # an empty cell is 0, never summarised


def per_stratum_random(rows: pd.DataFrame, rng: np.random.Generator, keep: pd.Series | None = None) -> np.ndarray:
    """The baseline: a random 20 % of every joint stratum's patients, unbiased rounding; ``keep`` (patient →
    tested) fixes the returning patients' sides."""
    patient_rows = rows.drop_duplicates("patient").set_index("patient")
    tested = pd.Series(False, index=patient_rows.index)
    new = patient_rows.index if keep is None else patient_rows.index.difference(keep.index)
    if keep is not None:
        tested.loc[keep.index.intersection(patient_rows.index)] = keep
    stratum = patient_rows.loc[new, list(VARIABLES)].astype(str).agg("|".join, axis=1)
    for _, members in stratum.groupby(stratum):
        ids = rng.permutation(members.index.to_numpy())
        want = TEST_FRACTION * len(ids)
        m = int(np.floor(want)) + int(rng.random() < want - np.floor(want))
        tested.loc[ids[:m]] = True
    return rows["patient"].map(tested).to_numpy(dtype=bool)


def depgraph_holdout(spec: SplitSpec, joint: int, seed: int, prior: SplitSpec | None = None) -> SplitSpec:
    return depgraph.assign_folds(
        spec, "balanced-holdout", test_fraction=TEST_FRACTION, balance=list(VARIABLES), joint=joint, seed=seed,
        prior=prior,
    )  # fmt: skip


def tested(planned: SplitSpec) -> np.ndarray:
    test = np.zeros(planned.n_samples, dtype=bool)
    test[planned.folds.splits[0].test] = True
    return test


def summarise(per_trial: dict[str, list[tuple[np.ndarray, np.ndarray]]], kept: np.ndarray) -> dict:
    """Per method: mean/worst |scaled difference| over categories and over cells (>= MIN_CELL patients)."""
    out: dict = {}
    base_m = np.array([m for m, _ in per_trial["per-stratum random"]])
    base_c = np.array([c[kept] for _, c in per_trial["per-stratum random"]])
    for method, rows in per_trial.items():
        m = np.array([r[0] for r in rows])
        c = np.array([r[1][kept] for r in rows])
        out[method] = {
            "categories": {
                "mean": round(float(m.mean()), 4),
                "mean_worst_per_trial": round(float(m.max(axis=1).mean()), 4),
                "worst_over_trials": round(float(m.max()), 4),
                "per_category_mean_range": [round(float(m.mean(0).min()), 4), round(float(m.mean(0).max()), 4)],
            },
            "cells": {
                "mean": round(float(c.mean()), 4),
                "mean_worst_per_trial": round(float(c.max(axis=1).mean()), 4),
                "worst_over_trials": round(float(c.max()), 4),
            },
        }
        if method != "per-stratum random":
            out[method]["categories"]["better_than_baseline"] = int((m.mean(0) < base_m.mean(0)).sum())
            out[method]["cells"]["better_than_baseline"] = int((c.mean(0) < base_c.mean(0)).sum())
    return out


def replay(trials: int, n_patients: int) -> dict:
    cohort_rng = np.random.default_rng(2026)
    first = patients(n_patients, cohort_rng)
    batch1 = studies(first, 0)
    n_returning, n_new = round(0.09 * n_patients), round(0.21 * n_patients)
    returning = first.sample(n_returning, random_state=7)
    batch2 = studies(pd.concat([returning, patients(n_new, cohort_rng, first=n_patients)]), len(batch1))
    union = pd.concat([batch1, batch2], ignore_index=True)
    spec1, spec2 = spec_of(batch1), spec_of(union)
    margins1, cells1, names = indicators(batch1)
    margins2, cells2, _ = indicators(union)
    methods = {"per-stratum random": None, "depgraph margins (joint=1)": 1, "depgraph joint (joint=2)": 2}
    first_batch: dict = {m: [] for m in methods}
    second_batch: dict = {m: [] for m in methods}
    seconds: dict = {m: 0.0 for m in methods}
    returning_kept = True
    for seed in range(trials):
        for method, joint in methods.items():
            started = time.perf_counter()
            if joint is None:
                rng = np.random.default_rng(seed)
                test1 = per_stratum_random(batch1, rng)
                keep = pd.Series(test1, index=batch1["patient"].to_numpy())
                test2 = per_stratum_random(union, rng, keep)
            else:
                planned1 = depgraph_holdout(spec1, joint, seed)
                planned2 = depgraph_holdout(spec2, joint, seed, prior=planned1)
                test1, test2 = tested(planned1), tested(planned2)
            seconds[method] += time.perf_counter() - started
            side1 = pd.Series(test1, index=batch1["patient"].to_numpy())
            side2 = pd.Series(test2, index=union["patient"].to_numpy())
            back = side2[side2.index.isin(returning["patient"])]
            returning_kept &= bool((back == side1.reindex(back.index)).all())
            first_batch[method].append((scaled(test1, margins1), scaled(test1, cells1)))
            second_batch[method].append((scaled(test2, margins2), scaled(test2, cells2)))
    kept1, kept2 = cells1.sum(0) >= MIN_CELL, cells2.sum(0) >= MIN_CELL
    return {
        "patients": n_patients,
        "trials": trials,
        "test_fraction": TEST_FRACTION,
        "variables": VARIABLES,
        "categories": int(margins1.shape[1]),
        "cells": len(names),
        "cells_with_20_or_more": int(kept1.sum()),
        "first_batch": summarise(first_batch, kept1),
        "second_batch": {
            "returning_patients": n_returning,
            "new_patients": n_new,
            "returning_patients_kept_their_side": returning_kept,
            "cells_with_20_or_more": int(kept2.sum()),
            **summarise(second_batch, kept2),
        },
        "seconds_per_trial": {m: round(s / trials, 3) for m, s in seconds.items()},
    }


def _print(name: str, summary: dict) -> None:
    print(name)
    for method, row in summary.items():
        if not isinstance(row, dict) or "categories" not in row:
            continue
        cat, cell = row["categories"], row["cells"]
        better = f"  better: {cat.get('better_than_baseline', '-')} / {cell.get('better_than_baseline', '-')}"
        print(f"  {method:28s} categories mean {cat['mean']:.4f} worst {cat['worst_over_trials']:.4f} | "
              f"cells mean {cell['mean']:.4f} worst {cell['worst_over_trials']:.4f}{better}")  # fmt: skip


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--trials", type=int, default=50)
    parser.add_argument("--patients", type=int, default=5000)
    args = parser.parse_args()
    result = replay(args.trials, args.patients)
    _print(f"first batch ({result['cells_with_20_or_more']} cells of >= {MIN_CELL})", result["first_batch"])
    _print("second batch (union)", result["second_batch"])
    print("returning patients kept their side:", result["second_batch"]["returning_patients_kept_their_side"])
    print("seconds per trial:", result["seconds_per_trial"])
    RESULTS.mkdir(exist_ok=True)
    (RESULTS / "holdout.json").write_text(json.dumps(result, indent=2) + "\n")


if __name__ == "__main__":
    main()
