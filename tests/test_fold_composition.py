"""What each fold holds and whether the folds track a declared factor (depgraph.fold_composition, depgraph folds).

Expected shares come from pandas' crosstab; the warning's threshold from the documented rule."""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
import pytest

import depgraph
from depgraph.audit.composition import TRACKING, fold_composition
from depgraph.cli.main import main
from depgraph.folds.schemes import assign_folds
from depgraph.spec.files import write_spec
from depgraph.spec.model import Constraint, FoldPlan, SplitSpec


def site_spec(mode: str = "subject") -> SplitSpec:
    """240 samples of 120 subjects at 3 sites; folds that put site A mostly in fold 0 (by subject: 32 of its 40)."""
    n = 240
    site = np.repeat(["A", "B", "C"], 80)
    frame = pd.DataFrame({"sample_id": [f"S{i:03d}" for i in range(n)],
                          "group_id": site if mode == "site" else [f"P{i // 2:03d}" for i in range(n)],
                          "site_group": site, "stratum": ["case", "control"] * 120})  # fmt: skip
    resampling = "blocked_cv" if mode == "site" else "grouped_cv"
    spec = SplitSpec.build(frame, constraint=Constraint(mode=mode), recommended_resampling=resampling)
    fold = np.repeat(np.arange(3), 80) if mode == "site" else np.repeat(np.arange(120) % 3, 2)
    if mode != "site":
        fold[:80] = np.repeat([0] * 32 + [1] * 4 + [2] * 4, 2)
    return spec.with_folds(FoldPlan.from_roles((fold[None, :] == np.arange(3)[:, None]).astype(np.int8)))


def test_shares_are_the_folds_crosstab_and_a_tracked_site_is_warned_about():
    spec = site_spec()
    with pytest.warns(depgraph.DepgraphWarning, match="the folds track site_group") as heard:
        found = fold_composition(spec)
    assert heard[0].message.code == "folds_track_factor"
    label = np.argmax(np.stack([s.roles(spec.n_samples) for s in spec.folds.splits]) == 1, axis=0)
    expected = pd.crosstab(label, spec.samples["site_group"], normalize="index")
    got = found.wide("site_group")
    assert np.allclose(got.to_numpy(), expected.to_numpy())
    row = found.association.iloc[0]
    assert row["column"] == "site_group" and row["cramers_v"] >= TRACKING and row["tracks"]
    assert found.sizes["n_test"].sum() == spec.n_samples
    assert set(found.shares["column"]) == {"site_group", "stratum"}


def test_folds_split_on_the_factor_the_spec_groups_by_are_not_warned_about():
    with warnings.catch_warnings():
        warnings.simplefilter("error", depgraph.DepgraphWarning)
        found = fold_composition(site_spec("site"))
    row = found.association.iloc[0]
    assert row["intended"] and not row["tracks"]  # three groups: three observations, V near 0 after correction
    assert "(split on it)" in found.lines()[0]


def test_the_folds_command_prints_each_factor_and_the_warning(tmp_path, capsys):
    spec = site_spec()
    bare = SplitSpec.build(spec.samples, constraint=spec.constraint, recommended_resampling="grouped_cv")
    write_spec(bare, tmp_path / "s.json")
    code = main(["folds", str(tmp_path / "s.json"), "--scheme", "group-kfold", "--n-splits", "3", "--seed", "1",
                 "-o", str(tmp_path / "f.json")])  # fmt: skip
    said = capsys.readouterr()
    assert code == 0 and "folds vs site_group: Cramér's V" in said.out
    assert "folds_track_factor" not in said.err  # balanced folds do not track the site


def test_the_report_shows_each_folds_composition_the_largest_groups_and_readable_fold_labels(tmp_path):
    spec = site_spec()
    with pytest.warns(depgraph.DepgraphWarning):
        lines = fold_composition(spec).lines()
    depgraph.write_report(spec, tmp_path / "r.html")
    page = (tmp_path / "r.html").read_text()
    assert "<h3>What each fold holds</h3>" in page and "Share of each site_group among a fold" in page
    import html

    assert html.escape(lines[0].strip()) in page and "the folds track it" in page
    assert "<h3>The 10 largest groups</h3>" in page
    from depgraph.audit.report import split_label

    assert [split_label(s, spec.folds) for s in spec.folds.splits] == ["fold 0", "fold 1", "fold 2"]
    repeated = assign_folds(SplitSpec.build(spec.samples, constraint=spec.constraint,
                                            recommended_resampling="grouped_cv"), "group-kfold", n_splits=2,
                            n_repeats=2, seed=0)  # fmt: skip
    assert split_label(repeated.folds.splits[3], repeated.folds) == "repeat 1, fold 1"


def test_the_report_compares_groupings_when_asked(tmp_path, capsys, family_meta, family_kinship):
    graph = depgraph.add_kinship(depgraph.from_metadata(family_meta), family_kinship, "first")
    depgraph.write_graph(graph, tmp_path / "g.json")
    spec = SplitSpec.from_partition(depgraph.derive(graph, "subject"), graph)
    write_spec(spec, tmp_path / "s.json")
    args = ["report", str(tmp_path / "s.json"), "-o", str(tmp_path / "r.html")]
    assert main([*args, "--graph", str(tmp_path / "g.json"), "--compare", "subject,relatedness"]) == 0
    page = (tmp_path / "r.html").read_text()
    assert "<h2>Groupings compared</h2>" in page and "alt='groupings compared'" in page
    expected = depgraph.compare(graph, ["subject", "relatedness"])
    assert all(f"<td>{n}</td>" in page for n in expected["groups"])
    capsys.readouterr()
    (tmp_path / "r.html").unlink()
    assert main([*args, "--compare", "subject"]) == 2  # no graph to derive them from
    err = capsys.readouterr().err
    assert "give --graph too" in err and len(err.splitlines()) == 1 and not (tmp_path / "r.html").exists()


def test_samples_no_split_uses_are_left_out_and_overlapping_tests_get_no_v():
    """Site A excluded from every split of a 2-fold plan whose folds mix B and C alike: no tracking; a custom plan
    testing a sample twice in one repeat: each split's own sizes, no V."""
    spec = site_spec()
    site = spec.samples["site_group"].to_numpy()
    fold = np.repeat(np.arange(80) % 2, 2)
    roles = np.full((2, 240), 2, dtype=np.int8)
    roles[:, 80:] = (fold[None, :] == np.arange(2)[:, None]).astype(np.int8)
    excluded = spec.with_folds(FoldPlan.from_roles(roles))
    with warnings.catch_warnings():
        warnings.simplefilter("error", depgraph.DepgraphWarning)
        found = fold_composition(excluded)
    assert found.association["cramers_v"].iloc[0] < TRACKING and not (site[roles[0] < 2] == "A").any()
    overlapping = np.zeros((2, 240), dtype=np.int8)
    overlapping[0, :120], overlapping[1, 60:180] = 1, 1
    found = fold_composition(spec.with_folds(FoldPlan.from_roles(overlapping)), warn=False)
    assert found.sizes["n_test"].tolist() == [120, 120] and np.isnan(found.association["cramers_v"].iloc[0])
    assert "no Cramér's V" in found.lines()[0]


def test_v_counts_a_group_once_per_category_so_copies_inside_groups_change_nothing():
    """Every sample deposited three times in its group: the folds still place the same groups, V is unchanged
    (counted over samples, the copies would shrink the chance correction and inflate V)."""
    spec = site_spec()
    tripled = pd.concat([spec.samples.assign(sample_id=spec.samples["sample_id"] + f"-{k}") for k in range(3)])
    tripled = tripled.sort_values("sample_id", kind="stable").reset_index(drop=True)
    big = SplitSpec.build(tripled, constraint=spec.constraint, recommended_resampling="grouped_cv")
    tested = np.argmax(np.stack([s.roles(spec.n_samples) for s in spec.folds.splits]) == 1, axis=0)
    fold_of = dict(zip(spec.samples["group_id"], tested, strict=True))
    fold = np.array([fold_of[g] for g in big.samples["group_id"]])
    big = big.with_folds(FoldPlan.from_roles((fold[None, :] == np.arange(3)[:, None]).astype(np.int8)))
    once = fold_composition(spec, warn=False).association["cramers_v"].iloc[0]
    assert fold_composition(big, warn=False).association["cramers_v"].iloc[0] == once
