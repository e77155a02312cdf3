"""Folds built from whole groups, recorded in the spec so every consumer gets the same splits.

Every scheme assigns *groups* (the spec's ``group_id``), never single samples,
so no group has samples on both sides of a split. Where a scheme tests samples
by another key (leave-one-block-out by study, time blocks by ``order_rank``)
and a group reaches beyond the tested block, the group's other samples are
*excluded* from that split rather than trained on.

Plans are deterministic for a seed and independent of row order: groups are
handled in group-id order and every random draw comes from
``numpy.random.default_rng([seed, repeat])``.

Schemes (``assign_folds(spec, name, ...)`` or the classes):

===========================  =========================  ==========================================
name                         class                      splits
===========================  =========================  ==========================================
``group-kfold``              :class:`GroupedKFold`       k folds balanced by sample counts, repeats
``stratified-group-kfold``   :class:`StratifiedGroupedKFold`  k folds balancing a stratum and sizes
``holdout``                  :class:`GroupedHoldout`     one test set of a fraction of the samples
``logo``                     :class:`LeaveOneBlockOut`   one split per value of a block column
``time``                     :class:`TimeOrdered`        forward chaining over ``order_rank``
``hash``                     :class:`HashFolds`          fold = SHA-256(salt ‖ group id or key columns) mod k
``balanced-holdout``         :class:`BalancedHoldout`    a holdout balanced over several columns,
                                                         stable as new batches arrive
``covariate-bins``           :class:`CovariateBins`      quantile bins of a numeric column, thresholds
                                                         recorded for other sites
===========================  =========================  ==========================================

>>> import pandas as pd
>>> from depgraph.spec.model import Constraint, SplitSpec
>>> spec = SplitSpec.build(
...     pd.DataFrame({"sample_id": [f"S{i}" for i in range(8)], "group_id": list("aabbccdd")}),
...     constraint=Constraint(mode="subject"), recommended_resampling="grouped_cv")
>>> planned = assign_folds(spec, "group-kfold", n_splits=4, seed=1)
>>> [s.n_test for s in planned.folds.splits]
[2, 2, 2, 2]
"""

from __future__ import annotations

import hashlib
import itertools
import math
import warnings
from abc import ABC, abstractmethod
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, fields, replace
from typing import TYPE_CHECKING, Any, ClassVar

import numpy as np
import pandas as pd

from depgraph.common.arguments import instance, names, real_number
from depgraph.common.arrays import distinct, sorted_categories, text_array
from depgraph.engines import engine_of, stage
from depgraph.errors import DepgraphError, DepgraphWarning, describe_ids
from depgraph.folds.balancing import balanced_folds, balanced_sides
from depgraph.folds.covariates import (
    bin_of,
    empty_bins,
    equal_size_thresholds,
    fold_association,
    group_values,
    groups_with_several_keys,
    hash_folds,
    numeric_column,
    sample_keys,
    several_keys,
    wrong_threshold_count,
)
from depgraph.folds.covariates import hash_fold as hash_fold  # re-exported: the one-key reference beside the scheme
from depgraph.folds.parameters import (
    BALANCE,
    BY,
    EMBARGO,
    GAP,
    JOINT,
    KEY,
    MAX_SPLITS,
    N_REPEATS,
    N_SPLITS,
    PRIOR,
    RENAMED,
    SALT,
    SEED,
    STRATIFY,
    TEST_FRACTION,
    THRESHOLDS,
    TRAIN_AFTER,
    Parameter,
    check_count,
    check_joint,
    check_seed,
    declared,
)
from depgraph.folds.parameters import MAX_SEED as MAX_SEED  # re-exported: the seed range goes with the schemes
from depgraph.folds.prior import PriorSides, moved_message, prior_sides
from depgraph.spec.balance import MISSING_CATEGORY, balance_metrics, categories
from depgraph.spec.columns import SPEC_COLUMN_OF_ROLE
from depgraph.spec.model import FoldPlan, FoldSplit, SpecWarning, SplitSpec
from depgraph.spec.plans import BINS, GROUP_VALUE, hash_encoding

if TYPE_CHECKING:
    import scipy.sparse as sp

PAIRS = 2  # the balanced holdout's default joint: every category and every pair of columns' cells
_SIZE_WEIGHT = 3.0  # fold sizes weigh like three strata in the stratified objective (see bench_folds.py)


# --------------------------------------------------------------------------- groups
@dataclass(frozen=True)
class _Groups:
    """The spec's groups in group-id order: a code per sample, sizes per group."""

    codes: np.ndarray
    ids: np.ndarray
    sizes: np.ndarray

    @classmethod
    def of(cls, spec: SplitSpec) -> _Groups:
        codes, ids = sorted_categories(text_array(spec.samples["group_id"]))
        return cls(codes, ids, np.bincount(codes, minlength=len(ids)))

    @property
    def n(self) -> int:
        return len(self.ids)


def _closed_split(repeat: int, fold: int, test_mask: np.ndarray, groups: _Groups) -> FoldSplit:
    """A split testing ``test_mask``; the untested samples of a tested group are excluded."""
    touched = np.bincount(groups.codes, weights=test_mask.astype(np.float64), minlength=groups.n) > 0
    excluded = touched[groups.codes] & ~test_mask
    return FoldSplit.of(repeat, fold, np.flatnonzero(test_mask), np.flatnonzero(excluded), len(test_mask))


def _require_column(spec: SplitSpec, column: str, what: str) -> None:
    require_column(list(spec.samples.columns), column, what)


def require_column(columns: list[str], column: str, what: str) -> None:
    """Refuse a column name that is not text or not one of the spec's sample ``columns``, naming it and them."""
    if not isinstance(column, str):
        raise DepgraphError("invalid_argument", f"{what} takes one column name, not {column!r}")
    if column not in columns:
        became = SPEC_COLUMN_OF_ROLE.get(column)
        hint = (
            f"the table's {column} became the spec's {became}; name {became!r}"
            if became in columns
            else "carry sample attributes into the spec with derive --attributes"
        )
        raise DepgraphError(
            "invalid_argument",
            f"{what} column {column!r} is not in the spec (columns: {describe_ids(columns, 20)}); {hint}",
            column=column,
        )


def _categories(spec: SplitSpec, column: str, what: str) -> tuple[np.ndarray, np.ndarray]:
    """Integer codes of a categorical spec column (missing values are a category of their own)."""
    _require_column(spec, column, what)
    return categories(spec.samples, column)


# --------------------------------------------------------------------------- schemes
class FoldScheme(ABC):
    """A way to build folds from a spec's groups.

    Each scheme is a dataclass whose fields are its parameters, and nothing
    else, each declared with its :class:`~depgraph.folds.parameters.Parameter`
    (``seed: int = SEED.field(0)``): :meth:`parameter_names` is what
    :func:`assign_folds` and the ``folds`` command accept for it (anything
    else is refused, not ignored), and the command's options are built from
    :meth:`parameters_declared`. What differs between schemes in :meth:`plan`
    is declared as class attributes, never found by testing a scheme's name.
    """

    name: ClassVar[str]
    #: Whether every split must test some samples (a hash fold may come out empty: the hash decides, not a count).
    tests_every_split: ClassVar[bool] = True
    #: What a group reaching across every split spans, as the refusal of an empty side says it.
    reach: ClassVar[str] = "cohort"

    def __new__(cls, *args: Any, **parameters: Any) -> FoldScheme:
        # a parameter renamed since 0.1 is refused with its new name, not Python's bare "unexpected keyword argument"
        refuse_parameters(cls, [name for name in parameters if name in RENAMED])
        return super().__new__(cls)

    def __post_init__(self) -> None:
        for name, parameter in self.parameters_declared().items():
            if parameter.check is not None:
                parameter.check(getattr(self, name), name)
        folds, repeats = getattr(self, "n_splits", 1), getattr(self, "n_repeats", 1)
        if folds * repeats > MAX_SPLITS:  # each split lists its tested samples: a mistyped count exhausts memory
            raise DepgraphError(
                "invalid_argument",
                f"{self.name}: {folds} folds × {repeats} repeats is {folds * repeats:,} splits; a plan holds at most "
                f"{MAX_SPLITS:,}",
            )

    @classmethod
    def parameters_declared(cls) -> dict[str, Parameter]:
        """This scheme's parameters by name, in declaration order, each with its help and command-line spelling."""
        return declared(cls)

    @classmethod
    def parameter_names(cls) -> tuple[str, ...]:
        """The parameters this scheme takes, in declaration order."""
        return tuple(f.name for f in fields(cls))  # type: ignore[arg-type]

    @abstractmethod
    def splits(self, spec: SplitSpec) -> list[FoldSplit]:
        """The plan's splits for ``spec``."""

    def parameters(self) -> dict[str, Any]:
        """The parameters the plan records (those declared ``recorded``)."""
        recorded = {name for name, parameter in self.parameters_declared().items() if parameter.recorded}
        return {name: getattr(self, name) for name in self.parameter_names() if name in recorded}

    def plan(self, spec: SplitSpec) -> FoldPlan:
        splits = self.splits(spec)
        self.refuse_empty_sides([s.n_train for s in splits], [s.n_test for s in splits])
        return FoldPlan(
            scheme=self.name,
            parameters=self.parameters(),
            seed=self.plan_seed(),
            splits=splits,
            balance=balance_metrics(
                spec.samples, splits, self.balance_columns(list(spec.samples.columns)), self.target_fraction()
            ),
        )

    def findings(self, spec: SplitSpec) -> list[SpecWarning]:
        """What the plan for ``spec`` warns about, kept in the spec's ``warnings`` with the plan (and replaced with
        it) and told as a :class:`~depgraph.errors.DepgraphWarning`: nothing, unless a scheme says otherwise."""
        return []

    def balance_columns(self, columns: list[str]) -> list[str]:
        """The columns the plan's balance reports on, of the spec's sample ``columns``."""
        return ["stratum"] if "stratum" in columns else []

    def target_fraction(self) -> float | None:
        return None

    def refuse_empty_sides(self, n_train: list[int], n_test: list[int]) -> None:
        """``too_few_groups`` for the first split without training samples (or without test samples, for a
        scheme that tests in every split)."""
        for i, (trained, tested) in enumerate(zip(n_train, n_test, strict=True)):
            if trained == 0 or (tested == 0 and self.tests_every_split):
                side = "training" if trained == 0 else "test"
                raise DepgraphError(
                    "too_few_groups",
                    f"{self.name}: split {i} would have no {side} samples (its groups reach across the whole "
                    f"{self.reach}); choose a scheme or grouping that leaves both sides",
                )

    def plan_seed(self) -> int | None:
        """The seed the plan records: a plain int (numpy's seeds too), None for a scheme without randomness."""
        seed = getattr(self, "seed", None)
        return None if seed is None else check_seed(seed)


def _check_folds(n_splits: int, groups: _Groups, what: str = "folds") -> None:
    check_folds(n_splits, groups.n, what)


def check_folds(n_splits: int, n_groups: int, what: str = "folds") -> None:
    """Refuse a number of folds that is not an integer of at least 2 (``invalid_argument``) or exceeds the
    ``n_groups`` (``too_few_groups``)."""
    if isinstance(n_splits, (bool, np.bool_)) or not isinstance(n_splits, (int, np.integer)) or n_splits < 2:
        raise DepgraphError(
            "invalid_argument", f"the number of {what} must be an integer of at least 2, not {n_splits!r}"
        )
    if n_splits > n_groups:
        raise DepgraphError(
            "too_few_groups",
            f"{n_splits} {what} need at least {n_splits} groups; the spec has {n_groups}",
            n_groups=n_groups,
            n_splits=n_splits,
        )


def check_repeats(n_repeats: int) -> None:
    """Refuse a number of repeats that is not an integer in ``1..MAX_SPLITS`` (``invalid_argument``)."""
    check_count(n_repeats, "n_repeats", 1)


@dataclass(frozen=True)
class GroupedKFold(FoldScheme):
    """k folds of whole groups, balanced by sample counts.

    Guarantee: every sample is tested exactly once per repeat; no group has
    samples in two folds; fold sizes differ by as little as the group sizes
    allow (largest groups placed first, each on the lightest fold).

    Parameters
    ----------
    n_splits: number of folds (at least 2, at most the number of groups).
    n_repeats: repeats with different random tie-breaking.
    seed: random seed.

    >>> import pandas as pd
    >>> from depgraph.spec.model import Constraint, SplitSpec
    >>> spec = SplitSpec.build(pd.DataFrame({"sample_id": list("abcdef"), "group_id": list("xxxyzz")}),
    ...                        constraint=Constraint(mode="subject"), recommended_resampling="grouped_cv")
    >>> sorted(s.n_test for s in GroupedKFold(n_splits=2).plan(spec).splits)
    [3, 3]
    """

    name: ClassVar[str] = "group-kfold"
    n_splits: int = N_SPLITS.field(5)
    n_repeats: int = N_REPEATS.field(1)
    seed: int = SEED.field(0)

    def splits(self, spec: SplitSpec) -> list[FoldSplit]:
        groups = _Groups.of(spec)
        _check_folds(self.n_splits, groups)
        check_repeats(self.n_repeats)
        return _kfold_splits(groups, self.n_splits, self.n_repeats, self.seed)

    def target_fraction(self) -> float:
        return 1 / self.n_splits


def _kfold_splits(
    groups: _Groups, k: int, repeats: int, seed: int, strata: np.ndarray | None = None
) -> list[FoldSplit]:
    """k-fold splits of every repeat (:func:`kfold_of_samples` with ``repeat`` 0, 1, …)."""
    out = []
    for r in range(repeats):
        fold = kfold_of_samples(groups.codes, k, seed, strata, repeat=r)
        n = len(fold)
        out += [FoldSplit.of(r, f, np.flatnonzero(fold == f), np.empty(0, np.int64), n) for f in range(k)]
    return out


def kfold_of_samples(
    group_codes: np.ndarray, k: int, seed: int, strata: np.ndarray | None = None, repeat: int = 0
) -> np.ndarray:
    """The fold (``0..k-1``) of every sample: whole groups, balanced by sizes and, with
    ``strata`` (a class code ``0..S-1`` per sample), by class shares.

    ``group_codes`` number the groups ``0..G-1`` (k ≤ G) in a fixed order (depgraph uses
    sorted group ids), which with ``seed`` and ``repeat`` determines the plan. This is
    the one assignment behind :class:`GroupedKFold`, :class:`StratifiedGroupedKFold`
    and the scikit-learn splitters of :mod:`depgraph.adapters.sklearn`: what
    :func:`kfold_of_groups` gives each group, taken per sample.

    >>> kfold_of_samples(np.array([0, 0, 1, 2, 2, 3]), k=2, seed=0).tolist()
    [1, 1, 1, 0, 0, 0]
    """
    sizes = np.bincount(group_codes)
    counts = None
    if strata is not None:
        n_strata = int(strata.max()) + 1
        counts = np.bincount(group_codes * n_strata + strata, minlength=len(sizes) * n_strata)
        counts = counts.reshape(len(sizes), n_strata)
    return kfold_of_groups(sizes, k, seed, counts, repeat)[group_codes]


def kfold_of_groups(
    sizes: np.ndarray, k: int, seed: int, stratum_counts: np.ndarray | None = None, repeat: int = 0
) -> np.ndarray:
    """The fold (``0..k-1``) of every group from its size and, for a stratified plan, its count of each class
    (``stratum_counts``: groups × classes): largest groups first, each on the fold it unbalances least; with
    classes, the best of a few seeded restarts by worst class-share deviation, then fold-size spread.

    Only these aggregates decide the plan, so an engine that counts them elsewhere (Spark, one row per group)
    assigns exactly the folds :func:`kfold_of_samples` does.

    >>> kfold_of_groups(np.array([2, 1, 2, 1]), k=2, seed=0).tolist()
    [1, 1, 0, 0]
    """
    n = int(sizes.sum())
    if stratum_counts is None:
        vectors = sizes[:, None]
        weights = np.array([k / max(1, n)])
    else:
        vectors, weights = _stratified_vectors(sizes, stratum_counts, k)
    restarts = _RESTARTS if stratum_counts is not None and len(sizes) <= _RESTART_GROUPS else 1
    candidates = [
        balanced_folds(vectors, weights, k, np.random.default_rng([seed, repeat, t])) for t in range(restarts)
    ]
    return min(candidates, key=lambda c: _kfold_quality(c, sizes, stratum_counts, k))


def _stratified_vectors(sizes: np.ndarray, counts: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
    """Per group, its count of each stratum less its share of the group's size, then its size; and weights."""
    counts = counts.astype(np.float64)
    n = float(sizes.sum())
    share = counts.sum(axis=0) / n
    # Per stratum, a fold's count minus its share of the fold's own size: zero when the fold's
    # class shares equal the cohort's, whatever the fold's size; the size column balances sizes.
    vectors = np.column_stack([counts - share * sizes[:, None], sizes])
    per_fold = n / k
    weights = np.append(1 / np.maximum(share * per_fold, 1e-9), _SIZE_WEIGHT / per_fold)
    return vectors, weights


_RESTARTS = 8
_RESTART_GROUPS = 20_000  # above this many groups one pass is already balanced (and restarts cost time)


def _kfold_quality(
    fold_of_group: np.ndarray, sizes: np.ndarray, counts: np.ndarray | None, k: int
) -> tuple[float, float]:
    """(worst deviation of a fold's class share from the whole, fold-size spread), from the groups' sizes and
    class counts (sums of integers: exactly what counting the samples gives)."""
    fold_sizes = np.bincount(fold_of_group, weights=sizes, minlength=k).astype(np.float64)
    spread = (fold_sizes.max() - fold_sizes.min()) / fold_sizes.mean()
    if counts is None:
        return (0.0, spread)
    held = np.zeros((k, counts.shape[1]), dtype=np.int64)
    np.add.at(held, fold_of_group, counts)
    shares = held / np.maximum(fold_sizes, 1)[:, None]
    overall = counts.sum(axis=0) / int(sizes.sum())
    return (float(np.abs(shares - overall).max()), spread)


@dataclass(frozen=True)
class StratifiedGroupedKFold(FoldScheme):
    """k folds of whole groups whose stratum proportions and sizes both match the whole.

    Guarantee: as :class:`GroupedKFold`; in addition each fold's share of
    every stratum (outcome, or any categorical column) is kept close to the
    cohort's. Groups with identical stratum counts are placed together by exact
    water filling on a chi-square-like objective over strata and fold sizes;
    benchmarks/bench_folds.py compares it with scikit-learn's
    StratifiedGroupKFold on many random cohorts.

    Parameters
    ----------
    n_splits, n_repeats, seed: as GroupedKFold.
    stratify: the spec column to stratify on (default ``stratum``); missing
        values form their own category.
    """

    name: ClassVar[str] = "stratified-group-kfold"
    n_splits: int = N_SPLITS.field(5)
    n_repeats: int = N_REPEATS.field(1)
    seed: int = SEED.field(0)
    stratify: str = STRATIFY.field("stratum")

    def splits(self, spec: SplitSpec) -> list[FoldSplit]:
        groups = _Groups.of(spec)
        _check_folds(self.n_splits, groups)
        check_repeats(self.n_repeats)
        strata, _ = _categories(spec, self.stratify, "stratify")
        return _kfold_splits(groups, self.n_splits, self.n_repeats, self.seed, strata)

    def balance_columns(self, columns: list[str]) -> list[str]:
        return [self.stratify]

    def target_fraction(self) -> float:
        return 1 / self.n_splits


@dataclass(frozen=True)
class GroupedHoldout(FoldScheme):
    """One test set holding ``test_fraction`` of the samples, in whole groups.

    Guarantee: the test set is a random (seeded) set of whole groups whose
    sample count is as close to ``test_fraction · n`` as the group sizes allow;
    each repeat draws again (Monte-Carlo cross-validation).
    """

    name: ClassVar[str] = "holdout"
    test_fraction: float = TEST_FRACTION.field(0.2)
    n_repeats: int = N_REPEATS.field(1)
    seed: int = SEED.field(0)

    def splits(self, spec: SplitSpec) -> list[FoldSplit]:
        groups = _Groups.of(spec)
        self.check_groups(groups.n)
        n = len(groups.codes)
        return [
            FoldSplit.of(
                r, 0, np.flatnonzero(self.tested_groups(groups.sizes, r)[groups.codes]), np.empty(0, np.int64), n
            )
            for r in range(self.n_repeats)
        ]

    def check_groups(self, n_groups: int) -> None:
        """The parameters and the number of groups a holdout needs (two at least)."""
        _check_fraction(self.test_fraction)
        check_repeats(self.n_repeats)
        if n_groups < 2:
            raise DepgraphError("too_few_groups", f"a holdout needs at least 2 groups; the spec has {n_groups}")

    def tested_groups(self, sizes: np.ndarray, repeat: int) -> np.ndarray:
        """Whether each group (``sizes``, in group-id order) is tested in ``repeat``. Only the sizes decide, so an
        engine that counts them elsewhere (Spark, one row per group) draws the same holdout.

        >>> GroupedHoldout(test_fraction=0.5, seed=1).tested_groups(np.array([2, 1, 2, 1]), 0).tolist()
        [True, True, False, False]
        """
        target = self.test_fraction * int(sizes.sum())
        rng = np.random.default_rng([self.seed, repeat])
        order = rng.permutation(len(sizes))
        cum = np.cumsum(sizes[order])
        cut = int(np.argmin(np.abs(cum - target))) + 1
        chosen = np.zeros(len(sizes), dtype=bool)
        chosen[order[:cut]] = True
        deficit = target - cum[cut - 1]
        rest = order[cut:]
        if deficit > 0 and len(rest):  # one filler group that brings the count closest to the target
            gain = np.abs(deficit - sizes[rest])
            best = rest[int(np.argmin(gain))]
            if gain.min() < deficit:
                chosen[best] = True
        if chosen.all():
            chosen[order[cut - 1]] = False  # never test everything
        return chosen

    def target_fraction(self) -> float:
        return self.test_fraction


def _check_fraction(value: float) -> None:
    if not real_number(value) or not 0 < value < 1:
        raise DepgraphError("invalid_argument", f"test fraction must lie strictly between 0 and 1, not {value!r}")


@dataclass(frozen=True)
class LeaveOneBlockOut(FoldScheme):
    """One split per value of a block column (study, site, batch…): that block is tested.

    Guarantee: each split tests exactly the samples of one block; samples of a
    tested group that lie in other blocks are excluded, never trained on.
    Samples with no block value are never tested (they train, unless their
    group is tested). Blocks are taken in sorted order.
    """

    name: ClassVar[str] = "logo"
    by: str = BY.field("study_group")

    def splits(self, spec: SplitSpec) -> list[FoldSplit]:
        groups = _Groups.of(spec)
        blocks, names = _categories(spec, self.by, "--by")
        return [_closed_split(0, fold, blocks == code, groups) for fold, code in enumerate(self.tested_blocks(names))]

    def tested_blocks(self, names: np.ndarray) -> list[int]:
        """The categories of the ``by`` column (``names``, sorted) a split tests, in split order: every one but
        :data:`~depgraph.spec.balance.MISSING_CATEGORY`; ``too_few_groups`` below two."""
        real = [i for i, name in enumerate(names) if name != MISSING_CATEGORY]
        if len(real) < 2:
            raise DepgraphError(
                "too_few_groups", f"leave-one-out over {self.by!r} needs at least 2 blocks; found {len(real)}"
            )
        return real

    def plan(self, spec: SplitSpec) -> FoldPlan:
        plan = super().plan(spec)
        names = _categories(spec, self.by, "--by")[1]
        return plan.model_copy(update={"parameters": {**plan.parameters, **self.recorded_blocks(names)}})

    def recorded_blocks(self, names: np.ndarray) -> dict[str, list[str]]:
        """What the plan adds to its parameters: the tested blocks' names, in split order."""
        return {"blocks": [str(names[i]) for i in self.tested_blocks(names)]}


@dataclass(frozen=True)
class TimeOrdered(FoldScheme):
    """Forward chaining over ``order_rank``: train on the past, test the next block.

    The distinct ``order_rank`` levels are cut into ``n_splits + 1``
    consecutive blocks of (nearly) equal numbers of levels; ties are never cut.
    Split i tests block i (i = 1..n_splits) and trains on the levels before it,
    except the ``gap`` levels just before the test block, which are purged
    (excluded: their outcomes may overlap the test period). With
    ``train_after=True`` the training set also takes the levels after the test
    block, except the ``embargo`` levels right after it (excluded: they are
    serially correlated with the tested period); under pure forward chaining
    nothing after the test block is trained on, so ``embargo`` needs
    ``train_after``. Samples without an ``order_rank`` are excluded from every
    split, and a group tested in a split has its other samples excluded::

        order_rank levels   1  2  3  4  5  6  7  8  9
        blocks (n_splits=2) [ B0    ][ B1    ][ B2    ]
        split 1, gap=1      T  T  -  X  X  X  .  .  .
        split 2, gap=1      T  T  T  T  T  -  X  X  X
        T train  X test  - excluded (gap)  . excluded (future)
    """

    name: ClassVar[str] = "time"
    reach: ClassVar[str] = "period"
    n_splits: int = N_SPLITS.field(3)
    gap: int = GAP.field(0)
    embargo: int = EMBARGO.field(0)
    train_after: bool = TRAIN_AFTER.field(False)

    def splits(self, spec: SplitSpec) -> list[FoldSplit]:
        self.check_window_parameters()
        if "order_rank" not in spec.samples.columns or spec.samples["order_rank"].isna().all():
            raise no_order_rank()
        groups = _Groups.of(spec)
        rank = spec.samples["order_rank"].to_numpy(dtype=np.float64, na_value=np.nan)
        levels = distinct(rank[~np.isnan(rank)])
        level_index = np.searchsorted(levels, np.nan_to_num(rank, nan=-np.inf))
        level_index = np.where(np.isnan(rank), -1, level_index)
        out = []
        for i, window in enumerate(self.windows(len(levels))):
            test = (level_index >= window.first) & (level_index <= window.last)
            train = (level_index >= 0) & (level_index < window.train_before)
            train |= level_index >= window.train_from
            split = _closed_split(0, i, test, groups)
            role = split.roles(len(rank))
            excluded = (role == 2) | ((role == 0) & ~train)
            out.append(FoldSplit.of(0, i, split.test, np.flatnonzero(excluded), len(rank)))
        return out

    def check_window_parameters(self) -> None:
        """``invalid_argument`` for a gap or embargo that is not a non-negative integer, a train_after that is not
        a boolean, or an embargo under pure forward chaining."""
        for label, value in (("gap", self.gap), ("embargo", self.embargo)):
            if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < 0:
                raise DepgraphError("invalid_argument", f"{label} must be a non-negative integer, not {value!r}")
        if not isinstance(self.train_after, (bool, np.bool_)):
            raise DepgraphError("invalid_argument", f"train_after must be True or False, not {self.train_after!r}")
        if self.embargo and not self.train_after:
            raise DepgraphError(
                "invalid_argument",
                "embargo withholds training data after the test block; forward chaining trains only on the past, "
                "so an embargo needs train_after=True (--train-after)",
            )

    def windows(self, n_levels: int) -> list[TimeWindow]:
        """Each split's levels (indices into the ``n_levels`` distinct order_rank values, sorted): those it tests
        and those it trains on; ``too_few_groups`` with fewer levels than blocks."""
        if n_levels < self.n_splits + 1:
            raise DepgraphError(
                "too_few_groups",
                f"{self.n_splits} time splits need at least {self.n_splits + 1} order_rank levels; found {n_levels}",
            )
        block_of_level = np.floor(np.arange(n_levels) * (self.n_splits + 1) / n_levels).astype(np.int64)
        out = []
        for i in range(1, self.n_splits + 1):
            first, last = (int(x) for x in np.flatnonzero(block_of_level == i)[[0, -1]])
            after = last + self.embargo + 1 if self.train_after else n_levels
            out.append(TimeWindow(first, last, max(first - self.gap, 0), min(after, n_levels)))
        return out


@dataclass(frozen=True)
class TimeWindow:
    """A time split's levels, as indices into the sorted distinct order_rank values: it tests ``first..last`` and
    trains on the levels before ``train_before`` and from ``train_from`` on (``train_from`` equal to the number of
    levels: nothing after)."""

    first: int
    last: int
    train_before: int
    train_from: int


def no_order_rank() -> DepgraphError:
    """The time scheme's refusal of a spec without time order."""
    return DepgraphError(
        "invalid_argument",
        "the time scheme needs order_rank in the spec: derive in time mode, or from a graph with timepoints",
    )


@dataclass(frozen=True)
class HashFolds(FoldScheme):
    """Folds every site computes alike without sharing identifiers.

    ``fold = int(SHA-256(salt ‖ key), big-endian) mod k`` where ``salt`` and
    ``key`` are UTF-8 bytes concatenated with nothing between them. The key is
    the group id, so groups stay whole; or, with ``key`` naming sample columns
    (``key=("date_of_birth", "sex")``), the netstrings of those columns' values
    (:func:`~depgraph.folds.covariates.key_text`), so records duplicated across
    sites with no shared id but equal key columns share a fold. Every sample of
    a group must then carry one key (``ambiguity`` otherwise: no rule applied
    here could agree with a site holding one member's duplicate alone). Any
    site holding the salt and the same keys gets the same folds; see the test
    vectors in docs/folds.md. Fold sizes are as even as hashing makes them.
    """

    name: ClassVar[str] = "hash"
    tests_every_split: ClassVar[bool] = False
    n_splits: int = N_SPLITS.field(5)
    salt: str = SALT.field("", repr=False)
    key: tuple[str, ...] = KEY.field(())

    def __post_init__(self) -> None:
        super().__post_init__()
        if not isinstance(self.salt, str):  # the documented encoding is UTF-8 text: bytes or numbers are ambiguous
            raise DepgraphError("invalid_argument", f"salt must be text, not {type(self.salt).__name__}")
        object.__setattr__(self, "key", _column_names(self.key, "key"))

    def splits(self, spec: SplitSpec) -> list[FoldSplit]:
        groups = _Groups.of(spec)
        fold = self.fold_of_samples(spec, groups)  # the key columns named are checked first
        _check_folds(self.n_splits, groups)
        n = len(fold)
        return [FoldSplit.of(0, f, np.flatnonzero(fold == f), np.empty(0, np.int64), n) for f in range(self.n_splits)]

    def fold_of_samples(self, spec: SplitSpec, groups: _Groups) -> np.ndarray:
        """The fold of every sample: its group id's hash, or its key's (one hash per distinct key)."""
        if not self.key:
            return hash_folds(self.salt, groups.ids.tolist(), self.n_splits)[groups.codes]
        for column in self.key:
            _require_column(spec, column, "--key")
        ids = spec.samples["sample_id"].to_numpy(dtype=object)
        codes, keys = sample_keys(spec.samples, self.key, ids)
        several = groups_with_several_keys(groups.codes, codes, groups.n)
        if len(several):
            raise several_keys(self.key, groups.ids[several][:50].tolist(), len(several))
        return hash_folds(self.salt, keys, self.n_splits)[codes]

    def parameters(self) -> dict[str, Any]:
        keyed = list(self.key) if self.key else "group_id"
        return {
            "n_splits": self.n_splits,
            "key": keyed,
            "encoding": hash_encoding(keyed),
            "salt_fingerprint": hashlib.sha256(b"depgraph salt fingerprint" + self.salt.encode()).hexdigest()[:16],
        }

    def plan(self, spec: SplitSpec) -> FoldPlan:
        plan = super().plan(spec)
        if not self.key:
            return plan
        return _with_association(plan, spec, f"hash folds keyed on {','.join(self.key)}")

    def target_fraction(self) -> float:
        return 1 / self.n_splits


@dataclass(frozen=True)
class CovariateBins(FoldScheme):
    """k folds that are quantile bins of a numeric covariate, cut at thresholds every site can apply.

    Each group is placed by its lower median value (the ⌈m/2⌉-th smallest of
    its m samples' values), so groups stay whole; fold i holds the groups whose
    value ``v`` has ``thresholds[i-1] <= v < thresholds[i]``. Without
    ``thresholds``, they are cut where the running sample count is nearest
    ``i·n/k`` (midway between two consecutive group values), so fold sizes are
    within one group's size of ``n/k`` when group values are distinct; the plan
    records them, and another site passing them (``thresholds=``,
    ``--thresholds``) bins its samples alike. The plan reports how strongly the
    folds follow the outcome (:func:`~depgraph.folds.covariates.fold_association`).
    """

    name: ClassVar[str] = "covariate-bins"
    n_splits: int = N_SPLITS.field(5)
    by: str | None = BY.field(None)
    thresholds: tuple[float, ...] | None = THRESHOLDS.field(None)

    def __post_init__(self) -> None:
        super().__post_init__()
        if self.by is None:
            raise DepgraphError("invalid_argument", "covariate-bins needs --by COL, the numeric column to bin")
        if not isinstance(self.by, str):
            raise DepgraphError("invalid_argument", f"by takes one column name, not {self.by!r}")
        if self.thresholds is not None:
            object.__setattr__(self, "thresholds", _checked_thresholds(self.thresholds))

    def values_of_groups(self, spec: SplitSpec, groups: _Groups) -> np.ndarray:
        """Each group's lower median of the ``by`` column."""
        _require_column(spec, self.by, "--by")
        values = numeric_column(spec.samples, self.by, spec.samples["sample_id"].to_numpy(dtype=object))
        return group_values(groups.codes, values, groups.n)

    def splits(self, spec: SplitSpec) -> list[FoldSplit]:
        groups = _Groups.of(spec)
        values = self.values_of_groups(spec, groups)  # the column named is checked first
        _check_folds(self.n_splits, groups)
        thresholds = self.thresholds
        if thresholds is None:
            thresholds = tuple(equal_size_thresholds(values, groups.sizes, self.n_splits).tolist())
        elif len(thresholds) != self.n_splits - 1:
            raise wrong_threshold_count(len(thresholds), self.n_splits)
        fold = bin_of(values, np.asarray(thresholds))[groups.codes]
        empty = [f for f in range(self.n_splits) if not (fold == f).any()]
        if empty:
            raise empty_bins(self.by, empty, thresholds)
        n = len(fold)
        return [FoldSplit.of(0, f, np.flatnonzero(fold == f), np.empty(0, np.int64), n) for f in range(self.n_splits)]

    def parameters(self) -> dict[str, Any]:
        thresholds = None if self.thresholds is None else list(self.thresholds)
        return {"n_splits": self.n_splits, "by": self.by, "thresholds": thresholds, "group_value": GROUP_VALUE,
                "bins": BINS}  # fmt: skip

    def plan(self, spec: SplitSpec) -> FoldPlan:
        if self.thresholds is None:  # cut here, then planned as a site applying them would plan
            groups = _Groups.of(spec)
            values = self.values_of_groups(spec, groups)
            _check_folds(self.n_splits, groups)
            cut = equal_size_thresholds(values, groups.sizes, self.n_splits)
            plan = replace(self, thresholds=tuple(cut.tolist())).plan(spec)
            return plan.model_copy(update={"parameters": {**plan.parameters, "thresholds_from": "this spec"}})
        plan = super().plan(spec)
        groups = _Groups.of(spec)
        own = bin_of(numeric_column(spec.samples, self.by, spec.sample_ids), np.asarray(self.thresholds))
        placed = bin_of(self.values_of_groups(spec, groups), np.asarray(self.thresholds))[groups.codes]
        spanning = len(np.unique(groups.codes[own != placed]))  # groups placed whole against some samples' bins
        plan = plan.model_copy(update={"parameters": {**plan.parameters, "thresholds_from": "given"},
                                       "balance": {**plan.balance, "groups_spanning_bins": spanning}})  # fmt: skip
        return _with_association(plan, spec, f"covariate bins of {self.by}")

    def target_fraction(self) -> float:
        return 1 / self.n_splits


def _checked_thresholds(thresholds: Any) -> tuple[float, ...]:
    """Thresholds as a tuple of finite floats in strictly increasing order (``invalid_argument`` otherwise)."""
    if isinstance(thresholds, (str, bytes)) or not isinstance(thresholds, (list, tuple, np.ndarray)):
        raise DepgraphError("invalid_argument", f"thresholds takes a list of numbers, not {thresholds!r}")
    if not all(real_number(t) and math.isfinite(t) for t in thresholds) or not len(thresholds):
        raise DepgraphError("invalid_argument", f"thresholds must be finite numbers, at least one: {thresholds!r}")
    out = tuple(float(t) for t in thresholds)
    if (np.diff(out) <= 0).any():
        raise DepgraphError("invalid_argument", f"thresholds must increase strictly, not {list(out)}")
    return out


def _with_association(plan: FoldPlan, spec: SplitSpec, what: str) -> FoldPlan:
    """``plan`` whose balance reports how strongly its folds follow the outcome (warning when strongly)."""
    fold = np.full(spec.n_samples, -1, dtype=np.int64)
    for f, split in enumerate(plan.splits):
        fold[split.test] = f
    association = fold_association(spec.samples, fold, what)
    return plan.model_copy(update={"balance": {**plan.balance, "association": association}})


def _column_names(value: Any, what: str) -> tuple[str, ...]:
    """Column names as a tuple, none repeated (empty: none)."""
    if value is None or (isinstance(value, (list, tuple)) and not value):
        return ()
    listed = names(value, what)
    repeated = sorted({c for c in listed if listed.count(c) > 1})
    if repeated:
        raise DepgraphError("invalid_argument", f"{what} names {describe_ids(repeated)} more than once")
    return tuple(listed)


@dataclass(frozen=True)
class BalancedHoldout(FoldScheme):
    """A holdout of whole groups balanced over several categorical columns and their joint cells, stable as
    batches arrive.

    Guarantee: no group is split; every group a ``prior`` spec placed keeps its side; the test side holds close to
    ``test_fraction`` of every category of every ``balance`` column, of every cell of ``joint`` columns at once
    (``joint=2``, the default: every pair), and of the samples::

        balance=(age, sex), joint=2      test share of each        a per-stratum random 20 %
                                         age        0.200          drifts in small strata;
        patients ──► groups ──► sides    sex        0.200          here margins and cells
                                         age × sex  0.19 – 0.21    are held together

    How: new groups are placed one by one (largest first, ties in seeded order) on the side that lowers a
    chi-square over all those counts, ``Σ (N_test − f·N)² / (f·N) + (N_train − (1−f)·N)² / ((1−f)·N)``; then a
    local search moves or swaps groups between the sides while that lowers it (up to
    :data:`~depgraph.folds.balancing.SEARCH_GROUPS` new groups). A group the prior placed on both sides (its
    samples merged since) takes the side holding more of its prior samples; the plan counts them. The plan reports
    per category the scaled difference ``(N_test − f·N)/(f·N)``, and for the cells of every pair of columns the
    mean and worst of it over cells of at least :data:`~depgraph.spec.balance.CELL_MIN_SAMPLES` samples.

    >>> import pandas as pd
    >>> from depgraph.spec.model import Constraint, SplitSpec
    >>> frame = pd.DataFrame({"sample_id": [f"S{i:02d}" for i in range(40)],
    ...                       "group_id": [f"P{i // 2:02d}" for i in range(40)],
    ...                       "sex": ["f", "m"] * 20, "age": ["young"] * 20 + ["old"] * 20})
    >>> spec = SplitSpec.build(frame, constraint=Constraint(mode="subject"), recommended_resampling="grouped_cv")
    >>> plan = BalancedHoldout(test_fraction=0.2, balance=("sex", "age")).plan(spec)
    >>> plan.balance["columns"]["age"]["scaled_difference"], plan.balance["joint_cells"]["cells"]
    ([[0.0, 0.0]], 4)
    """

    name: ClassVar[str] = "balanced-holdout"
    test_fraction: float = TEST_FRACTION.field(0.2)
    balance: tuple[str, ...] = BALANCE.field(("stratum",))
    joint: int = JOINT.field(PAIRS)
    seed: int = SEED.field(0)
    prior: SplitSpec | None = PRIOR.field(None, repr=False)  # noqa: RUF009 - a dataclasses.field, with metadata

    def __post_init__(self) -> None:
        super().__post_init__()
        # the prior's sides for the last spec planned (splits, plan and findings all read them), out of equality
        # and the parameters, as GraphCache keeps a graph's memos
        object.__setattr__(self, "_sides_memo", {})
        check_joint(self.joint, "joint")
        if self.prior is not None:
            instance(self.prior, SplitSpec, "prior")
        if self.balance is not None:  # one name, not its characters
            object.__setattr__(self, "balance", tuple(names(self.balance, "balance")))
            # the default (pairs) stays valid with one column; a larger joint than the columns is a mistyped option
            if self.joint > max(len(self.balance), PAIRS):
                raise DepgraphError(
                    "invalid_argument",
                    f"joint is {self.joint}, but the holdout balances {len(self.balance)} column(s): joint counts the "
                    f"columns whose cells are balanced together, at most {len(self.balance)} here",
                )

    def splits(self, spec: SplitSpec) -> list[FoldSplit]:
        self.check_balance_parameters()
        groups = _Groups.of(spec)
        cells = [_categories(spec, column, "--balance")[0] for column in self.balance]
        fixed = None if self.prior is None else self._prior_sides(spec, groups).side
        test = self.tested_groups(groups.codes, groups.sizes, cells, fixed)[groups.codes]
        return [FoldSplit.of(0, 0, np.flatnonzero(test), np.empty(0, np.int64), len(test))]

    def check_balance_parameters(self) -> None:
        """``invalid_argument`` for a test fraction outside (0, 1) or no column to balance."""
        _check_fraction(self.test_fraction)
        if not self.balance:
            raise DepgraphError("invalid_argument", "balanced-holdout needs at least one --balance column")

    def tested_groups(
        self,
        codes: np.ndarray,
        sizes: np.ndarray,
        cells: list[np.ndarray],
        fixed: np.ndarray | None,
        weights: np.ndarray | None = None,
    ) -> np.ndarray:
        """Whether each group (``sizes`` samples; ``fixed``: its side from a prior, -1 new) is tested, from rows
        of samples (``codes``: a row's group; ``cells``: its category code in each balance column; ``weights``:
        how many samples a row stands for, one each unless given), so an engine may pass each group's distinct
        category combinations with their counts instead of its samples."""
        n = len(sizes)
        if n < 2:
            raise DepgraphError("too_few_groups", f"a holdout needs at least 2 groups; the spec has {n}")
        counts = _cell_counts(_Groups(codes, np.arange(n), sizes), cells, self.joint, weights)
        fixed = np.full(n, -1, dtype=np.int64) if fixed is None else fixed
        rng = np.random.default_rng([self.seed, 0])
        new = np.flatnonzero(fixed < 0)
        order = new[np.lexsort((rng.random(len(new)), -sizes[new]))]  # largest first, ties seeded
        side = balanced_sides(counts, np.ones(counts.shape[1]), self.test_fraction, fixed, order, rng)
        if (side == 1).all() or (side == 0).all():
            raise DepgraphError("too_few_groups", "the balanced holdout put every group on one side")
        return side == 1

    def parameters(self) -> dict[str, Any]:
        out = {"test_fraction": self.test_fraction, "balance": list(self.balance), "joint": self.joint}
        if self.prior is not None:
            out["prior_digest"] = self.prior.digest
        return out

    def plan(self, spec: SplitSpec) -> FoldPlan:
        plan = super().plan(spec)
        if self.prior is not None:
            kept = self.prior_balance(self._prior_sides(spec, _Groups.of(spec)))
            plan = plan.model_copy(update={"balance": {**plan.balance, **kept}})
        return plan

    @staticmethod
    def prior_balance(sides: PriorSides) -> dict[str, int]:
        """What the plan's balance says of the prior kept."""
        return {"prior_groups": int((sides.side >= 0).sum()), "prior_groups_on_both_sides": sides.conflicts,
                "prior_samples_moved": sides.n_moved}  # fmt: skip

    def findings(self, spec: SplitSpec) -> list[SpecWarning]:
        if self.prior is None:
            return []
        sides = self._prior_sides(spec, _Groups.of(spec))
        return self.moved_findings(sides)

    def moved_findings(self, sides: PriorSides) -> list[SpecWarning]:
        """The ``prior_side_changed`` warning naming the returning samples that cannot keep their side, if any."""
        if not sides.n_moved:
            return []
        assert self.prior is not None
        return [SpecWarning(code="prior_side_changed", message=moved_message(self.prior, sides),
                            count=sides.n_moved, ids=sides.moved_ids)]  # fmt: skip

    def _prior_sides(self, spec: SplitSpec, groups: _Groups) -> PriorSides:
        """The prior's sides for ``spec``, worked out once per spec."""
        assert self.prior is not None
        memo: dict[str, PriorSides] = self._sides_memo  # type: ignore[attr-defined]
        if spec.digest not in memo:  # equal digests, equal content
            memo.clear()
            memo[spec.digest] = prior_sides(self.prior, spec, groups.codes, groups.ids)
        return memo[spec.digest]

    def balance_columns(self, columns: list[str]) -> list[str]:
        return list(self.balance)

    def target_fraction(self) -> float:
        return self.test_fraction


def _cell_codes(cells: list[np.ndarray], joint: int) -> Iterator[np.ndarray]:
    """Each sample's category in every column, then its cell in every pair of columns, every triple … up to
    ``joint`` columns at once (codes ``0..n-1`` over the cells that occur)."""
    for r in range(1, min(joint, len(cells)) + 1):
        for combination in itertools.combinations(cells, r):
            code = combination[0]
            for other in combination[1:]:  # compact after each column: codes never outgrow the sample count
                code, _ = pd.factorize(code.astype(np.int64) * (int(other.max()) + 1) + other, sort=True)
            yield code


def _cell_counts(
    groups: _Groups, cells: list[np.ndarray], joint: int, weights: np.ndarray | None = None
) -> sp.csr_matrix:
    """Groups × (every category and joint cell, then the sample count): how many samples of each group fall in
    each. Every column weighs the same in the balanced holdout's objective: weighting the categories of single
    columns 2, 4 or 8 times a joint cell changed neither balance by more than noise once the local search runs
    (benchmarks/bench_holdout.py, five trials each)."""
    import scipy.sparse as sp  # here, not at the top: only the balancing schemes count cells, and the folds
    # command should not pay a seventh of a second to load scipy for a grouped k-fold

    rows, columns = [], []
    offset = 0
    for code in _cell_codes(cells, joint):
        rows.append(groups.codes)
        columns.append(code + offset)
        offset += int(code.max()) + 1
    rows.append(groups.codes)
    columns.append(np.full(len(groups.codes), offset))
    each = np.ones(len(groups.codes)) if weights is None else np.asarray(weights, dtype=np.float64)
    counts = sp.csr_matrix(
        (np.tile(each, len(rows)), (np.concatenate(rows), np.concatenate(columns))),
        shape=(groups.n, offset + 1),
    )  # repeated (group, cell) entries are summed
    counts.sum_duplicates()
    return counts


SCHEMES: dict[str, type[FoldScheme]] = {
    s.name: s
    for s in (
        GroupedKFold,
        StratifiedGroupedKFold,
        GroupedHoldout,
        LeaveOneBlockOut,
        TimeOrdered,
        HashFolds,
        BalancedHoldout,
        CovariateBins,
    )
}


def canonical_scheme_name(name: str) -> str:
    """A fold scheme name as depgraph stores it: lower case, words joined by ``-``. Names match this way on entry,
    in the API and the CLI alike (``Group-KFold`` and ``group_kfold`` are ``group-kfold``).

    >>> canonical_scheme_name(" Stratified_Group-KFold ")
    'stratified-group-kfold'
    """
    return name.strip().lower().replace("_", "-")


def scheme_named(name: str) -> type[FoldScheme]:
    """The scheme class of ``name`` (matched by :func:`canonical_scheme_name`); an unknown name is refused by name.

    >>> scheme_named("GROUP_KFOLD").name
    'group-kfold'
    """
    cls = SCHEMES.get(canonical_scheme_name(name))
    if cls is None:
        known = describe_ids(SCHEMES, 10)
        raise DepgraphError("invalid_argument", f"unknown fold scheme {name!r}; schemes are {known}")
    return cls


def schemes_taking(parameter: str) -> list[str]:
    """Names of the schemes that take ``parameter``.

    >>> schemes_taking("stratify")
    ['stratified-group-kfold']
    """
    return [name for name, cls in SCHEMES.items() if parameter in cls.parameter_names()]


def refuse_parameters(scheme: type[FoldScheme], parameters: Iterable[str]) -> None:
    """Raise ``invalid_argument`` naming the first of ``parameters`` that ``scheme`` does not take."""
    for name in parameters:
        if name not in scheme.parameter_names():
            elsewhere = schemes_taking(name)
            where = f"; it applies to {', '.join(elsewhere)}" if elsewhere else ""
            if name in RENAMED:
                where = f"; {name} is now {RENAMED[name]}"
            raise DepgraphError(
                "invalid_argument",
                f"parameter {name!r} does not apply to scheme {scheme.name!r} (it takes "
                f"{', '.join(scheme.parameter_names()) or 'none'}){where}",
                parameter=name,
            )


def assign_folds(spec: SplitSpec, scheme: FoldScheme | str, **parameters: Any) -> SplitSpec:
    """``spec`` carrying the fold plan of ``scheme`` (an instance, or a name with its parameters). A spec of another
    engine (a :class:`~depgraph.spark.spec.SparkSpec`) is planned by that engine, with the same plan.

    >>> import pandas as pd
    >>> from depgraph.spec.model import Constraint, SplitSpec
    >>> spec = SplitSpec.build(pd.DataFrame({"sample_id": list("abcd"), "group_id": list("wxyz")}),
    ...                        constraint=Constraint(mode="subject"), recommended_resampling="grouped_cv")
    >>> assign_folds(spec, "holdout", test_fraction=0.5, seed=3).folds.splits[0].n_test
    2
    """
    engine = engine_of(spec)
    if engine is None:
        instance(spec, SplitSpec, "assign_folds: the spec")
    if isinstance(scheme, str):
        cls = scheme_named(scheme)
        refuse_parameters(cls, parameters)
        scheme = cls(**parameters)
    elif not isinstance(scheme, FoldScheme):
        raise DepgraphError(
            "invalid_argument",
            f"scheme must be a scheme name ({describe_ids(SCHEMES, 10)}) or a FoldScheme, not {scheme!r}",
        )
    elif parameters:
        raise DepgraphError("invalid_argument", "pass parameters either to the scheme or to assign_folds, not both")
    if engine is not None:  # a spec of another engine (a SparkSpec) is planned there
        return stage(engine, "assign_folds").assign_folds_request(spec, scheme)
    plan, found = scheme.plan(spec), scheme.findings(spec)
    for finding in found:  # told on stderr by the CLI; kept in the spec below
        warnings.warn(DepgraphWarning(finding.code, finding.message, ids=finding.ids), stacklevel=2)
    return spec.with_folds(plan, found)
