"""A catalogue of bad inputs a user can cause, and how depgraph must refuse them.

Every case checks both faces of the contract (DESIGN §10):

* the Python API raises :class:`~depgraph.errors.DepgraphError` with the stable
  ``code`` listed here and a one-line message naming the offending rows, ids,
  column or path (rows are 1-based data rows, header excluded);
* the CLI (``depgraph.cli.main``) returns exit code 2, prints exactly one line
  on stderr, ``depgraph: <code>: <message>``, and leaves nothing on disk: the
  ``-o`` target does not exist afterwards and no temporary file is left behind.

Input files are written byte for byte as a user would write them.
"""

from __future__ import annotations

import contextlib
import json
from collections.abc import Iterator, Sequence
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from depgraph import derive, from_metadata, read_graph, validate, write_graph
from depgraph.cli import main
from depgraph.errors import ERROR_CODES, DepgraphError
from depgraph.spec import SplitSpec, write_spec

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
        graph.add_kinship(kin, threshold)
    target = out_dir / "graph.json"
    args = ["build", meta_csv, "--kinship", kin, "--kinship-threshold", threshold, "-o", target]
    cli_fails(capsys, tmp_path, args, code, *fragments, output=target, file=kin)


UNKNOWN_PAIRS = "id1,id2,kinship\nP1,P2,0.25\nP3,P9,0.3\nP8,P2,0.2\n"


def test_unknown_kinship_ids_can_be_ignored_and_are_reported(tmp_path, out_dir, meta_csv, capsys):
    kin = write(tmp_path / "pairs.csv", UNKNOWN_PAIRS)
    graph = from_metadata(meta_csv).add_kinship(kin, 0.1, unknown="ignore")
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
    report = validate(from_metadata(meta_csv).add_kinship(kin, 0.1, unknown="ignore"))
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
        graph.add_spatial(coords, float(radius))
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
    graph = from_metadata(meta).add_relations(cycle, "timepoint_precedes")
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


# ------------------------------------------------------------------- input tables and genetics-tool files (issue 10)
# Every table a user hands to `build`: CSV/TSV bytes as a spreadsheet or a script writes them, compressed files,
# Parquet files with the types pyarrow/pandas write, pandas frames, the relatedness files of KING, plink2, PLINK and
# GCTA, and coordinates. Expected values are written by hand (lines count the header as line 1).

import bz2  # noqa: E402  (this section's own imports; the sections above are left as they are)
import gzip  # noqa: E402
import lzma  # noqa: E402
import re  # noqa: E402
import zipfile  # noqa: E402
from datetime import date, datetime, time, timedelta, timezone  # noqa: E402
from decimal import Decimal  # noqa: E402

import pyarrow as pa  # noqa: E402
import pyarrow.parquet as pq  # noqa: E402

from depgraph.files import read_table  # noqa: E402
from depgraph.kinship import read_kinship  # noqa: E402
from depgraph.vocab import NodeType  # noqa: E402


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
    pytest.param(
        b"sample_id;subject_id\nS1;P1\n", "cohort.csv", "schema", [FILE, "semicolons"], id="semicolon-separated"
    ),
    pytest.param(b"sample_id\tsubject_id\nS1\tP1\n", "cohort.csv", "schema", [FILE, ".tsv"], id="tabs-in-a-csv"),
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
        lambda: _ids(subject_id=["P1", "P1", "P2"], visit=pa.array([time(9), time(10), time(11)])),
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
    text = graph.to_json_bytes().decode()
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
        from_metadata(meta).add_kinship(path, "third", id_template=template)
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
        from_metadata(meta).add_kinship(path, "third", unknown="ignore")
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
    graph = from_metadata(write(tmp_path / "meta.csv", TOOL_META)).add_kinship(path, "third")
    assert graph.relation_counts()["subject_related_to"] == 1
    target = out_dir / "graph.json"
    cli_ok(capsys, ["build", tmp_path / "meta.csv", "--kinship", path, "--kinship-threshold", "third", "-o", target])
    assert read_graph(target).relation_counts()["subject_related_to"] == 1


def test_negative_kinship_in_a_plain_pair_table_is_still_refused(tmp_path, out_dir, capsys):
    path = write(tmp_path / "pairs.csv", "id1,id2,kinship\nP1,P2,0.25\nP3,P4,-0.0137\n")
    meta = write(tmp_path / "meta.csv", TOOL_META)
    with fails_with("invalid_value", "row 2", "-0.0137"):
        from_metadata(meta).add_kinship(path, "third")
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
        from_metadata(meta).add_kinship(path, "third")
    target = out_dir / "graph.json"
    args = ["build", meta, "--kinship", path, "--kinship-threshold", "third", "-o", target]
    cli_fails(capsys, tmp_path, args, "invalid_value", "(P2, P3)", output=target)


def test_grm_ids_that_collide_under_the_template(tmp_path, out_dir, capsys):
    path = _grm(tmp_path, np.eye(3), ["P1", "P1", "P3"], ["F1", "F2", "F3"])
    meta = write(tmp_path / "meta.csv", TOOL_META)
    with fails_with("duplicate_id", "P1", "{FID}_{IID}"):
        from_metadata(meta).add_kinship(path, "third")
    target = out_dir / "graph.json"
    args = ["build", meta, "--kinship", path, "--kinship-threshold", "third", "-o", target]
    cli_fails(capsys, tmp_path, args, "duplicate_id", "P1", output=target)


def test_grm_above_one_is_kept_and_flagged(tmp_path, out_dir, capsys):
    # inbred monozygotic twins: GRM 1.06 off the diagonal (kinship 0.53) is possible, so it is kept and flagged
    grm = np.array([[1.08, 1.06, 0.0, 0.0], [1.06, 1.07, 0.0, 0.0], [0.0, 0.0, 1.0, 0.5], [0.0, 0.0, 0.5, 1.0]])
    path = _grm(tmp_path, grm, ["P1", "P2", "P3", "P4"])
    graph = from_metadata(write(tmp_path / "meta.csv", TOOL_META)).add_kinship(path, "first")
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
    graph = from_metadata(meta).add_kinship(pairs, "first", id_template="sub-{IID}")
    assert graph.relation_counts()["subject_related_to"] == 1
    with fails_with("invalid_argument", "id_template", "matrix"):
        from_metadata(meta).add_kinship(np.eye(2), "first", ids=["sub-P1", "sub-P2"], id_template="sub-{IID}")


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
        from_metadata(meta_csv).add_spatial(coords, 5.0)
    target = out_dir / "graph.json"
    args = ["build", meta_csv, "--coords", coords, "--radius", "5", "-o", target]
    cli_fails(capsys, tmp_path, args, "invalid_value", *fragments, output=target)


def test_large_but_safe_coordinates_and_the_minkowski_limit(tmp_path, meta_csv):
    coords = write(tmp_path / "coords.csv", "sample_id,x,y\nS1,1e150,0\nS2,1e150,1\nS3,-1e150,0\n")
    graph = from_metadata(meta_csv).add_spatial(coords, 2.0)
    assert graph.relation_counts()["sample_adjacent_to"] == 1  # S1-S2 at distance 1, as plain arithmetic says
    spread = write(tmp_path / "spread.csv", "sample_id,x\nS1,0\nS2,1e7\n")
    with fails_with("invalid_value", "p=50", "rescale"):
        from_metadata(meta_csv).add_spatial(spread, 1.0, p=50)
    assert (
        from_metadata(meta_csv).add_spatial(spread, 1.0, p=float("inf")).relation_counts()
        == from_metadata(meta_csv).relation_counts()
    )


# ---- no grouping column
def test_build_without_a_grouping_column_says_so_and_names_id_like_columns(tmp_path, out_dir, capsys):
    rows = "".join(f"S{k},A{k // 3},{'f' if k % 2 else 'm'},{k * 0.5}\n" for k in range(30))
    path = write(tmp_path / "cohort.csv", "sample_id,patient,sex,score\n" + rows)
    graph = from_metadata(path)
    (issue,) = [i for i in validate(graph).issues if i.code == "no_grouping_column"]
    assert issue.severity == "warning" and issue.count == 30
    assert "patient" in issue.message and "--column subject_id=patient" in issue.message
    assert "sex" not in issue.message and "score" not in issue.message
    target = out_dir / "graph.json"
    capsys.readouterr()
    assert main(["build", str(path), "-o", str(target)]) == 0
    err = capsys.readouterr().err.splitlines()
    assert len(err) == 1 and err[0].startswith("depgraph: warning: no_grouping_column: ")
    assert "--column subject_id=patient" in err[0]
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
        "coords": lambda: graph.add_spatial(path, 1.0),
        "kinship": lambda: graph.add_kinship(path, 0.1),
        "duplicates": lambda: graph.add_duplicates(path),
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
        from_metadata(meta).add_kinship(path, "third")
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
    json.loads(graph.to_json_bytes())  # every attribute is JSON


# ---- a property: whichever lines are ragged, exactly those are named, by their line in the file
from hypothesis import given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

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
