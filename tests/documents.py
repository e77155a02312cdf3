"""Spec documents for tests, handled without depgraph's own code.

* :func:`canonical` and :func:`digest` implement the canonical form of
  docs/spec.md from scratch (hashlib + json, floats spelt by the documented
  rule), so a test can re-digest a document it edited: the reader must then
  refuse it for what the edit broke, not for the digest;
* :func:`problems` is a plain-Python checker of every rule a spec must keep
  (the fuzz test re-checks every spec the reader accepts with it);
* :func:`spec_text` lays a document out as text, optionally with a key
  repeated, which a dict cannot hold.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import re
from collections import Counter
from decimal import Decimal
from itertools import pairwise
from typing import Any

UNDIGESTED = ("created_at", "generator", "digest", "signature")
SAMPLE_TYPES = {
    "sample_id": "string",
    "group_id": "string",
    **{f"{m}_group": "string" for m in ("batch", "study", "site", "region", "platform", "assay")},
    "timepoint_id": "string",
    "time_index": "number",
    "order_rank": "integer",
    "stratum": "string",
}


# --------------------------------------------------------------------------- canonical form
def number_text(value: float) -> str:
    """A float as the canonical form spells it: the shortest digits that read back as the same float,
    positional when 1e-5 <= |x| < 1e16 (always with a decimal point: ``6.0``), else ``d[.ddd]e±N``."""
    if value == 0:
        return "-0.0" if str(value).startswith("-") else "0.0"
    sign, digits, exponent = Decimal(repr(value)).as_tuple()
    digits_text = "".join(map(str, digits)).rstrip("0") or "0"
    scientific = len(digits) + exponent - 1  # the power of ten of the first digit
    head = "-" if sign else ""
    if 1e-5 <= abs(value) < 1e16:
        point = scientific + 1  # digits before the decimal point
        if point <= 0:
            return f"{head}0.{'0' * -point}{digits_text}"
        whole = digits_text[:point].ljust(point, "0")
        return f"{head}{whole}.{digits_text[point:] or '0'}"
    mantissa = digits_text[0] + (f".{digits_text[1:]}" if len(digits_text) > 1 else "")
    return f"{head}{mantissa}e{'+' if scientific >= 0 else '-'}{abs(scientific)}"


def canonical(value: Any) -> str:
    """Compact JSON, object keys sorted, strings in UTF-8 with only the escapes JSON requires."""
    if value is None:
        return "null"
    if value is True:
        return "true"
    if value is False:
        return "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        return number_text(value)
    if isinstance(value, str):
        return json.dumps(value, ensure_ascii=False)
    if isinstance(value, list):
        return "[" + ",".join(canonical(v) for v in value) + "]"
    if isinstance(value, dict):
        return "{" + ",".join(f"{canonical(k)}:{canonical(value[k])}" for k in sorted(value)) + "}"
    raise TypeError(f"not JSON: {value!r}")


def digest(doc: dict[str, Any]) -> str:
    content = {k: v for k, v in doc.items() if k not in UNDIGESTED}
    return "sha256:" + hashlib.sha256(canonical(content).encode("utf-8")).hexdigest()


def redigest(doc: dict[str, Any]) -> dict[str, Any]:
    """The document (edited in place) with the digest of its content, as a careless script would leave it."""
    doc["digest"] = digest(doc)
    return doc


def signature(doc: dict[str, Any], key: str) -> dict[str, str]:
    """The ``signature`` block of docs/spec.md for the document's digest under ``key``."""
    secret = key.encode()
    return {
        "method": "hmac-sha256",
        "key_fingerprint": hmac.new(secret, b"depgraph signing key fingerprint", hashlib.sha256).hexdigest()[:16],
        "value": hmac.new(secret, b"depgraph.split-spec:" + doc["digest"].encode(), hashlib.sha256).hexdigest(),
    }


# --------------------------------------------------------------------------- text
def spec_text(doc: dict[str, Any], repeat: tuple[str, Any] | None = None) -> bytes:
    """The document as JSON text; ``repeat=(key, value)`` writes ``"key": value`` once more, before the
    document's own ``key`` (a decoy only readers that keep the first value would see)."""
    parts = []
    for key, value in doc.items():
        if repeat is not None and key == repeat[0]:
            parts.append(f"{json.dumps(key)}: {json.dumps(repeat[1], ensure_ascii=False)}")
        parts.append(f"{json.dumps(key)}: {json.dumps(value, ensure_ascii=False)}")
    return ("{\n  " + ",\n  ".join(parts) + "\n}\n").encode("utf-8")


# --------------------------------------------------------------------------- every rule, in plain Python
def _is_int(v: Any) -> bool:
    return isinstance(v, int) and not isinstance(v, bool)


def _is_number(v: Any) -> bool:
    return isinstance(v, (int, float)) and not isinstance(v, bool) and v == v and abs(v) != float("inf")


def problems(doc: Any) -> list[str]:
    """Every rule of a spec this document breaks (an empty list for a sound spec)."""
    if not isinstance(doc, dict):
        return ["not an object"]
    found = []
    samples = doc.get("samples")
    if not isinstance(samples, dict) or not all(isinstance(v, list) for v in samples.values()):
        return ["samples is not an object of lists"]
    ids, groups = samples.get("sample_id"), samples.get("group_id")
    if ids is None or groups is None:
        return ["sample_id or group_id missing"]
    n = len(ids)
    if n == 0:
        found.append("no samples")
    if any(len(v) != n for v in samples.values()):
        return [*found, "columns of unequal length"]
    for name, values in samples.items():
        kind = SAMPLE_TYPES.get(name, "any")
        for i, v in enumerate(values):
            if v is None:
                if name in ("sample_id", "group_id"):
                    found.append(f"{name}[{i}] is null")
                continue
            ok = {
                "string": isinstance(v, str),
                "number": _is_number(v),
                "integer": _is_int(v) and (v >= 1 or name != "order_rank") and -(2**63) <= v < 2**63,
                "any": isinstance(v, (str, bool)) or _is_number(v),
            }[kind]
            if not ok or (name in ("sample_id", "group_id") and v == ""):
                found.append(f"{name}[{i}] is {v!r}")
                break
    if found:
        return found
    keys = [i.encode("utf-8") for i in ids]
    if str(doc.get("format_version", "")).startswith("1.0."):  # 1.0 promised unique ids, not their order
        if len(set(keys)) != len(keys):
            found.append("sample ids repeat")
    elif any(a >= b for a, b in pairwise(keys)):
        found.append("sample ids not strictly increasing")
    expected = summary_of(groups)
    summary = doc.get("summary")
    if not isinstance(summary, dict) or any(
        summary.get(k) != v or type(summary.get(k)) is bool for k, v in expected.items()
    ):
        found.append(f"summary {summary} is not {expected}")
    folds = doc.get("folds")
    if folds is not None:
        splits = folds.get("splits", []) if isinstance(folds, dict) else None
        if not isinstance(splits, list):
            return [*found, "folds.splits is not a list"]
        for s, split in enumerate(splits):
            test, excluded = split.get("test"), split.get("excluded")
            if not (isinstance(test, list) and isinstance(excluded, list)):
                found.append(f"split {s} positions are not lists")
                continue
            if not all(_is_int(p) and 0 <= p < n for p in test + excluded):
                found.append(f"split {s} positions out of range")
                continue
            if test != sorted(set(test)) or excluded != sorted(set(excluded)) or set(test) & set(excluded):
                found.append(f"split {s} positions unsorted, repeated or overlapping")
                continue
            counts = {"n_train": n - len(test) - len(excluded), "n_test": len(test), "n_excluded": len(excluded)}
            if any(split.get(k) != v or type(split.get(k)) is bool for k, v in counts.items()):
                found.append(f"split {s} counts disagree")
            if not test:
                found.append(f"split {s} tests no sample")
            tested = {groups[p] for p in test}
            out = set(test) | set(excluded)
            if any(groups[p] in tested for p in range(n) if p not in out):
                found.append(f"split {s}: a group straddles")
    pseudo = doc.get("pseudonymization")
    if pseudo is not None:
        digits = pseudo.get("hex_digits")
        for name in pseudo.get("columns", ["sample_id", "group_id"]):
            plain = re.compile(f"[0-9a-f]{{{digits}}}")
            prefixed = re.compile(f"[^:]*:[0-9a-f]{{{digits}}}")
            pattern = plain if name == "sample_id" else prefixed
            for v in samples.get(name, [None]) if name in samples else ["<missing column>"]:
                if v is None and name not in ("sample_id", "group_id"):
                    continue
                if not isinstance(v, str) or not (
                    pattern.fullmatch(v) or (name not in ("sample_id", "group_id") and plain.fullmatch(v))
                ):
                    found.append(f"{name} value {v!r} is not a pseudonym")
                    break
    if doc.get("digest") != digest(doc):
        found.append("digest does not match")
    return found


def summary_of(groups: list[str]) -> dict[str, Any]:
    """The summary a spec with these group ids carries (largest group: the smallest id among the largest)."""
    sizes = Counter(groups)
    largest = max(sizes.values(), default=0)
    return {
        "n_samples": len(groups),
        "n_groups": len(sizes),
        "largest_group": min((g for g, c in sizes.items() if c == largest), default=None),
        "largest_group_size": largest,
        "singletons": sum(1 for c in sizes.values() if c == 1),
    }


def graph_problems(doc: Any) -> list[str]:
    """Every rule of a study graph document this one breaks (element types, lengths, unique keys,
    endpoints that name nodes), in plain Python."""
    if not isinstance(doc, dict) or not isinstance(doc.get("nodes"), dict):
        return ["nodes is not an object"]
    found = []
    keys: set[str] = set()
    for node_type, values in doc["nodes"].items():
        if not isinstance(values, list) or not all(isinstance(v, str) and v for v in values):
            return [f"nodes.{node_type} is not a list of non-empty text"]
        if len(set(values)) != len(values):
            found.append(f"nodes.{node_type} repeats a key")
        keys |= set(values)
    for node_type, columns in (doc.get("attributes") or {}).items():
        if node_type not in doc["nodes"] or not isinstance(columns, dict):
            found.append(f"attributes.{node_type} describes no nodes")
            continue
        for name, values in columns.items():
            if not isinstance(values, list) or len(values) != len(doc["nodes"][node_type]):
                found.append(f"attributes.{node_type}.{name} has the wrong length")
                continue
            for v in values:
                if not (v is None or isinstance(v, (str, bool)) or _is_number(v)) or (
                    _is_int(v) and not -(2**63) <= v < 2**63
                ):
                    found.append(f"attributes.{node_type}.{name} holds {v!r}")
                    break
    for relation, entry in (doc.get("edges") or {}).items():
        source, target = entry.get("source"), entry.get("target")
        if not (isinstance(source, list) and isinstance(target, list) and len(source) == len(target)):
            found.append(f"edges.{relation} endpoints are not equal-length lists")
            continue
        if not all(isinstance(v, str) and v in keys for v in source + target):
            found.append(f"edges.{relation} names an endpoint that is no node")
        weight = entry.get("weight")
        if weight is not None and (
            not isinstance(weight, list)
            or len(weight) != len(source)
            or not all(v is None or _is_number(v) for v in weight)
        ):
            found.append(f"edges.{relation}.weight is not a list of numbers as long as its edges")
        provenance = entry.get("provenance", "unknown")
        if not isinstance(provenance, str) and not (
            isinstance(provenance, list)
            and len(provenance) == len(source)
            and all(isinstance(v, str) for v in provenance)
        ):
            found.append(f"edges.{relation}.provenance is neither text nor a list of text as long as its edges")
    return found
