"""Numbers written as text: decimal commas, and attribute columns typed as a DataFrame types them.

A CSV file holds text; a DataFrame holds typed columns. So that a study's
metadata gives the same graph and spec whether it is handed over as a file or
as the frame pandas reads from it, an attribute column read from a text file
is typed by :func:`typed_attribute` (numbers become numbers, ``True``/``False``
booleans). Identifier columns are never typed: they stay text, so ``007``
stays ``007``. In a semicolon-separated file (a European Excel's "CSV"), a
number may be written with a decimal comma (``0,25``): :func:`decimal_points`
rewrites such cells for the readers that need numbers, and refuses a column
that mixes decimal commas and points (there a point may be a thousands
separator, ``1.234`` meaning 1234).

>>> typed_attribute(pd.Series(["30", "41", None], dtype="str")).tolist()
[30.0, 41.0, nan]
>>> typed_attribute(pd.Series(["0,5", "1"], dtype="str"), decimal=",").tolist()
[0.5, 1.0]
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc

from depgraph.common.arrays import text_buffers
from depgraph.errors import DepgraphError, describe_rows

#: A number written with a decimal comma: ``0,25``, ``-1,5``, ``,5``, ``2,5e-3``.
COMMA_NUMBER = r"^[+-]?\d*,\d+(?:[eE][+-]?\d+)?$"
#: A number written with a decimal point: ``0.25``, ``1.``, ``.5``, ``2.5e-3``.
POINT_NUMBER = r"^[+-]?(?:\d+\.\d*|\.\d+)(?:[eE][+-]?\d+)?$"
#: The spellings of booleans pandas reads from a CSV file.
TRUE_WORDS: tuple[str, ...] = ("True", "TRUE", "true")
FALSE_WORDS: tuple[str, ...] = ("False", "FALSE", "false")

_EXACT = 2**53  # the largest integer every float64 between -_EXACT and _EXACT holds exactly


def decimal_points(values: pd.Series, column: str, what: str) -> pd.Series:
    """A text column of a semicolon-separated file, its decimal commas written as points (``0,25`` → ``0.25``).

    Cells that are not numbers with a decimal comma are left as they are (the
    reader names the ones that are not numbers). A column that holds both
    decimal commas and decimal points is an ``ambiguity`` error naming a row of
    each. A column that is not text is returned as it is.

    >>> decimal_points(pd.Series(["0,25", "3", "x"]), "x", "coordinates").tolist()
    ['0.25', '3', 'x']
    """
    text = _arrow_text(values)
    if text is None or not _holds(text, ","):  # no comma at all: nothing to rewrite (cheaper than the pattern)
        return values
    comma = pc.fill_null(pc.match_substring_regex(text, COMMA_NUMBER), False)
    if not pc.any(comma).as_py():
        return values
    point = pc.fill_null(pc.match_substring_regex(text, POINT_NUMBER), False)
    if pc.any(point).as_py():
        a = int(pc.index(comma, True).as_py())
        b = int(pc.index(point, True).as_py())
        raise DepgraphError(
            "ambiguity",
            f"{what}: {column} mixes decimal commas ({describe_rows([a])}: {text[a].as_py()!r}) and decimal points "
            f"({describe_rows([b])}: {text[b].as_py()!r}); in a ';'-separated file a point may be a thousands "
            "separator, so write every number of the column one way",
            column=column,
            rows=[a, b],
        )
    rewritten = pc.if_else(comma, pc.replace_substring(text, ",", "."), text)
    return rewritten.to_pandas().set_axis(values.index)


def typed_attribute(values: pd.Series, decimal: str = ".") -> pd.Series:
    """An attribute column read from a text file, typed as pandas types it when it reads the file:

    * every value an integer → integers (``int64``; ``float64`` when a value is
      missing, as pandas reads it);
    * every value a number → ``float64``;
    * every value ``True``/``False`` (also ``TRUE``, ``true``...) → booleans;
    * anything else (a column mixing numbers and text, dates) stays text.

    A column stays text, too, when it holds an integer written other than
    plainly (``007`` is a code, where pandas would read 7; ``+7``; ``-0``), an
    integer beyond 2**53 (a float64 could not hold it exactly), or an infinite
    value. With
    ``decimal=","`` (a semicolon-separated file) decimal commas are numbers; a
    column mixing them with decimal points stays text. A column that is not
    text, or has no value, is returned as it is. The rule is
    :func:`attribute_kind` over :func:`attribute_evidence`, which the Spark engine
    gathers over its partitions.

    >>> typed_attribute(pd.Series(["1", "2"])).dtype, typed_attribute(pd.Series(["1", "2.5"])).tolist()
    (dtype('int64'), [1.0, 2.5])
    >>> typed_attribute(pd.Series(["007", "12"])).tolist(), typed_attribute(pd.Series(["3", "x"])).tolist()
    (['007', '12'], ['3', 'x'])
    """
    text = _arrow_text(values)
    if text is None or text.null_count == len(text):
        return values
    if decimal == "," and _holds(text, ","):
        if _holds(text, "."):  # decimal commas beside points (or a text column): not one way of writing numbers
            return values
        text = pc.replace_substring(text, ",", ".")  # a cell that is not a number stays one: the casts refuse it
    evidence, floats = _evidence(text)
    kind = attribute_kind(evidence)
    if kind == "bool":
        return _booleans(text, values)
    if kind == "text":
        return values
    if text.null_count:  # the numbers read with the missing cells as NaN, in place
        floats = pc.cast(text, pa.float64()).to_numpy(zero_copy_only=False)
    if kind == "int":
        return pd.Series(floats.astype(np.int64), index=values.index, dtype=np.int64)
    return pd.Series(floats, index=values.index, dtype=np.float64)


@dataclass(frozen=True)
class AttributeEvidence:
    """What decides how a text attribute column is typed (:func:`attribute_kind`), gathered from a column or from
    pieces of it and joined with ``|`` in any order (the Spark engine gathers it per partition): whether a cell
    holds a value, whether one is missing, and of the values whether every one is a boolean word, a finite number
    (as Arrow reads it), a whole number; whether one is written with a point or an exponent, whether a whole
    number is spelt as a code (``007``, ``+7``, ``-0``), the largest magnitude, and whether a cell of digits only
    holds a magnitude of 2**53 or more."""

    values: bool = False
    missing: bool = False
    words: bool = True
    numbers: bool = True
    integral: bool = True
    float_marks: bool = False
    codes: bool = False
    largest: float = 0.0
    long_digits: bool = False

    def __or__(self, other: AttributeEvidence) -> AttributeEvidence:
        return AttributeEvidence(
            self.values or other.values, self.missing or other.missing, self.words and other.words,
            self.numbers and other.numbers, self.integral and other.integral, self.float_marks or other.float_marks,
            self.codes or other.codes, max(self.largest, other.largest), self.long_digits or other.long_digits,
        )  # fmt: skip


def attribute_evidence(text: pa.Array) -> AttributeEvidence:
    """The evidence of a text column or a piece of it (decimal points already). A piece whose first value is
    neither a boolean word nor a number is a text column's without scanning it."""
    return _evidence(text)[0]


def _evidence(text: pa.Array) -> tuple[AttributeEvidence, np.ndarray | None]:
    """The evidence, and the values read as numbers (of the cells holding one) when every one is a number."""
    present = text.drop_null() if text.null_count else text
    missing = text.null_count > 0
    if not len(present):
        return AttributeEvidence(missing=missing), None
    not_numbers = AttributeEvidence(values=True, missing=missing, words=False, numbers=False)
    first = present[0].as_py()
    if first in TRUE_WORDS or first in FALSE_WORDS:
        words = pc.all(pc.is_in(present, value_set=pa.array(TRUE_WORDS + FALSE_WORDS, type=present.type))).as_py()
        return AttributeEvidence(values=True, missing=missing, words=bool(words), numbers=False), None
    if not _number(first):
        return not_numbers, None
    try:  # every cell a number? (the cast refuses anything else, cheaply)
        floats = pc.cast(present, pa.float64()).to_numpy(zero_copy_only=False)
    except (pa.ArrowInvalid, pa.ArrowNotImplementedError):
        return not_numbers, None
    magnitude = np.abs(floats)
    largest = float(magnitude.max())
    if not np.isfinite(largest):  # inf, or a NaN spelt some way pandas reads but depgraph does not
        return not_numbers, None
    integral = bool((floats == np.trunc(floats)).all())
    # how whole numbers are spelt matters only when every value is one (joined pieces: only when every piece's is)
    marks, codes = _spellings(present) if integral else (False, False)
    long_digits = largest >= _EXACT and bool(pc.any(pc.match_substring_regex(
        present.filter(pa.array(magnitude >= _EXACT)), r"^[+-]?\d+$")).as_py())  # fmt: skip
    evidence = AttributeEvidence(values=True, missing=missing, words=False, numbers=True, integral=integral,
                                 float_marks=marks, codes=codes, largest=largest, long_digits=long_digits)  # fmt: skip
    return evidence, floats


def attribute_kind(evidence: AttributeEvidence) -> str:
    """How a text attribute column with this evidence is typed: ``"bool"``, ``"int"`` (int64), ``"float"``
    (float64) or ``"text"`` (kept as it is)."""
    if not evidence.values:
        return "text"
    if evidence.words:
        return "bool"
    if not evidence.numbers:
        return "text"
    if evidence.integral and not evidence.float_marks:  # whole numbers written as integers
        if evidence.codes or evidence.largest >= _EXACT:  # a code, or beyond what a float64 holds
            return "text"
        return "float" if evidence.missing else "int"
    return "text" if evidence.long_digits else "float"  # an integer too large for a float64 (1e20 stays a float)


def _spellings(text: pa.Array) -> tuple[bool, bool]:
    """Of a column of numbers (no nulls): whether a cell has a point or an exponent (``72.0``, ``1e3``: floats, as
    pandas reads them), and whether a cell is an integer spelt other than plainly (``007``, ``-0``, ``+7``: codes,
    not numbers). Read from the Arrow buffers (a byte or two per cell), not cell by cell."""
    offsets, data = text_buffers(text)
    cells = data[offsets[0] : offsets[-1]]
    marks = bool(((cells == ord(".")) | (cells == ord("e")) | (cells == ord("E"))).any())
    starts, lengths = offsets[:-1], np.diff(offsets)
    first = data[starts]
    second = np.where(lengths > 1, data[np.minimum(starts + 1, offsets[-1] - 1)], 0)
    code = (first == ord("+")) | ((first == ord("0")) & (lengths > 1)) | ((first == ord("-")) & (second == ord("0")))
    return marks, bool(code.any())


def _holds(text: pa.Array, mark: str) -> bool:
    return bool(pc.any(pc.match_substring(text, mark)).as_py())


def _number(cell: str) -> bool:
    try:
        float(cell)
    except ValueError:
        return False
    return True


def _booleans(text: pa.Array, values: pd.Series) -> pd.Series:
    """A column of boolean words (its evidence says so) as booleans; with a missing cell, as objects."""
    truth = pc.is_in(text, value_set=pa.array(TRUE_WORDS, type=text.type)).to_numpy(zero_copy_only=False)
    if text.null_count:
        missing = pc.is_null(text).to_numpy(zero_copy_only=False)
        return pd.Series(np.where(missing, None, truth).astype(object), index=values.index, dtype=object)
    return pd.Series(truth, index=values.index, dtype=bool)


def _arrow_text(values: pd.Series) -> pa.Array | None:
    """A text column as one Arrow text array (null where missing); None when it is not text."""
    if pd.api.types.is_string_dtype(values.dtype) and values.dtype != object:
        array = pa.array(values.array)
    elif values.dtype == object and pd.api.types.infer_dtype(values, skipna=True) in ("string", "empty"):
        array = pa.array(values.to_numpy(dtype=object), type=pa.large_string(), from_pandas=True)
    else:
        return None
    if isinstance(array, pa.ChunkedArray):
        array = array.combine_chunks()
    return array.cast(pa.large_string()) if array.type != pa.large_string() else array
