"""The split spec contract: content, digest, exact round trips, version policy, bad files."""

from __future__ import annotations

import numpy as np
import orjson
import pandas as pd
import pytest

from depgraph import DepgraphError, add_kinship, derive, from_metadata
from depgraph.cli.main import main
from depgraph.folds.schemes import assign_folds
from depgraph.spec.balance import balance_metrics
from depgraph.spec.digest import canonical_bytes, content_digest
from depgraph.spec.files import read_spec, spec_bytes, spec_document, spec_from_document, write_spec
from depgraph.spec.model import SPEC_FORMAT_VERSION, Constraint, FoldPlan, FoldSplit, SplitSpec


@pytest.fixture
def graph(family_meta, family_kinship):
    meta = family_meta.assign(study_id="ST1", site_id=["A", "B"] * 5, outcome_id=["case", "control"] * 5)
    meta.loc[9, "batch_id"] = None
    return add_kinship(from_metadata(meta, name="families"), family_kinship, "first")


def test_spec_columns_come_from_the_graph(graph):
    spec = SplitSpec.from_partition(derive(graph, "subject"), graph)
    assert spec.samples.columns.tolist() == [
        "sample_id", "group_id", "batch_group", "study_group", "site_group",
        "timepoint_id", "time_index", "order_rank", "stratum",
    ]  # fmt: skip
    last = spec.samples.iloc[-1]
    assert last["sample_id"] == "P5-T1" and pd.isna(last["batch_group"]) and last["order_rank"] == 2
    assert last["stratum"] == "control"
    assert spec.summary.n_groups == 5 and spec.recommended_resampling == "grouped_cv"
    assert spec.graph_name == "families" and spec.generator.package == "depgraph"


def test_several_outcomes_make_a_joined_stratum():
    meta = pd.DataFrame({"sample_id": ["S1", "S1", "S2"], "outcome_id": ["b", "a", "a"]})
    g = from_metadata(meta)
    spec = SplitSpec.from_partition(derive(g, "batch", allow_unlinked=True), g)  # no batches: singletons, on purpose
    assert spec.samples["stratum"].tolist() == ["a|b", "a"]


def test_graph_to_spec_to_json_to_spec_is_exact(tmp_path, graph):
    spec = SplitSpec.from_partition(derive(graph, "relatedness"), graph)
    write_spec(spec, tmp_path / "spec.json")
    back = read_spec(tmp_path / "spec.json")
    assert spec_document(back) == spec_document(spec)
    assert spec_bytes(back) == spec_bytes(spec)
    assert back.digest == spec.digest == back.compute_digest()
    pd.testing.assert_frame_equal(back.samples, spec.samples, check_dtype=False)


def test_digest_ignores_time_and_generator_but_not_content(graph):
    a = SplitSpec.from_partition(derive(graph, "subject"), graph)
    b = a.replace(created_at="2000-01-01T00:00:00+00:00", generator=a.generator.model_copy(update={"version": "9"}))
    assert a.digest == b.digest
    c = a.replace(samples=a.samples.assign(group_id=a.samples["group_id"].str.replace("P5", "P6")))
    assert c.digest != a.digest
    text = canonical_bytes(spec_document(a))
    assert b'"created_at"' not in text and b'"generator"' not in text and b": " not in text


def test_folds_travel_with_the_spec(tmp_path, graph):
    spec = SplitSpec.from_partition(derive(graph, "subject"), graph)
    role = np.zeros((2, spec.n_samples), dtype=np.int8)
    role[0, :4], role[1, 4:8], role[1, 9] = 1, 1, 2
    with_folds = spec.with_folds(FoldPlan.from_roles(role, scheme="manual", seed=7))
    assert with_folds.digest != spec.digest
    write_spec(with_folds, tmp_path / "f.json")
    text = (tmp_path / "f.json").read_text()
    assert '{"repeat":0,"fold":1,"n_train":5,"n_test":4,"n_excluded":1,"test":[4,5,6,7],"excluded":[9]}' in text
    back = read_spec(tmp_path / "f.json")
    assert np.array_equal(back.folds.role_matrix(spec.n_samples), role) and back.folds.seed == 7
    outside = FoldPlan(scheme="manual", splits=[FoldSplit.of(0, 0, np.array([12]), np.array([]), 13)])
    with pytest.raises(DepgraphError) as err:
        spec.with_folds(outside)
    assert "position 12" in err.value.message


def _doc(graph) -> dict:
    return spec_document(SplitSpec.from_partition(derive(graph, "subject"), graph))


def test_a_newer_minor_version_is_read_and_its_new_fields_ignored(graph):
    doc = _doc(graph)
    doc["format_version"] = "1.7.0"
    doc["fancy_new_field"] = {"a": 1}
    doc["digest"] = content_digest(doc)
    spec = spec_from_document(doc)
    assert spec.format_version == "1.7.0" and spec.n_samples == 10


@pytest.mark.parametrize("version", ["0.9.0", "2.0.0", "one"])
def test_other_major_versions_are_refused_with_a_clear_message(graph, version):
    doc = _doc(graph)
    doc["format_version"] = version
    with pytest.raises(DepgraphError) as err:
        spec_from_document(doc)
    assert err.value.code == "version" and version in err.value.message


BAD_SPEC_FILES = {
    "truncated": lambda text: text[: len(text) // 2],
    "zero-bytes": lambda text: "",
    "wrong-types": lambda text: text.replace('"n_groups": 5', '"n_groups": "five"'),
    "missing-sample-column": lambda text: text.replace('"sample_id":', '"sample_name":'),
    "unequal-lengths": lambda text: text.replace('"group_id": ["subject:P1",', '"group_id": ['),
    "duplicate-ids": lambda text: text.replace('"P1-T1"', '"P1-T0"', 1),
    "unknown-major": lambda text: text.replace(
        f'"format_version": "{SPEC_FORMAT_VERSION}"', '"format_version": "3.0.0"'
    ),
    "tampered": lambda text: text.replace('"subject:P5","subject:P5"', '"subject:P5","subject:P4"'),
}
EXPECTED = {
    "truncated": ("parse", "not valid JSON"),
    "zero-bytes": ("empty_input", "empty"),
    "wrong-types": ("schema", "summary/n_groups"),
    "missing-sample-column": ("schema", "sample_id"),
    "unequal-lengths": ("schema", "equal lengths"),
    "duplicate-ids": ("integrity", "digest"),  # edited without a new digest (re-digested: test_spec_invariants)
    "unknown-major": ("version", "3.0.0"),
    "tampered": ("integrity", "digest"),
}


@pytest.mark.parametrize("case", sorted(BAD_SPEC_FILES))
def test_bad_spec_files_are_refused_naming_the_problem(tmp_path, capsys, graph, case):
    good = tmp_path / "good.json"
    write_spec(SplitSpec.from_partition(derive(graph, "subject"), graph), good)
    text = good.read_text()
    damaged = BAD_SPEC_FILES[case](text)
    assert damaged != text or case == "zero-bytes"
    path = tmp_path / f"{case}.json"
    path.write_text(damaged)
    code, fragment = EXPECTED[case]
    with pytest.raises(DepgraphError) as err:
        read_spec(path)
    assert err.value.code == code and fragment in err.value.message, err.value.message
    assert main(["validate", str(path)]) == 2
    err_lines = capsys.readouterr().err.strip().splitlines()
    assert len(err_lines) == 1 and err_lines[0].startswith(f"depgraph: {code}:")


def test_a_directory_is_not_a_spec(tmp_path):
    with pytest.raises(DepgraphError) as err:
        read_spec(tmp_path)
    assert err.value.code == "io" and "directory" in err.value.message


def test_a_spec_is_refused_where_a_graph_is_needed_and_vice_versa(tmp_path, graph):
    spec_path = tmp_path / "spec.json"
    write_spec(SplitSpec.from_partition(derive(graph, "subject"), graph), spec_path)
    from depgraph import read_graph, write_graph

    with pytest.raises(DepgraphError) as err:
        read_graph(spec_path)
    assert err.value.code == "schema" and "split-spec" in err.value.message
    write_graph(graph, tmp_path / "graph.json")
    with pytest.raises(DepgraphError) as err:
        read_spec(tmp_path / "graph.json")
    assert err.value.code == "schema" and "study-graph" in err.value.message


def test_build_fills_summary_and_digest():
    spec = SplitSpec.build(
        pd.DataFrame({"sample_id": ["a", "b", "c"], "group_id": ["g1", "g1", "g2"]}),
        constraint=Constraint(mode="subject"),
        recommended_resampling="grouped_cv",
    )
    assert spec.summary.model_dump() == {
        "n_samples": 3, "n_groups": 2, "largest_group": "g1", "largest_group_size": 2, "singletons": 1
    }  # fmt: skip
    assert orjson.loads(spec_bytes(spec))["digest"] == spec.digest


@pytest.mark.parametrize("bad", ["true", "1.0", '"3"', "null"])
def test_fold_positions_must_be_integers(tmp_path, graph, bad):
    from depgraph.folds.schemes import assign_folds

    spec = assign_folds(SplitSpec.from_partition(derive(graph, "subject"), graph), "group-kfold", n_splits=3)
    path = tmp_path / "folds.json"
    write_spec(spec, path)
    text = path.read_text()
    path.write_text(text.replace('"test":[', f'"test":[{bad},', 1))
    with pytest.raises(DepgraphError) as err:
        read_spec(path)
    assert err.value.code == "schema" and "folds" in err.value.message, err.value.message


def test_a_strict_composite_states_no_priority_and_only_its_own_labels():
    """Priority orders a rule-based composite's modes; a strict composite labels its groups composite: (a
    composite_subject: label is a rule-based one's), and a rule-based one labels them after its priority modes."""
    from depgraph.spec.model import Constraint as C

    frame = pd.DataFrame({"sample_id": ["S1", "S2"], "group_id": ["composite:S1", "composite:S2"]})
    cases = [
        (frame, C(mode="composite", strategy="strict", via=["subject"], priority=["subject"]), "custom_grouped_cv",
         "a strict one combines them all"),
        (frame.assign(group_id=["composite_subject:P1", "composite_subject:P2"]),
         C(mode="composite", strategy="strict", via=["subject", "batch"]), "custom_grouped_cv",
         "group ids labelled composite_subject: under mode composite (strict)"),
        (frame.assign(group_id=["composite_subject:P1", "composite_batch:B2"]),
         C(mode="composite", strategy="rule_based", via=["subject", "batch"], priority=["batch"]), "grouped_cv",
         "group ids labelled composite_subject: under mode composite (rule_based)"),
    ]  # fmt: skip
    for samples, constraint, resampling, fragment in cases:
        with pytest.raises(DepgraphError) as err:
            SplitSpec.build(samples, constraint=constraint, recommended_resampling=resampling)
        assert err.value.code == "invalid_argument" and fragment in err.value.message, err.value.message


def test_a_leave_one_block_out_split_tests_its_whole_block():
    frame = pd.DataFrame({"sample_id": [f"S{i}" for i in range(6)], "group_id": [f"g{i}" for i in range(6)],
                          "batch_group": ["B1", "B1", "B1", "B2", "B2", "B2"]})  # fmt: skip
    spec = SplitSpec.build(frame, constraint=Constraint(mode="subject"), recommended_resampling="grouped_cv")
    doc = spec_document(assign_folds(spec, "logo", by="batch_group"))
    split = doc["folds"]["splits"][0]
    split.update(test=split["test"][1:], n_test=split["n_test"] - 1, n_train=split["n_train"] + 1)
    doc["folds"]["balance"] = balance_metrics(spec.samples, [FoldSplit(**x) for x in doc["folds"]["splits"]], [],
                                              None)  # fmt: skip
    doc["digest"] = content_digest(doc)
    with pytest.raises(DepgraphError) as err:
        spec_from_document(doc)
    assert err.value.code == "integrity" and "tests 2 of the 3 samples of block 'B1'" in err.value.message
