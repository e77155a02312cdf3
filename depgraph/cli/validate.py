"""``depgraph validate``: a study graph's findings, or every check of a split spec."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Annotated

import orjson
import typer

from depgraph.cli.commandline import (
    Command,
    check_environment,
    print_report,
    refuse_given,
    stage,
)
from depgraph.cli.documents import peeked_graph
from depgraph.errors import DepgraphError
from depgraph.formats import GRAPH_FORMAT, SPEC_FORMAT
from depgraph.io.columnar import peek_document
from depgraph.spec.keys import key_from_env
from depgraph.validation.rules import validate

app = typer.Typer(add_completion=False, pretty_exceptions_enable=False, rich_markup_mode=None)


@app.command("validate", cls=Command, short_help="Validate a study graph, or check a split spec.")
def validate_command(
    ctx: typer.Context,
    document: Annotated[
        Path,
        typer.Argument(
            metavar="GRAPH.json|SPEC.json",
            help="A study graph or a split spec (JSON, or columnar: .dggraph, .dgspec).",
            readable=False,
        ),
    ],
    as_json: Annotated[bool, typer.Option("--json", help="Print the report as JSON.")] = False,
    n_splits: Annotated[
        int | None,
        typer.Option(
            "-k",
            "--n-splits",
            "--folds",
            "--n-folds",
            help="Graphs: also flag modes that leave fewer groups than K folds.",
        ),
    ] = None,
    verify_key_env: Annotated[
        str | None,
        typer.Option(help="Specs: refuse the spec unless it is signed with the key in this environment variable."),
    ] = None,
) -> None:
    """Validate a study graph (exit 1 when it has errors), or check a split spec
    (schema, every column element, digest, what the spec says of itself, and with
    --verify-key-env its signature; exit 2 when it is damaged or contradicts itself)."""
    check_environment(verify_key_env, "--verify-key-env")
    key = None if verify_key_env is None else key_from_env(verify_key_env, purpose="signature verification")
    found = peek_document(document)  # a JSON file is parsed once; a columnar one's manifest says what it is
    doc = found.document
    if found.format == SPEC_FORMAT:
        refuse_given(ctx, "to a split spec (it flags the modes of a graph)", "n_splits")
        # the spec's modules (its pydantic model, a tenth of a second to load) only for a spec: validating a graph,
        # the usual case, never needs them (tests/test_startup.py)
        from depgraph.cli.specs import peeked_spec, print_spec

        spec = peeked_spec(document, found, verify_key=key)
        if as_json:
            sys.stdout.write(orjson.dumps({"valid": True, **spec.model_dump(mode="json")}).decode() + "\n")
        else:
            print_spec(spec, digest=doc.get("digest"), signed=key is not None)
        return
    if found.format != GRAPH_FORMAT:
        raise DepgraphError(
            "schema",
            f"{str(document)!r}: 'format' is {found.format!r}; expected {GRAPH_FORMAT!r} or {SPEC_FORMAT!r}"
            + (" (a splitGraph file: use 'depgraph import splitgraph')" if "splitGraph_object" in doc else ""),
        )
    if key is not None:
        raise DepgraphError("invalid_argument", "--verify-key-env checks split specs; this is a study graph")
    with stage("validating"):
        report = validate(peeked_graph(document, found), n_splits=n_splits)
    if as_json:
        sys.stdout.write(report.to_json_bytes().decode() + "\n")
    else:
        print_report(report)
    if not report.valid:
        raise typer.Exit(1)
