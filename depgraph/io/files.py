"""Reading tables and writing files, with the failures a user can cause named.

Tables come as pandas, polars or pyarrow objects, or as CSV / TSV / Parquet /
Excel paths. CSV cells are read as text so identifiers keep their spelling ("01"
stays "01"); the cells listed in :data:`MISSING_TOKENS` mean "missing".

Every file depgraph writes goes through :func:`atomic_path` (from
:mod:`depgraph.io.outputs`, re-exported here for the writers): the content is
staged beside the target and put in place only when the command succeeds, so
a failure never leaves a half-written file; what cannot be replaced (a FIFO, a
device) is written through or refused, never replaced.
"""

from __future__ import annotations

import json
import os
import stat
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

import numpy as np
import orjson
import pandas as pd
import pyarrow as pa

from depgraph.common.arguments import path as checked_path
from depgraph.errors import DepgraphError
from depgraph.io import textarrays
from depgraph.io.delimited import checked_encoding
from depgraph.io.outputs import atomic_path as atomic_path
from depgraph.io.outputs import atomic_write_bytes as atomic_write_bytes
from depgraph.io.tables import MISSING_TOKENS as MISSING_TOKENS  # re-exported: readers import it from here
from depgraph.io.tables import checked_frame, frame_from_arrow, read_table_file

TableLike = Any  # pandas / polars DataFrame, pyarrow Table, or a path
T = TypeVar("T")


def existing_file(path: str | os.PathLike[str], what: str = "file") -> Path:
    """``path`` as a Path, or a DepgraphError(io) saying why it cannot be read (``invalid_argument`` when it is
    not a path at all)."""
    p = Path(checked_path(path, what))
    try:
        found = p.stat()
    except FileNotFoundError:
        raise DepgraphError("io", f"{what} {str(p)!r} does not exist", path=str(p)) from None
    except OSError as exc:  # a name too long, a folder the user cannot search, a loop of links
        raise DepgraphError("io", f"{what} {str(p)!r} cannot be used: {exc.strerror}", path=str(p)) from None
    if stat.S_ISDIR(found.st_mode):
        raise DepgraphError("io", f"{what} {str(p)!r} is a directory, not a file", path=str(p))
    return p


def describe_source(source: Any, what: str) -> str:
    """``what`` plus the file name when the source is a path, for messages.

    >>> describe_source("cohort/meta.csv", "metadata")
    "metadata 'cohort/meta.csv'"
    >>> describe_source(pd.DataFrame(), "metadata")
    'metadata'
    """
    if isinstance(source, (str, os.PathLike)):
        return f"{what} {str(source)!r}"
    return what


def file_name(path: str | os.PathLike[str]) -> str:
    """The name a record keeps of an input file: its last component, never its folder, so the same data read
    from two places (or by a relative and an absolute path) gives the same graph and spec bytes.

    >>> file_name("/home/ana/cohort/kinship.kin0"), file_name("kinship.kin0")
    ('kinship.kin0', 'kinship.kin0')
    """
    return Path(path).name


def read_table(
    source: TableLike,
    what: str = "table",
    *,
    encoding: str | None = None,
    sheet: str | int | None = None,
    delimiter: str | None = None,
) -> pd.DataFrame:
    """A pandas DataFrame from a table object or a CSV/TSV/Parquet/Excel path.

    ``what`` names the table in messages (``"metadata"``); a path is added to
    it once. Column names are stripped of surrounding blanks; a name given
    twice is a ``schema`` error. Text files are read with every cell as a
    string, with the delimiter their header uses (``,`` ``;`` tab ``|``), in
    UTF-8 unless ``encoding`` names another (see :mod:`depgraph.io.tables` and
    :mod:`depgraph.io.delimited` for every rule and refusal); ``sheet`` picks an
    Excel workbook's sheet (a name, or a number from 1); ``delimiter`` sets a
    text file's delimiter instead of reading it from the header. Arrow-typed tables
    (Parquet, pyarrow, polars) are converted by
    :func:`depgraph.io.tables.frame_from_arrow`'s rules, pandas frames and Excel
    sheets checked by :func:`depgraph.io.tables.checked_frame`'s.

    >>> read_table(pd.DataFrame({" sample_id ": ["S1"]})).columns.tolist()
    ['sample_id']
    """
    label = describe_source(source, what)
    checked_encoding(encoding)  # a misspelt codec is refused whatever the source
    for option, value in (("sheet", sheet), ("delimiter", delimiter)):
        if value is not None and not isinstance(source, (str, os.PathLike)):
            kind = "an Excel workbook's" if option == "sheet" else "a text table's"
            raise DepgraphError("invalid_argument", f"{option}= applies to {kind} path; {what} is a table object")
    if isinstance(source, pd.DataFrame):
        return checked_frame(source, label)
    if isinstance(source, pa.RecordBatch):
        source = pa.Table.from_batches([source])
    if isinstance(source, pa.Table):
        return frame_from_arrow(source, label)
    if hasattr(source, "to_arrow") and not isinstance(source, (str, os.PathLike)):
        return frame_from_arrow(source.to_arrow(), label)  # polars DataFrame
    if isinstance(source, (str, os.PathLike)):
        return read_table_file(existing_file(source, what), label, encoding=encoding, sheet=sheet, delimiter=delimiter)
    raise DepgraphError(
        "invalid_argument",
        f"{what} must be a DataFrame, a pyarrow/polars table or a CSV/TSV/Parquet/Excel path, "
        f"not {type(source).__name__}",
    )


#: Deepest nesting a document may have. depgraph's own documents reach about 6 levels (a spec's fold positions are
#: at level 5; a graph's history records a few more); deeper is refused before any reader recurses into it.
MAX_NESTING = 32
#: Integers JSON readers keep exact: orjson reads anything beyond them as a float, silently rounded.
JSON_INTEGERS = (-(2**63), 2**64 - 1)


def read_json(path: str | os.PathLike[str], what: str = "file", text_arrays: bool = False) -> Any:
    """The parsed JSON of an existing, non-empty file (``io``, ``empty_input``
    or ``parse`` errors otherwise).

    With ``text_arrays``, a file of at least :data:`TEXT_ARRAYS_FROM` bytes has its long arrays of text (each on
    a line of its own, as depgraph writes them) parsed into Arrow string arrays by :mod:`depgraph.io.textarrays`
    rather than into Python strings; the document is otherwise the same, and is parsed as usual whenever that
    cannot be done exactly or the rest of it fails a check (so an error names what it does in the whole file).

    Three things JSON allows but depgraph's documents never hold are ``parse`` errors, since each would make
    readers disagree or a value change meaning without a word:

    * an object that repeats a key: JSON readers disagree on which of the two values counts (orjson and Python
      keep the last, R's jsonlite lets ``$`` find the first), so a second ``"samples"`` could show each reader a
      different document;
    * an integer beyond 64 bits (:data:`JSON_INTEGERS`): orjson reads it as a float, silently rounded (a seed of
      ``2**70 + 1`` would read as ``2**70``);
    * nesting deeper than :data:`MAX_NESTING` levels.

    orjson parses (it reports none of these). :func:`_document_shape` counts the keys and containers orjson kept
    and how deep they go; only a document whose key count differs from the keys the text holds, or whose text
    holds a run of 19 or more digits outside what looks like a string, is parsed again by Python's json module,
    which names the repeated key or the long integer exactly.
    """
    raw = read_bytes(path, what)
    if not raw or raw.isspace():  # (strip() would copy the whole file)
        raise DepgraphError("empty_input", f"{what} {str(path)!r} is empty", path=str(path))
    if text_arrays and len(raw) >= TEXT_ARRAYS_FROM:
        doc = _with_text_arrays(raw, path, what)
        if doc is not None:
            return doc
    return _parsed(raw, path, what)


#: Files from this size up have their long text arrays parsed into Arrow when the reader asks for it.
TEXT_ARRAYS_FROM = 1 << 22


class TextArrayDocument(dict):  # type: ignore[type-arg]
    """A parsed document some of whose long text arrays are Arrow string arrays (:func:`read_json` with
    ``text_arrays``); a reader that finds fault with it reads the file again the usual way."""


def read_parsed(path: str | os.PathLike[str], what: str, doc: Any, read: Callable[[Any], T]) -> T:
    """``read(doc)``, ``doc`` being the parse of the JSON file at ``path`` (``what`` it is, as given to
    :func:`read_json`). The readers check Arrow text arrays as they check lists, so a :class:`TextArrayDocument`
    that fails a check is refused with that check's error, without parsing a large file a second time; only a
    reader that could not take an Arrow array at all (an exception that is no :class:`DepgraphError`) has the file
    read again the usual way."""
    if not isinstance(doc, TextArrayDocument):
        return read(doc)
    try:
        return read(doc)
    except DepgraphError:
        raise
    except Exception:  # a reader not ready for an Arrow array: the exact path reads the file
        return read(read_json(path, what))


def _with_text_arrays(raw: bytes, path: str | os.PathLike[str], what: str) -> TextArrayDocument | None:
    cut = textarrays.split(raw)
    if cut is None:
        return None
    remainder, prefix, arrays = cut
    try:
        doc = _parsed(remainder, path, what, extra_depth=1)
    except DepgraphError:
        return None  # the whole text again, for the message
    placed = textarrays.place(doc, prefix, arrays) if isinstance(doc, dict) else None
    return None if placed is None else TextArrayDocument(placed)


def _parsed(raw: bytes, path: str | os.PathLike[str], what: str, extra_depth: int = 0) -> Any:
    """``raw`` parsed, with every check :func:`read_json` names (``extra_depth``: levels the text does not show,
    which the depth allowed is lowered by)."""
    try:
        doc = orjson.loads(raw)
    except orjson.JSONDecodeError as exc:
        raise DepgraphError("parse", f"{what} {str(path)!r} is not valid JSON: {exc}", path=str(path)) from exc
    keys, depth = _document_shape(raw, doc)
    if depth + extra_depth > MAX_NESTING:
        raise DepgraphError(
            "parse",
            f"{what} {str(path)!r} nests objects and arrays {depth} levels deep; depgraph's documents never go "
            f"beyond a few levels and readers refuse more than {MAX_NESTING}",
            path=str(path),
        )
    repeats = _may_repeat_keys(raw, keys)
    long_integers = _may_hold_long_integers(raw)
    if repeats or long_integers:
        problem = _exact_problem(raw)
        if problem is not None:
            kind, value = problem
            if kind == "key":
                message = (
                    f"repeats the key {value!r} within one object; JSON readers disagree on which value counts, "
                    "so depgraph refuses it"
                )
            else:
                shown = value if len(value) <= 40 else value[:37] + "..."
                message = (
                    f"holds the integer {shown}, beyond 64 bits: JSON readers would round it to a float without "
                    "a word; write it as text"
                )
            raise DepgraphError("parse", f"{what} {str(path)!r} {message}", path=str(path), **{kind: value})
    return doc


def _document_shape(raw: bytes, doc: Any) -> tuple[int, int]:
    """How many object keys ``doc`` (the parse of ``raw``) holds, and how deeply it nests (a top-level object
    or array is level 1).

    Lists whose first element is not a container are columns of values and are not searched element by
    element; when the text holds more ``[`` and ``{`` than the containers found (a container further into such
    a list, or brackets inside strings), those lists are checked again, each in one vectorised pass."""
    opens = raw.count(b"[") + raw.count(b"{")
    keys, containers, depth = _walk(doc, thorough=False)
    if containers != opens:
        keys, containers, depth = _walk(doc, thorough=True)
    return keys, depth


_SCALAR_LISTS = frozenset({"string", "integer", "floating", "mixed-integer-float", "boolean", "empty", "decimal"})


def _walk(doc: Any, thorough: bool) -> tuple[int, int, int]:
    keys = containers = deepest = 0
    pending = [(doc, 1)]
    while pending:
        value, level = pending.pop()
        if type(value) is dict:
            keys += len(value)
        elif type(value) is not list:
            continue
        containers += 1
        deepest = max(deepest, level)
        if type(value) is dict:
            pending.extend((v, level + 1) for v in value.values() if type(v) in (dict, list))
        elif value and (type(value[0]) in (dict, list) or (thorough and _holds_containers(value))):
            pending.extend((v, level + 1) for v in value if type(v) in (dict, list))
    return keys, containers, deepest


def _holds_containers(values: list[Any]) -> bool:
    return pd.api.types.infer_dtype(values, skipna=True) not in _SCALAR_LISTS  # one pass in C


def _may_repeat_keys(raw: bytes, kept: int) -> bool:
    """False only when no object of ``raw`` repeats a key (``kept``: the keys its parse holds).

    Every key in the text ends with ``"``, JSON blank space and ``:``, so the
    colons right after a ``"`` (after removing the blanks, when some colon
    follows one) number at least the keys in the text (a string holding ``":``
    adds more), which number at least those the parse kept (one per distinct key
    of an object). When the two counts are equal, no key was repeated. Costs one
    pass over the bytes.
    """
    text = np.frombuffer(raw, dtype=np.uint8)
    colons = np.flatnonzero(text == ord(":"))
    before = text[np.maximum(colons - 1, 0)]
    if np.isin(before, _BLANKS).any():  # "key" : value somewhere: count again without the blanks
        in_text = raw.translate(None, bytes(_BLANKS)).count(b'":')
    else:
        in_text = int(np.count_nonzero(before == ord('"')))
    return in_text != kept


_BLANKS = np.frombuffer(b" \t\r\n", dtype=np.uint8)
#: Digits to "1", every other byte to "0": a run of 19 digits is then one substring search away.
_DIGIT_MAP = bytes(0x31 if 0x30 <= b <= 0x39 else 0x30 for b in range(256))
_LONG_RUN = 19  # the fewest digits of an integer beyond 64 bits (-9223372036854775809)
#: Bytes that may stand before and after a number in JSON (strings end with '"' instead).
_AROUND_NUMBERS = np.frombuffer(b" \t\r\n,:[]{}-", dtype=np.uint8)


def _may_hold_long_integers(raw: bytes) -> bool:
    """False only when ``raw`` holds no integer literal of 19 or more digits (one beyond 64 bits needs that
    many): no run of 19 digits, or every such run touches a letter, a quote or a decimal point (inside a
    string, or a float's digits). A substring search, and a vectorised look at the runs only when one exists."""
    digits = raw.translate(_DIGIT_MAP)
    if digits.find(b"1" * _LONG_RUN) < 0:
        return False
    is_digit = np.frombuffer(digits, dtype=np.uint8) == 0x31
    edges = np.flatnonzero(np.diff(is_digit.view(np.int8), prepend=0, append=0))
    starts, ends = edges[::2], edges[1::2]  # runs of digits: [start, end)
    long = (ends - starts) >= _LONG_RUN
    starts, ends = starts[long], ends[long]
    text = np.frombuffer(raw, dtype=np.uint8)
    before = np.where(starts > 0, text[np.maximum(starts - 1, 0)], ord(" "))
    after = np.where(ends < len(text), text[np.minimum(ends, len(text) - 1)], ord(" "))
    return bool((np.isin(before, _AROUND_NUMBERS) & np.isin(after, _AROUND_NUMBERS)).any())


def _exact_problem(raw: bytes) -> tuple[str, str] | None:
    """``("key", k)`` for the first key some object of ``raw`` repeats, else ``("integer", text)`` for the first
    integer beyond 64 bits, or None: Python's json parses ``raw`` again (the document nests at most
    :data:`MAX_NESTING` levels, so it cannot recurse too deeply)."""

    def refuse_repeats(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
        seen: dict[str, Any] = {}
        for key, value in pairs:
            if key in seen:
                raise _Found("key", key)
            seen[key] = value
        return seen

    long_integers: list[str] = []

    def exact_integer(text: str) -> int:
        value = int(text)
        if not JSON_INTEGERS[0] <= value <= JSON_INTEGERS[1]:
            long_integers.append(text)  # a repeated key, the decoy readers would disagree on, is named first
        return value

    try:
        json.loads(raw.decode("utf-8"), object_pairs_hook=refuse_repeats, parse_int=exact_integer)
    except _Found as found:
        return found.kind, found.value
    return ("integer", long_integers[0]) if long_integers else None


class _Found(Exception):
    def __init__(self, kind: str, value: str) -> None:
        super().__init__(value)
        self.kind = kind
        self.value = value


def read_bytes(path: str | os.PathLike[str], what: str = "file") -> bytes:
    """The bytes of an existing regular file, or DepgraphError(io)."""
    p = existing_file(path, what)
    try:
        return p.read_bytes()
    except OSError as exc:
        raise DepgraphError("io", f"{what} {str(p)!r} cannot be read: {exc.strerror}", path=str(p)) from exc
