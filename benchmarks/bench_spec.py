"""Split spec write and read times at scale, with every check on read.

    python benchmarks/bench_spec.py --sizes 1e5,1e6

Prints a table and writes benchmarks/results/spec.json. A spec of n samples here
carries sample_id, group_id (two samples per group), batch_group, time_index,
order_rank and stratum, and a 5-fold plan.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import tempfile
import time
from pathlib import Path

import numpy as np
import pandas as pd

from depgraph.spec import Constraint, FoldPlan, FoldSplit, SplitSpec, read_spec, write_spec

RESULTS = Path(__file__).resolve().parent / "results"


def make_spec(n: int, folds: int = 5) -> SplitSpec:
    rng = np.random.default_rng(0)
    samples = pd.DataFrame(
        {
            "sample_id": pd.Series([f"S{i:08d}" for i in range(n)], dtype=object),
            "group_id": pd.Series([f"subject:P{i // 2:08d}" for i in range(n)], dtype=object),
            "batch_group": pd.Series([f"B{b}" for b in rng.integers(0, 1000, n)], dtype=object),
            "time_index": rng.integers(0, 4, n).astype(float),
            "order_rank": pd.array(rng.integers(1, 5, n), dtype="Int64"),
            "stratum": pd.Series(np.where(rng.random(n) < 0.3, "case", "control"), dtype=object),
        }
    )
    spec = SplitSpec.build(samples, constraint=Constraint(mode="subject"), recommended_resampling="grouped_cv")
    fold_of_group = rng.integers(0, folds, n // 2 + 1)[np.arange(n) // 2]
    splits = [FoldSplit.of(0, k, np.flatnonzero(fold_of_group == k), np.empty(0, np.int64), n) for k in range(folds)]
    return spec.with_folds(FoldPlan(scheme="group-kfold", splits=splits, seed=0))


def measure(n: int) -> dict:
    spec = make_spec(n)
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "spec.json"
        t0 = time.perf_counter()
        write_spec(spec, path)
        t1 = time.perf_counter()
        back = read_spec(path)
        t2 = time.perf_counter()
        size = path.stat().st_size
    assert back.digest == spec.digest
    return {"n_samples": n, "write_s": round(t1 - t0, 3), "read_s": round(t2 - t1, 3), "file_mb": round(size / 1e6, 1)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="1e4,1e5,1e6", help="comma-separated sample counts")
    args = parser.parse_args()
    rows = [measure(int(float(s))) for s in args.sizes.split(",")]
    print(f"{'samples':>10} {'write s':>8} {'read s':>8} {'MB':>7}")
    for r in rows:
        print(f"{r['n_samples']:>10} {r['write_s']:>8} {r['read_s']:>8} {r['file_mb']:>7}")
    RESULTS.mkdir(exist_ok=True)
    machine = {"python": platform.python_version(), "machine": platform.machine(), "cpus": os.cpu_count()}
    (RESULTS / "spec.json").write_text(json.dumps({"machine": machine, "rows": rows}, indent=2) + "\n")


if __name__ == "__main__":
    main()
