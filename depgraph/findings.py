"""Findings: what validation, derivation and (later) fold planning report.

A finding is not an exception: it is a coded observation with a severity,
kept with the result it describes (a ValidationReport, a Partition, a spec's
``warnings``). Every finding names the ids it is about; its message shows the
first few and how many in all. Every code validation or derivation can report
is defined once, in :data:`CATALOGUE` (docs/validation.md lists it).

>>> f = Issue("unlinked_samples", "warning", "2 samples have no batch", ids=("S4", "S5"))
>>> f.count, f.to_dict()["ids"]
(2, ['S4', 'S5'])
>>> Issue("repeated_subject_samples", "error", "...", ids=tuple(f"S{i}" for i in range(10**5)))
Issue('repeated_subject_samples', 'error', count=100000, ids=['S0', 'S1', 'S2', ... and 99997 more], message='...')
>>> CATALOGUE["single_group"].level, CATALOGUE["single_group"].severity
('leakage', 'warning')
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import pandas as pd

from depgraph.common.display import first_ids, ids_repr
from depgraph.vocab import DIRECT_MODES, LEVELS, SEVERITIES


@dataclass(frozen=True)
class Issue:
    """One coded finding.

    Parameters
    ----------
    code:
        Stable identifier, e.g. ``repeated_subject_samples``.
    severity:
        ``error`` (the declaration is unusable as is), ``warning`` (likely a
        mistake or a leak), ``advisory`` (worth knowing).
    message:
        One line naming the first offending ids and the count.
    ids:
        Every offending id (node keys or ``<prefix>:<key>`` node ids).
    level:
        ``structural``, ``semantic`` or ``leakage`` for validation findings;
        ``None`` for findings of a derivation.
    count:
        How many entities the finding is about (defaults to ``len(ids)``);
        splitGraph reports one issue per entity, this is that number.
    """

    code: str
    severity: str
    message: str
    ids: tuple[str, ...] = ()
    level: str | None = None
    count: int | None = None
    details: dict[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if self.severity not in SEVERITIES:
            raise ValueError(f"severity must be one of {SEVERITIES}, not {self.severity!r}")
        if self.level is not None and self.level not in LEVELS:
            raise ValueError(f"level must be one of {LEVELS}, not {self.level!r}")
        if self.count is None:
            object.__setattr__(self, "count", len(self.ids))
        if not isinstance(self.ids, tuple):  # callers building large id lists pass tuples of str
            object.__setattr__(self, "ids", tuple(str(i) for i in self.ids))

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "code": self.code,
            "severity": self.severity,
            "message": self.message,
            "count": self.count,
            "ids": list(self.ids),
        }
        if self.level is not None:
            out["level"] = self.level
        if self.details:
            out["details"] = dict(self.details)
        return out

    def __repr__(self) -> str:
        level = f", level={self.level!r}" if self.level else ""
        return (
            f"Issue({self.code!r}, {self.severity!r}{level}, count={self.count}, ids={ids_repr(self.ids)}, "
            f"message={self.message!r})"
        )

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Issue:
        return cls(
            code=data["code"],
            severity=data["severity"],
            message=data["message"],
            ids=tuple(data.get("ids", ())),
            level=data.get("level"),
            count=data.get("count"),
            details=dict(data.get("details", {})),
        )


def findings_table(findings: Any) -> pd.DataFrame:
    """One row per finding: severity, level (when any finding has one), code, count, and what it is about: its
    first ids and how many more or, for a finding about no ids, its message — what a report's repr and
    ``_repr_html_`` show. ``findings`` are :class:`Issue` objects or anything with
    the same attributes (a spec's warnings).

    >>> findings_table([Issue("unlinked_samples", "warning", "...", ids=("S4", "S5", "S6", "S7"))])
      severity              code  count                  about
    0  warning  unlinked_samples      4  S4, S5, S6 and 1 more
    """
    rows = [
        {
            "severity": f.severity,
            "level": getattr(f, "level", None),
            "code": f.code,
            "count": int(f.count or 0),
            "about": first_ids(f.ids, max(int(f.count or 0), len(f.ids))) if len(f.ids) else f.message,
        }
        for f in findings
    ]
    table = pd.DataFrame(rows, columns=["severity", "level", "code", "count", "about"])
    return table if table["level"].notna().any() else table.drop(columns="level")


# --------------------------------------------------------------------------- the catalogue
@dataclass(frozen=True)
class Finding:
    """One code of the catalogue: its severity, what it means, and who reports it.

    ``level`` is the validation level of a code validation reports (``None``: only a derivation reports it);
    ``derivation`` says whether a derivation reports it (a Partition's and a spec's ``warnings``).
    """

    code: str
    severity: str
    meaning: str
    level: str | None = None
    derivation: bool = False

    def issue(
        self,
        message: str,
        ids: tuple[str, ...] = (),
        *,
        count: int | None = None,
        details: dict[str, Any] | None = None,
    ) -> Issue:
        """An :class:`Issue` of this code, at its catalogue severity (validation adds the level of its rule)."""
        return Issue(self.code, self.severity, message, ids, count=count, details=details or {})


def _validation(level: str, severity: str, entries: dict[str, str]) -> list[Finding]:
    return [Finding(code, severity, meaning, level) for code, meaning in entries.items()]


def _derivation(severity: str, entries: dict[str, str]) -> list[Finding]:
    return [Finding(code, severity, meaning, derivation=True) for code, meaning in entries.items()]


_FINDINGS: list[Finding] = [
    *_validation(
        "structural",
        "error",
        {
            "duplicate_node_id": "a node id occurs twice",
            "dangling_edge": "an edge points outside the node table",
            "invalid_edge_signature": "an edge joins node types its relation does not allow",
            "duplicate_edge": "an edge is declared twice",
        },
    ),
    Finding(
        "repeated_node_definition",
        "warning",
        "an imported splitGraph file defined a node twice, identically; it was kept once",
        "structural",
    ),
    *_validation(
        "semantic",
        "error",
        {
            f"sample_multiple_{m}_assignments": f"a sample has more than one target of the {m} relation"
            for m in DIRECT_MODES
        },
    ),
    Finding(
        "multi_subject_samples_allowed",
        "advisory",
        "samples with several subjects, accepted by the allow_multi_subject_samples override",
        "semantic",
    ),
    *_validation(
        "semantic",
        "warning",
        {
            f"sample_missing_{m}_assignment": f"some samples lack the {m} relation others have (they become singletons)"
            for m in DIRECT_MODES
        },
    ),
    *_validation(
        "semantic",
        "error",
        {
            "timepoint_self_loop": "a timepoint precedes itself",
            "timepoint_precedence_cycle": "timepoint_precedes has a cycle",
            "time_order_conflict": "timepoint_precedes runs against time_index (later or tied first)",
        },
    ),
    Finding(
        "pairs_with_unknown_ids_dropped",
        "advisory",
        "a builder dropped pairs naming unknown ids (unknown='ignore')",
        "semantic",
    ),
    *_validation(
        "semantic",
        "warning",
        {
            "invalid_featureset_derivation_scope": (
                "a feature set's derivation_scope is not external, per_training_split or per_dataset"
            ),
            "numeric_outcome_value": (
                "outcome_value was numeric: each distinct number became an Outcome node (and a stratum)"
            ),
            "splitgraph_schema_version": (
                "an imported splitGraph file had no schema_version or one other than 0.1.0; it was read anyway"
            ),
        },
    ),
    Finding(
        "confusable_ids",
        "warning",
        "ids of one column look alike but differ (Unicode confusables: a Cyrillic а, a fullwidth １): one entity "
        "written two ways would be two",
        "semantic",
    ),
    Finding(
        "formula_like_ids",
        "advisory",
        "ids begin with =, +, -, @, tab or carriage return, which spreadsheets read as formulas",
        "semantic",
    ),
    *_validation(
        "semantic",
        "warning",
        {
            "no_grouping_column": (
                "the metadata had no grouping column and nothing links the samples: every sample is its own group"
            ),
            "kinship_above_half": (
                "a GRM holds pairs with kinship above 0.5 (GRM above 1): twins or duplicated samples, or a bad file"
            ),
            "unmapped_role_column": (
                "a metadata column named like a role (Subject_ID, patient, Batch…) was left unmapped: it declares "
                "nothing"
            ),
            "subjects_without_kinship": (
                "a genetics tool's kinship file does not name some subjects: their relatives are unknown, not absent"
            ),
            "kinship_file_filtered": (
                "a kinship table holds no kinship below a value above the threshold: filtered when written"
            ),
            "family_column_without_kinship": (
                "the metadata has a family column but no kinship is declared: relatives may be split"
            ),
        },
    ),
    Finding("repeated_subject_samples", "advisory", "a subject has several samples", "leakage"),
    *_validation(
        "leakage",
        "warning",
        {
            "subject_cross_study_overlap": "a subject has samples in several studies",
            "subject_cross_site_overlap": "a subject has samples at several sites",
        },
    ),
    *_validation(
        "leakage",
        "advisory",
        {
            "shared_featureset_provenance": "a feature set is shared by several samples",
            "per_dataset_featureset": (
                "a feature set was derived over the whole dataset (derivation_scope per_dataset), evaluation "
                "samples included"
            ),
            "heavy_batch_reuse": "a batch holds at least max(3, half the samples)",
        },
    ),
    *_validation(
        "leakage",
        "warning",
        {
            "missing_time_ordering": "samples have timepoints but nothing orders them",
            "related_subjects": "kinship links subjects; subject grouping would split relatives",
            "duplicates_across_subjects": (
                "declared duplicates belong to different subjects; subject grouping would split them"
            ),
        },
    ),
    # the shape of a partition: validation checks every mode's, a derivation its own
    Finding("single_group", "warning", "every sample is in one group: no split is possible", "leakage", True),
    Finding(
        "dominant_group",
        "warning",
        "one group holds more than half the samples and at least twice the next largest",
        "leakage",
        True,
    ),
    Finding("too_few_groups", "warning", "a mode leaves fewer groups than the folds asked for", "leakage"),
    *_derivation(
        "warning",
        {
            "unlinked_samples": "samples without the mode's relation were kept as singleton groups",
            "multi_subject_first_chosen": "samples with several subjects were grouped by the smallest subject id",
            "no_relation_edges": "the graph has none of the edges that make the mode (kinship, adjacency...)",
            "time_order_partial": "some timepoints have neither time_index nor precedence",
            "time_order_unavailable": "no timepoint has time_index or precedence",
        },
    ),
    *_derivation(
        "advisory",
        {"mostly_singletons": "most samples are alone in their group: dependency coverage may be sparse"},
    ),
]

#: Every code validation or derivation reports, defined once: ``code -> Finding``.
CATALOGUE: dict[str, Finding] = {f.code: f for f in _FINDINGS}
#: The codes validation reports: ``code -> (level, severity, meaning)``.
VALIDATION_FINDINGS: dict[str, tuple[str, str, str]] = {
    f.code: (f.level, f.severity, f.meaning) for f in _FINDINGS if f.level is not None
}
#: The codes a derivation reports (a Partition's ``warnings``): ``code -> (severity, meaning)``.
DERIVATION_FINDINGS: dict[str, tuple[str, str]] = {f.code: (f.severity, f.meaning) for f in _FINDINGS if f.derivation}


def finding(code: str, message: str, ids: tuple[str, ...] = (), **extra: Any) -> Issue:
    """An :class:`Issue` of a catalogue code at its catalogue severity (``extra``: ``count``, ``details``).

    >>> finding("unlinked_samples", "1 sample has no batch", ("S3",)).severity
    'warning'
    """
    return CATALOGUE[code].issue(message, ids, **extra)
