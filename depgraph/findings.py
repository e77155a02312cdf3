"""Findings: what validation, derivation and (later) fold planning report.

A finding is not an exception: it is a coded observation with a severity,
kept with the result it describes (a ValidationReport, a Partition, a spec's
``warnings``). Every finding names the ids it is about; its message shows the
first few and how many in all.

>>> f = Issue("unlinked_samples", "warning", "2 samples have no batch", ids=("S4", "S5"))
>>> f.count, f.to_dict()["ids"]
(2, ['S4', 'S5'])
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

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
