"""What a derivation decides whatever engine computes its groups: the request checked, a composite's modes chosen
from the relations the graph declares, and the words of its findings and refusals.

:func:`depgraph.derive` checks a request here once, whatever engine runs it; both engines' parts —
:mod:`depgraph.derivation.groups` (numpy and scipy) and :mod:`depgraph.spark.derive` (Spark DataFrames) — word their
findings and refusals here, so a request one refuses the other refuses with the same code and the same words,
and a spec's findings (its digest covers them) are the same. Only the counting differs: each engine passes what it
counted (a partition's shape, the first ids of a finding and their number, the group sizes it can bring back).

>>> DeriveRequest.of("Composite", via=["subject", "batch"]).by_default
False
>>> mode_label("composite", "rule_based")
'composite/rule_based'
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

import numpy as np
import pandas as pd

from depgraph.common.arguments import flag, names, whole_number
from depgraph.common.identifiers import normalise_keys
from depgraph.derivation.shapes import GroupShape, collapse_finding
from depgraph.errors import DepgraphError, describe_ids
from depgraph.findings import Issue, finding
from depgraph.vocab import (
    COMBINABLE_MODES,
    MODE,
    RELATION,
    RelationName,
    canonical_name,
    declared_modes,
    mode_named,
    relation_names,
    relations_for_mode,
    strategy_named,
)

#: The builder step whose records (thresholds, radii) a mode's partition keeps in its parameters.
BUILDER_OF_MODE = {"relatedness": "add_kinship", "spatial": "add_spatial", "duplicate": "add_duplicates"}


class DeclaredGraph(Protocol):
    """What the request reads of a graph, on either engine: the relations it holds and its build history."""

    history: Any

    def has_relation(self, relation: str) -> bool: ...


class Derived(Protocol):
    """What the findings and refusals read of a partition, on either engine."""

    mode: str
    strategy: str | None
    relations: tuple[str, ...]
    via: tuple[str, ...]
    n_samples: int
    shape: GroupShape

    @property
    def n_groups(self) -> int: ...


@dataclass(frozen=True)
class DeriveRequest:
    """A derivation's arguments, checked: the mode by its canonical name, ``via`` and ``priority`` as names,
    ``min_groups`` a whole number, the flags booleans; strategy, via and priority only with ``composite``, and
    ``allow_single_group`` only with a composite over every declared mode (:attr:`by_default`)."""

    mode: str
    strategy: str | None = None
    via: tuple[str, ...] | None = None
    priority: tuple[str, ...] | None = None
    min_groups: int | None = None
    allow_unlinked: bool = False
    allow_single_group: bool = False

    @classmethod
    def of(
        cls,
        mode: str,
        *,
        strategy: str | None = None,
        via: Sequence[str] | None = None,
        priority: Sequence[str] | None = None,
        min_groups: int | None = None,
        allow_unlinked: bool = False,
        allow_single_group: bool = False,
    ) -> DeriveRequest:
        """The request of :func:`~depgraph.derivation.groups.derive`'s arguments, or ``invalid_argument``."""
        mode = mode_named(mode)  # "Subject" is subject
        request = cls(
            mode,
            strategy,
            None if via is None else tuple(names(via, "via")),
            None if priority is None else tuple(names(priority, "priority")),
            None if min_groups is None else whole_number(min_groups, "min_groups", minimum=1),
            flag(allow_unlinked, "allow_unlinked"),  # "no" would be true
            flag(allow_single_group, "allow_single_group"),
        )
        composite_only = (strategy, request.via, request.priority)
        if MODE[mode].kind != "composite" and any(x is not None for x in composite_only):
            raise DepgraphError(
                "invalid_argument", f"strategy, via and priority apply to mode 'composite', not {mode!r}"
            )
        if request.allow_single_group and not request.by_default:
            raise DepgraphError(
                "invalid_argument",
                "allow_single_group (--allow-single-group) applies to mode 'composite' without via or priority, not "
                "to " + request.label(),
            )
        return request

    @property
    def by_default(self) -> bool:
        """A composite over every mode the graph declares (neither via nor priority given)."""
        return self.mode == "composite" and self.via is None and self.priority is None

    def label(self) -> str:
        if self.mode != "composite":
            return f"mode {self.mode!r}"
        given = (("via", self.via), ("priority", self.priority))
        return "composite with " + " and ".join(f"{name}={','.join(value)}" for name, value in given if value)

    def composite(self, graph: DeclaredGraph) -> tuple[str, tuple[str, ...], tuple[str, ...]]:
        """A composite's strategy, its modes (``via``) and their order (``priority``; ``via`` for strict)."""
        strategy = "strict" if self.strategy is None else strategy_named(self.strategy)
        modes = via_modes(graph, self.via, self.priority)
        if strategy == "strict" and self.priority is not None:
            raise DepgraphError("invalid_argument", "priority applies to strategy 'rule_based', not 'strict'")
        return strategy, modes, priority_order(self.priority, modes)

    def refuse_too_few_groups(self, partition: Derived, single_group: Callable[[], DepgraphError]) -> None:
        """A default composite that merges every sample (``single_group`` words why), or fewer groups than
        ``min_groups``: ``too_few_groups``."""
        if self.by_default and not self.allow_single_group and partition.n_groups == 1 and partition.n_samples > 1:
            raise single_group()
        if self.min_groups is not None and partition.n_groups < self.min_groups:
            raise DepgraphError(
                "too_few_groups",
                f"mode {mode_label(partition.mode, partition.strategy)} leaves {partition.n_groups} group(s) for "
                f"{partition.n_samples} samples; {self.min_groups} are needed",
                n_groups=partition.n_groups,
                min_groups=self.min_groups,
            )


def via_modes(graph: DeclaredGraph, via: Sequence[str] | None, priority: Sequence[str] | None) -> tuple[str, ...]:
    """The modes a composite combines: ``via``, else ``priority``, else every mode whose relations the graph
    holds (``no_relation`` when it holds none)."""
    if via is None and priority is not None:
        via = priority
    if via is None:
        present = declared_modes(graph.has_relation)
        if not present:
            raise DepgraphError(
                "no_relation",
                "mode 'composite' has nothing to combine: the graph holds none of the relations of "
                f"{', '.join(COMBINABLE_MODES)}; declare one (depgraph build --column, --kinship, --coords, "
                "--duplicates), or name modes with --via",
                mode="composite",
            )
        return present
    modes = tuple(dict.fromkeys(canonical_name(m) for m in via))
    unknown = [m for m in modes if m not in COMBINABLE_MODES]
    if unknown or not modes:
        raise DepgraphError(
            "invalid_argument",
            f"via/priority take mode names ({describe_ids(COMBINABLE_MODES, 20)}); "
            f"got {describe_ids(unknown) or 'none'}",
        )
    return modes


def priority_order(priority: Sequence[str] | None, via: tuple[str, ...]) -> tuple[str, ...]:
    """The order a rule-based composite tries its modes in: ``priority`` (modes of ``via``), else ``via``."""
    if priority is None:
        return via
    order = tuple(dict.fromkeys(canonical_name(m) for m in priority))
    outside = [m for m in order if m not in via]
    if outside:
        raise DepgraphError(
            "invalid_argument", f"priority modes {describe_ids(outside)} are not in via ({describe_ids(via)})"
        )
    return order


def build_parameters(graph: DeclaredGraph, modes: Sequence[str]) -> dict[str, Any]:
    """Thresholds and radii recorded by the builders the ``modes`` rely on."""
    parameters: dict[str, Any] = {}
    for mode in modes:
        step = BUILDER_OF_MODE.get(mode)
        records = [dict(h) for h in graph.history if h.get("step") == step]
        if records:
            parameters[step] = records
    return parameters


def mode_label(mode: str, strategy: str | None) -> str:
    return f"composite/{strategy}" if strategy else mode


def shape_findings(partition: Derived, top_sizes: Callable[[], np.ndarray]) -> list[Issue]:
    """One group, a dominant group (``top_sizes``: the two largest group sizes, or every size), mostly
    singletons."""
    shape, n = partition.shape, partition.n_samples
    label = mode_label(partition.mode, partition.strategy)
    collapse = collapse_finding(n, shape.n_groups, shape.largest_group_size, top_sizes, label,
                                group=shape.largest_group)  # fmt: skip
    notes = [collapse] if collapse is not None else []
    alone = shape.singletons  # samples alone in their group
    if MODE[partition.mode].kind != "direct" and partition.strategy != "rule_based" and n > 1 and alone > n / 2:
        notes.append(
            finding(
                "mostly_singletons",
                f"mode {label}: {alone} of {n} samples are alone in their group; dependency coverage may be sparse",
            )
        )
    return notes


def label_collision(mode: str, labels: Sequence[str]) -> DepgraphError:
    """The refusal of target keys such as ``unlinked:S5``, which would read as unlinked sample S5's own group
    (``labels``: the group ids they would share) and merge its samples with it."""
    keys = [c.split(":", 1)[1] for c in labels]
    return DepgraphError(
        "ambiguity",
        f"{mode} key(s) {describe_ids(keys)} read as the label of an unlinked sample ({describe_ids(list(labels))}); "
        "rename them",
        ids=keys,
    )


def missing_relation_findings(graph: DeclaredGraph, mode: str) -> list[Issue]:
    """A component mode over a graph without the relation that makes it (kinship, adjacency, duplicates): its
    groups are the subjects' (relatedness) or all singletons, which the finding says."""
    own = relations_for_mode(mode)[-1].name
    if graph.has_relation(own):
        return []
    alone = "equal subject groups" if mode == "relatedness" else "are all singletons"
    return [finding("no_relation_edges", f"the graph has no {own} edges: {mode} groups {alone}",
                    details={"relation": own})]  # fmt: skip


def unlinked_finding(mode: str, ids: Sequence[str], count: int) -> Issue:
    """Samples a direct mode links to nothing, kept as groups of their own (``ids``: the first, or all)."""
    what = "timepoint" if mode == "time" else mode
    return finding(
        "unlinked_samples",
        f"{count} sample(s) have no {what} and were kept as singleton groups: {describe_ids(list(ids), total=count)}",
        ids=tuple(ids),
        count=count,
        details={"mode": mode},
    )


def unprioritized_finding(ids: Sequence[str], count: int) -> Issue:
    """Samples no mode of a rule-based composite's priority links, kept as groups of their own."""
    return finding(
        "unlinked_samples",
        f"{count} sample(s) match no prioritized mode and were kept as singleton groups: "
        f"{describe_ids(list(ids), total=count)}",
        ids=tuple(ids),
        count=count,
        details={"mode": "composite"},
    )


def no_relation(graph: DeclaredGraph, partition: Derived) -> DepgraphError:
    """The refusal of a partition the mode links nothing in (every sample a group of its own)."""
    label = f"'{mode_label(partition.mode, partition.strategy)}'" + (
        f" (via {','.join(partition.via)})" if partition.mode == "composite" else ""
    )
    relations = partition.relations
    missing = [r for r in relations if not graph.has_relation(r)]
    n = partition.n_samples
    if missing:
        hints = "; ".join(relation_hint(graph, r) for r in missing)
        lacking = "none" if len(missing) == len(relations) else f"no {' or '.join(missing)} edges"
        what = f"needs {' and '.join(relations)} edges; the graph has {lacking} ({hints})"
    else:  # the graph has them, but not for the samples derived (samples=)
        what = (
            f"links none of the {n} samples derived (samples=): the graph's {' and '.join(relations)} edges "
            "all concern other samples"
        )
    return DepgraphError(
        "no_relation",
        f"mode {label} {what}; every one of the {n} samples would be a group of its own (accept that with "
        "--allow-unlinked / allow_unlinked=True)",
        mode=partition.mode,
        missing=missing,
    )


def relation_hint(graph: DeclaredGraph, relation: str) -> str:
    """How to declare ``relation``, in the terms of ``depgraph build``."""
    column = RELATION[relation].column
    if column is not None:
        return f"add a {column} column: --column {column}=COL"
    if relation == RelationName.SUBJECT_RELATED_TO:
        return "add kinship: --kinship FILE --kinship-threshold T"
    if relation == RelationName.SAMPLE_ADJACENT_TO:
        radii = [h.get("radius") for h in graph.history if h.get("step") == "add_spatial"]
        if radii:
            return f"no two samples lie within the radius {radii[-1]}: widen --radius"
        return "add coordinates: --coords FILE --radius R"
    if relation == RelationName.SAMPLE_DUPLICATE_OF:
        return "declare duplicate pairs: --duplicates FILE, or find them with depgraph audit --write-back"
    return f"declare {relation} edges"


def single_group(partition: Derived, culprits: Sequence[str]) -> DepgraphError:
    """The refusal of a default composite that merges every sample; ``culprits``: the modes that alone link every
    sample."""
    relations = relation_names(culprits)
    if culprits:
        links = "links" if len(culprits) == 1 else "link"
        why = f"{', '.join(culprits)} alone {links} every sample ({', '.join(relations)})"
        rest = [m for m in partition.via if m not in culprits]
        suggestion = (
            f"choose the modes with --via (e.g. --via {','.join(rest)})" if rest else "choose the modes with --via"
        )
    else:
        why = f"together {', '.join(partition.relations)} link every sample"
        suggestion = "choose fewer modes with --via"
    return DepgraphError(
        "too_few_groups",
        f"mode composite/{partition.strategy} over every declared mode ({','.join(partition.via)}) puts all "
        f"{partition.n_samples} samples in one group: {why}; {suggestion}, or accept one group with "
        "--allow-single-group / allow_single_group=True",
        n_groups=1,
        modes=list(culprits),
    )


def wanted_samples(samples: Iterable[str]) -> np.ndarray:
    """The distinct ids ``samples=`` names, read as :func:`~depgraph.ingest.metadata.from_metadata` reads ids
    (``1.0`` is ``"1"``, blanks trimmed), in the order given; a missing or blank one is ``missing_id``, none at all
    ``empty_input``, what is not a collection of ids ``invalid_argument``."""
    if isinstance(samples, str):  # one id, not its characters
        samples = [samples]
    if isinstance(samples, (bytes, Mapping)) or not isinstance(samples, Iterable):
        raise DepgraphError(
            "invalid_argument", f"samples= takes sample ids (a list, array or set), not {type(samples).__name__}"
        )
    keys = normalise_keys(pd.Series(list(samples), dtype=object), "samples")
    if keys.isna().any():
        i = int(np.flatnonzero(keys.isna().to_numpy())[0])
        raise DepgraphError("missing_id", f"samples= holds a missing or blank id (at position {i})")
    wanted = pd.unique(keys.to_numpy(dtype=object))
    if len(wanted) == 0:
        raise DepgraphError("empty_input", "samples= is empty")
    return np.asarray(wanted, dtype=object)


def unprefixed_samples(wanted: np.ndarray) -> np.ndarray:
    """Each id without a leading ``sample:``: ``samples=`` takes node ids (``sample:S1``) as well as keys."""
    return np.array([s[len("sample:") :] if s.startswith("sample:") else s for s in wanted], dtype=object)


def unknown_samples(unknown: np.ndarray, what: str) -> DepgraphError:
    """The refusal of ids ``samples=`` (or the file ``what`` names) holds that name no sample of the graph."""
    return DepgraphError(
        "reference",
        f"{what} names {len(unknown)} sample(s) not in the graph: {describe_ids(unknown)}",
        ids=unknown.tolist(),
    )
