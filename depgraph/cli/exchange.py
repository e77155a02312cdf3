"""``depgraph import`` and ``depgraph export``: specs and graphs to and from other tools and tables."""

from __future__ import annotations

import os
import stat
from pathlib import Path
from typing import Annotated

import typer

from depgraph.adapters.frames import TABLE_FORMATS, fold_table, samples_table, table_format, write_table
from depgraph.adapters.splitgraph import read_splitgraph, write_splitgraph_graph, write_splitgraph_spec
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
)
from depgraph.cli.documents import peeked_graph
from depgraph.cli.specs import SIGN_HELP, peeked_spec, print_spec, signed_note, signing_key, write_signed_spec
from depgraph.errors import DepgraphError
from depgraph.formats import GRAPH_FORMAT, SPEC_FORMAT
from depgraph.graph.files import write_graph
from depgraph.io.columnar import output_form, peek_document
from depgraph.spec.files import write_spec
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
    form: Annotated[str | None, format_option()] = None,
) -> None:
    """Read another tool's file: a splitGraph split_spec becomes a depgraph spec,
    a splitGraph dependency_graph a depgraph graph (the symmetric of export --to splitgraph)."""
    if canonical(source, "-") != "splitgraph":
        raise DepgraphError("invalid_argument", f"import --from reads splitgraph files, not {source!r}")
    signing = signing_key(sign_key_env)
    plan, form = document_outputs(output, None, form, inputs=(file,))
    imported = read_splitgraph(file)
    output_form(output, "split-spec" if isinstance(imported, SplitSpec) else "study-graph", form)  # named for it
    if signing is not None and not isinstance(imported, SplitSpec):
        raise DepgraphError(
            "invalid_argument", f"--sign-key-env signs split specs; {str(file)!r} is a splitGraph dependency_graph"
        )
    with plan:
        if isinstance(imported, SplitSpec):
            imported = write_signed_spec(imported, output, signing, form)
        else:
            write_graph(imported, output, format=form)
    if isinstance(imported, SplitSpec):
        print_spec(imported)
    else:
        print_graph(imported, "imported study graph")
    out.print(f"wrote {output}" + (signed_note(imported) if isinstance(imported, SplitSpec) else ""))


#: What ``export --to`` writes.
TARGETS = ("json", "parquet", "splitgraph", "csv", "samples-table", "fold-table")


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
        str, typer.Option(help="Graphs: the splitGraph release to write for (0.2.0 or 0.4.0).")
    ] = "0.4.0",
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
    if target in ("json", "parquet"):
        _export_form(ctx, document, target, output)
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
    found = peek_document(document)
    if found.format == GRAPH_FORMAT:
        if target != "splitgraph":
            raise DepgraphError(
                "invalid_argument", f"a study graph exports only to json, parquet or splitgraph, not {target}"
            )
        with plan:  # what splitGraph cannot hold is told as a splitgraph_export_drops warning
            write_splitgraph_graph(peeked_graph(document, found), output, splitgraph_version)
        out.print(f"wrote {output}")
        return
    refuse_given(ctx, "to a split spec (it applies to graphs exported --to splitgraph)", "splitgraph_version")
    spec = peeked_spec(document, found)
    with plan:
        if target == "splitgraph":
            write_splitgraph_spec(spec, output)
        elif target == "fold-table":
            write_table(fold_table(spec), output, excel_safe=excel_safe)
        else:
            write_table(samples_table(spec), output, kind, excel_safe=excel_safe)
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


def _export_form(ctx: typer.Context, document: Path, form: str, output: Path) -> None:
    """``export --to json|parquet``: the same spec or graph in the other form, every element of it kept (a spec
    keeps its digest)."""
    refuse_given(ctx, f"to --to {form} (it is for CSV and TSV tables)", "excel_safe")
    plan, form = document_outputs(output, None, form, inputs=(document,))
    found = peek_document(document)
    kind = {SPEC_FORMAT: "split-spec", GRAPH_FORMAT: "study-graph"}.get(found.format)
    if kind is None:
        raise DepgraphError(
            "schema", f"{str(document)!r}: 'format' is {found.format!r}; expected {SPEC_FORMAT!r} or {GRAPH_FORMAT!r}"
        )
    output_form(output, kind, form)  # a spec named .dggraph, a graph named .dgspec: refused before it is read
    with plan:
        if kind == "study-graph":
            write_graph(peeked_graph(document, found), output, format=form)
        else:
            write_spec(peeked_spec(document, found), output, format=form)
    out.print(f"wrote {output}")
