"""The R reader (adapters/r) loads what Python wrote: the data.frame and every rsample split."""

from __future__ import annotations

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
from depgraph.spec.model import FoldPlan, SplitSpec
from tests.conftest import REPO

RSCRIPT = shutil.which("Rscript")
if RSCRIPT is None and os.environ.get("CI"):
    raise RuntimeError("CI must install R (r-base-core, r-cran-jsonlite, r-cran-rsample): .ci/run does")
pytestmark = pytest.mark.skipif(RSCRIPT is None, reason="Rscript not installed (CI installs it)")
READER = REPO / "adapters" / "r" / "depgraph.R"


def run_r(code: str, tmp_path) -> subprocess.CompletedProcess:
    script = tmp_path / "probe.R"
    script.write_text(f'source("{READER}")\n{code}\n')
    # a columnar spec's Parquet tables: R's arrow when installed, else this Python's pyarrow through reticulate
    env = {**os.environ, "RETICULATE_PYTHON": sys.executable}
    return subprocess.run([RSCRIPT, "--vanilla", str(script)], capture_output=True, text=True, timeout=120, env=env)


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
def test_r_reads_the_samples_table(tmp_path, spec_with_folds, name):
    write_spec(spec_with_folds, tmp_path / name)
    result = run_r(
        f'spec <- read_depgraph_spec("{tmp_path / name}")\n'
        f'write.csv(spec, "{tmp_path / "from_r.csv"}", row.names = FALSE, na = "")\n'
        'cat(attr(spec, "depgraph")$constraint$mode, attr(spec, "depgraph")$digest, class(spec$order_rank), "\\n")',
        tmp_path,
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
def test_r_builds_the_same_rsample_splits(tmp_path, spec_with_folds, name):
    write_spec(spec_with_folds, tmp_path / name)
    result = run_r(
        f'spec <- read_depgraph_spec("{tmp_path / name}")\n'
        "rset <- depgraph_rset(spec)\n"
        "out <- lapply(seq_along(rset$splits), function(i) list(id = rset$id[i],\n"
        "  analysis = rsample::analysis(rset$splits[[i]])$sample_id,\n"
        "  assessment = rsample::assessment(rset$splits[[i]])$sample_id))\n"
        f'writeLines(jsonlite::toJSON(out, auto_unbox = TRUE), "{tmp_path / "splits.json"}")\n'
        f'write.csv(depgraph_fold_table(spec), "{tmp_path / "table.csv"}", row.names = FALSE)',
        tmp_path,
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
def test_r_matches_rows_of_the_users_data(tmp_path, spec_with_folds, name):
    write_spec(spec_with_folds, tmp_path / name)
    result = run_r(
        f'spec <- read_depgraph_spec("{tmp_path / name}")\n'
        "my <- data.frame(sample_id = rev(spec$sample_id), y = seq_len(nrow(spec)))\n"
        "rset <- depgraph_rset(spec, data = my)\n"
        "held <- rsample::assessment(rset$splits[[1]])\n"
        "cat(paste(held$sample_id, held$y, sep = '='), sep = ',')",
        tmp_path,
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
def test_r_refuses_what_it_cannot_trust(tmp_path, spec_with_folds, edit, message):
    doc = spec_document(spec_with_folds)
    edit(doc)
    (tmp_path / "bad.json").write_bytes(orjson.dumps(doc))
    result = run_r(f'read_depgraph_spec("{tmp_path / "bad.json"}")', tmp_path)
    assert result.returncode != 0 and message in result.stderr


def test_r_rebuilds_a_real_fold_plan(tmp_path, family_meta):
    from depgraph.folds.schemes import assign_folds

    g = from_metadata(family_meta)
    spec = assign_folds(SplitSpec.from_partition(derive(g, "subject"), g), "group-kfold", n_splits=3, n_repeats=2)
    write_spec(spec, tmp_path / "spec.json")
    result = run_r(
        f'rset <- depgraph_rset(read_depgraph_spec("{tmp_path / "spec.json"}"))\n'
        "for (i in seq_along(rset$splits)) cat(rset$id[i], paste(rsample::assessment(rset$splits[[i]])$sample_id,"
        " collapse = ','), '\\n')",
        tmp_path,
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
def test_r_refuses_an_object_that_repeats_a_key(tmp_path, spec_with_folds, where, key):
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
    result = run_r(f'read_depgraph_spec("{tmp_path / "twice.json"}")', tmp_path)
    assert result.returncode != 0 and f"repeats the key '{key}'" in result.stderr, result.stderr


def test_r_carries_the_signature_through(tmp_path, spec_with_folds):
    signed = spec_with_folds.signed("a key shared by the consortium, long enough")
    write_spec(signed, tmp_path / "signed.json")
    result = run_r(
        f'spec <- read_depgraph_spec("{tmp_path / "signed.json"}")\n'
        'meta <- attr(spec, "depgraph")\n'
        "cat(meta$signature$method, meta$signature$key_fingerprint, meta$signature$value, meta$digest)",
        tmp_path,
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.split() == [
        "hmac-sha256",
        signed.signature.key_fingerprint,
        signed.signature.value,
        signed.digest,
    ]


def test_r_refuses_a_columnar_spec_that_contradicts_itself(tmp_path, spec_with_folds):
    import pyarrow as pa
    import pyarrow.parquet as pq

    folder = tmp_path / "spec.dgspec"
    write_spec(spec_with_folds, folder)
    folds = pq.read_table(folder / "folds.parquet")
    wrong = folds.column("sample_id").to_pylist()
    wrong[0] = "not-this-one"
    pq.write_table(folds.set_column(3, "sample_id", pa.array(wrong)), folder / "folds.parquet")
    result = run_r(f'read_depgraph_spec("{folder}")', tmp_path)
    assert result.returncode != 0 and "names a sample its position does not hold" in result.stderr, result.stderr
    (folder / "manifest.json").unlink()
    result = run_r(f'read_depgraph_spec("{folder}")', tmp_path)
    assert result.returncode != 0 and "holds no manifest.json" in result.stderr, result.stderr
