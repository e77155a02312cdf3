"""Find undeclared duplicates: samples whose feature vectors are nearly identical.

Re-deposited specimens (the same sample under a new id) inflate
cross-validated performance even when every declared dependency is respected.
:func:`audit_duplicates` finds them empirically: rows of a feature matrix are
L2-normalised (each scaled by its largest magnitude first, so rows of 1e200 or
of subnormal 1e-320 keep their direction) and every pair whose cosine similarity is at least
``threshold`` is returned. ``add_duplicates(graph, pairs,
similarity_column="similarity", provenance="audit")`` writes them back into
the declaration, after which derivation keeps them together.

Methods:

* ``exact`` — blocked matrix products over the upper triangle (float64, blocks
  of rows so memory stays bounded): every pair is compared; n²·d/2
  multiply-adds.
* ``lsh`` — random-hyperplane locality-sensitive hashing for large n:
  ``bands`` signatures of ``bits`` signs each; pairs sharing a signature in
  any band are compared exactly. A pair with cosine c (angle θ) is found with
  probability ``1 − (1 − (1 − θ/π)^bits)^bands``. ``bits`` defaults to
  ``max(16, ⌈log₂ n⌉)`` so that unrelated samples share a signature about
  once per sample and band (candidates grow as n, not n²); with 12 bands
  that finds a pair at c = 0.995 with probability 0.99998 at 10^5 samples,
  0.9999 at 10^6 and 0.9994 at 10^7, and pairs above it more surely. A
  signature shared by very many samples (near-constant features) makes the
  candidates grow quadratically: raise ``bits``. Deterministic for a seed.
* ``auto`` — exact up to 50,000 samples, lsh above.

>>> import numpy as np
>>> rng = np.random.default_rng(0)
>>> X = rng.normal(size=(5, 20))
>>> X[4] = X[1] * 3 + 1e-6  # a re-deposit: same direction, other scale
>>> audit_duplicates(X, ["a", "b", "c", "d", "e"])[["id1", "id2"]].values.tolist()
[['b', 'e']]
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from depgraph.common.arguments import in_order, real_number, whole_number
from depgraph.common.arrays import distinct, is_sparse
from depgraph.common.identifiers import normalise_keys
from depgraph.errors import DepgraphError, describe_ids
from depgraph.io.delimited import checked_encoding
from depgraph.io.files import describe_source, existing_file, read_table
from depgraph.io.tables import text_layout
from depgraph.io.textnumbers import decimal_points

ROUNDING = 1e-9
EXACT_LIMIT = 50_000
_BLOCK_CELLS = 2**25  # similarities computed at a time (256 MB of float64)
_GATHER_ROWS = 2**16  # candidate pairs compared at a time


def audit_duplicates(
    features: Any,
    ids: Any = None,
    threshold: float = 0.995,
    *,
    method: str = "auto",
    id_column: str = "sample_id",
    bits: int | None = None,
    bands: int = 12,
    seed: int = 0,
    encoding: str | None = None,
) -> pd.DataFrame:
    """Pairs of samples whose feature rows have cosine similarity ``>= threshold``.

    Parameters
    ----------
    features:
        A numeric matrix (numpy, one row per sample), a table (pandas / polars /
        pyarrow) or a CSV / TSV / Parquet / ``.npy`` path. Tables carry the
        sample ids in ``id_column`` (or their index) and features in every other
        numeric column; a CSV / TSV file that is not UTF-8 text needs its
        ``encoding``.
    ids:
        Sample ids of the matrix rows (for matrices and ``.npy`` files).
    threshold:
        Inclusive cosine similarity, in (0, 1]; a cosine within ``ROUNDING``
        (1e-9) below it counts as reaching it, so pairs exactly at the threshold
        are not lost to floating-point rounding.
    method:
        ``exact``, ``lsh`` or ``auto`` (see the module docs).
    bits, bands, seed:
        The ``lsh`` signatures (see the module docs); ``bits`` defaults to
        ``max(16, ⌈log₂ n⌉)``.

    Returns a frame ``id1, id2, similarity`` (``id1 < id2``), most similar first.
    """
    matrix, names = _features(features, ids, id_column, encoding)
    if not real_number(threshold) or not 0 < threshold <= 1:
        raise DepgraphError("invalid_argument", f"threshold must lie in (0, 1], not {threshold!r}")
    bands = whole_number(bands, "bands", minimum=1)
    seed = whole_number(seed, "seed", minimum=0, maximum=2**32 - 1)
    if method not in ("auto", "exact", "lsh"):
        raise DepgraphError("invalid_argument", f"method must be auto, exact or lsh, not {method!r}")
    # each row scaled by its largest magnitude before its length is taken: a cosine does not change, and neither
    # 1e200 (whose square overflows to inf) nor 1e-320 (whose square is 0) loses its direction
    largest = np.abs(matrix).max(axis=1) if matrix.shape[1] else np.zeros(len(matrix))
    zero = largest == 0
    if zero.any():
        raise DepgraphError(
            "invalid_value",
            f"{int(zero.sum())} sample(s) have an all-zero feature row (no direction to compare): "
            f"{describe_ids(names[zero])}",
            ids=names[zero].tolist(),
        )
    unit = matrix / largest[:, None]
    unit /= np.linalg.norm(unit, axis=1)[:, None]
    if method == "auto":
        method = "exact" if len(unit) <= EXACT_LIMIT else "lsh"
    # cosines computed in floating point land a few ulps off their true value;
    # a pair exactly at the threshold must not be lost to rounding
    cut = threshold - ROUNDING
    if bits is None:
        bits = max(16, int(np.ceil(np.log2(len(unit)))))
    if isinstance(bits, (bool, np.bool_)) or not isinstance(bits, (int, np.integer)) or not 1 <= bits <= 62:
        raise DepgraphError("invalid_argument", f"lsh needs 1-62 bits and at least one band, not {bits} and {bands}")
    i, j, sim = _exact(unit, cut) if method == "exact" else _lsh(unit, cut, bits, bands, seed)
    sim = np.clip(sim, -1.0, 1.0)
    a, b = names[i], names[j]
    swap = a > b
    a, b = np.where(swap, b, a), np.where(swap, a, b)
    out = pd.DataFrame({"id1": pd.Series(a, dtype=object), "id2": pd.Series(b, dtype=object), "similarity": sim})
    return out.sort_values(["similarity", "id1", "id2"], ascending=[False, True, True], kind="stable").reset_index(
        drop=True
    )


def _features(features: Any, ids: Any, id_column: str, encoding: str | None) -> tuple[np.ndarray, np.ndarray]:
    checked_encoding(encoding)  # a misspelt codec is refused whatever the features are
    if isinstance(features, (str, os.PathLike)) and Path(features).suffix.lower() == ".npy":
        path = existing_file(features, "features")
        try:
            features = np.load(path, allow_pickle=False)
        except (ValueError, OSError) as exc:
            raise DepgraphError("parse", f"features {str(path)!r} is not a numpy array file: {exc}") from exc
    if is_sparse(features):
        raise DepgraphError(
            "invalid_argument", "features must be a dense matrix or a table (a sparse matrix: pass .toarray())"
        )
    if isinstance(features, np.ndarray):
        matrix = features
        if ids is None:
            raise DepgraphError("invalid_argument", "a feature matrix needs ids= naming its rows")
        names = _row_ids(ids)
    else:
        table = read_table(features, "features", encoding=encoding)
        layout = text_layout(table)
        if id_column in table.columns:
            names = _row_ids(table[id_column])
            table = table.drop(columns=[id_column])
        elif ids is not None:
            names = _row_ids(ids)
        else:
            raise DepgraphError(
                "schema", f"features have no {id_column!r} column; name the id column with id_column / --id-column"
            )
        if layout is not None and layout["decimal"] == ",":  # a ';' file: decimal commas are numbers
            what = describe_source(features, "features")
            table = table.apply(lambda column: decimal_points(column, str(column.name), what))
        numeric = table.apply(pd.to_numeric, errors="coerce")
        text_only = [c for c in table.columns if numeric[c].isna().all() and table[c].notna().any()]
        numeric = numeric.drop(columns=text_only)
        if numeric.shape[1] == 0:
            raise DepgraphError("schema", "features hold no numeric column")
        matrix = numeric.to_numpy(dtype=np.float64)
    if matrix.dtype == object or matrix.dtype.kind not in "biuf":
        try:
            matrix = np.asarray(matrix, dtype=np.float64)
        except (TypeError, ValueError):
            raise DepgraphError("invalid_value", f"features must be numbers, not {matrix.dtype} values") from None
    matrix = np.asarray(matrix, dtype=np.float64)
    if matrix.ndim != 2 or len(matrix) != len(names):
        raise DepgraphError("schema", f"features must be one row per sample: {matrix.shape} for {len(names)} ids")
    if len(matrix) < 2:
        raise DepgraphError("empty_input", "an audit needs at least two samples")
    bad = ~np.isfinite(matrix).all(axis=1)
    if bad.any():
        raise DepgraphError(
            "invalid_value",
            f"{int(bad.sum())} sample(s) have missing or infinite features: {describe_ids(names[bad])}",
            ids=names[bad].tolist(),
        )
    repeated = pd.Series(names).duplicated()
    if repeated.any():
        dups = pd.Series(names)[repeated].unique().tolist()
        raise DepgraphError("duplicate_id", f"features list sample(s) {describe_ids(dups)} twice", ids=dups)
    return matrix, names


def _row_ids(ids: Any) -> np.ndarray:
    """Sample ids of the feature rows, read as from_metadata reads ids (``1.0`` is ``"1"``); a missing one is
    refused (it would become the text ``"nan"``)."""
    keys = normalise_keys(in_order(ids, "ids="), "ids")
    if keys.isna().any():
        row = int(np.flatnonzero(keys.isna().to_numpy())[0])
        raise DepgraphError("missing_id", f"features: the sample id of row {row + 1} is missing or blank")
    return keys.to_numpy(dtype=object)


def _exact(unit: np.ndarray, threshold: float) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    n = len(unit)
    rows = max(1, min(n, _BLOCK_CELLS // n))
    found_i, found_j, found_s = [], [], []
    for start in range(0, n, rows):
        block = unit[start : start + rows] @ unit[start:].T  # this block against itself and later rows
        r, c = np.nonzero(block >= threshold)
        above = c > r  # column c is sample start + c: keep each pair once, never a sample with itself
        r, c = r[above], c[above]
        found_i.append(r + start)
        found_j.append(c + start)
        found_s.append(block[r, c])
    return np.concatenate(found_i), np.concatenate(found_j), np.concatenate(found_s)


def _lsh(unit: np.ndarray, threshold: float, bits: int, bands: int, seed: int) -> tuple[np.ndarray, ...]:
    n, d = unit.shape
    rng = np.random.default_rng(seed)
    weights = 1 << np.arange(bits, dtype=np.int64)
    candidates = []
    for _ in range(bands):
        planes = rng.normal(size=(d, bits))
        signature = ((unit @ planes) > 0).astype(np.int64) @ weights
        order = np.argsort(signature, kind="stable")
        sig = signature[order]
        # samples sharing a signature are adjacent once sorted: pair each with the
        # next k-th for k = 1, 2, … until no run is that long
        for k in range(1, n):
            same = sig[k:] == sig[:-k]
            if not same.any():
                break
            candidates.append(np.stack([order[:-k][same], order[k:][same]]))
    if not candidates:
        return np.empty(0, np.int64), np.empty(0, np.int64), np.empty(0)
    pairs = np.sort(np.concatenate(candidates, axis=1), axis=0)
    pairs = distinct(pairs[0] * n + pairs[1])
    i, j = pairs // n, pairs % n
    sim = np.empty(len(pairs))
    for s in range(0, len(pairs), _GATHER_ROWS):  # gathered rows in chunks: bounded memory, warm pages
        sim[s : s + _GATHER_ROWS] = np.einsum("ij,ij->i", unit[i[s : s + _GATHER_ROWS]], unit[j[s : s + _GATHER_ROWS]])
    keep = sim >= threshold
    return i[keep], j[keep], sim[keep]
