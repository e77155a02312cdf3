"""Fold quality: depgraph's schemes against the usual alternatives.

    python benchmarks/bench_folds.py [--cohorts 200] [--only stratified,splitters]

1. Stratified grouped k-fold vs scikit-learn's StratifiedGroupKFold (shuffle=True)
   on many random grouped cohorts (group sizes 1-12, 2-4 classes with
   group-correlated labels, prevalence 5-50 %, k = 5): the worst deviation of a
   test fold's class share from the cohort's, and the fold-size spread
   (max - min) / (n / k).
2. The drop-in splitters, as a user switching ``cv=`` gets them:
   depgraph.StratifiedGroupKFold / depgraph.GroupKFold against scikit-learn's
   splitters of the same names on the same cohorts, with the defaults
   (shuffle=False) and shuffled (random_state = the cohort's seed).
The balanced holdout has its own benchmark (benchmarks/bench_holdout.py).

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
from depgraph.folds.schemes import StratifiedGroupedKFold
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


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cohorts", type=int, default=200)
    parser.add_argument("--only", default="stratified,splitters", help="parts to run, comma-separated")
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
