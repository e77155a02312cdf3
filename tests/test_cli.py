"""The depgraph command end to end: build → validate → derive, and demo."""

from __future__ import annotations

import orjson
import pandas as pd
import pytest

from depgraph.cli import main


@pytest.fixture
def study(tmp_path, family_meta, family_kinship):
    meta = family_meta.rename(columns={"subject_id": "patient"})
    meta.to_csv(tmp_path / "meta.csv", index=False)
    family_kinship.to_csv(tmp_path / "kin.csv", index=False)
    pd.DataFrame({"id1": ["P5-T0"], "id2": ["P1-T1"]}).to_csv(tmp_path / "dups.csv", index=False)
    coords = pd.DataFrame({"sample_id": meta["sample_id"], "x": range(10), "y": [0.0] * 10})
    coords.to_csv(tmp_path / "xy.csv", index=False)
    return tmp_path


def run(args, capsys):
    code = main([str(a) for a in args])
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def test_build_validate_derive(study, capsys):
    graph = study / "graph.json"
    code, out, err = run(
        [
            "build",
            study / "meta.csv",
            "--column",
            "subject_id=patient",
            "--kinship",
            study / "kin.csv",
            "--kinship-threshold",
            "first",
            "--coords",
            study / "xy.csv",
            "--radius",
            "1",
            "--duplicates",
            study / "dups.csv",
            "-o",
            graph,
        ],
        capsys,
    )
    assert (code, err) == (0, "")
    assert "subject_related_to" in out and "sample_adjacent_to" in out
    doc = orjson.loads(graph.read_bytes())
    assert doc["format"] == "depgraph.study-graph" and len(doc["edges"]["sample_adjacent_to"]["source"]) == 9

    code, out, _ = run(["validate", graph], capsys)
    assert code == 0 and "valid" in out and "related_subjects" in out
    code, out, _ = run(["validate", graph, "--json", "--n-folds", "5"], capsys)
    report = orjson.loads(out)
    assert code == 0 and report["valid"] and report["counts"]["too_few_groups"] >= 1

    spec = study / "spec.json"
    code, out, _ = run(
        ["derive", graph, "--mode", "composite", "--strategy", "strict", "--via", "relatedness,duplicate", "-o", spec],
        capsys,
    )
    assert code == 0 and "2 groups" in out
    doc = orjson.loads(spec.read_bytes())
    assert doc["constraint"]["via"] == ["relatedness", "duplicate"]
    assert len(doc["samples"]["sample_id"]) == len(doc["samples"]["group_id"]) == 10
    assert len(set(doc["samples"]["group_id"])) == 2


def test_derive_rule_based_and_subset(study, capsys):
    graph = study / "graph.json"
    assert run(["build", study / "meta.csv", "--column", "subject_id=patient", "-o", graph], capsys)[0] == 0
    (study / "subset.txt").write_text("# two samples\nP1-T0\nP3-T1\n\n")
    spec = study / "spec.json"
    code, _, _ = run(
        [
            "derive",
            graph,
            "--mode",
            "composite",
            "--strategy",
            "rule_based",
            "--priority",
            "batch,subject",
            "--samples",
            study / "subset.txt",
            "-o",
            spec,
        ],
        capsys,
    )
    assert code == 0
    samples = orjson.loads(spec.read_bytes())["samples"]
    assert samples["sample_id"] == ["P1-T0", "P3-T1"]
    assert samples["group_id"] == ["composite_batch:B1", "composite_batch:B1"]


def test_validate_exits_1_on_errors(tmp_path, capsys):
    from depgraph import from_metadata, write_graph

    g = from_metadata(pd.DataFrame({"sample_id": ["S1", "S2"], "batch_id": ["B1", "B2"]}))
    g = g.add_relations(pd.DataFrame({"source": ["S1"], "target": ["B2"]}), "sample_processed_in_batch")
    write_graph(g, tmp_path / "bad.json")
    code, out, _ = run(["validate", tmp_path / "bad.json"], capsys)
    assert code == 1 and "sample_multiple_batch_assignments" in out


def test_demo_tells_the_story_and_writes_its_files(tmp_path, capsys):
    code, out, err = run(["demo", "-o", tmp_path], capsys)
    assert (code, err) == (0, "")
    assert "related subject pairs split across groups: 40" in out
    assert "related subject pairs split across groups: 0; duplicate pairs split: 0" in out
    assert sorted(p.name for p in tmp_path.iterdir()) == [
        "duplicates.csv",
        "graph.json",
        "kinship.csv",
        "metadata.csv",
        "spec.json",
    ]
    # the written inputs rebuild the same graph through the CLI
    code, _, _ = run(
        [
            "build",
            tmp_path / "metadata.csv",
            "--kinship",
            tmp_path / "kinship.csv",
            "--kinship-threshold",
            "first",
            "--duplicates",
            tmp_path / "duplicates.csv",
            "-o",
            tmp_path / "again.json",
        ],
        capsys,
    )
    assert code == 0
    a = orjson.loads((tmp_path / "graph.json").read_bytes())
    b = orjson.loads((tmp_path / "again.json").read_bytes())
    assert a["nodes"] == b["nodes"] and a["edges"].keys() == b["edges"].keys()
    assert a["edges"]["subject_related_to"]["source"] == b["edges"]["subject_related_to"]["source"]


def test_help_lists_the_commands(capsys):
    code, out, _ = run(["--help"], capsys)
    assert code == 0
    for command in ("build", "validate", "derive", "demo"):
        assert command in out


def test_spec_commands_validate_import_export_diff(tmp_path, study, capsys):
    from tests.conftest import CONFORMANCE

    graph, spec = study / "graph.json", study / "spec.json"
    assert run(["build", study / "meta.csv", "--column", "subject_id=patient", "-o", graph], capsys)[0] == 0
    assert run(["derive", graph, "--mode", "subject", "-o", spec], capsys)[0] == 0

    code, out, _ = run(["validate", spec], capsys)
    assert code == 0 and "digest sha256:" in out and "verified" in out

    # export: splitGraph JSON, CSV and Parquet samples tables
    assert run(["export", spec, "--to", "splitgraph", "-o", study / "sg.json"], capsys)[0] == 0
    sg = orjson.loads((study / "sg.json").read_bytes())
    assert sg["splitGraph_object"] == "split_spec" and len(sg["sample_data"]) == 10
    assert run(["export", spec, "--to", "csv", "-o", study / "samples.csv"], capsys)[0] == 0
    table = pd.read_csv(study / "samples.csv")
    assert table.columns[:2].tolist() == ["sample_id", "group_id"] and len(table) == 10
    assert run(["export", spec, "--to", "parquet", "-o", study / "samples.parquet"], capsys)[0] == 0
    assert pd.read_parquet(study / "samples.parquet")["group_id"].nunique() == 5
    code, out, _ = run(["export", graph, "--to", "splitgraph", "-o", study / "sg_graph.json"], capsys)
    assert code == 0 and orjson.loads((study / "sg_graph.json").read_bytes())["splitGraph_object"] == "dependency_graph"

    # import: splitGraph's own files become depgraph files
    imported = study / "imported.json"
    code, out, _ = run(["import", "splitgraph", CONFORMANCE / "splitgraph_json" / "spec_time.json", "-o", imported],
                       capsys)  # fmt: skip
    assert code == 0 and orjson.loads(imported.read_bytes())["constraint"]["mode"] == "time"
    code, _, _ = run(["import", "splitgraph", CONFORMANCE / "splitgraph_json" / "graph.json", "-o",
                      study / "g2.json"], capsys)  # fmt: skip
    assert code == 0 and run(["validate", study / "g2.json"], capsys)[0] == 0

    # diff: identical, relabelled, changed
    assert run(["diff", spec, spec], capsys)[:2] == (0, f"identical: both specs carry digest "
                                                         f"{orjson.loads(spec.read_bytes())['digest']}\n")  # fmt: skip
    assert run(["derive", graph, "--mode", "relatedness", "-o", study / "rel.json"], capsys)[0] == 0
    code, out, _ = run(["diff", spec, study / "rel.json"], capsys)
    assert code == 0 and "same grouping (group labels differ)" in out
    assert run(["derive", graph, "--mode", "batch", "-o", study / "batch.json"], capsys)[0] == 0
    code, out, _ = run(["diff", spec, study / "batch.json", "--limit", "2"], capsys)
    assert code == 1 and "8 sample(s) changed group" in out and "and 6 more" in out  # P5 stays whole


def test_import_and_export_refuse_unknown_targets(tmp_path, capsys):
    code, _, err = run(["import", "rsample", "x.json", "-o", tmp_path / "o.json"], capsys)
    assert code == 2 and err.startswith("depgraph: invalid_argument:")
    code, _, err = run(["export", "x.json", "--to", "excel", "-o", tmp_path / "o.xlsx"], capsys)
    assert code == 2 and "excel" in err
