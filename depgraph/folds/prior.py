"""A balanced holdout's prior: the side an earlier spec gave each returning sample and entity, and the returning
samples that cannot keep it.

A holdout must stay a holdout as batches arrive: whatever the prior spec tested is tested again, whatever it trained
on is trained on again. The new spec's groups are matched to the prior two ways:

* by **sample**: a group holding samples the prior placed takes their side;
* by **entity**: a group that is an entity of a direct mode (``subject:P1``, or ``composite_subject:P1`` in a
  rule-based composite) and holds no sample the prior placed takes the side the prior gave the same entity
  (``subject:P1`` there too): a returning patient whose earlier samples were left out of the new spec (failed QC,
  withdrawn) is still on the side the prior gave them. Component groups (``relatedness:S3``) are named after a
  sample, not an entity: only their samples match. The two specs must share a sample: entity ids alone do not make
  one cohort (``P1`` of another study is someone else), and a prior sharing none is refused (``reference``).

When the new spec groups otherwise than the prior (a batch prior and a subject spec; new kinship merging two
families), a group may hold returning samples of both sides. It takes the side of most of them (an even split:
test, never train on it), and the others **cannot keep their side**: they are counted, named in the warning
``prior_side_changed`` (on stderr and in the spec's ``warnings``), never moved without a word::

    prior (by batch)        new spec (by subject)      P1 takes test (2 of 3):
    test:  S1 S2  [P1 P1]   subject:P1 = S1 S2 S3      S3 moves train → test,
    train: S3 S4  [P1 P2]   subject:P2 = S4            named in prior_side_changed
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from depgraph.common.arrays import sorted_categories, text_array
from depgraph.errors import DepgraphError, describe_ids
from depgraph.spec.model import ROLES, WARNING_ID_LIMIT, SplitSpec
from depgraph.vocab import DIRECT_MODES

#: The codes of a tested and of an excluded sample in a split (:meth:`~depgraph.spec.model.FoldSplit.roles`).
TESTED, EXCLUDED = ROLES.index("test"), ROLES.index("excluded")

#: A group id naming an entity: a direct mode's label (or ``composite_<mode>``), then the entity's key; a sample
#: the mode leaves unlinked is its own group (``subject:unlinked:S9``), not an entity.
_ENTITY = rf"^(?:composite_)?(?P<mode>{'|'.join(DIRECT_MODES)}):(?P<key>.+)$"


@dataclass(frozen=True)
class PriorSides:
    """Each group's side from the prior (``side``: 0 train, 1 test, -1 new), the groups whose returning samples the
    prior placed on both sides (``conflicts``), and the returning samples whose group takes the other side: how many
    (``n_moved``) and the first :data:`~depgraph.spec.model.WARNING_ID_LIMIT` of their ids in sample order
    (``moved_ids``)."""

    side: np.ndarray
    conflicts: int
    n_moved: int
    moved_ids: list[str]


def entity_ids(group_ids: np.ndarray) -> pa.Array:
    """``mode:key`` of each group id naming an entity (``composite_subject:P1`` is ``subject:P1``), else null; in
    Arrow, no Python string per id.

    >>> entity_ids(np.array(["subject:P1", "composite_subject:P1", "relatedness:S3", "batch:unlinked:S9"])).tolist()
    ['subject:P1', 'subject:P1', None, None]
    """
    found = pc.extract_regex(text_array(group_ids), _ENTITY)  # null where the id names no entity
    mode, key = pc.struct_field(found, [0]), pc.struct_field(found, [1])
    entity = pc.binary_join_element_wise(mode, key, ":")
    return pc.if_else(pc.starts_with(key, "unlinked:"), pa.scalar(None, pa.string()), entity)


def prior_sides(prior: SplitSpec, spec: SplitSpec, codes: np.ndarray, group_ids: np.ndarray) -> PriorSides:
    """The prior's side of each of ``spec``'s groups (``codes`` per sample into ``group_ids``); see the module."""
    prior_roles = prior_roles_of(prior)
    at = pc.index_in(text_array(spec.samples["sample_id"]), text_array(prior.samples["sample_id"]))
    shared = at.is_valid().to_numpy(zero_copy_only=False)
    if not shared.any():  # entity ids alone do not make one cohort: P1 names someone else in another study
        raise unrelated_prior(prior, spec.sample_ids[:5].tolist(), spec.n_samples, spec.pseudonymization is not None)
    role_here = np.full(len(shared), EXCLUDED, dtype=np.int8)
    role_here[shared] = prior_roles[at.drop_null().to_numpy()]
    known = role_here != EXCLUDED  # a sample the prior excluded (neither tested nor trained) was never placed
    tested_here = role_here == TESTED
    n = len(group_ids)
    tested = np.bincount(codes[known], weights=tested_here[known], minlength=n)
    seen = np.bincount(codes[known], minlength=n)
    side, conflicts = group_sides(prior, prior_roles, group_ids, tested, seen)
    moved = np.flatnonzero(known & (tested_here != (side[codes] == 1)))
    ids = spec.samples["sample_id"].to_numpy(dtype=object)[moved[:WARNING_ID_LIMIT]].tolist()
    return PriorSides(side, conflicts, len(moved), ids)


def group_sides(
    prior: SplitSpec, prior_roles: np.ndarray, group_ids: np.ndarray, tested: np.ndarray, seen: np.ndarray
) -> tuple[np.ndarray, int]:
    """Each group's side (``group_ids``, with ``seen`` returning samples the prior placed, ``tested`` of them on
    its test side) and how many groups the prior placed on both sides: a group takes the side of most of its
    returning samples (an even split: test), a group without any the side the prior gave the entity it names;
    what either engine counts, decided alike."""
    side = np.where(seen == 0, -1, (tested * 2 >= seen).astype(np.int64))  # an even split goes to test
    entity_side = _entity_sides(prior, prior_roles, group_ids)
    by_entity = (seen == 0) & (entity_side >= 0)
    return np.where(by_entity, entity_side, side), int(((tested > 0) & (tested < seen)).sum())


def prior_roles_of(prior: SplitSpec) -> np.ndarray:
    """Each of the prior's samples' role code in its single split (:data:`~depgraph.spec.model.ROLES`; a
    time-ordered prior excludes its gap: such a sample was never placed, so it keeps nothing)."""
    if prior.folds is None or not prior.folds.splits:
        raise DepgraphError("invalid_argument", "the prior spec carries no folds to keep")
    if len(prior.folds.splits) != 1:
        raise DepgraphError("invalid_argument", "the prior spec's folds are not a single holdout split")
    return prior.folds.splits[0].roles(prior.n_samples).astype(np.int8)


def _entity_sides(prior: SplitSpec, prior_roles: np.ndarray, group_ids: np.ndarray) -> np.ndarray:
    """The side the prior gave the entity each group names (-1: no entity, or one the prior did not place). A
    prior group is on one side (a reader checks it): its side is that of any sample it placed."""
    prior_codes, prior_groups = sorted_categories(text_array(prior.samples["group_id"]))
    group_side = np.full(len(prior_groups), -1, dtype=np.int64)
    placed = prior_roles != EXCLUDED
    group_side[prior_codes[placed]] = (prior_roles[placed] == TESTED).astype(np.int64)
    prior_entities = entity_ids(prior_groups)
    named = pc.and_(prior_entities.is_valid(), pa.array(group_side >= 0))
    # two prior groups naming one entity (subject:P1 and composite_subject:P1 in a hand-made prior): none kept
    table = pa.table({"entity": prior_entities.filter(named), "test": pa.array(group_side).filter(named)})
    per_entity = table.group_by("entity").aggregate([("test", "min"), ("test", "max")])
    agreed = pc.equal(per_entity["test_min"], per_entity["test_max"])
    entities, sides = per_entity["entity"].filter(agreed), per_entity["test_min"].filter(agreed)
    at = pc.index_in(entity_ids(group_ids), entities.combine_chunks())
    out = np.full(len(group_ids), -1, dtype=np.int64)
    matched = at.is_valid().to_numpy(zero_copy_only=False)
    out[matched] = sides.combine_chunks().to_numpy()[at.drop_null().to_numpy()]
    return out


def unrelated_prior(prior: SplitSpec, ids_here: list[str], n_here: int, pseudonymised_here: bool) -> DepgraphError:
    """Nothing to keep: a spec of another cohort, or ids pseudonymised in one spec only (``reference``); this
    spec's first ``ids_here`` of its ``n_here`` samples named."""
    privacy = "" if (prior.pseudonymization is None) == (not pseudonymised_here) else (
        "; one of the two has pseudonymised ids"
    )  # fmt: skip
    return DepgraphError(
        "reference",
        f"the prior spec shares no sample with this one (its samples: "
        f"{describe_ids(prior.sample_ids.tolist())}; here: {describe_ids(ids_here, total=n_here)}){privacy}: it "
        "was made from another cohort",
    )


def moved_message(prior: SplitSpec, sides: PriorSides) -> str:
    """What ``prior_side_changed`` says: how many returning samples change side, the first of them and why."""
    return (
        f"{sides.n_moved} returning sample(s) cannot keep the side the prior spec ({prior.digest[:19]}…) gave them: "
        f"{describe_ids(sides.moved_ids, total=sides.n_moved)}; their groups now hold samples the prior placed on "
        f"both sides ({sides.conflicts} group(s): the prior grouped otherwise, or samples have merged since), and "
        "each group takes the side of most of them"
    )
