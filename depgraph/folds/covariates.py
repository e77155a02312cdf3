"""Folds keyed on covariates the samples carry: the bytes of a key, its hash fold, quantile bins with shared
thresholds, and how strongly the folds so made follow the outcome.

Everything here works on whole columns: a key is built in Arrow from each column's distinct values, hashed once per
distinct key, and reduced modulo k for all keys at once; bins are found by binary search. The scheme classes
(:mod:`depgraph.folds.schemes`) place groups with these functions.

The key of a sample, for key columns ``c1 … cm``, is the concatenation of one netstring per column,
``<byte length>:<text>,``, the text being the column's value read as depgraph reads identifiers (blanks stripped,
``1.0`` written ``1``). A length prefix needs no character that a value cannot hold, and two different lists of
values never give the same bytes.

>>> key_text(["1980-01-02", "F"])
'10:1980-01-02,1:F,'
>>> hash_folds("consortium-2026", [b"10:1980-01-02,1:F,"], 5).tolist() == [hash_fold("consortium-2026",
...     "10:1980-01-02,1:F,", 5)]
True
"""

from __future__ import annotations

import hashlib
import warnings
from collections.abc import Sequence
from typing import Any

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc

from depgraph.common.identifiers import key_array
from depgraph.errors import DepgraphError, DepgraphWarning, describe_ids
from depgraph.spec.plans import bin_of as bin_of  # re-exported: the schemes and Spark use them here
from depgraph.spec.plans import group_values as group_values

#: Folds whose bias-corrected Cramér's V with the outcome reaches this are reported as strongly associated with it.
#: 0.3 is the conventional threshold of a moderate association (Cohen); below it the folds' outcome shares differ
#: little, above it each model is tested on an outcome mix clearly unlike the one it was trained on.
STRONG_ASSOCIATION = 0.3


# --------------------------------------------------------------------------- keys
def key_text(values: Sequence[str]) -> str:
    """The key of one sample from its key columns' text values, as :func:`sample_keys` builds it for every sample.

    >>> key_text(["Zoë", "M"])
    '4:Zoë,1:M,'
    """
    return "".join(f"{len(v.encode('utf-8'))}:{v}," for v in values)


def hash_fold(salt: str, key: str, n_splits: int) -> int:
    """The hash fold of one key: ``int(SHA-256(utf8(salt) ‖ utf8(key)), big-endian) mod n_splits``.

    >>> hash_fold("site-salt", "subject:P1", 5)
    2
    """
    digest = hashlib.sha256(salt.encode("utf-8") + key.encode("utf-8")).digest()
    return int.from_bytes(digest, "big") % n_splits


def hash_folds(salt: str, keys: Sequence[bytes] | Sequence[str] | pa.Array, n_splits: int) -> np.ndarray:
    """:func:`hash_fold` of every key: one SHA-256 per key (hashlib, no Python integers), the 256-bit digests
    reduced modulo ``n_splits`` together, byte by byte (Horner's rule in numpy).

    >>> hash_folds("site-salt", ["subject:P1"], 5).tolist()
    [2]
    """
    if isinstance(keys, (pa.Array, pa.ChunkedArray)):
        keys = keys.cast(pa.binary()).to_pylist()
    prefix = hashlib.sha256(salt.encode("utf-8"))
    digests = bytearray()
    for key in keys:  # one C call per distinct key: hashlib hashes one message at a time
        h = prefix.copy()
        h.update(key.encode("utf-8") if isinstance(key, str) else key)
        digests += h.digest()
    matrix = np.frombuffer(bytes(digests), dtype=np.uint8).reshape(-1, 32).astype(np.int64)
    fold = np.zeros(len(matrix), dtype=np.int64)
    for column in matrix.T:  # (fold·256 + byte) stays below 2**63 for any n_splits below 2**54
        fold = (fold * 256 + column) % n_splits
    return fold


def sample_keys(samples: pd.DataFrame, columns: Sequence[str], ids: np.ndarray) -> tuple[np.ndarray, pa.Array]:
    """The key code of every sample and the distinct keys' bytes (netstrings of the ``columns``' text, in order).

    Each column's distinct values are turned into text once (:func:`~depgraph.common.identifiers.key_array`),
    their netstrings taken per sample in Arrow, and the samples' keys joined and encoded there too. A missing or
    blank value is ``missing_id``, naming the column and the first samples (``ids``): a key nobody holds would put
    every such sample in one fold, unrelated records together.
    """
    pieces = []
    for column in columns:
        codes, uniques = pd.factorize(samples[column].to_numpy(dtype=object), use_na_sentinel=True)
        text = key_array(pd.Series(np.asarray(uniques, dtype=object), dtype=object), column, ids=False)
        missing = (codes < 0) | np.asarray(pc.is_null(text).to_numpy(zero_copy_only=False))[np.maximum(codes, 0)]
        if missing.any():
            raise missing_key(column, ids[missing][:50].tolist(), int(missing.sum()))
        length = pc.cast(pc.binary_length(text), pa.string())
        netstring = pc.binary_join_element_wise(length, pc.binary_join_element_wise(text, "", ","), ":")
        pieces.append(netstring.take(pa.array(codes)))
    joined = pc.binary_join_element_wise(*pieces, "") if len(pieces) > 1 else pieces[0]
    encoded = pc.dictionary_encode(joined)
    return np.asarray(encoded.indices.to_numpy(zero_copy_only=False), dtype=np.int64), encoded.dictionary


def missing_key(column: str, ids: list[str], count: int) -> DepgraphError:
    """``missing_id``: ``count`` samples (the first of them ``ids``) lack a value of the key ``column``."""
    return DepgraphError(
        "missing_id",
        f"key column {column!r} is missing or blank for {count} sample(s): {describe_ids(ids, total=count)}; every "
        "sample needs a key (fill it, or key on other columns)",
        column=column,
        ids=ids,
    )


def several_keys(key: Sequence[str], ids: list[str], count: int) -> DepgraphError:
    """``ambiguity``: ``count`` groups (the first of them ``ids``) hold samples of different ``key`` values."""
    return DepgraphError(
        "ambiguity",
        f"hash folds keyed on {','.join(key)}: {count} group(s) hold samples of different keys: "
        f"{describe_ids(ids, total=count)}; a group must stay whole and records of equal keys share a fold, so each "
        "group needs one key (key on columns its samples share, or hash the group id)",
        ids=ids,
    )


def groups_with_several_keys(group_codes: np.ndarray, key_codes: np.ndarray, n_groups: int) -> np.ndarray:
    """The codes of the groups whose samples carry more than one key, in order.

    >>> groups_with_several_keys(np.array([0, 0, 1, 1]), np.array([3, 3, 3, 4]), 2).tolist()
    [1]
    """
    first = np.full(n_groups, -1, dtype=np.int64)
    first[group_codes[::-1]] = key_codes[::-1]  # the key of each group's first sample
    return np.unique(group_codes[first[group_codes] != key_codes])


# --------------------------------------------------------------------------- bins
def equal_size_thresholds(values: np.ndarray, sizes: np.ndarray, n_splits: int) -> np.ndarray:
    """``n_splits − 1`` thresholds cutting groups (their ``values`` and ``sizes``) into bins of nearly equal sample
    counts: each cut falls between two consecutive distinct values, where the running count is nearest
    ``i·n/k`` (ties: the lower cut), at their midpoint; when two targets are nearest one cut (a value holding many
    samples between them), the later cut moves to the next gap, so no bin is empty. Groups of one value are never
    cut apart, so each bin's count is within the count of one value of ``n/k``. Fewer than ``n_splits`` distinct
    values is ``too_few_groups``.

    >>> equal_size_thresholds(np.array([1.0, 2.0, 3.0, 4.0]), np.array([1, 1, 1, 1]), 2).tolist()
    [2.5]
    """
    distinct, inverse = np.unique(values, return_inverse=True)
    weight = np.bincount(inverse.reshape(-1), weights=sizes).astype(np.float64)
    cumulative = np.cumsum(weight)[:-1]  # a cut after distinct value j, for every j but the last
    if len(cumulative) < n_splits - 1:
        raise DepgraphError(
            "too_few_groups",
            f"{n_splits} bins need at least {n_splits} distinct group values; found {len(distinct)}",
        )
    targets = np.arange(1, n_splits) * weight.sum() / n_splits
    above = np.minimum(np.searchsorted(cumulative, targets), len(cumulative) - 1)
    below = np.maximum(above - 1, 0)
    cut = np.where(np.abs(cumulative[below] - targets) <= np.abs(cumulative[above] - targets), below, above)
    # two targets nearest one cut (a heavy value between them): the later cut moves up, keeping k bins non-empty
    rank = np.arange(n_splits - 1)
    cut = np.maximum.accumulate(np.clip(cut - rank, 0, len(cumulative) - (n_splits - 1))) + rank
    low, high = distinct[cut], distinct[cut + 1]
    middle = low + (high - low) / 2
    return np.where(middle > low, middle, high)  # adjacent doubles: the midpoint rounds down onto the lower value


def numeric_column(samples: pd.DataFrame, column: str, ids: np.ndarray) -> np.ndarray:
    """The spec column ``column`` as finite floats: a column of text is ``invalid_argument``, a missing or
    infinite value ``invalid_value`` naming the samples."""
    series = samples[column]
    try:
        values = pd.to_numeric(series, errors="raise").to_numpy(dtype=np.float64, na_value=np.nan)
    except (ValueError, TypeError):
        raise not_numeric(column) from None
    bad = ~np.isfinite(values)
    if bad.any():
        raise unbinnable(column, ids[bad][:50].tolist(), int(bad.sum()))
    return values


def not_numeric(column: str) -> DepgraphError:
    """``invalid_argument``: the ``--by`` column of covariate bins holds no numbers."""
    return DepgraphError(
        "invalid_argument", f"--by column {column!r} is not numeric: covariate bins need numbers", column=column
    )


def unbinnable(column: str, ids: list[str], count: int) -> DepgraphError:
    """``invalid_value``: ``count`` samples (the first of them ``ids``) have no finite ``--by`` value."""
    return DepgraphError(
        "invalid_value",
        f"--by column {column!r} is missing or not finite for {count} sample(s): {describe_ids(ids, total=count)}; "
        "every sample needs a value to be binned",
        column=column,
        ids=ids,
    )


def wrong_threshold_count(n_thresholds: int, n_splits: int) -> DepgraphError:
    """``invalid_argument``: ``n_thresholds`` given thresholds do not make ``n_splits`` bins."""
    return DepgraphError(
        "invalid_argument",
        f"{n_thresholds} thresholds make {n_thresholds + 1} bins, not the {n_splits} folds asked for; pass the "
        "recorded n_splits (-k) with the recorded thresholds",
    )


def empty_bins(column: str, empty: list[int], thresholds: Sequence[float]) -> DepgraphError:
    """``too_few_groups``: covariate bins ``empty`` of ``column`` hold no sample."""
    return DepgraphError(
        "too_few_groups",
        f"covariate bin(s) {describe_ids(empty)} of {column!r} hold no sample here (thresholds {list(thresholds)}); "
        "every fold must test some samples: use fewer folds",
    )


# --------------------------------------------------------------------------- association with the outcome
def cramers_v(a: np.ndarray, b: np.ndarray) -> float:
    """Bias-corrected Cramér's V (Bergsma 2013) between two category codes per sample (``0..``), 0 when either
    has one category. The correction removes the association chance alone gives to small tables.

    >>> round(cramers_v(np.array([0, 0, 1, 1] * 25), np.array([0, 0, 1, 1] * 25)), 3)
    1.0
    """
    n = len(a)
    _, a = np.unique(a, return_inverse=True)
    _, b = np.unique(b, return_inverse=True)
    r, k = int(a.max()) + 1 if n else 0, int(b.max()) + 1 if n else 0
    return cramers_v_of_table(np.bincount(a.reshape(-1) * k + b.reshape(-1), minlength=r * k).reshape(r, k))


def cramers_v_of_table(counts: np.ndarray) -> float:
    """:func:`cramers_v` from the contingency table of the two codes (``r × k`` counts, rows and columns in code
    order, none empty): what an engine that counts the pairs (Spark) computes it from.

    >>> round(cramers_v_of_table(np.array([[50, 0], [0, 50]])), 3)
    1.0
    """
    r, k = counts.shape
    n = int(counts.sum())
    if n < 2 or r < 2 or k < 2:
        return 0.0
    table = counts.astype(np.float64)
    expected = table.sum(axis=1, keepdims=True) * table.sum(axis=0, keepdims=True) / n
    phi2 = float(((table - expected) ** 2 / expected).sum()) / n
    phi2 = max(0.0, phi2 - (k - 1) * (r - 1) / (n - 1))
    r_tilde, k_tilde = r - (r - 1) ** 2 / (n - 1), k - (k - 1) ** 2 / (n - 1)
    denominator = min(k_tilde - 1, r_tilde - 1)
    return float(np.sqrt(phi2 / denominator)) if denominator > 0 else 0.0


def fold_association(samples: pd.DataFrame, fold: np.ndarray, what: str, outcome: str = "stratum") -> dict[str, Any]:
    """How strongly the folds (``fold`` per sample) follow the outcome column, for the plan's ``balance``; warns
    (:class:`~depgraph.errors.DepgraphWarning`, ``fold_outcome_association``) when Cramér's V reaches
    :data:`STRONG_ASSOCIATION`. Samples without an outcome are left out; a spec without one reports ``None``."""
    if outcome not in samples.columns:
        return {"outcome": None, "cramers_v": None, "note": f"the spec has no {outcome} column"}
    values = samples[outcome]
    known = values.notna().to_numpy()
    codes = pd.factorize(values[known].astype(str).to_numpy(dtype=object), sort=True)[0]
    return association_report(cramers_v(fold[known], codes), int(known.sum()), what, outcome)


def association_report(v: float, n_known: int, what: str, outcome: str = "stratum") -> dict[str, Any]:
    """:func:`fold_association`'s report (and warning) of Cramér's V ``v`` over the ``n_known`` samples with an
    outcome."""
    v = round(v, 4)
    strong = v >= STRONG_ASSOCIATION
    if strong:
        warnings.warn(
            DepgraphWarning(
                "fold_outcome_association",
                f"{what}: the folds follow the outcome ({outcome}): Cramér's V {v} >= {STRONG_ASSOCIATION}; each "
                "model is tested on an outcome mix unlike its training data, so the estimate is pessimistic",
                cramers_v=v,
            ),
            stacklevel=4,
        )
    return {
        "outcome": outcome,
        "measure": "cramers_v_bias_corrected",
        "between": "fold and outcome",
        "cramers_v": v,
        "threshold": STRONG_ASSOCIATION,
        "strong": bool(strong),
        "n_samples": n_known,
    }
