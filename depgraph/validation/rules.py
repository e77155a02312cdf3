"""Rules over a StudyGraph → ValidationReport.

Each rule is a small function ``rule(context) -> list[Issue]`` registered in
:data:`RULES` with the level it belongs to. A rule words its findings; what it
counts it asks of the graph's engine (:class:`~depgraph.validation.facts.GraphFacts`:
numpy on one machine, Spark for a :class:`~depgraph.spark.graph.SparkGraph`), so
both engines give the same report. The catalogue
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

import orjson
import pandas as pd

from depgraph.common.arguments import instance, names, whole_number
from depgraph.common.display import html_block, text_table
from depgraph.derivation.shapes import collapse_finding
from depgraph.engines import engine_of, stage
from depgraph.errors import DepgraphError, describe_ids
from depgraph.findings import CATALOGUE, Issue, finding, findings_table
from depgraph.graph.model import StudyGraph
from depgraph.ingest.coverage import absent_message, filtered_message
from depgraph.ingest.metadata import no_grouping_message, unmapped_role_message
from depgraph.validation.facts import GraphFacts, StudyGraphFacts
from depgraph.vocab import (
    CANONICAL_COLUMNS,
    DEPENDENCY_MODES,
    LEVELS,
    MODE,
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
    """What rules share: the engine's answers about the graph (:mod:`depgraph.validation.facts`) and the request."""

    facts: GraphFacts
    n_splits: int | None
    modes: tuple[str, ...] | None


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
    graph:
        A :class:`~depgraph.graph.model.StudyGraph`, or a graph of another engine (a
        :class:`~depgraph.spark.graph.SparkGraph`: counted in Spark, the same report).
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
    engine = engine_of(graph)
    if engine is None:
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
    facts: GraphFacts = StudyGraphFacts(graph) if engine is None else stage(engine, "validate").validate_request(graph)
    ctx = _Context(facts, n_splits, modes)
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
        "n_nodes": facts.n_nodes,
        "n_edges": facts.n_edges,
        "n_samples": facts.count(NodeType.SAMPLE),
        "n_issues": len(found),
        "n_errors": sum(i.severity == "error" for i in found),
        "n_warnings": sum(i.severity == "warning" for i in found),
        "n_advisories": sum(i.severity == "advisory" for i in found),
    }
    return ValidationReport(tuple(kept), metrics, facts.name, valid)


def _with_level(issue: Issue, level: str) -> Issue:
    return Issue(issue.code, issue.severity, issue.message, issue.ids, level, issue.count, issue.details)


# --------------------------------------------------------------------------- structural
@rule("structural")
def _structure(ctx: _Context) -> list[Issue]:
    """Node ids unique, edges inside the node table, endpoint types matching the relation's signature, no repeated
    edge (:mod:`depgraph.validation.structure`)."""
    return ctx.facts.structure()


def _recorded(ctx: _Context, level: str) -> list[Issue]:
    """Findings a builder or importer kept in the graph's history (``warnings``
    of a step: what it merged or read with a warning), at their catalogue level
    and severity. History is free-form provenance: entries that are not such
    findings are not validation's business."""
    out = []
    for step in ctx.facts.history:
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
    out: list[Issue] = []
    n_samples = ctx.facts.count(NodeType.SAMPLE)
    allow_multi = bool(ctx.facts.overrides.get("allow_multi_subject_samples"))
    for rel in RELATIONS:
        if not rel.single_target or rel.source != NodeType.SAMPLE:
            continue
        multi, missing = ctx.facts.assignments(rel.name)
        mode = rel.mode
        if len(multi) and rel.name == RelationName.SAMPLE_BELONGS_TO_SUBJECT and allow_multi:
            message = f"{len(multi)} sample(s) belong to several subjects (allowed by override): {multi.named()}"
            out.append(finding("multi_subject_samples_allowed", message, multi.ids()))
        elif len(multi):
            message = (
                f"{len(multi)} sample(s) have more than one {rel.target.value.lower()} ({rel.name}): {multi.named()}"
            )
            out.append(
                finding(f"sample_multiple_{mode}_assignments", message, multi.ids(), details={"relation": rel.name})
            )
        if len(missing):
            what = "timepoint" if mode == "time" else mode
            message = (
                f"{len(missing)} of {n_samples} sample(s) have no {what} while others do; "
                f"{mode} grouping keeps them as singletons: {missing.named()}"
            )
            out.append(
                finding(f"sample_missing_{mode}_assignment", message, missing.ids(), details={"relation": rel.name})
            )
    return out


@rule("semantic")
def _time_order(ctx: _Context) -> list[Issue]:
    """timepoint_precedes: no self-loop, no cycle, no edge against time_index."""
    return [
        finding(code, message, tuple(f"timepoint:{k}" for k in ids))
        for code, message, ids in ctx.facts.time_order_problems()
    ]


#: splitGraph's allowed FeatureSet ``derivation_scope`` values.
DERIVATION_SCOPES: tuple[str, ...] = ("external", "per_training_split", "per_dataset")


@rule("semantic")
def _featureset_scope_values(ctx: _Context) -> list[Issue]:
    """A derivation_scope outside splitGraph's three values (a typo hides a per-dataset feature set)."""
    bad, values = ctx.facts.featuresets_by_scope(DERIVATION_SCOPES, inside=False)
    if not len(bad):
        return []
    return [
        finding(
            "invalid_featureset_derivation_scope",
            f"{len(bad)} feature set(s) have a derivation_scope ({describe_ids(values, 3)}) that is not "
            f"{', '.join(DERIVATION_SCOPES[:-1])} or {DERIVATION_SCOPES[-1]}: {bad.named()}",
            bad.ids(),
        )
    ]


@rule("semantic")
def _dropped_pairs(ctx: _Context) -> list[Issue]:
    """Builder steps that dropped pairs naming ids the graph does not have."""
    out = []
    for step in ctx.facts.history:
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
    hits = ctx.facts.formula_like_keys()
    if not len(hits):
        return []
    return [
        finding(
            "formula_like_ids",
            f"{len(hits)} id(s) begin with =, +, -, @, a tab or a carriage return, which a spreadsheet reads as a "
            f"formula: {describe_ids([repr(k) for k in hits.first_keys], total=len(hits))}; exports keep ids exact "
            "(export --excel-safe writes a CSV meant for spreadsheets)",
            hits.ids(),
        )
    ]


@rule("semantic")
def _no_grouping(ctx: _Context) -> list[Issue]:
    """Metadata without a grouping column, in a graph where nothing links the samples."""
    if ctx.facts.n_edges:
        return []
    out = []
    for step in ctx.facts.history:
        message = no_grouping_message(step)
        if message:
            columns = list(step["no_grouping_column"].get("id_like_columns", []))
            out.append(
                finding(
                    "no_grouping_column",
                    message,
                    count=ctx.facts.count(NodeType.SAMPLE),
                    details={"id_like_columns": columns},
                )
            )
    return out


@rule("semantic")
def _unmapped_role_columns(ctx: _Context) -> list[Issue]:
    """Metadata columns named like a role that nothing mapped (recorded by ``from_metadata``); a family column while
    no kinship relates anyone."""
    out = []
    for step in ctx.facts.history:
        for column, role in dict(step.get("unmapped_role_columns") or {}).items():
            if role in CANONICAL_COLUMNS:
                message = unmapped_role_message(str(column), str(role))
                out.append(finding("unmapped_role_column", message, count=1, details={"column": column, "role": role}))
            elif role == "family" and not ctx.facts.has_relation(RelationName.SUBJECT_RELATED_TO):
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
    for step in ctx.facts.history:
        if step.get("step") != "add_kinship":
            continue
        source = f"kinship {step.get('source')!r}"
        n = int(step.get("absent") or 0)
        if n and step.get("absent_as") == "warn":
            ids = tuple(f"subject:{i}" for i in step.get("absent_ids", []))
            message = absent_message(source, n, ctx.facts.count(NodeType.SUBJECT), list(step["absent_ids"]))
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
    for step in ctx.facts.history:
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
@rule("leakage")
def _repeated_subjects(ctx: _Context) -> list[Issue]:
    """Subjects with several samples: a sample-level split would leak them."""
    repeated = ctx.facts.targets_with_samples(RelationName.SAMPLE_BELONGS_TO_SUBJECT, 2)
    if not len(repeated):
        return []
    message = (
        f"{len(repeated)} subject(s) have several samples; keep them whole (subject or relatedness mode): "
        f"{repeated.named()}"
    )
    return [finding("repeated_subject_samples", message, repeated.ids())]


def _subject_spread(ctx: _Context, relation: str, code: str, what: str) -> list[Issue]:
    if not ctx.facts.has_relation(RelationName.SAMPLE_BELONGS_TO_SUBJECT) or not ctx.facts.has_relation(relation):
        return []
    spanning = ctx.facts.subjects_spanning(relation)  # a subject seen in two studies/sites
    if not len(spanning):
        return []
    one = what[:-3] + "y" if what.endswith("ies") else what[:-1]
    message = f"{len(spanning)} subject(s) have samples in several {what}; a {one} hold-out would leak them: "
    return [finding(code, message + spanning.named(), spanning.ids())]


@rule("leakage")
def _cross_study(ctx: _Context) -> list[Issue]:
    return _subject_spread(ctx, RelationName.SAMPLE_FROM_STUDY, "subject_cross_study_overlap", "studies")


@rule("leakage")
def _cross_site(ctx: _Context) -> list[Issue]:
    return _subject_spread(ctx, RelationName.SAMPLE_COLLECTED_AT_SITE, "subject_cross_site_overlap", "sites")


@rule("leakage")
def _shared_featuresets(ctx: _Context) -> list[Issue]:
    """Feature sets shared by several samples (derived jointly: a provenance link)."""
    shared = ctx.facts.targets_with_samples(RelationName.SAMPLE_USES_FEATURESET, 2)
    if not len(shared):
        return []
    message = f"{len(shared)} feature set(s) are shared by several samples: {shared.named()}"
    return [finding("shared_featureset_provenance", message, shared.ids())]


@rule("leakage")
def _per_dataset_featuresets(ctx: _Context) -> list[Issue]:
    """Feature sets derived over the whole dataset (selected or normalised with the
    evaluation samples in view), whether one sample uses them or many (splitGraph's rule)."""
    per_dataset, _ = ctx.facts.featuresets_by_scope(["per_dataset"], inside=True)
    if not len(per_dataset):
        return []
    return [
        finding(
            "per_dataset_featureset",
            f"{len(per_dataset)} feature set(s) were derived over the whole dataset (derivation_scope "
            f"per_dataset); derive them within each training split: {per_dataset.named()}",
            per_dataset.ids(),
        )
    ]


@rule("leakage")
def _heavy_batches(ctx: _Context) -> list[Issue]:
    """Batches holding at least max(3, ceil(half the samples))."""
    n_samples = ctx.facts.count(NodeType.SAMPLE)
    if not n_samples or not ctx.facts.has_relation(RelationName.SAMPLE_PROCESSED_IN_BATCH):
        return []
    threshold = max(3, math.ceil(n_samples * HEAVY_BATCH_SHARE))
    heavy = ctx.facts.targets_with_samples(RelationName.SAMPLE_PROCESSED_IN_BATCH, threshold)  # edges: distinct
    if not len(heavy):
        return []
    message = f"{len(heavy)} batch(es) hold at least {threshold} of {n_samples} samples: {heavy.named()}"
    return [finding("heavy_batch_reuse", message, heavy.ids())]


@rule("leakage")
def _time_ordering_missing(ctx: _Context) -> list[Issue]:
    facts = ctx.facts
    if not facts.has_relation(RelationName.SAMPLE_COLLECTED_AT_TIMEPOINT) or facts.has_relation(
        RelationName.TIMEPOINT_PRECEDES
    ):
        return []
    if facts.timepoints_indexed():
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
    if not ctx.facts.has_relation(RelationName.SUBJECT_RELATED_TO):
        return []
    pairs, subjects = ctx.facts.related_subjects()
    return [
        finding(
            "related_subjects",
            f"{pairs} related subject pair(s) among {len(subjects)} subjects; subject grouping splits relatives, "
            f"use relatedness mode: {subjects.named()}",
            subjects.ids(),
            details={"pairs": pairs},
        )
    ]


@rule("leakage")
def _duplicates_across_subjects(ctx: _Context) -> list[Issue]:
    """Declared duplicates whose samples belong to different subjects: a
    re-deposit under a new subject id, which subject grouping cannot see."""
    if not ctx.facts.has_relation(RelationName.SAMPLE_DUPLICATE_OF):
        return []
    pairs, samples = ctx.facts.duplicates_across_subjects()
    if not pairs:
        return []
    return [
        finding(
            "duplicates_across_subjects",
            f"{pairs} declared duplicate pair(s) span different (or missing) subjects; subject grouping "
            f"would split them, use duplicate or composite mode: {samples.named()}",
            samples.ids(),
            details={"pairs": pairs},
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
    n = ctx.facts.count(NodeType.SAMPLE)
    if n < 2:
        return []
    out: list[Issue] = []
    for check in _shape_checks(ctx.facts, ctx.modes):
        try:
            shape = ctx.facts.group_shape(check.mode, check.via or None)
        except DepgraphError:
            continue  # the reason (ambiguity, time order, nothing to combine) is reported by its own rule
        label, covers = check.label, check.covers()
        collapse = collapse_finding(
            n, shape.n_groups, shape.largest, shape.sizes, f"{label}{covers}", details=check.details()
        )
        out += [collapse] if collapse is not None else []
        if ctx.n_splits is not None and shape.n_groups < ctx.n_splits:
            out.append(
                finding(
                    "too_few_groups",
                    f"mode {label}{covers} leaves {shape.n_groups} group(s), fewer than {ctx.n_splits} folds",
                    count=1,
                    details={**check.details(), "n_groups": shape.n_groups, "n_splits": ctx.n_splits},
                )
            )
    return out


def _shape_checks(facts: GraphFacts, modes: tuple[str, ...] | None) -> list[_ShapeCheck]:
    """The partitions to check: the modes asked for, or by default every mode the graph supports and the
    composite over its dependency modes (when it groups differently from each of them alone)."""
    present = list(declared_modes(facts.has_relation))
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
