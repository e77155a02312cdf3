"""Relatedness files written by genetics tools, filtered to related pairs.

:func:`read_kinship` reads one file (or one GCTA GRM file set) and returns the
pairs whose kinship coefficient is at or above a threshold, as a table with
object columns ``id1``, ``id2`` and a float64 column ``kinship``, together with
a provenance record. Large inputs are streamed: text files are read
``chunk_rows`` lines at a time and a GCTA binary GRM ``chunk_rows`` matrix
cells at a time, and only the pairs that pass the threshold are kept, so the
memory used is one chunk plus the kept pairs, whatever the size of the file.

Formats (:data:`KINSHIP_FORMATS`; :func:`detect_format` guesses one from the
file name and header):

* ``"king"`` — KING ``--kinship`` / ``--related`` ``.kin`` (within-family:
  ``FID ID1 ID2 ... Kinship ...``) and ``.kin0`` (between-family:
  ``FID1 ID1 FID2 ID2 ... Kinship``). Column ``Kinship``, read as is.
* ``"plink2-king"`` — plink2 ``--make-king-table`` ``.kin0``: tab-separated,
  header ``#FID1 IID1 FID2 IID2 NSNP HETHET IBS0 KINSHIP`` (the FID columns
  are left out when every family id is 0). Column ``KINSHIP``, read as is.
* ``"plink-genome"`` — PLINK 1.9 ``--genome`` ``.genome``: space-aligned,
  ``FID1 IID1 FID2 IID2 RT EZ Z0 Z1 Z2 PI_HAT ...``. Kinship = ``PI_HAT / 2``.
* ``"gcta-grm"`` — GCTA binary GRM ``<prefix>.grm.bin`` + ``<prefix>.grm.id``.
  Kinship = ``GRM / 2``; the diagonal is ignored.
* ``"pairs"`` — a CSV / TSV / Parquet table ``id1, id2, kinship`` (read with
  :func:`depgraph.io.files.read_table`).

Each individual's subject id is built from its family id (FID) and individual
id (IID) with ``id_template`` (default ``"{IID}"``; ``"{FID}_{IID}"`` keeps
both). A template that uses ``{FID}`` on a file without family ids is an
``invalid_argument`` error, never a silent empty FID.
"""

from __future__ import annotations

import bz2
import codecs
import csv
import gzip
import io
import lzma
import math
import os
import string
import warnings
import zlib
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from depgraph.common.arguments import real_number
from depgraph.common.identifiers import check_key_column, normalise_keys
from depgraph.errors import DepgraphError, describe_ids
from depgraph.io.delimited import ENCODING_HINT, checked_encoding, header_delimiter
from depgraph.io.files import MISSING_TOKENS, existing_file, file_name, read_table
from depgraph.io.tables import EXCEL_SUFFIXES, compression_failure, non_number_kind, text_layout
from depgraph.io.textnumbers import COMMA_NUMBER, POINT_NUMBER, decimal_points
from depgraph.vocab import KING_DEGREE_THRESHOLDS

#: The formats :func:`read_kinship` reads.
KINSHIP_FORMATS: tuple[str, ...] = ("pairs", "king", "plink2-king", "plink-genome", "gcta-grm")

_COMPRESSION_SUFFIXES = (".gz", ".bz2", ".xz", ".zst")
_GRM_SUFFIXES = (".grm.bin", ".grm.n.bin", ".grm.id", ".grm")
_TEMPLATE_FIELDS = ("FID", "IID")
_SHOWN = 5  # offending lines named in a message


# --------------------------------------------------------------------------- format layouts
@dataclass(frozen=True)
class _Layout:
    """Where a text format keeps its ids and kinship, and how to scale it."""

    label: str
    kinship: tuple[str, ...]  # accepted names of the value column, first found wins
    id1: tuple[str, ...]
    id2: tuple[str, ...]
    fid1: tuple[str, ...]
    fid2: tuple[str, ...]
    factor: float  # kinship = value * factor
    scale: str
    maximum: float  # the largest value the tool can write (a larger one is refused)
    why: str  # why nothing larger can come from the tool


_LAYOUTS: dict[str, _Layout] = {
    "king": _Layout(
        "KING kinship file",
        kinship=("Kinship",),
        id1=("ID1", "IID1"),
        id2=("ID2", "IID2"),
        fid1=("FID1", "FID"),  # .kin0 has FID1/FID2; .kin has one FID for both
        fid2=("FID2", "FID"),
        factor=1.0,
        scale="Kinship",
        maximum=0.5,
        why="the KING-robust estimator is at most 0.5 (duplicates)",
    ),
    "plink2-king": _Layout(
        "plink2 KING table",
        kinship=("KINSHIP",),
        id1=("IID1", "ID1"),  # 'ID1' before plink2 alpha 3
        id2=("IID2", "ID2"),
        fid1=("FID1",),
        fid2=("FID2",),
        factor=1.0,
        scale="KINSHIP",
        maximum=0.5,
        why="the KING-robust estimator is at most 0.5 (duplicates)",
    ),
    "plink-genome": _Layout(
        "PLINK --genome file",
        kinship=("PI_HAT",),
        id1=("IID1",),
        id2=("IID2",),
        fid1=("FID1",),
        fid2=("FID2",),
        factor=0.5,
        scale="PI_HAT / 2",
        maximum=1.0,
        why="PI_HAT is a proportion of the genome, at most 1",
    ),
}


# --------------------------------------------------------------------------- public API
def resolve_threshold(threshold: float | str) -> tuple[float, str | None]:
    """A kinship threshold as a number, accepting KING degree names.

    >>> resolve_threshold("second")
    (0.0884, 'second')
    >>> resolve_threshold(0.1)
    (0.1, None)
    """
    if not (isinstance(threshold, str) or real_number(threshold)):
        raise DepgraphError(
            "invalid_argument",
            f"kinship threshold must be a number or one of {describe_ids(KING_DEGREE_THRESHOLDS)}, not {threshold!r}",
        )
    if isinstance(threshold, str):
        named = threshold.strip().lower()
        if named in KING_DEGREE_THRESHOLDS:
            return KING_DEGREE_THRESHOLDS[named], named
        try:
            threshold = float(named)
        except ValueError:
            raise DepgraphError(
                "invalid_argument",
                f"kinship threshold {threshold!r} is neither a number nor one of "
                f"{describe_ids(KING_DEGREE_THRESHOLDS)}",
            ) from None
    value = float(threshold)
    if not math.isfinite(value) or value < 0 or value > 1:
        raise DepgraphError("invalid_argument", f"kinship threshold must be within [0, 1], not {threshold!r}")
    return value, None


def detect_format(path: str | os.PathLike[str], *, encoding: str | None = None) -> str:
    """The kinship format of ``path``, from its suffix and, when needed, its header.

    ``.kin`` is KING; ``.kin0`` is plink2 when its header starts with ``#`` or
    names ``IID1`` / ``KINSHIP`` and KING otherwise; ``.genome`` is PLINK 1.9;
    ``.grm.bin``, ``.grm.N.bin``, ``.grm.id``, ``.grm`` or a prefix with a
    ``<prefix>.grm.bin`` beside it is a GCTA GRM. A compression suffix
    (``.gz``, ``.bz2``, ``.xz``, ``.zst``) is looked through. Any other file is
    recognised by its header, else it is a ``pairs`` table. The file is opened
    only when the suffix does not decide. A header is read whatever its
    delimiter (tab, ``,``, ``;``, ``|``, or runs of blanks; see
    :func:`split_header`), so a KING table saved as CSV is still KING;
    ``encoding`` is its text encoding when it is not UTF-8.

    >>> detect_format("cohort.genome"), detect_format("cohort.kin"), detect_format("cohort.grm.bin")
    ('plink-genome', 'king', 'gcta-grm')
    """
    p = Path(path)
    name = p.name.lower()
    if name.endswith(".grm.gz"):
        raise DepgraphError(
            "invalid_argument",
            f"{str(p)!r} looks like a GCTA text GRM (.grm.gz), which is not read; "
            "write the binary GRM (gcta --make-grm-bin, or plink --make-grm-bin) and pass <prefix>.grm.bin",
            path=str(p),
        )
    base = _strip_compression(name)
    if base.endswith(_GRM_SUFFIXES):
        return "gcta-grm"
    if base.endswith(".kin"):
        return "king"
    if base.endswith(".genome"):
        return "plink-genome"
    if base.endswith(".kin0"):
        tokens = _header_tokens(existing_file(p, "kinship file"), encoding)
        return "plink2-king" if _looks_plink2(tokens) else "king"
    if Path(f"{p}.grm.bin").is_file():
        return "gcta-grm"
    if base.endswith((".parquet", ".pq", *EXCEL_SUFFIXES)):
        return "pairs"  # binary: no tool writes its relatedness as Parquet or a workbook
    tokens = _header_tokens(existing_file(p, "kinship file"), encoding)
    if "PI_HAT" in tokens and "IID1" in tokens:
        return "plink-genome"
    if _looks_plink2(tokens):
        return "plink2-king"
    if "Kinship" in tokens and ("ID1" in tokens or "IID1" in tokens):
        return "king"
    return "pairs"


def read_kinship(
    path: str | os.PathLike[str],
    format: str,
    threshold: float | str,
    *,
    id_template: str = "{IID}",
    chunk_rows: int = 1_000_000,
    encoding: str | None = None,
) -> tuple[pd.DataFrame, dict[str, Any]]:
    """Pairs with kinship ``>= threshold`` (inclusive) from a relatedness file.

    Parameters
    ----------
    path:
        The file; for ``"gcta-grm"`` the ``.grm.bin``, the ``.grm.id`` or the
        prefix they share.
    format:
        One of :data:`KINSHIP_FORMATS` (see :func:`detect_format`).
    threshold:
        A kinship coefficient in [0, 1] or a KING degree name
        (``"duplicate"``, ``"first"``, ``"second"``, ``"third"``).
    id_template:
        How a subject id is built from an individual's ``{FID}`` and
        ``{IID}``, e.g. ``"{FID}_{IID}"``. Must use ``{IID}``; ``{FID}`` is an
        error for a file without family ids.
    chunk_rows:
        Lines (text formats) or matrix cells (GRM) read at a time.
    encoding:
        The text encoding of a text file that is not UTF-8 (e.g.
        ``"latin-1"``); UTF-8 is read with or without a byte-order mark.

    Returns the pairs as a DataFrame (``id1``, ``id2``: object; ``kinship``:
    float64) in file order, and a record: ``format``, ``path`` (the file's name, not its folder),
    ``pairs_read``, ``pairs_kept``, ``pairs_missing`` (kinship NA/NaN, never
    kept), ``threshold``, ``threshold_name``, ``inclusive``, ``scale``,
    ``id_template``. Estimates below the threshold, negative ones included,
    are simply not kept.

    >>> import pathlib, tempfile
    >>> kin0 = pathlib.Path(tempfile.mkdtemp()) / "cohort.kin0"
    >>> _ = kin0.write_text("FID1\\tID1\\tFID2\\tID2\\tN_SNP\\tHetHet\\tIBS0\\tKinship\\n"
    ...                     "F1\\tA\\tF2\\tB\\t5000\\t0.11\\t0.001\\t0.2461\\n"
    ...                     "F1\\tA\\tF3\\tC\\t5000\\t0.05\\t0.040\\t-0.0137\\n")
    >>> pairs, record = read_kinship(kin0, "king", "first", id_template="{FID}_{IID}")
    >>> pairs.to_dict("records")
    [{'id1': 'F1_A', 'id2': 'F2_B', 'kinship': 0.2461}]
    >>> record["pairs_read"], record["pairs_kept"], record["threshold"]
    (2, 1, 0.177)
    """
    fmt = format.strip().lower() if isinstance(format, str) else format
    if fmt not in KINSHIP_FORMATS:
        raise DepgraphError(
            "invalid_argument", f"unknown kinship format {format!r}; formats are {describe_ids(KINSHIP_FORMATS)}"
        )
    value, degree = resolve_threshold(threshold)
    template = parse_template(id_template)
    if isinstance(chunk_rows, bool) or not isinstance(chunk_rows, (int, np.integer)) or chunk_rows < 1:
        raise DepgraphError("invalid_argument", f"chunk_rows must be a whole number >= 1, not {chunk_rows!r}")
    chunk_rows = int(chunk_rows)
    codec = checked_encoding(encoding)
    if fmt == "gcta-grm":
        frame, counts = _read_grm(path, value, template, chunk_rows)
    elif fmt == "pairs":
        frame, counts = _read_pairs(path, value, template, encoding)
    else:
        frame, counts = _read_text(path, _LAYOUTS[fmt], value, template, chunk_rows, codec)
    record: dict[str, Any] = {
        "format": fmt,
        "path": file_name(path) if isinstance(path, (str, os.PathLike)) else type(path).__name__,
        "pairs_read": counts.pop("pairs_read"),
        "pairs_kept": len(frame),
        "pairs_missing": counts.pop("pairs_missing"),
        "threshold": value,
        "threshold_name": degree,
        "inclusive": True,
        "scale": counts.pop("scale"),
        "id_template": id_template,
        **counts,
    }
    return frame, record


# --------------------------------------------------------------------------- ids
def parse_template(template: Any) -> list[tuple[str, str | None]]:
    """``id_template`` as (literal, None) and ("", field) parts; a template that is not one is ``invalid_argument``."""
    if not isinstance(template, str):
        raise DepgraphError("invalid_argument", f"id_template must be a string such as '{{IID}}', not {template!r}")
    try:
        parsed = list(string.Formatter().parse(template))
    except ValueError as exc:
        raise DepgraphError("invalid_argument", f"id_template {template!r} is not a valid template: {exc}") from None
    parts: list[tuple[str, str | None]] = []
    for literal, field, spec, conversion in parsed:
        if literal:
            parts.append((literal, None))
        if field is None:
            continue
        if field not in _TEMPLATE_FIELDS or spec or conversion:
            raise DepgraphError(
                "invalid_argument",
                f"id_template {template!r} may only use the fields {{FID}} and {{IID}} (no format specs), "
                f"not {{{field}{'!' + conversion if conversion else ''}{':' + spec if spec else ''}}}",
            )
        parts.append(("", field))
    if not any(field == "IID" for _, field in parts):
        raise DepgraphError(
            "invalid_argument", f"id_template {template!r} must use {{IID}} (e.g. '{{IID}}' or '{{FID}}_{{IID}}')"
        )
    return parts


def plain_table_template(id_template: Any, what: str) -> list[tuple[str, str | None]] | None:
    """``id_template`` parsed for a table without family ids (a pair table):
    None for the default ``{IID}``; a template using ``{FID}`` is an
    ``invalid_argument`` error (never a silent empty FID).

    >>> plain_table_template("sub-{IID}", "kinship") is not None, plain_table_template("{IID}", "kinship")
    (True, None)
    """
    template = parse_template(id_template)
    _refuse_fid(template, what)
    return None if template == [("", "IID")] else template


def templated(template: list[tuple[str, str | None]], ids: np.ndarray) -> np.ndarray:
    """Subject ids from individual ids (no family ids) through a parsed template."""
    return _build_ids(template, None, ids)


def _uses_fid(template: list[tuple[str, str | None]]) -> bool:
    return any(field == "FID" for _, field in template)


def _refuse_fid(template: list[tuple[str, str | None]], what: str, hint: str = "") -> None:
    if _uses_fid(template):
        raise DepgraphError(
            "invalid_argument",
            f"id_template uses {{FID}} but {what} has no family-id column{hint}; use id_template='{{IID}}'",
        )


def _build_ids(template: list[tuple[str, str | None]], fid: np.ndarray | None, iid: np.ndarray) -> np.ndarray:
    """Subject ids (object array) from FID and IID arrays."""
    if template == [("", "IID")]:
        return iid.astype(object, copy=False)
    out = np.full(len(iid), "", dtype=object)
    for literal, field in template:
        piece = literal if field is None else (iid if field == "IID" else fid)
        out = out + piece
    return out


def _empty_pairs() -> pd.DataFrame:
    return _pairs_frame(np.empty(0, dtype=object), np.empty(0, dtype=object), np.empty(0, dtype=np.float64))


def _pairs_frame(id1: np.ndarray, id2: np.ndarray, kinship: np.ndarray) -> pd.DataFrame:
    return pd.DataFrame(
        {
            "id1": pd.Series(id1, dtype=object),
            "id2": pd.Series(id2, dtype=object),
            "kinship": pd.Series(kinship, dtype=np.float64),
        }
    )


def _lines_text(lines: np.ndarray | list[int]) -> str:
    numbers = [int(n) for n in lines]
    word = "line" if len(numbers) == 1 else "lines"
    return f"{word} {describe_ids(numbers, _SHOWN)}"


# --------------------------------------------------------------------------- text formats
def _strip_compression(name: str) -> str:
    for suffix in _COMPRESSION_SUFFIXES:
        if name.endswith(suffix):
            return name[: -len(suffix)]
    return name


def _open_binary(path: Path) -> Any:
    """``path`` opened for reading bytes, through its compression if it has one."""
    name = path.name.lower()
    if name.endswith(".gz"):
        return gzip.open(path, "rb")
    if name.endswith(".bz2"):
        return bz2.open(path, "rb")
    if name.endswith(".xz"):
        return lzma.open(path, "rb")
    if name.endswith(".zst"):
        try:
            import zstandard
        except ImportError:
            raise DepgraphError(
                "io", f"{str(path)!r} is Zstandard-compressed; reading it needs the zstandard package", path=str(path)
            ) from None
        return zstandard.open(path, "rb")
    return open(path, "rb")


def _first_line(path: Path, what: str, encoding: str | None = None) -> str:
    """The header line (at most 64 kB of it), without a byte-order mark; "" for an empty file. A file that is not
    UTF-8 text (or not ``encoding`` text), or a corrupt compressed one, is a ``parse`` error."""
    try:
        with io.TextIOWrapper(_open_binary(path), encoding=encoding or "utf-8-sig", newline="") as handle:
            return handle.readline(65536).rstrip("\r\n")
    except UnicodeDecodeError:
        raise _undecodable(path, what, encoding) from None
    except (OSError, EOFError, zlib.error, lzma.LZMAError) as exc:
        raise _read_failure(exc, what, path) from None


def _undecodable(path: Path, what: str, encoding: str | None) -> DepgraphError:
    """The ``parse`` error for a text file that is not UTF-8 (or not ``encoding``) text, naming the first bad line
    (found by reading the file again as bytes, a block at a time: this is the error path only)."""
    decoder = codecs.getincrementaldecoder(encoding or "utf-8")()
    line, seen = 1, b""
    try:
        with _open_binary(path) as handle:
            while block := handle.read(1 << 20):
                try:
                    decoder.decode(block)
                except UnicodeDecodeError as exc:
                    start = max(0, exc.start - len(exc.object) + len(block))
                    seen = block[start : start + 1]
                    line += block[:start].count(b"\n")
                    break
                line += block.count(b"\n")
    except (OSError, EOFError, zlib.error, lzma.LZMAError) as exc:
        return _read_failure(exc, what, path)
    byte = f" (line {line} holds the byte 0x{seen[0]:02x})" if seen else ""
    if encoding is not None:
        return DepgraphError("parse", f"{what} is not {encoding} text{byte}", path=str(path), line=line)
    return DepgraphError("parse", f"{what} is not UTF-8 text{byte}; {ENCODING_HINT}", path=str(path), line=line)


def _read_failure(exc: BaseException, what: str, path: Path) -> DepgraphError:
    """A failure while reading ``path``: ``parse`` when a compressed file is
    truncated or corrupt, ``io`` when the disk or the permissions failed."""
    compressed = _strip_compression(path.name.lower()) != path.name.lower()
    if compressed and compression_failure(exc):
        return DepgraphError("parse", f"{what} is truncated or corrupt: {exc}", path=str(path))
    return DepgraphError("io", f"{what} cannot be read: {exc}", path=str(path))


def split_header(line: str) -> tuple[str, list[str]]:
    """A tool table's separator, told by its header (one of tab, ``,``, ``;``, ``|``
    by :func:`depgraph.io.delimited.header_delimiter`'s rule, else runs of blanks),
    and the header's fields: a KING table saved as CSV, with commas or a European
    Excel's semicolons, reads as KING.

    >>> split_header("FID1,ID1,FID2,ID2,Kinship")
    (',', ['FID1', 'ID1', 'FID2', 'ID2', 'Kinship'])
    >>> split_header(" FID1  IID1 FID2  IID2 PI_HAT")
    ('\\\\s+', ['FID1', 'IID1', 'FID2', 'IID2', 'PI_HAT'])
    """
    sep = header_delimiter(line.encode())
    if sep is None:
        return r"\s+", line.split()
    return sep, next(csv.reader([line], delimiter=sep))  # quoted names unquoted, as pandas reads them


def _header_tokens(path: Path, encoding: str | None = None) -> list[str]:
    line = _first_line(path, f"kinship file {str(path)!r}", checked_encoding(encoding))
    return [t.strip() for t in split_header(line)[1]]


def _looks_plink2(tokens: list[str]) -> bool:
    if not tokens:
        return False
    return tokens[0].startswith("#") or "KINSHIP" in tokens or ("IID1" in tokens and "Kinship" not in tokens)


def _find(columns: list[str], names: tuple[str, ...]) -> str | None:
    for name in names:
        if name in columns:
            return name
    return None


def _read_text(
    path: str | os.PathLike[str],
    layout: _Layout,
    threshold: float,
    template: list[tuple[str, str | None]],
    chunk_rows: int,
    encoding: str | None = None,
) -> tuple[pd.DataFrame, dict[str, Any]]:
    p = existing_file(path, layout.label)
    what = f"{layout.label} {str(p)!r}"
    header = _first_line(p, what, encoding)
    if not header.strip():
        kind = "is empty" if p.stat().st_size == 0 else "has no header line"
        raise DepgraphError("empty_input", f"{what} {kind}", path=str(p))
    sep, raw_columns = split_header(header)
    repeated = sorted({c for c in raw_columns if raw_columns.count(c) > 1})
    if repeated:
        raise DepgraphError(
            "schema", f"{what} has the column {describe_ids(repeated)} more than once", columns=repeated, path=str(p)
        )
    # plink2 starts its header with '#'; the name after it is the column's name
    names = [c.strip() for c in raw_columns]
    names[0] = names[0].lstrip("#")
    raw_of = dict(zip(names, raw_columns, strict=True))
    kin, id1, id2 = _find(names, layout.kinship), _find(names, layout.id1), _find(names, layout.id2)
    missing = [
        wanted[0] for wanted, found in ((layout.id1, id1), (layout.id2, id2), (layout.kinship, kin)) if found is None
    ]
    if missing:
        raise DepgraphError(
            "schema",
            f"{what} lacks the column(s) {describe_ids(missing)} (header: {describe_ids(names, 16)}); "
            f"is it really a {layout.label}?",
            columns=missing,
            path=str(p),
        )
    fid1, fid2 = _find(names, layout.fid1), _find(names, layout.fid2)
    if fid1 is None or fid2 is None:
        fid1 = fid2 = None
        hint = " (plink2 leaves the FID columns out when every family id is 0)" if layout.scale == "KINSHIP" else ""
        _refuse_fid(template, what, hint)
    wanted = [fid1, id1, fid2, id2] if fid1 is not None and _uses_fid(template) else [id1, id2]
    id_columns = list(dict.fromkeys(c for c in wanted if c is not None))  # .kin: one FID column for both
    used = [*id_columns, kin]
    rename = {raw_of[c]: c for c in used if raw_of[c] != c}
    # Every column is parsed (usecols would hide fields past the header; parsing them costs next to nothing
    # measured), no column is an index, and a short line leaves the last column missing: see _refuse_ragged_lines.
    last = raw_columns[-1]
    reader = _text_reader(p, sep, [raw_of[c] for c in id_columns], chunk_rows, what, encoding)
    parts: list[tuple[np.ndarray, np.ndarray, np.ndarray]] = []
    counts = {"pairs_read": 0, "pairs_missing": 0}
    fids = (fid1, fid2) if fid1 in id_columns else None
    for chunk in _chunks(reader, what, p, encoding):
        _refuse_short_lines(chunk, raw_of[id1], last, len(raw_columns), what)
        if rename:
            chunk = chunk.rename(columns=rename)
        _refuse_self_pairs(chunk, (id1, id2), fids, what, families_dropped=fids is None and fid1 is not None)
        kept = _filter_chunk(chunk, used, kin, layout, threshold, what, counts, decimal_comma=sep == ";")
        if kept is None:
            continue
        rows, kinship = kept
        fid_a = rows[fid1].to_numpy(dtype=object) if fid1 in id_columns else None
        fid_b = rows[fid2].to_numpy(dtype=object) if fid2 in id_columns else None
        iid_a, iid_b = rows[id1].to_numpy(dtype=object), rows[id2].to_numpy(dtype=object)
        _require_text_ids(rows.index.to_numpy(), [iid_a, iid_b, *(f for f in (fid_a, fid_b) if f is not None)], what)
        a, b = _build_ids(template, fid_a, iid_a), _build_ids(template, fid_b, iid_b)
        _refuse_templated_selves(a, b, rows.index.to_numpy() + 2, what)
        parts.append((a, b, kinship))
    counts["scale"] = layout.scale
    return _concat(parts), counts


def _text_reader(p: Path, sep: str, id_columns: list[str], chunk_rows: int, what: str, encoding: str | None) -> Any:
    """A chunked pandas reader over a tool's text file (ids read as text), its failures as DepgraphErrors."""
    try:
        return pd.read_csv(
            p,
            sep=sep,
            header=0,
            index_col=False,
            dtype={c: object for c in id_columns},
            keep_default_na=False,
            na_values=[],
            skip_blank_lines=False,  # blank lines stay rows, so row index + 2 is the file line
            chunksize=chunk_rows,
            compression="infer",
            engine="c",
            encoding=encoding or "utf-8",  # a UTF-8 byte-order mark is dropped by pandas
            decimal="," if sep == ";" else ".",  # a European Excel's decimal commas (ids are read as text)
        )
    except ImportError as exc:
        raise DepgraphError("io", f"{what} cannot be read: {exc}", path=str(p)) from None
    except UnicodeDecodeError:
        raise _undecodable(p, what, encoding) from None
    except (pd.errors.ParserError, pd.errors.EmptyDataError, ValueError) as exc:
        raise DepgraphError("parse", f"{what} cannot be parsed: {_reason(exc)}", path=str(p)) from None
    except (OSError, EOFError, zlib.error, lzma.LZMAError) as exc:
        raise _read_failure(exc, what, p) from None


def _chunks(reader: Any, what: str, path: Path, encoding: str | None = None) -> Iterator[pd.DataFrame]:
    """The reader's chunks, with its failures as DepgraphErrors. pandas only
    warns when the first line has more fields than the header (and drops
    them): that is refused like any longer line."""
    chunks = iter(reader)
    while True:
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("error", pd.errors.ParserWarning)
                chunk = next(chunks)
        except StopIteration:
            return
        except pd.errors.ParserWarning:
            raise DepgraphError(
                "parse", f"{what} cannot be parsed: line 2 has more fields than the header", path=str(path), lines=[2]
            ) from None
        except UnicodeDecodeError:
            raise _undecodable(path, what, encoding) from None
        except (pd.errors.ParserError, pd.errors.EmptyDataError, ValueError) as exc:
            raise DepgraphError("parse", f"{what} cannot be parsed: {_reason(exc)}", path=str(path)) from None
        except ImportError as exc:
            raise DepgraphError("io", f"{what} cannot be read: {exc}", path=str(path)) from None
        except (OSError, EOFError, zlib.error, lzma.LZMAError) as exc:
            raise _read_failure(exc, what, path) from None
        yield chunk


def _reason(exc: BaseException) -> str:
    text = str(exc).strip()
    return text.splitlines()[0] if text else type(exc).__name__


def _refuse_short_lines(chunk: pd.DataFrame, first: str, last: str, fields: int, what: str) -> None:
    """Lines with fewer fields than the header are a ``parse`` error (longer
    ones the reader refuses). pandas pads a short line with empty fields, so a
    line whose last field is empty while its id is not is refused: no tool
    writes an empty last field."""
    values = chunk[last]
    if pd.api.types.is_numeric_dtype(values.dtype):  # every line has a number there: only a gap can be missing
        short = pd.isna(values.to_numpy())
    else:
        cells = values.to_numpy(dtype=object)
        short = pd.isna(cells) | (cells == "")
    if short.any():  # ids are looked at on those lines only (a blank line has none)
        ids = chunk[first].to_numpy(dtype=object)[short]
        short[short] = pd.notna(ids) & (ids != "")
    if short.any():
        lines = chunk.index.to_numpy()[short] + 2
        verb = "has" if len(lines) == 1 else "have"
        raise DepgraphError(
            "parse",
            f"{what} cannot be parsed: {_lines_text(lines)} {verb} fewer fields than the header's {fields} "
            "(a truncated line?)",
            lines=lines.tolist(),
        )


def _refuse_self_pairs(
    chunk: pd.DataFrame,
    ids: tuple[str, str],
    fids: tuple[str, str] | None,
    what: str,
    *,
    families_dropped: bool,
) -> None:
    """Every line of the chunk, kept or not: one individual paired with itself
    (the same IID, and the same FID when the template uses it) is refused."""
    a = chunk[ids[0]].to_numpy(dtype=object)
    same = a == chunk[ids[1]].to_numpy(dtype=object)
    if same.any():  # blank ids are missing ids (named elsewhere), not self-pairs
        same[same] = (a[same] != "") & pd.notna(a[same])
    if fids is not None and same.any():
        same &= chunk[fids[0]].to_numpy(dtype=object) == chunk[fids[1]].to_numpy(dtype=object)
    if same.any():
        hint = " (if they are individuals of different families, use id_template '{FID}_{IID}')"
        _raise_self_pairs(chunk.index.to_numpy()[same] + 2, a[same], what, hint if families_dropped else "")


def _refuse_templated_selves(a: np.ndarray, b: np.ndarray, lines: np.ndarray, what: str) -> None:
    """Kept pairs whose two subject ids are one after the template (two
    individuals the template cannot tell apart)."""
    same = a == b
    if same.any():
        _raise_self_pairs(lines[same], a[same], what, " after id_template is applied")


def _raise_self_pairs(lines: np.ndarray, ids: np.ndarray, what: str, hint: str) -> None:
    verb = "pairs" if len(lines) == 1 else "pair"
    selves = list(dict.fromkeys(str(i) for i in ids))
    raise DepgraphError(
        "invalid_value",
        f"{what}: {_lines_text(lines)} {verb} an id with itself ({describe_ids(selves)}){hint}",
        lines=[int(n) for n in lines],
        ids=selves,
    )


def _filter_chunk(
    chunk: pd.DataFrame,
    used: list[str],
    kin: str,
    layout: _Layout,
    threshold: float,
    what: str,
    counts: dict[str, Any],
    *,
    decimal_comma: bool = False,
) -> tuple[pd.DataFrame, np.ndarray] | None:
    """The chunk's rows at or above the threshold and their kinship, counting
    pairs read and missing; ``None`` when none is kept."""
    raw = chunk[kin]
    if pd.api.types.is_numeric_dtype(raw.dtype) and not pd.api.types.is_bool_dtype(raw.dtype):
        # fast path: every cell of the chunk parsed as a number
        values = raw.to_numpy(dtype=np.float64)
        counts["pairs_read"] += len(values)
        lines = chunk.index.to_numpy()
        rows = chunk
    else:
        text = raw.astype(object).where(raw.notna(), "").to_numpy(dtype=object)
        blank = text == ""
        if blank.any():  # blank lines (every field empty) are skipped; a missing kinship field is not
            empty_line = blank.copy()
            for column in used:
                if column != kin:
                    cells = chunk[column].astype(object).to_numpy(dtype=object)
                    empty_line &= pd.isna(cells) | (cells == "")
            short = blank & ~empty_line
            if short.any():
                lines = chunk.index.to_numpy()[short] + 2
                verb = "has" if len(lines) == 1 else "have"
                raise DepgraphError(
                    "parse",
                    f"{what}: {_lines_text(lines)} {verb} fewer fields than the header (a truncated line?)",
                    lines=lines.tolist(),
                )
            keep_rows = ~empty_line
            chunk, text = chunk[keep_rows], text[keep_rows]
        lines = chunk.index.to_numpy()
        rows = chunk
        missing = pd.Series(text, dtype=object).isin(MISSING_TOKENS).to_numpy()
        if decimal_comma:  # a ';' file: 0,25 is a number (a column mixing 0,25 and 0.25 is refused)
            text = _decimal_points(text, lines, kin, what)
        values = pd.to_numeric(pd.Series(text, dtype=object), errors="coerce").to_numpy(dtype=np.float64)
        bad = np.isnan(values) & ~missing
        if bad.any():
            shown = lines[bad] + 2
            raise DepgraphError(
                "invalid_value",
                f"{what}: {kin} is not a number at {_lines_text(shown)} "
                f"(e.g. {describe_ids([repr(t) for t in text[bad][:3]], 3)})",
                lines=shown.tolist(),
                column=kin,
            )
        values = np.where(missing, np.nan, values)
        counts["pairs_read"] += len(values)
        counts["pairs_missing"] += int(missing.sum())
    infinite = np.isinf(values)
    if infinite.any():
        shown = lines[infinite] + 2
        raise DepgraphError(
            "invalid_value", f"{what}: {kin} is infinite at {_lines_text(shown)}", lines=shown.tolist(), column=kin
        )
    above = values > layout.maximum
    if above.any():
        shown = lines[above] + 2
        raise DepgraphError(
            "invalid_value",
            f"{what}: {kin} above {layout.maximum:g} at {_lines_text(shown)} "
            f"(e.g. {describe_ids(values[above][:3].tolist(), 3)}): {layout.why}",
            lines=shown.tolist(),
            column=kin,
        )
    kinship = values * layout.factor if layout.factor != 1.0 else values
    keep = kinship >= threshold
    if not keep.any():
        return None
    return rows[keep], kinship[keep]


def _decimal_points(text: np.ndarray, lines: np.ndarray, column: str, what: str) -> np.ndarray:
    """Cells of a semicolon-separated file with their decimal commas written as points; a column holding both
    decimal commas and decimal points is an ``ambiguity`` error naming a line of each."""
    cells = pd.Series(text, dtype=object)
    comma = cells.str.fullmatch(COMMA_NUMBER[1:-1]).fillna(False).to_numpy(dtype=bool)
    if not comma.any():
        return text
    point = cells.str.fullmatch(POINT_NUMBER[1:-1]).fillna(False).to_numpy(dtype=bool)
    if point.any():
        a, b = int(np.flatnonzero(comma)[0]), int(np.flatnonzero(point)[0])
        raise DepgraphError(
            "ambiguity",
            f"{what}: {column} mixes decimal commas (line {lines[a] + 2}: {text[a]!r}) and decimal points "
            f"(line {lines[b] + 2}: {text[b]!r}); write every number of the column one way",
            column=column,
            lines=[int(lines[a]) + 2, int(lines[b]) + 2],
        )
    return np.where(comma, cells.str.replace(",", ".", regex=False).to_numpy(dtype=object), text)


def _require_text_ids(index: np.ndarray, columns: list[np.ndarray], what: str) -> None:
    blank = np.zeros(len(index), dtype=bool)
    for values in columns:
        blank |= pd.isna(values) | (values == "")
    if blank.any():
        lines = index[blank] + 2
        raise DepgraphError(
            "missing_id", f"{what}: an id is missing or blank at {_lines_text(lines)}", lines=lines.tolist()
        )


def _concat(parts: list[tuple[np.ndarray, np.ndarray, np.ndarray]]) -> pd.DataFrame:
    if not parts:
        return _empty_pairs()
    return _pairs_frame(
        np.concatenate([a for a, _, _ in parts]),
        np.concatenate([b for _, b, _ in parts]),
        np.concatenate([k for _, _, k in parts]),
    )


# --------------------------------------------------------------------------- pair tables
def _read_pairs(
    path: Any, threshold: float, template: list[tuple[str, str | None]], encoding: str | None = None
) -> tuple[pd.DataFrame, dict[str, Any]]:
    is_path = isinstance(path, (str, os.PathLike))
    what = f"kinship pairs {str(path)!r}" if is_path else "kinship pairs"
    frame = read_table(path, "kinship pairs", encoding=encoding)  # read_table adds the path itself
    layout = text_layout(frame)
    frame = frame.reset_index(drop=True)
    needed = ["id1", "id2", "kinship"]
    missing = [c for c in needed if c not in frame.columns]
    if missing:
        raise DepgraphError(
            "schema",
            f"{what} lacks the column(s) {describe_ids(missing)} (columns: {describe_ids(frame.columns, 12)}); "
            "a pairs table has id1, id2, kinship",
            columns=missing,
        )
    _refuse_fid(template, what)
    text_file = layout is not None
    offset, where = (2, "line") if text_file else (1, "row")  # CSV: header is line 1

    def place(positions: np.ndarray) -> str:
        numbers = [int(n) + offset for n in positions]
        return f"{where}{'s' if len(numbers) > 1 else ''} {describe_ids(numbers, _SHOWN)}"

    values, absent = _pair_kinship(frame, layout, what, place, offset)
    a, b = _pair_ids(frame, what, place, offset)
    keep = values >= threshold
    a, b = a[keep], b[keep]
    pairs = _pairs_frame(_build_ids(template, None, a), _build_ids(template, None, b), values[keep])
    return pairs, {"pairs_read": len(frame), "pairs_missing": int(absent.sum()), "scale": "kinship"}


def _pair_kinship(
    frame: pd.DataFrame, layout: dict[str, str] | None, what: str, place: Callable[[np.ndarray], str], offset: int
) -> tuple[np.ndarray, np.ndarray]:
    """A pair table's kinship column as numbers in [0, 1] (NaN where absent), and where it is absent; ``place``
    names lines or rows in messages."""
    if layout is not None and layout["decimal"] == "," and "kinship" in frame.columns:
        frame["kinship"] = decimal_points(frame["kinship"], "kinship", what)
    raw = frame["kinship"]
    kind = non_number_kind(raw)
    if kind is not None:
        raise DepgraphError("schema", f"{what}: kinship holds {kind}, not numbers", column="kinship")
    values = pd.to_numeric(raw, errors="coerce").astype(np.float64).to_numpy()
    absent = raw.isna().to_numpy()
    if raw.dtype == object or pd.api.types.is_string_dtype(raw.dtype):
        absent = absent | raw.astype(str).str.strip().isin(MISSING_TOKENS).to_numpy()
    bad = np.isnan(values) & ~absent
    if bad.any():
        positions = np.flatnonzero(bad)
        raise DepgraphError(
            "invalid_value",
            f"{what}: kinship is not a number at {place(positions)} "
            f"(e.g. {describe_ids([repr(v) for v in raw.iloc[positions[:3]]], 3)})",
            lines=(positions + offset).tolist(),
            column="kinship",
        )
    if np.isinf(values).any():
        positions = np.flatnonzero(np.isinf(values))
        raise DepgraphError("invalid_value", f"{what}: kinship is infinite at {place(positions)}", column="kinship")
    outside = (values < 0) | (values > 1)
    if outside.any():  # README design notes: a generic table holds coefficients; estimators have their formats
        positions = np.flatnonzero(outside)
        raise DepgraphError(
            "invalid_value",
            f"{what}: kinship must lie in [0, 1] in a pair table; {place(positions)} "
            f"{'holds' if len(positions) == 1 else 'hold'} "
            f"{describe_ids(values[outside].tolist(), 3)} (negative estimates: read the KING or GRM file itself)",
            lines=(positions + offset).tolist(),
            column="kinship",
        )
    return values, absent


def _pair_ids(
    frame: pd.DataFrame, what: str, place: Callable[[np.ndarray], str], offset: int
) -> tuple[np.ndarray, np.ndarray]:
    """A pair table's two id columns, normalised (no blank id, no id paired with itself)."""
    for column in ("id1", "id2"):
        check_key_column(frame[column], column, what)
    a = normalise_keys(frame["id1"], "id1").to_numpy(dtype=object)
    b = normalise_keys(frame["id2"], "id2").to_numpy(dtype=object)
    blank = pd.isna(a) | pd.isna(b)
    if blank.any():
        positions = np.flatnonzero(blank)
        raise DepgraphError(
            "missing_id",
            f"{what}: id1 or id2 is missing or blank at {place(positions)}",
            lines=(positions + offset).tolist(),
        )
    same = a == b
    if same.any():
        positions = np.flatnonzero(same)
        selves = list(dict.fromkeys(a[same].tolist()))
        raise DepgraphError(
            "invalid_value",
            f"{what}: {place(positions)} pair an id with itself ({describe_ids(selves)})",
            lines=(positions + offset).tolist(),
            ids=selves,
        )
    return a, b


# --------------------------------------------------------------------------- GCTA GRM
def kinship_files(
    path: str | os.PathLike[str], format: str | None = None, *, encoding: str | None = None
) -> list[Path]:
    """The files reading the kinship ``path`` in ``format`` (detected when None) opens, each checked to exist as a
    regular file (``io`` otherwise): the file itself, or a GCTA GRM's matrix and ids.

    >>> kinship_files("no/such/cohort.genome")
    Traceback (most recent call last):
    ...
    depgraph.errors.DepgraphError: [io] kinship file 'no/such/cohort.genome' does not exist
    """
    try:
        found = detect_format(path, encoding=encoding) if format is None else format
    except OSError as exc:  # a name too long, a folder the user cannot search
        raise DepgraphError(
            "io", f"kinship file {str(path)!r} cannot be used: {exc.strerror}", path=str(path)
        ) from None
    if found == "gcta-grm":
        prefix = _grm_prefix(path)
        return [
            existing_file(f"{prefix}.grm.bin", "GCTA GRM matrix"),
            existing_file(f"{prefix}.grm.id", "GCTA GRM ids"),
        ]
    return [existing_file(path, "kinship file")]


def _grm_prefix(path: str | os.PathLike[str]) -> str:
    text = os.fspath(path)
    lower = text.lower()
    for suffix in _GRM_SUFFIXES:
        if lower.endswith(suffix):
            return text[: -len(suffix)]
    return text


def _read_grm_ids(id_path: Path, template: list[tuple[str, str | None]]) -> np.ndarray:
    what = f"GCTA GRM ids {str(id_path)!r}"
    try:
        table = pd.read_csv(
            id_path, sep=r"\s+", header=None, dtype=object, keep_default_na=False, na_values=[], engine="c"
        )
    except pd.errors.EmptyDataError:
        raise DepgraphError("empty_input", f"{what} is empty (no individuals)", path=str(id_path)) from None
    except (pd.errors.ParserError, UnicodeDecodeError, ValueError) as exc:
        reason = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        raise DepgraphError("parse", f"{what} cannot be parsed: {reason}", path=str(id_path)) from None
    if table.shape[1] < 2:
        raise DepgraphError(
            "schema", f"{what} must have two columns, FID and IID (found {table.shape[1]})", path=str(id_path)
        )
    fid = table[0].to_numpy(dtype=object)
    iid = table[1].to_numpy(dtype=object)
    blank = pd.isna(fid) | pd.isna(iid) | (fid == "") | (iid == "")
    if blank.any():
        lines = np.flatnonzero(blank) + 1  # no header: row k is line k + 1
        raise DepgraphError(
            "missing_id", f"{what}: FID or IID is missing at {_lines_text(lines)}", lines=lines.tolist()
        )
    ids = _build_ids(template, fid, iid)
    repeated = pd.Series(ids).duplicated(keep=False).to_numpy()
    if repeated.any():
        dups = list(dict.fromkeys(ids[repeated].tolist()))
        lines = np.flatnonzero(repeated) + 1
        distinct_raw = len(set(zip(fid[repeated], iid[repeated], strict=True))) > len(dups)
        hint = (
            " (the id_template drops FID; '{FID}_{IID}' keeps it)" if distinct_raw and not _uses_fid(template) else ""
        )
        raise DepgraphError(
            "duplicate_id",
            f"{what} repeat the id(s) {describe_ids(dups)} at {_lines_text(lines)}{hint}",
            ids=dups,
            lines=lines.tolist(),
        )
    return ids


def _grm_blocks(bin_path: Path, n: int, chunk_cells: int) -> Iterator[tuple[int, int, int, np.ndarray]]:
    """Consecutive blocks of whole rows of the lower triangle: ``(first_row,
    end_row, first_cell, float32 values)``, each at most ``chunk_cells`` cells
    (or one row, when a row is longer)."""
    with open(bin_path, "rb") as handle:
        row = 0
        while row < n:
            start = row * (row + 1) // 2
            # the largest end with end*(end+1)/2 - start <= chunk_cells, and at least one row
            end = (math.isqrt(8 * (start + chunk_cells) + 1) - 1) // 2
            end = min(n, max(row + 1, end))
            count = end * (end + 1) // 2 - start
            block = np.fromfile(handle, dtype="<f4", count=count)
            if block.size != count:
                raise DepgraphError(
                    "schema", f"GCTA GRM {str(bin_path)!r} ended early (rows {row + 1}-{end})", path=str(bin_path)
                )
            yield row, end, start, block
            row = end


def _read_grm(
    path: str | os.PathLike[str], threshold: float, template: list[tuple[str, str | None]], chunk_cells: int
) -> tuple[pd.DataFrame, dict[str, Any]]:
    prefix = _grm_prefix(path)
    bin_path = existing_file(f"{prefix}.grm.bin", "GCTA GRM matrix")
    id_path = existing_file(f"{prefix}.grm.id", "GCTA GRM ids")
    what = f"GCTA GRM {str(bin_path)!r}"
    ids = _read_grm_ids(id_path, template)
    n = len(ids)
    cells = n * (n + 1) // 2
    expected, actual = cells * 4, bin_path.stat().st_size
    if actual != expected:
        hint = " (8 bytes a cell: a double-precision matrix, which GCTA does not write)" if actual == cells * 8 else ""
        raise DepgraphError(
            "schema",
            f"{what} holds {actual} bytes but {n} individuals in {str(id_path)!r} need n(n+1)/2 * 4 = {expected} "
            f"bytes (float32 lower triangle with the diagonal){hint}",
            path=str(bin_path),
            expected_bytes=expected,
            actual_bytes=actual,
        )
    parts: list[tuple[np.ndarray, np.ndarray, np.ndarray]] = []
    n_missing = 0
    flagged: dict[str, Any] = {"above_half": 0, "above_half_ids": [], "above_half_pairs": []}
    for row, end, start, block in _grm_blocks(bin_path, n, chunk_cells):
        rows = np.arange(row, end, dtype=np.int64)
        row_starts = rows * (rows + 1) // 2  # global cell index of (i, 0)
        diagonal = row_starts + rows - start  # local index of (i, i)
        kinship = block.astype(np.float64)
        kinship *= 0.5
        off = np.ones(len(block), dtype=bool)
        off[diagonal] = False
        nan = np.isnan(kinship) & off
        n_missing += int(nan.sum())
        infinite = np.isinf(kinship) & off
        if infinite.any():
            i, j = _cell_pairs(np.flatnonzero(infinite)[:3] + start, row, row_starts)
            shown = ", ".join(f"({ids[b]}, {ids[a]})" for a, b in zip(i, j, strict=True))
            raise DepgraphError("invalid_value", f"{what} holds infinite values, e.g. at {shown}", path=str(bin_path))
        above = (kinship > 0.5) & off
        if above.any():  # GRM above 1: possible for inbred relatives, flagged; above 2 no kinship can be
            _flag_above_half(np.flatnonzero(above), kinship, start, row, row_starts, ids, what, flagged)
        hit = (kinship >= threshold) & off
        if not hit.any():
            continue
        local = np.flatnonzero(hit)
        i, j = _cell_pairs(local + start, row, row_starts)
        parts.append((ids[j], ids[i], kinship[local]))  # j < i: id1 comes first in .grm.id
    counts = {
        "pairs_read": n * (n - 1) // 2,
        "pairs_missing": n_missing,
        "scale": "GRM / 2",
        "individuals": n,
        "files": [file_name(bin_path), file_name(id_path)],
        "grm_n_file": Path(f"{prefix}.grm.N.bin").is_file(),
    }
    if flagged["above_half"]:
        counts |= flagged
    return _concat(parts), counts


_FLAGGED_SHOWN = 50  # flagged pairs kept in a record; the count is exact


def _flag_above_half(
    local: np.ndarray,
    kinship: np.ndarray,
    start: int,
    row: int,
    row_starts: np.ndarray,
    ids: np.ndarray,
    what: str,
    flagged: dict[str, Any],
) -> None:
    """Count GRM pairs with kinship above 0.5 (GRM above 1) into ``flagged``;
    kinship above 1 (GRM above 2) is no relationship at all: ``invalid_value``."""
    i, j = _cell_pairs(local + start, row, row_starts)
    values = kinship[local]
    impossible = values > 1.0
    if impossible.any():
        shown = ", ".join(
            f"({ids[b]}, {ids[a]}) GRM {2 * v:g}"
            for a, b, v in zip(i[impossible][:3], j[impossible][:3], values[impossible][:3], strict=True)
        )
        raise DepgraphError(
            "invalid_value",
            f"{what} holds {int(impossible.sum())} off-diagonal value(s) above 2 (kinship above 1, more than any "
            f"relationship), e.g. {shown}",
        )
    flagged["above_half"] += len(local)
    room = _FLAGGED_SHOWN - len(flagged["above_half_pairs"])
    for a, b, v in zip(i[:room], j[:room], values[:room], strict=True):
        flagged["above_half_pairs"].append(f"{ids[b]}-{ids[a]}={v:.4g}")
        flagged["above_half_ids"].extend(x for x in (str(ids[b]), str(ids[a])) if x not in flagged["above_half_ids"])


def _cell_pairs(cells: np.ndarray, first_row: int, row_starts: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Row and column (``i >= j``) of global lower-triangle cell indices that
    fall in the block starting at ``first_row`` (``row_starts``: i(i+1)/2 of its rows)."""
    offset = np.searchsorted(row_starts, cells, side="right") - 1
    return (offset + first_row).astype(np.int64), (cells - row_starts[offset]).astype(np.int64)
