"""Explaining a grouping: why two samples are never apart (the chains of declared dependencies that join them), and
what holds a group together (its make-up and its bridges)."""
