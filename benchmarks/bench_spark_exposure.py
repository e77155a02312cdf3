"""Exposure on the Spark engine beside the single machine: which declared dependencies a spec keeps whole, leaves
spread over groups and lets cross its folds.

    python benchmarks/bench_spark_exposure.py --sizes 1e5,1e6 [--output FILE]

For each size the pipeline cohort (benchmarks/cohort.py: subjects, kinship, batches, sites, studies, timepoints,
duplicates) is generated and its graph built on one machine; the spec groups by subject and carries five grouped
folds, so kinship, duplicates and every block cross. Timed, in this process: the single machine's ``exposure`` of
the graph and spec; then, in ``local[2]`` with 2 GB of driver memory, the graph and the spec read by Spark from their
columnar files (not timed) and ``depgraph.exposure`` of the two (timed: every count and example computed when it
returns). The two reports must be equal (table value for value; block balance to 1e-12). Results go to
benchmarks/results/spark-exposure.json.
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
from bench_spark_tables import RESULTS, run, timed  # noqa: E402
from cohort import make_cohort  # noqa: E402


def measure(n: int, where: Path, spark) -> dict:  # type: ignore[no-untyped-def]
    from depgraph import (
        SplitSpec,
        add_duplicates,
        add_kinship,
        assign_folds,
        derive,
        exposure,
        from_metadata,
        write_graph,
        write_spec,
    )
    from depgraph.spark.graph import read_graph
    from depgraph.spark.spec import read_spec

    files = make_cohort(n, where)
    graph = add_duplicates(add_kinship(from_metadata(files.metadata), files.kinship, 0.1), files.duplicates)
    spec = assign_folds(SplitSpec.from_partition(derive(graph, "subject"), graph), "group-kfold", n_splits=5, seed=1)
    write_graph(graph, where / "graph.dggraph")
    write_spec(spec, where / "spec.dgspec")
    times: dict[str, float] = {}
    single = timed(times, "single", lambda: exposure(graph, spec))
    spark_graph, spark_spec = read_graph(where / "graph.dggraph", spark), read_spec(where / "spec.dgspec", spark)
    on_spark = timed(times, "spark", lambda: exposure(spark_graph, spark_spec))
    same_table = bool(on_spark.table.astype(object).equals(single.table.astype(object)))
    figures = ["chi2", "p_value", "cramers_v"]
    same_blocks = bool(np.allclose(on_spark.blocks[figures].to_numpy(float), single.blocks[figures].to_numpy(float),
                                   rtol=1e-12))  # fmt: skip
    crossing = single.table.set_index("relation")["crossing"]
    return {"n_samples": n, "crossing": {k: int(v) for k, v in crossing.items()}, "same_table": same_table,
            "same_blocks": same_blocks, "seconds": times}  # fmt: skip


def main() -> None:
    run(__doc__, measure, RESULTS / "spark-exposure.json")


if __name__ == "__main__":
    main()
