"""Edge pieces from coordinates: :func:`spatial_pairs` makes samples within a radius adjacent (a KD-tree over the
points, never a distance matrix). :func:`depgraph.ingest.builders.add_spatial` adds them to a graph.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import pandas as pd

from depgraph.common.arguments import real_number
from depgraph.common.identifiers import (
    check_key_column,
    normalise_keys,
)
from depgraph.errors import DepgraphError, describe_ids, describe_rows
from depgraph.graph.model import StudyGraph
from depgraph.graph.pieces import EdgePiece
from depgraph.ingest.checks import (
    Unknown,
    checked_unknown,
    dropped_record,
    numeric_column,
    require_ids,
    with_decimal_points,
)
from depgraph.io.files import describe_source, read_table
from depgraph.io.tables import text_layout
from depgraph.vocab import NodeType, RelationName


def spatial_pairs(
    graph: StudyGraph,
    coords: Any,
    radius: float,
    *,
    p: float = 2.0,
    unknown: Unknown = "error",
    encoding: str | None = None,
) -> tuple[EdgePiece, dict[str, Any]]:
    """``sample_adjacent_to`` edges between samples at most ``radius`` apart.

    ``coords`` has ``sample_id`` and one to three coordinate columns ``x``,
    ``y``, ``z``. Pairs come from a KD-tree (scipy.spatial.cKDTree), never a
    distance matrix; ``p`` is the Minkowski norm (2: Euclidean). The edge weight
    is the distance. Samples without coordinates get no adjacency. A text
    file that is not UTF-8 needs its ``encoding``.
    """
    what = describe_source(coords, "coordinates")
    r = checked_distances(radius, p)
    ids, points, axes = _coordinates(coords, p, what, encoding)
    ids, points, dropped = _known_samples(graph, ids, points, unknown, what)
    from scipy.spatial import cKDTree  # scipy's KD-tree, loaded for coordinates only: a build without them skips it

    pairs = cKDTree(points).query_pairs(r=r, p=p, output_type="ndarray") if len(points) > 1 else np.empty((0, 2), int)
    i, j = pairs[:, 0], pairs[:, 1]
    distance = np.linalg.norm(points[i] - points[j], ord=p, axis=1) if len(i) else np.empty(0)
    key_arr = ids.to_numpy(dtype=object)
    piece = EdgePiece(
        RelationName.SAMPLE_ADJACENT_TO,
        pd.Series(key_arr[i], dtype=object),
        pd.Series(key_arr[j], dtype=object),
        "spatial:radius",
        distance,
    )
    return piece, spatial_record(r, p, len(axes), len(points), len(i), unknown, dropped)


def spatial_record(
    radius: float, p: float, dimensions: int, points: int, pairs_kept: int, unknown: str, dropped: dict[str, Any]
) -> dict[str, Any]:
    """The graph history's record of an ``add_spatial`` step (``dropped``: :func:`dropped_record`'s), as every
    engine writes it."""
    return {
        "step": "add_spatial",
        "radius": radius,
        "inclusive": True,
        "metric": "euclidean" if p == 2 else f"minkowski(p={p})",
        "dimensions": dimensions,
        "points": points,
        "pairs_kept": pairs_kept,
        "unknown": unknown,
        **dropped,
        "dropped_what": "samples",
    }


def checked_distances(radius: Any, p: Any) -> float:
    """The radius as a float, once radius and norm are known to be numbers (``"1"`` and True are no distances),
    the radius finite and at least 0, and the norm at least 1."""
    for label, value in (("radius", radius), ("p", p)):
        if not real_number(value):
            raise DepgraphError("invalid_argument", f"{label} must be a number, not {value!r}")
    r = float(radius)
    if not math.isfinite(r) or r < 0:
        raise DepgraphError("invalid_argument", f"radius must be a finite number >= 0, not {radius!r}")
    if not (p >= 1):
        raise DepgraphError("invalid_argument", f"p must be >= 1 (a Minkowski norm), not {p!r}")
    return r


def _coordinates(coords: Any, p: float, what: str, encoding: str | None) -> tuple[pd.Series, np.ndarray, list[str]]:
    """The coordinate table read and checked: sample ids (present, distinct), their points (one row per sample,
    no missing coordinate, spans the KD-tree's sums can hold) and the axes given."""
    frame = read_table(coords, "coordinates", encoding=encoding)
    layout = text_layout(frame)
    frame = frame.reset_index(drop=True)
    axes = [c for c in ("x", "y", "z") if c in frame.columns]
    if "sample_id" not in frame.columns or not axes:
        raise DepgraphError(
            "schema",
            f"{what} need a sample_id column and coordinate columns x, y[, z] "
            f"(columns: {describe_ids(frame.columns, 12)})",
        )
    if len(frame) == 0:
        raise DepgraphError("empty_input", f"{what} table has no rows")
    check_key_column(frame["sample_id"], "sample_id", what)
    ids = normalise_keys(frame["sample_id"], "sample_id")
    require_ids(ids, "sample_id", what)
    if ids.duplicated().any():
        dups = ids[ids.duplicated()].unique().tolist()
        raise DepgraphError("duplicate_id", f"{what} list sample(s) {describe_ids(dups)} more than once", ids=dups)
    frame = with_decimal_points(frame, axes, what, layout)
    points = np.column_stack([numeric_column(frame[a], a, what) for a in axes])
    nan_rows = np.flatnonzero(np.isnan(points).any(axis=1))
    if len(nan_rows):
        raise DepgraphError(
            "invalid_value",
            f"{what}: missing coordinates for sample(s) {describe_ids(ids.iloc[nan_rows])} ({describe_rows(nan_rows)})",
            ids=ids.iloc[nan_rows].tolist(),
        )
    _refuse_overflowing_spans(points, axes, p, what)
    return ids, points, axes


def _known_samples(
    graph: StudyGraph, ids: pd.Series, points: np.ndarray, unknown: Unknown, what: str
) -> tuple[pd.Series, np.ndarray, dict[str, Any]]:
    """The ids and points of the samples the graph holds, and the record of the others (a ``reference`` error
    unless ``unknown="ignore"``)."""
    positions = graph.locate(NodeType.SAMPLE, ids)
    strangers = ids[positions < 0].tolist()
    if strangers and unknown == "error":
        raise DepgraphError(
            "reference",
            f"{what} name {len(strangers)} sample(s) not in the graph: {describe_ids(strangers)} "
            "(pass unknown='ignore' to drop them)",
            ids=strangers,
        )
    checked_unknown(unknown)
    known = positions >= 0
    dropped = dropped_record(len(strangers), np.asarray(strangers, dtype=object))
    return ids[known].reset_index(drop=True), points[known], dropped


#: Distances are sums of coordinate differences to the power p: they stay below this (float64 ends at ~1.8e308).
_LARGEST_SUM = 1e308


def _refuse_overflowing_spans(points: np.ndarray, axes: list[str], p: float, what: str) -> None:
    """Refuse coordinates so far apart that the KD-tree's Minkowski sums overflow (:func:`span_limit`)."""
    if len(points) < 2:
        return
    with np.errstate(over="ignore", invalid="ignore"):
        spans = points.max(axis=0) - points.min(axis=0)
    axis = int(np.argmax(spans))
    overflow = span_overflow(float(spans[axis]), p, points.shape[1])
    if overflow is None:
        return
    rows = sorted({int(np.argmin(points[:, axis])), int(np.argmax(points[:, axis]))})
    extent, needed = overflow
    raise DepgraphError(
        "invalid_value",
        f"{what}: {axes[axis]} spans {extent} ({describe_rows(rows)}): distances that far apart overflow the "
        f"Minkowski p={p:g} sums of the KD-tree (they need {needed}); rescale the coordinates",
        rows=rows,
        column=axes[axis],
    )


def span_overflow(span: float, p: float, dims: int) -> tuple[str, str] | None:
    """How an axis' ``span`` (its largest coordinate less its smallest) is said, and what the spans need, when
    distances that far apart overflow the Minkowski sums: ``d · span^p`` must stay below 1e308 (float64 ends at
    ~1.8e308), spans up to ~1e154 for Euclidean distances in 2-D; with ``p = inf`` only the spans themselves must be
    finite. None: it fits. Both engines apply it.

    >>> span_overflow(1e6, 2.0, 2) is None, span_overflow(1e200, 2.0, 2)
    (True, ('1e+200', 'spans below about 7.07e+153'))
    """
    if math.isinf(p):
        fits = math.isfinite(span)
    else:
        fits = span == 0 or (math.isfinite(span) and p * math.log10(span) + math.log10(dims) < math.log10(_LARGEST_SUM))
    if fits:
        return None
    top = math.log10(_LARGEST_SUM)
    needed = "finite spans" if math.isinf(p) else f"spans below about {10 ** ((top - math.log10(dims)) / p):.3g}"
    return (f"{span:.3g}" if math.isfinite(span) else "beyond the float64 range"), needed
