"""The exchanging commands' work, one function each: ``depgraph import`` (:func:`import_file`) reads another tool's
file as a depgraph spec or graph, ``depgraph export`` (:func:`export_file`) writes a spec or a graph in its other
form, for splitGraph, or as a table. Each reads with every check of a reader and writes into the ``plan`` the caller
declared (checked before any work).
"""

from __future__ import annotations

import os

from depgraph.adapters.frames import fold_table, samples_table, write_table
from depgraph.adapters.splitgraph import (
    DEFAULT_SPLITGRAPH_VERSION,
    read_splitgraph,
    write_splitgraph_graph,
    write_splitgraph_spec,
)
from depgraph.common.arguments import refuse_moot
from depgraph.errors import DepgraphError
from depgraph.graph.files import peeked_graph, write_graph
from depgraph.graph.model import StudyGraph
from depgraph.io.columnar import document_kind, output_form, peek_document
from depgraph.io.outputs import Outputs
from depgraph.spec.files import peeked_spec, write_spec
from depgraph.spec.model import SplitSpec

PathLike = str | os.PathLike[str]

#: What ``export --to`` writes: a spec or graph in its JSON or columnar form, splitGraph's file, or a spec's table.
TARGETS = ("json", "parquet", "splitgraph", "csv", "samples-table", "fold-table")


def import_file(
    file: PathLike, output: PathLike, *, plan: Outputs, form: str, sign_key: bytes | None = None
) -> SplitSpec | StudyGraph:
    """``depgraph import --from splitgraph``: a splitGraph ``split_spec`` becomes a depgraph spec (signed with
    ``sign_key`` when given), a ``dependency_graph`` a depgraph graph, written to ``output`` in ``form``. Returns what
    was written."""
    imported = read_splitgraph(file)
    output_form(output, "split-spec" if isinstance(imported, SplitSpec) else "study-graph", form)  # named for it
    if not isinstance(imported, SplitSpec):
        refuse_moot(f"to {str(file)!r}, a splitGraph dependency_graph (it signs split specs)", sign_key=sign_key)
    with plan:
        if isinstance(imported, SplitSpec):
            imported = imported.signed(sign_key) if sign_key is not None else imported
            write_spec(imported, output, format=form)
        else:
            write_graph(imported, output, format=form)
    return imported


def export_file(
    document: PathLike, output: PathLike, target: str, *, plan: Outputs, table_format: str | None = None,
    splitgraph_version: str | None = None, excel_safe: bool = False,
) -> None:  # fmt: skip
    """``depgraph export``: the spec or graph at ``document`` written to ``output`` as ``target`` (one of
    :data:`TARGETS`): ``json`` or ``parquet``, the same document in that form (every element kept, a spec its
    digest); ``splitgraph``, splitGraph's file (a graph for ``splitgraph_version``, default 0.4.0); a spec's samples
    table (``csv``, ``samples-table``) or long fold table (``fold-table``) as a ``table_format`` table."""
    if target not in TARGETS:
        raise DepgraphError("invalid_argument", f"target is one of {', '.join(TARGETS)}, not {target!r}")
    if target != "splitgraph":
        refuse_moot(f"to {target} (it applies to graphs exported to splitgraph)", splitgraph_version=splitgraph_version)
    if target in ("json", "parquet", "splitgraph"):
        refuse_moot(f"to {target} (it is for CSV and TSV tables)", excel_safe=excel_safe or None)
    found = peek_document(document)
    kind = document_kind(document, found)
    if target in ("json", "parquet"):
        output_form(output, kind, target)  # a spec named .dggraph, a graph named .dgspec: refused before it is read
        with plan:
            if kind == "study-graph":
                write_graph(peeked_graph(document, found), output, format=target)
            else:
                write_spec(peeked_spec(document, found), output, format=target)
        return
    if kind == "study-graph":
        if target != "splitgraph":
            raise DepgraphError(
                "invalid_argument", f"a study graph exports only to json, parquet or splitgraph, not {target}"
            )
        with plan:  # what splitGraph cannot hold is told as a splitgraph_export_drops warning
            version = splitgraph_version or DEFAULT_SPLITGRAPH_VERSION
            write_splitgraph_graph(peeked_graph(document, found), output, version)
        return
    refuse_moot(
        "to a split spec (it applies to graphs exported --to splitgraph)", splitgraph_version=splitgraph_version
    )
    spec = peeked_spec(document, found)
    with plan:
        if target == "splitgraph":
            write_splitgraph_spec(spec, output)
        elif target == "fold-table":
            write_table(fold_table(spec), output, excel_safe=excel_safe)
        else:
            write_table(samples_table(spec), output, table_format, excel_safe=excel_safe)
