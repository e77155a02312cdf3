"""The leakage study's smoke run (issue 13): two replicates keep the designs in the published order.

Mean CV AUC over the replicates must fall from row-wise folds to subject groups to relatedness groups to
relatedness + audited duplicates, for both models, and the audit must find every injected re-deposit and
nothing else. Two replicates are few: the seed is one at which the order holds with margin (see SEED).
"""

from __future__ import annotations

import json

import pytest

from benchmarks.honest_cv import DESIGNS, main

#: Replicates SEED and SEED + 1. In the committed 30-replicate run (seeds 0-29) the order holds, for both
#: models, in 27 of the 29 consecutive pairs (not 22-23, 25-26: relatedness vs relatedness + duplicates is the
#: narrow gap); pair 1-2 holds with the widest smallest gap between neighbouring designs (0.061 AUC).
SEED = 1


@pytest.mark.slow  # two replicates of 20 forests and 20 regressions each: ~12 s; CI runs it (--slow)
def test_two_replicates_keep_the_designs_in_order(tmp_path):
    output, figure = tmp_path / "honest.json", tmp_path / "honest.png"
    main(["--replicates", "2", "--seed", str(SEED), "--output", str(output), "--figure", str(figure)])
    results = json.loads(output.read_text())
    table = results["summary"]["table"]
    for model in ("logistic regression", "random forest"):
        cv = {row["design"]: row["cv_auc"]["mean"] for row in table if row["model"] == model}
        assert [cv[d] for d in DESIGNS] == sorted(cv.values(), reverse=True), (model, cv)
        assert len(set(cv.values())) == len(DESIGNS)
    assert results["summary"]["audit"] == {"injected": 48, "found": 48, "recall": 1.0, "false_pairs": 0}
    assert figure.stat().st_size > 0 and results["settings"]["replicates"] == 2
