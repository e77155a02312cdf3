"""DataFrame building blocks the Spark engine shares: keys numbered in byte order, rows numbered in file order, and
the first offenders a refusal names.

Rows are numbered without a global window (which would put every row in one partition): the rows are sorted (or
read) into partitions, each partition counts its rows, and a row's number is the rows of the partitions before its
own plus its place in its own (``monotonically_increasing_id`` holds that place in its low 33 bits).
"""

from __future__ import annotations

from itertools import accumulate

from pyspark.sql import Column, DataFrame
from pyspark.sql import functions as F

from depgraph.spark.session import checkpointed

#: Offending values a refusal shows (and keeps in its ``ids``).
SHOWN = 50


def numbered(frame: DataFrame, order: list[str], name: str = "row") -> DataFrame:
    """``frame`` with ``name``: each row's 0-based place in ``order`` (distinct rows expected; ties take any
    order). The numbering is computed once and kept (checkpointed), so a recomputed partition cannot renumber."""
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
    return placed.select(*frame.columns, (start + low).cast("long").alias(name))


def in_file_order(frame: DataFrame, name: str = "row") -> DataFrame:
    """A table read from Parquet with ``name``: each row's 0-based place in the table as written (its files in
    name order, as depgraph's readers take a directory of parts, then the rows of each file), from Spark's
    ``_metadata`` columns."""
    located = frame.select("*", F.col("_metadata.file_name").alias("_file"), F.col("_metadata.row_index").alias("_at"))
    counts = dict(located.groupBy("_file").count().collect())
    files = sorted(counts)
    starts = dict(zip(files, accumulate((counts[f] for f in files[:-1]), initial=0), strict=True))
    return located.select(*frame.columns, (_lookup("_file", starts) + F.col("_at")).cast("long").alias(name))


def _lookup(column: str, values: dict) -> Column:
    """``values[column]`` as a column expression (a map literal of the few partitions or files)."""
    if not values:
        return F.lit(0).cast("long")
    pairs = [item for key, value in values.items() for item in (F.lit(key), F.lit(value).cast("long"))]
    return F.element_at(F.create_map(*pairs), F.col(column))


def first_values(frame: DataFrame, column: str, limit: int = SHOWN) -> list:
    """The smallest ``limit`` distinct values of ``column`` (what a refusal names), as Python values."""
    return [r[0] for r in frame.select(column).distinct().orderBy(column).limit(limit).collect()]
