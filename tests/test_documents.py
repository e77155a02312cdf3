"""Reading documents: repeated keys, every element checked, specs that must agree with themselves, signatures.

Expected values come from plain Python (json with an object_pairs_hook, tests/documents.py), never from the code
under test.
"""

from __future__ import annotations

import hashlib
import hmac
import json

import numpy as np
import orjson
import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from depgraph import DepgraphError, derive, from_metadata
from depgraph.folds.schemes import assign_folds
from depgraph.io.files import read_json
from depgraph.io.jsoncolumns import integers, numbers, positions, scalars, strings
from depgraph.spec.digest import content_digest, signing_key_fingerprint
from depgraph.spec.files import read_spec, spec_document, spec_from_document, write_spec
from depgraph.spec.model import Constraint, FoldPlan, SplitSpec
from depgraph.spec.privacy import pseudonymize
from tests import documents
from tests.conftest import REPO

KEY = "a consortium key that is long enough to sign with"


def _spec(ids, groups, **fields) -> SplitSpec:
    frame = pd.DataFrame({"sample_id": ids, "group_id": groups})
    return SplitSpec.build(frame, constraint=Constraint(mode="subject"), recommended_resampling="grouped_cv", **fields)


# --------------------------------------------------------------------------- repeated keys
_KEYS = st.sampled_from(["a", "b", "samples", "x y", 'q"t', "é", ":", '":'])
_SCALARS = st.one_of(st.none(), st.booleans(), st.integers(-5, 5), st.sampled_from(["", ":", '":', "a : b", "é"]))


@st.composite
def _json_text(draw, depth: int = 0) -> str:
    """JSON text whose objects may repeat keys, with blank space where JSON allows it."""
    blank = draw(st.sampled_from(["", " ", "\n  ", "\t"]))
    if depth >= 3 or draw(st.integers(0, 3)) == 0:
        return json.dumps(draw(_SCALARS), ensure_ascii=False)
    if draw(st.booleans()):
        items = draw(st.lists(_json_text(depth + 1), max_size=4))
        return "[" + ",".join(items) + "]"
    keys = draw(st.lists(_KEYS, max_size=4))
    members = [f"{json.dumps(k, ensure_ascii=False)}{blank}:{blank}{draw(_json_text(depth + 1))}" for k in keys]
    return "{" + blank + ("," + blank).join(members) + blank + "}"


def _repeats(text: str) -> bool:
    found = []

    def hook(pairs):
        keys = [k for k, _ in pairs]
        found.append(len(set(keys)) != len(keys))
        return dict(pairs)

    json.loads(text, object_pairs_hook=hook)
    return any(found)


@settings(
    max_examples=300,
    derandomize=True,
    database=None,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture],  # one file, rewritten by every example
)
@given(text=_json_text())
def test_a_document_is_refused_exactly_when_an_object_repeats_a_key(tmp_path, text):
    path = tmp_path / "doc.json"
    path.write_text(text, encoding="utf-8")
    if _repeats(text):
        with pytest.raises(DepgraphError) as err:
            read_json(path)
        assert err.value.code == "parse" and "repeats the key" in err.value.message
    else:
        assert read_json(path) == json.loads(text)


def test_the_repeated_key_is_named(tmp_path):
    path = tmp_path / "doc.json"
    path.write_text('{"format": 1, "summary": {"n_groups": 2, "n_groups" : 3}}')
    with pytest.raises(DepgraphError) as err:
        read_json(path, "spec file")
    assert err.value.details["key"] == "n_groups" and "'n_groups'" in err.value.message


# --------------------------------------------------------------------------- every element
@pytest.mark.parametrize("n", [3, 10, 10_000])
def test_every_element_is_checked_wherever_it_is(n):
    for bad in (0, n // 2, n - 1):
        values = [f"S{i}" for i in range(n)]
        values[bad] = ""
        with pytest.raises(DepgraphError) as err:
            strings(values, "samples.sample_id", non_empty=True)
        assert f"samples.sample_id[{bad}] is ''" in err.value.message
        ranks = list(range(1, n + 1))
        ranks[bad] = 0
        with pytest.raises(DepgraphError) as err:
            integers(ranks, "samples.order_rank", nullable=True, minimum=1)
        assert f"samples.order_rank[{bad}] is 0" in err.value.message


@pytest.mark.parametrize(
    ("function", "values", "index"),
    [
        (strings, ["a", "b", True], 2),
        (numbers, [1.0, "2"], 1),
        (numbers, [1.0, False], 1),
        (integers, [1, 2, 3.0], 2),
        (integers, [1, 2**64 - 1], 1),
        (scalars, [1, [2]], 1),
        (scalars, ["a", {"b": 1}], 1),
    ],
)
def test_the_first_offender_is_named_with_its_value(function, values, index):
    with pytest.raises(DepgraphError) as err:
        function(values, "w")
    assert err.value.code == "schema" and err.value.message.startswith(f"w[{index}] is {values[index]!r}")


def test_positions_are_integers_in_range_sorted_without_repeats():
    assert positions([0, 2, 4], "p", 5).tolist() == [0, 2, 4]
    for bad in ([0, 5], [1, 1], [2, 1], [0, 2**63], [0, -1], [True]):
        with pytest.raises(DepgraphError):
            positions(bad, "p", 5)


def test_attribute_columns_keep_their_kind():
    assert scalars([1, 2], "a").dtype == np.int64
    assert scalars([1, None], "a").dtype == np.float64
    assert scalars(["a", None, 1, True], "a").tolist() == ["a", None, 1, True]


# --------------------------------------------------------------------------- specs built in memory
def test_build_puts_rows_in_sample_id_order_and_folds_follow_them():
    folds = FoldPlan.from_roles(np.array([[1, 0, 0], [0, 1, 2]], dtype=np.int8), scheme="manual")
    spec = _spec(["S2", "S10", "S1"], ["b", "a", "c"], folds=folds)
    assert spec.samples["sample_id"].tolist() == sorted(["S2", "S10", "S1"]) == ["S1", "S10", "S2"]
    by_id = dict(zip(spec.sample_ids, range(3), strict=True))
    assert spec.folds.splits[0].test.tolist() == [by_id["S2"]]
    assert spec.folds.splits[1].test.tolist() == [by_id["S10"]] and spec.folds.splits[1].excluded.tolist() == [0]


@pytest.mark.parametrize(
    ("ids", "groups", "fields", "code", "fragment"),
    [
        (["S1", "S1"], ["a", "b"], {}, "duplicate_id", "S1"),
        ([], [], {}, "empty_input", "at least one sample"),
        (["S1", ""], ["a", "b"], {}, "invalid_argument", "samples.sample_id[1]"),
        (["S1", "S2"], ["a", None], {}, "invalid_argument", "samples.group_id[1]"),
        (
            ["S1", "S2"],
            ["a", "a"],
            {
                "summary": {
                    "n_samples": 2,
                    "n_groups": 2,
                    "largest_group": "a",
                    "largest_group_size": 1,
                    "singletons": 2,
                }
            },
            "invalid_argument",
            "summary.n_groups says 2",
        ),
    ],
)
def test_build_refuses_what_a_reader_would(ids, groups, fields, code, fragment):
    with pytest.raises(DepgraphError) as err:
        _spec(ids, groups, **fields)
    assert err.value.code == code and fragment in err.value.message


def test_with_folds_refuses_a_straddling_group_and_an_empty_test():
    spec = _spec(["S1", "S2", "S3"], ["a", "a", "b"])
    with pytest.raises(DepgraphError) as err:
        spec.with_folds(FoldPlan.from_roles(np.array([[1, 0, 0]], dtype=np.int8), scheme="manual"))
    assert err.value.code == "invalid_argument" and "'a' is on both sides" in err.value.message
    with pytest.raises(DepgraphError) as err:
        spec.with_folds(FoldPlan.from_roles(np.array([[0, 0, 0]], dtype=np.int8), scheme="manual"))
    assert err.value.code == "too_few_groups" and "tests no sample" in err.value.message
    fine = spec.with_folds(FoldPlan.from_roles(np.array([[1, 2, 0]], dtype=np.int8), scheme="manual"))
    assert fine.folds.splits[0].n_test == 1  # the rest of a tested group is excluded: whole


def test_pseudonymised_rows_are_in_pseudonym_order_and_keep_their_folds(family_meta):
    g = from_metadata(family_meta)
    spec = assign_folds(SplitSpec.from_partition(derive(g, "subject"), g), "group-kfold", n_splits=3)
    hidden = pseudonymize(spec, KEY)
    assert hidden.sample_ids.tolist() == sorted(hidden.sample_ids.tolist())
    raw_of = {hmac.new(KEY.encode(), i.encode(), hashlib.sha256).hexdigest()[:32]: i for i in spec.sample_ids}
    for before, after in zip(spec.folds.splits, hidden.folds.splits, strict=True):
        assert sorted(raw_of[i] for i in hidden.sample_ids[after.test]) == sorted(spec.sample_ids[before.test])
    assert documents.problems(spec_document(hidden)) == []


# --------------------------------------------------------------------------- reading
def test_a_spec_read_holds_the_digest_of_what_it_holds_and_can_be_written_again(tmp_path):
    doc = spec_document(_spec(["S1", "S2", "S3"], ["a", "a", "b"]))
    doc["$comment"] = "a note the reader drops"
    doc["x-team"] = {"site": "A"}
    doc["samples"]["time_index"] = [0, 6, None]  # integers in a number column: read as 0.0 and 6.0
    documents.redigest(doc)
    (tmp_path / "in.json").write_text(json.dumps(doc))
    spec = read_spec(tmp_path / "in.json")
    assert spec.digest == spec.compute_digest() != doc["digest"]
    write_spec(spec, tmp_path / "out.json")
    again = read_spec(tmp_path / "out.json")
    assert again.digest == spec.digest and again.samples["time_index"].tolist()[:2] == [0.0, 6.0]


def test_the_independent_canonical_form_agrees_with_every_example():
    for path in sorted((REPO / "schema" / "examples" / "valid").glob("*.json")):
        doc = orjson.loads(path.read_bytes())
        if doc["format"] == "depgraph.split-spec":
            assert documents.digest(doc) == doc["digest"] == content_digest(doc), path.name
            assert documents.problems(doc) == [], path.name


# --------------------------------------------------------------------------- signatures
def test_a_signature_is_hmac_of_the_digest_and_survives_a_round_trip(tmp_path):
    spec = _spec(["S1", "S2", "S3"], ["a", "a", "b"]).signed(KEY)
    doc = spec_document(spec)
    assert doc["signature"] == documents.signature(doc, KEY)
    assert doc["digest"] == documents.digest(doc)  # the signature is outside the digest
    write_spec(spec, tmp_path / "signed.json")
    back = read_spec(tmp_path / "signed.json", verify_key=KEY)
    assert back.signature == spec.signature and back.digest == spec.digest
    with pytest.raises(DepgraphError) as err:
        read_spec(tmp_path / "signed.json", verify_key=KEY + "!")
    assert err.value.code == "integrity" and signing_key_fingerprint(KEY) in err.value.message


def test_a_change_of_content_drops_the_signature_a_new_timestamp_does_not():
    spec = _spec(["S1", "S2", "S3"], ["a", "a", "b"]).signed(KEY)
    assert spec.replace(created_at="2030-01-01T00:00:00+00:00").signature == spec.signature
    assert spec.replace(graph_name="another").signature is None
    assert spec.with_folds(FoldPlan.from_roles(np.array([[1, 1, 0]], dtype=np.int8))).signature is None


def test_the_signed_example_verifies_with_its_published_key():
    path = REPO / "schema" / "examples" / "valid" / "signed.json"
    doc = orjson.loads(path.read_bytes())
    key = "an example key, never use it for real"
    assert doc["signature"] == documents.signature(doc, key)
    spec = spec_from_document(doc, verify_key=key)  # verified over the file's digest, $comment included
    assert spec.signature is None and spec.digest != doc["digest"]  # the comment is dropped: new digest, no signature
    without = {k: v for k, v in doc.items() if k != "$comment"}
    documents.redigest(without)
    with pytest.raises(DepgraphError) as err:  # the old signature does not sign the new digest
        spec_from_document(without, verify_key=key)
    assert err.value.code == "integrity" and "does not match" in err.value.message


def test_a_1_0_spec_needs_unique_ids_not_ordered_ones(tmp_path):
    doc = spec_document(_spec(["S1", "S2", "S3"], ["a", "a", "b"]))
    doc["samples"] = {name: values[::-1] for name, values in doc["samples"].items()}  # as a 1.0 import could be
    doc["format_version"] = "1.0.0"
    (tmp_path / "old.json").write_text(json.dumps(documents.redigest(doc)))
    assert read_spec(tmp_path / "old.json").sample_ids.tolist() == ["S3", "S2", "S1"]
    doc["format_version"] = "1.1.0"
    (tmp_path / "new.json").write_text(json.dumps(documents.redigest(doc)))
    with pytest.raises(DepgraphError) as err:
        read_spec(tmp_path / "new.json")
    assert err.value.code == "integrity" and "samples.sample_id[1] 'S2' comes after 'S3'" in err.value.message
