"""A starter study file, written from a metadata table (``depgraph init``): every choice explicit, for a person to
review and edit, and nothing implicit after that.

The role of each column is recognised by its name (:func:`depgraph.vocab.role_of_column`: ``Subject_ID``,
``patient_id``, ``participant``, ``Batch``, ``site``…, in any case); the mapping chosen is written key by key, the
columns left out are listed in a comment (with what they look like, when they look like something), and every
option of every table is written as a commented line with its default and what it does — the lines come from the
models of :mod:`depgraph.study.sections`, so a new option appears here by itself. Given kinship, duplicate or
coordinate files, the grouping uses them (relatedness, or composite over them); the outputs are files beside the
study file.

>>> import pandas as pd
>>> text = starter_text(pd.DataFrame(columns=["SampleID", "Subject_ID", "Batch", "age"]), "metadata.csv")
>>> print(text[text.index("[metadata.columns]"):].split(chr(10) + chr(10))[0])
[metadata.columns]
sample_id = "SampleID"
subject_id = "Subject_ID"
batch_id = "Batch"
# not mapped (kept as sample attributes): "age"
"""

from __future__ import annotations

import json
import math
import os
import sys
from collections.abc import Sequence
from functools import partial
from pathlib import Path
from typing import Any, NamedTuple

import pandas as pd
from pydantic import BaseModel
from pydantic_core import PydanticUndefined

from depgraph.errors import DepgraphError
from depgraph.folds.schemes import SCHEMES
from depgraph.ingest.kinship import detect_format
from depgraph.io import outputs as io_outputs  # its Outputs, a plan of files; sections.Outputs is a table
from depgraph.io.files import atomic_write_bytes, existing_file, read_table
from depgraph.study.files import study_document
from depgraph.study.sections import (
    STUDY_FILE_VERSION,
    Duplicates,
    Folds,
    Grouping,
    Kinship,
    Metadata,
    Outputs,
    Relations,
    Spark,
    Spatial,
    study_key,
)
from depgraph.vocab import CANONICAL_COLUMNS, DIRECT_MODES, MODE, RelationName, direct_relation, role_of_column

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - Python 3.10: tomllib's original
    import tomli as tomllib

#: What a commented line shows for a key without a default: an example value of the right type.
EXAMPLES: dict[str, Any] = {
    "encoding": "latin-1", "delimiter": ";", "sheet": 1, "similarity_column": "similarity", "path": "pairs.csv",
    "features": "features.parquet", "samples": "subset.txt", "min_groups": 5, "priority": ["subject", "batch"],
    "via": ["relatedness", "duplicate"], "strategy": "strict", "format": "parquet", "report": "report.html",
    "graph": "graph.json", "attributes": ["sex"], "sign_key_env": "STUDY_SIGNING_KEY", "stratify": "stratum",
    "by": "site_group", "balance": ["stratum"], "prior": "previous-spec.json", "salt_env": "FOLD_SALT",
    "key": ["site_group"], "thresholds": [0.5], "n_repeats": 3, "test_fraction": 0.2, "joint": 2, "gap": 1,
    "embargo": 1, "train_after": True, "n_splits": 5, "seed": 0, "master": "local[4]",
    "conf": {"spark.driver.memory": "4g"},
}  # fmt: skip

#: Degree of relatedness a starter groups by: third degree (kinship ≥ 0.0442, KING's line for "related") keeps
#: first cousins together; a closer line lets more relatives cross folds.
STARTER_THRESHOLD = "third"


class PairFiles(NamedTuple):
    """The pair files ``init`` was given, each as the study file writes its path: kinship files with their detected
    format, duplicate pair tables, feature tables to audit, and coordinates with their radius."""

    kinship: Sequence[tuple[str, str]] = ()
    duplicates: Sequence[str] = ()
    features: Sequence[str] = ()
    coordinates: tuple[str, float] | None = None


def role_mapping(columns: Sequence[str]) -> tuple[dict[str, str], dict[str, str]]:
    """The role each column is mapped to (canonical names first, then the first column recognised for a role, in
    table order), and what each column left out looks like (``''`` when nothing).

    >>> role_mapping(["sample_id", "Patient", "subject", "family", "age"])
    ({'sample_id': 'sample_id', 'subject_id': 'Patient'}, {'subject': 'subject_id', 'family': 'family', 'age': ''})
    """
    mapping: dict[str, str] = {c: c for c in columns if c in CANONICAL_COLUMNS}
    for column in columns:
        role = role_of_column(column)
        if column not in mapping.values() and role in CANONICAL_COLUMNS and role not in mapping:
            mapping[role] = column
    ordered = {role: mapping[role] for role in CANONICAL_COLUMNS if role in mapping}
    left = {c: role_of_column(c) or "" for c in columns if c not in ordered.values()}
    return ordered, left


def starter_text(table: pd.DataFrame, path: str, pairs: PairFiles | None = None, **table_options: Any) -> str:
    """The starter study file for the metadata ``table`` (read from ``path``, as the study file writes it)."""
    pairs = pairs or PairFiles()
    mapping, left = role_mapping([str(c) for c in table.columns])
    grouping = starter_grouping(mapping, pairs)
    folds = starter_folds(mapping, table, grouping)
    parts = [
        _header(path),
        f'version = {STUDY_FILE_VERSION}\n# name = "..."  # the study\'s name, shown in reports (default: file name)\n'
        '# engine = "single"  # or "spark": built and validated here; derived, folded and written by Apache Spark\n',
        _table("metadata", Metadata, {"path": path, **table_options}),
        _columns(mapping, left),
        *(
            _table(
                "kinship",
                Kinship,
                {"path": p, "format": f, "threshold": STARTER_THRESHOLD},
                many=len(pairs.kinship) > 1,
            )
            for p, f in pairs.kinship
        ),
        *(_table("duplicates", Duplicates, {"path": p}, many=_duplicate_tables(pairs) > 1) for p in pairs.duplicates),
        *(_table("duplicates", Duplicates, {"features": p}, many=_duplicate_tables(pairs) > 1) for p in pairs.features),
        *(
            [_table("spatial", Spatial, {"path": pairs.coordinates[0], "radius": pairs.coordinates[1]})]
            if pairs.coordinates
            else []
        ),
        *_unused_tables(pairs),
        _table("grouping", Grouping, grouping),
        _folds_table(folds),
        _table("outputs", Outputs, {"spec": "spec.json", "report": "report.html"}),
        _commented(_table("spark", Spark, {})),
    ]
    return "\n".join(parts)


def _duplicate_tables(pairs: PairFiles) -> int:
    return len(pairs.duplicates) + len(pairs.features)


def starter_grouping(mapping: dict[str, str], pairs: PairFiles) -> dict[str, Any]:
    """The grouping a starter writes: the dependencies it was given, combined when there are several; else the
    subject, else the first block the table declares."""
    via = []
    if pairs.kinship and "subject_id" in mapping:
        via.append("relatedness")
    elif "subject_id" in mapping and (pairs.duplicates or pairs.features or pairs.coordinates):
        via.append("subject")
    if pairs.duplicates or pairs.features:
        via.append("duplicate")
    if pairs.coordinates:
        via.append("spatial")
    if len(via) > 1:
        return {"mode": "composite", "strategy": "strict", "via": via}
    if via:
        return {"mode": via[0]}
    direct = [m for m in DIRECT_MODES if direct_relation(m).column in mapping]
    return {"mode": direct[0] if direct else "subject"}


def starter_folds(mapping: dict[str, str], table: pd.DataFrame, grouping: dict[str, Any]) -> dict[str, Any]:
    """Five folds of whole groups, stratified by the outcome when the table has one; fewer when the ``table`` holds
    fewer possible groups (:func:`most_groups`), so a starter runs as written (at least two)."""
    n_splits = max(2, min(5, most_groups(mapping, table, grouping)))
    if "outcome_id" in mapping:
        return {"scheme": "stratified-group-kfold", "n_splits": n_splits, "seed": 0, "stratify": "stratum"}
    return {"scheme": "group-kfold", "n_splits": n_splits, "seed": 0}


def most_groups(mapping: dict[str, str], table: pd.DataFrame, grouping: dict[str, Any]) -> int:
    """The most groups ``grouping`` can make of ``table``'s rows: the distinct values of the column it groups by
    (the subject's, under relatedness or a composite over subjects; a block's), each row without one a group of
    its own; one per row when it groups by no column of the table (duplicates, neighbours).

    >>> most_groups({"subject_id": "who"}, pd.DataFrame({"who": ["p", "p", "q", None]}), {"mode": "relatedness"})
    3
    """
    modes = grouping.get("via") or [grouping["mode"]]
    if {"subject", "relatedness"} & set(modes):
        role = "subject_id"
    else:
        role = direct_relation(modes[0]).column if MODE[modes[0]].kind == "direct" else None
    column = mapping.get(role) if role else None
    if column is None or column not in table.columns:
        return len(table)
    values = table[column]
    return int(values.nunique(dropna=True) + values.isna().sum())


def _folds_table(folds: dict[str, Any]) -> str:
    """``[folds]``: the scheme's parameters only, each commented one with the scheme's own default."""
    scheme = SCHEMES[folds["scheme"]]
    declared = scheme.parameters_declared()
    defaults = {study_key(p): scheme.__dataclass_fields__[name].default for name, p in declared.items()}
    return _table("folds", Folds, folds, keys=["scheme", *defaults], defaults=defaults)


def _header(path: str) -> str:
    return (
        f"# depgraph study file, started by 'depgraph init' from {path}.\n"
        "# Review every line: what is written here is what 'depgraph run' does, and nothing is guessed after this.\n"
        "# Commented lines are the other options, each with its default. Paths are relative to this file.\n"
        "# Run it with: depgraph run <this file>; check a spec against it with: depgraph run --check <this file>\n"
    )


def _columns(mapping: dict[str, str], left: dict[str, str]) -> str:
    lines = ["[metadata.columns]"]
    lines += [f"{role} = {toml_value(column)}" for role, column in mapping.items()]
    if "sample_id" not in mapping:
        lines.append('sample_id = "?"  # no column was recognised as the sample id: name it')
    notes = {"family": "a family id: relatives are grouped by [kinship]"}
    plain = [json.dumps(c, ensure_ascii=False) for c, role in left.items() if not role]
    for column, role in left.items():
        if role:
            said = notes.get(role, f"also looks like {role}")
            lines.append(f"# not mapped: {json.dumps(column, ensure_ascii=False)} ({said})")
    if plain:
        lines.append(f"# not mapped (kept as sample attributes): {', '.join(plain)}")
    return "\n".join(lines) + "\n"


def _table(name: str, model: type[BaseModel], given: dict[str, Any], many: bool = False,
           keys: Sequence[str] | None = None, defaults: dict[str, Any] | None = None) -> str:  # fmt: skip
    """A table: its given keys, then every other key commented with its default (``defaults``, else the model's) and
    what it does."""
    lines = [f"[[{name}]]" if many else f"[{name}]"]
    described = (model.__doc__ or "").split(": ", 1)[-1].strip().splitlines()[0].replace("``", "")
    lines[0] += f"  # {described}"
    for key in keys or list(model.model_fields):
        field = model.model_fields[key]
        if key == "columns":
            continue
        if key in given:
            lines.append(f"{key} = {toml_value(given[key])}")
            continue
        default = field.default if field.default is not PydanticUndefined else None
        if field.default_factory is not None:
            default = field.default_factory()  # type: ignore[call-arg]
        default = (defaults or {}).get(key, default)
        if default in (None, [], {}):  # no default: an example, so that uncommenting the line gives valid TOML
            said = f": {field.description}" if field.description else ""
            shown, about = toml_value(EXAMPLES.get(key, "...")), f"  # an example, no default{said}"
        else:
            shown, about = toml_value(default), f"  # {field.description}" if field.description else ""
        lines.append(f"# {key} = {shown}{about}")
    return "\n".join(lines) + "\n"


def _unused_tables(pairs: PairFiles) -> list[str]:
    """The tables of dependencies the starter was not given, commented out whole, so their options are visible."""
    unused = []
    examples = {
        "kinship": (Kinship, {"path": "king.kin0", "threshold": STARTER_THRESHOLD}, bool(pairs.kinship)),
        "duplicates": (Duplicates, {"path": "duplicates.csv"}, bool(pairs.duplicates or pairs.features)),
        "spatial": (Spatial, {"path": "coordinates.csv", "radius": 1.0}, pairs.coordinates is not None),
        "relations": (
            Relations,
            {"relation": RelationName.FEATURESET_GENERATED_FROM_STUDY, "path": "relations.csv"},
            False,
        ),
    }
    for name, (model, example, used) in examples.items():
        if not used:
            unused.append(_commented(_table(name, model, example, many=name == "relations")))
    return unused


def _commented(text: str) -> str:
    """A table commented out whole, its options visible."""
    return "\n".join(line if line.startswith("#") else f"# {line}" for line in text.splitlines()) + "\n"


def toml_value(value: Any) -> str:
    """``value`` written as TOML: text as a basic string (JSON's escapes are TOML's), numbers, booleans, lists.

    >>> toml_value("a \\"b\\""), toml_value(0.5), toml_value(True), toml_value(["x", 2])
    ('"a \\\\"b\\\\""', '0.5', 'true', '["x", 2]')
    """
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (int, float)):
        return repr(value)
    if isinstance(value, (list, tuple)):
        return "[" + ", ".join(toml_value(v) for v in value) + "]"
    if isinstance(value, dict):  # an inline table, its keys quoted (a Spark setting's key holds dots)
        return "{ " + ", ".join(f"{json.dumps(str(k))} = {toml_value(v)}" for k, v in value.items()) + " }"
    return json.dumps(str(value), ensure_ascii=False)


def write_starter_file(metadata: str | os.PathLike[str], output: str | os.PathLike[str], *, plan: io_outputs.Outputs,
                       **options: Any) -> dict[str, str]:  # fmt: skip
    """``depgraph init``: the starter study file (:func:`starter_file` with its ``options``) written to ``output``,
    declared in ``plan``; returns the mapping of roles to columns it chose."""
    text, mapped = starter_file(metadata, output, **options)
    with plan:
        atomic_write_bytes(output, text.encode())
    return mapped


def starter_file(
    metadata: str | os.PathLike[str],
    output: str | os.PathLike[str],
    *,
    kinship: Sequence[str | os.PathLike[str]] = (),
    duplicates: Sequence[str | os.PathLike[str]] = (),
    features: Sequence[str | os.PathLike[str]] = (),
    coordinates: tuple[str | os.PathLike[str] | None, float | None] | None = None,
    encoding: str | None = None,
    delimiter: str | None = None,
    sheet: str | int | None = None,
    replace: bool = False,
) -> tuple[str, dict[str, str]]:
    """The text of a starter study file to be written at ``output``, and the mapping it chose. The table is read
    (its options kept in the file), each kinship file's format detected and written; paths are written relative to
    ``output``'s folder. A study file that exists is not replaced unless ``replace`` (it holds someone's review)."""
    target = Path(output)
    if target.exists() and not replace:
        raise DepgraphError(
            "io", f"study file {str(target)!r} exists: it may hold edits; choose another name, or --force to replace it"
        )
    if coordinates is not None and (coordinates[0] is None or coordinates[1] is None):
        raise DepgraphError("invalid_argument", "--coords and --radius go together")
    if coordinates is not None and not (math.isfinite(float(coordinates[1])) and float(coordinates[1]) > 0):  # type: ignore[arg-type]
        raise DepgraphError("invalid_argument", f"--radius must be a finite number > 0, not {coordinates[1]!r}")
    sheet = int(sheet) if isinstance(sheet, str) and sheet.isdigit() else sheet
    table = read_table(metadata, "metadata", encoding=encoding, sheet=sheet, delimiter=delimiter)
    folder = target.resolve().parent
    here = partial(_relative, folder)
    for path in [*kinship, *duplicates, *features]:
        existing_file(path, "input")
    pairs = PairFiles(
        kinship=[(here(p), detect_format(p, encoding=encoding)) for p in kinship],
        duplicates=[here(p) for p in duplicates],
        features=[here(p) for p in features],
        coordinates=None if coordinates is None else (here(existing_file(coordinates[0], "coordinates")),
                                                      float(coordinates[1])),  # type: ignore[arg-type]
    )  # fmt: skip
    options = {k: v for k, v in (("encoding", encoding), ("delimiter", delimiter), ("sheet", sheet)) if v is not None}
    text = starter_text(table, here(metadata), pairs, **options)
    study_document(tomllib.loads(text), f"the starter for {str(metadata)!r}")  # what init writes, run reads
    return text, role_mapping([str(c) for c in table.columns])[0]


def _relative(folder: Path, path: str | os.PathLike[str]) -> str:
    """``path`` as the study file in ``folder`` writes it: relative to the folder (with ``/``), else absolute."""
    found = Path(path).resolve()
    try:
        return Path(os.path.relpath(found, folder)).as_posix()
    except ValueError:
        return found.as_posix()
