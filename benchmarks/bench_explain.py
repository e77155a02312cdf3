"""``depgraph why`` and ``depgraph explain`` at biobank scale: the whole command, from the graph file on disk to
the printed answer.

    python benchmarks/bench_explain.py [--sizes 1e6] [--repeats 3] [--output FILE]

For each size the pipeline cohort (benchmarks/cohort.py: subjects with several samples, kinship between siblings,
batches, sites, studies, timepoints, duplicates) is generated and its graph written in columnar form
(``graph.dggraph``). Timed, each in a fresh process (the median of ``--repeats`` runs): ``depgraph why`` of two
samples of related subjects under relatedness (a chain through kinship), of two samples of one batch over every
relation with ``--all-paths 5`` (the shortest chains through batches, sites, studies and timepoints), and of two
samples that no kinship joins (not connected under relatedness); ``depgraph explain`` of the related samples' group
under relatedness (a family) and of one sample over every relation (batches, sites and studies join the whole
cohort into one group: every bridge of it); ``depgraph neighbors`` of a subject and ``depgraph query`` of the kinship
edges; ``depgraph compare`` of three groupings (no time is aimed at for it: it derives each grouping and its
exposure). Results go to benchmarks/results/explain.json.
"""

from __future__ import annotations

import argparse
import gc
import json
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pandas as pd

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
from cohort import make_cohort  # noqa: E402

RESULTS = HERE / "results"


def questions(files) -> dict[str, list[str]]:  # type: ignore[no-untyped-def]
    """Questions about the cohort: related samples, one batch's samples, samples no kinship joins; two groups."""
    meta = pd.read_csv(files.metadata, dtype=str)
    kin = pd.read_csv(files.kinship, dtype=str)
    first = meta.set_index("subject_id")["sample_id"].groupby(level=0).first()
    related = [first[kin["id1"].iloc[0]], first[kin["id2"].iloc[0]]]
    batch = meta[meta["batch_id"] == meta["batch_id"].iloc[0]]["sample_id"].iloc[:2].tolist()
    kinless = sorted(set(meta["subject_id"]) - set(kin["id1"]) - set(kin["id2"]))
    apart = [first[kinless[0]], first[kinless[1]]]
    return {
        "why: related, --mode relatedness": ["why", *related, "--mode", "relatedness"],
        "why: one batch, every relation, --all-paths 5": ["why", *batch, "--all-paths", "5"],
        "why: not connected, --mode relatedness": ["why", *apart, "--mode", "relatedness"],
        "explain: a family, --mode relatedness": ["explain", related[0], "--mode", "relatedness"],
        "explain: the whole cohort, every relation": ["explain", related[0]],
        "neighbors: a subject": ["neighbors", kin["id1"].iloc[0]],
        "query: the kinship edges, first 5": ["query", "--relation", "subject_related_to", "--limit", "5"],
        "compare: subject, relatedness, batch": ["compare", "--modes", "subject,relatedness,batch"],
    }


def measure(n: int, where: Path, repeats: int) -> dict:
    from depgraph import add_duplicates, add_kinship, from_metadata, write_graph

    files = make_cohort(n, where)
    graph = add_duplicates(add_kinship(from_metadata(files.metadata), files.kinship, 0.1), files.duplicates)
    path = where / "graph.dggraph"
    write_graph(graph, path)
    sizes = {"n_nodes": graph.n_nodes, "n_edges": graph.n_edges}
    del graph  # the commands timed are not to share the machine's memory with this process's copy
    gc.collect()
    seconds, answers = {}, {}
    for name, args in questions(files).items():
        runs = []
        for _ in range(repeats):
            start = time.perf_counter()
            command, *rest = args
            done = subprocess.run([sys.executable, "-m", "depgraph", command, str(path), *rest], check=True,
                                  capture_output=True, text=True)  # fmt: skip
            runs.append(time.perf_counter() - start)
        seconds[name] = round(statistics.median(runs), 3)
        answers[name] = done.stdout.splitlines()[0]
    return {"n_samples": n, **sizes, "seconds": seconds, "first_lines": answers}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="1e6")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--output", type=Path, default=RESULTS / "explain.json")
    options = parser.parse_args()
    results = []
    for size in options.sizes.split(","):
        with tempfile.TemporaryDirectory() as where:
            results.append(measure(int(float(size)), Path(where), options.repeats))
            print(json.dumps(results[-1], indent=1))
    options.output.write_text(json.dumps({"benchmark": "explain", "results": results}, indent=1) + "\n")


if __name__ == "__main__":
    main()
