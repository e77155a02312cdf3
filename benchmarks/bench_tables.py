"""from_metadata on a text table with attribute columns, as people export it (issue 11).

    python benchmarks/bench_tables.py [--n 1e6] [--repeats 3] [--dir DIR]

Writes one cohort (``sample_id``, ``subject_id``, ``batch_id``, ``timepoint_id``, ``time_index``, ``outcome_id`` and
four attributes: an integer, a float, a boolean, a text column) the ways tables arrive: comma-separated, a European
Excel's ``;`` with decimal commas, with a UTF-8 byte-order mark, tab-separated under ``.txt``, with trailing ``,,,``
rows, and in Latin-1 (read with ``encoding="latin-1"``). Times ``from_metadata(path)`` on each (median of the
repeats, after one untimed run) and prints a table; the comma file is the one to compare against an older tree.
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import time
from pathlib import Path

import numpy as np
import pandas as pd

#: The files written, and the from_metadata options each needs.
LAYOUTS: dict[str, dict[str, str]] = {
    "comma.csv": {},
    "semicolon.csv": {},
    "bom.csv": {},
    "tab.txt": {},
    "trailing.csv": {},
    "latin1.csv": {"encoding": "latin-1"},
}


def write_cohort(n: int, directory: Path, seed: int = 0) -> None:
    rng = np.random.default_rng(seed)
    visit = rng.integers(0, 3, n)
    meta = pd.DataFrame(
        {
            "sample_id": np.char.add("S", np.arange(n).astype(str)),
            "subject_id": np.char.add("P", np.sort(rng.integers(0, max(1, n // 2), n)).astype(str)),
            "batch_id": np.char.add("B", rng.integers(0, 1000, n).astype(str)),
            "timepoint_id": np.char.add("V", visit.astype(str)),
            "time_index": visit * 6,
            "outcome_id": np.where(rng.random(n) < 0.3, "case", "control"),
            "age": rng.integers(18, 90, n),
            "weight": rng.normal(70, 10, n).round(2),
            "smoker": rng.random(n) < 0.2,
            "site name": np.char.add("site ", rng.integers(0, 20, n).astype(str)),
        }
    )
    meta.to_csv(directory / "comma.csv", index=False)
    meta.to_csv(directory / "semicolon.csv", index=False, sep=";", decimal=",")
    meta.to_csv(directory / "tab.txt", index=False, sep="\t")
    meta.to_csv(directory / "latin1.csv", index=False, encoding="latin-1")
    comma = (directory / "comma.csv").read_bytes()
    (directory / "bom.csv").write_bytes(b"\xef\xbb\xbf" + comma)
    (directory / "trailing.csv").write_bytes(comma + b"," * (len(meta.columns) - 1) + b"\n" * 50)


def measure(n: int, directory: Path, repeats: int = 3) -> list[dict[str, float | str]]:
    from depgraph import from_metadata

    write_cohort(n, directory)
    rows = []
    for name, options in LAYOUTS.items():
        graph = from_metadata(directory / name, **options)  # untimed: warm
        runs = []
        for _ in range(repeats):
            start = time.perf_counter()
            from_metadata(directory / name, **options)
            runs.append(time.perf_counter() - start)
        rows.append({"file": name, "seconds": round(statistics.median(runs), 3), "n_nodes": len(graph.nodes)})
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=float, default=1e6)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--dir", type=Path, default=None)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as scratch:
        directory = args.dir or Path(scratch)
        directory.mkdir(parents=True, exist_ok=True)
        for row in measure(int(args.n), directory, args.repeats):
            print(f"{row['file']:15} {row['seconds']:7.2f} s  ({row['n_nodes']} nodes)")


if __name__ == "__main__":
    main()
