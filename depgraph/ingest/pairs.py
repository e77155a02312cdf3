"""Edge pieces from pair tables: :func:`kinship_pairs` (subject pairs, matrices, genetics tools' files),
:func:`duplicate_pairs` (sample pairs) and :func:`explicit_pairs` (any relation). Each returns the piece and the
history record of the step; :mod:`depgraph.ingest.builders` adds them to a graph.

A pair table's ids are normalised as the metadata's are (``1``, ``1.0`` and ``"1"`` are one key); ids the graph
does not hold are a ``reference`` error, or with ``unknown="ignore"`` dropped and counted in the record.
"""

from __future__ import annotations

import os
import sys
from typing import Any, NamedTuple

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc

from depgraph.common.arguments import in_order
from depgraph.common.arrays import is_sparse, text_array
from depgraph.common.identifiers import (
    check_key_column,
    key_array,
    normalise_keys,
    refuse_control_characters,
)
from depgraph.errors import DepgraphError, describe_ids, describe_rows
from depgraph.graph.model import StudyGraph
from depgraph.graph.pieces import EdgePiece, Keys
from depgraph.ingest.checks import (
    Unknown,
    checked_unknown,
    dropped_record,
    numeric_column,
    require_ids,
    with_decimal_points,
)
from depgraph.ingest.coverage import Absent, coverage, template_hint
from depgraph.ingest.kinship import detect_format, read_kinship, resolve_threshold
from depgraph.ingest.toolfiles import plain_table_template, templated
from depgraph.io.files import describe_source, file_name, read_table
from depgraph.io.tables import text_layout
from depgraph.vocab import RELATION, NodeType, RelationName


def _pair_table(
    source: Any, noun: str, id_columns: tuple[str, str], value_column: str | None, encoding: str | None = None
) -> pd.DataFrame:
    """The pair table ``source`` (``noun`` names it: "kinship") with its id and value columns checked present
    (the value column's decimal commas, in a semicolon-separated file, written as points)."""
    frame = read_table(source, noun, encoding=encoding)
    layout = text_layout(frame)
    what = describe_source(source, noun)
    needed = [*id_columns, *([value_column] if value_column else [])]
    missing = [c for c in needed if c not in frame.columns]
    if missing:
        raise DepgraphError(
            "schema",
            f"{what} needs columns {describe_ids(needed)}; missing {describe_ids(missing)} "
            f"(columns: {describe_ids(frame.columns, 12)})",
            columns=missing,
        )
    return with_decimal_points(frame.reset_index(drop=True), [value_column] if value_column else [], what, layout)


def _pair_keys(frame: pd.DataFrame, id_columns: tuple[str, str], what: str) -> tuple[pa.Array, pa.Array]:
    """The two id columns of a pair table as Arrow keys (no missing id, no id paired with itself)."""
    for column in id_columns:
        check_key_column(frame[column], column, what)
    a = key_array(frame[id_columns[0]], id_columns[0], what)
    b = key_array(frame[id_columns[1]], id_columns[1], what)
    require_ids(a, id_columns[0], what)
    require_ids(b, id_columns[1], what)
    refuse_control_characters(a, id_columns[0], what)
    refuse_control_characters(b, id_columns[1], what)
    same = pc.equal(a, b).to_numpy(zero_copy_only=False)
    if same.any():
        rows = np.flatnonzero(same)
        selves = list(dict.fromkeys(a.filter(pa.array(same)).to_pylist()))
        raise DepgraphError(
            "invalid_value",
            f"{what}: {describe_rows(rows)} pair an id with itself ({describe_ids(selves)})",
            rows=rows.tolist(),
        )
    return a, b


def _unknown_ids(
    graph: StudyGraph, node_type: NodeType, ids: pd.Series | pa.Array, unknown: Unknown, what: str, hint: str = ""
) -> np.ndarray:
    """Which of ``ids`` name nodes of ``node_type``; unknown ids raise, or with
    ``unknown="ignore"`` are only flagged (their rows are dropped by the caller)."""
    checked_unknown(unknown)
    if graph.count(node_type) == 0:
        raise DepgraphError(
            "reference",
            f"{what} names {node_type.value} ids but the graph has no {node_type.value} nodes"
            + (" (add a subject_id column to the metadata)" if node_type == NodeType.SUBJECT else ""),
        )
    known = graph.locate(node_type, ids) >= 0
    if not known.all() and unknown == "error":
        named = ids.filter(pa.array(~known)).to_pylist() if isinstance(ids, pa.Array) else ids[~known].tolist()
        strangers = list(dict.fromkeys(named))
        raise DepgraphError(
            "reference",
            f"{what} names {len(strangers)} {node_type.value} id(s) not in the graph: {describe_ids(strangers)}{hint} "
            "(to drop them instead: unknown='ignore', or --unknown ignore on the command line)",
            ids=strangers,
        )
    return known


def _pairs_known(
    graph: StudyGraph, node_type: NodeType, a: Any, b: Any, unknown: Unknown, what: str, hint: str = ""
) -> tuple[np.ndarray, dict[str, Any], Keys]:
    """Rows whose two ids are both known, the record of what was dropped, and
    the ids of both columns (``a`` then ``b``) factorised and already located."""
    ends = Keys.factorised(pa.concat_arrays([text_array(a), text_array(b)]))
    known_ids = _unknown_ids(graph, node_type, ends.vocab, unknown, what, hint)  # one entry per distinct id
    known = known_ids[ends.codes]
    both = known[: len(a)] & known[len(a) :]
    strangers = ends.vocab.filter(pa.array(~known_ids)).to_numpy(zero_copy_only=False)  # first-seen order
    return both, dropped_record(int((~both).sum()), strangers), ends


def _pair_ends(ends: Keys, n: int, rows: np.ndarray) -> tuple[Keys, Keys]:
    """Both ends of some rows of a pair table factorised by :func:`_pairs_known`."""
    rows = np.flatnonzero(rows) if rows.dtype == bool else rows
    return ends.take(rows), ends.take(rows + n)


def kinship_pairs(
    graph: StudyGraph,
    source: Any,
    threshold: float | str,
    *,
    ids: Any = None,
    unknown: Unknown = "error",
    id_columns: tuple[str, str] = ("id1", "id2"),
    value_column: str = "kinship",
    format: str | None = None,
    id_template: str = "{IID}",
    encoding: str | None = None,
    absent: Absent = "warn",
) -> tuple[EdgePiece, dict[str, Any]]:
    """``subject_related_to`` edges for pairs with kinship ``>= threshold``.

    ``source`` is a pair table (``id1, id2, kinship``; any table or path), a
    square matrix (numpy array or scipy sparse) whose rows and columns are
    ``ids``, or a file written by a genetics tool: ``format`` is one of
    :data:`depgraph.ingest.kinship.KINSHIP_FORMATS` (``king``, ``plink2-king``,
    ``plink-genome``, ``gcta-grm``; detected from a path when omitted), read
    in streamed chunks keeping only the pairs at or above the threshold, with
    subject ids built by ``id_template`` from FID and IID. Ids are subject ids.
    Pair tables and matrices hold kinship coefficients in [0, 1] (NaN and
    negative values are errors); estimator files may hold negative estimates,
    which fall below any threshold. A text file that is not UTF-8 needs its
    ``encoding`` (e.g. ``"latin-1"``). A sparse matrix is read through its stored
    entries only, so it needs a threshold above 0; a dense matrix is scanned
    in row blocks. A pair given twice keeps its larger kinship.

    A tool's file names every individual it estimated: subjects of the graph it does not name are unknown, not
    unrelated (:mod:`depgraph.ingest.coverage`): ``absent`` says what they become — ``"warn"`` (grouped as unrelated,
    with the warning ``subjects_without_kinship``), ``"unrelated"`` (the same, chosen: no warning) or ``"error"``. A
    file whose ids name none of the subjects is refused, with the ``id_template`` that would match; a table filtered
    when written is a ``kinship_file_filtered`` warning.

    Returns the edge piece and the provenance record (threshold, counts).
    """
    value, degree = resolve_threshold(threshold)
    what = describe_source(source, "kinship")
    if format is None and isinstance(source, (str, os.PathLike)):
        format = detect_format(source, encoding=encoding)
    if format not in (None, "pairs"):
        if ids is not None:
            raise DepgraphError("invalid_argument", "ids= is only for kinship matrices")
        found = _tool_kinship(graph, source, format, value, what, unknown, id_template, encoding, absent)
    elif isinstance(source, np.ndarray) or is_sparse(source):
        if id_template != "{IID}":
            raise DepgraphError(
                "invalid_argument",
                f"id_template {id_template!r} applies to kinship files and pair tables; "
                "a matrix's ids= are subject ids",
            )
        found = _matrix_kinship(graph, source, ids, value, what, unknown)
    else:
        if ids is not None:
            raise DepgraphError("invalid_argument", "ids= is only for kinship matrices, not pair tables")
        found = _table_kinship(graph, source, value, what, unknown, id_columns, value_column, id_template, encoding)
    rows = np.flatnonzero(found.both)
    src, dst = _pair_ends(found.ends, found.n, rows)
    record = {
        "step": "add_kinship",
        **found.record,
        "threshold": value,
        "threshold_name": degree,
        "inclusive": True,
        "pairs_kept": len(rows),
        "unknown": unknown,
        **found.dropped,
    }
    return EdgePiece(RelationName.SUBJECT_RELATED_TO, src, dst, found.provenance, found.kin[rows]), record


class _KinshipFound(NamedTuple):
    """What one kind of kinship source yields: its ``n`` pairs' ends (ids of both columns, factorised), their
    kinship, which pairs to keep, the record of dropped ids, the source's part of the step record, and the
    edges' provenance."""

    n: int
    ends: Keys
    kin: np.ndarray
    both: np.ndarray
    dropped: dict[str, Any]
    record: dict[str, Any]
    provenance: str


def _tool_kinship(
    graph: StudyGraph, source: Any, format: str, value: float, what: str, unknown: Unknown, id_template: str,
    encoding: str | None, absent: Absent,
) -> _KinshipFound:  # fmt: skip
    """Pairs at or above the threshold from a genetics tool's file (read in streamed chunks), and who it covers."""
    pairs, read = read_kinship(source, format, value, id_template=id_template, encoding=encoding)
    covered = coverage(graph, read, format, value, id_template, absent, what)
    a = pd.Series(pairs["id1"].to_numpy(dtype=object), dtype=object)
    b = pd.Series(pairs["id2"].to_numpy(dtype=object), dtype=object)
    hint = template_hint(np.asarray(graph.keys(NodeType.SUBJECT), dtype=object), read["individuals_ids"], id_template)
    both, dropped, ends = _pairs_known(graph, NodeType.SUBJECT, a, b, unknown, what, hint)
    if len(a) and not both.any():  # unknown='ignore' dropping every pair is no declaration: a mistake
        raise DepgraphError(
            "reference",
            f"{what}: every one of its {len(a)} pair(s) at or above the threshold names an id not in the graph, so "
            f"none would be kept{hint}",
        )
    kin = pairs["kinship"].to_numpy(dtype=np.float64)
    record = {"source": file_name(source), "format": format, "id_template": id_template,
              "pairs_read": read.get("pairs_read"), "scale": read.get("scale"), **covered}  # fmt: skip
    record |= {k: v for k, v in read.items() if k.startswith("above_half")}  # flagged, not refused
    return _KinshipFound(len(a), ends, kin, both, dropped, record, f"kinship:{format}")


def _matrix_kinship(
    graph: StudyGraph, source: Any, ids: Any, value: float, what: str, unknown: Unknown
) -> _KinshipFound:
    """Pairs at or above the threshold from a square dense or sparse matrix whose rows and columns are ``ids``."""
    names = _matrix_ids(source, ids, what)
    known_ids = _unknown_ids(graph, NodeType.SUBJECT, names, unknown, what)
    a, b, kin, origin = _matrix_pairs(source, names, value, what)
    both = known_ids[_positions_in(names, a)] & known_ids[_positions_in(names, b)]
    ends = Keys.of(pd.concat([a, b], ignore_index=True))
    dropped = dropped_record(int((~both).sum()), names[~known_ids].to_numpy(dtype=object))
    return _KinshipFound(len(a), ends, kin, both, dropped, {"source": origin}, "kinship:matrix")


def _table_kinship(
    graph: StudyGraph, source: Any, value: float, what: str, unknown: Unknown, id_columns: tuple[str, str],
    value_column: str, id_template: str, encoding: str | None,
) -> _KinshipFound:  # fmt: skip
    """Pairs at or above the threshold from a pair table (``id1, id2, kinship``; coefficients in [0, 1])."""
    template = plain_table_template(id_template, what)  # a pair table has no family ids: no {FID}
    frame = _pair_table(source, "kinship", id_columns, value_column, encoding)
    if len(frame) == 0:
        raise DepgraphError("empty_input", f"{what} has no rows")
    a, b = _pair_keys(frame, id_columns, what)
    record: dict[str, Any] = {}
    if template is not None:
        a, b = (pa.array(templated(template, k.to_numpy(zero_copy_only=False)), type=pa.string()) for k in (a, b))
        record["id_template"] = id_template
    kin = numeric_column(frame[value_column], value_column, what)
    _check_kinship_values(kin, np.arange(len(kin)), what)
    known, dropped, ends = _pairs_known(graph, NodeType.SUBJECT, a, b, unknown, what)
    record |= {"source": file_name(source) if isinstance(source, (str, os.PathLike)) else "pairs",
               "pairs_in": len(frame)}  # fmt: skip
    return _KinshipFound(len(a), ends, kin, known & (kin >= value), dropped, record, "kinship:pairs")


def _positions_in(names: pd.Series, keys: pd.Series) -> np.ndarray:
    return pd.Index(names.to_numpy(dtype=object)).get_indexer(keys.to_numpy(dtype=object))


def _check_kinship_values(kin: np.ndarray, rows: np.ndarray, what: str) -> None:
    nan = np.isnan(kin)
    if nan.any():
        raise DepgraphError(
            "invalid_value", f"{what}: kinship is missing (NaN) in {describe_rows(rows[nan])}", rows=rows[nan].tolist()
        )
    out = (kin < 0) | (kin > 1)
    if out.any():
        raise DepgraphError(
            "invalid_value",
            f"{what}: kinship must lie in [0, 1]; {describe_rows(rows[out])} hold {describe_ids(kin[out])}",
            rows=rows[out].tolist(),
        )


def _matrix_ids(matrix: Any, ids: Any, what: str) -> pd.Series:
    """The normalised ids of a square kinship matrix's rows and columns."""
    if ids is None:
        raise DepgraphError("invalid_argument", f"a {what} matrix needs ids= naming its rows and columns")
    in_order(ids, "ids=")  # one id per row and column: never one string read as its characters
    names = normalise_keys(pd.Series(list(ids), dtype=object), "ids")
    require_ids(names, "ids", what)
    shape = matrix.shape
    if len(shape) != 2 or shape[0] != shape[1] or shape[0] != len(names):
        raise DepgraphError(
            "schema", f"{what} matrix must be square with one row per id: shape {shape}, {len(names)} ids"
        )
    if names.duplicated().any():
        dups = names[names.duplicated()].unique().tolist()
        raise DepgraphError("duplicate_id", f"{what} matrix ids repeat {describe_ids(dups)}", ids=dups)
    return names


def _matrix_pairs(
    matrix: Any, names: pd.Series, threshold: float, what: str
) -> tuple[pd.Series, pd.Series, np.ndarray, str]:
    shape = matrix.shape
    key_arr = names.to_numpy(dtype=object)
    if is_sparse(matrix):
        if threshold <= 0:
            raise DepgraphError(
                "invalid_argument", "a sparse kinship matrix needs a threshold above 0 (its absent entries are 0)"
            )
        coo = sys.modules["scipy.sparse"].coo_matrix(matrix)
        off = coo.row != coo.col
        rows, cols, vals = coo.row[off], coo.col[off], np.asarray(coo.data[off], dtype=np.float64)
        _check_matrix_values(vals, rows, cols, key_arr, what)
        keep = vals >= threshold
        i, j, v = rows[keep], cols[keep], vals[keep]
        origin = "sparse matrix"
    else:
        dense = np.asarray(matrix, dtype=np.float64)
        parts_i, parts_j, parts_v = [], [], []
        block = max(1, 2**22 // max(1, shape[1]))  # ~4M cells (32 MB) at a time
        for start in range(0, shape[0], block):
            chunk = dense[start : start + block]
            local = np.arange(len(chunk))
            diagonal = (local, local + start)  # self-kinship is neither checked nor a pair
            bad = np.isnan(chunk) | (chunk < 0) | (chunk > 1)
            bad[diagonal] = False
            if bad.any():
                r, c = np.nonzero(bad)
                _check_matrix_values(chunk[r, c], r + start, c, key_arr, what)
            hit = chunk >= threshold
            hit[diagonal] = False
            r, c = np.nonzero(hit)
            parts_i.append(r + start)
            parts_j.append(c)
            parts_v.append(chunk[r, c])
        i, j, v = np.concatenate(parts_i), np.concatenate(parts_j), np.concatenate(parts_v)
        origin = "dense matrix"
    return pd.Series(key_arr[i], dtype=object), pd.Series(key_arr[j], dtype=object), v, origin


def _check_matrix_values(vals: np.ndarray, rows: np.ndarray, cols: np.ndarray, keys: np.ndarray, what: str) -> None:
    bad = np.isnan(vals) | (vals < 0) | (vals > 1)
    if bad.any():
        pairs = [
            f"({keys[r]}, {keys[c]})={v}" for r, c, v in zip(rows[bad][:3], cols[bad][:3], vals[bad][:3], strict=True)
        ]
        raise DepgraphError(
            "invalid_value",
            f"{what} matrix holds {int(bad.sum())} entries outside [0, 1] or NaN: {', '.join(pairs)}",
        )


def duplicate_pairs(
    graph: StudyGraph,
    pairs: Any,
    *,
    unknown: Unknown = "error",
    similarity_column: str | None = None,
    provenance: str = "declared",
    encoding: str | None = None,
) -> tuple[EdgePiece, dict[str, Any]]:
    """``sample_duplicate_of`` edges from a table of sample id pairs ``id1, id2``.

    An optional ``similarity_column`` becomes the edge weight (as written by
    a duplicate audit). A text file that is not UTF-8 needs its ``encoding``.
    """
    what = describe_source(pairs, "duplicate pairs")
    frame = _pair_table(pairs, "duplicate pairs", ("id1", "id2"), similarity_column, encoding)
    if len(frame) == 0:
        raise DepgraphError("empty_input", f"{what} table has no rows")
    a, b = _pair_keys(frame, ("id1", "id2"), what)
    weight = numeric_column(frame[similarity_column], similarity_column, what) if similarity_column else None
    known, dropped, ends = _pairs_known(graph, NodeType.SAMPLE, a, b, unknown, what)
    src, dst = _pair_ends(ends, len(a), known)
    piece = EdgePiece(
        RelationName.SAMPLE_DUPLICATE_OF,
        src,
        dst,
        f"duplicates:{provenance}",
        None if weight is None else weight[known],
    )
    record = {
        "step": "add_duplicates",
        "source": provenance,
        "pairs_in": len(frame),
        "pairs_kept": int(known.sum()),
        "unknown": unknown,
        **dropped,
    }
    return piece, record


def explicit_pairs(
    graph: StudyGraph,
    pairs: Any,
    relation: str,
    *,
    source_column: str = "source",
    target_column: str = "target",
    unknown: Unknown = "error",
    encoding: str | None = None,
) -> tuple[EdgePiece, dict[str, Any]]:
    """Edges of any relation from a table of ``source, target`` keys, e.g.
    ``featureset_generated_from_study`` between feature sets and studies (a
    text file that is not UTF-8 needs its ``encoding``)."""
    rel = RELATION.get(relation) if isinstance(relation, str) else None
    if rel is None:
        raise DepgraphError("invalid_argument", f"unknown relation {relation!r}")
    what = describe_source(pairs, f"{relation} pairs")
    frame = _pair_table(pairs, f"{relation} pairs", (source_column, target_column), None, encoding)
    if len(frame) == 0:
        raise DepgraphError("empty_input", f"{what} table has no rows")
    for column in (source_column, target_column):
        check_key_column(frame[column], column, what)
    a = normalise_keys(frame[source_column], source_column)
    b = normalise_keys(frame[target_column], target_column)
    require_ids(a, source_column, what)
    require_ids(b, target_column, what)
    known = (graph.locate(rel.source, a) >= 0) & (graph.locate(rel.target, b) >= 0)
    if not known.all() and unknown == "error":
        strangers = pd.unique(
            np.concatenate(
                [a[graph.locate(rel.source, a) < 0].to_numpy(), b[graph.locate(rel.target, b) < 0].to_numpy()]
            )
        ).tolist()
        raise DepgraphError(
            "reference",
            f"{what} name ids not in the graph ({rel.source.value} -> {rel.target.value}): {describe_ids(strangers)}",
            ids=strangers,
        )
    piece = EdgePiece(relation, a[known].reset_index(drop=True), b[known].reset_index(drop=True), "explicit")
    record = {"step": "add_relations", "relation": relation, "pairs_in": len(frame), "pairs_kept": int(known.sum())}
    return piece, record
