"""The pieces a graph is assembled from: keys factorised once, nodes and edges as builders declare them, and the
edge blocks a :class:`~depgraph.graph.model.StudyGraph` keeps per relation.

A builder (:mod:`depgraph.ingest`, a graph file, a splitGraph file) turns its table into :class:`NodePiece` and
:class:`EdgePiece` values naming nodes by key; :func:`depgraph.graph.assembly.assemble` places them as integer node
positions in :class:`RelationEdges` blocks. Keys live in Arrow arrays, so a million keys are never a million Python
objects.

>>> k = Keys.of(["b", "a", "b"])
>>> k.codes.tolist(), k.vocab.to_pylist()
([0, 1, 0], ['b', 'a'])
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc

from depgraph.common.arrays import sorted_codes, text_array
from depgraph.vocab import NodeType

#: A column whose first 10,000 ids hold more distinct ones than this is ranked by sorting;
#: fewer, and hashing is cheaper.
MANY_DISTINCT = 2_000


def many_distinct(text: pa.Array) -> bool:
    """Whether the first 10,000 keys hold more than :data:`MANY_DISTINCT` distinct ones."""
    return pc.count_distinct(text.slice(0, 10_000)).as_py() > MANY_DISTINCT


@dataclass(frozen=True)
class Keys:
    """Identifiers as integer codes into a vocabulary of distinct keys.

    One factorisation per column: builders that share a column (every
    sample-side edge of a metadata table) share its vocabulary, and assembly
    maps each vocabulary to node positions once, then indexes with the codes.
    The vocabulary is an Arrow string array, so a million keys never become a
    million Python objects; ``order`` (positions of the vocabulary in sorted
    order), when a builder already sorted it, spares assembly a second sort.

    >>> k = Keys.of(["b", "a", "b"])
    >>> k.codes.tolist(), k.vocab.to_pylist(), k.values().tolist()
    ([0, 1, 0], ['b', 'a'], ['b', 'a', 'b'])
    """

    codes: np.ndarray
    vocab: pa.Array
    order: np.ndarray | None = None

    @classmethod
    def of(cls, values: Any) -> Keys:
        """Factorise key values (text, no missing values)."""
        if isinstance(values, Keys):
            return values
        encoded = text_array(values).dictionary_encode()
        return cls(encoded.indices.to_numpy(zero_copy_only=False), encoded.dictionary)  # int32: half the bytes

    @classmethod
    def ranked(cls, values: Any) -> Keys:
        """Factorise by sorting: codes are ranks and the vocabulary comes sorted
        (faster than hashing when most keys are distinct; see :func:`~depgraph.common.arrays.sorted_codes`).

        >>> k = Keys.ranked(["b", "a", "b"])
        >>> k.codes.tolist(), k.vocab.to_pylist()
        ([1, 0, 1], ['a', 'b'])
        """
        text = text_array(values)
        codes, first = sorted_codes(text)
        return cls(codes, text.take(pa.array(first)), np.arange(len(first), dtype=np.int64))

    @classmethod
    def factorised(cls, values: Any) -> Keys:
        """:meth:`of` or :meth:`ranked`, whichever suits the values: ranking when
        many of the first 10,000 are distinct (subject or sample ids), hashing
        otherwise (batches, sites)."""
        text = text_array(values)
        return cls.ranked(text) if many_distinct(text) else cls.of(text)

    @classmethod
    def distinct(cls, vocab: pa.Array, order: np.ndarray | None = None) -> Keys:
        """Keys already distinct: each row is its own vocabulary entry."""
        return cls(np.arange(len(vocab), dtype=np.int64), vocab, order)

    @classmethod
    def as_listed(cls, values: Any) -> Keys:
        """Keys row by row, repeats allowed, nothing hashed: each row its own vocabulary entry. For endpoints read
        from a graph file, which assembly then finds by binary search over the sorted node keys, row by row,
        rather than by first hashing a million of them.

        >>> Keys.as_listed(["a", "a"]).codes.tolist()
        [0, 1]
        """
        return cls.distinct(text_array(values))

    def take(self, rows: np.ndarray) -> Keys:
        """The keys of some rows (a mask or positions), sharing the vocabulary."""
        return Keys(self.codes[rows], self.vocab, self.order)

    def values(self) -> np.ndarray:
        return self.vocab.take(pa.array(self.codes)).to_numpy(zero_copy_only=False)

    def __len__(self) -> int:
        return len(self.codes)


@dataclass(frozen=True)
class NodePiece:
    """Nodes of one type declared by a builder, with optional attributes.

    ``keys`` may repeat; ``attributes`` (if any) has one row per key.
    """

    type: NodeType
    keys: Keys
    attributes: pd.DataFrame | None = None

    def __post_init__(self) -> None:
        object.__setattr__(self, "keys", Keys.of(self.keys))


@dataclass(frozen=True)
class EdgePiece:
    """Edges of one relation declared by a builder, named by endpoint keys.

    ``source_order`` (optional) lists the rows in the sorted order of their
    sources, from a builder whose sources are distinct (a metadata column:
    one target per sample); assembly then places the edges without sorting.
    """

    relation: str
    src_keys: Keys
    dst_keys: Keys
    provenance: str
    weight: np.ndarray | None = None
    source_order: np.ndarray | None = None

    def __post_init__(self) -> None:
        object.__setattr__(self, "src_keys", Keys.of(self.src_keys))
        object.__setattr__(self, "dst_keys", Keys.of(self.dst_keys))


@dataclass(frozen=True)
class RelationEdges:
    """The edges of one relation, as node-position arrays.

    A graph keeps one block per relation (:attr:`StudyGraph.relations`):
    adding edges of one relation rebuilds that block only. Provenance is a
    tuple of labels and, per edge, a code into it (``None``: every edge has
    the first label), so no per-edge string is ever built. ``weight`` is
    ``None`` when the relation carries none.
    """

    relation: str
    src: np.ndarray
    dst: np.ndarray
    weight: np.ndarray | None
    labels: tuple[str, ...]
    label_codes: np.ndarray | None = None
    canonical: bool = False  # oriented, sorted by (src, dst) and without repeats

    def codes(self) -> np.ndarray:
        """Each edge's provenance as a position in ``labels``."""
        return np.zeros(len(self.src), dtype=np.int64) if self.label_codes is None else self.label_codes

    def weights(self) -> np.ndarray:
        """Each edge's weight, NaN where it has none."""
        return np.full(len(self.src), np.nan) if self.weight is None else self.weight

    @property
    def weighted(self) -> bool:
        """Whether some edge has a weight (a file writes the weights only then)."""
        return self.weight is not None and not np.isnan(self.weight).all()

    def provenance(self) -> pa.DictionaryArray:
        """Each edge's provenance as Arrow text, dictionary-encoded by its labels (no string per edge)."""
        return pa.DictionaryArray.from_arrays(
            pa.array(self.codes().astype(np.int32)), pa.array(list(self.labels), type=pa.string())
        )
