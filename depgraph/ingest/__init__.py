"""Assembling a study graph from tables: metadata, kinship, duplicate, spatial and explicit pairs."""
