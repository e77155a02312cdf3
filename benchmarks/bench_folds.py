"""Fold quality: depgraph's schemes against the usual alternatives.

    python benchmarks/bench_folds.py [--cohorts 200] [--seeds 100] [--only stratified,splitters,holdout]

1. Stratified grouped k-fold vs scikit-learn's StratifiedGroupKFold (shuffle=True)
   on many random grouped cohorts (group sizes 1-12, 2-4 classes with
   group-correlated labels, prevalence 5-50 %, k = 5): the worst deviation of a
   test fold's class share from the cohort's, and the fold-size spread
   (max - min) / (n / k).
2. The drop-in splitters, as a user switching ``cv=`` gets them:
   depgraph.StratifiedGroupKFold / depgraph.GroupKFold against scikit-learn's
   splitters of the same names on the same cohorts, with the defaults
   (shuffle=False) and shuffled (random_state = the cohort's seed).
3. Balanced holdout vs per-stratum random 80:20 on a 5,000-patient cohort with
   site, sex, age band, race and modality (one to three samples per patient),
   over many seeds: per category the scaled difference
   (N_test - f * N_total) / (f * N_total), worst over categories.

Prints tables and writes benchmarks/results/folds.json (the parts run replace
their entries; the others are kept).
"""

from __future__ import annotations

import argparse
import json
import time
import warnings
from pathlib import Path

import numpy as np
import pandas as pd
from sklearn.model_selection import GroupKFold as SkGroupKFold
from sklearn.model_selection import StratifiedGroupKFold as SkStratifiedGroupKFold

import depgraph
from depgraph.folds.schemes import BalancedHoldout, StratifiedGroupedKFold
from depgraph.spec.model import Constraint, SplitSpec

RESULTS = Path(__file__).resolve().parent / "results"


def _spec(frame: pd.DataFrame) -> SplitSpec:
    return SplitSpec.build(frame, constraint=Constraint(mode="subject"), recommended_resampling="grouped_cv")


def grouped_cohort(seed: int) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    n_groups = int(rng.integers(80, 600))
    n_classes = int(rng.integers(2, 5))
    prevalence = rng.dirichlet(np.ones(n_classes) * rng.uniform(0.3, 3))
    prevalence = np.maximum(prevalence, 0.05)
    prevalence /= prevalence.sum()
    sizes = rng.choice([1, 1, 1, 2, 2, 3, 4, 5, 8, 12], n_groups)
    labels, groups = [], []
    for g, size in enumerate(sizes):
        base = rng.choice(n_classes, p=prevalence)
        mixed = rng.random(size) < 0.25  # some groups hold several classes
        labels += np.where(mixed, rng.choice(n_classes, size=size, p=prevalence), base).tolist()
        groups += [f"G{g:04d}"] * size
    return pd.DataFrame(
        {
            "sample_id": [f"S{i:05d}" for i in range(len(labels))],
            "group_id": groups,
            "stratum": [f"c{c}" for c in labels],
        }
    )


def fold_quality(frame: pd.DataFrame, fold: np.ndarray, k: int) -> tuple[float, float]:
    overall = frame["stratum"].value_counts(normalize=True)
    worst = 0.0
    for f in range(k):
        share = frame["stratum"][fold == f].value_counts(normalize=True).reindex(overall.index, fill_value=0)
        worst = max(worst, float((share - overall).abs().max()))
    sizes = np.bincount(fold, minlength=k)
    return worst, float((sizes.max() - sizes.min()) / (len(frame) / k))


def compare_stratified(n_cohorts: int, k: int = 5) -> dict:
    ours, theirs = [], []
    for seed in range(n_cohorts):
        frame = grouped_cohort(seed)
        plan = StratifiedGroupedKFold(n_splits=k, seed=seed).plan(_spec(frame))
        fold = np.full(len(frame), -1)
        for split in plan.splits:
            fold[split.test] = split.fold
        ours.append(fold_quality(frame, fold, k))
        sk_fold = np.full(len(frame), -1)
        with warnings.catch_warnings():  # sklearn warns when a class has fewer groups than folds
            warnings.simplefilter("ignore")
            cv = SkStratifiedGroupKFold(n_splits=k, shuffle=True, random_state=seed)
            for f, (_, test) in enumerate(cv.split(frame, frame["stratum"], frame["group_id"])):
                sk_fold[test] = f
        theirs.append(fold_quality(frame, sk_fold, k))
    return {"cohorts": n_cohorts, "k": k, **_versus(np.array(ours), np.array(theirs))}


def _stats(a: np.ndarray, col: int) -> dict:
    return {"mean": round(float(a[:, col].mean()), 4), "p95": round(float(np.quantile(a[:, col], 0.95)), 4),
            "max": round(float(a[:, col].max()), 4)}  # fmt: skip


def _versus(ours: np.ndarray, theirs: np.ndarray) -> dict:
    """Both sides' (class share, size spread) statistics and depgraph's wins / ties / losses."""
    return {
        "depgraph": {"worst_class_share_deviation": _stats(ours, 0), "fold_size_spread": _stats(ours, 1)},
        "sklearn": {"worst_class_share_deviation": _stats(theirs, 0), "fold_size_spread": _stats(theirs, 1)},
        "share_wins_ties_losses": _wtl(ours[:, 0], theirs[:, 0]),
        "spread_wins_ties_losses": _wtl(ours[:, 1], theirs[:, 1]),
    }


def _splitter_folds(cv, frame: pd.DataFrame) -> np.ndarray:
    fold = np.full(len(frame), -1)
    with warnings.catch_warnings():  # both warn when a class has fewer groups (samples) than folds
        warnings.simplefilter("ignore")
        for f, (_, test) in enumerate(cv.split(frame, frame["stratum"], frame["group_id"])):
            fold[test] = f
    return fold


def compare_splitters(n_cohorts: int, k: int = 5) -> dict:
    """The drop-in splitters against scikit-learn's, defaults and shuffled, on the cohorts of compare_stratified."""
    pairs = {
        "StratifiedGroupKFold": (depgraph.StratifiedGroupKFold, SkStratifiedGroupKFold),
        "GroupKFold": (depgraph.GroupKFold, SkGroupKFold),
    }
    rows: dict[tuple[str, bool], tuple[list, list]] = {(n, s): ([], []) for n in pairs for s in (False, True)}
    seconds = {"depgraph": 0.0, "sklearn": 0.0}
    for seed in range(n_cohorts):
        frame = grouped_cohort(seed)
        for name, (ours_cls, theirs_cls) in pairs.items():
            for shuffle in (False, True):
                options = {"shuffle": True, "random_state": seed} if shuffle else {}
                for who, cls, out in (("depgraph", ours_cls, 0), ("sklearn", theirs_cls, 1)):
                    started = time.perf_counter()
                    fold = _splitter_folds(cls(k, **options), frame)
                    seconds[who] += time.perf_counter() - started
                    rows[name, shuffle][out].append(fold_quality(frame, fold, k))
    out: dict = {"cohorts": n_cohorts, "k": k, "seconds": {w: round(t, 1) for w, t in seconds.items()}}
    for (name, shuffle), (ours, theirs) in rows.items():
        out[f"{name}(shuffle={shuffle})"] = _versus(np.array(ours), np.array(theirs))
    return out


def _wtl(ours: np.ndarray, theirs: np.ndarray, tol: float = 1e-12) -> list[int]:
    """How often depgraph is better, equal, worse (lower is better)."""
    return [
        int((ours < theirs - tol).sum()),
        int((np.abs(ours - theirs) <= tol).sum()),
        int((ours > theirs + tol).sum()),
    ]


BALANCE = ("site", "sex", "age_band", "race", "modality")


def patient_cohort(n_patients: int = 5000, seed: int = 2026) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    patients = pd.DataFrame(
        {
            "group_id": [f"P{i:05d}" for i in range(n_patients)],
            "site": rng.choice(
                [f"site{i}" for i in range(8)], n_patients, p=[0.3, 0.2, 0.15, 0.1, 0.1, 0.07, 0.05, 0.03]
            ),
            "sex": rng.choice(["f", "m"], n_patients, p=[0.55, 0.45]),
            "age_band": rng.choice(["<40", "40-59", "60-74", "75+"], n_patients, p=[0.2, 0.35, 0.3, 0.15]),
            "race": rng.choice(["a", "b", "c", "d", "e"], n_patients, p=[0.6, 0.15, 0.12, 0.08, 0.05]),
            "modality": rng.choice(["ct", "mri", "xray"], n_patients, p=[0.5, 0.3, 0.2]),
            "n": rng.choice([1, 2, 3], n_patients, p=[0.6, 0.3, 0.1]),
        }
    )
    rows = patients.loc[patients.index.repeat(patients["n"])].drop(columns="n").reset_index(drop=True)
    rows.insert(0, "sample_id", [f"S{i:06d}" for i in range(len(rows))])
    return rows


def worst_scaled(frame: pd.DataFrame, test: np.ndarray, f: float) -> float:
    worst = 0.0
    for column in BALANCE:
        total = frame[column].value_counts()
        held = frame.loc[test, column].value_counts().reindex(total.index, fill_value=0)
        worst = max(worst, float(((held - f * total) / (f * total)).abs().max()))
    return worst


def per_stratum_random(frame: pd.DataFrame, f: float, rng: np.random.Generator) -> np.ndarray:
    patients = frame.drop_duplicates("group_id").set_index("group_id")[list(BALANCE)]
    stratum = patients.astype(str).agg("|".join, axis=1)
    chosen = set()
    for _, members in stratum.groupby(stratum):
        ids = members.index.to_numpy()
        chosen.update(rng.permutation(ids)[: round(f * len(ids))])
    return frame["group_id"].isin(chosen).to_numpy()


def compare_holdout(n_seeds: int, f: float = 0.2) -> dict:
    frame = patient_cohort()
    spec = _spec(frame)
    ours, baseline = [], []
    started = time.perf_counter()
    for seed in range(n_seeds):
        plan = BalancedHoldout(test_fraction=f, balance=BALANCE, seed=seed).plan(spec)
        test = np.zeros(len(frame), dtype=bool)
        test[plan.splits[0].test] = True
        ours.append(worst_scaled(frame, test, f))
        baseline.append(worst_scaled(frame, per_stratum_random(frame, f, np.random.default_rng(seed)), f))
    seconds = time.perf_counter() - started
    ours_a, base_a = np.array(ours), np.array(baseline)
    return {
        "patients": int(frame["group_id"].nunique()),
        "samples": len(frame),
        "seeds": n_seeds,
        "test_fraction": f,
        "balance": list(BALANCE),
        "depgraph_worst_scaled_difference": {
            "mean": round(float(ours_a.mean()), 4),
            "max": round(float(ours_a.max()), 4),
        },
        "per_stratum_random_worst_scaled_difference": {
            "mean": round(float(base_a.mean()), 4),
            "max": round(float(base_a.max()), 4),
        },
        "depgraph_better": int((ours_a < base_a).sum()),
        "seconds": round(seconds, 1),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cohorts", type=int, default=200)
    parser.add_argument("--seeds", type=int, default=100)
    parser.add_argument("--only", default="stratified,splitters,holdout", help="parts to run, comma-separated")
    args = parser.parse_args()
    parts = set(args.only.split(","))
    path = RESULTS / "folds.json"
    results = json.loads(path.read_text()) if path.exists() else {}
    if "stratified" in parts:
        results["stratified"] = stratified = compare_stratified(args.cohorts)
        print(f"stratified grouped {stratified['k']}-fold over {stratified['cohorts']} random cohorts")
        _print_versus(stratified)
    if "splitters" in parts:
        results["splitters"] = splitters = compare_splitters(args.cohorts)
        print(f"\ndrop-in splitters over {splitters['cohorts']} random cohorts (depgraph.X vs sklearn X)")
        for name in [key for key in splitters if "(" in key]:
            print(name)
            _print_versus(splitters[name])
        print(f"seconds in split: {splitters['seconds']}")
    if "holdout" in parts:
        results["holdout"] = holdout = compare_holdout(args.seeds)
        print(f"\nbalanced holdout ({holdout['patients']} patients, {holdout['samples']} samples, "
              f"{holdout['seeds']} seeds), worst |scaled difference| over {len(BALANCE)} columns")  # fmt: skip
        print(f"  depgraph balanced holdout: mean {holdout['depgraph_worst_scaled_difference']['mean']}, "
              f"max {holdout['depgraph_worst_scaled_difference']['max']}")  # fmt: skip
        print(f"  per-stratum random 80:20:  mean {holdout['per_stratum_random_worst_scaled_difference']['mean']}, "
              f"max {holdout['per_stratum_random_worst_scaled_difference']['max']}")  # fmt: skip
        print(f"  depgraph better in {holdout['depgraph_better']} of {holdout['seeds']} seeds")
    RESULTS.mkdir(exist_ok=True)
    path.write_text(json.dumps(results, indent=2) + "\n")


def _print_versus(result: dict) -> None:
    print(f"{'':12} {'worst class-share deviation (mean / p95 / max)':>48} {'fold-size spread (mean / p95 / max)':>40}")
    for who in ("depgraph", "sklearn"):
        d, s = result[who]["worst_class_share_deviation"], result[who]["fold_size_spread"]
        print(f"{who:12} {d['mean']:>20} / {d['p95']} / {d['max']:<14} {s['mean']:>16} / {s['p95']} / {s['max']}")
    print(f"depgraph better / equal / worse: class share {result['share_wins_ties_losses']}, "
          f"fold-size spread {result['spread_wins_ties_losses']}")  # fmt: skip


if __name__ == "__main__":
    main()
