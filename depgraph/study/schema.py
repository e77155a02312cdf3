"""The study file's published JSON Schema, ``schema/study-file.schema.json``, generated from the models of
:mod:`depgraph.study.sections`.

The models' schema with its references inlined (one self-contained file, as the spec's), each table that may be
written once or several times (``[kinship]`` or ``[[kinship]]``) as either, and no ``null``: TOML has none, so a key
is written with its value or left out. Titles are dropped (the keys are the names); the fields' descriptions stay, so
an editor that reads JSON Schemas for TOML explains each key. ``python -m depgraph.study.schema`` rewrites the file;
a test checks the committed file equals the generated one.

>>> schema = study_file_schema()
>>> schema["properties"]["grouping"]["properties"]["strategy"]["enum"]
['strict', 'rule_based']
>>> sorted(b["type"] for b in schema["properties"]["kinship"]["anyOf"])
['array', 'object']
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import orjson

from depgraph.io.outputs import Outputs, atomic_write_bytes
from depgraph.io.schemas import forget_schemas
from depgraph.spec.schema import SCHEMA_DIALECT, inlined
from depgraph.study.sections import MANY_TABLES, STUDY_FILE_VERSION, StudyFile

KIND = "study-file"
_DESCRIPTION = (
    "A depgraph study file (TOML): the metadata tables and the column of each role, the dependencies between samples "
    "(kinship, duplicates, spatial neighbours, explicit relations), how they become one group per sample, the folds, "
    "and what 'depgraph run' writes. Paths are relative to the study file. Rules beyond this schema, checked by "
    "every reader: a fold parameter must be one the chosen scheme takes; a metadata column holds one role; a kinship "
    "threshold lies in [0, 1]; strategy, via and priority go with mode composite; duplicates give either path or "
    "features. See docs/study-file.md."
)


def study_file_schema() -> dict[str, Any]:
    """The JSON Schema of a study file, from :class:`~depgraph.study.sections.StudyFile`."""
    generated = StudyFile.model_json_schema()
    definitions = generated.pop("$defs", {})
    body = _cleaned(inlined(generated, definitions))
    for key in MANY_TABLES:
        table = body["properties"][key]
        one = table.get("items", table)
        body["properties"][key] = {
            "description": one.get("description", ""),
            "anyOf": [one, {"type": "array", "items": one, "minItems": 1}],
        }
    body["properties"]["version"]["const"] = STUDY_FILE_VERSION
    return {
        "$schema": SCHEMA_DIALECT,
        "$id": f"urn:depgraph:schema:{KIND}:{STUDY_FILE_VERSION}",
        "title": "depgraph study file",
        "description": _DESCRIPTION,
        **{k: v for k, v in body.items() if k != "description"},
    }


def _cleaned(node: Any) -> Any:
    """``node`` without titles, ``null`` branches or ``null`` defaults, and with one-branch ``anyOf`` unwrapped."""
    if isinstance(node, list):
        return [_cleaned(v) for v in node]
    if not isinstance(node, dict):
        return node
    out = {k: _cleaned(v) for k, v in node.items() if k != "title" and not (k == "default" and v is None)}
    if "anyOf" in out:
        branches = [b for b in out["anyOf"] if b != {"type": "null"}]
        if len(branches) == 1:
            out = {**branches[0], **{k: v for k, v in out.items() if k != "anyOf"}}
        else:
            out["anyOf"] = branches
    if "description" in out and isinstance(out["description"], str):
        out["description"] = out["description"].replace("``", "")
    return out


def schema_bytes() -> bytes:
    """The schema file's exact bytes, as generated."""
    return orjson.dumps(study_file_schema(), option=orjson.OPT_INDENT_2) + b"\n"


def write_study_file_schema(directory: Path | None = None) -> Path:
    """(Re)write ``study-file.schema.json`` from the models (into the checkout's ``schema/`` by default)."""
    path = (directory or Path(__file__).resolve().parents[2] / "schema") / f"{KIND}.schema.json"
    with Outputs():
        atomic_write_bytes(path, schema_bytes())
    forget_schemas()
    return path


if __name__ == "__main__":  # pragma: no cover - maintenance entry point
    print(f"wrote {write_study_file_schema(Path(sys.argv[1]) if len(sys.argv) > 1 else None)}")
