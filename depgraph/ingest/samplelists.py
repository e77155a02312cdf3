"""Sample lists: the ids a derivation is restricted to (``derive --samples``, a study file's ``[grouping]
samples``), read from a text file with one id per line or from a table.

>>> import tempfile, pathlib
>>> path = pathlib.Path(tempfile.mkdtemp()) / "subset.txt"
>>> _ = path.write_text("# held-out batch" + chr(10) + "S1" + chr(10) + "S2#b  # a comment after a blank" + chr(10))
>>> read_sample_list(path)
(['S1', 'S2#b'], None)
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Protocol

from depgraph.errors import DepgraphError, describe_ids
from depgraph.io.delimited import checked_encoding, not_utf8, to_utf8
from depgraph.io.files import describe_source, read_bytes, read_table


def read_sample_list(path: Path, encoding: str | None = None) -> tuple[list[str], str | None]:
    """Sample ids from a CSV/TSV/Parquet table (its ``sample_id`` column, or its only column, whose header is
    returned too: :func:`refuse_headerless`) or a text file with one id per line (a ``#`` at the start of a
    line or after a blank starts a comment; one inside an id, ``S1#2``, is part of it), read as UTF-8 (with or
    without a byte-order mark) unless ``encoding`` names another text encoding."""
    codec = checked_encoding(encoding)
    header = None
    if path.suffix.lower() in (".csv", ".tsv", ".parquet", ".pq"):
        table = read_table(path, "samples file", encoding=codec)
        if "sample_id" in table.columns:
            column = table["sample_id"]
        elif len(table.columns) == 1:
            column, header = table.iloc[:, 0], str(table.columns[0])
        else:
            raise DepgraphError(
                "schema",
                f"samples file {str(path)!r} needs a sample_id column (columns: {describe_ids(table.columns)})",
            )
        ids = [str(v).strip() for v in column.dropna().tolist() if str(v).strip()]
    else:
        raw = read_bytes(path, "samples file")
        label = describe_source(path, "samples file")
        if codec is not None:
            raw = to_utf8(raw, codec, path, label)
        try:  # strict: a byte that is not UTF-8 would otherwise become U+FFFD and name another sample
            text = raw.decode("utf-8-sig")
        except UnicodeDecodeError:
            raise not_utf8(raw, path, label) from None
        ids = [COMMENT.split(line, maxsplit=1)[0].strip() for line in text.splitlines()]
        ids = [i for i in ids if i]
    if not ids:
        raise DepgraphError("empty_input", f"samples file {str(path)!r} lists no sample ids")
    return ids, header


#: Where a comment starts in a sample list: a ``#`` beginning the line or following a blank (never inside an id).
COMMENT = re.compile(r"(?:^|(?<=\s))#")


class DeclaredSamples(Protocol):
    """What the header check asks of a graph: whether it holds samples of some ids."""

    def holds_samples(self, ids: list[str]) -> bool: ...


def refuse_headerless(graph: DeclaredSamples, path: Path, header: str | None) -> None:
    """``schema`` when a one-column table's header is a sample of the graph (of either engine): the table has no
    header, and its first id would be read as the column's name and silently left out."""
    if header is None:
        return
    first = header.strip()
    if not graph.holds_samples([first, first.removeprefix("sample:")]):  # a node id too
        return
    raise DepgraphError(
        "schema",
        f"samples file {str(path)!r} has no header: its first line, {first!r}, is a sample of the graph "
        "and would be read as the column's name; begin the file with a sample_id line, or list the ids one per line "
        "in a .txt file",
    )
