"""A spec's per-sample columns: which there are, how they are built from a partition and its graph, how each is
written as JSON and read back, and what a column must hold for a reader to take it.

``samples`` holds ``sample_id`` and ``group_id`` and, where the graph knows them, one ``<mode>_group`` column per
block mode (:data:`BLOCK_MODES`), the time columns ``timepoint_id``, ``time_index`` and ``order_rank``, and
``stratum`` (each sample's outcome); :func:`with_attributes` adds sample attributes of the graph. Everything here is
columnar: a column is built, encoded and checked as a whole, never one Python object per sample.

>>> column_bytes(pd.Series([1.0, None, 2.5]))
b'[1.0,null,2.5]'
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from typing import Any

import numpy as np
import orjson
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc

from depgraph.common.arrays import distinct, take_text, text_array, text_series
from depgraph.common.identifiers import apply_id_rules
from depgraph.derivation.partition import Partition
from depgraph.derivation.timeorder import sample_time_columns
from depgraph.errors import DepgraphError, describe_ids
from depgraph.graph.model import StudyGraph
from depgraph.io.columnar import arrow_column
from depgraph.io.jsoncolumns import integers, json_array, numbers, optional_text, scalar_objects
from depgraph.vocab import BLOCK_MODES, NodeType, RelationName, direct_relation

#: Block columns a spec carries when the graph declares the relation.
#: The columns a spec's ``samples`` may hold, in order, with their JSON item type.
SAMPLE_COLUMNS: dict[str, str] = {
    "sample_id": "string",
    "group_id": "string",
    **{f"{m}_group": "string" for m in BLOCK_MODES},
    "timepoint_id": "string",
    "time_index": "number",
    "order_rank": "integer",
    "stratum": "string",
}
REQUIRED_SAMPLE_COLUMNS: tuple[str, ...] = ("sample_id", "group_id")
#: The spec column a metadata table's role column becomes: a table's ``site_id`` is the spec's ``site_group``,
#: its ``outcome_id`` the ``stratum`` (``timepoint_id`` keeps its name).
SPEC_COLUMN_OF_ROLE: dict[str, str] = {
    **{str(direct_relation(m).column): f"{m}_group" for m in BLOCK_MODES},
    "outcome_id": "stratum",
}


def sample_columns(partition: Partition, graph: StudyGraph) -> pd.DataFrame:
    """The spec columns of ``partition``'s samples, in its rows' order: ids and groups, then the block, time and
    stratum columns ``graph`` knows. A partition holding samples ``graph`` lacks is a ``reference`` error (its
    columns would be read at wrong rows)."""
    frame = partition.samples[["sample_id", "group_id"]].copy()
    start, stop = graph.type_range(NodeType.SAMPLE)
    ids = text_array(frame["sample_id"])
    every = graph.key_array.slice(start, stop - start)
    if len(ids) == len(every) and pc.all(pc.equal(ids, every)).as_py():  # the usual case: all samples, in order
        positions = np.arange(len(ids)) + start
    else:
        positions = graph.locate(NodeType.SAMPLE, ids)
        if (positions < 0).any():  # a partition of another graph: its columns would be read at wrong rows
            unknown = ids.filter(pa.array(positions < 0)).to_pylist()
            raise DepgraphError(
                "reference",
                f"the partition holds {len(unknown)} sample(s) the graph lacks: {describe_ids(unknown)}; "
                "pass the graph it was derived from",
                ids=unknown[:50],
            )
    for mode in BLOCK_MODES:
        rel = direct_relation(mode)
        if graph.has_relation(rel.name):
            mine = graph.sample_targets(rel.name)[positions - start]
            frame[f"{mode}_group"] = text_series(take_text(graph.key_array, mine))
    if "timepoint_id" in partition.samples.columns:
        for c in ("timepoint_id", "time_index", "order_rank"):
            frame[c] = partition.samples[c].reset_index(drop=True)
    elif graph.has_relation(RelationName.SAMPLE_COLLECTED_AT_TIMEPOINT):
        target = graph.sample_targets(RelationName.SAMPLE_COLLECTED_AT_TIMEPOINT)[positions - start]
        try:
            time_cols, _, _ = sample_time_columns(graph, target)
        except DepgraphError:
            time_cols = None  # inconsistent time order: time mode and validation report it
        if time_cols is not None:
            for c in ("timepoint_id", "time_index", "order_rank"):
                frame[c] = time_cols[c].reset_index(drop=True)
    stratum = _strata(graph, positions - start)
    if stratum is not None:
        frame["stratum"] = stratum
    return frame.reset_index(drop=True)


def with_attributes(samples: pd.DataFrame, graph: StudyGraph, attributes: Sequence[str] | str) -> pd.DataFrame:
    """``samples`` with the graph's sample ``attributes`` (``"all"``: every one some sample has) as columns; an
    attribute the graph lacks, or whose name cannot be a spec column, is ``invalid_argument``."""
    start, stop = graph.type_range(NodeType.SAMPLE)
    block = graph.attributes.iloc[start:stop]
    available = [c for c in block.columns if block[c].notna().any()]
    wanted = chosen_attributes(attributes, available, samples.columns)
    positions = graph.locate(NodeType.SAMPLE, samples["sample_id"]) - start
    out = samples.copy()
    for name in wanted:
        out[name] = block[name].iloc[positions].reset_index(drop=True)
    return out


def chosen_attributes(attributes: Sequence[str] | str, available: Sequence[str], columns: Iterable[str]) -> list[str]:
    """The attribute columns ``attributes`` names (``"all"``: every one of ``available``, those some sample has),
    for a spec whose sample columns are ``columns``; an attribute not available, or whose name cannot be a spec
    column, is ``invalid_argument``."""
    wanted = list(available) if attributes == "all" else list(attributes)
    unknown = [a for a in wanted if a not in available]
    if unknown:
        raise DepgraphError(
            "invalid_argument",
            f"sample attribute(s) {describe_ids(unknown)} are not in the graph (sample attributes: "
            f"{describe_ids(list(available), 20) or 'none'})",
        )
    taken = set(columns)
    for name in wanted:
        if name in taken or name in SAMPLE_COLUMNS or not re.fullmatch(r"[a-z][a-z0-9_]*", name):
            raise DepgraphError(
                "invalid_argument",
                f"sample attribute {name!r} cannot be a spec column: names are lower-case letters, digits and _, "
                f"and not one of the spec's own columns",
            )
    return wanted


def _strata(graph: StudyGraph, sample_rows: np.ndarray) -> pd.Series | None:
    """Each sample's outcome (its own, else its subject's); several outcomes
    are joined with ``|`` in sorted order; ``None`` where there is none."""
    start, stop = graph.type_range(NodeType.SAMPLE)
    samples, outcomes = [], []
    if graph.has_relation(RelationName.SAMPLE_HAS_OUTCOME):
        src, dst, _ = graph.relation_edges(RelationName.SAMPLE_HAS_OUTCOME)
        samples.append(src - start)
        outcomes.append(dst)
    if graph.has_relation(RelationName.SUBJECT_HAS_OUTCOME):
        s_src, s_dst, _ = graph.relation_edges(RelationName.SAMPLE_BELONGS_TO_SUBJECT)
        o_src, o_dst, _ = graph.relation_edges(RelationName.SUBJECT_HAS_OUTCOME)
        first = np.searchsorted(o_src, s_dst, side="left")  # outcome edges are sorted by subject
        last = np.searchsorted(o_src, s_dst, side="right")
        reps = last - first
        samples.append(np.repeat(s_src - start, reps))
        outcomes.append(o_dst[np.repeat(first, reps) + _ranges(reps)])
    if not samples:
        return None
    if len(samples) == 1 and graph.has_relation(RelationName.SAMPLE_HAS_OUTCOME):
        sample, outcome = samples[0], outcomes[0]  # edges are stored sorted by (sample, outcome), once each
    else:
        pairs = distinct(np.concatenate(samples) * graph.n_nodes + np.concatenate(outcomes))  # by sample, outcome
        sample, outcome = pairs // graph.n_nodes, pairs % graph.n_nodes
    counts = np.bincount(sample, minlength=stop - start)
    single = counts[sample] == 1  # the usual case: one outcome, taken in Arrow (no string per sample)
    target = np.full(stop - start, -1, dtype=np.int64)
    target[sample[single]] = outcome[single]
    strata = take_text(graph.key_array, target)
    if single.all():
        return text_series(strata.take(pa.array(sample_rows)))
    keys = graph.key_values  # several outcomes for some samples: their strata are joined as Python text
    _refuse_joined_outcome_ids(keys, outcome, sample[~single], keys[start + sample[~single]])
    per_sample = strata.to_numpy(zero_copy_only=False).astype(object)
    multi_sample, multi_outcome = sample[~single], outcome[~single]  # contiguous per sample (pairs are sorted)
    cuts = np.flatnonzero(np.diff(multi_sample)) + 1
    for members, who in zip(np.split(multi_outcome, cuts), multi_sample[np.r_[0, cuts]] if len(multi_sample) else [],
                            strict=False):  # fmt: skip
        per_sample[who] = "|".join(sorted(keys[members].tolist()))
    return pd.Series(per_sample[sample_rows], dtype=object)


def _refuse_joined_outcome_ids(keys: np.ndarray, outcomes: np.ndarray, multi: np.ndarray, names: np.ndarray) -> None:
    """A sample's several outcomes are joined with ``|`` into its stratum, so an outcome id holding ``|`` would make
    two different sets of outcomes one stratum (outcomes ``a`` and ``b`` against outcome ``a|b``): ``ambiguity``.
    Outcome ids are few: each distinct one is looked at once."""
    barred = [str(keys[o]) for o in distinct(outcomes).tolist() if "|" in str(keys[o])]
    if barred:
        raise DepgraphError(
            "ambiguity",
            f"outcome id {barred[0]!r} holds '|', which joins a sample's several outcomes into its stratum (sample "
            f"{names[0]!r} has several): two different sets of outcomes would read as one stratum; rename the outcome",
            ids=barred,
        )


def _ranges(lengths: np.ndarray) -> np.ndarray:
    """0..k-1 for each length k, concatenated."""
    ends = np.cumsum(lengths)
    return np.arange(ends[-1] if len(ends) else 0) - np.repeat(ends - lengths, lengths)


def portable_parameters(parameters: dict[str, Any]) -> dict[str, Any]:
    """Builder parameters for the spec, minus lists of raw ids (counts stay). Builders record input
    files by name only, so the same data read from two folders gives the same spec digest."""

    def clean(value: Any) -> Any:
        if isinstance(value, dict):
            return {k: clean(v) for k, v in value.items() if k != "unknown_ids"}
        if isinstance(value, (list, tuple)):
            return [clean(v) for v in value]
        return value

    return orjson.loads(orjson.dumps(clean(parameters), default=str, option=orjson.OPT_SERIALIZE_NUMPY))


def column_to_json(series: pd.Series) -> list[Any]:
    """A sample column as JSON values: ``None`` for missing, ints stay ints."""
    if pd.api.types.is_float_dtype(series.dtype):
        values = series.to_numpy(dtype=np.float64)
        missing = np.isnan(values)
        return [None if m else v for v, m in zip(values.tolist(), missing.tolist(), strict=True)] if missing.any() \
            else values.tolist()  # fmt: skip
    if pd.api.types.is_integer_dtype(series.dtype):  # including nullable Int64
        return series.astype(object).where(series.notna(), None).tolist()
    values = series.to_numpy(dtype=object)
    missing = pd.isna(values)
    if missing.any():
        values = values.copy()
        values[missing] = None
    return values.tolist()


def column_bytes(series: pd.Series) -> bytes:
    """A sample column as compact JSON (what ``orjson.dumps(column_to_json(series))`` gives): from its Arrow
    column (:func:`~depgraph.io.jsoncolumns.json_array`, no Python object per value), so a spec's JSON file, its
    columnar file and their digest spell every value alike; a column of mixed kinds through orjson."""
    arrow = arrow_column(series)
    if arrow is not None:
        return json_array(arrow)
    try:
        return orjson.dumps(series.to_numpy(dtype=object).tolist())
    except TypeError:  # a value orjson does not know (pd.NA, numpy scalars): clean it first
        return orjson.dumps(column_to_json(series))


def read_column(name: str, values: Any, where: str) -> tuple[pd.Series, bool]:
    """A sample column other than the ids, every element checked by its kind; and whether the column spells
    every value as the document does (integers in a number column are read as floats)."""
    kind = SAMPLE_COLUMNS.get(name, "any")
    if kind == "string":  # pandas text backed by Arrow, as every spec holds its text columns
        return text_series(pa.array(optional_text(values, where), type=pa.string(), from_pandas=True)), True
    if kind == "number":
        column, as_floats = numbers(values, where)
        return pd.Series(column), as_floats
    if kind == "integer":
        return pd.Series(integers(values, where, nullable=True, minimum=1 if name == "order_rank" else None)), True
    return pd.Series(scalar_objects(values, where)[0], dtype=object, copy=False), True  # kept as written


def check_ids(samples: pd.DataFrame, where: str) -> None:
    """Sample and group ids are non-empty text (``invalid_argument`` otherwise), in the rows as given."""
    for name in REQUIRED_SAMPLE_COLUMNS:
        if name not in samples.columns:
            raise DepgraphError("invalid_argument", f"{where}: samples need a {name} column")
        try:
            text = pa.array(samples[name].to_numpy(dtype=object), type=pa.string(), from_pandas=True)
        except (pa.ArrowInvalid, pa.ArrowTypeError, UnicodeEncodeError) as exc:  # (a lone surrogate has no UTF-8)
            raise DepgraphError("invalid_argument", f"{where}: samples.{name} must hold text ({exc})") from None
        blank = pc.fill_null(pc.equal(pc.binary_length(text), 0), True)
        if pc.any(blank).as_py():
            i = int(np.flatnonzero(blank.to_numpy(zero_copy_only=False))[0])
            raise DepgraphError(
                "invalid_argument", f"{where}: samples.{name}[{i}] is missing or empty; every sample needs one"
            )
        apply_id_rules(text, f"samples.{name}", where)


def check_columns(samples: pd.DataFrame, where: str) -> None:
    """The columns other than sample and group ids, as a reader would read them back from the file
    (``invalid_argument`` naming the first value it would refuse or read differently): names a spec column
    may have, values JSON carries (no infinity, which a writer spells ``null``; no integer beyond 64 bits;
    no list or object), and the types of the spec's own columns (``order_rank`` whole numbers of at least 1,
    ``time_index`` numbers, block and time ids text)."""
    for name in samples.columns:
        if name in REQUIRED_SAMPLE_COLUMNS:
            continue
        series = samples[name]
        try:
            if not isinstance(name, str) or not re.fullmatch(r"[a-z][a-z0-9_]*", name):
                raise DepgraphError("invalid_argument", f"column {name!r}: names are lower-case letters, digits and _")
            if pd.api.types.is_float_dtype(series.dtype) and np.isinf(series.to_numpy(np.float64)).any():
                i = int(np.flatnonzero(np.isinf(series.to_numpy(np.float64)))[0])
                raise DepgraphError("invalid_argument", f"samples.{name}[{i}] is infinite; JSON has no infinity")
            try:
                values = orjson.loads(column_bytes(series))
            except (TypeError, orjson.JSONEncodeError) as exc:
                raise DepgraphError(
                    "invalid_argument", f"samples.{name} holds a value JSON cannot carry ({exc})"
                ) from None
            read_column(name, values, f"samples.{name}")
        except DepgraphError as exc:
            raise DepgraphError("invalid_argument", f"{where}: {exc.message}", column=name) from None
