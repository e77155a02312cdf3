"""What a fold plan states about itself — its scheme, parameters, seed, splits and balance — checked against what it
holds.

A reader cannot plan again (a balanced holdout's prior and a hash's salt are not in the file), but whatever the
file's own content decides is checked: the parameters are the scheme's, each a value the scheme takes; the seed is
in range and present exactly when the scheme draws at random; the splits are as many as the parameters say, and a
k-fold plan tests every sample once per repeat; a leave-one-block-out plan tests each block it names; the balance
block is recomputed from the samples and the splits and must be what the plan says (docs/spec.md, "What a reader
checks", lists what is exempt and why). One table, :data:`PLAN_CONTRACTS`, says what each scheme records; the
schemes (:mod:`depgraph.folds.schemes`) are held to it whenever they plan, since a spec checks its folds.

>>> PLAN_CONTRACTS["group-kfold"].parameters
('n_splits', 'n_repeats')
"""

from __future__ import annotations

import itertools
import math
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc

from depgraph.common.arguments import whole_number
from depgraph.common.arrays import sorted_categories, text_array
from depgraph.errors import DepgraphError, describe_ids
from depgraph.spec.balance import MISSING_CATEGORY, balance_metrics, categories

#: Seeds are unsigned 32-bit integers: a spec records its seed as a JSON number, which every reader (R and
#: JavaScript read JSON numbers as doubles) holds exactly, and which every common RNG API accepts.
MAX_SEED = 2**32 - 1

#: The most splits a plan holds (folds × repeats): each split lists its tested samples, so a plan of a million
#: samples holds about repeats × a million positions; beyond this a mistyped option would exhaust the memory.
MAX_SPLITS = 10_000


def check_seed(seed: Any, what: str = "seed") -> int:
    """``seed`` as an int when it is an integer in ``0..MAX_SEED``; else ``invalid_argument``.

    >>> check_seed(7)
    7
    >>> check_seed(-5)
    Traceback (most recent call last):
    ...
    depgraph.errors.DepgraphError: [invalid_argument] seed must be an integer in 0..4294967295, not -5
    """
    if isinstance(seed, bool) or not isinstance(seed, (int, np.integer)) or not 0 <= seed <= MAX_SEED:
        raise DepgraphError("invalid_argument", f"{what} must be an integer in 0..{MAX_SEED}, not {seed!r}")
    return int(seed)


def check_count(value: Any, what: str, minimum: int) -> int:
    """``value`` as an int when it is an integer in ``minimum..MAX_SPLITS``; else ``invalid_argument``.

    >>> check_count(5, "n_splits", 2)
    5
    >>> check_count(10**9, "n_repeats", 1)
    Traceback (most recent call last):
    ...
    depgraph.errors.DepgraphError: [invalid_argument] n_repeats must be an integer from 1 to 10000, not 1000000000 (int)
    """
    return whole_number(value, what, minimum=minimum, maximum=MAX_SPLITS)


#: At most this many ids are kept per warning in a spec (the count is exact).
WARNING_ID_LIMIT = 50

#: Warnings a fold plan makes (:meth:`depgraph.folds.schemes.FoldScheme.findings`): kept in the spec's
#: ``warnings`` with the plan, and dropped when the plan is replaced.
PLAN_WARNING_MEANINGS: dict[str, str] = {
    "prior_side_changed": "returning samples changed side with their group: the prior grouped otherwise",
}
PLAN_WARNING_CODES = frozenset(PLAN_WARNING_MEANINGS)


@dataclass(frozen=True)
class PlanContract:
    """What a plan of one scheme records and guarantees.

    ``parameters``: the recorded parameters, each required; ``optional``: those recorded only sometimes (a prior's
    digest); ``seeded``: whether the plan records a seed; ``folds``: the parameter counting the folds of a repeat
    (``n_splits``, or ``blocks``: one per block named), or None for one; ``repeats``: whether ``n_repeats`` counts
    the repeats; ``partition``: whether each repeat tests every sample exactly once and excludes none;
    ``balanced``: the parameter naming the columns the balance reports on (None: ``stratum`` when the samples
    have it); ``target``: the parameter giving the target test fraction (``n_splits``: one over it);
    ``extra_balance``: balance entries the scheme adds that a reader cannot recompute (type-checked only);
    ``fewest_splits``: the smallest ``n_splits`` the scheme plans (a time-ordered plan may test one block).
    """

    parameters: tuple[str, ...]
    optional: tuple[str, ...] = ()
    seeded: bool = False
    folds: str | None = "n_splits"
    repeats: bool = False
    partition: bool = False
    balanced: str | None = None
    target: str | None = None
    extra_balance: tuple[str, ...] = ()
    fewest_splits: int = 2


#: What a balanced holdout kept from a prior adds to its balance (:mod:`depgraph.folds.prior`).
PRIOR_BALANCE = ("prior_groups", "prior_groups_on_both_sides", "prior_samples_moved")

#: Every scheme's contract, by the name its plans record (:data:`depgraph.folds.schemes.SCHEMES`).
PLAN_CONTRACTS: dict[str, PlanContract] = {
    "group-kfold": PlanContract(
        ("n_splits", "n_repeats"), seeded=True, repeats=True, partition=True, target="n_splits"
    ),
    "stratified-group-kfold": PlanContract(
        ("n_splits", "n_repeats", "stratify"), seeded=True, repeats=True, partition=True, balanced="stratify",
        target="n_splits",
    ),
    "holdout": PlanContract(("test_fraction", "n_repeats"), seeded=True, folds=None, repeats=True,
                            target="test_fraction"),
    "logo": PlanContract(("by", "blocks"), folds="blocks"),
    "time": PlanContract(("n_splits", "gap", "embargo", "train_after"), fewest_splits=1),
    "hash": PlanContract(
        ("n_splits", "key", "encoding", "salt_fingerprint"), partition=True, target="n_splits",
        extra_balance=("association",),
    ),
    "balanced-holdout": PlanContract(
        ("test_fraction", "balance", "joint"), optional=("prior_digest",), seeded=True, folds=None,
        balanced="balance", target="test_fraction", extra_balance=PRIOR_BALANCE,
    ),
    "covariate-bins": PlanContract(
        ("n_splits", "by", "thresholds", "thresholds_from", "group_value", "bins"), partition=True, target="n_splits",
        extra_balance=("association", "groups_spanning_bins"),
    ),
}  # fmt: skip


class StatedPlan(Protocol):
    """What the checks read of a fold plan (:class:`~depgraph.spec.model.FoldPlan`)."""

    scheme: str
    parameters: Mapping[str, Any]
    seed: int | None
    splits: Sequence[Any]
    balance: Mapping[str, Any]


def check_plan(plan: StatedPlan, samples: pd.DataFrame, where: str, code: str) -> None:
    """Refuse (``code``, naming the field) a plan whose scheme, parameters, seed, number of splits, coverage or
    balance say other than it holds; see the module's docstring. The positions themselves are checked before
    (:func:`~depgraph.spec.checks.check_splits`, :func:`~depgraph.spec.checks.check_fold_content`)."""
    if plan.seed is not None:
        _refuse_unless(isinstance(plan.seed, int) and 0 <= plan.seed <= MAX_SEED, code,
                       f"{where}.seed is {plan.seed}; a seed is in 0..{MAX_SEED}")  # fmt: skip
    contract = PLAN_CONTRACTS.get(plan.scheme)
    if contract is None:  # a plan made elsewhere (FoldPlan.from_roles, another tool) claims no scheme's guarantees
        _check_own_balance(plan, samples, where, code)
        return
    _check_parameters(plan, contract, samples, where, code)
    _refuse_unless(contract.seeded == (plan.seed is not None), code,
                   f"{where}.seed is {plan.seed!r}, but a {plan.scheme} plan " +
                   ("records the seed it drew with" if contract.seeded else "draws nothing at random"))  # fmt: skip
    _check_split_count(plan, contract, where, code)
    untrained = [i for i, split in enumerate(plan.splits) if split.n_train == 0]
    _refuse_unless(not untrained, code, f"{where}.splits[{untrained[0] if untrained else 0}] trains on no sample; "
                   f"a {plan.scheme} plan never leaves a training side empty")  # fmt: skip
    if contract.partition:
        _check_partition(plan, len(samples), where, code)
    if plan.scheme == "logo":
        _check_blocks(plan, samples, where, code)
    if plan.scheme == "covariate-bins":
        _check_bins(plan, samples, where, code)
    _check_balance(plan, contract, samples, where, code)


def check_plan_warnings(
    plan: StatedPlan | None, warnings: Sequence[Any], sample_ids: pa.Array, where: str, code: str
) -> None:
    """The warnings a fold plan makes (:data:`PLAN_WARNING_CODES`) are the plan's: returning samples that changed
    side are named by exactly one ``prior_side_changed`` warning, of a balanced holdout kept from a prior, counting
    what the plan's balance counts and naming samples of the spec; a plan that counts moved samples without it is
    refused too (nothing moves without a word)."""
    said = [(i, w) for i, w in enumerate(warnings) if w.code == "prior_side_changed"]
    kept = plan is not None and "prior_digest" in plan.parameters
    moved = plan.balance.get("prior_samples_moved") if kept else None  # type: ignore[union-attr]
    if not said:
        _refuse_unless(not moved, code, f"{where}: folds.balance.prior_samples_moved counts {moved} returning "
                       "sample(s) that changed side, but no prior_side_changed warning names them")  # fmt: skip
        return
    if len(said) > 1:
        raise DepgraphError(code, f"{where}: warnings[{said[1][0]}] repeats prior_side_changed")
    i, warning = said[0]
    _refuse_unless(moved == warning.count, code, f"{where}: warnings[{i}] says {warning.count} returning "
                   "sample(s) changed side, but the folds " + ("are no holdout kept from a prior"
                   if moved is None else f"count {moved}"))  # fmt: skip
    named = min(warning.count, WARNING_ID_LIMIT)
    _refuse_unless(warning.severity == "warning" and len(warning.ids) == named, code, f"{where}: warnings[{i}] "
                   f"(prior_side_changed) is a warning naming the first {named} of them, not a {warning.severity} "
                   f"naming {len(warning.ids)}")  # fmt: skip
    strangers = [x for x, known in zip(warning.ids, pc.is_in(pa.array(warning.ids, pa.string()),
                 value_set=sample_ids).to_pylist(), strict=True) if not known]  # fmt: skip
    _refuse_unless(not strangers, code, f"{where}: warnings[{i}] names {describe_ids(strangers)}, no sample of the "
                   "spec")  # fmt: skip


def _refuse_unless(ok: bool, code: str, message: str) -> None:
    if not ok:
        raise DepgraphError(code, message)


def _check_parameters(plan: StatedPlan, contract: PlanContract, samples: pd.DataFrame, where: str, code: str) -> None:
    """The recorded parameters are the scheme's, each holding a value the scheme takes."""
    stated = plan.parameters
    missing = [p for p in contract.parameters if p not in stated]
    unknown = [p for p in stated if p not in contract.parameters + contract.optional]
    _refuse_unless(not missing and not unknown, code,
                   f"{where}.parameters " + (f"lack {describe_ids(missing)}" if missing else
                   f"hold {describe_ids(unknown)}") + f"; a {plan.scheme} plan records "
                   f"{describe_ids(list(contract.parameters))}")  # fmt: skip
    for name, value in stated.items():
        problem = _PARAMETER_VALUES[name](value, samples, stated)
        _refuse_unless(problem is None, code, f"{where}.parameters.{name} is {value!r}: {problem}")
    fewest = contract.fewest_splits
    if "n_splits" in contract.parameters:
        _refuse_unless(stated["n_splits"] >= fewest, code, f"{where}.parameters.n_splits is "
                       f"{stated['n_splits']}, but a {plan.scheme} plan has at least {fewest}")  # fmt: skip


def _is_int(value: Any, low: int, high: int) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and low <= value <= high


def _columns(value: Any, samples: pd.DataFrame) -> str | None:
    """Why ``value`` is not a non-empty list of distinct sample columns (None when it is)."""
    if not isinstance(value, list) or not value or not all(isinstance(v, str) for v in value):
        return "not a list of column names"
    if len(set(value)) < len(value):
        return "a column is named twice"
    absent = [v for v in value if v not in samples.columns]
    return f"the samples have no column {describe_ids(absent)}" if absent else None


def _column(value: Any, samples: pd.DataFrame) -> str | None:
    return _columns([value], samples) if isinstance(value, str) else "not a column name"


def _thresholds(value: Any, stated: Mapping[str, Any]) -> str | None:
    if not isinstance(value, list) or not all(
        isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v) for v in value
    ):
        return "not a list of numbers"
    if any(b <= a for a, b in itertools.pairwise(value)):
        return "not increasing"
    n = stated.get("n_splits")
    return None if not isinstance(n, int) or len(value) == n - 1 else f"not n_splits - 1 = {n - 1} thresholds"


_Check = Callable[[Any, pd.DataFrame, Mapping[str, Any]], "str | None"]

#: Why a recorded parameter's value is not one its scheme takes (None when it is), by parameter name.
_PARAMETER_VALUES: dict[str, _Check] = {
    "n_splits": lambda v, s, p: None if _is_int(v, 1, MAX_SPLITS) else f"not an integer in 1..{MAX_SPLITS}",
    "n_repeats": lambda v, s, p: None if _is_int(v, 1, MAX_SPLITS) else f"not an integer in 1..{MAX_SPLITS}",
    "test_fraction": lambda v, s, p: (
        None if isinstance(v, (int, float)) and not isinstance(v, bool) and 0 < v < 1 else "not a fraction in (0, 1)"
    ),
    "stratify": lambda v, s, p: _column(v, s),
    "by": lambda v, s, p: _column(v, s) or (None if "thresholds" not in p else _numbers(s[v])),
    "balance": lambda v, s, p: _columns(v, s),
    "joint": lambda v, s, p: (
        None if _is_int(v, 1, max(2, len(p.get("balance") or []))) else "not an integer from 1 to the columns balanced"
    ),
    "blocks": lambda v, s, p: (
        None if isinstance(v, list) and v and all(isinstance(b, str) for b in v) else "not a list of block names"
    ),
    "gap": lambda v, s, p: None if _is_int(v, 0, 2**53) else "not a whole number",
    "embargo": lambda v, s, p: None if _is_int(v, 0, 2**53) else "not a whole number",
    "train_after": lambda v, s, p: None if isinstance(v, bool) else "not true or false",
    "key": lambda v, s, p: None if v == "group_id" else _columns(v, s),
    "encoding": lambda v, s, p: None if v == hash_encoding(p.get("key")) else f"not {hash_encoding(p.get('key'))!r}",
    "salt_fingerprint": lambda v, s, p: (
        None if isinstance(v, str) and re.fullmatch("[0-9a-f]{16}", v) else "not 16 lower-case hex digits"
    ),
    "thresholds": lambda v, s, p: _thresholds(v, p),
    "thresholds_from": lambda v, s, p: None if v in ("this spec", "given") else "not 'this spec' or 'given'",
    "group_value": lambda v, s, p: None if v == GROUP_VALUE else f"not {GROUP_VALUE!r}",
    "bins": lambda v, s, p: None if v == BINS else f"not {BINS!r}",
    "prior_digest": lambda v, s, p: None if isinstance(v, str) and v.startswith("sha256:") else "not a digest",
}


def _check_split_count(plan: StatedPlan, contract: PlanContract, where: str, code: str) -> None:
    """As many splits as the parameters say (each a distinct repeat and fold within them, checked before)."""
    folds = 1 if contract.folds is None else plan.parameters[contract.folds]
    folds = len(folds) if isinstance(folds, list) else folds
    repeats = plan.parameters["n_repeats"] if contract.repeats else 1
    said = f"{folds} fold(s)" + (f" × {repeats} repeat(s)" if contract.repeats else "")
    _refuse_unless(len(plan.splits) == folds * repeats, code,
                   f"{where} lists {len(plan.splits)} split(s), but its parameters say {said}")  # fmt: skip
    for i, split in enumerate(plan.splits):
        _refuse_unless(split.fold < folds and split.repeat < repeats, code,
                       f"{where}.splits[{i}] is repeat {split.repeat}, fold {split.fold}, beyond the {said} of its "
                       "parameters")  # fmt: skip


def group_values(group_codes: np.ndarray, values: np.ndarray, n_groups: int) -> np.ndarray:
    """Each group's lower median: the ⌈m/2⌉-th smallest of its m values (a value the group holds, no averaging).

    >>> group_values(np.array([0, 0, 0, 1, 1]), np.array([5.0, 1.0, 9.0, 4.0, 2.0]), 2).tolist()
    [5.0, 2.0]
    """
    order = np.lexsort((values, group_codes))
    counts = np.bincount(group_codes, minlength=n_groups)
    starts = np.cumsum(counts) - counts
    return values[order[starts + (counts - 1) // 2]]


def bin_of(values: np.ndarray, thresholds: np.ndarray) -> np.ndarray:
    """The bin of each value: how many thresholds are at or below it (bin i holds ``t[i-1] <= v < t[i]``).

    >>> bin_of(np.array([1.0, 2.5, 3.0]), np.array([2.5])).tolist()
    [0, 1, 1]
    """
    return np.searchsorted(thresholds, values, side="right").astype(np.int64)


def _check_partition(plan: StatedPlan, n_samples: int, where: str, code: str) -> None:
    """Each repeat tests every sample exactly once and excludes none (k-fold, hash and covariate-bin plans)."""
    tested: dict[int, list[np.ndarray]] = {}
    for i, split in enumerate(plan.splits):
        _refuse_unless(not len(split.excluded), code,
                       f"{where}.splits[{i}] excludes samples; a {plan.scheme} plan excludes none")  # fmt: skip
        tested.setdefault(split.repeat, []).append(split.test)
    for repeat, tests in tested.items():
        counts = np.bincount(np.concatenate(tests), minlength=n_samples)
        if (counts != 1).any():
            position = int(np.flatnonzero(counts != 1)[0])
            raise DepgraphError(code, f"{where}: repeat {repeat} tests the sample at position {position} "
                                f"{int(counts[position])} times; a {plan.scheme} plan tests every sample once per "
                                "repeat")  # fmt: skip


#: What a covariate-bins plan records of how it bins (:class:`~depgraph.folds.schemes.CovariateBins`).
GROUP_VALUE = "lower median"
BINS = "fold i holds thresholds[i-1] <= value < thresholds[i]"


def hash_encoding(key: Any) -> str:
    """How a hash plan turns a group (or its key columns, ``key``) into a fold, as its parameters record it."""
    text = "utf8(group_id)" if key in (None, "group_id") else "netstrings <bytes>:<text>, of the key columns"
    return f"sha256(utf8(salt) || {text}) as big-endian integer mod n_splits"


def _numbers(column: pd.Series) -> str | None:
    """Why a sample column cannot be binned (None when it can): covariate bins take finite numbers, every one."""
    kind = pd.api.types.infer_dtype(column, skipna=True)  # a column read from JSON holds Python numbers
    if kind not in ("floating", "integer", "mixed-integer-float", "boolean", "empty"):
        return "not a column of numbers"
    values = pd.to_numeric(column, errors="coerce").to_numpy(dtype=np.float64, na_value=np.nan)
    return None if np.isfinite(values).all() else "a column with missing or infinite values"


def _check_bins(plan: StatedPlan, samples: pd.DataFrame, where: str, code: str) -> None:
    """A covariate-bins plan is decided by its thresholds: each group's lower median of ``by``, binned, is its
    fold; split i tests exactly the samples of the groups in bin i."""
    codes, groups = sorted_categories(text_array(samples["group_id"]))
    values = samples[plan.parameters["by"]].to_numpy(dtype=np.float64)
    median = group_values(codes, values, len(groups))
    fold = bin_of(median, np.asarray(plan.parameters["thresholds"], dtype=np.float64))[codes]
    for i, split in enumerate(plan.splits):
        _refuse_unless(np.array_equal(np.asarray(split.test), np.flatnonzero(fold == split.fold)), code,
                       f"{where}.splits[{i}] tests other samples than the groups whose lower median of "
                       f"{plan.parameters['by']} lies in bin {split.fold} of its thresholds")  # fmt: skip


def _check_blocks(plan: StatedPlan, samples: pd.DataFrame, where: str, code: str) -> None:
    """A leave-one-block-out plan names the blocks of its column, and split i tests only block i."""
    codes, names = categories(samples, plan.parameters["by"])
    blocks = [str(n) for n in names if n != MISSING_CATEGORY]
    _refuse_unless(plan.parameters["blocks"] == blocks, code,
                   f"{where}.parameters.blocks are {describe_ids(plan.parameters['blocks'])}, but the samples' "
                   f"{plan.parameters['by']} holds {describe_ids(blocks)}")  # fmt: skip
    for i, split in enumerate(plan.splits):
        wanted = list(names).index(blocks[split.fold])
        _refuse_unless(bool((codes[split.test] == wanted).all()), code,
                       f"{where}.splits[{i}] tests samples outside block {blocks[split.fold]!r}")  # fmt: skip
        in_block = int((codes == wanted).sum())
        _refuse_unless(len(split.test) == in_block, code, f"{where}.splits[{i}] tests {len(split.test)} of the "
                       f"{in_block} samples of block {blocks[split.fold]!r}; it tests the whole block")  # fmt: skip


def _check_balance(plan: StatedPlan, contract: PlanContract, samples: pd.DataFrame, where: str, code: str) -> None:
    """The balance block is what the samples and splits give (its scheme's extra entries: type-checked only)."""
    stated = dict(plan.balance)
    for name in contract.extra_balance:
        value = stated.pop(name, None)
        ok = value is None or _is_int(value, 0, len(samples)) or (name == "association" and _plain_record(value))
        _refuse_unless(ok, code, f"{where}.balance.{name} is {value!r}, not a count or a record of numbers")
    if contract.balanced is None:
        columns = ["stratum"] if "stratum" in samples.columns else []
    else:
        named = plan.parameters[contract.balanced]
        columns = named if isinstance(named, list) else [named]
    target = contract.target and plan.parameters[contract.target]
    fraction = None if target is None else (1 / target if contract.target == "n_splits" else float(target))
    _compare(stated, balance_metrics(samples, plan.splits, columns, fraction), f"{where}.balance", code)


def _check_own_balance(plan: StatedPlan, samples: pd.DataFrame, where: str, code: str) -> None:
    """The balance of a plan of no depgraph scheme: empty, or entries of :func:`balance_metrics` over the columns
    it names, at each split's own test fraction, every one as the samples and splits give it."""
    stated = dict(plan.balance)
    if not stated:
        return
    columns = stated.get("columns", {})
    absent = [c for c in columns if c not in samples.columns] if isinstance(columns, dict) else [columns]
    _refuse_unless(not absent, code, f"{where}.balance.columns names {describe_ids(absent)}, not columns of the "
                   "samples")  # fmt: skip
    computed = balance_metrics(samples, plan.splits, list(columns), None)
    _compare(stated, {k: v for k, v in computed.items() if k in stated}, f"{where}.balance", code)


def _plain_record(value: Any) -> bool:
    """A record of numbers, text, booleans or nulls (how strongly folds follow the outcome)."""
    return isinstance(value, dict) and all(isinstance(v, (int, float, str, bool)) or v is None for v in value.values())


def _compare(stated: Any, computed: Any, where: str, code: str) -> None:
    """Refuse the first entry where ``stated`` differs from ``computed``, naming its path and both values."""
    if isinstance(computed, dict) and isinstance(stated, dict):
        for key in sorted(set(stated) | set(computed), key=str):
            if key not in computed or key not in stated:
                raise DepgraphError(code, f"{where} {'lacks' if key not in stated else 'holds'} {key!r}; the "
                                    "samples and splits give " + describe_ids(sorted(computed)))  # fmt: skip
            _compare(stated[key], computed[key], f"{where}.{key}", code)
        return
    if isinstance(computed, list) and isinstance(stated, list) and len(stated) == len(computed):
        for i, (a, b) in enumerate(zip(stated, computed, strict=True)):
            _compare(a, b, f"{where}[{i}]", code)
        return
    same = type(stated) is type(computed) or (
        isinstance(stated, (int, float)) and isinstance(computed, (int, float)) and not isinstance(stated, bool)
    )
    _refuse_unless(same and stated == computed, code,
                   f"{where} says {_shown(stated)}, the samples and splits give {_shown(computed)}")  # fmt: skip


def _shown(value: Any) -> str:
    """A value as a refusal names it: in full when short, else its kind and length."""
    if isinstance(value, dict):
        return f"an object of {len(value)} entries"
    text = repr(value)
    return text if len(text) <= 80 else f"a {type(value).__name__} of {len(value)} entries"
