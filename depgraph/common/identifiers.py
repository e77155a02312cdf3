"""Identifiers, normalised once.

Keys are text: surrounding blanks are stripped, NaN and blank cells are
missing, integers and integral floats are written without a decimal part
(``1``, ``1.0`` and ``"1"`` are the same key; ``"01"`` is not ``1``).
"""

from __future__ import annotations

import math
import unicodedata
from typing import Any

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc

from depgraph.common.arrays import needs_trimming, text_buffers
from depgraph.errors import DepgraphError


def check_key_column(values: pd.Series, column: str, what: str) -> None:
    """Refuse a column whose cells cannot be identifiers: booleans, dates and
    times (``schema`` error naming the column and the kind). Text, integers,
    integral floats and categories of those are identifiers; only an object
    column's cells are inspected (numeric and text columns cost nothing).

    >>> check_key_column(pd.Series([True, False]), "subject_id", "metadata")
    Traceback (most recent call last):
    ...
    depgraph.errors.DepgraphError: [schema] metadata: subject_id holds booleans (True/False), not identifiers
    """
    dtype = values.dtype
    if isinstance(dtype, pd.CategoricalDtype):  # the categories are the values
        values = pd.Series(dtype.categories)
        dtype = values.dtype
    kind: str | None = None
    inferred = ""
    if pd.api.types.is_bool_dtype(dtype):
        kind = "booleans (True/False)"
    elif pd.api.types.is_datetime64_any_dtype(dtype):
        kind = "dates or times"
    elif pd.api.types.is_timedelta64_dtype(dtype):
        kind = "durations"
    elif pd.api.types.is_object_dtype(dtype):
        inferred = pd.api.types.infer_dtype(values, skipna=True)
        kind = {
            "boolean": "booleans (True/False)",
            "datetime": "dates or times",
            "datetime64": "dates or times",
            "date": "dates",
            "time": "times of day",
            "timedelta": "durations",
            "bytes": "bytes",
        }.get(inferred)
    if kind is not None:
        raise DepgraphError("schema", f"{what}: {column} holds {kind}, not identifiers", column=column)
    if pd.api.types.is_object_dtype(dtype) and inferred.startswith("mixed"):  # a TRUE cell among text ids (a
        flags = values.map(lambda v: isinstance(v, (bool, np.bool_))).to_numpy(dtype=bool)  # spreadsheet's)
        if flags.any():
            i = int(np.flatnonzero(flags)[0])
            raise DepgraphError(
                "schema",
                f"{what}: {column} holds a boolean ({values.iloc[i]}) in row {i + 1} among its ids: a spreadsheet's "
                "TRUE/FALSE cell, not an identifier; write it as text",
                column=column,
                rows=[i + 1],
            )


#: Characters an id may not hold, as a regular expression both RE2 (Arrow) and Java (Spark) read: control
#: characters (C0 with tab and line feed, DEL, C1 with NEL), format characters that print nothing (zero-width space
#: and joiners, soft hyphen, byte-order mark, direction marks) and the Unicode line and paragraph separators. Such an
#: id is a quoting accident or two spellings of one id that nobody can see apart, and no export writes it back.
UNPRINTABLE = r"[\p{Cc}\p{Cf}\p{Zl}\p{Zp}]"


def apply_id_rules(keys: pa.Array, column: str, what: str) -> None:
    """The rules every reader holds an id column to, whatever it reads (a metadata table, a graph or spec file in
    either form): each id printable text (:func:`refuse_control_characters`) and written one way
    (:func:`refuse_unicode_twins`). The Spark engine applies the same rules in Spark
    (:mod:`depgraph.spark.frames`, with :data:`UNPRINTABLE` and Arrow's NFC in its workers)."""
    refuse_control_characters(keys, column, what)
    refuse_unicode_twins(keys, column, what)


def refuse_control_characters(keys: pa.Array, column: str, what: str) -> None:
    """Refuse identifiers holding a line break, a tab, another control character or a character that prints
    nothing (:data:`UNPRINTABLE`; ``invalid_value`` naming the rows and the character): such an id is almost
    always a quoting accident, ``P\\u200b1`` beside ``P1`` would be two subjects nobody can tell apart, and no
    export could write it back faithfully. Printable ASCII costs one pass over the text bytes, nothing per id.

    >>> refuse_control_characters(pa.array(["S1", "S" + chr(9) + "2"]), "sample_id", "metadata")
    Traceback (most recent call last):
    ...
    depgraph.errors.DepgraphError: [invalid_value] metadata: sample_id holds a line ... 'S\\t2' (U+0009 TAB)...
    """
    offsets, data = text_buffers(keys)
    body = data[offsets[0] : offsets[-1]]
    if not len(body) or (body.min() >= 0x20 and body.max() < 0x7F):
        return
    bad = pc.fill_null(pc.match_substring_regex(keys, UNPRINTABLE), False).to_numpy(zero_copy_only=False)
    if not bad.any():
        return
    rows = np.flatnonzero(bad)
    examples = keys.take(pa.array(rows[:3])).to_pylist()
    character = next(c for c in examples[0] if unicodedata.category(c) in ("Cc", "Cf", "Zl", "Zp"))
    name = unicodedata.name(character, _CONTROL_NAMES.get(ord(character), "a control character"))
    shown = ", ".join(str(r + 1) for r in rows[:5]) + (f" and {len(rows) - 5} more" if len(rows) > 5 else "")
    raise DepgraphError(
        "invalid_value",
        f"{what}: {column} holds a line break, tab or other control or invisible character in "
        f"row{'s' if len(rows) > 1 else ''} {shown}: {', '.join(ascii(v) for v in examples)} "
        f"(U+{ord(character):04X} {name}); an id is printable text",
        rows=rows.tolist(),
        column=column,
    )


#: Names of the control characters Unicode leaves unnamed, as messages show them.
_CONTROL_NAMES = {0x09: "TAB", 0x0A: "LINE FEED", 0x0D: "CARRIAGE RETURN", 0x7F: "DELETE", 0x85: "NEXT LINE (NEL)"}


def refuse_unicode_twins(keys: pa.Array, column: str, what: str) -> None:
    """Refuse two ids that differ only in Unicode normalisation (``"é"`` written as one code point or as ``"e"``
    and a combining accent; the Kelvin sign and ``K``): every person and spreadsheet sees one id, depgraph would
    see two entities, so a subject written both ways would be split across train and test (``ambiguity``, naming
    both spellings escaped and their rows). ASCII ids cost one pass; only the distinct non-ASCII ids are
    normalised (NFC) and compared, in Arrow.

    >>> refuse_unicode_twins(pa.array(["Jos\u00e9", "Jose\u0301"]), "subject_id", "metadata")
    Traceback (most recent call last):
    ...
    depgraph.errors.DepgraphError: [ambiguity] metadata: subject_id values 'Jos\xe9' (row 1) and 'Jose\u0301' ...
    """
    ascii_only = pc.fill_null(pc.string_is_ascii(keys), True)
    if pc.all(ascii_only).as_py():
        return
    written = pc.unique(keys.filter(pc.invert(ascii_only)))
    composed = pc.utf8_normalize(written, form="NFC")
    changed = pc.not_equal(composed, written)
    seen = pc.unique(keys.drop_null())
    twin = pc.or_(pc.and_(changed, pc.is_in(composed, value_set=seen)), _repeats(composed))
    if not pc.any(twin).as_py():
        return
    i = int(np.flatnonzero(twin.to_numpy(zero_copy_only=False))[0])
    spelled = [v for v in written.to_pylist() if unicodedata.normalize("NFC", v) == composed[i].as_py()]
    if composed[i].as_py() in seen.to_pylist() and composed[i].as_py() not in spelled:
        spelled.insert(0, composed[i].as_py())
    first, second = spelled[0], next(v for v in spelled if v != spelled[0])
    values = keys.to_pylist()
    rows = [values.index(first) + 1, values.index(second) + 1]
    raise DepgraphError(
        "ambiguity",
        f"{what}: {column} values {first!a} (row {rows[0]}) and {second!a} (row {rows[1]}) differ only in "
        "Unicode normalisation (a composed and a decomposed accent, or a compatibility letter): they look the same "
        "but would be two ids; write one of them as the other",
        column=column,
        ids=[first, second],
        rows=rows,
    )


def _repeats(values: pa.Array) -> pa.Array:
    """Which values occur more than once."""
    codes = values.dictionary_encode().indices.to_numpy(zero_copy_only=False)
    return pa.array(np.bincount(codes, minlength=len(values))[codes] > 1)


def normalise_keys(values: pd.Series | Any, column: str = "id") -> pd.Series:
    """Identifiers as text, ``None`` where missing.

    >>> normalise_keys(pd.Series([1, 2.0, " S3 ", "01", None, "", float("nan")])).tolist()
    ['1', '2', 'S3', '01', None, None, None]
    """
    s = values if isinstance(values, pd.Series) else pd.Series(values)
    dtype = s.dtype
    if isinstance(dtype, pd.CategoricalDtype):
        s = s.astype(object)
        dtype = s.dtype
    if pd.api.types.is_float_dtype(dtype):
        out = float_keys(s.to_numpy(dtype=np.float64, na_value=np.nan))
    elif pd.api.types.is_integer_dtype(dtype) or pd.api.types.is_bool_dtype(dtype):
        text = s.astype("string")
        out = text.astype(object).where(text.notna(), None).to_numpy(dtype=object)
    else:
        kind = pd.api.types.infer_dtype(s, skipna=True)
        if kind in ("string", "empty"):
            text = s.str.strip()  # vectorised (pyarrow for pandas' text dtype)
            text = text.where(text.notna() & (text != ""))
            return pd.Series(text.to_numpy(dtype=object, na_value=None), index=s.index, dtype=object)
        out = np.array([_key_of(v) for v in s.to_numpy(dtype=object)], dtype=object)  # mixed Python objects
    result = pd.Series(out, index=s.index, dtype=object)
    present = result.notna()
    if present.any():
        stripped = result[present].astype(str).str.strip()
        result[present] = stripped.where(stripped != "", None)
    return result.where(result.notna(), None)


def key_array(values: pd.Series | Any, column: str = "id", what: str = "ids", *, ids: bool = True) -> pa.Array:
    """Identifiers as an Arrow string array, null where missing: the rules of
    :func:`normalise_keys`, applied in Arrow when the column is text already
    (a million identifiers never become Python objects). Floating-point ids
    must be whole numbers below 2**53 (:func:`refuse_inexact_float_ids`);
    ``ids=False`` spells values that are no ids (a hash fold's key columns:
    a weight of 1.5 is the key ``1.5``).

    >>> key_array(pd.Series([" S1", "", None, "S2"], dtype="string")).to_pylist()
    ['S1', None, None, 'S2']
    >>> key_array(pd.Series([1, 2.0, None])).to_pylist()
    ['1', '2', None]
    """
    s = values if isinstance(values, pd.Series) else pd.Series(values)
    if pd.api.types.is_string_dtype(s.dtype) and s.dtype != object:
        text = pa.array(s.array)
    elif s.dtype == object and pd.api.types.infer_dtype(s, skipna=True) in ("string", "empty"):
        text = pa.array(s.to_numpy(dtype=object), type=pa.string(), from_pandas=True)
    else:  # numbers, or a mix (text holds no float)
        if ids:
            refuse_inexact_float_ids(s, column, what)
        return pa.array(normalise_keys(s, column).to_numpy(dtype=object), type=pa.string(), from_pandas=True)
    if isinstance(text, pa.ChunkedArray):
        text = text.combine_chunks() if text.num_chunks != 1 else text.chunk(0)
    if text.type != pa.string():
        text = text.cast(pa.string())
    if needs_trimming(text):  # a table read by depgraph is trimmed already: checking is cheaper than trimming
        text = pc.utf8_trim_whitespace(text)
    offsets, _ = text_buffers(text)
    blank = np.diff(offsets) == 0
    if blank.any():  # empty text is missing (a null already has no bytes)
        text = pc.if_else(pa.array(blank), pa.scalar(None, pa.string()), text)
    return text


#: Beyond this magnitude a float64 no longer holds every whole number: 2**53 + 1 is stored as 2**53.
EXACT_FLOAT_INTEGERS = 2**53


def refuse_inexact_float_ids(values: pd.Series, column: str, what: str = "ids") -> None:
    """Refuse ids stored as floating-point numbers that are not whole numbers below 2**53 (``invalid_value`` naming
    the row and value): ``9007199254740993`` read as a float is ``9007199254740992.0``, the id of another sample
    (two ids become one without a word), and ``2.5`` as an id is a number that was never an id. Checked on float
    columns (vectorised) and on the float cells of a mixed column.

    >>> refuse_inexact_float_ids(pd.Series([1.0, 2.0**53]), "sample_id", "metadata")
    Traceback (most recent call last):
    ...
    depgraph.errors.DepgraphError: [invalid_value] metadata: sample_id holds 9007199254740992.0 in row 2, a ...
    """
    if pd.api.types.is_float_dtype(values.dtype):
        numbers = values.to_numpy(dtype=np.float64, na_value=np.nan)
    elif values.dtype == object and pd.api.types.infer_dtype(values, skipna=True) in (
        "floating",
        "mixed",
        "mixed-integer-float",
    ):
        numbers = np.array(
            [float(v) if isinstance(v, (float, np.floating)) else np.nan for v in values], dtype=np.float64
        )
    else:
        return
    finite = np.isfinite(numbers)
    inexact = finite & ((np.floor(numbers) != numbers) | (np.abs(numbers) >= EXACT_FLOAT_INTEGERS))
    if inexact.any():
        i = int(np.flatnonzero(inexact)[0])
        raise inexact_float_id(float(numbers[i]), column, what, row=i + 1)


def inexact_float_id(value: float, column: str, what: str, row: int | None = None) -> DepgraphError:
    """The ``invalid_value`` of a floating-point id that is not a whole number below 2**53 (``row``: its line, when
    the reader knows it), as every engine words it."""
    where = "" if row is None else f" in row {row}"
    return DepgraphError(
        "invalid_value",
        f"{what}: {column} holds {value!r}{where}, a floating-point id that is not a whole number below 2**53 = "
        f"{EXACT_FLOAT_INTEGERS}: beyond that two ids can be stored as one number; store the column as text or "
        "integers",
        column=column,
        **({} if row is None else {"rows": [row]}),
    )


def row_keys(values: Any) -> np.ndarray:
    """The sample id each row names, to look up in a graph or spec: text exactly as given (a spec's ids are
    matched byte for byte), numbers as :func:`normalise_keys` writes them (``1`` and ``1.0`` name ``"1"``, as
    ``from_metadata`` reads them), ``None`` where missing. Vectorised unless the values mix text and numbers.

    >>> row_keys(["S1", " S2"]).tolist(), row_keys([1, 2]).tolist(), row_keys(np.array([1.0, np.nan])).tolist()
    (['S1', ' S2'], ['1', '2'], ['1', None])
    """
    s = values if isinstance(values, pd.Series) else pd.Series(values, dtype=None if len(values) else object)
    s = s.reset_index(drop=True)
    if pd.api.types.is_string_dtype(s.dtype) and s.dtype != object:
        return s.to_numpy(dtype=object, na_value=None)
    kind = pd.api.types.infer_dtype(s, skipna=True)
    if kind in ("string", "empty"):
        return s.to_numpy(dtype=object, na_value=None) if len(s) else np.empty(0, dtype=object)
    if kind in ("integer", "floating", "mixed-integer-float") or not pd.api.types.is_object_dtype(s.dtype):
        return normalise_keys(s).to_numpy(dtype=object)
    return np.array([v if isinstance(v, str) else _key_of(v) for v in s.to_numpy(dtype=object)], dtype=object)


def float_keys(arr: np.ndarray) -> np.ndarray:
    """Float values as keys: integral values without a decimal part (``1.0`` is ``"1"``), others by ``repr``,
    ``None`` where not finite.

    >>> float_keys(np.array([1.0, 2.5, np.nan])).tolist()
    ['1', '2.5', None]
    """
    out = np.full(arr.shape, None, dtype=object)
    finite = np.isfinite(arr)
    integral = finite & (np.floor(arr) == arr) & (np.abs(arr) < 2**53)
    out[integral] = arr[integral].astype(np.int64).astype(str)
    other = finite & ~integral
    out[other] = [repr(float(v)) for v in arr[other]]
    return out


def _key_of(value: Any) -> str | None:
    if value is None or value is pd.NA:
        return None
    if isinstance(value, (bool, np.bool_)):
        return str(bool(value))
    if isinstance(value, (int, np.integer)):
        return str(int(value))
    if isinstance(value, (float, np.floating)):
        if math.isnan(value):
            return None
        return str(int(value)) if float(value).is_integer() and abs(value) < 2**53 else repr(float(value))
    return str(value)


#: A cell starting with one of these characters is read as a formula by spreadsheets (Excel, LibreOffice, Google
#: Sheets), the CSV-injection vector OWASP names: ``=``, ``+``, ``-``, ``@``, tab and carriage return.
FORMULA_FIRST_CHARACTERS = "=+-@\t\r"
#: The same as a regular expression (RE2 in Arrow and Java's in Spark read it alike).
FORMULA_PATTERN = "^[=+\\-@\t\r]"


def formula_like(values: pa.Array | pa.ChunkedArray | pd.Series) -> np.ndarray:
    """Which cells begin with a character a spreadsheet reads as the start of a formula
    (:data:`FORMULA_FIRST_CHARACTERS`), one bool per cell, missing cells False. Vectorised in Arrow (no Python
    string per cell). ``-1`` counts too: OWASP's rule has no exception for numbers, and a spreadsheet turns such an
    id into a number (``-01`` becomes ``-1``) even when it runs nothing.

    >>> formula_like(pa.array(["S1", "=HYPERLINK(1)", "+1", "-1", "@SUM(A1)", "\\tx", None, "a=b"])).tolist()
    [False, True, True, True, True, True, False, False]
    >>> formula_like(pd.Series(["=1", 2, -3, None], dtype=object)).tolist(), formula_like(pd.Series([-1.5])).tolist()
    ([True, False, True, False], [False])
    """
    if isinstance(values, pd.Series):
        if values.dtype != object and not pd.api.types.is_string_dtype(values.dtype):
            if not isinstance(values.dtype, pd.CategoricalDtype):
                return np.zeros(len(values), dtype=bool)  # numbers, dates, booleans: written as such, never text
            values = values.astype(object)
        if values.dtype == object and pd.api.types.infer_dtype(values, skipna=True) not in ("string", "empty"):
            values = values.astype(str).where(values.notna(), None)  # mixed cells: judged as the text written
        values = (
            pa.array(values.array) if values.dtype != object else pa.array(values, type=pa.string(), from_pandas=True)
        )
    if isinstance(values, pa.ChunkedArray):
        values = values.combine_chunks() if values.num_chunks != 1 else values.chunk(0)
    if pa.types.is_dictionary(values.type):
        values = values.dictionary_decode()
    if not (pa.types.is_string(values.type) or pa.types.is_large_string(values.type)):
        values = values.cast(pa.string())
    return pc.match_substring_regex(values, FORMULA_PATTERN).fill_null(False).to_numpy(zero_copy_only=False)
