"""Property tests: the engine's promises, checked on random small cohorts.

A hypothesis strategy draws whole cohorts: a metadata table (unique sample
ids; optional subject, batch, study, site and timepoint columns with missing
cells; time_index consistent per timepoint, ties allowed), a kinship pair
table over the subjects, 2-D coordinates for some samples and declared
duplicate pairs. Ids are text over a small alphabet (so Python string order
matters: "Z" < "a" < "é") or integers, negatives included (so "10" < "9" as keys).

Every expected value below is computed from the drawn cohort itself (or, where
the brief says so, from the graph's edge table) with plain Python and
networkx, never by calling the code under test a second way.
"""

from __future__ import annotations

import tempfile
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import networkx as nx
import numpy as np
import orjson
import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from depgraph import (
    DepgraphError,
    StudyGraph,
    add_duplicates,
    add_kinship,
    add_spatial,
    combine,
    derive,
    from_metadata,
    read_graph,
    validate,
    write_graph,
)
from depgraph.derivation.partition import Partition
from depgraph.graph.files import graph_bytes, graph_from_document
from depgraph.vocab import RELATION, NodeType

# --------------------------------------------------------------------------- vocabulary of the tests
#: direct mode -> metadata column and node type of its target
DIRECT_COLUMNS: dict[str, str] = {
    "subject": "subject_id",
    "batch": "batch_id",
    "study": "study_id",
    "site": "site_id",
    "time": "timepoint_id",
}
DIRECT_MODES: tuple[str, ...] = tuple(DIRECT_COLUMNS)
COMPONENT_MODES: tuple[str, ...] = ("relatedness", "spatial", "duplicate")
COMBINABLE: tuple[str, ...] = (*DIRECT_MODES, *COMPONENT_MODES)
ENTITY_TYPE: dict[str, str] = {
    "subject_id": "subject",
    "batch_id": "batch",
    "study_id": "study",
    "site_id": "site",
    "timepoint_id": "timepoint",
}
#: Kinship values and thresholds share one grid, so threshold ties are exact.
KINSHIP_LEVELS: tuple[float, ...] = (0.0, 0.0442, 0.0884, 0.125, 0.177, 0.25, 0.354, 0.5)
#: Coordinates are multiples of 0.5 and radii are too: squared distances are exact.
RADII: tuple[float, ...] = (0.0, 0.5, 1.0, 1.5, 2.0, 2.5, 5.0)
TIME_VALUES: tuple[float, ...] = (0.0, 1.0, 2.0, 2.5, 3.0)

ID_ALPHABET = "aZ09-é"


def examples(n: int) -> settings:
    """Settings tuned so the whole file runs in well under a minute."""
    return settings(max_examples=n, deadline=None, suppress_health_check=[HealthCheck.too_slow])


# --------------------------------------------------------------------------- the cohort strategy
@dataclass(frozen=True)
class Cohort:
    """One drawn cohort: the raw tables the engine reads, and the same facts
    as normalised text keys (what the engine should make of them)."""

    meta: pd.DataFrame
    samples: tuple[str, ...]  # sample key per metadata row
    targets: Mapping[str, tuple[str | None, ...]]  # direct mode -> target key per row
    time_of: Mapping[str, float | None]  # timepoint key -> its time_index (None: none declared)
    kinship: pd.DataFrame | None
    kin_pairs: tuple[tuple[str, str, float], ...]
    threshold: float
    coords: pd.DataFrame | None
    points: Mapping[str, tuple[float, float]]
    radius: float
    dups: pd.DataFrame | None
    dup_pairs: tuple[tuple[str, str], ...]

    @property
    def sample_keys(self) -> list[str]:
        return sorted(self.samples)

    def target_of(self, mode: str) -> dict[str, str | None]:
        column = self.targets.get(mode)
        if column is None:
            return dict.fromkeys(self.samples)
        return dict(zip(self.samples, column, strict=True))


def _key(value: Any) -> str:
    """How the engine spells an id drawn as int or text."""
    return str(value)


@st.composite
def id_pool(draw: st.DrawFn, size: int, as_int: bool, lookalikes: Sequence[str] = ()) -> list[Any]:
    """``size`` distinct ids, ints or short text. ``lookalikes`` are extra text
    ids an entity may carry (``"unlinked:<sample>"``, which a careless label
    scheme confuses with an unlinked sample's singleton label)."""
    if as_int:
        return draw(st.lists(st.integers(-5, 40), min_size=size, max_size=size, unique=True))
    text = st.text(ID_ALPHABET, min_size=1, max_size=3)
    if lookalikes:
        text = st.one_of(text, st.sampled_from(list(lookalikes)))
    return draw(st.lists(text, min_size=size, max_size=size, unique=True))


def _time_key(value: float) -> str:
    return str(int(value)) if float(value).is_integer() else repr(float(value))


@st.composite
def cohorts(draw: st.DrawFn, min_samples: int = 1, max_samples: int = 10, lookalikes: bool = False) -> Cohort:
    """A random small cohort. With ``lookalikes``, entity ids may read ``"unlinked:<sample id>"``."""
    n = draw(st.integers(min_samples, max_samples))
    sample_raw = draw(id_pool(n, draw(st.booleans())))
    samples = tuple(_key(v) for v in sample_raw)
    meta: dict[str, Any] = {"sample_id": sample_raw}
    targets: dict[str, tuple[str | None, ...]] = {}
    time_of: dict[str, float | None] = {}

    # how many id columns, then which: an empty or one-column table is as likely as a full one
    n_columns = draw(st.integers(0, len(DIRECT_COLUMNS)))
    columns = set(draw(st.permutations(list(DIRECT_COLUMNS)))[:n_columns])
    for mode, column in DIRECT_COLUMNS.items():
        if mode not in columns:
            continue
        k = draw(st.integers(1, 4))
        pool = draw(id_pool(k, draw(st.booleans()), [f"unlinked:{s}" for s in samples] if lookalikes else ()))
        picks = draw(st.lists(st.one_of(st.none(), st.integers(0, k - 1)), min_size=n, max_size=n))
        raw = [None if i is None else pool[i] for i in picks]
        if mode != "time":
            meta[column] = raw
            targets[mode] = tuple(None if v is None else _key(v) for v in raw)
            continue
        style = draw(st.sampled_from(["id_index", "index_only", "id_only"]))
        pool_time = draw(st.lists(st.sampled_from(TIME_VALUES), min_size=k, max_size=k))
        if style == "id_only":
            meta[column] = raw
            targets[mode] = tuple(None if v is None else _key(v) for v in raw)
            time_of.update({_key(v): None for v in raw if v is not None})
        elif style == "index_only":  # time_index alone names the timepoint
            index = [np.nan if i is None else pool_time[i] for i in picks]
            meta["time_index"] = index
            targets[mode] = tuple(None if i is None else _time_key(pool_time[i]) for i in picks)
            time_of.update({_time_key(pool_time[i]): pool_time[i] for i in picks if i is not None})
        else:  # both columns; a row may omit time_index if another row of its timepoint gives it
            blank = draw(st.lists(st.booleans(), min_size=n, max_size=n))
            seen: set[int] = set()
            index = []
            for row, i in enumerate(picks):
                if i is None:
                    index.append(np.nan)
                elif i not in seen or not blank[row]:
                    seen.add(i)
                    index.append(pool_time[i])
                else:
                    index.append(np.nan)
            meta[column] = raw
            meta["time_index"] = index
            targets[mode] = tuple(None if v is None else _key(v) for v in raw)
            time_of.update({_key(pool[i]): pool_time[i] for i in picks if i is not None})

    attribute = draw(st.sampled_from([None, "int", "float", "text"]))
    if attribute == "int":
        meta["age"] = draw(st.lists(st.integers(0, 90), min_size=n, max_size=n))
    elif attribute == "float":
        meta["age"] = draw(st.lists(st.one_of(st.none(), st.floats(0, 90, width=32)), min_size=n, max_size=n))
        meta["age"] = [np.nan if v is None else v for v in meta["age"]]
    elif attribute == "text":
        meta["note"] = draw(st.lists(st.one_of(st.none(), st.sampled_from(["x", "y"])), min_size=n, max_size=n))

    # kinship pairs over the subjects that exist (both orders and repeats allowed)
    kinship, kin_pairs = None, ()
    threshold = draw(st.sampled_from(KINSHIP_LEVELS))
    if "subject_id" in meta:
        raw_subjects = list(dict.fromkeys(v for v in meta["subject_id"] if v is not None))
        if len(raw_subjects) >= 2:
            m = len(raw_subjects)
            pairs = draw(
                st.lists(
                    st.tuples(st.integers(0, m - 1), st.integers(0, m - 1), st.sampled_from(KINSHIP_LEVELS)).filter(
                        lambda t: t[0] != t[1]
                    ),
                    max_size=6,
                )
            )
            if pairs:
                kinship = pd.DataFrame(
                    {
                        "id1": [raw_subjects[a] for a, _, _ in pairs],
                        "id2": [raw_subjects[b] for _, b, _ in pairs],
                        "kinship": [v for _, _, v in pairs],
                    }
                )
                kin_pairs = tuple((_key(raw_subjects[a]), _key(raw_subjects[b]), v) for a, b, v in pairs)

    # coordinates for some samples
    coords, points = None, {}
    radius = draw(st.sampled_from(RADII))
    located = draw(st.lists(st.booleans(), min_size=n, max_size=n))
    if any(located):
        xy = draw(st.lists(st.tuples(st.integers(0, 8), st.integers(0, 8)), min_size=n, max_size=n))
        rows = [i for i in range(n) if located[i]]
        coords = pd.DataFrame(
            {
                "sample_id": [sample_raw[i] for i in rows],
                "x": [xy[i][0] / 2 for i in rows],
                "y": [xy[i][1] / 2 for i in rows],
            }
        )
        points = {samples[i]: (xy[i][0] / 2, xy[i][1] / 2) for i in rows}

    # declared duplicates
    dups, dup_pairs = None, ()
    if n >= 2:
        pairs = draw(
            st.lists(st.tuples(st.integers(0, n - 1), st.integers(0, n - 1)).filter(lambda t: t[0] != t[1]), max_size=5)
        )
        if pairs:
            dups = pd.DataFrame({"id1": [sample_raw[a] for a, _ in pairs], "id2": [sample_raw[b] for _, b in pairs]})
            dup_pairs = tuple((samples[a], samples[b]) for a, b in pairs)

    return Cohort(
        meta=pd.DataFrame(meta),
        samples=samples,
        targets=targets,
        time_of=time_of,
        kinship=kinship,
        kin_pairs=kin_pairs,
        threshold=threshold,
        coords=coords,
        points=points,
        radius=radius,
        dups=dups,
        dup_pairs=dup_pairs,
    )


def build(
    c: Cohort,
    meta: pd.DataFrame | None = None,
    kinship: pd.DataFrame | None = None,
    coords: pd.DataFrame | None = None,
    dups: pd.DataFrame | None = None,
    *,
    threshold: float | None = None,
    radius: float | None = None,
) -> StudyGraph:
    """The cohort's graph, from its own tables or from replacements (shuffled copies)."""
    g = from_metadata(c.meta if meta is None else meta)
    if c.kinship is not None:
        g = add_kinship(g, c.kinship if kinship is None else kinship, c.threshold if threshold is None else threshold)
    if c.coords is not None:
        g = add_spatial(g, c.coords if coords is None else coords, c.radius if radius is None else radius)
    if c.dups is not None:
        g = add_duplicates(g, c.dups if dups is None else dups)
    return g


def _shuffle(frame: pd.DataFrame | None, perm: Sequence[int], swap: Sequence[bool] = ()) -> pd.DataFrame | None:
    """Rows of ``frame`` in another order (the index travels with them); for
    pair tables, ``swap`` exchanges id1 and id2 in some rows."""
    if frame is None:
        return None
    out = frame.iloc[list(perm)].copy()
    if swap and "id1" in out.columns:
        flip = np.array(swap[: len(out)], dtype=bool)
        a, b = out["id1"].to_numpy(dtype=object).copy(), out["id2"].to_numpy(dtype=object).copy()
        a[flip], b[flip] = b[flip], a[flip]
        out["id1"], out["id2"] = a, b
    return out


def present_modes(c: Cohort) -> tuple[str, ...]:
    """Modes a default composite combines: those whose own relation has edges."""
    out = []
    for mode in COMBINABLE:
        if mode in DIRECT_COLUMNS:
            ok = any(t is not None for t in c.target_of(mode).values())
        elif mode == "relatedness":
            ok = bool(kinship_edges(c))
        elif mode == "spatial":
            ok = bool(spatial_edges(c))
        else:
            ok = bool(c.dup_pairs)
        if ok:
            out.append(mode)
    return tuple(out)


def kinship_edges(c: Cohort, threshold: float | None = None) -> set[frozenset[str]]:
    t = c.threshold if threshold is None else threshold
    return {frozenset((a, b)) for a, b, v in c.kin_pairs if v >= t}


def spatial_edges(c: Cohort, radius: float | None = None) -> set[frozenset[str]]:
    r = c.radius if radius is None else radius
    keys = sorted(c.points)
    out = set()
    for i, a in enumerate(keys):
        for b in keys[i + 1 :]:
            (xa, ya), (xb, yb) = c.points[a], c.points[b]
            if (xa - xb) ** 2 + (ya - yb) ** 2 <= r * r:  # exact: multiples of 0.5
                out.add(frozenset((a, b)))
    return out


modes_subset = st.lists(st.sampled_from(COMBINABLE), min_size=1, max_size=4, unique=True)


# --------------------------------------------------------------------------- helpers on results
def outcome(graph: StudyGraph, mode: str, **kwargs: Any) -> Partition | tuple[str, str]:
    """A partition, or the code of the DepgraphError the derivation raised."""
    try:
        return derive(graph, mode, **kwargs)
    except DepgraphError as exc:
        return ("error", exc.code)


def assert_same_outcome(a: Partition | tuple[str, str], b: Partition | tuple[str, str], what: str) -> None:
    if isinstance(a, tuple) or isinstance(b, tuple):
        assert a == b, what
        return
    pd.testing.assert_frame_equal(a.samples, b.samples, obj=what)
    assert (a.mode, a.strategy, a.relations, a.via, a.priority) == (b.mode, b.strategy, b.relations, b.via, b.priority)
    assert [w.to_dict() for w in a.warnings] == [w.to_dict() for w in b.warnings], what
    assert a.parameters == b.parameters, what


def refines(fine: Mapping[str, str], coarse: Mapping[str, str]) -> list[tuple[str, set[str]]]:
    """Groups of ``fine`` that are not inside one group of ``coarse`` (empty: it refines)."""
    inside: dict[str, set[str]] = {}
    for sample, group in fine.items():
        inside.setdefault(group, set()).add(coarse[sample])
    return [(g, owners) for g, owners in inside.items() if len(owners) > 1]


def reference_labels(graph: nx.Graph, samples: Sequence[str], prefix: str) -> dict[str, str]:
    """``prefix + smallest member`` (Python string order) per sample node ``("sample", key)``."""
    out: dict[str, str] = {}
    wanted = set(samples)
    for comp in nx.connected_components(graph):
        members = sorted(key for kind, key in comp if kind == "sample" and key in wanted)
        for key in members:
            out[key] = prefix + members[0]
    return out


def reference_graph(c: Cohort, modes: Sequence[str]) -> nx.Graph:
    """The sample + entity graph of the raw cohort over the relations of ``modes``."""
    g = nx.Graph()
    g.add_nodes_from(("sample", s) for s in c.samples)
    for mode in modes:
        if mode in DIRECT_COLUMNS or mode == "relatedness":
            column = "subject" if mode == "relatedness" else mode
            kind = ENTITY_TYPE[DIRECT_COLUMNS[column]]
            for s, t in c.target_of(column).items():
                if t is not None:
                    g.add_edge(("sample", s), (kind, t))
        if mode == "relatedness":
            g.add_edges_from((("subject", a), ("subject", b)) for a, b in kinship_edges(c))
        elif mode == "spatial":
            g.add_edges_from((("sample", a), ("sample", b)) for a, b in spatial_edges(c))
        elif mode == "duplicate":
            g.add_edges_from((("sample", a), ("sample", b)) for a, b in c.dup_pairs)
    return g


def graph_edge_reference(graph: StudyGraph, relations: Sequence[str], selected: set[str]) -> nx.Graph:
    """networkx graph over node positions built from ``graph``'s own edge table,
    induced on the selected samples (other samples and their edges removed;
    entities stay). Nodes are named ``(type prefix, key)``."""
    keys = graph.nodes["key"].to_numpy(dtype=object)
    types = [NodeType(t).prefix for t in graph.nodes["type"].astype(str)]
    name = [(types[i], keys[i]) for i in range(graph.n_nodes)]
    kept = {i for i in range(graph.n_nodes) if types[i] != "sample" or keys[i] in selected}
    out = nx.Graph()
    out.add_nodes_from(name[i] for i in kept)
    for rel in relations:
        src, dst, _ = graph.relation_edges(rel)
        out.add_edges_from(
            (name[s], name[d]) for s, d in zip(src.tolist(), dst.tolist(), strict=True) if s in kept and d in kept
        )
    return out


def crossing_edges(graph: StudyGraph, partition: Partition) -> list[tuple[str, str, str]]:
    """Edges of the partition's grouping relations that join samples of two groups."""
    group = partition.groups()
    keys = graph.nodes["key"].to_numpy(dtype=object)
    subject_samples: dict[int, list[str]] = {}
    s_src, s_dst, _ = graph.relation_edges("sample_belongs_to_subject")
    for s, d in zip(s_src.tolist(), s_dst.tolist(), strict=True):
        subject_samples.setdefault(d, []).append(keys[s])
    bad = []
    for rel in partition.relations:
        if rel == "timepoint_precedes":  # an order between groups, not a grouping relation
            continue
        spec = RELATION[rel]
        src, dst, _ = graph.relation_edges(rel)
        if spec.source == NodeType.SAMPLE and spec.target == NodeType.SAMPLE:
            ends = [([keys[s]], [keys[d]]) for s, d in zip(src.tolist(), dst.tolist(), strict=True)]
        elif spec.source == NodeType.SAMPLE:  # samples sharing a target entity
            by_target: dict[int, list[str]] = {}
            for s, d in zip(src.tolist(), dst.tolist(), strict=True):
                by_target.setdefault(d, []).append(keys[s])
            ends = [(members[:1], members[1:]) for members in by_target.values()]
        elif spec.source == NodeType.SUBJECT and spec.target == NodeType.SUBJECT:
            ends = [
                (subject_samples.get(s, []), subject_samples.get(d, []))
                for s, d in zip(src.tolist(), dst.tolist(), strict=True)
            ]
        else:
            raise AssertionError(f"{rel} is not a relation a grouping mode should follow")
        for left, right in ends:
            members = [m for m in left + right if m in group]
            if len({group[m] for m in members}) > 1:
                bad.append((rel, members[0], ", ".join(members[1:])))
    return bad


# --------------------------------------------------------------------------- 1. row order
@st.composite
def cohort_and_shuffle(draw: st.DrawFn) -> tuple[Cohort, dict[str, Any], dict[str, Any]]:
    c = draw(cohorts())
    tables: dict[str, Any] = {}
    for name in ("meta", "kinship", "coords", "dups"):
        frame = getattr(c, name)
        if frame is None:
            continue
        perm = draw(st.permutations(range(len(frame))))
        swap = draw(st.lists(st.booleans(), min_size=len(frame), max_size=len(frame)))
        tables[name] = _shuffle(frame, perm, swap)
    calls = {
        "via": draw(modes_subset),
        "priority": draw(modes_subset),
    }
    return c, tables, calls


@pytest.mark.slow  # 35 cohorts through every mode: ~6 s; CI runs it (--slow)
@examples(35)
@given(cohort_and_shuffle())
def test_row_order_changes_no_group_and_no_byte(case):
    c, shuffled, calls = case
    a = build(c)
    b = build(c, **shuffled)
    assert a.equals(b)
    assert graph_bytes(a) == graph_bytes(b)
    requests: list[tuple[str, dict[str, Any]]] = [(m, {}) for m in (*DIRECT_MODES, *COMPONENT_MODES)]
    requests += [
        ("composite", {}),
        ("composite", {"via": calls["via"]}),
        ("composite", {"strategy": "rule_based", "priority": calls["priority"]}),
    ]
    for mode, kwargs in requests:
        pa, pb = outcome(a, mode, **kwargs), outcome(b, mode, **kwargs)
        assert_same_outcome(pa, pb, f"{mode} {kwargs}")
        if mode == "time" and not isinstance(pa, tuple):
            assert pa.samples["order_rank"].equals(pb.samples["order_rank"])
    assert validate(a).to_json_bytes() == validate(b).to_json_bytes()


# --------------------------------------------------------------------------- 2. monotone thresholds
@examples(40)
@given(
    cohorts(min_samples=2),
    st.lists(st.sampled_from(KINSHIP_LEVELS), min_size=2, max_size=2),
    st.lists(st.sampled_from(RADII), min_size=2, max_size=2),
)
def test_lower_threshold_or_wider_radius_only_merges(c, thresholds, radii):
    lo, hi = sorted(thresholds)
    near, far = sorted(radii)
    strict_ = build(c, threshold=hi, radius=near)
    loose = build(c, threshold=lo, radius=far)
    for mode, kwargs in (
        ("relatedness", {}),
        ("spatial", {}),
        ("composite", {"via": ["relatedness", "spatial"]}),
    ):
        fine = derive(strict_, mode, allow_unlinked=True, **kwargs).groups()
        coarse = derive(loose, mode, allow_unlinked=True, **kwargs).groups()
        assert not refines(fine, coarse), f"{mode}: {refines(fine, coarse)}"


# --------------------------------------------------------------------------- 3. no crossing edge
@examples(50)
@given(cohorts(), modes_subset)
def test_no_followed_edge_crosses_groups(c, via):
    g = build(c)
    for mode, kwargs in [(m, {}) for m in (*DIRECT_MODES, *COMPONENT_MODES)] + [
        ("composite", {"via": via}),
        ("composite", {"allow_single_group": True}),
    ]:
        p = outcome(g, mode, allow_unlinked=True, **kwargs)
        if isinstance(p, tuple):  # only a default composite over nothing may refuse
            assert (mode, p) == ("composite", ("error", "no_relation")) and not present_modes(c) and "via" not in kwargs
            continue
        assert p.sample_ids.tolist() == c.sample_keys
        assert not crossing_edges(g, p), f"{mode} {kwargs}: {crossing_edges(g, p)}"


@examples(50)
@given(cohorts(lookalikes=True))
def test_direct_modes_group_by_the_target_and_only_by_it(c):
    g = build(c)
    for mode in DIRECT_MODES:
        targets = c.target_of(mode)
        # an entity key spelled like an unlinked sample's label ("unlinked:S5" next to an
        # unlinked S5): the engine may refuse it (ambiguity), but only when that is really the case
        unlinked = {f"unlinked:{s}" for s, t in targets.items() if t is None}
        collide = sorted({t for t in targets.values() if t in unlinked})
        try:
            groups = derive(g, mode, allow_unlinked=True).groups()
        except DepgraphError as exc:
            assert exc.code == "ambiguity" and collide, f"{mode}: refused without a collision: {exc}"
            continue
        # samples sharing a target share a group
        label_of_target: dict[str, set[str]] = {}
        for sample, target in targets.items():
            if target is not None:
                label_of_target.setdefault(target, set()).add(groups[sample])
        assert all(len(labels) == 1 for labels in label_of_target.values()), mode
        # samples with different targets (an unlinked sample counts as its own target) do not
        targets_of_group: dict[str, set[tuple[str, str]]] = {}
        for sample, target in targets.items():
            own = ("target", target) if target is not None else ("unlinked", sample)
            targets_of_group.setdefault(groups[sample], set()).add(own)
        merged = {grp: sorted(t) for grp, t in targets_of_group.items() if len(t) > 1}
        assert not merged, f"{mode}: one group for different targets {merged}"
        # and the label is the documented one: "<mode>:<key>", "<mode>:unlinked:<sample_id>" (the
        # second only without a collision: there the two documented spellings coincide)
        for sample, target in targets.items():
            if target is not None:
                assert groups[sample] == f"{mode}:{target}"
            elif not collide:
                assert groups[sample] == f"{mode}:unlinked:{sample}"


@examples(50)
@given(cohorts())
def test_order_rank_is_the_dense_rank_of_time_index(c):
    p = derive(build(c), "time", allow_unlinked=True)
    targets = c.target_of("time")
    used = {t for t in targets.values() if t is not None}
    got_tp = [None if pd.isna(v) else v for v in p.samples["timepoint_id"]]
    assert got_tp == [targets[s] for s in c.sample_keys]
    if not used or any(c.time_of[t] is None for t in used):
        return
    levels = sorted({c.time_of[t] for t in used})
    got = p.samples.set_index("sample_id")["order_rank"]
    for sample, t in targets.items():
        rank = None if t is None else levels.index(c.time_of[t]) + 1  # ties share a rank
        assert (rank is None and pd.isna(got[sample])) or got[sample] == rank, (sample, got[sample], rank)


# --------------------------------------------------------------------------- 4. subsets
@examples(35)
@given(cohorts(min_samples=2), st.data())
def test_subset_is_the_induced_subgraph(c, data):
    g = build(c)
    keys = c.sample_keys
    chosen = data.draw(st.lists(st.sampled_from(keys), min_size=1, max_size=len(keys) + 2), label="samples")
    as_node_ids = data.draw(st.lists(st.booleans(), min_size=len(chosen), max_size=len(chosen)))
    request = [f"sample:{s}" if flag else s for s, flag in zip(chosen, as_node_ids, strict=True)]
    selected = set(chosen)
    via = data.draw(modes_subset, label="via")
    for mode, kwargs in [(m, {}) for m in COMPONENT_MODES] + [("composite", {"via": via})]:
        full = derive(g, mode, allow_unlinked=True, **kwargs)
        sub = derive(g, mode, samples=request, allow_unlinked=True, **kwargs)
        assert sub.sample_ids.tolist() == sorted(selected)
        restricted = {s: grp for s, grp in full.groups().items() if s in selected}
        assert not refines(sub.groups(), restricted), f"{mode}: subset merged what the full cohort separates"
        prefix = "composite:" if mode == "composite" else f"{mode}:"
        expected = reference_labels(graph_edge_reference(g, sub.relations, selected), sorted(selected), prefix)
        assert sub.groups() == expected, f"{mode} {kwargs}"
        assert not crossing_edges(g, sub)
    for mode in DIRECT_MODES:
        full = derive(g, mode, allow_unlinked=True).groups()
        sub = derive(g, mode, samples=request, allow_unlinked=True).groups()
        assert sub == {s: grp for s, grp in full.items() if s in selected}


# --------------------------------------------------------------------------- 5. networkx reference
@examples(60)
@given(cohorts(), modes_subset)
def test_components_match_networkx_and_are_labelled_by_smallest_member(c, via):
    g = build(c)
    # the builders' edges are exactly the declared ones (inclusive threshold and radius)
    keys = g.nodes["key"].to_numpy(dtype=object)
    for rel, expected in (
        ("subject_related_to", kinship_edges(c) if c.kinship is not None else set()),
        ("sample_adjacent_to", spatial_edges(c)),
        ("sample_duplicate_of", {frozenset(p) for p in c.dup_pairs}),
    ):
        src, dst, _ = g.relation_edges(rel)
        assert {frozenset((keys[s], keys[d])) for s, d in zip(src, dst, strict=True)} == expected, rel
    cases = [(m, {}, (m,), f"{m}:") for m in COMPONENT_MODES]
    cases.append(("composite", {"via": via}, tuple(via), "composite:"))
    if present_modes(c):
        cases.append(("composite", {"allow_single_group": True}, present_modes(c), "composite:"))
    for mode, kwargs, modes, prefix in cases:
        p = derive(g, mode, allow_unlinked=True, **kwargs)
        expected = reference_labels(reference_graph(c, modes), c.sample_keys, prefix)
        assert p.groups() == expected, f"{mode} {kwargs}"
        if mode == "composite" and "via" not in kwargs:
            assert set(p.via) == set(modes)


# --------------------------------------------------------------------------- 6. JSON round trip
@examples(30)
@given(cohorts())
def test_json_round_trip_is_exact(c):
    g = build(c)
    raw = graph_bytes(g)
    back = graph_from_document(orjson.loads(raw))
    assert back.equals(g)
    assert graph_bytes(back) == raw
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "graph.json"
        write_graph(g, path)
        assert path.read_bytes() == raw
        again = read_graph(path)
    assert again.equals(g)
    assert graph_bytes(again) == raw
    for mode in (*DIRECT_MODES, *COMPONENT_MODES):
        assert_same_outcome(outcome(g, mode), outcome(again, mode), mode)


# --------------------------------------------------------------------------- 7. combine
@examples(25)
@given(cohorts(min_samples=2), st.data())
def test_combining_overlapping_sub_cohorts_gives_the_whole(c, data):
    n = len(c.meta)
    side = data.draw(st.lists(st.sampled_from(["a", "b", "both"]), min_size=n, max_size=n), label="side")
    in_a = [s in ("a", "both") for s in side]
    in_b = [s in ("b", "both") for s in side]
    if not any(in_a) or not any(in_b):
        in_a[0], in_b[-1] = True, True
    part_a, part_b = c.meta[in_a], c.meta[in_b]
    whole = from_metadata(c.meta)
    merged = combine(from_metadata(part_a), from_metadata(part_b))
    for mode in ("subject", "batch", "study", "site"):
        assert derive(merged, mode, allow_unlinked=True).groups() == derive(whole, mode, allow_unlinked=True).groups()
    assert merged.nodes.equals(whole.nodes)
    for rel in RELATION:
        if rel == "timepoint_precedes":  # a sub-cohort sees fewer levels: its chain skips some
            continue
        w_src, w_dst, _ = whole.relation_edges(rel)
        m_src, m_dst, _ = merged.relation_edges(rel)
        assert w_src.tolist() == m_src.tolist() and w_dst.tolist() == m_dst.tolist(), rel
    tw, tm = derive(whole, "time", allow_unlinked=True).samples, derive(merged, "time", allow_unlinked=True).samples
    pd.testing.assert_frame_equal(tw, tm)
