"""The study file's tables that name input files — ``[metadata]``, ``[kinship]``, ``[duplicates]``, ``[spatial]``,
``[[relations]]`` — as typed values, each key the name the Python API uses for the same thing (``id_template``,
``similarity_column``, ``unknown``…); and what every table of the study file shares (:class:`Section`).

Light on purpose (pydantic and the readers' own checks, no fold scheme, no spec): ``depgraph build`` carries its
options in these tables to the one code path ``depgraph run`` takes (:func:`depgraph.study.graphs.add_pair_files`).

>>> Kinship(path="king.kin0", threshold="second").format
'auto'
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from depgraph.ingest.kinship import KINSHIP_FORMATS, resolve_threshold
from depgraph.ingest.toolfiles import parse_template
from depgraph.io.delimited import checked_delimiter
from depgraph.vocab import CANONICAL_COLUMNS, KING_DEGREE_THRESHOLDS, RELATION_NAMES

#: The study-file format this depgraph writes and reads (``version`` in the file); a later one is refused by name.
STUDY_FILE_VERSION = 1


class Section(BaseModel):
    """A table of the study file: its keys and nothing else (an unknown key is an error), values of the type the key
    takes (``"5"`` is no number, ``1`` no boolean), never changed once read."""

    model_config = ConfigDict(extra="forbid", frozen=True, strict=True)


def one_or_many(value: Any) -> Any:
    """``[kinship]`` is one table, ``[[kinship]]`` several: either is a list of tables here."""
    return [value] if isinstance(value, dict) else value


Path = Annotated[str, Field(min_length=1, description="A path, relative to the study file unless absolute.")]
Unknown = Literal["error", "ignore"]
Encoding = Annotated[str, Field(min_length=1, description="A text file's encoding when not UTF-8, e.g. latin-1.")]
Column = Annotated[str, Field(min_length=1)]
CanonicalColumn = Literal[CANONICAL_COLUMNS]  # type: ignore[valid-type]
FiniteNumber = Annotated[float, Field(allow_inf_nan=False)]
Threshold = FiniteNumber | Literal[tuple(KING_DEGREE_THRESHOLDS)]  # type: ignore[valid-type]


class Metadata(Section):
    """``[metadata]``: the table of samples, one row per sample (several tables: ``[[metadata]]``, combined)."""

    path: Path = Field(description="CSV, TSV, Parquet or Excel (.xlsx), one row per sample.")
    columns: dict[CanonicalColumn, Column] = Field(
        description='Each role\'s column in the table, e.g. subject_id = "Subject_ID"; columns left out are attributes.'
    )
    encoding: Encoding | None = Field(None, description="The table's text encoding when not UTF-8.")
    delimiter: str | None = Field(
        None, description="A text table's delimiter (, ; | or tab); default: read from the header."
    )
    sheet: Annotated[str, Field(min_length=1)] | Annotated[int, Field(ge=1)] | None = Field(
        None, description="An Excel workbook's sheet: its name, or its number from 1."
    )
    outcome_scope: Literal["sample", "subject"] = Field("sample", description="Link outcome_id to samples or subjects.")
    allow_multi_subject_samples: bool = Field(False, description="Accept samples listed with several subjects.")

    @field_validator("columns")
    @classmethod
    def _one_column_per_role(cls, columns: dict[str, str]) -> dict[str, str]:
        if "sample_id" not in columns:
            raise ValueError("columns must map sample_id (the column naming each sample)")
        roles: dict[str, list[str]] = {}
        for role, column in columns.items():
            roles.setdefault(column, []).append(role)
        twice = {column: names for column, names in roles.items() if len(names) > 1}
        if twice:
            column, names = next(iter(twice.items()))
            raise ValueError(f"maps the column {column!r} onto {' and '.join(names)}; a column holds one kind of id")
        return columns

    @field_validator("delimiter")
    @classmethod
    def _known_delimiter(cls, delimiter: str | None) -> str | None:
        try:
            return checked_delimiter(delimiter)
        except Exception as exc:  # the library's message, as a value error of this key
            raise ValueError(getattr(exc, "message", str(exc))) from None


class Kinship(Section):
    """``[kinship]``: relatedness between subjects, from a genetics tool's file or a pair table."""

    path: Path = Field(description="A pair table (id1, id2, kinship) or a KING, plink2, PLINK or GCTA file.")
    threshold: Threshold = Field(
        description="Inclusive kinship threshold: a number in [0, 1], or a KING degree: duplicate, first, second, third"
    )
    format: Literal[("auto", *KINSHIP_FORMATS)] = Field("auto", description="The file's format; auto: detected.")  # type: ignore[valid-type]
    id_template: str = Field(
        "{IID}", description='Subject id from the tool\'s FID and IID columns: "{IID}", or "{FID}_{IID}".'
    )
    unknown: Unknown = Field(
        "error", description="Pairs naming subjects not in the metadata: error, or ignore (dropped and reported)."
    )
    absent: Literal["warn", "unrelated", "error"] = Field(
        "warn", description="Subjects a tool's file does not name: warn (grouped as unrelated), unrelated, or error."
    )
    encoding: Encoding | None = None

    @field_validator("id_template")
    @classmethod
    def _template(cls, template: str) -> str:
        try:
            parse_template(template)
        except Exception as exc:
            raise ValueError(getattr(exc, "message", str(exc))) from None
        return template

    @field_validator("threshold")
    @classmethod
    def _in_range(cls, threshold: Any) -> Any:
        try:
            resolve_threshold(threshold)
        except Exception as exc:
            raise ValueError(getattr(exc, "message", str(exc))) from None
        return threshold


class Duplicates(Section):
    """``[duplicates]``: samples that are one specimen or record — a table of pairs, or features to audit."""

    path: Path | None = Field(None, description="A table of sample pairs id1, id2 (and a similarity column).")
    similarity_column: Column | None = Field(
        None, description="The pair table's similarity column, kept as the edge weight."
    )
    features: Path | None = Field(
        None, description="A feature table (sample_id + numeric columns) to audit for near-identical rows."
    )
    threshold: FiniteNumber = Field(0.995, gt=0, le=1, description="Audit: inclusive cosine similarity.")
    method: Literal["auto", "exact", "lsh"] = Field("auto", description="Audit: exact, lsh, or auto.")
    id_column: Column = Field("sample_id", description="Audit: the feature table's sample id column.")
    unknown: Unknown = "error"
    encoding: Encoding | None = None

    @model_validator(mode="after")
    def _pairs_or_features(self) -> Duplicates:
        if self.path is None and self.features is None:
            raise ValueError("give path (a table of duplicate pairs) or features (a table to audit)")
        if self.path is not None and self.features is not None:
            raise ValueError("give path (a table of duplicate pairs) or features (a table to audit), not both")
        given = self.model_fields_set
        if self.path is not None:
            audit_only = sorted(given & {"threshold", "method", "id_column"})
            if audit_only:
                verb = "applies" if len(audit_only) == 1 else "apply"
                raise ValueError(f"{' and '.join(audit_only)} {verb} to features (an audit), not to a pair table")
        elif "similarity_column" in given:
            raise ValueError("similarity_column applies to a pair table (path), not to features")
        return self


class Spatial(Section):
    """``[spatial]``: samples within a radius of each other are neighbours."""

    path: Path = Field(description="Coordinates: sample_id and x, y[, z].")
    radius: FiniteNumber = Field(gt=0, description="Samples at most this far apart are adjacent (inclusive).")
    p: FiniteNumber = Field(2.0, ge=1, description="The Minkowski norm: 2 is Euclidean.")
    unknown: Unknown = "error"
    encoding: Encoding | None = None


class Relations(Section):
    """``[[relations]]``: explicit edges of a relation, from a table of source and target ids."""

    relation: Literal[RELATION_NAMES] = Field(description="The relation, e.g. featureset_generated_from_study.")  # type: ignore[valid-type]
    path: Path = Field(description="A table with a source and a target column.")
    source_column: Column = "source"
    target_column: Column = "target"
    unknown: Unknown = "error"
    encoding: Encoding | None = None
