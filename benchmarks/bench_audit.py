"""Cost of the duplicate audit at 1e4 and 1e5 samples × 100 features.

    python benchmarks/bench_audit.py [--sizes 1e4,1e5] [--features 100] [--exact-up-to 1e5]

Each cohort is random features with 1 % of the samples re-deposited (a copy
plus 1 % technical noise, cosine ≈ 0.9999) and, as decoys, 1 % near
neighbours at cosine ≈ 0.98 (below the 0.995 threshold). Both methods are
timed; recall is the share of re-deposits found, false hits are decoys (or
anything else) reported. Prints a table and writes
benchmarks/results/audit.json.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import time
from pathlib import Path

import numpy as np

from depgraph.audit.duplicates import audit_duplicates

RESULTS = Path(__file__).resolve().parent / "results"


def cohort(n: int, d: int, seed: int = 0) -> tuple[np.ndarray, list[str], set[frozenset[str]]]:
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d))
    k = max(1, n // 100)
    picked = rng.choice(n, size=3 * k, replace=False)
    originals, copies, decoys = picked[:k], picked[k : 2 * k], picked[2 * k :]
    X[copies] = X[originals] + 0.01 * rng.normal(size=(k, d))
    X[decoys] = X[originals] + 0.2 * rng.normal(size=(k, d))  # cosine ≈ 0.98
    ids = [f"s{i:07d}" for i in range(n)]
    truth = {frozenset((ids[a], ids[b])) for a, b in zip(originals, copies, strict=True)}
    return X, ids, truth


def measure(n: int, d: int, methods: tuple[str, ...]) -> list[dict]:
    X, ids, truth = cohort(n, d)
    rows = []
    for method in methods:
        t0 = time.perf_counter()
        found = audit_duplicates(X, ids, 0.995, method=method)
        seconds = time.perf_counter() - t0
        pairs = {frozenset(p) for p in found[["id1", "id2"]].itertuples(index=False)}
        rows.append(
            {
                "n_samples": n,
                "n_features": d,
                "method": method,
                "seconds": round(seconds, 3),
                "recall": round(len(pairs & truth) / len(truth), 5),
                "false_hits": len(pairs - truth),
            }
        )
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="1e4,1e5")
    parser.add_argument("--features", type=int, default=100)
    parser.add_argument("--exact-up-to", default="1e5", help="skip the exact method above this many samples")
    args = parser.parse_args()
    rows = []
    for size in args.sizes.split(","):
        n = int(float(size))
        methods = ("exact", "lsh") if n <= float(args.exact_up_to) else ("lsh",)
        rows += measure(n, args.features, methods)
    print(f"{'samples':>10} {'features':>8} {'method':>6} {'seconds':>8} {'recall':>7} {'false':>6}")
    for r in rows:
        print(f"{r['n_samples']:>10,} {r['n_features']:>8} {r['method']:>6} {r['seconds']:>8} {r['recall']:>7} "
              f"{r['false_hits']:>6}")  # fmt: skip
    RESULTS.mkdir(exist_ok=True)
    machine = {"python": platform.python_version(), "machine": platform.machine(), "cpus": os.cpu_count()}
    (RESULTS / "audit.json").write_text(json.dumps({"machine": machine, "rows": rows}, indent=2) + "\n")


if __name__ == "__main__":
    main()
