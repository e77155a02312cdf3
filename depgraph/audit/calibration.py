"""Calibration of probabilities on a held-out block: the Brier score and logistic recalibration, with intervals that
let samples of one group depend on each other.

For predicted probabilities ``p`` and outcomes ``y`` of a block's test rows:

* ``brier``: the mean of ``(p - y)²`` (0 is perfect; 0.25 is what ``p = 0.5`` everywhere scores at prevalence 0.5);
* ``calibration_intercept``: ``a`` in ``logit P(y) = a + logit(p)`` (the slope held at 1) — calibration in the large:
  0 when the probabilities are right on average, above 0 when they are too low;
* ``calibration_slope``: ``b`` in ``logit P(y) = a + b·logit(p)`` — 1 when the probabilities spread as the outcomes
  do, below 1 when they are too extreme (over-fitting), above 1 when too timid.

Both are fitted by maximum likelihood (Newton's method, as R's ``glm`` fits them). Their intervals are Wald intervals
from a **cluster-robust** (sandwich, CR1) variance over the spec's groups, with Student's t on (groups − 1) degrees of
freedom: samples of one group move together, as in the bootstrap of :mod:`depgraph.audit.evaluation`. A block of
one group has no interval. A block holding one class has no intercept or slope (missing, with
``calibration_note`` saying why), nor has a fit that does not converge (complete separation); the Brier score is
always given. Probabilities of exactly 0 or 1 are taken as :data:`EDGE` from them before the logit.

>>> p = np.array([0.1, 0.2, 0.3, 0.7, 0.8, 0.9, 0.2, 0.6])
>>> y = np.array([False, False, True, True, True, True, False, False])
>>> found = calibration(p, y, np.arange(8), 0.95)
>>> round(found["brier"], 4), found["calibration_note"] is None
(0.135, True)
"""

from __future__ import annotations

from typing import Any

import numpy as np
from scipy.special import expit, logit, stdtrit

#: Probabilities are held this far from 0 and 1 before their logit is taken.
EDGE = 1e-9
#: A fitted coefficient beyond this (in logits) means the fit ran off to infinity: complete separation.
DIVERGED = 30.0
#: The calibration columns, each but the Brier score with ``_low`` / ``_high`` interval bounds.
CALIBRATION: tuple[str, ...] = ("calibration_intercept", "calibration_slope")


def calibration(probability: np.ndarray, positive: np.ndarray, groups: np.ndarray, confidence: float
                ) -> dict[str, Any]:  # fmt: skip
    """The Brier score, calibration intercept and slope of one block, with ``confidence`` intervals from the
    cluster-robust variance over ``groups`` (one code per row)."""
    y = positive.astype(np.float64)
    found: dict[str, Any] = {"brier": float(np.mean((probability - y) ** 2)) if len(y) else np.nan}
    for name in CALIBRATION:
        found[name] = found[f"{name}_low"] = found[f"{name}_high"] = np.nan
    if len(y) == 0 or y.min() == y.max():
        found["calibration_note"] = "one class" if len(y) else "no rows"
        return found
    lp = logit(np.clip(probability, EDGE, 1 - EDGE))
    n_groups = len(np.unique(groups))
    if n_groups < 2:
        found["calibration_note"] = "one group: no interval (the spec's groups are what varies)"
        return found
    # Student's t on G - 1 degrees of freedom: the sandwich variance over few groups is itself uncertain
    z = stdtrit(n_groups - 1, 0.5 + confidence / 2)  # Student's t quantile (stats.t.ppf without its checks)
    fits = {
        "calibration_intercept": _logistic(np.ones((len(y), 1)), lp, y, groups),
        # a threshold on the probabilities that parts the classes: the slope's likelihood grows without bound
        "calibration_slope": None
        if _separated(lp, positive)
        else _logistic(np.column_stack([np.ones(len(y)), lp]), np.zeros(len(y)), y, groups),
    }
    notes = []
    for name, fit in fits.items():
        if fit is None:
            why = (
                "the probabilities do not vary" if np.ptp(lp) == 0 and name == "calibration_slope"
                else "the classes are separated" if name == "calibration_slope" and _separated(lp, positive)
                else "the fit did not converge"
            )  # fmt: skip
            notes.append(f"{name.removeprefix('calibration_')} not estimable ({why})")
            continue
        value, se = fit
        found[name], found[f"{name}_low"], found[f"{name}_high"] = value, value - z * se, value + z * se
        found[f"{name}_se"] = se  # for the comparison across blocks (not a column of the report)
    found["calibration_note"] = "; ".join(notes) or None
    return found


def _separated(lp: np.ndarray, positive: np.ndarray) -> bool:
    """Whether every positive is at or above every negative, or at or below (complete or quasi-complete
    separation on one covariate)."""
    pos, neg = lp[positive], lp[~positive]
    return bool(pos.min() >= neg.max() or pos.max() <= neg.min())


def _logistic(design: np.ndarray, offset: np.ndarray, y: np.ndarray, groups: np.ndarray
              ) -> tuple[float, float] | None:  # fmt: skip
    """The last coefficient of the logistic regression of ``y`` on ``design`` with ``offset``, and its
    cluster-robust standard error over ``groups``; ``None`` when the fit runs off to infinity."""
    beta = _newton(design, offset, y)
    if beta is None:
        return None
    mu = expit(offset + design @ beta)
    bread = np.linalg.pinv(_information(design, mu))
    _, codes = np.unique(groups, return_inverse=True)
    n_groups = int(codes.max()) + 1
    per_group = np.stack(
        [np.bincount(codes, weights=design[:, j] * (y - mu), minlength=n_groups) for j in range(design.shape[1])],
        axis=1,
    )
    # the small-sample factor G/(G-1) of the cluster-robust variance (CR1)
    meat = per_group.T @ per_group * (n_groups / max(n_groups - 1, 1))
    variance = bread @ meat @ bread
    return float(beta[-1]), float(np.sqrt(max(variance[-1, -1], 0.0)))


#: Newton steps before a fit that has not converged is given up (a logistic fit takes five to ten).
MOST_STEPS = 100
#: The longest Newton step (in logits): where the likelihood is nearly flat, a full step overshoots far past the
#: optimum into a region where the information vanishes.
LONGEST_STEP = 5.0


def _newton(design: np.ndarray, offset: np.ndarray, y: np.ndarray) -> np.ndarray | None:
    """The maximum-likelihood coefficients by Newton's method (iteratively reweighted least squares, as R's
    ``glm`` fits them), each step at most :data:`LONGEST_STEP` and halved until the likelihood does not fall;
    ``None`` when a coefficient passes :data:`DIVERGED` or the steps do not converge. One or two coefficients
    converge in a few steps: a general optimiser (scipy's trust-region methods) cost twenty times the fit in its
    setup, and ``evaluate`` fits two per block."""
    beta = np.zeros(design.shape[1])
    loss = _loss(design, offset, y, beta)
    for _ in range(MOST_STEPS):
        mu = expit(offset + design @ beta)
        try:
            step = np.linalg.solve(_information(design, mu), design.T @ (y - mu))
        except np.linalg.LinAlgError:
            return None
        step *= min(1.0, LONGEST_STEP / max(float(np.max(np.abs(step))), 1e-300))
        for _ in range(60):  # halved until the likelihood does not fall (it is concave: a short enough step)
            new_loss = _loss(design, offset, y, beta + step)
            if new_loss <= loss + 1e-12 * abs(loss):
                break
            step /= 2
        beta, loss = beta + step, new_loss
        if np.any(np.abs(beta) > 2 * DIVERGED):  # running off to infinity (separation)
            return None
        if np.max(np.abs(step)) < 1e-10 * (1 + np.max(np.abs(beta))):
            return beta if np.all(np.abs(beta) < DIVERGED) else None
    return None


def _loss(design: np.ndarray, offset: np.ndarray, y: np.ndarray, beta: np.ndarray) -> float:
    """The negative log-likelihood, written so a large linear predictor neither overflows nor loses the term."""
    eta = offset + design @ beta
    return float(np.sum(np.logaddexp(0, eta) - y * eta))


def _information(design: np.ndarray, mu: np.ndarray) -> np.ndarray:
    """The observed (and expected) information of a logistic fit: ``Xᵀ W X`` with ``W = μ(1 − μ)``."""
    return (design * (mu * (1 - mu))[:, None]).T @ design
