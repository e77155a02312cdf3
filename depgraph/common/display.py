"""How results show themselves in a REPL and a notebook: a few lines of text, or an HTML table.

Guarantees: what is shown is bounded whatever the size of the cohort — a finding shows its first
:data:`FIRST_IDS` ids and how many more, never all of them — and in HTML every value (ids are user data,
and may hold ``<script>``) is escaped. Tables are rendered by pandas (``to_string`` and ``to_html``).

>>> import pandas as pd
>>> frame = pd.DataFrame({"code": ["unlinked_samples"], "count": [4], "about": [first_ids(["S1", "<S2>"], 4)]})
>>> print(text_table(frame))
code              count about
unlinked_samples      4 S1, <S2> and 2 more
>>> "&lt;S2&gt;" in html_block("findings", tables=[("", frame)]) and "<S2>" not in html_block("f", tables=[("", frame)])
True
"""

from __future__ import annotations

import contextlib
import html
from collections.abc import Callable, Iterable, Sequence
from contextlib import AbstractContextManager
from typing import Any

import numpy as np
import pandas as pd

from depgraph.errors import describe_ids

#: What shows a step of a long piece of work while it runs: a context manager made from the step's label (the
#: command line's progress line; :func:`quietly` by default).
Progress = Callable[[str], AbstractContextManager[None]]


def quietly(label: str) -> AbstractContextManager[None]:
    """Shows nothing: the default :data:`Progress`."""
    return contextlib.nullcontext()


#: How many ids a finding shows before "and N more".
FIRST_IDS = 3


def first_ids(ids: Sequence[Any], total: int | None = None, limit: int = FIRST_IDS) -> str:
    """The first ``limit`` ids and how many more of ``total`` (default: all ``ids``), on one line."""
    return describe_ids(ids, limit, total)


def ids_repr(ids: Sequence[Any], limit: int = FIRST_IDS) -> str:
    """A list's repr cut after ``limit`` items: ``['S1', 'S2', 'S3', ... and 99997 more]``.

    >>> ids_repr(("a", "b"))
    "['a', 'b']"
    """
    shown = ", ".join(repr(i) for i in ids[:limit])
    more = len(ids) - min(limit, len(ids))
    return f"[{shown}{', ... and ' + str(more) + ' more' if more else ''}]"


def share(fraction: float) -> str:
    """A share in whole percent, never rounded to 0 or 100 when it is not: ``"under 1%"``, ``"over 99%"``."""
    percent = 100 * fraction
    if 0 < percent < 1:
        return "under 1%"
    if 99 < percent < 100:
        return "over 99%"
    return f"{percent:.0f}%"


def _number(value: float) -> str:
    return f"{value:.3g}"


def _cells(frame: pd.DataFrame) -> pd.DataFrame:
    """Cells that print on one line: no list-valued or empty columns, text cells made one-line, missing as blank."""
    keep = [c for c in frame.columns if frame[c].notna().any() and not _holds_lists(frame[c])]
    out = frame[keep].copy()
    for column in out.columns:
        if out[column].dtype == object or pd.api.types.is_string_dtype(out[column]):
            out[column] = [
                "" if v is None or (isinstance(v, float) and np.isnan(v)) else describe_ids([v]) for v in out[column]
            ]
    return out


def _holds_lists(column: pd.Series) -> bool:
    present = column.dropna()
    return len(present) > 0 and isinstance(present.iloc[0], (list, tuple, np.ndarray, dict))


def text_table(frame: pd.DataFrame) -> str:
    """``frame`` as aligned text, text left-aligned and numbers right-aligned (list-valued columns left out)."""
    shown = _cells(frame)
    if shown.empty:
        return ""
    padded = {}
    for column in shown.columns:  # text left-aligned, its header too; numbers keep pandas' right alignment
        if shown[column].dtype == object or pd.api.types.is_string_dtype(shown[column]):
            width = max(len(str(column)), *(len(v) for v in shown[column]))
            shown[column] = [v.ljust(width) for v in shown[column]]
            padded[column] = str(column).ljust(width)
    text = shown.rename(columns=padded).to_string(index=False, float_format=_number)
    return "\n".join(line.rstrip() for line in text.splitlines())


def html_block(title: str, lines: Iterable[str] = (), tables: Iterable[tuple[str, pd.DataFrame]] = ()) -> str:
    """A titled HTML fragment: ``lines`` as paragraphs, then each ``(caption, frame)`` as a table. Every piece
    of text, cell and column name is escaped."""
    parts = [f'<div class="depgraph"><strong>{html.escape(title)}</strong>']
    parts += [f"<div>{html.escape(line)}</div>" for line in lines]
    for caption, frame in tables:
        shown = _cells(frame)
        if shown.empty:
            continue
        if caption:
            parts.append(f"<div><em>{html.escape(caption)}</em></div>")
        parts.append(shown.to_html(index=False, escape=True, border=0, float_format=_number, na_rep=""))
    parts.append("</div>")
    return "\n".join(parts)
