"""Evaluation as a reviewer reads it: calibration per split and block, agreement across blocks (Cochran's Q, I²) and
one table of every flag.

Expected values come from scikit-learn, scipy's root finding and plain Python, never from the code under test; the
heterogeneity rule's power and false-flag rate are counted over generated cohorts.
"""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest
from scipy import optimize
from scipy.special import expit, logit

import depgraph
from benchmarks.bench_heterogeneity import cohort
from depgraph.audit.calibration import calibration
from depgraph.audit.evaluation import FLAG_COLUMNS, evaluate
from depgraph.audit.heterogeneity import block_estimates
from depgraph.cli.main import main
from depgraph.spec.files import write_spec
from depgraph.spec.model import SplitSpec

metrics = pytest.importorskip("sklearn.metrics")
linear_model = pytest.importorskip("sklearn.linear_model")


def calibrated(n: int, seed: int, spread: float = 1.5) -> tuple[np.ndarray, np.ndarray]:
    """Probabilities that are right: y drawn with probability p."""
    rng = np.random.default_rng(seed)
    p = expit(rng.normal(0, spread, n))
    return p, rng.random(n) < p


# --------------------------------------------------------------------------- calibration
def test_calibration_matches_scikit_learn_and_root_finding():
    """The Brier score is scikit-learn's; the slope and its intercept are an unpenalised logistic regression on
    logit(p); the calibration intercept solves the score equation with the slope held at 1."""
    p, y = calibrated(600, 1)
    p = np.clip(p * 0.8 + 0.05, 0, 1)  # miscalibrated on purpose
    found = calibration(p, y, np.arange(len(p)), 0.95)
    assert found["brier"] == pytest.approx(metrics.brier_score_loss(y, p), abs=1e-12)
    lp = logit(p)
    model = linear_model.LogisticRegression(C=np.inf, tol=1e-10, max_iter=1000).fit(lp.reshape(-1, 1), y)
    assert found["calibration_slope"] == pytest.approx(model.coef_[0, 0], abs=1e-4)
    intercept = optimize.brentq(lambda a: np.sum(y - expit(a + lp)), -10, 10, xtol=1e-12)
    assert found["calibration_intercept"] == pytest.approx(intercept, abs=1e-6)
    assert found["calibration_note"] is None


@pytest.mark.parametrize("seed", range(4))
def test_far_miscalibrated_blocks_are_fitted_to_the_root_not_given_up(seed):
    """Probabilities near 1 where the outcome is rare (and some at exactly 0 or 1): the likelihood is nearly flat,
    a full Newton step overshoots into a region with no information, and the intercept is still the score
    equation's root (from scipy's root finding; scipy's trust-region fit stopped short of it or gave up)."""
    rng = np.random.default_rng(seed)
    p = np.concatenate([rng.uniform(0.9, 1.0, 60) ** 0.05, [1.0, 0.0, 1.0]])
    y = np.zeros(len(p), dtype=bool)
    y[rng.choice(len(p), 1 + seed, replace=False)] = True
    lp = logit(np.clip(p, 1e-9, 1 - 1e-9))
    root = optimize.brentq(lambda a: np.sum(y - expit(a + lp)), -100, 100, xtol=1e-12)
    found = calibration(p, y, np.arange(len(p)), 0.95)
    assert -25 < root < -9  # far from 0, within the fit's bound
    assert found["calibration_intercept"] == pytest.approx(root, abs=1e-6), found["calibration_note"]


def test_intervals_treat_a_group_as_one_and_agree_with_fisher_information_for_singletons():
    """Each sample given twice in one group leaves the cluster-robust interval as it was (the copies add no
    information), where counting them as independent would shrink it by √2; with groups of one the interval is
    close to the model-based one (inverse Fisher information)."""
    p, y = calibrated(800, 2)
    single = calibration(p, y, np.arange(800), 0.95)
    doubled = calibration(np.repeat(p, 2), np.repeat(y, 2), np.repeat(np.arange(800), 2), 0.95)
    for name in ("calibration_intercept", "calibration_slope"):
        assert doubled[name] == pytest.approx(single[name], abs=1e-6)
        width = single[f"{name}_high"] - single[f"{name}_low"]
        assert doubled[f"{name}_high"] - doubled[f"{name}_low"] == pytest.approx(width, rel=1e-4)
    w = p * (1 - p)  # at a slope of 1 and intercept 0 (nearly the fit): the Fisher information of the intercept
    fisher = 2 * 1.959964 / np.sqrt(w.sum())
    width = single["calibration_intercept_high"] - single["calibration_intercept_low"]
    assert width == pytest.approx(fisher, rel=0.15)


def test_one_class_and_separated_classes_are_reported_not_crashed():
    p, _ = calibrated(50, 3)
    one = calibration(p, np.zeros(50, dtype=bool), np.arange(50), 0.95)
    assert one["calibration_note"] == "one class" and np.isnan(one["calibration_slope"])
    assert one["brier"] == pytest.approx(np.mean(p**2))
    apart = calibration(np.array([0.1, 0.2, 0.3, 0.7, 0.8, 0.9]), np.array([0, 0, 0, 1, 1, 1], dtype=bool),
                        np.arange(6), 0.95)  # fmt: skip
    assert "separated" in apart["calibration_note"] and np.isnan(apart["calibration_slope"])


# --------------------------------------------------------------------------- the report's tables
def test_the_flag_table_lists_every_rule_with_its_columns():
    spec, predictions = cohort(0, 0.6)
    report = evaluate(spec, predictions, threshold=0.5, by="site", n_boot=0)
    assert tuple(report.flags.columns) == FLAG_COLUMNS and report.probabilities
    agreement = report.flags[report.flags["rule"] == "heterogeneity"]
    assert len(agreement) and agreement["split"].isna().all() and agreement["fold"].isna().all()
    assert "site3" in agreement["detail"].iloc[0]  # the block farthest from the others is named
    table = report.heterogeneity.set_index("statistic")
    assert not table.loc["auc", "flag"]  # a shift moves no ranking within a site
    assert (table.loc[list(agreement["statistic"]), "farthest"] == "site3").all()
    assert (table.loc[list(agreement["statistic"]), "i2"] > 0.5).all()
    text = str(report)
    assert "agreement across site_group blocks" in text and all(d in text for d in agreement["detail"])
    assert report.table[["brier", "calibration_intercept", "calibration_slope"]].notna().all().all()


def test_scores_that_are_not_probabilities_get_no_calibration():
    spec, predictions = cohort(1, 0.0)
    predictions["score"] = logit(predictions["score"])
    report = evaluate(spec, predictions, threshold=0.0, by="site", n_boot=0)
    assert not report.probabilities and report.table["calibration_intercept"].isna().all()
    assert "calibration_intercept" not in set(report.heterogeneity["statistic"])
    assert "not estimated (the scores are not probabilities in [0, 1])" in str(report)


def test_a_site_of_one_class_is_reported_and_left_out_of_the_agreement():
    spec, predictions = cohort(2, 0.0)
    site = spec.samples["site_group"].to_numpy()[spec.positions(predictions["sample_id"], "ids")]
    predictions.loc[site == "site5", "label"] = 1
    report = evaluate(spec, predictions, threshold=0.5, by="site", n_boot=0)
    rows = report.table[report.table["block"] == "site5"]
    assert (rows["calibration_note"] == "one class").all() and rows["calibration_slope"].isna().all()
    table = report.heterogeneity.set_index("statistic")
    assert table.loc["sensitivity", "n_blocks"] == 8 and table.loc["specificity", "n_blocks"] == 7
    assert table.loc["auc", "n_blocks"] == 7


def test_the_auc_variance_is_delongs_for_groups_of_one():
    """With one sample per group, the clustered variance is DeLong's, computed here from all pairs."""
    rng = np.random.default_rng(4)
    score, positive = rng.random(120), rng.random(120) < 0.4
    block = pd.DataFrame({"score": score, "positive": positive, "called": score > 0.5, "group": np.arange(120)})
    theta, variance = block_estimates(block, probabilities=False)["auc"]
    pos, neg = score[positive], score[~positive]
    psi = (pos[:, None] > neg[None, :]) + 0.5 * (pos[:, None] == neg[None, :])
    auc = psi.mean()
    v10, v01 = psi.mean(axis=1), psi.mean(axis=0)
    delong = v10.var(ddof=1) / len(pos) + v01.var(ddof=1) / len(neg)
    assert theta == pytest.approx(logit(auc))
    assert variance * (auc * (1 - auc)) ** 2 == pytest.approx(delong, rel=1e-9)


def test_a_block_of_one_group_has_no_interval_and_stays_out_of_the_comparison():
    p, y = calibrated(100, 5)
    one = calibration(p, y, np.zeros(100, dtype=int), 0.95)
    assert one["calibration_note"].startswith("one group") and np.isnan(one["calibration_intercept_low"])
    block = pd.DataFrame({"score": p, "positive": y, "called": p > 0.5, "group": 0})
    assert all(v is None for v in block_estimates(block, probabilities=True).values())


def test_the_same_rows_in_another_order_give_the_same_bytes():
    spec, predictions = cohort(3, 0.6, per_site=100)
    first = evaluate(spec, predictions, threshold=0.5, by="site", n_boot=20)
    again = evaluate(spec, predictions.sample(frac=1, random_state=1), threshold=0.5, by="site", n_boot=20)
    assert json.dumps(first.to_json_dict()) == json.dumps(again.to_json_dict())


@pytest.mark.parametrize("name", ["(all)", "(across blocks)", "(none)"])
def test_a_block_named_like_the_evaluations_own_rows_is_refused(name):
    spec, predictions = cohort(0, 0.0, per_site=50)
    samples = spec.samples.assign(site_group=spec.samples["site_group"].replace("site2", name))
    renamed = SplitSpec.build(samples, constraint=spec.constraint, recommended_resampling="grouped_cv")
    with pytest.raises(depgraph.DepgraphError, match="rename it") as caught:
        evaluate(renamed.with_folds(spec.folds), predictions, threshold=0.5, by="site", n_boot=0)
    assert caught.value.code == "invalid_value"


@pytest.mark.slow
def test_a_site_shifted_by_0_6_logits_is_caught_and_an_unshifted_cohort_rarely_flagged():
    """The documented heterogeneity rule's power: 8 sites × 500 samples, one site's scores moved by +0.6 logits,
    flagged in at least 95 of 100 cohorts; without the move, flagged in at most 5 of 100."""
    flagged = {}
    for shift in (0.6, 0.0):
        flagged[shift] = sum(
            bool((evaluate(*cohort(seed, shift), threshold=0.5, by="site", n_boot=0).flags["rule"]
                  == "heterogeneity").any())
            for seed in range(100)
        )  # fmt: skip
    assert flagged[0.6] >= 95 and flagged[0.0] <= 5, flagged


# --------------------------------------------------------------------------- the command line
def test_the_command_prints_the_flags_and_writes_them_beside_the_table(tmp_path, capsys):
    spec, predictions = cohort(0, 0.6, per_site=200)
    write_spec(spec, tmp_path / "spec.json")
    predictions.to_csv(tmp_path / "p.csv", index=False)
    args = ["evaluate", str(tmp_path / "spec.json"), str(tmp_path / "p.csv"), "--by", "site", "--threshold", "0.5",
            "--boot", "0"]  # fmt: skip
    assert main([*args, "-o", str(tmp_path / "e.tsv")]) == 0
    out = capsys.readouterr().out
    # the files the command says it wrote are the ones on disk (the CLI words them, companion_tables names them)
    assert f"wrote {tmp_path / 'e.tsv'} (and e.flags.tsv, e.heterogeneity.tsv)" in out
    flags = pd.read_csv(tmp_path / "e.flags.tsv", sep="\t")
    assert list(flags.columns) == list(FLAG_COLUMNS) and len(flags) and all(d in out for d in flags["detail"])
    agreement = pd.read_csv(tmp_path / "e.heterogeneity.tsv", sep="\t")
    assert set(agreement["statistic"]) == {"sensitivity", "specificity", "auc", "calibration_intercept"}
    assert main([*args, "-o", str(tmp_path / "e.json")]) == 0
    document = json.loads((tmp_path / "e.json").read_text())
    assert [f["detail"] for f in document["flags"]] == flags["detail"].tolist()
    assert document["heterogeneity_rule"] == {"family_alpha": 0.05, "correction": "bonferroni"}


def test_a_failing_evaluation_leaves_neither_the_table_nor_its_companions(tmp_path, capsys):
    spec, predictions = cohort(0, 0.0, per_site=100)
    write_spec(spec, tmp_path / "spec.json")
    predictions["score"] = predictions["score"].astype(object)
    predictions.loc[3, "score"] = "high"
    predictions.to_csv(tmp_path / "p.csv", index=False)
    code = main(["evaluate", str(tmp_path / "spec.json"), str(tmp_path / "p.csv"), "--by", "site", "-o",
                 str(tmp_path / "e.csv")])  # fmt: skip
    err = capsys.readouterr().err
    assert code == 2 and err.startswith("depgraph: invalid_value") and len(err.splitlines()) == 1
    assert sorted(p.name for p in tmp_path.iterdir()) == ["p.csv", "spec.json"]


def test_a_companion_path_that_is_a_directory_is_refused_before_any_work(tmp_path, capsys):
    spec, predictions = cohort(0, 0.0, per_site=100)
    write_spec(spec, tmp_path / "spec.json")
    predictions.to_csv(tmp_path / "p.csv", index=False)
    (tmp_path / "e.flags.csv").mkdir()
    code = main(["evaluate", str(tmp_path / "spec.json"), str(tmp_path / "p.csv"), "-o", str(tmp_path / "e.csv")])
    assert code == 2 and "e.flags.csv" in capsys.readouterr().err and not (tmp_path / "e.csv").exists()


def test_the_report_shows_the_flags_the_agreement_and_the_reliability_curves(tmp_path):
    spec, predictions = cohort(0, 0.6, per_site=200)
    report = evaluate(spec, predictions, threshold=0.5, by="site", n_boot=0)
    depgraph.write_report(spec, tmp_path / "r.html", evaluation=report)
    page = (tmp_path / "r.html").read_text()
    assert "<h3>Agreement across site_group blocks</h3>" in page and "reliability curves per block" in page
    assert all(rule in page for rule in report.flags["rule"]) and "the blocks disagree on" in page


def test_predictions_without_a_test_row_are_refused_and_without_by_the_agreement_file_is_empty(tmp_path, capsys):
    spec, predictions = cohort(0, 0.0, per_site=50)
    with pytest.raises(depgraph.DepgraphError, match="no test rows") as caught:
        evaluate(spec, _train_rows(spec), threshold=0.5, n_boot=0)
    assert caught.value.code == "empty_input"
    write_spec(spec, tmp_path / "spec.json")
    predictions.to_csv(tmp_path / "p.csv", index=False)
    args = ["evaluate", str(tmp_path / "spec.json"), str(tmp_path / "p.csv"), "--threshold", "0.5", "--boot", "0"]
    assert main([*args, "-o", str(tmp_path / "e.csv")]) == 0
    capsys.readouterr()
    agreement = pd.read_csv(tmp_path / "e.heterogeneity.csv")
    assert agreement.empty and "statistic" in agreement.columns


def _train_rows(spec: SplitSpec) -> pd.DataFrame:
    """Training rows only, one per sample and split that trains it."""
    roles = np.stack([s.roles(spec.n_samples) for s in spec.folds.splits])
    split, position = np.nonzero(roles == 0)
    return pd.DataFrame({"sample_id": spec.sample_ids[position], "split": split, "role": "train", "score": 0.5,
                         "label": position % 2})  # fmt: skip
