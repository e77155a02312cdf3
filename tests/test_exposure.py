"""Checking a split made elsewhere against a spec's groups."""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
import pytest
from hypothesis import assume, given
from hypothesis import strategies as st

from depgraph import DepgraphError, StudyGraph, add_kinship, derive, from_metadata, write_graph
from depgraph.audit.exposure import exposure, straddling_groups
from depgraph.audit.report import render_html
from depgraph.cli.main import main
from depgraph.folds.schemes import assign_folds
from depgraph.spec.files import write_spec
from depgraph.spec.model import Constraint, SplitSpec
from depgraph.vocab import RELATION, NodeType
from tests.test_properties import build, cohorts, examples, present_modes


@pytest.fixture
def spec():
    frame = pd.DataFrame({"sample_id": ["a1", "a2", "b1", "b2", "c1"], "group_id": ["A", "A", "B", "B", "C"]})
    return SplitSpec.build(frame, constraint=Constraint(mode="subject"), recommended_resampling="grouped_cv")


def test_train_test_columns_and_unused_rows(spec):
    table = pd.DataFrame({"sample_id": ["a1", "a2", "b1", "b2", "c1"], "set": ["train", "test", "test", "test", None]})
    report = straddling_groups(spec, table)
    assert report.groups.to_dict("list") == {"group_id": ["A"], "n_samples": [2], "values": ["test, train"]}
    assert (report.n_checked, report.n_unused, report.split_column) == (4, 1, "set")
    table.loc[1, "set"] = "excluded"
    assert straddling_groups(spec, table).clean


def test_missing_columns_are_named(spec):
    with pytest.raises(DepgraphError) as err:
        straddling_groups(spec, pd.DataFrame({"sample_id": ["a1"], "colour": ["red"]}))
    assert err.value.code == "schema" and "--split-column" in err.value.message
    with pytest.raises(DepgraphError) as err:
        straddling_groups(spec, pd.DataFrame({"id": ["a1"], "fold": [1]}))
    assert "sample_id" in err.value.message


# --------------------------------------------------------------------------- exposure of a grouping and of a split
def _study() -> StudyGraph:
    """Five samples of four subjects: P1 and P2 related, batch B1 = {a1, b1}, batch B2 = {a2, c1, d1}."""
    meta = pd.DataFrame(
        {
            "sample_id": ["a1", "a2", "b1", "c1", "d1"],
            "subject_id": ["P1", "P1", "P2", "P3", "P4"],
            "batch_id": ["B1", "B2", "B1", "B2", "B2"],
        }
    )
    kin = pd.DataFrame({"id1": ["P1"], "id2": ["P2"], "kinship": [0.25]})
    return add_kinship(from_metadata(meta), kin, "first")


def _row(report, relation):
    return report.table.set_index("relation").loc[relation]


def test_a_grouping_without_folds_reports_what_it_keeps_whole():
    g = _study()
    report = exposure(g, SplitSpec.from_partition(derive(g, "subject"), g))
    table = report.table.set_index("relation")
    counts = ["followed", "linked", "kept_whole", "spread_over_groups"]
    assert table.loc["sample_belongs_to_subject", counts].tolist() == [True, 1, 1, 0]
    assert table.loc["subject_related_to", counts].tolist() == [False, 1, 0, 1]
    assert table.loc["sample_processed_in_batch", ["linked", "kept_whole", "spread_over_groups"]].tolist() == [2, 0, 2]
    assert table["crossing"].isna().all() and report.blocks.empty
    assert table.loc["subject_related_to", "examples"] == "P1~P2"
    # P1~P2 lies in two groups: a dependency the grouping does not follow is spread over groups, so it may cross
    assert not report.nothing_crosses and report.leaking_relations() == ["subject_related_to"]
    assert set(report.crossing_relations()) == {"subject_related_to", "sample_processed_in_batch"}
    related = derive(g, "composite", via=["subject", "relatedness"])  # a partition is judged as its spec
    assert exposure(g, related).table.equals(exposure(g, SplitSpec.from_partition(related, g)).table)
    followed = _row(exposure(g, related), "subject_related_to")
    assert followed[["followed", "kept_whole", "spread_over_groups"]].tolist() == [True, 1, 0]


def test_the_old_column_names_still_read_with_a_deprecation_warning():
    g = _study()
    table = exposure(g, SplitSpec.from_partition(derive(g, "subject"), g)).table
    with pytest.warns(DeprecationWarning, match="'severed' is now 'kept_whole'"):
        assert table["severed"].tolist() == table["kept_whole"].tolist()
    with pytest.warns(DeprecationWarning, match="'exposed' is now 'spread_over_groups'"):
        assert table.exposed.tolist() == table["spread_over_groups"].tolist()
    by_relation = table.set_index("relation")  # as the 0.1 documentation and tests read it
    with pytest.warns(DeprecationWarning) as heard:
        old = by_relation.loc["subject_related_to", ["severed", "exposed"]].tolist()
        assert by_relation[["severed"]].columns.tolist() == ["kept_whole"]
    assert old == [0, 1] and len(heard) == 3
    assert all(w.filename == __file__ for w in heard)  # shown where the user wrote the old name
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # the new names, and everything depgraph itself reads, never warn
        assert by_relation.loc["subject_related_to", ["kept_whole", "spread_over_groups"]].tolist() == [0, 1]
        exposure(g, SplitSpec.from_partition(derive(g, "subject"), g)).verdict()


def test_an_external_assignment_is_judged_split_by_split():
    g = _study()
    spec = SplitSpec.from_partition(derive(g, "subject"), g)
    folds = pd.DataFrame({"sample_id": ["a1", "a2", "b1", "c1", "d1"], "fold": ["x", "x", "y", "x", "y"]})
    report = exposure(g, spec, folds)
    assert _row(report, "sample_belongs_to_subject")[["crossing", "crossing_by_split"]].tolist() == [0, [0, 0]]
    assert _row(report, "subject_related_to")[["crossing", "crossing_by_split", "examples"]].tolist() == [
        1, [1, 1], "P1~P2",
    ]  # fmt: skip
    assert _row(report, "sample_processed_in_batch")[["crossing", "crossing_by_split"]].tolist() == [2, [2, 2]]
    # subjects are whole, the batches are blocks, but the related pair P1~P2 crosses: that is a leak
    assert not report.nothing_crosses and report.leaking_relations() == ["subject_related_to"]
    assert set(report.crossing_relations()) == {"sample_processed_in_batch", "subject_related_to"}
    leaky = folds.assign(fold=["x", "y", "y", "x", "y"])  # P1's two samples on two sides
    report = exposure(g, spec, leaky)
    assert _row(report, "sample_belongs_to_subject")["crossing"] == 1 and not report.nothing_crosses
    assert report.leaking_relations() == ["sample_belongs_to_subject", "subject_related_to"]
    assert "sample_belongs_to_subject (1, followed)" in report.verdict()
    whole = folds.assign(fold=["x", "x", "x", "y", "y"])  # the related pair on one side: nothing leaks
    report = exposure(g, spec, whole)
    assert report.nothing_crosses and report.leaking_relations() == []
    assert report.crossing_relations() == ["sample_processed_in_batch"]  # a block, expected to cross
    # a train/test column is one split; unlisted samples are excluded from it
    holdout = pd.DataFrame({"sample_id": ["a1", "b1", "c1"], "set": ["train", "test", "train"]})
    report = exposure(g, spec, holdout)
    assert _row(report, "subject_related_to")["crossing_by_split"] == [1]
    assert _row(report, "sample_belongs_to_subject")["crossing"] == 0  # a2 is not in the split


def test_spec_folds_are_used_when_no_assignment_is_given():
    g = _study()
    spec = assign_folds(SplitSpec.from_partition(derive(g, "subject"), g), "group-kfold", n_splits=2, seed=1)
    report = exposure(g, spec)
    assert len(_row(report, "subject_related_to")["crossing_by_split"]) == 2
    assert _row(report, "sample_belongs_to_subject")["crossing"] == 0
    # the same folds written out as a table and read back give the same table
    fold_of = np.full(spec.n_samples, -1)
    for i, split in enumerate(spec.folds.splits):
        fold_of[split.test] = i
    table = pd.DataFrame({"sample_id": spec.sample_ids, "fold": fold_of})
    assert exposure(g, spec, table).table.equals(report.table)


def test_block_balance_is_cramers_v_of_fold_against_block():
    meta = pd.DataFrame(
        {"sample_id": [f"s{i}" for i in range(8)], "subject_id": [f"P{i}" for i in range(8)],
         "batch_id": ["X"] * 4 + ["Y"] * 4}
    )  # fmt: skip
    g = from_metadata(meta)
    spec = SplitSpec.from_partition(derive(g, "subject"), g)
    confounded = pd.DataFrame({"sample_id": meta["sample_id"], "fold": [0] * 4 + [1] * 4})
    (row,) = exposure(g, spec, confounded).blocks.itertuples(index=False)
    assert (row.relation, row.blocks, row.splits, row.dof) == ("sample_processed_in_batch", 2, 2, 1)
    assert row.chi2 == pytest.approx(8.0) and row.cramers_v == pytest.approx(1.0)
    balanced = confounded.assign(fold=[0, 1] * 4)
    (row,) = exposure(g, spec, balanced).blocks.itertuples(index=False)
    assert row.chi2 == pytest.approx(0.0) and row.cramers_v == pytest.approx(0.0) and row.p_value == pytest.approx(1)


@pytest.mark.parametrize(
    "assignment,code",
    [
        (pd.DataFrame({"sample_id": ["a1", "zz"], "fold": [0, 1]}), "reference"),
        (pd.DataFrame({"sample_id": ["a1", "a1"], "fold": [0, 1]}), "duplicate_id"),
        (pd.DataFrame({"sample_id": ["a1"], "colour": ["red"]}), "schema"),
        (pd.DataFrame({"sample_id": ["a1", "b1"], "set": ["excluded", None]}), "empty_input"),
    ],
)
def test_bad_assignments(assignment, code):
    g = _study()
    with pytest.raises(DepgraphError) as err:
        exposure(g, SplitSpec.from_partition(derive(g, "subject"), g), assignment)
    assert err.value.code == code


def test_a_spec_with_samples_the_graph_lacks_is_refused():
    g = _study()
    other = from_metadata(pd.DataFrame({"sample_id": ["a1", "q9"], "subject_id": ["P1", "P9"]}))
    with pytest.raises(DepgraphError) as err:
        exposure(g, SplitSpec.from_partition(derive(other, "subject"), other))
    assert err.value.code == "reference" and "q9" in err.value.message


# --------------------------------------------------------------------------- property: counts match a brute force
def _brute_crossing(graph: StudyGraph, relation: str, side: dict[str, int]) -> int:
    """Dependencies of ``relation`` with a train (0) and a test (1) sample, by plain Python."""
    keys = graph.nodes["key"].to_numpy(dtype=object)
    src, dst, _ = graph.relation_edges(relation)
    rel = RELATION[relation]
    pairs = list(zip(src.tolist(), dst.tolist(), strict=True))
    if rel.source == NodeType.SAMPLE and rel.target == NodeType.SAMPLE:
        groups = [([keys[a]], [keys[b]]) for a, b in pairs]
    elif rel.source == NodeType.SAMPLE:
        members: dict[int, list[str]] = {}
        for a, b in pairs:
            members.setdefault(b, []).append(keys[a])
        groups = [(m, m) for m in members.values()]
    else:
        of_subject: dict[int, list[str]] = {}
        for a, b in zip(*graph.relation_edges("sample_belongs_to_subject")[:2], strict=True):
            of_subject.setdefault(int(b), []).append(keys[a])
        groups = [(of_subject.get(a, []), of_subject.get(b, [])) for a, b in pairs]
    count = 0
    for left, right in groups:
        ls, rs = {side.get(s) for s in left}, {side.get(s) for s in right}
        count += (0 in ls and 1 in rs) or (1 in ls and 0 in rs)
    return count


@examples(40)
@given(cohorts(min_samples=2), st.data())
def test_crossing_counts_match_a_brute_force(c, data):
    g = build(c)
    p = (
        derive(g, "composite", allow_single_group=True)
        if present_modes(c)
        else derive(g, "subject", allow_unlinked=True)
    )
    spec = SplitSpec.from_partition(p, g)
    assume(spec.n_samples >= 2)  # a split needs a train and a test side (an empty side is refused)
    sides = data.draw(st.lists(st.sampled_from(["train", "test", "excluded"]), min_size=spec.n_samples,
                               max_size=spec.n_samples).filter(lambda v: {"train", "test"} <= set(v)))  # fmt: skip
    assignment = pd.DataFrame({"sample_id": spec.sample_ids, "set": sides})
    report = exposure(g, spec, assignment)
    side = {s: {"train": 0, "test": 1}.get(v, -1) for s, v in zip(spec.sample_ids, sides, strict=True)}
    for row in report.table.itertuples(index=False):
        assert row.crossing == _brute_crossing(g, row.relation, side), row.relation
    # a followed dependency can only cross where a whole group straddles the split
    group_sides: dict[str, set[int]] = {}
    for sample, grp in zip(spec.sample_ids, spec.samples["group_id"], strict=True):
        group_sides.setdefault(grp, set()).add(side[sample])
    if not any({0, 1} <= sides_ for sides_ in group_sides.values()):
        assert report.nothing_crosses


# --------------------------------------------------------------------------- one definition of "nothing crosses"
#: Relations whose dependencies must never cross, whoever follows them (written out here, not read from the code).
DEPENDENCIES = ("sample_belongs_to_subject", "subject_related_to", "sample_adjacent_to", "sample_duplicate_of")


def _related_cohort(n_families: int = 12) -> StudyGraph:
    """Families of two related subjects with two samples each, three batches."""
    subjects = [f"F{f:02d}{s}" for f in range(n_families) for s in "ab"]
    meta = pd.DataFrame(
        {
            "sample_id": [f"{p}-{v}" for p in subjects for v in (1, 2)],
            "subject_id": [p for p in subjects for _ in (1, 2)],
            "batch_id": [f"B{i % 3}" for i in range(2 * len(subjects))],
        }
    )
    kin = pd.DataFrame({"id1": subjects[0::2], "id2": subjects[1::2], "kinship": 0.25})
    return add_kinship(from_metadata(meta), kin, "first")


def _related_pairs_crossing(spec: SplitSpec) -> int:
    """Sibling pairs with one sibling's sample tested and the other's trained on in some split (plain Python)."""
    count = 0
    ids = spec.sample_ids.tolist()
    for f in range(12):
        a = {ids.index(f"F{f:02d}a-{v}") for v in (1, 2)}
        b = {ids.index(f"F{f:02d}b-{v}") for v in (1, 2)}
        for split in spec.folds.splits:
            test = set(split.test.tolist())
            if (a & test and b - test) or (b & test and a - test):
                count += 1
                break
    return count


def test_a_subject_grouping_with_related_subjects_across_folds_is_not_nothing_crosses(tmp_path, capsys):
    g = _related_cohort()
    spec = assign_folds(SplitSpec.from_partition(derive(g, "subject"), g), "group-kfold", n_splits=4, seed=1)
    report = exposure(g, spec)
    crossing = _related_pairs_crossing(spec)
    assert crossing > 0  # the case: subjects whole, siblings on both sides
    assert _row(report, "subject_related_to")["crossing"] == crossing
    assert _row(report, "sample_belongs_to_subject")["crossing"] == 0
    assert not report.nothing_crosses and report.leaking_relations() == ["subject_related_to"]
    assert report.verdict().startswith(f"dependencies cross a split: subject_related_to ({crossing}, not followed)")
    assert report.to_dict()["nothing_crosses"] is False
    # relatedness grouping keeps the families whole: now nothing crosses, batches still do (blocks)
    kept = assign_folds(SplitSpec.from_partition(derive(g, "relatedness"), g), "group-kfold", n_splits=4, seed=1)
    report = exposure(g, kept)
    assert report.nothing_crosses and report.leaking_relations() == []
    assert report.crossing_relations() == ["sample_processed_in_batch"]
    assert report.verdict() == (
        "nothing crosses: no dependency of sample_belongs_to_subject, subject_related_to crosses a split"
    )
    # the CLI says the same, and a check with the graph fails on the leak
    write_graph(g, tmp_path / "g.json")
    write_spec(spec, tmp_path / "s.json")
    folds = pd.DataFrame({"sample_id": spec.sample_ids, "fold": -1})
    for split in spec.folds.splits:
        folds.loc[split.test, "fold"] = split.fold
    folds.to_csv(tmp_path / "folds.csv", index=False)
    capsys.readouterr()
    assert (
        main(["check", str(tmp_path / "s.json"), str(tmp_path / "folds.csv"), "--graph", str(tmp_path / "g.json")]) == 1
    )
    out = capsys.readouterr().out
    assert "no group straddles" in out and f"subject_related_to ({crossing}, not followed)" in out
    assert main(["check", str(tmp_path / "s.json"), str(tmp_path / "folds.csv")]) == 0  # without the graph: groups only


@examples(40)
@given(cohorts(min_samples=2), st.data())
def test_nothing_crosses_exactly_when_no_dependency_or_followed_relation_crosses(c, data):
    g = build(c)
    mode = data.draw(st.sampled_from(["subject", "batch", "duplicate", "relatedness"]))
    spec = SplitSpec.from_partition(derive(g, mode, allow_unlinked=True), g)
    sides = data.draw(st.lists(st.sampled_from(["train", "test", "excluded"]), min_size=spec.n_samples,
                               max_size=spec.n_samples).filter(lambda v: {"train", "test"} <= set(v)))  # fmt: skip
    report = exposure(g, spec, pd.DataFrame({"sample_id": spec.sample_ids, "set": sides}))
    side = {s: {"train": 0, "test": 1}.get(v, -1) for s, v in zip(spec.sample_ids, sides, strict=True)}
    must_stay_whole = set(DEPENDENCIES) | set(spec.constraint.relations)
    leaks = [r for r in g.relation_counts() if r in must_stay_whole and _brute_crossing(g, r, side)]
    assert report.nothing_crosses == (not leaks)
    assert sorted(report.leaking_relations()) == sorted(leaks)
    assert report.verdict().startswith("nothing crosses" if not leaks else "dependencies cross a split")


# --------------------------------------------------------------------------- examples: sorted, whatever the order
#: Ten samples of ten subjects, two per batch, the batches and the kinship pairs listed out of order.
UNSORTED = pd.DataFrame(
    {
        "sample_id": [f"x{i}" for i in range(1, 11)],
        "subject_id": [f"P{i}" for i in range(1, 11)],
        "batch_id": ["B5", "B5", "B4", "B4", "B6", "B6", "B10", "B10", "B2", "B2"],
    }
)
UNSORTED_KIN = pd.DataFrame({"id1": ["P3", "P2", "P10", "P8"], "id2": ["P1", "P1", "P9", "P7"], "kinship": 0.25})
#: A holdout: the odd samples tested, the even ones trained on.
HOLDOUT = pd.DataFrame({"sample_id": UNSORTED["sample_id"], "set": ["test", "train"] * 5})


def _expected_examples(sides: dict[str, str] | None) -> dict[str, str]:
    """The first three batches and related pairs spread over subjects (every one here) or, given the sides of a
    split, crossing it, in sorted order: plain Python over the tables."""
    batches: dict[str, set[str]] = {}
    for sample, batch in zip(UNSORTED["sample_id"], UNSORTED["batch_id"], strict=True):
        batches.setdefault(batch, set()).add(sample)
    subject_sample = dict(zip(UNSORTED["subject_id"], UNSORTED["sample_id"], strict=True))
    pairs = [tuple(sorted(p)) for p in zip(UNSORTED_KIN["id1"], UNSORTED_KIN["id2"], strict=True)]
    if sides is not None:
        batches = {b: s for b, s in batches.items() if {sides[x] for x in s} == {"train", "test"}}
        pairs = [p for p in pairs if sides[subject_sample[p[0]]] != sides[subject_sample[p[1]]]]
    return {
        "sample_processed_in_batch": ", ".join(sorted(batches)[:3]),
        "subject_related_to": ", ".join(f"{a}~{b}" for a, b in sorted(pairs)[:3]),
    }


@pytest.mark.parametrize("reverse", [False, True], ids=["as-listed", "rows-reversed"])
def test_examples_are_sorted_in_the_api_the_check_and_the_report(tmp_path, capsys, reverse):
    meta, kin = (UNSORTED[::-1], UNSORTED_KIN[::-1]) if reverse else (UNSORTED, UNSORTED_KIN)
    g = add_kinship(from_metadata(meta.reset_index(drop=True)), kin.reset_index(drop=True), "first")
    spec = SplitSpec.from_partition(derive(g, "subject"), g)
    spread = _expected_examples(None)
    crossing = _expected_examples(dict(zip(HOLDOUT["sample_id"], HOLDOUT["set"], strict=True)))
    assert spread == {"sample_processed_in_batch": "B10, B2, B4", "subject_related_to": "P1~P2, P1~P3, P10~P9"}
    assert crossing["subject_related_to"] == "P1~P2, P10~P9, P7~P8"  # P1 and P3 are both tested; text order
    for relation, shown in spread.items():
        assert _row(exposure(g, spec), relation)["examples"] == shown
    for relation, shown in crossing.items():
        assert _row(exposure(g, spec, HOLDOUT), relation)["examples"] == shown
    # the check prints the crossing ones, the report shows the spread ones (its spec has no folds)
    write_graph(g, tmp_path / "g.json")
    write_spec(spec, tmp_path / "s.json")
    HOLDOUT.to_csv(tmp_path / "holdout.csv", index=False)
    capsys.readouterr()
    assert main(["check", str(tmp_path / "s.json"), str(tmp_path / "holdout.csv"), "--graph", str(tmp_path / "g.json")])
    out = capsys.readouterr().out
    for relation, shown in crossing.items():
        assert f"  {relation} (" in out and f" — e.g. {shown}\n" in out, out
    html = render_html(spec, g)
    for shown in spread.values():
        assert f"<td class='mono'>{shown}</td>" in html
