"""The vocabulary is one table that everything else reads."""

from __future__ import annotations

import itertools
import json

import pandas as pd
import pytest

from depgraph import DepgraphError, SplitSpec, derive, from_metadata, read_spec, validate, write_graph
from depgraph.cli.main import main
from depgraph.derivation.groups import group_sizes
from depgraph.findings import CATALOGUE, DERIVATION_FINDINGS, VALIDATION_FINDINGS
from depgraph.spec.files import spec_bytes
from depgraph.spec.model import Constraint
from depgraph.vocab import (
    BLOCK_MODES,
    CANONICAL_COLUMNS,
    COMBINABLE_MODES,
    DEPENDENCY_MODES,
    DIRECT_MODES,
    KING_DEGREE_THRESHOLDS,
    MODE,
    MODES,
    NODE_TYPES,
    RELATION,
    RELATIONS,
    NodeType,
    canonical_name,
    direct_relation,
    mode_named,
    recommended_resampling,
    relation_named,
    relations_for_mode,
    strategy_named,
)


def test_eleven_node_types_with_lowercase_prefixes():
    assert len(NODE_TYPES) == 11
    assert [t.prefix for t in NODE_TYPES] == [t.value.lower() for t in NODE_TYPES]
    assert len({t.prefix for t in NODE_TYPES}) == 11


def test_seventeen_relations_with_unique_names():
    assert len(RELATIONS) == 17
    assert len(RELATION) == 17


def test_single_target_relations_are_sample_relations_with_a_column():
    for rel in RELATIONS:
        if rel.single_target:
            assert rel.source is NodeType.SAMPLE and rel.column is not None and rel.directed


def test_undirected_relations_are_weighted_and_between_one_type():
    undirected = [r for r in RELATIONS if not r.directed]
    assert {r.name for r in undirected} == {"subject_related_to", "sample_adjacent_to", "sample_duplicate_of"}
    assert all(r.weighted and r.source is r.target for r in undirected)


def test_every_direct_mode_has_exactly_one_single_target_relation():
    for mode in MODES:
        if mode.kind == "direct":
            rels = [r for r in RELATIONS if r.mode == mode.name]
            assert len(rels) == 1 and rels[0].single_target
            assert direct_relation(mode.name) is rels[0]


def test_component_modes_follow_their_relations():
    assert [r.name for r in relations_for_mode("relatedness")] == ["sample_belongs_to_subject", "subject_related_to"]
    assert [r.name for r in relations_for_mode("spatial")] == ["sample_adjacent_to"]
    assert [r.name for r in relations_for_mode("duplicate")] == ["sample_duplicate_of"]
    assert "composite" not in COMBINABLE_MODES and set(COMBINABLE_MODES) == set(MODE) - {"composite"}


def test_canonical_columns_come_from_the_relation_table():
    columns = {r.column for r in RELATIONS if r.column}
    assert set(CANONICAL_COLUMNS) == columns | {"sample_id", "time_index"}
    assert "platform_id" in columns and "outcome_id" in columns


def test_king_degrees_halve():
    values = [KING_DEGREE_THRESHOLDS[k] for k in ("duplicate", "first", "second", "third")]
    assert all(abs(a / b - 2) < 0.01 for a, b in itertools.pairwise(values))


# --------------------------------------------------------------------------- lists derived from the tables
def test_mode_lists_are_read_from_the_tables():
    # recomputed here from the relation table alone, not from the constants under test
    direct = [r.mode for r in RELATIONS if r.single_target and r.mode is not None]
    assert list(DIRECT_MODES) == direct
    between_entities = {r.mode for r in RELATIONS if not r.directed}  # kinship, adjacency, duplicates
    assert set(DEPENDENCY_MODES) == between_entities | {"subject"}
    assert set(BLOCK_MODES) == set(direct) - {"subject", "time"}
    # splitGraph's block-column order: the table's, with assay last
    assert [m for m in BLOCK_MODES if m != "assay"] == [m for m in direct if m in BLOCK_MODES and m != "assay"]
    assert BLOCK_MODES[-1] == "assay"


def test_the_spec_and_splitgraph_use_the_vocabulary_block_modes():
    from depgraph.spec.columns import SAMPLE_COLUMNS

    assert [c for c in SAMPLE_COLUMNS if c.endswith("_group")] == [f"{m}_group" for m in BLOCK_MODES]


def test_validation_codes_per_direct_mode_come_from_the_table():
    for rel in RELATIONS:
        if rel.single_target:
            assert VALIDATION_FINDINGS[f"sample_multiple_{rel.mode}_assignments"][:2] == ("semantic", "error")
            assert VALIDATION_FINDINGS[f"sample_missing_{rel.mode}_assignment"][:2] == ("semantic", "warning")
    per_mode = [c for c in VALIDATION_FINDINGS if c.startswith(("sample_multiple_", "sample_missing_"))]
    assert len(per_mode) == 2 * sum(r.single_target for r in RELATIONS)


def test_one_catalogue_one_definition_per_code():
    assert set(CATALOGUE) == set(VALIDATION_FINDINGS) | set(DERIVATION_FINDINGS)
    for code in set(VALIDATION_FINDINGS) & set(DERIVATION_FINDINGS):  # single_group, dominant_group
        assert VALIDATION_FINDINGS[code][1:] == DERIVATION_FINDINGS[code], code
    assert {"single_group", "dominant_group"} <= set(VALIDATION_FINDINGS) & set(DERIVATION_FINDINGS)


def test_exposure_block_relations_come_from_the_table():
    from depgraph.audit.exposure import BLOCK_RELATIONS, SHARED_RELATIONS

    blocks = [r.name for r in RELATIONS if r.single_target and r.mode not in (None, "subject")]
    assert list(BLOCK_RELATIONS) == blocks
    assert {*blocks, "sample_uses_featureset"} == SHARED_RELATIONS


# --------------------------------------------------------------------------- names on entry
@pytest.fixture(scope="module")
def graph():
    meta = pd.DataFrame(
        {
            "sample_id": ["S1", "S2", "S3", "S4"],
            "subject_id": ["P1", "P1", "P1", "P1"],
            "batch_id": ["B1"] * 2 + ["B2"] * 2,
        }
    )
    return from_metadata(meta)


@pytest.mark.parametrize("spelling", ["Subject", "SUBJECT", " subject "])
def test_every_entry_point_reads_mode_names_in_any_case(graph, spelling):
    assert mode_named(spelling) == "subject" and canonical_name(spelling) == "subject"
    assert derive(graph, spelling).mode == "subject"
    composite = derive(graph, "Composite", strategy="Rule_Based", via=[spelling, "BATCH"], priority=[spelling])
    assert (composite.mode, composite.strategy, composite.via, composite.priority) == (
        "composite",
        "rule_based",
        ("subject", "batch"),
        ("subject",),
    )
    assert derive(graph, "COMPOSITE", strategy="STRICT", via=[spelling]).via == ("subject",)
    assert group_sizes(graph, spelling).tolist() == [4]
    (finding,) = [i for i in validate(graph, modes=[spelling]).issues if i.code == "single_group"]
    assert finding.details["mode"] == "subject"
    assert recommended_resampling(spelling) == "grouped_cv"
    assert SplitSpec.from_partition(derive(graph, spelling), graph).constraint.mode == "subject"


def test_the_command_line_reads_mode_names_in_any_case(graph, tmp_path):
    write_graph(graph, tmp_path / "graph.json")
    out = tmp_path / "spec.json"
    args = ["derive", str(tmp_path / "graph.json"), "--mode", "Composite", "--strategy", "Rule_Based"]
    assert main([*args, "--via", "SUBJECT,Batch", "-o", str(out)]) == 0
    constraint = read_spec(out).constraint
    assert (constraint.mode, constraint.strategy, constraint.via) == ("composite", "rule_based", ["subject", "batch"])


def test_unknown_names_are_refused_by_name(graph):
    with pytest.raises(DepgraphError, match=r"unknown mode 'Family'; modes are subject, batch"):
        derive(graph, "Family")
    with pytest.raises(DepgraphError, match=r"unknown mode 'Family'"):
        group_sizes(graph, "Family")
    with pytest.raises(DepgraphError, match=r"modes family are not modes"):
        validate(graph, modes=["Family"])
    with pytest.raises(DepgraphError, match=r"via/priority take mode names .*; got family"):
        derive(graph, "composite", via=["Family"])
    with pytest.raises(DepgraphError, match=r"strategy must be one of strict, rule_based, not 'Greedy'"):
        derive(graph, "composite", strategy="Greedy", via=["subject"])
    with pytest.raises(DepgraphError, match=r"unknown relation 'kin_of'; relations are sample_belongs_to_subject"):
        relation_named("kin_of")
    assert relation_named("Subject_Related_To") == "subject_related_to" and strategy_named(" STRICT") == "strict"
    for value in (None, 3, ["subject"]):
        with pytest.raises(DepgraphError, match="unknown mode"):
            mode_named(value)


def test_a_constraint_built_in_python_reads_names_in_any_case_a_file_does_not():
    """In Python, Constraint takes names as derive does (any case, kept lower case); a spec *file* is the contract
    and its schema holds it to the lower-case names, so a file saying 'SUBJECT' is refused, not silently mended."""
    made = Constraint(mode="Composite", strategy=" STRICT", via=["Subject", "relatedness"])
    assert (made.mode, made.strategy, made.via) == ("composite", "strict", ["subject", "relatedness"])
    with pytest.raises(DepgraphError) as refused:
        Constraint(mode="family")
    assert refused.value.code == "invalid_argument" and "'family' is not a mode" in str(refused.value)


def test_a_spec_file_with_an_upper_case_mode_is_refused(graph, tmp_path):
    spec = SplitSpec.from_partition(derive(graph, "subject"), graph)
    path = tmp_path / "spec.json"
    doc = json.loads(spec_bytes(spec))
    doc["constraint"]["mode"] = "SUBJECT"
    path.write_text(json.dumps(doc))
    with pytest.raises(DepgraphError) as refused:
        read_spec(path)
    assert refused.value.code == "schema" and "SUBJECT" in str(refused.value)


def test_role_spellings_name_one_role_each_and_are_recognised_as_written():
    from depgraph.vocab import ROLE_SPELLINGS, role_of_column

    spellings = [s for listed in ROLE_SPELLINGS.values() for s in listed]
    assert len(spellings) == len(set(spellings))  # no spelling names two roles
    assert set(ROLE_SPELLINGS) == {*CANONICAL_COLUMNS, "family"}
    for role, listed in ROLE_SPELLINGS.items():
        for spelling in listed:
            assert role_of_column(spelling) == role, spelling
            assert role_of_column(spelling.upper()) == role, spelling
    for column in CANONICAL_COLUMNS:
        assert role_of_column(column) == column
        assert role_of_column(column.upper().replace("_", " ")) == column  # SUBJECT ID


@pytest.mark.parametrize(
    ("column", "role"),
    [("Subject_ID", "subject_id"), ("patient_id", "subject_id"), ("participant", "subject_id"),
     ("individual", "subject_id"), ("PatientNumber", "subject_id"), ("family_id", "family"), ("FID", "family"),
     ("Batch", "batch_id"), ("plate_no", "batch_id"), ("site", "site_id"), ("Centre", "site_id"),
     ("Visit", "timepoint_id"), ("visit_number", "time_index"), ("Visit No.", "time_index"),
     ("SampleID", "sample_id"), ("Scanner", "platform_id"), ("Diagnosis", "outcome_id"),
     ("age", None), ("sex", None), ("f0", None), ("score", None), ("ID", "sample_id"), ("subject_notes", None),
     ("patient_age", None), ("batch_effect", None)],
)  # fmt: skip
def test_columns_named_like_a_role(column, role):
    from depgraph.vocab import role_of_column

    assert role_of_column(column) == role
