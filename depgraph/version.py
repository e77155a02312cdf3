"""depgraph's version: one place, read by the package, the CLI, the spec's generator record and the build."""

__version__ = "0.1.0"
