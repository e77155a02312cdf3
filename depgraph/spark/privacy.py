"""Pseudonymised specs on Spark: :func:`depgraph.pseudonymize` for a :class:`~depgraph.spark.spec.SparkSpec`, the
spec the single-machine :func:`~depgraph.spec.privacy.pseudonymize` gives for the same content.

Each sample and group id is hashed in Spark's Python workers by the single-machine functions
(:func:`~depgraph.spec.privacy.pseudonym`, :func:`~depgraph.spec.privacy.hash_group`), one batch of rows at a time
(the key travels to the workers inside the function Spark runs, never written anywhere); the samples are numbered
again in the order of their pseudonyms, as a spec lists them. Whether a carried attribute would re-identify the
samples is counted in Spark (values held once, values copying the sample's id or its group's key) and judged by the
single-machine rule (:func:`~depgraph.spec.privacy.identifying_reason`); the warnings' few ids are hashed on the
driver; the summary is counted again over the hashed groups. Folds already assigned follow their samples to their
new rows, as on one machine.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import replace

import pyarrow as pa
from pyspark.sql import DataFrame
from pyspark.sql import functions as F

from depgraph.errors import DepgraphError
from depgraph.spark.derive import shape_of_samples
from depgraph.spark.folds import SparkFolds
from depgraph.spark.frames import numbered
from depgraph.spark.spec import SparkSpec
from depgraph.spec.columns import SAMPLE_COLUMNS, portable_parameters
from depgraph.spec.keys import check_key
from depgraph.spec.model import SpecWarning, Summary
from depgraph.spec.privacy import (
    already_pseudonymised,
    hash_group,
    identifying_reason,
    identifying_refusal,
    pseudonym,
    pseudonymised_warnings,
    pseudonymization_of,
)


def pseudonymize_request(spec: SparkSpec, key: str | bytes) -> SparkSpec:
    """``spec`` with its sample and group ids replaced by keyed hashes; see the module."""
    if spec.envelope.get("pseudonymization") is not None:
        raise already_pseudonymised()
    secret = check_key(key)
    found = _identifying(spec.samples, [c for c in spec.columns if c not in SAMPLE_COLUMNS])
    if found:
        raise identifying_refusal(found)
    columns = spec.columns
    carried = spec.samples.select(*columns, F.col("row").alias("_old"))  # each sample's row before: its folds'
    kinds = ", ".join(f"`{c}` {kind}" for c, kind in carried.dtypes)
    hashed = numbered(carried.mapInArrow(_hashing(secret), kinds), ["sample_id"])
    if hashed.select("sample_id").distinct().count() != spec.n_samples:  # pragma: no cover - a 128-bit collision
        raise DepgraphError("ambiguity", "two sample ids share a pseudonym; use more hex digits")
    envelope = dict(spec.envelope)
    warnings = [SpecWarning.model_validate(w) for w in envelope["warnings"]]
    named = sorted({i for w in warnings for i in w.ids})
    samples_named = {r[0] for r in spec.samples.where(F.col("sample_id").isin(named)).select("sample_id").collect()}
    envelope["warnings"] = [w.model_dump(mode="json") for w in pseudonymised_warnings(warnings, secret, samples_named)]
    n, shape = shape_of_samples(hashed)
    envelope["summary"] = Summary(n_samples=n, **shape._asdict()).model_dump(mode="json")
    constraint = envelope["constraint"]
    envelope["constraint"] = {**constraint, "parameters": portable_parameters(constraint.get("parameters") or {})}
    envelope["pseudonymization"] = pseudonymization_of(secret).model_dump(mode="json")
    return replace(spec, envelope=envelope, samples=hashed.select("row", *columns), folds=_moved(spec, hashed))


def _moved(spec: SparkSpec, hashed: DataFrame) -> SparkFolds | None:
    """The spec's folds following their samples to their rows in pseudonym order (``hashed``: ``_old``, a
    sample's row before, ``row`` and ``sample_id`` after), as :meth:`~depgraph.spec.model.SplitSpec.replace`
    keeps them on one machine; the plan itself names no id."""
    if spec.folds is None:
        return None
    kind = "int" if spec.n_samples < 2**31 else "long"  # the position type every writer gives the spec's size
    moved = hashed.select(F.col("_old").alias("position"), F.col("row").cast(kind).alias("_new"),
                          F.col("sample_id").alias("_id"))  # fmt: skip
    rows = spec.folds.rows.join(moved, "position").select(
        "split", "role", F.col("_new").alias("position"), F.col("_id").alias("sample_id")
    )
    return replace(spec.folds, rows=rows)


def _hashing(secret: bytes) -> Callable[[Iterator[pa.RecordBatch]], Iterator[pa.RecordBatch]]:
    """The function each Spark Python worker runs over its batches: ``sample_id`` and ``group_id`` hashed."""

    def hash_batches(batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        for batch in batches:
            names = batch.schema.names
            ids = [pseudonym(secret, v) for v in batch.column(names.index("sample_id")).to_pylist()]
            groups = [hash_group(v, secret) for v in batch.column(names.index("group_id")).to_pylist()]
            arrays = list(batch.columns)
            arrays[names.index("sample_id")] = pa.array(ids, pa.string())
            arrays[names.index("group_id")] = pa.array(groups, pa.string())
            yield pa.RecordBatch.from_arrays(arrays, names)

    return hash_batches


def _identifying(samples: DataFrame, attributes: list[str]) -> dict[str, str]:
    """The carried ``attributes`` that would re-identify the samples, each with the reason, counted in Spark as
    :func:`~depgraph.spec.privacy.identifying_attributes` counts on one machine (values compared as text)."""
    out: dict[str, str] = {}
    own_key = F.element_at(F.split("group_id", ":", 2), -1)
    for column in attributes:
        text = F.col(column).cast("string")
        valued = samples.where(F.col(column).isNotNull()).select(text.alias("v"), "sample_id", own_key.alias("k"))
        held = valued.groupBy("v").agg(F.count(F.lit(1)).alias("held"))
        counted = (
            valued.join(held, "v")
            .agg(
                F.count(F.lit(1)).alias("n"),
                F.sum(F.when(F.col("held") == 1, 1).otherwise(0)).alias("alone"),
                F.sum(F.when((F.col("v") == F.col("sample_id")) | (F.col("v") == F.col("k")), 1).otherwise(0)).alias(
                    "copies"
                ),
            )
            .collect()[0]
        )
        n = int(counted["n"] or 0)
        reason = identifying_reason(n, int(counted["alone"] or 0), int(counted["copies"] or 0)) if n else None
        if reason is not None:
            out[column] = reason
    return out
