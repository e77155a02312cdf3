"""The vocabulary is one table that everything else reads."""

from __future__ import annotations

import itertools

from depgraph.vocab import (
    CANONICAL_COLUMNS,
    COMBINABLE_MODES,
    KING_DEGREE_THRESHOLDS,
    MODE,
    MODES,
    NODE_TYPES,
    RELATION,
    RELATIONS,
    NodeType,
    direct_relation,
    relations_for_mode,
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
