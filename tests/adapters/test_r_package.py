"""The R package depgraphR (adapters/r), installed as a user installs it, reads what Python wrote: the data.frame,
every rsample split and the digest, recomputed in R; R CMD check passes; splitGraph 0.2.0 loads what depgraph exports
for it. (Its own testthat tests, run by R CMD check, read the same conformance specs from the other side.)"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys

import numpy as np
import orjson
import pandas as pd
import pytest

from depgraph import derive, from_metadata
from depgraph.spec.files import spec_bytes, spec_document, write_spec
from depgraph.spec.model import Constraint, FoldPlan, SplitSpec
from tests.conftest import REPO, RSCRIPT

pytestmark = pytest.mark.skipif(RSCRIPT is None, reason="Rscript not installed (CI installs it)")
PACKAGE = REPO / "adapters" / "r"


#: The two forms of a spec the R reader reads: one JSON file, or the columnar directory (manifest + Parquet).
FORMS = pytest.mark.parametrize("name", ["spec.json", "spec.dgspec"], ids=["json", "columnar"])


@pytest.fixture
def spec_with_folds(family_meta):
    meta = family_meta.assign(outcome_id=["case", "control"] * 5)
    meta.loc[3, "batch_id"] = None
    meta.loc[4, ["timepoint_id", "time_index"]] = None
    g = from_metadata(meta)
    spec = SplitSpec.from_partition(derive(g, "subject"), g)
    role = np.array(
        [[1, 1, 0, 0, 0, 0, 2, 0, 0, 0], [0, 0, 1, 1, 0, 2, 0, 0, 0, 0], [0, 0, 0, 0, 1, 1, 1, 1, 0, 2]], dtype=np.int8
    )
    return spec.with_folds(FoldPlan.from_roles(role, scheme="manual", folds_per_repeat=2))


@FORMS
def test_r_reads_the_samples_table(run_r, tmp_path, spec_with_folds, name):
    write_spec(spec_with_folds, tmp_path / name)
    result = run_r(
        f'spec <- read_depgraph_spec("{tmp_path / name}")\n'
        f'write.csv(spec, "{tmp_path / "from_r.csv"}", row.names = FALSE, na = "")\n'
        'cat(attr(spec, "depgraph")$constraint$mode, attr(spec, "depgraph")$digest, class(spec$order_rank), "\\n")',
    )
    assert result.returncode == 0, result.stderr
    mode, digest, rank_class = result.stdout.split()
    assert (mode, digest, rank_class) == ("subject", spec_with_folds.digest, "integer")
    from_r = pd.read_csv(tmp_path / "from_r.csv", dtype=str, keep_default_na=False)
    expected = spec_with_folds.samples
    assert from_r.columns.tolist() == expected.columns.tolist()
    for column in expected.columns:
        ours = ["" if pd.isna(v) else (str(int(v)) if isinstance(v, float) and float(v).is_integer() else str(v))
                for v in expected[column]]  # fmt: skip
        assert from_r[column].tolist() == ours, column


@FORMS
def test_r_builds_the_same_rsample_splits(run_r, tmp_path, spec_with_folds, name):
    write_spec(spec_with_folds, tmp_path / name)
    result = run_r(
        f'spec <- read_depgraph_spec("{tmp_path / name}")\n'
        "rset <- depgraph_rset(spec)\n"
        "out <- lapply(seq_along(rset$splits), function(i) list(id = rset$id[i],\n"
        "  analysis = rsample::analysis(rset$splits[[i]])$sample_id,\n"
        "  assessment = rsample::assessment(rset$splits[[i]])$sample_id))\n"
        f'writeLines(jsonlite::toJSON(out, auto_unbox = TRUE), "{tmp_path / "splits.json"}")\n'
        f'write.csv(depgraph_fold_table(spec), "{tmp_path / "table.csv"}", row.names = FALSE)',
    )
    assert result.returncode == 0, result.stderr
    splits = orjson.loads((tmp_path / "splits.json").read_bytes())
    ids = spec_with_folds.sample_ids
    role = spec_with_folds.folds.role_matrix(spec_with_folds.n_samples)
    assert [s["id"] for s in splits] == ["Repeat1_Fold1", "Repeat1_Fold2", "Repeat2_Fold1"]
    for i, split in enumerate(splits):
        assert split["analysis"] == ids[role[i] == 0].tolist()
        assert split["assessment"] == ids[role[i] == 1].tolist()
    table = pd.read_csv(tmp_path / "table.csv")
    assert table.columns.tolist() == ["sample_id", "repeat", "fold", "role"]
    assert (table["role"].value_counts().to_dict() ==
            {name: int((role == code).sum()) for code, name in enumerate(("train", "test", "excluded"))})  # fmt: skip


@FORMS
def test_r_matches_rows_of_the_users_data(run_r, tmp_path, spec_with_folds, name):
    write_spec(spec_with_folds, tmp_path / name)
    result = run_r(
        f'spec <- read_depgraph_spec("{tmp_path / name}")\n'
        "my <- data.frame(sample_id = rev(spec$sample_id), y = seq_len(nrow(spec)))\n"
        "rset <- depgraph_rset(spec, data = my)\n"
        "held <- rsample::assessment(rset$splits[[1]])\n"
        "cat(paste(held$sample_id, held$y, sep = '='), sep = ',')",
    )
    assert result.returncode == 0, result.stderr
    role = spec_with_folds.folds.role_matrix(spec_with_folds.n_samples)
    n = spec_with_folds.n_samples
    position = {sid: n - i for i, sid in enumerate(spec_with_folds.sample_ids)}  # my data is in reverse order
    expected = [f"{sid}={position[sid]}" for sid in spec_with_folds.sample_ids[role[0] == 1]]
    assert result.stdout.split(",") == expected


@pytest.mark.parametrize(
    "edit,message",
    [
        (lambda d: d.__setitem__("format_version", "2.0.0"), "format_version 2.0.0"),
        (lambda d: d.__setitem__("format", "something.else"), "not a depgraph split spec"),
        (lambda d: d["samples"]["group_id"].pop(), "unequal lengths"),
    ],
)
def test_r_refuses_what_it_cannot_trust(run_r, tmp_path, spec_with_folds, edit, message):
    doc = spec_document(spec_with_folds)
    edit(doc)
    (tmp_path / "bad.json").write_bytes(orjson.dumps(doc))
    result = run_r(f'read_depgraph_spec("{tmp_path / "bad.json"}")')
    assert result.returncode != 0 and message in result.stderr


def test_r_rebuilds_a_real_fold_plan(run_r, tmp_path, family_meta):
    from depgraph.folds.schemes import assign_folds

    g = from_metadata(family_meta)
    spec = assign_folds(SplitSpec.from_partition(derive(g, "subject"), g), "group-kfold", n_splits=3, n_repeats=2)
    write_spec(spec, tmp_path / "spec.json")
    result = run_r(
        f'rset <- depgraph_rset(read_depgraph_spec("{tmp_path / "spec.json"}"))\n'
        "for (i in seq_along(rset$splits)) cat(rset$id[i], paste(rsample::assessment(rset$splits[[i]])$sample_id,"
        " collapse = ','), '\\n')",
    )
    assert result.returncode == 0, result.stderr
    lines = [line.split() for line in result.stdout.strip().splitlines()]
    expected = [
        [f"Repeat{s.repeat + 1}_Fold{s.fold + 1}", ",".join(spec.sample_ids[s.test])] for s in spec.folds.splits
    ]
    assert lines == expected


@pytest.mark.parametrize(
    "where,key",
    [("top", "samples"), ("nested", "folds.splits[1].test")],
)
def test_r_refuses_an_object_that_repeats_a_key(run_r, tmp_path, spec_with_folds, where, key):
    text = spec_bytes(spec_with_folds)
    if where == "top":  # a decoy "samples" before the real one: R's `$` would read the decoy
        decoy = b'"samples": {"sample_id": ["X"], "group_id": ["X"]},\n  "samples": {'
        text = text.replace(b'"samples": {', decoy, 1)
    else:
        second = spec_with_folds.folds.splits[1].to_json_dict()
        plain = orjson.dumps(second)
        text = text.replace(plain, plain[:-1] + b',"test":[0]}', 1)
    assert text != spec_bytes(spec_with_folds)
    (tmp_path / "twice.json").write_bytes(text)
    result = run_r(f'read_depgraph_spec("{tmp_path / "twice.json"}")')
    assert result.returncode != 0 and f"repeats the key '{key}'" in result.stderr, result.stderr


def test_r_carries_the_signature_through(run_r, tmp_path, spec_with_folds):
    signed = spec_with_folds.signed("a key shared by the consortium, long enough")
    write_spec(signed, tmp_path / "signed.json")
    result = run_r(
        f'spec <- read_depgraph_spec("{tmp_path / "signed.json"}")\n'
        'meta <- attr(spec, "depgraph")\n'
        "cat(meta$signature$method, meta$signature$key_fingerprint, meta$signature$value, meta$digest)",
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.split() == [
        "hmac-sha256",
        signed.signature.key_fingerprint,
        signed.signature.value,
        signed.digest,
    ]


def test_r_refuses_a_columnar_spec_that_contradicts_itself(run_r, tmp_path, spec_with_folds):
    import pyarrow as pa
    import pyarrow.parquet as pq

    folder = tmp_path / "spec.dgspec"
    write_spec(spec_with_folds, folder)
    folds = pq.read_table(folder / "folds.parquet")
    wrong = folds.column("sample_id").to_pylist()
    wrong[0] = "not-this-one"
    pq.write_table(folds.set_column(3, "sample_id", pa.array(wrong)), folder / "folds.parquet")
    result = run_r(f'read_depgraph_spec("{folder}")')
    assert result.returncode != 0 and "names a sample its position does not hold" in result.stderr, result.stderr
    (folder / "manifest.json").unlink()
    result = run_r(f'read_depgraph_spec("{folder}")')
    assert result.returncode != 0 and "holds no manifest.json" in result.stderr, result.stderr


def tricky_spec() -> SplitSpec:
    """A spec whose columns hold every kind of value a spec's digest must spell exactly: integers beyond 32 bits
    and negative, floats from 5e-324 to 1e300, booleans and gaps, text with quotes, backslashes, control and
    non-ASCII characters, a column of gaps only, and sample ids of digits past R's integer range."""
    n = 8
    rng = np.random.default_rng(5)
    samples = pd.DataFrame({
        "sample_id": [f"{10_000_000_000 + i}" for i in range(n)],
        "group_id": ["a", "a", "b", 'q"uote', "back\\slash", "b", "é-ü-中", "a"],
        "label": ["tab\there", "line\nbreak", "ctl\x01\x1f", "\x7f", "\u2028", "/", "", None],
        "time_index": [5e-324, 1e-5, 1.5e-7, 6.0, 1e16, 123456.789, -0.0, 1e300],
        "count": pd.array([3_000_000_000, -7, 0, None, 2**53, -(2**40), 1, 2], dtype="Int64"),
        "flag": pd.array([True, False, None, True, True, False, None, False], dtype="boolean"),
        "score": rng.normal(size=n) * 10.0 ** rng.integers(-8, 20, size=n),
        "note": [None] * n,
    })  # fmt: skip
    return SplitSpec.build(samples, constraint=Constraint(mode="subject"), recommended_resampling="grouped_cv")


@FORMS
def test_r_recomputes_the_digest_of_every_kind_of_value(run_r, tmp_path, name):
    spec = tricky_spec()
    write_spec(spec, tmp_path / name)
    result = run_r(f'cat(attr(read_depgraph_spec("{tmp_path / name}"), "depgraph")$digest)')
    assert result.returncode == 0, result.stderr
    assert result.stdout == spec.digest
    doc = spec_document(spec)  # one value changed, the file's digest kept: R must notice
    doc["samples"]["count"][0] = 3_000_000_001
    (tmp_path / "edited.json").write_bytes(orjson.dumps(doc))
    result = run_r(f'read_depgraph_spec("{tmp_path / "edited.json"}")')
    assert result.returncode != 0 and "digest does not match the content" in result.stderr, result.stderr


def test_r_spells_numbers_as_depgraph_spells_them(run_r, tmp_path):
    rng = np.random.default_rng(2026)
    sign = rng.integers(0, 2, size=100_000, dtype=np.uint64) << np.uint64(63)
    bits = rng.integers(0, 2**63, size=100_000, dtype=np.uint64) | sign
    values = bits.view(np.float64)
    values = values[np.isfinite(values)]
    scaled = rng.normal(size=5_000) * 10.0 ** rng.integers(-6, 17, size=5_000)
    everyday = np.array([round(v, int(d)) for v, d in zip(scaled, rng.integers(0, 8, size=5_000), strict=True)])
    powers = [2.0**k for k in range(-1074, 1024)]  # where a double's neighbours are not equally far
    values = np.concatenate([values, everyday, powers, [0.1, 0.2, 0.3, 1 / 3, 2.0**53, 1e15, 1e16, 1e-5, 1e-6]])
    values.astype("<f8").tofile(tmp_path / "values.bin")
    result = run_r(
        f'v <- readBin("{tmp_path / "values.bin"}", "double", n = {len(values)}, size = 8, endian = "little")\n'
        f'writeLines(depgraphR:::depgraph_spell(v), "{tmp_path / "spelt.txt"}")'
    )
    assert result.returncode == 0, result.stderr
    spelt = (tmp_path / "spelt.txt").read_text().splitlines()
    expected = [orjson.dumps(float(v)).decode() for v in values]
    wrong = [(e, s) for e, s in zip(expected, spelt, strict=True) if e != s]
    assert not wrong, wrong[:5]


def test_r_names_the_ids_a_users_data_lacks(run_r, tmp_path, spec_with_folds):
    write_spec(spec_with_folds, tmp_path / "spec.json")
    result = run_r(
        f'spec <- read_depgraph_spec("{tmp_path / "spec.json"}")\n'
        "mine <- data.frame(sample_id = spec$sample_id[-1])\n"
        "e <- tryCatch(depgraph_rset(spec, data = mine), depgraph_error = function(e) e)\n"
        "cat(class(e)[1], e$code, conditionMessage(e), sep = '|')"
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.split("|") == [
        "depgraph_error_reference", "reference", f"data lacks 1 sample(s) of the spec: {spec_with_folds.sample_ids[0]}"
    ]  # fmt: skip


#: splitGraph 0.2.0's R sources, as released (its README.md says where from): installed for the test below.
SPLITGRAPH = REPO / "tests" / "data" / "splitgraph-0.2.0"


def splitgraph_library(tmp_path) -> str | None:
    """A library holding splitGraph 0.2.0, installed from :data:`SPLITGRAPH` (it needs R's igraph: Debian's
    r-cran-igraph, which CI installs); None where igraph is missing, and on CI that is a failure, not a skip."""
    has_igraph = subprocess.run([RSCRIPT, "-e", 'quit(status = !requireNamespace("igraph", quietly = TRUE))'],
                                capture_output=True).returncode == 0  # fmt: skip
    if not has_igraph:
        assert not os.environ.get("CI"), "CI must install R's igraph (r-cran-igraph) for splitGraph: .ci/run does"
        return None
    library = tmp_path / "splitgraph-library"
    library.mkdir()
    installed = subprocess.run(["R", "CMD", "INSTALL", "--no-test-load", "-l", str(library), str(SPLITGRAPH)],
                               capture_output=True, text=True, timeout=300)  # fmt: skip
    assert installed.returncode == 0, installed.stdout + installed.stderr
    return str(library)


def test_splitgraph_0_2_0_loads_the_spec_depgraph_exports_for_it(run_r, tmp_path, spec_with_folds, monkeypatch):
    """splitGraph 0.2.0, the release users install (installed from its sources kept with the tests), reads what
    ``depgraph export --to splitgraph`` writes, and takes depgraphR's conversion."""
    splitgraph = splitgraph_library(tmp_path)
    if splitgraph is None:
        pytest.skip("R's igraph is not installed (splitGraph needs it; CI installs r-cran-igraph)")
    monkeypatch.setenv("R_LIBS", os.pathsep.join(p for p in (splitgraph, os.environ.get("R_LIBS", "")) if p))
    write_spec(spec_with_folds, tmp_path / "spec.json")
    exported = subprocess.run(
        [sys.executable, "-m", "depgraph", "export", str(tmp_path / "spec.json"), "--to", "splitgraph",
         "-o", str(tmp_path / "splitgraph.json")], capture_output=True, text=True,
    )  # fmt: skip
    assert exported.returncode == 0, exported.stderr
    result = run_r(
        'stopifnot(packageVersion("splitGraph") == "0.2.0")\n'
        f'loaded <- splitGraph::read_split_spec("{tmp_path / "splitgraph.json"}")\n'
        f'converted <- depgraph_as_split_spec(read_depgraph_spec("{tmp_path / "spec.json"}"))\n'
        "for (x in list(loaded, converted)) cat(class(x)[1], splitGraph::validate_split_spec(x)$valid,\n"
        "  paste(x$sample_data$group_id, collapse = ','), '\\n')"
    )
    assert result.returncode == 0, result.stderr
    groups = ",".join(spec_with_folds.samples["group_id"].astype(str))
    assert [line.split() for line in result.stdout.strip().splitlines()] == [["split_spec", "TRUE", groups]] * 2


@pytest.mark.slow
def test_r_cmd_check_passes_without_error_or_warning(tmp_path):
    """``R CMD build`` then ``R CMD check --no-manual``: the help pages, examples and the package's testthat tests."""
    env = {**os.environ, "_R_CHECK_FORCE_SUGGESTS_": "false", "RETICULATE_PYTHON": sys.executable}
    built = subprocess.run(["R", "CMD", "build", "--no-build-vignettes", str(PACKAGE)], cwd=tmp_path,
                           capture_output=True, text=True, timeout=300, env=env)  # fmt: skip
    assert built.returncode == 0, built.stdout + built.stderr
    (tarball,) = tmp_path.glob("depgraphR_*.tar.gz")
    checked = subprocess.run(["R", "CMD", "check", "--no-manual", tarball.name], cwd=tmp_path,
                             capture_output=True, text=True, timeout=600, env=env)  # fmt: skip
    log = checked.stdout + checked.stderr
    assert checked.returncode == 0, log
    status = [line for line in log.splitlines() if line.startswith("Status:")]
    assert status and "ERROR" not in status[0] and "WARNING" not in status[0], log


def test_the_r_reader_benchmark_runs(r_library, tmp_path):
    from pathlib import Path

    from benchmarks.bench_r_reader import measure

    row = measure(2000, 1, tmp_path, Path(r_library))
    assert row["n_samples"] == 2000 and all(row[k] >= 0 for k in ("r_json_s", "r_columnar_s", "python_json_s"))


def test_r_refuses_a_signed_spec_forged_with_comments(run_r, tmp_path):
    """jsonlite takes comments; a comment once let a forged value and swapped fold labels pass a signed spec's check
    (each number written as an integer was spelt from the text as written). Strict JSON is required first."""
    key = "1c64c254cafad75cc8016d840ba06c8f7492bf98b92d1f0057b00e19c6b04b7e"
    spec = SplitSpec.build(
        pd.DataFrame({"sample_id": ["S1", "S2", "S3", "S4"], "group_id": list("aabc"), "age": [34, 50, 61, 70]}),
        constraint=Constraint(mode="subject"), recommended_resampling="grouped_cv",
    ).signed(key)  # fmt: skip
    text = spec_bytes(spec).decode()
    forged = text.replace('"age": [34,', '"age": [/*34*//*"*/99.5/*"*/,').replace(
        '"largest_group_size": 2,', '"largest_group_size": /*2*//*"*/3e9/*"*/,'
    )  # the age 99.5 is spelt from the text as 34, the 3e9 from "2": the same digest
    assert forged.count("/*") == 6
    (tmp_path / "forged.json").write_text(forged)
    result = run_r(
        f'e <- tryCatch(read_depgraph_spec("{tmp_path / "forged.json"}", verify_key = "{key}"),\n'
        "  error = function(e) e)\ncat(class(e)[1])"
    )
    assert result.returncode == 0 and result.stdout == "depgraph_error_parse", result.stdout + result.stderr


def columnar_refusal(run_r, folder) -> str:
    result = run_r(
        f'e <- tryCatch(read_depgraph_spec("{folder}"), error = function(e) e)\ncat(class(e)[1], conditionMessage(e))'
    )
    assert result.returncode == 0, result.stderr
    return result.stdout


def test_r_refuses_columnar_tables_python_would_refuse(run_r, tmp_path, spec_with_folds):
    import pyarrow as pa
    import pyarrow.parquet as pq

    base = tmp_path / "spec.dgspec"
    write_spec(spec_with_folds, base)
    samples = pq.read_table(base / "samples.parquet")
    # parts of one table with different types: rbind would coerce them and the digest read them as the first part's
    parts = tmp_path / "parts.dgspec"
    shutil.copytree(base, parts)
    (parts / "samples.parquet").unlink()
    (parts / "samples.parquet").mkdir()
    pq.write_table(samples.slice(0, 1), parts / "samples.parquet" / "part-0.parquet")
    rest = samples.slice(1)
    at = rest.column_names.index("time_index")
    rest = rest.set_column(at, "time_index", pa.array([str(v) for v in rest.column("time_index").to_pylist()]))
    pq.write_table(rest, parts / "samples.parquet" / "part-1.parquet")
    assert columnar_refusal(run_r, parts).startswith("depgraph_error_schema") and "one schema" in columnar_refusal(
        run_r, parts
    )
    # NaN where a value is missing: null, not NaN
    nan = tmp_path / "nan.dgspec"
    shutil.copytree(base, nan)
    values = samples.column("time_index").to_pylist()
    values[0] = float("nan")
    pq.write_table(samples.set_column(samples.column_names.index("time_index"), "time_index", pa.array(values)),
                   nan / "samples.parquet")  # fmt: skip
    assert columnar_refusal(run_r, nan).startswith("depgraph_error_schema")
    # fold positions that are not integers
    floats = tmp_path / "floats.dgspec"
    shutil.copytree(base, floats)
    folds = pq.read_table(base / "folds.parquet")
    position = folds.column("position").cast(pa.float64())
    pq.write_table(folds.set_column(2, "position", position), floats / "folds.parquet")
    assert columnar_refusal(run_r, floats).startswith("depgraph_error_schema")


def test_r_refuses_integers_it_cannot_hold_exactly(run_r, tmp_path):
    spec = SplitSpec.build(
        pd.DataFrame({"sample_id": ["S1", "S2"], "group_id": ["a", "b"], "eid": [2**53 + 1, 5]}),
        constraint=Constraint(mode="subject"), recommended_resampling="grouped_cv",
    )  # fmt: skip
    write_spec(spec, tmp_path / "wide.json")
    result = run_r(
        f'e <- tryCatch(read_depgraph_spec("{tmp_path / "wide.json"}"), error = function(e) e)\n'
        "cat(class(e)[1], conditionMessage(e))"
    )
    assert result.stdout.startswith("depgraph_error_invalid_value") and str(2**53 + 1) in result.stdout, result.stdout


def r_reads(run_r, path, code: str = "cat('read')") -> str:
    """What R says of reading ``path``: the condition's class and message, or what ``code`` prints of ``spec``."""
    result = run_r(
        f'spec <- tryCatch(read_depgraph_spec("{path}"), error = function(e) e)\n'
        f"if (inherits(spec, 'error')) cat(class(spec)[1], conditionMessage(spec)) else {{ {code} }}"
    )
    assert result.returncode == 0 and not result.stderr, result.stderr
    return result.stdout


def rehashed(spec: SplitSpec, edit, path) -> None:
    """``spec``'s document edited and its digest recomputed: only the content's own checks can refuse it."""
    from depgraph.spec.digest import content_digest

    doc = spec_document(spec)
    edit(doc)
    doc["digest"] = content_digest(doc)
    path.write_bytes(orjson.dumps(doc))


@pytest.mark.parametrize(
    "edit,refusal",
    [
        (lambda d: d["samples"]["group_id"].__setitem__(0, "e\u0301"), "depgraph_error_ambiguity"),
        (
            lambda d: d["samples"]["sample_id"].__setitem__(0, d["samples"]["sample_id"][0] + "\u200b"),
            "depgraph_error_invalid_value",
        ),
        (lambda d: d["summary"].__setitem__("largest_group", "zzz"), "depgraph_error_integrity"),
    ],
    ids=["group-twins", "invisible-character", "largest-group"],
)
def test_r_refuses_ids_and_summaries_python_refuses(run_r, tmp_path, spec_with_folds, edit, refusal):
    groups = spec_with_folds.samples["group_id"].astype(str).tolist()

    def with_twin(doc):  # "é" composed in one group, decomposed in the first sample's
        doc["samples"]["group_id"] = ["\u00e9" if g == groups[-1] else g for g in groups]
        doc["summary"]["largest_group"] = min(doc["samples"]["group_id"])
        edit(doc)

    rehashed(spec_with_folds, with_twin if "ambiguity" in refusal else edit, tmp_path / "edited.json")
    assert r_reads(run_r, tmp_path / "edited.json").startswith(refusal)


def test_r_reads_what_python_reads_of_wide_ranks_and_escaped_pairs(run_r, tmp_path):
    key = "1c64c254cafad75cc8016d840ba06c8f7492bf98b92d1f0057b00e19c6b04b7e"
    spec = SplitSpec.build(
        pd.DataFrame({"sample_id": ["S1", "S2", "S3"], "group_id": list("abc"), "order_rank": [1, 2, 3_000_000_000],
                      "note": ["\U0001f600", "x", "y"]}),
        constraint=Constraint(mode="subject"), recommended_resampling="grouped_cv",
    ).signed(key)  # fmt: skip
    write_spec(spec, tmp_path / "spec.json")
    write_spec(spec, tmp_path / "spec.dgspec")
    escaped = json.dumps(json.loads((tmp_path / "spec.json").read_text()))  # ASCII only: the emoji as a pair
    assert "\\ud83d\\ude00" in escaped
    (tmp_path / "escaped.json").write_text(escaped)
    for name in ("spec.json", "spec.dgspec", "escaped.json"):
        shown = r_reads(run_r, tmp_path / name, "cat(format(spec$order_rank, scientific = FALSE), spec$note[1])")
        assert shown.split() == ["1", "2", "3000000000", "\U0001f600"], (name, shown)


def test_r_reads_parts_as_python_does_and_refuses_what_it_refuses(run_r, tmp_path, spec_with_folds):
    import pyarrow as pa
    import pyarrow.parquet as pq

    base = tmp_path / "spec.dgspec"
    write_spec(spec_with_folds, base)
    samples, folds = pq.read_table(base / "samples.parquet"), pq.read_table(base / "folds.parquet")

    def variant(name: str, samples_parts: dict | None = None, folds_table=None, extra: str | None = None):
        folder = tmp_path / name
        shutil.copytree(base, folder)
        if samples_parts is not None:
            (folder / "samples.parquet").unlink()
            (folder / "samples.parquet").mkdir()
            for part, table in samples_parts.items():
                pq.write_table(table, folder / "samples.parquet" / part)
        if isinstance(folds_table, dict):  # parts
            (folder / "folds.parquet").unlink()
            (folder / "folds.parquet").mkdir()
            for part, table in folds_table.items():
                pq.write_table(table, folder / "folds.parquet" / part)
        elif folds_table is not None:
            pq.write_table(folds_table, folder / "folds.parquet")
        if extra:
            (folder / extra).write_text("x")
        return r_reads(run_r, folder, "cat(attr(spec, 'depgraph')$digest)")

    parts = {
        "B.parquet": samples.slice(0, 3),
        "_hidden.parquet": samples.slice(0, 2),
        "a.parquet": samples.slice(3),
        "c.parquet": samples.slice(0, 0),
    }  # byte order B, a, c; the hidden part skipped; an empty part
    assert variant("parts.dgspec", samples_parts=parts) == spec_with_folds.digest
    empty_first = {"0.parquet": folds.slice(0, 0), "1.parquet": folds}
    assert variant("empty-folds-part.dgspec", folds_table=empty_first) == spec_with_folds.digest
    reordered = folds.take(pa.array(list(range(len(folds)))[::-1]))
    assert variant("reordered.dgspec", folds_table=reordered).startswith("depgraph_error_schema")
    assert variant("extra.dgspec", extra="notes.txt").startswith("depgraph_error_schema")
    at = samples.column_names.index("time_index")
    narrow = samples.set_column(at, "time_index", samples.column("time_index").cast(pa.float32()))
    assert variant("float32.dgspec", samples_parts={"p.parquet": narrow}).startswith("depgraph_error_schema")
