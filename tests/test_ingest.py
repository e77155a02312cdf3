"""Metadata tables in every shape a study team has them."""

from __future__ import annotations

import io

import numpy as np
import pandas as pd
import polars as pl
import pyarrow as pa
import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from depgraph import DepgraphError, add_duplicates, add_kinship, add_spatial, derive, from_metadata
from depgraph.common.identifiers import normalise_keys
from depgraph.graph.files import graph_bytes
from depgraph.ingest.kinship import resolve_threshold


def test_keys_are_text_normalised_once():
    values = pd.Series([1, 1.0, "1", " 1 ", "01", 2.5, None, "", np.nan, True], dtype=object)
    assert normalise_keys(values).tolist() == ["1", "1", "1", "1", "01", "2.5", None, None, None, "True"]
    assert normalise_keys(pd.Series([3, 4], dtype="int64")).tolist() == ["3", "4"]
    assert normalise_keys(pd.Series([3.0, None], dtype="float64")).tolist() == ["3", None]
    assert normalise_keys(pd.Series([7, None], dtype="Int64")).tolist() == ["7", None]


def test_integer_subject_ids_match_their_text_spelling():
    meta = pd.DataFrame({"sample_id": ["S1", "S2"], "subject_id": pd.Series([1, "1"], dtype=object)})
    assert derive(from_metadata(meta), "subject").groups() == {"S1": "subject:1", "S2": "subject:1"}


def test_column_map_renames_user_columns():
    meta = pd.DataFrame({"specimen": ["S1", "S2"], "patient": ["P1", "P1"]})
    g = from_metadata(meta, {"sample_id": "specimen", "subject_id": "patient"})
    assert g.relation_counts() == {"sample_belongs_to_subject": 2}


def test_column_map_clash_is_ambiguous():
    meta = pd.DataFrame({"sample_id": ["S1"], "subject_id": ["P1"], "patient": ["P9"]})
    with pytest.raises(DepgraphError) as err:
        from_metadata(meta, {"subject_id": "patient"})
    assert err.value.code == "ambiguity"


@pytest.mark.parametrize("kind", ["polars", "pyarrow"])
def test_polars_and_pyarrow_tables(kind):
    data = {"sample_id": ["S1", "S2"], "batch_id": ["B1", "B1"]}
    table = pl.DataFrame(data) if kind == "polars" else pa.table(data)
    assert derive(from_metadata(table), "batch").n_groups == 1


@pytest.mark.parametrize("suffix", [".csv", ".tsv", ".parquet"])
def test_paths_in_three_formats(tmp_path, suffix):
    frame = pd.DataFrame({"sample_id": ["01", "1"], "subject_id": ["P01", "P01"]})
    path = tmp_path / f"meta{suffix}"
    if suffix == ".parquet":
        frame.to_parquet(path)
    else:
        frame.to_csv(path, sep="\t" if suffix == ".tsv" else ",", index=False)
    g = from_metadata(path)
    assert g.sample_ids.tolist() == ["01", "1"]  # "01" keeps its spelling


def test_csv_missing_tokens_mean_missing(tmp_path):
    path = tmp_path / "meta.csv"
    path.write_text("sample_id,batch_id\nS1,B1\nS2,NA\nS3,\nS4, B1 \n")
    p = derive(from_metadata(path), "batch")
    assert p.groups() == {"S1": "batch:B1", "S2": "batch:unlinked:S2", "S3": "batch:unlinked:S3", "S4": "batch:B1"}


def test_identical_repeated_rows_collapse_and_multi_valued_columns_accumulate():
    meta = pd.DataFrame(
        {
            "sample_id": ["S1", "S1", "S1", "S2"],
            "subject_id": ["P1", "P1", "P1", "P2"],
            "featureset_id": ["F1", "F2", "F1", "F1"],
            "outcome_id": ["case", "case", None, "control"],
        }
    )
    g = from_metadata(meta)
    assert g.count("Sample") == 2
    assert g.relation_counts() == {
        "sample_belongs_to_subject": 2,
        "sample_uses_featureset": 3,
        "sample_has_outcome": 2,
    }


def test_a_value_missing_in_one_repeated_row_is_taken_from_the_other():
    meta = pd.DataFrame({"sample_id": ["S1", "S1"], "batch_id": ["B1", None], "featureset_id": ["F1", "F2"]})
    assert derive(from_metadata(meta), "batch").groups() == {"S1": "batch:B1"}


def test_tied_time_index_values_are_ties_not_errors():
    meta = pd.DataFrame(
        {
            "sample_id": ["a", "b", "c", "d"],
            "timepoint_id": ["screening", "baseline", "m6", "m12"],
            "time_index": [0, 0, 6, 12],
        }
    )
    g = from_metadata(meta)
    src, dst, _ = g.relation_edges("timepoint_precedes")
    keys = g.nodes["key"].to_numpy()
    assert sorted(zip(keys[src], keys[dst], strict=True)) == [("baseline", "m6"), ("m6", "m12"), ("screening", "m6")]
    p = derive(g, "time")
    ranks = dict(zip(p.samples["sample_id"], p.samples["order_rank"].astype(int), strict=True))
    assert ranks == {"a": 1, "b": 1, "c": 2, "d": 3}


def test_time_index_alone_names_timepoints():
    g = from_metadata(pd.DataFrame({"sample_id": ["a", "b"], "time_index": [3, 3.5]}))
    assert g.keys("Timepoint").tolist() == ["3", "3.5"]
    assert derive(g, "time").groups() == {"a": "time:3", "b": "time:3.5"}


def test_outcomes_can_belong_to_subjects():
    meta = pd.DataFrame({"sample_id": ["S1", "S2"], "subject_id": ["P1", "P1"], "outcome_id": ["case", "case"]})
    g = from_metadata(meta, outcome_scope="subject")
    assert g.relation_counts() == {"sample_belongs_to_subject": 2, "subject_has_outcome": 1}


def test_other_columns_are_kept_as_sample_attributes():
    meta = pd.DataFrame({"sample_id": ["S2", "S1"], "sex": ["m", "f"], "age": [40, 51]})
    g = from_metadata(meta)
    start, stop = g.type_range("Sample")
    assert g.attributes["sex"].iloc[start:stop].tolist() == ["f", "m"]
    assert g.attributes["age"].iloc[start:stop].tolist() == [51, 40]


def test_conflicting_attribute_values_for_one_sample_are_named():
    meta = pd.DataFrame({"sample_id": ["S1", "S1"], "featureset_id": ["F1", "F2"], "sex": ["f", "m"]})
    with pytest.raises(DepgraphError) as err:
        from_metadata(meta)
    assert err.value.code == "ambiguity" and "S1" in err.value.message and "sex" in err.value.message


def test_named_thresholds():
    assert resolve_threshold("third") == (0.0442, "third")
    assert resolve_threshold("0.2") == (0.2, None)
    with pytest.raises(DepgraphError):
        resolve_threshold(1.5)


# --------------------------------------------------------------------------- tables as people export them (issue 11)
# One cohort, written the ways spreadsheets and scripts write it. Expected values are the cohort's own, typed by hand.
COHORT = pd.DataFrame(
    {
        "sample_id": ["S1", "S2", "S3", "S4"],
        "subject_id": ["P1", "P1", "P2", "P3"],
        "timepoint_id": ["T0", "T1", "T0", "T0"],
        "time_index": [0.0, 0.5, 0.0, 0.0],
        "site name": ["Lyon Sud", "Lyon Sud", "Graz", "Graz"],
        "age": [30, 31, 40, 50],
        "weight": [0.25, 1.5, 72.0, 80.5],
        "smoker": [True, False, False, True],
    }
)


def _sample_attributes(graph) -> dict[str, list]:
    start, stop = graph.type_range("Sample")
    block = graph.attributes.iloc[start:stop]
    # one attribute frame covers every node type: a column that holds no value for samples (time_index) is not theirs
    return {
        c: block[c].astype(object).where(block[c].notna(), None).tolist()
        for c in block.columns
        if block[c].notna().any()
    }


def _text(frame: pd.DataFrame, delimiter: str, decimal: str = ".") -> str:
    """The frame as a spreadsheet writes it: booleans as TRUE/FALSE, numbers with ``decimal``."""

    def cell(value) -> str:
        if isinstance(value, (bool, np.bool_)):
            return "TRUE" if value else "FALSE"
        text = repr(float(value)) if isinstance(value, float) else str(value)
        if isinstance(value, float) and text.endswith(".0"):
            text = text[:-2]  # a spreadsheet writes 72, not 72.0
        return text.replace(".", decimal) if isinstance(value, (int, float)) else text

    rows = [delimiter.join(frame.columns)] + [delimiter.join(cell(v) for v in row) for row in frame.itertuples(False)]
    return "\n".join(rows) + "\n"


@pytest.mark.parametrize("delimiter", [",", ";", "\t", "|"], ids=["comma", "semicolon", "tab", "pipe"])
@pytest.mark.parametrize("suffix", [".csv", ".tsv", ".txt", ".dat"])
@pytest.mark.parametrize("bom", [False, True], ids=["utf8", "bom"])
def test_the_delimiter_is_read_from_the_header(tmp_path, delimiter, suffix, bom):
    path = tmp_path / f"cohort{suffix}"
    decimal = "," if delimiter == ";" else "."  # a European Excel writes decimal commas in its ';' files
    path.write_bytes((b"\xef\xbb\xbf" if bom else b"") + _text(COHORT, delimiter, decimal).encode())
    graph = from_metadata(path)
    assert graph.relation_counts() == {
        "sample_belongs_to_subject": 4,
        "sample_collected_at_timepoint": 4,
        "timepoint_precedes": 1,
    }
    assert _sample_attributes(graph) == {
        "site name": ["Lyon Sud", "Lyon Sud", "Graz", "Graz"],
        "age": [30, 31, 40, 50],
        "weight": [0.25, 1.5, 72.0, 80.5],
        "smoker": [True, False, False, True],
    }
    assert graph_bytes(graph) == graph_bytes(from_metadata(COHORT))


def test_a_european_excel_csv_with_a_comma_in_a_column_name(tmp_path):
    path = tmp_path / "cohort.csv"
    path.write_text(
        "sample_id;subject_id;weight (kg, at entry);time_index;timepoint_id\n"
        "S1;P1;0,25;0;T0\nS2;P1;1,5;0,5;T1\nS3;P2;72;0;T0\n",
        encoding="utf-8",
    )
    graph = from_metadata(path)
    assert _sample_attributes(graph) == {"weight (kg, at entry)": [0.25, 1.5, 72.0]}
    start, stop = graph.type_range("Timepoint")
    assert graph.attributes["time_index"].iloc[start:stop].tolist() == [0.0, 0.5]


def test_decimal_commas_in_every_semicolon_table_build_reads(tmp_path):
    meta = from_metadata(pd.DataFrame({"sample_id": ["S1", "S2", "S3"], "subject_id": ["P1", "P2", "P3"]}))
    kinship = tmp_path / "kinship.csv"
    kinship.write_text("id1;id2;kinship\nP1;P2;0,25\nP2;P3;0,01\n")
    assert add_kinship(meta, kinship, "first").relation_counts()["subject_related_to"] == 1
    coords = tmp_path / "coords.csv"
    coords.write_text("sample_id;x;y\nS1;0,5;0\nS2;1,25;0\nS3;9;0\n")  # S1-S2 0.75 apart, S3 far
    graph = add_spatial(meta, coords, 0.8)
    assert graph.relation_counts()["sample_adjacent_to"] == 1
    assert graph.relations["sample_adjacent_to"].weight.tolist() == [0.75]
    duplicates = tmp_path / "duplicates.csv"
    duplicates.write_text("id1;id2;similarity\nS1;S3;0,999\n")
    graph = add_duplicates(meta, duplicates, similarity_column="similarity")
    assert graph.relations["sample_duplicate_of"].weight.tolist() == [0.999]


def test_decimal_commas_are_not_read_in_comma_or_tab_files(tmp_path):
    path = tmp_path / "coords.tsv"
    path.write_text("sample_id\tx\nS1\t0,5\nS2\t1\n")
    meta = from_metadata(pd.DataFrame({"sample_id": ["S1", "S2"]}))
    with pytest.raises(DepgraphError) as err:
        add_spatial(meta, path, 1.0)
    assert err.value.code == "invalid_value" and "'0,5'" in err.value.message and "row 1" in err.value.message


@pytest.mark.parametrize(
    ("encoding", "value"),
    [("latin-1", "Jörg"), ("cp1252", "Zoë €"), ("utf-16", "Jörg ✓"), ("utf-8", "Jörg ✓")],
)
def test_an_encoding_is_named_when_the_file_is_not_utf8(tmp_path, capsys, encoding, value):
    from depgraph.cli.main import main

    path = tmp_path / "cohort.csv"
    path.write_bytes(f"sample_id,subject_id,name\nS1,P1,{value}\nS2,P2,x\n".encode(encoding))
    graph = from_metadata(path, encoding=encoding)
    assert _sample_attributes(graph)["name"] == [value, "x"]
    capsys.readouterr()
    assert main(["build", str(path), "--encoding", encoding, "-o", str(tmp_path / "g.json")]) == 0


def test_rows_and_columns_of_nothing_that_spreadsheets_write_are_not_data(tmp_path):
    path = tmp_path / "cohort.csv"
    path.write_text("sample_id,subject_id,,\nS1,P1,,\nS2,P1,,\n,,,\n,,\n , ,\n\n")
    graph = from_metadata(path)
    assert graph.sample_ids.tolist() == ["S1", "S2"] and list(graph.attributes.columns) == []
    tsv = tmp_path / "cohort.tsv"
    tsv.write_text("sample_id\tsubject_id\nS1\tP1\nS2\tP1\n\t\n\t\t\n")
    assert from_metadata(tsv).sample_ids.tolist() == ["S1", "S2"]


def test_a_row_of_nothing_between_rows_is_a_missing_id(tmp_path):
    path = tmp_path / "cohort.csv"
    path.write_text("sample_id,subject_id\nS1,P1\n,\nS2,P1\n")
    with pytest.raises(DepgraphError) as err:
        from_metadata(path)
    assert err.value.code == "missing_id" and "row 2" in err.value.message


# ---- attribute types: a file and the DataFrame read from it give the same graph and the same spec
def test_attributes_from_csv_and_from_a_dataframe_give_the_same_spec(tmp_path):
    from depgraph.spec.model import SplitSpec

    frame = COHORT.drop(columns=["time_index", "timepoint_id"])
    path = tmp_path / "cohort.csv"
    frame.to_csv(path, index=False)
    specs = [
        SplitSpec.from_partition(derive(g, "subject"), g, attributes=["age", "weight", "smoker"])
        for g in (from_metadata(path), from_metadata(frame))
    ]
    assert specs[0].digest == specs[1].digest
    assert specs[0].samples["age"].tolist() == [30, 31, 40, 50]  # numbers, not "30"


def test_ids_are_never_typed_and_codes_stay_text(tmp_path):
    path = tmp_path / "cohort.csv"
    path.write_text("sample_id,subject_id,batch_id,code,mixed,big\n007,1e3,1.50,007,1,9007199254740993\n8,2,2,12,x,1\n")
    graph = from_metadata(path)
    assert graph.sample_ids.tolist() == ["007", "8"]
    assert graph.keys("Subject").tolist() == ["1e3", "2"] and graph.keys("Batch").tolist() == ["1.50", "2"]
    assert _sample_attributes(graph) == {
        "code": ["007", "12"],  # a code with a leading zero is not the number 7
        "mixed": ["1", "x"],  # numbers and text: text
        "big": ["9007199254740993", "1"],  # beyond 2**53 a float64 would round it
    }


@given(
    columns=st.lists(st.sampled_from(["int", "float", "bool", "text", "int-with-gaps"]), min_size=1, max_size=4),
    n=st.integers(min_value=1, max_value=8),
    data=st.data(),
)
@settings(max_examples=40, deadline=None)
def test_any_attribute_table_gives_the_same_graph_from_csv_and_from_its_frame(tmp_path_factory, columns, n, data):
    kinds = {
        "int": st.integers(min_value=-(2**53) + 1, max_value=2**53 - 1),
        "float": st.floats(allow_nan=False, allow_infinity=False, width=64).filter(lambda x: x != int(x)),
        "bool": st.booleans(),
        "text": st.text(alphabet="abcxyz ", min_size=1, max_size=5).filter(lambda s: s.strip() == s and s.strip()),
        "int-with-gaps": st.one_of(st.none(), st.integers(min_value=-1000, max_value=1000)),
    }
    frame = pd.DataFrame({"sample_id": [f"S{k}" for k in range(n)]})
    for k, kind in enumerate(columns):
        values = data.draw(st.lists(kinds[kind], min_size=n, max_size=n))
        if kind == "int-with-gaps" and all(v is None for v in values):
            values[0] = 1
        frame[f"a{k}"] = pd.Series(values, dtype="float64" if kind == "int-with-gaps" else None)
    path = tmp_path_factory.mktemp("attrs") / "cohort.csv"
    frame.to_csv(path, index=False)
    assert graph_bytes(from_metadata(path)) == graph_bytes(from_metadata(frame))


# ---- Excel workbooks
def _workbook(path, sheets: dict[str, list[list]]) -> None:
    import openpyxl

    book = openpyxl.Workbook()
    book.remove(book.active)
    for name, rows in sheets.items():
        sheet = book.create_sheet(name)
        for row in rows:
            sheet.append(row)
    book.save(path)


def test_an_excel_sheet_reads_like_its_csv(tmp_path, capsys):
    from datetime import datetime

    from depgraph.cli.main import main

    path = tmp_path / "cohort.xlsx"
    rows = [
        [None],  # a blank first row: the header is the first row holding a value
        ["sample_id", "subject_id", "age", "weight", "smoker", "drawn", None],
        [1.0, "P1", 30, 0.25, True, datetime(2024, 1, 5), None],
        [2, "P1", 31, 1.5, False, datetime(2024, 1, 6), None],
        ["S3", " P2 ", 40, 72, False, None, None],
        [None, None, None, None, None, None, None],  # an empty row below the table
    ]
    _workbook(path, {"Notes": [["written by hand"]], "Samples": rows})
    for sheet in ("Samples", 2, "2"):
        graph = from_metadata(path, sheet=sheet)
        assert graph.sample_ids.tolist() == ["1", "2", "S3"]  # Excel's 1.0 is the id "1"
        assert graph.keys("Subject").tolist() == ["P1", "P2"]
        assert _sample_attributes(graph) == {
            "age": [30, 31, 40],
            "weight": [0.25, 1.5, 72.0],
            "smoker": [True, False, False],
            "drawn": ["2024-01-05", "2024-01-06", None],
        }
    csv = tmp_path / "cohort.csv"
    csv.write_text("sample_id,subject_id,age,weight,smoker,drawn\n1,P1,30,0.25,TRUE,2024-01-05\n"
                   "2,P1,31,1.5,FALSE,2024-01-06\nS3,P2,40,72,FALSE,\n")  # fmt: skip
    assert graph_bytes(from_metadata(path, sheet="Samples")) == graph_bytes(from_metadata(csv))
    capsys.readouterr()
    assert main(["build", str(path), "--sheet", "Samples", "-o", str(tmp_path / "g.json")]) == 0
    first = tmp_path / "first.xlsx"
    _workbook(first, {"Sheet1": rows[1:]})
    assert from_metadata(first).sample_ids.tolist() == ["1", "2", "S3"]  # the first sheet by default


def test_tables_other_than_metadata_read_from_excel(tmp_path):
    meta = from_metadata(pd.DataFrame({"sample_id": ["S1", "S2", "S3"], "subject_id": ["P1", "P2", "P3"]}))
    kinship = tmp_path / "kinship.xlsx"
    _workbook(kinship, {"pairs": [["id1", "id2", "kinship"], ["P1", "P2", 0.25], ["P2", "P3", 0.01]]})
    assert add_kinship(meta, kinship, "first").relation_counts()["subject_related_to"] == 1
    coords = tmp_path / "coords.xlsx"
    _workbook(coords, {"xy": [["sample_id", "x"], ["S1", 0], ["S2", 0.5], ["S3", 9]]})
    assert add_spatial(meta, coords, 1.0).relation_counts()["sample_adjacent_to"] == 1


@given(
    values=st.one_of(
        st.lists(st.integers(min_value=-(2**53) + 1, max_value=2**53 - 1), min_size=1, max_size=6),
        st.lists(st.one_of(st.none(), st.integers(min_value=-999, max_value=999)), min_size=1, max_size=6),
        st.lists(st.floats(allow_nan=False, allow_infinity=False, width=64), min_size=1, max_size=6),
        st.lists(st.booleans(), min_size=1, max_size=6),
    ),
    decimal=st.sampled_from([".", ","]),
)
@settings(max_examples=60, deadline=None)
def test_an_attribute_column_is_typed_as_pandas_reads_it(values, decimal):
    from depgraph.io.textnumbers import typed_attribute

    if all(v is None for v in values):
        values = [*values[:-1], 1]
    cells = ["" if v is None else str(v).replace(".", decimal) for v in values]
    text = "i;a\n" + "".join(f"{k};{cell}\n" for k, cell in enumerate(cells))  # i: no blank line pandas would skip
    expected = pd.read_csv(io.StringIO(text), decimal=decimal, sep=";")["a"]
    got = typed_attribute(pd.Series([c or None for c in cells], dtype="str"), decimal)
    assert got.dtype == expected.dtype
    assert got.equals(expected.set_axis(got.index))


CELLS = st.one_of(
    st.none(), st.sampled_from(["007", "+7", "-0", "12", "1.5", "2.0", "1e3", "9007199254740993", "1e20", "nan", "inf",
                                "true", "FALSE", "x", ""]),
    st.integers(-999, 999).map(str), st.floats(allow_nan=False, allow_infinity=False, width=64).map(repr),
)  # fmt: skip


@given(cells=st.lists(CELLS, min_size=1, max_size=8), cut=st.integers(0, 8))
@settings(max_examples=200, deadline=None)
@example(cells=["007", "1.5"], cut=1)  # a code beside a fraction: a float column, though the piece alone is text
@example(cells=["12", None], cut=1)  # integers with a missing cell: floats
def test_evidence_of_pieces_joins_to_the_whole_columns(cells, cut):
    """What the Spark engine does with a text file's attribute columns: the evidence of pieces of a column (its
    partitions), joined in either order, types it as the whole column is typed (typed_attribute, which the test
    above holds to pandas)."""
    import pyarrow as pa

    from depgraph.io.textnumbers import attribute_evidence, attribute_kind, typed_attribute

    text = pa.array([c or None for c in cells], type=pa.large_string())
    whole = typed_attribute(pd.Series([c or None for c in cells], dtype="str")).dropna()
    kind = {"int64": "int", "float64": "float", "bool": "bool"}.get(str(whole.dtype), "text")
    if len(whole) and all(isinstance(v, bool) for v in whole):
        kind = "bool"  # booleans with a missing cell are objects
    first, second = attribute_evidence(text[:cut]), attribute_evidence(text[cut:])
    assert attribute_kind(first | second) == attribute_kind(second | first) == kind, (cells, cut)
