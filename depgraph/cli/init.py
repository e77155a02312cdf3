"""``depgraph init``: a starter study file from a metadata table (:func:`depgraph.study.starter.starter_file`)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from depgraph.cli.commandline import Command, delimiter_option, encoding_option, out, outputs_plan
from depgraph.study.starter import write_starter_file

app = typer.Typer(add_completion=False, pretty_exceptions_enable=False, rich_markup_mode=None)


@app.command("init", cls=Command)
def init_command(
    metadata: Annotated[
        Path, typer.Argument(help="One row per sample: CSV, TSV, Parquet or Excel (.xlsx).", readable=False)
    ],
    output: Annotated[
        Path, typer.Option("--output", "-o", help="The study file to write: study.toml.", readable=False)
    ] = Path("study.toml"),
    kinship: Annotated[
        list[Path] | None,
        typer.Option("--kinship", help="A kinship file (repeatable); relatedness groups by it.", readable=False),
    ] = None,
    duplicates: Annotated[
        list[Path] | None,
        typer.Option("--duplicates", help="A table of duplicate sample pairs (repeatable).", readable=False),
    ] = None,
    features: Annotated[
        list[Path] | None,
        typer.Option("--features", help="A feature table to audit for duplicates (repeatable).", readable=False),
    ] = None,
    coords: Annotated[Path | None, typer.Option(help="Coordinates: sample_id,x,y[,z].", readable=False)] = None,
    radius: Annotated[float | None, typer.Option(help="With --coords: samples this close are neighbours.")] = None,
    encoding: Annotated[str | None, encoding_option("the metadata table")] = None,
    delimiter: Annotated[str | None, delimiter_option()] = None,
    sheet: Annotated[
        str | None, typer.Option(metavar="NAME|N", help="The metadata workbook's sheet: its name, or its number.")
    ] = None,
    force: Annotated[bool, typer.Option("--force", help="Replace a study file that exists.")] = False,
) -> None:
    """Write a starter study file from a metadata table, every choice explicit. The role of each column is
    recognised by its name (Subject_ID, patient_id, participant, Batch, site and the other usual spellings) and
    written as a key of its own; the columns left out are listed; every other option is a commented line with its
    default. Given kinship, duplicate or coordinate files, the grouping uses them. Review it, then: depgraph run
    study.toml."""
    plan = outputs_plan(output, writes=("TOML",), inputs=(metadata, *(kinship or ()), *(duplicates or ()),
                        *(features or ()), coords))  # fmt: skip
    mapped = write_starter_file(
        metadata, output, plan=plan, kinship=kinship or [], duplicates=duplicates or [], features=features or [],
        coordinates=None if coords is None and radius is None else (coords, radius), encoding=encoding,
        delimiter=delimiter, sheet=sheet, replace=force,
    )  # fmt: skip
    roles = ", ".join(f"{role}={column!r}" for role, column in mapped.items()) or "no column recognised as a role"
    out.print(f"wrote {output}: {roles}; review it, then run: depgraph run {output}")
