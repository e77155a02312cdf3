"""Covariate-keyed folds: hash folds keyed on sample columns, covariate bins with shared thresholds, and the
association between the folds and the outcome. Expected values are computed here in plain Python (hashlib, bisect,
sorted lists, the textbook formulas), never by the code under test."""

from __future__ import annotations

import bisect
import hashlib
import json
import math
import warnings
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from depgraph import DepgraphError, DepgraphWarning
from depgraph.cli.main import main
from depgraph.folds.covariates import STRONG_ASSOCIATION, cramers_v
from depgraph.folds.schemes import CovariateBins, HashFolds, assign_folds
from depgraph.spec.files import read_spec, spec_document, write_spec
from depgraph.spec.model import Constraint, SplitSpec


def make_spec(frame: pd.DataFrame) -> SplitSpec:
    return SplitSpec.build(frame, constraint=Constraint(mode="subject"), recommended_resampling="grouped_cv")


def fold_of(spec: SplitSpec) -> dict[str, int]:
    """Each sample's test fold, read from the plan's splits."""
    out = {}
    for f, split in enumerate(spec.folds.splits):
        for i in split.test.tolist():
            out[spec.sample_ids[i]] = f
    return out


def netstring_fold(salt: str, values: list[str], k: int) -> int:
    """The documented key encoding, written out: netstrings of the values' UTF-8 bytes, after the salt."""
    key = b"".join(str(len(v.encode())).encode() + b":" + v.encode() + b"," for v in values)
    return int.from_bytes(hashlib.sha256(salt.encode() + key).digest(), "big") % k


# --------------------------------------------------------------------------- hash folds keyed on columns
def test_key_bytes_are_the_documented_netstrings():
    frame = pd.DataFrame({"sample_id": ["a", "b", "c", "d", "e", "f"], "group_id": ["g1", "g1", "g2", "g3", "g4", "g5"],
                          "date_of_birth": ["1980-01-02", "1980-01-02", "1975-12-31", "2001-07-04", "1980-01-02",
                                            "1990-02-03"],
                          "sex": ["F", "F", "M", "F", "M", "Zoë"]})  # fmt: skip
    spec = assign_folds(make_spec(frame), HashFolds(n_splits=3, salt="consortium-2026", key=("date_of_birth", "sex")))
    got = fold_of(spec)
    for _, row in frame.iterrows():
        assert got[row["sample_id"]] == netstring_fold("consortium-2026", [row["date_of_birth"], row["sex"]], 3)
    assert spec.folds.parameters["key"] == ["date_of_birth", "sex"]


def test_docs_test_vectors():
    """The vectors of docs/folds.md, recomputed from their bytes."""
    vectors = [("consortium-2026", ["1980-01-02", "F"], 5), ("consortium-2026", ["1975-12-31", "M"], 5),
               ("consortium-2026", ["2001-07-04", "F"], 10), ("", ["1980-01-02", "F"], 3)]  # fmt: skip
    text = Path(__file__).parents[1].joinpath("docs", "folds.md").read_text(encoding="utf-8")
    for salt, values, k in vectors:
        key = "".join(f"{len(v.encode())}:{v}," for v in values)
        digest = hashlib.sha256(salt.encode() + key.encode()).hexdigest()
        row = f"| `{key}` | {k} | `{digest}` | {int(digest, 16) % k} |"
        assert row in text, row


def test_numbers_are_keyed_as_identifiers_are_read():
    """``1`` and ``1.0`` are the same key, as they are the same identifier; blanks around text are stripped."""
    ints = pd.DataFrame({"sample_id": list("abcd"), "group_id": list("wxyz"), "code": [1, 2, 3, 40]})
    floats = ints.assign(code=[1.0, 2.0, 3.0, 40.0])
    texts = ints.assign(code=[" 1", "2 ", "3", "40"])
    plans = [fold_of(assign_folds(make_spec(f), "hash", n_splits=2, salt="s", key=("code",))) for f in (ints, floats)]
    assert plans[0] == plans[1] == fold_of(assign_folds(make_spec(texts), "hash", n_splits=2, salt="s", key=("code",)))
    assert plans[0] == {s: netstring_fold("s", [c], 2) for s, c in zip("abcd", ["1", "2", "3", "40"], strict=True)}


def test_a_key_column_of_fractions_is_keyed_not_refused_as_ids_would_be():
    """Ids must be whole numbers below 2**53 (a float id of 1.5 is refused); a key column is no id column: a weight
    of 1.5 is the key ``1.5``, on both engines (tests/test_spark_folds.py draws such keys)."""
    frame = pd.DataFrame({"sample_id": list("abcd"), "group_id": list("wxyz"), "weight": [1.5, 2.25, 1e-3, 2.0**60]})
    got = fold_of(assign_folds(make_spec(frame), "hash", n_splits=2, salt="s", key=("weight",)))
    spelt = ["1.5", "2.25", "0.001", "1.152921504606847e+18"]
    assert got == {s: netstring_fold("s", [c], 2) for s, c in zip("abcd", spelt, strict=True)}


@st.composite
def two_sites(draw):
    """People with a date of birth and sex; site A holds some, site B holds duplicates of some of A's (new sample and
    group ids, nothing shared but the key columns) and people of its own; subjects have 1-3 samples."""
    n = draw(st.integers(4, 30))
    days = draw(st.lists(st.integers(0, 400), min_size=n, max_size=n))
    sexes = draw(st.lists(st.sampled_from(["F", "M"]), min_size=n, max_size=n))
    at_a = draw(st.lists(st.booleans(), min_size=n, max_size=n))
    at_b = draw(st.lists(st.booleans(), min_size=n, max_size=n))
    rows = []
    for p in range(n):
        dob = (pd.Timestamp("1950-01-01") + pd.Timedelta(days=days[p])).strftime("%Y-%m-%d")
        for site, present in (("A", at_a[p] or not at_b[p]), ("B", at_b[p])):
            if present:
                for v in range(draw(st.integers(1, 3))):
                    rows.append((f"{site}-{p}-{v}", f"{site}-person{p}", site, dob, sexes[p], p))
    return pd.DataFrame(rows, columns=["sample_id", "group_id", "site", "date_of_birth", "sex", "person"])


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(frame=two_sites(), k=st.integers(2, 4))
def test_records_duplicated_across_sites_share_a_fold(frame, k):
    """Equal key columns, one fold: pooled in one spec, or planned at each site on its own."""
    key = ("date_of_birth", "sex")
    try:
        pooled = fold_of(assign_folds(make_spec(frame), "hash", n_splits=k, salt="s", key=key))
    except DepgraphError as err:  # few people, many folds: a fold hashing leaves empty is refused
        assert err.code == "too_few_groups"
        pooled = None
    by_key: dict[tuple[str, str], set[int]] = {}
    for row in frame.itertuples():
        expected = netstring_fold("s", [row.date_of_birth, row.sex], k)
        by_key.setdefault((row.date_of_birth, row.sex), set()).add(expected)
        if pooled is not None:
            assert pooled[row.sample_id] == expected
    assert all(len(folds) == 1 for folds in by_key.values())
    for site in ("A", "B"):
        alone = frame[frame["site"] == site]
        if alone.empty:
            continue
        try:
            planned = fold_of(assign_folds(make_spec(alone), "hash", n_splits=k, salt="s", key=key))
        except DepgraphError as err:
            assert err.code == "too_few_groups"
            continue
        for row in alone.itertuples():
            assert planned[row.sample_id] == netstring_fold("s", [row.date_of_birth, row.sex], k)


def test_a_group_whose_samples_carry_different_keys_is_refused_by_name():
    frame = pd.DataFrame({"sample_id": list("abcdef"), "group_id": ["fam1", "fam1", "fam2", "fam3", "fam3", "fam4"],
                          "date_of_birth": ["2001", "2003", "1999", "1990", "1990", "1980"]})  # fmt: skip
    with pytest.raises(DepgraphError) as err:
        assign_folds(make_spec(frame), "hash", n_splits=2, salt="s", key=("date_of_birth",))
    assert err.value.code == "ambiguity" and "fam1" in err.value.message and "fam3" not in err.value.message
    assert "2001" not in err.value.message  # key values (dates of birth) are not shown


def test_the_group_id_hash_is_unchanged():
    frame = pd.DataFrame({"sample_id": [f"S{i}" for i in range(20)],
                          "group_id": [f"subject:P{i // 2}" for i in range(20)]})  # fmt: skip
    plan = assign_folds(make_spec(frame), "hash", n_splits=2, salt="consortium")
    expected = {s: int(hashlib.sha256(b"consortium" + g.encode()).hexdigest(), 16) % 2
                for s, g in zip(frame["sample_id"], frame["group_id"], strict=True)}  # fmt: skip
    assert fold_of(plan) == expected and plan.folds.parameters["key"] == "group_id"
    assert "association" not in plan.folds.balance


# --------------------------------------------------------------------------- covariate bins
def lower_median(values: list[float]) -> float:
    return sorted(values)[(len(values) - 1) // 2]


def test_thresholds_cut_at_equal_counts_midway_between_values():
    frame = pd.DataFrame({"sample_id": [f"S{i}" for i in range(8)], "group_id": [f"G{i}" for i in range(8)],
                          "weight": [8.0, 1.0, 7.0, 2.0, 6.0, 3.0, 5.0, 4.0]})  # fmt: skip
    plan = assign_folds(make_spec(frame), "covariate-bins", n_splits=4, by="weight").folds
    assert plan.parameters["thresholds"] == [2.5, 4.5, 6.5] and plan.parameters["thresholds_from"] == "this spec"
    got = fold_of(assign_folds(make_spec(frame), "covariate-bins", n_splits=4, by="weight"))
    assert got == {f"S{i}": bisect.bisect_right([2.5, 4.5, 6.5], w) for i, w in enumerate(frame["weight"])}


def test_a_group_is_placed_by_its_lower_median():
    frame = pd.DataFrame({"sample_id": list("abcdefgh"), "group_id": list("xxxyyzzw"),
                          "weight": [10.0, 50.0, 90.0, 20.0, 80.0, 30.0, 31.0, 70.0]})  # fmt: skip
    thresholds = [40.0]
    spec = assign_folds(make_spec(frame), CovariateBins(n_splits=2, by="weight", thresholds=thresholds))
    groups = frame.groupby("group_id")["weight"].apply(list).to_dict()
    expected = {
        r.sample_id: bisect.bisect_right(thresholds, lower_median(groups[r.group_id])) for r in frame.itertuples()
    }
    assert fold_of(spec) == expected  # x: median 50 -> 1; y: lower median 20 -> 0; z: 30 -> 0; w: 70 -> 1
    assert spec.folds.balance["groups_spanning_bins"] == 2  # x (10, 50, 90) and y (20, 80) straddle 40


@st.composite
def weighed_cohorts(draw):
    n_groups = draw(st.integers(6, 40))
    sizes = draw(st.lists(st.integers(1, 4), min_size=n_groups, max_size=n_groups))
    values = draw(st.lists(st.floats(30, 150, allow_nan=False), min_size=n_groups, max_size=n_groups, unique=True))
    rows = [(f"S{g}-{i}", f"G{g}", values[g]) for g, size in enumerate(sizes) for i in range(size)]
    return pd.DataFrame(rows, columns=["sample_id", "group_id", "weight"])


@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(frame=weighed_cohorts(), k=st.integers(2, 5))
def test_bins_give_equal_fold_sizes_within_one_groups_size(frame, k):
    spec = assign_folds(make_spec(frame), "covariate-bins", n_splits=k, by="weight")
    sizes = [s.n_test for s in spec.folds.splits]
    assert sum(sizes) == len(frame)
    largest = frame.groupby("group_id").size().max()
    assert all(abs(size - len(frame) / k) <= largest for size in sizes), (sizes, largest)
    folds = fold_of(spec)
    assert frame.assign(fold=frame["sample_id"].map(folds)).groupby("group_id")["fold"].nunique().max() == 1


@settings(max_examples=50, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(frame=weighed_cohorts(), k=st.integers(2, 4), share=st.integers(0, 10**6))
def test_two_sites_applying_the_recorded_thresholds_get_the_same_folds(frame, k, share):
    """Site A cuts and records; site B (another subset, overlapping A) applies A's thresholds read from A's file."""
    groups = sorted(frame["group_id"].unique())
    rng = np.random.default_rng(share)
    at_b = set(rng.choice(groups, size=max(k, len(groups) // 2), replace=False))
    a = assign_folds(make_spec(frame), "covariate-bins", n_splits=k, by="weight")
    recorded = json.loads(json.dumps(a.folds.parameters))  # as another site reads it from the spec file
    site_b = frame[frame["group_id"].isin(at_b)]
    try:
        b = assign_folds(
            make_spec(site_b), "covariate-bins", n_splits=k, by="weight", thresholds=recorded["thresholds"]
        )
    except DepgraphError as err:  # a small site may hold no group of some bin: refused, never an empty fold
        assert err.code == "too_few_groups" and "hold no sample" in err.message
        return
    folds_a, folds_b = fold_of(a), fold_of(b)
    for row in site_b.itertuples():
        expected = bisect.bisect_right(recorded["thresholds"], row.weight)
        assert folds_b[row.sample_id] == folds_a[row.sample_id] == expected
    assert b.folds.parameters["thresholds"] == recorded["thresholds"]
    assert b.folds.parameters["thresholds_from"] == "given"


# --------------------------------------------------------------------------- association with the outcome
def plain_cramers_v(rows: list[tuple[int, str]]) -> float:
    """Bergsma's bias-corrected Cramér's V, from the counts."""
    n = len(rows)
    a_values, b_values = sorted({a for a, _ in rows}), sorted({b for _, b in rows})
    r, k = len(a_values), len(b_values)
    chi2 = 0.0
    for a in a_values:
        for b in b_values:
            observed = sum(1 for x in rows if x == (a, b))
            expected = sum(1 for x, _ in rows if x == a) * sum(1 for _, y in rows if y == b) / n
            chi2 += (observed - expected) ** 2 / expected
    phi2 = max(0.0, chi2 / n - (k - 1) * (r - 1) / (n - 1))
    return math.sqrt(phi2 / min(k - (k - 1) ** 2 / (n - 1) - 1, r - (r - 1) ** 2 / (n - 1) - 1))


def test_cramers_v_is_the_bias_corrected_formula():
    rng = np.random.default_rng(3)
    a = rng.integers(0, 3, 200)
    b = np.where(rng.random(200) < 0.6, a, rng.integers(0, 3, 200))
    assert cramers_v(a, b) == pytest.approx(plain_cramers_v(list(zip(a.tolist(), b.astype(str).tolist(), strict=True))))
    assert cramers_v(np.zeros(10, int), np.arange(10) % 2) == 0.0  # one category: no association


def outcome_cohort(follows: bool) -> pd.DataFrame:
    n = 200
    weight = np.linspace(40, 120, n)
    rng = np.random.default_rng(0)
    case = weight > 90 if follows else rng.random(n) < 0.3
    return pd.DataFrame({"sample_id": [f"S{i}" for i in range(n)], "group_id": [f"G{i}" for i in range(n)],
                         "weight": weight, "stratum": np.where(case, "case", "control")})  # fmt: skip


def test_folds_following_the_outcome_are_reported_and_warned():
    frame = outcome_cohort(follows=True)
    with pytest.warns(DepgraphWarning) as heard:
        spec = assign_folds(make_spec(frame), "covariate-bins", n_splits=4, by="weight")
    assert [w.message.code for w in heard] == ["fold_outcome_association"]
    association = spec.folds.balance["association"]
    folds = fold_of(spec)
    rows = [(folds[s], c) for s, c in zip(frame["sample_id"], frame["stratum"], strict=True)]
    assert association["cramers_v"] == pytest.approx(plain_cramers_v(rows), abs=1e-4)
    assert association["strong"] and association["cramers_v"] >= STRONG_ASSOCIATION == 0.3
    assert association["outcome"] == "stratum"


def test_folds_independent_of_the_outcome_are_reported_without_a_warning():
    frame = outcome_cohort(follows=False)
    with warnings.catch_warnings():
        warnings.simplefilter("error", DepgraphWarning)
        spec = assign_folds(make_spec(frame), "covariate-bins", n_splits=4, by="weight")
        keyed = assign_folds(make_spec(frame.assign(sex="F")), "hash", n_splits=2, salt="s", key=("sample_id",))
    assert not spec.folds.balance["association"]["strong"]
    assert keyed.folds.balance["association"]["cramers_v"] < STRONG_ASSOCIATION
    no_outcome = assign_folds(make_spec(frame.drop(columns="stratum")), "covariate-bins", n_splits=4, by="weight")
    assert no_outcome.folds.balance["association"]["cramers_v"] is None


# --------------------------------------------------------------------------- a million samples, vectorised
@pytest.mark.slow  # 10^6 samples: ~8 s; CI runs it (--slow)
def test_a_million_samples_in_seconds():
    import time

    n = 10**6
    rng = np.random.default_rng(1)
    people = rng.integers(0, 30_000, n // 2)
    frame = pd.DataFrame({"sample_id": [f"S{i}" for i in range(n)], "group_id": np.repeat([f"G{i}" for i in
                          range(n // 2)], 2), "date_of_birth": np.repeat(people.astype(str), 2).astype(object),
                          "weight": np.repeat(rng.normal(70, 10, n // 2), 2)})  # fmt: skip
    spec = make_spec(frame)
    start = time.perf_counter()
    keyed = assign_folds(spec, "hash", n_splits=5, salt="s", key=("date_of_birth",))
    binned = assign_folds(spec, "covariate-bins", n_splits=5, by="weight")
    assert time.perf_counter() - start < 30
    assert [s.n_test for s in binned.folds.splits] == [n // 5] * 5
    assert sum(s.n_test for s in keyed.folds.splits) == n


# --------------------------------------------------------------------------- the command line
def run(capsys, *args) -> tuple[int, str, str]:
    capsys.readouterr()
    code = main([str(a) for a in args])
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def test_cli_keys_bins_and_applies_recorded_thresholds(tmp_path, capsys, monkeypatch):
    frame = outcome_cohort(follows=True).assign(
        date_of_birth=[f"19{50 + i % 40}-0{1 + i % 9}-1{i % 10}" for i in range(200)], sex=["F", "M"] * 100
    )
    write_spec(make_spec(frame), tmp_path / "a.json")
    write_spec(make_spec(frame.iloc[::3]), tmp_path / "b.json")
    monkeypatch.setenv("CONSORTIUM_SALT", "consortium-2026")
    code, out, err = run(capsys, "folds", tmp_path / "a.json", "--scheme", "hash", "--key", "date_of_birth,sex",
                         "--salt-env", "CONSORTIUM_SALT", "-k", "3", "-o", tmp_path / "hashed.json")  # fmt: skip
    assert (code, err) == (0, "") and "folds vs stratum: Cramér's V" in out
    hashed = fold_of(read_spec(tmp_path / "hashed.json"))
    assert hashed == {r.sample_id: netstring_fold("consortium-2026", [r.date_of_birth, r.sex], 3)
                      for r in frame.itertuples()}  # fmt: skip
    code, out, err = run(capsys, "folds", tmp_path / "a.json", "--scheme", "covariate-bins", "--by", "weight", "-k",
                         "4", "-o", tmp_path / "binned.json")  # fmt: skip
    assert code == 0 and err.startswith("depgraph: warning: fold_outcome_association: covariate bins of weight")
    thresholds = read_spec(tmp_path / "binned.json").folds.parameters["thresholds"]
    assert f"thresholds {','.join(map(repr, thresholds))}" in out
    given = ",".join(map(repr, thresholds))
    code, out, err = run(capsys, "folds", tmp_path / "b.json", "--scheme", "covariate-bins", "--by", "weight", "-k",
                         "4", "--thresholds", given, "-o", tmp_path / "site-b.json")  # fmt: skip
    assert code == 0
    site_b, site_a = fold_of(read_spec(tmp_path / "site-b.json")), fold_of(read_spec(tmp_path / "binned.json"))
    assert site_b == {s: site_a[s] for s in site_b} and len(site_b) == len(frame.iloc[::3])


def test_cli_keys_on_attributes_carried_in_at_derivation(tmp_path, capsys, monkeypatch):
    """metadata → build → derive --attributes → folds --key: the key columns are the attributes carried in."""
    rows = [("S1", "P1", "1980-01-02", "F", 61.5, "case"), ("S2", "P1", "1980-01-02", "F", 62, "case"),
            ("S3", "P2", "1975-12-31", "M", 80, "control"), ("S4", "P3", "2001-07-04", "F", 55.25, "control"),
            ("S5", "P4", "1990-01-01", "M", 90, "case"), ("S6", "P5", "1985-05-05", "F", 70, "control"),
            ("S7", "P6", "1999-09-09", "M", 75, "control"), ("S8", "P7", "1960-03-03", "F", 66, "case")]  # fmt: skip
    lines = ["sample_id,subject_id,date_of_birth,sex,weight,outcome_id"] + [",".join(map(str, r)) for r in rows]
    (tmp_path / "meta.csv").write_text("\n".join(lines) + "\n", encoding="utf-8")
    monkeypatch.setenv("CONSORTIUM_SALT", "consortium-2026")
    assert run(capsys, "build", tmp_path / "meta.csv", "-o", tmp_path / "g.json")[0] == 0
    code, _, _ = run(capsys, "derive", tmp_path / "g.json", "--mode", "subject", "--attributes",
                     "date_of_birth,sex,weight", "-o", tmp_path / "s.json")  # fmt: skip
    assert code == 0
    code, out, _ = run(capsys, "folds", tmp_path / "s.json", "--scheme", "hash", "--key", "date_of_birth,sex",
                       "--salt-env", "CONSORTIUM_SALT", "-k", "2", "-o", tmp_path / "h.json")  # fmt: skip
    assert code == 0 and "folds vs stratum" in out
    assert fold_of(read_spec(tmp_path / "h.json")) == {r[0]: netstring_fold("consortium-2026", [r[2], r[3]], 2)
                                                       for r in rows}  # fmt: skip


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(frame=weighed_cohorts(), k=st.integers(2, 3), shuffle_seed=st.integers(0, 1000))
def test_plans_do_not_depend_on_row_order(frame, k, shuffle_seed):
    frame = frame.assign(code=frame["group_id"].str.len().astype(str) + frame["weight"].round(0).astype(str))
    shuffled = frame.sample(frac=1, random_state=shuffle_seed).reset_index(drop=True)
    for scheme in (CovariateBins(n_splits=k, by="weight"), HashFolds(n_splits=k, salt="s", key=("code",))):
        plans = []
        for f in (frame, shuffled):
            try:
                plans.append(assign_folds(make_spec(f), scheme))
            except DepgraphError as err:
                plans.append(err.code)
        if isinstance(plans[0], str):
            assert plans[0] == plans[1]
            continue
        assert fold_of(plans[0]) == fold_of(plans[1])
        a, b = plans[0].folds, plans[1].folds
        assert a.parameters == b.parameters and a.balance == b.balance


def _redigested(doc: dict, edit) -> dict:
    from depgraph.spec.digest import content_digest

    edit(doc)
    doc["digest"] = content_digest(doc)
    return doc


@pytest.mark.parametrize(
    ("scheme", "edit", "fragment"),
    [
        (
            "covariate-bins",
            lambda d: d["folds"]["parameters"].update(thresholds=[100.0]),
            "tests other samples than the groups whose lower median of age lies in bin",
        ),
        ("covariate-bins", lambda d: d["folds"]["parameters"].update(group_value="banana"), "not 'lower median'"),
        ("covariate-bins", lambda d: d["folds"]["parameters"].update(bins="?"), "parameters.bins is '?'"),
        ("covariate-bins", lambda d: d["folds"]["parameters"].update(by="site_group"), "not a column of numbers"),
        ("hash", lambda d: d["folds"]["parameters"].update(encoding="x"), "parameters.encoding is 'x'"),
        ("hash", lambda d: d["folds"]["parameters"].update(salt_fingerprint=""), "not 16 lower-case hex digits"),
    ],
    ids=["thresholds-not-the-folds", "group-value", "bins", "by-text", "encoding", "fingerprint"],
)
def test_what_a_keyed_plan_records_is_what_it_did(scheme, edit, fragment):
    """A covariate-bins plan is decided by its thresholds, so a reader recomputes it; what a hash plan records of
    its encoding is the one sentence the scheme writes."""
    from depgraph.spec.files import spec_from_document

    frame = pd.DataFrame({"sample_id": [f"s{i}" for i in range(12)], "group_id": [f"g{i // 2}" for i in range(12)],
                          "age": [float(i // 2) for i in range(12)], "site_group": list("ab") * 6})  # fmt: skip
    options = {"n_splits": 2, "by": "age"} if scheme == "covariate-bins" else {"n_splits": 2, "salt": "s"}
    doc = spec_document(assign_folds(make_spec(frame), scheme, **options))
    with pytest.raises(DepgraphError) as err:
        spec_from_document(_redigested(doc, edit))
    assert err.value.code == "integrity" and fragment in err.value.message, err.value.message
