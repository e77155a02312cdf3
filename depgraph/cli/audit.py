"""``depgraph audit``: near-identical samples found in a feature table, optionally declared."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from depgraph.cli.commandline import (
    EXCEL_SAFE_NOTE,
    TABLE_KINDS,
    Command,
    document_outputs,
    encoding_option,
    excel_safe_option,
    out,
    outputs_plan,
    refuse_excel_safe,
    refuse_given,
    stage,
    typed,
)
from depgraph.errors import DepgraphError
from depgraph.study.reviews import audit_file

app = typer.Typer(add_completion=False, pretty_exceptions_enable=False, rich_markup_mode=None)


@app.command("audit", cls=Command, short_help="Find near-identical samples; optionally declare them.")
def audit_command(
    ctx: typer.Context,
    graph_file: Annotated[
        Path, typer.Argument(metavar="GRAPH.json", help="The study graph the samples belong to.", readable=False)
    ],
    features: Annotated[
        Path,
        typer.Argument(
            metavar="FEATURES", help="CSV, TSV, Parquet (an id column + numeric columns) or .npy.", readable=False
        ),
    ],
    id_column: Annotated[
        str, typer.Option("--id-column", "--ids-column", help="The sample id column of a feature table.")
    ] = "sample_id",
    threshold: Annotated[float, typer.Option(help="Inclusive cosine similarity that marks a duplicate.")] = 0.995,
    method: Annotated[str, typer.Option(help="auto, exact or lsh (see docs/exposure-audit-report.md).")] = "auto",
    write_back: Annotated[
        bool, typer.Option("--write-back", help="Add the pairs to the graph as sample_duplicate_of edges.")
    ] = False,
    output: Annotated[
        Path | None,
        typer.Option(
            "--output",
            "-o",
            help="With --write-back: the graph to write; otherwise a CSV of the pairs.",
            readable=False,
        ),
    ] = None,
    encoding: Annotated[str | None, encoding_option("the feature table")] = None,
    excel_safe: Annotated[bool, excel_safe_option()] = False,
) -> None:
    """Find near-identical samples (cosine similarity of L2-normalised feature rows) and optionally declare them.

    \f
    One piece: its signature is the command's options, as typer reads them; the body parses them and calls the
    library."""
    if write_back and output is None:
        raise DepgraphError("invalid_argument", "--write-back needs -o GRAPH.json for the updated graph")
    if features.suffix.lower() == ".npy":  # before the outputs are checked, as the library refuses them
        refuse_given(
            ctx, "to a .npy matrix (its rows are the graph's samples in sample order)", "id_column", "encoding"
        )
    # the pairs table as CSV, or TSV / Parquet when the file is named so
    written = "--write-back (a study graph)" if write_back else f"-o {str(output)!r}" if output else None
    refuse_excel_safe(excel_safe, None if write_back or output is None else _pairs_format(output), written)
    form = "json"
    if write_back:  # the graph as JSON, or in the columnar form when named .dggraph
        plan, form = document_outputs(output, "study-graph", None, inputs=(graph_file, features))
    else:
        kind = TABLE_KINDS[_pairs_format(output)]
        plan = outputs_plan(output, writes=(kind,), inputs=(graph_file, features), binary=kind == "Parquet")
    pairs = audit_file(
        graph_file, features, plan=plan, output=output, write_back=write_back, form=form,
        table_format=_pairs_format(output), id_column=id_column if typed(ctx, "id_column") else None,
        threshold=threshold, method=method, encoding=encoding, excel_safe=excel_safe, progress=stage,
    )  # fmt: skip
    out.print(f"{len(pairs)} pair(s) of samples with cosine similarity ≥ {threshold}")
    for row in pairs.head(20).itertuples(index=False):
        out.print(f"  {row.id1} ~ {row.id2}  {row.similarity:.6f}")
    if len(pairs) > 20:
        out.print(f"  … and {len(pairs) - 20} more")
    if write_back:
        out.print(f"wrote {output} with {len(pairs)} audited duplicate pair(s) declared")
    elif output is not None:
        out.print(f"wrote {output}" + (EXCEL_SAFE_NOTE if excel_safe else ""))


def _pairs_format(output: Path | None) -> str:
    """The format of ``audit -o`` (without --write-back): by the suffix, CSV unless it says TSV or Parquet."""
    return (
        "csv"
        if output is None
        else {".tsv": "tsv", ".parquet": "parquet", ".pq": "parquet"}.get(output.suffix.lower(), "csv")
    )
