"""Arguments of the Python API, checked where they enter: a wrong type is refused by name.

Python would take many wrong arguments without a word — ``"no"`` is a true flag, ``True`` is the integer 1,
``2.5`` a batch size, a string a list of its characters — or fail far from the call with a TypeError. Each
public function checks what it is given with these helpers, which raise ``invalid_argument`` naming the
parameter, what it takes and what it got.

>>> flag(False, "allow_unlinked")
False
>>> flag("no", "allow_unlinked")
Traceback (most recent call last):
...
depgraph.errors.DepgraphError: [invalid_argument] allow_unlinked must be True or False, not 'no' (str)
>>> whole_number(4, "batch_size", minimum=1), names(("sex", "site"), "balance")
(4, ['sex', 'site'])
"""

from __future__ import annotations

import inspect
import os
from collections.abc import Callable, Mapping, Set
from typing import Any

import numpy as np

from depgraph.errors import DepgraphError, describe_ids


def _got(value: Any) -> str:
    text = " ".join(repr(value).split())  # one line, whatever the object prints (a DataFrame prints many)
    text = text if len(text) <= 60 else text[:57] + "..."
    return f"{text} ({type(value).__name__})"


def instance(value: Any, kind: type | tuple[type, ...], what: str) -> Any:
    """``value`` when it is a ``kind``; else ``invalid_argument`` naming what was passed instead.

    >>> instance(None, dict, "parameters")
    Traceback (most recent call last):
    ...
    depgraph.errors.DepgraphError: [invalid_argument] parameters must be a dict, not None (NoneType)
    """
    if not isinstance(value, kind):
        names = " or ".join(
            "None" if k is type(None) else k.__name__ for k in (kind if isinstance(kind, tuple) else (kind,))
        )
        raise DepgraphError("invalid_argument", f"{what} must be a {names}, not {_got(value)}")
    return value


def flag(value: Any, what: str) -> bool:
    """``value`` as a bool when it is ``True`` or ``False`` (numpy's too); any other value is refused, since
    Python reads ``"no"``, ``"false"`` and ``[0]`` as true."""
    if not isinstance(value, (bool, np.bool_)):
        raise DepgraphError("invalid_argument", f"{what} must be True or False, not {_got(value)}")
    return bool(value)


def real_number(value: Any) -> bool:
    """Whether ``value`` is an int or a float (numpy's too), never a bool (``True`` is no threshold).

    >>> real_number(0.5), real_number(np.float32(0.5)), real_number(True), real_number("0.5")
    (True, True, False, False)
    """
    return isinstance(value, (int, float, np.integer, np.floating)) and not isinstance(value, (bool, np.bool_))


def whole_number(value: Any, what: str, minimum: int | None = None, maximum: int | None = None) -> int:
    """``value`` as an int when it is an integer (numpy's too; never a bool or a float such as ``2.0``)
    within [``minimum``, ``maximum``]."""
    ok = isinstance(value, (int, np.integer)) and not isinstance(value, (bool, np.bool_))
    if ok and ((minimum is not None and value < minimum) or (maximum is not None and value > maximum)):
        ok = False
    if not ok:
        if minimum is not None and maximum is not None:
            rule = f"an integer from {minimum} to {maximum}"
        elif minimum is not None:
            rule = f"an integer of at least {minimum}"
        else:
            rule = "an integer"
        raise DepgraphError("invalid_argument", f"{what} must be {rule}, not {_got(value)}")
    return int(value)


def names(value: Any, what: str) -> list[str]:
    """A list of names (column names, modes) given as a list or tuple of text. One string is refused rather
    than read as a list of its characters (``"sex"`` would be ``s``, ``e``, ``x``)."""
    if isinstance(value, (str, bytes)):
        raise DepgraphError(
            "invalid_argument", f"{what} takes a list of names, not one string: write [{value!r}] for one name"
        )
    if not isinstance(value, (list, tuple)) or not all(isinstance(v, str) for v in value):
        raise DepgraphError("invalid_argument", f"{what} must be a list of names (text), not {_got(value)}")
    return list(value)


def in_order(value: Any, what: str) -> Any:
    """``value`` when it can list one item per row in row order: a list, tuple, array, Series or Index.
    A string (one id, not a row per character), a set (no order), a mapping or a one-shot iterator is refused."""
    if isinstance(value, (str, bytes)):
        raise DepgraphError("invalid_argument", f"{what} takes one sample id per row, not one string")
    if (
        isinstance(value, (Set, Mapping))
        or not hasattr(value, "__len__")
        or not hasattr(value, "__getitem__")
        or getattr(value, "ndim", 1) != 1
    ):
        raise DepgraphError(
            "invalid_argument",
            f"{what} takes one sample id per row, in row order (a flat list, array or Series), not {_got(value)}",
        )
    return value


def path(value: Any, what: str) -> str | os.PathLike[str]:
    """``value`` when it is a path (text or ``os.PathLike``); an integer would be read as a file descriptor."""
    if not isinstance(value, (str, os.PathLike)):
        raise DepgraphError("invalid_argument", f"{what} must be a path (str or pathlib.Path), not {_got(value)}")
    if "\x00" in str(os.fspath(value)):  # the operating system would refuse it with a ValueError of its own
        raise DepgraphError(
            "invalid_argument", f"{what} {str(os.fspath(value))!r} holds a NUL character, which no path can"
        )
    return value


def refuse_moot(where: str, **stated: Any) -> None:
    """Refuse the first of ``stated`` the caller gave (not None): it does not apply ``where``. The error names the
    parameter (``details["parameter"]``), so the command line can say it as its own option, spelt as typed."""
    for parameter, value in stated.items():
        if value is not None:
            raise DepgraphError("invalid_argument", f"{parameter} does not apply {where}", parameter=parameter)


def refuse_options(function: Callable[..., Any], options: Mapping[str, Any], where: str = "here") -> None:
    """``invalid_argument`` naming an option ``function`` does not take as a keyword-only parameter (Python would
    raise a TypeError), for a function that passes its ``**options`` on; ``where`` says where (``"on the Spark
    engine"``).

    >>> refuse_options(lambda table, *, unknown="error": None, {"unkown": "ignore"})
    Traceback (most recent call last):
    ...
    depgraph.errors.DepgraphError: [invalid_argument] unkown: not an option here (options: unknown)
    """
    taken = [n for n, p in inspect.signature(function).parameters.items() if p.kind is inspect.Parameter.KEYWORD_ONLY]
    unknown = sorted(set(options) - set(taken))
    if unknown:
        raise DepgraphError(
            "invalid_argument", f"{describe_ids(unknown)}: not an option {where} (options: {describe_ids(taken, 20)})"
        )
