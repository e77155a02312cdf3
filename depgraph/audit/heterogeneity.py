"""Do the held-out blocks agree? Cochran's Q and I² across blocks (sites, studies…) on the logit scale, with
variances that let samples of one group depend on each other.

For each repeat of the fold plan, the test rows of all its splits are pooled (each sample scored by the model that
did not train on it, called at its own split's training threshold) and, for each block, four statistics are
estimated with a variance:

* ``sensitivity`` and ``specificity`` at the thresholds: ``logit`` of the proportion (half a count added on each
  side when it is 0 or 1), its variance the cluster-robust variance of the proportion over the spec's groups, taken
  to the logit scale (delta method);
* ``auc``: ``logit`` of the Mann–Whitney AUC, its variance DeLong's, summed over groups as Obuchowski's clustered
  form does;
* ``calibration_intercept`` (probabilities only: every score in [0, 1]): the intercept of logistic recalibration
  with the slope held at 1 (:mod:`depgraph.audit.calibration`), already on the logit scale.

Cochran's ``Q = Σ w_b (θ_b − θ̄)²`` with ``w_b = 1 / var_b`` and ``θ̄`` their weighted mean, ``df`` the number of
blocks less one, ``p`` from the χ² distribution on ``df``, and ``I² = max(0, (Q − df) / Q)``: the share of the spread
that chance does not explain.

**The flag** (:data:`HETEROGENEITY_ALPHA`): a repeat's blocks disagree when any statistic's ``p`` is below
``0.05 / m``, ``m`` the statistics tested (Bonferroni: the chance of a flag when the blocks agree stays at most 5 %).
A site whose scores are shifted by +0.6 logits among eight sites of 500 samples is flagged in at least 95 of 100
generated cohorts, and a cohort without a shift in at most 5 of 100 (``tests/test_evaluation_review.py``,
``benchmarks/bench_heterogeneity.py``). A block without both classes (or without an estimate) leaves that statistic's
test; a statistic estimated in fewer than two blocks is not tested.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
from scipy import stats
from scipy.special import logit

from depgraph.audit.calibration import calibration

#: The block of the samples without a ``by`` value (left out of the comparison).
MISSING_BLOCK = "(none)"
#: The family-wise chance of a heterogeneity flag when the blocks agree (split over the statistics tested).
HETEROGENEITY_ALPHA = 0.05
#: The statistics compared across blocks, in the table's order.
COMPARED: tuple[str, ...] = ("sensitivity", "specificity", "auc", "calibration_intercept")
#: The heterogeneity table's columns.
COLUMNS: tuple[str, ...] = (
    "repeat", "statistic", "n_blocks", "q", "df", "p", "i2", "alpha", "flag", "farthest", "farthest_z",
)  # fmt: skip


def heterogeneity(rows: pd.DataFrame, probabilities: bool) -> pd.DataFrame:
    """One row per repeat and statistic (:data:`COLUMNS`) from the pooled test rows ``rows`` (columns ``repeat``,
    ``block``, ``score``, ``positive``, ``called`` (at the split's threshold) and ``group`` (a code per spec group))."""
    records = []
    for repeat, pooled in rows.groupby("repeat", sort=True):
        names = [name for name in COMPARED if probabilities or name != "calibration_intercept"]
        estimates: dict[str, dict[str, tuple[float, float]]] = {name: {} for name in names}
        for block_name, block in pooled.groupby("block", sort=True):
            if block_name == MISSING_BLOCK:  # samples without a value: unknown, not one more site
                continue
            for name, estimate in block_estimates(block, probabilities).items():
                if estimate is not None:
                    estimates[name][str(block_name)] = estimate
        tested = [name for name, found in estimates.items() if len(found) >= 2]
        alpha = HETEROGENEITY_ALPHA / max(len(tested), 1)
        for name, found in estimates.items():
            record = {"repeat": int(repeat), "statistic": name, "n_blocks": len(found), "q": np.nan, "df": 0,
                      "p": np.nan, "i2": np.nan, "alpha": alpha, "flag": False, "farthest": None,
                      "farthest_z": np.nan}  # fmt: skip
            if name in tested:
                q, df, p, i2, z = cochran(np.array(list(found.values())))
                farthest = int(np.argmax(np.abs(z)))
                record.update(q=q, df=df, p=p, i2=i2, flag=bool(p < alpha), farthest=list(found)[farthest],
                              farthest_z=float(z[farthest]))  # fmt: skip
            records.append(record)
    return pd.DataFrame.from_records(records, columns=list(COLUMNS))


def cochran(estimates: np.ndarray) -> tuple[float, int, float, float, np.ndarray]:
    """Cochran's Q, its degrees of freedom, its χ² p-value, I² and each block's standardised distance from the
    weighted mean, for rows of (estimate, variance).

    >>> q, df, p, i2, z = cochran(np.array([[0.0, 0.01], [0.3, 0.01], [-0.1, 0.02]]))
    >>> round(q, 3), df, round(i2, 3), z.round(2).tolist()
    (7.0, 2, 0.714, [-1.0, 2.0, -1.41])
    """
    theta, variance = estimates[:, 0], estimates[:, 1]
    weight = 1 / variance
    mean = np.sum(weight * theta) / np.sum(weight)
    q = float(np.sum(weight * (theta - mean) ** 2))
    df = len(theta) - 1
    i2 = max(0.0, (q - df) / q) if q > 0 else 0.0
    return q, df, float(stats.chi2.sf(q, df)), i2, (theta - mean) / np.sqrt(variance)


def block_estimates(block: pd.DataFrame, probabilities: bool) -> dict[str, tuple[float, float] | None]:
    """Each compared statistic of one block as (logit-scale estimate, variance), ``None`` where undefined."""
    positive = block["positive"].to_numpy(dtype=bool)
    called = block["called"].to_numpy(dtype=bool)
    groups = block["group"].to_numpy()
    found: dict[str, tuple[float, float] | None] = {
        "sensitivity": _logit_proportion(called[positive], groups[positive]),
        "specificity": _logit_proportion(~called[~positive], groups[~positive]),
        "auc": _logit_auc(block["score"].to_numpy(dtype=np.float64), positive, groups),
    }
    if probabilities:
        fitted = calibration(block["score"].to_numpy(dtype=np.float64), positive, groups, 0.95)
        value, se = fitted["calibration_intercept"], fitted.get("calibration_intercept_se", np.nan)
        found["calibration_intercept"] = (value, se**2) if np.isfinite(value) and se > 1e-12 else None
    return found


def _logit_proportion(hit: np.ndarray, groups: np.ndarray) -> tuple[float, float] | None:
    """logit of the share of ``hit`` and its cluster-robust variance over ``groups``; ``None`` for no rows."""
    n = len(hit)
    if n == 0:
        return None
    x = float(hit.sum())
    share = x / n
    _, codes = np.unique(groups, return_inverse=True)
    n_groups = int(codes.max()) + 1
    if n_groups < 2:  # one group: its variance is not estimable from the data
        return None
    residual = np.bincount(codes, weights=hit - share, minlength=n_groups)
    variance = float(residual @ residual) / n**2 * n_groups / max(n_groups - 1, 1)
    if x in (0, n):  # half a count on each side: a finite logit, and the variance of that share
        share = (x + 0.5) / (n + 1)
        variance = share * (1 - share) / (n + 1)
    variance = max(variance, share * (1 - share) / n**2)  # never zero: one group holding every row
    return float(logit(share)), variance / (share * (1 - share)) ** 2


def _logit_auc(score: np.ndarray, positive: np.ndarray, groups: np.ndarray) -> tuple[float, float] | None:
    """logit of the AUC and the variance of that logit (DeLong's placements, summed per group as Obuchowski's
    clustered variance does); ``None`` without both classes or at an AUC of 0 or 1."""
    pos, neg = score[positive], score[~positive]
    n1, n0 = len(pos), len(neg)
    if n1 == 0 or n0 == 0:
        return None
    sorted_neg, sorted_pos = np.sort(neg), np.sort(pos)
    # each positive's share of negatives below it (ties one half), each negative's share of positives above it
    v10 = (np.searchsorted(sorted_neg, pos, "left") + np.searchsorted(sorted_neg, pos, "right")) / (2 * n0)
    v01 = (2 * n1 - np.searchsorted(sorted_pos, neg, "left") - np.searchsorted(sorted_pos, neg, "right")) / (2 * n1)
    auc = float(v10.mean())
    if not 0 < auc < 1:
        return None
    _, codes = np.unique(groups, return_inverse=True)
    n_groups = int(codes.max()) + 1
    holding = [len(np.unique(codes[positive])), len(np.unique(codes[~positive]))]
    if min(holding) < 2:
        return None
    s10 = np.bincount(codes[positive], weights=v10 - auc, minlength=n_groups)
    s01 = np.bincount(codes[~positive], weights=v01 - auc, minlength=n_groups)
    # each class's sum over the groups holding it (I10, I01 in Obuchowski's notation): DeLong's for groups of one
    f10, f01 = (h / (h - 1) for h in holding)
    variance = f10 * s10 @ s10 / n1**2 + f01 * s01 @ s01 / n0**2 + 2 * np.sqrt(f10 * f01) * (s10 @ s01) / (n1 * n0)
    if variance <= 0:
        return None
    return float(logit(auc)), float(variance / (auc * (1 - auc)) ** 2)
