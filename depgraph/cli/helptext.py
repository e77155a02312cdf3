"""Help pages as plain text that fits the terminal, and the option spellings the help shows.

Light on purpose: ``depgraph --help`` uses it without loading any command (nor pandas, numpy or scipy).
"""

from __future__ import annotations

import inspect
import textwrap
from typing import Any

#: Old spellings that still work for one minor version, with a warning naming the new one.
DEPRECATED = {"--ids-column": "--id-column", "--n-folds": "-k/--n-splits", "--folds": "-k/--n-splits"}


def help_page(usage: str, text: str | None, sections: dict[str, list[tuple[str, str]]], width: int) -> str:
    """A help page ``width`` columns wide: names whole (a long one puts its description on the next line), text
    wrapped between words only (never inside ``--allow-unlinked`` or ``group-kfold``).

    >>> print(help_page("depgraph x [OPTIONS]", "Does x.", {"Options": [("--flag", "A flag.")]}, 40))
    Usage: depgraph x [OPTIONS]
    <BLANKLINE>
      Does x.
    <BLANKLINE>
    Options:
      --flag  A flag.
    <BLANKLINE>
    """
    lines = [*_wrap(f"Usage: {usage}", width, "", " " * 7), ""]
    shown = (text or "").split("\f")[0]  # click's rule: what follows a form feed is for readers of the code
    for paragraph in inspect.cleandoc(shown).split("\n\n"):
        if paragraph.strip():
            lines += [*_wrap(paragraph, width, "  "), ""]
    for title, rows in sections.items():
        if not rows:
            continue
        lines.append(f"{title}:")
        column = min(max(len(name) for name, _ in rows), 30)
        for name, description in rows:
            said = _wrap(description, width, " " * (column + 4)) or [""]
            if len(name) <= column:
                lines.append(f"  {name.ljust(column)}  {said[0].lstrip()}".rstrip())
                lines += said[1:]
            else:
                lines += [f"  {name}", *(said if description else [])]
        lines.append("")
    return "\n".join(lines) + "\n"


def _wrap(text: str, width: int, indent: str, subsequent: str | None = None) -> list[str]:
    return textwrap.wrap(
        " ".join(text.split()), width=width, initial_indent=indent,
        subsequent_indent=indent if subsequent is None else subsequent, break_on_hyphens=False,
        break_long_words=False,
    )  # fmt: skip


def shown_spellings(opts: list[str]) -> list[str]:
    return [o for o in opts if o not in DEPRECATED]


def option_help(param: Any) -> tuple[str, str]:
    """``-o, --output FILE`` and its help with its default, as the help lists an option."""
    names = ", ".join(sorted(shown_spellings(param.opts), key=len))
    if param.secondary_opts:
        names += " / " + ", ".join(param.secondary_opts)
    if not param.is_flag:
        names += f" {param.metavar}"
    notes = []
    if not param.is_flag and param.default not in (None, "") and not param.multiple and param.show_default is not False:
        notes.append(f"default: {param.default}")
    if param.required:
        notes.append("required")
    return names, " ".join([param.help or "", f"[{'; '.join(notes)}]" if notes else ""]).strip()
