"""Flat tables: the samples table and the long fold table, as CSV and Parquet."""

from __future__ import annotations

import pandas as pd
import pytest

from depgraph import DepgraphError
from depgraph.adapters.frames import fold_table, samples_table, write_table
from depgraph.folds import assign_folds
from depgraph.spec import Constraint, SplitSpec


@pytest.fixture
def spec():
    frame = pd.DataFrame({"sample_id": [f"s{i}" for i in range(9)], "group_id": [f"g{i // 3}" for i in range(9)]})
    s = SplitSpec.build(frame, constraint=Constraint(mode="subject"), recommended_resampling="grouped_cv")
    return assign_folds(s, "group-kfold", n_folds=3, n_repeats=2)


@pytest.mark.parametrize("suffix", [".csv", ".tsv", ".parquet"])
def test_fold_table_round_trips_in_every_format(tmp_path, spec, suffix):
    table = fold_table(spec)
    assert len(table) == 9 * 6 and table.groupby(["repeat", "fold"]).size().eq(9).all()
    assert (table[table["role"] == "test"].groupby("repeat").size() == 9).all()
    path = tmp_path / f"folds{suffix}"
    write_table(table, path)
    back = pd.read_parquet(path) if suffix == ".parquet" else pd.read_csv(path, sep="\t" if suffix == ".tsv" else ",")
    assert back["sample_id"].tolist() == table["sample_id"].tolist()
    assert back["role"].astype(str).tolist() == table["role"].astype(str).tolist()


def test_samples_table_and_refusals(tmp_path, spec):
    assert samples_table(spec).columns.tolist() == ["sample_id", "group_id"]
    with pytest.raises(DepgraphError):
        write_table(samples_table(spec), tmp_path / "x.xlsx")
    with pytest.raises(DepgraphError):
        fold_table(spec.with_folds(None))
