"""``python -m depgraph`` runs the command line."""

from depgraph.cli.main import run

run()
