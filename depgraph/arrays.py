"""Array helpers the engine shares.

numpy 2.3+ answers a plain ``np.unique(values)`` through a hash table that is
an order of magnitude slower than sorting on large integer arrays (0.3 s
against 0.01 s for 500,000 node positions); asking for counts keeps the sort.
"""

from __future__ import annotations

import numpy as np


def distinct(values: np.ndarray) -> np.ndarray:
    """The sorted distinct values of a numeric array.

    >>> distinct(np.array([3, 1, 3, 2])).tolist()
    [1, 2, 3]
    """
    return np.unique(np.asarray(values), return_counts=True)[0]
