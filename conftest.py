"""Collection settings for the whole repository (doctests included)."""

import importlib.util

# The PyTorch adapter's and the Spark engine's modules need optional extras (torch, pyspark); CI installs them
# (and their tests fail there when they are missing), a machine without one skips those modules' doctests.
collect_ignore = [] if importlib.util.find_spec("torch") else ["depgraph/adapters/torch.py"]
if importlib.util.find_spec("pyspark") is None:
    collect_ignore.append("depgraph/spark")
