"""Shared fixtures: where the splitGraph conformance cases live, small cohorts."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest

REPO = Path(__file__).resolve().parents[1]
#: splitGraph's own outputs, recorded once and kept with the tests (see its README.md).
CONFORMANCE = REPO / "tests" / "data" / "conformance"


#: The test files that take longest on two cores (minutes, measured with --durations), run first with --slow.
LONGEST_FILES = {"test_spark_engine.py": 7, "test_spark_folds.py": 6, "test_spark_validation.py": 2,
                 "test_spark_study.py": 1}  # fmt: skip


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption("--slow", action="store_true", help="also run the tests marked slow, as CI does")


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Tests marked slow (Spark's, whole commands in fresh processes, a real browser) are left out unless --slow:
    the suite a contributor runs often stays short, and CI runs every test."""
    if config.getoption("--slow"):
        # the longest files first: pytest-xdist hands out whole files in this order, so the short ones fill the
        # workers' last minutes instead of one worker starting a 7-minute Spark file while the other runs out of work
        items.sort(key=lambda item: -LONGEST_FILES.get(item.path.name, 0))
        return
    slow = [item for item in items if item.get_closest_marker("slow")]
    if slow:
        config.hook.pytest_deselected(items=slow)
        items[:] = [item for item in items if not item.get_closest_marker("slow")]


def conformance_cases() -> list[Path]:
    """Every splitGraph 0.2.0 case file (none found is an error, never an empty, passing run)."""
    cases = sorted(p for p in CONFORMANCE.glob("*.json") if p.name != "splitgraph_0_4_vignettes.json")
    if not cases:
        raise FileNotFoundError(f"no conformance cases in {CONFORMANCE}")
    return cases


def load_case(path: Path) -> dict:
    return json.loads(path.read_text())


def case_metadata(case: dict) -> pd.DataFrame:
    """The case's metadata rows as a table; empty strings mean missing."""
    frame = pd.DataFrame(case["metadata"], columns=case.get("columns"))
    return frame.replace("", None)


def as_partition(groups: dict[str, str]) -> list[list[str]]:
    """Group labels forgotten: the partition as sorted lists of sample ids."""
    members: dict[str, list[str]] = {}
    for sample, group in groups.items():
        members.setdefault(group, []).append(sample)
    return sorted(sorted(m) for m in members.values())


@pytest.fixture
def family_meta() -> pd.DataFrame:
    """Two families of two siblings, two visits each, plus an unrelated subject."""
    rows = []
    for subject, batch in (("P1", "B1"), ("P2", "B2"), ("P3", "B1"), ("P4", "B2"), ("P5", "B3")):
        for visit, t in (("T0", 0), ("T1", 1)):
            rows.append(
                {
                    "sample_id": f"{subject}-{visit}",
                    "subject_id": subject,
                    "batch_id": batch,
                    "timepoint_id": visit,
                    "time_index": t,
                }
            )
    return pd.DataFrame(rows)


@pytest.fixture
def family_kinship() -> pd.DataFrame:
    return pd.DataFrame({"id1": ["P1", "P3"], "id2": ["P2", "P4"], "kinship": [0.25, 0.24]})


@pytest.fixture(scope="session")
def spark():
    """A local Spark session for the test process (an xdist worker runs several Spark files: one start, not one a
    file): two cores, two shuffle partitions, set again for each test (a command run in-process may fit them to
    its data)."""
    from depgraph.spark.session import local_session

    # Settings that change no result, only how the JVM spends two cores shared by two test workers: the parallel
    # collector (G1's concurrent threads compete with the tasks for the cores), a larger cache of generated code (a
    # query shape seen before is not compiled again) and interpreted expressions (no code generated and compiled per
    # query: a fresh JVM has less to compile). Two sessions at once, as the two workers run them, each running the
    # conformance test four times: 289 and 299 s with Spark's defaults, 232 and 246 s with the first two, 217 s with
    # all three (docs/performance.md). Interpreted expressions alone had looked slower in two whole CI runs, on a
    # machine whose runs vary by a third; the paired runs are what count.
    settings = {"spark.sql.shuffle.partitions": "2", "spark.driver.extraJavaOptions": "-XX:+UseParallelGC",
                "spark.sql.codegen.cache.maxEntries": "5000", "spark.sql.codegen.wholeStage": "false",
                "spark.sql.codegen.factoryMode": "NO_CODEGEN"}  # fmt: skip
    session = local_session("local[2]", settings)
    yield session
    session.stop()


@pytest.fixture(autouse=True)
def _spark_partitions(request):
    """The shared session's shuffle partitions back at two before each test that uses it."""
    if "spark" in request.fixturenames:
        request.getfixturevalue("spark").conf.set("spark.sql.shuffle.partitions", "2")
    yield


# --------------------------------------------------------------------------- R and the package depgraphR
RSCRIPT = shutil.which("Rscript")
if RSCRIPT is None and os.environ.get("CI"):
    raise RuntimeError("CI must install R (r-base-core, r-cran-jsonlite, r-cran-digest, ...): .ci/run does")


@pytest.fixture(scope="session")
def r_library(tmp_path_factory) -> str:
    """depgraphR installed with ``R CMD INSTALL adapters/r`` into a library of its own (once per test process)."""
    library = tmp_path_factory.mktemp("r-library")
    # a copy: R CMD INSTALL compiles src/ in place, and test processes install at once
    source = tmp_path_factory.mktemp("r-source") / "depgraphR"
    shutil.copytree(REPO / "adapters" / "r", source, ignore=shutil.ignore_patterns("*.o", "*.so"))
    installed = subprocess.run(
        ["R", "CMD", "INSTALL", "--no-test-load", "-l", str(library), str(source)],
        capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    assert installed.returncode == 0, installed.stdout + installed.stderr
    return str(library)


def r_env(r_library: str) -> dict[str, str]:
    # a columnar spec's Parquet tables: R's arrow when installed, else this Python's pyarrow through reticulate
    libraries = os.pathsep.join(p for p in (r_library, os.environ.get("R_LIBS", "")) if p)
    return {**os.environ, "R_LIBS": libraries, "RETICULATE_PYTHON": sys.executable}


@pytest.fixture
def run_r(r_library, tmp_path):
    """Run R code with depgraphR attached; the finished process."""

    def run(code: str) -> subprocess.CompletedProcess:
        script = tmp_path / "probe.R"
        script.write_text(f"library(depgraphR)\n{code}\n")
        return subprocess.run([RSCRIPT, "--vanilla", str(script)], capture_output=True, text=True, timeout=120,
                              env=r_env(r_library))  # fmt: skip

    return run
