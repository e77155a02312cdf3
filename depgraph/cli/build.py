"""``depgraph build``: a study graph from the metadata table and the pair files (kinship, coordinates, duplicates)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from depgraph.cli.commandline import (
    Command,
    canonical,
    column_map,
    delimiter_option,
    document_outputs,
    encoding_option,
    format_option,
    print_graph,
    refuse_given,
    stage,
    tell_if_large,
    typed,
)
from depgraph.errors import DepgraphError
from depgraph.graph.model import StudyGraph
from depgraph.ingest.metadata import no_grouping_message
from depgraph.study.graphs import build_file
from depgraph.study.inputs import Duplicates, Kinship, Spatial

KINSHIP_OPTION = typer.Option(
    help="Kinship: pairs CSV (id1,id2,kinship), KING .kin/.kin0, plink2 (table or --make-king matrix), PLINK "
    ".genome, or a GCTA GRM (binary or text).",
    readable=False,
)
THRESHOLD_OPTION = typer.Option(
    help="Inclusive kinship threshold, a number or a KING degree: duplicate, first, second, third."
)
FORMAT_OPTION = typer.Option(
    help="auto, pairs (id1,id2,kinship), king (.kin/.kin0), plink2-king, plink-genome, gcta-grm (binary or text), "
    "plink2-king-matrix (--make-king)."
)
ABSENT_HELP = "Subjects a tool's kinship file does not name: warn (grouped as unrelated), unrelated (say so), error."

app = typer.Typer(add_completion=False, pretty_exceptions_enable=False, rich_markup_mode=None)


@app.command("build", cls=Command)
def build(
    ctx: typer.Context,
    metadata: Annotated[
        Path, typer.Argument(help="One row per sample: CSV, TSV, Parquet or Excel (.xlsx).", readable=False)
    ],
    output: Annotated[
        Path,
        typer.Option(
            "--output", "-o", help="Where to write the graph: G.json, or G.dggraph (columnar).", readable=False
        ),
    ],
    kinship: Annotated[Path | None, KINSHIP_OPTION] = None,
    kinship_threshold: Annotated[str | None, THRESHOLD_OPTION] = None,
    kinship_format: Annotated[str, FORMAT_OPTION] = "auto",
    id_template: Annotated[
        str, typer.Option(help="Subject id from a tool's FID and IID columns, e.g. '{IID}' or '{FID}_{IID}'.")
    ] = "{IID}",
    coords: Annotated[
        Path | None, typer.Option(help="Coordinates: CSV with sample_id,x,y[,z].", readable=False)
    ] = None,
    radius: Annotated[float | None, typer.Option(help="Samples at most this far apart are adjacent.")] = None,
    duplicates: Annotated[
        Path | None, typer.Option(help="Duplicate pairs: CSV with id1,id2 (sample ids).", readable=False)
    ] = None,
    column: Annotated[
        list[str] | None, typer.Option("--column", help="Map a canonical column to yours: canonical=user_col.")
    ] = None,
    unknown: Annotated[
        str, typer.Option(help="Pairs naming ids not in the metadata: 'error' or 'ignore' (drop, and report).")
    ] = "error",
    kinship_absent: Annotated[str, typer.Option(metavar="warn|unrelated|error", help=ABSENT_HELP)] = "warn",
    allow_multi_subject_samples: Annotated[
        bool, typer.Option(help="Accept samples listed with several subjects.")
    ] = False,
    outcome_scope: Annotated[str, typer.Option(help="Link outcome_id to 'sample' or 'subject'.")] = "sample",
    name: Annotated[str | None, typer.Option(help="A name for the graph, shown in reports.")] = None,
    encoding: Annotated[str | None, encoding_option("the input tables")] = None,
    delimiter: Annotated[str | None, delimiter_option()] = None,
    sheet: Annotated[
        str | None,
        typer.Option(metavar="NAME|N", help="The metadata workbook's sheet (.xlsx): its name, or its number from 1."),
    ] = None,
    form: Annotated[str | None, format_option()] = None,
) -> None:
    """Build a study graph from metadata (+ kinship, coordinates, duplicates).

    \f
    One piece: its signature is the command's options, as typer reads them; the body parses them and calls the
    library."""
    _refuse_build_options(ctx, unknown, outcome_scope, (kinship, kinship_threshold), (coords, radius), duplicates)
    plan, form = document_outputs(output, "study-graph", form, inputs=(metadata, kinship, coords, duplicates))
    pairs = _pair_tables((kinship, kinship_threshold, kinship_format, id_template, kinship_absent), (coords, radius),
                         duplicates, unknown=unknown, encoding=encoding)  # fmt: skip
    graph = build_file(
        metadata, output, plan=plan, form=form, columns=column_map(column), name=name,
        outcome_scope=outcome_scope if typed(ctx, "outcome_scope") else None,
        allow_multi_subject_samples=allow_multi_subject_samples if typed(ctx, "allow_multi_subject_samples") else None,
        encoding=encoding, sheet=sheet, delimiter=delimiter, kinship=pairs[0], spatial=pairs[1], duplicates=pairs[2],
        progress=stage,
    )  # fmt: skip
    _tell_no_grouping(graph)
    print_graph(graph, f"wrote {output}")
    tell_if_large(output, form, "graph")


def _tell_no_grouping(graph: StudyGraph) -> None:
    """A graph of singletons is legal, but never a silent one."""
    for step in graph.history:
        warning = no_grouping_message(step)
        if warning:
            typer.echo(f"depgraph: warning: no_grouping_column: {warning}", err=True)


def _pair_tables(
    kinship: tuple[Path | None, str | None, str, str, str],
    spatial: tuple[Path | None, float | None],
    duplicates: Path | None,
    *,
    unknown: str,
    encoding: str | None,
) -> tuple[list[Kinship], list[Spatial], list[Duplicates]]:
    """``build``'s pair files as the study file's tables, for the one code path ``depgraph run`` takes too
    (:func:`~depgraph.study.graphs.add_pair_files`). Carried as given: the builders check every value, with the
    messages this command's tests hold."""
    (kinship_file, threshold, kinship_format, id_template, absent), (coords, radius) = kinship, spatial
    common = {"unknown": unknown, "encoding": encoding}
    kin = [] if kinship_file is None else [Kinship.model_construct(
        path=str(kinship_file), threshold=threshold, format=canonical(kinship_format, "-"), id_template=id_template,
        absent=absent, **common)]  # fmt: skip
    near = [] if coords is None else [Spatial.model_construct(path=str(coords), radius=radius, p=2.0, **common)]
    same = [] if duplicates is None else [Duplicates.model_construct(path=str(duplicates), similarity_column=None,
                                                                     **common)]  # fmt: skip
    return kin, near, same


def _refuse_build_options(
    ctx: typer.Context,
    unknown: str,
    outcome_scope: str,
    kinship: tuple[Path | None, str | None],
    spatial: tuple[Path | None, float | None],
    duplicates: Path | None,
) -> None:
    """``build``'s options that contradict each other, refused before anything is read."""
    (kinship_file, threshold), (coords, radius) = kinship, spatial
    if unknown not in ("error", "ignore"):
        raise DepgraphError("invalid_argument", f"--unknown takes 'error' or 'ignore', not {unknown!r}")
    if outcome_scope not in ("sample", "subject"):
        raise DepgraphError("invalid_argument", f"--outcome-scope takes 'sample' or 'subject', not {outcome_scope!r}")
    if kinship_file is not None and threshold is None:
        raise DepgraphError("invalid_argument", "--kinship needs --kinship-threshold (a number or a KING degree name)")
    if kinship_file is None and threshold is not None:
        raise DepgraphError("invalid_argument", "--kinship-threshold is given without --kinship")
    if (coords is None) != (radius is None):
        raise DepgraphError("invalid_argument", "--coords and --radius go together")
    if kinship_file is None:
        refuse_given(ctx, "without --kinship", "kinship_format", "id_template", "kinship_absent")
    if kinship_file is None and coords is None and duplicates is None:
        refuse_given(ctx, "without --kinship, --coords or --duplicates (the pairs it filters)", "unknown")
