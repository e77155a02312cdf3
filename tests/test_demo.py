"""The demo story on the bundled cohort: what each chapter leaks, and that the last leaks nothing.

Crossings are recomputed here from the spec's folds and the cohort's own
tables (the injected re-deposits, the kinship pairs), not read from the
exposure report, and then compared with what the report says.
"""

from __future__ import annotations

import importlib.util

import numpy as np
import pandas as pd
import pytest

from depgraph.cli.demo import AUDIT_THRESHOLD, demo_cohort, honest_estimates, run_story
from depgraph.cli.main import main
from depgraph.spec.model import SplitSpec


@pytest.fixture(scope="module")
def story():
    return run_story()


def _crossing_pairs(spec: SplitSpec, left: list[str], right: list[str]) -> int:
    """Pairs of sample sets with a train member on one side and a test member on the other, in any split."""
    index = pd.Index(spec.sample_ids)
    roles = np.array([s.roles(spec.n_samples) for s in spec.folds.splits])
    count = 0
    for a, b in zip(left, right, strict=True):
        ra, rb = roles[:, index.get_indexer(a)], roles[:, index.get_indexer(b)]
        a_train, a_test = (ra == 0).any(axis=1), (ra == 1).any(axis=1)
        b_train, b_test = (rb == 0).any(axis=1), (rb == 1).any(axis=1)
        count += bool(((a_train & b_test) | (a_test & b_train)).any())
    return count


def _families(story) -> tuple[list[list[str]], list[list[str]]]:
    meta = story.cohort.metadata
    of_subject = meta.groupby("subject_id")["sample_id"].apply(list)
    kin = story.cohort.kinship
    return [of_subject[s] for s in kin["id1"]], [of_subject[s] for s in kin["id2"]]


def test_the_cohort_is_as_described():
    cohort = demo_cohort()
    meta = cohort.metadata
    originals = meta[~meta["sample_id"].str.startswith("R")]
    assert originals.groupby("family")["subject_id"].nunique().eq(2).all()  # two siblings per family
    assert originals.groupby("subject_id").size().eq(3).all()  # three visits each
    assert meta["batch_id"].nunique() == 6
    assert len(cohort.duplicates) == 6 and cohort.duplicates["id2"].str.startswith("R").all()
    # re-deposits carry new sample and subject ids: nothing in the metadata links them to the original
    copies = meta.set_index("sample_id").loc[cohort.duplicates["id2"]]
    assert copies["subject_id"].str.startswith("X").all()


def test_the_audit_finds_exactly_the_redeposits(story):
    found = {frozenset(p) for p in story.audited[["id1", "id2"]].itertuples(index=False)}
    injected = {frozenset(p) for p in story.cohort.duplicates[["id1", "id2"]].itertuples(index=False)}
    assert found == injected and (story.audited["similarity"] >= AUDIT_THRESHOLD).all()


def test_subject_grouping_leaks_relatives_and_redeposits(story):
    first = story.chapters[0]
    dups = story.cohort.duplicates
    crossing_dups = _crossing_pairs(first.spec, [[a] for a in dups["id1"]], [[b] for b in dups["id2"]])
    crossing_kin = _crossing_pairs(first.spec, *_families(story))
    assert crossing_dups > 0 and crossing_kin > 0
    table = first.exposure.table.set_index("relation")
    assert table.loc["sample_duplicate_of", "crossing"] == crossing_dups
    assert table.loc["subject_related_to", "crossing"] == crossing_kin
    assert first.exposure.leaking_relations() == ["subject_related_to", "sample_duplicate_of"]


def test_relatedness_alone_still_leaks_the_redeposits(story):
    second = story.chapters[1]
    dups = story.cohort.duplicates
    assert _crossing_pairs(second.spec, *_families(story)) == 0
    crossing = _crossing_pairs(second.spec, [[a] for a in dups["id1"]], [[b] for b in dups["id2"]])
    assert crossing > 0
    assert second.exposure.table.set_index("relation").loc["sample_duplicate_of", "crossing"] == crossing


def test_after_write_back_nothing_crosses_and_the_table_says_so(story):
    last = story.chapters[-1]
    dups = story.cohort.duplicates
    assert _crossing_pairs(last.spec, [[a] for a in dups["id1"]], [[b] for b in dups["id2"]]) == 0
    assert _crossing_pairs(last.spec, *_families(story)) == 0
    table = last.exposure.table.set_index("relation")
    assert table.loc[["sample_belongs_to_subject", "subject_related_to", "sample_duplicate_of"], "crossing"].eq(0).all()
    assert table.loc["sample_duplicate_of", "followed"] and last.exposure.nothing_crosses
    assert last.exposure.leaking_relations() == []
    # blocks still mix, as they should under a grouping that does not follow them
    assert table.loc["sample_processed_in_batch", "crossing"] > 0


def test_honest_estimates_order_the_designs_and_only_the_last_is_near_the_external_auc():
    table = honest_estimates()
    assert table["design"].tolist() == [
        "row-wise", "subject grouping", "relatedness", "relatedness + audited duplicates (composite/strict)",
    ]  # fmt: skip
    assert table["cv_auc"].is_monotonic_decreasing and table["cv_auc"].is_unique
    assert table["external_auc"].nunique() == 1  # one final model, fitted on all development samples
    assert (table["optimism"].iloc[:2] > 0.1).all() and abs(table["optimism"].iloc[-1]) < 0.1


@pytest.mark.slow  # the whole demo: ~6 s; CI runs it (--slow)
def test_the_demo_ends_with_the_honest_estimates(tmp_path, capsys):
    assert main(["demo", "-o", str(tmp_path)]) == 0
    out = capsys.readouterr().out
    step = out[out.index("6. honest estimates") :]
    lines = [line for line in step.splitlines() if " vs external " in line]
    assert [line.split(":")[0].strip() for line in lines] == honest_estimates()["design"].tolist()
    assert out.index("5. verdict") < out.index("6. honest estimates") < out.index("\nwrote ")


def test_without_scikit_learn_the_last_step_is_one_note(tmp_path, capsys, monkeypatch):
    find_spec = importlib.util.find_spec
    monkeypatch.setattr(
        importlib.util, "find_spec", lambda name, *a: None if name == "sklearn" else find_spec(name, *a)
    )
    assert main(["demo", "-o", str(tmp_path)]) == 0
    step = capsys.readouterr().out.split("6. honest estimates")[1].split("\nwrote ")[0]
    assert "skipped: scikit-learn is not installed" in step and " vs external " not in step
