"""What each fold holds, and whether the folds track a declared factor.

For a spec carrying folds, per repeat and fold: the test samples and groups, and the share of each category of the
outcome (``stratum``) and of each declared block (``site_group``, ``batch_group``, ``study_group``…) among them; and,
per repeat and factor, the bias-corrected **Cramér's V** between a sample's fold (the fold testing it; samples a
repeat never tests form one more category) and the factor.

**The warning** ``folds_track_factor`` (:data:`TRACKING`): V ≥ 0.2 between the folds and a factor the spec does not
group by and the scheme was not asked to split on. Folds that track a site test each model mostly on sites it saw
less of in training: the estimate mixes the model's error with the shift between sites, and a reader takes it for
the first alone. Tracking is intended, and not warned about, when the spec's groups follow the factor (its mode, or
a composite's ``via``) or the scheme's parameters name the column (``logo`` by site); it is not warned about
either when a fold tests fewer than :data:`WARNED_FROM` samples (chance alone gives a large V there).

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
from dataclasses import dataclass

import numpy as np
import pandas as pd

from depgraph.errors import DepgraphError, DepgraphWarning
from depgraph.folds.covariates import cramers_v
from depgraph.spec.balance import categories
from depgraph.spec.model import SplitSpec
from depgraph.vocab import BLOCK_MODES

#: Folds whose bias-corrected Cramér's V with a declared factor reaches this are said to track it. 0.2 is below the
#: outcome's 0.3 (:data:`~depgraph.folds.covariates.STRONG_ASSOCIATION`): a site or batch mix that differs between
#: folds confounds the estimate even when moderate.
TRACKING = 0.2
#: A repeat whose smallest fold tests fewer samples than this is not warned about: with so few, chance alone gives
#: a large V (its line is printed all the same).
WARNED_FROM = 20
#: The label of the samples a repeat never tests.
NOT_TESTED = "(not tested)"


@dataclass(frozen=True)
class FoldComposition:
    """``sizes``: per repeat and fold, ``n_test`` and ``n_groups``; ``shares``: per repeat, fold, column and
    category, ``n`` and ``share`` of the fold's test samples; ``association``: per repeat and column, ``cramers_v``,
    ``intended`` and ``tracks`` (V ≥ :data:`TRACKING`, not intended, every fold testing at least
    :data:`WARNED_FROM` samples)."""

    sizes: pd.DataFrame
    shares: pd.DataFrame
    association: pd.DataFrame

    def lines(self) -> list[str]:
        """One line per repeat and factor, as ``depgraph folds`` prints them."""
        return [
            f"  folds vs {r.column}" + (f" (repeat {r.repeat})" if self.association["repeat"].max() else "")
            + f": Cramér's V {r.cramers_v:.3f}" + (" (split on it)" if r.intended else "")
            + (f" >= {TRACKING}: the folds track it" if r.tracks else "")
            for r in self.association.itertuples(index=False)
        ]  # fmt: skip

    def wide(self, column: str) -> pd.DataFrame:
        """One row per repeat and fold, one column per category of ``column``: its share of the fold's tests."""
        chosen = self.shares[self.shares["column"] == column]
        return chosen.pivot_table(index=["repeat", "fold"], columns="category", values="share", fill_value=0.0)


def factor_columns(spec: SplitSpec) -> list[str]:
    """The spec's declared block columns (``site_group``…) and its outcome (``stratum``), those it holds."""
    wanted = [f"{mode}_group" for mode in BLOCK_MODES] + ["stratum"]
    return [c for c in wanted if c in spec.samples.columns]


def fold_composition(spec: SplitSpec, *, warn: bool = True) -> FoldComposition:
    """The composition of ``spec``'s folds (see the module docstring); with ``warn``, a ``folds_track_factor``
    :class:`~depgraph.errors.DepgraphWarning` per factor the folds track."""
    if spec.folds is None:
        raise DepgraphError("invalid_argument", "the spec carries no folds: assign folds first (depgraph folds)")
    groups = spec.grouped().codes
    columns = {c: categories(spec.samples, c) for c in factor_columns(spec)}
    sizes, shares, association = [], [], []
    for repeat, label in _fold_labels(spec).items():
        for fold in np.unique(label[label >= 0]).tolist():
            tested = label == fold
            sizes.append({"repeat": repeat, "fold": fold, "n_test": int(tested.sum()),
                          "n_groups": len(np.unique(groups[tested]))})  # fmt: skip
            for column, (codes, names) in columns.items():
                counts = np.bincount(codes[tested], minlength=len(names))
                total = max(int(tested.sum()), 1)
                shares += [{"repeat": repeat, "fold": fold, "column": column, "category": str(name), "n": int(n),
                            "share": n / total} for name, n in zip(names, counts, strict=True)]  # fmt: skip
        for column, (codes, _) in columns.items():
            if column != "stratum":  # the outcome's association is the plan's own (fold_outcome_association)
                v = round(cramers_v(label, codes), 4)
                intended = _intended(spec, column)
                smallest = np.bincount(label[label >= 0]).min() if (label >= 0).any() else 0
                tracks = bool(v >= TRACKING and not intended and smallest >= WARNED_FROM)
                association.append({"repeat": repeat, "column": column, "cramers_v": v, "intended": intended,
                                    "tracks": tracks})  # fmt: skip
    found = FoldComposition(
        pd.DataFrame(sizes, columns=["repeat", "fold", "n_test", "n_groups"]),
        pd.DataFrame(shares, columns=["repeat", "fold", "column", "category", "n", "share"]),
        pd.DataFrame(association, columns=["repeat", "column", "cramers_v", "intended", "tracks"]),
    )
    if warn:
        _warn(found)
    return found


def _fold_labels(spec: SplitSpec) -> dict[int, np.ndarray]:
    """Per repeat, each sample's fold: the fold of the split testing it, -1 when the repeat never tests it."""
    labels: dict[int, np.ndarray] = {}
    for split in spec.folds.splits:
        label = labels.setdefault(split.repeat, np.full(spec.n_samples, -1, dtype=np.int64))
        label[split.roles(spec.n_samples) == 1] = split.fold
    return labels


def _intended(spec: SplitSpec, column: str) -> bool:
    """Whether the spec groups by the factor of ``column`` or its scheme was asked to split on the column."""
    mode = column.removesuffix("_group")
    constraint = spec.constraint
    if constraint is not None and (constraint.mode == mode or mode in (constraint.via or [])):
        return True
    named = [v for value in spec.folds.parameters.values() for v in (value if isinstance(value, list) else [value])]
    return column in named or mode in named


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
