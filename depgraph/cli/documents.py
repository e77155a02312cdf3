"""The graph a command is given, read in either form once :func:`~depgraph.io.columnar.peek_document` has told what
it is: a JSON file's document is parsed once (the peek's), a columnar file is read from its directory. (A spec is
read so by :func:`depgraph.cli.specs.peeked_spec`: a command given a graph never loads the spec modules.)"""

from __future__ import annotations

from pathlib import Path

from depgraph.graph.files import graph_from_json, read_graph
from depgraph.graph.model import StudyGraph
from depgraph.io.columnar import Peeked


def peeked_graph(path: Path, found: Peeked) -> StudyGraph:
    """The study graph at ``path``, which ``found`` peeked."""
    return read_graph(path) if found.columnar else graph_from_json(path, found.document)
