"""The reviewing commands' work, one function each: ``depgraph validate`` (:func:`validate_file`), ``check``
(:func:`check_file`), ``diff`` (:func:`diff_files`), ``why`` (:func:`why_files`), ``explain``
(:func:`explain_files`), ``neighbors`` and ``query`` (:func:`query_file`),
``compare`` (:func:`compare_file`), ``audit`` (:func:`audit_file`),
``evaluate`` (:func:`evaluate_file`) and ``report`` (:func:`report_file`). Each reads its files with every check
of a reader, runs one library stage and, where it writes, writes into the ``plan`` the caller declared (checked
before any work; nothing is put in place unless every file is written). A command parses its options, calls one of
these and prints what it returns.

The stages are loaded by the function that runs them, not with the module: validating a graph never loads the spec's
modules, and nothing but a report loads matplotlib (tests/test_startup.py).
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING, Any, NamedTuple

from depgraph.common.arguments import refuse_moot, refuse_options
from depgraph.common.display import Progress, quietly
from depgraph.errors import DepgraphError, describe_ids
from depgraph.graph.files import peeked_graph, read_graph, write_graph
from depgraph.io.columnar import document_kind, peek_document
from depgraph.io.outputs import Outputs, check_suffix

if TYPE_CHECKING:
    import pandas as pd

    from depgraph.audit.evaluation import EvaluationReport
    from depgraph.audit.exposure import ExposureReport, StraddleReport
    from depgraph.explanation.groups import GroupMakeup
    from depgraph.explanation.paths import Chains
    from depgraph.graph.model import StudyGraph
    from depgraph.spec.diff import SpecDiff
    from depgraph.spec.model import SplitSpec
    from depgraph.validation.rules import ValidationReport

PathLike = str | os.PathLike[str]


class Validated(NamedTuple):
    """What :func:`validate_file` found: a study graph's ``report`` (its findings; ``spec`` None), or a split spec
    that passed every check (``report`` None) with the ``digest`` verified in its file."""

    report: ValidationReport | None
    spec: SplitSpec | None
    digest: str | None


def validate_file(
    document: PathLike, *, n_splits: int | None = None, verify_key: bytes | None = None, engine: str = "single",
    settings: dict[str, Any] | None = None, progress: Progress = quietly,
) -> Validated:  # fmt: skip
    """``depgraph validate``: a study graph's findings (with ``n_splits``, also the modes leaving fewer groups than
    that many folds), or a split spec read with every check of a reader (schema, every column element, digest, what
    it says of itself) and, with ``verify_key``, its signature. A graph is read and validated on ``engine`` (Spark
    reads the columnar form and counts in Spark: :mod:`depgraph.spark.validation`); a spec is checked here."""
    from depgraph.engines import running
    from depgraph.validation.rules import validate

    found = peek_document(document)  # a JSON file is parsed once; a columnar one's manifest says what it is
    if document_kind(document, found) == "split-spec":
        refuse_moot("to a split spec (it flags the modes of a graph)", n_splits=n_splits)
        if engine != "single":
            raise DepgraphError("invalid_argument", f"validate checks a split spec on this machine, not on {engine}")
        from depgraph.spec.files import peeked_spec  # only for a spec: a graph's validation never loads it

        return Validated(None, peeked_spec(document, found, verify_key=verify_key), found.document.get("digest"))
    refuse_moot("to a study graph (it verifies a split spec's signature)", verify_key=verify_key)
    if engine == "single":
        with progress("validating"):
            return Validated(validate(peeked_graph(document, found), n_splits=n_splits), None, None)
    with running(engine, settings) as run:
        with run.step(f"read {Path(document).name}"), progress(f"reading {Path(document).name} in Spark"):
            graph = read_graph(document, engine=engine, **run.options)
        with run.step("validate the graph"), progress("validating in Spark"):
            return Validated(validate(graph, n_splits=n_splits), None, None)


class Explained(NamedTuple):
    """What :func:`why_files` found: the ``chains`` joining two nodes in the graph (None when only a spec was
    given), with a spec each sample's group (``groups``) and the spec's ``mode``, and ``disagreement``: what the
    spec decided otherwise than the chains say (its strategy or overrides), None when they agree."""

    chains: Chains | None
    groups: tuple[str, str] | None
    mode: str | None
    disagreement: str | None = None


def why_files(
    document: PathLike, a: str, b: str, *, graph_file: PathLike | None = None, mode: str | None = None,
    all_paths: int = 1, node_type: str | None = None,
) -> Explained:  # fmt: skip
    """``depgraph why``: the chains of declared dependencies joining ``a`` and ``b`` in a study graph. ``document``
    is the graph, or a split spec: then each sample's group in it, and with ``graph_file`` the chains over the
    relations the spec's grouping followed, in the graph its samples induce."""
    from depgraph.explanation.paths import check_request, why
    from depgraph.vocab import NodeType

    check_request(a, b, all_paths)
    found = peek_document(document)
    if document_kind(document, found) != "split-spec":
        refuse_moot("to a study graph (the graph is the document)", graph_file=graph_file)
        return Explained(why(peeked_graph(document, found), a, b, mode=mode, all_paths=all_paths,
                             node_type=node_type), None, None)  # fmt: skip
    from depgraph.spec.files import peeked_spec

    spec = peeked_spec(document, found)
    refuse_moot("with a split spec (it follows the relations its grouping followed)", mode=mode)
    refuse_moot("with a split spec (its ids are samples)", node_type=node_type)
    first, second = (str(g) for g in spec.group_ids[spec.positions([a, b], "why")])
    if graph_file is None:
        return Explained(None, (first, second), spec.constraint.mode)
    chains = why(_graph_of(spec, graph_file), a, b, relations=spec.constraint.relations, all_paths=all_paths,
                 node_type=NodeType.SAMPLE, samples=spec.sample_ids.tolist())  # fmt: skip
    rule = f"its strategy ({spec.constraint.strategy or 'direct'}) or overrides"
    disagreement = None
    if chains.connected and first != second:
        disagreement = f"the spec puts them in different groups although a chain joins them: {rule} decided so"
    elif not chains.connected and first == second:
        disagreement = f"the spec keeps them together without a chain of these relations: {rule} decided so"
    return Explained(chains, (first, second), spec.constraint.mode, disagreement)


def _graph_of(spec: SplitSpec, graph_file: PathLike) -> StudyGraph:
    """The graph at ``graph_file``, which must hold every sample of ``spec`` (else it is not the spec's graph)."""
    from depgraph.vocab import NodeType

    graph = read_graph(graph_file)
    missing = spec.sample_ids[graph.locate(NodeType.SAMPLE, spec.sample_ids) < 0]
    if len(missing):
        named = describe_ids(missing.tolist())
        raise DepgraphError("reference", f"the spec names {len(missing)} sample(s) the graph {Path(graph_file).name} "
                            f"lacks: {named}; give the graph the spec was derived from")  # fmt: skip
    return graph


class Described(NamedTuple):
    """What :func:`explain_files` found: the ``makeup`` of the group in the graph (None when only a spec was given),
    with a spec the group's id and its samples there (``group``, ``members``) and the spec's ``mode``, and
    ``disagreement``: how the spec's group differs from the component, None when they are the same samples."""

    makeup: GroupMakeup | None
    group: str | None
    members: list[str] | None
    mode: str | None
    disagreement: str | None = None


def explain_files(
    document: PathLike, item: str, *, graph_file: PathLike | None = None, mode: str | None = None
) -> Described:
    """``depgraph explain``: the group of a sample in a study graph (``document``), its make-up and bridges. Given a
    split spec, ``item`` is one of its groups or samples: the group's samples there, and with ``graph_file`` its
    make-up over the relations the spec's grouping followed, in the graph the spec's samples induce."""
    from depgraph.explanation.groups import explain

    found = peek_document(document)
    if document_kind(document, found) != "split-spec":
        refuse_moot("to a study graph (the graph is the document)", graph_file=graph_file)
        return Described(explain(peeked_graph(document, found), item, mode=mode), None, None, None)
    from depgraph.spec.files import peeked_spec

    spec = peeked_spec(document, found)
    refuse_moot("with a split spec (it follows the relations its grouping followed)", mode=mode)
    groups, samples = spec.group_ids, spec.sample_ids
    is_sample = item in set(samples.tolist())
    if item in set(groups.tolist()):
        if is_sample and groups[spec.positions([item])[0]] != item:
            raise DepgraphError("ambiguity", f"explain: {item!r} is a group of the spec and a sample of another group")
        group = item
    else:
        group = str(groups[spec.positions([item], "explain: a group or sample")][0])  # refused by name when neither
    members = samples[groups == group].tolist()
    if graph_file is None:
        return Described(None, group, members, spec.constraint.mode)
    makeup = explain(_graph_of(spec, graph_file), item if is_sample else members[0],
                     relations=spec.constraint.relations, samples=samples.tolist())  # fmt: skip
    disagreement = None
    if set(makeup.samples.tolist()) != set(members):
        disagreement = (f"the spec's group holds {len(members)} sample(s), the component over its relations "
                        f"{makeup.n_samples}: its strategy ({spec.constraint.strategy or 'direct'}) or overrides "
                        "decided so")  # fmt: skip
    return Described(makeup, group, members, spec.constraint.mode, disagreement)


def compare_file(
    graph_file: PathLike, modes: list[str], *, via: list[str] | None = None, output: PathLike | None = None
) -> pd.DataFrame:
    """``depgraph compare``: the groupings ``modes`` of the graph read from ``graph_file`` side by side
    (:func:`~depgraph.explanation.compare.compare`), written to ``output`` when given (CSV, TSV or Parquet)."""
    from depgraph.explanation.compare import compare

    table = compare(read_graph(graph_file), modes, via=via)
    if output is not None:
        from depgraph.adapters.frames import write_table

        write_table(table, output)
    return table


def query_file(
    graph_file: PathLike, *, node_types: list[str] | None = None, relations: list[str] | None = None,
    neighbors_of: list[str] | None = None, neighbor_types: list[str] | None = None, direction: str = "all",
    seed_type: str | None = None, ids: list[str] | None = None, output: PathLike | None = None,
) -> pd.DataFrame:  # fmt: skip
    """``depgraph neighbors`` and ``depgraph query``: a table of the graph read from ``graph_file`` — the neighbours
    of ``neighbors_of``, or its nodes of ``node_types``, or its edges of ``relations`` — written to ``output`` when
    given (CSV, TSV or Parquet by its suffix)."""
    table = _graph_table(graph_file, node_types, relations, neighbors_of, neighbor_types, direction, seed_type, ids)
    if output is not None:
        from depgraph.adapters.frames import write_table

        write_table(table, output)
    return table


def _graph_table(
    graph_file: PathLike, node_types: list[str] | None, relations: list[str] | None, neighbors_of: list[str] | None,
    neighbor_types: list[str] | None, direction: str, seed_type: str | None, ids: list[str] | None,
) -> pd.DataFrame:  # fmt: skip
    from depgraph.explanation.queries import edges_of, neighbors, nodes_of

    if neighbors_of is not None:
        refuse_moot("to neighbors (they are the ids' own)", node_types=node_types, ids=ids)
        return neighbors(read_graph(graph_file), neighbors_of, relations=relations, node_types=neighbor_types,
                         direction=direction, seed_type=seed_type)  # fmt: skip
    if (node_types is None) == (relations is None):
        both = " (not both)" if node_types is not None else ""
        raise DepgraphError("invalid_argument", f"query: give node types (--type) or relations (--relation){both}")
    graph = read_graph(graph_file)
    if node_types is not None:
        return nodes_of(graph, node_types, ids=ids)
    return edges_of(graph, relations or [], ids=ids)


class Checked(NamedTuple):
    """What :func:`check_file` found: the spec groups the split straddles, and with a graph what of each declared
    relation crosses it (``exposure``; None without a graph)."""

    straddling: StraddleReport
    exposure: ExposureReport | None


def check_file(
    spec_file: PathLike, assignment: PathLike, *, id_column: str = "sample_id", split_column: str | None = None,
    graph_file: PathLike | None = None, encoding: str | None = None, engine: str = "single",
    settings: dict[str, Any] | None = None, progress: Progress = quietly,
) -> Checked:  # fmt: skip
    """``depgraph check``: a split made elsewhere (``assignment``: a fold or train/test value per sample) against
    the spec's groups and, with ``graph_file``, against each declared relation — counted on ``engine`` (Spark reads
    the columnar graph and spec; the groups the split straddles are found here, from the spec read on this
    machine)."""
    from depgraph.audit.exposure import exposure, straddling_groups
    from depgraph.engines import running
    from depgraph.spec.files import read_spec

    if engine != "single" and graph_file is None:
        raise DepgraphError("invalid_argument", f"--engine {engine} counts what crosses the split in the graph: "
                            "give the graph (--graph GRAPH.dggraph)")  # fmt: skip
    spec = read_spec(spec_file)
    report = straddling_groups(spec, assignment, id_column, split_column, encoding=encoding)  # names the file
    if graph_file is None:
        return Checked(report, None)
    reading = {"id_column": id_column, "split_column": report.split_column, "encoding": encoding}
    if engine == "single":
        return Checked(report, exposure(read_graph(graph_file), spec, assignment, **reading))
    with running(engine, settings) as run:
        with run.step(f"read {Path(graph_file).name}"), progress(f"reading {Path(graph_file).name} in Spark"):
            graph = read_graph(graph_file, engine=engine, **run.options)
            on_engine = read_spec(spec_file, engine=engine, spark=run.options["spark"])
        with run.step("count what crosses the split"), progress("counting what crosses the split in Spark"):
            return Checked(report, exposure(graph, on_engine, assignment, **reading))


def diff_files(first: PathLike, second: PathLike) -> SpecDiff:
    """``depgraph diff``: which samples changed group (and whether the folds differ) between two specs."""
    from depgraph.spec.diff import compare_specs
    from depgraph.spec.files import read_spec

    return compare_specs(read_spec(first), read_spec(second))


def report_file(
    spec_file: PathLike, output: PathLike, *, plan: Outputs, graph_file: PathLike | None = None,
    plots_dir: PathLike | None = None, compare_modes: list[str] | None = None, progress: Progress = quietly,
) -> None:  # fmt: skip
    """``depgraph report``: the spec's self-contained HTML report (with ``graph_file``: the exposure tables and the
    drawing; with ``compare_modes`` too, those groupings of the graph compared) written to ``output``, and with
    ``plots_dir`` every figure as PNG and SVG there."""
    from depgraph.audit.report import figures, save_figures, write_report
    from depgraph.explanation.compare import compare
    from depgraph.spec.files import read_spec

    if compare_modes and graph_file is None:
        raise DepgraphError("invalid_argument", "--compare derives the groupings from the graph: give --graph too")
    spec = read_spec(spec_file)
    graph = read_graph(graph_file) if graph_file is not None else None
    comparison = compare(graph, compare_modes) if compare_modes else None
    with progress(f"drawing {Path(output).name}"), plan:  # the report and the figures are put in place together
        write_report(spec, output, graph, comparison=comparison)
        if plots_dir is not None:
            save_figures(figures(spec, graph), plots_dir)
        check_suffix(output, ("HTML",))  # after the plan has seen the figures: a report written over one is `io`


def audit_file(
    graph_file: PathLike, features: PathLike, *, plan: Outputs, output: PathLike | None = None,
    write_back: bool = False, form: str = "json", table_format: str = "csv", id_column: str | None = None,
    threshold: float = 0.995, method: str = "auto", encoding: str | None = None, excel_safe: bool = False,
    progress: Progress = quietly,
) -> pd.DataFrame:  # fmt: skip
    """``depgraph audit``: the pairs of the graph's samples whose feature rows (a table with an ``id_column``, or a
    ``.npy`` matrix whose rows are the graph's samples in order) have cosine similarity ≥ ``threshold``. With
    ``write_back``, the graph with those pairs declared as duplicates is written to ``output`` in ``form``;
    otherwise, with ``output``, the pairs as a ``table_format`` table. Returns the pairs."""
    from depgraph.adapters.frames import write_table
    from depgraph.audit.duplicates import audit_duplicates
    from depgraph.ingest.builders import add_duplicates

    features = Path(features)
    npy = features.suffix.lower() == ".npy"
    if npy:
        refuse_moot("to a .npy matrix (its rows are the graph's samples in sample order)", id_column=id_column,
                    encoding=encoding)  # fmt: skip
    id_column = id_column or "sample_id"
    graph = read_graph(graph_file)
    ids = graph.sample_ids if npy else None  # .npy rows follow the graph's samples
    source = features if npy else _feature_table(features, id_column, graph, encoding)
    with progress(f"auditing {features.name}"):
        pairs = audit_duplicates(source, ids, threshold, method=method, id_column=id_column)
    if write_back:
        updated = graph  # an audit that finds no pair declares none
        if len(pairs):
            updated = add_duplicates(graph, pairs, similarity_column="similarity", provenance="audit")
        with plan:
            write_graph(updated, output, format=form)
    elif output is not None:
        with plan:
            write_table(pairs, output, table_format, excel_safe=excel_safe)
    return pairs


def _feature_table(path: Path, id_column: str, graph: StudyGraph, encoding: str | None) -> pd.DataFrame:
    """The feature table at ``path``; ids the graph does not hold are refused: the audit is of the graph's samples,
    and pairs it cannot declare would be written as if they were."""
    from depgraph.io.files import read_table

    table = read_table(path, "features", encoding=encoding)
    if id_column in table.columns:
        ids = table[id_column].dropna().astype(str)
        unknown = ids[~ids.isin(graph.sample_ids)].unique().tolist()
        if unknown:
            raise DepgraphError(
                "reference",
                f"features {str(path)!r} name {len(unknown)} sample(s) not in the graph: {describe_ids(unknown)}",
                ids=unknown,
            )
    return table


def evaluate_file(
    spec_file: PathLike, predictions: PathLike, *, plan: Outputs, output: PathLike | None = None,
    table_format: str = "csv", report_file: PathLike | None = None, excel_safe: bool = False,
    progress: Progress = quietly, **options: Any,
) -> EvaluationReport:  # fmt: skip
    """``depgraph evaluate``: the ``predictions`` made on the spec's splits evaluated
    (:func:`~depgraph.audit.evaluation.evaluate`'s ``options``); with ``output`` the full table written as a
    ``table_format`` table with the flag and heterogeneity tables beside it (``NAME.flags.csv``…; or ``json``: the
    whole evaluation), with ``report_file`` the spec's HTML report carrying
    the evaluation, put in place together. Returns the evaluation."""
    from depgraph.adapters.frames import write_table
    from depgraph.audit.evaluation import companion_tables, evaluate
    from depgraph.audit.report import write_report
    from depgraph.spec.files import read_spec

    refuse_options(evaluate, options)
    if output is not None and table_format != "json" and str(output) != "-":
        for path in companion_tables(output).values():  # checked before any work, as -o was
            plan.file(path, binary=table_format == "parquet")
    spec = read_spec(spec_file)
    with progress(f"evaluating {Path(predictions).name}"):
        report = evaluate(spec, predictions, **options)
    with plan:  # the table and the report are put in place together
        if output is not None and table_format == "json":
            report.write_json(output)
        elif output is not None:
            write_table(report.table, output, table_format, excel_safe=excel_safe)
            if str(output) != "-":
                for name, path in companion_tables(output).items():
                    write_table(getattr(report, name), path, table_format, excel_safe=excel_safe)
        if report_file is not None:
            write_report(spec, report_file, evaluation=report)
    return report
