"""``depgraph import`` and ``depgraph export``: specs and graphs to and from other tools and tables."""

from __future__ import annotations

import os
import stat
from pathlib import Path
from typing import Annotated

import typer

from depgraph.adapters.frames import TABLE_FORMATS, table_format
from depgraph.adapters.splitgraph import DEFAULT_SPLITGRAPH_VERSION
from depgraph.cli.commandline import (
    EXCEL_SAFE_NOTE,
    TABLE_KINDS,
    Command,
    canonical,
    deprecated,
    document_outputs,
    excel_safe_option,
    format_option,
    out,
    outputs_plan,
    print_graph,
    refuse_excel_safe,
    refuse_given,
    text_table,
    typed,
)
from depgraph.cli.specs import SIGN_HELP, print_spec, signed_note, signing_key
from depgraph.errors import DepgraphError
from depgraph.spec.model import SplitSpec
from depgraph.study.exchange import TARGETS, export_file, import_file

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
    form: Annotated[str | None, format_option()] = None,
) -> None:
    """Read another tool's file: a splitGraph split_spec becomes a depgraph spec,
    a splitGraph dependency_graph a depgraph graph (the symmetric of export --to splitgraph)."""
    if canonical(source, "-") != "splitgraph":
        raise DepgraphError("invalid_argument", f"import --from reads splitgraph files, not {source!r}")
    signing = signing_key(sign_key_env)
    plan, form = document_outputs(output, None, form, inputs=(file,))
    imported = import_file(file, output, plan=plan, form=form, sign_key=signing)
    if isinstance(imported, SplitSpec):
        print_spec(imported)
    else:
        print_graph(imported, "imported study graph")
    out.print(f"wrote {output}" + (signed_note(imported) if isinstance(imported, SplitSpec) else ""))


@app.command(
    "export", cls=Command, short_help="Write a spec or a graph in its other form, for other tools, or as a table."
)
def export_command(
    ctx: typer.Context,
    document: Annotated[
        Path,
        typer.Argument(
            metavar="SPEC.json|GRAPH.json", help="A split spec or a study graph, in either form.", readable=False
        ),
    ],
    to: Annotated[str, typer.Option("--to", help=f"{', '.join(TARGETS[:-1])} or {TARGETS[-1]}.")],
    output: Annotated[Path, typer.Option("--output", "-o", help="Where to write.", readable=False)],
    splitgraph_version: Annotated[
        str,
        typer.Option(help="Graphs: the splitGraph to write for: 0.2.0 (the release) or 0.4.0 (in development)."),
    ] = DEFAULT_SPLITGRAPH_VERSION,
    excel_safe: Annotated[bool, excel_safe_option()] = False,
) -> None:
    """Write a spec or a graph in its other form (json: one file; parquet: the columnar form, a directory of
    Parquet tables, .dgspec or .dggraph), for splitGraph (splitgraph), or a spec as a table: the samples table
    (csv, or samples-table by the file suffix: .csv, .tsv, .parquet) or the long fold table (fold-table: sample_id,
    repeat, fold, role, by the suffix)."""
    target = canonical(to, "-")
    if target not in TARGETS:
        raise DepgraphError("invalid_argument", f"--to takes {', '.join(TARGETS[:-1])} or {TARGETS[-1]}, not {to!r}")
    forced = None
    if target == "parquet" and _one_file(output):  # the samples table as one Parquet file, before 0.2
        deprecated(f"--to parquet -o {output} (the samples table)", f"--to samples-table -o {output}")
        target, forced = "samples-table", "parquet"
    if target != "splitgraph":
        refuse_given(ctx, f"to --to {target} (it applies to graphs exported --to splitgraph)", "splitgraph_version")
    version = splitgraph_version if typed(ctx, "splitgraph_version") else None
    if target in ("json", "parquet"):
        refuse_given(ctx, f"to --to {target} (it is for CSV and TSV tables)", "excel_safe")
        plan, form = document_outputs(output, None, target, inputs=(document,))
        export_file(document, output, form, plan=plan)
        out.print(f"wrote {output}")
        return
    # the samples table as CSV, or TSV when the file is named .tsv; the others by the suffix (told after the
    # output is checked: an output that is the input is refused as such first)
    kind = {"csv": text_table(output), "splitgraph": "json"}.get(target) or forced
    kind = kind or TABLE_FORMATS.get(output.suffix.lower()) or ("csv" if str(output) == "-" else None)
    plan = outputs_plan(
        output, writes=None if kind is None else (TABLE_KINDS.get(kind, "JSON"),), inputs=(document,),
        binary=kind == "parquet",
    )  # fmt: skip
    kind = kind or table_format(output)  # refused: cannot tell
    written = f"--to {target}" + (f" written as {kind}" if target in ("fold-table", "samples-table") else "")
    refuse_excel_safe(excel_safe, kind, written)  # before anything is read: it is for text tables only
    export_file(document, output, target, plan=plan, table_format=kind, splitgraph_version=version,
                excel_safe=excel_safe)  # fmt: skip
    out.print(f"wrote {output}" + (EXCEL_SAFE_NOTE if excel_safe else ""))


def _one_file(output: Path) -> bool:
    """Whether ``output`` can only be one file (named .parquet or .pq, standard output, a FIFO or a device): what
    ``--to parquet`` meant before the columnar form (the samples table)."""
    if output.suffix.lower() in (".parquet", ".pq") or str(output) == "-":
        return True
    try:
        mode = os.stat(output).st_mode
    except OSError:
        return False
    return stat.S_ISFIFO(mode) or stat.S_ISCHR(mode)
