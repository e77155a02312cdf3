"""Relatedness matrices written by genetics tools, read to the pairs at or above a threshold: GCTA's GRM (binary
``.grm.bin``, and text ``.grm.gz`` / ``.grm`` / ``.grm.zst``) and PLINK 2's KING matrices (``--make-king``: text
``.king`` / ``.king.zst``, binary ``.king.bin``), each with the id file that names its rows. A matrix is read in
blocks of rows, never whole.
"""

from __future__ import annotations

import io
import math
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from depgraph.errors import DepgraphError, describe_ids
from depgraph.ingest.toolfiles import (
    build_ids,
    concat_pairs,
    first_line,
    lines_text,
    open_binary,
    read_failure,
    refuse_fid,
    strip_compression,
    uses_fid,
)
from depgraph.io.files import existing_file, file_name

#: The names a GCTA GRM file set goes by (lower case): its matrix, its counts, its ids, its text forms.
GRM_SUFFIXES = (".grm.bin", ".grm.n.bin", ".grm.id", ".grm")
#: A GRM's matrix files, in the order a prefix is looked up: GCTA's binary form, then its text forms.
GRM_MATRICES = (".grm.bin", ".grm.gz", ".grm.zst", ".grm")
#: A PLINK 2 KING matrix's names (lower case): its binary form, its text forms, its ids.
KING_SUFFIXES = (".king.bin", ".king", ".king.id")


def grm_prefix(path: str | os.PathLike[str]) -> str:
    """A GRM file set's prefix, from any of its files' names (or the prefix itself)."""
    text = os.fspath(path)
    lower = strip_compression(text.lower())
    for suffix in GRM_SUFFIXES:
        if lower.endswith(suffix):
            return text[: len(lower) - len(suffix)]
    return text


def read_id_file(id_path: Path, template: list[tuple[str, str | None]], what: str) -> np.ndarray:
    """The subject ids of a matrix's rows, in order, from its id file: GCTA's ``.grm.id`` (FID and IID, no header)
    or PLINK 2's (``.king.id``, ``.grm.id`` written with ``id-header``: a ``#FID IID`` or ``#IID`` header). Blank
    ids are ``missing_id``; an id given twice is ``duplicate_id`` (with the template that would keep them apart)."""
    what = f"{what} {str(id_path)!r}"
    header = first_line(id_path, what)
    names = header.lstrip("#").split() if header.startswith("#") else None
    try:
        table = pd.read_csv(
            id_path, sep=r"\s+", header=None, skiprows=1 if names else 0, dtype=object, keep_default_na=False,
            na_values=[], engine="c",
        )  # fmt: skip
    except pd.errors.EmptyDataError:
        raise DepgraphError("empty_input", f"{what} is empty (no individuals)", path=str(id_path)) from None
    except (pd.errors.ParserError, UnicodeDecodeError, ValueError) as exc:
        reason = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        raise DepgraphError("parse", f"{what} cannot be parsed: {reason}", path=str(id_path)) from None
    names = names or ["FID", "IID"]
    if table.shape[1] < len(names) or "IID" not in names or (names == ["FID", "IID"] and table.shape[1] < 2):
        raise DepgraphError(
            "schema",
            f"{what} must have the columns FID and IID, or a '#FID IID' or '#IID' header (found {table.shape[1]} "
            f"column(s){', header ' + repr(header) if header.startswith('#') else ''})",
            path=str(id_path),
        )
    iid = table[names.index("IID")].to_numpy(dtype=object)
    fid = table[names.index("FID")].to_numpy(dtype=object) if "FID" in names else None
    if fid is None:
        refuse_fid(template, what)
    blank = pd.isna(iid) | (iid == "") | (False if fid is None else pd.isna(fid) | (fid == ""))
    if np.any(blank):
        lines = np.flatnonzero(blank) + 1 + (1 if header.startswith("#") else 0)
        raise DepgraphError("missing_id", f"{what}: FID or IID is missing at {lines_text(lines)}", lines=lines.tolist())
    ids = build_ids(template, fid, iid)
    _refuse_repeated_ids(ids, fid, iid, template, what, 1 + (1 if header.startswith("#") else 0))
    return ids


def _refuse_repeated_ids(
    ids: np.ndarray, fid: np.ndarray | None, iid: np.ndarray, template: list[tuple[str, str | None]], what: str,
    first: int,
) -> None:  # fmt: skip
    repeated = pd.Series(ids).duplicated(keep=False).to_numpy()
    if not repeated.any():
        return
    dups = list(dict.fromkeys(ids[repeated].tolist()))
    lines = np.flatnonzero(repeated) + first
    raw = set(zip(fid[repeated], iid[repeated], strict=True)) if fid is not None else set(iid[repeated])
    hint = (
        " (the id_template drops FID; '{FID}_{IID}' keeps it)"
        if len(raw) > len(dups) and not uses_fid(template)
        else ""
    )
    if len(raw) > len(dups) and uses_fid(template):
        hint = " (different FID and IID pairs give one id through the id_template: choose a separator they lack)"
    raise DepgraphError(
        "duplicate_id",
        f"{what} repeat the id(s) {describe_ids(dups)} at {lines_text(lines)}{hint}",
        ids=dups,
        lines=lines.tolist(),
    )


def grm_blocks(bin_path: Path, n: int, chunk_cells: int) -> Iterator[tuple[int, int, int, np.ndarray]]:
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


def read_grm(
    path: str | os.PathLike[str], threshold: float, template: list[tuple[str, str | None]], chunk_cells: int
) -> tuple[pd.DataFrame, dict[str, Any]]:
    prefix = grm_prefix(path)
    matrix, id_path = grm_files(path)
    if not matrix.name.lower().endswith(".grm.bin"):
        return read_text_grm(matrix, id_path, threshold, template, chunk_cells)
    bin_path = matrix
    what = f"GCTA GRM {str(bin_path)!r}"
    ids = read_id_file(id_path, template, "GCTA GRM ids")
    n = len(ids)
    _refuse_wrong_size(bin_path, id_path, n, what)
    parts: list[tuple[np.ndarray, np.ndarray, np.ndarray]] = []
    n_missing = 0
    flagged: dict[str, Any] = {"above_half": 0, "above_half_ids": [], "above_half_pairs": []}
    for row, end, start, block in grm_blocks(bin_path, n, chunk_cells):
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
            i, j = cell_pairs(np.flatnonzero(infinite)[:3] + start, row, row_starts)
            shown = ", ".join(f"({ids[b]}, {ids[a]})" for a, b in zip(i, j, strict=True))
            raise DepgraphError("invalid_value", f"{what} holds infinite values, e.g. at {shown}", path=str(bin_path))
        above = (kinship > 0.5) & off
        if above.any():  # GRM above 1: possible for inbred relatives, flagged; above 2 no kinship can be
            flag_above_half(np.flatnonzero(above), kinship, start, row, row_starts, ids, what, flagged)
        hit = (kinship >= threshold) & off
        if not hit.any():
            continue
        local = np.flatnonzero(hit)
        i, j = cell_pairs(local + start, row, row_starts)
        parts.append((ids[j], ids[i], kinship[local]))  # j < i: id1 comes first in .grm.id
    counts = {
        "pairs_read": n * (n - 1) // 2,
        "pairs_missing": n_missing,
        "scale": "GRM / 2",
        "individuals": n,
        "individuals_ids": ids,
        "files": [file_name(bin_path), file_name(id_path)],
        "grm_n_file": Path(f"{prefix}.grm.N.bin").is_file(),
    }
    if flagged["above_half"]:
        counts |= flagged
    return concat_pairs(parts), counts


def _refuse_wrong_size(bin_path: Path, id_path: Path, n: int, what: str) -> None:
    """A binary GRM holds n(n+1)/2 float32 cells for the ``n`` individuals of its id file; else ``schema``."""
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


FLAGGED_SHOWN = 50  # flagged pairs kept in a record; the count is exact


def flag_above_half(
    local: np.ndarray,
    kinship: np.ndarray,
    start: int,
    row: int,
    row_starts: np.ndarray,
    ids: np.ndarray,
    what: str,
    flagged: dict[str, Any],
) -> None:
    """:func:`flag_pairs` for cells of a binary GRM block (``local`` indexes the block, which starts at cell
    ``start`` of row ``row``)."""
    i, j = cell_pairs(local + start, row, row_starts)
    flag_pairs(ids[j], ids[i], kinship[local], what, flagged)


def cell_pairs(cells: np.ndarray, first_row: int, row_starts: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Row and column (``i >= j``) of global lower-triangle cell indices that
    fall in the block starting at ``first_row`` (``row_starts``: i(i+1)/2 of its rows)."""
    offset = np.searchsorted(row_starts, cells, side="right") - 1
    return (offset + first_row).astype(np.int64), (cells - row_starts[offset]).astype(np.int64)


# --------------------------------------------------------------------------- which files
def grm_files(path: str | os.PathLike[str]) -> tuple[Path, Path]:
    """A GRM's matrix file and its ids, each checked to exist: the matrix ``path`` names (``.grm.bin``, ``.grm.gz``,
    ``.grm.zst``, ``.grm``), else, for a prefix or a ``.grm.id``, the first of :data:`GRM_MATRICES` that exists."""
    prefix = grm_prefix(path)
    given = Path(path)
    named = strip_compression(given.name.lower())
    if named.endswith((".grm.bin", ".grm")) and given.is_file():
        matrix = given
    else:
        found = [Path(f"{prefix}{suffix}") for suffix in GRM_MATRICES if Path(f"{prefix}{suffix}").is_file()]
        matrix = found[0] if found else existing_file(f"{prefix}.grm.bin", "GCTA GRM matrix")
    return matrix, existing_file(f"{prefix}.grm.id", "GCTA GRM ids")


def king_prefix(path: str | os.PathLike[str]) -> str:
    """A PLINK 2 KING matrix's prefix, from any of its files' names."""
    text = os.fspath(path)
    lower = strip_compression(text.lower())
    for suffix in KING_SUFFIXES:
        if lower.endswith(suffix):
            return text[: len(lower) - len(suffix)]
    return text


def king_files(path: str | os.PathLike[str]) -> tuple[Path, Path]:
    """A PLINK 2 KING matrix's file (the one ``path`` names, else ``.king.bin``, ``.king.zst``, ``.king``) and its
    ``.king.id``, each checked to exist."""
    prefix = king_prefix(path)
    given = Path(path)
    if strip_compression(given.name.lower()).endswith((".king.bin", ".king")) and given.is_file():
        matrix = given
    else:
        found = [
            Path(f"{prefix}{s}")
            for s in (".king.bin", ".king.zst", ".king.gz", ".king")
            if Path(f"{prefix}{s}").is_file()
        ]
        matrix = found[0] if found else existing_file(f"{prefix}.king", "PLINK 2 KING matrix")
    return matrix, existing_file(f"{prefix}.king.id", "PLINK 2 KING ids")


# --------------------------------------------------------------------------- GCTA's text GRM
def read_text_grm(
    matrix: Path, id_path: Path, threshold: float, template: list[tuple[str, str | None]], chunk_rows: int
) -> tuple[pd.DataFrame, dict[str, Any]]:
    """GCTA's text GRM (``--make-grm-gz``; PLINK 2's ``--make-grm-list``): one line a cell of the lower triangle,
    ``i j count value`` (1-based rows of the id file, diagonal included), read ``chunk_rows`` lines at a time, by the
    binary GRM's rules: kinship = value / 2, the diagonal ignored, NaN missing, above 0.5 flagged, above 1 refused."""
    what = f"GCTA text GRM {str(matrix)!r}"
    ids = read_id_file(id_path, template, "GCTA GRM ids")
    n = len(ids)
    parts: list[tuple[np.ndarray, np.ndarray, np.ndarray]] = []
    flagged: dict[str, Any] = {"above_half": 0, "above_half_ids": [], "above_half_pairs": []}
    read = missing = 0
    for line, chunk in _grm_lines(matrix, chunk_rows, what):
        i, j = chunk[:, 0].astype(np.int64), chunk[:, 1].astype(np.int64)
        bad = (i < 1) | (j < 1) | (i > n) | (j > i) | (chunk[:, 0] != i) | (chunk[:, 1] != j)
        if bad.any():
            at = line + int(np.flatnonzero(bad)[0])
            raise DepgraphError(
                "schema",
                f"{what}: line {at} names the cell ({chunk[bad][0, 0]:g}, {chunk[bad][0, 1]:g}), which is not in the "
                f"lower triangle of {n} individuals ({str(id_path)!r}: rows 1 to {n}, column ≤ row)",
                path=str(matrix),
            )
        off = i != j
        kinship = chunk[:, 3] * 0.5
        read += int(off.sum())
        missing += int((np.isnan(kinship) & off).sum())
        _refuse_infinite(kinship, off, ids[i - 1], ids[j - 1], what)
        above = (kinship > 0.5) & off
        if above.any():
            flag_pairs(ids[j[above] - 1], ids[i[above] - 1], kinship[above], what, flagged)
        hit = (kinship >= threshold) & off
        if hit.any():
            parts.append((ids[j[hit] - 1], ids[i[hit] - 1], kinship[hit]))
    counts = {"pairs_read": read, "pairs_missing": missing, "scale": "GRM / 2", "individuals": n,
              "individuals_ids": ids, "files": [file_name(matrix), file_name(id_path)]}  # fmt: skip
    if flagged["above_half"]:
        counts |= flagged
    return concat_pairs(parts), counts


def _grm_lines(matrix: Path, chunk_rows: int, what: str) -> Iterator[tuple[int, np.ndarray]]:
    """Blocks of a text GRM's lines as float rows (i, j, count, value), with the first block line's number."""
    line = 1
    try:
        with open_binary(matrix) as handle:
            reader = pd.read_csv(handle, sep=r"\s+", header=None, dtype=np.float64, chunksize=chunk_rows,
                                 engine="c", na_values=["nan", "NaN", "NA"])  # fmt: skip
            for chunk in reader:
                if chunk.shape[1] != 4:
                    raise DepgraphError(
                        "schema",
                        f"{what}: line {line} has {chunk.shape[1]} fields; a text GRM line is 'i j count value'",
                        path=str(matrix),
                    )
                yield line, chunk.to_numpy()
                line += len(chunk)
    except pd.errors.EmptyDataError:
        raise DepgraphError("empty_input", f"{what} is empty", path=str(matrix)) from None
    except (ValueError, pd.errors.ParserError) as exc:
        reason = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        raise DepgraphError("parse", f"{what} cannot be parsed near line {line}: {reason}", path=str(matrix)) from None
    except OSError as exc:
        raise read_failure(exc, what, matrix) from None


def _refuse_infinite(kinship: np.ndarray, off: np.ndarray, a: np.ndarray, b: np.ndarray, what: str) -> None:
    infinite = np.isinf(kinship) & off
    if infinite.any():
        shown = ", ".join(f"({x}, {y})" for x, y in zip(b[infinite][:3], a[infinite][:3], strict=True))
        raise DepgraphError("invalid_value", f"{what} holds infinite values, e.g. at {shown}")


def flag_pairs(id1: np.ndarray, id2: np.ndarray, kinship: np.ndarray, what: str, flagged: dict[str, Any]) -> None:
    """Count pairs with kinship above 0.5 (a GRM above 1) into ``flagged``, the first of them kept by id; above 1
    (a GRM above 2) no relationship can be: ``invalid_value``."""
    impossible = kinship > 1.0
    if impossible.any():
        cells = zip(id1[impossible][:3], id2[impossible][:3], kinship[impossible][:3], strict=True)
        shown = ", ".join(f"({a}, {b}) GRM {2 * v:.6g}" for a, b, v in cells)
        raise DepgraphError(
            "invalid_value",
            f"{what} holds {int(impossible.sum())} off-diagonal value(s) above 2 (kinship above 1, more than any "
            f"relationship), e.g. {shown}",
        )
    flagged["above_half"] += len(kinship)
    room = FLAGGED_SHOWN - len(flagged["above_half_pairs"])
    for a, b, v in zip(id1[:room], id2[:room], kinship[:room], strict=True):
        flagged["above_half_pairs"].append(f"{a}-{b}={above_half(v)}")
        flagged["above_half_ids"].extend(x for x in (str(a), str(b)) if x not in flagged["above_half_ids"])


def above_half(value: float) -> str:
    """A kinship above 0.5 written with the digits that show it is above (0.50003, never 0.5).

    >>> above_half(0.50003), above_half(0.5075)
    ('0.50003', '0.5075')
    """
    for digits in range(4, 17):
        text = f"{value:.{digits}g}"
        if float(text) > 0.5:
            return text
    return repr(value)


# --------------------------------------------------------------------------- PLINK 2's KING matrices
#: The KING-robust kinship estimator is at most 0.5 (a duplicate); a larger value is no estimate of it.
KING_MAXIMUM = 0.5


def read_king_matrix(
    path: str | os.PathLike[str], threshold: float, template: list[tuple[str, str | None]], chunk_rows: int
) -> tuple[pd.DataFrame, dict[str, Any]]:
    """PLINK 2's ``--make-king`` matrix with its ``.king.id``: text (``triangle``: row r holds the kinship of
    individual r+1 with 0..r; ``square`` / ``square0``: n rows of n), optionally compressed, or binary ``.king.bin``
    (float64, or float32 with ``bin4``; square, square0 or triangle, told by the file's size). Only the lower
    triangle is read, in blocks of rows; NaN is missing, a value above 0.5 is refused (no KING-robust estimate)."""
    matrix, id_path = king_files(path)
    what = f"PLINK 2 KING matrix {str(matrix)!r}"
    ids = read_id_file(id_path, template, "PLINK 2 KING ids")
    n = len(ids)
    rows = _king_binary_rows(matrix, n, chunk_rows, what) if matrix.name.lower().endswith(".king.bin") else (
        _king_text_rows(matrix, n, chunk_rows, what))  # fmt: skip
    parts: list[tuple[np.ndarray, np.ndarray, np.ndarray]] = []
    read = missing = 0
    for i, j, kinship in rows:  # row index i > column index j
        read += len(kinship)
        missing += int(np.isnan(kinship).sum())
        _refuse_infinite(kinship, np.ones(len(kinship), dtype=bool), ids[i], ids[j], what)
        over = kinship > KING_MAXIMUM + 1e-9
        if over.any():
            k = int(np.flatnonzero(over)[0])
            raise DepgraphError(
                "invalid_value",
                f"{what} holds kinship {kinship[k]:.6g} for ({ids[j[k]]}, {ids[i[k]]}), above 0.5: the KING-robust "
                "estimator is at most 0.5 (duplicates); is this a KING matrix?",
                path=str(matrix),
            )
        hit = kinship >= threshold
        if hit.any():
            parts.append((ids[j[hit]], ids[i[hit]], kinship[hit]))
    counts = {"pairs_read": read, "pairs_missing": missing, "scale": "KINSHIP", "individuals": n,
              "individuals_ids": ids, "files": [file_name(matrix), file_name(id_path)]}  # fmt: skip
    return concat_pairs(parts), counts


def _king_binary_rows(
    matrix: Path, n: int, chunk_rows: int, what: str
) -> Iterator[tuple[np.ndarray, np.ndarray, np.ndarray]]:
    """The lower-triangle cells of a binary KING matrix, a block of rows at a time: ``(rows, columns, kinship)``."""
    size, square, triangle = matrix.stat().st_size, n * n, n * (n - 1) // 2
    layouts = {square * 8: ("<f8", True), square * 4: ("<f4", True), triangle * 8: ("<f8", False),
               triangle * 4: ("<f4", False)}  # fmt: skip
    if size not in layouts:
        raise DepgraphError(
            "schema",
            f"{what} holds {size} bytes, which no layout of {n} individuals gives (square: {square * 8} or "
            f"{square * 4} bytes; triangle: {triangle * 8} or {triangle * 4}); do its .king.id and it belong together?",
            path=str(matrix),
        )
    dtype, is_square = layouts[size]
    width = np.dtype(dtype).itemsize
    block = max(1, chunk_rows // max(n, 1))
    with open(matrix, "rb") as handle:
        first = 0 if is_square else 1  # a triangle's first row is individual 1's (with 0)
        for start in range(first, n, block):
            end = min(n, start + block)
            if is_square:
                handle.seek(start * n * width)
                values = np.fromfile(handle, dtype=dtype, count=(end - start) * n).reshape(end - start, n)
                r, c = _lower(start, end, n)
                yield r, c, values[r - start, c].astype(np.float64)
            else:
                handle.seek((start * (start - 1) // 2) * width)
                count = end * (end - 1) // 2 - start * (start - 1) // 2
                r, c = _lower(start, end, n)
                yield r, c, np.fromfile(handle, dtype=dtype, count=count).astype(np.float64)


def _lower(start: int, end: int, n: int) -> tuple[np.ndarray, np.ndarray]:
    """Row and column of every lower-triangle cell of rows ``start`` to ``end`` (row-major: (r, 0..r-1))."""
    rows = np.arange(start, end, dtype=np.int64)
    r = np.repeat(rows, rows)
    offsets = np.repeat(rows * (rows - 1) // 2 - start * (start - 1) // 2, rows)
    c = np.arange(len(r), dtype=np.int64) - offsets
    return r, c


def _king_text_rows(
    matrix: Path, n: int, chunk_rows: int, what: str
) -> Iterator[tuple[np.ndarray, np.ndarray, np.ndarray]]:
    """The lower-triangle cells of a text KING matrix (triangle, square or square0), one block of lines at a time."""
    triangle: bool | None = None
    row = 0
    try:
        with io.TextIOWrapper(open_binary(matrix), encoding="utf-8") as handle:
            for number, line in enumerate(handle, start=1):
                try:
                    values = np.array(line.split(), dtype=np.float64)
                except ValueError as exc:  # a word where a number belongs
                    raise DepgraphError(
                        "parse", f"{what}: line {number} holds a value that is not a number: {exc}", path=str(matrix)
                    ) from None
                if triangle is None:
                    triangle = len(values) == 1 and n > 1  # a square's first row holds n values
                    row = 1 if triangle else 0
                expected = row if triangle else n
                if len(values) != expected or row >= n:
                    raise DepgraphError(
                        "schema",
                        f"{what}: line {number} holds {len(values)} values; a {'triangle' if triangle else 'square'} "
                        f"KING matrix of {n} individuals has {expected} there (does its .king.id belong to it?)",
                        path=str(matrix),
                    )
                if row:
                    yield np.full(row, row, dtype=np.int64), np.arange(row, dtype=np.int64), values[:row]
                row += 1
    except (OSError, UnicodeDecodeError) as exc:
        raise read_failure(exc, what, matrix) from None
    if row != n:
        raise DepgraphError(
            "schema", f"{what} has {row} rows of the {n} its .king.id names: it ends early", path=str(matrix)
        )
