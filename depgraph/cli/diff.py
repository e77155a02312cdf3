"""``depgraph diff``: which samples changed group between two specs."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from depgraph.cli.commandline import (
    Command,
    out,
)
from depgraph.errors import DepgraphError, describe_ids
from depgraph.study.reviews import diff_files

app = typer.Typer(add_completion=False, pretty_exceptions_enable=False, rich_markup_mode=None)


@app.command("diff", cls=Command)
def diff_command(
    first: Annotated[Path, typer.Argument(metavar="A.json", help="A split spec.", readable=False)],
    second: Annotated[Path, typer.Argument(metavar="B.json", help="Another split spec.", readable=False)],
    limit: Annotated[int, typer.Option(help="Show at most this many changed samples.")] = 20,
) -> None:
    """Which samples changed group between two specs. Exit 1 when the grouping (or folds) differ."""
    if limit < 0:
        raise DepgraphError("invalid_argument", f"--limit takes 0 or more changed samples to show, not {limit}")
    d = diff_files(first, second)
    if d.same_digest:
        out.print(f"identical: both specs carry digest {d.digests[0]}")
        return
    if d.only_in_first:
        out.print(f"{len(d.only_in_first)} sample(s) only in {first}: {describe_ids(d.only_in_first)}")
    if d.only_in_second:
        out.print(f"{len(d.only_in_second)} sample(s) only in {second}: {describe_ids(d.only_in_second)}")
    if len(d.changed):
        out.print(f"{len(d.changed)} sample(s) changed group:")
        for row in d.changed.head(limit).itertuples(index=False):
            out.print(f"  {row.sample_id}: {row.group_first} -> {row.group_second}")
        if len(d.changed) > limit:
            out.print(f"  … and {len(d.changed) - limit} more")
    if d.folds_differ:
        out.print("the folds differ")
    if not d.differs:
        note = " (group labels differ)" if d.relabelled else ""
        out.print(f"same grouping{note}; the specs differ only in metadata")
        return
    raise typer.Exit(1)
