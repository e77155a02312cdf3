"""``depgraph why``: the chains of declared dependencies that keep two samples together."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Annotated

import orjson
import typer

from depgraph.cli.commandline import Command, out
from depgraph.study.reviews import Explained, why_files

app = typer.Typer(add_completion=False, pretty_exceptions_enable=False, rich_markup_mode=None)


@app.command(
    "why", cls=Command, short_help="Why two samples are never apart: the chains of dependencies that join them."
)
def why_command(
    document: Annotated[
        Path,
        typer.Argument(metavar="GRAPH|SPEC", help="A study graph, or a split spec (JSON or columnar).", readable=False),
    ],
    a: Annotated[str, typer.Argument(metavar="A", help="A sample's id (or another node's, of B's type).")],
    b: Annotated[str, typer.Argument(metavar="B", help="Another id of the same type.")],
    graph_file: Annotated[
        Path | None,
        typer.Option(
            "--graph",
            metavar="GRAPH",
            help="With a spec: the graph it was derived from, for the chains.",
            readable=False,
        ),
    ] = None,
    mode: Annotated[
        str | None,
        typer.Option(metavar="MODE", help="With a graph: follow only this mode's relations (default: every relation)."),
    ] = None,
    all_paths: Annotated[
        int, typer.Option("--all-paths", metavar="K", help="Show up to K shortest distinct chains.")
    ] = 1,
    node_type: Annotated[
        str | None,
        typer.Option("--type", metavar="TYPE", help="The ids' node type, when they name nodes of several types."),
    ] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print the answer as JSON.")] = False,
) -> None:
    """Why A and B are never apart: the shortest chain of declared dependencies that joins them (each step with its
    relation and evidence: kinship value, similarity, the builder that declared it), or that none does. Given a
    spec, each sample's group in it, and with --graph the chains over the relations its grouping followed."""
    answer = why_files(document, a, b, graph_file=graph_file, mode=mode, all_paths=all_paths, node_type=node_type)
    if as_json:
        sys.stdout.write(orjson.dumps(_document(answer, a, b), option=orjson.OPT_SERIALIZE_NUMPY).decode() + "\n")
        return
    if answer.groups is not None:
        first, second = answer.groups
        if first == second:
            out.print(f"{a} and {b} share group {first} of the spec ({answer.mode}): never apart")
        else:
            out.print(f"{a} and {b} are in groups {first} and {second} of the spec ({answer.mode}): free to be apart")
        if answer.chains is None:
            out.print("the chain that joins them is the graph's: give it with --graph GRAPH")
    if answer.chains is not None:
        sys.stdout.write("\n".join(answer.chains.lines()) + "\n")  # a chain may have thousands of steps
    if answer.disagreement:
        out.print(f"note: {answer.disagreement}")


def _document(answer: Explained, a: str, b: str) -> dict[str, object]:
    chains = answer.chains
    return {
        "a": a,
        "b": b,
        "groups": None if answer.groups is None else list(answer.groups),
        "mode": answer.mode,
        "connected": None if chains is None else chains.connected,
        "relations": None if chains is None else list(chains.relations),
        "steps": None
        if chains is None
        else chains.table.astype(object).where(chains.table.notna(), None).to_dict("records"),
        "note": None if chains is None else chains.note,
        "unlinked": None if chains is None else list(chains.unlinked),
        "disagreement": answer.disagreement,
    }
