"""Reprs and notebook tables: what a REPL shows says what the object holds, stays short at 10^5 samples, and
escapes every id in HTML."""

from __future__ import annotations

import re

import pandas as pd
import pytest

import depgraph
from depgraph.findings import Issue
from depgraph.spec.model import FoldPlan

N = 10**5
SCRIPT = "<script>alert(1)</script>"


@pytest.fixture(scope="module")
def big() -> dict:
    """10^5 samples, three per subject, 50 batches; one sample named like a script tag has no subject, and a
    batch named like a tag holds two samples of different subjects."""
    sample_ids = [f"S{i:06d}" for i in range(N)] + [SCRIPT]
    subjects = [f"P{i // 3:05d}" for i in range(N)] + [None]
    batches = [f"B{i % 50}" for i in range(N)] + ["<i>b</i>"]
    batches[0] = batches[3] = "<i>b</i>"  # subjects P00000 and P00001: one batch spread over two groups
    meta = pd.DataFrame({"sample_id": sample_ids, "subject_id": subjects, "batch_id": batches})
    graph = depgraph.from_metadata(meta)
    partition = depgraph.derive(graph, "subject")
    spec = depgraph.assign_folds(depgraph.SplitSpec.from_partition(partition, graph), "group-kfold", n_splits=5)
    return {
        "meta": meta,
        "graph": graph,
        "report": depgraph.validate(graph, n_splits=5),
        "partition": partition,
        "spec": spec,
        "exposure": depgraph.exposure(graph, spec),
    }


def assert_escaped(fragment: str) -> None:
    assert SCRIPT not in fragment and "<i>" not in fragment
    assert "<script" not in fragment.lower()


# --------------------------------------------------------------------------- findings
def test_an_issue_shows_a_few_ids_then_how_many_more() -> None:
    issue = Issue("repeated_subject_samples", "advisory", "many", ids=tuple(f"P{i}" for i in range(N)), level="leakage")
    text = repr(issue)
    assert text.startswith("Issue('repeated_subject_samples', 'advisory', level='leakage', count=100000, ")
    assert "ids=['P0', 'P1', 'P2', ... and 99997 more]" in text and "'P3'" not in text
    assert len(text) < 200 and str(issue) == text
    assert "ids=['a', 'b']" in repr(Issue("x", "warning", "m", ids=("a", "b")))  # nothing hidden: no "more"


def test_validation_report_lists_each_finding_with_its_count_and_first_ids(big: dict) -> None:
    report, meta = big["report"], big["meta"]
    text = repr(report)
    lines = text.splitlines()
    assert lines[0] == (
        f"ValidationReport(valid={report.valid}, {len(report.errors)} errors, {len(report.warnings)} warnings, "
        f"{len(report.advisories)} advisories)"
    )
    assert len(lines) == 2 + len(report.issues) and len(text) < 3000  # a header line, then one line per finding
    repeated = (meta["subject_id"].value_counts() > 1).sum()  # subjects with several samples, counted by pandas
    row = next(line for line in lines if "repeated_subject_samples" in line)
    assert re.search(rf"advisory\s+leakage\s+repeated_subject_samples\s+{repeated} ", row)
    assert row.endswith(f"subject:P00000, subject:P00001, subject:P00002 and {repeated - 3} more")
    missing = next(line for line in lines if "sample_missing_subject_assignment" in line)
    assert re.search(rf"warning\s+semantic\s+sample_missing_subject_assignment\s+1 sample:{re.escape(SCRIPT)}$",
                     missing)  # fmt: skip
    for issue in report.issues:
        assert issue.code in text and issue.severity in text


def test_a_finding_about_no_ids_shows_its_message() -> None:
    graph = depgraph.from_metadata(pd.DataFrame({"sample_id": ["S1", "S2"], "batch_id": ["B", "B"]}))
    report = depgraph.validate(graph, n_splits=2, modes=["batch"])
    single = next(i for i in report.issues if i.code == "single_group")
    assert single.ids == () and re.search(rf"single_group\s+1 {re.escape(single.message)}", repr(report))


def test_a_clean_report_is_one_line() -> None:
    graph = depgraph.from_metadata(pd.DataFrame({"sample_id": ["S1", "S2", "S3", "S4"], "subject_id": list("PQRS")}))
    report = depgraph.validate(graph)
    assert report.issues == () and repr(report) == ("ValidationReport(valid=True, 0 errors, 0 warnings, 0 advisories)")


# --------------------------------------------------------------------------- partition, spec, folds
def test_partition_mentions_its_findings(big: dict) -> None:
    partition = big["partition"]
    lines = repr(partition).splitlines()
    assert lines[0] == f"Partition(subject: {N + 1} samples in {N // 3 + 2} groups; 1 finding)"
    assert [w.code for w in partition.warnings] == ["unlinked_samples"]
    assert re.fullmatch(rf"warning\s+unlinked_samples\s+1 {re.escape(SCRIPT)}", lines[2])
    assert len(lines) == 3


def test_spec_prints_a_short_summary_not_its_columns(big: dict) -> None:
    spec = big["spec"]
    groups = N // 3 + 2
    assert repr(spec) == f"SplitSpec(subject: {N + 1} samples in {groups} groups, 5 splits (group-kfold), 1 finding)"
    text = str(spec)
    assert len(text.splitlines()) <= 12 and len(text) < 1500
    sizes = sorted(s.n_test for s in spec.folds.splits)
    assert f"folds: group-kfold (seed 0): 5 splits, {sizes[0]}-{sizes[-1]} test samples each" in text
    assert "columns: sample_id, group_id, batch_group" in text
    assert "relations followed: sample_belongs_to_subject" in text
    assert f"digest {spec.digest[:19]}" in text and "unlinked_samples" in text
    assert "S000004" not in text  # no sample column printed


def test_fold_plans_and_splits_show_counts_not_positions(big: dict) -> None:
    plan = big["spec"].folds
    split = plan.splits[0]
    assert (
        repr(split)
        == str(split)
        == (f"FoldSplit(repeat=0, fold=0, n_train={split.n_train}, n_test={split.n_test}, n_excluded=0)")
    )
    assert repr(plan) == str(plan) and repr(plan).startswith("FoldPlan(group-kfold (seed 0): 5 splits, ")
    assert len(repr(plan)) < 100
    one = FoldPlan.from_roles(pd.DataFrame([[0, 1, 1]]).to_numpy(), scheme="custom")
    assert repr(one) == "FoldPlan(custom: 1 splits, 2 test samples each)"
    warning = big["spec"].warnings[0]
    assert str(warning) == repr(warning) and f"ids=[{SCRIPT!r}]" in repr(warning)


# --------------------------------------------------------------------------- exposure
def test_exposure_shows_the_verdict_and_a_row_per_relation(big: dict) -> None:
    report = big["exposure"]
    lines = repr(report).splitlines()
    assert lines[0] == f"ExposureReport: {report.verdict()}"
    assert len(repr(report)) < 2000
    header = lines[1].split()
    table = report.table
    listed = [c for c in table.columns if isinstance(table[c].iloc[0], list)]  # per-split counts
    assert listed and header == [c for c in table.columns if c not in listed]  # the table's own columns, any names
    for row in table.drop(columns=listed).itertuples(index=False):
        line = next(x for x in lines if x.startswith(row[0] + " "))
        assert line.split()[: len(header) - 1] == [str(v) for v in row[:-1]]  # every value but the examples
        assert line.endswith(row[-1])
    batch = table.set_index(table.columns[0]).loc["sample_processed_in_batch", "examples"]
    assert batch.startswith("<i>b</i>, ")  # ids shown as they are in text
    assert "blocks across the folds:" in lines and any(x.startswith("relation ") and "cramers_v" in x for x in lines)


# --------------------------------------------------------------------------- notebooks
@pytest.mark.parametrize("name", ["report", "partition", "spec", "exposure"])
def test_notebook_tables_escape_every_id(big: dict, name: str) -> None:
    fragment = big[name]._repr_html_()
    assert fragment.startswith('<div class="depgraph">') and "<table" in fragment
    assert_escaped(fragment)
    assert len(fragment) < 20_000
    if name != "exposure":  # the sample named like a script tag is a finding of the other three
        assert "&lt;script&gt;alert(1)&lt;/script&gt;" in fragment
    else:
        assert "&lt;i&gt;b&lt;/i&gt;" in fragment
    text = repr(big[name])
    for code in re.findall(r"^\S+\s+(?:\S+\s+)?([a-z_]+)\s+\d+ ", text, flags=re.M):  # findings shown in text
        assert f"<td>{code}</td>" in fragment


def test_spec_notebook_table_lists_the_splits(big: dict) -> None:
    fragment = big["spec"]._repr_html_()
    for split in big["spec"].folds.splits:
        assert f"<td>{split.n_test}</td>" in fragment


# --------------------------------------------------------------------------- torch samplers
def test_samplers_show_split_role_and_size(big: dict) -> None:
    pytest.importorskip("torch", reason="the torch extra is not installed (CI installs it)")
    spec = big["spec"]
    ids = spec.sample_ids
    n_test = spec.folds.splits[1].n_test
    fold = depgraph.FoldSampler(spec, split=1, role="test", ids=ids)
    assert repr(fold) == f"FoldSampler(split=1, role='test': {n_test} rows, shuffle=False, seed=0, epoch=0)"
    n_train = spec.folds.splits[0].n_train
    groups = spec.samples.loc[spec.folds.splits[0].train(spec.n_samples), "group_id"].nunique()
    batches = depgraph.GroupBatchSampler(spec, 32, ids=ids, seed=4)
    assert repr(batches) == (
        f"GroupBatchSampler(split=0, role='train': {n_train} rows in {groups} groups, batch_size=32, "
        "max_per_group=None, shuffle=True, seed=4, epoch=0)"
    )
    shard = depgraph.GroupDistributedSampler(spec, 4, 3, ids=ids)
    shard.set_epoch(2)
    assert repr(shard) == (
        f"GroupDistributedSampler(split=0, role='train': {n_train} rows in {groups} groups, rank 3 of 4, pad=True, "
        "shuffle=True, seed=0, epoch=2)"
    )
