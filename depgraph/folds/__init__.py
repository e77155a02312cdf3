"""Fold schemes that turn a spec's groups into train/test splits."""
