"""depgraph: declare what must never be split, derive leakage-free groups.

The flow is one direction, and every step is importable from ``depgraph``::

    metadata ──from_metadata──▶ StudyGraph ──validate──▶ ValidationReport
                                    │ add_kinship(g, …) / add_spatial / add_duplicates / add_relations / combine
                                    │   (audit_duplicates finds undeclared duplicates; read_graph / write_graph)
                                    └──derive(mode)──▶ Partition ──SplitSpec.from_partition──▶ SplitSpec
                                                         (read_spec / write_spec) ──assign_folds──▶ folds
                                                         └──exposure──▶ ExposureReport; write_report

>>> import pandas as pd
>>> import depgraph
>>> g = depgraph.from_metadata(pd.DataFrame({
...     "sample_id": ["S1", "S2", "S3"], "subject_id": ["P1", "P1", "P2"]}))
>>> depgraph.derive(g, "subject").groups()
{'S1': 'subject:P1', 'S2': 'subject:P1', 'S3': 'subject:P2'}

Adapters for optional libraries are loaded when first used, so ``import depgraph`` needs neither:
``depgraph.SpecCV``, ``depgraph.GroupKFold`` and ``depgraph.StratifiedGroupKFold`` (drop-in scikit-learn
splitters, ``cv=depgraph.StratifiedGroupKFold(5)``) need the ``sklearn`` extra
(``pip install 'depgraph[sklearn]'``); ``depgraph.FoldSampler``, ``depgraph.GroupBatchSampler`` and
``depgraph.GroupDistributedSampler`` need the ``torch`` extra. Without it, using one of them raises
ModuleNotFoundError naming the extra to install.
"""

import importlib
from typing import Any

from depgraph.audit.duplicates import audit_duplicates
from depgraph.audit.evaluation import EvaluationReport, evaluate
from depgraph.audit.exposure import ExposureReport, exposure
from depgraph.audit.report import write_report
from depgraph.derivation.groups import Partition, derive
from depgraph.errors import DepgraphError, DepgraphWarning, ErrorCode, missing_extra
from depgraph.folds.schemes import (
    BalancedHoldout,
    FoldScheme,
    GroupedHoldout,
    GroupedKFold,
    HashFolds,
    LeaveOneBlockOut,
    StratifiedGroupedKFold,
    TimeOrdered,
    assign_folds,
)
from depgraph.graph.assembly import combine
from depgraph.graph.files import read_graph, write_graph
from depgraph.graph.model import StudyGraph
from depgraph.ingest.builders import add_duplicates, add_kinship, add_relations, add_spatial
from depgraph.ingest.metadata import from_metadata
from depgraph.spec.files import read_spec, write_spec
from depgraph.spec.model import Constraint, FoldPlan, SplitSpec
from depgraph.validation.rules import Issue, ValidationReport, validate
from depgraph.version import __version__
from depgraph.vocab import MODES, NODE_TYPES, RELATIONS, NodeType

#: Names served from an adapter that needs an optional extra: name -> (adapter module, extra).
LAZY: dict[str, tuple[str, str]] = {
    "SpecCV": ("depgraph.adapters.sklearn", "sklearn"),
    "GroupKFold": ("depgraph.adapters.sklearn", "sklearn"),
    "StratifiedGroupKFold": ("depgraph.adapters.sklearn", "sklearn"),
    "FoldSampler": ("depgraph.adapters.torch", "torch"),
    "GroupBatchSampler": ("depgraph.adapters.torch", "torch"),
    "GroupDistributedSampler": ("depgraph.adapters.torch", "torch"),
}

__all__ = [
    "MODES",
    "NODE_TYPES",
    "RELATIONS",
    "BalancedHoldout",
    "Constraint",
    "DepgraphError",
    "DepgraphWarning",
    "ErrorCode",
    "EvaluationReport",
    "ExposureReport",
    "FoldPlan",
    "FoldSampler",
    "FoldScheme",
    "GroupBatchSampler",
    "GroupDistributedSampler",
    "GroupKFold",
    "GroupedHoldout",
    "GroupedKFold",
    "HashFolds",
    "Issue",
    "LeaveOneBlockOut",
    "NodeType",
    "Partition",
    "SpecCV",
    "SplitSpec",
    "StratifiedGroupKFold",
    "StratifiedGroupedKFold",
    "StudyGraph",
    "TimeOrdered",
    "ValidationReport",
    "__version__",
    "add_duplicates",
    "add_kinship",
    "add_relations",
    "add_spatial",
    "assign_folds",
    "audit_duplicates",
    "combine",
    "derive",
    "evaluate",
    "exposure",
    "from_metadata",
    "read_graph",
    "read_spec",
    "validate",
    "write_graph",
    "write_report",
    "write_spec",
]


def __getattr__(name: str) -> Any:
    # Imported on first use, so that `import depgraph` works without the optional extras.
    if name not in LAZY:
        raise AttributeError(f"module 'depgraph' has no attribute {name!r}")
    module, extra = LAZY[name]
    try:
        adapter = importlib.import_module(module)
    except ModuleNotFoundError as exc:
        raised = missing_extra(f"depgraph.{name}", extra, exc)
        if raised is exc:
            raise
        raise raised from None
    return getattr(adapter, name)


def __dir__() -> list[str]:
    return sorted({*globals(), *LAZY})
