"""A large JSON document's long arrays of text, parsed by Arrow's JSON reader instead of into Python strings.

A graph or spec file of a million samples is mostly a few long arrays of ids, each written on a line of its own
(``"Sample": ["S0","S1",…],``). Parsed by orjson, every id becomes a Python string and is then copied into Arrow;
here such lines are cut out of the text and made Arrow string arrays directly — cut apart at their quotes when
written as depgraph writes them, compact and without escapes (:func:`plain_text_array`, a few numpy passes over the
bytes), else parsed by ``pyarrow.json`` —, and the rest of the document (small: the envelope, number arrays) is
parsed as usual with a unique placeholder where each array stood. :func:`place` then puts the arrays back in the
parsed document.

Nothing changes meaning on the way, because nothing is guessed:

* a line is taken only if it is one object member whose value is an array of text and nothing more (the key
  without escapes, ``": ["`` then text to the line's last ``]``, a comma at most after it): a line of JSON text
  always starts outside a string (strings cannot hold a line break), and Arrow must read the cut-out bytes as
  exactly one member ``v`` holding a list of strings, or nothing is taken;
* Arrow refuses what orjson refuses in strings (invalid UTF-8, lone surrogates, raw control characters, bad
  escapes) and decodes escapes the same way; an array that is not all text (``["a", 1]``) makes Arrow fail;
* every placeholder must be found again as an object member's value, each exactly once.

When any of this does not hold, :func:`split` or :func:`place` returns None and the whole document is parsed as
usual. Readers that take these arrays read the document again the usual way whenever it fails a check, so a
refusal always comes from (and names what) the exact reader finds.
"""

from __future__ import annotations

import io
import re
import secrets
from collections.abc import Iterator
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.json as pajson

#: Lines shorter than this stay with the usual parser (only long arrays are worth cutting out).
LONG_LINE = 1 << 16
#: The start of a line that is one object member holding an array of text: blanks, a key without escapes or
#: control characters, then ``: ["`` (the array's first element is text).
_MEMBER = re.compile(rb'[ \t]*"[^"\\\x00-\x1f]*": (?=\[")')


def split(raw: bytes) -> tuple[bytes, str, list[pa.Array]] | None:
    """``raw`` with each long line's array of text replaced by a placeholder string, the placeholders' common
    prefix, and the arrays (in order: placeholder ``<prefix><i>`` stood for ``arrays[i]``); None when there is no
    such line or Arrow does not read the cut-out arrays as lists of text."""
    spans = list(_long_members(raw))
    if not spans:
        return None
    prefix = f"depgraph-array-{secrets.token_hex(12)}-"
    if raw.find(prefix.encode()) >= 0:  # (never, but a placeholder must not be something the document says)
        return None
    arrays = _parsed_arrays(raw, spans)
    if arrays is None:
        return None
    text = memoryview(raw)
    pieces, last = [], 0
    for i, (start, stop) in enumerate(spans):
        pieces += [text[last:start], b'"', f"{prefix}{i}".encode(), b'"']
        last = stop
    pieces.append(text[last:])
    return b"".join(pieces), prefix, arrays


def _long_members(raw: bytes) -> Iterator[tuple[int, int]]:
    """Where each long line's array of text starts and ends (``[`` to ``]``), for lines that are one object
    member holding an array of text; found by substring searches, each line looked at once or twice."""
    at = 0
    while (hit := raw.find(b'": ["', at)) >= 0:
        start = raw.rfind(b"\n", 0, hit) + 1
        end = raw.find(b"\n", hit)
        end = len(raw) if end < 0 else end
        at = end + 1
        if end - start < LONG_LINE:
            continue
        member = _MEMBER.match(raw, start, end)
        if member is None or member.end() != hit + 3:
            continue
        stop = end - 1 if raw[end - 1] == ord("\r") else end
        stop -= raw[stop - 1] == ord(",")
        if raw[stop - 1] == ord("]"):
            yield member.end(), stop


#: What Arrow must read each cut-out array as: the one member ``v``, a list of text (anything else fails).
_ONE_TEXT_LIST = pajson.ParseOptions(
    explicit_schema=pa.schema([("v", pa.list_(pa.string()))]), unexpected_field_behavior="error"
)


def _parsed_arrays(raw: bytes, spans: list[tuple[int, int]]) -> list[pa.Array] | None:
    """Each span of ``raw`` as an Arrow string array: cut apart at its quotes where it is written as depgraph
    writes it (:func:`plain_text_array`), else parsed by Arrow's JSON reader; None if any is not an array of
    text."""
    view = np.frombuffer(raw, dtype=np.uint8)
    cut = [plain_text_array(view[start:stop]) for start, stop in spans]
    rest = [span for span, array in zip(spans, cut, strict=True) if array is None]
    parsed = _json_arrays(raw, rest) if rest else []
    if parsed is None:
        return None
    taken = iter(parsed)
    return [next(taken) if array is None else array for array in cut]


def plain_text_array(span: np.ndarray) -> pa.Array | None:
    """A JSON array of text written compactly with no escape (``["S1","S2"]``: what depgraph writes for ids) as
    an Arrow string array, found from the positions of its quotes; None when ``span`` is anything else (a blank
    between elements, an escape, a raw control character, an element that is not text…), which the JSON reader
    then reads. With no backslash every ``"`` opens or closes a string, so the quotes pair up exactly; between a
    closing and the next opening quote there must be one comma, and the text is every byte inside the pairs,
    checked to be UTF-8 as a JSON parser checks it (no lone surrogate, no overlong form).

    >>> plain_text_array(np.frombuffer(b'["S1","a,b",""]', np.uint8)).to_pylist()
    ['S1', 'a,b', '']
    >>> plain_text_array(np.frombuffer(b'["S1", "S2"]', np.uint8)) is None
    True
    """
    n_bytes = len(span)
    if not 4 <= n_bytes < 2**31 or span[0] != 0x5B or span[1] != 0x22 or span[-2] != 0x22 or span[-1] != 0x5D:
        return None  # (beyond 2 GiB the text needs 64-bit offsets: the JSON reader's case)
    if ((span < 0x20) | (span == 0x5C)).any():  # a raw control character (never valid) or an escape
        return None
    quotes = np.flatnonzero(span == 0x22)
    opening, closing = quotes[0::2], quotes[1::2]
    if len(opening) != len(closing):
        return None
    between = opening[1:] - closing[:-1]
    if len(between) and ((between != 2).any() or (span[closing[:-1] + 1] != 0x2C).any()):
        return None
    kept = np.ones(n_bytes, dtype=bool)
    kept[[0, -1]] = False
    kept[quotes] = False
    kept[closing[:-1] + 1] = False
    offsets = np.zeros(len(opening) + 1, dtype=np.int32)
    np.cumsum(closing - opening - 1, out=offsets[1:])
    array = pa.StringArray.from_buffers(len(opening), pa.py_buffer(offsets), pa.py_buffer(span[kept]))
    try:
        array.validate(full=True)
    except pa.ArrowInvalid:
        return None
    return array


def _json_arrays(raw: bytes, spans: list[tuple[int, int]]) -> list[pa.Array] | None:
    """Each span of ``raw`` parsed by Arrow as the value of a member ``v``, one line each; None unless every line
    is one object with that one member, holding a list of strings."""
    text = memoryview(raw)
    lines = b"".join(piece for start, stop in spans for piece in (b'{"v":', text[start:stop], b"}\n"))
    widest = max(stop - start for start, stop in spans) + 16
    try:
        table = pajson.read_json(
            io.BytesIO(lines), read_options=pajson.ReadOptions(block_size=max(widest, 1 << 20)),
            parse_options=_ONE_TEXT_LIST,
        )  # fmt: skip
    except (pa.ArrowInvalid, UnicodeDecodeError):
        return None
    column = table.column("v")
    if table.num_rows != len(spans) or column.null_count:
        return None
    arrays = [chunk[i].values for chunk in column.chunks for i in range(len(chunk))]  # slices: nothing copied
    try:
        for array in arrays:
            array.validate(full=True)  # UTF-8 and offsets, every element
    except pa.ArrowInvalid:
        return None
    return arrays


#: Where readers take an Arrow array for a JSON array of text (``*``: any key): a graph's node keys, attribute
#: columns and edge lists, a spec's sample columns. A placeholder anywhere else gets the list back.
TAKEN_AT = (("nodes", "*"), ("attributes", "*", "*"), ("edges", "*", "*"), ("samples", "*"))


def _taken(path: tuple[str, ...]) -> bool:
    return any(
        len(path) == len(pattern) and all(p in ("*", step) for p, step in zip(pattern, path, strict=True))
        for pattern in TAKEN_AT
    )


def place(doc: Any, prefix: str, arrays: list[pa.Array]) -> Any:
    """``doc`` (the parse of :func:`split`'s text) with each placeholder replaced by its array where
    :data:`TAKEN_AT` says a reader takes one, and by the list it holds elsewhere; or None unless every
    placeholder is an object member's value, found once. Arrays of numbers and of lists are not searched element
    by element (a placeholder never stands in one)."""
    found = 0
    pending: list[tuple[Any, tuple[str, ...]]] = [(doc, ())]
    while pending:
        value, path = pending.pop()
        if type(value) is dict:
            for key, item in value.items():
                if type(item) is str and item.startswith(prefix):
                    index = item[len(prefix) :]
                    if not index.isdigit() or int(index) >= len(arrays):
                        return None
                    array = arrays[int(index)]
                    value[key] = array if _taken((*path, key)) else array.to_pylist()
                    found += 1
                elif type(item) in (dict, list):
                    pending.append((item, (*path, key)))
        elif type(value) is list and value and type(value[0]) in (dict, list):
            pending.extend((item, (*path, "[]")) for item in value if type(item) in (dict, list))
    return doc if found == len(arrays) else None
