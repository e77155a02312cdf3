"""The names and versions of depgraph's file formats: one place, read by every reader and writer.

A document names its format in ``format`` and the version of that format in ``format_version``; readers accept the
versions their migrations cover (see docs/formats.md) and refuse the rest by name.
"""

from __future__ import annotations

GRAPH_FORMAT = "depgraph.study-graph"
GRAPH_FORMAT_VERSION = "1.0.0"

SPEC_FORMAT = "depgraph.split-spec"
SPEC_FORMAT_VERSION = "1.2.0"

#: schema kind (the published file ``schema/<kind>.schema.json``) → (format name, current version)
FORMATS: dict[str, tuple[str, str]] = {
    "split-spec": (SPEC_FORMAT, SPEC_FORMAT_VERSION),
    "study-graph": (GRAPH_FORMAT, GRAPH_FORMAT_VERSION),
}
KINDS: tuple[str, ...] = tuple(FORMATS)
