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
from depgraph.cli.main import ARROW_POOL

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
    "write spec (columnar)",
    "read spec (columnar)",
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
    timed("write spec (columnar)", lambda: write_spec(with_folds, workdir / "spec.dgspec"))
    timed("read spec (columnar)", lambda: read_spec(workdir / "spec.dgspec"))
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


def measure_target(n: int, workdir: Path) -> dict:
    """Run in a child process: the target path alone, for its peak memory (the full run's peak includes the
    spatial graph and the spec read back)."""
    sys.path.insert(0, str(HERE))
    from cohort import cohort_files

    from depgraph import derive, from_metadata, validate
    from depgraph.io.files import read_table
    from depgraph.spec.files import write_spec
    from depgraph.spec.model import SplitSpec

    files = cohort_files(n, workdir)
    start = time.perf_counter()
    graph = from_metadata(read_table(files.metadata, "metadata"), name=f"cohort {n}")
    graph = add_kinship(graph, read_table(files.kinship), 0.177)
    validate(graph)
    spec = SplitSpec.from_partition(derive(graph, "relatedness"), graph)
    write_spec(spec, workdir / "target.json")
    seconds = time.perf_counter() - start
    peak_kb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return {"n_samples": n, "target_seconds": round(seconds, 3), "target_peak_memory_gb": round(peak_kb / 1024**2, 2)}


def make_cohort_apart(n: int, workdir: Path) -> None:
    """Generate the cohort in a process of its own: a child of this process inherits its peak memory (Linux keeps
    the larger of the two for ``ru_maxrss`` across fork and exec), so this one stays small."""
    code = (
        f"import sys, pathlib; sys.path.insert(0, {str(HERE)!r}); from cohort import make_cohort; "
        f"make_cohort({n}, pathlib.Path({str(workdir)!r}))"
    )
    subprocess.run([sys.executable, "-c", code], check=True, capture_output=True)


def run_size(n: int, keep: Path | None, repeats: int = 1) -> dict:
    """Generate the cohort once, then measure it ``repeats`` times, each in a fresh process."""
    with tempfile.TemporaryDirectory() as tmp:
        workdir = (keep / str(n)) if keep else Path(tmp)
        make_cohort_apart(n, workdir)
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


# --------------------------------------------------------------------------- the user's path, as separate processes
#: The command line's steps, each its own process: build → graph file → validate → derive → spec file → folds → spec.
CLI_STEPS = ("build", "validate", "derive", "folds")
#: Each form's file names.
CLI_FILES = {"json": ("graph.json", "spec.json", "folds.json"), "columnar": ("graph.dggraph", "spec.dgspec",
             "folds.dgspec")}  # fmt: skip
DEPGRAPH = (sys.executable, "-m", "depgraph")
#: The fresh-process floor: start Python, read the metadata table, write its two id columns. Nothing less does it.
FLOOR = (
    "import sys, orjson, pandas as pd\n"
    "frame = pd.read_csv(sys.argv[1], dtype=str, engine='pyarrow')\n"
    "open(sys.argv[2], 'wb').write(orjson.dumps({'sample_id': frame['sample_id'].tolist(), "
    "'group_id': frame['subject_id'].tolist()}))\n"
)


#: What every step of the path must load before any work, whatever depgraph does: the table libraries and the
#: command-line parser (typer loads pydantic to convert its options). Four steps pay it four times.
IMPORTS = "import numpy, pyarrow.parquet, pandas, typer, typer._adapters"


def cli_commands(workdir: Path, form: str) -> dict[str, list[str]]:
    """The four commands of the user's path in ``form`` (json or columnar), run in ``workdir``."""
    graph, spec, folds = CLI_FILES[form]
    return {
        "build": ["build", "metadata.csv", "--kinship", "kinship.csv", "--kinship-threshold", "0.177", "-o", graph],
        "validate": ["validate", graph],
        "derive": ["derive", graph, "--mode", "relatedness", "-o", spec],
        "folds": ["folds", spec, "--scheme", "group-kfold", "-k", "5", "-o", folds],
    }


#: Child processes run as on a user's machine: with Python's bytecode caches (some sandboxes turn them off, and
#: every process would then compile depgraph's modules again, a fifth of a second). All of them — the floor and
#: the in-process target path too — allocate Arrow memory from malloc, as the command line does
#: (``depgraph.cli.main.ARROW_POOL``): the comparison is between the path's shapes, not between allocators.
CHILD_ENV = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"} | {ARROW_POOL[0]: ARROW_POOL[1]}


def timed_process(argv: list[str], cwd: Path, ok: tuple[int, ...] = (0,)) -> tuple[float, float]:
    """Wall-clock seconds and peak resident memory (GB) of one fresh process."""
    start = time.perf_counter()
    child = subprocess.Popen(argv, cwd=cwd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=CHILD_ENV)
    _, status, usage = os.wait4(child.pid, 0)
    seconds = time.perf_counter() - start
    code = os.waitstatus_to_exitcode(status)
    if code not in ok:
        raise RuntimeError(f"{argv} exited {code}: {child.stderr.read().decode()}")
    child.stderr.close()
    return seconds, usage.ru_maxrss / 1024**2


def cli_run(workdir: Path) -> dict:
    """One fresh run of the user's path in each form, the floor and the start-up, interleaved."""
    row: dict = {"seconds": {}, "peak_memory_gb": {}}
    row["floor_seconds"] = round(
        timed_process([sys.executable, "-c", FLOOR, "metadata.csv", "floor.json"], workdir)[0], 3
    )
    row["imports_seconds"] = round(timed_process([sys.executable, "-c", IMPORTS], workdir)[0], 3)
    for form in CLI_FILES:
        for name, args in cli_commands(workdir, form).items():
            seconds, peak = timed_process([*DEPGRAPH, *args], workdir, ok=(0, 1))  # validate: 1 = findings
            row["seconds"][f"{form} {name}"] = round(seconds, 3)
            row["peak_memory_gb"][f"{form} {name}"] = round(peak, 2)
        for file in CLI_FILES[form]:
            path = workdir / file
            size = (
                sum(p.stat().st_size for p in path.rglob("*") if p.is_file()) if path.is_dir() else path.stat().st_size
            )
            row.setdefault("file_mb", {})[file] = round(size / 1e6, 1)
    for flag in ("--help", "--version"):
        row["seconds"][f"depgraph {flag}"] = round(timed_process([*DEPGRAPH, flag], workdir)[0], 3)
    return row


def run_cli(n: int, keep: Path | None, repeats: int = 3) -> dict:
    """The user's path at ``n`` samples: each step a fresh process on files on disk, in both forms, ``repeats``
    times, against the in-process target path and the fresh-process floor measured between them (medians)."""
    sys.path.insert(0, str(HERE))

    with tempfile.TemporaryDirectory() as tmp:
        workdir = (keep / f"cli-{n}") if keep else Path(tmp)
        make_cohort_apart(n, workdir)
        code = (
            f"import json, sys; sys.path.insert(0, {str(HERE)!r}); from run import measure_target; "
            f"print(json.dumps(measure_target({n}, __import__('pathlib').Path({str(workdir)!r}))))"
        )
        runs, targets = [], []
        for module in ("build", "validate", "derive", "folds"):  # bytecode cached once, as after an install
            subprocess.run([sys.executable, "-c", f"import depgraph.cli.{module}"], env=CHILD_ENV, check=True)
        for _ in range(repeats):
            runs.append(cli_run(workdir))
            done = subprocess.run(
                [sys.executable, "-c", code], capture_output=True, text=True, check=True, env=CHILD_ENV
            )
            targets.append(json.loads(done.stdout.strip().splitlines()[-1]))
    median = statistics.median
    seconds = {k: round(median(r["seconds"][k] for r in runs), 3) for k in runs[0]["seconds"]}
    row = {
        "n_samples": n,
        "repeats": repeats,
        "seconds": seconds,
        "peak_memory_gb": {k: max(r["peak_memory_gb"][k] for r in runs) for k in runs[0]["peak_memory_gb"]},
        "file_mb": runs[0]["file_mb"],
        "floor_seconds": round(median(r["floor_seconds"] for r in runs), 3),
        "imports_seconds": round(median(r["imports_seconds"] for r in runs), 3),
        "in_process_target_seconds": round(median(t["target_seconds"] for t in targets), 3),
        "in_process_target_peak_memory_gb": max(t["target_peak_memory_gb"] for t in targets),
    }
    row["imports_of_the_steps_vs_target"] = round(
        len(CLI_STEPS) * row["imports_seconds"] / row["in_process_target_seconds"], 2
    )
    for form in CLI_FILES:
        total = round(sum(seconds[f"{form} {step}"] for step in CLI_STEPS), 3)
        row[f"{form}_total_seconds"] = total
        row[f"{form}_vs_target"] = round(total / row["in_process_target_seconds"], 2)
        row[f"{form}_vs_floor"] = round(total / row["floor_seconds"], 2)
    return row


def print_cli(rows: list[dict]) -> None:
    print(f"{'CLI step (fresh processes)':<28}" + "".join(f"{r['n_samples']:>14,}" for r in rows))
    for key in rows[0]["seconds"]:
        print(f"{key:<28}" + "".join(f"{r['seconds'][key]:>13.2f}s" for r in rows))
    for form in CLI_FILES:
        print(f"{form + ' path':<28}" + "".join(f"{r[form + '_total_seconds']:>13.2f}s" for r in rows))
        print(f"{'  / in-process target':<28}" + "".join(f"{r[form + '_vs_target']:>13.2f}x" for r in rows))
        print(f"{'  / fresh-process floor':<28}" + "".join(f"{r[form + '_vs_floor']:>13.2f}x" for r in rows))
    print(f"{'in-process target':<28}" + "".join(f"{r['in_process_target_seconds']:>13.2f}s" for r in rows))
    print(f"{'fresh-process floor':<28}" + "".join(f"{r['floor_seconds']:>13.2f}s" for r in rows))
    print(f"{'libraries loaded (a step)':<28}" + "".join(f"{r['imports_seconds']:>13.2f}s" for r in rows))
    print(f"{'  x steps / target':<28}" + "".join(f"{r['imports_of_the_steps_vs_target']:>13.2f}x" for r in rows))
    print(
        f"{'peak memory (largest step)':<28}" + "".join(f"{max(r['peak_memory_gb'].values()):>12.2f}GB" for r in rows)
    )


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
    parser.add_argument("--cli", action="store_true", help="the user's path as separate processes (cli.json)")
    args = parser.parse_args()
    if args.cli:
        rows = [run_cli(int(float(s)), args.keep, max(args.repeats, 1)) for s in args.sizes.split(",")]
        print_cli(rows)
        RESULTS.mkdir(exist_ok=True)
        (args.output or RESULTS / "cli.json").write_text(
            json.dumps({"machine": machine(), "rows": rows}, indent=2) + "\n"
        )
        return
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
