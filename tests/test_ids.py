"""Ids nobody can read back or tell apart: control and invisible characters are refused by every reader (tables,
graph and spec files, splitGraph files), look-alike ids (Unicode confusables) are warned about by code and kept in
the graph for validate, and floating-point ids that cannot be exact are refused.

Expected values come from Python's ``unicodedata`` and plain arithmetic, never from the code under test.
"""

from __future__ import annotations

import json
import unicodedata

import pandas as pd
import pyarrow as pa
import pytest

from depgraph import DepgraphWarning, add_kinship, derive, from_metadata, read_graph, validate, write_graph
from depgraph.adapters.splitgraph import from_splitgraph
from depgraph.cli.main import main
from depgraph.common.confusables import TABLE, confusable_groups, prototypes, skeleton
from depgraph.spec.files import read_spec, spec_document
from depgraph.spec.model import SplitSpec
from tests import documents
from tests.test_bad_inputs import cli_fails, fails_with, write

#: Characters an id may not hold, one of each kind: C0 and C1 controls, DEL, the Unicode line and paragraph
#: separators, and format characters that print nothing.
UNREADABLE = {
    "tab": "\t",
    "delete": "\x7f",
    "next-line": "\x85",
    "line-separator": "\u2028",
    "paragraph-separator": "\u2029",
    "zero-width-space": "\u200b",
    "zero-width-joiner": "\u200d",
    "byte-order-mark": "\ufeff",
    "soft-hyphen": "\xad",
    "left-to-right-mark": "\u200e",
}


@pytest.mark.parametrize("character", UNREADABLE.values(), ids=UNREADABLE.keys())
def test_a_metadata_id_holding_an_unreadable_character_is_refused(tmp_path, capsys, character):
    assert unicodedata.category(character) in ("Cc", "Cf", "Zl", "Zp")
    table = pd.DataFrame({"sample_id": ["S1", "S2"], "subject_id": ["P1", f"P{character}1"]})
    with fails_with("invalid_value", "subject_id", "row 2", f"U+{ord(character):04X}"):
        from_metadata(table)
    table.to_parquet(tmp_path / "cohort.parquet")
    out = tmp_path / "out"
    out.mkdir()
    cli_fails(capsys, tmp_path, ["build", tmp_path / "cohort.parquet", "-o", out / "g.json"], "invalid_value",
              "subject_id", f"U+{ord(character):04X}", output=out / "g.json")  # fmt: skip


@pytest.mark.parametrize("character", ["\x85", "\u2028", "\u200b"], ids=["next-line", "line-separator", "zero-width"])
def test_a_csv_id_holding_an_unreadable_character_is_refused(tmp_path, character):
    path = write(tmp_path / "cohort.csv", f"sample_id,subject_id\nS1,P1\nS2,P{character}1\n")
    with fails_with("invalid_value", "subject_id", "row 2"):
        from_metadata(path)


def test_printable_unicode_ids_are_read(tmp_path):
    table = pd.DataFrame({"sample_id": ["S1", "S2", "S3"], "subject_id": ["José", "Zoë", "患者1"]})
    assert sorted(from_metadata(table).keys("Subject").tolist()) == sorted(["José", "Zoë", "患者1"])


def test_a_pair_table_id_holding_an_unreadable_character_is_refused():
    graph = from_metadata(pd.DataFrame({"sample_id": ["S1", "S2"], "subject_id": ["P1", "P2"]}))
    with fails_with("invalid_value", "id2", "U+200B"):
        add_kinship(graph, pd.DataFrame({"id1": ["P1"], "id2": ["P\u200b2"], "kinship": [0.25]}), 0.1)


# --------------------------------------------------------------------------- the file readers apply the same rules
def test_a_spec_file_with_an_invisible_character_in_an_id_is_refused(tmp_path, capsys):
    graph = from_metadata(pd.DataFrame({"sample_id": ["S1", "S2", "S3"], "subject_id": ["P1", "P1", "P2"]}))
    doc = spec_document(SplitSpec.from_partition(derive(graph, "subject"), graph))
    doc["samples"]["sample_id"][-1] += "\u200b"  # still last in byte order; the digest recomputed
    documents.redigest(doc)
    path = tmp_path / "spec.json"
    path.write_text(json.dumps(doc, ensure_ascii=False), encoding="utf-8")
    with fails_with("invalid_value", "samples.sample_id", "U+200B"):
        read_spec(path)
    cli_fails(capsys, tmp_path, ["validate", path], "invalid_value", "U+200B")


def test_a_graph_file_with_a_control_character_in_a_node_key_is_refused(tmp_path):
    graph = from_metadata(pd.DataFrame({"sample_id": ["S1", "S2"], "subject_id": ["P1", "P2"]}))
    path = tmp_path / "graph.json"
    write_graph(graph, path)
    doc = json.loads(path.read_text())
    doc["nodes"]["Subject"][1] = "P2\x7f"
    path.write_text(json.dumps(doc))
    with fails_with("invalid_value", "nodes.Subject", "U+007F"):
        read_graph(path)


def test_a_splitgraph_file_with_a_control_character_in_a_node_key_is_refused():
    doc = {"splitGraph_object": "dependency_graph", "schema_version": "0.1.0",
           "nodes": [{"node_id": "sample:S1", "node_type": "Sample", "node_key": "S1\u2028", "attrs": {}}],
           "edges": []}  # fmt: skip
    with fails_with("invalid_value", "node_key", "U+2028"):
        from_splitgraph(doc)


# --------------------------------------------------------------------------- look-alike ids: warned, never merged
def test_look_alike_subject_ids_are_warned_about_and_stay_apart(tmp_path, capsys):
    cyrillic_a, fullwidth_one = "\u0430", "\uff11"
    assert unicodedata.name(cyrillic_a) == "CYRILLIC SMALL LETTER A"
    table = pd.DataFrame(
        {
            "sample_id": ["S1", "S2", "S3", "S4", "S5"],
            "subject_id": ["Pat", f"P{cyrillic_a}t", "P1", f"P{fullwidth_one}", "Q"],
        }
    )
    with pytest.warns(DepgraphWarning, match="confusable") as told:
        graph = from_metadata(table)
    assert [w.message.code for w in told] == ["confusable_ids"]
    message = str(told[0].message)
    assert "'Pat' and 'P\\u0430t'" in message and "'P1' and 'P\\uff11'" in message  # escaped: one line, visible
    assert derive(graph, "subject").n_groups == 5  # told, not merged: nothing says they are one person
    report = validate(graph)
    [finding] = [i for i in report.issues if i.code == "confusable_ids"]
    assert finding.severity == "warning" and finding.count == 2
    table.to_csv(tmp_path / "cohort.csv", index=False)
    capsys.readouterr()
    assert main(["build", str(tmp_path / "cohort.csv"), "-o", str(tmp_path / "g.json")]) == 0
    err = capsys.readouterr().err
    assert "depgraph: warning: confusable_ids:" in err and "'Pat' and 'P\\u0430t'" in err


def test_ascii_ids_that_differ_by_0_and_O_are_not_look_alikes():
    assert confusable_groups(pa.array(["S10", "SIO", "Sl0", "m1", "rn1", None])) == []


def test_skeletons_follow_unicodes_table():
    # the table's own lines, read here by hand: CYRILLIC SMALL LETTER A's prototype is LATIN SMALL LETTER A
    lines = [line for line in TABLE.read_text(encoding="utf-8").splitlines() if line.startswith("0430 ;")]
    assert [line.split(";")[1].strip() for line in lines] == ["0061"]
    assert prototypes()[0x0430] == "a"
    assert skeleton("P\u0430t") == skeleton("Pat") and skeleton("\uff30\uff41t") == skeleton("Pat")
    assert skeleton("Pat") != skeleton("Pet")
    groups = confusable_groups(pa.array(["Pat", "P\u0430t", "Pet", "P\u0435t", "x"]))
    assert groups == [sorted(["Pat", "P\u0430t"]), sorted(["Pet", "P\u0435t"])]


# --------------------------------------------------------------------------- floating-point ids
def test_float_ids_beyond_2_to_the_53_are_refused_not_collapsed(tmp_path, capsys):
    big = float(2**53)
    assert float(2**53 + 1) == big  # the float64 column cannot hold both: two samples would be one
    table = pd.DataFrame({"sample_id": [big, float(2**53 + 1)], "subject_id": ["P1", "P2"]})
    with fails_with("invalid_value", "sample_id", "9007199254740992.0", "row 1"):
        from_metadata(table)
    table.to_parquet(tmp_path / "cohort.parquet")
    out = tmp_path / "out"
    out.mkdir()
    cli_fails(capsys, tmp_path, ["build", tmp_path / "cohort.parquet", "-o", out / "g.json"], "invalid_value",
              "9007199254740992.0", output=out / "g.json")  # fmt: skip


@pytest.mark.parametrize("value", [2.5, -(2.0**60)], ids=["fraction", "huge-negative"])
def test_float_ids_that_are_no_exact_whole_number_are_refused(value):
    with fails_with("invalid_value", "subject_id", repr(value)):
        from_metadata(pd.DataFrame({"sample_id": ["S1", "S2"], "subject_id": [1.0, value]}))


def test_whole_float_ids_below_2_to_the_53_are_their_integers():
    graph = from_metadata(pd.DataFrame({"sample_id": [1.0, 2.0, float(2**53 - 1)], "subject_id": [7.0, 7.0, 8.0]}))
    assert sorted(graph.sample_ids.tolist()) == sorted(["1", "2", str(2**53 - 1)])


def test_a_float_id_in_a_pair_table_is_refused():
    graph = from_metadata(pd.DataFrame({"sample_id": ["S1", "S2"], "subject_id": ["1", "2"]}))
    with fails_with("invalid_value", "id1", "1.5"):
        add_kinship(graph, pd.DataFrame({"id1": [1.5], "id2": [2.0], "kinship": [0.25]}), 0.1)
