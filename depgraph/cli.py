"""The ``depgraph`` command.

Exit codes: 0 ok, 1 findings (validation errors), 2 bad input (one line on
stderr: ``depgraph: <code>: <what is wrong and where>``). Nothing is written
when a command fails.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.console import Console
from rich.table import Table

from depgraph.derive import Partition, derive
from depgraph.errors import DepgraphError, describe_ids
from depgraph.files import read_table
from depgraph.graph import StudyGraph, read_graph, write_graph
from depgraph.ingest import from_metadata
from depgraph.spec import SplitSpec, write_spec
from depgraph.validate import ValidationReport, validate
from depgraph.vocab import CANONICAL_COLUMNS, MODE

app = typer.Typer(
    name="depgraph",
    help="Declare what must never be split between training and evaluation data; derive leakage-free groups.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)
out = Console(highlight=False, soft_wrap=True)

MODE_NAMES = ", ".join(MODE)


# --------------------------------------------------------------------------- helpers
def _column_map(pairs: list[str] | None) -> dict[str, str]:
    mapping: dict[str, str] = {}
    for item in pairs or []:
        canonical, sep, user = item.partition("=")
        if not sep or not canonical.strip() or not user.strip():
            raise DepgraphError("invalid_argument", f"--column takes canonical=user_column, got {item!r}")
        if canonical.strip() not in CANONICAL_COLUMNS:
            raise DepgraphError(
                "invalid_argument",
                f"--column {item!r}: {canonical.strip()!r} is not a canonical column "
                f"({describe_ids(CANONICAL_COLUMNS, 20)})",
            )
        mapping[canonical.strip()] = user.strip()
    return mapping


def _mode_list(text: str | None) -> list[str] | None:
    """``a,b`` as ``["a", "b"]``; derive() checks the names."""
    return None if text is None else [m.strip() for m in text.split(",") if m.strip()]


def read_sample_list(path: Path) -> list[str]:
    """Sample ids from a CSV/TSV/Parquet table (its ``sample_id`` column, or its
    only column) or a text file with one id per line (``#`` starts a comment)."""
    if path.suffix.lower() in (".csv", ".tsv", ".parquet", ".pq"):
        table = read_table(path, "samples file")
        if "sample_id" in table.columns:
            column = table["sample_id"]
        elif len(table.columns) == 1:
            column = table.iloc[:, 0]
        else:
            raise DepgraphError(
                "schema",
                f"samples file {str(path)!r} needs a sample_id column (columns: {describe_ids(table.columns)})",
            )
        ids = [str(v).strip() for v in column.dropna().tolist() if str(v).strip()]
    else:
        from depgraph.files import read_bytes

        text = read_bytes(path, "samples file").decode("utf-8", errors="replace")
        ids = [line.split("#", 1)[0].strip() for line in text.splitlines()]
        ids = [i for i in ids if i]
    if not ids:
        raise DepgraphError("empty_input", f"samples file {str(path)!r} lists no sample ids")
    return ids


def _print_graph(graph: StudyGraph, title: str) -> None:
    table = Table(title=title, show_header=True, header_style="bold")
    table.add_column("nodes")
    table.add_column("n", justify="right")
    table.add_column("edges")
    table.add_column("n", justify="right")
    types = list(graph.type_counts().items())
    rels = list(graph.relation_counts().items())
    for i in range(max(len(types), len(rels))):
        t = types[i] if i < len(types) else ("", "")
        r = rels[i] if i < len(rels) else ("", "")
        table.add_row(t[0], str(t[1]), r[0], str(r[1]))
    out.print(table)


def _print_report(report: ValidationReport) -> None:
    verdict = "[green]valid[/green]" if report.valid else "[red]INVALID[/red]"
    m = report.metrics
    out.print(
        f"validation: {verdict} — {m['n_errors']} error(s), {m['n_warnings']} warning(s), "
        f"{m['n_advisories']} advisory(ies) over {m['n_samples']} samples"
    )
    colour = {"error": "red", "warning": "yellow", "advisory": "cyan"}
    for issue in report.issues:
        out.print(
            f"  [{colour[issue.severity]}]{issue.severity:<8}[/] {issue.code} ({issue.level}, {issue.count}): "
            f"{issue.message}"
        )


def _print_partition(partition: Partition) -> None:
    s = partition.summary()
    how = f"{partition.mode}/{partition.strategy}" if partition.strategy else partition.mode
    out.print(
        f"derived [bold]{how}[/bold]: {s['n_samples']} samples in {s['n_groups']} groups; "
        f"largest {s['largest_group']} ({s['largest_group_size']} samples), {s['singletons']} singletons"
    )
    for w in partition.warnings:
        out.print(f"  [yellow]{w.severity}[/yellow] {w.code}: {w.message}")


# --------------------------------------------------------------------------- commands
@app.command()
def build(
    metadata: Annotated[Path, typer.Argument(help="One row per sample: CSV, TSV or Parquet.")],
    output: Annotated[Path, typer.Option("--output", "-o", help="Where to write the graph JSON.")],
    kinship: Annotated[Path | None, typer.Option(help="Kinship pairs: CSV with id1,id2,kinship (subject ids).")] = None,
    kinship_threshold: Annotated[
        str | None,
        typer.Option(help="Inclusive kinship threshold, a number or a KING degree: duplicate, first, second, third."),
    ] = None,
    coords: Annotated[Path | None, typer.Option(help="Coordinates: CSV with sample_id,x,y[,z].")] = None,
    radius: Annotated[float | None, typer.Option(help="Samples at most this far apart are adjacent.")] = None,
    duplicates: Annotated[Path | None, typer.Option(help="Duplicate pairs: CSV with id1,id2 (sample ids).")] = None,
    column: Annotated[
        list[str] | None, typer.Option("--column", help="Map a canonical column to yours: canonical=user_col.")
    ] = None,
    unknown: Annotated[
        str, typer.Option(help="Pairs naming ids not in the metadata: 'error' or 'ignore' (drop, and report).")
    ] = "error",
    allow_multi_subject_samples: Annotated[
        bool, typer.Option(help="Accept samples listed with several subjects.")
    ] = False,
    outcome_scope: Annotated[str, typer.Option(help="Link outcome_id to 'sample' or 'subject'.")] = "sample",
    name: Annotated[str | None, typer.Option(help="A name for the graph, shown in reports.")] = None,
) -> None:
    """Build a study graph from metadata (+ kinship, coordinates, duplicates)."""
    if unknown not in ("error", "ignore"):
        raise DepgraphError("invalid_argument", f"--unknown takes 'error' or 'ignore', not {unknown!r}")
    if outcome_scope not in ("sample", "subject"):
        raise DepgraphError("invalid_argument", f"--outcome-scope takes 'sample' or 'subject', not {outcome_scope!r}")
    if kinship is not None and kinship_threshold is None:
        raise DepgraphError("invalid_argument", "--kinship needs --kinship-threshold (a number or a KING degree name)")
    if kinship is None and kinship_threshold is not None:
        raise DepgraphError("invalid_argument", "--kinship-threshold is given without --kinship")
    if (coords is None) != (radius is None):
        raise DepgraphError("invalid_argument", "--coords and --radius go together")
    graph = from_metadata(
        metadata,
        _column_map(column),
        name=name or metadata.stem,
        outcome_scope=outcome_scope,  # type: ignore[arg-type]
        allow_multi_subject_samples=allow_multi_subject_samples,
    )
    if kinship is not None:
        graph = graph.add_kinship(kinship, kinship_threshold, unknown=unknown)  # type: ignore[arg-type]
    if coords is not None:
        graph = graph.add_spatial(coords, radius, unknown=unknown)  # type: ignore[arg-type]
    if duplicates is not None:
        graph = graph.add_duplicates(duplicates, unknown=unknown)  # type: ignore[arg-type]
    write_graph(graph, output)
    _print_graph(graph, f"wrote {output}")


@app.command("validate")
def validate_command(
    graph_file: Annotated[Path, typer.Argument(metavar="GRAPH.json", help="A graph written by 'depgraph build'.")],
    as_json: Annotated[bool, typer.Option("--json", help="Print the report as JSON.")] = False,
    n_folds: Annotated[
        int | None, typer.Option(help="Also flag modes that leave fewer groups than this many folds.")
    ] = None,
) -> None:
    """Validate a study graph. Exit 1 when it has errors."""
    report = validate(read_graph(graph_file), n_folds=n_folds)
    if as_json:
        sys.stdout.write(report.to_json_bytes().decode() + "\n")
    else:
        _print_report(report)
    if not report.valid:
        raise typer.Exit(1)


@app.command("derive")
def derive_command(
    graph_file: Annotated[Path, typer.Argument(metavar="GRAPH.json", help="A graph written by 'depgraph build'.")],
    mode: Annotated[str, typer.Option(help=f"Derivation mode: {MODE_NAMES}.")],
    output: Annotated[Path, typer.Option("--output", "-o", help="Where to write the split spec JSON.")],
    strategy: Annotated[str | None, typer.Option(help="Composite strategy: strict or rule_based.")] = None,
    via: Annotated[str | None, typer.Option(help="Composite: modes to combine, comma-separated.")] = None,
    priority: Annotated[str | None, typer.Option(help="Rule-based: modes in priority order, comma-separated.")] = None,
    samples: Annotated[
        Path | None, typer.Option(help="Derive for these samples only (one id per line, or a table).")
    ] = None,
    min_groups: Annotated[int | None, typer.Option(help="Fail when fewer groups than this remain.")] = None,
) -> None:
    """Derive one group per sample and write a split spec."""
    graph = read_graph(graph_file)
    subset = read_sample_list(samples) if samples is not None else None
    partition = derive(
        graph,
        mode.strip().lower(),
        strategy=strategy,
        via=_mode_list(via),
        priority=_mode_list(priority),
        samples=subset,
        min_groups=min_groups,
    )
    spec = SplitSpec.from_partition(partition, graph)
    write_spec(spec, output)
    _print_partition(partition)
    out.print(f"wrote {output}")


@app.command()
def demo(
    output_dir: Annotated[
        Path | None, typer.Option("--output-dir", "-o", help="Also write the cohort tables, graph and spec here.")
    ] = None,
) -> None:
    """Run build → validate → derive on the bundled family cohort and explain the result."""
    from depgraph.demo import demo_cohort, pairs_split

    cohort = demo_cohort()
    meta = cohort.metadata
    out.rule("[bold]depgraph demo: a family cohort")
    out.print(
        f"{meta['family'].nunique()} families × 2 siblings × 3 visits, {meta['batch_id'].nunique()} batches, "
        f"{len(cohort.duplicates)} specimens re-deposited under new sample and subject ids — {len(meta)} samples.\n"
    )
    out.print("[bold]1. build[/bold] the graph: metadata + kinship (first-degree, ≥ 0.177) + declared duplicates")
    graph = from_metadata(meta, name="demo family cohort")
    graph = graph.add_kinship(cohort.kinship, "first").add_duplicates(cohort.duplicates)
    _print_graph(graph, "study graph")

    out.print("\n[bold]2. validate[/bold] the declaration")
    report = validate(graph)
    _print_report(report)

    out.print("\n[bold]3. derive[/bold] groups — first by subject alone, then by everything declared")
    naive = derive(graph, "subject")
    strict = derive(graph, "composite", strategy="strict", via=["relatedness", "duplicate"])
    for partition in (naive, strict):
        _print_partition(partition)
        split = pairs_split(graph, partition)
        out.print(
            f"  related subject pairs split across groups: {split['subject_related_to']}; "
            f"duplicate pairs split: {split['sample_duplicate_of']}"
        )
    out.print(
        "\nSubject grouping lets siblings and re-deposited specimens fall on both sides of a split; "
        "composite/strict over relatedness + duplicates keeps each family, with its re-deposits, in one group."
    )
    if output_dir is not None:
        if not output_dir.is_dir():
            raise DepgraphError("io", f"output directory {str(output_dir)!r} does not exist")
        from depgraph.files import atomic_path

        for table_name, frame in (
            ("metadata", meta),
            ("kinship", cohort.kinship),
            ("duplicates", cohort.duplicates),
        ):
            with atomic_path(output_dir / f"{table_name}.csv") as tmp:
                frame.to_csv(tmp, index=False)
        write_graph(graph, output_dir / "graph.json")
        write_spec(SplitSpec.from_partition(strict, graph), output_dir / "spec.json")
        out.print(f"\nwrote metadata.csv, kinship.csv, duplicates.csv, graph.json and spec.json to {output_dir}")


# --------------------------------------------------------------------------- entry point
def main(argv: list[str] | None = None) -> int:
    """Run the CLI and return its exit code (0 ok, 1 findings, 2 bad input)."""
    command = typer.main.get_command(app)
    try:
        result: Any = command.main(args=argv, prog_name="depgraph", standalone_mode=False)
    except DepgraphError as exc:
        print(f"depgraph: {exc.code}: {exc.message}", file=sys.stderr)
        return 2
    except typer.Exit as exc:
        return int(exc.exit_code)
    except typer.Abort:
        print("depgraph: aborted", file=sys.stderr)
        return 130
    except typer.TyperException as exc:  # usage errors: unknown option, missing argument, bad value
        if type(exc).__name__ == "NoArgsIsHelpError":
            print(exc.format_message())  # type: ignore[attr-defined]
            return 0
        message = " ".join(exc.format_message().split())  # type: ignore[attr-defined]
        print(f"depgraph: invalid_argument: {message}", file=sys.stderr)
        return 2
    return result if isinstance(result, int) else 0


def run() -> None:  # pragma: no cover - console-script shim
    sys.exit(main())
