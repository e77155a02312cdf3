"""The study file: one declaration of a study, read, checked, run in one process and re-checked."""
