"""``depgraph import`` and ``depgraph export``: specs and graphs to and from other tools and tables."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from depgraph.adapters.frames import TABLE_FORMATS, fold_table, samples_table, table_format, write_table
from depgraph.adapters.splitgraph import read_splitgraph, write_splitgraph_graph, write_splitgraph_spec
from depgraph.cli.commandline import (
    TABLE_KINDS,
    Command,
    canonical,
    out,
    outputs_plan,
    print_graph,
    refuse_given,
    text_table,
)
from depgraph.cli.specs import SIGN_HELP, print_spec, signed_note, signing_key, write_signed_spec
from depgraph.errors import DepgraphError
from depgraph.formats import GRAPH_FORMAT
from depgraph.graph.files import graph_from_document, write_graph
from depgraph.io.files import read_json
from depgraph.spec.files import spec_from_document
from depgraph.spec.model import SplitSpec

app = typer.Typer(add_completion=False, pretty_exceptions_enable=False, rich_markup_mode=None)


@app.command("import", cls=Command, short_help="Read a splitGraph split_spec or dependency_graph.")
def import_command(
    file: Annotated[
        Path, typer.Argument(metavar="FILE.json", help="A splitGraph split_spec or dependency_graph.", readable=False)
    ],
    source: Annotated[str, typer.Option("--from", help="Where the file comes from: splitgraph.")],
    output: Annotated[
        Path, typer.Option("--output", "-o", help="Where to write the depgraph spec or graph.", readable=False)
    ],
    sign_key_env: Annotated[str | None, typer.Option(help=SIGN_HELP + " Specs only.")] = None,
) -> None:
    """Read another tool's file: a splitGraph split_spec becomes a depgraph spec,
    a splitGraph dependency_graph a depgraph graph (the symmetric of export --to splitgraph)."""
    if canonical(source, "-") != "splitgraph":
        raise DepgraphError("invalid_argument", f"import --from reads splitgraph files, not {source!r}")
    signing = signing_key(sign_key_env)
    plan = outputs_plan(output, writes=("JSON",), inputs=(file,))
    imported = read_splitgraph(file)
    if signing is not None and not isinstance(imported, SplitSpec):
        raise DepgraphError(
            "invalid_argument", f"--sign-key-env signs split specs; {str(file)!r} is a splitGraph dependency_graph"
        )
    with plan:
        if isinstance(imported, SplitSpec):
            imported = write_signed_spec(imported, output, signing)
        else:
            write_graph(imported, output)
    if isinstance(imported, SplitSpec):
        print_spec(imported)
    else:
        print_graph(imported, "imported study graph")
    out.print(f"wrote {output}" + (signed_note(imported) if isinstance(imported, SplitSpec) else ""))


@app.command("export", cls=Command, short_help="Write a spec for other tools, or as a table.")
def export_command(
    ctx: typer.Context,
    document: Annotated[
        Path, typer.Argument(metavar="SPEC.json", help="A split spec (or, for splitgraph, a graph).", readable=False)
    ],
    to: Annotated[str, typer.Option("--to", help="splitgraph, csv, parquet or fold-table.")],
    output: Annotated[Path, typer.Option("--output", "-o", help="Where to write.", readable=False)],
    splitgraph_version: Annotated[
        str, typer.Option(help="Graphs: the splitGraph release to write for (0.2.0 or 0.4.0).")
    ] = "0.4.0",
    excel_safe: Annotated[
        bool,
        typer.Option(
            "--excel-safe",
            help="CSV/TSV for spreadsheets: prefix with ' every cell a spreadsheet would run as a formula "
            "(first character = + - @ tab CR). The file is then not id-exact.",
        ),
    ] = False,
) -> None:
    """Write a spec for other tools: splitGraph JSON, the samples table (CSV / Parquet),
    or the long fold table (sample_id, repeat, fold, role) as CSV or Parquet by the file suffix."""
    target = canonical(to, "-")
    if target not in ("splitgraph", "csv", "parquet", "fold-table"):
        raise DepgraphError("invalid_argument", f"--to takes splitgraph, csv, parquet or fold-table, not {to!r}")
    # the samples table as CSV, or TSV when the file is named .tsv; the fold table by its suffix (told after the
    # output is checked: an output that is the input is refused as such first)
    kind = {"csv": text_table(output), "parquet": "parquet", "splitgraph": "json"}.get(target)
    kind = kind or TABLE_FORMATS.get(output.suffix.lower()) or ("csv" if str(output) == "-" else None)
    if target != "splitgraph":
        refuse_given(ctx, f"to --to {target} (it applies to graphs exported --to splitgraph)", "splitgraph_version")
    plan = outputs_plan(
        output, writes=None if kind is None else (TABLE_KINDS.get(kind, "JSON"),), inputs=(document,),
        binary=kind == "parquet",
    )  # fmt: skip
    kind = kind or table_format(output)  # refused: cannot tell
    if excel_safe and kind not in ("csv", "tsv"):  # refused before anything is read: it is for text tables only
        raise DepgraphError(
            "invalid_argument",
            f"--excel-safe writes CSV/TSV meant for spreadsheets; it does not apply to --to {target}"
            + (f" written as {kind}" if target == "fold-table" else "")
            + " (that file keeps ids exact and is not opened as formulas)",
        )
    doc = read_json(document, "file")
    if isinstance(doc, dict) and doc.get("format") == GRAPH_FORMAT:
        if target != "splitgraph":
            raise DepgraphError("invalid_argument", f"a study graph exports only to splitgraph, not {target}")
        with plan:  # what splitGraph cannot hold is told as a splitgraph_export_drops warning
            write_splitgraph_graph(graph_from_document(doc), output, splitgraph_version)
        out.print(f"wrote {output}")
        return
    refuse_given(ctx, "to a split spec (it applies to graphs exported --to splitgraph)", "splitgraph_version")
    spec = spec_from_document(doc, f"spec file {str(document)!r}")
    with plan:
        if target == "splitgraph":
            write_splitgraph_spec(spec, output)
        elif target == "fold-table":
            write_table(fold_table(spec), output, excel_safe=excel_safe)
        else:
            write_table(samples_table(spec), output, kind, excel_safe=excel_safe)
    out.print(
        f"wrote {output}" + (" (cells a spreadsheet would run as formulas prefixed with ')" if excel_safe else "")
    )
