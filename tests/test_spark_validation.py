"""Validation on Spark (depgraph.spark.validation) reports what the single machine reports, byte for byte: every
rule that counts sample-sized tables (assignments, repeated subjects, subjects across studies and sites, shared and
per-dataset feature sets, heavy batches, kinship, duplicates across subjects, formula-like ids, group shapes), the
rules over timepoints and over what the builders recorded, from Python and from ``depgraph validate --engine
spark``. Expected reports come from the single machine's validation, never from the Spark code under test."""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
import pytest

from depgraph import (
    add_duplicates,
    add_kinship,
    add_relations,
    from_metadata,
    validate,
    write_graph,
)
from depgraph.adapters.splitgraph import from_splitgraph
from depgraph.cli.main import main
from tests.conformance.test_splitgraph_testthat import edge, graph_doc, node
from tests.spark_support import SPARK_MARKS, spark_graph_of

pytestmark = SPARK_MARKS


def _leaky() -> object:
    """Subjects across studies and sites, a shared and a heavily used batch, a formula-like id, a sample without a
    study, a kinship pair and a duplicate pair across subjects, and a subject with samples at two timepoints."""
    metadata = pd.DataFrame(
        {
            "sample_id": ["S1", "S2", "S3", "S4", "S5", "=S6", "S7"],
            "subject_id": ["P1", "P1", "P2", "P3", "P4", "P5", None],
            "study_id": ["ST1", "ST2", "ST1", "ST1", "ST1", "ST2", None],
            "site_id": ["A", "B", "A", "A", "A", "A", "B"],
            "batch_id": ["B1", "B1", "B1", "B1", "B3", "B4", "B4"],
            "timepoint_id": ["T0", "T1", "T0", "T0", "T1", "T1", "T0"],
        }
    )
    kinship = pd.DataFrame({"id1": ["P2"], "id2": ["P3"], "kinship": [0.25]})
    graph = add_kinship(from_metadata(metadata), kinship, 0.1)
    return add_duplicates(graph, pd.DataFrame({"id1": ["S5", "S1"], "id2": ["=S6", "S7"]}))


def _featuresets() -> object:
    """Feature sets of every derivation scope (splitGraph's document: the one form that declares them), one shared."""
    scopes = {"F1": "per_dataset", "F2": "typo", "F3": "external", "F4": None, "F5": "per_datset"}
    nodes = [node("Sample", f"S{i}") for i in range(1, 7)]
    nodes += [node("FeatureSet", f, attrs={} if s is None else {"derivation_scope": s}) for f, s in scopes.items()]
    uses = [("S1", "F1"), ("S2", "F1"), ("S3", "F2"), ("S4", "F3"), ("S5", "F4"), ("S6", "F5")]
    edges = [edge("sample_uses_featureset", f"sample:{s}", f"featureset:{f}", k) for k, (s, f) in enumerate(uses)]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # (splitGraph's own document: what it says of itself is not tested here)
        return from_splitgraph(graph_doc(nodes, edges))


def _time_ordered() -> object:
    """Timepoints ordered against their time_index (an error: the leakage rules are not reached)."""
    metadata = pd.DataFrame({"sample_id": ["a", "b"], "timepoint_id": ["T0", "T1"], "time_index": [0, 1]})
    return add_relations(from_metadata(metadata), pd.DataFrame({"source": ["T1"], "target": ["T0"]}),
                         "timepoint_precedes")  # fmt: skip


def _duplicates_without_subjects() -> object:
    """Duplicates in a graph declaring no subject: every pair is across subjects (unknown is never the same)."""
    graph = from_metadata(pd.DataFrame({"sample_id": ["S1", "S2", "S3"]}))
    return add_duplicates(graph, pd.DataFrame({"id1": ["S1"], "id2": ["S2"]}))


def _scope_of_another_type() -> object:
    """A derivation_scope that is no text (a boolean): named as Python writes it, True."""
    nodes = [node("Sample", "S1"), node("Sample", "S2"), node("FeatureSet", "F", attrs={"derivation_scope": True})]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return from_splitgraph(graph_doc(nodes, [edge("sample_uses_featureset", "sample:S1", "featureset:F", 1)]))


def _two_subjects() -> object:
    """Samples with two subjects, allowed: subject grouping takes the smallest (an advisory, and a dominant group)."""
    metadata = pd.DataFrame({"sample_id": ["S1", "S1", "S2", "S3", "S4", "S5", "S6"],
                             "subject_id": ["P2", "P1", "P1", "P1", "P1", "P1", "P3"]})  # fmt: skip
    return from_metadata(metadata, allow_multi_subject_samples=True)


@pytest.mark.parametrize(
    ("make", "options"),
    [
        (_leaky, {"n_splits": 3}),
        (_featuresets, {}),
        (_time_ordered, {}),
        (_two_subjects, {"modes": ["subject"]}),
        (_duplicates_without_subjects, {}),
        (_scope_of_another_type, {}),
    ],
)
def test_validation_on_spark_is_the_single_machines(tmp_path, spark, make, options):
    graph = make()
    expected = validate(graph, **options)
    assert expected.issues  # (each graph has findings for the Spark engine to match)
    got = validate(spark_graph_of(graph, tmp_path, spark), **options)
    assert got.to_json_bytes() == expected.to_json_bytes()


def test_validate_and_check_with_engine_spark_from_the_command_line(tmp_path, capsys, spark):
    """validate: the same report as the single machine's, and the same exit code (1: the graph has errors); a spec
    is checked on this machine, and a JSON graph is not Spark's to read. check --graph: the same groups straddling
    and the same exposure printed, the same exit code; without a graph there is nothing for Spark to count."""
    write_graph(_time_ordered(), tmp_path / "g.dggraph")
    assert main(["validate", str(tmp_path / "g.dggraph"), "--json"]) == 1
    single = capsys.readouterr().out
    assert main(["validate", str(tmp_path / "g.dggraph"), "--json", "--engine", "spark"]) == 1
    assert capsys.readouterr().out == single
    write_graph(_time_ordered(), tmp_path / "g.json")
    assert main(["validate", str(tmp_path / "g.json"), "--engine", "spark"]) == 2
    assert "columnar" in capsys.readouterr().err
    assert main(["validate", str(tmp_path / "g.dggraph"), "--master", "local[1]"]) == 2
    assert "--engine spark" in capsys.readouterr().err
    write_graph(_leaky(), tmp_path / "leaky.dggraph")
    assert main(["derive", str(tmp_path / "leaky.dggraph"), "--mode", "subject", "-o", str(tmp_path / "s.dgspec")]) == 0
    capsys.readouterr()
    assert main(["validate", str(tmp_path / "s.dgspec"), "--engine", "spark"]) == 2
    assert "split spec on this machine" in capsys.readouterr().err
    # check: a split made elsewhere against the spec and the graph, what crosses it counted in Spark
    folds = pd.DataFrame({"sample_id": ["S1", "S2", "S3", "S4", "S5", "=S6", "S7"], "fold": [1, 1, 2, 2, 3, 3, 3]})
    folds.to_csv(tmp_path / "folds.csv", index=False)
    check = ["check", str(tmp_path / "s.dgspec"), str(tmp_path / "folds.csv")]
    check += ["--graph", str(tmp_path / "leaky.dggraph")]
    assert main(check) == 1
    single = capsys.readouterr().out
    assert "subject_related_to" in single
    assert main([*check, "--engine", "spark"]) == 1
    assert capsys.readouterr().out == single
    assert main([*check[:3], "--engine", "spark"]) == 2
    assert "--graph" in capsys.readouterr().err


def test_genetics_tool_files_on_spark_give_the_single_machines_graph(tmp_path, spark):
    """A PLINK 2 KING table added to a Spark graph is read on the driver by the single machine's reader: the same
    pairs and kinship, the same record (what validation reads: a subject the file does not name, with
    absent="warn"); a GCTA GRM with absent="error" is refused alike, and named by its prefix read alike; a graph
    without subjects is refused alike; a pair-table option Spark does not take is refused."""
    from depgraph import DepgraphError, DepgraphWarning
    from depgraph.spark.graph import SparkGraph
    from depgraph.vocab import NodeType
    from tests.test_real_tools import DATA, individuals

    subjects = [*individuals()["subject_id"], "not_genotyped"]
    graph = from_metadata(pd.DataFrame({"sample_id": [f"S_{s}" for s in subjects], "subject_id": subjects}))
    on_spark = spark_graph_of(graph, tmp_path, spark)
    with pytest.warns(DepgraphWarning, match="not_genotyped"):
        single = add_kinship(graph, DATA / "plink2.kin0.zst", "third", id_template="{FID}_{IID}")
    with pytest.warns(DepgraphWarning, match="not_genotyped"):
        spark_kin = add_kinship(on_spark, DATA / "plink2.kin0.zst", "third", id_template="{FID}_{IID}")
    assert isinstance(spark_kin, SparkGraph) and spark_kin.history == single.history  # the record: what it read
    src, dst, weight = single.relation_edges("subject_related_to")
    start = single.type_range(NodeType.SUBJECT)[0]
    expected = sorted(zip((src - start).tolist(), (dst - start).tolist(), weight.tolist(), strict=True))
    got = sorted(tuple(r) for r in spark_kin.edges["subject_related_to"].select("source", "target", "weight").collect())
    assert got == expected and len(got) > 100
    with pytest.raises(DepgraphError, match="not_genotyped") as refused:  # unknown is never unrelated unasked
        add_kinship(on_spark, DATA / "plink19.grm.bin", "third", id_template="{FID}_{IID}", absent="error")
    with pytest.raises(DepgraphError, match="not_genotyped") as expected:
        add_kinship(graph, DATA / "plink19.grm.bin", "third", id_template="{FID}_{IID}", absent="error")
    assert str(refused.value) == str(expected.value)
    with pytest.warns(DepgraphWarning, match="not_genotyped"):  # a GCTA GRM named by its prefix, as one machine
        by_prefix = add_kinship(on_spark, DATA / "plink19", "third", id_template="{FID}_{IID}")
    with pytest.warns(DepgraphWarning, match="not_genotyped"):
        assert by_prefix.history == add_kinship(graph, DATA / "plink19", "third", id_template="{FID}_{IID}").history
    nobody = from_metadata(pd.DataFrame({"sample_id": ["S1", "S2"]}))  # no subject to relate: refused alike
    (tmp_path / "nobody").mkdir()
    for each in (nobody, spark_graph_of(nobody, tmp_path / "nobody", spark)):
        with pytest.raises(DepgraphError, match="no Subject nodes"):
            add_kinship(each, np.eye(3), 0.1, ids=["P1", "P2", "P3"])
    with pytest.raises(DepgraphError, match="id_template"):
        add_kinship(on_spark, pd.DataFrame({"id1": ["a"], "id2": ["b"], "kinship": [0.3]}), 0.1, id_template="{FID}")


def test_metadata_without_a_grouping_column_is_reported_on_spark_as_on_one_machine(tmp_path, spark):
    """A metadata file with no grouping column, built on Spark: the columns that look like ids are named in its
    history as one machine names them (counted as read: text and integers), so validation says no_grouping_column
    alike, from the Spark builder's own tables."""
    rows = {
        "sample_id": [f"S{i}" for i in range(9)],
        "code": list("AABBCCDDE"),
        "sex": list("FMFMFMFMF"),
        "age": [30, 30, 41, 41, 52, 52, 60, 60, 70],
        "score": [1.5, 1.5, 2.5, 2.5, 3.5, 3.5, 4.5, 4.5, 5.5],
    }
    pd.DataFrame(rows).to_csv(tmp_path / "metadata.csv", index=False)
    single = validate(from_metadata(tmp_path / "metadata.csv"))
    assert single.counts()["no_grouping_column"] == 9 and "age, code look like ids" in single.issues[0].message
    on_spark = validate(from_metadata(tmp_path / "metadata.csv", engine="spark", spark=spark))
    assert on_spark.to_json_bytes() == single.to_json_bytes()


def test_a_damaged_hand_made_graph_is_not_handed_to_spark(spark):
    """A graph assembled by hand with a repeated edge is refused on its way to Spark, naming the damage: a
    SparkGraph never holds structural damage, so validation on Spark never has any to report."""
    from depgraph import DepgraphError, StudyGraph
    from depgraph.spark.graph import graph_request

    graph = from_metadata(pd.DataFrame({"sample_id": ["S1", "S2"], "subject_id": ["P1", "P2"]}))
    edges = pd.concat([graph.edges, graph.edges.iloc[[0]]], ignore_index=True)
    broken = StudyGraph.from_tables(graph.nodes, graph.attributes, edges)
    assert "duplicate_edge" in validate(broken).counts()
    with pytest.raises(DepgraphError, match="duplicate_edge") as refused:
        graph_request(broken, spark)
    assert refused.value.code == "schema"
