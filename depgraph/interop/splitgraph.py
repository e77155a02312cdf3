"""splitGraph's JSON files, in both directions.

splitGraph (R) writes two objects with ``schema_version`` 0.1.0: a
``dependency_graph`` (node and edge tables, one JSON object per row) and a
``split_spec`` (``sample_data`` rows plus resampling hints). depgraph reads
both as written by splitGraph 0.2.0 (see ``tests/data/conformance/splitgraph_json``)
and by later releases (site, region, platform and assay groups, strata,
kinship / adjacency / duplicate relations), and writes files splitGraph's
``read_split_spec()`` and ``read_dependency_graph()`` load unchanged, so R
teams using splitGraph or bioLeak and Python teams exchange one file.

Mapping choices:

* Group labels are kept as they are on import. On export, depgraph's
  order-independent component labels (``composite:S1``, ``relatedness:S1``)
  become splitGraph's positional ones (``component_<k>``,
  ``relatedness:component_<k>``), numbered by first appearance in sample
  order; the partition is unchanged.
* splitGraph's warnings are sentences; on import they become coded
  ``SpecWarning`` s (``unlinked_samples``, ``mostly_singletons``, else
  ``splitgraph_warning``) and on export coded warnings become sentences again.
* ``splitgraph_version="0.2.0"`` writes a graph for splitGraph 0.2.0, whose
  vocabulary lacks Site, Region and Platform nodes and the site, region,
  platform, kinship, adjacency and duplicate relations: those nodes and
  edges are left out and listed in the returned note. The default, ``0.4.0``,
  has depgraph's whole vocabulary.
"""

from __future__ import annotations

import os
import re
from typing import Any

import numpy as np
import orjson
import pandas as pd

from depgraph.errors import DepgraphError, describe_ids
from depgraph.files import atomic_write_bytes, read_json
from depgraph.graph import EdgePiece, NodePiece, StudyGraph, assemble
from depgraph.spec import BLOCK_MODES, Constraint, SpecWarning, SplitSpec
from depgraph.vocab import MODE, NODE_TYPES, RELATION, RELATIONS, NodeType, recommended_resampling

SCHEMA_VERSION = "0.1.0"
SPLITGRAPH_VERSIONS = ("0.2.0", "0.4.0")
_NEW_IN_03 = {NodeType.SITE, NodeType.REGION}
_NEW_IN_04 = {NodeType.PLATFORM}
_RELATIONS_AFTER_02 = {
    "sample_collected_at_site",
    "sample_located_in_region",
    "sample_run_on_platform",
    "subject_related_to",
    "sample_adjacent_to",
    "sample_duplicate_of",
}
_COMPONENT_MODES = {"relatedness", "spatial", "duplicate"}
_PLAIN_PROVENANCE = {"metadata", "splitgraph"}  # not written to splitGraph edge attrs
_ROW_COLUMNS = (
    "group_id",
    "batch_group",
    "study_group",
    "site_group",
    "region_group",
    "platform_group",
    "assay_group",
    "timepoint_id",
    "time_index",
    "order_rank",
    "stratum",
)
_TYPE_TO_MODE = {"Subject": "subject", "Batch": "batch", "Study": "study", "Timepoint": "time", "Site": "site",
                 "Region": "region", "Platform": "platform", "Assay": "assay"}  # fmt: skip
_UNLINKED = re.compile(r"^Samples missing (\w+) assignments were retained as singleton groups: (.*)$")


# --------------------------------------------------------------------------- reading
def read_splitgraph(path: str | os.PathLike[str]) -> SplitSpec | StudyGraph:
    """A splitGraph ``split_spec`` as a SplitSpec, or a ``dependency_graph`` as a StudyGraph."""
    doc = read_json(path, "splitGraph file")
    return from_splitgraph(doc, f"splitGraph file {str(path)!r}")


def from_splitgraph(doc: Any, source: str = "splitGraph document") -> SplitSpec | StudyGraph:
    kind = doc.get("splitGraph_object") if isinstance(doc, dict) else None
    if kind == "split_spec":
        return spec_from_splitgraph(doc, source)
    if kind == "dependency_graph":
        return graph_from_splitgraph(doc, source)
    raise DepgraphError(
        "schema",
        f"{source}: not a splitGraph file ('splitGraph_object' must be 'split_spec' or 'dependency_graph', "
        f"found {kind!r})",
    )


def _as_list(value: Any) -> list[Any]:
    """R's auto_unbox writes one-element vectors as scalars; read both."""
    if value is None:
        return []
    return list(value) if isinstance(value, list) else [value]


def spec_from_splitgraph(doc: dict[str, Any], source: str = "splitGraph split_spec") -> SplitSpec:
    """A SplitSpec from splitGraph's ``split_spec`` JSON (labels kept as written)."""
    rows = doc.get("sample_data")
    if not isinstance(rows, list) or not rows:
        raise DepgraphError("schema", f"{source}: sample_data must be a non-empty list of rows")
    if not all(isinstance(r, dict) for r in rows):
        raise DepgraphError("schema", f"{source}: every sample_data row must be an object")
    frame = pd.DataFrame(rows)
    for needed in ("sample_id",):
        if needed not in frame.columns:
            raise DepgraphError("schema", f"{source}: sample_data rows have no {needed}")
    if "group_id" not in frame.columns:
        if "primary_group" not in frame.columns:
            raise DepgraphError("schema", f"{source}: sample_data rows have neither group_id nor primary_group")
        frame["group_id"] = frame["primary_group"]
    samples = pd.DataFrame({"sample_id": frame["sample_id"].map(_text)})
    for column in _ROW_COLUMNS:
        if column not in frame.columns or frame[column].isna().all():
            continue
        if column == "time_index":
            samples[column] = pd.to_numeric(frame[column], errors="coerce").astype(np.float64)
        elif column == "order_rank":
            samples[column] = pd.to_numeric(frame[column], errors="coerce").astype("Int64")
        else:
            samples[column] = frame[column].map(_text).astype(object)
    for column in ("sample_id", "group_id"):
        missing = samples[column].isna().to_numpy()
        if missing.any():
            raise DepgraphError(
                "schema", f"{source}: sample_data rows {describe_ids(np.flatnonzero(missing) + 1)} have no {column}"
            )
    meta = doc.get("metadata") or {}
    mode = str(doc.get("constraint_mode") or meta.get("source_mode") or "subject")
    if mode not in MODE:
        raise DepgraphError("schema", f"{source}: constraint_mode {mode!r} is not a mode depgraph knows")
    strategy = doc.get("constraint_strategy") or meta.get("source_strategy")
    strategy = strategy if mode == "composite" else None
    via = [_TYPE_TO_MODE.get(v, str(v).lower()) for v in _as_list(meta.get("via"))]
    parameters = {
        "splitgraph": {
            k: doc.get(k)
            for k in ("schema_version", "group_var", "block_vars", "time_var", "ordering_required")
            if k in doc
        }
    }
    if meta.get("dataset_name") is not None:
        parameters["splitgraph"]["dataset_name"] = meta["dataset_name"]
    recommended = doc.get("recommended_resampling") or recommended_resampling(mode, strategy)
    return SplitSpec.build(
        samples=samples,
        graph_name=meta.get("graph_name"),
        constraint=Constraint(
            mode=mode,
            strategy=strategy,
            relations=[str(r) for r in _as_list(meta.get("relations_used")) if str(r) in RELATION],
            via=[v for v in via if v in MODE and v != "composite"],
            priority=[str(p) for p in _as_list(meta.get("priority")) if str(p) in MODE],
            parameters=parameters,
        ),
        recommended_resampling=recommended,
        warnings=[_coded(str(w)) for w in _as_list(meta.get("warnings"))],
    )


def _text(value: Any) -> str | None:
    if value is None or (isinstance(value, float) and np.isnan(value)):
        return None
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return str(value)


def _coded(sentence: str) -> SpecWarning:
    match = _UNLINKED.match(sentence)
    if match:
        ids = [s.strip() for s in match.group(2).split(",") if s.strip()]
        return SpecWarning(code="unlinked_samples", message=sentence, count=len(ids), ids=ids)
    if sentence.startswith("Most strict composite groups are singletons"):
        return SpecWarning(code="mostly_singletons", severity="advisory", message=sentence)
    return SpecWarning(code="splitgraph_warning", message=sentence)


def graph_from_splitgraph(doc: dict[str, Any], source: str = "splitGraph dependency_graph") -> StudyGraph:
    """A StudyGraph from splitGraph's ``dependency_graph`` JSON."""
    nodes = doc.get("nodes") or []
    edges = doc.get("edges") or []
    if not isinstance(nodes, list) or not isinstance(edges, list):
        raise DepgraphError("schema", f"{source}: nodes and edges must be lists")
    types = {t.value: t for t in NODE_TYPES}
    canonical = {r.column for r in RELATIONS if r.column}
    node_rows: dict[NodeType, list[tuple[str, dict[str, Any]]]] = {}
    type_of: dict[str, NodeType] = {}
    for i, node in enumerate(nodes):
        try:
            node_type = types[node["node_type"]]
            key = str(node["node_key"])
            node_id = str(node["node_id"])
        except (KeyError, TypeError):
            raise DepgraphError(
                "schema", f"{source}: nodes[{i}] needs node_id, node_type (one of depgraph's 11) and node_key"
            ) from None
        attrs = node.get("attrs") or {}
        kept = {k: v for k, v in attrs.items() if k not in canonical} if isinstance(attrs, dict) else {}
        node_rows.setdefault(node_type, []).append((key, kept))
        type_of[node_id] = node_type
    node_pieces = []
    for node_type, entries in node_rows.items():
        keys = [k for k, _ in entries]
        attrs = pd.DataFrame([a for _, a in entries]) if any(a for _, a in entries) else None
        node_pieces.append(NodePiece(node_type, keys, attrs))
    by_relation: dict[tuple[str, str], tuple[list[str], list[str], list[float]]] = {}
    for i, edge in enumerate(edges):
        try:
            relation, src, dst = edge["edge_type"], str(edge["from"]), str(edge["to"])
        except (KeyError, TypeError):
            raise DepgraphError("schema", f"{source}: edges[{i}] needs from, to and edge_type") from None
        if relation not in RELATION:
            raise DepgraphError("schema", f"{source}: edges[{i}] has unknown edge_type {relation!r}")
        attrs = edge.get("attrs") or {}
        weight = attrs.get("weight", attrs.get("kinship", attrs.get("distance"))) if isinstance(attrs, dict) else None
        provenance = str(attrs.get("provenance", "splitgraph")) if isinstance(attrs, dict) else "splitgraph"
        lists = by_relation.setdefault((relation, provenance), ([], [], []))
        lists[0].append(src.split(":", 1)[1] if ":" in src else src)
        lists[1].append(dst.split(":", 1)[1] if ":" in dst else dst)
        lists[2].append(np.nan if weight is None else float(weight))
    edge_pieces = []
    for (relation, provenance), (src_keys, dst_keys, weights) in by_relation.items():
        w = np.asarray(weights, dtype=float)
        edge_pieces.append(EdgePiece(relation, src_keys, dst_keys, provenance, None if np.isnan(w).all() else w))
    meta = doc.get("metadata") or {}
    overrides = meta.get("validation_overrides") or {}
    overrides = {k: bool(v) for k, v in overrides.items()} if isinstance(overrides, dict) else {}
    try:
        return assemble(
            node_pieces,
            edge_pieces,
            name=meta.get("graph_name"),
            overrides=overrides,
            history=[{"step": "import_splitgraph", "schema_version": doc.get("schema_version")}],
        )
    except DepgraphError as exc:
        raise DepgraphError(exc.code, f"{source}: {exc.message}", **exc.details) from exc


# --------------------------------------------------------------------------- writing
def spec_to_splitgraph(spec: SplitSpec) -> dict[str, Any]:
    """splitGraph's ``split_spec`` JSON for ``spec`` (component labels made positional)."""
    samples = spec.samples
    mode, strategy = spec.constraint.mode, spec.constraint.strategy
    groups = _positional_labels(samples["group_id"], mode, strategy)
    block_vars = [f"{m}_group" for m in BLOCK_MODES if f"{m}_group" in samples.columns]
    has_rank = "order_rank" in samples.columns and samples["order_rank"].notna().any()
    time_aware = mode == "time" or (strategy == "rule_based" and "time" in spec.constraint.priority)
    rows = []
    columns = {c: _json_values(samples[c]) for c in samples.columns if c not in ("sample_id", "group_id")}
    for i, sample in enumerate(samples["sample_id"].tolist()):
        row: dict[str, Any] = {
            "sample_id": sample,
            "sample_node_id": f"sample:{sample}",
            "group_id": groups[i],
            "primary_group": groups[i],
        }
        for column in ("batch_group", "study_group", "site_group", "region_group", "platform_group", "assay_group"):
            if column in columns:
                row[column] = columns[column][i]
        if mode in BLOCK_MODES and f"{mode}_group" in columns and row.get(f"{mode}_group") is None:
            row[f"{mode}_group"] = f"unlinked_{sample}"  # splitGraph labels the block of an unlinked sample
        for column in ("timepoint_id", "time_index", "order_rank", "stratum"):
            if column in columns:
                row[column] = columns[column][i]
        rows.append(row)
    extra = spec.constraint.parameters.get("splitgraph", {})
    return {
        "splitGraph_object": "split_spec",
        "schema_version": SCHEMA_VERSION,
        "group_var": "group_id",
        "block_vars": block_vars,
        "time_var": "order_rank" if has_rank else None,
        "ordering_required": bool(time_aware and has_rank and samples["order_rank"].notna().all()),
        "constraint_mode": mode,
        "constraint_strategy": strategy or mode,
        "recommended_resampling": spec.recommended_resampling,
        "metadata": {
            "graph_name": spec.graph_name,
            "dataset_name": extra.get("dataset_name"),
            "source_mode": mode,
            "source_strategy": strategy or mode,
            "relations_used": _unboxed(list(spec.constraint.relations)),
            "n_samples": spec.n_samples,
            "n_groups": int(samples["group_id"].nunique()),
            "warnings": _unboxed([_sentence(w, mode) for w in spec.warnings]),
            "enriched_from_graph": True,
        },
        "sample_data": rows,
    }


def _unboxed(values: list[Any]) -> Any:
    """One value as a scalar, as R's jsonlite (auto_unbox) writes it; splitGraph reads both."""
    return values[0] if len(values) == 1 else values


def _positional_labels(groups: pd.Series, mode: str, strategy: str | None) -> list[str]:
    """Component labels as splitGraph writes them: ``[<mode>:]component_<k>`` by first appearance."""
    if not (mode in _COMPONENT_MODES or (mode == "composite" and strategy == "strict")):
        return groups.astype(str).tolist()
    prefix = "" if mode == "composite" else f"{mode}:"
    values = groups.astype(str)
    if values.str.fullmatch(re.escape(prefix) + r"component_\d+").all():
        return values.tolist()  # already positional (imported from splitGraph)
    codes, _ = pd.factorize(values)  # factorize numbers groups by first appearance
    return [f"{prefix}component_{c + 1}" for c in codes]


def _sentence(warning: SpecWarning, mode: str) -> str:
    if warning.code == "unlinked_samples" and mode != "composite":
        what = "timepoint" if mode == "time" else mode
        more = f" and {warning.count - len(warning.ids)} more" if warning.count > len(warning.ids) else ""
        return f"Samples missing {what} assignments were retained as singleton groups: {', '.join(warning.ids)}{more}"
    return warning.message


def _json_values(series: pd.Series) -> list[Any]:
    values = series.astype(object).where(series.notna(), None).tolist()
    return [v.item() if isinstance(v, np.generic) else v for v in values]


def graph_to_splitgraph(graph: StudyGraph, splitgraph_version: str = "0.4.0") -> tuple[dict[str, Any], list[str]]:
    """splitGraph's ``dependency_graph`` JSON for ``graph``, and a note of what
    the target splitGraph version cannot hold (left out)."""
    if splitgraph_version not in SPLITGRAPH_VERSIONS:
        raise DepgraphError(
            "invalid_argument", f"splitgraph_version must be one of {describe_ids(SPLITGRAPH_VERSIONS)}"
        )
    old = splitgraph_version == "0.2.0"
    left_out_types = (_NEW_IN_03 | _NEW_IN_04) if old else set()
    left_out_relations = _RELATIONS_AFTER_02 if old else set()
    notes = []
    keys = graph.key_values
    ids = graph.node_ids.to_numpy(dtype=object)
    sample_attrs = _sample_attrs(graph, left_out_relations)
    nodes = []
    for t in NODE_TYPES:
        start, stop = graph.type_range(t)
        if stop == start:
            continue
        if t in left_out_types:
            notes.append(f"{stop - start} {t.value} node(s)")
            continue
        attr_block = graph.attributes.iloc[start:stop]
        for offset, pos in enumerate(range(start, stop)):
            attrs: dict[str, Any] = {}
            if t == NodeType.SAMPLE:
                attrs.update(sample_attrs[offset])
            for column in attr_block.columns:
                value = attr_block[column].iat[offset]
                if not (value is None or (isinstance(value, float) and np.isnan(value))):
                    attrs[column] = _plain(value)
            nodes.append({"node_id": ids[pos], "node_type": t.value, "node_key": keys[pos], "label": keys[pos],
                          "attrs": attrs})  # fmt: skip
    edges = []
    for rel in graph.relation_counts():
        src, dst, weight = graph.relation_edges(rel)
        if rel in left_out_relations:
            notes.append(f"{len(src)} {rel} edge(s)")
            continue
        block = graph.relations[rel]
        provenance = np.asarray(block.labels, dtype=object)[block.codes()]
        for k, (a, b, w, p) in enumerate(zip(src, dst, weight, provenance, strict=True), start=1):
            attrs = {} if str(p) in _PLAIN_PROVENANCE else {"provenance": str(p)}
            if not np.isnan(w):
                attrs["weight"] = float(w)
            edges.append({"edge_id": f"{rel}:{k}", "from": ids[a], "to": ids[b], "edge_type": rel, "attrs": attrs})
    overrides = {k: v for k, v in graph.overrides.items() if v}
    doc = {
        "splitGraph_object": "dependency_graph",
        "schema_version": SCHEMA_VERSION,
        "metadata": {
            "graph_name": graph.name,
            "dataset_name": None,
            "created_at": pd.Timestamp.now(tz="UTC").strftime("%Y-%m-%dT%H:%M:%S.%f+0000"),
            "schema_version": SCHEMA_VERSION,
            "validation_overrides": overrides if overrides else [],
        },
        "nodes": nodes,
        "edges": edges,
    }
    return doc, notes


def _sample_attrs(graph: StudyGraph, left_out: set[str]) -> list[dict[str, Any]]:
    """splitGraph's sample attributes: the metadata id of each single-target relation."""
    keys = graph.key_values
    n = graph.count(NodeType.SAMPLE)
    attrs: list[dict[str, Any]] = [{} for _ in range(n)]
    for rel in RELATIONS:
        if not rel.single_target or rel.name in left_out or not graph.has_relation(rel.name):
            continue
        target = graph.sample_targets(rel.name)
        values = np.where(target >= 0, keys[np.maximum(target, 0)], None)
        for i, value in enumerate(values.tolist()):
            attrs[i][rel.column] = value
    return attrs


def _plain(value: Any) -> Any:
    if isinstance(value, np.generic):
        value = value.item()
    if isinstance(value, float) and value.is_integer():
        return int(value)
    return value


def _r_json(doc: dict[str, Any]) -> bytes:
    return orjson.dumps(doc, option=orjson.OPT_INDENT_2) + b"\n"


def write_splitgraph_spec(spec: SplitSpec, path: str | os.PathLike[str]) -> None:
    """Write ``spec`` as splitGraph ``split_spec`` JSON, atomically."""
    atomic_write_bytes(path, _r_json(spec_to_splitgraph(spec)))


def write_splitgraph_graph(
    graph: StudyGraph, path: str | os.PathLike[str], splitgraph_version: str = "0.4.0"
) -> list[str]:
    """Write ``graph`` as splitGraph ``dependency_graph`` JSON, atomically; returns what was left out."""
    doc, notes = graph_to_splitgraph(graph, splitgraph_version)
    atomic_write_bytes(path, _r_json(doc))
    return notes
