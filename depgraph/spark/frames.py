"""DataFrame building blocks the Spark engine shares: keys numbered in byte order, rows numbered in file order, the
first offenders a refusal names, and the refusal of ids written two ways in Unicode.

Rows are numbered without a global window (which would put every row in one partition): the rows are sorted (or
read) into partitions, each partition counts its rows, and a row's number is the rows of the partitions before its
own plus its place in its own (``monotonically_increasing_id`` holds that place in its low 33 bits).
"""

from __future__ import annotations

from collections.abc import Mapping
from itertools import accumulate
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit
from urllib.request import url2pathname

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq
from pyspark.sql import Column, DataFrame
from pyspark.sql import functions as F

from depgraph.errors import DepgraphError
from depgraph.spark.session import checkpointed

#: Offending values a refusal shows (and keeps in its ``ids``).
SHOWN = 50
#: Ids holding only plain ASCII need no Unicode comparison: a Java regular expression, over every row.
PLAIN_ASCII = r"^[\x00-\x7f]*$"


def numbered(frame: DataFrame, order: list[str], name: str = "row") -> DataFrame:
    """``frame`` with ``name``: each row's 0-based place in ``order`` (distinct rows expected; ties take any
    order). The numbering is computed once and kept (checkpointed), so a recomputed partition cannot renumber."""
    return numbered_with_count(frame, order, name)[0]


def numbered_with_count(frame: DataFrame, order: list[str], name: str = "row") -> tuple[DataFrame, int]:
    """:func:`numbered`, and how many rows it numbered (counted as the numbering is: no job of its own)."""
    placed = checkpointed(
        frame.orderBy(*order).select(
            "*", F.spark_partition_id().alias("_part"), F.monotonically_increasing_id().alias("_id")
        )
    )
    counts = dict(placed.groupBy("_part").count().collect())
    parts = sorted(counts)
    starts = dict(zip(parts, accumulate((counts[p] for p in parts[:-1]), initial=0), strict=True))
    start = _lookup("_part", starts)
    low = F.col("_id").bitwiseAND(F.lit((1 << 33) - 1))
    return placed.select(*frame.columns, (start + low).cast("long").alias(name)), sum(counts.values())


def in_file_order(frame: DataFrame, name: str = "row") -> DataFrame:
    """A table read from Parquet with ``name``: each row's 0-based place in the table as written (its files in
    name order, as depgraph's readers take a directory of parts, then the rows of each file), from Spark's
    ``_metadata`` columns. Each file's rows are counted from its footer on the driver when the driver can read the
    files (local paths: depgraph reads a graph's and a spec's manifest there too), else in a Spark job."""
    located = frame.select("*", F.col("_metadata.file_name").alias("_file"), F.col("_metadata.row_index").alias("_at"))
    counts = _footer_counts(frame.inputFiles())
    if counts is None:
        counts = dict(located.groupBy("_file").count().collect())
    files = sorted(counts)
    starts = dict(zip(files, accumulate((counts[f] for f in files[:-1]), initial=0), strict=True))
    return located.select(*frame.columns, (_lookup("_file", starts) + F.col("_at")).cast("long").alias(name))


def _footer_counts(files: list[str]) -> dict[str, int] | None:
    """The rows of each Parquet file, by name, from the footers (no Spark job), when every file is a local path;
    None otherwise."""
    if not all(f.startswith("file:") for f in files):
        return None
    paths = [Path(url2pathname(urlsplit(f).path)) for f in files]
    return {path.name: pq.ParquetFile(path).metadata.num_rows for path in paths}


def _lookup(column: str, values: dict) -> Column:
    """``values[column]`` as a column expression (a map literal of the few partitions or files)."""
    if not values:
        return F.lit(0).cast("long")
    pairs = [item for key, value in values.items() for item in (F.lit(key), F.lit(value).cast("long"))]
    return F.element_at(F.create_map(*pairs), F.col(column))


def first_values(frame: DataFrame, column: str, limit: int = SHOWN) -> list:
    """The smallest ``limit`` distinct values of ``column`` (what a refusal names), as Python values."""
    return [r[0] for r in frame.select(column).distinct().orderBy(column).limit(limit).collect()]


def refuse_unicode_twins(frame: DataFrame, columns: Mapping[str, str], what: str, *, probed: bool = False) -> None:
    """``ambiguity`` when two ids of one column differ only in Unicode normalisation (a composed and a decomposed
    accent, the Kelvin sign and ``K``): every person sees one id, the engine would see two entities, and a subject
    written both ways would be split across train and test. Only the distinct ids that are not plain ASCII are
    composed (one pass over the rows finds there are none, the usual case; ``probed``: the caller's own pass found
    some). ``columns`` maps each column to the name a refusal gives it."""
    if not probed and not frame.where(any_of(~F.col(c).rlike(PLAIN_ASCII) for c in columns)).limit(1).count():
        return
    composed = _composer()
    for column, shown in columns.items():
        ids = frame.where(F.col(column).isNotNull()).select(F.col(column).alias("id")).distinct()
        wide = ids.where(~F.col("id").rlike(PLAIN_ASCII)).select("id", composed(F.col("id")).alias("nfc"))
        alike = wide.groupBy("nfc").agg(F.min("id").alias("a"), F.max("id").alias("b")).where(F.col("a") != F.col("b"))
        also_written = wide.where(F.col("nfc") != F.col("id")).join(ids.withColumnRenamed("id", "nfc"), "nfc")
        # the composed spelling first when it is written too (as the single-machine engine names them)
        twins = also_written.select(F.lit(0).alias("kind"), F.col("nfc").alias("a"), F.col("id").alias("b"))
        twins = twins.unionByName(alike.select(F.lit(1).alias("kind"), "a", "b"))
        found = twins.orderBy("kind", "a", "b").limit(1).collect()
        if found:
            _, first, second = found[0]
            raise DepgraphError(
                "ambiguity",
                f"{what}: {shown} values {first!a} and {second!a} differ only in Unicode normalisation (a composed "
                "and a decomposed accent, or a compatibility letter): they look the same but would be two ids; write "
                "one of them as the other",
                column=shown,
                ids=[first, second],
            )


def look_alike_groups(frame: DataFrame, column: str, first: int = 10) -> tuple[list[list[str]], int]:
    """The sets of distinct ids of ``column`` that look alike (equal confusable skeletons, each set holding an id that
    is not plain ASCII), as :func:`~depgraph.common.confusables.confusable_groups` finds them on one machine: the
    first ``first`` sets (each sorted, by their first id) and how many there are. One pass finds a column of ASCII
    ids has none; otherwise Spark's Python workers give each distinct id its skeleton (the executors need depgraph),
    and an ASCII id counts only when a non-ASCII id has its skeleton."""
    ids = frame.where(F.col(column).isNotNull()).select(F.col(column).alias("id")).distinct()
    plain = F.col("id").rlike(PLAIN_ASCII)
    if not ids.where(~plain).limit(1).count():
        return [], 0
    wide = ids.where(~plain).select("id", _skeletons("unicode")(F.col("id")).alias("form"))
    forms = wide.select("form").distinct()
    ascii_alike = ids.where(plain).select("id", _skeletons("ascii")(F.col("id")).alias("form")).join(forms, "form")
    groups = (
        wide.unionByName(ascii_alike.select("id", "form"))
        .groupBy("form")
        .agg(F.sort_array(F.collect_set("id")).alias("ids"))
    )
    groups = checkpointed(groups.where(F.size("ids") > 1).select("ids"))
    count = groups.count()
    return [list(r["ids"]) for r in groups.orderBy("ids").limit(first).collect()] if count else [], count


def _skeletons(kind: str) -> Any:
    """An Arrow UDF giving each id its confusable skeleton, by the single-machine functions (``unicode`` for any
    ids, ``ascii`` for plain ASCII ones, in one pass over their bytes)."""
    from depgraph.common.confusables import ascii_skeletons, unicode_skeletons

    skeletons = ascii_skeletons if kind == "ascii" else unicode_skeletons
    return F.arrow_udf(lambda ids: skeletons(ids), "string")


def _composer() -> Any:
    """An Arrow UDF giving each id in its composed form (NFC) by Arrow's own normaliser, the single-machine
    engine's. Made here, not at module level, so Spark ships the function itself to the executors (which then need
    pyarrow, not depgraph)."""

    def nfc(ids: pa.Array) -> pa.Array:
        return pc.utf8_normalize(ids, form="NFC")

    return F.arrow_udf(nfc, "string")


def any_of(conditions: Any) -> Column:
    """The disjunction of ``conditions`` (null counts as false)."""
    either = F.lit(False)
    for condition in conditions:
        either = either | F.coalesce(condition, F.lit(False))
    return either
