"""From the tables a study team has to graph pieces.

* :func:`from_metadata` — one row per sample with canonical columns
  (``sample_id``, ``subject_id``, ``batch_id``, ``study_id``, ``timepoint_id``,
  ``time_index``, ``assay_id``, ``featureset_id``, ``site_id``, ``region_id``,
  ``platform_id``, ``outcome_id``) → a :class:`~depgraph.graph.model.StudyGraph`.
* :func:`kinship_pairs`, :func:`spatial_pairs`, :func:`duplicate_pairs`,
  :func:`explicit_pairs` — the edge pieces behind ``StudyGraph.add_kinship``,
  ``add_spatial``, ``add_duplicates`` and ``add_relations``.

Identifiers are normalised once, here: surrounding blanks are stripped, NaN
and blank cells are missing, integers and integral floats are written without
a decimal part (``1``, ``1.0`` and ``"1"`` are the same key; ``"01"`` is not
``1``). Every problem a table can have raises a
:class:`~depgraph.errors.DepgraphError` naming the offending rows or ids.
"""

from __future__ import annotations

import math
import os
import warnings
from collections.abc import Mapping
from concurrent.futures import Future, ThreadPoolExecutor
from typing import Any, Literal

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc
import scipy.sparse as sp
from scipy.spatial import cKDTree

from depgraph.common.arguments import in_order, real_number
from depgraph.common.arrays import sorted_codes
from depgraph.common.identifiers import (
    _float_keys,
    check_key_column,
    key_array,
    normalise_keys,
    refuse_control_characters,
    refuse_unicode_twins,
)
from depgraph.errors import DepgraphError, DepgraphWarning, describe_ids, describe_rows
from depgraph.graph.model import (
    EdgePiece,
    Keys,
    NodePiece,
    StudyGraph,
    assemble,
    checked_overrides,
    many_distinct,
    text_array,
)
from depgraph.ingest.kinship import detect_format, plain_table_template, read_kinship, resolve_threshold, templated
from depgraph.io.files import describe_source, file_name, read_table
from depgraph.io.tables import attribute_values, non_number_kind, text_layout
from depgraph.io.textnumbers import decimal_points, typed_attribute
from depgraph.vocab import CANONICAL_COLUMNS, RELATION, RELATIONS, NodeType

Unknown = Literal["error", "ignore"]

_BACKGROUND = ThreadPoolExecutor(max_workers=2, thread_name_prefix="depgraph")

#: Above this many precedence edges per timepoint, ties in time_index are not
#: expanded into edges (the order stays in time_index, which derivation reads).
_MAX_PRECEDES_PER_TIMEPOINT = 4


def _numeric(values: pd.Series, column: str, what: str) -> np.ndarray:
    """A float column; text that is not a number, or an infinite value, is an
    ``invalid_value`` error naming rows; booleans, dates and durations are a
    ``schema`` error (never read as 0/1 or nanoseconds)."""
    kind = non_number_kind(values)
    if kind is not None:
        raise DepgraphError("schema", f"{what}: {column} holds {kind}, not numbers", column=column)
    arr = None
    if pd.api.types.is_string_dtype(values.dtype) and values.dtype != object:
        try:  # pyarrow parses a clean text column far faster than pandas
            arr = pc.cast(pa.array(values.array), pa.float64()).to_numpy(zero_copy_only=False)
        except (pa.ArrowInvalid, pa.ArrowTypeError, TypeError):
            arr = None  # find and name the offending rows below
    if arr is None:
        arr = _coerced(values, column, what)
    infinite = np.isinf(arr)
    if infinite.any():
        rows = np.flatnonzero(infinite)
        raise DepgraphError(
            "invalid_value", f"{what}: {column} is infinite in {describe_rows(rows)}", rows=rows.tolist()
        )
    return arr


def _coerced(values: pd.Series, column: str, what: str) -> np.ndarray:
    numbers = pd.to_numeric(values, errors="coerce").astype(np.float64)
    raw_missing = (
        values.isna() | (values.astype(str).str.strip() == "")
        if values.dtype == object or pd.api.types.is_string_dtype(values.dtype)
        else values.isna()
    )
    bad = numbers.isna() & ~raw_missing
    if bad.any():
        rows = np.flatnonzero(bad.to_numpy())
        examples = [repr(v) for v in values.iloc[rows[:3]].tolist()]  # repr: a cell may hold a line break
        raise DepgraphError(
            "invalid_value",
            f"{what}: {column} is not a number in {describe_rows(rows)} (e.g. {describe_ids(examples)})",
            rows=rows.tolist(),
            column=column,
        )
    return numbers.to_numpy()


def _require_ids(keys: pd.Series | pa.Array, column: str, what: str) -> None:
    missing = _missing(keys) if isinstance(keys, pa.Array) else keys.isna().to_numpy()
    if missing.any():
        rows = np.flatnonzero(missing)
        raise DepgraphError(
            "missing_id",
            f"{what}: {column} is missing or blank in {describe_rows(rows)}",
            rows=rows.tolist(),
            column=column,
        )


def _refuse_type_collisions(raw: pd.Series, key_column: pa.Array, column: str, what: str) -> None:
    """Two different values of different Python types that become one key
    (``1`` and ``"1"``) in a column that must be unique."""
    if raw.dtype != object or pd.api.types.infer_dtype(raw, skipna=True) in ("string", "empty"):
        return
    keys = _as_series(key_column)
    types = raw.map(lambda v: type(v).__name__)
    frame = pd.DataFrame({"key": keys, "type": types}).dropna(subset=["key"])
    kinds = frame.groupby("key", sort=True)["type"].nunique()
    clashing = kinds[kinds > 1].index.tolist()
    if clashing:
        rows = np.flatnonzero(keys.isin(clashing).to_numpy())
        shown = ", ".join(f"{v!r} ({type(v).__name__})" for v in raw.iloc[rows[:4]].tolist())
        raise DepgraphError(
            "ambiguity",
            f"{what}: {column} values {shown} differ only by type and would be the same key "
            f"{describe_ids(clashing)} ({describe_rows(rows)})",
            ids=clashing,
            rows=rows.tolist(),
        )


# --------------------------------------------------------------------------- metadata
def from_metadata(
    table: Any,
    columns: Mapping[str, str] | None = None,
    *,
    name: str | None = None,
    outcome_scope: Literal["sample", "subject"] = "sample",
    allow_multi_subject_samples: bool = False,
    encoding: str | None = None,
    sheet: str | int | None = None,
) -> StudyGraph:
    """Build a StudyGraph from one row per sample.

    Parameters
    ----------
    table:
        pandas / polars / pyarrow table, or a CSV / TSV / Parquet / Excel
        (``.xlsx``) path. A text file's delimiter (``,`` ``;`` tab ``|``) is
        read from its header.
    columns:
        ``{canonical_name: your_column}`` for columns named differently, e.g.
        ``{"subject_id": "patient"}``.
    name:
        A label carried into reports.
    outcome_scope:
        ``"sample"`` links outcomes to samples, ``"subject"`` to subjects.
    allow_multi_subject_samples:
        Accept a sample listed with several subjects (rows repeating the
        sample id). Subject derivation then uses the smallest subject id.
    encoding:
        A text file's encoding when it is not UTF-8, e.g. ``"latin-1"``.
    sheet:
        An Excel workbook's sheet: its name, or its number counted from 1
        (default: the first sheet).

    A sample may appear on several rows only to list several feature sets or
    outcomes; any other column must agree between its rows. A timepoint
    carries one ``time_index``; timepoints with equal ``time_index`` are ties
    (no precedence between them). Other columns are kept as sample attributes;
    read from a text file, an attribute column is typed as pandas would type it
    (:func:`depgraph.io.textnumbers.typed_attribute`: numbers as numbers), so a
    file and the DataFrame read from it give the same graph.

    >>> meta = pd.DataFrame({
    ...     "sample_id": ["S1", "S2", "S3"],
    ...     "subject_id": ["P1", "P1", "P2"],
    ...     "timepoint_id": ["T0", "T1", "T0"],
    ...     "time_index": [0, 1, 0],
    ... })
    >>> g = from_metadata(meta)
    >>> g.relation_counts()
    {'sample_belongs_to_subject': 3, 'sample_collected_at_timepoint': 3, 'timepoint_precedes': 1}
    """
    what = describe_source(table, "metadata")
    frame = read_table(table, "metadata", encoding=encoding, sheet=sheet)
    layout = text_layout(frame)
    frame = _apply_column_map(frame, columns)
    if "sample_id" not in frame.columns:
        raise DepgraphError(
            "schema",
            f"{what} has no sample_id column (columns: {describe_ids(frame.columns, 12)}); "
            f"map yours with columns={{'sample_id': 'your_column'}}",
            column="sample_id",
        )
    if len(frame) == 0:
        raise DepgraphError("empty_input", f"{what} has no rows")
    if outcome_scope not in ("sample", "subject"):
        raise DepgraphError("invalid_argument", f"outcome_scope must be 'sample' or 'subject', not {outcome_scope!r}")
    checked_overrides({"allow_multi_subject_samples": allow_multi_subject_samples}, "invalid_value", "from_metadata:")
    frame = frame.reset_index(drop=True)
    read_columns = list(frame.columns)
    notes: list[dict[str, Any]] = []
    if "outcome_value" in frame.columns and "outcome_id" not in frame.columns:
        frame, notes = _outcome_from_value(frame, what)
    if layout is not None:  # a text file: numbers in it are text until read here
        frame = _with_decimal_points(frame, ["time_index"], what, layout)
        for column in [c for c in frame.columns if c not in CANONICAL_COLUMNS]:
            frame[column] = typed_attribute(frame[column], layout["decimal"])

    id_columns = [c for c in CANONICAL_COLUMNS if c in frame.columns and c != "time_index"]
    for column in id_columns:
        check_key_column(frame[column], column, what)
    samples = key_array(frame["sample_id"], "sample_id")  # Arrow text, null where missing
    _require_ids(samples, "sample_id", what)
    # Ranking a million ids is the longest single step: it runs on a second
    # core (numpy and Arrow release the GIL) while the other columns are read.
    sorting = _BACKGROUND.submit(sorted_codes, samples)
    keys = {c: samples if c == "sample_id" else key_array(frame[c], c) for c in id_columns}
    for column, values in keys.items():
        refuse_control_characters(values, column, what)
        refuse_unicode_twins(values, column, what)
    _refuse_type_collisions(frame["sample_id"], samples, "sample_id", what)
    time_index = _numeric(frame["time_index"], "time_index", what) if "time_index" in frame.columns else None
    attribute_columns = [c for c in frame.columns if c not in CANONICAL_COLUMNS]

    if time_index is not None and "timepoint_id" not in keys:
        # A time_index alone names its timepoints: time 3 is timepoint "3".
        keys["timepoint_id"] = pa.array(_float_keys(time_index), type=pa.string(), from_pandas=True)
    if time_index is not None:
        orphan = ~np.isnan(time_index) & _missing(keys["timepoint_id"])
        if orphan.any():
            rows = np.flatnonzero(orphan)
            raise DepgraphError(
                "missing_id",
                f"{what}: time_index is given without a timepoint_id in {describe_rows(rows)}",
                rows=rows.tolist(),
                column="timepoint_id",
            )

    # Each target column is factorised now or, when it has many distinct ids, ranked in the background.
    targets: list[tuple[str, np.ndarray, Future[Keys]]] = []
    for rel in RELATIONS:
        column = rel.column
        if column is None or column not in keys or rel.source != NodeType.SAMPLE:
            continue
        if column == "outcome_id" and outcome_scope == "subject":
            continue
        present = ~_missing(keys[column])
        if present.any():
            values = keys[column] if present.all() else keys[column].filter(pa.array(present))
            targets.append((rel.name, present, _factorised(values)))

    # One ranking of the sample ids finds repeated rows and gives assembly its node order.
    codes, first = sorting.result()
    n = len(samples)
    unique_samples = len(first) == n
    repeated = np.zeros(n, dtype=bool)
    if not unique_samples:
        repeated = np.bincount(codes)[codes] > 1
        _refuse_conflicting_rows(
            _as_series(samples),
            {c: _as_series(k) for c, k in keys.items()},
            time_index,
            repeated,
            allow_multi_subject_samples,
        )
    order = np.empty(n, dtype=np.int64)  # rows in sample-id order (used when each row is its own sample)
    order[codes] = np.arange(n)

    node_pieces: list[NodePiece] = []
    edge_pieces: list[EdgePiece] = []
    sample_attrs = (
        pd.DataFrame({c: attribute_values(frame[c]) for c in attribute_columns}).reset_index(drop=True)
        if attribute_columns
        else None
    )
    # one factorisation shared by every sample-side edge
    if unique_samples:
        sample_keys = Keys.distinct(samples, order)
    else:
        sample_keys = Keys(codes, samples.take(pa.array(first)), np.arange(len(first)))
    node_pieces.append(NodePiece(NodeType.SAMPLE, sample_keys, sample_attrs))

    timepoints: tuple[Keys, np.ndarray] | None = None
    for relation, present, factorising in targets:
        target_keys = factorising.result()
        if RELATION[relation].target == NodeType.TIMEPOINT and time_index is not None:
            timepoints = _distinct_times(target_keys, time_index[present])
            times = pd.DataFrame({"time_index": timepoints[1]})
            node_pieces.append(NodePiece(NodeType.TIMEPOINT, timepoints[0], times))
        else:
            node_pieces.append(NodePiece(RELATION[relation].target, target_keys))
        if unique_samples:  # one target per sample: the sample sort orders these edges too
            if present.all():
                edge_pieces.append(EdgePiece(relation, sample_keys, target_keys, "metadata", source_order=order))
            else:
                row_of = np.cumsum(present) - 1
                rows = row_of[order[present[order]]]
                edge_pieces.append(
                    EdgePiece(relation, sample_keys.take(present), target_keys, "metadata", source_order=rows)
                )
        else:
            edge_pieces.append(_distinct_pairs(relation, sample_keys.take(present), target_keys))

    history: dict[str, Any] = {"step": "from_metadata", "rows": len(frame), "columns": read_columns}
    if notes:
        history["outcome_id_from"] = "outcome_value"
        history["warnings"] = notes
    if not any(c in frame.columns for c in GROUPING_COLUMNS):
        history["no_grouping_column"] = {"id_like_columns": id_like_columns(frame, attribute_columns)}
    if outcome_scope == "subject" and "outcome_id" in keys:
        edge_pieces.append(_subject_outcomes({c: _as_series(k) for c, k in keys.items()}, what))
        outcomes = _as_series(keys["outcome_id"]).dropna()
        node_pieces.append(NodePiece(NodeType.OUTCOME, outcomes.reset_index(drop=True)))
        history["outcome_scope"] = "subject"

    precedes, note = _precedence(timepoints)
    if precedes is not None:
        edge_pieces.append(precedes)
    if note:
        history["time_precedence"] = note

    overrides = {"allow_multi_subject_samples": True} if allow_multi_subject_samples else {}
    graph = assemble(node_pieces, edge_pieces, name=name, overrides=overrides, history=[history])
    return graph


def _outcome_from_value(frame: pd.DataFrame, what: str) -> tuple[pd.DataFrame, list[dict[str, Any]]]:
    """splitGraph's rule: without ``outcome_id``, ``outcome_value`` names each
    sample's outcome (Outcome nodes, hence strata). Numbers are almost never
    class labels, so numeric values also raise a ``numeric_outcome_value``
    warning (kept in the graph's history, where validation reports it)."""
    values = frame["outcome_value"]
    present = values.notna() & (values.astype(str).str.strip() != "")
    numbers = pd.to_numeric(values[present], errors="coerce")
    frame = frame.rename(columns={"outcome_value": "outcome_id"})
    if not present.any() or numbers.isna().any() or pd.api.types.is_bool_dtype(values.dtype):
        return frame, []
    shown = describe_ids(normalise_keys(values[present]).drop_duplicates().tolist(), 3)
    message = (
        f"outcome_value is numeric: each distinct value ({shown}) becomes an Outcome node and a stratum; "
        "if these are class labels give them as outcome_id (text), otherwise leave outcome_value out"
    )
    warnings.warn(DepgraphWarning("numeric_outcome_value", f"{what}: {message}"), stacklevel=3)
    return frame, [{"code": "numeric_outcome_value", "message": message, "count": 1}]  # no path in the graph


def _positions(indices: pa.Array) -> np.ndarray:
    return indices.to_numpy(zero_copy_only=False).astype(np.int64, copy=False)


def _factorised(values: pa.Array) -> Future[Keys]:
    """``values`` as Keys with their vocabulary's sorted order, computed on the second core where it costs."""
    if many_distinct(values):
        return _BACKGROUND.submit(Keys.ranked, values)
    encoded = Keys.of(values)
    return _BACKGROUND.submit(lambda: Keys(encoded.codes, encoded.vocab, _positions(pc.sort_indices(encoded.vocab))))


def _missing(keys: pa.Array) -> np.ndarray:
    """Where an Arrow key column has no value."""
    if not keys.null_count:
        return np.zeros(len(keys), dtype=bool)
    return pc.is_null(keys).to_numpy(zero_copy_only=False)


def _as_series(keys: pa.Array) -> pd.Series:
    """An Arrow key column as Python strings, ``None`` where missing (for the rare, slow paths)."""
    return pd.Series(keys.to_numpy(zero_copy_only=False), dtype=object)


def _distinct_times(timepoints: Keys, time_index: np.ndarray) -> tuple[Keys, np.ndarray]:
    """One row per distinct (timepoint, time_index) pair, in first-seen order,
    so a timepoint given two times is still caught by assembly."""
    times, levels = pd.factorize(time_index, use_na_sentinel=False)
    pair = pd.Series(timepoints.codes.astype(np.int64) * (len(levels) + 1) + times)
    rows = np.flatnonzero(~pair.duplicated().to_numpy())
    return timepoints.take(rows), time_index[rows]


def _distinct_pairs(
    relation: str, src: Keys, dst: Keys, provenance: str = "metadata", repeated: bool = True
) -> EdgePiece:
    """An edge piece with each (source, target) pair once (only rows repeating a sample can repeat a pair)."""
    if not repeated:
        return EdgePiece(relation, src, dst, provenance)
    pair = src.codes.astype(np.int64) * max(1, len(dst.vocab)) + dst.codes
    _, first = np.unique(pair, return_index=True)
    first.sort()
    return EdgePiece(relation, src.take(first), dst.take(first), provenance)


#: Canonical columns that link a sample to something (every one but sample_id).
GROUPING_COLUMNS: tuple[str, ...] = tuple(c for c in CANONICAL_COLUMNS if c != "sample_id")


def id_like_columns(frame: pd.DataFrame, columns: list[str]) -> list[str]:
    """Columns among ``columns`` that look like identifiers a grouping could use:
    text or integers where some value repeats and there are many distinct values
    (at least 3, and at least the square root of the rows), most distinct first.

    >>> meta = pd.DataFrame({"patient": ["A", "A", "B", "C"], "sex": ["f", "f", "m", "f"], "x": [1.5, 2, 3, 4]})
    >>> id_like_columns(meta, ["patient", "sex", "x"])
    ['patient']
    """
    found: list[tuple[int, str]] = []
    for column in columns:
        values = frame[column]
        dtype = values.dtype
        textual = pd.api.types.is_string_dtype(dtype) or pd.api.types.is_integer_dtype(dtype)
        if not textual or pd.api.types.is_bool_dtype(dtype):
            continue
        present = int(values.notna().sum())
        distinct = int(values.nunique(dropna=True))
        if 3 <= distinct < present and distinct >= math.isqrt(present):
            found.append((distinct, column))
    return [c for _, c in sorted(found, key=lambda f: (-f[0], f[1]))]


def no_grouping_message(step: Mapping[str, Any]) -> str | None:
    """The warning for a ``from_metadata`` history step that found no grouping
    column (None when it found one): every sample would be its own group.

    >>> no_grouping_message({"step": "from_metadata", "no_grouping_column": {"id_like_columns": ["patient"]}})
    'metadata has no grouping column (...): every sample is its own group; patient looks like an id: ...'
    """
    note = step.get("no_grouping_column") if step.get("step") == "from_metadata" else None
    if note is None:
        return None
    message = (
        "metadata has no grouping column (only sample_id and attributes; no subject_id, batch_id, site_id...): "
        "every sample is its own group"
    )
    candidates = [str(c) for c in note.get("id_like_columns", [])]
    if len(candidates) == 1:
        message += f"; {candidates[0]} looks like an id: map it, e.g. --column subject_id={candidates[0]}"
    elif candidates:
        message += f"; {describe_ids(candidates)} look like ids: map one, e.g. --column subject_id={candidates[0]}"
    return message


def _with_decimal_points(
    frame: pd.DataFrame, columns: list[str], what: str, layout: Mapping[str, str] | None
) -> pd.DataFrame:
    """``frame`` with the numbers of ``columns`` written with decimal points, when its file wrote decimal commas
    (a semicolon-separated file; see :func:`depgraph.io.textnumbers.decimal_points`)."""
    if layout is None or layout.get("decimal") != ",":
        return frame
    for column in columns:
        if column in frame.columns:
            frame[column] = decimal_points(frame[column], column, what)
    return frame


def _apply_column_map(frame: pd.DataFrame, columns: Mapping[str, str] | None) -> pd.DataFrame:
    if columns is not None and not isinstance(columns, Mapping):
        raise DepgraphError(
            "invalid_argument",
            f"columns= maps canonical names to your columns, e.g. {{'subject_id': 'patient'}}, not {columns!r}",
        )
    if not columns:
        return frame
    unknown = [c for c in columns if c not in CANONICAL_COLUMNS]
    if unknown:
        raise DepgraphError(
            "invalid_argument",
            f"columns= maps unknown canonical name(s) {describe_ids(unknown)}; "
            f"canonical columns are {describe_ids(CANONICAL_COLUMNS, 20)}",
        )
    absent = [user for user in columns.values() if user not in frame.columns]
    if absent:
        raise DepgraphError(
            "schema",
            f"metadata has no column {describe_ids(absent)} (columns: {describe_ids(frame.columns, 12)})",
            columns=absent,
        )
    clash = [c for c, user in columns.items() if c in frame.columns and user != c]
    if clash:
        raise DepgraphError(
            "ambiguity",
            f"metadata already has a {describe_ids(clash)} column and columns= maps another column onto it",
            columns=clash,
        )
    return frame.rename(columns={user: canonical for canonical, user in columns.items()})


def _refuse_conflicting_rows(
    samples: pd.Series,
    keys: Mapping[str, pd.Series],
    time_index: np.ndarray | None,
    repeated: np.ndarray,
    allow_multi_subject: bool,
) -> None:
    """Rows repeating a sample id must agree on every single-valued column."""
    single = [r.column for r in RELATIONS if r.single_target and r.column in keys]
    if allow_multi_subject and "subject_id" in single:
        single.remove("subject_id")
    checks = {c: keys[c][repeated] for c in single}
    if time_index is not None:
        checks["time_index"] = pd.Series(time_index[repeated])
    rows_all = np.flatnonzero(repeated)
    ids = samples[repeated].to_numpy()
    for column, values in checks.items():
        frame = pd.DataFrame({"sample": ids, "value": values.to_numpy()})
        distinct = frame.groupby("sample", sort=True)["value"].nunique(dropna=True)
        bad = distinct[distinct > 1].index.tolist()
        if bad:
            first = bad[0]
            where = rows_all[ids == first]
            shown = describe_ids(pd.unique(frame.loc[frame["sample"] == first, "value"].dropna()))
            label = "subjects" if column == "subject_id" else f"{column} values"
            hint = " (set allow_multi_subject_samples to accept this)" if column == "subject_id" else ""
            raise DepgraphError(
                "ambiguity",
                f"metadata: sample {describe_ids(bad)} is declared with different {label} "
                f"({first}: {shown} in {describe_rows(where)}){hint}",
                ids=bad,
                column=column,
                rows=where.tolist(),
            )


def _subject_outcomes(keys: Mapping[str, pd.Series], what: str) -> EdgePiece:
    if "subject_id" not in keys:
        raise DepgraphError("schema", f"{what}: outcome_scope='subject' needs a subject_id column")
    outcome, subject = keys["outcome_id"], keys["subject_id"]
    present = outcome.notna().to_numpy()
    orphan = present & subject.isna().to_numpy()
    if orphan.any():
        rows = np.flatnonzero(orphan)
        raise DepgraphError(
            "missing_id",
            f"{what}: outcome_id is given without a subject_id in {describe_rows(rows)}",
            rows=rows.tolist(),
        )
    pairs = pd.DataFrame({"s": subject[present].to_numpy(), "o": outcome[present].to_numpy()}).drop_duplicates()
    return EdgePiece("subject_has_outcome", pairs["s"], pairs["o"], "metadata")


def _precedence(timepoints: tuple[Keys, np.ndarray] | None) -> tuple[EdgePiece | None, str | None]:
    """``timepoint_precedes`` edges between consecutive time_index levels.

    ``timepoints`` holds each row's timepoint and time_index. Timepoints sharing
    a time_index are ties: each precedes every timepoint of the next level,
    none precedes another of its own level.
    """
    if timepoints is None:
        return None, None
    keys, time_index = timepoints  # distinct (timepoint, time) pairs
    present = ~np.isnan(time_index)
    if not present.any():
        return None, None
    names = keys.take(present).values()
    levels = pd.DataFrame({"tp": names, "t": time_index[present]}).sort_values(["t", "tp"], kind="stable")
    if levels["tp"].duplicated().any():
        return None, None  # conflicting time_index per timepoint: assemble() reports it
    values = levels["t"].to_numpy()
    names = levels["tp"].to_numpy(dtype=object)
    if len(names) < 2:
        return None, None
    if (np.diff(values) > 0).all():  # no ties: a chain
        return EdgePiece("timepoint_precedes", pd.Series(names[:-1]), pd.Series(names[1:]), "metadata"), None
    level_of = np.unique(values, return_inverse=True)[1]
    sizes = np.bincount(level_of)
    if len(sizes) < 2:  # every timepoint tied: nothing precedes anything
        return None, None
    n_edges = int((sizes[:-1] * sizes[1:]).sum())
    if n_edges > _MAX_PRECEDES_PER_TIMEPOINT * len(names) + 1000:
        return None, f"{n_edges} precedence edges between tied timepoints not materialised; order kept in time_index"
    starts = np.concatenate([[0], np.cumsum(sizes)])
    src, dst = [], []
    for k in range(len(sizes) - 1):
        here, nxt = names[starts[k] : starts[k + 1]], names[starts[k + 1] : starts[k + 2]]
        src.append(np.repeat(here, len(nxt)))
        dst.append(np.tile(nxt, len(here)))
    return (
        EdgePiece("timepoint_precedes", pd.Series(np.concatenate(src)), pd.Series(np.concatenate(dst)), "metadata"),
        None,
    )


# --------------------------------------------------------------------------- pairs
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
    return _with_decimal_points(frame.reset_index(drop=True), [value_column] if value_column else [], what, layout)


def _pair_keys(frame: pd.DataFrame, id_columns: tuple[str, str], what: str) -> tuple[pa.Array, pa.Array]:
    """The two id columns of a pair table as Arrow keys (no missing id, no id paired with itself)."""
    for column in id_columns:
        check_key_column(frame[column], column, what)
    a = key_array(frame[id_columns[0]], id_columns[0])
    b = key_array(frame[id_columns[1]], id_columns[1])
    _require_ids(a, id_columns[0], what)
    _require_ids(b, id_columns[1], what)
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
    graph: StudyGraph, node_type: NodeType, ids: pd.Series | pa.Array, unknown: Unknown, what: str
) -> np.ndarray:
    """Which of ``ids`` name nodes of ``node_type``; unknown ids raise, or with
    ``unknown="ignore"`` are only flagged (their rows are dropped by the caller)."""
    if unknown not in ("error", "ignore"):
        raise DepgraphError("invalid_argument", f"unknown= must be 'error' or 'ignore', not {unknown!r}")
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
            f"{what} names {len(strangers)} {node_type.value} id(s) not in the graph: {describe_ids(strangers)} "
            "(to drop them instead: unknown='ignore', or --unknown ignore on the command line)",
            ids=strangers,
        )
    return known


def _pairs_known(
    graph: StudyGraph, node_type: NodeType, a: Any, b: Any, unknown: Unknown, what: str
) -> tuple[np.ndarray, dict[str, Any], Keys]:
    """Rows whose two ids are both known, the record of what was dropped, and
    the ids of both columns (``a`` then ``b``) factorised and already located."""
    ends = Keys.factorised(pa.concat_arrays([text_array(a), text_array(b)]))
    known_ids = _unknown_ids(graph, node_type, ends.vocab, unknown, what)  # one entry per distinct id
    known = known_ids[ends.codes]
    both = known[: len(a)] & known[len(a) :]
    strangers = ends.vocab.filter(pa.array(~known_ids)).to_numpy(zero_copy_only=False)  # first-seen order
    return both, _dropped_record(int((~both).sum()), strangers), ends


def _pair_ends(ends: Keys, n: int, rows: np.ndarray) -> tuple[Keys, Keys]:
    """Both ends of some rows of a pair table factorised by :func:`_pairs_known`."""
    rows = np.flatnonzero(rows) if rows.dtype == bool else rows
    return ends.take(rows), ends.take(rows + n)


def _dropped_record(n_dropped: int, strangers: np.ndarray) -> dict[str, Any]:
    return {
        "unknown_dropped": n_dropped,
        "unknown_id_count": len(strangers),
        "unknown_ids": [str(x) for x in strangers[:_RECORDED_IDS]],
    }


_RECORDED_IDS = 50  # ids kept in a history record; the count is exact


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

    Returns the edge piece and the provenance record (threshold, counts).
    """
    value, degree = resolve_threshold(threshold)
    what = describe_source(source, "kinship")
    record: dict[str, Any] = {"step": "add_kinship"}
    if format is None and isinstance(source, (str, os.PathLike)):
        format = detect_format(source, encoding=encoding)
    if format not in (None, "pairs"):
        if ids is not None:
            raise DepgraphError("invalid_argument", "ids= is only for kinship matrices")
        pairs, read = read_kinship(source, format, value, id_template=id_template, encoding=encoding)
        a = pd.Series(pairs["id1"].to_numpy(dtype=object), dtype=object)
        b = pd.Series(pairs["id2"].to_numpy(dtype=object), dtype=object)
        both, dropped, ends = _pairs_known(graph, NodeType.SUBJECT, a, b, unknown, what)
        kin = pairs["kinship"].to_numpy(dtype=np.float64)
        record |= {"source": file_name(source), "format": format, "id_template": id_template,
                   "pairs_read": read.get("pairs_read"), "scale": read.get("scale")}  # fmt: skip
        record |= {k: v for k, v in read.items() if k.startswith("above_half")}  # flagged, not refused
        provenance = f"kinship:{format}"
    elif isinstance(source, np.ndarray) or sp.issparse(source):
        if id_template != "{IID}":
            raise DepgraphError(
                "invalid_argument",
                f"id_template {id_template!r} applies to kinship files and pair tables; "
                "a matrix's ids= are subject ids",
            )
        names = _matrix_ids(source, ids, what)
        known_ids = _unknown_ids(graph, NodeType.SUBJECT, names, unknown, what)
        a, b, kin, origin = _matrix_pairs(source, names, value, what)
        both = known_ids[_positions_in(names, a)] & known_ids[_positions_in(names, b)]
        ends = Keys.of(pd.concat([a, b], ignore_index=True))
        record |= {"source": origin}
        dropped = _dropped_record(int((~both).sum()), names[~known_ids].to_numpy(dtype=object))
        provenance = "kinship:matrix"
    else:
        if ids is not None:
            raise DepgraphError("invalid_argument", "ids= is only for kinship matrices, not pair tables")
        template = plain_table_template(id_template, what)  # a pair table has no family ids: no {FID}
        frame = _pair_table(source, "kinship", id_columns, value_column, encoding)
        if len(frame) == 0:
            raise DepgraphError("empty_input", f"{what} has no rows")
        a, b = _pair_keys(frame, id_columns, what)
        if template is not None:
            a, b = (pa.array(templated(template, k.to_numpy(zero_copy_only=False)), type=pa.string()) for k in (a, b))
            record["id_template"] = id_template
        kin = _numeric(frame[value_column], value_column, what)
        _check_kinship_values(kin, np.arange(len(kin)), what)
        known, dropped, ends = _pairs_known(graph, NodeType.SUBJECT, a, b, unknown, what)
        both = known & (kin >= value)
        record |= {"source": file_name(source) if isinstance(source, (str, os.PathLike)) else "pairs",
                   "pairs_in": len(frame)}  # fmt: skip
        provenance = "kinship:pairs"
    rows = np.flatnonzero(both)
    src, dst = _pair_ends(ends, len(a), rows)
    kin = kin[rows]
    record |= {
        "threshold": value,
        "threshold_name": degree,
        "inclusive": True,
        "pairs_kept": len(rows),
        "unknown": unknown,
        **dropped,
    }
    return EdgePiece("subject_related_to", src, dst, provenance, kin), record


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
    _require_ids(names, "ids", what)
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
    if sp.issparse(matrix):
        if threshold <= 0:
            raise DepgraphError(
                "invalid_argument", "a sparse kinship matrix needs a threshold above 0 (its absent entries are 0)"
            )
        coo = sp.coo_matrix(matrix)
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
    for label, value in (("radius", radius), ("p", p)):  # "1" and True are no distances
        if not real_number(value):
            raise DepgraphError("invalid_argument", f"{label} must be a number, not {value!r}")
    r = float(radius)
    if not math.isfinite(r) or r < 0:
        raise DepgraphError("invalid_argument", f"radius must be a finite number >= 0, not {radius!r}")
    if not (p >= 1):
        raise DepgraphError("invalid_argument", f"p must be >= 1 (a Minkowski norm), not {p!r}")
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
    _require_ids(ids, "sample_id", what)
    if ids.duplicated().any():
        dups = ids[ids.duplicated()].unique().tolist()
        raise DepgraphError("duplicate_id", f"{what} list sample(s) {describe_ids(dups)} more than once", ids=dups)
    frame = _with_decimal_points(frame, axes, what, layout)
    points = np.column_stack([_numeric(frame[a], a, what) for a in axes])
    nan_rows = np.flatnonzero(np.isnan(points).any(axis=1))
    if len(nan_rows):
        raise DepgraphError(
            "invalid_value",
            f"{what}: missing coordinates for sample(s) {describe_ids(ids.iloc[nan_rows])} ({describe_rows(nan_rows)})",
            ids=ids.iloc[nan_rows].tolist(),
        )
    _refuse_overflowing_spans(points, axes, p, what)
    positions = graph.locate(NodeType.SAMPLE, ids)
    strangers = ids[positions < 0].tolist()
    if strangers and unknown == "error":
        raise DepgraphError(
            "reference",
            f"{what} name {len(strangers)} sample(s) not in the graph: {describe_ids(strangers)} "
            "(pass unknown='ignore' to drop them)",
            ids=strangers,
        )
    if unknown not in ("error", "ignore"):
        raise DepgraphError("invalid_argument", f"unknown= must be 'error' or 'ignore', not {unknown!r}")
    known = positions >= 0
    dropped = _dropped_record(len(strangers), np.asarray(strangers, dtype=object))
    ids, points = ids[known].reset_index(drop=True), points[known]
    pairs = cKDTree(points).query_pairs(r=r, p=p, output_type="ndarray") if len(points) > 1 else np.empty((0, 2), int)
    i, j = pairs[:, 0], pairs[:, 1]
    distance = np.linalg.norm(points[i] - points[j], ord=p, axis=1) if len(i) else np.empty(0)
    key_arr = ids.to_numpy(dtype=object)
    piece = EdgePiece(
        "sample_adjacent_to",
        pd.Series(key_arr[i], dtype=object),
        pd.Series(key_arr[j], dtype=object),
        "spatial:radius",
        distance,
    )
    record = {
        "step": "add_spatial",
        "radius": r,
        "inclusive": True,
        "metric": "euclidean" if p == 2 else f"minkowski(p={p})",
        "dimensions": len(axes),
        "points": len(points),
        "pairs_kept": len(i),
        "unknown": unknown,
        **dropped,
        "dropped_what": "samples",
    }
    return piece, record


#: Distances are sums of coordinate differences to the power p: they stay below this (float64 ends at ~1.8e308).
_LARGEST_SUM = 1e308


def _refuse_overflowing_spans(points: np.ndarray, axes: list[str], p: float, what: str) -> None:
    """Refuse coordinates so far apart that the KD-tree's Minkowski sums
    overflow: ``d · span^p`` must stay below 1e308, where ``span`` is the
    largest extent of an axis (spans up to ~1e154 for Euclidean distances in
    2-D); with ``p = inf`` only the spans themselves must be finite."""
    if len(points) < 2:
        return
    with np.errstate(over="ignore", invalid="ignore"):
        spans = points.max(axis=0) - points.min(axis=0)
    axis = int(np.argmax(spans))
    span = float(spans[axis])
    dims = points.shape[1]
    if math.isinf(p):
        fits = math.isfinite(span)
    else:
        fits = span == 0 or (math.isfinite(span) and p * math.log10(span) + math.log10(dims) < math.log10(_LARGEST_SUM))
    if fits:
        return
    rows = sorted({int(np.argmin(points[:, axis])), int(np.argmax(points[:, axis]))})
    top = math.log10(_LARGEST_SUM)
    limit = "finite spans" if math.isinf(p) else f"spans below about {10 ** ((top - math.log10(dims)) / p):.3g}"
    extent = f"{span:.3g}" if math.isfinite(span) else "beyond the float64 range"
    raise DepgraphError(
        "invalid_value",
        f"{what}: {axes[axis]} spans {extent} ({describe_rows(rows)}): distances that far apart overflow the "
        f"Minkowski p={p:g} sums of the KD-tree (they need {limit}); rescale the coordinates",
        rows=rows,
        column=axes[axis],
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
    weight = _numeric(frame[similarity_column], similarity_column, what) if similarity_column else None
    known, dropped, ends = _pairs_known(graph, NodeType.SAMPLE, a, b, unknown, what)
    src, dst = _pair_ends(ends, len(a), known)
    piece = EdgePiece(
        "sample_duplicate_of", src, dst, f"duplicates:{provenance}", None if weight is None else weight[known]
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
    _require_ids(a, source_column, what)
    _require_ids(b, target_column, what)
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
