"""Validation on the Spark engine beside the single machine: every finding of a study graph, counted in Spark.

    python benchmarks/bench_spark_validate.py --sizes 1e5,1e6 [--output FILE]

For each size the pipeline cohort (benchmarks/cohort.py: subjects with several samples, kinship, batches, sites,
studies, timepoints, duplicates) is generated and its graph built on one machine. Timed, in this process: the single
machine's ``validate(graph, n_splits=5)``; then, in ``local[2]`` with 2 GB of driver memory, the graph read by Spark
from its columnar file (not timed) and ``depgraph.validate`` of it (timed: every rule answered, each mode's group
shape derived in Spark, every finding's ids collected). The two reports must be equal byte for byte (``--json``).
Results go to benchmarks/results/spark-validate.json.
"""

from __future__ import annotations

import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
from bench_spark_tables import RESULTS, run, timed  # noqa: E402
from cohort import make_cohort  # noqa: E402


def measure(n: int, where: Path, spark) -> dict:  # type: ignore[no-untyped-def]
    from depgraph import add_duplicates, add_kinship, from_metadata, validate, write_graph
    from depgraph.spark.graph import read_graph

    files = make_cohort(n, where)
    graph = add_duplicates(add_kinship(from_metadata(files.metadata), files.kinship, 0.1), files.duplicates)
    write_graph(graph, where / "graph.dggraph")
    times: dict[str, float] = {}
    single = timed(times, "single", lambda: validate(graph, n_splits=5))
    spark_graph = read_graph(where / "graph.dggraph", spark)
    on_spark = timed(times, "spark", lambda: validate(spark_graph, n_splits=5))
    same = on_spark.to_json_bytes() == single.to_json_bytes()
    return {"n_samples": n, "findings": single.counts(), "same_report": same, "seconds": times}


def main() -> None:
    run(__doc__, measure, RESULTS / "spark-validate.json")


if __name__ == "__main__":
    main()
