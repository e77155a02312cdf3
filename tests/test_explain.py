"""``depgraph why``: the chains joining two nodes are shortest, real and complete, checked against networkx's
paths over the graph's own networkx view; bad input refused by name; the command end to end."""

from __future__ import annotations

import itertools
from pathlib import Path

import networkx as nx
import orjson
import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from depgraph import (
    SplitSpec,
    add_duplicates,
    add_kinship,
    add_spatial,
    derive,
    from_metadata,
    write_graph,
    write_spec,
)
from depgraph.cli.main import main
from depgraph.errors import DepgraphError
from depgraph.explanation.compare import compare
from depgraph.explanation.groups import explain
from depgraph.explanation.paths import why
from depgraph.explanation.queries import edges_of, neighbors, nodes_of
from depgraph.vocab import COMBINABLE_MODES, relation_names


@st.composite
def cohorts(draw):
    """Samples of subjects in batches, kinship between some subjects, duplicates between some samples."""
    n = draw(st.integers(3, 14))
    metadata = pd.DataFrame({
        "sample_id": [f"S{i}" for i in range(n)],
        "subject_id": [f"P{draw(st.integers(0, n // 2))}" for _ in range(n)],
        "batch_id": [f"B{draw(st.integers(0, 3))}" for _ in range(n)],
    })  # fmt: skip
    graph = from_metadata(metadata)
    subjects = sorted(set(metadata["subject_id"]))
    pairs = draw(st.lists(st.tuples(st.sampled_from(subjects), st.sampled_from(subjects)), max_size=4))
    pairs = sorted({tuple(sorted(p)) for p in pairs if p[0] != p[1]})
    if pairs:
        kinship = pd.DataFrame({"id1": [a for a, _ in pairs], "id2": [b for _, b in pairs], "kinship": 0.25})
        graph = add_kinship(graph, kinship, "first")
    twins = draw(st.lists(st.tuples(st.integers(0, n - 1), st.integers(0, n - 1)), max_size=3))
    twins = sorted({tuple(sorted(p)) for p in twins if p[0] != p[1]})
    if twins:
        graph = add_duplicates(graph, pd.DataFrame({"id1": [f"S{a}" for a, _ in twins],
                                                    "id2": [f"S{b}" for _, b in twins]}))  # fmt: skip
    return graph, n


def _followed_view(graph, relations) -> nx.Graph:
    """The graph's networkx view, undirected, with only the followed relations' edges."""
    view = nx.Graph()
    full = graph.to_networkx()
    view.add_nodes_from(full.nodes)
    view.add_edges_from((u, v) for u, v, data in full.edges(data=True) if data["relation"] in relations)
    return view


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(cohorts(), st.sampled_from([None, "subject", "batch", "relatedness", "duplicate"]), st.integers(1, 4))
def test_chains_are_the_shortest_real_paths_networkx_finds(case, mode, k):
    graph, n = case
    relations = relation_names([mode]) if mode else relation_names(COMBINABLE_MODES)
    view = _followed_view(graph, relations)
    edges = {frozenset((u, v)): data for u, v, data in graph.to_networkx().edges(data=True)}
    if not view.number_of_edges():  # nothing declared: unknown, refused, never "free to be apart"
        with pytest.raises(DepgraphError) as refused:
            why(graph, "S0", "S1", mode=mode, all_paths=k)
        assert refused.value.code == "no_relation"
        return
    for i, j in itertools.combinations(range(min(n, 5)), 2):
        a, b = f"sample:S{i}", f"sample:S{j}"
        found = why(graph, f"S{i}", f"S{j}", mode=mode, all_paths=k)
        assert found.connected == nx.has_path(view, a, b) and found.note is None
        assert set(found.unlinked) == {s for s, v in ((f"S{i}", a), (f"S{j}", b)) if not view.degree(v)}
        if not found.connected:
            continue
        expected = [len(p) - 1 for p in itertools.islice(nx.shortest_simple_paths(view, a, b), k)]
        chains = [rows for _, rows in found.table.groupby("chain", sort=True)]
        assert [len(rows) for rows in chains] == expected  # the k shortest lengths, none missed
        walked = set()
        for rows in chains:
            nodes = [f"{t.lower()}:{key}" for t, key in zip(rows["from_type"], rows["from_id"], strict=True)]
            nodes.append(f"{rows['to_type'].iloc[-1].lower()}:{rows['to_id'].iloc[-1]}")
            assert nodes[0] == a and nodes[-1] == b and len(set(nodes)) == len(nodes)  # simple, from a to b
            for row, (u, v) in zip(rows.itertuples(), itertools.pairwise(nodes), strict=True):
                assert f"{row.from_type.lower()}:{row.from_id}" == u and row.relation in relations
                assert edges[frozenset((u, v))]["relation"] in relations  # a declared edge
            walked.add(tuple(nodes))
        assert len(walked) == len(chains)  # distinct


def _family():
    graph = from_metadata(pd.DataFrame({"sample_id": ["S1", "S2", "S3", "S4"], "subject_id": ["P1", "P2", "P3", "P3"],
                                        "batch_id": ["B1", "B2", "B3", "B3"]}))  # fmt: skip
    graph = add_kinship(graph, pd.DataFrame({"id1": ["P1"], "id2": ["P2"], "kinship": [0.23]}), "first")
    return add_duplicates(graph, pd.DataFrame({"id1": ["S2"], "id2": ["S3"]}))


def test_each_step_names_its_relation_and_evidence():
    found = why(_family(), "S1", "S4", mode=None)
    assert (
        found.table[["from_id", "relation", "to_id"]].values.tolist()
        == [
            ["S1", "sample_belongs_to_subject", "P1"],
            ["P1", "subject_related_to", "P2"],
            ["P2", "sample_belongs_to_subject", "S2"],
            ["S2", "sample_duplicate_of", "S3"],
            ["S3", "sample_processed_in_batch", "B3"],
            ["B3", "sample_processed_in_batch", "S4"],
        ]
        or found.table["to_id"].iloc[-1] == "S4"
    )  # two shortest chains of 6 steps: either is a shortest
    kin = found.table[found.table["relation"] == "subject_related_to"].iloc[0]
    assert kin["weight"] == 0.23 and kin["provenance"] == "kinship:pairs"
    text = str(found)
    assert "-- subject P2   subject_related_to (0.23, kinship:pairs)" in text and "they are never apart" in text
    apart = why(_family(), "S1", "S4", mode="relatedness")
    assert not apart.connected and "free to be apart" in str(apart)
    assert why(_family(), "P1", "P2").table["relation"].tolist() == ["subject_related_to"]


@pytest.mark.parametrize(
    ("args", "options", "code", "words"),
    [
        (("S1", "S9"), {}, "reference", "no node 'S9'"),
        (("S1", "P1"), {}, "invalid_argument", "'S1' is a sample, 'P1' a subject"),
        (("S1", "S1"), {}, "invalid_argument", "'S1' twice"),
        (("S1", "S2"), {"all_paths": 0}, "invalid_argument", "all_paths takes 1 to 100 chains, not 0"),
        (("S1", "S2"), {"all_paths": 101}, "invalid_argument", "all_paths takes 1 to 100 chains, not 101"),
        (("S1", "S2"), {"relations": []}, "invalid_argument", "not none"),
        (("S1", "S2"), {"relations": ["sample_has_outcome"]}, "invalid_argument", "not sample_has_outcome"),
        (("S1", "S2"), {"mode": ["subject"]}, "invalid_argument", "mode ['subject'] is not one of"),
        (("S1", "S2"), {"mode": "spatial"}, "no_relation", "declares no sample_adjacent_to edge"),
        (("S1", "S2"), {"mode": "composite"}, "invalid_argument", "give the relations its spec lists"),
        (("S1", "S2"), {"relations": ["kin"]}, "invalid_argument", "not kin"),
        (("S1", "P1"), {"node_type": "Subject"}, "reference", "no subject 'S1'"),
    ],
)
def test_bad_requests_are_refused_by_name(args, options, code, words):
    with pytest.raises(DepgraphError) as refused:
        why(_family(), *args, **options)
    assert refused.value.code == code and words in refused.value.message


def _run(args, capsys):
    code = main([str(a) for a in args])
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def test_why_from_the_command_line(tmp_path, capsys):
    graph = _family()
    write_graph(graph, tmp_path / "graph.json")
    write_spec(SplitSpec.from_partition(derive(graph, "relatedness"), graph), tmp_path / "spec.json")
    code, out, _ = _run(["why", tmp_path / "graph.json", "S1", "S2"], capsys)
    assert code == 0 and "joined by 1 chain" in out and "subject_related_to (0.23, kinship:pairs)" in out
    code, out, _ = _run(["why", tmp_path / "spec.json", "S1", "S2"], capsys)
    assert code == 0 and "share group" in out and "--graph GRAPH" in out
    code, out, _ = _run(["why", tmp_path / "spec.json", "S1", "S4", "--graph", tmp_path / "graph.json"], capsys)
    assert code == 0 and "free to be apart" in out and "relations followed: sample_belongs_to_subject, " \
        "subject_related_to" in out  # fmt: skip
    code, out, _ = _run(["why", tmp_path / "graph.json", "S1", "S4", "--all-paths", "3", "--json"], capsys)
    answer = orjson.loads(out)
    assert code == 0 and answer["connected"] and {s["chain"] for s in answer["steps"]} == {1, 2}
    for args, words in [
        (["why", tmp_path / "graph.json", "S1", "P1"], "invalid_argument: why joins two nodes of one type"),
        (["why", tmp_path / "spec.json", "S1", "S9"], "reference: why: 1 row(s) name samples not in the spec: S9"),
        (["why", tmp_path / "spec.json", "S1", "S2", "--mode", "subject"], "invalid_argument: --mode does not apply"),
        (["why", tmp_path / "graph.json", "S1", "S2", "--graph", tmp_path / "graph.json"], "--graph does not apply"),
    ]:
        code, out, err = _run(args, capsys)
        assert code == 2 and out == "" and err.count("\n") == 1 and words in err, err


def test_the_documented_answers_are_what_why_prints(tmp_path, capsys, monkeypatch):
    """docs/explain.md's cohort (kinship P1–P2 0.25, P2–P3 0.09, a duplicate S4–S5, batches of two): every command
    shown prints what the page shows."""
    metadata = pd.DataFrame({"sample_id": ["S1", "S2", "S3", "S4", "S5", "S6"],
                             "subject_id": ["P1", "P2", "P3", "P3", "P4", "P5"],
                             "batch_id": ["B1", "B1", "B2", "B2", "B3", "B3"]})  # fmt: skip
    graph = add_kinship(from_metadata(metadata), pd.DataFrame({"id1": ["P1", "P2"], "id2": ["P2", "P3"],
                                                               "kinship": [0.25, 0.09]}), 0.05)  # fmt: skip
    graph = add_duplicates(graph, pd.DataFrame({"id1": ["S4"], "id2": ["S5"]}))
    write_graph(graph, tmp_path / "graph.json")
    write_spec(SplitSpec.from_partition(derive(graph, "relatedness"), graph), tmp_path / "spec.json")
    monkeypatch.chdir(tmp_path)
    page = (Path(__file__).resolve().parents[1] / "docs" / "explain.md").read_text(encoding="utf-8")
    blocks = [b.split("```", 1)[0] for b in page.split("```text\n")[1:] if b.startswith("$ depgraph ")]
    shown = [c.split("\n", 1) for block in blocks for c in block.split("$ depgraph ")[1:]]
    assert len(shown) == 9
    for command, expected in shown:
        code, out, _ = _run(command.split(), capsys)
        assert code == 0 and out == expected, command


# --------------------------------------------------------------------------- explain: make-up and bridges
@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(cohorts(), st.sampled_from([None, "relatedness", "duplicate", "batch"]))
def test_bridges_are_networkx_bridges_and_split_what_networkx_splits(case, mode):
    graph, _ = case
    _bridges_match_networkx(graph, "S0", mode)


@st.composite
def kin_chains(draw):
    """One sample a subject, the subjects in a chain of kinship with a few edges skipping ahead: search trees up
    to 60 levels deep, so that common ancestors are found over several powers of two."""
    n = draw(st.integers(2, 60))
    graph = from_metadata(pd.DataFrame({"sample_id": [f"S{i}" for i in range(n)],
                                        "subject_id": [f"P{i}" for i in range(n)]}))  # fmt: skip
    skips = draw(st.lists(st.tuples(st.integers(0, n - 1), st.integers(2, 9)), max_size=6))
    pairs = {(i, i + 1) for i in range(n - 1)} | {(i, i + k) for i, k in skips if i + k < n}
    pairs = sorted(pairs)
    kinship = pd.DataFrame({"id1": [f"P{a}" for a, _ in pairs], "id2": [f"P{b}" for _, b in pairs],
                            "kinship": 0.25})  # fmt: skip
    return add_kinship(graph, kinship, "first"), f"S{draw(st.integers(0, n - 1))}"


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(kin_chains())
def test_bridges_of_deep_search_trees_are_networkx_bridges(case):
    graph, sample = case
    _bridges_match_networkx(graph, sample, "relatedness")


def _bridges_match_networkx(graph, sample: str, mode: str | None) -> None:
    relations = relation_names([mode]) if mode else relation_names(COMBINABLE_MODES)
    view = _followed_view(graph, relations)
    if not view.number_of_edges():
        with pytest.raises(DepgraphError) as refused:
            explain(graph, sample, mode=mode)
        assert refused.value.code == "no_relation"
        return
    component = nx.node_connected_component(view, f"sample:{sample}")
    found = explain(graph, sample, mode=mode)
    assert sorted(found.samples) == sorted(v.split(":", 1)[1] for v in component if v.startswith("sample:"))
    samples = found.n_samples
    part = view.subgraph(component).copy()
    expected = {}
    for u, v in nx.bridges(part):
        part.remove_edge(u, v)
        side = sum(x.startswith("sample:") for x in nx.node_connected_component(part, u))
        part.add_edge(u, v)
        if min(side, samples - side):
            expected[frozenset((u, v))] = min(side, samples - side)
    got = {frozenset((f"{r.from_type.lower()}:{r.from_id}", f"{r.to_type.lower()}:{r.to_id}")): r.cut_off
           for r in found.bridges.itertuples()}  # fmt: skip
    assert got == expected
    assert (found.bridges["cut_off"] + found.bridges["kept"] == samples).all()
    assert found.bridges["cut_off"].is_monotonic_decreasing
    assert sum(found.nodes.values()) == len(component)


def test_explain_from_the_command_line(tmp_path, capsys):
    graph = _family()
    write_graph(graph, tmp_path / "graph.json")
    write_spec(SplitSpec.from_partition(derive(graph, "relatedness"), graph), tmp_path / "spec.json")
    code, out, _ = _run(["explain", tmp_path / "graph.json", "S1", "--mode", "relatedness"], capsys)
    assert code == 0 and "group of S1 (2 samples; 50 % of the graph's 4 samples)" in out
    assert "subject P1 -- subject P2   subject_related_to (0.23, kinship:pairs): 1 sample | 1 sample" in out
    code, out, _ = _run(["explain", tmp_path / "spec.json", "S2"], capsys)
    assert code == 0 and "group relatedness:S1 of the spec (relatedness): 2 samples: S1, S2" in out
    code, out, _ = _run(["explain", tmp_path / "spec.json", "relatedness:S1", "--graph", tmp_path / "graph.json",
                         "--json"], capsys)  # fmt: skip
    answer = orjson.loads(out)
    assert code == 0 and answer["samples"] == ["S1", "S2"] and answer["bridges"][0]["relation"] == "subject_related_to"
    for args, words in [
        (["explain", tmp_path / "graph.json", "S9"], "reference: explain: the graph has no sample 'S9'"),
        (["explain", tmp_path / "spec.json", "nope"], "reference: explain: a group or sample: 1 row(s) name samples"),
        (["explain", tmp_path / "graph.json", "S1", "--bridges", "-1"], "--bridges takes 0 or more"),
        (["explain", tmp_path / "spec.json", "S1", "--mode", "batch"], "--mode does not apply"),
    ]:
        code, out, err = _run(args, capsys)
        assert code == 2 and out == "" and err.count("\n") == 1 and words in err, err


def test_two_relations_joining_one_pair_are_no_bridge():
    """A duplicate pair that are also spatial neighbours stay joined when either edge goes: neither is a bridge;
    with one of them only, the edge is the group's one bridge."""
    graph = from_metadata(pd.DataFrame({"sample_id": ["S1", "S2"]}))
    graph = add_duplicates(graph, pd.DataFrame({"id1": ["S1"], "id2": ["S2"]}))
    assert explain(graph, "S1").bridges[["from_id", "relation", "to_id", "cut_off", "kept"]].values.tolist() == [
        ["S1", "sample_duplicate_of", "S2", 1, 1]
    ]
    both = add_spatial(graph, pd.DataFrame({"sample_id": ["S1", "S2"], "x": [0.0, 0.5], "y": [0.0, 0.0]}), 1.0)
    found = explain(both, "S2")
    assert found.n_samples == 2 and found.bridges.empty and "no bridge" in str(found)
    assert found.edges.set_index("relation")["count"].to_dict() == {"sample_adjacent_to": 1, "sample_duplicate_of": 1}


# --------------------------------------------------------------------------- neighbors and query: the graph as tables
@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(cohorts(), st.sampled_from(["all", "out", "in"]), st.sampled_from([None, ["subject_related_to"]]))
def test_neighbors_are_the_edges_networkx_holds(case, direction, relations):
    graph, _ = case
    full = graph.to_networkx()
    for seed in ["S0", "P0", "B0"]:
        if not graph.locate((seed[0] == "S" and "Sample") or (seed[0] == "P" and "Subject") or "Batch", [seed])[0] >= 0:
            continue
        node = next(n for n in full.nodes if n.split(":", 1)[1] == seed)
        expected = set()
        for u, v, data in full.edges(data=True):
            if relations and data["relation"] not in relations:
                continue
            way = "undirected" if not data["directed"] else ("out" if u == node else "in")
            if node in (u, v) and (direction in ("all", way) or way == "undirected"):
                expected.add((data["relation"], way, v if u == node else u))
        table = neighbors(graph, [seed], relations=relations, direction=direction)
        got = {(r.relation, r.direction, f"{r.node_type.lower()}:{r.node_id}") for r in table.itertuples()}
        assert got == expected and len(table) == len(expected)


def test_query_by_type_and_by_relation_is_the_graphs():
    graph = _family()
    full = graph.to_networkx()
    subjects = nodes_of(graph, ["Subject"])
    assert subjects["id"].tolist() == sorted(k for n, k in full.nodes(data="key") if n.startswith("subject:"))
    edges = edges_of(graph, ["subject_related_to", "sample_duplicate_of"])
    assert sorted(zip(edges["from_id"], edges["to_id"], strict=True)) == sorted(
        (u.split(":", 1)[1], v.split(":", 1)[1]) for u, v, r in full.edges(data="relation")
        if r in ("subject_related_to", "sample_duplicate_of")
    )  # fmt: skip
    assert edges_of(graph, ["sample_belongs_to_subject"], ids=["P2"])["from_id"].tolist() == ["S2"]
    assert nodes_of(graph, "Sample", ids=["S3", "S1"])["id"].tolist() == ["S1", "S3"]
    for call, code, words in [
        (lambda: neighbors(graph, ["S9"]), "reference", "no node S9"),
        (lambda: nodes_of(graph, "Sample", ids=["S1", "P1"]), "reference", "no node of type Sample P1"),
        (lambda: neighbors(graph, ["S1"], direction="up"), "invalid_argument", "direction is one of"),
        (lambda: neighbors(graph, []), "invalid_argument", "give one or more ids"),
        (lambda: edges_of(graph, ["kin"]), "invalid_argument", "kin are not relations"),
        (lambda: nodes_of(graph, ["Nope"]), "invalid_argument", "'Nope' is not a node type"),
    ]:
        with pytest.raises(DepgraphError) as refused:
            call()
        assert refused.value.code == code and words in refused.value.message


def test_neighbors_and_query_from_the_command_line(tmp_path, capsys):
    write_graph(_family(), tmp_path / "graph.json")
    code, out, _ = _run(["neighbors", tmp_path / "graph.json", "P1", "--json"], capsys)
    assert code == 0 and [(r["relation"], r["node_id"]) for r in orjson.loads(out)] == [
        ("sample_belongs_to_subject", "S1"), ("subject_related_to", "P2")]  # fmt: skip
    code, out, _ = _run(["query", tmp_path / "graph.json", "--relation", "subject_related_to"], capsys)
    assert code == 0 and out.startswith("1 row:") and "kinship:pairs" in out
    code, out, _ = _run(["query", tmp_path / "graph.json", "--type", "Batch", "-o", tmp_path / "b.tsv"], capsys)
    assert code == 0 and (tmp_path / "b.tsv").read_text().splitlines() == ["type\tid", "Batch\tB1", "Batch\tB2",
                                                                           "Batch\tB3"]  # fmt: skip
    for args, words in [
        (["query", tmp_path / "graph.json"], "give node types (--type) or relations (--relation)"),
        (["query", tmp_path / "graph.json", "--type", "Batch", "--relation", "x"], "(not both)"),
        (["neighbors", tmp_path / "graph.json", "S1", "--ids", "S2"], "No such option: --ids"),
        (["query", tmp_path / "graph.json", "--type", "Batch", "--limit", "-1"], "--limit takes 0 or more"),
    ]:
        code, out, err = _run(args, capsys)
        assert code == 2 and out == "" and err.count("\n") == 1 and words in err, err


def test_a_query_table_wider_than_the_terminal_is_cut_unless_wide(tmp_path, capsys, monkeypatch):
    from depgraph.cli.commandline import out

    write_graph(_family(), tmp_path / "graph.json")
    args = ["query", tmp_path / "graph.json", "--relation", "subject_related_to"]
    _, piped, _ = _run(args, capsys)
    monkeypatch.setattr(out, "_force_terminal", True)
    monkeypatch.setattr(out, "_color_system", None)
    monkeypatch.setattr(out, "_width", 40)
    _, narrow, _ = _run(args, capsys)
    assert max(map(len, narrow.splitlines())) <= 40
    assert "4 more columns past the terminal's 40: --wide shows the whole table" in " ".join(narrow.split())
    assert _run([*args, "--wide"], capsys)[1] == piped and max(map(len, piped.splitlines())) > 40


# --------------------------------------------------------------------------- compare: groupings side by side
@settings(max_examples=20, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(cohorts())
def test_compare_counts_what_networkx_and_plain_python_count(case):
    graph, _ = case
    table = compare(graph, ["subject", "relatedness", "batch"]).set_index("grouping")
    partitions = {}
    for mode in ("subject", "relatedness", "batch"):
        view = _followed_view(graph, relation_names([mode]))
        parts = [frozenset(v for v in c if v.startswith("sample:")) for c in nx.connected_components(view)]
        partitions[mode] = [p for p in parts if p]
    n = graph.count("Sample")
    for mode, parts in partitions.items():
        largest = max(len(p) for p in parts)
        row = table.loc[mode]
        assert (row["groups"], row["largest"]) == (len(parts), largest)
        assert row["effective_folds"] == min(len(parts), n // largest)
        group_of = {s: p for p in parts for s in p}
        first = {s: p for p in partitions["subject"] for s in p}
        assert row["changed"] == sum(group_of[s] != first[s] for s in group_of)


def test_compare_from_the_command_line(tmp_path, capsys):
    write_graph(_family(), tmp_path / "graph.json")
    code, out, _ = _run(["compare", tmp_path / "graph.json", "--modes", "subject,relatedness"], capsys)
    assert code == 0 and out.splitlines() == [
        "subject: 3 groups, the largest 2 samples (50%), at most 2 folds", "  changed: (the reference)",
        "  exposed: subject_related_to 1, sample_duplicate_of 1",  # batch B3 holds the two samples of P3 only
        "relatedness: 2 groups, the largest 2 samples (50%), at most 2 folds",
        "  changed: 2 samples in another group than in subject",  # S1 and S2, related, together; P3's pair as was
        "  exposed: sample_duplicate_of 1",  # S2 and S3
    ]  # fmt: skip
    code, out, _ = _run(["compare", tmp_path / "graph.json", "--modes", "subject,composite", "--via",
                         "subject,duplicate", "--json"], capsys)  # fmt: skip
    assert code == 0 and [r["grouping"] for r in orjson.loads(out)] == ["subject", "composite(subject+duplicate)"]
    for args, words in [
        (["compare", tmp_path / "graph.json", "--modes", "subject,spatial"], "no_relation: mode 'spatial' needs"),
        (["compare", tmp_path / "graph.json", "--modes", "subject,subject"], "--modes names subject more than once"),
        (["compare", tmp_path / "graph.json", "--modes", "subject", "-o", tmp_path / "c.html"], "c.html"),
    ]:
        code, out, err = _run(args, capsys)
        assert code == 2 and out == "" and err.count("\n") == 1 and words in err, err
    assert not (tmp_path / "c.html").exists()


# --------------------------------------------------------------------------- found by a second reader
def test_explain_stays_the_function_after_why_ran():
    import depgraph

    graph = _family()
    depgraph.why(graph, "S1", "S2")
    assert depgraph.explain(graph, "S1").n_samples == 4  # not the package of the same stage


def test_a_sample_without_the_followed_edges_is_unknown_not_free():
    graph = from_metadata(pd.DataFrame({"sample_id": ["S1", "S2", "S3"], "subject_id": ["P1", "P1", None],
                                        "study_id": ["T1", "T2", "T3"]}))  # fmt: skip
    found = why(graph, "S1", "S3", mode="subject")
    assert not found.connected and found.unlinked == ("S3",)
    assert "S3 has no edge of the relations followed: whether they depend on each other is unknown" in str(found)
    assert "free to be apart" not in str(found)
    assert "its dependencies through them are unknown" in str(explain(graph, "S3", mode="subject"))
    both = str(explain(graph, "S1", relations=["sample_belongs_to_subject", "sample_from_study"]))
    assert "nodes: 2 samples, 1 subject, 2 studies" in both


def test_a_spec_and_its_graph_answer_as_the_spec_grouped(tmp_path, capsys):
    """A subset spec is answered in the graph its samples induce (a chain through a sample left out is not the
    spec's); a graph lacking the spec's samples is refused; the spec's own checks hold without the graph."""
    graph = from_metadata(pd.DataFrame({"sample_id": ["S1", "S2", "S3"]}))
    graph = add_duplicates(graph, pd.DataFrame({"id1": ["S1", "S2"], "id2": ["S2", "S3"]}))
    write_graph(graph, tmp_path / "graph.json")
    write_spec(SplitSpec.from_partition(derive(graph, "duplicate", samples=["S1", "S3"], allow_unlinked=True), graph),
               tmp_path / "subset.json")  # fmt: skip
    code, out, _ = _run(["why", tmp_path / "subset.json", "S1", "S3", "--graph", tmp_path / "graph.json"], capsys)
    assert code == 0 and "free to be apart" in out and "never apart" not in out
    code, out, _ = _run(["explain", tmp_path / "subset.json", "S3", "--graph", tmp_path / "graph.json"], capsys)
    assert code == 0 and "group of S3 (1 sample;" in out and "1 sample: S3" in out and "note:" not in out
    other = from_metadata(pd.DataFrame({"sample_id": ["S1", "S9"]}))
    write_graph(add_duplicates(other, pd.DataFrame({"id1": ["S1"], "id2": ["S9"]})), tmp_path / "other.json")
    for args, words in [
        (["why", tmp_path / "subset.json", "S1", "S3", "--graph", tmp_path / "other.json"],
         "reference: the spec names 1 sample(s) the graph other.json lacks: S3"),
        (["explain", tmp_path / "subset.json", "S1", "--graph", tmp_path / "other.json"], "lacks: S3"),
        (["why", tmp_path / "subset.json", "S1", "S1"], "'S1' twice"),
        (["why", tmp_path / "subset.json", "S1", "S3", "--all-paths", "0"], "all_paths takes 1 to 100"),
        (["why", tmp_path / "subset.json", "S1", "S3", "--type", "Batch"], "--type does not apply"),
    ]:  # fmt: skip
        code, out, err = _run(args, capsys)
        assert code == 2 and out == "" and err.count("\n") == 1 and words in err, err


def test_a_rule_based_spec_that_differs_from_the_chains_says_so(tmp_path, capsys):
    graph = _family()
    spec = SplitSpec.from_partition(derive(graph, "composite", strategy="rule_based", via=["subject", "batch"],
                                           priority=["batch", "subject"]), graph)  # fmt: skip
    write_graph(graph, tmp_path / "graph.json")
    write_spec(spec, tmp_path / "spec.json")
    groups = spec.groups()
    for a, b in itertools.combinations(sorted(groups), 2):
        code, out, _ = _run(["why", tmp_path / "spec.json", a, b, "--graph", tmp_path / "graph.json"], capsys)
        joined = "never apart:" in out.splitlines()[1]
        assert code == 0 and (("note:" in out) == (joined != (groups[a] == groups[b]))), out


def test_ids_are_read_as_every_reader_reads_them():
    """As ``derive(samples=)`` reads ids: numbers as text (``2.0`` is ``"2"``), blanks trimmed, node ids with their
    type's prefix (``sample:1``); a blank id is ``missing_id``."""
    graph = from_metadata(pd.DataFrame({"sample_id": ["1", "2"], "subject_id": ["P1", "P1"]}))
    assert why(graph, 1, 2.0).table["to_id"].tolist() == ["P1", "2"] and why(graph, " 1 ", "2").connected
    assert why(graph, "sample:1", "2").connected and explain(graph, "sample:2").n_samples == 2
    assert neighbors(graph, [2.0])["node_id"].tolist() == ["P1"]
    with pytest.raises(DepgraphError) as refused:
        why(graph, "1", " ")
    assert refused.value.code == "missing_id"


def test_tables_with_missing_cells_are_written_and_unknown_groupings_warned(tmp_path, capsys):
    """A CSV of an edge table whose weights are missing is written (it crashed); compare shows each derivation's
    warnings (a sample without a batch is a group of one: unknown, not a group); --via without a composite, ids of
    other types than asked and repeated ids are refused; an empty table says the graph declares none."""
    graph = from_metadata(pd.DataFrame({"sample_id": ["S1", "S2", "S3"], "batch_id": ["B1", "B1", None],
                                        "subject_id": ["P1", "P2", "P3"], "note": ["a", None, "c"]}))  # fmt: skip
    write_graph(graph, tmp_path / "graph.json")
    code, _, _ = _run(["query", tmp_path / "graph.json", "--relation", "sample_belongs_to_subject", "-o",
                       tmp_path / "e.csv"], capsys)  # fmt: skip
    assert code == 0 and pd.read_csv(tmp_path / "e.csv")["weight"].isna().all()
    code, _, _ = _run(["query", tmp_path / "graph.json", "--type", "Sample", "-o", tmp_path / "s.tsv"], capsys)
    assert code == 0 and pd.read_csv(tmp_path / "s.tsv", sep="\t")["note"].isna().tolist() == [False, True, False]
    code, out, _ = _run(["compare", tmp_path / "graph.json", "--modes", "subject,batch"], capsys)
    assert code == 0 and "warnings: 1 sample(s) have no batch and were kept as singleton groups: S3" in out
    code, out, _ = _run(["query", tmp_path / "graph.json", "--relation", "sample_duplicate_of"], capsys)
    assert code == 0 and out == "0 rows: the graph declares none\n"
    for args, words in [
        (["compare", tmp_path / "graph.json", "--modes", "subject", "--via", "batch"], "no composite is compared"),
        (["query", tmp_path / "graph.json", "--type", "Batch", "--ids", "S1"], "no node of type Batch S1"),
        (["neighbors", tmp_path / "graph.json", "P1", "P1"], "name P1 more than once"),
        (["neighbors", tmp_path / "graph.json", "S9", "--type", "Subject"], "has no subject S9"),
    ]:
        code, out, err = _run(args, capsys)
        assert code == 2 and out == "" and err.count("\n") == 1 and words in err, err


def test_a_share_is_never_rounded_to_none_or_all():
    from depgraph.common.display import share

    assert [share(x) for x in (0, 12 / 10**6, 0.004, 0.5, 0.996, 1)] == [
        "0%", "under 1%", "under 1%", "50%", "over 99%", "100%"
    ]  # fmt: skip
