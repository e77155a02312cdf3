"""depgraph: declare what must never be split, derive leakage-free groups.

The flow is one direction::

    metadata ──from_metadata──▶ StudyGraph ──validate──▶ ValidationReport
                                    │ add_kinship / add_spatial / add_duplicates / combine
                                    │   (audit.audit_duplicates finds undeclared duplicates)
                                    └──derive(mode)──▶ Partition ──▶ split spec ──folds.assign_folds──▶ folds
                                                                        └──exposure.exposure, report.write_report

>>> import pandas as pd
>>> import depgraph
>>> g = depgraph.from_metadata(pd.DataFrame({
...     "sample_id": ["S1", "S2", "S3"], "subject_id": ["P1", "P1", "P2"]}))
>>> depgraph.derive(g, "subject").groups()
{'S1': 'subject:P1', 'S2': 'subject:P1', 'S3': 'subject:P2'}

``depgraph.GroupKFold`` and ``depgraph.StratifiedGroupKFold`` are drop-in
scikit-learn splitters (``cv=depgraph.StratifiedGroupKFold(5)``); they load
scikit-learn when first used (``pip install 'depgraph[sklearn]'``).
"""

import importlib
from typing import Any

from depgraph.derive import Partition, derive
from depgraph.errors import DepgraphError, DepgraphWarning, ErrorCode
from depgraph.graph import StudyGraph, combine, read_graph, write_graph
from depgraph.ingest import from_metadata
from depgraph.validate import Issue, ValidationReport, validate
from depgraph.vocab import MODES, NODE_TYPES, RELATIONS, NodeType

__version__ = "0.1.0"

__all__ = [
    "MODES",
    "NODE_TYPES",
    "RELATIONS",
    "DepgraphError",
    "DepgraphWarning",
    "ErrorCode",
    "Issue",
    "NodeType",
    "Partition",
    "StudyGraph",
    "ValidationReport",
    "__version__",
    "combine",
    "derive",
    "from_metadata",
    "read_graph",
    "validate",
    "write_graph",
]

#: Names served from depgraph.adapters.sklearn, which needs the ``sklearn`` extra.
_SKLEARN_SPLITTERS = ("GroupKFold", "StratifiedGroupKFold")


def __getattr__(name: str) -> Any:
    # Imported on first use, so that `import depgraph` works without scikit-learn (an extra).
    if name in _SKLEARN_SPLITTERS:
        try:
            adapter = importlib.import_module("depgraph.adapters.sklearn")
        except ModuleNotFoundError as exc:
            if exc.name != "sklearn" and not (exc.name or "").startswith("sklearn."):
                raise
            raise ModuleNotFoundError(
                f"depgraph.{name} needs scikit-learn: pip install 'depgraph[sklearn]'", name="sklearn"
            ) from None
        return getattr(adapter, name)
    raise AttributeError(f"module 'depgraph' has no attribute {name!r}")
