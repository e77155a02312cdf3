"""The graph or spec a command is given, read in either form once :func:`~depgraph.io.columnar.peek_document` has
told what it is: a JSON file's document is parsed once (the peek's), a columnar file is read from its directory."""

from __future__ import annotations

from pathlib import Path

from depgraph.graph.files import graph_from_json, read_graph
from depgraph.graph.model import StudyGraph
from depgraph.io.columnar import Peeked
from depgraph.spec.files import read_spec, spec_from_json
from depgraph.spec.model import SplitSpec


def peeked_graph(path: Path, found: Peeked) -> StudyGraph:
    """The study graph at ``path``, which ``found`` peeked."""
    return read_graph(path) if found.columnar else graph_from_json(path, found.document)


def peeked_spec(path: Path, found: Peeked, verify_key: bytes | None = None) -> SplitSpec:
    """The split spec at ``path``, which ``found`` peeked, its signature checked with ``verify_key``."""
    if found.columnar:
        return read_spec(path, verify_key=verify_key)
    return spec_from_json(path, found.document, verify_key=verify_key)
