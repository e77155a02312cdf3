"""The study file's tables as typed values: one pydantic model per table (those naming input files are in
:mod:`depgraph.study.inputs`), each field the name the Python API and the command line use for the same thing
(``n_splits``, ``min_groups``, ``id_template``, ``sign_key_env``…).

A study file (TOML) is read to a dict, checked against the published JSON Schema (:mod:`depgraph.study.schema`
generates it from these models), then made into a :class:`StudyFile`; the checks a schema cannot say (a parameter the
chosen fold scheme does not take, two roles mapped onto one column, a threshold out of range) are these models'
validators. Nothing here reads a table: paths are text, relative to the study file, checked to exist by
:mod:`depgraph.study.files` before any table is read.

>>> Grouping(mode="composite", strategy="strict", via=["relatedness", "duplicate"]).via
['relatedness', 'duplicate']
>>> Folds(scheme="group-kfold", stratify="outcome")  # doctest: +ELLIPSIS
Traceback (most recent call last):
...
pydantic_core._pydantic_core.ValidationError: 1 validation error for Folds
  Value error, stratify does not apply to scheme 'group-kfold' (it applies to stratified-group-kfold) ...
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import BeforeValidator, Field, create_model, field_validator, model_validator

from depgraph.engines import ENGINE_NAMES
from depgraph.folds.parameters import MAX_SEED, PARAMETERS, Parameter
from depgraph.folds.schemes import SCHEMES, schemes_taking
from depgraph.spec.keys import DEFAULT_KEY_ENV
from depgraph.study.inputs import (
    STUDY_FILE_VERSION,
    Duplicates,
    FiniteNumber,
    Kinship,
    Metadata,
    Path,
    Relations,
    Section,
    Spatial,
    one_or_many,
)
from depgraph.vocab import COMBINABLE_MODES, MODE, STRATEGIES

# Names are written as the vocabulary writes them (lower case; ``rule_based``; ``group-kfold``): the file is a
# document, checked by its published schema, and a name in another case gets a "did you mean" from the reader.
ModeName = Literal[tuple(MODE)]  # type: ignore[valid-type]
CombinableMode = Literal[COMBINABLE_MODES]  # type: ignore[valid-type]
SchemeName = Literal[tuple(SCHEMES)]  # type: ignore[valid-type]
EngineName = Literal[ENGINE_NAMES]  # type: ignore[valid-type]


class Grouping(Section):
    """``[grouping]``: how the declared dependencies become one group per sample."""

    mode: ModeName = Field(description="subject, batch, study, time, site, relatedness, spatial, duplicate, composite…")
    strategy: Literal[STRATEGIES] | None = Field(  # type: ignore[valid-type]
        None, description="Composite: strict (every via mode at once) or rule_based (the first of priority)."
    )
    via: list[CombinableMode] = Field(
        default_factory=list, min_length=1, description="Composite/strict: the modes combined (default: every one)."
    )
    priority: list[CombinableMode] = Field(
        default_factory=list, min_length=1, description="Composite/rule_based: modes in priority order."
    )
    samples: Path | None = Field(None, description="Derive for these samples only: one id per line, or a table.")
    min_groups: Annotated[int, Field(ge=1)] | None = Field(None, description="Fail when fewer groups than this remain.")
    allow_unlinked: bool = Field(False, description="Accept a mode that links none of the samples.")
    allow_single_group: bool = Field(False, description="Composite without via or priority: accept one group.")

    @model_validator(mode="after")
    def _composite_options(self) -> Grouping:
        composite = self.mode == "composite"
        given = [k for k in ("strategy", "via", "priority") if k in self.model_fields_set]
        if given and not composite:
            raise ValueError(
                f"{' and '.join(given)} appl{'ies' if len(given) == 1 else 'y'} to mode composite, not {self.mode}"
            )
        if composite and self.strategy is None:
            raise ValueError("mode composite needs a strategy: strict or rule_based")
        for name, modes in (("via", self.via), ("priority", self.priority)):
            repeated = sorted({m for m in modes if modes.count(m) > 1})
            if repeated:
                raise ValueError(f"{name} names {', '.join(repeated)} more than once")
        if self.strategy == "strict" and self.priority:
            raise ValueError("priority applies to strategy rule_based; strict combines via")
        if self.strategy == "rule_based" and self.via:
            raise ValueError("via applies to strategy strict; rule_based takes priority")
        return self


def study_key(parameter: Parameter) -> str:
    """A fold parameter's key in ``[folds]``: its name, or ``<name>_env`` for one read from the environment (the
    file names the variable, never the secret).

    >>> study_key(PARAMETERS[0]), study_key(next(p for p in PARAMETERS if p.reads == "environment"))
    ('n_splits', 'salt_env')
    """
    return f"{parameter.name}_env" if parameter.reads == "environment" else parameter.name


#: Bounds a ``[folds]`` key's value has whatever the scheme (the schemes check them too, later): stated in the
#: published schema, so a study file breaking one is refused before any table is read.
BOUNDS: dict[str, dict[str, float]] = {
    "n_splits": {"ge": 2}, "n_repeats": {"ge": 1}, "gap": {"ge": 0}, "embargo": {"ge": 0},
    "test_fraction": {"gt": 0, "lt": 1}, "joint": {"ge": 1}, "seed": {"ge": 0, "le": MAX_SEED},
}  # fmt: skip


def _key_type(parameter: Parameter) -> Any:
    """The type a ``[folds]`` key takes: a list for names and numbers, a path for a spec, else the schemes' type
    (with its :data:`BOUNDS`)."""
    if parameter.reads == "names":
        return Annotated[list[Annotated[str, Field(min_length=1)]], Field(min_length=1)]
    if parameter.reads == "numbers":
        return Annotated[list[FiniteNumber], Field(min_length=1)]
    if parameter.reads in ("spec", "environment"):
        return Annotated[str, Field(min_length=1)]
    scheme = SCHEMES[schemes_taking(parameter.name)[0]]
    kind = {f.name: f.type for f in scheme.__dataclass_fields__.values()}[parameter.name]
    typed = {"int": int, "float": FiniteNumber, "bool": bool, "str": Annotated[str, Field(min_length=1)]}[str(kind)]
    bounds = BOUNDS.get(parameter.name)
    return Annotated[typed, Field(**bounds)] if bounds else typed


class _FoldsBase(Section):
    scheme: SchemeName = Field(description="The fold scheme: " + ", ".join(SCHEMES) + ".")

    @model_validator(mode="after")
    def _taken_by_the_scheme(self) -> _FoldsBase:
        taken = SCHEMES[self.scheme].parameter_names()
        for parameter in PARAMETERS:
            key = study_key(parameter)
            if key in self.model_fields_set and parameter.name not in taken:
                elsewhere = ", ".join(schemes_taking(parameter.name))
                raise ValueError(f"{key} does not apply to scheme {self.scheme!r} (it applies to {elsewhere})")
            if parameter.name in taken and parameter.required and getattr(self, key) is None:
                raise ValueError(f"{self.scheme} folds need {key} ({parameter.help.rstrip('.')})")
            if parameter.check is not None and getattr(self, key) is not None:
                try:
                    parameter.check(getattr(self, key), key)
                except Exception as exc:
                    raise ValueError(getattr(exc, "message", str(exc))) from None
        return self


#: ``[folds]``: the scheme and its parameters, one key per fold parameter
#: (:data:`~depgraph.folds.parameters.PARAMETERS`), each optional: a key left out takes the scheme's default.
Folds: type[_FoldsBase] = create_model(  # type: ignore[call-overload]
    "Folds",
    __base__=_FoldsBase,
    __doc__="``[folds]``: the fold scheme and its parameters (a key left out takes the scheme's default).",
    **{study_key(p): (_key_type(p) | None, Field(None, description=p.help)) for p in PARAMETERS},
)


class Outputs(Section):
    """``[outputs]``: what ``depgraph run`` writes, beside the study file unless the paths say otherwise."""

    spec: Path = Field(description="The split spec: S.json, or S.dgspec (columnar).")
    format: Literal["json", "parquet"] | None = Field(
        None, description="json or parquet (columnar); default: by the spec's name."
    )
    report: Path | None = Field(None, description="A self-contained HTML report.")
    graph: Path | None = Field(None, description="The study graph too: G.json or G.dggraph.")
    attributes: Literal["all"] | Annotated[list[Annotated[str, Field(min_length=1)]], Field(min_length=1)] | None = (
        Field(None, description='Sample attributes the spec carries (a list of columns, or "all"), e.g. for folds.')
    )
    sign_key_env: Annotated[str, Field(min_length=1)] | None = Field(
        None, description="Sign the spec with the key in this environment variable."
    )
    pseudonymize_ids: bool = Field(False, description="Replace sample and group ids by keyed hashes (HMAC-SHA256).")
    key_env: Annotated[str, Field(min_length=1)] = Field(
        DEFAULT_KEY_ENV, description="With pseudonymize_ids: the environment variable holding the key."
    )

    @model_validator(mode="after")
    def _pseudonymised_attributes(self) -> Outputs:
        if "key_env" in self.model_fields_set and not self.pseudonymize_ids:
            raise ValueError("key_env applies with pseudonymize_ids = true")
        if self.pseudonymize_ids and self.attributes == "all":
            raise ValueError(
                'attributes = "all" with pseudonymize_ids would carry every metadata column beside the hashed ids; '
                "name the attributes to carry"
            )
        return self


class Spark(Section):
    """``[spark]``: the Spark session of a study run on the Spark engine (``engine = "spark"``)."""

    master: Annotated[str, Field(min_length=1)] | None = Field(
        None, description="The Spark master (default local[2]; under spark-submit, its own)."
    )
    conf: dict[str, Any] = Field(
        default_factory=dict,
        description='Spark settings: { "spark.driver.memory" = "4g" } (quoted keys, or dotted keys, which TOML nests).',
    )

    @field_validator("conf", mode="before")
    @classmethod
    def _dotted(cls, conf: Any) -> Any:
        """TOML reads ``spark.driver.memory = "4g"`` (unquoted) as nested tables: joined back into the setting."""
        if not isinstance(conf, dict):
            return conf
        flat: dict[str, Any] = {}
        pending = list(conf.items())
        while pending:
            key, value = pending.pop(0)
            if isinstance(value, dict) and value:
                pending[:0] = [(f"{key}.{k}", v) for k, v in value.items()]
            elif key in flat:
                raise ValueError(f"conf sets {key} twice (quoted and as dotted keys)")
            else:
                flat[key] = value
        return flat

    @field_validator("conf")
    @classmethod
    def _spark_keys(cls, conf: dict[str, Any]) -> dict[str, Any]:
        other = sorted(k for k in conf if not k.startswith("spark.") or k == "spark.")
        if other:
            raise ValueError(f"conf holds Spark settings (spark.*), not {', '.join(map(repr, other))}")
        empty = sorted(k for k, v in conf.items() if not isinstance(v, str) or not v)
        if empty:
            raise ValueError(f'a Spark setting\'s value is text, as in spark.driver.memory = "4g" ({empty[0]} is not)')
        return conf

    def settings(self) -> dict[str, Any]:
        """What :func:`depgraph.engines.running` takes to start the engine."""
        return {"master": self.master, "conf": dict(self.conf)}


Many = BeforeValidator(one_or_many)


class StudyFile(Section):
    """A whole study file: what the samples are, what links them, how they are grouped, folded and written."""

    version: int = Field(description=f"The study-file format's version: {STUDY_FILE_VERSION}.")
    name: Annotated[str, Field(min_length=1)] | None = Field(None, description="The study's name, shown in reports.")
    metadata: Annotated[list[Metadata], Many, Field(min_length=1)]
    kinship: Annotated[list[Kinship], Many] = Field(default_factory=list)
    duplicates: Annotated[list[Duplicates], Many] = Field(default_factory=list)
    spatial: Annotated[list[Spatial], Many] = Field(default_factory=list)
    relations: Annotated[list[Relations], Many] = Field(default_factory=list)
    grouping: Grouping
    folds: Folds | None = None  # type: ignore[valid-type]
    outputs: Outputs
    engine: EngineName = Field(  # type: ignore[valid-type]
        "single",
        description="single (this process) or spark (built and validated here; derived, folded and written by "
        "Apache Spark).",
    )
    spark: Spark | None = None

    @model_validator(mode="after")
    def _engine_options(self) -> StudyFile:
        if self.spark is not None and self.engine != "spark":
            raise ValueError(f'[spark] applies with engine = "spark", not engine = {self.engine!r}')
        spec, form = self.outputs.spec, self.outputs.format
        if self.engine == "spark" and (form == "json" or (form is None and not spec.lower().endswith(".dgspec"))):
            raise ValueError(
                f'engine = "spark" writes the columnar form: name [outputs] spec NAME.dgspec, not {spec!r}'
            )
        return self

    @field_validator("version")
    @classmethod
    def _this_version(cls, version: int) -> int:
        if version != STUDY_FILE_VERSION:
            raise ValueError(f"version must be {STUDY_FILE_VERSION}, not {version}")
        return version


#: The keys that hold one table or several (``[kinship]`` or ``[[kinship]]``).
MANY_TABLES: tuple[str, ...] = ("metadata", "kinship", "duplicates", "spatial", "relations")
#: Each table's model, by its key in the file.
TABLES: dict[str, type[Section]] = {
    "metadata": Metadata, "kinship": Kinship, "duplicates": Duplicates, "spatial": Spatial, "relations": Relations,
    "grouping": Grouping, "folds": Folds, "outputs": Outputs, "spark": Spark,
}  # fmt: skip
