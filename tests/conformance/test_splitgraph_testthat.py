"""splitGraph's own testthat suite, translated: the scenarios of its JSON files and validation.

Each scenario writes the splitGraph document it needs, in the layout splitGraph 0.2.0 writes
(``tests/data/conformance/splitgraph_json``: ``node_id`` ``sample:S1``, ``node_type``, ``node_key``,
``attrs`` an object, edges ``from``/``to``/``edge_type``, ``metadata.validation_overrides``), and
expects what splitGraph does with it (tests/testthat in selcukorkmaz/splitGraph, named per test):
the same groups, the same finding codes at splitGraph's severities, a warning where splitGraph
warns, and a coded refusal where splitGraph stops or would silently differ.
"""

from __future__ import annotations

import json
import warnings
from typing import Any

import pandas as pd
import pytest

from depgraph import DepgraphError, DepgraphWarning, derive, from_metadata, read_graph, validate
from depgraph.adapters.splitgraph import SplitGraphWarning, from_splitgraph, read_splitgraph
from depgraph.cli.main import main
from depgraph.spec.files import read_spec
from depgraph.spec.model import SplitSpec
from tests.conftest import CONFORMANCE

PREFIX = {"Sample": "sample", "Subject": "subject", "Batch": "batch", "Study": "study", "Timepoint": "timepoint",
          "FeatureSet": "featureset", "Outcome": "outcome"}  # fmt: skip


# --------------------------------------------------------------------------------- documents, as splitGraph writes them
def node(node_type: str, key: str, node_id: str | None = None, attrs: Any = None) -> dict[str, Any]:
    return {
        "node_id": node_id or f"{PREFIX[node_type]}:{key}",
        "node_type": node_type,
        "node_key": key,
        "label": key,
        "attrs": {} if attrs is None else attrs,
    }


def edge(relation: str, source: str, target: str, k: int = 1, attrs: Any = None) -> dict[str, Any]:
    return {"edge_id": f"{relation}:{k}", "from": source, "to": target, "edge_type": relation,
            "attrs": {} if attrs is None else attrs}  # fmt: skip


def graph_doc(nodes: list[dict[str, Any]], edges: list[dict[str, Any]], overrides: Any = (), **top: Any) -> dict:
    doc = {
        "splitGraph_object": "dependency_graph",
        "schema_version": "0.1.0",
        "metadata": {
            "graph_name": "testthat",
            "dataset_name": None,
            "created_at": "2026-04-29T10:11:12.000000+0000",
            "schema_version": "0.1.0",
            "validation_overrides": [] if overrides == () else overrides,  # jsonlite writes an empty list as []
        },
        "nodes": nodes,
        "edges": edges,
    }
    doc.update(top)
    return doc


def multi_subject_doc(overrides: Any = ()) -> dict:
    """test-validation-overrides.R make_multi_subject_graph(): S1 linked to P1 and P2."""
    return graph_doc(
        [node("Sample", "S1"), node("Subject", "P1"), node("Subject", "P2")],
        [
            edge("sample_belongs_to_subject", "sample:S1", "subject:P1", 1),
            edge("sample_belongs_to_subject", "sample:S1", "subject:P2", 2),
        ],
        overrides,
    )


def featureset_doc(scope: str | None, samples: int = 2) -> dict:
    """test-validate.R: samples of one subject sharing feature set FS1 with a derivation_scope."""
    ids = [f"S{i + 1}" for i in range(samples)]
    return graph_doc(
        [*(node("Sample", s) for s in ids), node("Subject", "P1"),
         node("FeatureSet", "FS1", attrs={} if scope is None else {"derivation_scope": scope})],
        [*(edge("sample_belongs_to_subject", f"sample:{s}", "subject:P1", i + 1) for i, s in enumerate(ids)),
         *(edge("sample_uses_featureset", f"sample:{s}", "featureset:FS1", i + 1) for i, s in enumerate(ids))],
    )  # fmt: skip


def spec_doc(rows: list[dict[str, Any]], **top: Any) -> dict:
    doc = {
        "splitGraph_object": "split_spec",
        "schema_version": "0.1.0",
        "group_var": "group_id",
        "block_vars": [],
        "time_var": None,
        "ordering_required": False,
        "constraint_mode": "subject",
        "constraint_strategy": "subject",
        "recommended_resampling": "grouped_cv",
        "metadata": {"graph_name": "testthat", "source_mode": "subject", "relations_used": "sample_belongs_to_subject",
                     "n_samples": len(rows), "n_groups": len({r.get("group_id") for r in rows}), "warnings": []},
        "sample_data": rows,
    }  # fmt: skip
    doc.update(top)
    return doc


def quietly(doc: dict) -> Any:
    """Read a document whose warnings are not what the scenario is about."""
    with warnings.catch_warnings():
        warnings.simplefilter("error", SplitGraphWarning)  # ... and there must be none
        return from_splitgraph(doc, "testthat.json")


def refused(doc: dict, code: str, *fragments: str) -> DepgraphError:
    with pytest.raises(DepgraphError) as info:
        from_splitgraph(doc, "testthat.json")
    assert info.value.code == code, info.value
    for fragment in fragments:
        assert fragment in info.value.message, (fragment, info.value.message)
    assert "\n" not in info.value.message
    return info.value


def codes(graph: Any) -> dict[str, int]:
    return validate(graph).counts()


# ------------------------------------------------------------------- validation_overrides (test-validation-overrides.R)
@pytest.mark.parametrize("value", ["false", "true", "FALSE", "TRUE", 0, 1, None, [True]], ids=repr)
def test_an_override_that_is_not_a_json_boolean_is_refused(value):
    # splitGraph honours an override only when isTRUE(): "false" (and "true") leave it off and it then refuses
    # to derive on S1; depgraph used to read any non-empty value as true. Refused, naming override and value.
    refused(
        multi_subject_doc({"allow_multi_subject_samples": value}), "schema", "allow_multi_subject_samples", repr(value)
    )


def test_a_true_override_lets_subject_mode_keep_one_subject():
    # "derive_split_constraints(mode='subject') respects allow_multi_subject_samples": one group, a recorded warning
    graph = quietly(multi_subject_doc({"allow_multi_subject_samples": True}))
    partition = derive(graph, "subject")
    assert partition.groups() == {"S1": "subject:P1"}  # depgraph's documented choice: the smallest subject id
    assert [w.code for w in partition.warnings] == ["multi_subject_first_chosen"]
    assert validate(graph).valid  # "with the override, the same situation is no longer flagged"
    assert "sample_multiple_subject_assignments" not in codes(graph)


@pytest.mark.parametrize("overrides", [{"allow_multi_subject_samples": False}, {}, [], None], ids=repr)
def test_without_a_true_override_a_sample_with_two_subjects_is_refused(overrides):
    # "Default: multi-subject samples are an error"; derivation "cannot pick a single subject -> error"
    graph = quietly(multi_subject_doc(overrides))
    assert graph.overrides.get("allow_multi_subject_samples", False) is False
    report = validate(graph)
    assert not report.valid and report.counts()["sample_multiple_subject_assignments"] == 1
    with pytest.raises(DepgraphError) as info:
        derive(graph, "subject")
    assert info.value.code == "ambiguity" and "S1" in info.value.message


def test_the_override_does_not_leak_into_other_modes():
    # "override does not leak across modes (batch/study/time still error on multi-assignment)"
    doc = graph_doc(
        [node("Sample", "S1"), node("Batch", "B1"), node("Batch", "B2")],
        [edge("sample_processed_in_batch", "sample:S1", "batch:B1", 1),
         edge("sample_processed_in_batch", "sample:S1", "batch:B2", 2)],
        {"allow_multi_subject_samples": True},
    )  # fmt: skip
    with pytest.raises(DepgraphError) as info:
        derive(quietly(doc), "batch")
    assert info.value.code == "ambiguity" and "S1" in info.value.message


def test_validation_overrides_must_be_a_named_list():
    # "validate_graph() validates the type of validation_overrides": not a list, or an unnamed one
    refused(multi_subject_doc("not a list"), "schema", "validation_overrides")
    refused(multi_subject_doc([True]), "schema", "validation_overrides")
    refused(multi_subject_doc({"allow_everything": True}), "schema", "allow_everything")


@pytest.mark.parametrize("value", ["false", 0, None])
def test_with_overrides_takes_booleans_only(value):
    graph = quietly(multi_subject_doc())
    with pytest.raises(DepgraphError) as info:
        graph.with_overrides(allow_multi_subject_samples=value)
    assert info.value.code == "invalid_value" and repr(value) in info.value.message
    assert derive(graph.with_overrides(allow_multi_subject_samples=True), "subject").n_groups == 1


def test_from_metadata_takes_a_boolean_override_only():
    meta = pd.DataFrame({"sample_id": ["S1", "S1"], "subject_id": ["P1", "P2"]})
    with pytest.raises(DepgraphError) as info:
        from_metadata(meta, allow_multi_subject_samples="false")
    assert info.value.code == "invalid_value" and "'false'" in info.value.message


# ------------------------------------------------------------------------------------ node ids (test-prefix-mismatch.R)
def test_nodes_are_what_node_id_names_not_a_cut_at_the_colon():
    # a Sample whose id is lab:S1 (key lab:S1) linked to P2 must not become sample S1, which belongs to P1
    doc = graph_doc(
        [node("Sample", "lab:S1", "lab:S1"), node("Sample", "S1"), node("Subject", "P1"), node("Subject", "P2")],
        [edge("sample_belongs_to_subject", "lab:S1", "subject:P2", 1),
         edge("sample_belongs_to_subject", "sample:S1", "subject:P1", 2)],
    )  # fmt: skip
    assert derive(quietly(doc), "subject").groups() == {"S1": "subject:P1", "lab:S1": "subject:P2"}


def test_a_node_key_differing_from_its_id_is_the_key():
    doc = graph_doc(
        [node("Sample", "S1", "lab:0001"), node("Subject", "P2", "person-2")],
        [edge("sample_belongs_to_subject", "lab:0001", "person-2")],
    )
    assert derive(quietly(doc), "subject").groups() == {"S1": "subject:P2"}


def test_unprefixed_ids_on_both_sides_build():
    # "matching prefix conventions on both sides build successfully" (create_nodes(prefix = FALSE))
    doc = graph_doc(
        [
            node("Sample", "S1", "S1"),
            node("Sample", "S2", "S2"),
            node("Subject", "P1", "P1"),
            node("Subject", "P2", "P2"),
        ],
        [edge("sample_belongs_to_subject", "S1", "P1", 1), edge("sample_belongs_to_subject", "S2", "P2", 2)],
    )
    assert derive(quietly(doc), "subject").groups() == {"S1": "subject:P1", "S2": "subject:P2"}


def test_prefixed_edges_on_unprefixed_nodes_are_refused_with_the_prefix_hint():
    # "build_dependency_graph error mentions prefix mismatch when likely"
    doc = graph_doc(
        [node("Sample", "S1", "S1"), node("Subject", "P1", "P1")],
        [edge("sample_belongs_to_subject", "sample:S1", "subject:P1")],
    )
    err = refused(doc, "reference", "sample:S1", "not in the node table", "prefixed")
    assert err.details["ids"] == ["sample:S1"]


def test_unprefixed_edges_on_prefixed_nodes_are_refused_with_the_prefix_hint():
    doc = graph_doc([node("Sample", "S1"), node("Subject", "P1")], [edge("sample_belongs_to_subject", "S1", "P1")])
    refused(doc, "reference", "'from'", "S1", "node ids are prefixed")


def test_an_endpoint_missing_for_another_reason_gets_no_prefix_hint():
    # "build_dependency_graph error does NOT mention prefix when no mismatch pattern"
    doc = graph_doc([node("Sample", "S1")], [edge("sample_belongs_to_subject", "sample:S1", "subject:P1")])
    err = refused(doc, "reference", "'to'", "subject:P1")
    assert "hint" not in err.message


def test_exact_repeats_of_a_node_definition_collapse_with_a_warning():
    # test-constructors.R "create_nodes collapses exact duplicate definitions deterministically": one node, its
    # attrs kept; depgraph tells it (repeated_node_definition) and keeps the note for validate
    subject = node("Subject", "P1", attrs={"subject_type": "case"})
    doc = graph_doc(
        [node("Sample", "S1"), subject, dict(subject), {**node("Sample", "S1"), "attrs": []}],
        [edge("sample_belongs_to_subject", "sample:S1", "subject:P1")],
    )
    with pytest.warns(SplitGraphWarning, match="2 node row") as told:
        graph = from_splitgraph(doc, "testthat.json")
    assert [w.message.code for w in told] == ["repeated_node_definition"]
    assert graph.keys("Subject").tolist() == ["P1"] and graph.sample_ids.tolist() == ["S1"]
    assert graph.attributes["subject_type"].dropna().tolist() == ["case"]
    report = validate(graph)
    assert report.valid and [(i.code, i.severity, i.count) for i in report.issues] == [
        ("repeated_node_definition", "warning", 2)
    ]


def test_conflicting_definitions_of_a_node_are_refused():
    # test-constructors.R "create_nodes rejects conflicting duplicate definitions"
    doc = graph_doc(
        [node("Sample", "S1"), node("Subject", "P1", attrs={"subject_type": "case"}),
         node("Subject", "P1", attrs={"subject_type": "control"})],
        [edge("sample_belongs_to_subject", "sample:S1", "subject:P1")],
    )  # fmt: skip
    err = refused(doc, "duplicate_id", "nodes[1] and nodes[2]", "'subject:P1' differently (attrs)")
    assert err.details["ids"] == ["subject:P1"]


def test_a_cyclic_precedence_among_timepoints_alone_is_reported():
    # test-validate.R "semantic validation rejects cyclic timepoint precedence graphs": no sample in the graph; the
    # cycle is what validation reports, as splitGraph's validate_graph does
    doc = graph_doc(
        [node("Timepoint", t) for t in ("T1", "T2", "T3")],
        [edge("timepoint_precedes", f"timepoint:{a}", f"timepoint:{b}", k)
         for k, (a, b) in enumerate([("T1", "T2"), ("T2", "T3"), ("T3", "T1")], 1)],
    )  # fmt: skip
    report = validate(quietly(doc))
    assert not report.valid and "timepoint_precedence_cycle" in [i.code for i in report.issues]
    with pytest.raises(DepgraphError) as err:
        derive(quietly(doc), "time")
    assert err.value.code == "empty_input"


def test_two_node_ids_for_one_typed_key_are_refused():
    refused(
        graph_doc([node("Sample", "S1"), node("Sample", "S1", "lab:S1")], []), "duplicate_id", "sample:S1", "lab:S1"
    )


# ----------------------------------------------------------------------------------------- attrs (test-serialization.R)
@pytest.mark.parametrize("empty", [{}, [], None], ids=["object", "R empty list", "null"])
def test_node_and_edge_attributes_round_trip(empty):
    # "round-trip preserves node and edge attribute list-columns": T0 keeps time_index 0 and its visit label;
    # empty attrs, written {} or [] by jsonlite, read as empty
    doc = graph_doc(
        [node("Sample", "S1", attrs={"subject_id": "P1", "timepoint_id": "T0"}), node("Sample", "S2", attrs=empty),
         node("Subject", "P1", attrs=empty), node("Subject", "P2"),
         node("Timepoint", "T0", attrs={"time_index": 0, "visit_label": "baseline"}),
         node("Timepoint", "T1", attrs={"time_index": 1, "visit_label": "follow_up"})],
        [edge("sample_belongs_to_subject", "sample:S1", "subject:P1", 1, empty),
         edge("sample_belongs_to_subject", "sample:S2", "subject:P2", 2),
         edge("sample_collected_at_timepoint", "sample:S1", "timepoint:T0", 1),
         edge("sample_collected_at_timepoint", "sample:S2", "timepoint:T1", 2)],
    )  # fmt: skip
    graph = quietly(doc)
    start, stop = graph.type_range("Timepoint")
    block = graph.attributes.iloc[start:stop]
    assert block["time_index"].tolist() == [0.0, 1.0]
    assert block["visit_label"].tolist() == ["baseline", "follow_up"]
    assert derive(graph, "time").groups() == {"S1": "time:T0", "S2": "time:T1"}


@pytest.mark.parametrize("attrs", [[0], ["time_index", 0], "time_index=0", 0, True], ids=repr)
def test_attrs_that_are_not_a_named_object_are_refused(attrs):
    # a Timepoint whose attrs are an unnamed list would lose its time_index without a word
    doc = graph_doc([node("Sample", "S1"), node("Timepoint", "T0", attrs=attrs)],
                    [edge("sample_collected_at_timepoint", "sample:S1", "timepoint:T0")])  # fmt: skip
    refused(doc, "schema", "nodes[1] (timepoint:T0)", "attrs must be an object")


def test_a_list_as_an_attribute_value_is_refused():
    doc = graph_doc([node("Sample", "S1"), node("Timepoint", "T0", attrs={"time_index": [0, 1]})], [])
    refused(doc, "schema", "timepoint:T0", "attrs.time_index")


@pytest.mark.parametrize("value", ["0", "abc", True])
def test_a_time_index_that_is_not_a_number_is_refused(value):
    # splitGraph flags a non-numeric time_index (invalid_time_index); depgraph orders by it, so it refuses
    doc = graph_doc([node("Sample", "S1"), node("Timepoint", "T0", attrs={"time_index": value})], [])
    refused(doc, "invalid_value", "timepoint:T0", "time_index")


def test_a_sample_attribute_contradicting_its_edge_is_refused():
    doc = graph_doc(
        [node("Sample", "S1", attrs={"subject_id": "P9"}), node("Subject", "P1")],
        [edge("sample_belongs_to_subject", "sample:S1", "subject:P1")],
    )
    refused(doc, "ambiguity", "S1", "subject_id", "P9", "P1")


def test_a_subject_scoped_outcome_attribute_agrees_through_the_subject():
    # graph_from_metadata(outcome_scope = "subject") keeps outcome_id on samples and links outcomes to subjects
    doc = graph_doc(
        [node("Sample", "S1", attrs={"subject_id": "P1", "outcome_id": "case"}), node("Subject", "P1"),
         node("Outcome", "case")],
        [edge("sample_belongs_to_subject", "sample:S1", "subject:P1"),
         edge("subject_has_outcome", "subject:P1", "outcome:case")],
    )  # fmt: skip
    assert quietly(doc).relation_counts() == {"sample_belongs_to_subject": 1, "subject_has_outcome": 1}


# ---------------------------------------------------------------------------------------------- edges (test-validate.R)
def test_an_unknown_edge_type_is_refused():
    # "validate_graph catches unsupported edge types" (unsupported_edge_type)
    doc = graph_doc([node("Sample", "S1"), node("Subject", "P1")],
                    [edge("sample_likes_subject", "sample:S1", "subject:P1")])  # fmt: skip
    refused(doc, "schema", "edges[0]", "sample_likes_subject")


def test_an_edge_against_its_relation_signature_is_refused():
    # invalid_edge_signature: sample_belongs_to_subject from a Sample to a Batch
    doc = graph_doc([node("Sample", "S1"), node("Batch", "B1")],
                    [edge("sample_belongs_to_subject", "sample:S1", "batch:B1")])  # fmt: skip
    refused(doc, "schema", "edges[0]", "Sample", "Batch", "invalid_edge_signature")


def test_a_repeated_edge_triplet_is_a_finding_not_a_silent_merge():
    # duplicate_edge_triplet (structural error in splitGraph); depgraph keeps the edge once and says so
    doc = graph_doc(
        [node("Sample", "S1"), node("Sample", "S2"), node("Subject", "P1")],
        [edge("sample_belongs_to_subject", "sample:S1", "subject:P1", 1),
         edge("sample_belongs_to_subject", "sample:S2", "subject:P1", 2),
         edge("sample_belongs_to_subject", "sample:S1", "subject:P1", 3)],
    )  # fmt: skip
    with pytest.warns(SplitGraphWarning, match="duplicate_edge_triplet") as heard:
        graph = from_splitgraph(doc, "testthat.json")
    assert [w.message.code for w in heard] == ["duplicate_edge"]
    assert graph.relation_counts() == {"sample_belongs_to_subject": 2}
    report = validate(graph)
    assert not report.valid
    (issue,) = [i for i in report.issues if i.code == "duplicate_edge"]
    assert (issue.level, issue.severity, issue.count) == ("structural", "error", 1)
    assert set(issue.ids) == {"sample:S1", "subject:P1"}


# ------------------------------------------------------------------------ FeatureSet derivation_scope (test-validate.R)
def test_an_invalid_featureset_derivation_scope_is_a_warning():
    # "semantic validation flags invalid FeatureSet derivation scope"
    report = validate(quietly(featureset_doc("invalid_scope", samples=1)))
    (issue,) = [i for i in report.issues if i.code == "invalid_featureset_derivation_scope"]
    assert (issue.level, issue.severity, issue.ids) == ("semantic", "warning", ("featureset:FS1",))
    assert "invalid_scope" in issue.message
    assert report.valid


def test_a_per_dataset_featureset_shared_across_samples_is_reported():
    # "leakage validation reports repeated-subject and per-dataset feature risks"
    report = validate(quietly(featureset_doc("per_dataset", samples=2)))
    by_code = {i.code: i for i in report.issues}
    assert (by_code["per_dataset_featureset"].level, by_code["per_dataset_featureset"].severity) == (
        "leakage",
        "advisory",
    )
    assert by_code["per_dataset_featureset"].ids == ("featureset:FS1",)
    assert report.counts()["repeated_subject_samples"] == 1
    assert report.counts()["shared_featureset_provenance"] == 1


def test_a_per_dataset_featureset_of_one_sample_is_reported_too():
    counts = codes(quietly(featureset_doc("per_dataset", samples=1)))
    assert counts.get("per_dataset_featureset") == 1 and "shared_featureset_provenance" not in counts


@pytest.mark.parametrize("scope", ["external", "per_training_split", None])
def test_allowed_derivation_scopes_are_silent(scope):
    counts = codes(quietly(featureset_doc(scope)))
    assert "invalid_featureset_derivation_scope" not in counts and "per_dataset_featureset" not in counts


# -------------------------------------------------------------------------------- schema_version (test-serialization.R)
@pytest.mark.parametrize("version", ["99.0.0", "0.2.0", None, ""], ids=repr)
def test_an_unknown_schema_version_loads_with_a_warning(version):
    # "read_dependency_graph warns on unknown future schema_version but still loads"
    doc = graph_doc([node("Sample", "S1"), node("Subject", "P1")],
                    [edge("sample_belongs_to_subject", "sample:S1", "subject:P1")], schema_version=version)  # fmt: skip
    with pytest.warns(SplitGraphWarning, match="schema_version") as heard:
        graph = from_splitgraph(doc, "testthat.json")
    assert [w.message.code for w in heard] == ["splitgraph_schema_version"]
    assert derive(graph, "subject").groups() == {"S1": "subject:P1"}
    assert graph.history[0]["warnings"][0]["code"] == "splitgraph_schema_version"
    assert codes(graph)["splitgraph_schema_version"] == 1


def test_a_split_spec_of_an_unknown_schema_version_keeps_the_warning():
    doc = spec_doc([{"sample_id": "S1", "group_id": "subject:P1"}], schema_version="99.0.0")
    with pytest.warns(DepgraphWarning, match="99.0.0"):
        spec = from_splitgraph(doc, "testthat.json")
    assert [w.code for w in spec.warnings] == ["splitgraph_schema_version"]
    assert spec.groups() == {"S1": "subject:P1"}


def test_the_current_schema_version_is_read_silently():
    doc = graph_doc([node("Sample", "S1")], [])
    assert quietly(doc).history[0] == {"step": "import_splitgraph", "schema_version": "0.1.0"}


def test_import_prints_the_warning_and_writes_the_graph(tmp_path, capsys):
    one = [edge("sample_belongs_to_subject", "sample:S1", "subject:P1")]
    doc = graph_doc([node("Sample", "S1"), node("Subject", "P1")], one, schema_version="99.0.0")
    source, target = tmp_path / "future.json", tmp_path / "graph.json"
    source.write_text(json.dumps(doc))
    capsys.readouterr()
    assert main(["import", "--from", "splitgraph", str(source), "-o", str(target)]) == 0
    err = capsys.readouterr().err.splitlines()
    assert len(err) == 1 and err[0].startswith("depgraph: warning: splitgraph_schema_version: ")
    assert "99.0.0" in err[0] and str(source) in err[0]
    assert validate(read_graph(target)).counts()["splitgraph_schema_version"] == 1


# ----------------------------------------------------------------------- numeric outcome_value (test-numeric-outcome.R)
def test_a_numeric_outcome_value_makes_outcomes_with_a_warning():
    # "graph_from_metadata warns when outcome_value is numeric"; Outcome nodes are still built, keyed 0 and 1
    meta = pd.DataFrame({"sample_id": ["S1", "S2", "S3"], "subject_id": ["P1", "P2", "P3"], "outcome_value": [0, 1, 0]})
    with pytest.warns(DepgraphWarning, match="outcome_value") as heard:
        graph = from_metadata(meta)
    assert [w.message.code for w in heard] == ["numeric_outcome_value"]
    assert graph.keys("Outcome").tolist() == ["0", "1"]
    spec = SplitSpec.from_partition(derive(graph, "subject"), graph)
    assert spec.samples["stratum"].tolist() == ["0", "1", "0"]
    assert codes(graph)["numeric_outcome_value"] == 1


def test_a_numeric_outcome_value_read_from_csv_text_warns_too(tmp_path):
    path = tmp_path / "meta.csv"
    path.write_text("sample_id,outcome_value\nS1,0\nS2,1\n")
    with pytest.warns(DepgraphWarning, match="outcome_value"):
        graph = from_metadata(path)
    assert graph.keys("Outcome").tolist() == ["0", "1"]


@pytest.mark.parametrize(
    "columns",
    [{"outcome_id": ["case", "ctrl"]}, {"outcome_value": ["case", "ctrl"]}, {}],
    ids=["outcome_id text", "outcome_value text", "no outcome"],
)
def test_text_outcomes_and_no_outcomes_are_silent(columns):
    # "graph_from_metadata is silent when outcome_id / outcome_value is character, or absent"
    meta = pd.DataFrame({"sample_id": ["S1", "S2"], "subject_id": ["P1", "P2"], **columns})
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        graph = from_metadata(meta)
    assert graph.keys("Outcome").tolist() == (["case", "ctrl"] if columns else [])
    assert "numeric_outcome_value" not in codes(graph)


def test_build_prints_the_numeric_outcome_warning(tmp_path, capsys):
    path, target = tmp_path / "meta.csv", tmp_path / "graph.json"
    path.write_text("sample_id,subject_id,outcome_value\nS1,P1,0\nS2,P2,1\n")
    capsys.readouterr()
    assert main(["build", str(path), "-o", str(target)]) == 0
    (line,) = capsys.readouterr().err.splitlines()
    assert line.startswith("depgraph: warning: numeric_outcome_value: ")


# ----------------------------------------------------------------- split_spec (test-serialization.R, test-split-spec.R)
def test_a_split_spec_round_trips_with_missing_values(tmp_path):
    # "read_split_spec round-trip preserves NA in sample_data"
    missing = dict.fromkeys(("batch_group", "study_group", "timepoint_id", "time_index", "order_rank"))
    rows = [
        {"sample_id": s, "sample_node_id": f"sample:{s}", "group_id": g, "primary_group": g, **missing}
        for s, g in (("S2", "subject:P2"), ("S1", "subject:P1"))
    ]
    path = tmp_path / "spec.json"
    path.write_text(json.dumps(spec_doc(rows)))
    spec = read_splitgraph(path)
    assert spec.samples.columns.tolist() == ["sample_id", "group_id"]
    assert spec.samples["sample_id"].tolist() == ["S1", "S2"]  # depgraph's sample order
    assert spec.groups() == {"S1": "subject:P1", "S2": "subject:P2"}


def test_a_split_spec_repeating_a_sample_is_refused():
    # validate_split_spec(): duplicate_sample_id
    rows = [{"sample_id": "S1", "group_id": "subject:P1"}, {"sample_id": "S1", "group_id": "subject:P2"}]
    refused(spec_doc(rows), "duplicate_id", "S1")


@pytest.mark.parametrize("sample_id", [None, "", 7, ["S1"]], ids=repr)
def test_a_split_spec_sample_without_a_text_id_is_refused(sample_id):
    # validate_split_spec(): missing_sample_id
    refused(spec_doc([{"sample_id": sample_id, "group_id": "g1"}]), "schema", "sample_data[0]", "sample_id")


def test_a_split_spec_whose_counts_contradict_its_rows_is_refused():
    doc = spec_doc([{"sample_id": "S1", "group_id": "g1"}, {"sample_id": "S2", "group_id": "g2"}])
    doc["metadata"]["n_samples"] = 3
    refused(doc, "integrity", "n_samples", "3")


@pytest.mark.parametrize(
    "field,value,code",
    [("time_index", "t0", "invalid_value"), ("order_rank", 1.5, "invalid_value"), ("batch_group", {"b": 1}, "schema")],
)
def test_a_split_spec_column_of_the_wrong_kind_is_refused(field, value, code):
    refused(spec_doc([{"sample_id": "S1", "group_id": "g1", field: value}]), code, "sample_data[0] (S1)", field)


def test_a_wrong_object_type_is_refused(tmp_path):
    # "read_* rejects malformed or wrong-type JSON"
    refused({"splitGraph_object": "igraph", "schema_version": "0.1.0"}, "schema", "splitGraph_object")
    path = tmp_path / "broken.json"
    path.write_text("not json at all {")
    with pytest.raises(DepgraphError) as info:
        read_splitgraph(path)
    assert info.value.code == "parse"


def test_an_imported_spec_reads_back_as_a_verified_depgraph_spec(tmp_path, capsys):
    rows = [{"sample_id": "S10", "group_id": "subject:P1"}, {"sample_id": "S9", "group_id": "subject:P1"},
            {"sample_id": "S1", "group_id": "subject:P2"}]  # fmt: skip
    source, target = tmp_path / "sg.json", tmp_path / "spec.json"
    source.write_text(json.dumps(spec_doc(rows)))
    assert main(["import", "--from", "splitgraph", str(source), "-o", str(target)]) == 0
    assert capsys.readouterr().err == ""
    spec = read_spec(target)
    assert spec.samples["sample_id"].tolist() == sorted(["S10", "S9", "S1"])
    assert spec.groups() == {"S10": "subject:P1", "S9": "subject:P1", "S1": "subject:P2"}


@pytest.mark.parametrize("path", sorted((CONFORMANCE / "splitgraph_json").glob("*.json")), ids=lambda p: p.name)
def test_the_real_splitgraph_exports_import_silently(path):
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        imported = read_splitgraph(path)
    assert imported.graph_name == "five_samples_mixed" if isinstance(imported, SplitSpec) else imported.name
