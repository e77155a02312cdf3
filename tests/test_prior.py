"""A balanced holdout kept from a prior spec that grouped otherwise: every returning sample keeps its side, or is
named (prior_side_changed, on stderr and in the spec) — never moved without a word. Expected sides and moves are
worked out here in plain Python from the two groupings, never read from the code under test."""

from __future__ import annotations

import json
import warnings
from collections import Counter
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from depgraph import DepgraphError, DepgraphWarning
from depgraph.cli.main import main
from depgraph.folds.schemes import BalancedHoldout, assign_folds
from depgraph.spec.digest import content_digest
from depgraph.spec.files import read_spec, spec_document, spec_from_document, write_spec
from depgraph.spec.model import Constraint, SplitSpec
from depgraph.vocab import recommended_resampling


def _spec(frame: pd.DataFrame, mode: str, **constraint: object) -> SplitSpec:
    return SplitSpec.build(frame, constraint=Constraint(mode=mode, **constraint),
                           recommended_resampling=recommended_resampling(mode, constraint.get("strategy")))  # fmt: skip


def _sides(spec: SplitSpec) -> dict[str, int]:
    """Each sample's side in a holdout: 1 tested, 0 trained."""
    roles = spec.folds.splits[0].roles(spec.n_samples)
    return dict(zip(spec.sample_ids.tolist(), roles.tolist(), strict=True))


def _expected_moves(prior: dict[str, int], groups: dict[str, str]) -> tuple[set[str], dict[str, int]]:
    """The returning samples that cannot keep their side, and each returning group's side: most of its returning
    samples' prior side, an even split going to test."""
    votes: dict[str, Counter] = {}
    for sample, group in groups.items():
        if sample in prior:
            votes.setdefault(group, Counter())[prior[sample]] += 1
    side = {g: int(v[1] >= v[0]) for g, v in votes.items()}
    moved = {s for s, g in groups.items() if s in prior and prior[s] != side[g]}
    return moved, side


def _cohort(n_subjects: int, seed: int) -> pd.DataFrame:
    """Three samples per subject, each in a batch drawn at random: subjects span batches."""
    rng = np.random.default_rng(seed)
    rows = [{"sample_id": f"S{p:03}-{t}", "subject": f"P{p:03}", "batch": f"B{rng.integers(0, 12):02}",
             "sex": "fm"[p % 2]} for p in range(n_subjects) for t in range(3)]  # fmt: skip
    return pd.DataFrame(rows)


def _grouped(frame: pd.DataFrame, by: str) -> pd.DataFrame:
    return pd.DataFrame({"sample_id": frame["sample_id"], "group_id": by + ":" + frame[by], "sex": frame["sex"]})


def _subjects(frame: pd.DataFrame) -> dict[str, str]:
    return dict(zip(frame["sample_id"], "subject:" + frame["subject"], strict=True))


def _batch_prior(frame: pd.DataFrame) -> SplitSpec:
    return assign_folds(_spec(_grouped(frame, "batch"), "batch"), BalancedHoldout(balance=("sex",), seed=3))


def test_a_batch_prior_under_a_subject_spec_names_every_sample_that_changes_side(tmp_path):
    frame = _cohort(60, seed=1)
    prior = _batch_prior(frame.iloc[:120])  # the first 40 subjects came before
    moved, side = _expected_moves(_sides(prior), _subjects(frame))
    assert moved  # the batches cut subjects: some returning samples cannot keep their side
    with pytest.warns(DepgraphWarning, match="returning sample") as told:
        after = assign_folds(_spec(_grouped(frame, "subject"), "subject"),
                             BalancedHoldout(balance=("sex",), seed=3, prior=prior))  # fmt: skip
    assert [w.message.code for w in told] == ["prior_side_changed"]
    (warning,) = after.warnings
    assert warning.code == "prior_side_changed" and warning.count == len(moved)
    assert set(warning.ids) <= moved and len(warning.ids) == min(len(moved), 50)
    assert after.folds.balance["prior_samples_moved"] == len(moved)
    now = _sides(after)
    for sample, was in _sides(prior).items():  # every other returning sample keeps its side
        assert now[sample] == was or sample in moved
    assert all(now[s] == side[g] for s, g in _subjects(frame).items() if g in side)  # new samples follow their subject
    write_spec(after, tmp_path / "after.json")
    again = read_spec(tmp_path / "after.json")
    assert again.warnings == after.warnings  # a reader keeps it, and checks it against the plan


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.integers(0, 10_000), st.integers(8, 40))
def test_any_regrouping_moves_exactly_the_samples_outvoted_in_their_group(seed, n_subjects):
    frame = _cohort(n_subjects, seed)
    prior = _batch_prior(frame)
    moved, _ = _expected_moves(_sides(prior), _subjects(frame))
    spec = _spec(_grouped(frame, "subject"), "subject")
    with warnings.catch_warnings(record=True) as told:
        warnings.simplefilter("always")
        try:
            after = assign_folds(spec, BalancedHoldout(balance=("sex",), seed=seed, prior=prior))
        except DepgraphError as err:  # the prior left no group free to balance with
            assert err.code == "too_few_groups"
            return
    codes = [w.message.code for w in told if isinstance(w.message, DepgraphWarning)]
    assert codes == (["prior_side_changed"] if moved else [])
    assert after.folds.balance["prior_samples_moved"] == len(moved)
    now, before = _sides(after), _sides(prior)
    assert {s for s in before if now[s] != before[s]} == moved


def test_a_returning_subject_whose_earlier_samples_left_keeps_its_side_by_entity():
    frame = _cohort(20, seed=5)
    subject_prior = assign_folds(_spec(_grouped(frame, "subject"), "subject"), BalancedHoldout(balance=("sex",)))
    # the new spec: the first sample of every subject dropped (QC), a new sample for each, and new subjects
    later = pd.concat([frame[~frame["sample_id"].str.endswith("-0")],
                       frame.assign(sample_id=frame["sample_id"].str.replace("-0", "-9"))
                       [frame["sample_id"].str.endswith("-0")],
                       _cohort(30, seed=6).iloc[60:]])  # fmt: skip
    rule_based = {"strategy": "rule_based", "via": ["subject"], "priority": ["subject"]}
    for mode, label, constraint in (("subject", "subject", {}), ("composite", "composite_subject", rule_based)):
        new = _spec(later.assign(group_id=label + ":" + later["subject"])[["sample_id", "group_id", "sex"]], mode,
                    **constraint)  # fmt: skip
        after = assign_folds(new, BalancedHoldout(balance=("sex",), prior=subject_prior))
        prior_side = {p: _sides(subject_prior)[f"S{p[1:]}-1"] for p in frame["subject"]}
        now = _sides(after)
        for sample, subject in zip(later["sample_id"], later["subject"], strict=True):
            if subject in prior_side:
                assert now[sample] == prior_side[subject], (mode, sample)
        assert after.folds.balance["prior_groups"] == 20 and not after.warnings


def test_only_groups_named_after_an_entity_are_matched_by_it():
    frame = _cohort(10, seed=2)
    prior = assign_folds(_spec(_grouped(frame, "subject"), "subject"), BalancedHoldout(balance=("sex",)))
    # the new spec: subject P000's samples return; every other subject comes back with new samples only
    later = frame.assign(sample_id=np.where(frame["subject"] == "P000", frame["sample_id"], frame["sample_id"] + "b"))
    first_sample = later.groupby("subject")["sample_id"].transform("min")
    for mode, group_ids, matched in (("subject", "subject:" + later["subject"], 10),
                                     ("relatedness", "relatedness:" + first_sample, 1)):  # fmt: skip
        new = _spec(later.assign(group_id=group_ids)[["sample_id", "group_id", "sex"]], mode)
        after = assign_folds(new, BalancedHoldout(balance=("sex",), prior=prior))
        assert after.folds.balance["prior_groups"] == matched, mode  # relatedness:S001-0b names a sample


def test_a_prior_sharing_no_sample_is_refused_even_when_entity_ids_match():
    frame = _cohort(10, seed=2)
    prior = assign_folds(_spec(_grouped(frame, "subject"), "subject"), BalancedHoldout(balance=("sex",)))
    elsewhere = _grouped(frame.assign(sample_id=frame["sample_id"] + "x"), "subject")  # P000 of another study
    with pytest.raises(DepgraphError, match="shares no sample") as err:
        assign_folds(_spec(elsewhere, "subject"), BalancedHoldout(balance=("sex",), prior=prior))
    assert err.value.code == "reference"


def test_folds_replaced_drop_the_warning_of_the_plan_they_replace():
    frame = _cohort(40, seed=1)
    prior = _batch_prior(frame.iloc[:60])
    with pytest.warns(DepgraphWarning, match="prior_side_changed|returning sample"):
        after = assign_folds(_spec(_grouped(frame, "subject"), "subject"),
                             BalancedHoldout(balance=("sex",), prior=prior))  # fmt: skip
    assert [w.code for w in after.warnings] == ["prior_side_changed"]
    assert assign_folds(after, "group-kfold", n_splits=3).warnings == []


def _warned_document(tmp_path: Path) -> dict:
    frame = _cohort(40, seed=1)
    prior = _batch_prior(frame.iloc[:60])
    with pytest.warns(DepgraphWarning):
        after = assign_folds(_spec(_grouped(frame, "subject"), "subject"),
                             BalancedHoldout(balance=("sex",), prior=prior))  # fmt: skip
    return spec_document(after)


@pytest.mark.parametrize(
    ("edit", "fragment"),
    [
        (lambda d: d["warnings"][0].update(count=d["warnings"][0]["count"] + 1), "but the folds count"),
        (lambda d: d["folds"]["balance"].update(prior_samples_moved=0), "but the folds count 0"),
        (lambda d: d.update(folds=None), "are no holdout kept from a prior"),
        (lambda d: d.update(warnings=[]), "but no prior_side_changed warning names them"),
        (lambda d: d["warnings"].append(dict(d["warnings"][0])), r"warnings\[1\] repeats prior_side_changed"),
        (lambda d: d["warnings"][0]["ids"].__setitem__(0, "NOT-A-SAMPLE"), "names NOT-A-SAMPLE, no sample"),
        (lambda d: d["warnings"][0].update(ids=[]), "naming 0"),
        (lambda d: d["warnings"][0].update(severity="advisory"), "not a advisory"),
    ],
    ids=[
        "count-raised",
        "balance-lowered",
        "folds-dropped",
        "warning-dropped",
        "warning-twice",
        "stranger-named",
        "no-ids",
        "advisory",
    ],
)
def test_a_moved_sample_warning_that_the_plan_did_not_make_is_refused(tmp_path, capsys, edit, fragment):
    doc = _warned_document(tmp_path)
    edit(doc)
    doc["digest"] = content_digest(doc)
    with pytest.raises(DepgraphError, match=fragment) as err:
        spec_from_document(doc)
    assert err.value.code == "integrity"
    path = tmp_path / "spec.json"
    path.write_text(json.dumps(doc))
    assert main(["validate", str(path)]) == 2
    assert "integrity" in capsys.readouterr().err


def test_the_cli_tells_the_moved_samples_and_validate_reports_them(tmp_path, capsys):
    frame = _cohort(40, seed=1)
    prior_file, spec_file, out = tmp_path / "prior.json", tmp_path / "subject.json", tmp_path / "kept.json"
    write_spec(_batch_prior(frame.iloc[:60]), prior_file)
    write_spec(_spec(_grouped(frame, "subject"), "subject"), spec_file)
    code = main(["folds", str(spec_file), "--scheme", "balanced-holdout", "--balance", "sex", "--prior",
                 str(prior_file), "-o", str(out)])  # fmt: skip
    err = capsys.readouterr().err
    assert code == 0 and "warning: prior_side_changed:" in err and "returning sample(s) cannot keep" in err
    moved = read_spec(out).warnings[0].ids
    assert moved and moved[0] in err
    assert main(["validate", str(out)]) == 0
    assert "prior_side_changed" in capsys.readouterr().out


def test_samples_the_prior_excluded_were_never_placed_and_keep_nothing():
    """A time-ordered prior excludes its gap: such a sample was neither tested nor trained, so it casts no vote,
    moves nowhere and makes no group a returning one (it was counted as trained before)."""
    from depgraph.spec.model import FoldPlan

    ids = ["A1a", "A1b", "A2", "B1", "C1", "D1", "E1", "F1", "G1", "H1"]
    subjects = ["PA", "PA", "PA", "PB", "PC", "PD", "PE", "PF", "PG", "PH"]
    frame = pd.DataFrame({"sample_id": ids, "group_id": ["subject:" + p for p in subjects], "sex": list("fmfmfmfmfm")})
    spec = _spec(frame, "subject")
    roles = np.array([[2, 2, 1, 0, 1, 2, 0, 0, 0, 1]])  # A1a, A1b, D1 excluded; A2, C1, H1 tested
    prior = spec.with_folds(FoldPlan.from_roles(roles))
    after = assign_folds(spec, BalancedHoldout(balance=("sex",), prior=prior))
    now = _sides(after)
    assert now["A2"] == now["A1a"] == now["A1b"] == 1  # PA keeps the side of the one sample the prior placed
    assert not after.warnings and after.folds.balance["prior_samples_moved"] == 0
    assert after.folds.balance["prior_groups"] == 7  # PD's only sample was excluded: a new group


def test_the_python_api_cannot_drop_the_moved_samples_warning():
    """A plan whose balance counts moved samples is refused without the warning naming them, however it is
    attached: with_folds without its findings, replace(warnings=[])."""
    frame = _cohort(40, seed=1)
    prior = _batch_prior(frame.iloc[:60])
    spec = _spec(_grouped(frame, "subject"), "subject")
    plan = BalancedHoldout(balance=("sex",), prior=prior).plan(spec)
    assert plan.balance["prior_samples_moved"] > 0
    with pytest.raises(DepgraphError, match="no prior_side_changed warning names them") as err:
        spec.with_folds(plan)
    assert err.value.code == "invalid_argument"
    with pytest.warns(DepgraphWarning):
        kept = assign_folds(spec, BalancedHoldout(balance=("sex",), prior=prior))
    with pytest.raises(DepgraphError, match="no prior_side_changed warning names them"):
        kept.replace(warnings=[])


def test_a_pseudonymised_spec_keeps_the_moved_samples_warning_readable(tmp_path):
    from depgraph.spec.privacy import pseudonymize

    frame = _cohort(40, seed=1)
    prior = _batch_prior(frame.iloc[:60])
    with pytest.warns(DepgraphWarning):
        kept = assign_folds(
            _spec(_grouped(frame, "subject"), "subject"), BalancedHoldout(balance=("sex",), prior=prior)
        )
    hidden = pseudonymize(kept, b"a key long enough to be a real one, 32+ bytes")
    (warning,) = hidden.warnings
    assert warning.code == "prior_side_changed" and "the prior grouped otherwise" in warning.message
    assert set(warning.ids) <= set(hidden.sample_ids) and not set(warning.ids) & set(kept.sample_ids)
    write_spec(hidden, tmp_path / "hidden.json")
    assert read_spec(tmp_path / "hidden.json").warnings == hidden.warnings
