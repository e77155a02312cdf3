"""What a spec's envelope states about how its groups were made — mode, strategy, relations, via and priority,
the group labels, the recommended resampling, the warnings — checked against each other and against its group ids.

Every spec depgraph makes and every spec file it reads passes these checks; a file that fails one contradicts
itself and is refused even when its digest matches (a script that edits a field and recomputes the digest). What
cannot be checked from the file alone is listed in docs/spec.md ("What a reader checks"): ``graph_name``,
``subset``, ``parameters`` and ``provenance`` record where the spec came from, and a warning's message is prose.

>>> expected_relations("composite", "strict", ["relatedness"], [])
('sample_belongs_to_subject', 'subject_related_to')
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Protocol

import pyarrow as pa
import pyarrow.compute as pc

from depgraph.errors import DepgraphError, describe_ids
from depgraph.findings import CATALOGUE
from depgraph.spec.plans import PLAN_WARNING_CODES
from depgraph.vocab import MODE, MODES, recommended_resampling, relation_names

#: Warning codes a spec may carry beyond the findings catalogue: those a splitGraph file's import records
#: (:mod:`depgraph.adapters.splitgraph`; docs/errors.md lists them).
IMPORTED_WARNING_CODES = frozenset(
    {
        "splitgraph_warning",
        "splitgraph_schema_version",
        "splitgraph_recommendation",
        "repeated_node_definition",
        "duplicate_edge",
    }
)

#: Every label a derivation writes before a group id's first colon: each mode's name, ``composite`` and the
#: ``composite_<mode>`` of a rule-based composite (docs/spec.md, "Group ids").
GROUP_LABELS = frozenset({m.name for m in MODES} | {f"composite_{m.name}" for m in MODES} | {"composite"})


class StatedConstraint(Protocol):
    """What the checks read of a spec's constraint (:class:`~depgraph.spec.model.Constraint`)."""

    mode: str
    strategy: str | None
    relations: list[str]
    via: list[str]
    priority: list[str]


def expected_relations(mode: str, strategy: str | None, via: Sequence[str], priority: Sequence[str]) -> tuple[str, ...]:
    """The relations a derivation of ``mode`` follows, in the order it records them: a direct or component mode's
    own; a strict composite's over its ``via`` modes; a rule-based one's over its ``priority`` (else ``via``)."""
    if MODE[mode].kind != "composite":
        return relation_names([mode])
    return relation_names(priority if strategy == "rule_based" and priority else via)


def check_statements(
    constraint: StatedConstraint, resampling: str, warnings: Sequence[Any], group_ids: pa.Array, where: str, code: str
) -> None:
    """Refuse (``code``, naming the fields) a constraint that contradicts itself or the group labels, a
    recommended resampling that is not the constraint's, or a warning of an unknown code."""
    _check_constraint(constraint, where, code)
    wanted = recommended_resampling(constraint.mode, constraint.strategy)
    if resampling != wanted:
        raise DepgraphError(code, f"{where}: recommended_resampling is {resampling!r}, but a {_said(constraint)} "
                            f"spec recommends {wanted!r}")  # fmt: skip
    _check_labels(constraint, group_ids, where, code)
    for i, warning in enumerate(warnings):
        if warning.code not in CATALOGUE and warning.code not in IMPORTED_WARNING_CODES | PLAN_WARNING_CODES:
            raise DepgraphError(code, f"{where}: warnings[{i}].code {warning.code!r} is no warning depgraph "
                                "reports (docs/errors.md, docs/validation.md)")  # fmt: skip
        if len(warning.ids) > warning.count:
            raise DepgraphError(code, f"{where}: warnings[{i}] names {len(warning.ids)} ids but counts "
                                f"{warning.count}")  # fmt: skip


def _said(constraint: StatedConstraint) -> str:
    return constraint.mode + (f" ({constraint.strategy})" if constraint.strategy else "")


def _check_constraint(constraint: StatedConstraint, where: str, code: str) -> None:
    """Strategy, via and priority only with a composite mode; nothing named twice; the relations the mode's."""
    composite = MODE[constraint.mode].kind == "composite"
    problem = None
    if composite != (constraint.strategy is not None):
        problem = "a composite mode takes a strategy" if composite else "only a composite mode takes a strategy"
    elif not composite and (constraint.via or constraint.priority):
        problem = "only a composite mode combines modes (via, priority)"
    elif constraint.strategy == "strict" and constraint.priority:
        problem = "priority orders a rule_based composite's modes; a strict one combines them all"
    elif not set(constraint.priority) <= set(constraint.via):
        problem = f"priority names {describe_ids(sorted(set(constraint.priority) - set(constraint.via)))}, not in via"
    for field in ("relations", "via", "priority"):
        named = getattr(constraint, field)
        if problem is None and len(set(named)) < len(named):
            problem = f"{field} names {describe_ids(sorted({x for x in named if named.count(x) > 1}))} twice"
    stated = constraint.relations and (constraint.via or not composite)  # a splitGraph composite names no via
    if problem is None and stated:  # empty: not stated (a spec built by hand, a splitGraph file)
        wanted = expected_relations(constraint.mode, constraint.strategy, constraint.via, constraint.priority)
        if set(constraint.relations) != set(wanted):
            problem = f"relations are {describe_ids(constraint.relations)}, but {_said(constraint)} follows " + (
                f"{describe_ids(list(wanted))}" + (f" (via {describe_ids(constraint.via)})" if composite else "")
            )
    if problem is not None:
        raise DepgraphError(code, f"{where}: constraint (mode {_said(constraint)}): {problem}")


def _check_labels(constraint: StatedConstraint, group_ids: pa.Array, where: str, code: str) -> None:
    """No group id carries the label of another mode than the constraint's (``composite:`` under ``subject``)."""
    if constraint.mode != "composite":
        allowed = {constraint.mode}
    elif constraint.strategy == "strict":
        allowed = {"composite"}
    else:  # rule-based: a mode of priority (else via) took the sample; a splitGraph composite names neither
        combined = constraint.priority or constraint.via or [m.name for m in MODES]
        allowed = {"composite"} | {f"composite_{m}" for m in combined}
    found = pc.extract_regex(group_ids, r"^(?P<label>[a-z_]+):")
    labels = pc.struct_field(found, [0]).unique().drop_null().to_pylist()  # struct_field keeps a non-match null
    foreign = sorted(set(labels) & GROUP_LABELS - allowed)
    if foreign:
        shown = describe_ids([f + ":" for f in foreign])
        raise DepgraphError(code, f"{where}: group ids labelled {shown} under mode {_said(constraint)}, whose groups "
                            f"are labelled {describe_ids(sorted(allowed))}")  # fmt: skip
