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

from collections.abc import Iterable, Sequence
from dataclasses import replace
from typing import Any

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc
import scipy.sparse as sp
from scipy.sparse.csgraph import connected_components

from depgraph.common.arguments import instance
from depgraph.common.arrays import distinct, present, text_series
from depgraph.derivation.partition import Partition
from depgraph.derivation.request import (
    DeriveRequest,
    build_parameters,
    label_collision,
    missing_relation_findings,
    no_relation,
    shape_findings,
    single_group,
    unknown_samples,
    unlinked_finding,
    unprefixed_samples,
    unprioritized_finding,
    via_modes,
    wanted_samples,
)
from depgraph.derivation.shapes import GroupShape, shape_of
from depgraph.derivation.timeorder import sample_time_columns
from depgraph.engines import engine_of, stage
from depgraph.errors import DepgraphError, describe_ids
from depgraph.findings import Issue, finding
from depgraph.graph.model import StudyGraph
from depgraph.vocab import (
    MODE,
    RELATION,
    NodeType,
    RelationName,
    direct_relation,
    mode_named,
    relation_names,
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
    **engine_options: Any,
) -> Partition:
    """Reduce ``graph`` to one group per sample, on the engine ``graph`` belongs to: this machine for a
    :class:`~depgraph.graph.model.StudyGraph`, Spark for a :class:`~depgraph.spark.graph.SparkGraph` (which returns
    a :class:`~depgraph.spark.derive.SparkPartition`; ``hub_degree=`` is its one option, docs/spark.md).

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
    request = DeriveRequest.of(mode, strategy=strategy, via=via, priority=priority, min_groups=min_groups,
                               allow_unlinked=allow_unlinked, allow_single_group=allow_single_group)  # fmt: skip
    engine = engine_of(graph)
    if engine is not None:  # another engine's graph derives there, from the same checked request
        return stage(engine, "derive").derive_request(graph, request, samples, **engine_options)
    instance(graph, StudyGraph, "derive: the graph")
    if engine_options:
        raise DepgraphError("invalid_argument", f"derive on one machine takes no {describe_ids(list(engine_options))}"
                            " (an option of another engine)")  # fmt: skip
    selected = selected_samples(graph, samples)
    partition = _partition(graph, request, selected)
    if not request.allow_unlinked and _links_nothing(graph, partition, selected):
        raise no_relation(graph, partition)
    sizes = lambda: partition.samples["group_id"].value_counts(sort=False).to_numpy()  # noqa: E731
    partition = replace(partition, warnings=(*partition.warnings, *shape_findings(partition, sizes)),
                        known_shape=partition.shape)  # fmt: skip
    request.refuse_too_few_groups(partition, lambda: single_group(partition, _culprits(graph, partition, selected)))
    return partition


def _partition(graph: StudyGraph, request: DeriveRequest, selected: np.ndarray) -> Partition:
    """The partition of a checked request, before the shape findings and refusals."""
    kind = MODE[request.mode].kind
    if kind == "direct":
        return _derive_direct(graph, request.mode, selected)
    if kind == "component":
        return _derive_component(graph, request.mode, selected)
    strategy, via, priority = request.composite(graph)
    if strategy == "strict":
        return _derive_strict(graph, via, selected)
    return _derive_rule_based(graph, via, priority, selected)


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
    relations = relation_names([mode] if spec.kind == "component" else via_modes(graph, via, None))
    labels = _components(graph, relations, selected)[selected]
    counts = np.bincount(labels)
    return counts[counts > 0]


# --------------------------------------------------------------------------- refusals
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


def _culprits(graph: StudyGraph, partition: Partition, selected: np.ndarray) -> list[str]:
    """The modes of a composite that by themselves put every selected sample in one group."""
    return [m for m in partition.via if _one_group_alone(graph, m, selected)]


def _one_group_alone(graph: StudyGraph, mode: str, selected: np.ndarray) -> bool:
    """Whether ``mode`` by itself puts every selected sample in one group."""
    if MODE[mode].kind == "direct":
        target, _ = _direct_targets(graph, mode, selected)
        return bool((target >= 0).all() and (target == target[0]).all())
    labels = _components(graph, relation_names([mode]), selected)[selected]
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
    engine = engine_of(graph)
    if engine is not None:  # a graph of another engine: its rows, found there (the derive stage's module)
        return stage(engine, "derive").selected_rows(graph, samples, what)
    start, stop = graph.type_range(NodeType.SAMPLE)
    if samples is None:
        if stop == start:
            raise DepgraphError("empty_input", "the graph has no samples")
        return np.arange(start, stop, dtype=np.int64)
    wanted = wanted_samples(samples)
    positions = graph.locate(NodeType.SAMPLE, wanted)
    unprefixed = unprefixed_samples(wanted)
    retry = positions < 0
    if retry.any():  # accept node ids ("sample:S1") as well as keys
        positions[retry] = graph.locate(NodeType.SAMPLE, unprefixed[retry])
    unknown = wanted[positions < 0]
    if len(unknown):
        raise unknown_samples(unknown, what)
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
        raise label_collision(mode, clash)


def _unlinked_warning(mode: str, sample_keys: pa.Array) -> Issue:
    ids = sample_keys.to_pylist()  # the findings' ids: as many as there are, as the finding counts them
    return unlinked_finding(mode, ids, len(ids))


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
    relations = relation_names([mode])
    labels = _components(graph, relations, selected)
    groups, shape = _labelled_components(graph, labels, selected, f"{mode}:")
    sample_keys = _keys(graph, selected)
    frame = _frame(sample_keys, groups, pd.Categorical.from_codes(np.zeros(len(selected), np.int8), [mode]))
    notes = missing_relation_findings(graph, mode)
    if mode == "relatedness":
        unlinked = ~_touched(graph, (RelationName.SAMPLE_BELONGS_TO_SUBJECT,), selected)
        if unlinked.any():
            notes.append(_unlinked_warning("subject", sample_keys.filter(pa.array(unlinked))))
    parameters = build_parameters(graph, [mode])
    return Partition(frame, mode, relations=relations, warnings=tuple(notes), parameters=parameters, known_shape=shape)


# --------------------------------------------------------------------------- composite modes
def _derive_strict(graph: StudyGraph, via: tuple[str, ...], selected: np.ndarray) -> Partition:
    relations = relation_names(via)
    labels = _components(graph, relations, selected)
    groups, shape = _labelled_components(graph, labels, selected, "composite:")
    basis = pd.Categorical.from_codes(np.zeros(len(selected), np.int8), ["composite"])
    frame = _frame(_keys(graph, selected), groups, basis)
    parameters = build_parameters(graph, via)
    return Partition(frame, "composite", strategy="strict", relations=relations, via=via, parameters=parameters,
                     known_shape=shape)  # fmt: skip


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
            relations = relation_names([mode])
            take = open_rows & _touched(graph, relations, selected)
            labels = _components(graph, relations, selected)
            groups = _component_groups(graph, labels, selected, f"composite_{mode}:")
            group[take] = groups.filter(pa.array(take)).to_numpy(zero_copy_only=False)
        basis[take] = mode
    unlinked = group == None  # noqa: E711
    group[unlinked] = _prefixed("composite:unlinked:", keys[selected][unlinked]).to_numpy(zero_copy_only=False)
    frame = _frame(keys[selected], group, pd.Categorical(basis))
    if unlinked.any():
        ids = keys[selected][unlinked].tolist()
        notes.append(unprioritized_finding(ids, len(ids)))
    relations = relation_names(priority)
    parameters: dict[str, Any] = {}
    if time_target is not None:
        time_cols, time_notes, parameters["time_order"] = sample_time_columns(graph, time_target)
        frame = pd.concat([frame, time_cols], axis=1)
        notes += time_notes
    return Partition(frame, "composite", strategy="rule_based", relations=relations, via=via, priority=priority,
                     warnings=tuple(notes), parameters=parameters)  # fmt: skip


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
