"""The command line as a newcomer meets it (issue 11): ``--version``, ``python -m depgraph``, ``--help`` at 80 columns,
one name for one thing across subcommands with the old spellings deprecated, and messages that name CLI options."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from depgraph.cli import main

WORKTREE = Path(__file__).resolve().parents[1]
#: The version as the package file declares it (pyproject reads it from there), read as text.
VERSION = re.search(r'^__version__ = "([^"]+)"', (WORKTREE / "depgraph" / "__init__.py").read_text(), re.M).group(1)


def process(*args: str, cwd: Path, **env: str) -> subprocess.CompletedProcess[str]:
    """``args`` run in a separate process with the worktree's package first on the path."""
    environment = {**os.environ, "PYTHONPATH": str(WORKTREE), **env}
    return subprocess.run(
        [sys.executable, *args], cwd=cwd, env=environment, capture_output=True, text=True, timeout=120, check=False
    )


CONSOLE = ("-c", "import sys; from depgraph.cli import main; sys.exit(main(sys.argv[1:]))")


# --------------------------------------------------------------------------- --version and python -m depgraph
@pytest.mark.parametrize("entry", [("-m", "depgraph"), CONSOLE], ids=["python-m-depgraph", "depgraph"])
def test_version(tmp_path, entry):
    done = process(*entry, "--version", cwd=tmp_path)
    assert (done.returncode, done.stdout, done.stderr) == (0, f"depgraph {VERSION}\n", "")


@pytest.mark.parametrize("args", [["--help"], ["validate", "missing.json"]], ids=["help", "bad-input"])
def test_python_m_depgraph_behaves_as_depgraph(tmp_path, args):
    # Same output, same exit code: the help, and a bad input's one line.
    as_module = process("-m", "depgraph", *args, cwd=tmp_path, COLUMNS="80")
    as_command = process(*CONSOLE, *args, cwd=tmp_path, COLUMNS="80")
    seen = (as_module.returncode, as_module.stdout, as_module.stderr)
    assert seen == (as_command.returncode, as_command.stdout, as_command.stderr)
    if args == ["--help"]:
        assert as_module.returncode == 0 and "Usage: depgraph" in as_module.stdout
    else:
        assert seen == (2, "", "depgraph: io: file 'missing.json' does not exist\n")


def test_version_in_process(capsys):
    assert main(["--version"]) == 0
    assert capsys.readouterr().out == f"depgraph {VERSION}\n"
