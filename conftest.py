"""Collection settings for the whole repository (doctests included)."""

import importlib.util

# The PyTorch adapter's doctests need torch, an optional extra; CI installs it (and its tests
# fail there when it is missing), a machine without torch skips that one module's doctests.
collect_ignore = [] if importlib.util.find_spec("torch") else ["depgraph/adapters/torch.py"]
