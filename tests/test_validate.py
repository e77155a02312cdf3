"""Each validation rule fires on the declaration it is about, and only there."""

from __future__ import annotations

import numpy as np
import orjson
import pandas as pd
import pytest
from hypothesis import given
from hypothesis import strategies as st

from depgraph import (
    DepgraphError,
    add_duplicates,
    add_kinship,
    add_relations,
    derive,
    from_metadata,
    validate,
    write_graph,
)
from depgraph.cli.main import main
from depgraph.derivation.shapes import dominates
from depgraph.graph.files import graph_document, graph_from_document
from depgraph.graph.model import StudyGraph


def codes(graph, **kwargs):
    return validate(graph, **kwargs).counts()


def test_clean_declaration_has_no_findings():
    meta = pd.DataFrame(
        {
            "sample_id": ["S1", "S2", "S3", "S4"],
            "subject_id": ["P1", "P2", "P3", "P4"],
            "batch_id": ["B1", "B1", "B2", "B2"],
        }
    )
    report = validate(from_metadata(meta))
    assert report.valid and report.issues == () and report.metrics["n_samples"] == 4


def test_leakage_codes_of_splitgraph():
    meta = pd.DataFrame(
        {
            "sample_id": ["S1", "S2", "S3", "S4", "S5", "S6"],
            "subject_id": ["P1", "P1", "P2", "P3", "P4", "P5"],
            "study_id": ["ST1", "ST2", "ST1", "ST1", "ST1", "ST2"],
            "site_id": ["A", "B", "A", "A", "A", "A"],
            "batch_id": ["B1", "B1", "B1", "B2", "B3", "B4"],
            "featureset_id": ["F1", "F1", "F2", "F3", "F4", "F5"],
        }
    )
    report = validate(from_metadata(meta))
    found = report.counts()
    assert found["repeated_subject_samples"] == 1
    assert found["subject_cross_study_overlap"] == 1
    assert found["subject_cross_site_overlap"] == 1
    assert found["shared_featureset_provenance"] == 1
    assert found["heavy_batch_reuse"] == 1  # B1 holds 3 = max(3, ceil(6/2)) samples
    issue = next(i for i in report.issues if i.code == "subject_cross_study_overlap")
    assert issue.ids == ("subject:P1",) and issue.level == "leakage" and issue.severity == "warning"


def test_heavy_batch_threshold_boundary():
    meta = pd.DataFrame({"sample_id": [f"S{i}" for i in range(8)], "batch_id": ["B1"] * 3 + ["B2"] * 5})
    assert codes(from_metadata(meta)).get("heavy_batch_reuse") == 1  # B2: 5 >= 4; B1: 3 < 4


def test_missing_assignments_are_warnings():
    meta = pd.DataFrame({"sample_id": ["S1", "S2"], "study_id": ["ST1", None], "batch_id": [None, "B1"]})
    found = codes(from_metadata(meta))
    assert found["sample_missing_study_assignment"] == 1 and found["sample_missing_batch_assignment"] == 1


def test_a_second_batch_for_a_sample_is_an_error():
    g = from_metadata(pd.DataFrame({"sample_id": ["S1", "S2"], "batch_id": ["B1", "B2"]}))
    g = add_relations(g, pd.DataFrame({"source": ["S1"], "target": ["B2"]}), "sample_processed_in_batch")
    report = validate(g)
    assert not report.valid
    (err,) = report.errors
    assert err.code == "sample_multiple_batch_assignments" and err.ids == ("sample:S1",) and err.level == "semantic"


def test_allowed_multi_subject_samples_are_an_advisory():
    meta = pd.DataFrame({"sample_id": ["S1", "S1"], "subject_id": ["P1", "P2"]})
    report = validate(from_metadata(meta, allow_multi_subject_samples=True))
    assert report.valid and "multi_subject_samples_allowed" in report.counts()


def test_time_order_rules():
    meta = pd.DataFrame({"sample_id": ["a", "b"], "timepoint_id": ["T0", "T1"], "time_index": [0, 1]})
    g = from_metadata(meta)
    backwards = add_relations(g, pd.DataFrame({"source": ["T1"], "target": ["T0"]}), "timepoint_precedes")
    found = codes(backwards)
    assert found["timepoint_precedence_cycle"] == 2 and found["time_order_conflict"] == 2
    loop = add_relations(g, pd.DataFrame({"source": ["T0"], "target": ["T0"]}), "timepoint_precedes")
    assert "timepoint_self_loop" in codes(loop)
    unordered = from_metadata(pd.DataFrame({"sample_id": ["a"], "timepoint_id": ["T0"]}))
    assert "missing_time_ordering" in codes(unordered)


def test_related_subjects_and_duplicates_across_subjects(family_meta, family_kinship):
    g = add_kinship(from_metadata(family_meta), family_kinship, 0.1)
    g = add_duplicates(g, pd.DataFrame({"id1": ["P1-T0", "P1-T0"], "id2": ["P1-T1", "P5-T0"]}))
    report = validate(g)
    related = next(i for i in report.issues if i.code == "related_subjects")
    assert related.details["pairs"] == 2 and related.count == 4
    across = next(i for i in report.issues if i.code == "duplicates_across_subjects")
    assert across.details["pairs"] == 1 and set(across.ids) == {"sample:P1-T0", "sample:P5-T0"}


def test_partition_shape_findings_and_folds(family_meta):
    g = from_metadata(family_meta)
    report = validate(g, n_splits=4)
    shapes = [(i.code, i.details["mode"]) for i in report.issues if i.code in ("single_group", "too_few_groups")]
    # subjects, batches and visits: visits link every baseline and every follow-up sample, so a composite over
    # every mode is one group; that is the design, and it is reported only when asked for
    assert ("too_few_groups", "batch") in shapes and ("too_few_groups", "time") in shapes
    assert ("too_few_groups", "subject") not in shapes and "composite/strict" not in {m for _, m in shapes}
    (asked,) = validate(g, modes=["composite"]).issues[1:]
    assert asked.code == "single_group" and asked.details == {
        "mode": "composite/strict",
        "via": ["subject", "batch", "time"],
        "relations": ["sample_belongs_to_subject", "sample_processed_in_batch", "sample_collected_at_timepoint"],
    }
    assert asked.message == (
        "mode composite/strict over every declared mode: subject, batch, time (sample_belongs_to_subject, "
        "sample_processed_in_batch, sample_collected_at_timepoint) puts all 10 samples in one group: no split is "
        "possible"
    )
    only_subject = validate(g, n_splits=6, modes=["subject"])
    assert [i.details["mode"] for i in only_subject.issues if i.code == "too_few_groups"] == ["subject"]


def _shape_findings(report):
    return [(i.code, i.details.get("mode")) for i in report.issues if i.code in ("single_group", "dominant_group")]


def test_a_valid_design_has_no_collapse_warning(tmp_path, capsys):
    from depgraph.cli.demo import demo_cohort

    cohort = demo_cohort()  # the demo's families: six batches, three visits, two sites of 124 and 122 samples
    g = add_duplicates(add_kinship(from_metadata(cohort.metadata), cohort.kinship, "first"), cohort.duplicates)
    sites = cohort.metadata["site_id"].value_counts().tolist()
    assert len(sites) == 2 and max(sites) > len(cohort.metadata) / 2  # a little over half: balanced, not dominant
    assert _shape_findings(validate(g)) == []
    write_graph(g, tmp_path / "graph.json")
    assert main(["validate", str(tmp_path / "graph.json")]) == 0
    out = capsys.readouterr().out
    assert "valid — 0 error(s)" in out and "single_group" not in out and "dominant_group" not in out


def test_collapse_of_the_dependencies_is_reported_with_what_it_covers():
    # a1~b1 and b2~c1 declared duplicates chain three subjects; one batch holds everything, as on a small run
    meta = pd.DataFrame({"sample_id": ["a1", "a2", "b1", "b2", "c1", "d1"],
                         "subject_id": ["A", "A", "B", "B", "C", "D"], "batch_id": ["B1"] * 6})  # fmt: skip
    g = add_duplicates(from_metadata(meta), pd.DataFrame({"id1": ["a1", "b2"], "id2": ["b1", "c1"]}))
    report = validate(g)
    # subjects alone (2, 2, 1, 1) and duplicates alone are fine; together they hold 5 of 6 samples in one group
    assert _shape_findings(report) == [
        ("single_group", "batch"), ("dominant_group", "composite/strict")
    ]  # fmt: skip
    finding = next(i for i in report.issues if i.code == "dominant_group")
    assert finding.details["via"] == ["subject", "duplicate"]
    assert finding.details["relations"] == ["sample_belongs_to_subject", "sample_duplicate_of"]
    assert finding.message == (
        "mode composite/strict over subject, duplicate (sample_belongs_to_subject, sample_duplicate_of): one group "
        "holds 5 of 6 samples (83%), the next largest 1; any split will be lopsided"
    )
    # the batch composite is not checked unless asked: batches link samples by design
    assert "every declared mode" not in " ".join(i.message for i in report.issues)


def test_kinship_that_chains_everyone_is_a_single_group():
    meta = pd.DataFrame({"sample_id": ["s1", "s2", "s3", "s4"], "subject_id": ["P1", "P2", "P3", "P4"]})
    chain = pd.DataFrame({"id1": ["P1", "P2", "P3"], "id2": ["P2", "P3", "P4"], "kinship": [0.25] * 3})
    report = validate(add_kinship(from_metadata(meta), chain, "first"))
    # subject + relatedness is relatedness again: one finding, not a second one for the same grouping
    assert _shape_findings(report) == [("single_group", "relatedness")]


@given(st.lists(st.integers(min_value=1, max_value=50), min_size=1, max_size=8))
def test_dominance_is_more_than_half_and_twice_the_runner_up(sizes):
    ordered = sorted(sizes, reverse=True)
    expected = len(sizes) > 1 and ordered[0] * 2 > sum(sizes) and ordered[0] >= 2 * ordered[1]
    assert dominates(np.array(sizes)) == expected
    meta = pd.DataFrame({"sample_id": [f"s{i}" for i in range(sum(sizes))],
                         "study_id": [f"ST{k}" for k, n in enumerate(sizes) for _ in range(n)]})  # fmt: skip
    g = from_metadata(meta)
    found = _shape_findings(validate(g, modes=["study"]))
    assert ("dominant_group", "study") in found if expected else ("dominant_group", "study") not in found
    if sum(sizes) > 1:
        warned = [w.code for w in derive(g, "study", allow_unlinked=True).warnings]
        assert ("dominant_group" in warned) == expected  # derive and validate share the definition


def test_dropped_pairs_are_reported(family_meta):
    pairs = pd.DataFrame({"id1": ["P1", "P9"], "id2": ["P2", "P1"], "kinship": [0.25, 0.25]})
    g = add_kinship(from_metadata(family_meta), pairs, 0.1, unknown="ignore")
    assert codes(g)["pairs_with_unknown_ids_dropped"] == 1


def test_structural_rules_catch_hand_built_damage(family_meta):
    g = from_metadata(family_meta)
    edges = g.edges.copy()
    edges.loc[0, "dst"] = g.n_nodes + 5  # dangling
    edges.loc[1, "dst"] = 0  # a sample as a subject: wrong signature
    edges = pd.concat([edges, edges.iloc[[2]]], ignore_index=True)  # repeated edge
    nodes = pd.concat([g.nodes, g.nodes.iloc[[0]]], ignore_index=True)  # repeated node id
    attributes = pd.concat([g.attributes, g.attributes.iloc[[0]]], ignore_index=True)
    broken = StudyGraph.from_tables(nodes, attributes, edges)
    found = codes(broken, levels=["structural"])
    assert set(found) == {"dangling_edge", "invalid_edge_signature", "duplicate_edge", "duplicate_node_id"}
    assert not validate(broken).valid


def test_filters_keep_validity_over_everything():
    g = from_metadata(pd.DataFrame({"sample_id": ["S1", "S2"], "batch_id": ["B1", "B2"]}))
    g = add_relations(g, pd.DataFrame({"source": ["S1"], "target": ["B2"]}), "sample_processed_in_batch")
    report = validate(g, severities=["advisory"])
    assert not report.valid and report.errors == ()
    with pytest.raises(DepgraphError):
        validate(g, levels=["cosmic"])


def test_report_serialises():
    g = from_metadata(pd.DataFrame({"sample_id": ["S1", "S2"], "subject_id": ["P1", "P1"]}))
    doc = validate(g).to_dict()
    assert doc["valid"] is True and doc["counts"] == {"repeated_subject_samples": 1, "single_group": 1}
    assert doc["issues"][0]["ids"] == ["subject:P1"]
    assert np.isscalar(doc["metrics"]["n_nodes"])


def test_json_report_holds_each_findings_ids_on_one_line():
    """The JSON report is the report (orjson reads back to_dict), indented, and each finding's ids are one line
    whatever their number: 20,000 subjects with two samples each are not 20,000 lines."""
    n = 20_000
    g = from_metadata(pd.DataFrame({"sample_id": [f"S{i}" for i in range(2 * n)],
                                    "subject_id": [f"P{i // 2}" for i in range(2 * n)]}))  # fmt: skip
    report = validate(g)
    text = report.to_json_bytes()
    assert orjson.loads(text) == report.to_dict()
    lines = text.decode().splitlines()
    assert len(lines) < 30 * (len(report.issues) + 1)
    long = [line for line in lines if len(line) > 1000]
    assert [orjson.loads(line.split(": ", 1)[1].rstrip(",")) for line in long] == [
        list(issue.ids) for issue in report.issues if len(orjson.dumps(list(issue.ids))) > 990
    ]
    assert any(len(issue.ids) == n for issue in report.issues)
    empty = validate(from_metadata(pd.DataFrame({"sample_id": ["S1", "S2"], "batch_id": ["B1", "B2"]})))
    assert orjson.loads(empty.to_json_bytes()) == empty.to_dict()


def test_every_emitted_code_is_in_the_catalogue(family_meta, family_kinship):
    from depgraph import derive
    from depgraph.cli.demo import demo_cohort
    from depgraph.findings import DERIVATION_FINDINGS as FINDINGS
    from depgraph.findings import VALIDATION_FINDINGS as CATALOGUE
    from tests.conftest import case_metadata, conformance_cases, load_case

    cohort = demo_cohort()
    graphs = [
        add_duplicates(add_kinship(from_metadata(cohort.metadata), cohort.kinship, "first"), cohort.duplicates),
        add_kinship(from_metadata(family_meta), family_kinship, 0.1),
        *(from_metadata(case_metadata(load_case(p))) for p in conformance_cases()),
    ]
    seen = set()
    for g in graphs:
        for issue in validate(g, n_splits=10).issues + validate(g, modes=["composite"]).issues:
            level, severity, _ = CATALOGUE[issue.code]
            assert (issue.level, issue.severity) == (level, severity), issue.code
            seen.add(issue.code)
        for mode in ("subject", "batch", "time", "relatedness", "duplicate", "composite"):
            # accepted on request, so that the warnings of unlinked and single-group partitions are seen too
            accept = {"allow_unlinked": True, **({"allow_single_group": True} if mode == "composite" else {})}
            for w in derive(g, mode, **accept).warnings:
                assert FINDINGS[w.code][0] == w.severity, w.code
    assert {"repeated_subject_samples", "related_subjects", "too_few_groups", "single_group"} <= seen


def test_findings_about_many_nodes_name_every_one():
    """Ids of a finding about much of one node type come from a shared per-type block; they must be exact."""
    n = 12_000
    meta = pd.DataFrame(
        {"sample_id": [f"S{i}" for i in range(2 * n)], "subject_id": [f"P{i % n}" for i in range(2 * n)]}
    )
    report = validate(from_metadata(meta))
    (repeated,) = [i for i in report.advisories if i.code == "repeated_subject_samples"]
    assert repeated.ids == tuple(sorted(f"subject:P{i}" for i in range(n))) and repeated.count == n


# --------------------------------------------------------------------------- ids spreadsheets run as formulas
def test_ids_a_spreadsheet_would_run_are_an_advisory():
    meta = pd.DataFrame(
        {
            "sample_id": ["=HYPERLINK(1)", "+44", "-1", "@SUM(A1)", "S-5", "a=b", "S7"],
            "subject_id": ["P1", "P1", "=cmd|' /C calc'!A0", "P3", "P4", "P5", "P6"],
            "batch_id": ["B1", "-B2", "B1", "B1", "B1", "B1", "B1"],
        }
    )
    graph = from_metadata(meta)
    report = validate(graph)
    (issue,) = [i for i in report.issues if i.code == "formula_like_ids"]
    expected = sorted(  # plain Python: the first character, every node of every type
        f"{prefix}:{key}"
        for column, prefix in (("sample_id", "sample"), ("subject_id", "subject"), ("batch_id", "batch"))
        for key in set(meta[column])
        if key[:1] in ("=", "+", "-", "@", "\t", "\r")
    )
    assert sorted(issue.ids) == expected and issue.count == 6
    assert (issue.level, issue.severity) == ("semantic", "advisory") and report.valid
    assert "'-1'" in issue.message and "export --excel-safe" in issue.message
    clean = from_metadata(meta[meta["sample_id"].isin(["S-5", "a=b", "S7"])].assign(batch_id="B1", subject_id="P1"))
    assert "formula_like_ids" not in codes(clean)


def test_formula_like_ids_read_from_parquet_keep_tabs_and_carriage_returns(tmp_path):
    # CSV cells are trimmed on reading; Parquet text is not, so a leading tab or CR can reach an id
    meta = pd.DataFrame({"sample_id": ["\tS1", "\rS2", "S3"], "subject_id": ["P1", "P1", "P2"]})
    graph = graph_from_document(graph_document(from_metadata(meta)))
    keys = [k for k in graph.nodes["key"] if k[:1] in "\t\r"]
    report = validate(graph)
    found = [i for i in report.issues if i.code == "formula_like_ids"]
    assert (len(found) == 1 and found[0].count == len(keys)) if keys else not found


def test_ids_that_look_like_terminal_markup_are_printed_as_written(tmp_path, capsys):
    # the CLI colours its output with rich markup; ids quoted in findings must not be read as markup ("[/y]" would
    # otherwise stop the command with a traceback, "[bold]" would vanish)
    meta = pd.DataFrame({"sample_id": ["S[/x]1", "S2", "S3"], "subject_id": ["P[/y]1", None, "P[/y]1"]})
    write_graph(from_metadata(meta), tmp_path / "g.json")
    capsys.readouterr()
    assert main(["validate", str(tmp_path / "g.json")]) == 0
    assert "P[/y]1" in capsys.readouterr().out
    assert main(["derive", str(tmp_path / "g.json"), "--mode", "subject", "-o", str(tmp_path / "s.json")]) == 0
    assert "group subject:P[/y]1 holds 2 of 3" in capsys.readouterr().out
    assert main(["validate", str(tmp_path / "s.json")]) == 0
    assert "subject:P[/y]1" in capsys.readouterr().out
