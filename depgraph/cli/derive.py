"""``depgraph derive``: one group per sample, written as a split spec."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Annotated, Any

import typer

from depgraph.cli.commandline import (
    SEVERITY_STYLE,
    Command,
    canonical,
    check_environment,
    document_outputs,
    encoding_option,
    format_option,
    name_list,
    out,
    refuse_given,
    stage,
    styled,
    tell_if_large,
)
from depgraph.cli.engine import (
    ENGINE_OPTION,
    MASTER_OPTION,
    SPARK_CONF_OPTION,
    chosen_engine,
    spark_settings,
)
from depgraph.cli.specs import SIGN_HELP, signed_by, signing_key
from depgraph.errors import DepgraphError
from depgraph.findings import Issue
from depgraph.spec.privacy import DEFAULT_KEY_ENV, key_from_env
from depgraph.study.steps import derive_file
from depgraph.vocab import MODE

MODE_NAMES = ", ".join(MODE)

app = typer.Typer(add_completion=False, pretty_exceptions_enable=False, rich_markup_mode=None)


@app.command("derive", cls=Command)
def derive_command(
    ctx: typer.Context,
    graph_file: Annotated[
        Path, typer.Argument(metavar="GRAPH.json", help="A graph written by 'depgraph build'.", readable=False)
    ],
    mode: Annotated[str, typer.Option(help=f"Derivation mode: {MODE_NAMES}.")],
    output: Annotated[
        Path,
        typer.Option("--output", "-o", help="Where to write the spec: S.json or S.dgspec (columnar).", readable=False),
    ],
    strategy: Annotated[str | None, typer.Option(help="Composite strategy: strict or rule-based.")] = None,
    via: Annotated[str | None, typer.Option(help="Composite: modes to combine, comma-separated.")] = None,
    priority: Annotated[str | None, typer.Option(help="Rule-based: modes in priority order, comma-separated.")] = None,
    samples: Annotated[
        Path | None, typer.Option(help="Derive for these samples only (one id per line, or a table).", readable=False)
    ] = None,
    min_groups: Annotated[int | None, typer.Option(help="Fail when fewer groups than this remain.")] = None,
    pseudonymize_ids: Annotated[
        bool, typer.Option("--pseudonymize-ids", help="Replace sample and group ids by keyed hashes (HMAC-SHA256).")
    ] = False,
    key_env: Annotated[
        str, typer.Option(help="With --pseudonymize-ids: the environment variable holding the key.")
    ] = DEFAULT_KEY_ENV,
    attributes: Annotated[
        str | None,
        typer.Option(help="Sample attributes to carry into the spec (comma-separated, or 'all'), e.g. for folds."),
    ] = None,
    allow_unlinked: Annotated[
        bool,
        typer.Option(
            "--allow-unlinked", help="Accept a mode that links none of the samples (every sample its own group)."
        ),
    ] = False,
    allow_single_group: Annotated[
        bool,
        typer.Option(
            "--allow-single-group", help="Composite without --via/--priority: accept every sample in one group."
        ),
    ] = False,
    sign_key_env: Annotated[str | None, typer.Option(help=SIGN_HELP)] = None,
    encoding: Annotated[str | None, encoding_option("the --samples file")] = None,
    form: Annotated[str | None, format_option()] = None,
    engine: Annotated[str, ENGINE_OPTION] = "single",
    master: Annotated[str | None, MASTER_OPTION] = None,
    spark_conf: Annotated[list[str] | None, SPARK_CONF_OPTION] = None,
) -> None:
    """Derive one group per sample and write a split spec. A mode that links none of the samples, or a composite
    over every declared mode that leaves one group, is refused unless --allow-unlinked / --allow-single-group.

    \f
    One piece: its signature is the command's options, as typer reads them; the body parses them and calls the
    library."""
    on = chosen_engine(ctx, engine)
    if samples is None:
        refuse_given(ctx, "without --samples (the one table derive reads)", "encoding")
    key, signing = _pseudonymisation_key(ctx, pseudonymize_ids, key_env, attributes), signing_key(sign_key_env)
    settings = spark_settings(master, spark_conf) if on == "spark" else None
    plan, form = document_outputs(output, "split-spec", form, inputs=(graph_file, samples))
    written = derive_file(
        graph_file, output, canonical(mode, "_"), plan=plan, form=form, samples=samples, encoding=encoding,
        attributes=None if attributes is None else _attribute_names(attributes), pseudonym_key=key,
        sign_key=signing, engine=on, settings=settings, progress=stage,
        strategy=None if strategy is None else canonical(strategy, "_"), via=name_list(via, "--via"),
        priority=name_list(priority, "--priority"), min_groups=min_groups, allow_unlinked=allow_unlinked,
        allow_single_group=allow_single_group,
    )  # fmt: skip
    partition = written.result
    _print_partition(partition.mode, partition.strategy, partition.n_samples, partition.shape._asdict(),
                     partition.warnings)  # fmt: skip
    rounds = getattr(partition, "rounds", 0)
    out.print(
        f"wrote {output}" + (" (ids pseudonymised)" if key is not None else "")
        + (f" ({rounds} rounds of components)" if rounds else "") + signed_by(written.key_fingerprint)
    )  # fmt: skip
    tell_if_large(output, form, "spec")


def _pseudonymisation_key(ctx: typer.Context, pseudonymize: bool, key_env: str, attributes: str | None) -> bytes | None:
    """The key of ``--pseudonymize-ids`` (from ``--key-env``), its options checked; None without it."""
    if not pseudonymize:
        refuse_given(ctx, "without --pseudonymize-ids", "key_env")
        return None
    check_environment(key_env, "--key-env")
    key = key_from_env(key_env)
    if attributes is not None and attributes.strip().lower() == "all":
        raise DepgraphError(
            "invalid_argument",
            "--attributes all with --pseudonymize-ids would carry every metadata column beside the hashed ids; "
            "name the attributes to carry (e.g. --attributes sex,age_band)",
        )
    return key


def _attribute_names(text: str) -> str | list[str]:
    """``--attributes``: ``all`` (in any case, as the pseudonymisation check reads it) or a list of names."""
    return "all" if text.strip().lower() == "all" else name_list(text, "--attributes") or []


def _counted(n: int, noun: str) -> str:
    """``1 sample``, ``2 samples``."""
    return f"{n} {noun}" + ("" if n == 1 else "s")


def _print_partition(
    mode: str, strategy: str | None, n_samples: int, shape: dict[str, Any], warnings: Sequence[Issue]
) -> None:
    s = {"n_samples": n_samples, **shape}
    how = f"{mode}/{strategy}" if strategy else mode
    out.print(
        styled(
            "derived ",
            (how, "bold"),
            f": {_counted(s['n_samples'], 'sample')} in {_counted(s['n_groups'], 'group')}; largest "
            f"{s['largest_group']} ({_counted(s['largest_group_size'], 'sample')}), "
            f"{_counted(s['singletons'], 'singleton')}",
        )
    )
    for w in warnings:
        out.print(styled("  ", (w.severity, SEVERITY_STYLE[w.severity]), f" {w.code}: {w.message}"))
