"""How a delimited text table is laid out: its encoding, its delimiter, where its rows end.

Tables come as people export them: comma-separated from most tools,
semicolon-separated from a European Excel, tab-separated from scripts, ``|``
now and then, named ``.csv`` whatever they hold; UTF-8 with or without a
byte-order mark, or Latin-1 / Windows-1252 from an older Excel; and ending in
rows of empty cells (``,,,``) that a spreadsheet wrote. This module decides
each of these from the bytes, by documented rules, for every text table
depgraph reads (:mod:`depgraph.io.tables`) and for the files of genetics tools
(:mod:`depgraph.ingest.kinship`):

* :func:`header_delimiter` — the delimiter, from the header line and the rows below it;
* :func:`content_end` — where the last row holding a value ends;
* :func:`checked_encoding`, :func:`to_utf8` and :func:`not_utf8` — an ``encoding`` option, and the
  ``parse`` error for bytes that are not UTF-8 (naming the line, and how to read the file).

>>> header_delimiter(b"sample_id;subject_id;weight\\nS1;P1;0,25\\n", preferred=",")
';'
"""

from __future__ import annotations

import codecs
import csv
import io
import mmap
from pathlib import Path

from depgraph.errors import DepgraphError

#: Delimiters a text table may use, in the order a tie between two of them is broken.
DELIMITERS: tuple[str, ...] = (",", "\t", ";", "|")


def checked_delimiter(delimiter: object) -> str | None:
    """A delimiter given by name: one of :data:`DELIMITERS` (``tab`` for ``"\\t"``), or None; else
    ``invalid_argument``.

    >>> checked_delimiter("tab"), checked_delimiter(";"), checked_delimiter(None)
    ('\\t', ';', None)
    """
    if delimiter is None:
        return None
    named = "\t" if isinstance(delimiter, str) and delimiter.strip().lower() == "tab" else delimiter
    if named not in DELIMITERS:
        shown = ", ".join(repr(d) for d in DELIMITERS if d != "\t")
        raise DepgraphError("invalid_argument", f"a delimiter is {shown} or tab, not {delimiter!r}")
    return str(named)


#: The delimiter each file extension names: a header that holds several delimiters prefers it in a tie.
EXTENSION_DELIMITERS: dict[str, str] = {".csv": ",", ".tsv": "\t", ".tab": "\t", ".txt": "\t", ".psv": "|"}

#: The UTF-8 byte-order mark some tools (Excel's "CSV UTF-8") write first; it is not part of the first column's name.
BOM = b"\xef\xbb\xbf"

_SAMPLE_BYTES = 1 << 16  # the bytes looked at to choose a delimiter
_SAMPLE_ROWS = 100  # the rows below the header that must agree with it
_BLANKS = b" \t\r\n\f\v"


# --------------------------------------------------------------------------- the delimiter
def header_delimiter(sample: bytes, preferred: str | None = None) -> str | None:
    """The delimiter of a table whose text starts with ``sample``, or None when its header holds none (one column).

    The header is the first line that is not blank. Each of :data:`DELIMITERS`
    it holds outside quotes is a candidate:

    * one candidate is the delimiter;
    * with several, each is tried on the rows below the header (up to 100,
      within the first 64 kB): the candidates that give every row the
      header's number of fields are kept, and among them the one giving the
      most fields wins, then ``preferred`` (the file extension's, see
      :data:`EXTENSION_DELIMITERS`), then the first in :data:`DELIMITERS`
      order. So a ``.csv`` from a European Excel whose column name holds a
      comma (``weight (kg, at entry)``) is still read as semicolon-separated.
      When no candidate fits every row, ``preferred`` wins if the header holds
      it, else the candidate the header holds most often, and the full read
      names the rows that do not fit.

    >>> header_delimiter(b"\\n\\nsample_id,subject_id\\n")
    ','
    >>> header_delimiter(b"sample_id\\nS1\\n") is None
    True
    >>> header_delimiter(b"id\\tweight (kg, at entry)\\nS1\\t0.5\\n", preferred=",")
    '\\t'
    """
    text = _decoded_sample(sample)
    lines = text.splitlines(keepends=True)
    first = next((i for i, line in enumerate(lines) if line.strip()), None)
    if first is None:
        return None
    body = "".join(lines[first:])
    header = {d: _fields(body, d) for d in DELIMITERS}
    candidates = [d for d in DELIMITERS if header[d] and len(header[d][0]) > 1]
    if len(candidates) <= 1:
        return candidates[0] if candidates else None
    truncated = len(sample) >= _SAMPLE_BYTES
    fitting = []
    for d in candidates:
        rows = header[d][1:]
        if truncated and rows:
            rows = rows[:-1]  # the sample may end inside the last row
        if all(len(row) == len(header[d][0]) for row in rows if _holds_value(row)):
            fitting.append(d)
    if fitting:
        return max(fitting, key=lambda d: (len(header[d][0]), d == preferred, -DELIMITERS.index(d)))
    if preferred in candidates:
        return preferred
    return max(candidates, key=lambda d: (len(header[d][0]), -DELIMITERS.index(d)))


def _decoded_sample(sample: bytes) -> str:
    """The sample as text, a byte-order mark dropped; bytes that are not UTF-8 are
    replaced (the full read names them), and a character cut by the sample's end is dropped."""
    return codecs.decode(sample.removeprefix(BOM), "utf-8", errors="replace")


def _fields(text: str, delimiter: str) -> list[list[str]]:
    """The header's fields and up to :data:`_SAMPLE_ROWS` rows' below it, split by ``delimiter`` as pyarrow does
    (double quotes, doubled quotes inside them); blank lines are skipped. Empty when the header cannot be split."""
    reader = csv.reader(io.StringIO(text, newline=""), delimiter=delimiter, quotechar='"', doublequote=True)
    rows: list[list[str]] = []
    try:
        for row in reader:
            if _holds_value(row):  # blank lines, and rows of nothing (,,,), never decide
                rows.append(row)
            if len(rows) > _SAMPLE_ROWS:
                break
    except csv.Error:  # a NUL byte or the like: the full read names it
        return rows
    return rows


def _holds_value(row: list[str]) -> bool:
    return any(cell.strip() for cell in row)


# --------------------------------------------------------------------------- where the rows end
def content_end(data: bytes | mmap.mmap, delimiter: str | None) -> int:
    """The length of ``data`` without the lines at its end that hold nothing but
    delimiters and blanks (``,,,`` rows a spreadsheet writes below a table).

    Only whole lines are left out; a line holding anything else ends the table.

    >>> data = b"sample_id,subject_id\\nS1,P1\\n,\\n , \\n\\n"
    >>> data[: content_end(data, ",")]
    b'sample_id,subject_id\\nS1,P1\\n'
    """
    filler = _BLANKS + (delimiter.encode() if delimiter else b"")
    end = len(data)
    while end > 0:
        start = max(0, end - _SAMPLE_BYTES)
        kept = bytes(data[start:end]).rstrip(filler)
        if kept:
            newline = data.find(b"\n", start + len(kept))
            return len(data) if newline < 0 else newline + 1
        end = start
    return 0


# --------------------------------------------------------------------------- encodings
def checked_encoding(encoding: str | None) -> str | None:
    """``encoding`` as the user spelt it (blanks stripped), or None for UTF-8 (the default, with or without a
    byte-order mark); a name Python does not know, or a codec that does not turn bytes into text (``hex``,
    ``zlib``), is an ``invalid_argument`` error.

    >>> checked_encoding("Latin-1"), checked_encoding("utf8"), checked_encoding(None)
    ('Latin-1', None, None)
    """
    if encoding is None:
        return None
    if not isinstance(encoding, str) or not encoding.strip():
        raise DepgraphError("invalid_argument", f"encoding must be a codec name such as 'latin-1', not {encoding!r}")
    try:
        name = codecs.lookup(encoding.strip()).name
    except LookupError:
        raise DepgraphError(
            "invalid_argument", f"unknown encoding {encoding!r} (e.g. utf-8, latin-1, cp1252, utf-16)"
        ) from None
    try:
        "a".encode(name)  # a text codec encodes text; hex, zlib, rot13 and 'undefined' refuse to
    except (LookupError, UnicodeError):
        raise DepgraphError("invalid_argument", f"{encoding!r} is not a text encoding") from None
    return None if name in ("utf-8", "utf-8-sig") else encoding.strip()


def to_utf8(data: bytes | mmap.mmap, encoding: str, path: Path, label: str) -> bytes:
    """``data`` decoded from ``encoding`` (a name :func:`checked_encoding` returned) and written as UTF-8; a byte the
    encoding does not define is a ``parse`` error naming its line."""
    raw = bytes(data)
    if raw.startswith(BOM):
        raise DepgraphError(
            "parse",
            f"{label} starts with a UTF-8 byte-order mark: it is UTF-8 text, not {encoding}; "
            "read it without an encoding",
            path=str(path),
        )
    try:
        return codecs.decode(raw, encoding).encode("utf-8")
    except UnicodeError as exc:  # UnicodeDecodeError, or a codec's own complaint (idna, punycode)
        start = getattr(exc, "start", None)
        if start is None:
            raise DepgraphError(
                "parse", f"{label} is not {encoding} text: {_first_line(exc)}", path=str(path)
            ) from None
        line = codecs.decode(raw[:start], encoding, errors="replace").count("\n") + 1
        byte = f"the byte 0x{raw[start]:02x}" if start < len(raw) else "the end of the file"
        raise DepgraphError(
            "parse",
            f"{label} is not {encoding} text: line {line} holds {byte}, which {encoding} "
            "does not define (is it another encoding?)",
            path=str(path),
            line=line,
        ) from None


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip()
    return text.splitlines()[0] if text else type(exc).__name__


def not_utf8(data: bytes | mmap.mmap | memoryview, path: Path, label: str) -> DepgraphError:
    """The ``parse`` error for text that is not UTF-8: the line and value of the first bad byte, and how to read it."""
    raw = bytes(data)
    try:
        codecs.decode(raw, "utf-8")
        where, line = "", None
    except UnicodeDecodeError as exc:
        line = raw[: exc.start].count(b"\n") + 1
        where = f" (line {line} holds the byte 0x{raw[exc.start]:02x})"
    return DepgraphError("parse", f"{label} is not UTF-8 text{where}; {ENCODING_HINT}", path=str(path), line=line)


#: How to read a file that is not UTF-8, said to a Python user and to a command-line user: every command reading a
#: table has ``--encoding``, and the CLI keeps only that half of the hint (``depgraph.cli.main.CLI_SPELLINGS``).
ENCODING_HINT = (
    "name its encoding (--encoding latin-1 on the command line, encoding='latin-1' in Python; "
    "cp1252 for Windows exports) or save it as UTF-8"
)
