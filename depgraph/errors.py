"""One exception for every failure a user can cause, with a stable code.

Callers branch on :attr:`DepgraphError.code` (one of :class:`ErrorCode`), never
on message text. Messages say what is wrong and where: the offending ids or
rows, the first few of them and how many in all. A ``DepgraphError`` is also a
``ValueError``, so code written for scikit-learn or pandas (``except ValueError``)
catches it too.

>>> err = DepgraphError("reference", "kinship names unknown subjects: P9", ids=["P9"])
>>> err.code, err.details["ids"]
('reference', ['P9'])
>>> describe_ids(["S1", "S2", "S3", "S4", "S5", "S6", "S7"], limit=3)
'S1, S2, S3 and 4 more'
"""

from __future__ import annotations

from collections.abc import Iterable
from enum import Enum
from typing import Any


class ErrorCode(str, Enum):
    """The catalogue of error codes. Values are part of the public contract."""

    INVALID_ARGUMENT = "invalid_argument"  # a parameter outside what the call accepts
    IO = "io"  # a path is missing, is a directory, or cannot be written
    PARSE = "parse"  # a file's bytes are not valid CSV / JSON / Parquet
    SCHEMA = "schema"  # a table or document lacks a column/field or has the wrong shape
    EMPTY_INPUT = "empty_input"  # a table with no rows
    MISSING_ID = "missing_id"  # a NaN or blank identifier
    DUPLICATE_ID = "duplicate_id"  # an identifier repeated where it must be unique
    AMBIGUITY = "ambiguity"  # one entity declared two different ways
    REFERENCE = "reference"  # an id that names nothing in the graph
    INVALID_VALUE = "invalid_value"  # a NaN, negative or out-of-range number
    TIME_ORDER = "time_order"  # cyclic or contradictory time ordering
    TOO_FEW_GROUPS = "too_few_groups"  # a derivation leaves fewer groups than needed
    NO_RELATION = "no_relation"  # a derivation whose mode links none of the samples (every sample alone)
    VALIDATION = "validation"  # a graph with validation errors where a valid one is needed
    VERSION = "version"  # a document of an unsupported format version
    INTEGRITY = "integrity"  # a digest or signature that does not match, or content that contradicts itself
    ENGINE = "engine"  # the Spark engine could not finish: a master it cannot reach, a heap too small, a lost executor


ERROR_CODES: frozenset[str] = frozenset(c.value for c in ErrorCode)


class DepgraphError(ValueError):
    """A failure caused by the input, with a stable :class:`ErrorCode`.

    It is a ``ValueError`` whatever its code: each code says that a value the
    caller gave (an argument, a file's content, a path) cannot be used, and
    scikit-learn users expect bad arguments to raise ``ValueError``. One class
    for every code keeps one name in tracebacks; branch on :attr:`code`.

    Parameters
    ----------
    code:
        One of :class:`ErrorCode` (or its string value).
    message:
        One line that names what is wrong and where.
    **details:
        Machine-readable context: ``ids``, ``rows``, ``column``, ``path``...
    """

    def __init__(self, code: ErrorCode | str, message: str, **details: Any) -> None:
        code = ErrorCode(code)  # unknown codes are a programming error: ValueError
        super().__init__(message)
        self.code: str = code.value
        self.message = message
        self.details: dict[str, Any] = details

    def __str__(self) -> str:
        return f"[{self.code}] {self.message}"

    def __reduce__(self) -> tuple[Any, ...]:
        # Rebuilt from code and message (the default would call DepgraphError(message)), so the error
        # survives pickling: joblib workers (scikit-learn's n_jobs) send exceptions back pickled.
        return (type(self), (self.code, self.message), self.__dict__)


class DepgraphWarning(UserWarning):
    """Something a reader accepted but the user must hear about, with a stable code.

    Readers also keep it with what they return (a graph's ``history``, a
    spec's ``warnings``), so it is never only on the screen. The CLI prints
    each one as ``depgraph: warning: <code>: <message>`` on stderr once the
    command has succeeded.

    >>> w = DepgraphWarning("splitgraph_schema_version", "schema_version 9.0.0 is not 0.1.0")
    >>> w.code, str(w)
    ('splitgraph_schema_version', 'schema_version 9.0.0 is not 0.1.0')
    """

    def __init__(self, code: str, message: str, **details: Any) -> None:
        super().__init__(message)
        self.code = code
        self.message = message
        self.details: dict[str, Any] = details


def describe_ids(ids: Iterable[Any], limit: int = 5, total: int | None = None) -> str:
    """The first ``limit`` ids and how many more, for one-line messages.

    ``total`` is the full count when ``ids`` is already a truncated list. An
    id holding a line break or another control character is shown quoted and
    escaped, so the message stays one line.

    >>> describe_ids(["S1", "S" + chr(10) + "2"]) == "S1, " + repr("S" + chr(10) + "2")
    True
    """
    # indexed as they are: lists, tuples and numpy arrays (told by name: this module stays free of numpy, which
    # ``depgraph --help`` never loads); dicts, sets, pandas objects (label-indexed) and generators become lists
    if not isinstance(ids, (list, tuple)) and f"{type(ids).__module__}.{type(ids).__name__}" != "numpy.ndarray":
        ids = list(ids)
    n = len(ids)
    head = [_one_line(str(ids[i])) for i in range(min(limit, n))]  # only what is shown is formatted
    total = n if total is None else max(total, n)
    shown = ", ".join(head)
    if total > len(head):
        shown += f" and {total - len(head)} more"
    return shown


def _one_line(text: str) -> str:
    return text if text.isprintable() else repr(text)


def describe_rows(rows: Iterable[int], limit: int = 5) -> str:
    """Row numbers as a person counts them in a file (1-based, header excluded).

    >>> describe_rows([0, 4])
    'rows 1, 5'
    """
    numbers = [int(r) + 1 for r in rows]
    word = "row" if len(numbers) == 1 else "rows"
    return f"{word} {describe_ids(numbers, limit)}"


#: The optional extras: the module each one installs, and that library's name as its users know it.
EXTRAS: dict[str, tuple[str, str]] = {
    "sklearn": ("sklearn", "scikit-learn"),
    "torch": ("torch", "PyTorch"),
    "spark": ("pyspark", "PySpark"),
}
#: Modules an extra installs beside its own, which an import may miss first (``py4j`` comes with PySpark).
EXTRA_COMPANIONS: dict[str, tuple[str, ...]] = {"spark": ("py4j",)}


def missing_extra(what: str, extra: str, exc: ModuleNotFoundError) -> ModuleNotFoundError:
    """The error to raise when importing ``what`` failed with ``exc``: when the module missing is the one the
    optional ``extra`` installs, a ModuleNotFoundError saying which extra to install; otherwise ``exc``
    itself (another missing module is no extra's fault, and is reported as Python found it).

    >>> missing = ModuleNotFoundError("No module named 'torch'", name="torch")
    >>> str(missing_extra("depgraph.adapters.torch", "torch", missing))
    "depgraph.adapters.torch needs PyTorch: pip install 'depgraph[torch]'"
    """
    module, library = EXTRAS[extra]
    missing = exc.name or ""
    if not any(missing == m or missing.startswith(m + ".") for m in (module, *EXTRA_COMPANIONS.get(extra, ()))):
        return exc
    return ModuleNotFoundError(f"{what} needs {library}: pip install 'depgraph[{extra}]'", name=module)
