"""A study file run on Spark (``engine = "spark"``): the graph built and validated on this machine, derived, folded
and written by Spark, and the spec the one the single machine makes from the same declaration — field for field,
digest and signature included — whichever engine ``depgraph run --check`` re-runs it on. The declarations are
tests/test_study.py's."""

from __future__ import annotations

from pathlib import Path

import orjson
import pandas as pd
import pytest

from depgraph import DepgraphError, Study, read_spec
from depgraph.cli.main import main
from tests.spark_support import SPARK_MARKS
from tests.test_study import KEY, PSEUDONYM_KEY, _study

pytestmark = SPARK_MARKS


def fixed_cohort(folder: Path) -> None:
    """The files tests/test_study.py's declarations name (``_study``): 12 subjects of one to three samples in three
    batches, two outcomes, kinship pairs, a duplicate pair across subjects and a list of three quarters of the
    samples; rows not in id order."""
    rows = [
        {"sample_id": f"S{s:02d}{'abc'[v]}", "patient": f"P{s}", "batch_id": f"B{(s + v) % 3}",
         "outcome_id": ("case", "control")[(s * 7 + v) % 2]}
        for s in range(12) for v in range(s % 3 + 1)
    ]  # fmt: skip
    meta = pd.DataFrame(rows).sample(frac=1, random_state=3)
    meta.to_csv(folder / "metadata.csv", index=False)
    kin = [("P0", "P1", 0.25), ("P4", "P7", 0.25), ("P9", "P10", 0.3)]
    pd.DataFrame(kin, columns=["id1", "id2", "kinship"]).to_csv(folder / "kinship.csv", index=False)
    pd.DataFrame([("S02a", "S05b")], columns=["id1", "id2"]).to_csv(folder / "dups.csv", index=False)
    subset = sorted(meta["sample_id"])[: len(meta) * 3 // 4]
    (folder / "subset.txt").write_text("\n".join(subset) + "\n")


#: (mode, grouping keys, folds, subset, signed, pseudonymised): with the command line's test below, every stage a
#: study run hands Spark (a subset, pseudonyms and hash folds there; the many combinations are
#: tests/test_spark_folds.py's parity test, on the same public functions).
CASES = {
    "composite, stratified, signed": (
        "composite", {"strategy": "strict", "via": ["relatedness", "duplicate"]},
        {"scheme": "stratified-group-kfold", "n_splits": 2, "seed": 1}, False, True, False,
    ),
}  # fmt: skip


@pytest.mark.parametrize("case", CASES, ids=list(CASES))
def test_a_study_run_on_spark_writes_the_single_machine_spec(case, tmp_path, spark, monkeypatch):
    mode, grouping, folds, subset, signed, pseudonymised = CASES[case]
    monkeypatch.setenv("SALT", "a salt")
    monkeypatch.setenv("SIGN", KEY)
    monkeypatch.setenv("DEPGRAPH_PSEUDONYM_KEY", PSEUDONYM_KEY)
    fixed_cohort(tmp_path)
    declared = _study(grouping, mode, folds, subset, signed, pseudonymised)
    declared["outputs"] = {**declared["outputs"], "spec": "spec.dgspec", "report": "report.html"}
    single = Study.from_dict(declared, tmp_path).run(write=False)
    on_spark = {**declared, "engine": "spark", "spark": {"conf": {"spark.sql.shuffle.partitions": "2"}}}
    written = Study.from_dict(on_spark, tmp_path).run()
    assert written.digest == single.digest and written.signature == single.signature
    on_disk = read_spec(tmp_path / "spec.dgspec", verify_key=KEY if signed else None)
    document = {k: v for k, v in on_disk.envelope().items() if k not in ("created_at", "generator")}
    assert document == {k: v for k, v in single.envelope().items() if k not in ("created_at", "generator")}
    assert on_disk.samples.astype(object).equals(single.samples.astype(object))
    assert on_disk.folds is not None and single.folds is not None
    assert [s.test.tolist() for s in on_disk.folds.splits] == [s.test.tolist() for s in single.folds.splits]
    assert (tmp_path / "report.html").is_file()
    assert "engine" not in on_disk.provenance.declaration  # where it ran is not what it splits
    assert Study.from_dict(declared, tmp_path).check().identical  # a spec made on Spark, checked on one machine


def test_depgraph_run_on_spark_prints_what_it_prints_on_one_machine(tmp_path, spark, capsys, monkeypatch):
    fixed_cohort(tmp_path)
    monkeypatch.setenv("SALT", "a salt")
    monkeypatch.setenv("DEPGRAPH_PSEUDONYM_KEY", PSEUDONYM_KEY)
    declared = _study({}, "relatedness", {"scheme": "hash", "n_splits": 3, "salt_env": "SALT"}, True, False, True)
    printed, specs = {}, {}
    for engine in ("single", "spark"):
        outputs = {**declared["outputs"], "spec": f"{engine}.dgspec", "graph": "graph.dggraph"}
        document = {**declared, "engine": engine, "outputs": outputs}
        (tmp_path / "study.toml").write_text(_toml_of(document))
        assert main(["run", str(tmp_path / "study.toml")]) == 0
        printed[engine] = capsys.readouterr().out
        assert main(["run", "--check", str(tmp_path / "study.toml")]) == 0, capsys.readouterr().err
        capsys.readouterr()
        specs[engine] = read_spec(tmp_path / f"{engine}.dgspec")
    # the study files differ by their engine line, which the specs record in the study file's SHA-256 only
    single, on_spark = (specs[e].provenance for e in ("single", "spark"))
    assert single.study_file.sha256 != on_spark.study_file.sha256
    assert single.declaration == {**on_spark.declaration, "outputs": single.declaration["outputs"]}
    same = specs["spark"].with_provenance(single)
    assert same.digest == specs["single"].digest
    digests = {e: specs[e].digest for e in specs}
    assert printed["spark"].replace(digests["spark"], "D").replace("spark.dgspec", "S") == printed["single"].replace(
        digests["single"], "D"
    ).replace("single.dgspec", "S")


def test_a_study_spark_cannot_start_is_one_engine_error_and_writes_nothing(tmp_path, spark, monkeypatch):
    from depgraph.spark import session

    def no_session(*args, **kwargs):
        from py4j.protocol import Py4JError

        raise Py4JError("An error occurred while calling None.org.apache.spark.api.java.JavaSparkContext")

    monkeypatch.setattr(session, "local_session", no_session)
    fixed_cohort(tmp_path)
    declared = _study({}, "subject", {"scheme": "group-kfold", "n_splits": 2}, False, False, False)
    declared = {**declared, "engine": "spark", "outputs": {"spec": "spec.dgspec"}}
    before = sorted(p.name for p in tmp_path.iterdir())
    with pytest.raises(DepgraphError, match=r"Spark could not start on local\[2\]") as refused:
        Study.from_dict(declared, tmp_path).run()
    assert refused.value.code == "engine"
    assert sorted(p.name for p in tmp_path.iterdir()) == before


def _toml_of(document: dict) -> str:
    """A study document as TOML: top-level keys first, then one table per key (enough for these documents)."""
    lines = [f"{k} = {_value(v)}" for k, v in document.items() if not isinstance(v, dict)]
    for key, table in document.items():
        if isinstance(table, dict):
            lines.append(f"[{key}]")
            lines.extend(f"{k} = {_value(v)}" for k, v in table.items())
    return "\n".join(lines) + "\n"


def _value(value) -> str:
    if isinstance(value, bool):
        return str(value).lower()
    if isinstance(value, dict):
        return "{ " + ", ".join(f"{orjson.dumps(k).decode()} = {_value(v)}" for k, v in value.items()) + " }"
    return orjson.dumps(value).decode()


def test_the_toml_helper_writes_what_tomllib_reads():
    import tomllib

    document = {
        "version": 1, "engine": "spark", "metadata": {"path": "m.csv", "columns": {"sample_id": "id"}},
        "grouping": {"mode": "subject", "allow_unlinked": True}, "spark": {"conf": {"spark.x": "1"}},
    }  # fmt: skip
    assert tomllib.loads(_toml_of(document)) == document
