"""Running a study declaration in one process: every input read once, the graph built, validated (errors stop the
run), derived, folded, and the spec — recording what it was made from — written with the report and the graph when
the declaration asks for them. Nothing the run wrote is read again, but for the spec an engine other than this
process wrote (``engine = "spark"``), read back once by the single-machine reader for the report and the summary.

Each step calls the library function the step-by-step commands call, with the same arguments
(``from_metadata``, ``add_kinship``…, ``validate``, ``derive``, ``SplitSpec.from_partition``, ``pseudonymize``,
``assign_folds``, ``signed``), so ``depgraph run`` and ``build`` → ``derive`` → ``folds`` give the same spec
(tests/test_study.py holds them equal over generated cohorts). The order is the commands' order: a spec is
pseudonymised before its folds are assigned, and signed last.

Everything that can be checked before the work is: the outputs (:class:`~depgraph.io.outputs.Outputs`: a
directory that exists, never an input, never a non-regular file), and the keys and the salt the declaration names
(read from the environment), and the engine, started before any input is read. A failing run writes nothing.
"""

from __future__ import annotations

import contextlib
import os
import tempfile
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any, NamedTuple

from depgraph.audit.composition import fold_composition
from depgraph.audit.report import write_report
from depgraph.derivation.groups import derive, selected_samples
from depgraph.derivation.partition import Partition
from depgraph.engines import engine_of, graph_on, running
from depgraph.errors import DepgraphError
from depgraph.folds.parameters import PARAMETERS
from depgraph.folds.schemes import SCHEMES, assign_folds
from depgraph.graph.assembly import combine
from depgraph.graph.files import write_graph
from depgraph.graph.model import StudyGraph
from depgraph.ingest.metadata import from_metadata
from depgraph.ingest.samplelists import read_sample_list, refuse_headerless
from depgraph.io.columnar import plan_document
from depgraph.io.outputs import Outputs, check_suffix
from depgraph.spec.files import read_spec, write_spec
from depgraph.spec.keys import key_from_env
from depgraph.spec.model import SplitSpec
from depgraph.spec.privacy import derived_spec
from depgraph.study.files import Declaration
from depgraph.study.graphs import add_pair_files
from depgraph.study.provenance import hash_inputs, provenance
from depgraph.study.sections import Folds, study_key
from depgraph.validation.rules import ValidationReport, validate


class StudyRun(NamedTuple):
    """What a run made: the graph, its validation report, the partition and the spec (as written)."""

    graph: StudyGraph
    report: ValidationReport
    partition: Partition
    spec: SplitSpec


class Secrets(NamedTuple):
    """The keys a declaration names, read from the environment before any work (None where it names none)."""

    sign: bytes | None
    pseudonym: bytes | None
    salt: str | None


def run_declaration(declaration: Declaration, *, write: bool = True) -> StudyRun:
    """Run ``declaration``: build, validate, derive, fold, record, sign, and (``write``) write its outputs. The graph
    is built and validated here; the stages after it run on the declared ``engine`` (:mod:`depgraph.engines`),
    started before any input is read, so an engine that cannot start is named before the work."""
    file = declaration.file
    plan = outputs_plan(declaration) if write else None
    secrets = secrets_of(declaration)
    with running(file.engine, None if file.spark is None else file.spark.settings()) as run:
        hashing = hash_inputs(declaration.inputs)
        with said_of(declaration):
            graph = build_graph(declaration)
        report = validate(graph, n_splits=_n_splits(file.folds))
        refuse_invalid(report, declaration.source)
        with said_of(declaration, "[grouping]"), run.step(f"derive {file.grouping.mode} groups"):
            scratch = declaration.path(file.outputs.spec).parent  # where an engine's workers can read (Spark's)
            partition = derive_groups(graph, graph_on(graph, run.engine, scratch=scratch, **run.options), declaration)
        record = provenance(declaration, hashing.result())  # hashed by now: read while the graph was built
        with said_of(declaration), run.step("make the spec"):
            spec = derived_spec(partition, graph, file.outputs.attributes, secrets.pseudonym, record)
        if file.folds is not None:
            with said_of(declaration, "[folds]"), run.step(f"assign {file.folds.scheme} folds"):
                spec = assign_folds(spec, file.folds.scheme, **fold_parameters(file.folds, declaration, secrets.salt))
                fold_composition(spec)  # the factors the folds track, warned about as depgraph folds does
        with run.step(f"write {file.outputs.spec}"):
            if plan is not None:
                return StudyRun(graph, report, partition, write_outputs(plan, declaration, graph, spec, secrets.sign))
            return StudyRun(graph, report, partition, unwritten(spec, declaration, secrets.sign))


def unwritten(spec: Any, declaration: Declaration, sign: bytes | None) -> SplitSpec:
    """The spec of a run that writes nothing (``run --check``), signed when the declaration signs. An engine's spec
    (:class:`~depgraph.spark.spec.SparkSpec`) is whole only once its engine has written it: written aside, beside
    the declared spec, read back (every check of a reader) and removed."""
    if engine_of(spec) is None:
        return spec if sign is None else spec.signed(sign)
    folder = declaration.path(declaration.file.outputs.spec).parent
    try:
        aside = tempfile.TemporaryDirectory(prefix=".depgraph-check-", dir=folder)
    except OSError as exc:
        raise DepgraphError(
            "io", f"{declaration.source}: [outputs] spec: the folder {str(folder)!r} cannot hold the spec the "
            f"engine writes to be checked: {exc.strerror or type(exc).__name__}",
        ) from None  # fmt: skip
    with aside:
        path = Path(aside.name) / "spec.dgspec"
        write_spec(spec, path, sign_key=sign)
        return read_spec(path, verify_key=sign)


# --------------------------------------------------------------------------- before the work
def outputs_plan(declaration: Declaration) -> Outputs:
    """Every output the declaration names, checked now (none may be an input), a problem named with its key."""
    outputs = declaration.file.outputs
    plan = Outputs([declaration.origin, *(path for _, _, path in declaration.inputs)])  # the study file is never one
    for key, written in (("spec", outputs.spec), ("graph", outputs.graph), ("report", outputs.report)):
        if written is None:
            continue
        path = declaration.path(written)
        try:
            if key == "report":
                plan.file(path)
                check_suffix(path, ("HTML",))
            else:
                plan_document(plan, path, "split-spec" if key == "spec" else "study-graph",
                              outputs.format if key == "spec" else None)  # fmt: skip
        except DepgraphError as exc:
            said = f"{declaration.source}: [outputs] {key}: {exc.message}"
            raise DepgraphError(exc.code, said, **exc.details) from None
    return plan


def secrets_of(declaration: Declaration) -> Secrets:
    """The signing key, the pseudonymisation key and the hash folds' salt, from the variables the declaration names;
    an unset, empty or weak key is refused naming the key of the study file."""
    outputs, folds = declaration.file.outputs, declaration.file.folds
    sign = None if outputs.sign_key_env is None else _key(outputs.sign_key_env, "signing", declaration)
    pseudonym = _key(outputs.key_env, "pseudonymisation", declaration) if outputs.pseudonymize_ids else None
    salt = None
    if folds is not None and folds.salt_env is not None:
        salt = os.environ.get(folds.salt_env)
        if not salt:
            raise DepgraphError(
                "invalid_argument",
                f"{declaration.source}: [folds] salt_env: the environment variable {folds.salt_env} holding the salt "
                "is unset or empty",
            )
    return Secrets(sign, pseudonym, salt)


def _key(variable: str, purpose: str, declaration: Declaration) -> bytes:
    try:
        return key_from_env(variable, purpose=purpose)
    except DepgraphError as exc:
        raise DepgraphError(exc.code, f"{declaration.source}: [outputs]: {exc.message}") from None


def _n_splits(folds: Folds | None) -> int | None:
    """The number of folds validation checks every mode against: the declared one, or the scheme's default."""
    if folds is None or "n_splits" not in SCHEMES[folds.scheme].parameter_names():
        return None
    return folds.n_splits or SCHEMES[folds.scheme].__dataclass_fields__["n_splits"].default


# --------------------------------------------------------------------------- the work
def build_graph(declaration: Declaration) -> StudyGraph:
    """The study graph: each metadata table (several are combined), then kinship, spatial neighbours, duplicates
    and explicit relations, in the order the step-by-step ``build`` adds them."""
    file, locate = declaration.file, declaration.path
    name = file.name or (declaration.study_file.name.rsplit(".", 1)[0] if declaration.study_file else None)
    graphs = []
    for table in file.metadata:
        with said_of(declaration, "[metadata.columns]", when=lambda exc: "columns" in exc.details):
            graphs.append(from_metadata(
                locate(table.path), table.columns, name=name, outcome_scope=table.outcome_scope,
                allow_multi_subject_samples=table.allow_multi_subject_samples, encoding=table.encoding,
                sheet=table.sheet, delimiter=table.delimiter, mapping_complete=True,
            ))  # fmt: skip
    graph = graphs[0] if len(graphs) == 1 else combine(*graphs, name=name)
    return add_pair_files(graph, file.kinship, file.spatial, file.duplicates, file.relations, locate)


@contextlib.contextmanager
def said_of(
    declaration: Declaration, where: str = "", when: Callable[[DepgraphError], bool] | None = None
) -> Iterator[None]:
    """An error raised in the block begins with the study file and ``where`` in it (the table a stage reads), so a
    message from a library function names what to change in the file (``when``: only errors it accepts)."""
    try:
        yield
    except DepgraphError as exc:
        if exc.message.startswith(declaration.source) or (when is not None and not when(exc)):
            raise
        prefix = f"{declaration.source}: {where}: " if where else f"{declaration.source}: "
        raise DepgraphError(exc.code, prefix + exc.message, **exc.details) from None


def refuse_invalid(report: ValidationReport, source: str) -> None:
    """``validation`` naming every error finding, when the declaration has any: nothing is derived from it."""
    errors = [issue for issue in report.issues if issue.severity == "error"]
    if errors:
        said = "; ".join(f"{e.code} ({e.message})" for e in errors[:5])
        more = f"; and {len(errors) - 5} more" if len(errors) > 5 else ""
        raise DepgraphError(
            "validation",
            f"{source}: the declaration has {len(errors)} validation error(s), so nothing was derived: {said}{more}",
            codes=[e.code for e in errors],
        )


def derive_groups(graph: StudyGraph, on_engine: Any, declaration: Declaration) -> Partition:
    """One group per sample, as ``[grouping]`` says (for the samples of its ``samples`` list, when it has one),
    derived on ``on_engine`` (``graph`` itself, or the engine's copy of it); the list is checked against ``graph``."""
    grouping = declaration.file.grouping
    subset = None
    if grouping.samples is not None:
        path = declaration.path(grouping.samples)
        subset, header = read_sample_list(path)
        refuse_headerless(graph, path, header)
        selected_samples(graph, subset, what=f"samples file {grouping.samples!r}")
    return derive(
        on_engine, grouping.mode, strategy=grouping.strategy, via=grouping.via or None,
        priority=grouping.priority or None, samples=subset, min_groups=grouping.min_groups,
        allow_unlinked=grouping.allow_unlinked, allow_single_group=grouping.allow_single_group,
    )  # fmt: skip


def fold_parameters(folds: Folds, declaration: Declaration, salt: str | None) -> dict[str, Any]:
    """The scheme's parameters as :func:`~depgraph.folds.schemes.assign_folds` takes them: lists as tuples, the
    salt from the environment, a prior spec read (every check of a reader)."""
    out: dict[str, Any] = {}
    for parameter in PARAMETERS:
        value = getattr(folds, study_key(parameter))
        if value is None:
            continue
        if parameter.reads in ("names", "numbers"):
            value = tuple(value)
        elif parameter.reads == "environment":
            value = salt
        elif parameter.reads == "spec":
            with said_of(declaration, f"[folds] prior {value!r}"):
                value = read_spec(declaration.path(value))
        out[parameter.name] = value
    return out


def write_outputs(
    plan: Outputs, declaration: Declaration, graph: StudyGraph, spec: Any, sign: bytes | None
) -> SplitSpec:
    """The spec (signed when the declaration signs), and the graph and the report when declared, committed
    together; the spec as written. An engine's spec is written by its engine, then read back from where it waits
    for the commit (every check of a reader) for the report and the run's summary."""
    outputs = declaration.file.outputs
    path = declaration.path(outputs.spec)
    with plan:
        if engine_of(spec) is None:
            spec = spec if sign is None else spec.signed(sign)
            write_spec(spec, path, format=outputs.format)
        else:
            write_spec(spec, path, sign_key=sign)
            spec = read_spec(plan.staged(path), verify_key=sign)
        if outputs.graph is not None:
            write_graph(graph, declaration.path(outputs.graph))
        if outputs.report is not None:  # a pseudonymised spec names no sample of the graph: its report goes without
            drawn = None if spec.pseudonymization is not None else graph
            write_report(spec, declaration.path(outputs.report), drawn, title=graph.name)
    return spec
