"""Folds on the Spark engine: every fold scheme, a prior kept, pseudonymised and signed specs, the command line
and the dispatch of the public functions give the single machine's plan, spec and digest; and the parity of the two
engines over mode × subset × pseudonymisation × scheme × signing. A file of its own so that the suite's workers share
the Spark tests (one file a worker). Expected values come from the single-machine engine, never from the Spark code
under test."""

from __future__ import annotations

import re
import warnings

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from depgraph import (
    DepgraphError,
    DepgraphWarning,
    SplitSpec,
    assign_folds,
    derive,
    from_metadata,
    read_graph,
    read_spec,
    write_graph,
    write_spec,
)
from depgraph.cli.main import main
from depgraph.folds.schemes import SCHEMES
from depgraph.spec.files import spec_document
from tests.spark_support import PSEUDONYM_KEY, SPARK_MARKS, spark_graph_of

pytestmark = SPARK_MARKS


def test_folds_on_spark_from_the_command_line(tmp_path, capsys, monkeypatch, spark):
    """``depgraph folds --engine spark`` reads a spec file in Spark, plans the folds there and writes the spec
    ``depgraph folds`` writes on one machine, warnings and signature included (a balanced holdout keeping a prior
    that grouped otherwise); an output in the JSON form is refused before Spark starts. In this process, on the
    tests' session (a command starting its own JVM: test_derive_on_spark_from_the_command_line)."""
    metadata = TIME_WITH_GAPS[0]
    graph = from_metadata(metadata)
    spec = SplitSpec.from_partition(derive(graph, "subject"), graph)
    prior = assign_folds(SplitSpec.from_partition(derive(graph, "study"), graph), "holdout", test_fraction=0.4, seed=2)
    write_spec(spec, tmp_path / "s.dgspec")
    write_spec(prior, tmp_path / "prior.json")
    monkeypatch.setenv("DG_SIGNING", "an example key, never use it for real")
    common = ["folds", str(tmp_path / "s.dgspec"), "--scheme", "balanced-holdout", "--prior",
              str(tmp_path / "prior.json"), "--seed", "4", "--sign-key-env", "DG_SIGNING"]  # fmt: skip
    printed = {}
    for engine in ("spark", "single"):
        capsys.readouterr()
        assert main([*common, "--engine", engine, "-o", str(tmp_path / f"{engine}.dgspec")]) == 0
        printed[engine] = capsys.readouterr()
    single_run, on_spark_run = printed["single"], printed["spark"]
    assert re.search(r"^  folds vs \w+_group: Cramér's V", single_run.out, re.MULTILINE)  # the composition too
    assert on_spark_run.out == single_run.out.replace("single.dgspec", "spark.dgspec")
    assert "prior_side_changed" in on_spark_run.err and "prior_side_changed" in single_run.err
    single, on_spark = read_spec(tmp_path / "single.dgspec"), read_spec(tmp_path / "spark.dgspec")
    assert on_spark.digest == single.digest and on_spark.signature == single.signature
    assert [w.code for w in on_spark.warnings] == [w.code for w in single.warnings]
    code = main(["folds", str(tmp_path / "s.dgspec"), "--scheme", "logo", "--engine", "spark", "-o",
                 str(tmp_path / "f.json")])  # fmt: skip
    err = capsys.readouterr().err
    assert code == 2 and "columnar" in err and not (tmp_path / "f.json").exists()
    assert len(err.strip().splitlines()) == 1


def test_assign_folds_and_write_spec_dispatch_on_a_spark_spec(tmp_path, spark):
    """The same public functions plan and write a SparkSpec read from a spec file: time-ordered folds with a gap
    and an embargo, leave-one-study-out and a balanced holdout over two columns (the schemes that exclude samples
    or weigh joint cells) give the single machine's plan, positions and digest; a JSON output is refused."""
    from depgraph.spark.spec import SparkSpec
    from depgraph.spark.spec import read_spec as read_spark_spec

    studies = [None if i == 23 else "st3" if i == 4 else f"st{i // 3 % 3 + 1}" for i in range(24)]
    graph = from_metadata(TIME_WITH_GAPS[0].assign(study_id=studies))  # P1 in two studies, S23 in none
    spec = SplitSpec.from_partition(derive(graph, "subject"), graph)
    write_spec(spec, tmp_path / "s.dgspec")
    on_spark = read_spark_spec(tmp_path / "s.dgspec", spark)
    assert isinstance(on_spark, SparkSpec) and on_spark.n_samples == spec.n_samples
    for _, scheme, parameters in (TIME_WITH_GAPS, STUDIES_LEFT_OUT, BALANCED_TWO_COLUMNS):
        planned = assign_folds(on_spark, scheme, **parameters)
        assert isinstance(planned, SparkSpec)  # planned on Spark, not collected
        write_spec(planned, tmp_path / f"{scheme}.dgspec")
        expected, got = assign_folds(spec, scheme, **parameters), read_spec(tmp_path / f"{scheme}.dgspec")
        assert got.digest == expected.digest and got.folds.model_dump() == expected.folds.model_dump()
        assert any(s.n_excluded for s in got.folds.splits) or scheme == "balanced-holdout"
        for ours, theirs in zip(got.folds.splits, expected.folds.splits, strict=True):
            assert (ours.test.tolist(), ours.excluded.tolist()) == (theirs.test.tolist(), theirs.excluded.tolist())
    with pytest.raises(DepgraphError, match="columnar") as refused:
        write_spec(planned, tmp_path / "t.json", format="json")
    assert refused.value.code == "invalid_argument" and not (tmp_path / "t.json").exists()


def test_pseudonymised_specs_on_spark_equal_the_single_machine(tmp_path, spark):
    """Ids hashed in Spark, warnings' ids hashed and messages withheld, the summary counted again, attributes
    judged by the same rule: the spec and its digest are the single machine's; an identifying attribute is refused
    with the same words; folds planned before follow their samples into pseudonym order (folds planned over
    pseudonyms: the parity test; the command line: the subsets test)."""
    from depgraph.spark.spec import SparkSpec, write_spec_request
    from depgraph.spec.privacy import pseudonymize

    key = PSEUDONYM_KEY
    metadata = TIME_WITH_GAPS[0].assign(
        sex=["F", "M", "F"] * 8, mrn=[f"M{i:03d}" for i in range(24)], subject_id=[f"P{i // 3}" if i % 7 else None
                                                                                for i in range(24)])  # fmt: skip
    graph = from_metadata(metadata, mapping_complete=True)
    partition = derive(spark_graph_of(graph, tmp_path, spark), "subject", allow_unlinked=True)
    single = SplitSpec.from_partition(derive(graph, "subject", allow_unlinked=True), graph, attributes=["sex"])
    assert any(w.ids for w in single.warnings)  # unlinked samples named: their ids are hashed too
    # folds already planned follow their samples into pseudonym order, as on one machine
    expected = pseudonymize(assign_folds(single, "group-kfold", n_splits=3, seed=1), key)
    hashed = pseudonymize(assign_folds(SparkSpec.of(partition, ["sex"]), "group-kfold", n_splits=3, seed=1), key)
    assert isinstance(hashed, SparkSpec)
    write_spec_request(hashed, tmp_path / "p.dgspec")
    got = read_spec(tmp_path / "p.dgspec")
    assert got.digest == expected.digest and got.pseudonymization == expected.pseudonymization
    assert [s.test.tolist() for s in got.folds.splits] == [s.test.tolist() for s in expected.folds.splits]
    identifying = SplitSpec.from_partition(derive(graph, "subject", allow_unlinked=True), graph, attributes=["mrn"])
    with pytest.raises(DepgraphError) as on_one:
        pseudonymize(identifying, key)
    with pytest.raises(DepgraphError) as on_spark:
        pseudonymize(SparkSpec.of(partition, ["mrn"]), key)
    assert (on_spark.value.code, on_spark.value.message) == (on_one.value.code, on_one.value.message)


# --------------------------------------------------------------------------- folds
@st.composite
def fold_cohorts(draw):
    """Samples of subjects with an outcome, a study and a timepoint (some without each), and a fold scheme with
    parameters that may ask for more folds than there are groups (or blocks, or time levels)."""
    n = draw(st.integers(6, 60))
    subjects = draw(st.lists(st.one_of(st.none(), st.integers(0, n // 3)), min_size=n, max_size=n))
    outcomes = draw(st.lists(st.sampled_from(["case", "control", "other", None]), min_size=n, max_size=n))
    studies = draw(st.lists(st.sampled_from(["st1", "st2", "st3", None]), min_size=n, max_size=n))
    times = draw(st.lists(st.one_of(st.none(), st.integers(0, 6)), min_size=n, max_size=n))
    metadata = pd.DataFrame({
        "sample_id": [f"S{i}" for i in range(n)],
        "subject_id": [None if s is None else f"P{s}" for s in subjects],
        "outcome_id": outcomes,
        "study_id": studies,
        "timepoint_id": [None if t is None else f"T{t}" for t in times],
        "time_index": [None if t is None else float(t) for t in times],
    })  # fmt: skip
    if metadata["subject_id"].isna().all():
        metadata.loc[0, "subject_id"] = "P0"
    scheme = draw(st.sampled_from(sorted(SCHEMES)))
    return metadata, scheme, draw(_fold_parameters(scheme))


@st.composite
def _fold_parameters(draw, scheme):
    """Parameters of ``scheme`` the fold cohorts can take."""
    seed = draw(st.integers(0, 2**32 - 1))
    if scheme == "holdout":
        return {"test_fraction": draw(st.floats(0.05, 0.95)), "n_repeats": draw(st.integers(1, 3)), "seed": seed}
    if scheme == "balanced-holdout":
        balance = draw(st.sampled_from([("stratum",), ("stratum", "study_group")]))
        return {"test_fraction": draw(st.floats(0.1, 0.9)), "balance": balance, "seed": seed}
    if scheme == "logo":
        return {"by": "study_group"}
    if scheme == "time":
        after = draw(st.booleans())
        return {"n_splits": draw(st.integers(2, 4)), "gap": draw(st.integers(0, 2)), "train_after": after,
                "embargo": draw(st.integers(0, 2)) if after else 0}  # fmt: skip
    if scheme == "covariate-bins":
        return {"n_splits": draw(st.integers(2, 4)), "by": "time_index"}
    parameters = {"n_splits": draw(st.integers(2, 8))}
    if scheme == "hash":
        parameters["salt"] = draw(st.text(max_size=8))
    else:
        parameters["seed"] = seed
    if scheme == "group-kfold":
        parameters["n_repeats"] = draw(st.integers(1, 3))
    return parameters


#: A hash plan whose groups leave a fold empty: refused on one machine, once written by Spark (found by hypothesis).
EMPTY_HASH_FOLD = (
    pd.DataFrame({"sample_id": [f"S{i}" for i in range(17)], "subject_id": [None] * 16 + ["P1"],
                  "outcome_id": ["case"] * 17}),
    "hash",
    {"n_splits": 6, "salt": "_"},
)  # fmt: skip


#: A holdout drawn three times over subjects of one to three samples, some unlinked (groups of their own).
REPEATED_HOLDOUT = (
    pd.DataFrame({"sample_id": [f"S{i}" for i in range(20)],
                  "subject_id": [f"P{i // 3}" if i % 5 else None for i in range(20)],
                  "outcome_id": ["case", "control", None, "control"] * 5}),
    "holdout",
    {"test_fraction": 0.3, "n_repeats": 3, "seed": 11},
)  # fmt: skip


#: A time-ordered plan with a gap and an embargo: its splits exclude the gap, the embargo and samples without time.
TIME_WITH_GAPS = (
    pd.DataFrame({"sample_id": [f"S{i}" for i in range(24)], "subject_id": [f"P{i // 3}" for i in range(24)],
                  "outcome_id": ["case", "control"] * 12, "study_id": ["st1", "st2", None] * 8,
                  "timepoint_id": [f"T{i % 7}" if i % 5 else None for i in range(24)],
                  "time_index": [float(i % 7) if i % 5 else None for i in range(24)]}),
    "time",
    {"n_splits": 2, "gap": 1, "embargo": 1, "train_after": True},
)  # fmt: skip

#: Leave one study out.
STUDIES_LEFT_OUT = (TIME_WITH_GAPS[0], "logo", {"by": "study_group"})

#: A balanced holdout over two columns and their joint cells.
BALANCED_TWO_COLUMNS = (TIME_WITH_GAPS[0], "balanced-holdout", {"balance": ("stratum", "study_group"), "seed": 5})


@settings(max_examples=1, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(cohort=fold_cohorts())
@example(cohort=EMPTY_HASH_FOLD)
@example(cohort=REPEATED_HOLDOUT)
def test_folds_on_spark_equal_the_single_machine_plans(tmp_path_factory, spark, monkeypatch, cohort):
    """Every scheme: the plan, its splits (tested and excluded samples) and balance, and the spec's digest are
    assign_folds' own; a plan the single machine refuses is refused alike."""
    from depgraph.spark import folds as spark_folds
    from depgraph.spark.spec import write_spec as write_spark_spec

    monkeypatch.setattr(spark_folds, "FOLD_BATCH_ROWS", 7)  # the digest streams splits across batches
    metadata, scheme, parameters = cohort
    graph = from_metadata(metadata)
    directory = tmp_path_factory.mktemp("folds")
    spec = SplitSpec.from_partition(derive(graph, "subject", allow_unlinked=True), graph)
    partition = derive(spark_graph_of(graph, directory, spark), "subject", allow_unlinked=True)
    path = directory / "folds.dgspec"
    try:
        expected = assign_folds(spec, scheme, **parameters)
    except DepgraphError as single:
        with pytest.raises(DepgraphError) as on_spark:
            write_spark_spec(partition, path, scheme, **parameters)
        assert (on_spark.value.code, on_spark.value.message) == (single.code, single.message)
        assert not path.exists()
        return
    digest = write_spark_spec(partition, path, scheme, **parameters)
    got = read_spec(path)  # every check of the columnar reader, fold rows and digest included
    assert digest == got.digest == expected.digest
    assert got.folds.model_dump() == expected.folds.model_dump()
    for ours, theirs in zip(got.folds.splits, expected.folds.splits, strict=True):
        assert ours.test.tolist() == theirs.test.tolist()
        assert ours.excluded.tolist() == theirs.excluded.tolist()
    # no group straddles a split's test and training sides
    group = got.samples["group_id"].to_numpy(dtype=object)
    for split in got.folds.splits:
        role = split.roles(len(group))
        assert not set(group[role == 1]) & set(group[role == 0])


def test_balanced_holdout_on_spark_keeps_a_prior(tmp_path, spark):
    """A prior that grouped by study: its sides kept by sample and by entity, the samples that cannot keep theirs
    named in the same warning, counted in the same balance; a prior of another cohort refused alike."""
    from depgraph.spark.spec import write_spec as write_spark_spec

    metadata = TIME_WITH_GAPS[0]
    graph = from_metadata(metadata)
    prior = assign_folds(SplitSpec.from_partition(derive(graph, "study"), graph), "holdout", test_fraction=0.4, seed=2)
    spec = SplitSpec.from_partition(derive(graph, "subject"), graph)
    partition = derive(spark_graph_of(graph, tmp_path, spark), "subject")
    with warnings.catch_warnings(record=True) as heard:
        warnings.simplefilter("always", DepgraphWarning)
        expected = assign_folds(spec, "balanced-holdout", prior=prior, seed=1)
        digest = write_spark_spec(partition, tmp_path / "kept.dgspec", "balanced-holdout", prior=prior, seed=1)
    codes = [w.message.code for w in heard if isinstance(w.message, DepgraphWarning)]
    assert codes == ["prior_side_changed", "prior_side_changed"]
    got = read_spec(tmp_path / "kept.dgspec")
    assert digest == got.digest == expected.digest
    assert expected.folds.balance["prior_samples_moved"] > 0  # the example moves someone
    assert [w.model_dump() for w in got.warnings] == [w.model_dump() for w in expected.warnings]
    other = from_metadata(metadata.assign(sample_id=[f"X{i}" for i in range(len(metadata))]))
    stranger = assign_folds(SplitSpec.from_partition(derive(other, "subject"), other), "holdout", seed=1)
    with pytest.raises(DepgraphError) as single:
        assign_folds(spec, "balanced-holdout", prior=stranger)
    with pytest.raises(DepgraphError) as on_spark:
        write_spark_spec(partition, tmp_path / "stranger.dgspec", "balanced-holdout", prior=stranger)
    assert (on_spark.value.code, on_spark.value.message) == (single.value.code, single.value.message)
    assert single.value.code == "reference" and not (tmp_path / "stranger.dgspec").exists()


#: The signing key of the parity test (an example: never use it for real).
SIGNING_KEY = "an example signing key, never use it for real"


@st.composite
def parity_cases(draw):
    """A fold cohort, a mode, a fold scheme, and whether to derive for a subset, pseudonymise and sign."""
    metadata, scheme, parameters = draw(fold_cohorts())
    mode = draw(st.sampled_from(["subject", "study", "time", "composite"]))
    ids = metadata["sample_id"].tolist()
    subset = draw(st.one_of(st.none(), st.lists(st.sampled_from(ids), min_size=2, unique=True)))
    return metadata, mode, subset, scheme, parameters, draw(st.booleans()), draw(st.booleans())


def _spec_stages(derived, made, pseudonymise, scheme, parameters, heard):
    """The spec of ``derived`` (made by ``made``), pseudonymised if asked, with its folds; the codes of the
    warnings told appended to ``heard``."""
    from depgraph.spec.privacy import pseudonymize

    with warnings.catch_warnings(record=True) as told:
        warnings.simplefilter("always", DepgraphWarning)
        spec = made(derived)
        spec = pseudonymize(spec, PSEUDONYM_KEY) if pseudonymise else spec
        spec = assign_folds(spec, scheme, **parameters)
    heard.extend(w.message.code for w in told if isinstance(w.message, DepgraphWarning))
    return spec


@settings(max_examples=1, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(case=parity_cases())
@example(case=(TIME_WITH_GAPS[0], "composite", ["S1", "S2", "S4", "S7", "S8", "S13", "S20"], "time",
               {"n_splits": 2, "gap": 1}, True, True))  # fmt: skip
def test_the_spark_engine_writes_the_single_machine_spec(tmp_path_factory, spark, case):
    """The parity of the engines: for a mode, a subset or not, pseudonymised or not, any fold scheme, signed or
    not, the spec Spark writes holds what the single machine's holds, field for field (timestamps aside), with
    the same digest and signature; what one refuses the other refuses in the same words."""
    from depgraph.spark.spec import SparkSpec, write_spec_request

    metadata, mode, subset, scheme, parameters, pseudonymise, sign = case
    graph = from_metadata(metadata)
    directory = tmp_path_factory.mktemp("parity")
    spark_graph = spark_graph_of(graph, directory, spark)
    options = {"samples": subset, "allow_unlinked": True, "allow_single_group": mode == "composite"}
    heard, heard_on_spark = [], []
    try:
        expected = _spec_stages(derive(graph, mode, **options), lambda p: SplitSpec.from_partition(p, graph),
                                pseudonymise, scheme, parameters, heard)  # fmt: skip
    except DepgraphError as single:
        with pytest.raises(DepgraphError) as on_spark:
            on_spark_graph = derive(spark_graph, mode, **options)
            _spec_stages(on_spark_graph, SparkSpec.of, pseudonymise, scheme, parameters, heard_on_spark)
        assert (on_spark.value.code, on_spark.value.message) == (single.code, single.message)
        return
    planned = _spec_stages(
        derive(spark_graph, mode, **options), SparkSpec.of, pseudonymise, scheme, parameters, heard_on_spark
    )
    assert heard_on_spark == heard
    write_spec_request(planned, directory / "spark.dgspec", SIGNING_KEY if sign else None)
    got = read_spec(directory / "spark.dgspec")
    if sign:
        expected = expected.signed(SIGNING_KEY)
    ours, theirs = spec_document(got), spec_document(expected)
    assert ours.pop("created_at") and theirs.pop("created_at")
    assert ours == theirs
    assert got.digest == expected.digest and got.signature == expected.signature


def test_fold_refusals_on_spark(tmp_path, spark):
    from depgraph.spark.spec import write_spec as write_spark_spec

    metadata = pd.DataFrame({
        "sample_id": [f"S{i}" for i in range(8)], "subject_id": list("AABBCDEF"),
        "timepoint_id": ["T0", "T1"] * 4, "time_index": [0, 1] * 4, "outcome_id": ["case", "control"] * 4,
    })  # fmt: skip
    graph = from_metadata(metadata)
    spec = SplitSpec.from_partition(derive(graph, "subject"), graph)
    partition = derive(spark_graph_of(graph, tmp_path, spark), "subject")
    path = tmp_path / "refused.dgspec"
    alike = [  # refused with the single-machine message
        ("group-kfold", {"n_splits": 7}),  # too_few_groups
        ("stratified-group-kfold", {"stratify": "site"}),  # invalid_argument: no such column
        ("group-kfold", {"n_splits": 3, "by": "x"}),  # invalid_argument: a parameter the scheme does not take
        ("hash", {"salt": b"bytes"}),  # invalid_argument: the salt is text
    ]
    for scheme, parameters in alike:
        with pytest.raises(DepgraphError) as single:
            assign_folds(spec, scheme, **parameters)
        with pytest.raises(DepgraphError) as on_spark:
            write_spark_spec(partition, path, scheme, **parameters)
        assert (on_spark.value.code, on_spark.value.message) == (single.value.code, single.value.message)
    own = [  # what the Spark engine does not plan, refused by name
        ("stratified-group-kfold", {"stratify": "time_index"}, "'time_index' is double"),
        (None, {"n_splits": 3}, "need a scheme"),
    ]
    for scheme, parameters, words in own:
        with pytest.raises(DepgraphError, match=words) as on_spark:
            write_spark_spec(partition, path, scheme, **parameters)
        assert on_spark.value.code == "invalid_argument"
    with pytest.raises(DepgraphError, match=r"exceed its limit of 5 .* use hash folds") as over:
        write_spark_spec(partition, path, "group-kfold", n_splits=2, driver_groups=5)
    assert over.value.code == "invalid_argument"
    assert not path.exists() and not list(tmp_path.glob(".*refused*"))


# --------------------------------------------------------------------------- attributes and keyed hash folds
@st.composite
def attribute_cohorts(draw):
    """Samples of subjects with attributes of every kind a graph file holds (text, integers with and without
    missing values, floats, booleans), some stored as 64-bit integers, and a plan keyed or stratified on them."""
    n = draw(st.integers(4, 30))
    subjects = draw(st.lists(st.integers(0, n // 2), min_size=n, max_size=n))
    per_subject = st.lists(st.sampled_from(["F", "M", " M ", "Zoë"]), min_size=n // 2 + 1, max_size=n // 2 + 1)
    sex = draw(per_subject)  # one value per subject: a key its samples share
    metadata = pd.DataFrame({
        "sample_id": [f"S{i}" for i in range(n)],
        "subject_id": [f"P{s}" for s in subjects],
        "sex": [sex[s] for s in subjects],
        "site": draw(st.lists(st.sampled_from(["north", "south", None]), min_size=n, max_size=n)),
        "visits": draw(st.lists(st.integers(-3, 10**12), min_size=n, max_size=n)),
        "age": draw(st.lists(st.one_of(st.none(), st.integers(0, 99)), min_size=n, max_size=n)),
        "weight": draw(st.lists(st.one_of(st.none(), st.floats(-1e9, 1e9, allow_nan=False)), min_size=n,
                                max_size=n)),
        "smoker": draw(st.lists(st.one_of(st.none(), st.booleans()), min_size=n, max_size=n)),
    })  # fmt: skip
    only_samples = draw(st.booleans())  # a graph of samples alone keeps its integer attributes integers
    if only_samples:
        metadata = metadata.drop(columns="subject_id")
    attributes = draw(st.sampled_from(["all", ["sex"], ["visits", "age", "smoker"], ["weight", "site"]]))
    key = draw(st.sampled_from([["sex"], ["sex", "visits"], ["smoker"], ["weight"], ["site", "age"]]))
    by = draw(st.sampled_from(["visits", "age", "weight", "smoker", "sex"]))
    thresholds = draw(st.one_of(st.none(), st.just([0.5]), st.just([10.0, 1e6])))
    bins = {"n_splits": 2 if thresholds is None or len(thresholds) == 1 else 3, "by": by}
    plan = draw(st.sampled_from([
        ("hash", {"n_splits": 3, "salt": "s", "key": key}),
        ("stratified-group-kfold", {"n_splits": 2, "seed": 1, "stratify": "sex"}),
        ("covariate-bins", bins if thresholds is None else {**bins, "thresholds": thresholds}),
        (None, {}),
    ]))  # fmt: skip
    if draw(st.booleans()):  # an outcome, which covariate bins report the folds' association with
        metadata["outcome_id"] = draw(st.lists(st.sampled_from(["case", "control", None]), min_size=n, max_size=n))
    return metadata, attributes, plan


@settings(max_examples=3, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(cohort=attribute_cohorts())
def test_attributes_and_keyed_folds_on_spark(tmp_path_factory, spark, cohort):
    """Sample attributes carried into the spec, and hash folds keyed on them and covariate bins of them, as on one
    machine: the same columns and types, digest, plan and folds, or the same refusal (a missing key, a group of
    several keys, an attribute not carried, a value that cannot be binned, an empty bin)."""

    from depgraph.spark.graph import read_graph as read_spark_graph
    from depgraph.spark.spec import write_spec as write_spark_spec

    metadata, attributes, (scheme, parameters) = cohort
    directory = tmp_path_factory.mktemp("attributes")
    path = directory / "graph.dggraph"
    write_graph(from_metadata(metadata, mapping_complete=True), path)  # site: an attribute here, by choice
    table = pq.read_table(path / "nodes" / "Sample.parquet")  # integers as a graph file may hold them
    for name in {"visits", "age"} & set(table.column_names):  # (a column no sample has is not in the graph)
        values = table.column(name).to_numpy(zero_copy_only=False)
        table = table.set_column(table.column_names.index(name), name, pa.array(
            [None if np.isnan(v) else int(v) for v in values], pa.int64()))  # fmt: skip
    pq.write_table(table, path / "nodes" / "Sample.parquet")
    graph = read_graph(path)
    mode, options = "subject", {"allow_unlinked": True}  # samples alone: every sample its own group
    spark_graph = read_spark_graph(path, spark)
    out = directory / "spec.dgspec"
    try:
        spec = SplitSpec.from_partition(derive(graph, mode, **options), graph, attributes=attributes)
        with warnings.catch_warnings(record=True) as warned:  # covariate bins warn when the folds follow the outcome
            warnings.simplefilter("always", DepgraphWarning)
            expected = spec if scheme is None else assign_folds(spec, scheme, **parameters)
    except DepgraphError as single:
        with pytest.raises(DepgraphError) as on_spark:
            write_spark_spec(derive(spark_graph, mode, **options), out, scheme, attributes=attributes,
                             **parameters)  # fmt: skip
        assert (on_spark.value.code, on_spark.value.message) == (single.code, single.message)
        assert not out.exists()
        return
    with warnings.catch_warnings(record=True) as warned_too:
        warnings.simplefilter("always", DepgraphWarning)
        digest = write_spark_spec(derive(spark_graph, mode, **options), out, scheme, attributes=attributes,
                                  **parameters)  # fmt: skip

    def codes(heard: list[warnings.WarningMessage]) -> list[str]:  # depgraph's (PySpark adds FutureWarnings)
        return [w.message.code for w in heard if isinstance(w.message, DepgraphWarning)]

    assert codes(warned_too) == codes(warned)
    got = read_spec(out)
    assert list(got.samples.columns) == list(expected.samples.columns)
    assert digest == got.digest == expected.digest
    if scheme is not None:
        assert got.folds.model_dump() == expected.folds.model_dump()


def test_covariate_bins_on_spark_follow_the_single_machine(tmp_path, spark):
    """Cut here and given thresholds: the same plan (thresholds, groups spanning bins, association with the
    outcome and its warning when the bins follow it), folds and digest."""
    from depgraph.spark.spec import write_spec as write_spark_spec

    n = 40
    age = [float(20 + (i * 7) % 50) for i in range(n)]
    metadata = pd.DataFrame({
        "sample_id": [f"S{i:02d}" for i in range(n)], "subject_id": [f"P{i // 2}" for i in range(n)],
        "age": age, "outcome_id": ["case" if a >= 45 else "control" for a in age],
    })  # fmt: skip
    graph = from_metadata(metadata)
    spec = SplitSpec.from_partition(derive(graph, "subject"), graph, attributes="all")
    partition = derive(spark_graph_of(graph, tmp_path, spark), "subject")
    for parameters in ({"n_splits": 2}, {"n_splits": 3, "thresholds": [30.0, 45.0]}, {"n_splits": 4}):
        with pytest.warns(DepgraphWarning, match="follow the outcome"):
            expected = assign_folds(spec, "covariate-bins", by="age", **parameters)
        path = tmp_path / f"bins{parameters['n_splits']}.dgspec"
        with pytest.warns(DepgraphWarning, match="follow the outcome"):
            digest = write_spark_spec(partition, path, "covariate-bins", by="age", attributes="all", **parameters)
        got = read_spec(path)
        assert digest == got.digest == expected.digest
        assert got.folds.model_dump() == expected.folds.model_dump()
        assert got.folds.balance["association"]["strong"] and "groups_spanning_bins" in got.folds.balance
    with pytest.raises(DepgraphError) as single:
        assign_folds(spec, "covariate-bins", by="age", n_splits=3, thresholds=[90.0, 95.0])
    with pytest.raises(DepgraphError) as on_spark:
        write_spark_spec(partition, tmp_path / "empty.dgspec", "covariate-bins", by="age", n_splits=3,
                         thresholds=[90.0, 95.0], attributes="all")  # fmt: skip
    assert (on_spark.value.code, on_spark.value.message) == (single.value.code, single.value.message)


def test_keyed_hash_folds_on_spark_report_the_outcome_association(tmp_path, spark):
    """Hash folds keyed on a sample column report how they follow the outcome, as on one machine: a note without
    an outcome, Cramér's V with its warning when the outcome follows the folds; the same balance and digest (the
    association block was once left out on Spark, and the digests differed)."""
    from depgraph.spark.spec import write_spec as write_spark_spec

    n = 40
    metadata = pd.DataFrame({
        "sample_id": [f"S{i:02d}" for i in range(n)], "subject_id": [f"P{i // 2}" for i in range(n)],
        "site": [f"site{(i // 2) % 12}" for i in range(n)],
    })  # fmt: skip
    plan = {"n_splits": 3, "salt": "s", "key": ["site"]}
    for strong in (None, True):
        graph = from_metadata(metadata, mapping_complete=True)  # site: the attribute the folds are keyed on
        spec = SplitSpec.from_partition(derive(graph, "subject"), graph, attributes="all")
        (tmp_path / f"g{strong}").mkdir()
        partition = derive(spark_graph_of(graph, tmp_path / f"g{strong}", spark), "subject")
        with warnings.catch_warnings(record=True) as heard:
            warnings.simplefilter("always", DepgraphWarning)
            expected = assign_folds(spec, "hash", **plan)
        with warnings.catch_warnings(record=True) as heard_too:
            warnings.simplefilter("always", DepgraphWarning)
            digest = write_spark_spec(partition, tmp_path / f"h{strong}.dgspec", "hash", attributes="all", **plan)
        codes = [[w.message.code for w in h if isinstance(w.message, DepgraphWarning)] for h in (heard, heard_too)]
        assert codes[0] == codes[1] == (["fold_outcome_association"] if strong else [])
        got = read_spec(tmp_path / f"h{strong}.dgspec")
        assert got.folds.balance["association"] == expected.folds.balance["association"]
        assert got.folds.balance["association"].get("strong") is strong
        assert digest == got.digest == expected.digest
        first_fold = set(spec.samples["sample_id"].to_numpy()[expected.folds.splits[0].test])  # the next outcome
        metadata = metadata.assign(outcome_id=["case" if s in first_fold else "control" for s in metadata.sample_id])


def _same_exposure(ours, theirs):
    """Two exposure reports hold the same table, value for value, and the same block balance (χ² summed in the
    order each engine holds the blocks: equal to the last bits or nearly)."""
    assert ours.table.astype(object).equals(theirs.table.astype(object)), (ours.table, theirs.table)
    pd.testing.assert_frame_equal(ours.blocks, theirs.blocks, check_exact=False, rtol=1e-12)
    assert ours.verdict() == theirs.verdict()


def test_fold_composition_on_spark_equals_the_single_machine(tmp_path, spark):
    """depgraph.fold_composition of a Spark spec gives one machine's tables and warnings: time-ordered folds that
    exclude samples, repeated k-fold, leave-one-study-out (intended: never warned about), and hand-made folds that
    track the site (warned about on both)."""
    from depgraph import fold_composition
    from depgraph.spark.spec import read_spec as read_spark_spec
    from depgraph.spec.model import Constraint, FoldPlan

    metadata = TIME_WITH_GAPS[0].assign(batch_id=[f"B{i % 4}" for i in range(24)],
                                        site_id=[f"X{i * 7 % 3}" for i in range(24)])  # fmt: skip
    graph = from_metadata(metadata)
    base = SplitSpec.from_partition(derive(graph, "subject"), graph)
    tracked = SplitSpec.build(pd.DataFrame({"sample_id": [f"S{i:02d}" for i in range(60)],
                                            "group_id": [f"G{i:02d}" for i in range(60)],
                                            "site_group": ["A"] * 30 + ["B"] * 30}),
                              constraint=Constraint(mode="subject"), recommended_resampling="grouped_cv")  # fmt: skip
    roles = np.array([[1] * 27 + [0] * 30 + [1] * 3, [0] * 27 + [1] * 30 + [0] * 3])
    by_study = SplitSpec.from_partition(derive(graph, "study", allow_unlinked=True), graph)
    plans = {
        "timed": assign_folds(base, TIME_WITH_GAPS[1], **TIME_WITH_GAPS[2]),
        "repeated": assign_folds(base, "group-kfold", n_splits=3, n_repeats=2, seed=4),
        "by_study": assign_folds(by_study, STUDIES_LEFT_OUT[1], **STUDIES_LEFT_OUT[2]),
        "tracked": tracked.with_folds(FoldPlan.from_roles(roles)),
    }
    for name, spec in plans.items():
        write_spec(spec, tmp_path / f"{name}.dgspec")
        with warnings.catch_warnings(record=True) as single_warned:
            warnings.simplefilter("always")
            expected = fold_composition(spec)
        with warnings.catch_warnings(record=True) as spark_warned:
            warnings.simplefilter("always")
            got = fold_composition(read_spark_spec(tmp_path / f"{name}.dgspec", spark))
        for table in ("sizes", "shares", "association"):
            pd.testing.assert_frame_equal(getattr(got, table), getattr(expected, table), check_dtype=False, obj=name)
        told = [[(w.message.code, str(w.message)) for w in warned] for warned in (spark_warned, single_warned)]
        assert told[0] == told[1], name
        assert got.lines() == expected.lines()
    assert [w.message.code for w in spark_warned] == ["folds_track_factor"] and len(expected.association) == 1
    assert len(fold_composition(read_spark_spec(tmp_path / "repeated.dgspec", spark), warn=False).association) == 6


def test_exposure_on_spark_equals_the_single_machine(tmp_path, spark):
    """depgraph.exposure of a Spark graph and spec counts what one machine counts — kept whole, spread over
    groups, crossing per split, the examples, the block balance — for entities, pairs of samples and pairs of
    subjects: without folds (a partition derived on Spark), with time-ordered folds that exclude samples, and with
    repeated k-fold of a sample subset (spec files read by Spark, their folds carried), and splits made elsewhere
    (an assignment's folds, a train/test holdout given as a Spark table); a spec naming samples the graph lacks and
    an assignment naming samples the spec lacks are refused alike."""
    from depgraph import add_duplicates, add_kinship, exposure
    from depgraph.spark.spec import read_spec as read_spark_spec

    metadata = TIME_WITH_GAPS[0].assign(batch_id=[f"B{i % 4}" for i in range(24)],
                                        site_id=[f"X{i * 7 % 3}" for i in range(24)])  # fmt: skip
    kinship = pd.DataFrame({"id1": ["P1", "P2", "P4"], "id2": ["P5", "P3", "P7"], "kinship": [0.25, 0.2, 0.1]})
    graph = add_kinship(from_metadata(metadata), kinship, "first")
    graph = add_duplicates(graph, pd.DataFrame({"id1": ["S0", "S9", "S13"], "id2": ["S22", "S10", "S16"]}))
    spark_graph = spark_graph_of(graph, tmp_path, spark)
    every = 2**63  # every example: more than a Spark row number can count
    _same_exposure(exposure(spark_graph, derive(spark_graph, "batch"), examples=every),
                   exposure(graph, derive(graph, "batch"), examples=every))  # fmt: skip

    def on_spark(spec: SplitSpec, name: str):
        write_spec(spec, tmp_path / name)
        return read_spark_spec(tmp_path / name, spark)

    timed = assign_folds(SplitSpec.from_partition(derive(graph, "subject"), graph), TIME_WITH_GAPS[1],
                         **TIME_WITH_GAPS[2])  # fmt: skip
    read = on_spark(timed, "timed.dgspec")
    write_spec(read, tmp_path / "again.dgspec")
    assert read_spec(tmp_path / "again.dgspec").digest == timed.digest  # its folds carried, written back alike
    single = exposure(graph, timed)
    _same_exposure(exposure(spark_graph, read), single)
    assert any(s.n_excluded for s in timed.folds.splits) and len(single.blocks) == 4
    crossing = single.table.set_index("relation")["crossing"]
    assert crossing["subject_related_to"] and crossing["sample_duplicate_of"] and crossing["sample_processed_in_batch"]

    subset = SplitSpec.from_partition(derive(graph, "batch", samples=[f"S{i}" for i in range(24) if i % 5]), graph)
    repeated = assign_folds(subset, "group-kfold", n_splits=3, n_repeats=2, seed=4)
    single = exposure(graph, repeated, examples=1)
    _same_exposure(exposure(spark_graph, on_spark(repeated, "subset.dgspec"), examples=1), single)
    assert single.table.set_index("relation").loc["sample_belongs_to_subject", "crossing"]

    stranger = from_metadata(metadata.assign(sample_id=[f"S{i + 20}" for i in range(24)]))
    strange = SplitSpec.from_partition(derive(stranger, "batch"), stranger)
    with pytest.raises(DepgraphError) as single_refusal:
        exposure(graph, strange)
    with pytest.raises(DepgraphError) as refused:
        exposure(spark_graph, on_spark(strange, "stranger.dgspec"))
    assert (refused.value.code, refused.value.message) == (single_refusal.value.code, single_refusal.value.message)

    # splits made elsewhere: folds (a sample unused, one left out), a holdout given as a Spark table, a stranger
    folds = pd.DataFrame({"sample_id": [f"S{i}" for i in range(23)], "fold": [i % 3 for i in range(22)] + ["none"]})
    _same_exposure(exposure(spark_graph, read, folds), exposure(graph, timed, folds))
    holdout = pd.DataFrame(
        {"id": [f"S{i}" for i in range(24)], "set": ["test" if i % 4 else "Train" for i in range(24)]}
    )
    _same_exposure(exposure(spark_graph, read, spark.createDataFrame(holdout), id_column="id", split_column="set"),
                   exposure(graph, timed, holdout, id_column="id", split_column="set"))  # fmt: skip
    with pytest.raises(DepgraphError) as single_refusal:
        exposure(graph, timed, folds.assign(sample_id=folds["sample_id"] + "x"))
    with pytest.raises(DepgraphError) as refused:
        exposure(spark_graph, read, folds.assign(sample_id=folds["sample_id"] + "x"))
    assert (refused.value.code, refused.value.message) == (single_refusal.value.code, single_refusal.value.message)
