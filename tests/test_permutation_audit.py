"""depgraph.adapters.sklearn.permutation_audit: labels permuted by whole spec groups (within blocks when asked), the
estimator refitted on the spec's folds; a model that scores on permuted labels is a coded finding.

Expected values from plain Python (which rows a permutation may exchange) and from generated cohorts whose leak is
known."""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import depgraph
from depgraph.folds.schemes import assign_folds
from depgraph.spec.model import Constraint, SplitSpec

sklearn_split = pytest.importorskip("depgraph.adapters.sklearn")
linear_model = pytest.importorskip("sklearn.linear_model")


def confounded(n_subjects: int = 120, seed: int = 0) -> tuple[SplitSpec, pd.DataFrame, np.ndarray]:
    """Subjects of two samples in 4 batches; batches 0 and 1 hold mostly cases, 2 and 3 mostly controls; the one
    feature says the batch and nothing else (a batch effect the model learns in place of biology)."""
    rng = np.random.default_rng(seed)
    batch = np.repeat(rng.integers(0, 4, n_subjects), 2)
    case = np.repeat(rng.random(n_subjects) < np.where(batch[::2] < 2, 0.85, 0.15), 2).astype(int)
    ids = [f"S{i:04d}" for i in range(2 * n_subjects)]
    frame = pd.DataFrame({"sample_id": ids, "group_id": [f"P{i // 2:04d}" for i in range(2 * n_subjects)],
                          "batch_group": [f"B{b}" for b in batch]})  # fmt: skip
    spec = SplitSpec.build(frame, constraint=Constraint(mode="subject"), recommended_resampling="grouped_cv")
    spec = assign_folds(spec, "group-kfold", n_splits=4, seed=1)
    X = pd.DataFrame({"batch_signal": batch < 2}, index=ids).astype(float) + rng.normal(0, 0.1, (len(ids), 1))
    return spec, X, case


def test_fewer_than_twenty_permutations_are_refused():
    spec, X, y = confounded(20)
    for k in (19, 0, 2.5, True, "50"):
        with pytest.raises(depgraph.DepgraphError, match="meaningless") as caught:
            sklearn_split.permutation_audit(linear_model.LogisticRegression(), X, y, spec, k)
        assert caught.value.code == "invalid_argument"


def test_a_batch_confounded_with_the_outcome_is_found_when_permuting_within_batches():
    spec, X, y = confounded()
    model = linear_model.LogisticRegression()
    free = sklearn_split.permutation_audit(model, X, y, spec, 20, seed=1)
    # across batches the permuted labels lose their link to the feature: chance, and the observed AUC stands out
    assert free.observed > 0.75 and abs(np.median(free.null) - 0.5) < 0.1 and free.p_value == 1 / 21
    assert not free.findings
    with pytest.warns(depgraph.DepgraphWarning, match="batch_group shares with the outcome") as heard:
        kept = sklearn_split.permutation_audit(model, X, y, spec, 20, within="batch_group", seed=1)
    assert heard[0].message.code == "permuted_score_above_chance"
    assert np.median(kept.null) > 0.7 and kept.findings[0][0] == "permuted_score_above_chance"
    assert "permuted_score_above_chance" in str(kept)


@settings(max_examples=30, deadline=None)
@given(sizes=st.lists(st.integers(1, 3), min_size=2, max_size=12), blocks=st.integers(1, 3), seed=st.integers(0, 99))
def test_a_permutation_moves_whole_groups_onto_groups_of_their_size_and_block(sizes, blocks, seed):
    rows = [(g, j) for g, size in enumerate(sizes) for j in range(size)]
    frame = pd.DataFrame({"sample_id": [f"S{i:03d}" for i in range(len(rows))],
                          "group_id": [f"G{g:03d}" for g, _ in rows],
                          "site_group": [f"X{g % blocks}" for g, _ in rows]})  # fmt: skip
    spec = SplitSpec.build(frame, constraint=Constraint(mode="subject"), recommended_resampling="grouped_cv")
    (order,) = sklearn_split.group_permutations(spec, np.arange(len(rows)), "site", 1, seed)
    assert sorted(order.tolist()) == list(range(len(rows)))  # a permutation of the rows
    group_of = [g for g, _ in rows]
    for g, size in enumerate(sizes):
        mine = [i for i, (h, _) in enumerate(rows) if h == g]
        sources = {group_of[order[i]] for i in mine}
        assert len(sources) == 1  # one group's labels, taken whole
        (source,) = sources
        assert sizes[source] == size and source % blocks == g % blocks
        assert [rows[order[i]][1] for i in mine] == list(range(size))  # in the group's own order


def test_rows_without_sample_ids_are_refused():
    spec, X, y = confounded()
    with pytest.raises(depgraph.DepgraphError, match="sample id"):
        sklearn_split.permutation_audit(linear_model.LogisticRegression(), X.to_numpy(), y, spec, 20)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        with pytest.raises(depgraph.DepgraphError, match="no such sample column"):
            sklearn_split.permutation_audit(linear_model.LogisticRegression(), X, y, spec, 20, within="nope")


def test_groups_of_one_label_move_whatever_their_size_and_the_audit_says_how_many_moved():
    """Groups of 1 to 12 samples, each size once, each group one label: every label can still move."""
    sizes = list(range(1, 13))
    rows = [(g, j) for g, size in enumerate(sizes) for j in range(size)]
    frame = pd.DataFrame({"sample_id": [f"S{i:03d}" for i in range(len(rows))],
                          "group_id": [f"G{g:03d}" for g, _ in rows]})  # fmt: skip
    spec = SplitSpec.build(frame, constraint=Constraint(mode="subject"), recommended_resampling="grouped_cv")
    labels = np.array([g % 2 for g, _ in rows])
    orders = sklearn_split.group_permutations(spec, np.arange(len(rows)), None, 20, 0, labels)
    group = np.array([g for g, _ in rows])
    moved = np.mean([np.mean(group[o] != group) for o in orders])
    assert moved > 0.7
    for order in orders:  # each group took one other group's single label
        assert all(len(set(order[group == g].tolist())) == 1 for g in range(len(sizes)))


def test_a_group_spanning_blocks_bad_seeds_and_misaligned_labels_are_refused():
    spec, X, y = confounded()
    moved = spec.samples.assign(batch_group=spec.samples["batch_group"].where(spec.samples.index != 0, "B9"))
    spanning = SplitSpec.build(moved, constraint=spec.constraint, recommended_resampling="grouped_cv")
    spanning = spanning.with_folds(spec.folds)
    with pytest.raises(depgraph.DepgraphError, match="more than one batch_group block") as caught:
        sklearn_split.permutation_audit(linear_model.LogisticRegression(), X, y, spanning, 20, within="batch_group")
    assert "P0000" in str(caught.value)
    for seed in (-1, 1.5, None):
        with pytest.raises(depgraph.DepgraphError):
            sklearn_split.permutation_audit(linear_model.LogisticRegression(), X, y, spec, 20, seed=seed)
    labelled = pd.Series(y, index=X.index)
    shuffled = labelled.sample(frac=1, random_state=0)  # the same labels by id, in another order: aligned
    a = sklearn_split.permutation_audit(linear_model.LogisticRegression(), X, labelled, spec, 20, seed=2)
    b = sklearn_split.permutation_audit(linear_model.LogisticRegression(), X, shuffled, spec, 20, seed=2)
    assert a.observed == b.observed and np.array_equal(a.null, b.null)
    with pytest.raises(depgraph.DepgraphError, match="indexed by other ids"):
        sklearn_split.permutation_audit(linear_model.LogisticRegression(), X, labelled.iloc[1:], spec, 20)
