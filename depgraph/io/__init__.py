"""Files in and out: strict table and JSON readers, atomic writes, the published JSON Schemas."""
