"""splitGraph JSON both ways, against the files splitGraph 0.2.0 wrote (read in place)."""

from __future__ import annotations

import hashlib
import json
import warnings

import orjson
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from depgraph import DepgraphError, DepgraphWarning, add_kinship, derive, from_metadata
from depgraph.adapters.splitgraph import (
    SplitGraphWarning,
    from_splitgraph,
    graph_from_splitgraph,
    graph_to_splitgraph,
    read_splitgraph,
    spec_from_splitgraph,
    spec_left_out,
    spec_to_splitgraph,
    write_splitgraph_graph,
    write_splitgraph_spec,
)
from depgraph.folds.schemes import assign_folds
from depgraph.spec.files import read_spec, write_spec
from depgraph.spec.model import SplitSpec
from depgraph.spec.privacy import pseudonymize
from tests.conftest import CONFORMANCE, as_partition, case_metadata, load_case

SG = CONFORMANCE / "splitgraph_json"
SPEC_FILES = sorted(SG.glob("spec_*.json"))
# how each file was derived in splitGraph (its metadata says: mode, strategy, relations)
DERIVATIONS = {
    "spec_subject.json": {"mode": "subject"},
    "spec_batch.json": {"mode": "batch"},
    "spec_time.json": {"mode": "time"},
    "spec_composite_strict.json": {"mode": "composite", "strategy": "strict", "via": ["subject", "batch"]},
    "spec_composite_rule_based.json": {
        "mode": "composite", "strategy": "rule_based", "priority": ["batch", "study", "subject"]
    },
}  # fmt: skip


@pytest.fixture(scope="module")
def five():
    return from_metadata(case_metadata(load_case(CONFORMANCE / "five_samples_mixed.json")), name="five_samples_mixed")


def _unbox(value):
    return value if isinstance(value, list) else [value]


@pytest.mark.parametrize("path", SPEC_FILES, ids=lambda p: p.name)
def test_every_splitgraph_spec_reads(path):
    spec = read_splitgraph(path)
    ref = json.loads(path.read_text())
    assert isinstance(spec, SplitSpec)
    assert spec.groups() == {r["sample_id"]: r["group_id"] for r in ref["sample_data"]}
    assert spec.constraint.mode == ref["constraint_mode"]
    assert spec.recommended_resampling == ref["recommended_resampling"]
    assert spec.digest == spec.compute_digest()


@pytest.mark.parametrize("path", SPEC_FILES, ids=lambda p: p.name)
def test_what_we_export_is_what_splitgraph_wrote(path, five):
    ref = json.loads(path.read_text())
    kwargs = dict(DERIVATIONS[path.name])
    ours = spec_to_splitgraph(SplitSpec.from_partition(derive(five, kwargs.pop("mode"), **kwargs), five))
    for key, value in ref.items():
        if key not in ("metadata", "sample_data"):
            assert ours[key] == value, key
    for key, value in ref["metadata"].items():
        if key == "warnings":  # depgraph may add findings splitGraph lacks, never drop one
            assert set(_unbox(value)) <= set(_unbox(ours["metadata"]["warnings"]))
        else:
            assert ours["metadata"][key] == value, key
    assert ours["sample_data"] == ref["sample_data"]


@pytest.mark.parametrize("path", SPEC_FILES, ids=lambda p: p.name)
def test_splitgraph_to_depgraph_to_splitgraph_keeps_every_group(tmp_path, path):
    ref = json.loads(path.read_text())
    spec = spec_from_splitgraph(ref)
    write_spec(spec, tmp_path / "ours.json")  # through a depgraph file too
    back = spec_to_splitgraph(read_spec(tmp_path / "ours.json"))
    assert [r["group_id"] for r in back["sample_data"]] == [r["group_id"] for r in ref["sample_data"]]
    assert [r["sample_id"] for r in back["sample_data"]] == [r["sample_id"] for r in ref["sample_data"]]
    assert back["constraint_strategy"] == ref["constraint_strategy"]


def test_component_labels_become_positional_on_export(five):
    spec = SplitSpec.from_partition(derive(five, "composite", via=["subject", "batch"]), five)
    assert spec.groups()["S4"] == "composite:S4"
    rows = spec_to_splitgraph(spec)["sample_data"]
    assert [r["group_id"] for r in rows] == ["component_1"] * 3 + ["component_2", "component_3"]


def test_relatedness_labels_keep_their_mode_prefix():
    meta = pd.DataFrame({"sample_id": ["S2", "S1", "S3"], "subject_id": ["P2", "P1", "P3"]})
    g = add_kinship(from_metadata(meta), pd.DataFrame({"id1": ["P3"], "id2": ["P2"], "kinship": [0.3]}), 0.2)
    rows = spec_to_splitgraph(SplitSpec.from_partition(derive(g, "relatedness"), g))["sample_data"]
    assert [(r["sample_id"], r["group_id"]) for r in rows] == [
        ("S1", "relatedness:component_1"), ("S2", "relatedness:component_2"), ("S3", "relatedness:component_2")
    ]  # fmt: skip


def test_graph_export_is_what_splitgraph_wrote(five):
    ref = json.loads((SG / "graph.json").read_text())
    doc, left_out = graph_to_splitgraph(five)
    assert left_out == []
    assert doc["nodes"] == ref["nodes"] and doc["edges"] == ref["edges"]
    assert {k: v for k, v in doc["metadata"].items() if k != "created_at"} == {
        k: v for k, v in ref["metadata"].items() if k != "created_at"
    }


def test_graph_import_round_trips(five):
    ref = json.loads((SG / "graph.json").read_text())
    imported = graph_from_splitgraph(ref)
    assert imported.nodes.equals(five.nodes)
    assert imported.edges.drop(columns="provenance").equals(five.edges.drop(columns="provenance"))
    assert derive(imported, "time").groups() == derive(five, "time").groups()
    again, _ = graph_to_splitgraph(imported)
    assert again["nodes"] == ref["nodes"] and again["edges"] == ref["edges"]


def test_export_for_splitgraph_0_2_leaves_out_what_it_cannot_read(tmp_path):
    meta = pd.DataFrame({"sample_id": ["S1", "S2"], "subject_id": ["P1", "P2"], "site_id": ["A", "B"]})
    g = add_kinship(from_metadata(meta), pd.DataFrame({"id1": ["P1"], "id2": ["P2"], "kinship": [0.25]}), 0.1)
    full, notes = graph_to_splitgraph(g, "0.4.0")  # the development version: every node and edge
    assert notes == [] and {n["node_type"] for n in full["nodes"]} == {"Sample", "Subject", "Site"}
    kin = [e for e in full["edges"] if e["edge_type"] == "subject_related_to"]
    (edge,) = kin
    assert edge == {
        "edge_id": "subject_related_to:1", "from": "subject:P1", "to": "subject:P2",
        "edge_type": "subject_related_to", "attrs": {"provenance": "kinship:pairs", "weight": 0.25},
    }  # fmt: skip
    with pytest.warns(SplitGraphWarning) as told:
        notes = write_splitgraph_graph(g, tmp_path / "old.json", splitgraph_version="0.2.0")
    old = orjson.loads((tmp_path / "old.json").read_bytes())
    assert notes == ["2 Site node(s)", "2 sample_collected_at_site edge(s)", "1 subject_related_to edge(s)"]
    (warning,) = told  # what is left out is told, not only returned
    assert warning.message.code == "splitgraph_export_drops" and warning.filename == __file__
    assert str(warning.message) == (
        "splitGraph 0.2.0's dependency_graph cannot hold 2 Site node(s); 2 sample_collected_at_site edge(s); "
        "1 subject_related_to edge(s): left out"
    )
    assert {n["node_type"] for n in old["nodes"]} == {"Sample", "Subject"}
    assert all("site_id" not in n["attrs"] for n in old["nodes"])


def test_spec_export_says_what_splitgraph_cannot_hold(tmp_path):
    meta = pd.DataFrame({"sample_id": [f"S{i}" for i in range(6)], "subject_id": ["P1", "P1", "P2", "P3", "P4", "P5"],
                         "sex": ["f", "f", "m", "f", "m", "m"]})  # fmt: skip
    g = from_metadata(meta)
    plain = SplitSpec.from_partition(derive(g, "subject"), g)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # a spec splitGraph holds whole is written without a word
        assert spec_to_splitgraph(plain)["sample_data"]
    rich = assign_folds(SplitSpec.from_partition(derive(g, "subject"), g, attributes=["sex"]), "group-kfold",
                        n_splits=3)  # fmt: skip
    rich = pseudonymize(rich, hashlib.sha256(b"pseudonyms").digest()).signed(hashlib.sha256(b"signing").digest())
    with pytest.warns(SplitGraphWarning) as told:
        write_splitgraph_spec(rich, tmp_path / "sg.json")
    (warning,) = told
    assert warning.message.code == "splitgraph_export_drops" and warning.filename == __file__
    message = str(warning.message)
    assert message.startswith("splitGraph's split_spec cannot hold the folds (3 split(s) of group-kfold); ")
    assert "; sample column(s) sex; " in message and message.endswith(": left out")
    assert f"the signature (key fingerprint {rich.signature.key_fingerprint})" in message
    assert "the pseudonymisation record (the ids stay pseudonyms" in message
    assert warning.message.details["left_out"] == spec_left_out(rich) and len(spec_left_out(rich)) == 4
    written = orjson.loads((tmp_path / "sg.json").read_bytes())
    assert "folds" not in written and all("sex" not in row for row in written["sample_data"])
    assert "signature" not in json.dumps(written) and "pseudonym" not in json.dumps(written)


@pytest.mark.parametrize(
    "doc,fragment",
    [
        ({"splitGraph_object": "banana"}, "splitGraph_object"),
        ({"splitGraph_object": "split_spec", "sample_data": []}, "sample_data"),
        ({"splitGraph_object": "split_spec", "sample_data": [{"group_id": "g"}]}, "sample_id"),
        ({"splitGraph_object": "dependency_graph", "nodes": [{"node_id": "x:1", "node_type": "Gene"}]}, "nodes[0]"),
    ],
)
def test_bad_splitgraph_documents(tmp_path, doc, fragment):
    path = tmp_path / "bad.json"
    path.write_text(json.dumps(doc))
    with warnings.catch_warnings(record=True) as told, pytest.raises(DepgraphError) as err:
        warnings.simplefilter("always")
        read_splitgraph(path)
    assert err.value.code == "schema" and fragment in err.value.message
    # a file of a known kind without schema_version is read as 0.1.0, with splitGraph's warning, before the refusal
    codes = [w.message.code for w in told if isinstance(w.message, SplitGraphWarning)]
    assert codes == ([] if doc["splitGraph_object"] == "banana" else ["splitgraph_schema_version"])


def test_partitions_survive_a_trip_through_splitgraph_for_every_case():
    for name in ("random_2026_1.json", "cross_study_subject.json"):
        graph = from_metadata(case_metadata(load_case(CONFORMANCE / name)))
        for mode in ("subject", "batch", "time", "composite"):
            every = {"allow_single_group": True} if mode == "composite" else {}  # one group is a fine trip too
            spec = SplitSpec.from_partition(derive(graph, mode, **every), graph)
            back = spec_from_splitgraph(spec_to_splitgraph(spec))
            assert as_partition(back.groups()) == as_partition(spec.groups())


# --------------------------------------------------------------------------- node ids, and only coded errors
_ids = st.text(alphabet="abcXYZ019:_-", min_size=1, max_size=6)


@settings(max_examples=60, deadline=None)
@given(
    samples=st.lists(_ids, min_size=1, max_size=8, unique=True),
    subjects=st.lists(_ids, min_size=1, max_size=4, unique=True),
    data=st.data(),
)
def test_edges_link_the_nodes_their_ids_name(samples, subjects, data):
    # any node ids (with or without ':', equal to other nodes' keys or not): groups follow node_id, never a cut at ':'
    sample_ids = data.draw(st.lists(_ids, min_size=len(samples), max_size=len(samples), unique=True))
    subject_ids = data.draw(
        st.lists(
            _ids.filter(lambda i: i not in sample_ids), min_size=len(subjects), max_size=len(subjects), unique=True
        )
    )
    subject_of = {s: data.draw(st.sampled_from(subjects)) for s in samples}
    nodes = [
        {"node_id": i, "node_type": "Sample", "node_key": k, "attrs": {}}
        for i, k in zip(sample_ids, samples, strict=True)
    ]
    nodes += [
        {"node_id": i, "node_type": "Subject", "node_key": k, "attrs": []}
        for i, k in zip(subject_ids, subjects, strict=True)
    ]
    id_of_sample, id_of_subject = (
        dict(zip(samples, sample_ids, strict=True)),
        dict(zip(subjects, subject_ids, strict=True)),
    )
    edges = [
        {"from": id_of_sample[s], "to": id_of_subject[p], "edge_type": "sample_belongs_to_subject"}
        for s, p in subject_of.items()
    ]
    doc = {"splitGraph_object": "dependency_graph", "schema_version": "0.1.0", "nodes": nodes, "edges": edges}
    assert derive(graph_from_splitgraph(doc), "subject").groups() == {s: f"subject:{p}" for s, p in subject_of.items()}


_json = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(-3, 3)
    | st.floats(-2, 2)
    | st.sampled_from(["", "x", "false", "sample:S1"]),
    lambda inner: (
        st.lists(inner, max_size=2) | st.dictionaries(st.sampled_from(["a", "time_index"]), inner, max_size=2)
    ),
    max_leaves=4,
)


def _paths(value, path=()):
    yield path
    if isinstance(value, dict):
        for k, v in value.items():
            yield from _paths(v, (*path, k))
    elif isinstance(value, list):
        for i, v in enumerate(value):
            yield from _paths(v, (*path, i))


@settings(max_examples=300, deadline=None)
@given(st.sampled_from(["graph.json", "spec_time.json", "spec_composite_strict.json"]), st.data())
def test_a_changed_splitgraph_file_is_read_or_refused_with_a_code(name, data):
    doc = json.loads((SG / name).read_text())
    where = data.draw(st.sampled_from([p for p in _paths(doc) if p]))
    new = data.draw(_json)
    parent = doc
    for step in where[:-1]:
        parent = parent[step]
    if data.draw(st.booleans()) and isinstance(parent, dict):
        del parent[where[-1]]
    else:
        parent[where[-1]] = new
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", DepgraphWarning)
            from_splitgraph(doc, "fuzzed.json")
    except DepgraphError as exc:
        assert "\n" not in exc.message


def test_a_hand_made_recommendation_is_kept_as_the_files_and_told(tmp_path):
    """splitGraph's split_spec(recommended_resampling = ...) takes any plan; depgraph's specs recommend their mode's
    (a reader refuses one that says otherwise), so the import keeps the file's beside it, with a warning."""
    doc = json.loads((SG / "spec_subject.json").read_text())
    doc["recommended_resampling"] = "leave_one_group_out"
    path = tmp_path / "hand_made.json"
    path.write_text(json.dumps(doc))
    with pytest.warns(SplitGraphWarning, match="recommended_resampling is 'leave_one_group_out'") as told:
        spec = read_splitgraph(path)
    assert [w.message.code for w in told] == ["splitgraph_recommendation"]
    assert spec.recommended_resampling == "grouped_cv"
    assert spec.constraint.parameters["splitgraph"]["recommended_resampling"] == "leave_one_group_out"
    assert [w.code for w in spec.warnings] == ["splitgraph_recommendation"]
    written = tmp_path / "spec.json"
    write_spec(spec, written)
    assert read_spec(written).warnings == spec.warnings  # the warning is one a reader knows


def test_an_integer_attribute_beyond_64_bits_is_refused_by_name():
    """An attribute no column holds exactly (10**20) is refused naming the node and the attribute, not an
    OverflowError from Arrow."""
    nodes = [{"node_id": "sample:S1", "node_type": "Sample", "node_key": "S1", "attrs": {"age": 10**20}},
             {"node_id": "sample:S2", "node_type": "Sample", "node_key": "S2", "attrs": {"age": 3}}]  # fmt: skip
    doc = {"splitGraph_object": "dependency_graph", "schema_version": "0.1.0", "nodes": nodes, "edges": []}
    with pytest.raises(DepgraphError) as err:
        from_splitgraph(doc)
    assert err.value.code == "invalid_value" and "attrs.age" in err.value.message and "S1" in err.value.message
