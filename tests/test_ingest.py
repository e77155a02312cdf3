"""Metadata tables in every shape a study team has them."""

from __future__ import annotations

import numpy as np
import pandas as pd
import polars as pl
import pyarrow as pa
import pytest

from depgraph import DepgraphError, derive, from_metadata
from depgraph.ingest import normalise_keys, resolve_threshold


def test_keys_are_text_normalised_once():
    values = pd.Series([1, 1.0, "1", " 1 ", "01", 2.5, None, "", np.nan, True], dtype=object)
    assert normalise_keys(values).tolist() == ["1", "1", "1", "1", "01", "2.5", None, None, None, "True"]
    assert normalise_keys(pd.Series([3, 4], dtype="int64")).tolist() == ["3", "4"]
    assert normalise_keys(pd.Series([3.0, None], dtype="float64")).tolist() == ["3", None]
    assert normalise_keys(pd.Series([7, None], dtype="Int64")).tolist() == ["7", None]


def test_integer_subject_ids_match_their_text_spelling():
    meta = pd.DataFrame({"sample_id": ["S1", "S2"], "subject_id": pd.Series([1, "1"], dtype=object)})
    assert derive(from_metadata(meta), "subject").groups() == {"S1": "subject:1", "S2": "subject:1"}


def test_column_map_renames_user_columns():
    meta = pd.DataFrame({"specimen": ["S1", "S2"], "patient": ["P1", "P1"]})
    g = from_metadata(meta, {"sample_id": "specimen", "subject_id": "patient"})
    assert g.relation_counts() == {"sample_belongs_to_subject": 2}


def test_column_map_clash_is_ambiguous():
    meta = pd.DataFrame({"sample_id": ["S1"], "subject_id": ["P1"], "patient": ["P9"]})
    with pytest.raises(DepgraphError) as err:
        from_metadata(meta, {"subject_id": "patient"})
    assert err.value.code == "ambiguity"


@pytest.mark.parametrize("kind", ["polars", "pyarrow"])
def test_polars_and_pyarrow_tables(kind):
    data = {"sample_id": ["S1", "S2"], "batch_id": ["B1", "B1"]}
    table = pl.DataFrame(data) if kind == "polars" else pa.table(data)
    assert derive(from_metadata(table), "batch").n_groups == 1


@pytest.mark.parametrize("suffix", [".csv", ".tsv", ".parquet"])
def test_paths_in_three_formats(tmp_path, suffix):
    frame = pd.DataFrame({"sample_id": ["01", "1"], "subject_id": ["P01", "P01"]})
    path = tmp_path / f"meta{suffix}"
    if suffix == ".parquet":
        frame.to_parquet(path)
    else:
        frame.to_csv(path, sep="\t" if suffix == ".tsv" else ",", index=False)
    g = from_metadata(path)
    assert g.sample_ids.tolist() == ["01", "1"]  # "01" keeps its spelling


def test_csv_missing_tokens_mean_missing(tmp_path):
    path = tmp_path / "meta.csv"
    path.write_text("sample_id,batch_id\nS1,B1\nS2,NA\nS3,\nS4, B1 \n")
    p = derive(from_metadata(path), "batch")
    assert p.groups() == {"S1": "batch:B1", "S2": "batch:unlinked:S2", "S3": "batch:unlinked:S3", "S4": "batch:B1"}


def test_identical_repeated_rows_collapse_and_multi_valued_columns_accumulate():
    meta = pd.DataFrame(
        {
            "sample_id": ["S1", "S1", "S1", "S2"],
            "subject_id": ["P1", "P1", "P1", "P2"],
            "featureset_id": ["F1", "F2", "F1", "F1"],
            "outcome_id": ["case", "case", None, "control"],
        }
    )
    g = from_metadata(meta)
    assert g.count("Sample") == 2
    assert g.relation_counts() == {
        "sample_belongs_to_subject": 2,
        "sample_uses_featureset": 3,
        "sample_has_outcome": 2,
    }


def test_a_value_missing_in_one_repeated_row_is_taken_from_the_other():
    meta = pd.DataFrame({"sample_id": ["S1", "S1"], "batch_id": ["B1", None], "featureset_id": ["F1", "F2"]})
    assert derive(from_metadata(meta), "batch").groups() == {"S1": "batch:B1"}


def test_tied_time_index_values_are_ties_not_errors():
    meta = pd.DataFrame(
        {
            "sample_id": ["a", "b", "c", "d"],
            "timepoint_id": ["screening", "baseline", "m6", "m12"],
            "time_index": [0, 0, 6, 12],
        }
    )
    g = from_metadata(meta)
    src, dst, _ = g.relation_edges("timepoint_precedes")
    keys = g.nodes["key"].to_numpy()
    assert sorted(zip(keys[src], keys[dst], strict=True)) == [("baseline", "m6"), ("m6", "m12"), ("screening", "m6")]
    p = derive(g, "time")
    ranks = dict(zip(p.samples["sample_id"], p.samples["order_rank"].astype(int), strict=True))
    assert ranks == {"a": 1, "b": 1, "c": 2, "d": 3}


def test_time_index_alone_names_timepoints():
    g = from_metadata(pd.DataFrame({"sample_id": ["a", "b"], "time_index": [3, 3.5]}))
    assert g.keys("Timepoint").tolist() == ["3", "3.5"]
    assert derive(g, "time").groups() == {"a": "time:3", "b": "time:3.5"}


def test_outcomes_can_belong_to_subjects():
    meta = pd.DataFrame({"sample_id": ["S1", "S2"], "subject_id": ["P1", "P1"], "outcome_id": ["case", "case"]})
    g = from_metadata(meta, outcome_scope="subject")
    assert g.relation_counts() == {"sample_belongs_to_subject": 2, "subject_has_outcome": 1}


def test_other_columns_are_kept_as_sample_attributes():
    meta = pd.DataFrame({"sample_id": ["S2", "S1"], "sex": ["m", "f"], "age": [40, 51]})
    g = from_metadata(meta)
    start, stop = g.type_range("Sample")
    assert g.attributes["sex"].iloc[start:stop].tolist() == ["f", "m"]
    assert g.attributes["age"].iloc[start:stop].tolist() == [51, 40]


def test_conflicting_attribute_values_for_one_sample_are_named():
    meta = pd.DataFrame({"sample_id": ["S1", "S1"], "featureset_id": ["F1", "F2"], "sex": ["f", "m"]})
    with pytest.raises(DepgraphError) as err:
        from_metadata(meta)
    assert err.value.code == "ambiguity" and "S1" in err.value.message and "sex" in err.value.message


def test_named_thresholds():
    assert resolve_threshold("third") == (0.0442, "third")
    assert resolve_threshold("0.2") == (0.2, None)
    with pytest.raises(DepgraphError):
        resolve_threshold(1.5)
