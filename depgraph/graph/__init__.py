"""The study graph: the immutable value and its queries, and its file format."""
