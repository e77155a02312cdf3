"""Re-checking a study: ``depgraph run --check`` runs the declaration again, writes nothing, and compares what it
makes with the spec on disk. Identical (the creation time and the writing depgraph's versions aside: the digests
are equal) or not; when not, the first difference in words, in the order a study team looks for the cause: a key of
the study file, an input file's bytes, the study file's own bytes (comments, layout), then the samples — one that is
new or gone, a group or a fold that changed for a named sample — then anything else the spec says.

>>> first_difference({"grouping": {"mode": "subject"}}, {"grouping": {"mode": "relatedness"}})
"study file key [grouping] mode changed: 'subject' in the spec on disk, 'relatedness' now"
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from depgraph.errors import DepgraphError
from depgraph.spec.diff import compare_specs
from depgraph.spec.files import read_spec
from depgraph.spec.keys import key_from_env
from depgraph.spec.model import InputFile, Provenance, SplitSpec
from depgraph.study.files import Declaration, key_words
from depgraph.study.run import run_declaration


@dataclass(frozen=True)
class StudyCheck:
    """The spec on disk against the spec the declaration makes now: ``identical``, and if not, the first
    ``difference`` in words."""

    spec_path: Path
    identical: bool
    difference: str | None
    on_disk: SplitSpec
    now: SplitSpec


def check_declaration(declaration: Declaration) -> StudyCheck:
    """Read the spec the declaration writes (every check of a reader; its signature verified when the declaration
    signs), run the declaration without writing, and compare."""
    outputs = declaration.file.outputs
    path = declaration.path(outputs.spec)
    try:
        os.stat(path)
    except FileNotFoundError:
        raise DepgraphError(
            "io",
            f"{declaration.source}: [outputs] spec {outputs.spec!r} does not exist ({str(path)!r}): there is nothing "
            "to check; run the study first (depgraph run)",
            path=str(path),
        ) from None
    except OSError as exc:
        raise DepgraphError(
            "io", f"{declaration.source}: [outputs] spec {outputs.spec!r} cannot be used: {exc.strerror}"
        ) from None
    try:
        key = None if outputs.sign_key_env is None else key_from_env(outputs.sign_key_env, "signature verification")
        on_disk = read_spec(path, verify_key=key)
    except DepgraphError as exc:
        raise DepgraphError(exc.code, f"{declaration.source}: [outputs] spec {outputs.spec!r}: {exc.message}") from None
    now = run_declaration(declaration, write=False).spec
    if on_disk.digest == now.digest:
        return StudyCheck(path, True, None, on_disk, now)
    return StudyCheck(path, False, spec_difference(on_disk, now), on_disk, now)


def spec_difference(on_disk: SplitSpec, now: SplitSpec) -> str:
    """The first way ``on_disk`` and ``now`` differ, in the order of :mod:`depgraph.study.check`."""
    if on_disk.provenance is None:
        return "the spec on disk records no study file (it was not made by depgraph run): run the study to record it"
    assert now.provenance is not None  # a run records it
    cause = (
        first_difference(on_disk.provenance.declaration, now.provenance.declaration)
        or _input_difference(on_disk.provenance, now.provenance)
        or _study_file_difference(on_disk.provenance, now.provenance)
    )
    samples = _sample_difference(on_disk, now)
    if cause:
        return f"{cause}; {samples if samples else 'every sample keeps its group and folds'}"
    if samples:
        return samples
    a, b = on_disk.envelope(), now.envelope()
    for field in sorted(set(a) | set(b)):
        if field not in ("created_at", "generator", "digest", "signature") and a.get(field) != b.get(field):
            return f"the spec's {field} differs: {_shown(a.get(field))} in the spec on disk, {_shown(b.get(field))} now"
    return "the specs differ (their digests do)"


def first_difference(before: Any, after: Any, path: tuple[str, ...] = ()) -> str | None:
    """The first key of a declaration that was added, removed or changed, in words (None when they are equal)."""
    if isinstance(before, dict) and isinstance(after, dict):
        for key in [*before, *(k for k in after if k not in before)]:
            if key not in after:
                return f"study file key {_key(path, key)} was removed (it was {_shown(before[key])})"
            if key not in before:
                return f"study file key {_key(path, key)} was added ({_shown(after[key])})"
            found = first_difference(before[key], after[key], (*path, str(key)))
            if found:
                return found
        return None
    if isinstance(before, list) and isinstance(after, list) and len(before) == len(after):
        for i, (b, a) in enumerate(zip(before, after, strict=True)):
            found = first_difference(b, a, (*path, f"#{i + 1}"))
            if found:
                return found
        return None
    if before != after or type(before) is not type(after):
        key = _key(path[:-1], path[-1])
        return f"study file key {key} changed: {_shown(before)} in the spec on disk, {_shown(after)} now"
    return None


def _key(path: tuple[str, ...], key: str) -> str:
    """A key as the file writes it: ``[grouping] mode``, ``[[kinship]] #2 threshold``, ``version``."""
    if not path:
        return key
    tables = [p for p in path if not p.startswith("#")]
    number = next((p for p in path if p.startswith("#")), None)
    table = ".".join(tables)
    return f"[[{table}]] {number} {key}" if number else f"[{table}] {key}"


def _shown(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


def _input_difference(before: Provenance, after: Provenance) -> str | None:
    """The first input whose bytes changed (or that was added or removed), by its path as the study file writes it."""
    old = {(f.key, f.path): f for f in before.inputs}
    new = {(f.key, f.path): f for f in after.inputs}
    for place, file in new.items():
        was = old.get(place)
        if was is None:
            return f"input {file.path!r} ({key_words(file.key)}) is new"
        if (was.size, was.sha256) != (file.size, file.sha256):
            return (
                f"input {file.path!r} ({key_words(file.key)}) changed: {_bytes(was)} in the spec on disk, "
                f"{_bytes(file)} now"
            )
    gone = [f for place, f in old.items() if place not in new]
    return f"input {gone[0].path!r} ({key_words(gone[0].key)}) is no longer read" if gone else None


def _bytes(file: InputFile) -> str:
    return f"{file.size:,} bytes, sha256 {file.sha256[:12]}…"


def _study_file_difference(before: Provenance, after: Provenance) -> str | None:
    a, b = before.study_file, after.study_file
    if a == b:
        return None
    if a is None or b is None or a.name != b.name:
        return f"the study file is {b.name if b else 'none'!r} now, {a.name if a else 'none'!r} in the spec on disk"
    return (
        f"the study file {b.name!r} changed ({a.sha256[:12]}… in the spec on disk, {b.sha256[:12]}… now) though no "
        "key did: comments, layout or the engine it runs on; run the study again to record it"
    )


def _sample_difference(on_disk: SplitSpec, now: SplitSpec) -> str | None:
    """The first sample (in id order) that is new or gone, or whose group or fold role changed."""
    a, b = on_disk.samples["sample_id"].to_numpy(dtype=object), now.samples["sample_id"].to_numpy(dtype=object)
    if len(a) != len(b) or not (a == b).all():
        gone = np.setdiff1d(a.astype(str), b.astype(str))
        new = np.setdiff1d(b.astype(str), a.astype(str))
        if len(new) and (not len(gone) or new[0] < gone[0]):
            return f"sample {new[0]!r} is new ({len(new)} new, {len(gone)} gone)"
        return f"sample {gone[0]!r} is gone ({len(gone)} gone, {len(new)} new)"
    groups = compare_specs(on_disk, now)
    if len(groups.changed):
        first = groups.changed.iloc[0]
        return (
            f"sample {first['sample_id']!r} is in group {first['group_first']!r} in the spec on disk, "
            f"{first['group_second']!r} now, with other samples ({len(groups.changed)} sample(s) changed group)"
        )
    if groups.relabelled:
        return "the groups hold the same samples but are named differently (a derivation that names them otherwise)"
    return _fold_difference(on_disk, now, a)


def _fold_difference(on_disk: SplitSpec, now: SplitSpec, ids: np.ndarray) -> str | None:
    """The first split, and the first sample in it, whose role differs."""
    fa, fb = on_disk.folds, now.folds
    if fa is None or fb is None:
        if fa is fb:
            return None
        return (
            "the spec on disk has no folds; now it has folds" if fa is None else "the spec on disk has folds; now none"
        )
    if len(fa.splits) != len(fb.splits):
        return f"the spec on disk has {len(fa.splits)} splits, now {len(fb.splits)}"
    roles = ("train", "test", "excluded")
    for sa, sb in zip(fa.splits, fb.splits, strict=True):
        ra, rb = sa.roles(len(ids)), sb.roles(len(ids))
        changed = np.flatnonzero(ra != rb)
        if len(changed):
            i = changed[0]
            return (
                f"sample {ids[i]!r} is {roles[ra[i]]} in split {sa.repeat}/{sa.fold} of the spec on disk, "
                f"{roles[rb[i]]} now ({len(changed)} sample(s) changed role in that split)"
            )
    return None
