"""The three-layer leakage study of issue 13: how far each grouping's CV estimate is from the external truth.

Each replicate simulates a development cohort (40 families × 2 siblings × 3
visits, 6 batches, a family-level outcome, 24 undeclared re-deposits) and an
external cohort of 400 new families (``depgraph.cli.demo.leakage_cohort``),
then, through depgraph's public API only, builds four designs — row-wise
folds, subject groups, relatedness groups (siblings linked by kinship) and
relatedness + the duplicates the audit finds — with 5 stratified grouped folds
each, and scores logistic regression and a 100-tree random forest (no
upsampling). The estimate of a design is its mean-of-folds CV AUC minus the
AUC on the external cohort of the model fitted on all development data.

    python benchmarks/honest_cv.py --replicates 30          # minutes on 2 cores
    python benchmarks/honest_cv.py --replicates 2 --seed 0 --output /tmp/h.json --figure /tmp/h.png
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np
import sklearn
from scipy import stats
from sklearn.base import clone
from sklearn.ensemble import RandomForestClassifier
from sklearn.linear_model import LogisticRegression
from sklearn.metrics import roc_auc_score

if __package__ in (None, ""):  # run as a script: make the repository importable
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import depgraph
from depgraph.cli.demo import LeakageCohort, leakage_cohort

DESIGNS = ("row-wise", "subject", "relatedness", "relatedness + duplicates")
AUDIT_THRESHOLD = 0.995
N_SPLITS = 5
RESULTS = Path(__file__).resolve().parent / "results"


def models(seed: int) -> dict[str, Any]:
    """The two learners of the published study (no class weights, no upsampling).

    Logistic regression is the default L2 fit solved by Newton steps: lbfgs reaches the same optimum, much
    slower on a busy machine (its BLAS threads contend with the other workers).
    """
    return {
        "logistic regression": LogisticRegression(solver="newton-cholesky", max_iter=200),
        "random forest": RandomForestClassifier(n_estimators=100, random_state=seed, n_jobs=1),
    }


def design_specs(cohort: LeakageCohort, seed: int) -> tuple[dict[str, depgraph.SplitSpec], Any]:
    """The four designs' specs (5 stratified grouped folds each) and the pairs the duplicate audit found."""
    meta = cohort.metadata
    one_per_row = depgraph.from_metadata(meta.assign(subject_id=meta["sample_id"]), name="row-wise")
    graph = depgraph.from_metadata(meta, name="leakage study")
    related = depgraph.add_kinship(graph, cohort.kinship, "first")
    audited = depgraph.audit_duplicates(cohort.feature_table(), threshold=AUDIT_THRESHOLD)
    after = depgraph.add_duplicates(related, audited, similarity_column="similarity", provenance="audit")
    partitions = {
        "row-wise": (depgraph.derive(one_per_row, "subject"), one_per_row),
        "subject": (depgraph.derive(graph, "subject"), graph),
        "relatedness": (depgraph.derive(related, "relatedness"), related),
        "relatedness + duplicates": (
            depgraph.derive(after, "composite", strategy="strict", via=["relatedness", "duplicate"]),
            after,
        ),
    }
    specs = {
        name: depgraph.assign_folds(
            depgraph.SplitSpec.from_partition(partition, g), "stratified-group-kfold", n_splits=N_SPLITS, seed=seed
        )
        for name, (partition, g) in partitions.items()
    }
    return specs, audited


def cv_auc(model: Any, spec: depgraph.SplitSpec, cohort: LeakageCohort) -> float:
    """Mean over the spec's folds of the test-fold AUC of ``model`` refitted on the training folds."""
    ids = cohort.metadata["sample_id"].tolist()
    X, y = cohort.features, cohort.outcome
    aucs = [
        roc_auc_score(y[test], clone(model).fit(X[train], y[train]).predict_proba(X[test])[:, 1])
        for train, test in depgraph.SpecCV(spec, ids=ids).split(X)
    ]
    return float(np.mean(aucs))


def audit_score(audited: Any, cohort: LeakageCohort) -> dict[str, int]:
    """Injected re-deposit pairs the audit found, and pairs it reported that were never injected."""
    found = {frozenset(p) for p in audited[["id1", "id2"]].itertuples(index=False)}
    injected = {frozenset(p) for p in cohort.duplicates[["id1", "id2"]].itertuples(index=False)}
    return {"injected": len(injected), "found": len(found & injected), "false_pairs": len(found - injected)}


def replicate(seed: int) -> dict[str, Any]:
    """One simulated study: CV AUC per design and model, external AUC per model, the audit's score."""
    cohort = leakage_cohort(seed=seed)
    specs, audited = design_specs(cohort, seed)
    cv: dict[str, dict[str, float]] = {design: {} for design in DESIGNS}
    external: dict[str, float] = {}
    for name, model in models(seed).items():
        for design in DESIGNS:
            cv[design][name] = cv_auc(model, specs[design], cohort)
        final = clone(model).fit(cohort.features, cohort.outcome)
        external[name] = float(
            roc_auc_score(cohort.external_outcome, final.predict_proba(cohort.external_features)[:, 1])
        )
    return {"seed": seed, "cv_auc": cv, "external_auc": external, "audit": audit_score(audited, cohort)}


def interval(values: np.ndarray) -> dict[str, float | None]:
    """Mean, 95% t-interval of the mean over replicates (None for one replicate), 2.5-97.5 percentiles."""
    mean = float(values.mean())
    low, high = np.percentile(values, [2.5, 97.5])
    summary: dict[str, float | None] = {"mean": mean, "ci_low": None, "ci_high": None}
    if len(values) > 1:
        half = float(stats.t.ppf(0.975, len(values) - 1) * values.std(ddof=1) / np.sqrt(len(values)))
        summary.update(ci_low=mean - half, ci_high=mean + half)
    return {**summary, "p2_5": float(low), "p97_5": float(high)}


def summarise(replicates: list[dict[str, Any]]) -> dict[str, Any]:
    """Per design and model: CV AUC, external AUC and their difference (the optimism), each with intervals."""
    table = {}
    for design in DESIGNS:
        for name in replicates[0]["external_auc"]:
            cv = np.array([r["cv_auc"][design][name] for r in replicates])
            ext = np.array([r["external_auc"][name] for r in replicates])
            table[f"{design} | {name}"] = {
                "design": design,
                "model": name,
                "cv_auc": interval(cv),
                "external_auc": interval(ext),
                "optimism": interval(cv - ext),
            }
    audits = [r["audit"] for r in replicates]
    injected, found = sum(a["injected"] for a in audits), sum(a["found"] for a in audits)
    return {
        "table": list(table.values()),
        "audit": {
            "injected": injected,
            "found": found,
            "recall": found / injected,
            "false_pairs": sum(a["false_pairs"] for a in audits),
        },
    }


def figure(summary: dict[str, Any], path: Path) -> None:
    """CV estimate (with 95% interval) beside the external AUC, per design, one panel per model."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    names = list(dict.fromkeys(row["model"] for row in summary["table"]))
    fig, axes = plt.subplots(1, len(names), figsize=(5.2 * len(names), 3.8), sharey=True)
    for ax, name in zip(np.atleast_1d(axes), names, strict=True):
        rows = [row for row in summary["table"] if row["model"] == name]
        x = np.arange(len(rows))
        for key, colour, label, dx in (
            ("cv_auc", "tab:red", "CV estimate", -0.1),
            ("external_auc", "tab:blue", "external", 0.1),
        ):
            mean = np.array([r[key]["mean"] for r in rows])
            err = np.array(
                [
                    [
                        r[key]["mean"] - (r[key]["ci_low"] or r[key]["mean"]),
                        (r[key]["ci_high"] or r[key]["mean"]) - r[key]["mean"],
                    ]
                    for r in rows
                ]
            ).T
            ax.errorbar(x + dx, mean, yerr=err, fmt="o", color=colour, label=label, capsize=3)
        ax.set_xticks(x, [r["design"].replace(" + ", "\n+ ") for r in rows], fontsize=8)
        ax.set_title(name)
        ax.set_ylabel("AUC (mean, 95% CI over replicates)")
        ax.grid(axis="y", alpha=0.3)
    np.atleast_1d(axes)[-1].legend(loc="upper right")
    fig.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=120)
    plt.close(fig)


def run(replicates: int = 30, seed: int = 0) -> dict[str, Any]:
    """The study over ``replicates`` seeds ``seed, seed + 1, ...``: every replicate and the summary."""
    started = time.perf_counter()
    rows = [replicate(seed + r) for r in range(replicates)]
    return {
        "settings": {
            "replicates": replicates,
            "seed": seed,
            "n_splits": N_SPLITS,
            "audit_threshold": AUDIT_THRESHOLD,
            "depgraph": depgraph.__version__,
            "scikit-learn": sklearn.__version__,  # the models' defaults move between releases
        },
        "summary": summarise(rows),
        "replicates": rows,
        "seconds": round(time.perf_counter() - started, 1),
    }


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--replicates", type=int, default=30)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--output", type=Path, default=RESULTS / "honest_cv.json")
    parser.add_argument("--figure", type=Path, default=RESULTS / "honest_cv.png")
    args = parser.parse_args(argv)
    results = run(args.replicates, args.seed)
    args.output.parent.mkdir(parents=True, exist_ok=True)
    args.output.write_text(json.dumps(results, indent=1) + "\n")
    figure(results["summary"], args.figure)
    for row in results["summary"]["table"]:
        o = row["optimism"]
        spread = f" [{o['ci_low']:+.3f}, {o['ci_high']:+.3f}]" if o["ci_low"] is not None else ""
        print(
            f"{row['design']:26s} {row['model']:20s} CV {row['cv_auc']['mean']:.3f}  external "
            f"{row['external_auc']['mean']:.3f}  optimism {o['mean']:+.3f}{spread}"
        )
    audit = results["summary"]["audit"]
    print(
        f"audit: {audit['found']}/{audit['injected']} injected pairs found, {audit['false_pairs']} false pairs; "
        f"{results['seconds']} s"
    )


if __name__ == "__main__":
    main()
