"""The benchmark scripts keep working (run tiny here; the measurements live in benchmarks/ and README)."""

from __future__ import annotations

from benchmarks.bench_spec import measure


def test_spec_benchmark_runs_and_round_trips():
    row = measure(2000)
    assert row["n_samples"] == 2000 and row["read_s"] >= 0 and row["file_mb"] > 0
