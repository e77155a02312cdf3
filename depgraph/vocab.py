"""The closed vocabulary of a study declaration.

Everything depgraph knows about study structure is written down once, here:
the node types, the relations between them (one row each, in
:data:`RELATIONS`), and the derivation modes that turn relations into groups
(:data:`MODES`). Ingest, validation, derivation, the JSON Schemas and the docs
all read these tables instead of repeating them.

>>> RELATION["sample_belongs_to_subject"].target
<NodeType.SUBJECT: 'Subject'>
>>> [r.name for r in relations_for_mode("relatedness")]
['sample_belongs_to_subject', 'subject_related_to']
>>> NodeType.FEATURESET.prefix
'featureset'
"""

from __future__ import annotations

import re
from collections.abc import Callable, Collection, Iterable
from dataclasses import dataclass
from enum import Enum
from typing import Any, Final, Literal

from depgraph.errors import DepgraphError, describe_ids


class NodeType(str, Enum):
    """The eleven kinds of entity a study declaration can name."""

    SAMPLE = "Sample"
    SUBJECT = "Subject"
    BATCH = "Batch"
    STUDY = "Study"
    TIMEPOINT = "Timepoint"
    ASSAY = "Assay"
    FEATURESET = "FeatureSet"
    OUTCOME = "Outcome"
    SITE = "Site"
    REGION = "Region"
    PLATFORM = "Platform"

    @property
    def prefix(self) -> str:
        """Lower-case prefix of node ids of this type (``sample:S1``)."""
        return self.value.lower()

    @property
    def rank(self) -> int:
        """Position in declaration order; node tables are sorted by it."""
        return NODE_TYPES.index(self)


NODE_TYPES: tuple[NodeType, ...] = tuple(NodeType)
NODE_TYPE_BY_PREFIX: dict[str, NodeType] = {t.prefix: t for t in NODE_TYPES}


class RelationName:
    """Every relation's name, one constant each: code names a relation through these
    (``RelationName.SUBJECT_RELATED_TO``), never by a string of its own (tests/test_architecture.py holds the code to
    it); the table below uses them."""

    SAMPLE_BELONGS_TO_SUBJECT: Final = "sample_belongs_to_subject"
    SAMPLE_PROCESSED_IN_BATCH: Final = "sample_processed_in_batch"
    SAMPLE_FROM_STUDY: Final = "sample_from_study"
    SAMPLE_COLLECTED_AT_TIMEPOINT: Final = "sample_collected_at_timepoint"
    SAMPLE_MEASURED_BY_ASSAY: Final = "sample_measured_by_assay"
    SAMPLE_COLLECTED_AT_SITE: Final = "sample_collected_at_site"
    SAMPLE_LOCATED_IN_REGION: Final = "sample_located_in_region"
    SAMPLE_RUN_ON_PLATFORM: Final = "sample_run_on_platform"
    SAMPLE_USES_FEATURESET: Final = "sample_uses_featureset"
    SAMPLE_HAS_OUTCOME: Final = "sample_has_outcome"
    SUBJECT_HAS_OUTCOME: Final = "subject_has_outcome"
    TIMEPOINT_PRECEDES: Final = "timepoint_precedes"
    FEATURESET_GENERATED_FROM_STUDY: Final = "featureset_generated_from_study"
    FEATURESET_GENERATED_FROM_BATCH: Final = "featureset_generated_from_batch"
    SUBJECT_RELATED_TO: Final = "subject_related_to"
    SAMPLE_ADJACENT_TO: Final = "sample_adjacent_to"
    SAMPLE_DUPLICATE_OF: Final = "sample_duplicate_of"


@dataclass(frozen=True)
class Relation:
    """One row of the relation table.

    ``single_target`` means a sample may have at most one target of this
    relation; ``column`` is the metadata column that declares it (``None`` when
    it comes from pairs or explicit edges); ``mode`` is the derivation mode that
    groups by it.
    """

    name: str
    source: NodeType
    target: NodeType
    directed: bool
    single_target: bool
    column: str | None
    mode: str | None
    weighted: bool = False
    built_from: str = ""


N = NodeType  # short alias for the table below

RELATIONS: tuple[Relation, ...] = (
    Relation(RelationName.SAMPLE_BELONGS_TO_SUBJECT, N.SAMPLE, N.SUBJECT, True, True, "subject_id", "subject"),
    Relation(RelationName.SAMPLE_PROCESSED_IN_BATCH, N.SAMPLE, N.BATCH, True, True, "batch_id", "batch"),
    Relation(RelationName.SAMPLE_FROM_STUDY, N.SAMPLE, N.STUDY, True, True, "study_id", "study"),
    Relation(
        RelationName.SAMPLE_COLLECTED_AT_TIMEPOINT,
        N.SAMPLE,
        N.TIMEPOINT,
        True,
        True,
        "timepoint_id",
        "time",
        built_from="+ time_index (orders timepoints)",
    ),
    Relation(RelationName.SAMPLE_MEASURED_BY_ASSAY, N.SAMPLE, N.ASSAY, True, True, "assay_id", "assay"),
    Relation(RelationName.SAMPLE_COLLECTED_AT_SITE, N.SAMPLE, N.SITE, True, True, "site_id", "site"),
    Relation(RelationName.SAMPLE_LOCATED_IN_REGION, N.SAMPLE, N.REGION, True, True, "region_id", "region"),
    Relation(RelationName.SAMPLE_RUN_ON_PLATFORM, N.SAMPLE, N.PLATFORM, True, True, "platform_id", "platform"),
    Relation(RelationName.SAMPLE_USES_FEATURESET, N.SAMPLE, N.FEATURESET, True, False, "featureset_id", None),
    Relation(RelationName.SAMPLE_HAS_OUTCOME, N.SAMPLE, N.OUTCOME, True, False, "outcome_id", None),
    Relation(
        RelationName.SUBJECT_HAS_OUTCOME,
        N.SUBJECT,
        N.OUTCOME,
        True,
        False,
        None,
        None,
        built_from="outcome_id with outcome_scope='subject'",
    ),
    Relation(
        RelationName.TIMEPOINT_PRECEDES,
        N.TIMEPOINT,
        N.TIMEPOINT,
        True,
        False,
        None,
        None,
        built_from="derived from time_index",
    ),
    Relation(
        RelationName.FEATURESET_GENERATED_FROM_STUDY,
        N.FEATURESET,
        N.STUDY,
        True,
        False,
        None,
        None,
        built_from="explicit edges",
    ),
    Relation(
        RelationName.FEATURESET_GENERATED_FROM_BATCH,
        N.FEATURESET,
        N.BATCH,
        True,
        False,
        None,
        None,
        built_from="explicit edges",
    ),
    Relation(
        RelationName.SUBJECT_RELATED_TO,
        N.SUBJECT,
        N.SUBJECT,
        False,
        False,
        None,
        "relatedness",
        True,
        built_from="kinship pairs >= threshold",
    ),
    Relation(
        RelationName.SAMPLE_ADJACENT_TO,
        N.SAMPLE,
        N.SAMPLE,
        False,
        False,
        None,
        "spatial",
        True,
        built_from="coordinates within radius",
    ),
    Relation(
        RelationName.SAMPLE_DUPLICATE_OF,
        N.SAMPLE,
        N.SAMPLE,
        False,
        False,
        None,
        "duplicate",
        True,
        built_from="declared or detected duplicate pairs",
    ),
)
del N

RELATION: dict[str, Relation] = {r.name: r for r in RELATIONS}
RELATION_NAMES: tuple[str, ...] = tuple(r.name for r in RELATIONS)

#: Metadata columns that declare a relation, plus ``sample_id`` and ``time_index``.
CANONICAL_COLUMNS: tuple[str, ...] = (
    "sample_id",
    *(r.column for r in RELATIONS if r.column is not None),
    "time_index",
)

ModeKind = Literal["direct", "component", "composite"]


@dataclass(frozen=True)
class Mode:
    """A derivation mode: how relations become one group per sample.

    ``direct`` modes group a sample by the single target of one relation;
    ``component`` modes take connected components over their relations;
    ``composite`` combines other modes (``strict``: union, ``rule_based``:
    first mode in a priority list).
    """

    name: str
    kind: ModeKind
    recommended_resampling: str


MODES: tuple[Mode, ...] = (
    Mode("subject", "direct", "grouped_cv"),
    Mode("batch", "direct", "blocked_cv"),
    Mode("study", "direct", "blocked_cv"),
    Mode("time", "direct", "ordered_split"),
    Mode("assay", "direct", "blocked_cv"),
    Mode("site", "direct", "blocked_cv"),
    Mode("region", "direct", "blocked_cv"),
    Mode("platform", "direct", "blocked_cv"),
    Mode("relatedness", "component", "grouped_cv"),
    Mode("spatial", "component", "grouped_cv"),
    Mode("duplicate", "component", "grouped_cv"),
    Mode("composite", "composite", "custom_grouped_cv"),
)
MODE: dict[str, Mode] = {m.name: m for m in MODES}
#: Modes that can be combined by the composite mode (everything but composite).
COMBINABLE_MODES: tuple[str, ...] = tuple(m.name for m in MODES if m.kind != "composite")
#: Modes that group a sample by the one target of one relation (subject, batch, time…), in table order.
DIRECT_MODES: tuple[str, ...] = tuple(m.name for m in MODES if m.kind == "direct")
#: Modes whose relations are dependencies between samples — a subject's samples, related subjects, spatial
#: neighbours, duplicates (``grouped_cv``) — rather than blocks or an order.
DEPENDENCY_MODES: tuple[str, ...] = tuple(m.name for m in MODES if m.recommended_resampling == "grouped_cv")
#: Modes whose groups are blocks of samples (batches, studies, sites…: ``blocked_cv``); a split spec carries a
#: ``<mode>_group`` column for each. In the order splitGraph writes those columns: the table's, with assay
#: (the block splitGraph added last) after the others.
BLOCK_MODES: tuple[str, ...] = tuple(
    sorted((m.name for m in MODES if m.recommended_resampling == "blocked_cv"), key=lambda name: name == "assay")
)
STRATEGIES: tuple[str, ...] = ("strict", "rule_based")
RESAMPLING_PLANS: tuple[str, ...] = (
    "grouped_cv",
    "blocked_cv",
    "leave_one_group_out",
    "ordered_split",
    "custom_grouped_cv",
)
SEVERITIES: tuple[str, ...] = ("error", "warning", "advisory")
LEVELS: tuple[str, ...] = ("structural", "semantic", "leakage")


# --------------------------------------------------------------------------- names on entry
def canonical_name(value: Any) -> str | None:
    """How a mode, strategy or relation name is compared and kept: case-insensitively, blanks around it ignored,
    in lowercase (``None`` for a value that is not text). Every name the Python API or the command line takes is
    read through this, so ``"Subject"`` is ``"subject"`` wherever a name is taken, and is kept as ``"subject"``.

    >>> canonical_name(" Rule_Based"), canonical_name(3)
    ('rule_based', None)
    """
    return value.strip().lower() if isinstance(value, str) else None


def _named(value: Any, known: Collection[str], refusal: str) -> str:
    name = canonical_name(value)
    if name not in known:
        raise DepgraphError("invalid_argument", refusal.format(value=value, known=describe_ids(list(known), 20)))
    return name


def mode_named(value: Any, known: Collection[str] | None = None) -> str:
    """The mode ``value`` names, in canonical lowercase; ``known`` narrows the modes accepted (e.g.
    :data:`COMBINABLE_MODES`). Anything else is ``invalid_argument`` naming the value and the modes.

    >>> mode_named("SUBJECT")
    'subject'
    >>> mode_named("family")
    Traceback (most recent call last):
    ...
    depgraph.errors.DepgraphError: [invalid_argument] unknown mode 'family'; modes are subject, batch, ...
    """
    return _named(value, MODE if known is None else known, "unknown mode {value!r}; modes are {known}")


def strategy_named(value: Any) -> str:
    """The composite strategy ``value`` names (:data:`STRATEGIES`), in canonical lowercase.

    >>> strategy_named("Strict")
    'strict'
    """
    return _named(value, STRATEGIES, "strategy must be one of {known}, not {value!r}")


def relation_named(value: Any) -> str:
    """The relation ``value`` names (:data:`RELATIONS`), in canonical lowercase.

    >>> relation_named("Sample_Belongs_To_Subject")
    'sample_belongs_to_subject'
    """
    return _named(value, RELATION, "unknown relation {value!r}; relations are {known}")


def recommended_resampling(mode: str, strategy: str | None = None) -> str:
    """The resampling plan a spec recommends (splitGraph's choices).

    >>> recommended_resampling("composite", "rule_based")
    'grouped_cv'
    """
    mode = mode_named(mode)
    strategy = None if strategy is None else canonical_name(strategy)
    if mode == "composite" and strategy == "rule_based":
        return "grouped_cv"  # each group is one entity of the chosen mode
    return MODE[mode].recommended_resampling


def direct_relation(mode: str) -> Relation:
    """The one relation a direct mode groups by.

    >>> direct_relation("time").name
    'sample_collected_at_timepoint'
    """
    spec = MODE.get(mode)
    if spec is None or spec.kind != "direct":
        raise KeyError(f"{mode!r} is not a direct mode")
    return next(r for r in RELATIONS if r.mode == mode)


def relations_for_mode(mode: str) -> tuple[Relation, ...]:
    """Relations a (non-composite) mode follows, in table order.

    Relatedness closes over subjects as well as kinship: two samples of one
    subject, or of two related subjects, share a group.

    >>> [r.name for r in relations_for_mode("spatial")]
    ['sample_adjacent_to']
    """
    spec = MODE.get(mode)
    if spec is None or spec.kind == "composite":
        raise KeyError(f"{mode!r} is not a direct or component mode")
    if mode == "relatedness":
        return (RELATION[RelationName.SAMPLE_BELONGS_TO_SUBJECT], RELATION[RelationName.SUBJECT_RELATED_TO])
    return tuple(r for r in RELATIONS if r.mode == mode)


def relation_names(modes: Iterable[str]) -> tuple[str, ...]:
    """The names of the relations ``modes`` follow, each once, in order: one mode's own, or a composite's over
    the modes it combines.

    >>> relation_names(["relatedness", "duplicate"])
    ('sample_belongs_to_subject', 'subject_related_to', 'sample_duplicate_of')
    """
    return tuple(dict.fromkeys(r.name for m in modes for r in relations_for_mode(m)))


def declared_modes(has_relation: Callable[[str], bool]) -> tuple[str, ...]:
    """The modes a composite can combine whose own relation (the last they follow) a graph declares, in table
    order: what a composite over every declared mode combines."""
    return tuple(m for m in COMBINABLE_MODES if has_relation(relations_for_mode(m)[-1].name))


#: KING kinship-coefficient cut-offs by degree of relationship (inclusive lower bounds).
KING_DEGREE_THRESHOLDS: dict[str, float] = {
    "duplicate": 0.354,
    "first": 0.177,
    "second": 0.0884,
    "third": 0.0442,
}


# --------------------------------------------------------------------------- how study teams name role columns
#: How study teams name the column of each role: what ``depgraph init`` maps, and what ``from_metadata`` warns about
#: when such a column is left unmapped. Each spelling is a column name reduced by :func:`column_words` (lower case,
#: letters and digits only): whole names first (``visit_number`` is an order, ``time_index``), then the name without
#: its trailing id words (``Subject_ID``, ``patientNumber`` and ``participant code`` are a subject). ``family`` has
#: no column of its own: relatives are declared by kinship, which a family column cannot replace.
ROLE_SPELLINGS: dict[str, tuple[str, ...]] = {
    "sample_id": ("sample", "samplename", "specimen", "biosample", "aliquot", "vial", "tube", "id"),
    "subject_id": ("subject", "subj", "patient", "pid", "participant", "individual", "iid", "person", "donor", "eid",
                   "animal", "mrn"),
    "batch_id": ("batch", "plate", "run", "flowcell", "lane", "processingbatch", "sequencingbatch",
                 "extractionbatch"),
    "study_id": ("study", "cohort", "dataset", "project", "trial"),
    "site_id": ("site", "centre", "center", "hospital", "clinic", "institution", "assessmentcentre",
                "assessmentcenter", "recruitmentsite"),
    "timepoint_id": ("timepoint", "visit", "visitname", "wave", "session", "followup"),
    "time_index": ("timeindex", "visitnumber", "visitnum", "visitno", "visitindex", "visitday", "visitmonth", "day",
                   "week", "month", "dayssincebaseline", "daysfrombaseline", "monthssincebaseline", "time"),
    "assay_id": ("assay", "assaytype", "modality"),
    "region_id": ("region", "area", "zone"),
    "platform_id": ("platform", "instrument", "scanner", "sequencer", "machine", "array", "device"),
    "featureset_id": ("featureset", "featuresetname"),
    "outcome_id": ("outcome", "label", "diagnosis", "dx", "phenotype", "class", "target", "response", "casecontrol",
                   "disease"),
    "family": ("family", "fid", "pedigree", "kindred", "household"),
}  # fmt: skip
#: Trailing words that only say a column holds identifiers (``patient_id``, ``visit number``, ``site code``).
ID_WORDS: frozenset[str] = frozenset({"id", "ids", "identifier", "no", "nr", "num", "number", "code", "key"})
_WORD = re.compile(r"[A-Z]+(?![a-z])|[A-Z]?[a-z]+|\d+")


def column_words(name: str) -> list[str]:
    """A column name's words, lower case: split at blanks, punctuation and camel case.

    >>> column_words("SubjectID"), column_words("patient-number"), column_words("Visit No.")
    (['subject', 'id'], ['patient', 'number'], ['visit', 'no'])
    """
    return [w.lower() for w in _WORD.findall(str(name))]


def role_of_column(name: str) -> str | None:
    """The role a column's name says it holds — a canonical column, or ``family`` — or None.

    >>> role_of_column("Subject_ID"), role_of_column("visit_number"), role_of_column("Visit"), role_of_column("age")
    ('subject_id', 'time_index', 'timepoint_id', None)
    """
    words = column_words(name)
    whole = "".join(words)
    stem = list(words)
    while len(stem) > 1 and stem[-1] in ID_WORDS:
        stem.pop()
    for spelling in (whole, "".join(stem)):
        if spelling in _ROLE_BY_SPELLING:
            return _ROLE_BY_SPELLING[spelling]
    return None


#: Every spelling of :data:`ROLE_SPELLINGS`, and the canonical column names themselves, to the role they name.
_ROLE_BY_SPELLING: dict[str, str] = {
    **{spelling: role for role, spellings in ROLE_SPELLINGS.items() for spelling in spellings},
    **{"".join(column_words(column)): column for column in CANONICAL_COLUMNS},
}
