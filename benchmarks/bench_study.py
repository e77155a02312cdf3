"""``depgraph run`` against the fresh-process floor and the library path, paired, at 10^6 (and 10^7) samples.

    python benchmarks/bench_study.py --sizes 1e6 --repeats 5 [--keep DIR] [--output FILE]
    python benchmarks/bench_study.py --sizes 1e6 --repeats 1 --spark --output benchmarks/results/study-spark.json

The cohort of the CLI benchmark (benchmarks/cohort.py: 10^6 samples, about 2·10^5 kinship pairs) and a study file
declaring what the CLI benchmark's four commands declare: the metadata's roles, kinship at 0.177, relatedness
grouping, five grouped folds, a columnar spec. Each repeat runs three fresh processes, interleaved so a noisy machine
slows all three alike:

* the **floor** (``run.FLOOR``): start Python, read the metadata table with pandas, write two columns with orjson;
* **``depgraph run study.toml``**, as a user runs it (its wall time and peak resident memory);
* the **library path**: a process that loads the libraries first (untimed: it is the warm process), then times the
  same work through the public functions — ``from_metadata``, ``add_kinship``, ``validate``, ``derive``,
  ``SplitSpec.from_partition``, ``assign_folds``, ``write_spec`` — on the same files.

With ``--spark``, each round also runs the same study file saying ``engine = "spark"`` (``local[2]``, a 2 GB
driver): its wall time, the peak memory of its Python process (the JVM's is not counted), and whether its spec is the
single machine's (their digests, the study file's own record aside: the two files differ by the engine line).

Reported: medians of each, ``run / floor`` and ``run / library`` (the issue's goals: ≤ 2.5 and ≤ 1.2 at 10^6) and the
run's peak memory (≤ 2 GB at 10^6, ≤ 8 GB at 10^7). Results in benchmarks/results/study.json (or ``--output``).
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from run import CHILD_ENV, DEPGRAPH, FLOOR, RESULTS, machine, make_cohort_apart, timed_process  # noqa: E402

STUDY = """\
version = 1
name = "benchmark cohort"

[metadata]
path = "metadata.csv"

[metadata.columns]
sample_id = "sample_id"
subject_id = "subject_id"
batch_id = "batch_id"
site_id = "site_id"
study_id = "study_id"
timepoint_id = "timepoint_id"
time_index = "time_index"
outcome_id = "outcome_id"

[kinship]
path = "kinship.csv"
threshold = 0.177

[grouping]
mode = "relatedness"

[folds]
scheme = "group-kfold"
n_splits = 5

[outputs]
spec = "study.dgspec"
"""

#: The library path: the libraries loaded first (a warm process), then the work timed, printed in seconds.
LIBRARY = """\
import sys, time
import depgraph
from depgraph import add_kinship, assign_folds, derive, from_metadata, validate, write_spec, SplitSpec
import depgraph.validation.rules, depgraph.derivation.groups, depgraph.folds.schemes, depgraph.spec.files
start = time.perf_counter()
columns = {c: c for c in ("sample_id", "subject_id", "batch_id", "site_id", "study_id", "timepoint_id",
                          "time_index", "outcome_id")}
graph = from_metadata("metadata.csv", columns, name="benchmark cohort", mapping_complete=True)
graph = add_kinship(graph, "kinship.csv", 0.177)
validate(graph, n_splits=5)
spec = SplitSpec.from_partition(derive(graph, "relatedness"), graph)
write_spec(assign_folds(spec, "group-kfold", n_splits=5), "library.dgspec")
print(time.perf_counter() - start)
"""


#: The same study on Spark: a top-level key above the first table, and the session's settings.
SPARK_STUDY = (
    STUDY.replace('name = "benchmark cohort"', 'name = "benchmark cohort"\nengine = "spark"').replace(
        'spec = "study.dgspec"', 'spec = "spark.dgspec"'
    )
    + '\n[spark]\nconf = { "spark.driver.memory" = "2g" }\n'
)
SAME_SPEC = """\
import sys
from depgraph import read_spec
a, b = (read_spec(p).with_provenance(None) for p in sys.argv[1:])
print(a.digest == b.digest)
"""


def measure(n: int, workdir: Path, repeats: int, spark: bool = False) -> dict:
    """``repeats`` interleaved rounds of floor, run and library path (and the run on Spark) on the cohort of ``n``
    samples."""
    (workdir / "study.toml").write_text(STUDY)
    (workdir / "spark.toml").write_text(SPARK_STUDY)
    subprocess.run([*DEPGRAPH, "run", "--help"], env=CHILD_ENV, check=True, capture_output=True)  # bytecode cached
    rounds = []
    for _ in range(repeats):
        floor, _ = timed_process([sys.executable, "-c", FLOOR, "metadata.csv", "floor.json"], workdir)
        run, peak = timed_process([*DEPGRAPH, "run", "study.toml"], workdir)
        done = subprocess.run([sys.executable, "-c", LIBRARY], cwd=workdir, env=CHILD_ENV, capture_output=True,
                              text=True, check=True)  # fmt: skip
        rounds.append({"floor": floor, "run": run, "library": float(done.stdout.split()[-1]), "run_peak_gb": peak})
        if spark:
            rounds[-1]["spark_run"], rounds[-1]["spark_peak_gb"] = timed_process([*DEPGRAPH, "run", "spark.toml"],
                                                                                   workdir)  # fmt: skip
    median = {k: round(statistics.median(r[k] for r in rounds), 3) for k in ("floor", "run", "library")}
    if spark:
        median["spark_run"] = round(statistics.median(r["spark_run"] for r in rounds), 3)
        same = subprocess.run([sys.executable, "-c", SAME_SPEC, "study.dgspec", "spark.dgspec"], cwd=workdir,
                              env=CHILD_ENV, capture_output=True, text=True, check=True)  # fmt: skip
        spark_row = {"spark_same_spec": same.stdout.strip() == "True",
                     "spark_peak_memory_gb": round(max(r["spark_peak_gb"] for r in rounds), 2)}  # fmt: skip
    return {
        **(spark_row if spark else {}),
        "n_samples": n,
        "repeats": repeats,
        "seconds": median,
        "run_vs_floor": round(median["run"] / median["floor"], 2),
        "run_vs_library": round(median["run"] / median["library"], 2),
        "run_peak_memory_gb": round(max(r["run_peak_gb"] for r in rounds), 2),
        "rounds": [{k: round(v, 3) for k, v in r.items()} for r in rounds],
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="1e6")
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--keep", type=Path, default=None, help="keep the generated cohorts here")
    parser.add_argument("--output", type=Path, default=None)
    parser.add_argument("--spark", action="store_true", help="also run the study on Spark (local[2])")
    args = parser.parse_args()
    rows = []
    for size in args.sizes.split(","):
        n = int(float(size))
        with tempfile.TemporaryDirectory() as tmp:
            workdir = (args.keep / f"study-{n}") if args.keep else Path(tmp)
            if not (workdir / "metadata.csv").exists():
                make_cohort_apart(n, workdir)
            rows.append(measure(n, workdir, args.repeats, args.spark))
        row = rows[-1]
        print(f"{n:>12,} samples: run {row['seconds']['run']:.2f}s, floor {row['seconds']['floor']:.2f}s, library "
              f"{row['seconds']['library']:.2f}s; run/floor {row['run_vs_floor']}x, run/library "
              f"{row['run_vs_library']}x; run peak {row['run_peak_memory_gb']} GB")  # fmt: skip
        if args.spark:
            print(f"{'':>12}  on Spark: run {row['seconds']['spark_run']:.1f}s, the same spec: "
                  f"{row['spark_same_spec']}")  # fmt: skip
    RESULTS.mkdir(exist_ok=True)
    document = {"machine": machine(), "rows": rows}
    (args.output or RESULTS / "study.json").write_text(json.dumps(document, indent=2) + "\n")


if __name__ == "__main__":
    main()
