"""``depgraph evaluate``: metrics per split and held-out block at a threshold fixed on training rows."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from depgraph.adapters.frames import TABLE_FORMATS
from depgraph.cli.commandline import (
    EXCEL_SAFE_NOTE,
    TABLE_KINDS,
    WIDE,
    Command,
    check_suffix,
    encoding_option,
    excel_safe_option,
    out,
    outputs_plan,
    refuse_excel_safe,
    stage,
)
from depgraph.errors import DepgraphError
from depgraph.study.reviews import evaluate_file

app = typer.Typer(add_completion=False, pretty_exceptions_enable=False, rich_markup_mode=None)


@app.command("evaluate", cls=Command, short_help="AUC and metrics at a training threshold, per split and block.")
def evaluate_command(
    document: Annotated[Path, typer.Argument(metavar="SPEC.json", help="A split spec carrying folds.", readable=False)],
    predictions: Annotated[
        Path,
        typer.Argument(
            metavar="PREDICTIONS",
            help="CSV/TSV/Parquet: sample_id, split (or repeat and fold), role (train/test), score and label.",
            readable=False,
        ),
    ],
    threshold: Annotated[
        str,
        typer.Option(
            metavar="youden|X|sensitivity=X|specificity=X",
            help="How each split's threshold is chosen from its training predictions.",
        ),
    ] = "youden",
    by: Annotated[
        str | None,
        typer.Option(
            metavar="COLUMN", help="A spec column (site, study, batch...): also evaluate each held-out block."
        ),
    ] = None,
    label: Annotated[
        str | None, typer.Option(metavar="COL", help="The label column (default: label, else the spec's outcome).")
    ] = None,
    positive: Annotated[
        str | None, typer.Option(metavar="CLASS", help="The positive class (default: 1 of 0/1, true of false/true).")
    ] = None,
    boot: Annotated[int, typer.Option("--boot", metavar="N", help="Bootstrap resamples of groups (0: none).")] = 1000,
    seed: Annotated[int, typer.Option(metavar="N", help="Seed of the bootstrap.")] = 0,
    confidence: Annotated[float, typer.Option(metavar="LEVEL", help="Interval confidence level.")] = 0.95,
    output: Annotated[
        Path | None,
        typer.Option(
            "--output",
            "-o",
            help="Also write the full table, with NAME.flags.csv and NAME.heterogeneity.csv beside it; .tsv, "
            ".parquet alike; or .json: everything.",
            readable=False,
        ),
    ] = None,
    encoding: Annotated[str | None, encoding_option("the predictions table")] = None,
    report_file: Annotated[
        Path | None,
        typer.Option(
            "--report",
            metavar="FILE.html",
            help="Also write the spec's HTML report with the evaluation and the test scores per block.",
            readable=False,
        ),
    ] = None,
    excel_safe: Annotated[bool, excel_safe_option()] = False,
    wide: Annotated[bool, WIDE] = False,
) -> None:
    """Evaluate predictions made on the spec's splits: per split (and per held-out block with --by), AUC and, at a
    threshold chosen on that split's training predictions only, sensitivity, specificity, balanced accuracy, PPV and
    NPV, with intervals from a bootstrap over the spec's groups; with probabilities, the Brier score and the
    calibration intercept and slope; with --by, whether the blocks agree (Cochran's Q, I²). Every flag (score shift,
    calibration, heterogeneity) is listed with its rule (see docs/evaluation.md).

    \f
    One piece: its signature is the command's options, as typer reads them; the body parses them and calls the
    library."""
    kind = _table_kind(output)
    refuse_excel_safe(excel_safe, kind, f"-o {str(output)!r}" if output else None)
    plan = outputs_plan(
        output, writes=None if kind is None else (TABLE_KINDS.get(kind, "JSON"),), inputs=(document, predictions),
        binary=kind == "parquet",
    )  # fmt: skip
    if report_file is not None:
        plan.file(report_file)
        check_suffix(report_file, ("HTML",))
    report = evaluate_file(
        document, predictions, plan=plan, output=output, table_format=kind or "csv", report_file=report_file,
        excel_safe=excel_safe, progress=stage, threshold=threshold, by=by, label=label, positive=positive,
        n_boot=boot, seed=seed, confidence=confidence, encoding=encoding,
    )  # fmt: skip
    with out.widened(wide):
        for kind, text in report.parts():
            out.print_table(text) if kind == "table" else out.print(text)
    for written in (output, report_file):
        if written is not None:
            beside = f" (and {written.stem}.flags{written.suffix}, {written.stem}.heterogeneity{written.suffix})"
            companions = written is output and kind not in ("json", None) and str(output) != "-"
            out.print(f"wrote {written}" + (beside if companions else "")
                      + (EXCEL_SAFE_NOTE if excel_safe and written is output else ""))  # fmt: skip


def _table_kind(output: Path | None) -> str | None:
    """How ``-o`` is written: by its suffix (CSV on standard output); ``None`` without ``-o``."""
    if output is None:
        return None
    kind = {".json": "json", **TABLE_FORMATS}.get(output.suffix.lower())
    if kind is None and str(output) != "-":
        raise DepgraphError(
            "invalid_argument", f"-o {str(output)!r}: the evaluation is written as .csv, .tsv, .parquet or .json"
        )
    return kind or "csv"
