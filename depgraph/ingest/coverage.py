"""Who a genetics tool's kinship file covers, so that "unrelated" and "unknown" are never confused.

A tool's file (a KING or PLINK 2 table, a PLINK ``.genome``, a GRM, a KING matrix) names every individual it
estimated, related or not; a subject of the study it does not name was not genotyped, or was removed in quality
control, and nothing is known of its relatives. Three things are said of a file here:

* **subjects absent from it** (``subjects_without_kinship``): counted and named; with ``absent="warn"`` (the default)
  a coded warning, with ``"unrelated"`` the user's explicit choice that they are grouped as unrelated (recorded, not
  warned), with ``"error"`` a refusal naming them;
* **a file filtered when written** (``kinship_file_filtered``): an unfiltered KING table holds the unrelated pairs'
  negative estimates, an unfiltered ``.genome`` their PI_HAT of 0; when the smallest kinship a table holds lies above
  a KING degree bound that lies above the threshold (:func:`filtered_above`), the pairs between the two may be missing
  from it (``--king-table-filter``, ``--min``): a warning naming the degrees that may be missing (then who it covers
  cannot be told, and absent subjects are not counted);
* **an id template that names none of the subjects**: a file whose ids match no subject of the study is refused,
  with the template that would match when the subjects look like ``FID_IID`` (or like bare IIDs).

>>> template_hint(np.array(["F1_A", "F1_B", "F2_C"]), np.array(["A", "B", "C"]), "{IID}")
"; the subjects look like FID_IID: use id_template='{FID}_{IID}'"
"""

from __future__ import annotations

import math
import warnings
from typing import Any, Literal

import numpy as np

from depgraph.errors import DepgraphError, DepgraphWarning, describe_ids
from depgraph.graph.model import StudyGraph
from depgraph.vocab import KING_DEGREE_THRESHOLDS, NodeType

Absent = Literal["warn", "unrelated", "error"]
#: The choices for subjects a kinship file does not name.
ABSENT: tuple[str, ...] = ("warn", "unrelated", "error")
#: Formats that hold every pair they estimated unless filtered when written (tables, not matrices).
FILTERABLE = ("king", "plink2-king", "plink-genome")
#: Ids kept in a record (the count is exact).
RECORDED = 50
_SEPARATORS = ("_", "-", ".", ":", "|", "/")


def coverage(
    graph: StudyGraph, read: dict[str, Any], format: str, threshold: float, id_template: str, absent: str, what: str
) -> dict[str, Any]:
    """The record of who the file covers (see the module); warns or refuses as ``absent`` says."""
    if absent not in ABSENT:
        raise DepgraphError("invalid_argument", f"absent= must be one of {', '.join(ABSENT)}, not {absent!r}")
    covered = read.get("individuals_ids")
    subjects = np.asarray(graph.keys(NodeType.SUBJECT), dtype=object)
    if covered is None or not len(subjects):
        return {}
    named = graph.locate(NodeType.SUBJECT, covered) >= 0
    if len(covered) and not named.any():
        raise DepgraphError(
            "reference",
            f"{what} names none of the graph's {len(subjects)} subjects: its ids look like "
            f"{describe_ids(list(covered[:3]), 3)}, the subjects' like {describe_ids(list(subjects[:3]), 3)}"
            f"{template_hint(subjects, covered, id_template)}",
        )
    record: dict[str, Any] = {"individuals": len(covered)}
    smallest = read.get("smallest_kinship")
    if format in FILTERABLE and smallest is not None and filtered_above(threshold, smallest):
        record["smallest_kinship"] = smallest
        warnings.warn(DepgraphWarning("kinship_file_filtered", filtered_message(what, threshold, smallest)),
                      stacklevel=5)  # fmt: skip
        return record
    in_file = np.zeros(len(subjects), dtype=bool)
    in_file[graph.locate(NodeType.SUBJECT, covered[named]) - graph.type_range(NodeType.SUBJECT)[0]] = True
    missing = subjects[~in_file]
    if len(missing):
        record |= {"absent": len(missing), "absent_ids": [str(s) for s in missing[:RECORDED]], "absent_as": absent}
        said = absent_message(what, len(missing), len(subjects), [str(s) for s in missing[:RECORDED]])
        if absent == "error":
            raise DepgraphError(
                "reference", said + "; to group them as unrelated, say so: absent='unrelated'", ids=list(missing)
            )
        if absent == "warn":
            said += "; they are grouped as unrelated to everyone (absent='unrelated' says so, absent='error' refuses)"
            warnings.warn(DepgraphWarning("subjects_without_kinship", said), stacklevel=5)
    return record


def absent_message(what: str, n: int, total: int, first: list[str]) -> str:
    """What is said of subjects a kinship file does not name.

    >>> absent_message("kinship 'k.kin0'", 2, 10, ["P3", "P7"])
    "kinship 'k.kin0' does not name 2 of the 10 subjects (P3, P7): not genotyped or ... is unknown"
    """
    return (
        f"{what} does not name {n} of the {total} subjects ({describe_ids(first, 5, total=n)}): not genotyped or "
        "removed in quality control, whether they have relatives is unknown"
    )


def filtered_message(what: str, threshold: float, smallest: float) -> str:
    """What is said of a table whose smallest kinship is above the threshold, naming the degrees it may lack.

    >>> print(filtered_message("t", 0.0442, 0.177))
    t holds no kinship below 0.177, above the threshold 0.0442: ... pairs of the third and second degree(s) may ...
    """
    return (
        f"{what} holds no kinship below {smallest:.4g}, above the threshold {threshold:.4g}: an unfiltered file holds "
        "the unrelated pairs' estimates too (negative KING kinship, PI_HAT 0), so it was filtered when written "
        f"(--king-table-filter, --min) and pairs of the {' and '.join(degrees_between(threshold, smallest))} "
        "degree(s) may be missing; write it unfiltered, or set the threshold at or above "
        f"{smallest:.4g} (who the file covers cannot be told: subjects absent from it are not counted)"
    )


def filtered_above(threshold: float, smallest: float) -> bool:
    """Whether a table whose smallest kinship is ``smallest`` looks filtered above ``threshold``: a KING degree's
    lower bound lies above the threshold and at or below that smallest value, so pairs of a whole degree band the
    threshold asks for cannot be in it (a filter at the threshold's own degree loses nothing it asks for).

    >>> filtered_above(0.0442, 0.2001), filtered_above(0.177, 0.2001), filtered_above(0.1, 0.177)
    (True, False, True)
    """
    return any(threshold < bound <= smallest for bound in KING_DEGREE_THRESHOLDS.values())


def degrees_between(threshold: float, smallest: float) -> list[str]:
    """The KING degrees whose kinship range meets [threshold, the highest degree bound at or below ``smallest``) —
    the bands a filter at that bound removed — in increasing kinship.

    >>> degrees_between(0.0442, 0.1976), degrees_between(0.1, 0.177), degrees_between(0.0442, 0.1)
    (['third', 'second'], ['second'], ['third'])
    """
    bounds = sorted(KING_DEGREE_THRESHOLDS.items(), key=lambda item: item[1])  # third, second, first, duplicate
    smallest = max((low for _, low in bounds if low <= smallest), default=smallest)
    found = []
    for k, (name, low) in enumerate(bounds):
        high = bounds[k + 1][1] if k + 1 < len(bounds) else math.inf
        if low < smallest and high > threshold:
            found.append(name)
    return found or ["nearest"]


def template_hint(subjects: np.ndarray, file_ids: np.ndarray, id_template: str) -> str:
    """The ``id_template`` that would make a file's ids the subjects' when they differ by how a family id is written:
    subjects written ``FID_IID`` (or with any of ``- . : | /``) under a template without ``{FID}``, subjects written
    with another separator than the template's, or bare IIDs under a template with ``{FID}``; "" when none explains
    it (judged on the first thousand ids).

    >>> template_hint(np.array(["F1-A", "F2-B"]), np.array(["F1_A", "F2_B"]), "{FID}_{IID}")
    "; the subjects look like FID-IID: use id_template='{FID}-{IID}'"
    """
    sample = [str(i) for i in file_ids[:1000]]
    known = {str(s) for s in subjects}

    def most(found: int) -> bool:
        return bool(sample) and found * 2 >= len(sample)

    if "{FID}" not in id_template:
        for sep in _SEPARATORS:
            tails = {str(s).rsplit(sep, 1)[1] for s in subjects if sep in str(s)}
            if tails and most(sum(i in tails for i in sample)):
                return f"; the subjects look like FID{sep}IID: use id_template='{{FID}}{sep}{{IID}}'"
        return ""
    written = id_template.split("{FID}", 1)[1].split("{IID}", 1)[0] if "{FID}{" not in id_template else ""
    parts = [i.rsplit(written, 1) if written and written in i else None for i in sample]
    if most(sum(p is not None and p[1] in known for p in parts)):
        return "; the subjects look like bare IIDs: use id_template='{IID}'"
    for sep in _SEPARATORS:
        if sep != written and most(sum(p is not None and f"{p[0]}{sep}{p[1]}" in known for p in parts)):
            return f"; the subjects look like FID{sep}IID: use id_template='{{FID}}{sep}{{IID}}'"
    return ""
