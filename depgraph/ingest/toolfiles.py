"""What the readers of genetics tools' files share: a compressed file opened through its compression, a header line
read, the ``id_template`` that builds a subject id from a tool's family id (FID) and individual id (IID), the id files
that name a matrix's rows (GCTA's ``.grm.id``, PLINK 2's ``.king.id``), and the frame of kinship pairs they return.

>>> build_ids(parse_template("{FID}_{IID}"), np.array(["F1"], dtype=object), np.array(["A"], dtype=object)).tolist()
['F1_A']
"""

from __future__ import annotations

import bz2
import codecs
import gzip
import io
import lzma
import string
import zlib
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from depgraph.errors import DepgraphError, describe_ids
from depgraph.io.delimited import ENCODING_HINT
from depgraph.io.tables import compression_failure

COMPRESSION_SUFFIXES = (".gz", ".bz2", ".xz", ".zst")


TEMPLATE_FIELDS = ("FID", "IID")


SHOWN = 5  # offending lines named in a message


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
        if field not in TEMPLATE_FIELDS or spec or conversion:
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
    refuse_fid(template, what)
    return None if template == [("", "IID")] else template


def templated(template: list[tuple[str, str | None]], ids: np.ndarray) -> np.ndarray:
    """Subject ids from individual ids (no family ids) through a parsed template."""
    return build_ids(template, None, ids)


def uses_fid(template: list[tuple[str, str | None]]) -> bool:
    return any(field == "FID" for _, field in template)


def refuse_fid(template: list[tuple[str, str | None]], what: str, hint: str = "") -> None:
    if uses_fid(template):
        raise DepgraphError(
            "invalid_argument",
            f"id_template uses {{FID}} but {what} has no family-id column{hint}; use id_template='{{IID}}'",
        )


def build_ids(template: list[tuple[str, str | None]], fid: np.ndarray | None, iid: np.ndarray) -> np.ndarray:
    """Subject ids (object array) from FID and IID arrays."""
    if template == [("", "IID")]:
        return iid.astype(object, copy=False)
    out = np.full(len(iid), "", dtype=object)
    for literal, field in template:
        piece = literal if field is None else (iid if field == "IID" else fid)
        out = out + piece
    return out


def empty_pairs() -> pd.DataFrame:
    return pairs_frame(np.empty(0, dtype=object), np.empty(0, dtype=object), np.empty(0, dtype=np.float64))


def pairs_frame(id1: np.ndarray, id2: np.ndarray, kinship: np.ndarray) -> pd.DataFrame:
    return pd.DataFrame(
        {
            "id1": pd.Series(id1, dtype=object),
            "id2": pd.Series(id2, dtype=object),
            "kinship": pd.Series(kinship, dtype=np.float64),
        }
    )


def lines_text(lines: np.ndarray | list[int]) -> str:
    numbers = [int(n) for n in lines]
    word = "line" if len(numbers) == 1 else "lines"
    return f"{word} {describe_ids(numbers, SHOWN)}"


def strip_compression(name: str) -> str:
    for suffix in COMPRESSION_SUFFIXES:
        if name.endswith(suffix):
            return name[: -len(suffix)]
    return name


def open_binary(path: Path) -> Any:
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


def first_line(path: Path, what: str, encoding: str | None = None) -> str:
    """The header line (at most 64 kB of it), without a byte-order mark; "" for an empty file. A file that is not
    UTF-8 text (or not ``encoding`` text), or a corrupt compressed one, is a ``parse`` error."""
    try:
        with io.TextIOWrapper(open_binary(path), encoding=encoding or "utf-8-sig", newline="") as handle:
            return handle.readline(65536).rstrip("\r\n")
    except UnicodeDecodeError:
        raise undecodable(path, what, encoding) from None
    except (OSError, EOFError, zlib.error, lzma.LZMAError) as exc:
        raise read_failure(exc, what, path) from None


def undecodable(path: Path, what: str, encoding: str | None) -> DepgraphError:
    """The ``parse`` error for a text file that is not UTF-8 (or not ``encoding``) text, naming the first bad line
    (found by reading the file again as bytes, a block at a time: this is the error path only)."""
    decoder = codecs.getincrementaldecoder(encoding or "utf-8")()
    line, seen = 1, b""
    try:
        with open_binary(path) as handle:
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
        return read_failure(exc, what, path)
    byte = f" (line {line} holds the byte 0x{seen[0]:02x})" if seen else ""
    if encoding is not None:
        return DepgraphError("parse", f"{what} is not {encoding} text{byte}", path=str(path), line=line)
    return DepgraphError("parse", f"{what} is not UTF-8 text{byte}; {ENCODING_HINT}", path=str(path), line=line)


def read_failure(exc: BaseException, what: str, path: Path) -> DepgraphError:
    """A failure while reading ``path``: ``parse`` when a compressed file is
    truncated or corrupt, ``io`` when the disk or the permissions failed."""
    compressed = strip_compression(path.name.lower()) != path.name.lower()
    if compressed and compression_failure(exc):
        return DepgraphError("parse", f"{what} is truncated or corrupt: {exc}", path=str(path))
    return DepgraphError("io", f"{what} cannot be read: {exc}", path=str(path))


def concat_pairs(parts: list[tuple[np.ndarray, np.ndarray, np.ndarray]]) -> pd.DataFrame:
    if not parts:
        return empty_pairs()
    return pairs_frame(
        np.concatenate([a for a, _, _ in parts]),
        np.concatenate([b for _, b, _ in parts]),
        np.concatenate([k for _, _, k in parts]),
    )
