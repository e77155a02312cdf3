"""The engine interface's contract (depgraph/engines.py), which every engine passes: each stage an engine names is
a module offering ``<stage>_request``; a value saying ``__depgraph_engine__`` is handed, by every public function
of a stage, to that engine's part with the request already checked (a request the single machine refuses is
refused before any engine sees it); a value saying nothing stays on the single machine, which never loads another
engine's module. Checked with a stand-in engine registered for the test, so it needs no Spark; the Spark engine's
entries are checked to name real functions when pyspark is installed, and tests/test_spark_engine.py and
tests/test_spark_folds.py hold its results to the single machine's."""

from __future__ import annotations

import contextlib
import importlib
import importlib.util
import sys
import types
from dataclasses import dataclass

import pandas as pd
import pytest

from depgraph import (
    DepgraphError,
    SplitSpec,
    add_duplicates,
    add_kinship,
    add_relations,
    add_spatial,
    assign_folds,
    derive,
    exposure,
    fold_composition,
    from_metadata,
    read_graph,
    read_spec,
    validate,
    write_spec,
)
from depgraph.engines import ENGINE_NAMES, ENGINES, TABLE_ENGINES, engine_of, graph_on, running, stage
from depgraph.folds.schemes import FoldScheme, GroupedKFold
from depgraph.spec.privacy import derived_spec, pseudonymize
from depgraph.validation.facts import StudyGraphFacts

#: Every stage a public function dispatches, with the function: what an engine may take over. ``session`` starts
#: an engine for a run of several stages (a study file's), ``graph`` hands it a graph built and validated here.
STAGES = {
    "derive": derive, "assign_folds": assign_folds, "write_spec": write_spec, "pseudonymize": pseudonymize,
    "spec": derived_spec, "graph": graph_on, "session": running, "read_graph": read_graph, "read_spec": read_spec,
    "exposure": exposure, "from_metadata": from_metadata, "add_kinship": add_kinship,
    "add_duplicates": add_duplicates, "add_relations": add_relations, "add_spatial": add_spatial,
    "validate": validate, "fold_composition": fold_composition,
}  # fmt: skip


@dataclass
class Echo:
    """A value of the stand-in engine."""

    __depgraph_engine__ = "echo"
    calls: list
    folds: object = "a plan"  # a spec of the stand-in engine carries folds


@pytest.fixture
def echo_engine(monkeypatch):
    """A stand-in engine: each stage's ``<stage>_request`` records what it was handed and returns it."""
    module = types.ModuleType("echo_engine")
    for name in STAGES:

        def request(value, *args, _stage=name, **kwargs):
            value.calls.append((_stage, args, kwargs))
            return value

        setattr(module, f"{name}_request", request)

    @contextlib.contextmanager
    def session_request(run, **settings):
        run.options = {"started_with": settings}
        yield

    module.session_request = session_request
    module.graph_request = lambda graph, **options: Echo([("graph", (graph,), options)])
    module.read = []  # files the engine was asked to read
    module.read_graph_request = lambda path, **options: module.read.append(("graph", path, options))
    module.read_spec_request = lambda path, key, **options: module.read.append(("spec", path, options))
    module.from_metadata_request = lambda table, columns, **options: Echo(
        [("from_metadata", (table, columns), options)]
    )
    module.facts = StudyGraphFacts(from_metadata(pd.DataFrame({"sample_id": ["S1", "S2"], "subject_id": ["P", "P"]})))
    module.validate_request = lambda graph: (graph.calls.append(("validate", (), {})), module.facts)[1]
    monkeypatch.setitem(sys.modules, "echo_engine", module)
    monkeypatch.setitem(ENGINES, "echo", dict.fromkeys(STAGES, "echo_engine"))
    return module


def test_every_public_stage_hands_an_engines_value_to_that_engine(echo_engine, tmp_path):
    value = Echo([])
    derive(value, "subject", allow_unlinked=True)
    assign_folds(value, "group-kfold", n_splits=3, seed=1)
    write_spec(value, tmp_path / "s.dgspec")
    pseudonymize(value, "a key the stand-in engine never checks")
    exposure(value, value, examples=2)
    add_kinship(value, "king.kin0", "first", unknown="ignore")
    add_duplicates(value, "pairs.csv")
    add_relations(value, "pairs.csv", "sample_adjacent_to")
    add_spatial(value, "coords.csv", 1.5)
    fold_composition(value, warn=False)
    assert [call[0] for call in value.calls] == [
        "derive",
        "assign_folds",
        "write_spec",
        "pseudonymize",
        "exposure",
        "add_kinship",
        "add_duplicates",
        "add_relations",
        "add_spatial",
        "fold_composition",
    ]
    assert value.calls[9][2] == {"warn": False}
    assert value.calls[4][2]["examples"] == 2
    assert value.calls[5][1:] == (("king.kin0", "first"), {"unknown": "ignore"})  # options as given
    assert value.calls[7][1] == ("pairs.csv", "sample_adjacent_to")  # the public order: pairs, then relation
    request = value.calls[0][1][0]
    assert (request.mode, request.allow_unlinked) == ("subject", True)  # checked and canonical before dispatch
    scheme = value.calls[1][1][0]
    assert isinstance(scheme, FoldScheme) and scheme == GroupedKFold(n_splits=3, seed=1)  # a scheme, not a name
    assert not (tmp_path / "s.dgspec").exists()  # written by the engine, not by the single machine


def test_validate_words_the_answers_of_the_graphs_engine(echo_engine):
    """The rules run once, over what the engine answers (here: the answers of a two-sample graph of one subject);
    a request the single machine refuses never reaches the engine."""
    value = Echo([])
    report = validate(value, n_splits=2)
    assert value.calls == [("validate", (), {})]
    assert report.to_json_bytes() == validate(echo_engine.facts.graph, n_splits=2).to_json_bytes()
    assert report.counts()["repeated_subject_samples"] == 1 and report.metrics["n_samples"] == 2
    with pytest.raises(DepgraphError, match="levels"):
        validate(value, levels=["nonsense"])
    assert len(value.calls) == 1


def test_from_metadata_builds_on_the_engine_named_or_the_tables(echo_engine, monkeypatch):
    """``engine=`` names where a table is built, with only the options given (the rest left to the engine's
    defaults); a table of an engine's library (a Spark DataFrame) is built there unasked."""
    built = from_metadata("metadata.csv", {"subject_id": "patient"}, engine="echo", name="cohort", session=1)
    assert built.calls == [("from_metadata", ("metadata.csv", {"subject_id": "patient"}),
                            {"name": "cohort", "session": 1})]  # fmt: skip
    monkeypatch.setitem(TABLE_ENGINES, "tests", "echo")  # a table whose type comes from the tests' package
    assert from_metadata(Echo([]), allow_multi_subject_samples=True).calls[0][2] == {
        "allow_multi_subject_samples": True
    }
    with pytest.raises(DepgraphError, match="session: not an option on the single machine"):
        from_metadata(pd.DataFrame({"sample_id": ["S1"]}), session=1)
    for engine in ("bogus", None, 123):  # an engine is named, or refused naming those there are
        with pytest.raises(DepgraphError, match="engine is 'single' or 'spark'") as refused:
            from_metadata("metadata.csv", engine=engine)
        assert refused.value.code == "invalid_argument"
    assert from_metadata("metadata.csv", engine="ECHO").calls[0][0] == "from_metadata"  # any case


def test_a_run_starts_the_engine_hands_it_the_graph_and_its_partition_makes_the_spec(echo_engine, tmp_path):
    graph = from_metadata(pd.DataFrame({"sample_id": ["S1", "S2"], "subject_id": ["P1", "P2"]}))
    with running("echo", {"master": "local[1]"}) as run:
        assert (run.engine, run.options) == ("echo", {"started_with": {"master": "local[1]"}})
        value = graph_on(graph, "echo", **run.options)
        read_graph(tmp_path / "g.dggraph", engine="echo", **run.options)  # read by the engine, options passed
        read_spec(tmp_path / "s.dgspec", engine="echo")
    assert value.calls == [("graph", (graph,), {"started_with": {"master": "local[1]"}})]
    started = {"started_with": {"master": "local[1]"}}
    assert echo_engine.read == [("graph", tmp_path / "g.dggraph", started), ("spec", tmp_path / "s.dgspec", {})]
    assert derived_spec(value, graph, ["age"]) is value  # made by the engine, from the engine's partition
    assert value.calls[-1] == ("spec", (["age"], None), {})
    with running("single", {"ignored": True}) as run:
        assert run.options == {} and graph_on(graph, "single", **run.options) is graph
    assert ENGINE_NAMES[0] == "single" and "echo" not in ENGINE_NAMES  # users name the engines depgraph ships


def test_a_request_refused_on_one_machine_never_reaches_an_engine(echo_engine, tmp_path):
    value = Echo([])
    refused = [
        lambda: derive(value, "no such mode"),
        lambda: derive(value, "subject", min_groups=0),
        lambda: assign_folds(value, "no such scheme"),
        lambda: assign_folds(value, "group-kfold", n_splits=3, by="site"),  # a parameter the scheme lacks
        lambda: assign_folds(value, "hash", salt=b"bytes"),
        lambda: write_spec(value, tmp_path / "s.json", format="json"),  # the engine writes the columnar form
    ]
    for call in refused:
        with pytest.raises(DepgraphError):
            call()
    assert value.calls == []


def test_a_single_machine_value_stays_on_the_single_machine(tmp_path):
    graph = from_metadata(pd.DataFrame({"sample_id": ["S1", "S2", "S3"], "subject_id": ["P1", "P1", "P2"]}))
    spec = SplitSpec.from_partition(derive(graph, "subject"), graph)
    assert engine_of(graph) is None and engine_of(spec) is None
    loaded = {name for name in sys.modules if name.startswith("depgraph.spark")}
    write_spec(assign_folds(spec, "holdout", test_fraction=0.5, seed=1), tmp_path / "s.json")
    assert {name for name in sys.modules if name.startswith("depgraph.spark")} == loaded


def test_an_engine_without_a_stage_is_refused_by_name(monkeypatch):
    monkeypatch.setitem(ENGINES, "echo", {})
    with pytest.raises(DepgraphError, match="the echo engine has no derive stage") as refused:
        derive(Echo([]), "subject")
    assert refused.value.code == "engine"


@pytest.mark.skipif(importlib.util.find_spec("pyspark") is None, reason="pyspark not installed (CI installs it)")
@pytest.mark.parametrize("engine", sorted(ENGINES))
def test_each_engine_names_a_request_function_for_each_stage(engine):
    assert set(ENGINES[engine]) <= set(STAGES)
    for name in ENGINES[engine]:
        assert callable(getattr(stage(engine, name), f"{name}_request"))
    module = importlib.import_module(ENGINES[engine]["write_spec"])
    assert any(getattr(v, "__depgraph_engine__", None) == engine for v in vars(module).values())
