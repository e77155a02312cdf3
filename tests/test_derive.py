"""Derivation: every mode, subsets, composites, and the findings it reports."""

from __future__ import annotations

import sys

import networkx as nx
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from depgraph import DepgraphError, add_duplicates, add_kinship, add_relations, add_spatial, derive, from_metadata
from depgraph.derivation.shapes import group_shape
from tests.test_properties import (
    COMPONENT_MODES,
    DIRECT_MODES,
    build,
    cohorts,
    examples,
    present_modes,
    reference_graph,
    spatial_edges,
)


@pytest.fixture
def graph(family_meta, family_kinship):
    return add_kinship(from_metadata(family_meta), family_kinship, "first")


def test_direct_modes_label_by_target(graph):
    p = derive(graph, "subject")
    assert p.groups()["P1-T0"] == "subject:P1" and p.n_groups == 5
    assert set(p.samples["basis"]) == {"subject"}
    b = derive(graph, "batch")
    assert b.groups()["P5-T1"] == "batch:B3" and b.n_groups == 3


def test_unlinked_samples_become_singletons_with_a_warning():
    g = from_metadata(pd.DataFrame({"sample_id": ["S1", "S2", "S3"], "site_id": ["A", None, "A"]}))
    p = derive(g, "site")
    assert p.groups() == {"S1": "site:A", "S2": "site:unlinked:S2", "S3": "site:A"}
    (warning,) = [w for w in p.warnings if w.code == "unlinked_samples"]
    assert warning.ids == ("S2",) and "S2" in warning.message
    assert p.samples.loc[p.samples["sample_id"] == "S2", "basis"].item() == "unlinked"


def test_two_subjects_for_one_sample_is_an_error_unless_overridden():
    meta = pd.DataFrame({"sample_id": ["S1", "S1", "S2"], "subject_id": ["P2", "P1", "P3"]})
    with pytest.raises(DepgraphError):
        from_metadata(meta)
    g = from_metadata(meta, allow_multi_subject_samples=True)
    p = derive(g, "subject")
    assert p.groups() == {"S1": "subject:P1", "S2": "subject:P3"}  # smallest id, whatever the row order
    assert [w.code for w in p.warnings] == ["multi_subject_first_chosen"]


def test_relatedness_closes_over_subjects_and_kinship(graph):
    p = derive(graph, "relatedness")
    groups = p.groups()
    assert groups["P1-T0"] == groups["P2-T1"] == "relatedness:P1-T0"
    assert groups["P3-T0"] == groups["P4-T0"] == "relatedness:P3-T0"
    assert groups["P5-T0"] == "relatedness:P5-T0" and p.n_groups == 3
    assert p.parameters["add_kinship"][0]["threshold"] == 0.177


def test_relatedness_without_kinship_warns(family_meta):
    p = derive(from_metadata(family_meta), "relatedness")
    assert p.n_groups == 5 and "no_relation_edges" in [w.code for w in p.warnings]


def test_subset_is_derived_on_the_induced_subgraph():
    meta = pd.DataFrame({"sample_id": ["S1", "S2", "S3"]})
    dup = pd.DataFrame({"id1": ["S1", "S2"], "id2": ["S2", "S3"]})
    g = add_duplicates(from_metadata(meta), dup)
    assert derive(g, "duplicate").n_groups == 1
    p = derive(g, "duplicate", samples=["S3", "sample:S1"])  # node ids are accepted too
    assert p.groups() == {"S1": "duplicate:S1", "S3": "duplicate:S3"}


def test_subset_keeps_entities_linking_samples(graph):
    p = derive(graph, "relatedness", samples=["P1-T0", "P2-T1", "P5-T0"])
    assert p.groups() == {"P1-T0": "relatedness:P1-T0", "P2-T1": "relatedness:P1-T0", "P5-T0": "relatedness:P5-T0"}


def test_composite_strict_defaults_to_every_declared_mode(graph):
    # batches and visits link every sample: over every declared mode, one group, refused unless accepted
    with pytest.raises(DepgraphError) as err:
        derive(graph, "composite")
    assert err.value.code == "too_few_groups" and "--via" in err.value.message
    p = derive(graph, "composite", allow_single_group=True)
    assert p.strategy == "strict"
    assert p.via == ("subject", "batch", "time", "relatedness")
    assert p.n_groups == 1 and "single_group" in [w.code for w in p.warnings]
    q = derive(graph, "composite", via=["relatedness"])
    assert q.n_groups == 3 and q.relations == ("sample_belongs_to_subject", "subject_related_to")


def test_rule_based_takes_the_first_mode_that_links_a_sample():
    meta = pd.DataFrame(
        {"sample_id": ["S1", "S2", "S3"], "batch_id": ["B1", None, None], "subject_id": ["P1", "P1", None]}
    )
    g = from_metadata(meta)
    p = derive(g, "composite", strategy="rule_based", priority=["batch", "subject"])
    assert p.groups() == {"S1": "composite_batch:B1", "S2": "composite_subject:P1", "S3": "composite:unlinked:S3"}
    assert p.samples["basis"].tolist() == ["batch", "subject", "unlinked"]
    assert p.via == ("batch", "subject") and p.priority == ("batch", "subject")


def test_rule_based_with_a_component_mode():
    meta = pd.DataFrame({"sample_id": ["S1", "S2", "S3"], "batch_id": [None, None, "B1"]})
    g = add_duplicates(from_metadata(meta), pd.DataFrame({"id1": ["S2"], "id2": ["S1"]}))
    p = derive(g, "composite", strategy="rule_based", priority=["duplicate", "batch"])
    assert p.groups() == {"S1": "composite_duplicate:S1", "S2": "composite_duplicate:S1", "S3": "composite_batch:B1"}


def test_time_order_from_precedence_edges_when_no_time_index():
    meta = pd.DataFrame({"sample_id": ["a", "b", "c"], "timepoint_id": ["late", "early", "mid"]})
    g = from_metadata(meta)
    g = add_relations(g, pd.DataFrame({"source": ["early", "mid"], "target": ["mid", "late"]}), "timepoint_precedes")
    p = derive(g, "time")
    assert dict(zip(p.samples["sample_id"], p.samples["order_rank"].astype(int), strict=True)) == {
        "a": 3,
        "b": 1,
        "c": 2,
    }
    assert p.relations == ("sample_collected_at_timepoint",) and p.parameters == {"time_order": "timepoint_precedes"}


def test_time_order_unavailable_is_reported():
    g = from_metadata(pd.DataFrame({"sample_id": ["a", "b"], "timepoint_id": ["x", "y"]}))
    p = derive(g, "time")
    assert p.samples["order_rank"].isna().all()
    assert "time_order_unavailable" in [w.code for w in p.warnings]


def test_min_groups_refuses_a_partition_too_coarse(graph):
    with pytest.raises(DepgraphError) as err:
        derive(graph, "relatedness", min_groups=4)
    assert err.value.code == "too_few_groups" and "3 group(s)" in err.value.message
    assert derive(graph, "relatedness", min_groups=3).n_groups == 3


def test_dominant_group_is_reported():
    g = from_metadata(pd.DataFrame({"sample_id": list("abcd"), "study_id": ["X", "X", "X", "Y"]}))
    assert "dominant_group" in [w.code for w in derive(g, "study").warnings]


@pytest.mark.parametrize(
    "kwargs",
    [
        {"mode": "family"},
        {"mode": "subject", "strategy": "strict"},
        {"mode": "composite", "strategy": "loose"},
        {"mode": "composite", "via": ["subject"], "priority": ["batch"], "strategy": "rule_based"},
        {"mode": "composite", "via": ["kinship"]},
        {"mode": "composite", "strategy": "strict", "priority": ["subject"]},
    ],
)
def test_bad_arguments_are_invalid(graph, kwargs):
    mode = kwargs.pop("mode")
    with pytest.raises(DepgraphError) as err:
        derive(graph, mode, **kwargs)
    assert err.value.code == "invalid_argument"


def test_summary_and_codes(graph):
    p = derive(graph, "relatedness")
    assert p.summary() == {
        "n_samples": 10,
        "n_groups": 3,
        "largest_group": "relatedness:P1-T0",
        "largest_group_size": 4,
        "singletons": 0,
    }
    assert sorted(set(p.group_codes().tolist())) == [0, 1, 2]
    assert repr(p) == "Partition(relatedness: 10 samples in 3 groups)"


@settings(max_examples=60, deadline=None)
@given(
    subjects=st.lists(st.integers(0, 7), min_size=2, max_size=24),
    batches=st.data(),
    kin=st.lists(st.tuples(st.integers(0, 7), st.integers(0, 7)), max_size=6),
)
def test_composite_is_the_same_whether_parts_were_derived_before(subjects, batches, kin):
    """Composite components may start from relatedness labels found earlier (and stop once
    all samples are one group); the groups must equal those of a fresh graph."""
    n = len(subjects)
    meta = pd.DataFrame(
        {
            "sample_id": [f"S{i}" for i in range(n)],
            "subject_id": [f"P{s}" for s in subjects],
            "batch_id": [f"B{b}" for b in batches.draw(st.lists(st.integers(0, 4), min_size=n, max_size=n))],
            "site_id": [f"X{b}" for b in batches.draw(st.lists(st.integers(0, 3), min_size=n, max_size=n))],
        }
    )
    pairs = [(f"P{a}", f"P{b}") for a, b in kin if a != b and a in subjects and b in subjects]
    kinship = pd.DataFrame({"id1": [a for a, _ in pairs], "id2": [b for _, b in pairs], "kinship": 0.25})

    def fresh():
        g = from_metadata(meta)
        return add_kinship(g, kinship, 0.1) if pairs else g

    def partition(p):  # groups as sets of samples, whatever their labels
        return sorted(sorted(members) for members in p.samples.groupby("group_id")["sample_id"].agg(list))

    warmed = fresh()
    every = {"allow_single_group": True}  # one group may be the true answer here
    for mode, options in (("relatedness", {}), ("batch", {}), ("composite", every)):  # codes = group ids
        p = derive(warmed, mode, **options)
        assert p.shape == group_shape(p.group_ids)
    assert partition(derive(warmed, "composite", **every)) == partition(derive(fresh(), "composite", **every))
    assert derive(warmed, "composite", **every).groups() == derive(fresh(), "composite", **every).groups()


# --------------------------------------------------------------------------- nothing linked, everything merged
def test_a_mode_that_links_nothing_is_refused_by_name():
    g = from_metadata(pd.DataFrame({"sample_id": ["S1", "S2", "S3"], "batch_id": ["B1", "B1", "B2"]}))
    with pytest.raises(DepgraphError) as err:
        derive(g, "subject")
    assert err.value.code == "no_relation"
    assert err.value.message.startswith("mode 'subject' needs sample_belongs_to_subject edges; the graph has none")
    assert "--column subject_id=COL" in err.value.message and err.value.details["missing"] == [
        "sample_belongs_to_subject"
    ]
    p = derive(g, "subject", allow_unlinked=True)  # accepted on request: every sample alone, and said so
    assert p.groups() == {"S1": "subject:unlinked:S1", "S2": "subject:unlinked:S2", "S3": "subject:unlinked:S3"}
    assert [w.code for w in p.warnings] == ["unlinked_samples"]


def test_some_samples_unlinked_stays_a_warning():
    g = from_metadata(pd.DataFrame({"sample_id": ["S1", "S2", "S3"], "subject_id": ["P1", None, None]}))
    p = derive(g, "subject")
    assert p.groups()["S1"] == "subject:P1" and [w.code for w in p.warnings] == ["unlinked_samples"]
    assert derive(g, "relatedness").n_groups == 3  # subjects link S1: not refused, only the missing kinship is said
    assert "no_relation_edges" in [w.code for w in derive(g, "relatedness").warnings]


def test_a_subset_is_refused_only_when_none_of_its_samples_carries_the_relation():
    g = from_metadata(pd.DataFrame({"sample_id": ["S1", "S2", "S3", "S4"], "subject_id": ["P1", "P1", None, None]}))
    g = add_duplicates(g, pd.DataFrame({"id1": ["S1"], "id2": ["S2"]}))
    with pytest.raises(DepgraphError) as err:
        derive(g, "subject", samples=["S3", "S4"])
    assert err.value.code == "no_relation" and "none of the 2 samples derived" in err.value.message
    # S1's duplicate S2 is left out: S1 carries the relation, the induced subgraph truly leaves it alone
    assert derive(g, "duplicate", samples=["S1", "S3"]).groups() == {"S1": "duplicate:S1", "S3": "duplicate:S3"}
    with pytest.raises(DepgraphError):
        derive(g, "duplicate", samples=["S3", "S4"])


def test_spatial_coordinates_whose_radius_links_nobody():
    g = from_metadata(pd.DataFrame({"sample_id": ["S1", "S2"]}))
    g = add_spatial(g, pd.DataFrame({"sample_id": ["S1", "S2"], "x": [0.0, 5.0], "y": [0.0, 0.0]}), 1.0)
    with pytest.raises(DepgraphError) as err:
        derive(g, "spatial")
    assert err.value.code == "no_relation" and "radius 1.0: widen --radius" in err.value.message
    assert derive(add_spatial(g, pd.DataFrame({"sample_id": ["S1", "S2"], "x": [0.0, 5.0], "y": 0.0}), 5.0),
                  "spatial").n_groups == 1  # fmt: skip


def test_a_default_composite_in_one_group_names_the_modes_that_merge_everything(graph):
    with pytest.raises(DepgraphError) as err:
        derive(graph, "composite")  # no single mode links all ten samples: together they do
    assert err.value.code == "too_few_groups" and "together" in err.value.message
    one_batch = from_metadata(
        pd.DataFrame({"sample_id": ["S1", "S2", "S3"], "subject_id": ["P1", "P2", "P3"], "batch_id": "B1"})
    )
    with pytest.raises(DepgraphError) as err:
        derive(one_batch, "composite")
    assert "batch alone links every sample (sample_processed_in_batch)" in err.value.message
    assert "--via subject" in err.value.message and err.value.details["modes"] == ["batch"]
    assert derive(one_batch, "composite", via=["subject", "batch"]).n_groups == 1  # chosen: a warning only
    assert derive(one_batch, "composite", via=["subject"]).n_groups == 3


@examples(60)
@given(cohorts())
def test_refused_exactly_when_no_sample_carries_the_relation(c):
    g = build(c)
    carries = {m: any(t is not None for t in c.target_of(m).values()) for m in DIRECT_MODES}
    carries["relatedness"] = carries["subject"]
    carries["spatial"] = bool(spatial_edges(c))
    carries["duplicate"] = bool(c.dup_pairs)
    for mode in (*DIRECT_MODES, *COMPONENT_MODES):
        try:
            derive(g, mode)
            refused = None
        except DepgraphError as exc:
            refused = exc.code
        assert refused == (None if carries[mode] else "no_relation"), mode
        alone = derive(g, mode, allow_unlinked=True)
        if not carries[mode]:
            assert alone.n_groups == alone.n_samples, mode
    # a default composite: no relation at all is no_relation; one group over two or more samples is refused
    modes = present_modes(c)
    components = list(nx.connected_components(reference_graph(c, modes)))
    samples_per_component = [sum(1 for kind, _ in comp if kind == "sample") for comp in components]
    one_group = len(c.samples) > 1 and max(samples_per_component) == len(c.samples)
    expected = "no_relation" if not modes else ("too_few_groups" if one_group else None)
    try:
        derive(g, "composite")
        refused = None
    except DepgraphError as exc:
        refused = exc.code
    assert refused == expected
    if modes:
        groups = sum(1 for n in samples_per_component if n)  # components holding a sample
        assert derive(g, "composite", allow_single_group=True).n_groups == groups


def test_an_option_of_another_engine_is_refused_on_one_machine():
    graph = from_metadata(pd.DataFrame({"sample_id": ["S1", "S2"], "subject_id": ["P1", "P2"]}))
    with pytest.raises(DepgraphError) as err:
        derive(graph, "subject", hub_degree=10)
    assert err.value.code == "invalid_argument" and "derive on one machine takes no hub_degree" in err.value.message


def test_a_graph_of_another_engine_is_derived_there_from_the_same_checked_request(monkeypatch):
    """depgraph.derive checks the request once, then hands it to the engine the graph names."""
    import types

    import depgraph.engines as engines

    seen = []
    fake = types.ModuleType("fake_engine")
    fake.derive_request = lambda graph, request, samples, **options: seen.append((request, samples, options)) or "ok"
    monkeypatch.setitem(engines.ENGINES, "fake", {"derive": "fake_engine"})
    monkeypatch.setitem(sys.modules, "fake_engine", fake)

    class FakeGraph:
        __depgraph_engine__ = "fake"

    assert derive(FakeGraph(), "Subject", min_groups=2, knob=3) == "ok"
    (request, samples, options) = seen[0]
    assert (request.mode, request.min_groups, samples, options) == ("subject", 2, None, {"knob": 3})
    with pytest.raises(DepgraphError) as err:  # checked before any engine runs
        derive(FakeGraph(), "no-such-mode")
    assert err.value.code == "invalid_argument" and len(seen) == 1
    with pytest.raises(DepgraphError) as err:
        engines.stage("fake", "folds")
    assert err.value.code == "engine" and "the fake engine has no folds stage" in err.value.message
