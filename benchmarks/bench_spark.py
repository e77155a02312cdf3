"""The Spark engine at 1e5 .. 1e7 samples, beside the single-machine engine, on the pipeline cohort.

    python benchmarks/bench_spark.py --sizes 1e5,1e6 [--output FILE]

For each size the cohort (benchmarks/cohort.py: metadata with subjects, batches, sites, studies, timepoints and
outcomes, plus kinship) is generated and built into a columnar graph with ``depgraph build`` (not timed). Then, in
a fresh process each: the single-machine ``depgraph derive --mode relatedness`` to a .dgspec, and the Spark engine
in ``local[2]`` with 1 GB of driver memory (``spark.driver.memory``; executors run inside the driver JVM in local
mode, so nothing can lean on collecting the data): Spark's start, reading the graph with every check, deriving
relatedness (the rounds of components reported) and writing the spec with its digest. Each stage's wall time and
each process's peak resident memory are reported, and the digests of the two engines compared. Results go to
benchmarks/results/spark.json.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

RESULTS = Path(__file__).resolve().parent / "results"
HERE = Path(__file__).resolve().parent
DRIVER_MEMORY = "1g"


def spark_run(graph: str, spec: str) -> dict:
    """In this process: the Spark engine's stages on ``graph``, timed."""
    times: dict[str, float] = {}
    start = time.perf_counter()
    from depgraph.spark.derive import derive
    from depgraph.spark.graph import read_graph
    from depgraph.spark.session import local_session
    from depgraph.spark.spec import write_spec

    spark = local_session("local[2]", {"spark.driver.memory": DRIVER_MEMORY, "spark.sql.shuffle.partitions": "8"})
    times["start"] = time.perf_counter() - start
    mark = time.perf_counter()
    sg = read_graph(graph, spark)
    times["read graph"] = time.perf_counter() - mark
    mark = time.perf_counter()
    partition = derive(sg, "relatedness")
    times["derive relatedness"] = time.perf_counter() - mark
    mark = time.perf_counter()
    digest = write_spec(partition, spec)
    times["write spec"] = time.perf_counter() - mark
    return {"seconds": times, "rounds": partition.rounds, "digest": digest, "n_groups": partition.n_groups}


def _timed(command: list[str]) -> tuple[float, float, str]:
    """Wall seconds and peak memory (GB, the child's own) of a command, and its stdout."""
    script = (
        "import resource, subprocess, sys, time; t = time.perf_counter(); "
        "r = subprocess.run(sys.argv[1:], capture_output=True, text=True); "
        "w = time.perf_counter() - t; "
        "print(w, resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss, r.returncode); print(r.stdout[-4000:]); "
        "sys.stderr.write(r.stderr[-4000:])"
    )
    done = subprocess.run([sys.executable, "-c", script, *command], capture_output=True, text=True, check=True)
    head, _, rest = done.stdout.partition("\n")
    wall, rss, code = head.split()
    if code != "0":
        raise RuntimeError(f"{command} failed: {done.stderr}")
    return float(wall), int(rss) / 2**20, rest


def measure(n: int, where: Path) -> dict:
    subprocess.run([sys.executable, str(HERE / "cohort.py"), str(n), str(where)], check=True, capture_output=True)
    graph, single, on_spark = where / "graph.dggraph", where / "single.dgspec", where / "spark.dgspec"
    build = ["depgraph", "build", str(where / "metadata.csv"), "--kinship", str(where / "kinship.csv"),
             "--kinship-threshold", "0.177", "-o", str(graph)]  # fmt: skip
    subprocess.run(build, check=True, capture_output=True)
    wall, peak, _ = _timed(["depgraph", "derive", str(graph), "--mode", "relatedness", "-o", str(single)])
    spark_wall, spark_peak, report = _timed([sys.executable, __file__, "--child", str(graph), str(on_spark)])
    found = json.loads(report.strip().splitlines()[-1])
    from depgraph import read_spec

    return {
        "n_samples": n,
        "single_machine": {"derive (CLI, one process)": round(wall, 2), "peak_memory_gb": round(peak, 2)},
        "spark": {
            "seconds": {k: round(v, 2) for k, v in found["seconds"].items()},
            "total_seconds": round(spark_wall, 2),
            "peak_memory_gb (driver process and its JVM)": round(spark_peak, 2),
            "rounds": found["rounds"],
        },
        "same_digest": found["digest"] == read_spec(single).digest,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="1e5,1e6")
    parser.add_argument("--output", default=str(RESULTS / "spark.json"))
    parser.add_argument("--child", nargs=2, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        print(json.dumps(spark_run(*args.child)))
        return
    rows = []
    for size in args.sizes.split(","):
        with tempfile.TemporaryDirectory() as tmp:
            row = measure(int(float(size)), Path(tmp))
        print(json.dumps(row), flush=True)
        rows.append(row)
    machine = {"python": platform.python_version(), "cpus": os.cpu_count(), "machine": platform.machine(),
               "memory_gb": round(os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") / 2**30, 1)}  # fmt: skip
    Path(args.output).write_text(json.dumps({"machine": machine, "rows": rows}, indent=2) + "\n")


if __name__ == "__main__":
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
    main()
