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
    SparkRun,
    chosen_engine,
    spark_settings,
)
from depgraph.cli.specs import SIGN_HELP, signed_note, signing_key, write_signed_spec
from depgraph.derivation.groups import Partition, derive, selected_samples
from depgraph.errors import DepgraphError
from depgraph.findings import Issue
from depgraph.graph.files import read_graph
from depgraph.graph.model import StudyGraph
from depgraph.ingest.samplelists import read_sample_list, refuse_headerless
from depgraph.io.outputs import Outputs
from depgraph.spec.digest import signing_key_fingerprint
from depgraph.spec.model import SplitSpec
from depgraph.spec.privacy import DEFAULT_KEY_ENV, derived_spec, key_from_env, pseudonymize
from depgraph.vocab import MODE, NodeType

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
    if chosen_engine(ctx, engine) == "spark":
        options = dict(mode=mode, strategy=strategy, via=via, priority=priority, min_groups=min_groups,
                       allow_unlinked=allow_unlinked, allow_single_group=allow_single_group)  # fmt: skip
        options["attributes"] = None if attributes is None else _attribute_names(attributes)
        options["sign_key"] = signing_key(sign_key_env)
        options["key"] = _pseudonymisation_key(ctx, pseudonymize_ids, key_env, attributes)
        options["samples"], options["encoding"] = samples, encoding
        return derive_on_spark(ctx, graph_file, output, form, master, spark_settings(spark_conf), options)
    if samples is None:
        refuse_given(ctx, "without --samples (the one table derive reads)", "encoding")
    key, signing = _pseudonymisation_key(ctx, pseudonymize_ids, key_env, attributes), signing_key(sign_key_env)
    plan, form = document_outputs(output, "split-spec", form, inputs=(graph_file, samples))
    with stage(f"reading {graph_file.name}"):
        graph = read_graph(graph_file)
    subset, header = read_sample_list(samples, encoding) if samples is not None else (None, None)
    if samples is not None:  # its unknown ids named with the file they came from, once
        refuse_headerless(graph, samples, header)
        selected_samples(graph, subset, what=f"samples file {str(samples)!r}")
    with stage(f"deriving {mode} groups"):
        partition = derive(
            graph,
            canonical(mode, "_"),
            strategy=None if strategy is None else canonical(strategy, "_"),
            via=name_list(via, "--via"),
            priority=name_list(priority, "--priority"),
            samples=subset,
            min_groups=min_groups,
            allow_unlinked=allow_unlinked,
            allow_single_group=allow_single_group,
        )
    spec = _written_spec(partition, graph, output, attributes, key, signing, plan, form)
    _print_partition(partition.mode, partition.strategy, partition.n_samples, partition.shape._asdict(),
                     partition.warnings)  # fmt: skip
    out.print(f"wrote {output}" + (" (ids pseudonymised)" if key is not None else "") + signed_note(spec))
    tell_if_large(output, form, "spec")


def _written_spec(
    partition: Partition, graph: StudyGraph, output: Path, attributes: str | None, key: bytes | None,
    signing: Any, plan: Outputs, form: str,
) -> SplitSpec:  # fmt: skip
    """The spec of ``partition`` with its attributes, pseudonymised and signed as asked, written to ``output``."""
    with stage(f"writing {output.name}"):
        carried = attributes if attributes is None else _attribute_names(attributes)
        spec = derived_spec(partition, graph, carried, key)
        with plan:
            return write_signed_spec(spec, output, signing, form)


def derive_on_spark(
    ctx: typer.Context, graph_file: Path, output: Path, form: str | None, master: str | None,
    settings: dict[str, str], options: dict[str, Any],
) -> None:  # fmt: skip
    """``derive --engine spark``: the columnar graph read by Spark, derived there, the spec written by Spark
    (the options the engine does not offer refused before Spark starts). The session it starts itself gets its
    shuffle partitions from the graph's size unless ``--spark-conf`` sets them; a failure of Spark (not of the
    input) is one line, code ``engine``."""
    if options["samples"] is None:
        refuse_given(ctx, "without --samples (the one table derive reads)", "encoding")
    listed = options["samples"]
    plan, form = document_outputs(output, "split-spec", form, inputs=(graph_file, *([listed] if listed else [])))
    if form != "parquet":
        raise DepgraphError("invalid_argument", "--engine spark writes the columnar form: name the output S.dgspec")
    mode = canonical(options.pop("mode"), "_")
    options["strategy"] = None if options["strategy"] is None else canonical(options["strategy"], "_")
    options["via"] = name_list(options["via"], "--via")
    options["priority"] = name_list(options["priority"], "--priority")
    attributes, sign_key, key = options.pop("attributes"), options.pop("sign_key"), options.pop("key")
    encoding = options.pop("encoding")
    del options["samples"]
    subset, header = read_sample_list(listed, encoding) if listed is not None else (None, None)
    with SparkRun("depgraph derive", master, settings) as run:
        from depgraph.spark.derive import selected_rows
        from depgraph.spark.graph import read_graph as read_spark_graph
        from depgraph.spark.spec import SparkSpec, write_spec_request

        with run.step(f"read {graph_file.name}", f"reading {graph_file.name} in Spark"):
            graph = read_spark_graph(graph_file, run.session)
        run.fit(graph.count(NodeType.SAMPLE))
        with run.step(f"derive {mode} groups", f"deriving {mode} groups in Spark"):
            if listed is not None:  # its unknown ids named with the file they came from, once
                refuse_headerless(graph, listed, header)
                selected_rows(graph, subset, what=f"samples file {str(listed)!r}")
            partition = derive(graph, mode, samples=subset, **options)  # a SparkGraph: derived on Spark
        with run.step(f"write {output.name}", f"writing {output.name}"), plan:
            spec = SparkSpec.of(partition, attributes)
            write_spec_request(spec if key is None else pseudonymize(spec, key), output, sign_key)
    _print_partition(partition.mode, partition.strategy, partition.n_samples, partition.shape._asdict(),
                     partition.warnings)  # fmt: skip
    signed = "" if sign_key is None else f" (signed, key fingerprint {signing_key_fingerprint(sign_key)})"
    hidden = "" if key is None else " (ids pseudonymised)"
    rounds = f" ({partition.rounds} rounds of components)" if partition.rounds else ""
    out.print(f"wrote {output}" + hidden + rounds + signed)


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
