"""scikit-learn: the spec's folds as a cross-validator that finds each row by sample id.

:class:`SpecCV` reads the fold plan a spec carries. Rows are matched to the spec
by sample id, never by position, so the folds stay right when a model sees a
subset of the rows — inside ``GridSearchCV`` nested in ``cross_validate``, the
inner loop gets the outer training rows and :class:`SpecCV` gives it the
splits of the same plan restricted to them (splits that test none of those rows
are skipped). Sample ids come, in this order of preference, from ``groups``
(passed directly or through metadata routing: :class:`SpecCV` requests
``groups``), from the index of a pandas ``X``, or from ``ids`` given up front.

For scikit-learn's own group splitters use :func:`groups_for`; for a single
k-fold repeat as a ``PredefinedSplit`` use :func:`to_predefined_split`.

Without a spec, :class:`GroupKFold` and :class:`StratifiedGroupKFold` are
drop-in replacements for scikit-learn's splitters of the same names: they take
``groups=`` the same way and assign whole groups with depgraph's balanced
assignment (the one behind the ``group-kfold`` and ``stratified-group-kfold``
fold schemes), so ``cv=StratifiedGroupKFold(5)`` becomes
``cv=depgraph.StratifiedGroupKFold(5)``.

>>> import numpy as np, pandas as pd
>>> from depgraph.spec.model import Constraint, SplitSpec
>>> from depgraph.folds.schemes import assign_folds
>>> spec = SplitSpec.build(pd.DataFrame({"sample_id": list("abcdef"), "group_id": list("aabbcc")}),
...                        constraint=Constraint(mode="subject"), recommended_resampling="grouped_cv")
>>> spec = assign_folds(spec, "group-kfold", n_splits=3)
>>> X = pd.DataFrame({"x": range(6)}, index=list("fedcba"))
>>> [sorted(X.index[test]) for _, test in SpecCV(spec).split(X)]
[['e', 'f'], ['a', 'b'], ['c', 'd']]
"""

from __future__ import annotations

import numbers
import warnings
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Any, ClassVar

import numpy as np
import pandas as pd

from depgraph.audit.evaluation import EvaluationReport, block_column, positive_label
from depgraph.audit.evaluation import evaluate as evaluate_predictions
from depgraph.common.arguments import in_order, instance
from depgraph.errors import DepgraphError, DepgraphWarning, describe_ids, missing_extra
from depgraph.folds.schemes import MAX_SEED, check_seed, kfold_of_samples
from depgraph.spec.model import SplitSpec

try:  # the sklearn extra: without it, say which extra to install rather than "No module named 'sklearn'"
    from sklearn.model_selection import BaseCrossValidator, PredefinedSplit
    from sklearn.model_selection import GroupShuffleSplit as SkGroupShuffleSplit
    from sklearn.model_selection import LeaveOneGroupOut as SkLeaveOneGroupOut
    from sklearn.model_selection import LeavePGroupsOut as SkLeavePGroupsOut
    from sklearn.model_selection._split import (
        GroupsConsumerMixin,  # what scikit-learn's group splitters use
        _RepeatedSplits,  # what its Repeated*KFold are made of
    )
    from sklearn.utils import check_random_state
except ModuleNotFoundError as exc:
    raise missing_extra(__name__, "sklearn", exc) from None


class SpecCV(GroupsConsumerMixin, BaseCrossValidator):
    """Cross-validator yielding the spec's folds for the rows it is given.

    Guarantee: for every split, the training rows and the test rows never share
    a spec group, for any subset of the spec's samples (excluded samples are in
    neither). With all samples, the splits are exactly the plan's.

    Parameters
    ----------
    spec:
        A split spec carrying folds (``depgraph folds`` / :func:`~depgraph.folds.schemes.assign_folds`).
    ids:
        Sample ids of the rows, when neither ``groups`` nor a DataFrame index carries them.
    repeat:
        Use only the splits of this repeat (default: all splits, all repeats).
    """

    def __init__(self, spec: SplitSpec, ids: Sequence[str] | None = None, repeat: int | None = None) -> None:
        instance(spec, SplitSpec, "SpecCV: the spec")
        spec.require_folds()
        if ids is not None:
            in_order(ids, "SpecCV: ids=")
        if repeat is not None:
            _check_repeat(spec, repeat)
        self.spec = spec
        self.ids = ids
        self.repeat = repeat

    def _positions(self, X: Any, groups: Any) -> np.ndarray:
        row_numbers = isinstance(X, (pd.DataFrame, pd.Series)) and isinstance(X.index, pd.RangeIndex)
        if groups is not None:
            ids = groups
            what = "groups"
        elif isinstance(X, (pd.DataFrame, pd.Series)) and not (row_numbers and self.ids is not None):
            ids = X.index.to_numpy(dtype=object)
            what = "the rows of X (its index)"
        elif self.ids is not None:
            ids = self.ids
            what = "ids="
            if X is not None and len(ids) != len(X):
                raise DepgraphError(
                    "invalid_argument",
                    f"ids= names {len(ids)} rows but X has {len(X)}; inside nested CV pass ids as groups instead",
                )
        else:
            raise DepgraphError(
                "invalid_argument",
                "SpecCV needs each row's sample id: pass groups=sample_ids, a DataFrame indexed by sample id, or ids=",
            )
        try:
            return self.spec.positions(ids, f"SpecCV: {what}")
        except DepgraphError as error:
            if error.code != "reference":
                raise
            # the habits of GroupKFold users (group labels, row numbers) get a hint on what SpecCV reads
            unknown = np.asarray(error.details["ids"], dtype=object)
            hint = _not_sample_ids_hint(self.spec, X, groups, unknown, error.details["rows"] == len(ids))
            raise DepgraphError("reference", error.message + hint, **error.details) from None

    def _splits(self):
        return [s for s in self.spec.folds.splits if self.repeat is None or s.repeat == self.repeat]

    def split(self, X: Any = None, y: Any = None, groups: Any = None) -> Iterator[tuple[np.ndarray, np.ndarray]]:
        """Yield ``(train_rows, test_rows)`` for every split that tests at least one of the rows."""
        positions = self._positions(X, groups)
        n = self.spec.n_samples
        for split in self._splits():
            role = split.roles(n)[positions]
            test = np.flatnonzero(role == 1)
            if len(test) == 0:
                continue
            yield np.flatnonzero(role == 0), test

    def get_n_splits(self, X: Any = None, y: Any = None, groups: Any = None) -> int:
        """The number of splits :meth:`split` yields for these rows (all plan splits without rows)."""
        if X is None and groups is None:
            return len(self._splits())
        return sum(1 for _ in self.split(X, y, groups))

    def _iter_test_indices(self, X=None, y=None, groups=None):  # pragma: no cover - split() is overridden
        raise NotImplementedError


def _not_sample_ids_hint(spec: SplitSpec, X: Any, groups: Any, unknown: np.ndarray, none_known: bool) -> str:
    """What to do when SpecCV's rows do not carry sample ids (the habits of GroupKFold users)."""
    if isinstance(X, pd.DataFrame) and "sample_id" in X.columns:
        index_by = "X.set_index('sample_id')"
    else:
        index_by = "index X by sample id (X.set_index(<sample id column>))"
    if groups is not None:
        if not none_known:  # some rows are found: a subset or a typo, not a habit
            return ""
        group_ids = pd.Index(spec.group_ids)
        text = pd.Index(unknown.astype(str))
        theirs = text.isin(group_ids) | text.isin(group_ids.str.split(":", n=1).str[-1])  # subject:P01 or P01
        what = "name the spec's groups" if theirs.all() else "are not sample ids of the spec"
        return (
            f"; groups= takes each row's sample id, but these {what} (SpecCV reads each sample's group from the "
            f"spec): pass the sample ids as groups=, or leave groups out and {index_by}, or use SpecCV(spec, ids=...)"
        )
    if isinstance(X, (pd.DataFrame, pd.Series)) and (isinstance(X.index, pd.RangeIndex) or none_known):
        what = "row numbers (a RangeIndex)" if isinstance(X.index, pd.RangeIndex) else "no sample id of the spec"
        return f"; X's index holds {what}, not sample ids: {index_by}, or pass groups=sample_ids or ids="
    return ""


def groups_for(spec: SplitSpec, ids: Sequence[str]) -> np.ndarray:
    """Integer group codes of the given sample ids, for any scikit-learn group splitter: the codes of
    :meth:`SplitSpec.group_codes`, found by :meth:`SplitSpec.positions` (``1``, ``1.0`` and ``"1"`` name ``"1"``).

    >>> import pandas as pd
    >>> from depgraph.spec.model import Constraint, SplitSpec
    >>> spec = SplitSpec.build(pd.DataFrame({"sample_id": ["s1", "s2", "s3"], "group_id": ["g2", "g1", "g2"]}),
    ...                        constraint=Constraint(mode="subject"), recommended_resampling="grouped_cv")
    >>> groups_for(spec, ["s3", "s1", "s2"]).tolist()
    [1, 1, 0]
    """
    instance(spec, SplitSpec, "groups_for: the spec")
    return spec.group_codes()[spec.positions(ids, "groups_for: ids")]


def to_predefined_split(spec: SplitSpec, ids: Sequence[str], repeat: int = 0) -> PredefinedSplit:
    """One repeat of a k-fold plan as scikit-learn's ``PredefinedSplit`` over the given rows.

    Only plans in which every sample is tested once per repeat and none is
    excluded fit that shape; others raise ``invalid_argument``.
    """
    instance(spec, SplitSpec, "to_predefined_split: the spec")
    plan = spec.require_folds()
    _check_repeat(spec, repeat)
    splits = [s for s in plan.splits if s.repeat == repeat]
    n = spec.n_samples
    test_fold = np.full(n, -1, dtype=np.int64)
    for split in splits:
        if split.n_excluded or (test_fold[split.test] >= 0).any():
            raise DepgraphError(
                "invalid_argument",
                f"the {plan.scheme} plan excludes samples or tests one twice; PredefinedSplit cannot express it "
                "(use SpecCV)",
            )
        test_fold[split.test] = split.fold
    return PredefinedSplit(test_fold[spec.positions(ids, "to_predefined_split: ids")])


# --------------------------------------------------------------------------- drop-in splitters
class _Cloneable:
    """``sklearn.base.clone`` of a drop-in: a new splitter built from the constructor's parameters (scikit-learn's
    ``__sklearn_clone__`` protocol). The drop-ins have no ``get_params``/``set_params``, as scikit-learn's splitters
    have none: an estimator taking ``cv=`` would list the splitter's parameters among its own (``cv__n_splits``), and
    ``LassoCV``, ``ElasticNetCV`` and their multi-task kin hand their own parameters to the path they fit, which then
    refuses those."""

    def __sklearn_clone__(self) -> Any:
        held = getattr(self, "cvargs", {})  # a repeated splitter keeps its splitter's parameters there
        params = {name: held[name] if name in held else getattr(self, name) for name in _parameter_names(type(self))}
        return type(self)(**params)


def _check_n_splits(k: Any, name: str) -> None:
    """``n_splits`` of a k-fold splitter named ``name``: an integer of at least 2."""
    if isinstance(k, bool) or not isinstance(k, numbers.Integral):
        raise DepgraphError("invalid_argument", f"{name}: n_splits must be an integer of at least 2, not {k!r}")
    if k < 2:
        raise DepgraphError("invalid_argument", f"{name}: k-fold cross-validation needs n_splits=2 or more, not {k}")


def _parameter_names(cls: type) -> list[str]:
    """The constructor's named parameters, in order (as scikit-learn's ``BaseEstimator`` finds them)."""
    import inspect

    kinds = (inspect.Parameter.VAR_POSITIONAL, inspect.Parameter.VAR_KEYWORD)
    signature = inspect.signature(cls.__init__)  # type: ignore[misc]
    return [p.name for p in signature.parameters.values() if p.name != "self" and p.kind not in kinds]


class _BalancedGroupSplitter(_Cloneable, GroupsConsumerMixin, BaseCrossValidator):
    """What GroupKFold and StratifiedGroupKFold share: parameters, groups, the k folds."""

    _stratified: ClassVar[bool] = False

    def __init__(self, n_splits: int = 5, *, shuffle: bool = False, random_state: Any = None) -> None:
        self.n_splits = n_splits
        self.shuffle = shuffle
        self.random_state = random_state
        self._check_parameters()
        self.n_splits = int(n_splits)  # as scikit-learn keeps it (np.int64(5) -> 5)

    def _check_parameters(self) -> None:
        name = type(self).__name__
        _check_n_splits(self.n_splits, name)
        if not isinstance(self.shuffle, (bool, np.bool_)):
            raise DepgraphError("invalid_argument", f"{name}: shuffle must be True or False, not {self.shuffle!r}")
        state = self.random_state
        if state is None:
            return
        if not self.shuffle:
            raise DepgraphError(
                "invalid_argument",
                f"{name}: random_state={state!r} has no effect since shuffle is False: leave random_state to its "
                "default (None), or set shuffle=True",
            )
        if isinstance(state, bool) or not isinstance(state, (numbers.Integral, np.random.RandomState)):
            raise DepgraphError(
                "invalid_argument",
                f"{name}: random_state must be None, an integer in 0..{MAX_SEED} or a numpy.random.RandomState, "
                f"not {state!r}",
            )
        if isinstance(state, numbers.Integral) and not 0 <= state <= MAX_SEED:
            raise DepgraphError(
                "invalid_argument", f"{name}: random_state must be an integer in 0..{MAX_SEED}, not {state!r}"
            )

    def _seed(self) -> int:
        """The seed of depgraph's assignment: 0 without shuffling, random_state with an int, else drawn
        from the RandomState (or numpy's global one), so each call to split draws again, as in scikit-learn."""
        if not self.shuffle:
            return 0
        if isinstance(self.random_state, numbers.Integral):
            return int(self.random_state)
        return int(check_random_state(self.random_state).randint(0, MAX_SEED + 1, dtype=np.int64))

    def split(self, X: Any, y: Any = None, groups: Any = None) -> Iterator[tuple[np.ndarray, np.ndarray]]:
        """Yield ``(train, test)`` row positions for each of the ``n_splits`` folds.

        Parameters
        ----------
        X: the samples (array-like, sparse matrix or DataFrame; only its length is used).
        y: class labels (StratifiedGroupKFold stratifies on them; GroupKFold ignores them).
        groups: the group of every sample (subject, family, site…): required. Each group is
            tested in exactly one fold and never trained on in that fold.

        Arguments are checked when ``split`` is called, not when its first split is drawn.
        """
        self._check_parameters()
        n = _n_samples(X, groups)
        codes, n_groups = _group_codes(groups, n, type(self).__name__)
        if y is not None and np.ndim(y) and np.shape(y)[0] != n:  # as scikit-learn's indexable(X, y, groups)
            raise DepgraphError(
                "invalid_argument", f"{type(self).__name__}: y has {np.shape(y)[0]} rows but X has {n} samples"
            )
        if self.n_splits > n_groups:
            raise DepgraphError(
                "too_few_groups",
                f"{type(self).__name__}: n_splits={self.n_splits} needs at least {self.n_splits} groups; "
                f"groups holds {n_groups}",
                n_groups=n_groups,
                n_splits=int(self.n_splits),
            )
        strata = self._classes(y, n, codes, n_groups) if self._stratified else None
        fold = kfold_of_samples(codes, int(self.n_splits), self._seed(), strata)
        return ((np.flatnonzero(fold != f), np.flatnonzero(fold == f)) for f in range(int(self.n_splits)))

    def get_n_splits(self, X: Any = None, y: Any = None, groups: Any = None) -> int:
        """``n_splits`` (the arguments are ignored, as in scikit-learn)."""
        return int(self.n_splits)

    def _classes(self, y: Any, n: int, codes: np.ndarray, n_groups: int) -> np.ndarray:  # pragma: no cover
        raise NotImplementedError


class GroupKFold(_BalancedGroupSplitter):
    """scikit-learn's ``GroupKFold``, with depgraph's balanced assignment of whole groups.

    Guarantee: each group is tested in exactly one of the ``n_splits`` folds
    and is never on both sides of a split; fold sizes are balanced (largest
    groups first on the lightest fold, then groups moved or swapped between
    folds while that evens them). The folds depend only on the groups, never
    on the order of the rows.

    A drop-in for ``sklearn.model_selection.GroupKFold``: the same parameters,
    ``split(X, y=None, groups=...)`` with ``groups`` required, ``groups``
    requested through metadata routing. ``shuffle=False`` (default) gives one
    fixed plan; ``shuffle=True`` draws among equally balanced plans from
    ``random_state`` (an int reproduces it; a ``RandomState`` or ``None`` draws
    again at every ``split``). Bad arguments raise :class:`~depgraph.DepgraphError`,
    which is a ``ValueError``.

    This is the ``group-kfold`` fold scheme (:class:`depgraph.folds.schemes.GroupedKFold`)
    for data that has no spec: the scheme plans folds into a spec, shared and
    recorded; this splitter splits arrays in memory and records nothing. For
    string group labels, ``GroupKFold(k, shuffle=True, random_state=s)`` gives
    the folds ``GroupedKFold(n_splits=k, seed=s)`` plans for a spec with those
    groups.

    >>> import numpy as np
    >>> groups = np.array(["P1", "P1", "P2", "P3", "P3", "P3", "P4", "P4"])
    >>> cv = GroupKFold(n_splits=2)
    >>> [sorted(set(groups[test].tolist())) for _, test in cv.split(np.zeros((8, 1)), groups=groups)]
    [['P1', 'P4'], ['P2', 'P3']]
    """

    def __init__(self, n_splits: int = 5, *, shuffle: bool = False, random_state: Any = None) -> None:
        super().__init__(n_splits, shuffle=shuffle, random_state=random_state)


class StratifiedGroupKFold(_BalancedGroupSplitter):
    """scikit-learn's ``StratifiedGroupKFold``, with depgraph's balanced assignment of whole groups.

    Guarantee: as :class:`GroupKFold`, and each fold's share of every class
    of ``y`` is kept close to the whole's while fold sizes stay even (the two
    are balanced together: on 200 random cohorts in benchmarks/bench_folds.py
    class shares are closer on average, and fold sizes far more even, than
    with scikit-learn's ``StratifiedGroupKFold``). Relabelling the classes, or
    reordering the rows, never changes which groups are tested together.

    A drop-in for ``sklearn.model_selection.StratifiedGroupKFold`` (same
    parameters, ``split(X, y, groups)``); ``y`` (class labels: binary or
    multiclass, one column) is required, as are ``groups``. A class carried by
    fewer groups than ``n_splits`` cannot reach every fold: a
    ``few_groups_in_class`` :class:`~depgraph.DepgraphWarning` says so.

    This is the ``stratified-group-kfold`` fold scheme
    (:class:`depgraph.folds.schemes.StratifiedGroupedKFold`) for data that has no spec.

    >>> import numpy as np
    >>> y = np.array([1, 1, 0, 0, 0, 0, 1, 0, 0, 0, 1, 0])
    >>> groups = np.repeat(["A", "B", "C", "D", "E", "F"], 2)
    >>> cv = StratifiedGroupKFold(n_splits=2)
    >>> [(len(test), int(y[test].sum())) for _, test in cv.split(np.zeros((12, 1)), y, groups)]
    [(6, 2), (6, 2)]
    """

    _stratified: ClassVar[bool] = True

    def __init__(self, n_splits: int = 5, shuffle: bool = False, random_state: Any = None) -> None:
        super().__init__(n_splits, shuffle=shuffle, random_state=random_state)

    def _classes(self, y: Any, n: int, group_codes: np.ndarray, n_groups: int) -> np.ndarray:
        """A class code per sample, classes ordered by a rule blind to their labels and to row order."""
        name = type(self).__name__
        if y is None:
            raise DepgraphError(
                "invalid_argument", f"{name} stratifies on y: pass the class labels as y, or use depgraph.GroupKFold"
            )
        if np.ndim(y) == 2 and np.shape(y)[1] == 1:
            y = np.asarray(y)[:, 0]
        if np.ndim(y) != 1:
            raise DepgraphError(
                "invalid_argument",
                f"{name} stratifies on one column of class labels; y has shape {np.shape(y)} (multilabel or "
                "multi-output): pass the column to stratify on",
            )
        labels = _labels(y, n, "y", name)
        odd = labels[~np.isfinite(labels) | (labels != np.round(labels))] if labels.dtype.kind == "f" else []
        if len(odd):
            shown = describe_ids(pd.unique(odd)[:3])
            raise DepgraphError(
                "invalid_argument",
                f"{name} stratifies on class labels; y is continuous (values such as {shown}): bin it first, "
                "e.g. pd.qcut(y, 5, labels=False)",
            )
        codes, classes = pd.factorize(labels)
        per_group = np.bincount(group_codes * len(classes) + codes, minlength=n_groups * len(classes))
        per_group = per_group.reshape(n_groups, len(classes))
        sizes = per_group.sum(axis=0)
        # Larger classes first; equal sizes by how the class spreads over the (sorted) groups. Classes
        # that tie spread identically, so their order cannot matter: the plan is blind to the labels.
        order = sorted(range(len(classes)), key=lambda c: (-sizes[c], per_group[:, c].tobytes()))
        rank = np.empty(len(classes), dtype=np.int64)
        rank[order] = np.arange(len(classes))
        k = int(self.n_splits)
        if (sizes < k).all():
            raise DepgraphError(
                "too_few_groups",
                f"{name}: n_splits={k} is more than the samples of every class of y (largest: {sizes.max()}): "
                "no fold can be stratified; use fewer splits",
            )
        reach = (per_group > 0).sum(axis=0)
        if reach.min() < k:
            few = int(np.argmin(reach))
            warnings.warn(
                DepgraphWarning(
                    "few_groups_in_class",
                    f"{name}: the least populated class in y ({_plain(classes[few])!r}) is in only {reach[few]} "
                    f"group(s), fewer than n_splits={k}: some test folds will hold none of it",
                ),
                stacklevel=3,
            )
        return rank[codes]


class _CheckedGroups:
    """scikit-learn's splitter, its ``groups`` first checked as depgraph's own splitters check them (a missing group
    or a label of another kind is refused by name rather than made a group), then handed to scikit-learn unchanged:
    the splits, the messages and the parameters are scikit-learn's own."""

    def split(self, X: Any, y: Any = None, groups: Any = None) -> Iterator[tuple[np.ndarray, np.ndarray]]:
        """Yield ``(train, test)`` row positions as scikit-learn's splitter of this name does."""
        rows = X.shape[0] if hasattr(X, "shape") else len(X)
        if groups is not None and rows:  # no rows: scikit-learn's own message
            _group_codes(groups, _n_samples(X, groups), type(self).__name__)
        return super().split(X, y, groups)  # type: ignore[misc]


class GroupShuffleSplit(_Cloneable, _CheckedGroups, SkGroupShuffleSplit):
    """scikit-learn's ``GroupShuffleSplit`` (random train/test splits of whole groups, ``test_size`` a share of the
    groups), its groups checked by depgraph.

    Use it for repeated random holdouts of groups; for k folds that test every group once use :class:`GroupKFold`,
    and for a holdout balanced by samples and strata the ``holdout`` / ``balanced-holdout`` fold schemes.

    >>> [test.tolist() for _, test in GroupShuffleSplit(2, test_size=1, random_state=0).split(
    ...     range(6), groups=list("aabbcc"))]
    [[4, 5], [4, 5]]
    """


class LeaveOneGroupOut(_Cloneable, _CheckedGroups, SkLeaveOneGroupOut):
    """scikit-learn's ``LeaveOneGroupOut`` (one split per group, that group tested), its groups checked by depgraph.

    Use it when the groups are few and each is a unit of deployment (a site, a study); the ``logo`` fold scheme does
    the same on a spec's block column.

    >>> [test.tolist() for _, test in LeaveOneGroupOut().split(range(4), groups=["s1", "s2", "s1", "s2"])]
    [[0, 2], [1, 3]]
    """


class LeavePGroupsOut(_Cloneable, _CheckedGroups, SkLeavePGroupsOut):
    """scikit-learn's ``LeavePGroupsOut`` (every combination of ``n_groups`` groups tested once), its groups checked
    by depgraph. The number of splits grows as a binomial coefficient: for more than a few groups prefer
    :class:`GroupKFold`.

    >>> LeavePGroupsOut(n_groups=2).get_n_splits(groups=["a", "b", "c"])
    3
    """


class RepeatedStratifiedGroupKFold(_Cloneable, GroupsConsumerMixin, _RepeatedSplits):
    """:class:`StratifiedGroupKFold` repeated ``n_repeats`` times with different shuffles (scikit-learn has
    ``RepeatedStratifiedKFold`` but no grouped one): ``n_splits × n_repeats`` splits, each repeat testing every
    group once, the class balance kept in each fold, whole groups on one side. The parameters are
    ``RepeatedStratifiedKFold``'s.

    >>> cv = RepeatedStratifiedGroupKFold(n_splits=2, n_repeats=3, random_state=0)
    >>> cv, cv.get_n_splits()
    (RepeatedStratifiedGroupKFold(n_repeats=3, n_splits=2, random_state=0), 6)
    """

    def __init__(self, *, n_splits: int = 5, n_repeats: int = 10, random_state: Any = None) -> None:
        _check_n_splits(n_splits, type(self).__name__)  # refused here, in its own name, not at split
        super().__init__(StratifiedGroupKFold, n_repeats=n_repeats, random_state=random_state, n_splits=n_splits)


def _n_samples(X: Any, groups: Any) -> int:
    if X is None:
        if groups is None:
            raise DepgraphError("invalid_argument", "split needs X (the samples) and groups")
        return len(groups)
    shape = getattr(X, "shape", None)
    try:
        n = int(shape[0]) if shape is not None and len(shape) else len(X)
    except TypeError:
        raise DepgraphError("invalid_argument", f"X must be array-like with one row per sample, not {X!r}") from None
    if n == 0:
        raise DepgraphError("empty_input", "split: X has no samples")
    return n


def _plain(value: Any) -> Any:
    return value.item() if isinstance(value, np.generic) else value


def _labels(values: Any, n: int, what: str, name: str) -> np.ndarray:
    """One label per sample as a 1-D array; refuses missing labels, wrong lengths and mixed types."""
    if np.ndim(values) != 1:
        raise DepgraphError(
            "invalid_argument", f"{name}: {what} must hold one label per sample (1-D), not shape {np.shape(values)}"
        )
    series = values.reset_index(drop=True) if isinstance(values, pd.Series) else pd.Series(values)
    if isinstance(series.dtype, pd.CategoricalDtype):  # the labels, not the order of the categories, count
        series = series.astype(object)
    if len(series) != n:
        raise DepgraphError("invalid_argument", f"{name}: {what} has {len(series)} labels but X has {n} samples")
    missing = np.flatnonzero(series.isna().to_numpy())
    if len(missing):
        raise DepgraphError(
            "missing_id",
            f"{name}: {what} has {len(missing)} missing label(s) (NaN/None) at index {describe_ids(missing)}: every "
            "sample needs one",
            rows=missing[:20].tolist(),
        )
    if series.dtype == object and pd.api.types.infer_dtype(series, skipna=False) in ("mixed", "mixed-integer"):
        distinct = series.drop_duplicates()
        text = distinct.astype(str)
        clash = distinct[text.duplicated(keep=False).to_numpy()]
        examples = clash if len(clash) else distinct[~distinct.map(type).duplicated().to_numpy()]  # one per type
        shown = describe_ids([f"{v!r} ({type(v).__name__})" for v in examples[:4]], 4)
        if len(clash):
            raise DepgraphError(
                "ambiguity", f"{name}: {what} holds labels that read the same but differ in type: {shown}"
            )
        raise DepgraphError(
            "invalid_argument", f"{name}: {what} mixes labels of different types ({shown}): give them one type"
        )
    return series.infer_objects().to_numpy()  # numbers held as objects become numbers (a float y is checked)


def _group_codes(groups: Any, n: int, name: str) -> tuple[np.ndarray, int]:
    """Groups coded 0..G-1 in sorted label order (as depgraph codes a spec's group ids), and G."""
    if groups is None:
        raise DepgraphError(
            "invalid_argument",
            f"{name} needs groups=: the group of every sample (subject, family, site…), which no fold splits; "
            "pass split(X, y, groups), groups= to cross_validate, or params={'groups': ...} with metadata routing",
        )
    codes, uniques = pd.factorize(_labels(groups, n, "groups", name), sort=True)
    return codes.astype(np.int64), len(uniques)


def _check_repeat(spec: SplitSpec, repeat: Any) -> None:
    """``repeat`` names a repeat of the spec's plan (``invalid_argument`` otherwise: no split would be given)."""
    repeats = sorted({s.repeat for s in spec.folds.splits}) if spec.folds is not None else []
    whole = isinstance(repeat, (int, np.integer)) and not isinstance(repeat, (bool, np.bool_))
    if not whole or repeat not in repeats:
        raise DepgraphError(
            "invalid_argument", f"the plan has no repeat {repeat!r} (its repeats: {describe_ids(repeats)})"
        )


# --------------------------------------------------------------------------- evaluation per split
def evaluate(
    estimator: Any,
    X: Any,
    y: Any,
    spec: SplitSpec,
    threshold: Any = "youden",
    *,
    ids: Sequence[str] | None = None,
    by: str | None = None,
    positive: Any = None,
    n_boot: int = 1000,
    seed: int = 0,
    confidence: float = 0.95,
) -> EvaluationReport:
    """Fit a clone of ``estimator`` on each split's training rows, score its training and test rows, and evaluate
    the scores as :func:`depgraph.audit.evaluation.evaluate` does: the same report, the threshold chosen on each
    split's training rows only.

    Rows are found in the spec by sample id: ``ids``, else the index of a pandas ``X``. A row the spec excludes
    from a split is neither fitted nor scored there. The score is the positive class's ``predict_proba`` column, or
    ``decision_function`` when the estimator has no ``predict_proba``; ``positive`` names the positive class
    (default: ``1`` of 0/1, ``True`` of False/True).

    >>> from sklearn.linear_model import LogisticRegression
    >>> from depgraph.spec.model import Constraint, FoldPlan
    >>> spec = SplitSpec.build(pd.DataFrame({"sample_id": list("abcdefgh"), "group_id": list("aabbccdd")}),
    ...                        constraint=Constraint(mode="subject"), recommended_resampling="grouped_cv")
    >>> spec = spec.with_folds(FoldPlan.from_roles(np.array([[0, 0, 0, 0, 1, 1, 1, 1]])))
    >>> X = pd.DataFrame({"x": [0.1, 0.9, 0.2, 0.8, 0.15, 0.85, 0.3, 0.7]}, index=list("abcdefgh"))
    >>> report = evaluate(LogisticRegression(), X, [0, 1, 0, 1, 0, 1, 0, 1], spec, n_boot=0)
    >>> float(report.table.auc[0]), float(report.table.sensitivity[0])  # x = 0.7 is below the training threshold
    (1.0, 0.5)
    """
    from sklearn.base import clone  # the extra is loaded with this module; clone is what every sklearn CV uses

    instance(spec, SplitSpec, "evaluate: the spec")
    if spec.folds is None:
        raise DepgraphError("invalid_argument", "the spec carries no folds: assign folds first (depgraph folds)")
    positions, labels = _rows_and_labels(spec, X, y, ids, "evaluate")
    chosen = positive_label(labels, positive, "evaluate: y")
    pieces = []
    for k, split in enumerate(spec.folds.splits):
        role = split.roles(spec.n_samples)[positions]
        train, scored = np.flatnonzero(role == 0), np.flatnonzero(role < 2)
        model = clone(estimator).fit(_rows(X, train), labels[train])
        pieces.append(
            pd.DataFrame(
                {
                    "sample_id": spec.sample_ids[positions[scored]],
                    "split": k,
                    "role": np.where(role[scored] == 1, "test", "train"),
                    "score": _positive_scores(model, _rows(X, scored), chosen),
                    "label": (labels[scored] == chosen).astype(np.int8),
                }
            )
        )
    return evaluate_predictions(
        spec, pd.concat(pieces, ignore_index=True), threshold=threshold, by=by, n_boot=n_boot, seed=seed,
        confidence=confidence,
    )  # fmt: skip


def _row_positions(spec: SplitSpec, X: Any, ids: Sequence[str] | None, what: str) -> tuple[Any, np.ndarray]:
    """Each row's sample id (``ids``, else a pandas ``X``'s index) and its position in ``spec``."""
    if ids is None:
        if not isinstance(X, (pd.DataFrame, pd.Series)) or isinstance(X.index, pd.RangeIndex):
            raise DepgraphError(
                "invalid_argument", f"{what} needs each row's sample id: pass ids=, or index X by sample id"
            )
        ids = X.index.to_numpy(dtype=object)
    return ids, spec.positions(in_order(ids, f"{what}: ids="), f"{what}: ids=")


def _rows(X: Any, rows: np.ndarray) -> Any:
    return X.iloc[rows] if isinstance(X, (pd.DataFrame, pd.Series)) else X[rows]


def _positive_scores(model: Any, X: Any, positive: Any) -> np.ndarray:
    """Scores that rise with the positive class: its ``predict_proba`` column, else ``decision_function`` (negated
    when the positive class is the estimator's first)."""
    classes = list(getattr(model, "classes_", []))
    if positive not in classes:
        raise DepgraphError(
            "invalid_value",
            f"evaluate: a split's training rows hold only the class(es) {describe_ids(classes)}; the positive class "
            f"{positive!r} is not among them",
        )
    if hasattr(model, "predict_proba"):
        return np.asarray(model.predict_proba(X))[:, classes.index(positive)]
    scores = np.asarray(model.decision_function(X), dtype=np.float64)
    return scores if classes.index(positive) == 1 else -scores


# --------------------------------------------------------------------------- the permutation audit
#: Fewer permutations than this give p-values too coarse to read (the smallest is 1 / (K + 1)).
MIN_PERMUTATIONS = 20
#: The permuted AUCs' median at or above 0.5 plus this says the folds let the model score without the labels'
#: meaning: leakage or confounding the grouping did not catch.
PERMUTATION_MARGIN = 0.05


@dataclass(frozen=True)
class PermutationAudit:
    """The observed score (mean test AUC over the repeat's splits), the scores of the same estimator refitted on
    labels permuted ``n_permutations`` times within the spec's constraints (``null``), the p-value
    ``(1 + #{null ≥ observed}) / (K + 1)``, and the coded findings."""

    observed: float
    null: np.ndarray
    p_value: float
    within: str | None
    findings: list[tuple[str, str]]
    #: the share of rows whose label came from another group, on average over the permutations: a low share (few
    #: groups alike in size or block) leaves the null close to the observed score
    moved: float = 1.0

    def __str__(self) -> str:
        median = float(np.nanmedian(self.null))
        lines = [
            f"observed AUC {self.observed:.3f}; {len(self.null)} permutations of the labels, whole spec groups "
            f"moved together{f' within {self.within}' if self.within else ''}: median AUC {median:.3f} "
            f"[{np.nanquantile(self.null, 0.025):.3f}, {np.nanquantile(self.null, 0.975):.3f}], "
            f"p = {self.p_value:.3g}; {self.moved:.0%} of the labels moved to another group on average"
        ]
        return "\n".join(lines + [f"{code}: {message}" for code, message in self.findings])


def permutation_audit(
    estimator: Any, X: Any, y: Any, spec: SplitSpec, n_permutations: int = 100, *, ids: Sequence[str] | None = None,
    within: str | None = None, positive: Any = None, repeat: int = 0, seed: int = 0,
) -> PermutationAudit:  # fmt: skip
    """bioLeak's permutation audit on the spec's folds: fit a clone of ``estimator`` on each training side of
    ``repeat`` and score its test side (mean AUC), then again on labels permuted ``n_permutations`` times, each
    permutation moving **whole spec groups** (a group takes the label vector of another group of its size, so the
    dependence the spec declares is kept) and, with ``within`` (a spec column such as ``batch_group`` or ``site``),
    only among groups of the same block, so the block's association with the labels is kept.

    A permuted AUC near 0.5 is what honest folds give: the labels' meaning is gone. A median of permuted AUCs at
    least 0.5 + :data:`PERMUTATION_MARGIN` is a finding (``permuted_score_above_chance``, also warned): the model
    scores without the labels' meaning — through what ``within`` keeps (a batch or site confounded with the
    outcome), or through leakage between the sides that the grouping did not catch. Fewer than
    :data:`MIN_PERMUTATIONS` permutations are refused. Rows are found by sample id as in :func:`evaluate`.
    """
    from sklearn.base import clone
    from sklearn.metrics import roc_auc_score

    k = _permutations(n_permutations)
    seed = check_seed(seed)
    instance(spec, SplitSpec, "permutation_audit: the spec")
    if spec.folds is None:
        raise DepgraphError("invalid_argument", "the spec carries no folds: assign folds first (depgraph folds)")
    _check_repeat(spec, repeat)
    positions, labels = _rows_and_labels(spec, X, y, ids, "permutation_audit")
    positive_rows = labels == positive_label(labels, positive, "permutation_audit: y")
    sides = [
        (np.flatnonzero(role == 0), np.flatnonzero(role == 1))
        for split in spec.folds.splits
        if split.repeat == repeat
        for role in [split.roles(spec.n_samples)[positions]]
    ]

    def score(truth: np.ndarray) -> float:
        aucs = [
            roc_auc_score(truth[test], _positive_scores(clone(estimator).fit(_rows(X, train), truth[train]),
                                                        _rows(X, test), True))
            for train, test in sides
            if len(np.unique(truth[test])) == 2 and len(np.unique(truth[train])) == 2
        ]  # fmt: skip
        return float(np.mean(aucs)) if aucs else np.nan

    lacking = [i for i, (train, test) in enumerate(sides)
               if len(np.unique(positive_rows[test])) < 2 or len(np.unique(positive_rows[train])) < 2]  # fmt: skip
    if lacking:
        raise DepgraphError(
            "invalid_value",
            f"permutation_audit: split(s) {describe_ids([str(i) for i in lacking])} of repeat {repeat} lack a class "
            "on their training or test side: their AUC is undefined",
        )
    observed = score(positive_rows)
    shuffles = group_permutations(spec, positions, within, k, seed, positive_rows)
    null = np.array([score(positive_rows[order]) for order in shuffles])
    valid = null[np.isfinite(null)]  # a permutation may leave a split one class: that draw has no score
    p_value = float((1 + np.sum(valid >= observed)) / (len(valid) + 1))
    moved = float(np.mean([np.mean(order != np.arange(len(order))) for order in shuffles]))
    return PermutationAudit(observed, null, p_value, within, _permutation_findings(null, within), moved)


def _permutations(n: Any) -> int:
    if not isinstance(n, numbers.Integral) or isinstance(n, bool) or n < MIN_PERMUTATIONS:
        raise DepgraphError(
            "invalid_argument",
            f"permutation_audit: n_permutations must be a whole number of at least {MIN_PERMUTATIONS}, not {n!r}: "
            f"with fewer, the smallest p-value is 1/{MIN_PERMUTATIONS} or more and the p-value is meaningless",
        )
    return int(n)


def _rows_and_labels(spec: SplitSpec, X: Any, y: Any, ids: Sequence[str] | None,
                     what: str) -> tuple[np.ndarray, np.ndarray]:  # fmt: skip
    """Each row's spec position (by sample id: ``ids`` or a pandas ``X``'s index) and its label: a ``y`` Series
    indexed by sample ids is taken by id, in X's order, never by position."""
    ids, positions = _row_positions(spec, X, ids, what)
    if isinstance(y, pd.Series) and not isinstance(y.index, pd.RangeIndex):  # labelled by sample id: aligned
        if y.index.has_duplicates or set(map(str, y.index)) != set(map(str, ids)):
            raise DepgraphError(
                "invalid_argument", f"{what}: y is indexed by other ids than X's rows: index y as X, or pass a "
                "plain array",
            )  # fmt: skip
        y = y.set_axis(y.index.map(str)).reindex([str(i) for i in ids])
    labels = y.to_numpy() if isinstance(y, (pd.Series, pd.Index)) else np.asarray(y)
    rows = len(X) if hasattr(X, "__len__") else len(positions)
    if len(labels) != len(positions) or rows != len(positions) or len(np.unique(positions)) != len(positions):
        raise DepgraphError(
            "invalid_argument",
            f"{what}: X, y and ids must have one row each, one per sample ({len(positions)} ids, {len(labels)} y)",
        )
    return positions, labels


def group_permutations(spec: SplitSpec, positions: np.ndarray, within: str | None, k: int, seed: int,
                       labels: np.ndarray | None = None) -> list[np.ndarray]:  # fmt: skip
    """``k`` row orders (row ``i`` takes the label of row ``order[i]``) that move whole spec groups. A group whose
    rows share one label (``labels``; a subject's outcome) takes the label of another such group, whatever its size;
    a group whose rows' labels differ takes, in its rows' spec order, the rows of another group of its size. With
    ``within`` (a spec column), groups exchange labels only inside their block; a group spanning blocks is refused.

    >>> from depgraph.spec.model import Constraint
    >>> spec = SplitSpec.build(pd.DataFrame({"sample_id": list("abcdef"), "group_id": list("aabbcd")}),
    ...                        constraint=Constraint(mode="subject"), recommended_resampling="grouped_cv")
    >>> order = group_permutations(spec, np.arange(6), None, 1, 3)[0]
    >>> sorted({tuple(order[:2].tolist()), tuple(order[2:4].tolist())}), sorted(order[4:].tolist())
    ([(0, 1), (2, 3)], [4, 5])
    """
    _, group = np.unique(spec.grouped().codes[positions], return_inverse=True)
    block = _group_blocks(spec, positions, within, group)
    n_groups = int(group.max()) + 1
    size = np.bincount(group, minlength=n_groups)
    ends = np.cumsum(size)
    by_group = np.lexsort((positions, group))  # each group's rows together, in spec order
    first = by_group[ends - size]
    if labels is None:
        constant = np.zeros(n_groups, dtype=bool)
    else:
        codes = pd.factorize(pd.Series(labels, dtype=object).astype(str), sort=True)[0][by_group]
        constant = np.minimum.reduceat(codes, ends - size) == np.maximum.reduceat(codes, ends - size)
    group_block = block[first]
    rng = np.random.default_rng(seed)
    shuffles = []
    for _ in range(k):
        taken = np.arange(len(positions))
        for b in np.unique(group_block).tolist():
            alike = np.flatnonzero(constant & (group_block == b))  # one label each: any other such group's
            source = alike[rng.permutation(len(alike))]
            mine = np.isin(group, alike)
            taken[mine] = first[source[np.searchsorted(alike, group[mine])]]
            for width in np.unique(size[~constant & (group_block == b)]).tolist():
                members = np.flatnonzero(~constant & (group_block == b) & (size == width))
                rows = np.stack([by_group[ends[g] - width : ends[g]] for g in members])
                taken[rows.ravel()] = rows[rng.permutation(len(members))].ravel()
        shuffles.append(taken)
    return shuffles


def _group_blocks(spec: SplitSpec, positions: np.ndarray, within: str | None, group: np.ndarray) -> np.ndarray:
    """Each row's block code (by the block's name: the same whatever the rows' order); all 0 without ``within``;
    ``invalid_value`` naming the groups whose rows lie in more than one block."""
    if within is None:
        return np.zeros(len(positions), dtype=np.int64)
    column = block_column(spec, within)
    values = pd.Series(spec.samples[column].to_numpy(dtype=object)[positions], dtype=object)
    block = pd.factorize(values.fillna("(none)").astype(str), sort=True)[0]
    spans = pd.Series(block).groupby(group).nunique()
    if (spans > 1).any():
        ids = spec.samples["group_id"].to_numpy(dtype=object)[positions]
        named = sorted({str(i) for i in ids[np.isin(group, spans.index[spans > 1])]})
        raise DepgraphError(
            "invalid_value",
            f"permutation_audit: within={within!r}: {len(named)} spec group(s) have samples in more than one "
            f"{column} block ({describe_ids(named)}): a group's label cannot move within one block; permute "
            "without within, or within a column each group lies in",
            ids=named[:50],
        )
    return block.astype(np.int64)


def _permutation_findings(null: np.ndarray, within: str | None) -> list[tuple[str, str]]:
    median = float(np.nanmedian(null))
    if not median >= 0.5 + PERMUTATION_MARGIN:
        return []
    kept = f"what {within} shares with the outcome" if within else "something other than the labels' meaning"
    message = (
        f"the median AUC on permuted labels is {median:.3f} (>= {0.5 + PERMUTATION_MARGIN:g}): the model scores "
        f"through {kept} — leakage or confounding that the spec's grouping does not catch"
    )
    warnings.warn(DepgraphWarning("permuted_score_above_chance", message, median_auc=median), stacklevel=3)
    return [("permuted_score_above_chance", message)]
