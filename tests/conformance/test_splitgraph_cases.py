"""depgraph against splitGraph: every case recorded in tests/data/conformance.

Direct-mode labels are part of the contract (``subject:P1``,
``batch:unlinked:S5``, ``composite_time:T0``); composite/strict labels are
splitGraph's positional ``component_<k>``, so those are compared as
partitions. Validation must report every code splitGraph reports, with the
same number of entities, and agree on validity.
"""

from __future__ import annotations

import json

import pandas as pd
import pytest

from depgraph import add_kinship, add_spatial, derive, from_metadata, validate
from tests.conftest import CONFORMANCE, as_partition, case_metadata, conformance_cases, load_case

CASES = conformance_cases()


def _ids(paths):
    return [p.stem for p in paths]


@pytest.mark.parametrize("path", CASES, ids=_ids(CASES))
def test_graph_shape_matches_splitgraph(path):
    case = load_case(path)
    graph = from_metadata(case_metadata(case))
    assert graph.n_nodes == case["expected"]["n_nodes"]
    assert graph.n_edges == case["expected"]["n_edges"]


@pytest.mark.parametrize("path", CASES, ids=_ids(CASES))
def test_validation_reports_splitgraph_codes(path):
    case = load_case(path)
    expected = case["expected"]["validation"]
    report = validate(from_metadata(case_metadata(case)))
    assert report.valid == expected["valid"]
    counts = report.counts()
    for code, n in expected["code_counts"].items():
        assert counts.get(code) == n, f"{code}: splitGraph {n}, depgraph {counts.get(code)}"


def _derivations(path):
    case = load_case(path)
    return [(path, mode) for mode in case["expected"]["derivations"]]


DERIVATIONS = [d for p in CASES for d in _derivations(p)]


@pytest.mark.parametrize("path,mode", DERIVATIONS, ids=[f"{p.stem}-{m}" for p, m in DERIVATIONS])
def test_derivation_matches_splitgraph(path, mode):
    case = load_case(path)
    expected = case["expected"]["derivations"][mode]
    graph = from_metadata(case_metadata(case))
    if mode.startswith("composite_"):
        strategy = mode.removeprefix("composite_")
        partition = derive(
            graph, "composite", strategy=strategy, via=expected["via"], priority=expected.get("priority")
        )
    else:
        partition = derive(graph, mode)
    groups = partition.groups()
    if mode == "composite_strict":
        assert as_partition(groups) == as_partition(expected["groups"])
    else:
        assert groups == expected["groups"]  # labels are part of the contract
    assert partition.n_groups == expected["n_groups"]
    if expected.get("order_rank"):
        rank = dict(zip(partition.samples["sample_id"], partition.samples["order_rank"], strict=True))
        got = {s: (None if pd.isna(r) else int(r)) for s, r in rank.items()}
        assert got == expected["order_rank"]


VIGNETTES = {c["name"]: c for c in json.loads((CONFORMANCE / "splitgraph_0_4_vignettes.json").read_text())}


def test_site_platform_assay_modes():
    case = VIGNETTES["site_platform_assay"]
    graph = from_metadata(pd.DataFrame(case["metadata"]))
    for mode in ("site", "platform", "assay"):
        assert derive(graph, mode).groups() == case["expected"][mode]
    strict = derive(graph, "composite", strategy="strict", via=["subject", "site", "platform"])
    assert as_partition(strict.groups()) == sorted(
        case["expected"]["composite_strict(subject,site,platform)"]["partition"]
    )


@pytest.mark.parametrize("threshold", [0.1, 0.22])
def test_relatedness_at_two_thresholds(threshold):
    case = VIGNETTES["relatedness_kinship"]
    graph = add_kinship(from_metadata(pd.DataFrame(case["metadata"])), pd.DataFrame(case["kinship"]), threshold)
    expected = case["expected"][f"relatedness(threshold={threshold})"]["partition"]
    assert as_partition(derive(graph, "relatedness").groups()) == sorted(expected)


def test_spatial_radius_and_subset():
    case = VIGNETTES["spatial_radius"]
    graph = add_spatial(from_metadata(pd.DataFrame(case["metadata"])), pd.DataFrame(case["coords"]), 1.5)
    full = case["expected"]["spatial(radius=1.5)"]["partition"]
    assert as_partition(derive(graph, "spatial").groups()) == sorted(full)
    subset = case["expected"]["spatial(radius=1.5, samples=[S1,S3])"]["partition"]
    assert as_partition(derive(graph, "spatial", samples=["S1", "S3"]).groups()) == sorted(subset)
