"""PyTorch samplers over real DataLoaders (CPU)."""

from __future__ import annotations

import os

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

if os.environ.get("CI"):
    import torch  # CI installs the CPU build (torch==2.13.0): a missing torch must fail there
else:
    torch = pytest.importorskip("torch")
from torch.utils.data import DataLoader, TensorDataset

from depgraph.adapters.torch import FoldSampler, GroupBatchSampler, GroupDistributedSampler
from depgraph.folds.schemes import assign_folds
from depgraph.spec.model import Constraint, SplitSpec


@pytest.fixture(scope="module")
def spec():
    rng = np.random.default_rng(2)
    sizes = rng.integers(1, 6, size=30)
    frame = pd.DataFrame(
        {
            "sample_id": [f"g{g:02d}-{i}" for g, n in enumerate(sizes) for i in range(n)],
            "group_id": [f"g{g:02d}" for g, n in enumerate(sizes) for _ in range(n)],
        }
    )
    s = SplitSpec.build(frame, constraint=Constraint(mode="subject"), recommended_resampling="grouped_cv")
    return assign_folds(s, "group-kfold", n_splits=3, seed=4)


@pytest.fixture(scope="module")
def dataset(spec):
    # dataset rows in reverse spec order, with each row's position as its tensor
    ids = spec.sample_ids[::-1].tolist()
    return TensorDataset(torch.arange(len(ids))), ids


def _expected(spec, split, role, ids):
    wanted = (
        set(spec.sample_ids[spec.folds.splits[split].test])
        if role == "test"
        else set(spec.sample_ids[spec.folds.splits[split].train(spec.n_samples)])
    )
    return sorted(i for i, sid in enumerate(ids) if sid in wanted)


@pytest.mark.parametrize("role", ["train", "test"])
def test_fold_sampler_yields_exactly_the_fold(spec, dataset, role):
    data, ids = dataset
    sampler = FoldSampler(spec, split=1, role=role, ids=ids, seed=3)
    rows = [int(x) for batch in DataLoader(data, batch_size=7, sampler=sampler) for x in batch[0]]
    assert sorted(rows) == _expected(spec, 1, role, ids) and len(rows) == len(sampler)


def test_fold_sampler_reshuffles_by_epoch_reproducibly(spec, dataset):
    _, ids = dataset
    sampler = FoldSampler(spec, split=0, ids=ids, seed=9)
    first = list(sampler)
    sampler.set_epoch(1)
    second = list(sampler)
    again = FoldSampler(spec, split=0, ids=ids, seed=9)
    again.set_epoch(1)
    assert first != second and sorted(first) == sorted(second) and list(again) == second


def test_group_batches_keep_groups_whole(spec, dataset):
    data, ids = dataset
    group_of = dict(zip(spec.sample_ids, spec.group_ids, strict=True))
    sampler = GroupBatchSampler(spec, batch_size=8, split=0, ids=ids)
    batches = [[int(x) for x in b[0]] for b in DataLoader(data, batch_sampler=sampler)]
    seen = {}
    for k, batch in enumerate(batches):
        assert len(batch) <= 8
        for row in batch:
            assert seen.setdefault(group_of[ids[row]], k) == k  # a group never spans two batches
    assert sorted(r for b in batches for r in b) == _expected(spec, 0, "train", ids)


def test_group_batches_cap_samples_per_group(spec, dataset):
    data, ids = dataset
    group_of = dict(zip(spec.sample_ids, spec.group_ids, strict=True))
    sampler = GroupBatchSampler(spec, batch_size=6, split=2, ids=ids, max_per_group=2)
    batches = [[int(x) for x in b[0]] for b in DataLoader(data, batch_sampler=sampler)]
    for batch in batches:
        counts = pd.Series([group_of[ids[r]] for r in batch]).value_counts()
        assert counts.max() <= 2 and len(batch) <= 6
    assert sorted(r for b in batches for r in b) == _expected(spec, 2, "train", ids)


@pytest.mark.parametrize("role", ["train", "test"])
def test_distributed_shards_hold_whole_groups_and_cover_the_split(spec, dataset, role):
    data, ids = dataset
    group_of = dict(zip(spec.sample_ids, spec.group_ids, strict=True))
    shards = []
    for rank in range(3):
        sampler = GroupDistributedSampler(spec, num_replicas=3, rank=rank, split=0, role=role, ids=ids, seed=1)
        sampler.set_epoch(2)
        shards.append([int(x) for b in DataLoader(data, batch_size=5, sampler=sampler) for x in b[0]])
    distinct = [set(s) for s in shards]
    groups = [{group_of[ids[r]] for r in s} for s in distinct]
    assert not (groups[0] & groups[1]) and not (groups[0] & groups[2]) and not (groups[1] & groups[2])
    assert sorted(set().union(*distinct)) == _expected(spec, 0, role, ids)
    if role == "test":  # evaluation: every sample once, no padding
        assert sum(len(s) for s in shards) == len(_expected(spec, 0, role, ids))
    else:  # training: equal lengths, padded only with the shard's own samples
        assert len({len(s) for s in shards}) == 1


def test_test_shards_refuse_padding(spec):
    from depgraph import DepgraphError

    with pytest.raises(DepgraphError):
        GroupDistributedSampler(spec, num_replicas=2, rank=0, role="test", pad=True)


# --------------------------------------------------------------------------- which sample each row holds
SAMPLERS = {
    "FoldSampler": lambda spec, **kw: FoldSampler(spec, split=0, **kw),
    "GroupBatchSampler": lambda spec, **kw: GroupBatchSampler(spec, batch_size=4, split=0, **kw),
    "GroupDistributedSampler": lambda spec, **kw: GroupDistributedSampler(spec, num_replicas=2, rank=0, **kw),
}


def _code(call):
    from depgraph import DepgraphError

    with pytest.raises(DepgraphError) as err:
        call()
    assert "\n" not in err.value.message
    return err.value.code, err.value.message


@pytest.mark.parametrize("name", SAMPLERS)
def test_a_sampler_without_ids_refuses_to_guess_the_row_order(spec, name):
    code, message = _code(lambda: SAMPLERS[name](spec))
    assert code == "invalid_argument" and name in message and "ids=" in message and "in_spec_order=True" in message


@pytest.mark.parametrize("name", SAMPLERS)
def test_in_spec_order_is_checked_by_the_dataset_length(spec, name):
    make = SAMPLERS[name]
    n = spec.n_samples
    assert _code(lambda: make(spec, in_spec_order=True))[0] == "invalid_argument"  # no dataset: nothing to check
    code, message = _code(lambda: make(spec, in_spec_order=True, dataset=range(n - 1)))
    assert code == "invalid_argument" and f"{n - 1} rows" in message and f"{n} samples" in message
    ordered = make(spec, in_spec_order=True, dataset=TensorDataset(torch.arange(n)), seed=5)
    by_id = make(spec, ids=spec.sample_ids.tolist(), seed=5)
    assert list(ordered) == list(by_id)  # the opt-in is exactly ids= in the spec's order


@pytest.mark.parametrize("name", SAMPLERS)
def test_contradictory_row_declarations_are_refused(spec, dataset, name):
    make = SAMPLERS[name]
    data, ids = dataset
    assert _code(lambda: make(spec, ids=ids, in_spec_order=True, dataset=data))[0] == "invalid_argument"
    code, message = _code(lambda: make(spec, ids=ids[:-1], dataset=data))
    assert code == "invalid_argument" and f"{len(ids) - 1} rows" in message and str(len(data)) in message
    assert _code(lambda: make(spec, ids="g00-0"))[0] == "invalid_argument"  # one string is not one id per row
    assert _code(lambda: make(spec, ids=[*ids[:-1], "nobody"]))[0] == "reference"
    assert _code(lambda: make(spec, ids=ids, dataset=42))[0] == "invalid_argument"  # no length


@pytest.mark.parametrize("name", SAMPLERS)
@pytest.mark.parametrize("seed", [-5, 2**32, 2**64, 1.5, True])
def test_seeds_outside_32_bits_are_refused(spec, dataset, name, seed):
    _, ids = dataset
    code, message = _code(lambda: SAMPLERS[name](spec, ids=ids, seed=seed))
    assert code == "invalid_argument" and "4294967295" in message and repr(seed) in message


@pytest.mark.parametrize("name", SAMPLERS)
def test_a_negative_epoch_is_refused(spec, dataset, name):
    _, ids = dataset
    sampler = SAMPLERS[name](spec, ids=ids, seed=2**32 - 1)
    assert _code(lambda: sampler.set_epoch(-1))[0] == "invalid_argument"
    sampler.set_epoch(3)
    assert len(list(sampler)) == len(sampler)


@settings(max_examples=60, deadline=None)
@given(
    sizes=st.lists(st.integers(1, 5), min_size=3, max_size=25),
    folds=st.integers(2, 3),
    seed=st.integers(0, 2**32 - 1),
    order=st.randoms(use_true_random=False),
)
def test_with_ids_no_group_is_on_both_sides_of_a_shuffled_dataset(sizes, folds, seed, order):
    frame = pd.DataFrame(
        {
            "sample_id": [f"g{g:02d}-{i}" for g, n in enumerate(sizes) for i in range(n)],
            "group_id": [f"g{g:02d}" for g, n in enumerate(sizes) for _ in range(n)],
        }
    )
    plan = assign_folds(
        SplitSpec.build(frame, constraint=Constraint(mode="subject"), recommended_resampling="grouped_cv"),
        "group-kfold",
        n_splits=folds,
        seed=seed % 7,
    )
    ids = frame["sample_id"].tolist()
    order.shuffle(ids)  # the dataset's rows in an order of their own
    group_of_row = [sid.split("-")[0] for sid in ids]  # group from the id, not from the code under test
    test_rows = list(FoldSampler(plan, split=0, role="test", ids=ids))
    train_rows = list(FoldSampler(plan, split=0, role="train", ids=ids, seed=seed))
    batch_rows = [r for b in GroupBatchSampler(plan, 3, split=0, ids=ids, seed=seed) for r in b]
    shard_rows = [r for rank in range(2) for r in GroupDistributedSampler(plan, 2, rank, split=0, ids=ids, pad=False)]
    test_groups = {group_of_row[r] for r in test_rows}
    for rows in (train_rows, batch_rows, shard_rows):
        assert not test_groups & {group_of_row[r] for r in rows}
        assert sorted(rows) == sorted(train_rows)
    assert sorted(test_rows + train_rows) == list(range(len(ids)))  # group k-fold: everyone on one side
