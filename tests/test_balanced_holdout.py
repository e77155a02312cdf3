"""The balanced holdout over joint cells: what it balances, what it reports, and that its search ends at a local
optimum. Expected values are computed here in plain Python / numpy from the test positions, never read from the
scheme's own metrics."""

from __future__ import annotations

import itertools

import numpy as np
import pandas as pd
import pytest
import scipy.sparse as sp
from hypothesis import given, settings
from hypothesis import strategies as st

from depgraph import DepgraphError, DepgraphWarning, assign_folds
from depgraph.audit.report import plan_findings, write_report
from depgraph.cli.main import main
from depgraph.folds.balancing import balanced_sides
from depgraph.folds.schemes import BalancedHoldout
from depgraph.spec.balance import CELL_MIN_SAMPLES
from depgraph.spec.files import read_spec, write_spec
from depgraph.spec.model import Constraint, SplitSpec

COLUMNS = ("age", "site", "sex")


def dependent_cohort(n_patients: int, seed: int) -> pd.DataFrame:
    """Patients (1-2 samples each) whose age band goes with their site, so balancing each column alone leaves
    the site × age cells unbalanced."""
    rng = np.random.default_rng(seed)
    site = rng.integers(0, 4, n_patients)
    age = np.clip(site + rng.integers(-1, 2, n_patients), 0, 4)
    sex = rng.integers(0, 2, n_patients)
    sizes = rng.choice([1, 1, 2], n_patients)
    rows = [
        {"sample_id": f"S{p:05d}-{i}", "group_id": f"P{p:05d}", "age": f"a{age[p]}", "site": f"s{site[p]}",
         "sex": "fm"[sex[p]]}
        for p in range(n_patients) for i in range(sizes[p])
    ]  # fmt: skip
    return pd.DataFrame(rows)


def spec_of(frame: pd.DataFrame) -> SplitSpec:
    return SplitSpec.build(frame, constraint=Constraint(mode="subject"), recommended_resampling="grouped_cv")


def cell_differences(frame: pd.DataFrame, test: np.ndarray, f: float, pairs: bool) -> np.ndarray:
    """|scaled difference| of every category (pairs=False) or two-column cell of >= CELL_MIN_SAMPLES samples."""
    keys = [frame[c] for c in COLUMNS] if not pairs else [frame[a] + "&" + frame[b] for a, b in
                                                            itertools.combinations(COLUMNS, 2)]  # fmt: skip
    out = []
    for key in keys:
        for value in key.unique():
            members = (key == value).to_numpy()
            total = members.sum()
            if pairs and total < CELL_MIN_SAMPLES:
                continue
            out.append(abs((members & test).sum() - f * total) / (f * total))
    return np.array(out)


def test_joint_cells_are_balanced_far_better_than_margins_alone_and_margins_stay_balanced():
    frame = dependent_cohort(1500, seed=3)
    spec = spec_of(frame)
    results = {}
    for joint in (1, 2):
        planned = assign_folds(spec, BalancedHoldout(test_fraction=0.2, balance=COLUMNS, joint=joint, seed=0))
        test = np.zeros(len(frame), dtype=bool)
        test[planned.folds.splits[0].test] = True
        # the spec is in sample-id order, as the frame is built
        assert planned.sample_ids.tolist() == frame["sample_id"].tolist()
        results[joint] = (cell_differences(frame, test, 0.2, False), cell_differences(frame, test, 0.2, True))
    margins_1, cells_1 = results[1]
    margins_2, cells_2 = results[2]
    assert cells_2.mean() < 0.5 * cells_1.mean()
    assert margins_2.max() < 0.05 and margins_2.mean() < 2 * margins_1.mean() + 0.005


def test_the_plan_reports_joint_cells_as_computed_from_the_test_positions():
    frame = dependent_cohort(800, seed=5)
    planned = assign_folds(spec_of(frame), BalancedHoldout(test_fraction=0.25, balance=COLUMNS, seed=2))
    test = np.zeros(len(frame), dtype=bool)
    test[planned.folds.splits[0].test] = True
    cells = cell_differences(frame, test, 0.25, True)
    reported = planned.folds.balance["joint_cells"]
    assert reported["pairs"] == 3 and reported["min_samples"] == CELL_MIN_SAMPLES
    assert reported["cells_summarised"] == len(cells)
    assert reported["mean_abs_scaled_difference"][0] == pytest.approx(cells.mean(), rel=1e-5)
    assert reported["worst_abs_scaled_difference"][0] == pytest.approx(cells.max(), rel=1e-5)
    a, b = reported["worst_cell"][0].split(" & ")
    assert a.split("=")[0] in COLUMNS and b.split("=")[0] in COLUMNS
    assert planned.folds.parameters["joint"] == 2


def test_one_balance_column_has_no_joint_cells():
    frame = dependent_cohort(200, seed=1)
    planned = assign_folds(spec_of(frame), BalancedHoldout(balance=("site",)))
    assert "joint_cells" not in planned.folds.balance


@pytest.mark.parametrize("joint", [0, -1, 1.5, True, "2"])
def test_joint_must_be_a_positive_integer(joint):
    with pytest.raises(DepgraphError) as err:
        BalancedHoldout(balance=COLUMNS, joint=joint)
    assert err.value.code == "invalid_argument" and "joint" in str(err.value)


def objective(counts: np.ndarray, side: np.ndarray, weights: np.ndarray, f: float) -> float:
    """The documented objective, in plain numpy: Σ w (1/T0 + 1/T1) (test − T1)²."""
    totals = counts.sum(axis=0)
    t1, t0 = f * totals, (1 - f) * totals
    c = weights * (np.where(t0 > 0, 1 / np.where(t0 > 0, t0, 1), 0) + np.where(t1 > 0, 1 / np.where(t1 > 0, t1, 1), 0))
    return float((c * (counts[side == 1].sum(axis=0) - t1) ** 2).sum())


@settings(max_examples=40, deadline=None)
@given(seed=st.integers(0, 10_000), n=st.integers(4, 40), fixed_share=st.sampled_from([0.0, 0.3]))
def test_the_search_ends_where_no_move_or_swap_lowers_the_objective(seed, n, fixed_share):
    rng = np.random.default_rng(seed)
    counts = rng.integers(0, 3, size=(n, 6)).astype(float)
    counts = np.column_stack([counts, counts.sum(axis=1) + 1])  # the size column last
    weights = rng.choice([1.0, 4.0], counts.shape[1])
    fixed = np.where(rng.random(n) < fixed_share, rng.integers(0, 2, n), -1)
    order = np.flatnonzero(fixed < 0)
    side = balanced_sides(sp.csr_matrix(counts), weights, 0.3, fixed, order, np.random.default_rng(seed))
    assert ((side == fixed) | (fixed < 0)).all()  # fixed groups keep their side
    best = objective(counts, side, weights, 0.3)
    free = fixed < 0
    for g in np.flatnonzero(free):  # every single move
        other = side.copy()
        other[g] = 1 - other[g]
        assert objective(counts, other, weights, 0.3) >= best - 1e-9
    for i, j in itertools.product(np.flatnonzero(free & (side == 1)), np.flatnonzero(free & (side == 0))):
        other = side.copy()
        other[i], other[j] = 0, 1
        assert objective(counts, other, weights, 0.3) >= best - 1e-9


def test_balanced_holdout_is_the_same_whatever_the_row_order():
    frame = dependent_cohort(300, seed=9)
    scheme = BalancedHoldout(test_fraction=0.2, balance=COLUMNS, seed=4)
    first = assign_folds(spec_of(frame), scheme)
    shuffled = assign_folds(spec_of(frame.sample(frac=1, random_state=1).reset_index(drop=True)), scheme)
    assert first.folds.splits[0].test.tolist() == shuffled.folds.splits[0].test.tolist()
    assert first.digest == shuffled.digest


def test_folds_command_takes_joint(tmp_path, capsys):
    frame = dependent_cohort(200, seed=2)
    write_spec(spec_of(frame), tmp_path / "s.json")
    args = ["folds", tmp_path / "s.json", "--scheme", "balanced-holdout", "--balance", "age,site,sex"]
    assert main([str(a) for a in [*args, "--joint", "1", "-o", tmp_path / "t.json"]]) == 0
    assert read_spec(tmp_path / "t.json").folds.parameters["joint"] == 1
    assert main([str(a) for a in [*args, "--joint", "0", "-o", tmp_path / "u.json"]]) == 2
    wrong = ["folds", tmp_path / "s.json", "--scheme", "group-kfold", "--joint", "2", "-o", tmp_path / "u.json"]
    assert main([str(a) for a in wrong]) == 2
    err = capsys.readouterr().err
    assert "joint must be an integer" in err and "--joint does not apply to --scheme group-kfold" in err
    assert not (tmp_path / "u.json").exists()


def test_the_report_shows_joint_cells_and_the_fold_outcome_association(tmp_path):
    frame = dependent_cohort(400, seed=4)
    frame["stratum"] = np.where(frame["site"].isin(["s0", "s1"]), "case", "control")  # the outcome follows site
    frame["weight"] = frame["site"].str[1:].astype(float)
    holdout = assign_folds(spec_of(frame), BalancedHoldout(balance=COLUMNS, seed=1))
    cells = holdout.folds.balance["joint_cells"]
    lines = plan_findings(holdout.folds)
    assert lines == [
        f"split 0: {cells['cells_summarised']} joint cells (pairs of categories of ≥ {CELL_MIN_SAMPLES} samples): "
        f"mean |scaled difference| {cells['mean_abs_scaled_difference'][0]}, "
        f"worst {cells['worst_abs_scaled_difference'][0]}"
    ]
    with pytest.warns(DepgraphWarning, match="fold_outcome_association|follow the outcome"):
        binned = assign_folds(spec_of(frame), "covariate-bins", n_splits=2, by="weight")
    v = binned.folds.balance["association"]["cramers_v"]
    assert v >= 0.3
    (line,) = plan_findings(binned.folds)
    assert line.startswith(f"fold–outcome association (bias-corrected Cramér's V): {v} — strong")
    write_report(binned, tmp_path / "r.html")
    assert "fold–outcome association" in (tmp_path / "r.html").read_text()


@pytest.mark.parametrize(
    "field,value",
    [
        ("association", {"cramers_v": "<b>high</b>", "strong": True}),
        ("joint_cells", {"mean_abs_scaled_difference": [1]}),
    ],
)
def test_malformed_plan_findings_are_refused_by_name(field, value):
    frame = dependent_cohort(100, seed=4)
    planned = assign_folds(spec_of(frame), BalancedHoldout(balance=COLUMNS, seed=1))
    plan = planned.folds.model_copy(update={"balance": {**planned.folds.balance, field: value}})
    with pytest.raises(DepgraphError) as err:
        plan_findings(plan)
    assert err.value.code == "schema" and f"folds.balance.{field}" in str(err.value)
