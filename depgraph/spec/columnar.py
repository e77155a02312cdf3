"""The split spec's columnar form: the same document as the JSON file, its sample columns and fold positions in
Parquet (:mod:`depgraph.io.columnar`)::

    spec.dgspec/
      manifest.json     every field of the JSON document but ``samples``; ``folds`` without its splits' ``test``
                        and ``excluded`` positions; and ``tables``
      samples.parquet   the sample columns, in the spec's column order and row order (sample-id byte order)
      folds.parquet     with folds: one row per tested or excluded sample of each split

``samples.parquet`` holds text as UTF-8 strings, ``time_index`` as 64-bit floats, ``order_rank`` and integer
attributes as 64-bit integers, booleans as booleans, null where a value is missing. ``folds.parquet`` has the columns
``split`` (the split's index in ``folds.splits``), ``role`` (``test`` or ``excluded``), ``position`` (the sample's
0-based row in ``samples.parquet``) and ``sample_id`` (the id at that row, to join by id), ordered by split, then
role (test first), then position; every other sample of a split trains.

The digest is defined on the content, not on the bytes of either form: it is the digest of the JSON document this
file holds, so the JSON and the columnar form of one spec carry the same digest, and a reader recomputes it from
the Parquet columns (:func:`~depgraph.io.jsoncolumns.json_array` spells them exactly as the JSON writer does) and
refuses a file whose content does not match. Every element of every column is checked as the JSON reader checks
them, then everything :func:`~depgraph.spec.reading.checked_spec` checks.

>>> import pandas as pd, tempfile, pathlib
>>> from depgraph.spec.model import Constraint, SplitSpec
>>> spec = SplitSpec.build(pd.DataFrame({"sample_id": ["S1", "S2"], "group_id": ["a", "b"]}),
...                        constraint=Constraint(mode="subject"), recommended_resampling="grouped_cv")
>>> path = pathlib.Path(tempfile.mkdtemp()) / "spec.dgspec"
>>> write_columnar_spec(spec, path)
>>> sorted(p.name for p in path.iterdir())
['manifest.json', 'samples.parquet']
>>> spec_from_columnar(path).digest == spec.digest
True
"""

from __future__ import annotations

import os
from typing import Any

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc

from depgraph.common.arrays import text_series
from depgraph.errors import DepgraphError, describe_ids
from depgraph.io.columnar import (
    arrow_column,
    integer_column,
    number_column,
    positions_type,
    read_columnar,
    scalar_column,
    text_column,
    write_columnar,
)
from depgraph.io.jsoncolumns import json_array
from depgraph.io.schemas import check_document
from depgraph.spec.columns import REQUIRED_SAMPLE_COLUMNS, SAMPLE_COLUMNS
from depgraph.spec.digest import spec_digest
from depgraph.spec.model import ROLES, FoldPlan, SplitSpec
from depgraph.spec.reading import checked_spec, read_folds, verifying_key

SAMPLES = "samples.parquet"
FOLDS = "folds.parquet"
#: The columns of folds.parquet, in order.
FOLD_COLUMNS = ("split", "role", "position", "sample_id")
#: The sample columns of few distinct values (blocks, timepoints, strata): read as Parquet stores them, encoded.
BLOCK_TEXT = frozenset(name for name, kind in SAMPLE_COLUMNS.items() if kind == "string") - set(REQUIRED_SAMPLE_COLUMNS)
#: folds.parquet's roles, in the order rows list them within a split.
FOLD_ROLES = (ROLES[1], ROLES[2])  # test, excluded


# --------------------------------------------------------------------------- writing
def write_columnar_spec(spec: SplitSpec, path: str | os.PathLike[str]) -> None:
    """Write ``spec`` in the columnar form at ``path`` (a directory, written whole)."""
    manifest, tables = spec_tables(spec)
    write_columnar(path, manifest, tables)


def spec_tables(spec: SplitSpec) -> tuple[dict[str, Any], dict[str, pa.Table]]:
    """The manifest (without ``tables``) and the Parquet tables of ``spec``'s columnar form."""
    manifest = spec.envelope()
    samples = {name: _arrow(spec.samples[name], name) for name in spec.samples.columns}
    tables = {SAMPLES: pa.table(samples)}
    if spec.folds is not None:
        manifest["folds"] = spec.folds.model_dump(mode="json")  # the splits without their positions
        tables[FOLDS] = _fold_table(spec.folds, samples["sample_id"])
    return manifest, tables


def _arrow(series: pd.Series, name: str) -> pa.Array:
    arrow = arrow_column(series)
    if arrow is None:
        kinds = sorted({type(v).__name__ for v in series.dropna().tolist()[:1000]})
        raise DepgraphError(
            "invalid_argument",
            f"samples.{name} mixes values of several kinds ({', '.join(kinds)}); a Parquet column holds one: make "
            "the column one kind of value, or write the spec as JSON",
            column=name,
        )
    return arrow.cast(pa.string()) if pa.types.is_null(arrow.type) else arrow  # a column of nulls only: text


def _fold_table(plan: FoldPlan, sample_ids: pa.Array) -> pa.Table:
    splits, roles, positions = [], [], []
    for i, split in enumerate(plan.splits):
        for role, at in zip(FOLD_ROLES, (split.test, split.excluded), strict=True):
            splits.append(np.full(len(at), i, dtype=np.int32))
            roles.append(np.full(len(at), FOLD_ROLES.index(role), dtype=np.int8))
            positions.append(np.asarray(at, dtype=np.int64))
    position = np.concatenate(positions) if positions else np.empty(0, np.int64)
    role = pa.DictionaryArray.from_arrays(
        pa.array(np.concatenate(roles) if roles else np.empty(0, np.int8)), pa.array(FOLD_ROLES)
    )
    return pa.table(
        {
            "split": pa.array(np.concatenate(splits) if splits else np.empty(0, np.int32)),
            "role": role,
            "position": pa.array(position).cast(positions_type(len(sample_ids))),
            "sample_id": sample_ids.take(pa.array(position)),
        }
    )


# --------------------------------------------------------------------------- reading
def spec_from_columnar(
    path: str | os.PathLike[str], source: str | None = None, verify_key: str | bytes | None = None
) -> SplitSpec:
    """A SplitSpec from its columnar file, with every check :func:`~depgraph.spec.files.read_spec` makes of a
    JSON file: the manifest's format, version and envelope (jsonschema), every element of every column and of
    the fold table, the digest recomputed from the columns, the signature with ``verify_key``, and what the
    content says of itself."""
    source = source or f"spec file {str(path)!r}"
    verify_key = verifying_key(verify_key)
    found = read_columnar(path, source, dictionaries=BLOCK_TEXT)
    manifest, tables = found.manifest, found.tables
    _refuse_other_tables(manifest, tables, source)
    samples_table = tables[SAMPLES]
    doc = check_document(_as_document(manifest, samples_table.column_names, source), "split-spec", source)
    samples, arrays = _samples_frame(samples_table, source)
    n = len(samples)
    splits = _split_positions(tables.get(FOLDS), doc.get("folds"), arrays["sample_id"], n, source)
    folds = read_folds(doc.get("folds"), splits, n, source)
    envelope = {k: v for k, v in doc.items() if k not in ("samples", "folds", "$comment") and not k.startswith("x-")}
    written = dict(manifest)
    if isinstance(manifest.get("folds"), dict):  # as written, with the positions the fold table holds
        listed = manifest["folds"]["splits"]
        written["folds"] = {**manifest["folds"], "splits": [{**s, **at} for s, at in zip(listed, splits, strict=True)]}
    encoded = {name: json_array(column) for name, column in arrays.items()}
    expected = spec_digest(written, encoded)
    written["samples"] = dict.fromkeys(samples_table.column_names)
    spec = checked_spec(
        envelope, samples, folds, written=written, expected=expected, exact=True,
        text=(arrays["sample_id"], arrays["group_id"]), source=source, verify_key=verify_key,
    )  # fmt: skip
    spec.cache_column_json(encoded)  # spelt once: the spec's digest and its next file reuse them
    return spec


def _refuse_other_tables(manifest: dict[str, Any], tables: dict[str, pa.Table], source: str) -> None:
    """A spec's tables are samples.parquet and, when the manifest has folds, folds.parquet: no other."""
    wanted = {SAMPLES, *([FOLDS] if manifest.get("folds") is not None else [])}
    if set(tables) != wanted:
        missing, other = sorted(wanted - set(tables)), sorted(set(tables) - wanted)
        raise DepgraphError(
            "schema",
            f"{source}: its tables are {describe_ids(sorted(tables))}; a spec"
            + (" with folds" if FOLDS in wanted else " without folds")
            + f" has {describe_ids(sorted(wanted))}"
            + (f" (missing {describe_ids(missing)})" if missing else "")
            + (f" (not a spec's: {describe_ids(other)})" if other else ""),
        )


def _as_document(manifest: dict[str, Any], columns: list[str], source: str) -> dict[str, Any]:
    """The JSON document the manifest stands for, its long arrays empty (what jsonschema checks)."""
    if "samples" in manifest:
        raise DepgraphError("schema", f"{source}: the manifest holds 'samples': they are in {SAMPLES}")
    doc = {**manifest, "samples": {name: [] for name in columns}}
    folds = manifest.get("folds")
    if isinstance(folds, dict) and isinstance(folds.get("splits"), list):
        for i, split in enumerate(folds["splits"]):
            if isinstance(split, dict) and {"test", "excluded"} & set(split):
                raise DepgraphError(
                    "schema", f"{source}: the manifest's folds.splits[{i}] holds positions: they are in {FOLDS}"
                )
        doc["folds"] = {**folds, "splits": [{**s, "test": [], "excluded": []} for s in folds["splits"]]}
    return doc


def _samples_frame(table: pa.Table, source: str) -> tuple[pd.DataFrame, dict[str, pa.Array]]:
    """The sample columns, every element checked, as a frame (text stays in Arrow: no Python string per id);
    and each column as the checked Arrow array the digest is computed from."""
    arrays: dict[str, pa.Array] = {}
    for name in table.column_names:
        where = f"{source}: samples.{name}"
        kind = SAMPLE_COLUMNS.get(name, "any")
        column = table.column(name)
        if name in REQUIRED_SAMPLE_COLUMNS:  # ids as plain text, even when a writer dictionary-encoded them
            ids = text_column(column, where, non_empty=True)
            arrays[name] = ids.dictionary_decode() if pa.types.is_dictionary(ids.type) else ids
        elif kind == "string":
            arrays[name] = text_column(column, where, nullable=True)
        elif kind == "number":
            arrays[name] = number_column(column, where)
        elif kind == "integer":
            arrays[name] = integer_column(column, where, nullable=True, minimum=1 if name == "order_rank" else None)
        else:
            arrays[name] = scalar_column(column, where)
    for name in REQUIRED_SAMPLE_COLUMNS:
        if name not in arrays:
            raise DepgraphError("schema", f"{source}: {SAMPLES} lacks the {name} column")
    frame = pd.DataFrame({name: _pandas(column) for name, column in arrays.items()})
    return frame, arrays


def _pandas(column: pa.Array) -> pd.Series:
    """A checked column as the spec's frame holds it: text as pandas text (Arrow-backed), integers as ``Int64``,
    floats as float64 (NaN where missing), booleans with gaps as objects."""
    if pa.types.is_integer(column.type):
        return pd.Series(column.to_pandas(types_mapper={pa.int64(): pd.Int64Dtype()}.get))
    if pa.types.is_dictionary(column.type) or pa.types.is_string(column.type):
        return text_series(column)  # decoded: the frame holds every spec's text columns alike
    return pd.Series(column.to_pandas())


def _split_positions(
    table: pa.Table | None, plan: Any, sample_ids: pa.Array, n: int, source: str
) -> list[dict[str, Any]]:
    """Each split of the manifest's plan with its ``test`` and ``excluded`` positions from folds.parquet, every
    row checked: its split one of the plan's, its role test or excluded, its position a row of samples.parquet
    naming the sample its sample_id names, rows in order (split, role, position) without repeats."""
    if plan is None or table is None:
        return []
    where = f"{source}: {FOLDS}"
    if tuple(table.column_names) != FOLD_COLUMNS:
        raise DepgraphError("schema", f"{where} holds the columns {table.column_names}; expected {list(FOLD_COLUMNS)}")
    listed = plan["splits"]
    split = integer_column(table.column("split"), f"{where}: split", minimum=0, maximum=len(listed) - 1)
    role_text = text_column(table.column("role"), f"{where}: role")
    role = pc.index_in(role_text, value_set=pa.array(FOLD_ROLES))
    if role.null_count:
        i = int(np.flatnonzero(role.is_null().to_numpy(zero_copy_only=False))[0])
        raise DepgraphError("schema", f"{where}: role[{i}] is {role_text[i].as_py()!r}; roles are test and excluded")
    position = integer_column(table.column("position"), f"{where}: position", minimum=0, maximum=n - 1)
    named = text_column(table.column("sample_id"), f"{where}: sample_id")
    split_at, role_at, at = (
        np.asarray(a.to_numpy(zero_copy_only=False), dtype=np.int64) for a in (split, role, position)
    )
    if len(at):
        mismatch = pc.invert(pc.equal(named, sample_ids.take(position)))
        if pc.any(mismatch).as_py():
            i = int(np.flatnonzero(mismatch.to_numpy(zero_copy_only=False))[0])
            raise DepgraphError(
                "schema",
                f"{where}: row {i} names sample {named[i].as_py()!r} at position {at[i]}, which holds "
                f"{sample_ids[int(at[i])].as_py()!r}",
            )
        order = (split_at * 2 + role_at) * n + at
        steps = np.flatnonzero(np.diff(order) <= 0)
        if len(steps):
            raise DepgraphError(
                "schema", f"{where}: row {int(steps[0]) + 1} is out of order or repeats one; rows are ordered by "
                "split, role (test first) and position, each once",
            )  # fmt: skip
    bounds = np.searchsorted(split_at * 2 + role_at, np.arange(2 * len(listed) + 1))
    return [
        {**entry, "test": at[bounds[2 * i] : bounds[2 * i + 1]], "excluded": at[bounds[2 * i + 1] : bounds[2 * i + 2]]}
        for i, entry in enumerate(listed)
    ]
