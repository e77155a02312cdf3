"""StudyGraph: columnar, immutable, order-independent; builders and views."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pyarrow as pa
import pytest
import scipy.sparse as sp
from hypothesis import given, settings
from hypothesis import strategies as st

from depgraph import (
    DepgraphError,
    add_duplicates,
    add_kinship,
    add_relations,
    add_spatial,
    combine,
    from_metadata,
    read_graph,
    write_graph,
)
from depgraph.graph.files import graph_bytes, graph_from_document
from depgraph.vocab import NodeType


def test_nodes_are_sorted_by_type_then_key_whatever_the_row_order(family_meta):
    shuffled = family_meta.sample(frac=1, random_state=3)
    a, b = from_metadata(family_meta), from_metadata(shuffled)
    assert a.nodes.equals(b.nodes) and a.edges.equals(b.edges)
    types = a.nodes["type"].cat.codes.to_numpy()
    assert (np.diff(types) >= 0).all()
    for t in (NodeType.SAMPLE, NodeType.SUBJECT):
        keys = a.keys(t).tolist()
        assert keys == sorted(keys)


def test_type_ranges_and_lookups(family_meta):
    g = from_metadata(family_meta)
    start, stop = g.type_range("Subject")
    assert stop - start == 5 == g.count(NodeType.SUBJECT)
    assert g.locate(NodeType.SUBJECT, ["P2", "nope"]).tolist() == [start + 1, -1]
    assert g.node_ids.iloc[start] == "subject:P1"


def test_builders_return_new_graphs_and_leave_the_original(family_meta, family_kinship):
    g = from_metadata(family_meta)
    before = graph_bytes(g)
    g2 = add_kinship(g, family_kinship, 0.2)
    assert g2 is not g and g2.relation_counts()["subject_related_to"] == 2
    assert graph_bytes(g) == before and not g.has_relation("subject_related_to")


def test_kinship_threshold_is_inclusive_and_recorded(family_meta):
    pairs = pd.DataFrame({"id1": ["P1", "P3"], "id2": ["P2", "P4"], "kinship": [0.177, 0.1769]})
    g = add_kinship(from_metadata(family_meta), pairs, "first")
    src, _dst, weight = g.relation_edges("subject_related_to")
    assert g.nodes["key"].to_numpy()[src].tolist() == ["P1"] and weight.tolist() == [0.177]
    step = g.history[-1]
    assert step["threshold"] == 0.177 and step["threshold_name"] == "first" and step["inclusive"]
    assert step["pairs_in"] == 2 and step["pairs_kept"] == 1


def test_kinship_pair_given_twice_keeps_the_larger_value(family_meta):
    pairs = pd.DataFrame({"id1": ["P1", "P2"], "id2": ["P2", "P1"], "kinship": [0.2, 0.3]})
    g = add_kinship(from_metadata(family_meta), pairs, 0.1)
    _, _, weight = g.relation_edges("subject_related_to")
    assert weight.tolist() == [0.3]


def test_dense_and_sparse_matrices_give_the_pairs_of_a_pair_table(family_meta):
    ids = ["P1", "P2", "P3", "P4", "P5"]
    dense = np.zeros((5, 5))
    np.fill_diagonal(dense, 0.5)
    dense[0, 1] = dense[1, 0] = 0.25
    dense[2, 3] = dense[3, 2] = 0.1
    dense[0, 4] = dense[4, 0] = 0.05
    g = from_metadata(family_meta)
    from_pairs = add_kinship(
        g, pd.DataFrame({"id1": ["P1", "P3", "P1"], "id2": ["P2", "P4", "P5"], "kinship": [0.25, 0.1, 0.05]}), 0.1
    )
    from_dense = add_kinship(g, dense, 0.1, ids=ids)
    from_sparse = add_kinship(g, sp.csr_matrix(dense), 0.1, ids=ids)
    for other in (from_dense, from_sparse):
        assert other.edges.drop(columns="provenance").equals(from_pairs.edges.drop(columns="provenance"))
    assert from_sparse.history[-1]["source"] == "sparse matrix"


def test_sparse_matrix_refuses_a_zero_threshold(family_meta):
    with pytest.raises(DepgraphError) as err:
        add_kinship(from_metadata(family_meta), sp.csr_matrix((5, 5)), 0, ids=["P1", "P2", "P3", "P4", "P5"])
    assert err.value.code == "invalid_argument"


def test_matrix_shape_must_match_ids(family_meta):
    with pytest.raises(DepgraphError) as err:
        add_kinship(from_metadata(family_meta), np.zeros((3, 3)), 0.1, ids=["P1", "P2"])
    assert err.value.code == "schema"


def test_spatial_radius_is_inclusive_and_weights_are_distances():
    meta = pd.DataFrame({"sample_id": ["A", "B", "C", "D"]})
    coords = pd.DataFrame(
        {
            "sample_id": ["A", "B", "C", "D"],
            "x": [0.0, 3.0, 3.0, 10.0],
            "y": [0.0, 4.0, 0.0, 0.0],
            "z": [0.0, 0.0, 0.0, 0.0],
        }
    )
    g = add_spatial(from_metadata(meta), coords, 5.0)  # A-B exactly 5 apart
    src, dst, weight = g.relation_edges("sample_adjacent_to")
    keys = g.nodes["key"].to_numpy()
    pairs = dict(zip(zip(keys[src], keys[dst], strict=True), weight.tolist(), strict=True))
    assert pairs == {("A", "B"): 5.0, ("A", "C"): 3.0, ("B", "C"): 4.0}
    assert g.history[-1]["dimensions"] == 3 and g.history[-1]["radius"] == 5.0


def test_duplicates_and_explicit_relations():
    meta = pd.DataFrame({"sample_id": ["S1", "S2", "S3"], "featureset_id": ["F1", "F1", "F2"], "study_id": "ST1"})
    g = add_duplicates(from_metadata(meta), pd.DataFrame({"id1": ["S3"], "id2": ["S1"]}))
    src, dst, _ = g.relation_edges("sample_duplicate_of")
    assert g.nodes["key"].to_numpy()[[src[0], dst[0]]].tolist() == ["S1", "S3"]  # stored once, src < dst
    g = add_relations(g, pd.DataFrame({"source": ["F1"], "target": ["ST1"]}), "featureset_generated_from_study")
    assert g.relation_counts()["featureset_generated_from_study"] == 1
    with pytest.raises(DepgraphError) as err:
        add_relations(g, pd.DataFrame({"source": ["ST1"], "target": ["F1"]}), "featureset_generated_from_study")
    assert err.value.code == "reference"


def test_combine_merges_overlapping_declarations(family_meta, family_kinship):
    left = add_kinship(from_metadata(family_meta.iloc[:6]), family_kinship.iloc[:1], 0.1)
    right = from_metadata(family_meta.iloc[4:])
    merged = combine(left, right)
    whole = add_kinship(from_metadata(family_meta), family_kinship.iloc[:1], 0.1)
    assert merged.nodes.equals(whole.nodes)
    assert merged.edges.drop(columns="provenance").equals(whole.edges.drop(columns="provenance"))
    assert merged.history[-1] == {"step": "combine", "graphs": 2}


def test_combine_names_conflicting_declarations():
    a = from_metadata(pd.DataFrame({"sample_id": ["S1"], "subject_id": ["P1"]}))
    b = from_metadata(pd.DataFrame({"sample_id": ["S1"], "subject_id": ["P2"]}))
    with pytest.raises(DepgraphError) as err:
        combine(a, b)
    assert err.value.code == "ambiguity" and "S1" in err.value.message
    assert combine(a.with_overrides(allow_multi_subject_samples=True), b).relation_counts() == {
        "sample_belongs_to_subject": 2
    }
    c = from_metadata(pd.DataFrame({"sample_id": ["S9"], "timepoint_id": ["T1"], "time_index": [1]}))
    d = from_metadata(pd.DataFrame({"sample_id": ["S8"], "timepoint_id": ["T1"], "time_index": [2]}))
    with pytest.raises(DepgraphError) as err:
        combine(c, d)
    assert err.value.code == "ambiguity" and "T1" in err.value.message and "time_index" in err.value.message


def test_unknown_override_is_refused():
    g = from_metadata(pd.DataFrame({"sample_id": ["S1"]}))
    with pytest.raises(DepgraphError) as err:
        g.with_overrides(allow_everything=True)
    assert err.value.code == "invalid_argument"


def test_to_networkx_carries_types_attributes_and_relations(family_meta, family_kinship):
    g = add_kinship(from_metadata(family_meta), family_kinship, 0.2)
    nxg = g.to_networkx()
    assert nxg.number_of_nodes() == g.n_nodes and nxg.number_of_edges() == g.n_edges
    assert nxg.nodes["timepoint:T1"] == {"type": "Timepoint", "key": "T1", "time_index": 1.0}
    data = nxg.get_edge_data("subject:P1", "subject:P2")["subject_related_to"]
    assert data["weight"] == 0.25 and data["directed"] is False and data["provenance"] == "kinship:pairs"


def test_json_round_trip_is_exact(tmp_path, family_meta, family_kinship):
    g = from_metadata(family_meta.assign(sex=["f", "f", "m", "m", "f", "f", "m", "m", "f", "f"]), name="fam")
    g = add_kinship(g, family_kinship, 0.2).with_overrides(allow_multi_subject_samples=True)
    write_graph(g, tmp_path / "g.json")
    back = read_graph(tmp_path / "g.json")
    assert back.equals(g)
    assert graph_bytes(back) == graph_bytes(g)
    assert list(tmp_path.iterdir()) == [tmp_path / "g.json"]  # no temporary left behind


def test_repr_names_counts(family_meta):
    text = repr(from_metadata(family_meta, name="fam"))
    assert text.startswith("StudyGraph('fam', 20 nodes: 10 Sample, 5 Subject, 3 Batch, 2 Timepoint")


def test_empty_graph_shapes():
    g = graph_from_document({"format": "depgraph.study-graph", "format_version": "1.0.0", "nodes": {}})
    assert g.n_nodes == 0 and g.n_edges == 0 and g.type_counts() == {}


@settings(max_examples=100, deadline=None)
@given(
    st.lists(st.text(alphabet="abAB01 -é", min_size=1, max_size=10), min_size=1, max_size=20, unique=True),
    st.lists(st.text(alphabet="abAB01 -é", min_size=0, max_size=10), max_size=20),
)
def test_locate_finds_exactly_the_declared_keys(samples, queries):
    """Binary search over packed keys (short ASCII) and Arrow matching (the rest) agree with a dict."""
    samples = [s for s in samples if s.strip() == s and s]
    if not samples:
        return
    g = from_metadata(pd.DataFrame({"sample_id": samples}))
    position = {k: i for i, k in enumerate(g.sample_ids.tolist())}
    wanted = samples + queries
    for keys in (wanted, pa.array(wanted, type=pa.string())):
        assert g.locate("Sample", keys).tolist() == [position.get(k, -1) for k in wanted]
