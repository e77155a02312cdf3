"""Checking a split made elsewhere against a spec's groups."""

from __future__ import annotations

import pandas as pd
import pytest

from depgraph import DepgraphError
from depgraph.exposure import straddling_groups
from depgraph.spec import Constraint, SplitSpec


@pytest.fixture
def spec():
    frame = pd.DataFrame({"sample_id": ["a1", "a2", "b1", "b2", "c1"], "group_id": ["A", "A", "B", "B", "C"]})
    return SplitSpec.build(frame, constraint=Constraint(mode="subject"), recommended_resampling="grouped_cv")


def test_train_test_columns_and_unused_rows(spec):
    table = pd.DataFrame({"sample_id": ["a1", "a2", "b1", "b2", "c1"], "set": ["train", "test", "test", "test", None]})
    report = straddling_groups(spec, table)
    assert report.groups.to_dict("list") == {"group_id": ["A"], "n_samples": [2], "values": ["test, train"]}
    assert (report.n_checked, report.n_unused, report.split_column) == (4, 1, "set")
    table.loc[1, "set"] = "excluded"
    assert straddling_groups(spec, table).clean


def test_missing_columns_are_named(spec):
    with pytest.raises(DepgraphError) as err:
        straddling_groups(spec, pd.DataFrame({"sample_id": ["a1"], "colour": ["red"]}))
    assert err.value.code == "schema" and "--split-column" in err.value.message
    with pytest.raises(DepgraphError) as err:
        straddling_groups(spec, pd.DataFrame({"id": ["a1"], "fold": [1]}))
    assert "sample_id" in err.value.message
