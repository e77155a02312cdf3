"""Start-up: ``depgraph --help`` and ``--version`` load no library beyond typer, and each command loads what it
uses and nothing it does not (checked with ``sys.modules`` in a fresh process, as a user's shell runs it).

Times are measured in benchmarks/ (``python benchmarks/run.py --startup``), never asserted here.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from depgraph.cli.main import COMMANDS, command

WORKTREE = Path(__file__).resolve().parents[1]
#: Libraries a command may load only when it uses them.
LIBRARIES = ("pandas", "pandas.plotting", "numpy", "pyarrow", "scipy", "pydantic", "jsonschema", "matplotlib",
             "networkx", "sklearn", "torch", "rich", "depgraph.spec.model")  # fmt: skip
#: Runs the CLI in-process, then writes which of LIBRARIES were loaded (to the file in DEPGRAPH_LOADED).
RUN = (
    "import json, os, sys\n"
    "from depgraph.cli.main import main\n"
    "code = main(sys.argv[1:])\n"
    f"loaded = [m for m in {LIBRARIES!r} if m in sys.modules]\n"
    "open(os.environ['DEPGRAPH_LOADED'], 'w').write(json.dumps(loaded))\n"
    "sys.exit(code)\n"
)


def loaded(tmp_path: Path, *args: str) -> tuple[int, list[str]]:
    """Exit code and libraries loaded by ``depgraph ARGS`` run in a fresh process in ``tmp_path``."""
    record = tmp_path / "loaded.json"
    env = {**os.environ, "PYTHONPATH": str(WORKTREE), "DEPGRAPH_LOADED": str(record), "COLUMNS": "80"}
    done = subprocess.run(
        [sys.executable, "-c", RUN, *args], cwd=tmp_path, env=env, capture_output=True, text=True, timeout=120
    )
    assert record.exists(), done.stderr
    return done.returncode, json.loads(record.read_text())


@pytest.mark.parametrize("args", [["--help"], ["--version"], []], ids=["help", "version", "no-arguments"])
def test_help_and_version_load_no_library(tmp_path, args):
    code, libraries = loaded(tmp_path, *args)
    assert code == 0
    assert libraries == [], f"depgraph {' '.join(args)} loaded {libraries}"


META = "sample_id,subject_id,batch_id,outcome_id\n" + "".join(
    f"S{i},P{i // 2},B{i % 3},{'case' if i % 4 == 0 else 'control'}\n" for i in range(24)
)

#: Each step of the user's path, and the libraries it must not load: it does not use them.
STEPS = [
    (["build", "meta.csv", "-o", "g.json"], {"scipy", "jsonschema", "matplotlib", "networkx", "sklearn", "torch"}),
    (["run", "study.toml"], {"matplotlib", "networkx", "sklearn", "torch"}),  # no report asked: nothing drawn
    (["validate", "g.json"], {"matplotlib", "networkx", "sklearn", "torch", "depgraph.spec.model"}),
    (["derive", "g.json", "--mode", "subject", "-o", "s.json"], {"matplotlib", "networkx", "sklearn", "torch"}),
    (
        ["folds", "s.json", "--scheme", "group-kfold", "-k", "3", "-o", "f.json"],
        {"scipy", "matplotlib", "sklearn", "torch"},
    ),
    (["validate", "f.json"], {"matplotlib", "networkx", "sklearn", "torch"}),
    (["export", "f.json", "--to", "fold-table", "-o", "t.csv"], {"matplotlib", "networkx", "sklearn", "torch"}),
    (["build", "meta.csv", "--help"], {"matplotlib", "sklearn", "torch"}),
]


#: A study file declaring the same path, without a report.
STUDY = """version = 1
[metadata]
path = "meta.csv"
[metadata.columns]
sample_id = "sample_id"
subject_id = "subject_id"
batch_id = "batch_id"
outcome_id = "outcome_id"
[grouping]
mode = "subject"
[folds]
scheme = "group-kfold"
n_splits = 3
[outputs]
spec = "run.json"
"""


@pytest.mark.slow  # a fresh process a command: ~11 s; CI runs it (--slow)
def test_each_command_loads_only_what_it_uses(tmp_path):
    (tmp_path / "meta.csv").write_text(META)
    (tmp_path / "study.toml").write_text(STUDY)
    for args, never in STEPS:
        code, libraries = loaded(tmp_path, *args)
        assert code == 0, args
        assert not never & set(libraries), f"depgraph {' '.join(args)} loaded {sorted(never & set(libraries))}"
    # and the report, which draws, does load matplotlib: the check above can see a library being loaded
    code, libraries = loaded(tmp_path, "report", "f.json", "-o", "r.html")
    assert code == 0 and "matplotlib" in libraries
    # validating a spec loads the spec's model, which validating a graph does not
    assert "depgraph.spec.model" in loaded(tmp_path, "validate", "f.json")[1]


def test_the_command_list_is_each_commands_own_first_sentence():
    # `depgraph --help` lists the commands from the registry, without loading them: it must say what they say
    for name, (module, short) in COMMANDS.items():
        loaded_command = command(name)
        assert loaded_command.name == name, module
        assert loaded_command.get_short_help_str() == short, name


#: Prints the memory pool Arrow allocates from in a fresh process, after ``{before}``.
POOL = "{before}\nimport pyarrow as pa\nprint(pa.default_memory_pool().backend_name)\n"


def arrow_pool(before: str, given: str | None) -> str:
    env = {k: v for k, v in os.environ.items() if k != "ARROW_DEFAULT_MEMORY_POOL"}
    env["PYTHONPATH"] = str(WORKTREE)
    if given is not None:
        env["ARROW_DEFAULT_MEMORY_POOL"] = given
    code = POOL.format(before=before)
    done = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    return done.stdout.strip()


@pytest.mark.parametrize(("given", "expected"), [(None, "system"), ("mimalloc", "mimalloc")])
def test_the_command_line_allocates_arrow_memory_from_malloc_unless_told_otherwise(given, expected):
    assert arrow_pool("from depgraph.cli.main import prepare_process; prepare_process()", given) == expected


def test_the_library_leaves_arrows_memory_pool_alone():
    assert arrow_pool("import depgraph, depgraph.cli.main", None) == arrow_pool("pass", None)
