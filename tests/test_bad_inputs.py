"""A catalogue of bad inputs a user can cause, and how depgraph must refuse them.

Every case checks both faces of the contract (DESIGN §10):

* the Python API raises :class:`~depgraph.errors.DepgraphError` with the stable
  ``code`` listed here and a one-line message naming the offending rows, ids,
  column or path (rows are 1-based data rows, header excluded);
* the CLI (``depgraph.cli.main.main``) returns exit code 2, prints exactly one line
  on stderr, ``depgraph: <code>: <message>``, and leaves nothing on disk: the
  ``-o`` target does not exist afterwards and no temporary file is left behind.

Input files are written byte for byte as a user would write them.
"""

from __future__ import annotations

import bz2
import contextlib
import gzip
import hashlib
import json
import lzma
import os
import pty
import re
import signal
import socket
import stat
import subprocess
import sys
import tempfile
import threading
import time
import zipfile
from collections.abc import Iterator, Sequence
from datetime import date, datetime, timedelta, timezone
from datetime import time as time_of_day
from decimal import Decimal
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import depgraph.audit.evaluation
import depgraph.cli.demo
import depgraph.spec.diff
import depgraph.spec.files
import depgraph.vocab
from depgraph import (
    StudyGraph,
    add_duplicates,
    add_kinship,
    add_relations,
    add_spatial,
    combine,
    derive,
    from_metadata,
    read_graph,
    validate,
    write_graph,
)
from depgraph.adapters.frames import fold_table, samples_table, write_table
from depgraph.adapters.sklearn import SpecCV, groups_for, to_predefined_split
from depgraph.adapters.splitgraph import graph_to_splitgraph, read_splitgraph, spec_to_splitgraph, write_splitgraph_spec
from depgraph.audit.duplicates import audit_duplicates
from depgraph.audit.exposure import assignment_roles, exposure, straddling_groups
from depgraph.audit.report import render_html
from depgraph.cli.main import main
from depgraph.errors import ERROR_CODES, DepgraphError, DepgraphWarning
from depgraph.folds.schemes import BalancedHoldout, CovariateBins, GroupedKFold, HashFolds, assign_folds
from depgraph.graph.files import graph_bytes, graph_document
from depgraph.ingest.kinship import read_kinship
from depgraph.io.files import read_table
from depgraph.io.outputs import Outputs, atomic_write_bytes
from depgraph.spec.digest import content_digest
from depgraph.spec.files import read_spec, spec_document, spec_from_document, write_spec
from depgraph.spec.model import Constraint, FoldPlan, FoldSplit, Pseudonymization, SpecWarning, SplitSpec, Summary
from depgraph.spec.privacy import check_key, key_from_env, pseudonymize
from depgraph.vocab import NodeType
from tests import documents
from tests.conftest import CONFORMANCE

try:  # PyTorch is an extra: CI installs it (a missing torch must fail there); a newcomer's clone may not have it
    from depgraph.adapters.torch import FoldSampler, GroupBatchSampler, GroupDistributedSampler
except ModuleNotFoundError:
    if os.environ.get("CI"):
        raise
    FoldSampler = GroupBatchSampler = GroupDistributedSampler = None  # their cases skip, saying why


def _needs_torch(case: str) -> list[Any]:
    """A skip mark for the cases that call a torch sampler when PyTorch is not installed."""
    uses_torch = case.startswith(("FoldSampler", "GroupBatchSampler", "GroupDistributedSampler"))
    reason = "PyTorch is not installed (pip install 'depgraph[torch]')"
    return [pytest.mark.skipif(uses_torch and FoldSampler is None, reason=reason)]


#: A well-formed cohort: 4 samples, 3 subjects (P1 has two samples), 2 batches.
META = "sample_id,subject_id,batch_id\nS1,P1,B1\nS2,P1,B1\nS3,P2,B2\nS4,P3,B2\n"
#: Stands for the name of the offending file in expected message fragments.
FILE = "{file}"


# --------------------------------------------------------------------------- helpers
def _tree(root: Path) -> list[str]:
    return sorted(p.relative_to(root).as_posix() for p in root.rglob("*"))


def _fragments(fragments: Sequence[str], file: Path | None) -> list[str]:
    return [f.replace(FILE, file.name) if file is not None else f for f in fragments]


@contextlib.contextmanager
def fails_with(code: str, *fragments: str, file: Path | None = None) -> Iterator[pytest.ExceptionInfo]:
    """The block must raise DepgraphError(code) whose one-line message holds every fragment."""
    assert code in ERROR_CODES
    with pytest.raises(DepgraphError) as info:
        yield info
    err = info.value
    assert err.code == code, f"expected code {code!r}, got {err.code!r}: {err.message}"
    assert "\n" not in err.message, f"message is not one line: {err.message!r}"
    for fragment in _fragments(fragments, file):
        assert fragment in err.message, f"{fragment!r} not named in {err.message!r}"


def cli_fails(
    capsys: pytest.CaptureFixture[str],
    root: Path,
    args: Sequence[object],
    code: str,
    *fragments: str,
    output: Path | None = None,
    file: Path | None = None,
) -> str:
    """``depgraph <args>`` exits 2 with one ``depgraph: <code>: ...`` line on stderr and writes nothing."""
    assert code in ERROR_CODES
    before = _tree(root)
    capsys.readouterr()
    try:
        status = main([str(a) for a in args])
    except Exception as exc:  # a traceback is a bug: the CLI must report and exit 2
        pytest.fail(f"depgraph {' '.join(map(str, args))} raised {type(exc).__name__}: {exc}")
    err = capsys.readouterr().err
    lines = err.splitlines()
    assert status == 2, f"exit code {status}, stderr {err!r}"
    assert len(lines) == 1, f"expected exactly one stderr line, got {err!r}"
    assert lines[0].startswith(f"depgraph: {code}: "), lines[0]
    for fragment in _fragments(fragments, file):
        assert fragment in lines[0], f"{fragment!r} not named in {lines[0]!r}"
    if output is not None:
        assert not output.exists(), f"{output} was written by a failing command"
    assert _tree(root) == before, "a failing command left files behind"
    return lines[0]


def cli_ok(capsys: pytest.CaptureFixture[str], args: Sequence[object], status: int = 0) -> str:
    capsys.readouterr()
    got = main([str(a) for a in args])
    captured = capsys.readouterr()
    assert got == status, f"exit code {got}, stderr {captured.err!r}"
    return captured.out


def write(path: Path, text: str) -> Path:
    path.write_text(text, encoding="utf-8")
    return path


@pytest.fixture
def out_dir(tmp_path: Path) -> Path:
    out = tmp_path / "out"
    out.mkdir()
    return out


@pytest.fixture
def meta_csv(tmp_path: Path) -> Path:
    return write(tmp_path / "cohort.csv", META)


@pytest.fixture
def graph_json(tmp_path: Path, meta_csv: Path) -> Path:
    path = tmp_path / "graph.json"
    write_graph(from_metadata(meta_csv), path)
    return path


# --------------------------------------------------------------------------- metadata tables
METADATA_CASES = [
    pytest.param("sid,subject_id\nS1,P1\nS2,P2\n", "schema", ["sample_id", "sid"], id="no-sample_id-column"),
    pytest.param(
        "sample_id,subject_id\nS1,P1\nS2,P2\nS1,P3\n",
        "ambiguity",
        ["S1", "P1", "P3", "rows 1, 3"],
        id="duplicate-sample-two-subjects",
    ),
    pytest.param(
        "sample_id,batch_id\nS1,B1\nS2,B1\nS2,B2\n",
        "ambiguity",
        ["S2", "batch_id", "B1", "B2", "rows 2, 3"],
        id="duplicate-sample-two-batches",
    ),
    pytest.param("sample_id,subject_id\n", "empty_input", [FILE, "no rows"], id="header-only"),
    pytest.param("", "empty_input", [FILE, "0 bytes"], id="zero-byte-file"),
    pytest.param(
        "sample_id,subject_id\nS1,P1\n,P2\nS3,P3\nNA,P4\n   ,P5\n",
        "missing_id",
        ["sample_id", "rows 2, 4, 5"],
        id="blank-and-NA-sample-ids",
    ),
    pytest.param(
        "sample_id,timepoint_id,time_index\nS1,T0,0\nS2,T1,one\n",
        "invalid_value",
        ["time_index", "row 2", "one"],
        id="time_index-not-a-number",
    ),
    pytest.param(
        "sample_id,timepoint_id,time_index\nS1,T0,0\nS2,T0,1\nS3,T1,2\n",
        "ambiguity",
        ["T0", "time_index"],
        id="timepoint-with-two-time_index",
    ),
    pytest.param(
        "sample_id,subject_id\nS1,P1\nS2,P2,extra\nS3,P3\n",
        "parse",
        [FILE, "line 3"],
        id="row-with-too-many-fields",
    ),
    pytest.param(
        'sample_id,subject_id\nS1,P1\n"S2,P2\nS3,P3\n',
        "parse",
        [FILE, "line 3", "quote"],
        id="unterminated-quote",
    ),
    pytest.param(
        "sample_id,subject_id,subject_id \nS1,P1,P2\n",
        "schema",
        ["subject_id"],
        id="same-column-twice-after-trimming",
    ),
]


@pytest.mark.parametrize(("text", "code", "fragments"), METADATA_CASES)
def test_bad_metadata_file(tmp_path, out_dir, capsys, text, code, fragments):
    path = write(tmp_path / "cohort.csv", text)
    with fails_with(code, *fragments, file=path):
        from_metadata(path)
    target = out_dir / "graph.json"
    cli_fails(capsys, tmp_path, ["build", path, "-o", target], code, *fragments, output=target, file=path)


@pytest.mark.parametrize("cell", [" NA", "NA ", " null "])
def test_missing_token_with_blanks_is_a_missing_sample_id(tmp_path, out_dir, capsys, cell):
    path = write(tmp_path / "cohort.csv", f"sample_id,subject_id\nS1,P1\n{cell},P2\n")
    with fails_with("missing_id", "sample_id", "row 2"):
        from_metadata(path)
    target = out_dir / "graph.json"
    cli_fails(capsys, tmp_path, ["build", path, "-o", target], "missing_id", "row 2", output=target)


@pytest.mark.parametrize(
    ("frame", "code", "fragments"),
    [
        pytest.param(
            pd.DataFrame({"sample_id": ["S1", None, np.nan, " ", "S5"], "subject_id": ["P1", "P2", "P3", "P4", "P5"]}),
            "missing_id",
            ["sample_id", "rows 2, 3, 4"],
            id="None-NaN-blank-sample-ids",
        ),
        pytest.param(
            pd.DataFrame({"sample_id": pd.Series([1, "1", "S3"], dtype=object), "subject_id": ["P1", "P2", "P3"]}),
            "ambiguity",
            ["1", "int", "str", "rows 1, 2"],
            id="ids-differ-only-by-type",
        ),
        pytest.param(
            pd.DataFrame([["S1", "S2"]], columns=["sample_id", "sample_id"]),
            "schema",
            ["sample_id"],
            id="sample_id-column-twice",
        ),
        pytest.param(pd.DataFrame({"sample_id": pd.Series([], dtype=object)}), "empty_input", [], id="no-rows"),
    ],
)
def test_bad_metadata_frame(frame, code, fragments):
    with fails_with(code, *fragments):
        from_metadata(frame)


@pytest.mark.parametrize("kind", ["missing", "directory"])
def test_metadata_path_that_is_not_a_file(tmp_path, out_dir, capsys, kind):
    path = tmp_path / "nowhere.csv"
    if kind == "directory":
        path.mkdir()
    fragment = "does not exist" if kind == "missing" else "is a directory"
    with fails_with("io", FILE, fragment, file=path):
        from_metadata(path)
    target = out_dir / "graph.json"
    cli_fails(capsys, tmp_path, ["build", path, "-o", target], "io", FILE, fragment, output=target, file=path)


def test_column_mapping_to_an_absent_column(tmp_path, out_dir, meta_csv, capsys):
    with fails_with("schema", "run", "sample_id, subject_id, batch_id"):
        from_metadata(meta_csv, {"batch_id": "run"})
    target = out_dir / "graph.json"
    cli_fails(
        capsys, tmp_path, ["build", meta_csv, "--column", "batch_id=run", "-o", target], "schema", "run", output=target
    )


def test_sample_with_two_subjects_needs_the_override(tmp_path, out_dir, capsys):
    # S1 is listed first with P2, then with P1: the smallest subject id (P1) must win, not the first row.
    path = write(tmp_path / "cohort.csv", "sample_id,subject_id\nS1,P2\nS1,P1\nS2,P3\n")
    fragments = ("S1", "P1", "P2", "rows 1, 2", "allow_multi_subject_samples")
    with fails_with("ambiguity", *fragments):
        from_metadata(path)
    graph_file = out_dir / "graph.json"
    cli_fails(capsys, tmp_path, ["build", path, "-o", graph_file], "ambiguity", *fragments, output=graph_file)

    graph = from_metadata(path, allow_multi_subject_samples=True)
    partition = derive(graph, "subject")
    assert partition.groups() == {"S1": "subject:P1", "S2": "subject:P3"}
    (warning,) = [w for w in partition.warnings if w.code == "multi_subject_first_chosen"]
    assert warning.ids == ("S1",) and "S1" in warning.message
    assert validate(graph).valid

    cli_ok(capsys, ["build", path, "--allow-multi-subject-samples", "-o", graph_file])
    spec_file = out_dir / "spec.json"
    cli_ok(capsys, ["derive", graph_file, "--mode", "subject", "-o", spec_file])
    spec = json.loads(spec_file.read_text())
    groups = dict(zip(spec["samples"]["sample_id"], spec["samples"]["group_id"], strict=True))
    assert groups == {"S1": "subject:P1", "S2": "subject:P3"}
    assert "multi_subject_first_chosen" in [w["code"] for w in spec["warnings"]]


# --------------------------------------------------------------------------- kinship
KINSHIP_CASES = [
    pytest.param(
        "id1,id2,kinship\nP1,P2,0.25\nP3,P9,0.3\nP8,P2,0.2\n", "0.1", "reference", ["P8", "P9"], id="unknown-subjects"
    ),
    pytest.param("id1,id2,kinship\nP1,P2,0.25\nP2,P3,-0.1\n", "0.1", "invalid_value", ["row 2", "-0.1"], id="negative"),
    pytest.param("id1,id2,kinship\nP1,P2,0.25\nP2,P3,NA\n", "0.1", "invalid_value", ["row 2", "NaN"], id="NaN"),
    pytest.param("id1,id2,kinship\nP1,P2,\nP2,P3,0.3\n", "0.1", "invalid_value", ["row 1"], id="blank"),
    pytest.param("id1,id2,pi_hat\nP1,P2,0.5\n", "0.1", "schema", ["kinship", "pi_hat"], id="no-kinship-column"),
    pytest.param("id1,id2,kinship\nP1,P2,0.25\n", "fourth", "invalid_argument", ["fourth"], id="bad-threshold-name"),
    pytest.param("id1,id2,kinship\nP1,P2,0.25\n", "-0.1", "invalid_argument", ["-0.1"], id="negative-threshold"),
    pytest.param("id1,id2,kinship\n", "0.1", "empty_input", [FILE], id="header-only"),
]


@pytest.mark.parametrize(("text", "threshold", "code", "fragments"), KINSHIP_CASES)
def test_bad_kinship(tmp_path, out_dir, meta_csv, capsys, text, threshold, code, fragments):
    kin = write(tmp_path / "pairs.kin.csv", text)
    graph = from_metadata(meta_csv)
    with fails_with(code, *fragments, file=kin):
        add_kinship(graph, kin, threshold)
    target = out_dir / "graph.json"
    args = ["build", meta_csv, "--kinship", kin, "--kinship-threshold", threshold, "-o", target]
    cli_fails(capsys, tmp_path, args, code, *fragments, output=target, file=kin)


UNKNOWN_PAIRS = "id1,id2,kinship\nP1,P2,0.25\nP3,P9,0.3\nP8,P2,0.2\n"


def test_unknown_kinship_ids_can_be_ignored_and_are_reported(tmp_path, out_dir, meta_csv, capsys):
    kin = write(tmp_path / "pairs.csv", UNKNOWN_PAIRS)
    graph = add_kinship(from_metadata(meta_csv), kin, 0.1, unknown="ignore")
    assert graph.relation_counts()["subject_related_to"] == 1
    report = validate(graph)
    assert report.valid
    (dropped,) = [i for i in report.issues if i.code == "pairs_with_unknown_ids_dropped"]
    assert dropped.count == 2

    target = out_dir / "graph.json"
    cli_ok(
        capsys, ["build", meta_csv, "--kinship", kin, "--kinship-threshold", "0.1", "--unknown", "ignore", "-o", target]
    )
    assert read_graph(target).relation_counts()["subject_related_to"] == 1
    doc = json.loads(cli_ok(capsys, ["validate", target, "--json"]))
    assert doc["valid"] and doc["counts"]["pairs_with_unknown_ids_dropped"] == 2


def test_dropped_unknown_pairs_name_the_unknown_ids(tmp_path, meta_csv):
    # DESIGN §5: every issue names the offending ids (first few + count) and carries them.
    kin = write(tmp_path / "pairs.csv", UNKNOWN_PAIRS)
    report = validate(add_kinship(from_metadata(meta_csv), kin, 0.1, unknown="ignore"))
    (dropped,) = [i for i in report.issues if i.code == "pairs_with_unknown_ids_dropped"]
    assert "P8" in dropped.message and "P9" in dropped.message, dropped.message
    assert {"P8", "P9"} <= {i.split(":", 1)[-1] for i in dropped.ids}, dropped.ids


def test_kinship_without_threshold_on_the_command_line(tmp_path, out_dir, meta_csv, capsys):
    kin = write(tmp_path / "pairs.csv", "id1,id2,kinship\nP1,P2,0.25\n")
    target = out_dir / "graph.json"
    cli_fails(
        capsys,
        tmp_path,
        ["build", meta_csv, "--kinship", kin, "-o", target],
        "invalid_argument",
        "--kinship-threshold",
        output=target,
    )


# --------------------------------------------------------------------------- coordinates
COORD_CASES = [
    pytest.param("sample_id,x,y\nS1,0,0\nS2,1,\nS3,2,2\n", "1", "invalid_value", ["S2", "row 2"], id="NaN-coordinate"),
    pytest.param("sample_id,x,y\nS1,0,0\nS9,1,1\n", "1", "reference", ["S9"], id="unknown-sample"),
    pytest.param("sample_id,x,y\nS1,0,0\nS2,1,1\n", "-1", "invalid_argument", ["radius", "-1"], id="negative-radius"),
]


@pytest.mark.parametrize(("text", "radius", "code", "fragments"), COORD_CASES)
def test_bad_coordinates(tmp_path, out_dir, meta_csv, capsys, text, radius, code, fragments):
    coords = write(tmp_path / "coords.csv", text)
    graph = from_metadata(meta_csv)
    with fails_with(code, *fragments):
        add_spatial(graph, coords, float(radius))
    target = out_dir / "graph.json"
    args = ["build", meta_csv, "--coords", coords, "--radius", radius, "-o", target]
    cli_fails(capsys, tmp_path, args, code, *fragments, output=target)


# --------------------------------------------------------------------------- graph files
GRAPH_FILE_CASES = [
    pytest.param("{not json", "parse", [FILE, "not valid JSON"], id="invalid-json"),
    pytest.param(
        json.dumps({"format": "depgraph.split-spec", "format_version": "1.0.0", "nodes": {}}),
        "schema",
        [FILE, "format", "depgraph.study-graph", "depgraph.split-spec"],
        id="wrong-format",
    ),
    pytest.param("", "empty_input", [FILE], id="zero-byte-file"),
    pytest.param(None, "io", [FILE, "does not exist"], id="missing"),
    pytest.param("<dir>", "io", [FILE, "is a directory"], id="directory"),
]


@pytest.mark.parametrize(("text", "code", "fragments"), GRAPH_FILE_CASES)
def test_bad_graph_file(tmp_path, out_dir, capsys, text, code, fragments):
    path = tmp_path / "study.json"
    if text == "<dir>":
        path.mkdir()
    elif text is not None:
        write(path, text)
    with fails_with(code, *fragments, file=path):
        read_graph(path)
    # validate reads graphs and specs alike: a document claiming to be a spec is judged as one
    as_spec = text is not None and '"depgraph.split-spec"' in text
    cli_fails(capsys, tmp_path, ["validate", path], code, *([FILE] if as_spec else fragments), file=path)
    target = out_dir / "spec.json"
    cli_fails(
        capsys,
        tmp_path,
        ["derive", path, "--mode", "subject", "-o", target],
        code,
        *fragments,
        output=target,
        file=path,
    )


# --------------------------------------------------------------------------- derivation requests
SAMPLES = "{samples}"
DERIVE_CASES = [
    pytest.param({"mode": "family"}, ["--mode", "family"], "invalid_argument", ["family"], id="unknown-mode"),
    pytest.param(
        {"mode": "composite", "via": ["subject", "family"]},
        ["--mode", "composite", "--via", "subject,family"],
        "invalid_argument",
        ["family"],
        id="via-unknown-mode",
    ),
    pytest.param(
        {"mode": "subject", "samples": ["S1", "S9"]},
        ["--mode", "subject", "--samples", SAMPLES],
        "reference",
        ["S9"],
        id="unknown-samples",
    ),
    pytest.param(
        {"mode": "batch", "min_groups": 5},
        ["--mode", "batch", "--min-groups", "5"],
        "too_few_groups",
        ["2 group", "5"],
        id="min-groups-above-groups",
    ),
]


@pytest.mark.parametrize(("kwargs", "options", "code", "fragments"), DERIVE_CASES)
def test_bad_derive_request(tmp_path, out_dir, graph_json, capsys, kwargs, options, code, fragments):
    graph = read_graph(graph_json)
    kwargs = dict(kwargs)
    mode = kwargs.pop("mode")
    with fails_with(code, *fragments):
        derive(graph, mode, **kwargs)
    samples = write(tmp_path / "samples.txt", "S1\nS9\n")
    options = [str(samples) if o == SAMPLES else o for o in options]
    target = out_dir / "spec.json"
    cli_fails(capsys, tmp_path, ["derive", graph_json, *options, "-o", target], code, *fragments, output=target)


# --------------------------------------------------------------------------- time order
def test_cyclic_time_precedence(tmp_path, out_dir, capsys):
    meta = pd.DataFrame({"sample_id": ["S1", "S2", "S3"], "timepoint_id": ["T0", "T1", "T2"]})
    cycle = pd.DataFrame({"source": ["T0", "T1", "T2"], "target": ["T1", "T2", "T0"]})
    graph = add_relations(from_metadata(meta), cycle, "timepoint_precedes")
    with fails_with("time_order", "T0", "T1", "T2", "cycle"):
        derive(graph, "time")

    report = validate(graph)
    assert not report.valid
    (issue,) = [i for i in report.errors if i.code == "timepoint_precedence_cycle"]
    assert issue.severity == "error"
    assert {"timepoint:T0", "timepoint:T1", "timepoint:T2"} <= set(issue.ids)

    graph_file = tmp_path / "cyclic.json"
    write_graph(graph, graph_file)
    out = cli_ok(capsys, ["validate", graph_file], status=1)
    assert "timepoint_precedence_cycle" in out
    doc = json.loads(cli_ok(capsys, ["validate", graph_file, "--json"], status=1))
    assert not doc["valid"] and "timepoint_precedence_cycle" in doc["counts"]
    target = out_dir / "spec.json"
    cli_fails(
        capsys, tmp_path, ["derive", graph_file, "--mode", "time", "-o", target], "time_order", "T0", output=target
    )


# --------------------------------------------------------------------------- outputs
def test_output_directory_that_does_not_exist(tmp_path, meta_csv, graph_json, capsys):
    missing = tmp_path / "no-such-dir"
    graph = read_graph(graph_json)
    with fails_with("io", "no-such-dir", "does not exist"):
        write_graph(graph, missing / "graph.json")
    with fails_with("io", "no-such-dir", "does not exist"):
        write_spec(SplitSpec.from_partition(derive(graph, "subject"), graph), missing / "spec.json")
    cli_fails(capsys, tmp_path, ["build", meta_csv, "-o", missing / "graph.json"], "io", "no-such-dir")
    cli_fails(
        capsys, tmp_path, ["derive", graph_json, "--mode", "subject", "-o", missing / "spec.json"], "io", "no-such-dir"
    )
    assert not missing.exists()


def test_output_that_is_a_directory(tmp_path, out_dir, meta_csv, capsys):
    cli_fails(capsys, tmp_path, ["build", meta_csv, "-o", out_dir], "io", str(out_dir), "is a directory")
    assert out_dir.is_dir() and not any(out_dir.iterdir())


# --------------------------------------------------------------------------- command-line usage
USAGE_CASES = [
    pytest.param(["build", "{meta}", "--unknown", "maybe", "-o", "{target}"], ["maybe"], id="bad-unknown-policy"),
    pytest.param(
        ["build", "{meta}", "--coords", "{meta}", "--radius", "far", "-o", "{target}"],
        ["--radius"],
        id="radius-not-a-number",
    ),
    pytest.param(["derive", "{graph}", "-o", "{target}"], ["--mode"], id="derive-without-mode"),
    pytest.param(
        ["build", "{meta}", "--kinship-treshold", "0.1", "-o", "{target}"], ["--kinship-treshold"], id="misspelt-option"
    ),
    pytest.param(
        ["derive", "{graph}", "--mode", "batch", "--min-groups", "many", "-o", "{target}"],
        ["--min-groups"],
        id="min-groups-not-an-integer",
    ),
]


@pytest.mark.parametrize(("args", "fragments"), USAGE_CASES)
def test_bad_command_line_usage(tmp_path, out_dir, meta_csv, graph_json, capsys, args, fragments):
    # A usage mistake is bad input like any other: exit 2, one coded line on stderr, nothing written.
    target = out_dir / "result.json"
    subs = {"{meta}": str(meta_csv), "{graph}": str(graph_json), "{target}": str(target)}
    cli_fails(capsys, tmp_path, [subs.get(a, a) for a in args], "invalid_argument", *fragments, output=target)


@pytest.mark.parametrize("mode", [["subject"], 3, None])
def test_mode_that_is_not_a_name(graph_json, mode):
    with fails_with("invalid_argument", repr(mode)):
        derive(read_graph(graph_json), mode)


# ------------------------------------------------------------------- writes (issue 10)
# Every write goes through one plan (depgraph.io.outputs): all targets checked before the command's work, content staged
# in temporary files, put in place together at the end. A refused target leaves the tree exactly as it was (cli_fails
# compares the whole tree, temporary files included) and a refused FIFO, device or socket is still what it was.

WORKTREE = Path(__file__).resolve().parents[1]
#: A separate depgraph process: the CLI exactly as a user runs it, from this checkout.
DEPGRAPH = [sys.executable, "-c", "import sys; from depgraph.cli.main import main; sys.exit(main(sys.argv[1:]))"]


def _env() -> dict[str, str]:
    return {**os.environ, "PYTHONPATH": str(WORKTREE)}


def _temps(directory: Path) -> list[str]:
    """depgraph's temporary files in ``directory`` (``.{name}.depgraph-{host}-{pid}-{random}.tmp``)."""
    return sorted(p.name for p in directory.iterdir() if ".depgraph-" in p.name and p.name.endswith(".tmp"))


def _own_temps(directory: Path) -> list[str]:
    """This process's temporary files in a shared ``directory`` such as the system's temp folder (other
    processes, other test runs, may be writing there at the same time)."""
    return [name for name in _temps(directory) if f"-{os.getpid()}-" in name]


def _kind(path: Path) -> str:
    mode = os.lstat(path).st_mode
    for test, name in ((stat.S_ISLNK, "link"), (stat.S_ISREG, "file"), (stat.S_ISDIR, "dir"),
                       (stat.S_ISFIFO, "fifo"), (stat.S_ISCHR, "char"), (stat.S_ISBLK, "block"),
                       (stat.S_ISSOCK, "socket")):  # fmt: skip
        if test(mode):
            return name
    return "other"


def _mknod(path: Path, kind: int, major: int, minor: int) -> Path:
    try:
        os.mknod(path, kind | 0o666, os.makedev(major, minor))
    except PermissionError:
        pytest.skip("making a device node needs CAP_MKNOD (root)")
    return path


@pytest.fixture
def study_files(tmp_path: Path, meta_csv: Path, graph_json: Path) -> dict[str, Path]:
    """Every kind of input a command reads, written by depgraph itself."""
    graph = read_graph(graph_json)
    spec = SplitSpec.from_partition(derive(graph, "subject"), graph)
    write_spec(spec, tmp_path / "spec.json")
    write_spec(assign_folds(spec, "group-kfold", n_splits=3), tmp_path / "folds.json")
    write_splitgraph_spec(spec, tmp_path / "splitgraph.json")
    write(tmp_path / "kin.csv", "id1,id2,kinship\nP1,P2,0.25\n")
    write(tmp_path / "samples.txt", "S1\nS2\n")
    write(tmp_path / "features.csv", "sample_id,f1,f2\nS1,1,0\nS2,0,1\nS3,1,0.0001\nS4,0.3,1\n")
    (tmp_path / "a-file").write_text("not a directory\n")
    (tmp_path / "existing.html").write_text("old report\n")
    (tmp_path / "plots").mkdir()
    (tmp_path / "out").mkdir()
    return {
        "meta": meta_csv,
        "graph": graph_json,
        "spec": tmp_path / "spec.json",
        "folds": tmp_path / "folds.json",
        "splitgraph": tmp_path / "splitgraph.json",
        "kin": tmp_path / "kin.csv",
        "samples": tmp_path / "samples.txt",
        "features": tmp_path / "features.csv",
        "file": tmp_path / "a-file",
        "plots": tmp_path / "plots",
        "html": tmp_path / "existing.html",
        "out": tmp_path / "out",
    }


def _block_device(root: Path) -> Path:
    # never opened: refused on sight (a made-up loop device number, inside the test's own directory)
    return _mknod(root / "disk", stat.S_IFBLK, 7, 250)


def _socket(root: Path) -> Path:
    server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    cwd = os.getcwd()
    os.chdir(root)  # a relative name: socket paths are limited to 108 bytes
    try:
        server.bind("sock")
    finally:
        os.chdir(cwd)
    server.close()  # the socket file stays
    return root / "sock"


def _symlink_loop(root: Path) -> Path:
    os.symlink(root / "loop-b", root / "loop-a")
    os.symlink(root / "loop-a", root / "loop-b")
    return root / "loop-a"


def _hard_link_of_spec(root: Path) -> Path:
    os.link(root / "spec.json", root / "same-spec.json")
    return root / "same-spec.json"


def _symlink_to_graph(root: Path) -> Path:
    os.symlink(root / "graph.json", root / "graph-link.json")
    return root / "graph-link.json"


def _dotdot_spelling_of_spec(root: Path) -> Path:
    return root / "out" / ".." / "spec.json"


#: Each case: (command with {placeholders}, a target made by a function of the test directory or a placeholder,
#: fragments the one-line io message must hold). {target} is the output under test.
WRITE_CASES = [
    pytest.param(["derive", "{graph}", "--mode", "subject", "-o", "{target}"], _block_device,
                 ["disk", "block device"], id="derive-to-block-device"),
    pytest.param(["export", "{spec}", "--to", "samples-table", "-o", "{target}"], _block_device,
                 ["disk", "block device"], id="export-samples-table-to-block-device"),
    pytest.param(["export", "{spec}", "--to", "parquet", "-o", "{target}"], _block_device,
                 ["disk", "is a block device, not a directory"], id="export-columnar-to-block-device"),
    pytest.param(["build", "{meta}", "-o", "{target}"], _socket, ["sock", "socket"], id="build-to-socket"),
    pytest.param(["export", "{spec}", "--to", "csv", "-o", "{target}"], "{out}", ["out", "is a directory"],
                 id="export-csv-to-directory"),
    pytest.param(["folds", "{spec}", "--scheme", "group-kfold", "-k", "2", "-o", "{target}"], "{file}/spec.json",
                 ["a-file/spec.json", "is a file"], id="folds-parent-is-a-file"),
    pytest.param(["import", "splitgraph", "{splitgraph}", "-o", "{target}"], "{out}/missing/spec.json",
                 ["missing", "does not exist"], id="import-missing-directory"),
    pytest.param(["derive", "{graph}", "--mode", "subject", "-o", "{target}"], _symlink_loop,
                 ["loop-a", "symbolic links loop"], id="derive-to-symlink-loop"),
    pytest.param(["folds", "{spec}", "--scheme", "group-kfold", "-k", "2", "-o", "{target}"], "{spec}",
                 ["spec.json", "also an input"], id="folds-onto-its-spec"),
    pytest.param(["folds", "{spec}", "--scheme", "group-kfold", "-k", "2", "-o", "{target}"], _dotdot_spelling_of_spec,
                 ["spec.json", "the input"], id="folds-onto-its-spec-spelt-with-dotdot"),
    pytest.param(["export", "{spec}", "--to", "csv", "-o", "{target}"], _hard_link_of_spec,
                 ["same-spec.json", "the input", "spec.json"], id="export-onto-a-hard-link-of-its-input"),
    pytest.param(["audit", "{graph}", "{features}", "--write-back", "-o", "{target}"], "{graph}",
                 ["graph.json", "also an input"], id="audit-write-back-onto-its-graph"),
    pytest.param(["audit", "{graph}", "{features}", "--write-back", "-o", "{target}"], _symlink_to_graph,
                 ["graph-link.json", "the input"], id="audit-write-back-onto-a-link-to-its-graph"),
    pytest.param(["audit", "{graph}", "{features}", "-o", "{target}"], "{features}",
                 ["features.csv", "also an input"], id="audit-pairs-onto-the-features"),
    pytest.param(["build", "{meta}", "-o", "{target}"], "{meta}", ["cohort.csv", "also an input"],
                 id="build-onto-its-metadata"),
    pytest.param(["build", "{meta}", "--kinship", "{kin}", "--kinship-threshold", "0.1", "-o", "{target}"], "{kin}",
                 ["kin.csv", "also an input"], id="build-onto-its-kinship"),
    pytest.param(["derive", "{graph}", "--mode", "subject", "--samples", "{samples}", "-o", "{target}"], "{samples}",
                 ["samples.txt", "also an input"], id="derive-onto-its-sample-list"),
    pytest.param(["folds", "{spec}", "--scheme", "balanced-holdout", "--prior", "{folds}", "-o", "{target}"],
                 "{folds}", ["folds.json", "also an input"], id="folds-onto-its-prior"),
    pytest.param(["import", "splitgraph", "{splitgraph}", "-o", "{target}"], "{splitgraph}",
                 ["splitgraph.json", "also an input"], id="import-onto-its-source"),
    pytest.param(["export", "{folds}", "--to", "fold-table", "-o", "{target}"], "{folds}",
                 ["folds.json", "also an input"], id="export-fold-table-onto-its-spec"),
    pytest.param(["report", "{spec}", "-o", "{target}"], "{spec}", ["spec.json", "also an input"],
                 id="report-onto-its-spec"),
    pytest.param(["report", "{spec}", "-o", "{html}", "--plots-dir", "{target}"], "{out}/missing",
                 ["plot directory", "missing", "does not exist"], id="report-plots-dir-missing"),
    pytest.param(["report", "{spec}", "-o", "{html}", "--plots-dir", "{target}"], "{file}",
                 ["plot directory", "a-file", "not a directory"], id="report-plots-dir-is-a-file"),
    pytest.param(["report", "{spec}", "-o", "{target}", "--plots-dir", "{plots}"], "{plots}/group_sizes.png",
                 ["group_sizes.png", "written twice"], id="report-and-a-figure-to-one-file"),
    pytest.param(["report", "{spec}", "-o", "{html}", "--plots-dir", "{target}"], "-",
                 ["plot directory", "standard output"], id="report-plots-dir-is-stdout"),
    pytest.param(["demo", "-o", "{target}"], "{file}", ["a-file", "not a directory"], id="demo-into-a-file"),
    pytest.param(["demo", "-o", "{target}"], "{out}/missing/demo", ["missing", "does not exist"],
                 id="demo-under-a-missing-directory"),
    pytest.param(["demo", "-o", "{target}"], "-", ["standard output"], id="demo-to-stdout"),
]  # fmt: skip


def _fill(template: str, files: dict[str, Path]) -> str:
    for name, path in files.items():
        template = template.replace("{" + name + "}", str(path))
    return template


@pytest.mark.parametrize(("args", "target", "fragments"), WRITE_CASES)
def test_refused_outputs_leave_everything_as_it_was(tmp_path, study_files, capsys, args, target, fragments):
    made = target(tmp_path) if callable(target) else Path(_fill(target, study_files))
    files = {**study_files, "target": made}
    kind_before = _kind(made) if os.path.lexists(made) else None
    bytes_before = {p: p.read_bytes() for p in tmp_path.iterdir() if p.is_file() and not p.is_symlink()}
    before_tmp = _own_temps(Path(tempfile.gettempdir()))
    cli_fails(capsys, tmp_path, [_fill(a, files) for a in args], "io", *fragments)
    if kind_before is not None:
        assert _kind(made) == kind_before, f"{made} was a {kind_before}, is now a {_kind(made)}"
    for path, content in bytes_before.items():  # inputs (and the old report) untouched, byte for byte
        assert path.read_bytes() == content, path
    assert _own_temps(Path(tempfile.gettempdir())) == before_tmp  # nothing staged for a stream either


def test_an_output_directory_without_write_permission(tmp_path, meta_csv, capsys):
    locked = tmp_path / "locked"
    locked.mkdir()
    locked.chmod(0o555)
    try:
        if os.geteuid() != 0:
            cli_fails(
                capsys, tmp_path, ["build", meta_csv, "-o", locked / "graph.json"], "io", "locked", "not writable"
            )
            return
        # root passes every permission check: run depgraph as root without the powers to override them
        # (setpriv drops CAP_DAC_OVERRIDE and CAP_DAC_READ_SEARCH; the files stay root's, so reading works)
        if subprocess.run(["which", "setpriv"], capture_output=True).returncode != 0:
            pytest.skip("root without setpriv cannot be denied a write")
        drop = ["setpriv", "--bounding-set", "-dac_override,-dac_read_search",
                "--inh-caps", "-dac_override,-dac_read_search"]  # fmt: skip
        before = _tree(tmp_path)
        done = subprocess.run([*drop, *DEPGRAPH, "build", str(meta_csv), "-o", str(locked / "graph.json")],
                              capture_output=True, text=True, env=_env(), timeout=120)  # fmt: skip
        assert done.returncode == 2, done.stderr
        assert done.stderr.splitlines() == [f"depgraph: io: output directory '{locked}' is not writable"]
        assert _tree(tmp_path) == before
    finally:
        locked.chmod(0o755)


def test_a_read_only_output_is_not_replaced(tmp_path, meta_csv, graph_json, capsys):
    target = tmp_path / "kept.json"
    target.write_text("keep me\n")
    target.chmod(0o444)
    args = ["derive", str(graph_json), "--mode", "subject", "-o", str(target)]
    if os.geteuid() != 0:
        cli_fails(capsys, tmp_path, args, "io", "kept.json", "read-only")
    else:
        if subprocess.run(["which", "setpriv"], capture_output=True).returncode != 0:
            pytest.skip("root without setpriv cannot be denied a write")
        drop = ["setpriv", "--bounding-set", "-dac_override", "--inh-caps", "-dac_override"]
        done = subprocess.run([*drop, *DEPGRAPH, *args], capture_output=True, text=True, env=_env(), timeout=120)
        assert done.returncode == 2 and done.stderr.splitlines() == [
            f"depgraph: io: output '{target}' is read-only: depgraph does not replace it"
        ], done.stderr
    assert target.read_text() == "keep me\n" and stat.S_IMODE(target.stat().st_mode) == 0o444
    assert _temps(tmp_path) == []


def test_binary_output_is_not_sent_to_a_terminal(tmp_path, study_files):
    master, slave = pty.openpty()
    try:
        done = subprocess.run([*DEPGRAPH, "export", str(study_files["spec"]), "--to", "parquet", "-o", "-"],
                              stdout=slave, stderr=subprocess.PIPE, text=True, env=_env(), timeout=120)  # fmt: skip
    finally:
        os.close(slave)
    os.set_blocking(master, False)
    try:
        shown = os.read(master, 4096)
    except (BlockingIOError, OSError):  # nothing written (Linux gives EIO once the slave is closed)
        shown = b""
    os.close(master)
    assert done.returncode == 2 and shown == b""
    assert done.stderr.splitlines() == [
        "depgraph: io: standard output is a terminal: binary output (Parquet) is not written to it; redirect it or "
        "name a file"
    ]


# ------------------------------------------------------------------- writes that go through (issue 10)
class _FifoReader:
    """Reads a FIFO in a thread until its writer closes it; unblocks itself if no writer ever comes."""

    def __init__(self, path: Path) -> None:
        self.path, self.data = path, b""
        self.thread = threading.Thread(target=self._read, daemon=True)
        self.thread.start()

    def _read(self) -> None:
        with open(self.path, "rb") as handle:
            self.data = handle.read()

    def result(self) -> bytes:
        self.thread.join(timeout=5)
        if self.thread.is_alive():  # the command never opened it: open it ourselves so the thread ends
            os.close(os.open(self.path, os.O_WRONLY | os.O_NONBLOCK))
            self.thread.join(timeout=5)
        return self.data


@pytest.mark.slow  # a writer thread's timeouts: ~5 s; CI runs it (--slow)
def test_a_fifo_is_written_through_and_stays_a_fifo(tmp_path, study_files, capsys):
    fifo = tmp_path / "pipe.json"
    os.mkfifo(fifo)
    reader = _FifoReader(fifo)
    out = cli_ok(capsys, ["folds", study_files["spec"], "--scheme", "group-kfold", "-k", "2", "-o", fifo])
    received = reader.result()
    assert _kind(fifo) == "fifo" and f"wrote {fifo}" in out
    doc = json.loads(received)
    assert doc["format"] == "depgraph.split-spec" and len(doc["folds"]["splits"]) == 2
    assert _temps(tmp_path) == [] and _own_temps(Path(tempfile.gettempdir())) == []
    # a command that fails after its report is written sends nothing down the pipe: the content is staged, and
    # poured only when every output is in place
    (study_files["plots"] / "group_sizes.svg").mkdir()
    reader = _FifoReader(fifo)
    cli_fails(capsys, tmp_path, ["report", study_files["spec"], "-o", fifo, "--plots-dir", study_files["plots"]], "io",
              "group_sizes.svg")  # fmt: skip
    assert reader.result() == b"" and _kind(fifo) == "fifo"
    assert _own_temps(Path(tempfile.gettempdir())) == []


def test_a_character_device_is_written_through_and_stays_a_device(tmp_path, study_files, capsys):
    null = _mknod(tmp_path / "null", stat.S_IFCHR, 1, 3)  # /dev/null's numbers, inside the test directory
    cli_ok(capsys, ["derive", study_files["graph"], "--mode", "subject", "-o", null])
    cli_ok(capsys, ["export", study_files["folds"], "--to", "csv", "-o", null])
    st = os.lstat(null)
    assert stat.S_ISCHR(st.st_mode) and st.st_rdev == os.makedev(1, 3)
    assert null.read_bytes() == b""  # it discarded what it was given, as /dev/null does
    assert sorted(p.name for p in tmp_path.iterdir() if p.name.startswith(".")) == []


def test_dash_writes_to_standard_output_and_messages_go_to_stderr(tmp_path, study_files, capsys):
    capsys.readouterr()
    assert main(["derive", str(study_files["graph"]), "--mode", "subject", "-o", "-"]) == 0
    captured = capsys.readouterr()
    doc = json.loads(captured.out)  # stdout is the spec and nothing else
    assert doc["samples"]["sample_id"] == ["S1", "S2", "S3", "S4"]
    assert "wrote -" in captured.err and "derived subject" in captured.err

    assert main(["export", str(study_files["folds"]), "--to", "fold-table", "-o", "-"]) == 0
    table = pd.read_csv(pd.io.common.StringIO(capsys.readouterr().out))
    assert table.columns.tolist() == ["sample_id", "repeat", "fold", "role"] and len(table) == 4 * 3
    assert not (tmp_path / "-").exists() and _own_temps(Path(tempfile.gettempdir())) == []

    # a command that fails after staging its standard output prints none of it
    (study_files["plots"] / "group_sizes.svg").mkdir()
    capsys.readouterr()
    assert main(["report", str(study_files["spec"]), "-o", "-", "--plots-dir", str(study_files["plots"])]) == 2
    captured = capsys.readouterr()
    assert captured.out == "" and captured.err.startswith("depgraph: io: ") and len(captured.err.splitlines()) == 1

    # after a command on stdout, the next one speaks on stdout again
    out = cli_ok(capsys, ["export", study_files["spec"], "--to", "csv", "-o", tmp_path / "samples.csv"])
    assert "wrote" in out


def test_parquet_to_standard_output_through_a_pipe(study_files):
    # before 0.2, --to parquet to a stream is the samples table (the columnar form is a directory), with a warning
    done = subprocess.run([*DEPGRAPH, "export", str(study_files["spec"]), "--to", "parquet", "-o", "-"],
                          capture_output=True, env=_env(), timeout=120)  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert b"deprecated: --to parquet -o - (the samples table) is now --to samples-table -o -" in done.stderr
    table = pq.read_table(pa.BufferReader(done.stdout)).to_pandas()
    assert table["sample_id"].tolist() == ["S1", "S2", "S3", "S4"]


def test_replacing_a_file_keeps_its_permission_bits(tmp_path, study_files, capsys):
    target = tmp_path / "shared.json"
    for mode in (0o640, 0o600, 0o664):
        target.write_text("old\n")
        target.chmod(mode)
        cli_ok(capsys, ["folds", study_files["spec"], "--scheme", "group-kfold", "-k", "2", "-o", target])
        assert stat.S_IMODE(target.stat().st_mode) == mode
        assert json.loads(target.read_text())["format"] == "depgraph.split-spec"
    previous = os.umask(0o027)
    try:
        cli_ok(capsys, ["export", study_files["spec"], "--to", "csv", "-o", tmp_path / "new.csv"])
    finally:
        os.umask(previous)
    assert stat.S_IMODE((tmp_path / "new.csv").stat().st_mode) == 0o666 & ~0o027


def test_a_symlink_output_writes_its_target_and_stays_a_link(tmp_path, study_files, capsys):
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    real = elsewhere / "spec.json"
    real.write_text("old\n")
    real.chmod(0o640)
    link = study_files["out"] / "spec-link.json"
    os.symlink(os.path.relpath(real, link.parent), link)
    seen_temps: list[str] = []
    original = os.replace

    def watching_replace(src, dst, *a, **k):  # where the temporary file lives when it is renamed
        seen_temps.append(str(Path(src).parent))
        return original(src, dst, *a, **k)

    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(os, "replace", watching_replace)
        cli_ok(capsys, ["derive", study_files["graph"], "--mode", "subject", "-o", link])
    assert link.is_symlink() and os.readlink(link) == os.path.relpath(real, link.parent)
    assert json.loads(real.read_text())["format"] == "depgraph.split-spec"
    assert stat.S_IMODE(real.stat().st_mode) == 0o640
    assert seen_temps == [str(elsewhere)]  # beside the target, not beside the link
    assert _temps(elsewhere) == [] and _temps(link.parent) == []
    # a dangling link: the file it names is created
    dangling = study_files["out"] / "to-be.json"
    os.symlink(elsewhere / "created.json", dangling)
    cli_ok(capsys, ["derive", study_files["graph"], "--mode", "subject", "-o", dangling])
    assert dangling.is_symlink() and (elsewhere / "created.json").is_file()


# ------------------------------------------------------------------- all or nothing (issue 10)
def test_a_later_output_that_fails_takes_the_earlier_ones_with_it(tmp_path, study_files, capsys):
    plots = study_files["plots"]
    (plots / "group_sizes.svg").mkdir()  # the second figure cannot be written: found only when it is written
    report = study_files["html"]
    cli_fails(capsys, tmp_path, ["report", study_files["spec"], "-o", report, "--plots-dir", plots], "io",
              "group_sizes.svg", "is a directory")  # fmt: skip
    assert report.read_text() == "old report\n"
    assert sorted(p.name for p in plots.iterdir()) == ["group_sizes.svg"]


def test_a_failed_rename_puts_back_what_was_already_replaced(tmp_path, study_files, capsys, monkeypatch):
    # the commit renames the report first, then the figures: make the first figure's rename fail
    plots, report = study_files["plots"], study_files["html"]
    original = os.replace
    calls: list[str] = []

    def failing_replace(src, dst, *a, **k):
        calls.append(Path(dst).name)
        if Path(dst).name == "group_sizes.png" and calls.count("group_sizes.png") == 1:
            raise OSError(28, "No space left on device")
        return original(src, dst, *a, **k)

    monkeypatch.setattr(os, "replace", failing_replace)
    cli_fails(capsys, tmp_path, ["report", study_files["spec"], "-o", report, "--plots-dir", plots], "io",
              "group_sizes.png", "No space left on device")  # fmt: skip
    assert calls[:2] == ["existing.html", "group_sizes.png"]  # the report had been put in place
    assert report.read_text() == "old report\n"  # and was put back
    assert list(plots.iterdir()) == []


def test_a_target_that_became_a_fifo_before_the_commit_is_not_replaced(tmp_path):
    target = tmp_path / "spec.json"
    target.write_text("old\n")
    other = tmp_path / "other.json"
    with fails_with("io", "spec.json", "no longer a regular file"), Outputs() as plan:
        plan.file(other)
        plan.file(target)  # checked: a regular file
        atomic_write_bytes(other, b"new other\n")
        atomic_write_bytes(target, b"new\n")
        target.unlink()
        os.mkfifo(target)  # swapped for a FIFO while the command works
    assert _kind(target) == "fifo" and not other.exists() and _temps(tmp_path) == []


def test_demo_makes_its_directory_only_when_everything_is_written(tmp_path, capsys, monkeypatch):
    def no_story():
        raise DepgraphError("invalid_value", "the story failed")

    monkeypatch.setattr(depgraph.cli.demo, "run_story", no_story)
    target = tmp_path / "demo"
    cli_fails(capsys, tmp_path, ["demo", "-o", target], "invalid_value", output=target)


def test_demo_into_a_directory_where_one_file_cannot_be_written(tmp_path, capsys):
    target = tmp_path / "demo"
    (target / "report.html").mkdir(parents=True)  # the last of its seven files
    cli_fails(capsys, tmp_path, ["demo", "-o", target], "io", "report.html", "is a directory")
    assert sorted(p.name for p in target.iterdir()) == ["report.html"]


# ------------------------------------------------------------------- interrupted and killed writers (issue 10)
def test_sigint_mid_write_removes_the_temporary_file(tmp_path, study_files, capsys, monkeypatch, request):
    # Ctrl-C at a terminal. A test run started in the background inherits SIGINT ignored, which depgraph keeps
    # ignored (as nohup expects): the test gives the process Python's own handler for its duration.
    previous = signal.signal(signal.SIGINT, signal.default_int_handler)
    request.addfinalizer(lambda: signal.signal(signal.SIGINT, previous))
    target = tmp_path / "target.json"
    target.write_bytes(b"the old spec\n")
    real_write = depgraph.spec.files.atomic_write_bytes

    def interrupted_write(path, pieces):
        def pieces_then_ctrl_c():
            for i, piece in enumerate(pieces):
                if i == 10:
                    assert _temps(tmp_path), "the temporary file exists, holding a prefix"
                    os.kill(os.getpid(), signal.SIGINT)  # Ctrl-C
                yield piece

        real_write(path, pieces_then_ctrl_c())

    monkeypatch.setattr(depgraph.spec.files, "atomic_write_bytes", interrupted_write)
    before = _tree(tmp_path)
    capsys.readouterr()
    assert main(["folds", str(study_files["spec"]), "--scheme", "group-kfold", "-k", "2", "-o", str(target)]) == 130
    assert capsys.readouterr().err == "depgraph: interrupted\n"
    assert target.read_bytes() == b"the old spec\n" and _tree(tmp_path) == before
    assert signal.getsignal(signal.SIGINT) is signal.default_int_handler  # main() put the handler back


def test_stale_temporary_files_of_dead_processes_are_removed_by_the_next_write(tmp_path, study_files, capsys):
    host = hashlib.sha256(socket.gethostname().encode()).hexdigest()[:8]
    dead = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True)
    dead_pid = int(dead.stdout)  # exited and reaped
    other_host = "0" * 8 if host != "0" * 8 else "1" * 8
    names = {
        "dead": f".spec.json.depgraph-{host}-{dead_pid}-0a1b2c3d.tmp",
        "alive": f".spec.json.depgraph-{host}-{os.getpid()}-0a1b2c3d.tmp",
        "other host": f".spec.json.depgraph-{other_host}-{dead_pid}-0a1b2c3d.tmp",
        "not ours": ".spec.json.0a1b2c3d.tmp",
    }
    for name in names.values():
        (study_files["plots"] / name).write_text("partial")
    cli_ok(capsys, ["export", study_files["spec"], "--to", "csv", "-o", study_files["plots"] / "samples.csv"])
    left = sorted(p.name for p in study_files["plots"].iterdir())
    assert left == sorted([names["alive"], names["other host"], names["not ours"], "samples.csv"])


@pytest.fixture(scope="module")
def million_spec(tmp_path_factory) -> Path:
    """A 10^6-sample spec (two samples per group), built straight from a frame."""
    n = 10**6
    ids = np.char.add("S", np.arange(n).astype(str)).astype(object)
    groups = np.char.add("subject:P", (np.arange(n) // 2).astype(str)).astype(object)
    spec = SplitSpec.build(pd.DataFrame({"sample_id": ids, "group_id": groups}),
                           constraint=Constraint(mode="subject"), recommended_resampling="grouped_cv")  # fmt: skip
    path = tmp_path_factory.mktemp("million") / "spec.json"
    write_spec(spec, path)
    return path


#: The real CLI in a separate process; spec writes pause after their first pieces so that the kill lands while the
#: temporary file holds a prefix (without the pause a 10^6 write takes a fraction of a second and could finish first).
PAUSED_WRITER = """
import sys, time
import depgraph.spec.files
from depgraph.cli.main import main

real_write = depgraph.spec.files.atomic_write_bytes

def paused_write(path, pieces):
    def paused():
        written = 0
        for piece in pieces:
            if written > 2_000_000:  # once, after the first megabytes (the sample ids)
                written = -10**18
                end = time.monotonic() + 60
                while time.monotonic() < end:
                    time.sleep(0.01)
            written += len(piece)
            yield piece
    real_write(path, paused())

depgraph.spec.files.atomic_write_bytes = paused_write
sys.exit(main(sys.argv[1:]))
"""


def _kill_mid_write(million_spec: Path, target: Path, signum: int) -> subprocess.CompletedProcess:
    command = [sys.executable, "-c", PAUSED_WRITER, "folds", str(million_spec), "--scheme", "group-kfold", "-o",
               str(target)]  # fmt: skip
    child = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=_env())
    try:
        deadline = time.monotonic() + 120
        while True:
            temps = _temps(target.parent)
            if temps and (target.parent / temps[0]).stat().st_size > 1_000_000:
                break  # the sample ids are on disk, the write is under way
            assert child.poll() is None, child.communicate()[1].decode()
            assert time.monotonic() < deadline, "the writer never started writing"
            time.sleep(0.01)
        child.send_signal(signum)
        out, err = child.communicate(timeout=60)
    finally:
        if child.poll() is None:
            child.kill()
            child.wait()
    return subprocess.CompletedProcess(command, child.returncode, out.decode(), err.decode())


@pytest.mark.slow  # a separate 10^6-sample process: ~15 s; CI runs it (--slow)
def test_sigterm_mid_write_keeps_the_old_file_and_leaves_no_temporary_file(tmp_path, million_spec):
    target = tmp_path / "target.json"
    target.write_bytes(b'{"the": "old spec"}\n')
    before = _tree(tmp_path)
    done = _kill_mid_write(million_spec, target, signal.SIGTERM)
    assert done.returncode == 128 + signal.SIGTERM and done.stderr == "depgraph: interrupted\n", done.stderr
    assert target.read_bytes() == b'{"the": "old spec"}\n'
    assert _tree(tmp_path) == before


@pytest.mark.slow  # a separate 10^6-sample process: ~15 s; CI runs it (--slow)
def test_sigkill_mid_write_keeps_the_old_file_and_the_next_write_removes_the_leftover(tmp_path, study_files, capsys,
                                                                                      million_spec):  # fmt: skip
    target = study_files["plots"] / "target.json"
    target.write_bytes(b'{"the": "old spec"}\n')
    done = _kill_mid_write(million_spec, target, signal.SIGKILL)
    assert done.returncode == -signal.SIGKILL
    assert target.read_bytes() == b'{"the": "old spec"}\n'
    assert len(_temps(target.parent)) == 1  # SIGKILL cannot be caught: the partial file is left...
    cli_ok(capsys, ["export", study_files["spec"], "--to", "csv", "-o", target.parent / "samples.csv"])
    assert sorted(p.name for p in target.parent.iterdir()) == ["samples.csv", "target.json"]  # ...until the next write


# ------------------------------------------------------------------- splitGraph importer and overrides (issue 10)
SPLITGRAPH = CONFORMANCE / "splitgraph_json"
SG_EDGE = {"edge_id": "e", "from": "sample:S1", "to": "subject:P1", "edge_type": "sample_belongs_to_subject"}


def _sg(name: str, change: Any) -> Any:
    """A real splitGraph export (graph.json, spec_time.json) with one change made to it."""
    doc = json.loads((SPLITGRAPH / name).read_text())
    changed = change(doc)
    return doc if changed is None else changed


def _node(doc: dict, i: int, **fields: Any) -> None:
    doc["nodes"][i].update(fields)


def _edge(doc: dict, i: int, **fields: Any) -> None:
    doc["edges"][i].update(fields)


def _overrides(value: Any) -> Any:
    return lambda d: d["metadata"].update(validation_overrides={"allow_multi_subject_samples": value})


def _rows(doc: dict, i: int, **fields: Any) -> None:
    doc["sample_data"][i].update(fields)


# nodes[0] is sample:S1 (subject P1), nodes[15] timepoint:T0 (time_index 0); edges[0] is sample:S1 -> subject:P1
SPLITGRAPH_GRAPH_CASES = [
    pytest.param(_overrides("false"), "schema", ["allow_multi_subject_samples", "'false'"], id="override-false-text"),
    pytest.param(_overrides("TRUE"), "schema", ["allow_multi_subject_samples", "'TRUE'"], id="override-TRUE-text"),
    pytest.param(_overrides(0), "schema", ["allow_multi_subject_samples", "0 (number)"], id="override-0"),
    pytest.param(_overrides(1), "schema", ["allow_multi_subject_samples", "1 (number)"], id="override-1"),
    pytest.param(_overrides(None), "schema", ["allow_multi_subject_samples", "(null)"], id="override-null"),
    pytest.param(
        lambda d: d["metadata"].update(validation_overrides="allow"),
        "schema",
        ["validation_overrides"],
        id="overrides-a-string",
    ),
    pytest.param(
        lambda d: d["metadata"].update(validation_overrides=[True]),
        "schema",
        ["validation_overrides"],
        id="overrides-an-unnamed-list",
    ),
    pytest.param(
        lambda d: d["metadata"].update(validation_overrides={"allow_everything": True}),
        "schema",
        ["allow_everything"],
        id="override-unknown",
    ),
    pytest.param(lambda d: _node(d, 15, attrs=[0]), "schema", ["nodes[15] (timepoint:T0)", "attrs"], id="attrs-list"),
    pytest.param(lambda d: _node(d, 15, attrs="time_index=0"), "schema", ["timepoint:T0", "attrs"], id="attrs-text"),
    pytest.param(
        lambda d: _node(d, 15, attrs={"time_index": [0, 1]}),
        "schema",
        ["timepoint:T0", "attrs.time_index"],
        id="attr-value-list",
    ),
    pytest.param(
        lambda d: _node(d, 0, attrs={"note": {"a": 1}}), "schema", ["sample:S1", "attrs.note"], id="attr-value-object"
    ),
    pytest.param(
        lambda d: _node(d, 15, attrs={"time_index": "zero"}),
        "invalid_value",
        ["timepoint:T0", "time_index"],
        id="time-index-text",
    ),
    pytest.param(lambda d: _node(d, 0, node_id=1), "schema", ["nodes[0]", "node_id"], id="node-id-number"),
    pytest.param(lambda d: _node(d, 0, node_key=None), "schema", ["nodes[0] (sample:S1)", "node_key"], id="no-key"),
    pytest.param(lambda d: _node(d, 0, node_key=""), "schema", ["sample:S1", "node_key"], id="empty-key"),
    pytest.param(lambda d: _node(d, 5, node_type="Gene"), "schema", ["subject:P1", "'Gene'"], id="unknown-node-type"),
    pytest.param(lambda d: d["nodes"].__setitem__(3, None), "schema", ["nodes[3]", "null"], id="node-null"),
    pytest.param(lambda d: d.update(nodes={"sample:S1": {}}), "schema", ["nodes", "object"], id="nodes-an-object"),
    pytest.param(
        lambda d: d["nodes"].append({**d["nodes"][1], "node_key": "S2b"}),
        "duplicate_id",
        ["nodes[1] and nodes[", "'sample:S2' differently (node_key)"],
        id="node-id-twice-differently",
    ),
    pytest.param(
        lambda d: d["nodes"].append({**d["nodes"][1], "node_id": "lab:S2"}),
        "duplicate_id",
        ["sample:S2", "lab:S2"],
        id="one-key-two-ids",
    ),
    pytest.param(lambda d: d.update(nodes=[], edges=[]), "empty_input", ["has no nodes"], id="no-nodes"),
    pytest.param(
        lambda d: _edge(d, 0, to="subject:P99"),
        "reference",
        ["'to'", "subject:P99", "not in the node table"],
        id="endpoint-unknown",
    ),
    pytest.param(
        lambda d: _edge(d, 0, **{"from": "S1"}),
        "reference",
        ["'from'", "S1", "hint", "prefixed"],
        id="endpoint-unprefixed",
    ),
    pytest.param(lambda d: _edge(d, 0, to=None), "schema", ["edges[0]", "to", "null"], id="endpoint-null"),
    pytest.param(
        lambda d: _edge(d, 0, edge_type="sample_related_to"),
        "schema",
        ["edges[0]", "sample_related_to"],
        id="edge-type-unknown",
    ),
    pytest.param(
        lambda d: _edge(d, 0, edge_type=["sample_belongs_to_subject"]),
        "schema",
        ["edges[0]", "edge_type"],
        id="edge-type-list",
    ),
    pytest.param(
        lambda d: _edge(d, 0, to="batch:B1"),
        "schema",
        ["edges[0]", "Batch", "invalid_edge_signature"],
        id="edge-signature",
    ),
    pytest.param(
        lambda d: _edge(d, 0, attrs={"weight": "high"}),
        "schema",
        ["edges[0] (sample:S1", "attrs.weight"],
        id="edge-weight-text",
    ),
    pytest.param(lambda d: _edge(d, 0, attrs=[1]), "schema", ["edges[0] (sample:S1", "attrs"], id="edge-attrs-list"),
    pytest.param(lambda d: d["edges"].__setitem__(0, "x"), "schema", ["edges[0]", "string"], id="edge-not-object"),
    pytest.param(
        lambda d: _node(d, 0, attrs={"subject_id": "P2"}),
        "ambiguity",
        ["S1", "subject_id", "P2", "P1"],
        id="attribute-against-edge",
    ),
    pytest.param(lambda d: d.update(metadata=["x"]), "schema", ["metadata", "list"], id="metadata-a-list"),
    pytest.param(lambda d: d["metadata"].update(graph_name=7), "schema", ["graph_name"], id="graph-name-number"),
    pytest.param(lambda d: d.update(schema_version=1), "schema", ["schema_version"], id="schema-version-number"),
    pytest.param(lambda d: d.update(splitGraph_object="igraph"), "schema", ["splitGraph_object"], id="unknown-object"),
    pytest.param(lambda d: [d], "schema", ["splitGraph_object"], id="top-level-list"),
]


@pytest.mark.parametrize(("change", "code", "fragments"), SPLITGRAPH_GRAPH_CASES)
def test_bad_splitgraph_graph(tmp_path, out_dir, capsys, change, code, fragments):
    path = write(tmp_path / "sg_graph.json", json.dumps(_sg("graph.json", change)))
    with fails_with(code, *fragments, file=path):
        read_splitgraph(path)
    target = out_dir / "graph.json"
    cli_fails(
        capsys, tmp_path, ["import", "splitgraph", path, "-o", target], code, *fragments, output=target, file=path
    )


SPLITGRAPH_SPEC_CASES = [
    pytest.param(lambda d: d.update(sample_data=[]), "schema", ["sample_data"], id="no-rows"),
    pytest.param(lambda d: d["sample_data"].__setitem__(1, None), "schema", ["sample_data[1]"], id="row-null"),
    pytest.param(lambda d: _rows(d, 2, sample_id=3), "schema", ["sample_data[2]", "sample_id"], id="sample-id-number"),
    pytest.param(lambda d: _rows(d, 2, sample_id=""), "schema", ["sample_data[2]", "sample_id"], id="sample-id-empty"),
    pytest.param(lambda d: _rows(d, 2, sample_id="S1"), "duplicate_id", ["S1"], id="sample-id-twice"),
    pytest.param(lambda d: _rows(d, 1, group_id=None), "schema", ["sample_data[1] (S2)", "group_id"], id="no-group"),
    pytest.param(
        lambda d: _rows(d, 1, batch_group=["B2"]), "schema", ["sample_data[1] (S2)", "batch_group"], id="block-list"
    ),
    pytest.param(
        lambda d: _rows(d, 0, order_rank=1.5),
        "invalid_value",
        ["sample_data[0] (S1)", "order_rank"],
        id="order-rank-fraction",
    ),
    pytest.param(
        lambda d: _rows(d, 0, order_rank=1e300),
        "invalid_value",
        ["sample_data[0] (S1)", "order_rank"],
        id="order-rank-huge",
    ),
    pytest.param(
        lambda d: _rows(d, 0, time_index="zero"),
        "invalid_value",
        ["sample_data[0] (S1)", "time_index"],
        id="time-index-text",
    ),
    pytest.param(
        lambda d: d.update(constraint_mode="family"), "schema", ["constraint_mode", "'family'"], id="unknown-mode"
    ),
    pytest.param(
        lambda d: d.update(constraint_mode="composite", constraint_strategy=5),
        "schema",
        ["constraint_strategy"],
        id="composite-strategy-number",
    ),
    pytest.param(
        lambda d: d.update(recommended_resampling="random_cv"),
        "schema",
        ["recommended_resampling", "random_cv"],
        id="unknown-resampling",
    ),
    pytest.param(
        lambda d: d["metadata"].update(n_groups=9), "integrity", ["n_groups", "9", "holds 4"], id="counts-disagree"
    ),
    pytest.param(
        lambda d: d["metadata"].update(warnings={"S5": "unlinked"}),
        "schema",
        ["metadata.warnings"],
        id="warnings-object",
    ),
    pytest.param(lambda d: d["metadata"].update(via=[1]), "schema", ["metadata.via"], id="via-number"),
    pytest.param(
        lambda d: d["metadata"].update(warnings=[None]), "schema", ["metadata.warnings", "null"], id="warning-null"
    ),
    pytest.param(lambda d: d.update(group_var=["group_id"]), "schema", ["group_var"], id="group-var-list"),
]


@pytest.mark.parametrize(("change", "code", "fragments"), SPLITGRAPH_SPEC_CASES)
def test_bad_splitgraph_spec(tmp_path, out_dir, capsys, change, code, fragments):
    path = write(tmp_path / "sg_spec.json", json.dumps(_sg("spec_time.json", change)))
    with fails_with(code, *fragments, file=path):
        read_splitgraph(path)
    target = out_dir / "spec.json"
    cli_fails(
        capsys, tmp_path, ["import", "splitgraph", path, "-o", target], code, *fragments, output=target, file=path
    )


@pytest.mark.parametrize("value", ["false", "true", 0, 1, None, "FALSE"], ids=repr)
def test_override_values_that_are_not_booleans(tmp_path, out_dir, capsys, graph_json, meta_csv, value):
    # Python: with_overrides and from_metadata; files: a depgraph graph file (its schema holds booleans)
    with fails_with("invalid_value", "allow_multi_subject_samples", repr(value)):
        read_graph(graph_json).with_overrides(allow_multi_subject_samples=value)
    with fails_with("invalid_value", "allow_multi_subject_samples", repr(value)):
        from_metadata(meta_csv, allow_multi_subject_samples=value)
    doc = json.loads(graph_json.read_text())
    doc["overrides"] = {"allow_multi_subject_samples": value}
    path = write(tmp_path / "overridden.json", json.dumps(doc))
    with fails_with("schema", "allow_multi_subject_samples", file=path):
        read_graph(path)
    target = out_dir / "spec.json"
    cli_fails(
        capsys,
        tmp_path,
        ["derive", path, "--mode", "subject", "-o", target],
        "schema",
        "allow_multi_subject_samples",
        output=target,
    )


def test_import_warnings_are_not_printed_when_the_import_fails(tmp_path, out_dir, capsys):
    # a future schema_version warns, but a refused file prints only its one error line
    doc = _sg("graph.json", lambda d: d.update(schema_version="9.0.0"))
    _edge(doc, 0, to="subject:P99")
    path = write(tmp_path / "future.json", json.dumps(doc))
    target = out_dir / "graph.json"
    cli_fails(capsys, tmp_path, ["import", "splitgraph", path, "-o", target], "reference", "subject:P99")  # one line
    with pytest.warns(DepgraphWarning, match="9.0.0"), fails_with("reference", "subject:P99"):
        read_splitgraph(path)  # Python callers hear the warning before the refusal


def test_a_repeated_edge_imports_and_warns(tmp_path, out_dir, capsys):
    path = write(tmp_path / "twice.json", json.dumps(_sg("graph.json", lambda d: d["edges"].append(d["edges"][0]))))
    target = out_dir / "graph.json"
    capsys.readouterr()
    assert main(["import", "--from", "splitgraph", str(path), "-o", str(target)]) == 0
    (line,) = capsys.readouterr().err.splitlines()
    assert line.startswith("depgraph: warning: duplicate_edge: ") and "sample:S1" in line
    assert read_graph(target).relation_counts()["sample_belongs_to_subject"] == 5
    cli_ok(capsys, ["validate", target], status=1)  # splitGraph's duplicate_edge_triplet is an error


# ------------------------------------------------------------------- security (issue 10)
#: A key that passes the strength rule (32 random bytes in hex).
STRONG_KEY = "9c4f0e8b2d7a61f35e0c9b8a7d6f5e4c3b2a19080f1e2d3c4b5a69788796a5b4"
#: Metadata with a sex column shared by many, a record number unique per sample, and a copy of the subject ids.
ATTRIBUTE_META = (
    "sample_id,subject_id,sex,mrn,patient,visit\n"
    "S1,P1,f,m-01,P1,1\nS2,P1,f,m-02,P1,2\nS3,P2,m,m-03,P2,1\nS4,P3,m,m-04,P3,1\nS5,P4,f,m-05,P4,1\nS6,P4,f,m-06,P4,2\n"
)

WEAK_KEYS = [
    pytest.param("a" * 64, id="one-character-repeated"),
    pytest.param("ab" * 32, id="two-characters-alternating"),
    pytest.param("0123456789abcdef" * 4, id="hex-alphabet-repeated"),
    pytest.param("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789", id="alphabet-walk"),
    pytest.param("Xq7#pL9!vR2@mK5$", id="16-random-printable-characters"),
    pytest.param("9c4f0e8b2d7a61f35e0c9b8a7d6f5e4c", id="16-bytes-in-hex"),
    pytest.param("consortium-key", id="a-readable-word"),
]


@pytest.mark.parametrize("key", WEAK_KEYS)
def test_weak_pseudonymisation_key(tmp_path, out_dir, graph_json, capsys, monkeypatch, key):
    monkeypatch.setenv("SITE_KEY", key)
    g = read_graph(graph_json)
    spec = SplitSpec.from_partition(derive(g, "subject"), g)
    with fails_with("invalid_argument", "too weak", "fewer than 128", "SITE_KEY") as info:
        key_from_env("SITE_KEY")
    assert key not in str(info.value)
    with fails_with("invalid_argument", "too weak"):
        check_key(key)
    with fails_with("invalid_argument", "too weak"):
        pseudonymize(spec, key)
    target = out_dir / "spec.json"
    line = cli_fails(capsys, tmp_path, ["derive", graph_json, "--mode", "subject", "--pseudonymize-ids", "--key-env",
                                        "SITE_KEY", "-o", target], "invalid_argument", "too weak", "SITE_KEY",
                     output=target)  # fmt: skip
    assert key not in line  # the key never appears in a message


@pytest.mark.parametrize("value", ["", None])
def test_missing_pseudonymisation_key(tmp_path, out_dir, graph_json, capsys, monkeypatch, value):
    if value is None:
        monkeypatch.delenv("SITE_KEY", raising=False)
    else:
        monkeypatch.setenv("SITE_KEY", value)
    with fails_with("invalid_argument", "SITE_KEY", "unset or empty"):
        key_from_env("SITE_KEY")
    target = out_dir / "spec.json"
    cli_fails(capsys, tmp_path, ["derive", graph_json, "--mode", "subject", "--pseudonymize-ids", "--key-env",
                                 "SITE_KEY", "-o", target], "invalid_argument", "SITE_KEY", output=target)  # fmt: skip


ATTRIBUTE_CASES = [
    pytest.param("all", None, ["--attributes all", "--pseudonymize-ids", "name the attributes"], id="all"),
    pytest.param("ALL", None, ["--attributes all"], id="all-in-capitals"),
    pytest.param("sex,mrn", ["sex", "mrn"], ["'mrn'", "6 of 6 samples", "no other sample holds"], id="record-number"),
    pytest.param("patient", ["patient"], ["'patient'", "own sample id or group key"], id="copy-of-subject-id"),
    pytest.param("mrn,patient", ["mrn", "patient"], ["'mrn'", "'patient'"], id="both-named-at-once"),
]


@pytest.mark.parametrize(("attributes", "api_columns", "fragments"), ATTRIBUTE_CASES)
def test_identifying_attributes_beside_pseudonymised_ids(
    tmp_path, out_dir, capsys, monkeypatch, attributes, api_columns, fragments
):
    meta = write(tmp_path / "cohort.csv", ATTRIBUTE_META)
    graph_file = tmp_path / "graph.json"
    with pytest.warns(DepgraphWarning, match="column 'visit' looks like timepoint_id"):  # an attribute, said so
        write_graph(from_metadata(meta), graph_file)
    monkeypatch.setenv("SITE_KEY", STRONG_KEY)
    if api_columns is not None:
        g = read_graph(graph_file)
        spec = SplitSpec.from_partition(derive(g, "subject"), g, attributes=api_columns)
        with fails_with("invalid_argument", *fragments):
            pseudonymize(spec, STRONG_KEY)
    target = out_dir / "spec.json"
    cli_fails(capsys, tmp_path, ["derive", graph_file, "--mode", "subject", "--pseudonymize-ids", "--key-env",
                                 "SITE_KEY", "--attributes", attributes, "-o", target], "invalid_argument", *fragments,
              output=target)  # fmt: skip
    # shared attributes pass: the refusal is about the named columns, not about attributes as such
    cli_ok(capsys, ["derive", graph_file, "--mode", "subject", "--pseudonymize-ids", "--key-env", "SITE_KEY",
                    "--attributes", "sex,visit", "-o", target])  # fmt: skip


def _report_spec(root: Path) -> dict:
    meta = pd.DataFrame(
        {
            "sample_id": [f"S{i}" for i in range(8)],
            "subject_id": [f"P{i // 2}" for i in range(8)],
            "sex": list("fmfmfmfm"),
        }
    )
    g = from_metadata(meta)
    spec = SplitSpec.from_partition(derive(g, "subject"), g, attributes=["sex"])
    return spec_document(assign_folds(spec, "stratified-group-kfold", n_splits=2, stratify="sex"))


def _set(path: tuple, value: object):
    def edit(doc: dict) -> None:
        node = doc
        for key in path[:-1]:
            node = node[key]
        node[path[-1]] = value

    return edit


#: A balance block is what the samples and splits give: every reader recomputes it (spec.plans), so a tampered
#: block is refused by validate and report alike, naming the entry, even with a recomputed digest.
BALANCE_CASES = [
    pytest.param(_set(("folds", "balance", "columns", "sex", "worst_proportion_deviation"), "<script>x</script>"),
                 ["folds.balance.columns.sex.worst_proportion_deviation says '<script>x</script>'"],
                 id="metric-is-markup"),
    pytest.param(_set(("folds", "balance", "columns", "sex", "worst_scaled_difference"), None),
                 ["worst_scaled_difference says None"], id="metric-missing"),
    pytest.param(_set(("folds", "balance", "columns", "sex", "worst_scaled_difference"), True),
                 ["worst_scaled_difference says True"], id="metric-is-a-boolean"),
    pytest.param(_set(("folds", "balance", "columns"), ["sex"]),
                 ["folds.balance.columns says ['sex']", "give an object of 1 entries"], id="columns-not-an-object"),
    pytest.param(_set(("folds", "balance", "columns", "sex"), "0.1"),
                 ["folds.balance.columns.sex says '0.1'"], id="column-metrics-a-string"),
    pytest.param(_set(("folds", "balance", "columns", "sex", "overall"), [0.5]),
                 ["columns.sex.overall says [0.5], the samples and splits give [0."], id="overall-too-short"),
    pytest.param(_set(("folds", "balance", "columns", "sex", "test_proportion"), [[0.5, 0.5]]),
                 ["columns.sex.test_proportion says [[0.5, 0.5]]"], id="one-row-for-two-splits"),
    pytest.param(_set(("folds", "balance", "columns", "sex", "categories"), []),
                 ["columns.sex.categories says []"], id="no-categories"),
    pytest.param(_set(("folds", "balance", "sizes", "n_test"), [1, 1]),
                 ["folds.balance.sizes.n_test[0] says 1"], id="sizes-wrong"),
    pytest.param(_set(("folds", "balance", "sizes", "test_size_spread"), 0.5),
                 ["folds.balance.sizes.test_size_spread says 0.5"], id="spread-wrong"),
    pytest.param(_set(("folds", "balance", "association"), {"cramers_v": 0.1}),
                 ["folds.balance holds 'association'"], id="entry-of-another-scheme"),
]  # fmt: skip


def _relabel_groups(label: str):
    def edit(doc: dict) -> None:
        doc["samples"]["group_id"] = [f"{label}:{g.split(':', 1)[1]}" for g in doc["samples"]["group_id"]]

    return edit


#: A spec whose envelope or plan says other than it holds contradicts itself (spec.statements, spec.plans): refused
#: by every reader with integrity, naming the field, even with a recomputed digest (docs/spec.md, "What a reader
#: checks"). The spec edited is a 2-fold stratified-group-kfold plan of 8 samples in 4 subjects, stratified by sex.
SELF_CONTRADICTING_CASES = [
    pytest.param(_set(("folds", "parameters", "n_splits"), 7),
                 ["folds lists 2 split(s), but its parameters say 7 fold(s) × 1 repeat(s)"], id="n-splits-7"),
    pytest.param(lambda d: d["folds"].update(parameters={**d["folds"]["parameters"], "n_splits": 1},
                                             splits=d["folds"]["splits"][:1]),
                 ["folds.parameters.n_splits is 1, but a stratified-group-kfold plan has at least 2"],
                 id="n-splits-1"),
    pytest.param(lambda d: d["folds"]["splits"][0].update(test=list(range(8)), n_test=8, n_train=0),
                 ["folds.splits[0] trains on no sample"], id="a-split-trains-on-nothing"),
    pytest.param(_set(("folds", "parameters", "n_repeats"), 2),
                 ["folds lists 2 split(s)", "2 fold(s) × 2 repeat(s)"], id="n-repeats-2"),
    pytest.param(_set(("folds", "seed"), None),
                 ["folds.seed is None", "records the seed it drew with"], id="seed-dropped"),
    pytest.param(_set(("folds", "scheme"), "group-kfold"),
                 ["folds.parameters hold stratify", "a group-kfold plan records n_splits, n_repeats"],
                 id="scheme-renamed-group-kfold"),
    pytest.param(_set(("folds", "scheme"), "time"),
                 ["folds.parameters lack gap, embargo, train_after"], id="scheme-renamed-time"),
    pytest.param(_set(("folds", "parameters", "shuffle"), True),
                 ["folds.parameters hold shuffle"], id="unknown-parameter"),
    pytest.param(_set(("folds", "parameters", "stratify"), "age"),
                 ["folds.parameters.stratify is 'age'", "the samples have no column age"], id="stratify-absent"),
    pytest.param(_set(("folds", "balance", "columns", "sex", "overall"), [0.25, 0.75]),
                 ["folds.balance.columns.sex.overall[0] says 0.25, the samples and splits give 0.5"],
                 id="overall-proportions"),
    pytest.param(_set(("constraint", "strategy"), "strict"),
                 ["constraint (mode subject (strict))", "only a composite mode takes a strategy"],
                 id="strategy-without-composite"),
    pytest.param(_set(("constraint", "via"), ["batch"]),
                 ["only a composite mode combines modes (via, priority)"], id="via-without-composite"),
    pytest.param(_set(("constraint", "relations"), ["sample_processed_in_batch"]),
                 ["relations are sample_processed_in_batch, but subject follows sample_belongs_to_subject"],
                 id="relations-of-another-mode"),
    pytest.param(_set(("constraint", "relations"), ["sample_belongs_to_subject"] * 2),
                 ["relations names sample_belongs_to_subject twice"], id="relation-twice"),
    pytest.param(_set(("recommended_resampling",), "blocked_cv"),
                 ["recommended_resampling is 'blocked_cv'", "recommends 'grouped_cv'"],
                 id="resampling-of-another-mode"),
    pytest.param(_relabel_groups("composite"),
                 ["group ids labelled composite: under mode subject"], id="group-labels-of-another-mode"),
    pytest.param(_set(("warnings",), [{"code": "all_fine", "severity": "warning", "message": "m", "count": 1,
                                       "ids": []}]),
                 ["warnings[0].code 'all_fine' is no warning depgraph reports"], id="unknown-warning-code"),
    pytest.param(_set(("warnings",), [{"code": "unlinked_samples", "severity": "warning", "message": "m",
                                       "count": 1, "ids": ["S1", "S2"]}]),
                 ["warnings[0] names 2 ids but counts 1"], id="warning-names-more-than-it-counts"),
]  # fmt: skip


@pytest.mark.parametrize(("edit", "fragments"), BALANCE_CASES + SELF_CONTRADICTING_CASES)
def test_a_spec_that_contradicts_itself_is_refused(tmp_path, out_dir, capsys, edit, fragments):
    doc = _report_spec(tmp_path)
    edit(doc)
    doc["digest"] = content_digest(doc)
    spec_file = tmp_path / "spec.json"
    spec_file.write_bytes(json.dumps(doc).encode())
    with fails_with("integrity", *fragments):
        spec_from_document(doc)
    cli_fails(capsys, tmp_path, ["validate", spec_file], "integrity", *fragments)
    target = out_dir / "refolded.json"
    cli_fails(capsys, tmp_path, ["folds", spec_file, "--scheme", "group-kfold", "-k", "2", "-o", target],
              "integrity", *fragments, output=target)  # fmt: skip
    target = out_dir / "report.html"
    plots = out_dir / "plots"
    plots.mkdir()
    cli_fails(capsys, tmp_path, ["report", spec_file, "-o", target, "--plots-dir", plots], "integrity", *fragments,
              output=target)  # fmt: skip
    assert not any(plots.iterdir())


def test_the_unedited_spec_of_the_contradiction_catalogue_reads(tmp_path):
    doc = _report_spec(tmp_path)
    assert spec_from_document(doc).folds.scheme == "stratified-group-kfold"  # each case above fails by its edit


EXCEL_CASES = [
    pytest.param("parquet", "samples.dgspec", ["--excel-safe", "--to parquet"], id="columnar"),
    pytest.param(
        "samples-table", "samples.parquet", ["--excel-safe", "samples-table written as parquet"], id="samples-parquet"
    ),
    pytest.param("splitgraph", "split.json", ["--excel-safe", "--to splitgraph"], id="splitgraph"),
    pytest.param("fold-table", "folds.parquet", ["--excel-safe", "fold-table written as parquet"], id="fold-parquet"),
    pytest.param("fold-table", "folds.pq", ["--excel-safe", "written as parquet"], id="fold-pq"),
    pytest.param("fold-table", "folds.xlsx", ["cannot tell the table format", "folds.xlsx"], id="fold-unknown-suffix"),
]


@pytest.mark.parametrize(("to", "name", "fragments"), EXCEL_CASES)
def test_excel_safe_where_it_makes_no_sense(tmp_path, out_dir, capsys, to, name, fragments):

    spec_file = tmp_path / "spec.json"
    spec_file.write_bytes(json.dumps(_report_spec(tmp_path)).encode())
    target = out_dir / name
    if to == "fold-table":
        with fails_with("invalid_argument", name if "cannot" in fragments[0] else "--excel-safe"):
            write_table(fold_table(spec_from_document(json.loads(spec_file.read_text()))), target, excel_safe=True)
    cli_fails(capsys, tmp_path, ["export", spec_file, "--to", to, "--excel-safe", "-o", target], "invalid_argument",
              *fragments, output=target)  # fmt: skip


def test_excel_safe_export_of_a_graph(tmp_path, out_dir, graph_json, capsys):
    target = out_dir / "g.csv"
    cli_fails(capsys, tmp_path, ["export", graph_json, "--to", "csv", "--excel-safe", "-o", target],
              "invalid_argument", "study graph exports only to json, parquet or splitgraph", output=target)  # fmt: skip


PATH_ONCE_CASES = [
    pytest.param("cohort.csv", "", ["build", "{path}"], "empty_input", "metadata", id="empty-metadata"),
    pytest.param(None, None, ["build", "{path}"], "io", "metadata", id="missing-metadata"),
    pytest.param("pairs.csv", "", ["build", "{meta}", "--duplicates", "{path}"], "empty_input", "duplicate pairs",
                 id="empty-duplicates"),
    pytest.param("kin.csv", "", ["build", "{meta}", "--kinship", "{path}", "--kinship-threshold", "0.1"],
                 "empty_input", "kinship", id="empty-kinship"),
    pytest.param(None, None, ["build", "{meta}", "--coords", "{path}", "--radius", "1"], "io", "coordinates",
                 id="missing-coordinates"),
    pytest.param("pairs.csv", 'id1,id2\n"S1,S2\n', ["build", "{meta}", "--duplicates", "{path}"], "parse",
                 "duplicate pairs", id="unparsable-duplicates"),
]  # fmt: skip


@pytest.mark.parametrize(("name", "text", "args", "code", "what"), PATH_ONCE_CASES)
def test_a_message_names_its_file_once(tmp_path, out_dir, meta_csv, capsys, name, text, args, code, what):
    path = tmp_path / (name or "absent.csv")
    if text is not None:
        write(path, text)
    target = out_dir / "graph.json"
    subs = {"{path}": str(path), "{meta}": str(meta_csv)}
    line = cli_fails(capsys, tmp_path, [*(subs.get(a, a) for a in args), "-o", target], code, f"{what} '{path}'",
                     output=target)  # fmt: skip
    assert line.count(path.name) == 1, line
    if args[0] == "build" and args[1] == "{path}":
        with fails_with(code, f"metadata '{path}'") as info:
            from_metadata(path)
        assert info.value.message.count(path.name) == 1


def test_misspelt_excel_safe_is_a_usage_error(tmp_path, out_dir, capsys):
    spec_file = tmp_path / "spec.json"
    spec_file.write_bytes(json.dumps(_report_spec(tmp_path)).encode())
    target = out_dir / "s.csv"
    cli_fails(capsys, tmp_path, ["export", spec_file, "--to", "csv", "--excel-saf", "-o", target], "invalid_argument",
              "--excel-saf", output=target)  # fmt: skip


# ------------------------------------------------------------------- confident wrong answers (issue 10)
# A derivation whose mode links nothing, a composite over everything that merges everything, an option that does not
# apply to the chosen scheme or command, a seed no reader can hold: each used to give a confident result with exit 0.
#: A cohort with batches only (B1 holds every sample: a default composite merges everything).
BATCHES_ONLY = "sample_id,batch_id\nS1,B1\nS2,B1\nS3,B1\nS4,B1\n"
#: Subjects (two of them for S1, S2) in one batch, two sites: composite over everything is one group through B1.
ONE_BATCH = "sample_id,subject_id,batch_id,site_id\nS1,P1,B1,X\nS2,P1,B1,Y\nS3,P2,B1,X\nS4,P3,B1,Y\n"
#: Subjects for S1, S2 only.
HALF_SUBJECTS = "sample_id,subject_id\nS1,P1\nS2,P1\nS3,\nS4,\n"
IDS_ONLY = "sample_id\nS1\nS2\nS3\nS4\n"


def _issue10_graph(tmp_path: Path, metadata: str, coords_radius: float | None = None) -> Path:
    """The study graph of ``metadata`` (plus far-apart coordinates within ``coords_radius``), written to disk."""
    graph = from_metadata(write(tmp_path / "issue10.csv", metadata))
    if coords_radius is not None:
        coords = pd.DataFrame({"sample_id": ["S1", "S2", "S3", "S4"], "x": [0.0, 10.0, 20.0, 30.0], "y": 0.0})
        graph = add_spatial(graph, coords, coords_radius)
    path = tmp_path / "issue10.json"
    write_graph(graph, path)
    return path


NO_RELATION_CASES = [
    pytest.param(BATCHES_ONLY, None, {"mode": "subject"}, [], "no_relation",
                 ["'subject'", "sample_belongs_to_subject", "--column subject_id=COL", "--allow-unlinked"],
                 id="subject-without-subjects"),
    pytest.param(HALF_SUBJECTS, None, {"mode": "batch"}, [], "no_relation",
                 ["'batch'", "sample_processed_in_batch", "batch_id"], id="batch-without-batches"),
    pytest.param(BATCHES_ONLY, None, {"mode": "time"}, [], "no_relation",
                 ["'time'", "sample_collected_at_timepoint", "timepoint_id"], id="time-without-timepoints"),
    pytest.param(BATCHES_ONLY, None, {"mode": "site"}, [], "no_relation", ["'site'", "site_id"],
                 id="site-without-sites"),
    pytest.param(BATCHES_ONLY, None, {"mode": "spatial"}, [], "no_relation",
                 ["'spatial'", "sample_adjacent_to", "--coords FILE --radius R"], id="spatial-without-coordinates"),
    pytest.param(BATCHES_ONLY, 1.0, {"mode": "spatial"}, [], "no_relation",
                 ["'spatial'", "radius 1.0", "widen --radius"], id="spatial-radius-links-nobody"),
    pytest.param(BATCHES_ONLY, None, {"mode": "duplicate"}, [], "no_relation",
                 ["'duplicate'", "sample_duplicate_of", "--duplicates"], id="duplicate-without-pairs"),
    pytest.param(BATCHES_ONLY, None, {"mode": "relatedness"}, [], "no_relation",
                 ["'relatedness'", "sample_belongs_to_subject", "--kinship"], id="relatedness-without-subjects"),
    pytest.param(BATCHES_ONLY, None, {"mode": "composite", "via": ["spatial", "duplicate"]},
                 ["--via", "spatial,duplicate"], "no_relation",
                 ["composite/strict", "via spatial,duplicate", "sample_adjacent_to", "sample_duplicate_of"],
                 id="composite-strict-links-nothing"),
    pytest.param(BATCHES_ONLY, None, {"mode": "composite", "strategy": "rule_based", "priority": ["subject", "site"]},
                 ["--strategy", "rule_based", "--priority", "subject,site"], "no_relation",
                 ["composite/rule_based", "sample_belongs_to_subject", "sample_collected_at_site"],
                 id="composite-rule-based-links-nothing"),
    pytest.param(IDS_ONLY, None, {"mode": "composite"}, [], "no_relation",
                 ["composite", "nothing to combine", "--via"], id="composite-on-a-graph-without-relations"),
    pytest.param(HALF_SUBJECTS, None, {"mode": "subject", "samples": ["S3", "S4"]}, ["--samples", SAMPLES],
                 "no_relation", ["'subject'", "none of the 2 samples derived"], id="subset-without-subjects"),
    pytest.param(ONE_BATCH, None, {"mode": "composite"}, [], "too_few_groups",
                 ["all 4 samples in one group", "batch alone", "sample_processed_in_batch", "--via subject,site",
                  "--allow-single-group"], id="default-composite-one-group"),
    pytest.param(BATCHES_ONLY, None, {"mode": "composite", "strategy": "rule_based"}, ["--strategy", "rule_based"],
                 "too_few_groups", ["composite/rule_based", "one group", "batch alone", "--allow-single-group"],
                 id="default-rule-based-one-group"),
    pytest.param(ONE_BATCH, None, {"mode": "subject", "allow_single_group": True}, ["--allow-single-group"],
                 "invalid_argument", ["single-group", "mode 'subject'"], id="single-group-flag-not-composite"),
    pytest.param(ONE_BATCH, None, {"mode": "composite", "via": ["batch"], "allow_single_group": True},
                 ["--via", "batch", "--allow-single-group"], "invalid_argument",
                 ["single-group", "via"], id="single-group-flag-with-via"),
]  # fmt: skip


@pytest.mark.parametrize(("metadata", "radius", "kwargs", "options", "code", "fragments"), NO_RELATION_CASES)
def test_derivation_that_links_nothing_or_merges_everything(
    tmp_path, out_dir, capsys, metadata, radius, kwargs, options, code, fragments
):
    graph_file = _issue10_graph(tmp_path, metadata, radius)
    kwargs = dict(kwargs)
    mode = kwargs.pop("mode")
    with fails_with(code, *fragments):
        derive(read_graph(graph_file), mode, **kwargs)
    samples = write(tmp_path / "samples.txt", "S3\nS4\n")
    options = [str(samples) if o == SAMPLES else o for o in options]
    target = out_dir / "spec.json"
    cli_fails(capsys, tmp_path, ["derive", graph_file, "--mode", mode, *options, "-o", target], code, *fragments,
              output=target)  # fmt: skip


@pytest.mark.parametrize(
    ("metadata", "mode", "flag"),
    [(BATCHES_ONLY, "subject", "--allow-unlinked"), (ONE_BATCH, "composite", "--allow-single-group")],
)
def test_the_explicit_flags_accept_what_is_refused_by_default(tmp_path, out_dir, capsys, metadata, mode, flag):
    graph_file = _issue10_graph(tmp_path, metadata)
    target = out_dir / "spec.json"
    out = cli_ok(capsys, ["derive", graph_file, "--mode", mode, flag, "-o", target])
    assert target.exists() and ("unlinked_samples" in out or "single_group" in out)


#: ``folds`` options given with a scheme that does not take them: (scheme, CLI options, API parameters, fragments).
FOLD_OPTION_CASES = [
    pytest.param("group-kfold", ["--stratify", "sex"], {"stratify": "sex"},
                 ["--stratify", "--scheme group-kfold", "stratified-group-kfold"], id="stratify-outside-stratified"),
    pytest.param("time", ["--seed", "3"], {"seed": 3}, ["--seed", "--scheme time"], id="seed-with-time"),
    pytest.param("time", ["--seed", "0"], {"seed": 0}, ["--seed", "--scheme time"], id="default-seed-typed-with-time"),
    pytest.param("logo", ["--seed", "3"], {"seed": 3}, ["--seed", "--scheme logo"], id="seed-with-logo"),
    pytest.param("hash", ["--seed", "3", "--salt-env", "ISSUE10_SALT"], {"seed": 3, "salt": "s"},
                 ["--seed", "--scheme hash"], id="seed-with-hash"),
    pytest.param("group-kfold", ["--by", "study_group"], {"by": "study_group"}, ["--by", "logo"],
                 id="by-outside-logo"),
    pytest.param("holdout", ["--balance", "sex"], {"balance": ("sex",)}, ["--balance", "balanced-holdout"],
                 id="balance-outside-balanced-holdout"),
    pytest.param("stratified-group-kfold", ["--prior", "{spec}"], {"prior": None}, ["--prior", "balanced-holdout"],
                 id="prior-outside-balanced-holdout"),
    pytest.param("logo", ["--gap", "1"], {"gap": 1}, ["--gap", "--scheme logo", "time"], id="gap-outside-time"),
    pytest.param("group-kfold", ["--embargo", "1"], {"embargo": 1}, ["--embargo", "time"], id="embargo-outside-time"),
    pytest.param("holdout", ["--train-after"], {"train_after": True}, ["--train-after", "time"],
                 id="train-after-outside-time"),
    pytest.param("group-kfold", ["--salt-env", "ISSUE10_SALT"], {"salt": "s"}, ["--salt-env", "hash"],
                 id="salt-outside-hash"),
    pytest.param("group-kfold", ["--test-fraction", "0.3"], {"test_fraction": 0.3}, ["--test-fraction", "holdout"],
                 id="test-fraction-outside-holdouts"),
    pytest.param("logo", ["--repeats", "2"], {"n_repeats": 2}, ["--repeats", "--scheme logo"], id="repeats-with-logo"),
    pytest.param("time", ["--repeats", "2"], {"n_repeats": 2}, ["--repeats", "--scheme time"], id="repeats-with-time"),
    pytest.param("balanced-holdout", ["--repeats", "2"], {"n_repeats": 2}, ["--repeats", "--scheme balanced-holdout"],
                 id="repeats-with-balanced-holdout"),
    pytest.param("holdout", ["-k", "3"], {"n_splits": 3}, ["-k/--n-splits", "--scheme holdout"], id="k-with-holdout"),
    pytest.param("logo", ["--folds", "3"], {"n_splits": 3}, ["-k/--n-splits", "--scheme logo"], id="folds-with-logo"),
]  # fmt: skip


@pytest.fixture
def plain_spec(tmp_path: Path) -> Path:
    frame = pd.DataFrame({"sample_id": [f"S{i}" for i in range(8)], "group_id": list("aabbccdd"),
                          "sex": list("MFMFMFMF"), "study_group": list("XXXXYYYY")})  # fmt: skip
    path = tmp_path / "plain.json"
    write_spec(SplitSpec.build(frame, constraint=Constraint(mode="subject"), recommended_resampling="grouped_cv"), path)
    return path


@pytest.mark.parametrize(("scheme", "options", "params", "fragments"), FOLD_OPTION_CASES)
def test_fold_option_that_does_not_apply_to_the_scheme(
    tmp_path, out_dir, capsys, monkeypatch, plain_spec, scheme, options, params, fragments
):
    monkeypatch.setenv("ISSUE10_SALT", "a salt long enough")
    spec = read_spec(plain_spec)
    api_fragments = [f"{p!r} does not apply to scheme {scheme!r}" for p in params if p != "salt" or scheme != "hash"]
    with fails_with("invalid_argument", api_fragments[0]):
        assign_folds(spec, scheme, **params)
    target = out_dir / "folds.json"
    options = [str(plain_spec) if o == "{spec}" else o for o in options]
    cli_fails(capsys, tmp_path, ["folds", plain_spec, "--scheme", scheme, *options, "-o", target], "invalid_argument",
              "does not apply", *fragments, output=target)  # fmt: skip


@pytest.mark.parametrize("seed", ["-5", "-1", str(2**32), str(2**63), str(2**64), str(2**64 + 1)])
@pytest.mark.parametrize("scheme", ["group-kfold", "holdout", "balanced-holdout"])
def test_seed_outside_32_bits(tmp_path, out_dir, capsys, plain_spec, scheme, seed):
    with fails_with("invalid_argument", "0..4294967295", seed):
        assign_folds(read_spec(plain_spec), scheme, seed=int(seed))
    target = out_dir / "folds.json"
    extra = ["--balance", "sex"] if scheme == "balanced-holdout" else []
    cli_fails(capsys, tmp_path, ["folds", plain_spec, "--scheme", scheme, *extra, "--seed", seed, "-o", target],
              "invalid_argument", "--seed", "0..4294967295", seed, output=target)  # fmt: skip


#: Options of other commands that do not apply in some combination: (command line, fragments).
COMMAND_OPTION_CASES = [
    pytest.param(["validate", "{spec}", "--n-folds", "50"], ["--n-folds", "split spec"], id="validate-spec-n-folds"),
    pytest.param(["derive", "{graph}", "--mode", "subject", "--key-env", "MY_KEY", "-o", "{target}"],
                 ["--key-env", "--pseudonymize-ids"], id="derive-key-env-without-pseudonymize"),
    pytest.param(["export", "{spec}", "--to", "csv", "--splitgraph-version", "0.2.0", "-o", "{target}"],
                 ["--splitgraph-version", "--to csv"], id="export-csv-splitgraph-version"),
    pytest.param(["export", "{spec}", "--to", "splitgraph", "--splitgraph-version", "0.2.0", "-o", "{target}"],
                 ["--splitgraph-version", "split spec"], id="export-spec-splitgraph-version"),
    pytest.param(["audit", "{graph}", "{npy}", "--ids-column", "id"], ["--ids-column", ".npy"],
                 id="audit-npy-ids-column"),
    pytest.param(["build", "{meta}", "--kinship-format", "king", "-o", "{target}"],
                 ["--kinship-format", "without --kinship"], id="build-kinship-format-without-kinship"),
    pytest.param(["build", "{meta}", "--id-template", "{FID}_{IID}", "-o", "{target}"],
                 ["--id-template", "without --kinship"], id="build-id-template-without-kinship"),
    pytest.param(["build", "{meta}", "--unknown", "ignore", "-o", "{target}"],
                 ["--unknown", "--duplicates"], id="build-unknown-without-pairs"),
    pytest.param(["build", "{meta}", "--outcome-scope", "subject", "-o", "{target}"],
                 ["--outcome-scope", "outcome"], id="build-outcome-scope-without-outcomes"),
    pytest.param(["build", "{ids_only}", "--allow-multi-subject-samples", "-o", "{target}"],
                 ["--allow-multi-subject-samples", "no subject"], id="build-multi-subject-without-subjects"),
]  # fmt: skip


@pytest.mark.parametrize(("args", "fragments"), COMMAND_OPTION_CASES)
def test_command_option_that_does_not_apply(tmp_path, out_dir, capsys, meta_csv, graph_json, plain_spec, args,
                                            fragments):  # fmt: skip
    npy = tmp_path / "features.npy"
    np.save(npy, np.eye(4))
    target = out_dir / "result.out"
    ids_only = write(tmp_path / "ids.csv", IDS_ONLY)
    subs = {"{meta}": meta_csv, "{graph}": graph_json, "{spec}": plain_spec, "{npy}": npy, "{target}": target,
            "{ids_only}": ids_only}  # fmt: skip
    cli_fails(capsys, tmp_path, [subs.get(a, a) for a in args], "invalid_argument", "does not apply", *fragments,
              output=target)  # fmt: skip


# ------------------------------------------------------------------- input tables and genetics-tool files (issue 10)
# Every table a user hands to `build`: CSV/TSV bytes as a spreadsheet or a script writes them, compressed files,
# Parquet files with the types pyarrow/pandas write, pandas frames, the relatedness files of KING, plink2, PLINK and
# GCTA, and coordinates. Expected values are written by hand (lines count the header as line 1).


def _build_both(capsys, tmp_path: Path, out_dir: Path, path: Path, code: str, fragments, extra=()) -> str:
    """``from_metadata(path)`` raises ``code`` and ``depgraph build path`` exits 2 alike, writing nothing."""
    with fails_with(code, *fragments, file=path):
        from_metadata(path)
    target = out_dir / "graph.json"
    return cli_fails(
        capsys, tmp_path, ["build", path, *extra, "-o", target], code, *fragments, output=target, file=path
    )


TEXT_TABLE_CASES = [
    pytest.param(
        b"sample_id,subject_id\nS1,P1,EXTRA\nS2,P1\n",
        "cohort.csv",
        "parse",
        [FILE, "line 2 has 3 field", "header has 2"],
        id="first-row-too-many-fields-is-not-an-index",
    ),
    pytest.param(
        b"sample_id,subject_id\nS1,P1\nS2\n", "cohort.csv", "parse", [FILE, "line 3 has 1 field"], id="too-few-fields"
    ),
    pytest.param(
        b"sample_id\tsubject_id\nS1\tP1\nS2\nS3\tP3\nS4\tP4\tX\n",
        "cohort.tsv",
        "parse",
        [FILE, "lines 3, 5", "header's 2 fields"],
        id="tsv-rows-short-and-long",
    ),
    pytest.param(
        b"sample_id,subject_id\n\nS1,P1\n\nS2\n",
        "cohort.csv",
        "parse",
        [FILE, "line 5"],
        id="ragged-line-after-blank-lines-counts-file-lines",
    ),
    pytest.param(
        b"sample_id,subject_id\r\nS1,P1,\r\nS2,P2,\r\n",
        "cohort.csv",
        "parse",
        [FILE, "lines 2, 3"],
        id="trailing-separator-in-rows-only",
    ),
    pytest.param(
        b"sample_id,subject_id,subject_id\nS1,P1,P2\n",
        "cohort.csv",
        "schema",
        [FILE, "subject_id more than once"],
        id="repeated-column-never-renamed",
    ),
    pytest.param(
        b"sample_id,batch_id,sample_id\nS1,B1,S9\n",
        "cohort.csv",
        "schema",
        ["sample_id more than once"],
        id="two-sample_id",
    ),
    pytest.param(
        b"sample_id,,batch_id\nS1,x,B1\n",
        "cohort.csv",
        "schema",
        [FILE, "column 2 has no name", "row 1"],
        id="nameless-column-with-values",
    ),
    pytest.param(b"sample_id,subject_id\nS1,P\x001\n", "cohort.csv", "parse", [FILE, "NUL", "line 2"], id="NUL-byte"),
    pytest.param(
        b"sample_id,subject_id\nS1,P1\nS2,J\xf6rg\n", "cohort.csv", "parse", [FILE, "UTF-8", "line 3"], id="latin-1"
    ),
    pytest.param(
        "sample_id,subject_id\nS1,P1\n".encode("utf-16"), "cohort.csv", "parse", [FILE, "UTF-16"], id="utf-16"
    ),
    pytest.param(b"PK\x03\x04\x14\x00\x06\x00[Content_Types].xml\n", "cohort.csv", "parse", [FILE, "ZIP"], id="xlsx"),
    pytest.param(b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1\x00\x00", "cohort.csv", "parse", [FILE, ".xls"], id="xls"),
    pytest.param(b"PAR1\x15\x04\x15\x10PAR1", "cohort.tsv", "parse", [FILE, "Parquet"], id="parquet-named-tsv"),
    pytest.param(bz2.compress(META.encode()), "cohort.csv", "parse", [FILE, "bzip2"], id="bzip2-named-csv"),
    pytest.param(gzip.compress(META.encode()), "cohort.csv", "parse", [FILE, "gzip"], id="gzip-named-csv"),
    pytest.param(b"\n\n   \n", "cohort.csv", "empty_input", [FILE, "no header line"], id="only-blank-lines"),
    pytest.param(b"sample_id\tsubject_id\n", "cohort.tsv", "empty_input", [FILE, "no rows"], id="header-only-tsv"),
    pytest.param(b"sample_id,subject_id", "cohort.csv", "empty_input", [FILE, "no rows"], id="header-without-eol"),
]


@pytest.mark.parametrize(("content", "name", "code", "fragments"), TEXT_TABLE_CASES)
def test_malformed_text_table(tmp_path, out_dir, capsys, content, name, code, fragments):
    path = tmp_path / name
    path.write_bytes(content)
    _build_both(capsys, tmp_path, out_dir, path, code, fragments)


@pytest.mark.parametrize(
    "content",
    [
        pytest.param(b"\xef\xbb\xbf" + META.encode(), id="utf-8-BOM"),
        pytest.param(META.replace("\n", "\r\n").encode(), id="windows-line-endings"),
        pytest.param(b"\n" + META.encode() + b"\n\n", id="blank-lines"),
        pytest.param(
            META.encode().replace(b"batch_id\n", b"batch_id,\n").replace(b"B1\n", b"B1,\n").replace(b"B2\n", b"B2,\n"),
            id="empty-trailing-column",
        ),
    ],
)
def test_text_tables_a_spreadsheet_writes_read_the_same(tmp_path, out_dir, capsys, content):
    path = tmp_path / "cohort.csv"
    path.write_bytes(content)
    graph = from_metadata(path)
    assert graph.relation_counts() == {"sample_belongs_to_subject": 4, "sample_processed_in_batch": 4}
    assert list(graph.attributes.columns) == []  # no unnamed or BOM-prefixed column sneaks in as an attribute
    cli_ok(capsys, ["build", path, "-o", out_dir / "graph.json"])


def test_quoted_values_keep_commas_and_line_breaks(tmp_path):
    path = write(tmp_path / "cohort.csv", 'sample_id,subject_id,note\nS1,P1,"a, b"\nS2,P1,"two\nlines"\n')
    graph = from_metadata(path)
    assert graph.attributes["note"].dropna().tolist() == ["a, b", "two\nlines"]


def _damaged(codec: str, damage: str) -> bytes:
    data = (META + "".join(f"S{k},P{k},B{k % 7}\n" for k in range(5, 4000))).encode()
    packed = {"gz": gzip.compress, "bz2": bz2.compress, "xz": lzma.compress}[codec](data)
    if damage == "truncated":
        return packed[: len(packed) // 2]
    return b"this is not a " + codec.encode() + b" file\n" + packed[20:]


@pytest.mark.parametrize("codec", ["gz", "bz2", "xz"])
@pytest.mark.parametrize("damage", ["truncated", "bad-magic"])
def test_damaged_compressed_table_is_a_parse_error(tmp_path, out_dir, capsys, codec, damage):
    path = tmp_path / f"cohort.csv.{codec}"
    path.write_bytes(_damaged(codec, damage))
    line = _build_both(capsys, tmp_path, out_dir, path, "parse", [FILE])
    assert "truncated or corrupt" in line


def test_zip_holding_two_tables(tmp_path, out_dir, capsys):
    path = tmp_path / "cohort.csv.zip"
    with zipfile.ZipFile(path, "w") as archive:
        archive.writestr("a.csv", META)
        archive.writestr("b.csv", META)
    _build_both(capsys, tmp_path, out_dir, path, "parse", [FILE, "2 files"])


@pytest.mark.parametrize("codec", ["gz", "bz2", "xz", "zip"])
def test_compressed_table_reads(tmp_path, codec):
    path = tmp_path / f"cohort.csv.{codec}"
    if codec == "zip":
        with zipfile.ZipFile(path, "w") as archive:
            archive.writestr("cohort.csv", META)
    else:
        path.write_bytes({"gz": gzip.compress, "bz2": bz2.compress, "xz": lzma.compress}[codec](META.encode()))
    assert from_metadata(path).relation_counts()["sample_belongs_to_subject"] == 4


# Parquet: tables as pyarrow (and pandas through pyarrow) write them. Each factory returns a pyarrow Table.
def _ids(**columns) -> pa.Table:
    return pa.table({"sample_id": ["S1", "S2", "S3"], **columns})


def _with_pandas_metadata(raw: bytes) -> pa.Table:
    table = _ids(subject_id=["P1", "P1", "P2"])
    return table.replace_schema_metadata({b"pandas": raw})


PARQUET_CASES = [
    pytest.param(
        lambda: _ids(subject_id=pa.array([[1, 2], [3], [4]])),
        "schema",
        ["subject_id", "list"],
        id="list-ids",
    ),
    pytest.param(
        lambda: _ids(subject_id=["P1", "P1", "P2"], scores=pa.array([[1.0], [2.0], [3.0]])),
        "schema",
        ["scores", "list"],
        id="list-attribute",
    ),
    pytest.param(
        lambda: _ids(subject_id=pa.array([{"a": 1}, {"a": 2}, {"a": 3}])),
        "schema",
        ["subject_id", "struct"],
        id="struct-ids",
    ),
    pytest.param(
        lambda: _ids(subject_id=pa.array([b"P1", b"\xff\xfe", b"P2"])),
        "schema",
        ["subject_id", "not UTF-8"],
        id="bytes-not-utf8",
    ),
    pytest.param(lambda: _ids(subject_id=[True, False, True]), "schema", ["subject_id", "booleans"], id="bool-ids"),
    pytest.param(
        lambda: _ids(subject_id=pa.array([datetime(2024, 1, d) for d in (1, 2, 3)])),
        "schema",
        ["subject_id", "dates"],
        id="datetime-ids",
    ),
    pytest.param(
        lambda: _ids(timepoint_id=pa.array([date(2024, 1, 1), date(2024, 2, 1), date(2024, 3, 1)])),
        "schema",
        ["timepoint_id", "dates"],
        id="date-timepoints",
    ),
    pytest.param(
        lambda: _ids(subject_id=["P1", "P1", "P2"], visit=pa.array([time_of_day(9), time_of_day(10), time_of_day(11)])),
        "schema",
        ["visit", "time"],
        id="time-of-day-attribute",
    ),
    pytest.param(
        lambda: pa.Table.from_arrays(
            [pa.array(["S1"]), pa.array(["P1"]), pa.array(["P2"])], ["sample_id"] + ["subject_id"] * 2
        ),
        "schema",
        ["subject_id more than once"],
        id="repeated-column",
    ),
]


@pytest.mark.parametrize(("factory", "code", "fragments"), PARQUET_CASES)
def test_bad_parquet_cells(tmp_path, out_dir, capsys, factory, code, fragments):
    path = tmp_path / "cohort.parquet"
    pq.write_table(factory(), path)
    _build_both(capsys, tmp_path, out_dir, path, code, fragments)
    with fails_with(code, *fragments):  # the same table handed over in memory
        from_metadata(factory())


def test_corrupt_parquet(tmp_path, out_dir, capsys):
    path = tmp_path / "cohort.parquet"
    pq.write_table(_ids(subject_id=["P1", "P1", "P2"]), path)
    path.write_bytes(path.read_bytes()[:-30])
    _build_both(capsys, tmp_path, out_dir, path, "parse", [FILE, "Parquet"])


@pytest.mark.parametrize(
    "raw",
    [
        pytest.param(b"{not json", id="invalid-json"),
        pytest.param(json.dumps({"index_columns": ["gone"], "columns": [{"name": "gone"}]}).encode(), id="absent-cols"),
        pytest.param(b"[1, 2]", id="not-an-object"),
    ],
)
def test_parquet_with_broken_pandas_metadata_is_read_without_it(tmp_path, out_dir, capsys, raw):
    path = tmp_path / "cohort.parquet"
    pq.write_table(_with_pandas_metadata(raw), path)
    graph = from_metadata(path)
    assert graph.relation_counts() == {"sample_belongs_to_subject": 3}
    cli_ok(capsys, ["build", path, "-o", out_dir / "graph.json"])


def test_parquet_cells_converted_by_documented_rules(tmp_path):
    table = pa.table(
        {
            "sample_id": pa.array([b"S1", b"S2", b"S3"]),  # UTF-8 bytes: decoded
            "subject_id": pa.array(["P1", "P1", "P2"]).dictionary_encode(),  # dictionary of text: its values
            "batch_id": pa.array([Decimal("7"), Decimal("7"), None], type=pa.decimal128(5, 0)),  # integral decimals
            "site_id": pa.array([2**60 + 1, None, 2**60 + 1], type=pa.int64()),  # with a gap: never rounded by float
            "smoker": [True, None, False],
            "drawn": pa.array([datetime(2024, 1, 5), datetime(2024, 1, 6, 10, 30), None]),
            "day": pa.array([date(2024, 1, 5), None, date(2024, 2, 29)]),
            "utc": pa.array([datetime(2024, 1, 5, 12, tzinfo=timezone.utc)] * 3, type=pa.timestamp("s", tz="UTC")),
            "weight": pa.array([Decimal("1.5"), Decimal("2.25"), None], type=pa.decimal128(5, 2)),
        }
    )
    path = tmp_path / "cohort.parquet"
    pq.write_table(table, path)
    for source in (path, table):
        with pytest.warns(DepgraphWarning, match="column 'day' looks like time_index"):
            graph = from_metadata(source)
        assert graph.keys(NodeType.SAMPLE).tolist() == ["S1", "S2", "S3"]
        assert graph.keys(NodeType.BATCH).tolist() == ["7"]
        assert graph.keys(NodeType.SITE).tolist() == [str(2**60 + 1)]
        assert sum(graph.relation_counts().values()) == 3 + 2 + 2
        start, stop = graph.type_range(NodeType.SAMPLE)
        attrs = graph.attributes.iloc[start:stop]
        as_lists = {c: attrs[c].astype(object).where(attrs[c].notna(), None).tolist() for c in attrs.columns}
        assert as_lists["smoker"] == [True, None, False]
        assert as_lists["drawn"] == ["2024-01-05T00:00:00", "2024-01-06T10:30:00", None]
        assert as_lists["day"] == ["2024-01-05", None, "2024-02-29"]
        assert as_lists["utc"] == ["2024-01-05T12:00:00Z"] * 3
        assert as_lists["weight"] == [1.5, 2.25, None]


def test_a_sample_id_index_in_parquet_is_a_column(tmp_path):
    path = tmp_path / "cohort.parquet"
    pd.DataFrame({"sample_id": ["S1", "S2"], "subject_id": ["P1", "P1"]}).set_index("sample_id").to_parquet(path)
    assert from_metadata(path).relation_counts() == {"sample_belongs_to_subject": 2}
    unnamed = tmp_path / "unnamed.parquet"
    pd.DataFrame({"sample_id": ["S1", "S2"], "subject_id": ["P1", "P2"]}, index=[7, 9]).to_parquet(unnamed)
    assert list(from_metadata(unnamed).attributes.columns) == []  # pandas' own __index_level_0__ is not an attribute


FRAME_CASES = [
    pytest.param(
        pd.DataFrame({"sample_id": ["S1", "S2"], "subject_id": pd.Series([["P1"], ["P2"]], dtype=object)}),
        ["subject_id", "list", "row 1"],
        id="list-cells",
    ),
    pytest.param(
        pd.DataFrame({"sample_id": ["S1", "S2"], "extra": pd.Series(["x", {"k": 1}], dtype=object)}),
        ["extra", "dict", "row 2"],
        id="dict-in-a-mixed-column",
    ),
    pytest.param(pd.DataFrame({"sample_id": ["S1", "S2"], "subject_id": [True, False]}), ["booleans"], id="bools"),
    pytest.param(
        pd.DataFrame({"sample_id": ["S1", "S2"], "subject_id": pd.Series([True, None], dtype=object)}),
        ["subject_id", "booleans"],
        id="bools-with-gaps",
    ),
    pytest.param(
        pd.DataFrame({"sample_id": ["S1", "S2"], "subject_id": pd.to_datetime(["2024-01-01", "2024-01-02"])}),
        ["subject_id", "dates"],
        id="datetime-ids",
    ),
    pytest.param(
        pd.DataFrame({"sample_id": ["S1", "S2"], "subject_id": pd.Series([b"P1", b"\xff"], dtype=object)}),
        ["subject_id", "not UTF-8"],
        id="bytes-not-utf8",
    ),
    pytest.param(
        pd.DataFrame({"sample_id": ["S1", "S2"], "stay": pd.to_timedelta([1, 2], unit="D")}),
        ["stay", "durations"],
        id="durations",
    ),
    pytest.param(pd.DataFrame({"sample_id": ["S1", "S2"], "z": [1 + 2j, 3j]}), ["z", "complex"], id="complex-numbers"),
]


@pytest.mark.parametrize(("frame", "fragments"), FRAME_CASES)
def test_bad_cells_in_a_frame(frame, fragments):
    with fails_with("schema", *fragments):
        from_metadata(frame)


def test_frame_bytes_and_dates_converted(tmp_path):
    frame = pd.DataFrame(
        {
            "sample_id": pd.Series([b"S1", b"S2"], dtype=object),
            "subject_id": ["P1", "P1"],
            "seen": pd.Series([date(2024, 3, 1), None], dtype=object),
        }
    )
    graph = from_metadata(frame)
    assert graph.keys(NodeType.SAMPLE).tolist() == ["S1", "S2"]
    start, stop = graph.type_range(NodeType.SAMPLE)
    assert graph.attributes["seen"].iloc[start:stop].tolist() == ["2024-03-01", None]
    text = graph_bytes(graph).decode()
    assert "b'S1'" not in text and "[1 2]" not in text


# ---- genetics-tool files
TOOL_META = "sample_id,subject_id\nS1,P1\nS2,P2\nS3,P3\nS4,P4\n"
KIN0_HEADER = "FID1\tID1\tFID2\tID2\tN_SNP\tHetHet\tIBS0\tKinship\n"
PLINK2_HEADER = "#FID1\tIID1\tFID2\tIID2\tNSNP\tHETHET\tIBS0\tKINSHIP\n"
GENOME_HEADER = " FID1 IID1 FID2 IID2 RT EZ Z0 Z1 Z2 PI_HAT PHE DST PPC RATIO\n"


def _genome_line(f1, i1, f2, i2, pi_hat):
    return f" {f1} {i1} {f2} {i2} UN NA 0.5 0.5 0.0 {pi_hat} -1 0.8 0.5 2.0\n"


TOOL_CASES = [
    pytest.param(
        "cohort.kin0",
        KIN0_HEADER + "F1\tP1\tF2\tP2\t5000\t0.1\t0.001\t0.25\nF1\tP1\tF1\tP1\t5000\t0.2\t0.0\t0.5\n",
        "{IID}",
        "invalid_value",
        [FILE, "line 3 pairs an id with itself", "P1"],
        id="king-self-pair",
    ),
    pytest.param(
        "cohort.kin",
        "FID\tID1\tID2\tN_SNP\tZ0\tPhi\tHetHet\tIBS0\tKinship\tError\nF1\tP3\tP3\t5000\t0\t0.5\t0.2\t0\t0.49\t0\n",
        "{IID}",
        "invalid_value",
        ["line 2", "P3"],
        id="king-within-family-self-pair",
    ),
    pytest.param(
        "cohort.kin0",
        KIN0_HEADER + "F1\tP1\tF2\tP1\t5000\t0.1\t0.04\t-0.01\n",
        "{IID}",
        "invalid_value",
        ["line 2", "P1", "{FID}_{IID}"],
        id="same-iid-two-families-under-IID-template",
    ),
    pytest.param(
        "cohort.kin0",
        KIN0_HEADER + "F_1\tP2\tF\t1_P2\t5000\t0.1\t0.001\t0.25\n",
        "{FID}_{IID}",
        "invalid_value",
        ["line 2", "F_1_P2", "after id_template"],
        id="template-makes-one-id-of-two",
    ),
    pytest.param(
        "cohort.kin0",
        PLINK2_HEADER + "F1\tP2\tF1\tP2\t5000\t0.2\t0\t0.5\n",
        "{IID}",
        "invalid_value",
        ["line 2", "P2"],
        id="plink2-self-pair",
    ),
    pytest.param(
        "cohort.genome",
        GENOME_HEADER + _genome_line("F1", "P1", "F2", "P2", 0.5) + _genome_line("F4", "P4", "F4", "P4", 1.0),
        "{IID}",
        "invalid_value",
        ["line 3", "P4"],
        id="genome-self-pair",
    ),
    pytest.param(
        "cohort.kin0",
        KIN0_HEADER + "F1\tP1\tF2\tP2\t5000\t0.1\t0.001\t0.25\nF1\tP3\tF2\tP4\t5000\t0.2\t0.0\t0.61\n",
        "{IID}",
        "invalid_value",
        ["line 3", "0.61", "at most 0.5"],
        id="king-above-half",
    ),
    pytest.param(
        "cohort.kin0",
        PLINK2_HEADER + "F1\tP1\tF2\tP2\t5000\t0.2\t0\t0.5001\n",
        "{IID}",
        "invalid_value",
        ["line 2", "0.5001"],
        id="plink2-above-half",
    ),
    pytest.param(
        "cohort.genome",
        GENOME_HEADER + _genome_line("F1", "P1", "F2", "P2", 1.04),
        "{IID}",
        "invalid_value",
        ["PI_HAT", "line 2", "1.04", "at most 1"],
        id="pi-hat-above-one",
    ),
    pytest.param(
        "pairs.csv",
        "id1,id2,kinship\nP1,P2,0.25\n",
        "{FID}_{IID}",
        "invalid_argument",
        ["{FID}", "family"],
        id="FID-template-on-a-pair-table",
    ),
    pytest.param(
        "cohort.kin0",
        "ID1\tID2\tHetHet\tIBS0\tKinship\nP1\tP2\t0.1\t0.001\t0.25\n",
        "{FID}_{IID}",
        "invalid_argument",
        ["{FID}", "family"],
        id="FID-template-on-king-without-FID",
    ),
    pytest.param(
        "cohort.kin0.gz",
        b"\x1f\x8b" + b"\x00" * 30,
        "{IID}",
        "parse",
        [FILE, "truncated or corrupt"],
        id="corrupt-gzip-kin0",
    ),
    pytest.param(
        "rel.txt",
        b"FID1\tID1\tFID2\tID2\tKinship\nF1\tJ\xf6rg\tF2\tP2\t0.3\n",
        "{IID}",
        "parse",
        [FILE, "UTF-8"],
        id="tool-file-not-utf8",
    ),
]


@pytest.mark.parametrize(("name", "content", "template", "code", "fragments"), TOOL_CASES)
def test_bad_genetics_tool_file(tmp_path, out_dir, capsys, name, content, template, code, fragments):
    meta = write(tmp_path / "meta.csv", TOOL_META)
    path = tmp_path / name
    if isinstance(content, bytes):
        path.write_bytes(content)
    else:
        path.write_text(content, encoding="utf-8")
    with fails_with(code, *fragments, file=path):
        add_kinship(from_metadata(meta), path, "third", id_template=template)
    target = out_dir / "graph.json"
    args = ["build", meta, "--kinship", path, "--kinship-threshold", "third", "--id-template", template, "-o", target]
    cli_fails(capsys, tmp_path, args, code, *fragments, output=target, file=path)


def test_truncated_gzip_king_table(tmp_path, out_dir, capsys):
    body = "".join(f"F{k}\tP{k % 4 + 1}\tG{k}\tQ{k}\t5000\t0.1\t0.04\t-0.0{k % 9}\n" for k in range(20000))
    packed = gzip.compress((KIN0_HEADER + body).encode())
    path = tmp_path / "cohort.kin0.gz"
    path.write_bytes(packed[: len(packed) * 2 // 3])
    meta = write(tmp_path / "meta.csv", TOOL_META)
    with fails_with("parse", FILE, "truncated or corrupt", file=path):
        add_kinship(from_metadata(meta), path, "third", unknown="ignore")
    target = out_dir / "graph.json"
    args = ["build", meta, "--kinship", path, "--kinship-threshold", "third", "--unknown", "ignore", "-o", target]
    cli_fails(capsys, tmp_path, args, "parse", FILE, output=target, file=path)


@pytest.mark.parametrize(
    ("name", "text"),
    [
        pytest.param(
            "cohort.kin0",
            "FID1,ID1,FID2,ID2,N_SNP,HetHet,IBS0,Kinship\nF1,P1,F2,P2,5000,0.1,0.001,0.2461\n"
            "F1,P1,F3,P3,5000,0.05,0.04,-0.0137\nF2,P2,F4,P4,5000,0.05,0.04,-0.2\n",
            id="kin0-saved-with-commas",
        ),
        pytest.param(
            "relatedness.csv",
            "FID1,ID1,FID2,ID2,N_SNP,HetHet,IBS0,Kinship\nF1,P1,F2,P2,5000,0.1,0.001,0.2461\n"
            "F1,P1,F3,P3,5000,0.05,0.04,-0.0137\nF2,P2,F4,P4,5000,0.05,0.04,-0.2\n",
            id="king-header-in-a-csv",
        ),
        pytest.param(
            "relatedness.csv",
            "#FID1,IID1,FID2,IID2,NSNP,HETHET,IBS0,KINSHIP\nF1,P1,F2,P2,5000,0.1,0.001,0.2461\n"
            "F1,P1,F3,P3,5000,0.05,0.04,-0.0137\nF2,P2,F4,P4,5000,0.05,0.04,-0.2\n",
            id="plink2-header-in-a-csv",
        ),
    ],
)
def test_tool_table_saved_with_commas_keeps_negative_kinship(tmp_path, out_dir, capsys, name, text):
    path = write(tmp_path / name, text)
    pairs, record = read_kinship(path, "king" if "Kinship" in text else "plink2-king", 0.0)
    assert record["pairs_read"] == 3 and len(pairs) == 1  # -0.0137 and -0.2 read as numbers, below any threshold
    graph = add_kinship(from_metadata(write(tmp_path / "meta.csv", TOOL_META)), path, "third")
    assert graph.relation_counts()["subject_related_to"] == 1
    target = out_dir / "graph.json"
    cli_ok(capsys, ["build", tmp_path / "meta.csv", "--kinship", path, "--kinship-threshold", "third", "-o", target])
    assert read_graph(target).relation_counts()["subject_related_to"] == 1


def test_negative_kinship_in_a_plain_pair_table_is_still_refused(tmp_path, out_dir, capsys):
    path = write(tmp_path / "pairs.csv", "id1,id2,kinship\nP1,P2,0.25\nP3,P4,-0.0137\n")
    meta = write(tmp_path / "meta.csv", TOOL_META)
    with fails_with("invalid_value", "row 2", "-0.0137"):
        add_kinship(from_metadata(meta), path, "third")
    with fails_with("invalid_value", "line 3", "-0.0137"):
        read_kinship(path, "pairs", "third")


def _grm(tmp_path: Path, grm: np.ndarray, iids: list[str], fids: list[str] | None = None) -> Path:
    rows, cols = np.tril_indices(len(iids))  # GCTA's order: (0,0) (1,0) (1,1) (2,0) ...
    grm.astype("<f4")[rows, cols].tofile(tmp_path / "cohort.grm.bin")
    fids = fids or ["0"] * len(iids)
    (tmp_path / "cohort.grm.id").write_text("".join(f"{f}\t{i}\n" for f, i in zip(fids, iids, strict=True)))
    return tmp_path / "cohort.grm.bin"


def test_grm_above_two_is_refused(tmp_path, out_dir, capsys):
    grm = np.array([[1.0, 0.1, 0.0], [0.1, 1.0, 2.3], [0.0, 2.3, 1.0]])
    path = _grm(tmp_path, grm, ["P1", "P2", "P3"])
    meta = write(tmp_path / "meta.csv", TOOL_META)
    with fails_with("invalid_value", "(P2, P3)", "above 2"):
        add_kinship(from_metadata(meta), path, "third")
    target = out_dir / "graph.json"
    args = ["build", meta, "--kinship", path, "--kinship-threshold", "third", "-o", target]
    cli_fails(capsys, tmp_path, args, "invalid_value", "(P2, P3)", output=target)


def test_grm_ids_that_collide_under_the_template(tmp_path, out_dir, capsys):
    path = _grm(tmp_path, np.eye(3), ["P1", "P1", "P3"], ["F1", "F2", "F3"])
    meta = write(tmp_path / "meta.csv", TOOL_META)
    with fails_with("duplicate_id", "P1", "{FID}_{IID}"):
        add_kinship(from_metadata(meta), path, "third")
    target = out_dir / "graph.json"
    args = ["build", meta, "--kinship", path, "--kinship-threshold", "third", "-o", target]
    cli_fails(capsys, tmp_path, args, "duplicate_id", "P1", output=target)


def test_grm_above_one_is_kept_and_flagged(tmp_path, out_dir, capsys):
    # monozygotic twins: GRM 1.06 off the diagonal (kinship 0.53) is what a standardised GRM gives them: kept, flagged
    grm = np.array([[1.08, 1.06, 0.0, 0.0], [1.06, 1.07, 0.0, 0.0], [0.0, 0.0, 1.0, 0.5], [0.0, 0.0, 0.5, 1.0]])
    path = _grm(tmp_path, grm, ["P1", "P2", "P3", "P4"])
    graph = add_kinship(from_metadata(write(tmp_path / "meta.csv", TOOL_META)), path, "first")
    assert graph.relation_counts()["subject_related_to"] == 2
    (flag,) = [i for i in validate(graph).issues if i.code == "kinship_above_half"]
    assert flag.severity == "warning" and flag.count == 1
    assert set(flag.ids) == {"subject:P1", "subject:P2"} and "P1-P2" in flag.message
    target = out_dir / "graph.json"
    cli_ok(capsys, ["build", tmp_path / "meta.csv", "--kinship", path, "--kinship-threshold", "first", "-o", target])
    doc = json.loads(cli_ok(capsys, ["validate", target, "--json"]))
    assert doc["counts"]["kinship_above_half"] == 1


def test_id_template_on_a_pair_table_is_applied_and_on_a_matrix_refused(tmp_path):
    meta = pd.DataFrame({"sample_id": ["S1", "S2"], "subject_id": ["sub-P1", "sub-P2"]})
    pairs = write(tmp_path / "pairs.csv", "id1,id2,kinship\nP1,P2,0.25\n")
    graph = add_kinship(from_metadata(meta), pairs, "first", id_template="sub-{IID}")
    assert graph.relation_counts()["subject_related_to"] == 1
    with fails_with("invalid_argument", "id_template", "matrix"):
        add_kinship(from_metadata(meta), np.eye(2), "first", ids=["sub-P1", "sub-P2"], id_template="sub-{IID}")


# ---- coordinates
HUGE_COORD_CASES = [
    pytest.param("sample_id,x,y\nS1,1e308,0\nS2,-1e308,0\nS3,0,1\n", ["x", "rows 1, 2"], id="1e308-span-overflows"),
    pytest.param("sample_id,x,y\nS1,0,1e200\nS2,0,0\nS3,1,1\n", ["y", "rows 1, 2"], id="1e200-squares-overflow"),
    pytest.param("sample_id,x\nS1,1.7e308\nS2,0\nS3,1\n", ["x", "rows 1, 2"], id="near-float-max"),
]


@pytest.mark.parametrize(("text", "fragments"), HUGE_COORD_CASES)
def test_coordinates_whose_distances_overflow(tmp_path, out_dir, meta_csv, capsys, text, fragments):
    coords = write(tmp_path / "coords.csv", text.replace("S3", "S4"))
    with fails_with("invalid_value", *fragments, "rescale"):
        add_spatial(from_metadata(meta_csv), coords, 5.0)
    target = out_dir / "graph.json"
    args = ["build", meta_csv, "--coords", coords, "--radius", "5", "-o", target]
    cli_fails(capsys, tmp_path, args, "invalid_value", *fragments, output=target)


def test_large_but_safe_coordinates_and_the_minkowski_limit(tmp_path, meta_csv):
    coords = write(tmp_path / "coords.csv", "sample_id,x,y\nS1,1e150,0\nS2,1e150,1\nS3,-1e150,0\n")
    graph = add_spatial(from_metadata(meta_csv), coords, 2.0)
    assert graph.relation_counts()["sample_adjacent_to"] == 1  # S1-S2 at distance 1, as plain arithmetic says
    spread = write(tmp_path / "spread.csv", "sample_id,x\nS1,0\nS2,1e7\n")
    with fails_with("invalid_value", "p=50", "rescale"):
        add_spatial(from_metadata(meta_csv), spread, 1.0, p=50)
    assert (
        add_spatial(from_metadata(meta_csv), spread, 1.0, p=float("inf")).relation_counts()
        == from_metadata(meta_csv).relation_counts()
    )


# ---- no grouping column
def test_build_without_a_grouping_column_says_so_and_names_id_like_columns(tmp_path, out_dir, capsys):
    rows = "".join(f"S{k},A{k // 3},{'f' if k % 2 else 'm'},{k * 0.5}\n" for k in range(30))
    path = write(tmp_path / "cohort.csv", "sample_id,patient,sex,score\n" + rows)
    with pytest.warns(DepgraphWarning, match="column 'patient' looks like subject_id"):
        graph = from_metadata(path)
    (issue,) = [i for i in validate(graph).issues if i.code == "no_grouping_column"]
    assert issue.severity == "warning" and issue.count == 30
    assert "patient" in issue.message and "--column subject_id=patient" in issue.message
    assert "sex" not in issue.message and "score" not in issue.message
    target = out_dir / "graph.json"
    capsys.readouterr()
    assert main(["build", str(path), "-o", str(target)]) == 0
    err = capsys.readouterr().err.splitlines()
    assert len(err) == 2 and err[0].startswith("depgraph: warning: no_grouping_column: ")
    assert "--column subject_id=patient" in err[0]
    assert err[1].startswith("depgraph: warning: unmapped_role_column: ") and "--column subject_id=patient" in err[1]
    # mapped, the warning goes away
    capsys.readouterr()
    assert main(["build", str(path), "--column", "subject_id=patient", "-o", str(target)]) == 0
    assert capsys.readouterr().err == ""
    assert "no_grouping_column" not in [i.code for i in validate(read_graph(target)).issues]


def test_only_sample_ids_warns_without_candidates(tmp_path):
    graph = from_metadata(pd.DataFrame({"sample_id": ["S1", "S2", "S3"]}))
    (issue,) = [i for i in validate(graph).issues if i.code == "no_grouping_column"]
    assert "looks like" not in issue.message and "look like" not in issue.message


# ---- a path is named once
def test_messages_name_a_path_once(tmp_path, out_dir, capsys):
    """Every refusal above names its file, and never twice ("metadata 'x' 'x' is empty")."""
    cases: list[tuple[str, bytes]] = [(name, content) for content, name, _, _ in (p.values for p in TEXT_TABLE_CASES)]
    cases += [("empty.csv", b""), ("cohort.csv.gz", _damaged("gz", "truncated")), ("bad.parquet", b"PAR1nope")]
    for k, (name, content) in enumerate(cases):
        folder = tmp_path / f"case{k}"
        folder.mkdir()
        path = folder / name
        path.write_bytes(content)
        with pytest.raises(DepgraphError) as info:
            from_metadata(path)
        quoted = repr(str(path))
        assert info.value.message.count(str(path)) == 1, info.value.message
        capsys.readouterr()
        assert main(["build", str(path), "-o", str(out_dir / "g.json")]) == 2
        line = capsys.readouterr().err.strip()
        assert line.count(quoted) == 1 and not re.search(r"'([^']+)' '\1'", line), line


# ---- numbers that are not numbers, and ids that are not ids, in every table build reads
NUMBER_AND_ID_CASES = [
    pytest.param(
        "coords",
        lambda: pa.table({"sample_id": ["S1", "S2"], "x": [True, False]}),
        ["x", "booleans", "not numbers"],
        id="boolean-coordinates",
    ),
    pytest.param(
        "coords",
        lambda: pa.table({"sample_id": pa.array([True, False]), "x": [0.0, 1.0]}),
        ["sample_id", "booleans"],
        id="boolean-coordinate-ids",
    ),
    pytest.param(
        "meta",
        lambda: pa.table(
            {
                "sample_id": ["S1", "S2"],
                "timepoint_id": ["T0", "T1"],
                "time_index": pa.array([datetime(2024, 1, 1), datetime(2024, 2, 1)]),
            }
        ),
        ["time_index", "dates", "not numbers"],
        id="datetime-time_index",
    ),
    pytest.param(
        "kinship",
        lambda: pa.table({"id1": ["P1"], "id2": ["P2"], "kinship": [True]}),
        ["kinship", "booleans"],
        id="boolean-kinship",
    ),
    pytest.param(
        "duplicates",
        lambda: pa.table({"id1": pa.array([date(2024, 1, 1)]), "id2": ["S2"]}),
        ["id1", "dates"],
        id="date-duplicate-ids",
    ),
]


@pytest.mark.parametrize(("role", "factory", "fragments"), NUMBER_AND_ID_CASES)
def test_typed_columns_that_cannot_be_read_as_asked(tmp_path, out_dir, meta_csv, capsys, role, factory, fragments):
    path = tmp_path / f"{role}.parquet"
    pq.write_table(factory(), path)
    target = out_dir / "graph.json"
    if role == "meta":
        _build_both(capsys, tmp_path, out_dir, path, "schema", fragments)
        return
    graph = from_metadata(meta_csv)
    call = {
        "coords": lambda: add_spatial(graph, path, 1.0),
        "kinship": lambda: add_kinship(graph, path, 0.1),
        "duplicates": lambda: add_duplicates(graph, path),
    }[role]
    with fails_with("schema", *fragments, file=path):
        call()
    option = {
        "coords": ["--coords", path, "--radius", "1"],
        "kinship": ["--kinship", path, "--kinship-threshold", "0.1"],
        "duplicates": ["--duplicates", path],
    }[role]
    cli_fails(capsys, tmp_path, ["build", meta_csv, *option, "-o", target], "schema", *fragments, output=target)


# ---- found by fuzzing the readers (byte flips in CSV, Parquet and tool files; random object cells in frames)
FUZZED_TEXT_CASES = [
    pytest.param(
        b'sample_id,"subject_id\nS1,P1\nS2,P2\n',
        "cohort.csv",
        "parse",
        [FILE, "header line never ends"],
        id="open-quote",
    ),
    pytest.param(
        b"sample_id,subject_id\nS1,P1\nS2,P\xfe2,X\n",
        "cohort.csv",
        "parse",
        [FILE, "UTF-8", "line 3"],
        id="ragged+bytes",
    ),
    pytest.param(b"samp\xfdle_id,x\nS1,0\n", "cohort.csv", "parse", [FILE, "UTF-8", "line 1"], id="header-not-utf8"),
    pytest.param(
        b'sample_id,subject_id\n"S\n1",P1\nS2,P2\n',
        "cohort.csv",
        "invalid_value",
        ["sample_id", "line break", "row 1", r"'S\n1'"],
        id="line-break-inside-an-id",
    ),
    pytest.param(
        b"sample_id,subject_id\nS1,P\t1\n", "cohort.csv", "invalid_value", ["subject_id", "tab"], id="tab-inside-an-id"
    ),
]


@pytest.mark.parametrize(("content", "name", "code", "fragments"), FUZZED_TEXT_CASES)
def test_fuzzed_text_table(tmp_path, out_dir, capsys, content, name, code, fragments):
    path = tmp_path / name
    path.write_bytes(content)
    _build_both(capsys, tmp_path, out_dir, path, code, fragments)


FUZZED_TOOL_CASES = [
    pytest.param(
        GENOME_HEADER + " F1 P1 F2 P2 UN NA 0.5 0 0.5 0.0 0.5 -1 0.8 0.5 2.0\n",
        ["line 2 has more fields than the header"],
        id="genome-first-line-longer-is-not-an-index",
    ),
    pytest.param(
        KIN0_HEADER + "F1\tP1\tF2\tP2\t5000\t0.1\t0.001\t0.25\nF1\tP3\tF2\tP4\t5000\t0.1\t0.001\t0.25\t9\n",
        ["line 3", "saw 9"],
        id="king-later-line-longer",
    ),
    pytest.param(
        KIN0_HEADER + "F1\tP1\tF2\tP2\t5000\t0.1\t0.001\t0.25\nF1\tP3\tF2\tP4\t5000\n",
        ["line 3 has fewer fields than the header's 8"],
        id="king-line-cut-short",
    ),
    pytest.param(
        KIN0_HEADER + 'F1\t"P1\tF2\tP2\t5000\t0.1\t0.001\t0.25\n', ["EOF inside string"], id="king-open-quote"
    ),
]


@pytest.mark.parametrize(("text", "fragments"), FUZZED_TOOL_CASES)
def test_fuzzed_tool_file(tmp_path, out_dir, capsys, text, fragments):
    meta = write(tmp_path / "meta.csv", TOOL_META)
    path = write(tmp_path / ("cohort.genome" if "PI_HAT" in text else "cohort.kin0"), text)
    with fails_with("parse", FILE, *fragments, file=path):
        add_kinship(from_metadata(meta), path, "third")
    target = out_dir / "graph.json"
    args = ["build", meta, "--kinship", path, "--kinship-threshold", "third", "-o", target]
    cli_fails(capsys, tmp_path, args, "parse", FILE, *fragments, output=target, file=path)


FUZZED_FRAME_CASES = [
    pytest.param(
        pd.Series(["S1", Decimal("1.5")], dtype=object), ["note", "Decimal", "row 2"], id="decimal-among-text"
    ),
    pytest.param(pd.Series([1, timedelta(days=1)], dtype=object), ["note", "timedelta", "row 2"], id="duration-mixed"),
    pytest.param(pd.Series(["a", b"\xff"], dtype=object), ["note", "bytes", "row 2"], id="bytes-among-text"),
    pytest.param(pd.Series([1, 1 + 2j], dtype=object), ["note", "complex"], id="complex-mixed"),
    pytest.param(pd.Series([2**70, 1], dtype=object), ["note", "beyond 64 bits", "row 1"], id="huge-integer"),
]


@pytest.mark.parametrize(("cells", "fragments"), FUZZED_FRAME_CASES)
def test_fuzzed_frame_cells(cells, fragments):
    with fails_with("schema", *fragments):
        from_metadata(pd.DataFrame({"sample_id": ["S1", "S2"], "note": cells}))


def test_frame_decimals_follow_the_arrow_rule():
    frame = pd.DataFrame(
        {"sample_id": ["S1", "S2"], "batch_id": [Decimal("7"), Decimal("8")], "w": [Decimal("1.5"), None]}
    )
    graph = from_metadata(frame)
    assert graph.keys(NodeType.BATCH).tolist() == ["7", "8"]
    start, stop = graph.type_range(NodeType.SAMPLE)
    assert graph.attributes["w"].iloc[start:stop].astype(object).where(lambda s: s.notna(), None).tolist() == [
        1.5,
        None,
    ]
    json.loads(graph_bytes(graph))  # every attribute is JSON


# ---- a property: whichever lines are ragged, exactly those are named, by their line in the file

_TOKEN = st.text(alphabet="ABCPS0123456789_-", min_size=1, max_size=6)


@settings(max_examples=60, deadline=None)
@given(
    width=st.integers(min_value=1, max_value=4),
    rows=st.lists(st.tuples(st.integers(min_value=-1, max_value=1), st.booleans()), min_size=1, max_size=30),
    data=st.data(),
)
def test_ragged_lines_are_named_exactly(tmp_path_factory, width, rows, data):
    """Each row gets ``width + delta`` fields (delta -1, 0 or +1; never 0 fields), blank lines sprinkled in; the
    message names the first ragged line and the refusal lists every one (file lines, header = line 1)."""
    header = ["sample_id", *(f"c{k}" for k in range(1, width))]
    lines = [",".join(header)]
    expected = []
    for delta, blank_before in rows:
        if blank_before:
            lines.append("")
        fields = max(1, width + delta)
        lines.append(",".join(data.draw(_TOKEN) for _ in range(fields)))
        if fields != width:
            expected.append(len(lines))  # 1-based: the line just appended
    path = tmp_path_factory.mktemp("ragged") / "cohort.csv"
    path.write_text("\n".join(lines) + "\n")
    if not expected:
        assert len(read_table(path, "metadata")) == len(rows)
        return
    with pytest.raises(DepgraphError) as info:
        read_table(path, "metadata")
    assert info.value.code == "parse"
    assert info.value.details["lines"] == expected
    assert f"line{'s' if len(expected) > 1 else ''} {expected[0]}" in info.value.message


def test_tool_file_and_coordinate_messages_name_a_path_once(tmp_path, capsys):
    """The same scan over the kinship and coordinate refusals, through the command line."""
    cases = [(name, content, template) for name, content, template, _, _ in (p.values for p in TOOL_CASES)]
    cases += [("cohort.kin0", text, "{IID}") for text, _ in (p.values for p in FUZZED_TOOL_CASES)]
    cases += [("coords.csv", text, None) for text, _ in (p.values for p in HUGE_COORD_CASES)]
    for k, (name, content, template) in enumerate(cases):
        folder = tmp_path / f"case{k}"
        folder.mkdir()
        meta = write(folder / "meta.csv", TOOL_META)
        path = folder / name
        path.write_bytes(content if isinstance(content, bytes) else content.encode())
        extra = (
            ["--coords", path, "--radius", "1"]
            if template is None
            else ["--kinship", path, "--kinship-threshold", "third", "--id-template", template]
        )
        capsys.readouterr()
        assert main([str(a) for a in ["build", meta, *extra, "-o", folder / "g.json"]]) == 2
        line = capsys.readouterr().err.strip()
        assert line.count(repr(str(path))) <= 1 and not re.search(r"'([^']+)' '\1'", line), line


# ------------------------------------------------------------------- graph and spec documents (issue 10)
# Every element of every array is checked (the readers once checked three), an object that repeats a key is refused,
# and a spec whose content contradicts itself is refused as ``integrity`` even after its digest was recomputed
# (documents.redigest does that from scratch, as a careless script would). ``validate`` judges graphs and specs;
# ``derive`` (graphs) and ``folds`` (specs) must leave no output behind.
SIGN_KEY = "a shared key for the bad-input catalogue, 2026"
OTHER_KEY = "somebody else's key, also long enough to pass"
DOC_META = "sample_id,subject_id,batch_id,timepoint_id,time_index,outcome_id,sex\n" + "".join(
    f"S{i:02d},{subject},B{i % 2 + 1},T{i % 2},{6 * (i % 2)},{'case' if i % 3 else 'control'},{'FM'[i % 2]}\n"
    for i, subject in enumerate(["P1", "P1", "P1", "P2", "P2", "P3", "P3", "P4", "P5", "P5", "P6", "P6"], start=1)
)


def _document_cohort(tmp_path: Path):
    meta = write(tmp_path / "documents.csv", DOC_META)
    kinship = pd.DataFrame({"id1": ["P1", "P5"], "id2": ["P2", "P6"], "kinship": [0.25, 0.125]})
    return add_kinship(from_metadata(meta), kinship, 0.1)


@pytest.fixture
def spec_doc(tmp_path: Path) -> dict:
    """A sound spec document: 12 samples S01..S12 in 6 subjects (P1 has 3, P4 1), 3 folds, a carried attribute."""
    graph = _document_cohort(tmp_path)
    spec = SplitSpec.from_partition(derive(graph, "subject"), graph, attributes=["sex"])
    doc = spec_document(assign_folds(spec, "group-kfold", n_splits=3))
    assert documents.problems(doc) == []
    return doc


@pytest.fixture
def graph_doc(tmp_path: Path) -> dict:
    return graph_document(_document_cohort(tmp_path))


def _cell(column: str, i: int, value: object):
    return lambda d: d["samples"][column].__setitem__(i, value)


def _position(split: int, i: int, value: object, name: str = "test"):
    return lambda d: d["folds"]["splits"][split][name].__setitem__(i, value)


def _swap_rows(i: int, j: int):
    def edit(d):
        for values in d["samples"].values():
            values[i], values[j] = values[j], values[i]

    return edit


def _summary(field: str, value: object):
    return lambda d: d["summary"].__setitem__(field, value)


def _swap_groups(d):  # S01 (P1) and S04 (P2) trade groups: sizes stay, the folds now cut both groups
    groups = d["samples"]["group_id"]
    groups[0], groups[3] = groups[3], groups[0]


def _train_a_tested_sample(d):  # the first tested sample whose group has others: it now trains beside them
    groups = d["samples"]["group_id"]
    split = d["folds"]["splits"][0]
    p = next(p for p in split["test"] if groups.count(groups[p]) > 1)
    split["test"].remove(p)
    split["n_test"] -= 1
    split["n_train"] += 1


def _empty_test(d):
    split = d["folds"]["splits"][1]
    split["n_train"] += split["n_test"]
    split["test"], split["n_test"] = [], 0


def _no_samples(d):
    d["samples"] = {name: [] for name in d["samples"]}
    d["summary"] = documents.summary_of([])
    d.pop("folds")


def _pseudonymization(columns: list[str]):
    block = {"method": "hmac-sha256", "hex_digits": 32, "key_fingerprint": "0123456789abcdef", "columns": columns}
    return lambda d: d.__setitem__("pseudonymization", block)


def _repeat_key(where: str):
    """Text in which one object names a key twice; the digest matches the last value (what orjson keeps)."""

    def edit(d):
        if where == "samples":
            return documents.spec_text(d, repeat=("samples", {"sample_id": ["X"], "group_id": ["g:X"]}))
        if where == "summary":
            text = documents.spec_text(d)
            return text.replace(b'"summary": {', b'"summary": {"n_groups": 1, ', 1)
        text = documents.spec_text(d)
        return text.replace(b'"repeat": 0, ', b'"repeat": 7, "repeat": 0, ', 1)

    return edit


SPEC_DOCUMENT_CASES = [
    # every element of every column, whatever its index
    pytest.param(
        _cell("sample_id", 10, ""), "schema", [FILE, "samples.sample_id[10]", "''"], id="empty-sample-id-at-10"
    ),
    pytest.param(_cell("sample_id", 11, 12), "schema", ["samples.sample_id[11]", "12"], id="number-sample-id"),
    pytest.param(_cell("group_id", 7, None), "schema", ["samples.group_id[7]", "None"], id="null-group-id-at-7"),
    pytest.param(
        _cell("order_rank", 5, -7), "schema", ["samples.order_rank[5]", "-7", "at least 1"], id="order-rank-negative"
    ),
    pytest.param(_cell("order_rank", 9, True), "schema", ["samples.order_rank[9]", "True"], id="order-rank-boolean"),
    pytest.param(_cell("order_rank", 4, 1.0), "schema", ["samples.order_rank[4]", "1.0"], id="order-rank-written-1.0"),
    pytest.param(_cell("order_rank", 3, 2**63), "schema", ["samples.order_rank[3]", str(2**63)], id="order-rank-2^63"),
    pytest.param(_cell("time_index", 6, "six"), "schema", ["samples.time_index[6]", "'six'"], id="time-index-text"),
    pytest.param(_cell("time_index", 8, False), "schema", ["samples.time_index[8]", "False"], id="time-index-boolean"),
    pytest.param(
        _cell("batch_group", 2, ["B1"]), "schema", ["samples.batch_group[2]", "['B1']"], id="list-in-text-column"
    ),
    pytest.param(
        _cell("sex", 10, {"v": "F"}), "schema", ["samples.sex[10]", "not lists or objects"], id="object-attribute"
    ),
    pytest.param(_cell("sex", 4, [1, 2]), "schema", ["samples.sex[4]", "[1, 2]"], id="list-attribute"),
    # fold positions
    pytest.param(_position(0, 1, 2**63), "schema", ["folds.splits[0].test[1]", str(2**63)], id="position-2^63"),
    pytest.param(_position(0, 0, -1), "schema", ["folds.splits[0].test[0]", "-1"], id="position-negative"),
    pytest.param(_position(1, 0, 1.5), "schema", ["folds.splits[1].test[0]", "1.5"], id="position-fraction"),
    pytest.param(_position(2, 1, "3"), "schema", ["folds.splits[2].test[1]", "'3'"], id="position-text"),
    pytest.param(_position(0, 1, True), "schema", ["folds.splits[0].test[1]", "True"], id="position-boolean"),
    pytest.param(
        lambda d: d["folds"]["splits"][0]["test"].reverse(),
        "schema",
        ["folds.splits[0].test[", "sorted"],
        id="positions-unsorted",
    ),
    # what the content says of itself, re-digested: integrity
    pytest.param(
        _swap_rows(3, 4), "integrity", ["samples.sample_id[4]", "'S04'", "sample-id order"], id="ids-out-of-order"
    ),
    pytest.param(_cell("sample_id", 5, "S05"), "integrity", ["sample ids repeat", "S05"], id="id-repeated"),
    pytest.param(_summary("n_samples", 13), "integrity", ["summary.n_samples says 13", "12"], id="summary-n-samples"),
    pytest.param(_summary("n_groups", 5), "integrity", ["summary.n_groups says 5", "6"], id="summary-n-groups"),
    pytest.param(
        _summary("largest_group", "subject:P2"),
        "integrity",
        ["summary.largest_group", "subject:P1"],
        id="summary-largest-group",
    ),
    pytest.param(
        _summary("largest_group_size", 2), "integrity", ["summary.largest_group_size says 2"], id="summary-largest-size"
    ),
    pytest.param(_summary("singletons", 0), "integrity", ["summary.singletons says 0", "1"], id="summary-singletons"),
    pytest.param(_swap_groups, "integrity", ["on both sides", "a group stays whole"], id="two-group-ids-swapped"),
    pytest.param(_train_a_tested_sample, "integrity", ["folds.splits[0]", "on both sides"], id="sample-moved-to-train"),
    pytest.param(_empty_test, "integrity", ["folds.splits[1]", "tests no sample"], id="empty-test-set"),
    pytest.param(_no_samples, "integrity", [FILE, "holds no samples"], id="zero-samples"),
    pytest.param(
        _pseudonymization(["sample_id", "group_id"]),
        "integrity",
        ["samples.sample_id[0]", "'S01'", "not a pseudonym"],
        id="pseudonymization-on-raw-ids",
    ),
    pytest.param(
        _pseudonymization(["subject"]),
        "integrity",
        ["'subject'", "samples lack"],
        id="pseudonymization-names-no-column",
    ),
    # an object that repeats a key: a decoy the first-value readers (R's $) would read
    pytest.param(_repeat_key("samples"), "parse", [FILE, "repeats the key 'samples'"], id="repeated-samples-key"),
    pytest.param(_repeat_key("summary"), "parse", [FILE, "repeats the key 'n_groups'"], id="repeated-key-in-summary"),
    pytest.param(_repeat_key("split"), "parse", [FILE, "repeats the key 'repeat'"], id="repeated-key-in-a-split"),
]


def _write_document(path: Path, doc: dict, edit, redigest: bool = True) -> Path:
    text = edit(doc)
    if isinstance(text, bytes):
        path.write_bytes(text)
    else:
        if redigest:
            documents.redigest(doc)
        path.write_text(json.dumps(doc, indent=1, ensure_ascii=False), encoding="utf-8")
    return path


@pytest.mark.parametrize(("edit", "code", "fragments"), SPEC_DOCUMENT_CASES)
def test_bad_spec_document(tmp_path, out_dir, capsys, spec_doc, edit, code, fragments):
    path = _write_document(tmp_path / "spec.json", spec_doc, edit)
    with fails_with(code, *fragments, file=path):
        read_spec(path)
    cli_fails(capsys, tmp_path, ["validate", path], code, *fragments, file=path)
    target = out_dir / "folded.json"
    args = ["folds", path, "--scheme", "group-kfold", "-k", "2", "-o", target]
    cli_fails(capsys, tmp_path, args, code, *fragments, output=target, file=path)


def test_a_spec_edited_without_a_new_digest_is_refused_by_the_digest(tmp_path, out_dir, capsys, spec_doc):
    path = _write_document(tmp_path / "spec.json", spec_doc, _swap_groups, redigest=False)
    with fails_with("integrity", FILE, "digest does not match", file=path):
        read_spec(path)
    cli_fails(capsys, tmp_path, ["validate", path], "integrity", "digest does not match")


@pytest.fixture
def pseudonymized_doc(tmp_path: Path, spec_doc: dict) -> dict:
    spec = read_spec(_write_document(tmp_path / "raw.json", spec_doc, lambda d: None))
    doc = spec_document(pseudonymize(spec, SIGN_KEY))
    assert documents.problems(doc) == []
    return doc


def _pseudonym_edit(kind: str):
    def edit(d):
        ids, groups = d["samples"]["sample_id"], d["samples"]["group_id"]
        if kind == "upper-case":
            ids[2] = ids[2].upper() if ids[2] != ids[2].upper() else "A" + ids[2][1:]
        elif kind == "short":
            ids[2] = ids[2][:31]
        else:  # every member of the first singleton-free group loses its "subject:" prefix
            lost = groups[0]
            d["samples"]["group_id"] = [g.split(":", 1)[1] if g == lost else g for g in groups]
            d["summary"] = documents.summary_of(d["samples"]["group_id"])

    return edit


@pytest.mark.parametrize(
    ("kind", "fragments"),
    [
        ("upper-case", ["samples.sample_id[2]", "not a pseudonym", "32 lower-case hex digits"]),
        ("short", ["samples.sample_id[2]", "not a pseudonym"]),
        ("no-prefix", ["samples.group_id[0]", "after '<prefix>:'"]),
    ],
    ids=["upper-case-hex", "31-digits", "group-without-prefix"],
)
def test_pseudonymised_spec_with_an_id_that_is_no_pseudonym(
    tmp_path, out_dir, capsys, pseudonymized_doc, kind, fragments
):
    path = _write_document(tmp_path / "hidden.json", pseudonymized_doc, _pseudonym_edit(kind))
    with fails_with("integrity", *fragments, file=path):
        read_spec(path)
    cli_fails(capsys, tmp_path, ["validate", path], "integrity", *fragments)


SIGNATURE_CASES = [
    pytest.param(None, SIGN_KEY, ["carries no signature"], id="unsigned"),
    pytest.param(OTHER_KEY, SIGN_KEY, ["signed with another key"], id="other-key"),
    pytest.param("tampered-value", SIGN_KEY, ["signature does not match the digest"], id="tampered-value"),
    pytest.param("edited-and-redigested", SIGN_KEY, ["signature does not match the digest"], id="re-digested-edit"),
]


@pytest.mark.parametrize(("signer", "verifier", "fragments"), SIGNATURE_CASES)
def test_spec_whose_signature_is_missing_or_wrong(tmp_path, capsys, monkeypatch, spec_doc, signer, verifier, fragments):
    doc = spec_doc
    if signer is not None:
        doc["signature"] = documents.signature(doc, OTHER_KEY if signer == OTHER_KEY else SIGN_KEY)
        if signer == "tampered-value":
            value = doc["signature"]["value"]
            doc["signature"]["value"] = ("0" if value[0] != "0" else "1") + value[1:]
        if signer == "edited-and-redigested":  # the digest is recomputed below; the signature cannot be
            doc["graph_name"] = "someone else's cohort"
    path = _write_document(tmp_path / "signed.json", doc, lambda d: None)
    read_spec(path)  # the digest is sound: without a key the spec reads
    with fails_with("integrity", *fragments, file=path):
        read_spec(path, verify_key=verifier)
    monkeypatch.setenv("DEPGRAPH_TEST_SIGN_KEY", verifier)
    cli_fails(
        capsys, tmp_path, ["validate", path, "--verify-key-env", "DEPGRAPH_TEST_SIGN_KEY"], "integrity", *fragments
    )


def test_malformed_signature_is_a_schema_error(tmp_path, capsys, spec_doc):
    spec_doc["signature"] = {"method": "hmac-sha256", "key_fingerprint": "0123456789abcdef", "value": "not hex"}
    path = _write_document(tmp_path / "spec.json", spec_doc, lambda d: None)
    with fails_with("schema", FILE, "signature", file=path):
        read_spec(path)
    cli_fails(capsys, tmp_path, ["validate", path], "schema", "signature")


@pytest.mark.parametrize(
    ("command", "options"),
    [
        ("validate", ["--verify-key-env", "DEPGRAPH_UNSET_KEY"]),
        ("derive", ["--mode", "subject", "--sign-key-env", "DEPGRAPH_UNSET_KEY"]),
    ],
    ids=["verify", "sign"],
)
def test_signing_options_need_a_key_in_the_environment(
    tmp_path, out_dir, capsys, monkeypatch, graph_json, command, options
):
    monkeypatch.delenv("DEPGRAPH_UNSET_KEY", raising=False)
    target = out_dir / "spec.json"
    args = [command, graph_json, *options] + (["-o", target] if command == "derive" else [])
    cli_fails(capsys, tmp_path, args, "invalid_argument", "DEPGRAPH_UNSET_KEY", "unset or empty", output=target)


def test_verify_key_on_a_graph_is_refused(tmp_path, capsys, monkeypatch, graph_json):
    monkeypatch.setenv("DEPGRAPH_TEST_SIGN_KEY", SIGN_KEY)
    args = ["validate", graph_json, "--verify-key-env", "DEPGRAPH_TEST_SIGN_KEY"]
    cli_fails(capsys, tmp_path, args, "invalid_argument", "--verify-key-env", "study graph")


@pytest.mark.parametrize(
    "text", ["null", "123", "true", "[1, 2]", '"a spec"'], ids=["null", "number", "true", "array", "string"]
)
def test_document_that_is_not_an_object(tmp_path, out_dir, capsys, text):
    path = write(tmp_path / "doc.json", text)
    for reader in (read_spec, read_graph):
        with fails_with("schema", FILE, "JSON object", file=path):
            reader(path)
    cli_fails(capsys, tmp_path, ["validate", path], "schema", FILE, "JSON object", file=path)
    target = out_dir / "spec.json"
    cli_fails(
        capsys, tmp_path, ["derive", path, "--mode", "subject", "-o", target], "schema", FILE, output=target, file=path
    )


def _graph_edit(kind: str):
    def edit(d):
        if kind == "empty-key":
            d["nodes"]["Sample"][10] = ""
        elif kind == "boolean-key":
            d["nodes"]["Subject"][1] = True
        elif kind == "repeated-node":
            d["nodes"]["Sample"][5] = d["nodes"]["Sample"][4]
        elif kind == "null-endpoint":
            d["edges"]["sample_belongs_to_subject"]["source"][3] = None
        elif kind == "number-endpoint":
            d["edges"]["sample_processed_in_batch"]["target"][9] = 2
        elif kind == "text-weight":
            d["edges"]["subject_related_to"]["weight"][1] = "0.125"
        elif kind == "boolean-weight":
            d["edges"]["subject_related_to"]["weight"][0] = True
        elif kind == "list-attribute":
            d["attributes"]["Sample"]["sex"][7] = ["F"]
        elif kind == "object-attribute":
            d["attributes"]["Timepoint"]["time_index"][1] = {"t": 6}
        elif kind == "huge-integer-attribute":
            d["attributes"]["Timepoint"]["time_index"] = [0, 2**63]
        elif kind == "attributes-of-no-nodes":
            d["attributes"]["Site"] = {"name": ["X"]}
        elif kind == "provenance-number":
            entry = d["edges"]["sample_belongs_to_subject"]
            entry["provenance"] = ["metadata"] * len(entry["source"])
            entry["provenance"][2] = 7
        else:
            return documents.spec_text(d, repeat=("nodes", {"Sample": ["X"]}))
        return None

    return edit


GRAPH_DOCUMENT_CASES = [
    pytest.param("empty-key", "schema", [FILE, "nodes.Sample[10]", "''"], id="empty-node-key-at-10"),
    pytest.param("boolean-key", "schema", ["nodes.Subject[1]", "True"], id="boolean-node-key"),
    pytest.param("repeated-node", "duplicate_id", ["nodes.Sample repeats", "S05"], id="repeated-node-key"),
    pytest.param(
        "null-endpoint", "schema", ["edges.sample_belongs_to_subject.source[3]", "None"], id="null-edge-endpoint"
    ),
    pytest.param(
        "number-endpoint", "schema", ["edges.sample_processed_in_batch.target[9]", "2"], id="number-edge-endpoint"
    ),
    pytest.param("text-weight", "schema", ["edges.subject_related_to.weight[1]", "'0.125'"], id="text-weight"),
    pytest.param("boolean-weight", "schema", ["edges.subject_related_to.weight[0]", "True"], id="boolean-weight"),
    pytest.param("list-attribute", "schema", ["attributes.Sample.sex[7]", "['F']"], id="list-attribute-value"),
    pytest.param(
        "object-attribute",
        "schema",
        ["attributes.Timepoint.time_index[1]", "not lists or objects"],
        id="object-attribute-value",
    ),
    pytest.param(
        "huge-integer-attribute",
        "schema",
        ["attributes.Timepoint.time_index[1]", "64 bits"],
        id="integer-attribute-2^63",
    ),
    pytest.param(
        "attributes-of-no-nodes", "schema", ["attributes.Site", "does not declare"], id="attributes-of-undeclared-type"
    ),
    pytest.param(
        "provenance-number", "schema", ["edges.sample_belongs_to_subject.provenance[2]", "7"], id="number-in-provenance"
    ),
    pytest.param("repeated-key", "parse", [FILE, "repeats the key 'nodes'"], id="repeated-nodes-key"),
]


@pytest.mark.parametrize(("kind", "code", "fragments"), GRAPH_DOCUMENT_CASES)
def test_bad_graph_document(tmp_path, out_dir, capsys, graph_doc, kind, code, fragments):
    path = _write_document(tmp_path / "graph.json", graph_doc, _graph_edit(kind), redigest=False)
    with fails_with(code, *fragments, file=path):
        read_graph(path)
    cli_fails(capsys, tmp_path, ["validate", path], code, *fragments, file=path)
    target = out_dir / "spec.json"
    args = ["derive", path, "--mode", "subject", "-o", target]
    cli_fails(capsys, tmp_path, args, code, *fragments, output=target, file=path)


# ------------------------------------------------------------------- scikit-learn splitters and SpecCV (issue 11)
# The drop-in splitters are Python only (no CLI face): each refusal is a DepgraphError with its code, one line, and a
# ValueError as scikit-learn users expect; nothing is written anywhere.
_SPLIT_X = np.zeros((6, 2))
_SPLIT_Y = np.array([0, 1, 0, 1, 0, 1])
_SPLIT_GROUPS = np.array(["P1", "P1", "P2", "P2", "P3", "P3"])


def _splitter(name: str, *args: Any, **kwargs: Any) -> Any:
    return getattr(depgraph, name)(*args, **kwargs)  # depgraph.GroupKFold, depgraph.StratifiedGroupKFold


def _split(name: str, X: Any = _SPLIT_X, y: Any = _SPLIT_Y, groups: Any = _SPLIT_GROUPS, **kwargs: Any):
    return lambda: list(_splitter(name, **kwargs).split(X, y, groups))


SPLITTER_CASES = [
    (lambda: _splitter("GroupKFold", 1), "invalid_argument", ["GroupKFold", "n_splits=2 or more, not 1"]),
    (lambda: _splitter("GroupKFold", 2.0), "invalid_argument", ["n_splits must be an integer", "2.0"]),
    (lambda: _splitter("GroupKFold", True), "invalid_argument", ["n_splits must be an integer", "True"]),
    (lambda: _splitter("StratifiedGroupKFold", shuffle="yes"), "invalid_argument", ["shuffle must be True or False"]),
    (lambda: _splitter("GroupKFold", random_state=3), "invalid_argument", ["random_state=3 has no effect"]),
    (lambda: _splitter("GroupKFold", shuffle=True, random_state=-1), "invalid_argument", ["0..4294967295", "-1"]),
    (lambda: _splitter("GroupKFold", shuffle=True, random_state=2**32), "invalid_argument", ["4294967296"]),
    (
        lambda: _splitter("GroupKFold", shuffle=True, random_state=np.random.default_rng(0)),
        "invalid_argument",
        ["RandomState", "Generator"],
    ),
    (_split("GroupKFold", groups=None), "invalid_argument", ["GroupKFold needs groups=", "params={'groups'"]),
    (_split("GroupKFold", n_splits=4), "too_few_groups", ["n_splits=4 needs at least 4 groups; groups holds 3"]),
    (_split("GroupKFold", groups=_SPLIT_GROUPS[:5]), "invalid_argument", ["groups has 5 labels but X has 6"]),
    (_split("GroupKFold", groups=np.array([["P1"]] * 6)), "invalid_argument", ["1-D", "(6, 1)"]),
    (_split("GroupKFold", groups=["P1", None, "P2", "P2", "P3", np.nan]), "missing_id", ["2 missing", "index 1, 5"]),
    (_split("GroupKFold", groups=[1, "1", 2, 2, 3, 3]), "ambiguity", ["1 (int)", "'1' (str)"]),
    (_split("GroupKFold", groups=[1, "a", 2, 2, 3, 3]), "invalid_argument", ["mixes labels", "1 (int)", "'a' (str)"]),
    (_split("GroupKFold", X=np.zeros((0, 2)), groups=[]), "empty_input", ["X has no samples"]),
    (_split("GroupKFold", n_splits=3, y=_SPLIT_Y[:4]), "invalid_argument", ["y has 4 rows but X has 6 samples"]),
    (_split("StratifiedGroupKFold", n_splits=3, y=_SPLIT_Y[:5]), "invalid_argument", ["y has 5 rows but X has 6"]),
    (_split("StratifiedGroupKFold", n_splits=3, y=None), "invalid_argument", ["stratifies on y", "GroupKFold"]),
    (
        _split("StratifiedGroupKFold", n_splits=3, y=np.linspace(0, 1, 6)),
        "invalid_argument",
        ["continuous", "0.2", "pd.qcut"],
    ),
    (_split("StratifiedGroupKFold", n_splits=3, y=np.ones((6, 2))), "invalid_argument", ["(6, 2)", "multilabel"]),
    (_split("StratifiedGroupKFold", n_splits=3, y=[0, 1, np.nan, 1, 0, 1]), "missing_id", ["y has 1 missing", "2"]),
    (_split("StratifiedGroupKFold", n_splits=3, y=[0, "0", 0, 1, 1, 1]), "ambiguity", ["0 (int)", "'0' (str)"]),
    (
        _split("StratifiedGroupKFold", n_splits=3, y=[0, 0, 1, 1, 2, 2], groups=np.arange(6)),
        "too_few_groups",
        ["n_splits=3 is more than the samples of every class", "largest: 2"],
    ),
]


@pytest.mark.parametrize(("call", "code", "fragments"), SPLITTER_CASES)
def test_bad_splitter_arguments(call, code, fragments):
    with fails_with(code, *fragments) as info:
        call()
    assert isinstance(info.value, ValueError)


def test_splitter_warns_by_code_when_a_class_cannot_reach_every_fold():
    with pytest.warns(DepgraphWarning, match=r"least populated class in y \(2\) is in only 1 group") as caught:
        _split("StratifiedGroupKFold", n_splits=3, y=[0, 0, 0, 1, 1, 2], groups=np.arange(6))()
    assert caught[0].message.code == "few_groups_in_class"


def _speccv_cases() -> list:
    groups = [f"subject:P{i // 2}" for i in range(6)]
    frame = pd.DataFrame({"sample_id": [f"S{i}" for i in range(6)], "group_id": groups})
    spec = assign_folds(
        SplitSpec.build(frame, constraint=Constraint(mode="subject"), recommended_resampling="grouped_cv"),
        "group-kfold",
        n_splits=3,
    )
    X = pd.DataFrame({"sample_id": frame["sample_id"], "x": range(6)})
    subjects = [f"P{i // 2}" for i in range(6)]
    return [
        pytest.param(lambda cv: cv.split(X.to_numpy(), groups=subjects),
                     ["P0, P1, P2", "groups= takes each row's sample id, but these name the spec's groups",
                      "X.set_index(<sample id column>)", "SpecCV(spec, ids=...)"], spec, id="subject-ids-as-groups"),
        pytest.param(lambda cv: cv.split(X),
                     ["X's index holds row numbers (a RangeIndex), not sample ids: X.set_index('sample_id')"], spec,
                     id="range-index"),
    ]  # fmt: skip


@pytest.mark.parametrize(("call", "fragments", "spec"), _speccv_cases())
def test_speccv_rows_without_sample_ids(call, fragments, spec):
    with fails_with("reference", *fragments) as info:
        list(call(SpecCV(spec)))
    assert isinstance(info.value, ValueError)


# ------------------------------------------------------------------- adversarial pass: Python API (issue 10)
# Calls of the Python API a careful adversary or a new user makes: wrong types, degenerate inputs, documents that
# stretch JSON (integers beyond 64 bits, nesting), objects edited in memory. Each is refused with a coded error
# naming what is wrong, never a TypeError/ValueError from deep inside, never a confident wrong result.
@pytest.mark.parametrize(
    ("content", "line"),
    [(b"S1\nS\xe92\n", 2), (b"\xff\xfeS\x001\x00\n", 1), (b"# ok\nS1\nS2\n\xc3\n", 4)],
    ids=["latin-1-byte", "utf-16", "truncated-utf-8"],
)
def test_samples_file_that_is_not_utf8(tmp_path, out_dir, graph_json, capsys, content, line):
    samples = tmp_path / "samples.txt"
    samples.write_bytes(content)
    target = out_dir / "spec.json"
    args = ["derive", graph_json, "--mode", "subject", "--samples", samples, "-o", target]
    cli_fails(capsys, tmp_path, args, "parse", FILE, f"line {line}", "not UTF-8", output=target, file=samples)


def test_samples_file_with_a_byte_order_mark(tmp_path, out_dir, graph_json, capsys):
    samples = tmp_path / "samples.txt"
    samples.write_bytes("\ufeffS1\nS2\n".encode())
    target = out_dir / "spec.json"
    cli_ok(capsys, ["derive", graph_json, "--mode", "subject", "--samples", samples, "-o", target])
    assert read_spec(target).sample_ids.tolist() == ["S1", "S2"]


def test_samples_list_keeps_a_hash_inside_an_id(tmp_path, out_dir, capsys):
    """In a text sample list a ``#`` starts a comment at the start of a line or after a blank; inside an id it is
    part of the id (``S1#2`` was once read as ``S1``: another sample, silently)."""
    graph = tmp_path / "g.json"
    write_graph(from_metadata(pd.DataFrame({"sample_id": ["S1", "S1#2", "S3"], "subject_id": ["P1", "P2", "P3"]})),
                graph)  # fmt: skip
    samples = tmp_path / "samples.txt"
    samples.write_text("S1#2\nS3 # the third\n   # a comment\n#S1\n")
    target = out_dir / "spec.json"
    cli_ok(capsys, ["derive", graph, "--mode", "subject", "--samples", samples, "-o", target])
    assert read_spec(target).sample_ids.tolist() == ["S1#2", "S3"]


def test_a_one_column_samples_table_without_a_header_is_refused(tmp_path, out_dir, capsys):
    """A one-column CSV whose first line is a sample of the graph has no header: read as one, its first id would be
    the column's name and left out without a word. Refused (``schema``), nothing written; with a header (any name)
    every id is read."""
    graph = tmp_path / "g.json"
    write_graph(from_metadata(pd.DataFrame({"sample_id": ["S00", "S01", "S04"]})), graph)
    headerless = tmp_path / "subset.csv"
    headerless.write_text("S00\nS01\nS04\n")
    target = out_dir / "spec.json"
    args = ["derive", graph, "--mode", "subject", "--allow-unlinked", "--samples", headerless, "-o", target]
    cli_fails(capsys, tmp_path, args, "schema", "has no header: its first line, 'S00', is a sample of the graph",
              output=target)  # fmt: skip
    named = tmp_path / "named.csv"
    named.write_text("id\nS00\nS01\n")
    cli_ok(capsys, ["derive", graph, "--mode", "subject", "--allow-unlinked", "--samples", named, "-o", target])
    assert read_spec(target).sample_ids.tolist() == ["S00", "S01"]


def _repeat_edge(relation: str, at: int, reverse: bool = False, weight: float | None = None):
    def edit(d):
        entry = d["edges"][relation]
        a, b = entry["source"][at], entry["target"][at]
        entry["source"].append(b if reverse else a)
        entry["target"].append(a if reverse else b)
        if "weight" in entry:
            entry["weight"].append(entry["weight"][at] if weight is None else weight)
        if isinstance(entry.get("provenance"), list):
            entry["provenance"].append("by hand")

    return edit


REPEATED_EDGE_CASES = [
    pytest.param(
        _repeat_edge("sample_belongs_to_subject", 3),
        ["edges.sample_belongs_to_subject", "S04 -> P2", "twice"],
        id="same-edge-twice",
    ),
    pytest.param(
        _repeat_edge("subject_related_to", 0, reverse=True),
        ["edges.subject_related_to", "between P2 and P1", "twice"],
        id="undirected-edge-both-ways",
    ),
    pytest.param(
        _repeat_edge("subject_related_to", 1, weight=0.4),
        ["edges.subject_related_to", "between P5 and P6", "twice"],
        id="same-pair-another-weight",
    ),
]


@pytest.mark.parametrize(("edit", "fragments"), REPEATED_EDGE_CASES)
def test_graph_file_that_repeats_an_edge(tmp_path, out_dir, capsys, graph_doc, edit, fragments):
    path = _write_document(tmp_path / "graph.json", graph_doc, edit, redigest=False)
    with fails_with("duplicate_id", FILE, *fragments, file=path):
        read_graph(path)
    target = out_dir / "spec.json"
    cli_fails(capsys, tmp_path, ["derive", path, "--mode", "subject", "-o", target], "duplicate_id", *fragments,
              output=target)  # fmt: skip


def _set_path(path: tuple, value: Any):
    def edit(d):
        holder = d
        for step in path[:-1]:
            holder = holder.setdefault(step, {}) if isinstance(holder, dict) else holder[step]
        holder[path[-1]] = value

    return edit


LONG_NUMBER_CASES = [  # spec edits are re-digested with exact integers, as another JSON library would
    pytest.param("spec", _set_path(("folds", "seed"), 2**70 + 1), ["integer 1180591620717411303425", "64 bits"],
                 id="seed-2^70+1"),
    pytest.param("spec", _set_path(("constraint", "parameters", "window"), 2**64), ["18446744073709551616"],
                 id="parameter-2^64"),
    pytest.param("spec", _cell("sex", 3, -(2**63) - 1), ["-9223372036854775809"], id="attribute-below-int64"),
    pytest.param("spec", _set_path(("warnings",), [{"code": "x", "severity": "warning", "message": "m",
                                                      "count": 10**30}]), ["1000000000000000000000000000000"],
                 id="warning-count-10^30"),
    pytest.param("graph", _set_path(("attributes", "Sample", "sex"), [2**65] * 12), ["36893488147419103232"],
                 id="graph-attribute-2^65"),
    pytest.param("graph", lambda d: d["edges"]["subject_related_to"]["weight"].__setitem__(0, 10**20),
                 ["100000000000000000000"], id="graph-weight-10^20"),
    pytest.param("graph", _set_path(("history", 0, "rows"), 2**64 + 12), ["18446744073709551628"],
                 id="graph-history-2^64+12"),
]  # fmt: skip


@pytest.mark.parametrize(("kind", "edit", "fragments"), LONG_NUMBER_CASES)
def test_integers_beyond_64_bits_are_refused_not_rounded(tmp_path, capsys, spec_doc, graph_doc, kind, edit, fragments):
    doc = spec_doc if kind == "spec" else graph_doc
    path = _write_document(tmp_path / f"{kind}.json", doc, edit, redigest=kind == "spec")
    with fails_with("parse", FILE, "holds the integer", *fragments, file=path):
        (read_spec if kind == "spec" else read_graph)(path)
    cli_fails(capsys, tmp_path, ["validate", path], "parse", FILE, "holds the integer", *fragments, file=path)


def test_integers_within_64_bits_and_long_digit_ids_read_exactly(tmp_path, spec_doc):
    spec_doc["constraint"]["parameters"]["largest"] = 2**64 - 1
    spec_doc["constraint"]["parameters"]["smallest"] = -(2**63)
    spec_doc["constraint"]["parameters"]["barcode"] = "12345678901234567890123456789"  # digits in text: no integer
    spec_doc["constraint"]["parameters"]["large_float"] = 1.2345678901234567e25
    path = _write_document(tmp_path / "spec.json", spec_doc, lambda d: None)
    parameters = read_spec(path).constraint.parameters
    assert parameters["largest"] == 2**64 - 1 and parameters["smallest"] == -(2**63)
    assert parameters["barcode"] == "12345678901234567890123456789"
    assert parameters["large_float"] == 1.2345678901234567e25


@pytest.mark.parametrize(
    ("kind", "where", "levels", "depth"),
    [
        pytest.param("spec", ("constraint", "parameters", "deep"), 40, 43, id="spec-parameters"),
        pytest.param("spec", ("folds", "balance", "deep"), 900, 903, id="spec-beyond-python-recursion"),
        pytest.param("graph", ("history", 0, "deep"), 31, 34, id="graph-history"),
    ],
)
def test_documents_nested_too_deeply(tmp_path, capsys, spec_doc, graph_doc, kind, where, levels, depth):
    doc = spec_doc if kind == "spec" else graph_doc
    _set_path(where, "@deep@")(doc)
    nested = "[" * levels + "1" + "]" * levels  # written as text: JSON writers stop long before 900 levels
    path = tmp_path / f"{kind}.json"
    path.write_text(json.dumps(doc).replace('"@deep@"', nested), encoding="utf-8")
    with fails_with("parse", FILE, f"{depth} levels deep", "more than 32", file=path):
        (read_spec if kind == "spec" else read_graph)(path)
    cli_fails(capsys, tmp_path, ["validate", path], "parse", f"{depth} levels deep", file=path)


# a spec field the importer leaves to SplitSpec.build: the refusal still names the file, as a fault of the file
SPLITGRAPH_BUILD_CASES = [
    pytest.param(lambda d: _rows(d, 2, order_rank=0), ["samples.order_rank", "at least 1"], id="order-rank-0"),
    pytest.param(lambda d: _rows(d, 0, order_rank=-4), ["samples.order_rank", "-4"], id="order-rank-negative"),
]


@pytest.mark.parametrize(("change", "fragments"), SPLITGRAPH_BUILD_CASES)
def test_splitgraph_spec_refused_by_build_names_the_file(tmp_path, out_dir, capsys, change, fragments):
    path = write(tmp_path / "sg_spec.json", json.dumps(_sg("spec_time.json", change)))
    with fails_with("schema", FILE, *fragments, file=path) as info:
        read_splitgraph(path)
    assert not info.value.message.startswith("spec:") and f"splitGraph file '{path}'" in info.value.message
    target = out_dir / "spec.json"
    args = ["import", "splitgraph", path, "-o", target]
    cli_fails(capsys, tmp_path, args, "schema", *fragments, output=target, file=path)


# ---- split specs made or edited in memory: nothing a reader would refuse is accepted, nothing is ignored
@pytest.fixture
def api_spec(tmp_path: Path) -> SplitSpec:
    """12 samples S01..S12 in 6 subjects, a carried attribute, 3 folds."""
    graph = _document_cohort(tmp_path)
    return assign_folds(SplitSpec.from_partition(derive(graph, "subject"), graph, attributes=["sex"]), "group-kfold",
                        n_splits=3)  # fmt: skip


def _frame(**columns: Any) -> pd.DataFrame:
    return pd.DataFrame({"sample_id": ["a", "b"], "group_id": ["g", "h"], **columns})


def _fold_split(test: Any, n_test: int = 1, n_train: int = 11) -> FoldSplit:
    return FoldSplit(repeat=0, fold=0, n_train=n_train, n_test=n_test, n_excluded=0, test=test, excluded=[])


def _roles(*tested: int) -> FoldPlan:
    role = np.zeros((1, 12), dtype=np.int8)
    role[0, list(tested)] = 1
    return FoldPlan.from_roles(role)


SUBJECT = {"constraint": Constraint(mode="subject"), "recommended_resampling": "grouped_cv"}
SPEC_MEMORY_CASES = [
    # the envelope models, built from Python values
    pytest.param(lambda s: Constraint(mode="no-such-mode"), ["Constraint: mode", "'no-such-mode' is not a mode"],
                 id="constraint-unknown-mode"),
    pytest.param(lambda s: Constraint(mode=None), ["Constraint: mode", "valid string"], id="constraint-mode-none"),
    pytest.param(lambda s: Constraint(mode="composite", strategy="greedy"), ["strategy", "'greedy'"],
                 id="constraint-unknown-strategy"),
    pytest.param(lambda s: Constraint(mode="subject", relations=["kinship"]), ["relations", "kinship"],
                 id="constraint-unknown-relation"),
    pytest.param(lambda s: Constraint(mode="composite", via=["family"]), ["via", "family"], id="constraint-via"),
    pytest.param(lambda s: Constraint(mode="subject", overrides={"allow_multi_subject_samples": "false"}),
                 ["overrides", "'false' (string)"], id="constraint-override-string"),
    pytest.param(lambda s: Constraint(mode="subject", overrides={"allow_multi_subject_samples": 1}),
                 ["overrides", "1 (number)"], id="constraint-override-number"),
    pytest.param(lambda s: Constraint(mode="subject", overrides={"allow_everything": True}),
                 ["overrides", "allow_everything"], id="constraint-unknown-override"),
    pytest.param(lambda s: Constraint(mode="subject", parameters={"threshold": float("nan")}),
                 ["parameters.threshold is nan", "null"], id="constraint-parameter-nan"),
    pytest.param(lambda s: Constraint(mode="subject", parameters={"seed": 2**70}),
                 ["parameters.seed", "beyond 64 bits"], id="constraint-parameter-2^70"),
    pytest.param(lambda s: Constraint(mode="subject", subset="yes"), ["subset", "valid boolean"],
                 id="constraint-subset-text"),
    pytest.param(lambda s: FoldSplit(repeat=0, fold=0, n_train=1, n_test=2, n_excluded=0, test=np.array([3, 2]),
                                     excluded=np.array([], dtype=np.int64)), ["FoldSplit: test", "sorted"],
                 id="foldsplit-unsorted"),
    pytest.param(lambda s: _fold_split([1.0]), ["FoldSplit: test", "integers"], id="foldsplit-float-positions"),
    pytest.param(lambda s: _fold_split([-1]), ["FoldSplit: test", "0 or more"], id="foldsplit-negative-position"),
    pytest.param(lambda s: _fold_split([1, 2]), ["n_test/n_excluded say 1/0", "2/0"], id="foldsplit-count"),
    pytest.param(lambda s: FoldSplit.of(0, 0, [12], [], 12), ["holds position 12", "12 samples"],
                 id="foldsplit-of-out-of-range"),
    pytest.param(lambda s: FoldSplit.of(0, 0, [-1], [], 12), ["0 or more", "-1"], id="foldsplit-of-minus-one"),
    pytest.param(lambda s: FoldSplit.of(0, 0, [0.5], [], 12), ["integers"], id="foldsplit-of-fraction"),
    pytest.param(lambda s: FoldSplit.of(0, 0, [True, False], [], 12), ["bool"], id="foldsplit-of-booleans"),
    pytest.param(lambda s: FoldPlan.from_roles(np.array([[5, 0, 1]])), ["role codes", "other values"],
                 id="roles-code-5"),
    pytest.param(lambda s: FoldPlan.from_roles(np.array([0, 1, 0])), ["1-d"], id="roles-one-dimensional"),
    pytest.param(lambda s: FoldPlan(scheme="x", seed=-1, splits=[]), ["seed", "greater than or equal to 0"],
                 id="plan-seed-negative"),
    pytest.param(lambda s: FoldPlan(scheme="x", balance={"spread": float("inf")}, splits=[]), ["balance.spread"],
                 id="plan-balance-infinite"),
    # build
    pytest.param(lambda s: SplitSpec.build(None, **SUBJECT), ["samples must be a DataFrame"], id="build-none"),
    pytest.param(lambda s: SplitSpec.build({"sample_id": ["a"], "group_id": ["g"]}, **SUBJECT),
                 ["samples must be a DataFrame", "dict"], id="build-dict"),
    pytest.param(lambda s: SplitSpec.build(_frame(), recommended_resampling="grouped_cv"),
                 ["constraint", "Field required"], id="build-without-constraint"),
    pytest.param(lambda s: SplitSpec.build(_frame(), **SUBJECT, owner="me"), ["owner", "Extra inputs"],
                 id="build-unknown-field"),
    pytest.param(lambda s: SplitSpec.build(_frame(order_rank=[0, 2]), **SUBJECT), ["samples.order_rank[0] is 0"],
                 id="build-order-rank-0"),
    pytest.param(lambda s: SplitSpec.build(_frame(order_rank=[1.5, 2]), **SUBJECT), ["samples.order_rank[0] is 1.5"],
                 id="build-order-rank-fraction"),
    pytest.param(lambda s: SplitSpec.build(_frame(time_index=["x", "y"]), **SUBJECT), ["samples.time_index[0]"],
                 id="build-time-index-text"),
    pytest.param(lambda s: SplitSpec.build(_frame(time_index=[0, np.inf]), **SUBJECT), ["time_index[1] is infinite"],
                 id="build-time-index-infinite"),
    pytest.param(lambda s: SplitSpec.build(_frame(batch_group=[1, 2]), **SUBJECT), ["samples.batch_group[0] is 1"],
                 id="build-block-column-numbers"),
    pytest.param(lambda s: SplitSpec.build(_frame(sex=[["F"], "M"]), **SUBJECT), ["samples.sex[0]", "lists"],
                 id="build-attribute-list"),
    pytest.param(lambda s: SplitSpec.build(_frame(**{"Sex Code": [1, 2]}), **SUBJECT), ["'Sex Code'"],
                 id="build-attribute-name"),
    pytest.param(lambda s: SplitSpec.build(_frame(x=pd.Series([2**70, 1], dtype=object)), **SUBJECT),
                 ["samples.x", "64-bit"], id="build-attribute-2^70"),
    # replace: every field checked, digest and signature not settable
    pytest.param(lambda s: s.replace(constraint={"mode": "junk"}), ["Constraint: mode", "'junk'"],
                 id="replace-constraint-mode"),
    pytest.param(lambda s: s.replace(constraint="subject"), ["constraint", "'subject'"], id="replace-constraint-text"),
    pytest.param(lambda s: s.replace(recommended_resampling="random_cv"), ["recommended_resampling"],
                 id="replace-resampling"),
    pytest.param(lambda s: s.replace(format_version="9.0.0"), ["format_version", "9.0.0"], id="replace-version"),
    pytest.param(lambda s: s.replace(graph_name=5), ["graph_name", "valid string"], id="replace-graph-name-number"),
    pytest.param(lambda s: s.replace(summary=Summary(n_samples=3, n_groups=1, largest_group="x",
                                                     largest_group_size=3, singletons=0)),
                 ["summary.n_samples says 3", "12"], id="replace-summary"),
    pytest.param(lambda s: s.replace(warnings=[SpecWarning(code="Bad Code", message="m")]), ["warnings", "Bad Code"],
                 id="replace-warning-code"),
    pytest.param(lambda s: s.replace(warnings=["just text"]), ["warnings.0", "SpecWarning"], id="replace-warning-text"),
    pytest.param(lambda s: s.replace(created_at="yesterday"), ["created_at", "yesterday"], id="replace-created-at"),
    pytest.param(lambda s: s.replace(folds=_roles(0)), ["on both sides", "a group stays whole"],
                 id="replace-folds-cutting-a-group"),
    pytest.param(lambda s: s.replace(folds="3-fold"), ["folds must be a FoldPlan"], id="replace-folds-text"),
    pytest.param(lambda s: s.replace(samples=s.samples.iloc[:4]), ["folds.splits", "holds position", "4 samples"],
                 id="replace-samples-under-folds"),
    pytest.param(lambda s: s.replace(digest="sha256:" + "0" * 64), ["digest cannot be set"], id="replace-digest"),
    pytest.param(lambda s: s.replace(signature=None), ["signature cannot be set", ".signed(key)"],
                 id="replace-signature"),
    pytest.param(lambda s: s.replace(owner="me"), ["owner", "not fields"], id="replace-unknown-field"),
    pytest.param(lambda s: s.replace(pseudonymization=Pseudonymization(key_fingerprint="0" * 16)),
                 ["'S01', not a pseudonym"], id="replace-pseudonymization-of-raw-ids"),
    pytest.param(lambda s: s.with_folds("3-fold"), ["folds must be a FoldPlan"], id="with-folds-text"),
    pytest.param(lambda s: s.with_folds(_roles(0, 1)), ["on both sides"], id="with-folds-cutting-a-group"),
    pytest.param(lambda s: s.with_folds(FoldPlan(scheme="x", splits=[_fold_split([0, 1, 2], 3, 8)])),
                 ["folds.splits[0]", "n_train/n_test/n_excluded say 8/3/0", "9/3/0"], id="with-folds-miscounted"),
    # signing keys follow the pseudonymisation key rules; keys are text or bytes
    pytest.param(lambda s: s.signed(""), ["signing key is too weak"], id="sign-empty-key"),
    pytest.param(lambda s: s.signed("a" * 64), ["signing key is too weak"], id="sign-repeated-key"),
    pytest.param(lambda s: s.signed(5), ["signing key must be text or bytes", "int"], id="sign-int-key"),
    pytest.param(lambda s: s.signed(None), ["signing key must be text or bytes"], id="sign-no-key"),
    pytest.param(lambda s: s.signed(STRONG_KEY).verify_signature(["k"]), ["verifying key must be text or bytes"],
                 id="verify-list-key"),
    # writing and reading
    pytest.param(lambda s: write_spec(s.samples, "spec.json"), ["the spec must be a SplitSpec", "DataFrame"],
                 id="write-spec-of-a-frame"),
    pytest.param(lambda s: write_spec(s, None), ["output must be a path", "None"], id="write-spec-to-none"),
    pytest.param(lambda s: write_spec(s, 1), ["output must be a path", "1 (int)"], id="write-spec-to-an-fd"),
    pytest.param(lambda s: read_spec(None), ["spec file must be a path"], id="read-spec-none"),
]  # fmt: skip


@pytest.mark.parametrize(("call", "fragments"), SPEC_MEMORY_CASES)
def test_specs_made_in_memory_are_checked_as_files_are(api_spec, call, fragments):
    with fails_with("invalid_argument", *fragments):
        call(api_spec)


def test_a_spec_replaced_in_memory_is_one_the_reader_reads_back(tmp_path, api_spec):
    signed = api_spec.signed(STRONG_KEY)
    renamed = signed.replace(graph_name="cohort A", created_at="2026-01-02T03:04:05+00:00")
    assert renamed.signature is None and renamed.digest != api_spec.digest  # graph_name is digested
    dated = signed.replace(created_at="2026-01-02T03:04:05+00:00")
    assert dated.signature == signed.signature and dated.digest == signed.digest  # created_at is not
    fewer = api_spec.replace(samples=api_spec.samples.iloc[::-1], folds=None)  # rows put back in sample-id order
    assert fewer.sample_ids.tolist() == api_spec.sample_ids.tolist() and fewer.folds is None
    for spec in (renamed, dated, fewer):
        write_spec(spec, tmp_path / "spec.json")
        again = read_spec(tmp_path / "spec.json")
        assert again.digest == spec.digest and again.graph_name == spec.graph_name
    assert read_spec(tmp_path / "spec.json").summary == api_spec.summary


def test_the_reader_refuses_what_the_models_refuse(tmp_path, spec_doc):
    spec_doc["constraint"]["overrides"] = {"allow_multi_subject_samples": "false"}
    path = _write_document(tmp_path / "spec.json", spec_doc, lambda d: None)
    with fails_with("schema", FILE, "constraint/overrides/allow_multi_subject_samples", file=path):
        read_spec(path)


# ---- every public call, given the wrong kind of argument: a coded refusal that names it, never a TypeError
@pytest.fixture
def api(tmp_path: Path) -> dict[str, Any]:
    graph = _document_cohort(tmp_path)
    spec = SplitSpec.from_partition(derive(graph, "subject"), graph, attributes=["sex"])
    ids = spec.sample_ids.tolist()
    return {"graph": graph, "spec": spec, "folded": assign_folds(spec, "group-kfold", n_splits=3), "ids": ids}


def _pairs(**columns: Any) -> pd.DataFrame:
    return pd.DataFrame(columns)


KIN = {"id1": ["P1"], "id2": ["P2"], "kinship": [0.3]}
XY = {"sample_id": ["S01", "S02"], "x": [0.0, 1.0], "y": [0.0, 0.0]}
FEATURES = np.random.default_rng(7).normal(size=(12, 4))
API_CASES = [
    # building and combining graphs
    ("from_metadata(columns='patient')", lambda a: from_metadata(pd.DataFrame({"sample_id": ["S1"]}),
     columns="patient"), "invalid_argument", ["columns= maps canonical names"]),
    ("from_metadata(name=123)", lambda a: from_metadata(pd.DataFrame({"sample_id": ["S1"]}), name=123),
     "invalid_argument", ["graph name", "123 (int)"]),
    ("from_metadata(lone surrogate)", lambda a: from_metadata(pd.DataFrame({"sample_id": pd.Series(["S\ud800", "S2"],
     dtype=object)})), "schema", ["'sample_id'", "not valid Unicode", "row 1"]),
    ("add_kinship(threshold=None)", lambda a: add_kinship(a["graph"], _pairs(**KIN), None), "invalid_argument",
     ["kinship threshold must be a number", "None"]),
    ("add_kinship(threshold=True)", lambda a: add_kinship(a["graph"], _pairs(**KIN), True), "invalid_argument",
     ["kinship threshold", "True"]),
    ("add_kinship(bogus option)", lambda a: add_kinship(a["graph"], _pairs(**KIN), 0.1, bogus=1), "invalid_argument",
     ["bogus", "not an option", "id_template"]),
    ("add_kinship(matrix ids='P1')", lambda a: add_kinship(a["graph"], np.eye(2), 0.1, ids="P1"), "invalid_argument",
     ["ids=", "not one string"]),
    ("add_spatial(radius='1')", lambda a: add_spatial(a["graph"], _pairs(**XY), "1"), "invalid_argument",
     ["radius must be a number", "'1'"]),
    ("add_spatial(radius=True)", lambda a: add_spatial(a["graph"], _pairs(**XY), True), "invalid_argument",
     ["radius must be a number", "True"]),
    ("add_spatial(p='x')", lambda a: add_spatial(a["graph"], _pairs(**XY), 1.0, p="x"), "invalid_argument",
     ["p must be a number"]),
    ("add_relations(relation=[...])", lambda a: add_relations(a["graph"], _pairs(source=["S01"], target=["S02"]),
     ["sample_duplicate_of"]), "invalid_argument", ["unknown relation"]),
    ("graph.keys('Nope')", lambda a: a["graph"].keys("Nope"), "invalid_argument", ["'Nope' is not a node type"]),
    ("graph.count(None)", lambda a: a["graph"].count(None), "invalid_argument", ["None is not a node type"]),
    ("graph.locate(type, 5)", lambda a: a["graph"].locate("Sample", 5), "invalid_argument", ["list or array of keys"]),
    ("from_tables(edges=None)", lambda a: StudyGraph.from_tables(a["graph"].nodes, a["graph"].attributes, None),
     "invalid_argument", ["edges must be a DataFrame"]),
    ("from_tables(no weight column)", lambda a: StudyGraph.from_tables(a["graph"].nodes, a["graph"].attributes,
     a["graph"].edges.drop(columns=["weight"])), "invalid_argument", ["edges lacks", "weight"]),
    ("from_tables(unknown relation)", lambda a: StudyGraph.from_tables(a["graph"].nodes, a["graph"].attributes,
     a["graph"].edges.assign(relation="knows")), "invalid_argument", ["knows is not a relation"]),
    ("from_tables(unknown node type)", lambda a: StudyGraph.from_tables(a["graph"].nodes.assign(type="Gene"),
     a["graph"].attributes, a["graph"].edges), "invalid_argument", ["Gene is not a node type"]),
    ("from_tables(fractional positions)", lambda a: StudyGraph.from_tables(a["graph"].nodes, a["graph"].attributes,
     a["graph"].edges.assign(dst=1.5)), "invalid_argument", ["edges.dst", "float64"]),
    ("from_tables(attributes misaligned)", lambda a: StudyGraph.from_tables(a["graph"].nodes,
     a["graph"].attributes.iloc[:3], a["graph"].edges), "invalid_argument", ["attributes has 3 rows"]),
    ("from_tables(overrides 'false')", lambda a: StudyGraph.from_tables(a["graph"].nodes, a["graph"].attributes,
     a["graph"].edges, overrides={"allow_multi_subject_samples": "false"}), "invalid_value", ["'false' (string)"]),
    ("from_tables(unknown override)", lambda a: StudyGraph.from_tables(a["graph"].nodes, a["graph"].attributes,
     a["graph"].edges, overrides={"allow_everything": True}), "invalid_argument", ["unknown override", "allow_every"]),
    ("from_tables(history of text)", lambda a: StudyGraph.from_tables(a["graph"].nodes, a["graph"].attributes,
     a["graph"].edges, history=["built by hand"]), "invalid_argument", ["history[0] must be a Mapping"]),
    ("from_tables(history NaN)", lambda a: StudyGraph.from_tables(a["graph"].nodes, a["graph"].attributes,
     a["graph"].edges, history=[{"step": "x", "radius": float("nan")}]), "invalid_argument", ["history[0].radius"]),
    ("combine(graph, DataFrame)", lambda a: combine(a["graph"], pd.DataFrame({"a": [1, 2]})), "invalid_argument",
     ["combine: graph 2 must be a StudyGraph", "(DataFrame)"]),
    ("combine(name=5)", lambda a: combine(a["graph"], a["graph"], name=5), "invalid_argument", ["graph name"]),
    ("write_graph(spec)", lambda a: write_graph(a["spec"], "graph.json"), "invalid_argument",
     ["write_graph: the graph must be a StudyGraph", "SplitSpec"]),
    ("write_graph(path=5)", lambda a: write_graph(a["graph"], 5), "invalid_argument", ["output must be a path"]),
    ("read_graph(None)", lambda a: read_graph(None), "invalid_argument", ["graph file must be a path"]),
    # validation and derivation
    ("validate(spec)", lambda a: validate(a["spec"]), "invalid_argument", ["validate: the graph must be a StudyGraph"]),
    ("validate(levels='structural')", lambda a: validate(a["graph"], levels="structural"), "invalid_argument",
     ["levels takes a list of names"]),
    ("validate(n_splits=2.5)", lambda a: validate(a["graph"], n_splits=2.5), "invalid_argument", ["n_splits", "2.5"]),
    ("derive(None)", lambda a: derive(None, "subject"), "invalid_argument", ["derive: the graph must be"]),
    ("derive(allow_unlinked='no')", lambda a: derive(a["graph"], "spatial", allow_unlinked="no"), "invalid_argument",
     ["allow_unlinked must be True or False", "'no'"]),
    ("derive(allow_single_group=1)", lambda a: derive(a["graph"], "composite", allow_single_group=1),
     "invalid_argument", ["allow_single_group must be True or False"]),
    ("derive(min_groups=True)", lambda a: derive(a["graph"], "subject", min_groups=True), "invalid_argument",
     ["min_groups", "True (bool)"]),
    ("derive(via='subject')", lambda a: derive(a["graph"], "composite", via="subject"), "invalid_argument",
     ["via takes a list of names", "['subject']"]),
    ("derive(samples=5)", lambda a: derive(a["graph"], "subject", samples=5), "invalid_argument", ["samples= takes"]),
    ("derive(samples={...: ...})", lambda a: derive(a["graph"], "subject", samples={"S01": 1}), "invalid_argument",
     ["samples= takes", "dict"]),
    ("derive(samples=[None])", lambda a: derive(a["graph"], "subject", samples=["S01", None]), "missing_id",
     ["samples= holds a missing", "position 1"]),
    # folds
    ("assign_folds(None)", lambda a: assign_folds(None, "group-kfold"), "invalid_argument",
     ["assign_folds: the spec must be a SplitSpec"]),
    ("assign_folds(graph)", lambda a: assign_folds(a["graph"], "group-kfold"), "invalid_argument", ["StudyGraph"]),
    ("assign_folds(scheme=None)", lambda a: assign_folds(a["spec"], None), "invalid_argument",
     ["scheme must be a scheme name"]),
    ("n_repeats=True", lambda a: assign_folds(a["spec"], "group-kfold", n_splits=2, n_repeats=True), "invalid_argument",
     ["n_repeats must be an integer from 1 to 10000", "True"]),
    ("GroupedKFold(n_splits=True)", lambda a: assign_folds(a["spec"], GroupedKFold(n_splits=True)), "invalid_argument",
     ["n_splits must be an integer", "True"]),
    ("stratify=['sex']", lambda a: assign_folds(a["spec"], "stratified-group-kfold", n_splits=2, stratify=["sex"]),
     "invalid_argument", ["stratify takes one column name"]),
    ("logo by=None", lambda a: assign_folds(a["spec"], "logo", by=None), "invalid_argument", ["takes one column name"]),
    ("hash salt=b'x'", lambda a: HashFolds(n_splits=2, salt=b"x"), "invalid_argument", ["salt must be text", "bytes"]),
    ("hash salt=None", lambda a: assign_folds(a["spec"], "hash", n_splits=2, salt=None), "invalid_argument",
     ["salt must be text"]),
    ("balance='sex'", lambda a: assign_folds(a["spec"], "balanced-holdout", balance="sex"), "invalid_argument",
     ["balance takes a list of names", "['sex']"]),
    ("balanced prior='spec.json'", lambda a: BalancedHoldout(balance=("sex",), prior="spec.json"),
     "invalid_argument", ["prior must be a SplitSpec"]),
    ("holdout test_fraction=True", lambda a: assign_folds(a["spec"], "holdout", test_fraction=True),
     "invalid_argument", ["test fraction", "True"]),
    # exposure, audit, pseudonyms
    ("exposure(spec, graph)", lambda a: exposure(a["folded"], a["graph"]), "invalid_argument",
     ["exposure: the graph must be a StudyGraph"]),
    ("exposure(graph, None)", lambda a: exposure(a["graph"], None), "invalid_argument",
     ["exposure: the spec must be a SplitSpec or Partition"]),
    ("exposure(examples=-1)", lambda a: exposure(a["graph"], a["folded"], examples=-1), "invalid_argument",
     ["examples"]),
    ("assignment only train", lambda a: exposure(a["graph"], a["spec"], pd.DataFrame({"sample_id": a["ids"],
     "set": ["train"] * 12})), "invalid_value", ["'set' column marks no sample 'test'"]),
    ("assignment only test", lambda a: assignment_roles(a["spec"], pd.DataFrame({"sample_id": a["ids"][:3],
     "set": ["TEST"] * 3})), "invalid_value", ["marks no sample 'train'"]),
    ("assignment one fold", lambda a: assignment_roles(a["spec"], pd.DataFrame({"sample_id": a["ids"],
     "fold": [1] * 12})), "invalid_value", ["holds one fold", "no sample to train on"]),
    ("straddling(id_column=None)", lambda a: straddling_groups(a["spec"], pd.DataFrame({"sample_id": ["S01"],
     "fold": [0]}), id_column=None), "invalid_argument", ["id_column takes one column name"]),
    ("straddling(graph)", lambda a: straddling_groups(a["graph"], pd.DataFrame({"sample_id": ["S01"], "fold": [0]})),
     "invalid_argument", ["the spec must be a SplitSpec"]),
    ("audit(sparse)", lambda a: audit_duplicates(__import__("scipy.sparse", fromlist=["csr_matrix"]).csr_matrix(
     FEATURES), ids=a["ids"]), "invalid_argument", ["sparse matrix", ".toarray()"]),
    ("audit(text features)", lambda a: audit_duplicates(np.full((12, 2), "a", dtype=object), ids=a["ids"]),
     "invalid_value", ["features must be numbers"]),
    ("audit(ids='S01')", lambda a: audit_duplicates(FEATURES, ids="S01"), "invalid_argument", ["not one string"]),
    ("audit(ids with None)", lambda a: audit_duplicates(FEATURES, ids=[*a["ids"][:11], None]), "missing_id",
     ["row 12"]),
    ("audit(threshold=True)", lambda a: audit_duplicates(FEATURES, ids=a["ids"], threshold=True), "invalid_argument",
     ["threshold", "True"]),
    ("audit(bits='16')", lambda a: audit_duplicates(FEATURES, ids=a["ids"], method="lsh", bits="16"),
     "invalid_argument", ["1-62 bits"]),
    ("audit(seed=-1)", lambda a: audit_duplicates(FEATURES, ids=a["ids"], seed=-1), "invalid_argument", ["seed"]),
    ("pseudonymize(None)", lambda a: pseudonymize(None, STRONG_KEY), "invalid_argument", ["the spec must be"]),
    ("pseudonymize(key=None)", lambda a: pseudonymize(a["spec"], None), "invalid_argument",
     ["key must be text or bytes"]),
    ("pseudonymize twice", lambda a: pseudonymize(pseudonymize(a["spec"], STRONG_KEY), STRONG_KEY),
     "invalid_argument", ["already pseudonymised"]),
    # scikit-learn
    ("SpecCV(None)", lambda a: SpecCV(None), "invalid_argument", ["SpecCV: the spec must be a SplitSpec"]),
    ("SpecCV(repeat=9)", lambda a: SpecCV(a["folded"], repeat=9), "invalid_argument", ["no repeat 9", "repeats: 0"]),
    ("SpecCV(repeat='0')", lambda a: SpecCV(a["folded"], repeat="0"), "invalid_argument", ["no repeat '0'"]),
    ("SpecCV(ids='S01')", lambda a: SpecCV(a["folded"], ids="S01"), "invalid_argument", ["not one string"]),
    ("SpecCV.split(groups=set)", lambda a: list(SpecCV(a["folded"]).split(None, groups=set(a["ids"]))),
     "invalid_argument", ["in row order"]),
    ("SpecCV.split(groups=generator)", lambda a: list(SpecCV(a["folded"]).split(None, groups=iter(a["ids"]))),
     "invalid_argument", ["in row order"]),
    ("SpecCV.split(unknown ids)", lambda a: list(SpecCV(a["folded"]).split(None, groups=["S01", "S99"])),
     "reference", ["SpecCV: groups", "S99"]),
    ("SpecCV.split(missing id)", lambda a: list(SpecCV(a["folded"]).split(None, groups=pd.Series(["S01", None]))),
     "reference", ["(missing)"]),
    ("groups_for(spec, 'S01')", lambda a: groups_for(a["spec"], "S01"), "invalid_argument", ["not one string"]),
    ("groups_for(spec, None)", lambda a: groups_for(a["spec"], None), "invalid_argument", ["in row order"]),
    ("groups_for(spec, {ids})", lambda a: groups_for(a["spec"], {"S01", "S02"}), "invalid_argument", ["set"]),
    ("groups_for(unknown)", lambda a: groups_for(a["spec"], ["S01", "S99"]), "reference", ["S99"]),
    ("to_predefined_split('S01')", lambda a: to_predefined_split(a["folded"], "S01"), "invalid_argument",
     ["not one string"]),
    ("to_predefined_split(repeat=1)", lambda a: to_predefined_split(a["folded"], a["ids"], repeat=1),
     "invalid_argument", ["no repeat 1"]),
    # PyTorch
    ("FoldSampler(shuffle='no')", lambda a: FoldSampler(a["folded"], ids=a["ids"], shuffle="no"), "invalid_argument",
     ["shuffle must be True or False"]),
    ("FoldSampler(in_spec_order='yes')", lambda a: FoldSampler(a["folded"], in_spec_order="yes", dataset=range(12)),
     "invalid_argument", ["in_spec_order must be True or False"]),
    ("FoldSampler(ids=generator)", lambda a: FoldSampler(a["folded"], ids=iter(a["ids"])), "invalid_argument",
     ["in row order"]),
    ("FoldSampler(unknown ids)", lambda a: FoldSampler(a["folded"], ids=[*a["ids"][:11], "S99"]), "reference",
     ["dataset rows", "S99"]),
    ("FoldSampler(spec=None)", lambda a: FoldSampler(None, ids=a["ids"]), "invalid_argument",
     ["FoldSampler: the spec must be a SplitSpec"]),
    ("GroupBatchSampler(batch_size=2.5)", lambda a: GroupBatchSampler(a["folded"], 2.5, ids=a["ids"]),
     "invalid_argument", ["batch_size", "2.5 (float)"]),
    ("GroupBatchSampler(batch_size=True)", lambda a: GroupBatchSampler(a["folded"], True, ids=a["ids"]),
     "invalid_argument", ["batch_size", "True (bool)"]),
    ("GroupBatchSampler(batch_size='4')", lambda a: GroupBatchSampler(a["folded"], "4", ids=a["ids"]),
     "invalid_argument", ["batch_size", "'4' (str)"]),
    ("GroupBatchSampler(max_per_group=0.5)", lambda a: GroupBatchSampler(a["folded"], 4, ids=a["ids"],
     max_per_group=0.5), "invalid_argument", ["max_per_group"]),
    ("GroupDistributedSampler(rank=1.0)", lambda a: GroupDistributedSampler(a["folded"], 2, 1.0, ids=a["ids"]),
     "invalid_argument", ["rank must be an integer from 0 to 1", "1.0"]),
    ("GroupDistributedSampler(num_replicas='2')", lambda a: GroupDistributedSampler(a["folded"], "2", 0,
     ids=a["ids"]), "invalid_argument", ["num_replicas"]),
    ("GroupDistributedSampler(pad='yes')", lambda a: GroupDistributedSampler(a["folded"], 2, 0, pad="yes",
     ids=a["ids"]), "invalid_argument", ["pad must be True or False"]),
    ("GroupDistributedSampler(more ranks than groups)", lambda a: GroupDistributedSampler(a["folded"], 5, 0,
     ids=a["ids"]), "too_few_groups", ["group(s) for 5 replicas", "no sample"]),
    # tables and splitGraph
    ("samples_table(None)", lambda a: samples_table(None), "invalid_argument", ["samples_table: the spec"]),
    ("fold_table(graph)", lambda a: fold_table(a["graph"]), "invalid_argument", ["fold_table: the spec"]),
    ("write_table(list)", lambda a: write_table([1, 2], "t.csv"), "invalid_argument", ["write_table: the table"]),
    ("write_table(excel_safe='yes')", lambda a: write_table(samples_table(a["spec"]), "t.csv", excel_safe="yes"),
     "invalid_argument", ["excel_safe must be True or False"]),
    ("spec_to_splitgraph(None)", lambda a: spec_to_splitgraph(None), "invalid_argument", ["the spec must be"]),
    ("graph_to_splitgraph(spec)", lambda a: graph_to_splitgraph(a["spec"]), "invalid_argument", ["the graph must be"]),
]  # fmt: skip


@pytest.mark.parametrize(
    ("call", "code", "fragments"), [pytest.param(*c[1:], id=c[0], marks=_needs_torch(c[0])) for c in API_CASES]
)
def test_api_calls_with_wrong_arguments(tmp_path, monkeypatch, api, call, code, fragments):
    monkeypatch.chdir(tmp_path)  # a call that wrongly wrote would write here
    before = _tree(tmp_path)
    with fails_with(code, *fragments):
        call(api)
    assert _tree(tmp_path) == before


# ---- ids that look alike, and the character that joins outcomes into a stratum
UNICODE_TWIN_CASES = [
    pytest.param("sample_id,subject_id\nS1,Jos\u00e9\nS2,Jose\u0301\nS3,P3\n",
                 ["subject_id values 'Jos\\xe9' (row 1) and 'Jose\\u0301' (row 2)", "Unicode normalisation"],
                 id="composed-and-decomposed-subject"),
    pytest.param("sample_id,subject_id\n\u00c51,P1\nA\u030a1,P2\n", ["sample_id values", "'\\xc51'", "'A\\u030a1'"],
                 id="composed-and-decomposed-sample"),
    pytest.param("sample_id,batch_id\nS1,K7\nS2,\u212a7\n", ["batch_id values 'K7' (row 1) and '\\u212a7' (row 2)"],
                 id="kelvin-sign-and-k"),
]  # fmt: skip


@pytest.mark.parametrize(("text", "fragments"), UNICODE_TWIN_CASES)
def test_ids_that_differ_only_in_unicode_normalisation(tmp_path, out_dir, capsys, text, fragments):
    path = write(tmp_path / "cohort.csv", text)
    with fails_with("ambiguity", *fragments, file=path):
        from_metadata(path)
    target = out_dir / "graph.json"
    cli_fails(capsys, tmp_path, ["build", path, "-o", target], "ambiguity", *fragments, output=target, file=path)


def test_distinct_accented_ids_are_kept(tmp_path):
    graph = from_metadata(
        write(tmp_path / "cohort.csv", "sample_id,subject_id\n\u00e91,Jos\u00e9\ne\u03012,Jos\u00e9\n")
    )
    assert sorted(graph.sample_ids.tolist()) == sorted(["\u00e91", "e\u03012"]) and graph.count("Subject") == 1


def test_a_spec_built_with_look_alike_group_ids(api_spec):
    frame = pd.DataFrame({"sample_id": ["a", "b"], "group_id": ["Jos\u00e9", "Jose\u0301"]})
    with fails_with("ambiguity", "samples.group_id values", "Unicode normalisation"):
        SplitSpec.build(frame, **SUBJECT)


def test_outcome_ids_holding_the_stratum_join_character(tmp_path, out_dir, capsys):
    # S1 has outcomes a and b (stratum "a|b"); S2's one outcome is "a|b": two different facts, one stratum
    meta = write(tmp_path / "cohort.csv", "sample_id,subject_id,outcome_id\nS1,P1,a\nS1,P1,b\nS2,P2,a|b\nS3,P3,a\n")
    graph = from_metadata(meta)
    fragments = ["outcome id 'a|b' holds '|'", "sample 'S1' has several", "rename the outcome"]
    with fails_with("ambiguity", *fragments):
        SplitSpec.from_partition(derive(graph, "subject"), graph)
    graph_file = tmp_path / "graph.json"
    write_graph(graph, graph_file)
    target = out_dir / "spec.json"
    cli_fails(capsys, tmp_path, ["derive", graph_file, "--mode", "subject", "-o", target], "ambiguity", *fragments,
              output=target)  # fmt: skip
    alone = from_metadata(write(tmp_path / "single.csv", "sample_id,subject_id,outcome_id\nS1,P1,a|b\nS2,P2,a\n"))
    spec = SplitSpec.from_partition(derive(alone, "subject"), alone)  # no sample joins outcomes: 'a|b' is one
    assert spec.samples["stratum"].tolist() == ["a|b", "a"]


def _empty_plan(d):
    d["folds"]["splits"] = []


API_MORE_CASES = [
    ("from_partition(None, graph)", lambda a: SplitSpec.from_partition(None, a["graph"]), "invalid_argument",
     ["the partition must be a Partition"]),
    ("from_partition(partition, other graph)", lambda a: SplitSpec.from_partition(derive(a["graph"], "subject"),
     from_metadata(pd.DataFrame({"sample_id": ["Z1", "Z2"], "subject_id": ["Q", "Q"]}))), "reference",
     ["the partition holds 12 sample(s) the graph lacks", "S01", "the graph it was derived from"]),
    ("from_partition(attributes='sex')", lambda a: SplitSpec.from_partition(derive(a["graph"], "subject"), a["graph"],
     attributes="sex"), "invalid_argument", ["attributes takes a list of names", "['sex']"]),
    ("FoldPlan.from_roles(folds_per_repeat='2')", lambda a: FoldPlan.from_roles(np.eye(2, 12, dtype=np.int8),
     folds_per_repeat="2"), "invalid_argument", ["folds_per_repeat"]),
    ("with_folds(plan without splits)", lambda a: a["spec"].with_folds(FoldPlan(scheme="custom", splits=[])),
     "invalid_argument", ["holds no split"]),
    ("render_html(None)", lambda a: render_html(None), "invalid_argument", ["the report's spec must be a SplitSpec"]),
    ("render_html(title=5)", lambda a: render_html(a["folded"], title=5), "invalid_argument", ["title"]),
    ("compare_specs(spec, graph)", lambda a: depgraph.spec.diff.compare_specs(a["spec"], a["graph"]),
     "invalid_argument", ["the second spec must be a SplitSpec"]),
    ("recommended_resampling('family')", lambda a: depgraph.vocab.recommended_resampling("family"),
     "invalid_argument", ["unknown mode 'family'"]),
    ("validate(modes=['family'])", lambda a: validate(a["graph"], modes=["family"]), "invalid_argument",
     ["modes family are not modes"]),
]  # fmt: skip


@pytest.mark.parametrize(("call", "code", "fragments"), [pytest.param(*c[1:], id=c[0]) for c in API_MORE_CASES])
def test_more_api_calls_with_wrong_arguments(api, call, code, fragments):
    with fails_with(code, *fragments):
        call(api)


def test_a_spec_file_whose_fold_plan_has_no_split(tmp_path, capsys, spec_doc):
    path = _write_document(tmp_path / "spec.json", spec_doc, _empty_plan)
    with fails_with("integrity", FILE, "folds holds no split", file=path):
        read_spec(path)
    cli_fails(capsys, tmp_path, ["validate", path], "integrity", "holds no split")


def test_a_spec_file_listing_one_split_twice(tmp_path, capsys, spec_doc):
    """A plan whose splits name one repeat and fold twice contradicts itself (a consumer would count that split
    twice), even with its digest recomputed."""

    def doubled(d):
        d["folds"]["splits"].append(dict(d["folds"]["splits"][0]))

    path = _write_document(tmp_path / "spec.json", spec_doc, doubled)
    with fails_with("integrity", FILE, "is repeat 0, fold 0 again (as splits[0])", file=path):
        read_spec(path)
    cli_fails(capsys, tmp_path, ["validate", path], "integrity", "fold 0 again")


# ------------------------------------------------------------------- tables as people export them (issue 11)
# Tables come with any of the delimiters , ; tab |, with or without a byte-order mark, in another encoding when
# named, or as Excel workbooks. The strict reader's refusals hold on every one of these paths, and each new
# option (--encoding, --sheet) refuses what it cannot mean.
def _workbook(path: Path, sheets: dict[str, list[list[Any]]]) -> Path:
    import openpyxl

    book = openpyxl.Workbook()
    book.remove(book.active)
    for name, rows in sheets.items():
        sheet = book.create_sheet(name)
        for row in rows:
            sheet.append(row)
    book.save(path)
    return path


EXPORTED_TABLE_CASES = [
    pytest.param(b"sample_id;subject_id\nS1;P1\nS2;P2;X\n", "cohort.csv", [], "parse",
                 [FILE, "line 3 has 3 field(s)", "header has 2"], id="semicolon-ragged-row"),
    pytest.param(b"sample_id|subject_id|subject_id\nS1|P1|P2\n", "cohort.csv", [], "schema",
                 [FILE, "subject_id more than once"], id="pipe-repeated-column"),
    pytest.param(b"sample_id; subject_id ;subject_id\nS1;P1;P2\n", "cohort.txt", [], "schema",
                 [FILE, "subject_id more than once"], id="semicolon-repeated-after-stripping"),
    pytest.param(b"sample_id\t\tsubject_id\nS1\tx\tP1\n", "cohort.csv", [], "schema",
                 [FILE, "column 2 has no name", "row 1"], id="tab-in-csv-nameless-column-with-values"),
    pytest.param(b"\xef\xbb\xbfsample_id,subject_id\nS1,P1\nS2\n", "cohort.csv", [], "parse",
                 [FILE, "line 3 has 1 field(s)"], id="bom-ragged-row"),
    pytest.param(b"\xef\xbb\xbfsample_id|sample_id\nS1|S2\n", "cohort.csv", [], "schema",
                 [FILE, "sample_id more than once"], id="bom-repeated-column"),
    pytest.param(b"sample_id,subject_id\nS1,P1\n,,\nS2,P1\n", "cohort.csv", [], "parse",
                 [FILE, "line 3 has 3 field(s)"], id="row-of-nothing-with-too-many-fields-between-rows"),
    pytest.param(b"sample_id,subject_id\nS1,P1\n,\nS2,P1\n", "cohort.csv", [], "missing_id",
                 [FILE, "row 2"], id="row-of-nothing-between-rows"),
    pytest.param(b"sample_id,subject_id\nS1;P1\nS2;P2\n", "cohort.csv", [], "parse",
                 [FILE, "lines 2, 3", "header's 2 fields"], id="comma-header-semicolon-rows"),
    pytest.param(b"sample_id;subject_id;timepoint_id;time_index\nS1;P1;T0;0,5\nS2;P1;T1;1.5\n", "cohort.csv", [],
                 "ambiguity", [FILE, "time_index mixes decimal commas", "row 1: '0,5'", "row 2: '1.5'"],
                 id="semicolon-time_index-mixing-decimal-commas-and-points"),
    pytest.param(b"sample_id;subject_id\nS1;P1\nS2;J\xf6rg\n", "cohort.csv", [], "parse",
                 [FILE, "not UTF-8", "line 3", "0xf6", "--encoding latin-1"], id="latin-1-without-encoding"),
    pytest.param(b"sample_id,subject_id\nS1,J\xf6rg\nS2\n", "cohort.csv", ["--encoding", "latin-1"], "parse",
                 [FILE, "line 3 has 1 field(s)"], id="latin-1-ragged-row"),
    pytest.param(b"sample_id,subject_id\nS1,J\xf6rg\nS2,P\x001\n", "cohort.csv", ["--encoding", "latin-1"], "parse",
                 [FILE, "NUL byte at line 3"], id="latin-1-NUL-byte"),
    pytest.param(b"sample_id,subject_id\nS1,P1\nS2,J\xf6rg\n", "cohort.csv", ["--encoding", "ascii"], "parse",
                 [FILE, "not ascii text", "line 3", "0xf6"], id="byte-the-encoding-does-not-define"),
    pytest.param(b"sample_id,subject_id\nS1,P\x811\n", "cohort.csv", ["--encoding", "cp1252"], "parse",
                 [FILE, "not cp1252 text", "line 2", "0x81"], id="cp1252-undefined-byte"),
    pytest.param(b"\xef\xbb\xbfsample_id,subject_id\nS1,P1\n", "cohort.csv", ["--encoding", "latin-1"], "parse",
                 [FILE, "UTF-8 byte-order mark", "not latin-1", "without an encoding"], id="bom-read-as-latin-1"),
    pytest.param("sample_id,subject_id\nS1,P1\n".encode("utf-16-le"), "cohort.csv", [], "parse",
                 [FILE, "NUL byte at line 1", "UTF-16 text without a byte-order mark", "--encoding utf-16-le"],
                 id="utf-16-without-bom"),
    pytest.param(b"sample_id,subject_id\nS1,P1\n", "cohort.csv", ["--encoding", "utf-16"], "parse",
                 [FILE, "not utf-16 text"], id="utf-8-read-as-utf-16"),
    pytest.param(b"sample_id,subject_id\nS1,P1\n", "cohort.csv", ["--encoding", "klingon"], "invalid_argument",
                 ["unknown encoding 'klingon'", "latin-1"], id="unknown-encoding"),
    pytest.param(b"sample_id,subject_id\nS1,P1\n", "cohort.csv", ["--encoding", "hex"], "invalid_argument",
                 ["'hex' is not a text encoding"], id="bytes-codec-as-encoding"),
    pytest.param(b"sample_id,subject_id\nS1,P1\n", "cohort.csv", ["--encoding", " "], "invalid_argument",
                 ["encoding must be a codec name"], id="blank-encoding"),
    pytest.param(b"sample_id,subject_id\nS1,P1\n", "cohort.csv", ["--sheet", "2"], "invalid_argument",
                 [FILE, "applies to Excel workbooks", "is not one"], id="sheet-of-a-csv"),
    pytest.param(b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1\x00\x00", "cohort.xls", [], "parse",
                 [FILE, "Excel 97-2003 workbook", "save it as .xlsx or as CSV UTF-8"], id="xls-workbook"),
    pytest.param(b"PK\x03\x04not really", "cohort.ods", [], "parse",
                 [FILE, "OpenDocument spreadsheet", "save it as .xlsx"], id="ods-spreadsheet"),
    pytest.param(b"this is not a workbook", "cohort.xlsx", [], "parse",
                 [FILE, "cannot be read as an Excel workbook"], id="xlsx-that-is-not-a-workbook"),
]  # fmt: skip


@pytest.mark.parametrize(("content", "name", "extra", "code", "fragments"), EXPORTED_TABLE_CASES)
def test_exported_text_tables_keep_every_refusal(tmp_path, out_dir, capsys, content, name, extra, code, fragments):
    path = tmp_path / name
    path.write_bytes(content)
    options = dict(zip(["encoding" if o == "--encoding" else "sheet" for o in extra[::2]], extra[1::2], strict=True))
    with fails_with(code, *fragments, file=path):
        from_metadata(path, **options)
    target = out_dir / "graph.json"
    cli_fails(capsys, tmp_path, ["build", path, *extra, "-o", target], code, *fragments, output=target, file=path)


WORKBOOK_CASES = [
    pytest.param({"Samples": []}, [], "empty_input", [FILE, "sheet 'Samples' is empty"], id="empty-sheet"),
    pytest.param({"Samples": [["sample_id", "subject_id"]]}, [], "empty_input", [FILE, "no rows"], id="header-only"),
    pytest.param({"S": [["sample_id", "subject_id", "subject_id"], ["S1", "P1", "P2"]]}, [], "schema",
                 [FILE, "sheet 'S'", "subject_id more than once"], id="repeated-column"),
    pytest.param({"S": [["sample_id", None, "subject_id"], ["S1", "x", "P1"]]}, [], "schema",
                 [FILE, "sheet 'S'", "column 2 has no name but holds values", "row 1"],
                 id="nameless-column-with-values"),
    pytest.param({"S": [["sample_id", "subject_id"], ["S1", "P1"], [None, "P1"], ["S3", "P2"]]}, [], "missing_id",
                 [FILE, "row 2"], id="empty-sample_id-between-rows"),
    pytest.param({"Sheet1": [["sample_id"], ["S1"]], "Notes": [["x"]]}, ["--sheet", "Samples"], "invalid_argument",
                 [FILE, "has no sheet 'Samples'", "'Sheet1', 'Notes'"], id="sheet-name-not-in-workbook"),
    pytest.param({"Sheet1": [["sample_id"], ["S1"]]}, ["--sheet", "3"], "invalid_argument",
                 [FILE, "no sheet number 3", "from 1 to 1"], id="sheet-number-beyond-the-last"),
    pytest.param({"Sheet1": [["sample_id"], ["S1"]]}, ["--sheet", "0"], "invalid_argument",
                 [FILE, "no sheet number 0"], id="sheet-number-zero"),
    pytest.param({"S": [["sample_id", "subject_id"], ["S1", "P1"], ["S2", True], ["S3", "True"]]}, [], "schema",
                 [FILE, "subject_id holds a boolean (True) in row 2 among its ids"],
                 id="a-TRUE-cell-among-text-ids"),  # once read as the text True: S2 and S3 one subject
]  # fmt: skip


@pytest.mark.parametrize(("sheets", "extra", "code", "fragments"), WORKBOOK_CASES)
def test_workbook_refusals(tmp_path, out_dir, capsys, sheets, extra, code, fragments):
    path = _workbook(tmp_path / "cohort.xlsx", sheets)
    with fails_with(code, *fragments, file=path):
        from_metadata(path, **({"sheet": extra[1]} if extra else {}))
    target = out_dir / "graph.json"
    cli_fails(capsys, tmp_path, ["build", path, *extra, "-o", target], code, *fragments, output=target, file=path)


def test_a_workbook_without_openpyxl_names_the_extra(tmp_path, out_dir, capsys, monkeypatch):
    path = _workbook(tmp_path / "cohort.xlsx", {"Sheet1": [["sample_id", "subject_id"], ["S1", "P1"]]})
    monkeypatch.setitem(sys.modules, "openpyxl", None)  # as if it were not installed
    fragments = [FILE, "reading it needs openpyxl", "pip install 'depgraph[excel]'"]
    with fails_with("io", *fragments, file=path):
        from_metadata(path)
    target = out_dir / "graph.json"
    cli_fails(capsys, tmp_path, ["build", path, "-o", target], "io", *fragments, output=target, file=path)


def test_sheet_of_a_table_object_is_refused():
    with fails_with("invalid_argument", "sheet= applies to an Excel workbook's path"):
        from_metadata(pd.DataFrame({"sample_id": ["S1"]}), sheet=1)


KIN_THRESHOLD = ["--kinship-threshold", "0.1"]
EXPORTED_PAIR_CASES = [
    pytest.param("kinship.csv", "FID1;ID1;FID2;ID2;N_SNP;HetHet;IBS0;Kinship\nF;P1;F;P2;100;0,1;0,0;0,25\n"
                 "F;P1;F;P3;100;0,1;0,0;0.125\n", "--kinship", KIN_THRESHOLD, "ambiguity",
                 [FILE, "Kinship", "decimal commas", "line 2", "line 3"], id="king-as-semicolon-csv-mixing-decimals"),
    pytest.param("kinship.csv", b"id1,id2,kinship\nP1,J\xf6rg,0.25\n", "--kinship", KIN_THRESHOLD, "parse",
                 [FILE, "not UTF-8", "line 2", "--encoding"], id="pair-table-in-latin-1"),
    pytest.param("kinship.kin0",
                 b"#FID1\tIID1\tFID2\tIID2\tNSNP\tHETHET\tIBS0\tKINSHIP\nF\tJ\xf6rg\tF\tP2\t1\t0\t0\t0.3\n",
                 "--kinship", KIN_THRESHOLD, "parse", [FILE, "not UTF-8", "line 2", "0xf6", "--encoding"],
                 id="plink2-table-in-latin-1"),
    pytest.param("coords.csv", "sample_id;x\nS1;0,5\nS2;1.5\n", "--coords", ["--radius", "1"], "ambiguity",
                 [FILE, "x mixes decimal commas", "row 1: '0,5'", "row 2: '1.5'"], id="coordinates-mixing-decimals"),
    pytest.param("coords.tsv", "sample_id\tx\nS1\t0,5\nS2\t1\n", "--coords", ["--radius", "1"], "invalid_value",
                 [FILE, "'0,5'"], id="decimal-comma-in-a-tab-file"),
]  # fmt: skip


@pytest.mark.parametrize(("name", "content", "option", "extra", "code", "fragments"), EXPORTED_PAIR_CASES)
def test_exported_pair_tables_keep_every_refusal(tmp_path, out_dir, capsys, name, content, option, extra, code,
                                                 fragments):  # fmt: skip
    meta = write(tmp_path / "cohort.csv", META)
    path = tmp_path / name
    path.write_bytes(content if isinstance(content, bytes) else content.encode())
    target = out_dir / "graph.json"
    cli_fails(capsys, tmp_path, ["build", meta, option, path, *extra, "-o", target], code, *fragments, output=target,
              file=path)  # fmt: skip


# ---- every command reading a user's table takes --encoding: build (above), check, audit, derive --samples
#: A sample id a latin-1 export writes as the byte 0xf6 (ö), and the audit's line for it and S1 (the pair in order).
LATIN1_ID = "J\u00f6rg"
LATIN1_PAIR = " ~ ".join(sorted(["S1", LATIN1_ID]))


def _latin1_study(root: Path) -> tuple[Path, Path]:
    """A graph and its subject spec (UTF-8 JSON) whose samples include :data:`LATIN1_ID`."""
    graph = from_metadata(pd.DataFrame({"sample_id": ["S1", "S2", "S3", "S4", LATIN1_ID],
                                        "subject_id": ["P1", "P1", "P2", "P3", "P4"]}))  # fmt: skip
    write_graph(graph, root / "graph.json")
    write_spec(SplitSpec.from_partition(derive(graph, "subject"), graph), root / "spec.json")
    return root / "graph.json", root / "spec.json"


#: (file name, its text, the command with GRAPH / SPEC / FILE / OUT in it, what it writes, what it prints). Read with
#: --encoding, the file's ids are the spec's: an id decoded otherwise would be a `reference` error (exit 2).
LATIN1_TABLE_CASES = [
    pytest.param("split.csv", f"sample_id,fold\nS1,1\nS2,1\nS3,2\n{LATIN1_ID},2\nS4,1\n",
                 ["check", "SPEC", "FILE"], None, "5 samples checked", id="check-assignment"),
    pytest.param("split.tsv", f"sample_id\tset\nS1\ttrain\nS2\ttrain\nS3\ttest\n{LATIN1_ID}\ttest\n",
                 ["check", "SPEC", "FILE", "--graph", "GRAPH"], None, "4 samples checked",
                 id="check-assignment-with-exposure"),
    pytest.param("features.csv", f"sample_id,a,b\nS1,1,0\nS2,0,1\nS3,1,1\n{LATIN1_ID},2,0\n",
                 ["audit", "GRAPH", "FILE", "-o", "OUT"], "pairs.csv", LATIN1_PAIR, id="audit-feature-table"),
    pytest.param("features.csv", f"sample_id,a,b\nS1,1,0\nS2,0,1\nS3,1,1\n{LATIN1_ID},2,0\n",
                 ["audit", "GRAPH", "FILE", "--write-back", "-o", "OUT"], "audited.json", LATIN1_PAIR,
                 id="audit-write-back"),
    pytest.param("subset.txt", f"# samples to derive for\nS1\n{LATIN1_ID}\nS3\n",
                 ["derive", "GRAPH", "--mode", "subject", "--samples", "FILE", "-o", "OUT"], "subset-spec.json",
                 "3 samples in 3 groups", id="derive-samples-list"),
    pytest.param("subset.csv", f"sample_id\nS1\n{LATIN1_ID}\nS3\n",
                 ["derive", "GRAPH", "--mode", "subject", "--samples", "FILE", "-o", "OUT"], "subset-spec.json",
                 "3 samples in 3 groups", id="derive-samples-table"),
]  # fmt: skip


def _command(args: list[str], paths: dict[str, Path]) -> list[Path | str]:
    return [paths.get(a, a) for a in args]


@pytest.mark.parametrize(("name", "text", "args", "writes", "shows"), LATIN1_TABLE_CASES)
def test_a_latin1_table_is_refused_without_encoding_and_read_with_it(tmp_path, capsys, name, text, args, writes,
                                                                     shows):  # fmt: skip
    graph, spec = _latin1_study(tmp_path)
    path = tmp_path / name
    path.write_bytes(text.encode("latin-1"))
    out = tmp_path / (writes or "unused")
    command = _command(args, {"GRAPH": graph, "SPEC": spec, "FILE": path, "OUT": out})
    line = 1 + text.splitlines().index(next(r for r in text.splitlines() if LATIN1_ID in r))
    message = cli_fails(capsys, tmp_path, command, "parse", FILE, "not UTF-8", f"line {line}", "0xf6",
                        "--encoding latin-1", output=out, file=path)  # fmt: skip
    assert "depgraph build" not in message and "in Python" not in message  # the command's own option, once
    assert str(path) in message and message.count(path.name) == 1
    assert shows in cli_ok(capsys, [*command, "--encoding", "latin-1"], status=0)
    if writes:
        assert LATIN1_ID in out.read_text(encoding="utf-8"), "the id read from latin-1 is the one the file holds"


def test_the_python_calls_behind_check_and_audit_take_encoding(tmp_path):
    graph_file, spec_file = _latin1_study(tmp_path)
    graph, spec = read_graph(graph_file), read_spec(spec_file)
    split = tmp_path / "split.csv"
    split.write_bytes(f"sample_id,fold\nS1,1\nS2,2\nS3,2\n{LATIN1_ID},1\n".encode("latin-1"))
    features = tmp_path / "features.csv"
    features.write_bytes(f"sample_id,a,b\nS1,1,0\nS2,0,1\n{LATIN1_ID},2,0\n".encode("latin-1"))
    hint = ["not UTF-8", "line 5", "encoding='latin-1' in Python"]
    for call in (lambda **kw: straddling_groups(spec, split, **kw), lambda **kw: assignment_roles(spec, split, **kw),
                 lambda **kw: exposure(graph, spec, split, **kw)):  # fmt: skip
        with fails_with("parse", FILE, *hint, file=split):
            call()
    assert straddling_groups(spec, split, encoding="latin-1").groups["group_id"].tolist() == ["subject:P1"]
    assert assignment_roles(spec, split, encoding="latin-1").shape == (2, 5)
    assert exposure(graph, spec, split, encoding="latin-1").table["crossing"].tolist() == [1]
    with fails_with("parse", FILE, "not UTF-8", "line 4", "encoding='latin-1' in Python", file=features):
        audit_duplicates(features, threshold=0.99)
    pairs = audit_duplicates(features, threshold=0.99, encoding="latin-1")
    assert pairs[["id1", "id2"]].values.tolist() == [sorted(["S1", LATIN1_ID])]
    with fails_with("invalid_argument", "unknown encoding 'klingon'"):
        audit_duplicates(np.eye(2), ["S1", "S2"], encoding="klingon")


LATIN1_OPTION_CASES = [
    pytest.param("subset.txt", b"S1\nS2\n", ["derive", "GRAPH", "--mode", "subject", "--encoding", "latin-1", "-o",
                 "OUT"], "invalid_argument", ["--encoding does not apply without --samples"],
                 id="derive-encoding-without-samples"),
    pytest.param("features.npy", None, ["audit", "GRAPH", "FILE", "--encoding", "latin-1", "-o", "OUT"],
                 "invalid_argument", ["--encoding does not apply to a .npy matrix"], id="audit-encoding-of-npy"),
    pytest.param("split.csv", b"sample_id,fold\nS1,1\n", ["check", "SPEC", "FILE", "--encoding", "klingon"],
                 "invalid_argument", ["unknown encoding 'klingon'"], id="check-unknown-encoding"),
    pytest.param("subset.txt", b"S1\nS2\n", ["derive", "GRAPH", "--mode", "subject", "--samples", "FILE",
                 "--encoding", "hex", "-o", "OUT"], "invalid_argument", ["'hex' is not a text encoding"],
                 id="derive-bytes-codec"),
    pytest.param("subset.txt", b"\xef\xbb\xbfS1\nS2\n", ["derive", "GRAPH", "--mode", "subject", "--samples",
                 "FILE", "--encoding", "latin-1", "-o", "OUT"], "parse",
                 [FILE, "UTF-8 byte-order mark", "not latin-1", "without an encoding"],
                 id="derive-bom-read-as-latin-1"),
    pytest.param("subset.txt", b"S1\nJ\xf6rg\n", ["derive", "GRAPH", "--mode", "subject", "--samples", "FILE",
                 "--encoding", "ascii", "-o", "OUT"], "parse", [FILE, "not ascii text", "line 2", "0xf6"],
                 id="derive-byte-the-encoding-does-not-define"),
    pytest.param("features.csv", b"sample_id,a\nS1,1\nJ\xf6rg,2\n", ["audit", "GRAPH", "FILE", "--encoding",
                 "cp1252", "--id-column", "x", "-o", "OUT"], "schema", ["no 'x' column"],
                 id="audit-encoded-table-keeps-its-refusals"),
]  # fmt: skip


@pytest.mark.parametrize(("name", "content", "args", "code", "fragments"), LATIN1_OPTION_CASES)
def test_encoding_options_refuse_what_they_cannot_mean(tmp_path, capsys, name, content, args, code, fragments):
    graph, spec = _latin1_study(tmp_path)
    path = tmp_path / name
    if content is None:
        np.save(path, np.eye(5))
    else:
        path.write_bytes(content)
    out = tmp_path / "written"
    command = _command(args, {"GRAPH": graph, "SPEC": spec, "FILE": path, "OUT": out})
    cli_fails(capsys, tmp_path, command, code, *fragments, output=out, file=path)


SAMPLE_FILE_CASES = [
    pytest.param("subset.txt", f"S1\nX9\n{LATIN1_ID}\nX8\n", [], id="text-list"),
    pytest.param("subset.csv", f"sample_id\nS1\nX9\n{LATIN1_ID}\nX8\n", [], id="table"),
    pytest.param("subset.txt", f"S1\nX9\n{LATIN1_ID}\nX8\n", ["--encoding", "latin-1"], id="latin-1-list"),
]  # fmt: skip


@pytest.mark.parametrize(("name", "text", "extra"), SAMPLE_FILE_CASES)
def test_unknown_samples_are_named_with_their_file_once(tmp_path, capsys, name, text, extra):
    graph, _ = _latin1_study(tmp_path)
    path = tmp_path / name
    path.write_bytes(text.encode("latin-1" if extra else "utf-8"))
    out = tmp_path / "subset-spec.json"
    message = cli_fails(capsys, tmp_path, ["derive", graph, "--mode", "subject", "--samples", path, *extra, "-o", out],
                        "reference", f"samples file {str(path)!r} names 2 sample(s) not in the graph: X9, X8",
                        output=out)  # fmt: skip
    assert message.count(path.name) == 1 and "--samples names" not in message  # in the order the file lists them


# ------------------------------------------------------------------- adversarial pass: CLI (issue 10)
#: Not UTF-8: how Python holds an environment variable whose bytes are not UTF-8 (lone surrogates).
NOT_UTF8 = os.fsdecode(b"\xff\xfe" + b"k" * 40)

CLI_LINE_CASES = [
    # an option given twice: the parser would keep the last one without a word
    ("mode-twice", ["derive", "{graph}", "--mode", "subject", "-o", "{out}/s.json", "--mode", "batch"],
     "invalid_argument", ["--mode is given more than once"]),
    ("folds-twice", ["folds", "{spec}", "--scheme", "group-kfold", "-k", "2", "--folds", "3", "-o", "{out}/f.json"],
     "invalid_argument", ["-k/--n-splits is given more than once"]),
    ("flag-twice", ["validate", "{spec}", "--json", "--json"], "invalid_argument", ["--json is given more than once"]),
    ("flag-and-its-negation", ["build", "{meta}", "--allow-multi-subject-samples", "--no-allow-multi-subject-samples",
     "-o", "{out}/g.json"], "invalid_argument", ["--allow-multi-subject-samples/--no-allow-multi-subject-samples is"]),
    # empty values
    ("empty-output", ["derive", "{graph}", "--mode", "subject", "-o", ""], "invalid_argument",
     ["--output/-o is given an empty value ''"]),
    ("spaces-output", ["derive", "{graph}", "--mode", "subject", "-o", "  "], "invalid_argument",
     ["--output/-o is given an empty value '  '"]),
    ("empty-argument", ["build", "", "-o", "{out}/g.json"], "invalid_argument", ["is given an empty value ''"]),
    ("empty-id-column", ["check", "{spec}", "{meta}", "--id-column", ""], "invalid_argument",
     ["--id-column is given an empty value"]),
    # a value that is one of the command's options
    ("output-is-an-option", ["derive", "{graph}", "--mode", "subject", "-o", "--allow-unlinked"], "invalid_argument",
     ["--output/-o takes a value, but is followed by the option --allow-unlinked"]),
    # output paths that read as something else
    ("output-begins-with-dash", ["derive", "{graph}", "--mode", "subject", "-o", "-x.json"], "invalid_argument",
     ["'-x.json' begins with '-'", "./-x.json"]),
    ("plots-dir-begins-with-dash", ["report", "{spec}", "-o", "{out}/r.html", "--plots-dir", "-p"],
     "invalid_argument", ["--plots-dir '-p' begins with '-'"]),
    ("demo-dir-begins-with-dash", ["demo", "-o", "-d"], "invalid_argument", ["--output-dir/-o '-d' begins with '-'"]),
    ("output-ends-with-slash", ["derive", "{graph}", "--mode", "subject", "-o", "{out}/results/"], "io",
     ["ends with '/', which names a directory"]),
    # an output suffix that says another kind of file than the one written
    ("spec-named-csv", ["derive", "{graph}", "--mode", "subject", "-o", "{out}/s.csv"], "invalid_argument",
     ["is named .csv (CSV) but receives JSON"]),
    ("spec-named-gz", ["derive", "{graph}", "--mode", "subject", "-o", "{out}/s.json.gz"], "invalid_argument",
     ["is named .gz (gzip) but receives JSON"]),
    ("graph-named-parquet", ["build", "{meta}", "-o", "{out}/g.parquet"], "invalid_argument",
     ["is named .parquet (Parquet) but receives JSON"]),
    ("folds-named-html", ["folds", "{spec}", "--scheme", "group-kfold", "-k", "2", "-o", "{out}/f.html"],
     "invalid_argument", ["is named .html (HTML) but receives JSON"]),
    ("import-named-csv", ["import", "--from", "splitgraph", "{splitgraph}", "-o", "{out}/s.csv"], "invalid_argument",
     ["is named .csv (CSV) but receives JSON"]),
    ("csv-export-named-parquet", ["export", "{spec}", "--to", "csv", "-o", "{out}/t.parquet"], "invalid_argument",
     ["is named .parquet (Parquet) but receives CSV"]),
    ("parquet-export-named-csv", ["export", "{spec}", "--to", "parquet", "-o", "{out}/t.csv"], "invalid_argument",
     ["is named .csv (CSV) but receives a columnar split spec or a columnar study graph"]),
    ("splitgraph-export-named-csv", ["export", "{spec}", "--to", "splitgraph", "-o", "{out}/t.csv"],
     "invalid_argument", ["is named .csv (CSV) but receives JSON"]),
    ("report-named-json", ["report", "{spec}", "-o", "{out}/r.json"], "invalid_argument",
     ["is named .json (JSON) but receives HTML"]),
    ("audit-pairs-named-json", ["audit", "{graph}", "{features}", "-o", "{out}/pairs.json"], "invalid_argument",
     ["is named .json (JSON) but receives CSV"]),
    ("audit-graph-named-csv", ["audit", "{graph}", "{features}", "--write-back", "-o", "{out}/g.csv"],
     "invalid_argument", ["is named .csv (CSV) but receives JSON"]),
    # lists that say something else than the user meant
    ("column-maps-twice", ["build", "{meta}", "--column", "sample_id=sample_id", "--column", "sample_id=subject_id",
     "-o", "{out}/g.json"], "invalid_argument", ["--column maps sample_id twice", "'subject_id'"]),
    ("via-repeats", ["derive", "{graph}", "--mode", "composite", "--via", "subject,subject", "-o", "{out}/s.json"],
     "invalid_argument", ["--via names subject more than once"]),
    ("via-no-name", ["derive", "{graph}", "--mode", "composite", "--via", ",", "-o", "{out}/s.json"],
     "invalid_argument", ["--via ',' lists no name"]),
    ("via-empty-name", ["derive", "{graph}", "--mode", "composite", "--via", "subject,,batch", "-o", "{out}/s.json"],
     "invalid_argument", ["--via 'subject,,batch' holds an empty name (name 2 of the list)"]),
    ("attributes-trailing-comma", ["derive", "{graph}", "--mode", "subject", "--attributes", "batch_id,", "-o",
     "{out}/s.json"], "invalid_argument", ["--attributes 'batch_id,' holds an empty name"]),
    ("priority-repeats", ["derive", "{graph}", "--mode", "composite", "--strategy", "rule_based", "--priority",
     "batch,batch", "-o", "{out}/s.json"], "invalid_argument", ["--priority names batch more than once"]),
    ("attributes-no-name", ["derive", "{graph}", "--mode", "subject", "--attributes", " , ", "-o", "{out}/s.json"],
     "invalid_argument", ["--attributes ' , ' lists no name"]),
    ("attributes-repeat", ["derive", "{graph}", "--mode", "subject", "--attributes", "batch_id,batch_id", "-o",
     "{out}/s.json"], "invalid_argument", ["--attributes names batch_id more than once"]),
    ("balance-repeats", ["folds", "{spec}", "--scheme", "balanced-holdout", "--balance", "stratum,stratum", "-o",
     "{out}/f.json"], "invalid_argument", ["--balance names stratum more than once"]),
    # keys and salts that are not UTF-8 text
    ("key-not-utf8", ["derive", "{graph}", "--mode", "subject", "--pseudonymize-ids", "--key-env", "ISSUE10_BAD",
     "-o", "{out}/s.json"], "invalid_argument", ["ISSUE10_BAD (--key-env) is not UTF-8 text"]),
    ("sign-key-not-utf8", ["derive", "{graph}", "--mode", "subject", "--sign-key-env", "ISSUE10_BAD", "-o",
     "{out}/s.json"], "invalid_argument", ["ISSUE10_BAD (--sign-key-env) is not UTF-8 text"]),
    ("salt-not-utf8", ["folds", "{spec}", "--scheme", "hash", "--salt-env", "ISSUE10_BAD", "-o", "{out}/f.json"],
     "invalid_argument", ["ISSUE10_BAD (--salt-env) is not UTF-8 text"]),
    ("verify-key-not-utf8", ["validate", "{spec}", "--verify-key-env", "ISSUE10_BAD"], "invalid_argument",
     ["ISSUE10_BAD (--verify-key-env) is not UTF-8 text"]),
    # numbers out of range, ids the graph lacks
    ("diff-negative-limit", ["diff", "{spec}", "{folds}", "--limit", "-1"], "invalid_argument",
     ["--limit takes 0 or more", "not -1"]),
    ("audit-features-not-in-graph", ["audit", "{graph}", "{extra_features}", "-o", "{out}/pairs.csv"], "reference",
     ["name 1 sample(s) not in the graph: X9"]),
]  # fmt: skip


@pytest.mark.parametrize(("args", "code", "fragments"), [pytest.param(*c[1:], id=c[0]) for c in CLI_LINE_CASES])
def test_command_line_as_typed(tmp_path, capsys, monkeypatch, study_files, args, code, fragments):
    # What a parser resolves without a word (the last of two values, an empty path as the current directory, a
    # file named like an option, a spec in a .csv) is refused by name, before anything is read or written.
    monkeypatch.setenv("ISSUE10_BAD", NOT_UTF8)
    monkeypatch.chdir(study_files["out"])
    write(tmp_path / "extra_features.csv", "sample_id,f1,f2\nS1,1,0\nS2,0,1\nX9,1,0.5\n")
    subs = {f"{{{k}}}": str(v) for k, v in {**study_files, "extra_features": tmp_path / "extra_features.csv"}.items()}
    args = [re.sub(r"\{\w+\}", lambda m: subs.get(m.group(0), m.group(0)), a) for a in args]
    cli_fails(capsys, tmp_path, args, code, *fragments)


def _lines(path: Path) -> list[str]:
    return path.read_text(encoding="utf-8").splitlines()


def test_outputs_named_as_people_name_them_are_written(tmp_path, capsys, monkeypatch, study_files):
    # The suffix rule refuses only a suffix that says another kind of file: no suffix, an unknown one, capitals,
    # a name beginning with '-' written as ./-name, and .tsv / .txt for text tables are written.
    out = study_files["out"]
    monkeypatch.chdir(out)
    for name in ("spec.json", "spec", "spec.txt", "SPEC.JSON", "./-spec.json"):
        cli_ok(capsys, ["derive", study_files["graph"], "--mode", "subject", "-o", name])
        assert read_spec(out / name).n_samples == 4
    cli_ok(capsys, ["export", study_files["spec"], "--to", "csv", "-o", "t.tsv"])
    assert _lines(out / "t.tsv")[0].split("\t")[0] == "sample_id"  # named .tsv, written as TSV
    cli_ok(capsys, ["export", study_files["spec"], "--to", "csv", "-o", "t.txt"])
    assert _lines(out / "t.txt")[0].split(",")[0] == "sample_id"
    assert cli_ok(capsys, ["export", study_files["spec"], "--to", "csv", "-o", "-"]).startswith("sample_id,")
    cli_ok(capsys, ["audit", study_files["graph"], study_files["features"], "--threshold", "0.99", "-o", "p.tsv"])
    assert _lines(out / "p.tsv")[0].split("\t") == ["id1", "id2", "similarity"]
    cli_ok(capsys, ["audit", study_files["graph"], study_files["features"], "--threshold", "0.99", "-o", "p.parquet"])
    assert pd.read_parquet(out / "p.parquet").columns.tolist() == ["id1", "id2", "similarity"]
    cli_ok(capsys, ["diff", study_files["spec"], study_files["spec"], "--limit", "0"])


def test_an_option_given_once_with_help_shows_the_help(capsys):
    # --help anywhere wins over the checks of the command line (an option twice is not refused then).
    assert cli_ok(capsys, ["validate", "x.json", "--json", "--json", "--help"]).count("--json") >= 1


# ---- check: the assignment table is named once in each of its refusals
ASSIGNMENT_CASES = [
    pytest.param(b"id,fold\nS1,1\n", [], "schema", ["{file}' has no 'sample_id' column"], id="no-id-column"),
    pytest.param(b"sample_id,x\nS1,1\n", [], "schema", ["{file}' has none of the split columns"],
                 id="no-split-column"),
    pytest.param(b"sample_id,fold\nS1,1\n", ["--split-column", "side"], "schema",
                 ["{file}' has no 'side' column"], id="named-split-column-missing"),
    pytest.param(b"sample_id,fold\nS1,1\nS9,2\n", [], "reference",
                 ["{file}' names 1 sample(s) not in the spec: S9"], id="unknown-sample"),
    pytest.param(b"sample_id,fold\nS1,1\nS1,2\n", [], "duplicate_id", ["{file}' lists sample(s) S1 twice"],
                 id="sample-twice"),
]  # fmt: skip


@pytest.mark.parametrize(("content", "extra", "code", "fragments"), ASSIGNMENT_CASES)
def test_check_names_the_assignment_file_once(tmp_path, study_files, capsys, content, extra, code, fragments):
    table = tmp_path / "split.csv"
    table.write_bytes(content)
    line = cli_fails(capsys, tmp_path, ["check", study_files["spec"], table, *extra], code, *fragments, file=table)
    assert line.count("split.csv") == 1 and f"assignment '{table}'" in line, line


# ---- evaluate: predictions checked against the spec's samples and fold plan (issue 13)
#: Six samples in three groups; split 0 tests group a (S1, S2), split 1 tests group b (S3, S4); labels alternate.
EVAL_HEADER = "sample_id,split,role,score,label\n"
EVAL_ROWS = "S1,0,test,0.2,0\nS2,0,test,0.9,1\nS3,0,train,0.1,0\nS4,0,train,0.8,1\nS5,0,train,0.3,0\nS6,0,train,0.7,1\n"
EVALUATION_CASES = [
    pytest.param(EVAL_HEADER.replace(",score", ",points") + EVAL_ROWS, [], {}, "schema",
                 ["{file}' has no 'score' column"], id="no-score-column"),
    pytest.param(EVAL_HEADER, [], {}, "empty_input", [FILE], id="no-rows"),
    pytest.param(EVAL_HEADER + EVAL_ROWS + "S9,0,test,0.5,1\n", [], {}, "reference", ["S9", FILE],
                 id="unknown-sample"),
    pytest.param(EVAL_HEADER + EVAL_ROWS.replace("S1,0,", "S1,7,"), [], {}, "reference",
                 ["splits the spec's plan does not have: 7"], id="unknown-split"),
    pytest.param(EVAL_HEADER + EVAL_ROWS.replace("S1,0,test", "S1,0,train"), [], {}, "integrity",
                 ["row 1 contradict the spec's fold plan", "S1 (train in split 0, where the plan has it test)"],
                 id="role-contradicts-the-plan"),
    pytest.param(EVAL_HEADER + "S1,1,train,0.2,0\n" + EVAL_ROWS.replace("S3,0,train", "S3,0,test"), [], {}, "integrity",
                 ["S3 (test in split 0, where the plan has it train)"], id="train-row-called-test"),
    pytest.param(EVAL_HEADER + EVAL_ROWS.replace("S1,0,test", "S1,0,validation"), [], {}, "invalid_value",
                 ["role is train or test; row 1 hold validation"], id="unknown-role"),
    pytest.param(EVAL_HEADER + EVAL_ROWS + "S1,0,test,0.3,0\n", [], {}, "duplicate_id",
                 ["rows 1, 7 repeat a sample in one split", "S1 in split 0"], id="sample-twice-in-a-split"),
    pytest.param(EVAL_HEADER + EVAL_ROWS.replace("0.9", "inf").replace("0.3", "high"), [], {}, "invalid_value",
                 ["score must be a finite number; rows 2, 5 hold 'inf', 'high'"], id="scores-not-finite"),
    pytest.param(EVAL_HEADER + EVAL_ROWS.replace("S2,0,test,0.9,1", "S2,0,test,0.9,2"), [], {}, "invalid_value",
                 ["labels are binary; they hold 3 classes: 0, 1, 2"], id="labels-not-binary"),
    pytest.param(EVAL_HEADER + EVAL_ROWS.replace("S2,0,test,0.9,1", "S2,0,test,0.9,"), [], {}, "invalid_value",
                 ["row 2 have no label"], id="label-missing"),
    pytest.param(EVAL_HEADER + EVAL_ROWS.replace("0.8,1", "0.8,0").replace("0.7,1", "0.7,0"), [], {},
                 "invalid_value", ["split 0 (repeat 0, fold 0) has no positive among its 4 training rows"],
                 id="training-rows-of-one-class"),
    pytest.param(EVAL_HEADER + EVAL_ROWS.replace(",0\n", ",control\n").replace(",1\n", ",case\n"), [], {},
                 "invalid_argument", ["labels case, control do not say which class is positive"],
                 id="text-labels-without-positive"),
    pytest.param(EVAL_HEADER.replace(",label", "") + EVAL_ROWS.replace(",0\n", "\n").replace(",1\n", "\n"), [], {},
                 "schema", ["has no 'label' column and the spec records no outcome"], id="no-label-anywhere"),
    pytest.param(EVAL_HEADER + EVAL_ROWS.replace(",train,", ",test,").replace("S3,0", "S3,1").replace("S4,0", "S4,1")
                 .replace("S5,0,test", "S5,0,train").replace("S6,0,test", "S6,0,train"), [], {}, "invalid_value",
                 ["split 1 (repeat 0, fold 1) has no training row: the threshold rule youden"],
                 id="split-without-training-rows"),
    pytest.param(EVAL_HEADER + EVAL_ROWS.replace("S1,0,test", "S1,0,"), [], {}, "invalid_value",
                 ["role is train or test; row 1 hold (missing)"], id="role-missing"),
    pytest.param(EVAL_HEADER + EVAL_ROWS, ["--threshold", "best"], {"threshold": "best"}, "invalid_argument",
                 ["threshold takes a number, 'youden', 'sensitivity=X'"], id="threshold-unknown"),
    pytest.param(EVAL_HEADER + EVAL_ROWS, ["--threshold", "sensitivity=0"], {"threshold": "sensitivity=0"},
                 "invalid_argument", ["a value in (0, 1]"], id="threshold-target-zero"),
    pytest.param(EVAL_HEADER + EVAL_ROWS, ["--by", "region"], {"by": "region"}, "invalid_argument",
                 ["by='region': the spec has no such sample column"], id="by-unknown-column"),
    pytest.param(EVAL_HEADER + EVAL_ROWS, ["--boot", "-1"], {"n_boot": -1}, "invalid_argument",
                 ["n_boot must be an integer from 0 to 100000"], id="negative-boot"),
    pytest.param(EVAL_HEADER + EVAL_ROWS, ["--confidence", "1"], {"confidence": 1.0}, "invalid_argument",
                 ["confidence must be a number in (0, 1)"], id="confidence-one"),
    pytest.param(EVAL_HEADER + EVAL_ROWS, ["--positive", "yes"], {"positive": "yes"}, "invalid_argument",
                 ["positive='yes' is none of the labels (0, 1)"], id="positive-not-a-label"),
]  # fmt: skip


def _evaluation_spec(root: Path, folds: bool = True) -> Path:
    samples = pd.DataFrame({"sample_id": [f"S{i}" for i in range(1, 7)], "group_id": list("aabbcc")})
    spec = SplitSpec.build(samples, constraint=Constraint(mode="subject"), recommended_resampling="grouped_cv")
    if folds:
        spec = spec.with_folds(FoldPlan.from_roles(np.array([[1, 1, 0, 0, 0, 0], [0, 0, 1, 1, 0, 0]])))
    write_spec(spec, root / "evaluation-spec.json")
    return root / "evaluation-spec.json"


@pytest.mark.parametrize(("content", "options", "kwargs", "code", "fragments"), EVALUATION_CASES)
def test_evaluate_refuses_predictions_the_spec_contradicts(tmp_path, capsys, content, options, kwargs, code,
                                                           fragments):  # fmt: skip
    spec_path = _evaluation_spec(tmp_path)
    table = write(tmp_path / "predictions.csv", content)
    with fails_with(code, *fragments, file=table):
        depgraph.audit.evaluation.evaluate(read_spec(spec_path), table, **{"n_boot": 10, **kwargs})
    output = tmp_path / "evaluation.csv"
    boot = [] if "--boot" in options else ["--boot", "10"]
    cli_fails(capsys, tmp_path, ["evaluate", spec_path, table, *boot, *options, "-o", output], code,
              *fragments, output=output, file=table)  # fmt: skip


@pytest.mark.parametrize(
    ("args", "code", "fragments"),
    [
        (["-o", "evaluation.html"], "invalid_argument", ["'evaluation.html': the evaluation is written as .csv"]),
        (["-o", "evaluation.txt"], "invalid_argument", ["'evaluation.txt': the evaluation is written as .csv"]),
        (["-o", "predictions.csv"], "io", ["output 'predictions.csv' is the input"]),
    ],
)
def test_evaluate_outputs_refused_before_any_work(tmp_path, capsys, monkeypatch, args, code, fragments):
    spec_path = _evaluation_spec(tmp_path)
    table = write(tmp_path / "predictions.csv", EVAL_HEADER + EVAL_ROWS)
    monkeypatch.chdir(tmp_path)
    cli_fails(capsys, tmp_path, ["evaluate", spec_path, table, *args], code, *fragments)
    assert table.read_text() == EVAL_HEADER + EVAL_ROWS


def test_evaluate_needs_a_spec_with_folds(tmp_path, capsys):
    spec_path = _evaluation_spec(tmp_path, folds=False)
    table = write(tmp_path / "predictions.csv", EVAL_HEADER + EVAL_ROWS)
    with fails_with("invalid_argument", "the spec carries no folds"):
        depgraph.audit.evaluation.evaluate(read_spec(spec_path), table)
    cli_fails(capsys, tmp_path, ["evaluate", spec_path, table], "invalid_argument", "the spec carries no folds")


# --------------------------------------------------------------------------- covariate-keyed folds (issue 13)
#: ``folds`` requests on covariate keys that cannot be honoured: (scheme, CLI options, API parameters, code, fragments
#: both faces name). Every group of the spec below carries one ``date_of_birth``; ``family_dob`` differs inside group
#: ``a``; ``dob_gap`` and ``weight_gap`` lack a value for one sample; ``sex`` is text.
COVARIATE_FOLD_CASES = [
    pytest.param("hash", ["--key", "nosuch"], {"key": ("nosuch",)}, "invalid_argument",
                 ["--key column 'nosuch' is not in the spec", "derive --attributes"], id="key-column-unknown"),
    pytest.param("hash", ["--key", "dob_gap"], {"key": ("dob_gap",)}, "missing_id",
                 ["key column 'dob_gap' is missing or blank for 1 sample(s): S3"], id="key-value-missing"),
    pytest.param("hash", ["--key", "date_of_birth,family_dob"], {"key": ("date_of_birth", "family_dob")}, "ambiguity",
                 ["1 group(s) hold samples of different keys: a;", "each group needs one key"],
                 id="group-with-two-keys"),
    pytest.param("hash", ["--key", "date_of_birth,date_of_birth"], {"key": ("date_of_birth", "date_of_birth")},
                 "invalid_argument", ["names date_of_birth more than once"], id="key-column-twice"),
    pytest.param("covariate-bins", [], {}, "invalid_argument", ["covariate-bins needs --by COL"], id="bins-without-by"),
    pytest.param("covariate-bins", ["--by", "sex"], {"by": "sex"}, "invalid_argument",
                 ["--by column 'sex' is not numeric"], id="bins-by-text"),
    pytest.param("covariate-bins", ["--by", "weight_gap"], {"by": "weight_gap"}, "invalid_value",
                 ["--by column 'weight_gap' is missing or not finite for 1 sample(s): S5"], id="bins-value-missing"),
    pytest.param("covariate-bins", ["--by", "nosuch"], {"by": "nosuch"}, "invalid_argument",
                 ["--by column 'nosuch' is not in the spec"], id="bins-column-unknown"),
    pytest.param("covariate-bins", ["--by", "flat", "-k", "2"], {"by": "flat", "n_splits": 2}, "too_few_groups",
                 ["2 bins need at least 2 distinct group values; found 1"], id="bins-one-value"),
    pytest.param("covariate-bins", ["--by", "weight", "-k", "2", "--thresholds", "65,x"],
                 {"by": "weight", "n_splits": 2, "thresholds": (65, "x")}, "invalid_argument", ["finite numbers"],
                 id="threshold-not-a-number"),
    pytest.param("covariate-bins", ["--by", "weight", "-k", "2", "--thresholds", "inf"],
                 {"by": "weight", "n_splits": 2, "thresholds": (float("inf"),)}, "invalid_argument",
                 ["finite numbers"], id="threshold-infinite"),
    pytest.param("covariate-bins", ["--by", "weight", "-k", "3", "--thresholds", "80,70"],
                 {"by": "weight", "n_splits": 3, "thresholds": (80, 70)}, "invalid_argument",
                 ["thresholds must increase strictly, not [80.0, 70.0]"], id="thresholds-decreasing"),
    pytest.param("covariate-bins", ["--by", "weight", "-k", "4", "--thresholds", "70"],
                 {"by": "weight", "n_splits": 4, "thresholds": (70,)}, "invalid_argument",
                 ["1 thresholds make 2 bins, not the 4 folds asked for"], id="thresholds-and-k-disagree"),
    pytest.param("covariate-bins", ["--by", "weight", "-k", "4", "--thresholds", "10,20,30"],
                 {"by": "weight", "n_splits": 4, "thresholds": (10, 20, 30)}, "too_few_groups",
                 ["covariate bin(s) 0, 1, 2 of 'weight' hold no sample here"], id="thresholds-leave-bins-empty"),
    pytest.param("covariate-bins", ["--by", "weight", "--key", "sex"], {"by": "weight", "key": ("sex",)},
                 "invalid_argument", ["does not apply", "hash"], id="key-outside-hash"),
    pytest.param("hash", ["--thresholds", "1,2"], {"thresholds": (1.0, 2.0)}, "invalid_argument",
                 ["does not apply", "covariate-bins"], id="thresholds-outside-bins"),
]  # fmt: skip


@pytest.fixture
def covariate_spec(tmp_path: Path) -> Path:
    frame = pd.DataFrame({
        "sample_id": [f"S{i}" for i in range(1, 9)], "group_id": list("aabbccdd"),
        "date_of_birth": ["1980-01-02"] * 2 + ["1975-12-31"] * 2 + ["2001-07-04"] * 2 + ["1990-01-01"] * 2,
        "family_dob": ["1980", "1982", "1975", "1975", "2001", "2001", "1990", "1990"],
        "dob_gap": ["1980", "1980", None, "1975", "2001", "2001", "1990", "1990"],
        "sex": list("FFMMFFMM"), "weight": [60.0, 61, 70, 71, 80, 81, 90, 91],
        "weight_gap": [60.0, 61, 70, 71, None, 81, 90, 91], "flat": [70.0] * 8,
    })  # fmt: skip
    path = tmp_path / "covariates.json"
    write_spec(SplitSpec.build(frame, constraint=Constraint(mode="subject"), recommended_resampling="grouped_cv"), path)
    return path


@pytest.mark.parametrize(("scheme", "options", "params", "code", "fragments"), COVARIATE_FOLD_CASES)
def test_covariate_folds_refused(tmp_path, out_dir, capsys, monkeypatch, covariate_spec, scheme, options, params, code,
                                 fragments):  # fmt: skip
    monkeypatch.setenv("ISSUE13_SALT", "consortium-2026")
    salt = {"salt": "consortium-2026"} if scheme == "hash" else {}
    with fails_with(code, *fragments):
        assign_folds(read_spec(covariate_spec), scheme, **{**salt, **params})
    target = out_dir / "folds.json"
    salt_option = ["--salt-env", "ISSUE13_SALT"] if scheme == "hash" else []
    cli_fails(capsys, tmp_path, ["folds", covariate_spec, "--scheme", scheme, *salt_option, *options, "-o", target],
              code, *fragments, output=target)  # fmt: skip


def test_covariate_fold_parameters_refused_in_python():
    """What only Python can pass: one string for the key columns, a string of thresholds, a column name not text."""
    with fails_with("invalid_argument", "key takes a list of names, not one string"):
        HashFolds(n_splits=2, salt="s", key="date_of_birth")
    with fails_with("invalid_argument", "thresholds takes a list of numbers, not '60,70'"):
        CovariateBins(by="weight", thresholds="60,70")
    with fails_with("invalid_argument", "by takes one column name, not ['weight']"):
        CovariateBins(by=["weight"])
    with fails_with("invalid_argument", "thresholds must be finite numbers, at least one"):
        CovariateBins(by="weight", thresholds=[])


@pytest.mark.parametrize("value", ["late", True])
@pytest.mark.parametrize("form", ["json", "columnar"])
def test_a_timepoints_time_index_that_is_no_number_is_refused_naming_the_node(tmp_path, capsys, value, form):
    meta = write(tmp_path / "m.csv", "sample_id,subject_id,timepoint_id,time_index\nS1,P1,T0,0\nS2,P1,T1,1\n")
    graph = from_metadata(meta)
    doc = json.loads(graph_bytes(graph))
    doc["attributes"]["Timepoint"]["time_index"] = [0, value]
    path = tmp_path / "bad.json"
    path.write_text(json.dumps(doc))
    if form == "columnar":
        columnar = tmp_path / "bad.dggraph"
        write_graph(graph, columnar)
        table = pq.read_table(columnar / "nodes" / "Timepoint.parquet")
        index = table.schema.get_field_index("time_index")
        cells = pa.array(["0", str(value)])
        pq.write_table(table.set_column(index, "time_index", cells), columnar / "nodes" / "Timepoint.parquet")
        path = columnar
    with fails_with("schema", "Timepoint 'T1' has time_index"):
        read_graph(path)
    cli_fails(capsys, tmp_path, ["validate", path], "schema", "Timepoint 'T1' has time_index")
