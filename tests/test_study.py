"""The study file: read and checked before any table is read, run in one process, re-checked, started by init.

Expected values come from the inputs themselves (hashlib over the files' bytes, the TOML as written, the commands of
the step-by-step path), never from the code under test.
"""

from __future__ import annotations

import hashlib
import json
import os
import sys
import tempfile
from pathlib import Path

import orjson
import pandas as pd
import pytest
import tomllib
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

from depgraph import DepgraphError, DepgraphWarning, Study, from_metadata, read_spec, validate
from depgraph.cli.main import main
from depgraph.study.sections import TABLES
from tests.documents import redigest

KEY = "a study signing key that is long enough to pass"
PSEUDONYM_KEY = "a pseudonymisation key that is long enough too"

STUDY = """\
version = 1
name = "cohort"

[metadata]
path = "metadata.csv"

[metadata.columns]
sample_id = "sample_id"
subject_id = "patient"
batch_id = "batch_id"
outcome_id = "outcome_id"

[kinship]
path = "kinship.csv"
threshold = "first"

[grouping]
mode = "relatedness"

[folds]
scheme = "stratified-group-kfold"
n_splits = 2
seed = 0

[outputs]
spec = "spec.json"
"""


def cohort(folder: Path, n_subjects: int = 6) -> Path:
    """A small family cohort: two samples per subject, subjects related in pairs, two batches, two outcomes."""
    rows = []
    for s in range(n_subjects):
        for v in range(2):
            rows.append({"sample_id": f"S{s}-{v}", "patient": f"P{s}", "batch_id": f"B{(s + v) % 2}",
                         "outcome_id": "case" if s % 3 == 0 else "control"})  # fmt: skip
    pd.DataFrame(rows).to_csv(folder / "metadata.csv", index=False)
    pairs = [(f"P{s}", f"P{s + 1}", 0.25) for s in range(0, n_subjects - 1, 2)]
    pd.DataFrame(pairs, columns=["id1", "id2", "kinship"]).to_csv(folder / "kinship.csv", index=False)
    (folder / "study.toml").write_text(STUDY)
    return folder / "study.toml"


def run(args: list, capsys) -> tuple[int, str, str]:
    code = main([str(a) for a in args])
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def files_in(folder: Path) -> set[str]:
    return {p.name for p in folder.iterdir()}


# --------------------------------------------------------------------------- run, provenance, check
def test_run_writes_a_spec_that_records_what_it_was_made_from(tmp_path, capsys):
    study = cohort(tmp_path)
    code, out, err = run(["run", study], capsys)
    assert code == 0, err
    assert "groups relatedness: 12 samples in 3 groups" in out and "wrote spec.json" in out
    assert "folds stratified-group-kfold, seed 0: 2 split(s)" in out and "stratum: control" in out
    spec = read_spec(tmp_path / "spec.json")
    record = spec.provenance
    raw = study.read_bytes()
    assert record.study_file.name == "study.toml"
    assert (record.study_file.size, record.study_file.sha256) == (len(raw), hashlib.sha256(raw).hexdigest())
    assert record.declaration == tomllib.loads(STUDY)  # the keys as written: nothing defaulted
    expected = [
        (key, name, len(raw := (tmp_path / name).read_bytes()), hashlib.sha256(raw).hexdigest())
        for key, name in (("metadata.path", "metadata.csv"), ("kinship.path", "kinship.csv"))
    ]
    assert [(f.key, f.path, f.size, f.sha256) for f in record.inputs] == expected
    # the groups are the family pairs: P0+P1, P2+P3, P4+P5
    assert spec.groups()["S1-0"] == spec.groups()["S0-1"] != spec.groups()["S2-0"]


def test_provenance_is_part_of_the_digest(tmp_path, capsys):
    study = cohort(tmp_path)
    assert run(["run", study], capsys)[0] == 0
    doc = orjson.loads((tmp_path / "spec.json").read_bytes())
    doc["provenance"]["inputs"][0]["sha256"] = "0" * 64
    (tmp_path / "edited.json").write_bytes(orjson.dumps(doc))
    with pytest.raises(DepgraphError) as err:
        read_spec(tmp_path / "edited.json")
    assert err.value.code == "integrity"
    (tmp_path / "redigested.json").write_bytes(orjson.dumps(redigest(doc)))  # a recomputed digest reads...
    assert read_spec(tmp_path / "redigested.json").provenance.inputs[0].sha256 == "0" * 64
    assert run(["run", "--check", study], capsys)[0] == 0  # ...and the spec on disk is still what it was


def test_check_is_identical_then_names_the_first_difference(tmp_path, capsys):
    study = cohort(tmp_path)
    assert run(["run", study], capsys)[0] == 0
    written = (tmp_path / "spec.json").read_bytes()
    code, out, _ = run(["run", "--check", study], capsys)
    assert code == 0 and out.startswith("identical: ")
    assert (tmp_path / "spec.json").read_bytes() == written and files_in(tmp_path) == {
        "study.toml", "metadata.csv", "kinship.csv", "spec.json"}  # fmt: skip

    kinship = (tmp_path / "kinship.csv").read_text()
    (tmp_path / "kinship.csv").write_text(kinship + "P1,P2,0.3\n")  # an input's bytes change, and a group with them
    code, out, _ = run(["run", "--check", study], capsys)
    assert code == 1
    assert "input 'kinship.csv' ([kinship] path) changed" in out and "changed group" in out
    (tmp_path / "kinship.csv").write_text(kinship)

    study.write_text(STUDY.replace("seed = 0", "seed = 7"))  # a key changes
    code, out, _ = run(["run", "--check", study], capsys)
    assert code == 1 and "study file key [folds] seed changed: 0 in the spec on disk, 7 now" in out

    study.write_text(STUDY + "# a comment\n")  # the file's bytes, not its keys
    code, out, _ = run(["run", "--check", study], capsys)
    assert code == 1 and "though no key did" in out and "every sample keeps its group and folds" in out
    assert (tmp_path / "spec.json").read_bytes() == written


def test_check_names_a_sample_whose_group_changed(tmp_path):
    study = cohort(tmp_path)
    before = Study.read(study).run().groups()
    meta = pd.read_csv(tmp_path / "metadata.csv")
    meta.loc[meta["sample_id"] == "S0-0", "patient"] = "P4"  # S0-0 joins the third family
    meta.to_csv(tmp_path / "metadata.csv", index=False)
    check = Study.read(study).check()
    assert not check.identical
    assert check.difference.startswith("input 'metadata.csv' ([metadata] path) changed")
    now = check.now.groups()
    assert f"sample 'S0-0' is in group {before['S0-0']!r} in the spec on disk, {now['S0-0']!r} now, with other" in (
        check.difference
    )


def test_check_without_a_spec_on_disk_is_an_error(tmp_path, capsys):
    study = cohort(tmp_path)
    code, out, err = run(["run", "--check", study], capsys)
    assert code == 2 and out == ""
    assert err.startswith("depgraph: io: study file") and "[outputs] spec 'spec.json' does not exist" in err


def test_the_python_face(tmp_path):
    study = Study.read(cohort(tmp_path))
    assert "grouping relatedness" in repr(study) and study.file.folds.n_splits == 2
    spec = study.run(write=False)
    assert not (tmp_path / "spec.json").exists()
    again = Study.from_dict(tomllib.loads(STUDY), base=tmp_path).run(write=False)
    assert again.provenance.study_file is None  # no file: the declaration alone
    assert again.with_provenance(None).digest == spec.with_provenance(None).digest
    everything = study.run_all()
    assert everything.report.valid and everything.partition.n_groups == 3
    assert everything.spec.digest == read_spec(tmp_path / "spec.json").digest


def test_run_signs_pseudonymises_and_writes_the_report_and_graph(tmp_path, capsys, monkeypatch):
    study = cohort(tmp_path)
    study.write_text(STUDY.replace('spec = "spec.json"', 'spec = "spec.dgspec"\nreport = "report.html"\n'
                                   'graph = "graph.json"\nsign_key_env = "SIGN"\npseudonymize_ids = true'))  # fmt: skip
    monkeypatch.setenv("SIGN", KEY)
    monkeypatch.setenv("DEPGRAPH_PSEUDONYM_KEY", PSEUDONYM_KEY)
    code, _out, err = run(["run", study], capsys)
    assert code == 0, err
    spec = read_spec(tmp_path / "spec.dgspec", verify_key=KEY)
    assert spec.pseudonymization is not None and spec.provenance is not None
    assert {"report.html", "graph.json", "spec.dgspec"} <= files_in(tmp_path)
    assert run(["run", "--check", study], capsys)[0] == 0
    monkeypatch.delenv("SIGN")
    code, _, err = run(["run", study], capsys)
    assert code == 2 and "SIGN" in err


# --------------------------------------------------------------------------- bad input: exit 2, one line, no output
def _edit(old: str, new: str):
    return lambda folder: (folder / "study.toml").write_text(STUDY.replace(old, new, 1))


def _append(text: str):
    return lambda folder: (folder / "study.toml").write_text(STUDY + text)


def _write(text: str):
    return lambda folder: (folder / "study.toml").write_text(text)


BAD = {
    "unknown key": (_edit("[grouping]\n", "[grouping]\nmdoe = 1\n"), "schema",
                    "[grouping] has no key 'mdoe'; did you mean 'mode'?"),
    "unknown role": (_edit('subject_id = "patient"', 'subjet_id = "patient"'), "schema",
                     "[metadata.columns] has no key 'subjet_id'; did you mean 'subject_id'?"),
    "key of another table": (_edit("[grouping]\n", "[grouping]\nseed = 1\n"), "schema",
                             "[grouping] has no key 'seed'; seed is a key of [folds]"),
    "unknown table": (_append("[groupng]\nmode = 'x'\n"), "schema", "top level has no key 'groupng'; did you mean 'grouping'?"),  # noqa: E501
    "wrong type": (_edit("n_splits = 2", 'n_splits = "2"'), "schema", "[folds] n_splits must be an integer, not text ('2')"),  # noqa: E501
    "name in another case": (_edit('mode = "relatedness"', 'mode = "Relatedness"'), "schema",
                             "did you mean 'relatedness'?"),
    "missing file": (_edit('path = "kinship.csv"', 'path = "kin.csv"'), "io",
                     "[kinship] path 'kin.csv': kinship file '"),
    "a directory": (lambda f: (f / "meta").mkdir() or _edit('path = "metadata.csv"', 'path = "meta"')(f), "io",
                    "[metadata] path 'meta': metadata '"),
    "mapped column absent": (_edit('batch_id = "batch_id"', 'batch_id = "batch"'), "schema",
                             "metadata.csv' has no column 'batch' (columns: sample_id"),
    "two roles on one column": (_edit('batch_id = "batch_id"', 'batch_id = "patient"'), "schema",
                                "[metadata.columns]: maps the column 'patient' onto subject_id and batch_id"),
    "threshold out of range": (_edit('threshold = "first"', "threshold = 1.5"), "schema",
                               "[kinship] threshold: kinship threshold must be within [0, 1], not 1.5"),
    "threshold not a degree": (_edit('threshold = "first"', 'threshold = "fourth"'), "schema",
                               "[kinship] threshold is 'fourth', which is not one of duplicate, first, second, third"),
    "not a number": (_edit('threshold = "first"', "threshold = nan"), "schema",
                     "[kinship] threshold must be a finite number, not a number (nan)"),
    "parameter of another scheme": (_edit("seed = 0", 'seed = 0\nstratify = "stratum"\nby = "batch_group"'), "schema",
                                    "[folds]: by does not apply to scheme 'stratified-group-kfold'"),
    "folds that cannot be made": (_edit("n_splits = 2", "n_splits = 9"), "too_few_groups", "9"),
    "version from the future": (_edit("version = 1", "version = 2"), "version",
                                "is a version 2 study file; this depgraph reads version 1: upgrade depgraph"),
    "no version": (_edit("version = 1\n", ""), "schema", "has no version; begin it with version = 1"),
    "not TOML": (_edit('name = "cohort"', "name = cohort"), "parse", "is not valid TOML: "),
    "prior that does not exist": (_edit("[folds]\nscheme = \"stratified-group-kfold\"\nn_splits = 2\nseed = 0",
                                        '[folds]\nscheme = "balanced-holdout"\nprior = "first.json"'), "io",
                                  "[folds] prior 'first.json': prior '"),
    "composite without a strategy": (_edit('mode = "relatedness"', 'mode = "composite"'), "schema",
                                     "[grouping]: mode composite needs a strategy"),
    "spec named for another kind": (_edit('spec = "spec.json"', 'spec = "spec.csv"'), "invalid_argument",
                                    "[outputs] spec: output"),
    "an output that is an input": (_edit('spec = "spec.json"', 'spec = "spec.json"\ngraph = "kinship.csv"'), "io",
                                   "[outputs] graph: "),
    "the spec is the study file": (lambda f: os.symlink("study.toml", f / "out.json") or _edit(
        'spec = "spec.json"', 'spec = "out.json"')(f), "io", "[outputs] spec: output"),
    "a path too long": (_edit('path = "kinship.csv"', f'path = "{"k" * 300}.csv"'), "io", "cannot be used: File name"),
    "a NUL in an output path": (_edit('spec = "spec.json"', 'spec = "spec\\u0000.json"'), "invalid_argument",
                                "holds a NUL character"),
    "a FIFO as an input": (lambda f: os.mkfifo(f / "fifo.csv") or _edit('path = "metadata.csv"', 'path = "fifo.csv"')(
        f), "io", "[metadata] path 'fifo.csv': metadata"),
    "a top-level key below a table": (_append('name = "again"\n'), "schema",
                                      "[outputs] has no key 'name'; name is a top-level key"),
    "a family role": (_edit('batch_id = "batch_id"', 'family_id = "batch_id"'), "schema",
                      "[metadata.columns] has no key 'family_id'; depgraph has no family role"),
    "the second of several tables": (_write(STUDY.replace("[metadata]\n", "[[metadata]]\n").replace(
        "[metadata.columns]", "[metadata.columns]") + '[[metadata]]\npath = "metadata.csv"\n[metadata.columns]\n'
        'sample_id = "sample_id"\nsubjet_id = "patient"\n'), "schema",
        "[metadata.columns] of [[metadata]] #2 has no key 'subjet_id'; did you mean 'subject_id'?"),
    "one fold": (_edit("n_splits = 2", "n_splits = 1"), "schema", "[folds] n_splits must be ≥ 2, not 1"),
    "an id template without IID": (_edit('threshold = "first"', 'threshold = "first"\nid_template = "{FID}"'),
                                   "schema", "[kinship] id_template: id_template '{FID}' must use {IID}"),
    "duplicates both ways": (_append("[duplicates]\npath = 'kinship.csv'\nfeatures = 'metadata.csv'\n"), "schema",
                             "[duplicates]: give path (a table of duplicate pairs) or features (a table to audit), no"),
    "an engine misspelt": (_edit('name = "cohort"', 'name = "cohort"\nengine = "sprak"'), "schema",
                           "top level engine is 'sprak', which is not one of single, spark; did you mean 'spark'?"),
    "Spark writing JSON": (_edit('name = "cohort"', 'name = "cohort"\nengine = "spark"'), "schema",
                           'engine = "spark" writes the columnar form: name [outputs] spec NAME.dgspec, not '
                           "'spec.json'"),
    "Spark settings without Spark": (_append('[spark]\nmaster = "local[2]"\n'), "schema",
                                     '[spark] applies with engine = "spark", not engine = \'single\''),
    "a setting that is not Spark's": (_write(STUDY.replace('name = "cohort"', 'name = "cohort"\nengine = "spark"')
                                             .replace("spec.json", "spec.dgspec")
                                             + '[spark]\nconf = { driver.memory = "4g" }\n'), "schema",
                                      "[spark.conf]: conf holds Spark settings (spark.*), not 'driver.memory'"),
}  # fmt: skip


@pytest.mark.parametrize("case", BAD, ids=list(BAD))
def test_bad_study_files_are_refused_by_name_and_nothing_is_written(tmp_path, capsys, case):
    cohort(tmp_path)
    make, code, fragment = BAD[case]
    make(tmp_path)
    before = files_in(tmp_path)
    exit_code, out, err = run(["run", tmp_path / "study.toml"], capsys)
    assert exit_code == 2 and out == ""
    assert err.count("\n") == 1 and err.startswith(f"depgraph: {code}: "), err
    assert fragment in err, err
    assert files_in(tmp_path) == before  # no spec, no temporary file


def test_a_study_on_spark_without_pyspark_says_which_extra_to_install(tmp_path, capsys, monkeypatch):
    for name in [n for n in sys.modules if n in ("pyspark", "py4j") or n.startswith(("pyspark.", "py4j.",
                                                                                      "depgraph.spark"))]:  # fmt: skip
        monkeypatch.delitem(sys.modules, name)
    for name in ("pyspark", "py4j"):  # an import of either fails, as where PySpark is not installed
        monkeypatch.setitem(sys.modules, name, None)
    study = cohort(tmp_path)
    on_spark = STUDY.replace('name = "cohort"', 'name = "cohort"\nengine = "spark"')
    study.write_text(on_spark.replace("spec.json", "s.dgspec"))
    before = files_in(tmp_path)
    code, out, err = run(["run", study], capsys)
    said = "depgraph: engine: the spark engine needs PySpark: pip install 'depgraph[spark]'\n"
    assert (code, out, err) == (2, "", said)
    assert files_in(tmp_path) == before


def test_a_prior_spec_from_another_cohort_is_refused(tmp_path, capsys):
    holdout = 'scheme = "balanced-holdout"\nbalance = ["stratum"]'
    for name, prefix, prior in (("other", "S", ""), ("here", "T", '\nprior = "../other/spec.json"')):
        folder = tmp_path / name
        folder.mkdir()
        cohort(folder, n_subjects=8)
        (folder / "metadata.csv").write_text((folder / "metadata.csv").read_text().replace("S", prefix))
        (folder / "study.toml").write_text(STUDY.replace('scheme = "stratified-group-kfold"\nn_splits = 2\nseed = 0',
                                                         holdout + prior))  # fmt: skip
    assert run(["run", tmp_path / "other" / "study.toml"], capsys)[0] == 0
    code, out, err = run(["run", tmp_path / "here" / "study.toml"], capsys)
    assert code == 2 and out == ""
    assert err.startswith("depgraph: reference: study file") and "[folds]: the prior spec shares no sample" in err, err
    assert not (tmp_path / "here" / "spec.json").exists()


def test_validation_errors_stop_the_run(tmp_path, capsys):
    cohort(tmp_path)
    meta = pd.read_csv(tmp_path / "metadata.csv")
    meta = pd.concat([meta, meta.iloc[[0]].assign(patient="P9")])  # a sample given two subjects
    meta.to_csv(tmp_path / "metadata.csv", index=False)
    code, out, err = run(["run", tmp_path / "study.toml"], capsys)
    assert code == 2 and out == ""
    assert err.startswith("depgraph: ") and "S0-0" in err
    assert not (tmp_path / "spec.json").exists()


# --------------------------------------------------------------------------- one code path: run == build, derive, folds
MODES = [
    ("subject", {}, []),
    ("relatedness", {}, []),
    (
        "composite",
        {"strategy": "strict", "via": ["relatedness", "duplicate"]},
        ["--strategy", "strict", "--via", "relatedness,duplicate"],
    ),
    (
        "composite",
        {"strategy": "rule_based", "priority": ["subject", "batch"]},
        ["--strategy", "rule_based", "--priority", "subject,batch"],
    ),
    ("batch", {}, []),
]
SCHEMES = [
    ({"scheme": "group-kfold", "n_splits": 2, "seed": 3}, ["--scheme", "group-kfold", "-k", "2", "--seed", "3"]),
    ({"scheme": "stratified-group-kfold", "n_splits": 2}, ["--scheme", "stratified-group-kfold", "-k", "2"]),
    (
        {"scheme": "holdout", "test_fraction": 0.3, "n_repeats": 2},
        ["--scheme", "holdout", "--test-fraction", "0.3", "--repeats", "2"],
    ),
    ({"scheme": "hash", "n_splits": 3, "salt_env": "SALT"}, ["--scheme", "hash", "-k", "3", "--salt-env", "SALT"]),
    ({"scheme": "logo", "by": "batch_group"}, ["--scheme", "logo", "--by", "batch_group"]),
    ({"scheme": "balanced-holdout", "balance": ["stratum"]}, ["--scheme", "balanced-holdout", "--balance", "stratum"]),
]


def _generated_cohort(folder: Path, data) -> None:
    n = data.draw(st.integers(6, 14), label="subjects")
    rows = []
    for s in range(n):
        for v in range(data.draw(st.integers(1, 3), label=f"samples of P{s}")):
            rows.append({"sample_id": f"S{s:02d}{'abc'[v]}", "patient": f"P{s}", "batch_id": f"B{(s + v) % 3}",
                         "outcome_id": ("case", "control")[data.draw(st.integers(0, 1))]})  # fmt: skip
    meta = pd.DataFrame(rows)
    meta = meta.sample(frac=1, random_state=data.draw(st.integers(0, 9), label="row order"))
    meta.to_csv(folder / "metadata.csv", index=False)
    pairs = data.draw(st.lists(st.tuples(st.integers(0, n - 1), st.integers(0, n - 1)), max_size=4), label="kin")
    kin = [(f"P{a}", f"P{b}", 0.25) for a, b in pairs if a != b]
    pd.DataFrame(kin or [("P0", "P1", 0.25)], columns=["id1", "id2", "kinship"]).to_csv(folder / "kinship.csv",
                                                                                         index=False)  # fmt: skip
    ids = st.sampled_from(meta["sample_id"].tolist())
    dups = data.draw(st.lists(st.tuples(ids, ids), max_size=2), label="dups")
    dups = [(a, b) for a, b in dups if a != b] or [(meta["sample_id"].iloc[0], meta["sample_id"].iloc[-1])]
    pd.DataFrame(dups, columns=["id1", "id2"]).to_csv(folder / "dups.csv", index=False)
    subset = sorted(meta["sample_id"])[: max(4, len(meta) * 3 // 4)]
    (folder / "subset.txt").write_text("\n".join(subset) + "\n")


def _toml(value) -> str:
    return json.dumps(value) if not isinstance(value, bool) else str(value).lower()


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=st.data())
def test_run_gives_the_specs_of_build_derive_folds(data, monkeypatch):
    mode, grouping, derive_options = data.draw(st.sampled_from(MODES), label="mode")
    folds, fold_options = data.draw(st.sampled_from(SCHEMES), label="scheme")
    subset, signed, pseudonymised = (data.draw(st.booleans(), label=x) for x in ("subset", "signed", "pseudonymised"))
    monkeypatch.setenv("SALT", "a salt")
    monkeypatch.setenv("SIGN", KEY)
    monkeypatch.setenv("DEPGRAPH_PSEUDONYM_KEY", PSEUDONYM_KEY)
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        _generated_cohort(folder, data)
        sign = ["--sign-key-env", "SIGN"] if signed else []
        steps = [
            ["build", "metadata.csv", "--name", "cohort", "--column", "subject_id=patient", "--kinship", "kinship.csv",
             "--kinship-threshold", "first", "--duplicates", "dups.csv", "-o", "graph.json"],
            ["derive", "graph.json", "--mode", mode, *derive_options, *(["--samples", "subset.txt"] if subset else []),
             *(["--pseudonymize-ids"] if pseudonymised else []), "-o", "derived.json", *sign],
            ["folds", "derived.json", *fold_options, "-o", "steps.json", *sign],
        ]  # fmt: skip
        cwd = os.getcwd()
        os.chdir(folder)
        try:
            for step in steps:
                code = main(step)
                if code != 0:  # a draw the folds cannot honour (too few groups): the run must refuse it too
                    event("refused by both")
                    with pytest.raises(DepgraphError):
                        Study.from_dict(_study(grouping, mode, folds, subset, signed, pseudonymised), ".").run()
                    return
        finally:
            os.chdir(cwd)
        study = Study.from_dict(_study(grouping, mode, folds, subset, signed, pseudonymised), folder)
        study.run()
        from_steps = orjson.loads((folder / "steps.json").read_bytes())
        from_run = orjson.loads((folder / "run.json").read_bytes())
        assert from_run.pop("provenance")["inputs"][0]["path"] == "metadata.csv"
        for doc in (from_steps, from_run):
            for field in ("created_at", "generator", "digest", "signature"):
                doc.pop(field, None)
        assert from_run == from_steps
        event("compared")
        steps_spec, run_spec = read_spec(folder / "steps.json"), read_spec(folder / "run.json")
        assert run_spec.with_provenance(None).digest == steps_spec.digest
        if signed:
            assert run_spec.with_provenance(None).signed(KEY).signature == steps_spec.signature


def _study(grouping: dict, mode: str, folds: dict, subset: bool, signed: bool, pseudonymised: bool) -> dict:
    outputs = {"spec": "run.json"}
    if signed:
        outputs["sign_key_env"] = "SIGN"
    if pseudonymised:
        outputs["pseudonymize_ids"] = True
    return {
        "version": 1,
        "name": "cohort",
        "metadata": {"path": "metadata.csv", "columns": {"sample_id": "sample_id", "subject_id": "patient",
                                                          "batch_id": "batch_id", "outcome_id": "outcome_id"}},
        "kinship": {"path": "kinship.csv", "threshold": "first"},
        "duplicates": {"path": "dups.csv"},
        "grouping": {"mode": mode, **grouping, **({"samples": "subset.txt"} if subset else {})},
        "folds": folds,
        "outputs": outputs,
    }  # fmt: skip


# --------------------------------------------------------------------------- init
def test_init_recognises_the_usual_spellings_and_writes_every_choice(tmp_path, capsys):
    meta = pd.DataFrame({
        "SampleID": ["a", "b", "c", "d"], "Subject_ID": ["p", "p", "q", "r"], "family_id": ["f", "f", "f", "g"],
        "Batch": ["1", "2", "1", "2"], "site": ["x", "x", "y", "y"], "Visit": ["v0", "v1", "v0", "v0"],
        "Diagnosis": ["case", "case", "control", "case"], "age": [30, 31, 40, 50], "participant": ["p", "p", "q", "r"],
    })  # fmt: skip
    meta.to_csv(tmp_path / "samples.csv", index=False)
    code, _out, err = run(["init", tmp_path / "samples.csv", "-o", tmp_path / "study.toml"], capsys)
    assert code == 0, err
    text = (tmp_path / "study.toml").read_text()
    declared = tomllib.loads(text)
    assert declared["metadata"]["columns"] == {
        "sample_id": "SampleID", "subject_id": "Subject_ID", "batch_id": "Batch", "timepoint_id": "Visit",
        "site_id": "site", "outcome_id": "Diagnosis"}  # fmt: skip
    assert (
        '# not mapped: "family_id" (a family id' in text
        and '# not mapped: "participant" (also looks like subject_id)' in text
    )
    assert '# not mapped (kept as sample attributes): "age"' in text
    assert declared["grouping"] == {"mode": "subject"}
    # five folds, unless fewer groups are possible: three subjects here
    assert declared["folds"] == {"scheme": "stratified-group-kfold", "n_splits": 3, "seed": 0, "stratify": "stratum"}
    for table, model in TABLES.items():  # every option of every table is there, written or commented
        for key in model.model_fields:
            if (key != "columns" and table != "folds") or key in (
                "scheme",
                "n_splits",
                "n_repeats",
                "seed",
                "stratify",
            ):
                assert f"\n{key} = " in text or f"\n# {key} = " in text, (table, key)
    assert run(["init", tmp_path / "samples.csv", "-o", tmp_path / "study.toml"], capsys)[0] == 2  # never replaced...
    assert (tmp_path / "study.toml").read_text() == text  # ...without --force


def test_init_with_kinship_and_duplicates_groups_by_them_and_runs(tmp_path, capsys):
    cohort(tmp_path, n_subjects=14)
    pd.DataFrame({"id1": ["S0-0"], "id2": ["S3-1"]}).to_csv(tmp_path / "dups.csv", index=False)
    (tmp_path / "out").mkdir()
    code, out, err = run(["init", tmp_path / "metadata.csv", "--kinship", tmp_path / "kinship.csv", "--duplicates",
                          tmp_path / "dups.csv", "-o", tmp_path / "out" / "study.toml"], capsys)  # fmt: skip
    assert "review it, then run: depgraph run" in out
    assert code == 0, err
    declared = tomllib.loads((tmp_path / "out" / "study.toml").read_text())
    assert declared["metadata"]["path"] == "../metadata.csv"  # beside the study file's folder
    assert declared["kinship"] == {"path": "../kinship.csv", "threshold": "third", "format": "pairs"}
    assert declared["grouping"] == {"mode": "composite", "strategy": "strict", "via": ["relatedness", "duplicate"]}
    assert declared["outputs"] == {"spec": "spec.json", "report": "report.html"}
    code, _out, err = run(["run", tmp_path / "out" / "study.toml"], capsys)
    assert code == 0, err
    assert read_spec(tmp_path / "out" / "spec.json").summary.n_groups == 6  # 7 families, S0's and S3's joined


# --------------------------------------------------------------------------- role-looking columns without a study file
def test_an_unmapped_role_column_is_a_coded_warning_that_validate_shows(tmp_path, capsys):
    meta = pd.DataFrame({"sample_id": ["a", "b", "c"], "Subject_ID": ["p", "p", "q"], "batch_id": ["1", "2", "1"]})
    with pytest.warns(DepgraphWarning) as heard:
        graph = from_metadata(meta)
    assert [w.message.code for w in heard] == ["unmapped_role_column"]
    assert "column 'Subject_ID' looks like subject_id" in str(heard[0].message)
    assert [i.code for i in validate(graph).issues if i.code == "unmapped_role_column"] == ["unmapped_role_column"]
    meta.to_csv(tmp_path / "m.csv", index=False)
    code, _, err = run(["build", tmp_path / "m.csv", "-o", tmp_path / "g.json"], capsys)
    assert code == 0 and "warning: unmapped_role_column:" in err and "--column subject_id=Subject_ID" in err
    code, out, _ = run(["validate", tmp_path / "g.json"], capsys)
    assert "unmapped_role_column" in out and "--column subject_id=Subject_ID" in out
    mapped = from_metadata(meta, {"subject_id": "Subject_ID"})  # mapped: nothing to say
    assert not any(i.code == "unmapped_role_column" for i in validate(mapped).issues)
    reviewed = from_metadata(meta, {"sample_id": "sample_id"}, mapping_complete=True)  # a study file's mapping
    assert not any(i.code == "unmapped_role_column" for i in validate(reviewed).issues)


def test_a_family_column_without_kinship_is_a_warning(family_meta, family_kinship):
    from depgraph import add_kinship

    graph = from_metadata(family_meta.assign(family=["F1"] * 4 + ["F2"] * 4 + ["F3"] * 2))
    assert [i.code for i in validate(graph).issues if i.code == "family_column_without_kinship"] == [
        "family_column_without_kinship"]  # fmt: skip
    related = add_kinship(graph, family_kinship, threshold="first")
    assert not any(i.code == "family_column_without_kinship" for i in validate(related).issues)


# --------------------------------------------------------------------------- defects an adversarial pass found
def test_the_spec_never_replaces_the_study_file(tmp_path, capsys):
    study = cohort(tmp_path)
    os.rename(study, tmp_path / "study.json")  # a study file whose name is the spec's
    (tmp_path / "study.json").write_text(STUDY.replace('spec = "spec.json"', 'spec = "study.json"'))
    before = (tmp_path / "study.json").read_bytes()
    code, _, err = run(["run", tmp_path / "study.json"], capsys)
    # the input named as given or as the study file resolves it (which depends on the working directory)
    assert code == 2 and "[outputs] spec: output" in err and ("also an input" in err or "is the input" in err)
    assert (tmp_path / "study.json").read_bytes() == before


def test_a_dict_changed_after_the_study_is_made_changes_nothing(tmp_path):
    cohort(tmp_path)
    document = tomllib.loads(STUDY)
    study = Study.from_dict(document, base=tmp_path)
    document["grouping"]["mode"] = "batch"
    spec = study.run(write=False)
    assert spec.constraint.mode == "relatedness" == spec.provenance.declaration["grouping"]["mode"]


def test_an_audit_that_finds_no_duplicate_declares_none(tmp_path, capsys):
    cohort(tmp_path)
    features = pd.DataFrame({"sample_id": [f"S{s}-{v}" for s in range(6) for v in range(2)]})
    for k in range(4):  # rows far apart: nothing near-identical
        features[f"f{k}"] = [((i * 7 + k * 3) % 11) - 5.0 + i * 0.1 for i in range(12)]
    features.to_csv(tmp_path / "features.csv", index=False)
    (tmp_path / "study.toml").write_text(STUDY + '[duplicates]\nfeatures = "features.csv"\n')
    code, _out, err = run(["run", tmp_path / "study.toml"], capsys)
    assert code == 0, err
    assert "sample_duplicate_of" not in read_spec(tmp_path / "spec.json").constraint.relations
    assert [f.path for f in read_spec(tmp_path / "spec.json").provenance.inputs][-1] == "features.csv"


def test_init_refuses_a_radius_run_would_refuse(tmp_path, capsys):
    cohort(tmp_path)
    pd.DataFrame({"sample_id": ["S0-0"], "x": [0.0], "y": [1.0]}).to_csv(tmp_path / "xy.csv", index=False)
    for radius in ("-1", "0", "nan", "inf"):
        code, _out, err = run(["init", tmp_path / "metadata.csv", "--coords", tmp_path / "xy.csv", "--radius", radius,
                              "-o", tmp_path / "s.toml"], capsys)  # fmt: skip
        assert code == 2 and "--radius must be a finite number > 0" in err, (radius, err)
    assert not (tmp_path / "s.toml").exists()


def test_a_runs_messages_name_the_study_files_keys(tmp_path, capsys):
    cohort(tmp_path)
    (tmp_path / "study.toml").write_text(STUDY.replace(
        'scheme = "stratified-group-kfold"\nn_splits = 2\nseed = 0', 'scheme = "logo"\nby = "sex"'))  # fmt: skip
    code, _, err = run(["run", tmp_path / "study.toml"], capsys)
    assert code == 2 and "[folds]: by column 'sex' is not in the spec" in err
    assert "with attributes in [outputs]" in err and "--" not in err.split("study.toml'")[1]
