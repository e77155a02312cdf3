"""Pseudonymised specs: share a split without raw patient identifiers.

Sample ids and group ids are replaced by a keyed hash, HMAC-SHA256 over the
UTF-8 bytes of the id, written as the first 32 hex digits (128 bits).
Every site holding the same key computes the same pseudonym for the same id,
so a consortium can agree on groups and folds and each site can still find its
own rows; without the key the ids cannot be recovered or confirmed.

* ``sample_id`` → ``hmac(key, sample_id)``
* ``group_id`` → ``<mode>:`` + ``hmac(key, group_id)``: the mode prefix stays
  (it names a kind of grouping, not a person), the rest is hidden.
* warning ids and ``summary.largest_group`` are hashed the same way; a
  warning's message, which names ids, is replaced by the meaning of its code;
  the builder parameters never carry raw ids.

Block columns (batch, study, site…), timepoints and strata are kept: they
describe processing, not people. The spec records the method and a key
fingerprint (HMAC of a fixed label) so sites can check they used one key.

A key must carry at least :data:`MIN_KEY_BITS` estimated bits
(:func:`~depgraph.spec.keys.key_bits`): a short, repetitive or patterned key is refused, since
anyone who guesses it can hash candidate ids and recognise them.

Test vector (key ``"consortium-key"``):

>>> pseudonym("consortium-key", "S1")
'a5d99491974cb512c6e8a08e3e6b2c7f'
"""

from __future__ import annotations

import hashlib
import hmac
from typing import Any

import numpy as np
import pandas as pd

from depgraph.common.arguments import instance
from depgraph.derivation.partition import Partition
from depgraph.engines import engine_of, stage
from depgraph.errors import DepgraphError
from depgraph.findings import DERIVATION_FINDINGS as FINDINGS
from depgraph.graph.model import StudyGraph
from depgraph.spec.columns import SAMPLE_COLUMNS, portable_parameters
from depgraph.spec.keys import DEFAULT_KEY_ENV as DEFAULT_KEY_ENV
from depgraph.spec.keys import MIN_KEY_BITS as MIN_KEY_BITS  # re-exported: the rules are documented here
from depgraph.spec.keys import check_key as check_key
from depgraph.spec.keys import key_bits as key_bits
from depgraph.spec.keys import key_from_env as key_from_env
from depgraph.spec.model import Provenance, Pseudonymization, SpecWarning, SplitSpec, summarise
from depgraph.spec.plans import PLAN_WARNING_MEANINGS

HEX_DIGITS = 32
_FINGERPRINT_LABEL = "depgraph pseudonymization key fingerprint"


def pseudonym(key: str | bytes, value: str, hex_digits: int = HEX_DIGITS) -> str:
    """The keyed hash of one id."""
    secret = key.encode() if isinstance(key, str) else key
    return hmac.new(secret, value.encode(), hashlib.sha256).hexdigest()[:hex_digits]


def key_fingerprint(key: str | bytes) -> str:
    """A check value for the key (HMAC of a fixed label); reveals no id."""
    return pseudonym(key, _FINGERPRINT_LABEL, 16)


def pseudonymize(spec: SplitSpec, key: str | bytes) -> SplitSpec:
    """``spec`` with sample and group ids replaced by keyed hashes.

    The key must pass :func:`check_key`. Warning ids are hashed and warning messages (which name ids)
    replaced by the meaning of their code; builder parameters keep no id list. Sample attributes carried
    beside the spec's own columns must not identify anyone (:func:`identifying_attributes`): such a column
    is refused (``invalid_argument``), since it would undo the pseudonyms.

    >>> import pandas as pd
    >>> from depgraph.spec.model import Constraint
    >>> key = "0f1e2d3c4b5a69788796a5b4c3d2e1f00112233445566778899aabbccddeeff"
    >>> s = SplitSpec.build(pd.DataFrame({"sample_id": ["S1", "S2"], "group_id": ["subject:P1", "subject:P1"]}),
    ...                     constraint=Constraint(mode="subject"), recommended_resampling="grouped_cv")
    >>> p = pseudonymize(s, key)
    >>> p.samples["sample_id"].tolist() == sorted(pseudonym(key, i) for i in ("S1", "S2"))  # in id order
    True
    >>> bool(p.samples["group_id"].str.startswith("subject:").all()), p.pseudonymization.method
    (True, 'hmac-sha256')
    """
    engine = engine_of(spec)
    if engine is not None:  # a spec of another engine (a SparkSpec) is pseudonymised there
        return stage(engine, "pseudonymize").pseudonymize_request(spec, key)
    instance(spec, SplitSpec, "pseudonymize: the spec")
    if spec.pseudonymization is not None:
        raise already_pseudonymised()
    secret = check_key(key)
    found = identifying_attributes(spec.samples)
    if found:
        raise identifying_refusal(found)
    samples = spec.samples.copy()
    samples["sample_id"] = _hash_column(samples["sample_id"], secret)
    samples["group_id"] = _hash_groups(samples["group_id"], secret)
    if samples["sample_id"].duplicated().any():  # pragma: no cover - a 128-bit collision
        raise DepgraphError("ambiguity", "two sample ids share a pseudonym; use more hex digits")
    return spec.replace(
        samples=samples,
        warnings=pseudonymised_warnings(spec.warnings, secret, set(spec.samples["sample_id"])),
        summary=summarise(samples),
        constraint=spec.constraint.model_copy(update={"parameters": portable_parameters(spec.constraint.parameters)}),
        pseudonymization=pseudonymization_of(secret),
    )


def already_pseudonymised() -> DepgraphError:
    return DepgraphError("invalid_argument", "the spec is already pseudonymised")


def identifying_refusal(found: dict[str, str]) -> DepgraphError:
    """The refusal of attributes that would re-identify pseudonymised samples (:func:`identifying_attributes`)."""
    return DepgraphError(
        "invalid_argument",
        "pseudonymised ids would be re-identified by sample attribute(s) "
        + "; ".join(f"{column!r} ({reason})" for column, reason in found.items())
        + ": carry only attributes shared by many samples (e.g. sex, age band), or none",
        columns=list(found),
    )


def pseudonymised_warnings(warnings: list[SpecWarning], secret: bytes, sample_ids: set[str]) -> list[SpecWarning]:
    """The warnings of a pseudonymised spec: ids hashed (``sample_ids``: those of the ids that are samples' ids,
    the others are group ids) and messages replaced by the meaning of their code."""
    return [
        SpecWarning(
            code=w.code,
            severity=w.severity,
            message=_scrub(w.code),
            count=w.count,
            ids=[pseudonym(secret, i) if i in sample_ids else hash_group(i, secret) for i in w.ids],
        )
        for w in warnings
    ]


def pseudonymization_of(secret: bytes) -> Pseudonymization:
    """What a pseudonymised spec records of its method and key."""
    return Pseudonymization(hex_digits=HEX_DIGITS, key_fingerprint=key_fingerprint(secret))


#: An attribute is identifying when at least this share of the samples that have a value are singled out by it.
IDENTIFYING_SHARE = 0.5


def identifying_attributes(samples: pd.DataFrame) -> dict[str, str]:
    """The sample attributes (columns beside the spec's own) that would re-identify pseudonymised samples,
    each with the reason: at least :data:`IDENTIFYING_SHARE` of the samples that have a value

    * hold a value no other sample holds (a quasi-identifier: a second id, a date of birth), or
    * hold their own sample id, or their own group's key (``P1`` for ``subject:P1``): a copy of the ids.

    Block, time and stratum columns are the spec's own and are not judged (see the module docs).

    >>> frame = pd.DataFrame({"sample_id": ["S1", "S2", "S3", "S4"], "group_id": ["subject:P1", "subject:P1",
    ...                       "subject:P2", "subject:P2"], "sex": ["f", "f", "m", "m"],
    ...                       "mrn": ["0041", "0042", "0043", None], "patient": ["P1", "P1", "P2", "P2"]})
    >>> for column, reason in identifying_attributes(frame).items():
    ...     print(column, "-", reason)
    mrn - 3 of 3 samples with a value hold one no other sample holds
    patient - 4 of 4 samples with a value hold their own sample id or group key
    """
    out: dict[str, str] = {}
    own_ids = samples["sample_id"].to_numpy(dtype=object)
    groups = samples["group_id"].astype(str)
    own_keys = groups.str.split(":", n=1).str[-1].to_numpy(dtype=object)
    for column in samples.columns:
        if column in SAMPLE_COLUMNS:
            continue
        values = samples[column].to_numpy(dtype=object)
        known = ~pd.isna(values)
        n = int(known.sum())
        if not n:
            continue
        text = pd.Series(values[known], dtype=object).astype(str).to_numpy(dtype=object)
        codes, _ = pd.factorize(text)
        alone = int((np.bincount(codes)[codes] == 1).sum())
        copies = int(((text == own_ids[known].astype(str)) | (text == own_keys[known])).sum())
        reason = identifying_reason(n, alone, copies)
        if reason is not None:
            out[column] = reason
    return out


def identifying_reason(n: int, alone: int, copies: int) -> str | None:
    """Why an attribute identifies (of its ``n`` samples with a value, ``alone`` hold a value no other holds and
    ``copies`` their own sample id or group key), or None: the rule of :func:`identifying_attributes`, whichever
    engine counted."""
    if copies >= IDENTIFYING_SHARE * n:
        return f"{copies} of {n} samples with a value hold their own sample id or group key"
    if alone >= IDENTIFYING_SHARE * n:
        return f"{alone} of {n} samples with a value hold one no other sample holds"
    return None


def _hash_column(values: pd.Series, secret: bytes) -> pd.Series:
    return pd.Series([pseudonym(secret, str(v)) for v in values.to_numpy(dtype=object)], dtype=object)


def hash_group(group: str, secret: bytes) -> str:
    """A group id's pseudonym: its mode prefix kept, the rest hashed."""
    prefix = group.split(":", 1)[0] if ":" in group else "group"
    return f"{prefix}:{pseudonym(secret, group)}"


def _hash_groups(values: pd.Series, secret: bytes) -> pd.Series:
    codes, uniques = pd.factorize(values.to_numpy(dtype=object))
    hashed = np.array([hash_group(str(u), secret) for u in uniques], dtype=object)
    return pd.Series(hashed[codes], dtype=object)


def _scrub(code: str) -> str:
    """A warning's message names ids, in words no rule can reliably find (a splitGraph sentence, a group id
    inside a clause): a pseudonymised spec keeps none of it, only the documented meaning of the code."""
    meaning = FINDINGS[code][1] if code in FINDINGS else PLAN_WARNING_MEANINGS.get(code, "a finding of the derivation")
    return f"{meaning} (message withheld: ids pseudonymised)"


def derived_spec(
    partition: Partition | Any,
    graph: StudyGraph,
    attributes: str | list[str] | None = None,
    key: bytes | None = None,
    provenance: Provenance | None = None,
) -> SplitSpec:
    """The spec a derivation writes (``derive``, ``depgraph run``): ``partition``'s, carrying ``attributes`` of the
    graph and the ``provenance`` of a study run, its ids pseudonymised under ``key`` when one is given — before any
    folds are assigned, so a spec's folds are planned over the ids it carries."""
    engine = engine_of(partition)
    if engine is None:
        spec = SplitSpec.from_partition(partition, graph, attributes=attributes, provenance=provenance)
    else:  # a partition of another engine (a SparkPartition): its spec is made there, its graph being the engine's
        spec = stage(engine, "spec").spec_request(partition, attributes, provenance)
    return spec if key is None else pseudonymize(spec, key)
