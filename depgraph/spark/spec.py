"""A SparkPartition's split spec, written by Spark in the columnar form, with the digest the single-machine
engine computes for the same content.

The sample columns are those :func:`depgraph.spec.columns.sample_columns` gives — ``sample_id``, ``group_id``,
one ``<mode>_group`` per block relation the graph holds, ``timepoint_id``/``time_index``/``order_rank`` where
samples have timepoints, ``stratum`` (a sample's outcome, several joined with ``|`` in sorted order) — built in
Spark and written as ``samples.parquet``, a directory of Parquet parts in sample-id order (one part up to
:data:`ONE_PART_ROWS` rows; beyond, Spark's range partitioning of the sorted rows: part *i* holds rows before
part *i + 1*), which every columnar reader (depgraph, R, Spark) reads. The time order comes from
:func:`~depgraph.spark.derive.time_columns`.

The digest is a SHA-256 over the canonical JSON of the whole spec, a sequential hash: after Spark has written the
parts, the driver reads them back one column and one batch at a time (:data:`BATCH_ROWS` rows), spells each batch
as the JSON writer would (:func:`~depgraph.io.jsoncolumns.json_array`) and feeds the hash, so its memory stays
bounded whatever the cohort's size. The spec is written where the driver can read it: a local or mounted
directory (an NFS share, ``/dbfs/…``).
"""

from __future__ import annotations

import os
import warnings
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, ClassVar

import orjson
import pyarrow.parquet as pq
from pyspark.sql import Column, DataFrame, SparkSession
from pyspark.sql import functions as F

from depgraph.common import arguments
from depgraph.errors import DepgraphError, DepgraphWarning, describe_ids
from depgraph.folds.schemes import FoldScheme
from depgraph.formats import SPEC_FORMAT, SPEC_FORMAT_VERSION
from depgraph.io.columnar import COLUMNAR_MANIFEST, TABLES, hidden
from depgraph.io.jsoncolumns import json_array
from depgraph.io.outputs import atomic_tree
from depgraph.io.schemas import envelope_problem
from depgraph.spark.cohort import DRIVER_GROUPS, TESTED
from depgraph.spark.derive import TIME_COLUMNS, SparkPartition, time_columns
from depgraph.spark.folds import FOLD_COLUMNS, PLANNERS, SparkFolds, canonical_folds, plan_folds, spark_scheme
from depgraph.spark.frames import in_file_order
from depgraph.spark.graph import INTEGER_KINDS, SparkGraph
from depgraph.spark.session import fit_partitions, local_session
from depgraph.spec.columnar import FOLDS, SAMPLES
from depgraph.spec.columns import chosen_attributes
from depgraph.spec.digest import spec_digest
from depgraph.spec.files import read_spec as read_checked_spec
from depgraph.spec.keys import check_key
from depgraph.spec.model import Generator, Provenance, Signature, now_utc, partition_fields
from depgraph.spec.plans import PLAN_WARNING_CODES
from depgraph.vocab import BLOCK_MODES, NodeType, RelationName, direct_relation

#: Rows read back at a time for the digest.
BATCH_ROWS = 1 << 20
#: Rows of a table written as one Parquet part, sorted in one task (more are range-partitioned over the cluster).
ONE_PART_ROWS = 1_000_000


def sample_columns(partition: SparkPartition, attributes: Sequence[str] | str | None = None) -> DataFrame:
    """The spec's sample columns (with ``row``, the sample's place in sample-id order), as Spark builds them; with
    ``attributes``, the graph's sample attributes after them, as
    :meth:`~depgraph.spec.model.SplitSpec.from_partition` carries them (:func:`attribute_columns`)."""
    graph = partition.graph
    frame = partition.samples.select("row", "sample_id", "group_id")
    for mode in BLOCK_MODES:
        relation = direct_relation(mode).name
        if graph.has_relation(relation):
            block = graph.target_keys(relation).groupBy("row").agg(F.min("key").alias(f"{mode}_group"))
            frame = frame.join(block, "row", "left")
    if "timepoint_id" in partition.samples.columns:  # time mode, or a rule-based composite through it
        frame = frame.join(partition.samples.select("row", *TIME_COLUMNS), "row", "left")
    elif graph.has_relation(RelationName.SAMPLE_COLLECTED_AT_TIMEPOINT):
        try:
            times, _, _ = time_columns(graph)
        except DepgraphError:
            times = None  # an inconsistent time order: time mode and validation report it
        if times is not None:
            frame = frame.join(times, "row", "left")
    strata = _strata(graph)
    if strata is not None:
        frame = frame.join(strata, "row", "left")
    if attributes:
        frame = frame.join(attribute_columns(graph, attributes, frame.columns), "row", "left")
    return frame


def attribute_columns(graph: SparkGraph, attributes: Sequence[str] | str, columns: Sequence[str]) -> DataFrame:
    """``row`` and the sample ``attributes`` (``"all"``: every one some sample has) for a spec whose columns are
    ``columns``, refused as on one machine (:func:`~depgraph.spec.columns.chosen_attributes`), each in the type the
    single-machine spec gives it: integers as 64-bit floats where some sample lacks the value or the graph has
    nodes of other types (the single-machine graph holds every node's attributes in one pandas table, where a
    missing value makes an integer column float), else as 64-bit integers; floats, booleans and text as they
    are."""
    if attributes != "all":
        attributes = arguments.names(attributes, "attributes")
    table = graph.nodes[NodeType.SAMPLE]
    kinds = dict(table.dtypes)
    carried = [c for c in table.columns if c not in ("row", "key")]
    present = table.agg(*[F.count(c).alias(c) for c in carried]).collect()[0].asDict() if carried else {}
    available = [c for c in carried if present[c]]
    wanted = chosen_attributes(attributes, available, [c for c in columns if c != "row"])
    n = graph.count(NodeType.SAMPLE)
    padded = sum(graph.counts.values()) > n

    def typed(name: str) -> Column:
        if kinds[name] in INTEGER_KINDS:
            return F.col(name).cast("double" if padded or present[name] < n else "bigint").alias(name)
        return F.col(name)

    return table.select("row", *[typed(name) for name in wanted])


def _strata(graph: SparkGraph) -> DataFrame | None:
    """``row``, ``stratum``: each sample's outcome (its own, else its subject's), several joined with ``|`` in
    sorted order; an outcome id holding ``|`` where some sample has several is ``ambiguity``."""
    pairs = []
    if graph.has_relation(RelationName.SAMPLE_HAS_OUTCOME):
        pairs.append(
            graph.edges[RelationName.SAMPLE_HAS_OUTCOME].select(
                F.col("source").alias("row"), F.col("target").alias("o")
            )
        )
    if graph.has_relation(RelationName.SUBJECT_HAS_OUTCOME):
        subjects = graph.edges[RelationName.SAMPLE_BELONGS_TO_SUBJECT].select(
            F.col("source").alias("row"), F.col("target").alias("s")
        )
        outcomes = graph.edges[RelationName.SUBJECT_HAS_OUTCOME].select(
            F.col("source").alias("s"), F.col("target").alias("o")
        )
        pairs.append(subjects.join(outcomes, "s").select("row", "o"))
    if not pairs:
        return None
    found = pairs[0] if len(pairs) == 1 else pairs[0].unionByName(pairs[1])
    keys = graph.nodes[NodeType.OUTCOME].select(F.col("row").alias("o"), "key")
    named = found.distinct().join(keys, "o")
    strata = named.groupBy("row").agg(F.array_sort(F.collect_list("key")).alias("keys"))
    several = strata.where(F.size("keys") > 1)
    first = several.orderBy("row").limit(1).collect()
    if first:
        barred = [r[0] for r in keys.where(F.col("key").contains("|")).orderBy("key").select("key").limit(1).collect()]
        if barred:
            sample = graph.sample_ids().where(F.col("row") == first[0]["row"]).collect()[0]["sample_id"]
            raise DepgraphError(
                "ambiguity",
                f"outcome id {barred[0]!r} holds '|', which joins a sample's several outcomes into its stratum (sample "
                f"{sample!r} has several): two different sets of outcomes would read as one stratum; rename the "
                "outcome",
                ids=barred,
            )
    return strata.select("row", F.concat_ws("|", "keys").alias("stratum"))


def spec_envelope(partition: SparkPartition) -> dict[str, Any]:
    """Every field of the spec but its samples (and the digest): what the single-machine
    :meth:`~depgraph.spec.model.SplitSpec.from_partition` writes for the same partition."""
    fields = partition_fields(partition, partition.graph, subset=partition.subset)
    return {
        "format": SPEC_FORMAT,
        "format_version": SPEC_FORMAT_VERSION,
        "created_at": now_utc(),
        "generator": Generator.current().model_dump(mode="json"),
        "digest": None,
        "graph_name": fields["graph_name"],
        "constraint": fields["constraint"].model_dump(mode="json"),
        "recommended_resampling": fields["recommended_resampling"],
        "warnings": [w.model_dump(mode="json") for w in fields["warnings"]],
        "summary": fields["summary"].model_dump(mode="json"),
    }


@dataclass(frozen=True)
class SparkSpec:
    """A split spec whose sample columns are a Spark table: what :func:`depgraph.assign_folds` and
    :func:`depgraph.write_spec` take on the Spark engine (they dispatch on it, as :func:`depgraph.derive` does on
    a :class:`~depgraph.spark.graph.SparkGraph`).

    ``envelope`` holds every field of the spec but its samples, folds, digest and signature (as JSON values);
    ``samples`` the sample columns with ``row``, each sample's place; ``folds`` the plan, once assigned (planned in
    Spark, :mod:`depgraph.spark.folds`); ``driver_groups`` the most groups a plan decided on the driver may hold.
    Made by :meth:`of` from a partition, or read from a columnar spec file by :func:`read_spec`."""

    __depgraph_engine__: ClassVar[str] = "spark"

    envelope: dict[str, Any]
    samples: DataFrame
    n_samples: int
    folds: SparkFolds | None = None
    driver_groups: int = DRIVER_GROUPS

    @classmethod
    def of(cls, partition: SparkPartition, attributes: Sequence[str] | str | None = None) -> SparkSpec:
        """The spec of ``partition``, carrying the graph's sample ``attributes`` (``"all"``: every one some sample
        has) as :meth:`~depgraph.spec.model.SplitSpec.from_partition` does."""
        envelope = spec_envelope(partition)
        del envelope["digest"]
        return cls(envelope, sample_columns(partition, attributes), partition.n_samples)

    @property
    def columns(self) -> list[str]:
        return [c for c in self.samples.columns if c != "row"]


def spec_request(
    partition: SparkPartition, attributes: Sequence[str] | str | None = None, provenance: Provenance | None = None
) -> SparkSpec:
    """:func:`~depgraph.spec.privacy.derived_spec` on Spark: the spec of ``partition`` carrying ``attributes``
    (:meth:`SparkSpec.of`) and the ``provenance`` of a study run, as
    :meth:`~depgraph.spec.model.SplitSpec.from_partition` records it."""
    spec = SparkSpec.of(partition, attributes)
    if provenance is None:
        return spec
    return replace(spec, envelope={**spec.envelope, "provenance": provenance.model_dump(mode="json")})


def read_spec(path: str | os.PathLike[str], spark: SparkSession, verify_key: str | bytes | None = None) -> SparkSpec:
    """A columnar spec file (``.dgspec``) as a :class:`SparkSpec`: checked on the driver by the single-machine
    reader (every element, the digest, the signature with ``verify_key``, what the content says of itself: a spec
    holds a few columns per sample, about 1 GB at 10^7 samples), its sample columns and its folds' rows then read
    by Spark from the file's Parquet parts."""
    if not Path(str(path)).is_dir():
        raise DepgraphError(
            "invalid_argument", f"the Spark engine reads the columnar form (a .dgspec), not {str(path)!r}"
        )
    checked = read_checked_spec(path, verify_key)
    envelope = {k: v for k, v in checked.envelope().items() if k not in ("digest", "signature")}
    frame = in_file_order(spark.read.parquet(str(Path(path) / SAMPLES)))
    folds = None
    if checked.folds is not None:  # the rows as written (split, role, position, sample_id), checked above
        rows = spark.read.parquet(str(Path(path) / FOLDS)).select(*FOLD_COLUMNS)
        folds = SparkFolds(checked.folds.outline(), rows, [])
    return SparkSpec(envelope, frame.select("row", *checked.samples.columns), checked.n_samples, folds)


def read_spec_request(
    path: str | os.PathLike[str],
    verify_key: str | bytes | None = None,
    spark: SparkSession | None = None,
    sized: bool = False,
) -> SparkSpec:
    """:func:`depgraph.read_spec` on Spark (``engine="spark"``): :func:`read_spec` with ``spark`` (the active
    session, else a local one), the session's shuffle partitions fitted to the spec's samples with ``sized``."""
    spec = read_spec(path, spark or local_session(), verify_key)
    if sized:
        fit_partitions(spec.samples.sparkSession, spec.n_samples)
    return spec


def assign_folds_request(spec: SparkSpec, scheme: FoldScheme) -> SparkSpec:
    """:func:`depgraph.assign_folds` on Spark: ``spec`` carrying the plan of ``scheme`` (planned in Spark), and the
    warnings its planning made in place of those of the plan it replaces, as
    :meth:`~depgraph.spec.model.SplitSpec.with_folds` keeps them."""
    if type(scheme) not in PLANNERS:
        raise DepgraphError("invalid_argument", f"the Spark engine has no planner for {scheme.name} folds")
    folds = plan_folds(spec.samples, spec.n_samples, scheme, spec.driver_groups)
    kept = [w for w in spec.envelope["warnings"] if w["code"] not in PLAN_WARNING_CODES]
    envelope = {**spec.envelope, "created_at": now_utc(),
                "warnings": kept + [w.model_dump(mode="json") for w in folds.findings]}  # fmt: skip
    for finding in folds.findings:  # told as assign_folds tells them
        warnings.warn(DepgraphWarning(finding.code, finding.message, ids=finding.ids), stacklevel=3)
    return replace(spec, envelope=envelope, folds=folds)


def write_spec_request(spec: SparkSpec, path: str | os.PathLike[str], sign_key: str | bytes | None = None) -> str:
    """:func:`depgraph.write_spec` on Spark: ``spec`` in the columnar form at ``path`` (a directory ending
    ``.dgspec``, written whole: staged beside it and renamed into place), signed with ``sign_key`` when given;
    returns its digest, the one the single-machine engine computes for the same content."""
    key = _checked_output(path, sign_key)
    names, folds = spec.columns, spec.folds
    checked = {**spec.envelope, "digest": "sha256:" + "0" * 64, "samples": {c: [] for c in names}}
    if folds is not None:
        checked["folds"] = {**folds.plan, "splits": [{**s, "test": [], "excluded": []} for s in folds.plan["splits"]]}
    problem = envelope_problem(checked, "split-spec")
    if problem is not None:
        raise DepgraphError("invalid_argument", f"spec: {problem}")
    with atomic_tree(path) as staged:
        parts = _written(spec.samples, ["row"], names, staged / SAMPLES, spec.n_samples, "sample")
        tables = {SAMPLES: {"rows": spec.n_samples, "columns": names}}
        streamed = None
        manifest = {**spec.envelope, "digest": None}
        if folds is not None:
            listed = sum(s["n_test"] + s["n_excluded"] for s in folds.plan["splits"])
            order = ["split", (F.col("role") != TESTED).cast("int"), "position"]
            fold_parts = _written(folds.rows, order, list(FOLD_COLUMNS), staged / FOLDS, listed, "fold")
            streamed = canonical_folds(folds.plan, fold_parts)
            manifest["folds"] = folds.plan
            tables[FOLDS] = {"rows": listed, "columns": list(FOLD_COLUMNS)}
        digest = spec_digest(manifest, {c: _column_json(parts, c) for c in names}, streamed)
        signature = {} if key is None else {"signature": Signature.of(digest, key).model_dump(mode="json")}
        document = {**manifest, "digest": digest, **signature, TABLES: tables}
        (staged / COLUMNAR_MANIFEST).write_bytes(orjson.dumps(document, option=orjson.OPT_INDENT_2) + b"\n")
    return digest


def write_spec(
    spec: SparkPartition | SparkSpec,
    path: str | os.PathLike[str],
    scheme: FoldScheme | str | None = None,
    *,
    driver_groups: int = DRIVER_GROUPS,
    attributes: Sequence[str] | str | None = None,
    sign_key: str | bytes | None = None,
    **parameters: Any,
) -> str:
    """Write the spec of a partition (or a :class:`SparkSpec`) in the columnar form at ``path`` and return its
    digest: :func:`depgraph.read_spec` reads it, and it carries the digest the single-machine engine computes for
    the same content. A shorthand for :meth:`SparkSpec.of`, :func:`depgraph.assign_folds` and
    :func:`depgraph.write_spec`, which take a SparkSpec as they take a SplitSpec.

    With ``scheme`` (a name and its ``parameters``, or a scheme: ``"group-kfold", n_splits=5, seed=1``), the spec
    carries that fold plan, planned in Spark (:mod:`depgraph.spark.folds`) as :func:`depgraph.assign_folds`
    plans it on one machine: the same splits, balance and digest. ``attributes`` carries sample attributes of the
    graph (``"all"``: every one some sample has) as :meth:`~depgraph.spec.model.SplitSpec.from_partition` does:
    the columns fold schemes key or stratify on. ``sign_key`` signs it as :meth:`~depgraph.spec.model.SplitSpec.signed`
    does (HMAC-SHA256 of the digest; the key rules of :mod:`depgraph.spec.keys`, checked before any Spark work)."""
    _checked_output(path, sign_key)
    chosen = None if scheme is None else spark_scheme(scheme, parameters)
    if chosen is None and parameters:
        raise DepgraphError("invalid_argument", f"fold parameters {describe_ids(sorted(parameters))} need a scheme")
    if isinstance(spec, SparkSpec):
        if attributes is not None:
            raise DepgraphError("invalid_argument", "attributes are carried from a partition's graph, not a spec")
    else:
        spec = SparkSpec.of(spec, attributes)
    spec = replace(spec, driver_groups=driver_groups)
    if chosen is not None:
        spec = assign_folds_request(spec, chosen)
    return write_spec_request(spec, path, sign_key)


def _checked_output(path: str | os.PathLike[str], sign_key: str | bytes | None) -> bytes | None:
    """The signing key, checked (the rules of :mod:`depgraph.spec.keys`), for a spec to write at ``path``, which
    must name the columnar form: both before any Spark work."""
    key = None if sign_key is None else check_key(sign_key, "the signing key")
    if Path(str(path)).suffix.lower() != ".dgspec":
        raise DepgraphError(
            "invalid_argument", f"the Spark engine writes the columnar form: name it .dgspec, not {str(path)!r}"
        )
    return key


def _written(frame: DataFrame, order: list[Any], columns: list[str], target: Path, rows: int, what: str
             ) -> list[Path]:  # fmt: skip
    """Write ``frame``'s ``columns``, its rows sorted by ``order``, as Parquet parts at ``target`` (each part's rows
    before the next part's; one part up to :data:`ONE_PART_ROWS` rows, sorted in one task without the sample of
    the rows a range partitioning takes first); the parts in order, their row count checked against ``rows``."""
    one_part = rows <= ONE_PART_ROWS
    frame = frame.coalesce(1).sortWithinPartitions(*order) if one_part else frame.orderBy(*order)
    frame.select(*columns).write.parquet(str(target), compression="snappy")
    parts = sorted(p for p in target.iterdir() if not hidden(p.name))
    found = sum(pq.ParquetFile(p).metadata.num_rows for p in parts)
    if found != rows:
        raise DepgraphError("integrity", f"Spark wrote {found} {what} rows for {rows}")
    return parts


def _column_json(parts: list[Path], column: str) -> Iterator[bytes]:
    """One sample column as compact JSON, read from the parts batch by batch (never whole in memory)."""
    yield b"["
    first = True
    for part in parts:
        for batch in pq.ParquetFile(part).iter_batches(batch_size=BATCH_ROWS, columns=[column]):
            if batch.num_rows == 0:
                continue
            text = json_array(batch.column(0))
            yield (b"" if first else b",") + text[1:-1]
            first = False
    yield b"]"
