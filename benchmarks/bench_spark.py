"""The Spark engine at 1e5 .. 1e7 samples, beside the single-machine engine, on the pipeline cohort.

    python benchmarks/bench_spark.py --sizes 1e5,1e6 [--output FILE]

For each size the cohort (benchmarks/cohort.py: metadata with subjects, batches, sites, studies, timepoints and
outcomes, plus kinship) is generated and built into a columnar graph with ``depgraph build`` (not timed). Then, in
a fresh process each: the single-machine ``depgraph derive --mode relatedness`` to a .dgspec, and the Spark engine
in ``local[2]`` with 1 GB of driver memory (``spark.driver.memory``; executors run inside the driver JVM in local
mode, so nothing can lean on collecting the data): Spark's start, reading the graph with every check, deriving
relatedness (the rounds of components reported), writing the spec with its digest, and writing it again with each
fold plan of :data:`FOLDS` — grouped 5-fold (planned on the driver from per-group counts), hash folds (computed in
Spark), time-ordered folds (the cohort has three timepoints) and leave-one-study-out (tested and excluded samples
found in Spark), a balanced holdout (decided on the driver from each group's category counts) — against the
single-machine ``depgraph folds`` on its spec. Each stage's wall time, each process's peak resident memory and
the JVM's (its high-water mark, read from /proc before the session stops) are reported, and the digests of the
two engines compared. Results go to benchmarks/results/spark.json.
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

from depgraph.vocab import NodeType

RESULTS = Path(__file__).resolve().parent / "results"
HERE = Path(__file__).resolve().parent
DRIVER_MEMORY = "1g"
#: Where a run's driver memory is passed to its child process.
MEMORY_ENV = "DEPGRAPH_BENCH_DRIVER_MEMORY"


def _progress(what: str) -> None:
    """A line on stderr as each stage starts (a run at 10⁷ takes an hour)."""
    print(f"{time.strftime('%H:%M:%S')} {what}", file=sys.stderr, flush=True)


def spark_run(graph: str, spec: str) -> dict:
    """In this process: the Spark engine's stages on ``graph``, timed, in the session the command line starts
    (its settings, its shuffle partitions fitted to the graph) with 1 GB of driver memory."""
    times: dict[str, float] = {}
    start = time.perf_counter()
    from depgraph import derive
    from depgraph.spark.graph import read_graph
    from depgraph.spark.session import fit_partitions, local_session
    from depgraph.spark.spec import write_spec

    _progress("starting Spark")
    spark = local_session("local[2]", {"spark.driver.memory": os.environ.get(MEMORY_ENV, DRIVER_MEMORY)})
    times["start"] = time.perf_counter() - start
    mark = time.perf_counter()
    _progress("reading the graph")
    sg = read_graph(graph, spark)
    times["read graph"] = time.perf_counter() - mark
    partitions = fit_partitions(spark, sg.count(NodeType.SAMPLE))
    _progress(f"deriving relatedness ({partitions} shuffle partitions)")
    mark = time.perf_counter()
    partition = derive(sg, "relatedness")
    times["derive relatedness"] = time.perf_counter() - mark
    mark = time.perf_counter()
    _progress(f"writing the spec ({partition.rounds} rounds of components)")
    digest = write_spec(partition, spec)
    times["write spec"] = time.perf_counter() - mark
    digests = {"spec": digest}
    for scheme, parameters in FOLDS.items():
        _progress(f"writing the spec with {scheme} folds")
        mark = time.perf_counter()
        digests[scheme] = write_spec(partition, spec.replace(".dgspec", f"-{scheme}.dgspec"), scheme, **parameters)
        times[f"write spec + {scheme} folds"] = time.perf_counter() - mark
    jvm = _jvm_peak_gb(spark)
    return {"seconds": times, "rounds": partition.rounds, "digests": digests, "n_groups": partition.n_groups,
            "jvm_peak_memory_gb": jvm, "shuffle_partitions": partitions}  # fmt: skip


#: The fold plans timed on both engines, and the same plans as the command line's options.
FOLDS = {
    "group-kfold": {"n_splits": 5, "seed": 0},
    "hash": {"n_splits": 5, "salt": "bench"},
    "time": {"n_splits": 2},
    "logo": {"by": "study_group"},
    "balanced-holdout": {"balance": ("stratum", "site_group"), "seed": 0},
}
SALT_ENV = "DEPGRAPH_BENCH_SALT"
FOLD_OPTIONS = {
    "group-kfold": ["-k", "5", "--seed", "0"],
    "hash": ["-k", "5", "--salt-env", SALT_ENV],
    "time": ["-k", "2"],
    "logo": ["--by", "study_group"],
    "balanced-holdout": ["--balance", "stratum,site_group", "--seed", "0"],
}


def _jvm_peak_gb(spark) -> float | None:
    """The JVM's peak resident memory (VmHWM) so far, from /proc, when this process launched it (local mode)."""
    proc = getattr(spark.sparkContext._gateway, "proc", None)  # the launched JVM, a Popen
    try:
        status = Path(f"/proc/{proc.pid}/status").read_text()
    except (AttributeError, OSError):
        return None
    kb = next(int(line.split()[1]) for line in status.splitlines() if line.startswith("VmHWM:"))
    return round(kb / 2**20, 2)


def _timed(command: list[str]) -> tuple[float, float, str]:
    """Wall seconds and peak memory (GB, the child's own) of a command, and its stdout (its stderr passed on)."""
    script = (
        "import resource, subprocess, sys, time; t = time.perf_counter(); "
        "r = subprocess.run(sys.argv[1:], stdout=subprocess.PIPE, text=True); "
        "w = time.perf_counter() - t; "
        "print(w, resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss, r.returncode); print(r.stdout[-4000:])"
    )
    done = subprocess.run([sys.executable, "-c", script, *command], stdout=subprocess.PIPE, text=True, check=True)
    head, _, rest = done.stdout.partition("\n")
    wall, rss, code = head.split()
    if code != "0":
        raise RuntimeError(f"{command} failed (exit {code}; its stderr is above)")
    return float(wall), int(rss) / 2**20, rest


def measure(n: int, where: Path) -> dict:
    subprocess.run([sys.executable, str(HERE / "cohort.py"), str(n), str(where)], check=True, capture_output=True)
    graph, single, on_spark = where / "graph.dggraph", where / "single.dgspec", where / "spark.dgspec"
    build = ["depgraph", "build", str(where / "metadata.csv"), "--kinship", str(where / "kinship.csv"),
             "--kinship-threshold", "0.177", "-o", str(graph)]  # fmt: skip
    subprocess.run(build, check=True, capture_output=True)
    wall, peak, _ = _timed(["depgraph", "derive", str(graph), "--mode", "relatedness", "-o", str(single)])
    folds = {}
    os.environ[SALT_ENV] = FOLDS["hash"]["salt"]
    for scheme, options in FOLD_OPTIONS.items():
        out = where / f"single-{scheme}.dgspec"
        folds[scheme] = (_timed(["depgraph", "folds", str(single), "--scheme", scheme, *options, "-o", str(out)]), out)
    spark_wall, spark_peak, report = _timed([sys.executable, __file__, "--child", str(graph), str(on_spark)])
    found = json.loads(report.strip().splitlines()[-1])
    from depgraph import read_spec

    same = {"spec": found["digests"]["spec"] == read_spec(single).digest}
    same |= {scheme: found["digests"][scheme] == read_spec(out).digest for scheme, (_, out) in folds.items()}
    return {
        "n_samples": n,
        "single_machine": {
            "derive (CLI, one process)": round(wall, 2),
            **{f"folds {scheme} (CLI, one process)": round(t[0][0], 2) for scheme, t in folds.items()},
            "peak_memory_gb": round(max(peak, *(t[0][1] for t in folds.values())), 2),
        },
        "spark": {
            "seconds": {k: round(v, 2) for k, v in found["seconds"].items()},
            "total_seconds": round(spark_wall, 2),
            "peak_memory_gb (Python driver)": round(spark_peak, 2),
            "peak_memory_gb (JVM)": found["jvm_peak_memory_gb"],
            "rounds": found["rounds"],
            "shuffle_partitions": found["shuffle_partitions"],
            "driver_memory": os.environ[MEMORY_ENV],
        },
        "same_digest": same,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="1e5,1e6")
    parser.add_argument("--output", default=str(RESULTS / "spark.json"))
    parser.add_argument("--driver-memory", default=DRIVER_MEMORY,
                        help="the Spark JVM's heap (in local mode the executors run in it): 1g, 4g")  # fmt: skip
    parser.add_argument("--child", nargs=2, help=argparse.SUPPRESS)
    args = parser.parse_args()
    os.environ[MEMORY_ENV] = args.driver_memory
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
