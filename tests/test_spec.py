"""The split spec written by derive (the full contract comes with the schema)."""

from __future__ import annotations

import orjson
import pandas as pd

from depgraph import derive, from_metadata
from depgraph.spec import SplitSpec, read_spec, write_spec


def test_spec_columns_come_from_the_graph(family_meta):
    meta = family_meta.assign(study_id="ST1", site_id=["A", "B"] * 5)
    meta.loc[9, "batch_id"] = None
    g = from_metadata(meta)
    spec = SplitSpec.from_partition(derive(g, "subject"), g)
    cols = spec.samples.columns.tolist()
    assert cols == [
        "sample_id",
        "group_id",
        "batch_group",
        "study_group",
        "site_group",
        "timepoint_id",
        "time_index",
        "order_rank",
    ]
    last = spec.samples.iloc[-1]
    assert last["sample_id"] == "P5-T1" and pd.isna(last["batch_group"]) and last["order_rank"] == 2
    assert spec.summary.n_groups == 5 and spec.recommended_resampling == "grouped_cv"


def test_spec_round_trip(tmp_path, family_meta, family_kinship):
    g = from_metadata(family_meta).add_kinship(family_kinship, "first")
    spec = SplitSpec.from_partition(derive(g, "relatedness", samples=["P1-T0", "P2-T0", "P5-T0"]), g)
    write_spec(spec, tmp_path / "spec.json")
    doc = orjson.loads((tmp_path / "spec.json").read_bytes())
    assert doc["constraint"]["subset"] is True
    assert doc["constraint"]["parameters"]["add_kinship"][0]["threshold_name"] == "first"
    lengths = {len(v) for v in doc["samples"].values()}
    assert lengths == {3}
    back = read_spec(tmp_path / "spec.json")
    assert back.groups() == spec.groups()
    pd.testing.assert_frame_equal(back.samples, spec.samples, check_dtype=False)
