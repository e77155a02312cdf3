"""From a StudyGraph to one group per sample: the Partition.

Modes (see :data:`depgraph.vocab.MODES`):

* **direct** — ``subject``, ``batch``, ``study``, ``time``, ``assay``,
  ``site``, ``region``, ``platform``: a sample's group is the target of its one
  edge of that relation, labelled ``"<mode>:<key>"`` (``subject:P1``,
  ``time:T0``). A sample without one is kept as the singleton
  ``"<mode>:unlinked:<sample_id>"`` and a warning names it. A sample with two
  targets is an ``ambiguity`` error, except in subject mode under the
  ``allow_multi_subject_samples`` override, where the smallest subject id is
  used (so the choice does not depend on row order) and a warning says so.
* **component** — ``relatedness`` (subjects and kinship), ``spatial``
  (adjacency within a radius), ``duplicate`` (declared duplicates): connected
  components over the sample + entity graph (scipy.sparse.csgraph), labelled
  ``"<mode>:<smallest member sample_id>"``.
* **composite** — ``strict``: components over the union of the relations of
  every mode in ``via``; ``rule_based``: each sample takes the first mode in
  ``priority`` that links it (``"composite_<mode>:<key>"``), else
  ``"composite:unlinked:<sample_id>"``.

``samples=`` derives on the induced subgraph: samples left out are removed
with their edges, so a left-out sample never bridges two groups (entities such
as subjects stay). Labels and row order depend only on the declaration, never
on the order of input rows.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import replace
from typing import Any

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc
import scipy.sparse as sp
from scipy.sparse.csgraph import connected_components

from depgraph.common.arguments import flag, instance, names, whole_number
from depgraph.common.arrays import distinct, present, text_series
from depgraph.common.identifiers import normalise_keys
from depgraph.derivation.partition import Partition
from depgraph.derivation.shapes import GroupShape, collapse_finding, shape_of
from depgraph.derivation.timeorder import sample_time_columns
from depgraph.errors import DepgraphError, describe_ids
from depgraph.findings import Issue, finding
from depgraph.graph.model import StudyGraph
from depgraph.vocab import (
    COMBINABLE_MODES,
    MODE,
    RELATION,
    NodeType,
    canonical_name,
    direct_relation,
    mode_named,
    relations_for_mode,
    strategy_named,
)


def derive(
    graph: StudyGraph,
    mode: str,
    *,
    strategy: str | None = None,
    via: Sequence[str] | None = None,
    priority: Sequence[str] | None = None,
    samples: Iterable[str] | None = None,
    min_groups: int | None = None,
    allow_unlinked: bool = False,
    allow_single_group: bool = False,
) -> Partition:
    """Reduce ``graph`` to one group per sample.

    Parameters
    ----------
    graph:
        The study declaration.
    mode:
        A mode name from :data:`depgraph.vocab.MODES`.
    strategy:
        For ``mode="composite"``: ``"strict"`` (default) or ``"rule_based"``.
    via:
        Composite: the modes combined. Default: every mode whose relations
        the graph holds.
    priority:
        Rule-based: the order in which modes are tried (a subset of ``via``;
        default ``via`` in order).
    samples:
        Derive for these sample ids only, on the induced subgraph.
    min_groups:
        Raise ``too_few_groups`` when the partition has fewer groups (e.g. the
        number of folds the caller needs).
    allow_unlinked:
        Accept a partition in which the mode links none of the derived
        samples (every sample its own group). Without it that is a
        ``no_relation`` error naming the mode and the missing relation: a
        subject mode on a graph without subjects, spatial without
        coordinates, a composite whose relations link nothing. Some samples
        unlinked is only the ``unlinked_samples`` warning.
    allow_single_group:
        Composite mode with neither ``via`` nor ``priority`` (every relation
        the graph holds): accept a single group. Without it, a result with
        one group for two or more samples is a ``too_few_groups`` error that
        names the modes that link every sample and suggests ``via``.

    Guarantee: no edge of a relation the mode follows links two samples of
    different groups (for direct, component and strict composite modes).

    >>> import pandas as pd
    >>> from depgraph import add_kinship, from_metadata
    >>> g = from_metadata(pd.DataFrame({"sample_id": ["S1", "S2", "S3", "S4"],
    ...                                 "subject_id": ["P1", "P2", "P3", "P4"]}))
    >>> g = add_kinship(g, pd.DataFrame({"id1": ["P1"], "id2": ["P2"], "kinship": [0.25]}), threshold="first")
    >>> derive(g, "relatedness").groups()
    {'S1': 'relatedness:S1', 'S2': 'relatedness:S1', 'S3': 'relatedness:S3', 'S4': 'relatedness:S4'}
    """
    instance(graph, StudyGraph, "derive: the graph")
    mode = mode_named(mode)  # "Subject" is subject
    if min_groups is not None:
        min_groups = whole_number(min_groups, "min_groups", minimum=1)
    allow_unlinked = flag(allow_unlinked, "allow_unlinked")  # "no" would be true
    allow_single_group = flag(allow_single_group, "allow_single_group")
    via = None if via is None else names(via, "via")
    priority = None if priority is None else names(priority, "priority")
    if MODE[mode].kind != "composite" and (strategy is not None or via is not None or priority is not None):
        raise DepgraphError("invalid_argument", f"strategy, via and priority apply to mode 'composite', not {mode!r}")
    by_default = mode == "composite" and via is None and priority is None
    if allow_single_group and not by_default:
        raise DepgraphError(
            "invalid_argument",
            "allow_single_group (--allow-single-group) applies to mode 'composite' without via or priority, not to "
            + _request_label(mode, via, priority),
        )
    selected = selected_samples(graph, samples)
    partition = _partition(graph, mode, strategy, via, priority, selected)
    if not allow_unlinked and _links_nothing(graph, partition, selected):
        raise _no_relation(graph, partition, selected)
    partition = _with_shape_warnings(partition)
    if by_default and not allow_single_group and partition.n_groups == 1 and partition.n_samples > 1:
        raise _single_group(graph, partition, selected)
    if min_groups is not None and partition.n_groups < min_groups:
        raise DepgraphError(
            "too_few_groups",
            f"mode {_mode_label(partition)} leaves {partition.n_groups} group(s) for {partition.n_samples} samples; "
            f"{min_groups} are needed",
            n_groups=partition.n_groups,
            min_groups=min_groups,
        )
    return partition


def _partition(
    graph: StudyGraph,
    mode: str,
    strategy: str | None,
    via: Sequence[str] | None,
    priority: Sequence[str] | None,
    selected: np.ndarray,
) -> Partition:
    """The partition of a checked request, before the shape findings and refusals."""
    kind = MODE[mode].kind
    if kind == "direct":
        return _derive_direct(graph, mode, selected)
    if kind == "component":
        return _derive_component(graph, mode, selected)
    strategy = "strict" if strategy is None else strategy_named(strategy)
    via_modes = _via_modes(graph, via, priority)
    if strategy == "strict":
        if priority is not None:
            raise DepgraphError("invalid_argument", "priority applies to strategy 'rule_based', not 'strict'")
        return _derive_strict(graph, via_modes, selected)
    return _derive_rule_based(graph, via_modes, _priority(priority, via_modes), selected)


def group_sizes(graph: StudyGraph, mode: str, via: Sequence[str] | None = None) -> np.ndarray:
    """Samples per group of ``mode`` over all samples, without labelling groups
    (what validation needs to spot a collapsed or dominated partition).
    ``composite`` means strict over the modes ``via`` (default: every mode the
    graph supports, as :func:`derive` does). Raises like :func:`derive` where
    the mode cannot be derived (two batches for a sample…)."""
    selected = selected_samples(graph, None)
    mode = mode_named(mode)
    spec = MODE[mode]
    if spec.kind == "direct":
        target, _ = _direct_targets(graph, mode, selected)
        linked = target[target >= 0]
        counts = np.bincount(linked - linked.min()) if len(linked) else np.empty(0, np.int64)
        return np.concatenate([counts[counts > 0], np.ones(int((target < 0).sum()), dtype=np.int64)])
    if spec.kind == "component":
        relations = tuple(r.name for r in relations_for_mode(mode))
    else:
        relations = tuple(dict.fromkeys(r.name for m in _via_modes(graph, via, None) for r in relations_for_mode(m)))
    labels = _components(graph, relations, selected)[selected]
    counts = np.bincount(labels)
    return counts[counts > 0]


# --------------------------------------------------------------------------- refusals
def _request_label(mode: str, via: Sequence[str] | None, priority: Sequence[str] | None) -> str:
    if mode != "composite":
        return f"mode {mode!r}"
    return "composite with " + " and ".join(
        f"{name}={','.join(map(str, value))}" for name, value in (("via", via), ("priority", priority)) if value
    )


def _links_nothing(graph: StudyGraph, partition: Partition, selected: np.ndarray) -> bool:
    """Whether none of the derived samples has an edge of a relation the mode follows anywhere in the graph.

    Edges to samples left out by ``samples=`` count: such a sample is declared, and the induced subgraph
    leaving it alone is a true answer, not a missing declaration."""
    if partition.n_samples == 0:
        return False
    if MODE[partition.mode].kind == "direct":
        return bool((partition.samples["basis"] == "unlinked").all())
    if partition.shape.singletons < partition.n_samples:
        return False  # some group holds two samples: something links them
    hit = np.zeros(graph.n_nodes, dtype=bool)
    for relation in partition.relations:
        src, dst, _ = graph.relation_edges(relation)
        if RELATION[relation].source == NodeType.SAMPLE:
            hit[src] = True
        if RELATION[relation].target == NodeType.SAMPLE:
            hit[dst] = True
    return not hit[selected].any()


def _relation_hint(graph: StudyGraph, relation: str) -> str:
    """How to declare ``relation``, in the terms of ``depgraph build``."""
    column = RELATION[relation].column
    if column is not None:
        return f"add a {column} column: --column {column}=COL"
    if relation == "subject_related_to":
        return "add kinship: --kinship FILE --kinship-threshold T"
    if relation == "sample_adjacent_to":
        radii = [h.get("radius") for h in graph.history if h.get("step") == "add_spatial"]
        if radii:
            return f"no two samples lie within the radius {radii[-1]}: widen --radius"
        return "add coordinates: --coords FILE --radius R"
    if relation == "sample_duplicate_of":
        return "declare duplicate pairs: --duplicates FILE, or find them with depgraph audit --write-back"
    return f"declare {relation} edges"


def _no_relation(graph: StudyGraph, partition: Partition, selected: np.ndarray) -> DepgraphError:
    label = f"'{_mode_label(partition)}'" + (
        f" (via {','.join(partition.via)})" if partition.mode == "composite" else ""
    )
    relations = partition.relations
    missing = [r for r in relations if not graph.has_relation(r)]
    n = partition.n_samples
    if missing:
        hints = "; ".join(_relation_hint(graph, r) for r in missing)
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


def _single_group(graph: StudyGraph, partition: Partition, selected: np.ndarray) -> DepgraphError:
    """The refusal of a default composite (every relation the graph holds) that merges every sample."""
    culprits = [m for m in partition.via if _one_group_alone(graph, m, selected)]
    relations = list(dict.fromkeys(r.name for m in culprits for r in relations_for_mode(m)))
    if culprits:
        why = (
            f"{', '.join(culprits)} alone link{'s' if len(culprits) == 1 else ''} every sample ({', '.join(relations)})"
        )
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
        modes=culprits,
    )


def _one_group_alone(graph: StudyGraph, mode: str, selected: np.ndarray) -> bool:
    """Whether ``mode`` by itself puts every selected sample in one group."""
    if MODE[mode].kind == "direct":
        target, _ = _direct_targets(graph, mode, selected)
        return bool((target >= 0).all() and (target == target[0]).all())
    labels = _components(graph, tuple(r.name for r in relations_for_mode(mode)), selected)[selected]
    return bool((labels == labels[0]).all())


# --------------------------------------------------------------------------- subsets
def selected_samples(graph: StudyGraph, samples: Iterable[str] | None, what: str = "samples=") -> np.ndarray:
    """Sorted node positions of the samples to derive for (every sample when ``samples`` is None), as
    :func:`derive` reads ``samples=``; ids the graph does not hold are a ``reference`` error naming ``what``
    (the command line names the file they came from).

    >>> from depgraph.ingest.metadata import from_metadata
    >>> g = from_metadata(pd.DataFrame({"sample_id": ["a", "b", "c"]}))
    >>> selected_samples(g, ["c", "sample:a"]).tolist() == sorted(g.locate(NodeType.SAMPLE, ["a", "c"]).tolist())
    True
    """
    start, stop = graph.type_range(NodeType.SAMPLE)
    if samples is None:
        if stop == start:
            raise DepgraphError("empty_input", "the graph has no samples")
        return np.arange(start, stop, dtype=np.int64)
    if isinstance(samples, str):  # one id, not its characters
        samples = [samples]
    if isinstance(samples, (bytes, Mapping)) or not isinstance(samples, Iterable):
        raise DepgraphError(
            "invalid_argument", f"samples= takes sample ids (a list, array or set), not {type(samples).__name__}"
        )
    # ids as from_metadata reads them (1.0 is "1", blanks trimmed); a missing one names no sample
    keys = normalise_keys(pd.Series(list(samples), dtype=object), "samples")
    if keys.isna().any():
        i = int(np.flatnonzero(keys.isna().to_numpy())[0])
        raise DepgraphError("missing_id", f"samples= holds a missing or blank id (at position {i})")
    wanted = pd.unique(keys.to_numpy(dtype=object))
    if len(wanted) == 0:
        raise DepgraphError("empty_input", "samples= is empty")
    positions = graph.locate(NodeType.SAMPLE, wanted)
    unprefixed = np.array([s[len("sample:") :] if s.startswith("sample:") else s for s in wanted], dtype=object)
    retry = positions < 0
    if retry.any():  # accept node ids ("sample:S1") as well as keys
        positions[retry] = graph.locate(NodeType.SAMPLE, unprefixed[retry])
    unknown = wanted[positions < 0]
    if len(unknown):
        raise DepgraphError(
            "reference",
            f"{what} names {len(unknown)} sample(s) not in the graph: {describe_ids(unknown)}",
            ids=unknown.tolist(),
        )
    return distinct(positions)


def _edges_within(graph: StudyGraph, relation: str, selected: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Edges of ``relation`` whose sample endpoints are all selected."""
    src, dst, weight = graph.relation_edges(relation)
    rel = RELATION[relation]
    start, stop = graph.type_range(NodeType.SAMPLE)
    if len(selected) == stop - start:
        return src, dst, weight
    chosen = np.zeros(graph.n_nodes, dtype=bool)
    chosen[selected] = True
    keep = np.ones(len(src), dtype=bool)
    if rel.source == NodeType.SAMPLE:
        keep &= chosen[src]
    if rel.target == NodeType.SAMPLE:
        keep &= chosen[dst]
    return src[keep], dst[keep], weight[keep]


# --------------------------------------------------------------------------- direct modes
def _direct_targets(graph: StudyGraph, mode: str, selected: np.ndarray) -> tuple[np.ndarray, list[Issue]]:
    """Target node position per selected sample (-1: unlinked)."""
    rel = direct_relation(mode)
    src, dst, _ = _edges_within(graph, rel.name, selected)
    start, stop = graph.type_range(NodeType.SAMPLE)
    target = np.full(stop - start, -1, dtype=np.int64)
    notes: list[Issue] = []
    if len(src):
        first = np.ones(len(src), dtype=bool)
        first[1:] = src[1:] != src[:-1]  # edges are sorted by (src, dst): first = smallest target key
        multi = distinct(src[~first])
        if len(multi):
            sample_keys = graph.key_values[multi].tolist()
            allowed = mode == "subject" and bool(graph.overrides.get("allow_multi_subject_samples"))
            if not allowed:
                hint = (
                    " (set the allow_multi_subject_samples override to use the smallest subject id)"
                    if mode == "subject"
                    else ""
                )
                raise DepgraphError(
                    "ambiguity",
                    f"{len(multi)} sample(s) have more than one {rel.target.value.lower()}: "
                    f"{describe_ids(sample_keys)}{hint}",
                    ids=sample_keys,
                )
            notes.append(
                finding(
                    "multi_subject_first_chosen",
                    f"{len(multi)} sample(s) linked to several subjects were grouped by their smallest subject id: "
                    f"{describe_ids(sample_keys)}",
                    ids=tuple(sample_keys),
                )
            )
        target[src[first] - start] = dst[first]
    return target[selected - start], notes


def _derive_direct(graph: StudyGraph, mode: str, selected: np.ndarray) -> Partition:
    target, notes = _direct_targets(graph, mode, selected)
    sample_keys = _keys(graph, selected)
    linked = target >= 0
    targets = present(target[linked], graph.n_nodes)  # label each target once
    rank = np.zeros(graph.n_nodes, dtype=np.int64)
    rank[targets] = np.arange(len(targets))
    codes = np.empty(len(selected), dtype=np.int64)  # group of each sample: its target, or itself alone
    codes[linked] = rank[target[linked]]
    codes[~linked] = len(targets) + np.arange(int((~linked).sum()))
    unlinked_keys = sample_keys.filter(pa.array(~linked))
    names = pa.concat_arrays(
        [_prefixed(f"{mode}:", graph.key_array.take(pa.array(targets))), _prefixed(f"{mode}:unlinked:", unlinked_keys)]
    )
    group = names.take(pa.array(codes))
    if (~linked).any() and linked.any():
        _refuse_label_collisions(mode, names.slice(0, len(targets)), names.slice(len(targets)))
    if (~linked).any():
        notes.append(_unlinked_warning(mode, unlinked_keys))
    frame = _frame(sample_keys, group, pd.Categorical.from_codes((~linked).astype(np.int8), [mode, "unlinked"]))
    parameters: dict[str, Any] = {}
    if mode == "time":
        time_cols, time_notes, parameters["time_order"] = sample_time_columns(graph, target)
        frame = pd.concat([frame, time_cols], axis=1)
        notes += time_notes
    relations = (direct_relation(mode).name,)
    shape = shape_of(codes, names)
    return Partition(frame, mode, relations=relations, warnings=tuple(notes), parameters=parameters, known_shape=shape)


def _refuse_label_collisions(mode: str, linked: np.ndarray, unlinked: np.ndarray) -> None:
    """A target key such as ``unlinked:S5`` would merge its samples with the
    singleton of unlinked sample S5; refuse rather than silently merge."""
    clash = pc.unique(unlinked.filter(pc.is_in(unlinked, value_set=linked))).to_pylist()
    if clash:
        keys = [c.split(":", 1)[1] for c in clash]
        raise DepgraphError(
            "ambiguity",
            f"{mode} key(s) {describe_ids(keys)} read as the label of an unlinked sample ({describe_ids(clash)}); "
            "rename them",
            ids=keys,
        )


def _unlinked_warning(mode: str, sample_keys: pa.Array) -> Issue:
    what = "timepoint" if mode == "time" else mode
    ids = sample_keys.to_pylist()  # the findings' ids: as many as there are, as the finding counts them
    return finding(
        "unlinked_samples",
        f"{len(ids)} sample(s) have no {what} and were kept as singleton groups: {describe_ids(ids)}",
        ids=tuple(ids),
        details={"mode": mode},
    )


# --------------------------------------------------------------------------- component modes
def _components(graph: StudyGraph, relations: Sequence[str], selected: np.ndarray) -> np.ndarray:
    """Connected-component labels over ``relations``, with unselected samples
    (and their edges) removed. Exact for the samples, which is what every
    caller reads; other nodes may be left unmerged (see below).

    Over all samples the labels are kept with the graph (graphs are
    immutable): validation and the derivation after it share one pass. A
    union of relations (a composite) starts from the labels already found
    for some of them and adds the other relations one at a time, stopping as
    soon as every sample is in one component: in a cohort whose batches link
    everything, the site, study and timepoint edges are never read.
    """
    every = len(selected) == graph.count(NodeType.SAMPLE)
    key = ("components", tuple(relations))
    cached = graph.cache.results  # memoised results of pure functions of the graph (GraphCache)
    if every and key in cached:
        return cached[key]
    known = [k[1] for k in cached if every and k[0] == "components" and set(k[1]) < set(relations)]
    base = max(known, key=len) if known else ()
    if base:
        labels = cached[("components", base)]
        for rel in relations:
            samples = labels[selected]
            if len(samples) and (samples == samples[0]).all():
                break  # one group: no further edge can change the samples' partition
            if rel not in base:
                src, dst, _ = _edges_within(graph, rel, selected)
                labels = _merged(labels, labels[src], labels[dst])
    else:
        parts = [_edges_within(graph, rel, selected)[:2] for rel in relations]
        src = np.concatenate([p[0] for p in parts]) if parts else np.empty(0, np.int64)
        dst = np.concatenate([p[1] for p in parts]) if parts else np.empty(0, np.int64)
        labels = _merged(np.arange(graph.n_nodes), src, dst)
    labels.flags.writeable = False  # shared: nobody may change it in place
    if every:
        cached[key] = labels
    return labels


def _merged(labels: np.ndarray, src: np.ndarray, dst: np.ndarray) -> np.ndarray:
    """Node labels after joining the components that edges ``src -> dst`` (given as labels) link."""
    n = int(labels.max()) + 1 if len(labels) else 0
    # float64 entries: csgraph works on float64 and would otherwise copy the matrix to convert it
    adjacency = sp.csr_matrix((np.ones(len(src)), (src, dst)), shape=(n, n))
    return connected_components(adjacency, directed=False)[1][labels]


def _component_groups(graph: StudyGraph, labels: np.ndarray, selected: np.ndarray, prefix: str) -> np.ndarray:
    """``prefix + smallest member sample id`` for each selected sample."""
    return _labelled_components(graph, labels, selected, prefix)[0]


def _labelled_components(
    graph: StudyGraph, labels: np.ndarray, selected: np.ndarray, prefix: str
) -> tuple[np.ndarray, GroupShape]:
    """Group ids (``prefix + smallest member sample id``) of the selected samples, and the
    partition's shape counted on the component codes (no million-string factorisation)."""
    inverse, _ = pd.factorize(labels[selected])  # codes in order of first appearance
    seen = np.maximum.accumulate(inverse)
    first = np.flatnonzero(np.r_[True, inverse[1:] > seen[:-1]])  # where each code first appears
    representative = selected[first]  # selected is sorted: first member = smallest sample id
    names = _prefixed(prefix, graph.key_array.take(pa.array(representative)))  # each component once
    return names.take(pa.array(inverse)), shape_of(inverse, names)


def _touched(graph: StudyGraph, relations: Sequence[str], selected: np.ndarray) -> np.ndarray:
    """Whether each selected sample has at least one edge of ``relations``."""
    hit = np.zeros(graph.n_nodes, dtype=bool)
    for rel in relations:
        src, dst, _ = _edges_within(graph, rel, selected)
        if RELATION[rel].source == NodeType.SAMPLE:
            hit[src] = True
        if RELATION[rel].target == NodeType.SAMPLE:
            hit[dst] = True
    return hit[selected]


def _derive_component(graph: StudyGraph, mode: str, selected: np.ndarray) -> Partition:
    relations = tuple(r.name for r in relations_for_mode(mode))
    labels = _components(graph, relations, selected)
    groups, shape = _labelled_components(graph, labels, selected, f"{mode}:")
    sample_keys = _keys(graph, selected)
    frame = _frame(sample_keys, groups, pd.Categorical.from_codes(np.zeros(len(selected), np.int8), [mode]))
    notes: list[Issue] = []
    own = relations[-1]  # the relation that makes the mode (kinship, adjacency, duplicates)
    if not graph.has_relation(own):
        notes.append(
            finding(
                "no_relation_edges",
                f"the graph has no {own} edges: {mode} groups "
                + ("equal subject groups" if mode == "relatedness" else "are all singletons"),
                details={"relation": own},
            )
        )
    if mode == "relatedness":
        unlinked = ~_touched(graph, ("sample_belongs_to_subject",), selected)
        if unlinked.any():
            notes.append(_unlinked_warning("subject", sample_keys.filter(pa.array(unlinked))))
    parameters = _build_parameters(graph, mode)
    return Partition(frame, mode, relations=relations, warnings=tuple(notes), parameters=parameters, known_shape=shape)


def _build_parameters(graph: StudyGraph, mode: str) -> dict[str, Any]:
    """Thresholds and radii recorded by the builders the mode relies on."""
    step = {"relatedness": "add_kinship", "spatial": "add_spatial", "duplicate": "add_duplicates"}.get(mode)
    records = [dict(h) for h in graph.history if h.get("step") == step]
    return {step: records} if records else {}


# --------------------------------------------------------------------------- composite modes
def _via_modes(graph: StudyGraph, via: Sequence[str] | None, priority: Sequence[str] | None) -> tuple[str, ...]:
    if via is None and priority is not None:
        via = priority
    if via is None:
        present = tuple(
            m for m in COMBINABLE_MODES if all(graph.has_relation(r.name) for r in relations_for_mode(m)[-1:])
        )
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


def _priority(priority: Sequence[str] | None, via: tuple[str, ...]) -> tuple[str, ...]:
    if priority is None:
        return via
    order = tuple(dict.fromkeys(canonical_name(m) for m in priority))
    outside = [m for m in order if m not in via]
    if outside:
        raise DepgraphError(
            "invalid_argument", f"priority modes {describe_ids(outside)} are not in via ({describe_ids(via)})"
        )
    return order


def _derive_strict(graph: StudyGraph, via: tuple[str, ...], selected: np.ndarray) -> Partition:
    relations = tuple(dict.fromkeys(r.name for m in via for r in relations_for_mode(m)))
    labels = _components(graph, relations, selected)
    groups, shape = _labelled_components(graph, labels, selected, "composite:")
    basis = pd.Categorical.from_codes(np.zeros(len(selected), np.int8), ["composite"])
    frame = _frame(_keys(graph, selected), groups, basis)
    parameters: dict[str, Any] = {}
    for m in via:
        parameters.update(_build_parameters(graph, m))
    return Partition(frame, "composite", "strict", relations, via, parameters=parameters, known_shape=shape)


def _derive_rule_based(
    graph: StudyGraph, via: tuple[str, ...], priority: tuple[str, ...], selected: np.ndarray
) -> Partition:
    keys = graph.key_values  # rule-based groups are assembled row by row from several modes' labels
    n = len(selected)
    group = np.full(n, None, dtype=object)
    basis = np.full(n, "unlinked", dtype=object)
    notes: list[Issue] = []
    time_target: np.ndarray | None = None
    for mode in priority:
        open_rows = group == None  # noqa: E711 - elementwise on an object array
        kind = MODE[mode].kind
        if kind == "direct":
            target, mode_notes = _direct_targets(graph, mode, selected)
            notes += mode_notes
            if mode == "time":
                time_target = target
            take = open_rows & (target >= 0)
            group[take] = _prefixed(f"composite_{mode}:", graph.key_array.take(pa.array(target[take]))).to_numpy(
                zero_copy_only=False
            )
        else:
            relations = tuple(r.name for r in relations_for_mode(mode))
            take = open_rows & _touched(graph, relations, selected)
            labels = _components(graph, relations, selected)
            groups = _component_groups(graph, labels, selected, f"composite_{mode}:")
            group[take] = groups.filter(pa.array(take)).to_numpy(zero_copy_only=False)
        basis[take] = mode
    unlinked = group == None  # noqa: E711
    group[unlinked] = _prefixed("composite:unlinked:", keys[selected][unlinked]).to_numpy(zero_copy_only=False)
    frame = _frame(keys[selected], group, pd.Categorical(basis))
    if unlinked.any():
        ids = keys[selected][unlinked]
        notes.append(
            finding(
                "unlinked_samples",
                f"{len(ids)} sample(s) match no prioritized mode and were kept as singleton groups: "
                f"{describe_ids(ids)}",
                ids=tuple(ids.tolist()),
                details={"mode": "composite"},
            )
        )
    relations = tuple(dict.fromkeys(r.name for m in priority for r in relations_for_mode(m)))
    parameters: dict[str, Any] = {}
    if time_target is not None:
        time_cols, time_notes, parameters["time_order"] = sample_time_columns(graph, time_target)
        frame = pd.concat([frame, time_cols], axis=1)
        notes += time_notes
    return Partition(frame, "composite", "rule_based", relations, via, priority, tuple(notes), parameters)


# --------------------------------------------------------------------------- shape checks
def _with_shape_warnings(partition: Partition) -> Partition:
    """Add findings about the partition's shape: one group, a dominant group, mostly singletons."""
    notes = list(partition.warnings)
    shape = partition.shape
    n = partition.n_samples
    label = _mode_label(partition)
    collapse = collapse_finding(
        n,
        shape.n_groups,
        shape.largest_group_size,
        lambda: partition.samples["group_id"].value_counts(sort=False).to_numpy(),
        label,
        group=shape.largest_group,
    )
    notes += [collapse] if collapse is not None else []
    alone = shape.singletons  # samples alone in their group
    if MODE[partition.mode].kind != "direct" and partition.strategy != "rule_based" and n > 1 and alone > n / 2:
        notes.append(
            finding(
                "mostly_singletons",
                f"mode {label}: {alone} of {n} samples are alone in their group; dependency coverage may be sparse",
            )
        )
    return replace(partition, warnings=tuple(notes), known_shape=shape)


def _mode_label(partition: Partition) -> str:
    return f"composite/{partition.strategy}" if partition.strategy else partition.mode


def _prefixed(prefix: str, values: np.ndarray | pa.Array) -> pa.Array:
    """``prefix + value`` for each text value, as Arrow text (no Python object per value).

    >>> _prefixed("subject:", np.array(["P1", "P2"], dtype=object)).to_pylist()
    ['subject:P1', 'subject:P2']
    """
    text = values if isinstance(values, pa.Array) else pa.array(np.asarray(values, dtype=object), type=pa.string())
    if not len(text):
        return pa.array([], type=pa.string())
    return pc.binary_join_element_wise(prefix, text.cast(pa.string()), "")


def _keys(graph: StudyGraph, positions: np.ndarray) -> pa.Array:
    """The keys of nodes at ``positions``, as Arrow text."""
    return graph.key_array.take(pa.array(positions))


def _frame(sample_ids: np.ndarray | pa.Array, group_ids: np.ndarray | pa.Array, basis: pd.Categorical) -> pd.DataFrame:
    """The partition table: ids as Arrow-backed text (no Python object per sample), or objects when given so."""

    def column(values: np.ndarray | pa.Array) -> pd.Series:
        return text_series(values) if isinstance(values, pa.Array) else pd.Series(values, dtype=object)

    return pd.DataFrame({"sample_id": column(sample_ids), "group_id": column(group_ids), "basis": basis})
