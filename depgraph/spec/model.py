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
``schema/split-spec.schema.json`` (generated from these models by
:mod:`depgraph.spec.schema`). Around the models: the sample columns in
:mod:`depgraph.spec.columns`, the checks of what a spec says of itself in
:mod:`depgraph.spec.checks`, the digest and the file layout in
:mod:`depgraph.spec.digest`; the value's two file forms live apart from it, as the graph's do: the JSON form in
:mod:`depgraph.spec.files` (``spec_document``, ``spec_bytes``), the columnar form in :mod:`depgraph.spec.columnar`.

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
from collections.abc import Sequence
from dataclasses import dataclass
from importlib import metadata as _metadata
from typing import Any, Literal

import numpy as np
import pandas as pd
import pyarrow as pa
from pydantic import BaseModel, ConfigDict, Field, PrivateAttr, ValidationError, field_validator, model_validator

from depgraph.common.arguments import in_order, instance, names, whole_number
from depgraph.common.arrays import distinct, text_array
from depgraph.common.display import first_ids, html_block, ids_repr, text_table
from depgraph.common.identifiers import row_keys
from depgraph.common.samples import GroupedSamples
from depgraph.derivation.partition import Partition
from depgraph.derivation.shapes import group_shape
from depgraph.errors import DepgraphError, describe_ids
from depgraph.findings import findings_table
from depgraph.formats import SPEC_FORMAT, SPEC_FORMAT_VERSION
from depgraph.graph.model import KNOWN_OVERRIDES, StudyGraph, checked_overrides
from depgraph.io.jsoncolumns import plain_json
from depgraph.io.schemas import envelope_problem
from depgraph.spec.checks import Groups, check_fold_content, check_pseudonyms, check_splits, sample_order
from depgraph.spec.columns import (
    check_columns,
    check_ids,
    column_bytes,
    portable_parameters,
    sample_columns,
    with_attributes,
)
from depgraph.spec.digest import signature_value, signing_key_fingerprint, spec_digest, verify_signature
from depgraph.spec.keys import check_key
from depgraph.spec.plans import MAX_SEED, PLAN_WARNING_CODES, WARNING_ID_LIMIT, check_plan, check_plan_warnings
from depgraph.spec.statements import check_statements
from depgraph.version import __version__
from depgraph.vocab import (
    COMBINABLE_MODES,
    MODE,
    MODES,
    RELATION,
    RELATION_NAMES,
    RESAMPLING_PLANS,
    SEVERITIES,
    STRATEGIES,
    NodeType,
    canonical_name,
    recommended_resampling,
)

# The vocabulary as types (each a Literal of vocab.py's names, in its order): a field typed with one holds only
# what the vocabulary lists, and the published schema's enums come from these types.
Mode = Literal[tuple(mode.name for mode in MODES)]  # type: ignore[valid-type]
CombinableMode = Literal[COMBINABLE_MODES]  # type: ignore[valid-type]
Strategy = Literal[STRATEGIES]  # type: ignore[valid-type]
RelationName = Literal[RELATION_NAMES]  # type: ignore[valid-type]
ResamplingPlan = Literal[RESAMPLING_PLANS]  # type: ignore[valid-type]
Severity = Literal[SEVERITIES]  # type: ignore[valid-type]

#: Fold roles, in code order (``FoldSplit.roles`` returns these codes).
ROLES: tuple[str, ...] = ("train", "test", "excluded")

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

    mode: Mode
    strategy: Strategy | None = None
    relations: list[RelationName] = Field(default_factory=list)
    via: list[CombinableMode] = Field(default_factory=list)
    priority: list[CombinableMode] = Field(default_factory=list)
    parameters: dict[str, Any] = Field(default_factory=dict)
    overrides: dict[str, bool] = Field(default_factory=dict)
    subset: bool = False

    # The types refuse any other word; these say which words there are, in the vocabulary's terms (before
    # pydantic's own check, which would list every literal).
    @field_validator("mode", mode="before")
    @classmethod
    def _known_mode(cls, mode: Any) -> Any:
        # names are matched in any case where they enter (vocab.canonical_name) and kept lower case; a spec file is
        # held to the lower-case names by its schema before it gets here
        mode = _canonical(mode)
        unknown = _unknown_words([mode], MODE)
        if unknown:
            raise ValueError(f"{mode!r} is not a mode; modes are {describe_ids(list(MODE), 20)}")
        return mode

    @field_validator("strategy", mode="before")
    @classmethod
    def _known_strategy(cls, strategy: Any) -> Any:
        strategy = _canonical(strategy)
        if strategy is not None and _unknown_words([strategy], STRATEGIES):
            raise ValueError(f"{strategy!r} is not a strategy; strategies are {describe_ids(STRATEGIES)}")
        return strategy

    @field_validator("relations", mode="before")
    @classmethod
    def _known_relations(cls, relations: Any) -> Any:
        relations = _canonical(relations)
        unknown = _unknown_words(relations, RELATION) if isinstance(relations, list) else []
        if unknown:
            raise ValueError(f"{describe_ids(unknown)} are not relations of the vocabulary")
        return relations

    @field_validator("via", "priority", mode="before")
    @classmethod
    def _known_modes(cls, modes: Any) -> Any:
        modes = _canonical(modes)
        unknown = _unknown_words(modes, COMBINABLE_MODES) if isinstance(modes, list) else []
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


def _canonical(value: Any) -> Any:
    """A name, or a list of names, in the form the vocabulary keeps (:func:`~depgraph.vocab.canonical_name`);
    anything else as it is, for the validators to refuse."""
    if isinstance(value, str):
        return canonical_name(value)
    if isinstance(value, list):
        return [canonical_name(v) if isinstance(v, str) else v for v in value]
    return value


def _unknown_words(words: list[Any], known: Any) -> list[str]:
    """The ``words`` not in ``known``; a word that is not text is refused as pydantic would refuse it."""
    for word in words:
        if not isinstance(word, str):
            raise ValueError(f"Input should be a valid string, not {type(word).__name__}")
    return [word for word in words if word not in known]


class SpecWarning(_Model):
    """A coded finding carried by the spec (ids truncated, count exact)."""

    code: str
    severity: Severity = "warning"
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
    seed: int | None = Field(default=None, ge=0, le=MAX_SEED)  # JSON numbers read as doubles carry it exactly
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

    def outline(self) -> dict[str, Any]:
        """The plan without its positions, as JSON values: what a columnar spec's manifest holds of it (and what
        the Spark engine's plan is, :class:`~depgraph.spark.folds.SparkFolds`)."""
        splits = [{"repeat": s.repeat, "fold": s.fold, "n_train": s.n_train, "n_test": s.n_test,
                   "n_excluded": s.n_excluded} for s in self.splits]  # fmt: skip
        return {"scheme": self.scheme, "parameters": self.parameters, "seed": self.seed, "splits": splits,
                "balance": self.balance}  # fmt: skip

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
        return cls(key_fingerprint=signing_key_fingerprint(key), value=signature_value(digest, key))


class InputFile(_Model):
    """One file a spec was made from: the study-file key that names it, its path as the study file writes it (a
    companion file the reader opens too, such as a GRM's ids, beside it), its size and its SHA-256."""

    key: str = Field(min_length=1)
    path: str = Field(min_length=1)
    size: int = Field(ge=0)
    sha256: str = Field(pattern="^[0-9a-f]{64}$")


class StudyFileRecord(_Model):
    """The study file a spec was made from: its name (without its folder, so the record is the same wherever the
    study is checked out), its size and its SHA-256."""

    name: str = Field(min_length=1)
    size: int = Field(ge=0)
    sha256: str = Field(pattern="^[0-9a-f]{64}$")


class Provenance(_Model):
    """What a spec was made from (``depgraph run``): the study file, its declaration as read (every key as written,
    nothing defaulted, so a later depgraph's defaults do not change it), and every input file read, in the order it
    was read. Part of the digest: a spec whose provenance was edited is refused, and a signature covers it."""

    study_file: StudyFileRecord | None = None
    declaration: dict[str, Any]
    inputs: list[InputFile] = Field(default_factory=list)

    @field_validator("declaration")
    @classmethod
    def _json_declaration(cls, declaration: dict[str, Any]) -> dict[str, Any]:
        return plain_json(declaration, "declaration")


def partition_fields(partition: Any, graph: Any, subset: bool) -> dict[str, Any]:
    """The spec fields a partition decides, whichever engine derived it (a
    :class:`~depgraph.derivation.partition.Partition` and its graph, or the Spark engine's): the summary (same rows
    and groups), the graph's name, the constraint, the recommended resampling and the warnings (ids truncated to
    :data:`WARNING_ID_LIMIT`, counts exact)."""
    return {
        "summary": Summary(n_samples=partition.n_samples, **partition.shape._asdict()),
        "graph_name": graph.name,
        "constraint": Constraint(
            mode=partition.mode,
            strategy=partition.strategy,
            relations=list(partition.relations),
            via=list(partition.via),
            priority=list(partition.priority),
            parameters=portable_parameters(partition.parameters),
            overrides={k: v for k, v in graph.overrides.items() if v},
            subset=subset,
        ),
        "recommended_resampling": recommended_resampling(partition.mode, partition.strategy),
        "warnings": [
            SpecWarning(code=w.code, severity=w.severity, message=w.message, count=int(w.count or 0),
                        ids=list(w.ids[:WARNING_ID_LIMIT]))
            for w in partition.warnings
        ],
    }  # fmt: skip


@dataclass(frozen=True)
class SampleIndex:
    """A spec's sample ids in row order, and the rows ids name (:meth:`SplitSpec.positions`): what finds a sample in
    a spec, whichever engine holds the spec (the Spark engine collects a spec's ids into one to read an assignment
    made elsewhere)."""

    sample_ids: np.ndarray

    @property
    def n_samples(self) -> int:
        return len(self.sample_ids)

    def positions(self, ids: Any, what: str = "ids", *, skip_missing: bool = False) -> np.ndarray:
        """See :meth:`SplitSpec.positions`."""
        keys = row_keys(in_order(ids, what))
        positions = pd.Index(self.sample_ids).get_indexer(keys)
        unknown_rows = positions < 0
        if skip_missing:
            unknown_rows &= pd.notna(keys)
        if unknown_rows.any():
            rows = keys[unknown_rows]
            unknown = ["(missing)" if k is None else k for k in pd.unique(rows)]
            raise DepgraphError(
                "reference",
                f"{what}: {len(rows)} row(s) name samples not in the spec: {describe_ids(unknown)}",
                ids=unknown[:50],
                n_ids=len(unknown),
                rows=len(rows),
            )
        return positions


class SplitSpec(GroupedSamples, _Model):
    """A split spec in memory. ``samples`` is a pandas frame of equal-length columns.

    Every way of making one (:meth:`from_partition`, :meth:`build`, :meth:`replace`, :meth:`with_folds`,
    :func:`read_spec`) checks what a reader checks: a spec in memory never holds what its file could not.
    """

    model_config = ConfigDict(extra="forbid", frozen=True, arbitrary_types_allowed=True, strict=True)

    format: Literal[SPEC_FORMAT] = SPEC_FORMAT  # type: ignore[valid-type]
    format_version: str = SPEC_FORMAT_VERSION
    created_at: str
    generator: Generator
    digest: str | None = None
    graph_name: str | None = None
    constraint: Constraint
    recommended_resampling: ResamplingPlan
    warnings: list[SpecWarning] = Field(default_factory=list)
    summary: Summary
    pseudonymization: Pseudonymization | None = None
    signature: Signature | None = None
    provenance: Provenance | None = None
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
        cls,
        partition: Partition,
        graph: StudyGraph,
        attributes: Sequence[str] | str | None = None,
        provenance: Provenance | None = None,
    ) -> SplitSpec:
        """The spec of a partition, with block, time and stratum columns looked up in ``graph``.

        ``attributes`` carries sample attributes of the graph (other metadata
        columns, such as sex or age band) into the spec, so fold schemes can
        balance on them; ``"all"`` carries every one. ``provenance`` records
        what the spec was made from (a study run's).
        """
        if provenance is not None:
            instance(provenance, Provenance, "from_partition: the provenance")
        instance(partition, Partition, "from_partition: the partition")
        instance(graph, StudyGraph, "from_partition: the graph")
        if attributes is not None and attributes != "all":
            attributes = names(attributes, "attributes")  # one name, not its characters ("all": every one)
        samples = sample_columns(partition, graph)
        if attributes:
            samples = with_attributes(samples, graph, attributes)
        subset = partition.n_samples < graph.count(NodeType.SAMPLE)
        fields = partition_fields(partition, graph, subset)
        return cls._assemble(samples, {**fields, "provenance": provenance}, trusted=True)

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
        fields.setdefault("created_at", now_utc())
        if "generator" not in fields:
            fields["generator"] = Generator.current()
        samples = samples.reset_index(drop=True)
        folds = fields.pop("folds", None)
        if folds is not None:
            instance(folds, FoldPlan, "folds")
        groups = None
        if not trusted:
            check_ids(samples, "spec")
            check_columns(samples, "spec")
            samples, folds = _in_sample_order(samples, folds, "spec")
            groups = Groups.of(samples, "spec")
            if len(samples) == 0:
                raise DepgraphError("empty_input", "a spec needs at least one sample")
            if "summary" not in fields:
                fields["summary"] = Summary(**groups.shape())
        spec = cls(samples=samples, **fields)  # every field validated: a wrong one is invalid_argument, named
        check_statements(
            spec.constraint,
            spec.recommended_resampling,
            spec.warnings,
            text_array(samples["group_id"]),
            "spec",
            "invalid_argument",
        )
        if groups is not None:
            groups.check_summary(spec.summary.model_dump(), "spec", "invalid_argument")
            spec._grouped = (samples, groups)
        if spec.pseudonymization is not None:
            pseudonyms = spec.pseudonymization
            check_pseudonyms(samples, pseudonyms.columns, pseudonyms.hex_digits, "spec", "invalid_argument")
        if folds is not None:
            check_splits(folds.splits, len(samples), "folds", "invalid_argument")
            check_fold_content(folds, spec.grouped(), spec.samples["sample_id"], "folds")
            check_plan(folds, samples, "folds", "invalid_argument")
            spec = spec.model_copy(update={"folds": folds})
        check_plan_warnings(folds, spec.warnings, text_array(samples["sample_id"]), "spec", "invalid_argument")
        spec = spec.model_copy(update={"digest": spec.compute_digest()})
        _check_envelope(spec)
        return spec

    def with_folds(self, folds: FoldPlan | None, findings: Sequence[SpecWarning] = ()) -> SplitSpec:
        """The same spec carrying ``folds`` (digest recomputed, any signature dropped), and the warnings its
        planning made (``findings``) in place of those of the plan it replaces.

        Every split must test at least one sample (``too_few_groups``: the groups did
        not fill it) and keep each group on one side (``invalid_argument``).
        """
        if folds is not None:
            instance(folds, FoldPlan, "folds")
            check_splits(folds.splits, self.n_samples, "folds", "invalid_argument")
            check_fold_content(folds, self.grouped(), self.samples["sample_id"], "folds")
            check_plan(folds, self.samples, "folds", "invalid_argument")
        kept = [w for w in self.warnings if w.code not in PLAN_WARNING_CODES]
        found = [instance(w, SpecWarning, "findings") for w in findings]
        check_plan_warnings(folds, found, text_array(self.samples["sample_id"]), "folds", "invalid_argument")
        update = {"folds": folds, "warnings": kept + found, "created_at": now_utc(), "signature": None}
        updated = self.model_copy(update=update)
        updated = updated.model_copy(update={"digest": updated.compute_digest()})
        _check_envelope(updated)
        return updated

    def with_provenance(self, provenance: Provenance | None) -> SplitSpec:
        """The same spec recording what it was made from (digest recomputed, any signature dropped)."""
        if provenance is not None:
            instance(provenance, Provenance, "provenance")
        updated = self.model_copy(update={"provenance": provenance, "signature": None})
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

    def with_own_digest(self) -> SplitSpec:
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
        signature = None if self.signature is None else (self.signature.key_fingerprint, self.signature.value)
        verify_signature(signature, self.digest or "", check_key(key, "the verifying key"), source)

    # ---- reading the content ----------------------------------------------------
    def groups(self) -> dict[str, str]:
        return dict(zip(self.sample_ids.tolist(), self.group_ids.tolist(), strict=True))

    def positions(self, ids: Any, what: str = "ids", *, skip_missing: bool = False) -> np.ndarray:
        """The spec position (row) of the sample each of ``ids`` names, in their order; several rows may name
        one sample. The one way depgraph finds a sample in a spec (every adapter and the exposure audit use it).

        ``ids`` is one id per row (a list, array or Series; never one string or a set): text matched exactly,
        numbers as ingest reads them (:func:`~depgraph.common.identifiers.row_keys`: ``1``, ``1.0`` and ``"1"``
        all name ``"1"``). An id the spec lacks is a ``reference`` error naming the first of them (details:
        ``ids``, at most 50 of them, ``n_ids`` distinct, ``rows`` naming them); so is a missing id, unless
        ``skip_missing``, which gives it position -1.

        >>> spec = SplitSpec.build(pd.DataFrame({"sample_id": ["1", "2", "S3"], "group_id": ["a", "a", "b"]}),
        ...                        constraint=Constraint(mode="subject"), recommended_resampling="grouped_cv")
        >>> spec.positions(["S3", 1.0, 2]).tolist()
        [2, 0, 1]
        >>> spec.positions(["S3", "S4"])
        Traceback (most recent call last):
        ...
        depgraph.errors.DepgraphError: [reference] ids: 1 row(s) name samples not in the spec: S4
        """
        return SampleIndex(self.sample_ids).positions(ids, what, skip_missing=skip_missing)

    def require_folds(self, what: str = "the spec") -> FoldPlan:
        """The fold plan the spec carries; ``invalid_argument`` when it carries none (``what`` says who needs it).

        >>> spec = SplitSpec.build(pd.DataFrame({"sample_id": ["S1"], "group_id": ["a"]}),
        ...                        constraint=Constraint(mode="subject"), recommended_resampling="grouped_cv")
        >>> spec.require_folds()
        Traceback (most recent call last):
        ...
        depgraph.errors.DepgraphError: [invalid_argument] the spec carries no folds: assign folds first (depgraph folds)
        """
        if self.folds is None:
            raise DepgraphError("invalid_argument", f"{what} carries no folds: assign folds first (depgraph folds)")
        return self.folds

    def group_codes(self) -> np.ndarray:
        """One integer group code per sample (int64, in spec order), numbering the groups 0..G-1 in sorted
        group-id order: what scikit-learn's group splitters and samplers take.

        >>> SplitSpec.build(pd.DataFrame({"sample_id": ["s1", "s2", "s3"], "group_id": ["g2", "g1", "g2"]}),
        ...                 constraint=Constraint(mode="subject"), recommended_resampling="grouped_cv").group_codes()
        array([1, 0, 1])
        """
        codes, _ = pd.factorize(self.samples["group_id"], sort=True)
        return codes.astype(np.int64, copy=False)

    def grouped(self, group_ids: pa.Array | None = None) -> Groups:
        """The samples' groups (codes, ids, sizes), counted once per samples frame; a reader passes the group ids
        it already holds as checked Arrow text (``group_ids``), which are counted without Python strings."""
        if group_ids is not None:
            self._grouped = (self.samples, Groups.of_text(group_ids))
        elif self._grouped is None or self._grouped[0] is not self.samples:
            self._grouped = (self.samples, Groups.of(self.samples, "spec"))
        return self._grouped[1]

    # ---- identity: the digest of the canonical content --------------------------------------------------------
    def compute_digest(self) -> str:
        """``sha256:<hex>`` of the canonical content (see :func:`~depgraph.spec.digest.canonical_bytes`)."""
        doc = self.envelope()
        if self.folds is not None:
            doc["folds"] = self.folds.to_json_dict()
        return spec_digest(doc, self.column_json())

    def envelope(self) -> dict[str, Any]:
        """Every field but the sample columns and the folds, as JSON values (absent optional blocks left out)."""
        doc = self.model_dump(mode="json")
        for optional in ("pseudonymization", "signature", "provenance"):
            if doc.get(optional) is None:
                doc.pop(optional, None)
        return doc

    def cache_column_json(self, columns: dict[str, bytes]) -> None:
        """Keep ``columns`` (each sample column as compact JSON, spelt as :func:`~depgraph.spec.columns.column_bytes`
        spells it) as this spec's encoding, which its digest and files then reuse: what a columnar reader has just
        spelt to check the digest. Ignored unless it names exactly the spec's columns."""
        if set(columns) == set(self.samples.columns):
            self._encoded = (self.samples, dict(columns))

    def column_json(self) -> dict[str, bytes]:
        """Each sample column as compact JSON (what the digest and the JSON form spell), encoded once per samples
        frame."""
        if self._encoded is None or self._encoded[0] is not self.samples:
            columns = {c: column_bytes(self.samples[c]) for c in self.samples.columns}
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


def now_utc() -> str:
    """A spec's ``created_at``: now, in UTC, to the second (either engine writes it so)."""
    return _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds")


def summarise(samples: pd.DataFrame) -> Summary:
    """n_samples, n_groups, the largest group (the smallest id among equals)
    and the number of single-sample groups.

    >>> summarise(pd.DataFrame({"group_id": ["b", "a", "b", "a", "c"]})).largest_group
    'a'
    """
    return Summary(n_samples=len(samples), **group_shape(samples["group_id"].to_numpy(dtype=object))._asdict())


def _check_envelope(spec: SplitSpec) -> None:
    """What a reader checks of a spec's envelope (its JSON Schema), on a spec made in memory
    (``invalid_argument``): a file depgraph writes is one depgraph reads."""
    doc = spec.envelope()
    doc["samples"] = {c: [] for c in spec.samples.columns}
    if spec.folds is not None:
        plan = spec.folds.model_dump(mode="json")
        plan["splits"] = [{**split, "test": [], "excluded": []} for split in plan["splits"]]
        doc["folds"] = plan
    problem = envelope_problem(doc, "split-spec")
    if problem is not None:
        raise DepgraphError("invalid_argument", f"spec: {problem}")


def _in_sample_order(samples: pd.DataFrame, folds: FoldPlan | None, where: str) -> tuple[pd.DataFrame, FoldPlan | None]:
    """The rows in sample-id order (byte order), fold positions following their samples; repeated
    sample ids are a ``duplicate_id`` error."""
    order = sample_order(samples, where)
    if order is None:
        return samples, folds
    samples = samples.iloc[order].reset_index(drop=True)
    if folds is None:
        return samples, folds
    moved = np.empty(len(order), dtype=np.int64)
    moved[order] = np.arange(len(order))  # old row -> new row
    splits = [FoldSplit.of(s.repeat, s.fold, moved[s.test], moved[s.excluded], len(order)) for s in folds.splits]
    return samples, folds.model_copy(update={"splits": splits})
