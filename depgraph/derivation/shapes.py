"""How samples spread over groups: the shape of a partition, and the findings about it.

A partition whose samples all sit in one group cannot be split (``single_group``); one whose largest group holds
more than half the samples and at least twice the next largest makes every split lopsided (``dominant_group``).
A derivation reports both for the partition it makes and validation for every mode it checks, through the one
function :func:`collapse_finding`, so the two never disagree.

>>> shape = group_shape(["a", "a", "a", "b"])
>>> collapse_finding(4, shape.n_groups, shape.largest_group_size, np.array([3, 1]), "batch").code
'dominant_group'
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, NamedTuple

import numpy as np
import pandas as pd
import pyarrow as pa

from depgraph.findings import Issue, finding

#: A group holding more than this share of samples, and at least twice as many as the next largest group, is
#: reported as dominant (see :func:`dominates`).
DOMINANT_SHARE = 0.5


class GroupShape(NamedTuple):
    """How samples spread over groups: the numbers a spec's summary and the shape warnings need."""

    n_groups: int
    largest_group: str | None  # the smallest group id among the largest groups
    largest_group_size: int
    singletons: int


def group_shape(group_ids: Any) -> GroupShape:
    """The :class:`GroupShape` of one group id per sample (counted, never sorted).

    >>> group_shape(["b", "a", "b", "a", "c"])
    GroupShape(n_groups=3, largest_group='a', largest_group_size=2, singletons=1)
    """
    codes, groups = pd.factorize(np.asarray(group_ids, dtype=object))
    return shape_of(codes, np.asarray(groups, dtype=object))


def shape_of(codes: np.ndarray, names: np.ndarray | pa.Array) -> GroupShape:
    """The shape of a partition given as a group code per sample and a distinct name per code.

    >>> shape_of(np.array([0, 0, 1]), np.array(["g2", "g1"], dtype=object))
    GroupShape(n_groups=2, largest_group='g2', largest_group_size=2, singletons=1)
    """
    sizes = np.bincount(codes, minlength=len(names))
    if not len(sizes):
        return GroupShape(0, None, 0, 0)
    largest = int(sizes.max())
    tied = sizes == largest
    candidates = names.filter(pa.array(tied)).to_pylist() if isinstance(names, pa.Array) else names[tied].tolist()
    return GroupShape(len(names), str(min(candidates)), largest, int((sizes == 1).sum()))


def dominates(sizes: np.ndarray, total: int | None = None) -> bool:
    """Whether the largest of these group sizes dominates its partition: it holds more than
    :data:`DOMINANT_SHARE` (half) of the samples *and* at least twice as many as the next largest group.

    Then every split is lopsided: whichever side takes the group holds most of the samples, and no other group
    comes near it. Two groups of nearly equal size (two sites of 124 and 122 samples) are a balanced design,
    not a dominated one, although one of them holds a little more than half.

    ``total`` is the number of samples when ``sizes`` are not every group's (the largest two, counted where the
    groups are too many to bring together: the Spark engine's).

    >>> dominates(np.array([124, 122])), dominates(np.array([3, 1])), dominates(np.array([60, 35, 5]))
    (False, True, False)
    """
    if len(sizes) < 2:
        return False  # one group is single_group, not a dominant one
    second, largest = np.partition(np.asarray(sizes), -2)[-2:]
    total = int(np.sum(sizes)) if total is None else total
    return bool(largest > DOMINANT_SHARE * total and largest >= 2 * second)


def collapse_finding(
    n: int,
    n_groups: int,
    largest: int,
    sizes: np.ndarray | Callable[[], np.ndarray],
    label: str,
    *,
    group: str | None = None,
    details: dict[str, Any] | None = None,
) -> Issue | None:
    """``single_group`` or ``dominant_group`` for a partition of ``n`` samples in ``n_groups`` groups whose
    largest holds ``largest`` samples; ``None`` when it is neither.

    ``sizes`` is every group's size (or at least the largest two), or a function returning them, called only
    when the largest group holds more than half the samples (counting the groups of a million samples is not
    free). ``label`` names the mode in the message; ``group`` names the largest group when the caller knows it (a
    derivation does; validation counts sizes only); ``details`` are kept with the finding, with the largest
    group's size added for a dominant
    group.

    >>> collapse_finding(3, 1, 3, np.array([3]), "subject", group="subject:P1").message
    'mode subject puts all 3 samples in one group (subject:P1): no split is possible'
    """
    ids = (group,) if group else ()
    if n_groups == 1 and n > 1:
        where = f" ({group})" if group else ""
        message = f"mode {label} puts all {n} samples in one group{where}: no split is possible"
        return finding("single_group", message, ids, count=1, details=details)
    if n_groups < 2 or largest <= DOMINANT_SHARE * n:  # cheap first: only then count every group for the runner-up
        return None
    every = sizes() if callable(sizes) else np.asarray(sizes)
    if not dominates(every, n):
        return None
    runner_up = int(np.partition(every, -2)[-2])
    message = (
        f"mode {label}: {f'group {group}' if group else 'one group'} holds {largest} of {n} samples "
        f"({largest / n:.0%}), the next largest {runner_up}; any split will be lopsided"
    )
    more = None if details is None else {**details, "largest_group_size": largest}
    return finding("dominant_group", message, ids, count=1, details=more)
