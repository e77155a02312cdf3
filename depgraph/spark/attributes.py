"""Sample attributes of a metadata table on Spark: the columns that name no role, typed and kept as the single
machine keeps them (:func:`depgraph.from_metadata`), so a spec carrying them (``attributes=``) is the one the
single machine writes.

A DataFrame's or a Parquet file's columns keep their types: text, whole numbers (as 64-bit integers), floats (NaN
missing; an infinite value refused: no graph file holds one), booleans, dates (as ISO-8601 text). Another type
(timestamps, decimals, arrays, maps) is refused, naming the column: carry it as text. A CSV or TSV file's columns
are text, typed as pandas would type them (:func:`depgraph.io.textnumbers.typed_attribute`): the evidence
(:class:`~depgraph.io.textnumbers.AttributeEvidence`) is gathered in the executors' Python by the single machine's
function, one row per partition and column, joined on the driver, and :func:`~depgraph.io.textnumbers.attribute_kind`
decides — the same rule, never a second copy of it.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator, Sequence

import pandas as pd
import pyarrow as pa
from pyspark.sql import DataFrame
from pyspark.sql import functions as F

from depgraph.errors import DepgraphError
from depgraph.io.textnumbers import TRUE_WORDS, AttributeEvidence, attribute_evidence, attribute_kind
from depgraph.spark.frames import first_values

#: Spark's types an attribute of a DataFrame or Parquet file may hold, and the type it is kept as.
KEPT_AS = {"string": "string", "tinyint": "bigint", "smallint": "bigint", "int": "bigint", "bigint": "bigint",
           "float": "double", "double": "double", "boolean": "boolean", "date": "string", "void": "string"}  # fmt: skip
EVIDENCE_FIELDS = [f.name for f in dataclasses.fields(AttributeEvidence)]


def typed_attributes(frame: DataFrame, attributes: Sequence[str], from_text: bool, what: str) -> DataFrame:
    """``frame`` with each of ``attributes`` typed as the single machine types it (see the module docstring):
    ``from_text``, the columns of a CSV or TSV file."""
    kinds = dict(frame.dtypes)
    for name in attributes:
        if kinds[name] not in KEPT_AS:
            raise DepgraphError(
                "schema",
                f"{what}: attribute {name!r} holds {kinds[name]} values; an attribute is text, a whole or finite "
                "number, a boolean or a date (write it as text to carry it)",
                column=name,
            )
    text = [name for name in attributes if kinds[name] == "string"] if from_text else []
    typed = _text_kinds(frame, text)
    for name in attributes:
        column = F.col(f"`{name}`")
        if name in typed:
            kind = typed[name]
            column = {"int": column.cast("bigint"), "float": column.cast("double"),
                      "bool": F.when(column.isNotNull(), column.isin(*TRUE_WORDS)),
                      "text": column}[kind]  # fmt: skip
        elif kinds[name] == "date":
            column = F.date_format(column, "yyyy-MM-dd")
        elif kinds[name] in ("float", "double"):
            column = F.when(~F.isnan(column), column.cast("double"))
        else:
            column = column.cast(KEPT_AS[kinds[name]])
        frame = frame.withColumn(name, column)
    _refuse_infinite(frame, [n for n in attributes if dict(frame.dtypes)[n] == "double"], what)
    return frame


def _text_kinds(frame: DataFrame, columns: list[str]) -> dict[str, str]:
    """How each text column of a text file is typed: the evidence of every partition joined, then the rule."""
    if not columns:
        return {}
    fields = ", ".join(f"{name} {'double' if name == 'largest' else 'boolean'}" for name in EVIDENCE_FIELDS)

    def evidence(batches: Iterator[pd.DataFrame]) -> Iterator[pd.DataFrame]:
        gathered = {name: AttributeEvidence() for name in columns}
        for batch in batches:
            for name in columns:
                values = pa.array(batch[name].to_numpy(dtype=object), type=pa.large_string(), from_pandas=True)
                gathered[name] = gathered[name] | attribute_evidence(values)
        yield pd.DataFrame([{"column": name, **dataclasses.asdict(found)} for name, found in gathered.items()])

    rows = frame.select(*[F.col(f"`{c}`") for c in columns]).mapInPandas(evidence, f"column string, {fields}")
    joined = {name: AttributeEvidence() for name in columns}
    for row in rows.collect():
        found = row.asDict()
        joined[found.pop("column")] |= AttributeEvidence(**found)
    return {name: attribute_kind(found) for name, found in joined.items()}


def _refuse_infinite(frame: DataFrame, columns: list[str], what: str) -> None:
    """``invalid_value`` for an infinite float attribute, naming the column and the first samples (one pass over the
    rows when there is none)."""
    if not columns:
        return
    infinite = {name: F.abs(F.col(f"`{name}`")) == float("inf") for name in columns}
    found = frame.agg(*[F.max(test.cast("int")).alias(name) for name, test in infinite.items()]).first()
    for name, test in infinite.items():
        if found is not None and found[name]:
            shown = first_values(frame.where(test), "sample_id", 5)
            raise DepgraphError(
                "invalid_value",
                f"{what}: attribute {name!r} is infinite for sample(s) {', '.join(map(str, shown))}; an attribute "
                "is a finite number",
                column=name,
                ids=shown,
            )
