"""Exchange with other tools' file formats (splitGraph, R)."""
