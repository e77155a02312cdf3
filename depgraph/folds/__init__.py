"""Fold schemes that turn a spec's groups into train/test splits (schemes), and their parameters declared
once (parameters)."""
