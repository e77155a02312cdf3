"""Fuzzed graph and spec files: the readers raise only DepgraphError, and accept nothing unsound.

Small valid files (a spec with folds, a pseudonymised spec, a study graph) are
damaged at random: bytes flipped, fields dropped, values changed to another
type, keys repeated, and semantic edits made and re-digested as a careless
script would (group ids swapped, a sample moved across a fold, summary counts
changed, rows reordered). For every file:

* ``read_spec`` / ``read_graph`` return or raise :class:`DepgraphError`, with a
  one-line message and a catalogued code; anything else is a bug;
* ``depgraph validate`` exits 0, 1 (graph findings) or 2 with exactly one
  ``depgraph: <code>: ...`` line on stderr;
* a spec that is accepted satisfies every rule when re-checked by the
  independent plain-Python checker of tests/documents.py (its digest
  recomputed with hashlib), reads back as written, and carries the digest of
  what it holds; an accepted graph holds what the file declares;
* an object that repeats a key is never accepted.

Hypothesis runs derandomized (same examples on every run, no example
database), over 1,000 examples in all, in well under a minute.
"""

from __future__ import annotations

import contextlib
import copy
import functools
import io
import json
import random
from pathlib import Path
from typing import Any

import orjson
import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from depgraph import add_kinship, derive, from_metadata
from depgraph.cli.main import main
from depgraph.errors import ERROR_CODES, DepgraphError
from depgraph.folds.schemes import assign_folds
from depgraph.graph.files import graph_document, read_graph
from depgraph.spec.files import read_spec, spec_document
from depgraph.spec.model import SplitSpec
from depgraph.spec.privacy import pseudonymize
from tests import documents

FUZZ = settings(
    derandomize=True,
    database=None,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
)
META = "sample_id,subject_id,batch_id,timepoint_id,time_index,outcome_id,sex\n" + "".join(
    f"S{i:02d},{subject},B{i % 3},T{i % 2},{6 * (i % 2)},{'case' if i % 3 else 'control'},{'FM'[i % 2]}\n"
    for i, subject in enumerate(["P1", "P1", "P1", "P2", "P2", "P3", "P3", "P4", "P5", "P5"], start=1)
)
ODD_VALUES = [None, True, False, 0, -1, 1, 7, 1.5, -0.25, 2**63, -(2**63) - 1, "", "x", "S01", [], [1], {}, {"a": 1}]


@functools.cache
def _bases() -> dict[str, dict[str, Any]]:
    """The valid documents every example starts from (built once)."""
    kinship = pd.DataFrame({"id1": ["P1", "P4"], "id2": ["P2", "P5"], "kinship": [0.25, 0.125]})
    meta = pd.read_csv(io.StringIO(META), dtype=str)
    graph = add_kinship(from_metadata(meta), kinship, 0.1)
    spec = SplitSpec.from_partition(derive(graph, "subject"), graph, attributes=["sex"])
    with_folds = assign_folds(spec, "group-kfold", n_splits=3)
    related = assign_folds(SplitSpec.from_partition(derive(graph, "relatedness"), graph), "holdout", test_fraction=0.3)
    hidden = pseudonymize(with_folds, "a fuzzing key that is long enough, 2026")
    bases = {
        "spec": spec_document(with_folds),
        "related": spec_document(related),
        "pseudonymized": spec_document(hidden),
        "graph": graph_document(graph),
    }
    for name, doc in bases.items():
        check = documents.graph_problems if name == "graph" else documents.problems
        assert check(doc) == [], (name, check(doc))
    return bases


def _paths(value: Any, here: tuple = ()) -> list[tuple]:
    """Every path to a value inside a document (object keys and array positions)."""
    found = [here] if here else []
    if isinstance(value, dict):
        for key, inner in value.items():
            found += _paths(inner, (*here, key))
    elif isinstance(value, list):
        for i, inner in enumerate(value):
            found += _paths(inner, (*here, i))
    return found


@functools.cache
def _paths_of(name: str) -> list[tuple]:
    return _paths(_bases()[name])


def _container(doc: Any, path: tuple) -> tuple[Any, Any]:
    for step in path[:-1]:
        doc = doc[step]
    return doc, path[-1]


# --------------------------------------------------------------------------- the assertions
def _read(path: Path, kind: str) -> Any:
    """The reader's answer: the object read, or the DepgraphError (anything else propagates: a bug)."""
    try:
        return (read_graph if kind == "graph" else read_spec)(path)
    except DepgraphError as err:
        assert err.code in ERROR_CODES and "\n" not in err.message, err
        return err


def _cli_validate(path: Path) -> int:
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        status = main(["validate", str(path)])
    lines = err.getvalue().splitlines()
    if status == 2:
        assert len(lines) == 1 and lines[0].startswith("depgraph: "), err.getvalue()
        assert lines[0].split(": ")[1] in ERROR_CODES, lines[0]
    else:
        assert status in (0, 1) and not lines, (status, err.getvalue())
    return status


def _judge(path: Path, kind: str, cli: bool, repeated_key: bool = False) -> None:
    """The file at ``path`` is refused with a DepgraphError, or accepted and sound (``cli``: and
    ``depgraph validate`` agrees, in one line)."""
    result = _read(path, kind)
    accepted = not isinstance(result, DepgraphError)
    if cli:
        status = _cli_validate(path)
        assert (status != 2) == accepted, (status, result)
    if repeated_key:
        assert not accepted and result.code == "parse" and "repeats the key" in result.message, result
        return
    if not accepted:
        return
    doc = json.loads(path.read_bytes())  # what the file says (a repeated key was refused above)
    if kind == "graph":
        assert documents.graph_problems(doc) == [], documents.graph_problems(doc)
        declared = {t: set(keys) for t, keys in doc["nodes"].items() if keys}
        held = {t: set(keys) for t, keys in graph_document(result)["nodes"].items()}
        assert held == declared
        return
    assert documents.problems(doc) == [], documents.problems(doc)
    assert result.digest == result.compute_digest()  # the spec holds the digest of what it holds
    assert spec_document(result)["samples"] == doc["samples"]  # read as written
    if doc.get("folds") is not None:
        assert [list(s.test) for s in result.folds.splits] == [s["test"] for s in doc["folds"]["splits"]]


def _write(tmp_path: Path, doc: Any) -> Path:
    path = tmp_path / "fuzzed.json"
    path.write_bytes(doc if isinstance(doc, bytes) else json.dumps(doc, indent=2, ensure_ascii=False).encode("utf-8"))
    return path


#: One example in four also runs ``depgraph validate`` (the CLI costs more than the reader it calls).
CLI = st.sampled_from([True, False, False, False])


# --------------------------------------------------------------------------- byte damage
@settings(FUZZ, max_examples=300)
@given(
    name=st.sampled_from(["spec", "pseudonymized", "graph"]),
    flips=st.lists(st.tuples(st.floats(0, 1, exclude_max=True), st.integers(0, 255)), min_size=1, max_size=3),
    cut=st.sampled_from([None, None, None, "delete", "insert"]),
    cli=CLI,
)
def test_flipped_bytes(tmp_path, name, flips, cut, cli):
    text = damaged(orjson.dumps(_bases()[name], option=orjson.OPT_INDENT_2), flips, cut)
    _judge(_write(tmp_path, text), "graph" if name == "graph" else "spec", cli)


def damaged(text: bytes, flips: list[tuple[float, int]], cut: str | None) -> bytes:
    """``text`` with a byte at each of ``flips``' places (a fraction of the length) deleted, inserted or
    replaced, as ``cut`` says (None: replaced)."""
    out = bytearray(text)
    for where, byte in flips:
        i = int(where * len(out))
        if cut == "delete":
            del out[i]
        elif cut == "insert":
            out.insert(i, byte)
        else:
            out[i] = byte
    return bytes(out)


# --------------------------------------------------------------------------- dropped fields and changed types
@settings(FUZZ, max_examples=300)
@given(
    name=st.sampled_from(["spec", "related", "pseudonymized", "graph"]),
    data=st.data(),
    redigest=st.booleans(),
    cli=CLI,
)
def test_dropped_fields_and_changed_types(tmp_path, name, data, redigest, cli):
    doc = copy.deepcopy(_bases()[name])
    for _ in range(data.draw(st.integers(1, 3))):
        path = data.draw(st.sampled_from(_paths_of(name)))
        try:
            holder, key = _container(doc, path)
            if data.draw(st.booleans()):
                holder.pop(key)
            else:
                holder[key] = copy.deepcopy(data.draw(st.sampled_from(ODD_VALUES)))
        except (KeyError, IndexError, TypeError):  # an earlier change removed the path
            continue
    if redigest and name != "graph" and isinstance(doc, dict):
        with contextlib.suppress(TypeError, ValueError, AttributeError):
            documents.redigest(doc)
    _judge(_write(tmp_path, doc), "graph" if name == "graph" else "spec", cli)


# --------------------------------------------------------------------------- repeated keys
@settings(FUZZ, max_examples=150)
@given(name=st.sampled_from(["spec", "pseudonymized", "graph"]), data=st.data(), cli=CLI)
def test_a_repeated_key_is_never_accepted(tmp_path, name, data, cli):
    doc = copy.deepcopy(_bases()[name])
    objects = [p for p in [(), *_paths_of(name)] if isinstance(_at(doc, p), dict) and _at(doc, p)]
    where = data.draw(st.sampled_from(objects))
    target = _at(doc, where)
    key = data.draw(st.sampled_from(sorted(target)))
    decoy = copy.deepcopy(data.draw(st.sampled_from([target[key], *ODD_VALUES])))
    first = data.draw(st.booleans())  # the decoy before or after the real value
    marker = "\u2603repeat\u2603"
    target[marker] = None
    text = json.dumps(doc, ensure_ascii=False)
    pair = f"{json.dumps(key, ensure_ascii=False)}: {json.dumps(decoy, ensure_ascii=False)}"
    placed = text.replace(f'"{marker}": null', pair) if not first else _before(text, target, key, marker, pair)
    _judge(_write(tmp_path, placed.encode("utf-8")), "graph" if name == "graph" else "spec", cli, repeated_key=True)


def _at(doc: Any, path: tuple) -> Any:
    for step in path:
        doc = doc[step]
    return doc


def _before(text: str, target: dict, key: str, marker: str, pair: str) -> str:
    """The text with ``pair`` as the object's first member (the marker, last, removed)."""
    target.pop(marker)
    real = json.dumps(target, ensure_ascii=False)
    return text.replace(json.dumps({**target, marker: None}, ensure_ascii=False), "{" + pair + ", " + real[1:], 1)


# --------------------------------------------------------------------------- semantic edits, re-digested
def _swap_groups(doc: dict, rng: random.Random) -> None:
    groups = doc["samples"]["group_id"]
    i, j = rng.sample(range(len(groups)), 2)
    groups[i], groups[j] = groups[j], groups[i]


def _move_across_a_fold(doc: dict, rng: random.Random) -> None:
    splits = (doc.get("folds") or {}).get("splits") or []
    if not splits:
        return
    split = rng.choice(splits)
    n = len(doc["samples"]["sample_id"])
    p = rng.randrange(n)
    if p in split["test"]:
        split["test"].remove(p)
        split["n_test"] -= 1
        split["n_train"] += 1
    elif p in split["excluded"]:
        split["excluded"].remove(p)
        split["n_excluded"] -= 1
        split["n_train"] += 1
    elif rng.random() < 0.5:
        split["test"] = sorted([*split["test"], p])
        split["n_test"] += 1
        split["n_train"] -= 1
    else:  # leaving a sample out is a sound edit: nothing straddles for it
        split["excluded"] = sorted([*split["excluded"], p])
        split["n_excluded"] += 1
        split["n_train"] -= 1


def _edit_summary(doc: dict, rng: random.Random) -> None:
    field = rng.choice(["n_samples", "n_groups", "largest_group", "largest_group_size", "singletons"])
    value = doc["summary"][field]
    doc["summary"][field] = (
        rng.choice(doc["samples"]["group_id"]) if field == "largest_group" else value + rng.choice([-1, 1])
    )


def _swap_rows(doc: dict, rng: random.Random) -> None:
    i, j = rng.sample(range(len(doc["samples"]["sample_id"])), 2)
    for values in doc["samples"].values():
        values[i], values[j] = values[j], values[i]


def _repeat_an_id(doc: dict, rng: random.Random) -> None:
    ids = doc["samples"]["sample_id"]
    i = rng.randrange(1, len(ids))
    ids[i] = ids[i - 1]


def _new_group(doc: dict, rng: random.Random) -> None:
    doc["samples"]["group_id"][rng.randrange(len(doc["samples"]["group_id"]))] = "subject:P" + "9" * rng.randint(1, 3)


def _empty_a_test(doc: dict, rng: random.Random) -> None:
    splits = (doc.get("folds") or {}).get("splits") or []
    if splits:
        split = rng.choice(splits)
        split["n_train"] += split["n_test"]
        split["test"], split["n_test"] = [], 0


def _claim_pseudonyms(doc: dict, rng: random.Random) -> None:
    doc["pseudonymization"] = {
        "method": "hmac-sha256",
        "hex_digits": rng.choice([16, 32]),
        "key_fingerprint": "0123456789abcdef",
        "columns": rng.choice([["sample_id", "group_id"], ["sample_id"], ["group_id"], ["batch_group"]]),
    }


def _drop_samples(doc: dict, rng: random.Random) -> None:
    keep = sorted(rng.sample(range(len(doc["samples"]["sample_id"])), rng.randint(0, 3)))
    doc["samples"] = {name: [values[i] for i in keep] for name, values in doc["samples"].items()}
    doc.pop("folds", None)


EDITS = [
    _swap_groups,
    _move_across_a_fold,
    _edit_summary,
    _swap_rows,
    _repeat_an_id,
    _new_group,
    _empty_a_test,
    _claim_pseudonyms,
    _drop_samples,
]


@pytest.mark.slow  # ~6 s; CI runs it (--slow)
@settings(FUZZ, max_examples=300)
@given(
    name=st.sampled_from(["spec", "related", "pseudonymized"]),
    edits=st.lists(st.sampled_from(EDITS), min_size=1, max_size=3),
    seed=st.integers(0, 2**32 - 1),
    fix_summary=st.booleans(),
    cli=CLI,
)
def test_redigested_semantic_edits(tmp_path, name, edits, seed, fix_summary, cli):
    doc = copy.deepcopy(_bases()[name])
    rng = random.Random(seed)
    for edit in edits:
        if len(doc["samples"]["sample_id"]) >= 2:  # (after _drop_samples there may be nothing left to edit)
            edit(doc, rng)
    if fix_summary and _edit_summary not in edits:  # so that the deeper rules are what is left broken
        doc["summary"] = documents.summary_of(doc["samples"]["group_id"])
    documents.redigest(doc)
    _judge(_write(tmp_path, doc), "spec", cli)
