"""Findings: what validation, derivation and (later) fold planning report.

A finding is not an exception: it is a coded observation with a severity,
kept with the result it describes (a ValidationReport, a Partition, a spec's
``warnings``). Every finding names the ids it is about; its message shows the
first few and how many in all.

>>> f = Issue("unlinked_samples", "warning", "2 samples have no batch", ids=("S4", "S5"))
>>> f.count, f.to_dict()["ids"]
(2, ['S4', 'S5'])
>>> Issue("repeated_subject_samples", "error", "...", ids=tuple(f"S{i}" for i in range(10**5)))
Issue('repeated_subject_samples', 'error', count=100000, ids=['S0', 'S1', 'S2', ... and 99997 more], message='...')
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import pandas as pd

from depgraph.common.display import first_ids, ids_repr
from depgraph.vocab import LEVELS, SEVERITIES


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
