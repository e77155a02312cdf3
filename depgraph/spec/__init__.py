"""The split spec: the envelope models, per-sample columns, digest, signing, privacy and file I/O."""
