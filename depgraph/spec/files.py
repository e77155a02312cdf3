"""Spec files: :func:`write_spec` and :func:`read_spec`, and :func:`spec_from_document` with every check a reader
makes of a document (format, version, schema, every element of every column, the digest, the signature, and what
the content says of itself).

>>> import pandas as pd, tempfile, pathlib
>>> from depgraph.spec.model import Constraint, SplitSpec
>>> spec = SplitSpec.build(pd.DataFrame({"sample_id": ["S1", "S2"], "group_id": ["a", "b"]}),
...                        constraint=Constraint(mode="subject"), recommended_resampling="grouped_cv")
>>> path = pathlib.Path(tempfile.mkdtemp()) / "spec.json"
>>> write_spec(spec, path)
>>> read_spec(path).digest == spec.digest
True
"""

from __future__ import annotations

import os
from typing import Any

import orjson
import pandas as pd
import pyarrow as pa
from pydantic import BaseModel, ValidationError

from depgraph.common.arguments import instance
from depgraph.errors import DepgraphError
from depgraph.io.files import atomic_write_bytes, read_json
from depgraph.io.jsoncolumns import positions, text
from depgraph.io.schemas import check_document
from depgraph.spec.checks import check_fold_content, check_pseudonyms, check_sample_order, check_splits
from depgraph.spec.columns import REQUIRED_SAMPLE_COLUMNS, read_column
from depgraph.spec.digest import UNDIGESTED, content_digest, verify_signature
from depgraph.spec.keys import check_key
from depgraph.spec.model import FoldPlan, FoldSplit, SplitSpec, model_refusal


def _read_model(model: type[BaseModel], values: dict[str, Any], source: str, within: str = "") -> Any:
    """``model`` validated from a document's ``values``; a problem is a ``schema`` error of ``source``, the
    field named by its path in the document (pydantic runs the models' own ``__init__`` on nested values, which
    refuse as ``invalid_argument``: re-coded here)."""
    try:
        return model.model_validate(values)
    except ValidationError as exc:
        raise model_refusal(source, exc, "schema", within) from None
    except DepgraphError as exc:
        problem = exc.details.get("problem", exc.message)
        where = within if exc.details.get("field") else within.rstrip(".") + (": " if within else "")
        raise DepgraphError("schema", f"{source}: {where}{problem}") from None


def write_spec(spec: SplitSpec, path: str | os.PathLike[str]) -> None:
    """Write ``spec`` as JSON to ``path`` atomically."""
    instance(spec, SplitSpec, "write_spec: the spec")
    atomic_write_bytes(path, spec.json_pieces())


def read_spec(path: str | os.PathLike[str], verify_key: str | bytes | None = None) -> SplitSpec:
    """Read and check a spec: schema, every element of every column, the digest,
    the signature (when ``verify_key`` is given: a missing or wrong one is
    refused), and the invariants every spec depgraph writes holds. Problems raise
    DepgraphError naming the first of them; see :func:`spec_from_document`."""
    return spec_from_document(read_json(path, "spec file"), f"spec file {str(path)!r}", verify_key=verify_key)


def spec_from_document(doc: Any, source: str = "spec", verify_key: str | bytes | None = None) -> SplitSpec:
    """A SplitSpec from a parsed JSON document, with every check of :func:`read_spec`.

    In order: format, version and envelope (jsonschema) and every element of
    the sample columns and fold positions (``schema``, ``version``); the digest
    over the document as written (``integrity``); with ``verify_key``, the
    signature (``integrity``); then what the content must say of itself
    (``integrity`` even when the digest matches, since anyone can recompute a
    digest): at least one sample, sample ids in byte order without repeats, a
    summary that counts the columns, every split testing someone and keeping
    each group on one side, pseudonyms where ``pseudonymization`` says ids are
    pseudonymised.

    The spec returned holds the digest of what it holds: the file's own digest,
    unless the reader dropped something the file carries (``$comment``, ``x-``
    fields, a newer minor's fields) or filled in a default or spelt a number
    its own way (``6`` in ``time_index`` is ``6.0``); then the digest is
    recomputed and a signature, which signed the file's digest, is dropped.
    """
    if verify_key is not None:  # a wrong key is the caller's mistake, named before the file is judged
        verify_key = check_key(verify_key, "the verifying key")
    original = doc
    doc = check_document(doc, "split-spec", source)  # format, version, envelope schema; migrates
    samples, exact, arrays = _samples_frame(doc["samples"], source)
    folds = _folds(doc.get("folds"), len(samples), source)
    envelope = {k: v for k, v in doc.items() if k not in ("samples", "folds", "$comment") and not k.startswith("x-")}
    spec = _read_model(SplitSpec, {**envelope, "samples": samples, "folds": folds}, source)
    try:
        expected = content_digest(original)  # over the document as written, fields this reader ignores included
    except (TypeError, orjson.JSONEncodeError) as exc:  # a document built in Python holding non-JSON values
        raise DepgraphError("schema", f"{source}: holds values that are not JSON data ({exc})") from exc
    if spec.digest != expected:
        raise DepgraphError(
            "integrity",
            f"{source}: digest does not match the content (file says {str(spec.digest)[:19]}…, content is "
            f"{expected[:19]}…); the file was edited or damaged",
        )
    if verify_key is not None:
        verify_signature(_signed(spec), expected, verify_key, source)
    _check_content(spec, source, *arrays)
    if not (exact and _same_envelope(original, spec)):
        spec = spec.with_own_digest()  # the digest of what this spec holds; the file's signature does not sign it
    return spec


def _same_envelope(original: dict[str, Any], spec: SplitSpec) -> bool:
    """Whether the spec's fields, outside the sample columns and fold positions, are those the document
    spells (then the document's digest is the spec's own)."""
    ours = spec.envelope()
    if spec.folds is not None:
        ours["folds"] = spec.folds.model_dump(mode="json")
    theirs = {k: v for k, v in original.items() if k != "samples"}
    folds = theirs.get("folds")
    if isinstance(folds, dict) and isinstance(folds.get("splits"), list):
        splits = [{k: v for k, v in split.items() if k not in ("test", "excluded")} for split in folds["splits"]]
        theirs["folds"] = {**folds, "splits": splits}
    keep = set(ours) | set(theirs)
    return all(
        k in ours
        and k in theirs
        and orjson.dumps(ours[k], option=orjson.OPT_SORT_KEYS) == orjson.dumps(theirs[k], option=orjson.OPT_SORT_KEYS)
        for k in keep - UNDIGESTED
    ) and set(original["samples"]) == set(spec.samples.columns)


def _samples_frame(columns: dict[str, list[Any]], source: str) -> tuple[pd.DataFrame, bool, tuple[pa.Array, ...]]:
    """The sample columns, every element checked (vectorised), as a frame; whether the frame spells
    every value as the document does (``False`` when integers were read into a number column); and
    the sample and group ids as Arrow text, for the content checks."""
    lengths = {c: len(v) for c, v in columns.items()}
    if len(set(lengths.values())) > 1:
        n = lengths["sample_id"]
        odd = {c: k for c, k in lengths.items() if k != n}
        raise DepgraphError(
            "schema",
            f"{source}: samples columns must have equal lengths; sample_id has {n}, "
            + ", ".join(f"{c} has {k}" for c, k in odd.items()),
        )
    frame: dict[str, Any] = {}
    arrow: dict[str, pa.Array] = {}
    exact = True
    for name, values in columns.items():
        where = f"{source}: samples.{name}"
        if name in REQUIRED_SAMPLE_COLUMNS:
            elements, arrow[name] = text(values, where, non_empty=True)
            frame[name] = pd.Series(elements, dtype=object, copy=False)
        else:
            frame[name], as_written = read_column(name, values, where)
            exact &= as_written
    return pd.DataFrame(frame), exact, (arrow["sample_id"], arrow["group_id"])


def _folds(doc: Any, n_samples: int, source: str) -> FoldPlan | None:
    if doc is None:
        return None
    splits = []
    for i, entry in enumerate(doc.get("splits", [])):
        arrays = {name: positions(entry.get(name), f"{source}: folds.splits[{i}].{name}", n_samples)
                  for name in ("test", "excluded")}  # fmt: skip
        values = {**{k: v for k, v in entry.items() if k not in arrays}, **arrays}
        splits.append(_read_model(FoldSplit, values, source, f"folds.splits[{i}]."))
    check_splits(splits, n_samples, f"{source}: folds")
    return _read_model(
        FoldPlan, {**{k: v for k, v in doc.items() if k != "splits"}, "splits": splits}, source, "folds."
    )


def _check_content(spec: SplitSpec, source: str, ids: pa.Array, group_ids: pa.Array) -> None:
    """What every spec depgraph writes says of itself (``ids`` and ``group_ids``: its columns as Arrow
    text); ``integrity`` errors, since the digest may well match."""
    if spec.n_samples == 0:
        raise DepgraphError("integrity", f"{source}: holds no samples")
    if spec.pseudonymization is not None:  # first: raw ids under a pseudonymization block are the worst news
        pseudonyms = spec.pseudonymization
        check_pseudonyms(spec.samples, pseudonyms.columns, pseudonyms.hex_digits, source, "integrity")
    # 1.0 writers kept imported, built and pseudonymised rows in the order they came in: unique is all 1.0 promised
    check_sample_order(ids, source, unique_only=spec.format_version.startswith("1.0."))
    groups = spec.grouped(group_ids)
    groups.check_summary(spec.summary.model_dump(), source, "integrity")
    if spec.folds is not None:
        check_fold_content(spec.folds, groups, spec.sample_ids, f"{source}: folds", "integrity")


def _signed(spec: SplitSpec) -> tuple[str, str] | None:
    """The spec's signature as (key fingerprint, value), or None."""
    return None if spec.signature is None else (spec.signature.key_fingerprint, spec.signature.value)
