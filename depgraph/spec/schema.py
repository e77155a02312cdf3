"""The published JSON Schemas, generated: the split spec's from its pydantic models, the study graph's from the
vocabulary.

``schema/split-spec.schema.json`` is ``SplitSpec.model_json_schema()`` with its references inlined (one
self-contained file other languages read) and the few rules of a *document* that the models cannot state
(:data:`DOCUMENT_RULES`, each with its reason). Enums come from the models' types, which come from
:mod:`depgraph.vocab`, so the schema cannot drift from the code. ``python -m depgraph.spec.schema`` rewrites
the files; a test checks the committed files equal the generated ones. Reading and checking documents against
the published files is :mod:`depgraph.io.schemas`.

>>> schema = split_spec_schema()
>>> schema["properties"]["constraint"]["properties"]["mode"]["enum"][:3]
['subject', 'batch', 'study']
>>> from depgraph.io.schemas import load_schema
>>> orjson.loads(schema_bytes("split-spec")) == load_schema("split-spec")  # the published file is the generated one
True
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import orjson
from pydantic.json_schema import GenerateJsonSchema, JsonSchemaValue
from pydantic_core import core_schema

from depgraph.formats import FORMATS, GRAPH_FORMAT, KINDS
from depgraph.graph.model import KNOWN_OVERRIDES
from depgraph.io.outputs import Outputs, atomic_write_bytes
from depgraph.io.schemas import forget_schemas
from depgraph.spec.columns import SAMPLE_COLUMNS
from depgraph.spec.model import SplitSpec
from depgraph.vocab import NODE_TYPES, RELATION_NAMES

SCHEMA_DIALECT = "https://json-schema.org/draft/2020-12/schema"

_SPEC_DESCRIPTION = (
    "One group per sample, why, and optionally the folds built from them. Rules JSON Schema cannot express are "
    "checked by every depgraph reader (a spec that breaks one contradicts itself and is refused even when its "
    "digest matches): no object repeats a key; there is at least one sample; all samples columns have the same "
    "length; sample ids are in byte (UTF-8) order without repeats; the summary holds the counts of the columns "
    "(largest_group: the smallest id among the largest groups); fold split positions are sorted, unique and "
    "within the samples, test and excluded are disjoint and the counts match them; every split tests at least one"
    " sample and no group has a tested and a trained sample in one split; with pseudonymization, the columns it "
    "names hold lower-case hex pseudonyms of hex_digits digits (group ids after a '<prefix>:'); integers are "
    "written as integers (1, not 1.0); digest is the sha256 of the canonical content (every top-level field but "
    "created_at, generator, digest and signature, as compact JSON with sorted keys); signature, when present, is "
    "HMAC-SHA256(key, 'depgraph.split-spec:' + digest)."
)
_GRAPH_DESCRIPTION = (
    "A study declaration: node keys grouped by type, attributes aligned with them, edges grouped by relation "
    "and named by endpoint keys. Readers check every element of every list, and also that no object repeats "
    "a key, that attribute lists are as long as their node lists, that attributes describe declared node "
    "types, that source/target/weight lists of a relation have equal lengths, that weights are finite, and "
    "that every endpoint names a node of the relation's type."
)
_HEX16 = {"type": "string", "pattern": "^[0-9a-f]{16}$"}
_NEVER_NULL = "$never_null"  # a rule's marker: the field's value without its null branch (and its null default)
_SIGNATURE_DESCRIPTION = (
    "HMAC-SHA256 of 'depgraph.split-spec:' + digest under a key the teams share; key_fingerprint is "
    "HMAC-SHA256(key, 'depgraph signing key fingerprint') cut to 16 hex digits"
)
_POSITIONS = {"type": "array", "items": {"type": "integer", "minimum": 0}, "uniqueItems": True}


def _samples_schema() -> dict[str, Any]:
    """The ``samples`` object: one array per column, items typed by :data:`SAMPLE_COLUMNS`."""
    items = {kind: {"type": [kind, "null"]} for kind in ("string", "number", "integer")}
    columns = {name: {"type": "array", "items": items[kind]} for name, kind in SAMPLE_COLUMNS.items()}
    columns["sample_id"] = {"type": "array", "items": {"type": "string", "minLength": 1}, "uniqueItems": True}
    columns["group_id"] = {"type": "array", "items": {"type": "string", "minLength": 1}}
    columns["order_rank"] = {"type": "array", "items": {"type": ["integer", "null"], "minimum": 1}}
    return {
        "type": "object",
        "properties": columns,
        "required": ["sample_id", "group_id"],
        "patternProperties": {
            "^[a-z][a-z0-9_]*$": {"type": "array", "items": {"type": ["string", "number", "boolean", "null"]}}
        },
        "additionalProperties": False,
    }


#: What a spec *document* must hold beyond what the models say, by model and field (merged into pydantic's schema
#: of that field; ``"required"`` replaces the model's list). Pydantic cannot say these, because they are rules of
#: the file, not of the Python values the models take:
#:
#: - ``required``: a document spells fields that Python callers may leave to their defaults (a builder fills
#:   ``format``, ``digest``, ``severity``, ``method``...), so the model marks them optional;
#: - ``digest``, ``pseudonymization``, ``signature`` (:data:`_NEVER_NULL`): ``None`` in Python means "absent" in the
#:   file, never ``null``;
#: - patterns and bounds of text and counts that depgraph computes (digest, key fingerprints, signature value,
#:   finding codes, summary counts, hex digits) rather than validates when a model is built; every spec made in
#:   memory is checked against this schema (:func:`depgraph.spec.model.SplitSpec.build`), so Python and files agree;
#: - ``overrides``: which override names exist is the graph's list (``KNOWN_OVERRIDES``), not a type;
#: - ``samples`` and fold ``test``/``excluded``: held as a pandas frame and numpy arrays, for which pydantic has no
#:   schema; in the file they are one JSON array per column and sorted position lists.
DOCUMENT_RULES: dict[str, dict[str, Any]] = {
    "SplitSpec": {
        "required": [
            *("format", "format_version", "created_at", "generator", "digest", "constraint"),
            *("recommended_resampling", "warnings", "summary", "samples"),
        ],
        "created_at": {"format": "date-time"},
        "digest": {_NEVER_NULL: True, "pattern": "^sha256:[0-9a-f]{64}$"},
        "pseudonymization": {_NEVER_NULL: True},
        "signature": {_NEVER_NULL: True, "description": _SIGNATURE_DESCRIPTION},
        "samples": _samples_schema(),
    },
    "Generator": {"required": ["package", "version"]},
    "Constraint": {
        "overrides": {
            "properties": {name: {"type": "boolean"} for name in sorted(KNOWN_OVERRIDES)},
            "additionalProperties": False,
        }
    },
    "SpecWarning": {
        "required": ["code", "severity", "message"],
        "code": {"pattern": "^[a-z][a-z0-9_]*$"},
        "count": {"minimum": 0},
    },
    "Summary": {name: {"minimum": 0} for name in ("n_samples", "n_groups", "largest_group_size", "singletons")},
    "FoldSplit": {"test": _POSITIONS, "excluded": _POSITIONS},
    "Pseudonymization": {
        "required": ["method", "hex_digits", "key_fingerprint"],
        "hex_digits": {"minimum": 16, "maximum": 64},
        "key_fingerprint": _HEX16,
    },
    "Signature": {
        "required": ["method", "key_fingerprint", "value"],
        "key_fingerprint": _HEX16,
        "value": {"type": "string", "pattern": "^[0-9a-f]{64}$"},
    },
}


class _DocumentSchema(GenerateJsonSchema):
    """Pydantic's schema generation, made for a published file: optional values as ``oneOf [null, value]``, no
    titles (the field names say it), and an empty schema for a frame or array (:data:`DOCUMENT_RULES` fills it)."""

    def nullable_schema(self, schema: core_schema.NullableSchema) -> JsonSchemaValue:
        return {"oneOf": [{"type": "null"}, self.generate_inner(schema["schema"])]}

    def is_instance_schema(self, schema: core_schema.IsInstanceSchema) -> JsonSchemaValue:
        return {}

    def field_title_should_be_set(self, schema: Any) -> bool:
        return False


def _with_rules(name: str, model: dict[str, Any]) -> dict[str, Any]:
    """A model's generated schema with its :data:`DOCUMENT_RULES` (no title; no description: docstrings are
    written for Python readers)."""
    model = {k: v for k, v in model.items() if k not in ("title", "description")}
    rules = DOCUMENT_RULES.get(name, {})
    properties = dict(model.get("properties", {}))
    for field, rule in rules.items():
        if field == "required":
            model["required"] = list(rule)
            continue
        value = properties[field]
        if rule.get(_NEVER_NULL):
            value = next(branch for branch in value["oneOf"] if branch != {"type": "null"})
        properties[field] = {**value, **{k: v for k, v in rule.items() if k != _NEVER_NULL}}
    if properties:
        model["properties"] = properties
    return model


def inlined(node: Any, definitions: dict[str, Any]) -> Any:
    """``node`` with every ``{"$ref": "#/$defs/X"}`` replaced by X's schema (the models hold no cycle)."""
    if isinstance(node, dict):
        fields = {k: inlined(v, definitions) for k, v in node.items() if k != "$ref"}
        if "$ref" in node:  # the definition, with what the reference adds (a description)
            return {**inlined(definitions[node["$ref"].rsplit("/", 1)[-1]], definitions), **fields}
        return fields
    if isinstance(node, list):
        return [inlined(v, definitions) for v in node]
    return node


def _envelope(kind: str, title: str, description: str) -> dict[str, Any]:
    """What both published schemas start with: dialect, id, title, the format version, extension fields."""
    version = FORMATS[kind][1]
    return {
        "$schema": SCHEMA_DIALECT,
        "$id": f"urn:depgraph:schema:{kind}:{version.split('.')[0]}",
        "title": title,
        "description": description,
        "format_version": version,
        "type": "object",
        "patternProperties": {"^x-": {"description": "extension fields, ignored by readers"}},
        "additionalProperties": False,
    }


def split_spec_schema() -> dict[str, Any]:
    """The JSON Schema of a split spec file: the models' schema, inlined, with :data:`DOCUMENT_RULES`."""
    generated = SplitSpec.model_json_schema(schema_generator=_DocumentSchema)
    definitions = {name: _with_rules(name, model) for name, model in generated.pop("$defs", {}).items()}
    root = inlined(_with_rules("SplitSpec", generated), definitions)
    major = FORMATS["split-spec"][1].split(".")[0]
    properties = root["properties"]
    properties["format_version"] = {"type": "string", "pattern": rf"^{major}\.[0-9]+\.[0-9]+$"}
    schema = _envelope("split-spec", "depgraph split spec", _SPEC_DESCRIPTION)
    schema["properties"] = {"$comment": {"type": "string", "description": "free text, ignored by readers"}}
    schema["properties"].update(properties)
    schema["required"] = root["required"]
    return schema


def study_graph_schema() -> dict[str, Any]:
    """The JSON Schema of a study graph file (node types, relations and overrides from the vocabulary)."""
    major = FORMATS["study-graph"][1].split(".")[0]
    schema = _envelope("study-graph", "depgraph study graph", _GRAPH_DESCRIPTION)
    types = [t.value for t in NODE_TYPES]
    strings = {"type": "array", "items": {"type": "string"}}
    schema["properties"] = {
        "$comment": {"type": "string"},
        "format": {"const": GRAPH_FORMAT},
        "format_version": {"type": "string", "pattern": rf"^{major}\.[0-9]+\.[0-9]+$"},
        "name": {"type": ["string", "null"]},
        "overrides": {"type": "object", **DOCUMENT_RULES["Constraint"]["overrides"]},
        "history": {"type": "array", "items": {"type": "object", "required": ["step"]}},
        "nodes": {
            "type": "object",
            "propertyNames": {"enum": types},
            "additionalProperties": {"type": "array", "items": {"type": "string", "minLength": 1}, "uniqueItems": True},
        },
        "attributes": {
            "type": "object",
            "propertyNames": {"enum": types},
            "additionalProperties": {
                "type": "object",
                "additionalProperties": {"type": "array", "items": {"type": ["string", "number", "boolean", "null"]}},
            },
        },
        "edges": {
            "type": "object",
            "propertyNames": {"enum": list(RELATION_NAMES)},
            "additionalProperties": {
                "type": "object",
                "properties": {
                    "source": strings,
                    "target": strings,
                    "weight": {"type": "array", "items": {"type": ["number", "null"]}},
                    "provenance": {"oneOf": [{"type": "string"}, strings]},
                },
                "required": ["source", "target"],
                "additionalProperties": False,
            },
        },
    }
    schema["required"] = ["format", "format_version", "nodes"]
    return schema


GENERATORS = {"split-spec": split_spec_schema, "study-graph": study_graph_schema}


def schema_bytes(kind: str) -> bytes:
    """The schema file's exact bytes, as generated."""
    return orjson.dumps(GENERATORS[kind](), option=orjson.OPT_INDENT_2) + b"\n"


def write_schemas(directory: Path | None = None) -> list[Path]:
    """(Re)write the schema files from the code (into the checkout's ``schema/`` by default), all or none."""
    directory = directory or Path(__file__).resolve().parents[2] / "schema"
    written = []
    with Outputs():
        for kind in KINDS:
            path = directory / f"{kind}.schema.json"
            atomic_write_bytes(path, schema_bytes(kind))
            written.append(path)
    forget_schemas()
    return written


if __name__ == "__main__":  # pragma: no cover - maintenance entry point
    for written_path in write_schemas(Path(sys.argv[1]) if len(sys.argv) > 1 else None):
        print(f"wrote {written_path}")
