"""The depgraph command end to end: build → validate → derive, and demo."""

from __future__ import annotations

import orjson
import pandas as pd
import pytest

from depgraph import add_relations
from depgraph.cli.demo import run_story
from depgraph.cli.main import main
from depgraph.spec.files import read_spec


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
    g = add_relations(g, pd.DataFrame({"source": ["S1"], "target": ["B2"]}), "sample_processed_in_batch")
    write_graph(g, tmp_path / "bad.json")
    code, out, _ = run(["validate", tmp_path / "bad.json"], capsys)
    assert code == 1 and "sample_multiple_batch_assignments" in out


@pytest.mark.slow  # the whole demo: ~7 s; CI runs it (--slow)
def test_demo_tells_the_story_and_writes_its_files(tmp_path, capsys):
    code, out, err = run(["demo", "-o", tmp_path], capsys)
    assert (code, err) == (0, "")
    assert "6 pair(s) found, written back" in out
    assert (
        "1) subject grouping: 86 groups — related subject pairs crossing a fold: 35, duplicate pairs crossing: 6" in out
    )
    assert "crossing a fold: 0, duplicate pairs crossing: 0" in out
    assert "5. verdict for relatedness + audited duplicates (composite/strict): nothing crosses: no dependency of " \
        "sample_belongs_to_subject, subject_related_to, sample_duplicate_of crosses a split" in out  # fmt: skip
    assert sorted(p.name for p in tmp_path.iterdir()) == [
        "audited_duplicates.csv", "features.csv", "graph.json", "kinship.csv", "metadata.csv", "report.html",
        "spec.json", "study.toml",
    ]  # fmt: skip
    # the spec is the study file's, run in one process: the story's last design, recording what it was made from
    spec, told = read_spec(tmp_path / "spec.json"), run_story().chapters[-1].spec
    assert spec.samples.equals(told.samples)  # same groups (the spec's constraint names the files it was built from)
    assert [s.test.tolist() for s in spec.folds.splits] == [s.test.tolist() for s in told.folds.splits]
    assert [f.path for f in spec.provenance.inputs] == ["metadata.csv", "kinship.csv", "features.csv"]
    assert run(["run", "--check", tmp_path / "study.toml"], capsys)[0] == 0
    # the written inputs rebuild the same graph through the CLI: build, then audit with write-back
    assert run(["build", tmp_path / "metadata.csv", "--kinship", tmp_path / "kinship.csv", "--kinship-threshold",
                "first", "-o", tmp_path / "again.json"], capsys)[0] == 0  # fmt: skip
    code, out, _ = run(["audit", tmp_path / "again.json", tmp_path / "features.csv", "--write-back", "-o",
                        tmp_path / "audited.json"], capsys)  # fmt: skip
    assert code == 0 and "6 pair(s)" in out
    a = orjson.loads((tmp_path / "graph.json").read_bytes())
    b = orjson.loads((tmp_path / "audited.json").read_bytes())
    assert a["nodes"] == b["nodes"] and a["edges"] == b["edges"]


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
    assert run(["export", spec, "--to", "splitgraph", "-o", study / "sg.json"], capsys) == (
        0,
        f"wrote {study}/sg.json\n",
        "",
    )
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
    code, out, _ = run(["import", "--from", "splitgraph", CONFORMANCE / "splitgraph_json" / "spec_time.json", "-o",
                        imported], capsys)  # fmt: skip
    assert code == 0 and orjson.loads(imported.read_bytes())["constraint"]["mode"] == "time"
    code, _, _ = run(["import", "--from", "splitgraph", CONFORMANCE / "splitgraph_json" / "graph.json", "-o",
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


def test_export_to_splitgraph_says_what_it_leaves_out(study, capsys):
    graph, spec, folds = study / "graph.json", study / "spec.json", study / "folds.json"
    assert run(["build", study / "meta.csv", "--column", "subject_id=patient", "--kinship", study / "kin.csv",
                "--kinship-threshold", "first", "-o", graph], capsys)[0] == 0  # fmt: skip
    assert run(["derive", graph, "--mode", "subject", "-o", spec], capsys)[0] == 0
    assert run(["folds", spec, "--scheme", "group-kfold", "-k", "2", "-o", folds], capsys)[0] == 0
    code, out, err = run(["export", folds, "--to", "splitgraph", "-o", study / "sg.json"], capsys)
    assert code == 0 and out == f"wrote {study}/sg.json\n"
    assert err == (
        "depgraph: warning: splitgraph_export_drops: splitGraph's split_spec cannot hold the folds (2 split(s) of "
        "group-kfold): left out\n"
    )
    assert "folds" not in orjson.loads((study / "sg.json").read_bytes())
    code, out, err = run(["export", graph, "--to", "splitgraph", "--splitgraph-version", "0.2.0", "-o",
                          study / "old.json"], capsys)  # fmt: skip
    assert code == 0 and out == f"wrote {study}/old.json\n"
    kin = pd.read_csv(study / "kin.csv")
    related = int((kin["kinship"] >= 0.177).sum())  # "first": first-degree relatives and closer
    assert err == (
        "depgraph: warning: splitgraph_export_drops: splitGraph 0.2.0's dependency_graph cannot hold "
        f"{related} subject_related_to edge(s): left out\n"
    )
    code, _, err = run(["export", graph, "--to", "splitgraph", "-o", study / "released.json"], capsys)
    assert code == 0 and "splitGraph 0.2.0's dependency_graph cannot hold" in err  # the release, by default
    released, old = (orjson.loads((study / name).read_bytes()) for name in ("released.json", "old.json"))
    for written in (released, old):
        del written["metadata"]["created_at"]
    assert released == old
    new = ["export", graph, "--to", "splitgraph", "--splitgraph-version", "0.4.0", "-o", study / "new.json"]
    assert run(new, capsys)[2] == ""  # 0.4.0 holds all


def test_import_and_export_refuse_unknown_targets(tmp_path, capsys):
    code, _, err = run(["import", "--from", "rsample", "x.json", "-o", tmp_path / "o.json"], capsys)
    assert code == 2 and err.startswith("depgraph: invalid_argument:")
    code, _, err = run(["export", "x.json", "--to", "excel", "-o", tmp_path / "o.xlsx"], capsys)
    assert code == 2 and "excel" in err


@pytest.fixture
def subject_spec(tmp_path, study, capsys):
    graph, spec = study / "graph.json", study / "spec.json"
    meta = pd.read_csv(study / "meta.csv").assign(sex=["f", "m"] * 5)
    meta.to_csv(study / "meta.csv", index=False)
    assert run(["build", study / "meta.csv", "--column", "subject_id=patient", "-o", graph], capsys)[0] == 0
    assert run(["derive", graph, "--mode", "subject", "--attributes", "sex", "-o", spec], capsys)[0] == 0
    return spec


@pytest.mark.parametrize(
    "args",
    [
        ["--scheme", "group-kfold", "-k", "3", "--repeats", "2", "--seed", "7"],
        ["--scheme", "stratified-group-kfold", "-k", "2", "--stratify", "sex"],
        ["--scheme", "holdout", "--test-fraction", "0.3"],
        ["--scheme", "logo", "--by", "batch_group"],
        ["--scheme", "balanced-holdout", "--balance", "sex,batch_group", "--test-fraction", "0.4"],
    ],
)
def test_folds_command_writes_a_spec_with_folds(study, subject_spec, capsys, args):
    out_spec = study / "folds.json"
    code, out, err = run(["folds", subject_spec, *args, "-o", out_spec], capsys)
    assert (code, err) == (0, ""), err
    doc = orjson.loads(out_spec.read_bytes())
    assert doc["folds"]["scheme"] == args[1] and doc["folds"]["splits"]
    assert "split(s)" in out
    # every plan passes its own check
    table = study / "table.csv"
    assert run(["export", out_spec, "--to", "fold-table", "-o", table], capsys)[0] == 0
    long = pd.read_csv(table)
    assert long.columns.tolist() == ["sample_id", "repeat", "fold", "role"]
    for (_, _), split in long.groupby(["repeat", "fold"]):
        split[["sample_id", "role"]].to_csv(study / "one.csv", index=False)
        assert run(["check", out_spec, study / "one.csv"], capsys)[0] == 0


def test_hash_folds_take_the_salt_from_the_environment(study, subject_spec, capsys, monkeypatch):
    monkeypatch.delenv("SITE_SALT", raising=False)
    code, _, err = run(["folds", subject_spec, "--scheme", "hash", "--salt-env", "SITE_SALT", "-o", study / "h.json"],
                       capsys)  # fmt: skip
    assert code == 2 and "SITE_SALT" in err and not (study / "h.json").exists()
    monkeypatch.setenv("SITE_SALT", "consortium salt")
    code, _, _ = run(["folds", subject_spec, "--scheme", "hash", "-k", "2", "--salt-env", "SITE_SALT", "-o",
                      study / "h.json"], capsys)  # fmt: skip
    assert code == 0
    text = (study / "h.json").read_text()
    assert "consortium salt" not in text and "salt_fingerprint" in text


def test_balanced_holdout_keeps_a_prior_split(study, subject_spec, capsys):
    first = study / "first.json"
    assert run(["folds", subject_spec, "--scheme", "balanced-holdout", "--balance", "sex", "-o", first], capsys)[0] == 0
    second = study / "second.json"
    code, _, _ = run(["folds", subject_spec, "--scheme", "balanced-holdout", "--balance", "sex", "--prior", first,
                      "--seed", "99", "-o", second], capsys)  # fmt: skip
    assert code == 0
    a, b = (orjson.loads(p.read_bytes())["folds"]["splits"][0]["test"] for p in (first, second))
    assert a == b  # every group was placed before: nothing moves


def test_check_lists_straddling_groups_and_exits_1(study, subject_spec, capsys):
    naive = pd.DataFrame({"sample_id": [f"P{p}-T{t}" for p in range(1, 6) for t in (0, 1)], "fold": [0, 1] * 5})
    naive.to_csv(study / "naive.csv", index=False)
    code, out, _ = run(["check", subject_spec, study / "naive.csv"], capsys)
    assert code == 1 and "5 group(s) straddle the split" in out and "subject:P1: 2 samples in 0, 1" in out
    naive.rename(columns={"sample_id": "id", "fold": "cv"}).to_csv(study / "renamed.csv", index=False)
    code, _, _ = run(["check", subject_spec, study / "renamed.csv", "--id-column", "id", "--split-column", "cv"],
                     capsys)  # fmt: skip
    assert code == 1
    pd.DataFrame({"sample_id": ["nobody"], "fold": [1]}).to_csv(study / "stranger.csv", index=False)
    code, _, err = run(["check", subject_spec, study / "stranger.csv"], capsys)
    assert code == 2 and err.startswith("depgraph: reference:") and "nobody" in err


def test_check_with_the_graph_shows_what_crosses(study, capsys):
    graph, spec = study / "g.json", study / "s.json"
    assert run(["build", study / "meta.csv", "--column", "subject_id=patient", "--kinship", study / "kin.csv",
                "--kinship-threshold", "first", "-o", graph], capsys)[0] == 0  # fmt: skip
    assert run(["derive", graph, "--mode", "subject", "-o", spec], capsys)[0] == 0
    # subjects kept whole, but siblings P1/P2 on two sides
    by_subject = pd.DataFrame({"sample_id": [f"P{p}-T{t}" for p in range(1, 6) for t in (0, 1)],
                               "fold": [0, 0, 1, 1, 0, 0, 1, 1, 0, 0]})  # fmt: skip
    by_subject.to_csv(study / "folds.csv", index=False)
    code, out, _ = run(["check", spec, study / "folds.csv", "--graph", graph], capsys)
    # no group straddles, but the siblings cross: a declared dependency leaks, so the check fails (exit 1)
    assert code == 1 and "no group straddles" in out and "dependencies per declared relation" in out
    assert "dependencies cross a split: subject_related_to (2, not followed)" in out
    # the counts in plain words, each word explained once in the header line
    assert "kept whole: all their samples in one group, a split of whole groups cannot cut them" in out
    assert "spread over groups: in two or more groups, a split may cut them" in out
    assert "crossing a split: a sample on the train side and one on the test side" in out
    assert (
        "subject_related_to (not followed): 2 pairs link samples: 0 kept whole, 2 spread over groups, "
        "2 crossing a split — e.g. P1~P2" in out
    )
    assert (
        "sample_belongs_to_subject (followed): 5 entities link samples: 5 kept whole, 0 spread over groups, "
        "0 crossing a split" in out
    )
    assert "severed" not in out and "exposed" not in out
    assert "sample_processed_in_batch: 3 blocks over 2 test sets" in out


@pytest.mark.parametrize(
    "args,code,fragment",
    [
        (["--scheme", "bogus"], "invalid_argument", "bogus"),
        (["--scheme", "group-kfold", "-k", "50"], "too_few_groups", "50 folds"),
        (["--scheme", "stratified-group-kfold", "-k", "2", "--stratify", "ethnicity"], "invalid_argument", "ethnicity"),
        (["--scheme", "time", "-k", "1", "--embargo", "1"], "invalid_argument", "train_after"),
        (["--scheme", "hash"], "invalid_argument", "--salt-env"),
        (["--scheme", "holdout", "--test-fraction", "0"], "invalid_argument", "fraction"),
    ],
)
def test_folds_requests_that_cannot_be_honoured(study, subject_spec, capsys, args, code, fragment):
    target = study / "never.json"
    exit_code, _, err = run(["folds", subject_spec, *args, "-o", target], capsys)
    assert exit_code == 2 and err.startswith(f"depgraph: {code}:") and fragment in err
    assert len(err.strip().splitlines()) == 1 and not target.exists()


def test_time_folds_on_a_time_spec_and_refused_on_subjects(study, subject_spec, capsys):
    graph, time_spec = study / "graph.json", study / "time.json"
    assert run(["derive", graph, "--mode", "time", "-o", time_spec], capsys)[0] == 0
    code, out, _ = run(["folds", time_spec, "--scheme", "time", "-k", "1", "-o", study / "tf.json"], capsys)
    assert code == 0 and "train sizes [5], test sizes [5], excluded [0]" in out
    split = orjson.loads((study / "tf.json").read_bytes())["folds"]["splits"][0]
    assert (split["n_train"], split["n_test"], split["n_excluded"]) == (5, 5, 0)
    code, _, err = run(["folds", subject_spec, "--scheme", "time", "-k", "1", "-o", study / "no.json"], capsys)
    assert code == 2 and "no training samples" in err  # every subject spans both visits


def test_time_folds_print_train_test_and_excluded_sizes_per_split(tmp_path, capsys):
    per_level = [1, 2, 3, 4, 5, 6]  # samples at visits V0..V5
    meta = pd.DataFrame(
        [{"sample_id": f"S{t}-{i}", "timepoint_id": f"V{t}", "time_index": t}
         for t, n in enumerate(per_level) for i in range(n)]
    )  # fmt: skip
    meta.to_csv(tmp_path / "meta.csv", index=False)
    graph, spec, folds = tmp_path / "g.json", tmp_path / "s.json", tmp_path / "f.json"
    assert run(["build", tmp_path / "meta.csv", "-o", graph], capsys)[0] == 0
    assert run(["derive", graph, "--mode", "time", "-o", spec], capsys)[0] == 0
    code, out, err = run(["folds", spec, "--scheme", "time", "-k", "2", "--gap", "1", "-o", folds], capsys)
    assert code == 0, err
    # six levels in three blocks of two; split i tests block i, trains on the levels before it but the gap level
    blocks = [[0, 1], [2, 3], [4, 5]]
    train, test, excluded = [], [], []
    for block in blocks[1:]:
        trained = range(0, block[0] - 1)
        test.append(sum(per_level[t] for t in block))
        train.append(sum(per_level[t] for t in trained))
        excluded.append(sum(per_level) - test[-1] - train[-1])
    assert train == [1, 6] and excluded == [13, 4]  # the arithmetic above, spelt out
    assert f"time: 2 split(s); train sizes {train}, test sizes {test}, excluded {excluded}" in out
    splits = orjson.loads(folds.read_bytes())["folds"]["splits"]
    recorded = [(s["n_train"], s["n_test"], s["n_excluded"]) for s in splits]
    assert recorded == list(zip(train, test, excluded, strict=True))


def test_slow_stages_show_progress_on_a_terminal_only(monkeypatch):
    import io
    import time

    from rich.console import Console

    import depgraph.cli.commandline as cli

    monkeypatch.setattr(cli, "PROGRESS_DELAY", 0.05)
    screen = io.StringIO()
    monkeypatch.setattr(cli, "progress_console", Console(file=screen, force_terminal=True, width=80))
    with cli.stage("crunching numbers"):
        time.sleep(0.4)
    assert "crunching numbers" in screen.getvalue()
    quiet = io.StringIO()
    monkeypatch.setattr(cli, "progress_console", Console(file=quiet, force_terminal=False))
    with cli.stage("crunching numbers"):
        time.sleep(0.2)
    assert quiet.getvalue() == ""


def test_ids_that_look_like_markup_are_printed_as_they_are(tmp_path, capsys):
    """Ids, columns and paths are data: text such as ``[/y]`` or ``[bold]`` in them is shown, never interpreted."""
    subjects = ["P[/y]1", "P[/y]1", "[bold]P2", "[bold]P2", "P3", "P3"]
    meta = pd.DataFrame(
        {
            "sample_id": [f"S[/{i}]" for i in range(6)],
            "subject_id": subjects,
            "batch_id": ["[red]B1", "[red]B1", "[red]B1", "B2", "B2", "B2"],
            "outcome_id": ["case", "control"] * 3,
        }
    )
    folder = tmp_path / "[x]"
    folder.mkdir()
    meta.to_csv(folder / "meta.csv", index=False)
    pd.DataFrame({"id1": ["P[/y]1"], "id2": ["[bold]P2"], "kinship": [0.25]}).to_csv(folder / "kin.csv", index=False)
    features = pd.DataFrame({"sample_id": meta["sample_id"], "f1": [1.0, 1.0, 0.0, 0.5, 0.2, 0.9], "f2": 1.0})
    features.to_csv(folder / "features.csv", index=False)
    pd.DataFrame({"sample_id": meta["sample_id"], "split": ["train", "test"] * 3}).to_csv(
        folder / "split.csv", index=False
    )
    graph, spec, folds = folder / "g.json", folder / "s.json", folder / "f.json"
    printed = []
    for args, status in (
        (["build", folder / "meta.csv", "--kinship", folder / "kin.csv", "--kinship-threshold", "0.1", "-o", graph], 0),
        (["validate", graph], 0),
        (["derive", graph, "--mode", "subject", "-o", spec], 0),
        (["folds", spec, "--scheme", "group-kfold", "-k", "2", "-o", folds], 0),
        (["validate", folds], 0),
        (["diff", spec, folds], 1),  # the folds differ
        (["export", folds, "--to", "csv", "-o", folder / "samples.csv"], 0),
        (["check", spec, folder / "split.csv", "--graph", graph], 1),  # every subject straddles
        (["audit", graph, folder / "features.csv", "--threshold", "0.99"], 0),
        (["report", folds, "--graph", graph, "-o", folder / "r.html"], 0),
    ):
        code, out, err = run(args, capsys)
        assert code == status, (args[0], code, err)
        assert "Traceback" not in err and "MarkupError" not in err, err
        printed.append(out)
    shown = "\n".join(printed)
    for text in ("S[/0]", "P[/y]1", "[bold]P2", "[x]"):
        assert text in shown, text


def test_derive_counts_one_of_a_thing_in_the_singular(tmp_path, capsys):
    meta = tmp_path / "cohort.csv"
    meta.write_text("sample_id,subject_id\nS1,P1\nS2,P2\n")
    graph = tmp_path / "graph.json"
    assert main(["build", str(meta), "-o", str(graph)]) == 0
    capsys.readouterr()
    assert main(["derive", str(graph), "--mode", "subject", "-o", str(tmp_path / "spec.json")]) == 0
    out = capsys.readouterr().out
    assert "2 samples in 2 groups; largest subject:P1 (1 sample), 2 singletons" in out, out
