"""``depgraph neighbors`` and ``depgraph query``: the graph's neighbours, nodes and edges as tables."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import orjson
import typer

from depgraph.cli.commandline import WIDE, Command, name_list, out
from depgraph.errors import DepgraphError
from depgraph.study.reviews import query_file

if TYPE_CHECKING:
    import pandas as pd

app = typer.Typer(add_completion=False, pretty_exceptions_enable=False, rich_markup_mode=None)

GRAPH = typer.Argument(metavar="GRAPH", help="A study graph (JSON, or columnar: .dggraph).", readable=False)
OUTPUT = typer.Option("-o", "--output", metavar="FILE", help="Write the whole table (.csv, .tsv or .parquet).")
LIMIT = typer.Option(metavar="N", help="Print at most N rows (the whole table with -o or --json).")
JSON = typer.Option("--json", help="Print the table as JSON records.")


@app.command("neighbors", cls=Command, short_help="The neighbours of nodes, one row per edge.")
def neighbors_command(
    graph: Annotated[Path, GRAPH],
    ids: Annotated[list[str], typer.Argument(metavar="ID...", help="The nodes' ids.")],
    relation: Annotated[
        str | None, typer.Option(metavar="R,R", help="Only edges of these relations (comma-separated).")
    ] = None,
    neighbor_type: Annotated[
        str | None, typer.Option(metavar="TYPE,TYPE", help="Only neighbours of these node types.")
    ] = None,
    direction: Annotated[
        str, typer.Option(metavar="all|out|in", help="Edges leaving the ids, entering, or both.")
    ] = "all",
    node_type: Annotated[str | None, typer.Option("--type", metavar="TYPE", help="The ids' node type.")] = None,
    output: Annotated[Path | None, OUTPUT] = None,
    limit: Annotated[int, LIMIT] = 20,
    as_json: Annotated[bool, JSON] = False,
    wide: Annotated[bool, WIDE] = False,
) -> None:
    """The neighbours of nodes, one row per edge: the seed, the relation, the edge's direction from the seed
    (out, in, undirected), the neighbour, the edge's weight and provenance (splitGraph's query_neighbors)."""
    _check_limit(limit)
    table = query_file(graph, neighbors_of=ids, relations=name_list(relation, "--relation"),
                       neighbor_types=name_list(neighbor_type, "--neighbor-type"), direction=direction,
                       seed_type=node_type, output=output)  # fmt: skip
    with out.widened(wide):
        _show(table, output, limit, as_json)


@app.command("query", cls=Command, short_help="The graph's nodes of some types, or edges of some relations.")
def query_command(
    graph: Annotated[Path, GRAPH],
    node_type: Annotated[str | None, typer.Option("--type", metavar="TYPE,TYPE", help="Nodes of these types.")] = None,
    relation: Annotated[str | None, typer.Option(metavar="R,R", help="Edges of these relations.")] = None,
    ids: Annotated[str | None, typer.Option(metavar="ID,ID", help="Only these nodes, or edges touching them.")] = None,
    output: Annotated[Path | None, OUTPUT] = None,
    limit: Annotated[int, LIMIT] = 20,
    as_json: Annotated[bool, JSON] = False,
    wide: Annotated[bool, WIDE] = False,
) -> None:
    """The graph's nodes of some types (ids and attributes), or its edges of some relations (ends, weight,
    provenance), as a table (splitGraph's query_node_type and query_edge_type)."""
    _check_limit(limit)
    table = query_file(graph, node_types=name_list(node_type, "--type"), relations=name_list(relation, "--relation"),
                       ids=name_list(ids, "--ids"), output=output)  # fmt: skip
    with out.widened(wide):
        _show(table, output, limit, as_json)


def _check_limit(limit: int) -> None:
    if limit < 0:
        raise DepgraphError("invalid_argument", f"--limit takes 0 or more rows, not {limit}")


def _show(table: pd.DataFrame, output: Path | None, limit: int, as_json: bool) -> None:
    """What was written to ``output``, or the table printed as JSON records, or its first ``limit`` rows."""
    if output is not None:
        out.print(f"wrote {len(table)} {'row' if len(table) == 1 else 'rows'} to {output}")
        return
    if as_json:
        records = table.astype(object).where(table.notna(), None).to_dict("records")
        sys.stdout.write(orjson.dumps(records, option=orjson.OPT_SERIALIZE_NUMPY).decode() + "\n")
        return
    rows = "1 row" if len(table) == 1 else f"{len(table)} rows"
    if not len(table):
        out.print("0 rows: the graph declares none")
        return
    out.print(rows + (f"; the first {limit}:" if len(table) > limit else ":"))
    if limit:
        out.print_table(table.head(limit).to_string(index=False))
