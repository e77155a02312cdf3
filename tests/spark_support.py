"""What the Spark engine's tests share: the CI guard and marks every Spark test file carries, the session, a graph
on Spark, and the comparison of a derivation on both engines."""

from __future__ import annotations

import importlib.util
import os
import shutil

import pytest

from depgraph import SplitSpec, derive, read_spec, write_graph

if os.environ.get("CI") and (importlib.util.find_spec("pyspark") is None or shutil.which("java") is None):
    raise RuntimeError("CI must install pyspark and Java 17: .ci/run does")
#: The marks of every Spark test file (``pytestmark = SPARK_MARKS``).
SPARK_MARKS = [
    pytest.mark.slow,
    pytest.mark.skipif(importlib.util.find_spec("pyspark") is None, reason="pyspark not installed (CI installs it)"),
    pytest.mark.skipif(shutil.which("java") is None, reason="no Java (CI installs it)"),
]


#: A pseudonymisation key of the tests (an example: never use it for real).
PSEUDONYM_KEY = "0f1e2d3c4b5a69788796a5b4c3d2e1f00112233445566778899aabbccddeeff"


def spark_graph_of(graph, directory, spark):
    """``graph`` written as a columnar file in ``directory`` and read by Spark."""
    from depgraph.spark.graph import read_graph as read_spark_graph

    path = directory / "graph.dggraph"
    write_graph(graph, path)
    return read_spark_graph(path, spark)


def same_as_single(graph, spark_graph, directory, mode, **options):
    """Derive ``mode`` on both engines; the Spark spec read back must equal the single-machine one, digest
    included. Returns the Spark partition's groups."""
    from depgraph.spark.spec import write_spec as write_spark_spec

    single = derive(graph, mode, **options)
    expected = SplitSpec.from_partition(single, graph)
    partition = derive(spark_graph, mode, **options)
    path = directory / f"{mode}-{options.get('strategy', '')}-{len(list(directory.iterdir()))}.dgspec"
    digest = write_spark_spec(partition, path)
    spec = read_spec(path)  # every check of the columnar reader, the digest recomputed from the columns
    assert spec.samples.equals(expected.samples) or spec.samples.astype(object).equals(expected.samples.astype(object))
    assert [w.model_dump() for w in spec.warnings] == [w.model_dump() for w in expected.warnings]
    assert spec.constraint == expected.constraint and spec.summary == expected.summary
    assert digest == spec.digest == expected.digest
    return partition.groups()
