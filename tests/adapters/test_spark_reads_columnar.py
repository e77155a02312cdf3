"""Spark reads a columnar spec's tables natively: the samples and the folds, joined by sample id, give the splits
depgraph wrote (``spark.read.parquet``, no depgraph code on the Spark side)."""

from __future__ import annotations

import os
import sys

import pytest

from depgraph import SplitSpec, add_kinship, assign_folds, derive, from_metadata, write_spec
from depgraph.cli.demo import demo_cohort
from tests.spark_support import SPARK_MARKS

pytestmark = SPARK_MARKS


@pytest.fixture(scope="module")
def spark():
    from pyspark.sql import SparkSession

    # the test process's session when it has one (a worker's other Spark files share it: not stopped here)
    running = SparkSession.getActiveSession()
    if running is not None:
        yield running
        return
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)  # the workers run this Python, which has pyarrow
    session = (
        SparkSession.builder.master("local[2]")
        .appName("depgraph-columnar")
        .config("spark.sql.shuffle.partitions", "2")
        .config("spark.ui.enabled", "false")
        .getOrCreate()
    )
    yield session
    session.stop()


def test_spark_reads_the_samples_and_folds(tmp_path, spark):
    cohort = demo_cohort(n_families=10, n_redeposits=2)
    graph = add_kinship(from_metadata(cohort.metadata), cohort.kinship, threshold="first")
    spec = assign_folds(SplitSpec.from_partition(derive(graph, "relatedness"), graph), "group-kfold", n_splits=3)
    write_spec(spec, tmp_path / "spec.dgspec")
    samples = spark.read.parquet(str(tmp_path / "spec.dgspec" / "samples.parquet"))
    folds = spark.read.parquet(str(tmp_path / "spec.dgspec" / "folds.parquet"))
    assert samples.columns == list(spec.samples.columns)
    assert samples.count() == spec.n_samples
    tested = folds.filter(folds.role == "test").join(samples, "sample_id").select("split", "sample_id", "group_id")
    rows = tested.collect()
    for i, split in enumerate(spec.folds.splits):
        ours = sorted(spec.samples["sample_id"].iloc[split.test].tolist())
        assert sorted(r.sample_id for r in rows if r.split == i) == ours
    # no group on both sides of a split, seen from Spark alone
    by_group = tested.groupBy("split", "group_id").count().collect()
    sizes = spec.samples.groupby("group_id").size()
    assert all(r["count"] == sizes[r.group_id] for r in by_group)
