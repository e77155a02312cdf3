"""What validation's rules ask of a graph, answered by an engine: :class:`GraphFacts`, and the single machine's
answers over a :class:`~depgraph.graph.model.StudyGraph` (:class:`StudyGraphFacts`).

The rules (:mod:`depgraph.validation.rules`) are written once: they count and word; the counting that touches
sample-sized tables is a question here — which samples have more than one subject, which subjects span two sites,
the group sizes of a mode — answered with numpy on one machine and with Spark group-bys and joins on Spark
(:mod:`depgraph.spark.validation`). An answer naming nodes is a :class:`Found`: how many, the first keys (what a
message shows) and, on request, every node id (what a finding lists).

>>> import pandas as pd
>>> from depgraph import from_metadata
>>> g = from_metadata(pd.DataFrame({"sample_id": ["S1", "S2", "S3"], "subject_id": ["P1", "P1", "P2"]}))
>>> repeated = StudyGraphFacts(g).targets_with_samples("sample_belongs_to_subject", 2)
>>> len(repeated), repeated.ids(), repeated.named()
(1, ('subject:P1',), 'P1')
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, NamedTuple, Protocol

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc

from depgraph.common.arrays import present
from depgraph.common.identifiers import formula_like
from depgraph.derivation.groups import group_sizes
from depgraph.derivation.timeorder import time_order_problems
from depgraph.errors import describe_ids
from depgraph.findings import Issue
from depgraph.graph.model import StudyGraph
from depgraph.validation.structure import structure_findings
from depgraph.vocab import NODE_TYPES, NodeType, RelationName

#: What a message shows of the nodes a finding names.
SHOWN = 5


@dataclass(frozen=True)
class Found:
    """Nodes an answer names, in node order (types in vocabulary order, keys in byte order): how many, the first
    :data:`SHOWN` keys, and every node id (``subject:P1``) built only when asked."""

    count: int
    first_keys: tuple[str, ...]
    all_ids: Callable[[], tuple[str, ...]] = field(repr=False)

    def __len__(self) -> int:
        return self.count

    def ids(self) -> tuple[str, ...]:
        return self.all_ids() if self.count else ()

    def named(self) -> str:
        """The first keys and how many more, as a message names them."""
        return describe_ids(list(self.first_keys), SHOWN, total=self.count)


class GroupCount(NamedTuple):
    """A partition's shape as validation reads it."""

    n_groups: int
    largest: int
    sizes: Callable[[], np.ndarray]


def node_ids(type_codes: pa.Array, keys: pa.Array) -> np.ndarray:
    """Node ids (``subject:P1``) of nodes given by type code (a place in :data:`NODE_TYPES`) and key, built in
    Arrow."""
    prefixes = pa.array([f"{t.prefix}:" for t in NODE_TYPES]).take(type_codes)
    return pc.binary_join_element_wise(prefixes, keys, "").to_numpy(zero_copy_only=False)


class GraphFacts(Protocol):
    """The questions validation asks of a graph (one engine's answers). Node counts, relations present, history
    and overrides are the graph's own; the rest is counted by the engine."""

    name: str | None
    history: tuple[dict[str, Any], ...] | list[dict[str, Any]]
    overrides: dict[str, Any]
    n_nodes: int
    n_edges: int

    def count(self, node_type: NodeType) -> int: ...
    def has_relation(self, relation: str) -> bool: ...
    def structure(self) -> list[Issue]:
        """Structural findings (repeated ids, dangling or mistyped or repeated edges) the engine's graph can hold."""
        ...

    def assignments(self, relation: str) -> tuple[Found, Found]:
        """Samples with several targets of a sample relation, and samples with none (both empty without edges)."""
        ...

    def targets_with_samples(self, relation: str, at_least: int) -> Found:
        """Targets of a sample relation that at least ``at_least`` samples point to."""
        ...

    def subjects_spanning(self, relation: str) -> Found:
        """Subjects whose samples have two or more different targets of a sample relation."""
        ...

    def related_subjects(self) -> tuple[int, Found]:
        """The kinship pairs, and the subjects in any."""
        ...

    def duplicates_across_subjects(self) -> tuple[int, Found]:
        """Duplicate pairs whose samples have different or missing subjects, and those samples."""
        ...

    def formula_like_keys(self) -> Found:
        """Nodes whose key a spreadsheet reads as a formula."""
        ...

    def featuresets_by_scope(self, scopes: Sequence[str], inside: bool) -> tuple[Found, list[str]]:
        """Feature sets whose ``derivation_scope`` is among ``scopes`` (``inside``) or is given and not among them,
        and the distinct values of those."""
        ...

    def time_order_problems(self) -> list[tuple[str, str, list[str]]]:
        """``(code, message, timepoint keys)`` per time-order inconsistency."""
        ...

    def timepoints_indexed(self) -> bool:
        """Whether any timepoint has a ``time_index``."""
        ...

    def group_shape(self, mode: str, via: Sequence[str] | None) -> GroupCount:
        """How many groups a mode makes of every sample, the largest's size, and the sizes (at least the two
        largest) on request; ``via`` the modes of a strict composite. Raises as derive does where it cannot be
        derived."""
        ...


class StudyGraphFacts:
    """The single machine's answers, over a :class:`StudyGraph`'s arrays. A node type's ids are built once and
    shared when findings name much of it (400,000 subjects with several samples, and again those related)."""

    def __init__(self, graph: StudyGraph) -> None:
        self.graph = graph
        self.name, self.history, self.overrides = graph.name, graph.history, graph.overrides
        self.n_nodes, self.n_edges = graph.n_nodes, graph.n_edges
        self._codes = graph.nodes["type"].cat.codes.to_numpy()
        self._id_blocks: dict[int, np.ndarray] = {}

    def count(self, node_type: NodeType) -> int:
        return self.graph.count(node_type)

    def has_relation(self, relation: str) -> bool:
        return self.graph.has_relation(relation)

    def found(self, positions: np.ndarray) -> Found:
        """The nodes at ``positions`` (rising)."""
        positions = np.asarray(positions, dtype=np.int64)
        shown = self.graph.key_array.take(pa.array(positions[:SHOWN])).to_pylist()
        return Found(len(positions), tuple(shown), lambda: self.ids(positions))

    def ids(self, positions: np.ndarray) -> tuple[str, ...]:
        codes = self._codes
        if len(positions) > 10_000 and (codes[positions] == codes[positions[0]]).all():
            start, stop = self.graph.type_range(NODE_TYPES[codes[positions[0]]])
            if len(positions) > (stop - start) // 10:
                block = self._id_blocks.get(start)
                if block is None:
                    block = self._id_blocks[start] = self._joined(np.arange(start, stop, dtype=np.int64))
                return tuple(block[positions - start])
        return tuple(self._joined(positions))

    def _joined(self, positions: np.ndarray) -> np.ndarray:
        at = pa.array(positions)
        return node_ids(pa.array(self._codes).take(at), self.graph.key_array.take(at))

    def structure(self) -> list[Issue]:
        return structure_findings(self.graph, self.ids)

    def assignments(self, relation: str) -> tuple[Found, Found]:
        start, stop = self.graph.type_range(NodeType.SAMPLE)
        src, _, _ = self.graph.relation_edges(relation)
        if not len(src) or stop == start:
            return self.found(np.empty(0)), self.found(np.empty(0))
        counts = np.bincount(src - start, minlength=stop - start)
        return self.found(np.flatnonzero(counts > 1) + start), self.found(np.flatnonzero(counts == 0) + start)

    def targets_with_samples(self, relation: str, at_least: int) -> Found:
        _, dst, _ = self.graph.relation_edges(relation)
        return self.found(np.flatnonzero(np.bincount(dst, minlength=self.n_nodes) >= at_least))

    def subjects_spanning(self, relation: str) -> Found:
        g = self.graph
        s_src, s_dst, _ = g.relation_edges(RelationName.SAMPLE_BELONGS_TO_SUBJECT)
        start, _ = g.type_range(NodeType.SAMPLE)
        other = g.sample_targets(relation)[s_src - start]  # (subject, other) for every sample with both
        both = other >= 0
        lowest = np.full(g.n_nodes, g.n_nodes, dtype=np.int64)
        highest = np.full(g.n_nodes, -1, dtype=np.int64)
        np.minimum.at(lowest, s_dst[both], other[both])
        np.maximum.at(highest, s_dst[both], other[both])
        return self.found(np.flatnonzero((highest >= 0) & (lowest != highest)))

    def related_subjects(self) -> tuple[int, Found]:
        src, dst, _ = self.graph.relation_edges(RelationName.SUBJECT_RELATED_TO)
        return len(src), self.found(present(np.concatenate([src, dst]), self.n_nodes))

    def duplicates_across_subjects(self) -> tuple[int, Found]:
        g = self.graph
        src, dst, _ = g.relation_edges(RelationName.SAMPLE_DUPLICATE_OF)
        start, stop = g.type_range(NodeType.SAMPLE)
        subject_of = np.full(stop - start, -1, dtype=np.int64)
        s_src, s_dst, _ = g.relation_edges(RelationName.SAMPLE_BELONGS_TO_SUBJECT)
        subject_of[s_src - start] = s_dst  # several subjects (allowed by override): the last, the largest
        a, b = subject_of[src - start], subject_of[dst - start]
        across = (a != b) | (a < 0)
        return int(across.sum()), self.found(present(np.concatenate([src[across], dst[across]]), self.n_nodes))

    def formula_like_keys(self) -> Found:
        return self.found(np.flatnonzero(formula_like(self.graph.key_array)))

    def featuresets_by_scope(self, scopes: Sequence[str], inside: bool) -> tuple[Found, list[str]]:
        g = self.graph
        start, stop = g.type_range(NodeType.FEATURESET)
        if stop == start or "derivation_scope" not in g.attributes.columns:
            return self.found(np.empty(0)), []
        values = g.attributes["derivation_scope"].iloc[start:stop].reset_index(drop=True)
        chosen = values.isin(scopes) if inside else values.notna() & ~values.isin(scopes)
        picked = chosen.to_numpy(dtype=bool)
        return self.found(np.flatnonzero(picked) + start), pd.unique(values[picked].astype(str)).tolist()

    def time_order_problems(self) -> list[tuple[str, str, list[str]]]:
        return time_order_problems(self.graph)

    def timepoints_indexed(self) -> bool:
        start, stop = self.graph.type_range(NodeType.TIMEPOINT)
        attributes = self.graph.attributes
        return "time_index" in attributes.columns and bool(attributes["time_index"].iloc[start:stop].notna().any())

    def group_shape(self, mode: str, via: Sequence[str] | None) -> GroupCount:
        sizes = group_sizes(self.graph, mode, via)
        return GroupCount(len(sizes), int(sizes.max()), lambda: sizes)
