"""``depgraph explain``: what a group is made of, and the bridges whose removal would split it."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import orjson
import typer

from depgraph.cli.commandline import Command, out
from depgraph.errors import DepgraphError, describe_ids
from depgraph.study.reviews import Described, explain_files

if TYPE_CHECKING:
    import pandas as pd

app = typer.Typer(add_completion=False, pretty_exceptions_enable=False, rich_markup_mode=None)


@app.command("explain", cls=Command, short_help="What holds a group together: its make-up and its bridges.")
def explain_command(
    document: Annotated[
        Path,
        typer.Argument(metavar="GRAPH|SPEC", help="A study graph, or a split spec (JSON or columnar).", readable=False),
    ],
    item: Annotated[str, typer.Argument(metavar="GROUP|SAMPLE", help="A sample's id, or a spec's group id.")],
    graph_file: Annotated[
        Path | None,
        typer.Option("--graph", metavar="GRAPH", help="With a spec: the graph it was derived from.", readable=False),
    ] = None,
    mode: Annotated[
        str | None, typer.Option(metavar="MODE", help="With a graph: follow only this mode's relations.")
    ] = None,
    bridges: Annotated[int, typer.Option(metavar="N", help="Show the N largest bridges.")] = 10,
    as_json: Annotated[bool, typer.Option("--json", help="Print the answer as JSON.")] = False,
) -> None:
    """What holds a group together: its samples, nodes and edges by type, and its bridges, the edges whose removal
    would split it (a weak kinship or one mis-declared batch gluing families together), largest split first."""
    if bridges < 0:
        raise DepgraphError("invalid_argument", f"--bridges takes 0 or more bridges to show, not {bridges}")
    answer = explain_files(document, item, graph_file=graph_file, mode=mode)
    if as_json:
        sys.stdout.write(orjson.dumps(_document(answer), option=orjson.OPT_SERIALIZE_NUMPY).decode() + "\n")
        return
    if answer.group is not None and answer.members is not None:
        count = "1 sample" if len(answer.members) == 1 else f"{len(answer.members)} samples"
        out.print(f"group {answer.group} of the spec ({answer.mode}): {count}: "
                  f"{describe_ids(answer.members, 10)}")  # fmt: skip
        if answer.makeup is None:
            out.print("its make-up and bridges are the graph's: give it with --graph GRAPH")
    if answer.makeup is not None:
        sys.stdout.write("\n".join(answer.makeup.lines(bridges)) + "\n")
    if answer.disagreement:
        out.print(f"note: {answer.disagreement}")


def _document(answer: Described) -> dict[str, object]:
    makeup = answer.makeup
    return {
        "group": answer.group,
        "members": answer.members,
        "mode": answer.mode,
        "samples": None if makeup is None else makeup.samples.tolist(),
        "relations": None if makeup is None else list(makeup.relations),
        "nodes": None if makeup is None else makeup.nodes,
        "edges": None if makeup is None else _records(makeup.edges),
        "bridges": None if makeup is None else _records(makeup.bridges),
        "disagreement": answer.disagreement,
    }


def _records(table: pd.DataFrame) -> list[dict[str, object]]:
    return table.astype(object).where(table.notna(), None).to_dict("records")
