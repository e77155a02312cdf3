"""scikit-learn: folds found by sample id, right inside nested CV with metadata routing."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
import sklearn
from sklearn.linear_model import LogisticRegression
from sklearn.model_selection import GridSearchCV, GroupKFold, cross_validate

from depgraph import DepgraphError
from depgraph.adapters.sklearn import SpecCV, groups_for, to_predefined_split
from depgraph.audit.exposure import straddling_groups
from depgraph.folds.schemes import assign_folds
from depgraph.spec.model import Constraint, SplitSpec


@pytest.fixture(scope="module")
def grouped():
    rng = np.random.default_rng(3)
    rows = []
    for g in range(40):
        for i in range(int(rng.integers(1, 5))):
            rows.append({"sample_id": f"P{g:02d}-{i}", "group_id": f"subject:P{g:02d}",
                         "stratum": "case" if g % 3 == 0 else "control"})  # fmt: skip
    frame = pd.DataFrame(rows)
    spec = SplitSpec.build(frame, constraint=Constraint(mode="subject"), recommended_resampling="grouped_cv")
    spec = assign_folds(spec, "stratified-group-kfold", n_splits=4, seed=0)
    X = pd.DataFrame(rng.normal(size=(len(frame), 3)), index=frame["sample_id"], columns=["a", "b", "c"])
    y = (frame["stratum"] == "case").to_numpy().astype(int)
    return spec, X, y


class RecordingCV(SpecCV):
    """SpecCV that remembers the sample ids of every split it hands out."""

    log: list = []  # noqa: RUF012 - shared on purpose: one log for outer and inner loops

    def split(self, X=None, y=None, groups=None):
        ids = np.asarray(groups) if groups is not None else X.index.to_numpy()
        for train, test in super().split(X, y, groups):
            RecordingCV.log.append((set(ids[train]), set(ids[test])))
            yield train, test


def _group_of(spec):
    return dict(zip(spec.sample_ids, spec.group_ids, strict=True))


def test_nested_grid_search_in_cross_validate_never_splits_a_group(grouped):
    spec, X, y = grouped
    RecordingCV.log = []
    with sklearn.config_context(enable_metadata_routing=True):
        inner = GridSearchCV(LogisticRegression(), {"C": [0.1, 1.0]}, cv=RecordingCV(spec))
        result = cross_validate(
            inner, X.to_numpy(), y, cv=RecordingCV(spec), params={"groups": X.index.to_numpy()},
            return_indices=True,
        )  # fmt: skip
    assert len(result["test_score"]) == 4
    group_of = _group_of(spec)
    inner_splits = [s for s in RecordingCV.log if len(s[0]) + len(s[1]) < len(X)]
    assert len(inner_splits) >= 4 * 3  # each outer training set gets the other folds as its inner CV
    for train, test in RecordingCV.log:
        assert not {group_of[s] for s in train} & {group_of[s] for s in test}
    # the outer folds are exactly the plan's
    outer_tests = [set(X.index[t]) for t in result["indices"]["test"]]
    assert outer_tests == [set(spec.sample_ids[s.test]) for s in spec.folds.splits]


def test_rows_are_found_by_id_in_any_order(grouped):
    spec, X, _ = grouped
    shuffled = X.sample(frac=1, random_state=1)
    by_index = [set(shuffled.index[t]) for _, t in SpecCV(spec).split(shuffled)]
    by_groups = [set(shuffled.index[t]) for _, t in SpecCV(spec).split(shuffled.to_numpy(), groups=shuffled.index)]
    by_ids = [set(shuffled.index[t]) for _, t in SpecCV(spec, ids=shuffled.index).split(shuffled.to_numpy())]
    assert by_index == by_groups == by_ids == [set(spec.sample_ids[s.test]) for s in spec.folds.splits]
    assert SpecCV(spec).get_n_splits() == 4


def test_a_subset_gets_the_splits_that_test_it(grouped):
    spec, X, _ = grouped
    first_fold = set(spec.sample_ids[spec.folds.splits[0].test])
    rest = X.loc[[s for s in X.index if s not in first_fold]]
    cv = SpecCV(spec)
    assert cv.get_n_splits(rest) == 3 and len(list(cv.split(rest))) == 3


def test_unknown_rows_and_missing_ids_are_refused(grouped):
    spec, X, _ = grouped
    with pytest.raises(DepgraphError) as err:
        list(SpecCV(spec).split(X.rename(index={X.index[0]: "stranger"})))
    assert err.value.code == "reference" and "stranger" in err.value.message
    with pytest.raises(DepgraphError):
        list(SpecCV(spec).split(X.to_numpy()))


def test_groups_for_any_sklearn_splitter(grouped):
    spec, X, _ = grouped
    groups = groups_for(spec, X.index)
    group_of = _group_of(spec)
    for train, test in GroupKFold(n_splits=5).split(X, groups=groups):
        assert not {group_of[s] for s in X.index[train]} & {group_of[s] for s in X.index[test]}


def test_predefined_split_reproduces_one_repeat(grouped, tmp_path):
    spec, X, _ = grouped
    predefined = to_predefined_split(spec, X.index)
    ours = [set(spec.sample_ids[s.test]) for s in spec.folds.splits]
    assert [set(X.index[t]) for _, t in predefined.split()] == ours
    # and check agrees that these folds never cut a group
    table = pd.DataFrame({"sample_id": X.index, "fold": predefined.test_fold})
    assert straddling_groups(spec, table).clean


# --------------------------------------------------------------------------- GroupKFold habits (issue 11)
def _subjects(spec, ids):
    return np.array([_group_of(spec)[s].split(":", 1)[1] for s in ids], dtype=object)


@pytest.mark.parametrize("as_given", ["bare", "prefixed"])
def test_subject_ids_passed_as_groups_are_named_with_the_fix(grouped, as_given):
    spec, X, y = grouped
    subjects = _subjects(spec, X.index)  # P00, P01... as a GroupKFold user would pass them
    if as_given == "prefixed":
        subjects = np.array([f"subject:{s}" for s in subjects], dtype=object)
    with pytest.raises(ValueError) as err:  # a DepgraphError is a ValueError
        list(SpecCV(spec).split(X.to_numpy(), y, groups=subjects))
    assert err.value.code == "reference"
    message = err.value.message
    assert "groups= takes each row's sample id, but these name the spec's groups" in message
    assert "set_index" in message and "SpecCV(spec, ids=...)" in message and "\n" not in message


def test_groups_that_are_nothing_of_the_spec_are_named_as_not_sample_ids(grouped):
    spec, X, y = grouped
    with pytest.raises(DepgraphError) as err:
        list(SpecCV(spec).split(X.to_numpy(), y, groups=np.arange(len(X))))
    assert err.value.code == "reference" and "these are not sample ids of the spec" in err.value.message


def test_a_few_unknown_sample_ids_get_no_habit_hint(grouped):
    spec, X, y = grouped
    ids = X.index.to_numpy(dtype=object).copy()
    ids[3] = "stranger"
    with pytest.raises(DepgraphError) as err:
        list(SpecCV(spec).split(X.to_numpy(), y, groups=ids))
    assert err.value.message == "SpecCV: groups: 1 row(s) name samples not in the spec: stranger"


def test_subject_ids_routed_through_cross_validate_are_refused_with_the_fix(grouped):
    spec, X, y = grouped
    with sklearn.config_context(enable_metadata_routing=True), pytest.raises(ValueError) as err:
        cross_validate(LogisticRegression(), X.to_numpy(), y, cv=SpecCV(spec),
                       params={"groups": _subjects(spec, X.index)})  # fmt: skip
    assert err.value.code == "reference" and "groups= takes each row's sample id" in err.value.message


def test_a_frame_with_a_range_index_is_named_with_the_fix(grouped):
    spec, X, y = grouped
    frame = X.reset_index()  # sample_id becomes a column; the index counts rows
    with pytest.raises(DepgraphError) as err:
        list(SpecCV(spec).split(frame, y))
    message = err.value.message
    assert err.value.code == "reference"
    assert "X's index holds row numbers (a RangeIndex), not sample ids: X.set_index('sample_id')" in message
    # without a sample_id column the hint names the general fix
    with pytest.raises(DepgraphError, match=r"X.set_index\(<sample id column>\)"):
        list(SpecCV(spec).split(frame.drop(columns="sample_id"), y))
    # and the suggested fixes work: set_index, or ids= (which a RangeIndex never overrides)
    expected = [set(spec.sample_ids[s.test]) for s in spec.folds.splits]
    indexed = frame.set_index("sample_id")
    assert [set(indexed.index[t]) for _, t in SpecCV(spec).split(indexed, y)] == expected
    by_ids = [set(frame["sample_id"][t]) for _, t in SpecCV(spec, ids=frame["sample_id"]).split(frame, y)]
    assert by_ids == expected


def test_a_range_index_that_holds_the_sample_ids_is_used():
    spec = SplitSpec.build(pd.DataFrame({"sample_id": [str(i) for i in range(6)], "group_id": list("aabbcc")}),
                           constraint=Constraint(mode="subject"), recommended_resampling="grouped_cv")  # fmt: skip
    spec = assign_folds(spec, "group-kfold", n_splits=3)
    frame = pd.DataFrame({"x": range(6)})
    assert [sorted(t.tolist()) for _, t in SpecCV(spec).split(frame)] == [sorted(s.test) for s in spec.folds.splits]
