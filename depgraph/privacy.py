"""Pseudonymised specs: share a split without raw patient identifiers.

Sample ids and group ids are replaced by a keyed hash, HMAC-SHA256 over the
UTF-8 bytes of the id, written as the first 32 hex digits (128 bits).
Every site holding the same key computes the same pseudonym for the same id,
so a consortium can agree on groups and folds and each site can still find its
own rows; without the key the ids cannot be recovered or confirmed.

* ``sample_id`` → ``hmac(key, sample_id)``
* ``group_id`` → ``<mode>:`` + ``hmac(key, group_id)``: the mode prefix stays
  (it names a kind of grouping, not a person), the rest is hidden.
* warning ids and ``summary.largest_group`` are hashed the same way; the
  builder parameters never carry raw ids.

Block columns (batch, study, site…), timepoints and strata are kept: they
describe processing, not people. The spec records the method and a key
fingerprint (HMAC of a fixed label) so sites can check they used one key.

Test vector (key ``"consortium-key"``):

>>> pseudonym("consortium-key", "S1")
'a5d99491974cb512c6e8a08e3e6b2c7f'
"""

from __future__ import annotations

import hashlib
import hmac
import os

import numpy as np
import pandas as pd

from depgraph.errors import DepgraphError
from depgraph.spec import Pseudonymization, SpecWarning, SplitSpec, summarise

HEX_DIGITS = 32
DEFAULT_KEY_ENV = "DEPGRAPH_PSEUDONYM_KEY"
_FINGERPRINT_LABEL = "depgraph pseudonymization key fingerprint"


def pseudonym(key: str | bytes, value: str, hex_digits: int = HEX_DIGITS) -> str:
    """The keyed hash of one id."""
    secret = key.encode() if isinstance(key, str) else key
    return hmac.new(secret, value.encode(), hashlib.sha256).hexdigest()[:hex_digits]


def key_fingerprint(key: str | bytes) -> str:
    """A check value for the key (HMAC of a fixed label); reveals no id."""
    return pseudonym(key, _FINGERPRINT_LABEL, 16)


def key_from_env(variable: str = DEFAULT_KEY_ENV, purpose: str = "pseudonymisation") -> bytes:
    """The pseudonymisation key (or, with ``purpose="signing"``, a spec signing key: the same rules)
    from an environment variable (never from the command line, where it would land in shell history
    and process lists)."""
    value = os.environ.get(variable)
    if not value:
        raise DepgraphError(
            "invalid_argument",
            f"{purpose} needs a key in the environment variable {variable} (it is unset or empty)",
        )
    if len(value) < 16:
        raise DepgraphError(
            "invalid_argument", f"the key in {variable} is shorter than 16 characters; use a long random key"
        )
    return value.encode()


def pseudonymize(spec: SplitSpec, key: str | bytes) -> SplitSpec:
    """``spec`` with sample and group ids replaced by keyed hashes.

    >>> import pandas as pd
    >>> from depgraph.spec import Constraint
    >>> s = SplitSpec.build(pd.DataFrame({"sample_id": ["S1", "S2"], "group_id": ["subject:P1", "subject:P1"]}),
    ...                     constraint=Constraint(mode="subject"), recommended_resampling="grouped_cv")
    >>> p = pseudonymize(s, "consortium-key")
    >>> p.samples["sample_id"].tolist() == sorted(pseudonym("consortium-key", i) for i in ("S1", "S2"))  # id order
    True
    >>> bool(p.samples["group_id"].str.startswith("subject:").all()), p.pseudonymization.method
    (True, 'hmac-sha256')
    """
    if spec.pseudonymization is not None:
        raise DepgraphError("invalid_argument", "the spec is already pseudonymised")
    secret = key.encode() if isinstance(key, str) else key
    samples = spec.samples.copy()
    samples["sample_id"] = _hash_column(samples["sample_id"], secret)
    samples["group_id"] = _hash_groups(samples["group_id"], secret)
    if samples["sample_id"].duplicated().any():  # pragma: no cover - a 128-bit collision
        raise DepgraphError("ambiguity", "two sample ids share a pseudonym; use more hex digits")
    sample_ids = set(spec.samples["sample_id"])
    warnings = [
        SpecWarning(
            code=w.code,
            severity=w.severity,
            message=_scrub(w.message),
            count=w.count,
            ids=[pseudonym(secret, i) if i in sample_ids else _hash_group(i, secret) for i in w.ids],
        )
        for w in spec.warnings
    ]
    return spec.replace(
        samples=samples,
        warnings=warnings,
        summary=summarise(samples),
        pseudonymization=Pseudonymization(hex_digits=HEX_DIGITS, key_fingerprint=key_fingerprint(secret)),
    )


def _hash_column(values: pd.Series, secret: bytes) -> pd.Series:
    return pd.Series([pseudonym(secret, str(v)) for v in values.to_numpy(dtype=object)], dtype=object)


def _hash_group(group: str, secret: bytes) -> str:
    prefix = group.split(":", 1)[0] if ":" in group else "group"
    return f"{prefix}:{pseudonym(secret, group)}"


def _hash_groups(values: pd.Series, secret: bytes) -> pd.Series:
    codes, uniques = pd.factorize(values.to_numpy(dtype=object))
    hashed = np.array([_hash_group(str(u), secret) for u in uniques], dtype=object)
    return pd.Series(hashed[codes], dtype=object)


def _scrub(message: str) -> str:
    """Warning messages name ids; a pseudonymised spec keeps only their first clause."""
    head = message.split(":", 1)[0]
    return f"{head} (ids pseudonymised)"
