"""A synthetic biobank-like cohort of any size, written as the files a study team hands over.

``n`` samples from ``n / 2`` subjects (visits 1-3), subjects in families of two to
four (siblings related at kinship ≈ 0.25: about ``n / 5`` pairs), 1,000
processing batches (fewer for small n), 20 sites, 5 studies, 3 timepoints with
a time index, a binary outcome, 2-D coordinates, and ``n / 10,000`` (at least 3)
re-deposited samples declared as duplicates.

    python benchmarks/cohort.py 1e6 /tmp/cohort
"""

from __future__ import annotations

import sys
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd


@dataclass(frozen=True)
class CohortFiles:
    metadata: Path
    kinship: Path
    coords: Path
    duplicates: Path
    n_samples: int


def cohort_files(n: int, directory: Path) -> CohortFiles:
    """Where :func:`make_cohort` writes (or wrote) a cohort of ``n`` samples."""
    names = ("metadata.csv", "kinship.csv", "coords.csv", "duplicates.csv")
    return CohortFiles(*(directory / name for name in names), n)


def make_cohort(n: int, directory: Path, seed: int = 0) -> CohortFiles:
    rng = np.random.default_rng(seed)
    directory.mkdir(parents=True, exist_ok=True)
    n_subjects = max(2, n // 2)
    subject = np.sort(rng.integers(0, n_subjects, n))  # about 2 samples per subject
    starts = np.r_[0, np.flatnonzero(np.diff(subject)) + 1]
    visit = np.minimum(np.arange(n) - np.repeat(starts, np.diff(np.r_[starts, n])), 2)  # 0, 1, 2 within a subject
    batches = min(1000, max(6, n // 1000))
    meta = pd.DataFrame(
        {
            "sample_id": np.char.add("S", np.arange(n).astype(str)),
            "subject_id": np.char.add("P", subject.astype(str)),
            "batch_id": np.char.add("B", rng.integers(0, batches, n).astype(str)),
            "site_id": np.char.add("site", rng.integers(0, 20, n).astype(str)),
            "study_id": np.char.add("ST", rng.integers(0, 5, n).astype(str)),
            "timepoint_id": np.char.add("V", visit.astype(str)),
            "time_index": visit * 6,
            "outcome_id": np.where(rng.random(n) < 0.3, "case", "control"),
        }
    )
    meta = meta.sample(frac=1, random_state=seed).reset_index(drop=True)  # files are never sorted
    # families: consecutive subject numbers in blocks of 2-4; siblings are related
    family = np.cumsum(rng.random(n_subjects) < 1 / 3)
    first = np.r_[True, family[1:] != family[:-1]]
    head = np.maximum.accumulate(np.where(first, np.arange(n_subjects), 0))
    sibling = np.flatnonzero(~first)
    present = np.zeros(n_subjects, dtype=bool)
    present[subject] = True
    keep = present[sibling] & present[head[sibling]]
    a, b = head[sibling][keep], sibling[keep]
    kinship = pd.DataFrame(
        {
            "id1": np.char.add("P", a.astype(str)),
            "id2": np.char.add("P", b.astype(str)),
            "kinship": np.round(rng.normal(0.25, 0.02, len(a)).clip(0.15, 0.35), 4),
        }
    )
    side = max(1.0, np.sqrt(n) * 2.0)  # about 0.8 neighbours per sample within radius 1
    coords = pd.DataFrame(
        {"sample_id": meta["sample_id"], "x": rng.uniform(0, side, n).round(3), "y": rng.uniform(0, side, n).round(3)}
    )
    n_dup = max(3, n // 10_000)
    dup = rng.choice(n, size=2 * n_dup, replace=False)
    duplicates = pd.DataFrame(
        {"id1": meta["sample_id"].to_numpy()[dup[:n_dup]], "id2": meta["sample_id"].to_numpy()[dup[n_dup:]]}
    )
    files = cohort_files(n, directory)
    meta.to_csv(files.metadata, index=False)
    kinship.to_csv(files.kinship, index=False)
    coords.to_csv(files.coords, index=False)
    duplicates.to_csv(files.duplicates, index=False)
    return files


if __name__ == "__main__":
    made = make_cohort(int(float(sys.argv[1])), Path(sys.argv[2]))
    print(made)
