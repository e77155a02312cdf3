"""depgraph's drop-ins for GroupShuffleSplit, LeaveOneGroupOut and LeavePGroupsOut pass scikit-learn's own test
module for its splitters, run unchanged but for one import that puts depgraph's classes in the place of
scikit-learn's; RepeatedStratifiedGroupKFold (which scikit-learn lacks) is held to what its repeated splitters
promise."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

sklearn = pytest.importorskip("sklearn")

import depgraph  # noqa: E402
from depgraph.adapters.sklearn import (  # noqa: E402
    GroupShuffleSplit,
    LeaveOneGroupOut,
    LeavePGroupsOut,
    RepeatedStratifiedGroupKFold,
    StratifiedGroupKFold,
)

DROP_INS = "from depgraph.adapters.sklearn import GroupShuffleSplit, LeaveOneGroupOut, LeavePGroupsOut  # noqa\n"
CANARY = """

def test_the_splitters_under_test_are_depgraphs():
    for cls in (GroupShuffleSplit, LeaveOneGroupOut, LeavePGroupsOut):
        assert cls.__module__ == "depgraph.adapters.sklearn", cls
"""


@pytest.mark.slow  # scikit-learn's whole test module in a fresh process: ~20 s; CI runs it (--slow)
def test_scikit_learns_own_splitter_tests_pass_on_the_drop_ins(tmp_path):
    source = Path(sklearn.__file__).parent / "model_selection" / "tests" / "test_split.py"
    text = source.read_text()
    marker = "NO_GROUP_SPLITTERS = ["
    assert marker in text and "LeavePGroupsOut(n_groups=1)" in text
    (tmp_path / "test_split_depgraph.py").write_text(text.replace(marker, DROP_INS + "\n" + marker, 1) + CANARY)
    # scikit-learn's conftest gives this fixture; its default seed
    (tmp_path / "conftest.py").write_text(
        "import pytest\n\n\n@pytest.fixture\ndef global_random_seed():\n    return 42\n"
    )
    run = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-p", "no:randomly", "-o", "addopts=",
         "test_split_depgraph.py"],
        cwd=tmp_path, capture_output=True, text=True, timeout=600,
    )  # fmt: skip
    summary = run.stdout.strip().splitlines()[-1]
    assert run.returncode == 0, run.stdout[-3000:]
    passed = int(summary.split(" passed")[0].split()[-1])
    assert passed >= 200 and "failed" not in summary and "error" not in summary, summary


def test_groups_are_checked_before_scikit_learn_splits_them():
    for splitter in (GroupShuffleSplit(2, random_state=0), LeaveOneGroupOut(), LeavePGroupsOut(2)):
        with pytest.raises(depgraph.DepgraphError, match="missing label") as caught:
            list(splitter.split(np.zeros(4), groups=["a", None, "b", "c"]))
        assert caught.value.code == "missing_id"


def test_the_drop_ins_give_scikit_learns_splits():
    from sklearn import model_selection as ms

    rng = np.random.default_rng(0)
    X, groups = np.zeros((40, 1)), rng.integers(0, 7, 40)
    for ours, theirs in ((GroupShuffleSplit(3, test_size=0.3, random_state=1), ms.GroupShuffleSplit(3, test_size=0.3,
                          random_state=1)), (LeaveOneGroupOut(), ms.LeaveOneGroupOut()),
                         (LeavePGroupsOut(3), ms.LeavePGroupsOut(3))):  # fmt: skip
        got = [(a.tolist(), b.tolist()) for a, b in ours.split(X, groups=groups)]
        assert got == [(a.tolist(), b.tolist()) for a, b in theirs.split(X, groups=groups)]
        assert repr(ours) == repr(theirs)


def test_repeated_stratified_group_kfold_repeats_whole_group_folds_with_new_shuffles():
    rng = np.random.default_rng(1)
    groups = np.repeat(np.arange(30), 3)
    y = np.repeat(rng.integers(0, 2, 30), 3)
    X = np.zeros((90, 1))
    cv = RepeatedStratifiedGroupKFold(n_splits=3, n_repeats=4, random_state=7)
    splits = list(cv.split(X, y, groups))
    assert len(splits) == cv.get_n_splits() == 12
    assert repr(cv) == "RepeatedStratifiedGroupKFold(n_repeats=4, n_splits=3, random_state=7)"
    tests_per_repeat = [splits[r * 3 : (r + 1) * 3] for r in range(4)]
    for repeat in tests_per_repeat:
        assert sorted(np.concatenate([test for _, test in repeat]).tolist()) == list(range(90))  # each row once
        for train, test in repeat:
            assert not set(groups[train]) & set(groups[test])  # whole groups on one side
    partitions = {tuple(sorted(tuple(sorted(set(groups[t]))) for _, t in repeat)) for repeat in tests_per_repeat}
    assert len(partitions) > 1  # the repeats shuffle anew
    again = [t.tolist() for _, t in RepeatedStratifiedGroupKFold(n_splits=3, n_repeats=4, random_state=7).split(
        X, y, groups)]  # fmt: skip
    assert again == [t.tolist() for _, t in splits]
    first = [t.tolist() for _, t in StratifiedGroupKFold(3, shuffle=True, random_state=7).split(X, y, groups)]
    assert len(first) == 3  # each repeat is a StratifiedGroupKFold
    with pytest.raises(ValueError):
        list(cv.split(X, y))


DROP_IN_EXAMPLES = [
    depgraph.GroupKFold(3, shuffle=True, random_state=4),
    depgraph.StratifiedGroupKFold(2),
    RepeatedStratifiedGroupKFold(n_splits=3, n_repeats=2, random_state=1),
    GroupShuffleSplit(4, test_size=0.25, random_state=2),
    LeaveOneGroupOut(),
    LeavePGroupsOut(2),
]


@pytest.mark.parametrize("splitter", DROP_IN_EXAMPLES, ids=lambda s: type(s).__name__)
def test_a_drop_in_clones_into_an_equal_splitter_and_has_scikit_learns_shape(splitter):
    """``sklearn.base.clone`` gives a new splitter of the same class, repr and splits (scikit-learn's own splitters
    cannot be cloned); like them, a drop-in has no get_params or set_params, which an estimator taking cv= would
    otherwise take for its own parameters (LassoCV then fails)."""
    from sklearn import model_selection as ms
    from sklearn.base import clone

    twin = clone(splitter)
    assert type(twin) is type(splitter) and twin is not splitter and repr(twin) == repr(splitter)
    X, y, groups = np.zeros((24, 1)), np.tile([0, 1], 12), np.repeat(np.arange(8), 3)
    assert [t.tolist() for _, t in twin.split(X, y, groups)] == [t.tolist() for _, t in splitter.split(X, y, groups)]
    assert not hasattr(splitter, "get_params") and not hasattr(splitter, "set_params")
    assert not hasattr(ms.GroupKFold(2), "get_params")  # scikit-learn's shape, which the drop-ins keep


def test_a_search_and_a_cross_validation_take_the_drop_ins():
    from sklearn.linear_model import LogisticRegression
    from sklearn.model_selection import GridSearchCV, cross_val_score

    rng = np.random.default_rng(3)
    X, groups = rng.normal(size=(60, 2)), np.repeat(np.arange(20), 3)
    y = (X[:, 0] + rng.normal(size=60) > 0).astype(int)
    search = GridSearchCV(LogisticRegression(), {"C": [0.1, 1.0]}, cv=depgraph.StratifiedGroupKFold(3))
    assert search.fit(X, y, groups=groups).best_params_["C"] in (0.1, 1.0)
    scores = cross_val_score(LogisticRegression(), X, y, groups=groups, cv=depgraph.GroupKFold(4))
    assert len(scores) == 4


def test_repeated_stratified_group_kfold_refuses_a_fold_count_in_its_own_name():
    for k in (1, 2.5, True):
        with pytest.raises(depgraph.DepgraphError) as refused:
            RepeatedStratifiedGroupKFold(n_splits=k)
        assert refused.value.message.startswith("RepeatedStratifiedGroupKFold: ")
