"""``depgraph report``: the self-contained HTML report."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from depgraph.cli.commandline import (
    Command,
    name_list,
    out,
    outputs_plan,
    stage,
)
from depgraph.study.reviews import report_file

app = typer.Typer(add_completion=False, pretty_exceptions_enable=False, rich_markup_mode=None)


@app.command("report", cls=Command, short_help="Write a self-contained HTML report.")
def report_command(
    document: Annotated[
        Path, typer.Argument(metavar="SPEC.json", help="A split spec (with or without folds).", readable=False)
    ],
    output: Annotated[Path, typer.Option("--output", "-o", help="Where to write the HTML report.", readable=False)],
    graph_file: Annotated[
        Path | None,
        typer.Option("--graph", help="The study graph: adds the exposure tables and the drawing.", readable=False),
    ] = None,
    plots_dir: Annotated[
        Path | None, typer.Option(help="Also write every figure as PNG and SVG here.", readable=False)
    ] = None,
    compare_modes: Annotated[
        str | None,
        typer.Option(
            "--compare", metavar="MODE,MODE", help="With --graph: also compare these groupings (as depgraph compare)."
        ),
    ] = None,
) -> None:
    """Write a self-contained HTML report (figures embedded) a reviewer can open offline."""
    plan = outputs_plan(output, writes=None, inputs=(document, graph_file))
    if plots_dir is not None:
        plan.directory(plots_dir, "plot directory")
    report_file(document, output, plan=plan, graph_file=graph_file, plots_dir=plots_dir,
                compare_modes=name_list(compare_modes, "--compare"), progress=stage)  # fmt: skip
    out.print(f"wrote {output}" + (f" and the figures in {plots_dir}" if plots_dir is not None else ""))
