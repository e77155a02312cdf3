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
from depgraph.folds import assign_folds
from depgraph.privacy import pseudonymize
from depgraph.spec import SplitSpec, read_spec, write_spec
from tests import documents

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
        [FILE, "row 2"],
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
    return from_metadata(meta).add_kinship(kinship, 0.1)


@pytest.fixture
def spec_doc(tmp_path: Path) -> dict:
    """A sound spec document: 12 samples S01..S12 in 6 subjects (P1 has 3, P4 1), 3 folds, a carried attribute."""
    graph = _document_cohort(tmp_path)
    spec = SplitSpec.from_partition(derive(graph, "subject"), graph, attributes=["sex"])
    doc = assign_folds(spec, "group-kfold", n_folds=3).to_json_dict()
    assert documents.problems(doc) == []
    return doc


@pytest.fixture
def graph_doc(tmp_path: Path) -> dict:
    return _document_cohort(tmp_path).to_json_dict()


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
    doc = pseudonymize(spec, SIGN_KEY).to_json_dict()
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
