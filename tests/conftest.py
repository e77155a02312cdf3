"""Shared fixtures: where the splitGraph conformance cases live, small cohorts."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pandas as pd
import pytest

REPO = Path(__file__).resolve().parents[1]
SHARED = Path(os.environ.get("DEPGRAPH_SHARED", REPO.parent / "shared"))
CONFORMANCE = SHARED / "conformance"


def conformance_cases() -> list[Path]:
    """Every splitGraph 0.2.0 case file (read in place, never copied)."""
    if not CONFORMANCE.is_dir():  # a missing checkout must fail loudly, not skip
        raise FileNotFoundError(f"conformance cases not found at {CONFORMANCE}; set DEPGRAPH_SHARED")
    return sorted(p for p in CONFORMANCE.glob("*.json") if p.name != "splitgraph_0_4_vignettes.json")


def load_case(path: Path) -> dict:
    return json.loads(path.read_text())


def case_metadata(case: dict) -> pd.DataFrame:
    """The case's metadata rows as a table; empty strings mean missing."""
    frame = pd.DataFrame(case["metadata"], columns=case.get("columns"))
    return frame.replace("", None)


def as_partition(groups: dict[str, str]) -> list[list[str]]:
    """Group labels forgotten: the partition as sorted lists of sample ids."""
    members: dict[str, list[str]] = {}
    for sample, group in groups.items():
        members.setdefault(group, []).append(sample)
    return sorted(sorted(m) for m in members.values())


@pytest.fixture
def family_meta() -> pd.DataFrame:
    """Two families of two siblings, two visits each, plus an unrelated subject."""
    rows = []
    for subject, batch in (("P1", "B1"), ("P2", "B2"), ("P3", "B1"), ("P4", "B2"), ("P5", "B3")):
        for visit, t in (("T0", 0), ("T1", 1)):
            rows.append(
                {
                    "sample_id": f"{subject}-{visit}",
                    "subject_id": subject,
                    "batch_id": batch,
                    "timepoint_id": visit,
                    "time_index": t,
                }
            )
    return pd.DataFrame(rows)


@pytest.fixture
def family_kinship() -> pd.DataFrame:
    return pd.DataFrame({"id1": ["P1", "P3"], "id2": ["P2", "P4"], "kinship": [0.25, 0.24]})
