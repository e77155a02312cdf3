"""depgraph: declare what must never be split, derive leakage-free groups.

The flow is one direction, and every step is importable from ``depgraph``::

    metadata ──from_metadata──▶ StudyGraph ──validate──▶ ValidationReport
                                    │ add_kinship(g, …) / add_spatial / add_duplicates / add_relations / combine
                                    │   (audit_duplicates finds undeclared duplicates; read_graph / write_graph)
                                    └──derive(mode)──▶ Partition ──SplitSpec.from_partition──▶ SplitSpec
                                                         (read_spec / write_spec) ──assign_folds──▶ folds
                                                         └──exposure──▶ ExposureReport; write_report
                                    why(g, a, b) ──▶ Chains: the dependencies that keep two samples together

>>> import pandas as pd
>>> import depgraph
>>> g = depgraph.from_metadata(pd.DataFrame({
...     "sample_id": ["S1", "S2", "S3"], "subject_id": ["P1", "P1", "P2"]}))
>>> depgraph.derive(g, "subject").groups()
{'S1': 'subject:P1', 'S2': 'subject:P1', 'S3': 'subject:P2'}

Adapters for optional libraries are loaded when first used, so ``import depgraph`` needs neither:
``depgraph.SpecCV``, ``depgraph.GroupKFold``, ``depgraph.StratifiedGroupKFold``, ``depgraph.GroupShuffleSplit``,
``depgraph.LeaveOneGroupOut``, ``depgraph.LeavePGroupsOut`` and ``depgraph.RepeatedStratifiedGroupKFold`` (drop-in
scikit-learn splitters, ``cv=depgraph.StratifiedGroupKFold(5)``) need the ``sklearn`` extra
(``pip install 'depgraph[sklearn]'``); ``depgraph.FoldSampler``, ``depgraph.GroupBatchSampler`` and
``depgraph.GroupDistributedSampler`` need the ``torch`` extra. Without it, using one of them raises
ModuleNotFoundError naming the extra to install. Every other name is loaded on first use too, with the stage it
comes from (``depgraph.read_spec`` loads the spec's modules, not the report's matplotlib), so ``import depgraph``
and the command line start quickly.
"""

import importlib
from typing import Any

from depgraph.errors import DepgraphError, DepgraphWarning, ErrorCode, missing_extra
from depgraph.version import __version__

#: Where each public name is defined: loaded on first use (PEP 562), so importing depgraph loads no stage.
PUBLIC: dict[str, str] = {
    "audit_duplicates": "depgraph.audit.duplicates",
    "EvaluationReport": "depgraph.audit.evaluation",
    "evaluate": "depgraph.audit.evaluation",
    "FoldComposition": "depgraph.audit.composition",
    "fold_composition": "depgraph.audit.composition",
    "ExposureReport": "depgraph.audit.exposure",
    "exposure": "depgraph.audit.exposure",
    "Chains": "depgraph.explanation.paths",
    "GroupMakeup": "depgraph.explanation.groups",
    "explain": "depgraph.explanation.groups",
    "neighbors": "depgraph.explanation.queries",
    "compare": "depgraph.explanation.compare",
    "why": "depgraph.explanation.paths",
    "write_report": "depgraph.audit.report",
    "Partition": "depgraph.derivation.partition",
    "derive": "depgraph.derivation.groups",
    **dict.fromkeys(
        ["BalancedHoldout", "FoldScheme", "GroupedHoldout", "GroupedKFold", "HashFolds", "LeaveOneBlockOut",
         "StratifiedGroupedKFold", "TimeOrdered", "assign_folds"],
        "depgraph.folds.schemes",
    ),
    "combine": "depgraph.graph.assembly",
    "read_graph": "depgraph.graph.files",
    "write_graph": "depgraph.graph.files",
    "StudyGraph": "depgraph.graph.model",
    **dict.fromkeys(["add_duplicates", "add_kinship", "add_relations", "add_spatial"], "depgraph.ingest.builders"),
    "from_metadata": "depgraph.ingest.metadata",
    "read_spec": "depgraph.spec.files",
    "write_spec": "depgraph.spec.files",
    "pseudonymize": "depgraph.spec.privacy",
    **dict.fromkeys(["Constraint", "FoldPlan", "SplitSpec"], "depgraph.spec.model"),
    **dict.fromkeys(["Issue", "ValidationReport", "validate"], "depgraph.validation.rules"),
    "Study": "depgraph.study.model",
    **dict.fromkeys(["MODES", "NODE_TYPES", "RELATIONS", "NodeType"], "depgraph.vocab"),
}  # fmt: skip

#: Names served from an adapter that needs an optional extra: name -> (adapter module, extra).
LAZY: dict[str, tuple[str, str]] = {
    "SpecCV": ("depgraph.adapters.sklearn", "sklearn"),
    "GroupKFold": ("depgraph.adapters.sklearn", "sklearn"),
    "StratifiedGroupKFold": ("depgraph.adapters.sklearn", "sklearn"),
    "GroupShuffleSplit": ("depgraph.adapters.sklearn", "sklearn"),
    "LeaveOneGroupOut": ("depgraph.adapters.sklearn", "sklearn"),
    "LeavePGroupsOut": ("depgraph.adapters.sklearn", "sklearn"),
    "RepeatedStratifiedGroupKFold": ("depgraph.adapters.sklearn", "sklearn"),
    "FoldSampler": ("depgraph.adapters.torch", "torch"),
    "GroupBatchSampler": ("depgraph.adapters.torch", "torch"),
    "GroupDistributedSampler": ("depgraph.adapters.torch", "torch"),
}

__all__ = [
    "MODES",
    "NODE_TYPES",
    "RELATIONS",
    "BalancedHoldout",
    "Chains",
    "Constraint",
    "DepgraphError",
    "DepgraphWarning",
    "ErrorCode",
    "EvaluationReport",
    "ExposureReport",
    "FoldComposition",
    "FoldPlan",
    "FoldSampler",
    "FoldScheme",
    "GroupBatchSampler",
    "GroupDistributedSampler",
    "GroupKFold",
    "GroupMakeup",
    "GroupShuffleSplit",
    "GroupedHoldout",
    "GroupedKFold",
    "HashFolds",
    "Issue",
    "LeaveOneBlockOut",
    "LeaveOneGroupOut",
    "LeavePGroupsOut",
    "NodeType",
    "Partition",
    "RepeatedStratifiedGroupKFold",
    "SpecCV",
    "SplitSpec",
    "StratifiedGroupKFold",
    "StratifiedGroupedKFold",
    "Study",
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
    "compare",
    "derive",
    "evaluate",
    "explain",
    "exposure",
    "fold_composition",
    "from_metadata",
    "neighbors",
    "pseudonymize",
    "read_graph",
    "read_spec",
    "validate",
    "why",
    "write_graph",
    "write_report",
    "write_spec",
]


def __getattr__(name: str) -> Any:
    """A public name, from its module on first use (then kept here); an adapter's from its optional extra."""
    if name in PUBLIC:
        value = getattr(importlib.import_module(PUBLIC[name]), name)
        globals()[name] = value  # found directly from now on
        return value
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
    """The public API only (``__all__``), as ``dir(depgraph)`` and an editor's completion show it."""
    return sorted(__all__)
