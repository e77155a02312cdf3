"""The Spark engine gives the single-machine engine's groups, labels, findings and spec digest (depgraph.spark), in
``local[2]``: on splitGraph's conformance cases, on hypothesis-generated cohorts, on a chain (the worst case of
label propagation), and it refuses the bad files the single-machine reader refuses, with the same codes.

Expected values come from the single-machine engine and from splitGraph's recorded answers, never from the Spark
code under test; components are checked against scipy."""

from __future__ import annotations

import json
import math
import os
import socket
import subprocess
import sys

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
import scipy.sparse as sp
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from scipy.sparse.csgraph import connected_components as scipy_components

from depgraph import (
    DepgraphError,
    DepgraphWarning,
    SplitSpec,
    add_duplicates,
    add_kinship,
    add_relations,
    derive,
    from_metadata,
    read_graph,
    read_spec,
    write_graph,
)
from depgraph.cli.main import main
from depgraph.spec.privacy import pseudonymize
from tests.conftest import as_partition, case_metadata, conformance_cases, load_case
from tests.spark_support import PSEUDONYM_KEY, SPARK_MARKS, same_as_single, spark_graph_of

pytestmark = SPARK_MARKS


# --------------------------------------------------------------------------- splitGraph's cases
ID_COLUMNS = ("sample_id", "subject_id", "batch_id", "study_id", "timepoint_id")


def _conformance_union():
    """Every conformance case in one metadata table, each id prefixed with its case (``random_2026_0/S1``): cases
    stay apart, and within a case the ids keep their order."""
    frames, cases = [], {}
    for path in conformance_cases():
        case = load_case(path)
        frame = case_metadata(case)
        for column in ID_COLUMNS:
            if column in frame.columns:
                frame[column] = [None if pd.isna(v) else f"{path.stem}/{v}" for v in frame[column]]
        frames.append(frame)
        cases[path.stem] = case["expected"]["derivations"]
    return pd.concat(frames, ignore_index=True), cases


def _per_case(groups: dict[str, str]) -> dict[str, dict[str, str]]:
    found: dict[str, dict[str, str]] = {}
    for sample, group in groups.items():
        stem, _, own = sample.partition("/")
        found.setdefault(stem, {})[own] = group.replace(f"{stem}/", "")
    return found


def test_conformance_cases_on_spark(tmp_path, spark):
    metadata, cases = _conformance_union()
    graph = from_metadata(metadata)
    spark_graph = spark_graph_of(graph, tmp_path, spark)
    for mode in ("subject", "batch", "study", "time"):
        got = _per_case(same_as_single(graph, spark_graph, tmp_path, mode, allow_unlinked=True))
        for stem, expected in cases.items():
            if mode in expected:
                assert got[stem] == expected[mode]["groups"], (stem, mode)
    via = ["subject", "batch", "study", "time"]
    strict = _per_case(same_as_single(graph, spark_graph, tmp_path, "composite", strategy="strict", via=via))
    rule = _per_case(
        same_as_single(graph, spark_graph, tmp_path, "composite", strategy="rule_based", via=via,
                        priority=["time", "study", "batch", "subject"])
    )  # fmt: skip
    for stem, expected in cases.items():
        assert as_partition(strict[stem]) == as_partition(expected["composite_strict"]["groups"]), stem
        assert rule[stem] == expected["composite_rule_based"]["groups"], stem


# --------------------------------------------------------------------------- generated cohorts
@st.composite
def cohorts(draw):
    """Samples of subjects in batches, with kinship between some subjects and duplicates between some samples;
    some samples without a subject, some subjects unrelated."""
    n = draw(st.integers(4, 40))
    samples = [f"S{i}" for i in range(n)]
    subjects = draw(st.lists(st.one_of(st.none(), st.integers(0, n // 2)), min_size=n, max_size=n))
    batches = draw(st.lists(st.integers(0, 3), min_size=n, max_size=n))
    metadata = pd.DataFrame(
        {"sample_id": samples, "subject_id": [None if s is None else f"P{s}" for s in subjects],
         "batch_id": [f"B{b}" for b in batches]}
    )  # fmt: skip
    if metadata["subject_id"].isna().all():
        metadata.loc[0, "subject_id"] = "P0"
    known = sorted(set(metadata["subject_id"].dropna()))
    pair = st.tuples(st.sampled_from(known), st.sampled_from(known)).filter(lambda p: p[0] != p[1])
    kin = draw(st.lists(pair, max_size=8, unique_by=lambda p: tuple(sorted(p))))
    kinship = pd.DataFrame({"id1": [a for a, _ in kin] + [known[0]], "id2": [b for _, b in kin] + [known[0] + "x"],
                            "kinship": [0.25] * len(kin) + [0.01]})  # fmt: skip
    twin = st.tuples(st.sampled_from(samples), st.sampled_from(samples)).filter(lambda p: p[0] != p[1])
    dup = draw(st.lists(twin, min_size=1, max_size=6, unique_by=lambda p: tuple(sorted(p))))
    return metadata, kinship[kinship["id2"].isin(known)], pd.DataFrame({"id1": [a for a, _ in dup],
                                                                         "id2": [b for _, b in dup]})  # fmt: skip


@settings(max_examples=1, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(cohort=cohorts())
def test_generated_cohorts_on_spark(tmp_path_factory, spark, cohort):
    metadata, kinship, duplicates = cohort
    graph = from_metadata(metadata)
    if len(kinship):
        graph = add_kinship(graph, kinship, threshold="first")
    graph = add_duplicates(graph, duplicates)
    directory = tmp_path_factory.mktemp("cohort")
    spark_graph = spark_graph_of(graph, directory, spark)
    for mode in ("relatedness", "duplicate"):
        same_as_single(graph, spark_graph, directory, mode)
    groups = same_as_single(graph, spark_graph, directory, "composite", strategy="strict",
                             via=["subject", "relatedness", "duplicate", "batch"])  # fmt: skip
    # no group straddles: every declared link joins samples of one group
    for a, b in duplicates.itertuples(index=False):
        assert groups[a] == groups[b]


# --------------------------------------------------------------------------- components
def _scipy_labels(src, dst, n):
    _, labels = scipy_components(sp.csr_matrix((np.ones(len(src)), (src, dst)), shape=(n, n)), directed=False)
    smallest = pd.Series(np.arange(n)).groupby(labels).min()
    return smallest.to_numpy()[labels]


def test_rows_are_numbered_in_file_order_from_footers_or_in_spark(tmp_path, spark, monkeypatch):
    """A directory of parts is numbered as written: its files in name order, then each file's rows; the rows of
    each file counted from its footer on the driver, or in a Spark job where the driver cannot read the files."""
    import depgraph.spark.frames as frames

    folder = tmp_path / "a table é%20.parquet"  # a path a URL must escape
    folder.mkdir()
    written = {"part-10.parquet": [7, 8], "part-02.parquet": [3, 4, 5], "part-01.parquet": [], "part-00.parquet": [1]}
    for name, values in written.items():
        pq.write_table(pa.table({"v": pa.array(values, pa.int64())}), folder / name)
    expected = [v for name in sorted(written) for v in written[name]]  # plain Python: names sorted, rows in order
    numbered = frames.in_file_order(spark.read.parquet(str(folder)))
    assert [r["v"] for r in numbered.orderBy("row").collect()] == expected
    assert sorted(r["row"] for r in numbered.collect()) == list(range(len(expected)))
    monkeypatch.setattr(frames, "_footer_counts", lambda files: None)
    counted = frames.in_file_order(spark.read.parquet(str(folder)))
    assert sorted(counted.collect()) == sorted(numbered.collect())


def test_chain_converges_in_logarithmic_rounds(spark):
    from depgraph.spark.components import connected_components

    n = 10_000
    order = np.random.default_rng(7).permutation(n)  # a chain whose vertex ids are not in chain order
    edges = spark.createDataFrame(pd.DataFrame({"src": order[:-1], "dst": order[1:]}).astype("int64"))
    labels, rounds = connected_components(edges)
    assert rounds <= 2 * math.ceil(math.log2(n))  # label propagation would take n rounds
    found = labels.groupBy("component").count().collect()
    assert [(r["component"], r["count"]) for r in found] == [(0, n)]


@pytest.mark.parametrize("hub_degree", [2, 100_000])
def test_components_match_scipy_with_and_without_hubs(spark, hub_degree):
    from depgraph.spark.components import connected_components

    rng = np.random.default_rng(hub_degree)
    n = 400
    src, dst = rng.integers(0, n, 300), rng.integers(0, n, 300)
    star = np.arange(300, 400)  # vertex 0 is a hub of 100 leaves
    src, dst = np.r_[src, np.zeros(100, np.int64)], np.r_[dst, star]
    edges = spark.createDataFrame(pd.DataFrame({"src": src, "dst": dst}).astype("int64"))
    labels = connected_components(edges, hub_degree=hub_degree).labels.toPandas()
    expected = _scipy_labels(src, dst, n)
    touched = np.unique(np.r_[src, dst][np.r_[src != dst, src != dst]])
    assert sorted(labels["vertex"]) == touched.tolist()
    assert (labels.set_index("vertex")["component"].sort_index().to_numpy() == expected[touched]).all()


# --------------------------------------------------------------------------- bad inputs, the same codes
def _graph_file(tmp_path):
    graph = add_duplicates(
        from_metadata(pd.DataFrame({"sample_id": ["S1", "S2", "S3", "S4"], "subject_id": ["P1", "P1", "P2", "P3"]})),
        pd.DataFrame({"id1": ["S1"], "id2": ["S3"]}),
    )
    tmp_path.mkdir(parents=True, exist_ok=True)
    path = tmp_path / "graph.dggraph"
    write_graph(graph, path)
    return path


def _rewrite(path, table, change):
    file = path / table
    pq.write_table(change(pq.read_table(file)), file)


def _manifest(path, change):
    manifest = json.loads((path / "manifest.json").read_text())
    change(manifest)
    (path / "manifest.json").write_text(json.dumps(manifest))


BAD_GRAPHS = {
    "repeated key": lambda p: _rewrite(
        p, "nodes/Sample.parquet", lambda t: pa.table({"key": ["S1", "S1", "S3", "S4"]})),
    "keys out of order": lambda p: _rewrite(
        p, "nodes/Subject.parquet", lambda t: pa.table({"key": ["P2", "P1", "P3"]})),
    "empty key": lambda p: _rewrite(p, "nodes/Subject.parquet", lambda t: pa.table({"key": ["", "P2", "P3"]})),
    "endpoint outside its table": lambda p: _rewrite(
        p, "edges/sample_belongs_to_subject.parquet",
        lambda t: t.set_column(1, "target", pa.array([0, 0, 1, 7], type=pa.int32()))),
    "edge listed twice": lambda p: _rewrite(
        p, "edges/sample_belongs_to_subject.parquet",
        lambda t: t.set_column(0, "source", pa.array([0, 0, 2, 3], type=pa.int32()))
        .set_column(1, "target", pa.array([0, 0, 1, 2], type=pa.int32()))),
    "undirected edge backwards": lambda p: _rewrite(
        p, "edges/sample_duplicate_of.parquet",
        lambda t: t.set_column(0, "source", pa.array([2], type=pa.int32()))
        .set_column(1, "target", pa.array([0], type=pa.int32()))),
    "rows the manifest does not say": lambda p: _manifest(
        p, lambda m: m["tables"]["nodes/Sample.parquet"].update(rows=5)),
    "a file the manifest does not list": lambda p: (p / "nodes" / "extra.parquet").write_bytes(b"x"),
    "a table that is not Parquet": lambda p: (p / "nodes" / "Sample.parquet").write_bytes(b"not parquet"),
    "a NaN attribute": lambda p: _attribute(p, pa.array([1.0, float("nan"), None, 2.0])),
    "an infinite attribute": lambda p: _attribute(p, pa.array([1.0, 2.0, float("-inf"), 2.0])),
    "a 32-bit float attribute": lambda p: _attribute(p, pa.array([1.0, 2.0, 3.0, 4.0], pa.float32())),
    "a list attribute": lambda p: _attribute(p, pa.array([[1], [2], [], None])),
    "one subject key written composed and decomposed": lambda p: _rewrite(
        p, "nodes/Subject.parquet", lambda t: pa.table({"key": ["Jose\u0301", "Jos\u00e9", "P3"]})),
}  # fmt: skip


def _attribute(path, values):
    """An attribute column ``weight`` added to the samples' table and listed by the manifest."""
    _rewrite(path, "nodes/Sample.parquet", lambda t: t.append_column("weight", values))
    _manifest(path, lambda m: m["tables"]["nodes/Sample.parquet"]["columns"].append("weight"))


def test_bad_graph_files_get_the_single_machine_codes(tmp_path, spark):
    from depgraph.spark.graph import read_graph as read_spark_graph

    for name, damage in BAD_GRAPHS.items():
        path = _graph_file(tmp_path / name.replace(" ", "_"))
        damage(path)
        with pytest.raises(DepgraphError) as single:
            read_graph(path)
        with pytest.raises(DepgraphError) as on_spark:
            read_spark_graph(path, spark)
        assert on_spark.value.code == single.value.code, (name, single.value, on_spark.value)
    with pytest.raises(DepgraphError) as json_graph:
        write_graph(read_graph(_graph_file(tmp_path / "json")), tmp_path / "graph.json")
        read_spark_graph(tmp_path / "graph.json", spark)
    assert json_graph.value.code == "invalid_argument"


def test_derivation_refusals_get_the_single_machine_codes(tmp_path, spark):

    metadata = pd.DataFrame({"sample_id": ["S1", "S1", "S2"], "subject_id": ["P1", "P2", "P3"]})
    graph = from_metadata(metadata, allow_multi_subject_samples=True)
    path = tmp_path / "graph.dggraph"
    write_graph(graph, path)
    spark_graph = spark_graph_of(graph, tmp_path, spark)
    same_as_single(graph, spark_graph, tmp_path, "subject")  # under the override: the smallest subject, a warning
    _manifest(path, lambda m: m.update(overrides={}))  # without it: two subjects for S1 is ambiguity
    cases = [
        ("subject", {}),  # ambiguity
        ("batch", {}),  # no_relation
        ("subject", {"min_groups": 5}),  # too_few_groups
        ("composite", {"strategy": "strict", "via": ["family"]}),  # invalid_argument
    ]
    from depgraph.spark.graph import read_graph as read_spark_graph

    bare = read_spark_graph(path, spark)
    for mode, options in cases:
        with pytest.raises(DepgraphError) as single:
            derive(read_graph(path), mode, **options)
        with pytest.raises(DepgraphError) as on_spark:
            derive(bare, mode, **options)
        assert on_spark.value.code == single.value.code, (mode, options, single.value, on_spark.value)
        assert on_spark.value.message == single.value.message  # one request, refused in the same words


# --------------------------------------------------------------------------- the command line
def test_derive_on_spark_from_the_command_line(tmp_path, capsys, monkeypatch):
    """derive --engine spark with a samples file, pseudonymised ids, a carried attribute and a signature, in one
    Spark start: the single machine's spec, signed alike; validate verifies it with its key and refuses another.
    The command runs with a PATH whose first ``python3`` cannot run at all: run as ``venv/bin/python -m depgraph``
    without activating the venv, Spark would start its Python workers with it; a session depgraph starts gives
    them the driver's (this one, with pyarrow), which the pseudonyms' hashing in the workers needs."""
    fake = tmp_path / "bin"
    fake.mkdir()
    (fake / "python3").write_text("#!/bin/sh\necho 'not the driver python' >&2\nexit 3\n")
    (fake / "python3").chmod(0o755)
    graph = add_kinship(
        from_metadata(
            pd.DataFrame(
                {"sample_id": [f"S{i}" for i in range(8)], "subject_id": list("AABBCDEF"), "sex": list("FFMMFMFM")}
            )
        ),
        pd.DataFrame({"id1": ["A", "C"], "id2": ["B", "D"], "kinship": [0.3, 0.2]}),
        threshold="first",
    )
    write_graph(graph, tmp_path / "g.dggraph")
    subset = ["S0", "sample:S1", "S2", "S4", "S6", "S7"]  # C's kin D left out: S4 is linked all the same
    (tmp_path / "wanted.txt").write_text("\n".join(subset) + "\n")
    key = "an example key, never use it for real"
    keyed = {**os.environ, "DG_SIGNING": key, "DG_OTHER": key.upper(), "DEPGRAPH_PSEUDONYM_KEY": PSEUDONYM_KEY}
    no_driver = {k: v for k, v in keyed.items() if k not in ("PYSPARK_PYTHON", "PYSPARK_DRIVER_PYTHON")}
    no_driver["PATH"] = f"{fake}{os.pathsep}{keyed.get('PATH', '')}"
    run = subprocess.run(
        [sys.executable, "-m", "depgraph", "derive", str(tmp_path / "g.dggraph"), "--mode", "relatedness",
         "--engine", "spark", "--master", "local[1]", "--samples", str(tmp_path / "wanted.txt"),
         "--pseudonymize-ids", "--attributes", "sex", "--sign-key-env", "DG_SIGNING", "-o", str(tmp_path / "s.dgspec")],
        capture_output=True, text=True, timeout=600, env=no_driver,
    )  # fmt: skip
    assert run.returncode == 0, run.stderr
    assert run.stderr == ""  # the JVM's log lines and warnings are not the command's to print
    assert "derived relatedness: 6 samples in 4 groups" in run.stdout and "(ids pseudonymised)" in run.stdout
    expected = SplitSpec.from_partition(derive(graph, "relatedness", samples=subset), graph, attributes=["sex"])
    assert "sex" in expected.samples.columns and expected.constraint.subset
    expected = pseudonymize(expected, PSEUDONYM_KEY)
    got = read_spec(tmp_path / "s.dgspec")
    assert got.digest == expected.digest
    assert got.signature == expected.signed(key).signature  # signed as on one machine
    assert f"(signed, key fingerprint {got.signature.key_fingerprint})" in run.stdout
    for name, value in keyed.items():
        monkeypatch.setenv(name, value)
    for variable, code in (("DG_SIGNING", 0), ("DG_OTHER", 2)):  # verified with its key, refused with another
        capsys.readouterr()
        assert main(["validate", str(tmp_path / "s.dgspec"), "--verify-key-env", variable]) == code
        said = capsys.readouterr()
        assert ("signature verified" in said.out) if code == 0 else ("integrity" in said.err)
    code = main(["derive", str(tmp_path / "g.dggraph"), "--mode", "subject", "--engine", "spark", "-o",
                 str(tmp_path / "s.json")])  # fmt: skip
    assert code == 2 and "columnar" in capsys.readouterr().err and not (tmp_path / "s.json").exists()


def test_sample_subsets_on_spark_equal_the_single_machine(tmp_path, spark):
    """samples= derives on the graph the samples induce, on both engines: the same groups, findings, time order
    and spec (its constraint says a subset was derived); a sample whose only kinship goes to a sample left out is
    linked all the same (no no_relation refusal); ids naming no sample, or none, are refused alike."""
    metadata = pd.DataFrame({
        "sample_id": [f"S{i}" for i in range(12)], "subject_id": [f"P{i // 2}" for i in range(12)],
        "batch_id": ["b1", "b2", "b3"] * 4, "timepoint_id": [f"T{i % 4}" for i in range(12)],
        "time_index": [float(i % 4) for i in range(12)],
    })  # fmt: skip
    kinship = pd.DataFrame({"id1": ["P0", "P2"], "id2": ["P1", "P5"], "kinship": [0.25, 0.3]})
    graph = add_kinship(from_metadata(metadata), kinship, threshold="first")
    graph = add_duplicates(graph, pd.DataFrame({"id1": ["S0"], "id2": ["S3"]}))
    spark_graph = spark_graph_of(graph, tmp_path, spark)
    subset = ["S0", "sample:S1", "S2", "S4", "S5", "S9", "S11"]  # P5 kept, P2 left out: S4, S5's kin are gone
    for mode, options in [("relatedness", {}), ("composite", {"strategy": "strict", "via": ["relatedness", "batch"]})]:
        same_as_single(graph, spark_graph, tmp_path, mode, samples=subset, **options)
    # S0's one duplicate, S3, is left out: declared, so S0 alone is an answer, not a missing declaration
    same_as_single(graph, spark_graph, tmp_path, "duplicate", samples=["S0", "S6"])
    with pytest.raises(DepgraphError) as single:  # no selected sample has a duplicate anywhere: refused alike
        derive(graph, "duplicate", samples=["S6", "S7"])
    with pytest.raises(DepgraphError) as on_spark:
        derive(spark_graph, "duplicate", samples=["S6", "S7"])
    assert (on_spark.value.code, on_spark.value.message) == (single.value.code, single.value.message)
    for bad in (["S1", "nobody", "S99"],):
        with pytest.raises(DepgraphError) as single:
            derive(graph, "subject", samples=bad)
        with pytest.raises(DepgraphError) as on_spark:
            derive(spark_graph, "subject", samples=bad)
        assert (on_spark.value.code, on_spark.value.message) == (single.value.code, single.value.message)
    # from the command line: test_derive_on_spark_from_the_command_line


def test_spark_failures_from_the_command_line_are_one_line(tmp_path, capsys, monkeypatch):
    graph = from_metadata(pd.DataFrame({"sample_id": ["S1", "S2", "S3"], "subject_id": ["A", "A", "B"]}))
    write_graph(graph, tmp_path / "g.dggraph")

    def derive_on_spark(graph_file: str, *options: str) -> subprocess.CompletedProcess:
        master = [] if "--master" in options else ["--master", "local[1]"]
        return subprocess.run(
            [sys.executable, "-m", "depgraph", "derive", str(tmp_path / graph_file), "--mode", "subject",
             "--engine", "spark", *master, *options, "-o", str(tmp_path / "s.dgspec")],
            capture_output=True, text=True, timeout=600, env={**os.environ, "DG_SHORT": "short"},
        )  # fmt: skip

    with socket.socket() as probe:  # a port nothing listens on (Spark would retry it for a minute)
        probe.bind(("127.0.0.1", 0))
        free = probe.getsockname()[1]
    nowhere = f"spark://127.0.0.1:{free}"
    cases = [  # Spark's own failure (a setting it refuses), a file it cannot read, options refused before it starts
        (("g.dggraph", "--spark-conf", "spark.sql.shuffle.partitions=0"),
         "depgraph: engine: Spark could not start on local[1]: [INVALID_CONF_VALUE"),
        (("g.dggraph", "--master", nowhere), f"depgraph: engine: Spark could not start on {nowhere}: no standalone "
         f"master answers at 127.0.0.1:{free} (Connection refused)"),
    ]  # fmt: skip  # a graph file Spark cannot read: test_bad_graph_files_get_the_single_machine_codes
    for arguments, start in cases:
        run = derive_on_spark(*arguments)
        assert run.returncode == 2 and run.stderr.startswith(start), (arguments, run.stderr)
        assert run.stderr.count("\n") == 1 and "at org.apache" not in run.stderr, run.stderr
        assert sorted(p.name for p in tmp_path.iterdir()) == ["g.dggraph"], arguments
    # refused before Spark starts: in this process
    monkeypatch.setenv("DG_SHORT", "short")
    refused = [
        (["--spark-conf", "spark.driver.memory"], "depgraph: invalid_argument: --spark-conf takes"),
        (["--spark-conf", "driver.memory=1g"], "depgraph: invalid_argument: --spark-conf takes"),
        (["--sign-key-env", "DG_SHORT"], "depgraph: invalid_argument: the key in the environment variable DG_SHORT"),
    ]
    derive_here = ["derive", str(tmp_path / "g.dggraph"), "--mode", "subject", "-o", str(tmp_path / "s.dgspec")]
    for options, start in refused:
        capsys.readouterr()
        assert main([*derive_here, "--engine", "spark", *options]) == 2
        err = capsys.readouterr().err
        assert err.startswith(start) and err.count("\n") == 1, (options, err)
    assert main([*derive_here, "--spark-conf", "spark.driver.memory=1g"]) == 2
    assert "--spark-conf does not apply without --engine spark" in capsys.readouterr().err
    assert sorted(p.name for p in tmp_path.iterdir()) == ["g.dggraph"]


# --------------------------------------------------------------------------- DataFrame inputs
def test_dataframe_inputs_give_the_single_machine_spec(tmp_path, spark):
    from depgraph.spark.graph import SparkGraph
    from depgraph.spark.spec import write_spec as write_spark_spec

    metadata = pd.DataFrame({
        "sample_id": [f"S{i}" for i in range(12)] + ["S0"],
        "patient": ["P1", "P1", "P2", "P3", "P4", "P4", "P5", None, "P6", "P7", "P8", "P8", "P1"],
        "batch_id": ["B1", "B1", "B2", "B2", "B1", "B3", "B3", "B1", "B2", "B2", "B1", "B3", "B1"],
        "timepoint_id": ["T0", "T1", "T0", "T1", "T2", "T0", "T1", "T2", "T0", "T1", "T2", "T0", "T0"],
        "time_index": [0, 1, 0, 1, 2, 0, 1, 2, 0, 1, 2, 0, 0],
        "outcome_id": ["case", "ctrl", "case", "ctrl", "case", "ctrl", "case", "ctrl", "case", "ctrl", "ctrl",
                       "case", "ctrl"],  # S0 has two outcomes: its stratum joins them
    })  # fmt: skip
    kinship = pd.DataFrame({"id1": ["P1", "P3", "P5"], "id2": ["P2", "P4", "P6"], "kinship": [0.25, 0.1, 0.3]})
    duplicates = pd.DataFrame({"id1": ["S7"], "id2": ["S9"]})
    mapping = {"subject_id": "patient"}
    graph = add_duplicates(add_kinship(from_metadata(metadata, mapping), kinship, "first"), duplicates)
    # the public builders: a Spark DataFrame is built on Spark, and so is every step of a SparkGraph
    on_spark = add_duplicates(
        add_kinship(from_metadata(spark.createDataFrame(metadata), mapping), spark.createDataFrame(kinship), "first"),
        spark.createDataFrame(duplicates),
    )
    assert isinstance(on_spark, SparkGraph)
    with pytest.raises(DepgraphError, match="absent: options of a file or table read on the driver") as refused:
        add_kinship(on_spark, spark.createDataFrame(kinship), "first", absent="error")
    assert refused.value.code == "invalid_argument"
    adjacent = pd.DataFrame({"source": ["S1", "S3"], "target": ["S2", "S1"]})  # read as one machine reads it
    assert add_relations(on_spark, spark.createDataFrame(adjacent), "sample_adjacent_to").edges[
        "sample_adjacent_to"].count() == len(add_relations(graph, adjacent, "sample_adjacent_to").relation_edges(
        "sample_adjacent_to")[0]) == 2  # fmt: skip
    with pytest.raises(DepgraphError) as refused:  # a missing column is the table's fault, named
        add_duplicates(on_spark, spark.createDataFrame(adjacent))
    assert refused.value.code == "schema" and "id1" in refused.value.message
    sdf = spark.createDataFrame(metadata)
    mistakes = {  # each refused as one machine refuses it, before any Spark work where it can be
        "a text override": (lambda: from_metadata(sdf, mapping, allow_multi_subject_samples="no"), "invalid_value"),
        "an unknown role": (lambda: from_metadata(sdf, {"Subject": "patient"}), "invalid_argument"),
        "a role mapped onto another": (lambda: from_metadata(sdf, {"sample_id": "patient"}), "ambiguity"),
        "a list for columns": (lambda: from_metadata(sdf, ["subject_id"]), "invalid_argument"),
        "a pandas table to Spark": (lambda: from_metadata(metadata, engine="spark", spark=spark), "invalid_argument"),
        "a session that is not one": (lambda: from_metadata(tmp_path / "m.csv", engine="spark", spark="x"),
                                      "invalid_argument"),
        "kinship that is text": (lambda: add_kinship(on_spark, spark.createDataFrame(
            kinship.astype({"kinship": str}).replace({"kinship": {"0.25": "close"}})), "first"), "invalid_value"),
        "kinship that is boolean": (lambda: add_kinship(on_spark, spark.createDataFrame(
            kinship.assign(kinship=True)), "first"), "invalid_value"),
        "one id column twice": (lambda: add_duplicates(on_spark, spark.createDataFrame(duplicates),
                                                       id_columns=("id1", "id1")), "invalid_argument"),
    }  # fmt: skip
    for name, (call, code) in mistakes.items():
        with pytest.raises(DepgraphError) as refused:
            call()
        assert refused.value.code == code, (name, refused.value)
    # (composites over these relations on Spark: the conformance and parity tests)
    expected = SplitSpec.from_partition(derive(graph, "relatedness"), graph)
    assert write_spark_spec(derive(on_spark, "relatedness"), tmp_path / "relatedness.dgspec") == expected.digest
    assert read_spec(tmp_path / "relatedness.dgspec").samples.astype(object).equals(expected.samples.astype(object))
    # the same tables as files Spark reads: CSV (every cell text, as the single-machine reader reads ids), Parquet
    metadata.to_csv(tmp_path / "metadata.csv", index=False)
    kinship.to_parquet(tmp_path / "kinship.parquet")
    duplicates.to_csv(tmp_path / "duplicates.tsv", sep="\t", index=False)
    from_files = add_duplicates(
        add_kinship(from_metadata(tmp_path / "metadata.csv", mapping, engine="spark", spark=spark),
                    str(tmp_path / "kinship.parquet"), "first"),
        tmp_path / "duplicates.tsv",
    )  # fmt: skip
    files = add_kinship(from_metadata(tmp_path / "metadata.csv", mapping), str(tmp_path / "kinship.parquet"), "first")
    files = add_duplicates(files, tmp_path / "duplicates.tsv")
    expected = SplitSpec.from_partition(derive(files, "relatedness"), files)  # (the kinship file named, as read)
    assert write_spark_spec(derive(from_files, "relatedness"), tmp_path / "files.dgspec") == expected.digest
    (tmp_path / "ragged.csv").write_text("sample_id,subject_id\nS1,P1\nS2,P2,extra\n")
    (tmp_path / "table.xlsx").write_bytes(b"PK")
    (tmp_path / "latin1.csv").write_bytes("sample_id,subject_id\nS1,Zoë\n".encode("latin-1"))  # not UTF-8
    (tmp_path / "bom.csv").write_bytes(b"\xef\xbb\xbf" + (tmp_path / "metadata.csv").read_bytes())
    with_mark = add_kinship(from_metadata(tmp_path / "bom.csv", mapping, engine="spark", spark=spark),
                            tmp_path / "kinship.parquet", "first")  # fmt: skip
    assert derive(with_mark, "relatedness").groups() == derive(graph, "relatedness").groups()
    refusals = (("ragged.csv", "parse"), ("latin1.csv", "parse"), ("absent.csv", "io"),
                ("table.xlsx", "invalid_argument"))  # fmt: skip
    for source, code in refusals:
        with pytest.raises(DepgraphError) as refused:
            from_metadata(tmp_path / source, engine="spark", spark=spark)
        assert refused.value.code == code, (source, refused.value)


def _adjacency(graph) -> set[tuple[str, str, float]]:
    """A single-machine graph's spatial edges: the two sample ids (in order) and the weight, its exact bits."""
    src, dst, weight = graph.relation_edges("sample_adjacent_to")
    keys = graph.key_values
    return {(*sorted((str(keys[a]), str(keys[b]))), float(w).hex()) for a, b, w in zip(src, dst, weight, strict=True)}


def _spark_adjacency(graph) -> set[tuple[str, str, float]]:
    if "sample_adjacent_to" not in graph.edges:
        return set()
    keys = dict(graph.nodes["Sample"].select("row", "key").toPandas().itertuples(index=False))
    rows = graph.edges["sample_adjacent_to"].toPandas()
    return {
        (*sorted((keys[a], keys[b])), float(w).hex())
        for a, b, w in rows[["source", "target", "weight"]].itertuples(index=False)
    }


def test_spatial_neighbours_found_in_spark_are_the_kd_trees(spark):
    """Pairs, distances (bit for bit) and the graph's record equal the single machine's: on a
    whole-number grid whose neighbours lie exactly at the radius (kept: inclusive), on scattered points in 3-D for
    the Manhattan and Chebyshev norms, at radius 0 (identical points), with samples the graph lacks
    dropped; and a bad coordinate table refused with the single machine's code."""
    from depgraph import add_spatial  # one function: a SparkGraph's neighbours are found on Spark

    rng = np.random.default_rng(7)
    n = 48
    ids = [f"S{i:02d}" for i in range(n)]
    metadata = pd.DataFrame({"sample_id": ids, "site_id": ["A", "B"] * (n // 2)})
    grid = pd.DataFrame({"sample_id": ids, "x": [i % 8 for i in range(n)], "y": [i // 8 * 2 for i in range(n)]})
    scattered = pd.DataFrame({"sample_id": ids, **{a: rng.normal(0, 1, n) for a in "xyz"}})
    twins = grid.assign(x=grid["x"] // 2, y=0)  # pairs of identical points, and a few more
    cases = [(grid, 1, 2.0), (scattered, 0.7, 1.0), (scattered, 0.5, math.inf), (twins, 0, 2.0)]
    single_graph, spark_graph = from_metadata(metadata), from_metadata(spark.createDataFrame(metadata))
    for coords, radius, p in cases:
        single = add_spatial(single_graph, coords, radius, p=p)
        on_spark = add_spatial(spark_graph, spark.createDataFrame(coords), radius, p=p)
        assert _spark_adjacency(on_spark) == _adjacency(single) != set(), (radius, p)
        assert on_spark.history[-1] == single.history[-1]
    # samples the graph lacks, dropped (the spatial mode's derivation from these edges is the single machine's:
    # test_conformance_cases_on_spark)
    extra = pd.concat([grid, pd.DataFrame({"sample_id": ["X1"], "x": [0], "y": [0]})], ignore_index=True)
    single = add_spatial(single_graph, extra, 1, unknown="ignore")
    on_spark = add_spatial(spark_graph, spark.createDataFrame(extra), 1, unknown="ignore")
    assert on_spark.history[-1] == single.history[-1] and single.history[-1]["unknown_ids"] == ["X1"]
    assert _spark_adjacency(on_spark) == _adjacency(single)
    bad = {
        "a sample not in the graph": (extra, {}),
        "a sample listed twice": (pd.concat([grid, grid.head(1)]), {}),
        "a coordinate that is not a number": (grid.astype({"x": str}).replace({"x": {"3": "three"}}), {}),
        "a missing coordinate": (grid.astype({"x": float}).replace({"x": {3.0: np.nan}}), {}),
        "no coordinate column": (grid[["sample_id"]], {}),
        "a negative radius": (grid, {"radius": -1}),
    }
    for name, (coords, options) in bad.items():
        radius = options.get("radius", 1)
        with pytest.raises(DepgraphError) as single_refusal:
            add_spatial(single_graph, coords, radius)
        with pytest.raises(DepgraphError) as spark_refusal:
            add_spatial(spark_graph, spark.createDataFrame(coords), radius)
        assert spark_refusal.value.code == single_refusal.value.code, (name, spark_refusal.value)


def test_attributes_of_dataframe_and_text_inputs_are_the_single_machines(tmp_path, spark):
    """The columns naming no role are the samples' attributes on Spark as on one machine: a DataFrame's types kept
    (text, integers, floats with a gap, booleans, dates as ISO text), a CSV file's text typed as pandas would type
    it (integers, integers with a missing cell as floats, codes such as 007 kept as text, NA missing — a subject
    id NA too —, booleans), a
    sample's repeated rows agreeing; the spec carrying them all has the single machine's digest. A column that
    looks like a role is warned about alike; rows disagreeing on an attribute and an infinite value are refused."""
    import datetime

    from depgraph.spark import tables
    from depgraph.spark.spec import write_spec as write_spark_spec

    n = 10
    metadata = pd.DataFrame({
        "sample_id": [f"S{i}" for i in range(n)] + ["S0"], "subject_id": [f"P{i // 2}" for i in range(n)] + ["P0"],
        "sex": [*"FMFMFMFMFM", "F"], "age": [30 + i for i in range(n)] + [30],
        "bmi": [20.5, np.nan, 22.0, 23.25, 24.0, 25.5, 26.0, 27.0, 28.0, 29.5, 20.5],
        "smoker": [i % 3 == 0 for i in range(n)] + [True],
        "drawn": [datetime.date(2024, 1, 1 + i) for i in range(n)] + [datetime.date(2024, 1, 1)],
    })  # fmt: skip
    graph = from_metadata(metadata)
    on_spark = tables.from_metadata(spark.createDataFrame(metadata))
    expected = SplitSpec.from_partition(derive(graph, "subject"), graph, attributes="all")
    assert list(expected.samples.columns) == ["sample_id", "group_id", "sex", "age", "bmi", "smoker", "drawn"]
    assert write_spark_spec(derive(on_spark, "subject"), tmp_path / "frame.dgspec", attributes="all") == expected.digest
    text = metadata.drop(columns=["drawn"]).assign(
        code=["007", "12", "3", "4", "5", "6", "7", "8", "9", "10", "007"],
        score=["1", "NA", "3", "4", "5", "6", "7", "8", "9", "10", "1"],
        flag=["true", "FALSE", "True", "false", "true", "false", "true", "false", "true", "false", "true"],
        Site=["A"] * (n + 1), subject_id=[f"P{i // 2}" for i in range(n - 1)] + ["NA", "P0"],  # NA: no subject
    )  # fmt: skip
    text.to_csv(tmp_path / "metadata.csv", index=False)
    with pytest.warns(DepgraphWarning, match="'Site' looks like site_id") as told:
        graph = from_metadata(tmp_path / "metadata.csv")
    with pytest.warns(DepgraphWarning, match="'Site' looks like site_id") as told_spark:
        on_spark = tables.from_metadata(tmp_path / "metadata.csv", spark=spark)
    assert [str(w.message) for w in told_spark if "Site" in str(w.message)] == [
        str(w.message) for w in told if "Site" in str(w.message)
    ]
    carried = ["sex", "age", "bmi", "smoker", "code", "score", "flag"]  # Site cannot be a spec column's name
    expected = SplitSpec.from_partition(derive(graph, "subject"), graph, attributes=carried)
    assert expected.samples["code"].tolist()[:2] == ["007", "12"] and expected.samples["score"].dtype == np.float64
    assert write_spark_spec(derive(on_spark, "subject"), tmp_path / "text.dgspec", attributes=carried) == (
        expected.digest
    )
    for bad in (metadata.assign(sex=[*"FMFMFMFMFM", "M"]), metadata.assign(bmi=[np.inf] + [20.0] * n)):
        with pytest.raises(DepgraphError) as single:
            from_metadata(bad)
        with pytest.raises(DepgraphError) as refused:
            tables.from_metadata(spark.createDataFrame(bad))
        assert refused.value.code == single.value.code, (single.value, refused.value)


BAD_TABLES = {
    "a row without a sample id": ({"sample_id": ["S1", None], "subject_id": ["P1", "P2"]}, None),
    "a sample with two subjects": ({"sample_id": ["S1", "S1"], "subject_id": ["P1", "P2"]}, None),
    "a sample in two batches": ({"sample_id": ["S1", "S1"], "batch_id": ["B1", "B2"]}, None),
    "a kinship id the graph lacks": ({"sample_id": ["S1", "S2"], "subject_id": ["P1", "P2"]},
                                     {"id1": ["P1"], "id2": ["P9"], "kinship": [0.3]}),
    "a subject paired with itself": ({"sample_id": ["S1", "S2"], "subject_id": ["P1", "P2"]},
                                     {"id1": ["P1"], "id2": ["P1"], "kinship": [0.3]}),
    "a kinship above 1": ({"sample_id": ["S1", "S2"], "subject_id": ["P1", "P2"]},
                          {"id1": ["P1"], "id2": ["P2"], "kinship": [1.5]}),
    "no sample_id column": ({"subject_id": ["P1", "P2"]}, None),
    "a sample id holding a tab": ({"sample_id": ["S1", "S\t2"], "subject_id": ["P1", "P2"]}, None),
    "a batch id holding a line break": ({"sample_id": ["S1", "S2"], "batch_id": ["B1", "B\n2"]}, None),
    "a kinship id holding a control character": ({"sample_id": ["S1", "S2"], "subject_id": ["P1", "P2"]},
                                                 {"id1": ["P1"], "id2": ["P\x002"], "kinship": [0.3]}),
    "a subject written composed and decomposed": ({"sample_id": ["S1", "S2"],
                                                   "subject_id": ["Jos\u00e9", "Jose\u0301"]}, None),
    "a subject written with the Kelvin sign and K": ({"sample_id": ["S1", "S2"],
                                                      "subject_id": ["\u212a7", "K7"]}, None),
    "two decomposed spellings of one site": ({"sample_id": ["S1", "S2", "S3"],
                                              "site_id": ["A\u0301\u0323", "A\u0323\u0301", "B"]}, None),
}  # fmt: skip


@pytest.mark.parametrize("name", BAD_TABLES)
def test_bad_tables_get_the_single_machine_codes(spark, name):
    from depgraph.spark import tables

    metadata, kinship = (pd.DataFrame(t) if t is not None else None for t in BAD_TABLES[name])
    with pytest.raises(DepgraphError) as single:
        graph = from_metadata(metadata)
        add_kinship(graph, kinship, "first")
    with pytest.raises(DepgraphError) as on_spark:
        graph = tables.from_metadata(spark.createDataFrame(metadata))
        tables.add_kinship(graph, spark.createDataFrame(kinship), "first")
    assert on_spark.value.code == single.value.code, (single.value, on_spark.value)


def test_ids_written_twice_in_unicode_are_refused_not_split(spark):
    """A subject written composed on one sample and decomposed on another is one person: Spark refuses it, naming
    both spellings, as the single-machine engine does; Unicode ids that are not twins pass and group as there."""
    from depgraph.spark import tables

    twins = pd.DataFrame({"sample_id": ["S1", "S2", "S3"], "subject_id": ["Jos\u00e9", "Jose\u0301", "Zoë"]})
    with pytest.raises(DepgraphError) as single:
        from_metadata(twins)
    with pytest.raises(DepgraphError) as on_spark:
        tables.from_metadata(spark.createDataFrame(twins))
    assert (on_spark.value.code, on_spark.value.details["ids"]) == ("ambiguity", ["Jos\u00e9", "Jose\u0301"])
    assert single.value.details["ids"] == on_spark.value.details["ids"]
    assert "'Jos\\xe9' and 'Jose\\u0301' differ only in Unicode normalisation" in on_spark.value.message
    distinct = pd.DataFrame({"sample_id": ["S1", "S2", "S3", "S4"], "subject_id": ["Jos\u00e9", "Jos\u00e9", "Zoë",
                                                                                   "Jose"]})  # fmt: skip
    on_spark_groups = derive(tables.from_metadata(spark.createDataFrame(distinct)), "subject").groups()
    assert on_spark_groups == derive(from_metadata(distinct), "subject").groups()
    assert len(set(on_spark_groups.values())) == 3


def test_look_alike_ids_are_warned_about_as_on_one_machine(spark):
    """Ids that look alike (a Cyrillic а in Pat, a fullwidth １) stay different ids on both engines, each warned
    about with the same note, kept in the graph's history; ASCII ids alone (S10, SIO) are none."""
    from depgraph.spark import tables

    table = pd.DataFrame({"sample_id": ["S1", "S2", "S3", "S4", "S5", "S6"],
                          "subject_id": ["Pat", "P\u0430t", "Q1", "Q\uff11", "Q1", "Zoë"],
                          "batch_id": ["S10", "SIO", "B", "B", "B", "B"]})  # fmt: skip
    with pytest.warns(DepgraphWarning, match="confusable") as told_single:
        single = from_metadata(table)
    with pytest.warns(DepgraphWarning, match="confusable") as told_spark:
        on_spark = tables.from_metadata(spark.createDataFrame(table))
    told = (told_single, told_spark)
    codes = [[w.message.code for w in heard if isinstance(w.message, DepgraphWarning)] for heard in told]
    assert codes == [["confusable_ids"]] * 2
    [note] = on_spark.history[0]["warnings"]
    assert note == next(n for n in single.history[0]["warnings"] if n["code"] == "confusable_ids")
    assert note["ids"] == ["Pat", "P\u0430t", "Q1", "Q\uff11"] and note["count"] == 2
    assert len(set(derive(on_spark, "subject").groups().values())) == 5  # warned, never merged


def test_float_ids_are_read_as_on_one_machine(spark):
    """A float id column (pandas makes one of integers with a gap): whole numbers keyed without their decimal part,
    a missing value missing, as on one machine; a float that is not a whole number below 2**53 refused alike."""
    from depgraph.spark import tables

    metadata = pd.DataFrame({"sample_id": ["S1", "S2", "S3", "S4"], "subject_id": [1.0, 1.0, np.nan, 12.0]})
    assert derive(tables.from_metadata(spark.createDataFrame(metadata)), "subject").groups() == dict(
        derive(from_metadata(metadata), "subject").groups()
    )
    for bad in (2.5, 2.0**53):
        inexact = metadata.assign(subject_id=[1.0, bad, np.nan, 12.0])
        with pytest.raises(DepgraphError) as single:
            from_metadata(inexact)
        with pytest.raises(DepgraphError) as on_spark:
            tables.from_metadata(spark.createDataFrame(inexact))
        assert on_spark.value.code == single.value.code == "invalid_value"
        assert on_spark.value.message == single.value.message.replace(" in row 2", "")
    with pytest.raises(DepgraphError, match="text, whole numbers") as refused:
        tables.from_metadata(spark.sql("select 'S1' as sample_id, date'2024-01-05' as subject_id"))
    assert refused.value.code == "invalid_argument"


def test_r_reads_a_spec_spark_wrote(tmp_path, spark, run_r, monkeypatch):
    """Spark's directories of Parquet parts, read by the R reader: the digest, the sample columns and every split
    as Python reads them; the spec written in one part (a small table, sorted in one task) is the same spec."""
    import depgraph.spark.spec as spark_spec
    from depgraph.spark.spec import write_spec as write_spark_spec
    from tests.conftest import RSCRIPT

    if RSCRIPT is None:
        pytest.skip("Rscript not installed (CI installs it)")
    metadata = pd.DataFrame({
        "sample_id": [f"S{i:02d}" for i in range(30)], "subject_id": [f"P{i // 3}" for i in range(30)],
        "sex": ["F", "M", "F"] * 10, "outcome_id": ["case", "control"] * 15,
    })  # fmt: skip
    graph = from_metadata(metadata)
    path = tmp_path / "spark.dgspec"
    partition = derive(spark_graph_of(graph, tmp_path, spark), "subject")
    options = {"n_splits": 3, "seed": 5, "attributes": "all"}
    write_spark_spec(partition, tmp_path / "one.dgspec", "stratified-group-kfold", **options)
    assert len(list((tmp_path / "one.dgspec" / "samples.parquet").glob("*.parquet"))) == 1
    monkeypatch.setattr(spark_spec, "ONE_PART_ROWS", 0)  # range-partitioned, as Spark writes a large table
    spark.conf.set("spark.sql.adaptive.coalescePartitions.enabled", "false")  # one part per shuffle partition
    try:
        write_spark_spec(partition, path, "stratified-group-kfold", **options)
    finally:
        spark.conf.unset("spark.sql.adaptive.coalescePartitions.enabled")
    assert len(list((path / "samples.parquet").glob("*.parquet"))) > 1  # parts, as Spark writes them
    spec = read_spec(path)
    assert read_spec(tmp_path / "one.dgspec").digest == spec.digest
    result = run_r(
        f'spec <- read_depgraph_spec("{path}")\n'
        "rset <- depgraph_rset(spec)\n"
        "out <- list(digest = attr(spec, 'depgraph')$digest, sex = spec$sex,\n"
        "  assessment = lapply(rset$splits, function(s) rsample::assessment(s)$sample_id))\n"
        f'writeLines(jsonlite::toJSON(out, auto_unbox = TRUE), "{tmp_path / "from_r.json"}")'
    )
    assert result.returncode == 0, result.stderr
    from_r = json.loads((tmp_path / "from_r.json").read_text())
    assert from_r["digest"] == spec.digest
    assert from_r["sex"] == spec.samples["sex"].tolist()
    ids = spec.sample_ids
    assert from_r["assessment"] == [ids[split.test].tolist() for split in spec.folds.splits]
