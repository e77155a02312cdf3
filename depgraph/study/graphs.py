"""The pair files of a study — kinship, spatial neighbours, duplicates (declared, or found by auditing features),
explicit relations — added to its graph: the one code path ``depgraph run`` and ``depgraph build`` share; and
``depgraph build``'s work, :func:`build_file`.

Light on purpose: it loads the builders and the input tables' models, nothing of derivation, folds or specs, so
``depgraph build`` starts as quickly as before.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

from depgraph.audit.duplicates import audit_duplicates
from depgraph.common.arguments import refuse_moot
from depgraph.common.display import Progress, quietly
from depgraph.graph.files import write_graph
from depgraph.graph.model import StudyGraph
from depgraph.ingest.builders import add_duplicates, add_kinship, add_relations, add_spatial
from depgraph.ingest.metadata import from_metadata
from depgraph.io.outputs import Outputs
from depgraph.study.inputs import Duplicates, Kinship, Relations, Spatial
from depgraph.vocab import RelationName


def build_file(
    metadata: str | os.PathLike[str], output: str | os.PathLike[str], *, plan: Outputs, form: str,
    columns: Mapping[str, str] | None = None, name: str | None = None, outcome_scope: str | None = None,
    allow_multi_subject_samples: bool | None = None, encoding: str | None = None, sheet: str | int | None = None,
    delimiter: str | None = None, kinship: Sequence[Kinship] = (), spatial: Sequence[Spatial] = (),
    duplicates: Sequence[Duplicates] = (), progress: Progress = quietly,
) -> StudyGraph:  # fmt: skip
    """``depgraph build``: the graph of the ``metadata`` table (:func:`~depgraph.ingest.metadata.from_metadata`'s
    options; named for the table unless ``name``) with the declared pair files' relations, written to ``output`` in
    ``form``, declared in ``plan`` (checked before any work); returns the graph.

    ``outcome_scope`` (default ``"sample"``) and ``allow_multi_subject_samples`` (default False) are refused when
    stated for a table without outcomes or subjects: they would say something of the study that it does not hold."""
    metadata, output = Path(metadata), Path(output)
    with progress(f"reading {metadata.name} and building the graph"):
        graph = from_metadata(
            metadata, columns, name=name or metadata.stem, outcome_scope=outcome_scope or "sample",  # type: ignore[arg-type]
            allow_multi_subject_samples=bool(allow_multi_subject_samples), encoding=encoding, sheet=sheet,
            delimiter=delimiter,
        )  # fmt: skip
    if not graph.has_relation(RelationName.SAMPLE_HAS_OUTCOME) and not graph.has_relation(
        RelationName.SUBJECT_HAS_OUTCOME
    ):
        refuse_moot("when the metadata declares no outcome (no outcome_id values)", outcome_scope=outcome_scope)
    if not graph.has_relation(RelationName.SAMPLE_BELONGS_TO_SUBJECT):
        refuse_moot(
            "when the metadata declares no subject (no subject_id values)",
            allow_multi_subject_samples=allow_multi_subject_samples,
        )
    with progress("reading the pair files"):
        graph = add_pair_files(graph, list(kinship), list(spatial), list(duplicates), [], locate=Path)
    with progress(f"writing {output.name}"), plan:
        write_graph(graph, output, format=form)
    return graph


def add_pair_files(
    graph: StudyGraph,
    kinship: list[Kinship],
    spatial: list[Spatial],
    duplicates: list[Duplicates],
    relations: list[Relations],
    locate: Callable[[str], Path],
) -> StudyGraph:
    """``graph`` with the relations of the declared pair files, in ``build``'s order."""
    for k in kinship:
        graph = add_kinship(
            graph, locate(k.path), k.threshold, unknown=k.unknown, format=None if k.format == "auto" else k.format,
            id_template=k.id_template, encoding=k.encoding, absent=k.absent,
        )  # fmt: skip
    for s in spatial:
        graph = add_spatial(graph, locate(s.path), s.radius, p=s.p, unknown=s.unknown, encoding=s.encoding)
    for d in duplicates:
        if d.path is not None:
            options: dict[str, Any] = {"similarity_column": d.similarity_column}
            graph = add_duplicates(graph, locate(d.path), unknown=d.unknown, encoding=d.encoding, **options)
        else:  # features to audit: the pairs found are declared as the audit command declares them
            pairs = audit_duplicates(
                locate(d.features), threshold=d.threshold, method=d.method, id_column=d.id_column, encoding=d.encoding
            )  # type: ignore[arg-type]
            if len(pairs):  # an audit that finds no duplicate declares none, as audit --write-back does
                graph = add_duplicates(graph, pairs, similarity_column="similarity", provenance="audit",
                                       unknown=d.unknown)  # fmt: skip
    for r in relations:
        graph = add_relations(
            graph, locate(r.path), r.relation, source_column=r.source_column, target_column=r.target_column,
            unknown=r.unknown, encoding=r.encoding,
        )  # fmt: skip
    return graph
