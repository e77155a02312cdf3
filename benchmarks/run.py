"""Stage timings and peak memory of the whole pipeline at 1e4 .. 1e7 samples.

    python benchmarks/run.py --sizes 1e4,1e5,1e6 [--repeats 3] [--keep DIR]

For each size the cohort is generated once (benchmarks/cohort.py, not timed);
then each repeat runs in a fresh process that times every stage on it and
reports its peak resident memory. With several repeats a stage's time is its
median over the repeats (a shared 2-core machine varies by a third from run to
run) and the peak memory the largest seen. The *floor* is the least any tool
must do: read the metadata table and write the two spec columns (sample_id,
group_id), timed after one untimed run of it, so it is measured warm like the
stages that follow it. The *target* is the path the performance goals name: read metadata,
build the graph with kinship, validate, derive relatedness, build the spec
(block, time and stratum columns, summary, digest) and write it. Results are
printed as a table and written to benchmarks/results/pipeline.json
(pipeline-small.json when every size is below 1e5; --output names another
file, e.g. pipeline-1e7.json).
"""

from __future__ import annotations

import argparse
import itertools
import json
import os
import platform
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from depgraph import add_kinship, add_spatial

RESULTS = Path(__file__).resolve().parent / "results"
HERE = Path(__file__).resolve().parent
STAGES = (
    "floor",
    "read metadata",
    "build graph",
    "add kinship",
    "add spatial",
    "validate",
    "derive subject",
    "derive relatedness",
    "derive composite strict",
    "build spec",
    "assign folds",
    "write spec",
    "read spec",
)
TARGET = (
    "read metadata", "build graph", "add kinship", "validate", "derive relatedness", "build spec", "write spec"
)  # fmt: skip


def measure(n: int, workdir: Path) -> dict:
    """Run in a child process: time every stage on the cohort of n samples in ``workdir``."""
    import orjson
    import pandas as pd

    sys.path.insert(0, str(HERE))
    from cohort import cohort_files

    from depgraph import derive, from_metadata, validate
    from depgraph.folds.schemes import assign_folds
    from depgraph.io.files import atomic_write_bytes, read_table
    from depgraph.spec.files import read_spec, write_spec
    from depgraph.spec.model import SplitSpec

    files = cohort_files(n, workdir)
    times: dict[str, float] = {}

    def timed(stage, fn):
        start = time.perf_counter()
        value = fn()
        times[stage] = round(time.perf_counter() - start, 3)
        return value

    def floor():
        frame = pd.read_csv(files.metadata, dtype=str, engine="pyarrow")  # the same reader depgraph uses
        doc = {"sample_id": frame["sample_id"].tolist(), "group_id": frame["subject_id"].tolist()}
        atomic_write_bytes(workdir / "floor.json", orjson.dumps(doc))

    floor()  # untimed: the first read in a process pays for fresh memory; the timed floor must not
    timed("floor", floor)
    meta = timed("read metadata", lambda: read_table(files.metadata, "metadata"))
    graph = timed("build graph", lambda: from_metadata(meta, name=f"cohort {n}"))
    kinship = read_table(files.kinship)
    graph = timed("add kinship", lambda: add_kinship(graph, kinship, 0.177))
    coords = read_table(files.coords)
    spatial = timed("add spatial", lambda: add_spatial(graph, coords, 1.0))
    timed("validate", lambda: validate(graph))
    timed("derive subject", lambda: derive(graph, "subject"))
    related = timed("derive relatedness", lambda: derive(graph, "relatedness"))
    timed("derive composite strict", lambda: derive(spatial, "composite", via=["relatedness", "spatial"]))
    spec = timed("build spec", lambda: SplitSpec.from_partition(related, graph))
    with_folds = timed("assign folds", lambda: assign_folds(spec, "group-kfold", n_splits=5))
    timed("write spec", lambda: write_spec(with_folds, workdir / "spec.json"))
    timed("read spec", lambda: read_spec(workdir / "spec.json"))
    peak_kb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return {
        "n_samples": n,
        "n_subjects": graph.count("Subject"),
        "kinship_pairs": len(kinship),
        "batches": graph.count("Batch"),
        "adjacent_pairs": spatial.relation_counts().get("sample_adjacent_to", 0),
        "seconds": times,
        "target_seconds": round(sum(times[s] for s in TARGET), 3),
        "floor_seconds": times["floor"],
        "peak_memory_gb": round(peak_kb / 1024**2, 2),
    }


def run_size(n: int, keep: Path | None, repeats: int = 1) -> dict:
    """Generate the cohort once, then measure it ``repeats`` times, each in a fresh process."""
    sys.path.insert(0, str(HERE))
    from cohort import make_cohort

    with tempfile.TemporaryDirectory() as tmp:
        workdir = (keep / str(n)) if keep else Path(tmp)
        make_cohort(n, workdir)
        code = (
            f"import json, sys; sys.path.insert(0, {str(HERE)!r}); from run import measure; "
            f"print(json.dumps(measure({n}, __import__('pathlib').Path({str(workdir)!r}))))"
        )
        runs = []
        for _ in range(repeats):
            done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=False)
            if done.returncode != 0:
                raise RuntimeError(done.stderr)
            runs.append(json.loads(done.stdout.strip().splitlines()[-1]))
    row = dict(runs[0])
    row["seconds"] = {s: round(statistics.median(r["seconds"][s] for r in runs), 3) for s in STAGES}
    row["target_seconds"] = round(sum(row["seconds"][s] for s in TARGET), 3)
    row["floor_seconds"] = row["seconds"]["floor"]
    row["peak_memory_gb"] = max(r["peak_memory_gb"] for r in runs)
    row["repeats"] = repeats
    return row


def machine() -> dict:
    mem = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") / 1024**3
    return {"python": platform.python_version(), "cpus": os.cpu_count(), "memory_gb": round(mem, 1),
            "machine": platform.machine()}  # fmt: skip


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="1e4,1e5,1e6")
    parser.add_argument("--repeats", type=int, default=1, help="runs per size; stage times are medians")
    parser.add_argument("--keep", type=Path, default=None, help="keep the generated cohorts here")
    parser.add_argument("--output", type=Path, default=None, help="results file (default: see the module docs)")
    args = parser.parse_args()
    rows = [run_size(int(float(s)), args.keep, args.repeats) for s in args.sizes.split(",")]
    header = f"{'stage':<26}" + "".join(f"{r['n_samples']:>14,}" for r in rows)
    print(header)
    for stage in STAGES:
        print(f"{stage:<26}" + "".join(f"{r['seconds'][stage]:>13.2f}s" for r in rows))
    print(f"{'target path':<26}" + "".join(f"{r['target_seconds']:>13.2f}s" for r in rows))
    print(f"{'target / floor':<26}" + "".join(f"{r['target_seconds'] / r['floor_seconds']:>13.1f}x" for r in rows))
    print(f"{'peak memory':<26}" + "".join(f"{r['peak_memory_gb']:>12.2f}GB" for r in rows))
    for a, b in itertools.pairwise(rows):
        ratio = b["target_seconds"] / max(a["target_seconds"], 1e-9)
        print(f"time x{ratio:.1f} from {a['n_samples']:,} to {b['n_samples']:,} samples")
    RESULTS.mkdir(exist_ok=True)
    out = {"machine": machine(), "rows": rows}
    name = "pipeline.json" if max(r["n_samples"] for r in rows) >= 100_000 else "pipeline-small.json"
    (args.output or RESULTS / name).write_text(json.dumps(out, indent=2) + "\n")


if __name__ == "__main__":
    main()
