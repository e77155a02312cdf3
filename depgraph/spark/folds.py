"""Folds on Spark: the single-machine plans of :mod:`depgraph.folds.schemes`, the same splits and balance, for a
spec whose samples are a Spark table.

- **Hash folds** (``hash``) are computed in Spark, one SHA-256 per group (``sha2`` of the salt and the group id;
  of the salt and the key, keyed on sample columns), reduced modulo k 32 bits at a time (Horner's rule in integer
  columns): any number of groups, nothing collected.
- **Grouped k-fold** (``group-kfold``) and **stratified grouped k-fold** (``stratified-group-kfold``) are decided by
  each group's size and, stratified, its count of each class; Spark counts them (one row per group, in group-id
  order), the driver runs the single-machine assignment on those counts
  (:func:`~depgraph.folds.schemes.kfold_of_groups`), and the folds go back as a broadcast array. The
  driver holds one row per group: up to :data:`DRIVER_GROUPS` groups (about 100 MB of sizes and folds), beyond
  which the plan is refused, naming hash folds, which have no such limit.
- **Grouped holdout** (``holdout``): likewise, from the groups' sizes alone
  (:meth:`~depgraph.folds.schemes.GroupedHoldout.tested_groups`), each repeat's tested groups broadcast back.

Every other figure of the plan — each split's sizes, the balance of the ``stratum`` (or ``stratify``) column — is
counted in Spark and put together by the single-machine code (:func:`~depgraph.spec.balance.balance_of_counts`),
so the fold plan, and with it the spec's digest, is the one :func:`depgraph.assign_folds` gives the same spec.
The refusals are the single-machine ones (``invalid_argument``, ``too_few_groups``) with the same messages.

Hash folds keyed on sample columns (``key=``) are computed in Spark too: each value spelt as the single machine
spells it, by the same function run in Spark's Python workers on each batch of rows, then hashed as above.

- **Covariate bins** (``covariate-bins``): each group's lower median value and its bin are computed in Spark;
  the thresholds, unless given, are cut on the driver from the distinct group values and their sample counts.
- **Leave-one-block-out** and **time-ordered folds** (``logo``, ``time``): :mod:`depgraph.spark.closed`.
- **Balanced holdout** (``balanced-holdout``, with a prior spec too): :mod:`depgraph.spark.balanced`.

Each scheme's planner is one entry of :data:`PLANNERS`; every scheme :func:`depgraph.assign_folds` plans has one.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import numpy as np
import orjson
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq
from pyspark.sql import Column, DataFrame
from pyspark.sql import functions as F

from depgraph.common.identifiers import key_array
from depgraph.errors import DepgraphError, describe_ids
from depgraph.folds.covariates import (
    association_report,
    cramers_v_of_table,
    empty_bins,
    equal_size_thresholds,
    missing_key,
    not_numeric,
    several_keys,
    unbinnable,
    wrong_threshold_count,
)
from depgraph.folds.schemes import (
    BalancedHoldout,
    CovariateBins,
    FoldScheme,
    GroupedHoldout,
    GroupedKFold,
    HashFolds,
    LeaveOneBlockOut,
    StratifiedGroupedKFold,
    TimeOrdered,
    check_folds,
    check_repeats,
    kfold_of_groups,
    refuse_parameters,
    require_column,
    scheme_named,
)
from depgraph.io.jsoncolumns import plain_json
from depgraph.spark.balanced import balanced_holdout_plan
from depgraph.spark.closed import logo_plan, time_plan
from depgraph.spark.cohort import (
    DRIVER_GROUPS,
    EXCLUDED,
    TESTED,
    Cohort,
    Planned,
    category_codes,
    numpy_column,
    ranked_groups,
    splits_of_groups,
    tested,
)
from depgraph.spark.graph import INTEGER_KINDS
from depgraph.spec.balance import balance_of_counts
from depgraph.spec.checks import untested_split
from depgraph.spec.model import SpecWarning

#: Hash folds are reduced modulo k in 64-bit columns, 32 bits at a time: k stays below this.
HASH_SPLITS = 2**31
#: Fold rows read back at a time for the digest.
FOLD_BATCH_ROWS = 1 << 20
#: The columns of folds.parquet as Spark writes them (split, role, position, sample_id).
FOLD_COLUMNS = ("split", "role", "position", "sample_id")


@dataclass(frozen=True)
class SparkFolds:
    """A fold plan on Spark: ``plan``, the spec's ``folds`` field without positions (what the manifest holds),
    ``rows``, one row per tested or excluded sample of each split (``split``, ``role``, ``position``: the sample's
    row, ``sample_id``), and the warnings the plan makes (``findings``)."""

    plan: dict[str, Any]
    rows: DataFrame
    findings: list[SpecWarning]

    @property
    def n_splits(self) -> int:
        return len(self.plan["splits"])

    def outline(self) -> dict[str, Any]:
        """The plan without its positions, as :meth:`~depgraph.spec.model.FoldPlan.outline` gives it."""
        return self.plan


def spark_scheme(scheme: FoldScheme | str, parameters: dict[str, Any]) -> FoldScheme:
    """The scheme ``scheme`` names with ``parameters`` (checked as :func:`depgraph.assign_folds` checks them), or
    the scheme given; ``invalid_argument`` for one the Spark engine does not plan."""
    if isinstance(scheme, str):
        cls = scheme_named(scheme)
        refuse_parameters(cls, parameters)
        scheme = cls(**parameters)
    elif not isinstance(scheme, FoldScheme):
        raise DepgraphError("invalid_argument", f"scheme must be a scheme name or a FoldScheme, not {scheme!r}")
    elif parameters:
        raise DepgraphError("invalid_argument", "pass parameters either to the scheme or to write_spec, not both")
    if type(scheme) not in PLANNERS:
        raise DepgraphError(
            "invalid_argument",
            f"the Spark engine plans {describe_ids([s.name for s in PLANNERS], 10)} folds, not {scheme.name}",
        )
    return scheme


def plan_folds(
    samples: DataFrame, n_samples: int, scheme: FoldScheme, driver_groups: int = DRIVER_GROUPS
) -> SparkFolds:
    """The fold plan of ``scheme`` (one of :data:`PLANNERS`) over the spec's sample columns ``samples`` (``row``,
    ``sample_id``, ``group_id`` and the rest, as :func:`depgraph.spark.spec.sample_columns` gives them), counted
    in Spark."""
    groups = samples.groupBy("group_id").agg(F.count(F.lit(1)).alias("size"))
    cohort = Cohort(samples, [c for c in samples.columns if c != "row"], groups, groups.count(), driver_groups)
    planned = PLANNERS[type(scheme)](cohort, scheme)
    scheme, n_splits = planned.scheme, planned.n_splits
    per_repeat = getattr(scheme, "n_splits", 1) if getattr(scheme, "n_repeats", 1) > 1 else n_splits
    position = F.col("row").cast("int" if n_samples < 2**31 else "long")  # as the single-machine writer's types
    rows = planned.rows.select("split", "role", position.alias("position"), "sample_id")
    counts = {(split, role): n for split, role, n in rows.groupBy("split", "role").count().collect()}
    sizes = [int(counts.get((i, TESTED), 0)) for i in range(n_splits)]
    excluded = [int(counts.get((i, EXCLUDED), 0)) for i in range(n_splits)]
    n_train = [n_samples - t - x for t, x in zip(sizes, excluded, strict=True)]
    scheme.refuse_empty_sides(n_train, sizes)
    for i, size in enumerate(sizes):  # a spec's every split tests someone: a hash fold its groups left empty too
        if size == 0:
            raise untested_split("folds", i, i // per_repeat, i % per_repeat, scheme.name)
    tested_rows = planned.rows.where(F.col("role") == TESTED)
    counted = {
        column: _category_counts(samples, tested_rows, column, n_splits)
        for column in scheme.balance_columns(cohort.columns)
        if column in cohort.columns
    }
    balance = balance_of_counts(n_samples, sizes, n_train, excluded, counted, scheme.target_fraction())
    splits = [
        {"repeat": i // per_repeat, "fold": i % per_repeat, "n_train": n_train[i], "n_test": sizes[i],
         "n_excluded": excluded[i]}
        for i in range(n_splits)
    ]  # fmt: skip
    plan = {
        "scheme": scheme.name,
        "parameters": plain_json({**scheme.parameters(), **planned.parameters}, "parameters"),
        "seed": scheme.plan_seed(),
        "splits": splits,
        "balance": plain_json({**balance, **planned.balance}, "balance"),
    }
    return SparkFolds(plan, rows, planned.findings)


def _covariate_bins(
    samples: DataFrame, n_groups: int, scheme: CovariateBins
) -> tuple[DataFrame, CovariateBins, dict[str, Any], dict[str, Any]]:
    """``row``, ``sample_id``, ``split``: covariate bins of the ``by`` column as on one machine — each group placed
    by its lower median value, computed in Spark; the thresholds cut on the driver from the distinct group values
    and their sample counts (:func:`~depgraph.folds.covariates.equal_size_thresholds`) unless given; bins assigned in
    Spark. Returns the scheme with its thresholds, and what the plan adds to its parameters (``thresholds_from``)
    and its balance (``groups_spanning_bins``; ``association``, how the folds follow the outcome: Cramér's V from
    the fold × stratum counts, warning as on one machine)."""
    by = scheme.by
    require_column([c for c in samples.columns if c != "row"], by, "--by")
    if dict(samples.dtypes)[by] not in NUMERIC_KINDS:
        raise not_numeric(by)  # (text of numbers, which one machine would read as numbers, is refused here)
    value = F.col(by).cast("double")
    bad = samples.where(value.isNull() | F.isnan(value) | (F.abs(value) == float("inf")))
    count = bad.count()
    if count:
        raise unbinnable(by, [r[0] for r in bad.orderBy("row").select("sample_id").limit(50).collect()], count)
    valued = samples.select("row", "sample_id", "group_id", value.alias("_value"))
    lower_median = F.element_at(F.array_sort(F.collect_list("_value")), ((F.count(F.lit(1)) - 1) / 2).cast("int") + 1)
    per_group = valued.groupBy("group_id").agg(F.count(F.lit(1)).alias("size"), lower_median.alias("_placed"))
    check_folds(scheme.n_splits, n_groups)
    given = scheme.thresholds is not None
    if given:
        thresholds = scheme.thresholds
        if len(thresholds) != scheme.n_splits - 1:
            raise wrong_threshold_count(len(thresholds), scheme.n_splits)
    else:
        weights = per_group.groupBy("_placed").agg(F.sum("size").alias("n")).orderBy("_placed").toArrow()
        cut = equal_size_thresholds(numpy_column(weights, "_placed"), numpy_column(weights, "n"), scheme.n_splits)
        thresholds = tuple(cut.tolist())
        scheme = replace(scheme, thresholds=thresholds)
    placed = per_group.select("group_id", "size", _bin(F.col("_placed"), thresholds).alias("split"))
    filled = {int(f) for (f,) in placed.where(F.col("size") > 0).select("split").distinct().collect()}
    empty = [f for f in range(scheme.n_splits) if f not in filled]
    if empty:
        raise empty_bins(by, empty, thresholds)
    folds = valued.join(placed.select("group_id", "split"), "group_id")
    spanning = folds.where(_bin(F.col("_value"), thresholds) != F.col("split")).select("group_id").distinct().count()
    parameters = {"thresholds_from": "given" if given else "this spec"}
    balance = {"groups_spanning_bins": spanning, "association": _association(samples, folds, f"covariate bins of {by}")}
    return folds.select("row", "sample_id", "split"), scheme, parameters, balance


def _association(samples: DataFrame, folds: DataFrame, what: str) -> dict[str, Any]:
    """How strongly the folds (``row``, ``split``: each sample's test fold) follow the outcome, as
    :func:`~depgraph.folds.covariates.fold_association` reports it on one machine (and warns): Cramér's V from the
    fold × stratum counts, counted in Spark; samples without a stratum left out."""
    if "stratum" not in samples.columns:
        return {"outcome": None, "cramers_v": None, "note": "the spec has no stratum column"}
    pairs = folds.join(samples.where(F.col("stratum").isNotNull()).select("row", "stratum"), "row")
    counts = pairs.groupBy("split", "stratum").count().toArrow()
    _, fold_codes = np.unique(numpy_column(counts, "split"), return_inverse=True)
    strata = counts.column("stratum").to_pylist()
    names = sorted(set(strata))
    stratum_codes = np.searchsorted(np.array(names, dtype=object), np.array(strata, dtype=object))
    table = np.zeros((int(fold_codes.max(initial=-1)) + 1, len(names)), dtype=np.int64)
    table[fold_codes, stratum_codes] = numpy_column(counts, "count")
    return association_report(cramers_v_of_table(table), int(table.sum()), what)


#: Spark's types of a column covariate bins read as numbers (booleans as 0 and 1, as pandas reads them).
NUMERIC_KINDS = INTEGER_KINDS | {"float", "double", "boolean"}


def _bin(value: Column, thresholds: tuple[float, ...]) -> Column:
    """The bin of ``value``: how many thresholds are at or below it (:func:`~depgraph.folds.covariates.bin_of`)."""
    count = F.lit(0)
    for threshold in thresholds:
        count = count + F.when(value >= F.lit(threshold), 1).otherwise(0)
    return count.cast("int")


def _hash_folds(samples: DataFrame, scheme: HashFolds) -> DataFrame:
    """``row``, ``sample_id``, ``split``: each sample's hash fold, ``int(SHA-256(utf8(salt) ‖ utf8(group_id)))
    mod k`` — one hash per group, joined back to its samples."""
    return samples.select("row", "sample_id", "group_id").join(_hashed(samples, "group_id", scheme), "group_id")


def _hashed(samples: DataFrame, column: str, scheme: HashFolds) -> DataFrame:
    """``column``, ``split``: the hash fold of each distinct value of the text ``column``."""
    digest = F.sha2(F.concat(F.lit(scheme.salt), F.col(column)), 256)
    fold = F.lit(0).cast("long")
    for i in range(8):  # eight 32-bit words, big-endian; (fold·2³² + word) stays below 2⁶³ for k below HASH_SPLITS
        word = F.conv(F.substring(digest, 8 * i + 1, 8), 16, 10).cast("long")
        fold = (fold * F.lit(1 << 32) + word) % F.lit(scheme.n_splits)
    return samples.select(column).distinct().select(column, fold.cast("int").alias("split"))


def _keyed_hash_folds(samples: DataFrame, scheme: HashFolds) -> DataFrame:
    """``row``, ``sample_id``, ``split``: hash folds keyed on sample columns, as on one machine — the key of a
    sample is the netstrings ``<bytes>:<text>,`` of its key columns' values, each value spelt by the single-machine
    rule (:func:`~depgraph.common.identifiers.key_array`, run on each batch of rows in Spark's Python workers);
    ``missing_id`` for a sample without a key, ``ambiguity`` for a group whose samples hold different keys."""
    columns = [c for c in samples.columns if c != "row"]
    for column in scheme.key:
        require_column(columns, column, "--key")
    spelt = [f"_text{i}" for i in range(len(scheme.key))]
    texts = samples.select("row", "sample_id", "group_id", *scheme.key).mapInArrow(
        _key_texts(tuple(scheme.key), tuple(spelt)),
        "row long, sample_id string, group_id string, " + ", ".join(f"{name} string" for name in spelt),
    )
    for column, name in zip(scheme.key, spelt, strict=True):
        missing = texts.where(F.col(name).isNull())
        count = missing.count()
        if count:
            ids = [r[0] for r in missing.orderBy("row").select("sample_id").limit(50).collect()]
            raise missing_key(column, ids, count)
    netstrings = [F.concat(F.octet_length(name).cast("string"), F.lit(":"), F.col(name), F.lit(",")) for name in spelt]
    keyed = texts.select("row", "sample_id", "group_id", F.concat(*netstrings).alias("_key"))
    several = keyed.groupBy("group_id").agg(F.countDistinct("_key").alias("keys")).where(F.col("keys") > 1)
    count = several.count()
    if count:
        ids = [r[0] for r in several.orderBy("group_id").select("group_id").limit(50).collect()]
        raise several_keys(scheme.key, ids, count)
    return keyed.join(_hashed(keyed, "_key", scheme), "_key").select("row", "sample_id", "split")


def _key_texts(
    key: tuple[str, ...], spelt: tuple[str, ...]
) -> Callable[[Iterator[pa.RecordBatch]], Iterator[pa.RecordBatch]]:
    """The function each Spark Python worker runs over its batches: the key columns spelt as text (named
    ``spelt``), as :func:`~depgraph.folds.covariates.sample_keys` spells them (null where missing or blank)."""

    def spell(batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        for batch in batches:
            texts = []
            for column in key:
                values = batch.column(column).to_pandas().to_numpy(dtype=object)
                codes, uniques = pd.factorize(values, use_na_sentinel=True)
                text = key_array(pd.Series(np.asarray(uniques, dtype=object), dtype=object), column, ids=False)
                texts.append(text.take(pa.array(np.where(codes < 0, None, codes), pa.int64())))
            yield pa.RecordBatch.from_arrays(
                [batch.column("row"), batch.column("sample_id"), batch.column("group_id"), *texts],
                ["row", "sample_id", "group_id", *spelt],
            )

    return spell


def _hash_plan(cohort: Cohort, scheme: HashFolds) -> Planned:
    """Hash folds, computed in Spark (keyed or not); keyed folds report how they follow the outcome."""
    samples = cohort.samples
    folds = _keyed_hash_folds(samples, scheme) if scheme.key else _hash_folds(samples, scheme)  # keys checked first
    check_folds(scheme.n_splits, cohort.n_groups)
    if scheme.n_splits >= HASH_SPLITS:
        raise DepgraphError(
            "invalid_argument",
            f"the Spark engine reduces hashes in 64-bit columns: {scheme.n_splits} folds are too many (at most "
            f"{HASH_SPLITS - 1})",
        )
    balance = {}
    if scheme.key:  # folds keyed on sample columns may follow the outcome: reported (and warned) as on one machine
        balance = {"association": _association(samples, folds, f"hash folds keyed on {','.join(scheme.key)}")}
    return Planned(tested(folds), scheme, scheme.n_splits, balance=balance)


def _covariate_plan(cohort: Cohort, scheme: CovariateBins) -> Planned:
    folds, scheme, parameters, balance = _covariate_bins(cohort.samples, cohort.n_groups, scheme)
    return Planned(tested(folds), scheme, scheme.n_splits, parameters, balance)


def _holdout_plan(cohort: Cohort, scheme: GroupedHoldout) -> Planned:
    """The single-machine holdout, drawn on the driver from the groups' sizes
    (:meth:`~depgraph.folds.schemes.GroupedHoldout.tested_groups`); ``split`` is the repeat."""
    scheme.check_groups(cohort.n_groups)
    ranked, sizes = ranked_groups(cohort, scheme)
    chosen = np.stack([np.where(scheme.tested_groups(sizes, r), r, -1) for r in range(scheme.n_repeats)])
    rows = splits_of_groups(cohort.samples, ranked, chosen).where(F.col("split") >= 0)
    return Planned(tested(rows), scheme, scheme.n_repeats)


def _kfold_plan(cohort: Cohort, scheme: GroupedKFold | StratifiedGroupedKFold) -> Planned:
    """The single-machine k-fold assignment, run on the driver over the groups' sizes (and class counts), each
    group's folds joined back to its samples; ``split`` is ``repeat · k + fold``."""
    check_folds(scheme.n_splits, cohort.n_groups)
    check_repeats(scheme.n_repeats)
    stratify = getattr(scheme, "stratify", None)
    if stratify is not None:
        require_column(cohort.columns, stratify, "stratify")
    ranked, sizes = ranked_groups(cohort, scheme)
    counts = None
    if stratify is not None:
        codes, classes = category_codes(cohort.samples, stratify)
        per_group = (
            cohort.samples.select("group_id", codes.alias("code"))
            .join(ranked.select("group_id", "group"), "group_id")
            .groupBy("group", "code")
            .count()
            .toArrow()
        )
        counts = np.zeros((cohort.n_groups, len(classes)), dtype=np.int64)
        counts[numpy_column(per_group, "group"), numpy_column(per_group, "code")] = numpy_column(per_group, "count")
    k = scheme.n_splits
    folds = np.stack([r * k + kfold_of_groups(sizes, k, scheme.seed, counts, r) for r in range(scheme.n_repeats)])
    return Planned(tested(splits_of_groups(cohort.samples, ranked, folds)), scheme, k * scheme.n_repeats)


def _category_counts(
    samples: DataFrame, folds: DataFrame, column: str, n_splits: int
) -> tuple[np.ndarray, np.ndarray, list[np.ndarray]]:
    """The categories of ``column`` (sorted), each one's count, and each split's test count of it."""
    code, names = category_codes(samples, column)
    n_codes = len(names)
    coded = samples.select("row", code.alias("code"))
    totals = np.zeros(n_codes, dtype=np.int64)
    for i, count in coded.groupBy("code").count().collect():
        totals[i] = count
    tested = [np.zeros(n_codes, dtype=np.int64) for _ in range(n_splits)]
    for split, i, count in folds.select("row", "split").join(coded, "row").groupBy("split", "code").count().collect():
        tested[split][i] = count
    return names, totals, tested


#: Each scheme's planner on Spark: every scheme :func:`depgraph.assign_folds` plans.
PLANNERS: dict[type[FoldScheme], Callable[[Cohort, Any], Planned]] = {
    GroupedKFold: _kfold_plan,
    StratifiedGroupedKFold: _kfold_plan,
    GroupedHoldout: _holdout_plan,
    HashFolds: _hash_plan,
    CovariateBins: _covariate_plan,
    LeaveOneBlockOut: logo_plan,
    TimeOrdered: time_plan,
    BalancedHoldout: balanced_holdout_plan,
}


def canonical_folds(plan: dict[str, Any], parts: list[Path]) -> Iterator[bytes]:
    """The plan's canonical JSON (sorted keys, compact), each split's excluded and tested positions streamed from
    the fold parts, which hold the rows ordered by split, role (tested first), then position: one pass over the
    parts for each role, so no split is ever whole in memory."""
    head = orjson.dumps({k: v for k, v in plan.items() if k != "splits"}, option=orjson.OPT_SORT_KEYS)
    yield head[:-1] + b',"splits":['  # "splits" sorts after every other field of a plan
    runs = {role: _positions_by_split(parts, role) for role in (EXCLUDED, TESTED)}
    pending = {role: next(run, None) for role, run in runs.items()}
    for i, split in enumerate(plan["splits"]):
        # "excluded" sorts first of a split's fields and "test" last: their positions are spliced in around the rest
        fields = orjson.dumps({**split, "excluded": [], "test": []}, option=orjson.OPT_SORT_KEYS)
        middle = fields[len(b'{"excluded":[]') : -len(b',"test":[]}')]
        yield (b"," if i else b"") + b'{"excluded":['
        yield from _spliced(i, runs[EXCLUDED], pending, EXCLUDED)
        yield b"]" + middle + b',"test":['
        yield from _spliced(i, runs[TESTED], pending, TESTED)
        yield b"]}"
    for role, left in pending.items():
        if left is not None:
            raise DepgraphError("integrity", f"Spark wrote {role} rows for split {left[0]}, which the plan lacks")
    yield b"]}"


def _spliced(split: int, run: Iterator[tuple[int, np.ndarray]], pending: dict[str, Any], role: str) -> Iterator[bytes]:
    """The JSON of ``split``'s positions of ``role``, taken from its run (``pending[role]``: the run's next item)."""
    first = True
    while pending[role] is not None and pending[role][0] == split:
        yield (b"" if first else b",") + orjson.dumps(pending[role][1], option=orjson.OPT_SERIALIZE_NUMPY)[1:-1]
        first = False
        pending[role] = next(run, None)


def _positions_by_split(parts: list[Path], role: str) -> Iterator[tuple[int, np.ndarray]]:
    """(split, positions) runs of the fold rows of ``role``, in file order, each run one split's rows of one
    batch."""
    for part in parts:
        columns = ["split", "role", "position"]
        for batch in pq.ParquetFile(part).iter_batches(batch_size=FOLD_BATCH_ROWS, columns=columns):
            mine = pc.equal(batch.column(1), role).to_numpy(zero_copy_only=False)
            split = batch.column(0).to_numpy()[mine]
            position = batch.column(2).to_numpy().astype(np.int64)[mine]
            if not len(split):
                continue
            starts = np.flatnonzero(np.diff(split, prepend=-1))
            for start, end in zip(starts, [*starts[1:], len(split)], strict=True):
                yield int(split[start]), position[start:end]
