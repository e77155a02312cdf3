"""The docs say what the code does: codes, relations and the test command agree."""

from __future__ import annotations

import ast
import contextlib
import importlib.util
import io
import os
import re
import subprocess
from pathlib import Path

import pytest

import depgraph
from depgraph.errors import ErrorCode
from depgraph.findings import DERIVATION_FINDINGS as FINDINGS
from depgraph.findings import VALIDATION_FINDINGS as CATALOGUE
from depgraph.vocab import MODES, RELATIONS
from tests.conftest import REPO

DOCS = REPO / "docs"


def test_every_validation_and_derivation_code_is_documented():
    text = (DOCS / "validation.md").read_text()
    for code, (level, severity, _) in CATALOGUE.items():
        assert re.search(rf"\| `{code}` \| {level} \| {severity} \|", text), code
    for code, (severity, _) in FINDINGS.items():
        assert re.search(rf"\| `{code}` \| {severity} \|", text), code


def test_every_error_code_is_documented():
    text = (DOCS / "errors.md").read_text()
    for code in ErrorCode:
        assert f"| `{code.value}` |" in text, code


def test_every_warning_code_is_documented():
    # the codes depgraph's warnings are raised with, found where they are raised
    raised = set()
    for path in (REPO / "depgraph").rglob("*.py"):
        source = path.read_text()
        raised |= set(re.findall(r"(?:DepgraphWarning|SplitGraphWarning)\(\s*\"([a-z_]+)\"", source))
        raised |= set(re.findall(r"notes\.add\(\s*\"([a-z_]+)\"", source))
    assert {"splitgraph_export_drops", "splitgraph_schema_version", "few_groups_in_class"} <= raised  # the scan works
    text = (DOCS / "errors.md").read_text().split("## Warnings", 1)[1].split("\n## ", 1)[0]
    for code in raised:
        assert f"| `{code}` |" in text, code


def test_relation_and_mode_tables_match_the_vocabulary():
    text = (DOCS / "vocabulary.md").read_text()
    for rel in RELATIONS:
        arrow = "→" if rel.directed else "—"
        assert f"| `{rel.name}` | {rel.source.value} {arrow} {rel.target.value} |" in text, rel.name
    for mode in MODES:
        assert f"| `{mode.name}`" in text and mode.recommended_resampling in text


def test_the_readme_reads_in_five_minutes():
    """A newcomer's page: at most 250 lines; each topic's page is linked from it."""
    readme = (REPO / "README.md").read_text()
    assert len(readme.splitlines()) <= 250
    for page in DOCS.glob("*.md"):
        assert f"(docs/{page.name})" in readme, page.name


def test_ci_runs_the_readme_test_command():
    readme = (REPO / "README.md").read_text()
    quickstart = readme.split("## Quickstart", 1)[1].split("```bash", 1)[1].split("```", 1)[0]
    commands = [line.strip() for line in quickstart.strip().splitlines()]
    assert len(commands) == 2 and commands[0].endswith("depgraph demo")
    ci = [line.strip() for line in (REPO / ".ci" / "run").read_text().splitlines()]
    assert f"{commands[1]} --slow" in ci  # every test, the slow ones included
    assert "```bash\npython -m pytest --slow\n```" in readme.split("## Development", 1)[1]


def test_documented_pseudonym_test_vector_holds():
    from depgraph.spec.privacy import pseudonym

    text = (DOCS / "spec.md").read_text()
    key, sample, expected = re.search(r"Test vector: key `([^`]+)`, id `([^`]+)` → `([0-9a-f]+)`", text).groups()
    assert pseudonym(key, sample) == expected


def test_documented_hash_fold_test_vectors_hold():
    import hashlib

    from depgraph.folds.schemes import hash_fold

    rows = re.findall(r"\| (`[^`]*`|\(empty\)) \| `([^`]+)` \| (\d+) \| `([0-9a-f]{64})` \| (\d+) \|",
                      (DOCS / "folds.md").read_text())  # fmt: skip
    assert len(rows) == 4
    for salt, key, k, digest, fold in rows:
        salt = "" if salt == "(empty)" else salt.strip("`")
        assert hashlib.sha256((salt + key).encode()).hexdigest() == digest
        assert hash_fold(salt, key, int(k)) == int(fold)


# --------------------------------------------------------------------------- the README's Python walkthrough
def readme_python_blocks(section: str) -> list[str]:
    """The ```python blocks of one README section (from its ``## `` heading to the next)."""
    readme = (REPO / "README.md").read_text()
    body = readme.split(f"\n## {section}\n", 1)[1].split("\n## ", 1)[0]
    return re.findall(r"^```python\n(.*?)^```$", body, flags=re.S | re.M)


@pytest.fixture(scope="module")
def walkthrough(tmp_path_factory: pytest.TempPathFactory) -> dict:
    """The walkthrough's first block run as written in an empty folder, then (with PyTorch) its torch block in the
    same namespace; what it printed is kept under ``"printed"``."""
    blocks = readme_python_blocks("The Python path, end to end")
    assert len(blocks) == 2 and "import depgraph" in blocks[0] and "FoldSampler" in blocks[1]
    folder = tmp_path_factory.mktemp("walkthrough")
    namespace: dict = {"__name__": "walkthrough"}
    printed = io.StringIO()
    here = os.getcwd()
    os.chdir(folder)
    try:
        with contextlib.redirect_stdout(printed):
            exec(compile(blocks[0], "README.md (walkthrough)", "exec"), namespace)
            if importlib.util.find_spec("torch") is not None:
                exec(compile(blocks[1], "README.md (torch samplers)", "exec"), namespace)
    finally:
        os.chdir(here)
    namespace["printed"], namespace["folder"] = printed.getvalue(), folder
    return namespace


def test_readme_python_walkthrough_runs(walkthrough: dict) -> None:
    from depgraph.spec.files import read_spec

    folder = walkthrough["folder"]
    for written in ("metadata.csv", "kinship.csv", "features.parquet", "graph.json", "spec.json", "report.html"):
        assert (folder / written).stat().st_size > 0, written
    spec = read_spec(folder / "spec.json")
    assert spec.folds is not None and len(spec.folds.splits) == 5 and spec.constraint.mode == "composite"
    assert len(walkthrough["scores"]["test_score"]) == 5
    assert walkthrough["result"].nothing_crosses
    printed = walkthrough["printed"]
    for issue in walkthrough["report"].issues:  # print(report) lists every finding
        assert issue.code in printed
    assert repr(walkthrough["partition"]) in printed and str(spec).splitlines()[0] in printed
    assert walkthrough["result"].verdict() in printed


def test_readme_torch_samplers_run(walkthrough: dict) -> None:
    pytest.importorskip(
        "torch", reason="the torch extra is not installed (CI installs it): its README block is skipped"
    )
    spec, ids = walkthrough["spec"], walkthrough["X"].index.to_numpy()
    train_ids = set(spec.sample_ids[spec.folds.splits[0].train(spec.n_samples)])
    assert {ids[row] for row in walkthrough["train"]} == train_ids
    assert {ids[row] for batch in walkthrough["batches"] for row in batch} == train_ids


def test_readme_imports_what_depgraph_exports_from_depgraph() -> None:
    """Every ```python block of the README and the docs imports a name ``depgraph`` exports from ``depgraph``
    itself, and every name it imports from ``depgraph`` is one it exports."""
    pages = "\n".join(p.read_text() for p in [REPO / "README.md", *sorted(DOCS.glob("*.md"))])
    imports = [
        node
        for block in re.findall(r"^```python\n(.*?)^```$", pages, flags=re.S | re.M)
        for node in ast.walk(ast.parse(block))
        if isinstance(node, ast.ImportFrom) and (node.module or "").split(".")[0] == "depgraph"
    ]
    assert any(node.module == "depgraph" for node in imports)
    for node in imports:
        names = [alias.name for alias in node.names]
        if node.module == "depgraph":
            assert set(names) <= set(depgraph.__all__), names
        else:
            assert not set(names) & set(depgraph.__all__), f"from {node.module} import {names}: use from depgraph"


# --------------------------------------------------------------------------- the study file's page
def test_the_study_file_page_lists_every_key_and_its_examples_are_valid():
    import tomllib

    from depgraph.study.files import study_document
    from depgraph.study.sections import TABLES

    text = (DOCS / "study-file.md").read_text()
    headings = {"metadata": "### `[metadata]`", "kinship": "### `[kinship]`", "duplicates": "### `[duplicates]`",
                "spatial": "### `[spatial]`", "relations": "### `[[relations]]`", "grouping": "### `[grouping]`",
                "folds": "### `[folds]`", "outputs": "### `[outputs]`", "spark": "### `[spark]`"}  # fmt: skip
    assert set(headings) == set(TABLES)
    for table, model in TABLES.items():
        section = text.split(headings[table], 1)[1].split("\n### ", 1)[0].split("\n## ", 1)[0]
        rows = {line.split("|")[1].strip().strip("`") for line in section.splitlines() if line.startswith("| `")}
        assert rows == set(model.model_fields), (table, rows ^ set(model.model_fields))
    examples = text.split("```toml\n")[1:]
    assert len(examples) == 3
    for example in examples:
        study_document(tomllib.loads(example.split("```", 1)[0]), "docs/study-file.md")


@pytest.mark.slow  # every command of the tour, each a fresh process: ~35 s; CI runs it (--slow)
def test_the_readme_tour_runs_as_written(tmp_path: Path) -> None:
    """The tour's shell blocks, line by line in one shell from an empty folder (the demo writes the tables), then its
    Python blocks in the folder they leave: a study file started, run and checked, the same declaration step by step,
    and both give the same groups and folds."""
    readme = (REPO / "README.md").read_text()
    body = readme.split("\n## A tour\n", 1)[1].split("\n## ", 1)[0]
    shell = re.findall(r"^```bash\n(.*?)^```$", body, flags=re.S | re.M)
    assert len(shell) == 2
    script = "set -euo pipefail\n" + shell[0] + "cp spec.json study-spec.json\n" + shell[1]
    done = subprocess.run(["bash", "-c", script], cwd=tmp_path, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr
    assert "identical: spec.json is what my-study.toml makes now" in done.stdout
    tour = tmp_path / "tour"
    from depgraph import read_spec

    by_study, by_steps = read_spec(tour / "study-spec.json"), read_spec(tour / "spec.json")
    assert by_study.samples.equals(by_steps.samples)
    assert [s.test.tolist() for s in by_study.folds.splits] == [s.test.tolist() for s in by_steps.folds.splits]
    here = os.getcwd()
    os.chdir(tour)
    try:
        for block in readme_python_blocks("A tour"):
            exec(compile(block, "README.md (tour)", "exec"), {"__name__": "tour"})
    finally:
        os.chdir(here)
