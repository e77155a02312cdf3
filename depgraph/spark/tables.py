"""A SparkGraph built from Spark DataFrames: the metadata table and pair tables, checked in Spark with the
single-machine engine's error codes.

:func:`from_metadata` takes one row per sample (rows may repeat a sample to list several outcomes) with the
columns of :func:`depgraph.from_metadata` (``columns=`` maps yours); :func:`add_kinship` relates subjects whose
kinship is at least a threshold (a number or a KING degree: ``first``…); :func:`add_duplicates` declares duplicate
samples; :func:`add_relations` adds pairs of any sample–sample or subject–subject relation; :func:`add_spatial` makes
samples within a radius of each other adjacent (:mod:`depgraph.spark.spatial`). What is refused, by
code, as the single-machine engine refuses it:

=====================================================  ===============
a missing ``sample_id`` column; an id column of dates   ``schema`` / ``invalid_argument``
no rows                                                 ``empty_input``
a row without a sample id; a time without a timepoint  ``missing_id``
an id holding a line break, a tab or another control    ``invalid_value``
character (metadata and pair tables)
two spellings of one id that differ only in Unicode     ``ambiguity``
normalisation (``"José"`` composed and decomposed)
rows of one sample that disagree (a sample with two     ``ambiguity``
subjects, without ``allow_multi_subject_samples``)
a pair naming an id the graph lacks                     ``reference`` (``unknown="ignore"`` drops it)
a pair of an id with itself; a kinship outside [0, 1];  ``invalid_value``
a float id that is not a whole number below 2**53
ids of a metadata column that look alike (Unicode       warned: ``confusable_ids`` (they stay different ids)
confusables: ``Pat`` with a Cyrillic ``а``)
=====================================================  ===============

Each table is a DataFrame or the path of one Spark reads (:func:`read_table`): Parquet (a file or a directory of
parts), or CSV / TSV with a header row, every row parsed before use.

Ids are text, trimmed, a blank one missing; integer columns are read as their decimal text, float columns as the
single machine reads them (``1.0`` is ``"1"``; a float that is not a whole number below 2**53 is refused). Ids that
are not plain ASCII are compared in their composed Unicode form (NFC) by Arrow, as the single-machine engine
compares them: that one step runs in the executors' Python (it needs pyarrow there), and only on the distinct ids
that are not ASCII. A text file's cells that the single-machine reader reads as missing (``NA``, ``NULL``, ``nan``…)
are missing. The other columns are the samples' attributes, typed as the single machine types them
(:mod:`depgraph.spark.attributes`); rows of one sample agree on them.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping, Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any, TypeAlias

import numpy as np
import pyarrow as pa
from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F

from depgraph.common.arguments import refuse_options
from depgraph.common.identifiers import EXACT_FLOAT_INTEGERS, UNPRINTABLE, inexact_float_id
from depgraph.errors import DepgraphError, describe_ids
from depgraph.graph.assembly import assemble_sorted, with_edges
from depgraph.ingest.checks import RECORDED_IDS, checked_unknown, conflicting_values, dropped_record
from depgraph.ingest.kinship import detect_format, resolve_threshold
from depgraph.ingest.metadata import (
    GROUPING_COLUMNS,
    checked_column_map,
    checked_options,
    id_like_from_counts,
    look_alike_note,
    unmapped_roles,
)
from depgraph.ingest.pairs import kinship_pairs
from depgraph.ingest.spatial import checked_distances, span_overflow, spatial_record
from depgraph.io.files import describe_source, file_name
from depgraph.io.tables import MISSING_TOKENS
from depgraph.spark.attributes import typed_attributes
from depgraph.spark.frames import (
    PLAIN_ASCII,
    any_of,
    first_values,
    look_alike_groups,
    numbered,
    numbered_with_count,
    refuse_unicode_twins,
)
from depgraph.spark.graph import INTEGER_KINDS, SparkGraph
from depgraph.spark.session import checkpointed, unreadable_file
from depgraph.spark.spatial import near_pairs
from depgraph.vocab import CANONICAL_COLUMNS, NODE_TYPES, RELATION, RELATIONS, NodeType, RelationName, relation_named

#: The metadata columns that name a node (every canonical column but time_index).
ID_COLUMNS = tuple(c for c in CANONICAL_COLUMNS if c != "time_index")
TEXT_KINDS = frozenset({"string"})
FLOAT_KINDS = frozenset({"float", "double"})
#: A table: a DataFrame, or the path of one (Parquet, CSV, TSV).
Table: TypeAlias = "DataFrame | str | os.PathLike[str]"
#: An id holding one of these is refused (a quoting accident, or an invisible character; no export could write it
#: back): the single-machine class, which Java's regular expressions read alike, over every row.
CONTROL = UNPRINTABLE
#: Delimiters of the delimited files read, by their suffix.
DELIMITERS = {".csv": ",", ".tsv": "\t", ".txt": "\t"}


#: The UTF-8 byte-order mark as Spark reads it into the first column's name; U+FFFD, what it makes of bytes that are
#: not UTF-8.
BOM, UNDECODED = "\ufeff", "\ufffd"


def _refuse_undecoded(frame: DataFrame, path: Path, what: str) -> None:
    """``parse`` when a cell or a column name of a delimited file holds bytes that are not UTF-8 (Spark reads them
    as U+FFFD rather than failing), naming the first such row."""
    names = [c for c in frame.columns if UNDECODED in c]
    bad = F.lit(False)
    for column in frame.columns:
        bad = bad | F.coalesce(F.col(f"`{column}`").contains(UNDECODED), F.lit(False))
    rows = frame.where(bad).limit(1).collect()
    if names or rows:
        shown = repr(names[0]) if names else repr({k: v for k, v in rows[0].asDict().items() if v and UNDECODED in v})
        raise DepgraphError(
            "parse",
            f"{what} {str(path)!r} is not UTF-8 text: {shown} holds bytes that do not decode; re-encode it as UTF-8 "
            "(the single-machine reader reads other encodings with --encoding)",
            path=str(path),
        )


def read_table(source: Table, spark: SparkSession | None, what: str) -> DataFrame:
    """``source`` as given when it is a DataFrame, else the table at that path read by ``spark`` (the active
    session when None): Parquet (``.parquet``, or a directory of parts), or CSV / TSV (``.csv``; ``.tsv``/``.txt``
    tab-separated) with a header row, every cell read as text as the single-machine reader reads ids (``001``
    stays ``001``; kinship and ``time_index`` become numbers where they are used), every row parsed now — a
    malformed row is ``parse``, never a silently blank value. A missing path is ``io``, another suffix
    ``invalid_argument``."""
    if isinstance(source, DataFrame):
        return source
    if not isinstance(source, (str, os.PathLike)):
        kind = f"{type(source).__module__.partition('.')[0]} {type(source).__name__}"
        raise DepgraphError("invalid_argument", f"{what} on the Spark engine is a Spark DataFrame or a path, not a "
                            f"{kind} (spark.createDataFrame makes one)")  # fmt: skip
    path = Path(source)
    session = spark or SparkSession.getActiveSession()
    if session is None:
        raise DepgraphError("invalid_argument", f"{what}: reading {str(path)!r} needs a Spark session; start one")
    if not path.exists():
        raise DepgraphError("io", f"{what} {str(path)!r} does not exist", path=str(path))
    suffix = path.suffix.lower()
    try:
        if path.is_dir() or suffix in (".parquet", ".pq"):
            return session.read.parquet(str(path))
        if suffix not in DELIMITERS:
            raise DepgraphError("invalid_argument", f"{what} {str(path)!r}: Spark reads .parquet, .csv or .tsv files")
        frame = session.read.csv(str(path), header=True, sep=DELIMITERS[suffix], inferSchema=False,
                                 mode="FAILFAST")  # fmt: skip
        if frame.columns and frame.columns[0].startswith(BOM):  # a byte-order mark, as the single-machine reader
            frame = frame.withColumnRenamed(frame.columns[0], frame.columns[0][len(BOM) :])
        # the cells the single-machine reader reads as missing (NA, NULL, nan…), missing here too: an id "NA" is
        # no subject, and a number column holding one is still numbers
        frame = frame.select(*[F.when(~F.col(f"`{c}`").isin(*MISSING_TOKENS), F.col(f"`{c}`")).alias(c)
                               for c in frame.columns])  # fmt: skip
        frame = checkpointed(frame)
        _refuse_undecoded(frame, path, what)
        return frame
    except DepgraphError:
        raise
    except Exception as exc:  # a file Spark cannot parse as what its name says
        reason = unreadable_file(exc)
        if reason is None:
            raise
        raise DepgraphError("parse", f"{what} {str(path)!r} is not a readable table ({reason})") from None


def _ids(frame: DataFrame, column: str, what: str) -> DataFrame:
    """``frame`` with ``column`` as trimmed text, null where blank; floats as the single machine keys them (a whole
    number below 2**53 without its decimal part, ``1.0`` is ``"1"``; missing where not a number or infinite), a
    float that is not such a number refused (``invalid_value``), another kind ``invalid_argument``."""
    kind = dict(frame.dtypes)[column]
    if kind in FLOAT_KINDS:
        number = F.col(column).cast("double")
        finite = ~F.isnan(number) & (F.abs(number) != float("inf"))
        inexact = finite & ((F.floor(number) != number) | (F.abs(number) >= float(EXACT_FLOAT_INTEGERS)))
        shown = first_values(frame.where(inexact).select(number.alias("_id")), "_id", 1)
        if shown:
            raise inexact_float_id(float(shown[0]), column, what)
        return frame.withColumn(column, F.when(finite, number.cast("long").cast("string")))
    if kind not in TEXT_KINDS | INTEGER_KINDS:
        raise DepgraphError(
            "invalid_argument",
            f"{what}: {column} holds {kind} values; give ids as text, whole numbers or floats that are whole numbers",
            column=column,
        )
    text = F.trim(F.col(column).cast("string"))
    return frame.withColumn(column, F.when(F.length(text) > 0, text))


def _id_facts(frame: DataFrame, columns: Sequence[str]) -> dict[str, int]:
    """What the refusals of an id table need, counted in one Spark job: ``rows``; per id column, ``missing:<column>``
    (rows without an id); ``control`` (some id holds a control character) and ``wide`` (some id is not plain
    ASCII: then Unicode spellings are compared)."""
    row = frame.agg(
        F.count(F.lit(1)).alias("rows"),
        *[F.count(F.when(F.col(c).isNull(), 1)).alias(f"missing:{c}") for c in columns],
        F.max(any_of(F.col(c).rlike(CONTROL) for c in columns).cast("int")).alias("control"),
        F.max(any_of(~F.col(c).rlike(PLAIN_ASCII) for c in columns).cast("int")).alias("wide"),
    ).first()
    return {k: int(v or 0) for k, v in row.asDict().items()}


def _missing_ids(what: str, column: str, count: int) -> DepgraphError:
    """``missing_id``: ``count`` rows of ``column`` hold no id (counted: a DataFrame's rows have no line numbers)."""
    return DepgraphError("missing_id", f"{what}: {column} is missing or blank in {count} row(s)", column=column)


def _refuse_bad_ids(frame: DataFrame, columns: Sequence[str], what: str, facts: dict[str, int],
                    required: Sequence[str]) -> None:  # fmt: skip
    """``missing_id`` when some row of a ``required`` column holds no id; ``invalid_value`` when an id of
    ``columns`` holds a line break, a tab or another control character, naming the column, how many rows and the
    first such ids."""
    for column in required:
        if facts[f"missing:{column}"]:
            raise _missing_ids(what, column, facts[f"missing:{column}"])
    if not facts["control"]:
        return
    for column in columns:
        bad = frame.where(F.col(column).rlike(CONTROL))
        shown = first_values(bad, column, 3)
        if shown:
            raise DepgraphError(
                "invalid_value",
                f"{what}: {column} holds a line break, tab or other control or invisible character in "
                f"{bad.count()} row(s) (e.g. {', '.join(ascii(v) for v in shown)})",
                column=column,
            )


def from_metadata(
    frame: Table,
    columns: Mapping[str, str] | None = None,
    *,
    name: str | None = None,
    allow_multi_subject_samples: bool = False,
    spark: SparkSession | None = None,
) -> SparkGraph:
    """A SparkGraph from one row per sample (see the module docstring for the columns and the refusals); ``frame``
    a DataFrame or a path :func:`read_table` reads (with ``spark``, or the active session)."""
    checked_options("sample", allow_multi_subject_samples, name)  # the single machine's checks of both
    if spark is not None and not isinstance(spark, SparkSession):
        raise DepgraphError("invalid_argument", f"spark= takes a SparkSession, not {type(spark).__name__}")
    what = describe_source(frame, "metadata")  # a file named as the single-machine reader names it
    from_text = isinstance(frame, (str, os.PathLike)) and Path(frame).suffix.lower() in DELIMITERS
    frame = read_table(frame, spark, "metadata")
    frame = frame.withColumnsRenamed(checked_column_map(columns, frame.columns, what))
    if "sample_id" not in frame.columns:
        raise DepgraphError("schema", f"{what} has no sample_id column (columns: {describe_ids(frame.columns, 12)})")
    read = list(frame.columns)
    present = [c for c in ID_COLUMNS if c in frame.columns]
    attributes = [c for c in frame.columns if c not in CANONICAL_COLUMNS]
    grouped = any(c in read for c in GROUPING_COLUMNS)
    frame = frame.select(*present, *(["time_index"] if "time_index" in frame.columns else []),
                         *[F.col(f"`{c}`") for c in attributes])  # fmt: skip
    for column in present:
        frame = _ids(frame, column, what)
    kinds_read = dict(frame.dtypes)
    frame = typed_attributes(frame, attributes, from_text, what)
    id_like = None if grouped else _id_like_columns(frame, attributes, kinds_read)
    if "time_index" in frame.columns:
        frame = frame.withColumn("time_index", F.col("time_index").cast("double"))
    frame = checkpointed(frame)
    facts = _id_facts(frame, present)
    if facts["rows"] == 0:
        raise DepgraphError("empty_input", f"{what} has no rows")
    _refuse_bad_ids(frame, present, what, facts, required=["sample_id"])
    notes = []  # ids of plain ASCII can be neither Unicode twins nor look-alikes
    if facts["wide"]:
        refuse_unicode_twins(frame, {c: c for c in present}, what, probed=True)
        notes = [(column, *look_alike_groups(frame, column)) for column in present]  # warned once the table is whole
    if "time_index" in frame.columns:
        if "timepoint_id" not in frame.columns:
            frame = frame.withColumn("timepoint_id", F.regexp_replace(F.col("time_index").cast("string"), r"\.0$", ""))
        orphans = frame.where(F.col("time_index").isNotNull() & F.col("timepoint_id").isNull()).count()
        if orphans:
            raise _missing_ids(what, "timepoint_id", orphans)
    _refuse_conflicting_rows(frame, allow_multi_subject_samples, what, attributes)
    graph = _assembled(frame, facts["rows"], name, allow_multi_subject_samples, read, attributes)
    look_alike = [look_alike_note(groups, count, column, what) for column, groups, count in notes if count]
    step = {**graph.history[0], **({"warnings": look_alike} if look_alike else {})}
    if id_like is not None:  # nothing to group by: the columns that look like ids are named (no_grouping_column)
        step["no_grouping_column"] = {"id_like_columns": id_like}
    step.update(unmapped_roles(attributes, read, what))  # warned as on one machine
    return replace(graph, history=(step,))


def _id_like_columns(frame: DataFrame, attributes: list[str], kinds_read: dict[str, str]) -> list[str]:
    """The attribute columns that look like ids (:func:`~depgraph.ingest.metadata.id_like_from_counts`: text or
    integers as typed, values present and distinct counted in one query), dates as read not among them (one machine
    holds them as dates; Spark's attributes hold them as ISO text)."""
    kinds = dict(frame.dtypes)
    textual = [c for c in attributes if (kinds[c] in TEXT_KINDS or kinds[c] in INTEGER_KINDS)
               and kinds_read[c] in TEXT_KINDS | INTEGER_KINDS]  # fmt: skip
    if not textual:
        return []
    columns = [F.col(f"`{c}`") for c in textual]
    row = frame.agg(*[F.count(c) for c in columns], *[F.countDistinct(c) for c in columns]).first()
    return id_like_from_counts((c, int(row[i]), int(row[len(textual) + i])) for i, c in enumerate(textual))


def _refuse_conflicting_rows(frame: DataFrame, allow_multi_subject: bool, what: str, attributes: list[str]) -> None:
    """Rows repeating a sample id agree on every single-valued column and every attribute (``ambiguity`` naming
    the first sample)."""
    single = [r.column for r in RELATIONS if r.single_target and r.column in frame.columns]
    if allow_multi_subject and "subject_id" in single:
        single.remove("subject_id")
    if "time_index" in frame.columns:
        single.append("time_index")
    single += attributes
    if not single:
        return
    counts = frame.groupBy("sample_id").agg(*[F.countDistinct(f"`{c}`").alias(c) for c in single])
    for column in single:
        bad = first_values(counts.where(F.col(f"`{column}`") > 1), "sample_id", 5)
        if bad:
            shown = first_values(frame.where(F.col("sample_id") == bad[0]).where(F.col(f"`{column}`").isNotNull()),
                                 column, 5)  # fmt: skip
            raise conflicting_values(what, column, bad, describe_ids([str(v) for v in shown]))


def _assembled(frame: DataFrame, rows: int, name: str | None, allow_multi: bool, read: list[str],
               attributes: list[str]) -> SparkGraph:  # fmt: skip
    """The node and edge tables of a checked metadata frame of ``rows`` rows (the samples' with their
    attributes)."""
    sources = {r.target: r for r in RELATIONS if r.column in frame.columns and r.source == NodeType.SAMPLE}
    nodes, counts = {}, {t: 0 for t in NODE_TYPES}
    for node_type in NODE_TYPES:
        column = "sample_id" if node_type == NodeType.SAMPLE else (sources[node_type].column if node_type in sources
                                                                    else None)  # fmt: skip
        if column is None:
            continue
        keys = frame.where(F.col(column).isNotNull()).select(F.col(column).alias("key")).distinct()
        if node_type == NodeType.TIMEPOINT and "time_index" in frame.columns:
            times = frame.groupBy(F.col("timepoint_id").alias("key")).agg(
                F.countDistinct("time_index").alias("n"), F.min("time_index").alias("time_index"))  # fmt: skip
            clash = first_values(times.where(F.col("n") > 1), "key", 5)
            if clash:
                raise DepgraphError("ambiguity", f"metadata: timepoint {describe_ids(clash)} has several time_index")
            keys = times.select("key", "time_index")
        if node_type == NodeType.SAMPLE and attributes:
            keys = _with_attributes(frame, attributes)
        table, counts[node_type] = numbered_with_count(keys, ["key"])  # numbered once and kept: no checkpoint more
        nodes[node_type] = table.select("row", *keys.columns)
    samples = nodes[NodeType.SAMPLE].select(F.col("row").alias("source"), F.col("key").alias("sample_id"))
    edges = {}
    for node_type, rule in sources.items():
        targets = nodes[node_type].select(F.col("row").alias("target"), F.col("key").alias(rule.column))
        pairs = frame.where(F.col(rule.column).isNotNull()).select("sample_id", rule.column).distinct()
        edges[rule.name] = checkpointed(pairs.join(samples, "sample_id").join(targets, rule.column)
                                        .select("source", "target"))  # fmt: skip
    if "time_index" in frame.columns and NodeType.TIMEPOINT in nodes:
        edges[RelationName.TIMEPOINT_PRECEDES] = _precedence(nodes[NodeType.TIMEPOINT])
    history = ({"step": "from_metadata", "rows": rows, "columns": read},)
    overrides = {"allow_multi_subject_samples": True} if allow_multi else {}

    def held(relation: str) -> bool:  # a column's target type has a node for each id a sample is linked to
        if relation == RelationName.TIMEPOINT_PRECEDES:
            return edges[relation].limit(1).count() > 0
        return counts[RELATION[relation].target] > 0

    return SparkGraph(nodes, counts, {k: v for k, v in edges.items() if held(k)}, name=name, overrides=overrides,
                      history=history)  # fmt: skip


def _with_attributes(frame: DataFrame, attributes: list[str]) -> DataFrame:
    """Each sample's ``key`` and attribute values (rows of a sample agree: checked before), a column holding no
    value at all left out as the single machine leaves it out (it declares nothing)."""
    held = frame.agg(*[F.count(F.col(f"`{c}`")).alias(c) for c in attributes]).first()
    kept = [c for c in attributes if held is not None and held[c]]
    return frame.groupBy(F.col("sample_id").alias("key")).agg(
        *[F.first(F.col(f"`{c}`"), ignorenulls=True).alias(c) for c in kept]
    )


def _precedence(timepoints: DataFrame) -> DataFrame:
    """Each timepoint precedes every timepoint of the next time_index level (ties precede none of each other)."""
    levels = timepoints.where(F.col("time_index").isNotNull()).select("time_index").distinct()
    ranked = numbered(levels, ["time_index"], "level")
    placed = timepoints.join(ranked, "time_index").select("row", "level")
    after = placed.select(F.col("row").alias("target"), (F.col("level") - 1).alias("level"))
    return checkpointed(placed.select(F.col("row").alias("source"), "level").join(after, "level")
                        .select("source", "target"))  # fmt: skip


def _pairs(graph: SparkGraph, pairs: DataFrame, node_type: NodeType, id_columns: Sequence[str], what: str,
           unknown: str, kept: Sequence[str] = ()) -> tuple[DataFrame, dict[str, Any]]:  # fmt: skip
    """``source``, ``target`` rows of a pair table's known pairs (lower row first), and the record of the drop;
    the table's ``kept`` columns ride along."""
    checked_unknown(unknown)
    if isinstance(id_columns, str) or len(id_columns) != 2 or not all(isinstance(c, str) for c in id_columns):
        raise DepgraphError("invalid_argument", f"{what}: the id columns are two column names, not {id_columns!r}")
    if id_columns[0] == id_columns[1]:
        raise DepgraphError("invalid_argument", f"{what}: the id columns pair {id_columns[0]!r} with itself")
    a, b = id_columns
    missing = [c for c in id_columns if c not in pairs.columns]
    if missing:
        raise DepgraphError("schema", f"{what} needs columns {describe_ids(list(id_columns))}; missing "
                            f"{describe_ids(missing)}")  # fmt: skip
    pairs = pairs.select(*id_columns, *kept)
    pairs = _ids(_ids(pairs, a, what), b, what)
    _refuse_bad_ids(pairs, id_columns, what, _id_facts(pairs, id_columns), required=id_columns)
    selves = first_values(pairs.where(F.col(a) == F.col(b)), a, 5)
    if selves:
        raise DepgraphError("invalid_value", f"{what}: pairs an id with itself ({describe_ids(selves)})")
    if graph.count(node_type) == 0:
        raise DepgraphError("reference", f"{what} names {node_type.value} ids but the graph has no "
                            f"{node_type.value} nodes")  # fmt: skip
    keys = graph.nodes[node_type].select("row", "key")
    located = pairs.join(keys.select(F.col("key").alias(a), F.col("row").alias("_a")), a, "left").join(
        keys.select(F.col("key").alias(b), F.col("row").alias("_b")), b, "left")  # fmt: skip
    located = checkpointed(located)
    strangers = located.where(F.col("_a").isNull()).select(F.col(a).alias("id")).unionByName(
        located.where(F.col("_b").isNull()).select(F.col(b).alias("id"))).distinct()  # fmt: skip
    count = strangers.count()
    if count and unknown == "error":
        shown = first_values(strangers, "id")
        raise DepgraphError(
            "reference",
            f"{what} names {count} {node_type.value} id(s) not in the graph: {describe_ids(shown, total=count)} "
            "(to drop them instead: unknown='ignore')",
            ids=shown,
        )
    dropped_ids = first_values(strangers, "id", RECORDED_IDS) if count else []
    known = located.where(F.col("_a").isNotNull() & F.col("_b").isNotNull())
    dropped = located.count() - known.count()
    edges = known.select(F.least("_a", "_b").alias("source"), F.greatest("_a", "_b").alias("target"), *[
        c for c in known.columns if c not in (a, b, "_a", "_b")])  # fmt: skip
    return edges, {"unknown": unknown, "unknown_dropped": dropped, "unknown_id_count": count,
                   "unknown_ids": [str(v) for v in dropped_ids]}  # fmt: skip


def _with_relation(graph: SparkGraph, relation: str, edges: DataFrame, record: dict[str, Any]) -> SparkGraph:
    """``graph`` with ``edges`` added to ``relation`` (each edge once) and ``record`` in its history."""
    if relation in graph.edges:
        edges = graph.edges[relation].unionByName(edges, allowMissingColumns=True)
    extra = [F.max(c).alias(c) for c in edges.columns if c not in ("source", "target")]
    merged = edges.groupBy("source", "target").agg(*extra) if extra else edges.select("source", "target").distinct()
    merged = checkpointed(merged)
    found = {**graph.edges}
    if merged.limit(1).count():
        found[relation] = merged
    return replace(graph, edges=found, history=(*graph.history, record))


def add_kinship(
    graph: SparkGraph,
    pairs: Table | Any,
    threshold: float | str,
    *,
    id_columns: Sequence[str] = ("id1", "id2"),
    value_column: str = "kinship",
    unknown: str = "error",
    format: str | None = None,
    id_template: str = "{IID}",
    encoding: str | None = None,
    absent: str = "warn",
    ids: Any = None,
) -> SparkGraph:
    """Relate subjects whose kinship is at least ``threshold`` (inclusive; a KING degree name is its cut-off).

    A pair table (a DataFrame, a Parquet, CSV or TSV file: ``id1``, ``id2``, ``kinship``) is read and matched in
    Spark. A genetics tool's file (KING, plink2, PLINK 1.9, GCTA: ``format``, or found from the file as one machine
    finds it) or a kinship matrix (with ``ids=``) is read on the driver by the single machine's reader
    (:func:`~depgraph.ingest.pairs.kinship_pairs`: every format, ``id_template``, ``encoding``, ``absent``, the same
    refusals, warnings and record), against the graph's subject ids collected there; the pairs kept go to Spark."""
    given = {"format": format is not None, "id_template": id_template != "{IID}", "encoding": encoding is not None,
             "absent": absent != "warn", "ids": ids is not None}  # fmt: skip
    if not isinstance(pairs, DataFrame) and (any(given.values()) or _read_on_the_driver(pairs, encoding)):
        options = {"format": format, "id_template": id_template, "encoding": encoding, "absent": absent, "ids": ids}
        return _kinship_on_the_driver(graph, pairs, threshold, unknown=unknown, id_columns=id_columns,
                                      value_column=value_column, **options)  # fmt: skip
    if any(given.values()):
        wrong = [name for name, was in given.items() if was]
        raise DepgraphError("invalid_argument", f"{describe_ids(wrong)}: options of a file or table read on the "
                            "driver; a Spark DataFrame of pairs takes id_columns, value_column, unknown")  # fmt: skip
    value, named = resolve_threshold(threshold)
    what = "kinship"
    source = file_name(pairs) if isinstance(pairs, (str, os.PathLike)) else "pairs"  # as one machine records it
    pairs = read_table(pairs, graph.spark, what)
    if value_column not in pairs.columns:
        raise DepgraphError("schema", f"{what} needs a {value_column} column")
    kind = dict(pairs.dtypes)[value_column]
    numeric = kind in INTEGER_KINDS or kind in ("float", "double") or kind.startswith("decimal")
    if not numeric and kind != "string":  # booleans, dates…: refused as one machine refuses them
        raise DepgraphError("invalid_value", f"{what}: {value_column} holds {kind} values, not numbers")
    pairs = pairs.withColumn("weight", F.col(value_column).try_cast("double"))  # text that is no number: null
    bad = pairs.where(F.col("weight").isNull() | F.isnan("weight") | (F.col("weight") < 0) | (F.col("weight") > 1))
    shown = first_values(bad.select(F.col(value_column).cast("string").alias("v")), "v", 5)
    if shown or bad.limit(1).count():
        raise DepgraphError("invalid_value", f"{what}: kinship must be a number in [0, 1]; found {describe_ids(shown)}")
    edges, record = _pairs(graph, pairs, NodeType.SUBJECT, id_columns, what, unknown, ["weight"])
    total = pairs.count()
    kept = edges.where(F.col("weight") >= value)
    step = {"step": "add_kinship", "source": source, "pairs_in": total, "threshold": value,
            "threshold_name": named, "inclusive": True, "pairs_kept": kept.count(), **record}  # fmt: skip
    return _with_relation(graph, RelationName.SUBJECT_RELATED_TO, kept, step)


def _read_on_the_driver(source: Any, encoding: str | None) -> bool:
    """Whether a kinship source is read on the driver by the single machine's reader: a matrix, a table this
    process holds (pandas), a genetics tool's file (or a file prefix naming one), or a path that is not there (the
    single machine's reader says so); a Parquet directory or a pair table's file Spark reads stays in Spark."""
    if not isinstance(source, (str, os.PathLike)):
        return not isinstance(source, DataFrame)
    path = Path(source)
    if path.is_dir():
        return False
    return not path.is_file() or detect_format(path, encoding=encoding) != "pairs"


def _kinship_on_the_driver(graph: SparkGraph, source: Any, threshold: float | str, **options: Any) -> SparkGraph:
    """Kinship read by :func:`~depgraph.ingest.pairs.kinship_pairs` against a graph of the subjects alone (their
    ids collected in row order: one machine's positions are then the Spark graph's rows), its pairs and record
    handed to Spark."""
    table = graph.nodes.get(NodeType.SUBJECT)
    keys = pa.array([], pa.string())
    if table is not None:
        keys = table.orderBy("row").select("key").toArrow().column(0).combine_chunks()
    subjects = assemble_sorted({NodeType.SUBJECT: keys}, {}, {})
    piece, record = kinship_pairs(subjects, source, threshold, **options)
    src, dst, weight = with_edges(subjects, [piece], record).relation_edges(RelationName.SUBJECT_RELATED_TO)
    table = pa.table({"source": pa.array(src, pa.int64()), "target": pa.array(dst, pa.int64()),
                      "weight": pa.array(weight, pa.float64())})  # fmt: skip
    edges = graph.spark.createDataFrame(table)  # (from Arrow: pandas 3 is a version PySpark warns about)
    return _with_relation(graph, RelationName.SUBJECT_RELATED_TO, edges, record)


def add_duplicates(
    graph: SparkGraph, pairs: Table, *, id_columns: Sequence[str] = ("id1", "id2"), unknown: str = "error"
) -> SparkGraph:
    """Declare pairs of samples that are the same specimen or record."""
    pairs = read_table(pairs, graph.spark, "duplicates")
    edges, record = _pairs(graph, pairs, NodeType.SAMPLE, id_columns, "duplicates", unknown)
    edges = checkpointed(edges.select("source", "target").distinct())
    step = {"step": "add_duplicates", "source": "declared", "pairs_in": pairs.count(), "pairs_kept": edges.count(),
            **record}  # fmt: skip
    return _with_relation(graph, RelationName.SAMPLE_DUPLICATE_OF, edges, step)


def add_relations(
    graph: SparkGraph, pairs: Table, relation: str, *, source_column: str = "source", target_column: str = "target",
    unknown: str = "error",
) -> SparkGraph:  # fmt: skip
    """Add pairs of a relation between two nodes of one type (``sample_adjacent_to``, ``subject_related_to``…),
    read from ``source_column`` and ``target_column`` as on one machine."""
    id_columns = (source_column, target_column)
    rule = RELATION[relation_named(relation)]
    pairs = read_table(pairs, graph.spark, rule.name)
    if rule.source != rule.target or rule.directed:
        raise DepgraphError("invalid_argument", f"add_relations on Spark takes undirected relations between nodes "
                            f"of one type, not {rule.name!r}")  # fmt: skip
    edges, record = _pairs(graph, pairs, rule.source, id_columns, rule.name, unknown)
    step = {"step": "add_relations", "relation": rule.name, "source": "pairs", "pairs_in": pairs.count(), **record}
    return _with_relation(graph, rule.name, edges.select("source", "target"), step)


def add_spatial(
    graph: SparkGraph, coords: Table, radius: float, *, p: float = 2.0, unknown: str = "error"
) -> SparkGraph:
    """Make samples at most ``radius`` apart adjacent (inclusive; ``p`` the Minkowski norm, 2: Euclidean), as
    :func:`depgraph.add_spatial` does: ``coords`` has ``sample_id`` and one to three coordinate columns ``x``,
    ``y``, ``z``; the edge weight is the distance; samples without coordinates get no adjacency. Refused as on one
    machine (by code; a DataFrame's rows have no line numbers, so the first ids are named): a radius below 0 or a
    norm below 1, a missing column, a sample listed twice or not in the graph (``unknown="ignore"`` drops it), a
    coordinate that is not a number, missing or infinite, spans the distance sums cannot hold. The pairs are
    found in Spark (:func:`depgraph.spark.spatial.near_pairs`)."""
    r = checked_distances(radius, p)
    checked_unknown(unknown)
    what = "coordinates"
    frame = read_table(coords, graph.spark, what)
    axes = [c for c in ("x", "y", "z") if c in frame.columns]
    if "sample_id" not in frame.columns or not axes:
        raise DepgraphError("schema", f"{what} need a sample_id column and coordinate columns x, y[, z] "
                            f"(columns: {describe_ids(frame.columns, 12)})")  # fmt: skip
    frame = checkpointed(_coordinates(_ids(frame.select("sample_id", *axes), "sample_id", what), axes, what))
    facts = _id_facts(frame, ["sample_id"])
    if facts["rows"] == 0:
        raise DepgraphError("empty_input", f"{what} table has no rows")
    _refuse_bad_ids(frame, ["sample_id"], what, facts, required=["sample_id"])
    twice = first_values(frame.groupBy("sample_id").count().where(F.col("count") > 1), "sample_id", 5)
    if twice:
        raise DepgraphError("duplicate_id", f"{what} list sample(s) {describe_ids(twice)} more than once", ids=twice)
    low, span = _refuse_bad_coordinates(frame, axes, p, what)
    keys = graph.nodes[NodeType.SAMPLE].select("row", F.col("key").alias("sample_id"))
    located = checkpointed(frame.join(keys, "sample_id", "left"))
    strangers = first_values(located.where(F.col("row").isNull()), "sample_id", RECORDED_IDS)
    count = located.where(F.col("row").isNull()).count() if strangers else 0
    if count and unknown == "error":
        raise DepgraphError("reference", f"{what} name {count} sample(s) not in the graph: "
                            f"{describe_ids(strangers, total=count)} (pass unknown='ignore' to drop them)",
                            ids=strangers)  # fmt: skip
    known = located.where(F.col("row").isNotNull())
    pairs = checkpointed(near_pairs(known, axes, r, p, low, span))
    record = spatial_record(r, p, len(axes), known.count(), pairs.count(), unknown,
                            dropped_record(count, np.asarray(strangers, dtype=object)))  # fmt: skip
    return _with_relation(graph, RelationName.SAMPLE_ADJACENT_TO, pairs, record)


#: Spark's types a coordinate column may not hold: they are no distances (never read as 0/1 or days).
NOT_NUMBERS = {"boolean": "booleans", "date": "dates", "timestamp": "timestamps", "timestamp_ntz": "timestamps",
               "binary": "bytes"}  # fmt: skip


def _coordinates(frame: DataFrame, axes: Sequence[str], what: str) -> DataFrame:
    """``frame`` with each axis as a 64-bit float: text trimmed and parsed (``_bad_<axis>`` marks text that is not a
    number), numbers cast; a column of booleans, dates or times is ``schema``."""
    for axis in axes:
        kind = dict(frame.dtypes)[axis]
        if kind in NOT_NUMBERS:
            raise DepgraphError("schema", f"{what}: {axis} holds {NOT_NUMBERS[kind]}, not numbers", column=axis)
        text = F.trim(F.col(axis).cast("string"))
        number = F.col(axis).cast("double")
        if kind == "string":
            number = F.when(F.length(text) > 0, text.try_cast("double"))
            frame = frame.withColumn(f"_bad_{axis}", (F.length(text) > 0) & number.isNull())
        frame = frame.withColumn(axis, number)
    return frame


def _refuse_bad_coordinates(frame: DataFrame, axes: Sequence[str], p: float, what: str) -> tuple[list[float], float]:
    """A coordinate that is not a number, infinite or missing (``invalid_value`` naming the first samples), or
    spans that overflow the distance sums (:func:`~depgraph.ingest.spatial.span_overflow`); one pass over the rows
    when every coordinate is good. Returns each axis' smallest coordinate and the largest span, which place the
    points in cells (:func:`~depgraph.spark.spatial.near_pairs`)."""
    tests = [(F.col(f"_bad_{a}") if f"_bad_{a}" in frame.columns else F.lit(False), f"{a} is not a number", a)
             for a in axes]  # fmt: skip
    tests += [(F.col(a).isin(float("inf"), float("-inf")), f"{a} is infinite", a) for a in axes]
    tests += [(any_of(F.col(a).isNull() | F.isnan(a) for a in axes), "missing coordinates", None)]
    found = frame.agg(*[F.max(test.cast("int")).alias(f"t{k}") for k, (test, _, _) in enumerate(tests)],
                      *[F.min(a).alias(f"lo_{a}") for a in axes], *[F.max(a).alias(f"hi_{a}") for a in axes]
                      ).first()  # fmt: skip
    for k, (test, says, column) in enumerate(tests):
        if found[f"t{k}"]:
            shown = first_values(frame.where(test), "sample_id", 5)
            raise DepgraphError("invalid_value", f"{what}: {says} for sample(s) {describe_ids(shown)}", ids=shown,
                                **({} if column is None else {"column": column}))  # fmt: skip
    low = [float(found[f"lo_{a}"]) for a in axes]
    spans = {a: float(found[f"hi_{a}"]) - lo for a, lo in zip(axes, low, strict=True)}
    axis = max(axes, key=lambda a: spans[a])
    overflow = span_overflow(spans[axis], p, len(axes))
    if overflow is not None:
        extent, needed = overflow
        raise DepgraphError("invalid_value", f"{what}: {axis} spans {extent}: distances that far apart overflow the "
                            f"Minkowski p={p:g} sums of the KD-tree (they need {needed}); rescale the coordinates",
                            column=axis)  # fmt: skip
    return low, spans[axis]


# --------------------------------------------------------------------------- the public builders' Spark part
#: Where the builders' options are refused: the Spark engine's builders take fewer than one machine's.
ON_SPARK = "on the Spark engine"


def _handed_over(builder: Callable[..., SparkGraph]) -> Callable[..., SparkGraph]:
    """``builder`` as its public function hands it over (``depgraph.add_kinship`` of a SparkGraph calls
    ``add_kinship_request``): the same arguments, in the same order, an option it does not take refused by name."""

    def request(*arguments: Any, **options: Any) -> SparkGraph:
        refuse_options(builder, options, ON_SPARK)
        return builder(*arguments, **options)

    request.__doc__ = f":func:`depgraph.{builder.__name__}` on Spark: :func:`{builder.__name__}`."
    return request


from_metadata_request = _handed_over(from_metadata)
add_kinship_request = _handed_over(add_kinship)
add_duplicates_request = _handed_over(add_duplicates)
add_relations_request = _handed_over(add_relations)
add_spatial_request = _handed_over(add_spatial)
