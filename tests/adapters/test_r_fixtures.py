"""The specs depgraphR's tests and examples read (adapters/r) are what depgraph writes today: written again, each
holds the same content (its digest) and gives the same fold table, so R's conformance tests check R against the
current Python, not against an old copy."""

from __future__ import annotations

import importlib.util

import orjson
import pytest

from tests.conftest import REPO

PACKAGE = REPO / "adapters" / "r"


@pytest.fixture(scope="module")
def written(tmp_path_factory):
    spec = importlib.util.spec_from_file_location("make_fixtures", PACKAGE / "data-raw" / "make_fixtures.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    root = tmp_path_factory.mktemp("r-package")
    module.write(root)
    return root


def committed_files() -> list[str]:
    files = sorted(p.relative_to(PACKAGE).as_posix() for p in (PACKAGE / "tests" / "testthat" / "fixtures").iterdir())
    files += ["inst/extdata/spec.json", "inst/extdata/spec.dgspec/manifest.json"]
    assert len(files) >= 40, files
    return files


@pytest.mark.parametrize("name", committed_files())
def test_each_committed_fixture_is_what_depgraph_writes_now(written, name):
    committed, fresh = PACKAGE / name, written / name
    assert fresh.exists(), f"{name} is no longer written by data-raw/make_fixtures.py"
    if name.endswith(".json"):  # the same content: its digest (created_at and generator may differ)
        assert orjson.loads(committed.read_bytes())["digest"] == orjson.loads(fresh.read_bytes())["digest"], name
    else:
        assert committed.read_bytes() == fresh.read_bytes(), name


def test_nothing_else_is_written(written):
    fresh = sorted(p.relative_to(written).as_posix() for p in (written / "tests" / "testthat" / "fixtures").iterdir())
    assert fresh == [n for n in committed_files() if n.startswith("tests/")]
