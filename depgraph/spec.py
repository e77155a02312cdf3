"""The split spec: the JSON contract other teams, languages and frameworks read.

A spec holds an envelope (format, version, creation time, generator), the
constraint that produced it (mode, strategy, relations, parameters), the
recommended resampling, coded warnings, a summary, and ``samples``: equal-length
columns (``sample_id``, ``group_id`` and, where the graph knows them,
``batch_group``, ``study_group``, ``site_group``, ``region_group``,
``platform_group``, ``assay_group``, ``timepoint_id``, ``time_index``,
``order_rank``). The envelope is a pydantic model; the samples stay columnar
(a pandas frame in memory, arrays in JSON), never one object per sample.

>>> import pandas as pd
>>> from depgraph import derive, from_metadata
>>> g = from_metadata(pd.DataFrame({"sample_id": ["S1", "S2"], "subject_id": ["P1", "P1"], "batch_id": ["B1", "B2"]}))
>>> spec = SplitSpec.from_partition(derive(g, "subject"), g)
>>> spec.samples.columns.tolist()
['sample_id', 'group_id', 'batch_group']
>>> spec.recommended_resampling
'grouped_cv'
"""

from __future__ import annotations

import datetime as _dt
import os
from importlib import metadata as _metadata
from typing import Any, Literal

import numpy as np
import orjson
import pandas as pd
from pydantic import BaseModel, ConfigDict, Field

from depgraph.derive import Partition, _time_columns, direct_relation
from depgraph.errors import DepgraphError, describe_ids
from depgraph.files import atomic_write_bytes, read_json
from depgraph.graph import StudyGraph
from depgraph.vocab import MODE, NodeType

SPEC_FORMAT = "depgraph.split-spec"
SPEC_FORMAT_VERSION = "1.0.0"

#: Block columns a spec carries when the graph declares the relation.
BLOCK_MODES: tuple[str, ...] = ("batch", "study", "site", "region", "platform", "assay")
#: Columns a spec's ``samples`` may hold, in order.
SAMPLE_COLUMNS: tuple[str, ...] = (
    "sample_id",
    "group_id",
    *(f"{m}_group" for m in BLOCK_MODES),
    "timepoint_id",
    "time_index",
    "order_rank",
    "stratum",
)
#: At most this many ids are kept per warning in a spec (the count is exact).
WARNING_ID_LIMIT = 50

_DEPENDENCIES = ("numpy", "pandas", "scipy", "networkx", "pydantic", "jsonschema", "orjson")


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class Generator(_Model):
    """Who wrote the spec: package and dependency versions."""

    package: str = "depgraph"
    version: str
    dependencies: dict[str, str] = Field(default_factory=dict)

    @classmethod
    def current(cls) -> Generator:
        from depgraph import __version__

        deps = {}
        for name in _DEPENDENCIES:
            try:
                deps[name] = _metadata.version(name)
            except _metadata.PackageNotFoundError:  # pragma: no cover - all are dependencies
                continue
        return cls(version=__version__, dependencies=deps)


class Constraint(_Model):
    """How the groups were derived."""

    mode: str
    strategy: str | None = None
    relations: list[str] = Field(default_factory=list)
    via: list[str] = Field(default_factory=list)
    priority: list[str] = Field(default_factory=list)
    parameters: dict[str, Any] = Field(default_factory=dict)
    overrides: dict[str, Any] = Field(default_factory=dict)
    subset: bool = False


class SpecWarning(_Model):
    """A coded warning carried by the spec (ids truncated, count exact)."""

    code: str
    severity: Literal["error", "warning", "advisory"] = "warning"
    message: str
    count: int = 0
    ids: list[str] = Field(default_factory=list)


class Summary(_Model):
    n_samples: int
    n_groups: int
    largest_group: str | None
    largest_group_size: int
    singletons: int


class SplitSpec(_Model):
    """A split spec in memory. ``samples`` is a pandas frame of equal-length columns."""

    model_config = ConfigDict(extra="forbid", frozen=True, arbitrary_types_allowed=True)

    format: Literal["depgraph.split-spec"] = SPEC_FORMAT
    format_version: str = SPEC_FORMAT_VERSION
    created_at: str
    generator: Generator
    graph_name: str | None = None
    constraint: Constraint
    recommended_resampling: Literal[
        "grouped_cv", "blocked_cv", "leave_one_group_out", "ordered_split", "custom_grouped_cv"
    ]
    warnings: list[SpecWarning] = Field(default_factory=list)
    summary: Summary
    samples: pd.DataFrame = Field(exclude=True)

    @classmethod
    def from_partition(cls, partition: Partition, graph: StudyGraph) -> SplitSpec:
        """The spec of a partition, with block and time columns looked up in ``graph``."""
        samples = _sample_columns(partition, graph)
        summary = partition.summary()
        return cls(
            created_at=_dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds"),
            generator=Generator.current(),
            graph_name=graph.name,
            constraint=Constraint(
                mode=partition.mode,
                strategy=partition.strategy,
                relations=list(partition.relations),
                via=list(partition.via),
                priority=list(partition.priority),
                parameters=_jsonable(partition.parameters),
                overrides={k: v for k, v in graph.overrides.items() if v},
                subset=partition.n_samples < graph.count(NodeType.SAMPLE),
            ),
            recommended_resampling=MODE[partition.mode].recommended_resampling,
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
            summary=Summary(**summary),
            samples=samples,
        )

    @property
    def n_samples(self) -> int:
        return len(self.samples)

    def groups(self) -> dict[str, str]:
        return dict(zip(self.samples["sample_id"].tolist(), self.samples["group_id"].tolist(), strict=True))

    def to_json_dict(self) -> dict[str, Any]:
        doc = self.model_dump(mode="json")
        doc["samples"] = {c: _column_to_json(self.samples[c]) for c in self.samples.columns}
        return doc

    def to_json_bytes(self) -> bytes:
        return orjson.dumps(self.to_json_dict(), option=orjson.OPT_INDENT_2)


def _sample_columns(partition: Partition, graph: StudyGraph) -> pd.DataFrame:
    frame = partition.samples[["sample_id", "group_id"]].copy()
    positions = graph.locate(NodeType.SAMPLE, frame["sample_id"])
    keys = graph.nodes["key"].to_numpy(dtype=object)
    start, _ = graph.type_range(NodeType.SAMPLE)
    for mode in BLOCK_MODES:
        rel = direct_relation(mode)
        if graph.has_relation(rel.name):
            mine = graph.sample_targets(rel.name)[positions - start]
            frame[f"{mode}_group"] = np.where(mine >= 0, keys[np.maximum(mine, 0)], None)
    if "timepoint_id" in partition.samples.columns:
        for c in ("timepoint_id", "time_index", "order_rank"):
            frame[c] = partition.samples[c].to_numpy()
    elif graph.has_relation("sample_collected_at_timepoint"):
        target = graph.sample_targets("sample_collected_at_timepoint")[positions - start]
        try:
            time_cols, _, _ = _time_columns(graph, target)
        except DepgraphError:
            time_cols = None  # inconsistent time order: time mode and validation report it
        if time_cols is not None:
            for c in ("timepoint_id", "time_index", "order_rank"):
                frame[c] = time_cols[c].to_numpy()
    return frame.reset_index(drop=True)


def _column_to_json(series: pd.Series) -> list[Any]:
    if pd.api.types.is_float_dtype(series.dtype):
        values = series.to_numpy(dtype=np.float64)
        return [None if v != v else v for v in values.tolist()]
    return series.astype(object).where(series.notna(), None).tolist()


def _jsonable(value: Any) -> Any:
    return orjson.loads(orjson.dumps(value, default=str, option=orjson.OPT_SERIALIZE_NUMPY))


def write_spec(spec: SplitSpec, path: str | os.PathLike[str]) -> None:
    """Write ``spec`` as JSON to ``path`` atomically."""
    atomic_write_bytes(path, spec.to_json_bytes())


def read_spec(path: str | os.PathLike[str]) -> SplitSpec:
    """Read a spec written by :func:`write_spec`, checking its shape."""
    doc = read_json(path, "spec file")
    return spec_from_document(doc, f"spec file {str(path)!r}")


def spec_from_document(doc: Any, source: str = "spec") -> SplitSpec:
    if not isinstance(doc, dict) or doc.get("format") != SPEC_FORMAT:
        raise DepgraphError("schema", f"{source}: not a depgraph split spec ('format' must be {SPEC_FORMAT!r})")
    samples_doc = doc.get("samples")
    if not isinstance(samples_doc, dict) or "sample_id" not in samples_doc or "group_id" not in samples_doc:
        raise DepgraphError("schema", f"{source}: 'samples' must hold sample_id and group_id columns")
    lengths = {c: len(v) if isinstance(v, list) else -1 for c, v in samples_doc.items()}
    if len(set(lengths.values())) != 1 or -1 in lengths.values():
        raise DepgraphError("schema", f"{source}: samples columns must be lists of equal length, found {lengths}")
    samples = pd.DataFrame({c: pd.Series(v, dtype=_dtype_for(c)) for c, v in samples_doc.items()})
    dup = samples["sample_id"].duplicated()
    if dup.any():
        ids = samples.loc[dup, "sample_id"].unique().tolist()
        raise DepgraphError("duplicate_id", f"{source}: sample ids repeat: {describe_ids(ids)}", ids=ids)
    envelope = {k: v for k, v in doc.items() if k != "samples"}
    try:
        return SplitSpec(**envelope, samples=samples)
    except Exception as exc:  # pydantic.ValidationError: name the first problem
        first = str(exc).splitlines()[1:3]
        raise DepgraphError("schema", f"{source}: {' '.join(s.strip() for s in first)}") from exc


def _dtype_for(column: str) -> Any:
    if column == "time_index":
        return np.float64
    if column == "order_rank":
        return "Int64"
    return object
