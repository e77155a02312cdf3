"""One way to find a sample: SplitSpec.positions / require_folds / group_codes, and every adapter and the exposure
audit agreeing on integer, float and text ids (``1``, ``1.0`` and ``"1"`` name sample ``"1"``, as ingest reads them);
the envelope models typed from the vocabulary; replace() validating every field."""

from __future__ import annotations

import typing

import numpy as np
import pandas as pd
import pytest

from depgraph import DepgraphError, from_metadata
from depgraph.audit.exposure import assignment_roles, exposure
from depgraph.folds.schemes import assign_folds
from depgraph.spec.model import Constraint, SpecWarning, SplitSpec
from depgraph.vocab import COMBINABLE_MODES, MODES, RELATION_NAMES, RESAMPLING_PLANS, SEVERITIES, STRATEGIES

IDS = {
    "integers": [4, 1, 3, 2],
    "floats": [4.0, 1.0, 3.0, 2.0],
    "text": ["4", "1", "3", "2"],
    "numpy integers": np.array([4, 1, 3, 2]),
    "series of floats": pd.Series([4.0, 1.0, 3.0, 2.0]),
}
UNKNOWN = {"integer": [1, 2, 9], "float": [1.0, 2.0, 9.0], "text": ["1", "2", "9"]}


@pytest.fixture(scope="module")
def spec():
    frame = pd.DataFrame({"sample_id": ["1", "2", "3", "4"], "group_id": ["b", "b", "a", "a"]})
    built = SplitSpec.build(frame, constraint=Constraint(mode="subject"), recommended_resampling="grouped_cv")
    return assign_folds(built, "group-kfold", n_splits=2, seed=0)


@pytest.fixture(scope="module")
def unfolded():
    frame = pd.DataFrame({"sample_id": ["1", "2"], "group_id": ["a", "b"]})
    return SplitSpec.build(frame, constraint=Constraint(mode="subject"), recommended_resampling="grouped_cv")


# --------------------------------------------------------------------------- the spec's own methods
@pytest.mark.parametrize("kind", IDS)
def test_positions_normalise_ids_as_ingest_does(spec, kind):
    assert spec.positions(IDS[kind]).tolist() == [3, 0, 2, 1]


@pytest.mark.parametrize("kind", UNKNOWN)
def test_positions_refuse_an_unknown_id_naming_it(spec, kind):
    with pytest.raises(DepgraphError) as err:
        spec.positions(UNKNOWN[kind], "my ids")
    assert err.value.code == "reference"
    assert err.value.message == "my ids: 1 row(s) name samples not in the spec: 9"
    assert err.value.details["ids"] == ["9"] and err.value.details["rows"] == 1


def test_positions_refuse_a_missing_id_unless_told_to_skip_it(spec):
    with pytest.raises(DepgraphError, match=r"\(missing\)") as err:
        spec.positions([1.0, np.nan])
    assert err.value.code == "reference"
    assert spec.positions([1.0, np.nan, None], skip_missing=True).tolist() == [0, -1, -1]


def test_positions_refuse_one_string_and_sets(spec):
    for ids in ("1", {"1", "2"}):
        with pytest.raises(DepgraphError) as err:
            spec.positions(ids)
        assert err.value.code == "invalid_argument"


def test_require_folds(spec, unfolded):
    assert spec.require_folds() is spec.folds
    with pytest.raises(DepgraphError) as err:
        unfolded.require_folds()
    assert err.value.code == "invalid_argument"
    assert err.value.message == "the spec carries no folds: assign folds first (depgraph folds)"


def test_group_codes_number_groups_in_sorted_order(spec):
    codes = spec.group_codes()
    assert codes.dtype == np.int64 and codes.tolist() == [1, 1, 0, 0]


# --------------------------------------------------------------------------- every adapter agrees
@pytest.mark.parametrize("kind", IDS)
def test_sklearn_adapters_take_integer_float_and_text_ids(spec, kind):
    sklearn = pytest.importorskip("depgraph.adapters.sklearn")
    ids = IDS[kind]
    assert sklearn.groups_for(spec, ids).tolist() == [0, 1, 0, 1]
    expected = [(sorted(train), sorted(test)) for train, test in sklearn.SpecCV(spec).split(groups=IDS["text"])]
    assert [(sorted(train), sorted(test)) for train, test in sklearn.SpecCV(spec).split(groups=ids)] == expected
    assert [(sorted(tr), sorted(te)) for tr, te in sklearn.SpecCV(spec, ids=ids).split(np.zeros(4))] == expected
    assert sklearn.to_predefined_split(spec, ids).test_fold.tolist() == (
        sklearn.to_predefined_split(spec, IDS["text"]).test_fold.tolist()
    )


@pytest.mark.parametrize("kind", UNKNOWN)
def test_sklearn_adapters_refuse_an_unknown_id_naming_it(spec, kind):
    sklearn = pytest.importorskip("depgraph.adapters.sklearn")
    calls = {
        "groups_for": lambda ids: sklearn.groups_for(spec, ids),
        "SpecCV": lambda ids: list(sklearn.SpecCV(spec).split(groups=ids)),
        "to_predefined_split": lambda ids: sklearn.to_predefined_split(spec, ids),
    }
    for name, call in calls.items():
        with pytest.raises(DepgraphError) as err:
            call(UNKNOWN[kind])
        assert err.value.code == "reference", name
        assert "not in the spec: 9" in err.value.message, name


def test_sklearn_adapters_refuse_a_spec_without_folds(unfolded):
    sklearn = pytest.importorskip("depgraph.adapters.sklearn")
    for call in (lambda: sklearn.SpecCV(unfolded), lambda: sklearn.to_predefined_split(unfolded, ["1", "2"])):
        with pytest.raises(DepgraphError, match="carries no folds") as err:
            call()
        assert err.value.code == "invalid_argument"


@pytest.mark.parametrize("kind", IDS)
def test_torch_samplers_take_integer_float_and_text_ids(spec, kind):
    torch = pytest.importorskip("depgraph.adapters.torch")
    ids = IDS[kind]
    for role in ("train", "test"):
        sampler = torch.FoldSampler(spec, 0, role, ids=ids, shuffle=False)
        assert list(sampler) == list(torch.FoldSampler(spec, 0, role, ids=IDS["text"], shuffle=False))
        batches = torch.GroupBatchSampler(spec, 1, 0, role, ids=ids, shuffle=False)
        assert list(batches) == list(torch.GroupBatchSampler(spec, 1, 0, role, ids=IDS["text"], shuffle=False))
        ranks = torch.GroupDistributedSampler(spec, 1, 0, 0, role, ids=ids, shuffle=False)
        assert list(ranks) == list(torch.GroupDistributedSampler(spec, 1, 0, 0, role, ids=IDS["text"], shuffle=False))


@pytest.mark.parametrize("kind", UNKNOWN)
def test_torch_samplers_refuse_an_unknown_id_naming_it(spec, kind):
    torch = pytest.importorskip("depgraph.adapters.torch")
    calls = (
        lambda ids: torch.FoldSampler(spec, 0, "train", ids=ids),
        lambda ids: torch.GroupBatchSampler(spec, 1, 0, "train", ids=ids),
        lambda ids: torch.GroupDistributedSampler(spec, 1, 0, 0, "train", ids=ids),
    )
    for call in calls:
        with pytest.raises(DepgraphError) as err:
            call(UNKNOWN[kind])
        assert err.value.code == "reference" and "not in the spec: 9" in err.value.message


def test_torch_samplers_refuse_a_spec_without_folds(unfolded):
    torch = pytest.importorskip("depgraph.adapters.torch")
    with pytest.raises(DepgraphError, match="carries no folds"):
        torch.FoldSampler(unfolded, 0, "train", ids=["1", "2"])


@pytest.mark.parametrize("kind", ["integers", "floats", "text"])
def test_exposure_reads_assignments_with_integer_float_and_text_ids(kind):
    meta = pd.DataFrame({"sample_id": [1, 2, 3, 4], "subject_id": ["P1", "P1", "P2", "P3"]})
    graph = from_metadata(meta)
    frame = pd.DataFrame({"sample_id": ["1", "2", "3", "4"], "group_id": ["g1", "g1", "g2", "g3"]})
    spec = SplitSpec.build(frame, constraint=Constraint(mode="subject"), recommended_resampling="grouped_cv")
    assignment = pd.DataFrame({"sample_id": IDS[kind], "fold": [0, 1, 1, 0]})
    assert assignment_roles(spec, assignment).tolist() == [[0, 1, 0, 1], [1, 0, 1, 0]]  # fold 0 tests 4 and 2
    assert exposure(graph, spec, assignment).table["crossing"].tolist() == [1]  # subject P1: samples 1 and 2
    unknown = pd.DataFrame({"sample_id": [1, 9.0], "fold": [0, 1]})
    with pytest.raises(DepgraphError) as err:
        assignment_roles(spec, unknown)
    assert err.value.code == "reference" and "names 1 sample(s) not in the spec: 9" in err.value.message


# --------------------------------------------------------------------------- typed from the vocabulary
def test_envelope_fields_are_typed_from_the_vocabulary():
    hints = typing.get_type_hints(Constraint)
    assert typing.get_args(hints["mode"]) == tuple(m.name for m in MODES)
    assert typing.get_args(typing.get_args(hints["strategy"])[0]) == STRATEGIES
    assert typing.get_args(typing.get_args(hints["relations"])[0]) == RELATION_NAMES
    assert typing.get_args(typing.get_args(hints["via"])[0]) == COMBINABLE_MODES
    assert typing.get_args(typing.get_type_hints(SpecWarning)["severity"]) == SEVERITIES
    assert typing.get_args(typing.get_type_hints(SplitSpec)["recommended_resampling"]) == RESAMPLING_PLANS


@pytest.mark.parametrize(
    "fields",
    [{"mode": "no-such-mode"}, {"mode": "subject", "strategy": "greedy"},
     {"mode": "subject", "relations": ["kinship"]}, {"mode": "composite", "priority": ["composite"]}],
)  # fmt: skip
def test_constraint_refuses_words_outside_the_vocabulary(fields):
    with pytest.raises(DepgraphError) as err:
        Constraint(**fields)
    assert err.value.code == "invalid_argument" and err.value.message.startswith("Constraint: ")


@pytest.mark.parametrize(
    ("fields", "named"),
    [({"summary": "x"}, "summary"), ({"pseudonymization": "x"}, "pseudonymization"),
     ({"generator": 3}, "generator"), ({"warnings": "none"}, "warnings"), ({"graph_name": 5}, "graph_name")],
)  # fmt: skip
def test_replace_validates_every_field_as_build_does(spec, fields, named):
    with pytest.raises(DepgraphError) as err:
        spec.replace(**fields)
    assert err.value.code == "invalid_argument"
    assert err.value.message.startswith(f"SplitSpec: {named}")
