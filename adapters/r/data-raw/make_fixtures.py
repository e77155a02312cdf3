"""Write the specs depgraphR's examples and tests read, with the folds Python assigned to each.

Run from the repository's root: ``python adapters/r/data-raw/make_fixtures.py``. It writes

- ``inst/extdata/spec.json`` and ``inst/extdata/spec.dgspec/``: one cohort (splitGraph's conformance case
  random_2026_0), grouped by subject, in 3 folds repeated twice; the help pages' examples read it;
- ``tests/testthat/fixtures/<case>_<mode>.json``: every splitGraph 0.2.0 conformance case (tests/data/conformance)
  grouped by subject, batch and time, each with folds, and ``<case>_<mode>.csv``, the fold table Python reads from
  that spec (sample_id, group_id, repeat, fold, role): R's tests read each spec and must give the same table;
- ``tests/testthat/fixtures/signed.json``: the example signed with the key in ``SIGNING_KEY``, and
  ``no_folds.json``: the example without its folds.

tests/adapters/test_r_package.py writes them again and checks that the committed files hold the same content.
"""

from __future__ import annotations

import sys
from pathlib import Path

import pandas as pd

HERE = Path(__file__).resolve().parent.parent  # adapters/r
REPO = HERE.parent.parent
sys.path.insert(0, str(REPO))

from depgraph import derive, from_metadata  # noqa: E402
from depgraph.folds.schemes import assign_folds  # noqa: E402
from depgraph.spec.files import write_spec  # noqa: E402
from depgraph.spec.model import SplitSpec  # noqa: E402
from tests.conftest import case_metadata, conformance_cases, load_case  # noqa: E402

SIGNING_KEY = "depgraphR's test key, never use it for real"
#: Each mode with the fold scheme its specs carry.
PLANS = {
    "subject": ("group-kfold", {"n_splits": 3, "n_repeats": 2, "seed": 7}),
    "batch": ("group-kfold", {"n_splits": 2, "seed": 1}),
    "time": ("holdout", {"test_fraction": 0.3, "seed": 3}),
}


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


def write(root: Path) -> None:
    """Every fixture under ``root`` (adapters/r, or a scratch copy of its layout)."""
    fixtures = root / "tests" / "testthat" / "fixtures"
    extdata = root / "inst" / "extdata"
    fixtures.mkdir(parents=True, exist_ok=True)
    extdata.mkdir(parents=True, exist_ok=True)
    made = specs()
    for stem, spec in made.items():
        write_spec(spec, fixtures / f"{stem}.json")
        fold_table(spec).to_csv(fixtures / f"{stem}.csv", index=False)
    example = made["random_2026_0_subject"]
    write_spec(example, extdata / "spec.json")
    write_spec(example, extdata / "spec.dgspec")
    write_spec(example.signed(SIGNING_KEY), fixtures / "signed.json")
    write_spec(example.with_folds(None), fixtures / "no_folds.json")


if __name__ == "__main__":
    write(HERE)
