"""Relatedness matrices written by genetics tools, read to the pairs at or above a threshold: GCTA's GRM (binary
``.grm.bin``, and text ``.grm.gz`` / ``.grm`` / ``.grm.zst``) and PLINK 2's KING matrices (``--make-king``: text
``.king`` / ``.king.zst``, binary ``.king.bin``), each with the id file that names its rows. A matrix is read in
blocks of rows, never whole.
"""

from __future__ import annotations

import math
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from depgraph.errors import DepgraphError, describe_ids
from depgraph.ingest.toolfiles import build_ids, concat_pairs, lines_text, uses_fid
from depgraph.io.files import existing_file, file_name

#: The names a GCTA GRM file set goes by (lower case): its matrix, its counts, its ids, its text forms.
GRM_SUFFIXES = (".grm.bin", ".grm.n.bin", ".grm.id", ".grm")


def grm_prefix(path: str | os.PathLike[str]) -> str:
    text = os.fspath(path)
    lower = text.lower()
    for suffix in GRM_SUFFIXES:
        if lower.endswith(suffix):
            return text[: -len(suffix)]
    return text


def read_id_file(id_path: Path, template: list[tuple[str, str | None]]) -> np.ndarray:
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
        raise DepgraphError("missing_id", f"{what}: FID or IID is missing at {lines_text(lines)}", lines=lines.tolist())
    ids = build_ids(template, fid, iid)
    repeated = pd.Series(ids).duplicated(keep=False).to_numpy()
    if repeated.any():
        dups = list(dict.fromkeys(ids[repeated].tolist()))
        lines = np.flatnonzero(repeated) + 1
        distinct_raw = len(set(zip(fid[repeated], iid[repeated], strict=True))) > len(dups)
        hint = " (the id_template drops FID; '{FID}_{IID}' keeps it)" if distinct_raw and not uses_fid(template) else ""
        raise DepgraphError(
            "duplicate_id",
            f"{what} repeat the id(s) {describe_ids(dups)} at {lines_text(lines)}{hint}",
            ids=dups,
            lines=lines.tolist(),
        )
    return ids


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
    bin_path = existing_file(f"{prefix}.grm.bin", "GCTA GRM matrix")
    id_path = existing_file(f"{prefix}.grm.id", "GCTA GRM ids")
    what = f"GCTA GRM {str(bin_path)!r}"
    ids = read_id_file(id_path, template)
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
        "files": [file_name(bin_path), file_name(id_path)],
        "grm_n_file": Path(f"{prefix}.grm.N.bin").is_file(),
    }
    if flagged["above_half"]:
        counts |= flagged
    return concat_pairs(parts), counts


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
    """Count GRM pairs with kinship above 0.5 (GRM above 1) into ``flagged``;
    kinship above 1 (GRM above 2) is no relationship at all: ``invalid_value``."""
    i, j = cell_pairs(local + start, row, row_starts)
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
    room = FLAGGED_SHOWN - len(flagged["above_half_pairs"])
    for a, b, v in zip(i[:room], j[:room], values[:room], strict=True):
        flagged["above_half_pairs"].append(f"{ids[b]}-{ids[a]}={v:.4g}")
        flagged["above_half_ids"].extend(x for x in (str(ids[b]), str(ids[a])) if x not in flagged["above_half_ids"])


def cell_pairs(cells: np.ndarray, first_row: int, row_starts: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Row and column (``i >= j``) of global lower-triangle cell indices that
    fall in the block starting at ``first_row`` (``row_starts``: i(i+1)/2 of its rows)."""
    offset = np.searchsorted(row_starts, cells, side="right") - 1
    return (offset + first_row).astype(np.int64), (cells - row_starts[offset]).astype(np.int64)
