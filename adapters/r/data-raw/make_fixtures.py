"""Write the specs depgraphR's examples and tests read, with the folds Python assigned to each.

Run from the repository's root: ``python adapters/r/data-raw/make_fixtures.py``. It writes

- ``inst/extdata/spec.json`` and ``inst/extdata/spec.dgspec/``: one cohort (splitGraph's conformance case
  random_2026_0), grouped by subject, in 3 folds repeated twice; the help pages' examples read it;
- ``tests/testthat/fixtures/<case>_<mode>.json``: every splitGraph 0.2.0 conformance case (tests/data/conformance)
  grouped by subject, batch and time, each with folds, and ``<case>_<mode>.csv``, the fold table Python reads from
  that spec (sample_id, group_id, repeat, fold, role): R's tests read each spec and must give the same table;
- ``tests/testthat/fixtures/signed.json``: the example signed with the key in ``SIGNING_KEY``, and
  ``no_folds.json``: the example without its folds; ``straddling.json`` and ``miscounted.json``: the example with a
  group on both sides of a split, or a summary that miscounts, each digest recomputed (refused all the same).

tests/adapters/test_r_package.py writes them again and checks that the committed files hold the same content.
"""

from __future__ import annotations

import sys
from pathlib import Path

import orjson
import pandas as pd

HERE = Path(__file__).resolve().parent.parent  # adapters/r
REPO = HERE.parent.parent
sys.path.insert(0, str(REPO))

from depgraph import derive, from_metadata  # noqa: E402
from depgraph.folds.schemes import assign_folds  # noqa: E402
from depgraph.spec.digest import content_digest  # noqa: E402
from depgraph.spec.files import spec_document, write_spec  # noqa: E402
from depgraph.spec.model import SplitSpec  # noqa: E402
from tests.conftest import case_metadata, conformance_cases, load_case  # noqa: E402

SIGNING_KEY = "depgraphR's test key, never use it for real"
#: Each mode with the fold scheme its specs carry.
PLANS = {
    "subject": ("group-kfold", {"n_splits": 3, "n_repeats": 2, "seed": 7}),
    "batch": ("group-kfold", {"n_splits": 2, "seed": 1}),
    "time": ("holdout", {"test_fraction": 0.3, "seed": 3}),
}


def _straddle(doc: dict) -> None:
    """The first test sample of split 0 joins the group of a sample that split trains."""
    split = doc["folds"]["splits"][0]
    held = set(split["test"]) | set(split["excluded"])
    trained = next(i for i in range(len(doc["samples"]["sample_id"])) if i not in held)
    groups = doc["samples"]["group_id"]
    groups[split["test"][0]] = groups[trained]
    sizes = pd.Series(groups).value_counts()  # the summary counts the groups as they now are
    largest = int(sizes.max())
    doc["summary"].update(n_groups=len(sizes), largest_group=min(sizes[sizes == largest].index),
                          largest_group_size=largest, singletons=int((sizes == 1).sum()))  # fmt: skip


def _miscount(doc: dict) -> None:
    doc["summary"]["n_samples"] += 1


#: Specs whose content contradicts itself, each with its digest recomputed.
CONTRADICTIONS = {"straddling.json": _straddle, "miscounted.json": _miscount}


def specs() -> dict[str, SplitSpec]:
    """Every fixture spec by file stem."""
    out = {}
    for path in conformance_cases():
        graph = from_metadata(case_metadata(load_case(path)))
        for mode, (scheme, parameters) in PLANS.items():
            spec = SplitSpec.from_partition(derive(graph, mode), graph)
            out[f"{path.stem}_{mode}"] = assign_folds(spec, scheme, **parameters)
    return out


def fold_table(spec: SplitSpec) -> pd.DataFrame:
    """What depgraph_fold_table() gives in R, with each sample's group."""
    role = spec.folds.role_matrix(spec.n_samples)
    rows = []
    for i, split in enumerate(spec.folds.splits):
        rows.append(pd.DataFrame({
            "sample_id": spec.sample_ids, "group_id": spec.samples["group_id"].astype(str).to_numpy(),
            "repeat": split.repeat, "fold": split.fold,
            "role": pd.Series(role[i]).map({0: "train", 1: "test", 2: "excluded"}).to_numpy(),
        }))  # fmt: skip
    return pd.concat(rows, ignore_index=True)


def _write(spec: SplitSpec, path: Path) -> None:
    """``spec`` at ``path``, unless the file there holds the same content already (its digest): a fixture is
    rewritten only when what depgraph writes changed, not for a new creation time."""
    manifest = path / "manifest.json" if path.suffix == ".dgspec" else path
    if manifest.exists() and orjson.loads(manifest.read_bytes()).get("digest") == spec.digest:
        return
    write_spec(spec, path)


def write(root: Path) -> None:
    """Every fixture under ``root`` (adapters/r, or a scratch copy of its layout)."""
    fixtures = root / "tests" / "testthat" / "fixtures"
    extdata = root / "inst" / "extdata"
    fixtures.mkdir(parents=True, exist_ok=True)
    extdata.mkdir(parents=True, exist_ok=True)
    made = specs()
    for stem, spec in made.items():
        _write(spec, fixtures / f"{stem}.json")
        fold_table(spec).to_csv(fixtures / f"{stem}.csv", index=False)
    example = made["random_2026_0_subject"]
    _write(example, extdata / "spec.json")
    _write(example, extdata / "spec.dgspec")
    _write(example.signed(SIGNING_KEY), fixtures / "signed.json")
    _write(example.with_folds(None), fixtures / "no_folds.json")
    for name, edit in CONTRADICTIONS.items():
        doc = spec_document(example)
        edit(doc)
        doc["digest"] = content_digest(doc)  # recomputed: only the content's own checks can refuse it
        path = fixtures / name
        if not (path.exists() and orjson.loads(path.read_bytes())["digest"] == doc["digest"]):
            path.write_bytes(orjson.dumps(doc, option=orjson.OPT_INDENT_2))


if __name__ == "__main__":
    write(HERE)
