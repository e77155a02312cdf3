"""``depgraph compare``: groupings of one graph side by side."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Annotated

import orjson
import typer

from depgraph.cli.commandline import Command, name_list, out
from depgraph.common.display import share
from depgraph.study.reviews import compare_file

app = typer.Typer(add_completion=False, pretty_exceptions_enable=False, rich_markup_mode=None)


@app.command("compare", cls=Command, short_help="Groupings of one graph side by side.")
def compare_command(
    graph: Annotated[
        Path, typer.Argument(metavar="GRAPH", help="A study graph (JSON, or columnar: .dggraph).", readable=False)
    ],
    modes: Annotated[
        str, typer.Option(metavar="MODE,MODE", help="The groupings to compare; the first is the reference.")
    ],
    via: Annotated[str | None, typer.Option(metavar="MODE,MODE", help="The modes a composite combines.")] = None,
    output: Annotated[
        Path | None, typer.Option("-o", "--output", metavar="FILE", help="Write the table (.csv, .tsv or .parquet).")
    ] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print the table as JSON records.")] = False,
) -> None:
    """Groupings of one graph side by side: groups, the largest and its share, the folds it allows, the samples
    whose group differs from the first grouping's, and what each leaves exposed (declared links it does not follow,
    spread over several groups)."""
    table = compare_file(graph, name_list(modes, "--modes") or [], via=name_list(via, "--via"), output=output)
    if as_json:
        sys.stdout.write(orjson.dumps(table.to_dict("records"), option=orjson.OPT_SERIALIZE_NUMPY).decode() + "\n")
        return
    for i, row in enumerate(table.itertuples(index=False)):
        folds = "1 fold" if row.effective_folds == 1 else f"{row.effective_folds} folds"
        groups = "1 group" if row.groups == 1 else f"{row.groups} groups"
        out.print(f"{row.grouping}: {groups}, the largest {row.largest} samples ({share(row.largest_share)}), "
                  f"at most {folds}")  # fmt: skip
        changed = "(the reference)" if i == 0 else f"{row.changed} samples in another group than in {table.grouping[0]}"
        out.print(f"  changed: {changed}")
        out.print(f"  exposed: {row.exposed or 'nothing'}")
        if row.warnings:
            out.print(f"  warnings: {row.warnings}")
    if output is not None:
        out.print(f"wrote {output}")
