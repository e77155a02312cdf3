"""Flat tables: the samples table and the long fold table, as CSV and Parquet."""

from __future__ import annotations

import pandas as pd
import pytest

from depgraph import DepgraphError
from depgraph.adapters.frames import fold_table, samples_table, write_table
from depgraph.cli.main import main
from depgraph.folds.schemes import assign_folds
from depgraph.spec.files import write_spec
from depgraph.spec.model import Constraint, SplitSpec


@pytest.fixture
def spec():
    frame = pd.DataFrame({"sample_id": [f"s{i}" for i in range(9)], "group_id": [f"g{i // 3}" for i in range(9)]})
    s = SplitSpec.build(frame, constraint=Constraint(mode="subject"), recommended_resampling="grouped_cv")
    return assign_folds(s, "group-kfold", n_splits=3, n_repeats=2)


@pytest.mark.parametrize("suffix", [".csv", ".tsv", ".parquet"])
def test_fold_table_round_trips_in_every_format(tmp_path, spec, suffix):
    table = fold_table(spec)
    assert len(table) == 9 * 6 and table.groupby(["repeat", "fold"]).size().eq(9).all()
    assert (table[table["role"] == "test"].groupby("repeat").size() == 9).all()
    path = tmp_path / f"folds{suffix}"
    write_table(table, path)
    back = pd.read_parquet(path) if suffix == ".parquet" else pd.read_csv(path, sep="\t" if suffix == ".tsv" else ",")
    assert back["sample_id"].tolist() == table["sample_id"].tolist()
    assert back["role"].astype(str).tolist() == table["role"].astype(str).tolist()


def test_samples_table_and_refusals(tmp_path, spec):
    assert samples_table(spec).columns.tolist() == ["sample_id", "group_id"]
    with pytest.raises(DepgraphError):
        write_table(samples_table(spec), tmp_path / "x.xlsx")
    with pytest.raises(DepgraphError):
        fold_table(spec.with_folds(None))


# --------------------------------------------------------------------------- --excel-safe
#: Ids a spreadsheet would run as formulas. OWASP's rule also names a leading tab or carriage return; ids holding
#: those are refused by every reader (tests/test_ids.py), so no spec can carry one to an export.
FORMULAS = ["=1+1", "+44", "-1", "@SUM(A1)", '=HYPERLINK("x")']


def _risky_spec() -> SplitSpec:
    ids = sorted(["S1", "a=b", *FORMULAS])
    frame = pd.DataFrame(
        {
            "sample_id": ids,
            "group_id": [f"subject:{i}" for i in range(len(ids))],
            "batch_group": ["=B"] * len(ids),
            "time_index": [-1.5] * len(ids),
        }
    )
    s = SplitSpec.build(frame, constraint=Constraint(mode="subject"), recommended_resampling="grouped_cv")
    return assign_folds(s, "group-kfold", n_splits=2)


def test_exports_keep_formula_like_ids_exact(tmp_path):
    spec = _risky_spec()
    write_table(samples_table(spec), tmp_path / "s.csv")
    back = pd.read_csv(tmp_path / "s.csv", dtype=str, keep_default_na=False)
    assert back["sample_id"].tolist() == spec.samples["sample_id"].tolist()  # fidelity is the contract


@pytest.mark.parametrize("suffix", [".csv", ".tsv"])
def test_excel_safe_prefixes_exactly_the_cells_a_spreadsheet_would_run(tmp_path, suffix):
    spec = _risky_spec()
    path = tmp_path / f"s{suffix}"
    write_table(samples_table(spec), path, excel_safe=True)
    back = pd.read_csv(path, sep="\t" if suffix == ".tsv" else ",", dtype=str, keep_default_na=False)
    expected = ["'" + i if i[:1] in "=+-@\t\r" else i for i in spec.samples["sample_id"]]  # OWASP's rule, by hand
    assert back["sample_id"].tolist() == expected
    assert set(back["batch_group"]) == {"'=B"} and set(back["time_index"]) == {"-1.5"}  # numbers stay numbers
    assert back["group_id"].tolist() == spec.samples["group_id"].tolist()
    table = fold_table(spec)
    write_table(table, tmp_path / f"f{suffix}", excel_safe=True)
    folds = pd.read_csv(
        tmp_path / f"f{suffix}", sep="\t" if suffix == ".tsv" else ",", dtype=str, keep_default_na=False
    )
    assert (
        folds["sample_id"].tolist() == ["'" + i if i[:1] in "=+-@\t\r" else i for i in table["sample_id"]]
        and folds["role"].tolist() == table["role"].astype(str).tolist()
    )


def test_excel_safe_is_refused_for_parquet(tmp_path):
    with pytest.raises(DepgraphError) as err:
        write_table(samples_table(_risky_spec()), tmp_path / "s.parquet", excel_safe=True)
    assert err.value.code == "invalid_argument" and "--excel-safe" in err.value.message
    assert not (tmp_path / "s.parquet").exists()


def test_export_excel_safe_on_the_command_line(tmp_path, capsys):
    write_spec(_risky_spec(), tmp_path / "spec.json")
    assert (
        main(["export", str(tmp_path / "spec.json"), "--to", "csv", "--excel-safe", "-o", str(tmp_path / "s.csv")]) == 0
    )
    assert "prefixed with '" in capsys.readouterr().out
    assert "'=1+1" in pd.read_csv(tmp_path / "s.csv", dtype=str)["sample_id"].tolist()
    assert main(["export", str(tmp_path / "spec.json"), "--to", "fold-table", "--excel-safe", "-o",
                 str(tmp_path / "f.tsv")]) == 0  # fmt: skip
    for to, name in (("parquet", "s.parquet"), ("splitgraph", "s.json"), ("fold-table", "f.parquet")):
        assert (
            main(["export", str(tmp_path / "spec.json"), "--to", to, "--excel-safe", "-o", str(tmp_path / name)]) == 2
        )
        assert "--excel-safe" in capsys.readouterr().err and not (tmp_path / name).exists()


def test_validate_spec_prints_the_formula_advisory(tmp_path, capsys):
    write_spec(_risky_spec(), tmp_path / "spec.json")
    capsys.readouterr()
    assert main(["validate", str(tmp_path / "spec.json")]) == 0
    out = capsys.readouterr().out
    assert "advisory formula_like_ids" in out and "sample_id '+44', '-1', '=1+1' and 2 more" in out
    assert "batch_group '=B', '=B', '=B' and 4 more" in out and "time_index" not in out
