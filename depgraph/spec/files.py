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
from collections.abc import Iterator
from typing import Any

import orjson
import pandas as pd
import pyarrow as pa

from depgraph.common.arguments import instance
from depgraph.common.arrays import text_series
from depgraph.engines import checked_engine, engine_of, stage
from depgraph.errors import DepgraphError
from depgraph.io.columnar import Peeked, is_columnar, output_form
from depgraph.io.files import atomic_write_bytes, read_json, read_parsed
from depgraph.io.jsoncolumns import positions, strings
from depgraph.io.schemas import check_document
from depgraph.spec.columnar import spec_from_columnar, write_columnar_spec
from depgraph.spec.columns import REQUIRED_SAMPLE_COLUMNS, column_to_json, read_column
from depgraph.spec.digest import content_digest, layout
from depgraph.spec.model import FoldPlan, SplitSpec
from depgraph.spec.reading import checked_spec, read_folds, verifying_key


def write_spec(
    spec: SplitSpec, path: str | os.PathLike[str], format: str | None = None, sign_key: str | bytes | None = None
) -> None:
    """Write ``spec`` to ``path`` atomically: as one JSON file, or in the columnar form (a directory of Parquet
    tables and a manifest, :mod:`depgraph.spec.columnar`) when ``format="parquet"`` or the path is named
    ``.dgspec``. Both forms hold the same content and carry the same digest. With ``sign_key``, the spec written is
    signed (:meth:`~depgraph.spec.model.SplitSpec.signed`). A spec of another engine (a
    :class:`~depgraph.spark.spec.SparkSpec`) is written by that engine, in the columnar form."""
    engine = engine_of(spec)
    if engine is not None:
        if format not in (None, "parquet"):
            raise DepgraphError("invalid_argument", f"the {engine} engine writes the columnar form, not {format!r}")
        stage(engine, "write_spec").write_spec_request(spec, path, sign_key)
        return
    instance(spec, SplitSpec, "write_spec: the spec")
    if sign_key is not None:
        spec = spec.signed(sign_key)
    if output_form(path, "split-spec", format) == "parquet":
        write_columnar_spec(spec, path)
    else:
        atomic_write_bytes(path, spec_json_pieces(spec))


# --------------------------------------------------------------------------- the JSON form of a spec value
def spec_document(spec: SplitSpec) -> dict[str, Any]:
    """The spec as JSON-ready Python values, keys in contract order (what :func:`spec_from_document` reads)."""
    doc = spec.envelope()
    doc["samples"] = {c: column_to_json(spec.samples[c]) for c in spec.samples.columns}
    if spec.folds is not None:
        doc["folds"] = spec.folds.to_json_dict()
    return doc


def spec_bytes(spec: SplitSpec) -> bytes:
    """The spec's JSON file: a pretty envelope, one line per sample column (readable and compact)."""
    return b"".join(spec_json_pieces(spec))


def spec_json_pieces(spec: SplitSpec) -> Iterator[bytes]:
    """:func:`spec_bytes` in pieces, for a file written piece by piece (a large column is never copied)."""
    return layout(spec.envelope(), spec.column_json(), spec.folds.to_json_dict() if spec.folds else None)


def read_spec(
    path: str | os.PathLike[str],
    verify_key: str | bytes | None = None,
    *,
    engine: str = "single",
    **engine_options: Any,
) -> SplitSpec:
    """Read and check a spec, in either form (a JSON file, or a columnar directory): schema, every element of
    every column, the digest, the signature (when ``verify_key`` is given: a missing or wrong one is refused),
    and the invariants every spec depgraph writes holds. Problems raise DepgraphError naming the first of them;
    see :func:`spec_from_document`. With ``engine="spark"``, a columnar spec so checked, its sample columns then
    read by Spark: a :class:`~depgraph.spark.spec.SparkSpec` to plan folds for (``spark=``: the session)."""
    engine = checked_engine(engine)
    if engine != "single":
        return stage(engine, "read_spec").read_spec_request(path, verify_key, **engine_options)
    if is_columnar(path):
        return spec_from_columnar(path, f"spec file {str(path)!r}", verify_key=verify_key)
    return spec_from_json(path, read_json(path, "spec file", text_arrays=True), verify_key=verify_key)


def peeked_spec(path: str | os.PathLike[str], found: Peeked, verify_key: str | bytes | None = None) -> SplitSpec:
    """The split spec at ``path``, which :func:`~depgraph.io.columnar.peek_document` has ``found`` (a JSON file's
    document parsed once), its signature checked with ``verify_key``."""
    if found.columnar:
        return read_spec(path, verify_key=verify_key)
    return spec_from_json(path, found.document, verify_key=verify_key)


def spec_from_json(path: str | os.PathLike[str], doc: Any, verify_key: str | bytes | None = None) -> SplitSpec:
    """The spec of the JSON file at ``path``, whose parsed document is ``doc``. A document whose long text
    arrays Arrow parsed (:func:`~depgraph.io.files.read_json` with ``text_arrays``) is checked as the usual parse
    is, and refused by the same error, without a second parse (:func:`~depgraph.io.files.read_parsed`)."""
    source = f"spec file {str(path)!r}"
    return read_parsed(path, "spec file", doc, lambda parsed: spec_from_document(parsed, source, verify_key=verify_key))


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
    verify_key = verifying_key(verify_key)
    original = doc
    doc = check_document(doc, "split-spec", source)  # format, version, envelope schema; migrates
    samples, exact, id_text = _samples_frame(doc["samples"], source)
    folds = _folds(doc.get("folds"), len(samples), source)
    envelope = {k: v for k, v in doc.items() if k not in ("samples", "folds", "$comment") and not k.startswith("x-")}
    try:
        expected = content_digest(original)  # over the document as written, fields this reader ignores included
    except (TypeError, orjson.JSONEncodeError) as exc:  # a document built in Python holding non-JSON values
        raise DepgraphError("schema", f"{source}: holds values that are not JSON data ({exc})") from exc
    return checked_spec(
        envelope, samples, folds, written=original, expected=expected, exact=exact, text=id_text, source=source,
        verify_key=verify_key,
    )  # fmt: skip


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
            arrow[name] = strings(values, where, non_empty=True)
            frame[name] = text_series(arrow[name])
        else:
            frame[name], as_written = read_column(name, values, where)
            exact &= as_written
    return pd.DataFrame(frame), exact, (arrow["sample_id"], arrow["group_id"])


def _folds(doc: Any, n_samples: int, source: str) -> FoldPlan | None:
    """The document's fold plan, every split's positions read and checked."""
    if doc is None:
        return None
    splits = []
    for i, entry in enumerate(doc.get("splits", [])):
        arrays = {name: positions(entry.get(name), f"{source}: folds.splits[{i}].{name}", n_samples)
                  for name in ("test", "excluded")}  # fmt: skip
        splits.append({**{k: v for k, v in entry.items() if k not in arrays}, **arrays})
    return read_folds(doc, splits, n_samples, source)
