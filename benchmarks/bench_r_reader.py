"""How long the R package depgraphR takes to read a spec, every check and the digest included, beside Python.

    python benchmarks/bench_r_reader.py --sizes 1e4,1e5,1e6 [--repeats 3] [--output FILE]

Installs adapters/r into a scratch library, writes the spec of ``bench_spec.make_spec(n)`` (six sample columns, a
5-fold plan) in both forms, and times ``read_depgraph_spec()`` in one R process (median of ``--repeats`` reads)
and Python's ``read_spec`` likewise. The columnar form is read through reticulate and pyarrow (Debian has no R
arrow package). Prints a table and writes benchmarks/results/r-reader.json.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from benchmarks.bench_spec import make_spec
from depgraph.spec.files import read_spec, write_spec

HERE = Path(__file__).resolve().parent
PACKAGE = HERE.parent / "adapters" / "r"
RESULTS = HERE / "results"


def install(workdir: Path) -> Path:
    """depgraphR installed into a library under ``workdir`` (from a copy: R compiles src/ in place)."""
    library, source = workdir / "library", workdir / "depgraphR"
    library.mkdir()
    shutil.copytree(PACKAGE, source, ignore=shutil.ignore_patterns("*.o", "*.so"))
    subprocess.run(["R", "CMD", "INSTALL", "-l", str(library), str(source)], check=True, capture_output=True)
    return library


def r_seconds(path: Path, repeats: int, library: Path) -> float:
    """Median wall seconds of ``read_depgraph_spec(path)`` in one R process."""
    code = (
        "library(depgraphR)\n"
        f'times <- vapply(seq_len({repeats}), function(i) system.time(read_depgraph_spec("{path}"))[["elapsed"]], 1)\n'
        "cat(median(times))"
    )
    env = {**os.environ, "R_LIBS": str(library), "RETICULATE_PYTHON": sys.executable}
    done = subprocess.run(["Rscript", "-e", code], capture_output=True, text=True, env=env, check=True)
    return round(float(done.stdout), 3)


def python_seconds(path: Path, repeats: int) -> float:
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        read_spec(path)
        times.append(time.perf_counter() - start)
    return round(statistics.median(times), 3)


def measure(n: int, repeats: int, workdir: Path, library: Path) -> dict:
    spec = make_spec(n)
    row: dict = {"n_samples": n}
    for form, name in (("json", "spec.json"), ("columnar", "spec.dgspec")):
        path = workdir / f"{n}-{name}"
        write_spec(spec, path)
        row[f"r_{form}_s"] = r_seconds(path, repeats, library)
        row[f"python_{form}_s"] = python_seconds(path, repeats)
    return row


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="1e4,1e5,1e6")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--output", type=Path, default=RESULTS / "r-reader.json")
    args = parser.parse_args()
    sizes = [int(float(s)) for s in args.sizes.split(",")]
    with tempfile.TemporaryDirectory() as scratch:
        workdir = Path(scratch)
        library = install(workdir)
        rows = [measure(n, args.repeats, workdir, library) for n in sizes]
    print(f"{'samples':>10} {'R json':>8} {'R columnar':>11} {'Python json':>12} {'Python columnar':>16}")
    for r in rows:
        print(f"{r['n_samples']:>10} {r['r_json_s']:>8} {r['r_columnar_s']:>11} {r['python_json_s']:>12} "
              f"{r['python_columnar_s']:>16}")  # fmt: skip
    meta = {"machine": platform.machine(), "cpus": os.cpu_count(), "repeats": args.repeats}
    args.output.write_text(json.dumps({"meta": meta, "rows": rows}, indent=2) + "\n")


if __name__ == "__main__":
    main()
