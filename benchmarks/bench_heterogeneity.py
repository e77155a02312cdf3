"""The heterogeneity flag's power and false-flag rate: how often ``depgraph.evaluate(..., by="site")`` says the
sites disagree, over generated cohorts, as one site's scores move further.

    python benchmarks/bench_heterogeneity.py [--cohorts 100] [--shifts 0,0.3,0.6,0.9] [--output FILE]

A cohort: 8 sites × 500 samples, two samples per subject (a spec group), five folds grouped by subject; a risk
drawn from N(0, 1.5²) on the logit scale, the outcome drawn with that probability, and the model's probability
right everywhere but at ``site3``, whose scores are moved by the shift (in logits). The test rows of the five folds
are evaluated at a threshold of 0.5 without bootstrap. Results (flag rate per shift, seconds per evaluation) go to
benchmarks/results/heterogeneity.json. The documented target: at least 95 % flagged at a shift of 0.6 and at most
5 % at 0 (tests/test_evaluation_review.py holds the rule to it).
"""

from __future__ import annotations

import argparse
import json
import statistics
import time
from pathlib import Path

import numpy as np
import pandas as pd
from scipy.special import expit

RESULTS = Path(__file__).resolve().parent / "results"


def make_spec(n_sites: int, per_site: int, n_folds: int, seed: int):  # type: ignore[no-untyped-def]
    """A spec of sites of ``per_site`` samples, two samples per subject (a spec group), and folds grouped by
    subject."""
    from depgraph.spec.model import Constraint, FoldPlan, SplitSpec

    n = n_sites * per_site
    rng = np.random.default_rng(seed)
    frame = pd.DataFrame({"sample_id": [f"S{i:05d}" for i in range(n)],
                          "group_id": [f"P{i // 2:05d}" for i in range(n)],
                          "site_group": np.repeat([f"site{s}" for s in range(n_sites)], per_site)})  # fmt: skip
    spec = SplitSpec.build(frame, constraint=Constraint(mode="subject"), recommended_resampling="grouped_cv")
    fold = np.repeat(rng.permutation(n // 2) % n_folds, 2)
    return spec.with_folds(FoldPlan.from_roles((fold[None, :] == np.arange(n_folds)[:, None]).astype(np.int8)))


def cohort(seed: int, shift: float, n_sites: int = 8, per_site: int = 500):  # type: ignore[no-untyped-def]
    """The spec and the test rows' predictions of one generated cohort (see the module docstring)."""
    spec = make_spec(n_sites, per_site, 5, seed)
    rng = np.random.default_rng(seed + 1000)
    risk = rng.normal(0, 1.5, spec.n_samples)
    label = rng.random(spec.n_samples) < expit(risk)
    score = expit(risk + shift * (spec.samples["site_group"] == "site3").to_numpy())
    roles = np.stack([s.roles(spec.n_samples) for s in spec.folds.splits])
    split, position = np.nonzero(roles == 1)
    predictions = pd.DataFrame({"sample_id": spec.sample_ids[position], "split": split, "role": "test",
                                "score": score[position], "label": label[position].astype(int)})  # fmt: skip
    return spec, predictions


def flagged(seed: int, shift: float) -> tuple[bool, float]:
    """Whether the cohort's sites are flagged as disagreeing, and the evaluation's seconds."""
    from depgraph import evaluate

    spec, predictions = cohort(seed, shift)
    start = time.perf_counter()
    report = evaluate(spec, predictions, threshold=0.5, by="site", n_boot=0)
    return bool((report.flags["rule"] == "heterogeneity").any()), time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cohorts", type=int, default=100)
    parser.add_argument("--shifts", default="0,0.3,0.6,0.9")
    parser.add_argument("--output", type=Path, default=RESULTS / "heterogeneity.json")
    options = parser.parse_args()
    results = []
    for shift in (float(s) for s in options.shifts.split(",")):
        runs = [flagged(seed, shift) for seed in range(options.cohorts)]
        results.append({"shift_logits": shift, "cohorts": options.cohorts,
                        "flagged": sum(flag for flag, _ in runs),
                        "seconds_per_evaluation": round(statistics.median(s for _, s in runs), 4)})  # fmt: skip
        print(json.dumps(results[-1]))
    options.output.write_text(json.dumps({"benchmark": "heterogeneity", "sites": 8, "samples_per_site": 500,
                                          "results": results}, indent=1) + "\n")  # fmt: skip


if __name__ == "__main__":
    main()
