"""Rewrite the example documents in this folder (run from the repository root:
``python schema/examples/regenerate.py``).

Valid examples are real depgraph output. Each invalid example is a valid one
broken in exactly one way; its ``$comment`` names the rule it breaks and the
error code a reader must answer with (``expect: <code>``). The digest of every
invalid example except ``digest-mismatch`` is recomputed after the damage, so
the reader fails for the stated reason and not on the digest.
"""

from __future__ import annotations

import copy
from pathlib import Path

import numpy as np
import orjson
import pandas as pd

from depgraph import add_kinship, derive, from_metadata
from depgraph.graph.files import graph_document
from depgraph.spec.digest import content_digest, layout
from depgraph.spec.model import FoldPlan, FoldSplit, Signature, SplitSpec
from depgraph.spec.privacy import pseudonymize

HERE = Path(__file__).resolve().parent
FIXED_TIME = "2026-01-01T00:00:00+00:00"
#: The key of the signed example (docs/spec.md quotes it): an example, never use it for real.
EXAMPLE_KEY = "an example key, never use it for real"


def cohort():
    meta = pd.DataFrame(
        {
            "sample_id": ["S1", "S2", "S3", "S4", "S5", "S6"],
            "subject_id": ["P1", "P1", "P2", "P3", "P3", "P4"],
            "batch_id": ["B1", "B2", "B1", "B2", None, "B1"],
            "timepoint_id": ["T0", "T1", "T0", "T0", "T1", "T1"],
            "time_index": [0, 6, 0, 0, 6, 6],
            "outcome_id": ["case", "case", "control", "case", "case", "control"],
        }
    )
    kinship = pd.DataFrame({"id1": ["P2"], "id2": ["P4"], "kinship": [0.25]})
    return add_kinship(from_metadata(meta, name="example cohort"), kinship, "first")


def finish(doc: dict, comment: str, digest: bool = True) -> dict:
    doc = {"$comment": comment, **{k: v for k, v in doc.items() if k != "$comment"}}
    doc["created_at"] = FIXED_TIME
    if digest:
        doc["digest"] = content_digest(doc)
    return doc


def spec_bytes(doc: dict) -> bytes:
    """A spec document laid out as depgraph writes it (one line per sample column and per fold split)."""
    envelope = {k: v for k, v in doc.items() if k not in ("samples", "folds")}
    columns = {name: orjson.dumps(values) for name, values in doc["samples"].items()}
    return b"".join(layout(envelope, columns, doc.get("folds")))


def write(path: Path, doc: dict) -> None:
    path.write_bytes(spec_bytes(doc) if "samples" in doc else orjson.dumps(doc, option=orjson.OPT_INDENT_2) + b"\n")


def reorder(doc: dict, order: list[int]) -> None:
    """Put the sample rows in ``order`` (fold positions left as they are)."""
    doc["samples"] = {name: [values[i] for i in order] for name, values in doc["samples"].items()}


def main() -> None:
    graph = cohort()
    subject = SplitSpec.from_partition(derive(graph, "subject"), graph)
    tests = [[0, 1], [2, 5], [3, 4]]
    splits = [FoldSplit.of(0, i, np.array(t), np.array([], dtype=np.int64), 6) for i, t in enumerate(tests)]
    relatedness = SplitSpec.from_partition(derive(graph, "relatedness"), graph)
    with_folds = relatedness.with_folds(FoldPlan(scheme="manual", splits=splits, seed=None))
    time = SplitSpec.from_partition(derive(graph, "time"), graph)
    hidden = pseudonymize(subject, EXAMPLE_KEY)

    valid = {
        "subject.json": finish(subject.to_json_dict(), "valid: subject mode with block, time and stratum columns"),
        "relatedness-with-folds.json": finish(with_folds.to_json_dict(), "valid: relatedness groups and 3 folds"),
        "time.json": finish(time.to_json_dict(), "valid: time mode, order_rank from time_index"),
        "pseudonymized.json": finish(hidden.to_json_dict(), "valid: sample and group ids replaced by HMAC-SHA256"),
    }
    signed = finish(with_folds.to_json_dict(), f"valid: signed with HMAC-SHA256 under the key {EXAMPLE_KEY!r}")
    signed["signature"] = Signature.of(signed["digest"], EXAMPLE_KEY).model_dump()  # over the digest, $comment in
    valid["signed.json"] = signed
    for name, doc in valid.items():
        write(HERE / "valid" / name, doc)
    write(HERE / "valid" / "study-graph.json", {"$comment": "valid: the example cohort's graph",
                                                **graph_document(graph)})  # fmt: skip

    base = valid["relatedness-with-folds.json"]

    def broken(change, comment, digest=True):
        doc = copy.deepcopy(base)
        change(doc)
        return finish(doc, comment, digest)

    invalid = {
        "unequal-columns.json": broken(
            lambda d: d["samples"]["group_id"].pop(), "invalid: samples columns must have equal lengths; expect: schema"
        ),
        "duplicate-sample-ids.json": broken(
            lambda d: d["samples"]["sample_id"].__setitem__(1, "S1"),
            "invalid: sample ids are unique (re-digested: the content contradicts itself); expect: integrity",
        ),
        "unsorted-sample-ids.json": broken(
            lambda d: reorder(d, [1, 0, 2, 3, 4, 5]),
            "invalid: samples are in sample-id order, which fold positions count in; expect: integrity",
        ),
        "summary-disagrees.json": broken(
            lambda d: d["summary"].__setitem__("n_groups", 4),
            "invalid: the summary counts the samples columns; expect: integrity",
        ),
        "straddling-group.json": broken(
            lambda d: d["folds"]["splits"][0].update(test=[0], n_test=1, n_train=5),
            "invalid: no group has a tested and a trained sample in one split; expect: integrity",
        ),
        "empty-test.json": broken(
            lambda d: d["folds"]["splits"][2].update(test=[], n_test=0, n_train=6),
            "invalid: every split tests at least one sample; expect: integrity",
        ),
        "raw-ids-pseudonymized.json": broken(
            lambda d: d.__setitem__(
                "pseudonymization",
                {"method": "hmac-sha256", "hex_digits": 32, "key_fingerprint": "0123456789abcdef",
                 "columns": ["sample_id", "group_id"]},
            ),
            "invalid: a pseudonymised spec holds pseudonyms, not raw ids; expect: integrity",
        ),
        "empty-sample-id.json": broken(
            lambda d: d["samples"]["sample_id"].__setitem__(4, ""),
            "invalid: sample ids are non-empty text (every element is checked); expect: schema",
        ),
        "negative-order-rank.json": broken(
            lambda d: d["samples"].update(order_rank=[1, 2, 1, 1, -7, 2]),
            "invalid: order_rank is an integer of at least 1; expect: schema",
        ),
        "position-beyond-64-bits.json": broken(
            lambda d: d["folds"]["splits"][0]["test"].__setitem__(1, 2**63),
            "invalid: fold positions index the samples, 2^63 included; expect: schema",
        ),
        "digest-mismatch.json": broken(
            lambda d: d["samples"]["group_id"].__setitem__(0, "relatedness:S3"),
            "invalid: the digest must match the content (a group was edited after writing); expect: integrity",
            digest=False,
        ),
        "newer-major-version.json": broken(
            lambda d: d.__setitem__("format_version", "2.0.0"),
            "invalid: readers accept only their own major format_version; expect: version",
        ),
        "unknown-mode.json": broken(
            lambda d: d["constraint"].__setitem__("mode", "family"),
            "invalid: constraint.mode is a depgraph mode; expect: schema",
        ),
        "missing-group-id.json": broken(
            lambda d: d["samples"].pop("group_id"), "invalid: samples must hold group_id; expect: schema"
        ),
        "null-sample-id.json": broken(
            lambda d: d["samples"]["sample_id"].__setitem__(2, None), "invalid: every sample has an id; expect: schema"
        ),
        "wrong-column-type.json": broken(
            lambda d: d["samples"]["time_index"].__setitem__(0, "zero"),
            "invalid: time_index holds numbers; expect: schema",
        ),
        "position-out-of-range.json": broken(
            lambda d: d["folds"]["splits"][0]["test"].__setitem__(1, 6),
            "invalid: fold positions index the samples (0 to n-1); expect: schema",
        ),
        "tested-and-excluded.json": broken(
            lambda d: d["folds"]["splits"][1].update(excluded=[2], n_excluded=1, n_train=3),
            "invalid: a sample is tested or excluded, not both; expect: schema",
        ),
        "counts-disagree.json": broken(
            lambda d: d["folds"]["splits"][2].__setitem__("n_test", 3),
            "invalid: n_train/n_test/n_excluded match the positions; expect: schema",
        ),
        "no-digest.json": broken(
            lambda d: d.pop("digest"), "invalid: a spec carries its digest; expect: schema", digest=False
        ),
    }
    for name, doc in invalid.items():
        write(HERE / "invalid" / name, doc)
    gdoc = graph_document(graph)
    bad_graph = copy.deepcopy(gdoc)
    bad_graph["edges"]["sample_belongs_to_family"] = bad_graph["edges"].pop("sample_belongs_to_subject")
    write(HERE / "invalid" / "graph-unknown-relation.json",
          {"$comment": "invalid: edges are keyed by depgraph relations; expect: schema", **bad_graph})  # fmt: skip
    short = copy.deepcopy(gdoc)
    short["attributes"]["Timepoint"]["time_index"].pop()
    write(HERE / "invalid" / "graph-attribute-length.json",
          {"$comment": "invalid: an attribute list is as long as its node list; expect: schema", **short})  # fmt: skip
    null_end = copy.deepcopy(gdoc)
    null_end["edges"]["sample_belongs_to_subject"]["source"][3] = None
    write(HERE / "invalid" / "graph-null-endpoint.json",
          {"$comment": "invalid: edge endpoints are node keys, never null; expect: schema", **null_end})  # fmt: skip
    nested = copy.deepcopy(gdoc)
    nested["attributes"]["Timepoint"]["time_index"][1] = [6]
    write(HERE / "invalid" / "graph-list-attribute.json",
          {"$comment": "invalid: attribute values are text, numbers, booleans or null; expect: schema",
           **nested})  # fmt: skip

    # a second "samples" before the real one: the digest matches the last (what orjson and Python keep), while
    # R's jsonlite would read the first; every depgraph reader refuses an object that repeats a key
    twice = finish(base, "invalid: no JSON object repeats a key; expect: parse")
    decoy = {name: list(values) for name, values in twice["samples"].items()}
    decoy["group_id"] = ["relatedness:S1"] * len(decoy["group_id"])
    text = spec_bytes(twice)
    text = text.replace(b'  "samples": {', b'  "samples": ' + orjson.dumps(decoy) + b',\n  "samples": {', 1)
    (HERE / "invalid" / "repeated-key.json").write_bytes(text)


if __name__ == "__main__":
    main()
