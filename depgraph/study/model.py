"""``Study``: a study declared once — read from a study file (or a dict), checked, run in one process, re-checked.

The Python face of the study file; ``depgraph run`` and ``depgraph run --check`` are thin wrappers over
:meth:`Study.run` and :meth:`Study.check`.

>>> import pandas as pd, tempfile, pathlib
>>> folder = pathlib.Path(tempfile.mkdtemp())
>>> pd.DataFrame({"sample_id": ["S1", "S2", "S3", "S4"], "patient": ["P1", "P1", "P2", "P3"]}).to_csv(
...     folder / "metadata.csv", index=False)
>>> study = Study.from_dict({
...     "version": 1,
...     "metadata": {"path": "metadata.csv", "columns": {"sample_id": "sample_id", "subject_id": "patient"}},
...     "grouping": {"mode": "subject"},
...     "folds": {"scheme": "group-kfold", "n_splits": 2},
...     "outputs": {"spec": "spec.json"},
... }, base=folder)
>>> spec = study.run()
>>> spec.groups()["S2"], len(spec.folds.splits), (folder / "spec.json").is_file()
('subject:P1', 2, True)
>>> study.check().identical
True
"""

from __future__ import annotations

import dataclasses
import os
from typing import Any

from depgraph.spec.model import SplitSpec
from depgraph.study.check import StudyCheck, check_declaration
from depgraph.study.files import Declaration, declaration_of, read_declaration
from depgraph.study.run import StudyRun, run_declaration


class Study(Declaration):
    """A study declaration: its tables (``study.file``, typed), its keys as written (``study.document``), the folder
    its paths start from (``study.base``) and every input it names (``study.inputs``, each checked to exist)."""

    @classmethod
    def read(cls, path: str | os.PathLike[str]) -> Study:
        """The study file at ``path`` (TOML), checked before any table is read (``DepgraphError`` naming the key)."""
        return cls(*_fields(read_declaration(path)))

    @classmethod
    def from_dict(cls, document: dict[str, Any], base: str | os.PathLike[str] = ".") -> Study:
        """A study from a study file's content as a dict (what ``tomllib`` reads), its paths relative to ``base``."""
        return cls(*_fields(declaration_of(document, base, "study")))

    def run(self, *, write: bool = True) -> SplitSpec:
        """Build, validate (errors stop it), derive, fold and record; write the declared outputs (with ``write``);
        return the spec."""
        return run_declaration(self, write=write).spec

    def run_all(self, *, write: bool = True) -> StudyRun:
        """As :meth:`run`, returning the graph, the validation report and the partition with the spec."""
        return run_declaration(self, write=write)

    def check(self) -> StudyCheck:
        """Run again without writing and compare with the spec on disk: ``identical``, or the first ``difference``."""
        return check_declaration(self)

    def __repr__(self) -> str:
        g = self.file.grouping
        how = f"{g.mode}/{g.strategy}" if g.strategy else g.mode
        folds = f", folds {self.file.folds.scheme}" if self.file.folds is not None else ""
        inputs, spec = len(self.inputs), self.file.outputs.spec
        return f"Study({self.source}: {inputs} input file(s), grouping {how}{folds}, spec {spec!r})"


def _fields(declaration: Declaration) -> tuple[Any, ...]:
    return tuple(getattr(declaration, f.name) for f in dataclasses.fields(declaration))
