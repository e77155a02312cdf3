"""``depgraph run``: a study file, run in one process (:meth:`depgraph.study.model.Study.run`), or re-checked
against the spec on disk (``--check``: :meth:`~depgraph.study.model.Study.check`)."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from pathlib import Path
from typing import Annotated

import numpy as np
import pandas as pd
import typer

from depgraph.cli.commandline import SEVERITY_STYLE, Command, out, print_report, styled
from depgraph.cli.main import for_the_command_line
from depgraph.cli.specs import signed_note
from depgraph.errors import DepgraphError
from depgraph.spec.model import SplitSpec
from depgraph.study.model import Study
from depgraph.study.run import StudyRun

app = typer.Typer(add_completion=False, pretty_exceptions_enable=False, rich_markup_mode=None)


@app.command("run", cls=Command)
def run_command(
    study_file: Annotated[
        Path, typer.Argument(metavar="STUDY.toml", help="A study file (depgraph init writes one).", readable=False)
    ],
    check: Annotated[
        bool,
        typer.Option(
            "--check", help="Run it again without writing and compare with the spec on disk: exit 1 if they differ."
        ),
    ] = False,
) -> None:
    """Run a study file in one process: build, validate, derive, assign folds, write. Each input is read once;
    validation errors stop the run; the spec records the study file and every input's SHA-256, and is written with
    the report and the graph the study file asks for. A study file saying engine = "spark" is derived, folded and
    written on Apache Spark ([spark] sets the master and settings), into the spec one machine writes. With --check,
    nothing is written: exit 0 when the spec on disk is what the study file makes now, else 1, naming the first
    difference (a changed key, an input whose bytes changed, a sample's group or fold)."""
    with study_words():
        _run(study_file, check)


@contextlib.contextmanager
def study_words() -> Iterator[None]:
    """An error raised while a study file is read or run names the file's keys, not the step-by-step commands'
    options (:data:`~depgraph.cli.main.STUDY_SPELLINGS`)."""
    try:
        yield
    except DepgraphError as exc:
        exc.details.setdefault("words", "study")
        raise


def _run(study_file: Path, check: bool) -> None:
    study = Study.read(study_file)
    if check:
        result = study.check()
        if result.identical:
            out.print(
                styled(("identical", "green"), f": {result.spec_path} is what {study_file} makes now "
                       f"(digest {result.now.digest})")
            )  # fmt: skip
            return
        out.print(styled(("differs", "red"), f": {result.spec_path}: {result.difference}"))
        raise typer.Exit(1)
    print_run(study_file, study, study.run_all())


def print_run(study_file: Path, study: Study, done: StudyRun) -> None:
    """What a run made, in a few lines: validation, the groups, the folds with their sizes and class balance,
    the warnings, and what was written."""
    spec = done.spec
    print_report(done.report, words="study")
    p = done.partition
    how = f"{p.mode}/{p.strategy}" if p.strategy else p.mode
    shape = p.shape
    out.print(
        styled(
            "groups ", (how, "bold"), f": {p.n_samples:,} samples in {shape.n_groups:,} groups; largest "
            f"{shape.largest_group} ({shape.largest_group_size:,} samples), {shape.singletons:,} singletons",
        )
    )  # fmt: skip
    for w in p.warnings:
        said = for_the_command_line(w.message, "study")
        out.print(styled("  ", (w.severity, SEVERITY_STYLE[w.severity]), f" {w.code}: {said}"))
    if spec.folds is not None:
        print_fold_table(spec)
    outputs = study.file.outputs
    written = [outputs.spec, *(x for x in (outputs.graph, outputs.report) if x is not None)]
    inputs = len(study.inputs)
    out.print(
        f"wrote {', '.join(written)} (beside {study_file.name}; the spec records it and {inputs} input file(s), "
        f"digest {spec.digest}){signed_note(spec)}"
    )


def print_fold_table(spec: SplitSpec) -> None:
    """One line per split: its test samples and groups, and the test share of each class (the stratify column's,
    else the spec's ``stratum``), most common first."""
    plan = spec.folds
    assert plan is not None
    column = plan.parameters.get("stratify") or ("stratum" if "stratum" in spec.samples.columns else None)
    seed = f", seed {plan.seed}" if plan.seed is not None else ""
    out.print(f"folds {plan.scheme}{seed}: {len(plan.splits)} split(s)")
    codes = names = order = None
    if column is not None and column in spec.samples.columns:
        codes, names = pd.factorize(spec.samples[column].astype("string").fillna("(missing)"), sort=True)
        order = np.argsort(-np.bincount(codes, minlength=len(names)), kind="stable")[:3]
    groups = spec.grouped().codes  # counted once when the folds were checked
    for split in plan.splits:
        line = f"  {split.repeat}/{split.fold}: test {split.n_test:,} samples"
        line += f" in {len(np.unique(groups[split.test])):,} groups"
        line += f", train {split.n_train:,}" + (f", excluded {split.n_excluded:,}" if split.n_excluded else "")
        if codes is not None and names is not None and order is not None and split.n_test:
            counts = np.bincount(codes[split.test], minlength=len(names))
            shares = ", ".join(f"{names[i]} {counts[i] / split.n_test:.0%}" for i in order)
            line += f"; {column}: {shares}"
        out.print(line)
