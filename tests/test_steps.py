"""The commands' work as library functions (``depgraph.study.graphs``, ``steps``, ``reviews``, ``exchange``,
``starter``): called from Python they write the files the command line writes, byte for byte (timestamps aside),
and refuse a parameter that does not apply by its Python name, which the command line says as its option."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from depgraph.cli.main import main
from depgraph.errors import DepgraphError
from depgraph.io.outputs import Outputs
from depgraph.study.exchange import export_file, import_file
from depgraph.study.graphs import build_file
from depgraph.study.reviews import (
    audit_file,
    check_file,
    diff_files,
    evaluate_file,
    report_file,
    validate_file,
)
from depgraph.study.starter import write_starter_file
from depgraph.study.steps import derive_file, fold_file

META = "sample_id,subject_id,batch_id\nS1,P1,B1\nS2,P1,B1\nS3,P2,B2\nS4,P3,B2\nS5,P4,B1\nS6,P5,B2\nS7,P6,B1\nS8,P7,B2\n"
FEATURES = "sample_id,f1,f2\nS1,1,0\nS2,1,0.0001\nS3,0,1\nS4,0.3,1\nS5,1,1\nS6,0.5,0.1\nS7,0.2,0.9\nS8,0.9,0.4\n"


def cli(*args: object) -> int:
    return main([str(a) for a in args])


def without_clock(path: Path) -> dict:
    doc = json.loads(path.read_text())
    doc.pop("created_at", None)  # a spec's clock
    doc.get("generator", {}).pop("created_at", None)  # a graph's
    return doc


@pytest.fixture
def folder(tmp_path: Path) -> Path:
    (tmp_path / "meta.csv").write_text(META)
    (tmp_path / "features.csv").write_text(FEATURES)
    return tmp_path


def test_build_derive_and_folds_from_python_write_the_commands_files(folder: Path) -> None:
    assert cli("build", folder / "meta.csv", "-o", folder / "cli-graph.json") == 0
    graph = build_file(folder / "meta.csv", folder / "graph.json", plan=Outputs(), form="json", name="meta")
    assert len(graph.sample_ids) == 8
    assert (folder / "graph.json").read_bytes() == (folder / "cli-graph.json").read_bytes()

    assert cli("derive", folder / "graph.json", "--mode", "subject", "-o", folder / "cli-spec.json") == 0
    derived = derive_file(folder / "graph.json", folder / "spec.json", "subject", plan=Outputs(), form="json")
    assert derived.result.n_samples == 8 and derived.key_fingerprint is None
    assert without_clock(folder / "spec.json") == without_clock(folder / "cli-spec.json")

    assert cli("folds", folder / "spec.json", "--scheme", "group-kfold", "-k", "2", "-o", folder / "cli-f.json") == 0
    folded = fold_file(folder / "spec.json", folder / "f.json", "group-kfold", {"n_splits": 2}, plan=Outputs(),
                       form="json")  # fmt: skip
    assert folded.result["scheme"] == "group-kfold"
    assert without_clock(folder / "f.json") == without_clock(folder / "cli-f.json")


def test_the_reviewing_functions_return_what_the_commands_print(folder: Path) -> None:
    build_file(folder / "meta.csv", folder / "graph.json", plan=Outputs(), form="json")
    derive_file(folder / "graph.json", folder / "spec.json", "subject", plan=Outputs(), form="json")
    fold_file(folder / "spec.json", folder / "f.json", "group-kfold", {"n_splits": 2}, plan=Outputs(), form="json")
    found = validate_file(folder / "graph.json", n_splits=2)
    assert found.spec is None and found.report is not None and found.report.valid
    spec = validate_file(folder / "f.json")
    assert spec.report is None and spec.spec is not None and spec.digest == spec.spec.digest

    diff = diff_files(folder / "spec.json", folder / "f.json")
    assert diff.digests[1] == spec.spec.digest != diff.digests[0] and not diff.same_digest
    assert not len(diff.changed) and diff.folds_differ  # the same groups; only one carries folds

    assignment = folder / "split.csv"  # S1 and S2 (subject P1) on two sides: the group straddles
    assignment.write_text("sample_id,fold\nS1,0\nS2,1\nS3,0\nS4,1\nS5,0\nS6,1\nS7,0\nS8,1\n")
    checked = check_file(folder / "spec.json", assignment, graph_file=folder / "graph.json")
    assert list(checked.straddling.groups["n_samples"]) == [2] and checked.exposure is not None

    pairs = audit_file(folder / "graph.json", folder / "features.csv", plan=Outputs(), threshold=0.999)
    assert [(p.id1, p.id2) for p in pairs.itertuples()] == [("S1", "S2")]
    report_file(folder / "f.json", folder / "r.html", plan=Outputs())
    assert (folder / "r.html").read_text().lstrip().lower().startswith("<!doctype html>")


def test_evaluate_export_import_and_init_from_python(folder: Path) -> None:
    build_file(folder / "meta.csv", folder / "graph.json", plan=Outputs(), form="json")
    derive_file(folder / "graph.json", folder / "spec.json", "subject", plan=Outputs(), form="json")
    fold_file(folder / "spec.json", folder / "f.json", "group-kfold", {"n_splits": 2}, plan=Outputs(), form="json")
    export_file(folder / "f.json", folder / "folds.csv", "fold-table", plan=Outputs())
    table = (folder / "folds.csv").read_text().splitlines()
    assert table[0] == "sample_id,repeat,fold,role" and len(table) == 1 + 8 * 2
    rows = [line.split(",") for line in table[1:]]
    scores = {"S1": 0.9, "S2": 0.8, "S3": 0.2, "S4": 0.7, "S5": 0.3, "S6": 0.6, "S7": 0.1, "S8": 0.4}
    labels = {"S1": 1, "S2": 1, "S3": 0, "S4": 1, "S5": 0, "S6": 1, "S7": 0, "S8": 0}
    predictions = folder / "p.csv"
    predictions.write_text("sample_id,split,role,score,label\n" + "".join(
        f"{s},{fold},{role},{scores[s]},{labels[s]}\n" for s, _, fold, role in rows))  # fmt: skip
    report = evaluate_file(folder / "f.json", predictions, plan=Outputs(), output=folder / "e.json",
                           table_format="json", n_boot=0)  # fmt: skip
    assert len(json.loads((folder / "e.json").read_text())["rows"]) == len(report.table) >= 2

    export_file(folder / "spec.json", folder / "sg.json", "splitgraph", plan=Outputs())
    again = import_file(folder / "sg.json", folder / "back.json", plan=Outputs(), form="json")
    assert list(again.samples["group_id"]) == list(validate_file(folder / "f.json").spec.samples["group_id"])

    mapped = write_starter_file(folder / "meta.csv", folder / "study.toml", plan=Outputs())
    assert mapped == {"sample_id": "sample_id", "subject_id": "subject_id", "batch_id": "batch_id"}
    assert (folder / "study.toml").read_text().startswith("#")


@pytest.mark.parametrize(
    ("call", "parameter", "option", "args"),
    [
        (lambda f: validate_file(f / "spec.json", n_splits=5), "n_splits", "-k/--n-splits/--folds/--n-folds",
         ["validate", "{spec}", "--n-splits", "5"]),
        (lambda f: build_file(f / "ids.csv", f / "g2.json", plan=Outputs(), form="json", outcome_scope="subject"),
         "outcome_scope", "--outcome-scope", ["build", "{ids}", "--outcome-scope", "subject", "-o", "{out}"]),
        (lambda f: export_file(f / "spec.json", f / "sg2.json", "splitgraph", plan=Outputs(),
                               splitgraph_version="0.2.0"), "splitgraph_version", "--splitgraph-version",
         ["export", "{spec}", "--to", "splitgraph", "--splitgraph-version", "0.2.0", "-o", "{out}"]),
        (lambda f: audit_file(f / "graph.json", f / "m.npy", plan=Outputs(), id_column="sid"), "id_column",
         "--id-column/--ids-column", ["audit", "{graph}", "{npy}", "--id-column", "sid"]),
    ],
)  # fmt: skip
def test_a_parameter_that_does_not_apply_is_refused_by_its_name(folder, capsys, call, parameter, option, args):
    import numpy as np

    (folder / "ids.csv").write_text("sample_id,colour\nS1,A\nS2,B\n")
    np.save(folder / "m.npy", np.eye(8))
    build_file(folder / "meta.csv", folder / "graph.json", plan=Outputs(), form="json")
    derive_file(folder / "graph.json", folder / "spec.json", "subject", plan=Outputs(), form="json")
    with pytest.raises(DepgraphError) as refused:
        call(folder)
    assert refused.value.code == "invalid_argument" and refused.value.details["parameter"] == parameter
    assert refused.value.message.startswith(f"{parameter} does not apply")
    paths = {"spec": folder / "spec.json", "graph": folder / "graph.json", "ids": folder / "ids.csv",
             "npy": folder / "m.npy", "out": folder / "out.json"}  # fmt: skip
    capsys.readouterr()
    assert main([a.format(**{k: str(v) for k, v in paths.items()}) for a in args]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"depgraph: invalid_argument: {option} does not apply") and err.count("\n") == 1
    assert not (folder / "out.json").exists() and not (folder / "g2.json").exists()


def test_what_the_functions_refuse_from_python_and_in_what_order(folder, capsys, monkeypatch):
    """From Python: an unknown fold parameter, an export target that is not one, a key given for a graph, each
    refused by code (never a KeyError or a silent table). On the command line the refusals come in the order they
    came before the commands called one function: a .npy's options before the outputs, a prior spec read before
    the engine's output form is checked."""
    import numpy as np

    build_file(folder / "meta.csv", folder / "graph.json", plan=Outputs(), form="json")
    derive_file(folder / "graph.json", folder / "spec.json", "subject", plan=Outputs(), form="json")
    refusals = [
        (lambda: fold_file(folder / "spec.json", folder / "f.json", "holdout", {"bogus": 1}, plan=Outputs(),
                           form="json"), "'bogus' does not apply to scheme 'holdout'"),
        (lambda: export_file(folder / "spec.json", folder / "x.csv", "bogus", plan=Outputs()), "not 'bogus'"),
        (lambda: export_file(folder / "graph.json", folder / "g2.json", "json", plan=Outputs(), excel_safe=True),
         "excel_safe does not apply to json"),
        (lambda: validate_file(folder / "graph.json", verify_key=b"k" * 32), "verify_key does not apply"),
        (lambda: evaluate_file(folder / "spec.json", folder / "p.csv", plan=Outputs(), boot=5), "boot: not an option"),
    ]  # fmt: skip
    for call, words in refusals:
        with pytest.raises(DepgraphError) as refused:
            call()
        assert refused.value.code == "invalid_argument" and words in refused.value.message, refused.value
    assert not (folder / "x.csv").exists() and not (folder / "g2.json").exists()
    np.save(folder / "m.npy", np.eye(8))
    (folder / "weird.json").write_text('{"format": "something"}')
    monkeypatch.setenv("DG_KEY", "0f1e2d3c4b5a69788796a5b4c3d2e1f00112233445566778899aabbccddeeff")  # an example
    commands = [
        (["audit", "graph.json", "m.npy", "--id-column", "x", "--excel-safe", "-o", "out.parquet"],
         "invalid_argument: --id-column/--ids-column does not apply to a .npy matrix"),
        (["folds", "spec.json", "--scheme", "balanced-holdout", "--prior", "weird.json", "--engine", "spark", "-o",
          "o.json"], "schema: spec file"),
        (["validate", "graph.json", "--verify-key-env", "DG_KEY"], "invalid_argument: --verify-key-env does not apply"),
    ]  # fmt: skip
    for args, start in commands:
        capsys.readouterr()
        assert main([str(folder / a) if (folder / a).exists() else a for a in args]) == 2
        err = capsys.readouterr().err
        assert err.startswith(f"depgraph: {start}") and err.count("\n") == 1, (args, err)
