"""The columnar form of graphs and specs: the same content as the JSON file, the same digest, both ways; every
element of every Parquet table checked (a tampered column is refused as a tampered JSON array is); written whole,
never over a directory that is not one."""

from __future__ import annotations

import json
import os
import re
from pathlib import Path

import numpy as np
import orjson
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from depgraph import (
    Constraint,
    SplitSpec,
    add_kinship,
    assign_folds,
    derive,
    from_metadata,
    read_graph,
    read_spec,
    write_graph,
    write_spec,
)
from depgraph.cli.demo import demo_cohort
from depgraph.cli.main import main
from depgraph.errors import DepgraphError
from depgraph.graph.files import graph_document
from depgraph.io.jsoncolumns import json_array
from depgraph.spec.digest import content_digest
from depgraph.spec.files import spec_bytes, spec_document
from tests.conftest import case_metadata, conformance_cases, load_case
from tests.documents import redigest
from tests.test_properties import build, cohorts


@pytest.fixture
def demo_graph():
    cohort = demo_cohort(n_families=8, n_redeposits=2)
    return add_kinship(from_metadata(cohort.metadata, name="demo"), cohort.kinship, threshold="first")


@pytest.fixture
def demo_spec(demo_graph):
    spec = SplitSpec.from_partition(derive(demo_graph, "relatedness"), demo_graph, attributes=["family"])
    return assign_folds(spec, "stratified-group-kfold", n_splits=3, seed=1)


def same_spec(a: SplitSpec, b: SplitSpec) -> None:
    assert a.digest == b.digest == a.compute_digest() == b.compute_digest()
    assert spec_document(a) == spec_document(b)
    assert spec_bytes(a) == spec_bytes(b)


# --------------------------------------------------------------------------- the JSON encoder the digest uses
@settings(max_examples=200, deadline=None)
@given(st.lists(st.one_of(st.none(), st.text()), max_size=20))
def test_text_columns_are_spelt_as_orjson_spells_them(values):
    assert json_array(pa.array(values, type=pa.string())) == orjson.dumps(values)
    assert json_array(pa.array(values, type=pa.string()).dictionary_encode()) == orjson.dumps(values)


@settings(max_examples=200, deadline=None)
@given(
    st.one_of(
        st.lists(st.one_of(st.none(), st.integers(-(2**63), 2**63 - 1)), max_size=20),
        st.lists(st.one_of(st.none(), st.floats(allow_nan=False, allow_infinity=False)), max_size=20),
        st.lists(st.one_of(st.none(), st.booleans()), max_size=20),
    )
)
def test_number_and_boolean_columns_are_spelt_as_orjson_spells_them(values):
    kind = {int: pa.int64(), float: pa.float64(), bool: pa.bool_()}
    present = [v for v in values if v is not None]
    arrow = pa.array(values, type=kind[type(present[0])] if present else pa.null())
    assert json_array(arrow) == orjson.dumps(values)


# --------------------------------------------------------------------------- round trips
@pytest.mark.parametrize("case", conformance_cases(), ids=lambda p: p.stem)
def test_conformance_cases_round_trip_in_both_forms(tmp_path, case):
    graph = from_metadata(case_metadata(load_case(case)))
    write_graph(graph, tmp_path / "g.dggraph")
    write_graph(graph, tmp_path / "g.json")
    assert read_graph(tmp_path / "g.dggraph").equals(graph)
    assert read_graph(tmp_path / "g.json").equals(read_graph(tmp_path / "g.dggraph"))
    for mode in ("subject", "batch", "time", "composite"):
        try:
            partition = derive(graph, mode, allow_unlinked=True, allow_single_group=True)
        except DepgraphError:  # a mode the case cannot derive is the conformance tests' business
            continue
        spec = SplitSpec.from_partition(partition, graph)
        if spec.summary.n_groups >= 2:
            spec = assign_folds(spec, "group-kfold", n_splits=2)
        write_spec(spec, tmp_path / f"{mode}.dgspec")
        write_spec(spec, tmp_path / f"{mode}.json")
        same_spec(read_spec(tmp_path / f"{mode}.dgspec"), spec)
        same_spec(read_spec(tmp_path / f"{mode}.json"), read_spec(tmp_path / f"{mode}.dgspec"))


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(cohorts(min_samples=2, max_samples=12), st.sampled_from(["subject", "relatedness", "composite"]))
def test_generated_cohorts_round_trip_in_both_forms(tmp_path_factory, cohort, mode):
    folder = tmp_path_factory.mktemp("forms")
    graph = build(cohort)
    write_graph(graph, folder / "g.dggraph")
    back = read_graph(folder / "g.dggraph")
    assert back.equals(graph)
    assert graph_document(back) == graph_document(graph)
    try:
        partition = derive(graph, mode, allow_unlinked=True, allow_single_group=True)
    except DepgraphError:
        return
    spec = SplitSpec.from_partition(partition, graph, attributes="all")
    if spec.summary.n_groups >= 2:
        spec = assign_folds(spec, "group-kfold", n_splits=2, seed=3)
    write_spec(spec, folder / "s.dgspec")
    same_spec(read_spec(folder / "s.dgspec"), spec)


def test_export_converts_between_the_forms_both_ways_losslessly(tmp_path, demo_graph, demo_spec, capsys):
    write_spec(demo_spec, tmp_path / "spec.json")
    write_graph(demo_graph, tmp_path / "graph.json")
    steps = [
        ("spec.json", "parquet", "a.dgspec"), ("a.dgspec", "json", "b.json"), ("b.json", "parquet", "c"),
        ("graph.json", "parquet", "g.dggraph"), ("g.dggraph", "json", "h.json"),
    ]  # fmt: skip
    for source, to, target in steps:
        assert main(["export", str(tmp_path / source), "--to", to, "-o", str(tmp_path / target)]) == 0, (
            capsys.readouterr()
        )
    assert (tmp_path / "b.json").read_bytes() == (tmp_path / "spec.json").read_bytes()  # the same bytes, back
    assert (tmp_path / "h.json").read_bytes() == (tmp_path / "graph.json").read_bytes()
    assert (tmp_path / "c").is_dir()  # no suffix: the columnar form, as --to asked
    for columnar in ("a.dgspec", "c"):
        same_spec(read_spec(tmp_path / columnar), demo_spec)
    assert read_graph(tmp_path / "g.dggraph").equals(demo_graph)
    capsys.readouterr()
    assert main(["validate", str(tmp_path / "a.dgspec")]) == 0
    assert f"digest {demo_spec.digest} verified" in capsys.readouterr().out


def test_the_files_hold_what_other_tools_read(tmp_path, demo_spec):
    write_spec(demo_spec, tmp_path / "spec.dgspec")
    folder = tmp_path / "spec.dgspec"
    assert sorted(p.name for p in folder.iterdir()) == ["folds.parquet", "manifest.json", "samples.parquet"]
    manifest = json.loads((folder / "manifest.json").read_text())
    assert manifest["digest"] == demo_spec.digest and "samples" not in manifest
    assert manifest["tables"]["samples.parquet"] == {"rows": demo_spec.n_samples, "columns": list(demo_spec.samples)}
    assert all(
        set(split) == {"repeat", "fold", "n_train", "n_test", "n_excluded"} for split in manifest["folds"]["splits"]
    )
    samples = pq.read_table(folder / "samples.parquet").to_pandas()
    assert samples["sample_id"].tolist() == demo_spec.samples["sample_id"].tolist()
    folds = pq.read_table(folder / "folds.parquet").to_pandas()
    assert folds.columns.tolist() == ["split", "role", "position", "sample_id"]
    for i, split in enumerate(demo_spec.folds.splits):
        rows = folds[folds["split"] == i]
        assert rows.loc[rows["role"] == "test", "position"].tolist() == split.test.tolist()
        assert rows.loc[rows["role"] == "test", "sample_id"].tolist() == samples["sample_id"].iloc[split.test].tolist()


def test_a_spec_of_mixed_kinds_in_one_column_stays_json(tmp_path):
    spec = SplitSpec.build(
        pd.DataFrame({"sample_id": ["S1", "S2"], "group_id": ["a", "b"], "note": pd.Series(["x", 3], dtype=object)}),
        constraint=Constraint(mode="subject"),
        recommended_resampling="grouped_cv",
    )
    write_spec(spec, tmp_path / "s.json")
    with pytest.raises(DepgraphError, match=re.escape("samples.note mixes values of several kinds")) as info:
        write_spec(spec, tmp_path / "s.dgspec")
    assert info.value.code == "invalid_argument"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["s.json"]  # nothing half-written, no temporary left


# --------------------------------------------------------------------------- tampering
def _rewrite(folder: Path, name: str, change) -> None:
    table = pq.read_table(folder / name)
    pq.write_table(change(table), folder / name)


def _set(table: pa.Table, column: str, row: int, value) -> pa.Table:
    values = table.column(column).to_pylist()
    values[row] = value
    return table.set_column(
        table.column_names.index(column), column, pa.array(values, type=table.schema.field(column).type)
    )


SPEC_TAMPERING = [
    ("group-changed", "samples.parquet", lambda t: _set(t, "group_id", 0, "relatedness:elsewhere"), "integrity",
     "digest does not match"),
    ("id-emptied", "samples.parquet", lambda t: _set(t, "sample_id", 3, ""), "schema", "samples.sample_id[3] is ''"),
    ("id-missing", "samples.parquet", lambda t: _set(t, "sample_id", 2, None), "schema",
     "samples.sample_id[2] is None"),
    ("row-dropped", "samples.parquet", lambda t: t.slice(1), "schema", "rows; its manifest.json says"),
    ("column-retyped", "samples.parquet",
     lambda t: t.set_column(t.column_names.index("time_index"), "time_index", pa.array(np.arange(t.num_rows))),
     "schema", "samples.time_index holds int64 values"),
    ("rank-zero", "samples.parquet", lambda t: _set(t, "order_rank", 0, 0), "schema", "samples.order_rank[0] is 0"),
    ("fold-moved", "folds.parquet", lambda t: _set(t, "position", 0, t.column("position")[0].as_py() + 1), "schema",
     "names sample"),
    ("fold-row-dropped", "folds.parquet", lambda t: t.slice(1), "schema", "folds.parquet holds"),
    ("fold-reordered", "folds.parquet", lambda t: t.take(pa.array([1, 0, *range(2, t.num_rows)])), "schema",
     "out of order"),
    ("role-renamed", "folds.parquet", lambda t: _set(t, "role", 0, "train"), "schema", "roles are test and excluded"),
    ("rank-beyond-64-bits", "samples.parquet",  # unsigned: once a traceback (Arrow's cast), now one line
     lambda t: t.set_column(t.column_names.index("order_rank"), "order_rank",
                            pa.array([1] + [2**64 - 1] * (t.num_rows - 1), pa.uint64())),
     "schema", "samples.order_rank[1] is 18446744073709551615"),
]  # fmt: skip


@pytest.mark.parametrize(
    ("name", "table", "change", "code", "fragment"), SPEC_TAMPERING, ids=[c[0] for c in SPEC_TAMPERING]
)
def test_a_tampered_spec_column_is_refused(tmp_path, demo_spec, name, table, change, code, fragment):
    folder = tmp_path / "spec.dgspec"
    write_spec(demo_spec, folder)
    _rewrite(folder, table, change)
    with pytest.raises(DepgraphError) as info:
        read_spec(folder)
    assert info.value.code == code and fragment in info.value.message, info.value.message


def test_a_recomputed_digest_does_not_let_a_spec_contradict_itself(tmp_path, demo_spec):
    folder = tmp_path / "spec.dgspec"
    write_spec(demo_spec, folder)

    # swap two sample ids (their order breaks) and recompute the digest the way anyone can
    def swapped(table: pa.Table) -> pa.Table:
        first, second = table.column("sample_id")[0].as_py(), table.column("sample_id")[1].as_py()
        return _set(_set(table, "sample_id", 0, second), "sample_id", 1, first)

    _rewrite(folder, "samples.parquet", swapped)
    ids = pq.read_table(folder / "samples.parquet").column("sample_id")
    _rewrite(folder, "folds.parquet", lambda t: t.set_column(3, "sample_id", ids.take(t.column("position"))))
    manifest = json.loads((folder / "manifest.json").read_text())
    doc = json.loads(json.dumps({k: v for k, v in manifest.items() if k != "tables"}))  # a copy to fill in
    samples = pq.read_table(folder / "samples.parquet").to_pydict()
    doc["samples"] = {k: [None if isinstance(v, float) and np.isnan(v) else v for v in vs] for k, vs in samples.items()}
    folds = pq.read_table(folder / "folds.parquet").to_pandas()
    for i, split in enumerate(doc["folds"]["splits"]):
        rows = folds[folds["split"] == i]
        split["test"] = rows.loc[rows["role"] == "test", "position"].tolist()
        split["excluded"] = rows.loc[rows["role"] == "excluded", "position"].tolist()
    manifest["digest"] = redigest(doc)["digest"]
    (folder / "manifest.json").write_text(json.dumps(manifest))
    with pytest.raises(DepgraphError) as info:
        read_spec(folder)
    assert info.value.code == "integrity" and "byte order" in info.value.message, info.value.message


def test_the_directory_holds_what_its_manifest_lists(tmp_path, demo_spec):
    folder = tmp_path / "spec.dgspec"
    write_spec(demo_spec, folder)
    (folder / "notes.txt").write_text("x")
    with pytest.raises(DepgraphError, match=re.escape("holds 'notes.txt', which its manifest.json does not list")):
        read_spec(folder)
    (folder / "notes.txt").unlink()
    (folder / ".DS_Store").write_text("x")  # hidden files are passed over, as Hadoop's _SUCCESS markers are
    (folder / "_SUCCESS").write_text("")
    assert read_spec(folder).digest == demo_spec.digest
    (folder / "folds.parquet").write_bytes(b"PAR1 not really")
    with pytest.raises(DepgraphError, match=re.escape("folds.parquet is not a readable Parquet table")) as info:
        read_spec(folder)
    assert info.value.code == "parse"
    (folder / "folds.parquet").unlink()
    with pytest.raises(DepgraphError, match=re.escape("lacks folds.parquet, which its manifest.json lists")):
        read_spec(folder)
    (folder / "manifest.json").unlink()
    with pytest.raises(DepgraphError, match=re.escape("holds no manifest.json")) as info:
        read_spec(folder)
    assert info.value.code == "io"


def test_a_spec_written_by_parts_reads_as_one(tmp_path, demo_spec):
    # Spark writes a table as a directory of parts: the reader takes them in name order
    folder = tmp_path / "spec.dgspec"
    write_spec(demo_spec, folder)
    table = pq.read_table(folder / "samples.parquet")
    (folder / "samples.parquet").unlink()
    (folder / "samples.parquet").mkdir()
    half = table.num_rows // 2
    pq.write_table(table.slice(half), folder / "samples.parquet" / "part-00001.parquet")
    pq.write_table(table.slice(0, half), folder / "samples.parquet" / "part-00000.parquet")
    (folder / "samples.parquet" / "_SUCCESS").write_text("")
    same_spec(read_spec(folder), demo_spec)


GRAPH_TAMPERING = [
    ("key-repeated", "nodes/Subject.parquet", lambda t: _set(t, "key", 1, t.column("key")[0].as_py()), "duplicate_id",
     "repeats"),
    ("keys-unsorted", "nodes/Sample.parquet", lambda t: t.take(pa.array([1, 0, *range(2, t.num_rows)])), "schema",
     "keys are in byte order"),
    ("key-empty", "nodes/Sample.parquet", lambda t: _set(t, "key", 0, ""), "schema", "nodes.Sample.key[0] is ''"),
    ("endpoint-dangling", "edges/sample_belongs_to_subject.parquet", lambda t: _set(t, "target", 0, 10**6),
     "reference", "is not a row of nodes.Subject"),
    ("edge-repeated", "edges/sample_belongs_to_subject.parquet",
     lambda t: pa.concat_tables([t.slice(0, 1), t.slice(0, t.num_rows - 1)]), "duplicate_id", "lists an edge again"),
    ("undirected-backwards", "edges/subject_related_to.parquet",
     lambda t: t.set_column(0, "source", t.column("target")).set_column(1, "target", t.column("source")), "schema",
     "from its lower row to its higher"),
    ("weight-infinite", "edges/subject_related_to.parquet", lambda t: _set(t, "weight", 0, float("inf")), "schema",
     "values are finite numbers"),
    ("endpoint-beyond-64-bits", "edges/sample_belongs_to_subject.parquet",
     lambda t: t.set_column(1, "target", pa.array([2**64 - 1] * t.num_rows, pa.uint64())), "schema",
     "target[0] is 18446744073709551615"),
]  # fmt: skip


@pytest.mark.parametrize(
    ("name", "table", "change", "code", "fragment"), GRAPH_TAMPERING, ids=[c[0] for c in GRAPH_TAMPERING]
)
def test_a_tampered_graph_column_is_refused(tmp_path, demo_graph, name, table, change, code, fragment):
    folder = tmp_path / "graph.dggraph"
    write_graph(demo_graph, folder)
    _rewrite(folder, table, change)
    with pytest.raises(DepgraphError) as info:
        read_graph(folder)
    assert info.value.code == code and fragment in info.value.message, info.value.message


def test_ids_written_two_ways_in_unicode_are_refused_in_files(tmp_path):
    """A graph whose subject keys, or a spec whose group ids, hold one id composed and decomposed ("José" as é and
    as e + U+0301) is refused (``ambiguity``, naming both spellings), in JSON and in columnar form, a spec even with
    its digest recomputed: read as written, one person would be two subjects or two groups, split across train and
    test; every builder refuses the same ids."""
    composed, decomposed = "Jos\u00e9", "Jose\u0301"  # in byte order the decomposed comes first
    graph = from_metadata(pd.DataFrame({"sample_id": ["S1", "S2", "S3"], "subject_id": ["PX1", "PX2", "PX3"]}))
    spelt = {"PX1": decomposed, "PX2": composed}
    doc = graph_document(graph)
    doc["nodes"]["Subject"] = [spelt.get(k, k) for k in doc["nodes"]["Subject"]]
    edges = doc["edges"]["sample_belongs_to_subject"]
    edges["target"] = [spelt.get(k, k) for k in edges["target"]]
    (tmp_path / "g.json").write_bytes(orjson.dumps(doc))
    write_graph(graph, tmp_path / "g.dggraph")
    _rewrite(tmp_path / "g.dggraph", "nodes/Subject.parquet",
             lambda t: _set(_set(t, "key", 0, decomposed), "key", 1, composed))  # fmt: skip
    spec = SplitSpec.from_partition(derive(graph, "subject"), graph)
    write_spec(spec, tmp_path / "s.json")
    spec_doc = orjson.loads((tmp_path / "s.json").read_bytes())
    groups = {"subject:PX1": f"subject:{decomposed}", "subject:PX2": f"subject:{composed}"}
    spec_doc["samples"]["group_id"] = [groups.get(g, g) for g in spec_doc["samples"]["group_id"]]
    spec_doc["digest"] = content_digest(spec_doc)  # a consistent file: only its content can refuse it
    (tmp_path / "twins.json").write_bytes(orjson.dumps(spec_doc))
    cases = [(tmp_path / "g.json", read_graph, ""), (tmp_path / "g.dggraph", read_graph, ""),
             (tmp_path / "twins.json", read_spec, "subject:")]  # fmt: skip
    for path, read, prefix in cases:
        with pytest.raises(DepgraphError, match="differ only in Unicode normalisation") as info:
            read(path)
        assert info.value.code == "ambiguity", (path, info.value)
        assert sorted(info.value.details["ids"]) == sorted([prefix + composed, prefix + decomposed]), path
    assert read_spec(tmp_path / "s.json").digest == spec.digest  # as written, before the edit: read


# --------------------------------------------------------------------------- writing
def test_a_columnar_file_replaces_only_a_columnar_file(tmp_path, demo_spec):
    target = tmp_path / "spec.dgspec"
    write_spec(demo_spec, target)
    again = demo_spec.replace(graph_name="second")
    write_spec(again, target)  # replaced whole
    assert read_spec(target).graph_name == "second"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["spec.dgspec"]  # no staging or renamed-aside directory
    other = tmp_path / "photos.dgspec"
    other.mkdir()
    (other / "keep.jpg").write_bytes(b"x")
    with pytest.raises(DepgraphError, match=re.escape("without a manifest.json")) as info:
        write_spec(demo_spec, other)
    assert info.value.code == "io" and (other / "keep.jpg").read_bytes() == b"x"
    plain = tmp_path / "plain.dgspec"
    plain.write_text("a file")
    with pytest.raises(DepgraphError, match=re.escape("is a regular file, not a directory")):
        write_spec(demo_spec, plain)
    with pytest.raises(DepgraphError, match=re.escape("cannot be standard output")):
        write_spec(demo_spec, "-", format="parquet")
    link = tmp_path / "link.dgspec"
    link.symlink_to(target)
    write_spec(demo_spec, link)  # a link stays a link: its target is replaced
    assert link.is_symlink() and read_spec(target).graph_name == demo_spec.graph_name


def test_a_folder_holding_some_manifest_is_never_deleted(tmp_path, capsys, demo_spec, demo_graph):
    """A directory is replaced only when depgraph wrote it: a project folder holding its own manifest.json, or a
    columnar file someone added a file to, is refused (``io``) and left exactly as it was, by the library and by the
    command line; a spec written over a graph's columnar file, both depgraph's, is fine."""
    project = tmp_path / "webapp"
    (project / "src").mkdir(parents=True)
    (project / "manifest.json").write_text('{"name": "x"}')
    (project / "src" / "main.js").write_text("code")
    annotated = tmp_path / "annotated.dgspec"
    write_spec(demo_spec, annotated)
    (annotated / "notes.txt").write_text("mine")
    impostor = tmp_path / "impostor.dgspec"
    impostor.mkdir()
    (impostor / "manifest.json").write_text('{"format": "depgraph.split-spec", "tables": {"samples.parquet": {}}}')
    (impostor / "thesis.tex").write_text("years of work")
    cases = [(project, "that is not a depgraph graph's or spec's"), (annotated, "holds 'notes.txt', which is not"),
             (impostor, "holds 'thesis.tex', which is not")]  # fmt: skip
    for folder, reason in cases:
        before = sorted((p.relative_to(folder), p.read_bytes() if p.is_file() else None) for p in folder.rglob("*"))
        with pytest.raises(DepgraphError, match=re.escape(reason)) as info:
            write_spec(demo_spec, folder, format="parquet")
        assert info.value.code == "io" and "replaces only a columnar file it wrote" in info.value.message
        graph_file = tmp_path / "g.dggraph"
        write_graph(demo_graph, graph_file)
        capsys.readouterr()
        code = main(["derive", str(graph_file), "--mode", "subject", "--format", "parquet", "-o", str(folder)])
        err = capsys.readouterr().err
        assert code == 2 and err.startswith("depgraph: io: ") and err.count("\n") == 1, err
        after = sorted((p.relative_to(folder), p.read_bytes() if p.is_file() else None) for p in folder.rglob("*"))
        assert after == before, folder
    ours = tmp_path / "ours"
    (tmp_path / "g.dggraph").rename(ours)
    (ours / ".DS_Store").write_text("x")  # what a reader passes over (a desktop's, Hadoop's markers) is no obstacle
    (ours / "nodes" / "_SUCCESS").write_text("")
    write_spec(demo_spec, ours, format="parquet")  # depgraph's own columnar file: replaced
    assert read_spec(ours).digest == demo_spec.digest


def test_the_form_follows_the_name_or_the_format(tmp_path, demo_spec):
    write_spec(demo_spec, tmp_path / "plain", format="parquet")
    assert (tmp_path / "plain" / "manifest.json").is_file()
    write_spec(demo_spec, tmp_path / "spec.dgspec")
    assert (tmp_path / "spec.dgspec").is_dir()
    for path, form in (("spec.json", "parquet"), ("spec.dgspec", "json")):
        with pytest.raises(DepgraphError, match=re.escape("is named for the")) as info:
            write_spec(demo_spec, tmp_path / path, format=form)
        assert info.value.code == "invalid_argument"
    with pytest.raises(DepgraphError, match=re.escape("json or parquet")):
        write_spec(demo_spec, tmp_path / "x", format="feather")


# --------------------------------------------------------------------------- the command line
def test_the_user_path_in_columnar_files(tmp_path, capsys):
    cohort = demo_cohort(n_families=6, n_redeposits=2)
    cohort.metadata.to_csv(tmp_path / "meta.csv", index=False)
    cohort.kinship.to_csv(tmp_path / "kin.csv", index=False)
    cohort.features.to_csv(tmp_path / "features.csv", index=False)
    run = [
        ["build", "meta.csv", "--kinship", "kin.csv", "--kinship-threshold", "first", "-o", "g.dggraph"],
        ["validate", "g.dggraph"],
        ["audit", "g.dggraph", "features.csv", "--write-back", "-o", "audited.dggraph"],
        ["derive", "audited.dggraph", "--mode", "composite", "--via", "relatedness,duplicate", "-o", "s.dgspec"],
        ["folds", "s.dgspec", "--scheme", "group-kfold", "-k", "3", "-o", "f.dgspec"],
        ["validate", "f.dgspec"],
        ["diff", "s.dgspec", "f.dgspec"],
        ["report", "f.dgspec", "--graph", "audited.dggraph", "-o", "r.html"],
        ["export", "f.dgspec", "--to", "fold-table", "-o", "folds.csv"],
        ["derive", "audited.dggraph", "--mode", "subject", "--format", "parquet", "-o", "subject-spec"],
    ]
    cwd = os.getcwd()
    os.chdir(tmp_path)
    try:
        for args in run:
            capsys.readouterr()
            code = main(args)
            assert code in (0, 1), (args, capsys.readouterr())
    finally:
        os.chdir(cwd)
    assert (tmp_path / "subject-spec" / "manifest.json").is_file()
    spec = read_spec(tmp_path / "f.dgspec")
    assert pd.read_csv(tmp_path / "folds.csv")["sample_id"].nunique() == spec.n_samples


def test_large_json_outputs_suggest_the_columnar_form(tmp_path, demo_graph, monkeypatch, capsys):
    import depgraph.cli.commandline as commandline

    write_graph(demo_graph, tmp_path / "g.json")
    monkeypatch.setattr(commandline, "LARGE_JSON", 100)
    capsys.readouterr()
    assert main(["derive", str(tmp_path / "g.json"), "--mode", "subject", "-o", str(tmp_path / "s.json")]) == 0
    err = capsys.readouterr().err
    assert "depgraph: note:" in err and "-o s.dgspec" in err and "--format parquet" in err
    assert main(["derive", str(tmp_path / "g.json"), "--mode", "subject", "-o", str(tmp_path / "s.dgspec")]) == 0
    assert "note" not in capsys.readouterr().err


def test_a_graph_is_not_written_under_a_specs_name(tmp_path, demo_graph, capsys):
    write_graph(demo_graph, tmp_path / "g.json")
    capsys.readouterr()
    assert main(["export", str(tmp_path / "g.json"), "--to", "parquet", "-o", str(tmp_path / "g.dgspec")]) == 2
    err = capsys.readouterr().err
    assert "named for the" in err or "is named .dgspec" in err
    assert not (tmp_path / "g.dgspec").exists()


def test_a_table_that_cannot_be_written_leaves_nothing_behind(tmp_path, monkeypatch):
    graph = from_metadata(pd.DataFrame({"sample_id": [f"S{i}" for i in range(6)], "subject_id": list("aabbcc"),
                                        "batch_id": list("xyxyxy")}))  # fmt: skip
    real = pq.write_table

    def failing(table: pa.Table, where: Path, **options: object) -> None:
        if "Subject" in str(where):  # the disk fills while the tables are written two at a time
            raise OSError(28, "No space left on device")
        real(table, where, **options)

    monkeypatch.setattr(pq, "write_table", failing)
    with pytest.raises(DepgraphError, match=re.escape("g.dggraph' cannot be written: No space left on device")) as info:
        write_graph(graph, tmp_path / "g.dggraph")
    assert info.value.code == "io"
    assert list(tmp_path.iterdir()) == []  # nothing half-written, no staging directory left


def test_a_spec_whose_ids_a_writer_dictionary_encoded_is_read_alike(tmp_path):
    """Another writer may dictionary-encode sample_id and group_id; the ids' rules then met a dictionary array and
    failed with a bare ValueError. They are read as the plain columns are: the same spec, the same digest."""
    from depgraph.spec.files import read_spec, write_spec
    from depgraph.spec.model import Constraint, SplitSpec

    spec = SplitSpec.build(pd.DataFrame({"sample_id": ["S1", "S2", "S3"], "group_id": ["a", "a", "b"]}),
                           constraint=Constraint(mode="subject"), recommended_resampling="grouped_cv")  # fmt: skip
    write_spec(spec, tmp_path / "spec.dgspec")
    samples = pq.read_table(tmp_path / "spec.dgspec" / "samples.parquet")
    for name in ("sample_id", "group_id"):
        at = samples.column_names.index(name)
        samples = samples.set_column(at, name, pa.compute.dictionary_encode(samples.column(name)))
    pq.write_table(samples, tmp_path / "spec.dgspec" / "samples.parquet")
    assert pa.types.is_dictionary(
        pq.read_table(tmp_path / "spec.dgspec" / "samples.parquet").schema.field("group_id").type
    )
    read = read_spec(tmp_path / "spec.dgspec")
    assert read.digest == spec.digest and read.samples["group_id"].tolist() == ["a", "a", "b"]
