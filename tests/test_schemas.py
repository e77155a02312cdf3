"""The published schemas: generated from the vocabulary, valid 2020-12, shipped in the wheel."""

from __future__ import annotations

import re
import subprocess
import sys
import zipfile

import orjson
import pytest
from jsonschema import Draft202012Validator

from depgraph.errors import DepgraphError
from depgraph.formats import KINDS
from depgraph.graph.files import read_graph
from depgraph.io.schemas import load_schema
from depgraph.spec.columns import SAMPLE_COLUMNS
from depgraph.spec.files import read_spec
from depgraph.spec.schema import schema_bytes
from depgraph.vocab import COMBINABLE_MODES, MODES, NODE_TYPES, RELATION_NAMES, RESAMPLING_PLANS, SEVERITIES
from tests.conftest import REPO

EXAMPLES = REPO / "schema" / "examples"


@pytest.mark.parametrize("kind", KINDS)
def test_committed_schema_is_the_generated_one(kind):
    assert (REPO / "schema" / f"{kind}.schema.json").read_bytes() == schema_bytes(kind), (
        "regenerate with: python -m depgraph.spec.schema"
    )


@pytest.mark.parametrize("kind", KINDS)
def test_schema_is_valid_2020_12_with_id_and_version(kind):
    schema = load_schema(kind)
    Draft202012Validator.check_schema(schema)
    assert schema["$schema"] == "https://json-schema.org/draft/2020-12/schema"
    assert schema["$id"].startswith(f"urn:depgraph:schema:{kind}:")
    assert re.fullmatch(r"\d+\.\d+\.\d+", schema["format_version"])


def test_split_spec_enums_agree_with_the_vocabulary():
    props = load_schema("split-spec")["properties"]
    constraint = props["constraint"]["properties"]
    assert constraint["mode"]["enum"] == [m.name for m in MODES]
    assert constraint["relations"]["items"]["enum"] == list(RELATION_NAMES)
    assert constraint["via"]["items"]["enum"] == list(COMBINABLE_MODES)
    assert props["recommended_resampling"]["enum"] == list(RESAMPLING_PLANS)
    assert props["warnings"]["items"]["properties"]["severity"]["enum"] == list(SEVERITIES)
    assert set(props["samples"]["properties"]) == set(SAMPLE_COLUMNS)
    split = props["folds"]["oneOf"][1]["properties"]["splits"]["items"]["properties"]
    assert {"test", "excluded", "n_train", "n_test", "n_excluded"} <= set(split)


def test_study_graph_enums_agree_with_the_vocabulary():
    props = load_schema("study-graph")["properties"]
    assert props["nodes"]["propertyNames"]["enum"] == [t.value for t in NODE_TYPES]
    assert props["edges"]["propertyNames"]["enum"] == list(RELATION_NAMES)


def _read(path):
    doc = orjson.loads(path.read_bytes())
    return (read_graph if doc.get("format") == "depgraph.study-graph" else read_spec)(path), doc


@pytest.mark.parametrize("path", sorted((EXAMPLES / "valid").glob("*.json")), ids=lambda p: p.name)
def test_valid_examples_read_and_validate(path):
    _, doc = _read(path)
    kind = "study-graph" if doc["format"] == "depgraph.study-graph" else "split-spec"
    Draft202012Validator(load_schema(kind)).validate(doc)
    assert doc["$comment"].startswith("valid:")


@pytest.mark.parametrize("path", sorted((EXAMPLES / "invalid").glob("*.json")), ids=lambda p: p.name)
def test_invalid_examples_fail_for_the_rule_they_name(path):
    doc = orjson.loads(path.read_bytes())
    comment = doc["$comment"]
    assert comment.startswith("invalid: ")
    expected = re.search(r"expect: (\w+)", comment).group(1)
    with pytest.raises(DepgraphError) as err:
        _read(path)
    assert err.value.code == expected, err.value.message
    assert path.name in err.value.message


def test_the_installed_wheel_finds_and_uses_its_schemas(tmp_path):
    wheels = tmp_path / "wheels"
    build = subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--no-deps", "--quiet", "-w", str(wheels), str(REPO)],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert build.returncode == 0, build.stderr
    (wheel,) = wheels.glob("depgraph-*.whl")
    names = zipfile.ZipFile(wheel).namelist()
    assert "depgraph/schema/split-spec.schema.json" in names and "depgraph/schema/study-graph.schema.json" in names
    target = tmp_path / "site"
    with zipfile.ZipFile(wheel) as archive:
        archive.extractall(target)  # a wheel is a zip laid out as site-packages
    probe = (
        "import depgraph.io.schemas as s, depgraph.spec.files as sp; "
        "print(s.schema_dir()); "
        f"print(sp.read_spec({str(EXAMPLES / 'valid' / 'subject.json')!r}).n_samples)"
    )
    run = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, cwd=tmp_path, env={"PYTHONPATH": str(target)}
    )
    assert run.returncode == 0, run.stderr
    where, n = run.stdout.split()
    assert where.startswith(str(target)) and n == "6"


def _formats(node: object) -> set[str]:
    if isinstance(node, dict):
        own = {node["format"]} if isinstance(node.get("format"), str) else set()
        return own.union(*(_formats(v) for v in node.values()))
    if isinstance(node, list):
        return set().union(*(_formats(v) for v in node))
    return set()


def test_every_format_the_schemas_use_is_checked():
    # jsonschema checks a "format" only when the library behind it is installed (date-time: rfc3339-validator,
    # a dependency); without it a created_at of "yesterday" would pass on one machine and fail on another
    used = set().union(*(_formats(load_schema(kind)) for kind in KINDS))
    assert "date-time" in used  # else this test checks nothing
    assert used <= set(Draft202012Validator.FORMAT_CHECKER.checkers), used
    assert not Draft202012Validator.FORMAT_CHECKER.conforms("yesterday", "date-time")
