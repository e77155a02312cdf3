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

import csv
import lzma
import math
import os
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
from depgraph.ingest.matrices import (
    GRM_MATRICES,
    GRM_SUFFIXES,
    KING_SUFFIXES,
    grm_files,
    king_files,
    read_grm,
    read_king_matrix,
)
from depgraph.ingest.toolfiles import (
    SHOWN,
    build_ids,
    concat_pairs,
    first_line,
    lines_text,
    pairs_frame,
    parse_template,
    read_failure,
    refuse_fid,
    strip_compression,
    undecodable,
    uses_fid,
)
from depgraph.io.delimited import checked_encoding, header_delimiter
from depgraph.io.files import MISSING_TOKENS, existing_file, file_name, read_table
from depgraph.io.tables import EXCEL_SUFFIXES, non_number_kind, text_layout
from depgraph.io.textnumbers import COMMA_NUMBER, POINT_NUMBER, decimal_points
from depgraph.vocab import KING_DEGREE_THRESHOLDS

#: The formats :func:`read_kinship` reads.
KINSHIP_FORMATS: tuple[str, ...] = ("pairs", "king", "plink2-king", "plink-genome", "gcta-grm", "plink2-king-matrix")


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
    ``.grm.bin``, ``.grm.N.bin``, ``.grm.id``, ``.grm`` (``.grm.gz``, ``.grm.zst``: the text GRM) or a prefix with a
    ``<prefix>.grm.bin`` (or text GRM) beside it is a GCTA GRM; ``.king``, ``.king.bin``, ``.king.id`` or a prefix
    with a ``<prefix>.king.id`` beside it is a PLINK 2 KING matrix. A compression suffix
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
    base = strip_compression(name)
    if base.endswith(GRM_SUFFIXES):
        return "gcta-grm"
    if base.endswith(KING_SUFFIXES):
        return "plink2-king-matrix"
    if base.endswith(".kin"):
        return "king"
    if base.endswith(".genome"):
        return "plink-genome"
    if base.endswith(".kin0"):
        tokens = _header_tokens(existing_file(p, "kinship file"), encoding)
        return "plink2-king" if _looks_plink2(tokens) else "king"
    if any(Path(f"{p}{suffix}").is_file() for suffix in GRM_MATRICES):
        return "gcta-grm"
    if Path(f"{p}.king.id").is_file():
        return "plink2-king-matrix"
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
        frame, counts = read_grm(path, value, template, chunk_rows)
    elif fmt == "plink2-king-matrix":
        frame, counts = read_king_matrix(path, value, template, chunk_rows)
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


# --------------------------------------------------------------------------- text formats


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
    line = first_line(path, f"kinship file {str(path)!r}", checked_encoding(encoding))
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


@dataclass(frozen=True)
class _Header:
    """A kinship table's header, read: its separator, its columns as written, and which of them hold the ids,
    the family ids (None when the template does not use them or the file has none) and the kinship."""

    sep: str
    raw_columns: list[str]
    raw_of: dict[str, str]  # a column's name (plink2's '#' stripped) -> as written
    kin: str
    id1: str
    id2: str
    fid1: str | None
    fid2: str | None
    id_columns: list[str]

    @property
    def used(self) -> list[str]:
        return [*self.id_columns, self.kin]


def _read_header(
    p: Path, what: str, layout: _Layout, template: list[tuple[str, str | None]], encoding: str | None
) -> _Header:
    """The header of a kinship table, or ``empty_input`` / ``schema`` naming what is wrong with it."""
    header = first_line(p, what, encoding)
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
        refuse_fid(template, what, hint)
    wanted = [fid1, id1, fid2, id2] if fid1 is not None and uses_fid(template) else [id1, id2]
    id_columns = list(dict.fromkeys(c for c in wanted if c is not None))  # .kin: one FID column for both
    raw_of = dict(zip(names, raw_columns, strict=True))
    return _Header(sep, raw_columns, raw_of, kin, id1, id2, fid1, fid2, id_columns)  # type: ignore[arg-type]


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
    h = _read_header(p, what, layout, template, encoding)
    kin, id1, id2, fid1, fid2, id_columns = h.kin, h.id1, h.id2, h.fid1, h.fid2, h.id_columns
    rename = {h.raw_of[c]: c for c in h.used if h.raw_of[c] != c}
    # Every column is parsed (usecols would hide fields past the header; parsing them costs next to nothing
    # measured), no column is an index, and a short line leaves the last column missing: see _refuse_ragged_lines.
    reader = _text_reader(p, h.sep, [h.raw_of[c] for c in id_columns], chunk_rows, what, encoding)
    parts: list[tuple[np.ndarray, np.ndarray, np.ndarray]] = []
    counts = {"pairs_read": 0, "pairs_missing": 0}
    fids = (fid1, fid2) if fid1 in id_columns else None
    covered: list[np.ndarray] = []
    for chunk in _chunks(reader, what, p, encoding):
        _refuse_short_lines(chunk, h.raw_of[id1], h.raw_columns[-1], len(h.raw_columns), what)
        if rename:
            chunk = chunk.rename(columns=rename)
        _refuse_self_pairs(chunk, (id1, id2), fids, what, families_dropped=fids is None and fid1 is not None)
        covered.append(_individuals(chunk, template, (fid1, id1), (fid2, id2), fids is not None))
        kept = _filter_chunk(chunk, h.used, kin, layout, threshold, what, counts, decimal_comma=h.sep == ";")
        if kept is None:
            continue
        rows, kinship = kept
        fid_a = rows[fid1].to_numpy(dtype=object) if fid1 in id_columns else None
        fid_b = rows[fid2].to_numpy(dtype=object) if fid2 in id_columns else None
        iid_a, iid_b = rows[id1].to_numpy(dtype=object), rows[id2].to_numpy(dtype=object)
        _require_text_ids(rows.index.to_numpy(), [iid_a, iid_b, *(f for f in (fid_a, fid_b) if f is not None)], what)
        a, b = build_ids(template, fid_a, iid_a), build_ids(template, fid_b, iid_b)
        _refuse_templated_selves(a, b, rows.index.to_numpy() + 2, what)
        parts.append((a, b, kinship))
    counts["scale"] = layout.scale
    people = pd.concat(covered, ignore_index=True).drop_duplicates() if covered else None
    if people is not None and fids is not None:
        _refuse_colliding_ids(people, template, what)
    counts["individuals_ids"] = (  # sorted: the same whatever the chunks
        np.sort(np.asarray(people["id"].unique(), dtype=object)) if people is not None else np.empty(0, dtype=object)
    )
    return concat_pairs(parts), counts


def _individuals(
    chunk: pd.DataFrame, template: list[tuple[str, str | None]], one: tuple[str | None, str],
    two: tuple[str | None, str], families: bool,
) -> pd.DataFrame:  # fmt: skip
    """The distinct individuals a chunk's rows name (both sides, every row, kept or not: who the file covers), as
    ``fid``, ``iid`` and the subject ``id`` the template makes of them."""
    found = []
    for fid, iid in (one, two):
        people = chunk[[fid, iid] if families else [iid]].dropna().drop_duplicates()
        fids = people[fid].to_numpy(dtype=object) if families else np.full(len(people), None, dtype=object)
        iids = people[iid].to_numpy(dtype=object)
        found.append(pd.DataFrame({"fid": fids, "iid": iids, "id": build_ids(template, fids if families else None,
                                                                              iids)}))  # fmt: skip
    return pd.concat(found, ignore_index=True).drop_duplicates()


def _refuse_colliding_ids(people: pd.DataFrame, template: list[tuple[str, str | None]], what: str) -> None:
    """Two individuals (FID, IID) the template makes one subject id (``A_B`` + ``C`` and ``A`` + ``B_C`` under
    ``{FID}_{IID}``): ``ambiguity``, naming both, where they would silently be one subject."""
    twice = people[people.duplicated("id", keep=False)].sort_values(["id", "fid", "iid"])
    if twice.empty:
        return
    first = twice["id"].iloc[0]
    shown = " and ".join(f"FID {f!r} IID {i!r}" for f, i in twice.loc[twice["id"] == first, ["fid", "iid"]].values)
    raise DepgraphError(
        "ambiguity",
        f"{what}: {shown} both become the subject id {first!r} through the id_template ({len(twice['id'].unique())} "
        "such id(s)): choose a separator that no FID or IID holds",
        ids=twice["id"].unique().tolist(),
    )


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
        raise undecodable(p, what, encoding) from None
    except (pd.errors.ParserError, pd.errors.EmptyDataError, ValueError) as exc:
        raise DepgraphError("parse", f"{what} cannot be parsed: {_reason(exc)}", path=str(p)) from None
    except (OSError, EOFError, zlib.error, lzma.LZMAError) as exc:
        raise read_failure(exc, what, p) from None


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
            raise undecodable(path, what, encoding) from None
        except (pd.errors.ParserError, pd.errors.EmptyDataError, ValueError) as exc:
            raise DepgraphError("parse", f"{what} cannot be parsed: {_reason(exc)}", path=str(path)) from None
        except ImportError as exc:
            raise DepgraphError("io", f"{what} cannot be read: {exc}", path=str(path)) from None
        except (OSError, EOFError, zlib.error, lzma.LZMAError) as exc:
            raise read_failure(exc, what, path) from None
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
            f"{what} cannot be parsed: {lines_text(lines)} {verb} fewer fields than the header's {fields} "
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
        f"{what}: {lines_text(lines)} {verb} an id with itself ({describe_ids(selves)}){hint}",
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
        rows, values = chunk, raw.to_numpy(dtype=np.float64)
        counts["pairs_read"] += len(values)
    else:
        rows, values = _text_values(chunk, used, kin, what, counts, decimal_comma)
    _refuse_out_of_range(values, rows.index.to_numpy(), kin, layout, what)
    kinship = values * layout.factor if layout.factor != 1.0 else values
    _count_smallest(kinship, counts)
    keep = kinship >= threshold
    if not keep.any():
        return None
    return rows[keep], kinship[keep]


def _text_values(
    chunk: pd.DataFrame, used: list[str], kin: str, what: str, counts: dict[str, Any], decimal_comma: bool
) -> tuple[pd.DataFrame, np.ndarray]:
    """The rows of a chunk whose kinship column was read as text, and their kinship as numbers (NaN where the
    file says it is missing): blank lines skipped, a line missing its kinship field refused, text that is no
    number refused naming its lines."""
    raw = chunk[kin]
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
                f"{what}: {lines_text(lines)} {verb} fewer fields than the header (a truncated line?)",
                lines=lines.tolist(),
            )
        chunk, text = chunk[~empty_line], text[~empty_line]
    lines = chunk.index.to_numpy()
    missing = pd.Series(text, dtype=object).isin(MISSING_TOKENS).to_numpy()
    if decimal_comma:  # a ';' file: 0,25 is a number (a column mixing 0,25 and 0.25 is refused)
        text = _decimal_points(text, lines, kin, what)
    values = pd.to_numeric(pd.Series(text, dtype=object), errors="coerce").to_numpy(dtype=np.float64)
    bad = np.isnan(values) & ~missing
    if bad.any():
        shown = lines[bad] + 2
        raise DepgraphError(
            "invalid_value",
            f"{what}: {kin} is not a number at {lines_text(shown)} "
            f"(e.g. {describe_ids([repr(t) for t in text[bad][:3]], 3)})",
            lines=shown.tolist(),
            column=kin,
        )
    counts["pairs_read"] += len(values)
    counts["pairs_missing"] += int(missing.sum())
    return chunk, np.where(missing, np.nan, values)


def _refuse_out_of_range(values: np.ndarray, lines: np.ndarray, kin: str, layout: _Layout, what: str) -> None:
    """Refuse an infinite kinship, or one above what the file's kind of value can hold, naming the lines."""
    infinite = np.isinf(values)
    if infinite.any():
        shown = lines[infinite] + 2
        raise DepgraphError(
            "invalid_value", f"{what}: {kin} is infinite at {lines_text(shown)}", lines=shown.tolist(), column=kin
        )
    above = values > layout.maximum
    if above.any():
        shown = lines[above] + 2
        raise DepgraphError(
            "invalid_value",
            f"{what}: {kin} above {layout.maximum:g} at {lines_text(shown)} "
            f"(e.g. {describe_ids(values[above][:3].tolist(), 3)}): {layout.why}",
            lines=shown.tolist(),
            column=kin,
        )


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


def _count_smallest(kinship: np.ndarray, counts: dict[str, Any]) -> None:
    """The smallest kinship read so far: an unfiltered file holds the unrelated pairs' estimates too, which a file
    filtered when written lacks (:mod:`depgraph.ingest.coverage`)."""
    read = kinship[~np.isnan(kinship)]
    if len(read):
        counts["smallest_kinship"] = min(counts.get("smallest_kinship", math.inf), float(read.min()))


def _require_text_ids(index: np.ndarray, columns: list[np.ndarray], what: str) -> None:
    blank = np.zeros(len(index), dtype=bool)
    for values in columns:
        blank |= pd.isna(values) | (values == "")
    if blank.any():
        lines = index[blank] + 2
        raise DepgraphError(
            "missing_id", f"{what}: an id is missing or blank at {lines_text(lines)}", lines=lines.tolist()
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
    refuse_fid(template, what)
    text_file = layout is not None
    offset, where = (2, "line") if text_file else (1, "row")  # CSV: header is line 1

    def place(positions: np.ndarray) -> str:
        numbers = [int(n) + offset for n in positions]
        return f"{where}{'s' if len(numbers) > 1 else ''} {describe_ids(numbers, SHOWN)}"

    values, absent = _pair_kinship(frame, layout, what, place, offset)
    a, b = _pair_ids(frame, what, place, offset)
    keep = values >= threshold
    a, b = a[keep], b[keep]
    pairs = pairs_frame(build_ids(template, None, a), build_ids(template, None, b), values[keep])
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
    regular file (``io`` otherwise): the file itself, or a matrix (a GCTA GRM, a PLINK 2 KING matrix) and its ids.

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
        return list(grm_files(path))
    if found == "plink2-king-matrix":
        return list(king_files(path))
    return [existing_file(path, "kinship file")]
