"""Split spec write and read times, and study graph read times, at scale, with every check on read.

    python benchmarks/bench_spec.py --sizes 1e4,1e5,1e6 [--repeats 5] [--output FILE]

Prints a table and writes benchmarks/results/spec.json. A spec of n samples here
carries sample_id, group_id (two samples per group), batch_group, time_index,
order_rank and stratum, and a 5-fold plan. A graph of n samples is the pipeline
cohort's (benchmarks/cohort.py: metadata with subjects, batches, sites, studies,
timepoints and outcomes, plus kinship), written by ``write_graph``.

Reading checks every element of every array (types, emptiness, ranges,
lengths, order, uniqueness), that no object repeats a key, the digest, and for
specs what the content says of itself (summary counts, no group straddling a
fold, non-empty tests). Each read is timed ``--repeats`` times in one process;
the table shows the median wall time and the median CPU time of the process
(CPU time is steadier on a shared machine).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pandas as pd

from depgraph import add_kinship, from_metadata, read_graph, write_graph
from depgraph.errors import DepgraphError
from depgraph.io.files import read_table
from depgraph.spec.balance import balance_metrics
from depgraph.spec.files import read_spec, write_spec
from depgraph.spec.model import Constraint, FoldPlan, FoldSplit, SplitSpec

RESULTS = Path(__file__).resolve().parent / "results"
HERE = Path(__file__).resolve().parent


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
    balance = balance_metrics(spec.samples, splits, ["stratum"], 1 / folds)  # what the reader recomputes
    plan = FoldPlan(scheme="group-kfold", parameters={"n_splits": folds, "n_repeats": 1}, seed=0, splits=splits,
                    balance=balance)  # fmt: skip
    return spec.with_folds(plan)


def _timed(read: Callable[[], object], repeats: int) -> tuple[float, float]:
    """Median wall and CPU seconds of ``repeats`` calls."""
    walls, cpus = [], []
    for _ in range(repeats):
        wall, cpu = time.perf_counter(), time.process_time()
        read()
        walls.append(time.perf_counter() - wall)
        cpus.append(time.process_time() - cpu)
    return round(statistics.median(walls), 3), round(statistics.median(cpus), 3)


def _size(path: Path) -> float:
    """MB of a file, or of every file of a columnar directory."""
    files = [p for p in path.rglob("*") if p.is_file()] if path.is_dir() else [path]
    return round(sum(p.stat().st_size for p in files) / 1e6, 1)


def measure(n: int, repeats: int = 1) -> dict:
    """Write and read times of a spec of ``n`` samples in both forms: JSON (``read_s``…) and columnar
    (``columnar_read_s``…)."""
    spec = make_spec(n)
    row: dict = {"n_samples": n}
    with tempfile.TemporaryDirectory() as tmp:
        for form, name in (("", "spec.json"), ("columnar_", "spec.dgspec")):
            path = Path(tmp) / name
            t0 = time.perf_counter()
            write_spec(spec, path)
            row[f"{form}write_s"] = round(time.perf_counter() - t0, 3)
            assert read_spec(path).digest == spec.digest
            row[f"{form}read_s"], row[f"{form}read_cpu_s"] = _timed(lambda path=path: read_spec(path), repeats)
            row[f"{form}file_mb"] = _size(path)
        tampered = Path(tmp) / "tampered.json"  # one group id changed: refused by its digest, after one parse
        tampered.write_bytes((Path(tmp) / "spec.json").read_bytes().replace(b"subject:P00000000", b"subject:P0000000X"))
        row["tampered_refused_s"], row["tampered_refused_cpu_s"] = _timed(lambda: _refused(tampered), repeats)
    return row


def _refused(path: Path) -> None:
    try:
        read_spec(path)
    except DepgraphError as err:
        assert err.code == "integrity", err
    else:
        raise AssertionError(f"{path} was read")


def measure_graph(n: int, repeats: int = 1, workdir: Path | None = None) -> dict:
    """Read times of the pipeline cohort's graph (metadata and kinship) of ``n`` samples."""
    sys.path.insert(0, str(HERE))  # run as a script or imported from tests, as run.py does
    from cohort import make_cohort

    with tempfile.TemporaryDirectory() as tmp:
        where = workdir or Path(tmp)
        files = make_cohort(n, where)
        graph = add_kinship(from_metadata(read_table(files.metadata, "metadata")), read_table(files.kinship), 0.177)
        row: dict = {"n_samples": n, "n_nodes": graph.n_nodes, "n_edges": graph.n_edges}
        for form, name in (("", "graph.json"), ("columnar_", "graph.dggraph")):
            path = where / name
            t0 = time.perf_counter()
            write_graph(graph, path)
            row[f"{form}write_s"] = round(time.perf_counter() - t0, 3)
            assert read_graph(path).equals(graph)
            row[f"{form}read_s"], row[f"{form}read_cpu_s"] = _timed(lambda path=path: read_graph(path), repeats)
            row[f"{form}file_mb"] = _size(path)
    return row


def _revision() -> str:
    done = subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True, cwd=HERE)
    return done.stdout.strip() or "unknown"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="1e4,1e5,1e6", help="comma-separated sample counts")
    parser.add_argument("--repeats", type=int, default=5, help="reads per size; times are medians")
    parser.add_argument("--output", type=Path, default=RESULTS / "spec.json")
    parser.add_argument("--label", default=None, help="what was measured (default: this checkout's git revision)")
    args = parser.parse_args()
    sizes = [int(float(s)) for s in args.sizes.split(",")]
    rows = [measure(n, args.repeats) for n in sizes]
    graph_rows = [measure_graph(n, args.repeats) for n in sizes]
    for r in rows:
        print(f"{r['n_samples']:>14} tampered JSON spec refused in {r['tampered_refused_s']} s")
    for what, table in (("spec", rows), ("graph", graph_rows)):
        print(f"{what + ' samples':>14} {'form':>9} {'write s':>8} {'read s':>8} {'read cpu s':>10} {'MB':>7}")
        for r in table:
            for form, prefix in (("json", ""), ("columnar", "columnar_")):
                print(
                    f"{r['n_samples']:>14} {form:>9} {r[prefix + 'write_s']:>8} {r[prefix + 'read_s']:>8} "
                    f"{r[prefix + 'read_cpu_s']:>10} {r[prefix + 'file_mb']:>7}"
                )
    machine = {
        "python": platform.python_version(),
        "machine": platform.machine(),
        "cpus": os.cpu_count(),
        "load_average": [round(x, 2) for x in os.getloadavg()],
    }
    args.output.parent.mkdir(exist_ok=True)
    out = {
        "machine": machine,
        "revision": args.label or _revision(),
        "repeats": args.repeats,
        "rows": rows,
        "graph_rows": graph_rows,
    }
    args.output.write_text(json.dumps(out, indent=2) + "\n")


if __name__ == "__main__":
    main()
