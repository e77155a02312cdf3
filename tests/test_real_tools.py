"""Real outputs of PLINK 1.9 and PLINK 2 on a simulated pedigree (tests/data/plink, made by its make_outputs.py),
read by depgraph and held to the pedigree's truth: the groups are its families, no related pair crosses a fold.

Expected values come from the pedigree (truth.csv: every related pair, by FID and IID) through networkx, never from
depgraph.
"""

from __future__ import annotations

import warnings

import networkx as nx
import pandas as pd
import pytest

from depgraph import (
    DepgraphError,
    DepgraphWarning,
    SplitSpec,
    add_kinship,
    assign_folds,
    derive,
    from_metadata,
    validate,
)
from depgraph.ingest.kinship import detect_format, read_kinship
from tests.conftest import REPO

DATA = REPO / "tests" / "data" / "plink"
#: Every tool output, with the format it is and the tool that wrote it.
OUTPUTS = {
    "plink19.genome.gz": "plink-genome",
    "plink19.grm.bin": "gcta-grm",
    "plink19.grm.gz": "gcta-grm",
    "plink2.kin0.zst": "plink2-king",
    "plink2.king.zst": "plink2-king-matrix",
    "plink2sq.king.zst": "plink2-king-matrix",
    "plink2bin.king.bin": "plink2-king-matrix",
    "plink2.grm.zst": "gcta-grm",
    "plink2hdr.grm.bin": "gcta-grm",
}


def individuals() -> pd.DataFrame:
    fam = pd.read_csv(DATA / "cohort.fam", sep=r"\s+", header=None, dtype=str)
    return pd.DataFrame({"fid": fam[0], "iid": fam[1], "subject_id": fam[0] + "_" + fam[1]})


def truth() -> pd.DataFrame:
    pairs = pd.read_csv(DATA / "truth.csv", dtype={"fid1": str, "iid1": str, "fid2": str, "iid2": str})
    pairs["a"], pairs["b"] = pairs["fid1"] + "_" + pairs["iid1"], pairs["fid2"] + "_" + pairs["iid2"]
    return pairs


def true_groups(minimum: float = 0.0) -> list[list[str]]:
    """The pedigree's components over related pairs with kinship of at least ``minimum`` (networkx)."""
    graph = nx.Graph()
    graph.add_nodes_from(individuals()["subject_id"])
    related = truth()
    graph.add_edges_from(related.loc[related["kinship"] >= minimum, ["a", "b"]].itertuples(index=False))
    return sorted(sorted(component) for component in nx.connected_components(graph))


def groups_of(partition) -> list[list[str]]:
    members: dict[str, list[str]] = {}
    for sample, group in partition.groups().items():
        members.setdefault(group, []).append(sample)
    return list(members.values())


def cohort_graph():
    people = individuals()
    return from_metadata(pd.DataFrame({"sample_id": "S_" + people["subject_id"], "subject_id": people["subject_id"]}))


@pytest.mark.parametrize("name", OUTPUTS)
def test_every_output_gives_the_families_and_no_relative_crosses_a_fold(name):
    assert detect_format(DATA / name) == OUTPUTS[name]
    graph = add_kinship(cohort_graph(), DATA / name, "third", id_template="{FID}_{IID}")
    partition = derive(graph, "relatedness")
    groups: dict[str, list[str]] = {}
    for sample, group in partition.groups().items():
        groups.setdefault(group, []).append(sample.removeprefix("S_"))
    assert sorted(sorted(g) for g in groups.values()) == true_groups()
    spec = assign_folds(SplitSpec.from_partition(partition, graph), "group-kfold", n_splits=5, seed=1)
    fold = {}
    for split in spec.folds.splits:
        for position in split.test:
            fold[spec.samples["sample_id"].iloc[position].removeprefix("S_")] = split.fold
    related = truth()
    assert all(fold[a] == fold[b] for a, b in related[["a", "b"]].itertuples(index=False))


def test_the_king_matrices_hold_the_king_tables_estimates():
    table, _ = read_kinship(DATA / "plink2.kin0.zst", "plink2-king", 0.0, id_template="{FID}_{IID}")
    expected = {frozenset(p): k for *p, k in table.itertuples(index=False)}
    for name in ("plink2.king.zst", "plink2sq.king.zst", "plink2bin.king.bin"):
        matrix, record = read_kinship(DATA / name, "plink2-king-matrix", 0.0, id_template="{FID}_{IID}")
        got = {frozenset(p): k for *p, k in matrix.itertuples(index=False)}
        assert got.keys() == expected.keys(), name
        assert max(abs(got[p] - expected[p]) for p in got) < 1e-6  # bin4 holds float32
        assert record["individuals"] == 153 and record["pairs_read"] == 153 * 152 // 2


def test_the_text_grms_hold_the_binary_grms_values():
    binary, record = read_kinship(DATA / "plink19.grm.bin", "gcta-grm", 0.0, id_template="{FID}_{IID}")
    expected = {frozenset(p): k for *p, k in binary.itertuples(index=False)}
    for name in ("plink19.grm.gz", "plink2.grm.zst", "plink2hdr.grm.bin"):
        text, other = read_kinship(DATA / name, "gcta-grm", 0.0, id_template="{FID}_{IID}")
        got = {frozenset(p): k for *p, k in text.itertuples(index=False)}
        assert got.keys() == expected.keys(), name
        assert max(abs(got[p] - expected[p]) for p in got) < 1e-5, name  # text holds 6 or 7 digits
        assert other["pairs_read"] == record["pairs_read"] == 153 * 152 // 2


def test_a_grms_id_header_is_read_as_a_header():
    pairs, record = read_kinship(DATA / "plink2hdr.grm.bin", "gcta-grm", "first", id_template="{FID}_{IID}")
    assert record["individuals"] == 153 and "FID_IID" not in "".join(pairs["id1"])


def test_a_matrix_whose_ids_do_not_fit_is_refused_by_name(tmp_path):
    (tmp_path / "m.king.bin").write_bytes((DATA / "plink2bin.king.bin").read_bytes())
    ids = (DATA / "plink2bin.king.id").read_text().splitlines()
    (tmp_path / "m.king.id").write_text("\n".join(ids[:-1]) + "\n")  # one individual short
    with pytest.raises(DepgraphError) as err:
        read_kinship(tmp_path / "m.king.bin", "plink2-king-matrix", "first", id_template="{FID}_{IID}")
    assert err.value.code == "schema" and "no layout of 152 individuals" in err.value.message
    text = tmp_path / "t.king"
    text.write_text("0.1\n0.2\t0.3\n0.4\n")  # a triangle whose third row is short
    (tmp_path / "t.king.id").write_text("#IID\nA\nB\nC\nD\n")
    with pytest.raises(DepgraphError) as err:
        read_kinship(text, "plink2-king-matrix", "first")
    assert err.value.code == "schema" and "line 3 holds 1 values" in err.value.message
    grm = tmp_path / "g.grm"
    grm.write_text("1\t1\t10\t1.0\n3\t1\t10\t0.2\n")  # row 3 of two individuals
    (tmp_path / "g.grm.id").write_text("F\tA\nF\tB\n")
    with pytest.raises(DepgraphError) as err:
        read_kinship(grm, "gcta-grm", "first")
    assert err.value.code == "schema" and "line 2 names the cell (3, 1)" in err.value.message


def test_a_king_matrix_value_above_half_is_refused(tmp_path):
    (tmp_path / "m.king").write_text("0.7\n0.1\t0.2\n")
    (tmp_path / "m.king.id").write_text("#IID\nA\nB\nC\n")
    with pytest.raises(DepgraphError) as err:
        read_kinship(tmp_path / "m.king", "plink2-king-matrix", "first")
    assert err.value.code == "invalid_value" and "kinship 0.7 for (A, B), above 0.5" in err.value.message


def test_grm_pairs_above_half_are_the_twins_and_are_said_with_the_digits_that_show_it():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        _, record = read_kinship(DATA / "plink19.grm.bin", "gcta-grm", "first", id_template="{FID}_{IID}")
    shown = [pair.split("=") for pair in record["above_half_pairs"]]
    assert record["above_half"] == len(shown) >= 1
    assert all(float(value) > 0.5 for _, value in shown)  # 0.50003 is never written 0.5
    related = truth()
    twins = {frozenset((a, b)) for a, b, d in related[["a", "b", "degree"]].itertuples(index=False) if d == "duplicate"}
    assert all(frozenset(pair.split("-")) in twins for pair, _ in shown)


# --------------------------------------------------------------------------- filtered files, absent subjects, ids
@pytest.mark.parametrize("name", ["plink19.min.genome", "plink2.filtered.kin0"])
def test_a_table_filtered_when_written_is_said_to_be(name):
    with pytest.warns(DepgraphWarning, match="kinship_file_filtered|filtered when written") as heard:
        graph = add_kinship(cohort_graph(), DATA / name, "third", id_template="{FID}_{IID}")
    (message,) = [str(w.message) for w in heard if w.message.code == "kinship_file_filtered"]
    assert "pairs of the third and second degree(s) may be missing" in message
    assert [i.code for i in validate(graph).issues if i.code == "kinship_file_filtered"] == ["kinship_file_filtered"]
    # read at the degree it was filtered at, nothing asked for is missing: no word, and the families are exact
    graph = add_kinship(cohort_graph(), DATA / name, "first", id_template="{FID}_{IID}")
    assert not [i for i in validate(graph).issues if i.code == "kinship_file_filtered"]
    assert sorted(sorted(s.removeprefix("S_") for s in g) for g in groups_of(derive(graph, "relatedness"))) == (
        true_groups()
    )


def test_an_unfiltered_table_read_at_any_degree_says_nothing_of_filtering():
    graph = add_kinship(cohort_graph(), DATA / "plink2.kin0.zst", "third", id_template="{FID}_{IID}")
    assert not [i for i in validate(graph).issues if i.code in ("kinship_file_filtered", "subjects_without_kinship")]


def test_subjects_the_file_does_not_name_are_unknown_not_unrelated(tmp_path):
    # one person of each family left out of an unfiltered KING table, as if not genotyped
    table = pd.read_csv(DATA / "plink2.kin0.zst", sep="\t", dtype=str)
    gone = {f"F{f:02d}_C1" for f in range(1, 16)}
    names = table["#FID1"] + "_" + table["IID1"], table["FID2"] + "_" + table["IID2"]
    table[~names[0].isin(gone) & ~names[1].isin(gone)].to_csv(tmp_path / "qc.kin0", sep="\t", index=False)
    with pytest.warns(DepgraphWarning) as heard:
        graph = add_kinship(cohort_graph(), tmp_path / "qc.kin0", "third", id_template="{FID}_{IID}")
    (message,) = [str(w.message) for w in heard if w.message.code == "subjects_without_kinship"]
    assert "does not name 15 of the 153 subjects" in message and "F01_C1" in message
    (issue,) = [i for i in validate(graph).issues if i.code == "subjects_without_kinship"]
    assert issue.count == 15 and "subject:F01_C1" in issue.ids
    # what it costs: their true relatives, grouped apart from them, land in other folds
    partition = derive(graph, "relatedness")
    spec = assign_folds(SplitSpec.from_partition(partition, graph), "group-kfold", n_splits=5, seed=1)
    fold = {spec.samples["sample_id"].iloc[p].removeprefix("S_"): s.fold for s in spec.folds.splits for p in s.test}
    related = truth()
    theirs = related[related["a"].isin(gone) | related["b"].isin(gone)]
    assert sum(fold[a] != fold[b] for a, b in theirs[["a", "b"]].itertuples(index=False)) > len(theirs) // 2
    # said explicitly, the choice is recorded and not warned about; or they are refused
    chosen = add_kinship(cohort_graph(), tmp_path / "qc.kin0", "third", id_template="{FID}_{IID}", absent="unrelated")
    assert chosen.history[-1]["absent"] == 15 and chosen.history[-1]["absent_as"] == "unrelated"
    assert not [i for i in validate(chosen).issues if i.code == "subjects_without_kinship"]
    with pytest.raises(DepgraphError) as err:
        add_kinship(cohort_graph(), tmp_path / "qc.kin0", "third", id_template="{FID}_{IID}", absent="error")
    assert err.value.code == "reference" and "F01_C1" in err.value.message


def test_fid_iid_subjects_and_the_default_template_are_told_which_template(tmp_path):
    (tmp_path / "t.kin0").write_text("#FID1\tIID1\tFID2\tIID2\tKINSHIP\nF1\tA\tF1\tB\t0.25\nF2\tC\tF1\tA\t-0.01\n")
    graph = from_metadata(pd.DataFrame({"sample_id": ["s1", "s2", "s3"], "subject_id": ["F1_A", "F1_B", "F2_C"]}))
    with pytest.raises(DepgraphError) as err:
        add_kinship(graph, tmp_path / "t.kin0", "third")
    assert err.value.code == "reference" and "use id_template='{FID}_{IID}'" in err.value.message
    with pytest.raises(DepgraphError) as err:  # dropping every pair is no way out
        add_kinship(graph, tmp_path / "t.kin0", "third", unknown="ignore")
    assert "names none of the graph's 3 subjects" in err.value.message and "'{FID}_{IID}'" in err.value.message
    related = add_kinship(graph, tmp_path / "t.kin0", "third", id_template="{FID}_{IID}")
    assert related.relation_counts()["subject_related_to"] == 1


def test_two_individuals_one_template_makes_alike_are_refused(tmp_path):
    (tmp_path / "t.kin0").write_text("#FID1\tIID1\tFID2\tIID2\tKINSHIP\nA_B\tC\tX\tY\t0.3\nA\tB_C\tX\tZ\t0.2\n")
    graph = from_metadata(pd.DataFrame({"sample_id": ["s1", "s2", "s3"], "subject_id": ["A_B_C", "X_Y", "X_Z"]}))
    with pytest.raises(DepgraphError) as err:
        add_kinship(graph, tmp_path / "t.kin0", "third", id_template="{FID}_{IID}")
    assert err.value.code == "ambiguity" and "both become the subject id 'A_B_C'" in err.value.message


def test_the_command_line_and_a_study_file_choose_what_absent_subjects_become(tmp_path, capsys):
    from depgraph.cli.main import main

    people = individuals()
    extra = pd.DataFrame({"sample_id": ["S_new"], "subject_id": ["F01_NEW"]})
    meta = pd.concat([pd.DataFrame({"sample_id": "S_" + people["subject_id"], "subject_id": people["subject_id"]}),
                      extra])  # fmt: skip
    meta.to_csv(tmp_path / "meta.csv", index=False)
    base = ["build", tmp_path / "meta.csv", "--kinship", DATA / "plink2bin.king.bin", "--kinship-threshold", "third",
            "--id-template", "{FID}_{IID}", "-o", tmp_path / "g.json"]  # fmt: skip
    assert main([str(a) for a in base]) == 0
    assert "warning: subjects_without_kinship:" in capsys.readouterr().err
    assert main([str(a) for a in [*base, "--kinship-absent", "error"]]) == 2
    assert "F01_NEW" in capsys.readouterr().err and not (tmp_path / "g2.json").exists()
    study = (
        'version = 1\n[metadata]\npath = "meta.csv"\n[metadata.columns]\nsample_id = "sample_id"\n'
        f'subject_id = "subject_id"\n[kinship]\npath = "{DATA / "plink2bin.king.bin"}"\nthreshold = "third"\n'
        'id_template = "{FID}_{IID}"\nabsent = "unrelated"\n[grouping]\nmode = "relatedness"\n[outputs]\n'
        'spec = "s.json"\n'
    )
    (tmp_path / "study.toml").write_text(study)
    assert main(["run", str(tmp_path / "study.toml")]) == 0
    assert "subjects_without_kinship" not in capsys.readouterr().err
