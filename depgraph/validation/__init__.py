"""Rules that check a study graph before derivation, each a small vectorised function."""
