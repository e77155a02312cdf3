"""The columnar spec read by the tools data teams query with: docs/spec.md's DuckDB query and Polars code, run as
written on a spec with repeated folds and a feature table, give each sample's group and repeat-0 test fold as
depgraph's own reader gives them (the expected values come from ``read_spec``'s splits, not from the queries)."""

from __future__ import annotations

import re
from pathlib import Path

import pandas as pd
import pytest

from depgraph import SplitSpec, assign_folds, derive, from_metadata, read_spec, write_spec

DOCS = Path(__file__).resolve().parents[1] / "docs" / "spec.md"


def _documented(tool: str) -> str:
    """The code block docs/spec.md marks as tested with ``tool``."""
    found = re.search(rf"<!-- tested: {tool} -->\n```\w+\n(.*?)```", DOCS.read_text(encoding="utf-8"), re.DOTALL)
    assert found, tool
    return found.group(1)


@pytest.fixture
def spec_and_features(tmp_path, monkeypatch):
    metadata = pd.DataFrame({"sample_id": [f"S{i}" for i in range(30)], "subject_id": [f"P{i // 3}" for i in range(30)],
                             "outcome_id": ["case", "control", "control"] * 10})  # fmt: skip
    graph = from_metadata(metadata)
    spec = assign_folds(SplitSpec.from_partition(derive(graph, "subject"), graph), "group-kfold", n_splits=3,
                        n_repeats=2, seed=5)  # fmt: skip
    write_spec(spec, tmp_path / "spec.dgspec")
    features = pd.DataFrame({"sample_id": [f"S{i}" for i in range(30)][::-1], "x": range(30)})
    features.iloc[:-1].to_parquet(tmp_path / "features.parquet")  # S0 has no features: it drops out
    monkeypatch.chdir(tmp_path)
    read = read_spec(tmp_path / "spec.dgspec")
    fold = {}
    for split in read.folds.splits:
        if split.repeat == 0:
            fold.update({sample: split.fold for sample in read.samples["sample_id"].to_numpy()[split.test]})
    groups = dict(zip(read.samples["sample_id"], read.samples["group_id"], strict=True))
    expected = [(s, groups[s], fold[s]) for s in sorted(groups) if s != "S0"]
    assert len({f for _, _, f in expected}) == 3  # every fold of repeat 0 is there
    return expected


def test_duckdb_reads_groups_and_folds_as_the_docs_show(spec_and_features):
    import duckdb

    table = duckdb.sql(_documented("duckdb")).df()
    assert list(zip(table["sample_id"], table["group_id"], table["test_fold"], strict=True)) == spec_and_features


def test_polars_reads_groups_and_folds_as_the_docs_show(spec_and_features):
    namespace: dict = {}
    exec(_documented("polars"), namespace)
    table = namespace["table"]
    assert list(zip(table["sample_id"], table["group_id"], table["test_fold"], strict=True)) == spec_and_features
