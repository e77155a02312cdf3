"""``depgraph report``: the self-contained HTML report."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from depgraph.audit.report import figures, save_figures, write_report
from depgraph.cli.commandline import (
    Command,
    check_suffix,
    out,
    outputs_plan,
    stage,
)
from depgraph.graph.files import read_graph
from depgraph.spec.files import read_spec

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
) -> None:
    """Write a self-contained HTML report (figures embedded) a reviewer can open offline."""
    plan = outputs_plan(output, writes=None, inputs=(document, graph_file))
    if plots_dir is not None:
        plan.directory(plots_dir, "plot directory")
    spec = read_spec(document)
    graph = read_graph(graph_file) if graph_file is not None else None
    with stage(f"drawing {output.name}"), plan:  # the report and the figures are put in place together
        write_report(spec, output, graph)
        if plots_dir is not None:
            save_figures(figures(spec, graph), plots_dir)
        check_suffix(output, ("HTML",))  # after the plan has seen the figures: a report written over one is `io`
    out.print(f"wrote {output}" + (f" and the figures in {plots_dir}" if plots_dir is not None else ""))
