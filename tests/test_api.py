"""The Python API: the whole flow importable from ``depgraph``, imports one way, extras named when missing."""

from __future__ import annotations

import ast
import importlib
import subprocess
import sys

import networkx as nx
import pytest

import depgraph
from depgraph.errors import missing_extra
from tests.conftest import REPO

#: Every name the flow needs, and the module that defines it.
FLOW = {
    "from_metadata": "depgraph.ingest.metadata",
    "StudyGraph": "depgraph.graph.model",
    "add_kinship": "depgraph.ingest.builders",
    "add_spatial": "depgraph.ingest.builders",
    "add_duplicates": "depgraph.ingest.builders",
    "add_relations": "depgraph.ingest.builders",
    "combine": "depgraph.graph.assembly",
    "read_graph": "depgraph.graph.files",
    "write_graph": "depgraph.graph.files",
    "validate": "depgraph.validation.rules",
    "ValidationReport": "depgraph.validation.rules",
    "Issue": "depgraph.findings",
    "derive": "depgraph.derivation.groups",
    "Partition": "depgraph.derivation.partition",
    "SplitSpec": "depgraph.spec.model",
    "Constraint": "depgraph.spec.model",
    "FoldPlan": "depgraph.spec.model",
    "read_spec": "depgraph.spec.files",
    "write_spec": "depgraph.spec.files",
    "pseudonymize": "depgraph.spec.privacy",
    "assign_folds": "depgraph.folds.schemes",
    "FoldScheme": "depgraph.folds.schemes",
    "GroupedKFold": "depgraph.folds.schemes",
    "StratifiedGroupedKFold": "depgraph.folds.schemes",
    "GroupedHoldout": "depgraph.folds.schemes",
    "LeaveOneBlockOut": "depgraph.folds.schemes",
    "TimeOrdered": "depgraph.folds.schemes",
    "HashFolds": "depgraph.folds.schemes",
    "BalancedHoldout": "depgraph.folds.schemes",
    "exposure": "depgraph.audit.exposure",
    "ExposureReport": "depgraph.audit.exposure",
    "audit_duplicates": "depgraph.audit.duplicates",
    "write_report": "depgraph.audit.report",
    "evaluate": "depgraph.audit.evaluation",
    "EvaluationReport": "depgraph.audit.evaluation",
    "DepgraphError": "depgraph.errors",
    "ErrorCode": "depgraph.errors",
    "SpecCV": "depgraph.adapters.sklearn",
    "GroupKFold": "depgraph.adapters.sklearn",
    "StratifiedGroupKFold": "depgraph.adapters.sklearn",
    "FoldSampler": "depgraph.adapters.torch",
    "GroupBatchSampler": "depgraph.adapters.torch",
    "GroupDistributedSampler": "depgraph.adapters.torch",
}


@pytest.mark.parametrize("name", sorted(FLOW))
def test_each_step_of_the_flow_is_the_same_object_from_depgraph(name: str) -> None:
    if FLOW[name] == "depgraph.adapters.torch":
        pytest.importorskip("torch", reason="the torch extra is not installed (CI installs it)")
    module = importlib.import_module(FLOW[name])
    namespace: dict = {}
    exec(f"from depgraph import {name}", namespace)  # the spelling users write, lazy names included
    assert namespace[name] is getattr(module, name)
    assert name in depgraph.__all__ and name in dir(depgraph)


def test_every_exported_name_resolves() -> None:
    pytest.importorskip("torch", reason="the torch extra is not installed (CI installs it)")
    missing = [n for n in depgraph.__all__ if not hasattr(depgraph, n)]
    assert missing == []


def test_an_unknown_name_is_an_attribute_error() -> None:
    with pytest.raises(AttributeError, match="no attribute 'spec_cv'"):
        depgraph.spec_cv  # noqa: B018 - the attribute access is the test


def _top_level_imports(path) -> set[str]:
    """depgraph modules a module imports when it is loaded (module-level statements, try blocks included)."""
    tree = ast.parse(path.read_text())
    found: set[str] = set()
    statements = list(tree.body)
    while statements:
        node = statements.pop()
        if isinstance(node, ast.Try):
            statements += node.body
        elif isinstance(node, ast.ImportFrom) and node.module and node.module.startswith("depgraph"):
            found.add(node.module)
        elif isinstance(node, ast.Import):
            found |= {a.name for a in node.names if a.name.startswith("depgraph")}
    return found


def test_imports_run_one_way() -> None:
    """No module imports the package (``from depgraph import …``) when it loads, and the modules' imports form
    no cycle: each module can be the first one imported, in any order."""
    graph = nx.DiGraph()
    for path in sorted((REPO / "depgraph").rglob("*.py")):
        parts = path.relative_to(REPO).with_suffix("").parts
        name = ".".join(parts[:-1] if parts[-1] == "__init__" else parts)
        graph.add_node(name)
        for imported in _top_level_imports(path):
            graph.add_edge(name, imported)
    assert len(graph) > 25
    assert [m for m in graph.predecessors("depgraph") if m != "depgraph"] == []
    assert list(nx.simple_cycles(graph.subgraph(n for n in graph if n != "depgraph"))) == []


# --------------------------------------------------------------------------- missing extras
@pytest.mark.parametrize(
    ("extra", "module", "library", "names"),
    [
        ("sklearn", "sklearn", "scikit-learn", ["SpecCV", "StratifiedGroupKFold"]),
        ("torch", "torch", "PyTorch", ["FoldSampler", "GroupDistributedSampler"]),
    ],
)
def test_a_missing_extra_says_which_extra_to_install(extra: str, module: str, library: str, names: list[str]) -> None:
    """With the extra's module absent (``sys.modules[name] = None`` makes Python refuse to import it),
    ``import depgraph`` still works and every way to reach the adapter names the extra."""
    code = "\n".join(
        [
            "import sys",
            f"sys.modules[{module!r}] = None",
            "import depgraph",
            "depgraph.from_metadata, depgraph.SplitSpec, depgraph.assign_folds, depgraph.exposure",
            *(
                f"try:\n    from depgraph import {name}\nexcept ImportError as exc:\n"
                "    print(type(exc).__name__, exc.name, exc)"
                for name in names
            ),
            f"try:\n    import depgraph.adapters.{extra}\nexcept ImportError as exc:\n"
            "    print(type(exc).__name__, exc.name, exc)",
        ]
    )
    run = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=REPO)
    assert run.returncode == 0, run.stderr
    assert run.stdout.splitlines() == [
        *(f"ModuleNotFoundError {module} depgraph.{n} needs {library}: pip install 'depgraph[{extra}]'" for n in names),
        f"ModuleNotFoundError {module} depgraph.adapters.{extra} needs {library}: pip install 'depgraph[{extra}]'",
    ]


def test_a_module_missing_for_another_reason_is_reported_as_python_found_it() -> None:
    other = ModuleNotFoundError("No module named 'torchvision'", name="torchvision")
    assert missing_extra("depgraph.adapters.torch", "torch", other) is other
    inner = ModuleNotFoundError("No module named 'sklearn.utils'", name="sklearn.utils")
    assert "pip install 'depgraph[sklearn]'" in str(missing_extra("x", "sklearn", inner))


def test_without_matplotlib_the_report_says_how_to_mend_the_install(tmp_path) -> None:
    """matplotlib is in the base install; a broken environment without it gets one line, not a traceback."""
    code = "\n".join(
        [
            "import sys",
            "sys.modules['matplotlib'] = None",
            "import pandas as pd",
            "from depgraph import SplitSpec, derive, from_metadata, write_spec",
            "from depgraph.cli.main import main",
            "g = from_metadata(pd.DataFrame({'sample_id': ['S1', 'S2'], 'subject_id': ['P1', 'P2']}))",
            f"write_spec(SplitSpec.from_partition(derive(g, 'subject'), g), {str(tmp_path / 'spec.json')!r})",
            f"sys.exit(main(['report', {str(tmp_path / 'spec.json')!r}, '-o', {str(tmp_path / 'report.html')!r}]))",
        ]
    )
    run = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=REPO)
    assert run.returncode == 2, run.stderr
    assert run.stderr.splitlines() == [
        "depgraph: invalid_argument: the report's figures need matplotlib, which depgraph's install includes: "
        "pip install matplotlib"
    ]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["spec.json"]


def test_dir_lists_the_public_api_and_nothing_else() -> None:
    """``dir(depgraph)`` is ``__all__``: no module, helper or table of the package's own plumbing."""
    assert dir(depgraph) == sorted(depgraph.__all__)
    assert not {"PUBLIC", "LAZY", "importlib", "Any", "errors", "version", "missing_extra"} & set(dir(depgraph))


@pytest.mark.slow
def test_the_wheel_and_sdist_carry_types_license_changelog_and_metadata(tmp_path) -> None:
    """The distributions pip builds: the wheel holds ``py.typed``, the schemas and the LICENSE; its metadata the
    classifiers (Python versions, OS, typing), the SPDX license and the ``all`` extra; the sdist the changelog."""
    import subprocess
    import sys
    import tarfile
    import zipfile
    from pathlib import Path

    root = Path(__file__).resolve().parents[1]
    built = subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "-q", "-w", str(tmp_path), str(root)],
                           capture_output=True, text=True, timeout=600)  # fmt: skip
    assert built.returncode == 0, built.stderr
    (wheel,) = tmp_path.glob("depgraph-*.whl")
    with zipfile.ZipFile(wheel) as archive:
        names = archive.namelist()
        metadata = archive.read(next(n for n in names if n.endswith(".dist-info/METADATA"))).decode()
    assert "depgraph/py.typed" in names and "depgraph/schema/split-spec.schema.json" in names
    assert any(n.endswith(".dist-info/licenses/LICENSE") for n in names)
    for line in ("License-Expression: MIT", "Classifier: Typing :: Typed",
                 "Classifier: Operating System :: OS Independent", "Classifier: Programming Language :: Python :: 3.13",
                 "Provides-Extra: all"):  # fmt: skip
        assert line in metadata.splitlines(), line
    every = {line.split(";")[0] for line in metadata.splitlines() if line.endswith("extra == 'all'")}
    assert every == {"Requires-Dist: scikit-learn>=1.4", "Requires-Dist: torch>=2.1", "Requires-Dist: pyspark>=4"}
    sdist = subprocess.run([sys.executable, "-m", "build", "--sdist", "-o", str(tmp_path), str(root)],
                           capture_output=True, text=True, timeout=600)  # fmt: skip
    assert sdist.returncode == 0, sdist.stderr
    (archive,) = tmp_path.glob("depgraph-*.tar.gz")
    with tarfile.open(archive) as tar:
        held = {Path(n).name for n in tar.getnames()}
    assert {"CHANGELOG.md", "LICENSE", "py.typed", "split-spec.schema.json"} <= held
