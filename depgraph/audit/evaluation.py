"""Evaluation that cannot hide a shift: per split and per held-out block, AUC beside the metrics at a threshold
fixed on that split's training predictions, with intervals from a bootstrap over the spec's groups.

:func:`evaluate` takes a spec carrying folds and a table of predictions made by any language or framework — one
row per sample and split: ``sample_id``, ``split`` (the split's index in the plan, 0-based; or ``repeat`` and
``fold`` as :func:`~depgraph.adapters.frames.fold_table` writes them), ``role`` (``train`` / ``test``),
``score`` (higher means positive) and ``label`` (or, without one, the spec's outcome column ``stratum``).

Guarantees:

* a split's threshold is chosen from its **training** rows only: changing the test rows' scores never moves it;
* AUC is the Mann–Whitney statistic, ties counted one half; sensitivity, specificity, balanced accuracy, PPV and
  NPV are taken at the training threshold (a score at or above it predicts positive);
* intervals resample the spec's **groups** (never samples), so samples that depend on each other move together;
  they are percentile intervals, the same for the same ``seed``;
* a block whose AUC is at least :data:`SHIFT_AUC` while its balanced accuracy at the training threshold is at most
  :data:`SHIFT_BALANCED_ACCURACY` is flagged as a score shift: it ranks well but the threshold no longer fits;
* every row is checked against the spec: unknown samples and splits are ``reference`` errors, a role the fold
  plan contradicts is an ``integrity`` error, a (sample, split) given twice is ``duplicate_id``, a score that is
  not a finite number or a label that is not one of two classes is ``invalid_value``.

>>> from depgraph.spec.model import Constraint, FoldPlan, SplitSpec
>>> spec = SplitSpec.build(pd.DataFrame({"sample_id": list("abcdefgh"), "group_id": list("abcdefgh")}),
...                        constraint=Constraint(mode="subject"), recommended_resampling="grouped_cv")
>>> spec = spec.with_folds(FoldPlan.from_roles(np.array([[0, 0, 0, 0, 1, 1, 1, 1]]), scheme="custom"))
>>> predictions = pd.DataFrame({"sample_id": list("abcdefgh"), "split": 0, "role": ["train"] * 4 + ["test"] * 4,
...                             "score": [0.1, 0.2, 0.8, 0.9, 0.15, 0.3, 0.7, 0.95], "label": [0, 0, 1, 1] * 2})
>>> row = evaluate(spec, predictions, n_boot=0).table.iloc[0]
>>> float(row.threshold), float(row.auc), float(row.sensitivity), float(row.specificity)
(0.8, 1.0, 0.5, 1.0)
"""

from __future__ import annotations

import math
import os
import warnings
import zlib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import orjson
import pandas as pd
import scipy.sparse as sp
from scipy.special import stdtrit

from depgraph.audit.calibration import CALIBRATION, calibration
from depgraph.audit.heterogeneity import HETEROGENEITY_ALPHA, MISSING_BLOCK, heterogeneity
from depgraph.common.arguments import instance, real_number, whole_number
from depgraph.common.display import html_block, text_table
from depgraph.common.identifiers import normalise_keys
from depgraph.errors import DepgraphError, describe_ids, describe_rows
from depgraph.folds.schemes import check_seed
from depgraph.io.files import atomic_write_bytes, describe_source, read_table
from depgraph.spec.model import SplitSpec
from depgraph.vocab import BLOCK_MODES

#: A block ranks well when its AUC is at least this ...
SHIFT_AUC = 0.8
#: ... and its scores are shifted when, at the training threshold, its balanced accuracy is at most this.
SHIFT_BALANCED_ACCURACY = 0.6
#: The statistics reported, in column order; each has ``<name>_low`` and ``<name>_high`` interval columns.
METRICS: tuple[str, ...] = ("auc", "sensitivity", "specificity", "balanced_accuracy", "ppv", "npv")
#: The threshold rules by name (a number is a fixed threshold).
THRESHOLD_RULES: tuple[str, ...] = ("youden", "sensitivity", "specificity")
#: The ``block`` of a row that covers a split's whole test side.
ALL_BLOCKS = "(all)"
#: The ``block`` of a heterogeneity flag.
ACROSS_BLOCKS = "(across blocks)"
#: At most this many bootstrap weights (resamples × distinct scores) are held at once.
_CHUNK = 4_000_000


# --------------------------------------------------------------------------- threshold rules
@dataclass(frozen=True)
class ThresholdRule:
    """How a split's threshold is chosen from its training predictions.

    ``kind`` is ``fixed`` (``value`` is the threshold), ``youden`` (the training score that maximises
    sensitivity + specificity − 1, the largest such score among equals), ``sensitivity`` (the largest training score
    keeping training sensitivity ≥ ``value``) or ``specificity`` (the smallest threshold — a training score, or just
    above the largest — reaching training specificity ≥ ``value``). A score at or above the threshold predicts
    positive.

    >>> [str(ThresholdRule.of(r)) for r in ("sensitivity=0.9", {"specificity": 0.8}, 0.5)]
    ['sensitivity=0.9', 'specificity=0.8', '0.5']
    >>> ThresholdRule.of("youden").choose(np.array([0.1, 0.4, 0.35, 0.8]), np.array([False, False, True, True]))
    0.8
    """

    kind: str
    value: float | None = None

    @classmethod
    def of(cls, rule: Any) -> ThresholdRule:
        """A rule from a number, ``"youden"``, ``"sensitivity=0.9"`` / ``"specificity=0.9"``, a number as text, or
        ``{"sensitivity": 0.9}`` / ``{"specificity": 0.9}``; anything else is ``invalid_argument``."""
        if isinstance(rule, ThresholdRule):
            return rule
        if real_number(rule):
            if not math.isfinite(float(rule)):
                raise DepgraphError("invalid_argument", f"threshold must be a finite number, not {rule!r}")
            return cls("fixed", float(rule))
        if isinstance(rule, dict) and len(rule) == 1:
            ((kind, value),) = rule.items()
            return cls._target(kind, value, rule)
        if isinstance(rule, str):
            text = rule.strip().lower()
            if text == "youden":
                return cls("youden")
            kind, sep, value = text.partition("=")
            if sep:
                return cls._target(kind.strip(), _number_text(value), rule)
            number = _number_text(text)
            if number is not None and math.isfinite(number):
                return cls("fixed", number)
        raise DepgraphError(
            "invalid_argument",
            f"threshold takes a number, 'youden', 'sensitivity=X' or 'specificity=X' (X in (0, 1]), or "
            f"{{'sensitivity': X}} / {{'specificity': X}}, not {rule!r}",
        )

    @classmethod
    def _target(cls, kind: Any, value: Any, rule: Any) -> ThresholdRule:
        if kind not in ("sensitivity", "specificity") or not real_number(value) or not 0 < float(value) <= 1:
            raise DepgraphError(
                "invalid_argument",
                f"threshold {rule!r}: a target is sensitivity or specificity with a value in (0, 1], "
                "e.g. 'sensitivity=0.9' or {'specificity': 0.95}",
            )
        return cls(str(kind), float(value))

    @property
    def needs_training(self) -> bool:
        return self.kind != "fixed"

    def __str__(self) -> str:
        if self.kind == "fixed":
            return f"{self.value:g}"
        return self.kind if self.value is None else f"{self.kind}={self.value:g}"

    def choose(self, scores: np.ndarray, positive: np.ndarray) -> float:
        """The threshold this rule picks from training ``scores`` and their classes (``positive`` booleans; a rule
        other than a fixed number needs both classes: the caller checks)."""
        if self.kind == "fixed":
            return float(self.value)
        values, first = np.unique(scores, return_inverse=True)
        n_pos = int(positive.sum())
        n_neg = len(scores) - n_pos
        pos_at = np.bincount(first, weights=positive, minlength=len(values)).astype(np.int64)
        neg_at = np.bincount(first, minlength=len(values)) - pos_at
        pos_below = np.cumsum(pos_at) - pos_at  # positives below each candidate: predicted negative
        neg_below = np.cumsum(neg_at) - neg_at
        if self.kind == "youden":
            # J·P·N in integers, so equal J are equal exactly; the largest candidate among equals
            j = (n_pos - pos_below) * n_neg + neg_below * n_pos
            return float(values[np.flatnonzero(j == j.max())[-1]])
        if self.kind == "sensitivity":
            keeps = (n_pos - pos_below) >= self.value * n_pos - 1e-9 * n_pos
            return float(values[np.flatnonzero(keeps)[-1]])
        candidates = np.append(values, np.nextafter(values[-1], np.inf))  # above every score: specificity 1
        reaches = np.append(neg_below, n_neg) >= self.value * n_neg - 1e-9 * n_neg
        return float(candidates[np.flatnonzero(reaches)[0]])


def _number_text(text: str) -> float | None:
    try:
        return float(text)
    except ValueError:
        return None


# --------------------------------------------------------------------------- the report
@dataclass(frozen=True)
class EvaluationReport:
    """One row per split and block: ``split``, ``repeat``, ``fold``, ``block`` (:data:`ALL_BLOCKS` for the whole
    test side), ``n_test``, ``n_groups``, ``n_positive``, ``threshold`` and, for each of :data:`METRICS`, the
    estimate with ``_low`` / ``_high`` interval bounds; ``shift`` flags a score shift."""

    table: pd.DataFrame
    threshold: str
    by: str | None
    n_boot: int
    confidence: float
    seed: int
    #: one row per test prediction: ``split``, ``block`` (the ``by`` value, or :data:`ALL_BLOCKS`), ``score`` and
    #: ``positive`` — what the HTML report draws as score distributions per block
    scores: pd.DataFrame = field(default_factory=pd.DataFrame, repr=False, compare=False)
    #: whether every test score is a probability (in [0, 1]): only then is calibration estimated
    probabilities: bool = False
    #: with ``by``: per repeat and statistic, Cochran's Q and I² across the blocks (:mod:`depgraph.audit.heterogeneity`)
    heterogeneity: pd.DataFrame = field(default_factory=pd.DataFrame, repr=False, compare=False)
    #: every flag of every rule, one row each (:data:`FLAG_COLUMNS`)
    flags: pd.DataFrame = field(default_factory=pd.DataFrame, repr=False, compare=False)

    @property
    def shifted(self) -> pd.DataFrame:
        """The rows flagged as a score shift."""
        return self.table[self.table["shift"]].reset_index(drop=True)

    def rule(self) -> str:
        return f"AUC ≥ {SHIFT_AUC:g} and balanced accuracy ≤ {SHIFT_BALANCED_ACCURACY:g} at the training threshold"

    def summary(self) -> str:
        splits = self.table["split"].nunique()
        intervals = (
            f"{self.confidence:.0%} intervals from {self.n_boot} bootstrap resamples of the spec's groups "
            f"(seed {self.seed})"
            if self.n_boot
            else "no intervals (n_boot=0)"
        )
        by = f", per {self.by}" if self.by else ""
        return f"{splits} split(s){by}; {self._threshold_words()}; {intervals}"

    def _threshold_words(self) -> str:
        if ThresholdRule.of(self.threshold).kind == "fixed":
            return f"a fixed threshold of {self.threshold}"
        return f"threshold chosen by {self.threshold} on each split's training predictions"

    def shown(self) -> pd.DataFrame:
        """The table as people read it: each statistic with its interval in one cell."""
        shown = self.table[["split", "repeat", "fold", "block", "n_test", "n_groups", "n_positive"]].copy()
        shown["threshold"] = [f"{t:.4g}" for t in self.table["threshold"]]
        names = [*METRICS, *(CALIBRATION if self.probabilities else ())]
        for name in names:
            shown[name] = [
                _estimate(v, lo, hi)
                for v, lo, hi in zip(
                    self.table[name], self.table[f"{name}_low"], self.table[f"{name}_high"], strict=True
                )
            ]
        if self.probabilities:
            shown.insert(len(shown.columns) - len(CALIBRATION), "brier", [_estimate(b, np.nan, np.nan)
                         for b in self.table["brier"]])  # fmt: skip
        shown["flags"] = self._row_flags()
        return shown

    def _row_flags(self) -> list[str]:
        """Each table row's flagged rules, by name."""
        named: dict[tuple[int, str], list[str]] = {}
        for r in self.flags.itertuples(index=False):
            if r.rule != "heterogeneity":
                named.setdefault((int(r.split), r.block), []).append(r.rule)
        return [", ".join(named.get((int(s), b), [])) for s, b in zip(self.table["split"], self.table["block"],
                strict=True)]  # fmt: skip

    def shown_heterogeneity(self) -> pd.DataFrame:
        """The heterogeneity table as people read it."""
        shown = self.heterogeneity[["repeat", "statistic", "n_blocks", "df"]].copy()
        shown["Q"] = [f"{q:.2f}" if np.isfinite(q) else "-" for q in self.heterogeneity["q"]]
        shown["p"] = [f"{p:.2g}" if np.isfinite(p) else "-" for p in self.heterogeneity["p"]]
        shown["I2"] = [f"{i:.0%}" if np.isfinite(i) else "-" for i in self.heterogeneity["i2"]]
        shown["farthest"] = [
            f"{b} (z {z:+.1f})" if isinstance(b, str) and np.isfinite(z) else "-"  # none when no block is tested
            for b, z in zip(self.heterogeneity["farthest"], self.heterogeneity["farthest_z"], strict=True)
        ]
        shown["flag"] = np.where(self.heterogeneity["flag"], "DISAGREE", "")
        return shown

    def rules(self) -> list[str]:
        """The rule behind each kind of flag, as printed under the tables."""
        found = [f"score shift: {self.rule()}"]
        if self.probabilities:
            found.append(f"calibration: the intercept's {self.confidence:.0%} interval excludes 0, or the slope's "
                         "excludes 1, widened for the tests in the split (Bonferroni)")  # fmt: skip
        else:
            found.append("calibration: not estimated (the scores are not probabilities in [0, 1])")
        if self.by:
            found.append(f"heterogeneity: Cochran's Q across blocks per repeat, p below {HETEROGENEITY_ALPHA:g} "
                         "divided by the statistics tested")  # fmt: skip
        return found

    def shift_lines(self) -> list[str]:
        return list(self.flags.loc[self.flags["rule"] == "score_shift", "detail"])

    def flag_lines(self) -> list[str]:
        return list(self.flags["detail"])

    def __str__(self) -> str:
        return "\n".join(text for _, text in self.parts())

    def parts(self) -> list[tuple[str, str]]:
        """The printed answer as ``("line", text)`` and ``("table", aligned text)`` pieces, in order: what a
        terminal too narrow for a table cuts (the command line) while a line wraps."""
        parts = [("line", self.summary()), ("table", text_table(self.shown()))]
        if len(self.heterogeneity):
            parts += [("line", f"agreement across {self.by} blocks (test rows of each repeat pooled):"),
                      ("table", text_table(self.shown_heterogeneity()))]  # fmt: skip
        flagged = self.flag_lines()
        lines = [f"{len(flagged)} flag(s):", *flagged] if flagged else ["no flag"]
        lines += [f"rule: {r}" for r in self.rules()]
        if not len(self.shifted):
            lines.append(f"no score shift ({self.rule()})")
        return parts + [("line", line) for line in lines]

    def __repr__(self) -> str:
        return (
            f"EvaluationReport({self.summary()}; {len(self.flags)} flag(s), {int(self.table['shift'].sum())} "
            "shifted block(s))"
        )

    def _repr_html_(self) -> str:
        return html_block("evaluation", [self.summary(), *self.flag_lines()], [("", self.shown())])

    def to_json_dict(self) -> dict[str, Any]:
        """The report as JSON values (a missing statistic is ``null``)."""
        return {
            "threshold": self.threshold,
            "by": self.by,
            "n_boot": self.n_boot,
            "confidence": self.confidence,
            "seed": self.seed,
            "probabilities": self.probabilities,
            "shift_rule": {"auc_at_least": SHIFT_AUC, "balanced_accuracy_at_most": SHIFT_BALANCED_ACCURACY},
            "heterogeneity_rule": {"family_alpha": HETEROGENEITY_ALPHA, "correction": "bonferroni"},
            "rows": _records(self.table),
            "heterogeneity": _records(self.heterogeneity),
            "flags": _records(self.flags),
        }

    def write_json(self, path: str | os.PathLike[str]) -> None:
        """Write :meth:`to_json_dict` as indented JSON, atomically."""
        atomic_write_bytes(path, orjson.dumps(self.to_json_dict(), option=orjson.OPT_INDENT_2))


def companion_tables(output: str | os.PathLike[str]) -> dict[str, Path]:
    """Where a table written with ``-o NAME.csv`` (any table suffix) puts the flag table and the heterogeneity
    table (its columns only, without ``by``: never an older run's left beside the new table): ``NAME.flags.csv``
    and ``NAME.heterogeneity.csv`` beside it.

    >>> {k: str(v) for k, v in companion_tables("out/eval.tsv").items()}
    {'flags': 'out/eval.flags.tsv', 'heterogeneity': 'out/eval.heterogeneity.tsv'}
    """
    path = Path(output)
    return {name: path.with_name(f"{path.stem}.{name}{path.suffix}") for name in ("flags", "heterogeneity")}


def _records(table: pd.DataFrame) -> list[dict[str, Any]]:
    rows = table.astype(object).where(table.notna(), None).to_dict("records")
    return [{k: _plain(v) for k, v in row.items()} for row in rows]


def _estimate(value: float, low: float, high: float) -> str:
    if not np.isfinite(value):
        return "-"
    return f"{value:.3f}" if not np.isfinite(low) else f"{value:.3f} [{low:.3f}, {high:.3f}]"


def _plain(value: Any) -> Any:
    if isinstance(value, (np.bool_, bool)):
        return bool(value)
    if isinstance(value, np.integer):
        return int(value)
    if isinstance(value, (np.floating, float)):
        return float(value) if math.isfinite(value) else None
    return value


# --------------------------------------------------------------------------- evaluate
@dataclass(frozen=True)
class Predictions:
    """A predictions table checked against a spec: per row its spec position, split index, whether it is a test
    row, its score and whether it is positive."""

    position: np.ndarray
    split: np.ndarray
    test: np.ndarray
    score: np.ndarray
    positive: np.ndarray


def evaluate(
    spec: SplitSpec,
    predictions: Any,
    *,
    threshold: Any = "youden",
    by: str | None = None,
    label: str | None = None,
    positive: Any = None,
    n_boot: int = 1000,
    seed: int = 0,
    confidence: float = 0.95,
    encoding: str | None = None,
) -> EvaluationReport:
    """AUC and the metrics at a training threshold, per split of ``spec``'s fold plan and, with ``by`` (a spec
    sample column such as ``site_group``, or a block mode such as ``site``), per block of each split's test side.

    ``predictions`` is a DataFrame or a CSV/TSV/Parquet path (see the module docstring for its columns); ``label``
    names its label column (default ``label``, else the spec's outcome column ``stratum``); ``positive`` the
    positive class (default ``1`` or ``true`` when the labels are 0/1 or false/true). ``threshold``: a number,
    ``"youden"``, ``"sensitivity=X"`` / ``"specificity=X"`` or ``{"sensitivity": X}``. ``n_boot`` group
    resamples (0: no intervals) give ``confidence`` percentile intervals, deterministic for ``seed``.
    """
    instance(spec, SplitSpec, "evaluate: the spec")
    if spec.folds is None:
        raise DepgraphError("invalid_argument", "the spec carries no folds: assign folds first (depgraph folds)")
    rule = ThresholdRule.of(threshold)
    by = block_column(spec, by)
    n_boot = whole_number(n_boot, "n_boot", minimum=0, maximum=100_000)
    seed = check_seed(seed)
    if not real_number(confidence) or not 0 < float(confidence) < 1:
        raise DepgraphError("invalid_argument", f"confidence must be a number in (0, 1), not {confidence!r}")
    rows = read_predictions(spec, predictions, label=label, positive=positive, encoding=encoding)
    if not rows.test.any():
        raise DepgraphError(
            "empty_input",
            f"{describe_source(predictions, 'predictions')} has no test rows (role test): nothing to evaluate",
        )
    # in the spec's order, whatever the table's: sums in floating point then come out the same to the last bit
    order = np.lexsort((rows.position, rows.split))
    rows = Predictions(*(getattr(rows, f)[order] for f in ("position", "split", "test", "score", "positive")))
    thresholds = _thresholds(spec, rows, rule, describe_source(predictions, "predictions"))
    block = _row_blocks(spec, rows, by)
    tested = rows.test
    probabilities = bool(np.all((rows.score[tested] >= 0) & (rows.score[tested] <= 1)))
    records = _block_records(spec, rows, block, thresholds, by, (n_boot, confidence, seed), probabilities)
    table = _report_table(records)
    scores = pd.DataFrame(
        {"split": rows.split[tested], "block": block[tested], "score": rows.score[tested],
         "positive": rows.positive[tested]}
    )  # fmt: skip
    pooled = _pooled(spec, rows, block, thresholds)
    agreement = heterogeneity(pooled if by else pooled.iloc[:0], probabilities)  # no blocks: no rows
    return EvaluationReport(
        table, str(rule), by, n_boot, float(confidence), seed, scores, probabilities, agreement,
        flag_table(table, agreement, float(confidence)),
    )  # fmt: skip


def _block_records(
    spec: SplitSpec, rows: Predictions, block: np.ndarray, thresholds: dict[int, float], by: str | None,
    bootstrap: tuple[int, float, int], probabilities: bool,
) -> list[dict[str, Any]]:  # fmt: skip
    """One record per tested split and block: the counts, the metrics with their intervals and the calibration."""
    n_boot, confidence, seed = bootstrap
    group_codes = spec.grouped().codes
    records = []
    for k in np.unique(rows.split[rows.test]):
        split = spec.folds.splits[k]
        tested = np.flatnonzero(rows.test & (rows.split == k))
        named = [(ALL_BLOCKS, tested)]
        if by is not None:
            named += sorted(
                (b, tested[at]) for b, at in pd.Series(block[tested]).groupby(block[tested]).indices.items()
            )
        for name, at in named:
            # the draws depend on the seed, the split and the block's name: not on which other blocks are there
            stream = np.random.default_rng([seed, int(k), zlib.crc32(name.encode("utf-8"))])
            groups = group_codes[rows.position[at]]
            stats = block_statistics(
                rows.score[at], rows.positive[at], groups, thresholds[k], n_boot, confidence, stream
            )
            fitted = (
                calibration(rows.score[at], rows.positive[at], groups, confidence)
                if probabilities
                else {"calibration_note": "scores are not probabilities in [0, 1]"}
            )
            records.append({"split": int(k), "repeat": split.repeat, "fold": split.fold, "block": name, **stats,
                            "threshold": thresholds[k], **fitted})  # fmt: skip
    return records


def _pooled(spec: SplitSpec, rows: Predictions, block: np.ndarray, thresholds: dict[int, float]) -> pd.DataFrame:
    """The test rows of every split, each with its repeat, block, score, class, call at its split's threshold and
    spec group: what :func:`~depgraph.audit.heterogeneity.heterogeneity` compares across blocks."""
    tested = rows.test
    split = rows.split[tested]
    repeats = np.array([s.repeat for s in spec.folds.splits])
    threshold = pd.Series(split).map(thresholds).to_numpy(dtype=np.float64)
    return pd.DataFrame(
        {"repeat": repeats[split], "block": block[tested], "score": rows.score[tested],
         "positive": rows.positive[tested], "called": rows.score[tested] >= threshold,
         "group": spec.grouped().codes[rows.position[tested]]}
    )  # fmt: skip


def _row_blocks(spec: SplitSpec, rows: Predictions, by: str | None) -> np.ndarray:
    """Each prediction row's block as text: its sample's ``by`` value (``(none)`` where it has none), or
    :data:`ALL_BLOCKS` without ``by``."""
    if by is None:
        return np.full(len(rows.position), ALL_BLOCKS, dtype=object)
    values = pd.Series(spec.samples[by].to_numpy(dtype=object)[rows.position], dtype=object)
    named = values.dropna().astype(str)
    reserved = sorted(set(named) & {ALL_BLOCKS, ACROSS_BLOCKS, MISSING_BLOCK})
    if reserved:  # a block of that name would be read as the whole test side, the comparison or the unknown
        raise DepgraphError(
            "invalid_value",
            f"by={by!r}: the spec names a block {describe_ids(reserved)}, a name the evaluation keeps for the whole "
            f"test side ({ALL_BLOCKS}), the comparison across blocks ({ACROSS_BLOCKS}) and samples without a value "
            f"({MISSING_BLOCK}): rename it",
            column=by,
        )
    return values.fillna(MISSING_BLOCK).astype(str).to_numpy(dtype=object)


def _report_table(records: list[dict[str, Any]]) -> pd.DataFrame:
    columns = ["split", "repeat", "fold", "block", "n_test", "n_groups", "n_positive", "threshold"]
    columns += [c for name in METRICS for c in (name, f"{name}_low", f"{name}_high")]
    columns += ["brier", *(c for name in CALIBRATION for c in (name, f"{name}_low", f"{name}_high"))]
    table = pd.DataFrame.from_records(records, columns=[*columns, "calibration_note"])
    table[columns[8:]] = table[columns[8:]].astype(np.float64)
    with np.errstate(invalid="ignore"):
        table["shift"] = (table["auc"] >= SHIFT_AUC) & (table["balanced_accuracy"] <= SHIFT_BALANCED_ACCURACY)
    return table


#: The flag table's columns: where (``split``, ``repeat``, ``fold``, ``block``; a heterogeneity flag is a
#: repeat's, its split and fold missing), which ``rule``, on which ``statistic``, its ``value`` and interval, and
#: the sentence printed.
FLAG_COLUMNS: tuple[str, ...] = (
    "split", "repeat", "fold", "block", "rule", "statistic", "value", "low", "high", "detail",
)  # fmt: skip


def flag_table(table: pd.DataFrame, agreement: pd.DataFrame, confidence: float) -> pd.DataFrame:
    """Every flag of every rule, one row each: ``score_shift`` (:data:`SHIFT_AUC`, :data:`SHIFT_BALANCED_ACCURACY`),
    ``calibration_intercept`` / ``calibration_slope`` (:func:`calibration_flags`) and ``heterogeneity`` (Cochran's Q
    below the Bonferroni level, :mod:`depgraph.audit.heterogeneity`)."""
    records = []
    for r in table[table["shift"]].itertuples(index=False):
        detail = (
            f"score shift in {_where(r)}: AUC {r.auc:.2f} but balanced accuracy {r.balanced_accuracy:.2f} at the "
            f"training threshold {r.threshold:.4g}"
        )
        records.append({"split": r.split, "repeat": r.repeat, "fold": r.fold, "block": r.block, "rule": "score_shift",
                        "statistic": "balanced_accuracy", "value": r.balanced_accuracy,
                        "low": r.balanced_accuracy_low, "high": r.balanced_accuracy_high,
                        "detail": detail})  # fmt: skip
    records += calibration_flags(table, confidence)
    for r in agreement[agreement["flag"]].itertuples(index=False) if len(agreement) else ():
        records.append({"split": None, "repeat": r.repeat, "fold": None, "block": ACROSS_BLOCKS,
                        "rule": "heterogeneity", "statistic": r.statistic, "value": r.q, "low": None, "high": None,
                        "detail": f"the blocks disagree on {r.statistic} in repeat {r.repeat}: Cochran's Q {r.q:.1f} "
                                  f"on {r.df} df, p {r.p:.2g} < {r.alpha:.3g}, I² {r.i2:.0%}; farthest from the "
                                  f"others: {r.farthest} (z {r.farthest_z:+.1f})"})  # fmt: skip
    flags = pd.DataFrame.from_records(records, columns=list(FLAG_COLUMNS))
    for column in ("split", "fold"):
        flags[column] = flags[column].astype("Int64")
    flags["repeat"] = flags["repeat"].astype(np.int64)
    flags[["value", "low", "high"]] = flags[["value", "low", "high"]].astype(np.float64)
    return flags


#: The rules behind the flags (a flag table lists score shifts, then calibration, then heterogeneity).
FLAG_RULES: tuple[str, ...] = ("score_shift", "calibration_intercept", "calibration_slope", "heterogeneity")


def calibration_flags(table: pd.DataFrame, confidence: float) -> list[dict[str, Any]]:
    """A split's block is flagged when its calibration intercept's interval excludes 0 or its slope's excludes 1,
    the intervals widened for the tests made in that split (Bonferroni over its rows and the two statistics: the
    chance of a flag in a well-calibrated split stays at most ``1 - confidence``). The flag carries the widened
    interval; the table shows the unadjusted ones."""
    records = []
    for _, split in table.groupby("split", sort=True):
        tests = 2 * int(split["calibration_intercept"].notna().sum())
        tail = (1 - confidence) / (2 * max(tests, 1))
        for r in split.itertuples(index=False):
            # the row's interval used Student's t on (groups - 1) df: widened on the same distribution
            df = max(int(r.n_groups) - 1, 1)
            widened = stdtrit(df, 1 - tail) / stdtrit(df, 0.5 + confidence / 2)  # Student's t quantiles
            for name, expected in (("calibration_intercept", 0.0), ("calibration_slope", 1.0)):
                value = getattr(r, name)
                half = (value - getattr(r, f"{name}_low")) * widened
                if np.isfinite(value) and abs(value - expected) > half:
                    records.append({"split": r.split, "repeat": r.repeat, "fold": r.fold, "block": r.block,
                                    "rule": name, "statistic": name, "value": value, "low": value - half,
                                    "high": value + half,
                                    "detail": f"{name.replace('_', ' ')} {value:.2f} in {_where(r)}: its interval "
                                              f"widened for {tests} tests, [{value - half:.2f}, {value + half:.2f}], "
                                              f"excludes {expected:g}"})  # fmt: skip
    return records


def _where(row: Any) -> str:
    return f"split {row.split} (repeat {row.repeat}, fold {row.fold}), block {row.block}"


def block_column(spec: SplitSpec, by: Any) -> str | None:
    """The spec sample column ``by`` names (``site`` names ``site_group``)."""
    if by is None:
        return None
    if not isinstance(by, str):
        raise DepgraphError("invalid_argument", f"by takes one spec column name, not {by!r}")
    column = f"{by}_group" if by in BLOCK_MODES and by not in spec.samples.columns else by
    if column == "sample_id" or column not in spec.samples.columns:
        usable = [c for c in spec.samples.columns if c != "sample_id"]
        raise DepgraphError(
            "invalid_argument",
            f"by={by!r}: the spec has no such sample column (it has {describe_ids(usable, 12)})",
            column=by,
        )
    return column


def _thresholds(spec: SplitSpec, rows: Predictions, rule: ThresholdRule, what: str) -> dict[int, float]:
    """Each tested split's threshold, from its training rows only (``invalid_value`` naming the split when the rule
    needs both classes among them and they lack one)."""
    found = {}
    for k in np.unique(rows.split[rows.test]).tolist():
        train = ~rows.test & (rows.split == k)
        n_pos = int(rows.positive[train].sum())
        if rule.needs_training and (n_pos == 0 or n_pos == int(train.sum())):
            split = spec.folds.splits[k]
            lacking = "positive" if n_pos == 0 else "negative"
            found_rows = (
                "no training row" if not train.any() else f"no {lacking} among its {int(train.sum())} training rows"
            )
            raise DepgraphError(
                "invalid_value",
                f"{what}: split {k} (repeat {split.repeat}, fold {split.fold}) has {found_rows}: the threshold rule "
                f"{rule} is chosen on both classes of the training predictions (give them, or a fixed threshold)",
                split=k,
            )
        found[k] = rule.choose(rows.score[train], rows.positive[train])
    return found


# --------------------------------------------------------------------------- statistics
def block_statistics(
    score: np.ndarray,
    positive: np.ndarray,
    groups: np.ndarray,
    threshold: float,
    n_boot: int,
    confidence: float,
    rng: np.random.Generator,
) -> dict[str, Any]:
    """Counts, the :data:`METRICS` at ``threshold`` and their percentile intervals over ``n_boot`` resamples of
    ``groups`` (codes, one per row): each resample draws as many groups as there are, with replacement, and every
    row weighs as often as its group was drawn."""
    _, codes = np.unique(groups, return_inverse=True)  # in the groups' order, whatever the rows' order
    n_groups = int(codes.max()) + 1 if len(codes) else 0
    weights = _GroupWeights(score, positive, codes, n_groups, threshold)
    found: dict[str, Any] = {"n_test": len(score), "n_groups": n_groups, "n_positive": int(positive.sum())}
    point = weights.statistics(np.ones((1, n_groups)))[0]
    low = high = np.full(len(METRICS), np.nan)
    if n_boot and n_groups:
        per_chunk = max(1, _CHUNK // max(weights.n_values, n_groups))
        draws = [
            weights.statistics(group_draws(rng, n_groups, min(per_chunk, left)))
            for left in range(n_boot, 0, -per_chunk)
        ]
        tail = (1 - confidence) / 2
        with warnings.catch_warnings():  # a statistic undefined in every resample (a block of one class)
            warnings.simplefilter("ignore", RuntimeWarning)
            low, high = np.nanquantile(np.concatenate(draws), [tail, 1 - tail], axis=0)
    for i, name in enumerate(METRICS):
        found[name], found[f"{name}_low"], found[f"{name}_high"] = float(point[i]), float(low[i]), float(high[i])
    return found


def group_draws(rng: np.random.Generator, n_groups: int, n_resamples: int) -> np.ndarray:
    """How often each of ``n_groups`` groups is drawn in each of ``n_resamples`` resamples of ``n_groups`` draws with
    replacement: an (n_resamples, n_groups) count matrix (a multinomial draw, made by counting uniform picks).

    >>> group_draws(np.random.default_rng(0), 4, 3).sum(axis=1).tolist()
    [4, 4, 4]
    """
    picks = rng.integers(0, n_groups, size=(n_resamples, n_groups)) + np.arange(n_resamples)[:, None] * n_groups
    return np.bincount(picks.ravel(), minlength=n_resamples * n_groups).reshape(n_resamples, n_groups)


class _GroupWeights:
    """The per-group sums each statistic needs, so a resample of groups (draw counts, one row per resample) gives
    every statistic by matrix products: positives and negatives per (group, distinct score) for AUC, and per group
    the four cells of the confusion table at the threshold."""

    def __init__(self, score: np.ndarray, positive: np.ndarray, codes: np.ndarray, n_groups: int, t: float) -> None:
        values, at = np.unique(score, return_inverse=True)
        self.n_values = len(values)
        shape = (n_groups, len(values))
        ones = np.ones(len(score))
        self.positives = sp.csr_matrix((ones[positive], (codes[positive], at[positive])), shape=shape)
        self.negatives = sp.csr_matrix((ones[~positive], (codes[~positive], at[~positive])), shape=shape)
        called = score >= t
        cells = np.stack([positive & called, positive & ~called, ~positive & called, ~positive & ~called], axis=1)
        self.cells = np.stack([np.bincount(codes, weights=c, minlength=n_groups) for c in cells.T], axis=1)

    def statistics(self, counts: np.ndarray) -> np.ndarray:
        """The :data:`METRICS` for each row of ``counts`` (how often each group is drawn): NaN where undefined."""
        counts = np.asarray(counts, dtype=np.float64)
        pos = np.asarray((self.positives.T @ counts.T).T)  # (resamples, distinct scores)
        neg = np.asarray((self.negatives.T @ counts.T).T)
        below = np.cumsum(neg, axis=1) - neg
        tp, fn, fp, tn = (counts @ self.cells).T
        with np.errstate(invalid="ignore", divide="ignore"):
            auc = (pos * (below + 0.5 * neg)).sum(axis=1) / (pos.sum(axis=1) * neg.sum(axis=1))
            sensitivity, specificity = tp / (tp + fn), tn / (tn + fp)
            ppv, npv = tp / (tp + fp), tn / (tn + fn)
        return np.stack([auc, sensitivity, specificity, (sensitivity + specificity) / 2, ppv, npv], axis=1)


# --------------------------------------------------------------------------- the predictions table
def read_predictions(
    spec: SplitSpec, predictions: Any, *, label: str | None = None, positive: Any = None, encoding: str | None = None
) -> Predictions:
    """A predictions table (DataFrame or CSV/TSV/Parquet path) checked against ``spec``'s samples and fold plan."""
    table = read_table(predictions, "predictions", encoding=encoding)
    what = describe_source(predictions, "predictions")
    split_columns = ["split"] if "split" in table.columns or "repeat" not in table.columns else ["repeat", "fold"]
    for column in ("sample_id", *split_columns, "role", "score"):
        if column not in table.columns:
            raise DepgraphError(
                "schema",
                f"{what} has no {column!r} column (it needs sample_id, split (or repeat and fold), role, score and "
                f"the label; columns: {describe_ids(table.columns, 12)})",
                column=column,
            )
    if table.empty:
        raise DepgraphError("empty_input", f"{what} has no rows")
    position = spec.positions(table["sample_id"], f"{what}: sample_id")
    split = _split_index(spec, table, split_columns, what)
    test = _roles(table["role"], what)
    _check_plan(spec, position, split, test, what)
    return Predictions(position, split, test, _scores(table["score"], what), _labels(spec, table, position, label,
                       positive, what))  # fmt: skip


def _split_index(spec: SplitSpec, table: pd.DataFrame, columns: list[str], what: str) -> np.ndarray:
    """Each row's split, as its index in the plan: from ``split`` (the index) or ``repeat`` and ``fold``."""
    splits = spec.folds.splits
    if columns == ["split"]:
        keys = normalise_keys(table["split"], "split").to_numpy(dtype=object)
        found = pd.Index([str(i) for i in range(len(splits))]).get_indexer(keys)
    else:
        pairs = [normalise_keys(table[c], c).to_numpy(dtype=object) for c in columns]
        plan = pd.MultiIndex.from_arrays([[str(s.repeat) for s in splits], [str(s.fold) for s in splits]])
        found = plan.get_indexer(pd.MultiIndex.from_arrays(pairs))
        keys = np.empty(len(found), dtype=object)
        if (found < 0).any():  # only the unknown ones are named, so only they become text
            keys[found < 0] = [
                f"repeat {r}, fold {f}" for r, f in zip(pairs[0][found < 0], pairs[1][found < 0], strict=True)
            ]
    if (found < 0).any():
        unknown = [str(k) for k in pd.unique(keys[found < 0])]
        raise DepgraphError(
            "reference",
            f"{what}: {int((found < 0).sum())} row(s) name splits the spec's plan does not have: "
            f"{describe_ids(unknown)} (the plan has {len(splits)} splits: split 0 to {len(splits) - 1}, or its "
            "repeat and fold)",
            ids=unknown[:50],
        )
    return found.astype(np.int64)


def _roles(values: pd.Series, what: str) -> np.ndarray:
    """``True`` for test rows, ``False`` for training rows; any other role is ``invalid_value`` naming rows."""
    role = normalise_keys(values, "role").str.lower()
    other = ~role.isin(["train", "test"]).to_numpy()
    if other.any():
        rows = np.flatnonzero(other)
        seen = describe_ids(
            ["(missing)" if pd.isna(v) else str(v) for v in pd.unique(role.to_numpy(dtype=object)[rows])]
        )
        raise DepgraphError(
            "invalid_value",
            f"{what}: role is train or test; {describe_rows(rows)} hold {seen}",
            column="role",
            rows=rows[:50].tolist(),
        )
    return (role == "test").to_numpy()


def _check_plan(spec: SplitSpec, position: np.ndarray, split: np.ndarray, test: np.ndarray, what: str) -> None:
    """Every row's role is the one the plan gives its sample in its split (``integrity`` naming the first rows
    otherwise: a prediction for the wrong side of a split), and no (sample, split) comes twice (``duplicate_id``)."""
    key = split * spec.n_samples + position
    repeated = pd.Series(key).duplicated(keep=False).to_numpy()
    if repeated.any():
        rows = np.flatnonzero(repeated)
        pairs = [f"{spec.sample_ids[position[r]]} in split {split[r]}" for r in rows[:5]]
        raise DepgraphError(
            "duplicate_id",
            f"{what}: {describe_rows(rows)} repeat a sample in one split ({describe_ids(pairs, 5, len(rows))}): "
            "give each sample one prediction per split",
            rows=rows[:50].tolist(),
        )
    planned = np.empty(len(position), dtype=np.int8)
    for k in np.unique(split).tolist():
        at = split == k
        planned[at] = spec.folds.splits[k].roles(spec.n_samples)[position[at]]
    wrong = np.flatnonzero(planned != test.astype(np.int8))
    if len(wrong):
        named = ["train", "test", "excluded"]
        shown = [
            f"{spec.sample_ids[position[r]]} ({'test' if test[r] else 'train'} in split {split[r]}, where the plan "
            f"has it {named[planned[r]]})"
            for r in wrong[:3]
        ]
        raise DepgraphError(
            "integrity",
            f"{what}: {describe_rows(wrong)} contradict the spec's fold plan: {describe_ids(shown, 3, len(wrong))}; "
            "predictions must come from the spec's own splits",
            rows=wrong[:50].tolist(),
            ids=[str(spec.sample_ids[position[r]]) for r in wrong[:50]],
        )


def _scores(values: pd.Series, what: str) -> np.ndarray:
    """Scores as finite floats (``invalid_value`` naming the rows that are not)."""
    numbers = pd.to_numeric(values, errors="coerce") if not pd.api.types.is_bool_dtype(values) else values * np.nan
    score = np.asarray(numbers, dtype=np.float64)
    bad = np.flatnonzero(~np.isfinite(score))
    if len(bad):
        shown = describe_ids([repr(v) for v in values.to_numpy(dtype=object)[bad[:5]]], 5, len(bad))
        raise DepgraphError(
            "invalid_value",
            f"{what}: score must be a finite number; {describe_rows(bad)} hold {shown}",
            column="score",
            rows=bad[:50].tolist(),
        )
    return score


def _labels(
    spec: SplitSpec, table: pd.DataFrame, position: np.ndarray, label: str | None, positive: Any, what: str
) -> np.ndarray:
    """Each row's class as a boolean (``True``: positive), from the label column or the spec's outcome."""
    if label is not None and not isinstance(label, str):
        raise DepgraphError("invalid_argument", f"label takes one column name, not {label!r}")
    if label is not None and label not in table.columns:
        raise DepgraphError("schema", f"{what} has no label column {label!r}", column=str(label))
    column = label or ("label" if "label" in table.columns else None)
    if column is not None:
        values, source = normalise_keys(table[column], column), f"{what}: {column}"
    elif "stratum" in spec.samples.columns:
        values = normalise_keys(spec.samples["stratum"].to_numpy(dtype=object)[position], "stratum")
        source = "the spec's outcome (stratum)"
    else:
        raise DepgraphError(
            "schema",
            f"{what} has no 'label' column and the spec records no outcome: give the labels (label=, --label)",
            column="label",
        )
    missing = np.flatnonzero(values.isna().to_numpy())
    if len(missing):
        raise DepgraphError(
            "invalid_value", f"{source}: {describe_rows(missing)} have no label", rows=missing[:50].tolist()
        )
    classes = sorted(set(pd.unique(values.to_numpy(dtype=object)).tolist()))
    chosen = positive_class(classes, positive, source)
    return (values == chosen).to_numpy()


def positive_class(classes: list[str], positive: Any, source: str) -> str:
    """The positive class among ``classes`` (the labels as text): ``positive`` when given, else ``1`` of 0/1 or
    ``true`` of false/true; more than two classes are ``invalid_value``."""
    if len(classes) > 2:
        raise DepgraphError(
            "invalid_value",
            f"{source}: labels are binary; they hold {len(classes)} classes: {describe_ids(classes)}",
        )
    if positive is not None:
        chosen = normalise_keys(pd.Series([positive], dtype=object)).iloc[0]
        if chosen not in classes and not (len(classes) == 1 and chosen is not None):
            raise DepgraphError(
                "invalid_argument", f"positive={positive!r} is none of the labels ({describe_ids(classes)})"
            )
        return chosen
    lowered = {c.lower(): c for c in classes}
    for negative, yes in (("0", "1"), ("false", "true")):
        if set(lowered) <= {negative, yes}:
            return lowered.get(yes, yes)
    raise DepgraphError(
        "invalid_argument",
        f"{source}: labels {describe_ids(classes)} do not say which class is positive: name it (positive=, --positive)",
    )


def positive_label(labels: Any, positive: Any, source: str) -> Any:
    """The value among ``labels`` (one per row, any type) that is the positive class, chosen by
    :func:`positive_class`'s rules on the labels as text; ``positive`` itself when no label equals it.

    >>> int(positive_label(np.array([0, 1, 1]), None, "y")), positive_label(["case", "control"], "case", "y")
    (1, 'case')
    """
    values = pd.unique(pd.Series(list(labels), dtype=object))
    text = normalise_keys(pd.Series(values, dtype=object), "label").to_numpy(dtype=object)
    if pd.isna(text).any():
        raise DepgraphError("invalid_value", f"{source}: a label is missing (NaN/None): every row needs one")
    key = positive_class(sorted({str(t) for t in text}), positive, source)
    matching = [v for v, t in zip(values, text, strict=True) if str(t) == key]
    return matching[0] if matching else positive
