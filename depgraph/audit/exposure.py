"""Which declared dependencies a grouping keeps whole, and which a split lets cross.

* :func:`exposure` — per relation of a study graph, how many dependencies a
  spec's groups keep whole (``kept_whole``), how many they leave spread over
  two or more groups (``spread_over_groups``: a split may cut them) and, when
  the spec carries folds, how many cross a split (``crossing``); for batch,
  study and site blocks, how the folds distribute them (χ², Cramér's V).
* :func:`assignment_roles` — reads a split made elsewhere (a table with a
  fold or train/test column per sample) as splits over a spec's samples;
  ``exposure(graph, spec, assignment)`` judges that split instead of the
  spec's own folds.
* :func:`straddling_groups` — checks a split made elsewhere (a table with a
  fold or train/test column per sample) against a spec: every spec group
  whose samples fall on both sides of the split is listed.

>>> import pandas as pd
>>> from depgraph.spec.model import Constraint, SplitSpec
>>> spec = SplitSpec.build(pd.DataFrame({"sample_id": ["a", "b", "c"], "group_id": ["g1", "g1", "g2"]}),
...                        constraint=Constraint(mode="subject"), recommended_resampling="grouped_cv")
>>> made_elsewhere = pd.DataFrame({"sample_id": ["a", "b", "c"], "fold": [0, 1, 1]})
>>> straddling_groups(spec, made_elsewhere).groups["group_id"].tolist()
['g1']
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from depgraph.common.arguments import instance, whole_number
from depgraph.common.arrays import distinct
from depgraph.common.display import html_block, text_table
from depgraph.common.identifiers import normalise_keys
from depgraph.derivation.partition import Partition
from depgraph.engines import engine_of, stage
from depgraph.errors import DepgraphError, describe_ids
from depgraph.graph.model import StudyGraph
from depgraph.io.files import describe_source, read_table
from depgraph.spec.model import SampleIndex, SplitSpec
from depgraph.vocab import DEPENDENCY_MODES, DIRECT_MODES, RELATION, RELATIONS, NodeType, RelationName, direct_relation

#: Split values that mean "not used" in an assignment table.
UNUSED = frozenset({"excluded", "exclude", "none", "unused", "-"})
#: Column names tried, in order, when the split column is not named.
SPLIT_COLUMNS = ("fold", "split", "role", "set", "partition")


@dataclass(frozen=True)
class StraddleReport:
    """Groups that straddle an assignment, with the values their samples took."""

    groups: pd.DataFrame  # group_id, n_samples, values (sorted, joined with ", ")
    n_checked: int
    n_unused: int
    id_column: str
    split_column: str

    @property
    def clean(self) -> bool:
        return self.groups.empty


def straddling_groups(
    spec: SplitSpec,
    assignment: object,
    id_column: str = "sample_id",
    split_column: str | None = None,
    *,
    encoding: str | None = None,
) -> StraddleReport:
    """The spec groups whose samples take more than one value of ``split_column``.

    Two different folds, or train and test, put a group on both sides of some
    split. Rows whose value is missing or ``excluded`` are not checked; rows
    naming samples the spec does not have are a ``reference`` error. An
    assignment file that is not UTF-8 text needs its ``encoding`` (e.g. ``"latin-1"``).
    """
    instance(spec, SplitSpec, "straddling_groups: the spec")
    rows, values, n_unused, split_column = _read_assignment(spec, assignment, id_column, split_column, encoding)
    frame = pd.DataFrame(
        {
            "group_id": spec.samples["group_id"].to_numpy(dtype=object)[rows],
            "value": values,
        }
    )
    distinct = frame.groupby("group_id", sort=True)["value"].agg(lambda v: sorted(set(v)))
    sizes = frame.groupby("group_id", sort=True).size()
    crossing = distinct[distinct.map(len) > 1]
    groups = pd.DataFrame(
        {
            "group_id": crossing.index.to_numpy(dtype=object),
            "n_samples": sizes.loc[crossing.index].to_numpy(np.int64),
            "values": [", ".join(v) for v in crossing],
        }
    )
    return StraddleReport(groups, len(rows), n_unused, id_column, split_column)


def _read_assignment(
    spec: SplitSpec | SampleIndex,
    assignment: object,
    id_column: str,
    split_column: str | None,
    encoding: str | None = None,
) -> tuple[np.ndarray, np.ndarray, int, str]:
    """Spec positions and split values of the used rows of an assignment table,
    the number of unused rows, and the split column read."""
    for label, name in (("id_column", id_column), ("split_column", split_column)):
        if not isinstance(name, str) and (label == "id_column" or name is not None):
            raise DepgraphError("invalid_argument", f"{label} takes one column name, not {name!r}")
    table = read_table(assignment, "assignment", encoding=encoding)
    what = describe_source(assignment, "assignment")  # the file named once in every message below
    if id_column not in table.columns:
        raise DepgraphError(
            "schema", f"{what} has no {id_column!r} column (columns: {describe_ids(table.columns, 12)})"
        )
    if split_column is None:
        split_column = next((c for c in SPLIT_COLUMNS if c in table.columns), None)
        if split_column is None:
            raise DepgraphError(
                "schema",
                f"{what} has none of the split columns {describe_ids(SPLIT_COLUMNS)}; name yours with --split-column",
            )
    elif split_column not in table.columns:
        raise DepgraphError("schema", f"{what} has no {split_column!r} column")
    ids = normalise_keys(table[id_column], id_column)
    values = normalise_keys(table[split_column], split_column)
    unused = values.isna() | values.str.lower().isin(UNUSED)
    try:
        positions = spec.positions(ids, what, skip_missing=True)  # a row without an id is in no split
    except DepgraphError as error:  # worded for a table: the samples it names that the spec lacks
        if error.code != "reference":
            raise
        unknown, n_unknown = error.details["ids"], error.details["n_ids"]
        raise DepgraphError(
            "reference",
            f"{what} names {n_unknown} sample(s) not in the spec: {describe_ids(unknown, total=n_unknown)}",
            ids=unknown,
        ) from None
    used = ~unused.to_numpy() & (positions >= 0)
    rows = positions[used]
    repeated = pd.Series(rows).duplicated()
    if repeated.any():
        twice = spec.sample_ids[distinct(rows[repeated.to_numpy()])].tolist()
        raise DepgraphError("duplicate_id", f"{what} lists sample(s) {describe_ids(twice)} twice", ids=twice)
    return rows, values[used].to_numpy(dtype=object), int(unused.sum()), split_column


def assignment_roles(
    spec: SplitSpec | SampleIndex,
    assignment: object,
    id_column: str = "sample_id",
    split_column: str | None = None,
    *,
    encoding: str | None = None,
) -> np.ndarray:
    """The splits an assignment made elsewhere defines, as role codes per spec
    sample (0 train, 1 test, 2 excluded; one row per split).

    A column holding only ``train`` and ``test`` (any case) is one holdout
    split; any other values are folds, each fold the test side of one split
    with the other folds as its training side. Samples missing from the
    table, or marked unused, are excluded from every split. A file that is
    not UTF-8 text needs its ``encoding``.

    >>> import pandas as pd
    >>> from depgraph.spec.model import Constraint, SplitSpec
    >>> spec = SplitSpec.build(pd.DataFrame({"sample_id": ["a", "b", "c"], "group_id": ["g1", "g1", "g2"]}),
    ...                        constraint=Constraint(mode="subject"), recommended_resampling="grouped_cv")
    >>> assignment_roles(spec, pd.DataFrame({"sample_id": ["a", "b", "c"], "fold": [1, 2, 2]})).tolist()
    [[1, 0, 0], [0, 1, 1]]
    >>> assignment_roles(spec, pd.DataFrame({"sample_id": ["a", "c"], "set": ["Train", "test"]})).tolist()
    [[0, 2, 1]]
    """
    rows, values, _, split_column = _read_assignment(spec, assignment, id_column, split_column, encoding)
    if not len(rows):
        raise DepgraphError("empty_input", f"the assignment puts no sample in a split ({split_column!r} all unused)")
    lowered = np.array([str(v).lower() for v in values], dtype=object)
    if len(values) and set(lowered) <= {"train", "test"}:
        for side in ("test", "train"):  # a holdout with an empty side is no split to judge: "nothing crosses" is empty
            if side not in set(lowered):
                raise DepgraphError(
                    "invalid_value",
                    f"the assignment's {split_column!r} column marks no sample {side!r}: a split needs both sides",
                    column=split_column,
                )
        roles = np.full((1, spec.n_samples), 2, dtype=np.int8)
        roles[0, rows] = np.where(lowered == "test", 1, 0)
        return roles
    codes, folds = pd.factorize(pd.Series(values, dtype=object), sort=True)
    if len(folds) < 2:
        raise DepgraphError(
            "invalid_value",
            f"the assignment's {split_column!r} column holds one fold ({folds[0]!r}): testing it leaves no sample to "
            "train on, so there is no split to judge",
            column=split_column,
        )
    roles = np.full((codes.max(initial=-1) + 1, spec.n_samples), 2, dtype=np.int8)
    for fold in range(len(roles)):
        roles[fold, rows] = np.where(codes == fold, 1, 0)
    return roles


# --------------------------------------------------------------------------- exposure of a spec
#: Relations that do not link samples, left out: those no mode follows (an ordering, a label, a feature set's
#: provenance), except feature sets themselves, which samples processed together share.
SKIPPED_RELATIONS = frozenset(r.name for r in RELATIONS if r.mode is None) - {RelationName.SAMPLE_USES_FEATURESET}
#: Relations that put samples in blocks (batch, study, timepoint, site…: the direct modes other than the
#: dependency modes), in table order: expected to cross when the grouping does not follow them, and balanced
#: across folds.
BLOCK_RELATIONS: tuple[str, ...] = tuple(direct_relation(m).name for m in DIRECT_MODES if m not in DEPENDENCY_MODES)


#: Relations whose samples share something rather than depend on each other: blocks, and feature sets (a
#: processing run many samples share; validation reports shared feature sets). A grouping that does not follow
#: them is expected to let them cross; blocks are judged by how the folds balance them instead.
SHARED_RELATIONS = frozenset({*BLOCK_RELATIONS, RelationName.SAMPLE_USES_FEATURESET})


#: The exposure table's columns renamed in depgraph 0.2 (old name -> new name). The old names still read the
#: new columns, with a DeprecationWarning, until depgraph 0.3.
RENAMED_COLUMNS: dict[str, str] = {"severed": "kept_whole", "exposed": "spread_over_groups"}


def _renamed(key: Any, stacklevel: int = 3) -> Any:
    """``key`` with the old column names replaced by the new ones, warning for each old name used
    (``stacklevel``: the caller's frame, seen from here)."""
    if isinstance(key, str):
        if key in RENAMED_COLUMNS:
            warnings.warn(
                f"the exposure table's column {key!r} is now {RENAMED_COLUMNS[key]!r}; the old name works until "
                "depgraph 0.3",
                DeprecationWarning,
                stacklevel=stacklevel,
            )
            return RENAMED_COLUMNS[key]
        return key
    if isinstance(key, (tuple, list)):
        return type(key)(_renamed(k, stacklevel + 2) for k in key)  # + the generator's frame and this one
    return key


class _RenamedLoc:
    """``table.loc`` that also takes the old column names (deprecated)."""

    def __init__(self, table: pd.DataFrame) -> None:
        self._loc = pd.DataFrame.loc.__get__(table)

    def __getitem__(self, key: Any) -> Any:
        return self._loc[_renamed(key)]

    def __setitem__(self, key: Any, value: Any) -> None:
        self._loc[_renamed(key)] = value

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        return self._loc(*args, **kwargs)

    def __getattr__(self, name: str) -> Any:  # pandas' own methods reach into the indexer
        return getattr(self._loc, name)


class ExposureTable(pd.DataFrame):
    """The exposure table: a DataFrame that still reads the columns' old names
    (``severed`` for ``kept_whole``, ``exposed`` for ``spread_over_groups``)
    through ``[]``, ``.loc`` and attribute access, with a DeprecationWarning,
    until depgraph 0.3. Frames made from it (``set_index``, slices) keep that.

    >>> import warnings
    >>> t = ExposureTable({"relation": ["sample_belongs_to_subject"], "kept_whole": [3]})
    >>> with warnings.catch_warnings(record=True) as heard:
    ...     warnings.simplefilter("always")
    ...     t["severed"].tolist(), heard[0].category.__name__
    ([3], 'DeprecationWarning')
    """

    @property
    def _constructor(self) -> type[ExposureTable]:
        return ExposureTable

    def __getitem__(self, key: Any) -> Any:
        return super().__getitem__(_renamed(key))

    def __getattr__(self, name: str) -> Any:
        if name in RENAMED_COLUMNS:
            return super().__getitem__(_renamed(name))
        return super().__getattr__(name)

    @property
    def loc(self) -> Any:  # type: ignore[override]
        return _RenamedLoc(self)


@dataclass(frozen=True)
class ExposureReport:
    """Per declared relation: whether the grouping follows it, how many
    dependencies the grouping keeps whole (``kept_whole``: all their samples in
    one group, so no split of whole groups can cut them), how many it leaves
    spread over two or more groups (``spread_over_groups``: a split may cut
    them) and, when the spec carries folds, how many a split actually cuts
    (``crossing``: a sample on the train side and one on the test side); and
    for block relations (batch, study, site…) how the folds distribute the
    blocks (χ², Cramér's V). The columns were called ``severed`` and
    ``exposed`` before depgraph 0.2; :class:`ExposureTable` still reads those
    names, with a DeprecationWarning.

    **Nothing crosses** has one definition, used by :attr:`nothing_crosses`,
    :meth:`leaking_relations`, :meth:`verdict`, ``depgraph check --graph``, the
    HTML report and the demo: no dependency of a relation that *must stay
    whole* crosses a split (without folds: none is spread over groups). A relation must
    stay whole when it is a dependency — a subject's samples, related
    subjects, spatial neighbours, duplicates — whether or not the grouping
    follows it, or when the grouping follows it (a batch, under batch
    grouping). Blocks and feature sets the grouping does not follow
    (:data:`SHARED_RELATIONS`) are expected to cross."""

    table: pd.DataFrame
    blocks: pd.DataFrame

    def __post_init__(self) -> None:
        if not isinstance(self.table, ExposureTable):  # a table made by hand reads the old names too
            object.__setattr__(self, "table", ExposureTable(self.table))

    @property
    def judged(self) -> str:
        """The column judged: ``"crossing"`` when a split was judged (the spec's folds or an assignment), else
        ``"spread_over_groups"`` (``"exposed"`` before depgraph 0.2)."""
        return "crossing" if self.table["crossing"].notna().any() else "spread_over_groups"

    @property
    def nothing_crosses(self) -> bool:
        """No dependency of a relation that must stay whole crosses any split (without folds: none is
        spread over groups); see the class docstring."""
        return not self.leaking_relations()

    def crossing_relations(self) -> list[str]:
        """Relations with at least one dependency crossing a split (or, without folds, spread over groups), blocks
        included."""
        column = self.judged
        return self.table.loc[self.table[column].fillna(0) > 0, "relation"].tolist()

    def leaking_relations(self) -> list[str]:
        """Crossing relations that must stay whole: dependencies (followed or not) and followed relations.
        Empty exactly when :attr:`nothing_crosses`."""
        followed = set(self.table.loc[self.table["followed"], "relation"])
        return [r for r in self.crossing_relations() if r not in SHARED_RELATIONS or r in followed]

    def verdict(self) -> str:
        """One line saying whether anything that must stay whole crosses, and what: the wording
        ``depgraph check --graph``, the HTML report and the demo share.

        >>> import pandas as pd
        >>> table = pd.DataFrame({"relation": ["sample_belongs_to_subject", "subject_related_to"],
        ...                       "followed": [True, False], "crossing": [0, 11], "spread_over_groups": [0, 11]})
        >>> ExposureReport(table, pd.DataFrame()).verdict()
        'dependencies cross a split: subject_related_to (11, not followed); derive with them included ...'
        """
        split = self.judged == "crossing"
        followed = self._followed()
        leaks = self.leaking_relations()
        if not leaks:
            whole = [r for r in self.table["relation"] if r not in SHARED_RELATIONS or r in followed]
            return f"nothing crosses: no dependency of {', '.join(whole) or 'a declared relation'} " + (
                "crosses a split" if split else "is spread over two groups"
            )
        counts = self.table.set_index("relation")[self.judged]
        named = ", ".join(f"{r} ({int(counts[r])}, {'followed' if r in followed else 'not followed'})" for r in leaks)
        advice = []
        if any(r not in followed for r in leaks):
            advice.append("derive with them included (composite mode) to keep them together")
        if any(r in followed for r in leaks):
            advice.append("the split breaks groups the grouping keeps whole")
        head = "dependencies cross a split" if split else "dependencies are spread over groups (a split may cut them)"
        return f"{head}: {named}; {'; '.join(advice)}"

    def _followed(self) -> set[str]:
        return set(self.table.loc[self.table["followed"], "relation"])

    def __repr__(self) -> str:
        """The verdict, then the per-relation table and the block balance as text, built from :attr:`table`
        and :attr:`blocks` whatever their columns (list-valued columns, such as per-split counts, left out)."""
        parts = [f"ExposureReport: {self.verdict()}", text_table(self.table)]
        if len(self.blocks):
            parts += ["blocks across the folds:", text_table(self.blocks)]
        return "\n".join(filter(None, parts))

    def _repr_html_(self) -> str:
        return html_block(
            "ExposureReport", [self.verdict()], [("per relation", self.table), ("blocks across the folds", self.blocks)]
        )

    def to_dict(self) -> dict:
        return {
            "nothing_crosses": self.nothing_crosses,
            "leaking_relations": self.leaking_relations(),
            "relations": self.table.astype(object).where(self.table.notna(), None).to_dict("records"),
            "blocks": self.blocks.astype(object).where(self.blocks.notna(), None).to_dict("records"),
        }


def exposure(
    graph: StudyGraph,
    spec: SplitSpec | Partition,
    assignment: object | None = None,
    *,
    id_column: str = "sample_id",
    split_column: str | None = None,
    examples: int = 3,
    encoding: str | None = None,
) -> ExposureReport:
    """Which of ``graph``'s declared dependencies ``spec`` keeps whole, leaves
    spread over groups, and lets cross a split: the spec's own folds or, when
    ``assignment`` is given, a split made elsewhere (a table of sample ids and
    a fold or train/test column, read as in :func:`assignment_roles`, in
    ``encoding`` when its file is not UTF-8 text). A
    :class:`~depgraph.derivation.groups.Partition` is judged as the spec it makes.

    Dependencies are counted where they link at least two of the spec's
    samples: an entity (subject, batch, study, timepoint, site…) shared by
    several samples, or a pair (related subjects, adjacent samples,
    duplicates). Crossing means a sample on the train side and one on the test
    side of the same split; excluded samples are on neither.

    A :class:`~depgraph.spark.graph.SparkGraph` with a
    :class:`~depgraph.spark.spec.SparkSpec` (or a ``SparkPartition``) is
    counted on Spark (:mod:`depgraph.spark.exposure`), giving the same report.

    >>> import pandas as pd
    >>> from depgraph import add_kinship, derive, from_metadata
    >>> g = from_metadata(pd.DataFrame({"sample_id": ["a", "b", "c", "d"], "subject_id": ["P1", "P1", "P2", "P3"]}))
    >>> g = add_kinship(g, pd.DataFrame({"id1": ["P1"], "id2": ["P2"], "kinship": [0.25]}), "first")
    >>> spec = SplitSpec.from_partition(derive(g, "subject"), g)
    >>> exposure(g, spec).table[["relation", "kept_whole", "spread_over_groups"]].values.tolist()
    [['sample_belongs_to_subject', 1, 0], ['subject_related_to', 0, 1]]
    """
    examples = whole_number(examples, "examples", minimum=0)
    engine = engine_of(graph) or engine_of(spec)
    if engine is not None:  # a Spark graph or spec: counted on its engine
        return stage(engine, "exposure").exposure_request(
            graph, spec, assignment, id_column=id_column, split_column=split_column, examples=examples,
            encoding=encoding,
        )  # fmt: skip
    instance(graph, StudyGraph, "exposure: the graph")
    instance(spec, (SplitSpec, Partition), "exposure: the spec")
    if isinstance(spec, Partition):
        spec = SplitSpec.from_partition(spec, graph)
    start, stop = graph.type_range(NodeType.SAMPLE)
    positions = graph.locate(NodeType.SAMPLE, spec.sample_ids)
    if (positions < 0).any():
        unknown = spec.sample_ids[positions < 0]
        raise DepgraphError(
            "reference", f"the spec holds {len(unknown)} sample(s) the graph lacks: {describe_ids(unknown)}"
        )
    group = np.full(stop - start, -1, dtype=np.int64)  # spec group code per graph sample (-1: not in the spec)
    group[positions - start] = spec.group_codes()
    if assignment is None:
        spec_roles = _spec_roles(spec)
    else:
        spec_roles = assignment_roles(spec, assignment, id_column, split_column, encoding=encoding)
    roles = np.full((len(spec_roles), stop - start), -1, dtype=np.int8)  # (splits, graph samples): -1 outside
    roles[:, positions - start] = spec_roles
    keys = graph.key_values
    rows = []
    for relation in graph.relation_counts():
        if relation in SKIPPED_RELATIONS:
            continue
        rel = RELATION[relation]
        src, dst, _ = graph.relation_edges(relation)
        if rel.source == NodeType.SAMPLE and rel.target != NodeType.SAMPLE:
            rows.append(_entity_row(relation, src - start, dst, group, roles, keys, examples))
        elif rel.source == NodeType.SAMPLE:
            rows.append(_pair_row(relation, src - start, dst - start, group, roles, keys, start, examples))
        else:  # subject pairs: through each subject's samples
            rows.append(_subject_pair_row(graph, relation, src, dst, group, roles, keys, start, examples))
    first_repeat = spec_roles if assignment is not None else _spec_roles(spec, first_repeat_only=True)
    return exposure_report(rows, spec.constraint.relations, _block_balance(graph, first_repeat, positions - start))


#: The columns of a row of the exposure table, as each engine counts it (``followed`` is added from the spec).
ROW_COLUMNS = ("relation", "unit", "linked", "kept_whole", "spread_over_groups", "crossing", "crossing_by_split",
               "examples")  # fmt: skip


def exposure_report(rows: list[dict], followed: list[str], blocks: pd.DataFrame) -> ExposureReport:
    """The report of ``rows`` (one per relation, :data:`ROW_COLUMNS`), the relations the spec's grouping
    ``followed``, and the block balance: what every engine's counts become."""
    table = ExposureTable(rows, columns=list(ROW_COLUMNS))
    table.insert(1, "followed", table["relation"].isin(followed))
    return ExposureReport(table, blocks)


def _spec_roles(spec: SplitSpec, first_repeat_only: bool = False) -> np.ndarray:
    """Role codes (splits × spec samples) of the spec's own folds; none without folds."""
    if spec.folds is None:
        return np.empty((0, spec.n_samples), dtype=np.int8)
    splits = spec.folds.splits
    if first_repeat_only and splits:
        splits = [s for s in splits if s.repeat == splits[0].repeat]
    return np.array([split.roles(spec.n_samples) for split in splits], dtype=np.int8).reshape(-1, spec.n_samples)


def _spread(owner: np.ndarray, value: np.ndarray, n_owners: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Per owner: how many members, and the lowest and highest value among them."""
    count = np.bincount(owner, minlength=n_owners)
    low = np.full(n_owners, np.iinfo(np.int64).max, dtype=np.int64)
    high = np.full(n_owners, -1, dtype=np.int64)
    np.minimum.at(low, owner, value)
    np.maximum.at(high, owner, value)
    return count, low, high


def _sides(owner: np.ndarray, sample: np.ndarray, role: np.ndarray, n_owners: int) -> tuple[np.ndarray, np.ndarray]:
    """Per owner, in one split: has a member on the train side; has one on the test side."""
    r = role[sample]
    train = np.bincount(owner[r == 0], minlength=n_owners) > 0
    test = np.bincount(owner[r == 1], minlength=n_owners) > 0
    return train, test


def _crossing_entities(owner: np.ndarray, sample: np.ndarray, roles: np.ndarray, n_owners: int) -> list[np.ndarray]:
    """Per split, the owners with a member on each side."""
    return [np.logical_and(*_sides(owner, sample, role, n_owners)) for role in roles]


def _entity_row(relation, sample, entity, group, roles, keys, examples) -> dict:
    inside = group[sample] >= 0
    sample, entity = sample[inside], entity[inside]
    codes, entities = pd.factorize(entity)
    n = len(entities)
    count, low, high = _spread(codes, group[sample], n)
    linking = count > 1
    spread = linking & (low != high)
    row = {
        "relation": relation,
        "unit": "entities",
        "linked": int(linking.sum()),
        "kept_whole": int((linking & ~spread).sum()),
        "spread_over_groups": int(spread.sum()),
        "crossing": None,
        "crossing_by_split": None,
        "examples": _ids_text(keys, entities[spread], examples),
    }
    if len(roles):
        crossing = _crossing_entities(codes, sample, roles, n)
        row["crossing_by_split"] = [int(c.sum()) for c in crossing]
        row["crossing"] = int(np.logical_or.reduce(crossing).sum())
        if row["crossing"]:
            row["examples"] = _ids_text(keys, entities[np.logical_or.reduce(crossing)], examples)
    return row


def _pair_row(relation, a, b, group, roles, keys, start, examples) -> dict:
    inside = (group[a] >= 0) & (group[b] >= 0)
    a, b = a[inside], b[inside]
    spread = group[a] != group[b]
    row = {
        "relation": relation,
        "unit": "pairs",
        "linked": len(a),
        "kept_whole": int((~spread).sum()),
        "spread_over_groups": int(spread.sum()),
        "crossing": None,
        "crossing_by_split": None,
        "examples": _pairs_text(keys, a[spread] + start, b[spread] + start, examples),
    }
    if len(roles):
        crossing = [((r[a] == 0) & (r[b] == 1)) | ((r[a] == 1) & (r[b] == 0)) for r in roles]
        row["crossing_by_split"] = [int(c.sum()) for c in crossing]
        any_split = np.logical_or.reduce(crossing)
        row["crossing"] = int(any_split.sum())
        if row["crossing"]:
            row["examples"] = _pairs_text(keys, a[any_split] + start, b[any_split] + start, examples)
    return row


def _subject_pair_row(graph, relation, subj_a, subj_b, group, roles, keys, start, examples) -> dict:
    s_src, s_dst, _ = graph.relation_edges(RelationName.SAMPLE_BELONGS_TO_SUBJECT)
    sample = s_src - start
    inside = group[sample] >= 0
    sample, subject = sample[inside], s_dst[inside]
    n = graph.n_nodes
    count, low, high = _spread(subject, group[sample], n)
    has = (count[subj_a] > 0) & (count[subj_b] > 0)
    subj_a, subj_b = subj_a[has], subj_b[has]
    whole = (low[subj_a] == high[subj_a]) & (low[subj_b] == high[subj_b]) & (low[subj_a] == low[subj_b])
    row = {
        "relation": relation,
        "unit": "pairs",
        "linked": len(subj_a),
        "kept_whole": int(whole.sum()),
        "spread_over_groups": int((~whole).sum()),
        "crossing": None,
        "crossing_by_split": None,
        "examples": _pairs_text(keys, subj_a[~whole], subj_b[~whole], examples),
    }
    if len(roles):
        crossing = []
        for r in roles:
            train, test = _sides(subject, sample, r, n)
            crossing.append((train[subj_a] & test[subj_b]) | (test[subj_a] & train[subj_b]))
        row["crossing_by_split"] = [int(c.sum()) for c in crossing]
        any_split = np.logical_or.reduce(crossing)
        row["crossing"] = int(any_split.sum())
        if row["crossing"]:
            row["examples"] = _pairs_text(keys, subj_a[any_split], subj_b[any_split], examples)
    return row


def _ids_text(keys: np.ndarray, nodes: np.ndarray, limit: int) -> str:
    """The first ``limit`` ids of ``nodes`` in sorted order: examples a reader scans at once, the same whatever
    order the graph holds its nodes in.

    >>> _ids_text(np.array(["B5", "B4", "B6", "B1"], dtype=object), np.array([0, 1, 2]), 2)
    'B4, B5'
    """
    ids = np.sort(np.asarray(keys[nodes], dtype=str))
    return ", ".join(ids[:limit].tolist())


def _pairs_text(keys: np.ndarray, a: np.ndarray, b: np.ndarray, limit: int) -> str:
    """The first ``limit`` pairs of nodes ``a[i]``-``b[i]`` in sorted order, each written ``low~high`` (the pair
    relations are undirected): the same whatever order the graph holds its edges and their ends in.

    >>> _pairs_text(np.array(["S3", "S1", "S2"], dtype=object), np.array([0, 2]), np.array([1, 1]), 3)
    'S1~S2, S1~S3'
    """
    x, y = np.asarray(keys[a], dtype=str), np.asarray(keys[b], dtype=str)
    low, high = np.where(x <= y, x, y), np.where(x <= y, y, x)
    order = np.lexsort((high, low))[:limit]
    return ", ".join(f"{lo}~{hi}" for lo, hi in zip(low[order].tolist(), high[order].tolist(), strict=True))


def _block_balance(graph: StudyGraph, roles: np.ndarray, rows: np.ndarray) -> pd.DataFrame:
    """χ² and Cramér's V of test fold (or, for one holdout split, test side
    against train side) against each block relation."""
    if not len(roles):
        return block_balance([])
    fold = np.full(roles.shape[1], -1, dtype=np.int64)
    for i, role in enumerate(roles):
        fold[role == 1] = i
    if len(roles) == 1:  # a holdout: test side against train side
        fold[roles[0] == 0] = 1
    counts = {}
    for relation in BLOCK_RELATIONS:
        if graph.has_relation(relation):
            block = graph.sample_targets(relation)[rows]
            used = (block >= 0) & (fold >= 0)
            counts[relation] = pd.crosstab(fold[used], block[used]).to_numpy()
    return block_balance(list(counts.items()))


#: The columns of the block balance table.
BLOCK_COLUMNS = ("relation", "blocks", "splits", "chi2", "dof", "p_value", "cramers_v")


def block_balance(counts: list[tuple[str, np.ndarray]]) -> pd.DataFrame:
    """The block balance table of each block relation's fold × block counts (folds as rows, in fold order; blocks
    as columns), as every engine counts them: χ² (no continuity correction) and Cramér's
    V where there are at least two folds and two blocks."""
    from scipy.stats import chi2_contingency

    out = []
    for relation, table in counts:
        if table.shape[0] < 2 or table.shape[1] < 2:
            continue
        chi2, p, dof, _ = chi2_contingency(table, correction=False)
        v = float(np.sqrt(chi2 / (table.sum() * (min(table.shape) - 1))))
        out.append([relation, table.shape[1], table.shape[0], float(chi2), int(dof), float(p), v])
    return pd.DataFrame(out, columns=list(BLOCK_COLUMNS))
