"""The docs say what the code does: codes, relations and the test command agree."""

from __future__ import annotations

import re

from depgraph.derive import FINDINGS
from depgraph.errors import ErrorCode
from depgraph.validate import CATALOGUE
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


def test_ci_runs_the_readme_test_command():
    readme = (REPO / "README.md").read_text()
    quickstart = readme.split("## Quickstart", 1)[1].split("```bash", 1)[1].split("```", 1)[0]
    commands = [line.strip() for line in quickstart.strip().splitlines()]
    assert len(commands) == 2 and commands[0].endswith("depgraph demo")
    ci = (REPO / ".ci" / "run").read_text().splitlines()
    assert commands[1] in [line.strip() for line in ci]


def test_documented_pseudonym_test_vector_holds():
    from depgraph.privacy import pseudonym

    text = (DOCS / "spec.md").read_text()
    key, sample, expected = re.search(r"Test vector: key `([^`]+)`, id `([^`]+)` → `([0-9a-f]+)`", text).groups()
    assert pseudonym(key, sample) == expected


def test_documented_hash_fold_test_vectors_hold():
    import hashlib

    from depgraph.folds import hash_fold

    rows = re.findall(r"\| (`[^`]*`|\(empty\)) \| `([^`]+)` \| (\d+) \| `([0-9a-f]{64})` \| (\d+) \|",
                      (DOCS / "folds.md").read_text())  # fmt: skip
    assert len(rows) == 4
    for salt, key, k, digest, fold in rows:
        salt = "" if salt == "(empty)" else salt.strip("`")
        assert hashlib.sha256((salt + key).encode()).hexdigest() == digest
        assert hash_fold(salt, key, int(k)) == int(fold)
