"""The split spec: the versioned JSON contract other teams, languages and frameworks read.

A spec holds

* an envelope: ``format`` (``depgraph.split-spec``), ``format_version``
  (semver; readers accept the same major), ``created_at``, ``generator``
  (package and dependency versions) and ``digest``: ``sha256:<hex>`` over the
  canonical content (every field but ``created_at``, ``generator`` and
  ``digest``), so two teams can tell they hold the same split and an edited
  or corrupted file is refused;
* ``constraint`` (mode, strategy, relations, via, priority, parameters such as
  kinship thresholds, overrides, whether a subset was derived),
  ``recommended_resampling``, coded ``warnings`` and a ``summary``;
* ``samples``: equal-length columns — ``sample_id``, ``group_id`` and, where
  the graph knows them, ``batch_group``, ``study_group``, ``site_group``,
  ``region_group``, ``platform_group``, ``assay_group``, ``timepoint_id``,
  ``time_index``, ``order_rank``, ``stratum``;
* optionally ``folds``: a :class:`FoldPlan` giving every split's role for
  every sample (train / test / excluded), so every consumer in every language
  gets identical folds without re-implementing any scheme;
* optionally ``pseudonymization``, when sample and group ids were replaced by
  keyed hashes (see :mod:`depgraph.spec.privacy`).

The envelope is pydantic; samples and fold roles stay columnar (a pandas
frame and an int8 matrix), never one object per sample. The JSON Schema is
``schema/split-spec.schema.json`` (generated from this module and the
vocabulary by :mod:`depgraph.io.schemas`).

>>> import pandas as pd
>>> from depgraph import derive, from_metadata
>>> g = from_metadata(pd.DataFrame({"sample_id": ["S1", "S2"], "subject_id": ["P1", "P1"], "batch_id": ["B1", "B2"]}))
>>> spec = SplitSpec.from_partition(derive(g, "subject"), g)
>>> spec.samples.columns.tolist()
['sample_id', 'group_id', 'batch_group']
>>> spec.recommended_resampling, spec.digest == spec.compute_digest()
('grouped_cv', True)
"""

from __future__ import annotations

import datetime as _dt
import functools
import hashlib
import hmac
import os
import re
from collections.abc import Iterator, Sequence
from importlib import metadata as _metadata
from typing import Any, Literal

import numpy as np
import orjson
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc
from pydantic import BaseModel, ConfigDict, Field, PrivateAttr, ValidationError, field_validator, model_validator

from depgraph.common.arguments import in_order, instance, names, whole_number
from depgraph.common.arrays import distinct, sorted_codes, text_buffers
from depgraph.common.display import first_ids, html_block, ids_repr, text_table
from depgraph.common.identifiers import refuse_unicode_twins, row_keys
from depgraph.derivation.groups import Partition, direct_relation, group_shape, sample_time_columns
from depgraph.errors import DepgraphError, describe_ids
from depgraph.findings import findings_table
from depgraph.formats import SPEC_FORMAT, SPEC_FORMAT_VERSION
from depgraph.graph.model import KNOWN_OVERRIDES, StudyGraph, checked_overrides
from depgraph.io.files import atomic_write_bytes, read_json
from depgraph.io.jsoncolumns import integers, numbers, optional_text, plain_json, positions, scalar_objects, text
from depgraph.io.schemas import check_document, envelope_problem
from depgraph.spec.keys import check_key
from depgraph.version import __version__
from depgraph.vocab import COMBINABLE_MODES, MODE, RELATION, STRATEGIES, NodeType, recommended_resampling

#: Block columns a spec carries when the graph declares the relation.
BLOCK_MODES: tuple[str, ...] = ("batch", "study", "site", "region", "platform", "assay")
#: The columns a spec's ``samples`` may hold, in order, with their JSON item type.
SAMPLE_COLUMNS: dict[str, str] = {
    "sample_id": "string",
    "group_id": "string",
    **{f"{m}_group": "string" for m in BLOCK_MODES},
    "timepoint_id": "string",
    "time_index": "number",
    "order_rank": "integer",
    "stratum": "string",
}
REQUIRED_SAMPLE_COLUMNS: tuple[str, ...] = ("sample_id", "group_id")
#: Fold roles, in code order (``FoldSplit.roles`` returns these codes).
ROLES: tuple[str, ...] = ("train", "test", "excluded")
#: At most this many ids are kept per warning in a spec (the count is exact).
WARNING_ID_LIMIT = 50
#: Fields left out of the digest: they change between two writes (or signatures) of one split.
UNDIGESTED: frozenset[str] = frozenset({"created_at", "generator", "digest", "signature"})
#: A signature is HMAC-SHA256(key, SIGNED_PREFIX + digest).
SIGNED_PREFIX = b"depgraph.split-spec:"
_SIGNING_FINGERPRINT_LABEL = b"depgraph signing key fingerprint"

_DEPENDENCIES = ("numpy", "pandas", "scipy", "networkx", "pydantic", "jsonschema", "orjson")


class _Model(BaseModel):
    """A frozen, strict envelope model. Built from Python values (``Constraint(mode=...)``), a wrong field is a
    DepgraphError(invalid_argument) naming the model, the field and the value; readers validate documents with
    ``model_validate`` and report the same problem as a ``schema`` error of the file."""

    model_config = ConfigDict(extra="forbid", frozen=True, strict=True)  # strict: "3" is no int, "yes" no bool

    def __init__(self, **data: Any) -> None:
        try:
            super().__init__(**data)
        except ValidationError as exc:
            raise model_refusal(type(self).__name__, exc) from None


def model_refusal(where: str, exc: ValidationError, code: str = "invalid_argument", within: str = "") -> DepgraphError:
    """The first problem pydantic found, as a one-line DepgraphError: ``where``, the field's path (after
    ``within``, e.g. ``"folds."``), what is wrong and the value given."""
    first = exc.errors()[0]
    path = within + ".".join(str(p) for p in first["loc"])
    message = str(first["msg"]).removeprefix("Value error, ")
    given = first.get("input")
    shown = "" if first["type"] in ("missing", "value_error") or isinstance(given, dict) else f" (given {given!r:.60})"
    text = f"{path}: {message}{shown}" if path else f"{message}{shown}"
    return DepgraphError(code, f"{where}: {text}", field=path, problem=text)


def _read_model(model: type[_Model], values: dict[str, Any], source: str, within: str = "") -> Any:
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


class Generator(_Model):
    """Who wrote the spec: package and dependency versions."""

    package: str = "depgraph"
    version: str
    dependencies: dict[str, str] = Field(default_factory=dict)

    @classmethod
    def current(cls) -> Generator:
        return _current_generator()


@functools.cache
def _current_generator() -> Generator:
    """This package's and its dependencies' versions (read once: installed metadata does not change)."""
    deps = {}
    for name in _DEPENDENCIES:
        try:
            deps[name] = _metadata.version(name)
        except _metadata.PackageNotFoundError:  # pragma: no cover - all are dependencies
            continue
    return Generator(version=__version__, dependencies=deps)


class Constraint(_Model):
    """How the groups were derived.

    Every field holds what a spec file may hold: a mode, strategy, relations and via/priority modes of the
    vocabulary; ``overrides`` naming known overrides with boolean values (``"false"`` is refused, never read as
    true); ``parameters`` that JSON carries exactly (no NaN, no integer beyond 64 bits).

    >>> Constraint(mode="no-such-mode")
    Traceback (most recent call last):
    ...
    depgraph.errors.DepgraphError: [invalid_argument] Constraint: mode: 'no-such-mode' is not a mode; modes are ...
    """

    mode: str
    strategy: str | None = None
    relations: list[str] = Field(default_factory=list)
    via: list[str] = Field(default_factory=list)
    priority: list[str] = Field(default_factory=list)
    parameters: dict[str, Any] = Field(default_factory=dict)
    overrides: dict[str, bool] = Field(default_factory=dict)
    subset: bool = False

    @field_validator("mode")
    @classmethod
    def _known_mode(cls, mode: str) -> str:
        if mode not in MODE:
            raise ValueError(f"{mode!r} is not a mode; modes are {describe_ids(list(MODE), 20)}")
        return mode

    @field_validator("strategy")
    @classmethod
    def _known_strategy(cls, strategy: str | None) -> str | None:
        if strategy is not None and strategy not in STRATEGIES:
            raise ValueError(f"{strategy!r} is not a strategy; strategies are {describe_ids(STRATEGIES)}")
        return strategy

    @field_validator("relations")
    @classmethod
    def _known_relations(cls, relations: list[str]) -> list[str]:
        unknown = [r for r in relations if r not in RELATION]
        if unknown:
            raise ValueError(f"{describe_ids(unknown)} are not relations of the vocabulary")
        return relations

    @field_validator("via", "priority")
    @classmethod
    def _known_modes(cls, modes: list[str]) -> list[str]:
        unknown = [m for m in modes if m not in COMBINABLE_MODES]
        if unknown:
            raise ValueError(f"{describe_ids(unknown)} are not modes a composite combines")
        return modes

    @field_validator("parameters")
    @classmethod
    def _json_parameters(cls, parameters: dict[str, Any]) -> dict[str, Any]:
        return plain_json(parameters, "parameters")

    @field_validator("overrides", mode="before")
    @classmethod
    def _boolean_overrides(cls, overrides: Any) -> Any:
        if not isinstance(overrides, dict):
            return overrides  # pydantic names the type
        unknown = sorted(set(overrides) - KNOWN_OVERRIDES)
        if unknown:
            raise ValueError(
                f"{describe_ids(unknown)} are not overrides (known: {describe_ids(sorted(KNOWN_OVERRIDES))})"
            )
        try:
            return checked_overrides(overrides, "invalid_value", "override")
        except DepgraphError as exc:  # pydantic names the field
            raise ValueError(exc.message) from None


class SpecWarning(_Model):
    """A coded finding carried by the spec (ids truncated, count exact)."""

    code: str
    severity: Literal["error", "warning", "advisory"] = "warning"
    message: str
    count: int = 0
    ids: list[str] = Field(default_factory=list)

    def __repr__(self) -> str:
        return (
            f"SpecWarning({self.code!r}, {self.severity!r}, count={self.count}, ids={ids_repr(self.ids)}, "
            f"message={self.message!r})"
        )

    def __str__(self) -> str:  # pydantic's would list every field
        return repr(self)


class Summary(_Model):
    n_samples: int
    n_groups: int
    largest_group: str | None
    largest_group_size: int
    singletons: int


class FoldSplit(_Model):
    """One split of a fold plan: its repeat and fold, and which samples it tests
    and excludes (positions into the spec's samples, 0-based, sorted); every
    other sample trains."""

    model_config = ConfigDict(extra="forbid", frozen=True, arbitrary_types_allowed=True, strict=True)

    repeat: int = Field(ge=0)
    fold: int = Field(ge=0)
    n_train: int = Field(ge=0)
    n_test: int = Field(ge=0)
    n_excluded: int = Field(ge=0)
    test: np.ndarray = Field(exclude=True)
    excluded: np.ndarray = Field(exclude=True)

    @field_validator("test", "excluded", mode="before")
    @classmethod
    def _positions(cls, values: Any) -> np.ndarray:
        """Sorted, distinct, non-negative integer positions (a list or an integer array)."""
        found = _integer_positions(values)
        if len(found) > 1 and not (found[1:] > found[:-1]).all():
            raise ValueError("positions must be sorted, without repeats (FoldSplit.of sorts them)")
        return found

    @model_validator(mode="after")
    def _counts(self) -> FoldSplit:
        if (self.n_test, self.n_excluded) != (len(self.test), len(self.excluded)):
            raise ValueError(
                f"n_test/n_excluded say {self.n_test}/{self.n_excluded}, the positions give "
                f"{len(self.test)}/{len(self.excluded)}"
            )
        return self

    @classmethod
    def of(cls, repeat: int, fold: int, test: Any, excluded: Any, n_samples: int) -> FoldSplit:
        """A split from test and excluded positions (any order, repeats allowed; made sorted and unique), each
        an integer in ``range(n_samples)`` (``invalid_argument`` otherwise: ``-1`` is no position)."""
        if isinstance(n_samples, (bool, np.bool_)) or not isinstance(n_samples, (int, np.integer)) or n_samples < 0:
            raise DepgraphError("invalid_argument", f"FoldSplit.of: n_samples must be a count, not {n_samples!r}")
        arrays = []
        for name, values in (("test", test), ("excluded", excluded)):
            try:
                found = _integer_positions(values)
            except ValueError as exc:
                raise DepgraphError("invalid_argument", f"FoldSplit.of: {name}: {exc}") from None
            if len(found) and found.max() >= n_samples:
                raise DepgraphError(
                    "invalid_argument",
                    f"FoldSplit.of: {name} holds position {int(found.max())}; there are {n_samples} samples",
                )
            arrays.append(found)
        test = _sorted_positions(arrays[0])
        left_out = np.zeros(n_samples, dtype=bool)
        left_out[arrays[1]] = True
        left_out[test] = False
        excluded = np.flatnonzero(left_out)
        return cls(
            repeat=repeat,
            fold=fold,
            n_train=n_samples - len(test) - len(excluded),
            n_test=len(test),
            n_excluded=len(excluded),
            test=test,
            excluded=excluded,
        )

    def __repr__(self) -> str:
        """Counts, not the positions (a split of 10⁶ samples holds 10⁵ of them)."""
        return (
            f"FoldSplit(repeat={self.repeat}, fold={self.fold}, n_train={self.n_train}, n_test={self.n_test}, "
            f"n_excluded={self.n_excluded})"
        )

    def __str__(self) -> str:  # pydantic's would list every field, positions included
        return repr(self)

    def roles(self, n_samples: int) -> np.ndarray:
        """One role code per sample: 0 train, 1 test, 2 excluded."""
        role = np.zeros(n_samples, dtype=np.int8)
        role[self.test] = 1
        role[self.excluded] = 2
        return role

    def train(self, n_samples: int) -> np.ndarray:
        """Positions of the training samples."""
        return np.flatnonzero(self.roles(n_samples) == 0)

    def to_json_dict(self) -> dict[str, Any]:
        doc = self.model_dump(mode="json")
        doc["test"] = self.test.tolist()
        doc["excluded"] = self.excluded.tolist()
        return doc


def _integer_positions(values: Any) -> np.ndarray:
    """``values`` as a 1-d int64 array of non-negative integers, or ValueError (floats, booleans, text,
    negative numbers and nested lists are no positions)."""
    if isinstance(values, (str, bytes)) or not hasattr(values, "__len__"):
        raise ValueError(f"positions are a list or an array of integers, not {type(values).__name__}")
    found = np.asarray(values)
    if found.size == 0:
        return np.empty(0, dtype=np.int64)
    if found.ndim != 1 or found.dtype.kind not in "iu":
        what = f"a {found.ndim}-d array" if found.ndim != 1 else f"{found.dtype} values"
        raise ValueError(f"positions are a flat list of integers, not {what}")
    if found.min() < 0:
        raise ValueError(f"positions are 0 or more, not {int(found.min())}")
    return found.astype(np.int64, copy=False)


def _sorted_positions(values: Any) -> np.ndarray:
    """Positions as a sorted int64 array without repeats (cheap when already so)."""
    positions = np.asarray(values, dtype=np.int64)
    if len(positions) > 1 and not (np.diff(positions) > 0).all():
        positions = distinct(positions)
    return positions


class FoldPlan(_Model):
    """Folds carried by a spec: every split's test and excluded samples.

    Any consumer, in any language, reads a split without scheme-specific logic:
    the samples at ``test`` positions are tested, those at ``excluded``
    positions are left out (for example purged around a time block, or the
    rest of a group whose other samples are tested), all others train.
    ``balance`` holds the plan's balance metrics.
    """

    scheme: str
    parameters: dict[str, Any] = Field(default_factory=dict)
    seed: int | None = Field(default=None, ge=0, le=2**64 - 1)  # JSON carries it exactly; schemes use 0..2**32-1
    splits: list[FoldSplit]
    balance: dict[str, Any] = Field(default_factory=dict)

    @field_validator("parameters", "balance")
    @classmethod
    def _json_values(cls, values: dict[str, Any], info: Any) -> dict[str, Any]:
        return plain_json(values, info.field_name)

    @classmethod
    def from_roles(
        cls, role: np.ndarray, scheme: str = "custom", folds_per_repeat: int | None = None, **fields: Any
    ) -> FoldPlan:
        """A plan from an (n_splits, n_samples) matrix of role codes (0 train, 1 test, 2 excluded).

        Splits are numbered ``fold = i mod folds_per_repeat`` within ``repeat = i // folds_per_repeat``.
        """
        role = np.asarray(role)
        if folds_per_repeat is not None:
            folds_per_repeat = whole_number(folds_per_repeat, "folds_per_repeat", minimum=1)
        if role.ndim != 2 or (role.size and (role.dtype.kind not in "iu" or not np.isin(role, (0, 1, 2)).all())):
            raise DepgraphError(
                "invalid_argument",
                "FoldPlan.from_roles takes an (n_splits, n_samples) matrix of role codes 0 (train), 1 (test) and "
                f"2 (excluded), not a {role.ndim}-d {role.dtype} array"
                + (" with other values" if role.ndim == 2 else ""),
            )
        per = folds_per_repeat or len(role)
        splits = [
            FoldSplit.of(i // per, i % per, np.flatnonzero(r == 1), np.flatnonzero(r == 2), role.shape[1])
            for i, r in enumerate(role)
        ]
        return cls(scheme=scheme, splits=splits, **fields)

    def table(self) -> pd.DataFrame:
        """One row per split: repeat, fold and how many samples train, test and are excluded."""
        return pd.DataFrame(
            [(s.repeat, s.fold, s.n_train, s.n_test, s.n_excluded) for s in self.splits],
            columns=["repeat", "fold", "n_train", "n_test", "n_excluded"],
        )

    def summary(self) -> str:
        """One line: scheme, seed, number of splits and the range of test sizes.

        >>> FoldPlan.from_roles(np.array([[0, 1, 1], [1, 0, 0]]), scheme="custom", seed=3).summary()
        'custom (seed 3): 2 splits, 1-2 test samples each'
        """
        tests = [s.n_test for s in self.splits]
        sizes = f"{min(tests)}-{max(tests)}" if tests and min(tests) != max(tests) else str(tests[0] if tests else 0)
        seed = f" (seed {self.seed})" if self.seed is not None else ""
        return f"{self.scheme}{seed}: {len(self.splits)} splits, {sizes} test samples each"

    def __repr__(self) -> str:
        return f"FoldPlan({self.summary()})"

    def __str__(self) -> str:  # pydantic's would list every split
        return repr(self)

    def role_matrix(self, n_samples: int) -> np.ndarray:
        """Role codes as an (n_splits, n_samples) int8 matrix (for small plans and tests)."""
        return np.stack([s.roles(n_samples) for s in self.splits]) if self.splits else np.zeros((0, n_samples))

    def to_json_dict(self) -> dict[str, Any]:
        doc = self.model_dump(mode="json")
        doc["splits"] = [s.to_json_dict() for s in self.splits]
        return doc


class Pseudonymization(_Model):
    """How ids were replaced: keyed hashes, and a fingerprint of the key so
    sites can confirm they used the same one (it reveals no id)."""

    method: Literal["hmac-sha256"] = "hmac-sha256"
    hex_digits: int = 32
    key_fingerprint: str
    columns: list[str] = Field(default_factory=lambda: ["sample_id", "group_id"])


class Signature(_Model):
    """Proof that the spec was written by someone holding a shared key, and not changed since.

    ``value`` is HMAC-SHA256(key, ``"depgraph.split-spec:" + digest``) in hex;
    ``key_fingerprint`` (HMAC of a fixed label, 16 hex digits) says which key
    without revealing it. The digest covers every field but ``created_at``,
    ``generator``, ``digest`` and ``signature``, so the signature covers them too.
    """

    method: Literal["hmac-sha256"] = "hmac-sha256"
    key_fingerprint: str
    value: str

    @classmethod
    def of(cls, digest: str, key: str | bytes) -> Signature:
        return cls(key_fingerprint=signing_key_fingerprint(key), value=_signature_value(digest, _key_bytes(key)))


def _key_bytes(key: str | bytes) -> bytes:
    return key.encode() if isinstance(key, str) else bytes(key)


def _signature_value(digest: str, key: bytes) -> str:
    return hmac.new(key, SIGNED_PREFIX + digest.encode(), hashlib.sha256).hexdigest()


def signing_key_fingerprint(key: str | bytes) -> str:
    """Which signing key (HMAC-SHA256 of a fixed label, 16 hex digits); reveals nothing of the key.

    >>> signing_key_fingerprint("an example key, never use it for real")
    '335c44ef503144c1'
    """
    return hmac.new(_key_bytes(key), _SIGNING_FINGERPRINT_LABEL, hashlib.sha256).hexdigest()[:16]


class SplitSpec(_Model):
    """A split spec in memory. ``samples`` is a pandas frame of equal-length columns.

    Every way of making one (:meth:`from_partition`, :meth:`build`, :meth:`replace`, :meth:`with_folds`,
    :func:`read_spec`) checks what a reader checks: a spec in memory never holds what its file could not.
    """

    model_config = ConfigDict(extra="forbid", frozen=True, arbitrary_types_allowed=True, strict=True)

    format: Literal["depgraph.split-spec"] = SPEC_FORMAT
    format_version: str = SPEC_FORMAT_VERSION
    created_at: str
    generator: Generator
    digest: str | None = None
    graph_name: str | None = None
    constraint: Constraint
    recommended_resampling: Literal[
        "grouped_cv", "blocked_cv", "leave_one_group_out", "ordered_split", "custom_grouped_cv"
    ]
    warnings: list[SpecWarning] = Field(default_factory=list)
    summary: Summary
    pseudonymization: Pseudonymization | None = None
    signature: Signature | None = None
    samples: pd.DataFrame = Field(exclude=True)
    folds: FoldPlan | None = Field(default=None, exclude=True)
    # the sample columns as compact JSON, with the frame they were encoded from:
    # the digest and the file share one encoding (copies of a spec carry it along)
    _encoded: tuple[pd.DataFrame, dict[str, bytes]] | None = PrivateAttr(default=None)
    # the groups of the sample rows, with the frame they were counted from (for checks of folds)
    _grouped: tuple[pd.DataFrame, Groups] | None = PrivateAttr(default=None)

    # ---- construction ----------------------------------------------------------
    @classmethod
    def from_partition(
        cls, partition: Partition, graph: StudyGraph, attributes: Sequence[str] | str | None = None
    ) -> SplitSpec:
        """The spec of a partition, with block, time and stratum columns looked up in ``graph``.

        ``attributes`` carries sample attributes of the graph (other metadata
        columns, such as sex or age band) into the spec, so fold schemes can
        balance on them; ``"all"`` carries every one.
        """
        instance(partition, Partition, "from_partition: the partition")
        instance(graph, StudyGraph, "from_partition: the graph")
        if attributes is not None and attributes != "all":
            attributes = names(attributes, "attributes")  # one name, not its characters ("all": every one)
        samples = _sample_columns(partition, graph)
        if attributes:
            samples = _with_attributes(samples, graph, attributes)
        return cls._assemble(
            samples,
            dict(
                summary=Summary(n_samples=partition.n_samples, **partition.shape._asdict()),  # same rows and groups
                graph_name=graph.name,
                constraint=Constraint(
                    mode=partition.mode,
                    strategy=partition.strategy,
                    relations=list(partition.relations),
                    via=list(partition.via),
                    priority=list(partition.priority),
                    parameters=portable_parameters(partition.parameters),
                    overrides={k: v for k, v in graph.overrides.items() if v},
                    subset=partition.n_samples < graph.count(NodeType.SAMPLE),
                ),
                recommended_resampling=recommended_resampling(partition.mode, partition.strategy),
                warnings=[
                    SpecWarning(
                        code=w.code,
                        severity=w.severity,  # type: ignore[arg-type]
                        message=w.message,
                        count=int(w.count or 0),
                        ids=list(w.ids[:WARNING_ID_LIMIT]),
                    )
                    for w in partition.warnings
                ],
            ),
            trusted=True,
        )

    @classmethod
    def build(cls, samples: pd.DataFrame, **fields: Any) -> SplitSpec:
        """A spec from its samples and envelope fields; fills ``created_at``,
        ``generator``, ``summary`` (unless given) and the digest.

        Rows are put in sample-id order (byte order; ``folds`` given here follow
        their samples). The spec must be one a reader accepts: at least one
        sample (``empty_input``), non-empty text sample and group ids, sample ids
        without repeats (``duplicate_id``), a given ``summary`` that matches the
        columns, pseudonyms where ``pseudonymization`` says, folds that test
        someone and keep groups whole (``invalid_argument`` otherwise).

        >>> spec = SplitSpec.build(pd.DataFrame({"sample_id": ["S2", "S10", "S1"], "group_id": ["b", "a", "a"]}),
        ...                        constraint=Constraint(mode="subject"), recommended_resampling="grouped_cv")
        >>> spec.samples["sample_id"].tolist(), spec.summary.largest_group
        (['S1', 'S10', 'S2'], 'a')
        """
        return cls._assemble(samples, fields, trusted=False)

    @classmethod
    def _assemble(cls, samples: pd.DataFrame, fields: dict[str, Any], trusted: bool) -> SplitSpec:
        """The spec of ``samples`` and ``fields``, checked as :meth:`build` says; ``trusted`` samples
        (a partition's: in sample-id order, with their summary) skip the checks of rows and counts."""
        instance(samples, pd.DataFrame, "samples")
        fields = {k: v for k, v in fields.items() if k not in ("digest", "signature")}
        fields.setdefault("created_at", _now())
        if "generator" not in fields:
            fields["generator"] = Generator.current()
        samples = samples.reset_index(drop=True)
        folds = fields.pop("folds", None)
        if folds is not None:
            instance(folds, FoldPlan, "folds")
        groups = None
        if not trusted:
            _check_ids(samples, "spec")
            _check_columns(samples, "spec")
            samples, folds = _in_sample_order(samples, folds, "spec")
            groups = Groups.of(samples, "spec")
            if len(samples) == 0:
                raise DepgraphError("empty_input", "a spec needs at least one sample")
            if "summary" not in fields:
                fields["summary"] = groups.summary()
            else:
                groups.check_summary(fields["summary"], "spec", "invalid_argument")
        pseudonymization = fields.get("pseudonymization")
        if pseudonymization is not None:
            _check_pseudonyms(samples, Pseudonymization.model_validate(pseudonymization), "spec", "invalid_argument")
        spec = cls(samples=samples, **fields)
        if groups is not None:
            spec._grouped = (samples, groups)
        if folds is not None:
            _check_splits(folds.splits, len(samples), "folds", "invalid_argument")
            _check_fold_content(folds, spec.grouped(), spec.sample_ids, "folds")
            spec = spec.model_copy(update={"folds": folds})
        spec = spec.model_copy(update={"digest": spec.compute_digest()})
        _check_envelope(spec)
        return spec

    def with_folds(self, folds: FoldPlan | None) -> SplitSpec:
        """The same spec carrying ``folds`` (digest recomputed, any signature dropped).

        Every split must test at least one sample (``too_few_groups``: the groups did
        not fill it) and keep each group on one side (``invalid_argument``).
        """
        if folds is not None:
            instance(folds, FoldPlan, "folds")
            _check_splits(folds.splits, self.n_samples, "folds", "invalid_argument")
            _check_fold_content(folds, self.grouped(), self.sample_ids, "folds")
        updated = self.model_copy(update={"folds": folds, "created_at": _now(), "signature": None})
        updated = updated.model_copy(update={"digest": updated.compute_digest()})
        _check_envelope(updated)
        return updated

    def replace(self, **fields: Any) -> SplitSpec:
        """A copy with some fields replaced, checked as :meth:`build` checks a new spec (every field, the
        samples, their summary, the folds, pseudonyms): nothing :func:`read_spec` would refuse. The digest
        is recomputed; a signature is kept only if the digest is unchanged. New ``samples`` are put in
        sample-id order, the folds following their samples. ``digest`` and ``signature`` are not fields to
        set (``invalid_argument``): the digest is computed, a signature made with :meth:`signed`.

        >>> spec = SplitSpec.build(pd.DataFrame({"sample_id": ["S1", "S2"], "group_id": ["a", "b"]}),
        ...                        constraint=Constraint(mode="subject"), recommended_resampling="grouped_cv")
        >>> spec.replace(graph_name="cohort A").graph_name
        'cohort A'
        >>> spec.replace(recommended_resampling="random_cv")
        Traceback (most recent call last):
        ...
        depgraph.errors.DepgraphError: [invalid_argument] SplitSpec: recommended_resampling: Input should be ...
        """
        if not fields:
            return self
        unknown = sorted(set(fields) - set(type(self).model_fields))
        if unknown:
            raise DepgraphError("invalid_argument", f"replace: {describe_ids(unknown)} are not fields of a split spec")
        fixed = sorted({"digest", "signature"} & set(fields))
        if fixed:
            raise DepgraphError(
                "invalid_argument",
                f"replace: {describe_ids(fixed)} cannot be set: the digest is computed from the content, and a "
                "signature is made with .signed(key)",
            )
        samples = fields.pop("samples", self.samples)
        merged = {**self.model_dump(exclude={"samples", "folds", "digest", "signature"}), **fields}
        merged["folds"] = fields.get("folds", self.folds)
        if "summary" not in fields:  # counted again from the samples
            merged.pop("summary")
        merged = {k: v for k, v in merged.items() if v is not None or k in fields}
        updated = type(self)._assemble(samples, merged, trusted=False)
        digest = updated.compute_digest()
        signature = self.signature if digest == self.digest else None
        return updated.model_copy(update={"digest": digest, "signature": signature})

    def _own_digest(self) -> SplitSpec:
        """The spec with the digest of what it holds (a signature kept only if that is the digest it signed)."""
        digest = self.compute_digest()
        return self.model_copy(
            update={"digest": digest, "signature": self.signature if digest == self.digest else None}
        )

    def signed(self, key: str | bytes) -> SplitSpec:
        """The spec with a :class:`Signature` of its digest under ``key`` (see :mod:`depgraph.spec.privacy` for
        the key rules; the CLI reads it from an environment variable).

        >>> spec = SplitSpec.build(pd.DataFrame({"sample_id": ["S1", "S2"], "group_id": ["a", "b"]}),
        ...                        constraint=Constraint(mode="subject"), recommended_resampling="grouped_cv")
        >>> signed = spec.signed("an example key, never use it for real")
        >>> signed.digest == spec.digest, signed.signature.key_fingerprint
        (True, '335c44ef503144c1')
        >>> signed.verify_signature("an example key, never use it for real")
        """
        if self.digest is None:  # pragma: no cover - every constructor sets it
            raise DepgraphError("integrity", "a spec without a digest cannot be signed")
        return self.model_copy(update={"signature": Signature.of(self.digest, check_key(key, "the signing key"))})

    def verify_signature(self, key: str | bytes, source: str = "spec") -> None:
        """Return if the spec carries a signature of its digest under ``key``; DepgraphError(integrity) if
        it carries none, or one made with another key or over another digest."""
        _verify_signature(self.signature, self.digest or "", check_key(key, "the verifying key"), source)

    # ---- reading the content ----------------------------------------------------
    @property
    def n_samples(self) -> int:
        return len(self.samples)

    @property
    def sample_ids(self) -> np.ndarray:
        return self.samples["sample_id"].to_numpy(dtype=object)

    @property
    def group_ids(self) -> np.ndarray:
        return self.samples["group_id"].to_numpy(dtype=object)

    def groups(self) -> dict[str, str]:
        return dict(zip(self.sample_ids.tolist(), self.group_ids.tolist(), strict=True))

    def positions_of(self, ids: Any, what: str = "ids") -> np.ndarray:
        """The spec position (row) of the sample each of ``ids`` names, in their order; several rows may name
        one sample. ``ids`` is one id per row (a list, array or Series; never one string or a set), text matched
        exactly, numbers as ``from_metadata`` reads them (``1.0`` names ``"1"``). An id the spec lacks, or a
        missing one, is a ``reference`` error naming them.

        >>> spec = SplitSpec.build(pd.DataFrame({"sample_id": ["1", "2", "S3"], "group_id": ["a", "a", "b"]}),
        ...                        constraint=Constraint(mode="subject"), recommended_resampling="grouped_cv")
        >>> spec.positions_of(["S3", 1.0, 2]).tolist()
        [2, 0, 1]
        """
        keys = row_keys(in_order(ids, what))
        positions = pd.Index(self.sample_ids).get_indexer(keys)
        if (positions < 0).any():
            rows = keys[positions < 0]
            unknown = ["(missing)" if k is None else k for k in pd.unique(rows)]
            raise DepgraphError(
                "reference",
                f"{what}: {len(rows)} row(s) name samples not in the spec: {describe_ids(unknown)}",
                ids=unknown[:50],
            )
        return positions

    def grouped(self) -> Groups:
        """The samples' groups (codes, ids, sizes), counted once per samples frame."""
        if self._grouped is None or self._grouped[0] is not self.samples:
            self._grouped = (self.samples, Groups.of(self.samples, "spec"))
        return self._grouped[1]

    # ---- JSON -----------------------------------------------------------------------
    def to_json_dict(self) -> dict[str, Any]:
        """The spec as JSON-ready Python values, keys in contract order."""
        doc = self._envelope()
        doc["samples"] = {c: column_to_json(self.samples[c]) for c in self.samples.columns}
        if self.folds is not None:
            doc["folds"] = self.folds.to_json_dict()
        return doc

    def compute_digest(self) -> str:
        """``sha256:<hex>`` of the canonical content (see :func:`canonical_bytes`)."""
        doc = self._envelope()
        if self.folds is not None:
            doc["folds"] = self.folds.to_json_dict()
        columns = self._column_bytes()
        samples = [b"{"]
        for i, column in enumerate(sorted(columns)):
            samples += [(b"," if i else b"") + orjson.dumps(column) + b":", columns[column]]
        samples.append(b"}")
        digest = hashlib.sha256()
        for part in _canonical_parts(doc, samples):
            digest.update(part)
        return "sha256:" + digest.hexdigest()

    def to_json_bytes(self) -> bytes:
        """Pretty envelope, one line per sample column: readable and compact."""
        return b"".join(self._json_pieces())

    def _json_pieces(self) -> Iterator[bytes]:
        return _layout(self._envelope(), self._column_bytes(), self.folds.to_json_dict() if self.folds else None)

    def _envelope(self) -> dict[str, Any]:
        doc = self.model_dump(mode="json")
        for optional in ("pseudonymization", "signature"):
            if doc.get(optional) is None:
                doc.pop(optional, None)
        return doc

    def _column_bytes(self) -> dict[str, bytes]:
        """Each sample column as compact JSON, encoded once per samples frame."""
        if self._encoded is None or self._encoded[0] is not self.samples:
            columns = {c: _column_bytes(self.samples[c]) for c in self.samples.columns}
            self._encoded = (self.samples, columns)
        return self._encoded[1]

    def __repr__(self) -> str:
        """One line: the grouping, its size, the folds it carries (never the sample columns)."""
        folds = f", {len(self.folds.splits)} splits ({self.folds.scheme})" if self.folds else ""
        found = f", {len(self.warnings)} finding{'s' if len(self.warnings) != 1 else ''}" if self.warnings else ""
        return (
            f"SplitSpec({self.constraint.mode}{'/' + self.constraint.strategy if self.constraint.strategy else ''}: "
            f"{self.n_samples} samples in {self.summary.n_groups} groups{folds}{found})"
        )

    def _summary_lines(self) -> list[str]:
        """What ``print(spec)`` shows under the headline; ids and names made one-line (they are user data)."""
        summary, constraint = self.summary, self.constraint
        followed = f"relations followed: {', '.join(constraint.relations) or 'none'}"
        if constraint.via:
            followed += f" (via {', '.join(constraint.via)})"
        if constraint.subset:
            followed += "; derived on a subset of the graph's samples"
        provenance = [f"written {self.created_at} by {self.generator.package} {self.generator.version}"]
        if self.graph_name is not None:
            provenance.insert(0, f"graph {first_ids([self.graph_name])}")
        provenance.append(f"digest {(self.digest or '')[:19]}…")
        if self.signature is not None:
            provenance.append(f"signed (key {self.signature.key_fingerprint})")
        if self.pseudonymization is not None:
            provenance.append(f"ids pseudonymised (key {self.pseudonymization.key_fingerprint})")
        lines = [
            f"largest group {first_ids([summary.largest_group])} ({summary.largest_group_size} samples), "
            f"{summary.singletons} single-sample groups",
            followed,
            f"recommended resampling: {self.recommended_resampling}",
            f"columns: {', '.join(map(str, self.samples.columns))}",
        ]
        if self.folds is not None:
            lines.append(f"folds: {self.folds.summary()}")
        return [*lines, ", ".join(provenance)]

    def __str__(self) -> str:
        """A short summary for ``print(spec)``: grouping, size, folds, provenance and findings (first ids only).

        >>> spec = SplitSpec.build(pd.DataFrame({"sample_id": ["S1", "S2", "S3"], "group_id": ["a", "a", "b"]}),
        ...                        constraint=Constraint(mode="subject"), recommended_resampling="grouped_cv")
        >>> print(spec)
        SplitSpec(subject: 3 samples in 2 groups)
          largest group a (2 samples), 1 single-sample groups
          relations followed: none
          recommended resampling: grouped_cv
          columns: sample_id, group_id
          written ... by depgraph ..., digest sha256:...…
        """
        table = text_table(findings_table(self.warnings))
        return "\n".join([repr(self), *("  " + line for line in self._summary_lines()), *filter(None, [table])])

    def _repr_html_(self) -> str:
        tables = [("findings", findings_table(self.warnings))]
        if self.folds is not None:
            tables.append(("splits", self.folds.table().head(SHOWN_SPLITS)))
        return html_block(repr(self), self._summary_lines(), tables)


#: Splits a spec's HTML summary lists (a leave-one-block-out plan may have hundreds).
SHOWN_SPLITS = 10


# --------------------------------------------------------------------------- building blocks
def _now() -> str:
    return _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds")


def summarise(samples: pd.DataFrame) -> Summary:
    """n_samples, n_groups, the largest group (the smallest id among equals)
    and the number of single-sample groups.

    >>> summarise(pd.DataFrame({"group_id": ["b", "a", "b", "a", "c"]})).largest_group
    'a'
    """
    return Summary(n_samples=len(samples), **group_shape(samples["group_id"].to_numpy(dtype=object))._asdict())


def _sample_columns(partition: Partition, graph: StudyGraph) -> pd.DataFrame:
    frame = partition.samples[["sample_id", "group_id"]].copy()
    every = graph.sample_ids
    ids = frame["sample_id"].to_numpy(dtype=object)
    if len(ids) == len(every) and (ids == every).all():  # the usual case: all samples, in node order
        positions = np.arange(len(ids)) + graph.type_range(NodeType.SAMPLE)[0]
    else:
        positions = graph.locate(NodeType.SAMPLE, ids)
        if (positions < 0).any():  # a partition of another graph: its columns would be read at wrong rows
            unknown = ids[positions < 0]
            raise DepgraphError(
                "reference",
                f"the partition holds {len(unknown)} sample(s) the graph lacks: {describe_ids(unknown)}; "
                "pass the graph it was derived from",
                ids=unknown[:50].tolist(),
            )
    keys = graph.key_values
    start, _ = graph.type_range(NodeType.SAMPLE)
    for mode in BLOCK_MODES:
        rel = direct_relation(mode)
        if graph.has_relation(rel.name):
            mine = graph.sample_targets(rel.name)[positions - start]
            frame[f"{mode}_group"] = pd.Series(np.where(mine >= 0, keys[np.maximum(mine, 0)], None), dtype=object)
    if "timepoint_id" in partition.samples.columns:
        for c in ("timepoint_id", "time_index", "order_rank"):
            frame[c] = partition.samples[c].reset_index(drop=True)
    elif graph.has_relation("sample_collected_at_timepoint"):
        target = graph.sample_targets("sample_collected_at_timepoint")[positions - start]
        try:
            time_cols, _, _ = sample_time_columns(graph, target)
        except DepgraphError:
            time_cols = None  # inconsistent time order: time mode and validation report it
        if time_cols is not None:
            for c in ("timepoint_id", "time_index", "order_rank"):
                frame[c] = time_cols[c].reset_index(drop=True)
    stratum = _strata(graph, positions - start)
    if stratum is not None:
        frame["stratum"] = stratum
    return frame.reset_index(drop=True)


def _with_attributes(samples: pd.DataFrame, graph: StudyGraph, attributes: Sequence[str] | str) -> pd.DataFrame:
    start, stop = graph.type_range(NodeType.SAMPLE)
    block = graph.attributes.iloc[start:stop]
    available = [c for c in block.columns if block[c].notna().any()]
    wanted = available if attributes == "all" else list(attributes)
    unknown = [a for a in wanted if a not in available]
    if unknown:
        raise DepgraphError(
            "invalid_argument",
            f"sample attribute(s) {describe_ids(unknown)} are not in the graph (sample attributes: "
            f"{describe_ids(available, 20) or 'none'})",
        )
    for name in wanted:
        if name in samples.columns or name in SAMPLE_COLUMNS or not re.fullmatch(r"[a-z][a-z0-9_]*", name):
            raise DepgraphError(
                "invalid_argument",
                f"sample attribute {name!r} cannot be a spec column: names are lower-case letters, digits and _, "
                f"and not one of the spec's own columns",
            )
    positions = graph.locate(NodeType.SAMPLE, samples["sample_id"]) - start
    out = samples.copy()
    for name in wanted:
        out[name] = block[name].iloc[positions].reset_index(drop=True)
    return out


def _strata(graph: StudyGraph, sample_rows: np.ndarray) -> pd.Series | None:
    """Each sample's outcome (its own, else its subject's); several outcomes
    are joined with ``|`` in sorted order; ``None`` where there is none."""
    start, stop = graph.type_range(NodeType.SAMPLE)
    keys = graph.key_values
    samples, outcomes = [], []
    if graph.has_relation("sample_has_outcome"):
        src, dst, _ = graph.relation_edges("sample_has_outcome")
        samples.append(src - start)
        outcomes.append(dst)
    if graph.has_relation("subject_has_outcome"):
        s_src, s_dst, _ = graph.relation_edges("sample_belongs_to_subject")
        o_src, o_dst, _ = graph.relation_edges("subject_has_outcome")
        first = np.searchsorted(o_src, s_dst, side="left")  # outcome edges are sorted by subject
        last = np.searchsorted(o_src, s_dst, side="right")
        reps = last - first
        samples.append(np.repeat(s_src - start, reps))
        outcomes.append(o_dst[np.repeat(first, reps) + _ranges(reps)])
    if not samples:
        return None
    if len(samples) == 1 and graph.has_relation("sample_has_outcome"):
        sample, outcome = samples[0], outcomes[0]  # edges are stored sorted by (sample, outcome), once each
    else:
        pairs = distinct(np.concatenate(samples) * graph.n_nodes + np.concatenate(outcomes))  # by sample, outcome
        sample, outcome = pairs // graph.n_nodes, pairs % graph.n_nodes
    per_sample = np.full(stop - start, None, dtype=object)
    counts = np.bincount(sample, minlength=stop - start)
    single = counts[sample] == 1  # the usual case: one outcome, no string work
    if not single.all():
        _refuse_joined_outcome_ids(keys, outcome, sample[~single], keys[start + sample[~single]])
    per_sample[sample[single]] = keys[outcome[single]]
    multi_sample, multi_outcome = sample[~single], outcome[~single]  # contiguous per sample (pairs are sorted)
    cuts = np.flatnonzero(np.diff(multi_sample)) + 1
    for members, who in zip(np.split(multi_outcome, cuts), multi_sample[np.r_[0, cuts]] if len(multi_sample) else [],
                            strict=False):  # fmt: skip
        per_sample[who] = "|".join(sorted(keys[members].tolist()))
    return pd.Series(per_sample[sample_rows], dtype=object)


def _refuse_joined_outcome_ids(keys: np.ndarray, outcomes: np.ndarray, multi: np.ndarray, names: np.ndarray) -> None:
    """A sample's several outcomes are joined with ``|`` into its stratum, so an outcome id holding ``|`` would make
    two different sets of outcomes one stratum (outcomes ``a`` and ``b`` against outcome ``a|b``): ``ambiguity``.
    Outcome ids are few: each distinct one is looked at once."""
    barred = [str(keys[o]) for o in distinct(outcomes).tolist() if "|" in str(keys[o])]
    if barred:
        raise DepgraphError(
            "ambiguity",
            f"outcome id {barred[0]!r} holds '|', which joins a sample's several outcomes into its stratum (sample "
            f"{names[0]!r} has several): two different sets of outcomes would read as one stratum; rename the outcome",
            ids=barred,
        )


def _ranges(lengths: np.ndarray) -> np.ndarray:
    """0..k-1 for each length k, concatenated."""
    ends = np.cumsum(lengths)
    return np.arange(ends[-1] if len(ends) else 0) - np.repeat(ends - lengths, lengths)


def portable_parameters(parameters: dict[str, Any]) -> dict[str, Any]:
    """Builder parameters for the spec, minus lists of raw ids (counts stay). Builders record input
    files by name only, so the same data read from two folders gives the same spec digest."""

    def clean(value: Any) -> Any:
        if isinstance(value, dict):
            return {k: clean(v) for k, v in value.items() if k != "unknown_ids"}
        if isinstance(value, (list, tuple)):
            return [clean(v) for v in value]
        return value

    return orjson.loads(orjson.dumps(clean(parameters), default=str, option=orjson.OPT_SERIALIZE_NUMPY))


def column_to_json(series: pd.Series) -> list[Any]:
    """A sample column as JSON values: ``None`` for missing, ints stay ints."""
    if pd.api.types.is_float_dtype(series.dtype):
        values = series.to_numpy(dtype=np.float64)
        missing = np.isnan(values)
        return [None if m else v for v, m in zip(values.tolist(), missing.tolist(), strict=True)] if missing.any() \
            else values.tolist()  # fmt: skip
    if pd.api.types.is_integer_dtype(series.dtype):  # including nullable Int64
        return series.astype(object).where(series.notna(), None).tolist()
    values = series.to_numpy(dtype=object)
    missing = pd.isna(values)
    if missing.any():
        values = values.copy()
        values[missing] = None
    return values.tolist()


def _column_bytes(series: pd.Series) -> bytes:
    """A sample column as compact JSON (what ``orjson.dumps(column_to_json(series))`` gives), without
    building a cleaned copy: orjson writes ``None`` and NaN as ``null`` itself."""
    numpy = orjson.OPT_SERIALIZE_NUMPY  # numbers straight from the array: the same text as from Python floats and ints
    if pd.api.types.is_float_dtype(series.dtype):
        return orjson.dumps(np.ascontiguousarray(series.to_numpy(dtype=np.float64)), option=numpy)
    if pd.api.types.is_integer_dtype(series.dtype):
        if not series.hasnans:
            return orjson.dumps(np.ascontiguousarray(series.to_numpy(dtype=np.int64)), option=numpy)
        return orjson.dumps(series.to_numpy(dtype=object, na_value=None).tolist())
    try:
        return orjson.dumps(series.to_numpy(dtype=object).tolist())
    except TypeError:  # a value orjson does not know (pd.NA, numpy scalars): clean it first
        return orjson.dumps(column_to_json(series))


# --------------------------------------------------------------------------- digest and layout
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
    return b"".join(_canonical_parts(doc, None if samples is None else [samples]))


def _canonical_parts(doc: dict[str, Any], samples: list[bytes] | None) -> Iterator[bytes]:
    """:func:`canonical_bytes` in pieces, so a large ``samples`` object is hashed without being copied:
    the same bytes as dumping the whole dict with sorted keys."""
    content = {k: v for k, v in doc.items() if k not in UNDIGESTED}
    keys = sorted({*content, *(["samples"] if samples is not None else [])})
    yield b"{"
    for i, key in enumerate(keys):
        yield (b"," if i else b"") + orjson.dumps(key) + b":"
        if key == "samples" and samples is not None:
            yield from samples
        else:
            yield orjson.dumps(content[key], option=orjson.OPT_SORT_KEYS)
    yield b"}"


def content_digest(doc: dict[str, Any]) -> str:
    """``sha256:<hex>`` of :func:`canonical_bytes`, hashed piece by piece (a large document is not joined)."""
    digest = hashlib.sha256()
    for part in _canonical_parts(doc, None):
        digest.update(part)
    return "sha256:" + digest.hexdigest()


def _layout(envelope: dict[str, Any], columns: dict[str, bytes], folds: dict[str, Any] | None) -> Iterator[bytes]:
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


# --------------------------------------------------------------------------- files
def write_spec(spec: SplitSpec, path: str | os.PathLike[str]) -> None:
    """Write ``spec`` as JSON to ``path`` atomically."""
    instance(spec, SplitSpec, "write_spec: the spec")
    atomic_write_bytes(path, spec._json_pieces())


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
        _verify_signature(spec.signature, expected, verify_key, source)
    _check_content(spec, source, *arrays)
    if not (exact and _same_envelope(original, spec)):
        spec = spec._own_digest()  # the digest of what this spec holds; the file's signature does not sign it
    return spec


def _verify_signature(signature: Signature | None, digest: str, key: str | bytes, source: str) -> None:
    if signature is None:
        raise DepgraphError(
            "integrity", f"{source}: carries no signature; a signed spec is needed (written with --sign-key-env)"
        )
    secret = _key_bytes(key)
    ours = signing_key_fingerprint(secret)
    if not hmac.compare_digest(signature.key_fingerprint, ours):
        raise DepgraphError(
            "integrity",
            f"{source}: signed with another key (key fingerprint {signature.key_fingerprint}, yours is {ours})",
        )
    if not hmac.compare_digest(signature.value, _signature_value(digest, secret)):
        raise DepgraphError(
            "integrity",
            f"{source}: the signature does not match the digest; the spec was changed after it was signed",
        )


def _same_envelope(original: dict[str, Any], spec: SplitSpec) -> bool:
    """Whether the spec's fields, outside the sample columns and fold positions, are those the document
    spells (then the document's digest is the spec's own)."""
    ours = spec._envelope()
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
            frame[name], as_written = _read_column(name, values, where)
            exact &= as_written
    return pd.DataFrame(frame), exact, (arrow["sample_id"], arrow["group_id"])


def _read_column(name: str, values: Any, where: str) -> tuple[pd.Series, bool]:
    """A sample column other than the ids, every element checked by its kind; and whether the column spells
    every value as the document does (integers in a number column are read as floats)."""
    kind = SAMPLE_COLUMNS.get(name, "any")
    if kind == "string":
        return pd.Series(optional_text(values, where), dtype=object, copy=False), True
    if kind == "number":
        column, as_floats = numbers(values, where)
        return pd.Series(column), as_floats
    if kind == "integer":
        return pd.Series(integers(values, where, nullable=True, minimum=1 if name == "order_rank" else None)), True
    return pd.Series(scalar_objects(values, where)[0], dtype=object, copy=False), True  # kept as written


def _folds(doc: Any, n_samples: int, source: str) -> FoldPlan | None:
    if doc is None:
        return None
    splits = []
    for i, entry in enumerate(doc.get("splits", [])):
        arrays = {name: positions(entry.get(name), f"{source}: folds.splits[{i}].{name}", n_samples)
                  for name in ("test", "excluded")}  # fmt: skip
        values = {**{k: v for k, v in entry.items() if k not in arrays}, **arrays}
        splits.append(_read_model(FoldSplit, values, source, f"folds.splits[{i}]."))
    _check_splits(splits, n_samples, f"{source}: folds")
    return _read_model(
        FoldPlan, {**{k: v for k, v in doc.items() if k != "splits"}, "splits": splits}, source, "folds."
    )


def _check_splits(splits: list[FoldSplit], n_samples: int, where: str, code: str = "schema") -> None:
    """Positions in range, sorted and unique, test and excluded disjoint, counts consistent
    (each split in time linear in its positions, not in the samples); ``schema`` errors of a file, or
    ``invalid_argument`` for folds made in memory."""
    for i, split in enumerate(splits):
        for name in ("test", "excluded"):
            values = getattr(split, name)
            if len(values) and (values.min() < 0 or values.max() >= n_samples):
                bad = int(values[(values < 0) | (values >= n_samples)][0])
                raise DepgraphError(
                    code, f"{where}.splits[{i}].{name} holds position {bad}; the spec has {n_samples} samples"
                )
            if len(values) > 1 and (np.diff(values) <= 0).any():
                raise DepgraphError(code, f"{where}.splits[{i}].{name} must be sorted positions without repeats")
        if len(split.test) and len(split.excluded):
            found = split.test[np.minimum(np.searchsorted(split.test, split.excluded), len(split.test) - 1)]
            both = split.excluded[found == split.excluded]
            if len(both):
                raise DepgraphError(code, f"{where}.splits[{i}]: position {int(both[0])} is both tested and excluded")
        counts = (n_samples - len(split.test) - len(split.excluded), len(split.test), len(split.excluded))
        if (split.n_train, split.n_test, split.n_excluded) != counts:
            raise DepgraphError(
                code,
                f"{where}.splits[{i}]: n_train/n_test/n_excluded say {split.n_train}/{split.n_test}/{split.n_excluded},"
                f" the positions give {counts[0]}/{counts[1]}/{counts[2]}",
            )


# --------------------------------------------------------------------------- what a spec says of itself
class Groups:
    """The groups of a spec's samples: a code per sample, the distinct group ids and their sizes
    (hashed once, never sorted: only the ties for the largest group are compared)."""

    def __init__(self, codes: np.ndarray, names: np.ndarray | pa.Array) -> None:
        self.codes = codes.astype(np.int64, copy=False)
        self._names = names  # Arrow text from a reader: only the names asked for become Python strings
        self.sizes: np.ndarray = np.bincount(self.codes, minlength=len(names))

    @classmethod
    def of_text(cls, group_ids: pa.Array) -> Groups:
        """The groups of checked Arrow text (a reader's column)."""
        encoded = group_ids.dictionary_encode()
        return cls(encoded.indices.to_numpy(zero_copy_only=False), encoded.dictionary)

    def name(self, code: int) -> str:
        name = self._names[code]
        return name.as_py() if isinstance(name, pa.Scalar) else str(name)

    def names_where(self, mask: np.ndarray) -> list[str]:
        if isinstance(self._names, pa.Array):
            return self._names.filter(pa.array(mask)).to_pylist()
        return [str(n) for n in self._names[mask].tolist()]

    @classmethod
    def of(cls, samples: pd.DataFrame, where: str) -> Groups:
        """The groups of a samples frame."""
        if "group_id" not in samples.columns:
            raise DepgraphError("invalid_argument", f"{where}: samples need a group_id column")
        codes, names = pd.factorize(samples["group_id"].to_numpy(dtype=object))  # (hashes of str are cached)
        return cls(codes, np.asarray(names, dtype=object))

    def summary(self) -> Summary:
        """n_samples, n_groups, the largest group (the smallest id, in byte order, among equals), singletons."""
        if not len(self.sizes):
            return Summary(n_samples=0, n_groups=0, largest_group=None, largest_group_size=0, singletons=0)
        largest = int(self.sizes.max())
        return Summary(
            n_samples=len(self.codes),
            n_groups=len(self.sizes),
            largest_group=min(self.names_where(self.sizes == largest)),  # code point order: byte order
            largest_group_size=largest,
            singletons=int((self.sizes == 1).sum()),
        )

    def check_summary(self, summary: Summary | dict[str, Any], where: str, code: str) -> None:
        given = summary.model_dump() if isinstance(summary, Summary) else dict(summary)
        actual = self.summary().model_dump()
        for field, value in actual.items():
            if given.get(field) != value:
                raise DepgraphError(
                    code,
                    f"{where}: summary.{field} says {given.get(field)!r}, the samples give {value!r}",
                    field=field,
                )


def _check_ids(samples: pd.DataFrame, where: str) -> None:
    """Sample and group ids are non-empty text (``invalid_argument`` otherwise), in the rows as given."""
    for name in REQUIRED_SAMPLE_COLUMNS:
        if name not in samples.columns:
            raise DepgraphError("invalid_argument", f"{where}: samples need a {name} column")
        try:
            text = pa.array(samples[name].to_numpy(dtype=object), type=pa.string(), from_pandas=True)
        except (pa.ArrowInvalid, pa.ArrowTypeError, UnicodeEncodeError) as exc:  # (a lone surrogate has no UTF-8)
            raise DepgraphError("invalid_argument", f"{where}: samples.{name} must hold text ({exc})") from None
        blank = pc.fill_null(pc.equal(pc.binary_length(text), 0), True)
        if pc.any(blank).as_py():
            i = int(np.flatnonzero(blank.to_numpy(zero_copy_only=False))[0])
            raise DepgraphError(
                "invalid_argument", f"{where}: samples.{name}[{i}] is missing or empty; every sample needs one"
            )
        refuse_unicode_twins(text, f"samples.{name}", where)


def _check_columns(samples: pd.DataFrame, where: str) -> None:
    """The columns other than sample and group ids, as a reader would read them back from the file
    (``invalid_argument`` naming the first value it would refuse or read differently): names a spec column
    may have, values JSON carries (no infinity, which a writer spells ``null``; no integer beyond 64 bits;
    no list or object), and the types of the spec's own columns (``order_rank`` whole numbers of at least 1,
    ``time_index`` numbers, block and time ids text)."""
    for name in samples.columns:
        if name in REQUIRED_SAMPLE_COLUMNS:
            continue
        series = samples[name]
        try:
            if not isinstance(name, str) or not re.fullmatch(r"[a-z][a-z0-9_]*", name):
                raise DepgraphError("invalid_argument", f"column {name!r}: names are lower-case letters, digits and _")
            if pd.api.types.is_float_dtype(series.dtype) and np.isinf(series.to_numpy(np.float64)).any():
                i = int(np.flatnonzero(np.isinf(series.to_numpy(np.float64)))[0])
                raise DepgraphError("invalid_argument", f"samples.{name}[{i}] is infinite; JSON has no infinity")
            try:
                values = orjson.loads(_column_bytes(series))
            except (TypeError, orjson.JSONEncodeError) as exc:
                raise DepgraphError(
                    "invalid_argument", f"samples.{name} holds a value JSON cannot carry ({exc})"
                ) from None
            _read_column(name, values, f"samples.{name}")
        except DepgraphError as exc:
            raise DepgraphError("invalid_argument", f"{where}: {exc.message}", column=name) from None


def _check_envelope(spec: SplitSpec) -> None:
    """What a reader checks of a spec's envelope (its JSON Schema), on a spec made in memory
    (``invalid_argument``): a file depgraph writes is one depgraph reads."""
    doc = spec._envelope()
    doc["samples"] = {c: [] for c in spec.samples.columns}
    if spec.folds is not None:
        plan = spec.folds.model_dump(mode="json")
        plan["splits"] = [{**split, "test": [], "excluded": []} for split in plan["splits"]]
        doc["folds"] = plan
    problem = envelope_problem(doc, "split-spec")
    if problem is not None:
        raise DepgraphError("invalid_argument", f"spec: {problem}")


def _check_content(spec: SplitSpec, source: str, ids: pa.Array, group_ids: pa.Array) -> None:
    """What every spec depgraph writes says of itself (``ids`` and ``group_ids``: its columns as Arrow
    text); ``integrity`` errors, since the digest may well match."""
    if spec.n_samples == 0:
        raise DepgraphError("integrity", f"{source}: holds no samples")
    if spec.pseudonymization is not None:  # first: raw ids under a pseudonymization block are the worst news
        _check_pseudonyms(spec.samples, spec.pseudonymization, source, "integrity")
    # 1.0 writers kept imported, built and pseudonymised rows in the order they came in: unique is all 1.0 promised
    _check_sample_order(ids, source, unique_only=spec.format_version.startswith("1.0."))
    groups = Groups.of_text(group_ids)
    spec._grouped = (spec.samples, groups)
    groups.check_summary(spec.summary, source, "integrity")
    if spec.folds is not None:
        _check_fold_content(spec.folds, groups, spec.sample_ids, f"{source}: folds", "integrity")


def _check_sample_order(ids: pa.Array, where: str, unique_only: bool = False) -> None:
    """Sample ids strictly increasing in byte order (so sorted, and never repeated), or only never
    repeated (``unique_only``)."""
    if len(ids) < 2:
        return
    ahead = pc.less(ids.slice(0, len(ids) - 1), ids.slice(1))
    if pc.all(ahead).as_py():
        return
    _, first = sorted_codes(ids)
    if len(first) < len(ids):
        counts = pc.value_counts(ids)
        twice = counts.field("values").filter(pc.greater(counts.field("counts"), 1)).to_pylist()
        raise DepgraphError("integrity", f"{where}: sample ids repeat: {describe_ids(twice)}", ids=twice)
    if unique_only:
        return
    i = int(np.flatnonzero(~ahead.to_numpy(zero_copy_only=False))[0]) + 1
    raise DepgraphError(
        "integrity",
        f"{where}: samples.sample_id[{i}] {ids[i].as_py()!r} comes after {ids[i - 1].as_py()!r}; samples are "
        "in sample-id order (byte order), and fold positions count in that order",
    )


def _in_sample_order(samples: pd.DataFrame, folds: FoldPlan | None, where: str) -> tuple[pd.DataFrame, FoldPlan | None]:
    """The rows in sample-id order (byte order), fold positions following their samples; repeated
    sample ids are a ``duplicate_id`` error."""
    if "sample_id" not in samples.columns or len(samples) < 2:
        return samples, folds
    try:
        ids = pa.array(samples["sample_id"].to_numpy(dtype=object), type=pa.string(), from_pandas=True)
    except (pa.ArrowInvalid, pa.ArrowTypeError):
        return samples, folds  # Groups.of names the offending value
    if ids.null_count or pc.all(pc.less(ids.slice(0, len(ids) - 1), ids.slice(1))).as_py():
        return samples, folds
    _, first = sorted_codes(ids)
    if len(first) < len(ids):
        counts = pc.value_counts(ids)
        twice = counts.field("values").filter(pc.greater(counts.field("counts"), 1)).to_pylist()
        raise DepgraphError("duplicate_id", f"{where}: sample ids repeat: {describe_ids(twice)}", ids=twice)
    order = pc.sort_indices(ids).to_numpy(zero_copy_only=False).astype(np.int64)
    samples = samples.iloc[order].reset_index(drop=True)
    if folds is None:
        return samples, folds
    moved = np.empty(len(order), dtype=np.int64)
    moved[order] = np.arange(len(order))  # old row -> new row
    splits = [FoldSplit.of(s.repeat, s.fold, moved[s.test], moved[s.excluded], len(order)) for s in folds.splits]
    return samples, folds.model_copy(update={"splits": splits})


_HEX_DIGIT = np.zeros(256, dtype=bool)
_HEX_DIGIT[list(b"0123456789abcdef")] = True


def _check_pseudonyms(samples: pd.DataFrame, pseudonymization: Pseudonymization, where: str, code: str) -> None:
    """The columns ``pseudonymization`` names hold pseudonyms: ``hex_digits`` lower-case hex digits
    (sample ids), ``<prefix>:`` and the digits (group ids), either form elsewhere; missing values pass."""
    digits = pseudonymization.hex_digits
    for name in pseudonymization.columns:
        if name not in samples.columns:
            raise DepgraphError(code, f"{where}: pseudonymization names the column {name!r}, which samples lack")
        try:
            text = pa.array(samples[name].to_numpy(dtype=object), type=pa.string(), from_pandas=True)
        except (pa.ArrowInvalid, pa.ArrowTypeError):
            raise DepgraphError(code, f"{where}: samples.{name} is pseudonymised but does not hold text") from None
        plain = _pseudonymous(text, digits, prefixed=False)
        ok = plain if name == "sample_id" else _pseudonymous(text, digits, prefixed=True)
        if name not in ("sample_id", "group_id"):
            ok |= plain
        ok |= text.is_null().to_numpy(zero_copy_only=False)
        if not ok.all():
            i = int(np.flatnonzero(~ok)[0])
            shape = f"{digits} lower-case hex digits" + (" after '<prefix>:'" if name == "group_id" else "")
            raise DepgraphError(
                code,
                f"{where}: samples.{name}[{i}] is {text[i].as_py()!r}, not a pseudonym ({shape}), although "
                f"pseudonymization says {name} is pseudonymised",
                column=name,
            )


def _pseudonymous(text: pa.Array, digits: int, prefixed: bool) -> np.ndarray:
    """Per value: exactly ``digits`` lower-case hex digits, after one ``<prefix>:`` (no other colon)
    when ``prefixed``. Read from the Arrow buffers, no Python string per value."""
    offsets, data = text_buffers(text)
    start, end = offsets[:-1].astype(np.int64), offsets[1:].astype(np.int64)
    length = end - start
    if not len(data):
        return np.zeros(len(text), dtype=bool)
    hex_count = np.concatenate([[0], np.cumsum(_HEX_DIGIT[data])])
    if not prefixed:
        return (length == digits) & (hex_count[end] - hex_count[start] == digits)
    colon_count = np.concatenate([[0], np.cumsum(data == ord(":"))])
    tail = np.maximum(end - digits, start)
    colon_at = np.clip(end - digits - 1, 0, len(data) - 1)
    return (
        (length > digits)
        & (hex_count[end] - hex_count[tail] == digits)
        & (data[colon_at] == ord(":"))
        & (colon_count[end] - colon_count[start] == 1)
    )


def _check_fold_content(
    folds: FoldPlan, groups: Groups, sample_ids: np.ndarray, where: str, code: str | None = None
) -> None:
    """Every split tests someone, and no group has a tested and a trained sample in one split.

    Linear in the positions: a group straddles a split when it has a tested
    sample and fewer tested or excluded samples than members.
    """
    if not folds.splits:  # no split: a consumer would train and test on nothing, without a word
        raise DepgraphError(code or "invalid_argument", f"{where} holds no split; a fold plan splits at least once")
    for i, split in enumerate(folds.splits):
        if split.n_test == 0 or not len(split.test):
            raise DepgraphError(
                code or "too_few_groups",
                f"{where}.splits[{i}] (repeat {split.repeat}, fold {split.fold}) tests no sample"
                + ("" if code else f"; the {folds.scheme} plan has more folds than its groups fill"),
            )
    n_groups = len(groups.sizes)
    n_positions = sum(len(s.test) + len(s.excluded) for s in folds.splits)
    if len(folds.splits) * n_groups <= 4 * n_positions:  # few splits (k-fold): count per split, no sort
        found = []
        for i, split in enumerate(folds.splits):
            held = np.bincount(groups.codes[split.test], minlength=n_groups)
            tested = held > 0
            held += np.bincount(groups.codes[split.excluded], minlength=n_groups)
            found.append(i * n_groups + np.flatnonzero(tested & (held < groups.sizes)))
        tested = np.concatenate(found)
        straddles = np.ones(len(tested), dtype=bool)
    else:  # many small splits (leave one block out): one sort over every split's positions
        split_of = [np.full(len(s.test) + len(s.excluded), i, dtype=np.int64) for i, s in enumerate(folds.splits)]
        rows = np.concatenate([np.concatenate([s.test, s.excluded]) for s in folds.splits])
        kept = np.concatenate(split_of) * n_groups + groups.codes[rows]  # (split, group) of each tested or excluded
        pairs, held = np.unique(kept, return_counts=True)
        tested = distinct(np.concatenate([i * n_groups + groups.codes[s.test] for i, s in enumerate(folds.splits)]))
        straddles = held[np.searchsorted(pairs, tested)] < groups.sizes[tested % n_groups]
    if straddles.any():
        bad = int(tested[np.flatnonzero(straddles)[0]])
        i, group = divmod(bad, n_groups)
        split = folds.splits[i]
        role = np.zeros(len(groups.codes), dtype=np.int8)  # one split, only to name two of its samples
        role[split.test], role[split.excluded] = 1, 2
        members = np.flatnonzero(groups.codes == group)
        test_id = sample_ids[int(members[role[members] == 1][0])]
        train_id = sample_ids[int(members[role[members] == 0][0])]
        raise DepgraphError(
            code or "invalid_argument",
            f"{where}.splits[{i}] (repeat {split.repeat}, fold {split.fold}): group {groups.name(group)!r} "
            f"is on both sides (sample {test_id!r} is tested, {train_id!r} trains); a group stays whole",
            group=groups.name(group),
        )
