"""Adding edges from a table to a graph: ``add_kinship``, ``add_spatial``, ``add_duplicates``, ``add_relations``.

Each takes the graph first, then its input, then options, and returns a new graph (the given one is unchanged):
the edge piece comes from :mod:`depgraph.ingest.pairs` or :mod:`depgraph.ingest.spatial`, and
:func:`depgraph.graph.assembly.with_edges` adds it with the step's record appended to the history. An option
the builder does not take is an ``invalid_argument`` error naming it. A graph of another engine (a
:class:`~depgraph.spark.graph.SparkGraph`) is built by that engine (:mod:`depgraph.spark.tables`).

>>> import pandas as pd
>>> from depgraph import from_metadata
>>> g = from_metadata(pd.DataFrame({"sample_id": ["S1", "S2", "S3"], "subject_id": ["P1", "P2", "P3"]}))
>>> g = add_kinship(g, pd.DataFrame({"id1": ["P1"], "id2": ["P2"], "kinship": [0.25]}), threshold="first")
>>> g.relation_counts()["subject_related_to"]
1
"""

from __future__ import annotations

from typing import Any

from depgraph.common.arguments import refuse_options
from depgraph.engines import engine_of, stage
from depgraph.graph.assembly import with_edges
from depgraph.graph.model import StudyGraph
from depgraph.ingest.pairs import duplicate_pairs, explicit_pairs, kinship_pairs
from depgraph.ingest.spatial import spatial_pairs


def add_kinship(graph: StudyGraph, source: Any, threshold: float | str, **options: Any) -> StudyGraph:
    """Relate subjects whose kinship is at least ``threshold`` (inclusive).

    See :func:`depgraph.ingest.pairs.kinship_pairs` for the accepted sources
    (a pair table ``id1, id2, kinship``, or a square dense/sparse matrix
    with ``ids=``) and options. ``threshold`` may be a KING degree name:
    ``"duplicate"``, ``"first"``, ``"second"``, ``"third"``.
    """
    if (engine := engine_of(graph)) is not None:  # a graph of another engine (a SparkGraph) is built there
        return stage(engine, "add_kinship").add_kinship_request(graph, source, threshold, **options)
    refuse_options(kinship_pairs, options)
    piece, record = kinship_pairs(graph, source, threshold, **options)
    return with_edges(graph, [piece], record)


def add_spatial(graph: StudyGraph, coords: Any, radius: float, **options: Any) -> StudyGraph:
    """Make samples within ``radius`` of each other adjacent (inclusive, KD-tree).

    See :func:`depgraph.ingest.spatial.spatial_pairs`.
    """
    if (engine := engine_of(graph)) is not None:  # a graph of another engine (a SparkGraph) is built there
        return stage(engine, "add_spatial").add_spatial_request(graph, coords, radius, **options)
    refuse_options(spatial_pairs, options)
    piece, record = spatial_pairs(graph, coords, radius, **options)
    return with_edges(graph, [piece], record)


def add_duplicates(graph: StudyGraph, pairs: Any, **options: Any) -> StudyGraph:
    """Declare pairs of samples that are the same specimen or record.

    See :func:`depgraph.ingest.pairs.duplicate_pairs`.
    """
    if (engine := engine_of(graph)) is not None:  # a graph of another engine (a SparkGraph) is built there
        return stage(engine, "add_duplicates").add_duplicates_request(graph, pairs, **options)
    refuse_options(duplicate_pairs, options)
    piece, record = duplicate_pairs(graph, pairs, **options)
    return with_edges(graph, [piece], record)


def add_relations(graph: StudyGraph, pairs: Any, relation: str, **options: Any) -> StudyGraph:
    """Add explicit edges of any relation between existing nodes.

    See :func:`depgraph.ingest.pairs.explicit_pairs`.
    """
    if (engine := engine_of(graph)) is not None:  # a graph of another engine (a SparkGraph) is built there
        return stage(engine, "add_relations").add_relations_request(graph, pairs, relation, **options)
    refuse_options(explicit_pairs, options)
    piece, record = explicit_pairs(graph, pairs, relation, **options)
    return with_edges(graph, [piece], record)
