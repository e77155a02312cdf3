"""From the metadata table (one row per sample) to a :class:`~depgraph.graph.model.StudyGraph`: :func:`from_metadata`.

The canonical columns (``sample_id``, ``subject_id``, ``batch_id``, ``study_id``, ``timepoint_id``,
``time_index``, ``assay_id``, ``featureset_id``, ``site_id``, ``region_id``, ``platform_id``, ``outcome_id``)
become nodes and edges; other columns are kept as sample attributes. The edges that come from other tables
(kinship, coordinates, duplicate pairs, explicit pairs) are added by :mod:`depgraph.ingest.builders`.

Identifiers are normalised once, here (and in :mod:`depgraph.ingest.pairs`, :mod:`depgraph.ingest.spatial`, by
:mod:`depgraph.common.identifiers`): surrounding blanks are stripped, NaN and blank cells are missing, integers
and integral floats are written without a decimal part (``1``, ``1.0`` and ``"1"`` are the same key; ``"01"`` is
not ``1``). Every problem a table can have raises a :class:`~depgraph.errors.DepgraphError` naming the offending
rows or ids.
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Iterable, Mapping, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from typing import Any, Literal

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc

from depgraph.common.arguments import refuse_options
from depgraph.common.arrays import sorted_codes
from depgraph.common.confusables import confusable_groups
from depgraph.common.identifiers import (
    apply_id_rules,
    check_key_column,
    float_keys,
    key_array,
    normalise_keys,
)
from depgraph.engines import checked_engine, engine_of_table, stage
from depgraph.errors import DepgraphError, DepgraphWarning, describe_ids, describe_rows
from depgraph.graph.assembly import assemble
from depgraph.graph.model import StudyGraph, checked_overrides
from depgraph.graph.pieces import EdgePiece, Keys, NodePiece, many_distinct
from depgraph.ingest.checks import (
    conflicting_values,
    missing_keys,
    numeric_column,
    require_ids,
    with_decimal_points,
)
from depgraph.io.files import describe_source, read_table
from depgraph.io.tables import attribute_values, text_layout
from depgraph.io.textnumbers import typed_attribute
from depgraph.vocab import CANONICAL_COLUMNS, RELATION, RELATIONS, NodeType, RelationName, role_of_column

_BACKGROUND = ThreadPoolExecutor(max_workers=2, thread_name_prefix="depgraph")

#: Above this many precedence edges per timepoint, ties in time_index are not
#: expanded into edges (the order stays in time_index, which derivation reads).
_MAX_PRECEDES_PER_TIMEPOINT = 4


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
    delimiter: str | None = None,
    mapping_complete: bool = False,
    engine: str = "single",
    **engine_options: Any,
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
    delimiter:
        A text file's delimiter, when it must not be read from the header.
    mapping_complete:
        ``columns`` maps every role the table holds (a study file's reviewed
        mapping): the columns it leaves out are attributes by choice. Without
        it, a column whose name looks like a role that nothing maps
        (``Subject_ID`` beside no ``subject_id``:
        :func:`depgraph.vocab.role_of_column`) is an ``unmapped_role_column``
        warning naming the column and the mapping that would declare it.
    engine:
        ``"spark"`` reads ``table`` (a path) with Spark and builds a
        :class:`~depgraph.spark.graph.SparkGraph` (``spark=``: the session);
        a Spark DataFrame is built on Spark whatever ``engine`` says. Spark
        takes ``name`` and ``allow_multi_subject_samples``, and refuses the
        other options by name (:mod:`depgraph.spark.tables`).

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
    engine = engine_of_table(table) or checked_engine(engine)
    if engine != "single":  # built by that engine, with the options given (those left at their default unsaid)
        checked_options(outcome_scope, allow_multi_subject_samples, name)
        chosen = {"name": name, "outcome_scope": outcome_scope, "encoding": encoding, "sheet": sheet,
                  "allow_multi_subject_samples": allow_multi_subject_samples, "delimiter": delimiter,
                  "mapping_complete": mapping_complete}  # fmt: skip
        given = {k: v for k, v in chosen.items() if not _is_default(v, from_metadata.__kwdefaults__[k])}
        return stage(engine, "from_metadata").from_metadata_request(table, columns, **given, **engine_options)
    refuse_options(from_metadata, engine_options, "on the single machine")
    what = describe_source(table, "metadata")
    frame, read_columns, notes = _read_metadata(
        table, columns, what, outcome_scope, allow_multi_subject_samples, encoding=encoding, sheet=sheet,
        delimiter=delimiter,
    )  # fmt: skip
    samples, sorting, keys = _key_columns(frame, what)
    time_index = numeric_column(frame["time_index"], "time_index", what) if "time_index" in frame.columns else None
    attribute_columns = [c for c in frame.columns if c not in CANONICAL_COLUMNS]
    _timepoints_of_times(keys, time_index, what)
    targets = _factorised_targets(keys, outcome_scope)
    sample_keys, order = _sample_keys(samples, sorting, keys, time_index, allow_multi_subject_samples)
    node_pieces = [NodePiece(NodeType.SAMPLE, sample_keys, _sample_attributes(frame, attribute_columns, what))]
    edge_pieces: list[EdgePiece] = []
    timepoints = _target_pieces(targets, sample_keys, order, time_index, node_pieces, edge_pieces)

    history = _history_record(frame, read_columns, notes, attribute_columns)
    look_alike = [note for column, values in keys.items() if (note := _look_alike(values, column, what))]
    if look_alike:
        history.setdefault("warnings", []).extend(look_alike)
    if not mapping_complete:
        history.update(unmapped_roles(attribute_columns, list(frame.columns), what))
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
    return assemble(node_pieces, edge_pieces, name=name, overrides=overrides, history=[history])


def _look_alike(values: pa.Array, column: str, what: str) -> dict[str, Any] | None:
    """The ``confusable_ids`` note of an id column holding ids that look alike (:func:`look_alike_note`); None when
    it holds none."""
    groups = confusable_groups(values)
    return look_alike_note(groups[:10], len(groups), column, what) if groups else None


def look_alike_note(groups: list[list[str]], count: int, column: str, what: str) -> dict[str, Any]:
    """The ``confusable_ids`` note of an id column holding ``count`` sets of ids that look alike (Unicode
    confusables, UTS #39: ``Pat`` with a Cyrillic ``а`` beside ``Pat``), the first ``groups`` given (ten suffice),
    warned about now and kept in the history, whichever engine found them. They stay different ids: nothing says
    they are one entity, but someone must look."""
    shown = "; ".join(" and ".join(ascii(key) for key in group) for group in groups[:3])
    message = (
        f"{column} holds {count} set(s) of ids that look alike but differ (Unicode confusables): {shown}"
        f"{' …' if count > 3 else ''}; they stay different ids: if one {column.removesuffix('_id')} is "
        "written two ways, write it one way"
    )
    warnings.warn(DepgraphWarning("confusable_ids", f"{what}: {message}"), stacklevel=5)
    return {"code": "confusable_ids", "message": message, "count": count,
            "ids": [key for group in groups[:10] for key in group]}  # fmt: skip


def _sample_attributes(frame: pd.DataFrame, attribute_columns: list[str], what: str) -> pd.DataFrame | None:
    """The samples' attribute columns (every column that is not canonical), one row per table row; an infinite
    number is refused (``invalid_value``): no graph file holds one, so it could not be written."""
    if not attribute_columns:
        return None
    for column in attribute_columns:
        if pd.api.types.is_float_dtype(frame[column].dtype):
            infinite = np.flatnonzero(np.isinf(frame[column].to_numpy(dtype=np.float64, na_value=np.nan)))
            if len(infinite):
                raise DepgraphError(
                    "invalid_value",
                    f"{what}: attribute {column!r} is infinite in {describe_rows(infinite)}; an attribute is a finite "
                    "number",
                    column=column,
                    rows=infinite[:5].tolist(),
                )
    return pd.DataFrame({c: attribute_values(frame[c]) for c in attribute_columns}).reset_index(drop=True)


def _history_record(
    frame: pd.DataFrame, read_columns: list[str], notes: list[dict[str, Any]], attribute_columns: list[str]
) -> dict[str, Any]:
    """The ``from_metadata`` step of the history: rows and columns read, an outcome read from ``outcome_value``,
    and, without any grouping column, the attribute columns that look like ids."""
    history: dict[str, Any] = {"step": "from_metadata", "rows": len(frame), "columns": read_columns}
    if notes:
        history["outcome_id_from"] = "outcome_value"
        history["warnings"] = notes
    if not any(c in frame.columns for c in GROUPING_COLUMNS):
        history["no_grouping_column"] = {"id_like_columns": id_like_columns(frame, attribute_columns)}
    return history


def _read_metadata(
    table: Any,
    columns: Mapping[str, str] | None,
    what: str,
    outcome_scope: str,
    allow_multi_subject_samples: bool,
    *,
    encoding: str | None,
    sheet: str | int | None,
    delimiter: str | None = None,
) -> tuple[pd.DataFrame, list[str], list[dict[str, Any]]]:
    """The metadata table read, its columns mapped and checked (a sample_id column, some rows), the options checked;
    with the columns as read and the notes of an outcome read from ``outcome_value``. Numbers of a text file are
    read here (decimal commas included; attribute columns typed as pandas would type them)."""
    frame = read_table(table, "metadata", encoding=encoding, sheet=sheet, delimiter=delimiter)
    layout = text_layout(frame)
    frame = _apply_column_map(frame, columns, what)
    if "sample_id" not in frame.columns:
        raise DepgraphError(
            "schema",
            f"{what} has no sample_id column (columns: {describe_ids(frame.columns, 12)}); "
            f"map yours with columns={{'sample_id': 'your_column'}}",
            column="sample_id",
        )
    if len(frame) == 0:
        raise DepgraphError("empty_input", f"{what} has no rows")
    checked_options(outcome_scope, allow_multi_subject_samples)
    frame = frame.reset_index(drop=True)
    read_columns = list(frame.columns)
    notes: list[dict[str, Any]] = []
    if "outcome_value" in frame.columns and "outcome_id" not in frame.columns:
        frame, notes = _outcome_from_value(frame, what)
    if layout is not None:  # a text file: numbers in it are text until read here
        frame = with_decimal_points(frame, ["time_index"], what, layout)
        for column in [c for c in frame.columns if c not in CANONICAL_COLUMNS]:
            frame[column] = typed_attribute(frame[column], layout["decimal"])
    return frame, read_columns, notes


def _key_columns(
    frame: pd.DataFrame, what: str
) -> tuple[pa.Array, Future[tuple[np.ndarray, np.ndarray]], dict[str, pa.Array]]:
    """The id columns as Arrow keys (checked: no missing sample id, no control characters, no Unicode twins, no
    two types for one sample key), and the ranking of the sample ids, started on the second core."""
    id_columns = [c for c in CANONICAL_COLUMNS if c in frame.columns and c != "time_index"]
    for column in id_columns:
        check_key_column(frame[column], column, what)
    samples = key_array(frame["sample_id"], "sample_id", what)  # Arrow text, null where missing
    require_ids(samples, "sample_id", what)
    # Ranking a million ids is the longest single step: it runs on a second
    # core (numpy and Arrow release the GIL) while the other columns are read.
    sorting = _BACKGROUND.submit(sorted_codes, samples)
    keys = {c: samples if c == "sample_id" else key_array(frame[c], c, what) for c in id_columns}
    for column, values in keys.items():
        apply_id_rules(values, column, what)
    _refuse_type_collisions(frame["sample_id"], samples, "sample_id", what)
    return samples, sorting, keys


def _timepoints_of_times(keys: dict[str, pa.Array], time_index: np.ndarray | None, what: str) -> None:
    """A time_index alone names its timepoints (time 3 is timepoint "3"), added to ``keys``; a time_index beside
    a missing timepoint_id is a ``missing_id`` error."""
    if time_index is None:
        return
    if "timepoint_id" not in keys:
        keys["timepoint_id"] = pa.array(float_keys(time_index), type=pa.string(), from_pandas=True)
    orphan = ~np.isnan(time_index) & missing_keys(keys["timepoint_id"])
    if orphan.any():
        rows = np.flatnonzero(orphan)
        raise DepgraphError(
            "missing_id",
            f"{what}: time_index is given without a timepoint_id in {describe_rows(rows)}",
            rows=rows.tolist(),
            column="timepoint_id",
        )


def _factorised_targets(keys: Mapping[str, pa.Array], outcome_scope: str) -> list[tuple[str, np.ndarray, Future[Keys]]]:
    """Per sample relation with a column: the relation, the rows that name a target, and the targets' keys —
    factorised now or, when they hold many distinct ids, ranked in the background."""
    targets: list[tuple[str, np.ndarray, Future[Keys]]] = []
    for rel in RELATIONS:
        column = rel.column
        if column is None or column not in keys or rel.source != NodeType.SAMPLE:
            continue
        if column == "outcome_id" and outcome_scope == "subject":
            continue
        present = ~missing_keys(keys[column])
        if present.any():
            values = keys[column] if present.all() else keys[column].filter(pa.array(present))
            targets.append((rel.name, present, _factorised(values)))
    return targets


def _sample_keys(
    samples: pa.Array,
    sorting: Future[tuple[np.ndarray, np.ndarray]],
    keys: Mapping[str, pa.Array],
    time_index: np.ndarray | None,
    allow_multi_subject_samples: bool,
) -> tuple[Keys, np.ndarray | None]:
    """The sample ids factorised once (shared by every sample-side edge), from one ranking that also finds rows
    repeating a sample (which must agree); and the rows in sample-id order when each row is its own sample
    (``None`` otherwise)."""
    codes, first = sorting.result()
    n = len(samples)
    if len(first) != n:
        repeated = np.bincount(codes)[codes] > 1
        _refuse_conflicting_rows(
            _as_series(samples),
            {c: _as_series(k) for c, k in keys.items()},
            time_index,
            repeated,
            allow_multi_subject_samples,
        )
        return Keys(codes, samples.take(pa.array(first)), np.arange(len(first))), None
    order = np.empty(n, dtype=np.int64)  # rows in sample-id order
    order[codes] = np.arange(n)
    return Keys.distinct(samples, order), order


def _target_pieces(
    targets: list[tuple[str, np.ndarray, Future[Keys]]],
    sample_keys: Keys,
    order: np.ndarray | None,
    time_index: np.ndarray | None,
    node_pieces: list[NodePiece],
    edge_pieces: list[EdgePiece],
) -> tuple[Keys, np.ndarray] | None:
    """The target nodes and the sample → target edges of each target column, appended to the pieces; returns the
    distinct (timepoint, time_index) pairs when the table gives times."""
    timepoints: tuple[Keys, np.ndarray] | None = None
    for relation, present, factorising in targets:
        target_keys = factorising.result()
        if RELATION[relation].target == NodeType.TIMEPOINT and time_index is not None:
            timepoints = _distinct_times(target_keys, time_index[present])
            times = pd.DataFrame({"time_index": timepoints[1]})
            node_pieces.append(NodePiece(NodeType.TIMEPOINT, timepoints[0], times))
        else:
            node_pieces.append(NodePiece(RELATION[relation].target, target_keys))
        if order is None:
            edge_pieces.append(_distinct_pairs(relation, sample_keys.take(present), target_keys))
        elif present.all():  # one target per sample: the sample sort orders these edges too
            edge_pieces.append(EdgePiece(relation, sample_keys, target_keys, "metadata", source_order=order))
        else:
            row_of = np.cumsum(present) - 1
            rows = row_of[order[present[order]]]
            edge_pieces.append(
                EdgePiece(relation, sample_keys.take(present), target_keys, "metadata", source_order=rows)
            )
    return timepoints


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
    counts = []
    for column in columns:
        values = frame[column]
        dtype = values.dtype
        textual = pd.api.types.is_string_dtype(dtype) or pd.api.types.is_integer_dtype(dtype)
        if textual and not pd.api.types.is_bool_dtype(dtype):
            counts.append((column, int(values.notna().sum()), int(values.nunique(dropna=True))))
    return id_like_from_counts(counts)


def id_like_from_counts(counts: Iterable[tuple[str, int, int]]) -> list[str]:
    """The columns that look like identifiers, from each text or integer column's ``(name, values present, distinct
    values)`` (the rule of :func:`id_like_columns`, which the Spark engine counts in Spark).

    >>> id_like_from_counts([("patient", 4, 3), ("sex", 4, 2), ("visit", 9, 3)])
    ['patient', 'visit']
    """
    found = [
        (distinct, c) for c, present, distinct in counts if 3 <= distinct < present and distinct >= math.isqrt(present)
    ]
    return [c for _, c in sorted(found, key=lambda f: (-f[0], f[1]))]


def unmapped_roles(attribute_columns: list[str], columns: Sequence[str], what: str) -> dict[str, Any]:
    """The attribute columns whose names look like a role that no column declares (``Subject_ID`` where there is no
    ``subject_id``), each warned about (``unmapped_role_column``), as the history records them:
    ``{"unmapped_role_columns": {column: role}}`` (empty when there are none). A family column is recorded too
    (validation asks for kinship beside it); no mapping declares a family, so it is not warned about here. Both
    engines call it."""
    found: dict[str, str] = {}
    for column in attribute_columns:
        role = role_of_column(column)
        if role is not None and (role == "family" or role not in columns) and role not in found.values():
            found[column] = role
    for column, role in found.items():
        if role in CANONICAL_COLUMNS:
            warnings.warn(DepgraphWarning("unmapped_role_column", unmapped_role_message(column, role, what)),
                          stacklevel=3)  # fmt: skip
    return {"unmapped_role_columns": found} if found else {}


def unmapped_role_message(column: str, role: str, what: str = "metadata") -> str:
    """What is said of a column that looks like ``role`` and declares nothing.

    >>> unmapped_role_message("Subject_ID", "subject_id")
    "metadata: column 'Subject_ID' looks like subject_id but is not mapped: ... columns={'subject_id': 'Subject_ID'}"
    """
    return (
        f"{what}: column {column!r} looks like {role} but is not mapped: it is kept as a sample attribute and declares "
        f"nothing; map it with columns={{{role!r}: {column!r}}}"
    )


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


def _is_default(value: Any, default: Any) -> bool:
    """``value`` is the option's ``default`` itself, in value and kind (``0`` is not ``False``)."""
    return value is default or (type(value) is type(default) and value == default)


def checked_options(outcome_scope: Any, allow_multi_subject_samples: Any, name: Any = None) -> None:
    """``from_metadata``'s options whose values every engine checks alike: ``outcome_scope`` one of its two,
    ``allow_multi_subject_samples`` a boolean (never ``"no"``, which Python reads as true), ``name`` text."""
    if outcome_scope not in ("sample", "subject"):
        raise DepgraphError("invalid_argument", f"outcome_scope must be 'sample' or 'subject', not {outcome_scope!r}")
    checked_overrides({"allow_multi_subject_samples": allow_multi_subject_samples}, "invalid_value", "from_metadata:")
    if name is not None and not isinstance(name, str):
        raise DepgraphError("invalid_argument", f"the graph's name is text, not {name!r}")


def _apply_column_map(frame: pd.DataFrame, columns: Mapping[str, str] | None, what: str = "metadata") -> pd.DataFrame:
    return frame.rename(columns=checked_column_map(columns, list(frame.columns), what))


def checked_column_map(columns: Mapping[str, str] | None, present: list[str], what: str = "metadata") -> dict[str, str]:
    """``columns`` (canonical name -> the table's column) checked against the table's ``present`` columns, as the
    renaming it asks for (the table's column -> canonical name): every engine's metadata reader calls it."""
    if columns is not None and not isinstance(columns, Mapping):
        raise DepgraphError(
            "invalid_argument",
            f"columns= maps canonical names to your columns, e.g. {{'subject_id': 'patient'}}, not {columns!r}",
        )
    if not columns:
        return {}
    unknown = [c for c in columns if c not in CANONICAL_COLUMNS]
    if unknown:
        raise DepgraphError(
            "invalid_argument",
            f"columns= maps unknown canonical name(s) {describe_ids(unknown)}; "
            f"canonical columns are {describe_ids(CANONICAL_COLUMNS, 20)}",
        )
    absent = [user for user in columns.values() if user not in present]
    if absent:
        raise DepgraphError(
            "schema",
            f"{what} has no column {describe_ids([repr(a) for a in absent])} (columns: {describe_ids(present, 12)})",
            columns=absent,
        )
    targets: dict[str, list[str]] = {}
    for canonical, user in columns.items():
        targets.setdefault(user, []).append(canonical)
    twice = {user: names for user, names in targets.items() if len(names) > 1}
    if twice:  # renamed once, the last name would win and the other relation vanish without a word
        user, names = next(iter(twice.items()))
        raise DepgraphError(
            "invalid_argument",
            f"columns= maps the column {user!r} onto {' and '.join(names)}; a column holds one kind of id: map each "
            "canonical column to a column of its own",
            columns=[user],
        )
    clash = [c for c, user in columns.items() if c in present and user != c]
    if clash:
        raise DepgraphError(
            "ambiguity",
            f"metadata already has a {describe_ids(clash)} column and columns= maps another column onto it",
            columns=clash,
        )
    return {user: canonical for canonical, user in columns.items()}


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
            shown = describe_ids(pd.unique(frame.loc[frame["sample"] == first, "value"].dropna()))
            raise conflicting_values("metadata", column, bad, shown, rows_all[ids == first])


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
    return EdgePiece(RelationName.SUBJECT_HAS_OUTCOME, pairs["s"], pairs["o"], "metadata")


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
        return EdgePiece(RelationName.TIMEPOINT_PRECEDES, pd.Series(names[:-1]), pd.Series(names[1:]), "metadata"), None
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
        EdgePiece(
            RelationName.TIMEPOINT_PRECEDES, pd.Series(np.concatenate(src)), pd.Series(np.concatenate(dst)), "metadata"
        ),
        None,
    )
