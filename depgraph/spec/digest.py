"""A spec's bytes: the canonical form its digest is taken over, the digest, the signing values, and the layout
a spec file is written in.

The digest is ``sha256:<hex>`` of the canonical content: every top-level field but :data:`UNDIGESTED`, as compact
JSON with sorted keys, so two teams can tell they hold the same split and an edited file is refused. A signature is
HMAC-SHA256 of :data:`SIGNED_PREFIX` + digest under a key the teams share. Large sample columns are hashed and
written piece by piece, never copied into one buffer.

>>> content_digest({"b": 1, "a": "x", "created_at": "today"}) == content_digest({"a": "x", "b": 1})
True
"""

from __future__ import annotations

import hashlib
import hmac
from collections.abc import Iterable, Iterator, Mapping
from typing import Any

import orjson
import pyarrow as pa

from depgraph.errors import DepgraphError
from depgraph.io.jsoncolumns import json_array

#: Fields left out of the digest: they change between two writes (or signatures) of one split.
UNDIGESTED: frozenset[str] = frozenset({"created_at", "generator", "digest", "signature"})
#: A signature is HMAC-SHA256(key, SIGNED_PREFIX + digest).
SIGNED_PREFIX = b"depgraph.split-spec:"
_SIGNING_FINGERPRINT_LABEL = b"depgraph signing key fingerprint"


def key_bytes(key: str | bytes) -> bytes:
    """A key as bytes (text in UTF-8)."""
    return key.encode() if isinstance(key, str) else bytes(key)


def signature_value(digest: str, key: str | bytes) -> str:
    """HMAC-SHA256(``key``, :data:`SIGNED_PREFIX` + ``digest``) in hex: what a :class:`Signature` holds."""
    return hmac.new(key_bytes(key), SIGNED_PREFIX + digest.encode(), hashlib.sha256).hexdigest()


def signing_key_fingerprint(key: str | bytes) -> str:
    """Which signing key (HMAC-SHA256 of a fixed label, 16 hex digits); reveals nothing of the key.

    >>> signing_key_fingerprint("an example key, never use it for real")
    '335c44ef503144c1'
    """
    return hmac.new(key_bytes(key), _SIGNING_FINGERPRINT_LABEL, hashlib.sha256).hexdigest()[:16]


def canonical_bytes(doc: dict[str, Any], samples: bytes | None = None) -> bytes:
    """The canonical form the digest is taken over.

    Every top-level field except ``created_at``, ``generator`` and ``digest``,
    serialised as compact JSON (no whitespace) with object keys sorted,
    strings in UTF-8, integers as integers and other numbers in their shortest
    round-trip form. Readers in other languages reproduce it with any JSON
    library that sorts keys and writes shortest round-trip floats.
    ``samples``, when given, is the ``samples`` object already in that form.

    >>> canonical_bytes({"b": [1, 2.5], "a": {"y": None, "x": "é"}, "digest": "sha256:0"})
    b'{"a":{"x":"\xc3\xa9","y":null},"b":[1,2.5]}'
    """
    return b"".join(canonical_parts(doc, None if samples is None else [samples]))


def canonical_parts(doc: dict[str, Any], samples: Iterable[bytes] | None, folds: Iterable[bytes] | None = None
                    ) -> Iterator[bytes]:  # fmt: skip
    """:func:`canonical_bytes` in pieces, so a large ``samples`` object (or ``folds``, already canonical, as a
    Spark job streams its fold positions) is hashed without being copied: the same bytes as dumping the whole
    dict with sorted keys."""
    streamed = {k: v for k, v in (("samples", samples), ("folds", folds)) if v is not None}
    content = {k: v for k, v in doc.items() if k not in UNDIGESTED}
    keys = sorted({*content, *streamed})
    yield b"{"
    for i, key in enumerate(keys):
        yield (b"," if i else b"") + orjson.dumps(key) + b":"
        if key in streamed:
            yield from streamed[key]
        else:
            yield from _canonical_value(content[key])
    yield b"}"


def _canonical_value(value: Any) -> Iterator[bytes]:
    """One top-level field in the canonical form: numpy arrays (fold positions a columnar reader holds) as the
    lists they hold, and an object holding Arrow text arrays (the sample columns as a JSON reader may parse them,
    :mod:`depgraph.io.textarrays`) with each spelt as orjson spells the list (:func:`json_array`)."""
    options = orjson.OPT_SORT_KEYS | orjson.OPT_SERIALIZE_NUMPY
    if not (isinstance(value, dict) and any(isinstance(v, pa.Array) for v in value.values())):
        yield orjson.dumps(value, option=options)
        return
    yield b"{"
    for i, key in enumerate(sorted(value)):
        item = value[key]
        yield (b"," if i else b"") + orjson.dumps(key) + b":"
        yield json_array(item) if isinstance(item, pa.Array) else orjson.dumps(item, option=options)
    yield b"}"


def content_digest(doc: dict[str, Any]) -> str:
    """``sha256:<hex>`` of :func:`canonical_bytes`, hashed piece by piece (a large document is not joined)."""
    digest = hashlib.sha256()
    for part in canonical_parts(doc, None):
        digest.update(part)
    return "sha256:" + digest.hexdigest()


def layout(envelope: dict[str, Any], columns: dict[str, bytes], folds: dict[str, Any] | None) -> Iterator[bytes]:
    """Indented JSON whose long arrays (sample columns, fold splits) stay on one line each, in pieces
    (a file is written piece by piece: a million-sample column is never copied)."""
    yield b"{"
    for i, (key, value) in enumerate(envelope.items()):
        text = orjson.dumps(value, option=orjson.OPT_INDENT_2).replace(b"\n", b"\n  ")
        yield (b",\n  " if i else b"\n  ") + orjson.dumps(key) + b": " + text
    yield b',\n  "samples": {'
    for i, (column, values) in enumerate(columns.items()):
        yield (b",\n    " if i else b"\n    ") + orjson.dumps(column) + b": "
        yield values
    yield b"\n  }"
    if folds is not None:
        head = {k: v for k, v in folds.items() if k != "splits"}
        inner = orjson.dumps(head, option=orjson.OPT_INDENT_2)[:-2]  # drop "\n}"
        yield b',\n  "folds": ' + inner.replace(b"\n", b"\n  ") + b',\n    "splits": ['
        for i, split in enumerate(folds["splits"]):
            yield (b",\n      " if i else b"\n      ") + orjson.dumps(split)
        yield b"\n    ]\n  }"
    yield b"\n}\n"


def verify_signature(signature: tuple[str, str] | None, digest: str, key: str | bytes, source: str) -> None:
    """Return if ``signature`` (key fingerprint and value, or None: unsigned) signs ``digest`` under ``key``;
    DepgraphError(integrity) naming ``source`` otherwise."""
    if signature is None:
        raise DepgraphError(
            "integrity", f"{source}: carries no signature; a signed spec is needed (written with --sign-key-env)"
        )
    fingerprint, value = signature
    secret = key_bytes(key)
    ours = signing_key_fingerprint(secret)
    if not hmac.compare_digest(fingerprint, ours):
        raise DepgraphError(
            "integrity",
            f"{source}: signed with another key (key fingerprint {fingerprint}, yours is {ours})",
        )
    if not hmac.compare_digest(value, signature_value(digest, secret)):
        raise DepgraphError(
            "integrity",
            f"{source}: the signature does not match the digest; the spec was changed after it was signed",
        )


def spec_digest(
    envelope: dict[str, Any], columns: Mapping[str, bytes | Iterable[bytes]], folds: Iterable[bytes] | None = None
) -> str:
    """The digest of a spec whose ``envelope`` (its fields, the folds included unless ``folds`` streams them) is
    JSON values and whose sample ``columns`` are each already compact JSON — whole, or in pieces a writer streams
    (a Spark job's Parquet parts, never joined): the same as :func:`content_digest` of the whole document.
    ``folds``, when given, is the folds object as canonical JSON in pieces."""

    def samples() -> Iterator[bytes]:
        yield b"{"
        for i, column in enumerate(sorted(columns)):
            yield (b"," if i else b"") + orjson.dumps(column) + b":"
            value = columns[column]
            if isinstance(value, bytes):
                yield value
            else:
                yield from value
        yield b"}"

    digest = hashlib.sha256()
    for part in canonical_parts(envelope, samples(), folds):
        digest.update(part)
    return "sha256:" + digest.hexdigest()
