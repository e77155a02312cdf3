"""The pair files of a study — kinship, spatial neighbours, duplicates (declared, or found by auditing features),
explicit relations — added to its graph: the one code path ``depgraph run`` and ``depgraph build`` share.

Light on purpose: it loads the builders and the input tables' models, nothing of derivation, folds or specs, so
``depgraph build`` starts as quickly as before.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from depgraph.audit.duplicates import audit_duplicates
from depgraph.graph.model import StudyGraph
from depgraph.ingest.builders import add_duplicates, add_kinship, add_relations, add_spatial
from depgraph.study.inputs import Duplicates, Kinship, Relations, Spatial


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
