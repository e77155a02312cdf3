"""What every reader of a spec checks once it holds the columns, whichever form they came in (a JSON document,
:mod:`depgraph.spec.files`; a columnar file, :mod:`depgraph.spec.columnar`): the envelope models, the digest over
what was written, the signature, and what the content says of itself.
"""

from __future__ import annotations

from typing import Any

import orjson
import pandas as pd
import pyarrow as pa
from pydantic import BaseModel, ValidationError

from depgraph.common.identifiers import apply_id_rules
from depgraph.errors import DepgraphError
from depgraph.spec.checks import check_fold_content, check_pseudonyms, check_sample_order, check_splits
from depgraph.spec.digest import UNDIGESTED, verify_signature
from depgraph.spec.keys import check_key
from depgraph.spec.model import FoldPlan, FoldSplit, SplitSpec, model_refusal
from depgraph.spec.plans import check_plan, check_plan_warnings
from depgraph.spec.statements import check_statements


def read_model(model: type[BaseModel], values: dict[str, Any], source: str, within: str = "") -> Any:
    """``model`` validated from a document's ``values``; a problem is a ``schema`` error of ``source``, the
    field named by its path in the document (pydantic runs the models' own ``__init__`` on nested values, which
    refuse as ``invalid_argument``: re-coded here)."""
    try:
        return model.model_validate(values)
    except ValidationError as exc:
        raise model_refusal(source, exc, "schema", within) from None
    except DepgraphError as exc:
        problem = exc.details.get("problem", exc.message)
        where = within if exc.details.get("field") else within.rstrip(".") + (": " if within else "")
        raise DepgraphError("schema", f"{source}: {where}{problem}") from None


def verifying_key(key: str | bytes | None) -> str | bytes | None:
    """A verifying key checked before any file is judged (a wrong key is the caller's mistake, named first)."""
    return None if key is None else check_key(key, "the verifying key")


def read_folds(plan: Any, splits: list[dict[str, Any]], n_samples: int, source: str) -> FoldPlan | None:
    """The fold plan of a document (``None`` when it has none): ``plan`` its fields but the splits, ``splits``
    each split's fields with its ``test`` and ``excluded`` positions already read as arrays."""
    if plan is None:
        return None
    checked = [read_model(FoldSplit, values, source, f"folds.splits[{i}].") for i, values in enumerate(splits)]
    check_splits(checked, n_samples, f"{source}: folds")
    fields = {**{k: v for k, v in plan.items() if k != "splits"}, "splits": checked}
    return read_model(FoldPlan, fields, source, "folds.")


def checked_spec(
    envelope: dict[str, Any],
    samples: pd.DataFrame,
    folds: FoldPlan | None,
    *,
    written: dict[str, Any],
    expected: str,
    exact: bool,
    text: tuple[pa.Array, pa.Array],
    source: str,
    verify_key: str | bytes | None,
) -> SplitSpec:
    """The spec a reader read, with every check after the columns' own: the models (``schema``), the digest the
    file carries against ``expected``, the digest of what was written (``integrity``), the signature with
    ``verify_key``, and what the content says of itself (``integrity`` even when the digest matches).

    ``envelope`` is the document's fields but the samples and folds (as the reader keeps them); ``written`` the
    document's fields as written, but the columns and fold positions (to tell whether the spec spells what the
    file does); ``exact`` whether the sample columns read spell every value as written; ``text`` the sample and
    group ids as checked Arrow text. The spec returned holds the digest of what it holds (see
    :func:`~depgraph.spec.files.spec_from_document`)."""
    spec = read_model(SplitSpec, {**envelope, "samples": samples, "folds": folds}, source)
    if spec.digest != expected:
        raise DepgraphError(
            "integrity",
            f"{source}: digest does not match the content (file says {str(spec.digest)[:19]}…, content is "
            f"{expected[:19]}…); the file was edited or damaged",
        )
    if verify_key is not None:
        verify_signature(_signed(spec), expected, verify_key, source)
    _check_content(spec, source, *text)
    if not (exact and _same_envelope(written, spec)):
        spec = spec.with_own_digest()  # the digest of what this spec holds; the file's signature does not sign it
    return spec


def _same_envelope(written: dict[str, Any], spec: SplitSpec) -> bool:
    """Whether the spec's fields, outside the sample columns and fold positions, are those the document
    spells (then the document's digest is the spec's own)."""
    ours = spec.envelope()
    if spec.folds is not None:
        ours["folds"] = spec.folds.model_dump(mode="json")
    theirs = {k: v for k, v in written.items() if k != "samples"}
    folds = theirs.get("folds")
    if isinstance(folds, dict) and isinstance(folds.get("splits"), list):
        splits = [{k: v for k, v in split.items() if k not in ("test", "excluded")} for split in folds["splits"]]
        theirs["folds"] = {**folds, "splits": splits}
    keep = set(ours) | set(theirs)
    return all(
        k in ours
        and k in theirs
        and orjson.dumps(ours[k], option=orjson.OPT_SORT_KEYS) == orjson.dumps(theirs[k], option=orjson.OPT_SORT_KEYS)
        for k in keep - UNDIGESTED
    ) and set(written["samples"]) == set(spec.samples.columns)


def _check_content(spec: SplitSpec, source: str, ids: pa.Array, group_ids: pa.Array) -> None:
    """What every spec depgraph writes says of itself (``ids`` and ``group_ids``: its columns as Arrow
    text); ``integrity`` errors, since the digest may well match."""
    if spec.n_samples == 0:
        raise DepgraphError("integrity", f"{source}: holds no samples")
    for name, column in (("sample_id", ids), ("group_id", group_ids)):  # the id rules of every table reader:
        apply_id_rules(column, f"samples.{name}", source)  # nothing invisible, one id written one way
    if spec.pseudonymization is not None:  # first: raw ids under a pseudonymization block are the worst news
        pseudonyms = spec.pseudonymization
        check_pseudonyms(spec.samples, pseudonyms.columns, pseudonyms.hex_digits, source, "integrity")
    # 1.0 writers kept imported, built and pseudonymised rows in the order they came in: unique is all 1.0 promised
    check_sample_order(ids, source, unique_only=spec.format_version.startswith("1.0."))
    check_statements(spec.constraint, spec.recommended_resampling, spec.warnings, group_ids, source, "integrity")
    groups = spec.grouped(group_ids)
    groups.check_summary(spec.summary.model_dump(), source, "integrity")
    if spec.folds is not None:
        check_fold_content(spec.folds, groups, spec.samples["sample_id"], f"{source}: folds", "integrity")
        check_plan(spec.folds, spec.samples, f"{source}: folds", "integrity")
    check_plan_warnings(spec.folds, spec.warnings, ids, source, "integrity")


def _signed(spec: SplitSpec) -> tuple[str, str] | None:
    """The spec's signature as (key fingerprint, value), or None."""
    return None if spec.signature is None else (spec.signature.key_fingerprint, spec.signature.value)
