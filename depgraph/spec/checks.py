"""What a spec says of itself, checked: fold positions, the groups and their summary, sample order, pseudonyms.

Every spec depgraph makes and every spec file it reads passes these checks (a file that fails one contradicts itself
and is refused even when its digest matches). They read columns and positions, never one object per sample; they
take a fold plan as anything with the fields of :class:`SplitPositions` and :class:`PlanPositions`, so the models
(:mod:`depgraph.spec.model`) build on them.

>>> groups = Groups.of(pd.DataFrame({"group_id": ["b", "a", "b"]}), "spec")
>>> groups.shape()["largest_group"], groups.sizes.tolist()
('b', [2, 1])
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Protocol

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc

from depgraph.common.arrays import distinct, sorted_codes, text_array, text_buffers
from depgraph.errors import DepgraphError, describe_ids


class SplitPositions(Protocol):
    """What the checks read of a fold split (:class:`~depgraph.spec.model.FoldSplit`)."""

    repeat: int
    fold: int
    n_train: int
    n_test: int
    n_excluded: int
    test: np.ndarray
    excluded: np.ndarray


class PlanPositions(Protocol):
    """What the checks read of a fold plan (:class:`~depgraph.spec.model.FoldPlan`)."""

    scheme: str
    parameters: Mapping[str, Any]
    splits: Sequence[SplitPositions]


def untested_split(where: str, i: int, repeat: int, fold: int, scheme: str, code: str | None = None) -> DepgraphError:
    """The refusal of a split that tests no sample: ``too_few_groups`` for a plan being made (its groups did not
    fill the folds; on one machine and on Spark alike), ``code`` (a reader's) for one read from a file."""
    return DepgraphError(
        code or "too_few_groups",
        f"{where}.splits[{i}] (repeat {repeat}, fold {fold}) tests no sample"
        + ("" if code else f"; the {scheme} plan has more folds than its groups fill"),
    )


def check_splits(splits: Sequence[SplitPositions], n_samples: int, where: str, code: str = "schema") -> None:
    """Positions in range, sorted and unique, test and excluded disjoint, counts consistent
    (each split in time linear in its positions, not in the samples); ``schema`` errors of a file, or
    ``invalid_argument`` for folds made in memory."""
    for i, split in enumerate(splits):
        for name in ("test", "excluded"):
            values = getattr(split, name)
            if len(values) and (values.min() < 0 or values.max() >= n_samples):
                bad = int(values[(values < 0) | (values >= n_samples)][0])
                raise DepgraphError(
                    code, f"{where}.splits[{i}].{name} holds position {bad}; the spec has {n_samples} samples"
                )
            if len(values) > 1 and (np.diff(values) <= 0).any():
                raise DepgraphError(code, f"{where}.splits[{i}].{name} must be sorted positions without repeats")
        if len(split.test) and len(split.excluded):
            found = split.test[np.minimum(np.searchsorted(split.test, split.excluded), len(split.test) - 1)]
            both = split.excluded[found == split.excluded]
            if len(both):
                raise DepgraphError(code, f"{where}.splits[{i}]: position {int(both[0])} is both tested and excluded")
        counts = (n_samples - len(split.test) - len(split.excluded), len(split.test), len(split.excluded))
        if (split.n_train, split.n_test, split.n_excluded) != counts:
            raise DepgraphError(
                code,
                f"{where}.splits[{i}]: n_train/n_test/n_excluded say {split.n_train}/{split.n_test}/{split.n_excluded},"
                f" the positions give {counts[0]}/{counts[1]}/{counts[2]}",
            )


class Groups:
    """The groups of a spec's samples: a code per sample, the distinct group ids and their sizes
    (hashed once, never sorted: only the ties for the largest group are compared)."""

    def __init__(self, codes: np.ndarray, names: np.ndarray | pa.Array) -> None:
        self.codes = codes.astype(np.int64, copy=False)
        self._names = names  # Arrow text from a reader: only the names asked for become Python strings
        self.sizes: np.ndarray = np.bincount(self.codes, minlength=len(names))

    @classmethod
    def of_text(cls, group_ids: pa.Array) -> Groups:
        """The groups of checked Arrow text (a reader's column)."""
        encoded = group_ids.dictionary_encode()
        return cls(encoded.indices.to_numpy(zero_copy_only=False), encoded.dictionary)

    def name(self, code: int) -> str:
        name = self._names[code]
        return name.as_py() if isinstance(name, pa.Scalar) else str(name)

    def names_where(self, mask: np.ndarray) -> list[str]:
        if isinstance(self._names, pa.Array):
            return self._names.filter(pa.array(mask)).to_pylist()
        return [str(n) for n in self._names[mask].tolist()]

    @classmethod
    def of(cls, samples: pd.DataFrame, where: str) -> Groups:
        """The groups of a samples frame."""
        if "group_id" not in samples.columns:
            raise DepgraphError("invalid_argument", f"{where}: samples need a group_id column")
        return cls.of_text(text_array(samples["group_id"]))  # hashed in Arrow: no Python string per sample

    def shape(self) -> dict[str, Any]:
        """A spec summary's fields: n_samples, n_groups, the largest group (the smallest id, in byte order, among
        equals), its size, singletons."""
        if not len(self.sizes):
            return dict(n_samples=0, n_groups=0, largest_group=None, largest_group_size=0, singletons=0)
        largest = int(self.sizes.max())
        return dict(
            n_samples=len(self.codes),
            n_groups=len(self.sizes),
            largest_group=min(self.names_where(self.sizes == largest)),  # code point order: byte order
            largest_group_size=largest,
            singletons=int((self.sizes == 1).sum()),
        )

    def check_summary(self, given: dict[str, Any], where: str, code: str) -> None:
        """``given`` (a summary's fields) counts these groups; ``code`` naming the first field that does not."""
        actual = self.shape()
        for field, value in actual.items():
            if given.get(field) != value:
                raise DepgraphError(
                    code,
                    f"{where}: summary.{field} says {given.get(field)!r}, the samples give {value!r}",
                    field=field,
                )


def check_sample_order(ids: pa.Array, where: str, unique_only: bool = False) -> None:
    """Sample ids strictly increasing in byte order (so sorted, and never repeated), or only never
    repeated (``unique_only``)."""
    if len(ids) < 2:
        return
    ahead = pc.less(ids.slice(0, len(ids) - 1), ids.slice(1))
    if pc.all(ahead).as_py():
        return
    _, first = sorted_codes(ids)
    if len(first) < len(ids):
        counts = pc.value_counts(ids)
        twice = counts.field("values").filter(pc.greater(counts.field("counts"), 1)).to_pylist()
        raise DepgraphError("integrity", f"{where}: sample ids repeat: {describe_ids(twice)}", ids=twice)
    if unique_only:
        return
    i = int(np.flatnonzero(~ahead.to_numpy(zero_copy_only=False))[0]) + 1
    raise DepgraphError(
        "integrity",
        f"{where}: samples.sample_id[{i}] {ids[i].as_py()!r} comes after {ids[i - 1].as_py()!r}; samples are "
        "in sample-id order (byte order), and fold positions count in that order",
    )


def sample_order(samples: pd.DataFrame, where: str) -> np.ndarray | None:
    """The row order that puts ``samples`` in sample-id order (byte order), or None when they are in it (or their
    ids are not text: the checks of ids name that); repeated sample ids are a ``duplicate_id`` error."""
    if "sample_id" not in samples.columns or len(samples) < 2:
        return None
    try:
        ids = pa.array(samples["sample_id"].to_numpy(dtype=object), type=pa.string(), from_pandas=True)
    except (pa.ArrowInvalid, pa.ArrowTypeError):
        return None  # Groups.of names the offending value
    if ids.null_count or pc.all(pc.less(ids.slice(0, len(ids) - 1), ids.slice(1))).as_py():
        return None
    _, first = sorted_codes(ids)
    if len(first) < len(ids):
        counts = pc.value_counts(ids)
        twice = counts.field("values").filter(pc.greater(counts.field("counts"), 1)).to_pylist()
        raise DepgraphError("duplicate_id", f"{where}: sample ids repeat: {describe_ids(twice)}", ids=twice)
    return pc.sort_indices(ids).to_numpy(zero_copy_only=False).astype(np.int64)


_HEX_DIGIT = np.zeros(256, dtype=bool)
_HEX_DIGIT[list(b"0123456789abcdef")] = True


def check_pseudonyms(samples: pd.DataFrame, columns: Sequence[str], digits: int, where: str, code: str) -> None:
    """The ``columns`` a pseudonymization names hold pseudonyms: ``digits`` lower-case hex digits
    (sample ids), ``<prefix>:`` and the digits (group ids), either form elsewhere; missing values pass."""
    for name in columns:
        if name not in samples.columns:
            raise DepgraphError(code, f"{where}: pseudonymization names the column {name!r}, which samples lack")
        try:
            text = pa.array(samples[name].to_numpy(dtype=object), type=pa.string(), from_pandas=True)
        except (pa.ArrowInvalid, pa.ArrowTypeError):
            raise DepgraphError(code, f"{where}: samples.{name} is pseudonymised but does not hold text") from None
        plain = _pseudonymous(text, digits, prefixed=False)
        ok = plain if name == "sample_id" else _pseudonymous(text, digits, prefixed=True)
        if name not in ("sample_id", "group_id"):
            ok |= plain
        ok |= text.is_null().to_numpy(zero_copy_only=False)
        if not ok.all():
            i = int(np.flatnonzero(~ok)[0])
            shape = f"{digits} lower-case hex digits" + (" after '<prefix>:'" if name == "group_id" else "")
            raise DepgraphError(
                code,
                f"{where}: samples.{name}[{i}] is {text[i].as_py()!r}, not a pseudonym ({shape}), although "
                f"pseudonymization says {name} is pseudonymised",
                column=name,
            )


def _pseudonymous(text: pa.Array, digits: int, prefixed: bool) -> np.ndarray:
    """Per value: exactly ``digits`` lower-case hex digits, after one ``<prefix>:`` (no other colon)
    when ``prefixed``. Read from the Arrow buffers, no Python string per value."""
    offsets, data = text_buffers(text)
    start, end = offsets[:-1].astype(np.int64), offsets[1:].astype(np.int64)
    length = end - start
    if not len(data):
        return np.zeros(len(text), dtype=bool)
    hex_count = np.concatenate([[0], np.cumsum(_HEX_DIGIT[data])])
    if not prefixed:
        return (length == digits) & (hex_count[end] - hex_count[start] == digits)
    colon_count = np.concatenate([[0], np.cumsum(data == ord(":"))])
    tail = np.maximum(end - digits, start)
    colon_at = np.clip(end - digits - 1, 0, len(data) - 1)
    return (
        (length > digits)
        & (hex_count[end] - hex_count[tail] == digits)
        & (data[colon_at] == ord(":"))
        & (colon_count[end] - colon_count[start] == 1)
    )


def check_fold_content(
    folds: PlanPositions, groups: Groups, sample_ids: pd.Series, where: str, code: str | None = None
) -> None:
    """Every split tests someone, and no group has a tested and a trained sample in one split (``sample_ids``,
    the spec's column, names two samples of a group on both sides: only then is an id read).

    Linear in the positions: a group straddles a split when it has a tested
    sample and fewer tested or excluded samples than members.
    """
    if not folds.splits:  # no split: a consumer would train and test on nothing, without a word
        raise DepgraphError(code or "invalid_argument", f"{where} holds no split; a fold plan splits at least once")
    first: dict[tuple[int, int], int] = {}
    sides = (("n_splits", "fold"), ("n_repeats", "repeat"))
    bounds = [(name, side, folds.parameters.get(name)) for name, side in sides]
    for i, split in enumerate(folds.splits):  # one split listed twice: a consumer would average it in twice
        j = first.setdefault((split.repeat, split.fold), i)
        if j != i:
            raise DepgraphError(
                code or "invalid_argument",
                f"{where}.splits[{i}] is repeat {split.repeat}, fold {split.fold} again (as splits[{j}]); each split "
                "of a plan is one repeat and fold",
            )
        for name, side, bound in bounds:  # a fold or repeat the plan's own parameters do not have
            if isinstance(bound, int) and not isinstance(bound, bool) and getattr(split, side) >= bound:
                raise DepgraphError(
                    code or "invalid_argument",
                    f"{where}.splits[{i}] is {side} {getattr(split, side)}, but the plan's {name} is {bound} "
                    f"({side}s 0 to {bound - 1})",
                )
    for i, split in enumerate(folds.splits):
        if split.n_test == 0 or not len(split.test):
            raise untested_split(where, i, split.repeat, split.fold, folds.scheme, code)
    n_groups = len(groups.sizes)
    n_positions = sum(len(s.test) + len(s.excluded) for s in folds.splits)
    if len(folds.splits) * n_groups <= 4 * n_positions:  # few splits (k-fold): count per split, no sort
        found = []
        for i, split in enumerate(folds.splits):
            held = np.bincount(groups.codes[split.test], minlength=n_groups)
            tested = held > 0
            held += np.bincount(groups.codes[split.excluded], minlength=n_groups)
            found.append(i * n_groups + np.flatnonzero(tested & (held < groups.sizes)))
        tested = np.concatenate(found)
        straddles = np.ones(len(tested), dtype=bool)
    else:  # many small splits (leave one block out): one sort over every split's positions
        split_of = [np.full(len(s.test) + len(s.excluded), i, dtype=np.int64) for i, s in enumerate(folds.splits)]
        rows = np.concatenate([np.concatenate([s.test, s.excluded]) for s in folds.splits])
        kept = np.concatenate(split_of) * n_groups + groups.codes[rows]  # (split, group) of each tested or excluded
        pairs, held = np.unique(kept, return_counts=True)
        tested = distinct(np.concatenate([i * n_groups + groups.codes[s.test] for i, s in enumerate(folds.splits)]))
        straddles = held[np.searchsorted(pairs, tested)] < groups.sizes[tested % n_groups]
    if straddles.any():
        bad = int(tested[np.flatnonzero(straddles)[0]])
        i, group = divmod(bad, n_groups)
        split = folds.splits[i]
        role = np.zeros(len(groups.codes), dtype=np.int8)  # one split, only to name two of its samples
        role[split.test], role[split.excluded] = 1, 2
        members = np.flatnonzero(groups.codes == group)
        test_id = sample_ids.iloc[int(members[role[members] == 1][0])]
        train_id = sample_ids.iloc[int(members[role[members] == 0][0])]
        raise DepgraphError(
            code or "invalid_argument",
            f"{where}.splits[{i}] (repeat {split.repeat}, fold {split.fold}): group {groups.name(group)!r} "
            f"is on both sides (sample {test_id!r} is tested, {train_id!r} trains); a group stays whole",
            group=groups.name(group),
        )
