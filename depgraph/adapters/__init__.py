"""Adapters: hand a split spec to other tools (tables, scikit-learn, PyTorch). They only read specs."""
