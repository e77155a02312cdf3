"""What a fold scheme's parameter is, declared once for every scheme and for the ``folds`` command.

A scheme class (:mod:`depgraph.folds.schemes`) is a dataclass whose fields are its parameters: the field gives the
name, the type and the scheme's default; the :class:`Parameter` in the field's metadata gives the help and how the
``folds`` command spells and reads it. Schemes sharing a concept share its :class:`Parameter` (every scheme taking a
seed uses :data:`SEED`), so the command has one option per concept, built from these declarations, and refuses an
option the chosen scheme does not declare.

>>> from dataclasses import dataclass
>>> @dataclass(frozen=True)
... class Example:
...     seed: int = SEED.field(0)
>>> [p.flags for p in declared(Example).values()]
[('--seed',)]
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from depgraph.errors import DepgraphError
from depgraph.spec.plans import MAX_SEED, check_count, check_seed
from depgraph.spec.plans import MAX_SPLITS as MAX_SPLITS  # re-exported: the bound goes with the options

#: How the ``folds`` command turns an option's text into the parameter's value.
READS = ("value", "names", "numbers", "spec", "environment")


@dataclass(frozen=True)
class Parameter:
    """One fold-scheme parameter as the ``folds`` command offers it.

    ``flags`` are its spellings (the first long one is shown; deprecated ones are listed in the CLI's DEPRECATED);
    ``metavar`` is what goes after it (``None``: a flag); ``reads`` is how its text becomes the value: as typed
    (``value``), a comma-separated list of names (``names``) or of numbers (``numbers``), a split spec file read
    (``spec``), or the name of an environment variable holding the value, never the value itself
    (``environment``). ``command_default``, when set, is the command's value for every scheme taking it even when
    not typed (``-k`` is 5 for ``time`` too, whose class default is 3); ``check(value, option)`` refuses a bad
    value before any file is read. A parameter not ``recorded`` is left out of the plan's ``parameters`` (the seed
    has a field of its own; a scheme records a secret or a document by a fingerprint or digest instead).
    """

    name: str
    help: str
    flags: tuple[str, ...]
    metavar: str | None = None
    reads: str = "value"
    command_default: Any = None
    required: bool = False
    check: Callable[[Any, str], Any] | None = None
    recorded: bool = True

    def __post_init__(self) -> None:
        if self.reads not in READS:
            raise ValueError(f"{self.name}: reads is one of {READS}, not {self.reads!r}")

    def field(self, default: Any, **options: Any) -> Any:
        """A dataclass field declaring this parameter with the scheme's ``default``."""
        return dataclasses.field(default=default, metadata={"parameter": self}, **options)


def declared(scheme: type) -> dict[str, Parameter]:
    """The parameters a scheme class declares, by field name, in declaration order; a field without a
    :class:`Parameter` is a programming error (every parameter says what it is)."""
    out = {}
    for f in dataclasses.fields(scheme):
        parameter = f.metadata.get("parameter")
        if not isinstance(parameter, Parameter) or parameter.name != f.name:
            raise TypeError(f"{scheme.__name__}.{f.name} is not declared with its Parameter (PARAMETER.field(...))")
        out[f.name] = parameter
    return out


def check_joint(joint: Any, what: str = "joint") -> int:
    """``joint`` as an int when it is an integer ≥ 1 (how many balance columns form a cell); else
    ``invalid_argument``.

    >>> check_joint(2)
    2
    """
    if isinstance(joint, bool) or not isinstance(joint, (int, np.integer)) or joint < 1:
        raise DepgraphError(
            "invalid_argument",
            f"{what} must be an integer ≥ 1 (1: each column's categories; 2: also every pair of columns' cells), "
            f"not {joint!r}",
        )
    return int(joint)


# --------------------------------------------------------------------------- the parameters, one per concept
#: The fold count: scikit-learn's name (``n_splits`` in KFold and TimeSeriesSplit alike), for k-fold, hash and time.
N_SPLITS = Parameter(
    "n_splits", "Folds (k-fold, hash, covariate bins) or splits (time).", ("-k", "--n-splits", "--folds"), "K",
    command_default=5, check=lambda value, what: check_count(value, what, 1),
)  # fmt: skip
N_REPEATS = Parameter(
    "n_repeats", "Repeats (k-fold, holdout).", ("--repeats",), "N",
    check=lambda value, what: check_count(value, what, 1),
)  # fmt: skip
SEED = Parameter(
    "seed", f"Random seed, 0..{MAX_SEED} (k-fold, holdouts).", ("--seed",), "S", check=check_seed, recorded=False
)
STRATIFY = Parameter("stratify", "Stratified k-fold: the column.", ("--stratify",), "COL")
BY = Parameter("by", "logo: the block column; covariate-bins: the numeric column binned.", ("--by",), "COL")
TEST_FRACTION = Parameter("test_fraction", "Holdouts: share of samples tested.", ("--test-fraction",), "F")
BALANCE = Parameter("balance", "Balanced holdout: columns, comma-separated.", ("--balance",), "COLS", reads="names")
JOINT = Parameter(
    "joint", "Balanced holdout: balance the cells of up to N balance columns at once (1: each column alone; "
    "2: every pair's cells too).", ("--joint",), "N", check=check_joint,
)  # fmt: skip
PRIOR = Parameter(
    "prior",
    "Balanced holdout: an earlier spec whose groups keep their side.",
    ("--prior",),
    "SPEC.json",
    reads="spec",
    recorded=False,
)
GAP = Parameter("gap", "Time: order_rank levels purged before each test block.", ("--gap",), "G")
EMBARGO = Parameter("embargo", "Time: levels withheld after each test block (with --train-after).", ("--embargo",), "E")
TRAIN_AFTER = Parameter(
    "train_after", "Time: also train on levels after the test block.", ("--train-after/--no-train-after",)
)
SALT = Parameter(
    "salt", "Hash folds: environment variable holding the salt.", ("--salt-env",), "VAR", reads="environment",
    required=True, recorded=False,
)  # fmt: skip

KEY = Parameter(
    "key", "Hash folds: sample columns keying the hash instead of the group id, comma-separated.", ("--key",), "COLS",
    reads="names",
)  # fmt: skip
THRESHOLDS = Parameter(
    "thresholds", "Covariate bins: recorded thresholds to apply (k-1 increasing numbers, comma-separated).",
    ("--thresholds",), "T,T", reads="numbers",
)  # fmt: skip

#: Old spellings of a parameter's name: refused with the new name as the hint (docs/folds.md, "Names").
RENAMED = {"n_folds": "n_splits"}

#: Every parameter, in the order the ``folds`` command lists its options.
PARAMETERS = (
    N_SPLITS, N_REPEATS, SEED, STRATIFY, BY, TEST_FRACTION, BALANCE, JOINT, PRIOR, GAP, EMBARGO, TRAIN_AFTER, SALT, KEY,
    THRESHOLDS,
)  # fmt: skip
#: The parameters by name.
PARAMETERS_BY_NAME = {p.name: p for p in PARAMETERS}
