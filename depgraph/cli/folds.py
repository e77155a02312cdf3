"""``depgraph folds``: folds assigned to whole groups and recorded in a new spec; its options are built from
the fold schemes' parameter declarations."""

from __future__ import annotations

import dataclasses
import inspect
import os
import typing
from pathlib import Path
from typing import Annotated, Any

import typer

from depgraph.cli.commandline import (
    Command,
    check_environment,
    document_outputs,
    format_option,
    name_list,
    number_list,
    option_name,
    out,
    stage,
    tell_if_large,
    typed,
)
from depgraph.cli.engine import ENGINE_OPTION, MASTER_OPTION, SPARK_CONF_OPTION, chosen_engine, spark_settings
from depgraph.cli.specs import SIGN_HELP, signed_by, signing_key
from depgraph.errors import DepgraphError
from depgraph.folds.parameters import PARAMETERS, PARAMETERS_BY_NAME, Parameter
from depgraph.folds.schemes import SCHEMES, FoldScheme, canonical_scheme_name, schemes_taking
from depgraph.study.steps import fold_file

app = typer.Typer(add_completion=False, pretty_exceptions_enable=False, rich_markup_mode=None)


# --------------------------------------------------------------------------- folds: options from the schemes
def fold_option(parameter: Parameter) -> inspect.Parameter:
    """The ``folds`` command's option for a scheme parameter, built from its declaration (help, spellings, what goes
    there, and the default: the command's own, else the one default of every scheme taking it)."""
    kind = {"names": str, "numbers": str, "spec": Path, "environment": str}.get(parameter.reads)
    defaults = {f.default for s in _taking(parameter) for f in dataclasses.fields(s) if f.name == parameter.name}
    if kind is None:
        kind = typing.get_type_hints(_taking(parameter)[0])[parameter.name]
    default = parameter.command_default
    if default is None and len(defaults) == 1 and parameter.reads in ("value", "names"):
        (default,) = defaults
        default = ",".join(default) if parameter.reads == "names" else default
    option = typer.Option(
        *parameter.flags,
        help=parameter.help,
        metavar=parameter.metavar,
        **({"readable": False} if kind is Path else {}),
    )
    return inspect.Parameter(
        parameter.name, inspect.Parameter.POSITIONAL_OR_KEYWORD, default=default,
        annotation=Annotated[kind if default is not None else kind | None, option],
    )  # fmt: skip


def _taking(parameter: Parameter) -> list[type[FoldScheme]]:
    return [SCHEMES[name] for name in schemes_taking(parameter.name)]


def _fold_parameters(ctx: typer.Context, scheme: type[FoldScheme], given: dict[str, Any]) -> dict[str, Any]:
    """The options given, by parameter: an option the scheme does not declare is refused, naming the schemes it
    applies to; a parameter with a command default takes it when not given; each declared check runs."""
    declared = scheme.parameters_declared()
    params: dict[str, Any] = {}
    for parameter in PARAMETERS:
        given_here = typed(ctx, parameter.name)
        if parameter.name not in declared:
            if given_here:
                spelt = option_name(ctx, parameter.name)
                raise DepgraphError(
                    "invalid_argument",
                    f"{spelt} does not apply to --scheme {scheme.name} (it applies to "
                    f"{', '.join(schemes_taking(parameter.name))})",
                    option=spelt,
                )
        elif given_here or parameter.command_default is not None:
            params[parameter.name] = given[parameter.name]
            if parameter.check is not None:
                parameter.check(params[parameter.name], option_name(ctx, parameter.name))
        elif parameter.required:
            raise DepgraphError(
                "invalid_argument",
                f"{scheme.name} folds need {parameter.flags[0]} {parameter.metavar} (the {parameter.name} is never a "
                "command-line value)",
            )
    return params


def _fold_values(ctx: typer.Context, params: dict[str, Any]) -> dict[str, Any]:
    """The parameters as the scheme takes them: names split, values read from the environment, specs read."""
    out = {}
    for name, value in params.items():
        parameter, option = PARAMETERS_BY_NAME[name], option_name(ctx, name)
        if parameter.reads == "names":
            value = tuple(name_list(value, option) or ())
        elif parameter.reads == "numbers":
            value = tuple(number_list(value, option))
        elif parameter.reads == "environment":
            check_environment(value, option)
            value = os.environ.get(value)
            if not value:
                raise DepgraphError(
                    "invalid_argument", f"the environment variable {params[name]} holding the {name} is unset or empty"
                )
        out[name] = value
    return out


def folds_command(
    ctx: typer.Context,
    document: Annotated[Path, typer.Argument(metavar="SPEC.json", help="A split spec.", readable=False)],
    scheme: Annotated[str, typer.Option(help=f"Fold scheme: {', '.join(SCHEMES)}.")],
    output: Annotated[
        Path,
        typer.Option(
            "--output", "-o", help="Where to write the spec with its folds (.json or .dgspec).", readable=False
        ),
    ],
    form: Annotated[str | None, format_option()] = None,
    sign_key_env: Annotated[str | None, typer.Option(help=SIGN_HELP)] = None,
    engine: Annotated[str, ENGINE_OPTION] = "single",
    master: Annotated[str | None, MASTER_OPTION] = None,
    spark_conf: Annotated[list[str] | None, SPARK_CONF_OPTION] = None,
    **given: Any,
) -> None:
    """Assign folds to a spec's groups and write the spec carrying them. An option the scheme does not take is
    refused."""
    signing = signing_key(sign_key_env)
    on = chosen_engine(ctx, engine)
    name = canonical_scheme_name(scheme)
    if name not in SCHEMES:
        raise DepgraphError("invalid_argument", f"--scheme takes {', '.join(SCHEMES)}, not {scheme!r}")
    params = _fold_parameters(ctx, SCHEMES[name], given)  # before reading anything: a wrong option fails fast
    documents = {k: v for k, v in params.items() if PARAMETERS_BY_NAME[k].reads == "spec"}
    settings = spark_settings(master, spark_conf) if on == "spark" else None
    plan, form = document_outputs(output, "split-spec", form, inputs=(document, *documents.values()))
    params = _fold_values(ctx, params)
    params.update({k: v for k, v in documents.items() if v is not None})
    written = fold_file(document, output, name, params, plan=plan, form=form, sign_key=signing, engine=on,
                        settings=settings, progress=stage)  # fmt: skip
    _print_folds(written.result)
    out.print(f"wrote {output}" + signed_by(written.key_fingerprint))
    tell_if_large(output, form, "spec")


def _with_fold_options(command: Any) -> Any:
    """``command`` taking one option per scheme parameter (:func:`fold_option`) in place of its ``**given``."""
    fixed = list(inspect.signature(command, eval_str=True).parameters.values())
    generated = [fold_option(p) for p in PARAMETERS]
    at = [p.name for p in fixed].index("form") + 1  # the scheme's options after the output's, before signing and engine
    command.__signature__ = inspect.Signature([*fixed[:at], *generated, *fixed[at:-1]])
    return command


app.command("folds", cls=Command)(_with_fold_options(folds_command))


def _print_folds(plan: dict[str, Any]) -> None:
    """The plan's sizes and balance, from its outline (:meth:`~depgraph.spec.model.FoldPlan.outline`)."""
    train, test, excluded = ([s[f"n_{side}"] for s in plan["splits"]] for side in ("train", "test", "excluded"))
    # a time split leaves out what its gap, embargo or later levels withhold: its excluded sizes are always shown
    shown = plan["scheme"] == "time" or any(excluded)
    out.print(
        f"{plan['scheme']}: {len(plan['splits'])} split(s); train sizes {train}, test sizes {test}"
        + (f", excluded {excluded}" if shown else "")
    )
    for column, metrics in plan["balance"].get("columns", {}).items():
        out.print(
            f"  {column}: worst test-share deviation {metrics['worst_proportion_deviation']}, "
            f"worst scaled difference {metrics['worst_scaled_difference']}"
        )
    if plan["parameters"].get("thresholds") is not None:  # for other sites to apply: --thresholds
        out.print(f"  thresholds {','.join(map(repr, plan['parameters']['thresholds']))}")
    association = plan["balance"].get("association")
    if isinstance(association, dict) and association.get("cramers_v") is not None:
        out.print(f"  folds vs {association['outcome']}: Cramér's V {association['cramers_v']}")
    for line in plan.get("composition", []):  # the declared factors (site, batch, study...)
        out.print(line)
