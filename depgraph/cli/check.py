"""``depgraph check``: a split made elsewhere, checked against the spec (and the graph)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import pandas as pd
import typer

from depgraph.audit.exposure import ExposureReport
from depgraph.cli.commandline import (
    Command,
    encoding_option,
    out,
    stage,
    styled,
)
from depgraph.cli.engine import ENGINE_OPTION, MASTER_OPTION, SPARK_CONF_OPTION, chosen_engine, spark_settings
from depgraph.study.reviews import check_file

app = typer.Typer(add_completion=False, pretty_exceptions_enable=False, rich_markup_mode=None)


@app.command("check", cls=Command)
def check_command(
    ctx: typer.Context,
    document: Annotated[
        Path, typer.Argument(metavar="SPEC.json", help="The split spec to check against.", readable=False)
    ],
    assignment: Annotated[
        Path,
        typer.Argument(
            metavar="ASSIGNMENT.csv", help="A fold or train/test value per sample (CSV/TSV/Parquet).", readable=False
        ),
    ],
    id_column: Annotated[str, typer.Option(help="The sample id column.")] = "sample_id",
    split_column: Annotated[
        str | None, typer.Option(help="The fold / train-test column (default: fold, split, role, set or partition).")
    ] = None,
    graph_file: Annotated[
        Path | None,
        typer.Option(
            "--graph",
            help="The study graph: also show, per declared relation, what crosses this split.",
            readable=False,
        ),
    ] = None,
    encoding: Annotated[str | None, encoding_option("the assignment table")] = None,
    engine: Annotated[str, ENGINE_OPTION] = "single",
    master: Annotated[str | None, MASTER_OPTION] = None,
    spark_conf: Annotated[list[str] | None, SPARK_CONF_OPTION] = None,
) -> None:
    """Verify a split made elsewhere: list every spec group that straddles it. Exit 1 when one does, or (with
    --graph) when a declared dependency crosses the split."""
    on = chosen_engine(ctx, engine)
    settings = spark_settings(master, spark_conf) if on == "spark" else None
    checked = check_file(document, assignment, id_column=id_column, split_column=split_column, graph_file=graph_file,
                         encoding=encoding, engine=on, settings=settings, progress=stage)  # fmt: skip
    report, crossing = checked.straddling, checked.exposure
    if report.clean:
        out.print(
            f"no group straddles: {report.n_checked} samples checked by {report.split_column!r}"
            + (f" ({report.n_unused} unused rows skipped)" if report.n_unused else "")
        )
    else:
        out.print(styled((f"{len(report.groups)} group(s) straddle the split", "red"), f" ({report.split_column!r}):"))
        for row in report.groups.head(20).itertuples(index=False):
            out.print(f"  {row.group_id}: {row.n_samples} samples in {row.values}")
        if len(report.groups) > 20:
            out.print(f"  … and {len(report.groups) - 20} more")
    if crossing is not None:
        _print_exposure(crossing)
    if not report.clean or (crossing is not None and not crossing.nothing_crosses):
        raise typer.Exit(1)


def _print_exposure(report: ExposureReport) -> None:
    # one plain line per relation: readable in a log and at any terminal width; the words are the table's columns
    out.print(
        "dependencies per declared relation (followed: the grouping follows the relation) — kept whole: all their "
        "samples in one group, a split of whole groups cannot cut them; spread over groups: in two or more groups, "
        "a split may cut them; crossing a split: a sample on the train side and one on the test side:"
    )
    for row in report.table.itertuples(index=False):
        crossing = "" if row.crossing is None or pd.isna(row.crossing) else f", {int(row.crossing)} crossing a split"
        out.print(
            f"  {row.relation} ({'followed' if row.followed else 'not followed'}): {row.linked} {row.unit} link "
            f"samples: {row.kept_whole} kept whole, {row.spread_over_groups} spread over groups{crossing}"
            + (f" — e.g. {row.examples}" if row.examples else "")
        )
    for row in report.blocks.itertuples(index=False):
        out.print(
            f"{row.relation}: {row.blocks} blocks over {row.splits} test sets, χ² = {row.chi2:.1f} "
            f"(dof {row.dof}, p = {row.p_value:.3g}), Cramér's V = {row.cramers_v:.3f}"
        )
    colour = "green" if report.nothing_crosses else "red"
    out.print(styled((report.verdict(), colour)))
