"""PyTorch: samplers that draw a split's samples from a spec's fold plan.

Every sampler maps dataset rows to spec samples by sample id and yields
dataset row indices. It must be told which sample each row holds: ``ids=``
(the dataset's sample id of every row, in row order), or ``in_spec_order=True``
with ``dataset=`` when the rows are exactly the spec's samples in its
sample-id order (checked by length: the dataset must have one row per spec
sample). Given neither, a sampler refuses (``invalid_argument``) rather than
guess: a dataset in another order would put groups on both sides of a split.

* :class:`FoldSampler` — the samples of one role (train or test) of one split,
  shuffled with a seed that changes with :meth:`FoldSampler.set_epoch`.
* :class:`GroupBatchSampler` — batches that keep each group within one batch,
  or hold at most ``max_per_group`` samples of any group.
* :class:`GroupDistributedSampler` — whole groups sharded across ranks
  (balanced by sample count); training shards are padded to equal length,
  evaluation shards never are (no sample is evaluated twice).

>>> import pandas as pd
>>> from depgraph.spec.model import Constraint, SplitSpec
>>> from depgraph.folds.schemes import assign_folds
>>> spec = SplitSpec.build(pd.DataFrame({"sample_id": list("abcdef"), "group_id": list("aabbcc")}),
...                        constraint=Constraint(mode="subject"), recommended_resampling="grouped_cv")
>>> spec = assign_folds(spec, "group-kfold", n_splits=3)
>>> sorted(FoldSampler(spec, split=0, role="test", ids=list("fedcba")))  # split 0 tests e and f: rows 0 and 1
[0, 1]
>>> sorted(FoldSampler(spec, split=0, role="test", in_spec_order=True, dataset=range(6)))
[4, 5]
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence, Sized

import numpy as np

from depgraph.common.arguments import flag, in_order, instance, whole_number
from depgraph.errors import DepgraphError, missing_extra
from depgraph.folds.schemes import check_seed
from depgraph.spec.model import ROLES, SplitSpec

try:  # the torch extra: without it, say which extra to install rather than "No module named 'torch'"
    from torch.utils.data import Sampler
except ModuleNotFoundError as exc:
    raise missing_extra(__name__, "torch", exc) from None


def _rows(
    spec: SplitSpec,
    split: int,
    role: str,
    ids: Sequence[str] | None,
    in_spec_order: bool,
    dataset: Sized | None,
    sampler: str,
) -> tuple[np.ndarray, np.ndarray]:
    """Dataset rows holding the split's samples of ``role``, and those rows' group codes."""
    instance(spec, SplitSpec, f"{sampler}: the spec")
    in_spec_order = flag(in_spec_order, f"{sampler}: in_spec_order")
    plan = spec.require_folds()
    if role not in ROLES[:2]:
        raise DepgraphError("invalid_argument", f"role must be 'train' or 'test', not {role!r}")
    if isinstance(split, bool) or not isinstance(split, (int, np.integer)) or not 0 <= split < len(plan.splits):
        raise DepgraphError("invalid_argument", f"split {split!r} does not exist; the plan has {len(plan.splits)}")
    n_rows = _length(dataset) if dataset is not None else None
    if ids is None and not in_spec_order:
        raise DepgraphError(
            "invalid_argument",
            f"{sampler} needs each dataset row's sample id: pass ids= (the sample id of every row, in row order), "
            "or in_spec_order=True with dataset= when the rows are the spec's samples in sample-id order",
        )
    if ids is not None and in_spec_order:
        raise DepgraphError("invalid_argument", f"{sampler}: pass ids= or in_spec_order=True, not both")
    if in_spec_order:
        if n_rows is None:
            raise DepgraphError(
                "invalid_argument",
                f"{sampler}: in_spec_order=True needs dataset= (its length is checked against the spec's "
                f"{spec.n_samples} samples)",
            )
        if n_rows != spec.n_samples:
            raise DepgraphError(
                "invalid_argument",
                f"{sampler}: in_spec_order=True but the dataset has {n_rows} rows and the spec {spec.n_samples} "
                "samples; pass ids= (the sample id of every row)",
            )
        positions = np.arange(spec.n_samples)
    else:
        in_order(ids, f"{sampler}: ids=")
        if n_rows is not None and len(ids) != n_rows:
            raise DepgraphError(
                "invalid_argument", f"{sampler}: ids= names {len(ids)} rows but the dataset has {n_rows}"
            )
        positions = spec.positions(ids, f"{sampler}: ids= (dataset rows)")
    roles = plan.splits[split].roles(spec.n_samples)
    rows = np.flatnonzero(roles[positions] == ROLES.index(role))
    return rows, spec.group_codes()[positions[rows]]


def _length(dataset: Sized) -> int:
    try:
        return len(dataset)
    except TypeError:
        raise DepgraphError(
            "invalid_argument", f"dataset= must have a length (len()), not {type(dataset).__name__}"
        ) from None


def _epoch(epoch: int) -> int:
    if isinstance(epoch, bool) or not isinstance(epoch, (int, np.integer)) or epoch < 0:
        raise DepgraphError("invalid_argument", f"epoch must be a non-negative integer, not {epoch!r}")
    return int(epoch)


class FoldSampler(Sampler[int]):
    """The dataset rows of one split's train or test samples.

    Guarantee: yields exactly the split's samples of that role, each once per
    epoch. ``shuffle`` draws a new order each epoch from ``(seed, epoch)``.
    Rows are found by ``ids=`` or, with ``in_spec_order=True``, by position in
    ``dataset`` (see the module docstring).
    """

    def __init__(
        self,
        spec: SplitSpec,
        split: int = 0,
        role: str = "train",
        ids: Sequence[str] | None = None,
        shuffle: bool = True,
        seed: int = 0,
        *,
        in_spec_order: bool = False,
        dataset: Sized | None = None,
    ) -> None:
        self.seed = check_seed(seed)
        self.rows, _ = _rows(spec, split, role, ids, in_spec_order, dataset, "FoldSampler")
        self.split, self.role = int(split), role
        self.shuffle = flag(shuffle, "FoldSampler: shuffle") and role == "train"
        self.epoch = 0

    def __repr__(self) -> str:
        """Which split and side, how many dataset rows it yields, and how it orders them."""
        return (
            f"FoldSampler(split={self.split}, role={self.role!r}: {len(self.rows)} rows, shuffle={self.shuffle}, "
            f"seed={self.seed}, epoch={self.epoch})"
        )

    def set_epoch(self, epoch: int) -> None:
        self.epoch = _epoch(epoch)

    def __iter__(self) -> Iterator[int]:
        rows = self.rows
        if self.shuffle:
            rows = np.random.default_rng([self.seed, self.epoch]).permutation(rows)
        return iter(rows.tolist())

    def __len__(self) -> int:
        return len(self.rows)


class GroupBatchSampler(Sampler[list[int]]):
    """Batches of one split's samples that respect groups.

    With ``max_per_group=None`` each group lies within one batch: groups are
    packed whole (in seeded random order) into batches of at most
    ``batch_size`` samples; a group larger than ``batch_size`` forms a batch of
    its own. With ``max_per_group=m`` no batch holds more than ``m`` samples of
    any group (for contrastive or batch-statistics-sensitive training).
    Rows are found as by :class:`FoldSampler`.
    """

    def __init__(
        self,
        spec: SplitSpec,
        batch_size: int,
        split: int = 0,
        role: str = "train",
        ids: Sequence[str] | None = None,
        max_per_group: int | None = None,
        shuffle: bool = True,
        seed: int = 0,
        *,
        in_spec_order: bool = False,
        dataset: Sized | None = None,
    ) -> None:
        self.batch_size = whole_number(batch_size, "GroupBatchSampler: batch_size", minimum=1)
        self.max_per_group = (
            None
            if max_per_group is None
            else whole_number(max_per_group, "GroupBatchSampler: max_per_group", minimum=1)
        )
        self.shuffle = flag(shuffle, "GroupBatchSampler: shuffle")
        self.seed = check_seed(seed)
        self.rows, self.groups = _rows(spec, split, role, ids, in_spec_order, dataset, "GroupBatchSampler")
        self.split, self.role = int(split), role
        self.epoch = 0

    def __repr__(self) -> str:
        return (
            f"GroupBatchSampler(split={self.split}, role={self.role!r}: {len(self.rows)} rows in "
            f"{len(np.unique(self.groups))} groups, batch_size={self.batch_size}, "
            f"max_per_group={self.max_per_group}, shuffle={self.shuffle}, seed={self.seed}, epoch={self.epoch})"
        )

    def set_epoch(self, epoch: int) -> None:
        self.epoch = _epoch(epoch)

    def _batches(self) -> list[list[int]]:
        rng = np.random.default_rng([self.seed, self.epoch])
        uniques, members = np.unique(self.groups, return_inverse=True)
        order = rng.permutation(len(uniques)) if self.shuffle else np.arange(len(uniques))
        grouped = np.argsort(members, kind="stable")
        by_group = np.split(self.rows[grouped], np.searchsorted(members[grouped], np.arange(1, len(uniques))))
        if self.shuffle:
            by_group = [rng.permutation(m) for m in by_group]
        if self.max_per_group is None:
            batches, current = [], []
            for g in order:
                rows = by_group[g].tolist()
                if len(rows) > self.batch_size:  # an oversized group is a batch of its own
                    batches.append(rows)
                    continue
                if len(current) + len(rows) > self.batch_size:
                    batches.append(current)
                    current = []
                current += rows
            if current:
                batches.append(current)
            return batches
        queues = [by_group[g].tolist() for g in order]
        batches = []
        while any(queues):
            batch: list[int] = []
            for q in queues:  # deal up to max_per_group from each group in turn
                if len(batch) >= self.batch_size:
                    break
                take = min(self.max_per_group, len(q), self.batch_size - len(batch))
                batch += q[:take]
                del q[:take]
            batches.append(batch)
            queues = [q for q in queues if q]
        return batches

    def __iter__(self) -> Iterator[list[int]]:
        return iter(self._batches())

    def __len__(self) -> int:
        return len(self._batches())


class GroupDistributedSampler(Sampler[int]):
    """One rank's shard of a split, sharding whole groups across ranks.

    Groups (in seeded random order, largest first) go to the rank with the
    fewest samples so far, so shards are balanced and disjoint and together
    cover the split. Training shards (``pad=True``, the default for
    ``role="train"``) are padded with repeats of their own samples to the
    longest shard's length, as DistributedDataParallel expects; evaluation
    shards are never padded, so no sample is scored twice. Rows are found as
    by :class:`FoldSampler`.
    """

    def __init__(
        self,
        spec: SplitSpec,
        num_replicas: int,
        rank: int,
        split: int = 0,
        role: str = "train",
        ids: Sequence[str] | None = None,
        shuffle: bool = True,
        seed: int = 0,
        pad: bool | None = None,
        *,
        in_spec_order: bool = False,
        dataset: Sized | None = None,
    ) -> None:
        num_replicas = whole_number(num_replicas, "GroupDistributedSampler: num_replicas", minimum=1)
        rank = whole_number(rank, "GroupDistributedSampler: rank", minimum=0, maximum=num_replicas - 1)
        shuffle = flag(shuffle, "GroupDistributedSampler: shuffle")
        self.pad = (role == "train") if pad is None else flag(pad, "GroupDistributedSampler: pad")
        if self.pad and role == "test":
            raise DepgraphError(
                "invalid_argument", "evaluation shards are never padded: duplicates would be scored twice"
            )
        self.seed = check_seed(seed)
        self.rows, self.groups = _rows(spec, split, role, ids, in_spec_order, dataset, "GroupDistributedSampler")
        n_groups = len(np.unique(self.groups))
        if self.pad and n_groups < num_replicas:  # some rank would get no group: nothing of its own to pad with
            raise DepgraphError(
                "too_few_groups",
                f"GroupDistributedSampler: the {role} side of split {split} holds {n_groups} group(s) for "
                f"{num_replicas} replicas; with whole groups per rank some ranks would get no sample (padded shards "
                "must have the same length): use fewer replicas",
                n_groups=n_groups,
            )
        self.num_replicas, self.rank = num_replicas, rank
        self.split, self.role = int(split), role
        self.shuffle, self.epoch = shuffle, 0

    def __repr__(self) -> str:
        return (
            f"GroupDistributedSampler(split={self.split}, role={self.role!r}: {len(self.rows)} rows in "
            f"{len(np.unique(self.groups))} groups, rank {self.rank} of {self.num_replicas}, pad={self.pad}, "
            f"shuffle={self.shuffle}, seed={self.seed}, epoch={self.epoch})"
        )

    def set_epoch(self, epoch: int) -> None:
        self.epoch = _epoch(epoch)

    def _shards(self) -> list[np.ndarray]:
        rng = np.random.default_rng([self.seed, self.epoch])
        uniques, members, sizes = np.unique(self.groups, return_inverse=True, return_counts=True)
        order = np.lexsort((rng.random(len(uniques)), -sizes))
        load = np.zeros(self.num_replicas, dtype=np.int64)
        owner = np.empty(len(uniques), dtype=np.int64)
        for g in order:
            owner[g] = int(np.argmin(load))
            load[owner[g]] += sizes[g]
        shards = [self.rows[owner[members] == r] for r in range(self.num_replicas)]
        if self.shuffle:
            shards = [rng.permutation(s) for s in shards]
        return shards

    def __iter__(self) -> Iterator[int]:
        shards = self._shards()
        mine = shards[self.rank]
        if self.pad and len(mine):
            longest = max(len(s) for s in shards)
            mine = np.resize(mine, longest)  # repeats of this shard's own samples only
        return iter(mine.tolist())

    def __len__(self) -> int:
        shards = self._shards()
        return max(len(s) for s in shards) if self.pad and len(shards[self.rank]) else len(shards[self.rank])
