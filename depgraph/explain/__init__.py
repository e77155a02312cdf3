"""Explaining a grouping: why two samples are never apart (the chains of declared dependencies that join them)."""
