"""Reading a study file: TOML to a dict (``tomllib``), the dict checked against the published schema (jsonschema),
then typed (:class:`~depgraph.study.sections.StudyFile`), then every input path checked to name a file — all before
any table is read.

Every problem is one :class:`~depgraph.errors.DepgraphError` naming the table and the key: ``parse`` for bytes that
are not TOML, ``version`` for a study-file version this depgraph does not read, ``schema`` for a key the table does
not have (with the closest valid key: "did you mean 'subject_id'?"), a value of the wrong type, or a rule the models
state (a parameter the fold scheme does not take, two roles on one column); ``io`` for an input that does not exist
or is a directory.

>>> study_document({"version": 1, "metadata": {"path": "m.csv", "columns": {"sample_id": "id", "subjet_id": "p"}},
...                 "grouping": {"mode": "subject"}, "outputs": {"spec": "spec.json"}})
Traceback (most recent call last):
...
depgraph.errors.DepgraphError: [schema] study file: [metadata.columns] has no key 'subjet_id'; did you mean ...
"""

from __future__ import annotations

import copy
import dataclasses
import datetime
import difflib
import hashlib
import os
import stat
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import Any

from pydantic import ValidationError

from depgraph.errors import DepgraphError, describe_ids
from depgraph.ingest.kinship import kinship_files
from depgraph.io.files import existing_file, read_bytes
from depgraph.io.schemas import json_kind, load_schema, schema_validator
from depgraph.spec.model import StudyFileRecord
from depgraph.study.schema import KIND
from depgraph.study.sections import MANY_TABLES, STUDY_FILE_VERSION, StudyFile
from depgraph.vocab import role_of_column

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - Python 3.10: tomllib's original
    import tomli as tomllib


@dataclass(frozen=True)
class Declaration:
    """A study file read and checked: its tables typed (``file``), its keys as written (``document``: what a spec
    records), the folder its paths start from (``base``), how messages name it (``source``), the study file's own
    record (name, size, SHA-256; None for a declaration made from a dict), every input it names, checked to be a
    regular file: ``(key, path as written, path)`` in the order a run reads them, and the study file itself (None
    for a declaration made from a dict), which no output may replace."""

    file: StudyFile
    document: dict[str, Any]
    base: Path
    source: str
    study_file: StudyFileRecord | None
    inputs: tuple[tuple[str, str, Path], ...]
    origin: Path | None = None

    def path(self, written: str) -> Path:
        """A path of the study file (relative to its folder unless absolute), as :func:`located` finds it."""
        return located(self.base, written)


def located(base: Path, written: str) -> Path:
    """The file a study file's path names: relative to the study file's folder ``base`` unless absolute; shown
    relative to the working directory when it is below it or beside it (messages name ``data/metadata.csv``, not a
    long absolute path), found from wherever the process is when it reads."""
    given = Path(written)
    found = given if given.is_absolute() else base / given
    try:
        relative = Path(os.path.relpath(found))
    except ValueError:  # another drive
        return found
    return found if relative.parts[:2] == ("..", "..") else relative


def read_declaration(path: str | os.PathLike[str]) -> Declaration:
    """The study file at ``path``: UTF-8 TOML, checked (:func:`study_document`), every input found."""
    source = f"study file {str(path)!r}"
    raw = read_bytes(path, "study file")
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise DepgraphError("parse", f"{source} is not UTF-8 text (byte {exc.start}); TOML files are UTF-8") from None
    try:
        doc = tomllib.loads(text.removeprefix("\ufeff"))
    except tomllib.TOMLDecodeError as exc:
        raise DepgraphError("parse", f"{source} is not valid TOML: {exc}") from None
    record = StudyFileRecord(name=Path(path).name, size=len(raw), sha256=hashlib.sha256(raw).hexdigest())
    return dataclasses.replace(declaration_of(doc, Path(path).parent, source, record), origin=Path(path))


def declaration_of(
    doc: Any, base: str | os.PathLike[str], source: str = "study", study_file: StudyFileRecord | None = None
) -> Declaration:
    """A declaration from a study file's content (``doc``, as ``tomllib`` reads it; copied, so a caller's later
    change to it changes neither the run nor what the spec records), its paths relative to ``base``."""
    doc = copy.deepcopy(doc)
    file = study_document(doc, source)
    base = Path(base).resolve()
    inputs = tuple(_inputs(file, base, source))
    return Declaration(file, doc, base, source, study_file, inputs)


def study_document(doc: Any, source: str = "study file") -> StudyFile:
    """``doc`` (a study file's content, as ``tomllib`` reads it) checked and typed: its version first (a file of a
    later version is refused as such, whatever keys it adds), then the published schema, then the models' rules."""
    if not isinstance(doc, dict):
        raise DepgraphError("schema", f"{source} is {json_kind(doc)}; a study file is a table of keys")
    _check_version(doc.get("version", None), source)
    problem = first_problem(doc)
    if problem is not None:
        raise DepgraphError("schema", f"{source}: {problem}")
    try:
        return StudyFile.model_validate(doc)
    except ValidationError as exc:
        raise DepgraphError("schema", f"{source}: {_model_problem(exc, doc)}") from None


def _check_version(version: Any, source: str) -> None:
    if version is None:
        raise DepgraphError("schema", f"{source} has no version; begin it with version = {STUDY_FILE_VERSION}")
    if isinstance(version, bool) or not isinstance(version, int):
        raise DepgraphError("schema", f"{source}: version must be an integer ({STUDY_FILE_VERSION}), not {version!r}")
    if version > STUDY_FILE_VERSION:
        raise DepgraphError(
            "version",
            f"{source} is a version {version} study file; this depgraph reads version {STUDY_FILE_VERSION}: "
            "upgrade depgraph to run it",
        )
    if version < 1:
        raise DepgraphError("version", f"{source}: version {version} does not exist; the first is 1")


# --------------------------------------------------------------------------- schema problems, said for a study file
def first_problem(doc: dict[str, Any]) -> str | None:
    """The first problem the published schema finds in ``doc`` (in the file's order), said in the file's words, or
    None."""
    errors = [_deepest(error) for error in schema_validator(KIND).iter_errors(doc)]
    if not errors:
        return None
    first = min(errors, key=lambda e: _file_order(doc, list(e.absolute_path)))
    return _said(first, doc)


def _deepest(error: Any) -> Any:
    """For a value that may take several shapes (``[kinship]`` or ``[[kinship]]``; a number or a degree name), the
    problem of the shape the value has, when one of the shapes is its kind."""
    while error.validator in ("anyOf", "oneOf") and error.context:
        kind = _schema_type(error.instance)
        branches = [i for i, b in enumerate(error.validator_value) if b.get("type") == kind]
        if not branches:
            return error
        inner = [e for e in error.context if e.schema_path and e.schema_path[0] == branches[0]]
        if not inner:
            return error
        error = min(inner, key=lambda e: len(e.absolute_path) * -1)
    return error


def _schema_type(value: Any) -> str:
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int):
        return "integer"
    return {float: "number", str: "string", list: "array", dict: "object"}.get(type(value), "")


def _file_order(doc: Any, path: list[Any]) -> list[int]:
    """Where ``path`` is in the file: the position of each key in its table, so problems are told top to bottom."""
    order, node = [], doc
    for part in path:
        if isinstance(node, dict) and part in node:
            order.append(list(node).index(part))
            node = node[part]
        elif isinstance(node, list) and isinstance(part, int) and part < len(node):
            order.append(part)
            node = node[part]
        else:
            break
    return order


def where(path: list[Any], doc: dict[str, Any]) -> tuple[str, str | None]:
    """The table a path is in, as the file writes it — ``[metadata.columns]``, ``[[kinship]] #2``,
    ``[metadata.columns] of [[metadata]] #2``, ``top level`` — and the key it ends with (None for a table).

    >>> where(["metadata", 1, "columns", "subjet_id"], {"metadata": [{}, {"columns": {"subjet_id": "p"}}]})
    ('[metadata.columns] of [[metadata]] #2', 'subjet_id')
    """
    names: list[str] = []
    array: tuple[str, int] | None = None  # the array of tables the path enters, and which of them
    key: str | None = None
    node: Any = doc
    for i, part in enumerate(path):
        if isinstance(part, int):
            if isinstance(node, list):  # a table written once is a list of one only to the models
                array = (".".join(names), part + 1)
                node = node[part] if part < len(node) else None
            continue
        value = node.get(part) if isinstance(node, dict) else None
        if (isinstance(value, (dict, list)) and i < len(path) - 1) or isinstance(value, dict):
            names.append(str(part))
        else:
            key = str(part)
        node = value
    if array is None:
        return (f"[{'.'.join(names)}]" if names else "top level"), key
    outer, number = array
    inner = names[len(outer.split(".")) :]
    table = f"[[{outer}]] #{number}"
    return (f"[{'.'.join([outer, *inner])}] of {table}" if inner else table), key


def _said(error: Any, doc: dict[str, Any]) -> str:
    """One schema problem in the study file's words."""
    path = list(error.absolute_path)
    table, key = where(path, doc)
    here = f"{table} {key}" if key else table
    kind, value, schema = error.validator, error.instance, error.schema
    if kind == "additionalProperties":
        allowed = list(schema.get("properties", {}))
        unknown = next(k for k in value if k not in allowed)
        return f"{table} has no key {unknown!r}{_suggestion(unknown, allowed, doc)}"
    if "propertyNames" in error.absolute_schema_path:  # a key of a table whose keys are a list of names
        allowed = [str(v) for v in schema.get("enum", [])]
        return f"{here} has no key {value!r}{_suggestion(value, allowed, doc)}"
    if kind == "required":
        missing = next(k for k in error.validator_value if k not in value)
        wanted = schema.get("properties", {}).get(missing, {})
        if "properties" in wanted or any("properties" in b for b in wanted.get("anyOf", [])):
            said = wanted.get("description", "").split(": ", 1)[-1].rstrip(".")
            article = "an" if missing[0] in "aeiou" else "a"
            return f"the study file needs {article} [{missing}] table ({said})"
        described = wanted.get("description", "")
        return f"{here} needs {missing!r}" + (f": {described}" if described else "")
    if kind in ("type", "anyOf", "oneOf"):
        return f"{here} must be {_expected(schema)}, not {toml_kind(value)}"
    if kind == "enum":
        allowed = [str(v) for v in error.validator_value]
        return f"{here} is {value!r}, which is not one of {', '.join(allowed)}{_close(value, allowed)}"
    if kind == "const":
        return f"{here} must be {error.validator_value!r}, not {value!r}"
    bounds = {"minimum": "≥", "maximum": "≤", "exclusiveMinimum": ">", "exclusiveMaximum": "<"}
    if kind in bounds:
        return f"{here} must be {bounds[kind]} {error.validator_value}, not {value!r}"
    if kind == "minLength":
        return f"{here} is empty"
    if kind == "minItems":
        return f"{here} lists nothing"
    return f"{here}: {error.message}"


def toml_kind(value: Any) -> str:
    """What a TOML value is, in the file's words, with the value when it is short text or a number.

    >>> toml_kind("5"), toml_kind(datetime.date(1979, 5, 27)), toml_kind([1, 2])
    ("text ('5')", 'a date (1979-05-27)', 'a list')
    """
    if isinstance(value, (datetime.datetime, datetime.date, datetime.time)):
        kind = "a date-time" if isinstance(value, datetime.datetime) else type(value).__name__
        return f"{'a ' + kind if not kind.startswith('a ') else kind} ({value.isoformat()})"
    if isinstance(value, bool):
        return f"a boolean ({str(value).lower()})"
    if isinstance(value, (int, float)):
        return f"a number ({value!r})"
    if isinstance(value, str):
        return f"text ({value!r:.60})"
    return {list: "a list", dict: "a table"}.get(type(value), json_kind(value))


def _expected(schema: dict[str, Any]) -> str:
    """What a schema takes, in words: ``an integer``, ``a number or one of first, second``."""
    words = {"integer": "an integer", "number": "a number", "string": "text", "boolean": "true or false",
             "array": "a list", "object": "a table"}  # fmt: skip
    branches = schema.get("anyOf") or schema.get("oneOf") or [schema]
    said = []
    for branch in branches:
        if "enum" in branch:
            said.append("one of " + ", ".join(map(str, branch["enum"])))
        elif "type" in branch:
            said.append(words.get(branch["type"], branch["type"]))
    return " or ".join(dict.fromkeys(said)) or "another value"


def _close(value: Any, allowed: list[str]) -> str:
    """``; did you mean 'x'?`` for the allowed word closest to ``value`` (a word in another case first)."""
    if not isinstance(value, str):
        return ""
    same = [a for a in allowed if a.lower() == value.strip().lower().replace("_", "-")]
    same = same or [a for a in allowed if a.lower().replace("-", "_") == value.strip().lower().replace("-", "_")]
    close = same or difflib.get_close_matches(value, allowed, n=1, cutoff=0.6)
    return f"; did you mean {close[0]!r}?" if close else ""


def _suggestion(key: str, allowed: list[str], doc: dict[str, Any]) -> str:
    """The closest key of the table, or the table the key belongs in, or the keys the table has."""
    if role_of_column(key) == "family":
        return "; depgraph has no family role: relatives are grouped by kinship, declared in [kinship]"
    close = _close(key, allowed)
    if close:
        return close
    if key in load_schema(KIND)["properties"] and key not in table_keys():  # written below a table's header
        return f"; {key} is a top-level key: write it above the first [table] of the file"
    elsewhere = [table for table, keys in table_keys().items() if key in keys]
    if elsewhere:
        return f"; {key} is a key of [{elsewhere[0]}]"
    return f"; its keys are {describe_ids(allowed, 30)}"


def table_keys() -> dict[str, list[str]]:
    """Every table of the study file and its keys, from the published schema."""
    properties = load_schema(KIND)["properties"]
    found = {}
    for table, schema in properties.items():
        one = next((b for b in schema.get("anyOf", []) if b.get("type") == "object"), schema)
        if one.get("type") == "object" and "properties" in one:
            found[table] = list(one["properties"])
    return found


def _model_problem(exc: ValidationError, doc: dict[str, Any]) -> str:
    """The first rule of the models ``doc`` breaks, said with the table and key it is about."""
    first = exc.errors()[0]
    message = str(first["msg"]).removeprefix("Value error, ")
    table, key = where(_in_document(first["loc"], doc), doc)
    said = PYDANTIC_WORDS.get(first["type"])
    if said is not None and key:  # a type's own rule, said as the schema's rules are
        return f"{table} {key} must be {said}, not {toml_kind(first['input'])}"
    return f"{table} {key}: {message}" if key else f"{table}: {message}"


#: pydantic's rules of a value's type, said as the schema's are (``[folds] n_splits must be an integer, not 5.0``).
PYDANTIC_WORDS = {"int_from_float": "an integer", "int_type": "an integer", "finite_number": "a finite number",
                  "float_type": "a number", "string_type": "text", "bool_type": "true or false"}  # fmt: skip


def _in_document(loc: tuple[Any, ...], doc: Any) -> list[Any]:
    """The part of a model's error location that names keys of the document (pydantic adds the branches of a
    union, ``float`` or ``literal[...]``, which the file does not have)."""
    path, node = [], doc
    for part in loc:
        if (isinstance(node, dict) and part in node) or (
            isinstance(node, list) and isinstance(part, int) and part < len(node)
        ):
            node = node[part]
        elif not (isinstance(part, int) and isinstance(node, dict)):  # [table] written once: a list of one
            break
        path.append(part)
    return path


def _inputs(file: StudyFile, base: Path, source: str) -> Iterator[tuple[str, str, Path]]:
    """Every file a run of ``file`` reads, in reading order, each checked to be a regular file (``io`` naming the
    key: a FIFO or a device would be read once, and a run hashes its inputs and reads them): ``(key, path as
    written, path)``; a GRM's ids come beside its matrix, a columnar prior spec's tables beside its manifest."""
    named: list[tuple[str, str, str, Any]] = []  # key, what it is, path as written, the table declaring it
    for table in MANY_TABLES:
        entries = getattr(file, table)
        for i, entry in enumerate(entries):
            where = table if len(entries) == 1 else f"{table}[{i + 1}]"
            named += [(f"{where}.{field}", table, getattr(entry, field), entry) for field in ("path", "features")
                      if getattr(entry, field, None) is not None]  # fmt: skip
    for key, written in (("grouping.samples", file.grouping.samples),
                         ("folds.prior", None if file.folds is None else file.folds.prior)):  # fmt: skip
        if written is not None:
            named.append((key, key.split(".")[1], written, None))
    for key, what, written, entry in named:
        found = located(base, written)
        try:
            for path in _files_of(what, found, entry):
                shown = written if path == found else str(PurePosixPath(written).parent / path.name)
                if what == "prior" and path.parent == found:
                    shown = str(PurePosixPath(written) / path.name)
                yield key, shown, path
        except DepgraphError as exc:
            raise DepgraphError(exc.code, f"{source}: {key_words(key)} {written!r}: {exc.message}", key=key) from None


def _files_of(what: str, found: Path, entry: Any) -> list[Path]:
    """The regular files reading ``found`` opens (``what`` it is: a table's name, ``samples`` or ``prior``)."""
    if what == "prior" and found.is_dir():  # a columnar spec: its manifest and tables
        files = sorted(p for p in found.iterdir() if p.is_file() and not p.name.startswith("."))
    elif what == "kinship":
        files = kinship_files(found, None if entry.format == "auto" else entry.format, encoding=entry.encoding)
    else:
        files = [existing_file(found, what)]
    for path in files:
        if not stat.S_ISREG(path.stat().st_mode):
            raise DepgraphError("io", f"{what} {str(path)!r} is not a regular file (a FIFO or a device is read once)")
    return files


def key_words(key: str) -> str:
    """A recorded key as the file writes it: ``kinship[2].path`` is ``[[kinship]] #2 path``."""
    table, field = key.rsplit(".", 1)
    if "[" in table:
        name, number = table.rstrip("]").split("[")
        return f"[[{name}]] #{number} {field}"
    return f"[{table}] {field}"
