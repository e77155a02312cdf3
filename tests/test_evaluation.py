"""depgraph.evaluate / depgraph evaluate: per split and held-out block, AUC beside the metrics at a threshold fixed
on training rows, group-bootstrap intervals, and the score-shift flag.

Expected values come from scikit-learn's metrics and plain Python, never from the code under test.
"""

from __future__ import annotations

import base64
import json
import re

import numpy as np
import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import depgraph
from depgraph.audit.evaluation import METRICS, ThresholdRule, block_statistics, evaluate
from depgraph.cli.main import main
from depgraph.errors import DepgraphError
from depgraph.folds.schemes import assign_folds
from depgraph.spec.files import write_spec
from depgraph.spec.model import Constraint, FoldPlan, SplitSpec

metrics = pytest.importorskip("sklearn.metrics")


def make_spec(ids, groups, roles=None, **columns) -> SplitSpec:
    """A spec of these samples (ids given in sorted order, so positions are the given order) and, with ``roles``
    (an (n_splits, n_samples) matrix of 0 train / 1 test / 2 excluded), its fold plan."""
    assert list(ids) == sorted(ids)
    frame = pd.DataFrame({"sample_id": list(ids), "group_id": list(groups), **{k: list(v) for k, v in columns.items()}})
    spec = SplitSpec.build(frame, constraint=Constraint(mode="subject"), recommended_resampling="grouped_cv")
    return spec if roles is None else spec.with_folds(FoldPlan.from_roles(np.asarray(roles)))


def predictions_of(spec: SplitSpec, score, label) -> pd.DataFrame:
    """One row per sample and split that trains or tests it, with the sample's score and label."""
    rows = []
    for k, split in enumerate(spec.folds.splits):
        role = split.roles(spec.n_samples)
        for i in np.flatnonzero(role < 2):
            rows.append((spec.sample_ids[i], k, "test" if role[i] == 1 else "train", score[i], label[i]))
    return pd.DataFrame(rows, columns=["sample_id", "split", "role", "score", "label"])


# --------------------------------------------------------------------------- the letter's example
def shifted_sites(n: int = 40):
    """Two sites, n samples each, classes alternating, scores that separate the classes perfectly; site B's scores
    divided by 10. Positives score in [0.8, 0.9] (the first one exactly 0.8), negatives in [0.1, 0.2]."""
    rng = np.random.default_rng(7)
    label = np.tile([0, 1], n)
    score = np.where(label == 1, 0.8 + 0.1 * rng.random(2 * n), 0.1 + 0.1 * rng.random(2 * n))
    score[1] = 0.8
    score[n:] /= 10
    ids = [f"S{i:03d}" for i in range(2 * n)]
    groups = [f"g{i // 2:03d}" for i in range(2 * n)]  # a positive and a negative per group
    return ids, groups, ["A"] * n + ["B"] * n, score, label


def test_the_letters_example_auc_one_at_both_sites_sensitivity_one_and_zero():
    ids, groups, site, score, label = shifted_sites()
    roles = np.ones(len(ids), dtype=int)
    roles[:20] = 0  # the model is developed on part of site A; the rest of A and all of B are held out
    spec = make_spec(ids, groups, [roles], site_group=site)
    report = depgraph.evaluate(spec, predictions_of(spec, score, label), by="site", n_boot=200)
    table = report.table.set_index("block")
    assert report.by == "site_group" and report.table["threshold"].tolist() == [0.8] * 3
    assert table.loc["A", "auc"] == table.loc["B", "auc"] == 1.0
    assert (table.loc["A", "sensitivity"], table.loc["B", "sensitivity"]) == (1.0, 0.0)
    assert table.loc["B", "balanced_accuracy"] == 0.5
    assert report.shifted["block"].tolist() == ["B"]
    assert "score shift in split 0 (repeat 0, fold 0), block B: AUC 1.00 but balanced accuracy 0.50" in str(report)


def test_leave_one_site_out_flags_both_directions_of_a_shift():
    ids, groups, site, score, label = shifted_sites()
    spec = make_spec(ids, groups, site_group=site)
    spec = assign_folds(spec, "logo", by="site_group")
    report = evaluate(spec, predictions_of(spec, score, label), by="site_group", n_boot=0)
    held_out = report.table[report.table["block"] != "(all)"].set_index("block")
    assert held_out["auc"].tolist() == [1.0, 1.0]
    # tested at A, trained on B (scores / 10): every A sample is called positive; tested at B: none is
    assert (held_out.loc["A", "sensitivity"], held_out.loc["A", "specificity"]) == (1.0, 0.0)
    assert (held_out.loc["B", "sensitivity"], held_out.loc["B", "specificity"]) == (0.0, 1.0)
    assert held_out["shift"].all()


def test_no_shift_when_the_threshold_fits():
    ids, groups, site, score, label = shifted_sites()
    score = score.copy()
    score[40:] *= 10  # site B as scored as site A
    roles = np.r_[np.zeros(20, int), np.ones(60, int)]
    spec = make_spec(ids, groups, [roles], site_group=site)
    report = evaluate(spec, predictions_of(spec, score, label), by="site_group", n_boot=0)
    assert not report.table["shift"].any() and "no score shift" in str(report)


# --------------------------------------------------------------------------- thresholds from training rows only
@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    train=st.lists(st.tuples(st.floats(-5, 5), st.booleans()), min_size=2, max_size=20).filter(
        lambda rows: len({positive for _, positive in rows}) == 2
    ),
    test_scores=st.lists(st.floats(-1e6, 1e6), min_size=8, max_size=8),
    rule=st.sampled_from(["youden", "sensitivity=0.7", "specificity=0.9", {"sensitivity": 1.0}, 0.25]),
)
def test_changing_test_scores_never_changes_the_threshold(train, test_scores, rule):
    n_train = len(train)
    ids = [f"S{i:03d}" for i in range(n_train + 8)]
    roles = np.r_[np.zeros(n_train, int), np.ones(8, int)]
    spec = make_spec(ids, ids, [roles])
    label = np.r_[[int(p) for _, p in train], [0, 1] * 4]
    base = np.r_[[s for s, _ in train], np.linspace(0, 1, 8)]
    changed = np.r_[[s for s, _ in train], test_scores]
    first = evaluate(spec, predictions_of(spec, base, label), threshold=rule, n_boot=0)
    second = evaluate(spec, predictions_of(spec, changed, label), threshold=rule, n_boot=0)
    assert first.table["threshold"].tolist() == second.table["threshold"].tolist()


def reference_threshold(rule: str | float, score: np.ndarray, positive: np.ndarray) -> float:
    """The rules as docs/evaluation.md states them, by brute force over candidate thresholds."""
    if isinstance(rule, float):
        return rule
    candidates = sorted(set(score.tolist()))
    sens = {t: float(np.mean(score[positive] >= t)) for t in [*candidates, np.nextafter(max(candidates), np.inf)]}
    spec = {t: float(np.mean(score[~positive] < t)) for t in sens}
    if rule == "youden":
        best = max(sens[t] + spec[t] for t in candidates)
        return max(t for t in candidates if np.isclose(sens[t] + spec[t], best, rtol=0, atol=1e-12))
    kind, value = rule.split("=")
    if kind == "sensitivity":
        return max(t for t in candidates if sens[t] >= float(value))
    return min(t for t in sens if spec[t] >= float(value))


@pytest.mark.parametrize("rule", ["youden", "sensitivity=0.9", "specificity=0.75", 0.45])
def test_statistics_match_scikit_learn_per_split_and_block(rule):
    rng = np.random.default_rng(3)
    n = 120
    ids = [f"S{i:03d}" for i in range(n)]
    groups = [f"g{i // 3:02d}" for i in range(n)]
    site = rng.choice(["north", "south", "west"], n)
    label = rng.integers(0, 2, n)
    score = np.round(label * 0.4 + rng.random(n), 1)  # rounded: many ties
    spec = assign_folds(make_spec(ids, groups, site_group=site), "group-kfold", n_splits=3, seed=1)
    predictions = predictions_of(spec, score, label)
    report = evaluate(spec, predictions, threshold=rule, by="site", n_boot=0)
    assert len(report.table) == 3 * 4
    for row in report.table.itertuples(index=False):
        in_split = predictions[predictions["split"] == row.split]
        train = in_split[in_split["role"] == "train"]
        t = reference_threshold(rule, train["score"].to_numpy(), train["label"].to_numpy() == 1)
        assert row.threshold == t
        test = in_split[in_split["role"] == "test"]
        if row.block != "(all)":
            test = test[site[spec.positions(test["sample_id"])] == row.block]
        y, s = test["label"].to_numpy(), test["score"].to_numpy()
        called = (s >= t).astype(int)
        assert row.n_test == len(test) and row.n_positive == y.sum()
        assert row.auc == pytest.approx(metrics.roc_auc_score(y, s))
        assert row.sensitivity == pytest.approx(metrics.recall_score(y, called))
        assert row.specificity == pytest.approx(metrics.recall_score(1 - y, 1 - called))
        assert row.balanced_accuracy == pytest.approx(metrics.balanced_accuracy_score(y, called))
        assert row.ppv == pytest.approx(metrics.precision_score(y, called, zero_division=np.nan), nan_ok=True)
        assert row.npv == pytest.approx(metrics.precision_score(1 - y, 1 - called, zero_division=np.nan), nan_ok=True)


def test_youden_threshold_maximises_tpr_minus_fpr_of_the_roc_curve():
    rng = np.random.default_rng(11)
    y = rng.integers(0, 2, 300)
    s = np.round(y + rng.normal(0, 1, 300), 2)
    t = ThresholdRule.of("youden").choose(s, y == 1)
    fpr, tpr, thresholds = metrics.roc_curve(y, s, drop_intermediate=False)
    j = tpr - fpr
    assert t in thresholds[np.isclose(j, j.max())]
    assert t == max(thresholds[np.isclose(j, j.max())])


# --------------------------------------------------------------------------- the bootstrap over groups
def test_bootstrap_statistics_are_scikit_learns_on_the_resampled_groups():
    rng = np.random.default_rng(5)
    n = 60
    y = rng.integers(0, 2, n).astype(bool)
    s = np.round(y * 0.5 + rng.random(n), 1)
    groups = rng.integers(0, 15, n)
    found = block_statistics(s, y, groups, 0.6, 300, 0.9, np.random.default_rng(42))
    # the same draws, by hand: G groups drawn with replacement, each sample weighing as often as its group
    _, codes = np.unique(groups, return_inverse=True)
    rng = np.random.default_rng(42)
    draws = [np.bincount(rng.integers(0, codes.max() + 1, codes.max() + 1), minlength=codes.max() + 1)
             for _ in range(300)]  # fmt: skip
    aucs, sens = [], []
    for counts in draws:
        w = counts[codes].astype(float)
        kept = w > 0
        both = len(set(y[kept].tolist())) == 2
        aucs.append(metrics.roc_auc_score(y, s, sample_weight=w) if both else np.nan)
        sens.append(metrics.recall_score(y, s >= 0.6, sample_weight=w) if y[kept].any() else np.nan)
    assert (found["auc_low"], found["auc_high"]) == pytest.approx(tuple(np.nanquantile(aucs, [0.05, 0.95])))
    low, high = np.nanquantile(sens, [0.05, 0.95])
    assert (found["sensitivity_low"], found["sensitivity_high"]) == pytest.approx((low, high))
    assert found["auc"] == pytest.approx(metrics.roc_auc_score(y, s))


def interval_widths(ids, groups, score, label) -> pd.Series:
    roles = np.r_[np.zeros(10, int), np.ones(len(ids) - 10, int)]
    spec = make_spec(ids, groups, [roles])
    row = evaluate(spec, predictions_of(spec, score, label), threshold=0.5, n_boot=2000, seed=4).table.iloc[0]
    return pd.Series({m: row[f"{m}_high"] - row[f"{m}_low"] for m in ("auc", "sensitivity", "specificity")})


def test_group_intervals_widen_over_a_sample_bootstrap_when_samples_of_a_group_are_duplicated():
    rng = np.random.default_rng(8)
    n = 50  # 10 training samples, then 40 tested
    label = np.r_[[0, 1] * 5, rng.integers(0, 2, n - 10)]
    score = np.clip(label * 0.3 + rng.random(n) * 0.7, 0, 1)
    alone = interval_widths([f"S{i:03d}" for i in range(n)], [f"g{i:03d}" for i in range(n)], score, label)
    # every tested sample deposited twice: the copy joins its original's group ...
    twice = np.r_[np.arange(10), np.repeat(np.arange(10, n), 2)]
    ids = [f"S{i:03d}" for i in range(len(twice))]
    as_groups = interval_widths(ids, [f"g{i:03d}" for i in twice], score[twice], label[twice])
    # ... or counts as a sample of its own, which is what a bootstrap over samples does
    as_samples = interval_widths(ids, [f"g{i:03d}" for i in range(len(twice))], score[twice], label[twice])
    assert as_groups.to_numpy() == pytest.approx(alone.to_numpy())  # the copies add no information
    assert (as_groups > 1.2 * as_samples).all(), (as_groups, as_samples)  # a sample bootstrap would narrow them


def test_intervals_are_deterministic_for_a_seed():
    ids, groups, site, score, label = shifted_sites()
    spec = assign_folds(make_spec(ids, groups, site_group=site), "group-kfold", n_splits=4, seed=0)
    predictions = predictions_of(spec, score + np.linspace(0, 0.3, len(ids)), label)
    first = evaluate(spec, predictions, n_boot=300, seed=1).table
    pd.testing.assert_frame_equal(first, evaluate(spec, predictions.iloc[::-1], n_boot=300, seed=1).table)
    other = evaluate(spec, predictions, n_boot=300, seed=2).table
    assert not first[[f"{m}_low" for m in METRICS]].equals(other[[f"{m}_low" for m in METRICS]])


# --------------------------------------------------------------------------- inputs
def test_repeat_and_fold_columns_a_csv_file_and_the_spec_outcome(tmp_path):
    ids, groups, _site, score, label = shifted_sites(10)
    spec = assign_folds(make_spec(ids, groups, stratum=label.astype(str)), "group-kfold", n_splits=2, seed=0)
    predictions = predictions_of(spec, score, label)
    expected = evaluate(spec, predictions, n_boot=50).table
    table = predictions.assign(repeat=0, fold=[spec.folds.splits[k].fold for k in predictions["split"]])
    table = table.drop(columns=["split", "label"])  # the label comes from the spec's outcome column
    path = tmp_path / "predictions.csv"
    table.to_csv(path, index=False)
    pd.testing.assert_frame_equal(evaluate(spec, path, n_boot=50).table, expected)


def test_text_labels_with_a_named_positive_class():
    ids, groups, _site, score, label = shifted_sites(10)
    spec = assign_folds(make_spec(ids, groups), "group-kfold", n_splits=2, seed=0)
    numeric = predictions_of(spec, score, label)
    text = numeric.assign(label=np.where(numeric["label"] == 1, "case", "control"))
    expected = evaluate(spec, numeric, n_boot=0).table
    pd.testing.assert_frame_equal(evaluate(spec, text, positive="case", n_boot=0).table, expected)


def test_the_scikit_learn_helper_fits_per_split_on_training_rows():
    from sklearn.linear_model import LogisticRegression

    from depgraph.adapters.sklearn import evaluate as evaluate_estimator

    rng = np.random.default_rng(2)
    n = 90
    ids = [f"S{i:03d}" for i in range(n)]
    y = rng.integers(0, 2, n)
    X = pd.DataFrame({"a": y + rng.normal(0, 1, n), "b": rng.normal(0, 1, n)}, index=ids)
    spec = assign_folds(make_spec(ids, [f"g{i // 3:02d}" for i in range(n)]), "group-kfold", n_splits=3, seed=0)
    report = evaluate_estimator(LogisticRegression(), X.sample(frac=1, random_state=0), pd.Series(y, index=ids)
                                .sample(frac=1, random_state=0), spec, n_boot=0)  # fmt: skip
    rows = []
    for k, split in enumerate(spec.folds.splits):
        role = split.roles(n)
        model = LogisticRegression().fit(X[role == 0], y[role == 0])
        for i in np.flatnonzero(role < 2):
            rows.append((ids[i], k, "test" if role[i] else "train", model.predict_proba(X.iloc[[i]])[0, 1], y[i]))
    by_hand = pd.DataFrame(rows, columns=["sample_id", "split", "role", "score", "label"])
    pd.testing.assert_frame_equal(report.table, evaluate(spec, by_hand, n_boot=0).table)


def test_the_scikit_learn_helper_takes_y_by_sample_id_not_by_position():
    """A y Series indexed by sample id in another order than X's rows is aligned by id (it was read by position,
    pairing rows with other samples' labels); a y indexed by other ids is refused."""
    from sklearn.linear_model import LogisticRegression

    from depgraph.adapters.sklearn import evaluate as evaluate_estimator

    rng = np.random.default_rng(5)
    n = 60
    ids = [f"S{i:03d}" for i in range(n)]
    y = pd.Series(rng.integers(0, 2, n), index=ids)
    X = pd.DataFrame({"a": y.to_numpy() * 2 + rng.normal(0, 1, n)}, index=ids)
    spec = assign_folds(make_spec(ids, [f"g{i // 3:02d}" for i in range(n)]), "group-kfold", n_splits=3, seed=0)
    aligned = evaluate_estimator(LogisticRegression(), X, y, spec, n_boot=0).table
    reversed_y = y.iloc[::-1]
    pd.testing.assert_frame_equal(evaluate_estimator(LogisticRegression(), X, reversed_y, spec, n_boot=0).table,
                                  aligned)  # fmt: skip
    with pytest.raises(DepgraphError, match="evaluate: y is indexed by other ids than X's rows"):
        evaluate_estimator(LogisticRegression(), X, y.set_axis([f"T{i}" for i in range(n)]), spec, n_boot=0)


# --------------------------------------------------------------------------- the command line
@pytest.fixture
def shifted_files(tmp_path):
    ids, groups, site, score, label = shifted_sites()
    roles = np.r_[np.zeros(20, int), np.ones(60, int)]
    spec = make_spec(ids, groups, [roles], site_group=site)
    write_spec(spec, tmp_path / "spec.json")
    predictions_of(spec, score, label).to_csv(tmp_path / "predictions.csv", index=False)
    return tmp_path / "spec.json", tmp_path / "predictions.csv"


def run(capsys, args) -> tuple[int, str, str]:
    capsys.readouterr()
    status = main([str(a) for a in args])
    captured = capsys.readouterr()
    return status, captured.out, captured.err


def test_cli_prints_the_table_and_the_shift(shifted_files, capsys):
    status, out, err = run(capsys, ["evaluate", *shifted_files, "--by", "site", "--boot", "100"])
    assert status == 0 and err == ""
    assert "threshold chosen by youden" in out and "block B: AUC 1.00 but balanced accuracy 0.50" in out


@pytest.mark.parametrize("suffix", [".csv", ".tsv", ".json", ".parquet"])
def test_cli_writes_the_full_table(shifted_files, capsys, tmp_path, suffix):
    target = tmp_path / f"evaluation{suffix}"
    args = ["evaluate", *shifted_files, "--by", "site_group", "--threshold", "sensitivity=0.9", "--boot", "50"]
    status, out, _ = run(capsys, [*args, "--seed", "3", "-o", target])
    assert status == 0 and f"wrote {target}" in out
    expected = evaluate(depgraph.read_spec(shifted_files[0]), shifted_files[1], by="site", threshold="sensitivity=0.9",
                        n_boot=50, seed=3).table  # fmt: skip
    if suffix == ".json":
        written = pd.DataFrame(json.loads(target.read_text())["rows"])
    elif suffix == ".parquet":
        written = pd.read_parquet(target)
    else:
        written = pd.read_csv(target, sep="\t" if suffix == ".tsv" else ",")
    pd.testing.assert_frame_equal(written, expected, check_dtype=False)


def test_cli_refuses_bad_input_in_one_line_and_writes_nothing(shifted_files, capsys, tmp_path):
    target = tmp_path / "out.csv"
    status, _out, err = run(capsys, ["evaluate", *shifted_files, "--threshold", "best", "-o", target])
    assert status == 2 and err.startswith("depgraph: invalid_argument: threshold takes a number, 'youden'")
    assert len(err.splitlines()) == 1 and not target.exists()


def test_cli_writes_a_table_safe_for_spreadsheets(tmp_path, capsys):
    """A block named like a formula ('=B', as a site id may be) is written with a leading ' under --excel-safe,
    exactly otherwise; the flag is refused where no CSV/TSV is written, before anything is read."""
    ids, groups, site, score, label = shifted_sites()
    roles = np.r_[np.zeros(20, int), np.ones(60, int)]
    spec = make_spec(ids, groups, [roles], site_group=["=B" if s == "B" else s for s in site])
    write_spec(spec, tmp_path / "spec.json")
    predictions_of(spec, score, label).to_csv(tmp_path / "predictions.csv", index=False)
    files = [tmp_path / "spec.json", tmp_path / "predictions.csv", "--by", "site_group", "--boot", "0"]
    for safe, table in ((False, tmp_path / "exact.csv"), (True, tmp_path / "safe.csv")):
        status, out, _ = run(capsys, ["evaluate", *files, "-o", table, *(["--excel-safe"] if safe else [])])
        assert status == 0 and f"wrote {table}" in out
        assert safe == out.rstrip().endswith("(cells a spreadsheet would run as formulas prefixed with ')")
    exact, safe = (pd.read_csv(tmp_path / name, keep_default_na=False) for name in ("exact.csv", "safe.csv"))
    assert "=B" in exact["block"].tolist() and "'=B" in safe["block"].tolist()
    assert exact.drop(columns="block").equals(safe.drop(columns="block"))
    for target in ("ev.parquet", "ev.json", None):
        args = ["evaluate", *files, "--excel-safe", *(["-o", tmp_path / target] if target else [])]
        status, _, err = run(capsys, args)
        assert status == 2 and err.startswith("depgraph: invalid_argument: --excel-safe") and err.count("\n") == 1
        assert target is None or not (tmp_path / target).exists()


# --------------------------------------------------------------------------- the HTML report
def test_the_report_shows_the_flagged_block_and_its_scores(shifted_files, capsys, tmp_path):
    """The letter's example in the report: block B is named as shifted, and the test scores are drawn per block
    (the figure is a PNG of the block scores, decoded here)."""
    target, table = tmp_path / "report.html", tmp_path / "evaluation.csv"
    args = ["evaluate", *shifted_files, "--by", "site", "--boot", "50", "-o", table, "--report", target]
    status, out, _ = run(capsys, args)
    assert status == 0 and f"wrote {target}" in out and table.exists()
    page = target.read_text()
    assert "<h2>Evaluation of predictions</h2>" in page
    assert "score shift in split 0 (repeat 0, fold 0), block B: AUC 1.00 but balanced accuracy 0.50" in page
    assert "score shift: AUC ≥ 0.8 and balanced accuracy ≤ 0.6 at the training threshold" in page  # the rule
    image = re.search(r"<img alt='test scores per block' src='data:image/png;base64,([^']+)'>", page)
    assert image and base64.b64decode(image.group(1)).startswith(b"\x89PNG")
    scores = evaluate(depgraph.read_spec(shifted_files[0]), shifted_files[1], by="site", n_boot=0).scores
    # the drawn scores are the test rows: all of site B and the 20 held-out samples of site A
    assert sorted(scores["block"].value_counts().items()) == [("A", 20), ("B", 40)]


def test_the_report_without_shift_says_so(shifted_files, tmp_path):
    spec = depgraph.read_spec(shifted_files[0])
    report = evaluate(spec, shifted_files[1], n_boot=0)  # one block, the whole test side: threshold fits site A only
    depgraph.write_report(spec, tmp_path / "r.html", evaluation=report)
    page = (tmp_path / "r.html").read_text()
    # pooled, site A's sensitivity 1 and site B's 0 average out: balanced accuracy 2/3, no score shift; but the
    # pooled probabilities are far from the outcomes (site B's divided by 10): calibration in the large is flagged
    assert report.shifted.empty and "score shift in" not in page
    assert report.flags["rule"].tolist() == ["calibration_intercept"] and "calibration intercept" in page


def test_a_report_named_for_another_kind_is_refused_before_any_work(shifted_files, capsys, tmp_path):
    target = tmp_path / "report.csv"
    status, _out, err = run(capsys, ["evaluate", *shifted_files, "--report", target])
    assert status == 2 and err.startswith("depgraph: invalid_argument: output") and not target.exists()
    assert len(err.splitlines()) == 1


def test_in_an_80_column_terminal_the_output_fits_and_wide_prints_it_whole(shifted_files, capsys, monkeypatch):
    """In a terminal the table is cut at a gap between columns (a last line says how many it hides) and a long
    line wraps with its continuation indented; --wide, or a pipe, prints every line whole, the same text."""
    from depgraph.cli.commandline import out

    args = ["evaluate", *shifted_files, "--by", "site", "--boot", "50"]
    _, piped, _ = run(capsys, args)
    assert max(map(len, piped.splitlines())) > 120  # the table is wide
    monkeypatch.setattr(out, "_force_terminal", True)
    monkeypatch.setattr(out, "_width", 80)
    monkeypatch.setattr(out, "_color_system", None)  # plain text, as a terminal without colours shows it
    _, narrow, _ = run(capsys, args)
    lines = narrow.splitlines()
    assert max(map(len, lines)) <= 80
    header = next(line for line in piped.splitlines() if line.lstrip().startswith("split"))
    cut = next(line for line in lines if line.lstrip().startswith("split"))
    assert header.startswith(cut) and header[len(cut)] == " "  # cut at a gap between two columns
    hidden = len(header[len(cut) :].split())
    assert f"… {hidden} more columns past the terminal's 80: --wide shows the whole table" in narrow
    flag = next(line for line in piped.splitlines() if line.startswith("score shift in split"))
    assert len(flag) > 80 and " ".join(narrow.split()).count(" ".join(flag.split())) == 1  # wrapped, not cut
    _, wide, _ = run(capsys, [*args, "--wide"])
    assert wide == piped
