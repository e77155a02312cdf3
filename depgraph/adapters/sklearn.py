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

>>> import numpy as np, pandas as pd
>>> from depgraph.spec import Constraint, SplitSpec
>>> from depgraph.folds import assign_folds
>>> spec = SplitSpec.build(pd.DataFrame({"sample_id": list("abcdef"), "group_id": list("aabbcc")}),
...                        constraint=Constraint(mode="subject"), recommended_resampling="grouped_cv")
>>> spec = assign_folds(spec, "group-kfold", n_folds=3)
>>> X = pd.DataFrame({"x": range(6)}, index=list("fedcba"))
>>> [sorted(X.index[test]) for _, test in SpecCV(spec).split(X)]
[['e', 'f'], ['a', 'b'], ['c', 'd']]
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import Any

import numpy as np
import pandas as pd
from sklearn.model_selection import BaseCrossValidator, PredefinedSplit
from sklearn.model_selection._split import GroupsConsumerMixin  # what scikit-learn's group splitters use

from depgraph.arguments import in_order, instance
from depgraph.errors import DepgraphError, describe_ids
from depgraph.spec import SplitSpec


class SpecCV(GroupsConsumerMixin, BaseCrossValidator):
    """Cross-validator yielding the spec's folds for the rows it is given.

    Guarantee: for every split, the training rows and the test rows never share
    a spec group, for any subset of the spec's samples (excluded samples are in
    neither). With all samples, the splits are exactly the plan's.

    Parameters
    ----------
    spec:
        A split spec carrying folds (``depgraph folds`` / :func:`~depgraph.folds.assign_folds`).
    ids:
        Sample ids of the rows, when neither ``groups`` nor a DataFrame index carries them.
    repeat:
        Use only the splits of this repeat (default: all splits, all repeats).
    """

    def __init__(self, spec: SplitSpec, ids: Sequence[str] | None = None, repeat: int | None = None) -> None:
        instance(spec, SplitSpec, "SpecCV: the spec")
        if spec.folds is None:
            raise DepgraphError("invalid_argument", "the spec carries no folds: assign folds first (depgraph folds)")
        if ids is not None:
            in_order(ids, "SpecCV: ids=")
        if repeat is not None:
            _check_repeat(spec, repeat)
        self.spec = spec
        self.ids = ids
        self.repeat = repeat

    def _positions(self, X: Any, groups: Any) -> np.ndarray:
        if groups is not None:
            ids = groups
            what = "groups"
        elif isinstance(X, (pd.DataFrame, pd.Series)):
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
        return self.spec.positions_of(ids, f"SpecCV: {what}")

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


def groups_for(spec: SplitSpec, ids: Sequence[str]) -> np.ndarray:
    """Integer group codes of the given sample ids, for any scikit-learn group splitter.

    >>> import pandas as pd
    >>> from depgraph.spec import Constraint, SplitSpec
    >>> spec = SplitSpec.build(pd.DataFrame({"sample_id": ["s1", "s2", "s3"], "group_id": ["g2", "g1", "g2"]}),
    ...                        constraint=Constraint(mode="subject"), recommended_resampling="grouped_cv")
    >>> groups_for(spec, ["s3", "s1", "s2"]).tolist()
    [1, 1, 0]
    """
    instance(spec, SplitSpec, "groups_for: the spec")
    positions = spec.positions_of(ids, "groups_for: ids")
    codes, _ = pd.factorize(spec.samples["group_id"], sort=True)
    return codes[positions]


def to_predefined_split(spec: SplitSpec, ids: Sequence[str], repeat: int = 0) -> PredefinedSplit:
    """One repeat of a k-fold plan as scikit-learn's ``PredefinedSplit`` over the given rows.

    Only plans in which every sample is tested once per repeat and none is
    excluded fit that shape; others raise ``invalid_argument``.
    """
    instance(spec, SplitSpec, "to_predefined_split: the spec")
    if spec.folds is None:
        raise DepgraphError("invalid_argument", "the spec carries no folds: assign folds first")
    _check_repeat(spec, repeat)
    splits = [s for s in spec.folds.splits if s.repeat == repeat]
    n = spec.n_samples
    test_fold = np.full(n, -1, dtype=np.int64)
    for split in splits:
        if split.n_excluded or (test_fold[split.test] >= 0).any():
            raise DepgraphError(
                "invalid_argument",
                f"the {spec.folds.scheme} plan excludes samples or tests one twice; PredefinedSplit cannot express it "
                "(use SpecCV)",
            )
        test_fold[split.test] = split.fold
    positions = spec.positions_of(ids, "to_predefined_split: ids")
    return PredefinedSplit(test_fold[positions])


def _check_repeat(spec: SplitSpec, repeat: Any) -> None:
    """``repeat`` names a repeat of the spec's plan (``invalid_argument`` otherwise: no split would be given)."""
    repeats = sorted({s.repeat for s in spec.folds.splits}) if spec.folds is not None else []
    whole = isinstance(repeat, (int, np.integer)) and not isinstance(repeat, (bool, np.bool_))
    if not whole or repeat not in repeats:
        raise DepgraphError(
            "invalid_argument", f"the plan has no repeat {repeat!r} (its repeats: {describe_ids(repeats)})"
        )
