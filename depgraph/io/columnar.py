"""Columnar files: a directory holding a JSON manifest and Parquet tables, written whole and read with every
element checked.

A split spec or a study graph can be written as one JSON document or in this columnar form: the same document, its
long arrays (sample columns, fold positions, node keys, edge lists) moved into Parquet tables, which pandas, R
(``arrow::read_parquet``), Spark and DuckDB read natively and depgraph reads without a Python object per id::

    spec.dgspec/                 a split spec (a study graph: graph.dggraph/)
      manifest.json              the document without its long arrays, and "tables": what each table holds
      samples.parquet            one Parquet file per table, or a directory of Parquet parts (as Spark writes)
      folds.parquet

The manifest's ``tables`` maps each table's path (relative, ending ``.parquet``) to its row count and its column
names in order. A reader refuses, naming it, a directory without a manifest, a table the manifest lists and the
directory lacks, a file the manifest does not list (hidden files and Hadoop's ``_SUCCESS`` markers aside), a file
that is not Parquet, and a table whose rows or columns are not those the manifest says; each format's reader then
checks every element of every column (:func:`text_column`, :func:`integer_column`, :func:`number_column`…), as the
JSON readers check every element of a JSON array, naming the first offender the same way::

    spec file 'spec.dgspec': samples.sample_id[10] is ''; values are non-empty text

A columnar file is written whole (:func:`depgraph.io.outputs.atomic_tree`): staged in a temporary directory and
renamed into place, replacing an earlier columnar file but never any other directory.
"""

from __future__ import annotations

import os
from collections.abc import Collection
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import Any

import numpy as np
import orjson
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from depgraph.errors import DepgraphError
from depgraph.formats import GRAPH_FORMAT, SPEC_FORMAT
from depgraph.io.files import read_json
from depgraph.io.outputs import COLUMNAR_MANIFEST, STDOUT, TABLES, Outputs, atomic_tree, check_suffix, hidden
from depgraph.io.schemas import json_kind

#: The columnar form's suffix for each kind of document.
COLUMNAR_SUFFIXES: dict[str, str] = {"split-spec": ".dgspec", "study-graph": ".dggraph"}
#: Parquet files are written with Snappy compression: every Parquet reader (R's arrow, Spark, DuckDB) reads it.
COMPRESSION = "snappy"


@dataclass(frozen=True)
class Columnar:
    """A columnar file read back: its manifest (without ``tables``) and its tables by path."""

    manifest: dict[str, Any]
    tables: dict[str, pa.Table]


def is_columnar(path: str | os.PathLike[str]) -> bool:
    """Whether ``path`` names a columnar file to read: an existing directory (a reader then says what is wrong
    with one that is not a columnar file)."""
    return isinstance(path, (str, os.PathLike)) and str(path) != STDOUT and os.path.isdir(path)


def columnar_output(path: str | os.PathLike[str], kind: str) -> bool:
    """Whether an output ``path`` asks for the columnar form of a ``kind`` document: named with its suffix
    (``spec.dgspec``, ``graph.dggraph``)."""
    return Path(str(path)).suffix.lower() == COLUMNAR_SUFFIXES[kind]


def write_columnar(path: str | os.PathLike[str], manifest: dict[str, Any], tables: dict[str, pa.Table]) -> None:
    """Write a columnar file: each table as Parquet under its relative path, and ``manifest`` with the tables
    listed; the directory is staged whole and put in place atomically (:func:`~depgraph.io.outputs.atomic_tree`)."""
    listed = {name: {"rows": table.num_rows, "columns": table.column_names} for name, table in tables.items()}
    with atomic_tree(path) as staged:
        for name in tables:
            (staged / name).parent.mkdir(parents=True, exist_ok=True)
        # Parquet writes one file on one thread, outside the GIL: a graph's fifteen tables are written two at a
        # time (half the time on two cores); each file's bytes are the same whatever the order
        with ThreadPoolExecutor(max_workers=min(len(tables), os.cpu_count() or 1) or 1) as pool:
            writes = [pool.submit(_write_table, table, staged / name) for name, table in tables.items()]
            try:
                for written in writes:
                    written.result()
            except BaseException:  # a table that cannot be written, or an interrupt: start no other; the pool
                for written in writes:  # waits for those running before the staged directory is removed
                    written.cancel()
                raise
        document = {**manifest, TABLES: listed}
        (staged / COLUMNAR_MANIFEST).write_bytes(orjson.dumps(document, option=orjson.OPT_INDENT_2) + b"\n")


def _write_table(table: pa.Table, target: Path) -> None:
    pq.write_table(
        table, target, compression=COMPRESSION, use_dictionary=_dictionary_columns(table),
        column_encoding=_delta_columns(table), write_statistics=_statistics_columns(table),
    )  # fmt: skip


def _statistics_columns(table: pa.Table) -> list[str]:
    """The columns whose minimum and maximum Parquet records (what Spark and DuckDB skip row groups by): numbers,
    which cost nothing to measure; not text, where finding the least and greatest of a million ids is a fifth
    of the time to write them and no reader of these files filters on a range of ids."""
    return [field.name for field in table.schema if pa.types.is_integer(field.type) or pa.types.is_floating(field.type)]


def _dictionary_columns(table: pa.Table) -> list[str]:
    """The columns Parquet dictionary-encodes: text with few distinct values (batches, sites, provenance), where
    it makes the file small and fast to read; never ids, where it costs time and saves nothing."""
    chosen = []
    for name in table.column_names:
        column = table.column(name)
        few = _is_text(column.type) and pc.count_distinct(column.slice(0, 10_000)).as_py() <= 1_000
        if pa.types.is_dictionary(column.type) or few:
            chosen.append(name)
    return chosen


def _delta_columns(table: pa.Table) -> dict[str, str]:
    """Integer columns (edge endpoints, fold and sample positions: mostly rising) stored as differences
    (Parquet's DELTA_BINARY_PACKED, which Arrow, R's arrow and Spark read): at 10⁶ samples a graph's edge tables
    are a fifth of their plain size and read in two thirds of the time."""
    return {name: "DELTA_BINARY_PACKED" for name in table.column_names if pa.types.is_integer(table.column(name).type)}


def positions_type(count: int) -> pa.DataType:
    """The integer type of positions into ``count`` rows: 32 bits where they fit (half the bytes to write and
    read), else 64."""
    return pa.int32() if count < 2**31 else pa.int64()


def read_columnar(path: str | os.PathLike[str], source: str, dictionaries: Collection[str] = ()) -> Columnar:
    """The manifest and the tables of the columnar file at ``path``, the directory held to what its manifest says
    (``source`` names the file in messages: ``"spec file 'spec.dgspec'"``). Columns named in ``dictionaries``
    (text of few distinct values) are read dictionary-encoded, as Parquet stores them: no string per row."""
    directory = Path(path)
    manifest, listed = read_listing(directory, source)
    tables = {name: _read_table(directory / name, name, shape, source, dictionaries) for name, shape in listed.items()}
    return Columnar(manifest, tables)


def read_listing(directory: Path, source: str) -> tuple[dict[str, Any], dict[str, dict[str, Any]]]:
    """The manifest of the columnar file ``directory`` (without ``tables``) and its ``tables`` (each table's path,
    rows and columns), the directory held to them: what every reader of the form checks before its tables
    (:func:`read_columnar` here, Spark's reader in :mod:`depgraph.spark.graph`)."""
    manifest = read_json(_manifest_path(directory, source), f"{source}: {COLUMNAR_MANIFEST} (manifest)")
    if not isinstance(manifest, dict):
        raise DepgraphError("schema", f"{source}: {COLUMNAR_MANIFEST} is not a JSON object")
    listed = _listed_tables(manifest.get(TABLES), source)
    _refuse_unlisted_files(directory, listed, source)
    return {k: v for k, v in manifest.items() if k != TABLES}, listed


def _manifest_path(directory: Path, source: str) -> Path:
    """The manifest of the columnar file ``directory``; a directory without one is ``io``."""
    manifest = directory / COLUMNAR_MANIFEST
    if not manifest.is_file():
        raise DepgraphError(
            "io", f"{source} is a directory, and not a columnar file: it holds no {COLUMNAR_MANIFEST}",
            path=str(directory),
        )  # fmt: skip
    return manifest


def _listed_tables(listed: Any, source: str) -> dict[str, dict[str, Any]]:
    """The manifest's ``tables``, each entry checked: a relative ``.parquet`` path, a row count, column names."""
    where = f"{source}: {COLUMNAR_MANIFEST}: {TABLES}"
    if not isinstance(listed, dict):
        raise DepgraphError("schema", f"{where} must be an object naming each table's file, rows and columns")
    for name, shape in listed.items():
        parts = PurePosixPath(name).parts
        if not name.endswith(".parquet") or PurePosixPath(name).is_absolute() or ".." in parts or "\\" in name:
            raise DepgraphError("schema", f"{where}: {name!r} is not a table's path (relative, ending .parquet)")
        rows, columns = (shape.get("rows"), shape.get("columns")) if isinstance(shape, dict) else (None, None)
        if (
            not isinstance(shape, dict)
            or set(shape) != {"rows", "columns"}
            or not isinstance(rows, int)
            or isinstance(rows, bool)
            or rows < 0
            or not isinstance(columns, list)
            or not all(isinstance(c, str) for c in columns)
            or len(set(columns)) != len(columns)
        ):
            raise DepgraphError(
                "schema", f"{where}.{name} must be {{'rows': a count, 'columns': distinct column names}}"
            )
    return listed


def _refuse_unlisted_files(directory: Path, listed: dict[str, Any], source: str) -> None:
    """Every file in the directory is the manifest, a listed table, or a part of one: anything else would be data
    some reader takes for the file's own."""
    parts_of = {PurePosixPath(name) for name in listed}
    for root, dirs, files in os.walk(directory):
        dirs[:] = [d for d in dirs if not hidden(d)]
        for name in files:
            if hidden(name):
                continue
            relative = PurePosixPath(Path(root, name).relative_to(directory).as_posix())
            if str(relative) == COLUMNAR_MANIFEST or relative in parts_of or relative.parent in parts_of:
                continue
            raise DepgraphError(
                "schema",
                f"{source} holds {str(relative)!r}, which its {COLUMNAR_MANIFEST} does not list: a columnar file "
                "holds its manifest and the tables it lists",
                path=str(directory / relative),
            )


def _read_table(path: Path, name: str, shape: dict[str, Any], source: str, dictionaries: Collection[str]) -> pa.Table:
    """One listed table: a Parquet file, or a directory of Parquet parts read in name order."""
    if path.is_dir():
        parts = sorted(p for p in path.iterdir() if not hidden(p.name))
        if not parts or not all(p.is_file() and p.name.endswith(".parquet") for p in parts):
            raise DepgraphError(
                "schema", f"{source}: {name} is a directory that does not hold Parquet parts only", path=str(path)
            )
    elif path.is_file():
        parts = [path]
    else:
        raise DepgraphError("schema", f"{source} lacks {name}, which its {COLUMNAR_MANIFEST} lists", path=str(path))
    try:
        encoded = [c for c in shape["columns"] if c in dictionaries]
        pieces = [pq.read_table(part, use_threads=True, read_dictionary=encoded) for part in parts]
        table = pieces[0] if len(pieces) == 1 else pa.concat_tables(pieces)
    except (pa.ArrowInvalid, pa.ArrowNotImplementedError, OSError) as exc:
        raise DepgraphError(
            "parse", f"{source}: {name} is not a readable Parquet table ({exc})", path=str(path)
        ) from None
    if table.column_names != shape["columns"]:
        raise DepgraphError(
            "schema",
            f"{source}: {name} holds the columns {table.column_names}; its {COLUMNAR_MANIFEST} lists "
            f"{shape['columns']}",
        )
    if table.num_rows != shape["rows"]:
        raise DepgraphError(
            "schema",
            f"{source}: {name} holds {table.num_rows} rows; its {COLUMNAR_MANIFEST} says {shape['rows']}",
        )
    return table


# --------------------------------------------------------------------------- pandas columns as Parquet columns
#: What ``infer_dtype`` calls an object column that one Arrow type holds exactly (its JSON the same either way).
_ONE_TYPE = {"string": pa.string(), "integer": pa.int64(), "floating": pa.float64(), "boolean": pa.bool_(),
             "empty": pa.null()}  # fmt: skip


def arrow_column(series: pd.Series) -> pa.Array | None:
    """A pandas column as one typed Arrow array (text, int64, float64 or bool, nulls where missing: a Parquet
    column of the columnar form), or ``None`` when no one type holds it exactly: an object column mixing kinds
    of value (text and numbers, integers and floats), which only JSON can carry as written."""
    dtype = series.dtype
    if pd.api.types.is_float_dtype(dtype):
        return pa.array(series.to_numpy(dtype=np.float64), type=pa.float64(), from_pandas=True)  # NaN is null
    if pd.api.types.is_integer_dtype(dtype):
        return pa.array(series.array, type=pa.int64(), from_pandas=True)
    if pd.api.types.is_bool_dtype(dtype):
        return pa.array(series.array, type=pa.bool_(), from_pandas=True)
    if isinstance(dtype, pd.CategoricalDtype):
        return arrow_column(series.astype(dtype.categories.dtype)) if len(dtype.categories) else pa.nulls(len(series))
    if isinstance(dtype, pd.StringDtype):  # pandas text (backed by Arrow in pandas 3): no Python strings
        return pa.array(series.array, from_pandas=True).cast(pa.string())
    values = series.to_numpy(dtype=object)
    kind = _ONE_TYPE.get(pd.api.types.infer_dtype(values, skipna=True))
    if kind is None:
        return None
    try:
        return pa.array(values, type=kind, from_pandas=True)
    except (pa.ArrowInvalid, pa.ArrowTypeError, OverflowError):  # beyond int64, a lone surrogate
        return None


# --------------------------------------------------------------------------- every element of a Parquet column
def _flat(values: pa.Array | pa.ChunkedArray) -> pa.Array:
    if isinstance(values, pa.ChunkedArray):
        return values.combine_chunks() if values.num_chunks != 1 else values.chunk(0)
    return values


def _fail(where: str, index: int, value: Any, rule: str) -> DepgraphError:
    text = repr(value)
    shown = text if len(text) <= 60 else text[:57] + "..."
    return DepgraphError("schema", f"{where}[{index}] is {shown}; {rule}", index=index)


def _first(mask: pa.Array | np.ndarray) -> int:
    found = mask.to_numpy(zero_copy_only=False) if isinstance(mask, (pa.Array, pa.ChunkedArray)) else mask
    return int(np.flatnonzero(found)[0])


def _is_text(kind: pa.DataType) -> bool:
    return pa.types.is_string(kind) or pa.types.is_large_string(kind)


def _refuse_nulls(values: pa.Array, where: str, rule: str) -> None:
    if values.null_count:
        raise _fail(where, _first(values.is_null()), None, rule)


def text_column(
    values: pa.Array | pa.ChunkedArray, where: str, *, nullable: bool = False, non_empty: bool = False
) -> pa.Array:
    """A Parquet column of text (string, large string, or dictionary-encoded text), as a string array: every
    element text (or null where ``nullable``), non-empty where ``non_empty``; ``schema`` errors otherwise."""
    values = _flat(values)
    rule = ("values are non-empty text" if non_empty else "values are text") + (" or null" if nullable else "")
    kind = values.type
    encoded = pa.types.is_dictionary(kind) and _is_text(kind.value_type)
    if not (encoded or _is_text(kind)):
        raise DepgraphError("schema", f"{where} holds {kind} values; {rule}")
    if encoded and values.dictionary.null_count:  # a null in the dictionary is a null where it is used
        values = values.dictionary_decode().dictionary_encode()
    if not nullable:
        _refuse_nulls(values, where, rule)
    if non_empty and len(values):
        if encoded:  # the distinct values checked, each once
            empty = pc.equal(pc.binary_length(values.dictionary), 0).take(values.indices).fill_null(False)
        else:
            empty = pc.equal(pc.binary_length(values), 0).fill_null(False)
        if pc.any(empty).as_py():
            raise _fail(where, _first(empty), "", rule)
    if encoded:  # dictionary-encoded text stays so: spelt and counted once per distinct value
        index, value = values.type.index_type, values.type.value_type
        return values if pa.types.is_string(value) else values.cast(pa.dictionary(index, pa.string()))
    return values.cast(pa.string()) if pa.types.is_large_string(values.type) else values


def integer_column(
    values: pa.Array | pa.ChunkedArray,
    where: str,
    *,
    nullable: bool = False,
    minimum: int | None = None,
    maximum: int | None = None,
) -> pa.Array:
    """A Parquet column of integers (any width), within [``minimum``, ``maximum``], as int64 (null where
    ``nullable``)."""
    values = _flat(values)
    rule = "values are integers" + (f" of at least {minimum}" if minimum is not None else "")
    rule += f" up to {maximum}" if maximum is not None else ""
    rule += " or null" if nullable else ""
    if not pa.types.is_integer(values.type):
        raise DepgraphError("schema", f"{where} holds {values.type} values; {rule}")
    if not nullable:
        _refuse_nulls(values, where, rule)
    if pa.types.is_uint64(values.type) and len(values) and pc.max(values).as_py() > 2**63 - 1:
        beyond = pc.greater(values, pa.scalar(2**63 - 1, pa.uint64())).fill_null(False)  # compared as uint64
        i = _first(beyond)
        raise _fail(where, i, values[i].as_py(), rule + " (up to 2^63 - 1: JSON and every reader hold 64-bit signed)")
    values = values.cast(pa.int64())
    for bound, outside in ((minimum, pc.less), (maximum, pc.greater)):
        if bound is not None and len(values):
            bad = outside(values, bound).fill_null(False)
            if pc.any(bad).as_py():
                i = _first(bad)
                raise _fail(where, i, values[i].as_py(), rule)
    return values


def number_column(values: pa.Array | pa.ChunkedArray, where: str, *, nullable: bool = True) -> pa.Array:
    """A Parquet column of 64-bit floats, every one finite (null where ``nullable``), as float64."""
    values = _flat(values)
    rule = "values are finite numbers" + (" or null" if nullable else "")
    if not pa.types.is_float64(values.type):
        raise DepgraphError("schema", f"{where} holds {values.type} values; {rule} (64-bit floats)")
    if not nullable:
        _refuse_nulls(values, where, rule)
    if len(values):
        numbers = values.to_numpy(zero_copy_only=False)
        present = ~np.asarray(values.is_null().to_numpy(zero_copy_only=False))
        bad = present & ~np.isfinite(numbers)
        if bad.any():
            i = int(np.flatnonzero(bad)[0])
            raise _fail(where, i, float(numbers[i]), rule)
    return values


def scalar_column(values: pa.Array | pa.ChunkedArray, where: str) -> pa.Array:
    """A Parquet column of JSON scalars: text, integers, 64-bit floats (finite) or booleans, nulls allowed."""
    values = _flat(values)
    kind = values.type
    if pa.types.is_integer(kind):
        return integer_column(values, where, nullable=True)
    if pa.types.is_floating(kind):
        return number_column(values, where)
    if pa.types.is_boolean(kind) or pa.types.is_null(kind):
        return values
    try:
        return text_column(values, where, nullable=True)
    except DepgraphError:
        raise DepgraphError(
            "schema", f"{where} holds {kind} values; values are text, integers, 64-bit floats or booleans"
        ) from None


#: The forms a document is written in: one JSON file, or the columnar directory.
FORMS = ("json", "parquet")


#: What a document written in the columnar form is called in :data:`~depgraph.io.outputs.SUFFIX_KINDS`.
COLUMNAR_KINDS = {"split-spec": "a columnar split spec", "study-graph": "a columnar study graph"}


def plan_document(plan: Outputs, output: str | os.PathLike[str], kind: str | None, form: str | None) -> str:
    """Declare ``output``, a graph or a spec (``kind``: ``study-graph``, ``split-spec``, or None for either, when the
    input decides), in ``plan``, and return the form it is written in (``json`` or ``parquet``, by ``form`` or the
    output's name): a JSON file, or a columnar directory written whole. Checked now, before any work; a name
    contradicting the form (``-o spec.json --format parquet``, a spec ``-o g.dggraph``) is refused."""
    if kind is None:
        named = next((k for k, s in COLUMNAR_SUFFIXES.items() if Path(str(output)).suffix.lower() == s), "split-spec")
        chosen = output_form(output, named, form)
    else:
        chosen = output_form(output, kind, form)
    if chosen == "json":
        plan.file(output)  # what the path is (an input, a device, a directory) comes first
        check_suffix(output, ("JSON",))
    else:
        plan.tree(output)
        check_suffix(output, tuple(COLUMNAR_KINDS.values()) if kind is None else (COLUMNAR_KINDS[kind],))
    return chosen


def output_form(path: str | os.PathLike[str], kind: str, form: str | None = None) -> str:
    """The form an output ``path`` of a ``kind`` document is written in: ``form`` (``json`` or ``parquet``, in any
    case) when given, else by the name (``parquet`` for ``.dgspec`` / ``.dggraph``, ``json`` otherwise). A form that
    contradicts the name (``parquet`` for ``spec.json``, ``json`` for ``spec.dgspec``) is ``invalid_argument``:
    the file would not hold what its name says."""
    suffix = COLUMNAR_SUFFIXES[kind]
    given = Path(str(path)).suffix.lower()
    other = next((k for k, s in COLUMNAR_SUFFIXES.items() if s == given and k != kind), None)
    if other is not None:
        raise DepgraphError(
            "invalid_argument",
            f"{str(path)!r} is named {given}, a {other.replace('-', ' ')}'s columnar form, but receives a "
            f"{kind.replace('-', ' ')}: name it NAME{suffix}",
            path=str(path),
        )
    named = "parquet" if given == suffix else "json" if given == ".json" else None
    if form is None:
        return named or "json"
    chosen = form.strip().lower()
    if chosen not in FORMS:
        raise DepgraphError("invalid_argument", f"the format is json or parquet, not {form!r}")
    if named is not None and named != chosen:
        fits = f"NAME{suffix}" if chosen == "parquet" else "NAME.json"
        raise DepgraphError(
            "invalid_argument",
            f"{str(path)!r} is named for the {named} form but the format asked is {chosen}: name it {fits}",
            path=str(path),
        )
    return chosen


@dataclass(frozen=True)
class Peeked:
    """What a graph or spec file is, before it is read: the ``format`` it names, its parsed JSON document (the
    whole document of a JSON file; the manifest of a columnar one) and whether it is columnar."""

    format: Any
    document: dict[str, Any]
    columnar: bool


def peek_document(path: str | os.PathLike[str]) -> Peeked:
    """The format a graph or spec file at ``path`` names, in either form (a JSON file is parsed whole, once: its
    reader takes the parsed document; a columnar one's manifest only). A document that is not a JSON object is
    ``schema``."""
    columnar = is_columnar(path)
    if columnar:
        doc = read_json(_manifest_path(Path(path), repr(str(path))), f"{str(path)!r}: {COLUMNAR_MANIFEST} (manifest)")
    else:
        doc = read_json(path, "file", text_arrays=True)  # its reader takes Arrow text arrays
    if not isinstance(doc, dict):
        what = f"{str(path)!r}: {COLUMNAR_MANIFEST}" if columnar else repr(str(path))
        raise DepgraphError(
            "schema", f"{what}: the document is {json_kind(doc)}; a study graph or a split spec is a JSON object"
        )
    return Peeked(doc.get("format"), doc, columnar)


def document_kind(path: str | os.PathLike[str], found: Peeked) -> str:
    """What the document :func:`peek_document` ``found`` at ``path`` is, for a command taking either kind:
    ``"split-spec"`` or ``"study-graph"``; another format is ``schema`` (a splitGraph file: said, with the command
    that reads it)."""
    kind = {SPEC_FORMAT: "split-spec", GRAPH_FORMAT: "study-graph"}.get(found.format)
    if kind is None:
        splitgraph = isinstance(found.document, dict) and "splitGraph_object" in found.document
        raise DepgraphError(
            "schema",
            f"{str(path)!r}: 'format' is {found.format!r}; expected {GRAPH_FORMAT!r} or {SPEC_FORMAT!r}"
            + (" (a splitGraph file: use 'depgraph import splitgraph')" if splitgraph else ""),
        )
    return kind
