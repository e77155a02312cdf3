"""What each fold holds, and whether the folds track a declared factor.

For a spec carrying folds, per repeat and fold: the test samples and groups, and the share of each category of the
outcome (``stratum``) and of each declared block (``site_group``, ``batch_group``, ``study_group``…) among them; and,
per repeat and factor, the bias-corrected **Cramér's V** between fold (the fold testing a sample; samples a repeat
trains on but never tests form one more category; samples it never uses are left out) and the factor, each group's
samples of one category counted once (the folds place whole groups: a family of ten at one site is one
observation).

**The warning** ``folds_track_factor`` (:data:`TRACKING`): V ≥ 0.2 between the folds and a factor the spec does not
group by and the scheme was not asked to split on. Folds that track a site test each model mostly on sites it saw
less of in training: the estimate mixes the model's error with the shift between sites, and a reader takes it for
the first alone. Tracking is intended, and not warned about, when the spec's groups follow the factor (its mode, or
a composite's ``via``) or the scheme splits on the column (``logo``'s ``by``, ``hash``'s ``key``); it is not warned
about either when a fold tests fewer than :data:`WARNED_FROM` groups (chance alone gives a large V there).

>>> import pandas as pd
>>> from depgraph.spec.model import Constraint, FoldPlan, SplitSpec
>>> spec = SplitSpec.build(pd.DataFrame({"sample_id": [f"S{i:02d}" for i in range(40)],
...                                      "group_id": [f"G{i:02d}" for i in range(40)],
...                                      "site_group": ["A"] * 20 + ["B"] * 20}),
...                        constraint=Constraint(mode="subject"), recommended_resampling="grouped_cv")
>>> spec = spec.with_folds(FoldPlan.from_roles(np.array([[1] * 20 + [0] * 20, [0] * 20 + [1] * 20])))
>>> fold_composition(spec, warn=False).association[["column", "cramers_v", "tracks"]].to_dict("records")
[{'column': 'site_group', 'cramers_v': 1.0, 'tracks': True}]
"""

from __future__ import annotations

import warnings
from collections.abc import Iterable
from dataclasses import dataclass

import numpy as np
import pandas as pd

from depgraph.common.arguments import instance
from depgraph.engines import engine_of, stage
from depgraph.errors import DepgraphError, DepgraphWarning
from depgraph.folds.covariates import cramers_v_of_table
from depgraph.spec.balance import categories
from depgraph.spec.model import Constraint, SplitSpec
from depgraph.vocab import BLOCK_MODES

#: Folds whose bias-corrected Cramér's V with a declared factor reaches this are said to track it. 0.2 is below the
#: outcome's 0.3 (:data:`~depgraph.folds.covariates.STRONG_ASSOCIATION`): a site or batch mix that differs between
#: folds confounds the estimate even when moderate.
TRACKING = 0.2
#: A repeat whose smallest fold tests fewer groups (of one category) than this is not warned about: with so few,
#: chance alone gives a large V (its line is printed all the same).
WARNED_FROM = 20


@dataclass(frozen=True)
class FoldComposition:
    """``sizes``: per repeat and fold, ``n_test`` and ``n_groups``; ``shares``: per repeat, fold, column and
    category, ``n`` and ``share`` of the fold's test samples; ``association``: per repeat and column, ``cramers_v``,
    ``intended`` and ``tracks`` (V ≥ :data:`TRACKING`, not intended, every fold testing at least
    :data:`WARNED_FROM` groups)."""

    sizes: pd.DataFrame
    shares: pd.DataFrame
    association: pd.DataFrame

    def lines(self) -> list[str]:
        """One line per repeat and factor, as ``depgraph folds`` prints them."""
        return [
            f"  folds vs {r.column}" + (f" (repeat {r.repeat})" if self.association["repeat"].max() else "")
            + (f": Cramér's V {r.cramers_v:.3f}" if np.isfinite(r.cramers_v) else
               ": no Cramér's V (the repeat tests a sample twice)")
            + (" (split on it)" if r.intended else "")
            + (f" >= {TRACKING}: the folds track it" if r.tracks else "")
            for r in self.association.itertuples(index=False)
        ]  # fmt: skip

    def wide(self, column: str) -> pd.DataFrame:
        """One row per repeat and fold, one column per category of ``column``: its share of the fold's tests."""
        chosen = self.shares[self.shares["column"] == column]
        return chosen.pivot_table(index=["repeat", "fold"], columns="category", values="share", fill_value=0.0)


def factor_columns(columns: Iterable[str]) -> list[str]:
    """Of a spec's sample ``columns``, its declared block columns (``site_group``…) and its outcome (``stratum``)."""
    held = set(columns)
    return [c for c in [f"{mode}_group" for mode in BLOCK_MODES] + ["stratum"] if c in held]


def fold_composition(spec: SplitSpec, *, warn: bool = True) -> FoldComposition:
    """The composition of ``spec``'s folds (see the module docstring); with ``warn``, a ``folds_track_factor``
    :class:`~depgraph.errors.DepgraphWarning` per factor the folds track. A Spark spec's is counted in Spark."""
    engine = engine_of(spec)
    if engine is None:
        instance(spec, SplitSpec, "fold_composition: the spec")
    if spec.folds is None:
        raise DepgraphError("invalid_argument", "the spec carries no folds: assign folds first (depgraph folds)")
    if engine is not None:
        return stage(engine, "fold_composition").fold_composition_request(spec, warn=warn)
    groups = spec.grouped().codes
    columns = {c: categories(spec.samples, c) for c in factor_columns(spec.samples.columns)}
    sizes, shares = [], []
    for split in spec.folds.splits:  # each split's own test side: right even where a custom plan's tests overlap
        tested = split.roles(spec.n_samples) == 1
        sizes.append({"repeat": split.repeat, "fold": split.fold, "n_test": int(tested.sum()),
                      "n_groups": len(np.unique(groups[tested]))})  # fmt: skip
        for column, (codes, names) in columns.items():
            counts = np.bincount(codes[tested], minlength=len(names))
            shares += share_rows(split.repeat, split.fold, column, names, counts)
    intended = intended_columns(spec.constraint, spec.folds.parameters)
    association = [
        _association(spec, repeat, label, column, codes, column in intended)
        for repeat, label in _fold_labels(spec).items()
        for column, (codes, _) in columns.items()
        if column != "stratum"  # the outcome's association is the plan's own (fold_outcome_association)
    ]
    return composition_of(sizes, shares, association, warn)


def share_rows(repeat: int, fold: int, column: str, names: Iterable[object], counts: np.ndarray) -> list[dict]:
    """The ``shares`` rows of one fold and column: each category's test samples and share of the fold's."""
    total = max(int(counts.sum()), 1)
    return [{"repeat": repeat, "fold": fold, "column": column, "category": str(name), "n": int(n), "share": n / total}
            for name, n in zip(names, counts, strict=True)]  # fmt: skip


def composition_of(sizes: list[dict], shares: list[dict], association: list[dict], warn: bool) -> FoldComposition:
    """The tables as one :class:`FoldComposition` (an engine's counts too), warned about with ``warn``."""
    found = FoldComposition(
        pd.DataFrame(sizes, columns=["repeat", "fold", "n_test", "n_groups"]),
        pd.DataFrame(shares, columns=["repeat", "fold", "column", "category", "n", "share"]),
        pd.DataFrame(association, columns=["repeat", "column", "cramers_v", "intended", "tracks"]),
    )
    if warn:
        _warn(found)
    return found


def _association(spec: SplitSpec, repeat: int, label: np.ndarray | None, column: str, codes: np.ndarray,
                 intended: bool) -> dict[str, object]:  # fmt: skip
    """Cramér's V between a repeat's fold labels and a column, over the samples the repeat trains or tests (one
    excluded from every split is in no fold), each group's samples of one category counted once: the folds place
    whole groups, so a family of ten at one site is one observation, not ten. NaN when the repeat tests a sample
    twice (no fold label)."""
    if label is None:
        return association_row(repeat, column, None, None, intended)
    used = label != EXCLUDED
    units = np.unique(np.stack([spec.grouped().codes[used], label[used], codes[used]]), axis=1)
    folds, rows = np.unique(units[1], return_inverse=True)
    _, columns = np.unique(units[2], return_inverse=True)
    table = np.zeros((len(folds), int(columns.max(initial=-1)) + 1), dtype=np.int64)
    np.add.at(table, (rows.reshape(-1), columns.reshape(-1)), 1)
    return association_row(repeat, column, folds, table, intended)


def association_row(repeat: int, column: str, folds: np.ndarray | None, table: np.ndarray | None,
                    intended: bool) -> dict[str, object]:  # fmt: skip
    """One ``association`` row from a repeat's contingency table of units (rows: the fold labels ``folds``, -1 for
    trained and never tested; columns: the categories present), or NaN when ``table`` is None (a sample tested twice).
    The folds track the column when V ≥ :data:`TRACKING`, it is not ``intended``, and every fold tests at least
    :data:`WARNED_FROM` units."""
    if table is None:
        return {"repeat": repeat, "column": column, "cramers_v": np.nan, "intended": intended, "tracks": False}
    v = round(cramers_v_of_table(table), 4)
    per_fold = table.sum(axis=1)[folds >= 0]
    n_folds = int(folds.max()) + 1 if len(per_fold) else 0
    smallest = np.bincount(folds[folds >= 0], weights=per_fold, minlength=n_folds).min() if n_folds else 0
    tracks = bool(v >= TRACKING and not intended and smallest >= WARNED_FROM)
    return {"repeat": repeat, "column": column, "cramers_v": v, "intended": intended, "tracks": tracks}


#: A repeat's label of a sample it never uses (excluded from every split): in no fold, left out of V.
EXCLUDED = -2


def _fold_labels(spec: SplitSpec) -> dict[int, np.ndarray | None]:
    """Per repeat, each sample's fold: the fold of the split testing it, -1 when the repeat trains on it but never
    tests it, :data:`EXCLUDED` when the repeat never uses it; ``None`` when a sample is tested twice in the repeat."""
    labels: dict[int, np.ndarray | None] = {}
    for split in spec.folds.splits:
        role = split.roles(spec.n_samples)
        label = labels.setdefault(split.repeat, np.full(spec.n_samples, EXCLUDED, dtype=np.int64))
        if label is None:
            continue
        if (label[role == 1] >= 0).any():
            labels[split.repeat] = None
            continue
        label[(role == 0) & (label == EXCLUDED)] = -1
        label[role == 1] = split.fold
    return labels


#: The fold parameters that name the columns a scheme splits on (logo's block column, hash's key columns).
SPLITTING_PARAMETERS = ("by", "key")


def intended_columns(constraint: Constraint | None, parameters: dict[str, object]) -> set[str]:
    """The columns the folds are meant to follow: the block columns of the modes the spec groups by (its mode, a
    composite's ``via``), and the columns its scheme splits on."""
    modes = [] if constraint is None else [constraint.mode, *(constraint.via or [])]
    named = [v for p in SPLITTING_PARAMETERS for v in np.atleast_1d(parameters.get(p, [])).tolist()]
    return {f"{mode}_group" for mode in modes} | {str(v) for v in named}


def _warn(found: FoldComposition) -> None:
    table = found.association
    for column in sorted(set(table.loc[table["tracks"].astype(bool), "column"])):
        rows = table[(table["column"] == column) & table["tracks"].astype(bool)]
        v = float(rows["cramers_v"].max())
        warnings.warn(
            DepgraphWarning(
                "folds_track_factor",
                f"the folds track {column}: Cramér's V {v:.3f} >= {TRACKING} between fold and {column} (repeat(s) "
                f"{', '.join(map(str, rows['repeat']))}); each model is tested on a {column} mix unlike its "
                "training data, so the estimate mixes its error with the shift between them",
                column=str(column),
                cramers_v=v,
            ),
            stacklevel=3,
        )
