"""A study's tables read by the Spark engine, beside the single machine: the metadata with sample attributes and the
coordinates' neighbours within a radius.

    python benchmarks/bench_spark_tables.py --sizes 1e5,1e6 [--output FILE]

For each size the pipeline cohort (benchmarks/cohort.py) is generated, its metadata given three attribute columns
(an integer age, a float BMI with gaps, a sex code: a CSV's text typed as pandas types it). Timed, in this process:
the single machine's ``from_metadata`` of the CSV and ``add_spatial`` of the coordinates at radius 1 (about 0.8
neighbours a sample), then, in ``local[2]`` with 2 GB of driver memory, Spark's ``tables.from_metadata`` and
``tables.add_spatial`` of the same files (each forced: its checks and tables are computed when it returns). The
record of each step (samples, points, pairs kept) must be the same on both engines. Results go to
benchmarks/results/spark-tables.json.
"""

from __future__ import annotations

import argparse
import json
import platform
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import pandas as pd

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
from cohort import make_cohort  # noqa: E402

RESULTS = HERE / "results"


def timed(times: dict[str, float], label: str, step):  # type: ignore[no-untyped-def]
    """``step()``, its seconds kept in ``times[label]`` and printed."""
    start = time.perf_counter()
    result = step()
    times[label] = round(time.perf_counter() - start, 3)
    print(f"  {label}: {times[label]:.2f} s", file=sys.stderr, flush=True)
    return result


def measure(n: int, where: Path, spark) -> dict:  # type: ignore[no-untyped-def]
    from depgraph import add_spatial, from_metadata
    from depgraph.spark import tables

    files = make_cohort(n, where)
    rng = np.random.default_rng(1)
    meta = pd.read_csv(files.metadata, dtype=str)
    bmi = np.round(rng.normal(25, 4, n), 1).astype(str)
    bmi[rng.random(n) < 0.05] = ""
    meta = meta.assign(
        age=rng.integers(18, 90, n).astype(str), bmi=bmi, sex=np.array(["F", "M"])[rng.integers(0, 2, n)]
    )
    metadata = where / "metadata-attributes.csv"
    meta.to_csv(metadata, index=False)
    single: dict[str, float] = {}
    graph = timed(single, "from_metadata", lambda: from_metadata(metadata))
    graph = timed(single, "add_spatial", lambda: add_spatial(graph, files.coords, 1.0))
    on_spark: dict[str, float] = {}
    spark_graph = timed(on_spark, "from_metadata", lambda: tables.from_metadata(metadata, spark=spark))
    spark_graph = timed(on_spark, "add_spatial", lambda: tables.add_spatial(spark_graph, files.coords, 1.0))
    record, spark_record = graph.history[-1], spark_graph.history[-1]
    same = {key: record[key] == spark_record[key] for key in ("points", "pairs_kept", "metric", "radius")}
    attributes = sorted(c for c in spark_graph.nodes["Sample"].columns if c not in ("row", "key"))
    return {"n_samples": n, "pairs_kept": record["pairs_kept"], "same_record": same, "spark_attributes": attributes,
            "single_seconds": single, "spark_seconds": on_spark}  # fmt: skip


def run(doc: str, measure_size, output: Path) -> None:  # type: ignore[no-untyped-def]
    """A Spark benchmark's command line: ``measure_size(n, folder, spark)`` for each of ``--sizes`` in one
    ``local[2]`` session with a 2 GB driver, the rows written to ``--output`` (default ``output``) under the first
    paragraph of ``doc``."""
    parser = argparse.ArgumentParser(description=doc.splitlines()[0])
    parser.add_argument("--sizes", default="1e5,1e6")
    parser.add_argument("--output", default=str(output))
    args = parser.parse_args()
    from depgraph.spark.session import local_session

    spark = local_session("local[2]", {"spark.driver.memory": "2g"})
    rows = []
    with tempfile.TemporaryDirectory() as folder:
        for size in args.sizes.split(","):
            n = int(float(size))
            print(f"{n} samples", file=sys.stderr, flush=True)
            rows.append(measure_size(n, Path(folder) / str(n), spark))
    spark.stop()
    machine = {"python": platform.python_version(), "machine": platform.machine()}
    Path(args.output).write_text(json.dumps({"what": doc.split("\n\n")[0], "machine": machine, "rows": rows},
                                            indent=1) + "\n")  # fmt: skip
    print(json.dumps(rows, indent=1))


def main() -> None:
    run(__doc__, measure, RESULTS / "spark-tables.json")


if __name__ == "__main__":
    main()
