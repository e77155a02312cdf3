"""Comparing specs: samples that changed group, sets that differ, relabelling, folds."""

from __future__ import annotations

import numpy as np
import pandas as pd

from depgraph.spec.diff import compare_specs
from depgraph.spec.model import Constraint, FoldPlan, SplitSpec


def spec(ids, groups, role=None):
    s = SplitSpec.build(
        pd.DataFrame({"sample_id": ids, "group_id": groups}),
        constraint=Constraint(mode="subject"),
        recommended_resampling="grouped_cv",
    )
    if role is not None:
        s = s.with_folds(FoldPlan.from_roles(np.asarray(role, dtype=np.int8), scheme="manual"))
    return s


def test_identical_specs():
    a = spec(["S1", "S2"], ["g", "g"])
    d = compare_specs(a, a)
    assert d.same_digest and not d.differs and not d.relabelled


def test_a_move_marks_every_sample_whose_company_changed():
    a = spec(["S1", "S2", "S3", "S4"], ["a", "a", "b", "c"])
    b = spec(["S1", "S2", "S3", "S4"], ["a", "b", "b", "c"])
    d = compare_specs(a, b)
    assert d.changed["sample_id"].tolist() == ["S1", "S2", "S3"] and d.differs
    assert d.changed.iloc[1].tolist() == ["S2", "a", "b"]


def test_samples_present_in_one_spec_only():
    d = compare_specs(spec(["S1", "S2"], ["a", "a"]), spec(["S2", "S3"], ["a", "a"]))
    assert d.only_in_first == ("S1",) and d.only_in_second == ("S3",) and d.differs
    assert d.changed.empty


def test_folds_are_compared_in_sample_order():
    a = spec(["S1", "S2"], ["a", "b"], role=[[0, 1]])
    b = SplitSpec.build(  # same folds, given with rows in another order: build puts rows (and folds) in id order
        pd.DataFrame({"sample_id": ["S2", "S1"], "group_id": ["b", "a"]}),
        constraint=Constraint(mode="subject"),
        recommended_resampling="grouped_cv",
        folds=FoldPlan.from_roles(np.array([[1, 0]], dtype=np.int8), scheme="manual"),
    )
    assert b.samples["sample_id"].tolist() == ["S1", "S2"]
    assert compare_specs(a, b).folds_differ is False
    c = spec(["S1", "S2"], ["a", "b"], role=[[1, 0]])
    assert compare_specs(a, c).folds_differ is True and compare_specs(a, c).differs
    assert compare_specs(a, spec(["S1", "S2"], ["a", "b"])).folds_differ is True
