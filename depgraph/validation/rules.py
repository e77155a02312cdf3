"""Rules over a StudyGraph → ValidationReport.

Each rule is a small vectorised function ``rule(graph, context) -> list[Issue]``
registered in :data:`RULES` with the level it belongs to. The catalogue
covers splitGraph's (structural, semantic and leakage codes, with the same
names) and adds what it misses: partitions that collapse to one group or are
dominated by one group, fewer groups than the folds a caller needs, related
subjects that subject grouping would split, duplicates declared across
subjects, and pairs dropped because they named unknown ids. Ties in
``time_index`` are ties, never an error.

Structural rules run first; when they find errors the graph cannot be read
for meaning and the other rules are skipped. Every code is listed with its
level, severity and meaning in :data:`depgraph.findings.CATALOGUE`, with the
codes derivation reports.

Severities: ``error`` makes the report invalid; ``warning`` is a likely
mistake or leak; ``advisory`` is worth knowing. Issue ids are node ids
(``subject:P1``); ``count`` is the number of entities concerned (splitGraph's
number of issues for that code).

>>> import pandas as pd
>>> from depgraph import from_metadata
>>> g = from_metadata(pd.DataFrame({"sample_id": ["S1", "S2"], "subject_id": ["P1", "P1"]}))
>>> report = validate(g)
>>> report.valid, report.counts()["repeated_subject_samples"]
(True, 1)
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import orjson
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc

from depgraph.common.arguments import instance, names, whole_number
from depgraph.common.arrays import present
from depgraph.common.display import html_block, text_table
from depgraph.common.identifiers import formula_like
from depgraph.derivation.groups import group_sizes
from depgraph.derivation.shapes import collapse_finding
from depgraph.derivation.timeorder import time_order_problems
from depgraph.errors import DepgraphError, describe_ids
from depgraph.findings import CATALOGUE, Issue, finding, findings_table
from depgraph.graph.model import StudyGraph
from depgraph.ingest.coverage import absent_message, filtered_message
from depgraph.ingest.metadata import no_grouping_message, unmapped_role_message
from depgraph.vocab import (
    CANONICAL_COLUMNS,
    DEPENDENCY_MODES,
    LEVELS,
    MODE,
    NODE_TYPES,
    RELATION,
    RELATIONS,
    SEVERITIES,
    NodeType,
    RelationName,
    canonical_name,
    declared_modes,
    relation_names,
)

#: A batch holding at least max(3, ceil(share · samples)) samples is "heavily reused" (splitGraph's rule).
HEAVY_BATCH_SHARE = 0.5


@dataclass(frozen=True)
class ValidationReport:
    """The findings of :func:`validate`. ``valid`` is False iff any error."""

    issues: tuple[Issue, ...]
    metrics: dict[str, int] = field(default_factory=dict)
    name: str | None = None
    valid: bool = True  # computed over all findings, before any level/severity filter

    def of_severity(self, severity: str) -> tuple[Issue, ...]:
        return tuple(i for i in self.issues if i.severity == severity)

    @property
    def errors(self) -> tuple[Issue, ...]:
        return self.of_severity("error")

    @property
    def warnings(self) -> tuple[Issue, ...]:
        return self.of_severity("warning")

    @property
    def advisories(self) -> tuple[Issue, ...]:
        return self.of_severity("advisory")

    def codes(self) -> list[str]:
        return sorted({i.code for i in self.issues})

    def counts(self) -> dict[str, int]:
        """Entities concerned per code (issues of one code are added up)."""
        out: dict[str, int] = {}
        for issue in self.issues:
            out[issue.code] = out.get(issue.code, 0) + int(issue.count or 0)
        return dict(sorted(out.items()))

    def to_dict(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "valid": self.valid,
            "metrics": dict(self.metrics),
            "counts": self.counts(),
            "issues": [i.to_dict() for i in self.issues],
        }

    def to_json_bytes(self) -> bytes:
        """:meth:`to_dict` as JSON, indented, each finding's ``ids`` on one line (its last key): a finding about a
        million ids is one line of the report, not a million (``depgraph validate --json``)."""
        doc = self.to_dict()
        issues = []
        for issue in doc.pop("issues"):
            ids = orjson.dumps(issue.pop("ids"))
            fields = orjson.dumps(issue, option=orjson.OPT_INDENT_2)[:-2]  # without its closing "\n}"
            issues.append(b"\n    " + (fields + b',\n  "ids": ' + ids + b"\n}").replace(b"\n", b"\n    "))
        head = orjson.dumps(doc, option=orjson.OPT_INDENT_2)[:-2]
        return head + b',\n  "issues": [' + b",".join(issues) + (b"\n  ]\n}" if issues else b"]\n}")

    def _headline(self) -> str:
        return (
            f"ValidationReport(valid={self.valid}, {len(self.errors)} errors, {len(self.warnings)} warnings, "
            f"{len(self.advisories)} advisories)"
        )

    def table(self) -> pd.DataFrame:
        """One row per finding: severity, level, code, count, and its first ids or, for a finding about no
        ids, its message (what the repr and the notebook table show)."""
        return findings_table(self.issues)

    def __repr__(self) -> str:
        """The headline, then one line per finding with its first ids (bounded whatever the cohort's size)."""
        return "\n".join(filter(None, [self._headline(), text_table(self.table())]))

    def _repr_html_(self) -> str:
        name = f"{self.name}: " if self.name else ""
        return html_block(name + self._headline(), tables=[("", self.table())])


@dataclass(frozen=True)
class _Context:
    """What rules share: cheap lookups computed once per validation."""

    graph: StudyGraph
    n_splits: int | None
    modes: tuple[str, ...] | None
    _id_blocks: dict[int, np.ndarray] = field(default_factory=dict)  # node ids of a whole type, by its start

    def ids(self, positions: np.ndarray) -> tuple[str, ...]:
        """Node ids (``subject:P1``) of some node positions, built in Arrow. When a
        finding is about much of one node type (400,000 subjects with several
        samples, and again those related), that type's ids are built once and shared."""
        positions = np.asarray(positions, dtype=np.int64)
        codes = self.graph.nodes["type"].cat.codes.to_numpy()
        if len(positions) > 10_000 and (codes[positions] == codes[positions[0]]).all():
            start, stop = self.graph.type_range(NODE_TYPES[codes[positions[0]]])
            if len(positions) > (stop - start) // 10:
                return tuple(self._type_ids(start, stop)[positions - start])
        return tuple(self._joined_ids(positions))

    def _type_ids(self, start: int, stop: int) -> np.ndarray:
        cached = self._id_blocks.get(start)
        if cached is None:
            cached = self._id_blocks[start] = self._joined_ids(np.arange(start, stop, dtype=np.int64))
        return cached

    def _joined_ids(self, positions: np.ndarray) -> np.ndarray:
        at = pa.array(positions)
        types = pa.array(self.graph.nodes["type"].cat.codes.to_numpy()).take(at)
        prefixes = pa.array([f"{t.prefix}:" for t in NODE_TYPES]).take(types)
        joined = pc.binary_join_element_wise(prefixes, self.graph.key_array.take(at), "")
        return joined.to_numpy(zero_copy_only=False)

    def named(self, positions: np.ndarray, limit: int = 5) -> str:
        """The first keys of some node positions and how many more, for a message
        (only the keys shown become Python strings)."""
        shown = self.graph.key_array.take(pa.array(np.asarray(positions[:limit], dtype=np.int64))).to_pylist()
        return describe_ids(shown, limit, total=len(positions))

    def sample_targets(self, relation: str) -> np.ndarray:
        """Each sample's target of a relation (``-1``: none)."""
        return self.graph.sample_targets(relation)


Rule = Callable[[_Context], list[Issue]]
RULES: list[tuple[str, Rule]] = []


def rule(level: str) -> Callable[[Rule], Rule]:
    def register(fn: Rule) -> Rule:
        RULES.append((level, fn))
        return fn

    return register


def validate(
    graph: StudyGraph,
    *,
    levels: Sequence[str] | None = None,
    severities: Sequence[str] | None = None,
    n_splits: int | None = None,
    modes: Sequence[str] | None = None,
) -> ValidationReport:
    """Check ``graph`` and report every finding.

    Parameters
    ----------
    levels, severities:
        Keep only findings of these levels / severities (default: all).
        ``valid`` is computed before this filter.
    n_splits:
        Also report every derivation mode that would leave fewer groups than
        this many folds (``too_few_groups``).
    modes:
        Modes whose partitions are checked for collapse (``single_group``,
        ``dominant_group``, ``too_few_groups``); ``composite`` is
        composite/strict over every mode the graph supports, as
        ``derive(graph, "composite")``. Default: every mode the graph
        supports, plus composite/strict over its dependency modes
        (:data:`DEPENDENCY_MODES`: subject, relatedness, spatial, duplicate)
        when two or more of them make a grouping no single mode makes — the
        composite a study derives to keep every dependency whole. Batches,
        sites, visits and other blocks link most samples by design, so a
        composite over them collapses on a valid design and is checked only
        on request. A composite finding names the modes and relations it
        covers (``details["via"]``, ``details["relations"]``).
    """
    instance(graph, StudyGraph, "validate: the graph")
    for value, allowed, what in ((levels, LEVELS, "levels"), (severities, SEVERITIES, "severities")):
        if value is not None and not set(names(value, what)) <= set(allowed):
            raise DepgraphError(
                "invalid_argument", f"{what} must be among {describe_ids(allowed)}, not {describe_ids(value)}"
            )
    if n_splits is not None:
        n_splits = whole_number(n_splits, "n_splits", minimum=2)
    if modes is not None:
        modes = tuple(dict.fromkeys(canonical_name(m) for m in names(modes, "modes")))  # "Subject" is subject
        unknown = [m for m in modes if m not in MODE]
        if unknown:  # (group_sizes would refuse them, and the rule would pass over them without a word)
            raise DepgraphError(
                "invalid_argument", f"modes {describe_ids(unknown)} are not modes ({describe_ids(list(MODE), 20)})"
            )
    ctx = _Context(graph, n_splits, modes)
    found: list[Issue] = []
    for level, fn in RULES:
        if level != "structural" and any(i.severity == "error" for i in found):
            break  # a structurally broken graph cannot be read for meaning
        found += [_with_level(i, level) for i in fn(ctx)]
    valid = not any(i.severity == "error" for i in found)
    kept = [
        i for i in found if (levels is None or i.level in levels) and (severities is None or i.severity in severities)
    ]
    metrics = {
        "n_nodes": graph.n_nodes,
        "n_edges": graph.n_edges,
        "n_samples": graph.count(NodeType.SAMPLE),
        "n_issues": len(found),
        "n_errors": sum(i.severity == "error" for i in found),
        "n_warnings": sum(i.severity == "warning" for i in found),
        "n_advisories": sum(i.severity == "advisory" for i in found),
    }
    return ValidationReport(tuple(kept), metrics, graph.name, valid)


def _with_level(issue: Issue, level: str) -> Issue:
    return Issue(issue.code, issue.severity, issue.message, issue.ids, level, issue.count, issue.details)


# --------------------------------------------------------------------------- structural
def _repeated_node_ids(ctx: _Context) -> list[Issue]:
    """A node id declared twice (builders sort nodes by type and key: ids are unique when the keys rise)."""
    g = ctx.graph
    step = np.diff(g.nodes["type"].cat.codes.to_numpy())
    keys = g.key_array
    rising = pc.greater(keys[1:], keys[:-1]).to_numpy(zero_copy_only=False) if len(keys) > 1 else np.ones(0, bool)
    if ((step > 0) | ((step == 0) & rising)).all():
        return []
    ids = pd.Series(ctx.ids(np.arange(g.n_nodes)))
    dup = ids[ids.duplicated()].unique()
    return [finding("duplicate_node_id", f"node ids repeat: {describe_ids(dup)}", tuple(dup))] if len(dup) else []


@rule("structural")
def _structure(ctx: _Context) -> list[Issue]:
    """Node ids unique, edges inside the node table, endpoint types matching
    the relation's signature, no repeated edge."""
    g = ctx.graph
    out = _repeated_node_ids(ctx)
    types = g.nodes["type"].cat.codes.to_numpy()
    dangling_rows: list[np.ndarray] = []
    misjoined: list[tuple[str, np.ndarray, np.ndarray]] = []
    repeated = 0
    offset = 0  # edge rows are counted as in StudyGraph.edges: relation by relation
    for name, block in g.relations.items():
        rel = RELATION[name]
        src, dst = block.src, block.dst
        dangling = (src < 0) | (src >= g.n_nodes) | (dst < 0) | (dst >= g.n_nodes)
        dangling_rows.append(np.flatnonzero(dangling) + offset)
        ok = ~dangling
        bad = ok.copy()
        bad[ok] = (types[src[ok]] != rel.source.rank) | (types[dst[ok]] != rel.target.rank)
        if bad.any():
            misjoined.append((name, src[bad], dst[bad]))
        if len(src) > 1:
            width = max(int(src.max()), int(dst.max()), 0) + 1
            pair = src.astype(np.int64) * width + dst
            if (np.diff(pair) < 0).any():  # builders keep edges sorted; a hand-made table may not be
                pair = np.sort(pair)
            repeated += int((pair[1:] == pair[:-1]).sum())
        offset += len(src)
    rows = np.concatenate(dangling_rows) if dangling_rows else np.array([], dtype=np.int64)
    if len(rows):
        out.append(
            finding(
                "dangling_edge",
                f"{len(rows)} edge(s) point outside the node table (edge rows {describe_ids(rows)})",
                details={"edge_rows": rows.tolist()},
                count=len(rows),
            )
        )
    if misjoined:
        count = sum(len(s) for _, s, _ in misjoined)
        shown = [
            f"{ctx.ids(s[[i]])[0]} -[{name}]-> {ctx.ids(d[[i]])[0]}"
            for name, s, d in misjoined
            for i in range(min(3, len(s)))
        ][:3]
        ids = tuple(dict.fromkeys(x for _, s, d in misjoined for x in ctx.ids(s) + ctx.ids(d)))
        out.append(
            finding(
                "invalid_edge_signature",
                f"{count} edge(s) join node types their relation does not allow: {'; '.join(shown)}",
                ids=ids,
                count=count,
            )
        )
    if repeated:
        out.append(finding("duplicate_edge", f"{repeated} edge(s) are declared twice", count=repeated))
    return out


def _recorded(ctx: _Context, level: str) -> list[Issue]:
    """Findings a builder or importer kept in the graph's history (``warnings``
    of a step: what it merged or read with a warning), at their catalogue level
    and severity. History is free-form provenance: entries that are not such
    findings are not validation's business."""
    out = []
    for step in ctx.graph.history:
        notes = step.get("warnings")
        for note in notes if isinstance(notes, list) else []:
            code = note.get("code") if isinstance(note, dict) else None
            entry = CATALOGUE.get(code) if isinstance(code, str) else None
            if entry is None or entry.level != level:
                continue
            ids = note.get("ids")
            count = note.get("count")
            out.append(
                entry.issue(
                    str(note.get("message") or entry.meaning),
                    tuple(str(i) for i in ids) if isinstance(ids, list) else (),
                    count=count if isinstance(count, int) and not isinstance(count, bool) and count >= 0 else None,
                    details={"step": str(step.get("step"))},
                )
            )
    return out


@rule("structural")
def _recorded_structure(ctx: _Context) -> list[Issue]:
    """Structural findings recorded on the way in (edges an imported file repeated)."""
    return _recorded(ctx, "structural")


# --------------------------------------------------------------------------- semantic
@rule("semantic")
def _recorded_meaning(ctx: _Context) -> list[Issue]:
    """Semantic findings recorded on the way in (a numeric outcome_value, an unknown splitGraph schema)."""
    return _recorded(ctx, "semantic")


@rule("semantic")
def _assignments(ctx: _Context) -> list[Issue]:
    """At most one subject/batch/study/timepoint/... per sample; samples
    missing a relation the other samples have."""
    g = ctx.graph
    out: list[Issue] = []
    start, stop = g.type_range(NodeType.SAMPLE)
    n_samples = stop - start
    allow_multi = bool(g.overrides.get("allow_multi_subject_samples"))
    for rel in RELATIONS:
        if not rel.single_target or rel.source != NodeType.SAMPLE:
            continue
        src, _, _ = g.relation_edges(rel.name)
        if not len(src) or not n_samples:
            continue
        counts = np.bincount(src - start, minlength=n_samples)
        multi = np.flatnonzero(counts > 1) + start
        mode = rel.mode
        if len(multi):
            ids = ctx.ids(multi)
            if rel.name == RelationName.SAMPLE_BELONGS_TO_SUBJECT and allow_multi:
                out.append(
                    finding(
                        "multi_subject_samples_allowed",
                        f"{len(multi)} sample(s) belong to several subjects (allowed by override): {ctx.named(multi)}",
                        tuple(ids),
                    )
                )
            else:
                out.append(
                    finding(
                        f"sample_multiple_{mode}_assignments",
                        f"{len(multi)} sample(s) have more than one {rel.target.value.lower()} ({rel.name}): "
                        f"{ctx.named(multi)}",
                        tuple(ids),
                        details={"relation": rel.name},
                    )
                )
        missing = np.flatnonzero(counts == 0) + start
        if len(missing):
            what = "timepoint" if mode == "time" else mode
            out.append(
                finding(
                    f"sample_missing_{mode}_assignment",
                    f"{len(missing)} of {n_samples} sample(s) have no {what} while others do; "
                    f"{mode} grouping keeps them as singletons: {ctx.named(missing)}",
                    ctx.ids(missing),
                    details={"relation": rel.name},
                )
            )
    return out


@rule("semantic")
def _time_order(ctx: _Context) -> list[Issue]:
    """timepoint_precedes: no self-loop, no cycle, no edge against time_index."""
    return [
        finding(code, message, tuple(f"timepoint:{k}" for k in ids))
        for code, message, ids in time_order_problems(ctx.graph)
    ]


#: splitGraph's allowed FeatureSet ``derivation_scope`` values.
DERIVATION_SCOPES: tuple[str, ...] = ("external", "per_training_split", "per_dataset")


def _featureset_scopes(ctx: _Context) -> tuple[np.ndarray, pd.Series]:
    """Node positions of the feature sets and their ``derivation_scope`` (missing: none)."""
    g = ctx.graph
    start, stop = g.type_range(NodeType.FEATURESET)
    if stop == start or "derivation_scope" not in g.attributes.columns:
        return np.empty(0, dtype=np.int64), pd.Series([], dtype=object)
    return np.arange(start, stop), g.attributes["derivation_scope"].iloc[start:stop].reset_index(drop=True)


@rule("semantic")
def _featureset_scope_values(ctx: _Context) -> list[Issue]:
    """A derivation_scope outside splitGraph's three values (a typo hides a per-dataset feature set)."""
    positions, scopes = _featureset_scopes(ctx)
    bad = (scopes.notna() & ~scopes.isin(DERIVATION_SCOPES)).to_numpy()
    if not bad.any():
        return []
    values = describe_ids(pd.unique(scopes[bad].astype(str)).tolist(), 3)
    return [
        finding(
            "invalid_featureset_derivation_scope",
            f"{int(bad.sum())} feature set(s) have a derivation_scope ({values}) that is not "
            f"{', '.join(DERIVATION_SCOPES[:-1])} or {DERIVATION_SCOPES[-1]}: {ctx.named(positions[bad])}",
            ctx.ids(positions[bad]),
        )
    ]


@rule("semantic")
def _dropped_pairs(ctx: _Context) -> list[Issue]:
    """Builder steps that dropped pairs naming ids the graph does not have."""
    out = []
    for step in ctx.graph.history:
        dropped = int(step.get("unknown_dropped") or 0)
        if dropped:
            ids = [str(i) for i in step.get("unknown_ids", [])]
            n_ids = int(step.get("unknown_id_count", len(ids)))
            what = step.get("dropped_what", "pairs")
            out.append(
                finding(
                    "pairs_with_unknown_ids_dropped",
                    f"{step.get('step')} dropped {dropped} {what} naming {n_ids} id(s) not in the graph "
                    f"(unknown='ignore'): {describe_ids(ids, total=n_ids)}",
                    ids=tuple(ids),
                    count=dropped,
                    details={"step": step.get("step"), "unknown_id_count": n_ids},
                )
            )
    return out


@rule("semantic")
def _formula_like_ids(ctx: _Context) -> list[Issue]:
    """Node ids a spreadsheet would run as a formula (CSV injection): exports keep them exact, so say so."""
    hits = np.flatnonzero(formula_like(ctx.graph.key_array))
    if not len(hits):
        return []
    shown = ctx.graph.key_array.take(pa.array(hits[:5])).to_pylist()
    return [
        finding(
            "formula_like_ids",
            f"{len(hits)} id(s) begin with =, +, -, @, a tab or a carriage return, which a spreadsheet reads as a "
            f"formula: {describe_ids([repr(k) for k in shown], total=len(hits))}; exports keep ids exact "
            "(export --excel-safe writes a CSV meant for spreadsheets)",
            ctx.ids(hits),
        )
    ]


@rule("semantic")
def _no_grouping(ctx: _Context) -> list[Issue]:
    """Metadata without a grouping column, in a graph where nothing links the samples."""
    if ctx.graph.n_edges:
        return []
    out = []
    for step in ctx.graph.history:
        message = no_grouping_message(step)
        if message:
            columns = list(step["no_grouping_column"].get("id_like_columns", []))
            out.append(
                finding(
                    "no_grouping_column",
                    message,
                    count=ctx.graph.count(NodeType.SAMPLE),
                    details={"id_like_columns": columns},
                )
            )
    return out


@rule("semantic")
def _unmapped_role_columns(ctx: _Context) -> list[Issue]:
    """Metadata columns named like a role that nothing mapped (recorded by ``from_metadata``); a family column while
    no kinship relates anyone."""
    out = []
    for step in ctx.graph.history:
        for column, role in dict(step.get("unmapped_role_columns") or {}).items():
            if role in CANONICAL_COLUMNS:
                message = unmapped_role_message(str(column), str(role))
                out.append(finding("unmapped_role_column", message, count=1, details={"column": column, "role": role}))
            elif role == "family" and not ctx.graph.has_relation(RelationName.SUBJECT_RELATED_TO):
                message = (
                    f"metadata column {column!r} looks like a family id, but no kinship is declared: relatives are "
                    "grouped only through kinship, so a family may be split; add kinship (--kinship, add_kinship)"
                )
                out.append(finding("family_column_without_kinship", message, count=1, details={"column": column}))
    return out


@rule("semantic")
def _kinship_coverage(ctx: _Context) -> list[Issue]:
    """Kinship steps that found subjects their file does not name (unless grouping them as unrelated was chosen),
    or a file filtered when it was written."""
    out = []
    for step in ctx.graph.history:
        if step.get("step") != "add_kinship":
            continue
        source = f"kinship {step.get('source')!r}"
        n = int(step.get("absent") or 0)
        if n and step.get("absent_as") == "warn":
            ids = tuple(f"subject:{i}" for i in step.get("absent_ids", []))
            message = absent_message(source, n, ctx.graph.count(NodeType.SUBJECT), list(step["absent_ids"]))
            said = message + "; they were grouped as unrelated to everyone (absent='unrelated' says so)"
            out.append(finding("subjects_without_kinship", said, ids, count=n))
        smallest = step.get("smallest_kinship")
        if smallest is not None:
            message = filtered_message(source, float(step.get("threshold", 0.0)), float(smallest))
            out.append(finding("kinship_file_filtered", message, count=1, details={"smallest_kinship": smallest}))
    return out


@rule("semantic")
def _kinship_above_half(ctx: _Context) -> list[Issue]:
    """Kinship steps that kept GRM pairs above 0.5 (flagged by the GRM reader, not refused)."""
    out = []
    for step in ctx.graph.history:
        n = int(step.get("above_half") or 0)
        if n:
            ids = [f"subject:{i}" for i in step.get("above_half_ids", [])]
            out.append(
                finding(
                    "kinship_above_half",
                    f"{step.get('step')} read {n} pair(s) with kinship above 0.5 (GRM above 1) from a GRM, "
                    f"e.g. {describe_ids(step.get('above_half_pairs', []), 3)}: a standardised GRM gives this for "
                    "monozygotic twins and duplicated samples (sampling noise around 1); check that these pairs are "
                    "twins or duplicates, and declare duplicates as such",
                    ids=tuple(ids),
                    count=n,
                )
            )
    return out


# --------------------------------------------------------------------------- leakage
def _per_target(ctx: _Context, relation: str) -> np.ndarray:
    """Samples per target node of a sample relation (indexed by node position)."""
    _, dst, _ = ctx.graph.relation_edges(relation)
    return np.bincount(dst, minlength=ctx.graph.n_nodes)


@rule("leakage")
def _repeated_subjects(ctx: _Context) -> list[Issue]:
    """Subjects with several samples: a sample-level split would leak them."""
    repeated = np.flatnonzero(_per_target(ctx, RelationName.SAMPLE_BELONGS_TO_SUBJECT) > 1)
    if not len(repeated):
        return []
    return [
        finding(
            "repeated_subject_samples",
            f"{len(repeated)} subject(s) have several samples; keep them whole (subject or relatedness mode): "
            f"{ctx.named(repeated)}",
            ctx.ids(repeated),
        )
    ]


def _subject_spread(ctx: _Context, relation: str, code: str, what: str) -> list[Issue]:
    g = ctx.graph
    s_src, s_dst, _ = g.relation_edges(RelationName.SAMPLE_BELONGS_TO_SUBJECT)
    if not len(s_src) or not g.has_relation(relation):
        return []
    start, _ = g.type_range(NodeType.SAMPLE)
    other = ctx.sample_targets(relation)[s_src - start]  # (subject, other) for every sample with both
    both = other >= 0
    lowest = np.full(g.n_nodes, g.n_nodes, dtype=np.int64)
    highest = np.full(g.n_nodes, -1, dtype=np.int64)
    np.minimum.at(lowest, s_dst[both], other[both])
    np.maximum.at(highest, s_dst[both], other[both])
    spanning = np.flatnonzero((highest >= 0) & (lowest != highest))  # a subject seen in two studies/sites
    if not len(spanning):
        return []
    one = what[:-3] + "y" if what.endswith("ies") else what[:-1]
    return [
        finding(
            code,
            f"{len(spanning)} subject(s) have samples in several {what}; a {one} hold-out would leak them: "
            f"{ctx.named(spanning)}",
            ctx.ids(spanning),
        )
    ]


@rule("leakage")
def _cross_study(ctx: _Context) -> list[Issue]:
    return _subject_spread(ctx, RelationName.SAMPLE_FROM_STUDY, "subject_cross_study_overlap", "studies")


@rule("leakage")
def _cross_site(ctx: _Context) -> list[Issue]:
    return _subject_spread(ctx, RelationName.SAMPLE_COLLECTED_AT_SITE, "subject_cross_site_overlap", "sites")


@rule("leakage")
def _shared_featuresets(ctx: _Context) -> list[Issue]:
    """Feature sets shared by several samples (derived jointly: a provenance link)."""
    shared = np.flatnonzero(_per_target(ctx, RelationName.SAMPLE_USES_FEATURESET) > 1)
    if not len(shared):
        return []
    return [
        finding(
            "shared_featureset_provenance",
            f"{len(shared)} feature set(s) are shared by several samples: {ctx.named(shared)}",
            ctx.ids(shared),
        )
    ]


@rule("leakage")
def _per_dataset_featuresets(ctx: _Context) -> list[Issue]:
    """Feature sets derived over the whole dataset (selected or normalised with the
    evaluation samples in view), whether one sample uses them or many (splitGraph's rule)."""
    positions, scopes = _featureset_scopes(ctx)
    per_dataset = (scopes == "per_dataset").to_numpy(dtype=bool)
    if not per_dataset.any():
        return []
    return [
        finding(
            "per_dataset_featureset",
            f"{int(per_dataset.sum())} feature set(s) were derived over the whole dataset (derivation_scope "
            f"per_dataset); derive them within each training split: {ctx.named(positions[per_dataset])}",
            ctx.ids(positions[per_dataset]),
        )
    ]


@rule("leakage")
def _heavy_batches(ctx: _Context) -> list[Issue]:
    """Batches holding at least max(3, ceil(half the samples))."""
    n_samples = ctx.graph.count(NodeType.SAMPLE)
    if not n_samples or not ctx.graph.has_relation(RelationName.SAMPLE_PROCESSED_IN_BATCH):
        return []
    threshold = max(3, math.ceil(n_samples * HEAVY_BATCH_SHARE))
    heavy = np.flatnonzero(
        _per_target(ctx, RelationName.SAMPLE_PROCESSED_IN_BATCH) >= threshold
    )  # edges are distinct pairs
    if not len(heavy):
        return []
    return [
        finding(
            "heavy_batch_reuse",
            f"{len(heavy)} batch(es) hold at least {threshold} of {n_samples} samples: {ctx.named(heavy)}",
            ctx.ids(heavy),
        )
    ]


@rule("leakage")
def _time_ordering_missing(ctx: _Context) -> list[Issue]:
    g = ctx.graph
    if not g.has_relation(RelationName.SAMPLE_COLLECTED_AT_TIMEPOINT) or g.has_relation(
        RelationName.TIMEPOINT_PRECEDES
    ):
        return []
    start, stop = g.type_range(NodeType.TIMEPOINT)
    if "time_index" in g.attributes.columns and g.attributes["time_index"].iloc[start:stop].notna().any():
        return []
    return [
        finding(
            "missing_time_ordering",
            "samples are linked to timepoints but no time_index or timepoint_precedes orders them",
        )
    ]


@rule("leakage")
def _related_subjects(ctx: _Context) -> list[Issue]:
    """Kinship between subjects: subject grouping would put relatives apart."""
    src, dst, _ = ctx.graph.relation_edges(RelationName.SUBJECT_RELATED_TO)
    if not len(src):
        return []
    subjects = present(np.concatenate([src, dst]), ctx.graph.n_nodes)
    return [
        finding(
            "related_subjects",
            f"{len(src)} related subject pair(s) among {len(subjects)} subjects; subject grouping splits relatives, "
            f"use relatedness mode: {ctx.named(subjects)}",
            ctx.ids(subjects),
            details={"pairs": len(src)},
        )
    ]


@rule("leakage")
def _duplicates_across_subjects(ctx: _Context) -> list[Issue]:
    """Declared duplicates whose samples belong to different subjects: a
    re-deposit under a new subject id, which subject grouping cannot see."""
    src, dst, _ = ctx.graph.relation_edges(RelationName.SAMPLE_DUPLICATE_OF)
    if not len(src):
        return []
    start, stop = ctx.graph.type_range(NodeType.SAMPLE)
    subject_of = np.full(stop - start, -1, dtype=np.int64)
    s_src, s_dst, _ = ctx.graph.relation_edges(RelationName.SAMPLE_BELONGS_TO_SUBJECT)
    subject_of[s_src - start] = s_dst
    a, b = subject_of[src - start], subject_of[dst - start]
    across = (a != b) | (a < 0)
    if not across.any():
        return []
    samples = present(np.concatenate([src[across], dst[across]]), ctx.graph.n_nodes)
    return [
        finding(
            "duplicates_across_subjects",
            f"{int(across.sum())} declared duplicate pair(s) span different (or missing) subjects; subject grouping "
            f"would split them, use duplicate or composite mode: {ctx.named(samples)}",
            ctx.ids(samples),
            details={"pairs": int(across.sum())},
        )
    ]


@dataclass(frozen=True)
class _ShapeCheck:
    """One partition whose shape validation checks: a mode, and for a composite the modes it combines."""

    mode: str
    via: tuple[str, ...] = ()
    every_mode: bool = False  # a composite over every supported mode (what derive's default composite does)

    def relations(self) -> tuple[str, ...]:
        return relation_names(self.via)

    @property
    def label(self) -> str:
        """How messages name it: ``subject``; ``composite/strict over subject, duplicate``."""
        if self.mode != "composite":
            return self.mode
        return f"composite/strict over {'every declared mode: ' if self.every_mode else ''}{', '.join(self.via)}"

    def details(self) -> dict[str, Any]:
        if self.mode != "composite":
            return {"mode": self.mode}
        return {"mode": "composite/strict", "via": list(self.via), "relations": list(self.relations())}

    def covers(self) -> str:
        """For a composite, the relations it follows, as a message names them."""
        return f" ({', '.join(self.relations())})" if self.mode == "composite" else ""


@rule("leakage")
def _partition_shapes(ctx: _Context) -> list[Issue]:
    """Derivations that collapse (one group), are dominated by one group, or
    leave fewer groups than the folds asked for (group sizes only: no labels)."""
    g = ctx.graph
    n = g.count(NodeType.SAMPLE)
    if n < 2:
        return []
    out: list[Issue] = []
    for check in _shape_checks(g, ctx.modes):
        try:
            sizes = group_sizes(g, check.mode, check.via or None)
        except DepgraphError:
            continue  # the reason (ambiguity, time order, nothing to combine) is reported by its own rule
        label, covers = check.label, check.covers()
        collapse = collapse_finding(n, len(sizes), int(sizes.max()), sizes, f"{label}{covers}", details=check.details())
        out += [collapse] if collapse is not None else []
        if ctx.n_splits is not None and len(sizes) < ctx.n_splits:
            out.append(
                finding(
                    "too_few_groups",
                    f"mode {label}{covers} leaves {len(sizes)} group(s), fewer than {ctx.n_splits} folds",
                    count=1,
                    details={**check.details(), "n_groups": len(sizes), "n_splits": ctx.n_splits},
                )
            )
    return out


def _shape_checks(graph: StudyGraph, modes: tuple[str, ...] | None) -> list[_ShapeCheck]:
    """The partitions to check: the modes asked for, or by default every mode the graph supports and the
    composite over its dependency modes (when it groups differently from each of them alone)."""
    present = list(declared_modes(graph.has_relation))
    if modes is not None:
        every = tuple(present)
        return [_ShapeCheck(m) if m != "composite" else _ShapeCheck(m, every, every_mode=True) for m in modes]
    checks = [_ShapeCheck(m) for m in present]
    dependencies = tuple(m for m in present if m in DEPENDENCY_MODES)
    composite = _ShapeCheck("composite", dependencies)
    alone = {frozenset(relation_names([m])) for m in dependencies}
    if len(dependencies) > 1 and frozenset(composite.relations()) not in alone:
        checks.append(composite)  # subject + relatedness is relatedness again: nothing new to check
    return checks
