"""depgraph.GroupKFold / StratifiedGroupKFold pass scikit-learn's own splitter tests.

The tests of scikit-learn 1.9's ``sklearn/model_selection/tests/test_split.py`` that apply
to ``GroupKFold``, ``StratifiedGroupKFold`` and every CV splitter, translated to depgraph's
splitters (each keeps its scikit-learn name); the routing tests of
``sklearn/tests/test_metaestimators_metadata_routing.py`` that send ``groups`` to the splitter
of every estimator taking ``cv``; and the validation functions of
``sklearn/model_selection/_validation.py``. Where scikit-learn asserts its own exact folds,
these tests assert that depgraph's balance is no worse than scikit-learn's on the same data.
"""

from __future__ import annotations

import re
import subprocess
import sys
import warnings
from itertools import combinations_with_replacement, permutations

import numpy as np
import pandas as pd
import pytest
import sklearn
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import stats
from sklearn.calibration import CalibratedClassifierCV
from sklearn.covariance import GraphicalLassoCV
from sklearn.datasets import make_classification
from sklearn.dummy import DummyClassifier
from sklearn.experimental import enable_halving_search_cv  # noqa: F401 - makes HalvingGridSearchCV importable
from sklearn.feature_selection import RFECV, SequentialFeatureSelector
from sklearn.linear_model import (
    ElasticNetCV,
    LarsCV,
    LassoCV,
    LassoLarsCV,
    LogisticRegression,
    LogisticRegressionCV,
    MultiTaskElasticNetCV,
    MultiTaskLassoCV,
    OrthogonalMatchingPursuitCV,
    RidgeClassifierCV,
    RidgeCV,
)
from sklearn.model_selection import (
    GridSearchCV,
    HalvingGridSearchCV,
    HalvingRandomSearchCV,
    LeaveOneGroupOut,
    LeaveOneOut,
    RandomizedSearchCV,
    StratifiedKFold,
    StratifiedShuffleSplit,
    TunedThresholdClassifierCV,
    check_cv,
    cross_val_predict,
    cross_val_score,
    cross_validate,
    learning_curve,
    permutation_test_score,
    validation_curve,
)
from sklearn.model_selection import GroupKFold as SkGroupKFold
from sklearn.model_selection import StratifiedGroupKFold as SkStratifiedGroupKFold
from sklearn.model_selection._split import _yields_constant_splits
from sklearn.preprocessing import TargetEncoder

import depgraph
from depgraph import DepgraphError, DepgraphWarning
from depgraph.adapters.sklearn import GroupKFold, StratifiedGroupKFold
from depgraph.folds.schemes import GroupedKFold
from depgraph.spec.model import Constraint, SplitSpec
from tests.conftest import REPO

SPLITTERS = (GroupKFold, StratifiedGroupKFold)


# --------------------------------------------------------------------------- helpers
def check_valid_split(train, test, n_samples=None):
    train, test = set(train), set(test)
    assert train.intersection(test) == set()
    if n_samples is not None:
        assert train.union(test) == set(range(n_samples))


def check_cv_coverage(cv, X, y, groups, expected_n_splits):
    n_samples = len(X)
    assert cv.get_n_splits(X, y, groups) == expected_n_splits
    collected, iterations = set(), 0
    for train, test in cv.split(X, y, groups):
        check_valid_split(train, test, n_samples=n_samples)
        iterations += 1
        collected.update(test)
    assert iterations == expected_n_splits
    assert collected == set(range(n_samples))


def folds_of(cv, X, y, groups) -> np.ndarray:
    fold = np.full(len(groups), -1)
    for f, (_, test) in enumerate(cv.split(X, y, groups)):
        fold[test] = f
    return fold


def balance(y, fold, k) -> tuple[float, float]:
    """(worst deviation of a test fold's class share from the whole, (max - min) fold size / (n / k))."""
    _, codes = np.unique(y, return_inverse=True)
    overall = np.bincount(codes) / len(y)
    worst = max(
        np.abs(np.bincount(codes[fold == f], minlength=len(overall)) / max(1, (fold == f).sum()) - overall).max()
        for f in range(k)
    )
    sizes = np.bincount(fold, minlength=k)
    return float(worst), float((sizes.max() - sizes.min()) / (len(y) / k))


def never_straddles(groups, splits) -> None:
    groups = np.asarray(groups, dtype=object)
    for train, test in splits:
        assert not set(groups[train]) & set(groups[test])


# --------------------------------------------------------------------------- test_split.py, translated
def test_cross_validator_with_default_params():
    X = np.array([[1, 2], [3, 4], [5, 6], [7, 8]])
    X_1d = np.array([1, 2, 3, 4])
    y = np.array([1, 1, 2, 2])
    groups = np.array([1, 2, 3, 4])
    for cls in SPLITTERS:
        cv = cls(2)
        assert cv.get_n_splits(X, y, groups) == 2
        np.testing.assert_equal(list(cv.split(X, y, groups)), list(cv.split(X_1d, y, groups)))
        for train, test in cv.split(X, y, groups):
            assert np.asarray(train).dtype.kind == "i" and np.asarray(test).dtype.kind == "i"
        # the repr says whose splitter it is: scikit-learn's has the same name
        # as scikit-learn's test_split.py requires of every cross-validator: the class name, no module prefix
        assert repr(cv) == f"{cls.__name__}(n_splits=2, random_state=None, shuffle=False)"


@pytest.mark.filterwarnings("ignore::depgraph.DepgraphWarning")  # 3 groups: a class can miss one of 3 folds
def test_2d_y():
    n_samples = 30
    rng = np.random.RandomState(1)
    X = rng.randint(0, 3, size=(n_samples, 2))
    y = rng.randint(0, 3, size=(n_samples,))
    y_2d = y.reshape(-1, 1)
    y_multilabel = rng.randint(0, 2, size=(n_samples, 3))
    groups = rng.randint(0, 3, size=(n_samples,))
    for splitter in (GroupKFold(n_splits=3), StratifiedGroupKFold(n_splits=3)):
        assert_equal_splits(splitter.split(X, y, groups=groups), splitter.split(X, y_2d, groups=groups))
    list(GroupKFold(n_splits=3).split(X, y_multilabel, groups=groups))  # y is not read
    with pytest.raises(ValueError, match="one column of class labels") as err:
        list(StratifiedGroupKFold(n_splits=3).split(X, y_multilabel, groups=groups))
    assert err.value.code == "invalid_argument"


def assert_equal_splits(a, b):
    np.testing.assert_equal(list(a), list(b))


def test_kfold_valueerrors():
    X2 = np.array([[1, 2], [3, 4], [5, 6], [7, 8], [9, 10]])
    y = np.array([3, 3, -1, -1, 3])
    sgkf_3 = StratifiedGroupKFold(3)
    naive_groups = np.arange(len(y))
    # scikit-learn warns when the least populated class has fewer members than n_splits;
    # depgraph counts the groups a class reaches, which is what limits a grouped split
    with pytest.warns(DepgraphWarning, match="least populated class in y \\(-1\\) is in only 2 group"):
        next(sgkf_3.split(X2, y, naive_groups))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        check_cv_coverage(sgkf_3, X2, y, groups=naive_groups, expected_n_splits=3)
    # every class smaller than n_splits: an error
    y = np.array([3, 3, -1, -1, 2])
    with pytest.raises(ValueError, match="more than the samples of every class") as err:
        next(sgkf_3.split(X2, y, naive_groups))
    assert err.value.code == "too_few_groups"
    for cls in SPLITTERS:
        for bad in (0, 1, 1.5, 2.0, True, "3", None):
            with pytest.raises(ValueError, match="n_splits") as err:
                cls(bad)
            assert err.value.code == "invalid_argument"
        # scikit-learn raises TypeError for a shuffle that is not a bool; depgraph's refusal is a ValueError
        with pytest.raises(ValueError, match="shuffle must be True or False") as err:
            cls(n_splits=4, shuffle=None)
        assert isinstance(err.value, DepgraphError)


@pytest.mark.parametrize("shuffle", [False, True])
@pytest.mark.parametrize("k", [4, 5, 6, 7, 8, 9, 10])
def test_stratified_kfold_ratios(k, shuffle):
    n_samples = 1000
    X = np.ones(n_samples)
    y = np.array([4] * int(0.10 * n_samples) + [0] * int(0.89 * n_samples) + [1] * int(0.01 * n_samples))
    groups = np.arange(len(y))  # every sample its own group: perfect stratification is possible
    distr = np.bincount(y) / len(y)
    test_sizes = []
    cv = StratifiedGroupKFold(k, random_state=0 if shuffle else None, shuffle=shuffle)
    for train, test in cv.split(X, y, groups=groups):
        np.testing.assert_allclose(np.bincount(y[train]) / len(train), distr, atol=0.02)
        np.testing.assert_allclose(np.bincount(y[test], minlength=len(distr)) / len(test), distr, atol=0.02)
        test_sizes.append(len(test))
    assert np.ptp(test_sizes) <= 1


@pytest.mark.filterwarnings("ignore::depgraph.DepgraphWarning")  # one sample of class 1: it misses k - 1 folds
@pytest.mark.parametrize("shuffle", [False, True])
@pytest.mark.parametrize("k", [4, 6, 7])
def test_stratified_kfold_label_invariance(k, shuffle):
    n_samples = 100
    y = np.array([2] * int(0.10 * n_samples) + [0] * int(0.89 * n_samples) + [1] * int(0.01 * n_samples))
    X = np.ones(len(y))
    groups = np.arange(len(y))

    def get_splits(y):
        cv = StratifiedGroupKFold(k, random_state=0 if shuffle else None, shuffle=shuffle)
        return [(list(train), list(test)) for train, test in cv.split(X, y, groups=groups)]

    splits_base = get_splits(y)
    for perm in permutations([0, 1, 2]):
        assert get_splits(np.take(perm, y)) == splits_base
    # classes of equal size too: their order comes from how they spread over the groups, not their labels
    y = np.repeat([0, 1, 2, 3], 25)
    splits_base = get_splits(y)
    for perm in permutations(["d", "a", "c", "b"]):
        assert get_splits(np.take(perm, y)) == splits_base


def test_stratifiedkfold_balance():
    X = np.ones(17)
    y = [0] * 3 + [1] * 14
    groups = np.arange(len(y))
    for shuffle in (True, False):
        cv = StratifiedGroupKFold(3, shuffle=shuffle)
        for i in range(11, 17):
            sizes = [len(test) for _, test in cv.split(X[:i], y[:i], groups[:i])]
            assert (np.max(sizes) - np.min(sizes)) <= 1
            assert np.sum(sizes) == i


@pytest.mark.parametrize("cls", SPLITTERS)
def test_shuffle_kfold_stratifiedkfold_reproducibility(cls):
    X = np.ones(15)
    y = [0] * 7 + [1] * 8
    groups_1 = np.arange(len(y))
    X2 = np.ones(16)
    y2 = [0] * 8 + [1] * 8
    groups_2 = np.arange(len(y2))
    kf = cls(3, shuffle=True, random_state=0)
    np.testing.assert_equal(list(kf.split(X, y, groups_1)), list(kf.split(X, y, groups_1)))
    # a RandomState draws again at every call to split
    kf = cls(3, shuffle=True, random_state=np.random.RandomState(0))
    for data in zip((X, X2), (y, y2), (groups_1, groups_2), strict=True):
        for (_, test_a), (_, test_b) in zip(kf.split(*data), kf.split(*data), strict=True):
            with pytest.raises(AssertionError):
                np.testing.assert_array_equal(test_a, test_b)
    # and a RandomState seeded alike gives the same sequence of splits
    first = [list(cls(3, shuffle=True, random_state=np.random.RandomState(7)).split(X, y, groups_1))]
    again = [list(cls(3, shuffle=True, random_state=np.random.RandomState(7)).split(X, y, groups_1))]
    np.testing.assert_equal(first, again)


@pytest.mark.parametrize("cls", SPLITTERS)
def test_shuffle_groupkfold(cls):
    X = np.ones(40)
    y = [0] * 20 + [1] * 20
    groups = np.arange(40) // 3
    gkf0 = cls(4, shuffle=True, random_state=0)
    gkf1 = cls(4, shuffle=True, random_state=1)
    test_groups0 = [set(groups[test]) for _, test in gkf0.split(X, y, groups)]
    test_groups1 = [set(groups[test]) for _, test in gkf1.split(X, y, groups)]
    for g0, g1 in zip(test_groups0, test_groups1, strict=True):
        assert g0 != g1, "Test groups should differ with different random states"
    check_cv_coverage(gkf0, X, y, groups, expected_n_splits=4)
    check_cv_coverage(gkf1, X, y, groups, expected_n_splits=4)


def test_stratified_group_kfold_trivial():
    sgkf = StratifiedGroupKFold(n_splits=3)
    y = np.array([1] * 6 + [0] * 12)
    X = np.ones_like(y).reshape(-1, 1)
    groups = np.asarray((1, 2, 3, 4, 5, 6, 1, 1, 2, 2, 3, 3, 4, 4, 5, 5, 6, 6))
    distr = np.bincount(y) / len(y)
    test_sizes = []
    for train, test in sgkf.split(X, y, groups):
        assert np.intersect1d(groups[train], groups[test]).size == 0
        np.testing.assert_allclose(np.bincount(y[train]) / len(train), distr, atol=0.02)
        np.testing.assert_allclose(np.bincount(y[test]) / len(test), distr, atol=0.02)
        test_sizes.append(len(test))
    assert np.ptp(test_sizes) <= 1


def test_stratified_group_kfold_approximate():
    # scikit-learn asserts its own imperfect shares here (0.833/0.166, 0.666/0.333, 0.5/0.5), "not
    # perfect stratification (even though it is possible)": depgraph must be at least as balanced
    y = np.array([1] * 6 + [0] * 12)
    X = np.ones_like(y).reshape(-1, 1)
    groups = np.array([1, 2, 3, 3, 4, 4, 1, 1, 2, 2, 3, 4, 5, 5, 5, 6, 6, 6])
    ours = folds_of(StratifiedGroupKFold(n_splits=3), X, y, groups)
    theirs = folds_of(SkStratifiedGroupKFold(n_splits=3), X, y, groups)
    never_straddles(groups, StratifiedGroupKFold(n_splits=3).split(X, y, groups))
    (share, spread), (sk_share, sk_spread) = balance(y, ours, 3), balance(y, theirs, 3)
    assert share <= sk_share and spread <= sk_spread
    assert share == pytest.approx(0.0) and spread == 0.0  # here perfect stratification is found


@pytest.mark.parametrize(
    "y, groups, expected",
    [
        (
            np.array([0] * 6 + [1] * 6),
            np.array([1, 1, 2, 2, 3, 3, 4, 4, 5, 5, 6, 6]),
            np.asarray([[0.5, 0.5], [0.5, 0.5], [0.5, 0.5]]),
        ),
        (
            np.array([0] * 9 + [1] * 3),
            np.array([1, 1, 1, 2, 2, 2, 3, 3, 3, 4, 5, 6]),
            np.asarray([[0.75, 0.25], [0.75, 0.25], [0.75, 0.25]]),
        ),
    ],
)
def test_stratified_group_kfold_homogeneous_groups(y, groups, expected):
    sgkf = StratifiedGroupKFold(n_splits=3)
    X = np.ones_like(y).reshape(-1, 1)
    for (train, test), expect_dist in zip(sgkf.split(X, y, groups), expected, strict=True):
        assert np.intersect1d(groups[train], groups[test]).size == 0
        np.testing.assert_allclose(np.bincount(y[test]) / len(test), expect_dist, atol=0.001)
    ours, theirs = folds_of(sgkf, X, y, groups), folds_of(SkStratifiedGroupKFold(3), X, y, groups)
    assert balance(y, ours, 3) <= balance(y, theirs, 3)


def test_stratified_group_kfold_shuffle_preserves_stratification():
    y = np.array([0] * 12 + [1] * 6)
    X = np.ones((len(y), 1))
    groups = np.array([1, 1, 3, 3, 3, 4, 5, 5, 5, 5, 7, 7, 2, 2, 6, 6, 8, 8])
    expected_class_ratios = np.asarray([2.0 / 3, 1.0 / 3])
    for seed in range(100):
        sgkf = StratifiedGroupKFold(n_splits=3, shuffle=True, random_state=seed)
        test_sizes = []
        for train, test in sgkf.split(X, y, groups):
            assert np.intersect1d(groups[train], groups[test]).size == 0
            np.testing.assert_allclose(np.bincount(y[train]) / len(train), expected_class_ratios, atol=1e-8)
            np.testing.assert_allclose(np.bincount(y[test]) / len(test), expected_class_ratios, atol=1e-8)
            test_sizes.append(len(test))
        assert np.ptp(test_sizes) <= 1


@pytest.mark.parametrize("cls_distr", [(0.4, 0.6), (0.3, 0.7), (0.2, 0.8), (0.8, 0.2)])
@pytest.mark.parametrize("n_groups", [5, 30, 70])
def test_stratified_group_kfold_against_group_kfold(cls_distr, n_groups):
    n_splits = 5
    rng = np.random.RandomState(0)
    n_points = 1000
    y = rng.choice(2, size=n_points, p=cls_distr)
    X = np.ones_like(y).reshape(-1, 1)
    g = rng.choice(n_groups, n_points)
    entropy = {}
    for cv in (StratifiedGroupKFold(n_splits=n_splits), GroupKFold(n_splits=n_splits)):
        total = 0.0
        for train, test in cv.split(X, y, groups=g):
            assert np.intersect1d(g[train], g[test]).size == 0
            total += stats.entropy(np.bincount(y[test]) / len(test), qk=cls_distr)
        entropy[type(cv)] = total / n_splits
    assert entropy[StratifiedGroupKFold] <= entropy[GroupKFold]


NAMES = np.array(
    ["Albert", "Jean", "Bertrand", "Michel", "Jean", "Francis", "Robert", "Michel", "Rachel", "Lois", "Michelle",
     "Bernard", "Marion", "Laura", "Jean", "Rachel", "Franck", "John", "Gael", "Anna", "Alix", "Robert", "Marion",
     "David", "Tony", "Abel", "Becky", "Madmood", "Cary", "Mary", "Alexandre", "David", "Francis", "Barack",
     "Abdoul", "Rasha", "Xi", "Silvia"]
)  # fmt: skip


@pytest.mark.parametrize("cls", SPLITTERS)
@pytest.mark.parametrize("shuffle", [True, False])
@pytest.mark.parametrize("global_random_seed", [0, 1, 42])
def test_group_kfold(cls, shuffle, global_random_seed):
    rng = np.random.RandomState(global_random_seed)
    n_groups, n_samples, n_splits = 15, 1000, 5
    X = y = np.ones(n_samples)
    tolerance = 0.05 * n_samples
    groups = rng.randint(0, n_groups, n_samples)
    ideal = n_samples // n_splits
    random_state = None if not shuffle else global_random_seed
    lkf = cls(n_splits=n_splits, shuffle=shuffle, random_state=random_state)
    folds = np.zeros(n_samples)
    for i, (_, test) in enumerate(lkf.split(X, y, groups)):
        folds[test] = i
    for i in np.unique(folds):
        assert tolerance >= abs(sum(folds == i) - ideal)
    for group in np.unique(groups):
        assert len(np.unique(folds[groups == group])) == 1
    never_straddles(groups, lkf.split(X, y, groups))

    groups = NAMES
    n_samples = len(groups)
    tolerance = 0.05 * n_samples
    ideal = n_samples // n_splits
    X = y = np.ones(n_samples)
    folds = np.zeros(n_samples)
    for i, (_, test) in enumerate(lkf.split(X, y, groups)):
        folds[test] = i
    # scikit-learn checks sizes only without shuffling; depgraph's shuffle keeps them balanced
    for i in np.unique(folds):
        assert tolerance >= abs(sum(folds == i) - ideal)
    for group in np.unique(groups):
        assert len(np.unique(folds[groups == group])) == 1
    never_straddles(groups, lkf.split(X, y, groups))
    # groups can also be a list (a new instance, for a reproducible shuffle)
    lkf_copy = cls(n_splits=n_splits, shuffle=shuffle, random_state=random_state)
    assert_equal_splits(lkf_copy.split(X, y, groups), lkf.split(X, y, groups.tolist()))
    # more folds than groups
    groups = np.array([1, 1, 1, 2, 2])
    X = y = np.ones(len(groups))
    with pytest.raises(ValueError, match="n_splits=3 needs at least 3 groups; groups holds 2") as err:
        next(cls(n_splits=3).split(X, y, groups))
    assert err.value.code == "too_few_groups"


@pytest.mark.parametrize("cls", SPLITTERS)
def test_random_state_shuffle_false(cls):
    with pytest.raises(ValueError, match="has no effect since shuffle is False"):
        cls(3, shuffle=False, random_state=0)


@pytest.mark.parametrize(
    "cv, expected",
    [
        (GroupKFold(), True),
        (GroupKFold(shuffle=True, random_state=123), True),
        (StratifiedGroupKFold(), True),
        (StratifiedGroupKFold(shuffle=True, random_state=123), True),
        (GroupKFold(shuffle=True, random_state=None), False),
        (GroupKFold(shuffle=True, random_state=np.random.RandomState(0)), False),
        (StratifiedGroupKFold(shuffle=True, random_state=None), False),
        (StratifiedGroupKFold(shuffle=True, random_state=np.random.RandomState(0)), False),
    ],
    ids=lambda value: re.sub(r" at 0x[0-9A-Fa-f]+", "", " ".join(str(value).split())),  # no address: one id per run
)
def test_yields_constant_splits(cv, expected):
    assert _yields_constant_splits(cv) == expected  # what scikit-learn concludes from the parameters
    X = np.ones(60)
    y = np.arange(60) % 3
    groups = np.arange(60) // 2
    again = [list(cv.split(X, y, groups)) for _ in range(3)]
    same = all(all(np.array_equal(a[1], b[1]) for a, b in zip(again[0], other, strict=True)) for other in again[1:])
    assert same == expected  # and what the splitter does


@pytest.mark.parametrize("cv", [GroupKFold(), StratifiedGroupKFold()], ids=str)
def test_splitter_get_metadata_routing(cv):
    routing = cv.get_metadata_routing()
    assert routing.split.requests["groups"] is True
    assert routing._serialize() == {"split": {"groups": True}}  # nothing else requested


@pytest.mark.parametrize("cv", [GroupKFold(), StratifiedGroupKFold()], ids=str)
def test_splitter_set_split_request(cv):
    assert hasattr(cv, "set_split_request")
    with sklearn.config_context(enable_metadata_routing=True):
        assert cv.set_split_request(groups=True) is cv


def test_stratified_splitter_without_y():
    with pytest.raises(ValueError, match="stratifies on y") as err:
        StratifiedGroupKFold().split(np.ones(10), groups=np.arange(10))
    assert err.value.code == "invalid_argument"


def test_check_cv():
    X = np.ones(9)
    y_binary = np.array([0, 1, 0, 1, 0, 0, 1, 1, 1])
    groups = np.array([0, 0, 1, 1, 2, 2, 3, 3, 4])
    for cv in (GroupKFold(3), StratifiedGroupKFold(3)):
        checked = check_cv(cv, y_binary, classifier=True)
        assert checked is cv  # a splitter object passes unchanged
        assert_equal_splits(checked.split(X, y_binary, groups), cv.split(X, y_binary, groups))
    msg = "Expected `cv` as an integer, a cross-validation object"
    with pytest.raises(ValueError, match=msg):
        check_cv(cv="lolo")


def test_nested_cv():
    rng = np.random.RandomState(0)
    X, y = make_classification(n_samples=15, n_classes=2, random_state=0)
    groups = rng.randint(0, 5, 15)
    cvs = [
        LeaveOneGroupOut(),
        StratifiedKFold(n_splits=2),
        LeaveOneOut(),
        GroupKFold(n_splits=3),
        StratifiedKFold(),
        StratifiedGroupKFold(n_splits=3),
        StratifiedShuffleSplit(n_splits=3, random_state=0),
    ]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # too few members per class in the inner folds: as in scikit-learn
        for inner_cv, outer_cv in combinations_with_replacement(cvs, 2):
            if not {type(inner_cv), type(outer_cv)} & set(SPLITTERS):
                continue
            gs = GridSearchCV(
                DummyClassifier(),
                param_grid={"strategy": ["stratified", "most_frequent"]},
                cv=inner_cv,
                error_score="raise",
            )
            cross_val_score(gs, X=X, y=y, groups=groups, cv=outer_cv, params={"groups": groups})


# --------------------------------------------------------------------------- where scikit-learn shows its own folds
def test_docstring_examples_are_balanced_no_worse_than_scikit_learn():
    X = np.ones((17, 2))
    y = np.array([0, 0, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0])
    groups = np.array([1, 1, 2, 2, 3, 3, 3, 4, 5, 5, 5, 5, 6, 6, 7, 8, 8])
    ours = folds_of(StratifiedGroupKFold(3), X, y, groups)
    theirs = folds_of(SkStratifiedGroupKFold(3), X, y, groups)
    (share, spread), (sk_share, sk_spread) = balance(y, ours, 3), balance(y, theirs, 3)
    assert share <= sk_share and spread <= sk_spread
    X = np.ones((6, 2))
    y = np.arange(6)
    groups = np.array([0, 0, 2, 2, 3, 3])
    ours = folds_of(GroupKFold(2), X, y, groups)
    theirs = folds_of(SkGroupKFold(2), X, y, groups)
    assert balance(y, ours, 2)[1] <= balance(y, theirs, 2)[1]


def _cohort(seed: int) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    sizes = rng.choice([1, 1, 2, 3, 5, 8], int(rng.integers(30, 120)))
    groups = np.repeat(np.arange(len(sizes)), sizes)
    base = rng.choice(3, len(sizes), p=[0.6, 0.3, 0.1])
    y = np.where(rng.random(len(groups)) < 0.2, rng.choice(3, len(groups), p=[0.6, 0.3, 0.1]), base[groups])
    return y, groups


@pytest.mark.parametrize("seed", range(12))
def test_fold_sizes_are_never_less_even_than_scikit_learns(seed):
    y, groups = _cohort(seed)
    X = np.zeros((len(y), 1))
    for ours, theirs in (
        (GroupKFold(5), SkGroupKFold(5)),
        (GroupKFold(5, shuffle=True, random_state=seed), SkGroupKFold(5, shuffle=True, random_state=seed)),
    ):
        assert balance(y, folds_of(ours, X, y, groups), 5)[1] <= balance(y, folds_of(theirs, X, y, groups), 5)[1]


# --------------------------------------------------------------------------- routing: every estimator taking cv
class Recording:
    """Mixed into a splitter: remembers the groups of every split call and the splits it gave."""

    calls: list = []  # noqa: RUF012 - one log shared by every copy an estimator makes

    def split(self, X, y=None, groups=None):
        splits = list(super().split(X, y, groups))
        Recording.calls.append((None if groups is None else np.asarray(groups).copy(), len(X), splits))
        return iter(splits)


class RecordingGroupKFold(Recording, GroupKFold):
    pass


class RecordingStratifiedGroupKFold(Recording, StratifiedGroupKFold):
    pass


rng = np.random.RandomState(42)
N = 120
X_ = rng.rand(N, 4)
GROUPS = np.repeat(np.arange(30), 4)
Y_CLASS = (GROUPS % 3 == 0).astype(int) ^ (rng.rand(N) < 0.1)
Y_REG = X_ @ np.array([1.0, -2.0, 0.5, 0.0]) + rng.normal(scale=0.1, size=N)
Y_MULTI = np.column_stack([Y_REG, -Y_REG])

# The estimators that take cv and route groups to its split, as listed in scikit-learn's
# sklearn/tests/test_metaestimators_metadata_routing.py (METAESTIMATORS entries with cv_name).
CV_ESTIMATORS = {
    "LogisticRegressionCV": (lambda cv: LogisticRegressionCV(cv=cv, Cs=2), "class"),
    "GridSearchCV": (lambda cv: GridSearchCV(LogisticRegression(), {"C": [0.1, 1.0]}, cv=cv), "class"),
    "RandomizedSearchCV": (
        lambda cv: RandomizedSearchCV(LogisticRegression(), {"C": [0.1, 1.0]}, n_iter=2, cv=cv, random_state=0),
        "class",
    ),
    "HalvingGridSearchCV": (
        lambda cv: HalvingGridSearchCV(LogisticRegression(), {"C": [0.1, 1.0]}, cv=cv, min_resources=40),
        "class",
    ),
    "HalvingRandomSearchCV": (
        lambda cv: HalvingRandomSearchCV(
            LogisticRegression(), {"C": [0.1, 1.0]}, cv=cv, min_resources=40, random_state=0
        ),
        "class",
    ),
    "TunedThresholdClassifierCV": (lambda cv: TunedThresholdClassifierCV(LogisticRegression(), cv=cv), "class"),
    "CalibratedClassifierCV": (lambda cv: CalibratedClassifierCV(LogisticRegression(), cv=cv), "class"),
    "RidgeClassifierCV": (lambda cv: RidgeClassifierCV(cv=cv), "class"),
    "SequentialFeatureSelector": (
        lambda cv: SequentialFeatureSelector(LogisticRegression(), n_features_to_select=2, cv=cv),
        "class",
    ),
    "RFECV": (lambda cv: RFECV(LogisticRegression(), cv=cv), "class"),
    "TargetEncoder": (lambda cv: TargetEncoder(cv=cv), "class"),
    "OrthogonalMatchingPursuitCV": (lambda cv: OrthogonalMatchingPursuitCV(cv=cv), "reg"),
    "ElasticNetCV": (lambda cv: ElasticNetCV(cv=cv, alphas=3), "reg"),
    "LassoCV": (lambda cv: LassoCV(cv=cv, alphas=3), "reg"),
    "LarsCV": (lambda cv: LarsCV(cv=cv), "reg"),
    "LassoLarsCV": (lambda cv: LassoLarsCV(cv=cv), "reg"),
    "RidgeCV": (lambda cv: RidgeCV(cv=cv), "reg"),
    "MultiTaskElasticNetCV": (lambda cv: MultiTaskElasticNetCV(cv=cv, alphas=3), "multi"),
    "MultiTaskLassoCV": (lambda cv: MultiTaskLassoCV(cv=cv, alphas=3), "multi"),
    "GraphicalLassoCV": (lambda cv: GraphicalLassoCV(cv=cv, alphas=2), "none"),
}


@pytest.mark.parametrize("name", sorted(CV_ESTIMATORS))
def test_groups_are_routed_to_the_splitter_of_every_estimator_taking_cv(name):
    make, target = CV_ESTIMATORS[name]
    y = {"class": Y_CLASS, "reg": Y_REG, "multi": Y_MULTI, "none": None}[target]
    splitters = [RecordingGroupKFold(3)] + ([RecordingStratifiedGroupKFold(3)] if target == "class" else [])
    for cv in splitters:
        Recording.calls = []
        estimator = make(cv)
        with sklearn.config_context(enable_metadata_routing=True), warnings.catch_warnings():
            warnings.simplefilter("ignore")  # convergence warnings of tiny fits
            if isinstance(estimator, TargetEncoder):
                estimator.fit_transform(X_, y, groups=GROUPS)
            else:
                estimator.fit(X_, y, groups=GROUPS)
        assert Recording.calls, "the splitter was never called"
        for groups, n_rows, splits in Recording.calls:
            assert groups is not None and len(groups) == n_rows
            assert len(splits) == 3
            never_straddles(groups, splits)
            check_cv_coverage_of(splits, n_rows)


def check_cv_coverage_of(splits, n_rows):
    tested = np.concatenate([test for _, test in splits])
    assert sorted(tested) == list(range(n_rows))  # every row tested exactly once


def test_routing_disabled_a_splitter_still_gets_groups_from_grid_search():
    Recording.calls = []
    GridSearchCV(LogisticRegression(), {"C": [0.1, 1.0]}, cv=RecordingStratifiedGroupKFold(4)).fit(
        X_, Y_CLASS, groups=GROUPS
    )
    assert Recording.calls and all(np.array_equal(g, GROUPS) for g, _, _ in Recording.calls)


def test_without_groups_an_estimator_fails_by_name():
    with pytest.raises(ValueError, match="GroupKFold needs groups=") as err:
        GridSearchCV(LogisticRegression(), {"C": [1.0]}, cv=GroupKFold(3)).fit(X_, Y_CLASS)
    assert err.value.code == "invalid_argument"


# --------------------------------------------------------------------------- the validation functions
VALIDATION = {
    "cross_validate": lambda est, cv, kw: cross_validate(est, X_, Y_CLASS, cv=cv, **kw),
    "cross_val_score": lambda est, cv, kw: cross_val_score(est, X_, Y_CLASS, cv=cv, **kw),
    "cross_val_predict": lambda est, cv, kw: cross_val_predict(est, X_, Y_CLASS, cv=cv, **kw),
    "learning_curve": lambda est, cv, kw: learning_curve(est, X_, Y_CLASS, cv=cv, train_sizes=[0.5, 1.0], **kw),
    "validation_curve": lambda est, cv, kw: validation_curve(
        est, X_, Y_CLASS, param_name="C", param_range=[0.1, 1.0], cv=cv, **kw
    ),
    "permutation_test_score": lambda est, cv, kw: permutation_test_score(
        est, X_, Y_CLASS, cv=cv, n_permutations=3, random_state=0, **kw
    ),
}


@pytest.mark.parametrize("routing", [False, True], ids=["groups=", "params={'groups'}"])
@pytest.mark.parametrize("function", sorted(VALIDATION))
@pytest.mark.parametrize("splitter", [RecordingGroupKFold, RecordingStratifiedGroupKFold])
def test_validation_functions(function, routing, splitter):
    Recording.calls = []
    kw = {"params": {"groups": GROUPS}} if routing else {"groups": GROUPS}
    with sklearn.config_context(enable_metadata_routing=routing):
        result = VALIDATION[function](LogisticRegression(), splitter(4), kw)
    assert Recording.calls
    for groups, n_rows, splits in Recording.calls:
        assert np.array_equal(groups, GROUPS) and n_rows == N
        never_straddles(groups, splits)
        check_cv_coverage_of(splits, n_rows)
    if function == "cross_val_predict":
        assert result.shape == (N,)  # a partition: every sample predicted once
    if function == "cross_validate":
        assert len(result["test_score"]) == 4


def test_nested_cv_with_routing_gives_the_inner_splitter_only_outer_training_groups():
    Recording.calls = []
    with sklearn.config_context(enable_metadata_routing=True):
        inner = GridSearchCV(LogisticRegression(), {"C": [0.1, 1.0]}, cv=RecordingGroupKFold(3))
        result = cross_validate(
            inner, X_, Y_CLASS, cv=RecordingStratifiedGroupKFold(4), params={"groups": GROUPS}, return_indices=True
        )
    outer_trains = [set(GROUPS[train]) for train in result["indices"]["train"]]
    inner_calls = [groups for groups, n_rows, _ in Recording.calls if n_rows < N]
    assert len(inner_calls) == 4
    for groups, outer_train in zip(inner_calls, outer_trains, strict=True):
        assert set(groups) == outer_train  # the inner folds split the outer training groups only
    for groups, _, splits in Recording.calls:
        never_straddles(groups, splits)


@pytest.mark.slow  # starts joblib worker processes: ~10 s; CI runs it (--slow)
def test_a_refusal_inside_a_joblib_worker_comes_back_whole():
    # 4 outer folds of 30 groups leave ~22 groups per inner fit: 25 inner folds are refused in the worker
    inner = GridSearchCV(LogisticRegression(), {"C": [1.0]}, cv=GroupKFold(25), error_score="raise")
    with pytest.raises(DepgraphError) as err:
        cross_validate(inner, X_, Y_CLASS, cv=GroupKFold(4), groups=GROUPS, params={"groups": GROUPS},
                       n_jobs=2, error_score="raise")  # fmt: skip
    assert err.value.code == "too_few_groups" and "n_splits=25 needs at least 25 groups" in err.value.message


# --------------------------------------------------------------------------- one assignment, two faces
def test_group_kfold_gives_the_folds_of_the_group_kfold_scheme():
    y, groups = _cohort(3)
    labels = np.array([f"G{g:03d}" for g in groups], dtype=object)
    spec = SplitSpec.build(
        pd.DataFrame({"sample_id": [f"S{i:04d}" for i in range(len(labels))], "group_id": labels}),
        constraint=Constraint(mode="subject"),
        recommended_resampling="grouped_cv",
    )
    planned = [sorted(s.test) for s in GroupedKFold(n_splits=5, seed=11).splits(spec)]
    ours = [sorted(t) for _, t in GroupKFold(5, shuffle=True, random_state=11).split(np.zeros(len(y)), y, labels)]
    assert ours == planned
    # shuffle=False is seed 0
    planned = [sorted(s.test) for s in GroupedKFold(n_splits=5, seed=0).splits(spec)]
    assert [sorted(t) for _, t in GroupKFold(5).split(np.zeros(len(y)), y, labels)] == planned


def test_labels_count_not_their_container():
    X = np.zeros(8)
    y = np.array([0, 1, 0, 1, 1, 0, 1, 0])
    labels = np.array(["b", "b", "a", "a", "c", "c", "d", "d"], dtype=object)
    expected = [t.tolist() for _, t in StratifiedGroupKFold(2).split(X, y, labels)]
    variants = [
        pd.Series(pd.Categorical(labels, categories=["d", "c", "b", "a"]), index=range(10, 18)),
        labels.tolist(),
        labels.astype(str),
    ]
    for groups in variants:
        assert [t.tolist() for _, t in StratifiedGroupKFold(2).split(X, y, groups)] == expected
    for classes in (y.astype(object), y.astype(float), y.reshape(-1, 1), pd.Series(y).astype("category")):
        assert [t.tolist() for _, t in StratifiedGroupKFold(2).split(X, classes, labels)] == expected
    with pytest.raises(ValueError, match="continuous"):  # numbers held as objects are still numbers
        list(StratifiedGroupKFold(2).split(X, (y + 0.5).astype(object), labels))


def test_without_scikit_learn_the_error_names_the_extra():
    code = (
        "import sys; sys.modules['sklearn'] = None\n"
        "import depgraph\n"
        "try:\n    from depgraph import StratifiedGroupKFold\n"
        "except ImportError as exc:\n    print(type(exc).__name__, exc)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=REPO, check=True).stdout
    assert out.strip() == (
        "ModuleNotFoundError depgraph.StratifiedGroupKFold needs scikit-learn: pip install 'depgraph[sklearn]'"
    )


def test_exported_from_depgraph():
    assert depgraph.GroupKFold is GroupKFold and depgraph.StratifiedGroupKFold is StratifiedGroupKFold
    assert depgraph.GroupKFold is not GroupedKFold  # the scheme plans folds into a spec; the splitter splits arrays


# --------------------------------------------------------------------------- properties
@st.composite
def grouped_data(draw):
    n_groups = draw(st.integers(2, 25))
    sizes = draw(st.lists(st.integers(1, 6), min_size=n_groups, max_size=n_groups))
    groups = np.repeat(np.arange(n_groups), sizes)
    y = np.array(draw(st.lists(st.integers(0, 2), min_size=len(groups), max_size=len(groups))))
    if len(np.unique(y)) == 1:
        y[0] = 1 - y[0] if y[0] < 2 else 0
    order = np.array(draw(st.permutations(range(len(groups)))))
    k = draw(st.integers(2, min(n_groups, 6)))
    shuffle = draw(st.booleans())
    random_state = draw(st.one_of(st.none(), st.integers(0, 2**32 - 1))) if shuffle else None
    names = draw(st.booleans())
    labels = np.array([f"g{g}" for g in groups], dtype=object) if names else groups
    return labels[order], y[order], k, shuffle, random_state


@settings(max_examples=60, deadline=None)
@given(data=grouped_data(), stratified=st.booleans())
def test_no_group_is_ever_on_both_sides(data, stratified):
    groups, y, k, shuffle, random_state = data
    cls = StratifiedGroupKFold if stratified else GroupKFold
    cv = cls(k, shuffle=shuffle, random_state=random_state)
    X = np.zeros((len(groups), 2))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DepgraphWarning)
        try:
            splits = list(cv.split(X, y, groups))
        except DepgraphError as err:  # every class smaller than k: refused, as scikit-learn does
            assert stratified and err.code == "too_few_groups"
            assert (np.bincount(np.unique(y, return_inverse=True)[1]) < k).all()
            return
    assert len(splits) == k
    tested = np.concatenate([test for _, test in splits])
    assert sorted(tested) == list(range(len(groups)))  # each sample tested exactly once
    for train, test in splits:
        assert len(test) and len(train)
        check_valid_split(train, test, len(groups))
        assert not set(groups[train]) & set(groups[test])


@settings(max_examples=40, deadline=None)
@given(data=grouped_data(), stratified=st.booleans(), relabel=st.permutations(["control", "case", "unknown"]))
def test_neither_row_order_nor_class_labels_change_which_groups_go_together(data, stratified, relabel):
    groups, y, k, shuffle, _ = data
    cls = StratifiedGroupKFold if stratified else GroupKFold
    cv = cls(k, shuffle=shuffle, random_state=5 if shuffle else None)
    X = np.zeros(len(groups))

    def plan(groups, y):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", DepgraphWarning)
            try:
                return [frozenset(groups[test].tolist()) for _, test in cv.split(X, y, groups)]
            except DepgraphError:
                return None

    base = plan(groups, y)
    reverse = np.arange(len(groups))[::-1]
    assert plan(groups[reverse], y[reverse]) == base
    relabelled = np.array([relabel[c] for c in y], dtype=object)
    assert plan(groups, relabelled) == base
