"""The duplicate audit: finds re-deposits, only them, exactly or by LSH, and writes them back."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from depgraph import DepgraphError, add_duplicates, derive, from_metadata
from depgraph.audit.duplicates import audit_duplicates
from depgraph.cli.demo import AUDIT_THRESHOLD, demo_cohort
from depgraph.cli.main import main


def _pairs(frame: pd.DataFrame) -> set[frozenset]:
    return {frozenset(p) for p in frame[["id1", "id2"]].itertuples(index=False)}


def test_the_demo_audit_flags_exactly_the_injected_redeposits():
    cohort = demo_cohort()
    found = audit_duplicates(cohort.features, threshold=AUDIT_THRESHOLD)
    assert _pairs(found) == _pairs(cohort.duplicates)
    assert (found["similarity"] >= AUDIT_THRESHOLD).all()
    # the closest genuine pairs (same subject, other visit; siblings) stay clearly below it
    loose = audit_duplicates(cohort.features, threshold=0.5)
    genuine = loose[~loose.apply(lambda r: frozenset((r.id1, r.id2)) in _pairs(cohort.duplicates), axis=1)]
    assert genuine["similarity"].max() < AUDIT_THRESHOLD - 0.05


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_lsh_finds_what_the_exact_search_finds(seed):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(3000, 40))
    copies = rng.choice(3000, size=30, replace=False)
    X[copies[15:]] = X[copies[:15]] + rng.normal(scale=0.005, size=(15, 40))
    ids = [f"s{i:04d}" for i in range(3000)]
    exact = audit_duplicates(X, ids, 0.99, method="exact")
    lsh = audit_duplicates(X, ids, 0.99, method="lsh", seed=seed)
    assert len(exact) == 15 and _pairs(lsh) == _pairs(exact)
    np.testing.assert_allclose(lsh["similarity"].to_numpy(), exact["similarity"].to_numpy())


def test_a_run_of_identical_rows_gives_every_pair_once():
    rng = np.random.default_rng(5)
    X = rng.normal(size=(400, 12))
    X[100:140] = X[7]  # 41 copies of one specimen: 820 pairs
    ids = [f"s{i:03d}" for i in range(400)]
    for method in ("exact", "lsh"):
        found = audit_duplicates(X, ids, 0.999, method=method)
        assert len(found) == 820 and not found.duplicated(["id1", "id2"]).any() and (found["id1"] < found["id2"]).all()


def test_threshold_is_inclusive_and_scale_free():
    X = np.array([[1.0, 0.0], [2.0, 0.0], [1.0, 1.0]])
    found = audit_duplicates(X, ["a", "b", "c"], threshold=1.0)
    assert found[["id1", "id2"]].values.tolist() == [["a", "b"]]
    at_45 = audit_duplicates(X, ["a", "b", "c"], threshold=float(np.cos(np.pi / 4)))
    assert len(at_45) == 3


@pytest.mark.parametrize("method", ["exact", "lsh"])
@pytest.mark.parametrize("scale", [1e200, 1e-300, 1e-320, 1e300])
def test_duplicates_are_found_at_any_magnitude(method, scale):
    """Cosine does not depend on a row's length: rows of 1e200 (whose squares overflow) or of subnormal 1e-320
    (whose squares vanish) are compared like rows of 1 (once: no pair found, or an all-zero row refused)."""
    X = np.array([[1.0, 2.0], [2.0, 4.0], [1.0, 0.0], [0.0, 1.0]]) * np.array([[scale], [scale], [1.0], [1.0]])
    found = audit_duplicates(X, ["a", "b", "c", "d"], threshold=0.999, method=method)
    assert found[["id1", "id2"]].values.tolist() == [["a", "b"]]
    assert found["similarity"].tolist() == pytest.approx([1.0])


def test_tables_and_npy_files(tmp_path):
    X = np.array([[1.0, 2.0, 3.0], [1.0, 2.0, 3.0001], [3.0, -1.0, 0.0]])
    table = pd.DataFrame(X, columns=["g1", "g2", "g3"]).assign(sample_id=["x", "y", "z"], note="text")
    table.to_csv(tmp_path / "f.csv", index=False)
    assert _pairs(audit_duplicates(tmp_path / "f.csv")) == {frozenset(("x", "y"))}
    np.save(tmp_path / "f.npy", X)
    assert _pairs(audit_duplicates(tmp_path / "f.npy", ["x", "y", "z"])) == {frozenset(("x", "y"))}


@pytest.mark.parametrize(
    "features,ids,kwargs,code",
    [
        (np.array([[0.0, 0.0], [1.0, 0.0]]), ["a", "b"], {}, "invalid_value"),
        (np.array([[np.nan, 1.0], [1.0, 0.0]]), ["a", "b"], {}, "invalid_value"),
        (np.ones((2, 2)), ["a", "a"], {}, "duplicate_id"),
        (np.ones((2, 2)), None, {}, "invalid_argument"),
        (np.ones((3, 2)), ["a", "b"], {}, "schema"),
        (np.ones((2, 2)), ["a", "b"], {"threshold": 1.5}, "invalid_argument"),
        (np.ones((2, 2)), ["a", "b"], {"method": "faiss"}, "invalid_argument"),
        (np.ones((2, 2)), ["a", "b"], {"method": "lsh", "bits": 64}, "invalid_argument"),
        (np.ones((2, 2)), ["a", "b"], {"method": "lsh", "bands": 0}, "invalid_argument"),
        (pd.DataFrame({"id": ["a", "b"], "v": [1.0, 2.0]}), None, {}, "schema"),
    ],
)
def test_bad_audits(features, ids, kwargs, code):
    with pytest.raises(DepgraphError) as err:
        audit_duplicates(features, ids, **kwargs)
    assert err.value.code == code


def test_pairs_table_safe_for_spreadsheets(tmp_path, capsys):
    """audit -o pairs.csv --excel-safe prefixes ids a spreadsheet would run as formulas ('=a' is written "'=a"),
    exactly otherwise; the flag is refused with --write-back, a Parquet table or no -o, and nothing is written."""
    meta = pd.DataFrame({"sample_id": ["=a", "b", "c", "@d"], "subject_id": ["P1", "P2", "P3", "P4"]})
    meta.to_csv(tmp_path / "meta.csv", index=False)
    features = pd.DataFrame({"sample_id": meta["sample_id"], "f1": [1.0, 0.0, 1.0, 0.3], "f2": [0.0, 1.0, 0.0001, 1]})
    features.to_csv(tmp_path / "features.csv", index=False)
    audit = ["audit", str(tmp_path / "g.json"), str(tmp_path / "features.csv")]
    assert main(["build", str(tmp_path / "meta.csv"), "-o", str(tmp_path / "g.json")]) == 0
    assert main([*audit, "-o", str(tmp_path / "exact.csv")]) == 0
    assert main([*audit, "-o", str(tmp_path / "safe.tsv"), "--excel-safe"]) == 0
    assert pd.read_csv(tmp_path / "exact.csv")[["id1", "id2"]].values.tolist() == [["=a", "c"]]
    assert pd.read_csv(tmp_path / "safe.tsv", sep="\t")[["id1", "id2"]].values.tolist() == [["'=a", "c"]]
    capsys.readouterr()
    for extra in (["--write-back", "-o", "g2.json"], ["-o", "pairs.parquet"], []):
        extra = [str(tmp_path / e) if "." in e else e for e in extra]
        assert main([*audit, *extra, "--excel-safe"]) == 2
        err = capsys.readouterr().err
        assert err.startswith("depgraph: invalid_argument: --excel-safe") and err.count("\n") == 1
    assert not (tmp_path / "g2.json").exists() and not (tmp_path / "pairs.parquet").exists()


def test_write_back_keeps_the_pairs_together(tmp_path, capsys):
    meta = pd.DataFrame({"sample_id": ["a", "b", "c", "d"], "subject_id": ["P1", "P2", "P3", "P4"]})
    meta.to_csv(tmp_path / "meta.csv", index=False)
    features = pd.DataFrame(
        {"sample_id": ["a", "b", "c", "d"], "f1": [1.0, 0.0, 1.0, 0.3], "f2": [0.0, 1.0, 0.0001, 1]}
    )
    features.to_parquet(tmp_path / "features.parquet")
    assert main(["build", str(tmp_path / "meta.csv"), "-o", str(tmp_path / "g.json")]) == 0
    assert main(["audit", str(tmp_path / "g.json"), str(tmp_path / "features.parquet"), "-o",
                 str(tmp_path / "pairs.csv")]) == 0  # fmt: skip
    assert pd.read_csv(tmp_path / "pairs.csv")[["id1", "id2"]].values.tolist() == [["a", "c"]]
    assert main(["audit", str(tmp_path / "g.json"), str(tmp_path / "features.parquet"), "--write-back", "-o",
                 str(tmp_path / "g2.json")]) == 0  # fmt: skip
    from depgraph import read_graph

    graph = read_graph(tmp_path / "g2.json")
    groups = derive(graph, "composite", via=["subject", "duplicate"]).groups()
    assert groups["a"] == groups["c"] != groups["b"]
    assert graph.edges["provenance"].astype(str).tolist()[-1] == "duplicates:audit"
    assert main(["audit", str(tmp_path / "g.json"), str(tmp_path / "features.parquet"), "--write-back"]) == 2
    capsys.readouterr()
    with pytest.raises(DepgraphError):
        add_duplicates(from_metadata(meta), pd.DataFrame({"id1": ["a"], "id2": ["zz"], "similarity": [1.0]}),
                                           similarity_column="similarity")  # fmt: skip
