"""Fold schemes: no group ever straddles train and test; plans are reproducible and balanced."""

from __future__ import annotations

import hashlib

import numpy as np
import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from depgraph import DepgraphError
from depgraph.folds.balancing import water_fill
from depgraph.folds.schemes import (
    SCHEMES,
    BalancedHoldout,
    GroupedKFold,
    HashFolds,
    LeaveOneBlockOut,
    TimeOrdered,
    assign_folds,
    hash_fold,
)
from depgraph.spec.files import spec_document, spec_from_document
from depgraph.spec.model import Constraint, SplitSpec
from depgraph.spec.plans import PLAN_CONTRACTS


def make_spec(frame: pd.DataFrame) -> SplitSpec:
    return SplitSpec.build(frame, constraint=Constraint(mode="subject"), recommended_resampling="grouped_cv")


@st.composite
def cohorts(draw, min_groups: int = 6):
    n_groups = draw(st.integers(min_groups, 24))
    sizes = draw(st.lists(st.integers(1, 5), min_size=n_groups, max_size=n_groups))
    rows = []
    for g, size in enumerate(sizes):
        for i in range(size):
            rows.append(
                {
                    "sample_id": f"S{g:02d}-{i}",
                    "group_id": f"G{g:02d}",
                    "stratum": draw(st.sampled_from(["case", "control", "control", None])),
                    "study_group": draw(st.sampled_from(["ST1", "ST2", "ST3", None])),
                    "site_group": draw(st.sampled_from(["A", "B"])),
                    "order_rank": draw(st.one_of(st.none(), st.integers(1, 8))),
                }
            )
    frame = pd.DataFrame(rows)
    frame["order_rank"] = frame["order_rank"].astype("Int64")
    return frame


SCHEME_CASES = [
    ("group-kfold", {"n_splits": 3, "n_repeats": 2, "seed": 5}),
    ("stratified-group-kfold", {"n_splits": 3, "seed": 2}),
    ("holdout", {"test_fraction": 0.3, "n_repeats": 2}),
    ("logo", {"by": "study_group"}),
    ("time", {"n_splits": 2, "gap": 1}),
    ("time", {"n_splits": 2, "gap": 0, "embargo": 1, "train_after": True}),
    ("hash", {"n_splits": 3, "salt": "s"}),
    ("balanced-holdout", {"test_fraction": 0.25, "balance": ("stratum", "site_group")}),
]


def _plan(frame: pd.DataFrame, name: str, params: dict):
    try:
        return assign_folds(make_spec(frame), name, **params)
    except DepgraphError as err:  # a random cohort may not allow the request (too few blocks or levels)
        unranked = name == "time" and frame["order_rank"].isna().all()
        assert err.code == ("invalid_argument" if unranked else "too_few_groups"), err
        return None


@pytest.mark.parametrize("name,params", SCHEME_CASES, ids=[f"{n}-{i}" for i, (n, _) in enumerate(SCHEME_CASES)])
@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(frame=cohorts())
def test_no_group_ever_straddles_train_and_test(name, params, frame):
    spec = _plan(frame, name, params)
    if spec is None:
        return
    groups = spec.samples["group_id"].to_numpy()
    for split in spec.folds.splits:
        role = split.roles(spec.n_samples)
        tested, trained = set(groups[role == 1]), set(groups[role == 0])
        assert not tested & trained
        assert split.n_test > 0  # a fold hashing left empty is refused (too_few_groups), never written


@pytest.mark.parametrize("name", ["group-kfold", "stratified-group-kfold", "hash"])
@settings(max_examples=30, deadline=None)
@given(frame=cohorts())
def test_kfold_tests_every_sample_exactly_once_per_repeat(name, frame):
    params = dict(SCHEME_CASES[[n for n, _ in SCHEME_CASES].index(name)][1])
    spec = _plan(frame, name, params)
    if spec is None:  # hash folds that leave a fold empty are refused
        return
    role = spec.folds.role_matrix(spec.n_samples)
    repeats = np.array([s.repeat for s in spec.folds.splits])
    for r in np.unique(repeats):
        assert ((role[repeats == r] == 1).sum(axis=0) == 1).all()
    assert (role != 2).all()


@pytest.mark.parametrize("name,params", SCHEME_CASES, ids=[f"{n}-{i}" for i, (n, _) in enumerate(SCHEME_CASES)])
@settings(max_examples=25, deadline=None)
@given(frame=cohorts(), shuffle_seed=st.integers(0, 1000))
def test_same_seed_same_plan_whatever_the_row_order(name, params, frame, shuffle_seed):
    a = _plan(frame, name, params)
    b = _plan(frame.sample(frac=1, random_state=shuffle_seed).reset_index(drop=True), name, params)
    if a is None:
        assert b is None
        return
    for sa, sb in zip(a.folds.splits, b.folds.splits, strict=True):
        ra = dict(zip(a.sample_ids, sa.roles(a.n_samples), strict=True))
        rb = dict(zip(b.sample_ids, sb.roles(b.n_samples), strict=True))
        assert ra == rb
    assert a.folds.balance == b.folds.balance


@settings(max_examples=200, deadline=None)
@given(
    load=st.lists(st.integers(0, 30), min_size=1, max_size=7),
    step=st.integers(1, 9),
    m=st.integers(0, 60),
    seed=st.integers(0, 99),
)
def test_water_filling_equals_placing_items_one_by_one(load, step, m, seed):
    load = np.array(load, dtype=float)
    tiebreak = np.random.default_rng(seed).permutation(len(load))
    expected = np.zeros(len(load), dtype=int)
    for _ in range(m):
        value = load + expected * step
        best = np.flatnonzero(value == value.min())
        expected[best[np.argmin(tiebreak[best])]] += 1
    assert water_fill(load, float(step), m, tiebreak).tolist() == expected.tolist()


def test_group_kfold_balances_sizes_and_repeats_differ():
    frame = pd.DataFrame({"sample_id": [f"S{i}" for i in range(60)], "group_id": [f"G{i // 3}" for i in range(60)]})
    spec = assign_folds(make_spec(frame), GroupedKFold(n_splits=4, n_repeats=2, seed=1))
    assert [s.n_test for s in spec.folds.splits] == [15] * 8
    first = spec.folds.role_matrix(60)[:4]
    second = spec.folds.role_matrix(60)[4:]
    assert not np.array_equal(first, second)
    assert spec.folds.parameters == {"n_splits": 4, "n_repeats": 2} and spec.folds.seed == 1
    assert spec.folds.balance["sizes"]["test_size_spread"] == 0.0


def test_stratified_folds_keep_the_case_share():
    rng = np.random.default_rng(0)
    rows = [(f"S{g}-{i}", f"G{g}", "case" if rng.random() < 0.2 else "control") for g in range(200)
            for i in range(int(rng.integers(1, 4)))]  # fmt: skip
    frame = pd.DataFrame(rows, columns=["sample_id", "group_id", "stratum"])
    spec = assign_folds(make_spec(frame), "stratified-group-kfold", n_splits=5, seed=0)
    balance = spec.folds.balance["columns"]["stratum"]
    assert balance["categories"] == ["case", "control"]
    assert balance["worst_proportion_deviation"] < 0.02
    assert spec.folds.balance["sizes"]["test_size_spread"] < 0.02


def test_leave_one_block_out_excludes_the_rest_of_a_tested_group():
    frame = pd.DataFrame(
        {
            "sample_id": ["a1", "a2", "b1", "c1", "d1"],
            "group_id": ["A", "A", "B", "C", "D"],
            "study_group": ["ST1", "ST2", "ST1", "ST2", None],
        }
    )
    spec = assign_folds(make_spec(frame), LeaveOneBlockOut(by="study_group"))
    first, second = spec.folds.splits
    assert first.roles(5).tolist() == [1, 2, 1, 0, 0]  # ST1 tested; a2 (group A, in ST2) excluded
    assert second.roles(5).tolist() == [2, 1, 0, 1, 0]
    assert spec.folds.parameters["blocks"] == ["ST1", "ST2"]


def test_time_forward_chaining_with_gap_and_embargo():
    ranks = [1, 2, 3, 4, 5, 6, 7, 8, 9]
    frame = pd.DataFrame(
        {"sample_id": [f"t{r}" for r in ranks], "group_id": [f"g{r}" for r in ranks], "order_rank": ranks}
    )
    frame["order_rank"] = frame["order_rank"].astype("Int64")
    spec = make_spec(frame)
    chained = assign_folds(spec, TimeOrdered(n_splits=2, gap=1)).folds.role_matrix(9)
    assert chained.tolist() == [
        [0, 0, 2, 1, 1, 1, 2, 2, 2],  # train 1-2, purge 3, test 4-6, future excluded
        [0, 0, 0, 0, 0, 2, 1, 1, 1],
    ]
    blocked = assign_folds(spec, TimeOrdered(n_splits=2, gap=1, embargo=1, train_after=True)).folds.role_matrix(9)
    assert blocked[0].tolist() == [0, 0, 2, 1, 1, 1, 2, 0, 0]  # embargo 7, train again from 8
    with pytest.raises(DepgraphError) as err:
        assign_folds(spec, TimeOrdered(n_splits=2, embargo=1))
    assert err.value.code == "invalid_argument" and "train_after" in err.value.message


def test_time_ties_stay_together_and_unranked_samples_are_excluded():
    frame = pd.DataFrame(
        {
            "sample_id": ["a", "b", "c", "d", "e"],
            "group_id": ["a", "b", "c", "d", "e"],
            "order_rank": pd.array([1, 1, 2, 2, None], dtype="Int64"),
        }
    )
    (split,) = assign_folds(make_spec(frame), TimeOrdered(n_splits=1)).folds.splits
    assert split.roles(5).tolist() == [0, 0, 1, 1, 2]


def test_hash_folds_follow_the_documented_encoding():
    assert hash_fold("salt", "subject:P1", 7) == int(hashlib.sha256(b"saltsubject:P1").hexdigest(), 16) % 7
    frame = pd.DataFrame({"sample_id": ["x1", "x2", "y1"], "group_id": ["X", "X", "Y"]})
    spec = assign_folds(make_spec(frame), "hash", n_splits=2, salt="consortium")
    fold_of = {s.fold: set(spec.sample_ids[s.test]) for s in spec.folds.splits}
    assert {"x1", "x2"} <= fold_of[hash_fold("consortium", "X", 2)]
    assert spec.folds.parameters["salt_fingerprint"] and "salt" not in spec.folds.parameters


def test_balanced_holdout_beats_nothing_and_keeps_prior_sides():
    rng = np.random.default_rng(4)
    rows = []
    for g in range(400):
        site, sex = rng.choice(["A", "B", "C", "D"]), rng.choice(["f", "m"])
        rows += [{"sample_id": f"P{g}-{i}", "group_id": f"P{g}", "site_group": site, "sex": sex}
                 for i in range(int(rng.integers(1, 3)))]  # fmt: skip
    frame = pd.DataFrame(rows)
    first_batch = frame[frame["group_id"].str[1:].astype(int) < 250].reset_index(drop=True)
    scheme = BalancedHoldout(test_fraction=0.2, balance=("site_group", "sex"), seed=1)
    before = assign_folds(make_spec(first_batch), scheme)
    assert before.folds.balance["columns"]["sex"]["worst_scaled_difference"] < 0.1
    after = assign_folds(make_spec(frame), BalancedHoldout(test_fraction=0.2, balance=("site_group", "sex"),
                                                           seed=1, prior=before))  # fmt: skip
    old_side = dict(zip(before.sample_ids, before.folds.splits[0].roles(before.n_samples), strict=True))
    new_side = dict(zip(after.sample_ids, after.folds.splits[0].roles(after.n_samples), strict=True))
    assert all(new_side[s] == side for s, side in old_side.items())
    assert after.folds.balance["prior_groups"] == 250 and after.folds.balance["prior_groups_on_both_sides"] == 0
    assert after.folds.balance["columns"]["site_group"]["worst_scaled_difference"] < 0.15
    assert after.folds.parameters["prior_digest"] == before.digest


@pytest.mark.parametrize(
    "name,params,code",
    [
        ("group-kfold", {"n_splits": 9}, "too_few_groups"),
        ("group-kfold", {"n_splits": 1}, "invalid_argument"),
        ("stratified-group-kfold", {"n_splits": 3, "stratify": "diagnosis"}, "invalid_argument"),
        ("holdout", {"test_fraction": 1.2}, "invalid_argument"),
        ("logo", {"by": "country"}, "invalid_argument"),
        ("time", {"n_splits": 2}, "invalid_argument"),
        ("balanced-holdout", {"balance": ()}, "invalid_argument"),
        ("nonsense", {}, "invalid_argument"),
        ("group-kfold", {"folds": 3}, "invalid_argument"),
        ("group-kfold", {"n_splits": 2.0}, "invalid_argument"),
        ("group-kfold", {"n_splits": 2, "n_repeats": 10**9}, "invalid_argument"),
        ("group-kfold", {"n_splits": 2, "n_repeats": 6000}, "invalid_argument"),
        ("holdout", {"n_repeats": 0}, "invalid_argument"),
        ("hash", {"n_splits": 20_000}, "invalid_argument"),
        ("balanced-holdout", {"balance": ("stratum",), "joint": 3}, "invalid_argument"),
    ],
)
def test_requests_that_cannot_be_honoured_are_refused(name, params, code):
    frame = pd.DataFrame({"sample_id": list("abcdef"), "group_id": list("aabbcc"), "stratum": list("xyxyxy")})
    with pytest.raises(DepgraphError) as err:
        assign_folds(make_spec(frame), name, **params)
    assert err.value.code == code


def test_the_default_joint_holds_with_one_balance_column():
    frame = pd.DataFrame({"sample_id": list("abcdefgh"), "group_id": list("abcdefgh"), "stratum": list("xyxyxyxy")})
    plan = assign_folds(make_spec(frame), "balanced-holdout", balance=("stratum",), test_fraction=0.5).folds
    assert plan.parameters["joint"] == 2 and len(plan.splits) == 1


def test_every_scheme_is_registered():
    assert set(SCHEMES) == {
        "group-kfold", "stratified-group-kfold", "holdout", "logo", "time", "hash", "balanced-holdout",
        "covariate-bins",
    }  # fmt: skip


# --------------------------------------------------------------------------- what each scheme takes
#: Each scheme's parameters, written out here (not read from the classes): what docs/folds.md promises.
TAKES = {
    "group-kfold": {"n_splits", "n_repeats", "seed"},
    "stratified-group-kfold": {"n_splits", "n_repeats", "seed", "stratify"},
    "holdout": {"test_fraction", "n_repeats", "seed"},
    "logo": {"by"},
    "time": {"n_splits", "gap", "embargo", "train_after"},
    "hash": {"n_splits", "salt", "key"},
    "balanced-holdout": {"test_fraction", "balance", "joint", "seed", "prior"},
    "covariate-bins": {"n_splits", "by", "thresholds"},
}
SAMPLE_VALUES = {"n_splits": 2, "n_repeats": 1, "seed": 0, "stratify": "stratum", "test_fraction": 0.5,
                 "by": "stratum", "gap": 0, "embargo": 0, "train_after": False, "salt": "s",
                 "balance": ("stratum",), "joint": 2, "prior": None, "key": ("stratum",),
                 "thresholds": (0.5,)}  # fmt: skip


def test_each_scheme_declares_exactly_its_parameters():
    assert {name: set(cls.parameter_names()) for name, cls in SCHEMES.items()} == TAKES


@pytest.mark.parametrize(
    "name,parameter",
    [(name, p) for name in TAKES for p in sorted(set(SAMPLE_VALUES) - TAKES[name])],
)
def test_a_parameter_the_scheme_does_not_take_is_refused_by_name(name, parameter):
    frame = pd.DataFrame({"sample_id": list("abcdef"), "group_id": list("aabbcc"), "stratum": list("xyxyxy")})
    with pytest.raises(DepgraphError) as err:
        assign_folds(make_spec(frame), name, **{parameter: SAMPLE_VALUES[parameter]})
    assert err.value.code == "invalid_argument"
    assert f"{parameter!r} does not apply to scheme {name!r}" in err.value.message
    elsewhere = sorted(n for n, taken in TAKES.items() if parameter in taken)
    assert all(n in err.value.message for n in elsewhere)  # and where it would apply


def test_the_old_name_of_the_fold_count_is_refused_with_the_new_one():
    frame = pd.DataFrame({"sample_id": list("abcdef"), "group_id": list("aabbcc")})
    with pytest.raises(DepgraphError) as err:
        assign_folds(make_spec(frame), "group-kfold", n_folds=2)
    assert err.value.code == "invalid_argument" and "n_folds is now n_splits" in err.value.message
    for cls in (GroupedKFold, HashFolds, TimeOrdered):
        with pytest.raises(DepgraphError, match="n_folds is now n_splits"):
            cls(n_folds=2)
    assert GroupedKFold(3, seed=2) == GroupedKFold(n_splits=3, seed=2)  # positional and keyword alike


@pytest.mark.parametrize("spelling", ["Group-KFold", "GROUP_KFOLD", " group_kfold ", "group-kfold"])
def test_scheme_names_match_in_any_case_and_are_stored_lower_case(spelling):
    frame = pd.DataFrame({"sample_id": list("abcdef"), "group_id": list("aabbcc")})
    plan = assign_folds(make_spec(frame), spelling, n_splits=3).folds
    assert plan.scheme == "group-kfold"
    same = assign_folds(make_spec(frame), "group-kfold", n_splits=3).folds
    assert (plan.role_matrix(6) == same.role_matrix(6)).all() and plan.parameters == same.parameters


@pytest.mark.parametrize("spelling", ["GroupKFold", "group kfold", "kfold"])
def test_an_unknown_scheme_name_is_refused_by_name(spelling):
    frame = pd.DataFrame({"sample_id": list("abcdef"), "group_id": list("aabbcc")})
    with pytest.raises(DepgraphError) as err:
        assign_folds(make_spec(frame), spelling)
    assert err.value.code == "invalid_argument" and f"unknown fold scheme {spelling!r}" in err.value.message


def test_every_scheme_has_a_plan_contract():
    assert set(PLAN_CONTRACTS) == set(SCHEMES)


#: One plan of each scheme over 12 samples in 6 groups with a category and a number (``age``).
PLANNED = {
    "group-kfold": {"n_splits": 3, "n_repeats": 2},
    "stratified-group-kfold": {"n_splits": 2, "stratify": "stratum"},
    "holdout": {"test_fraction": 0.5, "n_repeats": 3},
    "logo": {"by": "stratum"},
    "time": {"n_splits": 2, "gap": 1},
    "hash": {"n_splits": 3, "salt": "s"},
    "balanced-holdout": {"test_fraction": 0.5, "balance": ("stratum",)},
    "covariate-bins": {"n_splits": 2, "by": "age"},
}


@pytest.mark.parametrize("name", sorted(PLANNED))
def test_every_scheme_records_what_its_contract_says_and_reads_back(name):
    frame = pd.DataFrame({"sample_id": [f"s{i:02}" for i in range(12)], "group_id": [f"g{i // 2}" for i in range(12)],
                          "stratum": list("xxyyxxyyxxyy"), "age": [float(i // 2) for i in range(12)],
                          "order_rank": [i // 2 + 1 for i in range(12)]})  # fmt: skip
    spec = assign_folds(make_spec(frame), name, **PLANNED[name])
    contract, plan = PLAN_CONTRACTS[name], spec.folds
    assert set(contract.parameters) <= set(plan.parameters) <= set(contract.parameters + contract.optional)
    assert (plan.seed is not None) == contract.seeded
    stated = plan.parameters
    per_repeat = len(stated["blocks"]) if contract.folds == "blocks" else stated.get(contract.folds, 1)
    assert len(plan.splits) == per_repeat * (plan.parameters["n_repeats"] if contract.repeats else 1)
    assert set(plan.balance) - {"sizes", "columns"} <= set(contract.extra_balance)
    again = spec_from_document(spec_document(spec))  # the reader's checks accept what the scheme wrote
    assert again.folds.parameters == plan.parameters and again.folds.balance == plan.balance


def test_every_parameter_is_declared_with_its_help():
    for cls in SCHEMES.values():
        declared = cls.parameters_declared()
        assert list(declared) == list(cls.parameter_names())
        assert all(p.help and p.flags and p.name == name for name, p in declared.items())


@pytest.mark.parametrize("seed", [-5, -1, 2**32, 2**63, 2**64, 2**64 + 1, 1.0, "7", True, None])
@pytest.mark.parametrize("name", ["group-kfold", "stratified-group-kfold", "holdout", "balanced-holdout"])
def test_seeds_are_unsigned_32_bit_integers(name, seed):
    frame = pd.DataFrame({"sample_id": list("abcdef"), "group_id": list("aabbcc"), "stratum": list("xyxyxy")})
    with pytest.raises(DepgraphError) as err:
        assign_folds(make_spec(frame), name, seed=seed)
    assert err.value.code == "invalid_argument" and "0..4294967295" in err.value.message


@pytest.mark.parametrize("seed", [0, 1, 2**32 - 1, np.uint32(2**32 - 1), np.int64(12)])
def test_every_32_bit_seed_is_accepted_and_recorded(seed):
    frame = pd.DataFrame({"sample_id": list("abcdef"), "group_id": list("aabbcc")})
    plan = assign_folds(make_spec(frame), "group-kfold", n_splits=2, seed=seed).folds
    assert plan.seed == int(seed) and type(plan.seed) is int
    again = assign_folds(make_spec(frame), GroupedKFold(n_splits=2, seed=int(seed))).folds
    assert [s.test.tolist() for s in again.splits] == [s.test.tolist() for s in plan.splits]
