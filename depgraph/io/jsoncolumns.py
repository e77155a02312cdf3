"""JSON arrays as typed columns, every element checked, the first offender named.

Graph and spec documents hold their bulk in long arrays (a million sample ids,
fold positions, edge endpoints). Each reader turns such an array into a
column with one of these functions, which check *every* element in C
(``pandas.api.types.infer_dtype``, pyarrow and numpy conversions) and only when
something is wrong look for the first element at fault, to name it::

    spec file 'spec.json': samples.sample_id[10] is ''; values are non-empty text

All failures are ``schema`` errors. ``where`` is the source and the array's
path, e.g. ``"spec file 'spec.json': samples.sample_id"``.

A text array may also come already parsed, as an Arrow string array (a large file's long text arrays, which
:func:`depgraph.io.files.read_json` hands over with ``text_arrays=True``): the text functions check it the same
way, without a Python object per element where the result needs none.

>>> strings(["S1", "S2"], "samples.sample_id", non_empty=True).to_pylist()
['S1', 'S2']
>>> integers([1, None, 3], "samples.order_rank", nullable=True, minimum=1).tolist()
[1, <NA>, 3]
>>> integers([0, -7], "folds.splits[0].test", minimum=0)
Traceback (most recent call last):
depgraph.errors.DepgraphError: [schema] folds.splits[0].test[1] is -7; values are integers of at least 0
"""

from __future__ import annotations

from typing import Any

import numpy as np
import orjson
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc

from depgraph.common.arrays import text_buffers
from depgraph.errors import DepgraphError
from depgraph.io.files import JSON_INTEGERS, MAX_NESTING

#: What ``infer_dtype`` (missing values skipped) calls a column of plain JSON scalars.
_SCALAR_KINDS = frozenset({"string", "integer", "floating", "mixed-integer-float", "boolean", "empty"})
_NUMBER_KINDS = frozenset({"integer", "floating", "mixed-integer-float", "empty"})
_INT64 = (-(2**63), 2**63 - 1)


def _shown(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


def _fail(where: str, index: int, value: Any, rule: str, **details: Any) -> DepgraphError:
    return DepgraphError("schema", f"{where}[{index}] is {_shown(value)}; {rule}", index=index, **details)


def _first(values: list[Any], bad: Any) -> int:
    """The first index whose value ``bad`` flags (the slow path: only run when something is wrong)."""
    return next(i for i, v in enumerate(values) if bad(v))


def _need_list(values: Any, where: str) -> list[Any]:
    if not isinstance(values, list):
        raise DepgraphError("schema", f"{where} must be a list, not {type(values).__name__}")
    return values


def _is_text(value: Any) -> bool:
    if not isinstance(value, str):
        return False
    try:
        value.encode("utf-8")
    except UnicodeEncodeError:  # a lone surrogate, from a document built in Python
        return False
    return True


def objects(values: list[Any]) -> np.ndarray:
    """A list as a 1-d object array (its elements, never a 2-d array of nested lists), without copying them."""
    array = np.empty(len(values), dtype=object)
    try:
        array[:] = values
    except ValueError:  # nested lists numpy would broadcast: place them one by one (only bad documents have them)
        for i, value in enumerate(values):
            array[i] = value
    return array


def strings(values: Any, where: str, *, nullable: bool = False, non_empty: bool = False) -> pa.Array:
    """A list of text as an Arrow string array: every element a string (or
    ``None`` where ``nullable``), non-empty where ``non_empty``."""
    if _is_parsed_text(values):
        return _checked_text(values, where, nullable, non_empty)
    values = _need_list(values, where)
    return _arrow_text(values, values, where, nullable, non_empty)


def _is_parsed_text(values: Any) -> bool:
    """Whether ``values`` is a text array the JSON reader parsed already (Arrow), not a list."""
    return isinstance(values, pa.Array) and pa.types.is_string(values.type)


def is_json_array(values: Any) -> bool:
    """Whether ``values`` is a JSON array as a reader holds it: a list, or text the reader parsed into Arrow."""
    return isinstance(values, list) or _is_parsed_text(values)


def text(values: Any, where: str, *, nullable: bool = False, non_empty: bool = False) -> tuple[np.ndarray, pa.Array]:
    """:func:`strings`, with the elements also as an object array (for a pandas column)."""
    values = _need_list(values, where)
    elements = objects(values)
    return elements, _arrow_text(values, elements, where, nullable, non_empty)


def _arrow_text(values: list[Any], elements: Any, where: str, nullable: bool, non_empty: bool) -> pa.Array:
    rule = "values are non-empty text" if non_empty else "values are text"
    try:
        column = pa.array(elements, type=pa.string(), from_pandas=False)
    except (pa.ArrowInvalid, pa.ArrowTypeError, UnicodeEncodeError):
        i = _first(values, lambda v: not (_is_text(v) or (nullable and v is None)))
        raise _fail(where, i, values[i], rule) from None
    return _checked_text(column, where, nullable, non_empty)


def _checked_text(column: pa.Array, where: str, nullable: bool, non_empty: bool) -> pa.Array:
    """``column`` (text) once no element is missing (unless ``nullable``) or empty (where ``non_empty``)."""
    rule = "values are non-empty text" if non_empty else "values are text"
    if column.null_count and not nullable:
        i = int(np.flatnonzero(column.is_null().to_numpy(zero_copy_only=False))[0])
        raise _fail(where, i, None, rule)
    if non_empty and len(column):
        empty = pc.equal(pc.binary_length(column), 0).fill_null(False)
        if pc.any(empty).as_py():
            i = int(np.flatnonzero(empty.to_numpy(zero_copy_only=False))[0])
            raise _fail(where, i, "", rule)
    return column


def optional_text(values: Any, where: str) -> np.ndarray:
    """A list of text or ``None`` as an object array (checked without building an Arrow array)."""
    if _is_parsed_text(values):
        return values.to_numpy(zero_copy_only=False)
    values = _need_list(values, where)
    elements = objects(values)
    if pd.api.types.infer_dtype(elements, skipna=True) not in ("string", "empty"):
        i = _first(values, lambda v: not (v is None or _is_text(v)))
        raise _fail(where, i, values[i], "values are text or null")
    return elements


def integers(
    values: Any, where: str, *, nullable: bool = False, minimum: int | None = None, maximum: int | None = None
) -> np.ndarray | pd.arrays.IntegerArray:
    """A list of JSON integers (no booleans, no ``1.0``: the digest tells them
    apart) within [``minimum``, ``maximum``] and 64 bits, as int64; where
    ``nullable``, ``None`` is allowed and the column is a pandas ``Int64`` array."""
    values = _need_list(values, where)
    low = _INT64[0] if minimum is None else minimum
    high = _INT64[1] if maximum is None else maximum
    if maximum is not None:
        rule = f"values are integers from {low} to {high}"
    else:
        rule = "values are 64-bit integers" if minimum is None else f"values are integers of at least {low}"
    if nullable:
        rule += " or null"
    kind = pd.api.types.infer_dtype(values, skipna=nullable) if values else "empty"
    if kind not in ("integer", "empty"):
        i = _first(values, lambda v: not (_is_integer(v) or (nullable and v is None)))
        raise _fail(where, i, values[i], rule)
    try:
        column = pa.array(values, type=pa.int64()) if nullable else None
        ints = np.array(values, dtype=np.int64) if column is None else column.fill_null(low).to_numpy()
    except (OverflowError, pa.ArrowInvalid):
        i = _first(values, lambda v: v is not None and not _INT64[0] <= v <= _INT64[1])
        raise _fail(where, i, values[i], rule) from None
    outside = (ints < low) | (ints > high)
    if outside.any():
        i = int(np.flatnonzero(outside)[0])
        raise _fail(where, i, values[i], rule)
    if column is None:
        return ints
    missing = column.is_null().to_numpy(zero_copy_only=False) if column.null_count else np.zeros(len(ints), bool)
    return pd.arrays.IntegerArray(ints, missing)


def _is_integer(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _is_number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def numbers(values: Any, where: str, *, nullable: bool = True) -> tuple[np.ndarray, bool]:
    """A list of JSON numbers as float64 (NaN for ``None`` where ``nullable``),
    every one finite; also whether every number was written as a float (an
    integer such as ``6`` reads as ``6.0``, which a writer spells ``6.0``)."""
    values = _need_list(values, where)
    rule = "values are numbers" + (" or null" if nullable else "")
    if not values:
        return np.empty(0, dtype=np.float64), True
    kind = pd.api.types.infer_dtype(values, skipna=nullable)
    if kind not in _NUMBER_KINDS:
        i = _first(values, lambda v: not (_is_number(v) or (nullable and v is None)))
        raise _fail(where, i, values[i], rule)
    try:
        column = np.array(values, dtype=np.float64)
    except OverflowError:
        i = _first(values, lambda v: isinstance(v, int) and abs(v) > 1e308)
        raise _fail(where, i, values[i], "values are finite numbers") from None
    finite = np.isfinite(column)
    if not finite.all():
        infinite = np.isinf(column)
        if infinite.any():
            i = int(np.flatnonzero(infinite)[0])
            raise _fail(where, i, values[i], "values are finite numbers")
        if not nullable:
            i = int(np.flatnonzero(~finite)[0])
            raise _fail(where, i, values[i], rule)
    return column, kind in ("floating", "empty")


def scalar_objects(values: Any, where: str) -> tuple[np.ndarray, str]:
    """A list of JSON scalars (text, numbers, booleans, ``None``; never a list
    or an object) as an object array, kept as written; and what
    ``infer_dtype`` calls it."""
    if _is_parsed_text(values):
        elements = values.to_numpy(zero_copy_only=False)
        return elements, pd.api.types.infer_dtype(elements, skipna=True)
    values = _need_list(values, where)
    elements = objects(values)
    kind = pd.api.types.infer_dtype(elements, skipna=True)
    if kind not in _SCALAR_KINDS:
        rule = "values are text, numbers, booleans or null (not lists or objects)"
        bad = next((i for i, v in enumerate(values) if isinstance(v, (list, dict))), None)
        if bad is None:
            bad = next((i for i, v in enumerate(values) if not (v is None or isinstance(v, (str, int, float)))), None)
        if bad is not None:
            raise _fail(where, bad, values[bad], rule)
    return elements, kind


def scalars(values: Any, where: str) -> pd.Series:
    """:func:`scalar_objects` as the column it was written from: int64 when
    every value is an integer, float64 when they are numbers with gaps, else objects."""
    elements, kind = scalar_objects(values, where)
    if kind == "integer":
        try:
            return pd.Series(np.array(values, dtype=np.int64))
        except TypeError:  # None among the integers: a number column with gaps, below
            pass
        except OverflowError:
            i = _first(values, lambda v: v is not None and not _INT64[0] <= v <= _INT64[1])
            raise _fail(where, i, values[i], "integers fit in 64 bits") from None
    if kind in _NUMBER_KINDS:
        column, _ = numbers(values, where)
        return pd.Series(column)
    return pd.Series(elements, dtype=object, copy=False)


def positions(values: Any, where: str, n: int) -> np.ndarray:
    """Sample positions: integers in ``range(n)``, strictly increasing (sorted, no repeats)."""
    values = _need_list(values, where)
    if not values:
        return np.empty(0, dtype=np.int64)
    kind = pd.api.types.infer_dtype(values, skipna=False)
    rule = f"positions are integers from 0 to {n - 1} (the spec has {n} samples)"
    if kind != "integer":
        i = _first(values, lambda v: not _is_integer(v))
        raise _fail(where, i, values[i], rule)
    try:
        found = np.array(values, dtype=np.int64)
    except OverflowError:
        i = _first(values, lambda v: not _INT64[0] <= v <= _INT64[1])
        raise _fail(where, i, values[i], rule) from None
    outside = (found < 0) | (found >= n)
    if outside.any():
        i = int(np.flatnonzero(outside)[0])
        raise _fail(where, i, values[i], rule)
    if len(found) > 1:
        steps = np.diff(found) <= 0
        if steps.any():
            i = int(np.flatnonzero(steps)[0]) + 1
            raise _fail(where, i, values[i], "positions are sorted, without repeats")
    return found


def plain_json(value: Any, where: str) -> Any:
    """``value`` as JSON data that a write and a read give back unchanged, or ``ValueError`` naming the first
    value that would not be (pydantic validators raise it; the model names the field).

    Text, booleans and ``None`` pass; integers within 64 bits (:data:`~depgraph.io.files.JSON_INTEGERS`) and finite
    floats pass, numpy scalars and arrays become the Python values they hold, tuples become lists; objects need
    text keys. Refused: NaN and infinities (JSON has no such number: a writer puts ``null``), integers beyond 64
    bits (a reader rounds them to a float), nesting deeper than :data:`~depgraph.io.files.MAX_NESTING`, anything else.

    >>> plain_json({"k": (np.int64(3), 0.5)}, "parameters")
    {'k': [3, 0.5]}
    >>> plain_json({"k": float("nan")}, "parameters")
    Traceback (most recent call last):
    ...
    ValueError: parameters.k is nan: JSON has no NaN or infinity (it would be written as null)
    """
    return _plain(value, where, 1)


def _plain(value: Any, where: str, level: int) -> Any:
    if level > MAX_NESTING:
        raise ValueError(f"{where} nests deeper than {MAX_NESTING} levels")
    if value is None or isinstance(value, (str, bool)):
        return value
    if isinstance(value, np.ndarray):
        value = value.tolist()
    elif isinstance(value, np.generic):
        value = value.item()
    if isinstance(value, int) and not isinstance(value, bool):
        if not JSON_INTEGERS[0] <= value <= JSON_INTEGERS[1]:
            raise ValueError(f"{where} is {_shown(value)}, beyond 64 bits: JSON readers round it to a float")
        return value
    if isinstance(value, float):
        if not np.isfinite(value):
            raise ValueError(f"{where} is {value!r}: JSON has no NaN or infinity (it would be written as null)")
        return value
    if isinstance(value, dict):
        bad = next((k for k in value if not isinstance(k, str)), None)
        if bad is not None:
            raise ValueError(f"{where} has the key {bad!r}; JSON object keys are text")
        return {k: _plain(v, f"{where}.{k}", level + 1) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_plain(v, f"{where}[{i}]", level + 1) for i, v in enumerate(value)]
    if isinstance(value, str | bool) or value is None:  # np.str_, np.bool_ after .item()
        return value
    raise ValueError(f"{where} is {_shown(value)} ({type(value).__name__}), not JSON data")


# --------------------------------------------------------------------------- typed columns as JSON arrays
#: Characters JSON strings must escape, and how orjson (whose spelling the digest fixes) escapes them.
_ESCAPES = {chr(c): orjson.dumps(chr(c)).decode()[1:-1] for c in range(0x20)} | {'"': '\\"', "\\": "\\\\"}
_CONTROL = "[\\x00-\\x1f]"


def json_array(values: pa.Array | pa.ChunkedArray | np.ndarray) -> bytes:
    """One column as a compact JSON array, spelt exactly as ``orjson.dumps`` spells the Python values (the
    canonical form a spec's digest is taken over), built in Arrow and numpy: a column of ten million ids never
    becomes ten million Python objects.

    Text is quoted with only the escapes JSON needs (``\\"``, ``\\\\``, control characters as orjson writes them),
    integers in decimal, floats by orjson from the numpy array (shortest round trip; NaN is ``null``), booleans as
    ``true``/``false``, missing values as ``null``; dictionary-encoded text is encoded once per distinct value.

    >>> json_array(pa.array(["S1", None, 'a"b']))
    b'["S1",null,"a\\\\"b"]'
    >>> json_array(pa.array([3, None])), json_array(np.array([1.0, np.nan, 1e-05]))
    (b'[3,null]', b'[1.0,null,0.00001]')
    """
    if isinstance(values, np.ndarray):
        if values.dtype.kind == "f":
            return orjson.dumps(np.ascontiguousarray(values, dtype=np.float64), option=orjson.OPT_SERIALIZE_NUMPY)
        values = pa.array(values)
    if isinstance(values, pa.ChunkedArray):
        values = values.combine_chunks() if values.num_chunks != 1 else values.chunk(0)
    kind = values.type
    if _is_text_type(kind) and len(values) > 10_000 and pc.count_distinct(values.slice(0, 10_000)).as_py() <= 1_000:
        values, kind = values.dictionary_encode(), pa.dictionary(pa.int32(), kind)  # few distinct: each spelt once
    if pa.types.is_dictionary(kind):
        items = _json_items(values.dictionary).take(values.indices).fill_null("null,")
    elif pa.types.is_floating(kind):
        floats = values.cast(pa.float64()).to_numpy(zero_copy_only=False)  # nulls become NaN, written null
        return orjson.dumps(np.ascontiguousarray(floats), option=orjson.OPT_SERIALIZE_NUMPY)
    elif pa.types.is_integer(kind) and values.null_count == 0:  # orjson writes a numpy array of integers fastest
        return orjson.dumps(values.cast(pa.int64()).to_numpy(), option=orjson.OPT_SERIALIZE_NUMPY)
    else:
        items = _json_items(values)
    if len(items) == 0:
        return b"[]"
    # every item is followed by a comma, all in one buffer: its bytes, the last comma cut, are the array's elements
    offsets, data = text_buffers(items)
    return b"".join((b"[", memoryview(data[offsets[0] : offsets[-1] - 1]), b"]"))  # one copy, not two


def _json_items(values: pa.Array) -> pa.Array:
    """Each value as its JSON text followed by a comma (large strings), ``null,`` where missing."""
    kind = values.type
    comma, nothing = pa.scalar(",", pa.large_string()), pa.scalar("", pa.large_string())
    if pa.types.is_string(kind) or pa.types.is_large_string(kind):
        text = values.cast(pa.large_string())
        if _needs_escapes(text):
            for char in ("\\", '"'):  # the backslash first: the quote's escape adds one
                text = pc.replace_substring(text, char, _ESCAPES[char])
            control = pc.match_substring_regex(text, _CONTROL).fill_null(False)
            if pc.any(control).as_py():  # rare: control characters, escaped as orjson escapes them
                escaped = pa.array(_escape_control(text.filter(control).to_pylist()), pa.large_string())
                text = pc.replace_with_mask(text, control, escaped)
        quote, closing = pa.scalar('"', pa.large_string()), pa.scalar('",', pa.large_string())
        items = pc.binary_join_element_wise(quote, text, closing, nothing)
    elif pa.types.is_integer(kind):
        items = pc.binary_join_element_wise(values.cast(pa.large_string()), comma, nothing)
    elif pa.types.is_boolean(kind):
        items = pc.if_else(values, pa.scalar("true,", pa.large_string()), pa.scalar("false,", pa.large_string()))
    elif pa.types.is_null(kind):
        items = pa.nulls(len(values), pa.large_string())
    else:
        raise TypeError(f"a {kind} column has no JSON spelling here")
    return items.fill_null("null,").cast(pa.large_string())


def _is_text_type(kind: pa.DataType) -> bool:
    return pa.types.is_string(kind) or pa.types.is_large_string(kind)


def _needs_escapes(text: pa.Array) -> bool:
    """Whether some value holds a character JSON escapes (a quote, a backslash, a control character): one
    vectorised look at the bytes, so the usual column of plain ids skips the replacements."""
    offsets, data = text_buffers(text)
    used = data[offsets[0] : offsets[-1]]
    return bool(((used < 0x20) | (used == 0x22) | (used == 0x5C)).any())


def _escape_control(texts: list[str]) -> list[str]:
    return ["".join(_ESCAPES.get(c, c) if c < " " else c for c in t) for t in texts]
