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
    stage,
)
from depgraph.cli.engine import ENGINE_OPTION, MASTER_OPTION, SPARK_CONF_OPTION, chosen_engine, spark_settings
from depgraph.spec.keys import key_from_env
from depgraph.study.reviews import validate_file

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
    engine: Annotated[str, ENGINE_OPTION] = "single",
    master: Annotated[str | None, MASTER_OPTION] = None,
    spark_conf: Annotated[list[str] | None, SPARK_CONF_OPTION] = None,
) -> None:
    """Validate a study graph (exit 1 when it has errors), or check a split spec
    (schema, every column element, digest, what the spec says of itself, and with
    --verify-key-env its signature; exit 2 when it is damaged or contradicts itself)."""
    check_environment(verify_key_env, "--verify-key-env")
    key = None if verify_key_env is None else key_from_env(verify_key_env, purpose="signature verification")
    on = chosen_engine(ctx, engine)
    settings = spark_settings(master, spark_conf) if on == "spark" else None
    found = validate_file(document, n_splits=n_splits, verify_key=key, engine=on, settings=settings, progress=stage)
    if found.spec is not None:
        # the spec's printing (its model, a tenth of a second to load) only for a spec: validating a graph, the
        # usual case, never needs it (tests/test_startup.py)
        from depgraph.cli.specs import print_spec

        if as_json:
            sys.stdout.write(orjson.dumps({"valid": True, **found.spec.model_dump(mode="json")}).decode() + "\n")
        else:
            print_spec(found.spec, digest=found.digest, signed=key is not None)
        return
    report = found.report
    assert report is not None  # a graph's findings when not a spec
    if as_json:
        sys.stdout.write(report.to_json_bytes().decode() + "\n")
    else:
        print_report(report)
    if not report.valid:
        raise typer.Exit(1)
